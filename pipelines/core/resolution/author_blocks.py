"""Author linkage per block (step 3 of ``authors.py``): the blocks (family name + first initial,
large ones cut by canonical name and era), small blocks packed together, and the constrained
average linkage of each block's pair probabilities — with the rules a merge must satisfy beyond
the mean probability (evidence beyond the name, the rare-name and same-full-name joins).
The comparisons and weights are ``author_linkage``'s."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.cluster.hierarchy import fcluster, linkage

from pipelines.core.resolution.author_linkage import (
    _FORBIDDEN,
    _NOT_COMPARED,
    COMPARISONS,
    MAX_BLOCK,
    MERGE_PROBABILITY,
    NAMES,
    PACK_BLOCKS_UP_TO,
    RARE_NAME_RARITY,
    REVIEW_PROBABILITY,
    SAME_NAME_PROBABILITY,
    SAME_NAME_RARITY,
    AuthorModel,
    MentionEvidence,
    SharedCoauthors,
    compare_block,
    coauthor_adjustment,
    pair_probabilities,
    shared_coauthors,
)


def blocks(keys: list[tuple[str, ...]], canonical: list[str], years: np.ndarray, ids: list[str],
           max_block: int = MAX_BLOCK) -> list[np.ndarray]:
    """Groups of mention rows that may be one person: sharing a name key, transitively; a group
    over ``max_block`` is cut into pieces after sorting by name, year and id. Rows without a
    name key are in no block."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for ks in keys:
        for k in ks:
            parent.setdefault(k, k)
        for k in ks[1:]:
            ra, rb = find(ks[0]), find(k)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[int]] = {}
    for i, ks in enumerate(keys):
        if ks:
            groups.setdefault(find(ks[0]), []).append(i)
    out = []
    for root in sorted(groups):
        rows = groups[root]
        if len(rows) < 2:
            continue
        if len(rows) > max_block:
            rows = sorted(rows, key=lambda i: (canonical[i], int(years[i]), ids[i]))
            out += [np.array(sorted(rows[s:s + max_block]), dtype=np.int64) for s in range(0, len(rows), max_block)
                    if len(rows[s:s + max_block]) > 1]
        else:
            out.append(np.array(rows, dtype=np.int64))
    return out


def packed(groups: list[np.ndarray], up_to: int = PACK_BLOCKS_UP_TO) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, block_of)``: small blocks packed together up to ``up_to`` rows (order kept)."""
    pending: list[np.ndarray] = []
    size = 0
    for g in groups:
        if len(g) >= up_to:
            yield g, np.zeros(len(g), dtype=np.int64)
            continue
        if size + len(g) > up_to and pending:
            yield np.concatenate(pending), np.repeat(np.arange(len(pending)), [len(p) for p in pending])
            pending, size = [], 0
        pending.append(g)
        size += len(g)
    if pending:
        yield np.concatenate(pending), np.repeat(np.arange(len(pending)), [len(p) for p in pending])



@dataclass
class BlockResult:
    """One packed block's linkage: rows, cluster labels, per-row score, review candidates."""

    rows: np.ndarray
    labels: np.ndarray  # cluster per row (block-local ints)
    score: np.ndarray  # mean probability of each row with the rest of its cluster (nan: alone)
    review: list[tuple[int, int, float, dict[str, int]]]  # (row a, row b, mean probability, best pair's levels)


def _telling_coauthors(levels: dict[str, np.ndarray], shared: SharedCoauthors | None) -> np.ndarray:
    """Pairs whose co-authors agree tellingly: most of a long list shared, or on short lists at
    least one shared key that is not commoner than the reference key (every shared key, when the
    model counts none). Two Chinese homonyms both writing with some ``zhang y`` share a key that
    one list in a hundred holds: that corroborates nothing."""
    level = levels["coauthors"]
    if shared is None:
        return level >= 2
    return (level == 2) | (((level == 3) | (level == 4)) & (shared.telling > 0))


def _agreeing(levels: dict[str, np.ndarray], telling_coauthors: np.ndarray) -> np.ndarray:
    """Pairs that agree on something besides their names (a telling shared co-author, the
    affiliation, a close title)."""
    agrees = telling_coauthors.copy()
    for c in COMPARISONS:
        if c.name == "coauthors":
            continue
        for level in c.agreeing:
            agrees |= levels[c.name] == level
    return agrees & (levels["name"] >= 0)


def _rare_name_support(levels: dict[str, np.ndarray], model: AuthorModel, rarity: np.ndarray,
                       shared: SharedCoauthors | None) -> np.ndarray:
    """Pairs with one identical full name at most as common as a typical name (its rarity, the
    term-frequency adjustment in people, at least ``RARE_NAME_RARITY``) whose other evidence,
    taken together, leans towards one person (the sum of the other comparisons' weights is
    positive: the same journals in the same years, a related title...). Such a name makes one
    person likelier than on average, so one agreeing signal is enough; a name more people carry
    than the typical one needs an explicit shared co-author, affiliation or close title."""
    support = (levels["name"] == 0) & (rarity[:, None] >= RARE_NAME_RARITY)
    a, b = np.nonzero(support)  # weigh only the pairs of such a name, not the whole block
    other = sum(model.linkage.log2_bayes_factor(c.name, levels[c.name][a, b]) for c in COMPARISONS[1:])
    if shared is not None:
        other = other + coauthor_adjustment(model, levels["coauthors"][a, b], shared.penalty[a, b])
    support[a, b] = np.asarray(other) > 0.0
    return support


def _corroborated(labels: np.ndarray, agrees: np.ndarray) -> np.ndarray:
    """Each linkage cluster split into the groups its corroborated pairs connect: a merge must be
    backed by a chain of pairs that agree on more than a name (two homonyms whose mentions share
    nothing stay two, however likely the common name makes each pair look)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    same = labels[:, None] == labels[None, :]
    graph = csr_matrix(agrees & same)
    parts = connected_components(graph, directed=False)[1]
    return np.unique(np.stack([labels, parts], axis=1), axis=0, return_inverse=True)[1].ravel()


def _same_full_name_merges(labels: np.ndarray, p: np.ndarray, levels: dict[str, np.ndarray], blocked: np.ndarray,
                           rarity: np.ndarray, telling_coauthors: np.ndarray) -> np.ndarray:
    """Linkage clusters joined when they carry one identical full name that is not common (at most
    twice as common as a typical name, ``SAME_NAME_RARITY``), some pair across them shares a
    co-author or an affiliation, none is forbidden, and their mean pair probability is at least
    ``SAME_NAME_PROBABILITY``. Average linkage alone splits a long career into eras (other
    co-authors, another institution, years apart), each pair across them weak; the same rare full
    name with one shared colleague or institution is one person."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    k = int(labels.max()) + 1
    if k < 2:
        return labels

    def across(pairs: np.ndarray) -> np.ndarray:  # per pair of clusters: any such pair of rows
        return _cluster_sums(_cluster_sums(pairs.astype(np.float64), labels, k).T, labels, k) > 0

    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    mean = _cluster_sums(_cluster_sums(p, labels, k).T, labels, k) / np.outer(sizes, sizes)
    same_name = across((levels["name"] == 0) & (rarity[:, None] >= SAME_NAME_RARITY))
    shared = (telling_coauthors | (levels["affiliation"] >= 1)) & (levels["name"] >= 0)
    join = same_name & across(shared) & ~across(blocked) & (mean >= SAME_NAME_PROBABILITY)
    np.fill_diagonal(join, False)
    return connected_components(csr_matrix(join), directed=False)[1][labels]


def _cluster_sums(matrix: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Column sums of ``matrix`` per cluster label (0..k-1): a ``rows x k`` array (a product with
    the sparse cluster-membership matrix: no sorted copy of a block-sized matrix)."""
    members = sp.csr_matrix((np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(k, len(labels)))
    return np.asarray((members @ np.asarray(matrix, dtype=np.float64).T).T)


def link_block(ev: MentionEvidence, model: AuthorModel, rows: np.ndarray, block_of: np.ndarray,
               start_cluster: np.ndarray, forbidden: np.ndarray) -> BlockResult:
    """Average linkage of one packed block. ``start_cluster``: each row's identity/same-paper
    cluster (rows of one start at distance 0); ``forbidden``: pairs that must stay apart."""
    b = len(rows)
    levels = compare_block(ev, rows, block_of)
    shared = shared_coauthors(ev, rows)
    compared = levels["name"] >= 0
    p = np.where(compared, pair_probabilities(ev, model, levels, rows[:, None],
                                                     None if shared is None else shared.penalty), 0.0)
    np.fill_diagonal(p, 0.0)
    different_block = block_of[:, None] != block_of[None, :]
    # One identity/same-paper cluster may span blocks (an ORCID under two names): only its pairs
    # inside one block are tied here, the union-find holds the rest, so packing never matters.
    together = (start_cluster[:, None] == start_cluster[None, :]) & ~different_block
    incompatible = (levels["name"] == _NOT_COMPARED) & ~different_block
    distance = 1.0 - p
    distance[different_block | ((incompatible | forbidden) & ~together)] = _FORBIDDEN
    distance[together] = 0.0
    np.fill_diagonal(distance, 0.0)
    labels = fcluster(linkage(distance[np.triu_indices(b, 1)], method="average"),
                      t=1.0 - MERGE_PROBABILITY, criterion="distance") - 1
    rarity = ev.name_rarity[rows]
    telling = _telling_coauthors(levels, shared)
    labels = _corroborated(labels, _agreeing(levels, telling) | together | _rare_name_support(levels, model, rarity, shared))
    labels = _same_full_name_merges(labels, p, levels, incompatible | forbidden | different_block, rarity, telling)
    k = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    per_cluster = _cluster_sums(p, labels, k)  # rows x clusters
    others = sizes[labels] - 1
    score = np.where(others > 0, per_cluster[np.arange(b), labels] / np.maximum(others, 1), np.nan)
    review = []
    if k > 1:
        mean = _cluster_sums(per_cluster.T, labels, k) / np.outer(sizes, sizes)
        crossed = _cluster_sums(_cluster_sums(incompatible.astype(np.float64), labels, k).T, labels, k) > 0
        for x, y in np.argwhere(np.triu(mean >= REVIEW_PROBABILITY, 1) & ~crossed).tolist():
            members_x, members_y = np.flatnonzero(labels == x), np.flatnonzero(labels == y)
            sub = p[np.ix_(members_x, members_y)]
            i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
            ri, rj = int(members_x[i]), int(members_y[j])
            review.append((ri, rj, float(mean[x, y]), {c: int(levels[c][ri, rj]) for c in NAMES}))
    return BlockResult(rows, labels, score, review)


def describe_levels(levels: dict[str, int]) -> str:
    """A pair's comparison levels in words (the review queue's evidence)."""
    parts = []
    for c in COMPARISONS:
        code = levels.get(c.name, -1)
        if code >= 0:
            parts.append(f"{c.name}: {c.levels[code]}")
    return "; ".join(parts)

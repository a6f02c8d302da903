"""Author matching: which name mentions (profile owners, byline names) are one person.

Input: one row per name on one document — ``mention_id``, ``name``, ``paper_id``, ``coauthors``
(the other names on that document), ``title``, ``year``, ``venue``, ``affiliation``; optional
``source``, ``source_profile_id`` + ``is_profile_owner`` (the mention of a profile's owner),
``orcid``, ``openalex_id``. Output: ``mention_id``, ``author_id`` (smallest mention id of the
person's cluster), ``method``, ``score``.

Names alone never merge two mentions. How it works:

1. **Identity evidence** (score 1.0): mentions of the owner of one profile
   (``source`` + ``source_profile_id``) are one person; so are mentions with one ORCID or one
   OpenAlex author id. Two different ORCIDs are never one person.
2. **Same paper**: two mentions on one ``paper_id`` with compatible names (``names.py``:
   initials, diacritics, hyphens, family-first order) are one person — the owner of a profile
   and their own byline entry, or one byline seen on several listings — unless they are two
   entries of one byline: listed side by side (one name among the other's co-authors), or two
   rows of one paper that name no source (two names on one document; a truncated co-author list
   must not hide it). A profile owner is *not* matched
   to a merely similar byline name: when a truncated byline (``et al.``) hides the owner,
   ``Yunquan Zhang`` never becomes ``Yuchen Zhang``. An owner compatible with two co-listed
   byline names is ambiguous and left for review.
3. **Probabilistic linkage** (``author_linkage.py``, ``fellegi_sunter.py``): every pair of
   compatible names in a block (family name + first initial) is compared on name form,
   co-authors, title topic, affiliation, venue and year; the weights are estimated from the
   input itself (Fellegi–Sunter, EM, term frequency of names counted in people) and kept in an
   ``AuthorModel``. Average linkage per block merges clusters whose mean match probability
   reaches ``MERGE_PROBABILITY``; different ORCIDs, two entries of one byline and two profiles
   on one site are hard constraints; a merge must be backed by pairs that agree on more than the
   name (a shared co-author counts unless only common keys are shared; a full name rarer than the
   typical one counts with any evidence leaning its way), and a long career under one not-common
   full name is joined across eras.
4. **Clustering** applies identity, same-paper and linkage edges through a union-find that
   refuses a merge across those constraints or that would hold two incompatible full names
   (``Y. Zhang`` may join ``Yunquan Zhang`` or ``Yuchen Zhang``, never both).
5. **Review queue**: pairs of clusters left apart with a mean probability of at least
   ``REVIEW_PROBABILITY`` (with their evidence), similar yet incompatible names that share
   evidence (``Daning Chen``/``Daning Cheng``), merges a constraint refused, ambiguous owners.

Modules: ``author_mentions`` (what is read of a mention), ``author_linkage`` with
``fellegi_sunter`` (step 3's comparisons and weights), ``author_blocks`` (its blocks and linkage) and
``author_fit`` (fitting the weights),
``author_clusters`` (the constrained union-find, evidence shown for review),
``author_components`` (independent components: batches, worker processes); this module runs
the steps and holds the public API. docs/resolution.md has every rule with its reasons and the
figures on real data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import polars as pl
from rapidfuzz.distance import JaroWinkler

from pipelines.core.resolution.author_clusters import (AuthorUnionFind, ReviewPair, cluster_view, evidence_score,
                                                       pair_evidence, same_family_initial, similar_name_candidates)
from pipelines.core.resolution.author_components import component_batches, components, identity_label_columns, name_label_table
from pipelines.core.resolution.author_fit import FIT_MENTIONS, fit_author_model, model_for
from pipelines.core.resolution.author_blocks import blocks as linkage_blocks, describe_levels, link_block, packed
from pipelines.core.resolution.author_linkage import MERGE_PROBABILITY, AuthorModel, mention_evidence
from pipelines.core.resolution.author_mentions import (Mentions, check_mention_ids, co_listed, normalize_openalex_id,
                                                       normalize_orcid, one_record, paper_names_of, prepare_mentions,
                                                       same_paper_candidates)
from pipelines.core.resolution.blocking import star_pairs
from pipelines.core.resolution.review import REVIEW_SCHEMA, concat_queues, review_queue
from pipelines.core.resolution.runtime import map_in_processes, match_workers, without_cycle_collection
from pipelines.core.resolution.names import name_compatibility, name_levels, parse_name

__all__ = ["ASSIGNMENT_SCHEMA", "BATCH_MENTIONS", "FIT_MENTIONS", "AuthorModel", "author_review_pairs", "components",
           "fit_author_model", "identity_label_columns", "match_authors", "name_label_table", "normalize_openalex_id",
           "normalize_orcid", "resolve_authors"]

REVIEW_NAME_SIMILARITY = 0.85  # Jaro-Winkler of folded names for the "similar but incompatible" queue
METHOD_PRIORITY = {"orcid": 6, "profile": 5, "openalex_id": 4, "same_paper": 3, "shared_evidence": 2, "singleton": 0}

ASSIGNMENT_SCHEMA = {"mention_id": pl.String, "author_id": pl.String, "method": pl.String, "score": pl.Float64}


@dataclass
class _AuthorResolution:
    roots: list[int]
    edges: list[tuple[int, int, str, float]]
    review: list[ReviewPair]


def _resolve(m: Mentions, model: AuthorModel) -> _AuthorResolution:
    """Steps 1-4 of the module docstring over one input (or one batch of whole components)."""
    uf = AuthorUnionFind(m)
    edges: list[tuple[int, int, str, float]] = []
    review: list[ReviewPair] = []
    _identity_links(m, uf, edges)
    _same_paper_links(m, uf, edges, review)
    # 3. Probabilistic linkage of compatible names within blocks (author_linkage.py).
    uf.one_profile_per_site = True
    seen_review: set[tuple[int, int]] = set()
    _link(m, model, uf, edges, review, seen_review)
    _similar_names_review(m, uf, review, seen_review)
    return _AuthorResolution(uf.roots(), edges, review)


def _identity_links(m: Mentions, uf: AuthorUnionFind, edges: list) -> None:
    """Step 1: mentions of one owned profile, one ORCID or one OpenAlex id are one person."""
    idx = np.arange(len(m.ids), dtype=np.int64)
    uf.identity_mode = True
    for method, labels in (("orcid", m.orcid), ("profile", m.profile), ("openalex_id", m.openalex)):
        star = star_pairs(pl.DataFrame({"idx": idx, "label": labels}, schema={"idx": pl.Int64, "label": pl.String}))
        for i, j in star.iter_rows():
            if uf.union(i, j) or uf.find(i) == uf.find(j):
                edges.append((i, j, method, 1.0))
    uf.identity_mode = False


def _same_paper_links(m: Mentions, uf: AuthorUnionFind, edges: list, review: list[ReviewPair]) -> None:
    """Step 2: two mentions on one paper with compatible names are one person, unless they are two
    entries of one byline (listed side by side, or two rows of one record); a name compatible with
    two co-listed names is ambiguous and goes to review."""
    candidates = same_paper_candidates(m)
    compatible: dict[int, list[int]] = {}
    for i, j in candidates.iter_rows():
        if not m.names[i] or not m.names[j]:
            continue
        same_record = one_record(m, i, j)
        if (co_listed(m, i, j) or same_record) and m.folded[i] != m.folded[j]:
            uf.add_cannot_link(i, j)
            continue
        if same_record:
            # The very same name twice on one record: two namesakes of one byline, or the entry
            # repeated. Not forbidden (in a collaboration's 3,000-name byline a hard constraint
            # on every such pair fragments each namesake's clustering), not merged: the linkage weighs it.
            continue
        if name_compatibility(m.names[i], m.names[j]) > 0:
            compatible.setdefault(i, []).append(j)
            compatible.setdefault(j, []).append(i)
    same_paper_edges = []
    ambiguous: set[int] = set()
    for i, partners in sorted(compatible.items()):
        # Compatible with two names that share a byline (Y. Zhang vs Yunquan and Yuchen): ambiguous.
        if any(co_listed(m, a, b) for a in partners for b in partners if a < b and m.folded[a] != m.folded[b]):
            ambiguous.add(i)
            distinct = ", ".join(sorted({m.names[j] for j in partners}))
            for j in partners:
                review.append(ReviewPair(min(i, j), max(i, j), 0.9, "same paper, compatible names", f"{m.names[i]!r} fits several names on this byline: {distinct}"))
    for i, partners in sorted(compatible.items()):
        for j in partners:
            if i < j and i not in ambiguous and j not in ambiguous:
                level = name_compatibility(m.names[i], m.names[j])
                same_paper_edges.append((i, j, 1.0 if level == 2 else 0.9))
    for i, j, s in sorted(same_paper_edges, key=lambda e: (-e[2], e[0], e[1])):
        if uf.union(i, j) or uf.find(i) == uf.find(j):
            edges.append((i, j, "same_paper", s))


def _similar_names_review(m: Mentions, uf: AuthorUnionFind, review: list[ReviewPair], seen_review: set[tuple[int, int]]) -> None:
    """Step 4: clusters with similar but incompatible names that share evidence: review only."""
    roots = uf.roots()
    similar = similar_name_candidates(m, roots)
    view = cluster_view(m, roots, set(similar["a"].to_list()) | set(similar["b"].to_list()))
    for a, b in similar.iter_rows():
        if uf.find(a) == uf.find(b):
            continue
        na, nb = view.names.get(a, set()), view.names.get(b, set())
        worst, _ = name_levels(na, nb)
        if worst > 0:
            continue  # compatible clusters were judged in step 3
        similarity = max(JaroWinkler.normalized_similarity(parse_name(x).folded, parse_name(y).folded) for x in na for y in nb)
        points, ev_for = pair_evidence(view, a, b)
        # Very similar strings (Chen/Cheng) need one point of shared evidence; one family name
        # and one initial with different given names (Yuchen/Yunquan Zhang) need two.
        if not (similarity >= REVIEW_NAME_SIMILARITY and points >= 1) and not (points >= 2 and same_family_initial(na, nb)):
            continue
        key = (min(a, b), max(a, b))
        if key in seen_review:
            continue
        seen_review.add(key)
        review.append(
            ReviewPair(
                view.members[a][0], view.members[b][0], round(evidence_score(points) * similarity, 4),
                f"similar names ({similarity:.2f}); " + "; ".join(ev_for),
                "names are not compatible forms of one name",
            )
        )


def _link(m: Mentions, model: AuthorModel, uf: AuthorUnionFind, edges: list, review: list[ReviewPair],
          seen_review: set[tuple[int, int]]) -> None:
    """Step 3: average linkage of each block's pair probabilities (author_linkage.py), applied
    through the union-find so identity, byline and profile constraints still hold."""
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    start = np.array(uf.roots(), dtype=np.int64)
    constrained = {r for r in set(start.tolist()) if uf.has_constraints(r)}
    for rows, block_of in packed(linkage_blocks(m.keys, ev.canonical, ev.year, m.ids)):
        result = link_block(ev, model, rows, block_of, start[rows], _forbidden(uf, start[rows], constrained))
        for label in range(int(result.labels.max()) + 1):
            members = np.flatnonzero(result.labels == label)
            anchor = int(rows[members[0]])
            for k in members[1:].tolist():
                other = int(rows[k])
                ra, rb = uf.find(anchor), uf.find(other)
                if ra == rb:
                    continue
                score = round(float(result.score[k]), 4)
                reason = uf.conflict(ra, rb)
                if reason is None:
                    uf.union(ra, rb)
                    edges.append((anchor, other, "shared_evidence", score))
                elif (min(ra, rb), max(ra, rb)) not in seen_review:
                    seen_review.add((min(ra, rb), max(ra, rb)))
                    lo, hi = min(anchor, other), max(anchor, other)
                    review.append(ReviewPair(lo, hi, score, "linked by their evidence", f"{reason} ({m.names[lo]} / {m.names[hi]})"))
        for ri, rj, mean, levels in result.review:
            a, b = int(rows[ri]), int(rows[rj])
            ra, rb = uf.find(a), uf.find(b)
            key = (min(ra, rb), max(ra, rb))
            if ra == rb or key in seen_review:
                continue
            seen_review.add(key)
            reason = uf.conflict(ra, rb)
            lo, hi = min(a, b), max(a, b)
            against = (f"{reason} ({m.names[lo]} / {m.names[hi]})" if reason is not None
                       else f"mean match probability {mean:.2f}, {MERGE_PROBABILITY:g} needed")
            review.append(ReviewPair(lo, hi, round(mean, 4), describe_levels(levels), against))


def _forbidden(uf: AuthorUnionFind, start: np.ndarray, constrained: set[int]) -> np.ndarray:
    """Pairs of a block's rows whose starting clusters may never merge: two entries of one byline,
    different ORCIDs, different profiles on one site (names are the linkage's own test)."""
    present = sorted(constrained.intersection(start.tolist()))
    if len(present) < 2:
        return np.zeros((len(start), len(start)), dtype=bool)
    q = len(present)
    conflicts = np.zeros((q + 1, q + 1), dtype=bool)  # the last row/column: an unconstrained cluster
    for x in range(q):
        for y in range(x + 1, q):
            reason = uf.conflict(present[x], present[y])
            conflicts[x, y] = conflicts[y, x] = reason is not None and reason != "incompatible"
    position = {r: k for k, r in enumerate(present)}
    at = np.array([position.get(r, q) for r in start.tolist()], dtype=np.int64)
    return conflicts[at[:, None], at[None, :]]


def _assignments(m: Mentions, res: _AuthorResolution) -> pl.DataFrame:
    n = len(m.ids)
    first: dict[int, int] = {}
    for i, r in enumerate(res.roots):
        first.setdefault(r, i)  # rows are sorted by mention_id: the first is the smallest
    best: dict[int, tuple[int, float, str]] = {}
    for i, j, method, score in res.edges:
        if res.roots[i] != res.roots[j]:
            continue
        cand = (METHOD_PRIORITY[method], score, method)
        for k in (i, j):
            if k not in best or cand[:2] > best[k][:2]:
                best[k] = cand
    return pl.DataFrame(
        {
            "mention_id": m.ids,
            "author_id": [m.ids[first[res.roots[i]]] for i in range(n)],
            "method": [best[i][2] if i in best else "singleton" for i in range(n)],
            "score": [best[i][1] if i in best else 1.0 for i in range(n)],
        },
        schema=ASSIGNMENT_SCHEMA,
    )


def _review_frame(m: Mentions, res: _AuthorResolution, cluster_of: list[str]) -> pl.DataFrame:
    rows = []
    for r in res.review:
        ci, cj = cluster_of[r.i], cluster_of[r.j]
        if ci == cj:
            continue
        left, right = (r.i, r.j) if ci < cj else (r.j, r.i)
        rows.append(
            {
                "left_id": m.ids[left],
                "right_id": m.ids[right],
                "left_label": m.names[left],
                "right_label": m.names[right],
                "score": r.score,
                "evidence_for": r.evidence_for,
                "evidence_against": r.evidence_against,
                "left_cluster": cluster_of[left],
                "right_cluster": cluster_of[right],
            }
        )
    return review_queue(rows)


# Inputs larger than this are resolved one batch of independent components at a time, so the
# matcher's per-mention features (~2 KB each) are held for one batch, not for the corpus.
BATCH_MENTIONS = 250_000


# Inputs of at least this many mentions are resolved in worker processes, BATCHES_PER_WORKER
# batches of components per worker (starting a worker costs about a second).
PARALLEL_AUTHOR_MIN = 100_000
BATCHES_PER_WORKER = 3


def _batch_size(configured: int | None = None) -> int:
    """Mentions resolved at once: ``configured`` (the setting ``SCHOLARHOUSE_AUTHOR_BATCH``), else BATCH_MENTIONS."""
    return max(1, int(configured)) if configured else BATCH_MENTIONS


def _resolved(mentions: pl.DataFrame, model: AuthorModel | None = None,
              batch: int | None = None) -> Iterator[tuple[Mentions, _AuthorResolution]]:
    """(features, resolution) of ``mentions``: in one piece, or per batch of components."""
    batch = _batch_size(batch)
    if mentions.height <= batch:
        m = prepare_mentions(mentions)
        yield m, _resolve(m, model or model_for(m, mentions, None))
        return
    on_paper = paper_names_of(mentions)
    model = model or fit_author_model(mentions, on_paper=on_paper)
    for part, part_on_paper in component_batches(mentions, batch, on_paper):
        m = prepare_mentions(part, part_on_paper)
        yield m, _resolve(m, model)


@without_cycle_collection
def _resolve_batch(batch: tuple[pl.DataFrame, dict[str, tuple[set[str], dict[str, str]]] | None, AuthorModel | None]
                   ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(assignments, review) of one batch of whole components — in a worker process or here.
    Without a model (the input is this one batch) the model is fitted on the batch itself."""
    part, on_paper, model = batch
    m = prepare_mentions(part, on_paper)
    res = _resolve(m, model or model_for(m, part, on_paper))
    assigned = _assignments(m, res)
    return assigned, _review_frame(m, res, assigned["author_id"].to_list())


@without_cycle_collection
def resolve_authors(mentions: pl.DataFrame, *, paper_rows: pl.DataFrame | None = None,
                    model: AuthorModel | None = None, batch: int | None = None,
                    workers: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Match mentions into people; return ``(assignments, review)``.

    ``review`` rows name one mention of each cluster (``left_id``/``right_id`` are mention ids,
    ``left_cluster``/``right_cluster`` the author ids); labels are the mentions' names.

    ``paper_rows`` (optional): when ``mentions`` is part of a larger input (an incremental night
    re-resolves only the people a change can reach), every mention of the papers ``mentions``
    are on — the names on a paper are its mentions' co-authors. By default ``mentions`` itself.
    ``model`` (optional, :func:`fit_author_model`): the evidence weights to use; by default fitted
    on ``mentions``.
    ``batch`` / ``workers``: the settings ``SCHOLARHOUSE_AUTHOR_BATCH`` / ``SCHOLARHOUSE_MATCH_WORKERS``
    (by default :data:`BATCH_MENTIONS`, and one worker per core, at most 8); the result is the same.
    """
    if mentions.height == 0:
        return pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA)
    # Checked here as well as per batch: a repeated id can fall into two different batches.
    if "mention_id" in mentions.columns:
        check_mention_ids(mentions["mention_id"].cast(pl.String))
    on_paper = None if paper_rows is None else paper_names_of(paper_rows)
    batch, workers = _batch_size(batch), match_workers(workers)
    parallel = workers > 1 and mentions.height >= PARALLEL_AUTHOR_MIN
    if mentions.height <= batch and not parallel:
        return _resolve_batch((mentions, on_paper, model))
    if model is None:
        on_paper = on_paper if on_paper is not None else paper_names_of(mentions)
        model = fit_author_model(mentions, on_paper=on_paper)
    if parallel:
        # The batch size bounds the mentions being resolved at once, across workers (a component
        # larger than a worker's share stays whole); a few batches per worker keep every core busy.
        batch = max(1, min(batch // workers, -(-mentions.height // (workers * BATCHES_PER_WORKER))))
    assignments, reviews = [], []
    batches = ((part, papers, model) for part, papers in component_batches(mentions, batch, on_paper))
    for assigned, review in map_in_processes(_resolve_batch, batches,
                                             workers=workers if parallel else 1,
                                             failure="author-matching worker processes failed; matching in this process"):
        assignments.append(assigned)
        reviews.append(review)
    assigned = assignments[0] if len(assignments) == 1 else pl.concat(assignments).sort("mention_id")
    return assigned, concat_queues(reviews)


def match_authors(mentions: pl.DataFrame, *, model: AuthorModel | None = None) -> pl.DataFrame:
    """One row per mention: ``mention_id``, ``author_id``, ``method``, ``score``.

    ``author_id`` is the smallest ``mention_id`` of the person's cluster. ``method`` is the
    strongest evidence that put the mention in its cluster: ``orcid`` | ``profile`` |
    ``openalex_id`` | ``same_paper`` | ``shared_evidence``, or ``singleton`` (score 1.0).
    """
    return resolve_authors(mentions, model=model)[0]


@without_cycle_collection
def author_review_pairs(mentions: pl.DataFrame, result: pl.DataFrame, *, model: AuthorModel | None = None,
                        batch: int | None = None) -> pl.DataFrame:
    """The review queue for ``mentions`` as clustered in ``result`` (``mention_id``, ``author_id``).

    Only pairs that ``result`` keeps apart are listed, so manual overrides are respected.
    """
    if mentions.height == 0:
        return pl.DataFrame(schema=REVIEW_SCHEMA)
    mapping = dict(zip(result["mention_id"].cast(pl.String).to_list(), result["author_id"].cast(pl.String).to_list()))
    return concat_queues([_review_frame(m, res, [mapping.get(i, i) for i in m.ids]) for m, res in _resolved(mentions, model, batch)])

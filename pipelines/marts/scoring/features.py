"""Paper features for the novelty score: TF-IDF vectors and first-use ("new") flags.

Inputs are a ``TokenStream`` (term ids per paper, see ``terms.py``) and the papers' time keys;
everything is numpy / scipy.sparse and works on batches of papers so that peak memory stays a
small multiple of the final matrices, even for a million papers:

- ``tfidf_matrices``: counts are built batch by batch (bigram ids come from a first pass that
  collects the distinct bigrams), then weighted and split into the unigram block (for new-term
  examples) and the similarity matrix (only columns used by at least two papers: a column used
  once cannot contribute to any similarity, and norms are taken before dropping it).
- ``first_use_flags``: for every (paper, term) entry, whether no earlier paper used the term,
  from each term's earliest year and day.
- ``new_pair_shares``: the same question for term pairs, whose distinct count is too large to
  hold at once: pairs are hash-partitioned and each partition is regenerated from the tokens
  and solved on its own.

"Earlier" uses the sentinel-encoded time keys described in ``neighbours.py``:
j is earlier than i  <=>  cand_year[j] < query_year[i]  or  cand_day[j] < query_day[i].
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator

import numpy as np
import polars as pl
import scipy.sparse as sp

from pipelines.marts.scoring.terms import TermSequences, TokenStream

# At most this many distinct title terms (in title order) form title pairs: bounds the
# quadratic pair count for freakishly long titles (20 terms -> 190 pairs).
MAX_TITLE_PAIR_TERMS = 20
# Pair entries handled per partition in new_pair_shares (memory ~ 40 bytes per entry).
_PAIR_ENTRIES_PER_PARTITION = 12_000_000


@dataclass(frozen=True)
class TimeKeys:
    """Sentinel-encoded time keys, one entry per paper (see the module docstring)."""

    query_year: np.ndarray
    cand_year: np.ndarray
    query_day: np.ndarray
    cand_day: np.ndarray


@dataclass(frozen=True)
class TfidfMatrices:
    similarity: sp.csr_matrix  # float32, L2-normalised rows; entries of columns used once removed
    unigram: sp.csr_matrix  # float32, the unigram columns (term ids) with the same weights
    idf: "IdfTable | None" = None  # the document frequencies the weights used (these papers' own, or the given)


def doc_batches(n_docs: int, batch_docs: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n_docs, batch_docs):
        yield start, min(n_docs, start + batch_docs)


def adjacent_pairs(local_doc: np.ndarray, term: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc, first, second) of consecutive real terms of one paper (no sentence break between)."""
    if len(term) < 2:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    ok = (local_doc[:-1] == local_doc[1:]) & (term[:-1] >= 0) & (term[1:] >= 0)
    return local_doc[:-1][ok], term[:-1][ok].astype(np.int64), term[1:][ok].astype(np.int64)


def _bigram_codes(tokens: TokenStream, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """(local doc, first * V + second) of the ordered adjacent pairs of papers [start, stop)."""
    v = tokens.n_terms
    docs, codes = [], []
    for part in (tokens.title, tokens.abstract):
        d, a, b = adjacent_pairs(*part.rows(start, stop))
        docs.append(d)
        codes.append(a * v + b)
    return np.concatenate(docs), np.concatenate(codes)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique(values) by sorting (numpy 2's hash-based unique is several times slower here)."""
    if len(values) == 0:
        return values.copy()
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each value in them), by one stable argsort."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]] if len(values) else np.zeros(0, dtype=bool)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def positions_in(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of each value (which must occur) in ``sorted_values``; the lookups run in sorted
    order, which keeps the binary searches cache-friendly (random lookups are ~30x slower)."""
    order = np.argsort(values, kind="stable")
    out = np.empty(len(values), dtype=np.int64)
    out[order] = np.searchsorted(sorted_values, values[order])
    return out


def member_positions(sorted_set: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask of the ``values`` found in ``sorted_set``, their positions in it). Membership by a
    hash set (Polars), then binary search for the hits only: most values usually miss."""
    if len(values) == 0 or len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool), np.empty(0, dtype=np.int64)
    hit = pl.Series(values, dtype=pl.Int64).is_in(pl.Series(sorted_set, dtype=pl.Int64).implode()).to_numpy()
    return hit, positions_in(sorted_set, values[hit])


def count_matrix(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """How often each (row, col) occurs, as CSR with sorted indices (float32: small counts are exact)."""
    matrix = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=shape)
    matrix.sum_duplicates()  # also sorts indices
    return matrix


def stack_rows(blocks: list[sp.csr_matrix], n_cols: int) -> sp.csr_matrix:
    """vstack that frees each block as soon as it is copied (peak = result + one block)."""
    total = sum(b.nnz for b in blocks)
    n_rows = sum(b.shape[0] for b in blocks)
    index_dtype = np.int64 if max(total, n_cols) >= np.iinfo(np.int32).max else np.int32
    data = np.empty(total, dtype=np.float32)
    indices = np.empty(total, dtype=index_dtype)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    at, row = 0, 0
    blocks.reverse()
    while blocks:
        block = blocks.pop()
        data[at : at + block.nnz] = block.data
        indices[at : at + block.nnz] = block.indices
        indptr[row + 1 : row + 1 + block.shape[0]] = at + block.indptr[1:]
        at += block.nnz
        row += block.shape[0]
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))


def _keep_columns(block: sp.csr_matrix, keep_entry: np.ndarray) -> sp.csr_matrix:
    """The block with only the stored entries flagged in ``keep_entry`` (same shape)."""
    rows = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
    indptr = np.zeros(block.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep_entry], minlength=block.shape[0]), out=indptr[1:])
    return sp.csr_matrix((block.data[keep_entry], block.indices[keep_entry], indptr), shape=block.shape)


def _count_block(tokens: TokenStream, bigram_codes: np.ndarray, start: int, stop: int) -> sp.csr_matrix:
    """Term and bigram counts of papers [start, stop) (columns: term ids, then V + bigram index)."""
    v = tokens.n_terms
    rows, cols = [], []
    for part in (tokens.title, tokens.abstract):
        local, term = part.rows(start, stop)
        real = term >= 0
        rows.append(local[real])
        cols.append(term[real].astype(np.int64))
    local, code = _bigram_codes(tokens, start, stop)
    rows.append(local)
    cols.append(v + positions_in(bigram_codes, code))
    return count_matrix(np.concatenate(rows), np.concatenate(cols), (stop - start, v + len(bigram_codes)))


def _counted_block(
    tokens: TokenStream, bigram_codes: np.ndarray, bounds: tuple[int, int]
) -> tuple[sp.csr_matrix, tuple[np.ndarray, np.ndarray]]:
    block = _count_block(tokens, bigram_codes, *bounds)
    return block, _column_counts(block)


def _column_counts(block: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(distinct columns, rows using each) of a count block, sorted by column."""
    ordered = np.sort(block.indices)
    if len(ordered) == 0:
        return ordered, np.empty(0, dtype=np.int32)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.diff(np.r_[starts, len(ordered)]).astype(np.int32)


def _weigh_block(
    block: sp.csr_matrix, df: np.ndarray, n_docs: int, v: int, idf_df: np.ndarray | None = None
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """TF-IDF weights of a count block, L2-normalised per row (over all its columns).

    ``df``: papers of this corpus using each column; ``idf_df`` / ``n_docs``: the document
    frequencies and paper count the IDF is taken from (an epoch's, ``IdfTable``; None: ``df``).
    Returns (unigram view: the term columns; similarity view: the columns used by at least two
    papers of this corpus, same numbering)."""
    used_by = df[block.indices]
    weigh_by = used_by if idf_df is None else idf_df[block.indices]
    idf = np.log((1.0 + n_docs) / (1.0 + weigh_by)) + 1.0
    weights = (1.0 + np.log(block.data.astype(np.float64))) * idf
    rows = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
    norms = np.sqrt(np.bincount(rows, weights=weights * weights, minlength=block.shape[0]))
    weights /= np.where(norms > 0, norms, 1.0)[rows]
    weighted = sp.csr_matrix((weights.astype(np.float32), block.indices, block.indptr), shape=block.shape)
    unigram = _keep_columns(weighted, block.indices < v)
    return (
        sp.csr_matrix((unigram.data, unigram.indices, unigram.indptr), shape=(block.shape[0], v)),
        _keep_columns(weighted, used_by >= 2),
    )


def ordered_map(pool: ThreadPoolExecutor, fn: Callable, items: list, window: int) -> list:
    """[fn(x) for x in items] on the pool, results in order, at most ``window`` tasks in flight.

    ``items`` is emptied as tasks are submitted, so an input (e.g. a count block) is freed as soon
    as its task has run: inputs and outputs do not both stay whole in memory."""
    pending: deque = deque()
    out = []
    items.reverse()
    while items:
        pending.append(pool.submit(fn, items.pop()))
        if len(pending) >= window:
            out.append(pending.popleft().result())
    while pending:
        out.append(pending.popleft().result())
    return out


def _distinct_bigrams(tokens: TokenStream, batches: list[tuple[int, int]], pool, threads: int) -> np.ndarray:
    """Sorted distinct bigram codes of all papers. Per-batch distinct codes are merged every
    few batches, so memory stays ~2x the final array instead of the sum over batches."""
    merged = np.empty(0, dtype=np.int64)
    pending: list[np.ndarray] = []
    pending_size = 0
    for codes in ordered_map(
        pool, lambda b: sorted_unique(_bigram_codes(tokens, *b)[1]), list(batches), threads
    ):
        pending.append(codes)
        pending_size += len(codes)
        if pending_size > max(len(merged), 1 << 22):
            merged = sorted_unique(np.concatenate([merged, *pending]))
            pending, pending_size = [], 0
    return sorted_unique(np.concatenate([merged, *pending])) if pending else merged


@dataclass(frozen=True)
class IdfTable:
    """Document frequencies an IDF is taken from (what a novelty epoch fits on its corpus).

    ``term_df[t]``: papers using term id t (ids beyond the array: 0); ``bigram_codes``: sorted
    codes ``first << 32 | second`` of the ordered adjacent term pairs used, ``bigram_df`` the
    papers using each; ``n_docs``: N."""

    n_docs: int
    term_df: np.ndarray
    bigram_codes: np.ndarray
    bigram_df: np.ndarray

    def column_df(self, v: int, bigram_codes: np.ndarray) -> np.ndarray:
        """The df of the columns of a matrix over ``v`` term ids and the bigrams ``bigram_codes``
        (codes ``first * v + second``, as tfidf_matrices numbers them); unknown ones: 0."""
        terms = np.zeros(v, dtype=np.int64)
        known = min(v, len(self.term_df))
        terms[:known] = self.term_df[:known]
        wide = (bigram_codes // max(v, 1)) << 32 | (bigram_codes % max(v, 1))
        position = np.searchsorted(self.bigram_codes, wide)
        inside = position < len(self.bigram_codes)
        found = np.zeros(len(wide), dtype=bool)
        found[inside] = self.bigram_codes[position[inside]] == wide[inside]
        bigrams = np.where(found, self.bigram_df[np.minimum(position, max(len(self.bigram_df) - 1, 0))]
                           if len(self.bigram_df) else 0, 0)
        return np.concatenate([terms, bigrams.astype(np.int64)])


def fit_idf(tokens: TokenStream, *, batch_docs: int = 50_000, n_threads: int = 1) -> IdfTable:
    """The document frequencies of ``tokens``' terms and ordered adjacent bigrams (an epoch's fit)."""
    v, n = tokens.n_terms, tokens.n_docs
    batches = list(doc_batches(n, batch_docs))
    threads = max(1, n_threads)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        bigram_codes = _distinct_bigrams(tokens, batches, pool, threads)
        df = np.zeros(v + len(bigram_codes), dtype=np.int64)
        for _, (columns, used) in ordered_map(pool, partial(_counted_block, tokens, bigram_codes), list(batches), threads):
            df[columns] += used
    wide = (bigram_codes // max(v, 1)) << 32 | (bigram_codes % max(v, 1))  # sorted too: same (first, second) order
    return IdfTable(n_docs=n, term_df=df[:v].astype(np.int32), bigram_codes=wide.astype(np.int64),
                    bigram_df=df[v:].astype(np.int32))


def tfidf_matrices(
    tokens: TokenStream, *, batch_docs: int = 50_000, n_threads: int = 1, idf: IdfTable | None = None
) -> TfidfMatrices:
    """TF-IDF over unigrams (term ids) and ordered adjacent bigrams (columns after the unigrams,
    numbered by (first, second) term id): weight (1 + ln tf) * (ln((1 + N) / (1 + df)) + 1),
    rows L2-normalised. N and df are these papers' own, or ``idf``'s (an epoch's: then a paper's
    vector depends only on its own text and the epoch). Batches run on ``n_threads`` threads
    (numpy and scipy release the GIL); results are assembled in batch order, so they do not
    depend on the thread count."""
    v, n = tokens.n_terms, tokens.n_docs
    batches = list(doc_batches(n, batch_docs))
    threads = max(1, n_threads)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        # Pass 1: the distinct bigrams (sorted codes), so bigram columns are numbered globally.
        bigram_codes = _distinct_bigrams(tokens, batches, pool, threads)
        n_cols = v + len(bigram_codes)
        # Pass 2: counts per batch, and document frequencies.
        counts = ordered_map(pool, partial(_counted_block, tokens, bigram_codes), list(batches), threads)
        idf_df = None if idf is None else idf.column_df(v, bigram_codes)
        idf_n = n if idf is None else idf.n_docs
        df = np.zeros(n_cols, dtype=np.int32)
        for _, (columns, used) in counts:
            df[columns] += used  # columns are distinct within a block
        if idf is None:  # what an epoch keeps: these papers' own document frequencies
            wide = (bigram_codes // max(v, 1)) << 32 | (bigram_codes % max(v, 1))
            idf = IdfTable(n_docs=n, term_df=df[:v].copy(), bigram_codes=wide.astype(np.int64), bigram_df=df[v:].copy())
        bigram_codes = None  # no longer needed: free it before the weighted copies are made
        blocks = [block for block, _ in counts]
        del counts
        # Pass 3: weights, norms, and the two views.
        views = ordered_map(pool, lambda block: _weigh_block(block, df, idf_n, v, idf_df), blocks, threads)
    unigram_blocks = [u for u, _ in views]
    similarity_blocks = [s for _, s in views]
    del views
    return TfidfMatrices(
        similarity=stack_rows(similarity_blocks, n_cols),
        unigram=stack_rows(unigram_blocks, v),
        idf=idf,
    )


def first_use_flags(incidence: sp.csr_matrix, keys: TimeKeys) -> np.ndarray:
    """For every stored entry (paper i uses item t) of a CSR matrix: True when no paper earlier
    than i uses t. Uses the earliest year and day at which each item appears."""
    if incidence.nnz == 0:
        return np.zeros(0, dtype=bool)
    by_item = incidence.tocsc()
    first_year, first_day = _earliest(by_item.indptr, by_item.indices, keys, incidence.shape[1])
    del by_item
    rows = np.repeat(np.arange(incidence.shape[0]), np.diff(incidence.indptr))
    cols = incidence.indices
    return ~((first_year[cols] < keys.query_year[rows]) | (first_day[cols] < keys.query_day[rows]))


def _earliest(
    indptr: np.ndarray, rows: np.ndarray, keys: TimeKeys, n_items: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per item (a CSC column, or a group of sorted entries): min candidate year and day."""
    nonempty = np.diff(indptr) > 0
    starts = indptr[:-1][nonempty]
    first_year = np.full(n_items, np.iinfo(np.int64).max, dtype=np.int64)
    first_day = np.full(n_items, np.iinfo(np.int64).max, dtype=np.int64)
    if len(starts):
        first_year[nonempty] = np.minimum.reduceat(keys.cand_year[rows], starts)
        first_day[nonempty] = np.minimum.reduceat(keys.cand_day[rows], starts)
    return first_year, first_day


def share_per_row(incidence: sp.csr_matrix, flags: np.ndarray) -> np.ndarray:
    """Per row: flagged entries / stored entries (0 for an empty row)."""
    n = incidence.shape[0]
    sizes = np.diff(incidence.indptr)
    rows = np.repeat(np.arange(n), sizes)
    hits = np.bincount(rows, weights=flags.astype(np.float64), minlength=n)
    return np.where(sizes > 0, hits / np.maximum(sizes, 1), 0.0)


def title_pairs(local_doc: np.ndarray, term: np.ndarray, v: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc, unordered pair code) for every pair of distinct title terms of a paper, using the
    first MAX_TITLE_PAIR_TERMS distinct terms in title order."""
    real = term >= 0
    doc, term = local_doc[real], term[real].astype(np.int64)
    if len(term) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    # first occurrence of each (doc, term), kept in title order
    first = pl.Series(doc * v + term).is_first_distinct().to_numpy()
    doc, term = doc[first], term[first]
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    sizes = np.diff(np.r_[starts, len(doc)])
    rank = np.arange(len(doc)) - np.repeat(starts, sizes)
    keep = rank < MAX_TITLE_PAIR_TERMS
    sizes = np.minimum(sizes, MAX_TITLE_PAIR_TERMS)
    doc, term, rank = doc[keep], term[keep], rank[keep]
    # element at rank r of a group of size m pairs with the m - r - 1 elements after it
    partners = np.repeat(sizes, sizes) - rank - 1
    left = np.repeat(np.arange(len(doc)), partners)
    block_start = np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + (np.arange(len(left)) - block_start)
    a, b = term[left], term[right]
    return doc[left], np.minimum(a, b) * v + np.maximum(a, b)


def _pair_codes(tokens: TokenStream, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """(paper, unordered pair code) of papers [start, stop): adjacent distinct terms in title
    and abstract, and pairs of title terms; a pair may repeat within a paper."""
    v = tokens.n_terms
    docs, codes = [], []
    for part in (tokens.title, tokens.abstract):
        d, a, b = adjacent_pairs(*part.rows(start, stop))
        distinct = a != b
        docs.append(d[distinct])
        codes.append(np.minimum(a, b)[distinct] * v + np.maximum(a, b)[distinct])
    d, c = title_pairs(*tokens.title.rows(start, stop), v)
    docs.append(d)
    codes.append(c)
    return np.concatenate(docs) + start, np.concatenate(codes)


def _partition_new_pairs(
    tokens: TokenStream, keys: TimeKeys, part: int, partitions: int, batch_docs: int
) -> tuple[np.ndarray, np.ndarray]:
    """(paper, is_new) for the distinct (paper, pair) entries whose pair code falls in this
    partition (code % partitions == part)."""
    n = tokens.n_docs
    docs, codes = [], []
    for s, e in doc_batches(n, batch_docs):
        d, c = _pair_codes(tokens, s, e)
        mine = (c % partitions) == part
        docs.append(d[mine])
        codes.append(c[mine])
    doc, code = np.concatenate(docs), np.concatenate(codes)
    del docs, codes
    if len(code) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
    item_codes, item = unique_inverse(code)
    del code
    entry = sorted_unique(item * n + doc)  # distinct (item, paper), sorted by item then paper
    del item, doc
    item, doc = entry // n, entry % n
    indptr = np.searchsorted(item, np.arange(len(item_codes) + 1))
    first_year, first_day = _earliest(indptr, doc, keys, len(item_codes))
    fresh = ~((first_year[item] < keys.query_year[doc]) | (first_day[item] < keys.query_day[doc]))
    return doc, fresh


def new_pair_shares(
    tokens: TokenStream, keys: TimeKeys, *, batch_docs: int = 50_000, n_threads: int = 1
) -> np.ndarray:
    """Per paper: the share of its distinct term pairs that no earlier paper has (0 if none).

    Pairs are split into hash partitions of ~_PAIR_ENTRIES_PER_PARTITION entries, regenerated
    from the tokens for each partition and solved independently (on ``n_threads`` threads)."""
    n = tokens.n_docs
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    estimate = len(tokens.abstract.term) + len(tokens.title.term) * 4
    partitions = max(1, -(-estimate // _PAIR_ENTRIES_PER_PARTITION))
    new_count = np.zeros(n, dtype=np.float64)
    total = np.zeros(n, dtype=np.float64)
    with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
        results = pool.map(
            lambda part: _partition_new_pairs(tokens, keys, part, partitions, batch_docs), range(partitions)
        )
        for doc, fresh in results:  # in partition order: sums are the same for any thread count
            new_count += np.bincount(doc, weights=fresh.astype(np.float64), minlength=n)
            total += np.bincount(doc, minlength=n)
    return np.where(total > 0, new_count / np.maximum(total, 1), 0.0)


# --- the same answers for some papers only (a night's new papers against the whole corpus) ----


def take_sequences(seq: TermSequences, rows: np.ndarray) -> TermSequences:
    """The sequences of papers ``rows`` (in that order)."""
    lengths = np.diff(seq.indptr)[rows]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    source = np.repeat(seq.indptr[rows] - indptr[:-1], lengths) + np.arange(int(indptr[-1]), dtype=np.int64)
    return TermSequences(indptr, seq.term[source])


def take_tokens(tokens: TokenStream, rows: np.ndarray) -> TokenStream:
    """The token stream of papers ``rows`` (same vocabulary)."""
    return TokenStream(
        title=take_sequences(tokens.title, rows),
        abstract=take_sequences(tokens.abstract, rows),
        vocabulary=tokens.vocabulary,
        surface=tokens.surface,
    )


def _earliest_of(items: np.ndarray, docs: np.ndarray, n_items: int, keys: TimeKeys) -> tuple[np.ndarray, np.ndarray]:
    """Per item index: the min candidate year and day over the (item, doc) entries."""
    first_year = np.full(n_items, np.iinfo(np.int64).max, dtype=np.int64)
    first_day = np.full(n_items, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_year, items, keys.cand_year[docs])
    np.minimum.at(first_day, items, keys.cand_day[docs])
    return first_year, first_day


def first_use_flags_for(
    query_unigram: sp.csr_matrix, query_rows: np.ndarray, tokens: TokenStream, keys: TimeKeys
) -> np.ndarray:
    """``first_use_flags`` for the stored entries of ``query_unigram`` (rows: the papers
    ``query_rows`` of ``tokens``), looking at every paper of ``tokens`` for earlier uses."""
    v = tokens.n_terms
    wanted = np.zeros(v, dtype=bool)
    wanted[query_unigram.indices] = True
    items, docs = [], []
    for part in (tokens.title, tokens.abstract):
        doc = np.repeat(np.arange(tokens.n_docs, dtype=np.int64), np.diff(part.indptr))
        keep = part.term >= 0
        keep[keep] = wanted[part.term[keep]]
        items.append(part.term[keep].astype(np.int64))
        docs.append(doc[keep])
    first_year, first_day = _earliest_of(np.concatenate(items), np.concatenate(docs), v, keys)
    rows = np.repeat(query_rows, np.diff(query_unigram.indptr))
    cols = query_unigram.indices
    return ~((first_year[cols] < keys.query_year[rows]) | (first_day[cols] < keys.query_day[rows]))


def new_pair_shares_for(
    tokens: TokenStream, keys: TimeKeys, query_rows: np.ndarray, *, batch_docs: int = 50_000
) -> np.ndarray:
    """``new_pair_shares`` for the papers ``query_rows`` only (one value per query row), looking
    at every paper of ``tokens`` for earlier uses of their pairs."""
    nq = len(query_rows)
    if nq == 0:
        return np.zeros(0, dtype=np.float64)
    q_doc, q_code = _pair_codes(take_tokens(tokens, query_rows), 0, nq)
    entry = sorted_unique(q_code * nq + q_doc)  # distinct (pair, query), sorted by pair
    q_code, q_doc = entry // nq, entry % nq
    wanted = sorted_unique(q_code)
    items, docs = [], []
    for s, e in doc_batches(tokens.n_docs, batch_docs):
        d, c = _pair_codes(tokens, s, e)
        hit, position = member_positions(wanted, c)
        items.append(position)
        docs.append(d[hit])
    first_year, first_day = _earliest_of(np.concatenate(items), np.concatenate(docs), len(wanted), keys)
    item = np.searchsorted(wanted, q_code)
    rows = query_rows[q_doc]
    fresh = ~((first_year[item] < keys.query_year[rows]) | (first_day[item] < keys.query_day[rows]))
    new_count = np.bincount(q_doc, weights=fresh.astype(np.float64), minlength=nq)
    total = np.bincount(q_doc, minlength=nq).astype(np.float64)
    return np.where(total > 0, new_count / np.maximum(total, 1), 0.0)

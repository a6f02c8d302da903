"""Exact k-nearest *earlier* neighbours by cosine similarity, with sparse products in chunks.

Input: an L2-normalised sparse matrix (one row per paper), papers grouped by category into
contiguous row ranges ("segments"), each segment sorted by time (see below), and four integer
time-key arrays. Output per paper: the k largest cosine similarities to papers of its own segment
that are strictly *earlier*, the most similar earlier paper, and how many earlier papers were
compared.

The earlier papers of row i are a prefix of its segment (see below), the first ``count_earlier``
rows. With a ``window`` W, row i is compared with the last W rows of that prefix only — its W
most recent earlier papers — so the work per paper is bounded by W and grows linearly with the
segment instead of quadratically; segments no larger than W are searched exactly as without it.

"Earlier" (a strict partial order, so ties are never earlier):
    j is earlier than i  <=>  cand_year[j] < query_year[i]  or  cand_day[j] < query_day[i]
The caller encodes dates as day numbers and missing values as sentinels so that this one test
means: an earlier date when both papers have one, otherwise an earlier year; a paper with no year
is after every paper that has one and before none. With rows sorted by (year, dated first, day),
everything earlier than row i sits *before* row i, so a chunk of query rows only has to be compared
with the prefix of its segment up to the chunk's end.

How it scales: for a chunk of query rows [qs, qe) and each candidate block [cs, ce) with cs < qe,
the similarities form a dense (chunk x chunk) float32 block; not-earlier pairs are masked to -1
(similarities are >= 0); per row the block's top k values are merged into a running top k.
Memory per thread is O(chunk_size^2) whatever the segment size; work is O(n^2 / 2) per segment,
as for any exact search. Chunks run on a thread pool (scipy and BLAS release the GIL).

Each block is the sum of two exact products over a split of the feature columns:
- *hot* columns (used by more than ~8% of the segment: "model", "learning", ...) as a dense BLAS
  product: a sparse product would spend most of its time on them, since two papers share a
  column with probability (df / n)^2;
- the other, *cold* columns as a scipy sparse product (most pairs share none or a few).
Columns used by fewer than two rows of a segment cannot contribute to any dot product there and
are dropped first (norms were computed before, so similarities are unchanged).

Determinism: a similarity is a fixed sum (hot part + cold part, each in a fixed order) that does
not depend on threads; top-k *values* are sorted before averaging; the nearest neighbour is the
highest similarity, ties broken by the lowest row (the earlier-sorted paper). BLAS may round the
last bit differently for a different block shape or CPU; callers round the results.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

# No candidate (not earlier, or padding): below every real cosine similarity (>= 0).
_MISSING = np.float32(-1.0)
# Dense/sparse split of the feature columns (see _hot_column_count); only speed depends on these.
_HOT_MIN_SHARE = 0.08
_MAX_HOT = 4096
_MIN_ROWS_FOR_DENSE = 512
# Rows of prepared segments allowed to wait for the thread pool (bounds memory).
_PENDING_ROWS = 50_000


@dataclass(frozen=True)
class NeighbourResult:
    mean_top_k: np.ndarray  # float64, mean of the k best similarities; nan when none earlier
    n_earlier: np.ndarray  # int64, how many earlier papers were compared (all, or the window's)
    nearest_row: np.ndarray  # int64, row of the most similar earlier paper, -1 when none
    nearest_similarity: np.ndarray  # float64, its similarity; nan when none earlier


def count_earlier(
    query_year: np.ndarray, cand_year: np.ndarray, query_day: np.ndarray, cand_day: np.ndarray
) -> np.ndarray:
    """How many j satisfy the earlier test for each i (within one segment), by binary search.

    |{year_j < year_i} ∪ {day_j < day_i}| = |A| + |B| - |A ∩ B|. B needs both papers dated, and a
    dated paper's year is its date's year, so for a dated i, A ∩ B = the dated j of an earlier
    year; for an undated i, B is empty.
    """
    sorted_year = np.sort(cand_year)
    count = np.searchsorted(sorted_year, query_year, side="left").astype(np.int64)
    cand_dated = cand_day < np.iinfo(np.int64).max
    query_dated = query_day > np.iinfo(np.int64).min
    if cand_dated.any() and query_dated.any():
        dated_days = np.sort(cand_day[cand_dated])
        dated_years = np.sort(cand_year[cand_dated])
        q = np.flatnonzero(query_dated)
        count[q] += np.searchsorted(dated_days, query_day[q], side="left") - np.searchsorted(
            dated_years, query_year[q], side="left"
        )
    return count


def _drop_unshared_columns(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """Remove columns with fewer than two non-zeros (they add nothing to any row-row product)
    and renumber the rest in order."""
    if matrix.nnz == 0:  # e.g. a category whose papers have no terms at all
        return sp.csr_matrix((matrix.shape[0], 0), dtype=matrix.dtype)
    if matrix.nnz < matrix.shape[1]:
        # fewer entries than columns (e.g. a category of a large corpus): count by sorting,
        # not with a bincount as wide as all the columns
        ordered = np.sort(matrix.indices)
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        used = np.diff(np.r_[starts, len(ordered)])
        kept_columns = ordered[starts][used >= 2]
        position = np.searchsorted(kept_columns, matrix.indices)
        entry_kept = kept_columns[np.minimum(position, max(len(kept_columns) - 1, 0))] == matrix.indices
        entry_kept &= position < len(kept_columns)
        new_column = position[entry_kept]
        n_kept = len(kept_columns)
    else:
        used = np.bincount(matrix.indices, minlength=matrix.shape[1])
        keep = used >= 2
        entry_kept = keep[matrix.indices]
        new_column = (np.cumsum(keep) - 1)[matrix.indices[entry_kept]]
        n_kept = int(keep.sum())
    row_of_entry = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    indptr = np.zeros(matrix.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of_entry[entry_kept], minlength=matrix.shape[0]), out=indptr[1:])
    return sp.csr_matrix(
        (matrix.data[entry_kept], new_column.astype(np.int32), indptr), shape=(matrix.shape[0], n_kept)
    )


@dataclass(frozen=True)
class _Segment:
    """One category's rows, split by column into a dense-friendly and a sparse part.

    ``hot`` holds the H most widely used feature columns (as CSR; turned into dense blocks on the
    fly and multiplied with BLAS), ``cold_t`` the rest, as transposed CSR blocks."""

    hot: sp.csr_matrix | None
    cold: sp.csr_matrix
    cold_t_blocks: list[sp.csr_matrix]
    starts: list[int]
    size: int
    query_year: np.ndarray
    query_day: np.ndarray
    cand_year: np.ndarray
    cand_day: np.ndarray


def _hot_column_count(df: np.ndarray, n_rows: int) -> int:
    """How many of the most used columns to multiply densely.

    Two rows share column t with probability ~(df_t / n)^2, so a sparse product spends about
    n^2 (df_t / n)^2 steps on column t (a few ns each, scattered), against 2 n^2 flops for the same
    column in a dense BLAS product (~0.01-0.02 ns each). Dense wins once df_t / n exceeds roughly
    5-10%: those columns go dense, at most _MAX_HOT of them."""
    if n_rows < _MIN_ROWS_FOR_DENSE or len(df) == 0:
        return 0
    return int(min(_MAX_HOT, np.count_nonzero(df >= _HOT_MIN_SHARE * n_rows)))


def _prepare_segment(
    seg: sp.csr_matrix, chunk_size: int, qy: np.ndarray, qd: np.ndarray, cy: np.ndarray, cd: np.ndarray
) -> _Segment:
    n_rows = seg.shape[0]
    df = np.bincount(seg.indices, minlength=seg.shape[1])
    hot_count = _hot_column_count(df, n_rows)
    if hot_count:
        by_use = np.argsort(-df, kind="stable")  # ties: lower column (feature id) first
        hot_cols = np.sort(by_use[:hot_count])
        cold_mask = np.ones(seg.shape[1], dtype=bool)
        cold_mask[hot_cols] = False
        hot = seg[:, hot_cols].tocsr()
        hot.sort_indices()
        cold = _drop_unshared_columns(seg[:, np.flatnonzero(cold_mask)].tocsr())
    else:
        hot, cold = None, seg
    cold.sort_indices()
    starts = list(range(0, n_rows, chunk_size))
    cold_t_blocks = [cold[s : min(s + chunk_size, n_rows)].T.tocsr() for s in starts]
    return _Segment(hot, cold, cold_t_blocks, starts, n_rows, qy, qd, cy, cd)


def _merge_top_k(top: np.ndarray, sims: np.ndarray, k: int) -> np.ndarray:
    """The k largest values per row of [top | sims] (unordered within a row).

    Once the running top k is filled, few entries of a new block beat a row's k-th best, so
    those are picked out and merged by sorting; a full partition is only used when many do."""
    m, width = sims.shape
    kth = top.min(axis=1)
    above = sims > kth[:, None]  # entries equal to the k-th best cannot change the values
    if int(np.count_nonzero(above)) > 4 * k * m:
        if width > k:
            sims = np.partition(sims, width - k, axis=1)[:, width - k :]
        merged = np.concatenate([top, sims], axis=1)
        return np.partition(merged, merged.shape[1] - k, axis=1)[:, merged.shape[1] - k :]
    rows, cols = np.nonzero(above)
    if len(rows) == 0:
        return top
    all_rows = np.concatenate([np.repeat(np.arange(m), k), rows])
    all_vals = np.concatenate([top.ravel(), sims[rows, cols]])
    order = np.lexsort((-all_vals, all_rows))
    all_rows, all_vals = all_rows[order], all_vals[order]
    rank = np.arange(len(all_rows)) - np.searchsorted(all_rows, all_rows, side="left")
    return all_vals[rank < k].reshape(m, k)


def _query_chunk(
    segment: _Segment, rows: np.ndarray, k: int, chunk_size: int, window_start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-k earlier similarities (sorted, descending, -1 padded), nearest row and similarity
    for the segment rows ``rows`` (ascending; a contiguous range when every row is scored).
    ``window_start``: per query row, the first candidate row of its window (None: no window)."""
    m = len(rows)
    top = np.full((m, k), _MISSING, dtype=np.float32)
    best = np.full(m, _MISSING, dtype=np.float32)
    best_row = np.full(m, -1, dtype=np.int64)
    contiguous = m > 0 and int(rows[-1]) - int(rows[0]) + 1 == m
    picked = slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows
    q_stop = int(rows[-1]) + 1
    qy = segment.query_year[picked]
    qd = segment.query_day[picked]
    min_qy, min_qd = qy.min(), qd.min()
    cold_queries = segment.cold[picked]
    hot_queries = segment.hot[picked].toarray() if segment.hot is not None else None
    # Candidate rows below `lowest` are outside every query's window, above `highest` inside all.
    lowest, highest = (int(window_start.min()), int(window_start.max())) if window_start is not None else (0, 0)
    for c_start, cold_t in zip(segment.starts, segment.cold_t_blocks):
        if c_start >= q_stop:
            break  # sorted segment: nothing from here on is earlier than these queries
        c_stop = min(c_start + chunk_size, segment.size)
        if c_stop <= lowest:
            continue  # before every query's window
        sims = (cold_queries @ cold_t).toarray()
        if hot_queries is not None:
            sims += hot_queries @ segment.hot[c_start:c_stop].toarray().T
        cy = segment.cand_year[c_start:c_stop]
        cd = segment.cand_day[c_start:c_stop]
        # A block wholly earlier than every query needs no mask.
        if not (cy.max() < min_qy or cd.max() < min_qd):
            earlier = (cy[None, :] < qy[:, None]) | (cd[None, :] < qd[:, None])
            np.putmask(sims, ~earlier, _MISSING)
        if c_start < highest:
            before_window = np.arange(c_start, c_stop)[None, :] < window_start[:, None]
            np.putmask(sims, before_window, _MISSING)
        arg = sims.argmax(axis=1)
        val = sims[np.arange(m), arg]
        better = val > best  # strict: an earlier block (lower rows) wins ties
        best[better] = val[better]
        best_row[better] = c_start + arg[better]
        top = _merge_top_k(top, sims, k)
    top = -np.sort(-top, axis=1)
    return top, best, best_row


def earlier_neighbours(
    matrix: sp.csr_matrix,
    segments: list[tuple[int, int]],
    query_year: np.ndarray,
    cand_year: np.ndarray,
    query_day: np.ndarray,
    cand_day: np.ndarray,
    *,
    k: int,
    chunk_size: int = 2048,
    n_threads: int | None = None,
    window: int | None = None,
    query: np.ndarray | None = None,
) -> NeighbourResult:
    """See the module docstring. ``segments`` are (start, stop) row ranges covering the rows
    to score; each must be sorted so that earlier rows come first. ``window``: compare each row
    with its ``window`` most recent earlier rows only (None: with all of them). ``query``: a
    boolean per row, the rows to score (None: all); the other rows are only candidates, and
    their results stay empty (nan / -1; ``n_earlier`` is still counted for every row)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    if window is not None and window < 1:
        raise ValueError("window must be at least 1")
    n = matrix.shape[0]
    result = NeighbourResult(np.full(n, np.nan, dtype=np.float64), np.zeros(n, dtype=np.int64),
                             np.full(n, -1, dtype=np.int64), np.full(n, np.nan, dtype=np.float64))
    threads = n_threads or min(2, os.cpu_count() or 1)
    matrix = matrix.tocsr().astype(np.float32, copy=False)

    # Segments are prepared in this thread while the pool works on earlier ones; at most
    # _PENDING_ROWS rows of prepared segments wait, so memory stays bounded and many small
    # categories still keep every thread busy.
    pending: deque[tuple[int, int, np.ndarray, list]] = deque()
    pending_rows = 0
    # Each pool thread runs its own BLAS products: a multi-threaded BLAS inside each would put
    # threads x cores threads on the cores (measured at 10k: 7.1 s against 5.8 s single-threaded).
    blas_threads = max(1, (os.cpu_count() or 1) // threads)
    with threadpool_limits(limits=blas_threads, user_api="blas"), ThreadPoolExecutor(max_workers=threads) as pool:
        for seg_start, seg_stop in segments:
            size = seg_stop - seg_start
            if size == 0:
                continue
            years_days = (query_year[seg_start:seg_stop], cand_year[seg_start:seg_stop],
                          query_day[seg_start:seg_stop], cand_day[seg_start:seg_stop])
            counts, futures = _submit_segment(pool, matrix, (seg_start, seg_stop), years_days, k=k, chunk_size=chunk_size,
                                              window=window, query=None if query is None else query[seg_start:seg_stop])
            result.n_earlier[seg_start:seg_stop] = counts
            if not futures:
                continue
            pending.append((seg_start, size, counts, futures))
            pending_rows += size
            while pending and pending_rows > max(_PENDING_ROWS, 2 * threads * chunk_size):
                done_start, done_size, done_counts, done_futures = pending.popleft()
                _collect(result, k, done_start, done_counts, done_futures)
                pending_rows -= done_size
        while pending:
            done_start, _, done_counts, done_futures = pending.popleft()
            _collect(result, k, done_start, done_counts, done_futures)
    return result


def _submit_segment(pool: ThreadPoolExecutor, matrix: sp.csr_matrix, bounds: tuple[int, int],
                    years_days: tuple[np.ndarray, ...], *, k: int, chunk_size: int, window: int | None,
                    query: np.ndarray | None) -> tuple[np.ndarray, list]:
    """One segment's (``bounds``: its rows of ``matrix``) earlier counts (all earlier rows, or the
    window's), and its query chunks handed to ``pool`` as ``(rows, future)`` (none when no row of
    it is to be scored and has an earlier row to compare with)."""
    qy, cy, qd, cd = years_days
    seg_start, seg_stop = bounds
    size = seg_stop - seg_start
    earlier_counts = count_earlier(qy, cy, qd, cd)
    # Row i's earlier rows are [0, earlier_counts[i]); its window the last `window` of them.
    window_start = None if window is None or window >= size else np.maximum(earlier_counts - window, 0)
    counts = earlier_counts if window_start is None else earlier_counts - window_start
    wanted = counts > 0
    if query is not None:
        wanted &= query
    if not wanted.any():
        return counts, []
    segment = _prepare_segment(_drop_unshared_columns(matrix[seg_start:seg_stop]), chunk_size, qy, qd, cy, cd)
    if query is None:  # every row: chunks of consecutive rows, as always
        groups = [
            np.arange(q_start, min(q_start + chunk_size, size))
            for q_start in range(0, size, chunk_size)
            if wanted[q_start : q_start + chunk_size].any()
        ]
    else:  # only the rows asked for, chunk_size of them at a time
        picked = np.flatnonzero(wanted)
        groups = [picked[i : i + chunk_size] for i in range(0, len(picked), chunk_size)]
    # the futures hold the segment until they finish
    return counts, [
        (group, pool.submit(_query_chunk, segment, group, k, chunk_size,
                            None if window_start is None else window_start[group]))
        for group in groups
    ]


def _collect(result: NeighbourResult, k: int, seg_start: int, counts: np.ndarray, futures: list) -> None:
    """Write a segment's finished chunks into ``result``."""
    for q_rows, future in futures:
        top, best, best_row = future.result()
        rows = seg_start + q_rows
        valid = top >= 0
        n_valid = valid.sum(axis=1)
        if not np.array_equal(n_valid, np.minimum(counts[q_rows], k)):
            raise AssertionError("earlier-neighbour mask disagrees with the earlier count")
        sums = np.where(valid, top.astype(np.float64), 0.0).sum(axis=1)
        result.mean_top_k[rows] = np.where(n_valid > 0, sums / np.maximum(n_valid, 1), np.nan)
        has = best >= 0
        result.nearest_row[rows] = np.where(has, seg_start + best_row, -1)
        result.nearest_similarity[rows] = np.where(has, best.astype(np.float64), np.nan)

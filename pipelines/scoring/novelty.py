"""Our own paper novelty score: how unlike the earlier papers of its field a paper is.

Plain-words definition (the full one is docs/scoring.md):

* **Similarity component.** Each paper's title + abstract becomes a TF-IDF vector (terms are
  stemmed, stopworded words and adjacent word pairs; IDF fitted on all papers being scored). The
  paper is compared with every *strictly earlier* paper of its own category; ``novelty_raw`` is
  1 - (mean cosine similarity to its k most similar earlier papers). A paper that repeats an earlier
  one scores ~0; a paper is never compared with later papers, so copying it later does not
  lower its score.
* **New-vocabulary components.** ``new_terms_share``: the share of the paper's distinct terms that
  no earlier paper in the whole warehouse used; ``new_term_pairs_share``: the same for term pairs
  (words adjacent in a sentence, and any two words of the title).
* **Percentiles.** Each component is turned into a percentile rank among papers of the same
  category and year (``novelty_percentile`` is the similarity one), so scores are comparable
  across fields with different writing habits.
* ``novelty_score`` = 0.6 x similarity percentile + 0.2 x new-terms percentile
  + 0.2 x new-pairs percentile (0..100).

"Earlier": a strictly earlier ``pub_date`` when both papers have one, otherwise a strictly earlier
year (``year``, or the date's year); equal dates or years are not earlier. A paper with neither is
placed after every dated paper (compared with all of them, never anyone's predecessor). A paper
with no earlier paper in its category is a *cold start*: ``novelty_raw`` = 1.0,
``neighbours_compared`` = 0, ``cold_start`` = True; it still gets percentiles and a score.

The score is relative to the corpus being scored (the warehouse): adding papers changes IDF
weights and may add earlier neighbours. It is reproducible: the same input (in any row order)
gives identical output; the input is put in a canonical order first and every tie is broken by
``paper_id``.

Pure logic: Polars in, Polars out, no Dagster. Heavy lifting is vectorised (Polars, numpy,
scipy.sparse); see ``pipelines.scoring.terms`` and ``pipelines.scoring.neighbours``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import scipy.sparse as sp

from pipelines.scoring.neighbours import earlier_neighbours
from pipelines.scoring.terms import TokenStream, tokenize

METHOD_VERSION = "tfidf-knn-v1"

# Weights of the three percentile components in novelty_score (they sum to 1).
WEIGHT_SIMILARITY = 0.6
WEIGHT_NEW_TERMS = 0.2
WEIGHT_NEW_PAIRS = 0.2
# At most this many distinct title terms (in title order) form title pairs: bounds the
# quadratic pair count for freakishly long titles (20 terms -> 190 pairs).
MAX_TITLE_PAIR_TERMS = 20
MAX_NEW_TERM_EXAMPLES = 10

# Sentinels for the time keys (see neighbours.py): a missing year sorts after every real year
# for both roles; a missing date never makes anything earlier.
_NO_YEAR = np.int64(1_000_000_000)
_NO_DAY_QUERY = np.iinfo(np.int64).min
_NO_DAY_CAND = np.iinfo(np.int64).max

INPUT_COLUMNS = ("paper_id", "title", "abstract", "category", "year", "pub_date")


def output_schema(paper_id_dtype: pl.DataType = pl.String) -> dict[str, pl.DataType]:
    return {
        "paper_id": paper_id_dtype,
        "category": pl.String,
        "year": pl.Int64,
        "novelty_raw": pl.Float64,
        "neighbours_compared": pl.Int64,
        "nearest_paper_id": paper_id_dtype,
        "nearest_similarity": pl.Float64,
        "novelty_percentile": pl.Float64,
        "new_terms_share": pl.Float64,
        "new_term_pairs_share": pl.Float64,
        "new_terms": pl.List(pl.String),
        "novelty_score": pl.Float64,
        "cold_start": pl.Boolean,
        "method_version": pl.String,
    }


@dataclass(frozen=True)
class _TimeKeys:
    query_year: np.ndarray
    cand_year: np.ndarray
    query_day: np.ndarray
    cand_day: np.ndarray


def _canonical(papers: pl.DataFrame) -> pl.DataFrame:
    """Validated input in canonical order: category, then time (year; dated before undated
    within a year; date), then paper_id. Everything earlier than a paper precedes it."""
    missing = [c for c in INPUT_COLUMNS if c not in papers.columns]
    if missing:
        raise ValueError(f"papers is missing columns: {missing}")
    frame = papers.select(
        pl.col("paper_id"),
        pl.col("title").cast(pl.String),
        pl.col("abstract").cast(pl.String),
        pl.col("category").cast(pl.String),
        pl.col("year").cast(pl.Int64),
        pl.col("pub_date").cast(pl.Date),
    )
    if frame.get_column("paper_id").null_count():
        raise ValueError("paper_id must not be null")
    if frame.get_column("paper_id").n_unique() != frame.height:
        raise ValueError("paper_id must be unique")
    # A date is the more precise fact: when both exist, its year is the paper's year.
    frame = frame.with_columns(
        year=pl.coalesce(pl.col("pub_date").dt.year().cast(pl.Int64), pl.col("year")),
        day=pl.col("pub_date").cast(pl.Int64),
    )
    return frame.sort(
        ["category", "year", pl.col("day").is_null(), "day", "paper_id"],
        nulls_last=True,
        maintain_order=True,
    )


def _time_keys(frame: pl.DataFrame) -> _TimeKeys:
    year, day = frame.get_column("year"), frame.get_column("day")
    year_known = year.is_not_null().to_numpy()
    day_known = day.is_not_null().to_numpy()
    year_arr = np.where(year_known, year.fill_null(0).to_numpy().astype(np.int64), _NO_YEAR)
    day_arr = day.fill_null(0).to_numpy().astype(np.int64)
    return _TimeKeys(
        query_year=year_arr,
        cand_year=year_arr,
        query_day=np.where(day_known, day_arr, _NO_DAY_QUERY),
        cand_day=np.where(day_known, day_arr, _NO_DAY_CAND),
    )


def _segments(categories: pl.Series) -> list[tuple[int, int]]:
    """Contiguous row ranges of equal category (null is a category of its own) in sorted data."""
    n = len(categories)
    if n == 0:
        return []
    frame = pl.DataFrame({"c": categories}).with_row_index("row")
    bounds = frame.group_by("c", maintain_order=True).agg(pl.col("row").min().alias("start"), pl.len())
    return [(int(s), int(s) + int(c)) for s, c in zip(bounds.get_column("start"), bounds.get_column("len"))]


def _adjacent(doc: np.ndarray, term: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc, first, second) of consecutive real terms of one paper (no sentence break between)."""
    if len(term) < 2:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    ok = (doc[:-1] == doc[1:]) & (term[:-1] >= 0) & (term[1:] >= 0)
    return doc[:-1][ok], term[:-1][ok], term[1:][ok]


def _dense_ids(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Compact ids 0..m-1 numbering the distinct codes in increasing order (a multithreaded
    Polars dense rank; same result as np.unique's inverse, faster)."""
    if len(codes) == 0:
        return np.empty(0, dtype=np.int64), 0
    ids = pl.Series(codes).rank("dense").to_numpy().astype(np.int64) - 1
    return ids, int(ids.max()) + 1


def _incidence(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], binary: bool) -> sp.csr_matrix:
    """Counts (or presence) of (row, col) pairs as a CSR matrix with sorted indices."""
    data = np.ones(len(rows), dtype=np.float32)  # counts stay exact in float32
    matrix = sp.csr_matrix((data, (rows, cols)), shape=shape)
    matrix.sum_duplicates()  # also sorts indices
    if binary:
        matrix.data[:] = 1.0
    return matrix


def _tfidf(tokens: TokenStream, n_docs: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """L2-normalised TF-IDF matrix (float32) over unigrams + adjacent bigrams, and its unigram
    block (the first ``n_terms`` columns, same weights) for ranking example terms.

    tf weight 1 + ln(tf); idf ln((1 + N) / (1 + df)) + 1 (smooth, never zero); bigram columns
    follow the unigram ones, numbered by (first term id, second term id)."""
    v = tokens.n_terms
    t_doc, t_first, t_second = _adjacent(tokens.title_doc, tokens.title_term)
    a_doc, a_first, a_second = _adjacent(tokens.abstract_doc, tokens.abstract_term)
    bigram_id, n_bigrams = _dense_ids(np.concatenate([t_first, a_first]) * v + np.concatenate([t_second, a_second]))
    title_real = tokens.title_term >= 0
    abstract_real = tokens.abstract_term >= 0
    counts = _incidence(
        np.concatenate([tokens.title_doc[title_real], tokens.abstract_doc[abstract_real], t_doc, a_doc]),
        np.concatenate([tokens.title_term[title_real], tokens.abstract_term[abstract_real], v + bigram_id]),
        (n_docs, v + n_bigrams),
        binary=False,
    )
    del bigram_id, t_doc, a_doc
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
    data = (1.0 + np.log(counts.data.astype(np.float64))) * idf[counts.indices]
    row_of_entry = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
    norms = np.sqrt(np.bincount(row_of_entry, weights=data * data, minlength=n_docs))
    data /= np.where(norms > 0, norms, 1.0)[row_of_entry]
    weights = sp.csr_matrix((data.astype(np.float32), counts.indices, counts.indptr), shape=counts.shape)
    del counts, data
    is_unigram = weights.indices < v
    unigram_indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of_entry[is_unigram], minlength=n_docs), out=unigram_indptr[1:])
    unigram_weights = sp.csr_matrix(
        (weights.data[is_unigram], weights.indices[is_unigram], unigram_indptr), shape=(n_docs, v)
    )
    return weights, unigram_weights


def _title_pairs(doc: np.ndarray, term: np.ndarray, v: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc, unordered pair code) for every pair of distinct title terms of a paper, using the
    first MAX_TITLE_PAIR_TERMS distinct terms in title order."""
    real = term >= 0
    doc, term = doc[real], term[real]
    if len(term) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    # first occurrence of each (doc, term), in title order
    first = pl.Series(doc * v + term).is_first_distinct().to_numpy()
    doc, term = doc[first], term[first]
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    sizes = np.diff(np.r_[starts, len(doc)])
    rank = np.arange(len(doc)) - np.repeat(starts, sizes)
    keep = rank < MAX_TITLE_PAIR_TERMS
    doc, term, rank = doc[keep], term[keep], rank[keep]
    sizes = np.minimum(sizes, MAX_TITLE_PAIR_TERMS)
    # element at rank r of a group of size m pairs with the m - r - 1 elements after it
    partners = np.repeat(sizes, sizes) - rank - 1
    left = np.repeat(np.arange(len(doc)), partners)
    block_start = np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + (np.arange(len(left)) - block_start)
    a, b = term[left], term[right]
    return doc[left], np.minimum(a, b) * v + np.maximum(a, b)


def _first_use_flags(incidence: sp.csr_matrix, keys: _TimeKeys) -> np.ndarray:
    """For every stored entry (paper i uses item t) of a binary CSR matrix: True when no paper
    earlier than i uses t. Uses the earliest year and day at which each item appears."""
    n_items = incidence.shape[1]
    if incidence.nnz == 0:
        return np.zeros(0, dtype=bool)
    by_item = incidence.tocsc()
    by_item.sort_indices()
    starts = by_item.indptr[:-1]
    nonempty = np.diff(by_item.indptr) > 0
    first_year = np.full(n_items, _NO_YEAR, dtype=np.int64)
    first_day = np.full(n_items, _NO_DAY_CAND, dtype=np.int64)
    first_year[nonempty] = np.minimum.reduceat(keys.cand_year[by_item.indices], starts[nonempty])
    first_day[nonempty] = np.minimum.reduceat(keys.cand_day[by_item.indices], starts[nonempty])
    row_of_entry = np.repeat(np.arange(incidence.shape[0]), np.diff(incidence.indptr))
    cols = incidence.indices
    used_before = (first_year[cols] < keys.query_year[row_of_entry]) | (first_day[cols] < keys.query_day[row_of_entry])
    return ~used_before


def _share_per_row(incidence: sp.csr_matrix, flags: np.ndarray) -> np.ndarray:
    n = incidence.shape[0]
    sizes = np.diff(incidence.indptr)
    row_of_entry = np.repeat(np.arange(n), sizes)
    hits = np.bincount(row_of_entry, weights=flags.astype(np.float64), minlength=n)
    return np.where(sizes > 0, hits / np.maximum(sizes, 1), 0.0)


def _percentile(column: str) -> pl.Expr:
    """Percentile rank within (category, year): 100 * (below + ties / 2) / group size."""
    group = ["category", "year"]
    return (pl.col(column).rank("average").over(group) - 0.5) / pl.len().over(group) * 100.0


def score_paper_novelty(
    papers: pl.DataFrame,
    *,
    k: int = 5,
    chunk_size: int = 2048,
    n_threads: int | None = None,
    text_batch_size: int = 100_000,
) -> pl.DataFrame:
    """Score every paper's novelty (see the module docstring and docs/scoring.md).

    ``papers`` needs paper_id (unique), title, abstract, category, year, pub_date (all but
    paper_id nullable). ``chunk_size`` bounds the similarity blocks (memory ~ chunk_size^2 * 12
    bytes per thread); ``n_threads`` defaults to min(2, CPUs); neither changes the result.
    Returns one row per paper, sorted by paper_id.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    frame = _canonical(papers)
    id_dtype = frame.schema["paper_id"]
    n = frame.height
    if n == 0:
        return pl.DataFrame(schema=output_schema(id_dtype))

    tokens = tokenize(frame.get_column("title"), frame.get_column("abstract"), batch_size=text_batch_size)
    v = tokens.n_terms
    weights, unigram_weights = _tfidf(tokens, n)
    keys = _time_keys(frame)

    result = earlier_neighbours(
        weights,
        _segments(frame.get_column("category")),
        keys.query_year,
        keys.cand_year,
        keys.query_day,
        keys.cand_day,
        k=k,
        chunk_size=chunk_size,
        n_threads=n_threads,
    )
    del weights

    # New terms: flags on the unigram entries, examples ranked by the term's weight in the paper.
    term_new = _first_use_flags(unigram_weights, keys)
    new_terms_share = _share_per_row(unigram_weights, term_new)
    entry_row = np.repeat(np.arange(n), np.diff(unigram_weights.indptr))
    new_rows = entry_row[term_new]
    new_cols = unigram_weights.indices[term_new]
    new_weight = unigram_weights.data[term_new]
    order = np.lexsort((new_cols, -new_weight, new_rows))
    new_rows, new_cols = new_rows[order], new_cols[order]
    group_start = np.searchsorted(new_rows, new_rows, side="left")
    pick = (np.arange(len(new_rows)) - group_start) < MAX_NEW_TERM_EXAMPLES
    surface = np.array(tokens.surface, dtype=object)
    examples = (
        pl.DataFrame(
            {"row": pl.Series(new_rows[pick], dtype=pl.UInt32), "term": pl.Series(surface[new_cols[pick]].tolist(), dtype=pl.String)}
        )
        .group_by("row", maintain_order=True)
        .agg(pl.col("term").alias("new_terms"))
    )
    del unigram_weights

    # New term pairs: adjacent pairs (unordered) in title and abstract, plus title term pairs.
    pair_docs, pair_codes = [], []
    for doc, term in ((tokens.title_doc, tokens.title_term), (tokens.abstract_doc, tokens.abstract_term)):
        d, a, b = _adjacent(doc, term)
        distinct = a != b
        pair_docs.append(d[distinct])
        pair_codes.append(np.minimum(a, b)[distinct] * v + np.maximum(a, b)[distinct])
    d, c = _title_pairs(tokens.title_doc, tokens.title_term, v)
    pair_docs.append(d)
    pair_codes.append(c)
    pair_id, n_pairs = _dense_ids(np.concatenate(pair_codes))
    del pair_codes
    pairs = _incidence(np.concatenate(pair_docs), pair_id, (n, n_pairs), binary=True)
    new_term_pairs_share = _share_per_row(pairs, _first_use_flags(pairs, keys))
    del pairs, pair_id

    cold = result.n_earlier == 0
    novelty_raw = np.where(cold, 1.0, np.clip(1.0 - result.mean_top_k, 0.0, 1.0))
    has_nearest = result.nearest_row >= 0
    nearest_ids = frame.get_column("paper_id").gather(np.where(has_nearest, result.nearest_row, 0))
    nearest_ids = pl.select(
        pl.when(pl.Series(has_nearest & (result.nearest_similarity > 0))).then(nearest_ids)
    ).to_series()

    scored = (
        frame.select("paper_id", "category", "year")
        .with_row_index("row")
        .with_columns(
            novelty_raw=pl.Series(np.round(novelty_raw, 6)),
            neighbours_compared=pl.Series(result.n_earlier, dtype=pl.Int64),
            nearest_paper_id=nearest_ids,
            nearest_similarity=pl.Series(np.round(np.clip(result.nearest_similarity, 0.0, 1.0), 6), nan_to_null=True),
            new_terms_share=pl.Series(np.round(new_terms_share, 6)),
            new_term_pairs_share=pl.Series(np.round(new_term_pairs_share, 6)),
            cold_start=pl.Series(cold),
        )
        .join(examples, on="row", how="left")
        .with_columns(
            new_terms=pl.col("new_terms").fill_null(pl.lit([], dtype=pl.List(pl.String))),
            novelty_percentile=_percentile("novelty_raw"),
            _terms_pct=_percentile("new_terms_share"),
            _pairs_pct=_percentile("new_term_pairs_share"),
        )
        .with_columns(
            novelty_score=(
                WEIGHT_SIMILARITY * pl.col("novelty_percentile")
                + WEIGHT_NEW_TERMS * pl.col("_terms_pct")
                + WEIGHT_NEW_PAIRS * pl.col("_pairs_pct")
            ).round(2),
            novelty_percentile=pl.col("novelty_percentile").round(4),
            method_version=pl.lit(METHOD_VERSION),
        )
    )
    return scored.select(
        [pl.col(name).cast(dtype) for name, dtype in output_schema(id_dtype).items()]
    ).sort("paper_id")


def author_novelty(paper_scores: pl.DataFrame, authorships: pl.DataFrame) -> pl.DataFrame:
    """Per author: mean novelty_percentile of their scored papers.

    ``authorships`` (paper_id, author_id) may repeat a pair (several evidences); each paper counts
    once per author. Authors whose papers were not scored are kept with ``computed_novelty`` null
    and ``papers_scored`` 0, so nobody disappears silently. Sorted by author_id.
    """
    for name, frame, columns in (
        ("paper_scores", paper_scores, ("paper_id", "novelty_percentile")),
        ("authorships", authorships, ("paper_id", "author_id")),
    ):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} is missing columns: {missing}")
    links = authorships.select("paper_id", "author_id").filter(pl.col("author_id").is_not_null()).unique()
    scores = paper_scores.select("paper_id", "novelty_percentile").unique(subset="paper_id", keep="first")
    if links.schema["paper_id"] != scores.schema["paper_id"]:
        scores = scores.with_columns(pl.col("paper_id").cast(links.schema["paper_id"]))
    return (
        links.join(scores, on="paper_id", how="left")
        .sort(["author_id", "paper_id"])  # fixed summation order inside each author
        .group_by("author_id", maintain_order=True)
        .agg(
            computed_novelty=pl.col("novelty_percentile").mean().round(4),
            papers_scored=pl.col("novelty_percentile").count().cast(pl.Int64),
        )
        .with_columns(method_version=pl.lit(METHOD_VERSION))
        .sort("author_id")
    )

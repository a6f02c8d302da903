"""Our own paper novelty score: how unlike the earlier papers of its field a paper is.

Plain-words definition (the full one is docs/scoring.md):

* **Similarity component.** Each paper's title + abstract becomes a TF-IDF vector (terms are
  stemmed, stopworded words and adjacent word pairs; IDF fitted on all papers being scored). The
  paper is compared with the *strictly earlier* papers of its own category — all of them, or in
  a category larger than ``window`` (default 20,000; ``SCHOLARHOUSE_NOVELTY_WINDOW``) its
  ``window`` most recent ones, so the cost per paper stays bounded; ``novelty_raw`` is
  1 - (mean cosine similarity to its k most similar of those). A copy of an earlier paper
  has ``nearest_similarity`` ~1 and a low ``novelty_raw`` (0 when the original is its only
  earlier neighbour); a paper is never compared with later papers, so copying it later does not
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

The score is relative to a corpus: ``score_paper_novelty`` fits the IDF on the papers it is given;
the warehouse scores each paper once, when it arrives, with the IDF of a versioned epoch
(``pipelines.marts.scoring.epoch``; ``score_components`` scores some rows of a corpus, the others being
prior work only). It is reproducible: the same input (in any row order) gives identical output;
the input is put in a canonical order first and every tie is broken by ``paper_id``.

Pure logic: Polars in, Polars out, no Dagster. Heavy lifting is vectorised (Polars, numpy,
scipy.sparse) and runs on ``n_threads`` threads: ``terms`` (text -> term ids), ``features``
(TF-IDF, first-use flags) and ``neighbours`` (chunked exact nearest-earlier search).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.marts.scoring.features import (
    IdfTable,
    TfidfMatrices,
    TimeKeys,
    first_use_flags,
    first_use_flags_for,
    new_pair_shares,
    new_pair_shares_for,
    share_per_row,
    take_tokens,
    tfidf_matrices,
)
from pipelines.marts.scoring.neighbours import earlier_neighbours
from pipelines.marts.scoring.terms import TokenStream, tokenize

METHOD_VERSION = "tfidf-knn-v3"  # v3: epochs (IDF fitted once per epoch; a paper scored once, when it arrives)

# How many of a paper's most recent earlier papers (same category) it is compared with. Exact
# search costs (papers in a category)^2 / 2 — at 100k profiles cs.LG alone holds 140k papers,
# ~10^10 pairs; the window bounds it to papers x window. Categories up to this size are exact.
NOVELTY_WINDOW = 20_000


def default_window() -> int | None:
    """:data:`NOVELTY_WINDOW` (the run's window is the setting ``SCHOLARHOUSE_NOVELTY_WINDOW``,
    which the marts pass as ``window``)."""
    return NOVELTY_WINDOW

# Weights of the three percentile components in novelty_score (they sum to 1).
WEIGHT_SIMILARITY = 0.6
WEIGHT_NEW_TERMS = 0.2
WEIGHT_NEW_PAIRS = 0.2
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


def _time_keys(frame: pl.DataFrame) -> TimeKeys:
    year, day = frame.get_column("year"), frame.get_column("day")
    year_known = year.is_not_null().to_numpy()
    day_known = day.is_not_null().to_numpy()
    year_arr = np.where(year_known, year.fill_null(0).to_numpy().astype(np.int64), _NO_YEAR)
    day_arr = day.fill_null(0).to_numpy().astype(np.int64)
    return TimeKeys(
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


def _new_term_examples(unigram, is_new: np.ndarray, surface: list[str], order_of: np.ndarray) -> pl.DataFrame:
    """(row, new_terms): up to MAX_NEW_TERM_EXAMPLES new terms per paper, highest weight first,
    then by the stems' alphabetical order (``order_of[term id]``), shown as surface words."""
    rows = np.repeat(np.arange(unigram.shape[0]), np.diff(unigram.indptr))[is_new]
    cols = unigram.indices[is_new]
    weight = unigram.data[is_new]
    order = np.lexsort((order_of[cols] if len(cols) else cols, -weight, rows))
    rows, cols = rows[order], cols[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    pick = rank < MAX_NEW_TERM_EXAMPLES
    words = np.array(surface, dtype=object)[cols[pick]] if len(surface) else np.empty(0, dtype=object)
    return (
        pl.DataFrame(
            {
                "row": pl.Series(rows[pick], dtype=pl.UInt32),
                "term": pl.Series(words.tolist(), dtype=pl.String),
            }
        )
        .group_by("row", maintain_order=True)
        .agg(pl.col("term").alias("new_terms"))
    )


def _percentile(column: str) -> pl.Expr:
    """Percentile rank within (category, year): 100 * (below + ties / 2) / group size."""
    group = ["category", "year"]
    return (pl.col(column).rank("average").over(group) - 0.5) / pl.len().over(group) * 100.0


COMPONENT_COLUMNS = ("novelty_raw", "new_terms_share", "new_term_pairs_share")


def with_percentiles(components: pl.DataFrame) -> pl.DataFrame:
    """Percentiles within (category, year) and the combined score, over the rows given."""
    return components.with_columns(
        novelty_percentile=_percentile("novelty_raw"),
        _terms_pct=_percentile("new_terms_share"),
        _pairs_pct=_percentile("new_term_pairs_share"),
    ).with_columns(
        novelty_score=(
            WEIGHT_SIMILARITY * pl.col("novelty_percentile")
            + WEIGHT_NEW_TERMS * pl.col("_terms_pct")
            + WEIGHT_NEW_PAIRS * pl.col("_pairs_pct")
        ).round(2),
        novelty_percentile=pl.col("novelty_percentile").round(4),
    ).drop("_terms_pct", "_pairs_pct")


def _finish(scored: pl.DataFrame, id_dtype: pl.DataType) -> pl.DataFrame:
    scored = scored.with_columns(method_version=pl.lit(METHOD_VERSION))
    return scored.select([pl.col(name).cast(dtype) for name, dtype in output_schema(id_dtype).items()]).sort(
        "paper_id"
    )


@dataclass(frozen=True)
class Components:
    """``score_components``' answer: ``frame`` (one row per scored paper, in the canonical order)
    and the IDF it weighed with (fitted on the papers, when none was given)."""

    frame: pl.DataFrame
    idf: IdfTable


def score_components(
    frame: pl.DataFrame,
    tokens: TokenStream,
    *,
    idf: IdfTable | None = None,
    query: np.ndarray | None = None,
    k: int = 5,
    chunk_size: int = 2048,
    n_threads: int | None = None,
    text_batch_size: int = 25_000,
    window: int | None | str = "default",
) -> Components:
    """Every component but the percentiles, for the rows of a canonical ``frame`` (``_canonical``)
    whose ``tokens`` are given in the same order: all of them, or the rows where ``query`` is
    True (then every other row is only prior work: a candidate neighbour and an earlier user of
    terms). ``idf``: an epoch's document frequencies (None: these papers' own, fitted here and
    returned with the components; needed with ``query``). A row's result is the same whichever
    other rows are queries."""
    threads = n_threads or min(2, os.cpu_count() or 1)
    window = default_window() if window == "default" else window
    keys = _time_keys(frame)
    rows, similarity, idf, vocabulary = _vectorise(frame, tokens, keys, idf=idf, query=query, threads=threads,
                                                   text_batch_size=text_batch_size)
    sub_keys = keys if rows.sub_rows is None else TimeKeys(*(a[rows.sub_rows] for a in (
        keys.query_year, keys.cand_year, keys.query_day, keys.cand_day)))
    result = earlier_neighbours(
        similarity,
        rows.sub_segments,
        sub_keys.query_year,
        sub_keys.cand_year,
        sub_keys.query_day,
        sub_keys.cand_day,
        k=k,
        chunk_size=chunk_size,
        n_threads=threads,
        window=window,
        query=rows.sub_query,
    )
    del similarity
    return Components(idf=idf, frame=_components_frame(frame, rows, result, vocabulary))


@dataclass(frozen=True)
class _Rows:
    """Which rows ``score_components`` scores and vectorises: ``query_rows`` (rows of the frame) are
    scored; ``sub_rows`` (None: every row) are vectorised, in ``sub_segments``, with ``sub_query``
    marking the scored ones among them."""

    query_rows: np.ndarray
    sub_rows: np.ndarray | None
    sub_segments: list[tuple[int, int]]
    sub_query: np.ndarray | None


def _vectorise(frame: pl.DataFrame, tokens: TokenStream, keys: TimeKeys, *, idf: IdfTable | None,
               query: np.ndarray | None, threads: int, text_batch_size: int):
    """The rows' TF-IDF similarity vectors and the vocabulary components (new terms and term pairs,
    the new-term examples), computed first so the unigram matrix is freed before the similarity
    search. Returns ``(_Rows, similarity matrix, idf, vocabulary components)``."""
    n = frame.height
    order_of = np.empty(tokens.n_terms, dtype=np.int64)
    order_of[np.argsort(np.array(tokens.vocabulary, dtype=object), kind="stable")] = np.arange(tokens.n_terms)
    segments = _segments(frame.get_column("category"))
    if query is None:
        rows = _Rows(np.arange(n), None, segments, None)
        matrices = tfidf_matrices(tokens, batch_docs=text_batch_size, n_threads=threads, idf=idf)
        # Vocabulary components first, so the unigram matrix is freed before the similarity search.
        unigram = matrices.unigram
        term_new = first_use_flags(unigram, keys)
        new_pair_share = new_pair_shares(tokens, keys, batch_docs=text_batch_size, n_threads=threads)
    else:
        if idf is None:
            raise ValueError("scoring some rows needs the epoch's idf")
        query_rows = np.flatnonzero(query)
        # Every row's vector depends only on its own text and the epoch's IDF: the similarity needs
        # the query rows' categories only (the candidates); the first uses need every paper's terms.
        touched = [(a, b) for a, b in segments if query[a:b].any()]
        sub_rows = np.concatenate([np.arange(a, b) for a, b in touched]) if touched else np.zeros(0, dtype=np.int64)
        sub_segments, at = [], 0
        for a, b in touched:
            sub_segments.append((at, at + b - a))
            at += b - a
        rows = _Rows(query_rows, sub_rows, sub_segments, query[sub_rows])
        matrices = tfidf_matrices(take_tokens(tokens, sub_rows), batch_docs=text_batch_size, n_threads=threads, idf=idf)
        matrices = TfidfMatrices(similarity=matrices.similarity,
                                 unigram=matrices.unigram[np.flatnonzero(rows.sub_query)], idf=idf)
        unigram = matrices.unigram
        term_new = first_use_flags_for(unigram, query_rows, tokens, keys)
        new_pair_share = new_pair_shares_for(tokens, keys, query_rows, batch_docs=text_batch_size)
    vocabulary = {"new_terms_share": share_per_row(unigram, term_new), "new_term_pairs_share": new_pair_share,
                  "examples": _new_term_examples(unigram, term_new, tokens.surface, order_of)}
    return rows, matrices.similarity, matrices.idf, vocabulary


def _components_frame(frame: pl.DataFrame, rows: _Rows, result, vocabulary: dict) -> pl.DataFrame:
    """One row per scored paper: the components from the nearest earlier neighbours (``result``) and
    the vocabulary."""
    picked = np.arange(frame.height) if rows.sub_rows is None else np.flatnonzero(rows.sub_query)
    n_earlier = result.n_earlier[picked]
    mean_top_k = result.mean_top_k[picked]
    nearest_sim = result.nearest_similarity[picked]
    nearest_row = result.nearest_row[picked]
    if rows.sub_rows is not None:
        nearest_row = np.where(nearest_row >= 0, rows.sub_rows[np.maximum(nearest_row, 0)], -1)

    cold = n_earlier == 0
    novelty_raw = np.where(cold, 1.0, np.clip(1.0 - mean_top_k, 0.0, 1.0))
    has_nearest = nearest_row >= 0
    nearest_ids = frame.get_column("paper_id").gather(np.where(has_nearest, nearest_row, 0))
    nearest_ids = pl.select(
        pl.when(pl.Series(has_nearest & (nearest_sim > 0))).then(nearest_ids)
    ).to_series()
    return (
        frame.select("paper_id", "category", "year")[rows.query_rows]
        .with_row_index("row")
        .with_columns(
            novelty_raw=pl.Series(np.round(novelty_raw, 6)),
            neighbours_compared=pl.Series(n_earlier, dtype=pl.Int64),
            nearest_paper_id=nearest_ids,
            nearest_similarity=pl.Series(np.round(np.clip(nearest_sim, 0.0, 1.0), 6), nan_to_null=True),
            new_terms_share=pl.Series(np.round(vocabulary["new_terms_share"], 6)),
            new_term_pairs_share=pl.Series(np.round(vocabulary["new_term_pairs_share"], 6)),
            cold_start=pl.Series(cold),
        )
        .join(vocabulary["examples"], on="row", how="left")
        .with_columns(new_terms=pl.col("new_terms").fill_null(pl.lit([], dtype=pl.List(pl.String))))
        .drop("row")
    )


def canonical_frame(papers: pl.DataFrame) -> pl.DataFrame:
    """The validated input in canonical order (category, time, paper_id), with ``day``."""
    return _canonical(papers)


def tokenize_frame(frame: pl.DataFrame, *, n_threads: int | None = None, text_batch_size: int = 25_000) -> TokenStream:
    threads = n_threads or min(2, os.cpu_count() or 1)
    return tokenize(
        frame.get_column("title"), frame.get_column("abstract"), batch_size=text_batch_size, n_threads=threads
    )


def score_paper_novelty(
    papers: pl.DataFrame,
    *,
    k: int = 5,
    chunk_size: int = 2048,
    n_threads: int | None = None,
    text_batch_size: int = 25_000,
    window: int | None | str = "default",
) -> pl.DataFrame:
    """Score every paper's novelty (see the module docstring and docs/scoring.md), with the IDF
    fitted on ``papers`` themselves (a fresh epoch: ``pipelines.marts.scoring.epoch`` keeps one).

    ``papers`` needs paper_id (unique), title, abstract, category, year, pub_date (all but
    paper_id nullable). ``chunk_size`` bounds the similarity blocks (memory ~ chunk_size^2 * 12
    bytes per thread); ``n_threads`` defaults to min(2, CPUs); neither changes the result.
    ``window``: how many most recent earlier papers each paper is compared with (None: all;
    by default :func:`default_window`). Returns one row per paper, sorted by paper_id.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    frame = _canonical(papers)
    id_dtype = frame.schema["paper_id"]
    if frame.height == 0:
        return pl.DataFrame(schema=output_schema(id_dtype))
    tokens = tokenize_frame(frame, n_threads=n_threads, text_batch_size=text_batch_size)
    components = score_components(frame, tokens, k=k, chunk_size=chunk_size, n_threads=n_threads,
                                  text_batch_size=text_batch_size, window=window).frame
    return _finish(with_percentiles(components), id_dtype)


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

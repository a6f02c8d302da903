"""Novelty epochs: fit the vocabulary and IDF once, then score each paper once, when it arrives.

A paper's novelty is its distance to what was published before it, so it need not move when
later papers arrive. An **epoch** fits what the scorer learns from the corpus — the vocabulary
(term ids) and the document frequencies behind the IDF — once, scores every paper, and is kept
(``NoveltyModel``; the warehouse stores it in ``cache.novelty_*``). Each later night scores only
the papers without a score under the epoch (new papers, or papers whose scored inputs changed)
against the corpus as of that night, with the epoch's IDF; the other scores stay as they were.
A new epoch (everything re-scored) comes when the scorer's version changes, on a schedule, or on
demand. Definitions: docs/scoring.md, "Epochs".

The invariant (tests/marts/test_scoring_epoch.py): the papers a night scores get exactly the scores a
full re-score of that night's corpus with the same epoch model would give them. The percentiles of
a night's papers are taken among their (category, year) group as stored plus the night's papers:
the stored members keep the values they were scored with.

Pure logic: Polars / numpy in and out, no Dagster, no DuckDB, no environment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

import numpy as np
import polars as pl
import pyarrow as pa

from pipelines.marts.scoring.features import IdfTable, fit_idf
from pipelines.marts.scoring.novelty import (
    COMPONENT_COLUMNS,
    _finish,
    canonical_frame,
    output_schema,
    score_components,
    tokenize_frame,
    with_percentiles,
)
from pipelines.marts.scoring.terms import BREAK_ID, TermSequences, TokenStream

TOKEN_SCHEMA = {"paper_id": pl.String, "title_terms": pl.List(pl.Int32), "abstract_terms": pl.List(pl.Int32)}
TERM_SCHEMA = {"term_id": pl.Int32, "stem": pl.String, "surface": pl.String, "df": pl.Int32}
BIGRAM_SCHEMA = {"first_id": pl.Int32, "second_id": pl.Int32, "df": pl.Int32}


@dataclass(frozen=True)
class NoveltyModel:
    """What an epoch fits on its corpus. ``vocabulary[t]`` is the stem of term id t: the fit's
    stems in sorted order, then stems first seen on later nights, appended (df 0); ``surface[t]``
    its readable word (the shortest, then alphabetically first, word seen for it so far);
    ``idf``: the fit corpus's paper count and document frequencies."""

    vocabulary: list[str]
    surface: list[str]
    idf: IdfTable

    # --- as warehouse rows (cache.novelty_terms / cache.novelty_bigrams) and back

    def terms_frame(self) -> pl.DataFrame:
        df = np.zeros(len(self.vocabulary), dtype=np.int32)
        df[: len(self.idf.term_df)] = self.idf.term_df
        return pl.DataFrame({"term_id": np.arange(len(self.vocabulary), dtype=np.int32), "stem": self.vocabulary,
                             "surface": self.surface, "df": df}, schema=TERM_SCHEMA)

    def bigrams_frame(self) -> pl.DataFrame:
        codes = self.idf.bigram_codes
        return pl.DataFrame({"first_id": (codes >> 32).astype(np.int32), "second_id": (codes & 0xFFFFFFFF).astype(np.int32),
                             "df": self.idf.bigram_df.astype(np.int32)}, schema=BIGRAM_SCHEMA)

    @classmethod
    def from_frames(cls, n_docs: int, terms: pl.DataFrame, bigrams: pl.DataFrame) -> "NoveltyModel":
        terms = terms.sort("term_id")
        if terms.height and terms["term_id"].to_numpy()[-1] != terms.height - 1:  # empty: no terms met yet
            raise ValueError("the epoch's term ids are not 0..n-1")
        codes = (bigrams["first_id"].cast(pl.Int64).to_numpy() << 32) | bigrams["second_id"].cast(pl.Int64).to_numpy()
        order = np.argsort(codes, kind="stable")
        return cls(terms["stem"].to_list(), terms["surface"].to_list(),
                   IdfTable(int(n_docs), terms["df"].to_numpy().astype(np.int32), codes[order],
                            bigrams["df"].to_numpy().astype(np.int32)[order]))


@dataclass(frozen=True)
class EpochScores:
    """A scoring's output: ``scores`` (``novelty.output_schema``), the model (extended with the
    stems it met), and ``tokens`` (TOKEN_SCHEMA: the scored papers' term ids, for later nights)."""

    scores: pl.DataFrame
    model: NoveltyModel
    tokens: pl.DataFrame


# --- token streams <-> list columns


def _sequences(column: pl.Series) -> TermSequences:
    arr = column.cast(pl.List(pl.Int32)).fill_null(pl.lit([], dtype=pl.List(pl.Int32))).rechunk().to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = np.asarray(arr.flatten(), dtype=np.int32) if len(arr) else np.empty(0, dtype=np.int32)
    return TermSequences(offsets - offsets[0], values)


def _lists(seq: TermSequences) -> pl.Series:
    arr = pa.LargeListArray.from_arrays(pa.array(seq.indptr, pa.int64()), pa.array(seq.term, pa.int32()))
    return pl.Series(arr)


def tokens_to_frame(paper_ids: pl.Series, tokens: TokenStream) -> pl.DataFrame:
    """The rows of cache.novelty_tokens (without the digest): each paper's term ids."""
    return pl.DataFrame({"paper_id": paper_ids.cast(pl.String), "title_terms": _lists(tokens.title),
                         "abstract_terms": _lists(tokens.abstract)}).cast(TOKEN_SCHEMA)


def _stream(frame: pl.DataFrame, model: NoveltyModel) -> TokenStream:
    return TokenStream(_sequences(frame["title_terms"]), _sequences(frame["abstract_terms"]),
                       model.vocabulary, model.surface)


# --- the model's id space


def _shorter(a: str, b: str) -> str:
    return min(a, b, key=lambda w: (len(w.encode()), w))


def into_model(tokens: TokenStream, model: NoveltyModel) -> tuple[TokenStream, NoveltyModel]:
    """``tokens`` (own term ids) renumbered into ``model``'s ids; stems the model has not met get
    the next ids (in sorted order, df 0) and a stem's readable word becomes the shorter one."""
    known = {stem: i for i, stem in enumerate(model.vocabulary)}
    fresh = sorted(stem for stem in tokens.vocabulary if stem not in known)
    vocabulary = model.vocabulary + fresh
    surface = list(model.surface) + [""] * len(fresh)
    for stem in fresh:
        known[stem] = len(known)
    mapping = np.array([known[stem] for stem in tokens.vocabulary], dtype=np.int32)
    for local, word in enumerate(tokens.surface):
        at = int(mapping[local])
        surface[at] = word if not surface[at] else _shorter(surface[at], word)

    def remap(seq: TermSequences) -> TermSequences:
        term = seq.term.copy()
        real = term != BREAK_ID
        term[real] = mapping[term[real]]
        return TermSequences(seq.indptr, term)

    extended = replace(model, vocabulary=vocabulary, surface=surface)
    return TokenStream(remap(tokens.title), remap(tokens.abstract), vocabulary, surface), extended


# --- a new epoch, and a night under an epoch


def score_epoch(papers: pl.DataFrame, *, model: NoveltyModel | None = None, k: int = 5, chunk_size: int = 2048,
                n_threads: int | None = None, text_batch_size: int = 25_000,
                window: int | None | str = "default") -> EpochScores:
    """Score every paper. Without ``model`` this fits a new epoch on ``papers`` (its scores equal
    ``score_paper_novelty``'s); with one, it re-scores the corpus under that epoch (what a night's
    incremental scores are checked against)."""
    frame = canonical_frame(papers)
    id_dtype = frame.schema["paper_id"]
    tokens = tokenize_frame(frame, n_threads=n_threads, text_batch_size=text_batch_size)
    if frame.height == 0:
        empty = model or NoveltyModel(tokens.vocabulary, tokens.surface, fit_idf(tokens))
        return EpochScores(pl.DataFrame(schema=output_schema(id_dtype)), empty, pl.DataFrame(schema=TOKEN_SCHEMA))
    if model is not None:
        tokens, model = into_model(tokens, model)
    # without a model, the TF-IDF fits the epoch's IDF on these papers (fit_idf's answer) as it weighs them
    scored = score_components(frame, tokens, idf=None if model is None else model.idf, k=k,
                              chunk_size=chunk_size, n_threads=n_threads, text_batch_size=text_batch_size,
                              window=window)
    if model is None:
        model = NoveltyModel(tokens.vocabulary, tokens.surface, scored.idf)
    return EpochScores(_finish(with_percentiles(scored.frame), id_dtype), model,
                       tokens_to_frame(frame["paper_id"], tokens))


def arrival_tokens(frame: pl.DataFrame, to_score: pl.Series, model: NoveltyModel, stored_tokens: pl.DataFrame, *,
                   n_threads: int | None = None, text_batch_size: int = 25_000
                   ) -> tuple[np.ndarray, pl.DataFrame, NoveltyModel, pl.DataFrame]:
    """An incremental night's term ids: ``(wanted, aligned, model, new)`` for the canonical
    ``frame``. Only ``to_score``'s texts (the rows ``wanted``) are tokenised, into ``model``'s ids
    (extended with their new stems); ``aligned`` holds one row of term ids per row of ``frame``,
    every other paper's from ``stored_tokens``; ``new`` the tokenised papers' own (both empty when
    nothing is wanted). Shared by :func:`score_arrivals` and the chunked scorer (``chunks.py``)."""
    id_dtype = frame.schema["paper_id"]
    wanted = frame["paper_id"].is_in(to_score.cast(id_dtype).implode()).to_numpy()
    if not wanted.any():
        empty = pl.DataFrame(schema=TOKEN_SCHEMA)
        return wanted, empty, model, empty
    arrivals = frame.filter(pl.Series(wanted))
    new_tokens, model = into_model(tokenize_frame(arrivals, n_threads=n_threads, text_batch_size=text_batch_size), model)
    new_frame = tokens_to_frame(arrivals["paper_id"], new_tokens)
    known = stored_tokens.select(TOKEN_SCHEMA.keys()).cast(TOKEN_SCHEMA).filter(
        ~pl.col("paper_id").is_in(new_frame["paper_id"].implode()))
    aligned = frame.select(pl.col("paper_id").cast(pl.String)).join(
        pl.concat([known, new_frame]), on="paper_id", how="left", maintain_order="left")
    if aligned["title_terms"].null_count():
        missing = aligned.filter(pl.col("title_terms").is_null())["paper_id"].head(3).to_list()
        raise ValueError(f"no stored tokens for papers of the corpus, e.g. {missing}: score a new epoch")
    return wanted, aligned, model, new_frame


def score_arrivals(papers: pl.DataFrame, to_score: pl.Series, model: NoveltyModel, stored_tokens: pl.DataFrame,
                   stored_scores: pl.DataFrame, *, k: int = 5, chunk_size: int = 2048, n_threads: int | None = None,
                   text_batch_size: int = 25_000, window: int | None | str = "default") -> EpochScores:
    """Score the papers ``to_score`` (paper ids) of the corpus ``papers`` under the epoch ``model``.

    ``stored_tokens`` (TOKEN_SCHEMA): the term ids of every other paper of ``papers`` (as stored
    by earlier nights of the epoch); ``stored_scores``: their scores (paper_id, category, year and
    the three components), the percentile groups the new papers join. Only ``to_score``'s texts
    are tokenised. Returns their scores, the model extended with their new stems, and their tokens."""
    frame = canonical_frame(papers)
    id_dtype = frame.schema["paper_id"]
    wanted, aligned, model, new_frame = arrival_tokens(frame, to_score, model, stored_tokens, n_threads=n_threads,
                                                       text_batch_size=text_batch_size)
    if not wanted.any():
        return EpochScores(pl.DataFrame(schema=output_schema(id_dtype)), model, new_frame)
    tokens = _stream(aligned, model)
    scored = score_components(frame, tokens, idf=model.idf, query=wanted, k=k, chunk_size=chunk_size,
                              n_threads=n_threads, text_batch_size=text_batch_size, window=window)
    components = scored.frame
    group = stored_scores.select("paper_id", "category", "year", *COMPONENT_COLUMNS).cast(
        {"paper_id": id_dtype, "year": pl.Int64}).filter(~pl.col("paper_id").is_in(components["paper_id"].implode()))
    ranked = with_percentiles(pl.concat([components.with_columns(_new=pl.lit(True)),
                                         group.with_columns(_new=pl.lit(False))], how="diagonal_relaxed"))
    scores = ranked.filter(pl.col("_new")).drop("_new")
    return EpochScores(_finish(scores, id_dtype), model, new_frame)


# --- when a new epoch starts

# A new epoch every this many days by default (the setting SCHOLARHOUSE_NOVELTY_EPOCH_DAYS).
EPOCH_DAYS = 7


@dataclass(frozen=True)
class EpochInfo:
    """The epoch a warehouse holds (a row of cache.novelty_epochs)."""

    epoch_id: str
    method_version: str
    fitted_on: date
    novelty_window: int | None


def new_epoch_reason(current: EpochInfo | None, night: date, *, method_version: str, novelty_window: int | None,
                     epoch_days: int | None, asked: bool = False) -> str | None:
    """Why ``night`` fits a new epoch and re-scores every paper, or None (an incremental night).

    ``asked``: a data engineer asked for one (the run tag, or ``new_epoch`` in code); ``epoch_days``:
    the cadence (None: never on a schedule); ``novelty_window``: the run's window (part of what a
    score means, like the version)."""
    if asked:
        return "asked for (on demand)"
    if current is None:
        return "no epoch yet"
    if current.method_version != method_version:
        return f"the scorer's version changed ({current.method_version} -> {method_version})"
    if current.novelty_window != novelty_window:
        return f"the novelty window changed ({current.novelty_window} -> {novelty_window})"
    if epoch_days is not None and (night - current.fitted_on).days >= epoch_days:
        return f"the epoch is {(night - current.fitted_on).days} days old (a new one every {epoch_days})"
    return None

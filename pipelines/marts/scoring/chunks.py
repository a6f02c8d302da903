"""Novelty scoring in chunks: the same scores as ``epoch.score_epoch`` / ``epoch.score_arrivals``,
computed by independent steps that exchange Parquet files in a folder.

A night's scoring splits into three parts:

1. **prepare** (``prepare_epoch`` / ``prepare_arrivals``): tokenise the papers (a new epoch: all of
   them, and fit the IDF; an incremental night: only the arrivals, into the epoch's ids) — a
   ``Prepared``: the corpus in canonical order (no text), every paper's term ids, the model, and
   which rows are scored tonight. ``save_prepared`` writes it to a folder, ``load_prepared`` reads it.
2. **chunks** (``assign_chunks``, ``score_chunk``): the rows to score, split by category into
   ``n`` chunks of similar work (a category larger than a chunk's share is cut into runs of query
   rows); each chunk computes its rows' components against the whole corpus (neighbours in its
   categories, first uses anywhere). A row's components do not depend on which other rows are
   queries (``novelty.score_components``), so any split gives the same rows.
3. **finish** (``finish``): the chunks' components together, percentiles within (category, year)
   — over the night's papers, plus the stored members of their groups on an incremental night —
   and the output of ``score_epoch`` / ``score_arrivals``.

The invariant (tests/marts/test_scoring_chunks.py): for any number of chunks, ``finish`` gives exactly
what ``score_epoch`` (new epoch) or ``score_arrivals`` (incremental) gives. Pure logic: Polars /
numpy / Parquet files in a folder; no Dagster, no DuckDB, no environment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from pipelines.marts.scoring.epoch import (
    EpochScores,
    NoveltyModel,
    _stream,
    arrival_tokens,
    tokens_to_frame,
)
from pipelines.marts.scoring.features import IdfTable, fit_idf
from pipelines.marts.scoring.novelty import (
    COMPONENT_COLUMNS,
    _finish,
    _segments,
    canonical_frame,
    output_schema,
    score_components,
    tokenize_frame,
    with_percentiles,
)

# The canonical frame's columns the scoring reads (the text is only needed to tokenise).
FRAME_COLUMNS = ("paper_id", "category", "year", "pub_date", "day")


@dataclass(frozen=True)
class Prepared:
    """A night's scoring, tokenised: ``frame`` (the corpus in canonical order, FRAME_COLUMNS),
    ``tokens`` (TOKEN_SCHEMA, one row per row of ``frame``, in the model's ids), ``model`` (the
    epoch's, extended with the stems met tonight), ``query`` (the rows scored tonight) and
    ``new_tokens`` (the scored papers' term ids, what cache.novelty_tokens keeps)."""

    frame: pl.DataFrame
    tokens: pl.DataFrame
    model: NoveltyModel
    query: np.ndarray
    new_tokens: pl.DataFrame
    new_epoch: bool

    @property
    def id_dtype(self) -> pl.DataType:
        return self.frame.schema["paper_id"]


def prepare_epoch(papers: pl.DataFrame, *, n_threads: int | None = None, text_batch_size: int = 25_000) -> Prepared:
    """A new epoch's night: every paper tokenised and scored, the IDF fitted on all of them."""
    frame = canonical_frame(papers)
    stream = tokenize_frame(frame, n_threads=n_threads, text_batch_size=text_batch_size)
    model = NoveltyModel(stream.vocabulary, stream.surface, fit_idf(stream, batch_docs=text_batch_size * 2))
    tokens = tokens_to_frame(frame["paper_id"], stream)
    return Prepared(frame.select(FRAME_COLUMNS), tokens, model, np.ones(frame.height, dtype=bool), tokens, True)


def prepare_arrivals(papers: pl.DataFrame, to_score: pl.Series, model: NoveltyModel, stored_tokens: pl.DataFrame, *,
                     n_threads: int | None = None, text_batch_size: int = 25_000) -> Prepared:
    """An incremental night: only ``to_score``'s texts tokenised (into ``model``'s ids); every other
    paper's term ids come from ``stored_tokens`` (as ``epoch.score_arrivals`` takes them)."""
    frame = canonical_frame(papers)
    wanted, aligned, model, new_frame = arrival_tokens(frame, to_score, model, stored_tokens, n_threads=n_threads,
                                                       text_batch_size=text_batch_size)
    return Prepared(frame.select(FRAME_COLUMNS), aligned, model, wanted, new_frame, False)


# --- chunks


def assign_chunks(prepared: Prepared, n: int, *, window: int | None = None) -> list[np.ndarray]:
    """The query rows split into at most ``n`` chunks (sorted row indices; at least one, maybe empty).

    A unit of work is a category's query rows, weighed by the comparisons they make (query rows x
    the category's size, capped by ``window``) plus the category's size (its TF-IDF is built by the
    chunk). A unit heavier than a chunk's share is cut into runs of consecutive query rows; units go
    to the least loaded chunk, heaviest first (ties: the lower chunk). Deterministic."""
    n = max(1, int(n))
    query = prepared.query
    units: list[tuple[float, np.ndarray]] = []
    for a, b in _segments(prepared.frame.get_column("category")):
        rows = a + np.flatnonzero(query[a:b])
        if len(rows):
            size = b - a
            per_query = min(size, window) if window else size
            units.append((len(rows) * per_query + size, rows))
    total = sum(w for w, _ in units)
    share = total / n if total else 0
    pieces: list[tuple[float, np.ndarray]] = []
    for weight, rows in units:
        parts = min(n, int(np.ceil(weight / share))) if share and weight > share else 1
        for part in np.array_split(rows, parts):
            pieces.append((weight * len(part) / len(rows), part))
    loads = [0.0] * n
    members: list[list[np.ndarray]] = [[] for _ in range(n)]
    for weight, rows in sorted(pieces, key=lambda p: (-p[0], int(p[1][0]))):
        at = min(range(n), key=lambda i: (loads[i], i))
        loads[at] += weight
        members[at].append(rows)
    chunks = [np.sort(np.concatenate(m)) for m in members if m]
    return chunks or [np.zeros(0, dtype=np.int64)]


def score_chunk(prepared: Prepared, rows: np.ndarray, *, k: int = 5, chunk_size: int = 2048,
                n_threads: int | None = None, text_batch_size: int = 25_000,
                window: int | None | str = "default") -> pl.DataFrame:
    """The components (every column but the percentiles) of the rows ``rows`` of the corpus."""
    query = np.zeros(prepared.frame.height, dtype=bool)
    query[rows] = True
    if not query.any():
        return _empty_components(prepared.id_dtype)
    stream = _stream(prepared.tokens, prepared.model)
    return score_components(prepared.frame, stream, idf=prepared.model.idf, query=query, k=k,
                            chunk_size=chunk_size, n_threads=n_threads, text_batch_size=text_batch_size,
                            window=window).frame


def _empty_components(id_dtype: pl.DataType) -> pl.DataFrame:
    schema = output_schema(id_dtype)
    return pl.DataFrame(schema={c: schema[c] for c in schema
                                if c not in ("novelty_percentile", "novelty_score", "method_version")})


def finish(prepared: Prepared, components: list[pl.DataFrame], group: pl.DataFrame | None = None) -> EpochScores:
    """The night's scores from its chunks' components: ``score_epoch``'s answer on a new epoch,
    ``score_arrivals``' on an incremental night (``group``: the stored scores of the other papers,
    paper_id, category, year and the three components)."""
    id_dtype = prepared.id_dtype
    parts = [c for c in components if c.height]
    if not parts:
        return EpochScores(pl.DataFrame(schema=output_schema(id_dtype)), prepared.model, prepared.new_tokens)
    # The canonical order of the rows (as one chunk with every row would list them).
    position = prepared.frame.select("paper_id").with_row_index("_at")
    scored = pl.concat(parts).join(position, on="paper_id", how="left").sort("_at").drop("_at")
    if prepared.new_epoch:
        return EpochScores(_finish(with_percentiles(scored), id_dtype), prepared.model, prepared.new_tokens)
    stored = (group if group is not None else pl.DataFrame(schema={"paper_id": id_dtype})).select(
        "paper_id", "category", "year", *COMPONENT_COLUMNS).cast({"paper_id": id_dtype, "year": pl.Int64}).filter(
        ~pl.col("paper_id").is_in(scored["paper_id"].implode()))
    ranked = with_percentiles(pl.concat([scored.with_columns(_new=pl.lit(True)),
                                         stored.with_columns(_new=pl.lit(False))], how="diagonal_relaxed"))
    return EpochScores(_finish(ranked.filter(pl.col("_new")).drop("_new"), id_dtype), prepared.model,
                       prepared.new_tokens)


# --- the folder the steps share


def save_prepared(prepared: Prepared, folder: Path) -> None:
    """Write ``prepared`` as Parquet files (and small JSON files) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    prepared.frame.with_columns(query=pl.Series(prepared.query, dtype=pl.Boolean)).write_parquet(
        folder / "corpus.parquet")
    prepared.tokens.write_parquet(folder / "tokens.parquet")
    prepared.new_tokens.write_parquet(folder / "new_tokens.parquet")
    save_model(prepared.model, folder)
    (folder / "prepared.json").write_text(json.dumps({"new_epoch": prepared.new_epoch}))


def save_model(model: NoveltyModel, folder: Path, name: str = "model") -> None:
    """``model`` as it is (vocabulary, surface words, document frequencies) in ``folder/name.*``."""
    folder.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({"stem": model.vocabulary, "surface": model.surface},
                 schema={"stem": pl.String, "surface": pl.String}).write_parquet(folder / f"{name}.vocabulary.parquet")
    pl.DataFrame({"df": model.idf.term_df}, schema={"df": pl.Int32}).write_parquet(folder / f"{name}.term_df.parquet")
    pl.DataFrame({"code": model.idf.bigram_codes, "df": model.idf.bigram_df},
                 schema={"code": pl.Int64, "df": pl.Int32}).write_parquet(folder / f"{name}.bigram_df.parquet")
    (folder / f"{name}.json").write_text(json.dumps({"n_docs": int(model.idf.n_docs)}))


def load_model(folder: Path, name: str = "model") -> NoveltyModel:
    vocabulary = pl.read_parquet(folder / f"{name}.vocabulary.parquet")
    bigrams = pl.read_parquet(folder / f"{name}.bigram_df.parquet")
    n_docs = json.loads((folder / f"{name}.json").read_text())["n_docs"]
    idf = IdfTable(int(n_docs), pl.read_parquet(folder / f"{name}.term_df.parquet")["df"].to_numpy().astype(np.int32),
                   bigrams["code"].to_numpy().astype(np.int64), bigrams["df"].to_numpy().astype(np.int32))
    return NoveltyModel(vocabulary["stem"].to_list(), vocabulary["surface"].to_list(), idf)


def load_prepared(folder: Path) -> Prepared:
    corpus = pl.read_parquet(folder / "corpus.parquet")
    return Prepared(corpus.select(FRAME_COLUMNS), pl.read_parquet(folder / "tokens.parquet"), load_model(folder),
                    corpus["query"].to_numpy().astype(bool), pl.read_parquet(folder / "new_tokens.parquet"),
                    bool(json.loads((folder / "prepared.json").read_text())["new_epoch"]))


def chunk_path(folder: Path, index: int) -> Path:
    return folder / f"chunk_{index:05d}.parquet"


def save_chunk(components: pl.DataFrame, folder: Path, index: int) -> Path:
    path = chunk_path(folder, index)
    components.write_parquet(path)
    return path


def save_rows(rows: np.ndarray, folder: Path, index: int) -> Path:
    """The row indices of chunk ``index`` (what its step scores)."""
    path = folder / f"rows_{index:05d}.parquet"
    pl.DataFrame({"row": rows.astype(np.int64)}, schema={"row": pl.Int64}).write_parquet(path)
    return path


def load_rows(path: Path) -> np.ndarray:
    return pl.read_parquet(path)["row"].to_numpy()

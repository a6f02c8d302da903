"""A Splink baseline for the paper-resolution benchmark (not part of the pipeline).

    /work/main/.venv/bin/python scripts/splink_baseline.py --records records.parquet \
        [--truth truth.parquet] [--threshold 0.9] [--blocking tight|broad] [--out clusters.parquet]

``run_splink(records)`` deduplicates paper records with Splink 5 (Fellegi-Sunter model, DuckDB
backend, in memory) the way an experienced Splink user would set it up for bibliographic records,
so that ``pipelines.core.resolution.resolve_papers`` can be compared with a well-known, well-configured
probabilistic matcher on the same input. Splink is only in the optional ``bench`` extra; this
module imports it lazily, so :func:`prepare_records` works without it.

Input: the matcher's record schema -- ``record_id`` (str, unique), ``title``, ``authors``
(list[str]), and optionally ``venue``, ``year``, ``source``, ``arxiv_id``.

Design
------
Derived columns are computed in Polars *before* Splink (Splink compares columns, it does not
normalise them):

- ``title_key``: ``pipelines.textnorm.match_key(title)`` (folded, lower case, punctuation as spaces);
- ``title_first2`` / ``title_first3`` / ``title_last2``: the first 2 / 3 and last 2 tokens of it
  (the whole key when shorter), for blocking;
- ``title_rare_token``: the token of the title with the lowest document frequency in *this*
  input, among tokens that occur in at least two titles (a token seen once cannot pair anything;
  ties go to the alphabetically first token). It is a corpus-dependent key: adding records can
  change it, which is fine for a batch baseline;
- ``author_surnames``: sorted distinct family names of the byline (``pipelines.core.resolution.names``
  parsing, so ``Zhang, Y.``, ``Y. Zhang`` and ``JC Freytag`` give the family name), null when the
  byline is empty (BZPEER lists no authors);
- ``arxiv_id``: lower case, without an ``arXiv:`` prefix and without the ``vN`` version suffix.

Comparisons (each with a null level, so a missing value is neutral evidence):

- title: exact ``title_key``, Levenshtein <= 3, Jaro-Winkler >= 0.95, >= 0.88, else. No
  term-frequency adjustment: on profile listings a title's frequency counts its own duplicates
  (one paper on many profiles), so it would weaken exactly the matches we want;
- year: exact, +-1 (preprint vs. publication year), else;
- authors: surname arrays sharing >= 2, >= 1 names, else (bylines are cut at three names);
- arxiv_id: exact, else (two different arXiv ids are strong evidence against).

Blocking rules for prediction (``blocking``):

- ``tight``: same ``title_key``; or same first 3 title tokens and same year; or same arXiv id;
- ``broad``: same first 2 title tokens; or same last 2 title tokens; or same rarest token; or the
  same arXiv id (free, and the strongest evidence there is). Much higher recall, many more pairs
  (on 150k synthetic listings the first/last-two-token blocks alone hold ~96M pairs).

Training:

- lambda (probability two random records match) from deterministic rules (same ``title_key`` and
  year, or same arXiv id) with an assumed recall of 0.7 (Splink's default when no pair agrees);
- u by random sampling (``u_max_pairs``, seeded) on the records with exact-title duplicates
  collapsed, in a separate linker whose model is handed to the main one (see
  :func:`_u_sample_frame` for why: otherwise u(exact title) ~ lambda and the evidence cancels);
- m by expectation maximisation in two sessions: blocked on ``title_key`` (trains year, authors,
  arXiv) and on rarest title token + year (trains the title).

Predictions at ``threshold`` are clustered by connected components at the same threshold.
Everything is deterministic for a given input: the u sample is seeded, EM is deterministic, and
cluster ids are the smallest ``record_id`` (string order) of each cluster.

The model is a plain Fellegi-Sunter sum, so a few evidence patterns sit near any threshold: on
the 150k-listing synthetic corpus, "exact title, year +-1, no byline on one side" scores 0.8997,
just below 0.9. Compare thresholds, not just the default.

``info``: ``seconds`` (Splink alone: setup, training, blocking, prediction, clustering; the
Polars preparation is ``prepare_seconds``), ``phase_seconds`` (that time by phase),
``pairs_scored`` (blocked pairs compared), ``pairs_above_threshold``, ``peak_mb`` (peak resident
memory of this process during the Splink run, sampled every 20 ms; Linux only, else null),
``settings`` (one-line description), ``blocking``, ``threshold``, ``records``, ``notes``
(training steps skipped on tiny inputs).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl

if __package__ in (None, ""):  # run as a script: make `pipelines` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.resolution.names import parse_name  # noqa: E402
from pipelines.textnorm import match_key  # noqa: E402

BLOCKING_CHOICES = ("tight", "broad")
DEFAULT_THRESHOLD = 0.9
DEFAULT_SEED = 42
# u from 1M random pairs. Title comparisons dominate the cost (DuckDB's Jaro-Winkler and Levenshtein
# on ~60-character titles: ~8 s per million pairs on 2 cores). Splink suggests 1e7-1e9 for final
# models; raise ``u_max_pairs`` when time allows (levels never seen get u = 1e-6, Splink's value).
DEFAULT_U_MAX_PAIRS = 1e6
# EM is capped (Splink's deterministic hash sampling) so that huge title blocks do not dominate time.
DEFAULT_EM_MAX_PAIRS = 2e6
# Splink's u for a level not observed in u sampling (ComparisonLevel.u_probability).
_UNOBSERVED_U = 1e-6
# Assumed recall of the deterministic rules used to estimate lambda.
_LAMBDA_RULES_RECALL = 0.7

CLUSTER_SCHEMA = {"record_id": pl.String, "cluster_id": pl.String}


# --- preparation (pure Polars, no Splink) ---------------------------------------------------------


def _surname(name: str, cache: dict[str, str | None]) -> str | None:
    if name not in cache:
        reading = parse_name(name).primary
        cache[name] = reading.family if reading and reading.family else None
    return cache[name]


def _normalize_arxiv(expr: pl.Expr) -> pl.Expr:
    cleaned = (
        expr.str.strip_chars()
        .str.to_lowercase()
        .str.replace(r"^arxiv:\s*", "")
        .str.replace(r"v\d+$", "")
    )
    return pl.when(cleaned.str.len_chars() > 0).then(cleaned).otherwise(None)


def prepare_records(records: pl.DataFrame) -> pl.DataFrame:
    """The input of Splink: ``unique_id`` plus the derived columns described in the module docstring.

    Plain Python/Polars; keys are computed once per distinct title and name (listings repeat both).
    """
    if "record_id" not in records.columns or "title" not in records.columns:
        raise ValueError("records need at least 'record_id' and 'title' columns")
    ids = records.get_column("record_id").cast(pl.String)
    if ids.null_count():
        raise ValueError("record_id must not be null")
    if ids.n_unique() != records.height:
        raise ValueError("record_id must be unique")

    key_of: dict[str | None, str | None] = {}
    title_keys = []
    for title in records.get_column("title").cast(pl.String).to_list():
        if title not in key_of:
            key_of[title] = match_key(title) or None
        title_keys.append(key_of[title])
    tokens = [k.split() if k else [] for k in title_keys]

    # Document frequency of each title token in this input (a token counts once per title).
    doc_freq: dict[str, int] = {}
    for toks in tokens:
        for tok in set(toks):
            doc_freq[tok] = doc_freq.get(tok, 0) + 1
    rare_tokens = []
    for toks in tokens:
        shared = [t for t in set(toks) if doc_freq[t] >= 2]
        rare_tokens.append(min(shared, key=lambda t: (doc_freq[t], t)) if shared else None)

    surname_cache: dict[str, str | None] = {}
    if "authors" in records.columns:
        bylines = records.get_column("authors").to_list()
    else:
        bylines = [None] * records.height
    surnames: list[list[str] | None] = []
    for byline in bylines:
        names = {s for s in (_surname(n, surname_cache) for n in (byline or []) if n) if s}
        surnames.append(sorted(names) or None)

    def joined(parts: list[str]) -> str | None:
        return " ".join(parts) if parts else None

    def optional(name: str, dtype: pl.DataType) -> pl.Series:
        if name in records.columns:
            return records.get_column(name).cast(dtype)
        return pl.Series(name, [None] * records.height, dtype=dtype)

    return pl.DataFrame(
        {
            "unique_id": ids,
            "title_key": pl.Series(title_keys, dtype=pl.String),
            "title_first2": pl.Series([joined(t[:2]) for t in tokens], dtype=pl.String),
            "title_first3": pl.Series([joined(t[:3]) for t in tokens], dtype=pl.String),
            "title_last2": pl.Series([joined(t[-2:]) for t in tokens], dtype=pl.String),
            "title_rare_token": pl.Series(rare_tokens, dtype=pl.String),
            "year": optional("year", pl.Int64),
            "author_surnames": pl.Series(surnames, dtype=pl.List(pl.String)),
            "arxiv_id": optional("arxiv_id", pl.String),
        }
    ).with_columns(_normalize_arxiv(pl.col("arxiv_id")).alias("arxiv_id"))


# --- Splink model ---------------------------------------------------------------------------------


def _blocking_rules(blocking: str) -> list:
    from splink import block_on

    if blocking == "tight":
        return [block_on("title_key"), block_on("title_first3", "year"), block_on("arxiv_id")]
    if blocking == "broad":
        return [block_on("title_first2"), block_on("title_last2"), block_on("title_rare_token"), block_on("arxiv_id")]
    raise ValueError(f"blocking must be one of {BLOCKING_CHOICES}, got {blocking!r}")


def splink_settings(blocking: str = "tight"):
    """The Splink ``SettingsCreator`` (dedupe_only) for prepared records."""
    import splink.comparison_level_library as cll
    import splink.comparison_library as cl
    from splink import SettingsCreator

    title = cl.CustomComparison(
        output_column_name="title_key",
        comparison_description="normalised title",
        comparison_levels=[
            cll.NullLevel("title_key"),
            cll.ExactMatchLevel("title_key"),  # no term-frequency adjustment: see the module docstring
            # Levenshtein <= 3, with the length test first: the distance is at least the length
            # difference, and DuckDB's levenshtein is slow on long strings (the CASE WHEN that Splink
            # generates only evaluates it where the cheap test passed). Same level, ~5x faster.
            cll.CustomLevel(
                "abs(length(title_key_l) - length(title_key_r)) <= 3 AND levenshtein(title_key_l, title_key_r) <= 3",
                label_for_charts="Levenshtein <= 3",
            ),
            cll.JaroWinklerLevel("title_key", 0.95),
            cll.JaroWinklerLevel("title_key", 0.88),
            cll.ElseLevel(),
        ],
    )
    year = cl.CustomComparison(
        output_column_name="year",
        comparison_description="publication year",
        comparison_levels=[
            cll.NullLevel("year"),
            cll.ExactMatchLevel("year"),
            cll.AbsoluteDifferenceLevel("year", 1),
            cll.ElseLevel(),
        ],
    )
    return SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name="unique_id",
        comparisons=[
            title,
            year,
            cl.ArrayIntersectAtSizes("author_surnames", [2, 1]),
            cl.ExactMatch("arxiv_id"),
        ],
        blocking_rules_to_generate_predictions=_blocking_rules(blocking),
        retain_matching_columns=False,
        retain_intermediate_calculation_columns=False,
    )


def describe_settings(blocking: str, threshold: float) -> str:
    rules = {
        "tight": "title_key | title_first3+year | arxiv_id",
        "broad": "title_first2 | title_last2 | title_rare_token | arxiv_id",
    }[blocking]
    return (
        "splink 5 dedupe_only duckdb; title: exact/lev<=3/jw>=.95/jw>=.88; year: exact/+-1; "
        f"authors: surname intersect>=2/>=1; arxiv: exact; blocking: {rules}; "
        f"lambda: deterministic rules (recall {_LAMBDA_RULES_RECALL}); u: random sampling on title-deduplicated "
        f"records; m: EM on title_key, on title_rare_token+year; cluster: connected components at {threshold}"
    )


class _PeakRss:
    """Samples this process's resident memory in a thread (Linux /proc); ``peak_mb`` is None elsewhere."""

    def __init__(self, interval: float = 0.02):
        self.interval = interval
        self.peak_bytes: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _rss(self) -> int | None:
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * self._page
        except (OSError, ValueError, IndexError):
            return None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        rss = self._rss()
        if rss is not None:
            self.peak_bytes = max(self.peak_bytes or 0, rss)

    def __enter__(self) -> "_PeakRss":
        self._sample()
        if self.peak_bytes is not None:
            self._thread = threading.Thread(target=self._run, name="splink-peak-rss", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()

    @property
    def peak_mb(self) -> float | None:
        return None if self.peak_bytes is None else round(self.peak_bytes / 2**20, 1)


def _count(con: Any, table_name: str) -> int:
    # fetchall: DuckDB 2 refuses new work on a connection while a result is only partly fetched.
    return int(con.sql(f"SELECT count(*) FROM {table_name}").fetchall()[0][0])


def _u_sample_frame(prepared: pl.DataFrame) -> pl.DataFrame:
    """Records for u estimation: one per distinct ``title_key`` (records without a title all kept).

    u is the chance that a *non-matching* pair agrees at a level, estimated from random pairs on
    the assumption that random pairs are non-matches. On profile listings that assumption fails
    for the exact-title level: the same paper is listed on many profiles, so most random pairs
    with identical titles are true matches, u(exact title) comes out close to lambda itself and
    the two cancel (an exact title and year without authors then scores ~0.87 on the synthetic
    corpus). Collapsing exact-title duplicates first leaves only accidental agreements in the
    sample, which is what u is meant to measure.
    """
    first = pl.col("title_key").is_null() | pl.col("title_key").is_first_distinct()
    return prepared.filter(first)


def _estimate_u_model(prepared: pl.DataFrame, blocking: str, seed: int, u_max_pairs: float,
                      threads: int | None) -> dict:
    """Train u on the de-duplicated sample in its own connection; return the Splink model dict.

    A separate connection keeps the two linkers' cached intermediate tables (named alike by
    Splink) apart.
    """
    import duckdb
    from splink import DuckDBAPI, Linker

    con = _connect(duckdb, threads)
    try:
        db_api = DuckDBAPI(connection=con)
        frame = db_api.register(_u_sample_frame(prepared).to_arrow(), dataset_display_name="paper_records_u")
        linker = Linker(frame, splink_settings(blocking), log_level=logging.ERROR)
        linker.training.estimate_u_using_random_sampling(max_pairs=u_max_pairs, seed=seed)
        model = linker.misc.save_model_to_json()
    finally:
        con.close()
    # A level never seen among the sampled pairs is kept by Splink as "not observed" (u = 1e-6 at
    # prediction) but left out of the saved model, where it would load as untrained and weigh
    # nothing. Write Splink's own value back so the exact-title level keeps its weight.
    for comparison in model["comparisons"]:
        for level in comparison["comparison_levels"]:
            if not level.get("is_null_level") and "u_probability" not in level:
                level["u_probability"] = _UNOBSERVED_U
    return model


def _connect(duckdb: Any, threads: int | None) -> Any:
    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")  # quiet: DuckDB draws bars on long queries
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def _first_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:200]


def _has_deterministic_pairs(prepared: pl.DataFrame) -> bool:
    """Whether any two records agree on the lambda rules (same title_key and year, or arXiv id)."""
    for keys in (["title_key", "year"], ["arxiv_id"]):
        known = prepared.drop_nulls(keys)
        if known.height and known.select(keys).is_duplicated().any():
            return True
    return False


def _estimate_lambda_and_m(linker: Any, prepared: pl.DataFrame, em_max_pairs: float | None) -> list[str]:
    """Estimate lambda and the m values; return notes about steps that could not run (tiny inputs)."""
    from splink import block_on

    notes: list[str] = []
    if not _has_deterministic_pairs(prepared):  # Splink would set lambda to 0 and fail at predict
        notes.append("lambda: default kept (no pair agrees on the deterministic rules)")
    else:
        try:
            linker.training.estimate_probability_two_random_records_match(
                [block_on("title_key", "year"), block_on("arxiv_id")], recall=_LAMBDA_RULES_RECALL
            )
        except ValueError as exc:  # more exact matches than the assumed recall allows: keep the default
            notes.append(f"lambda: default kept ({_first_line(exc)})")
    # Session 1 trains year, authors and arXiv on exact-title pairs. Session 2 trains the title on
    # pairs sharing the rarest title token and the year. (Blocking on first author + year instead
    # fails here: a profile's owner is on every byline, so EM learns "same author", not "same paper".)
    sessions = (("title_key", block_on("title_key")), ("title_rare_token+year", block_on("title_rare_token", "year")))
    for label, rule in sessions:
        try:
            linker.training.estimate_parameters_using_expectation_maximisation(rule, max_pairs=em_max_pairs)
        except Exception as exc:  # no pairs under this rule: the other session's m values stand
            notes.append(f"em on {label}: skipped ({_first_line(exc)})")
    return notes


def run_splink(
    records: pl.DataFrame,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    blocking: str = "tight",
    seed: int = DEFAULT_SEED,
    u_max_pairs: float = DEFAULT_U_MAX_PAIRS,
    em_max_pairs: float | None = DEFAULT_EM_MAX_PAIRS,
    threads: int | None = None,
) -> tuple[pl.DataFrame, dict]:
    """Cluster ``records`` with Splink; return ``(clusters, info)``.

    ``clusters``: one row per input record, ``record_id`` and ``cluster_id`` (the smallest
    ``record_id`` of its cluster), in input order. ``info``: see the module docstring.
    ``threads`` caps DuckDB's threads (default: DuckDB's own, all cores).
    """
    if blocking not in BLOCKING_CHOICES:
        raise ValueError(f"blocking must be one of {BLOCKING_CHOICES}, got {blocking!r}")
    if not 0.0 < threshold < 1.0:
        raise ValueError("threshold is a match probability strictly between 0 and 1")

    started = time.perf_counter()
    prepared = prepare_records(records)
    prepare_seconds = time.perf_counter() - started
    info: dict[str, Any] = {
        "seconds": 0.0,
        "prepare_seconds": round(prepare_seconds, 3),
        "pairs_scored": 0,
        "pairs_above_threshold": 0,
        "peak_mb": None,
        "settings": describe_settings(blocking, threshold),
        "blocking": blocking,
        "threshold": threshold,
        "records": prepared.height,
        "notes": [],
    }
    if prepared.height < 2:  # nothing to link; Splink cannot sample pairs from fewer than 2 records
        ids = prepared.get_column("unique_id")
        return pl.DataFrame({"record_id": ids, "cluster_id": ids}, schema=CLUSTER_SCHEMA), info

    import duckdb

    phases: dict[str, float] = {}
    lap_start = [0.0]

    def _lap() -> float:
        now = time.perf_counter()
        elapsed, lap_start[0] = now - lap_start[0], now
        return round(elapsed, 3)

    with _PeakRss() as memory:
        started = lap_start[0] = time.perf_counter()
        model = _estimate_u_model(prepared, blocking, seed, u_max_pairs, threads)
        phases["train_u"] = _lap()
        con = _connect(duckdb, threads)
        try:
            assigned = _link(con, prepared, model, threshold=threshold, em_max_pairs=em_max_pairs, info=info,
                             phases=phases, lap=_lap)
        finally:
            con.close()
        info["seconds"] = round(time.perf_counter() - started, 3)
    info["peak_mb"] = memory.peak_mb
    info["phase_seconds"] = phases

    return _clusters(prepared, assigned), info


def _link(con, prepared: pl.DataFrame, model, *, threshold: float, em_max_pairs: float | None, info: dict,
          phases: dict[str, float], lap) -> pl.DataFrame:
    """Train lambda and m, block, predict and cluster on ``con``; the counts and notes go to ``info``,
    each phase's seconds (``lap()``) to ``phases``. Returns Splink's (record_id, cluster_id) rows."""
    from splink import DuckDBAPI, Linker

    db_api = DuckDBAPI(connection=con)
    frame = db_api.register(prepared.to_arrow(), dataset_display_name="paper_records")
    linker = Linker(frame, model, log_level=logging.ERROR)
    info["notes"] = _estimate_lambda_and_m(linker, prepared, em_max_pairs)
    phases["train_lambda_m"] = lap()

    blocked = linker.inference.compute_blocked_pairs_for_predict()  # cached; predict reuses it
    info["pairs_scored"] = _count(con, blocked.physical_name)
    phases["block"] = lap()
    predictions = linker.inference.predict(threshold_match_probability=threshold, warning_mode="never")
    info["pairs_above_threshold"] = _count(con, predictions.physical_name)
    phases["predict"] = lap()
    clustered = linker.clustering.cluster_pairwise_predictions_at_threshold(
        predictions, threshold_match_probability=threshold
    )
    assigned = pl.from_arrow(
        con.sql(
            f"SELECT CAST(unique_id AS VARCHAR) AS record_id, CAST(cluster_id AS VARCHAR) AS cluster_id "
            f"FROM {clustered.physical_name}"
        ).to_arrow_table()
    )
    phases["cluster"] = lap()
    return assigned


def _clusters(prepared: pl.DataFrame, assigned: pl.DataFrame) -> pl.DataFrame:
    """One row per input record, in input order: Splink's cluster, named after its smallest record_id
    (Splink names a cluster after one member, whichever the version picks); a record it left out is
    its own cluster."""
    assigned = assigned.with_columns(pl.col("record_id").min().over("cluster_id").alias("cluster_id"))
    return (
        prepared.select(pl.col("unique_id").alias("record_id"))
        .join(assigned, on="record_id", how="left", maintain_order="left")
        .with_columns(pl.col("cluster_id").fill_null(pl.col("record_id")))
        .cast(CLUSTER_SCHEMA)
    )


# --- CLI ------------------------------------------------------------------------------------------


def pairwise_scores(clusters: pl.DataFrame, truth: pl.DataFrame) -> dict[str, float]:
    """Pairwise precision / recall / F1 of ``clusters`` against ``truth`` (both record_id, cluster_id).

    Counted with group sizes (no pair enumeration): TP = sum over (cluster, true cluster) cells of
    C(n, 2); predicted and gold pairs likewise over each side's clusters. Records missing from
    ``truth`` are ignored.
    """
    joined = clusters.join(truth.select("record_id", pl.col("cluster_id").alias("true_id")), on="record_id")

    def pairs(*cols: str) -> int:
        sizes = joined.group_by(*cols).len().get_column("len")
        return int((sizes * (sizes - 1) // 2).sum())

    tp, predicted, gold = pairs("cluster_id", "true_id"), pairs("cluster_id"), pairs("true_id")
    precision = tp / predicted if predicted else 1.0
    recall = tp / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "predicted_pairs": predicted, "gold_pairs": gold}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=Path, required=True, help="Parquet of records (record_id, title, authors, ...)")
    parser.add_argument("--truth", type=Path, help="optional Parquet of record_id, cluster_id: prints pairwise P/R/F1")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--blocking", choices=BLOCKING_CHOICES, default="tight")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, help="write the clusters here (Parquet)")
    args = parser.parse_args(argv)

    records = pl.read_parquet(args.records)
    clusters, info = run_splink(records, threshold=args.threshold, blocking=args.blocking, seed=args.seed,
                                threads=args.threads)
    if args.truth:
        info["quality"] = pairwise_scores(clusters, pl.read_parquet(args.truth).cast(CLUSTER_SCHEMA))
    info["clusters"] = clusters.get_column("cluster_id").n_unique()
    if args.out:
        clusters.write_parquet(args.out)
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

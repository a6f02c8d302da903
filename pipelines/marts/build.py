"""Building the marts: analyst-readable SQL from sql/marts/, plus the Polars novelty scorer.
No Dagster imports; the assets call these with an open connection."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path

import duckdb
import polars as pl

from pipelines import warehouse
from pipelines.marts.scoring import METHOD_VERSION, chunks
from pipelines.marts.scoring.epoch import (
    EPOCH_DAYS,
    EpochInfo,
    EpochScores,
    NoveltyModel,
    new_epoch_reason,
    score_arrivals,
    score_epoch,
)
from pipelines.marts.scoring.novelty import default_window

MAX_AUTHORS_FOR_EDGES = 100


def _insert_sql(con: duckdb.DuckDBPyConnection, table: str, sql_name: str, params: dict, where: str | None = None,
                where_params: list | None = None) -> int:
    """Replace a slice (or all) of ``table`` with the rows of sql/<sql_name>.sql, in one transaction."""
    select = warehouse.read_sql(sql_name)
    with warehouse.transaction(con):
        if where:
            con.execute(f"DELETE FROM {table} WHERE {where}", where_params or [])
        else:
            con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} BY NAME {select}", params)
    return con.execute(f"SELECT count(*) FROM {table}" + (f" WHERE {where}" if where else ""), where_params or []).fetchall()[0][0]


# Recomputed metrics judge a reported h-index only when the warehouse holds a per-paper count for at
# least this share of the person's papers (marts.author_metrics.citation_coverage) ...
MIN_CITATION_COVERAGE = 0.8
# ... and flag it only beyond FACTOR x bound + ADD: the sites' citation databases may count more than
# OpenAlex does, so the recomputed bound is a yardstick, not a proof (docs/warehouse.md).
H_INDEX_MARGIN_FACTOR = 1.5
H_INDEX_MARGIN_ADD = 2


def build_author_metrics(con: duckdb.DuckDBPyConnection, as_of: date) -> int:
    _paper_citation_snapshots(con)
    return _insert_sql(con, "marts.author_metrics", "marts/author_metrics",
                       {"as_of": as_of, "min_coverage": MIN_CITATION_COVERAGE,
                        "h_margin_factor": H_INDEX_MARGIN_FACTOR, "h_margin_add": H_INDEX_MARGIN_ADD},
                       where="as_of = ?", where_params=[as_of])


def _paper_citation_snapshots(con: duckdb.DuckDBPyConnection) -> None:
    """The temp view ``paper_citation_snapshots`` (sql/marts/paper_citation_snapshots.sql): per paper
    and night, OpenAlex's count and yearly series, linked through the crosswalk."""
    con.execute("CREATE OR REPLACE TEMP VIEW paper_citation_snapshots AS "
                + warehouse.read_sql("marts/paper_citation_snapshots"))


def build_citations(con: duckdb.DuckDBPyConnection) -> int:
    _paper_citation_snapshots(con)
    return _insert_sql(con, "marts.citations", "marts/citations", {})


def build_collaboration_edges(con: duckdb.DuckDBPyConnection) -> int:
    return _insert_sql(con, "marts.collaboration_edges", "marts/collaboration_edges", {"max_authors": MAX_AUTHORS_FOR_EDGES})


def build_nightly_summary(con: duckdb.DuckDBPyConnection, as_of: date) -> int:
    return _insert_sql(con, "marts.nightly_summary", "marts/nightly_summary", {"as_of": as_of},
                       where="as_of = ?", where_params=[as_of])


def build_author_scores(con: duckdb.DuckDBPyConnection) -> int:
    return _insert_sql(con, "marts.author_scores", "marts/author_scores", {"method_version": METHOD_VERSION})


@dataclass
class PaperScoresNight:
    """What ``build_paper_scores`` did: a new epoch (``reason``) or an incremental night."""

    epoch_id: str
    mode: str  # "new epoch" | "incremental"
    reason: str | None
    scored: int  # papers scored tonight
    removed: int  # score rows of papers gone from core.papers
    kept: int  # score rows kept as they were
    cold_start: int  # of the papers scored tonight
    rows: int  # marts.paper_scores rows after the night


def _current_epoch(con: duckdb.DuckDBPyConnection) -> tuple[EpochInfo | None, int]:
    """The newest epoch (any scorer version) and its paper count."""
    rows = con.execute("SELECT epoch_id, method_version, fitted_on, novelty_window, papers FROM cache.novelty_epochs "
                       "ORDER BY fitted_at DESC, epoch_id DESC LIMIT 1").fetchall()
    if not rows:
        return None, 0
    row = rows[0]
    return EpochInfo(row[0], row[1], row[2], row[3]), int(row[4])


def _write_reports(con: duckdb.DuckDBPyConnection) -> None:
    """Refresh what the pages say (sql/marts/paper_score_reports.sql) on the rows where it changed."""
    con.execute(f"""
        UPDATE marts.paper_scores s
        SET reported_score = r.reported_score, reported_score_source = r.reported_score_source,
            has_code = r.has_code, year_inferred = r.year_inferred
        FROM ({warehouse.read_sql("marts/paper_score_reports")}) r
        WHERE s.paper_id = r.paper_id
          AND (s.reported_score IS DISTINCT FROM r.reported_score
               OR s.reported_score_source IS DISTINCT FROM r.reported_score_source
               OR s.has_code IS DISTINCT FROM r.has_code OR s.year_inferred IS DISTINCT FROM r.year_inferred)""")


def _score_rows(con: duckdb.DuckDBPyConnection, scores: pl.DataFrame, epoch_id: str, as_of: date) -> pl.DataFrame:
    columns = warehouse.table_columns(con, "marts.paper_scores")
    frame = scores.with_columns(epoch_id=pl.lit(epoch_id), scored_on=pl.lit(as_of, dtype=pl.Date),
                                method_version=pl.lit(METHOD_VERSION))  # the version the epoch is keyed by
    return frame.select([c for c in columns if c in frame.columns])


def _keyed(frame: pl.DataFrame, epoch_id: str) -> pl.DataFrame:
    return frame.with_columns(epoch_id=pl.lit(epoch_id), method_version=pl.lit(METHOD_VERSION))


NOVELTY_MODEL_TABLES = ("cache.novelty_terms", "cache.novelty_bigrams", "cache.novelty_tokens")


@dataclass
class PaperScoresPlan:
    """What a night's novelty scoring reads from the warehouse (``plan_paper_scores``), and what it
    decided: a new epoch (``reason``) or an incremental night. ``papers``: sql/marts/paper_score_inputs
    (with the digest). An incremental night with papers to score also holds the epoch's ``model``,
    the other papers' stored ``tokens`` and the stored scores of the percentile ``group``.
    ``fingerprint``: the state read (``scores_fingerprint``), which the write checks is unchanged."""

    as_of: date
    window: int | None
    epoch_id: str
    reason: str | None
    papers: pl.DataFrame
    to_score: pl.Series
    removed: pl.Series
    model: NoveltyModel | None = None
    tokens: pl.DataFrame | None = None
    group: pl.DataFrame | None = None
    fingerprint: tuple = ()

    @property
    def new_epoch(self) -> bool:
        return self.reason is not None

    @property
    def dropped(self) -> pl.Series:
        """Score and token rows that go: re-scored papers' and removed papers'."""
        return pl.concat([self.to_score, self.removed]).unique()

    @property
    def inputs(self) -> pl.DataFrame:
        """The scorer's input (``papers`` without the digest)."""
        return self.papers.drop("inputs_digest")


def scores_fingerprint(con: duckdb.DuckDBPyConnection) -> tuple:
    """What a night's scoring depends on, in a few numbers: the scorer's inputs (papers and their
    digests), the stored scores and tokens, and the epochs. Equal fingerprints: the same plan."""
    inputs = warehouse.read_sql("marts/paper_score_inputs")
    return tuple(con.execute(f"""
        SELECT (SELECT (count(*), bit_xor(hash(paper_id, inputs_digest))) FROM ({inputs})),
               (SELECT (count(*), bit_xor(hash(paper_id, epoch_id, method_version, scored_on, novelty_raw)))
                FROM marts.paper_scores),
               (SELECT (count(*), bit_xor(hash(paper_id, epoch_id, method_version, inputs_digest)))
                FROM cache.novelty_tokens),
               (SELECT (count(*), bit_xor(hash(epoch_id, method_version, fitted_at))) FROM cache.novelty_epochs),
               (SELECT (count(*), bit_xor(hash(epoch_id, term_id, surface))) FROM cache.novelty_terms)
        """).fetchall()[0])


def plan_paper_scores(con: duckdb.DuckDBPyConnection, as_of: date, *, novelty_window: int | None | str = "default",
                      epoch_days: int | None = EPOCH_DAYS, new_epoch: bool = False,
                      fingerprint: bool = False) -> PaperScoresPlan:
    """Read what the night's scoring needs and decide its mode (``build_paper_scores`` says how).
    ``fingerprint``: also note the state read, for a write in another step to check."""
    window = default_window() if novelty_window == "default" else novelty_window
    fingerprint = scores_fingerprint(con) if fingerprint else ()
    papers = warehouse.read_frame(con, warehouse.read_sql("marts/paper_score_inputs"))
    current, fitted_papers = _current_epoch(con)
    reason = new_epoch_reason(current, as_of, method_version=METHOD_VERSION, novelty_window=window,
                              epoch_days=epoch_days, asked=new_epoch)
    if reason is None:
        stored = warehouse.read_frame(con, """
            SELECT t.paper_id, t.inputs_digest, s.paper_id IS NOT NULL AS has_score, s.nearest_paper_id
            FROM cache.novelty_tokens t
            LEFT JOIN marts.paper_scores s ON s.paper_id = t.paper_id AND s.epoch_id = t.epoch_id
                                           AND s.method_version = t.method_version
            WHERE t.epoch_id = ? AND t.method_version = ?""", [current.epoch_id, METHOD_VERSION])
        scored_rows = warehouse.scalar(con, "SELECT count(*) FROM marts.paper_scores")
        if stored.height == 0 or scored_rows != stored.filter(pl.col("has_score")).height:
            reason = "the stored scores and the epoch's tokens disagree"
    nothing = pl.Series("paper_id", [], dtype=papers.schema["paper_id"])
    if reason is not None:
        return PaperScoresPlan(as_of, window, as_of.isoformat(), reason, papers, papers["paper_id"], nothing,
                               fingerprint=fingerprint)

    live = papers.select("paper_id")
    nearest_gone = stored.filter(pl.col("nearest_paper_id").is_not_null()).join(
        live, left_on="nearest_paper_id", right_on="paper_id", how="anti")["paper_id"]
    current_state = papers.select("paper_id", "inputs_digest").join(
        stored.filter(pl.col("has_score")).select("paper_id", stored_digest="inputs_digest"), on="paper_id", how="left")
    to_score = pl.concat([
        current_state.filter(pl.col("stored_digest").is_null() | (pl.col("stored_digest") != pl.col("inputs_digest")))["paper_id"],
        nearest_gone.filter(nearest_gone.is_in(live["paper_id"].implode())),
    ]).unique()
    removed = stored.join(live, on="paper_id", how="anti")["paper_id"]
    plan = PaperScoresPlan(as_of, window, current.epoch_id, None, papers, to_score, removed, fingerprint=fingerprint)
    if to_score.len():
        epoch_id = current.epoch_id
        plan.model = NoveltyModel.from_frames(
            fitted_papers,
            warehouse.read_frame(con, "SELECT term_id, stem, surface, df FROM cache.novelty_terms "
                                      "WHERE epoch_id = ? AND method_version = ?", [epoch_id, METHOD_VERSION]),
            warehouse.read_frame(con, "SELECT first_id, second_id, df FROM cache.novelty_bigrams "
                                      "WHERE epoch_id = ? AND method_version = ?", [epoch_id, METHOD_VERSION]))
        con.register("_novelty_dropped", pl.DataFrame({"paper_id": plan.dropped}).to_arrow())
        try:
            plan.tokens = warehouse.read_frame(con, """
                SELECT paper_id, title_terms, abstract_terms FROM cache.novelty_tokens
                WHERE epoch_id = ? AND method_version = ? AND paper_id NOT IN (SELECT paper_id FROM _novelty_dropped)""",
                [epoch_id, METHOD_VERSION])
            plan.group = warehouse.read_frame(con, """
                SELECT paper_id, category, year, novelty_raw, new_terms_share, new_term_pairs_share
                FROM marts.paper_scores WHERE paper_id NOT IN (SELECT paper_id FROM _novelty_dropped)""")
        finally:
            con.unregister("_novelty_dropped")
    return plan


def score_plan(plan: PaperScoresPlan) -> EpochScores | None:
    """The plan's scores in this process (one piece; ``pipelines.marts.scoring.chunks`` gives the same in
    chunks): a new epoch's fit, or the night's arrivals under the epoch (None: nothing to score)."""
    if plan.new_epoch:
        return score_epoch(plan.inputs, window=plan.window)
    if not plan.to_score.len():
        return None
    return score_arrivals(plan.inputs, plan.to_score, plan.model, plan.tokens, plan.group, window=plan.window)


# --- the same in steps: a plan in a folder, chunks scored apart, one write (the asset marts/paper_scores)


def save_plan(plan: PaperScoresPlan, folder: Path) -> None:
    """``plan`` as Parquet files and one JSON file in ``folder`` (what the chunk steps share)."""
    folder.mkdir(parents=True, exist_ok=True)
    plan.papers.write_parquet(folder / "plan.papers.parquet")
    pl.DataFrame({"to_score": plan.to_score}).write_parquet(folder / "plan.to_score.parquet")
    pl.DataFrame({"removed": plan.removed}).write_parquet(folder / "plan.removed.parquet")
    for name in ("tokens", "group"):
        if getattr(plan, name) is not None:
            getattr(plan, name).write_parquet(folder / f"plan.{name}.parquet")
    if plan.model is not None:
        chunks.save_model(plan.model, folder, "plan.model")
    (folder / "plan.json").write_text(json.dumps({
        "as_of": plan.as_of.isoformat(), "window": plan.window, "epoch_id": plan.epoch_id, "reason": plan.reason,
        "fingerprint": [list(part) for part in plan.fingerprint]}))


def load_plan(folder: Path) -> PaperScoresPlan:
    meta = json.loads((folder / "plan.json").read_text())

    def frame(name: str) -> pl.DataFrame | None:
        path = folder / f"plan.{name}.parquet"
        return pl.read_parquet(path) if path.exists() else None

    model = chunks.load_model(folder, "plan.model") if (folder / "plan.model.json").exists() else None
    return PaperScoresPlan(date.fromisoformat(meta["as_of"]), meta["window"], meta["epoch_id"], meta["reason"],
                           frame("papers"), frame("to_score")["to_score"], frame("removed")["removed"], model,
                           frame("tokens"), frame("group"), tuple(tuple(part) for part in meta["fingerprint"]))


def prepare_plan(plan: PaperScoresPlan) -> chunks.Prepared | None:
    """The plan tokenised (``chunks.prepare_epoch`` / ``chunks.prepare_arrivals``): what the chunks
    score (None: an incremental night with nothing to score)."""
    if plan.new_epoch:
        return chunks.prepare_epoch(plan.inputs)
    if not plan.to_score.len():
        return None
    return chunks.prepare_arrivals(plan.inputs, plan.to_score, plan.model, plan.tokens)


def finish_plan(plan: PaperScoresPlan, prepared: chunks.Prepared | None,
                components: list[pl.DataFrame]) -> EpochScores | None:
    """The night's scores from its chunks' components: ``score_plan``'s answer, the same to the bit."""
    if prepared is None:
        return None
    return chunks.finish(prepared, components, plan.group)


def build_paper_scores(con: duckdb.DuckDBPyConnection, as_of: date, *, novelty_window: int | None | str = "default",
                       epoch_days: int | None = EPOCH_DAYS, new_epoch: bool = False) -> PaperScoresNight:
    """Score the papers that have no score under the current novelty epoch (docs/scoring.md, "Epochs").

    A new epoch — vocabulary and IDF fitted on tonight's corpus, every paper re-scored — when there is
    none yet, the scorer's version or the window changed, the epoch is ``epoch_days`` old (the setting
    ``SCHOLARHOUSE_NOVELTY_EPOCH_DAYS``), or ``new_epoch`` (on demand: the run tag). Otherwise only new
    papers, papers whose inputs changed (sql/marts/paper_score_inputs.sql's digest) and papers whose
    nearest earlier paper is gone are scored, against tonight's corpus; every other row is kept. The
    reported columns follow the pages every night. One transaction; a re-run of the night changes nothing.

    In three parts, which the asset runs as separate steps (scoring in chunks between them):
    ``plan_paper_scores`` (read), ``score_plan`` (compute), ``write_paper_scores`` (one transaction).
    """
    plan = plan_paper_scores(con, as_of, novelty_window=novelty_window, epoch_days=epoch_days, new_epoch=new_epoch)
    return write_paper_scores(con, plan, score_plan(plan))


def write_paper_scores(con: duckdb.DuckDBPyConnection, plan: PaperScoresPlan,
                       night: EpochScores | None) -> PaperScoresNight:
    """Write a plan's scores (``score_plan``'s answer, or the chunks' ``chunks.finish``) in one transaction."""
    if plan.new_epoch:
        return _new_epoch(con, plan, night)
    epoch_id, dropped, removed = plan.epoch_id, plan.dropped, plan.removed
    new_rows = new_tokens = None
    appended_terms = pl.DataFrame()
    if night is not None and plan.to_score.len():
        papers = plan.papers
        new_rows = _score_rows(con, night.scores, epoch_id, plan.as_of)
        new_tokens = _keyed(night.tokens.join(papers.select("paper_id", "inputs_digest"), on="paper_id"), epoch_id)
        # stems met tonight for the first time, and stems whose readable word got shorter
        old_terms = plan.model.terms_frame().select("term_id", old_surface="surface")
        appended_terms = _keyed(night.model.terms_frame().join(old_terms, on="term_id", how="left").filter(
            pl.col("old_surface").is_null() | (pl.col("old_surface") != pl.col("surface"))).drop("old_surface"), epoch_id)

    with warehouse.transaction(con):
        if dropped.len():
            con.register("_novelty_dropped", pl.DataFrame({"paper_id": dropped}).to_arrow())
            con.execute("DELETE FROM marts.paper_scores WHERE paper_id IN (SELECT paper_id FROM _novelty_dropped)")
            con.execute("DELETE FROM cache.novelty_tokens WHERE epoch_id = ? AND method_version = ? "
                        "AND paper_id IN (SELECT paper_id FROM _novelty_dropped)", [epoch_id, METHOD_VERSION])
            con.unregister("_novelty_dropped")
        if new_rows is not None:
            warehouse.insert_frame(con, "marts.paper_scores", new_rows)
            warehouse.insert_frame(con, "cache.novelty_tokens", new_tokens)
        if appended_terms.height:
            con.register("_novelty_terms", appended_terms.select("term_id").to_arrow())
            con.execute("DELETE FROM cache.novelty_terms WHERE epoch_id = ? AND method_version = ? "
                        "AND term_id IN (SELECT term_id FROM _novelty_terms)", [epoch_id, METHOD_VERSION])
            con.unregister("_novelty_terms")
            warehouse.insert_frame(con, "cache.novelty_terms", appended_terms)
        _write_reports(con)
    rows = warehouse.scalar(con, "SELECT count(*) FROM marts.paper_scores")
    return PaperScoresNight(epoch_id, "incremental", None, 0 if new_rows is None else new_rows.height, removed.len(),
                            rows - (0 if new_rows is None else new_rows.height),
                            0 if new_rows is None else int(new_rows["cold_start"].sum() or 0), rows)


def _new_epoch(con: duckdb.DuckDBPyConnection, plan: PaperScoresPlan, fitted: EpochScores) -> PaperScoresNight:
    """Write a new epoch fitted on tonight's corpus, every paper re-scored (replacing the old epoch's model)."""
    epoch_id, as_of, window, reason, papers = plan.epoch_id, plan.as_of, plan.window, plan.reason, plan.papers
    rows = _score_rows(con, fitted.scores, epoch_id, as_of)
    tokens = _keyed(fitted.tokens.join(papers.select("paper_id", "inputs_digest"), on="paper_id"), epoch_id)
    epoch_row = pl.DataFrame([{
        "epoch_id": epoch_id, "method_version": METHOD_VERSION, "fitted_on": as_of, "papers": fitted.model.idf.n_docs,
        "terms": len(fitted.model.vocabulary), "bigrams": len(fitted.model.idf.bigram_codes),
        "novelty_window": window, "reason": reason, "fitted_at": datetime.now(timezone.utc)}],
        schema={"epoch_id": pl.String, "method_version": pl.String, "fitted_on": pl.Date, "papers": pl.Int64,
                "terms": pl.Int64, "bigrams": pl.Int64, "novelty_window": pl.Int64, "reason": pl.String,
                "fitted_at": pl.Datetime("us", "UTC")})

    def epoch_history() -> None:
        con.execute("DELETE FROM cache.novelty_epochs WHERE epoch_id = ? AND method_version = ?",
                    [epoch_id, METHOD_VERSION])
        warehouse.insert_frame(con, "cache.novelty_epochs", epoch_row)
        _write_reports(con)

    warehouse.replace_slice(con, [
        ("marts.paper_scores", rows),
        ("cache.novelty_terms", _keyed(fitted.model.terms_frame(), epoch_id)),
        ("cache.novelty_bigrams", _keyed(fitted.model.bigrams_frame(), epoch_id)),
        ("cache.novelty_tokens", tokens),
    ], after=epoch_history)
    return PaperScoresNight(epoch_id, "new epoch", reason, rows.height, 0, 0, int(rows["cold_start"].sum() or 0),
                            rows.height)


def build_marts(con: duckdb.DuckDBPyConnection, as_of: date, *, timer=None,
                novelty_window: int | None | str = "default", epoch_days: int | None = EPOCH_DAYS,
                new_epoch: bool = False) -> dict[str, int]:
    """Every mart, in dependency order (what `make bench` times; the assets run them one by one)."""
    from pipelines.timing import StageTimer

    timer = timer or StageTimer()
    counts = {}
    with timer.stage("marts"):
        counts["marts.author_metrics"] = build_author_metrics(con, as_of)
        counts["marts.citations"] = build_citations(con)
        night = build_paper_scores(con, as_of, novelty_window=novelty_window, epoch_days=epoch_days,
                                   new_epoch=new_epoch)
        counts["marts.paper_scores"] = night.rows
        counts["papers scored tonight"] = night.scored  # every paper on a new epoch's night
        counts["marts.author_scores"] = build_author_scores(con)
        counts["marts.collaboration_edges"] = build_collaboration_edges(con)
        counts["marts.nightly_summary"] = build_nightly_summary(con, as_of)
    return counts

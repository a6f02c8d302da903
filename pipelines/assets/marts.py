"""marts layer: metrics and citations with provenance, novelty and AI scores, collaboration edges.

Every mart is one step in the ``warehouse`` pool, except ``marts/paper_scores`` (novelty), a graph of
steps that exchange Parquet files in the novelty work folder beside the warehouse:

    plan_paper_scores (pool "warehouse")   read the inputs, decide the mode (new epoch / arrivals)
      -> prepare_novelty_chunks (no pool)  tokenise (fit the epoch), split by category into chunks
      -> score_novelty_chunk (no pool, one per chunk: SCHOLARHOUSE_NOVELTY_CHUNKS)
      -> write_paper_scores (pool "warehouse")  percentiles, one transaction

The scores are the same for any number of chunks (pipelines/marts/scoring/chunks.py).
"""

import shutil
from pathlib import Path

import dagster as dg
import polars as pl

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.marts import build as marts
from pipelines.assets.common import WAREHOUSE_POOL, night_window, preview, transient_retries
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import WarehouseResource
from pipelines.marts.scoring import chunks

CORE = lambda *names: [["core", n] for n in names]  # noqa: E731
COMMON = dict(group_name="marts", partitions_def=daily_partitions, pool=WAREHOUSE_POOL)


def _result(con, table: str, columns: list[str], **extra) -> dg.MaterializeResult:
    frame = warehouse.read_frame(con, f"SELECT * FROM {table} LIMIT 5")
    count = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    return dg.MaterializeResult(metadata={"dagster/row_count": count, "preview": preview(frame, columns), **extra})


@dg.asset(key=["marts", "author_metrics"],
          deps=[["staging", "profiles"], ["enrichment", "openalex_works"],
                *CORE("author_profiles", "authorships", "papers", "paper_identifiers", "id_redirects")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Per profile and capture date: every metric the source reports (h-index, citations, "
          "papers/works, followers, trust, Novelty %, AI Score) next to what the warehouse recomputes (papers "
          "held; citations, h-index and i10 from the per-paper counts of the person's papers, with their "
          "coverage and source), with provenance and the flags h_index_implausible and listing_incomplete. "
          "SQL: sql/marts/author_metrics.sql")
@transient_retries
def author_metrics(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect() as con:
        marts.build_author_metrics(con, night.day)
        flagged = con.execute(
            "SELECT count(*) FILTER (h_index_implausible), count(*) FILTER (listing_incomplete), "
            "count(*) FILTER (recomputed_h_index IS NOT NULL) "
            "FROM marts.author_metrics WHERE as_of = ?", [night.day]).fetchall()[0]
        return _result(con, "marts.author_metrics",
                       ["source", "profile_name", "reported_h_index", "recomputed_h_index", "citation_coverage",
                        "h_index_implausible", "listing_incomplete"],
                       h_index_implausible=flagged[0], listing_incomplete=flagged[1], profiles_recomputed=flagged[2])


@dg.asset(key=["marts", "citations"],
          deps=[["staging", "profiles"], ["enrichment", "openalex_works"],
                *CORE("author_profiles", "papers", "paper_identifiers", "id_redirects")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Citation counts over time with the change since the previous point: per profile "
          "(reported totals) and per paper (OpenAlex, when enriched: the nightly totals, and the citations "
          "received in each year from counts_by_year). Rebuilt over the whole history, so a backfill fills "
          "the series. SQL: sql/marts/citations.sql")
@transient_retries
def citations(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_citations(con)
        by_measure = dict(con.execute("SELECT level || ':' || measure, count(*) FROM marts.citations GROUP BY 1 ORDER BY 1").fetchall())
        return _result(con, "marts.citations", ["level", "measure", "source", "paper_id", "as_of", "year", "citations", "change"],
                       rows_by_measure=dg.MetadataValue.json(by_measure))


# A run tagged with this key and the value "new" fits a new novelty epoch (every paper re-scored).
NEW_EPOCH_TAG = "scholarhouse/novelty_epoch"


@dg.op(pool=WAREHOUSE_POOL, out=dg.Out(dict), ins={"papers": dg.In(dg.Nothing), "paper_listings": dg.In(dg.Nothing)},
       description="Read what tonight's novelty scoring needs (the papers' inputs; on an incremental night the "
       "epoch's model, the stored tokens and scores), decide the mode (a new epoch or tonight's arrivals) and "
       "write it as Parquet to the novelty work folder.")
@transient_retries
def plan_paper_scores(context: dg.OpExecutionContext, warehouse_db: WarehouseResource) -> dict:
    settings = warehouse_db.settings()
    landing.sweep_work_dirs(settings.novelty_work_dir)  # folders left by failed, abandoned runs
    folder = settings.novelty_work_dir / context.run_id
    asked = context.run.tags.get(NEW_EPOCH_TAG, "").strip().lower() == "new"
    day = night_window(context).day
    with warehouse_db.connect() as con:
        plan = marts.plan_paper_scores(con, day, novelty_window=settings.novelty_window,
                                       epoch_days=settings.novelty_epoch_days, new_epoch=asked, fingerprint=True)
    marts.save_plan(plan, folder)
    context.log.info(f"{plan.epoch_id}: {'new epoch (' + plan.reason + ')' if plan.new_epoch else 'incremental'}, "
                     f"{plan.to_score.len()} papers to score in up to {settings.novelty_chunks} chunk(s)")
    return {"folder": str(folder), "chunks": settings.novelty_chunks, "new_epoch_asked": asked,
            "epoch_days": settings.novelty_epoch_days}


@dg.op(out=dg.DynamicOut(dict),
       description="Tokenise the papers to score (a new epoch: every paper, and fit its IDF) and split them by "
       "category into chunks of similar work (SCHOLARHOUSE_NOVELTY_CHUNKS). No database.")
@transient_retries
def prepare_novelty_chunks(context: dg.OpExecutionContext, plan: dict):
    folder = Path(plan["folder"])
    scoring = marts.load_plan(folder)
    prepared = marts.prepare_plan(scoring)
    parts = [] if prepared is None else chunks.assign_chunks(prepared, plan["chunks"], window=scoring.window)
    if prepared is not None:
        chunks.save_prepared(prepared, folder / "prepared")
    context.log.info(f"{scoring.to_score.len()} papers to score in {len(parts)} chunk(s): "
                     f"{', '.join(str(len(rows)) for rows in parts) or 'none'}")
    for index, rows in enumerate(parts or [None]):  # at least one item, so the write step runs
        yield dg.DynamicOutput(
            {**plan, "index": index, "window": scoring.window,
             "rows": None if rows is None else str(chunks.save_rows(rows, folder, index)),
             "papers": 0 if rows is None else len(rows)},
            mapping_key=f"c{index:05d}")


@dg.op(out=dg.Out(dict),
       description="Score one chunk of papers (distance to their earlier papers in the category, new terms and "
       "pairs) against the whole corpus, and write the components as Parquet. No database, so chunks run side "
       "by side on multi-process executors.")
@transient_retries
def score_novelty_chunk(context: dg.OpExecutionContext, chunk: dict) -> dict:
    if chunk["rows"] is None:
        return {**chunk, "components": None}
    folder = Path(chunk["folder"])
    prepared = chunks.load_prepared(folder / "prepared")
    components = chunks.score_chunk(prepared, chunks.load_rows(Path(chunk["rows"])), window=chunk["window"])
    context.log.info(f"chunk {chunk['index']}: {components.height} papers scored")
    return {**chunk, "components": str(chunks.save_chunk(components, folder, chunk["index"]))}


@dg.op(pool=WAREHOUSE_POOL, out=dg.Out(dg.Nothing),
       description="Percentiles within category and year over the chunks' scores, and one transaction that "
       "writes marts.paper_scores and the epoch's cache tables (re-scored in this step, in one piece, if the "
       "warehouse changed since the plan).")
@transient_retries
def write_paper_scores(context: dg.OpExecutionContext, warehouse_db: WarehouseResource, scored: list[dict]):
    settings = warehouse_db.settings()
    first = min(scored, key=lambda c: c["index"])
    folder = Path(first["folder"])
    plan = marts.load_plan(folder)
    prepared = chunks.load_prepared(folder / "prepared") if (folder / "prepared").exists() else None
    components = [pl.read_parquet(c["components"]) for c in sorted(scored, key=lambda c: c["index"])
                  if c["components"] is not None]
    with warehouse_db.connect() as con:
        if marts.scores_fingerprint(con) == plan.fingerprint:
            night = marts.write_paper_scores(con, plan, marts.finish_plan(plan, prepared, components))
        else:  # another run wrote the inputs or the scores since the plan: the chunks' work is stale
            context.log.warning("the warehouse changed since the plan: scoring the night again in this step")
            night = marts.build_paper_scores(con, plan.as_of, novelty_window=settings.novelty_window,
                                             epoch_days=first["epoch_days"], new_epoch=first["new_epoch_asked"])
        result = _result(con, "marts.paper_scores",
                         ["paper_id", "category", "novelty_raw", "novelty_percentile", "novelty_score"],
                         method_version=marts.METHOD_VERSION, epoch_id=night.epoch_id, mode=night.mode,
                         new_epoch_reason=night.reason or "", papers_scored_tonight=night.scored,
                         scores_kept=night.kept, scores_removed=night.removed, cold_start=night.cold_start,
                         novelty_chunks=len(components))
    shutil.rmtree(folder, ignore_errors=True)
    return dg.Output(None, metadata=result.metadata)


@dg.graph_asset(key=["marts", "paper_scores"],
                ins={"papers": dg.AssetIn(key=["core", "papers"], dagster_type=dg.Nothing),
                     "paper_listings": dg.AssetIn(key=["core", "paper_listings"], dagster_type=dg.Nothing)},
                kinds={"duckdb", "polars"}, group_name="marts", partitions_def=daily_partitions,
                description="Per paper: the score sources report (Scholar Feed) and our own novelty score — distance "
                "to the most similar earlier papers in the same category (TF-IDF), its percentile within category "
                "and year, and the share of new terms. Scored once, when the paper arrives, with the vocabulary and "
                "IDF of the current epoch (epoch_id); every paper is re-scored in a new epoch: weekly "
                "(SCHOLARHOUSE_NOVELTY_EPOCH_DAYS), on a new scorer version, or for a run tagged "
                f"{NEW_EPOCH_TAG}=new. Scored in SCHOLARHOUSE_NOVELTY_CHUNKS chunk steps outside the warehouse "
                "pool, between a plan and a write step. Definition: docs/scoring.md")
def paper_scores(papers, paper_listings):
    """Plan (pool) -> chunks (no pool, side by side on multi-process executors) -> write (pool)."""
    scored = prepare_novelty_chunks(plan_paper_scores(papers=papers, paper_listings=paper_listings)).map(score_novelty_chunk)
    return write_paper_scores(scored.collect())


@dg.asset(key=["marts", "author_scores"], deps=[["marts", "paper_scores"], *CORE("authors", "authorships", "author_profiles")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Per author and source: reported Novelty % and AI Score, and our computed author novelty "
          "(mean paper percentile, with the paper count behind it). SQL: sql/marts/author_scores.sql")
@transient_retries
def author_scores(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_author_scores(con)
        return _result(con, "marts.author_scores", ["author_id", "source", "reported_novelty_pct", "computed_novelty", "papers_scored"])


@dg.asset(key=["marts", "collaboration_edges"], deps=CORE("authorships", "papers"),
          kinds={"duckdb", "sql"}, **COMMON,
          description="One row per unordered author pair who share a paper: papers_count, first/last year, the "
          "paper ids and the evidence. No self-edges; truncated bylines never invent edges. "
          "SQL: sql/marts/collaboration_edges.sql")
@transient_retries
def collaboration_edges(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_collaboration_edges(con)
        return _result(con, "marts.collaboration_edges", ["author_a", "author_b", "papers_count", "first_year", "last_year"])


@dg.asset(key=["marts", "nightly_summary"],
          deps=[["raw", "page_captures"], ["staging", "profiles"], ["staging", "listings"], ["staging", "rejects"],
                ["staging", "quality_issues"], *CORE("papers", "authors", "match_review"), ["marts", "collaboration_edges"]],
          kinds={"duckdb", "sql"}, **COMMON,
          description="One row per night: what it landed (pages, profiles, listings, rejects, values with an issue) "
          "and what the warehouse held after it (papers, authors, the review queue by entity, collaboration edges). "
          "The nightly report draws the nights from it. SQL: sql/marts/nightly_summary.sql")
@transient_retries
def nightly_summary(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect() as con:
        # A night's row says what the night landed: for a night that never ran (this asset
        # materialised alone from the UI) it would be a row of zeros beside the warehouse's counts.
        landed = warehouse.scalar(con, "SELECT count(*) FROM raw.fetches WHERE partition_date = ?", [night.day])
        if not landed and night.key not in context.instance.get_materialized_partitions(dg.AssetKey(["raw", "page_captures"])):
            raise dg.Failure(f"night {night.key} has not landed: raw/page_captures has no materialisation and "
                             f"raw.fetches no rows for it. Materialise the night (or its backfill) first.",
                             allow_retries=False)
        marts.build_nightly_summary(con, night.day)
        return _result(con, "marts.nightly_summary",
                       ["as_of", "pages", "profiles", "rejects", "review_paper_pairs", "review_author_pairs"])

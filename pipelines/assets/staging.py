"""staging layer: typed rows parsed from the day's raw captures.

A graph of three steps, so the CPU-heavy parse can spread over workers while the warehouse keeps
one writer:

    plan_parse_shards (pool "warehouse")   export the pages to parse as Parquet shards
      -> parse_shard  (no pool, one per shard)   parse a shard; no database
      -> write_staging (pool "warehouse")  one transaction: a row per fetch of the night (the stored
                                           parse it shows) + the night's new parses, each stored once

With the default in-process executor the shards run one after another (each using a process
pool of its own); on the multiprocess, Celery or Kubernetes executors they run side by side.
"""

import shutil
from pathlib import Path

import dagster as dg
import polars as pl

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.assets.common import WAREHOUSE_POOL, NightWindow, night_window, preview, transient_retries
from pipelines.orchestration.executors import DISTRIBUTED, executor_kind
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import WarehouseResource
from pipelines.settings import Settings


def _parse_workers(context: dg.OpExecutionContext) -> int | None:
    """One parse process per shard step when the run already runs steps side by side (multiprocess,
    Celery, Kubernetes: the executor is the parallelism); otherwise the shard uses a process pool of
    its own, of SCHOLARHOUSE_PARSE_WORKERS processes (None: landing.parse_workers decides)."""
    kind = executor_kind(context.run_config, default=Settings.one_from_env("executor"))
    return 1 if kind in DISTRIBUTED else Settings.one_from_env("parse_workers")


@dg.op(
    ins={"raw_pages": dg.In(dg.Nothing)},
    out=dg.DynamicOut(dict),
    pool=WAREHOUSE_POOL,
    description="Find the partition's pages that need parsing (unchanged pages reuse their stored parse) "
    "and export them as Parquet shards of SCHOLARHOUSE_PARSE_SHARD_PAGES pages.",
)
@transient_retries
def plan_parse_shards(context: dg.OpExecutionContext, warehouse_db: WarehouseResource):
    settings = warehouse_db.settings()
    landing.sweep_work_dirs(settings.parse_work_dir)  # shards left by failed, abandoned runs
    work = settings.parse_work_dir / context.run_id
    night = night_window(context)
    with warehouse_db.connect() as con:
        plan = landing.plan_parse(con, night.day, work, shard_pages=settings.parse_shard_pages)
    context.log.info(
        f"{night.key}: {plan['pages_to_parse']} pages to parse in {len(plan['shards'])} shard(s), "
        f"{plan['pages_unchanged_reused']} unchanged pages to copy"
    )
    # Always at least one item, so the write step runs (and copies the unchanged pages) even on a
    # night where nothing needs parsing.
    shards = plan["shards"] or [{"day": night.key, "path": None, "pages": 0}]
    for k, shard in enumerate(shards):
        yield dg.DynamicOutput(
            {**shard, "reused": plan["pages_unchanged_reused"] if k == 0 else 0},
            mapping_key=f"d{night.day:%Y%m%d}_s{k:05d}",
        )


@dg.op(
    description="Parse one shard of pages into profile, listing and reject rows (Parquet beside the "
    "shard). Touches no database, so shards run in parallel on multi-process executors.",
)
@transient_retries
def parse_shard(context: dg.OpExecutionContext, shard: dict) -> dict:
    if shard["path"] is None:
        return {"day": shard["day"], "pages": 0, "reused": shard["reused"]}
    parsed = landing.parse_shard(shard, workers=_parse_workers(context))
    context.log.info(
        f"shard of {shard['pages']} pages: {parsed['parsed_profiles']} profiles, "
        f"{parsed['parsed_listings']} listings, {parsed['parsed_rejects']} rejects"
    )
    return {**parsed, "reused": shard["reused"]}


@dg.op(
    out={
        "profiles": dg.Out(dg.Nothing),
        "listings": dg.Out(dg.Nothing),
        "rejects": dg.Out(dg.Nothing),
        "quality_issues": dg.Out(dg.Nothing),
    },
    pool=WAREHOUSE_POOL,
    description="Replace the partition's rows of the four staging tables in one transaction, accounting "
    "for every fetch (its own profile or reject rows).",
)
@transient_retries
def write_staging(context: dg.OpExecutionContext, warehouse_db: WarehouseResource, parsed: list[dict]):
    night = night_window(context)
    with warehouse_db.connect() as con:
        landing.write_staging(con, night.day, [p for p in parsed if p.get("pages")])
        profile_meta, listing_meta, reject_meta, issue_meta = _metadata(con, night)
    # The folders the shards were written to (a re-execution reuses its parent run's shards).
    for folder in {Path(p["profiles"]).parent for p in parsed if p.get("profiles")}:
        shutil.rmtree(folder, ignore_errors=True)
    profile_meta["pages_parsed"] = sum(p["pages"] for p in parsed)
    profile_meta["pages_unchanged_reused"] = sum(p["reused"] for p in parsed)
    profile_meta["parse_shards"] = sum(1 for p in parsed if p.get("pages"))
    yield dg.Output(None, "profiles", metadata=profile_meta)
    yield dg.Output(None, "listings", metadata=listing_meta)
    yield dg.Output(None, "rejects", metadata=reject_meta)
    yield dg.Output(None, "quality_issues", metadata=issue_meta)


def _metadata(con, night: NightWindow) -> tuple[dict, dict, dict, dict]:
    """What the night now holds, parsed or copied: figures by SQL, a few rows for the preview."""
    span = "partition_date = ?"
    window = [night.day]

    def figure(sql: str) -> object:
        return warehouse.scalar(con, sql.format(span=span), window)

    def head(table: str) -> pl.DataFrame:
        return warehouse.read_frame(con, f"SELECT * FROM {table} WHERE {span} ORDER BY 1 LIMIT 5", window)

    def by(table: str, column: str) -> dict:
        return dict(warehouse.read_frame(
            con, f"SELECT {column}, count(*) FROM {table} WHERE {span} GROUP BY 1 ORDER BY 1", window).iter_rows())

    profile_meta = {
        "dagster/row_count": figure("SELECT count(*) FROM staging.profiles WHERE {span}"),
        "preview": preview(head("staging.profiles"), ["source", "name", "h_index", "citations", "declared_items", "listed_items"]),
        "profiles_by_source": by("staging.profiles", "source"),
        "declared_more_than_listed": figure("SELECT count(*) FROM staging.profiles WHERE {span} AND declared_items > listed_items"),
    }
    listing_meta = {
        "dagster/row_count": figure("SELECT count(*) FROM staging.listings WHERE {span}"),
        "preview": preview(head("staging.listings"), ["source", "position", "title", "year", "category", "byline_truncated"]),
        "with_arxiv_id": figure("SELECT count(*) FROM staging.listings WHERE {span} AND arxiv_id IS NOT NULL"),
        "truncated_bylines": figure("SELECT count(*) FROM staging.listings WHERE {span} AND byline_truncated"),
    }
    reject_meta = {
        "dagster/row_count": figure("SELECT count(*) FROM staging.rejects WHERE {span}"),
        "preview": preview(head("staging.rejects"), ["reason", "detail", "url", "position"]),
        "rejects_by_reason": by("staging.rejects", "reason"),
        "rejects_by_stage": by("staging.rejects", "stage"),
    }
    issue_meta = {
        "dagster/row_count": figure("SELECT count(*) FROM staging.quality_issues WHERE {span}"),
        "preview": preview(head("staging.quality_issues"), ["reason", "field", "action", "raw_value", "url"]),
        "issues_by_reason": by("staging.quality_issues", "reason"),
        "issues_by_action": by("staging.quality_issues", "action"),
    }
    return profile_meta, listing_meta, reject_meta, issue_meta


@dg.graph_multi_asset(
    name="staging_tables",
    ins={"raw_pages": dg.AssetIn(key=["raw", "page_captures"], dagster_type=dg.Nothing)},
    outs={
        "profiles": dg.AssetOut(
            key=["staging", "profiles"], kinds={"duckdb", "polars"},
            description="One row per profile capture: the researcher's name and every metric the page "
            "reports (trust, works, h-index, citations, Novelty %, AI Score), with declared vs listed counts.",
        ),
        "listings": dg.AssetOut(
            key=["staging", "listings"], kinds={"duckdb", "polars"},
            description="One row per paper listed on a profile capture: title (raw and normalised), "
            "abstract, type/venue/year or score/category/date/Code, byline and whether it was cut with "
            "'et al.', arXiv id and code URLs.",
        ),
        "rejects": dg.AssetOut(
            key=["staging", "rejects"], kinds={"duckdb", "polars"},
            description="Every fetch, page or item that was dropped, with a stable reason code and "
            "detail: every fetch of the night has its own profile or reject rows. Nothing is dropped silently.",
        ),
        "quality_issues": dg.AssetOut(
            key=["staging", "quality_issues"], kinds={"duckdb", "polars"},
            description="Every value that landed repaired or doubtful (a count too large for its column, "
            "an impossible date, a guessed encoding, a sidecar that is not JSON ...), with the raw text "
            "and what was stored instead.",
        ),
    },
    partitions_def=daily_partitions,
    group_name="staging",
)
def staging_tables(raw_pages):
    """Parse the day's raw captures (sharded) and replace the day's staging rows in one transaction."""
    parsed = plan_parse_shards(raw_pages).map(parse_shard)
    profiles, listings, rejects, quality_issues = write_staging(parsed.collect())
    return {"profiles": profiles, "listings": listings, "rejects": rejects, "quality_issues": quality_issues}

"""staging layer: typed rows parsed from the day's raw captures."""

import dagster as dg
import polars as pl

from pipelines import landing, warehouse
from pipelines.assets.common import RETRY, WAREHOUSE_POOL, preview
from pipelines.partitions import daily_partitions, partition_dates
from pipelines.resources import WarehouseResource

STAGING_TABLES = ("staging.profiles", "staging.listings", "staging.rejects")


@dg.multi_asset(
    name="staging_tables",
    specs=[
        dg.AssetSpec(
            ["staging", "profiles"], deps=[["raw", "page_captures"]], group_name="staging",
            kinds={"duckdb", "polars"},
            description="One row per profile capture: the researcher's name and every metric the page "
            "reports (trust, works, h-index, citations, Novelty %, AI Score), with declared vs listed counts.",
        ),
        dg.AssetSpec(
            ["staging", "listings"], deps=[["raw", "page_captures"]], group_name="staging",
            kinds={"duckdb", "polars"},
            description="One row per paper listed on a profile capture: title (raw and normalised), "
            "abstract, type/venue/year or score/category/date/Code, byline and whether it was cut with "
            "'et al.', arXiv id and code URLs.",
        ),
        dg.AssetSpec(
            ["staging", "rejects"], deps=[["raw", "page_captures"]], group_name="staging",
            kinds={"duckdb", "polars"},
            description="Every capture (or item) that could not be parsed, with a stable reason code "
            "and detail. Nothing is dropped silently.",
        ),
    ],
    partitions_def=daily_partitions,
    pool=WAREHOUSE_POOL,
    retry_policy=RETRY,
)
def staging_tables(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
    """Parse the day's raw captures; replace the day's rows of the three staging tables in one transaction."""
    days = partition_dates(context)
    with warehouse_db.connect() as con:
        runs = [landing.stage_partition(con, day) for day in days]
        parsed = sum(r["pages_parsed"] for r in runs)
        reused = sum(r["pages_unchanged_reused"] for r in runs)
        # What the partition(s) now hold, parsed or copied: figures by SQL, a few rows for the preview.
        span = "partition_date BETWEEN ? AND ?"
        window = [days[0], days[-1]]
        def figure(sql: str) -> object:
            return warehouse.scalar(con, sql.format(span=span), window)
        def head(table: str) -> pl.DataFrame:
            return warehouse.read_frame(con, f"SELECT * FROM {table} WHERE {span} ORDER BY 1 LIMIT 5", window)
        profile_meta = {
            "dagster/row_count": figure("SELECT count(*) FROM staging.profiles WHERE {span}"),
            "preview": preview(head("staging.profiles"), ["source", "name", "h_index", "citations", "declared_items", "listed_items"]),
            "profiles_by_source": dict(warehouse.read_frame(con, f"SELECT source, count(*) FROM staging.profiles WHERE {span} GROUP BY 1 ORDER BY 1", window).iter_rows()),
            "declared_more_than_listed": figure("SELECT count(*) FROM staging.profiles WHERE {span} AND declared_items > listed_items"),
            "pages_parsed": parsed,
            "pages_unchanged_reused": reused,
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
            "rejects_by_reason": dict(warehouse.read_frame(con, f"SELECT reason, count(*) FROM staging.rejects WHERE {span} GROUP BY 1 ORDER BY 1", window).iter_rows()),
        }
    yield dg.MaterializeResult(asset_key=["staging", "profiles"], metadata=profile_meta)
    yield dg.MaterializeResult(asset_key=["staging", "listings"], metadata=listing_meta)
    yield dg.MaterializeResult(asset_key=["staging", "rejects"], metadata=reject_meta)

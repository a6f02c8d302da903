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
    outputs = {t: [] for t in STAGING_TABLES}
    for day in partition_dates(context):
        with warehouse_db.connect() as con:
            raw = warehouse.read_frame(
                con, "SELECT * FROM raw.page_captures WHERE partition_date = ? ORDER BY url", [day]
            )
            profiles, listings, rejects = landing.stage_captures(raw)
            warehouse.replace_slice(
                con,
                [("staging.profiles", profiles), ("staging.listings", listings), ("staging.rejects", rejects)],
                where="partition_date = ?", params=[day],
            )
        for table, frame in zip(STAGING_TABLES, (profiles, listings, rejects)):
            outputs[table].append(frame)
    profiles, listings, rejects = (pl.concat(outputs[t]) for t in STAGING_TABLES)
    reasons = rejects.group_by("reason").len().sort("reason")
    yield dg.MaterializeResult(
        asset_key=["staging", "profiles"],
        metadata={
            "dagster/row_count": profiles.height,
            "preview": preview(profiles, ["source", "name", "h_index", "citations", "declared_items", "listed_items"]),
            "profiles_by_source": dict(profiles.group_by("source").len().iter_rows()),
            "declared_more_than_listed": int((profiles["declared_items"].fill_null(0) > profiles["listed_items"]).sum()),
        },
    )
    yield dg.MaterializeResult(
        asset_key=["staging", "listings"],
        metadata={
            "dagster/row_count": listings.height,
            "preview": preview(listings, ["source", "position", "title", "year", "category", "byline_truncated"]),
            "with_arxiv_id": int(listings["arxiv_id"].is_not_null().sum()),
            "truncated_bylines": int(listings["byline_truncated"].sum() or 0),
        },
    )
    yield dg.MaterializeResult(
        asset_key=["staging", "rejects"],
        metadata={
            "dagster/row_count": rejects.height,
            "preview": preview(rejects, ["reason", "detail", "url", "position"]),
            "rejects_by_reason": dict(reasons.iter_rows()),
        },
    )

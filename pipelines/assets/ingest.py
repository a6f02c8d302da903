"""raw layer: land every page of the partition exactly as it arrived."""

import dagster as dg

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.assets.common import WAREHOUSE_POOL, night_window, preview, transient_retries
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import PageSourceResource, WarehouseResource


@dg.asset(
    key=["raw", "page_captures"],
    group_name="raw",
    partitions_def=daily_partitions,
    kinds={"duckdb", "python"},
    pool=WAREHOUSE_POOL,
    description=(
        "Every page captured for the day, byte for byte: one row per fetch (a url on the night, or one "
        "file of a captures folder: `fetch_id`) with the body's sha256 `capture_id`, site, capture time, "
        "HTTP status and body. Nothing is ever dropped here — bad pages, and files the source refused to "
        "read, land too and are rejected downstream with a reason. Re-running replaces the day's rows."
    ),
)
@transient_retries
def page_captures(
    context: dg.AssetExecutionContext, page_source: PageSourceResource, warehouse_db: WarehouseResource
) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect() as con:
        totals = landing.land_partition(con, page_source.iter_captures(night.day), night.day)
        head = warehouse.read_frame(
            con, "SELECT source, source_profile_id, url, byte_size, captured_at FROM raw.page_captures "
            "WHERE partition_date = ? ORDER BY url LIMIT 5", [night.day])
    context.log.info(f"landed {totals['pages']} pages from {page_source.describe()}")
    if totals["fetch_rejects"] or totals["capture_issues"]:
        reasons = ", ".join(f"{r} {n}" for r, n in sorted(totals["fetch_rejects_by_reason"].items()))
        context.log.warning(f"{totals['fetch_rejects']} page(s) not delivered by the source ({reasons or 'none'}); "
                            f"{totals['capture_issues']} capture issue(s): staging.rejects / staging.quality_issues")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": totals["pages"],
            "preview": preview(head),
            "pages_read": totals["pages"],
            "bytes_read": totals["bytes"],
            "pages_by_source": totals["by_source"],
            "fetch_rejects": totals["fetch_rejects"],
            "fetch_rejects_by_reason": totals["fetch_rejects_by_reason"],
            "capture_issues": totals["capture_issues"],
            "not_modified": totals["not_modified"],
            "source": page_source.describe(),
            "warehouse": str(warehouse_db.resolved_path()),
        }
    )

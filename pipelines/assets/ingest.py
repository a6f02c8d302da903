"""raw layer: land every page of the partition exactly as it arrived."""

import dagster as dg

from pipelines import landing, warehouse
from pipelines.assets.common import WAREHOUSE_POOL, preview, transient_retries
from pipelines.partitions import daily_partitions, partition_dates
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
    totals: dict = {"pages": 0, "bytes": 0, "fetch_rejects": 0, "not_modified": 0, "capture_issues": 0,
                    "by_source": {}, "fetch_rejects_by_reason": {}}
    days = partition_dates(context)
    with warehouse_db.connect() as con:
        for day in days:
            stats = landing.land_partition(con, page_source.iter_captures(day), day)
            for key in ("pages", "bytes", "fetch_rejects", "not_modified", "capture_issues"):
                totals[key] += stats[key]
            for group in ("by_source", "fetch_rejects_by_reason"):
                for name, n in stats[group].items():
                    totals[group][name] = totals[group].get(name, 0) + n
        head = warehouse.read_frame(
            con, "SELECT source, source_profile_id, url, byte_size, captured_at FROM raw.page_captures "
            "WHERE partition_date BETWEEN ? AND ? ORDER BY url LIMIT 5", [days[0], days[-1]])
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

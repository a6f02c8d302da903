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
        "Every page captured for the day, byte for byte: one row per page (url) with its sha256 "
        "`capture_id`, site, capture time, HTTP status and body. Nothing is ever dropped here — bad "
        "pages land too and are rejected downstream with a reason. Re-running replaces the day's rows."
    ),
)
@transient_retries
def page_captures(
    context: dg.AssetExecutionContext, page_source: PageSourceResource, warehouse_db: WarehouseResource
) -> dg.MaterializeResult:
    totals: dict = {"pages": 0, "bytes": 0, "fetch_rejects": 0, "not_modified": 0, "by_source": {}}
    days = partition_dates(context)
    with warehouse_db.connect() as con:
        for day in days:
            stats = landing.land_partition(con, page_source.iter_captures(day), day)
            for key in ("pages", "bytes", "fetch_rejects", "not_modified"):
                totals[key] += stats[key]
            for source, n in stats["by_source"].items():
                totals["by_source"][source] = totals["by_source"].get(source, 0) + n
        head = warehouse.read_frame(
            con, "SELECT source, source_profile_id, url, byte_size, captured_at FROM raw.page_captures "
            "WHERE partition_date BETWEEN ? AND ? ORDER BY url LIMIT 5", [days[0], days[-1]])
    context.log.info(f"landed {totals['pages']} pages from {page_source.describe()}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": totals["pages"],
            "preview": preview(head),
            "pages_read": totals["pages"],
            "bytes_read": totals["bytes"],
            "pages_by_source": totals["by_source"],
            "fetch_rejects": totals["fetch_rejects"],
            "not_modified": totals["not_modified"],
            "source": page_source.describe(),
            "warehouse": str(warehouse_db.resolved_path()),
        }
    )

"""raw layer: land every page of the partition exactly as it arrived."""

from collections import Counter

import dagster as dg
import polars as pl

from pipelines import landing, warehouse
from pipelines.assets.common import RETRY, WAREHOUSE_POOL, table_metadata
from pipelines.partitions import daily_partitions, partition_dates
from pipelines.resources import PageSourceResource, WarehouseResource


@dg.asset(
    key=["raw", "page_captures"],
    group_name="raw",
    partitions_def=daily_partitions,
    kinds={"duckdb", "python"},
    pool=WAREHOUSE_POOL,
    retry_policy=RETRY,
    description=(
        "Every page captured for the day, byte for byte: one row per page (url) with its sha256 "
        "`capture_id`, site, capture time, HTTP status and body. Nothing is ever dropped here — bad "
        "pages land too and are rejected downstream with a reason. Re-running replaces the day's rows."
    ),
)
def page_captures(
    context: dg.AssetExecutionContext, page_source: PageSourceResource, warehouse_db: WarehouseResource
) -> dg.MaterializeResult:
    frames = []
    for day in partition_dates(context):
        frame = landing.raw_rows(page_source.iter_captures(day), day)
        with warehouse_db.connect() as con:
            warehouse.replace_slice(con, [("raw.page_captures", frame)], where="partition_date = ?", params=[day])
        frames.append(frame)
    frame = pl.concat(frames)
    by_source = Counter(frame["source"].to_list())
    context.log.info(f"landed {frame.height} pages from {page_source.describe()}")
    return dg.MaterializeResult(
        metadata=table_metadata(
            frame, ["source", "source_profile_id", "url", "byte_size", "captured_at"],
            pages_read=frame.height,
            bytes_read=int(frame["byte_size"].sum() or 0),
            pages_by_source=dict(by_source),
            fetch_rejects=int(frame["fetch_reject"].is_not_null().sum()),
            not_modified=int(frame["not_modified"].sum() or 0),
            source=page_source.describe(),
            warehouse=str(warehouse_db.resolved_path()),
        )
    )

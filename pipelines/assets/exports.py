"""exports layer: Parquet for apps and a read-only analytics copy for analysts."""

import dagster as dg

from pipelines import publish
from pipelines.assets.common import WAREHOUSE_POOL, transient_retries
from pipelines.partitions import daily_partitions, partition_dates
from pipelines.resources import WarehouseResource

MART_KEYS = [["marts", n] for n in ("author_metrics", "citations", "paper_scores", "author_scores", "collaboration_edges",
                                                     "nightly_summary")]
CORE_KEYS = [["core", n] for n in ("papers", "paper_listings", "authors", "author_names", "author_profiles",
                                   "authorships", "match_review", "id_redirects")]


@dg.asset(key=["exports", "parquet"], deps=MART_KEYS + CORE_KEYS, group_name="exports", partitions_def=daily_partitions,
          pool=WAREHOUSE_POOL, kinds={"parquet", "duckdb"},
          description="Every core and mart table as Parquet under warehouse/exports/<date>/, with a manifest.json "
          "(tables, row counts, schema, checksums, generated_at, code version). `latest` is repointed "
          "atomically, so apps never read a half-written export.")
@transient_retries
def exports_parquet(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    day = max(partition_dates(context))
    with warehouse_db.connect(read_only=True) as con:
        info = publish.export_tables(con, warehouse_db.exports_dir, day)
    rows = {t: v["rows"] for t, v in info["tables"].items()}
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(info["path"]),
        "tables": len(rows),
        "rows_by_table": rows,
        "code_version": info["code_version"],
        "dagster/row_count": sum(rows.values()),
    })


@dg.asset(key=["exports", "analytics_copy"], deps=MART_KEYS + CORE_KEYS, group_name="exports",
          partitions_def=daily_partitions, pool=WAREHOUSE_POOL, kinds={"duckdb"},
          description="warehouse/analytics.duckdb: a complete copy of the warehouse for analysts, swapped in "
          "atomically after each run. Open it read-only; never open the live file while runs may write.")
@transient_retries
def analytics_copy(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect():  # makes sure the schema exists; closing checkpoints the file
        pass
    info = publish.publish_analytics_copy(warehouse_db.resolved_path(), warehouse_db.analytics_path)
    return dg.MaterializeResult(metadata={"path": dg.MetadataValue.path(info["path"]), "bytes": info["bytes"]})

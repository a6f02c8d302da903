"""exports layer: Parquet for apps, a read-only analytics copy for analysts, and the nightly report."""

import base64

import dagster as dg

from pipelines.publish import exports as publish
from pipelines.publish import report
from pipelines.assets.common import WAREHOUSE_POOL, night_window, transient_retries
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import WarehouseResource
from pipelines.warehouse import contract

# Every core and mart asset (the tables exported), from the one list of tables.
MART_KEYS = [contract.asset_key(t) for t in contract.asset_tables("marts")]
CORE_KEYS = [contract.asset_key(t) for t in contract.asset_tables("core")]


@dg.asset(key=["exports", "parquet"], deps=MART_KEYS + CORE_KEYS, group_name="exports", partitions_def=daily_partitions,
          pool=WAREHOUSE_POOL, kinds={"parquet", "duckdb"},
          description="Every core and mart table as Parquet under warehouse/exports/<date>/, with a manifest.json "
          "(tables, row counts, schema, checksums, generated_at, code version, the report). The tables are "
          "staged; exports/report publishes them with the night's report, repointing <date> and `latest` "
          "atomically, so apps never read a half-written or report-less export. Materialised without "
          "exports/report, it publishes them itself, beside the date's current report.")
@transient_retries
def exports_parquet(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect(read_only=True) as con:
        info = publish.export_tables(con, warehouse_db.exports_dir, night.day)
    published = not _report_step_runs(context)
    if published:  # no report step will publish them (the tables re-materialised alone)
        publish.publish_export(warehouse_db.exports_dir, night.day)
    rows = {t: v["rows"] for t, v in info["tables"].items()}
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(info["path"]),
        "published": published,
        "tables": len(rows),
        "rows_by_table": rows,
        "code_version": info["code_version"],
        "dagster/row_count": sum(rows.values()),
    })


def _report_step_runs(context: dg.AssetExecutionContext) -> bool:
    """Whether this run executes exports/report too: the run's plan, since the UI can pick any steps."""
    snapshot_id = context.run.execution_plan_snapshot_id
    if snapshot_id is None:  # no plan to read: leave the tables staged, readers keep a complete export
        return True
    plan = context.instance.get_execution_plan_snapshot(snapshot_id)
    return nightly_report.op.name in plan.step_keys_to_execute


@dg.asset(key=["exports", "analytics_copy"], deps=MART_KEYS + CORE_KEYS, group_name="exports",
          partitions_def=daily_partitions, pool=WAREHOUSE_POOL, kinds={"duckdb"},
          description="warehouse/analytics.duckdb: a complete copy of the warehouse for analysts, swapped in "
          "atomically after each run. Open it read-only; never open the live file while runs may write.")
@transient_retries
def analytics_copy(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect():  # makes sure the schema exists; closing checkpoints the file
        pass
    settings = warehouse_db.settings()
    info = publish.publish_analytics_copy(settings.warehouse, settings.analytics_path,
                                          memory_limit=settings.duckdb_memory_limit)
    return dg.MaterializeResult(metadata={"path": dg.MetadataValue.path(info["path"]), "bytes": info["bytes"]})


def _night_checks(context: dg.AssetExecutionContext) -> list[report.CheckResult]:
    """The check results of this run so far: every check of the tables the report is built from."""
    results = {}
    for entry in context.instance.all_logs(context.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        e = entry.dagster_event.event_specific_data
        results[(e.asset_key.to_user_string(), e.check_name)] = report.CheckResult(
            asset=e.asset_key.to_user_string(), check=e.check_name, passed=e.passed,
            severity=getattr(e.severity, "value", str(e.severity)), description=e.description or "")
    return [results[k] for k in sorted(results)]


REPORT_CHART_TITLES = {"network": "Collaboration network", "citations_authors": "Citations over the nights",
                       "scores_relation": "Our novelty against the sites' scores",
                       "nights": "Rejects and the review queue over the nights"}


@dg.asset(key=["exports", "report"], deps=[["exports", "parquet"], *MART_KEYS, *CORE_KEYS], group_name="exports",
          partitions_def=daily_partitions, pool=WAREHOUSE_POOL, kinds={"html", "duckdb"},
          description="The nightly report: one self-contained HTML page (readable offline) beside the night's "
          "export, warehouse/exports/<date>/report.html (and so exports/latest/report.html): the collaboration "
          "network, citation growth, reported and computed scores, rejects and the review queue over the nights, "
          "and the night's check results. It publishes the night's export: <date> and `latest` move to the new "
          "tables only with their report beside them (if the report fails, with the previous one, and the "
          "manifest says so). Its materialisation shows the main charts here (pipelines/publish/report.py).")
@transient_retries
def nightly_report(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    checks = _night_checks(context)

    def write_report(folder):
        with warehouse_db.connect(read_only=True) as con:
            data = report.gather(con, night.day, checks)
        return report.write(data, folder, code_version=publish.code_version())

    info = publish.publish_export(warehouse_db.exports_dir, night.day, write_report)["report_written"]
    latest = warehouse_db.exports_dir / "latest" / report.REPORT_FILE
    pictures = {
        f"chart: {REPORT_CHART_TITLES[name]}": dg.MetadataValue.md(
            f"![{REPORT_CHART_TITLES[name]}](data:image/png;base64,{base64.b64encode(image).decode()})")
        for name, image in info["pngs"].items()
    }
    failed = [c for c in checks if not c.passed]
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(warehouse_db.exports_dir / night.key / report.REPORT_FILE)),
        "latest": dg.MetadataValue.path(str(latest)),
        "bytes": info["bytes"],
        "charts": len(info["charts"]),
        "checks_not_passed": len(failed),
        **pictures,
    })

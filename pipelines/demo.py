"""``make demo``: materialise the whole asset graph for one partition and say what it built.

Environment (all optional):
  SCHOLARHOUSE_CAPTURES   folder of captures (default: the bundled samples)
  SCHOLARHOUSE_WAREHOUSE  DuckDB file (default: warehouse/scholarhouse.duckdb)
  SCHOLARHOUSE_DATE       partition / capture date, YYYY-MM-DD (default: today, UTC)
The run is recorded in $DAGSTER_HOME (the Makefile points it at .dagster_home/), so it shows
in the UI (`make dev`) next to scheduled runs and backfills.
"""

from __future__ import annotations

import os
import sys
from datetime import date, datetime, timezone

import dagster as dg

from pipelines import warehouse
from pipelines.definitions import defs
from pipelines.resources import CapturesFolderResource, WarehouseResource


def demo_date() -> str:
    raw = os.environ.get("SCHOLARHOUSE_DATE") or datetime.now(timezone.utc).date().isoformat()
    try:
        return date.fromisoformat(raw).isoformat()
    except ValueError:
        sys.exit(f"SCHOLARHOUSE_DATE must be YYYY-MM-DD, got {raw!r}")


def main() -> int:
    partition = demo_date()
    source = CapturesFolderResource()
    wh = WarehouseResource()
    print(f"scholarhouse demo — partition {partition}")
    print(f"  captures:  {source.resolved_path()}")
    print(f"  warehouse: {wh.resolved_path()}")
    if not source.resolved_path().is_dir():
        print(f"error: captures folder not found: {source.resolved_path()}", file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    job = defs.resolve_job_def("nightly_refresh")
    result = job.execute_in_process(partition_key=partition, instance=instance, raise_on_error=False)

    with warehouse.connect(wh.resolved_path(), read_only=True) as con:
        counts = warehouse.row_counts(con)
        rejects = con.execute(
            "SELECT reason, count(*) FROM staging.rejects WHERE partition_date = ? GROUP BY 1 ORDER BY 1", [partition]
        ).fetchall()
        issues = con.execute(
            "SELECT reason, count(*) FROM staging.quality_issues WHERE partition_date = ? GROUP BY 1 ORDER BY 1", [partition]
        ).fetchall()
        day = {t: con.execute(f"SELECT count(*) FROM {t} WHERE partition_date = ?", [partition]).fetchall()[0][0]
               for t in ("raw.page_captures", "staging.profiles", "staging.listings", "staging.rejects",
                         "staging.quality_issues")}
    print(f"\nthis partition: {day['raw.page_captures']} pages, {day['staging.profiles']} profiles, "
          f"{day['staging.listings']} listings, {day['staging.rejects']} rejects, "
          f"{day['staging.quality_issues']} values landed repaired or doubtful")
    for reason, n in rejects:
        print(f"  rejected ({reason}): {n}")
    for reason, n in issues:
        print(f"  landed with an issue ({reason}): {n}")
    print("\nrow counts (whole warehouse):")
    width = max(map(len, counts)) if counts else 0
    for table, n in counts.items():
        print(f"  {table:<{width}}  {n:>8}")
    for line in _check_summary(result):
        print(line)
    extras = [("exports", wh.exports_dir / "latest"), ("analytics copy", wh.analytics_path)]
    for label, path in extras:
        if path.exists():
            print(f"\n{label}: {path}")
    print(f"\nwarehouse: {wh.resolved_path()}")
    print("query it: .venv/bin/python -c \"import duckdb; print(duckdb.connect('"
          f"{wh.analytics_path if wh.analytics_path.exists() else wh.resolved_path()}', read_only=True)"
          ".sql('select * from core.papers limit 5'))\"")
    if not result.success:
        print("\nthe run FAILED — see the step errors above, or the run in the UI (make dev)", file=sys.stderr)
        return 1
    return 0


def _check_summary(result) -> list[str]:
    lines = []
    evaluations = [
        ev.event_specific_data for ev in result.all_events if ev.event_type_value == "ASSET_CHECK_EVALUATION"
    ]
    if not evaluations:
        return lines
    failed = [e for e in evaluations if not e.passed]
    lines.append(f"\nchecks: {len(evaluations) - len(failed)} passed, {len(failed)} failed")
    for e in failed:
        severity = getattr(e.severity, "value", e.severity)
        lines.append(f"  {severity}: {e.asset_key.to_user_string()} · {e.check_name}")
    return lines


if __name__ == "__main__":
    sys.exit(main())

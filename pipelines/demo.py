"""``make demo``: materialise the whole asset graph for one partition and say what it built.

Environment (all optional; every setting: README.md, "Configuration", or pipelines/settings.py):
  SCHOLARHOUSE_CAPTURES   folder of captures (default: the bundled samples)
  SCHOLARHOUSE_WAREHOUSE  DuckDB file (default: warehouse/scholarhouse.duckdb)
  SCHOLARHOUSE_DATE       partition / capture date, YYYY-MM-DD (default: today, UTC)
The settings are read once, as it starts (a bad value is refused, naming the variable).
The run is recorded in $DAGSTER_HOME (the Makefile points it at .dagster_home/), so it shows
in the UI (`make dev`) next to scheduled runs and backfills.

What it prints: where it reads and writes, then — once the run is over — its summary: the night's
rows, rejects and values with an issue, row counts, the checks (a failed gate is a failure, a failed
warning is a warning: a finding about the data that never stops the night) and where the warehouse,
the exports and the report are. Dagster's step-by-step log (hundreds of lines) goes to a file,
``$DAGSTER_HOME/demo.log`` (beside the warehouse without DAGSTER_HOME), not to the terminal; where
that file cannot be written, the log stays on the terminal.

Exit status: 0 when the run succeeded, 1 when it failed, 2 when it could not start (a date that is
not a partition, a bad setting, a missing captures folder). Whatever went wrong is said in one line on stderr,
starting with ``error:`` — the failed step and its cause (``disk full: ... No space left on device``),
never a bare traceback.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import dagster as dg

from pipelines import warehouse
from pipelines.orchestration import failures
from pipelines.publish import report
from pipelines.orchestration import runs
from pipelines.definitions import defs
from pipelines.assets.partitions import START_DATE, daily_partitions
from pipelines.resources import WarehouseResource
from pipelines.settings import Settings, SettingsError


class CannotStart(Exception):
    """The demo cannot run as asked; the message says why, in one line."""


def read_settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as exc:
        raise CannotStart(str(exc)) from None


def demo_date(settings: Settings | None = None) -> str:
    settings = settings or read_settings()
    day = (settings.demo_date or datetime.now(timezone.utc).date()).isoformat()
    if not daily_partitions.has_partition_key(day):
        last = daily_partitions.get_last_partition_key()
        when = "after today (UTC)" if day > (last or "") else f"before the first partition, {START_DATE}"
        raise CannotStart(f"SCHOLARHOUSE_DATE={day} is not a partition: it is {when}; "
                          f"capture dates run from {START_DATE} to {last}")
    return day


def log_path(settings: Settings) -> Path:
    return (settings.dagster_home or settings.warehouse.parent) / "demo.log"


@contextmanager
def output_to(path: Path) -> Iterator[Path | None]:
    """Everything written to the terminal meanwhile (file descriptors 1 and 2: Dagster's log, library
    warnings) goes to ``path`` instead. Yields None, and changes nothing, when the file cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = open(path, "w", encoding="utf-8")
    except OSError:
        yield None
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield path
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        log.close()


def error(line: str) -> None:
    print(f"error: {failures.one_line(line, 1000)}", file=sys.stderr)


def main() -> int:
    try:
        return _main()
    except CannotStart as exc:
        error(str(exc))
        return 2
    except Exception as exc:  # noqa: BLE001 - whatever it is, say it in one line
        error(failures.explain(exc).line)
        return 1


def _main() -> int:
    settings = read_settings()
    partition = demo_date(settings)
    wh = WarehouseResource()
    print(f"scholarhouse demo — partition {partition}")
    print(f"  captures:  {settings.captures}")
    print(f"  warehouse: {settings.warehouse}")
    if not settings.captures.is_dir():
        raise CannotStart(f"captures folder not found: {settings.captures}")
    instance = dg.DagsterInstance.get() if settings.dagster_home else dg.DagsterInstance.ephemeral()
    job = defs.resolve_job_def("nightly_refresh")
    log = log_path(settings)
    print(f"  log:       {log}\n\nrunning every step of nightly_refresh for {partition} "
          f"(follow it: tail -f {log}) ...", flush=True)
    with output_to(log) as logged:
        result = job.execute_in_process(partition_key=partition, instance=instance, raise_on_error=False)
    if logged is None:
        print(f"(the log could not be written to {log}: it is above)")
    cause = None if result.success else (runs.run_failure_cause(result.all_events) or "the run failed")
    try:
        _summary(wh, settings, partition, result)
    except Exception as exc:  # noqa: BLE001 - a failed run may have left no readable warehouse
        if cause is None:
            raise
        print(f"\n(no summary: {failures.explain(exc).line})")
    if cause is not None:
        where = f"in {log}" if logged else "above"
        print(f"\nthe run FAILED — its full log is {where}, and in the UI (make dev)", file=sys.stderr)
        error(f"run {result.run_id} failed: {cause}")
        return 1
    return 0


def _summary(wh: WarehouseResource, settings: Settings, partition: str, result) -> None:
    if not settings.warehouse.exists():
        print(f"\n(no warehouse at {settings.warehouse}: nothing to summarise)")
        return
    with wh.connect(read_only=True) as con:  # the resource's own path: its lock wait, its memory limit
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
    extras = [("exports", settings.exports_dir / "latest"),
              ("report", settings.exports_dir / partition / report.REPORT_FILE),
              ("analytics copy", settings.analytics_path)]
    print()
    for label, path in extras:
        if path.exists():
            print(f"{label + ':':<16}{path}")
    print(f"\nwarehouse: {settings.warehouse}")
    print("query it: .venv/bin/python -c \"import duckdb; print(duckdb.connect('"
          f"{settings.analytics_path if settings.analytics_path.exists() else settings.warehouse}', read_only=True)"
          ".sql('select * from core.papers limit 5'))\"")


def _check_summary(result) -> list[str]:
    """The checks in words: a failed gate (ERROR) is a failure that stopped what was downstream of it; a
    failed warning (WARN) is a finding about the data, reported while the night went on."""
    lines = []
    evaluations = [
        ev.event_specific_data for ev in result.all_events if ev.event_type_value == "ASSET_CHECK_EVALUATION"
    ]
    if not evaluations:
        return lines
    def severity(e) -> str:
        return getattr(e.severity, "value", str(e.severity))
    failures = [e for e in evaluations if not e.passed and severity(e) != "WARN"]
    warnings = [e for e in evaluations if not e.passed and severity(e) == "WARN"]
    passed = len(evaluations) - len(failures) - len(warnings)
    lines.append(f"\nchecks: {passed} passed, {len(warnings)} warning{'s' * (len(warnings) != 1)}, "
                 f"{len(failures)} failed")
    for e in failures:
        lines.append(f"  FAILED   {e.asset_key.to_user_string()} · {e.check_name}: {e.description or ''}".rstrip(": "))
    for e in warnings:
        lines.append(f"  warning  {e.asset_key.to_user_string()} · {e.check_name}: {e.description or ''}".rstrip(": "))
    if warnings:
        lines.append("  (a warning is a finding about the data — an impossible reported h-index, an incomplete "
                     "listing —\n   reported and kept; it never stops the night. The UI shows the offending rows.)")
    return lines


if __name__ == "__main__":
    sys.exit(main())

"""Asset checks built from the expectation suites in ``expectations/``.

Every warehouse table with a suite gets up to two checks on its asset (key = the table name split
on ".", e.g. ``staging.listings`` → ``["staging", "listings"]``):

- ``gates`` — the suite's ``block`` expectations (unique and non-null keys, referential integrity,
  allowed values, impossible dates). ``blocking=True`` with ERROR severity: when it fails, the
  check step fails and nothing downstream of the table runs in that run.
- ``warnings`` — the ``warn`` expectations: findings about the data itself (an impossible reported
  h-index, incomplete listings, a high reject rate, a sudden drop in volume). WARN severity; they
  are reported and never stop the run.

A check with no expectations of its severity is not created.

**One check step per producing step.** The checks of all tables one asset step writes (the three
staging tables, the core tables) run in one ``@multi_asset_check``, on one read-only
connection, right after that step. It cannot be fewer: a single step for, say, every mart would
have to wait for ``author_scores``, which itself waits for the gates on ``paper_scores`` — a cycle.
Grouping follows the asset definitions passed in, so it follows the graph as it changes.

**Partitions.** Check specs carry their asset's partitions definition, so a check evaluates the
run's night (``night_window``, pipelines/assets/common.py): partitioned suites query only that date;
whole-table suites (core, most marts) validate the table as it stands after the step.

The check steps share the ``warehouse`` pool with the assets: a DuckDB reader would otherwise hold
the file lock against a writer in another run.
"""

# No ``from __future__ import annotations`` here: Dagster reads the check function's annotations
# at definition time (context type, resource parameters) and rejects them as strings.
import warnings
from pathlib import Path
from typing import Iterable, Sequence

import dagster as dg

from pipelines import quality
from pipelines.assets.common import WAREHOUSE_POOL, night_window, table
from pipelines.resources.great_expectations import GreatExpectationsResource
from pipelines.resources.warehouse import WarehouseResource

GATES = "gates"
WARNINGS = "warnings"
CHECK_NAMES = {quality.BLOCK: GATES, quality.WARN: WARNINGS}
MAX_FAILURES_SHOWN = 25  # per check: each failed expectation gets its own metadata entry


def table_asset_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(table.split("."))


def asset_key_table(key: dg.AssetKey) -> str:
    return ".".join(key.path)


def build_quality_checks(
    assets: Iterable[object],
    *,
    suites_dir: str | Path | None = None,
) -> list[dg.AssetChecksDefinition]:
    """Asset checks for every asset (in ``assets``) whose table has a suite: one multi-asset
    check per producing asset definition, with a ``gates`` and/or ``warnings`` check per table."""
    suites = quality.load_suites(suites_dir)
    checks: list[dg.AssetChecksDefinition] = []
    for assets_def in assets:
        if not isinstance(assets_def, dg.AssetsDefinition):
            continue
        tables = sorted(asset_key_table(k) for k in assets_def.keys if asset_key_table(k) in suites)
        if not tables:
            continue
        checks.append(_quality_checks_for(
            f"{assets_def.node_def.name}_quality", [suites[t] for t in tables], assets_def.partitions_def,
        ))
    return checks


def _check_description(suite: quality.Suite, severity: str) -> str:
    intro = {
        quality.BLOCK: "Blocking gates: if any fails, nothing downstream of this table runs.",
        quality.WARN: "Warnings about the data itself: reported, never stopping the run.",
    }[severity]
    lines = [f"{intro} Suite: expectations/{suite.table}.json", ""]
    lines += [f"- {line}" for line in suite.protects(severity)]
    return "\n".join(lines)


def _quality_checks_for(
    name: str, suites: Sequence[quality.Suite], partitions_def: dg.PartitionsDefinition | None
) -> dg.AssetChecksDefinition:
    specs = []
    with warnings.catch_warnings():
        # partitions_def on AssetCheckSpec is a preview API in dagster 1.13; it is what lets a
        # partitioned job include the checks and lets each check see the run's partition.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        for suite in suites:
            for severity in suite.severities():
                specs.append(dg.AssetCheckSpec(
                    CHECK_NAMES[severity],
                    asset=table_asset_key(suite.table),
                    blocking=severity == quality.BLOCK,
                    description=_check_description(suite, severity),
                    partitions_def=partitions_def,
                    metadata={"suite": f"expectations/{suite.table}.json",
                              "expectations": len(suite.rules_with(severity))},
                ))
    tables = [s.table for s in suites]

    @dg.multi_asset_check(
        name=name,
        specs=specs,
        can_subset=True,
        pool=WAREHOUSE_POOL,
        description=f"Great Expectations suites for {', '.join(tables)}.",
    )
    def _quality_checks(
        context: dg.AssetCheckExecutionContext, gx: GreatExpectationsResource, warehouse_db: WarehouseResource
    ):
        selected = set(context.selected_asset_check_keys)
        night = night_window(context) if context.has_partition_key or context.has_partition_key_range else None
        with warehouse_db.connect(read_only=True) as con:
            for table in tables:
                key = table_asset_key(table)
                wanted = [s for s in quality.SEVERITIES if dg.AssetCheckKey(key, CHECK_NAMES[s]) in selected]
                if not wanted:
                    continue
                reports = gx.validate(con, table, partition_date=night.day if night else None, severities=wanted)
                for severity in wanted:
                    report = reports[severity]
                    _log(context, report)
                    yield check_result(key, report)

    return _quality_checks


def _log(context, report: quality.ValidationReport) -> None:
    line = (f"{report.table} {CHECK_NAMES[report.severity]}: "
            f"{len(report.outcomes) - len(report.failed)}/{len(report.outcomes)} expectations passed")
    if report.passed:
        context.log.info(line)
        return
    failed = "; ".join(f"{o.rule.label} ({o.unexpected_count if o.unexpected_count is not None else o.error})"
                       for o in report.failed)
    (context.log.error if report.severity == quality.BLOCK else context.log.warning)(f"{line} — failed: {failed}")


def check_result(asset_key: dg.AssetKey, report: quality.ValidationReport) -> dg.AssetCheckResult:
    """A report as an AssetCheckResult: totals, a table of every rule, and per failed expectation
    its rule, what it protects, the unexpected count and a sample of offending rows (in the markdown,
    and as a table: ``offending rows #<rule>``)."""
    failed = report.failed
    metadata: dict[str, object] = {
        "expectations": len(report.outcomes),
        "expectations_failed": len(failed),
        "unexpected_rows": report.unexpected_total,
        "rows_validated": dg.MetadataValue.json(dict(report.rows)),
        "summary": dg.MetadataValue.md(quality.report_markdown(report)),
    }
    if report.partitions:
        metadata["partitions"] = ", ".join(report.partitions)
    for outcome in failed[:MAX_FAILURES_SHOWN]:
        metadata[f"failed #{outcome.rule.index}: {outcome.rule.label}"] = dg.MetadataValue.md(
            quality.outcome_markdown(outcome))
        if outcome.sample is not None and outcome.sample.height:
            # the same rows as a table the UI draws (sortable, typed columns)
            metadata[f"offending rows #{outcome.rule.index}"] = table(outcome.sample, quality.SAMPLE_ROWS)
    if len(failed) > MAX_FAILURES_SHOWN:
        metadata["failures_not_shown"] = len(failed) - MAX_FAILURES_SHOWN
    description = (
        f"all {len(report.outcomes)} expectations passed" if report.passed
        else f"{len(failed)} of {len(report.outcomes)} expectations failed: "
        + "; ".join(o.rule.protects for o in failed[:5]) + (" …" if len(failed) > 5 else "")
    )
    return dg.AssetCheckResult(
        asset_key=asset_key,
        check_name=CHECK_NAMES[report.severity],
        passed=report.passed,
        severity=dg.AssetCheckSeverity.ERROR if report.severity == quality.BLOCK else dg.AssetCheckSeverity.WARN,
        metadata=metadata,
        description=description,
    )

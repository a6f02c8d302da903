"""Data quality: Great Expectations 1.x suites from ``expectations/``, run on warehouse rows.

No Dagster imports: ``pipelines/assets/checks.py`` turns the reports into asset check results, and
the tests call this module directly on small frames.

**Suites.** One JSON file per warehouse table, named after it (``expectations/staging.listings.json``).
Each is a GX 1.x ``ExpectationSuite`` as GX serialises it (``name``, ``expectations``, ``meta``)
and loads with ``gx.ExpectationSuite(**json)``; what the runner needs is in ``meta``:

- ``table``: the contract table the suite guards (its Dagster asset key is the name split on ".");
- ``query``: DuckDB SQL (a string, or a list of lines for readability) selecting the rows to
  validate (the *rows* batch). ``$partition_date`` in it restricts a partitioned table to the
  partition being run; without it the whole table is validated. Rules GX cannot express on one
  table are derived here as extra columns — referential integrity as a boolean
  (``orphan_paper``: ``NOT EXISTS (SELECT 1 FROM core.papers p WHERE p.paper_id = a.paper_id)``)
  expected to be all False, "date not after the capture" likewise;
- ``derived_columns``: name → one line saying what each derived column means;
- ``sample_columns``: columns shown next to the rule's own columns in a failure's sample, so an
  operator can find the offending rows (an expectation may name its own in ``meta.sample_columns``);
- ``batches`` (optional): further named queries, e.g. a one-row frame comparing the partition's
  row count with the previous partition's. An expectation whose ``meta.batch`` names one is
  validated on that frame instead of the rows.

Each expectation's ``meta`` holds ``severity`` (``block``: a gate — unique and non-null keys,
referential integrity, allowed values, impossible dates; failing it stops the run before anything
downstream is built — or ``warn``: a finding about the data itself, reported but never stopping
the run) and ``protects`` (one line, plain words, shown to whoever reads the failure).

**A query may only read its own table and tables built before it.** A check runs right after its
asset is materialised, before anything downstream of it, so a downstream table still holds the
previous run's rows at that moment.

**Running.** GX is slow to import (seconds), so it is imported lazily, the first time something
is validated, and one ephemeral context (no files, no network) is created per process and reused.
Only the columns the rules read are handed to GX; samples of offending rows are taken from the
full frame by the row positions GX reports.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import warnings
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import polars as pl

PROJECT_ROOT = Path(__file__).resolve().parents[1]
EXPECTATIONS_DIR = PROJECT_ROOT / "expectations"

BLOCK = "block"
WARN = "warn"
SEVERITIES = (BLOCK, WARN)
ROWS_BATCH = "rows"
SAMPLE_ROWS = 10

# The GX-native severity that mirrors ours, so the suite also reads right inside GX tooling.
_GX_SEVERITY = {BLOCK: "critical", WARN: "warning"}
_COLUMN_KWARGS = ("column", "column_A", "column_B", "column_list")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class SuiteError(ValueError):
    """A suite file that cannot be used as written."""


# =============================================================================== suites


@dataclass(frozen=True)
class Batch:
    """A named query whose result frame some rules are validated on."""

    name: str
    query: str
    description: str = ""
    derived_columns: Mapping[str, str] = field(default_factory=dict)
    sample_columns: tuple[str, ...] = ()

    @property
    def parameters(self) -> frozenset[str]:
        return frozenset(_PARAM.findall(self.query))

    @property
    def partitioned(self) -> bool:
        return "partition_date" in self.parameters


@dataclass(frozen=True)
class Rule:
    """One expectation of a suite, with the meta the runner and the operator need."""

    index: int
    type: str
    kwargs: Mapping[str, object]
    severity: str
    protects: str
    batch: str = ROWS_BATCH
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        found: list[str] = []
        for key in _COLUMN_KWARGS:
            value = self.kwargs.get(key)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, (list, tuple)):
                found.extend(str(v) for v in value)
        return tuple(found)

    @property
    def label(self) -> str:
        """``expect_column_values_to_be_unique(listing_id)``: what failed, in one line."""
        return f"{self.type}({', '.join(self.columns)})" if self.columns else self.type

    def gx_configuration(self) -> dict:
        """The expectation as GX serialises it; ``rule`` in meta maps results back to this rule."""
        return {
            "type": self.type,
            "kwargs": dict(self.kwargs),
            "meta": {**self.meta, "rule": self.index},
            "severity": _GX_SEVERITY[self.severity],
        }


@dataclass(frozen=True)
class Suite:
    """An expectation suite for one warehouse table (see the module docstring for the format)."""

    name: str
    table: str
    batches: Mapping[str, Batch]
    rules: tuple[Rule, ...]
    description: str = ""
    path: Path | None = None
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def asset_key(self) -> tuple[str, ...]:
        return tuple(self.table.split("."))

    @property
    def partitioned(self) -> bool:
        return any(b.partitioned for b in self.batches.values())

    def rules_with(self, severity: str | None = None, batch: str | None = None) -> tuple[Rule, ...]:
        return tuple(
            r for r in self.rules
            if (severity is None or r.severity == severity) and (batch is None or r.batch == batch)
        )

    def severities(self) -> tuple[str, ...]:
        """The severities this suite has rules for, in SEVERITIES order."""
        return tuple(s for s in SEVERITIES if self.rules_with(s))

    def protects(self, severity: str) -> list[str]:
        """The distinct ``protects`` lines of a severity, in suite order (for descriptions, README)."""
        seen: dict[str, None] = {}
        for rule in self.rules_with(severity):
            seen.setdefault(rule.protects, None)
        return list(seen)

    def to_gx(self, severity: str | None = None, batch: str | None = None):
        """A ``gx.ExpectationSuite`` of the selected rules. Imports GX; raises on any invalid rule
        (GX itself would only log it and drop the rule, letting a typo pass silently)."""
        from great_expectations.core.expectation_suite import ExpectationSuite
        from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

        _gx_runtime()  # quiet logging before GX builds anything
        expectations = []
        for rule in self.rules_with(severity, batch):
            try:
                expectations.append(ExpectationConfiguration(**rule.gx_configuration()).to_domain_obj())
            except Exception as exc:  # GX raises a zoo of types for bad types/kwargs
                raise SuiteError(f"{self.name}: expectation #{rule.index} {rule.label} is not valid in GX: {exc}") from exc
        suffix = "/".join(p for p in (severity, batch) if p)
        return ExpectationSuite(name=f"{self.name}:{suffix}" if suffix else self.name, expectations=expectations,
                                meta={"table": self.table})


def parse_suite(document: Mapping, path: Path | None = None) -> Suite:
    """A Suite from its JSON document; raises SuiteError naming what is wrong."""
    where = str(path) if path else document.get("name", "<suite>")
    meta = document.get("meta") or {}
    name = document.get("name")
    table = meta.get("table")
    if not name or not table:
        raise SuiteError(f"{where}: a suite needs a name and meta.table")
    if table.count(".") != 1:
        raise SuiteError(f"{where}: meta.table must be schema.table, got {table!r}")
    if not meta.get("query"):
        raise SuiteError(f"{where}: meta.query (the rows to validate) is missing")
    batches = {
        ROWS_BATCH: Batch(
            ROWS_BATCH, _text(meta["query"]), description=meta.get("description", ""),
            derived_columns=dict(meta.get("derived_columns") or {}),
            sample_columns=tuple(meta.get("sample_columns") or ()),
        )
    }
    for batch_name, spec in (meta.get("batches") or {}).items():
        if batch_name == ROWS_BATCH or not spec.get("query"):
            raise SuiteError(f"{where}: batch {batch_name!r} needs a query and may not be called {ROWS_BATCH!r}")
        batches[batch_name] = Batch(
            batch_name, _text(spec["query"]), description=spec.get("description", ""),
            derived_columns=dict(spec.get("derived_columns") or {}),
            sample_columns=tuple(spec.get("sample_columns") or ()),
        )
    for batch in batches.values():
        unknown = batch.parameters - {"partition_date"}
        if unknown:
            raise SuiteError(f"{where}: batch {batch.name!r} uses unknown parameters {sorted(unknown)}")
    rules = []
    for index, exp in enumerate(document.get("expectations") or []):
        exp_meta = dict(exp.get("meta") or {})
        severity = exp_meta.pop("severity", None)
        protects = exp_meta.pop("protects", None)
        batch = exp_meta.pop("batch", ROWS_BATCH)
        exp_type = exp.get("type") or ""
        if not exp_type.startswith("expect_"):
            raise SuiteError(f"{where}: expectation #{index} has no GX type")
        if severity not in SEVERITIES:
            raise SuiteError(f"{where}: expectation #{index} {exp_type}: meta.severity must be one of {SEVERITIES}")
        if not protects:
            raise SuiteError(f"{where}: expectation #{index} {exp_type}: meta.protects is missing")
        if batch not in batches:
            raise SuiteError(f"{where}: expectation #{index} {exp_type}: unknown batch {batch!r}")
        rules.append(Rule(index, exp_type, dict(exp.get("kwargs") or {}), severity, protects, batch, exp_meta))
    return Suite(name=name, table=table, batches=batches, rules=tuple(rules),
                 description=meta.get("description", ""), path=path, meta=dict(meta))


def _text(value: str | Sequence[str]) -> str:
    """SQL may be written as a list of lines: JSON has no multi-line strings, and analysts read these."""
    return value if isinstance(value, str) else "\n".join(value)


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}: not valid JSON: {exc}") from exc
    suite = parse_suite(document, path)
    if path.name != f"{suite.table}.json":
        raise SuiteError(f"{path}: a suite file is named after its table ({suite.table}.json)")
    return suite


def load_suites(directory: str | Path | None = None) -> dict[str, Suite]:
    """Every suite in ``directory`` (default ``expectations/``), by table name. Reads JSON only
    (no GX import), so it is cheap enough to call while Dagster loads its definitions."""
    directory = Path(directory) if directory else EXPECTATIONS_DIR
    suites: dict[str, Suite] = {}
    for path in sorted(directory.glob("*.json")):
        suite = load_suite(path)
        suites[suite.table] = suite
    return suites


# =============================================================================== results


@dataclass
class RuleOutcome:
    """How one rule fared on one batch."""

    rule: Rule
    success: bool
    element_count: int | None = None
    unexpected_count: int | None = None
    unexpected_percent: float | None = None
    observed_value: object = None
    sample: pl.DataFrame | None = None  # offending rows (at most SAMPLE_ROWS)
    error: str | None = None
    partitions: tuple[str, ...] = ()


@dataclass
class ValidationReport:
    """The outcomes of one suite's rules of one severity."""

    suite: str
    table: str
    severity: str
    outcomes: list[RuleOutcome]
    rows: dict[str, int] = field(default_factory=dict)  # batch name -> rows validated
    partitions: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(o.success for o in self.outcomes)

    @property
    def failed(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if not o.success]

    @property
    def unexpected_total(self) -> int:
        return sum(o.unexpected_count or 0 for o in self.failed)


# =============================================================================== GX runtime

_GX_LOCK = threading.RLock()
_GX_RUNTIME: dict = {}


def _gx_runtime() -> dict:
    """The process-wide ephemeral GX context and the one batch definition every frame goes through.

    Created on first use and reused: a context takes a while to build, and every check in a run
    validates a different frame through the same whole-dataframe batch definition.
    """
    with _GX_LOCK:
        if not _GX_RUNTIME:
            for name in ("great_expectations", "great_expectations.core", "great_expectations.data_context"):
                logging.getLogger(name).setLevel(logging.ERROR)
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig

            context = gx.get_context(mode="ephemeral")
            context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
            source = context.data_sources.add_pandas("scholarhouse_quality")
            asset = source.add_dataframe_asset("frame")
            _GX_RUNTIME.update(context=context, batch_definition=asset.add_batch_definition_whole_dataframe("whole"))
        return _GX_RUNTIME


def _to_pandas(frame):
    """A pandas frame with a 0..n-1 index (GX reports offending rows by index position)."""
    if isinstance(frame, pl.DataFrame):
        return frame.to_pandas()
    return frame.reset_index(drop=True)


def validate_frame(
    suite: Suite,
    frame,
    *,
    severity: str | None = None,
    batch: str = ROWS_BATCH,
    sample_rows: int = SAMPLE_ROWS,
) -> list[RuleOutcome]:
    """Validate one batch's frame (Polars or pandas) against the suite's rules for that batch.

    Returns one outcome per rule, in suite order. A rule whose column the frame lacks fails with
    an error instead of reaching GX; so does a rule GX could not evaluate (never a silent pass).
    """
    rules = suite.rules_with(severity, batch)
    if not rules:
        return []
    polars_frame = frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame.reset_index(drop=True))
    present = set(polars_frame.columns)
    outcomes: dict[int, RuleOutcome] = {}
    runnable: list[Rule] = []
    for rule in rules:
        missing = [c for c in rule.columns if c not in present]
        if missing:
            outcomes[rule.index] = RuleOutcome(rule, False, error=f"column(s) {missing} not in the {batch!r} query result")
        else:
            runnable.append(rule)
    if runnable:
        needed = list(dict.fromkeys(c for r in runnable for c in r.columns))
        # Only the columns the rules read go to GX (list/blob columns never reach pandas); a
        # table-level rule with no column still needs the row count, hence a placeholder.
        gx_frame = polars_frame.select(needed) if needed else pl.DataFrame({"_row": range(polars_frame.height)})
        sub = Suite(suite.name, suite.table, suite.batches, tuple(runnable), path=suite.path)
        gx_suite = sub.to_gx()
        runtime = _gx_runtime()
        with _GX_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gx_batch = runtime["batch_definition"].get_batch(batch_parameters={"dataframe": _to_pandas(gx_frame)})
            result = gx_batch.validate(gx_suite, result_format={"result_format": "SUMMARY",
                                                                 "partial_unexpected_count": max(sample_rows, 1)})
        by_index = {r.index: r for r in runnable}
        for item in result.results:
            rule = by_index[int(item.expectation_config.meta["rule"])]
            outcomes[rule.index] = _outcome(rule, suite, item, polars_frame, sample_rows, batch)
        for rule in runnable:  # GX returned nothing for it: treat as a failure, never a pass
            outcomes.setdefault(rule.index, RuleOutcome(rule, False, error="GX returned no result for this expectation"))
    return [outcomes[r.index] for r in rules]


def _outcome(rule: Rule, suite: Suite, item, frame: pl.DataFrame, sample_rows: int, batch: str) -> RuleOutcome:
    result = dict(item.result or {})
    info = item.exception_info or {}
    error = None
    if isinstance(info, Mapping) and info.get("raised_exception"):
        error = str(info.get("exception_message") or "GX raised an exception")
    elif isinstance(info, Mapping) and not {"raised_exception"} <= set(info):
        # Several metrics -> {metric_id: {...}}: report the first raised one.
        for value in info.values():
            if isinstance(value, Mapping) and value.get("raised_exception"):
                error = str(value.get("exception_message") or "GX raised an exception")
                break
    indices = result.get("partial_unexpected_index_list") or []
    sample = None
    if indices:
        positions = [int(i) for i in indices if isinstance(i, (int, float)) and not math.isnan(i)][:sample_rows]
        sample = _sample(frame, positions, rule, suite.batches[batch])
    elif not item.success and rule.batch != ROWS_BATCH and frame.height <= sample_rows:
        sample = frame  # a one-row summary frame: the row is the evidence
    return RuleOutcome(
        rule=rule,
        success=bool(item.success) and error is None,
        element_count=_int(result.get("element_count")),
        unexpected_count=_int(result.get("unexpected_count")),
        unexpected_percent=_float(result.get("unexpected_percent")),
        observed_value=result.get("observed_value"),
        sample=sample,
        error=error,
    )


def _sample(frame: pl.DataFrame, positions: list[int], rule: Rule, batch: Batch) -> pl.DataFrame:
    shown = rule.meta.get("sample_columns") or batch.sample_columns
    columns = list(dict.fromkeys([*shown, *rule.columns]))
    columns = [c for c in columns if c in frame.columns] or frame.columns
    return frame.select(columns)[positions]


def _int(value) -> int | None:
    return None if value is None else int(value)


def _float(value) -> float | None:
    return None if value is None else float(value)


# =============================================================================== warehouse


def fetch_batch(con, batch: Batch, partition_date: date | None) -> pl.DataFrame:
    """Run a batch's query on the warehouse (``con``: a DuckDB connection)."""
    params = {}
    if batch.partitioned:
        if partition_date is None:
            raise ValueError(f"batch {batch.name!r} is partitioned: a partition_date is required")
        params["partition_date"] = partition_date
    relation = con.sql(batch.query, params=params or None)
    return pl.from_arrow(relation.to_arrow_table())


def run_suite(
    con,
    suite: Suite,
    *,
    partition_date: date | str | None = None,
    severities: Iterable[str] = SEVERITIES,
    sample_rows: int = SAMPLE_ROWS,
) -> dict[str, ValidationReport]:
    """Validate ``suite`` on the warehouse: one report per requested severity that has rules.

    Each batch is queried once and shared by both severities. A batch whose query fails makes
    its rules fail with the error (so a broken gate blocks instead of passing).
    """
    if isinstance(partition_date, str):
        partition_date = date.fromisoformat(partition_date)
    severities = [s for s in SEVERITIES if s in set(severities) and suite.rules_with(s)]
    partitions = (partition_date.isoformat(),) if partition_date and suite.partitioned else ()
    outcomes: dict[str, list[RuleOutcome]] = {s: [] for s in severities}
    rows: dict[str, dict[str, int]] = {s: {} for s in severities}
    for batch in suite.batches.values():
        wanted = [s for s in severities if suite.rules_with(s, batch.name)]
        if not wanted:
            continue
        try:
            frame = fetch_batch(con, batch, partition_date)
        except Exception as exc:  # the query itself is broken or the table is missing
            for severity in wanted:
                outcomes[severity].extend(
                    RuleOutcome(rule, False, error=f"query {batch.name!r} failed: {exc}")
                    for rule in suite.rules_with(severity, batch.name)
                )
            continue
        for severity in wanted:
            rows[severity][batch.name] = frame.height
            outcomes[severity].extend(validate_frame(suite, frame, severity=severity, batch=batch.name,
                                                     sample_rows=sample_rows))
    reports = {}
    for severity in severities:
        ordered = sorted(outcomes[severity], key=lambda o: o.rule.index)
        ordered = [replace(o, partitions=partitions) for o in ordered]
        reports[severity] = ValidationReport(suite.name, suite.table, severity, ordered, rows[severity], partitions)
    return reports


# =============================================================================== rendering


def markdown_table(frame: pl.DataFrame, max_rows: int = SAMPLE_ROWS, max_chars: int = 60) -> str:
    """A small markdown table (cells cut to ``max_chars``; pipes and newlines escaped)."""
    if frame is None or frame.width == 0:
        return "_(no rows)_"
    frame = frame.head(max_rows)

    def cell(value: object) -> str:
        text = "" if value is None else str(value)
        text = text.replace("|", "\\|").replace("\n", " ")
        return text if len(text) <= max_chars else text[: max_chars - 3] + "..."

    lines = ["| " + " | ".join(frame.columns) + " |", "| " + " | ".join("---" for _ in frame.columns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


def outcome_markdown(outcome: RuleOutcome) -> str:
    """A failed rule for an operator: what it protects, how many rows broke it, and which."""
    rule = outcome.rule
    parts = [f"**{rule.label}** — {rule.protects}", ""]
    if outcome.error:
        parts.append(f"error: `{outcome.error}`")
    if outcome.unexpected_count is not None:
        share = f" ({outcome.unexpected_percent:.1f}%)" if outcome.unexpected_percent is not None else ""
        parts.append(f"unexpected: {outcome.unexpected_count} of {outcome.element_count} rows{share}")
    elif outcome.observed_value is not None:
        parts.append(f"observed: {outcome.observed_value}")
    if rule.batch != ROWS_BATCH:
        parts.append(f"batch: `{rule.batch}`")
    if outcome.partitions:
        parts.append(f"partition(s): {', '.join(outcome.partitions)}")
    if outcome.sample is not None and outcome.sample.height:
        parts += ["", f"sample (up to {SAMPLE_ROWS} rows):", "", markdown_table(outcome.sample)]
    return "\n".join(parts)


def report_markdown(report: ValidationReport) -> str:
    """Every rule of a report in one table: pass/fail, rule, unexpected count, what it protects."""
    lines = ["| result | rule | unexpected | protects |", "| --- | --- | --- | --- |"]
    for o in report.outcomes:
        mark = "pass" if o.success else ("**error**" if o.error else "**FAIL**")
        count = "" if o.unexpected_count is None else str(o.unexpected_count)
        lines.append(f"| {mark} | `{o.rule.label}` | {count} | {o.rule.protects.replace('|', '/')} |")
    return "\n".join(lines)

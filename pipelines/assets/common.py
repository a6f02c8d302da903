"""Small helpers the assets share: the run's night, the warehouse pool, transient-only retries, metadata
for the UI."""

import contextlib
import functools
import inspect
from dataclasses import dataclass
from datetime import date

import dagster as dg
import polars as pl

from pipelines.orchestration import failures



@dataclass(frozen=True)
class NightWindow:
    """The one night a run builds: its partition, the capture date ``day`` (the marts' ``as_of``).

    Worked out once, at the edge, from the Dagster context (``night_window``) and handed down under
    one name, ``night``: every asset and check that asks "which night" asks that function. The
    history-wide steps read everything *up to* the night (``partition_date <= night.day``); core may
    resolve further, up to the latest night already resolved (``core_build.resolution_window_end``).
    """

    day: date

    @property
    def key(self) -> str:
        """The partition key, ``YYYY-MM-DD``."""
        return self.day.isoformat()


def night_window(context) -> NightWindow:
    """The night the step's run builds, from its (asset, op or check) context. A run covers one night:
    the job refuses ranged runs (every day is its own run, so a failed day is re-run alone), and a
    ranged run that reaches a step anyway fails here, in one line, before anything is written."""
    keys = sorted(context.partition_keys)
    if len(keys) != 1:
        span = f"{keys[0]}...{keys[-1]}" if keys else "none"
        raise dg.Failure(
            description=f"a run builds one night, this one covers {len(keys)} partitions ({span}): "
            "launch a backfill instead (one run per night)",
            allow_retries=False,
        )
    return NightWindow(date.fromisoformat(keys[0]))


WAREHOUSE_POOL = "warehouse"  # every asset that writes DuckDB: one writer at a time (see dagster_home.yaml)

# How a step is retried when its cause is transient (pipelines/orchestration/failures.py): 2 more tries,
# exponential back-off from 10 s, with jitter. Not attached to the steps as a dg.RetryPolicy: with a
# policy, dagster 1.13 retries *every* exception — a full disk twice, a read-only directory twice —
# and turns an interrupt (SIGTERM, a stop from the UI) into a retry too, so an operator's stop did
# not stop (execution/plan/utils.py, op_execution_error_boundary). ``transient_retries`` asks for a
# retry itself (dg.RetryRequested), only for a transient cause.
RETRY = dg.RetryPolicy(max_retries=2, delay=10, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


def _step_failure(exc: Exception, context) -> BaseException:
    cause = failures.explain(exc)
    if cause.transient:
        attempt = (getattr(context, "retry_number", 0) or 0) + 1
        return dg.RetryRequested(max_retries=RETRY.max_retries, seconds_to_wait=RETRY.calculate_delay(attempt))
    return dg.Failure(description=cause.line, metadata={"cause": cause.kind, "error": failures.one_line(repr(exc), 2000)},
                      allow_retries=False)


def transient_retries(fn):
    """Decorate a step's function (under ``@dg.asset`` / ``@dg.op``): a transient failure is retried
    (RETRY's schedule), anything else fails the step at once as a ``dg.Failure`` whose description is
    the cause in one line (what ``make demo`` prints, and the step's error in the UI). Interrupts are
    not exceptions and pass through untouched: a stopped run stops."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            with _as_step_failure(args, kwargs):
                yield from fn(*args, **kwargs)
        generator.retries_transient_only = True
        return generator

    @functools.wraps(fn)
    def function(*args, **kwargs):
        with _as_step_failure(args, kwargs):
            return fn(*args, **kwargs)
    function.retries_transient_only = True
    return function


@contextlib.contextmanager
def _as_step_failure(args: tuple, kwargs: dict):
    """What ``transient_retries`` does to an exception of the step (``args``/``kwargs``: the step
    function's, whose first argument or ``context`` is the step's context)."""
    try:
        yield
    except (dg.Failure, dg.RetryRequested):
        raise
    except Exception as exc:
        raise _step_failure(exc, args[0] if args else kwargs.get("context")) from exc


def preview(frame: pl.DataFrame, columns: list[str] | None = None, rows: int = 5) -> dg.MetadataValue:
    """A small markdown table for the asset page."""
    if columns:
        frame = frame.select([c for c in columns if c in frame.columns])
    frame = frame.head(rows)
    if frame.width == 0:
        return dg.MetadataValue.md("_(empty)_")
    def cell(v: object) -> str:
        text = "" if v is None else str(v)
        text = text.replace("|", "\\|").replace("\n", " ")
        return text if len(text) <= 60 else text[:57] + "..."
    header = "| " + " | ".join(frame.columns) + " |\n| " + " | ".join("---" for _ in frame.columns) + " |\n"
    body = "".join("| " + " | ".join(cell(v) for v in row) + " |\n" for row in frame.iter_rows())
    return dg.MetadataValue.md(header + body)


def _cell_value(value: object) -> object:
    """A value a TableRecord holds (str, int, float, bool or None); anything else as its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def table(frame: pl.DataFrame, rows: int = 10) -> dg.MetadataValue:
    """A frame as a table the UI draws (sortable columns, each with its type), at most ``rows`` rows."""
    frame = frame.head(rows)
    schema = dg.TableSchema(columns=[dg.TableColumn(name, str(dtype)) for name, dtype in frame.schema.items()])
    records = [dg.TableRecord({k: _cell_value(v) for k, v in row.items()}) for row in frame.iter_rows(named=True)]
    return dg.MetadataValue.table(records=records, schema=schema)

"""Runs as the Dagster instance records them: why a run failed, in one line.

Dagster-aware (it reads run events); the judgement of a cause is ``pipelines.failures``.
"""

from __future__ import annotations

from typing import Iterable

import dagster as dg

from pipelines import failures


# --- why a run failed ----------------------------------------------------------------------------


def _messages(error) -> list[str]:
    """A recorded error's messages, outermost first (a SerializableErrorInfo keeps the chain)."""
    out, seen = [], set()
    todo = [error]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        out.append(current.message)
        todo.extend([current.cause, current.context])
    return out


def _interrupted(error) -> bool:
    return error is not None and any(
        e is not None and (e.cls_name or "") in ("DagsterExecutionInterruptedError", "KeyboardInterrupt")
        for e in (error, error.cause, error.context))


INTERRUPTED = "interrupted: the run was stopped (SIGTERM/SIGINT, or a stop from the UI)"


def _error_line(error, fallback: str) -> str:
    if error is None:
        return failures.one_line(fallback)
    if _interrupted(error):
        return INTERRUPTED
    return failures.explain_text(_messages(error)).line


def step_failure_causes(events: Iterable[dg.DagsterEvent]) -> list[tuple[str, str]]:
    """(step key, cause in one line) for every failed step, in the order they failed."""
    causes = []
    for event in events:
        if event.event_type_value != dg.DagsterEventType.STEP_FAILURE.value:
            continue
        data = event.step_failure_data
        user = data.user_failure_data
        if user is not None and user.description:  # a dg.Failure: our steps raise theirs with the cause found
            line = failures.one_line(user.description)
        else:
            line = _error_line(data.error, event.message or "")
        causes.append((event.step_key, line))
    return causes


def run_failure_cause(events: Iterable[dg.DagsterEvent]) -> str | None:
    """Why a run failed, in one line: its first failed step and that step's cause (and how many other
    steps failed), or the run's own failure when no step failed."""
    events = list(events)
    steps = step_failure_causes(events)
    if steps:
        step, line = steps[0]
        others = (f" (and {len(steps) - 1} more failed step(s): {', '.join(s for s, _ in steps[1:])})"
                  if len(steps) > 1 else "")
        return f"step {step} failed: {line}{others}"
    for event in events:
        if event.event_type_value == dg.DagsterEventType.RUN_FAILURE.value:
            return _error_line(getattr(event.event_specific_data, "error", None), event.message or "the run failed")
    return None

"""Runs as the Dagster instance records them: dead runs, a run waiting for the warehouse pool, and
why a run failed, in one line.

Dagster-aware (run records, events, pool slots); the judgement of a cause is ``pipelines.orchestration.failures``.

**A killed run must not block the next one.** A run killed with ``kill -9`` (or lost with its
machine) never reports its end: it stays ``STARTED`` and its ``warehouse`` pool slot stays claimed,
so every later run waits for that slot forever. Who clears it:

- *with the daemon* (``make dev``, a deployment): a run launched from the UI, a schedule or a
  backfill runs in a worker process of the code server, which notices the worker's death and marks
  the run failed; the daemon's run monitoring then frees a finished run's slots
  (``run_monitoring.free_slots_after_run_end_seconds`` in ``dagster_home.yaml``);
- *without one* (``make demo``, ``dg launch``, a second run started by hand), and for runs the
  code server did not launch: every run, as it starts, looks at the instance's unfinished runs and
  the pools' holders (``free_dead_runs``) — in the job's executor (``GuardedExecutor``, as ``pipelines/orchestration/executors.py`` builds it for in-process and
  multiprocess runs), before any
  step claims a slot, or, for runs that bypass the job's executor (``execute_in_process``, as
  ``make demo`` does; ``dg.materialize``), as the warehouse resource is set up. A run whose worker
  process is gone is marked failed through ``instance.report_run_failed`` and its slots are freed
  through the event log storage's
  ``free_concurrency_slots_for_run`` — the same calls the daemon and the UI's "free slots" make —
  and a finished run's leftover slots are freed. This looks at processes on this machine, so it
  runs only for an instance on local storage (SQLite under ``$DAGSTER_HOME``); an instance shared
  between machines (Postgres) relies on the daemon.

**A waiting run must not wait forever.** In dagster 1.13 a step waiting for a pool slot in an
in-process run polls in a tight loop (a CPU core) that neither times out nor notices SIGTERM (the
multiprocess executor's loop does notice it, so there the guard leaves interrupts to Dagster), and
a holder that dies *while* a run waits is only found at the next run's start. ``RunGuard``, a thread
beside the process that claims a run's slots (started by the same two hooks), checks every few
seconds while one of the run's steps waits for a slot: it frees the slots of holders that died, stops the run when it
was asked to stop (SIGTERM/SIGINT, or a stop from the UI), and fails it with a one-line cause once
it has waited longer than ``SCHOLARHOUSE_POOL_WAIT_TIMEOUT`` (default 6 h) for a holder that is
alive: the cause names the holder. It stops the waiting loop the only way that loop can be
stopped from outside, by raising ``DagsterExecutionInterruptedError`` in the run's thread; Dagster
then ends the run as interrupted, records the cause and frees the run's pending claims.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from typing import Iterable

import dagster as dg
import psutil
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._core.events import DagsterEvent, EngineEventData
from dagster._core.executor.base import Executor
from dagster._core.executor.multiprocess import MultiprocessExecutor
from dagster._core.storage.runs import SqliteRunStorage
from dagster._utils import interrupts

from pipelines.orchestration import failures
from pipelines.settings import Settings

UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]

# The engine events Dagster writes from the process that runs a run's steps (or orchestrates them),
# each with that process's pid in its metadata: the run worker launched by a code server, the
# in-process executor, the multiprocess executor's parent.
WORKER_EVENTS = (
    "Started process for run",
    "Executing steps in process",
    "Executing steps using multiprocess executor: parent process",
)
IN_PROCESS_EVENT = "Executing steps in process"

GUARD_POLL_S = 2.0

log = logging.getLogger(__name__)


# --- why a run failed ----------------------------------------------------------------------------


def _messages(error) -> list[str]:
    """A recorded error's messages, outermost first (a SerializableErrorInfo keeps the chain)."""
    return [current.message for current in failures.chain(error, ("cause", "context"))]


def _interrupted(error) -> bool:
    return error is not None and any(
        e is not None and (e.cls_name or "") in ("DagsterExecutionInterruptedError", "KeyboardInterrupt")
        for e in (error, error.cause, error.context))


INTERRUPTED = "interrupted: the run was stopped (SIGTERM/SIGINT, or a stop from the UI)"


def _error_line(error, fallback: str) -> str:
    if error is None:
        return failures.one_line(fallback)
    for link in (error, error.cause, error.context):
        if link is not None and link.cls_name == RunStopped.__name__:  # the guard ended the run: its cause
            return failures.one_line(link.message.split(": ", 1)[-1])
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
    steps failed), or the run's own failure when no step failed (a run stopped while it waited)."""
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


# --- dead runs -----------------------------------------------------------------------------------


def is_local(instance: dg.DagsterInstance) -> bool:
    """Runs recorded in SQLite under $DAGSTER_HOME run on this machine: their pids mean something here."""
    return not instance.is_ephemeral and isinstance(instance.run_storage, SqliteRunStorage)


def worker(instance: dg.DagsterInstance, run_id: str) -> tuple[int, float, str] | None:
    """(pid, when it was recorded, message) of the process that last took charge of the run's steps."""
    found = None
    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        message = (event.message if event else None) or ""
        if not message.startswith(WORKER_EVENTS):
            continue
        pid = event.engine_event_data.metadata.get("pid") if event.engine_event_data else None
        if pid is not None:
            found = (int(pid.value), record.timestamp, message)
    return found


def process_alive(pid: int, since: float) -> bool:
    """Is the process that had ``pid`` at time ``since`` still running? (Not if the pid is free, a
    zombie, or was taken by a process started later.)"""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return process.create_time() <= since + 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def _pool_holders(instance: dg.DagsterInstance) -> dict[str, list[str]]:
    """run id → the pools where it holds or waits for a slot."""
    storage = instance.event_log_storage
    holders: dict[str, list[str]] = {}
    if not storage.supports_global_concurrency_limits:
        return holders
    for pool in storage.get_concurrency_keys():
        info = storage.get_concurrency_info(pool)
        for run_id in {s.run_id for s in info.claimed_slots} | {p.run_id for p in info.pending_steps}:
            holders.setdefault(run_id, []).append(pool)
    return holders


def free_dead_runs(instance: dg.DagsterInstance, current_run_id: str | None = None) -> list[str]:
    """Mark failed the unfinished runs whose worker process is gone, free their pool slots, and free
    the slots finished runs still hold. Returns one line per run dealt with. Claims that belong to no
    run (taken by hand or by a tool) and runs on other machines are left alone."""
    if not is_local(instance):
        return []
    storage = instance.event_log_storage
    holders = _pool_holders(instance)
    unfinished = {r.dagster_run.run_id: r.dagster_run
                  for r in instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED))}
    done = []
    for run_id in sorted(set(unfinished) | set(holders)):
        if run_id == current_run_id:
            continue
        run = unfinished.get(run_id) or instance.get_run_by_id(run_id)
        if run is None:
            continue
        if run.is_finished:
            storage.free_concurrency_slots_for_run(run_id)
            done.append(f"freed the {'/'.join(holders[run_id])} pool slot(s) of run {run_id}, which had ended ({run.status.value})")
            continue
        found = worker(instance, run_id)
        if found is None or process_alive(found[0], found[1]):
            continue  # not started yet (the daemon's start timeout covers that), or alive
        pid = found[0]
        message = (f"The run's worker process (pid {pid}) is gone: killed or lost with its machine. Marked failed "
                   f"{'by run ' + current_run_id if current_run_id else 'at the start of a run'}, "
                   f"and its pool slots freed.")
        instance.report_run_failed(run, message=message)
        if storage.supports_global_concurrency_limits:
            storage.free_concurrency_slots_for_run(run_id)
        done.append(f"run {run_id} ({run.tags.get('dagster/partition', 'no partition')}): worker pid {pid} is gone; "
                    f"marked failed, pool slots freed")
    return done


# --- a run waiting for the pool ------------------------------------------------------------------


class RunStopped(DagsterExecutionInterruptedError):
    """Raised in a run's thread by ``RunGuard`` to end a wait that cannot end otherwise. Its message
    (set on a subclass made for the occasion: an exception raised this way takes no arguments) is the
    cause, which Dagster records with the run's failure."""

    cause = "stopped while waiting for a pool slot"

    def __init__(self, *args):
        super().__init__(*(args or (self.cause,)))


def executes_steps_here(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Does this process run the run's steps in process (so its pool waits happen here)?"""
    found = worker(instance, run_id)
    return found is not None and found[0] == os.getpid() and found[2].startswith(IN_PROCESS_EVENT)


class RunGuard:
    """A thread beside an in-process run; see the module docstring."""

    def __init__(self, instance: dg.DagsterInstance, run_id: str, *, wait_timeout_s: float,
                 handle_interrupts: bool = True, poll_s: float = GUARD_POLL_S):
        self._ref = instance.get_ref()
        self._run_id = run_id
        self._timeout = wait_timeout_s
        self._handle_interrupts = handle_interrupts  # not for the multiprocess executor: it checks them itself
        self._poll = poll_s
        self._target = threading.get_ident()  # the thread that runs the steps (and waits for slots)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"run-guard-{run_id[:8]}", daemon=True)

    def start(self) -> "RunGuard":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        _ACTIVE.pop(self._run_id, None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _watch(self) -> None:
        try:
            with dg.DagsterInstance.from_ref(self._ref) as instance:
                while not self._stop.wait(self._poll):
                    cause = self._check(instance)
                    if cause is not None:
                        self._end_run(cause)
                        return
        except Exception:  # noqa: BLE001 - the guard must never be what breaks a run
            log.exception("run guard stopped")

    def _check(self, instance: dg.DagsterInstance) -> str | None:
        waiting = self._waiting(instance)
        if not waiting:
            return None
        for line in free_dead_runs(instance, current_run_id=self._run_id):
            instance.report_engine_event(line, instance.get_run_by_id(self._run_id))
        if self._handle_interrupts and interrupts.pop_captured_interrupt():  # dagster's flag: SIGTERM/SIGINT came
            # (taken, not just read: the run ends by the exception raised below, and the flag left set
            # would be raised again, without this cause, as the run's resources are torn down)
            return f"interrupted while step {waiting[0][1]} waited for a slot in pool {waiting[0][0]!r}"
        if self._waiting(instance) != waiting:
            return None  # a slot came free (maybe just now, from a dead holder)
        pool, step, since = min(waiting, key=lambda w: w[2])
        if any(slot.run_id == self._run_id for slot in instance.event_log_storage.get_concurrency_info(pool).claimed_slots):
            return None  # the run's own step holds the slot (steps side by side in a multiprocess run)
        waited = time.time() - since
        if waited <= self._timeout:
            return None
        return (f"gave up after waiting {waited:.0f} s (SCHOLARHOUSE_POOL_WAIT_TIMEOUT={self._timeout:g}) for a slot in "
                f"pool {pool!r} for step {step}: held by {self._holders(instance, pool)}")

    def _waiting(self, instance: dg.DagsterInstance) -> list[tuple[str, str, float]]:
        storage = instance.event_log_storage
        out = []
        for pool in storage.get_concurrency_keys():
            for pending in storage.get_concurrency_info(pool).pending_steps:
                if pending.run_id == self._run_id and pending.assigned_timestamp is None:
                    out.append((pool, pending.step_key, pending.enqueued_timestamp.timestamp()))
        return sorted(out)

    def _holders(self, instance: dg.DagsterInstance, pool: str) -> str:
        parts = []
        for slot in instance.event_log_storage.get_concurrency_info(pool).claimed_slots:
            run = instance.get_run_by_id(slot.run_id)
            found = worker(instance, slot.run_id) if run else None
            if run is None:
                parts.append(f"{slot.run_id!r} (not a run: a claim made by hand or by a tool; free it under "
                             "Deployment → Concurrency)")
            else:
                parts.append(f"run {slot.run_id} ({run.tags.get('dagster/partition', 'no partition')}, step {slot.step_key}, "
                             f"{run.status.value}{', pid ' + str(found[0]) + ' alive' if found else ''})")
        return "; ".join(parts) or "nobody (the slot was just freed)"

    def _end_run(self, cause: str) -> None:
        log.error(cause)
        stopped = type(RunStopped.__name__, (RunStopped,), {"cause": cause})
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target), ctypes.py_object(stopped))


_ACTIVE: dict[str, RunGuard] = {}  # run id → the guard of that run in this process


def pool_wait_timeout_from_env() -> float:
    """The setting ``SCHOLARHOUSE_POOL_WAIT_TIMEOUT`` (read as a run starts: the executor is the edge)."""
    return Settings.one_from_env("pool_wait_timeout_s")


def start_guard(instance: dg.DagsterInstance, run_id: str, *, wait_timeout_s: float,
                handle_interrupts: bool = True) -> RunGuard | None:
    """A guard for the run in this process, unless one is already there (the executor's and the
    warehouse resource's hooks both ask; the first one wins and stops it)."""
    if run_id in _ACTIVE or not is_local(instance):
        return None
    guard = _ACTIVE[run_id] = RunGuard(instance, run_id, wait_timeout_s=wait_timeout_s,
                                       handle_interrupts=handle_interrupts)
    return guard.start()


# --- the job's executor --------------------------------------------------------------------------


class GuardedExecutor(Executor):
    """Dagster's executor (in-process or multiprocess), with dead runs cleared as the run starts and a
    RunGuard beside the process that claims the run's pool slots (for the multiprocess executor that
    is the parent process, where no resource is ever set up)."""

    def __init__(self, inner: Executor):
        self._inner = inner

    @property
    def retries(self):
        return self._inner.retries

    @property
    def step_dependency_config(self):
        return self._inner.step_dependency_config

    def execute(self, plan_context, execution_plan):
        instance, run_id = plan_context.instance, plan_context.run_id
        guard = None
        if is_local(instance):
            for line in free_dead_runs(instance, current_run_id=run_id):
                yield DagsterEvent.engine_event(plan_context, line, EngineEventData())
            guard = start_guard(instance, run_id, wait_timeout_s=pool_wait_timeout_from_env(),
                                handle_interrupts=not isinstance(self._inner, MultiprocessExecutor))
        try:
            yield from self._inner.execute(plan_context, execution_plan)
        finally:
            if guard is not None:
                guard.stop()

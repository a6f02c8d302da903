"""Fault zoo: runs, disks and history. One failure class per row, each with the exact trace it must
leave: exit status, the one-line cause, rows landed, run status, pool slots.

- killed runs: a run killed with ``kill -9`` while it holds the ``warehouse`` pool slot, followed by
  a normal run (started after the kill, or already waiting when the holder dies);
- a run that waits on a live holder gives up with the holder named;
- stops: SIGTERM to a run in a step, or waiting for the pool, stops it at once (no retry);
- disks: a read-only and a full warehouse directory (a real tmpfs in a private mount namespace,
  ``unshare -rm``: the tests run as root, where chmod would not stop a write);
- demo input: dates that are not partitions, a missing captures folder;
- causes: what ``pipelines.orchestration.failures`` makes of an error chain (transient or not, the line);
- history: a backfill of an earlier day moves ``exports/latest`` to the newest history.

Runs use the bundled captures, a temporary DAGSTER_HOME configured by the project's
dagster_home.yaml and a temporary warehouse; nothing touches the network.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from tests.conftest import SAMPLE_DATE, SAMPLES
from pipelines import warehouse
from pipelines.orchestration import failures
from pipelines.publish import exports as publish
from pipelines.orchestration import runs

PROJECT = Path(__file__).resolve().parents[2]
POOL = "warehouse"
FIRST_STEP = "raw__page_captures"
BOUND_S = 120  # a wait in these tests: a bound, never a measurement

RUN_ONE_PARTITION = """
import sys
import dagster as dg
from pipelines.definitions import defs

result = defs.resolve_job_def("nightly_refresh").execute_in_process(
    partition_key=sys.argv[1], instance=dg.DagsterInstance.get(), raise_on_error=False
)
sys.exit(0 if result.success else 1)
"""


@pytest.fixture
def wh(tmp_path) -> Path:
    path = tmp_path / "warehouse" / "scholarhouse.duckdb"
    path.parent.mkdir()
    return path


def _env(home: Path, wh: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    env.update({
        "DAGSTER_HOME": str(home), "SCHOLARHOUSE_CAPTURES": str(SAMPLES), "SCHOLARHOUSE_WAREHOUSE": str(wh),
        "SCHOLARHOUSE_OVERRIDES": str(home.parent / "no-overrides.toml"), "PYTHONUNBUFFERED": "1", **extra,
    })
    return env


def _start_run(instance: dg.DagsterInstance, wh: Path, log: Path, day: str = SAMPLE_DATE, **env) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-c", RUN_ONE_PARTITION, day], cwd=PROJECT,
                                env=_env(Path(instance.root_directory), wh, **env), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def _until(what: str, condition, proc: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + BOUND_S
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the run exited ({proc.returncode}) before {what}:\n{log.read_text()[-3000:] if log else ''}")
        if time.monotonic() > deadline:
            pytest.fail(f"not within {BOUND_S} s: {what}")
        time.sleep(0.2)


def _slot_holders(instance: dg.DagsterInstance) -> list[tuple[str, str]]:
    return [(s.run_id, s.step_key) for s in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def _waiting(instance: dg.DagsterInstance, run_id: str | None = None) -> list[str]:
    return [p.step_key for p in instance.event_log_storage.get_concurrency_info(POOL).pending_steps
            if p.assigned_timestamp is None and (run_id is None or p.run_id == run_id)]


def _events(instance: dg.DagsterInstance, run_id: str, kind: dg.DagsterEventType) -> list:
    return list(instance.all_logs(run_id, of_type=kind))


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _run_raw(instance: dg.DagsterInstance, wh: Path, how: str = "materialize", **resource_args):
    """A normal run of the first asset (the raw layer): enough to need the pool. ``materialize`` runs
    it in this process with dagster's in-process executor (what execute_in_process, `make demo` and
    the UI's asset materialisations use); ``job, multiprocess`` runs the job's own executor in its
    multiprocess mode (what `dg launch --config` and the launchpad can ask for): this process only
    orchestrates, the step runs in a child process."""
    from pipelines.assets.ingest import page_captures
    from pipelines.resources import CapturesFolderResource, WarehouseResource

    if how == "job, multiprocess":  # the job's own resources: from the environment (the test sets it)
        from dagster._core.definitions.reconstruct import ReconstructableRepository

        job = ReconstructableRepository.for_module("pipelines.definitions", "defs", str(PROJECT)).get_reconstructable_job(
            "nightly_refresh")
        return dg.execute_job(
            job, instance, tags={"dagster/partition": SAMPLE_DATE},
            run_config={"execution": {"config": {"multiprocess": {}}}},
            asset_selection=[dg.AssetKey(["raw", "page_captures"])],
        )
    return dg.materialize(
        [page_captures], partition_key=SAMPLE_DATE, instance=instance, raise_on_error=False,
        resources={"page_source": CapturesFolderResource(path=str(SAMPLES)),
                   "warehouse_db": WarehouseResource(path=str(wh), **resource_args)},
    )


def _pages_landed(wh: Path) -> int:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute("SELECT count(*) FROM raw.page_captures WHERE partition_date = ?", [SAMPLE_DATE]).fetchall()[0][0]


SAMPLE_PAGES = len([p for p in SAMPLES.iterdir() if p.suffix in (".txt", ".html")])


# --- killed runs ---------------------------------------------------------------------------------


def _doomed_run_holding_the_slot(instance, wh, tmp_path):
    """A run in a subprocess, inside its first step and holding the pool slot: the test holds the
    DuckDB file, so the step waits in ``warehouse.connect``. Returns (process, run id, lock)."""
    lock = duckdb.connect(str(wh))
    log = tmp_path / "doomed.log"
    proc = _start_run(instance, wh, log)
    holder = _until("the doomed run holds the warehouse slot", lambda: _slot_holders(instance), proc, log)
    assert [step for _, step in holder] == [FIRST_STEP]
    return proc, holder[0][0], lock


@pytest.mark.timeout(300)
@pytest.mark.parametrize("how, when", [
    ("materialize", "next run starts after the kill"),
    ("materialize", "next run already waits when the holder is killed"),
    ("job, multiprocess", "next run starts after the kill"),
])
def test_a_killed_run_does_not_block_the_next_run(how, when, instance, wh, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHOLARHOUSE_CAPTURES", str(SAMPLES))
    monkeypatch.setenv("SCHOLARHOUSE_WAREHOUSE", str(wh))
    proc, doomed, lock = _doomed_run_holding_the_slot(instance, wh, tmp_path)
    pid = proc.pid
    try:
        def kill():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            lock.close()

        if when == "next run starts after the kill":
            kill()
            killer = None
        else:  # kill the holder once the next run (in this process) waits for the slot
            def kill_when_waiting():
                _until("the next run waits for the slot", lambda: [k for k in _waiting(instance)])
                kill()
            killer = threading.Thread(target=kill_when_waiting, daemon=True)
            killer.start()
        result = _run_raw(instance, wh, how)
        if killer is not None:
            killer.join(timeout=BOUND_S)
    finally:
        _stop(proc)
        lock.close()

    assert proc.returncode == -signal.SIGKILL
    assert result.success, runs.run_failure_cause(result.all_events)
    assert _pages_landed(wh) == SAMPLE_PAGES
    # The dead run: marked failed through the instance, with the cause, and its slot freed.
    record = instance.get_run_by_id(doomed)
    assert record.status == dg.DagsterRunStatus.FAILURE
    (failure,) = _events(instance, doomed, dg.DagsterEventType.RUN_FAILURE)
    assert failure.dagster_event.message.startswith(f"The run's worker process (pid {pid}) is gone: killed or lost")
    assert f"by run {result.run_id}" in failure.dagster_event.message
    assert _slot_holders(instance) == [] and _waiting(instance) == []
    # The next run waited only as long as the dead run lived: no step failed, none was retried.
    for kind in (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.STEP_UP_FOR_RETRY):
        assert _events(instance, result.run_id, kind) == []


def test_a_run_that_waits_on_a_live_holder_gives_up_naming_it(instance, wh):
    storage = instance.event_log_storage
    storage.initialize_concurrency_limit_to_default(POOL)
    assert storage.claim_concurrency_slot(POOL, "maintenance-script", "hold").is_claimed
    try:
        result = _run_raw(instance, wh, pool_wait_timeout_s=1)
        assert not result.success
        cause = runs.run_failure_cause(result.all_events)
        assert cause.startswith("gave up after waiting ")
        assert cause.endswith(f"for a slot in pool 'warehouse' for step {FIRST_STEP}: held by 'maintenance-script' "
                              "(not a run: a claim made by hand or by a tool; free it under Deployment → Concurrency)")
        assert _events(instance, result.run_id, dg.DagsterEventType.STEP_START) == []
        assert instance.get_run_by_id(result.run_id).status == dg.DagsterRunStatus.FAILURE
        assert _waiting(instance) == []  # its wait is withdrawn...
        assert _slot_holders(instance) == [("maintenance-script", "hold")]  # ...and a live holder is left alone
        assert not wh.exists()
    finally:
        storage.free_concurrency_slot_for_step("maintenance-script", "hold")


# --- stops ---------------------------------------------------------------------------------------


@pytest.mark.timeout(300)
@pytest.mark.parametrize("where", ["in a step", "waiting for the pool"])
def test_sigterm_stops_a_run_at_once_without_a_retry(where, instance, wh, tmp_path):
    storage = instance.event_log_storage
    log = tmp_path / "run.log"
    lock = None
    if where == "in a step":  # the step waits for the DuckDB file the test holds: it is in user code
        lock = duckdb.connect(str(wh))
    else:
        storage.initialize_concurrency_limit_to_default(POOL)
        assert storage.claim_concurrency_slot(POOL, "maintenance-script", "hold").is_claimed
    proc = _start_run(instance, wh, log)
    try:
        def ready():
            records = instance.get_runs()
            if not records:
                return None
            run_id = records[0].run_id
            if where == "in a step":
                return run_id if _events(instance, run_id, dg.DagsterEventType.STEP_START) else None
            return run_id if _waiting(instance, run_id) else None

        run_id = _until(f"the run is {where}", ready, proc, log)
        proc.send_signal(signal.SIGTERM)
        # It must end; a retry (the defect) would instead start the step again after a back-off.
        _until("the run ends, or retries the step", lambda: proc.poll() is not None or
               _events(instance, run_id, dg.DagsterEventType.STEP_UP_FOR_RETRY))
        assert _events(instance, run_id, dg.DagsterEventType.STEP_UP_FOR_RETRY) == []
        assert proc.wait(timeout=BOUND_S) == 1, log.read_text()[-3000:]
    finally:
        _stop(proc)
        if lock is not None:
            lock.close()
        else:
            storage.free_concurrency_slot_for_step("maintenance-script", "hold")

    assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
    events = [e.dagster_event for e in instance.all_logs(run_id) if e.dagster_event]
    if where == "in a step":
        assert runs.run_failure_cause(events) == f"step {FIRST_STEP} failed: {runs.INTERRUPTED}"
        assert [e.step_key for e in events if e.is_step_failure] == [FIRST_STEP]
    else:
        assert runs.run_failure_cause(events) == (
            f"interrupted while step {FIRST_STEP} waited for a slot in pool 'warehouse'")
        assert not [e for e in events if e.event_type == dg.DagsterEventType.STEP_START]
    assert _waiting(instance) == [] and [h for h, _ in _slot_holders(instance) if h == run_id] == []
    assert _events(instance, run_id, dg.DagsterEventType.STEP_SUCCESS) == []


# --- disks ---------------------------------------------------------------------------------------

# Inside a private mount namespace (unshare -rm: no root needed), a small tmpfs holds the warehouse:
# a warehouse from an earlier night is made there, then the fault is applied and `make demo`'s entry
# point runs the day; afterwards what the warehouse holds is read back in the same namespace.
DISK_SCRIPT = r"""
set -u
mount -t tmpfs -o size=16m tmpfs "$MNT"
"$PY" -c 'import sys, duckdb
from pipelines import warehouse
with warehouse.connect(sys.argv[1]) as con:
    warehouse.ensure_schema(con)
    con.execute("CREATE TABLE main.earlier_night AS SELECT range AS n FROM range(7)")' "$MNT/scholarhouse.duckdb"
case "$FAULT" in
  read-only) mount -o remount,ro "$MNT" ;;
  full) dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null || true ;;
esac
"$PY" -m pipelines.demo > "$OUT/stdout" 2> "$OUT/stderr"
echo $? > "$OUT/status"
"$PY" -c 'import sys, json, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(json.dumps({t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                  for t in ("main.earlier_night", "raw.page_captures", "staging.profiles")}))' \
    "$MNT/scholarhouse.duckdb" > "$OUT/rows.json"
"""

DISK_FAULTS = {
    # fault: the one-line cause make demo ends with (after "step raw__page_captures failed: ")
    "read-only": 'read-only file system: IO Error: Cannot open file "{wh}": Read-only file system',
    "full": 'disk full: TransactionContext Error: Failed to commit: Could not write file "{wh}.wal": '
            "No space left on device",
}


@pytest.fixture(scope="module")
def disk_runs(tmp_path_factory):
    """Both disk faults, run side by side (each a fresh process and namespace)."""
    procs = {}
    for fault in DISK_FAULTS:
        root = tmp_path_factory.mktemp(f"disk-{fault}")
        (root / "mnt").mkdir()
        (root / "out").mkdir()
        (root / "home").mkdir()
        shutil.copy(PROJECT / "dagster_home.yaml", root / "home" / "dagster.yaml")
        wh = root / "mnt" / "scholarhouse.duckdb"
        env = _env(root / "home", wh, SCHOLARHOUSE_DATE=SAMPLE_DATE, MNT=str(root / "mnt"), OUT=str(root / "out"),
                   PY=sys.executable, FAULT=fault)
        procs[fault] = (subprocess.Popen(["unshare", "-rm", "sh", "-c", DISK_SCRIPT], cwd=PROJECT, env=env,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), root, wh)
    done = {}
    for fault, (proc, root, wh) in procs.items():
        output, _ = proc.communicate(timeout=BOUND_S * 2)
        assert proc.returncode == 0, f"{fault}: the namespace script failed (needs unshare -rm):\n{output[-3000:]}"
        done[fault] = (root / "out", wh)
    return done


@pytest.mark.parametrize("fault", list(DISK_FAULTS))
def test_a_warehouse_disk_fault_fails_at_once_with_its_cause(fault, disk_runs):
    out, wh = disk_runs[fault]
    assert (out / "status").read_text().strip() == "1"
    stderr = (out / "stderr").read_text().strip().splitlines()
    cause = DISK_FAULTS[fault].format(wh=wh)
    assert stderr[-1].startswith("error: run ") and stderr[-1].endswith(f" failed: step {FIRST_STEP} failed: {cause}")
    # dagster's log lines are in the demo's log file, not on the terminal; the terminal says where
    log = (out.parent / "home" / "demo.log").read_text()
    assert f"full log is in {out.parent / 'home' / 'demo.log'}" in "\n".join(stderr)
    assert " - STEP_START - " not in (out / "stdout").read_text() + "\n".join(stderr)
    # failed once, never retried; nothing after it ran; the earlier night is untouched, the day left no rows
    assert log.count(" - STEP_FAILURE - ") == 1 and " - STEP_UP_FOR_RETRY - " not in log
    assert " - STEP_SUCCESS - " not in log
    assert json.loads((out / "rows.json").read_text()) == {
        "main.earlier_night": 7, "raw.page_captures": 0, "staging.profiles": 0}


# --- demo input ----------------------------------------------------------------------------------

DEMO_INPUT = {
    # case: (environment, exit status, the one line on stderr)
    "date after today": ({"SCHOLARHOUSE_DATE": "2999-01-01"}, 2,
                         "error: SCHOLARHOUSE_DATE=2999-01-01 is not a partition: it is after today (UTC); capture "
                         "dates run from 2025-01-01 to {last}"),
    "date before the first partition": ({"SCHOLARHOUSE_DATE": "2024-12-31"}, 2,
                                        "error: SCHOLARHOUSE_DATE=2024-12-31 is not a partition: it is before the "
                                        "first partition, 2025-01-01; capture dates run from 2025-01-01 to {last}"),
    "not a date": ({"SCHOLARHOUSE_DATE": "2026-02-30"}, 2, "error: SCHOLARHOUSE_DATE must be YYYY-MM-DD, got '2026-02-30'"),
    "no captures folder": ({"SCHOLARHOUSE_CAPTURES": "/nonexistent/captures"}, 2,
                           "error: captures folder not found: /nonexistent/captures"),
    "a bad setting": ({"SCHOLARHOUSE_MATCH_WORKERS": "many"}, 2,
                      "error: SCHOLARHOUSE_MATCH_WORKERS must be an integer, got 'many'"),
}


@pytest.mark.parametrize("case", list(DEMO_INPUT))
def test_demo_refuses_what_it_cannot_run_in_one_line(case, monkeypatch, capsys, tmp_path):
    from pipelines import demo
    from pipelines.assets.partitions import daily_partitions

    env, status, line = DEMO_INPUT[case]
    monkeypatch.setenv("SCHOLARHOUSE_WAREHOUSE", str(tmp_path / "wh.duckdb"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert demo.main() == status
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [line.format(last=daily_partitions.get_last_partition_key())]
    assert not (tmp_path / "wh.duckdb").exists()


# --- causes --------------------------------------------------------------------------------------


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException:
            raise outer
    except BaseException as exc:
        return exc


CAUSES = {
    # case: (exception, transient, line)
    "a full disk under DuckDB's failed rollback": (
        _chained(duckdb.TransactionException("TransactionContext Error: cannot rollback - no transaction is active"),
                 duckdb.IOException('IO Error: Could not write file "w.duckdb.wal": No space left on device')),
        False, 'disk full: IO Error: Could not write file "w.duckdb.wal": No space left on device'),
    "a read-only directory": (
        OSError(errno.EROFS, "Read-only file system", "/data/exports/.versions"), False,
        "read-only file system: Read-only file system: /data/exports/.versions"),
    "a directory it may not write": (
        PermissionError(errno.EACCES, "Permission denied", "/data/warehouse"), False,
        "permission denied: Permission denied: /data/warehouse"),
    "a disk quota": (OSError(errno.EDQUOT, "Disk quota exceeded"), False, "disk full: Disk quota exceeded"),
    "a file over the size limit": (OSError(errno.EFBIG, "File too large"), False, "file too large: File too large"),
    "the warehouse locked by another process": (
        duckdb.IOException('IO Error: Could not set lock on file "w.duckdb": Conflicting lock is held in python (PID 7)'),
        True, 'warehouse locked by another process: IO Error: Could not set lock on file "w.duckdb": Conflicting lock '
              "is held in python (PID 7)"),
    "the source cache locked": (_chained(RuntimeError("cache write failed"),
                                         __import__("sqlite3").OperationalError("database is locked")),
                                True, "warehouse locked by another process: database is locked"),
    "a dropped connection": (ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"), True,
                             "connection failed: Connection reset by peer"),
    "a bug": (KeyError("listing_id"), False, "KeyError: 'listing_id'"),
    "bad data": (ValueError("could not convert 'x' to int"), False, "ValueError: could not convert 'x' to int"),
}


@pytest.mark.parametrize("case", list(CAUSES))
def test_a_failure_is_retried_only_for_a_transient_cause_and_named_in_one_line(case):
    exc, transient, line = CAUSES[case]
    cause = failures.explain(exc)
    assert (cause.transient, cause.line) == (transient, line)


@pytest.mark.parametrize("case", ["a full disk under DuckDB's failed rollback", "the warehouse locked by another process"])
def test_a_step_asks_dagster_for_a_retry_only_when_the_cause_is_transient(case):
    from pipelines.assets.common import RETRY, transient_retries

    exc, transient, line = CAUSES[case]

    @transient_retries
    def step(context):
        raise exc

    class Context:
        retry_number = 1

    with pytest.raises((dg.RetryRequested, dg.Failure)) as raised:
        step(Context())
    if transient:
        assert isinstance(raised.value, dg.RetryRequested) and raised.value.max_retries == RETRY.max_retries
    else:
        assert isinstance(raised.value, dg.Failure) and raised.value.description == line
        assert raised.value.allow_retries is False
    assert raised.value.__cause__ is exc


def test_a_failed_rollback_never_replaces_the_cause(tmp_path):
    """replace_slice after DuckDB already ended the transaction: the caller sees the insert's error."""
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        con.execute("CREATE TABLE t (n INTEGER NOT NULL)")

        def fail_after_ending_the_transaction():
            con.execute("COMMIT")  # what a fatal write error leaves: no transaction to roll back
            raise duckdb.IOException("IO Error: Could not write file: No space left on device")

        with pytest.raises(duckdb.IOException, match="No space left on device"):
            warehouse.replace_slice(con, [], after=fail_after_ending_the_transaction)


# --- history -------------------------------------------------------------------------------------


def test_a_backfill_of_an_earlier_day_moves_exports_latest_to_the_newest_history(tmp_path):
    wh, exports, analytics = tmp_path / "scholarhouse.duckdb", tmp_path / "exports", tmp_path / "analytics.duckdb"
    with duckdb.connect(str(wh)) as con:
        con.execute("CREATE SCHEMA marts")
        con.execute("CREATE TABLE marts.citations AS SELECT range AS n FROM range(3)")
        publish.export_tables(con, exports, date(2026, 11, 21))  # the night of the 21st: 3 citation rows
        publish.publish_export(exports, date(2026, 11, 21))
        # a backfill of the 19th: the history-wide mart is rebuilt over the whole history
        con.execute("INSERT INTO marts.citations SELECT range FROM range(3, 12)")
        publish.export_tables(con, exports, date(2026, 11, 19))
        publish.publish_export(exports, date(2026, 11, 19))
    publish.publish_analytics_copy(wh, analytics)

    latest = json.loads((exports / "latest" / "manifest.json").read_text())
    assert (latest["as_of"], latest["tables"]["marts.citations"]["rows"]) == ("2026-11-19", 12)
    parquet = exports / "latest" / latest["tables"]["marts.citations"]["file"]
    with duckdb.connect(str(analytics), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM marts.citations").fetchall() == [(12,)]
        assert con.execute(f"SELECT count(*) FROM '{parquet}'").fetchall() == [(12,)]  # apps = analysts
    # each date keeps the snapshot its own run wrote
    older = json.loads((exports / "2026-11-21" / "manifest.json").read_text())
    assert older["tables"]["marts.citations"]["rows"] == 3

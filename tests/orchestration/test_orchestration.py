"""Orchestration: the definitions as the UI and the daemon see them, the nightly schedule, and a
backfill whose runs overlap in time without ever fighting over the DuckDB file.

How one writer is guaranteed (what the backfill test proves):

- every step of ``nightly_refresh`` — assets and check steps alike — is in the pool
  ``warehouse``; ``dagster_home.yaml`` gives every pool one slot (``default_limit: 1``) at op
  granularity;
- a step claims the slot from the *instance* (its event-log storage) before it starts and frees it
  when it ends, whichever process runs it. The in-process executor does this too in dagster
  1.13 (``InstanceConcurrencyContext`` in ``inprocess_execution_iterator``), so two runs in two
  OS processes never write at the same time;
- runs the daemon launches (schedule, backfills) also wait in a queue that starts one at a time
  (``max_concurrent_runs: 1``); the pool is what protects runs started outside it (``dg launch``,
  ``make demo``);
- ``pipelines.warehouse.connect`` waits on a held DuckDB lock — a second line of defence for
  anything outside the pool.

The backfill test makes the overlap deterministic instead of hoping two processes collide: it
takes the only slot itself, starts two runs at once in separate processes, waits until *both*
report "Step blocked by limit for pool warehouse" (and neither has started a step), then lets go.
The third partition is then launched through the real CLI path, ``dg launch``, synchronously and
without a daemon. Everything runs on the bundled captures, in a temporary DAGSTER_HOME and a
temporary warehouse; enrichment stays off (no contact address), so nothing touches the network.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import date, datetime, timezone
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from tests.conftest import SAMPLES

PROJECT = Path(__file__).resolve().parents[2]
LAYERS = {"raw", "staging", "core", "marts", "exports", "enrichment"}
GUARDED_LAYERS = {"raw", "staging", "core", "marts"}  # the warehouse contract: one suite per table
POOL = "warehouse"
BLOCKED = f"blocked by limit for pool {POOL}"
RUN_TIMEOUT_S = 240  # per wait; a run on the samples takes seconds, more on a loaded machine

# What one backfill run is: the job for one partition, recorded in the instance at $DAGSTER_HOME.
RUN_ONE_PARTITION = """
import sys
import dagster as dg
from pipelines.definitions import defs

result = defs.resolve_job_def("nightly_refresh").execute_in_process(
    partition_key=sys.argv[1], instance=dg.DagsterInstance.get(), raise_on_error=False
)
sys.exit(0 if result.success else 1)
"""


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from pipelines.definitions import defs

    return defs


@pytest.fixture(scope="module")
def asset_graph(defs):
    return defs.resolve_asset_graph()


# --- the definitions ---------------------------------------------------------------------------


def test_every_asset_is_grouped_by_layer_with_kinds_and_a_description(asset_graph):
    keys = list(asset_graph.get_all_asset_keys())
    assert {asset_graph.get(k).group_name for k in keys} == LAYERS
    for key in keys:
        node = asset_graph.get(key)
        assert node.group_name == key.path[0], key
        assert node.kinds, f"{key} has no kinds"
        assert node.description and len(node.description) > 30, f"{key} needs a description for the UI"


def test_every_step_that_touches_duckdb_is_in_the_one_writer_pool_and_retries_transient_causes(asset_graph):
    """Assets *and* check steps: a DuckDB reader also holds the file lock against another run's writer."""
    definitions = asset_graph.assets_defs  # AssetChecksDefinition is a kind of AssetsDefinition
    assert any(isinstance(d, dg.AssetChecksDefinition) for d in definitions)
    for definition in definitions:
        name = definition.node_def.name
        assert "warehouse_db" in definition.required_resource_keys, f"{name} does not use the warehouse"
        for op_def in _ops(definition.node_def):
            if op_def.name in NO_DATABASE_OPS:
                assert op_def.pool is None and "warehouse_db" not in op_def.required_resource_keys, op_def.name
            else:
                assert op_def.pool == POOL, op_def.name
                assert "warehouse_db" in op_def.required_resource_keys, op_def.name
    for assets_def in definitions:
        if isinstance(assets_def, dg.AssetChecksDefinition):
            continue  # a check reads and reports; a failed read is a failed check, not a retry
        for op_def in _ops(assets_def.node_def):
            # No dg.RetryPolicy: dagster retries every exception under one, and turns an interrupt
            # (an operator's stop) into a retry. Each step retries transient causes itself.
            assert op_def.retry_policy is None, op_def.name
            assert getattr(op_def.compute_fn.decorated_fn, "retries_transient_only", False), op_def.name
        for key in assets_def.keys:
            assert POOL in asset_graph.get(key).pools, key


# Steps that open no database and may run side by side (the staging graph's parse shards, the
# novelty graph's preparation and chunks).
NO_DATABASE_OPS = {"parse_shard", "prepare_novelty_chunks", "score_novelty_chunk", "plan_paper_shards",
                   "score_paper_shard", "cluster_papers", "resolve_author_shard", "assemble_core"}


def _ops(node_def) -> list:
    """The ops of an op or a graph (graph-backed assets)."""
    if isinstance(node_def, dg.GraphDefinition):
        return [op for node in node_def.node_defs for op in _ops(node)]
    return [node_def]


def test_every_contract_table_has_a_blocking_gate(asset_graph):
    checks: dict[dg.AssetKey, dict[str, bool]] = {}
    for check_key in asset_graph.asset_check_keys:
        checks.setdefault(check_key.asset_key, {})[check_key.name] = asset_graph.get(check_key).blocking
    tables = [k for k in asset_graph.get_all_asset_keys() if k.path[0] in GUARDED_LAYERS]
    assert {k.path[0] for k in tables} == GUARDED_LAYERS
    for key in tables:
        assert checks.get(key, {}).get("gates") is True, f"{key.to_user_string()} has no blocking gates"
        assert checks[key].get("warnings", False) is False  # warnings never block
    assert not [k for k in checks if k.path[0] == "exports"]  # exports are files, checked upstream


def test_enrichment_tables_have_checks(asset_graph):
    checked = {k.asset_key for k in asset_graph.asset_check_keys}
    enrichment = [k for k in asset_graph.get_all_asset_keys() if k.path[0] == "enrichment"]
    assert enrichment
    assert all(k in checked for k in enrichment)


def test_the_nightly_job_covers_every_asset_and_check_in_one_process(defs, asset_graph):
    from pipelines.assets.partitions import daily_partitions

    job = defs.resolve_job_def("nightly_refresh")
    assert job.partitions_def == daily_partitions
    assert set(job.asset_layer.executable_asset_keys) == set(asset_graph.get_all_asset_keys())
    assert set(job.asset_layer.asset_graph.asset_check_keys) == set(asset_graph.asset_check_keys)
    for key in asset_graph.get_all_asset_keys():
        assert asset_graph.get(key).partitions_def == daily_partitions, key
    # one process per run by default (a process per step re-imports everything for every step);
    # a run may ask for the multiprocess executor to parse shards side by side
    assert job.executor_def.name == "scholarhouse_executor"
    run_config = job.partitioned_config.get_run_config_for_partition_key("2026-11-21")
    assert run_config == {"execution": {"config": {"in_process": {}}}}


# --- the schedule ------------------------------------------------------------------------------


def _requested_partitions(schedule: dg.ScheduleDefinition, at: datetime) -> list[str]:
    with dg.build_schedule_context(scheduled_execution_time=at) as context:
        data = schedule.evaluate_tick(context)
    assert not data.skip_message, data.skip_message
    return [request.partition_key for request in data.run_requests]


def test_the_nightly_schedule_is_on_by_default_at_two_utc(defs):
    schedule = defs.resolve_schedule_def("nightly_refresh_schedule")
    assert schedule.job_name == "nightly_refresh"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 2 * * *", "UTC")


@pytest.mark.parametrize("day", ["2026-11-21", "2026-12-01", "2027-01-01", "2028-02-29"])
def test_the_02_00_tick_refreshes_the_current_days_partition(defs, day):
    schedule = defs.resolve_schedule_def("nightly_refresh_schedule")
    tick = datetime.combine(date.fromisoformat(day), datetime.min.time(), timezone.utc).replace(hour=2)
    assert _requested_partitions(schedule, tick) == [day]


def test_without_end_offset_the_same_schedule_would_refresh_yesterday(defs):
    """Why partitions.py sets end_offset=1: build_schedule_from_partitioned_job requests the *last*
    partition that exists at tick time, and without the offset that is yesterday's."""
    plain = dg.define_asset_job(
        "plain", selection=dg.AssetSelection.all(),
        partitions_def=dg.DailyPartitionsDefinition(start_date="2025-01-01", timezone="UTC"),
    )
    schedule = dg.build_schedule_from_partitioned_job(plain, hour_of_day=2)
    tick = datetime(2026, 11, 21, 2, 0, tzinfo=timezone.utc)
    assert _requested_partitions(schedule, tick) == ["2026-11-20"]
    assert _requested_partitions(defs.resolve_schedule_def("nightly_refresh_schedule"), tick) == ["2026-11-21"]


# --- a backfill that never locks ---------------------------------------------------------------


def _pipeline_env(home: Path, warehouse: Path) -> dict[str, str]:
    """The subprocesses' environment: this instance and warehouse, the bundled captures, and
    nothing of the developer's SCHOLARHOUSE_* (no live source, no enrichment contact)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    env.update({
        "DAGSTER_HOME": str(home),
        "SCHOLARHOUSE_CAPTURES": str(SAMPLES),
        "SCHOLARHOUSE_WAREHOUSE": str(warehouse),
        "SCHOLARHOUSE_EXPORTS": str(warehouse.parent / "exports"),
        "SCHOLARHOUSE_OVERRIDES": os.environ["SCHOLARHOUSE_OVERRIDES"],  # conftest: an absent file
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _events(instance: dg.DagsterInstance, run_id: str, event_type: dg.DagsterEventType) -> list:
    return list(instance.all_logs(run_id, of_type=event_type))


def _step_intervals(instance: dg.DagsterInstance, run_id: str) -> dict[str, tuple[float, float]]:
    """step key → (start, end) from the run's event log: STEP_START is written after the step has
    its slot, STEP_SUCCESS/FAILURE before it gives it back."""
    starts = {e.step_key: e.timestamp for e in _events(instance, run_id, dg.DagsterEventType.STEP_START)}
    ends = {e.step_key: e.timestamp for t in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE)
            for e in _events(instance, run_id, t)}
    assert starts.keys() == ends.keys(), (starts.keys(), ends.keys())
    return {k: (starts[k], ends[k]) for k in starts}


def _wait(procs: list[subprocess.Popen], logs: list[Path], until, what: str) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not until():
        for proc, log in zip(procs, logs):
            if proc.poll() is not None:
                pytest.fail(f"a run exited ({proc.returncode}) before {what}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.25)


def _finish(proc: subprocess.Popen, log: Path) -> int:
    try:
        return proc.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"run did not finish in {RUN_TIMEOUT_S}s:\n{log.read_text()[-4000:]}")


def _parses_a_shard(step_key: str) -> bool:
    return step_key.split(".")[-1].split("[")[0] in NO_DATABASE_OPS


def _q(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_backfill_with_overlapping_runs_takes_turns_on_the_warehouse(instance, tmp_path):
    home = Path(instance.root_directory)
    warehouse = tmp_path / "warehouse" / "scholarhouse.duckdb"
    env = _pipeline_env(home, warehouse)
    storage = instance.event_log_storage
    first, second, third = "2026-11-19", "2026-11-20", "2026-11-21"

    # dagster_home.yaml: every pool gets one slot, claimed per step (op granularity); one queued run at a time
    config = instance.get_concurrency_config()
    assert (config.pool_config.default_pool_limit, config.pool_config.pool_granularity.value) == (1, "op")
    assert config.run_queue_config.max_concurrent_runs == 1
    storage.initialize_concurrency_limit_to_default(POOL)
    info = storage.get_concurrency_info(POOL)
    assert (info.slot_count, info.using_default_limit) == (1, True)

    # Take the only slot, then start two runs at the same time in two processes.
    assert storage.claim_concurrency_slot(POOL, "test-holder", "hold").is_claimed
    procs, logs = [], []
    for day in (first, second):
        log = tmp_path / f"run-{day}.log"
        with log.open("wb") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-c", RUN_ONE_PARTITION, day], cwd=PROJECT, env=env,
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            ))
        logs.append(log)
    try:
        def both_blocked() -> bool:
            runs = instance.get_runs()
            return len(runs) == 2 and all(
                any(BLOCKED in (e.message or "") for e in _events(instance, r.run_id, dg.DagsterEventType.ENGINE_EVENT))
                for r in runs)

        _wait(procs, logs, both_blocked, "both runs wait for the warehouse pool")
        runs = {r.tags["dagster/partition"]: r.run_id for r in instance.get_runs()}
        assert runs.keys() == {first, second}
        for run_id in runs.values():  # while someone else holds the slot, nothing runs
            assert _events(instance, run_id, dg.DagsterEventType.STEP_START) == []
        assert not warehouse.exists()

        storage.free_concurrency_slot_for_step("test-holder", "hold")
        codes = [_finish(p, log) for p, log in zip(procs, logs)]
        assert codes == [0, 0], "\n".join(log.read_text()[-3000:] for log in logs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait(timeout=10)

    # The pool made the two runs take turns: their warehouse steps never overlap in time (a parse
    # shard opens no database and is in no pool, so it may run beside the other run's steps)...
    a, b = ({step: span for step, span in _step_intervals(instance, runs[d]).items() if not _parses_a_shard(step)}
            for d in (first, second))
    assert len(a) == len(b) > 10
    for step_a, (start_a, end_a) in a.items():
        for step_b, (start_b, end_b) in b.items():
            assert end_a <= start_b or end_b <= start_a, f"{first}:{step_a} overlapped {second}:{step_b}"
    # ...although the runs themselves did (so the check above is not vacuous).
    assert min(s for s, _ in a.values()) < max(e for _, e in b.values())
    assert min(s for s, _ in b.values()) < max(e for _, e in a.values())

    # The third partition through the real CLI: `dg launch` runs it in process, no daemon needed.
    launch = subprocess.run(
        [str(PROJECT / ".venv" / "bin" / "dg"), "launch", "--job", "nightly_refresh", "--partition", third],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
    )
    assert launch.returncode == 0, launch.stdout[-3000:] + launch.stderr[-3000:]

    # Every run succeeded first time: no failed step, no retry (a DuckDB lock error would be one).
    records = instance.get_runs()
    assert sorted(r.tags["dagster/partition"] for r in records) == [first, second, third]
    for run in records:
        assert run.status == dg.DagsterRunStatus.SUCCESS, run.tags
        for bad in (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.STEP_UP_FOR_RETRY):
            assert _events(instance, run.run_id, bad) == [], (run.tags["dagster/partition"], bad)
    assert storage.get_concurrency_info(POOL).claimed_slots == []  # nothing left holding the slot

    # Three partitions of rows, each written once.
    pages = len([p for p in SAMPLES.iterdir() if p.suffix in (".txt", ".html")])
    expected_days = [date.fromisoformat(d) for d in (first, second, third)]
    assert _q(warehouse, "SELECT partition_date, count(*) FROM raw.page_captures GROUP BY 1 ORDER BY 1") == [
        (d, pages) for d in expected_days]
    for table, key in (("staging.profiles", "capture_id"), ("staging.listings", "listing_id")):
        per_day = _q(warehouse, f"SELECT partition_date, count(*) FROM {table} GROUP BY 1 ORDER BY 1")
        assert [d for d, _ in per_day] == expected_days, table
        assert len({n for _, n in per_day}) == 1 and per_day[0][1] > 0, (table, per_day)  # same pages each day
        assert _q(warehouse, f"SELECT count(*) - count(DISTINCT (partition_date, {key})) FROM {table}") == [(0,)]
    # History-wide assets resolved everything up to the last partition, whatever order runs took.
    assert _q(warehouse, "SELECT count(*) - count(DISTINCT paper_id), min(first_seen), max(last_seen) "
                         "FROM core.papers") == [(0, expected_days[0], expected_days[-1])]
    assert _q(warehouse, "SELECT DISTINCT as_of FROM marts.author_metrics ORDER BY 1") == [(d,) for d in expected_days]

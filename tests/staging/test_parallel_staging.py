"""Sharded parsing: the parse runs outside the warehouse pool, in parallel on the multiprocess
executor, while the warehouse writes stay serialised — and the rows are the same either way."""

from __future__ import annotations

import os
import shutil
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from tests.conftest import SAMPLE_DATE, SAMPLES

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.ingest.sources.folder import FolderSource

PROJECT = Path(__file__).resolve().parents[2]
DAY = date.fromisoformat(SAMPLE_DATE)
TABLES = ("staging.profiles", "staging.listings", "staging.rejects", "staging.quality_issues")


def _captures(tmp_path: Path) -> Path:
    """The five samples plus an empty page twice (one body at two urls, parsed once): six bodies,
    so two-page shards make three shards."""
    folder = tmp_path / "captures"
    shutil.copytree(SAMPLES, folder)
    (folder / "garbage.txt").write_text("")
    (folder / "garbage-again.txt").write_text("")
    return folder


def _staging(path: Path) -> dict[str, pl.DataFrame]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {
            t: warehouse.read_frame(con, f"SELECT * FROM {t}").drop("loaded_at", strict=False).sort(pl.all())
            for t in TABLES
        }


def _assert_same_staging(a_path: Path, b_path: Path) -> None:
    a, b = _staging(a_path), _staging(b_path)
    for table in TABLES:
        assert a[table].equals(b[table]), table


def _land_and_parse_shards(con, captures: Path, work: Path) -> list[dict]:
    """Land the captures and parse them in two-page shards, without writing staging yet."""
    warehouse.ensure_schema(con)
    landing.land_partition(con, FolderSource(captures).iter_captures(DAY), DAY)
    plan = landing.plan_parse(con, DAY, work, shard_pages=2)
    return [landing.parse_shard(shard) for shard in plan["shards"]]


def _land_and_stage(captures: Path, path: Path, **stage_args) -> dict:
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        landing.land_partition(con, FolderSource(captures).iter_captures(DAY), DAY)
        return landing.stage_partition(con, DAY, **stage_args)


def test_shards_give_the_same_rows_as_one_shard(tmp_path):
    captures = _captures(tmp_path)
    one = _land_and_stage(captures, tmp_path / "one.duckdb")
    many = _land_and_stage(captures, tmp_path / "many.duckdb", shard_pages=2)
    assert one["pages_parsed"] == many["pages_parsed"] == 6
    assert many["parsed_profiles"] == 5 and many["parsed_rejects"] == 1
    # every page to parse was in a shard: the writer parsed none itself
    assert one["pages_parsed_late"] == many["pages_parsed_late"] == 0
    _assert_same_staging(tmp_path / "one.duckdb", tmp_path / "many.duckdb")


def test_the_writer_reconciles_shards_with_the_raw_pages_it_writes_against(tmp_path):
    """A page landed after the plan is parsed by the writer; rows of a page that left raw are dropped."""
    captures = _captures(tmp_path)
    path = tmp_path / "w.duckdb"
    with warehouse.connect(path) as con:
        parsed = _land_and_parse_shards(con, captures, tmp_path / "work")
        # Between plan and write the raw step re-runs on a folder that lost one page.
        gone = sorted(p for p in captures.iterdir() if p.suffix == ".txt" and p.name != "garbage.txt")[0]
        gone.unlink()
        landing.land_partition(con, FolderSource(captures).iter_captures(DAY), DAY)
        result = landing.write_staging(con, DAY, parsed)
        assert result["pages_parsed_late"] == 0
        profiles = warehouse.scalar(con, "SELECT count(*) FROM staging.profiles")
        orphans = warehouse.scalar(con, """
            SELECT count(*) FROM staging.listings l
            WHERE NOT EXISTS (SELECT 1 FROM raw.page_captures r WHERE r.capture_id = l.capture_id)""")
        # ...and the plan missed a page that landed later: the writer parses it itself.
        result = landing.write_staging(con, DAY, parsed[:1])
        assert result["pages_parsed_late"] >= 1
        again = warehouse.scalar(con, "SELECT count(*) FROM staging.profiles")
    assert profiles == 4 and orphans == 0 and again == 4


def test_parse_shards_run_in_parallel_on_the_multiprocess_executor(tmp_path, monkeypatch):
    """The nightly job's raw + staging steps with max_concurrent 2: the shards' steps are in flight
    together in separate processes, the pooled steps never overlap, and the rows equal the
    single-process path's."""
    from dagster._core.definitions.reconstruct import ReconstructableRepository

    captures = _captures(tmp_path)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home.yaml", home / "dagster.yaml")
    wh = tmp_path / "parallel" / "scholarhouse.duckdb"
    for var, value in {
        "DAGSTER_HOME": str(home), "SCHOLARHOUSE_CAPTURES": str(captures), "SCHOLARHOUSE_WAREHOUSE": str(wh),
        "SCHOLARHOUSE_PARSE_SHARD_PAGES": "2", "SCHOLARHOUSE_PARSE_WORKERS": "1",
    }.items():
        monkeypatch.setenv(var, value)
    job = ReconstructableRepository.for_module(
        "pipelines.definitions", "defs", working_directory=str(PROJECT)
    ).get_reconstructable_job("nightly_refresh")
    selection = [dg.AssetKey(["raw", "page_captures"]), *(dg.AssetKey(t.split(".")) for t in TABLES)]
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(
            job, instance=instance, asset_selection=selection, tags={"dagster/partition": SAMPLE_DATE},
            run_config={"execution": {"config": {"multiprocess": {"max_concurrent": 2}}}},
        )
        assert result.success
        logs = instance.all_logs(result.run_id)
    events = [(e.timestamp, e.dagster_event) for e in logs if e.dagster_event is not None]

    def times(kind: dg.DagsterEventType) -> dict[str, float]:
        return {ev.step_key: t for t, ev in events if ev.event_type == kind}

    launched = times(dg.DagsterEventType.STEP_WORKER_STARTING)
    started, finished = times(dg.DagsterEventType.STEP_START), times(dg.DagsterEventType.STEP_SUCCESS)
    shards = sorted(k for k in finished if k.startswith("staging_tables.parse_shard["))
    assert len(shards) == 3
    # two shard steps were launched before the first shard step finished: they ran side by side
    first_done = min(finished[k] for k in shards)
    assert sum(launched[k] < first_done for k in shards) >= 2
    # each step ran in its own worker process
    pids = {ev.step_key: ev.pid for _, ev in events if ev.event_type == dg.DagsterEventType.STEP_START}
    assert len({pids[k] for k in shards}) == 3
    # the pooled steps (land, plan, write) never overlapped anything that writes the warehouse
    pooled = ["raw__page_captures", "staging_tables.plan_parse_shards", "staging_tables.write_staging"]
    spans = sorted((started[k], finished[k]) for k in pooled)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))
    # same rows as the one-process path, and the shard files are gone
    _land_and_stage(captures, tmp_path / "single.duckdb")
    _assert_same_staging(tmp_path / "single.duckdb", wh)
    assert not any((wh.parent / "work" / "parse").glob("*/*.parquet"))


def test_a_lost_shard_is_parsed_by_the_writer_and_old_work_folders_are_swept(tmp_path):
    captures = _captures(tmp_path)
    path = tmp_path / "w.duckdb"
    with warehouse.connect(path) as con:
        parsed = _land_and_parse_shards(con, captures, tmp_path / "work" / "run-1")
        Path(parsed[1]["listings"]).unlink()  # e.g. a re-execution after the folder was cleaned
        result = landing.write_staging(con, DAY, parsed)
        assert result["pages_parsed_late"] == 2
        assert warehouse.scalar(con, "SELECT count(*) FROM staging.profiles") == 5
    fresh = tmp_path / "work" / "run-2"
    fresh.mkdir()
    old = tmp_path / "work" / "run-1"
    os.utime(old, (0, 0))
    assert landing.sweep_work_dirs(tmp_path / "work") == 1
    assert not old.exists() and fresh.exists()


@pytest.mark.parametrize("configured, expected", [(None, landing.SHARD_PAGES), ("7", 7), ("0", 1)])
def test_shard_size_comes_from_the_setting(configured, expected):
    from pipelines.settings import Settings

    env = {} if configured is None else {"SCHOLARHOUSE_PARSE_SHARD_PAGES": configured}
    assert landing.shard_size(Settings.from_env(env).parse_shard_pages) == expected

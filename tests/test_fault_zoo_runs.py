"""Fault zoo: runs, disks and history. One failure class per row, each with the exact trace it must
leave: exit status, the one-line cause, rows landed, run status, pool slots.

- killed runs: a run killed with ``kill -9`` while it holds the ``warehouse`` pool slot, followed by
  a normal run (started after the kill, or already waiting when the holder dies);
- a run that waits on a live holder gives up with the holder named;
- stops: SIGTERM to a run in a step, or waiting for the pool, stops it at once (no retry);
- disks: a read-only and a full warehouse directory (a real tmpfs in a private mount namespace,
  ``unshare -rm``: the tests run as root, where chmod would not stop a write);
- demo input: dates that are not partitions, a missing captures folder;
- causes: what ``pipelines.failures`` makes of an error chain (transient or not, the line);
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

from conftest import SAMPLE_DATE, SAMPLES
from pipelines import publish

PROJECT = Path(__file__).resolve().parents[1]
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


# --- history -------------------------------------------------------------------------------------


def test_a_backfill_of_an_earlier_day_moves_exports_latest_to_the_newest_history(tmp_path):
    wh, exports, analytics = tmp_path / "scholarhouse.duckdb", tmp_path / "exports", tmp_path / "analytics.duckdb"
    with duckdb.connect(str(wh)) as con:
        con.execute("CREATE SCHEMA marts")
        con.execute("CREATE TABLE marts.citations AS SELECT range AS n FROM range(3)")
        publish.export_tables(con, exports, date(2026, 11, 21))  # the night of the 21st: 3 citation rows
        # a backfill of the 19th: the history-wide mart is rebuilt over the whole history
        con.execute("INSERT INTO marts.citations SELECT range FROM range(3, 12)")
        publish.export_tables(con, exports, date(2026, 11, 19))
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

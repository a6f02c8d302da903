"""``make demo`` as a newcomer sees it: the run's summary on the terminal, Dagster's step log in a file.

One real run of ``python -m pipelines.demo`` (what the Makefile target runs) on the bundled samples, in
a temporary DAGSTER_HOME and warehouse. What must be on the terminal: where it reads and writes, where
the log goes, the night's figures, the checks in words — the expected finding on marts/author_metrics
called a warning, not a failure — and where the exports and the report are, last. What must not: the
hundreds of Dagster DEBUG lines, which are in ``$DAGSTER_HOME/demo.log``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
SAMPLES = PROJECT / "pipelines" / "samples"


def test_make_demo_ends_with_its_summary_and_logs_the_steps_to_a_file(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home.yaml", home / "dagster.yaml")
    wh = tmp_path / "warehouse" / "scholarhouse.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    env.update({"DAGSTER_HOME": str(home), "SCHOLARHOUSE_WAREHOUSE": str(wh), "SCHOLARHOUSE_DATE": "2026-11-21",
                "SCHOLARHOUSE_OVERRIDES": str(tmp_path / "no-overrides.toml"), "PYTHONUNBUFFERED": "1"})
    done = subprocess.run([sys.executable, "-m", "pipelines.demo"], cwd=PROJECT, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    log = home / "demo.log"

    # the terminal: a short story, not Dagster's debug log
    assert f"log:       {log}" in out
    assert " - DEBUG - " not in out + done.stderr and "STEP_START" not in out + done.stderr
    assert len(out.splitlines()) < 80, out
    assert "this partition: 5 pages, 5 profiles, 48 listings, 0 rejects" in out
    assert "checks: 55 passed, 1 warning, 0 failed" in out
    assert "  warning  marts/author_metrics · warnings: " in out and "FAILED" not in out
    assert "it never stops the night" in out
    # ... ending with where things are
    tail = out.strip().splitlines()[-6:]
    assert tail[0] == f"exports:        {wh.parent / 'exports' / 'latest'}"
    assert tail[1] == f"report:         {wh.parent / 'exports' / '2026-11-21' / 'report.html'}"
    assert (wh.parent / "exports" / "2026-11-21" / "report.html").is_file()

    # the file: every step's log, the same run
    text = log.read_text()
    assert text.count(" - STEP_SUCCESS - ") >= 25 and " - RUN_SUCCESS - " in text

    # the bundled samples carry their pages' URLs: no path of this clone lands in the warehouse
    with duckdb.connect(str(wh), read_only=True) as con:
        urls = [u for (u,) in con.execute("SELECT url FROM raw.page_captures UNION ALL SELECT url FROM "
                                          "marts.author_metrics").fetchall()]
    assert urls and all(u.startswith(("https://www.bzpeer.com/authors/", "https://www.scholarfeed.org/author/"))
                        for u in urls), urls
    exported = b"".join(p.read_bytes() for p in (wh.parent / "exports" / "latest").glob("*.parquet"))
    assert str(PROJECT).encode() not in exported and b"file://" not in exported

"""One transaction helper: every multi-statement write to DuckDB goes through
``warehouse.transaction`` (BEGIN, COMMIT, ROLLBACK on error without hiding the cause)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipelines import warehouse
from pipelines.orchestration import failures

ROOT = Path(__file__).resolve().parents[2]


def _table(con) -> None:
    con.execute("CREATE TABLE t (n INTEGER NOT NULL)")


def test_the_block_commits_when_it_ends(tmp_path):
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        _table(con)
        with warehouse.transaction(con):
            con.execute("INSERT INTO t VALUES (1), (2)")
        assert warehouse.scalar(con, "SELECT count(*) FROM t") == 2


def test_the_block_rolls_back_and_its_error_surfaces(tmp_path):
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        _table(con)
        con.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(duckdb.ConstraintException, match="NOT NULL"):
            with warehouse.transaction(con):
                con.execute("DELETE FROM t")
                con.execute("INSERT INTO t VALUES (NULL)")
        assert warehouse.scalar(con, "SELECT count(*) FROM t") == 1  # as it was


def test_a_failed_rollback_never_replaces_the_cause(tmp_path):
    """DuckDB already ended the transaction (a full disk during a write): the cause surfaces, in the
    one line failures.py makes of it, not "cannot rollback"."""
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        _table(con)
        with pytest.raises(duckdb.IOException) as raised:
            with warehouse.transaction(con):
                con.execute("COMMIT")
                raise duckdb.IOException("IO Error: Could not write file: No space left on device")
        assert raised.value.__context__ is None
        assert failures.explain(raised.value).line.startswith("disk full: ")


def test_no_transaction_is_written_by_hand():
    """BEGIN / COMMIT / ROLLBACK on DuckDB appear in the warehouse package only (the source cache's
    SQLite transactions are its own)."""
    statement = re.compile(r"""execute\(\s*["'](BEGIN|COMMIT|ROLLBACK)\b""")
    by_hand = {str(p.relative_to(ROOT)) for p in (ROOT / "pipelines").rglob("*.py") if statement.search(p.read_text())}
    assert by_hand == {"pipelines/warehouse/__init__.py", "pipelines/ingest/sources/cache.py"}

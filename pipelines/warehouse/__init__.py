"""The DuckDB warehouse: schema, connections and idempotent writes. No Dagster imports.

Every write replaces a well-defined slice (a partition's rows, or a whole table) inside one
transaction, so re-running a partition or a backfill never duplicates rows and a failed run
leaves the previous state intact.
"""

from __future__ import annotations

import os
import re
import random
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import duckdb
import polars as pl

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SQL_DIR = PROJECT_ROOT / "sql"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "scholarhouse.duckdb"


def default_warehouse_path() -> Path:
    return Path(os.environ.get("SCHOLARHOUSE_WAREHOUSE") or DEFAULT_WAREHOUSE)


# DuckDB's buffer manager may otherwise grow to 80% of the machine's memory (it caches every block
# a night touches: 5 GB of page bodies at 100k profiles) beside the matchers' own memory; past the
# limit it evicts and spills to ``<warehouse>.tmp``. ``SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT`` overrides
# it (any DuckDB size, e.g. ``8GB``; empty: DuckDB's default).
DUCKDB_MEMORY_LIMIT = "3GB"


def duckdb_config() -> dict[str, str]:
    limit = os.environ.get("SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT", DUCKDB_MEMORY_LIMIT).strip()
    return {"memory_limit": limit} if limit else {}


def schema_statements() -> list[str]:
    """The DDL of every layer, in order (sql/schema/NN_layer.sql)."""
    statements: list[str] = []
    for path in sorted((SQL_DIR / "schema").glob("*.sql")):
        statements.append(path.read_text())
    return statements


def read_sql(name: str) -> str:
    """An analyst-readable statement from sql/, e.g. read_sql('marts/author_metrics')."""
    return (SQL_DIR / f"{name}.sql").read_text()


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("could not set lock" in text or "conflicting lock" in text or "database is locked" in text)


@contextmanager
def connect(path: str | Path, *, read_only: bool = False, lock_timeout_s: float = 120.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse, waiting (with back-off) while another process holds the file lock.

    The Dagster pool already serialises writers; the wait is a second line of defence for a
    reader or a run launched outside the pool.
    """
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + lock_timeout_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=duckdb_config())
            break
        except duckdb.IOException as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay + random.random() * delay)
            delay = min(delay * 2, 2.0)
    try:
        yield con
    finally:
        con.close()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    migrate_compression(con)
    for statement in schema_statements():
        con.execute(statement)
    migrate_columns(con)


_CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS\s+(\w+\.\w+)\s*\((.*?)\n\);", re.S)


def declared_compressed_tables() -> dict[str, str]:
    """Tables whose DDL (sql/schema) pins a column's compression (``USING COMPRESSION``), each
    with the statement that creates it."""
    return {name: f"CREATE TABLE {name} ({body}\n);" for statement in schema_statements()
            for name, body in _CREATE_TABLE.findall(statement) if "USING COMPRESSION" in body.upper()}


def migrate_compression(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Rebuild tables created before their DDL pinned a column's compression.

    DuckDB cannot change a column's compression in place and ``CREATE TABLE IF NOT EXISTS`` leaves
    an existing table alone, so a warehouse from an older release would keep storing abstracts at
    six times the size. Each such table is renamed, created again from the DDL, refilled and dropped
    in one transaction (rows and their order unchanged). Returns the tables rebuilt.
    """
    stored = dict(con.execute(
        "SELECT schema_name || '.' || table_name, sql FROM duckdb_tables() WHERE NOT temporary").fetchall())
    declared = declared_compressed_tables()
    stale = [t for t in declared if t in stored and "USING COMPRESSION" not in stored[t].upper()]
    if not stale:
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        for table in stale:
            schema, name = table.split(".")
            con.execute(f"ALTER TABLE {table} RENAME TO {name}__before_migration")
            con.execute(declared[table])
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {schema}.{name}__before_migration")
            con.execute(f"DROP TABLE {schema}.{name}__before_migration")
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return stale


_COLUMN_END = re.compile(r"\s+(?:NOT\s+NULL|NULL|DEFAULT|PRIMARY|UNIQUE|CHECK|REFERENCES|USING\s+COMPRESSION)\b", re.I)


def declared_columns() -> dict[str, list[tuple[str, str]]]:
    """``{"schema.table": [(column, type), ...]}`` from sql/schema, in declaration order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for statement in schema_statements():
        text = "\n".join(line.split("--", 1)[0].rstrip() for line in statement.splitlines())
        for name, body in _CREATE_TABLE.findall(text):
            columns = []
            for line in body.splitlines():
                line = line.strip().rstrip(",").strip()
                if not line or re.match(r"^(PRIMARY|UNIQUE|CONSTRAINT|CHECK|FOREIGN)\b", line, re.I):
                    continue
                column, rest = line.split(None, 1)
                columns.append((column, _COLUMN_END.split(rest, 1)[0].strip()))
            out[name] = columns
    return out


def migrate_columns(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Add the columns the DDL declares and a stored table lacks (a warehouse from an older release):
    ``CREATE TABLE IF NOT EXISTS`` leaves an existing table alone, and inserts by name would then fail
    on the first new column. Added columns are NULL in the old rows (and carry no NOT NULL: DuckDB
    cannot add one with the column). Returns ``table.column`` for each column added."""
    stored: dict[str, set[str]] = {}
    for schema, table, column in con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns").fetchall():
        stored.setdefault(f"{schema}.{table}", set()).add(column)
    added = []
    for table, columns in declared_columns().items():
        have = stored.get(table)
        if have is None:
            continue
        for column, column_type in columns:
            if column not in have:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {column_type}")
                added.append(f"{table}.{column}")
    return added


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    schema, name = table.split(".")
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
        [schema, name],
    ).fetchall()
    return [r[0] for r in rows]


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    if frame.height == 0:
        return
    columns = table_columns(con, table)
    unknown = [c for c in frame.columns if c not in columns]
    if unknown:
        raise ValueError(f"{table}: columns not in the warehouse contract: {unknown}")
    con.register("_incoming", frame.to_arrow())
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
    except duckdb.Error as exc:
        raise duckdb.Error(f"inserting {frame.height} rows into {table}: {exc}") from exc
    finally:
        try:
            con.unregister("_incoming")
        except duckdb.Error:
            pass  # an aborted transaction refuses even this; the insert's own error is what matters


def replace_slice(
    con: duckdb.DuckDBPyConnection,
    writes: Sequence[tuple[str, pl.DataFrame]],
    *,
    where: str | None = None,
    params: Sequence[object] = (),
    after: Callable[[], None] | None = None,
) -> None:
    """Replace rows of several tables in ONE transaction.

    ``where`` selects the slice to delete first (e.g. ``partition_date = ?``); without it the whole
    table is replaced. ``after`` runs inside the same transaction (extra SQL writes). All tables
    change together or not at all.
    """
    con.execute("BEGIN TRANSACTION")
    try:
        for table, frame in writes:
            if where is None:
                con.execute(f"DELETE FROM {table}")
            else:
                con.execute(f"DELETE FROM {table} WHERE {where}", list(params))
            insert_frame(con, table, frame)
        if after is not None:
            after()
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction, if DuckDB still has one, without hiding why it failed.

    After some failures (a full disk during COMMIT, a fatal error that invalidates the database)
    DuckDB has already ended the transaction, and ROLLBACK raises "cannot rollback - no transaction
    is active". Raised from an ``except`` block, that error would replace the real cause ("No space
    left on device") as the step's error; the caller re-raises the original instead.
    """
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def scalar(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[object] = ()) -> object:
    """The single value a query returns (results are always fully consumed: DuckDB 2 requires it)."""
    rows = con.execute(query, list(params)).fetchall()
    return rows[0][0] if rows else None


def read_frame(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[object] | dict[str, object] = ()) -> pl.DataFrame:
    """A query's result as a Polars frame; ``params`` positional (``?``) or named (``$name``)."""
    bound = dict(params) if isinstance(params, dict) else (list(params) or None)
    return pl.from_arrow(con.sql(query, params=bound).to_arrow_table())


def row_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    tables = con.execute(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_schema IN ('raw','staging','core','marts','enrichment') AND table_type = 'BASE TABLE' ORDER BY 1"
    ).fetchall()
    return {t: scalar(con, f"SELECT count(*) FROM {t}") for (t,) in tables}

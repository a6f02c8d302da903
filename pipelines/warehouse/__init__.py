"""The DuckDB warehouse: schema, connections and idempotent writes. No Dagster imports.

Every write replaces a well-defined slice (a partition's rows, or a whole table) inside one
transaction, so re-running a partition or a backfill never duplicates rows and a failed run
leaves the previous state intact.
"""

from __future__ import annotations

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


# DuckDB's buffer manager may otherwise grow to 80% of the machine's memory (it caches every block
# a night touches: 5 GB of page bodies at 100k profiles) beside the matchers' own memory; past the
# limit it evicts and spills to ``<warehouse>.tmp``. The setting ``SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT``
# (pipelines/settings.py) overrides it (any DuckDB size, e.g. ``8GB``; empty: DuckDB's default).
DUCKDB_MEMORY_LIMIT = "3GB"


def duckdb_config(memory_limit: str = DUCKDB_MEMORY_LIMIT) -> dict[str, str]:
    limit = (memory_limit or "").strip()
    return {"memory_limit": limit} if limit else {}


def sql_path(path: str | Path) -> str:
    """``path`` as a quoted SQL string literal, for the statements that take no parameters (COPY … TO,
    ATTACH): a quote in a folder name (``/home/o'neil``) must not end the string."""
    return "'" + str(path).replace("'", "''") + "'"


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


class NotAWarehouse(ValueError):
    """The warehouse path holds a file of another kind."""


def _refuse_a_sqlite_file(path: Path) -> None:
    """DuckDB opens a SQLite file through an extension, as if it were the warehouse; the source
    cache (``source_cache.sqlite``) sits beside the warehouse and is one setting away from it."""
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:  # missing (a new warehouse), or not a file: DuckDB says what it is
        return
    if head == b"SQLite format 3\x00":
        raise NotAWarehouse(f"{path} is a SQLite database, not a DuckDB warehouse "
                            f"(is SCHOLARHOUSE_WAREHOUSE pointing at the source cache?)")


@contextmanager
def connect(path: str | Path, *, read_only: bool = False, lock_timeout_s: float = 120.0,
            memory_limit: str = DUCKDB_MEMORY_LIMIT) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse, waiting (with back-off) while another process holds the file lock.
    ``memory_limit``: DuckDB's buffer pool (empty: DuckDB's default).

    The Dagster pool already serialises writers; the wait is a second line of defence for a
    reader or a run launched outside the pool.
    """
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    _refuse_a_sqlite_file(path)
    # Never fetch an extension from the network to open a file: a warehouse needs none DuckDB lacks.
    config = {**duckdb_config(memory_limit), "autoinstall_known_extensions": False}
    deadline = time.monotonic() + lock_timeout_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=config)
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
    """Create what the DDL declares and bring an older warehouse up to it: columns added since
    (``migrate_columns``), compression pinned since (``migrate_compression``), tables now stored
    behind a view (``migrate_views``). Views are created last, over the tables they read."""
    migrate_columns(con)
    migrate_compression(con)
    for statement in schema_statements():
        con.execute(_without_views(statement))
    migrate_views(con)
    for statement in declared_views().values():
        con.execute(statement)
    migrate_columns(con)


# A name of the contract that the DDL builds as a view: ``CREATE OR REPLACE VIEW name AS ...;`` (ending
# with ``;`` at the end of a line), its columns declared as a table inside a ``/* ... */`` comment right
# before it (the catalog, the data dictionary and the frames read them; no one runs them, so the files
# run by hand as they are). ensure_schema creates the views last, after migrate_views.
_CREATE_VIEW = re.compile(r"^CREATE OR REPLACE VIEW\s+(\w+\.\w+)\s+AS\b.*?;[ \t]*$", re.S | re.M)


def declared_views() -> dict[str, str]:
    """Every view of the DDL, ``schema.view`` -> its ``CREATE OR REPLACE VIEW`` statement, in DDL order."""
    return {m.group(1): m.group(0) for statement in schema_statements() for m in _CREATE_VIEW.finditer(statement)}


def _without_views(statement: str) -> str:
    """A DDL file without its views (their declared tables are in comments: nothing to take out)."""
    return _CREATE_VIEW.sub("", statement)


# How the rows of tables that are now views move into the tables behind them: per group of views
# (moved together, in DDL order), the statements to run once on a warehouse of an older release; the
# old tables are dropped after. A group's member the old warehouse lacks is created empty first.
def _move_staging() -> tuple[str, ...]:
    from pipelines.staging import build as landing  # the nightly statement that accounts for every fetch (landing imports this module)

    return (
        # the nights staged, each with the parser it was staged with
        """CREATE OR REPLACE TEMP TABLE staged_nights AS
           SELECT partition_date, max(parser_version) AS parser_version FROM (
               SELECT partition_date, parser_version FROM staging.profiles UNION ALL
               SELECT partition_date, parser_version FROM staging.rejects UNION ALL
               SELECT partition_date, parser_version FROM staging.quality_issues)
           GROUP BY partition_date""",
        landing.NIGHT_FETCHES,
        # each parse once: the rows of the latest night that shows it (the later nights' rows were copies)
        """CREATE OR REPLACE TEMP TABLE legacy_parses AS
           SELECT parse_id, max(partition_date) AS night, arg_max(fetch_id, partition_date) AS fetch_id,
                  arg_max(capture_id, partition_date) AS capture_id
           FROM staging.night_fetches WHERE role = 'parsed' GROUP BY parse_id""",
        """INSERT INTO staging.parsed_profiles BY NAME
           SELECT lp.parse_id, p.* EXCLUDE (fetch_id, partition_date, captured_at)
           FROM staging.profiles p JOIN legacy_parses lp ON p.partition_date = lp.night AND p.fetch_id = lp.fetch_id""",
        """INSERT INTO staging.parsed_listings BY NAME
           SELECT lp.parse_id, l.* EXCLUDE (listing_id, partition_date)
           FROM staging.listings l JOIN legacy_parses lp ON l.partition_date = lp.night AND l.capture_id = lp.capture_id""",
        """INSERT INTO staging.parsed_rejects BY NAME
           SELECT lp.parse_id, r.* EXCLUDE (reject_id, fetch_id, partition_date, url, stage)
           FROM staging.rejects r JOIN legacy_parses lp ON r.partition_date = lp.night AND r.fetch_id = lp.fetch_id
           WHERE r.stage = 'parse'""",
        """INSERT INTO staging.parsed_issues BY NAME
           SELECT lp.parse_id, i.* EXCLUDE (issue_id, fetch_id, partition_date, url, stage)
           FROM staging.quality_issues i JOIN legacy_parses lp ON i.partition_date = lp.night AND i.fetch_id = lp.fetch_id
           WHERE i.stage = 'parse'""",
    )


_MOVE_INTO_VIEWS = {
    ("raw.page_captures",): lambda: (
        # every distinct body once (rows with one key hold the same bytes, and the same text)
        """INSERT INTO raw.page_bodies BY NAME
           SELECT capture_id, encoding, arg_min(body, partition_date) AS body,
                  arg_min(body_bytes, partition_date) AS body_bytes, arg_min(byte_size, partition_date) AS byte_size
           FROM raw.page_captures AS c
           WHERE NOT EXISTS (SELECT 1 FROM raw.page_bodies AS b
                             WHERE b.capture_id = c.capture_id AND b.encoding IS NOT DISTINCT FROM c.encoding)
           GROUP BY capture_id, encoding""",
        "INSERT INTO raw.fetches BY NAME SELECT * EXCLUDE (body, body_bytes, byte_size) FROM raw.page_captures",
    ),
    ("staging.profiles", "staging.listings", "staging.rejects", "staging.quality_issues"): _move_staging,
}


def migrate_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Move tables the DDL now builds as views (a warehouse of an older release stores
    ``raw.page_captures`` with a body per fetch, and the staging tables with a copy of every unchanged
    page's rows per night) into the tables behind the views, and drop them, in one transaction;
    ensure_schema then creates the views. Every row of the views is the row the table held. Returns
    the tables moved."""
    stored = {name for (name,) in con.execute(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()}
    groups = [(names, statements) for names, statements in _MOVE_INTO_VIEWS.items() if stored & set(names)]
    if not groups:
        return []
    declared = {name: f"CREATE TABLE {name} ({body}\n);" for statement in schema_statements()
                for name, body in _CREATE_TABLE.findall(statement)}
    moved = []
    with transaction(con):
        for names, statements in groups:
            for name in names:
                if name not in stored:
                    con.execute(declared[name])
            for statement in statements():
                con.execute(statement)
            for name in names:
                con.execute(f"DROP TABLE {name}")
            moved += [name for name in names if name in stored]
    return moved


def _split_top_level(body: str) -> list[str]:
    """A CREATE TABLE body split at the commas between column definitions (not inside STRUCT(...))."""
    parts, depth, current = [], 0, []
    for ch in body:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def declared_columns() -> dict[str, dict[str, str]]:
    """Every table's columns as the DDL declares them: table -> column -> definition (type and
    constraints as written)."""
    tables: dict[str, dict[str, str]] = {}
    for statement in schema_statements():
        for name, body in _CREATE_TABLE.findall(statement):
            without_comments = "\n".join(line.split("--", 1)[0] for line in body.splitlines())
            columns = {}
            for definition in _split_top_level(without_comments):
                column, _, rest = definition.partition(" ")
                columns[column] = rest.strip()
            tables[name] = columns
    return tables


# Columns added to tables that already hold rows: how to fill them for those rows (one statement
# each, run once, right after the column is added). A new partition's rows carry them anyway.
_BACKFILL = {
    ("raw.page_captures", "fetch_id"): (
        "UPDATE raw.page_captures SET fetch_id = substr(sha256(concat_ws(chr(31), CAST(partition_date AS VARCHAR), "
        "coalesce(url, ''), coalesce(source_file, ''))), 1, 16) WHERE fetch_id IS NULL"),
    ("staging.profiles", "fetch_id"): (
        "UPDATE staging.profiles s SET fetch_id = c.fetch_id FROM raw.page_captures c "
        "WHERE s.fetch_id IS NULL AND c.partition_date = s.partition_date AND c.url = s.url"),
    ("staging.rejects", "fetch_id"): (
        "UPDATE staging.rejects s SET fetch_id = c.fetch_id FROM raw.page_captures c "
        "WHERE s.fetch_id IS NULL AND c.partition_date = s.partition_date AND c.url = s.url"),
    ("staging.rejects", "stage"): (
        "UPDATE staging.rejects s SET stage = CASE WHEN EXISTS (SELECT 1 FROM raw.page_captures c "
        "WHERE c.partition_date = s.partition_date AND c.url = s.url AND c.fetch_reject = s.reason) "
        "THEN 'fetch' ELSE 'parse' END WHERE s.stage IS NULL"),
}


def migrate_columns(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Add the columns the DDL declares to tables created before them (``CREATE TABLE IF NOT
    EXISTS`` leaves an existing table alone), and fill them for the rows already there
    (``_BACKFILL``); a column without a backfill is NULL in old rows (``NOT NULL`` is then only
    promised for new rows). One transaction. Returns the ``table.column`` names added."""
    stored = {f"{s}.{t}": set() for s, t in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()}
    if not stored:
        return []
    for schema, table, column in con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns").fetchall():
        if f"{schema}.{table}" in stored:
            stored[f"{schema}.{table}"].add(column)
    missing = [(table, column, definition) for table, columns in declared_columns().items() if table in stored
               for column, definition in columns.items() if column not in stored[table]]
    if not missing:
        return []
    with transaction(con):
        for table, column, definition in missing:
            definition = re.sub(r"\bNOT NULL\b|\bUSING COMPRESSION \w+", "", definition, flags=re.I).strip()
            con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        for table, column, _ in missing:
            if (table, column) in _BACKFILL:
                con.execute(_BACKFILL[(table, column)])
    return [f"{table}.{column}" for table, column, _ in missing]


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
    with transaction(con):
        for table in stale:
            schema, name = table.split(".")
            con.execute(f"ALTER TABLE {table} RENAME TO {name}__before_migration")
            con.execute(declared[table])
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {schema}.{name}__before_migration")
            con.execute(f"DROP TABLE {schema}.{name}__before_migration")
    return stale


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    schema, name = table.split(".")
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
        [schema, name],
    ).fetchall()
    return [r[0] for r in rows]


def check_columns(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str]) -> None:
    """Refuse columns that ``table`` does not have (the contract is the DDL)."""
    known = table_columns(con, table)
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ValueError(f"{table}: columns not in the warehouse contract: {unknown}")


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    if frame.height == 0:
        return
    check_columns(con, table, frame.columns)
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
    with transaction(con):
        for table, frame in writes:
            if where is None:
                con.execute(f"DELETE FROM {table}")
            else:
                con.execute(f"DELETE FROM {table} WHERE {where}", list(params))
            insert_frame(con, table, frame)
        if after is not None:
            after()


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


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """One transaction around the block: BEGIN, COMMIT when it ends, ROLLBACK when it (or the COMMIT)
    raises — through ``rollback``, so the failure's own cause is what surfaces, never DuckDB's
    "cannot rollback" aftermath. Every multi-statement write goes through here."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def scalar(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[object] = ()) -> object:
    """The single value a query returns (results are always fully consumed: DuckDB 2 requires it)."""
    rows = con.execute(query, list(params)).fetchall()
    return rows[0][0] if rows else None


def read_frame(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[object] | dict[str, object] = ()) -> pl.DataFrame:
    """A query's result as a Polars frame; ``params`` positional (``?``) or named (``$name``)."""
    bound = dict(params) if isinstance(params, dict) else (list(params) or None)
    return pl.from_arrow(con.sql(query, params=bound).to_arrow_table())


def row_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows of every table and view the analysts read (the tables a view stands on are left out:
    ``raw.page_captures``, not ``raw.page_bodies``)."""
    from pipelines.warehouse import contract

    behind = set(contract.BEHIND_VIEWS)
    tables = [row for row in con.execute(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_schema IN ('raw','staging','core','marts','enrichment') AND table_type IN ('BASE TABLE', 'VIEW') "
        "ORDER BY 1"
    ).fetchall() if row[0] not in behind]
    return {t: scalar(con, f"SELECT count(*) FROM {t}") for (t,) in tables}

"""docs/warehouse.md stays true: its dictionary matches the contract, and its twelve queries run.

Two kinds of checks, both against the text of the doc:

* **Dictionary vs contract.** Every table created in ``sql/schema/*.sql`` has a ``### `schema.table` ``
  section with **Grain:**, **Built by:** and **Refresh:** paragraphs; every column of it has a row ``| `column` | `TYPE` | nullable | meaning |`` in that
  section whose type is the DDL's and whose *nullable* cell says ``no`` exactly for the ``NOT NULL``
  columns; no section or row documents a table or column that does not exist. The parsed DDL is
  cross-checked against the demo warehouse's ``information_schema`` so the parser cannot drift either.
* **Queries.** The ``## Example queries`` section holds exactly twelve ``### N. question`` headings, each
  with one ```` ```sql ```` block whose first line is a marker: ``-- expect: rows`` (must return rows on
  the demo warehouse) or ``-- expect: empty-ok (why)`` (must run; empty by the nature of the demo data).
  Each runs on a read-only connection to the session's ``demo_warehouse``. The redirect query, empty
  on the demo, is also run on an in-memory copy of ``core`` with redirects added, so it is shown to
  find what it is for.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipelines.warehouse import catalog

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "warehouse.md"
SCHEMA_DIR = ROOT / "sql" / "schema"
SCHEMAS = ("raw", "staging", "core", "marts", "enrichment", "cache")
QUERIES_SECTION = "## Example queries"
EXPECTED_QUERIES = 12

_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\.(\w+)\s*\((.*?)\n\s*\)\s*;", re.I | re.S)
_CONSTRAINT = re.compile(r"^(PRIMARY|UNIQUE|CONSTRAINT|CHECK|FOREIGN)\b", re.I)
_COLUMN_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*`([^`]+)`\s*\|\s*([^|]*)\|")
_QUERY_HEADING = re.compile(r"^###\s+(\d+)\.\s+(\S.*)$")
_SQL_BLOCK = re.compile(r"```sql\n(.*?)```", re.S)
_MARKER = re.compile(r"^--\s*expect:\s*(rows|empty-ok)\b\s*(.*)$")


# ---- parsing ------------------------------------------------------------------------------------

def _normal_type(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip()).upper()


def ddl_tables() -> dict[str, dict[str, tuple[str, bool]]]:
    """``{"schema.table": {column: (type, not_null)}}`` from sql/schema/*.sql, in file order."""
    tables: dict[str, dict[str, tuple[str, bool]]] = {}
    for path in sorted(SCHEMA_DIR.glob("*.sql")):
        text = "\n".join(line.split("--", 1)[0].rstrip() for line in path.read_text().splitlines())
        for schema, name, body in _CREATE_TABLE.findall(text):
            columns: dict[str, tuple[str, bool]] = {}
            for line in body.splitlines():
                line = line.strip().rstrip(",").strip()
                if not line or _CONSTRAINT.match(line):
                    continue
                column, rest = line.split(None, 1)
                not_null = bool(re.search(r"\bNOT\s+NULL\b", rest, re.I))
                column_type = re.split(r"\s+(?:NOT\s+NULL|NULL|DEFAULT|PRIMARY|UNIQUE|CHECK|REFERENCES|USING\s+COMPRESSION)\b", rest, 1, flags=re.I)[0]
                columns[column] = (_normal_type(column_type), not_null)
            tables[f"{schema}.{name}"] = columns
    return tables


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def table_sections(text: str) -> dict[str, str]:
    """``{"schema.table": section text}``: the dictionary's sections as the UI's column schemas read
    them (one reader for both)."""
    return catalog.dictionary_sections(text)


def documented_columns(section: str) -> dict[str, tuple[str, str]]:
    """``{column: (type, nullable cell)}`` from the rows of a section's column table."""
    out: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        m = _COLUMN_ROW.match(line.strip())
        if m:
            assert m.group(1) not in out, f"column {m.group(1)} documented twice"
            out[m.group(1)] = (_normal_type(m.group(2)), m.group(3).strip())
    return out


def example_queries(text: str) -> list[tuple[int, str, str]]:
    """``[(number, question, sql)]`` from the '## Example queries' section, in order."""
    assert QUERIES_SECTION in text, f"docs/warehouse.md has no '{QUERIES_SECTION}' section"
    section = text.split(QUERIES_SECTION, 1)[1]
    following = re.search(r"^## ", section, re.M)
    if following:
        section = section[:following.start()]
    queries = []
    parts = re.split(r"^(?=### )", section, flags=re.M)
    for part in parts:
        heading = _QUERY_HEADING.match(part.splitlines()[0]) if part.startswith("### ") else None
        blocks = _SQL_BLOCK.findall(part)
        if heading is None:
            assert not blocks, "a sql block in the queries section outside a '### N. question' heading"
            continue
        assert len(blocks) == 1, f"query {heading.group(1)} has {len(blocks)} sql blocks, expected one"
        queries.append((int(heading.group(1)), heading.group(2).strip(), blocks[0]))
    return queries


def expectation(sql: str) -> tuple[str, str]:
    """('rows' | 'empty-ok', reason) from the query's first line."""
    first = sql.strip().splitlines()[0].strip()
    m = _MARKER.match(first)
    assert m, f"the first line must be '-- expect: rows' or '-- expect: empty-ok (why)', got {first!r}"
    return m.group(1), m.group(2).strip()


QUERIES = example_queries(doc_text())


# ---- the dictionary -----------------------------------------------------------------------------

def test_the_ddl_parser_sees_the_warehouse_the_demo_builds(demo_warehouse):
    with duckdb.connect(str(demo_warehouse), read_only=True) as con:
        rows = con.execute(
            "SELECT table_schema || '.' || table_name, column_name FROM information_schema.columns "
            "WHERE table_schema IN (SELECT unnest(?)) ORDER BY table_schema, table_name, ordinal_position",
            [list(SCHEMAS)],
        ).fetchall()
    built: dict[str, list[str]] = {}
    for table, column in rows:
        built.setdefault(table, []).append(column)
    parsed = {table: list(columns) for table, columns in ddl_tables().items()}
    assert parsed == built


def test_every_contract_table_has_a_section_and_no_section_is_stale():
    tables = ddl_tables()
    sections = table_sections(doc_text())
    assert {t.split(".")[0] for t in tables} == set(SCHEMAS)
    missing = sorted(set(tables) - set(sections))
    stale = sorted(set(sections) - set(tables))
    assert not missing, f"tables without a section in docs/warehouse.md: {missing}"
    assert not stale, f"sections for tables that are not in sql/schema: {stale}"


@pytest.mark.parametrize("table", sorted(ddl_tables()))
def test_every_column_is_documented_with_its_type_and_nullability(table):
    section = table_sections(doc_text()).get(table)
    assert section is not None, f"no section for {table}"
    for label in ("**Grain:**", "**Built by:**", "**Refresh:**"):
        assert label in section, f"{table}: the section has no {label} paragraph"
    contract = ddl_tables()[table]
    documented = documented_columns(section)
    assert list(documented) == list(contract), f"{table}: documented columns differ from the DDL (or its order)"
    for column, (column_type, not_null) in contract.items():
        doc_type, nullable = documented[column]
        assert doc_type == column_type, f"{table}.{column}: documented as {doc_type}, the DDL says {column_type}"
        if not_null:
            assert nullable == "no", f"{table}.{column} is NOT NULL: its nullable cell must be 'no'"
        else:
            assert nullable.startswith("yes"), f"{table}.{column} is nullable: say 'yes: <when>'"
            assert len(nullable) > len("yes: "), f"{table}.{column}: say when it is NULL"


def test_the_dictionary_checks_notice_drift():
    """The parsers behind the checks above see a dropped column, a changed type and a stale section."""
    text = doc_text()
    contract = ddl_tables()["core.papers"]
    section = table_sections(text)["core.papers"]
    assert list(documented_columns(section)) == list(contract)
    dropped = "\n".join(line for line in section.splitlines() if not line.startswith("| `doi` |"))
    assert "doi" not in documented_columns(dropped)
    retyped = section.replace("| `year` | `INTEGER` |", "| `year` | `BIGINT` |")
    assert documented_columns(retyped)["year"][0] != contract["year"][0]
    stale = text + "\n### `core.old_table`\n\n| `x` | `VARCHAR` | no | gone |\n"
    assert "core.old_table" in table_sections(stale)
    # a heading-like line inside a code block is not a section
    fenced = text + "\n```\n### `core.not_a_section`\n```\n"
    assert "core.not_a_section" not in table_sections(fenced)


# ---- the queries --------------------------------------------------------------------------------

def test_there_are_twelve_numbered_queries_each_with_a_marker():
    assert [n for n, _, _ in QUERIES] == list(range(1, EXPECTED_QUERIES + 1))
    for number, _question, sql in QUERIES:
        kind, reason = expectation(sql)
        if kind == "empty-ok":
            assert reason, f"query {number}: say why it may be empty on the demo data"


@pytest.mark.parametrize("number,question,sql", QUERIES, ids=[f"q{n}" for n, _, _ in QUERIES])
def test_query_runs_on_the_demo_warehouse(demo_warehouse, number, question, sql):
    with duckdb.connect(str(demo_warehouse), read_only=True) as con:
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        rows = relation.fetchall()
    assert columns, f"query {number} ({question}) returns no columns"
    kind, _ = expectation(sql)
    if kind == "rows":
        assert rows, f"query {number} ({question}) returned no rows on the demo warehouse"


def _query(number: int) -> str:
    return next(sql for n, _, sql in QUERIES if n == number)


def test_the_redirect_query_follows_old_ids_to_the_survivor(demo_warehouse):
    """Query 9 is empty on the demo (nothing merged): add redirects to a copy and follow them, an
    identifier's redirect to the paper holding the new value included."""
    with duckdb.connect(":memory:") as con:
        con.execute(f"ATTACH '{demo_warehouse}' AS demo (READ_ONLY)")
        con.execute("CREATE SCHEMA core")
        for table in ("id_redirects", "papers", "authors", "paper_identifiers"):
            con.execute(f"CREATE TABLE core.{table} AS SELECT * FROM demo.core.{table}")
        paper_id, title = con.execute("SELECT paper_id, title FROM core.papers ORDER BY paper_id LIMIT 1").fetchone()
        author_id, name = con.execute("SELECT author_id, display_name FROM core.authors ORDER BY author_id LIMIT 1").fetchone()
        con.execute(
            "INSERT INTO core.id_redirects VALUES "
            "('paper', 'P000000000old', ?, 'merged', DATE '2026-11-20'), "
            # an uncollapsed chain, as a hand-edited or older table might hold: old1 → old2 → live
            "('author', 'A00000000old1', 'A00000000old2', 'override', DATE '2026-11-19'), "
            "('author', 'A00000000old2', ?, 'merged', DATE '2026-11-20'), "
            # an OpenAlex work id OpenAlex replaced: the paper now holding the new one
            "('openalex', 'W1', 'W2', 'superseded', DATE '2026-11-20')",
            [paper_id, author_id],
        )
        con.execute("INSERT INTO core.paper_identifiers VALUES (?, 'openalex', 'W2', NULL, ['openalex'], 'arxiv_id', "
                    "true, DATE '2026-11-20', DATE '2026-11-21')", [paper_id])
        rows = con.execute(_query(9)).fetchall()
    found = {(r[0], r[1]): (r[2], r[3], r[6]) for r in rows}
    assert found[("paper", "P000000000old")] == (paper_id, 1, title)
    assert found[("author", "A00000000old1")] == (author_id, 2, name)
    assert found[("author", "A00000000old2")] == (author_id, 1, name)
    assert found[("openalex", "W1")] == ("W2", 1, title)
    assert len(rows) == 4


def test_the_flag_queries_find_the_sample_traps(demo_warehouse):
    """The samples' known traps come out of queries 4 and 5 with the documented figures."""
    with duckdb.connect(str(demo_warehouse), read_only=True) as con:
        implausible = con.execute(_query(4)).fetchall()
        incomplete = con.execute(_query(5)).fetchall()
    # 002: h-index 39 with 15 papers and 108 citations; bound min(15, floor(sqrt(108))) = 10
    assert [(r[2], r[4], r[5], r[6], r[7]) for r in implausible] == [("Yucheng Ding", 39, 15, 108, 10)]
    # 000: declares 6 works, lists 5
    assert [(r[2], r[4], r[5], r[6]) for r in incomplete] == [("Daning Cheng", 6, 5, 1)]


def test_warehouse_connections_cap_duckdb_memory(tmp_path, monkeypatch):
    """DuckDB's buffer pool is capped (default 3GB; settable; empty restores DuckDB's default)."""
    from pipelines import warehouse as wh
    from pipelines.resources import WarehouseResource

    def limit() -> str:  # through the resource, which reads the setting as it connects
        with WarehouseResource(path=str(tmp_path / "w.duckdb")).connect(read_only=False) as con:
            return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]

    monkeypatch.delenv("SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT", raising=False)
    assert limit().replace(" ", "") in {"2.7GiB", "2.8GiB", "3.0GB", "2.7GB", "2.8GB"}
    monkeypatch.setenv("SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT", "512MB")
    assert limit().replace(" ", "") in {"488.2MiB", "512.0MB", "488.2MB"}
    monkeypatch.setenv("SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT", "")
    assert limit().replace(" ", "") not in {"2.7GiB", "2.8GiB", "488.2MiB"}
    # The plain module reads no environment: the limit is a parameter (default 3GB).
    with wh.connect(tmp_path / "w.duckdb", memory_limit="512MB") as con:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0].replace(" ", "") in {
            "488.2MiB", "512.0MB", "488.2MB"}

"""The warehouse schema: long text columns are stored compressed, and an older warehouse is
migrated to that layout without losing or changing a row."""

from __future__ import annotations

from datetime import date

import duckdb

from pipelines import warehouse


def _stored_sql(con, table: str) -> str:
    schema, name = table.split(".")
    return warehouse.scalar(con, "SELECT sql FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?", [schema, name])


def test_long_text_columns_are_declared_zstd(tmp_path):
    assert {"raw.page_bodies", "staging.parsed_listings", "core.papers"} <= set(warehouse.declared_compressed_tables())
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        assert "abstract VARCHAR USING COMPRESSION ZSTD" in _stored_sql(con, "staging.parsed_listings")
        assert "body VARCHAR USING COMPRESSION ZSTD" in _stored_sql(con, "raw.page_bodies")


def test_an_older_warehouse_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:  # the core.papers layout before compression was pinned
        con.execute("CREATE SCHEMA core")
        con.execute("""CREATE TABLE core.papers (
            paper_id VARCHAR NOT NULL, title VARCHAR NOT NULL, abstract VARCHAR, listings_count INTEGER NOT NULL,
            profiles_count INTEGER NOT NULL, sources VARCHAR[] NOT NULL, authors_known INTEGER NOT NULL,
            byline_complete BOOLEAN NOT NULL, first_seen DATE NOT NULL, last_seen DATE NOT NULL)""")
        con.execute("""INSERT INTO core.papers
            SELECT 'P' || i, 'Title ' || i, repeat('an abstract sentence ', 20) || i, 1, 1, ['bzpeer'], 1, false,
                   DATE '2026-11-21', DATE '2026-11-21'
            FROM range(1000) r(i)""")
    with warehouse.connect(path) as con:
        before = con.execute("SELECT paper_id, abstract, sources FROM core.papers ORDER BY paper_id").fetchall()
        warehouse.ensure_schema(con)
        assert "USING COMPRESSION ZSTD" in _stored_sql(con, "core.papers")
        after = con.execute("SELECT paper_id, abstract, sources FROM core.papers ORDER BY paper_id").fetchall()
        assert after == before
        # the columns added since are there (NULL in the old rows)
        assert "doi" in warehouse.table_columns(con, "core.papers")
        assert warehouse.scalar(con, "SELECT count(*) FROM core.papers WHERE first_seen = ?", [date(2026, 11, 21)]) == 1000
        # a second run finds nothing left to migrate, and no table is left behind
        assert warehouse.migrate_compression(con) == []
        assert warehouse.scalar(con, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '%before_migration%'") == 0


def test_a_warehouse_from_before_fetch_ids_gets_them_and_keeps_working(tmp_path):
    """raw.page_captures / staging.profiles / staging.rejects as they were before every fetch had its
    id: the columns are added, filled for the rows already there, and a night runs on top."""
    from pipelines.staging import build as landing
    from pipelines.ingest.sources.folder import BUNDLED_SAMPLES, FolderSource

    path = tmp_path / "old.duckdb"
    day = date(2026, 11, 20)
    url = "https://www.scholarfeed.org/author/1"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA raw")
        con.execute("CREATE SCHEMA staging")
        con.execute("""CREATE TABLE raw.page_captures (capture_id VARCHAR NOT NULL, source VARCHAR NOT NULL,
            url VARCHAR NOT NULL, source_profile_id VARCHAR, captured_at TIMESTAMPTZ NOT NULL, partition_date DATE NOT NULL,
            content_type VARCHAR, http_status INTEGER, body VARCHAR USING COMPRESSION ZSTD, body_bytes BLOB,
            encoding VARCHAR, byte_size BIGINT NOT NULL, origin VARCHAR NOT NULL, source_file VARCHAR, etag VARCHAR,
            last_modified VARCHAR, fetch_ms DOUBLE, not_modified BOOLEAN NOT NULL DEFAULT FALSE, fetch_reject VARCHAR,
            fetch_reject_detail VARCHAR, loaded_at TIMESTAMPTZ NOT NULL)""")
        con.execute("INSERT INTO raw.page_captures (capture_id, source, url, captured_at, partition_date, body, "
                    "byte_size, origin, fetch_reject, loaded_at) VALUES ('c', 'scholarfeed', ?, now(), ?, '', 0, 'http', "
                    "'timeout', now())", [url, day])
        con.execute("""CREATE TABLE staging.rejects (reject_id VARCHAR NOT NULL, capture_id VARCHAR NOT NULL,
            partition_date DATE NOT NULL, source VARCHAR NOT NULL, url VARCHAR, reason VARCHAR NOT NULL, detail VARCHAR,
            position INTEGER, parser_version VARCHAR NOT NULL)""")
        con.execute("INSERT INTO staging.rejects VALUES ('r', 'c', ?, 'scholarfeed', ?, 'timeout', 'slow', NULL, '1.0.0')",
                    [day, url])
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        assert con.execute("SELECT fetch_id FROM raw.page_captures").fetchall() == [(landing.fetch_id(day, url, None),)]
        assert con.execute("SELECT fetch_id, stage FROM staging.rejects").fetchall() == [
            (landing.fetch_id(day, url, None), "fetch")]
        assert "capture_issues" in warehouse.table_columns(con, "raw.page_captures")
        assert warehouse.migrate_columns(con) == []  # nothing left to add
        landing.land_partition(con, FolderSource(BUNDLED_SAMPLES).iter_captures(DAY := date(2026, 11, 21)), DAY)
        landing.stage_partition(con, DAY)
        assert warehouse.scalar(con, "SELECT count(*) FROM staging.profiles WHERE partition_date = ?", [DAY]) == 5
        assert warehouse.scalar(con, "SELECT count(*) FROM staging.rejects") == 1


def test_columns_added_to_the_contract_reach_an_older_warehouse(tmp_path):
    """A table created by an older release lacks the columns added since: ensure_schema adds them (NULL
    in the old rows), so the night's inserts by name do not fail on the first new column."""
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:  # marts.collaboration_edges before 'evidence' existed
        con.execute("CREATE SCHEMA marts")
        con.execute("""CREATE TABLE marts.collaboration_edges (author_a VARCHAR NOT NULL, author_b VARCHAR NOT NULL,
            papers_count INTEGER NOT NULL, first_year INTEGER, last_year INTEGER, paper_ids VARCHAR[] NOT NULL)""")
        con.execute("INSERT INTO marts.collaboration_edges VALUES ('A1', 'A2', 1, 2020, 2020, ['P1'])")
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        assert "evidence" in warehouse.table_columns(con, "marts.collaboration_edges")
        declared = list(warehouse.declared_columns()["marts.collaboration_edges"])
        assert warehouse.table_columns(con, "marts.collaboration_edges") == declared
        assert con.execute("SELECT author_a, evidence FROM marts.collaboration_edges").fetchall() == [("A1", None)]
        con.execute("INSERT INTO marts.collaboration_edges BY NAME SELECT 'A1' AS author_a, 'A3' AS author_b, "
                    "1 AS papers_count, ['P2'] AS paper_ids, ['byline'] AS evidence")
        # every contract table has every declared column, and a second run adds nothing
        for table, columns in warehouse.declared_columns().items():
            assert warehouse.table_columns(con, table) == list(columns), table
        assert warehouse.migrate_columns(con) == []


def _run_ddl_files_as_an_analyst_would(con) -> None:
    """Every sql/schema file as it is, in order, each as one script (what the DuckDB CLI's
    ``.read sql/schema/NN_layer.sql`` runs)."""
    for path in sorted((warehouse.SQL_DIR / "schema").glob("*.sql")):
        try:
            con.execute(path.read_text())
        except duckdb.Error as exc:
            raise AssertionError(f"{path.name} does not run as it is: {exc}") from exc


def test_the_ddl_files_run_by_hand_on_a_fresh_database_and_on_a_warehouse(tmp_path):
    """An analyst can run the DDL files as they are: on an empty database they build the same tables
    and views (same columns, same types) as ensure_schema, they can run again, and they run over a
    warehouse ensure_schema made without changing what it stores."""
    def shape(con):
        return con.execute(
            "SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type, c.ordinal_position "
            "FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema IN ('raw','staging','core','marts','enrichment','cache') ORDER BY ALL").fetchall()

    with warehouse.connect(tmp_path / "pipeline.duckdb") as con:
        warehouse.ensure_schema(con)
        built = shape(con)
        _run_ddl_files_as_an_analyst_would(con)
        assert shape(con) == built
    with duckdb.connect(str(tmp_path / "by_hand.duckdb")) as con:
        _run_ddl_files_as_an_analyst_would(con)
        assert shape(con) == built
        _run_ddl_files_as_an_analyst_would(con)
        assert shape(con) == built
        views = {name for (name,) in con.execute(
            "SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert views == set(warehouse.declared_views())
    # the contract of each view (its declared columns) is still read from the DDL
    assert list(warehouse.declared_columns()["staging.listings"])[:2] == ["listing_id", "listing_key"]

"""The core step's write: core.papers inserted with its abstracts joined in, and a failed write
raising its own error.

At 100k profiles (1.5M listings, 1.7 GB of abstracts) the write ran out of DuckDB's 3 GB pool: it
inserted core.papers and then UPDATEd every paper's abstract inside the write transaction, which
holds the updated values in memory. core.papers is now inserted with its abstracts joined in
(sql/core/papers_with_abstracts.sql), which DuckDB writes out row group by row group (a 100k
warehouse's write then fits a 1 GB pool; docs/benchmarks.md). That needs row groups of 122,880
rows many times over, too large for a unit test: here the same shape at a small scale checks
what is written; the memory is measured by ``make bench`` at 100k."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import polars as pl
import pytest

from pipelines import warehouse
from pipelines.core import build as core_build

NIGHT = date(2026, 11, 23)
LISTINGS = 6_000
LISTING_ID = ("substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), "
              "coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16)")


@dataclass
class _Core:
    """What write_core reads of a CoreTables: the tables to replace, the listings' papers, stats."""

    papers: pl.DataFrame
    listing_papers: pl.DataFrame
    stats: dict = field(default_factory=dict)

    def writes(self) -> list[tuple[str, pl.DataFrame]]:
        return [("core.papers", self.papers)]


def _staged(path) -> _Core:
    """One night of LISTINGS listings (50 per capture), two listings per paper, each with an abstract."""
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        con.execute(f"""
            INSERT INTO staging.parsed_listings BY NAME
            SELECT 'parse' || (i // 50) AS parse_id, 'key' || i AS listing_key, 'cap' || (i // 50) AS capture_id,
                   'bzpeer' AS source, 'prof' || (i // 50) AS source_profile_id, (i % 50)::INTEGER AS position,
                   'A title ' || i AS title, [] AS byline_authors, false AS byline_truncated, [] AS code_urls,
                   repeat('an abstract word ', 180) || i AS abstract
            FROM range({LISTINGS}) AS t(i)""")
        con.execute(f"""
            INSERT INTO staging.night_fetches BY NAME
            SELECT DATE '{NIGHT}' AS partition_date, 'fetch' || c AS fetch_id, 'cap' || c AS capture_id,
                   'bzpeer' AS source, TIMESTAMPTZ '2026-11-22 05:00:00+00' AS captured_at, 'parsed' AS role,
                   'parse' || c AS parse_id, 'test' AS parser_version
            FROM range({LISTINGS // 50}) AS t(c)""")
        listing_papers = warehouse.read_frame(con, f"""
            SELECT l.listing_key, 'paper' || (l.listing_key[4:]::INTEGER // 2) AS paper_id,
                   'title_exact' AS method, 1.0 AS score, {LISTING_ID} AS listing_id
            FROM staging.parsed_listings AS l JOIN staging.night_fetches AS n USING (parse_id)""")
    papers = (listing_papers.group_by("paper_id").agg(pl.len().cast(pl.Int32).alias("listings_count"))
              .sort("paper_id")
              .with_columns(title=pl.lit("A title"), profiles_count=pl.lit(1, pl.Int32),
                            sources=pl.lit(["bzpeer"], pl.List(pl.String)), authors_known=pl.lit(0, pl.Int32),
                            byline_complete=pl.lit(False), first_seen=pl.lit(NIGHT), last_seen=pl.lit(NIGHT),
                            abstract=pl.lit(None, pl.String)))
    return _Core(papers, listing_papers)


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    path = tmp_path_factory.mktemp("core_write") / "w.duckdb"
    return path, _staged(path)


def test_the_core_write_inserts_the_papers_with_their_abstracts_in_the_steps_order(staged):
    path, core = staged
    with warehouse.connect(path) as con:
        core_build.write_core(con, core, NIGHT)
        got = warehouse.read_frame(con, "SELECT paper_id, abstract FROM core.papers")
        assert got["paper_id"].to_list() == core.papers["paper_id"].to_list()  # the step's order
        assert got["abstract"].null_count() == 0
        # the paper's two abstracts are as long: the first in text order (listing 2's, not 3's)
        first = got.filter(pl.col("paper_id") == "paper1")["abstract"].item()
        assert first.endswith(" 2") and first.startswith("an abstract word")
        assert warehouse.scalar(con, "SELECT count(*) FROM core.paper_listings") == LISTINGS


def test_a_failed_core_write_raises_its_own_error_not_the_aborted_transaction(staged, monkeypatch):
    """When a statement of the write fails, the transaction is aborted and DuckDB refuses even to
    unregister a frame; the error raised must be the statement's, not "transaction is aborted"."""
    import duckdb

    path, core = staged
    broken = "SELECT * FROM a_table_that_is_not_there"
    real = warehouse.read_sql
    monkeypatch.setattr(warehouse, "read_sql", lambda name: broken if name == "core/paper_listings" else real(name))
    with warehouse.connect(path) as con:
        before = warehouse.scalar(con, "SELECT count(*) FROM core.papers")
        with pytest.raises(duckdb.CatalogException, match="a_table_that_is_not_there"):
            core_build.write_core(con, core, NIGHT)
        assert warehouse.scalar(con, "SELECT count(*) FROM core.papers") == before  # rolled back

"""History after a backfill: the order the days ran in does not change what the warehouse says.

Two days of captures (day 1: the two BZPEER profiles; day 2: all five sample profiles) run through
the real assets (raw → staging → core → marts, ``dg.materialize``) in both orders. Ids are minted
from the evidence a night first sees, so they may differ between the two warehouses; everything
else — first/last dates, counts, links, series — must be the same once ids are replaced by what
they name (an author by its name and papers, a paper by its title).
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb

from tests.conftest import SAMPLES
from pipelines.assets import marts
from pipelines.assets.core import core_tables
from pipelines.assets.ingest import page_captures
from pipelines.assets.staging import staging_tables
from pipelines.resources import CapturesFolderResource, WarehouseResource

DAY1, DAY2 = date(2026, 11, 20), date(2026, 11, 21)
ASSETS = [page_captures, staging_tables, core_tables, marts.author_metrics, marts.citations, marts.collaboration_edges]


def run(wh: Path, day: date, captures: Path) -> None:
    result = dg.materialize(
        ASSETS, partition_key=day.isoformat(),
        resources={"page_source": CapturesFolderResource(path=str(captures)), "warehouse_db": WarehouseResource(path=str(wh))},
    )
    assert result.success


def described(wh: Path) -> dict[str, list[tuple]]:
    """The tables with every id replaced by what it names (ids depend on the order; nothing else may)."""
    with duckdb.connect(str(wh), read_only=True) as con:
        def rows(sql: str) -> list[tuple]:
            return con.execute(sql).fetchall()

        paper = dict(rows("SELECT paper_id, title FROM core.papers"))
        author = dict(rows(
            "SELECT a.author_id, a.display_name || ' @ ' || coalesce(string_agg(p.title, ' | ' ORDER BY p.title), '') "
            "FROM core.authors a LEFT JOIN core.authorships s USING (author_id) LEFT JOIN core.papers p USING (paper_id) "
            "GROUP BY a.author_id, a.display_name"))
        return {
            "papers": sorted(rows("SELECT title, year, listings_count, profiles_count, authors_known, first_seen, last_seen "
                                  "FROM core.papers")),
            "authors": sorted((author[a], *rest) for a, *rest in rows(
                "SELECT author_id, profiles_count, papers_count, names_count, first_seen FROM core.authors")),
            "profiles": sorted((s, p, author[a], last) for s, p, a, last in rows(
                "SELECT source, source_profile_id, author_id, last_captured FROM core.author_profiles")),
            "authorships": sorted((paper[p], author[a], e) for p, a, e in rows(
                "SELECT paper_id, author_id, evidence FROM core.authorships")),
            "author_metrics": sorted((s, p, author.get(a), as_of, held) for s, p, a, as_of, held in rows(
                "SELECT source, source_profile_id, author_id, as_of, papers_held FROM marts.author_metrics")),
            "citations": sorted((lvl, s, p, author.get(a), as_of, c, prev, change) for lvl, s, p, a, as_of, c, prev, change in rows(
                "SELECT level, source, source_profile_id, author_id, as_of, citations, previous_as_of, change "
                "FROM marts.citations")),
            "edges": sorted((*sorted((author[a], author[b])), n, first, last) for a, b, n, first, last in rows(
                "SELECT author_a, author_b, papers_count, first_year, last_year FROM marts.collaboration_edges")),
        }


def test_running_the_days_out_of_order_gives_the_same_history(tmp_path):
    day1 = tmp_path / "day1"
    day1.mkdir()
    for page in SAMPLES.glob("00[01]_*"):          # the two BZPEER profiles (and their sidecars)
        shutil.copy(page, day1)
    in_order, backfilled = tmp_path / "in_order.duckdb", tmp_path / "backfilled.duckdb"
    run(in_order, DAY1, day1)
    run(in_order, DAY2, SAMPLES)
    run(backfilled, DAY2, SAMPLES)
    run(backfilled, DAY1, day1)                       # the earlier day arrives late

    expected, got = described(in_order), described(backfilled)
    for table in expected:
        assert got[table] == expected[table], table
    # and the dates are the data's: the BZPEER owners were first seen on day 1, the others on day 2
    authors = {name.split(" @ ")[0]: first for name, *_, first in got["authors"] if name.split(" @ ")[0] in
               ("Daning Cheng", "Yunquan Zhang", "Jialiang Cheng", "Yucheng Ding")}
    assert authors == {"Daning Cheng": DAY1, "Yunquan Zhang": DAY1, "Jialiang Cheng": DAY2, "Yucheng Ding": DAY2}

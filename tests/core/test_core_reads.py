"""The core step's reads of staging (sql/core/current_listings.sql, paper_listings.sql,
papers_with_abstracts.sql), and the marts' read of the listings' current scores
(sql/marts/paper_score_reports.sql), read what staging.listings is a view over — each parse once and the nights
that show it — and give exactly the rows reading the view gave: the view computes every night's
listing_id (a sha256) on every read, which made these reads grow with the nights stored."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, datetime, timezone

import polars as pl
import pytest

from pipelines import warehouse
from pipelines.ingest.sources.folder import BUNDLED_SAMPLES, FolderSource
from pipelines.staging import build as landing

NIGHTS = [date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 25), date(2026, 11, 26)]
CHANGED = "002_9c9c8f84cf558702.txt"
CORE_READS = ("core/current_listings", "core/paper_listings", "core/papers_with_abstracts", "marts/paper_score_reports")

# The three reads as they were, over the staging.listings view (every night's rows, listing_id computed
# by the view): the reference the reads of the stored tables must equal.
VIEW_CURRENT_LISTINGS = """
WITH keys AS (
    SELECT listing_key, min(partition_date) AS first_seen, max(partition_date) AS newest
    FROM staging.listings WHERE partition_date <= $until GROUP BY listing_key
),
chosen AS (
    SELECT l.listing_key, min(l.listing_id) AS listing_id, any_value(k.first_seen) AS first_seen
    FROM staging.listings AS l JOIN keys AS k ON l.listing_key = k.listing_key AND l.partition_date = k.newest
    GROUP BY l.listing_key
)
SELECT l.listing_id, l.listing_key, l.partition_date, l.source, l.source_profile_id, l.title, l.venue,
       l.year, l.year_inferred, l.pub_date, l.category, l.has_code, l.byline_authors, l.byline_truncated,
       l.arxiv_id, c.first_seen
FROM staging.listings AS l JOIN chosen AS c USING (listing_id)
ORDER BY l.listing_key"""
VIEW_PAPER_LISTINGS = """
SELECT l.listing_id, k.paper_id, k.method, k.score
FROM staging.listings AS l JOIN listing_papers AS k USING (listing_key)
WHERE l.partition_date <= $until ORDER BY l.listing_id"""
VIEW_PAPER_ABSTRACTS = """
SELECT k.paper_id, l.abstract
FROM listing_papers AS k JOIN staging.listings AS l ON l.listing_id = k.listing_id
WHERE l.abstract IS NOT NULL AND l.abstract <> ''
QUALIFY row_number() OVER (PARTITION BY k.paper_id ORDER BY length(l.abstract) DESC, l.abstract) = 1"""
VIEW_REPORTED_SCORES = """
SELECT paper_id, max(listing_score) AS reported_score
FROM (
    SELECT pl.paper_id, l.listing_score
    FROM core.paper_listings pl JOIN staging.listings l USING (listing_id)
    QUALIFY row_number() OVER (PARTITION BY l.listing_key ORDER BY l.partition_date DESC, l.listing_id) = 1
)
WHERE listing_score IS NOT NULL
GROUP BY paper_id"""


def _folder(tmp_path, name: str, *, changed: dict[str, bytes] | None = None, extra: dict[str, tuple[bytes, str]] | None = None):
    folder = tmp_path / name
    shutil.copytree(BUNDLED_SAMPLES, folder, ignore=shutil.ignore_patterns("__*"))
    for file, body in (changed or {}).items():
        (folder / file).write_bytes(body)
    for file, (body, url) in (extra or {}).items():  # another capture of a profile (its own sidecar url)
        (folder / file).write_bytes(body)
        (folder / f"{file}.meta.json").write_text(json.dumps({"url": url, "captured_at": "2026-11-21T05:00:00Z"}))
    return folder


def _warehouse(tmp_path):
    """Four nights: the samples; one page changed (a title, an abstract) and a second capture of that
    profile with another body (the same listings twice on one night: ties); the page back to its old
    body; the page changed again (a night after the window ends, for $until)."""
    original = (BUNDLED_SAMPLES / CHANGED).read_bytes()
    url = json.loads((BUNDLED_SAMPLES / f"{CHANGED}.meta.json").read_text())["url"]
    retitled = original.replace(b"DC-CCL: Device-Cloud", b"DC-CCL: Cloud-Device", 1).replace(b"Many large vision", b"Many big vision", 1)
    second_capture = original.replace(b"108citations", b"109citations", 1)
    assert len({original, retitled, second_capture}) == 3
    folders = [_folder(tmp_path, "n1"),
               _folder(tmp_path, "n2", changed={CHANGED: retitled}, extra={"again.txt": (second_capture, url)}),
               _folder(tmp_path, "n3"),
               _folder(tmp_path, "n4", changed={CHANGED: retitled})]
    path = tmp_path / "w.duckdb"
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        for folder, day in zip(folders, NIGHTS):
            landing.land_partition(con, FolderSource(folder).iter_captures(day), day)
            landing.stage_partition(con, day)
        assert warehouse.scalar(con, "SELECT count(*) FROM staging.listings") > 4 * 40
    return path


def _listing_papers(current: pl.DataFrame) -> pl.DataFrame:
    """A resolution of the current rows (one paper per title word, to put several keys in a paper)."""
    return current.select(
        "listing_key", "listing_id",
        paper_id=pl.lit("P-") + pl.col("title").str.to_lowercase().str.extract(r"(\w+)", 1).fill_null("none"),
        method=pl.lit("title_exact"), score=pl.lit(1.0))


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    return _warehouse(tmp_path_factory.mktemp("core_reads"))


@pytest.mark.parametrize("until", [NIGHTS[0], NIGHTS[1], NIGHTS[2], NIGHTS[3]])
def test_the_core_reads_give_the_rows_the_view_gave(staged, until):
    with warehouse.connect(staged, read_only=True) as con:
        current = warehouse.read_frame(con, warehouse.read_sql("core/current_listings"), {"until": until})
        assert current.equals(warehouse.read_frame(con, VIEW_CURRENT_LISTINGS, {"until": until}))
        assert current.height == current["listing_key"].n_unique() > 40
        ties = warehouse.scalar(con, """SELECT count(*) FROM (SELECT listing_key FROM staging.listings
                                        WHERE partition_date = ? GROUP BY 1 HAVING count(*) > 1)""", [NIGHTS[1]])
        assert ties > 0  # night 2 shows the changed profile's listings twice

        con.register("listing_papers", _listing_papers(current).to_arrow())
        fanned = warehouse.read_frame(con, warehouse.read_sql("core/paper_listings").split("BY NAME", 1)[1], {"until": until})
        assert fanned.equals(warehouse.read_frame(con, VIEW_PAPER_LISTINGS, {"until": until}))
        assert fanned.height == warehouse.scalar(con, "SELECT count(*) FROM staging.listings WHERE partition_date <= ?", [until])

        insert = warehouse.read_sql("core/papers_with_abstracts")
        best = re.search(r"LEFT JOIN \((.*)\) AS best", insert, re.S).group(1)
        ours = warehouse.read_frame(con, best, {"until": until}).sort("paper_id")
        assert ours.equals(warehouse.read_frame(con, VIEW_PAPER_ABSTRACTS).sort("paper_id"))
        assert ours.height > 0


def test_the_core_reads_read_the_stored_parses_not_the_listings_view():
    """Reading staging.listings computes every night's listing_id on every read (~900k sha256 at 10k
    profiles over six nights); the core reads hash only the rows they keep."""
    for name in CORE_READS:
        text = "\n".join(line.split("--", 1)[0] for line in warehouse.read_sql(name).splitlines())
        assert "staging.listings" not in text, name
        assert "staging.parsed_listings" in text and "staging.night_fetches" in text, name


def test_the_core_step_writes_the_same_paper_listings_and_abstracts(staged, tmp_path):
    """The whole core step on the four nights: core.paper_listings holds every staged row of the
    window with the listing_id staging.listings shows, and every abstract is a current row's."""
    from pipelines.core import build as core_build
    from pipelines.core.identity.overrides import Overrides

    path = tmp_path / "copy.duckdb"
    shutil.copy(staged, path)
    with warehouse.connect(path) as con:
        core_build.resolve_in_warehouse(con, NIGHTS[2], Overrides())
        missing = warehouse.scalar(con, """
            SELECT count(*) FROM staging.listings l ANTI JOIN core.paper_listings p USING (listing_id)
            WHERE l.partition_date <= ?""", [NIGHTS[2]])
        assert missing == 0
        assert warehouse.scalar(con, "SELECT count(*) FROM core.paper_listings") == warehouse.scalar(
            con, "SELECT count(*) FROM staging.listings WHERE partition_date <= ?", [NIGHTS[2]])
        assert warehouse.scalar(con, "SELECT count(*) FROM core.papers WHERE abstract IS NOT NULL") > 0


@pytest.mark.parametrize("night", [NIGHTS[1], NIGHTS[2], NIGHTS[3]])
def test_the_reported_scores_are_the_current_rows_as_the_view_gave_them(staged, tmp_path, night):
    """marts.paper_scores' reported score: each listing's current row among core.paper_listings (the
    core window: before NIGHTS[3] a staged night lies past it), as reading the view gave it."""
    from pipelines.core import build as core_build
    from pipelines.core.identity.overrides import Overrides

    path = tmp_path / "copy.duckdb"
    shutil.copy(staged, path)
    with warehouse.connect(path) as con:
        core_build.resolve_in_warehouse(con, night, Overrides())
        reports = warehouse.read_frame(con, warehouse.read_sql("marts/paper_score_reports"))
        ours = reports.filter(pl.col("reported_score").is_not_null()).select("paper_id", "reported_score").sort("paper_id")
        assert ours.height > 0
        assert ours.equals(warehouse.read_frame(con, VIEW_REPORTED_SCORES).sort("paper_id"))
        assert reports.height == warehouse.scalar(con, "SELECT count(*) FROM core.papers")

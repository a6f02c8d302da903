"""Each capture stored once (issue 23, lever 1): raw.page_captures is a view over each distinct body
stored once (raw.page_bodies) and a small row per fetch (raw.fetches). Nights that see a page again,
re-runs, a page that changes and one that goes back to an old body; and a warehouse of the release
before, where raw.page_captures is a table, moved on first open."""

from __future__ import annotations

from datetime import date, datetime, timezone

import duckdb
import polars as pl

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.ingest.sources.base import Capture
from pipelines.ingest.sources.folder import BUNDLED_SAMPLES, FolderSource

NIGHTS = [date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 25)]
URL = "https://www.scholarfeed.org/author/77"


def _samples(day: date) -> list[Capture]:
    return list(FolderSource(BUNDLED_SAMPLES).iter_captures(day))


def _page(day: date, body: bytes, url: str = URL, content_type: str | None = "text/plain") -> Capture:
    return Capture(url=url, captured_at=datetime(day.year, day.month, day.day, 6, tzinfo=timezone.utc), body=body,
                   content_type=content_type, origin="http", http_status=200)


def _count(con, sql: str, params=()) -> int:
    return warehouse.scalar(con, sql, params)


def _view(con, day: date) -> pl.DataFrame:
    return _utc(warehouse.read_frame(con, "SELECT * EXCLUDE (loaded_at) FROM raw.page_captures WHERE partition_date = ? "
                                          "ORDER BY fetch_id", [day]))


def _utc(frame: pl.DataFrame) -> pl.DataFrame:
    """Timestamps as raw_rows types them (DuckDB hands UTC back as 'Etc/UTC')."""
    return frame.with_columns(pl.col(pl.Datetime).dt.convert_time_zone("UTC"))


def test_an_unchanged_page_is_a_fetch_row_not_a_copy_of_its_body(tmp_path):
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        for day in NIGHTS[:2]:
            landing.land_partition(con, _samples(day), day)
        assert _count(con, "SELECT count(*) FROM raw.fetches") == 10
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 5
        # the view shows every night's fetch with its body, exactly as the rows landed
        for day in NIGHTS[:2]:
            expected = landing.raw_rows(_samples(day), day).drop("loaded_at").sort("fetch_id")
            assert _view(con, day).equals(expected)


def test_re_running_a_night_never_duplicates_a_fetch_or_a_body(tmp_path):
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        for day in (NIGHTS[0], NIGHTS[1], NIGHTS[1], NIGHTS[0]):
            landing.land_partition(con, _samples(day), day)
            landing.stage_partition(con, day)
        assert _count(con, "SELECT count(*) FROM raw.page_captures") == 10
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 5
        assert _count(con, "SELECT count(*) FROM staging.profiles") == 10


def test_a_changed_page_and_a_page_that_goes_back_to_an_old_body(tmp_path):
    old, new = b"Jane Doe\nversion one", b"Jane Doe\nversion two"
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        for day, body in zip(NIGHTS, (old, new, old)):
            landing.land_partition(con, [_page(day, body)], day)
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 2
        bodies = [warehouse.scalar(con, "SELECT body FROM raw.page_captures WHERE partition_date = ?", [d]) for d in NIGHTS]
        assert bodies == ["Jane Doe\nversion one", "Jane Doe\nversion two", "Jane Doe\nversion one"]
        # night 2 re-run with the old body: the new one is no one's any more, and goes
        landing.land_partition(con, [_page(NIGHTS[1], old)], NIGHTS[1])
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 1
        assert _count(con, "SELECT count(DISTINCT body) FROM raw.page_captures") == 1
        # ... and back again: stored once more, the other nights untouched
        landing.land_partition(con, [_page(NIGHTS[1], new)], NIGHTS[1])
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 2
        assert _count(con, "SELECT count(*) FROM raw.page_captures") == 3


def test_the_same_bytes_read_under_another_charset_keep_their_own_text(tmp_path):
    body = "Jane Doe café naïve".encode("cp1252")
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        day = NIGHTS[0]
        landing.land_partition(con, [_page(day, body), _page(day, body, url=URL + "0", content_type="text/plain; charset=iso-8859-7")], day)
        rows = con.execute("SELECT url, capture_id, body, encoding FROM raw.page_captures ORDER BY url").fetchall()
        assert [(url, text, encoding) for url, _, text, encoding in rows] == [
            (URL, "Jane Doe café naïve", "cp1252"), (URL + "0", "Jane Doe cafι naοve", "iso8859-7")]
        assert rows[0][1] == rows[1][1]  # the same bytes
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 2


def test_a_warehouse_whose_page_captures_is_a_table_is_moved_on_first_open(tmp_path):
    """The release before stored a body per fetch in the table raw.page_captures: ensure_schema moves its
    rows into raw.fetches and raw.page_bodies (each body once), drops it and creates the view; every value
    is kept, and the nights after land on top."""
    path = tmp_path / "old.duckdb"
    landed = pl.concat([landing.raw_rows(_samples(day), day) for day in NIGHTS[:2]])
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA raw")
        con.execute("CREATE TABLE raw.page_captures AS SELECT * FROM landed")
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                 "WHERE table_schema = 'raw'").fetchall())
        assert kinds == {"page_captures": "VIEW", "fetches": "BASE TABLE", "page_bodies": "BASE TABLE"}
        moved = _utc(warehouse.read_frame(con, "SELECT * FROM raw.page_captures ORDER BY partition_date, fetch_id"))
        assert moved.equals(landed.sort("partition_date", "fetch_id"))
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 5
        assert warehouse.migrate_views(con) == []  # nothing left to move
        landing.land_partition(con, _samples(NIGHTS[2]), NIGHTS[2])
        landing.stage_partition(con, NIGHTS[2])
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 5
        assert _count(con, "SELECT count(*) FROM staging.profiles WHERE partition_date = ?", [NIGHTS[2]]) == 5


# ---- staging: each parse stored once ------------------------------------------------------------------

STAGING = ("staging.profiles", "staging.listings", "staging.rejects", "staging.quality_issues")


def _folder(tmp_path, name: str, *, changed: dict[str, bytes] | None = None, extra: dict[str, bytes] | None = None):
    """A captures folder: the bundled samples (their sidecars too), with some bodies changed or files added."""
    import shutil

    folder = tmp_path / name
    shutil.copytree(BUNDLED_SAMPLES, folder, ignore=shutil.ignore_patterns("__*"))
    for file, body in (changed or {}).items():
        (folder / file).write_bytes(body)
    for file, body in (extra or {}).items():
        (folder / file).write_bytes(body)
    return folder


def _night(con, folder, day: date) -> dict:
    landing.land_partition(con, FolderSource(folder).iter_captures(day), day)
    return landing.stage_partition(con, day)


def _staged(con, table: str, day: date) -> pl.DataFrame:
    return _utc(warehouse.read_frame(con, f"SELECT * FROM {table} WHERE partition_date = ? ORDER BY ALL", [day]))


def test_an_unchanged_page_costs_a_night_fetch_row_not_a_copy_of_its_listings(tmp_path):
    folder = _folder(tmp_path, "captures")
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        first = _night(con, folder, NIGHTS[0])
        second = _night(con, folder, NIGHTS[1])
        assert (first["pages_parsed"], second["pages_parsed"], second["pages_unchanged_reused"]) == (5, 0, 5)
        assert _count(con, "SELECT count(*) FROM staging.parsed_listings") == 48  # one night's
        assert _count(con, "SELECT count(*) FROM staging.parsed_profiles") == 5
        assert _count(con, "SELECT count(*) FROM staging.night_fetches") == 10
        # the views show both nights, each with its own keys
        assert _count(con, "SELECT count(*) FROM staging.listings") == 96
        assert _count(con, "SELECT count(DISTINCT listing_id) FROM staging.listings") == 96
        one, two = (_staged(con, "staging.listings", d).sort("capture_id", "position") for d in NIGHTS[:2])
        same = [c for c in one.columns if c not in ("listing_id", "partition_date")]
        assert one.select(same).equals(two.select(same))
        assert two["listing_id"].to_list() == [landing.short_hash(NIGHTS[1], c, p) for c, p in
                                               two.select("capture_id", "position").iter_rows()]


def test_a_changed_page_and_one_that_goes_back_to_its_old_body_are_staged_from_their_own_parse(tmp_path):
    page = "002_9c9c8f84cf558702.txt"
    original = (BUNDLED_SAMPLES / page).read_bytes()
    edited = original.replace(b"Yucheng Ding", b"Yucheng Ding-Li", 1)
    assert edited != original
    folders = [_folder(tmp_path, "n1"), _folder(tmp_path, "n2", changed={page: edited}), _folder(tmp_path, "n3")]
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        stats = [_night(con, folder, day) for folder, day in zip(folders, NIGHTS)]
        assert [s["pages_parsed"] for s in stats] == [5, 1, 0]  # the change parsed once; going back parses nothing
        assert _count(con, "SELECT count(*) FROM staging.parsed_profiles") == 6
        names = [warehouse.scalar(con, "SELECT name FROM staging.profiles WHERE partition_date = ? AND source = "
                                       "'scholarfeed' AND source_profile_id = (SELECT source_profile_id FROM "
                                       "staging.profiles WHERE name LIKE 'Yucheng%' LIMIT 1)", [d]) for d in NIGHTS]
        assert names == ["Yucheng Ding", "Yucheng Ding-Li", "Yucheng Ding"]
        # re-running the changed night with the old body: its parse is no night's any more, and goes
        _night(con, folders[0], NIGHTS[1])
        assert _count(con, "SELECT count(*) FROM staging.parsed_profiles") == 5
        assert _count(con, "SELECT count(*) FROM raw.page_bodies") == 5
        for day in NIGHTS:
            assert _count(con, "SELECT count(*) FROM staging.profiles WHERE partition_date = ?", [day]) == 5


def test_every_fetch_of_a_night_is_accounted_for_from_the_stored_parses(tmp_path):
    """Duplicate bodies, empty files and bad pages: the rejects and issues of every fetch, night after night,
    as the night that parsed them (fetch ids and reject ids are the night's own)."""
    extra = {"copy_of_000.txt": (BUNDLED_SAMPLES / "000_c5cc6f46b58abda9.txt").read_bytes(), "empty_a.txt": b"",
             "empty_b.txt": b"", "binary.html": b"\x00\x01\x02" * 50, "notes.txt": "Café au lait, nothing else".encode("cp1252")}
    folder = _folder(tmp_path, "captures", extra=extra)
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.ensure_schema(con)
        _night(con, folder, NIGHTS[0])
        _night(con, folder, NIGHTS[1])
        for table in STAGING:
            one, two = (_staged(con, table, d) for d in NIGHTS[:2])
            assert one.height == two.height > 0 or table == "staging.quality_issues", table
            night_keys = {"listing_id", "reject_id", "issue_id", "fetch_id", "partition_date", "captured_at", "detail"}
            same = [c for c in one.columns if c not in night_keys]
            assert one.select(same).sort(same).equals(two.select(same).sort(same)), table
        reasons = dict(con.execute("SELECT reason, count(*) FROM staging.rejects WHERE partition_date = ? GROUP BY 1",
                                   [NIGHTS[1]]).fetchall())
        assert reasons["duplicate_body"] == 1 and reasons["empty"] == 2
        fetches = _count(con, "SELECT count(*) FROM raw.page_captures WHERE partition_date = ?", [NIGHTS[1]])
        accounted = _count(con, """SELECT count(DISTINCT fetch_id) FROM (
            SELECT fetch_id FROM staging.profiles WHERE partition_date = $1
            UNION ALL SELECT fetch_id FROM staging.rejects WHERE partition_date = $1)""", [NIGHTS[1]])
        assert accounted == fetches == 10
        assert _count(con, "SELECT count(*) FROM staging.rejects") == _count(con, "SELECT count(DISTINCT reject_id) FROM staging.rejects")


def test_staging_tables_of_an_older_warehouse_are_moved_on_first_open(tmp_path):
    """The release before stored a copy of every unchanged page's rows per night in the tables
    staging.*: ensure_schema keeps one copy per parse, drops the tables and creates the views, which
    show every row the tables held."""
    extra = {"copy_of_000.txt": (BUNDLED_SAMPLES / "000_c5cc6f46b58abda9.txt").read_bytes(), "empty_a.txt": b"",
             "notes.txt": "Café au lait, nothing else".encode("cp1252")}
    folder = _folder(tmp_path, "captures", extra=extra)
    with warehouse.connect(tmp_path / "new.duckdb") as con:  # what the old tables held: the views' rows
        warehouse.ensure_schema(con)
        for day in NIGHTS:
            _night(con, folder, day)
        held = {t: _utc(warehouse.read_frame(con, f"SELECT * FROM {t} ORDER BY ALL")) for t in ("raw.page_captures",) + STAGING}
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        for schema in ("raw", "staging"):
            con.execute(f"CREATE SCHEMA {schema}")
        for table, frame in held.items():
            con.register("_rows", frame.to_arrow())
            con.execute(f"CREATE TABLE {table} AS SELECT * FROM _rows")
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        for table, frame in held.items():
            assert _utc(warehouse.read_frame(con, f"SELECT * FROM {table} ORDER BY ALL")).equals(frame), table
        assert _count(con, "SELECT count(*) FROM staging.parsed_listings") == 48
        assert warehouse.migrate_views(con) == []
        # a night on top reuses the moved parses
        assert _night(con, folder, date(2026, 11, 26))["pages_parsed"] == 0


def test_a_nights_rows_do_not_depend_on_which_nights_ran_before_it(tmp_path):
    """A parse reads its capture's date (a year-less "May 14" is the last May 14 on or before it), so
    a stored parse of a later capture is not an earlier night's: a backfill of 05-10 after 05-20
    parses the page again (was: it showed 05-20's parse, "May 14" as 2026-05-14, after its own
    capture, and failed the blocking gate `inferred_date_after_capture`); the same body's earlier
    parse then serves both nights, as when the nights run in order."""
    from pipelines import quality

    body = (BUNDLED_SAMPLES / "004_34c8893c0fa5ecd2.txt").read_bytes()
    assert b"68.9AIMay 14\n" in body  # the first item is dated without a year
    early, late = date(2026, 5, 10), date(2026, 5, 20)
    suite = quality.load_suites()["staging.listings"]

    def run(order: list[date], where: str) -> dict:
        with warehouse.connect(tmp_path / f"{where}.duckdb") as con:
            warehouse.ensure_schema(con)
            for day in order:
                landing.land_partition(con, [_page(day, body)], day)
                landing.stage_partition(con, day)
            gates = quality.run_suite(con, suite, partition_date=early, severities=["block"])["block"]
            assert all(o.success for o in gates.outcomes), [o.rule for o in gates.outcomes if not o.success]
            assert _count(con, "SELECT count(*) FROM staging.parsed_profiles") == 1  # stored once
            return {day: _staged(con, "staging.listings", day).drop("listing_id", "partition_date")
                    for day in (early, late)}

    in_order, backfilled = run([early, late], "in_order"), run([late, early], "backfilled")
    first_item = in_order[early].filter(pl.col("position") == 1)
    assert first_item["pub_date"].to_list() == [date(2025, 5, 14)]
    for day in (early, late):
        assert backfilled[day].equals(in_order[day]), day

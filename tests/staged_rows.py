"""Rows of the per-night staging views, written the way the pipeline stores them (for tests that set up
a warehouse by hand): a staging.night_fetches row for the night's fetch, and the parse's row in
staging.parsed_profiles / staging.parsed_listings (sql/schema/02_staging.sql)."""

from __future__ import annotations

from datetime import date, datetime, time, timezone

from pipelines.staging import build as landing

_NIGHT = ("fetch_id", "partition_date", "captured_at", "listing_id")


def _insert(con, table: str, row: dict) -> None:
    columns = list(row)
    con.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                [row[c] for c in columns])


def _night_fetch(con, row: dict) -> str:
    """The night's fetch of the row's capture (one per night and capture), and the parse it shows."""
    day: date = row["partition_date"]
    parse = landing.short_hash("test-parse", row["capture_id"], day)
    if not con.execute("SELECT 1 FROM staging.night_fetches WHERE parse_id = ? AND partition_date = ?",
                       [parse, day]).fetchall():
        _insert(con, "staging.night_fetches", {
            "partition_date": day, "fetch_id": row.get("fetch_id") or row["capture_id"][:16],
            "capture_id": row["capture_id"], "source": row["source"], "url": row.get("url"),
            "captured_at": row.get("captured_at") or datetime.combine(day, time(6), timezone.utc),
            "role": "parsed", "parse_id": parse, "parser_version": row.get("parser_version", "t")})
    return parse


def clear_night(con, day: date) -> None:
    """Remove a night's rows (its fetches, and the parses only it shows), as a re-run of staging does."""
    con.execute("DELETE FROM staging.night_fetches WHERE partition_date = ?", [day])
    for table in ("staging.parsed_profiles", "staging.parsed_listings"):
        con.execute(f"DELETE FROM {table} t WHERE NOT EXISTS "
                    "(SELECT 1 FROM staging.night_fetches n WHERE n.parse_id = t.parse_id)")


def profile(con, **row) -> None:
    """A staging.profiles row (its columns by name; the NOT NULL ones without a default are required)."""
    row = {"listed_items": 0, "truncated": False, "parser_version": "t", **row}
    parse = _night_fetch(con, row)
    _insert(con, "staging.parsed_profiles", {"parse_id": parse, **{k: v for k, v in row.items() if k not in _NIGHT}})


def listing(con, **row) -> str:
    """A staging.listings row; returns its listing_id (the view computes it from the night, capture, position)."""
    row = {"byline_authors": [], "byline_truncated": False, "code_urls": [], **row}
    parse = _night_fetch(con, row)
    _insert(con, "staging.parsed_listings", {"parse_id": parse, **{k: v for k, v in row.items() if k not in _NIGHT}})
    return landing.short_hash(row["partition_date"], row["capture_id"], row["position"])


def write_night(con, day: date, raw, frames: dict) -> None:
    """A night written the way the pipeline writes it, from frames: ``raw`` (landing.raw_rows) into
    raw.fetches / raw.page_bodies, and ``frames`` (the staging frames of landing.stage_captures, by
    table name: ``{"profiles": ..., "listings": ...}``) as the night's parses, in one transaction."""
    from pipelines import warehouse

    with warehouse.transaction(con):
        con.execute("DELETE FROM raw.fetches WHERE partition_date = ?", [day])
        landing.store_raw(con, raw)
        landing.account_for_every_fetch(con, day)
        for table, frame in frames.items():
            landing.insert_parsed(con, table, frame)

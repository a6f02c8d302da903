"""From captures to rows: the pure logic behind raw.page_captures and the staging tables.

The assets only read, call these, and write. No Dagster imports. What needs no warehouse — the raw
row of a fetch, the parse of a page into staging rows, their ids and schemas — is in ``rows.py``
(its names are importable from here too).

**Fetches and bodies.** Every capture a source yields is one *fetch* — a url on a partition date,
or one file of a captures folder — with its own ``fetch_id`` and its own row in
``raw.page_captures``; ``capture_id`` (sha256 of the body) names the bytes, which fetches may
share (every failed fetch with an empty body has the same one). Staging parses each body once,
for its *parsed fetch* (the first by url, then file name), and then accounts for every fetch on
its own (``write_staging``): a fetch the source rejected gets its own reject row; another fetch
of a body already parsed gets the same page-level rejects, or a ``duplicate_body`` reject when the
body was staged as a profile. The gate ``capture_unaccounted`` (``expectations/staging.rejects.json``)
holds every fetch to this.

**What lands doubtful or repaired** is an issue row in ``staging.quality_issues``: the parser's
(stage ``parse``, stored with the page's parse) and the source's (stage ``fetch``, from
``raw.page_captures.capture_issues``, kept with the night's fetch row).

**Each capture stored once.** ``raw.page_captures`` and the four staging tables are views
(``sql/schema/01_raw.sql``, ``02_staging.sql``): a body is stored once (``raw.page_bodies``), a fetch
is a small ``raw.fetches`` row (``store_raw``); a page is parsed once per url, body and parser version
(a *parse*, ``parse_id``: ``staging.parsed_*``, ``insert_parsed``), and every night each fetch gets a
``staging.night_fetches`` row saying which parse it shows (``account_for_every_fetch``). An unchanged
page costs a row a night in each layer, not a copy of its body and listings.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Iterable

import polars as pl

from pipelines import warehouse
from pipelines.ingest.sources.base import Capture
from pipelines.staging import parsing
from pipelines.staging.rows import (  # noqa: F401 - re-exported: this module is staging's import path
    ISSUE_SCHEMA,
    LISTING_SCHEMA,
    PROFILE_SCHEMA,
    RAW_SCHEMA,
    REJECT_SCHEMA,
    fetch_id,
    listing_key,
    parse_batches,
    parse_workers,
    raw_rows,
    short_hash,
    stage_captures,
)
from pipelines.timing import StageTimer

BATCH_PAGES = 2000  # pages held in memory at once while landing and parsing
SHARD_PAGES = 20000  # pages per parse shard (one Dagster step each); SCHOLARHOUSE_PARSE_SHARD_PAGES

# The fetch of a body that staging parses, among the partition's fetches of that body: one that says
# which page it is (a site URL, from the crawl or a sidecar) before a bare file (its file:// URI), so
# a copy of a captured page without a sidecar never takes the page's place; then by url and file.
_PARSED_FETCH_ORDER = "starts_with(url, 'file:'), url, coalesce(source_file, '')"


# ---- incremental staging, each parse stored once -----------------------------------------------------
# The staging tables analysts query are views (sql/schema/02_staging.sql) over each parse stored once —
# a body parsed for its url by a parser version, ``parse_id`` — and a staging.night_fetches row per fetch
# of a night saying which parse it shows. An unchanged page (same url, same body, same parser version)
# was parsed on an earlier night: tonight it gets its night_fetches row, nothing else. The ids the
# views compute (listing_id, reject_id, issue_id) are computed in SQL exactly as short_hash() in Python.

def _sql_hash(*parts: str) -> str:
    joined = ", ".join(f"coalesce(CAST({p} AS VARCHAR), '')" for p in parts)
    return f"substr(sha256(concat_ws(chr(31), {joined})), 1, 16)"


# One row per capture_id of the partition: its parsed fetch (the first by url, then file name),
# provided that the same url+body was parsed with this parser for another night (its parse is
# stored: staging.night_fetches of another night points at it) captured on the same day or earlier.
#
# A parse reads the capture's date (a year-less "May 14" is the last May 14 on or before it; "3 days
# ago"; an item dated after the capture), so a parse of a later capture is not tonight's: a backfill
# of an earlier night parses the page again, and that parse replaces the stored one
# (account_for_every_fetch), since the same body seen earlier dates it at least as well. So the
# stored parse of a body is always that of its earliest night staged, whatever order the nights ran in.
_CAPTURE_DAY = "CAST(timezone('UTC', {}) AS DATE)"  # the parser's captured_at.date(), captured_at in UTC
_REUSABLE = f"""
    CREATE OR REPLACE TEMP TABLE reusable_captures AS
    WITH firsts AS (
        SELECT capture_id, fetch_id, url, captured_at, {_sql_hash("capture_id", "url", "$version")} AS parse_id
        FROM raw.fetches
        WHERE partition_date = $day AND fetch_reject IS NULL
        QUALIFY row_number() OVER (PARTITION BY capture_id ORDER BY {_PARSED_FETCH_ORDER}) = 1
    )
    SELECT f.* FROM firsts f
    WHERE EXISTS (SELECT 1 FROM staging.night_fetches n
                  WHERE n.parse_id = f.parse_id AND n.role = 'parsed' AND n.partition_date <> $day
                    AND {_CAPTURE_DAY.format("n.captured_at")} <= {_CAPTURE_DAY.format("f.captured_at")})
"""


def find_reusable_captures(con, day: date) -> int:
    """Note the partition's captures whose parse is stored already; returns how many."""
    con.execute(_REUSABLE, {"version": parsing.PARSER_VERSION, "day": day})
    return con.execute("SELECT count(*) FROM reusable_captures").fetchall()[0][0]


# Every fetch of the nights in the temp table staged_nights (partition_date, parser_version), from
# raw.fetches: the body's parsed fetch (a site URL before a bare file, then by url and file name)
# shows its parse; another fetch of the same body is a 'copy' of it (the views give it the parse's
# page-level rejects, or a duplicate_body reject); a fetch the source rejected is 'fetch_reject'.
NIGHT_FETCHES = f"""
    INSERT INTO staging.night_fetches BY NAME
    WITH fetches AS (
        SELECT f.*, s.parser_version FROM raw.fetches f JOIN staged_nights s USING (partition_date)
    ),
    parsed AS (
        SELECT partition_date, capture_id, fetch_id, url, source_file, parser_version FROM fetches
        WHERE fetch_reject IS NULL
        QUALIFY row_number() OVER (PARTITION BY partition_date, capture_id ORDER BY {_PARSED_FETCH_ORDER}) = 1
    )
    SELECT f.partition_date, f.fetch_id, f.capture_id, f.source, f.url, f.captured_at,
           CASE WHEN f.fetch_reject IS NOT NULL THEN 'fetch_reject'
                WHEN f.fetch_id = p.fetch_id THEN 'parsed' ELSE 'copy' END AS role,
           CASE WHEN f.fetch_reject IS NULL THEN {_sql_hash("p.capture_id", "p.url", "p.parser_version")} END AS parse_id,
           CASE WHEN f.fetch_reject IS NULL AND f.fetch_id <> p.fetch_id THEN coalesce(p.source_file, p.url) END AS same_as,
           f.fetch_reject, f.fetch_reject_detail, f.capture_issues, f.parser_version
    FROM fetches f
    LEFT JOIN parsed p ON p.partition_date = f.partition_date AND p.capture_id = f.capture_id AND f.fetch_reject IS NULL
"""

# The parsed tables, each with the contract table its frames come in the shape of, and the night's
# columns that are not the parse's.
PARSED_TABLES = {
    "profiles": ("staging.parsed_profiles", ("fetch_id", "partition_date", "captured_at")),
    "listings": ("staging.parsed_listings", ("listing_id", "partition_date")),
    "rejects": ("staging.parsed_rejects", ("reject_id", "fetch_id", "partition_date", "url", "stage")),
    "quality_issues": ("staging.parsed_issues", ("issue_id", "fetch_id", "partition_date", "url", "stage")),
}


def account_for_every_fetch(con, day: date) -> None:
    """Replace the night's staging.night_fetches rows (every fetch of raw, with the parse it shows),
    and drop the parses no night shows any more (a re-run's). Call inside the partition's
    transaction, before the night's new parses are inserted."""
    find_reusable_captures(con, day)  # other nights' rows only: the same before and after the delete below
    con.execute("DELETE FROM staging.night_fetches WHERE partition_date = ?", [day])
    for table, _ in PARSED_TABLES.values():  # before tonight's rows: a parse only a re-run showed is parsed again
        con.execute(f"""DELETE FROM {table} t WHERE NOT EXISTS (
            SELECT 1 FROM staging.night_fetches n WHERE n.parse_id = t.parse_id AND n.role = 'parsed')""")
    con.execute("CREATE OR REPLACE TEMP TABLE staged_nights AS SELECT CAST($day AS DATE) AS partition_date, "
                "CAST($version AS VARCHAR) AS parser_version", {"day": day, "version": parsing.PARSER_VERSION})
    con.execute(NIGHT_FETCHES)
    for table, _ in PARSED_TABLES.values():  # a stored parse of a later capture: tonight's replaces it (see _REUSABLE)
        con.execute(f"""DELETE FROM {table} t WHERE t.parse_id IN (
            SELECT parse_id FROM staging.night_fetches n WHERE n.partition_date = $day AND n.role = 'parsed'
              AND n.capture_id NOT IN (SELECT capture_id FROM reusable_captures))""", {"day": day})
    con.execute("""CREATE OR REPLACE TEMP TABLE tonight_parses AS
        SELECT capture_id, parse_id FROM staging.night_fetches n WHERE partition_date = $day AND role = 'parsed'
          AND NOT EXISTS (SELECT 1 FROM staging.parsed_profiles p WHERE p.parse_id = n.parse_id)
          AND NOT EXISTS (SELECT 1 FROM staging.parsed_rejects r WHERE r.parse_id = n.parse_id)""", {"day": day})


def insert_parsed(con, table: str, frame: pl.DataFrame) -> int:
    """Store a night's parsed rows (``frame``: rows of the contract table ``staging.<table>``, from
    stage_captures) once, under the parse of their body (tonight_parses, by capture_id). Returns rows stored."""
    if frame.height == 0:
        return 0
    target, night_columns = PARSED_TABLES[table]
    con.register("_parsed", frame.drop(night_columns).to_arrow())
    try:
        return con.execute(f"INSERT INTO {target} BY NAME SELECT t.parse_id, f.* FROM _parsed f "
                           "JOIN tonight_parses t USING (capture_id)").fetchall()[0][0]
    finally:
        try:
            con.unregister("_parsed")
        except Exception:  # noqa: BLE001 - an aborted transaction refuses even this; the insert's error matters
            pass


# ---- partition-level steps (what the assets and `make bench` run) -----------------------------------

def _batches(items: Iterable, size: int):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _first_per_fetch(captures: Iterable[Capture]):
    """The same fetch (url, and file for a folder) yielded twice in one partition is one fetch."""
    seen: set[tuple[str, str | None]] = set()
    for capture in captures:
        key = (capture.url, capture.source_file)
        if key not in seen:
            seen.add(key)
            yield capture


# raw.page_captures is a view (sql/schema/01_raw.sql): each distinct body is stored once in
# raw.page_bodies, each fetch is a row of raw.fetches pointing at its body by (capture_id, encoding).
_BODY_COLUMNS = ("body", "body_bytes", "byte_size")
_BODY_KEY = ("capture_id", "encoding")

_NEW_BODIES = """
    INSERT INTO raw.page_bodies BY NAME
    SELECT n.* FROM _new_bodies AS n
    WHERE NOT EXISTS (SELECT 1 FROM raw.page_bodies AS b
                      WHERE b.capture_id = n.capture_id AND b.encoding IS NOT DISTINCT FROM n.encoding)
"""

_ORPHAN_BODIES = """
    DELETE FROM raw.page_bodies AS b
    WHERE NOT EXISTS (SELECT 1 FROM raw.fetches AS f
                      WHERE f.capture_id = b.capture_id AND f.encoding IS NOT DISTINCT FROM b.encoding)
"""


def store_raw(con, frame: pl.DataFrame) -> None:
    """Write raw rows (``raw_rows``, the shape of raw.page_captures): a raw.fetches row per fetch, and
    each body not stored yet once into raw.page_bodies. Call inside the partition's transaction."""
    warehouse.insert_frame(con, "raw.fetches", frame.drop(_BODY_COLUMNS))
    bodies = frame.select(*_BODY_KEY, *_BODY_COLUMNS).unique(_BODY_KEY, keep="first", maintain_order=True)
    if bodies.height == 0:
        return
    con.register("_new_bodies", bodies.to_arrow())
    try:
        con.execute(_NEW_BODIES)
    finally:
        try:
            con.unregister("_new_bodies")
        except Exception:  # noqa: BLE001 - an aborted transaction refuses even this; the insert's error matters
            pass


def land_partition(con, captures: Iterable[Capture], day: date, *, timer: StageTimer | None = None,
                   batch_pages: int = BATCH_PAGES) -> dict:
    """Replace the partition's raw.page_captures rows with ``captures``, in one transaction,
    holding at most ``batch_pages`` bodies in memory."""
    timer = timer or StageTimer()
    stats = {"pages": 0, "bytes": 0, "by_source": {}, "fetch_rejects": 0, "not_modified": 0,
             "fetch_rejects_by_reason": {}, "capture_issues": 0}
    loaded_at = datetime.now(timezone.utc)
    with warehouse.transaction(con):
        replaced = warehouse.scalar(con, "SELECT count(*) FROM raw.fetches WHERE partition_date = ?", [day])
        con.execute("DELETE FROM raw.fetches WHERE partition_date = ?", [day])
        for batch in _batches(_first_per_fetch(captures), batch_pages):
            with timer.stage("read_and_decode", rows=len(batch)):
                frame = raw_rows(batch, day, loaded_at)
            with timer.stage("land", rows=frame.height):
                store_raw(con, frame)
            stats["pages"] += frame.height
            stats["bytes"] += int(frame["byte_size"].sum() or 0)
            stats["fetch_rejects"] += int(frame["fetch_reject"].is_not_null().sum())
            stats["not_modified"] += int(frame["not_modified"].sum() or 0)
            stats["capture_issues"] += int(frame["capture_issues"].list.len().sum() or 0)
            for source, n in frame.group_by("source").len().iter_rows():
                stats["by_source"][source] = stats["by_source"].get(source, 0) + n
            for reason, n in frame.filter(pl.col("fetch_reject").is_not_null()).group_by("fetch_reject").len().iter_rows():
                stats["fetch_rejects_by_reason"][reason] = stats["fetch_rejects_by_reason"].get(reason, 0) + n
        if replaced:  # a re-run: bodies only the replaced fetches had are no one's now
            con.execute(_ORPHAN_BODIES)
    return stats


def stage_partition(con, day: date, *, timer: StageTimer | None = None, batch_pages: int = BATCH_PAGES,
                    shard_pages: int | None = None, work_dir: Path | None = None,
                    workers: int | None = None) -> dict:
    """Replace the partition's staging rows: unchanged pages show their stored parse, the others are
    parsed and stored, all written in one transaction. The three steps the staging asset runs as separate Dagster steps
    (:func:`plan_parse`, :func:`parse_shard` per shard, :func:`write_staging`), in one process."""
    timer = timer or StageTimer()
    with tempfile.TemporaryDirectory(prefix="parse-", dir=work_dir) as tmp:
        with timer.stage("plan"):
            plan = plan_parse(con, day, Path(tmp), shard_pages=shard_pages)
        parsed = []
        for shard in plan["shards"]:
            with timer.stage("parse", rows=shard["pages"]):
                parsed.append(parse_shard(shard, batch_pages=batch_pages,
                                          workers=parse_workers(shard["pages"], batch_pages, workers)))
        with timer.stage("land"):
            written = write_staging(con, day, parsed)
    return {"pages_parsed": plan["pages_to_parse"], "pages_unchanged_reused": plan["pages_unchanged_reused"], **written}


# ---- sharded parsing: plan (reads the warehouse) -> parse shards (no warehouse) -> write -------------
# The parse is the CPU-heavy part of staging and needs no database: the plan exports the pages to
# parse as Parquet shards, any number of workers parse them (in parallel on a multiprocess or
# distributed executor), and one writer loads the results. Only plan and write hold the warehouse.

# The staging tables (without schema prefix), in the order stage_captures returns their rows.
_SCHEMAS = {"profiles": PROFILE_SCHEMA, "listings": LISTING_SCHEMA, "rejects": REJECT_SCHEMA,
            "quality_issues": ISSUE_SCHEMA}

# The partition's pages that need parsing: not rejected by their source, not reusable from an
# earlier night (run find_reusable_captures first), one fetch per body (its parsed fetch).
_PAGES_TO_PARSE = f"""
    SELECT capture_id, fetch_id, url FROM raw.fetches
    WHERE partition_date = $day AND fetch_reject IS NULL
      AND capture_id NOT IN (SELECT capture_id FROM reusable_captures)
    QUALIFY row_number() OVER (PARTITION BY capture_id ORDER BY {_PARSED_FETCH_ORDER}) = 1
"""


def shard_size(configured: int | None = None) -> int:
    """Pages per parse shard: ``configured`` (the setting SCHOLARHOUSE_PARSE_SHARD_PAGES), else SHARD_PAGES."""
    if configured:
        return max(1, int(configured))
    return SHARD_PAGES


def plan_parse(con, day: date, work_dir: Path, *, shard_pages: int | None = None) -> dict:
    """Export the partition's pages that need parsing (not reusable from an earlier night; one url
    per body, the first in url order) to Parquet shards in ``work_dir``.

    Returns ``{"shards": [{"day", "path", "pages"}...], "pages_to_parse", "pages_unchanged_reused"}``.
    """
    size = shard_size(shard_pages)
    reused = find_reusable_captures(con, day)
    # Numbered after the duplicates are gone (window functions run before QUALIFY filters).
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE pages_to_parse AS
        SELECT fetch_id, row_number() OVER (ORDER BY url, fetch_id) AS n FROM ({_PAGES_TO_PARSE})
    """, {"day": day})
    total = warehouse.scalar(con, "SELECT count(*) FROM pages_to_parse")
    work_dir.mkdir(parents=True, exist_ok=True)
    shards = []
    for k, start in enumerate(range(0, total, size)):
        path = work_dir / f"{day.isoformat()}-shard-{k:05d}.parquet"
        # Values are written into the statement: COPY takes no prepared parameters.
        con.execute(f"""
            COPY (
                SELECT r.* FROM raw.page_captures r JOIN pages_to_parse p USING (fetch_id)
                WHERE r.partition_date = DATE '{day.isoformat()}' AND p.n > {int(start)} AND p.n <= {int(start + size)}
                ORDER BY p.n
            ) TO {warehouse.sql_path(path)} (FORMAT parquet)
        """)
        shards.append({"day": day.isoformat(), "path": str(path), "pages": min(size, total - start)})
    return {"shards": shards, "pages_to_parse": total, "pages_unchanged_reused": reused}


def parse_shard(shard: dict, *, batch_pages: int = BATCH_PAGES, workers: int | None = None) -> dict:
    """Parse one shard's pages (batches of ``batch_pages``; a process pool when the shard holds more
    than one batch) and write its profiles/listings/rejects next to it as Parquet. No warehouse.
    ``workers``: the parse processes (by default :func:`parse_workers`' choice)."""
    source = Path(shard["path"])
    pages = shard["pages"]
    workers = parse_workers(pages, batch_pages) if workers is None else workers

    def batches():
        lazy = pl.scan_parquet(source)
        for start in range(0, pages, batch_pages):
            yield lazy.slice(start, batch_pages).collect()

    parts: dict[str, list[pl.DataFrame]] = {table: [] for table in _SCHEMAS}
    for frames in parse_batches(batches(), workers=workers):
        for table, frame in zip(_SCHEMAS, frames):
            parts[table].append(frame)
    out = {"day": shard["day"], "pages": pages}
    for table, frames in parts.items():
        frame = pl.concat(frames) if frames else pl.DataFrame(schema=_SCHEMAS[table])
        path = source.with_name(f"{source.stem}.{table}.parquet")
        frame.write_parquet(path)
        out[table] = str(path)
        out[f"parsed_{table}"] = frame.height
    return out


def write_staging(con, day: date, parsed: list[dict]) -> dict:
    """Replace the partition's staging rows — a staging.night_fetches row for every fetch, pointing at
    the parse it shows (``account_for_every_fetch``) — and store the parsed shards' new parses, in one
    transaction. An unchanged page's parse is stored already: nothing of it is written again.

    The raw pages are checked again here: a page landed after the plan (a re-run of the raw step
    in between) or whose shard output is gone is parsed now, and parsed rows of a page no longer
    in raw are dropped, so the staging rows always match the raw rows they are written against.
    Shards are loaded one at a time; page bodies are read only for pages parsed here."""
    find_reusable_captures(con, day)
    con.execute(f"CREATE OR REPLACE TEMP TABLE expected_captures AS {_PAGES_TO_PARSE}", {"day": day})
    wanted = set(warehouse.read_frame(con, "SELECT capture_id FROM expected_captures")["capture_id"].to_list())
    shards = [p for p in parsed if p.get("day") == day.isoformat() and all(Path(p[t]).exists() for t in _SCHEMAS)]
    counts = {t: 0 for t in _SCHEMAS}
    covered: set[str] = set()
    with warehouse.transaction(con):
        account_for_every_fetch(con, day)
        for shard in shards:
            frames = {t: pl.read_parquet(shard[t]).filter(pl.col("capture_id").is_in(list(wanted))) for t in _SCHEMAS}
            _insert_staging(con, frames, counts, covered)
        missing = sorted(wanted - covered)
        if missing:
            late = warehouse.read_frame(con, """
                SELECT r.* FROM raw.page_captures r JOIN expected_captures e USING (fetch_id)
                WHERE r.partition_date = ? AND list_contains(?, r.capture_id) ORDER BY r.url, r.fetch_id
            """, [day, missing])
            _insert_staging(con, dict(zip(_SCHEMAS, stage_captures(late))), counts, covered)
    return {f"parsed_{t}": n for t, n in counts.items()} | {"pages_parsed_late": len(missing)}


def _insert_staging(con, frames: dict[str, pl.DataFrame], counts: dict[str, int], covered: set[str]) -> None:
    for table, frame in frames.items():
        insert_parsed(con, table, frame)
        counts[table] += frame.height
        covered.update(frame["capture_id"].to_list())


def sweep_work_dirs(root: Path, *, older_than_s: float = 2 * 86400) -> int:
    """Remove parse work folders (shards of failed or abandoned runs) older than two days."""
    if not root.is_dir():
        return 0
    removed = 0
    cutoff = time.time() - older_than_s
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed

"""From captures to rows: the pure logic behind raw.page_captures and the staging tables.

The assets only read, call these, and write. No Dagster imports.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Iterable

import polars as pl

from pipelines import parsing
from pipelines.parsing.capture import profile_id_from_url
from pipelines import warehouse
from pipelines.profiling import StageTimer
from pipelines.sources.base import Capture
from pipelines.textnorm import match_key

BATCH_PAGES = 2000  # pages held in memory at once while landing and parsing
SHARD_PAGES = 20000  # pages per parse shard (one Dagster step each); SCHOLARHOUSE_PARSE_SHARD_PAGES

RAW_SCHEMA = {
    "capture_id": pl.String, "source": pl.String, "url": pl.String, "source_profile_id": pl.String,
    "captured_at": pl.Datetime("us", "UTC"), "partition_date": pl.Date, "content_type": pl.String,
    "http_status": pl.Int32, "body": pl.String, "body_bytes": pl.Binary, "encoding": pl.String,
    "byte_size": pl.Int64, "origin": pl.String, "source_file": pl.String, "etag": pl.String,
    "last_modified": pl.String, "fetch_ms": pl.Float64, "not_modified": pl.Boolean,
    "fetch_reject": pl.String, "loaded_at": pl.Datetime("us", "UTC"),
}

PROFILE_SCHEMA = {
    "capture_id": pl.String, "partition_date": pl.Date, "source": pl.String, "source_profile_id": pl.String,
    "url": pl.String, "captured_at": pl.Datetime("us", "UTC"), "name": pl.String, "bio": pl.String,
    "affiliation": pl.String, "trust_score": pl.Int32, "trust_tier": pl.String, "verification_level": pl.String,
    "claimed": pl.Boolean, "declared_works": pl.Int32, "followers": pl.Int32, "topics": pl.Int32,
    "close_collaborators": pl.Int32, "primary_category": pl.String, "primary_category_raw": pl.String,
    "h_index": pl.Int32, "declared_papers": pl.Int32, "citations": pl.Int32, "novelty_pct": pl.Float64,
    "ai_score": pl.Float64, "declared_items": pl.Int32, "listed_items": pl.Int32, "truncated": pl.Boolean,
    "parser_version": pl.String,
}

LISTING_SCHEMA = {
    "listing_id": pl.String, "listing_key": pl.String, "capture_id": pl.String, "partition_date": pl.Date,
    "source": pl.String, "source_profile_id": pl.String, "position": pl.Int32, "title": pl.String,
    "title_normalized": pl.String, "abstract": pl.String, "abstract_normalized": pl.String,
    "pub_type": pl.String, "venue": pl.String, "year": pl.Int32, "pub_date": pl.Date,
    "date_precision": pl.String, "date_raw": pl.String, "year_inferred": pl.Boolean, "category": pl.String,
    "category_raw": pl.String, "has_code": pl.Boolean, "listing_score": pl.Float64,
    "byline_authors": pl.List(pl.String), "byline_truncated": pl.Boolean, "arxiv_id": pl.String,
    "arxiv_version": pl.Int32, "paper_url": pl.String, "code_urls": pl.List(pl.String),
}

REJECT_SCHEMA = {
    "reject_id": pl.String, "capture_id": pl.String, "partition_date": pl.Date, "source": pl.String,
    "url": pl.String, "reason": pl.String, "detail": pl.String, "position": pl.Int32,
    "parser_version": pl.String,
}


def short_hash(*parts: object, length: int = 16) -> str:
    return hashlib.sha256("\x1f".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:length]


def listing_key(source: str, source_profile_id: str, title: str, year: int | None) -> str:
    """Identity of 'this paper on this profile' that survives from night to night."""
    return short_hash(source, source_profile_id, match_key(title), year)


def raw_rows(captures: Iterable[Capture], partition_date: date, loaded_at: datetime | None = None) -> pl.DataFrame:
    """One raw.page_captures row per capture. Identity (site, profile id from the URL) is cheap here;
    the full parse happens in staging."""
    loaded_at = loaded_at or datetime.now(timezone.utc)
    rows = []
    seen_urls: set[str] = set()
    for cap in captures:
        if cap.url in seen_urls:  # the same page twice in one partition: keep the first
            continue
        seen_urls.add(cap.url)
        text, encoding = parsing.decode_body(cap.body)
        source = parsing.detect_site(text or "", cap.url) if text is not None else "unknown"
        rows.append({
            "capture_id": cap.capture_id, "source": source, "url": cap.url,
            "source_profile_id": profile_id_from_url(source, cap.url),
            "captured_at": cap.captured_at, "partition_date": partition_date,
            "content_type": cap.content_type or parsing.sniff_content_type(text or ""),
            "http_status": cap.http_status, "body": text,
            "body_bytes": None if text is not None else cap.body,
            "encoding": encoding, "byte_size": len(cap.body), "origin": cap.origin,
            "source_file": cap.source_file, "etag": cap.headers.get("etag"),
            "last_modified": cap.headers.get("last-modified"), "fetch_ms": cap.fetch_ms,
            "not_modified": cap.not_modified, "fetch_reject": cap.reject_reason,
            "fetch_reject_detail": cap.reject_detail, "loaded_at": loaded_at,
        })
    frame = pl.DataFrame(rows, schema={**RAW_SCHEMA, "fetch_reject_detail": pl.String})
    return frame


def stage_captures(raw: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Parse the raw rows of one partition into (profiles, listings, rejects).

    Every capture ends up as a profile, a reject, or both (a truncated page keeps its complete
    items and rejects the rest). The same body seen at two urls in one partition is parsed once.
    """
    profiles, listings, rejects = [], [], []
    done: set[str] = set()
    for row in raw.iter_rows(named=True):
        capture_id, partition_date = row["capture_id"], row["partition_date"]
        if capture_id in done:
            continue
        done.add(capture_id)
        base_reject = {"capture_id": capture_id, "partition_date": partition_date, "url": row["url"],
                       "parser_version": parsing.PARSER_VERSION}
        if row["fetch_reject"]:
            rejects.append({**base_reject, "source": row["source"], "reason": row["fetch_reject"],
                            "detail": row.get("fetch_reject_detail") or "rejected while fetching", "position": None})
            continue
        body = row["body"].encode("utf-8") if row["body"] is not None else (row["body_bytes"] or b"")
        result = parsing.parse_capture(body, url=row["url"], captured_at=row["captured_at"], content_type=row["content_type"])
        for rej in result.rejects:
            rejects.append({**base_reject, "source": result.source, **rej})
        if result.profile is None:
            continue
        profile_id = result.source_profile_id or row["source_profile_id"] or f"capture:{capture_id[:16]}"
        profiles.append({
            **result.profile, "capture_id": capture_id, "partition_date": partition_date,
            "source": result.source, "source_profile_id": profile_id, "url": row["url"],
            "captured_at": row["captured_at"], "parser_version": parsing.PARSER_VERSION,
        })
        for item in result.listings:
            listings.append({
                **item, "capture_id": capture_id, "partition_date": partition_date, "source": result.source,
                "source_profile_id": profile_id,
                "listing_id": short_hash(partition_date, capture_id, item["position"]),
                "listing_key": listing_key(result.source, profile_id, item["title"], item.get("year")),
            })
    for rej in rejects:
        rej["reject_id"] = short_hash(rej["partition_date"], rej["capture_id"], rej["reason"], rej.get("position"))
    return (
        _frame(profiles, PROFILE_SCHEMA),
        _frame(listings, LISTING_SCHEMA),
        _frame(rejects, REJECT_SCHEMA),
    )


# ---- incremental staging --------------------------------------------------------------------------
# An unchanged page (same url, same body, same parser version) was already parsed on an earlier
# night: its rows are copied with the new partition's keys instead of being parsed again.
# The ids are recomputed in SQL exactly as short_hash() computes them in Python.

def _sql_hash(*parts: str) -> str:
    joined = ", ".join(f"coalesce(CAST({p} AS VARCHAR), '')" for p in parts)
    return f"substr(sha256(concat_ws(chr(31), {joined})), 1, 16)"


# One row per capture_id of the partition: the first url (stage_captures parses a body once, for
# the first url in url order), provided that same url+body was parsed before with this parser.
_REUSABLE = """
    CREATE OR REPLACE TEMP TABLE reusable_captures AS
    WITH firsts AS (
        SELECT capture_id, url, captured_at FROM raw.page_captures
        WHERE partition_date = $day AND fetch_reject IS NULL
        QUALIFY row_number() OVER (PARTITION BY capture_id ORDER BY url) = 1
    ),
    parsed AS (
        SELECT capture_id, url, partition_date FROM staging.profiles WHERE parser_version = $version
        UNION
        SELECT capture_id, url, partition_date FROM staging.rejects WHERE parser_version = $version
    )
    SELECT f.capture_id, f.url, f.captured_at, max(p.partition_date) AS parsed_on
    FROM firsts f JOIN parsed p ON p.capture_id = f.capture_id AND p.url = f.url AND p.partition_date <> $day
    GROUP BY ALL
"""


def find_reusable_captures(con, day: date) -> int:
    """Note the partition's captures whose rows can be copied from an earlier parse; returns how many."""
    con.execute(_REUSABLE, {"version": parsing.PARSER_VERSION, "day": day})
    return con.execute("SELECT count(*) FROM reusable_captures").fetchall()[0][0]


def copy_reused_rows(con, day: date) -> None:
    """Insert copies of the rows of ``reusable_captures`` under the new partition's keys.
    Call inside the partition's transaction, after find_reusable_captures."""
    params = {"day": day}
    con.execute("""
        INSERT INTO staging.profiles BY NAME
        SELECT s.* EXCLUDE (partition_date, captured_at), $day::DATE AS partition_date, u.captured_at
        FROM staging.profiles s JOIN reusable_captures u
          ON s.capture_id = u.capture_id AND s.url = u.url AND s.partition_date = u.parsed_on
    """, params)
    con.execute(f"""
        INSERT INTO staging.listings BY NAME
        SELECT s.* EXCLUDE (partition_date, listing_id), $day::DATE AS partition_date,
               {_sql_hash("$day::DATE", "s.capture_id", "s.position")} AS listing_id
        FROM staging.listings s JOIN reusable_captures u
          ON s.capture_id = u.capture_id AND s.partition_date = u.parsed_on
    """, params)
    con.execute(f"""
        INSERT INTO staging.rejects BY NAME
        SELECT s.* EXCLUDE (partition_date, reject_id), $day::DATE AS partition_date,
               {_sql_hash("$day::DATE", "s.capture_id", "s.reason", "s.position")} AS reject_id
        FROM staging.rejects s JOIN reusable_captures u
          ON s.capture_id = u.capture_id AND s.url = u.url AND s.partition_date = u.parsed_on
    """, params)


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


def _first_per_url(captures: Iterable[Capture]):
    """The same page twice in one partition: keep the first."""
    seen: set[str] = set()
    for capture in captures:
        if capture.url not in seen:
            seen.add(capture.url)
            yield capture


def land_partition(con, captures: Iterable[Capture], day: date, *, timer: StageTimer | None = None,
                   batch_pages: int = BATCH_PAGES) -> dict:
    """Replace the partition's raw.page_captures rows with ``captures``, in one transaction,
    holding at most ``batch_pages`` bodies in memory."""
    timer = timer or StageTimer()
    stats = {"pages": 0, "bytes": 0, "by_source": {}, "fetch_rejects": 0, "not_modified": 0}
    loaded_at = datetime.now(timezone.utc)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM raw.page_captures WHERE partition_date = ?", [day])
        for batch in _batches(_first_per_url(captures), batch_pages):
            with timer.stage("read_and_decode", rows=len(batch)):
                frame = raw_rows(batch, day, loaded_at)
            with timer.stage("land", rows=frame.height):
                warehouse.insert_frame(con, "raw.page_captures", frame)
            stats["pages"] += frame.height
            stats["bytes"] += int(frame["byte_size"].sum() or 0)
            stats["fetch_rejects"] += int(frame["fetch_reject"].is_not_null().sum())
            stats["not_modified"] += int(frame["not_modified"].sum() or 0)
            for source, n in frame.group_by("source").len().iter_rows():
                stats["by_source"][source] = stats["by_source"].get(source, 0) + n
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return stats


def stage_partition(con, day: date, *, timer: StageTimer | None = None, batch_pages: int = BATCH_PAGES,
                    shard_pages: int | None = None, work_dir: Path | None = None) -> dict:
    """Replace the partition's staging rows: copy unchanged pages' rows, parse the others, all
    written in one transaction. The three steps the staging asset runs as separate Dagster steps
    (:func:`plan_parse`, :func:`parse_shard` per shard, :func:`write_staging`), in one process."""
    timer = timer or StageTimer()
    with tempfile.TemporaryDirectory(prefix="parse-", dir=work_dir) as tmp:
        with timer.stage("plan"):
            plan = plan_parse(con, day, Path(tmp), shard_pages=shard_pages)
        parsed = []
        for shard in plan["shards"]:
            with timer.stage("parse", rows=shard["pages"]):
                parsed.append(parse_shard(shard, batch_pages=batch_pages))
        with timer.stage("land"):
            written = write_staging(con, day, parsed)
    return {"pages_parsed": plan["pages_to_parse"], "pages_unchanged_reused": plan["pages_unchanged_reused"], **written}


# ---- sharded parsing: plan (reads the warehouse) -> parse shards (no warehouse) -> write -------------
# The parse is the CPU-heavy part of staging and needs no database: the plan exports the pages to
# parse as Parquet shards, any number of workers parse them (in parallel on a multiprocess or
# distributed executor), and one writer loads the results. Only plan and write hold the warehouse.

# The staging tables (without schema prefix), in the order stage_captures returns their rows.
_SCHEMAS = {"profiles": PROFILE_SCHEMA, "listings": LISTING_SCHEMA, "rejects": REJECT_SCHEMA}

# The partition's pages that need parsing: not reusable from an earlier night (run
# find_reusable_captures first), one url per body, the first in url order.
_PAGES_TO_PARSE = """
    SELECT capture_id, url FROM raw.page_captures
    WHERE partition_date = $day AND capture_id NOT IN (SELECT capture_id FROM reusable_captures)
    QUALIFY row_number() OVER (PARTITION BY capture_id ORDER BY url) = 1
"""


def shard_size(configured: int | None = None) -> int:
    """Pages per parse shard: SCHOLARHOUSE_PARSE_SHARD_PAGES, else SHARD_PAGES."""
    if configured:
        return max(1, int(configured))
    env = os.environ.get("SCHOLARHOUSE_PARSE_SHARD_PAGES")
    return max(1, int(env)) if env else SHARD_PAGES


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
        SELECT url, row_number() OVER (ORDER BY url) AS n FROM ({_PAGES_TO_PARSE})
    """, {"day": day})
    total = warehouse.scalar(con, "SELECT count(*) FROM pages_to_parse")
    work_dir.mkdir(parents=True, exist_ok=True)
    shards = []
    for k, start in enumerate(range(0, total, size)):
        path = work_dir / f"{day.isoformat()}-shard-{k:05d}.parquet"
        # Values are written into the statement: COPY takes no prepared parameters.
        con.execute(f"""
            COPY (
                SELECT r.* FROM raw.page_captures r JOIN pages_to_parse p USING (url)
                WHERE r.partition_date = DATE '{day.isoformat()}' AND p.n > {int(start)} AND p.n <= {int(start + size)}
                ORDER BY r.url
            ) TO '{_sql_path(path)}' (FORMAT parquet)
        """)
        shards.append({"day": day.isoformat(), "path": str(path), "pages": min(size, total - start)})
    return {"shards": shards, "pages_to_parse": total, "pages_unchanged_reused": reused}


def parse_shard(shard: dict, *, batch_pages: int = BATCH_PAGES, workers: int | None = None) -> dict:
    """Parse one shard's pages (batches of ``batch_pages``; a process pool when the shard holds more
    than one batch) and write its profiles/listings/rejects next to it as Parquet. No warehouse."""
    source = Path(shard["path"])
    pages = shard["pages"]
    workers = parse_workers(pages, batch_pages) if workers is None else workers

    def batches():
        lazy = pl.scan_parquet(source)
        for start in range(0, pages, batch_pages):
            yield lazy.slice(start, batch_pages).collect()

    parts: dict[str, list[pl.DataFrame]] = {table: [] for table in _SCHEMAS}
    for frames in _parse_batches(batches(), workers=workers):
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
    """Replace the partition's staging rows with the parsed shards plus copies of the unchanged
    pages' earlier rows, in one transaction.

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
    con.execute("BEGIN TRANSACTION")
    try:
        for table in _SCHEMAS:
            con.execute(f"DELETE FROM staging.{table} WHERE partition_date = ?", [day])
        for shard in shards:
            frames = {t: pl.read_parquet(shard[t]).filter(pl.col("capture_id").is_in(list(wanted))) for t in _SCHEMAS}
            _insert_staging(con, frames, counts, covered)
        missing = sorted(wanted - covered)
        if missing:
            late = warehouse.read_frame(con, """
                SELECT r.* FROM raw.page_captures r JOIN expected_captures e USING (capture_id, url)
                WHERE r.partition_date = ? AND list_contains(?, r.capture_id) ORDER BY r.url
            """, [day, missing])
            _insert_staging(con, dict(zip(_SCHEMAS, stage_captures(late))), counts, covered)
        copy_reused_rows(con, day)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return {f"parsed_{t}": n for t, n in counts.items()} | {"pages_parsed_late": len(missing)}


def _insert_staging(con, frames: dict[str, pl.DataFrame], counts: dict[str, int], covered: set[str]) -> None:
    for table, frame in frames.items():
        warehouse.insert_frame(con, f"staging.{table}", frame)
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


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def parse_workers(pages: int, batch_pages: int) -> int:
    """Worker processes for parsing: one per core when there is more than one batch of pages
    (starting a worker costs about a second of imports). SCHOLARHOUSE_PARSE_WORKERS overrides."""
    configured = os.environ.get("SCHOLARHOUSE_PARSE_WORKERS")
    if configured:
        return max(1, int(configured))
    return min(os.cpu_count() or 1, 8) if pages > batch_pages else 1


def _parse_batches(raw_batches, *, workers: int):
    """Yield stage_captures() of each raw batch, in order. With workers > 1 the batches are parsed
    in a process pool (parsing is CPU-bound and independent per page) while the caller writes the
    previous results: the warehouse keeps a single writer, the parse uses every core."""
    if workers <= 1:
        for raw in raw_batches:
            yield stage_captures(raw)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    in_flight = []
    # spawn: never fork a process that holds an open DuckDB connection
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for raw in raw_batches:
            in_flight.append(pool.submit(stage_captures, raw))
            if len(in_flight) > workers:
                yield in_flight.pop(0).result()
        for future in in_flight:
            yield future.result()


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    """Rows to a frame with exactly the contract's columns and types (extra keys ignored)."""
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)

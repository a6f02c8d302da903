"""The live sources' small on-disk memory: one SQLite file (WAL), one connection per process.

Why SQLite and not the warehouse: the DuckDB warehouse has a single writer, and the crawler and the
enrichment clients must be able to run (and re-run) beside the assets that write it. This file is a
cache — deleting it costs a full re-fetch, never data (raw captures live in the warehouse).

What it holds:

- ``bodies``: response bodies by sha256, stored once however many URLs/nights share them.
- ``page_state``: per URL, the last *accepted* body and its validators (ETag, Last-Modified), for
  conditional requests and for replaying the body on ``304 Not Modified``.
- ``fetch_log``: per (partition_date, url), the capture yielded for that partition — a re-run of an
  interrupted partition re-yields these instead of fetching again.
- ``api_responses``: enrichment API responses keyed by a normalised request URL, with fetch time,
  so an interrupted enrichment resumes without spending requests again.
- ``api_budget``: requests spent per API per UTC day (the OpenAlex daily budget).

Every write commits at once, so a killed process loses at most the request in flight.
``SourceCache.shared(path)`` gives the per-process instance (one connection, guarded by a lock).
No Dagster imports.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Iterator

from pipelines.ingest.sources.base import Capture

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bodies (
    sha256 TEXT PRIMARY KEY,
    body   BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS page_state (
    url            TEXT PRIMARY KEY,
    etag           TEXT,
    last_modified  TEXT,
    body_sha256    TEXT NOT NULL REFERENCES bodies(sha256),
    content_type   TEXT,
    final_url      TEXT,
    http_status    INTEGER,
    fetched_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fetch_log (
    partition_date TEXT NOT NULL,
    url            TEXT NOT NULL,
    body_sha256    TEXT NOT NULL REFERENCES bodies(sha256),
    captured_at    TEXT NOT NULL,
    content_type   TEXT,
    origin         TEXT NOT NULL,
    http_status    INTEGER,
    headers_json   TEXT NOT NULL,
    fetch_ms       REAL,
    not_modified   INTEGER NOT NULL,
    reject_reason  TEXT,
    reject_detail  TEXT,
    logged_at      TEXT NOT NULL,
    PRIMARY KEY (partition_date, url)
);
CREATE TABLE IF NOT EXISTS api_responses (
    cache_key   TEXT PRIMARY KEY,
    url         TEXT NOT NULL,
    status      INTEGER NOT NULL,
    body_sha256 TEXT NOT NULL REFERENCES bodies(sha256),
    fetched_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_budget (
    api  TEXT NOT NULL,
    day  TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (api, day)
);
"""


def _iso(ts: datetime) -> str:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=timezone.utc)
    return ts.astimezone(timezone.utc).isoformat()


def _parse_iso(value: str) -> datetime:
    ts = datetime.fromisoformat(value)
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=timezone.utc)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class PageState:
    """The last accepted version of a page: validators for the next conditional request."""

    url: str
    body: bytes
    body_sha256: str
    etag: str | None
    last_modified: str | None
    content_type: str | None
    final_url: str | None
    http_status: int | None
    fetched_at: datetime


@dataclass(frozen=True)
class CachedResponse:
    url: str
    status: int
    body: bytes
    fetched_at: datetime


_DAMAGED = re.compile(r"not a database|malformed|encrypted|unsupported file format", re.IGNORECASE)


def _set_aside(path: str) -> str:
    """Move an unreadable cache file (and its WAL and shared-memory files) to ``<path>.unreadable-<UTC time>``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = f"{path}.unreadable-{stamp}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, target + suffix)
    return target


class SourceCache:
    _shared: dict[tuple[int, str], "SourceCache"] = {}
    _shared_lock = threading.Lock()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        # Where an unreadable cache file was moved to (None: the file opened fine).
        self.set_aside: str | None = None
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            # Only a file that is not a database or is damaged; a lock, a full disk or an I/O error
            # is raised as it is: the file is fine.
            if self.path == ":memory:" or not _DAMAGED.search(str(exc)):
                raise
            # Not a database, or a damaged one: the file is only a cache (deleting it costs a re-fetch,
            # never data), so it is moved aside, kept for a look, and the night goes on with a new one.
            self.set_aside = _set_aside(self.path)
            log.warning("source cache %s could not be read (%s): moved to %s, starting a new cache",
                        self.path, exc, self.set_aside)
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: autocommit; explicit BEGIN where several statements must land together.
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            with self._lock:
                conn.executescript(_SCHEMA)
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version == 0:
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                elif version > SCHEMA_VERSION:
                    raise RuntimeError(f"{self.path}: cache schema v{version} is newer than this code (v{SCHEMA_VERSION})")
        except BaseException:
            conn.close()
            raise
        return conn

    @classmethod
    def shared(cls, path: str | os.PathLike[str]) -> "SourceCache":
        """The one instance (one connection) for ``path`` in this process."""
        key = (os.getpid(), os.path.abspath(str(path)) if str(path) != ":memory:" else ":memory:")
        with cls._shared_lock:
            inst = cls._shared.get(key)
            if inst is None or inst._conn is None:
                inst = cls(path)
                cls._shared[key] = inst
            return inst

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> "SourceCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------------------- internals
    def _tx(self):
        return _Transaction(self._conn, self._lock)

    def _put_body(self, body: bytes) -> str:
        sha = hashlib.sha256(body).hexdigest()
        self._conn.execute("INSERT OR IGNORE INTO bodies(sha256, body) VALUES (?, ?)", (sha, body))
        return sha

    def _body(self, sha: str) -> bytes:
        row = self._conn.execute("SELECT body FROM bodies WHERE sha256 = ?", (sha,)).fetchone()
        if row is None:
            raise KeyError(f"body {sha} missing from the cache")
        return bytes(row[0])

    # ---------------------------------------------------------------------------- page state
    def get_page_state(self, url: str) -> PageState | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT etag, last_modified, body_sha256, content_type, final_url, http_status, fetched_at "
                "FROM page_state WHERE url = ?", (url,),
            ).fetchone()
            if row is None:
                return None
            body = self._body(row[2])
        return PageState(
            url=url, body=body, body_sha256=row[2], etag=row[0], last_modified=row[1], content_type=row[3],
            final_url=row[4], http_status=row[5], fetched_at=_parse_iso(row[6]),
        )

    def put_page_state(
        self,
        url: str,
        body: bytes,
        *,
        etag: str | None,
        last_modified: str | None,
        content_type: str | None,
        final_url: str | None,
        http_status: int | None,
        fetched_at: datetime,
    ) -> None:
        with self._tx():
            sha = self._put_body(body)
            self._conn.execute(
                "INSERT INTO page_state(url, etag, last_modified, body_sha256, content_type, final_url, http_status, fetched_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET etag = excluded.etag, "
                "last_modified = excluded.last_modified, body_sha256 = excluded.body_sha256, "
                "content_type = excluded.content_type, final_url = excluded.final_url, "
                "http_status = excluded.http_status, fetched_at = excluded.fetched_at",
                (url, etag, last_modified, sha, content_type, final_url, http_status, _iso(fetched_at)),
            )

    def forget_page(self, url: str) -> None:
        with self._tx():
            self._conn.execute("DELETE FROM page_state WHERE url = ?", (url,))

    # ---------------------------------------------------------------------------- fetch log
    def log_capture(self, partition_date: date, capture: Capture) -> None:
        with self._tx():
            sha = self._put_body(capture.body)
            self._conn.execute(
                "INSERT OR REPLACE INTO fetch_log(partition_date, url, body_sha256, captured_at, content_type, origin, "
                "http_status, headers_json, fetch_ms, not_modified, reject_reason, reject_detail, logged_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    partition_date.isoformat(), capture.url, sha, _iso(capture.captured_at), capture.content_type,
                    capture.origin, capture.http_status, json.dumps(capture.headers, sort_keys=True),
                    capture.fetch_ms, int(capture.not_modified), capture.reject_reason, capture.reject_detail,
                    _iso(_utcnow()),
                ),
            )

    def logged_capture(self, partition_date: date, url: str) -> Capture | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT body_sha256, captured_at, content_type, origin, http_status, headers_json, fetch_ms, "
                "not_modified, reject_reason, reject_detail FROM fetch_log WHERE partition_date = ? AND url = ?",
                (partition_date.isoformat(), url),
            ).fetchone()
            if row is None:
                return None
            body = self._body(row[0])
        return Capture(
            url=url, captured_at=_parse_iso(row[1]), body=body, content_type=row[2], origin=row[3],
            http_status=row[4], headers=json.loads(row[5]), fetch_ms=row[6], not_modified=bool(row[7]),
            reject_reason=row[8], reject_detail=row[9],
        )

    def logged_urls(self, partition_date: date) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT url FROM fetch_log WHERE partition_date = ? ORDER BY url", (partition_date.isoformat(),)
            ).fetchall()
        return [r[0] for r in rows]

    def iter_logged_captures(self, partition_date: date) -> Iterator[Capture]:
        for url in self.logged_urls(partition_date):
            cap = self.logged_capture(partition_date, url)
            if cap is not None:
                yield cap

    def clear_partition(self, partition_date: date) -> int:
        """Forget what was fetched for a partition (forces a real re-crawl of it)."""
        with self._tx():
            cur = self._conn.execute("DELETE FROM fetch_log WHERE partition_date = ?", (partition_date.isoformat(),))
            return cur.rowcount

    # ---------------------------------------------------------------------------- API responses
    def get_api_response(self, cache_key: str, *, max_age_s: float | None = None,
                         now: datetime | None = None) -> CachedResponse | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT url, status, body_sha256, fetched_at FROM api_responses WHERE cache_key = ?", (cache_key,)
            ).fetchone()
            if row is None:
                return None
            fetched_at = _parse_iso(row[3])
            if max_age_s is not None and ((now or _utcnow()) - fetched_at).total_seconds() > max_age_s:
                return None
            body = self._body(row[2])
        return CachedResponse(url=row[0], status=row[1], body=body, fetched_at=fetched_at)

    def put_api_response(self, cache_key: str, url: str, status: int, body: bytes, fetched_at: datetime) -> None:
        with self._tx():
            sha = self._put_body(body)
            self._conn.execute(
                "INSERT OR REPLACE INTO api_responses(cache_key, url, status, body_sha256, fetched_at) VALUES (?, ?, ?, ?, ?)",
                (cache_key, url, status, sha, _iso(fetched_at)),
            )

    # ---------------------------------------------------------------------------- budget
    def budget_used(self, api: str, day: date) -> int:
        with self._lock:
            row = self._conn.execute(
                "SELECT used FROM api_budget WHERE api = ? AND day = ?", (api, day.isoformat())
            ).fetchone()
        return int(row[0]) if row else 0

    def consume_budget(self, api: str, day: date, n: int = 1) -> int:
        """Add ``n`` requests to today's count; returns the new total."""
        with self._tx():
            self._conn.execute(
                "INSERT INTO api_budget(api, day, used) VALUES (?, ?, ?) "
                "ON CONFLICT(api, day) DO UPDATE SET used = used + excluded.used",
                (api, day.isoformat(), n),
            )
            row = self._conn.execute(
                "SELECT used FROM api_budget WHERE api = ? AND day = ?", (api, day.isoformat())
            ).fetchone()
        return int(row[0])

    # ---------------------------------------------------------------------------- housekeeping
    def prune(self, *, fetch_log_before: date | None = None, api_older_than: datetime | None = None) -> None:
        """Drop old fetch-log rows / API responses, then bodies nothing points at any more."""
        with self._tx():
            if fetch_log_before is not None:
                self._conn.execute("DELETE FROM fetch_log WHERE partition_date < ?", (fetch_log_before.isoformat(),))
            if api_older_than is not None:
                self._conn.execute("DELETE FROM api_responses WHERE fetched_at < ?", (_iso(api_older_than),))
            self._conn.execute(
                "DELETE FROM bodies WHERE sha256 NOT IN (SELECT body_sha256 FROM page_state) "
                "AND sha256 NOT IN (SELECT body_sha256 FROM fetch_log) "
                "AND sha256 NOT IN (SELECT body_sha256 FROM api_responses)"
            )


class _Transaction:
    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self.conn, self.lock = conn, lock

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.lock.release()

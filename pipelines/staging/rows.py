"""From captures to rows, without the warehouse: the raw.page_captures row of each fetch
(``raw_rows``), and the staging rows of the pages parsed (``stage_captures``: profiles, listings,
rejects, quality issues), framed with the tables' schemas; the ids they carry (``fetch_id``,
``listing_key``, ``short_hash``); and the parse of many batches in a process pool
(``parse_batches``). ``build.py`` runs these against the warehouse."""

from __future__ import annotations

import hashlib
import os
from datetime import date, datetime, timezone
from typing import Iterable

import polars as pl

from pipelines.ingest.sources.base import Capture
from pipelines.staging import parsing
from pipelines.staging.parsing.capture import profile_id_from_url
from pipelines.textnorm import title_key
from pipelines.warehouse import contract

# The frames' schemas are the tables' (sql/schema), through pipelines/warehouse/contract.py.
RAW_SCHEMA = contract.polars_schema("raw.page_captures")

PROFILE_SCHEMA = contract.polars_schema("staging.profiles")

LISTING_SCHEMA = contract.polars_schema("staging.listings")

REJECT_SCHEMA = contract.polars_schema("staging.rejects")

ISSUE_SCHEMA = contract.polars_schema("staging.quality_issues")


def short_hash(*parts: object, length: int = 16) -> str:
    return hashlib.sha256("\x1f".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:length]


def fetch_id(partition_date: date, url: str, source_file: str | None) -> str:
    """The identity of one fetch: a url on a partition date (and, for a captures folder, the file —
    two files may claim the same url). Stable across re-runs of the partition; 16 hex digits."""
    return short_hash(partition_date, url, source_file)


def _issue_id(day, fetch, position, field, reason, raw_value) -> str:
    return short_hash(day, fetch, position, field, reason, raw_value)


def _content_type(declared: str | None, text: str | None) -> tuple[str | None, dict | None]:
    """The capture's effective content type, and an issue when the declared one (file extension,
    Content-Type header) is contradicted by the content."""
    mime = (declared or "").split(";", 1)[0].strip().lower()  # the charset, if any, was used to decode
    if text is None:
        return mime or None, None
    effective = parsing.sniff_content_type(text, declared)
    mime = "text/html" if mime == "application/xhtml+xml" else mime
    if mime in ("text/html", "text/plain") and mime != effective:
        return effective, {"reason": "content_type_mismatch", "field": "content_type", "action": "repaired",
                           "raw_value": (declared or "").split(";", 1)[0].strip(),
                           "detail": f"declared {mime} (file extension or Content-Type) but the content is {effective}: "
                                     f"parsed as {effective}"}
    return effective, None


def listing_key(source: str, source_profile_id: str, title: str, year: int | None) -> str:
    """Identity of 'this paper on this profile' that survives from night to night."""
    return short_hash(source, source_profile_id, title_key(title), year)


def raw_rows(captures: Iterable[Capture], partition_date: date, loaded_at: datetime | None = None) -> pl.DataFrame:
    """One raw.page_captures row per fetch. Identity (site, profile id from the URL) is cheap here;
    the full parse happens in staging.

    ``body`` is the decoded text; ``body_bytes`` keeps the bytes exactly as read whenever ``body``
    is not their exact UTF-8 (undecodable, another encoding, replaced or padding bytes), so raw
    never loses a byte and staging parses the original bytes."""
    loaded_at = loaded_at or datetime.now(timezone.utc)
    rows = []
    seen: set[str] = set()
    for cap in captures:
        fid = fetch_id(partition_date, cap.url, cap.source_file)
        if fid in seen:  # the same fetch yielded twice: it is one fetch
            continue
        seen.add(fid)
        text, encoding, _ = parsing.decode_report(cap.body, cap.content_type)
        exact = text is not None and encoding == "utf-8" and (
            len(text) == len(cap.body) or text.encode("utf-8") == cap.body)
        content_type, mismatch = _content_type(cap.content_type, text)
        issues = [{"reason": i.reason, "field": i.field, "action": i.action, "raw_value": i.raw_value,
                   "detail": i.detail} for i in cap.issues]
        if mismatch and not cap.reject_reason:
            issues.append(mismatch)
        try:
            source = parsing.detect_site(text or "", cap.url) if text is not None else "unknown"
        except Exception:  # a page that breaks site detection is still landed; staging says why
            source = "unknown"
        rows.append({
            "capture_id": cap.capture_id, "fetch_id": fid, "source": source, "url": cap.url,
            "source_profile_id": profile_id_from_url(source, cap.url),
            "captured_at": cap.captured_at, "partition_date": partition_date,
            "content_type": content_type or parsing.sniff_content_type(text or ""),
            "http_status": cap.http_status, "body": text,
            "body_bytes": None if exact else cap.body,
            "encoding": encoding, "byte_size": len(cap.body), "origin": cap.origin,
            "source_file": cap.source_file, "etag": cap.headers.get("etag"),
            "last_modified": cap.headers.get("last-modified"), "fetch_ms": cap.fetch_ms,
            "not_modified": cap.not_modified, "fetch_reject": cap.reject_reason,
            "fetch_reject_detail": cap.reject_detail, "capture_issues": issues, "loaded_at": loaded_at,
        })
    return pl.DataFrame(rows, schema=RAW_SCHEMA)


def stage_captures(raw: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Parse the raw rows of one partition into (profiles, listings, rejects, quality issues).

    Every body is parsed once, for the first of its fetches in ``raw`` (the pipeline hands over
    exactly the parsed fetch of each body; ``write_staging`` accounts for the other fetches). It
    ends up as a profile, a reject, or both (a truncated page keeps its complete items and rejects
    the rest). A fetch the source rejected is a reject of its own, never parsed. A page whose rows
    cannot be stored (a value the tables cannot hold that slipped past the parser's checks) is a
    ``parse_error`` reject, never the batch's failure.
    """
    pages: list[tuple[list, list, list, list]] = []
    done: set[str] = set()
    for row in raw.iter_rows(named=True):
        capture_id, partition_date = row["capture_id"], row["partition_date"]
        fid = row.get("fetch_id") or fetch_id(partition_date, row["url"], row.get("source_file"))
        base = {"capture_id": capture_id, "fetch_id": fid, "partition_date": partition_date, "url": row["url"],
                "parser_version": parsing.PARSER_VERSION}
        if row["fetch_reject"]:
            pages.append(([], [], [{**base, "source": row["source"], "reason": row["fetch_reject"], "stage": "fetch",
                                    "detail": row.get("fetch_reject_detail") or "rejected while fetching",
                                    "position": None}], []))
            continue
        if capture_id in done:
            continue
        done.add(capture_id)
        pages.append(_stage_page(row, base))
    return _frames(pages)


def _decoding_hint(content_type: str | None, encoding: str | None) -> str | None:
    """The stored content type, with the charset raw decoded the body with when that was a declared
    one (a Content-Type header's ``charset=``, which raw does not keep): the original bytes are
    parsed again here and must decode the same way. UTF-8/16/32 need no hint; cp1252 is the
    guess raw makes when nothing is declared, and staging makes it again, with its issue."""
    if not content_type or not encoding or encoding.startswith("utf") or encoding == "cp1252":
        return content_type
    return f"{content_type}; charset={encoding}"


def _stage_page(row: dict, base: dict) -> tuple[list, list, list, list]:
    """The staging rows of one parsed fetch: ([profile], listings, rejects, issues)."""
    capture_id, partition_date = base["capture_id"], base["partition_date"]
    body = row["body_bytes"] if row.get("body_bytes") is not None else (row["body"] or "").encode("utf-8")
    result = parsing.parse_capture(body, url=row["url"], captured_at=row["captured_at"],
                                   content_type=_decoding_hint(row["content_type"], row.get("encoding")))
    rejects = [{**base, "source": result.source, "stage": "parse", **rej} for rej in result.rejects]
    issues = [{**base, "source": result.source, "stage": "parse", **issue} for issue in result.issues]
    if result.profile is None:
        return [], [], rejects, issues
    profile_id = result.source_profile_id or row["source_profile_id"] or f"capture:{capture_id[:16]}"
    profile = {
        **result.profile, "capture_id": capture_id, "fetch_id": base["fetch_id"], "partition_date": partition_date,
        "source": result.source, "source_profile_id": profile_id, "url": row["url"],
        "captured_at": row["captured_at"], "parser_version": parsing.PARSER_VERSION,
    }
    listings = [{
        **item, "capture_id": capture_id, "partition_date": partition_date, "source": result.source,
        "source_profile_id": profile_id,
        "listing_id": short_hash(partition_date, capture_id, item["position"]),
        "listing_key": listing_key(result.source, profile_id, item["title"], item.get("year")),
    } for item in result.listings]
    return [profile], listings, rejects, issues


def _frames(pages: list[tuple[list, list, list, list]]) -> tuple[pl.DataFrame, ...]:
    """The four staging frames of these pages. When the batch's rows do not fit the tables, each
    page is framed alone and a page that does not fit becomes one ``parse_error`` reject."""
    schemas = (PROFILE_SCHEMA, LISTING_SCHEMA, REJECT_SCHEMA, ISSUE_SCHEMA)
    for rejects in (page[2] for page in pages):
        for rej in rejects:
            rej["reject_id"] = short_hash(rej["partition_date"], rej["fetch_id"], rej["reason"], rej.get("position"))
    for issues in (page[3] for page in pages):
        unique: dict[str, dict] = {}
        for issue in issues:
            issue["issue_id"] = _issue_id(issue["partition_date"], issue["fetch_id"], issue.get("position"),
                                          issue.get("field"), issue["reason"], issue.get("raw_value"))
            unique.setdefault(issue["issue_id"], issue)
        issues[:] = unique.values()
    try:
        return tuple(_frame([r for page in pages for r in page[k]], schema) for k, schema in enumerate(schemas))
    except Exception:  # noqa: BLE001 - polars raises several types for values a column cannot hold
        pass
    parts: list[list[pl.DataFrame]] = [[] for _ in schemas]
    for page in pages:
        try:
            framed = [_frame(page[k], schema) for k, schema in enumerate(schemas)]
        except Exception as exc:  # noqa: BLE001
            some = next(r for rows in page for r in rows)
            reject = {key: some[key] for key in ("capture_id", "fetch_id", "partition_date", "url", "parser_version")}
            reject.update(source=some.get("source") or "unknown", reason="parse_error", position=None, stage="parse",
                          detail=f"the page's rows do not fit the staging tables: {type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:300] if str(exc) else ''}")
            reject["reject_id"] = short_hash(reject["partition_date"], reject["fetch_id"], "parse_error", None)
            framed = [_frame([], PROFILE_SCHEMA), _frame([], LISTING_SCHEMA), _frame([reject], REJECT_SCHEMA),
                      _frame([], ISSUE_SCHEMA)]
        for k, frame in enumerate(framed):
            parts[k].append(frame)
    return tuple(pl.concat(frames) if frames else _frame([], schema) for frames, schema in zip(parts, schemas))


def parse_workers(pages: int, batch_pages: int, configured: int | None = None) -> int:
    """Worker processes for parsing: one per core when there is more than one batch of pages
    (starting a worker costs about a second of imports). ``configured`` (the setting
    SCHOLARHOUSE_PARSE_WORKERS) overrides."""
    if configured:
        return max(1, int(configured))
    return min(os.cpu_count() or 1, 8) if pages > batch_pages else 1


def parse_batches(raw_batches, *, workers: int):
    """Yield stage_captures() of each raw batch, in order. With workers > 1 the batches are parsed
    in a process pool (parsing is CPU-bound and independent per page) while the caller writes the
    previous results: the warehouse keeps a single writer, the parse uses every core."""
    if workers <= 1:
        for raw in raw_batches:
            yield stage_captures(raw)
        return
    from pipelines.workers import spawned_pool

    in_flight = []
    # spawned, never forked (this process holds an open DuckDB connection); the workers exit if it dies
    with spawned_pool(workers) as pool:
        for raw in raw_batches:
            in_flight.append(pool.submit(stage_captures, raw))
            if len(in_flight) > workers:
                yield in_flight.pop(0).result()
        for future in in_flight:
            yield future.result()


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    """Rows to a frame with exactly the contract's columns and types (extra keys ignored)."""
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)

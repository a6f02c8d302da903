"""What every page source yields: one ``Capture`` per page, whatever fetched it.

A source (a folder of captured files, or the live HTTP crawler) is anything with
``iter_captures(partition_date) -> Iterator[Capture]``. The assets only see captures,
so a new source slots in without touching them. No Dagster imports here.

Two identities, on purpose:

- ``capture_id`` names the *bytes* (sha256 of the body): the same body has the same id at every
  url and on every night, so it can be stored and parsed once.
- a *fetch* is one page read on one night — a url on a partition date, or for a captures folder
  one file (two files may claim the same url). ``pipelines.staging.build.fetch_id`` names it. Every
  fetch is a row of its own in ``raw.page_captures`` and is accounted for in staging by its own
  profile or reject rows, so fetches that failed with the same (often empty) body never collapse
  into one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Iterator, Protocol


@dataclass(frozen=True)
class CaptureIssue:
    """Something the source doubted or repaired while reading a page it still delivers (a sidecar
    that is not JSON, a capture time in the future, ...). Lands in ``raw.page_captures.capture_issues``
    and, from there, in ``staging.quality_issues`` (stage ``fetch``)."""

    reason: str                 # stable code (pipelines.staging.parsing.result.ISSUE_REASONS)
    field: str | None           # the column it is about ('captured_at', 'url', ...), None for the page
    action: str                 # 'nulled' (not used) | 'repaired' (a default/corrected value used) | 'kept'
    raw_value: str | None       # what was read, as text (cut to 200 characters)
    detail: str


@dataclass(frozen=True)
class Capture:
    url: str
    captured_at: datetime          # timezone-aware (UTC)
    body: bytes                    # exactly as received / read; never altered
    content_type: str | None = None  # 'text/plain' | 'text/html' (with '; charset=X' when declared) | None (sniff)
    origin: str = "captures"       # 'captures' (a folder) | 'http' (live crawl)
    http_status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # the ones that matter: etag, last-modified, content-type
    fetch_ms: float | None = None
    source_file: str | None = None
    # True when the server answered 304 Not Modified: the body is the stored copy from the last
    # fetch (same capture_id), so nothing downstream needs re-parsing.
    not_modified: bool = False
    # A fetch-level problem (bot challenge, oversize body, redirect loop, HTTP error): the capture is
    # still landed in raw.page_captures, and staging records a reject with this reason.
    reject_reason: str | None = None
    reject_detail: str | None = None
    issues: tuple[CaptureIssue, ...] = ()

    @property
    def capture_id(self) -> str:
        """sha256 of the body: the same bytes always have the same id."""
        return hashlib.sha256(self.body).hexdigest()


class CaptureSource(Protocol):
    def iter_captures(self, partition_date: date) -> Iterator[Capture]: ...

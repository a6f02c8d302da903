"""What every page source yields: one ``Capture`` per page, whatever fetched it.

A source (a folder of captured files, or the live HTTP crawler) is anything with
``iter_captures(partition_date) -> Iterator[Capture]``. The assets only see captures,
so a new source slots in without touching them. No Dagster imports here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Iterator, Protocol


@dataclass(frozen=True)
class Capture:
    url: str
    captured_at: datetime          # timezone-aware (UTC)
    body: bytes                    # exactly as received / read; never altered
    content_type: str | None = None  # 'text/plain' | 'text/html' | None (sniff)
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

    @property
    def capture_id(self) -> str:
        """sha256 of the body: the same bytes always have the same id."""
        return hashlib.sha256(self.body).hexdigest()


class CaptureSource(Protocol):
    def iter_captures(self, partition_date: date) -> Iterator[Capture]: ...

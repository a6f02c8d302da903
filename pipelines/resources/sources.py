"""Page sources as resources. The assets ask a source for the partition's captures and never
care where they came from: a folder of captured pages (demo, tests, backfills from stored pages)
or the live crawler (production)."""

from __future__ import annotations

import abc
from datetime import date
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg
from pydantic import PrivateAttr

from pipelines.settings import Settings
from pipelines.ingest.sources.base import Capture
from pipelines.ingest.sources.folder import MAX_FILE_BYTES, FolderSource


class PageSourceResource(dg.ConfigurableResource, abc.ABC):
    """What every page source resource provides: the partition's captures, and a one-line description."""

    @abc.abstractmethod
    def iter_captures(self, partition_date: date) -> Iterator[Capture]: ...

    @abc.abstractmethod
    def describe(self) -> str: ...


class CapturesFolderResource(PageSourceResource):
    """A folder of captured pages. Default: ``$SCHOLARHOUSE_CAPTURES`` or the bundled samples.

    Every file in the folder is read into the partition being run (what is refused, and why:
    ``pipelines/ingest/sources/folder.py``). ``max_file_bytes``: larger files are rejected ``oversize``.
    """

    path: Optional[str] = None
    max_file_bytes: int = MAX_FILE_BYTES

    _last_skipped: dict = PrivateAttr(default_factory=dict)

    def resolved_path(self) -> Path:
        return Path(self.path) if self.path else Settings.one_from_env("captures")

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        source = FolderSource(self.resolved_path(), max_file_bytes=self.max_file_bytes)
        try:
            yield from source.iter_captures(partition_date)
        finally:
            self._last_skipped = source.skipped_summary()

    def skipped(self) -> dict[str, int]:
        """Entries of the folder that are not pages by convention, by kind, from the last read."""
        return dict(self._last_skipped)

    def describe(self) -> str:
        text = f"captures folder {self.resolved_path()}"
        if self._last_skipped:
            text += " (skipped, not pages: " + ", ".join(f"{why} ×{n}" for why, n in sorted(self._last_skipped.items())) + ")"
        return text

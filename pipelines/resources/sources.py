"""Page sources as resources. The assets ask a source for the partition's captures and never
care where they came from: a folder of captured pages (demo, tests, backfills from stored pages)
or the live crawler (production)."""

from __future__ import annotations

import abc
import os
from datetime import date
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg

from pipelines.sources.base import Capture
from pipelines.sources.folder import BUNDLED_SAMPLES, FolderSource


class PageSourceResource(dg.ConfigurableResource, abc.ABC):
    """What every page source resource provides: the partition's captures, and a one-line description."""

    @abc.abstractmethod
    def iter_captures(self, partition_date: date) -> Iterator[Capture]: ...

    @abc.abstractmethod
    def describe(self) -> str: ...


class CapturesFolderResource(PageSourceResource):
    """A folder of captured pages. Default: ``$SCHOLARHOUSE_CAPTURES`` or the bundled samples.

    Every file in the folder is read into the partition being run.
    """

    path: Optional[str] = None

    def resolved_path(self) -> Path:
        return Path(self.path or os.environ.get("SCHOLARHOUSE_CAPTURES") or BUNDLED_SAMPLES)

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        yield from FolderSource(self.resolved_path()).iter_captures(partition_date)

    def describe(self) -> str:
        return f"captures folder {self.resolved_path()}"

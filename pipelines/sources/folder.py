"""A folder of captured pages as a page source (the demo's and the tests' source).

Every file in the folder is one page: ``.txt`` (the page's visible text) or ``.html``/``.htm``
(page source). An optional sidecar ``<file>.meta.json`` gives ``{"url": ..., "captured_at": ...}``;
without one (or with nulls), the capture time is the partition date (midnight UTC) and the url is
the file's ``file://`` URI. A sidecar that is not valid JSON does not stop the run: the page is still
read, with the defaults, and the problem is reported in ``Capture.reject_detail``-free form via
``FolderSource.warnings``. Hidden files and sidecars are not pages.
No Dagster imports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Iterator

from pipelines.sources.base import Capture

SIDECAR_SUFFIX = ".meta.json"
CONTENT_TYPES = {".txt": "text/plain", ".text": "text/plain", ".html": "text/html", ".htm": "text/html"}
BUNDLED_SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def parse_timestamp(value: str) -> datetime:
    """ISO 8601 (``Z`` allowed); a naive time is taken as UTC."""
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


@dataclass
class FolderSource:
    path: Path
    warnings: list[str] = field(default_factory=list)

    def page_files(self) -> list[Path]:
        if not self.path.is_dir():
            raise FileNotFoundError(f"captures folder not found: {self.path}")
        return sorted(
            p for p in self.path.iterdir()
            if p.is_file() and not p.name.startswith(".") and not p.name.endswith(SIDECAR_SUFFIX)
            and p.name != "__init__.py"
        )

    def _sidecar(self, page: Path) -> dict:
        sidecar = page.with_name(page.name + SIDECAR_SUFFIX)
        if not sidecar.exists():
            return {}
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
            return meta
        except (ValueError, UnicodeDecodeError) as exc:
            self.warnings.append(f"{sidecar.name}: unreadable sidecar ignored ({exc})")
            return {}

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        default_time = datetime.combine(partition_date, time(0, 0), tzinfo=timezone.utc)
        for page in self.page_files():
            meta = self._sidecar(page)
            captured_at = default_time
            if meta.get("captured_at"):
                try:
                    captured_at = parse_timestamp(str(meta["captured_at"]))
                except ValueError as exc:
                    self.warnings.append(f"{page.name}: bad captured_at ignored ({exc})")
            url = meta.get("url") or page.resolve().as_uri()
            yield Capture(
                url=str(url),
                captured_at=captured_at,
                body=page.read_bytes(),
                content_type=CONTENT_TYPES.get(page.suffix.lower()),
                origin="captures",
                source_file=page.name,
            )

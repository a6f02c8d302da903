"""A folder of captured pages as a page source (the demo's and the tests' source).

Every regular file directly in the folder is one page: ``.txt`` (the page's visible text) or
``.html``/``.htm`` (page source); the extension is a hint, the content decides (staging sniffs it).
An optional sidecar ``<file>.meta.json`` gives ``{"url": ..., "captured_at": ...}``; without one
(or with nulls), the capture time is the partition date (midnight UTC) and the url is the file's
``file://`` URI. No Dagster imports.

Nothing in the folder is dropped silently, and nothing outside it is ever read:

- **Captures are regular files under the folder.** A symlink is followed only when its target is
  a regular file inside the folder. A link that leaves the folder (``-> /etc/passwd``) is refused
  unread: the capture lands with an empty body and ``reject_reason='outside_root'``. A directory,
  FIFO, socket or device is ``not_a_file`` (never opened: a FIFO would block the night); folders
  inside the captures folder are not descended into (they may hold other nights' pages).
- **A file that cannot be read** (permission denied, I/O error, a broken link, gone since the
  listing) is ``unreadable``, with the operating system's reason; the rest of the night goes on.
- **A file over ``max_file_bytes``** (20 MB by default) is ``oversize``: its first
  ``max_file_bytes`` bytes are kept, and it is not parsed.
- **A sidecar problem never costs the page**: a sidecar that is not JSON, not an object,
  unreadable or a link out of the folder, a ``url`` or ``captured_at`` that is not usable, a
  capture time before 2000 or in the future, an unknown key — the page is read with the defaults
  for what was unusable, and each problem travels with the capture as a ``CaptureIssue``
  (``raw.page_captures.capture_issues`` → ``staging.quality_issues``).
- **Not pages, by convention**: hidden files (``.DS_Store``, editor swap files), sidecars (with
  or without their page) and Python package files (``__init__.py``, ``__pycache__``). They are
  listed in ``FolderSource.skipped`` (the raw asset's metadata shows the counts), never read.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import urlsplit

from pipelines.ingest.sources.base import Capture, CaptureIssue

SIDECAR_SUFFIX = ".meta.json"
CONTENT_TYPES = {".txt": "text/plain", ".text": "text/plain", ".html": "text/html", ".htm": "text/html"}
BUNDLED_SAMPLES = Path(__file__).resolve().parents[2] / "samples"
MAX_FILE_BYTES = 20_000_000      # a captured page larger than this is rejected ('oversize'), its prefix kept
MAX_SIDECAR_BYTES = 64 * 1024    # a sidecar is two short fields
SIDECAR_KEYS = ("url", "captured_at")
URL_SCHEMES = ("http", "https", "file")
# Capture times outside [EARLIEST_CAPTURE, now + FUTURE_SLACK] are not believed (an epoch-zero
# default, a typo'd year): the partition's default is used and the sidecar's value is kept in the issue.
EARLIEST_CAPTURE = datetime(2000, 1, 1, tzinfo=timezone.utc)
FUTURE_SLACK = timedelta(days=1)
PACKAGE_FILES = frozenset({"__init__.py", "__pycache__"})

# Reject reasons this source gives (Capture.reject_reason); staging copies them to staging.rejects.
OUTSIDE_ROOT = "outside_root"
NOT_A_FILE = "not_a_file"
UNREADABLE = "unreadable"
OVERSIZE = "oversize"
REJECT_REASONS = (OUTSIDE_ROOT, NOT_A_FILE, UNREADABLE, OVERSIZE)

_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)


def parse_timestamp(value: str) -> datetime:
    """ISO 8601 (``Z`` allowed); a naive time is taken as UTC. Raises ValueError on anything else."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    except OverflowError as exc:  # "0001-01-01T00:00:00+01:00" is before year 1 in UTC
        raise ValueError(f"out of range: {exc}") from exc


def safe_text(value: str) -> str:
    """``value`` as storable UTF-8 text: the undecodable bytes of a file name become ``\\xe9``
    escapes, lone surrogates (from JSON ``\\ud800`` escapes) ``\\ud800``, instead of failing the insert."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _clip(value: object, limit: int = 200) -> str:
    text = safe_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Refused(Exception):
    """A file the source will not (or cannot) read: the reject reason and its detail."""

    def __init__(self, reason: str, detail: str, body: bytes = b""):
        super().__init__(detail)
        self.reason, self.detail, self.body = reason, detail, body


def _os_reason(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    return f"{exc.strerror or exc} ({name})"


def read_regular_file(path: Path, root: Path, limit: int) -> tuple[bytes, bool]:
    """The bytes of ``path`` — at most ``limit`` of them — and whether the file was longer.

    Only a regular file under ``root`` (after resolving every link) is opened; anything else raises
    ``_Refused`` with the reject reason, and nothing outside ``root`` is opened at all.
    The open uses O_NOFOLLOW and O_NONBLOCK, so a file swapped for a link or a FIFO after the
    checks is refused instead of followed or blocking."""
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError) as exc:
        raise _Refused(UNREADABLE, f"the path cannot be resolved: {exc}") from exc
    if not _within(target, str(root)):
        raise _Refused(OUTSIDE_ROOT, f"a link to {safe_text(target)}, outside the captures folder: not read")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        raise _Refused(UNREADABLE, f"a link to {safe_text(target)}, which does not exist" if os.path.islink(path)
                       else "the file is gone (removed since the folder was listed)") from None
    except OSError as exc:
        raise _Refused(UNREADABLE, f"cannot stat the file: {_os_reason(exc)}") from exc
    if not stat.S_ISREG(info.st_mode):
        kind = next((label for test, label in _FILE_KINDS if test(info.st_mode)), "not a regular file")
        if stat.S_ISDIR(info.st_mode):
            try:
                entries = len(os.listdir(target))
            except OSError:
                entries = None
            held = f" holding {entries} entries" if entries is not None else ""
            raise _Refused(NOT_A_FILE, f"{kind}{held}: folders inside the captures folder are not read "
                                       "(captures are the files directly in it)")
        raise _Refused(NOT_A_FILE, f"{kind}: not read (captures are regular files)")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise _Refused(UNREADABLE, f"cannot open the file: {_os_reason(exc)}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Refused(NOT_A_FILE, "replaced by something that is not a regular file while being read")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _Refused(UNREADABLE, f"cannot read the file: {_os_reason(exc)}") from exc
    finally:
        os.close(fd)
    body = b"".join(chunks)
    return (body[:limit], True) if len(body) > limit else (body, False)


@dataclass
class FolderSource:
    path: Path
    max_file_bytes: int = MAX_FILE_BYTES
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)  # for "a capture time in the future"
    warnings: list[str] = field(default_factory=list)   # one line per capture issue, for the run log
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, why): entries that are not pages

    def root(self) -> Path:
        if not self.path.is_dir():
            raise FileNotFoundError(f"captures folder not found: {self.path}")
        return self.path.resolve()

    def page_files(self) -> list[Path]:
        """Every entry of the folder that stands for a page (files, links, and what is neither —
        each of those becomes a capture, rejected when it cannot be read). Sorted by name."""
        root = self.root()
        self.skipped = []
        names = sorted(os.listdir(root))
        present = set(names)
        pages = []
        for name in names:
            if name.startswith("."):
                self.skipped.append((name, "hidden file"))
            elif name.endswith(SIDECAR_SUFFIX):
                if name[: -len(SIDECAR_SUFFIX)] not in present:
                    self.skipped.append((name, "sidecar without a page"))
            elif name in PACKAGE_FILES:
                self.skipped.append((name, "Python package file"))
            else:
                pages.append(root / name)
        return pages

    def skipped_summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for _, why in self.skipped:
            out[why] = out.get(why, 0) + 1
        return out

    # ---- sidecars ------------------------------------------------------------------------------

    def _sidecar(self, page: Path, root: Path, issues: list[CaptureIssue]) -> dict:
        sidecar = page.with_name(page.name + SIDECAR_SUFFIX)
        if not os.path.lexists(sidecar):
            return {}

        def problem(raw: str | None, detail: str) -> dict:
            issues.append(CaptureIssue("bad_sidecar", None, "repaired", raw, f"{sidecar.name}: {detail}; "
                                       "the defaults are used (url: the file, captured_at: the partition date)"))
            return {}

        try:
            data, longer = read_regular_file(sidecar, root, MAX_SIDECAR_BYTES)
        except _Refused as refused:
            return problem(None, f"not read: {refused.detail}")
        if longer:
            return problem(None, f"over {MAX_SIDECAR_BYTES:,} bytes, not a sidecar")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return problem(_clip(data.decode("utf-8", "replace")), f"not UTF-8 ({exc.reason})")
        try:
            meta = json.loads(text)
        except ValueError as exc:
            return problem(_clip(text), f"not valid JSON ({exc})")
        if not isinstance(meta, dict):
            return problem(_clip(text), f"not a JSON object (a {type(meta).__name__})")
        for key in meta:
            if key not in SIDECAR_KEYS:
                issues.append(CaptureIssue("bad_sidecar_value", _clip(key, 60), "nulled", _clip(meta[key]),
                                           f"{sidecar.name}: key {key!r} is not one a sidecar has "
                                           f"({', '.join(SIDECAR_KEYS)}): ignored"))
        return meta

    def _captured_at(self, meta: dict, default: datetime, now: datetime, issues: list[CaptureIssue]) -> datetime:
        value = meta.get("captured_at")
        if value is None:
            return default
        if not isinstance(value, str):
            issues.append(CaptureIssue("bad_sidecar_value", "captured_at", "repaired", _clip(value),
                                       f"captured_at is a {type(value).__name__}, not an ISO 8601 time: "
                                       "the partition date is used"))
            return default
        try:
            parsed = parse_timestamp(value)
        except ValueError as exc:
            issues.append(CaptureIssue("bad_sidecar_value", "captured_at", "repaired", _clip(value),
                                       f"captured_at is not an ISO 8601 time ({exc}): the partition date is used"))
            return default
        if parsed < EARLIEST_CAPTURE or parsed > now + FUTURE_SLACK:
            when = "before 2000" if parsed < EARLIEST_CAPTURE else f"in the future (read at {now:%Y-%m-%dT%H:%MZ})"
            issues.append(CaptureIssue("implausible_capture_time", "captured_at", "repaired", _clip(value),
                                       f"captured_at {parsed.isoformat()} is {when}: the partition date is used"))
            return default
        return parsed

    def _url(self, meta: dict, default: str, issues: list[CaptureIssue]) -> str:
        value = meta.get("url")
        if value is None:
            return default
        problem = None
        if not isinstance(value, str):
            problem = f"url is a {type(value).__name__}, not a string"
        elif not value.strip() or len(value) > 2048 or any(ch.isspace() or ord(ch) < 32 for ch in value.strip()):
            problem = "url is empty, too long, or has spaces or control characters"
        elif safe_text(value) != value:
            problem = "url is not valid Unicode"
        else:
            try:
                parts = urlsplit(value.strip())
                ok = parts.scheme.lower() in URL_SCHEMES and bool(parts.netloc or parts.scheme.lower() == "file")
            except ValueError:
                ok = False
            if not ok:
                problem = f"url is not an {'/'.join(URL_SCHEMES)} URL"
        if problem:
            issues.append(CaptureIssue("bad_sidecar_value", "url", "repaired", _clip(value),
                                       f"{problem}: the file's own file:// URI is used"))
            return default
        return value.strip()

    # ---- pages ---------------------------------------------------------------------------------

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        default_time = datetime.combine(partition_date, time(0, 0), tzinfo=timezone.utc)
        now = self.now()
        root = self.root()
        for page in self.page_files():
            issues: list[CaptureIssue] = []
            name = safe_text(page.name)
            if name != page.name:
                issues.append(CaptureIssue("file_name_not_utf8", "source_file", "repaired", name,
                                           "the file name is not valid UTF-8: stored with \\x escapes"))
            meta = self._sidecar(page, root, issues)
            captured_at = self._captured_at(meta, default_time, now, issues)
            url = self._url(meta, page.as_uri(), issues)
            reason = detail = None
            try:
                body, longer = read_regular_file(page, root, self.max_file_bytes)
            except _Refused as refused:
                body, reason, detail = refused.body, refused.reason, refused.detail
            else:
                if longer:
                    size = _size(page)
                    reason = OVERSIZE
                    detail = (f"the file has {f'{size:,}' if size is not None else 'more than that many'} bytes, "
                              f"over the {self.max_file_bytes:,}-byte limit: its first {self.max_file_bytes:,} "
                              "bytes are kept and not parsed")
            self.warnings.extend(f"{name}: {issue.detail}" for issue in issues)
            yield Capture(
                url=url,
                captured_at=captured_at,
                body=body,
                content_type=CONTENT_TYPES.get(page.suffix.lower()),
                origin="captures",
                source_file=name,
                reject_reason=reason,
                reject_detail=detail,
                issues=tuple(issues),
            )


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None

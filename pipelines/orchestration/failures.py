"""What went wrong, in one line, and whether trying again can help. No Dagster imports.

A step that fails is retried only for a *transient* cause: another process holding the DuckDB (or
SQLite cache) lock, a dropped connection, a resource busy for a moment. Everything else fails at
once: a full disk, a read-only or forbidden directory, a file too large, a bug or bad data give the
same answer on the second try, and retrying them only delays the night and buries the cause.

``explain`` walks an exception and everything chained to it (``raise ... from``, and the exception
being handled when another was raised, like DuckDB's "cannot rollback - no transaction is active"
on top of "No space left on device") and names the deepest cause it recognises, so the one line an
operator reads is the one that can be acted on.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Iterator

# Causes recognised by errno (OSError) or by the operating system's wording inside a DuckDB, SQLite
# or Polars message (they report the strerror text, not the errno). Order matters: the first match
# in the chain's deepest-first walk wins.
DISK_FULL = "disk full"
READ_ONLY = "read-only file system"
NO_PERMISSION = "permission denied"
TOO_LARGE = "file too large"
LOCKED = "warehouse locked by another process"
CONNECTION = "connection failed"
BUSY = "resource busy"
ERROR = "error"

_BY_ERRNO = {
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: DISK_FULL,
    errno.EROFS: READ_ONLY,
    errno.EACCES: NO_PERMISSION,
    errno.EPERM: NO_PERMISSION,
    errno.EFBIG: TOO_LARGE,
    errno.EAGAIN: BUSY,
    errno.EBUSY: BUSY,
    errno.EINTR: BUSY,
    errno.ECONNRESET: CONNECTION,
    errno.ECONNREFUSED: CONNECTION,
    errno.ECONNABORTED: CONNECTION,
    errno.ETIMEDOUT: CONNECTION,
    errno.EHOSTUNREACH: CONNECTION,
    errno.ENETUNREACH: CONNECTION,
}
_BY_TEXT = (
    ("no space left on device", DISK_FULL),
    ("disk quota exceeded", DISK_FULL),
    ("read-only file system", READ_ONLY),
    ("attempt to write a readonly database", READ_ONLY),
    ("permission denied", NO_PERMISSION),
    ("operation not permitted", NO_PERMISSION),
    ("file too large", TOO_LARGE),
    ("could not set lock on file", LOCKED),
    ("conflicting lock is held", LOCKED),
    ("database is locked", LOCKED),
    ("resource temporarily unavailable", BUSY),
    ("connection reset", CONNECTION),
    ("connection refused", CONNECTION),
)
TRANSIENT = frozenset({LOCKED, CONNECTION, BUSY})

# Messages that describe the aftermath of another failure, never its cause.
_AFTERMATH = ("no transaction is active", "database has been invalidated", "current transaction is aborted")

MAX_LINE = 400


@dataclass(frozen=True)
class Cause:
    kind: str  # one of the constants above
    transient: bool  # trying again later can succeed
    detail: str  # the message of the exception that says it, on one line

    @property
    def line(self) -> str:
        """What an operator reads: ``disk full: Could not write file "...": No space left on device``."""
        return self.detail if self.kind == ERROR else f"{self.kind}: {self.detail}"


def one_line(text: str, limit: int = MAX_LINE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def chain(exc, links: tuple[str, str] = ("__cause__", "__context__")) -> Iterator:
    """``exc`` and every error chained to it through ``links`` (an exception's cause and context;
    ``("cause", "context")`` for the error a run recorded), each once, outermost first."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(getattr(current, link) for link in links)


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return one_line(str(exc)) or type(exc).__name__


def _kind(exc: BaseException) -> str | None:
    if isinstance(exc, OSError) and exc.errno in _BY_ERRNO:
        return _BY_ERRNO[exc.errno]
    text = str(exc).lower()
    for needle, kind in _BY_TEXT:
        if needle in text:
            return kind
    if type(exc).__name__ in ("ConnectionError", "Timeout", "ConnectTimeout", "ReadTimeout") and \
            type(exc).__module__.startswith("requests"):
        return CONNECTION
    return None


def explain(exc: BaseException) -> Cause:
    """The cause of ``exc`` that an operator can act on (see the module docstring)."""
    links = list(chain(exc))
    for link in reversed(links):  # the deepest recognised cause is the real one
        kind = _kind(link)
        if kind is not None:
            return Cause(kind, kind in TRANSIENT, _message(link))
    for link in reversed(links):  # otherwise the deepest message that is not an aftermath
        text = _message(link)
        if text and not any(a in text.lower() for a in _AFTERMATH):
            return Cause(ERROR, False, text if text.startswith(type(link).__name__) else f"{type(link).__name__}: {text}")
    return Cause(ERROR, False, _message(exc))


def explain_text(messages: list[str]) -> Cause:
    """The same, for a failure known only by its messages, outermost first (a recorded step
    failure: Dagster keeps the chain's messages, not the exceptions)."""
    for text in reversed(messages):
        lowered = text.lower()
        for needle, kind in _BY_TEXT:
            if needle in lowered:
                return Cause(kind, kind in TRANSIENT, one_line(text))
    for text in reversed(messages):
        if text.strip() and not any(a in text.lower() for a in _AFTERMATH):
            return Cause(ERROR, False, one_line(text))
    return Cause(ERROR, False, one_line(messages[0]) if messages else "unknown error")

"""The token-level title diff over many pairs: in worker processes when there are enough, and
cached between runs (``TitleDiffCache``, keyed by the ordered pair of title keys and the diff's
code version) so an incremental night diffs only pairs with a new or changed title."""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines.core.resolution.runtime import map_in_processes, match_workers
from pipelines.core.resolution.titles import TitleComparison, compare_titles

# Title pairs to diff before the diff runs in worker processes (starting them costs ~1 s).
PARALLEL_DIFF_MIN = 20_000

def compare_many(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]], *, workers: int | None = None) -> list[TitleComparison]:
    """``compare_titles`` over many pairs of token lists, in order; in worker processes
    (``runtime.map_in_processes``) when there are enough pairs to repay starting them.
    ``workers`` (the setting ``SCHOLARHOUSE_MATCH_WORKERS``; 1: none) sets how many, by default
    :func:`runtime.match_workers`' choice."""
    workers = match_workers() if workers is None else workers
    if workers <= 1 or len(pairs) < PARALLEL_DIFF_MIN:
        return _compare_chunk(pairs)
    size = min(50_000, max(2_000, len(pairs) // (workers * 8)))
    chunks = (pairs[start : start + size] for start in range(0, len(pairs), size))
    out: list[TitleComparison] = []
    for diffs in map_in_processes(_compare_chunk, chunks, workers=workers,
                                  failure="title-diff worker processes failed; diffing in this process"):
        out.extend(diffs)
    return out


def _compare_chunk(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> list[TitleComparison]:
    return [compare_titles(a, b) for a, b in pairs]


TITLE_DIFF_SCHEMA = {"left_key": pl.String, "right_key": pl.String, "score": pl.Float64, "veto": pl.String,
                     "detail": pl.String, "version": pl.String}


def title_diff_version() -> str:
    """Fingerprint of the title diff's code (``titles.py`` and rapidfuzz's version): diffs cached
    by another version are not reused."""
    import hashlib
    import inspect
    import marshal

    import rapidfuzz

    from pipelines.core.resolution import titles

    try:
        code = inspect.getsource(titles).encode()
    except (OSError, TypeError):  # no source shipped (a zipped or compiled deployment): the bytecode
        code = b"".join(marshal.dumps(f.__code__) for f in vars(titles).values() if inspect.isfunction(f))
    return hashlib.sha256(code + rapidfuzz.__version__.encode()).hexdigest()[:16]


class TitleDiffCache:
    """Title diffs of earlier runs, reused by the next (incremental nights).

    ``compare_titles`` is a pure function of the two token lists, and a title key is its tokens
    joined by spaces, so a diff keyed by the ordered pair of title keys holds on every later night
    until the diff's code changes (``version``; other versions' rows are ignored). Most pairs
    repeat from night to night; only pairs with a new or changed title are diffed again.
    :meth:`frame` returns the diffs this run used — what the next run needs — so the cache follows
    the corpus rather than growing with its history. Lookups are joins on columnar frames: at
    millions of pairs, Python dicts of string pairs would cost gigabytes."""

    def __init__(self, frame: pl.DataFrame | None = None):
        self.version = title_diff_version()
        if frame is not None and frame.height:
            self._known = (
                frame.filter(pl.col("version") == self.version)
                .select(list(TITLE_DIFF_SCHEMA))
                .cast(TITLE_DIFF_SCHEMA)
                .unique(["left_key", "right_key"], keep="first")
            )
        else:
            self._known = pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        self._used: list[pl.DataFrame] = []
        self.reused = 0
        self.computed = 0

    def compare(self, left_keys: list[str], right_keys: list[str], tokens, *, workers: int | None = None) -> pl.DataFrame:
        """``score``, ``veto``, ``detail`` of each ordered pair of title keys, in order: cached,
        else diffed now. ``tokens(positions)`` returns the token lists of the pairs at those
        positions (the matcher holds them; re-splitting millions of keys would cost more)."""
        wanted = pl.DataFrame({"left_key": left_keys, "right_key": right_keys}, schema={"left_key": pl.String, "right_key": pl.String})
        if self._known.height:
            found = wanted.join(self._known.drop("version"), on=["left_key", "right_key"], how="left", maintain_order="left")
        else:
            found = wanted.with_columns(
                score=pl.lit(None, pl.Float64), veto=pl.lit(None, pl.String), detail=pl.lit(None, pl.String))
        missing = found["score"].is_null()
        n_missing = int(missing.sum())
        if n_missing:
            where = np.flatnonzero(missing.to_numpy())
            fresh = compare_many(tokens(where), workers=workers)
            computed = pl.DataFrame(
                {"score": [c.score for c in fresh], "veto": [c.veto for c in fresh], "detail": [c.detail for c in fresh]},
                schema={"score": pl.Float64, "veto": pl.String, "detail": pl.String},
            )
            del fresh
            positions = pl.Series(where)
            found = found.with_columns(
                found["score"].scatter(positions, computed["score"]),
                found["veto"].scatter(positions, computed["veto"]),
                found["detail"].scatter(positions, computed["detail"]),
            )
        self._used.append(found.with_columns(version=pl.lit(self.version)))
        self.reused += found.height - n_missing
        self.computed += n_missing
        return found.select("score", "veto", "detail")

    def finish(self, *, keep_earlier: bool = False) -> pl.DataFrame:
        """:meth:`frame`, and let go of the earlier runs' diffs: call once matching is done (at
        100k profiles each copy of the diffs is about a gigabyte, which the author matcher can use).
        ``keep_earlier``: also keep the earlier runs' diffs (a night that compared only a subset
        of the corpus: the next night still needs the rest)."""
        if keep_earlier and self._known.height:
            self._used.append(self._known)
        used = self.frame()
        self._known = pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        self._used = [used]
        return used

    def frame(self) -> pl.DataFrame:
        """The diffs used by this run (``TITLE_DIFF_SCHEMA``), one row per pair, in key order."""
        if not self._used:
            return pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        return (
            pl.concat(self._used).select(list(TITLE_DIFF_SCHEMA)).cast(TITLE_DIFF_SCHEMA)
            .unique(["left_key", "right_key"], keep="first").sort("left_key", "right_key")
        )

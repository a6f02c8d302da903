"""How the matchers run inside the Python process.

The matchers allocate millions of small containers (token tuples, name sets, pair rows) that
never form reference cycles. Python's cyclic garbage collector still re-traverses every live
container as they pile up: at 600k author mentions that was 28% of the matcher's time, and more
at 100k profiles where ~10 GB of such objects are alive. Collection is paused while a matcher
runs; reference counting still frees everything as usual.

Both matchers also spread their independent pieces of work over worker processes
(:func:`map_in_processes`): the paper matcher its title diffs, the author matcher its batches of
independent components. Python code holds one core per process, and the machine has more.
"""

from __future__ import annotations

import functools
import gc
import os
import warnings
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def without_cycle_collection(fn):
    """Run ``fn`` with the cyclic garbage collector paused (restored afterwards, even on error)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return run


@dataclass(frozen=True)
class MatchOptions:
    """How the matchers run, from the settings (``pipelines/settings.py``); the defaults are theirs.
    None of it changes a result, only its cost — except ``incremental=False``, which resolves
    everything every night (the same result, the full night's cost)."""

    workers: int | None = None        # SCHOLARHOUSE_MATCH_WORKERS; None: one per core, at most 8
    author_batch: int | None = None   # SCHOLARHOUSE_AUTHOR_BATCH; None: authors.BATCH_MENTIONS
    incremental: bool = True          # SCHOLARHOUSE_INCREMENTAL_RESOLUTION


def match_workers(configured: int | None = None) -> int:
    """Worker processes a matcher may use: ``configured`` (the setting ``SCHOLARHOUSE_MATCH_WORKERS``;
    1: none), by default one per core, at most 8."""
    if configured:
        return max(1, int(configured))
    # The cores this process may run on (a container's CPU set), not the machine's.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, 8)


def map_in_processes(fn: Callable[[T], R], items: Iterable[T], *, workers: int, failure: str) -> Iterator[R]:
    """``fn(item)`` for every item, yielded in the items' order, computed in ``workers`` spawned
    processes (``pipelines.workers.spawned_pool``: never forked, and gone when this process dies). ``fn`` must be a
    module-level function. At most two items per worker are in flight, so a large input is never
    pickled all at once. If a worker dies (out of memory; or a caller script without an
    ``if __name__ == "__main__"`` guard, which spawned workers re-run), the items not yet done
    are computed in this process instead, with a ``RuntimeWarning`` saying ``failure``."""
    items = iter(items)
    if workers <= 1:
        yield from map(fn, items)
        return
    from concurrent.futures.process import BrokenProcessPool

    from pipelines.workers import spawned_pool

    pending: deque = deque()  # (item, future), oldest first
    unsent: list = []  # the item being submitted
    pool = spawned_pool(workers)
    try:
        for item in items:
            unsent = [item]
            pending.append((item, pool.submit(fn, item)))
            unsent = []
            if len(pending) >= 2 * workers:
                result = pending[0][1].result()
                pending.popleft()
                yield result
        while pending:
            result = pending[0][1].result()
            pending.popleft()
            yield result
    except BrokenProcessPool:
        pool.shutdown(wait=False, cancel_futures=True)
        warnings.warn(failure, RuntimeWarning, stacklevel=3)
        for item in [item for item, _ in pending] + unsent:
            yield fn(item)
        yield from map(fn, items)
    except BaseException:
        # An error in one item (or the caller stopping early) surfaces now, not after the
        # other items in flight have finished.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)

"""Stage timings and peak memory, reported by the real code paths (asset metadata, `make bench`).

Peak memory per stage uses Linux's resettable high-water mark (writing "5" to
/proc/self/clear_refs resets VmHWM), so each stage reports its own peak resident set, not the
process's all-time peak. Elsewhere the figure is the process peak so far (still an upper bound).
Worker processes (parse shards, title diffs, author batches) have memory of their own: while a
stage runs, a sampling thread adds up this process's and its child processes' resident sets
every half second, and the stage also reports that peak (``peak_with_workers_mb``; a sample: it
can miss a spike shorter than half a second, and counts shared library pages once per process).
No Dagster imports.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kb(field_name: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak_memory() -> bool:
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def peak_memory_mb() -> float | None:
    kb = _status_kb("VmHWM")
    if kb is None:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return kb / 1024.0


def _rss_kb(pid: int | str) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _child_pids() -> list[str]:
    """This process's children: from /proc/self/task/*/children, or where the kernel does not
    provide that file, by scanning every process's parent id."""
    pids: list[str] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    listed = False
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids += f.read().split()
            listed = True
        except OSError:
            continue
    if listed:
        return pids
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
                if f.read().rsplit(")", 1)[1].split()[1] == me:
                    pids.append(entry)
        except (OSError, IndexError):
            continue
    return pids


class _WorkersSampler:
    """Peak of (this process + its child processes) resident memory, sampled on a thread."""

    def __init__(self, interval_s: float = 0.5):
        self.interval_s = interval_s
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def _sample(self) -> None:
        total = _rss_kb("self") + sum(_rss_kb(pid) for pid in _child_pids())
        self.peak_kb = max(self.peak_kb, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> "_WorkersSampler":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


@dataclass
class StageTimer:
    stages: dict[str, dict] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str, rows: int | None = None) -> Iterator[dict]:
        """Time a block; the yielded dict may be given ``rows`` later (for rows/s).

        Timing the same stage again (a batch loop) adds up seconds and rows and keeps the peak.
        """
        record: dict = {"rows": rows}
        reset_peak_memory()
        start = time.perf_counter()
        sampler = _WorkersSampler()
        try:
            with sampler:
                yield record
        finally:
            self._record(name, time.perf_counter() - start, record.get("rows"), workers_peak_mb=sampler.peak_kb / 1024.0)

    def add(self, name: str, seconds: float, rows: int | None = None) -> None:
        """Record time measured by the caller (e.g. a loop's wall time minus its nested stages)."""
        self._record(name, max(0.0, seconds), rows)

    def _record(self, name: str, seconds: float, rows: int | None, workers_peak_mb: float = 0.0) -> None:
        peak = peak_memory_mb() or 0.0
        total = self.stages.setdefault(name, {"rows": 0, "seconds": 0.0, "peak_mb": 0.0, "peak_with_workers_mb": 0.0})
        total["seconds"] = round(total["seconds"] + seconds, 3)
        total["rows"] = (total["rows"] or 0) + (rows or 0)
        total["peak_mb"] = round(max(total["peak_mb"], peak), 1)
        # Never below the process's own high-water mark (the sampler can miss a short spike).
        total["peak_with_workers_mb"] = round(max(total["peak_with_workers_mb"], peak, workers_peak_mb), 1)
        if total["rows"]:
            total["rows_per_s"] = round(total["rows"] / max(total["seconds"], 1e-9), 1)

    def summary(self) -> dict[str, dict]:
        return dict(self.stages)

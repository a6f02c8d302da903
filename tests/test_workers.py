"""Worker pools die with the process that started them: a parent killed for memory (or with SIGKILL
from the UI) leaves no workers behind holding memory and cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A parent that starts a one-worker pool, prints the worker's PID, gives it two minutes of work
# and waits; the test kills it with SIGKILL (no clean-up runs, as with the kernel's OOM killer).
_PARENT = textwrap.dedent("""
    import os, time
    from pipelines.workers import spawned_pool

    pool = spawned_pool(1)
    print(pool.submit(os.getpid).result(), flush=True)
    pool.submit(time.sleep, 120)
    time.sleep(120)
""")


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting to be reaped has exited too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_workers_exit_when_their_parent_is_killed():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    worker = None
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.5)  # the worker is now inside its two-minute item
        assert not _gone(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15
        while not _gone(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone(worker), "the worker outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if worker is not None and not _gone(worker):
            os.kill(worker, signal.SIGKILL)  # a failing run leaves nothing behind either


def test_a_worker_started_after_its_parent_died_exits_at_once(monkeypatch):
    from pipelines import workers

    exits = []
    monkeypatch.setattr(workers.os, "_exit", lambda status: exits.append(status))
    workers.exit_when_orphaned(os.getppid() + 1 if os.getppid() != 1 else 2, interval=3600)
    assert exits == [workers.ORPHANED_EXIT_STATUS]


def test_parsing_and_matching_pools_watch_their_parent(monkeypatch):
    """Both places that start worker processes start them through spawned_pool's initializer."""
    import concurrent.futures

    from pipelines import workers
    from pipelines.core.resolution.runtime import map_in_processes
    from pipelines.staging.rows import parse_batches

    made = []

    class RecordingPool:
        def __init__(self, *args, **kwargs):
            made.append(kwargs)

        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def shutdown(self, *args, **kwargs): ...

        def submit(self, fn, item):
            future = concurrent.futures.Future()
            future.set_result(fn(item))
            return future

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    assert list(map_in_processes(abs, [-1, 2], workers=2, failure="x")) == [1, 2]
    assert list(parse_batches(iter([]), workers=2)) == []
    assert len(made) == 2
    for kwargs in made:
        assert kwargs["initializer"] is workers.exit_when_orphaned
        assert kwargs["initargs"] == (os.getpid(),)
        assert kwargs["mp_context"].get_start_method() == "spawn"

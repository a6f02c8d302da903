"""Stage timings report their peak memory, worker processes included."""

import os
import subprocess
import sys

import pytest

from pipelines.timing import StageTimer


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads Linux /proc")
def test_a_stage_reports_its_worker_processes_memory_too():
    timer = StageTimer()
    before = _rss_mb()
    with timer.stage("work", rows=10):
        # A child process that holds ~300 MB for a second (the sampler looks every half second).
        subprocess.run([sys.executable, "-c", "import time; b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"],
                       check=True)
    work = timer.summary()["work"]
    assert work["rows"] == 10 and work["seconds"] >= 1.5
    # This process held about `before` throughout; the child added ~300 MB beside it.
    assert work["peak_with_workers_mb"] >= before + 250


def test_stages_timed_again_add_up_and_keep_the_peak():
    timer = StageTimer()
    for rows in (3, 4):
        with timer.stage("batch", rows=rows):
            pass
    batch = timer.summary()["batch"]
    assert batch["rows"] == 7 and batch["peak_with_workers_mb"] >= batch["peak_mb"] > 0

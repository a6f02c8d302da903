"""Stage timings report their peak memory, worker processes included."""

import subprocess
import sys

from pipelines.profiling import StageTimer


def test_a_stage_reports_its_worker_processes_memory_too():
    timer = StageTimer()
    with timer.stage("work", rows=10):
        # A child process that holds ~300 MB for a second (the sampler looks every half second).
        subprocess.run([sys.executable, "-c", "import time; b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"],
                       check=True)
    work = timer.summary()["work"]
    assert work["rows"] == 10 and work["seconds"] >= 1.5
    assert work["peak_with_workers_mb"] >= work["peak_mb"] + 250


def test_stages_timed_again_add_up_and_keep_the_peak():
    timer = StageTimer()
    for rows in (3, 4):
        with timer.stage("batch", rows=rows):
            pass
    batch = timer.summary()["batch"]
    assert batch["rows"] == 7 and batch["peak_with_workers_mb"] >= batch["peak_mb"] > 0

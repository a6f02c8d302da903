"""Worker process pools that die with the process that started them.

Parsing (``staging/rows.py``) and both matchers (``core/resolution/runtime.py``) spread CPU-bound
work over spawned worker processes. When the parent dies without shutting its pool down — killed
for memory at 100k profiles, or a run terminated from the Dagster UI with SIGKILL — the workers
are left behind: each is busy with its item and then waits forever on a queue that its siblings
keep open, holding memory and a share of a core until someone kills it by hand (seen in
``make bench``: two author workers of a killed night still running 20 minutes later).

Every worker here watches the process that started it and exits as soon as that process is gone
(its parent PID changes when it is re-parented). A thread polling ``os.getppid`` works on every
POSIX system and has no race with the spawn; ``PR_SET_PDEATHSIG`` would be Linux-only and fires
when the *thread* that started the worker ends, which a pool's manager thread may do.
"""

from __future__ import annotations

import os
import threading
import time

# How often a worker looks for its parent. Exiting within a second or two of the parent is enough;
# the check is one system call.
PARENT_CHECK_SECONDS = 1.0
# The exit status of a worker that left because its parent was gone (EX_SOFTWARE-like, not 0).
ORPHANED_EXIT_STATUS = 70


def spawned_pool(workers: int):
    """A ``ProcessPoolExecutor`` of ``workers`` spawned processes (never forked: the parent holds
    Polars' and DuckDB's threads and may hold an open DuckDB connection) that exit when this
    process dies."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=exit_when_orphaned, initargs=(os.getpid(),))


def exit_when_orphaned(parent_pid: int, interval: float = PARENT_CHECK_SECONDS) -> None:
    """Run in a worker as it starts: exit now if ``parent_pid`` is no longer this process's parent,
    else start a daemon thread that exits the worker (``os._exit``: no clean-up is owed to a
    parent that is gone) once it is."""
    if os.getppid() != parent_pid:
        os._exit(ORPHANED_EXIT_STATUS)

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent_pid:
                os._exit(ORPHANED_EXIT_STATUS)

    threading.Thread(target=watch, name="exit-when-orphaned", daemon=True).start()

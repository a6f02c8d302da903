"""How the matchers run inside the Python process.

The matchers allocate millions of small containers (token tuples, name sets, pair rows) that
never form reference cycles. Python's cyclic garbage collector still re-traverses every live
container as they pile up: at 600k author mentions that was 28% of the matcher's time, and more
at 100k profiles where ~10 GB of such objects are alive. Collection is paused while a matcher
runs; reference counting still frees everything as usual.
"""

from __future__ import annotations

import functools
import gc


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

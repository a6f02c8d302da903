"""How the matchers run: worker processes keep order, and a dead pool is not fatal."""

import pytest

from pipelines.core.resolution.runtime import map_in_processes, match_workers


def test_worker_processes_yield_results_in_the_items_order():
    items = [-5, 3, -1, 8, 0, -13, 21]
    # abs is picklable and importable in a spawned worker.
    assert list(map_in_processes(abs, items, workers=2, failure="x")) == [abs(i) for i in items]
    assert list(map_in_processes(abs, iter(items), workers=1, failure="x")) == [abs(i) for i in items]


def test_items_not_done_when_the_pool_breaks_are_done_here(monkeypatch):
    import concurrent.futures
    from concurrent.futures.process import BrokenProcessPool

    class PoolThatBreaksOnThirdSubmit:
        submitted = 0

        def __init__(self, *args, **kwargs): ...
        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def shutdown(self, *args, **kwargs): ...

        def submit(self, fn, item):
            type(self).submitted += 1
            if type(self).submitted == 3:
                raise BrokenProcessPool("worker died")
            future = concurrent.futures.Future()
            future.set_result(fn(item))
            return future

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", PoolThatBreaksOnThirdSubmit)
    with pytest.warns(RuntimeWarning, match="doing it here"):
        out = list(map_in_processes(abs, range(-6, 0), workers=2, failure="workers died; doing it here"))
    assert out == [6, 5, 4, 3, 2, 1]  # nothing lost, nothing twice, in order


def test_an_error_in_a_worker_reaches_the_caller():
    with pytest.raises(ValueError):
        list(map_in_processes(int, ["1", "2", "x", "4"], workers=2, failure="x"))


def test_worker_count_follows_the_setting():
    from pipelines.settings import Settings

    assert match_workers(Settings.from_env({"SCHOLARHOUSE_MATCH_WORKERS": "3"}).match_workers) == 3
    assert match_workers(Settings.from_env({"SCHOLARHOUSE_MATCH_WORKERS": "0"}).match_workers) == 1
    assert 1 <= match_workers(Settings.from_env({}).match_workers) <= 8

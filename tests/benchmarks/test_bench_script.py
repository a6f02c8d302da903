"""scripts/bench.py: the 1 % nights run while the bench holds nothing of the full night's core
build (at 100k its frames, ~10 GB, and a 1 % night's own process outgrew a 24 GB machine: the
kernel killed the night), and the full night's figures are printed before the 1 % nights run."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_script", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_one_percent_nights_run_without_the_full_nights_core_build(tmp_path, monkeypatch, capsys):
    from pipelines.core.tables import CoreTables

    bench = _bench()
    seen = []

    def night(wh, captures, day, exports, truth):  # stands in for the 1 % night's own process
        gc.collect()
        seen.append(sum(isinstance(o, CoreTables) for o in gc.get_objects()))
        return {"end_to_end_s": 1.0, "stages": {}, "warehouse_mb": 0.0, "quality": {}}

    monkeypatch.setattr(bench, "night_in_fresh_process", night)
    result = bench.bench_size(40, tmp_path, seed=0, splink=False, incremental_share=0.05, incremental_nights=1)
    assert seen == [0]
    assert result["full"]["end_to_end_s"] > 0
    assert "full night at 40:" in capsys.readouterr().out

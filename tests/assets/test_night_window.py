"""One partition window per run: every step learns its run's night from ``night_window`` and only
there; a ranged run (which the job refuses) fails in one line instead of looping over days."""

# No ``from __future__ import annotations``: Dagster reads the asset's context annotation.
import re
from datetime import date
from pathlib import Path

import dagster as dg
import pytest

from pipelines.assets.common import NightWindow, night_window
from pipelines.assets.partitions import daily_partitions

ROOT = Path(__file__).resolve().parents[2]


@dg.asset(partitions_def=daily_partitions)
def _which_night(context: dg.AssetExecutionContext) -> NightWindow:
    return night_window(context)


def test_a_run_builds_its_one_night():
    night = _which_night(dg.build_asset_context(partition_key="2026-11-20"))
    assert night == NightWindow(date(2026, 11, 20))
    assert night.key == "2026-11-20"


def test_a_ranged_run_fails_in_one_line():
    context = dg.build_asset_context(partition_key_range=dg.PartitionKeyRange("2026-11-18", "2026-11-20"))
    with pytest.raises(dg.Failure) as raised:
        _which_night(context)
    assert raised.value.description == (
        "a run builds one night, this one covers 3 partitions (2026-11-18...2026-11-20): "
        "launch a backfill instead (one run per night)")


def test_the_night_is_worked_out_in_one_place():
    """No step reads the partition from its context but through night_window."""
    readers = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "pipelines").rglob("*.py")
        if re.search(r"\bcontext\.(partition_keys?|partition_key_range|partition_time_window)\b", path.read_text())
    }
    assert readers == {"pipelines/assets/common.py"}

"""Every asset is partitioned by capture date (daily, UTC).

``end_offset=1`` makes today's partition exist during today, so the nightly schedule and
``make demo`` can run the current day. Backfills can go back to START_DATE.
"""

from __future__ import annotations

from datetime import date

import dagster as dg

START_DATE = "2025-01-01"
daily_partitions = dg.DailyPartitionsDefinition(start_date=START_DATE, end_offset=1, timezone="UTC")


def partition_dates(context: dg.AssetExecutionContext) -> list[date]:
    """Every partition date a run covers: one for a normal run, several for a ranged backfill run.

    Assets loop over these instead of assuming a single key.
    """
    return sorted(date.fromisoformat(key) for key in context.partition_keys)

"""Every asset is partitioned by capture date (daily, UTC).

``end_offset=1`` makes today's partition exist during today, so the nightly schedule and
``make demo`` can run the current day. Backfills can go back to START_DATE, one run per night: a
step learns its run's night from ``night_window`` (pipelines/assets/common.py), and only there.
"""

from __future__ import annotations

import dagster as dg

START_DATE = "2025-01-01"
daily_partitions = dg.DailyPartitionsDefinition(start_date=START_DATE, end_offset=1, timezone="UTC")


"""The one entry point: ``defs`` (loaded by workspace.yaml, ``dg dev`` and ``dg launch``).

Nothing here opens DuckDB or reads files: paths resolve at run time, so the long-lived code
server never holds the warehouse lock.
"""

from __future__ import annotations

import dagster as dg

from pipelines.assets import core, describe, enrichment, exports, ingest, marts, staging
from pipelines.assets.checks import build_quality_checks
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import EnrichmentResource, WarehouseResource, page_source_from_env
from pipelines.resources.great_expectations import GreatExpectationsResource
from pipelines.orchestration.executors import build_executor, default_execution
from pipelines.settings import Settings

# Every asset, one module per layer, with what the UI shows about it: column schemas from the DDL and
# the data dictionary, owners, tags, code versions, freshness policies (pipelines/assets/describe.py).
all_assets = describe.load([ingest, staging, enrichment, core, marts, exports])

# The default run config: one process per run (see the executor note below), unless
# SCHOLARHOUSE_EXECUTOR names another executor (read here, as the definitions load: the code server,
# the Celery workers and a run's process must see the same value). A run can switch with its own
# config, e.g. {"execution": {"config": {"multiprocess": {"max_concurrent": N}}}} in the launchpad or in
# `dg launch --config`, and then parses its shards side by side; {"celery": {"broker": ...}} hands every
# step to Celery workers (deploy/celery/). (`dg launch --partition` does not apply a partitioned job's
# config, so the executor's own default follows the setting too.)


def default_execution_config() -> dict:
    """The executor's config a run gets when its own config names none (SCHOLARHOUSE_EXECUTOR)."""
    executor = Settings.one_from_env("executor")
    broker = Settings.one_from_env("celery_broker") if executor == "celery" else None
    return default_execution(executor, broker)


refresh_job = dg.define_asset_job(
    "nightly_refresh",
    selection=dg.AssetSelection.all(),
    partitions_def=daily_partitions,
    config={"execution": {"config": default_execution_config()}},
    executor_def=build_executor(default_execution_config()),  # in process unless configured (orchestration/executors.py)
    description="Everything for one capture date: land pages, parse, resolve, build marts and exports.",
)

nightly_schedule = dg.build_schedule_from_partitioned_job(
    refresh_job,
    hour_of_day=2,
    minute_of_hour=0,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly at 02:00 UTC: refresh the day's partition with nobody watching.",
)


def build_resources() -> dict:
    return {
        # SCHOLARHOUSE_SOURCE=captures (default) | live: only the choice is read here, nothing is fetched.
        "page_source": page_source_from_env(),
        "warehouse_db": WarehouseResource(),
        "gx": GreatExpectationsResource(),
        "enrichment": EnrichmentResource(),  # on when SCHOLARHOUSE_CONTACT is set at run time
    }


defs = dg.Definitions(
    assets=all_assets,
    asset_checks=build_quality_checks(all_assets),
    jobs=[refresh_job],
    schedules=[nightly_schedule],
    resources=build_resources(),
    # Every step that touches DuckDB is in the one-slot "warehouse" pool; only the parse shards
    # (staging) can run side by side. In-process is the default, for UI materialisations and
    # asset backfills too: a multiprocess run pays a fresh Python (dagster, Polars, DuckDB, Great
    # Expectations imports) per step, which only pays off when a night has many parse shards.
    # nightly_refresh uses scholarhouse_executor (pipelines/orchestration/executors.py), so one of its runs can
    # choose multiprocess, celery or k8s in its run config (or SCHOLARHOUSE_EXECUTOR its default):
    # the same definitions run on Celery workers and Kubernetes (deploy/, docs/scaling.md).
    # The pool applies to every executor: each step claims the slot from the instance.
    executor=dg.in_process_executor,
)

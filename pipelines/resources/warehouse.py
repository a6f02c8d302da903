"""The warehouse resource: where the DuckDB file lives, and explicit, idempotent writes.

Paths resolve at run time (never at definition load), and DuckDB is opened only inside a run,
so the long-lived code server never holds the file lock.

As a run starts, the resource also clears what dead runs left in the instance (a killed run's
claimed ``warehouse`` pool slot would block every later run) and, in an in-process run, keeps a
guard beside the run while its steps wait for the pool: ``pipelines/orchestration/runs.py``.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg
import duckdb
from pydantic import PrivateAttr

from pipelines import warehouse
from pipelines.orchestration import runs
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.settings import Settings


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse file. Default: ``$SCHOLARHOUSE_WAREHOUSE`` or ``warehouse/scholarhouse.duckdb``.

    ``settings()`` is the run's settings (``pipelines/settings.py``), read when asked (at run time),
    with this resource's ``path`` as the warehouse; the assets take their values from it."""

    path: Optional[str] = None
    # How long a step may wait for the warehouse pool while a live run holds it, before the run fails
    # with the holder named. Default: $SCHOLARHOUSE_POOL_WAIT_TIMEOUT (seconds) or 6 hours.
    pool_wait_timeout_s: Optional[float] = None

    _guard: Optional[runs.RunGuard] = PrivateAttr(default=None)

    def settings(self) -> Settings:
        return Settings.from_env().with_warehouse(self.path)

    def resolved_path(self) -> Path:
        return self.settings().warehouse

    @property
    def exports_dir(self) -> Path:
        return self.settings().exports_dir

    @property
    def analytics_path(self) -> Path:
        return self.settings().analytics_path

    def match_options(self) -> MatchOptions:
        """How the matchers run tonight (the settings' workers, author batch, incremental switch)."""
        s = self.settings()
        return MatchOptions(workers=s.match_workers, author_batch=s.author_batch, incremental=s.incremental_resolution)

    def resolved_pool_wait_timeout_s(self) -> float:
        return self.pool_wait_timeout_s if self.pool_wait_timeout_s is not None else self.settings().pool_wait_timeout_s

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # The job's executor does the same before any step (pipelines/orchestration/runs.py, GuardedExecutor); this is
        # for runs that bypass it (execute_in_process, dg.materialize: `make demo`, the UI's asset
        # materialisations), which set up their resources in the process that runs the steps.
        instance, run = context.instance, context.dagster_run
        if instance is None or run is None or not runs.is_local(instance):
            return
        for line in runs.free_dead_runs(instance, current_run_id=run.run_id):
            context.log.warning(line)
        if runs.executes_steps_here(instance, run.run_id):
            self._guard = runs.start_guard(instance, run.run_id, wait_timeout_s=self.resolved_pool_wait_timeout_s())

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._guard is not None:
            self._guard.stop()
            self._guard = None

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        s = self.settings()
        with warehouse.connect(s.warehouse, read_only=read_only, memory_limit=s.duckdb_memory_limit) as con:
            if not read_only:
                warehouse.ensure_schema(con)
            yield con

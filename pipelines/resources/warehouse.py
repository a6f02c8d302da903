"""The warehouse resource: where the DuckDB file lives, and explicit, idempotent writes.

Paths resolve at run time (never at definition load), and DuckDB is opened only inside a run,
so the long-lived code server never holds the file lock.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg
import duckdb

from pipelines import warehouse


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse file. Default: ``$SCHOLARHOUSE_WAREHOUSE`` or ``warehouse/scholarhouse.duckdb``."""

    path: Optional[str] = None

    def resolved_path(self) -> Path:
        return Path(self.path) if self.path else warehouse.default_warehouse_path()

    @property
    def exports_dir(self) -> Path:
        return Path(os.environ.get("SCHOLARHOUSE_EXPORTS") or self.resolved_path().parent / "exports")

    @property
    def analytics_path(self) -> Path:
        return self.resolved_path().parent / "analytics.duckdb"

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with warehouse.connect(self.resolved_path(), read_only=read_only) as con:
            if not read_only:
                warehouse.ensure_schema(con)
            yield con

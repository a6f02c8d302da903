"""Great Expectations as a Dagster resource: a thin wrapper over ``pipelines.quality``.

It says where the suites live and how many offending rows a failure shows; the validation itself
(GX 1.x in ephemeral mode, one context per process) is in ``pipelines.quality``. Nothing here
imports GX, so loading the definitions stays quick; GX is imported the first time a check runs.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Iterable, Optional

import dagster as dg

from pipelines import quality


class GreatExpectationsResource(dg.ConfigurableResource):
    """Expectation suites from ``expectations/`` (one per warehouse table), run with GX 1.x.

    ``suites_dir`` defaults to the project's ``expectations/`` folder; ``sample_rows`` caps the
    offending rows shown per failed expectation.
    """

    suites_dir: Optional[str] = None
    sample_rows: int = quality.SAMPLE_ROWS

    def resolved_dir(self) -> Path:
        return Path(self.suites_dir) if self.suites_dir else quality.EXPECTATIONS_DIR

    def suites(self) -> dict[str, quality.Suite]:
        return quality.load_suites(self.resolved_dir())

    def suite(self, table: str) -> quality.Suite:
        path = self.resolved_dir() / f"{table}.json"
        if not path.exists():
            raise FileNotFoundError(f"no expectation suite for {table}: expected {path}")
        return quality.load_suite(path)

    def validate(
        self,
        con,
        table: str,
        *,
        partition_date: Optional[date] = None,
        severities: Iterable[str] = quality.SEVERITIES,
    ) -> dict[str, quality.ValidationReport]:
        """Validate ``table``'s suite on the warehouse connection ``con``: a partitioned suite on the
        run's night (``partition_date``), a whole-table suite on the table as it stands."""
        suite = self.suite(table)
        severities = tuple(severities)
        if not suite.partitioned:
            return quality.run_suite(con, suite, severities=severities, sample_rows=self.sample_rows)
        if partition_date is None:
            raise ValueError(f"{table}: its suite validates one partition, but the run has no partition")
        return quality.run_suite(con, suite, partition_date=partition_date, severities=severities,
                                 sample_rows=self.sample_rows)

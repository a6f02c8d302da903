"""Shared fixtures. Tests never touch the network, the real warehouse or the user's DAGSTER_HOME."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
SAMPLES = PROJECT / "pipelines" / "samples"
SAMPLE_DATE = "2026-11-21"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """No test reads the developer's environment by accident."""
    for var in ("SCHOLARHOUSE_CAPTURES", "SCHOLARHOUSE_WAREHOUSE", "SCHOLARHOUSE_DATE", "SCHOLARHOUSE_OVERRIDES",
                "SCHOLARHOUSE_EXPORTS", "SCHOLARHOUSE_CONTACT", "SCHOLARHOUSE_SOURCE", "DAGSTER_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SCHOLARHOUSE_OVERRIDES", str(tmp_path_factory.getbasetemp() / "no-overrides.toml"))


@pytest.fixture
def samples_dir() -> Path:
    return SAMPLES


@pytest.fixture
def instance(tmp_path, monkeypatch):
    """A real, persistent Dagster instance configured by the project's dagster_home.yaml."""
    import dagster as dg

    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        yield instance


def build_warehouse(captures: Path, warehouse: Path, partition: str = SAMPLE_DATE, instance=None):
    """Run the real nightly job for one partition into ``warehouse``; returns the run result."""
    import dagster as dg

    from pipelines.definitions import defs
    from pipelines.resources import CapturesFolderResource, WarehouseResource

    job = defs.resolve_job_def("nightly_refresh")
    return job.execute_in_process(
        partition_key=partition,
        instance=instance or dg.DagsterInstance.ephemeral(),
        resources={
            "page_source": CapturesFolderResource(path=str(captures)),
            "warehouse_db": WarehouseResource(path=str(warehouse)),
        },
        raise_on_error=False,
    )


@pytest.fixture(scope="session")
def demo_warehouse(tmp_path_factory) -> Path:
    """The demo's warehouse, built once per test session from the bundled samples (read it only)."""
    for var in ("SCHOLARHOUSE_CONTACT", "SCHOLARHOUSE_SOURCE"):  # never enrich live from a test
        os.environ.pop(var, None)
    os.environ["SCHOLARHOUSE_OVERRIDES"] = str(tmp_path_factory.getbasetemp() / "no-overrides.toml")
    path = tmp_path_factory.mktemp("demo") / "scholarhouse.duckdb"
    result = build_warehouse(SAMPLES, path)
    assert result.success, "the demo run failed"
    return path

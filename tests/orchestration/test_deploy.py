"""Deployment as configuration (deploy/, pipelines/orchestration/executors.py): the executor is chosen by a setting or a
run's config, in-process by default; the instance, Celery and Kubernetes files load, are valid for the
same job and name the same code location. No server is started here (`make cluster-demo` runs one)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config

from pipelines.orchestration.executors import CELERY_CONFIG, EXECUTORS, build_executor, default_execution, executor_kind
from pipelines.settings import DEFAULT_CELERY_BROKER, EXECUTOR_CHOICES, Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BROKER = "redis://:secret@10.0.0.5:6380/0"
PG_ENV = {"DAGSTER_PG_HOST": "db.internal", "DAGSTER_PG_PORT": "6543", "DAGSTER_PG_USER": "dagster",
          "DAGSTER_PG_PASSWORD": "pw", "DAGSTER_PG_DB": "dagster"}


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from pipelines.definitions import defs

    return defs


def load(path: str) -> dict:
    return yaml.safe_load((DEPLOY / path).read_text())


def test_the_executor_setting_defaults_to_one_process():
    s = Settings.from_env({})
    assert (s.executor, s.celery_broker) == ("in_process", DEFAULT_CELERY_BROKER)
    assert Settings.from_env({"SCHOLARHOUSE_EXECUTOR": " Celery "}).executor == "celery"
    assert set(EXECUTOR_CHOICES) == set(EXECUTORS)
    with pytest.raises(SettingsError, match="SCHOLARHOUSE_EXECUTOR must be one of in_process, multiprocess, celery, k8s"):
        Settings.from_env({"SCHOLARHOUSE_EXECUTOR": "ray"})
    with pytest.raises(SettingsError, match="SCHOLARHOUSE_CELERY_BROKER must be a broker URL"):
        Settings.from_env({"SCHOLARHOUSE_CELERY_BROKER": "localhost"})


def test_the_nightly_job_runs_in_process_unless_configured(defs):
    job = defs.resolve_job_def("nightly_refresh")
    assert job.executor_def.name == "scholarhouse_executor"
    assert job.executor_def.config_schema.default_value == {"in_process": {}}
    assert executor_kind(job.partitioned_config.get_run_config_for_partition_key("2026-11-21")) == "in_process"
    assert executor_kind({}) == "in_process" and executor_kind({}, default="celery") == "celery"
    # the setting's choice, as definitions.py builds it: the executor's own default follows it too
    celery = build_executor(default_execution("celery", BROKER))
    assert celery.config_schema.default_value == {"celery": {"broker": BROKER, "backend": BROKER}}
    with pytest.raises(ValueError, match="unknown executor"):
        default_execution("ray")


def _job(defs) -> dg.JobDefinition:
    return defs.resolve_job_def("nightly_refresh")


def test_the_instance_yaml_is_postgres_with_the_laptops_pool(tmp_path, monkeypatch):
    for k, v in PG_ENV.items():
        monkeypatch.setenv(k, v)
    shutil.copy(DEPLOY / "instance" / "dagster.yaml", tmp_path / "dagster.yaml")
    config, _ = dagster_instance_config(str(tmp_path))  # checked against Dagster's instance schema
    pg = config["storage"]["postgres"]["postgres_db"]
    assert pg["hostname"] == {"env": "DAGSTER_PG_HOST"} and pg["scheme"] == "postgresql+psycopg2"
    laptop = yaml.safe_load((ROOT / "dagster_home.yaml").read_text())
    assert config["concurrency"] == laptop["concurrency"]  # one warehouse slot, op granularity, one run
    assert config["concurrency"]["pools"]["default_limit"] == 1


def test_the_celery_files_select_celery_for_the_same_job_and_broker(defs, monkeypatch):
    monkeypatch.setenv("SCHOLARHOUSE_CELERY_BROKER", BROKER)
    run_config = load("celery/run_config.yaml")
    resolved = dg.validate_run_config(_job(defs), run_config)
    assert resolved["execution"]["scholarhouse_executor"]["celery"]["broker"] == BROKER
    assert executor_kind(run_config) == "celery"
    worker = load("celery/worker.yaml")["execution"]["config"]
    assert worker == run_config["execution"]["config"]["celery"]  # the workers listen where the runs send
    checked = process_config(dg.Shape(CELERY_CONFIG), worker)
    assert checked.success and checked.value["broker"] == BROKER
    if importlib.util.find_spec("dagster_celery"):  # the cluster extra: the workers' own schema
        from dagster_celery.executor import celery_executor

        assert process_config(celery_executor.config_schema.config_type, worker).success


def test_the_k8s_values_name_the_same_code_location_and_differ_only_in_config(defs):
    values = load("k8s/values.yaml")
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    module = workspace["load_from"][0]["python_module"]["module_name"]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", module]
    env = {e["name"]: e["value"] for e in deployment["env"]}
    assert env["SCHOLARHOUSE_EXECUTOR"] == "k8s" and set(env) <= {f.metadata["env"] for f in Settings.__dataclass_fields__.values()}
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["concurrency"]["pools"]["defaultLimit"] == 1
    run_config = load("k8s/run_config.yaml")
    dg.validate_run_config(_job(defs), run_config)
    assert executor_kind(run_config) == "k8s"
    if importlib.util.find_spec("dagster_k8s"):
        from pipelines.orchestration.executors import k8s_executor_config

        checked = k8s_executor_config(run_config["execution"]["config"]["k8s"])
        assert checked["job_namespace"] == "scholarhouse"

"""The job's executor: one definition, four ways to run the steps, chosen by configuration only.

``nightly_refresh`` runs on ``scholarhouse_executor``, a selector over

- ``in_process`` (the default: one process per run) and ``multiprocess`` — Dagster's own
  ``multi_or_in_process_executor``, guarded as before (``pipelines/orchestration/runs.py``: dead runs cleared as a run
  starts, pool waits watched);
- ``celery`` — ``dagster-celery``'s executor: every step is a Celery task that any worker listening on
  the broker may take (``dagster-celery worker start``), on this machine or another;
- ``k8s`` — ``dagster-k8s``'s ``k8s_job_executor``: every step is a Kubernetes Job.

The same code runs on a laptop, on Celery workers and on Kubernetes: a run's config picks the executor
(``execution: {config: {celery: {...}}}``), and ``SCHOLARHOUSE_EXECUTOR`` (``pipelines/settings.py``,
read when the definitions load) picks the one a run gets when its config does not say — the schedule's
runs, the launchpad's, ``dg launch``'s. ``dagster-celery`` and ``dagster-k8s`` are imported only when a
run asks for them (the ``cluster`` extra, ``pip install -e '.[cluster]'``): ``make test`` and
``make demo`` do not need them.

Whatever the executor, the ``warehouse`` pool serialises the steps that open DuckDB: a step claims its
slot from the instance before it is handed to a process, a worker or a pod (on Celery and Kubernetes
the run's orchestrating process claims it; the step's end, stored in the instance, frees it), so the
limit holds across machines as long as they share one instance (PostgreSQL: ``deploy/instance/``).
"""

from __future__ import annotations

from typing import Any, Mapping

import dagster as dg
from dagster._core.definitions.executor_definition import multiple_process_executor_requirements
from dagster._core.execution.retries import RetryMode, get_retries_config
from dagster._core.executor.base import Executor

from pipelines.orchestration.runs import GuardedExecutor

EXECUTORS = ("in_process", "multiprocess", "celery", "k8s")
# The ones that run steps in processes of their own (the run's orchestrating process only hands them out).
DISTRIBUTED = ("multiprocess", "celery", "k8s")
CLUSTER_EXTRA = "pip install -e '.[cluster]' (the cluster extra: dagster-celery, dagster-postgres, dagster-k8s)"

# dagster-celery's executor config (dagster_celery.executor.CELERY_CONFIG), declared here so that the
# definitions load without dagster-celery installed.
CELERY_CONFIG = {
    "broker": dg.Field(dg.Noneable(dg.StringSource), is_required=False,
                       description="The broker's URL, e.g. redis://127.0.0.1:6379/0 (the workers' must be the same)."),
    "backend": dg.Field(dg.Noneable(dg.StringSource), is_required=False, default_value="rpc://",
                        description="The results backend's URL (e.g. the same Redis)."),
    "include": dg.Field([str], is_required=False, description="Modules every worker should import."),
    "config_source": dg.Field(dg.Noneable(dg.Permissive()), is_required=False,
                              description="Further settings of the Celery app."),
    "retries": get_retries_config(),
}

EXECUTOR_CONFIG = dg.Selector({
    "in_process": dg.multi_or_in_process_executor.config_schema.config_type.fields["in_process"],
    "multiprocess": dg.multi_or_in_process_executor.config_schema.config_type.fields["multiprocess"],
    "celery": dg.Field(CELERY_CONFIG, description="Steps as Celery tasks (dagster-celery); start workers with "
                       "`dagster-celery worker start -A dagster_celery.app -y deploy/celery/worker.yaml`."),
    "k8s": dg.Field(dg.Permissive(), description="Steps as Kubernetes Jobs: dagster-k8s's k8s_job_executor "
                    "config (checked against it when the run starts); unset fields come from the K8sRunLauncher."),
})


def default_execution(kind: str, celery_broker: str | None = None) -> dict:
    """The execution part of the job's default run config for the executor ``kind``."""
    if kind not in EXECUTORS:
        raise ValueError(f"unknown executor {kind!r}: one of {', '.join(EXECUTORS)}")
    if kind == "celery":
        return {"celery": {"broker": celery_broker, "backend": celery_broker}}
    return {kind: {}}


def executor_kind(run_config: Mapping[str, Any] | None, default: str = "in_process") -> str:
    """Which executor a run's config selects (``default`` when it says nothing)."""
    execution = ((run_config or {}).get("execution") or {}).get("config") or {}
    return next(iter(execution), default)


def _requirements(config: Mapping[str, Any]):
    return [] if "in_process" in config else multiple_process_executor_requirements()


def _celery(config: Mapping[str, Any]) -> Executor:
    try:
        from dagster_celery.executor import CeleryExecutor
    except ImportError as exc:
        raise dg.DagsterInvariantViolationError(f"the celery executor needs dagster-celery: {CLUSTER_EXTRA}") from exc
    return CeleryExecutor(
        broker=config.get("broker"), backend=config.get("backend"), include=config.get("include"),
        config_source=config.get("config_source"), retries=RetryMode.from_config(config["retries"]))


def k8s_executor_config(config: Mapping[str, Any]) -> dict:
    """``config`` checked against dagster-k8s's k8s_job_executor schema, with its defaults filled in."""
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError as exc:
        raise dg.DagsterInvariantViolationError(f"the k8s executor needs dagster-k8s: {CLUSTER_EXTRA}") from exc
    from dagster._config import process_config

    result = process_config(k8s_job_executor.config_schema.config_type, dict(config))
    if not result.success:
        raise dg.DagsterInvalidConfigError("k8s executor config", result.errors, config)
    return result.value


def _k8s(init_context: dg.InitExecutorContext, config: Mapping[str, Any]) -> Executor:
    from dagster_k8s import k8s_job_executor

    inner = dg.InitExecutorContext(job=init_context.job, executor_def=k8s_job_executor,
                                   executor_config=k8s_executor_config(config), instance=init_context.instance)
    return k8s_job_executor.executor_creation_fn(inner)


def _create(init_context: dg.InitExecutorContext) -> Executor:
    (kind, config), = init_context.executor_config.items()
    if kind == "celery":
        return _celery(config)
    if kind == "k8s":
        return _k8s(init_context, config)
    return GuardedExecutor(dg.multi_or_in_process_executor.executor_creation_fn(init_context))


def build_executor(default: Mapping[str, Any] | None = None) -> dg.ExecutorDefinition:
    """The executor, with ``default`` (e.g. ``default_execution("celery", url)``) as the config a run gets
    when it names none. Both the job's default run config and this default follow the setting:
    ``dg launch --partition`` does not apply a partitioned job's config, only the executor's default."""
    return dg.ExecutorDefinition(
        name="scholarhouse_executor",
        config_schema=dg.Field(EXECUTOR_CONFIG, default_value=dict(default or {"in_process": {}})),
        requirements=_requirements,
        executor_creation_fn=_create,
        description="in_process (default) | multiprocess (guarded, pipelines/orchestration/runs.py) | celery (dagster-celery) | "
        "k8s (dagster-k8s): chosen by the run's config or SCHOLARHOUSE_EXECUTOR (pipelines/orchestration/executors.py).",
    )


scholarhouse_executor = build_executor()

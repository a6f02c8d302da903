"""The UI's view of the project: a real ``dagster-webserver`` answering its GraphQL API.

The test starts the webserver on 127.0.0.1 with a free port, a temporary DAGSTER_HOME holding the
project's ``dagster_home.yaml`` and the project's ``workspace.yaml`` (exactly what ``make dev``
runs, minus the daemon), waits — bounded — until the code location has loaded, then asks the
same GraphQL API the UI uses for the asset graph, the checks and the schedule. The webserver and
the code server it spawns share one process group, which the fixture always terminates.

Loading the location imports ``pipelines.definitions`` in the code server: nothing there opens
DuckDB or touches the network, so this needs neither a warehouse nor captures.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

PROJECT = Path(__file__).resolve().parents[1]
WEBSERVER = PROJECT / ".venv" / "bin" / "dagster-webserver"
STARTUP_TIMEOUT_S = 120
LAYERS = {"raw", "staging", "core", "marts", "exports", "enrichment"}
# The warehouse contract's layers: every table there has an expectation suite. (enrichment.* has
# none yet — see tests/orchestration/test_orchestration.py::test_enrichment_tables_have_checks.)
GUARDED_LAYERS = {"raw", "staging", "core", "marts"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the webserver's whole process group (it owns the code server), then make sure."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


class GraphQL:
    def __init__(self, url: str):
        self.url = url

    def __call__(self, query: str, variables: dict | None = None) -> dict:
        response = requests.post(self.url, json={"query": query, "variables": variables or {}}, timeout=30)
        response.raise_for_status()
        body = response.json()
        assert not body.get("errors"), body["errors"]
        return body["data"]


LOCATIONS = """
{ workspaceOrError { __typename ... on Workspace { locationEntries {
    name loadStatus
    locationOrLoadError { __typename
        ... on RepositoryLocation { repositories { name } }
        ... on PythonError { message } }
} } } }
"""


def _wait_until_loaded(proc: subprocess.Popen, graphql: GraphQL, log: Path) -> dict:
    """Block until the webserver answers and the code location has loaded; return the
    RepositorySelector of its one repository."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    last = "no answer yet"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"dagster-webserver exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            entries = graphql(LOCATIONS)["workspaceOrError"]["locationEntries"]
        except (requests.RequestException, ValueError) as exc:
            last = repr(exc)
        else:
            last = repr(entries)
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                errors = [e for e in entries if e["locationOrLoadError"]["__typename"] != "RepositoryLocation"]
                assert not errors, f"the code location failed to load: {errors}"
                assert len(entries) == 1, entries
                [repository] = entries[0]["locationOrLoadError"]["repositories"]
                return {"repositoryLocationName": entries[0]["name"], "repositoryName": repository["name"]}
        time.sleep(0.5)
    pytest.fail(f"dagster-webserver did not load the workspace in {STARTUP_TIMEOUT_S}s ({last}):\n"
                f"{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def webserver(tmp_path_factory):
    """(graphql, repository selector) of a dagster-webserver started for this module and always stopped."""
    home = tmp_path_factory.mktemp("dagster_home")
    shutil.copy(PROJECT / "dagster_home.yaml", home / "dagster.yaml")
    log = home / "webserver.log"
    port = _free_port()
    # none of the developer's SCHOLARHOUSE_* settings (e.g. a live source): the definitions as shipped
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    env.update({"DAGSTER_HOME": str(home),
                # run-time paths only; loading the definitions reads none of them
                "SCHOLARHOUSE_WAREHOUSE": str(home / "warehouse" / "scholarhouse.duckdb")})
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(WEBSERVER), "-w", str(PROJECT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
            cwd=PROJECT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: the code server it spawns dies with it
        )
    try:
        graphql = GraphQL(f"http://127.0.0.1:{port}/graphql")
        repository = _wait_until_loaded(proc, graphql, log)
        yield graphql, repository
    finally:
        _stop(proc)


ASSET_NODES = """
{ assetNodes {
    assetKey { path } groupName kinds pools isPartitioned description
    partitionDefinition { type name }
    assetChecksOrError { __typename ... on AssetChecks { checks { name blocking } } }
} }
"""


def test_ui_shows_every_layer_with_kinds_pools_and_partitions(webserver):
    graphql, _repository = webserver
    nodes = {"/".join(n["assetKey"]["path"]): n for n in graphql(ASSET_NODES)["assetNodes"]}
    for key in ("raw/page_captures", "staging/profiles", "staging/listings", "staging/rejects", "core/papers",
                "core/authors", "core/authorships", "marts/author_metrics", "marts/citations",
                "marts/collaboration_edges", "exports/parquet", "exports/analytics_copy"):
        assert key in nodes, key
    assert {n["groupName"] for n in nodes.values()} == LAYERS
    for key, node in nodes.items():
        assert node["groupName"] == key.split("/")[0], key
        assert node["kinds"], key
        assert node["description"], key
        assert node["isPartitioned"] and node["partitionDefinition"]["type"] == "TIME_WINDOW", key
        # the one-writer pool the UI's "Pools" tab shows
        assert node["pools"] == ["warehouse"], (key, node["pools"])


def test_ui_shows_checks_on_every_table(webserver):
    graphql, _repository = webserver
    nodes = graphql(ASSET_NODES)["assetNodes"]
    tables = [n for n in nodes if n["assetKey"]["path"][0] in GUARDED_LAYERS]
    assert {n["assetKey"]["path"][0] for n in tables} == GUARDED_LAYERS
    for node in tables:
        checks = node["assetChecksOrError"]
        assert checks["__typename"] == "AssetChecks", checks
        names = {c["name"] for c in checks["checks"]}
        assert "gates" in names, f"no blocking gates on {node['assetKey']['path']}"
        assert names <= {"gates", "warnings"}
        for check in checks["checks"]:
            assert check["blocking"] == (check["name"] == "gates")


SCHEDULES = """
query ($selector: RepositorySelector!) {
  schedulesOrError(repositorySelector: $selector) {
    __typename
    ... on Schedules { results {
        name cronSchedule executionTimezone pipelineName defaultStatus
        scheduleState { status }
        futureTicks(limit: 2) { results { timestamp } }
    } }
    ... on PythonError { message }
  }
}
"""


def test_ui_shows_the_nightly_schedule_running(webserver):
    graphql, repository = webserver
    data = graphql(SCHEDULES, {"selector": repository})["schedulesOrError"]
    assert data["__typename"] == "Schedules", data
    schedules = {s["name"]: s for s in data["results"]}
    nightly = schedules["nightly_refresh_schedule"]
    assert nightly["pipelineName"] == "nightly_refresh"
    assert (nightly["cronSchedule"], nightly["executionTimezone"]) == ("0 2 * * *", "UTC")
    assert nightly["defaultStatus"] == "RUNNING"
    # RUNNING from code, with nothing toggled in this fresh instance: no one has to switch it on
    assert nightly["scheduleState"]["status"] == "RUNNING"
    ticks = [t["timestamp"] for t in nightly["futureTicks"]["results"]]
    assert len(ticks) == 2
    for tick in ticks:
        assert time.gmtime(tick)[3:6] == (2, 0, 0)  # 02:00:00 UTC
    assert ticks[1] - ticks[0] == 24 * 3600


DESCRIBED_NODES = """
{ assetNodes {
    assetKey { path } opVersion
    owners { __typename ... on TeamAssetOwner { team } }
    tags { key value }
    internalFreshnessPolicy { __typename ... on CronFreshnessPolicy { deadlineCron lowerBoundDeltaSeconds timezone } }
    metadataEntries { label __typename
        ... on TableSchemaMetadataEntry { schema { columns { name type description constraints { nullable } } } } }
} }
"""


def test_ui_shows_column_schemas_owners_code_versions_and_freshness(webserver):
    """What an asset page shows before anything ran: the columns (from the DDL, with the data
    dictionary's meanings), who owns it, its code version, tags and when it is due."""
    graphql, _repository = webserver
    nodes = {"/".join(n["assetKey"]["path"]): n for n in graphql(DESCRIBED_NODES)["assetNodes"]}
    for key, node in nodes.items():
        assert node["owners"] and node["owners"][0]["__typename"] == "TeamAssetOwner", key
        assert node["opVersion"], key
        assert {"layer", "audience"} <= {t["key"] for t in node["tags"]}, key
        policy = node["internalFreshnessPolicy"]
        assert policy["__typename"] == "CronFreshnessPolicy" and policy["deadlineCron"] == "0 8 * * *", key
        schemas = [e for e in node["metadataEntries"] if e["label"] == "dagster/column_schema"]
        assert bool(schemas) == (not key.startswith("exports/")), key
    columns = {c["name"]: c for c in next(e for e in nodes["marts/author_metrics"]["metadataEntries"]
                                          if e["label"] == "dagster/column_schema")["schema"]["columns"]}
    flag = columns["h_index_implausible"]
    assert flag["type"] == "BOOLEAN" and flag["constraints"]["nullable"] is False
    assert "h_index_upper_bound" in flag["description"]

"""The one settings object (pipelines/settings.py): every variable read and checked in one place, the
paths derived from the warehouse in one place, the docs table generated from it, and no environment
read anywhere else in pipelines/."""

from __future__ import annotations

import ast
import dataclasses
from datetime import date
from pathlib import Path

import pytest

from pipelines import warehouse
from pipelines.staging import build as landing
from pipelines.core.identity.overrides import DEFAULT_OVERRIDES
from pipelines.core.resolution.authors import BATCH_MENTIONS
from pipelines.marts.scoring.novelty import NOVELTY_WINDOW
from pipelines.settings import Settings, SettingsError, docs_section, settings_table
from pipelines.ingest.sources.folder import BUNDLED_SAMPLES

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ROOT / "pipelines"


def test_defaults_are_the_documented_ones():
    s = Settings.from_env({})
    assert s == Settings()
    assert (s.captures, s.warehouse, s.overrides) == (BUNDLED_SAMPLES, warehouse.DEFAULT_WAREHOUSE, DEFAULT_OVERRIDES)
    assert (s.demo_date, s.exports, s.source, s.contact, s.dagster_home) == (None, None, "captures", None, None)
    assert (s.parse_workers, s.parse_shard_pages, s.match_workers) == (None, landing.SHARD_PAGES, None)
    assert (s.incremental_resolution, s.author_batch, s.novelty_window) == (True, BATCH_MENTIONS, NOVELTY_WINDOW)
    assert (s.duckdb_memory_limit, s.pool_wait_timeout_s) == ("3GB", 6 * 3600)


def test_values_are_read_as_before():
    s = Settings.from_env({
        "SCHOLARHOUSE_CAPTURES": "/c", "SCHOLARHOUSE_WAREHOUSE": "/w/x.duckdb", "SCHOLARHOUSE_DATE": "2026-11-21",
        "SCHOLARHOUSE_OVERRIDES": "/o.toml", "SCHOLARHOUSE_EXPORTS": "/e", "SCHOLARHOUSE_SOURCE": " Live ",
        "SCHOLARHOUSE_CONTACT": " me@example.org ", "SCHOLARHOUSE_PARSE_WORKERS": "0",
        "SCHOLARHOUSE_PARSE_SHARD_PAGES": "7", "SCHOLARHOUSE_MATCH_WORKERS": "3",
        "SCHOLARHOUSE_INCREMENTAL_RESOLUTION": "OFF", "SCHOLARHOUSE_AUTHOR_BATCH": "50",
        "SCHOLARHOUSE_NOVELTY_WINDOW": "none", "SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": "512MB",
        "SCHOLARHOUSE_POOL_WAIT_TIMEOUT": "1.5", "DAGSTER_HOME": "/h",
    })
    assert (s.captures, s.warehouse, s.demo_date, s.overrides, s.exports) == (
        Path("/c"), Path("/w/x.duckdb"), date(2026, 11, 21), Path("/o.toml"), Path("/e"))
    assert (s.source, s.contact, s.parse_workers, s.parse_shard_pages, s.match_workers) == ("live", "me@example.org", 1, 7, 3)
    assert (s.incremental_resolution, s.author_batch, s.novelty_window) == (False, 50, None)
    assert (s.duckdb_memory_limit, s.pool_wait_timeout_s, s.dagster_home) == ("512MB", 1.5, Path("/h"))
    assert Settings.from_env({"SCHOLARHOUSE_NOVELTY_WINDOW": "0"}).novelty_window is None


def test_an_empty_variable_means_the_default_except_the_memory_limit():
    fields = dataclasses.fields(Settings)
    empty = Settings.from_env({f.metadata["env"]: "  " for f in fields})
    assert dataclasses.replace(empty, duckdb_memory_limit="3GB") == Settings()
    assert empty.duckdb_memory_limit == ""  # DuckDB's own default
    assert warehouse.duckdb_config(empty.duckdb_memory_limit) == {}


BAD = {
    "SCHOLARHOUSE_DATE": ("2026-02-30", "YYYY-MM-DD"),
    "SCHOLARHOUSE_SOURCE": ("liev", "one of captures, live"),
    "SCHOLARHOUSE_PARSE_WORKERS": ("two", "an integer"),
    "SCHOLARHOUSE_PARSE_SHARD_PAGES": ("1e3", "an integer"),
    "SCHOLARHOUSE_MATCH_WORKERS": ("many", "an integer"),
    "SCHOLARHOUSE_INCREMENTAL_RESOLUTION": ("maybe", "on or off"),
    "SCHOLARHOUSE_AUTHOR_BATCH": ("big", "an integer"),
    "SCHOLARHOUSE_NOVELTY_WINDOW": ("all", "an integer or none"),
    "SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": ("lots", "a DuckDB size like 3GB, 512MB or 80% (at least 100MB; empty: DuckDB's default)"),
    "SCHOLARHOUSE_POOL_WAIT_TIMEOUT": ("-1", "a number of seconds"),
}


@pytest.mark.parametrize("variable", list(BAD))
def test_a_bad_value_is_one_line_naming_the_variable(variable):
    raw, expected = BAD[variable]
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({variable: raw})
    assert str(caught.value) == f"{variable} must be {expected}, got {raw!r}"
    assert isinstance(caught.value, ValueError)


def test_one_setting_is_read_without_the_others():
    env = {"SCHOLARHOUSE_SOURCE": "live", "SCHOLARHOUSE_MATCH_WORKERS": "many"}
    assert Settings.one_from_env("source", env) == "live"
    with pytest.raises(SettingsError, match="SCHOLARHOUSE_MATCH_WORKERS"):
        Settings.from_env(env)


def test_paths_are_derived_from_the_warehouse_in_one_place():
    s = Settings.from_env({"SCHOLARHOUSE_WAREHOUSE": "/data/wh/main.duckdb"})
    assert s.exports_dir == Path("/data/wh/exports")
    assert s.analytics_path == Path("/data/wh/analytics.duckdb")
    assert s.source_cache == Path("/data/wh/source_cache.sqlite")
    assert s.parse_work_dir == Path("/data/wh/work/parse")
    moved = s.with_warehouse("/elsewhere/w.duckdb")
    assert (moved.exports_dir, moved.source_cache) == (Path("/elsewhere/exports"), Path("/elsewhere/source_cache.sqlite"))
    assert s.with_warehouse(None) is s
    assert Settings.from_env({"SCHOLARHOUSE_EXPORTS": "/x"}).with_warehouse("/y/w.duckdb").exports_dir == Path("/x")


def test_the_source_cache_lives_beside_the_configured_warehouse(tmp_path, monkeypatch):
    """It was hard-wired to warehouse/source_cache.sqlite in the project, whatever SCHOLARHOUSE_WAREHOUSE said."""
    from pipelines.resources import EnrichmentResource, LiveProfileSourceResource

    wh = tmp_path / "elsewhere" / "scholarhouse.duckdb"
    monkeypatch.setenv("SCHOLARHOUSE_WAREHOUSE", str(wh))
    expected = wh.parent / "source_cache.sqlite"
    assert EnrichmentResource().resolved_cache_path() == expected
    assert LiveProfileSourceResource(contact="a@b.org").load_config().cache_path == expected
    # Without the config file too (the enrichment's fallback).
    assert EnrichmentResource(config_path=str(tmp_path / "absent.toml")).resolved_cache_path() == expected
    # An explicit setting still wins: the config's crawler.cache_path, the resource's cache_path.
    config = tmp_path / "config" / "profiles.toml"
    config.parent.mkdir()
    config.write_text('[crawler]\ncache_path = "/explicit/cache.sqlite"\n')
    assert EnrichmentResource(config_path=str(config)).resolved_cache_path() == Path("/explicit/cache.sqlite")
    assert EnrichmentResource(cache_path=str(tmp_path / "c.sqlite")).resolved_cache_path() == tmp_path / "c.sqlite"


def test_the_warehouse_resource_hands_down_the_settings(tmp_path, monkeypatch):
    from pipelines.resources import WarehouseResource

    monkeypatch.setenv("SCHOLARHOUSE_MATCH_WORKERS", "2")
    monkeypatch.setenv("SCHOLARHOUSE_AUTHOR_BATCH", "80")
    monkeypatch.setenv("SCHOLARHOUSE_INCREMENTAL_RESOLUTION", "off")
    monkeypatch.setenv("SCHOLARHOUSE_POOL_WAIT_TIMEOUT", "5")
    resource = WarehouseResource(path=str(tmp_path / "w.duckdb"))
    options = resource.match_options()
    assert (options.workers, options.author_batch, options.incremental) == (2, 80, False)
    assert resource.resolved_path() == tmp_path / "w.duckdb"
    assert (resource.exports_dir, resource.analytics_path) == (tmp_path / "exports", tmp_path / "analytics.duckdb")
    assert resource.resolved_pool_wait_timeout_s() == 5.0


# --- the docs table -------------------------------------------------------------------------------


def test_the_readme_table_is_the_generated_one():
    """`python -m pipelines.settings --write README.md` regenerates it after a setting changes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docs_section(readme) == readme
    table = settings_table()
    for f in dataclasses.fields(Settings):
        assert f"| `{f.metadata['env']}` |" in table
        assert f.metadata["doc"] and f.metadata["kind"] and f.metadata["shown"]


# --- nothing else reads the environment -----------------------------------------------------------

# The edge: what Dagster (or a person) starts, which reads the settings and hands values down. The
# job's executor (orchestration/runs.py) is built by Dagster as a run starts, so it reads its one setting there.
EDGE = ("settings.py", "definitions.py", "assets/", "resources/", "demo.py", "orchestration/runs.py")


def _is_edge(path: Path) -> bool:
    rel = path.relative_to(PIPELINES).as_posix()
    return any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in EDGE) or rel.startswith("definitions")


def environment_reads(source: str) -> list[str]:
    """``os.environ`` / ``os.getenv`` / ``from os import environ`` and settings reads in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb") \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            found.append(f"line {node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and \
                any(a.name in ("environ", "environb", "getenv", "getenvb") for a in node.names):
            found.append(f"line {node.lineno}: from os import ...")
        elif isinstance(node, ast.Attribute) and node.attr in ("from_env", "one_from_env") \
                and isinstance(node.value, ast.Name) and node.value.id == "Settings":
            found.append(f"line {node.lineno}: Settings.{node.attr}")
    return found


def test_the_check_finds_what_it_looks_for():
    assert len(environment_reads(
        "import os\nfrom os import getenv\na = os.environ['X']\nb = os.getenv('Y')\nc = Settings.from_env()\n")) == 4
    assert environment_reads("import os\nos.cpu_count()\nenviron = {}\n") == []


def test_pure_logic_reads_no_environment():
    modules = sorted(p for p in PIPELINES.rglob("*.py") if not _is_edge(p))
    assert len(modules) > 40 and PIPELINES / "core" / "resolution" / "authors.py" in modules
    offenders = {str(p.relative_to(ROOT)): reads for p in modules
                 if (reads := environment_reads(p.read_text(encoding="utf-8")))}
    assert offenders == {}, "read the setting at the edge (pipelines/settings.py) and pass the value down"


@pytest.mark.parametrize("value", ["3", "0", "1pb", "1PiB", "0GB", "1b", "50MB", "0%", "150%"])
def test_a_memory_limit_duckdb_cannot_use_is_a_settings_error(value):
    """Was accepted, and the night's first warehouse connection failed with a DuckDB error naming
    neither the variable nor the value ("Unknown unit for memory", or out of memory)."""
    with pytest.raises(SettingsError, match="SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT"):
        Settings.from_env({"SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": value})


@pytest.mark.parametrize("value", ["3GB", "512MB", "3GiB", "2.5 GB", "80%", "1TB"])
def test_a_memory_limit_duckdb_reads_is_kept_as_written(value):
    assert Settings.from_env({"SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": value}).duckdb_memory_limit == value


def test_a_sqlite_file_at_the_warehouse_path_is_refused_saying_so(tmp_path):
    """Was: DuckDB tried to download its SQLite extension to open the file as the warehouse."""
    import sqlite3

    path = tmp_path / "source_cache.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(warehouse.NotAWarehouse, match="SQLite database, not a DuckDB warehouse"):
        with warehouse.connect(path):
            pass
    with warehouse.connect(tmp_path / "new.duckdb") as con:  # a new warehouse still opens
        assert con.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("value", ["3000000000b", "3000000000 bytes"])
def test_a_memory_limit_in_bytes_is_read(value):
    assert Settings.from_env({"SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": value}).duckdb_memory_limit == value


def test_a_memory_limit_with_a_non_breaking_space_is_refused():
    with pytest.raises(SettingsError, match="SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT"):
        Settings.from_env({"SCHOLARHOUSE_DUCKDB_MEMORY_LIMIT": "3\u00a0GB"})  # DuckDB refuses it

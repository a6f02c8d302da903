"""The asset checks built from expectations/: present on every contract table, run in the nightly
job, and blocking — a failed gate stops everything downstream of its table in the same run."""

# No ``from __future__ import annotations``: Dagster reads the test assets' annotations at
# definition time and rejects them as strings.
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import dagster as dg
import polars as pl

from pipelines import quality, warehouse
from pipelines.staging import build as landing
from pipelines.assets.checks import GATES, WARNINGS, build_quality_checks, check_result
from pipelines.assets.partitions import daily_partitions
from pipelines.resources.great_expectations import GreatExpectationsResource
from pipelines.resources.warehouse import WarehouseResource
from tests import staged_rows

DAY = "2026-11-21"
PROJECT = Path(__file__).resolve().parents[2]


# =============================================================================== definitions


def test_definitions_have_gates_and_warnings_on_every_contract_table():
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    suites = quality.load_suites()
    assert len(suites) == 28  # 21 contract tables + 7 enrichment tables
    for table, suite in suites.items():
        key = dg.AssetKey(table.split("."))
        assert graph.has(key), f"{table} is not an asset"
        gates = graph.get_check_spec(dg.AssetCheckKey(key, GATES))
        warns = graph.get_check_spec(dg.AssetCheckKey(key, WARNINGS))
        assert gates.blocking and not warns.blocking
        assert gates.partitions_def == graph.get(key).partitions_def
        assert "Blocking gates" in gates.description


def test_the_nightly_job_runs_the_checks():
    from pipelines.definitions import defs

    job = defs.resolve_job_def("nightly_refresh")
    in_job = job.asset_layer.asset_graph.asset_check_keys
    for table in quality.load_suites():
        key = dg.AssetKey(table.split("."))
        assert {dg.AssetCheckKey(key, GATES), dg.AssetCheckKey(key, WARNINGS)} <= in_job
    assert "gx" in defs.resources


def test_loading_the_definitions_does_not_import_great_expectations():
    code = "import sys, pipelines.definitions; print('great_expectations' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_check_step_per_producing_step():
    @dg.multi_asset(specs=[dg.AssetSpec(["staging", n]) for n in ("profiles", "listings", "rejects")],
                    partitions_def=daily_partitions)
    def staging_tables(): ...

    @dg.asset(key=["exports", "parquet"], partitions_def=daily_partitions)
    def exports_parquet(): ...  # not a contract table: no suite, no checks

    (checks,) = build_quality_checks([staging_tables, exports_parquet])
    assert checks.node_def.name == "staging_tables_quality"
    assert {(k.asset_key.to_user_string(), k.name) for k in checks.check_keys} == {
        (f"staging/{t}", c) for t in ("profiles", "listings", "rejects") for c in (GATES, WARNINGS)
    }


# =============================================================================== a small graph


def _at(day: str) -> datetime:
    d = date.fromisoformat(day)
    return datetime(d.year, d.month, d.day, 5, tzinfo=timezone.utc)


def _raw_frame(day: str) -> pl.DataFrame:
    rows = [{
        "capture_id": (c * 64), "fetch_id": c * 16, "source": "bzpeer", "url": f"https://www.bzpeer.com/authors/person-{c}",
        "source_profile_id": f"person-{c}", "captured_at": _at(day), "partition_date": date.fromisoformat(day),
        "content_type": "text/plain", "http_status": 200, "body": "page", "body_bytes": None, "encoding": "utf-8",
        "byte_size": 4, "origin": "http", "source_file": None, "etag": None, "last_modified": None, "fetch_ms": 1.0,
        "not_modified": False, "fetch_reject": None, "loaded_at": _at(day),
    } for c in ("a", "b")]
    return pl.DataFrame(rows, schema=landing.RAW_SCHEMA)


def _staging_frames(day: str, *, duplicate_listing: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    partition = date.fromisoformat(day)
    profiles = pl.DataFrame([{
        "capture_id": c * 64, "fetch_id": c * 16, "partition_date": partition, "source": "bzpeer",
        "source_profile_id": f"person-{c}",
        "captured_at": _at(day), "name": f"Person {c.upper()}", "listed_items": 2, "truncated": False,
        "parser_version": "test",
    } for c in ("a", "b")], schema={k: landing.PROFILE_SCHEMA[k] for k in (
        "capture_id", "fetch_id", "partition_date", "source", "source_profile_id", "captured_at", "name", "listed_items",
        "truncated", "parser_version")})
    listings = pl.DataFrame([{
        "listing_id": f"{c}{position}", "listing_key": f"key-{c}{position}", "capture_id": c * 64,
        "partition_date": partition, "source": "bzpeer", "source_profile_id": f"person-{c}", "position": position,
        "title": f"Paper {c}{position}", "year": 2025, "byline_authors": [], "byline_truncated": False, "code_urls": [],
    } for c in ("a", "b") for position in (1, 2)], schema={k: landing.LISTING_SCHEMA[k] for k in (
        "listing_id", "listing_key", "capture_id", "partition_date", "source", "source_profile_id", "position",
        "title", "year", "byline_authors", "byline_truncated", "code_urls")})
    if duplicate_listing:
        # A bug that gives two items of one capture the same position, hence the same id: what the gate is for.
        listings = listings.with_columns(
            position=pl.when(pl.col("listing_id") == "a2").then(pl.lit(1)).otherwise(pl.col("position")))
    return profiles, listings


def _small_graph(*, duplicate_listing: bool = False) -> list:
    """raw → staging (the real contract tables, written the way the pipeline writes them) → a probe."""

    @dg.asset(key=["raw", "page_captures"], partitions_def=daily_partitions)
    def page_captures(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
        with warehouse_db.connect() as con, warehouse.transaction(con):
            con.execute("DELETE FROM raw.fetches WHERE partition_date = ?", [context.partition_key])
            landing.store_raw(con, _raw_frame(context.partition_key))

    @dg.multi_asset(
        specs=[dg.AssetSpec(["staging", n], deps=[["raw", "page_captures"]]) for n in ("profiles", "listings", "rejects")],
        partitions_def=daily_partitions,
    )
    def staging_tables(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
        profiles, listings = _staging_frames(context.partition_key, duplicate_listing=duplicate_listing)
        with warehouse_db.connect() as con, warehouse.transaction(con):
            staged_rows.clear_night(con, date.fromisoformat(context.partition_key))
            for row in profiles.iter_rows(named=True):
                staged_rows.profile(con, **row)
            for row in listings.drop("listing_id").iter_rows(named=True):
                staged_rows.listing(con, **row)
        for name in ("profiles", "listings", "rejects"):
            yield dg.MaterializeResult(asset_key=["staging", name])

    @dg.asset(key=["probe", "after_listings"], deps=[["staging", "listings"]], partitions_def=daily_partitions)
    def after_listings():
        """Stands for core: must not run on top of broken listings."""

    assets = [page_captures, staging_tables, after_listings]
    return [*assets, *build_quality_checks(assets)]


def _run(defs_list: list, tmp_path: Path, partition: str = DAY) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        defs_list,
        partition_key=partition,
        resources={"warehouse_db": WarehouseResource(path=str(tmp_path / "wh.duckdb")), "gx": GreatExpectationsResource()},
        raise_on_error=False,
    )


def _evaluations(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    return {
        (e.event_specific_data.asset_key.to_user_string(), e.event_specific_data.check_name): e.event_specific_data
        for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }


def _materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}


def test_clean_tables_pass_their_checks_and_downstream_runs(tmp_path):
    result = _run(_small_graph(), tmp_path)
    assert result.success
    evaluations = _evaluations(result)
    assert set(evaluations) == {(f"{t}", c) for t in ("raw/page_captures", "staging/profiles", "staging/listings",
                                                      "staging/rejects") for c in (GATES, WARNINGS)}
    assert all(e.passed for e in evaluations.values()), {k: e.description for k, e in evaluations.items()}
    # Each check evaluated the partition that was run.
    assert {e.partition for e in evaluations.values()} == {DAY}
    assert "probe/after_listings" in _materialized(result)


def test_a_failed_gate_stops_everything_downstream_in_the_same_run(tmp_path):
    result = _run(_small_graph(duplicate_listing=True), tmp_path)
    assert not result.success
    evaluations = _evaluations(result)
    gate = evaluations[("staging/listings", GATES)]
    assert not gate.passed and gate.severity == dg.AssetCheckSeverity.ERROR and gate.blocking
    # The other tables' checks (same step) and the warnings still report.
    assert evaluations[("staging/profiles", GATES)].passed
    assert ("staging/listings", WARNINGS) in evaluations
    # The table was written; nothing built on it ran.
    assert "staging/listings" in _materialized(result)
    assert "probe/after_listings" not in _materialized(result)
    step_events = {e.step_key: e.event_type_value for e in result.all_events if e.is_step_event and e.step_key}
    assert "after_listings" not in step_events and "probe__after_listings" not in step_events
    assert step_events["staging_tables_quality"] == "STEP_FAILURE"

    meta = gate.metadata
    # listing_id, the (capture_id, position) it is made of, and the parse's listings stored once per position
    assert meta["expectations_failed"].value == 3
    assert meta["unexpected_rows"].value == 5
    detail = meta["failed #1: expect_column_values_to_be_unique(listing_id)"].value
    assert "core.paper_listings maps each listing to exactly one paper" in detail
    assert "unexpected: 2 of 4 rows" in detail
    a1 = landing.short_hash(date.fromisoformat(DAY), "a" * 64, 1)
    assert f"| {a1} |" in detail  # the offending rows, as a markdown table
    assert "partition(s): 2026-11-21" in detail
    # ... and as a table the UI draws: typed columns, one record per offending row
    rows = meta["offending rows #1"]
    assert isinstance(rows, dg.TableMetadataValue)
    assert "listing_id" in [c.name for c in rows.schema.columns]
    assert sorted(r.data["listing_id"] for r in rows.records) == [a1, a1]


def test_a_gate_on_core_catches_an_authorship_without_its_paper(tmp_path):
    path = tmp_path / "wh.duckdb"
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        con.execute("INSERT INTO core.authors (author_id, display_name, profiles_count, papers_count, names_count, "
                    "first_seen) VALUES ('A1', 'Ann Lee', 1, 1, 1, DATE '2026-11-20')")

    @dg.asset(key=["core", "authorships"], partitions_def=daily_partitions)
    def authorships(warehouse_db: WarehouseResource):
        frame = pl.DataFrame({"paper_id": ["P-gone"], "author_id": ["A1"], "evidence": ["profile"],
                              "evidence_all": [["profile"]], "author_position": [None], "name_as_listed": [None]},
                             schema_overrides={"author_position": pl.Int32, "name_as_listed": pl.String})
        with warehouse_db.connect() as con:
            warehouse.replace_slice(con, [("core.authorships", frame)])

    @dg.asset(key=["marts", "collaboration_edges"], deps=[["core", "authorships"]], partitions_def=daily_partitions)
    def collaboration_edges():
        """Must not be built from an authorship whose paper does not exist."""

    result = _run([authorships, collaboration_edges, *build_quality_checks([authorships])], tmp_path)
    assert not result.success
    gate = _evaluations(result)[("core/authorships", GATES)]
    assert not gate.passed
    detail = gate.metadata["failed #3: expect_column_values_to_be_in_set(orphan_paper)"].value
    assert "authorships → papers" in detail and "P-gone" in detail
    assert "marts/collaboration_edges" not in _materialized(result)


def test_a_failed_warning_reports_but_does_not_stop_the_run(tmp_path):
    path = tmp_path / "wh.duckdb"
    capture = "c" * 64
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
        staged_rows.profile(con, capture_id=capture, fetch_id=capture[:16], partition_date=date.fromisoformat(DAY), source="scholarfeed",
                            source_profile_id="42", name="Yucheng Ding", listed_items=15)

    @dg.asset(key=["marts", "author_metrics"], partitions_def=daily_partitions)
    def author_metrics(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
        with warehouse_db.connect() as con:
            con.execute(
                "INSERT INTO marts.author_metrics (source, source_profile_id, as_of, capture_id, captured_at, "
                "profile_name, reported_h_index, reported_citations, reported_papers, declared_items, listed_items, "
                "papers_held, h_index_upper_bound, h_index_implausible, listing_incomplete) VALUES "
                "('scholarfeed', '42', ?, ?, now(), 'Yucheng Ding', 39, 108, 15, 15, 15, 0, 10, true, false)",
                [context.partition_key, capture])

    @dg.asset(key=["exports", "parquet"], deps=[["marts", "author_metrics"]], partitions_def=daily_partitions)
    def exports_parquet():
        """Runs even though a profile's reported h-index is impossible: that is a finding, not a bug."""

    result = _run([author_metrics, exports_parquet, *build_quality_checks([author_metrics])], tmp_path)
    assert result.success
    evaluations = _evaluations(result)
    assert evaluations[("marts/author_metrics", GATES)].passed
    warning = evaluations[("marts/author_metrics", WARNINGS)]
    assert not warning.passed and warning.severity == dg.AssetCheckSeverity.WARN
    detail = warning.metadata["failed #7: expect_column_values_to_be_in_set(h_index_implausible)"].value
    assert "Yucheng Ding" in detail and "| 39 |" in detail
    [offending] = warning.metadata["offending rows #7"].records
    assert (offending.data["profile_name"], offending.data["reported_h_index"]) == ("Yucheng Ding", 39)
    assert "exports/parquet" in _materialized(result)


def test_check_results_summarise_a_passing_report():
    suite = quality.load_suites()["core.id_redirects"]
    outcomes = [quality.RuleOutcome(r, True, 0, 0) for r in suite.rules_with("block")]
    report = quality.ValidationReport(suite.name, suite.table, "block", outcomes, {"rows": 0})
    result = check_result(dg.AssetKey(["core", "id_redirects"]), report)
    assert result.passed and result.check_name == GATES and result.severity == dg.AssetCheckSeverity.ERROR
    assert result.metadata["expectations_failed"].value == 0
    assert not any(k.startswith(("failed #", "offending rows")) for k in result.metadata)


# =============================================================================== the real pipeline


def test_the_sample_run_passes_every_gate(demo_warehouse):
    """The bundled captures through the real job: every gate holds on what the pipeline built."""
    with warehouse.connect(demo_warehouse, read_only=True) as con:
        for table, suite in quality.load_suites().items():
            gates = quality.run_suite(con, suite, partition_date=date.fromisoformat(DAY), severities=["block"])["block"]
            assert gates.passed, f"{table}:\n" + "\n\n".join(quality.outcome_markdown(o) for o in gates.failed)

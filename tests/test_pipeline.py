"""The whole asset graph on the bundled samples, through Dagster, into a temporary DuckDB file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

from tests.conftest import SAMPLE_DATE, SAMPLES, build_warehouse


def q(path: Path, sql: str, params=()):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def one(path: Path, sql: str, params=()):
    return q(path, sql, params)[0][0]


def test_definitions_load_with_the_documented_graph():
    from pipelines.definitions import defs

    keys = {k.to_user_string() for k in defs.resolve_all_asset_keys()}
    for table in ("raw/page_captures", "staging/profiles", "staging/listings", "staging/rejects",
                  "core/papers", "core/paper_listings", "core/authors", "core/author_names",
                  "core/author_profiles", "core/authorships", "core/match_review", "core/id_redirects",
                  "core/paper_identifiers", "core/identifier_rejects",
                  "marts/author_metrics", "marts/citations", "marts/paper_scores", "marts/author_scores",
                  "marts/collaboration_edges", "marts/nightly_summary", "exports/parquet", "exports/analytics_copy",
                  "exports/report"):
        assert table in keys, table
    schedule = defs.resolve_schedule_def("nightly_refresh_schedule")
    assert schedule.default_status.value == "RUNNING"


def test_demo_counts(demo_warehouse):
    assert one(demo_warehouse, "SELECT count(*) FROM raw.page_captures") == 5
    assert one(demo_warehouse, "SELECT count(*) FROM staging.profiles") == 5
    assert one(demo_warehouse, "SELECT count(*) FROM staging.listings") == 48
    assert one(demo_warehouse, "SELECT count(*) FROM staging.rejects") == 0
    assert one(demo_warehouse, "SELECT count(DISTINCT listing_id) FROM staging.listings") == 48
    # 000 declares 6 works and lists 5: both facts are kept
    assert q(demo_warehouse, "SELECT declared_works, declared_items, listed_items FROM staging.profiles "
                             "WHERE name = 'Daning Cheng'") == [(6, 6, 5)]


def test_rerunning_a_partition_never_duplicates_rows(tmp_path):
    path = tmp_path / "wh.duckdb"
    assert build_warehouse(SAMPLES, path).success
    first = {t: one(path, f"SELECT count(*) FROM {t}") for t in ("raw.page_captures", "staging.listings", "core.papers", "core.authors", "marts.author_metrics", "marts.collaboration_edges", "marts.nightly_summary")}
    assert first["marts.nightly_summary"] == 1  # one row per night, replaced by a re-run
    ids = q(path, "SELECT listing_id, paper_id FROM core.paper_listings ORDER BY 1")
    authors = q(path, "SELECT source, source_profile_id, author_id FROM core.author_profiles ORDER BY 1, 2")
    rerun = build_warehouse(SAMPLES, path)
    assert rerun.success
    again = {t: one(path, f"SELECT count(*) FROM {t}") for t in first}
    # the report asset's materialisation: where the page is, and the main charts as pictures for the UI
    shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
             for ev in rerun.get_asset_materialization_events()}["exports/report"]
    assert shown["path"].value == str(tmp_path / "exports" / SAMPLE_DATE / "report.html")
    assert (tmp_path / "exports" / "latest" / "report.html").samefile(shown["path"].value)
    pictures = [k for k in shown if k.startswith("chart: ")]
    assert len(pictures) == 4 and all(shown[k].value.startswith("![") and "data:image/png;base64,iVBOR" in shown[k].value
                                      for k in pictures)
    assert shown["checks_not_passed"].value == 1  # the expected warning on marts/author_metrics
    assert again == first
    assert q(path, "SELECT listing_id, paper_id FROM core.paper_listings ORDER BY 1") == ids
    assert q(path, "SELECT source, source_profile_id, author_id FROM core.author_profiles ORDER BY 1, 2") == authors


def test_a_second_night_keeps_ids_and_adds_history(tmp_path):
    path = tmp_path / "wh.duckdb"
    assert build_warehouse(SAMPLES, path, "2026-11-21").success
    papers = dict(q(path, "SELECT title, paper_id FROM core.papers"))
    authors = q(path, "SELECT source, source_profile_id, author_id FROM core.author_profiles ORDER BY 1, 2")
    second = build_warehouse(SAMPLES, path, "2026-11-22")
    assert second.success
    staged = {
        ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
        for ev in second.get_asset_materialization_events()
    }["staging/profiles"]
    # unchanged pages show the first night's parse, not parsed again
    assert staged["pages_parsed"].value == 0 and staged["pages_unchanged_reused"].value == 5
    assert one(path, "SELECT count(*) FROM staging.listings WHERE partition_date = '2026-11-22'") == 48
    assert one(path, "SELECT count(DISTINCT listing_id) FROM staging.listings") == 96
    assert dict(q(path, "SELECT title, paper_id FROM core.papers")) == papers
    assert q(path, "SELECT source, source_profile_id, author_id FROM core.author_profiles ORDER BY 1, 2") == authors
    # the second night's paper matcher reused the first night's title diffs (and kept only those it used)
    core_meta = {
        ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
        for ev in second.get_asset_materialization_events()
    }["core/papers"]
    assert core_meta["title_diffs_computed"].value == 0 and core_meta["title_diffs_reused"].value > 0
    # resolution reads one row per listing key (the newest), however many nights are stored ...
    assert core_meta["listings_resolved"].value == one(path, "SELECT count(DISTINCT listing_key) FROM staging.listings") == 48
    # ... and core.paper_listings still places every night's row, each key's rows in one paper
    listings_meta = {
        ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
        for ev in second.get_asset_materialization_events()
    }["core/paper_listings"]
    assert listings_meta["dagster/row_count"].value == one(path, "SELECT count(*) FROM core.paper_listings") == 96
    assert one(path, "SELECT count(*) FROM staging.listings l LEFT JOIN core.paper_listings p USING (listing_id) "
                     "WHERE p.paper_id IS NULL") == 0
    assert one(path, "SELECT max(n) FROM (SELECT count(DISTINCT p.paper_id) AS n FROM staging.listings l "
                     "JOIN core.paper_listings p USING (listing_id) GROUP BY l.listing_key)") == 1
    assert q(path, "SELECT DISTINCT first_seen::VARCHAR, last_seen::VARCHAR FROM core.papers") == [("2026-11-21", "2026-11-22")]
    assert one(path, "SELECT count(*) FROM cache.title_diffs") == core_meta["title_diffs_reused"].value
    assert one(path, "SELECT count(DISTINCT version) FROM cache.title_diffs") == 1
    assert one(path, "SELECT count(DISTINCT as_of) FROM marts.author_metrics") == 2
    assert one(path, "SELECT count(*) FROM marts.citations WHERE level = 'author' AND change = 0") == 3
    # the nights side by side: what each landed, and the warehouse (and its review queue) after each
    nights = q(path, "SELECT as_of::VARCHAR, pages, profiles, listings, rejects, papers, authors, "
                     "review_paper_pairs + review_author_pairs FROM marts.nightly_summary ORDER BY as_of")
    queue = one(path, "SELECT count(*) FROM core.match_review")
    assert [n[:5] for n in nights] == [("2026-11-21", 5, 5, 48, 0), ("2026-11-22", 5, 5, 48, 0)]
    assert nights[1][5:] == (len(papers), one(path, "SELECT count(*) FROM core.authors"), queue) and queue > 0


def test_a_papers_abstract_and_reported_score_come_from_its_current_listings(tmp_path):
    """A page that now shows a shorter abstract and a new score: the paper shows what the page
    shows tonight, not the longest or highest value of any night stored (every other paper field
    already follows the current rows; the abstract and the score are filled in SQL)."""
    captures = tmp_path / "captures"
    shutil.copytree(SAMPLES, captures)
    path = tmp_path / "wh.duckdb"
    assert build_warehouse(captures, path, "2026-11-21").success
    page = captures / "004_34c8893c0fa5ecd2.txt"
    text = page.read_text(encoding="utf-8")
    full = text.split("ChangQing Xu, Yi Liu, XinFang Liao et al.\n\n", 1)[1].split("\n", 1)[0]
    short = "In this paper, a novel machine learning regression based single event transient (SET) modeling method is proposed."
    assert full.startswith(short) and len(full) > len(short)
    page.write_text(text.replace(full, short).replace("68.9AIMay 14", "71.2AIMay 14"), encoding="utf-8")
    assert build_warehouse(captures, path, "2026-11-22").success

    abstract = "SELECT abstract FROM core.papers WHERE title LIKE 'Machine Learning Regression based Single Event%'"
    assert one(path, abstract) == short
    assert one(path, "SELECT s.reported_score FROM marts.paper_scores s JOIN core.papers p USING (paper_id) "
                     "WHERE p.title LIKE 'BEAM: Binary Expert%'") == 71.2
    # both nights' rows are kept, and both still belong to the paper
    assert one(path, "SELECT count(DISTINCT l.abstract) FROM staging.listings l JOIN core.paper_listings pl USING (listing_id) "
                     "JOIN core.papers p USING (paper_id) WHERE p.title LIKE 'Machine Learning Regression based%'") == 2


def test_garbage_files_become_rejects_and_the_run_stays_green(tmp_path):
    captures = tmp_path / "captures"
    shutil.copytree(SAMPLES, captures)
    (captures / "empty.txt").write_bytes(b"")
    (captures / "binary.html").write_bytes(bytes(range(256)) * 40)
    (captures / "other-site.txt").write_text("Welcome to my cooking blog\n\nPasta recipes\n\nBake at 200C for 20 minutes.")
    (captures / "challenge.html").write_text(
        "<html><head><title>Just a moment...</title></head><body><h1>Checking your browser before accessing "
        "www.scholarfeed.org</h1><p>Please verify you are human.</p></body></html>")
    # the same profile captured again that day, cut off mid-item: its complete items land, the cut one
    # is rejected, and the marts count the profile once (the complete capture)
    (captures / "recapture-cut.txt").write_bytes((SAMPLES / "003_5373d79505ae5ddf.txt").read_bytes()[:9000])
    shutil.copy(SAMPLES / "003_5373d79505ae5ddf.txt.meta.json", captures / "recapture-cut.txt.meta.json")  # same page
    path = tmp_path / "wh.duckdb"
    result = build_warehouse(captures, path)
    assert result.success
    assert one(path, "SELECT count(*) FROM raw.page_captures") == 10
    assert one(path, "SELECT count(*) FROM staging.profiles") == 6
    assert one(path, "SELECT count(*) FROM staging.profiles WHERE truncated") == 1
    reasons = dict(q(path, "SELECT reason, count(*) FROM staging.rejects GROUP BY 1"))
    assert reasons == {"empty": 1, "not_text": 1, "unknown_site": 1, "bot_challenge": 1, "truncated_item": 1}
    assert one(path, "SELECT count(*) FROM marts.author_metrics") == 5
    assert one(path, "SELECT listed_items FROM marts.author_metrics WHERE source = 'scholarfeed' "
                     "AND profile_name = 'Yunquan Zhang'") == 16


def test_exports_and_analytics_copy(demo_warehouse):
    exports = demo_warehouse.parent / "exports"
    latest = exports / "latest"
    assert latest.is_symlink()
    manifest = json.loads((latest / "manifest.json").read_text())
    assert manifest["as_of"] == SAMPLE_DATE and manifest["code_version"]
    assert "core.papers" in manifest["tables"] and "marts.collaboration_edges" in manifest["tables"]
    assert {"core.paper_identifiers", "core.identifier_rejects"} <= set(manifest["tables"])   # the crosswalk ships too
    for table, info in manifest["tables"].items():
        rows = duckdb.sql(f"SELECT count(*) FROM '{latest / info['file']}'").fetchall()[0][0]
        assert rows == info["rows"] == one(demo_warehouse, f"SELECT count(*) FROM {table}"), table
    analytics = demo_warehouse.parent / "analytics.duckdb"
    assert one(analytics, "SELECT count(*) FROM staging.listings") == 48


def test_an_override_file_changes_the_result_as_documented(tmp_path, monkeypatch):
    path = tmp_path / "wh.duckdb"
    assert build_warehouse(SAMPLES, path).success
    ids = dict(q(path, "SELECT display_name, author_id FROM core.authors WHERE display_name IN ('Daning Chen', 'Daning Cheng')"))
    review = q(path, "SELECT suggested_override FROM core.match_review WHERE entity_type = 'author' "
                     "AND ? IN (left_id, right_id) AND ? IN (left_id, right_id)", [ids["Daning Chen"], ids["Daning Cheng"]])
    assert review, "the Chen/Cheng pair should be waiting in the review queue"
    overrides = tmp_path / "overrides.toml"
    overrides.write_text(review[0][0] + '\nnote = "same person: confirmed by the author"\n')
    monkeypatch.setenv("SCHOLARHOUSE_OVERRIDES", str(overrides))
    assert build_warehouse(SAMPLES, path).success
    names = q(path, "SELECT DISTINCT author_id FROM core.author_names WHERE name_variant IN ('Daning Chen', 'Daning Cheng')")
    assert len(names) == 1
    (survivor,) = names[0]
    (loser,) = {ids["Daning Chen"], ids["Daning Cheng"]} - {survivor}
    assert q(path, "SELECT new_id, reason FROM core.id_redirects WHERE old_id = ?", [loser]) == [(survivor, "override")]
    assert not q(path, "SELECT 1 FROM core.match_review WHERE ? IN (left_id, right_id)", [loser])
    # taking the override out restores the algorithm's answer, and the redirect goes away
    overrides.write_text("")
    assert build_warehouse(SAMPLES, path).success
    assert dict(q(path, "SELECT display_name, author_id FROM core.authors WHERE display_name IN ('Daning Chen', 'Daning Cheng')")) == ids
    assert not q(path, "SELECT 1 FROM core.id_redirects WHERE old_id = ?", [loser])


def test_the_nightly_summary_of_a_night_that_never_ran_is_refused_not_a_row_of_zeros(tmp_path):
    """Materialised alone from the UI for a night that never landed (was: a row of zeros, a night
    that never happened in the report's table and charts); a night that landed is summarised alone too."""
    import dagster as dg

    from pipelines import warehouse
    from pipelines.assets.marts import nightly_summary
    from pipelines.resources import WarehouseResource

    path = tmp_path / "wh.duckdb"
    with warehouse.connect(path) as con:
        warehouse.ensure_schema(con)
    resources = {"warehouse_db": WarehouseResource(path=str(path))}
    result = dg.materialize([nightly_summary], partition_key="2026-11-21", resources=resources,
                            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    assert "night 2026-11-21 has not landed" in failure.event_specific_data.error.message
    assert one(path, "SELECT count(*) FROM marts.nightly_summary") == 0

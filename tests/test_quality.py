"""The GX runner (pipelines.quality) on small frames and a tiny DuckDB, and every suite file
against the warehouse contract."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import duckdb
import polars as pl
import pytest

from pipelines import quality, warehouse
from tests import staged_rows

CONTRACT_TABLES = [
    "raw.page_captures", "staging.profiles", "staging.listings", "staging.rejects", "staging.quality_issues",
    "core.papers", "core.paper_identifiers", "core.identifier_rejects", "core.paper_listings", "core.authors",
    "core.author_names", "core.author_profiles",
    "core.authorships", "core.match_review", "core.id_redirects",
    "marts.author_metrics", "marts.citations", "marts.paper_scores", "marts.author_scores",
    "marts.collaboration_edges", "marts.nightly_summary",
    "enrichment.arxiv_works", "enrichment.arxiv_title_searches", "enrichment.openalex_works",
    "enrichment.openalex_authors", "enrichment.author_lists", "enrichment.arxiv_rejects", "enrichment.openalex_rejects",
]
# Append-only id registries, written with the core tables and validated by the core.papers /
# core.authors suites (their "registry" batches); they are not assets of their own.
REGISTRIES = {"core.paper_id_registry": "core.papers", "core.author_id_registry": "core.authors"}
# The tables a view of the contract stands on (pipelines/warehouse/contract.py), validated by the
# view's suite (its "storage" batch).
BEHIND_VIEWS = {"raw.page_bodies": "raw.page_captures", "raw.fetches": "raw.page_captures",
                **{t: "staging.profiles" for t in ("staging.night_fetches", "staging.parsed_profiles",
                                                   "staging.parsed_rejects", "staging.parsed_issues")},
                "staging.parsed_listings": "staging.listings"}
DAY = date(2026, 11, 21)


def _suite(expectations: list[dict], query: str = "SELECT 1", **meta) -> quality.Suite:
    return quality.parse_suite({
        "name": "test.things",
        "expectations": expectations,
        "meta": {"table": "test.things", "query": query, "sample_columns": ["id"], **meta},
    })


def _exp(type_: str, severity: str = "block", protects: str = "a rule", batch: str | None = None, **kwargs) -> dict:
    meta = {"severity": severity, "protects": protects}
    if batch:
        meta["batch"] = batch
    return {"type": type_, "kwargs": kwargs, "meta": meta}


@pytest.fixture(scope="module")
def contract():
    """An empty warehouse with the contract schema, and its columns by table."""
    con = duckdb.connect()
    warehouse.ensure_schema(con)
    rows = con.execute(
        "SELECT table_schema || '.' || table_name, column_name FROM information_schema.columns "
        "WHERE table_schema IN ('raw', 'staging', 'core', 'marts', 'enrichment')"
    ).fetchall()
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    yield con, columns
    con.close()


@pytest.fixture
def con(tmp_path):
    con = duckdb.connect(str(tmp_path / "wh.duckdb"))
    warehouse.ensure_schema(con)
    yield con
    con.close()


# =============================================================================== frames


def test_a_clean_frame_passes():
    suite = _suite([
        _exp("expect_column_values_to_not_be_null", column="id"),
        _exp("expect_column_values_to_be_unique", column="id"),
        _exp("expect_column_values_to_be_in_set", column="source", value_set=["bzpeer", "scholarfeed"]),
        _exp("expect_column_values_to_be_between", column="position", min_value=1),
        _exp("expect_compound_columns_to_be_unique", column_list=["source", "position"]),
    ])
    frame = pl.DataFrame({"id": ["a", "b", "c"], "source": ["bzpeer", "scholarfeed", "bzpeer"], "position": [1, 1, 2]})
    outcomes = quality.validate_frame(suite, frame)
    assert [o.success for o in outcomes] == [True] * 5
    assert all(o.unexpected_count == 0 and o.sample is None for o in outcomes)


def test_failures_carry_counts_and_a_sample_of_the_offending_rows():
    suite = _suite([
        _exp("expect_column_values_to_be_unique", column="id", protects="ids are unique"),
        _exp("expect_column_values_to_be_in_set", column="source", value_set=["bzpeer", "scholarfeed"]),
        _exp("expect_column_values_to_not_be_null", column="title"),
    ])
    frame = pl.DataFrame({
        "id": ["a", "b", "b", "c"],
        "source": ["bzpeer", "elsewhere", "bzpeer", "bzpeer"],
        "title": ["T1", None, "T3", "T4"],
        "body": [b"x", b"y", b"z", b"w"],  # a column no rule reads never reaches GX
    })
    unique, allowed, not_null = quality.validate_frame(suite, frame)

    assert not unique.success and unique.unexpected_count == 2 and unique.element_count == 4
    assert unique.sample["id"].to_list() == ["b", "b"]
    assert unique.sample.columns == ["id"]  # sample_columns + the rule's own column, deduplicated

    assert not allowed.success and allowed.unexpected_count == 1
    assert allowed.sample.to_dicts() == [{"id": "b", "source": "elsewhere"}]

    assert not not_null.success and not_null.unexpected_count == 1
    assert not_null.sample.to_dicts() == [{"id": "b", "title": None}]

    text = quality.outcome_markdown(unique)
    assert "ids are unique" in text and "unexpected: 2 of 4 rows" in text and "| b |" in text


def test_samples_are_capped_at_ten_rows():
    suite = _suite([_exp("expect_column_values_to_be_in_set", column="flag", value_set=[False])])
    frame = pl.DataFrame({"id": [str(i) for i in range(40)], "flag": [True] * 25 + [False] * 15})
    (outcome,) = quality.validate_frame(suite, frame)
    assert outcome.unexpected_count == 25
    assert outcome.sample.height == quality.SAMPLE_ROWS


def test_an_empty_frame_passes_row_rules():
    suite = _suite([
        _exp("expect_column_values_to_be_unique", column="id"),
        _exp("expect_compound_columns_to_be_unique", column_list=["id", "flag"]),
        _exp("expect_column_values_to_be_in_set", column="flag", value_set=[False]),
    ])
    frame = pl.DataFrame(schema={"id": pl.String, "flag": pl.Boolean})
    assert all(o.success for o in quality.validate_frame(suite, frame))


def test_a_missing_column_fails_instead_of_passing():
    suite = _suite([_exp("expect_column_values_to_be_unique", column="nope")])
    (outcome,) = quality.validate_frame(suite, pl.DataFrame({"id": ["a"]}))
    assert not outcome.success
    assert "nope" in outcome.error


def test_block_and_warn_rules_are_validated_separately():
    suite = _suite([
        _exp("expect_column_values_to_be_unique", column="id"),
        _exp("expect_column_values_to_be_in_set", severity="warn", column="flag", value_set=[False]),
    ])
    frame = pl.DataFrame({"id": ["a", "b"], "flag": [True, False]})
    (gate,) = quality.validate_frame(suite, frame, severity="block")
    (warning,) = quality.validate_frame(suite, frame, severity="warn")
    assert gate.success and gate.rule.severity == "block"
    assert not warning.success and warning.rule.severity == "warn"
    assert suite.severities() == ("block", "warn")


def test_pandas_frames_work_too():
    suite = _suite([_exp("expect_column_values_to_be_unique", column="id")])
    frame = pl.DataFrame({"id": ["x", "y", "x"]}).to_pandas()
    frame.index = [10, 20, 30]  # positions, not labels, pick the sample rows
    (outcome,) = quality.validate_frame(suite, frame)
    assert outcome.unexpected_count == 2 and outcome.sample["id"].to_list() == ["x", "x"]


def test_the_gx_context_is_created_once_and_reused():
    assert quality._gx_runtime() is quality._gx_runtime()
    assert quality._gx_runtime()["context"] is quality._gx_runtime()["context"]


# =============================================================================== suite files


def test_invalid_suites_are_rejected_loudly():
    with pytest.raises(quality.SuiteError, match="severity"):
        _suite([_exp("expect_column_values_to_be_unique", severity="fatal", column="id")])
    with pytest.raises(quality.SuiteError, match="protects"):
        _suite([{"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}, "meta": {"severity": "block"}}])
    with pytest.raises(quality.SuiteError, match="unknown batch"):
        _suite([_exp("expect_column_values_to_be_unique", batch="nowhere", column="id")])
    with pytest.raises(quality.SuiteError, match="unknown parameters"):
        _suite([], query="SELECT * FROM t WHERE d = $day")
    # GX itself would log an invalid expectation and drop it; we refuse it.
    bad = _suite([_exp("expect_column_values_to_be_between", column="x", min_value="not a number", max_value=[1])])
    with pytest.raises(quality.SuiteError, match="not valid in GX"):
        bad.to_gx()
    unknown = _suite([_exp("expect_column_values_to_be_wonderful", column="x")])
    with pytest.raises(quality.SuiteError):
        unknown.to_gx()


def test_a_suite_file_is_named_after_its_table(tmp_path):
    document = {"name": "staging.listings", "expectations": [],
                "meta": {"table": "staging.listings", "query": "SELECT 1"}}
    (tmp_path / "listings.json").write_text(json.dumps(document))
    with pytest.raises(quality.SuiteError, match="named after its table"):
        quality.load_suite(tmp_path / "listings.json")


def test_every_contract_table_has_a_suite():
    suites = quality.load_suites()
    assert sorted(suites) == sorted(CONTRACT_TABLES)
    for table, suite in suites.items():
        assert suite.name == table
        assert suite.path.name == f"{table}.json"
        assert suite.rules_with("block"), f"{table} has no gates"
        assert suite.rules_with("warn"), f"{table} has no warnings"


def test_the_contract_is_fully_covered(contract):
    _, columns = contract
    assert set(columns) == set(CONTRACT_TABLES) | set(REGISTRIES) | set(BEHIND_VIEWS)
    suites = quality.load_suites()
    for registry, guard in (REGISTRIES | BEHIND_VIEWS).items():
        assert any(registry in b.query for b in suites[guard].batches.values()), registry


@pytest.mark.parametrize("table", CONTRACT_TABLES)
def test_suite_names_only_existing_tables_and_columns(contract, table):
    con, columns = contract
    suite = quality.load_suites()[table]
    assert suite.table in columns
    every_contract_column = set().union(*columns.values())
    partitioned = table.startswith(("raw.", "staging.", "enrichment.")) or table in ("marts.author_metrics", "marts.nightly_summary")
    assert suite.partitioned == partitioned
    for batch in suite.batches.values():
        # The query binds against the contract (DuckDB rejects unknown tables and columns).
        frame = quality.fetch_batch(con, batch, DAY)
        for derived in batch.derived_columns:
            assert derived in frame.columns, f"{table}/{batch.name}: derived column {derived} not selected"
            assert derived not in columns[suite.table], f"{table}: {derived} shadows a contract column"
        for shown in batch.sample_columns:
            assert shown in frame.columns, f"{table}/{batch.name}: sample column {shown} not selected"
        for rule in suite.rules_with(batch=batch.name):
            for column in rule.columns:
                assert column in frame.columns, f"{table}: {rule.label} reads a column its query lacks"
                if batch.name == quality.ROWS_BATCH:
                    known = columns[suite.table] | set(batch.derived_columns)
                else:
                    known = every_contract_column | set(batch.derived_columns)
                assert column in known, f"{table}: {rule.label} names {column}, neither contract nor derived"
            for shown in rule.meta.get("sample_columns", []):
                assert shown in frame.columns
    for rule in suite.rules:
        assert rule.protects and len(rule.protects) < 160 and "\n" not in rule.protects
    # Every rule is a valid GX expectation (GX would otherwise drop it with a log line).
    gx_suite = suite.to_gx()
    assert len(gx_suite.expectations) == len(suite.rules)
    # And every batch validates cleanly on the empty warehouse.
    reports = quality.run_suite(con, suite, partition_date=DAY)
    assert all(r.passed for r in reports.values()), {s: quality.report_markdown(r) for s, r in reports.items()}


# =============================================================================== warehouse


def _capture(con, capture_id: str, day: date = DAY, url: str | None = None) -> None:
    """A raw.page_captures row: a fetch and its body (the view's two tables)."""
    con.execute(
        "INSERT INTO raw.fetches (capture_id, fetch_id, source, url, captured_at, partition_date, origin, encoding, "
        "loaded_at) VALUES (?, ?, 'bzpeer', ?, ?, ?, 'captures', 'utf-8', now())",
        [capture_id, capture_id[:16], url or f"https://www.bzpeer.com/authors/{capture_id[:6]}", datetime(day.year, day.month, day.day, 6, tzinfo=timezone.utc), day],
    )
    con.execute("INSERT INTO raw.page_bodies (capture_id, encoding, body, byte_size) SELECT ?, 'utf-8', 'text', 10 "
                "WHERE NOT EXISTS (SELECT 1 FROM raw.page_bodies WHERE capture_id = ?)", [capture_id, capture_id])


def _profile(con, capture_id: str, listed: int, day: date = DAY) -> None:
    staged_rows.profile(con, capture_id=capture_id, fetch_id=capture_id[:16], partition_date=day, source="bzpeer",
                        source_profile_id="p-" + capture_id[:6],
                        captured_at=datetime(day.year, day.month, day.day, 6, tzinfo=timezone.utc), name="A Person",
                        listed_items=listed)


def _listing(con, key: str, capture_id: str, position: int, day: date = DAY, pub_date: date | None = None,
             year_inferred: bool = False) -> str:
    """A staging.listings row; returns its listing_id (hash of the night, capture and position)."""
    return staged_rows.listing(con, listing_key="k" + key, capture_id=capture_id, partition_date=day, source="bzpeer",
                               source_profile_id="p-" + capture_id[:6], position=position, title=f"Title {key}",
                               year=pub_date.year if pub_date else 2024, pub_date=pub_date, year_inferred=year_inferred)


def test_listing_gates_catch_duplicates_orphans_and_dates_after_capture(con):
    good, missing = "a" * 64, "b" * 64
    _capture(con, good)
    _profile(con, good, listed=4)
    _listing(con, "L1", good, 1)
    _listing(con, "L2", good, 1)                          # the same position twice: a duplicate listing_id
    l3 = _listing(con, "L3", good, 3, pub_date=date(2026, 12, 24), year_inferred=True)  # the parser's inference went wrong
    l5 = _listing(con, "L5", good, 4, pub_date=date(2027, 1, 15))  # the page itself says 2027: a finding, not a bug
    l4 = _listing(con, "L4", missing, 1)                  # its capture never landed
    suite = quality.load_suites()["staging.listings"]

    reports = quality.run_suite(con, suite, partition_date=DAY)
    gates = reports["block"]
    assert not gates.passed
    failed = {o.rule.label: o for o in gates.failed}
    assert set(failed) == {
        "expect_column_values_to_be_unique(listing_id)",
        "expect_compound_columns_to_be_unique(capture_id, position)",  # the view's id is the night, capture, position
        "expect_column_values_to_be_between(listings_stored_twice)",   # ... so the parse stored a position twice
        "expect_column_values_to_be_in_set(orphan_capture)",
        "expect_column_values_to_be_in_set(orphan_profile)",
        "expect_column_values_to_be_in_set(inferred_date_after_capture)",
    }
    assert failed["expect_column_values_to_be_unique(listing_id)"].unexpected_count == 2
    assert failed["expect_column_values_to_be_in_set(orphan_capture)"].sample["listing_id"].to_list() == [l4]
    assert failed["expect_column_values_to_be_in_set(inferred_date_after_capture)"].sample["listing_id"].to_list() == [l3]
    assert gates.partitions == ("2026-11-21",)
    (future,) = reports["warn"].failed  # findings are separate from gates
    assert future.rule.label == "expect_column_values_to_be_in_set(dated_after_capture)"
    assert future.sample["listing_id"].to_list() == [l5]

    # Another partition is not this partition's problem.
    assert quality.run_suite(con, suite, partition_date=date(2026, 11, 22))["block"].passed


def test_the_authorship_gate_catches_a_missing_paper(con):
    con.execute("INSERT INTO core.authors (author_id, display_name, profiles_count, papers_count, names_count, first_seen) "
                "VALUES ('A1', 'Ann', 1, 1, 1, ?)", [DAY])
    con.execute("INSERT INTO core.papers (paper_id, title, listings_count, profiles_count, sources, authors_known, "
                "byline_complete, first_seen, last_seen) VALUES ('P1', 'T', 1, 1, ['bzpeer'], 1, true, ?, ?)", [DAY, DAY])
    for paper in ("P1", "P404"):
        con.execute("INSERT INTO core.authorships (paper_id, author_id, evidence, evidence_all) "
                    "VALUES (?, 'A1', 'profile', ['profile'])", [paper])
    report = quality.run_suite(con, quality.load_suites()["core.authorships"])["block"]
    (failure,) = report.failed
    assert failure.rule.label == "expect_column_values_to_be_in_set(orphan_paper)"
    assert failure.unexpected_count == 1
    assert failure.sample.to_dicts()[0]["paper_id"] == "P404"
    assert "authorships → papers" in failure.rule.protects


def test_implausible_h_index_is_a_warning_with_the_profile_as_sample(con):
    good = "c" * 64
    _capture(con, good)
    _profile(con, good, listed=0)
    con.execute(
        "INSERT INTO marts.author_metrics (source, source_profile_id, as_of, capture_id, captured_at, profile_name, "
        "reported_h_index, reported_citations, reported_papers, declared_items, listed_items, papers_held, "
        "h_index_upper_bound, h_index_implausible, listing_incomplete) "
        "VALUES ('bzpeer', ?, ?, ?, now(), 'Yucheng Ding', 39, 108, 15, 15, 15, 0, 10, true, false)",
        ["p-" + good[:6], DAY, good],
    )
    reports = quality.run_suite(con, quality.load_suites()["marts.author_metrics"], partition_date=DAY)
    assert reports["block"].passed
    (finding,) = reports["warn"].failed
    assert finding.rule.label == "expect_column_values_to_be_in_set(h_index_implausible)"
    row = finding.sample.to_dicts()[0]
    assert row["profile_name"] == "Yucheng Ding" and row["reported_h_index"] == 39 and row["h_index_upper_bound"] == 10


def test_a_sudden_drop_in_listings_is_a_warning_from_a_one_row_batch(con):
    suite = quality.load_suites()["staging.listings"]
    before, today = date(2026, 11, 19), DAY
    for day, count in ((before, 10), (today, 3)):
        capture = (day.isoformat().replace("-", "") * 8)[:64]
        _capture(con, capture, day)
        _profile(con, capture, listed=count, day=day)
        for position in range(1, count + 1):
            _listing(con, f"{day}-{position}", capture, position, day)
    # The first partition has nothing before it: no warning.
    assert quality.run_suite(con, suite, partition_date=before)["warn"].passed
    warn = quality.run_suite(con, suite, partition_date=today)["warn"]
    (drop,) = warn.failed
    assert drop.rule.batch == "volume" and warn.rows["volume"] == 1
    assert drop.sample.to_dicts()[0] == {
        "partition_date": today, "row_count": 3, "previous_partition": before, "previous_row_count": 10,
        "volume_drop": True,
    }


def test_every_capture_must_be_accounted_for(con):
    parsed, dropped = "d" * 64, "e" * 64
    _capture(con, parsed)
    _capture(con, dropped)
    _profile(con, parsed, listed=0)
    reports = quality.run_suite(con, quality.load_suites()["staging.rejects"], partition_date=DAY)
    (unaccounted,) = reports["block"].failed
    assert unaccounted.rule.label == "expect_column_values_to_be_in_set(capture_unaccounted)"
    assert unaccounted.sample["capture_id"].to_list() == [dropped]
    # Half the night's pages yielded no profile: above the 20% reject-rate threshold.
    (rate,) = reports["warn"].failed
    assert rate.sample.to_dicts()[0]["reject_pct"] == 50.0


def test_a_broken_query_fails_its_rules_with_the_error(con):
    suite = _suite([_exp("expect_column_values_to_be_unique", column="id")], query="SELECT id FROM no_such.table")
    (report,) = quality.run_suite(con, suite).values()
    assert not report.passed and "no_such" in report.failed[0].error


def test_markdown_tables_escape_pipes_and_cut_long_cells():
    text = quality.markdown_table(pl.DataFrame({"a": ["x|y", "z" * 100], "b": [None, "line\nbreak"]}))
    assert "x\\|y" in text and "line break" in text and "z" * 100 not in text


def test_the_readme_lists_what_every_suite_protects():
    readme = (quality.EXPECTATIONS_DIR / "README.md").read_text()
    for table, suite in quality.load_suites().items():
        section = readme.split(f"### `{table}`", 1)
        assert len(section) == 2, f"expectations/README.md has no section for {table}"
        body = section[1].split("\n### ", 1)[0]
        for severity in quality.SEVERITIES:
            for line in suite.protects(severity):
                assert f"- {line}\n" in body + "\n", f"README section {table} lacks: {line}"


def test_the_suites_patterns_accept_what_the_parsers_produce():
    import re

    from pipelines.staging.parsing.categories import ALL_CATEGORIES, STANDALONE_ARCHIVES

    def pattern(table: str, column: str) -> re.Pattern:
        (rule,) = [r for r in quality.load_suites()[table].rules
                   if r.type == "expect_column_values_to_match_regex" and r.columns == (column,)]
        return re.compile(rule.kwargs["regex"])

    for table, column in (("staging.listings", "category"), ("staging.profiles", "primary_category"),
                          ("core.papers", "category")):
        category = pattern(table, column)
        assert all(category.search(code) for code in ALL_CATEGORIES | STANDALONE_ARCHIVES)
        assert not category.search("LG") and not category.search("cs.LG extra")
    arxiv = pattern("staging.listings", "arxiv_id")
    for good in ("2401.01234", "0704.0001", "hep-th/9901001", "math.GT/0309136"):
        assert arxiv.search(good), good
    for bad in ("2401.01234v2", "arXiv:2401.01234", "https://arxiv.org/abs/2401.01234"):
        assert not arxiv.search(bad), bad

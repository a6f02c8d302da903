"""Per-paper citations over time and the author metrics recomputed from them, on a hand-built warehouse.

The rows a night leaves in ``core`` (papers, authorships, the crosswalk, redirects) and ``enrichment``
(OpenAlex works, as fetched night by night) are inserted directly; ``pipelines.marts.build`` then builds
``marts.citations`` and ``marts.author_metrics`` with their real SQL. No Dagster, no network.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import duckdb
import pytest

from pipelines import warehouse
from pipelines.marts import build as marts
from tests import staged_rows

D1, D2, D3 = date(2026, 11, 19), date(2026, 11, 20), date(2026, 11, 21)


@pytest.fixture
def con(tmp_path):
    with warehouse.connect(tmp_path / "wh.duckdb") as connection:
        warehouse.ensure_schema(connection)
        yield connection


def add_paper(con, paper_id: str, first_seen: date = D1, *, authors: tuple[str, ...] = ()) -> None:
    con.execute("INSERT INTO core.papers (paper_id, title, listings_count, profiles_count, sources, authors_known, "
                "byline_complete, first_seen, last_seen) VALUES (?, ?, 1, 1, ['bzpeer'], 1, false, ?, ?)",
                [paper_id, f"Title of {paper_id}", first_seen, D3])
    for author in authors:
        con.execute("INSERT INTO core.authorships VALUES (?, ?, 'profile', ['profile'], NULL, NULL)", [paper_id, author])


def link(con, paper_id: str, scheme: str, value: str, linked_by: str = "arxiv_id") -> None:
    con.execute("INSERT INTO core.paper_identifiers VALUES (?, ?, ?, NULL, ['openalex'], ?, true, ?, ?)",
                [paper_id, scheme, value, linked_by, D1, D3])


def fetched(con, night: date, openalex_id: str, cited: int, by_year: list[tuple[int, int]] = ()) -> None:
    con.execute("INSERT INTO enrichment.openalex_works (partition_date, openalex_id, cited_by_count, counts_by_year, "
                "is_authors_truncated, matched_by) VALUES (?, ?, ?, ?, false, 'arxiv_doi')",
                [night, openalex_id, cited, [{"year": y, "cited_by_count": c} for y, c in by_year]])


def profile(con, night: date, profile_id: str, author_id: str, *, h: int | None, papers: int | None,
            citations: int | None) -> None:
    staged_rows.profile(con, capture_id=f"c-{profile_id}-{night}", fetch_id=f"f-{profile_id}-{night}", partition_date=night,
                        source="scholarfeed", source_profile_id=profile_id, captured_at=datetime.now(timezone.utc),
                        name=f"Person {profile_id}", h_index=h, declared_papers=papers, citations=citations)
    con.execute("INSERT INTO core.author_profiles SELECT 'scholarfeed', ?, ?, NULL, 'algorithm', ? "
                "WHERE NOT EXISTS (SELECT 1 FROM core.author_profiles WHERE source_profile_id = ?)",
                [profile_id, author_id, night, profile_id])


def rows(con, sql: str, params=()) -> list[tuple]:
    return con.execute(sql, list(params)).fetchall()


# ============================================================================ marts.citations

def test_paper_series_by_night_and_by_year_for_every_linked_work(con):
    add_paper(con, "P1")
    add_paper(con, "P2")
    add_paper(con, "P3")
    link(con, "P1", "openalex", "W2")
    # OpenAlex answered P1's arXiv DOI with W1 for two nights, then with W2: the old id's nights stay P1's
    con.execute("INSERT INTO core.id_redirects VALUES ('openalex', 'W1', 'W2', 'superseded', ?)", [D3])
    fetched(con, D1, "W1", 10)
    fetched(con, D2, "W1", 12)
    fetched(con, D3, "W2", 15, [(2022, 4), (2024, 3), (2026, 8)])
    link(con, "P2", "openalex", "W5", linked_by="title")        # found by a verified title: counts too
    fetched(con, D3, "W5", 2, [(2025, 2)])
    fetched(con, D3, "W9", 382, [(2026, 382)])                    # a work no paper is linked to: nobody's
    marts.build_citations(con)

    totals = rows(con, "SELECT paper_id, as_of, citations, previous_as_of, change, capture_id FROM marts.citations "
                       "WHERE level = 'paper' AND measure = 'total' ORDER BY paper_id, as_of")
    assert totals == [("P1", D1, 10, None, None, "W1"), ("P1", D2, 12, D1, 2, "W1"), ("P1", D3, 15, D2, 3, "W2"),
                      ("P2", D3, 2, None, None, "W5")]
    years = rows(con, "SELECT paper_id, as_of, year, citations, previous_citations, change FROM marts.citations "
                      "WHERE measure = 'in_year' ORDER BY paper_id, year")
    # the newest record's counts_by_year; the years OpenAlex leaves out (no citations) are 0, up to the record's year
    assert years == [("P1", D3, 2022, 4, None, None), ("P1", D3, 2023, 0, 4, -4), ("P1", D3, 2024, 3, 0, 3),
                     ("P1", D3, 2025, 0, 3, -3), ("P1", D3, 2026, 8, 0, 8),
                     ("P2", D3, 2025, 2, None, None), ("P2", D3, 2026, 0, 2, -2)]
    assert rows(con, "SELECT count(*) FROM marts.citations WHERE citations = 382") == [(0,)]
    assert rows(con, "SELECT count(*) FROM marts.citations WHERE previous_as_of IS NOT NULL AND measure = 'in_year'") == [(0,)]


def test_a_rebuild_gives_the_same_rows(con):
    add_paper(con, "P1")
    link(con, "P1", "openalex", "W2")
    fetched(con, D2, "W2", 3, [(2026, 3)])
    marts.build_citations(con)
    first = rows(con, "SELECT * FROM marts.citations ORDER BY ALL")
    marts.build_citations(con)
    assert rows(con, "SELECT * FROM marts.citations ORDER BY ALL") == first and first


# ============================================================================ marts.author_metrics

def counted_person(con, author: str, counts: list[int], uncounted: int, *, night: date = D3, prefix: str = "") -> None:
    """A person holding ``len(counts) + uncounted`` papers, ``counts`` of them with a per-paper count."""
    for i, cited in enumerate(counts + [None] * uncounted):
        paper = f"{prefix}{author}-P{i}"
        add_paper(con, paper, authors=(author,))
        if cited is not None:
            link(con, paper, "openalex", f"W{prefix}{author}{i}")
            fetched(con, night, f"W{prefix}{author}{i}", cited)


def metrics(con, as_of: date = D3) -> dict[str, dict]:
    marts.build_author_metrics(con, as_of)
    frame = warehouse.read_frame(con, "SELECT * FROM marts.author_metrics WHERE as_of = ?", [as_of])
    return {r["source_profile_id"]: r for r in frame.iter_rows(named=True)}


def test_recomputed_citations_h_index_and_i10_from_the_papers_held(con):
    counted_person(con, "A1", [10, 8, 5, 4, 3], uncounted=1)
    profile(con, D3, "1", "A1", h=4, papers=6, citations=30)
    m = metrics(con)["1"]
    assert (m["papers_held"], m["papers_with_citations"], m["recomputed_citations"], m["recomputed_h_index"],
            m["recomputed_i10_index"], m["recomputed_source"], m["recomputed_as_of"]) == (6, 5, 30, 4, 1, "openalex", D3)
    assert m["citation_coverage"] == pytest.approx(5 / 6)
    # the paper without a count, taken as cited without limit, cannot lift h to 5 (it, 10, 8, 5 — then 4 < 5)
    assert m["recomputed_h_index_bound"] == 4 and not m["h_index_implausible"]


def test_a_person_without_counts_has_no_recomputed_figures(con):
    counted_person(con, "A1", [], uncounted=3)
    profile(con, D3, "1", "A1", h=2, papers=3, citations=9)
    m = metrics(con)["1"]
    assert (m["papers_with_citations"], m["citation_coverage"], m["recomputed_citations"], m["recomputed_h_index"],
            m["recomputed_source"], m["recomputed_h_index_bound"]) == (0, 0.0, None, None, None, None)


@pytest.mark.parametrize(
    ("reported_h", "counted", "uncounted", "implausible"),
    [
        (20, 36, 4, True),    # 90 % covered, bound 4 (4 uncounted + none of the 2-citation papers): 20 > 1.5·4 + 2
        (8, 36, 4, False),    # within the margin for citation databases that count more than OpenAlex
        (20, 20, 20, False),  # 50 % covered: below the bar, the recomputed figures do not judge
    ],
)
def test_the_plausibility_flag_uses_recomputed_figures_when_coverage_allows(con, reported_h, counted, uncounted, implausible):
    counted_person(con, "A1", [2] * counted, uncounted=uncounted)
    # self-consistent as reported: h <= min(40 papers, floor(sqrt(900)) = 30)
    profile(con, D3, "1", "A1", h=reported_h, papers=40, citations=900)
    m = metrics(con)["1"]
    assert m["h_index_upper_bound"] == 30
    assert m["recomputed_h_index"] == 2
    assert m["h_index_implausible"] is implausible
    assert (m["recomputed_h_index_bound"] is None) == (counted / 40 < marts.MIN_CITATION_COVERAGE)


def test_counts_fetched_after_the_day_are_not_that_days_figures(con):
    """Backfilling D2 after D3 ran gives D2's row as it was: the per-paper counts fetched by D2."""
    counted_person(con, "A1", [3, 3], uncounted=0, night=D2)
    fetched(con, D3, "WA10", 50)
    profile(con, D2, "1", "A1", h=2, papers=2, citations=6)
    profile(con, D3, "1", "A1", h=2, papers=2, citations=53)
    assert metrics(con, D3)["1"]["recomputed_citations"] == 53
    m = metrics(con, D2)["1"]
    assert (m["recomputed_citations"], m["recomputed_as_of"]) == (6, D2)

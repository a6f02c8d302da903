"""OpenAlex client: record parsing from recorded fixtures, and the client against a local fake API."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs

import polars as pl
import pytest

from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.http import ContactRequiredError, HttpSettings, ManualClock, PoliteHttp
from pipelines.ingest.sources.openalex import (
    AUTHORS_SCHEMA,
    WORKS_SCHEMA,
    OpenAlexBadAnswer,
    OpenAlexBudgetExhausted,
    OpenAlexClient,
    OpenAlexError,
    normalize_doi,
    normalize_orcid,
    openalex_authors_frame,
    openalex_works_frame,
    parse_author,
    parse_work,
    rebuild_abstract,
)

try:
    from tests.httpserver import LocalHttpServer, Reply
except ImportError:
    from httpserver import LocalHttpServer, Reply

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openalex"
JSON = "application/json"
MAILTO = "enrichment-tests@example.org"
NEXT_CURSOR = json.loads((FIXTURES / "works_page1.json").read_text())["meta"]["next_cursor"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def fake_works_list(req) -> Reply:
    params = parse_qs(req.query)
    if "filter" in params and params["filter"][0].startswith("title.search:"):
        return Reply(200, fixture("title_search.json"), content_type=JSON)
    cursor = params.get("cursor", [None])[0]
    if cursor == "*":
        return Reply(200, fixture("works_page1.json"), content_type=JSON)
    if cursor == NEXT_CURSOR:
        return Reply(200, fixture("works_page2.json"), content_type=JSON)
    return Reply(200, fixture("works_empty.json"), content_type=JSON)


@pytest.fixture
def server():
    with LocalHttpServer() as srv:
        srv.route("/works/doi:10.48550/arxiv.2401.00001", Reply(200, fixture("work_arxiv.json"), content_type=JSON))
        srv.route("/works/doi:10.7717/peerj.4375", Reply(200, fixture("work_sample.json"), content_type=JSON))
        srv.route("/authors/orcid:0000-0001-6187-6610", Reply(200, fixture("author.json"), content_type=JSON))
        srv.route("/works", fake_works_list)
        yield srv


@pytest.fixture
def clock():
    return ManualClock(datetime(2026, 11, 21, 3, 0, tzinfo=timezone.utc))


@pytest.fixture
def cache(tmp_path):
    c = SourceCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


def make_client(server, clock, cache=None, budget=1000, **kw) -> OpenAlexClient:
    http = PoliteHttp(
        HttpSettings(contact=MAILTO, default_rate_limit_s=0.0, backoff_base_s=0.5, jitter_fraction=0.0, max_retries=2,
                     read_timeout_s=2.0, trust_env=False),
        clock=clock,
    )
    return OpenAlexClient(http, cache, MAILTO, budget, base_url=server.base_url, **kw)


# ============================================================================ parsing

def test_documented_work_parses():
    work = parse_work(json.loads(fixture("work_sample.json")), matched_by="doi")
    assert work.openalex_id == "W2741809807" and work.doi == "10.7717/peerj.4375"
    assert work.publication_year == 2018 and work.publication_date == date(2018, 2, 13)
    assert work.cited_by_count == 382 and work.counts_by_year == ()
    assert work.abstract == "Despite growing interest in Open Access"
    (a,) = work.authorships
    assert (a.position, a.display_name, a.openalex_author_id, a.orcid) == (1, "Juan Pablo Alperin", "A5085171399", "0000-0002-9344-7439")
    assert a.institutions == ("Simon Fraser University",) and work.arxiv_id is None


def test_documented_author_parses():
    author = parse_author(json.loads(fixture("author.json")))
    assert (author.openalex_id, author.orcid, author.display_name) == ("A5023888391", "0000-0001-6187-6610", "Jason Priem")
    assert author.display_name_alternatives == ("Jason R Priem",)
    assert (author.works_count, author.cited_by_count, author.h_index, author.i10_index) == (49, 4215, 20, 30)
    assert author.counts_by_year == ((2021, 1, 252), (2022, 0, 8))


def test_rebuild_abstract_orders_words_by_position():
    assert rebuild_abstract({"world": [1], "hello": [0, 2], "again": [3]}) == "hello world hello again"
    assert rebuild_abstract(None) is None and rebuild_abstract({}) is None


def test_normalisers():
    assert normalize_doi("https://doi.org/10.48550/arXiv.2401.00001") == "10.48550/arxiv.2401.00001"
    assert normalize_doi("doi:10.1000/ABC") == "10.1000/abc" and normalize_doi("not a doi") is None
    assert normalize_orcid("https://orcid.org/0000-0002-1825-009x") == "0000-0002-1825-009X"
    assert normalize_orcid("0000-0002-1825-0097") == "0000-0002-1825-0097" and normalize_orcid("12") is None


# ============================================================================ client

def test_work_by_arxiv_id_uses_the_arxiv_doi_and_the_polite_pool(server, clock):
    client = make_client(server, clock)
    work = client.work_by_arxiv_id("arXiv:2401.00001v3")
    assert work is not None and work.matched_by == "arxiv_doi" and work.arxiv_id == "2401.00001"
    assert work.openalex_id == "W4390000001" and work.cited_by_count == 42
    assert work.counts_by_year == ((2024, 6), (2025, 25), (2026, 11))
    assert [a.orcid for a in work.authorships] == ["0000-0002-1825-0097", None, "0000-0001-5109-3700"]
    assert work.authorships[2].raw_author_name == "F. Liu"
    assert work.abstract == "We propose MoE-DisCo, a method that reduces the cost of training of mixture-of-experts models."
    (req,) = server.requests_to("/works/doi:10.48550/arxiv.2401.00001")
    assert parse_qs(req.query)["mailto"] == [MAILTO]
    assert f"mailto:{MAILTO}" in req.headers["user-agent"]


def test_work_by_doi_and_404_is_not_found_not_an_error(server, clock, cache):
    client = make_client(server, clock, cache)
    assert client.work_by_doi("https://doi.org/10.7717/peerj.4375").openalex_id == "W2741809807"
    assert client.work_by_doi("10.1000/does-not-exist") is None
    assert client.work_by_doi("10.1000/does-not-exist") is None  # the 404 is remembered
    assert server.hits("/works/doi:10.1000/does-not-exist") == 1


def test_author_by_orcid(server, clock):
    client = make_client(server, clock)
    author = client.author_by_orcid("https://orcid.org/0000-0001-6187-6610")
    assert author.openalex_id == "A5023888391" and author.h_index == 20
    assert client.author_by_orcid("0000-0000-0000-0000") is None
    frame = openalex_authors_frame([author])
    assert frame.schema == pl.Schema(AUTHORS_SCHEMA)
    row = frame.row(0, named=True)
    assert row["counts_by_year"] == [{"year": 2021, "works_count": 1, "cited_by_count": 252},
                                     {"year": 2022, "works_count": 0, "cited_by_count": 8}]
    assert row["display_name_alternatives"] == ["Jason R Priem"]


def test_cursor_paging_walks_every_page(server, clock):
    client = make_client(server, clock)
    works = list(client.iter_works(filter="author.id:A5000000001"))
    assert [w.openalex_id for w in works] == ["W4390000001", "W4390000002", "W4390000003"]
    assert [w.is_authors_truncated for w in works] == [False, True, False]
    assert works[2].arxiv_id == "2303.00003"  # from the arXiv landing page, no DOI
    reqs = [parse_qs(r.query) for r in server.requests_to("/works")]
    assert [r["cursor"][0] for r in reqs] == ["*", NEXT_CURSOR]
    assert all(r["per-page"] == ["200"] and r["filter"] == ["author.id:A5000000001"] for r in reqs)
    frame = openalex_works_frame(works)
    assert frame.schema == pl.Schema(WORKS_SCHEMA) and frame.height == 3
    row = frame.row(1, named=True)
    assert row["authorships"][1] == {"position": 2, "display_name": "Yunquan Zhang", "raw_author_name": "Y. Zhang",
                                     "openalex_author_id": "A5000000001", "orcid": "0000-0002-1825-0097"}
    assert row["counts_by_year"] == [{"year": 2025, "cited_by_count": 7}] and row["matched_by"] == "list"
    with pytest.raises(ValueError):
        list(client.iter_works(per_page=500))


def _one_work_page(next_cursor: str | None, count: int) -> str:
    page = json.loads(fixture("works_page1.json"))
    page["results"] = page["results"][:1]
    page["meta"] = {**page["meta"], "next_cursor": next_cursor, "count": count}
    return json.dumps(page)


def test_paging_that_returns_the_same_cursor_again_is_a_bad_answer_not_an_endless_loop(server, clock):
    """Was: the same next_cursor again made the loop ask (or, cached, re-read) the same page forever."""
    server.route("/works", Reply(200, _one_work_page("AoJ-same", 10_000), content_type=JSON))
    client = make_client(server, clock)
    got = []
    with pytest.raises(OpenAlexBadAnswer, match="cursor already used"):
        for work in client.iter_works(filter="author.id:A5000000001"):
            got.append(work.openalex_id)
    assert len(got) == 2 and server.hits("/works") == 2


def test_an_empty_page_short_of_the_announced_count_is_a_bad_answer_not_the_end(server, clock):
    """Was: an empty page in the middle ended the list silently, as if it were complete."""
    def pages(req):
        cursor = parse_qs(req.query)["cursor"][0]
        if cursor == "*":
            return Reply(200, _one_work_page("next", 3), content_type=JSON)
        empty = json.loads(_one_work_page(None, 3))
        empty["results"] = []
        return Reply(200, json.dumps(empty), content_type=JSON)

    server.route("/works", pages)
    with pytest.raises(OpenAlexBadAnswer, match="empty page after 1 of 3"):
        list(make_client(server, clock).iter_works(filter="author.id:A5000000001"))


def test_title_search_confirms_title_and_year(server, clock):
    client = make_client(server, clock)
    hit = client.search_work_by_title("Low-Cost Training of Mixture-of-Experts Models", year=2024)
    assert hit is not None and hit.openalex_id == "W4390000010" and hit.matched_by == "title"  # 2025: within a year
    assert client.search_work_by_title("Low-Cost Training of Mixture-of-Experts Models", year=2015).openalex_id == "W2000000001"
    assert client.search_work_by_title("Low-Cost Training of Mixture-of-Experts Models", year=2020) is None
    assert client.search_work_by_title("Something Else Entirely", year=2024) is None
    q = parse_qs(server.requests_to("/works")[0].query)
    assert q["filter"] == ["title.search:low cost training of mixture of experts models"]


def test_daily_budget_stops_cleanly_and_is_shared_through_the_cache(server, clock, cache):
    client = make_client(server, clock, cache, budget=2)
    client.work_by_arxiv_id("2401.00001")
    client.work_by_doi("10.7717/peerj.4375")
    assert client.budget_remaining() == 0
    before = len(server.requests)
    with pytest.raises(OpenAlexBudgetExhausted) as info:
        client.author_by_orcid("0000-0001-6187-6610")
    assert info.value.used == 2 and info.value.budget == 2
    assert len(server.requests) == before  # nothing was sent
    assert client.work_by_arxiv_id("2401.00001").openalex_id == "W4390000001"  # cached answers stay free
    other = make_client(server, clock, cache, budget=2)  # another process, same day
    with pytest.raises(OpenAlexBudgetExhausted):
        other.author_by_orcid("0000-0001-6187-6610")
    clock.sleep(timedelta(days=1).total_seconds())  # a new UTC day, a new budget
    assert other.author_by_orcid("0000-0001-6187-6610") is not None


def test_paging_stops_cleanly_when_the_budget_runs_out(server, clock):
    client = make_client(server, clock, budget=1)
    got = []
    with pytest.raises(OpenAlexBudgetExhausted):
        for work in client.iter_works(filter="author.id:A5000000001"):
            got.append(work.openalex_id)
    assert got == ["W4390000001", "W4390000002"]  # the first page was delivered before stopping


def test_persistent_429_means_stop_for_today(server, clock):
    server.route("/works/doi:10.1000/x", Reply(429, '{"error":"rate limit"}', content_type=JSON))
    client = make_client(server, clock)
    with pytest.raises(OpenAlexBudgetExhausted, match="429"):
        client.work_by_doi("10.1000/x")
    assert server.hits("/works/doi:10.1000/x") == 3  # retried with back-off first


def test_bad_request_is_an_error(server, clock):
    server.route("/works/doi:10.1000/bad", Reply(400, fixture("error_400.json"), content_type=JSON))
    with pytest.raises(OpenAlexError, match="Invalid query parameters"):
        make_client(server, clock).work_by_doi("10.1000/bad")


def test_mailto_is_required(server, clock):
    http = PoliteHttp(HttpSettings(contact=MAILTO, trust_env=False), clock=clock)
    with pytest.raises(ContactRequiredError):
        OpenAlexClient(http, None, None)


def test_empty_frames_are_typed():
    assert openalex_works_frame([]).schema == pl.Schema(WORKS_SCHEMA)
    assert openalex_authors_frame([]).schema == pl.Schema(AUTHORS_SCHEMA)


def test_oddly_shaped_records_parse_as_absent_parts_not_errors():
    """A record OpenAlex serves with a null among its authorships, an author that is a string, a
    number where text belongs or an infinite count: read as absent, never raised on (one such
    answer had failed the whole enrichment step, and stayed cached). Counts too large for their
    column still reach ``answers``' checks (``implausible_value``, the API fault zoo)."""
    work = parse_work({
        "id": "https://openalex.org/W1", "doi": 10.1234, "title": ["not", "text"], "display_name": 7,
        "authorships": [None, "x", {"author": "Jane Roe", "raw_author_name": "Jane Roe", "institutions": [None, {"display_name": 5}]},
                        {"author": {"id": 12, "display_name": "Ann Lee", "orcid": ["0000-0002-9344-7439"]}}],
        "counts_by_year": [None, {"year": "2024", "cited_by_count": 1e400}, {"year": "x", "cited_by_count": 3}],
        "ids": {"arxiv": 2401.00001}, "locations": [None, {"landing_page_url": 3}], "primary_location": "x",
        "abstract_inverted_index": {"word": None, "other": [0, "x"]}, "publication_year": "soon", "cited_by_count": 1e400,
    })
    assert work.openalex_id == "W1" and work.doi is None and work.title == "7" and work.arxiv_id is None
    assert [(a.position, a.display_name, a.raw_author_name, a.institutions) for a in work.authorships] == [
        (1, None, "Jane Roe", ()), (2, "Ann Lee", None, ())]
    assert work.authorships[1].openalex_author_id is None and work.authorships[1].orcid is None
    assert work.counts_by_year == ((2024, 0),) and work.publication_year is None and work.cited_by_count is None
    assert work.abstract == "other"
    assert openalex_works_frame([work]).height == 1  # and it fits the frame's columns

    author = parse_author({"id": "https://openalex.org/A1", "display_name": {"x": 1}, "summary_stats": [1],
                           "display_name_alternatives": "Ann Lee", "ids": "x", "counts_by_year": "x",
                           "works_count": "many", "cited_by_count": float("nan")})
    assert (author.openalex_id, author.display_name, author.display_name_alternatives, author.h_index,
            author.works_count, author.cited_by_count, author.counts_by_year) == ("A1", None, (), None, None, None, ())
    assert openalex_authors_frame([author]).height == 1

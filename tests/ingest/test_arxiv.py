"""arXiv client: Atom parsing from recorded fixtures, and the client against a local fake API."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs

import polars as pl
import pytest

from pipelines.ingest.sources.arxiv import (
    ARXIV_SCHEMA,
    ArxivApiError,
    ArxivClient,
    ArxivRateLimited,
    ArxivUnavailable,
    arxiv_records_frame,
    parse_arxiv_id,
    parse_feed,
)
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.http import HttpSettings, ManualClock, PoliteHttp

try:
    from tests.httpserver import LocalHttpServer, Reply
except ImportError:
    from httpserver import LocalHttpServer, Reply

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
BATCH = (FIXTURES / "batch.xml").read_text()
ATOM = "application/atom+xml; charset=utf-8"
_ENTRY = re.compile(r"<entry>.*?</entry>", re.DOTALL)
CORPUS = {parse_arxiv_id(re.search(r"<id>(.*?)</id>", e).group(1))[0]: e for e in _ENTRY.findall(BATCH)}
FEED_HEAD = BATCH[: BATCH.index("<entry>")]
POISON = "2401.99999"  # well-formed, but our fake API answers any batch holding it with an error entry


def feed_of(entries: list[str]) -> str:
    head = re.sub(r"(<opensearch:totalResults[^>]*>)\d+", rf"\g<1>{len(entries)}", FEED_HEAD)
    return head + "\n".join(entries) + "\n</feed>\n"


def fake_arxiv(req) -> Reply:
    """id_list queries answered from the fixture corpus, as the real API does."""
    params = parse_qs(req.query)
    ids = [i for i in params.get("id_list", [""])[0].split(",") if i]
    if ids:
        if POISON in ids:
            return Reply(200, (FIXTURES / "error.xml").read_text(), content_type=ATOM)
        wanted = [CORPUS[parse_arxiv_id(i)[0]] for i in ids if parse_arxiv_id(i) and parse_arxiv_id(i)[0] in CORPUS]
        return Reply(200, feed_of(wanted[: int(params.get("max_results", ["10"])[0])]), content_type=ATOM)
    return Reply(200, (FIXTURES / "empty.xml").read_text(), content_type=ATOM)


@pytest.fixture
def server():
    with LocalHttpServer() as srv:
        srv.route("/api/query", fake_arxiv)
        yield srv


@pytest.fixture
def clock():
    return ManualClock(datetime(2026, 11, 21, 2, 0, tzinfo=timezone.utc))


@pytest.fixture
def cache(tmp_path):
    c = SourceCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


def make_client(server, clock, cache=None, **kw) -> ArxivClient:
    http = PoliteHttp(
        HttpSettings(contact="tests@example.org", default_rate_limit_s=0.0, backoff_base_s=0.5, jitter_fraction=0.0,
                     read_timeout_s=2.0, trust_env=False),
        clock=clock,
    )
    return ArxivClient(http, cache, base_url=server.url("/api/query"), **kw)


def queries(server) -> list[dict[str, list[str]]]:
    return [parse_qs(r.query) for r in server.requests_to("/api/query")]


# ============================================================================ parsing

def test_batch_feed_is_parsed_into_clean_records():
    fetched = datetime(2026, 11, 21, tzinfo=timezone.utc)
    feed = parse_feed(BATCH.encode(), fetched_at=fetched)
    assert feed.total_results == 3 and not feed.errors
    moe, risk, cusp = feed.records
    assert (moe.arxiv_id, moe.version) == ("2401.00001", 3)
    assert moe.title == "MoE-DisCo: Low-Cost Training of Mixture-of-Experts Models via Disentangled Compression"
    assert moe.abstract.startswith("We propose \\textbf{MoE-DisCo}, a method") and "\n" not in moe.abstract
    assert "training mixture-of-experts models by $4\\times$" in moe.abstract  # unwrapped, LaTeX kept raw
    assert moe.author_names == ["Yunquan Zhang", "Daning Cheng", "Wei Li", "Fang Liu"]
    assert moe.authors[2].affiliations == ("University of Chinese Academy of Sciences", "Example Lab")
    assert moe.authors[1].affiliations == ()
    assert moe.primary_category == "cs.LG" and moe.categories == ("cs.LG", "cs.DC", "stat.ML")
    assert moe.published == datetime(2024, 1, 1, 9, 30, tzinfo=timezone.utc)
    assert moe.updated == datetime(2024, 5, 14, 17, 2, 11, tzinfo=timezone.utc)
    assert moe.doi == "10.1000/example.2024.123" and moe.journal_ref == "Proc. Example Conf. 2024, 1-12"
    assert moe.comment == "12 pages, 5 figures; accepted at an example conference"
    assert moe.pdf_url == "http://arxiv.org/pdf/2401.00001v3" and moe.fetched_at == fetched
    assert risk.doi is None and risk.journal_ref is None and risk.comment is None
    assert (cusp.arxiv_id, cusp.version) == ("cond-mat/0102536", 1)
    assert cusp.title == "Impact of Electron-Electron Cusp on Configuration Interaction Energies"
    assert len(cusp.authors) == 5 and cusp.primary_category == "cond-mat.str-el"


def test_documented_sample_entry_parses():
    entry = Path("/work/shared/api-samples/arxiv_entry.xml")
    text = entry.read_text() if entry.exists() else CORPUS["cond-mat/0102536"]
    text = text.replace("<entry>", '<entry xmlns:arxiv="http://arxiv.org/schemas/atom">', 1)
    feed = parse_feed(feed_of([text]).encode())
    (record,) = feed.records
    assert record.arxiv_id == "cond-mat/0102536" and record.doi == "10.1063/1.1383585"
    assert record.author_names[:2] == ["David Prendergast", "M. Nolan"]


def test_error_entry_is_an_error_not_a_record():
    feed = parse_feed((FIXTURES / "error.xml").read_bytes())
    assert feed.records == [] and feed.total_results == 1
    (error,) = feed.errors
    assert error.message == "incorrect id format for 1234.12345"
    assert error.error_id.startswith("http://arxiv.org/api/errors#")


def test_empty_feed_and_rate_exceeded_body():
    feed = parse_feed((FIXTURES / "empty.xml").read_bytes())
    assert feed.records == [] and feed.errors == [] and feed.total_results == 0
    with pytest.raises(ArxivRateLimited):
        parse_feed((FIXTURES / "rate_exceeded.txt").read_bytes())


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("2401.00001", ("2401.00001", None)), ("arXiv:2401.00001v2", ("2401.00001", 2)),
        ("https://arxiv.org/abs/2401.00001v2", ("2401.00001", 2)), ("http://arxiv.org/pdf/2401.00001v1.pdf", ("2401.00001", 1)),
        ("10.48550/arXiv.2401.00001", ("2401.00001", None)), ("https://doi.org/10.48550/arxiv.2401.00001", ("2401.00001", None)),
        ("cond-mat/0102536v1", ("cond-mat/0102536", 1)), ("math.gt/0309136", ("math.GT/0309136", None)),
        ("0704.0001", ("0704.0001", None)), ("hello", None), ("1234.123", None), ("", None),
    ],
)
def test_parse_arxiv_id(raw, expected):
    assert parse_arxiv_id(raw) == expected


# ============================================================================ client

def test_fetch_by_ids_batches_normalises_and_reports_missing(server, clock):
    client = make_client(server, clock)
    ids = ["arXiv:2401.00001v2", "https://arxiv.org/abs/cond-mat/0102536v1", "2402.00217", "2401.00001", "2501.00042", "hello"]
    records = client.fetch_by_ids(ids)
    assert [r.arxiv_id for r in records] == ["2401.00001", "cond-mat/0102536", "2402.00217"]  # first-seen order
    assert records.missing_ids == ["2501.00042"]
    assert [e.kind for e in records.errors] == ["invalid_id"] and records.errors[0].ids == ("hello",)
    (q,) = queries(server)  # one request for four ids, versions dropped, max_results set
    assert q["id_list"] == ["2401.00001,2402.00217,2501.00042,cond-mat/0102536"]
    assert q["max_results"] == ["4"] and q["start"] == ["0"]


def test_one_request_every_three_seconds(server, clock):
    client = make_client(server, clock, batch_size=1)
    client.fetch_by_ids(["2401.00001", "2402.00217", "cond-mat/0102536"])
    assert len(queries(server)) == 3
    assert clock.sleeps == pytest.approx([3.0, 3.0])  # the host's pace, although the default is 0


def test_error_entry_in_a_batch_is_isolated_by_splitting(server, clock):
    client = make_client(server, clock)
    records = client.fetch_by_ids(["2401.00001", POISON, "2402.00217", "cond-mat/0102536"])
    assert sorted(r.arxiv_id for r in records) == ["2401.00001", "2402.00217", "cond-mat/0102536"]
    assert [(e.kind, e.ids) for e in records.errors] == [("api_error", (POISON,))]
    assert "incorrect id format" in records.errors[0].message
    assert records.missing_ids == []


def test_query_returns_error_entry_as_a_clear_error_result(server, clock):
    client = make_client(server, clock)
    feed = client.query({"id_list": POISON, "max_results": 1})
    assert feed.records == [] and feed.errors and feed.errors[0].kind == "api_error"


def test_rate_exceeded_backs_off_and_retries(server, clock):
    server.fault("/api/query", Reply(200, "Rate exceeded.", content_type="text/plain"),
                 Reply(503, "Rate exceeded.", content_type="text/plain"))
    client = make_client(server, clock, rate_exceeded_backoff_s=20.0)
    records = client.fetch_by_ids(["2402.00217"])
    assert [r.arxiv_id for r in records] == ["2402.00217"]
    assert max(clock.sleeps) >= 20.0  # the host was left alone before asking again


def test_rate_exceeded_forever_raises(server, clock):
    server.route("/api/query", Reply(200, "Rate exceeded.", content_type="text/plain"))
    client = make_client(server, clock, rate_exceeded_retries=2, rate_exceeded_backoff_s=1.0)
    with pytest.raises(ArxivRateLimited):
        client.fetch_by_ids(["2402.00217"])
    assert server.hits("/api/query") == 3


def test_search_title_confirms_by_normalised_title(server, clock):
    server.route("/api/query", Reply(200, (FIXTURES / "title_search.xml").read_text(), content_type=ATOM))
    client = make_client(server, clock)
    # Spacing slip and LaTeX-free variant of the title, as a profile page shows it.
    hit = client.search_title("MoE-DisCo:Low-Cost Training of Mixture-of-Experts Models via Disentangled Compression")
    assert hit is not None and hit.arxiv_id == "2401.00001" and hit.version == 3
    q = queries(server)[0]["search_query"][0]
    assert q == 'ti:"moe disco low cost training of mixture of experts models via disentangled compression"'
    assert client.search_title("Low-Cost Training of Mixture-of-Experts Models") is None  # a phrase hit is not enough


def test_search_title_nothing_found_and_error(server, clock):
    client = make_client(server, clock)
    assert client.search_title("No Such Paper Anywhere") is None  # empty feed
    assert client.search_title("   ") is None and len(queries(server)) == 1
    server.route("/api/query", Reply(200, (FIXTURES / "error.xml").read_text(), content_type=ATOM))
    with pytest.raises(ArxivApiError, match="incorrect id format"):
        client.search_title("Anything")


def test_responses_are_cached_so_a_rerun_sends_nothing(server, clock, cache):
    first = make_client(server, clock, cache).fetch_by_ids(["2401.00001", "2402.00217"])
    assert server.hits("/api/query") == 1
    again = make_client(server, clock, cache).fetch_by_ids(["2402.00217", "arXiv:2401.00001v3"])
    assert server.hits("/api/query") == 1
    assert list(reversed(again)) == first and again[1].fetched_at == first[0].fetched_at
    # Error feeds are not cached: the next run asks again.
    make_client(server, clock, cache).fetch_by_ids([POISON])
    make_client(server, clock, cache).fetch_by_ids([POISON])
    assert server.hits("/api/query") == 3


def test_records_frame_types():
    feed = parse_feed(BATCH.encode(), fetched_at=datetime(2026, 11, 21, tzinfo=timezone.utc))
    frame = arxiv_records_frame(feed.records)
    assert frame.schema == pl.Schema(ARXIV_SCHEMA)
    required = ["arxiv_id", "version", "title", "abstract", "authors", "primary_category", "categories",
                "published", "updated", "doi", "journal_ref", "fetched_at"]
    assert [c for c in frame.columns if c in required] == required
    row = frame.row(0, named=True)
    assert row["authors"] == ["Yunquan Zhang", "Daning Cheng", "Wei Li", "Fang Liu"]
    assert row["categories"] == ["cs.LG", "cs.DC", "stat.ML"]
    assert row["published"] == datetime(2024, 1, 1, 9, 30, tzinfo=timezone.utc)
    empty = arxiv_records_frame([])
    assert empty.height == 0 and empty.schema == pl.Schema(ARXIV_SCHEMA)


def _empty_page_claiming(total: int) -> str:
    """arXiv's sporadic glitch: a feed without entries whose totalResults says it has some."""
    return re.sub(r"(<opensearch:totalResults[^>]*>)\d+", rf"\g<1>{total}", FEED_HEAD) + "</feed>\n"


TITLE = "MoE-DisCo: Low-Cost Training of Mixture-of-Experts Models via Disentangled Compression"


def test_an_empty_search_page_that_claims_results_is_retried_not_taken_for_not_found(server, clock, cache):
    server.route("/api/query", Reply(200, (FIXTURES / "title_search.xml").read_text(), content_type=ATOM))
    server.fault("/api/query", Reply(200, _empty_page_claiming(2), content_type=ATOM))
    client = make_client(server, clock, cache, rate_exceeded_backoff_s=5.0)
    hit = client.search_title(TITLE)
    assert hit is not None and hit.arxiv_id == "2401.00001"
    assert server.hits("/api/query") == 2 and max(clock.sleeps) >= 5.0


def test_an_empty_search_page_forever_is_unavailable_and_never_cached(server, clock, cache):
    server.route("/api/query", Reply(200, _empty_page_claiming(2), content_type=ATOM))
    client = make_client(server, clock, cache, rate_exceeded_retries=1, rate_exceeded_backoff_s=1.0)
    with pytest.raises(ArxivUnavailable, match="empty page"):
        client.search_title(TITLE)
    assert server.hits("/api/query") == 2
    # Nothing was cached: once arXiv answers again, the paper is found.
    server.route("/api/query", Reply(200, (FIXTURES / "title_search.xml").read_text(), content_type=ATOM))
    assert make_client(server, clock, cache).search_title(TITLE).arxiv_id == "2401.00001"


def test_an_empty_search_page_cached_by_an_older_release_is_asked_again(server, clock, cache):
    server.route("/api/query", Reply(200, (FIXTURES / "title_search.xml").read_text(), content_type=ATOM))
    client = make_client(server, clock, cache)
    client.search_title(TITLE)  # the request as the client makes it, cached with the right answer
    (key, url) = cache._conn.execute("SELECT cache_key, url FROM api_responses").fetchone()
    cache.put_api_response(key, url, 200, _empty_page_claiming(2).encode(), clock.now())
    assert client.search_title(TITLE).arxiv_id == "2401.00001"
    assert server.hits("/api/query") == 2


def test_an_id_batch_of_unknown_ids_answered_empty_is_missing_not_an_outage(server, clock):
    """For ``id_list`` arXiv may count the ids asked in ``totalResults`` and return no entry for
    unknown ones: that is the answer ("missing"), not the glitch."""
    server.route("/api/query", Reply(200, _empty_page_claiming(2), content_type=ATOM))
    client = make_client(server, clock, rate_exceeded_backoff_s=5.0)
    records = client.fetch_by_ids(["2402.99998", "2402.99999"])
    assert list(records) == [] and records.missing_ids == ["2402.99998", "2402.99999"]
    assert server.hits("/api/query") == 1


def test_an_id_batch_answered_without_its_entries_is_asked_again_the_next_night(server, clock, cache):
    """arXiv now and then answers a batch partially; its absent ids are "missing" tonight, a re-run
    tonight is answered from the cache, and the next night asks again (was: the partial answer was
    served from the cache for 7 days)."""
    ids = sorted(CORPUS)[:3]
    server.fault("/api/query", Reply(200, feed_of([CORPUS[ids[0]]]), content_type=ATOM))  # tonight: one of three
    assert make_client(server, clock, cache).fetch_by_ids(ids).missing_ids == ids[1:]
    assert make_client(server, clock, cache).fetch_by_ids(ids).missing_ids == ids[1:]  # the re-run: cached
    assert server.hits("/api/query") == 1
    clock.sleep(24 * 3600)  # the next night
    again = make_client(server, clock, cache).fetch_by_ids(ids)
    assert [r.arxiv_id for r in again] == ids and again.missing_ids == []
    assert server.hits("/api/query") == 2
    clock.sleep(24 * 3600)  # a complete answer is kept for the cache's lifetime
    make_client(server, clock, cache).fetch_by_ids(ids)
    assert server.hits("/api/query") == 2


def test_a_search_with_no_hits_is_an_answer():
    feed = parse_feed((FIXTURES / "empty.xml").read_bytes())
    assert feed.entries == 0 and not feed.unexpectedly_empty({"search_query": "ti:x", "start": 0})  # totalResults 0
    assert not parse_feed(BATCH.encode()).unexpectedly_empty({"search_query": "ti:x", "start": 0})

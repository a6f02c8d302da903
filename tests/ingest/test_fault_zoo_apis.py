"""The wrong-answer zoo: one wrong, broken or missing API answer per row, and the trace each leaves.

A small world — a listing of DynaTrain carrying ``arXiv:2604.02156v2`` on Daning Cheng's profile,
the HONPAS paper (no arXiv copy) on Yunquan Zhang's — is enriched through the real clients and
``pipelines.ingest.api_lookups`` against fake arXiv and OpenAlex APIs on 127.0.0.1 (``tests/fake_apis.py``).
With every answer right, everything lands and nothing is rejected. Each zoo row swaps **one**
answer for a wrong one and asserts the exact trace: one row in ``enrichment.arxiv_rejects`` /
``openalex_rejects`` (lookup, what was asked, reason code, the detail naming what came back), the
report's counts, nothing of the wrong answer anywhere in the enrichment output, and everything the
fault did not touch still landed. A new class of wrong answer is one more row.

The last test runs the issue's case through the whole nightly job: a DOI lookup answered with
another work and an ORCID lookup answered with another person must leave ``core.authorships``,
``core.authors`` and ``marts.citations`` as they would be without those answers.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable

import dagster as dg
import duckdb
import polars as pl
import pytest

from pipelines.ingest import api_lookups as E
from pipelines.ingest.sources import answers as A
from pipelines.ingest.sources.arxiv import ArxivClient
from pipelines.ingest.sources.http import HttpSettings, ManualClock, PoliteHttp
from pipelines.ingest.sources.openalex import OpenAlexClient

try:
    from tests.fake_apis import FIXTURES, HONPAS, FakeArxiv, fake_openalex
    from tests.httpserver import LocalHttpServer, Reply
except ImportError:
    from fake_apis import FIXTURES, HONPAS, FakeArxiv, fake_openalex
    from httpserver import LocalHttpServer, Reply

DAY = date(2026, 11, 21)
MAILTO = "zoo-tests@example.org"
DYNATRAIN = "2604.02156"
DYNATRAIN_DOI = f"10.48550/arxiv.{DYNATRAIN}"
DANING_ORCID, YUNQUAN_ORCID = "0000-0003-3821-9043", "0000-0002-7351-1405"
WORK_PATH = f"/works/doi:{DYNATRAIN_DOI}"
TEST_RISK_DOI = "10.48550/arxiv.2604.08817"     # on the HTML capture; arXiv does not know it here
AUTHOR_PATH = f"/authors/orcid:{DANING_ORCID}"
HONPAS_FULL = "/works/W4400000003"
OTHER_WORK, OTHER_PERSON = "/works/W4999999999", "/authors/A5999999993"
JSON = "application/json"
ATOM = "application/atom+xml; charset=utf-8"
LIMIT = 100_000   # the clients' body limit here (production: 20-64 MB)

# What the right answers give (the items a fault may cost) ...
BASELINE = {"arxiv:2604.02156", "work:W4415000001", "work:W4400000003", "author:A5100000005", "author:A5100000006"}
# ... and what no wrong answer may ever leave in the output: the other work, its first author's
# ORCID and 382 citations, the other person, the same-titled arXiv paper by other people.
WRONG = ("W4999999999", "0000-0001-2345-6789", "Marta Wrongfield", "A5999999993", "2510.99001", "Other Person")
OTHER_CITATIONS = 382


# ============================================================================ the answers

def text(path: str) -> str:
    return (FIXTURES / path).read_text()


def work_json(**changes) -> str:
    data = json.loads(text(f"openalex/work_{DYNATRAIN}.json"))
    data.update(changes)
    return json.dumps(data)


def author_json(**changes) -> str:
    data = json.loads(text(f"openalex/author_{DANING_ORCID}.json"))
    data.update(changes)
    return json.dumps(data)


def feed(*entries: str) -> str:
    return text("arxiv/feed.xml").format(query="fixture", total=len(entries), entries="\n".join(entries))


def dynatrain_entry(old: str = "", new: str = "") -> str:
    """The recorded DynaTrain entry, with ``old`` replaced by ``new`` everywhere."""
    entry = text(f"arxiv/{DYNATRAIN}.xml")
    return entry.replace(old, new) if old else entry


def honpas_entry(authors: list[str], published: str) -> str:
    names = "".join(f"<author><name>{n}</name></author>" for n in authors)
    return (f"<entry><id>http://arxiv.org/abs/2009.00042v1</id><updated>{published}</updated>"
            f"<published>{published}</published><title>{HONPAS}</title><summary>s</summary>{names}"
            '<arxiv:primary_category term="physics.comp-ph" scheme="http://arxiv.org/schemas/atom"/></entry>')


OTHER_AUTHORSHIPS = json.loads(text("wrong/work_other_paper.json"))["authorships"]
HTML_PAGE = "<!doctype html><html><head><title>Scheduled maintenance</title></head><body>Back soon.</body></html>"


def ok(body: str, content_type: str = JSON) -> Reply:
    return Reply(200, body, content_type=content_type)


# ============================================================================ the zoo

@dataclass(frozen=True)
class Case:
    name: str
    serve: Callable[[FakeArxiv, LocalHttpServer], None]
    api: str                                    # whose rejects table holds the trace
    lookup: str
    asked: str
    reason: str
    detail: str                                 # a fragment the one-line detail must contain
    lost: frozenset = field(default_factory=frozenset)   # BASELINE items the fault may cost
    more: tuple = ()                            # further rejects the fault causes, (lookup, asked, reason)


def openalex(path: str, reply: Reply, *, extra: dict[str, Reply] | None = None) -> Callable:
    def serve(_arxiv: FakeArxiv, server: LocalHttpServer) -> None:
        server.fault(path, reply)
        for route, answer in (extra or {}).items():
            server.route(route, answer)
    return serve


def arxiv(kind: str, reply: Reply) -> Callable:
    def serve(fake: FakeArxiv, _server: LocalHttpServer) -> None:
        fake.faults[kind] = reply
    return serve


DOI = dict(api="openalex", lookup="arxiv_doi", asked=DYNATRAIN_DOI,
           lost=frozenset({"work:W4415000001", "author:A5100000005"}))   # Daning's ORCID is on that work only
ORCID = dict(api="openalex", lookup="orcid", asked=DANING_ORCID, lost=frozenset({"author:A5100000005"}))
TITLE = dict(api="openalex", lookup="title", asked=HONPAS, lost=frozenset({"work:W4400000003"}))
ARXIV_ID = dict(api="arxiv", lookup="id", asked=DYNATRAIN, lost=frozenset({"arxiv:2604.02156"}))
ARXIV_TITLE = dict(api="arxiv", lookup="title", asked=HONPAS, lost=frozenset())
REDIRECT = {"Location": OTHER_WORK}

ZOO = [
    # ---- OpenAlex, a work by its arXiv DOI
    Case("doi answered with another work", openalex(WORK_PATH, ok(text("wrong/work_other_paper.json"))),
         reason=A.ID_MISMATCH, detail="the answer is OpenAlex W4999999999 (doi 10.1000/fixture.other.2019", **DOI),
    Case("doi redirected to another work", openalex(WORK_PATH, Reply(301, headers=REDIRECT),
                                                    extra={OTHER_WORK: ok(text("wrong/work_other_paper.json"))}),
         reason=A.ID_MISMATCH, detail="W4999999999", **DOI),
    Case("its doi, another title", openalex(WORK_PATH, ok(work_json(title="Residual Scattering Networks for Coastal Sediment Transport"))),
         reason=A.TITLE_MISMATCH, detail="'Residual Scattering Networks", **DOI),
    Case("its doi, a year after it was listed", openalex(WORK_PATH, ok(work_json(publication_year=2031))),
         reason=A.YEAR_MISMATCH, detail="is from 2031, the listings say 2026", **DOI),
    Case("its doi, other authors", openalex(WORK_PATH, ok(work_json(authorships=OTHER_AUTHORSHIPS))),
         reason=A.AUTHORS_MISMATCH, detail="(Marta Wrongfield, Piet Elsewhere)", **DOI),
    Case("a citation count beyond 32 bits", openalex(WORK_PATH, ok(work_json(cited_by_count=10**30))),
         reason=A.IMPLAUSIBLE_VALUE, detail=f"cited_by_count {10**30}", **DOI),
    Case("200 with an error object", openalex(WORK_PATH, ok('{"error": "Internal Server Error", "message": "upstream timed out"}')),
         reason=A.ERROR_ANSWER, detail="HTTP 200 with an error: Internal Server Error - upstream timed out", **DOI),
    Case("JSON cut short", openalex(WORK_PATH, ok(work_json()[:700])),
         reason=A.INVALID_BODY, detail="not valid JSON", **DOI),
    Case("an HTML page", openalex(WORK_PATH, ok(HTML_PAGE, "text/html; charset=utf-8")),
         reason=A.WRONG_CONTENT_TYPE, detail="answered text/html, not JSON: '<!doctype html>", **DOI),
    Case("the record served as text/plain", openalex(WORK_PATH, ok(work_json(), "text/plain")),
         reason=A.WRONG_CONTENT_TYPE, detail="answered text/plain", **DOI),
    Case("an empty result list", openalex(WORK_PATH, ok(text("openalex/works_empty.json"))),
         reason=A.EMPTY_ANSWER, detail="a result list of 0 where a record was expected", **DOI),
    Case("a list where a record belongs", openalex(WORK_PATH, ok(f"[{work_json()}]")),
         reason=A.UNEXPECTED_SHAPE, detail="a JSON list where a record was expected", **DOI),
    Case("a huge body", openalex(WORK_PATH, Reply(200, "{", stream_bytes=3 * LIMIT, content_type=JSON)),
         reason=A.OVERSIZE, detail=f"larger than {LIMIT} bytes", **DOI),
    Case("not found", openalex(WORK_PATH, Reply(404, '{"error": "not found"}', content_type=JSON)),
         reason=A.NOT_FOUND, detail="HTTP 404", **DOI),
    Case("a server error", openalex(WORK_PATH, Reply(503, "busy", content_type="text/plain")),
         reason=A.UNAVAILABLE, detail="OpenAlexUnavailable", **DOI),
    Case("a refusal", openalex(WORK_PATH, Reply(403, '{"error": "Forbidden"}', content_type=JSON)),
         reason=A.REFUSED, detail="HTTP 403 Forbidden", **DOI),
    # ---- OpenAlex, a person by ORCID
    Case("orcid answered with another person", openalex(AUTHOR_PATH, ok(text("wrong/author_other_person.json"))),
         reason=A.ID_MISMATCH, detail="asked ORCID 0000-0003-3821-9043, the answer is OpenAlex A5999999993 (Marta Wrongfield)",
         **ORCID),
    Case("orcid redirected to a merged record", openalex(AUTHOR_PATH, Reply(301, headers={"Location": OTHER_PERSON}),
                                                         extra={OTHER_PERSON: ok(text("wrong/author_other_person.json"))}),
         reason=A.ID_MISMATCH, detail="with ORCID 0000-0001-2345-6789", **ORCID),
    Case("its orcid, another person's name", openalex(AUTHOR_PATH, ok(author_json(display_name="Marta Wrongfield",
                                                                                   display_name_alternatives=[]))),
         reason=A.NAME_MISMATCH, detail="is named Marta Wrongfield; the ORCID was found as D. Cheng, Daning Cheng", **ORCID),
    Case("a negative h-index", openalex(AUTHOR_PATH, ok(author_json(summary_stats={"h_index": -4}))),
         reason=A.IMPLAUSIBLE_VALUE, detail="h_index -4", **ORCID),
    # ---- OpenAlex, a title search and the full record of its hit
    Case("title hit by other people", openalex("/works", ok(json.dumps({"meta": {"count": 1}, "results": [
        {**json.loads(text("openalex/work_W4400000003.json")), "authorships": OTHER_AUTHORSHIPS}]}))),
         reason=A.AUTHORS_MISMATCH, detail="is a name the listings show (Yunquan Zhang)", **TITLE),
    Case("title search answered with an error object", openalex("/works", ok('{"error": "Invalid query parameters"}')),
         reason=A.ERROR_ANSWER, detail="Invalid query parameters", **TITLE),
    Case("title search answered with a record", openalex("/works", ok(text("openalex/work_W4400000003.json"))),
         reason=A.UNEXPECTED_SHAPE, detail="where a result list was expected", **TITLE),
    Case("full record redirected to a merged work", openalex(HONPAS_FULL, Reply(301, headers=REDIRECT),
                                                             extra={OTHER_WORK: ok(text("wrong/work_other_paper.json"))}),
         api="openalex", lookup="openalex_id", asked="W4400000003", reason=A.ID_MISMATCH,
         detail="asked OpenAlex W4400000003, the answer is OpenAlex W4999999999",
         # without its full list, the hit's cut author list names nobody the listings show: not taken either
         more=(("title", HONPAS, A.AUTHORS_MISMATCH),), lost=frozenset({"work:W4400000003"})),
    # ---- arXiv, by id
    Case("id answered with another paper", arxiv("id", ok(feed(text("arxiv/2510.99001.xml")), ATOM)),
         reason=A.ID_MISMATCH, detail="asked arXiv 2604.02156, the answer holds 2510.99001v1 instead", **ARXIV_ID),
    Case("an older version than listed", arxiv("id", ok(feed(dynatrain_entry("2604.02156v2", "2604.02156v1")), ATOM)),
         reason=A.VERSION_MISMATCH, detail="the answer is v1; the listings already show v2", **ARXIV_ID),
    Case("its id, another title", arxiv("id", ok(feed(dynatrain_entry("DynaTrain", "Residual Scattering Networks for Coastal Sediment")), ATOM)),
         reason=A.TITLE_MISMATCH, detail="'Residual Scattering Networks", **ARXIV_ID),
    Case("a version no paper has", arxiv("id", ok(feed(dynatrain_entry("2604.02156v2", "2604.02156v99999")), ATOM)),
         reason=A.IMPLAUSIBLE_VALUE, detail="version 99999", **ARXIV_ID),
    Case("an error entry", arxiv("id", ok(text("../arxiv/error.xml"), ATOM)),
         reason=A.ERROR_ANSWER, detail="incorrect id format", **ARXIV_ID),
    Case("the feed cut short", arxiv("id", ok(feed(dynatrain_entry())[:900], ATOM)),
         reason=A.INVALID_BODY, detail="not valid XML", **ARXIV_ID),
    Case("an HTML page instead of the feed", arxiv("id", ok(HTML_PAGE, "text/html")),
         reason=A.WRONG_CONTENT_TYPE, detail="answered text/html, not an Atom feed", **ARXIV_ID),
    Case("XML that is not an Atom feed", arxiv("id", ok('<?xml version="1.0"?><rss><channel/></rss>', ATOM)),
         reason=A.UNEXPECTED_SHAPE, detail="root element 'rss'", **ARXIV_ID),
    Case("an empty feed", arxiv("id", ok(feed(), ATOM)),
         reason=A.NOT_FOUND, detail="arXiv returned no entry for 2604.02156", **ARXIV_ID),
    Case("a huge feed", arxiv("id", Reply(200, "<", stream_bytes=3 * LIMIT, content_type=ATOM)),
         reason=A.OVERSIZE, detail=f"larger than {LIMIT} bytes", **ARXIV_ID),
    # ---- arXiv, an exact-title search
    Case("same title by other people", arxiv("title", ok(feed(honpas_entry(["Other Person"], "2020-09-01T00:00:00Z")), ATOM)),
         reason=A.AUTHORS_MISMATCH, detail="none of arXiv 2009.00042v1's authors (Other Person)", **ARXIV_TITLE),
    Case("same title and author, another decade", arxiv("title", ok(feed(honpas_entry(["Yunquan Zhang"], "2009-03-01T00:00:00Z")), ATOM)),
         reason=A.YEAR_MISMATCH, detail="is from 2009, the listings say 2020", **ARXIV_TITLE),
    Case("title search unavailable", arxiv("title", Reply(503, "busy", content_type="text/plain")),
         api="arxiv", lookup="title", asked=HONPAS, reason=A.UNAVAILABLE, detail="ArxivUnavailable",
         lost=frozenset({"work:W4400000003"})),    # an 'error' search is retried on arXiv before OpenAlex is asked
]


# ============================================================================ the night

LISTINGS = pl.DataFrame(
    [
        {"partition_date": DAY, "source": "bzpeer", "source_profile_id": "daning-cheng", "year": 2026,
         "title": "DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training", "arxiv_id": f"arXiv:{DYNATRAIN}v2",
         "byline_authors": []},
        {"partition_date": DAY, "source": "bzpeer", "source_profile_id": "yunquan-zhang", "year": 2020, "title": HONPAS,
         "arxiv_id": None, "byline_authors": []},
    ],
    schema={"partition_date": pl.Date, "source": pl.String, "source_profile_id": pl.String, "year": pl.Int32,
            "title": pl.String, "arxiv_id": pl.String, "byline_authors": pl.List(pl.String)},
)
PROFILES = pl.DataFrame(
    [{"partition_date": DAY, "source": "bzpeer", "source_profile_id": "daning-cheng", "name": "Daning Cheng"},
     {"partition_date": DAY, "source": "bzpeer", "source_profile_id": "yunquan-zhang", "name": "Yunquan Zhang"}],
    schema={"partition_date": pl.Date, "source": pl.String, "source_profile_id": pl.String, "name": pl.String},
)
NO_SEARCHES = pl.DataFrame(schema={"partition_date": pl.Date, **E.TITLE_SEARCH_SCHEMA})


@dataclass
class Night:
    arxiv: E.ArxivEnrichment
    openalex: E.OpenAlexEnrichment

    def rejects(self, api: str) -> list[tuple]:
        frame = (self.arxiv if api == "arxiv" else self.openalex).rejects
        return frame.select("lookup", "asked", "reason").rows()

    def detail(self, api: str) -> str:
        return " ".join((self.arxiv if api == "arxiv" else self.openalex).rejects["detail"].to_list())

    def landed(self) -> set[str]:
        return ({f"arxiv:{i}" for i in self.arxiv.works["arxiv_id"]} | {f"work:{w}" for w in self.openalex.works["openalex_id"]}
                | {f"author:{a}" for a in self.openalex.authors["openalex_id"]})

    def output(self) -> str:
        """Everything the night would store, but the rejects: no trace of a wrong answer may be in it."""
        frames = [self.arxiv.works, self.arxiv.title_searches.drop("detail"), self.openalex.works,
                  self.openalex.authors, self.openalex.author_lists]
        return " ".join(str(f.rows()) for f in frames)


def enrich(serve: Callable[[FakeArxiv, LocalHttpServer], None] | None = None) -> Night:
    fake = FakeArxiv()
    with LocalHttpServer() as arxiv_srv, LocalHttpServer() as openalex_srv:
        arxiv_srv.route("/api/query", fake)
        fake_openalex(openalex_srv)
        if serve:
            serve(fake, openalex_srv)
        http = PoliteHttp(HttpSettings(contact=MAILTO, default_rate_limit_s=0.0, max_retries=0, backoff_base_s=0.0,
                                       jitter_fraction=0.0, read_timeout_s=5.0, trust_env=False),
                          clock=ManualClock(datetime(2026, 11, 21, 3, tzinfo=timezone.utc)))
        arxiv_client = ArxivClient(http, None, min_interval_s=0.0, base_url=arxiv_srv.url("/api/query"), max_body_bytes=LIMIT)
        openalex_client = OpenAlexClient(http, None, MAILTO, 1000, base_url=openalex_srv.base_url, min_interval_s=0.0,
                                         max_body_bytes=LIMIT)
        limits = E.EnrichmentLimits(max_author_lookups=2)   # the two profile owners
        a = E.enrich_arxiv(arxiv_client, listings=LISTINGS, profiles=PROFILES, searches=NO_SEARCHES, day=DAY, limits=limits)
        o = E.enrich_openalex(openalex_client, listings=LISTINGS, profiles=PROFILES,
                              searches=E.with_partition(a.title_searches, DAY), arxiv_works=E.with_partition(a.works, DAY),
                              day=DAY, limits=limits)
    return Night(a, o)


def test_right_answers_are_all_taken_and_nothing_is_rejected():
    night = enrich()
    assert night.rejects("arxiv") == [] and night.rejects("openalex") == []
    assert night.landed() == BASELINE
    assert not any(marker in night.output() for marker in WRONG)
    assert OTHER_CITATIONS not in night.openalex.works["cited_by_count"].to_list()
    lists = night.openalex.author_lists
    assert lists.filter(pl.col("arxiv_id") == DYNATRAIN)["evidence"].unique().to_list() == ["arxiv"]
    assert lists.filter(pl.col("name") == "Daning Cheng")["orcid"].to_list() == [DANING_ORCID]


@pytest.mark.parametrize("case", ZOO, ids=[c.name for c in ZOO])
def test_a_wrong_answer_is_rejected_with_its_reason_and_lands_nowhere(case: Case):
    night = enrich(case.serve)
    other = "openalex" if case.api == "arxiv" else "arxiv"
    expected = sorted([(case.lookup, case.asked, case.reason), *case.more])
    assert night.rejects(case.api) == expected
    assert night.rejects(other) == []
    assert case.detail in night.detail(case.api)
    report = (night.arxiv if case.api == "arxiv" else night.openalex).report
    reasons = [reason for *_, reason in expected]
    assert report["rejected"] == len(expected)
    assert report["rejected_by_reason"] == {r: reasons.count(r) for r in sorted(set(reasons))}
    leaked = [marker for marker in WRONG if marker in night.output()]
    assert not leaked, f"a wrong answer landed: {leaked}"
    assert OTHER_CITATIONS not in night.openalex.works["cited_by_count"].to_list()
    assert night.landed() == BASELINE - case.lost          # the fault cost its own item, nothing else
    if case.api == "arxiv" and case.lookup == "title":
        (search,) = night.arxiv.title_searches.rows(named=True)
        assert search["outcome"] == (E.ERROR if case.reason == A.UNAVAILABLE else E.REJECTED)


# ============================================================================ through the assets

def test_the_issues_wrong_answers_never_reach_core_or_the_marts(tmp_path, monkeypatch):
    """The samples, with Daning Cheng's page as HTML carrying arXiv ids, through the nightly job with enrichment on.
    arXiv does not know ``2604.08817`` (the test-risk paper), so OpenAlex's author list would be the
    paper's; OpenAlex answers its DOI lookup with another work (another first author with an ORCID,
    382 citations), and the ORCID lookup of Yunquan Zhang with another person."""
    from tests.conftest import SAMPLES
    from pipelines.definitions import defs
    from pipelines.resources import CapturesFolderResource, EnrichmentResource, WarehouseResource

    captures = tmp_path / "captures"
    shutil.copytree(SAMPLES, captures)
    # Daning Cheng's page as HTML (with arXiv ids) in place of its text: the two are the same page (the same
    # URL since the samples' sidecars carry it), and a night keeps one row per listing of a page
    for name in ("000_c5cc6f46b58abda9.txt", "000_c5cc6f46b58abda9.txt.meta.json"):
        (captures / name).unlink()
    shutil.copy(Path(__file__).parents[1] / "fixtures" / "html" / "bzpeer_000_daning_cheng.html", captures)
    monkeypatch.setenv("SCHOLARHOUSE_OVERRIDES", str(tmp_path / "no-overrides.toml"))
    wh = tmp_path / "wh.duckdb"
    with LocalHttpServer() as arxiv_srv, LocalHttpServer() as openalex_srv:
        arxiv_srv.route("/api/query", FakeArxiv())
        fake_openalex(openalex_srv)
        openalex_srv.route(f"/works/doi:{TEST_RISK_DOI}", ok(text("wrong/work_other_paper.json")))
        openalex_srv.route(f"/authors/orcid:{YUNQUAN_ORCID}", ok(text("wrong/author_other_person.json")))
        enrichment = EnrichmentResource(
            enabled=True, mailto=MAILTO, config_path=str(tmp_path / "no-profiles.toml"),
            arxiv_base_url=arxiv_srv.url("/api/query"), openalex_base_url=openalex_srv.base_url,
            cache_path=str(tmp_path / "cache.sqlite"), min_interval_s=0.0, max_retries=0, backoff_base_s=0.0,
        )
        result = defs.resolve_job_def("nightly_refresh").execute_in_process(
            partition_key=DAY.isoformat(), instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
            resources={"page_source": CapturesFolderResource(path=str(captures)),
                       "warehouse_db": WarehouseResource(path=str(wh)), "enrichment": enrichment},
        )
    assert result.success

    def q(sql: str) -> list[tuple]:
        with duckdb.connect(str(wh), read_only=True) as con:
            return con.execute(sql).fetchall()

    # Nothing of the other work or the other person in core or the marts ...
    assert q("SELECT count(*) FROM core.authorships WHERE name_as_listed IN ('Marta Wrongfield', 'Piet Elsewhere')") == [(0,)]
    assert q("SELECT count(*) FROM core.authors WHERE orcid = '0000-0001-2345-6789' "
             "OR display_name IN ('Marta Wrongfield', 'Piet Elsewhere')") == [(0,)]
    assert q("SELECT count(*) FROM marts.citations WHERE level = 'paper' AND citations = 382") == [(0,)]
    assert q("SELECT count(*) FROM enrichment.openalex_works WHERE openalex_id = 'W4999999999'") == [(0,)]
    assert q("SELECT count(*) FROM enrichment.openalex_authors WHERE openalex_id = 'A5999999993'") == [(0,)]
    # ... the test-risk paper keeps the authors its listings show, DynaTrain its arXiv author list,
    # and the papers OpenAlex answered right their citations.
    assert q("SELECT DISTINCT s.evidence FROM core.authorships s JOIN core.papers p USING (paper_id) "
             "WHERE p.arxiv_id = '2604.08817' ORDER BY 1") == [("byline",), ("profile",)]
    dyna = q(f"SELECT a.display_name, s.evidence FROM core.authorships s JOIN core.papers p USING (paper_id) "
             f"JOIN core.authors a USING (author_id) WHERE p.arxiv_id = '{DYNATRAIN}' ORDER BY s.author_position")
    assert [name for name, _ in dyna][:2] == ["Yuanqing Wang", "Yuchen Zhang"] and ("Daning Cheng", "profile") in dyna
    assert q("SELECT count(*) FROM marts.citations WHERE level = 'paper'")[0][0] > 0
    # The two rejections are stored with their reasons ...
    assert q("SELECT lookup, asked, reason, answered_id FROM enrichment.openalex_rejects "
             "WHERE reason <> 'not_found' ORDER BY lookup") == [
        ("arxiv_doi", TEST_RISK_DOI, A.ID_MISMATCH, "W4999999999"),
        ("orcid", YUNQUAN_ORCID, A.ID_MISMATCH, "A5999999993"),
    ]
    # ... and counted by the WARN check on the table, which never stops the night.
    (evaluation,) = [e.event_specific_data for e in result.all_events
                     if e.event_type_value == "ASSET_CHECK_EVALUATION"
                     and e.event_specific_data.asset_check_key.asset_key == dg.AssetKey(["enrichment", "openalex_rejects"])
                     and e.event_specific_data.asset_check_key.name == "warnings"]
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.metadata["unexpected_rows"].value == 2

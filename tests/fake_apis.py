"""Fake arXiv and OpenAlex APIs on 127.0.0.1 for the enrichment tests (never the network).

They answer from the recorded responses in ``tests/fixtures/enrichment/`` (invented test data, see
its README) the way the real APIs do: ``FakeArxiv`` serves ``/api/query`` (``id_list`` and
``ti:"phrase"``), ``fake_openalex`` routes works by arXiv DOI or id, authors by ORCID and the
``/works`` title search. Used by ``tests/ingest/test_api_lookups.py`` and the wrong-answer zoo
(``test_fault_zoo_apis.py``), which swaps single answers for wrong ones.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs

from pipelines.textnorm import match_key

try:
    from tests.httpserver import LocalHttpServer, Reply
except ImportError:
    from httpserver import LocalHttpServer, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "enrichment"
HONPAS = "The static parallel distribution algorithms for hybrid density-functional calculations in HONPAS package"


class FakeArxiv:
    """``/api/query``: ``id_list`` and ``ti:"phrase"`` answered from the recorded entries."""

    def __init__(self) -> None:
        self.feed = (FIXTURES / "arxiv" / "feed.xml").read_text()
        self.entries: dict[str, tuple[str, str]] = {}
        for path in sorted((FIXTURES / "arxiv").glob("*.xml")):
            if path.name == "feed.xml":
                continue
            xml = path.read_text()
            title = re.search(r"<title>(.*?)</title>", xml, re.S).group(1)
            self.entries[path.stem] = (match_key(title), xml)
        self.fail_after: int | None = None   # answer 503 once this many requests were served
        self.served = 0
        self.faults: dict[str, Reply] = {}   # 'id' | 'title': served once, instead of the next such answer

    def __call__(self, req) -> Reply:
        if self.fail_after is not None and self.served >= self.fail_after:
            return Reply(503, "Service Unavailable", content_type="text/plain")
        self.served += 1
        params = parse_qs(req.query)
        fault = self.faults.pop("id" if params.get("id_list") else "title", None)
        if fault is not None:
            return fault
        if params.get("id_list"):
            chosen = [self.entries[i][1] for i in params["id_list"][0].split(",") if i in self.entries]
        else:
            phrase = re.fullmatch(r'ti:"(.*)"', params["search_query"][0]).group(1)
            chosen = [xml for key, xml in self.entries.values() if f" {phrase} " in f" {key} "]
        body = self.feed.format(query=req.query.replace("&", "&amp;"), total=len(chosen), entries="\n".join(chosen))
        return Reply(200, body, content_type="application/atom+xml; charset=utf-8")


def fake_openalex(server: LocalHttpServer) -> LocalHttpServer:
    folder = FIXTURES / "openalex"
    js = "application/json"
    for path in folder.glob("work_*.json"):
        ident = path.stem.removeprefix("work_")
        route = f"/works/{ident}" if ident.startswith("W") else f"/works/doi:10.48550/arxiv.{ident}"
        server.route(route, Reply(200, path.read_text(), content_type=js))
    for path in folder.glob("author_*.json"):
        server.route(f"/authors/orcid:{path.stem.removeprefix('author_')}", Reply(200, path.read_text(), content_type=js))
    honpas = (folder / "title_search_honpas.json").read_text()
    nothing = (folder / "works_empty.json").read_text()

    def works(req) -> Reply:
        flt = parse_qs(req.query).get("filter", [""])[0]
        found = flt == f"title.search:{match_key(HONPAS)}"
        return Reply(200, honpas if found else nothing, content_type=js)

    server.route("/works", works)
    return server

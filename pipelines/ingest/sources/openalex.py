"""OpenAlex API client: citation counts over time, authorships with ORCIDs, author metrics.

Lookups (each returns ``None`` for "not found" — a 404 is an answer, not an error):

- ``work_by_doi(doi)`` — ``/works/doi:<doi>``; ``work_by_arxiv_id(id)`` uses arXiv's DOI
  ``10.48550/arXiv.<id>``, which is how OpenAlex knows preprints.
- ``search_work_by_title(title, year)`` — ``/works?filter=title.search:<words>``, then a hit only if
  ``textnorm.match_key`` of the titles is equal and the years agree (± ``year_tolerance``: a
  preprint and its journal version often straddle a new year).
- ``author_by_orcid(orcid)`` — ``/authors/orcid:<id>``.
- ``iter_works(filter=..., search=...)`` / ``iter_authors`` / ``iter_list`` — cursor paging
  (``cursor=*``, then ``meta.next_cursor`` until it is null), ``per-page`` ≤ 200.

Politeness and budget: every request carries ``mailto`` (the polite pool); requests go through the
shared ``PoliteHttp`` (paced per host, back-off on 429/5xx). A daily request budget is counted per
UTC day in the cache (so it holds across processes and re-runs); when it is spent the client raises
``OpenAlexBudgetExhausted`` *before* sending anything — callers stop cleanly and report what was
done. An HTTP 429 that survives the retries means OpenAlex's own daily limit: same exception.

Responses are cached by request URL (without ``mailto``/``api_key``) for ``cache_ttl_s``
(default 20 h: a nightly run refreshes citation counts, a re-run the same night does not refetch);
404s are cached too. Cached answers cost no budget.

Answers that cannot be used raise ``OpenAlexBadAnswer`` (an ``OpenAlexError``) with a reason code
from ``sources/answers.py`` and are never cached: a body over ``max_body_bytes`` (``oversize``),
a 200 that is not JSON (an HTML page: ``wrong_content_type``), JSON that does not parse
(``invalid_body``), an error object served with 200 (``error_answer``), or the wrong shape for
the endpoint (``unexpected_shape``; ``empty_answer`` for an empty object or result list where a
record was asked for). Whether a readable record is *the one asked for* is checked by the caller
(``answers.check_openalex_work`` / ``check_openalex_author``): ``work_by_arxiv_id`` no longer
stamps the asked arXiv id on a work that does not carry it.

Parsing (``openalex_records.py``, the records and their frames; the names are importable from here
too): ids are shortened (``W2741809807``, ``A5023888391``), DOIs and ORCIDs made bare
(``10.7717/peerj.4375``, ``0000-0002-9344-7439``), abstracts rebuilt from
``abstract_inverted_index``. List responses cut authorships at 100 (``is_authors_truncated``).
No Dagster imports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Iterator, Mapping
from urllib.parse import quote, urlencode, urlsplit

from pipelines.ingest.sources import answers
from pipelines.ingest.sources.arxiv import parse_arxiv_id
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.http import OVERSIZE, PoliteHttp, validate_contact
from pipelines.ingest.sources.openalex_records import (  # noqa: F401 - re-exported: the client's import path
    AUTHORS_SCHEMA,
    WORKS_SCHEMA,
    Authorship,
    OpenAlexAuthor,
    OpenAlexWork,
    normalize_doi,
    normalize_orcid,
    openalex_authors_frame,
    openalex_works_frame,
    parse_author,
    parse_work,
    rebuild_abstract,
    short_id,
)
from pipelines.textnorm import match_key

DEFAULT_BASE_URL = "https://api.openalex.org"
MAX_PER_PAGE = 200
class OpenAlexError(RuntimeError):
    """OpenAlex refused the request (400/403...): a bug in the query, not a transient problem."""


class OpenAlexBadAnswer(OpenAlexError, answers.BadAnswer):
    """An answer that cannot be used (``reason``: an ``answers`` code); see the module docstring."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class OpenAlexUnavailable(RuntimeError):
    """No answer (timeouts, 5xx after retries)."""


class OpenAlexBudgetExhausted(RuntimeError):
    """Today's request budget is spent (ours, or OpenAlex's own limit: HTTP 429)."""

    def __init__(self, message: str, used: int, budget: int) -> None:
        super().__init__(message)
        self.used, self.budget = used, budget


# ------------------------------------------------------------------------------------ client

@dataclass
class _Answer:
    status: int
    data: Any
    fetched_at: datetime


class OpenAlexClient:
    """Polite, budgeted OpenAlex client; see the module docstring."""

    API = "openalex"

    def __init__(
        self,
        http: PoliteHttp,
        cache: SourceCache | None,
        mailto: str | None,
        daily_budget: int = 50_000,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        min_interval_s: float = 0.15,
        cache_ttl_s: float | None = 20 * 3600.0,
        max_body_bytes: int = 64_000_000,
    ) -> None:
        self.http = http
        self.cache = cache
        self.mailto = validate_contact(mailto)
        self.daily_budget = int(daily_budget)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.cache_ttl_s = cache_ttl_s
        self.max_body_bytes = max_body_bytes
        self.requests_made = 0
        self.cache_hits = 0
        self._memory_budget: dict[date, int] = {}
        http.set_api_interval(urlsplit(self.base_url).netloc.lower(), min_interval_s)

    # -- budget
    def _today(self) -> date:
        return self.http.clock.now().date()

    def budget_used(self) -> int:
        if self.cache is not None:
            return self.cache.budget_used(self.API, self._today())
        return self._memory_budget.get(self._today(), 0)

    def budget_remaining(self) -> int:
        return max(0, self.daily_budget - self.budget_used())

    def _spend(self, n: int) -> None:
        if n <= 0:
            return
        if self.cache is not None:
            self.cache.consume_budget(self.API, self._today(), n)
        else:
            day = self._today()
            self._memory_budget[day] = self._memory_budget.get(day, 0) + n

    # -- transport
    def _get(self, path: str, params: Mapping[str, Any] | None = None, *, expect: str = "record") -> _Answer:
        """GET ``path`` (already quoted) with ``params``; 200 and 404 come back, anything else raises.

        ``expect``: ``'record'`` (one entity, with an ``id``) or ``'list'`` (``results``): a 200 of
        another shape raises ``OpenAlexBadAnswer`` and is not cached.
        """
        public = sorted((k, str(v)) for k, v in (params or {}).items() if v is not None)
        key = f"{self.API}:{path}" + (f"?{urlencode(public)}" if public else "")
        if self.cache is not None:
            cached = self.cache.get_api_response(key, max_age_s=self.cache_ttl_s, now=self.http.clock.now())
            if cached is not None:
                self.cache_hits += 1
                data = _answer_data(cached.body, None, expect, key) if cached.status == 200 else None
                return _Answer(cached.status, data, cached.fetched_at)
        used = self.budget_used()
        if used >= self.daily_budget:
            raise OpenAlexBudgetExhausted(
                f"OpenAlex daily budget spent ({used}/{self.daily_budget} requests today); stopping", used, self.daily_budget
            )
        query = public + [("mailto", self.mailto)] + ([("api_key", self.api_key)] if self.api_key else [])
        url = f"{self.base_url}{path}?{urlencode(query)}"
        res = self.http.fetch(url, check_robots=False, max_bytes=self.max_body_bytes, headers={"Accept": "application/json"})
        self.requests_made += max(1, res.attempts)
        self._spend(max(1, res.attempts))
        fetched_at = self.http.clock.now()
        shown = url.replace(self.api_key, "***") if self.api_key else url
        if res.status == 404:
            if self.cache is not None:
                self.cache.put_api_response(key, shown, 404, b"", fetched_at)
            return _Answer(404, None, fetched_at)
        if res.status == 429:
            used = self.budget_used()
            raise OpenAlexBudgetExhausted(
                f"OpenAlex answered HTTP 429 after retries ({res.error_detail}); stopping for today", used, self.daily_budget
            )
        if res.status is not None and 400 <= res.status < 500:
            raise OpenAlexError(f"OpenAlex refused {shown}: HTTP {res.status} {_error_message(res.body)}")
        if res.error == OVERSIZE:
            raise OpenAlexBadAnswer(answers.OVERSIZE, f"OpenAlex answer larger than {self.max_body_bytes} bytes, "
                                                      f"abandoned ({shown})")
        if not res.ok or res.status != 200:
            raise OpenAlexUnavailable(f"OpenAlex request failed: {res.error_detail or res.error or res.status} ({shown})")
        data = _answer_data(res.body, res.header("content-type"), expect, shown)
        if self.cache is not None:
            self.cache.put_api_response(key, shown, 200, res.body, fetched_at)
        return _Answer(200, data, fetched_at)

    # -- single records
    def _record(self, path: str, parse, **kwargs):
        """The record at ``path`` parsed by ``parse`` (``parse_work`` / ``parse_author``), or None
        when OpenAlex answers 404."""
        answer = self._get(path)
        if answer.status == 404:
            return None
        return parse(answer.data, fetched_at=answer.fetched_at, **kwargs)

    def work_by_doi(self, doi: str, *, matched_by: str = "doi") -> OpenAlexWork | None:
        bare = normalize_doi(doi)
        if bare is None:
            raise ValueError(f"not a DOI: {doi!r}")
        return self._record(f"/works/doi:{quote(bare, safe='/')}", parse_work, matched_by=matched_by)

    def work_by_arxiv_id(self, arxiv_id: str) -> OpenAlexWork | None:
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            raise ValueError(f"not an arXiv id: {arxiv_id!r}")
        # The work as OpenAlex gives it: whether it is the asked paper (its DOI, or an arXiv
        # location) is the caller's check, so nothing here stamps the asked id on it.
        return self.work_by_doi(f"10.48550/arXiv.{parsed[0]}", matched_by="arxiv_doi")

    def work_by_id(self, openalex_id: str) -> OpenAlexWork | None:
        return self._record(f"/works/{quote(short_id(openalex_id) or '', safe='')}", parse_work, matched_by="openalex_id")

    def author_by_orcid(self, orcid: str) -> OpenAlexAuthor | None:
        bare = normalize_orcid(orcid)
        if bare is None:
            raise ValueError(f"not an ORCID: {orcid!r}")
        return self._record(f"/authors/orcid:{bare}", parse_author)

    def author_by_id(self, openalex_id: str) -> OpenAlexAuthor | None:
        return self._record(f"/authors/{quote(short_id(openalex_id) or '', safe='')}", parse_author)

    def search_work_by_title(self, title: str, year: int | None = None, *, year_tolerance: int = 1,
                             per_page: int = 25) -> OpenAlexWork | None:
        """The work with this exact title (by ``match_key``) and a compatible year, else None.

        Several confirmed hits: the one whose year is closest, then the most cited, then the lowest id.
        """
        key = match_key(title)
        if not key:
            return None
        # match_key leaves only [0-9a-z ] — nothing that could break the filter syntax (',', '|', ':').
        answer = self._get("/works", {"filter": f"title.search:{key}", "per-page": min(per_page, MAX_PER_PAGE)},
                           expect="list")
        if answer.status == 404:
            return None
        hits = []
        for item in answer.data.get("results") or []:
            work = parse_work(item, fetched_at=answer.fetched_at, matched_by="title")
            if match_key(work.title) != key:
                continue
            if year is not None and work.publication_year is not None and abs(work.publication_year - year) > year_tolerance:
                continue
            hits.append(work)
        if not hits:
            return None

        def rank(w: OpenAlexWork):
            distance = abs(w.publication_year - year) if (year is not None and w.publication_year is not None) else 99
            return (distance, -(w.cited_by_count or 0), w.openalex_id)

        return min(hits, key=rank)

    # -- lists
    def iter_list(self, entity: str, params: Mapping[str, Any] | None = None, *, per_page: int = MAX_PER_PAGE,
                  max_pages: int | None = None) -> Iterator[tuple[dict, datetime]]:
        """Every result of a list endpoint, by cursor paging: ``(result, fetched_at)`` pairs."""
        if not 1 <= per_page <= MAX_PER_PAGE:
            raise ValueError(f"per_page must be 1..{MAX_PER_PAGE}")
        cursor: str | None = "*"
        pages = yielded = 0
        seen: set[str] = set()
        while cursor:
            seen.add(cursor)
            answer = self._get(f"/{entity}", {**(params or {}), "per-page": per_page, "cursor": cursor}, expect="list")
            pages += 1
            if answer.status == 404:
                return
            results = answer.data.get("results") or []
            for item in results:
                yield item, answer.fetched_at
            yielded += len(results)
            meta = answer.data.get("meta") or {}
            cursor = meta.get("next_cursor")
            if max_pages is not None and pages >= max_pages:
                return
            count = meta.get("count")
            if not results:
                # An empty page ends the list; one that ends it short of the count it announced is
                # not the end of the list but a gap, and is said so rather than taken for the end.
                if isinstance(count, int) and not isinstance(count, bool) and yielded < count:
                    raise OpenAlexBadAnswer(answers.EMPTY_ANSWER, f"OpenAlex /{entity}: an empty page after "
                                                                  f"{yielded} of {count} results (page {pages})")
                return
            if cursor in seen:  # the same cursor again: the paging would never end
                raise OpenAlexBadAnswer(answers.UNEXPECTED_SHAPE, f"OpenAlex /{entity}: page {pages} returned a "
                                                                  f"cursor already used ({str(cursor)[:40]!r})")

    def iter_works(self, *, filter: str | None = None, search: str | None = None, per_page: int = MAX_PER_PAGE,
                   max_pages: int | None = None) -> Iterator[OpenAlexWork]:
        params = {"filter": filter, "search": search}
        for item, fetched_at in self.iter_list("works", params, per_page=per_page, max_pages=max_pages):
            yield parse_work(item, fetched_at=fetched_at, matched_by="list")

    def iter_authors(self, *, filter: str | None = None, search: str | None = None, per_page: int = MAX_PER_PAGE,
                     max_pages: int | None = None) -> Iterator[OpenAlexAuthor]:
        params = {"filter": filter, "search": search}
        for item, fetched_at in self.iter_list("authors", params, per_page=per_page, max_pages=max_pages):
            yield parse_author(item, fetched_at=fetched_at)


def _snippet(body: bytes, n: int = 80) -> str:
    return repr(" ".join(body[:n * 2].decode("utf-8", errors="replace").split())[:n])


def _answer_data(body: bytes, content_type: str | None, expect: str, shown: str) -> Any:
    """The parsed JSON of a 200, or ``OpenAlexBadAnswer`` (see ``OpenAlexClient._get``)."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype and "json" not in ctype:
        raise OpenAlexBadAnswer(answers.WRONG_CONTENT_TYPE,
                                f"OpenAlex answered {ctype}, not JSON: {_snippet(body)} ({shown})")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise OpenAlexBadAnswer(answers.INVALID_BODY, f"OpenAlex answer is not valid JSON ({exc}): "
                                                      f"{len(body)} bytes, ends {body[-40:]!r} ({shown})") from exc
    if isinstance(data, dict) and data.get("error") and not data.get("id") and "results" not in data:
        raise OpenAlexBadAnswer(answers.ERROR_ANSWER, f"OpenAlex answered HTTP 200 with an error: "
                                                      f"{_error_message(body)[:200]} ({shown})")
    if expect == "list":
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise OpenAlexBadAnswer(answers.UNEXPECTED_SHAPE, f"OpenAlex answered {_shape(data)} where a result "
                                                              f"list was expected ({shown})")
        if any(not isinstance(item, dict) for item in data["results"]):
            raise OpenAlexBadAnswer(answers.UNEXPECTED_SHAPE, f"OpenAlex result list holds non-records ({shown})")
        return data
    if isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"].strip():
        return data
    if not data or (isinstance(data, dict) and data.get("results") == []):
        raise OpenAlexBadAnswer(answers.EMPTY_ANSWER, f"OpenAlex answered {_shape(data)} where a record was expected ({shown})")
    raise OpenAlexBadAnswer(answers.UNEXPECTED_SHAPE, f"OpenAlex answered {_shape(data)} where a record was expected ({shown})")


def _shape(data: Any) -> str:
    if isinstance(data, dict):
        if isinstance(data.get("results"), list):
            return f"a result list of {len(data['results'])}"
        keys = ", ".join(sorted(map(str, data))[:5])
        return f"an object without an id (keys: {keys or 'none'})"
    return f"a JSON {type(data).__name__}"


def _error_message(body: bytes) -> str:
    try:
        data = json.loads(body)
        if isinstance(data, dict):
            return " - ".join(str(data[k]) for k in ("error", "message") if data.get(k))
    except ValueError:
        pass
    return body[:200].decode("utf-8", errors="replace")

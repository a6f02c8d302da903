"""arXiv API client (Atom feed): full author lists, versions, categories, DOIs for arXiv ids.

Two lookups:

- ``fetch_by_ids(ids)``: ``id_list`` queries, ``batch_size`` ids per request (100 by default, with
  ``max_results`` set to the batch size — without it arXiv returns only 10). Ids are normalised
  (``arXiv:``, URLs, the ``10.48550/arXiv.`` DOI form, version suffixes) and de-duplicated;
  malformed ones are reported without being sent. The latest version is asked for.
- ``search_title(title)``: an exact-phrase title search ``ti:"..."``, and a hit only if the
  returned title has the same ``textnorm.match_key`` — arXiv's search is fuzzy, ours is not.

The feed's traps, handled here:

- A malformed query is answered **HTTP 200** with a single entry whose id is
  ``http://arxiv.org/api/errors#...`` (``totalResults`` 1). That is an ``ArxivError``, never a record;
  a batch with an error is split in halves until the bad id is isolated, so one bad id does not
  cost 99 good ones.
- Throttling can come back as the plain-text body ``Rate exceeded.`` (any status): the host is
  left alone for ``rate_exceeded_backoff_s * 2**n`` and the request retried, then ``ArxivRateLimited``.
- A search page can come back **empty although ``totalResults`` says it holds results** (a known
  arXiv glitch): retried like ``Rate exceeded.``, then ``ArxivUnavailable``; never cached, never
  read as "not found". (An ``id_list`` batch of unknown ids may legitimately come back so.)
- Titles, abstracts, comments are hard-wrapped: whitespace is collapsed (text otherwise raw —
  LaTeX is kept; normalised copies are made downstream).
- An unknown (well-formed) id comes back as an entry without a title, or not at all: "missing".
  An entry for an id that was not asked is kept aside (``ArxivRecordList.unexpected``), never
  taken for one that was.
- Answers that cannot be read raise ``ArxivBadAnswer`` (an ``ArxivUnavailable``) with a reason
  code from ``sources/answers.py``, and are not cached: a body over ``max_body_bytes``
  (``oversize``), a page that is not XML (an HTML page: ``wrong_content_type``), XML that does not
  parse (``invalid_body``), a document that is not an Atom feed (``unexpected_shape``). Whether a
  readable record is the paper asked about is the caller's check (``answers.check_arxiv_record``).
- One request every 3 s (``min_interval_s``; the shared ``PoliteHttp`` enforces it per host).

Responses are cached (``SourceCache.api_responses``, key = request URL) for ``cache_ttl_s``, so
an interrupted enrichment resumes without spending requests; error feeds are not cached, and an id
batch answered without some of its ids is answered from the cache for 12 hours only
(``INCOMPLETE_BATCH_TTL_S``): its missing ids are asked again the next night.
API requests do not consult robots.txt (the API is the sanctioned machine interface).
No Dagster imports.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Mapping, Sequence
from urllib.parse import urlencode, urlsplit

import polars as pl

from pipelines.ingest.sources import answers
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.http import OVERSIZE, PoliteHttp
from pipelines.textnorm import match_key

DEFAULT_BASE_URL = "https://export.arxiv.org/api/query"
NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
ERROR_ID_PREFIX = "http://arxiv.org/api/errors"

_NEW_ID = re.compile(r"^(?P<id>\d{4}\.\d{4,5})(?:v(?P<v>\d+))?$")
_OLD_ID = re.compile(r"^(?P<id>[a-z][a-z-]*(?:\.[a-z]{2})?/\d{7})(?:v(?P<v>\d+))?$", re.IGNORECASE)
_ID_PREFIXES = re.compile(
    r"^(?:arxiv:\s*|https?://(?:export\.|www\.)?arxiv\.org/(?:abs|pdf)/|(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.)",
    re.IGNORECASE,
)


class ArxivApiError(RuntimeError):
    """The API answered a query with an error entry (see ``.error``)."""

    def __init__(self, error: "ArxivError") -> None:
        super().__init__(f"arXiv API error: {error.message} ({error.query_url})")
        self.error = error


class ArxivRateLimited(RuntimeError):
    """arXiv kept answering ``Rate exceeded.`` after every back-off."""


class ArxivUnavailable(RuntimeError):
    """No usable answer from arXiv (timeouts, 5xx after retries, not an Atom feed)."""


class ArxivBadAnswer(ArxivUnavailable, answers.BadAnswer):
    """An answer that cannot be read (``reason``: an ``answers`` code); see the module docstring."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ArxivAuthor:
    name: str
    affiliations: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArxivRecord:
    arxiv_id: str                      # without version: 2401.01234, cond-mat/0102536
    version: int | None
    title: str
    abstract: str
    authors: tuple[ArxivAuthor, ...]
    primary_category: str | None
    categories: tuple[str, ...]
    published: datetime | None         # first version
    updated: datetime | None           # this version
    doi: str | None
    journal_ref: str | None
    comment: str | None
    abs_url: str | None = None
    pdf_url: str | None = None
    fetched_at: datetime | None = None

    @property
    def author_names(self) -> list[str]:
        return [a.name for a in self.authors]


@dataclass(frozen=True)
class ArxivError:
    kind: str          # 'api_error' (error entry) | 'invalid_id' (not sent)
    message: str
    query_url: str | None = None
    error_id: str | None = None
    ids: tuple[str, ...] = ()


@dataclass
class ArxivFeed:
    records: list[ArxivRecord]
    total_results: int | None
    errors: list[ArxivError]
    query_url: str | None = None
    fetched_at: datetime | None = None
    entries: int | None = None  # <entry> elements in the feed (records, error entries, untitled ones)

    def unexpectedly_empty(self, params: Mapping[str, str | int]) -> bool:
        """A search page without a single entry although ``totalResults`` says results remain
        from its ``start``: arXiv's sporadic empty page (the ``arxiv`` client library retries it
        as ``UnexpectedEmptyPageError``). Not an answer: taken as one, it says "not found". Only
        for searches: an ``id_list`` batch of unknown ids may come back empty with
        ``totalResults`` counting the ids asked, and that *is* the answer ("missing")."""
        start = int(params.get("start", 0) or 0)
        if self.entries != 0 or self.total_results is None or self.total_results <= start:
            return False
        return "search_query" in params or start > 0

    def lacks_asked_ids(self, params: Mapping[str, str | int]) -> bool:
        """An ``id_list`` answer without a record for some id it asked: an unknown id, or one of
        arXiv's partial feeds — which of the two cannot be told from the answer."""
        asked = [i for i in str(params.get("id_list", "") or "").split(",") if i]
        returned = {record.arxiv_id for record in self.records}
        return any(i not in returned for i in asked)


# An id batch answered without some of its ids is cached for the rest of the night only (a re-run
# is still answered from the cache): the ids are "missing" tonight and asked again the next night,
# not for the week of the cache's lifetime — arXiv answers a batch partially now and then.
INCOMPLETE_BATCH_TTL_S = 12 * 3600.0


class ArxivRecordList(list):
    """``fetch_by_ids``'s answer: a list of records, plus what could not be had.

    ``errors``: error entries / malformed ids; ``missing_ids``: well-formed ids arXiv did not return;
    ``unexpected``: records arXiv returned for ids that were not asked (``missing_for``: which
    asked ids were missing from the batch that brought each).
    """

    def __init__(self, records: Iterable[ArxivRecord] = (), errors: Sequence[ArxivError] = (),
                 missing_ids: Sequence[str] = (), unexpected: Sequence[ArxivRecord] = (),
                 missing_for: dict[str, list[str]] | None = None) -> None:
        super().__init__(records)
        self.errors: list[ArxivError] = list(errors)
        self.missing_ids: list[str] = list(missing_ids)
        self.unexpected: list[ArxivRecord] = list(unexpected)
        self.missing_for: dict[str, list[str]] = dict(missing_for or {})


# ------------------------------------------------------------------------------------ ids

def parse_arxiv_id(text: str | None) -> tuple[str, int | None] | None:
    """``(id, version)`` from the forms people write; None if it is not an arXiv id."""
    if not text:
        return None
    value = _ID_PREFIXES.sub("", text.strip())
    value = value.split("?")[0].split("#")[0].rstrip("/")
    if value.lower().endswith(".pdf"):
        value = value[:-4]
    for pattern in (_NEW_ID, _OLD_ID):
        m = pattern.match(value)
        if m:
            arxiv_id = m.group("id")
            if pattern is _OLD_ID:
                archive, number = arxiv_id.split("/")
                if "." in archive:
                    head, sub = archive.split(".", 1)
                    archive = f"{head.lower()}.{sub.upper()}"
                else:
                    archive = archive.lower()
                arxiv_id = f"{archive}/{number}"
            return arxiv_id, (int(m.group("v")) if m.group("v") else None)
    return None


# ------------------------------------------------------------------------------------ parsing

def _unwrap(text: str | None) -> str | None:
    if text is None:
        return None
    out = " ".join(text.split())
    return out or None


def _ts(text: str | None) -> datetime | None:
    if not text or not text.strip():
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def is_rate_exceeded(body: bytes) -> bool:
    return body.lstrip()[:64].lower().startswith(b"rate exceeded")


def _text(el: ET.Element, path: str) -> str | None:
    found = el.find(path, NS)
    return found.text if found is not None and found.text is not None else None


def _parse_entry(entry: ET.Element, fetched_at: datetime | None) -> ArxivRecord | None:
    raw_id = (_text(entry, "atom:id") or "").strip()
    parsed = parse_arxiv_id(raw_id)
    title = _unwrap(_text(entry, "atom:title"))
    if parsed is None or not title:
        return None  # an id arXiv does not know comes back without a title
    arxiv_id, version = parsed
    authors = []
    for author in entry.findall("atom:author", NS):
        name = _unwrap(_text(author, "atom:name"))
        if not name:
            continue
        affs = tuple(a for a in (_unwrap(x.text) for x in author.findall("arxiv:affiliation", NS)) if a)
        authors.append(ArxivAuthor(name, affs))
    categories: list[str] = []
    for cat in entry.findall("atom:category", NS):
        term = (cat.get("term") or "").strip()
        if term and term not in categories:
            categories.append(term)
    primary_el = entry.find("arxiv:primary_category", NS)
    primary = (primary_el.get("term") or "").strip() if primary_el is not None else None
    if primary and primary not in categories:
        categories.insert(0, primary)
    doi = _unwrap(_text(entry, "arxiv:doi"))
    if doi:
        doi = doi.split()[0]  # occasionally several, space separated: the first is the article's
    abs_url = pdf_url = None
    for link in entry.findall("atom:link", NS):
        if link.get("rel") == "alternate" and not abs_url:
            abs_url = link.get("href")
        elif link.get("title") == "pdf" and not pdf_url:
            pdf_url = link.get("href")
    return ArxivRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=_unwrap(_text(entry, "atom:summary")) or "",
        authors=tuple(authors),
        primary_category=primary or (categories[0] if categories else None),
        categories=tuple(categories),
        published=_ts(_text(entry, "atom:published")),
        updated=_ts(_text(entry, "atom:updated")),
        doi=doi,
        journal_ref=_unwrap(_text(entry, "arxiv:journal_ref")),
        comment=_unwrap(_text(entry, "arxiv:comment")),
        abs_url=abs_url,
        pdf_url=pdf_url,
        fetched_at=fetched_at,
    )


def parse_feed(body: bytes, *, query_url: str | None = None, fetched_at: datetime | None = None) -> ArxivFeed:
    """Parse an arXiv Atom feed. ``ArxivRateLimited`` for ``Rate exceeded.``, ``ArxivUnavailable`` for non-Atom."""
    if is_rate_exceeded(body):
        raise ArxivRateLimited("arXiv answered 'Rate exceeded.'")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ArxivBadAnswer(answers.INVALID_BODY, f"arXiv answer is not valid XML ({exc}): {len(body)} bytes, "
                                                   f"ends {body[-40:]!r} ({query_url})") from exc
    if root.tag != f"{{{NS['atom']}}}feed":
        raise ArxivBadAnswer(answers.UNEXPECTED_SHAPE, f"arXiv answer is not an Atom feed (root element {root.tag!r}) "
                                                       f"({query_url})")
    total_text = _text(root, "opensearch:totalResults")
    try:
        total = int(total_text) if total_text is not None else None
    except ValueError:
        total = None
    records: list[ArxivRecord] = []
    errors: list[ArxivError] = []
    entries = root.findall("atom:entry", NS)
    for entry in entries:
        entry_id = (_text(entry, "atom:id") or "").strip()
        if entry_id.startswith(ERROR_ID_PREFIX) or entry_id.startswith(ERROR_ID_PREFIX.replace("http:", "https:")):
            message = _unwrap(_text(entry, "atom:summary")) or _unwrap(_text(entry, "atom:title")) or "error"
            errors.append(ArxivError("api_error", message, query_url, entry_id))
            continue
        record = _parse_entry(entry, fetched_at)
        if record is not None:
            records.append(record)
    return ArxivFeed(records, total, errors, query_url, fetched_at, len(entries))


# ------------------------------------------------------------------------------------ client

def _title_phrase(title: str) -> str:
    """The words of a title, safe inside ``ti:"..."`` (no quotes, operators or brackets)."""
    return match_key(title)


class ArxivClient:
    """Polite arXiv API client; see the module docstring."""

    API = "arxiv"

    def __init__(
        self,
        http: PoliteHttp,
        cache: SourceCache | None = None,
        *,
        min_interval_s: float = 3.0,
        batch_size: int = 100,
        base_url: str = DEFAULT_BASE_URL,
        cache_ttl_s: float | None = 7 * 24 * 3600.0,
        rate_exceeded_retries: int = 3,
        rate_exceeded_backoff_s: float = 15.0,
        max_body_bytes: int = 20_000_000,
    ) -> None:
        if not 1 <= batch_size <= 2000:
            raise ValueError("batch_size must be between 1 and 2000")
        self.http = http
        self.cache = cache
        self.base_url = base_url
        self.batch_size = batch_size
        self.cache_ttl_s = cache_ttl_s
        self.rate_exceeded_retries = rate_exceeded_retries
        self.rate_exceeded_backoff_s = rate_exceeded_backoff_s
        self.max_body_bytes = max_body_bytes
        self.requests_made = 0
        self._host = urlsplit(base_url).netloc.lower()
        http.set_api_interval(self._host, min_interval_s)

    # -- transport
    def query(self, params: dict[str, str | int]) -> ArxivFeed:
        """One API request (or its cached answer), parsed. Error entries are in ``feed.errors``."""
        url = f"{self.base_url}?{urlencode(params)}"
        key = f"{self.API}:{url}"
        if self.cache is not None:
            cached = self.cache.get_api_response(key, max_age_s=self.cache_ttl_s, now=self.http.clock.now())
            if cached is not None:
                feed = parse_feed(cached.body, query_url=url, fetched_at=cached.fetched_at)
                age_s = (self.http.clock.now() - cached.fetched_at).total_seconds()
                stale_gap = feed.lacks_asked_ids(params) and age_s > INCOMPLETE_BATCH_TTL_S
                if not feed.unexpectedly_empty(params) and not stale_gap:  # one cached before this check: asked again
                    return feed
        for attempt in range(self.rate_exceeded_retries + 1):
            res = self.http.fetch(url, check_robots=False, max_bytes=self.max_body_bytes)
            self.requests_made += res.attempts
            fetched_at = self.http.clock.now()
            if is_rate_exceeded(res.body):
                if attempt < self.rate_exceeded_retries:
                    self.http.limiter.defer(self._host, self.rate_exceeded_backoff_s * (2 ** attempt))
                continue
            if res.error == OVERSIZE:
                raise ArxivBadAnswer(answers.OVERSIZE, f"arXiv answer larger than {self.max_body_bytes} bytes, "
                                                       f"abandoned ({url})")
            if not res.ok:
                raise ArxivUnavailable(f"arXiv request failed: {res.error_detail or res.error} ({url})")
            ctype = (res.header("content-type") or "").split(";")[0].strip().lower()
            if ctype and "xml" not in ctype:
                snippet = " ".join(res.body[:160].decode("utf-8", errors="replace").split())[:80]
                raise ArxivBadAnswer(answers.WRONG_CONTENT_TYPE, f"arXiv answered {ctype}, not an Atom feed: "
                                                                 f"{snippet!r} ({url})")
            feed = parse_feed(res.body, query_url=url, fetched_at=fetched_at)
            if feed.unexpectedly_empty(params):
                if attempt < self.rate_exceeded_retries:
                    self.http.limiter.defer(self._host, self.rate_exceeded_backoff_s * (2 ** attempt))
                    continue
                raise ArxivUnavailable(f"arXiv kept answering an empty page of {feed.total_results} results "
                                       f"after {self.rate_exceeded_retries + 1} tries ({url})")
            if self.cache is not None and not feed.errors:
                self.cache.put_api_response(key, url, res.status or 200, res.body, fetched_at)
            return feed
        raise ArxivRateLimited(f"arXiv kept answering 'Rate exceeded.' after {self.rate_exceeded_retries + 1} tries ({url})")

    # -- lookups
    def fetch_by_ids(self, ids: Iterable[str]) -> ArxivRecordList:
        """Records for these ids (latest versions), in first-seen order; see ``ArxivRecordList``."""
        wanted: list[str] = []
        errors: list[ArxivError] = []
        for raw in ids:
            parsed = parse_arxiv_id(raw)
            if parsed is None:
                errors.append(ArxivError("invalid_id", f"not an arXiv id: {raw!r}", ids=(str(raw),)))
                continue
            if parsed[0] not in wanted:
                wanted.append(parsed[0])
        found: dict[str, ArxivRecord] = {}
        unexpected: list[tuple[ArxivRecord, list[str]]] = []
        # Sorted batches: the same set of ids makes the same requests, so the cache answers re-runs.
        ordered = sorted(wanted)
        for start in range(0, len(ordered), self.batch_size):
            self._fetch_batch(ordered[start:start + self.batch_size], found, errors, unexpected)
        records = [found[i] for i in wanted if i in found]
        errored = {i for e in errors for i in e.ids}
        missing = [i for i in wanted if i not in found and i not in errored]
        missing_for = {rec.arxiv_id: [i for i in batch if i in missing] for rec, batch in unexpected}
        return ArxivRecordList(records, errors, missing, [rec for rec, _ in unexpected], missing_for)

    def _fetch_batch(self, batch: list[str], found: dict[str, ArxivRecord], errors: list[ArxivError],
                     unexpected: list[tuple[ArxivRecord, list[str]]]) -> None:
        feed = self.query({"id_list": ",".join(batch), "start": 0, "max_results": len(batch)})
        if feed.errors:
            if len(batch) == 1:
                errors.extend(
                    ArxivError(e.kind, e.message, e.query_url, e.error_id, ids=tuple(batch)) for e in feed.errors
                )
                return
            middle = len(batch) // 2
            self._fetch_batch(batch[:middle], found, errors, unexpected)
            self._fetch_batch(batch[middle:], found, errors, unexpected)
            return
        for record in feed.records:
            if record.arxiv_id in batch:
                # Several entries for one id (versions): the latest is the answer.
                held = found.get(record.arxiv_id)
                if held is None or (record.version or 0) >= (held.version or 0):
                    found[record.arxiv_id] = record
            else:
                unexpected.append((record, batch))

    def search_title(self, title: str, *, max_results: int = 10) -> ArxivRecord | None:
        """The arXiv record with exactly this title (compared by ``match_key``), else None.

        Several matches (re-submissions of the same paper) resolve to the earliest published.
        Raises ``ArxivApiError`` if arXiv rejects the query.
        """
        key = match_key(title)
        if not key:
            return None
        feed = self.query({"search_query": f'ti:"{_title_phrase(title)}"', "start": 0, "max_results": max_results})
        if feed.errors:
            raise ArxivApiError(feed.errors[0])
        hits = [r for r in feed.records if match_key(r.title) == key]
        if not hits:
            return None
        far_future = datetime.max.replace(tzinfo=timezone.utc)
        return min(hits, key=lambda r: (r.published or far_future, r.arxiv_id))


# ------------------------------------------------------------------------------------ frames

ARXIV_SCHEMA = {
    "arxiv_id": pl.Utf8,
    "version": pl.Int32,
    "title": pl.Utf8,
    "abstract": pl.Utf8,
    "authors": pl.List(pl.Utf8),
    "primary_category": pl.Utf8,
    "categories": pl.List(pl.Utf8),
    "published": pl.Datetime("us", "UTC"),
    "updated": pl.Datetime("us", "UTC"),
    "doi": pl.Utf8,
    "journal_ref": pl.Utf8,
    "comment": pl.Utf8,
    "fetched_at": pl.Datetime("us", "UTC"),
}


def arxiv_records_frame(records: Iterable[ArxivRecord]) -> pl.DataFrame:
    """One row per record, typed (``ARXIV_SCHEMA``); an empty input gives an empty typed frame."""
    rows = [
        {
            "arxiv_id": r.arxiv_id,
            "version": r.version,
            "title": r.title,
            "abstract": r.abstract,
            "authors": r.author_names,
            "primary_category": r.primary_category,
            "categories": list(r.categories),
            "published": r.published,
            "updated": r.updated,
            "doi": r.doi,
            "journal_ref": r.journal_ref,
            "comment": r.comment,
            "fetched_at": r.fetched_at,
        }
        for r in records
    ]
    return pl.DataFrame(rows, schema=ARXIV_SCHEMA) if rows else pl.DataFrame(schema=ARXIV_SCHEMA)

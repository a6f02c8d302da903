"""The live page source: follow the configured profile URLs politely, one capture per URL per night.

``LiveProfileSource.iter_captures(partition_date)`` yields exactly one ``Capture`` for every
configured URL — good page or bad — so nothing fetched is lost and every failure is visible
downstream as a reject with a reason:

=====================  ===========================================================================
reject_reason          meaning
=====================  ===========================================================================
``bot_challenge``      a bot wall instead of the page (Cloudflare "Just a moment…", a captcha,
                       a 403/429/503 carrying challenge markers). Never retried: asking again only
                       annoys the site.
``error_page``         HTTP 4xx/5xx after retries, or an error page served with HTTP 200
                       ("Page not found", "Internal Server Error", …), or an empty body.
``oversize``           the body passed ``max_body_bytes`` (the prefix read so far is kept).
``redirect_loop``      a redirect cycle or more hops than ``max_redirects``.
``robots_disallowed``  robots.txt disallows the URL (or robots.txt was unreachable: the host is
                       skipped for the run, as RFC 9309 asks).
``timeout``            no (complete) answer in time, after retries. Empty or partial body.
``connection_error``   refused / reset / DNS failure, after retries. Empty body.
``truncated``          the body stayed shorter than its Content-Length, after retries.
``internal_error``     a bug in this code while handling the URL (the night still goes on).
=====================  ===========================================================================

Change detection: each request carries the stored ``If-None-Match`` / ``If-Modified-Since``.
A ``304`` yields the stored body with ``not_modified=True`` (same bytes, so the same capture_id
and nothing to re-parse); a ``200`` whose sha256 equals the stored body's is marked the same way.
Only accepted pages update the stored body and validators, so a bot wall never becomes "the
last good copy".

Resumability: every capture is logged in the cache under (partition_date, url) the moment it is
made. Re-running a partition re-yields the logged captures without touching the network
(``refetch_transient=True`` retries the ones that failed for transient reasons).

URLs are visited round-robin across hosts, so the per-host pause for one site overlaps the
requests to the other. No Dagster imports.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
import tomllib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import date
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import requests

from pipelines.ingest.sources import http as http_mod
from pipelines.ingest.sources.base import Capture
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.http import (
    DEFAULT_PROJECT_URL,
    Clock,
    HttpSettings,
    PoliteHttp,
    host_key,
)

log = logging.getLogger(__name__)

# Reject reasons (Capture.reject_reason).
BOT_CHALLENGE = "bot_challenge"
ERROR_PAGE = "error_page"
OVERSIZE = "oversize"
REDIRECT_LOOP = "redirect_loop"
ROBOTS_DISALLOWED = "robots_disallowed"
TIMEOUT = "timeout"
CONNECTION_ERROR = "connection_error"
TRUNCATED = "truncated"
INTERNAL_ERROR = "internal_error"
REJECT_REASONS = (
    BOT_CHALLENGE, ERROR_PAGE, OVERSIZE, REDIRECT_LOOP, ROBOTS_DISALLOWED, TIMEOUT, CONNECTION_ERROR, TRUNCATED,
    INTERNAL_ERROR,
)
TRANSIENT_REASONS = frozenset({TIMEOUT, CONNECTION_ERROR, TRUNCATED, INTERNAL_ERROR})

CONTACT_ENV = "SCHOLARHOUSE_CONTACT"
DEFAULT_CACHE_PATH = "warehouse/source_cache.sqlite"  # relative to the project root; the settings put it beside the warehouse
KEPT_HEADERS = ("etag", "last-modified", "content-type", "content-length", "cf-mitigated", "retry-after")


# =============================================================================== page checks

_BLOCK_STATUSES = frozenset({403, 429, 503})
_SHORT_PAGE_CHARS = 1500
_ERROR_PAGE_MAX_CHARS = 3000
_CLASSIFY_MAX_BYTES = 1_000_000

_CHALLENGE_TITLE = re.compile(
    r"^\s*(?:just a moment|attention required|one more step|please wait|checking your browser|security check"
    r"|verifying you are human|verify you are (?:a )?human|are you a (?:ro)?bot|human verification|bot verification"
    r"|access denied|ddos-guard|pardon our interruption|captcha|robot check|please verify|request blocked"
    r"|you have been blocked|sorry, you have been blocked|access to this page has been denied)",
    re.IGNORECASE,
)
# Markup that only bot walls carry (looked for in the raw body).
_CHALLENGE_MARKUP = (
    "/cdn-cgi/challenge-platform/", "cf_chl_opt", "cf-chl-", "cf-browser-verification", "challenges.cloudflare.com",
    "cf-turnstile", "g-recaptcha", "google.com/recaptcha", "recaptcha/api.js", "h-captcha", "hcaptcha.com",
    "px-captcha", "perimeterx", "_incapsula_resource", "captcha-delivery.com", "ddos-guard", "awswaf",
    "sucuri website firewall", "geetest", "arkoselabs", "funcaptcha",
)
# What bot walls say (looked for in the visible text). Strong phrases are sentences only a wall
# says; weak ones ("captcha", "unusual traffic") also occur in paper titles and abstracts, so they
# count only on a blocking status (403/429/503).
_CHALLENGE_PHRASES_STRONG = (
    "verify you are human", "verifying you are human", "confirm you are human", "prove you are human",
    "checking your browser", "checking if the site connection is secure", "enable javascript and cookies to continue",
    "complete the security check", "needs to review the security of your connection", "why have i been blocked",
    "access to this page has been denied", "please stand by, while we are checking", "please complete the captcha",
)
_CHALLENGE_PHRASES_WEAK = (
    "captcha", "are you a robot", "not a robot", "unusual traffic", "press & hold", "press and hold",
    "ddos protection", "automated queries", "bot detection", "request blocked",
)
_ERROR_PHRASE = re.compile(
    r"page not found|\bnot found\b|could not be found|cannot be found|can(?:no|['’])?t (?:be )?find|doesn['’]t exist"
    r"|does not exist|no longer (?:exists|available)|has been (?:removed|deleted)|internal server error"
    r"|\bserver error\b|bad gateway|gateway time-?out|service (?:is )?(?:temporarily )?unavailable"
    r"|something went wrong|an (?:unexpected )?error (?:has )?occurred|application error|unexpected error"
    r"|^\s*oops\b|under maintenance|temporarily unavailable|^\s*error\s*$",
    re.IGNORECASE,
)
# The first lines of a short page: the error must *lead* the line ("Page not found", "404 - Not found",
# "Oops, something went wrong"), so a profile line like "Affiliation not found" is not an error page.
_ERROR_LINE = re.compile(
    r"^\W*(?:error\s*[:#-]?\s*)?(?:(?:http\s*)?\d{3}\s*[-:|–—.]?\s*)?"
    r"(?:page not found|not found|(?:this |the )?page (?:could not be found|cannot be found|(?:does not|doesn['’]t) exist"
    r"|is no longer available|is unavailable)"
    r"|(?:author|profile|user|researcher|record) (?:not found|(?:does not|doesn['’]t) exist|unavailable|removed)"
    r"|no such (?:page|author|profile|user)|internal server error|server error|bad gateway|gateway time-?out"
    r"|service (?:is )?(?:temporarily )?unavailable|something went wrong|an (?:unexpected )?error (?:has )?occurred"
    r"|application error|unexpected error|oops|sorry\b|we can['’]?t find|we could(?:n['’]t| not) find"
    r"|under maintenance|temporarily unavailable)"
    r"(?:\W.*)?$",
    re.IGNORECASE,
)
_STATUS_LINE = re.compile(
    r"^\s*(?:error|http(?:\s+error)?|status)?\s*[:#-]?\s*(?:400|401|403|404|410|429|500|502|503|504)(?![\w.,])",
    re.IGNORECASE,
)


class _TextExtractor(HTMLParser):
    """Visible text, <title> and <h1> of an HTML page (script/style/template ignored)."""

    _SKIP = {"script", "style", "noscript", "template", "svg"}
    _BLOCK = {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article",
              "header", "footer", "main", "nav", "table", "title", "body", "html"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.h1: list[str] = []
        self._skip = 0
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip += 1
        if tag == "h1":
            self._in_h1 = True
            self.h1.append("")
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip:
            self._skip -= 1
        if tag == "h1":
            self._in_h1 = False
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if self._in_title:
            self.title.append(data)
            return
        if self._skip:
            return
        self.parts.append(data)
        if self._in_h1 and self.h1:
            self.h1[-1] += data


@dataclass(frozen=True)
class PageView:
    """What the page checks look at: visible text lines, title, first headings, raw lower-case body."""

    title: str
    headings: tuple[str, ...]
    lines: tuple[str, ...]
    raw_lower: str

    @property
    def text_len(self) -> int:
        return sum(len(line) for line in self.lines)


def _charset(content_type: str | None) -> str:
    m = re.search(r"charset=([\w.-]+)", content_type or "", re.IGNORECASE)
    return m.group(1) if m else "utf-8"


def _looks_like_html(text: str, content_type: str | None) -> bool:
    if content_type and ("html" in content_type.lower() or "xml" in content_type.lower()):
        return True
    head = text[:2000].lstrip().lower()
    return head.startswith("<") and any(t in head for t in ("<html", "<!doctype", "<head", "<body", "<title", "<div"))


def page_view(body: bytes, content_type: str | None = None) -> PageView:
    sample = body[:_CLASSIFY_MAX_BYTES]
    try:
        text = sample.decode(_charset(content_type), errors="replace")
    except LookupError:
        text = sample.decode("utf-8", errors="replace")
    if _looks_like_html(text, content_type):
        parser = _TextExtractor()
        try:
            parser.feed(text)
            parser.close()
        except Exception:  # malformed markup: fall back to what was collected
            pass
        visible = "".join(parser.parts)
        title = " ".join("".join(parser.title).split())
        headings = tuple(" ".join(h.split()) for h in parser.h1 if h.strip())[:3]
    else:
        visible, title, headings = text, "", ()
    lines = tuple(" ".join(line.split()) for line in visible.splitlines() if line.strip())
    if not title and lines:
        title = lines[0] if len(lines[0]) <= 200 else ""
    return PageView(title=title, headings=headings, lines=lines, raw_lower=text.lower())


def detect_bot_challenge(status: int | None, headers: Mapping[str, str], body: bytes) -> str | None:
    """A short description if this response is a bot wall rather than the page, else None."""
    if (headers.get("cf-mitigated") or "").lower() == "challenge":
        return "cf-mitigated: challenge"
    view = page_view(body, headers.get("content-type"))
    if view.title and _CHALLENGE_TITLE.match(view.title):
        return f"challenge page titled {view.title[:80]!r}"
    markup = next((m for m in _CHALLENGE_MARKUP if m in view.raw_lower), None)
    text_lower = "\n".join(view.lines).lower()
    strong = next((p for p in _CHALLENGE_PHRASES_STRONG if p in text_lower), None)
    weak = next((p for p in _CHALLENGE_PHRASES_WEAK if p in text_lower), None)
    if status in _BLOCK_STATUSES and (markup or strong or weak):
        return f"HTTP {status} with challenge marker {(markup or strong or weak)!r}"
    # A real profile is long; a wall is short. Markup alone is not enough on a long page (a login
    # form may embed a captcha widget).
    if view.text_len < _SHORT_PAGE_CHARS and (markup or strong):
        return f"short page with challenge marker {(markup or strong)!r}"
    return None


def detect_error_page(status: int | None, headers: Mapping[str, str], body: bytes) -> str | None:
    """A short description if this response is an error page (by status or by content), else None."""
    view: PageView | None = None
    if status is not None and status >= 400:
        view = page_view(body, headers.get("content-type"))
        label = f": {view.title[:80]!r}" if view.title else ""
        return f"HTTP {status}{label}"
    if not body.strip():
        return f"HTTP {status} with an empty body"
    view = page_view(body, headers.get("content-type"))
    for candidate in (view.title, *view.headings):
        if candidate and len(candidate) <= 200 and (_ERROR_PHRASE.search(candidate) or _STATUS_LINE.match(candidate)):
            return f"HTTP {status} but the page says {candidate[:120]!r}"
    if view.text_len < _ERROR_PAGE_MAX_CHARS:
        for line in view.lines[:4]:
            if len(line) <= 150 and (_ERROR_LINE.match(line) or _STATUS_LINE.match(line)):
                return f"HTTP {status} but the page says {line[:120]!r}"
    return None


def classify_page(status: int | None, headers: Mapping[str, str], body: bytes) -> tuple[str, str] | None:
    """``(reject_reason, detail)`` for a response that is not a usable profile page, else None."""
    challenge = detect_bot_challenge(status, headers, body)
    if challenge:
        return BOT_CHALLENGE, challenge
    error = detect_error_page(status, headers, body)
    if error:
        return ERROR_PAGE, error
    return None


# =============================================================================== configuration

class CrawlConfigError(ValueError):
    pass


# Known sites: the shape of a profile URL, and how to read the profile id out of it.
SITE_PATTERNS: dict[str, re.Pattern[str]] = {
    "bzpeer": re.compile(r"^https?://(?:www\.)?bzpeer\.com/authors/(?P<id>[^/?#\s]+)/?$", re.IGNORECASE),
    "scholarfeed": re.compile(r"^https?://(?:www\.)?scholarfeed\.org/author/(?P<id>\d+)/?$", re.IGNORECASE),
}


@dataclass(frozen=True)
class ProfileTarget:
    url: str
    source: str
    profile_id: str


def normalize_url(url: str) -> str:
    """Lower-case scheme and host, drop the fragment; the path is kept as written."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def profile_ref(url: str) -> ProfileTarget | None:
    """``ProfileTarget(url, source, profile_id)`` for a known site's profile URL, else None."""
    normalized = normalize_url(url)
    for source, pattern in SITE_PATTERNS.items():
        m = pattern.match(normalized)
        if m:
            return ProfileTarget(normalized, source, m.group("id"))
    return None


@dataclass(frozen=True)
class CrawlConfig:
    profiles: tuple[ProfileTarget, ...]
    http: HttpSettings
    cache_path: Path
    contact_env: str = CONTACT_ENV
    source_path: Path | None = None

    @property
    def urls(self) -> list[str]:
        return [p.url for p in self.profiles]

    @property
    def contact(self) -> str | None:
        return self.http.contact


_HTTP_KEYS = {
    "connect_timeout_s": float, "read_timeout_s": float, "max_fetch_s": float, "max_retries": int,
    "backoff_base_s": float, "backoff_max_s": float, "jitter_fraction": float, "max_retry_after_s": float,
    "max_body_bytes": int, "max_redirects": int, "max_crawl_delay_s": float, "respect_robots": bool,
}


def load_crawl_config(path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None,
                      default_cache_path: str | os.PathLike[str] | None = None) -> CrawlConfig:
    """Read ``config/profiles.toml`` (see config/README.md). The contact comes from the variable of
    ``env`` (the caller's environment: the resources pass theirs; none by default) named by
    ``crawler.contact_env`` (default ``SCHOLARHOUSE_CONTACT``), else ``crawler.contact``.
    A missing contact is not an error here (the config can be inspected); going live refuses.
    The cache is ``crawler.cache_path`` (relative to the project root), else ``default_cache_path``
    (the settings' ``source_cache``, beside the warehouse), else ``warehouse/source_cache.sqlite``."""
    env = {} if env is None else env
    path = Path(path)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    crawler = data.get("crawler", {})
    if not isinstance(crawler, dict):
        raise CrawlConfigError(f"{path}: [crawler] must be a table")
    contact_env = str(crawler.get("contact_env", CONTACT_ENV))
    contact = (env.get(contact_env) or crawler.get("contact") or "").strip() or None
    host_limits = crawler.get("host_rate_limits_s", {}) or {}
    if not isinstance(host_limits, dict):
        raise CrawlConfigError(f"{path}: crawler.host_rate_limits_s must be a table of host = seconds")
    kwargs = {}
    for key, kind in _HTTP_KEYS.items():
        if key in crawler:
            try:
                kwargs[key] = kind(crawler[key])
            except (TypeError, ValueError) as exc:
                raise CrawlConfigError(f"{path}: crawler.{key}: {exc}") from exc
    settings = HttpSettings(
        contact=contact,
        project_url=str(crawler.get("project_url", DEFAULT_PROJECT_URL)),
        default_rate_limit_s=float(crawler.get("rate_limit_s", 5.0)),
        host_rate_limits_s={str(h).lower(): float(v) for h, v in host_limits.items()},
        **kwargs,
    )
    if settings.default_rate_limit_s < 1.0 and not crawler.get("allow_fast", False):
        raise CrawlConfigError(f"{path}: crawler.rate_limit_s below 1 s is not polite for a live crawl")

    targets: "OrderedDict[str, ProfileTarget]" = OrderedDict()
    problems: list[str] = []
    sites = data.get("sites", {})
    if not isinstance(sites, dict):
        raise CrawlConfigError(f"{path}: [sites] must be a table of site tables")
    for site_name, site in sites.items():
        if not isinstance(site, dict):
            problems.append(f"sites.{site_name} must be a table")
            continue
        extra_pattern = site.get("url_pattern")
        for raw in site.get("profiles", []) or []:
            url = str(raw).strip()
            ref = profile_ref(url)
            if ref is None and extra_pattern:
                m = re.match(str(extra_pattern), normalize_url(url))
                if m:
                    pid = m.groupdict().get("id") or url.rstrip("/").rsplit("/", 1)[-1]
                    ref = ProfileTarget(normalize_url(url), site_name, pid)
            if ref is None:
                problems.append(f"sites.{site_name}: not a recognised profile URL: {url!r}")
                continue
            if ref.source != site_name and site_name in SITE_PATTERNS:
                problems.append(f"sites.{site_name}: {url!r} is a {ref.source} URL")
                continue
            targets.setdefault(ref.url, ref)
    if problems:
        raise CrawlConfigError(f"{path}: " + "; ".join(problems))
    if "cache_path" in crawler or default_cache_path is None:
        cache_path = Path(str(crawler.get("cache_path", DEFAULT_CACHE_PATH)))
    else:
        cache_path = Path(default_cache_path)
    if not cache_path.is_absolute():
        # Relative to the project root (the config folder's parent), not to the working directory.
        cache_path = path.resolve().parent.parent / cache_path
    return CrawlConfig(
        profiles=tuple(targets.values()), http=settings, cache_path=cache_path, contact_env=contact_env,
        source_path=path,
    )


# =============================================================================== the source

def _interleave_by_host(urls: Iterable[str]) -> list[str]:
    """Round-robin across hosts, keeping each host's order: one host's pause overlaps the others' work."""
    by_host: "OrderedDict[str, list[str]]" = OrderedDict()
    for url in urls:
        by_host.setdefault(host_key(url), []).append(url)
    out: list[str] = []
    queues = [list(v) for v in by_host.values()]
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _mime(content_type: str | None) -> str | None:
    if not content_type:
        return None
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in ("text/html", "application/xhtml+xml"):
        return "text/html"
    if mime == "text/plain":
        return "text/plain"
    return None


@dataclass
class LiveProfileSource:
    """A ``CaptureSource`` that fetches the profile pages live (see the module docstring)."""

    urls: Sequence[str]
    cache: SourceCache
    contact: str | None
    rate_limit_s: float = 5.0
    settings: HttpSettings | None = None
    host_rate_limits_s: Mapping[str, float] | None = None
    clock: Clock | None = None
    session: requests.Session | None = None
    refetch_transient: bool = False
    stats: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        base = self.settings or HttpSettings()
        overrides: dict = {"contact": self.contact or base.contact, "default_rate_limit_s": self.rate_limit_s}
        if self.host_rate_limits_s is not None:
            overrides["host_rate_limits_s"] = dict(self.host_rate_limits_s)
        self.settings = base.with_overrides(**overrides)
        http_mod.validate_contact(self.settings.contact)  # refuse before doing anything
        seen: "OrderedDict[str, None]" = OrderedDict()
        for url in self.urls:
            seen.setdefault(normalize_url(url), None)
        self.urls = list(seen)
        self._http: PoliteHttp | None = None

    @classmethod
    def from_config(cls, config: CrawlConfig, *, cache: SourceCache | None = None, **kwargs) -> "LiveProfileSource":
        return cls(
            urls=config.urls,
            cache=cache or SourceCache.shared(config.cache_path),
            contact=config.http.contact,
            rate_limit_s=config.http.default_rate_limit_s,
            settings=config.http,
            **kwargs,
        )

    # One session per crawl run: robots.txt is fetched once per host per run.
    def _new_http(self) -> PoliteHttp:
        assert self.settings is not None
        return PoliteHttp(self.settings, clock=self.clock, session=self.session)

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        self.stats = Counter()
        self._http = None
        try:
            for url in _interleave_by_host(self.urls):
                logged = self.cache.logged_capture(partition_date, url)
                if logged is not None and not (self.refetch_transient and logged.reject_reason in TRANSIENT_REASONS):
                    self.stats["resumed"] += 1
                    yield logged
                    continue
                if self._http is None:
                    self._http = self._new_http()
                try:
                    capture = self.fetch_capture(url)
                except Exception as exc:  # a bug must not cost the rest of the night
                    log.exception("crawler failed on %s", url)
                    capture = Capture(
                        url=url, captured_at=self._now(), body=b"", origin="http",
                        reject_reason=INTERNAL_ERROR, reject_detail=f"{type(exc).__name__}: {exc}"[:500],
                    )
                self.cache.log_capture(partition_date, capture)
                self.stats[capture.reject_reason or ("not_modified" if capture.not_modified else "fetched")] += 1
                yield capture
        finally:
            if self._http is not None:
                self._http.close()
                self._http = None

    def _now(self):
        return (self.clock or http_mod.SystemClock()).now()

    def fetch_capture(self, url: str) -> Capture:
        """Fetch one URL and turn the outcome into a Capture (updating the page state when accepted)."""
        http = self._http or self._new_http()
        self._http = http
        state = self.cache.get_page_state(url)
        conditional: dict[str, str] = {}
        if state is not None:
            if state.etag:
                conditional["If-None-Match"] = state.etag
            if state.last_modified:
                conditional["If-Modified-Since"] = state.last_modified
        started = time.perf_counter()
        res = http.fetch(
            url,
            headers=conditional,
            no_retry=lambda r: r.status in _BLOCK_STATUSES and detect_bot_challenge(r.status, r.headers, r.body) is not None,
        )
        captured_at = self._now()
        headers = {k: res.headers[k] for k in KEPT_HEADERS if k in res.headers}
        headers["final-url"] = res.final_url
        fetch_ms = res.elapsed_ms if res.elapsed_ms is not None else (time.perf_counter() - started) * 1000.0

        def capture(body: bytes, *, reason: str | None = None, detail: str | None = None,
                    not_modified: bool = False, content_type: str | None = None) -> Capture:
            return Capture(
                url=url, captured_at=captured_at, body=body,
                content_type=content_type if content_type is not None else _mime(res.headers.get("content-type")),
                origin="http", http_status=res.status, headers=headers, fetch_ms=fetch_ms,
                not_modified=not_modified, reject_reason=reason, reject_detail=detail,
            )

        if res.error == http_mod.ROBOTS_DISALLOWED:
            return capture(b"", reason=ROBOTS_DISALLOWED, detail=res.error_detail)
        if res.error in (http_mod.TIMEOUT, http_mod.CONNECTION_ERROR, http_mod.OVERSIZE,
                         http_mod.REDIRECT_LOOP, http_mod.TRUNCATED):
            return capture(res.body, reason=res.error, detail=res.error_detail)
        if res.status == 304:
            if state is None:
                return capture(res.body, reason=ERROR_PAGE, detail="HTTP 304 without a stored copy of the page")
            etag = res.headers.get("etag") or state.etag
            last_modified = res.headers.get("last-modified") or state.last_modified
            for name, value in (("etag", etag), ("last-modified", last_modified), ("content-type", state.content_type)):
                if value:
                    headers.setdefault(name, value)
            self.cache.put_page_state(
                url, state.body, etag=etag, last_modified=last_modified, content_type=state.content_type,
                final_url=res.final_url, http_status=state.http_status, fetched_at=captured_at,
            )
            return capture(state.body, not_modified=True, content_type=_mime(state.content_type))
        if res.status is None:
            return capture(res.body, reason=CONNECTION_ERROR, detail=res.error_detail or "no response")
        verdict = classify_page(res.status, res.headers, res.body)
        if verdict is None and not (200 <= res.status < 300):
            verdict = (ERROR_PAGE, res.error_detail or f"HTTP {res.status}")
        if verdict is not None:
            reason, detail = verdict
            # Keep what the HTTP layer knows beyond the status: "(after 3 attempts)", a Retry-After
            # we would not wait for.
            extra = (res.error_detail or "").removeprefix(f"HTTP {res.status}").strip(" :;")
            if extra:
                detail = f"{detail}; {extra}"
            return capture(res.body, reason=reason, detail=detail)
        unchanged = state is not None and hashlib.sha256(res.body).hexdigest() == state.body_sha256
        self.cache.put_page_state(
            url, res.body, etag=res.headers.get("etag"), last_modified=res.headers.get("last-modified"),
            content_type=res.headers.get("content-type"), final_url=res.final_url, http_status=res.status,
            fetched_at=captured_at,
        )
        return capture(res.body, not_modified=unchanged)

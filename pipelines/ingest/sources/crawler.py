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
                       ("Page not found", "Internal Server Error", …), or an empty body, or a
                       redirect that ended away from the profile (a login page, the home page).
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
requests to the other. The page checks (bot walls, error pages) are in ``page_checks.py``. No Dagster imports.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import time
import tomllib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import date
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
from pipelines.ingest.sources.page_checks import (  # noqa: F401 - re-exported: the crawler's import path
    BLOCK_STATUSES,
    BOT_CHALLENGE,
    ERROR_PAGE,
    PageView,
    classify_page,
    detect_bot_challenge,
    detect_error_page,
    page_view,
)
from pipelines.textnorm import HEADER_CHARSET

log = logging.getLogger(__name__)

# Reject reasons (Capture.reject_reason); the page checks' two are in page_checks.py.
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


# Settings that count (retries, bytes, redirects) may be 0; those that time or pace may be 0 too
# where the HTTP layer reads 0 as "none" — but never negative, NaN or infinite.
_POSITIVE = frozenset({"connect_timeout_s", "read_timeout_s", "max_fetch_s", "max_body_bytes"})


def _setting(path: Path, key: str, value, kind):
    """``value`` as ``kind`` (a finite number, not negative; timeouts and the body limit above 0),
    else a ``CrawlConfigError`` naming the file and the key."""
    if kind is bool:
        if not isinstance(value, bool):
            raise CrawlConfigError(f"{path}: {key} must be true or false, not {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CrawlConfigError(f"{path}: {key} must be a number, not {value!r}")
    if not math.isfinite(value) or value < 0 or (key.rsplit(".", 1)[-1] in _POSITIVE and value <= 0):
        raise CrawlConfigError(f"{path}: {key} = {value!r} is not a usable value")
    if kind is int and value != int(value):
        raise CrawlConfigError(f"{path}: {key} must be a whole number, not {value!r}")
    return kind(value)


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
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CrawlConfigError(f"{path}: not valid TOML: {exc}") from exc
    crawler = data.get("crawler", {})
    if not isinstance(crawler, dict):
        raise CrawlConfigError(f"{path}: [crawler] must be a table")
    contact_env = str(crawler.get("contact_env", CONTACT_ENV))
    contact = (env.get(contact_env) or crawler.get("contact") or "").strip() or None
    host_limits = crawler.get("host_rate_limits_s", {}) or {}
    if not isinstance(host_limits, dict):
        raise CrawlConfigError(f"{path}: crawler.host_rate_limits_s must be a table of host = seconds")
    allow_fast = crawler.get("allow_fast", False)
    if not isinstance(allow_fast, bool):  # "no" is a non-empty string, which Python takes for true
        raise CrawlConfigError(f"{path}: crawler.allow_fast must be true or false, not {allow_fast!r}")
    kwargs = {}
    for key, kind in _HTTP_KEYS.items():
        if key in crawler:
            kwargs[key] = _setting(path, f"crawler.{key}", crawler[key], kind)
    rate = _setting(path, "crawler.rate_limit_s", crawler.get("rate_limit_s", 5.0), float)
    hosts = {str(h).lower(): _setting(path, f"crawler.host_rate_limits_s.{h}", v, float) for h, v in host_limits.items()}
    # The politeness floor holds for every host, unless the config says allow_fast = true (local tests).
    for key, value in [("crawler.rate_limit_s", rate)] + [(f"crawler.host_rate_limits_s.{h}", v) for h, v in hosts.items()]:
        if value < 1.0 and not allow_fast:
            raise CrawlConfigError(f"{path}: {key} below 1 s is not polite for a live crawl")
    settings = HttpSettings(
        contact=contact,
        project_url=str(crawler.get("project_url", DEFAULT_PROJECT_URL)),
        default_rate_limit_s=rate,
        host_rate_limits_s=hosts,
        **kwargs,
    )

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


def left_the_profile(requested: str, final: str | None) -> bool:
    """Whether a redirect chain from the profile URL ``requested`` ended somewhere else: a sign-in
    page, the site's home page, a search page. Such a page can answer 200 with nothing a bot wall
    or error-page check would see; accepted, it would replace the stored copy of the profile.

    Not "left": the same page (scheme, ``www.``, a trailing slash or the query changed), a profile
    URL of the same known site (an id renamed), or a page in the same folder on the same host
    (``/authors/old`` to ``/authors/new``: a site we know only by its URLs)."""
    if not final:
        return False
    want, got = urlsplit(normalize_url(requested)), urlsplit(normalize_url(final))
    if (want.hostname or "").removeprefix("www.") != (got.hostname or "").removeprefix("www."):
        return True
    known, now = profile_ref(requested), profile_ref(final)
    if known is not None and now is not None:
        return known.source != now.source
    want_path, got_path = want.path.rstrip("/"), got.path.rstrip("/")
    if want_path == got_path:
        return False
    folder, _, page = got_path.rpartition("/")
    return not page or folder != want_path.rpartition("/")[0]


def _mime(content_type: str | None) -> str | None:
    """``text/html`` or ``text/plain`` from a Content-Type header, with its charset when it names
    one (``text/html; charset=shift_jis``): a page that declares its encoding only in the header
    must be decoded with it (staging would otherwise guess cp1252)."""
    if not content_type:
        return None
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in ("text/html", "application/xhtml+xml"):
        mime = "text/html"
    elif mime != "text/plain":
        return None
    charset = HEADER_CHARSET.search(content_type)
    return f"{mime}; charset={charset.group(1).lower()}" if charset else mime


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
            no_retry=lambda r: r.status in BLOCK_STATUSES and detect_bot_challenge(r.status, r.headers, r.body) is not None,
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

        # A page a redirect ended on away from the profile is never the profile: not "unchanged" on a
        # 304, never the "last good copy" on a 200 (the stored profile stays as it was).
        away = f"redirected away from the profile to {res.final_url}"[:500] if left_the_profile(url, res.final_url) else None

        if res.error == http_mod.ROBOTS_DISALLOWED:
            return capture(b"", reason=ROBOTS_DISALLOWED, detail=res.error_detail)
        if res.error in (http_mod.TIMEOUT, http_mod.CONNECTION_ERROR, http_mod.OVERSIZE,
                         http_mod.REDIRECT_LOOP, http_mod.TRUNCATED):
            return capture(res.body, reason=res.error, detail=res.error_detail)
        if res.status == 304:
            # A 304 says "unchanged" only as the answer to our conditional request for the profile: not
            # from a page a redirect ended on (a static sign-in page answers any If-Modified-Since with
            # 304), and not to a request that carried no validators.
            if away:
                return capture(res.body, reason=ERROR_PAGE, detail=away)
            if state is None:
                return capture(res.body, reason=ERROR_PAGE, detail="HTTP 304 without a stored copy of the page")
            if not conditional:
                return capture(res.body, reason=ERROR_PAGE, detail="HTTP 304 to a request without validators")
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
        if away:
            return capture(res.body, reason=ERROR_PAGE, detail=away)
        unchanged = state is not None and hashlib.sha256(res.body).hexdigest() == state.body_sha256
        self.cache.put_page_state(
            url, res.body, etag=res.headers.get("etag"), last_modified=res.headers.get("last-modified"),
            content_type=res.headers.get("content-type"), final_url=res.final_url, http_status=res.status,
            fetched_at=captured_at,
        )
        return capture(res.body, not_modified=unchanged)

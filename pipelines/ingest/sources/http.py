"""Polite HTTP: the one way this project talks to other people's servers.

``PoliteHttp`` wraps a single ``requests.Session`` and adds what a well-behaved nightly client owes
the sites it reads:

- **Identification.** A descriptive User-Agent with a contact address,
  ``scholarhouse/<version> (+<project url>; mailto:<contact>)``. Without a contact address the
  client refuses to start (``ContactRequiredError``): an anonymous crawler cannot be asked to stop.
- **Pacing.** A per-host minimum interval between requests (every request counts: retries,
  redirect hops, robots.txt). ``Crawl-delay`` from robots.txt raises it, never lowers it.
- **Back-off.** 429/500/502/503/504, timeouts, refused/reset connections and truncated bodies are
  retried with exponential back-off (``base * 2**(n-1)``, capped, plus optional jitter from a
  seeded RNG). ``Retry-After`` (seconds or HTTP-date) is honoured as a floor and applies to the
  whole host, also after the last attempt; if it asks for more than ``max_retry_after_s`` we stop
  asking for that URL instead of waiting through the night.
- **robots.txt** fetched once per host per run and obeyed (see ``robots.py``).
- **Bounded responses.** Bodies are streamed and abandoned past ``max_body_bytes`` (a declared
  Content-Length over the limit is refused before reading); a wall-clock cap per attempt
  (``max_fetch_s``, headers included: a watchdog shuts the socket) stops slow trickles; redirects
  are followed by hand (each hop paced and robots-checked) with a hop limit and loop detection; a
  body shorter than its Content-Length (not chunked) or in a Content-Encoding we cannot decode is
  "truncated" and retried. Accept-Encoding offers only what urllib3 can decode here.

Nothing here raises for a failed fetch: ``fetch`` always returns a ``FetchResult`` whose ``error``
says what went wrong (``timeout``, ``connection_error``, ``oversize``, ``redirect_loop``,
``truncated``, ``robots_disallowed``, ``http_error``), so callers can record every outcome.

Sleeping goes through an injectable ``Clock`` (``ManualClock`` in tests advances instantly), so
tests exercise the real pacing logic without waiting. Not thread-safe: one instance per worker.
No Dagster imports.
"""

from __future__ import annotations

import functools
import random
import re
import socket
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping, Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3
from requests.utils import requote_uri
from urllib3.response import HTTPResponse
from urllib3.util import make_headers

from pipelines.ingest.sources.robots import RobotsCache

AGENT_TOKEN = "scholarhouse"
DEFAULT_PROJECT_URL = ""  # set project_url in config/profiles.toml; omitted from the User-Agent while empty
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# FetchResult.error values.
TIMEOUT = "timeout"
CONNECTION_ERROR = "connection_error"
OVERSIZE = "oversize"
REDIRECT_LOOP = "redirect_loop"
TRUNCATED = "truncated"
ROBOTS_DISALLOWED = "robots_disallowed"
HTTP_ERROR = "http_error"
_TRANSIENT_ERRORS = frozenset({TIMEOUT, CONNECTION_ERROR, TRUNCATED})

# What urllib3 decodes here (gzip/deflate, plus br/zstd when brotli/zstandard are installed): all
# we advertise in Accept-Encoding, and a body in any other coding is not a page we can read.
_DECODABLE = frozenset(HTTPResponse.CONTENT_DECODERS) | {"identity"}
# Content codings that compress (the IANA registry's): one of these we cannot decode leaves the body
# unreadable. Any other token ("none", "utf-8", "binary": servers' misconfigurations) is ignored, as
# browsers ignore it, and the body read as it is.
_COMPRESSIONS = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd", "compress", "x-compress", "pack200-gzip",
                           "exi", "aes128gcm", "dcb", "dcz"})
_ACCEPT_ENCODING = make_headers(accept_encoding=True)["accept-encoding"]

_CONTACT_RE = re.compile(r"^[^@\s<>();,]+@[^@\s<>();,]+\.[^@\s<>();,]+$")
_CHUNK = 64 * 1024


class ContactRequiredError(ValueError):
    """Raised when asked to go live without a usable contact address."""


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("scholarhouse")
    except Exception:  # not installed, or metadata unreadable in an odd install
        return "0.0.0"


def validate_contact(contact: str | None) -> str:
    """The contact address, stripped, or ``ContactRequiredError``."""
    value = (contact or "").strip()
    if value.lower().startswith("mailto:"):
        value = value[len("mailto:"):]
    if not _CONTACT_RE.match(value):
        raise ContactRequiredError(
            "a contact e-mail address is required to fetch live pages or APIs "
            "(set SCHOLARHOUSE_CONTACT, e.g. SCHOLARHOUSE_CONTACT=data-team@example.org); "
            f"got {contact!r}"
        )
    return value


def build_user_agent(contact: str, project_url: str = DEFAULT_PROJECT_URL, version: str | None = None) -> str:
    where = f"+{project_url}; " if project_url else ""
    return f"{AGENT_TOKEN}/{version or package_version()} ({where}mailto:{validate_contact(contact)})"


# --------------------------------------------------------------------------------------- clocks

class Clock(Protocol):
    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...
    def now(self) -> datetime: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock whose ``sleep`` returns at once and moves time forward (tests, dry runs).

    ``sleeps`` records every requested sleep, so a test can assert *that* a wait was requested
    (e.g. at least the Retry-After) without really waiting.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._t = 0.0
        self._start = start or datetime(2026, 1, 1, tzinfo=timezone.utc)
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self._t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.sleeps.append(seconds)
            self._t += seconds

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self._t)


# ------------------------------------------------------------------------------------- settings

@dataclass(frozen=True)
class HttpSettings:
    contact: str | None = None
    project_url: str = DEFAULT_PROJECT_URL
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0
    max_fetch_s: float = 120.0          # wall-clock cap on one response (one attempt), headers and body
    max_retries: int = 3                # so at most 4 attempts per URL (per redirect hop)
    backoff_base_s: float = 2.0
    backoff_max_s: float = 60.0
    jitter_fraction: float = 0.25       # back-off * (1 + U[0, jitter)); 0 for none
    jitter_seed: int | None = None      # seed the RNG for reproducible runs
    max_retry_after_s: float = 120.0    # longer Retry-After: give up on the URL instead of waiting
    default_rate_limit_s: float = 5.0   # min seconds between two requests to one host
    host_rate_limits_s: Mapping[str, float] = field(default_factory=dict)
    max_body_bytes: int = 5_000_000
    max_redirects: int = 5
    respect_robots: bool = True
    max_crawl_delay_s: float = 60.0     # robots Crawl-delay above this: skip the host for the run
    robots_max_bytes: int = 512_000
    trust_env: bool = True              # use HTTP(S)_PROXY etc. from the environment

    def with_overrides(self, **changes) -> "HttpSettings":
        return replace(self, **changes)


@dataclass
class FetchResult:
    """The outcome of one logical fetch (after retries and redirects)."""

    url: str                                # what was asked for
    final_url: str                          # where the last response came from
    status: int | None                      # None when no response at all
    headers: dict[str, str]                 # lower-case names
    body: bytes                             # possibly partial when error is oversize/truncated
    attempts: int = 0                       # requests actually sent, all hops and retries
    elapsed_ms: float | None = None         # duration of the last request (send -> body read)
    redirects: tuple[str, ...] = ()
    error: str | None = None
    error_detail: str | None = None
    retry_after_s: float | None = None      # last Retry-After seen, if any

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and (200 <= self.status < 300 or self.status == 304)

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)


# ---------------------------------------------------------------------------------- rate limits

def host_key(url: str) -> str:
    return (urlsplit(url).netloc or "").lower()


class HostRateLimiter:
    """Min interval between request starts, per host; plus host-wide deferrals (Retry-After/back-off)."""

    def __init__(self, clock: Clock, default_interval_s: float, per_host_s: Mapping[str, float] | None = None):
        self.clock = clock
        self.default_interval_s = max(0.0, float(default_interval_s))
        # Per-host values from configuration: floors that nothing else may go below.
        self._configured: dict[str, float] = {h.lower(): max(0.0, float(s)) for h, s in (per_host_s or {}).items()}
        self._interval: dict[str, float] = dict(self._configured)
        self._last_start: dict[str, float] = {}
        self._not_before: dict[str, float] = {}

    @staticmethod
    def _bare(host: str) -> str:
        return host.rsplit(":", 1)[0] if ":" in host and not host.endswith("]") else host

    def interval(self, host: str) -> float:
        host = host.lower()
        if host in self._interval:
            return self._interval[host]
        return self._interval.get(self._bare(host), self.default_interval_s)

    def raise_interval(self, host: str, seconds: float) -> None:
        """Slow a host down (robots.txt Crawl-delay); never speeds it up."""
        host = host.lower()
        self._interval[host] = max(self.interval(host), float(seconds))

    def set_api_interval(self, host: str, seconds: float) -> None:
        """An API's own pace for its host (arXiv 3 s, OpenAlex ~10/s): replaces the page-crawl
        default, but a per-host value set in configuration still wins if it is slower."""
        host = host.lower()
        configured = self._configured.get(host, self._configured.get(self._bare(host)))
        seconds = max(0.0, float(seconds))
        self._interval[host] = seconds if configured is None else max(configured, seconds)

    def defer(self, host: str, seconds: float) -> None:
        host = host.lower()
        until = self.clock.monotonic() + max(0.0, seconds)
        self._not_before[host] = max(self._not_before.get(host, until), until)

    def wait(self, host: str) -> None:
        host = host.lower()
        now = self.clock.monotonic()
        ready = self._not_before.get(host, now)
        last = self._last_start.get(host)
        if last is not None:
            ready = max(ready, last + self.interval(host))
        if ready > now:
            self.clock.sleep(ready - now)
        self._last_start[host] = self.clock.monotonic()


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # isdigit() alone passes '¹²', which float() refuses
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - now).total_seconds())


# -------------------------------------------------------------------------------------- client

def _redirect_location(location: str) -> str:
    """A Location header as the server meant it: http.client decodes header bytes as latin-1, but a
    raw non-ASCII Location is nearly always UTF-8 (what requests' ``get_redirect_target`` undoes)."""
    location = location.strip()
    try:
        return location.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return location


def _is_read_timeout(exc: BaseException) -> bool:
    """Whether a wrapped requests/urllib3 error is really a read timeout.

    (urllib3's NewConnectionError subclasses its TimeoutError for history's sake: a refused
    connection is not a timeout, so only ReadTimeoutError and socket timeouts count.)
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, urllib3.exceptions.NewConnectionError):
            return False
        if isinstance(cur, (requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError, TimeoutError)):
            return True
        for arg in getattr(cur, "args", ()):
            if isinstance(arg, BaseException) and _is_read_timeout(arg):
                return True
        cur = cur.__cause__ or cur.__context__
    return False


_attempt_local = threading.local()  # the running attempt's watchdog, per thread


class _FetchWatchdog:
    """Shuts the attempt's socket down when ``max_fetch_s`` is up, status line and headers included.

    urllib3 only has per-recv timeouts, which a server sending a byte at a time never trips, and a
    blocking read of a body fills its whole buffer before returning. The reader then sees an early
    end or a broken connection, and ``fired`` says it was us.
    """

    def __init__(self, seconds: float) -> None:
        self.conn = None  # the urllib3 connection of the attempt, set by _watched_pool
        self.response = None  # its urllib3 response once the headers are in (owns the socket then)
        self.fired = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(seconds,), name="fetch-watchdog", daemon=True)

    def __enter__(self) -> "_FetchWatchdog":
        _attempt_local.watchdog = self
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        _attempt_local.watchdog = None
        self._done.set()

    def _run(self, seconds: float) -> None:
        if self._done.wait(seconds):
            return
        self.fired.set()
        while not self._done.is_set():  # still connecting, or between headers and response: no socket yet
            if self.response is not None:
                try:
                    self.response.shutdown()  # urllib3's own way to stop a read in another thread
                except (ValueError, RuntimeError):  # no socket to shut, or back in the pool: done
                    pass
                return
            sock = getattr(self.conn, "sock", None)
            while sock is not None and not isinstance(sock, socket.socket):
                sock = getattr(sock, "socket", None)  # TLS inside a TLS proxy tunnel
            if sock is not None:
                try:
                    # shutdown, not close: it wakes a recv blocked in the other thread. The plain
                    # socket's method also for TLS, whose own shutdown drops the SSL state first.
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            self._done.wait(0.05)


@functools.cache
def _watched_pool(cls: type) -> type:
    """``cls`` (a urllib3 connection pool) telling the running attempt's watchdog which connection it uses."""
    if getattr(cls, "_tells_watchdog", False):
        return cls

    class Watched(cls):
        _tells_watchdog = True

        def _get_conn(self, timeout=None):
            conn = super()._get_conn(timeout)
            dog = getattr(_attempt_local, "watchdog", None)
            if dog is not None:
                dog.conn = conn
            return conn

    Watched.__name__ = Watched.__qualname__ = f"Watched{cls.__name__}"
    return Watched


def _watch_pools(manager):
    manager.pool_classes_by_scheme = {k: _watched_pool(v) for k, v in manager.pool_classes_by_scheme.items()}
    return manager


class _WatchedAdapter(requests.adapters.HTTPAdapter):
    """requests' adapter whose pools (direct and through proxies) report connections to the watchdog."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        _watch_pools(self.poolmanager)

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        return _watch_pools(super().proxy_manager_for(proxy, **proxy_kwargs))


class PoliteHttp:
    """One polite HTTP client (one ``requests.Session``); see the module docstring."""

    def __init__(
        self,
        settings: HttpSettings,
        *,
        clock: Clock | None = None,
        session: requests.Session | None = None,
        version: str | None = None,
    ) -> None:
        self.settings = settings
        self.contact = validate_contact(settings.contact)
        self.user_agent = build_user_agent(self.contact, settings.project_url, version)
        self.clock: Clock = clock or SystemClock()
        self._owns_session = session is None
        self.session = session or requests.Session()
        self.session.trust_env = settings.trust_env
        # Our own retry loop: the adapter must not retry behind our back.
        adapter = _WatchedAdapter(max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = self.user_agent
        self.session.headers["Accept-Encoding"] = _ACCEPT_ENCODING
        self.limiter = HostRateLimiter(self.clock, settings.default_rate_limit_s, settings.host_rate_limits_s)
        self.robots = RobotsCache(self._fetch_robots, AGENT_TOKEN, max_crawl_delay_s=settings.max_crawl_delay_s)
        self._rng = random.Random(settings.jitter_seed)
        self.requests_sent = 0

    # -- lifecycle
    def close(self) -> None:
        if self._owns_session:
            self.session.close()

    def __enter__(self) -> "PoliteHttp":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- pacing
    def set_api_interval(self, url_or_host: str, seconds: float) -> None:
        """Pace requests to an API host at its documented rate (see ``HostRateLimiter.set_api_interval``)."""
        host = host_key(url_or_host) if "://" in url_or_host else url_or_host.lower()
        self.limiter.set_api_interval(host, seconds)

    def backoff_s(self, attempt: int) -> float:
        s = self.settings
        base = min(s.backoff_max_s, s.backoff_base_s * (2 ** max(0, attempt - 1)))
        if s.jitter_fraction > 0:
            base *= 1.0 + s.jitter_fraction * self._rng.random()
        return base

    # -- robots
    def _fetch_robots(self, url: str) -> tuple[int | None, bytes, str | None, str | None]:
        res = self.fetch(url, check_robots=False, max_bytes=self.settings.robots_max_bytes, keep_prefix_if_oversize=True)
        return res.status, res.body, (None if res.error == HTTP_ERROR else res.error), res.error_detail

    def robots_check(self, url: str):
        decision = self.robots.check(url)
        if decision.crawl_delay_s:
            self.limiter.raise_interval(host_key(url), decision.crawl_delay_s)
        return decision

    # -- fetching
    def fetch(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        check_robots: bool | None = None,
        max_bytes: int | None = None,
        keep_prefix_if_oversize: bool = False,
        no_retry: Callable[[FetchResult], bool] | None = None,
    ) -> FetchResult:
        """GET ``url`` politely. Never raises for network or HTTP problems (see ``FetchResult.error``).

        ``no_retry(result)`` can veto a retry of a retryable status (e.g. a 503 bot challenge: asking
        again only annoys the site). ``keep_prefix_if_oversize`` returns the first ``max_bytes``
        as a success instead of an ``oversize`` error (robots.txt).
        """
        check = self.settings.respect_robots if check_robots is None else check_robots
        limit = self.settings.max_body_bytes if max_bytes is None else max_bytes
        visited = [url]
        attempts = 0
        current = url
        for _hop in range(self.settings.max_redirects + 1):
            if check:
                decision = self.robots_check(current)
                if not decision.allowed:
                    # A host whose robots.txt cannot be reached at all is reported as what it is
                    # (timeout / connection_error); otherwise the rules said no.
                    return FetchResult(
                        url=url, final_url=current, status=None, headers={}, body=b"", attempts=attempts,
                        redirects=tuple(visited[1:]), error=decision.fetch_error or ROBOTS_DISALLOWED,
                        error_detail=decision.detail,
                    )
            res = self._fetch_with_retries(current, headers or {}, limit, keep_prefix_if_oversize, no_retry)
            attempts += res.attempts
            res.url, res.attempts, res.redirects = url, attempts, tuple(visited[1:])
            if (res.error is not None and res.error != HTTP_ERROR) or res.status not in REDIRECT_STATUSES:
                return res
            location = res.header("location")
            if not location:
                res.error, res.error_detail = HTTP_ERROR, f"HTTP {res.status} without a Location header"
                return res
            target = requote_uri(urljoin(current, _redirect_location(location)))
            parts = urlsplit(target)
            target = urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
            if parts.scheme not in ("http", "https"):
                res.error, res.error_detail = HTTP_ERROR, f"redirect to unsupported URL {target!r}"
                return res
            if target in visited:
                chain = " -> ".join(visited + [target])
                res.error, res.error_detail = REDIRECT_LOOP, f"redirect loop: {chain}"
                return res
            visited.append(target)
            current = target
        res.error = REDIRECT_LOOP
        res.error_detail = f"more than {self.settings.max_redirects} redirects: " + " -> ".join(visited)
        return res

    def _fetch_with_retries(
        self,
        url: str,
        headers: Mapping[str, str],
        max_bytes: int,
        keep_prefix: bool,
        no_retry: Callable[[FetchResult], bool] | None,
    ) -> FetchResult:
        s = self.settings
        host = host_key(url)
        last_attempt = s.max_retries + 1
        res: FetchResult | None = None
        for attempt in range(1, last_attempt + 1):
            self.limiter.wait(host)
            res = self._attempt(url, headers, max_bytes, keep_prefix)
            res.attempts = attempt
            retry_after = parse_retry_after(res.header("retry-after"), self.clock.now())
            res.retry_after_s = retry_after
            if retry_after is not None:
                # The host's word holds for its next request whether or not this URL is asked
                # again (last attempt, a bot wall not retried); no longer than we would ever wait.
                self.limiter.defer(host, min(retry_after, s.max_retry_after_s))
            retryable = res.error in _TRANSIENT_ERRORS or (res.status in RETRY_STATUSES and res.error in (None, HTTP_ERROR))
            if retryable and res.status in RETRY_STATUSES and no_retry is not None and no_retry(res):
                retryable = False
            if not retryable:
                break
            if retry_after is not None and retry_after > s.max_retry_after_s:
                # Honour the request by not coming back for this URL (the host stays deferred for
                # as long as we are willing to wait).
                res.error = res.error or HTTP_ERROR
                res.error_detail = (
                    f"HTTP {res.status}: Retry-After {retry_after:g} s exceeds the max wait "
                    f"{s.max_retry_after_s:g} s; not retried"
                )
                return res
            if attempt == last_attempt:
                break
            delay = self.backoff_s(attempt)
            if retry_after is not None:
                delay = max(delay, retry_after)
            self.limiter.defer(host, delay)
        assert res is not None
        if res.attempts > 1 and res.error is not None:
            res.error_detail = f"{res.error_detail or res.error} (after {res.attempts} attempts)"
        return res

    def _attempt(self, url: str, headers: Mapping[str, str], max_bytes: int, keep_prefix: bool) -> FetchResult:
        self.requests_sent += 1
        started = time.perf_counter()

        def done(**kw) -> FetchResult:
            kw.setdefault("elapsed_ms", (time.perf_counter() - started) * 1000.0)
            kw.setdefault("final_url", url)
            kw.setdefault("headers", {})
            kw.setdefault("body", b"")
            return FetchResult(url=url, **kw)

        with _FetchWatchdog(self.settings.max_fetch_s) as watchdog:
            return self._send_and_read(url, headers, max_bytes, keep_prefix, started, done, watchdog)

    def _send_and_read(self, url: str, headers: Mapping[str, str], max_bytes: int, keep_prefix: bool,
                       started: float, done: Callable[..., FetchResult], watchdog: _FetchWatchdog) -> FetchResult:
        resp = self._send(url, headers, done, watchdog)
        if isinstance(resp, FetchResult):
            return resp
        watchdog.response = resp.raw
        with resp:
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            status = resp.status_code
            base = dict(status=status, headers=hdrs)
            if status in (204, 304) or 100 <= status < 200:
                return done(**base)
            declared = None
            try:
                declared = int(hdrs["content-length"]) if "content-length" in hdrs else None
            except ValueError:
                declared = None
            if declared is not None and declared > max_bytes and not keep_prefix:
                return done(
                    **base, error=OVERSIZE,
                    error_detail=f"Content-Length {declared} exceeds the limit of {max_bytes} bytes; not downloaded",
                )
            return self._read_body(resp, base, done, started + self.settings.max_fetch_s, watchdog, declared=declared,
                                   max_bytes=max_bytes, keep_prefix=keep_prefix)

    def _send(self, url: str, headers: Mapping[str, str], done: Callable[..., FetchResult], watchdog: _FetchWatchdog):
        """The GET (streamed, redirects not followed): the response, or the FetchResult of a request
        that failed (an invalid URL, a timeout, a connection error)."""
        s = self.settings
        try:
            return self.session.get(
                url,
                headers=dict(headers),
                timeout=(s.connect_timeout_s, s.read_timeout_s),
                allow_redirects=False,
                stream=True,
            )
        except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema) as exc:
            # Not transient: report as a connection problem with the reason, and do not retry.
            return done(status=None, error=HTTP_ERROR, error_detail=f"invalid URL: {exc}")
        except requests.exceptions.Timeout as exc:
            kind = "connect" if isinstance(exc, requests.exceptions.ConnectTimeout) else "read"
            return done(status=None, error=TIMEOUT, error_detail=f"{kind} timeout: {type(exc).__name__}")
        except requests.exceptions.RequestException as exc:
            if watchdog.fired.is_set():
                return done(status=None, error=TIMEOUT,
                            error_detail=f"no complete status line and headers after {s.max_fetch_s:g} s")
            if _is_read_timeout(exc):
                return done(status=None, error=TIMEOUT, error_detail=f"timeout: {type(exc).__name__}")
            return done(status=None, error=CONNECTION_ERROR, error_detail=f"{type(exc).__name__}: {exc}"[:500])

    def _read_body(self, resp, base: dict, done: Callable[..., FetchResult], deadline: float,
                   watchdog: _FetchWatchdog, *, declared: int | None, max_bytes: int, keep_prefix: bool) -> FetchResult:
        """The body, read up to ``max_bytes`` and the ``deadline``: what was read is kept when it is
        cut (too large, too slow, a broken connection, shorter than its Content-Length)."""
        s = self.settings
        status = base["status"]
        hdrs = base["headers"]
        # Count raw bytes ourselves rather than let urllib3 raise IncompleteRead: its exception
        # throws away the partial body, and a truncated body is still something we fetched.
        raw = resp.raw
        if hasattr(raw, "enforce_content_length"):
            raw.enforce_content_length = False
        # RFC 9112 6.3: with Transfer-Encoding chunked a Content-Length is ignored; the zero-size
        # last chunk ends the body (a stream cut before it raises), and urllib3's tell() stays 0.
        chunked = bool(getattr(raw, "chunked", False))
        length = None if chunked else declared
        coding = hdrs.get("content-encoding", "").strip()
        undecodable = [c for c in (p.strip().lower() for p in coding.split(","))
                       if c in _COMPRESSIONS and c not in _DECODABLE]
        body = bytearray()

        def received() -> int:  # raw (still encoded) bytes
            return raw.tell() if hasattr(raw, "tell") else len(body)

        def timed_out(complete: bool) -> FetchResult | None:
            # The watchdog shut the socket (a close-delimited body then just ends), or the deadline
            # passed; a body that reached its Content-Length arrived whole all the same.
            if complete or not (watchdog.fired.is_set() or time.perf_counter() > deadline):
                return None
            return done(**base, body=bytes(body), error=TIMEOUT,
                        error_detail=f"body not complete after {s.max_fetch_s:g} s ({len(body)} bytes read)")

        try:
            for chunk in resp.iter_content(_CHUNK):
                body += chunk
                if len(body) > max_bytes:
                    if keep_prefix:
                        return done(**base, body=bytes(body[:max_bytes]))
                    return done(
                        **base, body=bytes(body[:max_bytes]), error=OVERSIZE,
                        error_detail=f"body exceeded the limit of {max_bytes} bytes; download abandoned",
                    )
                late = timed_out(length is not None and received() >= length)
                if late is not None:
                    return late
        except requests.exceptions.RequestException as exc:
            late = timed_out(False)
            if late is not None:
                return late
            if _is_read_timeout(exc):
                return done(**base, body=bytes(body), error=TIMEOUT,
                            error_detail=f"read timeout after {len(body)} bytes of the body")
            if undecodable:
                return self._undecodable(base, done, body, coding)
            if isinstance(exc, requests.exceptions.ContentDecodingError):
                # A body that does not decode as its Content-Encoding says: corrupt or cut short on
                # the way, so asked again like a truncated one, but said as it is.
                return done(**base, body=bytes(body), error=TRUNCATED,
                            error_detail=f"the body does not decode as {coding or 'its Content-Encoding'} "
                                         f"after {len(body)} decoded bytes")
            return done(**base, body=bytes(body), error=TRUNCATED,
                        error_detail=f"connection broken after {len(body)} bytes"
                        + (f" of {declared}" if declared is not None else "") + f": {type(exc).__name__}")
        late = timed_out(chunked or (length is not None and received() >= length))
        if late is not None:
            return late
        if length is not None:
            encoded = coding.lower() not in ("", "identity")
            if received() < length or (not encoded and len(body) < length):
                return done(**base, body=bytes(body), error=TRUNCATED,
                            error_detail=f"received {received()} bytes, Content-Length said {length}")
        if undecodable:
            return self._undecodable(base, done, body, coding)
        error = HTTP_ERROR if status >= 400 else None
        return done(**base, body=bytes(body), error=error, error_detail=(f"HTTP {status}" if error else None))

    @staticmethod
    def _undecodable(base: dict, done: Callable[..., FetchResult], body: bytearray, coding: str) -> FetchResult:
        # Still encoded, so not the page: 'truncated', the reason for a body that does not decode
        # as its Content-Encoding says (the stored copy is kept; asked again, as another edge or
        # the next night may send a coding we asked for).
        return done(**base, body=bytes(body), error=TRUNCATED,
                    error_detail=f"Content-Encoding {coding}, which we did not ask for and cannot decode "
                                 f"({len(body)} bytes kept as received)")

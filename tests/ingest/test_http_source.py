"""Polite HTTP + the live profile crawler, against a local server (never the network).

Back-offs and rate limits go through a ManualClock (sleeping is instant and recorded), so these
tests check *what* is waited for, retried and rejected, never how long anything took.
"""

from __future__ import annotations

import socket
import time
import zlib
from datetime import date, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
import urllib3

from pipelines.ingest.sources.base import Capture
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.crawler import (
    CrawlConfigError,
    LiveProfileSource,
    classify_page,
    load_crawl_config,
    profile_ref,
)
from pipelines.ingest.sources.http import (
    ContactRequiredError,
    HostRateLimiter,
    HttpSettings,
    ManualClock,
    PoliteHttp,
    build_user_agent,
    parse_retry_after,
)
from pipelines.ingest.sources import http as http_mod
from pipelines.ingest.sources.robots import RobotsCache, rules_from_response

try:
    from tests.httpserver import LocalHttpServer, RawServer, Reply, conditional_page
except ImportError:  # tests/ not importable as a package in this layout
    from httpserver import LocalHttpServer, RawServer, Reply, conditional_page

CONTACT = "crawler-tests@example.org"
PARTITION = date(2026, 11, 21)
SAMPLES = sorted((Path(__file__).resolve().parents[2] / "pipelines" / "samples").glob("*.txt"))
SAMPLE_BODIES = [p.read_bytes() for p in SAMPLES]

CLOUDFLARE_CHALLENGE = (
    '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    '<meta http-equiv="refresh" content="390"><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1"></script>'
    '</head><body><div class="main-wrapper"><h1 class="zone-name-title">www.bzpeer.com</h1>'
    '<p>Verifying you are human. This may take a few seconds.</p><div id="challenge-stage"></div>'
    "<noscript>Enable JavaScript and cookies to continue</noscript></div></body></html>"
)
CAPTCHA_403 = (
    "<html><head><title>Security check</title></head><body><p>Our systems have detected unusual traffic from "
    'your computer network.</p><form><div class="g-recaptcha" data-sitekey="6Lc"></div></form></body></html>'
)
SOFT_404 = (
    "<html><head><title>BZPEER</title></head><body><nav>Home · Authors · Works · Sign in</nav>"
    "<h1>Page not found</h1><p>The author you are looking for does not exist or has moved.</p></body></html>"
)
SOFT_500_TEXT = "Internal Server Error\n\nThe server encountered an unexpected condition.\n"
NEXT_404 = "<html><head><title>404: This page could not be found.</title></head><body><div><h1>404</h1></div></body></html>"


def fast_settings(**overrides) -> HttpSettings:
    values = dict(
        contact=CONTACT, connect_timeout_s=2.0, read_timeout_s=0.25, max_fetch_s=10.0, max_retries=2,
        backoff_base_s=0.5, backoff_max_s=4.0, jitter_fraction=0.0, default_rate_limit_s=0.0,
        max_retry_after_s=60.0, trust_env=False,
    )
    values.update(overrides)
    return HttpSettings(**values)


def make_source(urls, cache, clock=None, **overrides) -> LiveProfileSource:
    return LiveProfileSource(
        list(urls), cache=cache, contact=CONTACT, rate_limit_s=overrides.pop("rate_limit_s", 0.0),
        settings=fast_settings(**overrides), clock=clock or ManualClock(),
    )


def crawl(urls, cache, partition=PARTITION, clock=None, **overrides) -> dict[str, Capture]:
    source = make_source(urls, cache, clock, **overrides)
    return {c.url: c for c in source.iter_captures(partition)}


@pytest.fixture
def server():
    with LocalHttpServer() as srv:
        yield srv


@pytest.fixture
def cache(tmp_path):
    c = SourceCache(tmp_path / "cache.sqlite")
    yield c
    c.close()


def closed_port_url(path: str = "/authors/nobody") -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}{path}"


# ============================================================================ identification

def test_contact_is_required_before_anything_happens(cache):
    for bad in (None, "", "not-an-address", "someone@"):
        with pytest.raises(ContactRequiredError):
            LiveProfileSource(["http://127.0.0.1:9/authors/x"], cache=cache, contact=bad)
        with pytest.raises(ContactRequiredError):
            PoliteHttp(HttpSettings(contact=bad))


def test_user_agent_names_us_and_our_contact(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    crawl([server.url("/authors/a")], cache)
    ua = server.requests_to("/authors/a")[0].headers["user-agent"]
    assert ua.startswith("scholarhouse/")
    # no project page configured: the agent names only the contact (never an invented URL)
    assert ua.endswith(f"(mailto:{CONTACT})")
    assert build_user_agent(CONTACT, "https://example.org/p", "1.2.3") == (
        f"scholarhouse/1.2.3 (+https://example.org/p; mailto:{CONTACT})"
    )
    assert build_user_agent(CONTACT, "", "1.2.3") == f"scholarhouse/1.2.3 (mailto:{CONTACT})"


# ============================================================================ retries and back-off

def test_429_with_retry_after_seconds_is_waited_out_then_succeeds(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    server.fault("/authors/a", Reply(429, "slow down", headers={"Retry-After": "7"}))
    clock = ManualClock()
    caps = crawl([server.url("/authors/a")], cache, clock=clock)
    cap = caps[server.url("/authors/a")]
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[0] and cap.http_status == 200
    assert server.hits("/authors/a") == 2
    assert max(clock.sleeps) >= 7.0  # the Retry-After was honoured (back-off alone is 0.5 s)


def test_retry_after_http_date_is_understood():
    clock = ManualClock()
    when = format_datetime(clock.now() + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(when, clock.now()) == pytest.approx(30, abs=1)
    assert parse_retry_after("12", clock.now()) == 12
    assert parse_retry_after("soon", clock.now()) is None
    # Latin-1 superscript digits pass str.isdigit() but are no number float() reads: ignored,
    # not a ValueError out of the HTTP layer (was: raised).
    assert parse_retry_after("\u00b9\u00b2", clock.now()) is None


def test_retry_after_beyond_the_cap_gives_the_url_up_without_hammering(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    server.fault("/authors/a", Reply(429, "come back tomorrow", headers={"Retry-After": "3600"}))
    cap = crawl([server.url("/authors/a")], cache, max_retry_after_s=60.0)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 1
    assert cap.reject_reason == "error_page" and cap.http_status == 429
    assert "Retry-After" in cap.reject_detail and cap.body == b"come back tomorrow"


def test_503_then_success_with_exponential_backoff(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[1], content_type="text/plain"))
    server.fault("/authors/a", Reply(503, "busy"), Reply(503, "busy"))
    clock = ManualClock()
    cap = crawl([server.url("/authors/a")], cache, clock=clock)[server.url("/authors/a")]
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[1]
    assert server.hits("/authors/a") == 3
    assert clock.sleeps == pytest.approx([0.5, 1.0])  # base * 2**(n-1), no jitter


def test_persistent_500_is_an_error_page_after_all_attempts(server, cache):
    server.route("/authors/a", Reply(500, "<html><head><title>Oops</title></head><body>boom</body></html>"))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 3  # 1 + max_retries
    assert cap.reject_reason == "error_page" and cap.http_status == 500 and b"boom" in cap.body
    assert "3 attempts" in cap.reject_detail


def test_404_is_not_retried(server, cache):
    cap = crawl([server.url("/authors/gone")], cache)[server.url("/authors/gone")]
    assert server.hits("/authors/gone") == 1
    assert cap.reject_reason == "error_page" and cap.http_status == 404 and b"Not Found" in cap.body


def test_read_timeout_then_success(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[2], content_type="text/plain"))
    server.fault("/authors/a", Reply(200, "late", delay_s=1.0))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[2]
    assert server.hits("/authors/a") == 2


def test_read_timeout_every_time_gives_up_with_an_empty_capture(server, cache):
    server.route("/authors/a", Reply(200, "late", delay_s=1.0))
    cap = crawl([server.url("/authors/a")], cache, max_retries=1)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 2
    assert cap.reject_reason == "timeout" and cap.body == b"" and cap.http_status is None
    assert "2 attempts" in cap.reject_detail


def test_connection_dropped_is_retried_then_reported(server, cache):
    server.route("/authors/a", Reply(drop=True))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 3
    assert cap.reject_reason == "connection_error" and cap.body == b""


def test_unreachable_host_is_a_connection_error_not_a_crash(cache):
    url = closed_port_url()
    cap = crawl([url], cache)[url]
    # robots.txt could not be fetched: the host is skipped, and the reason is the real one.
    assert cap.reject_reason == "connection_error" and cap.body == b""
    assert "robots.txt unreachable" in cap.reject_detail


def test_truncated_body_is_retried_then_accepted(server, cache):
    good = SAMPLE_BODIES[3]
    server.route("/authors/a", Reply(200, good, content_type="text/plain"))
    server.fault("/authors/a", Reply(200, good[:100], content_length=len(good), content_type="text/plain"))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert cap.reject_reason is None and cap.body == good
    assert server.hits("/authors/a") == 2


def test_always_truncated_body_is_rejected_and_kept(server, cache):
    good = SAMPLE_BODIES[3]
    server.route("/authors/a", Reply(200, good[:100], content_length=len(good), content_type="text/plain"))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 3
    assert cap.reject_reason == "truncated" and cap.body == good[:100]
    # A truncated body never becomes the stored "last good copy".
    assert cache.get_page_state(server.url("/authors/a")) is None


def test_a_body_that_does_not_decode_as_its_content_encoding_says_so(server, cache):
    server.route("/authors/a", Reply(200, b"this is not gzip at all" * 40, content_type="text/html",
                                     headers={"Content-Encoding": "gzip"}))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert server.hits("/authors/a") == 3  # asked again, as a body cut short on the way is
    assert cap.reject_reason == "truncated"
    assert cap.reject_detail.startswith("the body does not decode as gzip")  # was: "connection broken"
    assert cache.get_page_state(server.url("/authors/a")) is None


# ============================================================================ bad pages

@pytest.mark.parametrize(
    "reply, detail_word",
    [
        (Reply(503, CLOUDFLARE_CHALLENGE, headers={"cf-mitigated": "challenge", "Server": "cloudflare"}), "cf-mitigated"),
        (Reply(503, CLOUDFLARE_CHALLENGE), "Just a moment"),
        (Reply(200, CLOUDFLARE_CHALLENGE), "Just a moment"),
        (Reply(403, CAPTCHA_403), "Security check"),
        (Reply(403, "<html><body><p>Please complete the captcha to continue.</p></body></html>"), "captcha"),
    ],
)
def test_bot_challenges_are_rejected_and_not_retried(server, cache, reply, detail_word):
    server.route("/authors/a", reply)
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert cap.reject_reason == "bot_challenge"
    assert detail_word in cap.reject_detail
    assert cap.body == reply.body_bytes()  # kept: nothing fetched is lost
    assert server.hits("/authors/a") == 1  # asking a bot wall again only annoys the site
    assert cache.get_page_state(server.url("/authors/a")) is None


@pytest.mark.parametrize(
    "body, content_type",
    [(SOFT_404, "text/html"), (SOFT_500_TEXT, "text/plain"), (NEXT_404, "text/html"), ("", "text/html"),
     ("<html><head><title>Something went wrong</title></head><body>Try again later.</body></html>", "text/html"),
     ("<html><head><title>BZPEER</title></head><body><div>404</div><div>This page could not be found.</div></body></html>",
      "text/html"),
     ("<html><head><title>Scholar Feed</title></head><body><p>Oops! We couldn't find that author.</p></body></html>",
      "text/html")],
)
def test_error_pages_served_with_http_200_are_rejected(server, cache, body, content_type):
    server.route("/authors/a", Reply(200, body, content_type=content_type))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert cap.reject_reason == "error_page" and cap.http_status == 200
    assert cap.body == body.encode()


def test_real_profile_pages_are_not_mistaken_for_bad_pages():
    for body in SAMPLE_BODIES:
        assert classify_page(200, {"content-type": "text/plain"}, body) is None
    # The same text wrapped in HTML, with a login form that embeds a captcha widget script.
    for body in SAMPLE_BODIES:
        text = body.decode()
        html = (
            "<!doctype html><html><head><title>Profile | Site</title>"
            '<script src="https://www.google.com/recaptcha/api.js"></script></head><body>'
            + "".join(f"<p>{line}</p>" for line in text.splitlines())
            + "</body></html>"
        )
        assert classify_page(200, {"content-type": "text/html"}, html.encode()) is None
    # A paper about CAPTCHAs, or one titled "... not found ...", is still a profile.
    page = SAMPLE_BODIES[0].decode().replace(
        "A Qualitative Test-Risk Mechanism", "Page Not Found: Captcha Solving Under Unusual Traffic and a Test-Risk Mechanism"
    )
    assert classify_page(200, {"content-type": "text/plain"}, page.encode()) is None
    # A short profile whose only paper is about bots: weak wall words on an HTTP 200 page are not a wall.
    tiny = ("Researcher profile\n\nAda Example\n\n1works\n\npreprint2025arXiv\n\nAre You a Robot? CAPTCHA Design "
            "Under Unusual Traffic\n\nWe study captcha robustness.\n")
    assert classify_page(200, {"content-type": "text/plain"}, tiny.encode()) is None
    # A short profile (no works yet) whose header line happens to say "not found".
    short = "Researcher profile\n\nAda Example\n\nAffiliation not foundOpen to collaborate\n\n0works\n"
    assert classify_page(200, {"content-type": "text/plain"}, short.encode()) is None


def test_redirect_loop_is_detected(server, cache):
    server.route("/authors/a", Reply(301, headers={"Location": "/authors/b"}))
    server.route("/authors/b", Reply(302, headers={"Location": server.url("/authors/a")}))
    cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
    assert cap.reject_reason == "redirect_loop" and "/authors/a -> " in cap.reject_detail
    assert server.hits("/authors/a") == 1 and server.hits("/authors/b") == 1


def test_too_many_redirects_is_a_redirect_loop(server, cache):
    for i in range(10):
        server.route(f"/hop/{i}", Reply(302, headers={"Location": f"/hop/{i + 1}"}))
    cap = crawl([server.url("/hop/0")], cache, max_redirects=3)[server.url("/hop/0")]
    assert cap.reject_reason == "redirect_loop" and "more than 3 redirects" in cap.reject_detail
    assert server.hits("/hop/4") == 0


def test_a_redirect_to_the_page_is_followed_and_the_final_url_kept(server, cache):
    server.route("/authors/old", Reply(301, headers={"Location": "/authors/new"}))
    server.route("/authors/new", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    cap = crawl([server.url("/authors/old")], cache)[server.url("/authors/old")]
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[0]
    assert cap.url == server.url("/authors/old") and cap.headers["final-url"] == server.url("/authors/new")


@pytest.mark.parametrize("target", ["/login?next=/authors/a", "/", "/authors/", "/authors/a/sign-in"])
def test_a_redirect_away_from_the_profile_is_rejected_and_the_stored_copy_kept(server, cache, target):
    """A profile that now redirects to a sign-in or home page answering 200 is not the profile: a
    reject with the reason, and the last good copy stays for the nights after."""
    url = server.url("/authors/a")
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    assert crawl([url], cache)[url].reject_reason is None
    stored = cache.get_page_state(url)
    server.route("/authors/a", Reply(302, headers={"Location": target}))
    server.route(target.split("?")[0], Reply(200, "<html><head><title>Sign in</title></head><body><form>"
                                                  "<input name=user><input name=password></form></body></html>"))
    cap = crawl([url], cache, partition=PARTITION + timedelta(days=1))[url]
    assert cap.reject_reason == "error_page"
    assert cap.reject_detail == f"redirected away from the profile to {server.url(target)}"
    assert b"Sign in" in cap.body  # kept: nothing fetched is lost
    assert cache.get_page_state(url).body_sha256 == stored.body_sha256


def test_a_304_from_the_page_a_redirect_ended_on_is_not_the_profile_unchanged(server, cache):
    """A static sign-in page answers the profile's If-Modified-Since with 304: that is not "the
    profile, unchanged" (was: the old body replayed as current every night, no reject)."""
    url = server.url("/authors/ada")

    def sign_in(request):
        if request.headers.get("if-modified-since"):
            return Reply(304, b"", content_type=None, content_length=None)
        return Reply(200, "<html><head><title>Sign in</title></head><body><form>e-mail</form></body></html>")

    server.route("/authors/ada", Reply(200, SAMPLE_BODIES[0], content_type="text/plain",
                                       headers={"Last-Modified": "Tue, 17 Nov 2026 08:00:00 GMT"}))
    server.route("/login", sign_in)
    assert crawl([url], cache)[url].reject_reason is None
    stored = cache.get_page_state(url)
    server.route("/authors/ada", Reply(302, headers={"Location": "/login"}))
    cap = crawl([url], cache, partition=PARTITION + timedelta(days=1))[url]
    assert (cap.reject_reason, cap.not_modified) == ("error_page", False)
    assert cap.reject_detail == f"redirected away from the profile to {server.url('/login')}"
    after = cache.get_page_state(url)
    assert (after.body_sha256, after.final_url) == (stored.body_sha256, stored.final_url)


def test_a_304_to_a_request_without_validators_is_not_unchanged(server, cache):
    url = server.url("/authors/a")
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))  # no ETag, no Last-Modified
    assert crawl([url], cache)[url].reject_reason is None
    server.route("/authors/a", Reply(304, b"", content_type=None, content_length=None))
    cap = crawl([url], cache, partition=PARTITION + timedelta(days=1))[url]
    assert (cap.reject_reason, cap.reject_detail) == ("error_page", "HTTP 304 to a request without validators")


@pytest.mark.parametrize(
    "requested, final, away",
    [
        ("https://www.bzpeer.com/authors/a", "https://bzpeer.com/authors/a/", False),    # www, trailing slash
        ("http://bzpeer.com/authors/a", "https://www.bzpeer.com/authors/a?tab=works", False),
        ("https://bzpeer.com/authors/a", "https://bzpeer.com/authors/b", False),         # an id renamed
        ("https://scholarfeed.org/author/1", "https://scholarfeed.org/author/2", False),
        ("https://bzpeer.com/authors/a", "https://scholarfeed.org/author/2", True),      # another site
        ("https://bzpeer.com/authors/a", "https://bzpeer.com/", True),
        ("https://bzpeer.com/authors/a", "https://bzpeer.com/login?next=%2Fauthors%2Fa", True),
        ("https://example.org/people/a", "https://example.org/people/b", False),         # a site known by its URLs
        ("https://example.org/people/a", "https://example.org/people/", True),
        ("https://example.org/people/a", "https://example.org/account/login", True),
        ("https://example.org/people/a", "https://sso.example.org/people/a", True),
        ("https://example.org/people/a", None, False),
    ],
)
def test_where_a_redirect_leaves_the_profile(requested, final, away):
    from pipelines.ingest.sources.crawler import left_the_profile

    assert left_the_profile(requested, final) is away


def test_50mb_body_without_length_is_abandoned_early(server, cache):
    size = 50 * 1024 * 1024
    server.route("/authors/huge", Reply(200, "<p>x</p>", stream_bytes=size, content_length=None))
    cap = crawl([server.url("/authors/huge")], cache, max_body_bytes=5_000_000)[server.url("/authors/huge")]
    server.wait_idle()
    assert cap.reject_reason == "oversize" and "5000000" in cap.reject_detail
    assert len(cap.body) == 5_000_000  # the prefix read is kept, nothing more
    assert server.hits("/authors/huge") == 1  # an oversize page is not retried
    assert server.bytes_sent("/authors/huge") < size // 2  # the client hung up long before the end


def test_declared_oversize_body_is_not_downloaded_at_all(server, cache):
    size = 50 * 1024 * 1024
    server.route("/authors/huge", Reply(200, "<p>x</p>", stream_bytes=size, content_length=size))
    cap = crawl([server.url("/authors/huge")], cache, max_body_bytes=5_000_000)[server.url("/authors/huge")]
    server.wait_idle()
    assert cap.reject_reason == "oversize" and "Content-Length" in cap.reject_detail
    assert cap.body == b"" and server.bytes_sent("/authors/huge") < size // 2


# ============================================================================ robots.txt

def test_robots_disallowed_path_is_never_requested(server, cache):
    server.route("/robots.txt", Reply(200, "User-agent: *\nDisallow: /private/\n", content_type="text/plain"))
    server.route("/private/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    server.route("/authors/b", Reply(200, SAMPLE_BODIES[1], content_type="text/plain"))
    caps = crawl([server.url("/private/authors/a"), server.url("/authors/b")], cache)
    blocked = caps[server.url("/private/authors/a")]
    assert blocked.reject_reason == "robots_disallowed" and blocked.body == b"" and blocked.http_status is None
    assert server.hits("/private/authors/a") == 0
    assert caps[server.url("/authors/b")].reject_reason is None
    assert server.hits("/robots.txt") == 1  # once per host per run


def test_robots_5xx_skips_the_host_and_404_allows_all(server, cache):
    server.route("/robots.txt", Reply(500, "down"))
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    cap = crawl([server.url("/authors/a")], cache, max_retries=0)[server.url("/authors/a")]
    assert cap.reject_reason == "robots_disallowed" and "HTTP 500" in cap.reject_detail
    assert server.hits("/authors/a") == 0
    server.routes.pop("/robots.txt")  # now a 404: no rules
    cap = crawl([server.url("/authors/a")], cache, partition=PARTITION + timedelta(days=1))[server.url("/authors/a")]
    assert cap.reject_reason is None


def test_robots_crawl_delay_raises_the_pace(server, cache):
    server.route("/robots.txt", Reply(200, "User-agent: scholarhouse\nCrawl-delay: 7\nDisallow:\n", content_type="text/plain"))
    for i in range(3):
        server.route(f"/authors/{i}", Reply(200, SAMPLE_BODIES[i], content_type="text/plain"))
    clock = ManualClock()
    crawl([server.url(f"/authors/{i}") for i in range(3)], cache, clock=clock, rate_limit_s=1.0)
    # robots + 3 pages on one host: the two waits between pages are at least the crawl-delay.
    assert sorted(clock.sleeps)[-2:] == pytest.approx([7.0, 7.0])


@pytest.mark.parametrize("line, delay, state", [("Crawl-delay: 10.5", 10.5, "rules"),
                                                ("Crawl-delay: 300.0", 300.0, "disallow_all"),
                                                ("Crawl-delay: nan", None, "rules"),
                                                ("Crawl-delay: -3.5", None, "rules"),
                                                ("Crawl-delay: inf", None, "rules")])
def test_a_decimal_crawl_delay_is_obeyed(line, delay, state):
    # urllib.robotparser keeps only integer Crawl-delays; 10.5 was silently dropped (so a long
    # decimal one did not skip the host either). Nonsense values are still ignored.
    body = f"User-agent: otherbot\nCrawl-delay: 1\n\nUser-agent: *\n{line}\nDisallow: /private/\n".encode()
    assert rules_from_response(200, body, None, "scholarhouse").crawl_delay_s == delay
    robots = RobotsCache(lambda url: (200, body, None, None), "scholarhouse", max_crawl_delay_s=60.0)
    assert robots.rules_for("https://example.org/authors/x").state == state


def test_robots_crawl_delay_of_our_own_group_wins_over_the_star_group():
    body = b"User-agent: *\nCrawl-delay: 2.5\n\nUser-agent: scholarhouse\nCrawl-delay: 7.25\nDisallow:\n"
    assert rules_from_response(200, body, None, "scholarhouse").crawl_delay_s == 7.25
    assert rules_from_response(200, body, None, "otherbot").crawl_delay_s == 2.5


def test_robots_rules_follow_rfc9309_longest_match():
    robots = (
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: scholarhouse\nDisallow: /authors/\nAllow: /authors/*/public$\nDisallow: /*.pdf$\n"
    )
    rules = rules_from_response(200, robots.encode(), None, "scholarhouse")
    assert rules.allows("https://h/works/x", "scholarhouse")
    assert not rules.allows("https://h/authors/ada", "scholarhouse")
    assert rules.allows("https://h/authors/ada/public", "scholarhouse")
    assert not rules.allows("https://h/authors/ada/public/more", "scholarhouse")
    assert not rules.allows("https://h/files/paper.pdf", "scholarhouse")
    assert not rules.allows("https://h/works/x", "otherbot")  # the * group disallows everything
    assert rules_from_response(404, b"", None, "scholarhouse").allows("https://h/x", "scholarhouse")
    assert not rules_from_response(503, b"", None, "scholarhouse").allows("https://h/x", "scholarhouse")
    assert not rules_from_response(None, b"", "timeout", "scholarhouse").allows("https://h/x", "scholarhouse")


def test_rate_limiter_spaces_requests_per_host():
    clock = ManualClock()
    limiter = HostRateLimiter(clock, 2.0, {"slow.example": 5.0})
    starts: dict[str, list[float]] = {"a.example": [], "slow.example": []}
    for _ in range(3):
        for host in starts:
            limiter.wait(host)
            starts[host].append(clock.monotonic())
    for host, interval in (("a.example", 2.0), ("slow.example", 5.0)):
        gaps = [b - a for a, b in zip(starts[host], starts[host][1:])]
        assert all(g >= interval for g in gaps)
    # An API's own pace replaces the crawl default, but not a slower configured value;
    # robots.txt can only slow a host down.
    limiter.set_api_interval("api.example", 0.15)
    limiter.set_api_interval("slow.example", 1.0)
    limiter.raise_interval("a.example", 1.0)
    limiter.raise_interval("b.example", 9.0)
    assert [limiter.interval(h) for h in ("api.example", "slow.example", "a.example", "b.example")] == [0.15, 5.0, 2.0, 9.0]


# ============================================================================ change detection, resumability

def test_etag_and_last_modified_give_not_modified_on_the_second_run(server, cache):
    lm = "Wed, 18 Nov 2026 10:00:00 GMT"
    server.route("/authors/e", conditional_page(SAMPLE_BODIES[0], etag='"v1"', content_type="text/plain"))
    server.route("/authors/l", conditional_page(SAMPLE_BODIES[1], last_modified=lm, content_type="text/plain"))
    urls = [server.url("/authors/e"), server.url("/authors/l")]
    first = crawl(urls, cache)
    assert all(c.reject_reason is None and not c.not_modified for c in first.values())
    second = crawl(urls, cache, partition=PARTITION + timedelta(days=1))
    assert server.requests_to("/authors/e")[-1].headers.get("if-none-match") == '"v1"'
    assert server.requests_to("/authors/l")[-1].headers.get("if-modified-since") == lm
    for url in urls:
        assert second[url].http_status == 304 and second[url].not_modified
        assert second[url].capture_id == first[url].capture_id  # same bytes: nothing to re-parse
        assert second[url].content_type == "text/plain"


def test_same_bytes_without_validators_count_as_unchanged_and_new_bytes_do_not(server, cache):
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    url = server.url("/authors/a")
    crawl([url], cache)
    again = crawl([url], cache, partition=PARTITION + timedelta(days=1))[url]
    assert again.http_status == 200 and again.not_modified
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0] + b"\nNew paper", content_type="text/plain"))
    changed = crawl([url], cache, partition=PARTITION + timedelta(days=2))[url]
    assert not changed.not_modified and changed.body.endswith(b"New paper")


def test_interrupted_run_resumes_without_refetching(server, cache):
    urls = []
    for i in range(4):
        server.route(f"/authors/{i}", Reply(200, SAMPLE_BODIES[i], content_type="text/plain"))
        urls.append(server.url(f"/authors/{i}"))
    source = make_source(urls, cache)
    it = source.iter_captures(PARTITION)
    done = [next(it), next(it)]
    it.close()  # the run dies here
    assert len(server.requests_to("/robots.txt")) == 1 and sum(server.hits(f"/authors/{i}") for i in range(4)) == 2
    resumed = list(make_source(urls, cache).iter_captures(PARTITION))
    assert [c.url for c in resumed] == urls
    assert all(server.hits(f"/authors/{i}") == 1 for i in range(4))  # nothing fetched twice
    assert resumed[:2] == done  # the logged captures come back identical
    # A complete re-run of the partition touches nothing.
    before = len(server.requests)
    assert list(make_source(urls, cache).iter_captures(PARTITION)) == resumed
    assert len(server.requests) == before


def test_refetch_transient_retries_only_transient_failures(server, cache):
    server.route("/authors/t", Reply(200, "late", delay_s=1.0))
    server.route("/authors/x", Reply(200, CLOUDFLARE_CHALLENGE))
    urls = [server.url("/authors/t"), server.url("/authors/x")]
    first = crawl(urls, cache, max_retries=0)
    assert first[urls[0]].reject_reason == "timeout" and first[urls[1]].reject_reason == "bot_challenge"
    server.route("/authors/t", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    source = make_source(urls, cache, max_retries=0)
    source.refetch_transient = True
    second = {c.url: c for c in source.iter_captures(PARTITION)}
    assert second[urls[0]].reject_reason is None and second[urls[1]] == first[urls[1]]
    assert server.hits("/authors/x") == 1


# ============================================================================ the night

def _setup_night(bz: LocalHttpServer, sf: LocalHttpServer) -> dict[str, dict]:
    """50 profiles over two 'sites': good pages (with ETag / Last-Modified / no validators) and faults."""
    plan: dict[str, dict] = {}
    for srv in (bz, sf):
        srv.route("/robots.txt", Reply(200, "User-agent: *\nDisallow: /private/\n", content_type="text/plain"))

    def good(srv, path, i, validators):
        body = SAMPLE_BODIES[i % len(SAMPLE_BODIES)]
        if validators == "etag":
            srv.route(path, conditional_page(body, etag=f'"p{i}"', content_type="text/plain"))
        elif validators == "lm":
            srv.route(path, conditional_page(body, last_modified="Mon, 16 Nov 2026 08:00:00 GMT", content_type="text/plain"))
        else:
            srv.route(path, Reply(200, body, content_type="text/plain"))
        plan[srv.url(path)] = {"expect": None, "body": body, "validators": validators, "path": path, "srv": srv,
                               "etag": f'"p{i}"'}

    def bad(srv, path, reason, reply=None):
        if reply is not None:
            srv.route(path, reply)
        plan[srv.url(path)] = {"expect": reason, "path": path, "srv": srv}

    kinds = ["etag", "lm", "none"]
    n = 0
    for srv, prefix in ((bz, "/authors/bz-"), (sf, "/author/")):
        for _ in range(16):
            good(srv, f"{prefix}{n:03d}", n, kinds[n % 3])
            n += 1
    # Recoverable faults: the first answer is bad, the retry lands the page.
    recoverable = [
        Reply(429, "slow down", headers={"Retry-After": "3"}), Reply(503, "busy"), Reply(502, "bad gateway"),
        Reply(200, "late", delay_s=1.0), Reply(200, b"partial", content_length=5000, content_type="text/plain"),
    ]
    for j, fault in enumerate(recoverable):
        srv = (bz, sf)[j % 2]
        path = f"/author/r{j}" if srv is sf else f"/authors/bz-r{j}"
        good(srv, path, n, kinds[j % 3])
        srv.fault(path, fault)
        plan[srv.url(path)]["fault"] = fault
        n += 1
    bad(bz, "/authors/bz-cf", "bot_challenge", Reply(503, CLOUDFLARE_CHALLENGE, headers={"cf-mitigated": "challenge"}))
    bad(sf, "/author/cf200", "bot_challenge", Reply(200, CLOUDFLARE_CHALLENGE))
    bad(bz, "/authors/bz-captcha", "bot_challenge", Reply(403, CAPTCHA_403))
    bad(sf, "/author/soft404", "error_page", Reply(200, SOFT_404))
    bad(bz, "/authors/bz-soft500", "error_page", Reply(200, SOFT_500_TEXT, content_type="text/plain"))
    bad(sf, "/author/gone", "error_page")  # unrouted: a real 404
    bad(bz, "/authors/bz-500", "error_page", Reply(500, "<h1>Internal Server Error</h1>"))
    bad(sf, "/author/huge", "oversize", Reply(200, "<p>x</p>", stream_bytes=50 * 1024 * 1024, content_length=None))
    bad(bz, "/authors/bz-loop", "redirect_loop", Reply(302, headers={"Location": "/authors/bz-loop"}))
    bad(sf, "/private/author/9", "robots_disallowed", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    bad(bz, "/authors/bz-slow", "timeout", Reply(200, "late", delay_s=1.0))
    bad(sf, "/author/cut", "truncated", Reply(200, b"partial", content_length=5000, content_type="text/plain"))
    bad(bz, "/authors/bz-drop", "connection_error", Reply(drop=True))
    assert len(plan) == 50, len(plan)
    return plan


def test_the_night_50_profiles_then_a_conditional_second_night(cache):
    with LocalHttpServer() as bz, LocalHttpServer() as sf:
        plan = _setup_night(bz, sf)
        urls = list(plan)
        source = make_source(urls, cache)
        night1 = list(source.iter_captures(PARTITION))

        # One capture per URL, nothing lost.
        assert sorted(c.url for c in night1) == sorted(urls)
        by_url = {c.url: c for c in night1}
        for url, p in plan.items():
            cap = by_url[url]
            assert cap.reject_reason == p["expect"], (url, cap.reject_reason, cap.reject_detail)
            if p["expect"] is None:
                assert cap.body == p["body"] and cap.http_status == 200 and not cap.not_modified
                assert cap.origin == "http" and cap.fetch_ms is not None
            else:
                assert cap.reject_detail
            if "fault" in p:  # the fault was seen and retried
                assert p["srv"].hits(p["path"]) == 2
        assert source.stats["fetched"] == 37
        assert bz.hits("/authors/bz-cf") == 1 and bz.hits("/authors/bz-captcha") == 1  # challenges: no retry
        assert sf.hits("/private/author/9") == 0
        assert bz.hits("/robots.txt") == 1 and sf.hits("/robots.txt") == 1
        # Hosts alternate: one site's pause overlaps the other's requests.
        hosts = [c.url.split("/")[2] for c in night1[:10]]
        assert all(a != b for a, b in zip(hosts, hosts[1:]))

        # Night two: one page changed, everything else unchanged.
        changed_url = next(u for u, p in plan.items() if p.get("validators") == "etag")
        changed = plan[changed_url]
        changed["srv"].route(changed["path"], conditional_page(b"Changed profile\n", etag='"new"', content_type="text/plain"))
        night2 = {c.url: c for c in make_source(urls, cache).iter_captures(PARTITION + timedelta(days=1))}
        assert sorted(night2) == sorted(urls)
        for url, p in plan.items():
            cap = night2[url]
            if p["expect"] is not None:
                assert cap.reject_reason == p["expect"], (url, cap.reject_reason)
                continue
            last = p["srv"].requests_to(p["path"])[-1]
            if p["validators"] == "etag":
                assert last.headers.get("if-none-match") == p["etag"]
            if p["validators"] == "lm":
                assert last.headers.get("if-modified-since") == "Mon, 16 Nov 2026 08:00:00 GMT"
            if url == changed_url:
                assert not cap.not_modified and cap.body == b"Changed profile\n" and cap.http_status == 200
                continue
            assert cap.reject_reason is None and cap.not_modified, url
            assert cap.capture_id == by_url[url].capture_id
            assert cap.http_status == (200 if p["validators"] == "none" else 304)


# ============================================================================ configuration

def test_the_repository_config_loads(monkeypatch):
    cfg = load_crawl_config(Path(__file__).resolve().parents[2] / "config" / "profiles.toml", env={"SCHOLARHOUSE_CONTACT": CONTACT})
    assert cfg.contact == CONTACT
    assert {p.source for p in cfg.profiles} == {"bzpeer", "scholarfeed"}
    assert cfg.http.default_rate_limit_s >= 1.0 and cfg.http.max_body_bytes == 5_000_000
    no_contact = load_crawl_config(Path(__file__).resolve().parents[2] / "config" / "profiles.toml", env={})
    assert no_contact.contact is None
    with pytest.raises(ContactRequiredError):
        LiveProfileSource.from_config(no_contact, cache=SourceCache(":memory:"))


def test_config_rejects_unknown_urls_and_dedupes(tmp_path):
    cfg_path = tmp_path / "config" / "profiles.toml"
    cfg_path.parent.mkdir()
    cfg_path.write_text(
        '[crawler]\nrate_limit_s = 4\n[crawler.host_rate_limits_s]\n"www.bzpeer.com" = 6\n'
        '[sites.bzpeer]\nprofiles = ["https://www.bzpeer.com/authors/ada-l", "https://WWW.BZPEER.COM/authors/ada-l#x"]\n'
        '[sites.scholarfeed]\nprofiles = ["https://www.scholarfeed.org/author/42"]\n'
    )
    cfg = load_crawl_config(cfg_path, env={"SCHOLARHOUSE_CONTACT": CONTACT})
    assert [(p.source, p.profile_id) for p in cfg.profiles] == [("bzpeer", "ada-l"), ("scholarfeed", "42")]
    assert cfg.http.host_rate_limits_s == {"www.bzpeer.com": 6.0}
    assert cfg.cache_path == tmp_path / "warehouse" / "source_cache.sqlite"
    cfg_path.write_text('[sites.scholarfeed]\nprofiles = ["https://www.scholarfeed.org/paper/2401.00001v1"]\n')
    with pytest.raises(CrawlConfigError, match="paper/2401"):
        load_crawl_config(cfg_path, env={})
    cfg_path.write_text("[crawler]\nrate_limit_s = 0.1\n")
    with pytest.raises(CrawlConfigError, match="not polite"):
        load_crawl_config(cfg_path, env={})


_ONE_SITE = '[sites.scholarfeed]\nprofiles = ["https://www.scholarfeed.org/author/1000001"]\n'


@pytest.mark.parametrize("crawler, key", [
    ("rate_limit_s = nan", "crawler.rate_limit_s"),                          # valid TOML; nan < 1 is False
    ('rate_limit_s = 0.1\nallow_fast = "no"', "crawler.allow_fast"),        # a string is truthy
    ('[crawler.host_rate_limits_s]\n"www.scholarfeed.org" = 0', "www.scholarfeed.org"),
    ('[crawler.host_rate_limits_s]\n"www.scholarfeed.org" = nan', "www.scholarfeed.org"),
    ("max_retries = -1", "crawler.max_retries"),
    ("max_body_bytes = -1", "crawler.max_body_bytes"),
    ("read_timeout_s = nan", "crawler.read_timeout_s"),
    ('respect_robots = "false"', "crawler.respect_robots"),                 # was: bool("false") is True
    ('rate_limit_s = "fast"', "crawler.rate_limit_s"),                      # was: a bare ValueError
])
def test_an_impolite_or_impossible_crawler_setting_is_refused_naming_it(tmp_path, crawler, key):
    """Was: the first four left the host's interval at 0 s (requests back to back), the next four
    loaded, the last raised a ValueError naming neither the file nor the key."""
    path = tmp_path / "profiles.toml"
    path.write_text(f"[crawler]\n{crawler}\n{_ONE_SITE}")
    with pytest.raises(CrawlConfigError) as info:
        load_crawl_config(path, env={})
    assert str(path) in str(info.value) and key in str(info.value)


def test_a_config_that_is_not_toml_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "profiles.toml"
    path.write_text("[crawler\nrate_limit_s = 5\n")
    with pytest.raises(CrawlConfigError, match="not valid TOML"):
        load_crawl_config(path, env={})
    path.write_text('[crawler]\nrate_limit_s = 0.5\nallow_fast = true\n[crawler.host_rate_limits_s]\n"a.org" = 0\n' + _ONE_SITE)
    assert load_crawl_config(path, env={}).http.host_rate_limits_s == {"a.org": 0.0}  # local tests may go fast


def test_profile_ref():
    assert profile_ref("https://www.bzpeer.com/authors/daning-cheng").profile_id == "daning-cheng"
    ref = profile_ref("https://www.scholarfeed.org/author/123456/")
    assert (ref.source, ref.profile_id) == ("scholarfeed", "123456")
    assert profile_ref("https://www.scholarfeed.org/paper/2401.00001v1") is None


@pytest.mark.parametrize("garbage", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_an_unreadable_cache_file_is_set_aside_and_the_night_goes_on(tmp_path, server, caplog, garbage):
    """The cache is only a cache (deleting it costs a re-fetch, never data): a file that is not a
    database, or a damaged one, is moved aside with a warning and a new cache is used (was: every
    live and enrichment night failed at the start with "file is not a database")."""
    path = tmp_path / "source_cache.sqlite"
    path.write_bytes(garbage)
    with caplog.at_level("WARNING"):
        cache = SourceCache(path)
    try:
        assert cache.set_aside is not None and Path(cache.set_aside).read_bytes() == garbage
        assert "could not be read" in caplog.text and cache.set_aside in caplog.text
        server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
        cap = crawl([server.url("/authors/a")], cache)[server.url("/authors/a")]
        assert cap.reject_reason is None and cache.get_page_state(server.url("/authors/a")) is not None
    finally:
        cache.close()
    with SourceCache(path) as again:  # the new file opens as it is
        assert again.set_aside is None and again.get_page_state(server.url("/authors/a")) is not None


# ============================================================================ byte-level server faults

def _trickle(data: bytes, every_s: float):
    """A RawServer handler that sends ``data`` one byte every ``every_s`` (never idle long enough
    for a read timeout)."""

    def handler(conn, _request):
        for i in range(len(data)):
            conn.sendall(data[i:i + 1])
            time.sleep(every_s)

    return handler


def _raw_fetch(srv: RawServer, **overrides):
    http = PoliteHttp(fast_settings(respect_robots=False, max_retries=0, read_timeout_s=2.0, **overrides),
                      clock=ManualClock())
    started = time.perf_counter()
    res = http.fetch(srv.url("/authors/slow"))
    return res, time.perf_counter() - started


def test_max_fetch_s_bounds_a_body_that_trickles_in():
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 60\r\nConnection: close\r\n\r\n"

    def handler(conn, request):
        conn.sendall(head)
        _trickle(b"x" * 60, 0.05)(conn, request)

    with RawServer(handler) as srv:
        res, elapsed = _raw_fetch(srv, max_fetch_s=0.5)
    # was: ~3 s, the deadline only looked at between 64 KiB reads (and the whole body then a 'timeout')
    assert elapsed < 1.5, elapsed
    assert res.error == "timeout" and "0.5 s" in res.error_detail
    assert 0 < len(res.body) < 60  # what arrived is kept


def test_max_fetch_s_bounds_headers_that_trickle_in():
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Filler: " + b"y" * 40 + b"\r\nContent-Length: 2\r\n\r\nok"
    with RawServer(_trickle(head, 0.05)) as srv:
        res, elapsed = _raw_fetch(srv, max_fetch_s=0.5)
    assert elapsed < 1.5, elapsed  # was: ~4 s, nothing bounded the status line and headers
    assert res.error == "timeout" and res.status is None


def test_a_complete_body_is_not_a_timeout(server, monkeypatch):
    class LateClock:  # every look at the clock is 100 s later: the deadline has passed by the last byte
        t = 0.0

        @classmethod
        def perf_counter(cls):
            cls.t += 100.0
            return cls.t

    monkeypatch.setattr(http_mod, "time", LateClock)
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    res = PoliteHttp(fast_settings(respect_robots=False, max_fetch_s=1.0), clock=ManualClock()).fetch(server.url("/authors/a"))
    assert res.error is None and res.body == SAMPLE_BODIES[0]  # was: 'timeout', "body not complete after 1 s"


def test_a_chunked_body_that_also_declares_content_length_is_not_truncated():
    page = SAMPLE_BODIES[0]

    def both(conn, _request):
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(page[i:i + 1000]), page[i:i + 1000]) for i in range(0, len(page), 1000))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(page) + chunks + b"0\r\n\r\n")

    with RawServer(both) as srv:
        res, _ = _raw_fetch(srv)
    # RFC 9112: with Transfer-Encoding chunked the Content-Length is ignored (was: 'truncated',
    # "received 0 bytes, Content-Length said ...": urllib3's tell() stays 0 on the chunked path)
    assert res.error is None and res.body == page


def test_a_cut_chunked_body_is_still_truncated():
    def cut(conn, _request):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
                     b"Content-Length: 5000\r\n\r\n190\r\n" + b"z" * 400 + b"\r\n3e8\r\n" + b"y" * 100)

    with RawServer(cut) as srv:
        res, _ = _raw_fetch(srv)
    # Completeness comes from the zero-size last chunk: a stream cut before it is still truncated.
    assert res.error == "truncated" and res.body == b"z" * 400


def test_a_redirect_to_a_raw_utf8_location_is_followed_to_the_right_page(server, cache):
    # What many servers put on the wire: the UTF-8 bytes of the slug, not percent-encoded.
    raw = "/authors/jos\u00e9-garc\u00eda".encode("utf-8").decode("latin-1")
    server.route("/authors/jose", Reply(301, b"", headers={"Location": raw}))
    server.route("/authors/jos%C3%A9-garc%C3%ADa", Reply(200, SAMPLE_BODIES[0], content_type="text/plain"))
    cap = crawl([server.url("/authors/jose")], cache)[server.url("/authors/jose")]
    # was: GET /authors/jos%C3%83%C2%A9-garc%C3%83%C2%ADa (mojibake) -> 404 -> error_page
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[0]
    assert cap.headers["final-url"] == server.url("/authors/jos%C3%A9-garc%C3%ADa")


def test_a_retry_after_on_the_last_attempt_still_holds_the_host(server):
    server.route("/a", Reply(429, "slow down", content_type="text/plain", headers={"Retry-After": "100"}))
    server.route("/b", Reply(200, "ok", content_type="text/plain"))
    clock = ManualClock()
    http = PoliteHttp(fast_settings(max_retries=2, default_rate_limit_s=5.0, max_retry_after_s=120.0,
                                    respect_robots=False), clock=clock)
    assert http.fetch(server.url("/a")).status == 429 and server.hits("/a") == 3
    before = clock.monotonic()
    http.fetch(server.url("/b"))
    assert clock.monotonic() - before >= 100  # was: 5 s, the host's last word forgotten


def test_a_retry_after_on_a_bot_wall_not_retried_still_holds_the_host(server):
    server.route("/a", Reply(503, CLOUDFLARE_CHALLENGE, headers={"Retry-After": "300"}))
    server.route("/b", Reply(200, "ok", content_type="text/plain"))
    clock = ManualClock()
    http = PoliteHttp(fast_settings(default_rate_limit_s=5.0, max_retry_after_s=120.0, respect_robots=False), clock=clock)
    res = http.fetch(server.url("/a"), no_retry=lambda r: True)
    assert res.status == 503 and server.hits("/a") == 1 and res.retry_after_s == 300
    before = clock.monotonic()
    http.fetch(server.url("/b"))
    assert clock.monotonic() - before >= 120  # capped by max_retry_after_s; was: 5 s


@pytest.mark.parametrize("coding", ["none", "UTF-8", "binary", "text/html"])
def test_a_content_encoding_that_names_no_compression_is_ignored(server, cache, coding):
    """Servers send tokens that are no content coding at all (PHP's "none" turns compression off);
    the body is the page, as browsers read it (was, briefly: rejected as truncated every night)."""
    url = server.url("/authors/a")
    server.route("/authors/a", Reply(200, SAMPLE_BODIES[0], content_type="text/plain",
                                     headers={"Content-Encoding": coding}))
    cap = crawl([url], cache)[url]
    assert cap.reject_reason is None and cap.body == SAMPLE_BODIES[0]


def test_a_body_in_a_content_encoding_we_cannot_decode_is_rejected_and_the_stored_copy_kept(server, cache):
    url = server.url("/authors/a")
    page = SAMPLE_BODIES[0]
    server.route("/authors/a", Reply(200, page, content_type="text/plain", headers={"ETag": '"v1"'}))
    assert crawl([url], cache)[url].reject_reason is None
    # Stands for a brotli stream: undecodable here either way (a CDN serving a pre-compressed object).
    blob = zlib.compress(page, 9)[2:]
    server.route("/authors/a", Reply(200, blob, content_type="text/plain", headers={"Content-Encoding": "br", "ETag": '"v1-br"'}))
    cap = crawl([url], cache, partition=PARTITION + timedelta(days=1))[url]
    # was: accepted, the compressed bytes stored as the last good copy
    assert cap.reject_reason == "truncated" and "Content-Encoding br" in cap.reject_detail
    assert cap.body == blob
    state = cache.get_page_state(url)
    assert state.body == page and state.etag == '"v1"'
    # ... and we never ask for an encoding we could not decode.
    decodable = set(urllib3.response.HTTPResponse.CONTENT_DECODERS)
    for req in server.requests_to("/authors/a"):
        offered = {e.strip() for e in req.headers["accept-encoding"].split(",")}
        assert offered <= decodable, offered


def test_a_locked_or_failing_cache_file_is_not_set_aside(tmp_path, monkeypatch):
    """A lock, a full disk or an I/O error says nothing against the file: the error is raised and the
    file stays where it is (was, briefly: any sqlite error moved a healthy cache aside)."""
    import sqlite3

    path = tmp_path / "source_cache.sqlite"
    SourceCache(path).close()
    real_connect = sqlite3.connect

    def locked(*args, **kwargs):
        conn = real_connect(*args, **kwargs)

        class Locked:
            def execute(self, *a, **k):
                raise sqlite3.OperationalError("database is locked")

            def close(self):
                conn.close()
        return Locked()

    monkeypatch.setattr(sqlite3, "connect", locked)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        SourceCache(path)
    monkeypatch.undo()
    assert not list(tmp_path.glob("*.unreadable-*"))
    with SourceCache(path) as again:
        assert again.set_aside is None


def test_a_cache_file_of_an_unsupported_format_is_set_aside(tmp_path):
    """A damaged header ("unsupported file format", an OperationalError) is damage, not a lock."""
    path = tmp_path / "source_cache.sqlite"
    SourceCache(path).close()
    data = bytearray(path.read_bytes())
    data[44:48] = (9).to_bytes(4, "big")  # the schema format number: 1-4 exist
    path.write_bytes(bytes(data))
    with SourceCache(path) as cache:
        assert cache.set_aside is not None and cache.get_page_state("https://a.org/x") is None

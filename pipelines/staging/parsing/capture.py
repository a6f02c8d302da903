"""One capture (bytes + URL + capture time) -> a ParseResult. Never raises.

Steps: decode (``decoding``) -> sniff text/plain vs text/html -> visible lines (HTML via
``htmltext``) -> which site (URL host first, page content otherwise) -> the site parser -> ids.

Guards around the site parsers, in this order:
1. ``empty`` / ``not_text`` before anything else;
2. when a site parser finds a profile, the page is taken as a profile even if its text mentions
   "captcha" or "404" (an abstract may);
3. otherwise the page is checked for an anti-bot interstitial (``bot_challenge``), then for an
   error served with HTTP 200 (``error_page``), and only then reported as ``no_profile`` (the
   site is known) or ``unknown_site``.
Any exception inside these steps becomes a ``parse_error`` reject carrying the exception text.

After a site parser, on every page: an item repeating an earlier one (same title match key and
year) is dropped as a ``duplicate_item`` reject (a page of one block repeated 100,000 times is one
listing, not 100,000), and every profile and listing value is checked against its column's domain
(``domains``): what is out of range is NULL (or kept, on warning-only scores) with an issue.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from urllib.parse import urljoin, urlsplit

from pipelines.staging.parsing import bzpeer, domains, scholarfeed
from pipelines.staging.parsing.decoding import decode_report, sniff_content_type
from pipelines.staging.parsing.fields import slugify
from pipelines.staging.parsing.htmltext import html_to_document
from pipelines.staging.parsing.layout import Page, looks_like_person_name, text_lines
from pipelines.staging.parsing.result import ParseResult, SiteParse, make_issue, make_reject
from pipelines.textnorm import title_key

SITE_HOSTS = {"bzpeer": "bzpeer.com", "scholarfeed": "scholarfeed.org"}
SITE_ROOTS = {"bzpeer": "https://www.bzpeer.com/", "scholarfeed": "https://www.scholarfeed.org/"}
_PROFILE_PATHS = {
    "bzpeer": re.compile(r"^/authors?/(?P<id>[^/?#]+)"),
    "scholarfeed": re.compile(r"^/authors?/(?P<id>[^/?#]+)"),
}
_PARSERS = {"bzpeer": bzpeer.parse, "scholarfeed": scholarfeed.parse}
# Content needs this many signal points (see each parser's content_signals) to name a site.
_MIN_SIGNALS = 3

# Anti-bot interstitials: Cloudflare, hCaptcha/reCAPTCHA/Turnstile, DataDome, PerimeterX, Imperva,
# DDoS-Guard, generic "are you human" and rate-limit pages.
_BOT_CHALLENGE = re.compile(
    r"just a moment\s?(?:\.\.\.|…)|checking (?:if the site connection is secure|your browser)"
    r"|verify(?:ing)? (?:that )?you are (?:a )?human|are you (?:a )?(?:human|robot)|(?:i'?m |not a )robot"
    r"|\b(?:h|re)?captcha\b|cf-turnstile|challenges\.cloudflare\.com|cf[-_]chl|cf-browser-verification"
    r"|attention required!? \| cloudflare|ddos(?:-| )(?:protection|guard)|enable javascript and cookies to continue"
    r"|pardon our interruption|unusual traffic from your|incapsula incident|_incapsula_resource"
    r"|perimeterx|px-captcha|datadome|access (?:to this page has been )?denied|you have been blocked"
    r"|request (?:was )?blocked|security check to access|please complete the security check"
    r"|too many requests|rate limit(?:ed| exceeded)|bot (?:detection|protection|verification)",
    re.IGNORECASE,
)
_ERROR_PAGE = re.compile(
    r"\b404\b|\b50[0234]\b|page (?:was )?not found|not found|internal server error|something went wrong"
    r"|bad gateway|service (?:temporarily )?unavailable|gateway time-?out|an? (?:unexpected )?error (?:has )?occurred"
    r"|application error|server error|this page (?:could not|couldn'?t|can'?t|cannot) be (?:found|displayed)"
    r"|(?:doesn'?t|does not|no longer) exists?|no longer available|we couldn'?t find|could not be found"
    r"|under maintenance|temporarily unavailable|\boops\b|page unavailable|error \d{3}",
    re.IGNORECASE,
)


def site_from_url(url: str | None) -> str | None:
    """'bzpeer' / 'scholarfeed' when the URL's host is one of the sites, else None."""
    if not url:
        return None
    try:
        host = (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return None
    for site, domain in SITE_HOSTS.items():
        if host == domain or host.endswith("." + domain):
            return site
    return None


def profile_id_from_url(site: str, url: str | None) -> str | None:
    """``/authors/<slug>`` (BZPEER) or ``/author/<number>`` (Scholar Feed) from a site URL."""
    if not url or site_from_url(url) != site:
        return None
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        return None
    m = _PROFILE_PATHS[site].match(path)
    return m["id"] if m else None


def _site_from_lines(lines: list[str], hints: str = "") -> str:
    bz = bzpeer.content_signals(lines)
    sf = scholarfeed.content_signals(lines)
    low = hints.lower()
    bz += 1 if "bzpeer" in low else 0
    sf += 1 if "scholar feed" in low or "scholarfeed" in low else 0
    if max(bz, sf) < _MIN_SIGNALS or bz == sf:
        return "unknown"
    return "bzpeer" if bz > sf else "scholarfeed"


def detect_site(text: str, url: str | None) -> str:
    """'bzpeer' | 'scholarfeed' | 'unknown'. The URL's host wins when it is a site; else content.
    ``text`` may be plain visible text or page source."""
    site = site_from_url(url)
    if site:
        return site
    if not text:
        return "unknown"
    if sniff_content_type(text) == "text/html":
        doc = html_to_document(text)
        site = site_from_url(doc.canonical_url)
        if site:
            return site
        return _site_from_lines(doc.lines, f"{doc.title or ''} {doc.site_name or ''}")
    return _site_from_lines(text_lines(text))


def _capture_date(captured_at: datetime | date | None) -> date:
    if isinstance(captured_at, datetime):
        return captured_at.date()
    if isinstance(captured_at, date):
        return captured_at
    return date.today()


def parse_capture(
    body: bytes, *, url: str | None, captured_at: datetime, content_type: str | None = None
) -> ParseResult:
    """Parse one captured page. Never raises: any input yields profile+listings, rejects, or both."""
    result = ParseResult(source="unknown", source_profile_id=None, content_type="text/plain", encoding=None,
                         profile=None, page_url=url)
    try:
        _parse_into(result, body, url, captured_at, content_type)
        _check_rows(result, _capture_date(captured_at))
    except Exception as exc:  # last resort: a parser bug must not stop the batch
        result.profile = None
        result.listings = []
        result.issues = []
        result.rejects = [make_reject("parse_error", f"{type(exc).__name__}: {exc}")]
    return result


def _check_rows(result: ParseResult, captured: date) -> None:
    """Drop repeated items (``duplicate_item`` rejects) and hold every value to its column's domain."""
    seen: dict[tuple[str, int | None], int] = {}
    kept = []
    for listing in result.listings:
        key = (title_key(listing["title"]), listing.get("year"))
        first = seen.setdefault(key, listing["position"])
        if first != listing["position"]:
            result.rejects.append(make_reject(
                "duplicate_item", f"repeats item {first} (same title and year): {listing['title'][:120]!r}",
                listing["position"]))
            continue
        kept.append(listing)
        result.issues.extend(domains.check_listing(listing, captured))
    result.listings = kept
    if result.profile is None and not kept:  # nothing landed: the reject says it all
        result.issues = []
    if result.profile is not None:
        result.profile["listed_items"] = len(kept)
        result.issues.extend(domains.check_profile(result.profile))


def _parse_into(result: ParseResult, body: bytes, url: str | None, captured_at, content_type: str | None) -> None:
    if body is None:
        body = b""
    if isinstance(body, str):  # tolerate an already-decoded body
        body = body.encode("utf-8")
    result.source = site_from_url(url) or "unknown"
    text, encoding, notes = decode_report(bytes(body), content_type)
    result.encoding = encoding
    for reason, action, detail in notes:
        result.issues.append(make_issue(reason, "body", action, encoding, detail))
    if text is None:
        declared = (content_type or "").split(";", 1)[0].strip().lower()
        result.content_type = declared if declared in ("text/html", "text/plain") else "text/plain"
        nul = bytes(body).find(b"\x00")
        where = f" (a NUL byte at offset {nul:,})" if nul >= 0 else ""
        result.rejects.append(make_reject("not_text", f"{len(body)} bytes that do not decode as text{where}"))
        return
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    result.content_type = sniff_content_type(text, content_type)
    if not text.strip():
        result.rejects.append(make_reject("empty", "the body is empty or whitespace only"))
        return

    site = site_from_url(url)
    page_url = url
    doc = None
    if result.content_type == "text/html":
        doc = html_to_document(text)
        lines = doc.lines
        canonical = _join(url, doc.canonical_url) if doc.canonical_url else None
        if site is None and canonical and site_from_url(canonical):
            site, page_url = site_from_url(canonical), canonical
        if not lines:
            reason = _page_problem(doc.title or "", text[:20000])
            result.rejects.append(make_reject(reason or "empty", "the page has no visible text"
                                              + (f" (title: {doc.title!r})" if doc.title else "")))
            result.source = site or "unknown"
            return
        if site is None:
            site = _site_from_lines(lines, f"{doc.title or ''} {doc.site_name or ''}")
    else:
        lines = text_lines(text)
        if site is None:
            site = _site_from_lines(lines)
    result.page_url = page_url
    result.source = site

    parsed: SiteParse | None = None
    if site in _PARSERS:
        page = Page(lines=lines, links=_absolute_links(doc, page_url, site) if doc else [],
                    ends_cleanly=bool(doc and doc.closed), captured=_capture_date(captured_at))
        parsed = _PARSERS[site](page)
    # A name that reads as a sentence was the parser's last resort ("juan carlos niebles"): on a page
    # that reads as an error page or a bot wall ("Page not found", "Please verify you are a human"),
    # or that lists nothing, it is that line's text, not a person.
    weak_name = (parsed is not None and parsed.profile is not None and parsed.profile_name is not None
                 and not looks_like_person_name(parsed.profile_name))
    if weak_name and (_page_problem("\n".join(lines), text if doc is not None else "") or not parsed.listings):
        parsed.profile = None
    if parsed is not None and parsed.profile is not None:
        result.issues.extend(parsed.issues)
        result.profile = parsed.profile
        result.listings = parsed.listings
        result.rejects.extend(parsed.rejects)
        result.source_profile_id = _profile_id(site, page_url, parsed.profile_name)
        return

    visible = "\n".join(lines)
    problem = _page_problem(visible, text if doc is not None else "")
    if problem:
        result.rejects.append(make_reject(problem, _snippet(lines)))
        return
    if parsed is None:
        result.rejects.append(make_reject("unknown_site", f"neither BZPEER nor Scholar Feed: {_snippet(lines)}"))
        return
    # The site is known but there is no profile header: keep whatever items were readable.
    result.source_profile_id = _profile_id(site, page_url, None)
    result.listings = parsed.listings
    result.issues.extend(parsed.issues)
    other = _site_from_lines(lines, f"{doc.title or ''} {doc.site_name or ''}" if doc is not None else "")
    if other not in (site, "unknown"):  # the URL (a sidecar's, a crawl's) names the other site than the page
        detail = f"the page reads as a {other} page but its URL {page_url!r} is {site}'s: {_snippet(lines)}"
    else:
        detail = f"no {site} profile name/header found: {_snippet(lines)}"
    result.rejects.append(make_reject("no_profile", detail))
    result.rejects.extend(parsed.rejects)


def _join(base: str | None, href: str) -> str:
    """urljoin that survives malformed URLs (a broken base or href is kept as written)."""
    try:
        return urljoin(base or "", href)
    except ValueError:
        return href


def _absolute_links(doc, page_url: str | None, site: str) -> list[tuple[int, str]]:
    """The document's links made absolute: against <base>, the page URL, else the site's root."""
    if not doc.links:
        return []
    base = page_url if page_url and page_url.startswith(("http://", "https://")) else SITE_ROOTS[site]
    if doc.base_href:
        base = _join(base, doc.base_href)
    return [(line, _join(base, href)) for line, href in doc.links
            if not href.startswith(("#", "javascript:", "mailto:", "tel:", "data:"))]


def _page_problem(visible: str, source: str) -> str | None:
    """'bot_challenge' / 'error_page' for pages that are not a profile, else None."""
    # Bot pages are short; scanning only their start keeps a long junk page cheap.
    head = visible[:5000]
    if _BOT_CHALLENGE.search(head) or (source and _BOT_CHALLENGE.search(source[:20000])):
        return "bot_challenge"
    if _ERROR_PAGE.search(head):
        return "error_page"
    return None


def _profile_id(site: str, page_url: str | None, name: str | None) -> str | None:
    from_url = profile_id_from_url(site, page_url)
    if from_url:
        return from_url
    if name:
        slug = slugify(name)
        return f"name:{slug}" if slug else None
    return None


def _snippet(lines: list[str]) -> str:
    return " | ".join(lines[:3])[:200]

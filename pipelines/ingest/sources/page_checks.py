"""Is a response a usable profile page? The crawler's page checks: a bot wall instead of the page
(Cloudflare "Just a moment…", a captcha, a 403/429/503 carrying challenge markers: ``bot_challenge``)
or an error page (HTTP 4xx/5xx, or an error served with HTTP 200, or an empty body: ``error_page``),
read from the status, the headers and the page's visible text. No network, no Dagster imports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Mapping

from pipelines.textnorm import text_codec

# The reject reasons these checks give (Capture.reject_reason; the crawler lists them all).
BOT_CHALLENGE = "bot_challenge"
ERROR_PAGE = "error_page"


BLOCK_STATUSES = frozenset({403, 429, 503})
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
    """The header's charset when it names a usable text encoding, else UTF-8."""
    m = re.search(r"charset=([\w.-]+)", content_type or "", re.IGNORECASE)
    return (text_codec(m.group(1)) if m else None) or "utf-8"


def _looks_like_html(text: str, content_type: str | None) -> bool:
    if content_type and ("html" in content_type.lower() or "xml" in content_type.lower()):
        return True
    head = text[:2000].lstrip().lower()
    return head.startswith("<") and any(t in head for t in ("<html", "<!doctype", "<head", "<body", "<title", "<div"))


def page_view(body: bytes, content_type: str | None = None) -> PageView:
    sample = body[:_CLASSIFY_MAX_BYTES]
    try:
        text = sample.decode(_charset(content_type), errors="replace")
    except (LookupError, UnicodeError, ValueError):
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
    if status in BLOCK_STATUSES and (markup or strong or weak):
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

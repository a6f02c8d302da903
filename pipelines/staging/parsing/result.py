"""What a parse produces: the ParseResult handed to the staging assets, and row templates.

Reject reasons are stable codes (stored in ``staging.rejects.reason``):

- ``empty``          the body is empty, whitespace only, or an HTML page with no visible text
- ``not_text``       the bytes are not text in any supported encoding (binary)
- ``unknown_site``   the page is neither a BZPEER nor a Scholar Feed author page
- ``bot_challenge``  an anti-bot interstitial (Cloudflare "Just a moment...", captcha, access denied)
- ``error_page``     an error served as a normal page (404/500, "page not found", "something went wrong")
- ``no_profile``     the site is recognised but no profile name / header was found
- ``truncated_item`` an item is incomplete (the page ends mid-item, or an item row has no title);
                     one reject per incomplete item, ``position`` is the item's place on the page
- ``duplicate_item`` an item that repeats one listed earlier on the same page (same title and
                     year): the first is kept, each repeat is one reject with its ``position``
- ``parse_error``    an unexpected exception inside a parser (the exception text is the detail), or
                     a page whose rows do not fit the staging tables

What lands but was repaired or is doubtful is not a reject: it is an *issue*
(``staging.quality_issues``), one row per value, with the raw text kept. Issue reasons
(``ISSUE_REASONS``) and what was stored (``ISSUE_ACTIONS``):

- ``value_out_of_range``  a number the column cannot hold or that cannot be true (a count of 2^31 or
                          more, a percentage over 100, a year before 1000, arXiv version 0): NULL
                          (``nulled``); on the 0–100 site scores, which are only a warning, ``kept``
- ``unreadable_value``    a metric line whose value is not a number ("-5citations"): NULL
- ``unreadable_byline``   the line after a Scholar Feed title reads as names but not as a byline
                          ("A B (Alibaba), C D") while other items of the page have one: no
                          ``byline_authors``, the line kept as the abstract's start (``kept``)
- ``impossible_date``     a day that does not exist ("Feb 30, 2023"): stored at month precision
                          (``repaired``)
- ``date_after_capture``  an item dated after the page was captured (the site's claim): ``kept``
- ``encoding_guessed``    not UTF-8 and no charset declared: decoded as cp1252 (``kept``)
- ``invalid_bytes``       bytes that are not valid in the encoding were replaced by U+FFFD (``repaired``)
- ``nul_padding``         NUL bytes padding the end of the file were dropped (``repaired``)
- ``content_type_mismatch`` the declared type (file extension, Content-Type) contradicts the
                          content, which wins (``repaired``)

The page sources add issues of their own (``pipelines.ingest.sources.base.CaptureIssue``, stage ``fetch``):
``bad_sidecar``, ``bad_sidecar_value``, ``implausible_capture_time``, ``file_name_not_utf8``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

REJECT_REASONS: tuple[str, ...] = (
    "empty", "not_text", "unknown_site", "bot_challenge", "error_page", "no_profile", "truncated_item",
    "duplicate_item", "parse_error",
)

ISSUE_REASONS: tuple[str, ...] = (
    "value_out_of_range", "unreadable_value", "unreadable_byline", "impossible_date", "date_after_capture",
    "encoding_guessed", "invalid_bytes", "nul_padding", "content_type_mismatch",
)
# Issues the page sources report (CaptureIssue), listed here so every code has one home.
SOURCE_ISSUE_REASONS: tuple[str, ...] = (
    "bad_sidecar", "bad_sidecar_value", "implausible_capture_time", "file_name_not_utf8",
)
ISSUE_ACTIONS: tuple[str, ...] = ("nulled", "repaired", "kept")

PROFILE_KEYS: tuple[str, ...] = (
    "name", "bio", "affiliation", "trust_score", "trust_tier", "verification_level", "claimed",
    "declared_works", "followers", "topics", "close_collaborators", "primary_category",
    "primary_category_raw", "h_index", "declared_papers", "citations", "novelty_pct", "ai_score",
    "declared_items", "listed_items", "truncated",
)

LISTING_KEYS: tuple[str, ...] = (
    "position", "title", "title_normalized", "abstract", "abstract_normalized", "pub_type", "venue",
    "year", "pub_date", "date_precision", "date_raw", "year_inferred", "category", "category_raw",
    "has_code", "listing_score", "byline_authors", "byline_truncated", "arxiv_id", "arxiv_version",
    "paper_url", "code_urls",
)


def empty_profile() -> dict:
    profile = dict.fromkeys(PROFILE_KEYS)
    profile["listed_items"] = 0
    profile["truncated"] = False
    return profile


def empty_listing(position: int) -> dict:
    listing = dict.fromkeys(LISTING_KEYS)
    listing.update(position=position, year_inferred=False, byline_authors=[], byline_truncated=False, code_urls=[])
    return listing


def make_reject(reason: str, detail: str, position: int | None = None) -> dict:
    assert reason in REJECT_REASONS, reason
    return {"reason": reason, "detail": detail[:500], "position": position}


def make_issue(reason: str, field: str | None, action: str, raw_value: object, detail: str,
               position: int | None = None) -> dict:
    """One ``staging.quality_issues`` row (without the capture's keys): what was doubted or repaired,
    the raw text as read, and what was stored instead (``action``)."""
    assert reason in ISSUE_REASONS, reason
    assert action in ISSUE_ACTIONS, action
    raw = None if raw_value is None else str(raw_value)
    if raw is not None and len(raw) > 200:
        raw = raw[:199] + "…"
    return {"reason": reason, "field": field, "action": action, "raw_value": raw, "detail": detail[:500],
            "position": position}


@dataclass
class SiteParse:
    """One site parser's answer, before parse_capture adds ids and page-level checks."""
    site: str
    profile: dict | None
    profile_name: str | None
    listings: list[dict]
    rejects: list[dict]
    truncated: bool = False
    issues: list[dict] = field(default_factory=list)


@dataclass
class ParseResult:
    source: str                    # 'bzpeer' | 'scholarfeed' | 'unknown'
    source_profile_id: str | None  # /authors/<slug>, /author/<number>, or 'name:<slug of the name>'
    content_type: str              # 'text/plain' | 'text/html'
    encoding: str | None
    profile: dict | None
    listings: list[dict] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)
    page_url: str | None = None    # the URL the ids were read from (given, or the HTML canonical URL)
    issues: list[dict] = field(default_factory=list)  # make_issue() rows: landed, but repaired or doubtful

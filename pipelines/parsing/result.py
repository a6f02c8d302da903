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
- ``parse_error``    an unexpected exception inside a parser (the exception text is the detail)
"""

from __future__ import annotations

from dataclasses import dataclass, field

REJECT_REASONS: tuple[str, ...] = (
    "empty", "not_text", "unknown_site", "bot_challenge", "error_page", "no_profile", "truncated_item", "parse_error",
)

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


@dataclass
class SiteParse:
    """One site parser's answer, before parse_capture adds ids and page-level checks."""
    site: str
    profile: dict | None
    profile_name: str | None
    listings: list[dict]
    rejects: list[dict]
    truncated: bool = False


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

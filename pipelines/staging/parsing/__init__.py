"""Page parsers for BZPEER and Scholar Feed author pages (text or HTML captures) -> typed rows.

The staging assets call ``parse_capture(body, url=..., captured_at=..., content_type=...)`` for every
row of ``raw.page_captures`` and write ``ParseResult.profile`` to ``staging.profiles``, its
``listings`` to ``staging.listings`` and its ``rejects`` to ``staging.rejects``. The parsers are pure
functions of (bytes, url, capture time): re-running them over raw captures is a backfill.

Design
------
- One visible-text representation for both capture kinds: a list of lines. Text captures are
  split into lines; HTML captures are walked with the standard library's ``html.parser``
  (``htmltext``), gluing inline elements and breaking at blocks, exactly as the page renders, so
  both give the same rows. Links are recorded against the line they sit on, then handed to the
  item that owns the line (``paper_url``, ``arxiv_id``).
- Each site parser (``bzpeer``, ``scholarfeed``) finds the glued item row that opens every item
  (``preprint2026arXiv`` / ``68.9AIMay 14``), reads the header before the first item as the
  profile, and the lines between rows as title / byline / abstract. Regexes are compiled once and
  every step is linear in the page length.
- Field readers (counts with thousands separators and k/M, dates incl. year-less ones, arXiv
  categories and ids, bylines) live in ``fields`` and ``categories``; normalised copies of titles
  and abstracts come from ``pipelines.textnorm``.
- ``parse_capture`` never raises. Reject reasons (stable codes, ``staging.rejects.reason``):

  ``empty``          empty / whitespace-only body, or HTML without visible text
  ``not_text``       undecodable / binary bytes
  ``unknown_site``   neither BZPEER nor Scholar Feed
  ``bot_challenge``  anti-bot interstitial ("Just a moment...", "verify you are human", captcha,
                     "Access denied", rate limiting)
  ``error_page``     a 404/500/"page not found"/"something went wrong" page served as a page
  ``no_profile``     site recognised but no profile name/header (items found are still returned)
  ``truncated_item`` an incomplete item: the page ends mid-item (complete items are kept, the
                     profile gets ``truncated=True``), or an item row without a title; one reject
                     per item, with its 1-based ``position``
  ``duplicate_item`` an item repeating one listed earlier on the same page (same title and year):
                     the first is kept, one reject per repeat, with its ``position``
  ``parse_error``    unexpected exception inside a parser (detail = exception text), or rows that do
                     not fit the staging tables; last resort

- What lands repaired or doubtful is an *issue* (``ParseResult.issues`` → ``staging.quality_issues``),
  one row per value with the raw text kept: a number outside its column's domain
  (``domains``: NULL, or kept on the warning-only site scores), a metric whose value is not a
  number, a names-like line after a title that is not a readable byline (kept as the abstract's
  start), an impossible day (stored at month precision), an item dated after the capture, a
  guessed encoding or replaced bytes, NUL padding dropped. Codes: ``result.ISSUE_REASONS``.

  A page that parses but lists zero items is not a reject. A profile that declares more items
  than it lists (BZPEER "6works", 5 shown) records both facts (``declared_items``,
  ``listed_items``) and is not truncation.

Bump ``PARSER_VERSION`` whenever the rows for some input change; it is stored with the rows.
"""

from __future__ import annotations

PARSER_VERSION = "1.3.0"

from pipelines.staging.parsing.capture import detect_site, parse_capture  # noqa: E402
from pipelines.staging.parsing.decoding import decode_body, decode_report, sniff_content_type  # noqa: E402
from pipelines.staging.parsing.htmltext import html_to_document, html_to_text  # noqa: E402
from pipelines.staging.parsing.result import (  # noqa: E402
    ISSUE_ACTIONS, ISSUE_REASONS, LISTING_KEYS, PROFILE_KEYS, REJECT_REASONS, SOURCE_ISSUE_REASONS, ParseResult,
)

__all__ = [
    "PARSER_VERSION", "ParseResult", "parse_capture", "detect_site", "decode_body", "decode_report",
    "sniff_content_type", "html_to_text", "html_to_document", "REJECT_REASONS", "ISSUE_REASONS", "ISSUE_ACTIONS",
    "SOURCE_ISSUE_REASONS", "PROFILE_KEYS", "LISTING_KEYS",
]

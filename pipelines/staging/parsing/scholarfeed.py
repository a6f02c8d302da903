"""Scholar Feed author pages (www.scholarfeed.org/author/<number>).

Visible layout (text capture)::

    Yucheng Ding                      <- name
    LG                                <- primary category (arXiv suffix)
    h-index39 / 15papers / 108citations / Novelty53% / AI Score57
    15 Papers                         <- list header (declared items)
    68.9AIMay 14                      <- item meta row: [score]<category><date>[Code], glued
    BEAM: Binary Expert ...           <- title
    Juntong Wu, Jialiang Cheng, Qishen Yin et al.   <- byline (<= 3 names, "et al." when more)
    Mixture-of-Experts ...            <- abstract (one or more lines)

Items are found by their meta row; the title is the next line; the byline is the following
line when it reads as a list of names (``fields.parse_byline``); the rest is the abstract. A line
there that is mostly names but not a readable byline stays the abstract's first line, with an
``unreadable_byline`` issue when other items of the page have a byline.
Either byline or abstract may be missing. Year-less dates take the capture's year (or the one
before when that would be in the future). Categories map through ``categories.map_category``.
"""

from __future__ import annotations

import re

from pipelines.staging.parsing.categories import map_category
from pipelines.staging.parsing.fields import (
    DATE, LOOSE_NUMBER, NUMBER, code_urls, looks_like_byline, overlong_metric, parse_byline, parse_count, parse_float,
    read_date,
)
from pipelines.staging.parsing.layout import (
    Page, content_end, item_paper_link, judge_items, name_line, site_signals, split_items,
)
from pipelines.staging.parsing.result import SiteParse, empty_listing, empty_profile, make_issue
from pipelines.textnorm import normalize_text

SITE = "scholarfeed"

_CATEGORY = r"(?:[A-Z]{2}|[a-z]+(?:-[a-z]+)?\.[A-Za-z]{2,}(?:-[a-z]+)?|quant-ph|hep-(?:th|ph|ex|lat)|gr-qc|nucl-(?:th|ex)|math-ph|cond-mat|astro-ph)"
_FLAGS = r"(?:Code|Data|Dataset|PDF|Video|Demo|Slides)"
_FLAG_WORDS = frozenset({"Code", "Data", "Dataset", "PDF", "Video", "Demo", "Slides"})
META = re.compile(
    rf"^(?:(?P<score>\d{{1,3}}(?:\.\d{{1,2}})?)\s?)?(?P<cat>{_CATEGORY})\s?(?P<date>{DATE})\s?(?P<flags>(?:{_FLAGS}\s?)*)$"
)
# What is left of a meta row when the capture stops inside it ("68.9AIMa", "LGMar 18, 20", "DCDec 15, 2025Co"),
# in each date form DATE reads: a month name, ISO ("LG2025-1"), "N units ago" ("LG3 mont", "LGa year a").
_PARTIAL_META = re.compile(
    r"^(?:\d{1,3}(?:\.\d{0,2})?)?(?:[A-Z]{1,2}(?:[A-Z][a-z]{0,8}\.?(?:\s\d{0,2}(?:,(?:\s\d{0,4})?)?)?"
    r"|(?:19|20)\d{0,2}(?:-\d{0,2}(?:-\d{0,2})?)?"
    r"|(?:\d{1,3}|an?)(?:\s?[a-z]{1,7}(?:\s[a-z]{0,3})?)?)?)?"
    r"(?:\s?C(?:o(?:de?)?)?)?$"
)
# An item row whose date is in no form DATE reads ("DC2024/12/10", "DC10.12.2024Code", "DCCode"): the
# item still lands, without a date, and the row is an ``unreadable_value`` issue — but only where the
# lines after it are an item's (a title, then a byline), so text that starts like a row stays text.
_LOOSE_META = re.compile(
    rf"^(?:(?P<score>\d{{1,3}}(?:\.\d{{1,2}})?)\s?)?(?P<cat>{_CATEGORY})(?P<date>(?:[^.!?;:]|\.(?=\d)){{0,30}}?)\s?"
    rf"(?P<flags>(?:{_FLAGS}\s?)*)$"
)
_PRIMARY_CATEGORY = re.compile(rf"^{_CATEGORY}$")
_H_INDEX = re.compile(rf"^h-?index\s?:?\s?(?P<n>{NUMBER})$", re.IGNORECASE)
_PAPERS_METRIC = re.compile(rf"^(?P<n>{NUMBER})\s?papers?$")            # "15papers" (lowercase)
_LIST_HEADER = re.compile(rf"^(?P<n>{NUMBER})\s(?:Papers?|PAPERS?)$")    # "15 Papers"
_CITATIONS = re.compile(rf"^(?P<n>{NUMBER})\s?citations?$", re.IGNORECASE)
_NOVELTY = re.compile(r"^Novelty\s?:?\s?(?P<n>\d+(?:[.,]\d+)?)\s?%$", re.IGNORECASE)
_AI_SCORE = re.compile(r"^AI\s?Score\s?:?\s?(?P<n>\d+(?:[.,]\d+)?)$", re.IGNORECASE)
_METRICS = (_H_INDEX, _PAPERS_METRIC, _CITATIONS, _NOVELTY, _AI_SCORE, _LIST_HEADER)
# A metric line whose value is not a number we read ("-5citations", "h-index1.2.3", "Novelty-3%"):
# the field stays NULL and the line becomes an ``unreadable_value`` issue. A value needs a digit,
# so a site's "h-index—" (no value shown) is not an issue.
_LOOSE_METRICS = (
    ("h_index", re.compile(rf"^h-?index\s?:?\s?{LOOSE_NUMBER}$", re.IGNORECASE)),
    ("citations", re.compile(rf"^{LOOSE_NUMBER}\s?citations?$", re.IGNORECASE)),
    ("declared_papers", re.compile(rf"^{LOOSE_NUMBER}\s?papers?$")),
    ("novelty_pct", re.compile(rf"^Novelty\s?:?\s?{LOOSE_NUMBER}\s?%?$", re.IGNORECASE)),
    ("ai_score", re.compile(rf"^AI\s?Score\s?:?\s?{LOOSE_NUMBER}$", re.IGNORECASE)),
)


_LONG_SUFFIXES = {"citations": "citations", "citation": "citations", "papers": "declared_papers", "paper": "declared_papers"}
_LONG_PREFIXES = {"h-index": "h_index", "hindex": "h_index", "novelty": "novelty_pct", "ai score": "ai_score"}


def is_meta_row(line: str) -> bool:
    return len(line) <= 60 and META.match(line) is not None


def content_signals(lines: list[str]) -> int:
    """How strongly these lines look like a Scholar Feed author page (for site detection)."""
    return site_signals(lines, max_len=60, meta=META, tiers=(
        (2, lambda line: bool(_H_INDEX.match(line) or _NOVELTY.match(line) or _AI_SCORE.match(line)
                              or _LIST_HEADER.match(line))),
        (1, lambda line: bool(_PAPERS_METRIC.match(line) or _CITATIONS.match(line))),
    ), brand=lambda line: "Scholar Feed" in line or "scholarfeed" in line.lower())


def _is_header_noise(line: str) -> bool:
    return (any(rx.match(line) for rx in _METRICS) or bool(_PRIMARY_CATEGORY.match(line))
            or any(rx.match(line) for _, rx in _LOOSE_METRICS))


def parse_profile(lines: list[str], header_end: int, issues: list[dict] | None = None) -> tuple[dict | None, str | None]:
    """Profile columns from the header block (lines before the first item). Metric lines whose
    value cannot be read are appended to ``issues`` (``unreadable_value``)."""
    profile = empty_profile()
    issues = [] if issues is None else issues
    first_anchor: int | None = None
    papers_candidates: list[tuple[int, str, bool]] = []   # (index, number, is list header form)

    def count(key: str, raw: str, line: str) -> int | None:
        value = parse_count(raw)
        if value is None:
            issues.append(make_issue("unreadable_value", key, "nulled", line, f"{key}: {raw!r} is not a count"))
        return value

    for i in range(header_end):
        line = lines[i]
        if len(line) > 60:
            if key := overlong_metric(line, _LONG_SUFFIXES, _LONG_PREFIXES):
                issues.append(make_issue("unreadable_value", key, "nulled", line,
                                         f"{key}: a value of {len(line):,} characters is not a count"))
            continue
        m = _H_INDEX.match(line)
        if m:
            profile["h_index"] = count("h_index", m["n"], line)
        elif m := _PAPERS_METRIC.match(line):
            papers_candidates.append((i, m["n"], False))
        elif m := _LIST_HEADER.match(line):
            papers_candidates.append((i, m["n"], True))
        elif m := _CITATIONS.match(line):
            profile["citations"] = count("citations", m["n"], line)
        elif m := _NOVELTY.match(line):
            profile["novelty_pct"] = parse_float(m["n"])
        elif m := _AI_SCORE.match(line):
            profile["ai_score"] = parse_float(m["n"])
        elif _PRIMARY_CATEGORY.match(line) and first_anchor is None:  # the category line precedes the metrics
            profile["primary_category_raw"] = line
            profile["primary_category"] = map_category(line)
            first_anchor = i
            continue
        else:
            loose = next(((key, lm) for key, rx in _LOOSE_METRICS if (lm := rx.match(line))), None)
            if loose is None:
                continue
            key, lm = loose
            issues.append(make_issue("unreadable_value", key, "nulled", line,
                                     f"{key}: {lm['n']!r} is not a number: stored as NULL"))
        if first_anchor is None:
            first_anchor = i
    metric_forms = [c for c in papers_candidates if not c[2]]
    header_forms = [c for c in papers_candidates if c[2]]
    if metric_forms:
        profile["declared_papers"] = count("declared_papers", metric_forms[0][1], lines[metric_forms[0][0]])
    elif len(header_forms) >= 2:
        profile["declared_papers"] = count("declared_papers", header_forms[0][1], lines[header_forms[0][0]])
    if header_forms:
        profile["declared_items"] = count("declared_items", header_forms[-1][1], lines[header_forms[-1][0]])
    elif len(metric_forms) >= 2:
        profile["declared_items"] = count("declared_items", metric_forms[-1][1], lines[metric_forms[-1][0]])
    if first_anchor is None:
        return None, None
    # An affiliation or a tagline between the name and the category is passed over (name_line).
    name_index = name_line(lines, first_anchor, _is_header_noise)
    if name_index is None:
        return None, None
    profile["name"] = lines[name_index]
    return profile, profile["name"]


def _unreadable_rows(lines: list[str], rows: list[int]) -> list[int]:
    """Lines that are item rows with a date we cannot read (``_LOOSE_META``): not a row's title
    line, a date part holding a digit (or, after the first row, none at all: "DCCode"), and
    followed by a title and a byline."""
    known = set(rows)
    first = rows[0] if rows else len(lines)
    found = []
    for i, line in enumerate(lines):
        if i in known or i - 1 in known or len(line) > 60:
            continue
        m = _LOOSE_META.match(line)
        if m is None:
            continue
        when = m["date"].strip()
        if not (any(c.isdigit() for c in when) or (not when and i > first)):
            continue
        title = i + 1
        while title < len(lines) and lines[title] in _FLAG_WORDS:
            title += 1
        if (title + 1 < len(lines) and title not in known and title + 1 not in known
                and parse_byline(lines[title + 1]) is not None):
            found.append(i)
    return found


class _ItemRow:
    """The item rows' pattern for ``split_items``: ``META``, else ``_LOOSE_META``."""

    @staticmethod
    def match(line: str) -> re.Match | None:
        return META.match(line) if is_meta_row(line) else _LOOSE_META.match(line)


def parse(page: Page) -> SiteParse:
    lines = page.lines
    starts = [i for i, line in enumerate(lines) if is_meta_row(line)]
    starts = sorted(starts + _unreadable_rows(lines, starts))
    header_end = starts[0] if starts else len(lines)
    issues: list[dict] = []
    profile, name = parse_profile(lines, header_end, issues)
    stop = content_end(lines, starts[-1]) if starts else len(lines)
    ends_cleanly = page.ends_cleanly or stop < len(lines)
    items = split_items(page, starts, stop, _ItemRow)

    drafts = [_read_item(item) for item in items]
    # A names-like line the byline reader could not read is only doubted where other items of the
    # page have a byline: on a page without bylines it is just the abstract's first line.
    if not any(d["byline_seen"] for d in drafts):
        for draft in drafts:
            draft["unread_byline"] = None
    listings, rejects, truncated = judge_items(
        items, drafts, lines=lines, ends_cleanly=ends_cleanly, partial_row=_PARTIAL_META,
        build=lambda item, draft: _listing(item, draft, page, issues),
    )
    if profile is not None:
        profile["listed_items"] = len(listings)
        profile["truncated"] = truncated
    return SiteParse(site=SITE, profile=profile, profile_name=name, listings=listings, rejects=rejects,
                     truncated=truncated, issues=issues)


def _read_item(item) -> dict:
    """Title, byline and abstract of one item (a dict the completeness check and _listing share)."""
    content = list(item.content)
    index = list(item.content_index)
    flags = item.meta["flags"] or ""
    # A "Code" badge rendered as its own block instead of glued to the row is a flag, not text.
    while content and content[0] in _FLAG_WORDS:
        flags += content.pop(0)
        index.pop(0)
    title = content[0] if content else None
    title_index = index[0] if index else None
    rest = [line for line in content[1:] if line not in _FLAG_WORDS]
    if len(rest) < len(content) - 1:
        flags += "Code" if "Code" in content[1:] else ""
    byline, byline_truncated, byline_seen, unread_byline = [], False, False, None
    if rest:
        parsed = parse_byline(rest[0])
        if parsed is not None:
            byline, byline_truncated = parsed
            byline_seen = True
            rest = rest[1:]
        elif looks_like_byline(rest[0]):
            unread_byline = rest[0]
    return {
        "title": title, "title_index": title_index, "byline": byline, "byline_truncated": byline_truncated,
        "byline_seen": byline_seen, "unread_byline": unread_byline,
        "abstract": "\n".join(rest) if rest else None, "abstract_lines": rest, "flags": flags,
    }


def _listing(item, draft: dict, page: Page, issues: list[dict]) -> dict:
    meta = item.meta
    groups = meta.groupdict()
    listing = empty_listing(item.position)
    when = read_date(groups, page.captured)
    if meta.re is _LOOSE_META:
        issues.append(make_issue("unreadable_value", "pub_date", "nulled", meta.string,
                                 f"an item row whose date is not in a form we read: {groups['date'].strip()!r}",
                                 item.position))
    if when.pop("impossible_day"):
        issues.append(make_issue("impossible_date", "pub_date", "repaired", groups["date"],
                                 f"no such day: stored as {when['pub_date']:%Y-%m} at month precision", item.position))
    listing.update(when)
    title, abstract = draft["title"], draft["abstract"]
    if draft["unread_byline"] is not None:
        # Kept in the abstract: the line is only probably a byline, and the issue's raw value holds
        # 200 characters, so moving it out could lose abstract text or names. The raw capture is
        # kept, so a better reader gets the authors back by a backfill.
        issues.append(make_issue("unreadable_byline", "byline_authors", "kept", draft["unread_byline"],
                                 "the line after the title reads as names but not as a byline: no byline "
                                 "authors, the line kept as the start of the abstract", item.position))
    paper_url, arxiv_id, arxiv_version = item_paper_link(item, draft["title_index"], title, abstract)
    listing.update(
        title=title,
        title_normalized=normalize_text(title),
        abstract=abstract,
        abstract_normalized=normalize_text(abstract),
        date_raw=groups["date"],
        category=map_category(groups["cat"]),
        category_raw=groups["cat"],
        has_code="Code" in (draft["flags"] or ""),
        listing_score=parse_float(groups["score"]) if groups["score"] else None,
        byline_authors=draft["byline"],
        byline_truncated=draft["byline_truncated"],
        arxiv_id=arxiv_id,
        arxiv_version=arxiv_version,
        paper_url=paper_url,
        code_urls=code_urls(abstract),
    )
    return listing

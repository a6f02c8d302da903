"""BZPEER researcher pages (www.bzpeer.com/authors/<slug>).

Visible layout (text capture)::

    Researcher profile
    Daning Cheng                                          <- name
    Daning Cheng contributes to research discovery ...    <- bio
    ResearcherAffiliation not importedOpen to collaborate <- role + affiliation + collaboration state, glued
    Trust 21 - EmergingVerification L1Unclaimed author    <- trust score, tier, level, claim state, glued
    6works / 0followers / 4topics / 4close collaborators
    ... calls to action, graph teaser (boilerplate) ...
    6 published item(s)                                   <- list header (declared items)
    preprint2026arXiv                                     <- item row: <type><year><venue>, glued
    A Qualitative Test-Risk Mechanism ...                 <- title
    The scaling behavior, in which ...                    <- abstract (one or more lines)

BZPEER shows no author lists (the profile owner is the author): ``byline_authors`` is empty.
Dates are years only (``date_precision='year'``). Work pages are ``/works/<title-slug>-<id>``.
"""

from __future__ import annotations

import re

from pipelines.staging.parsing.fields import (
    LOOSE_NUMBER, NUMBER, code_urls, is_footer, is_ui_label, overlong_metric, parse_count,
)
from pipelines.staging.parsing.layout import (
    Page, content_end, item_paper_link, judge_items, looks_like_person_name, name_line, site_signals, split_items,
)
from pipelines.staging.parsing.result import SiteParse, empty_listing, empty_profile, make_issue
from pipelines.textnorm import normalize_text

SITE = "bzpeer"

META = re.compile(
    r"^(?P<type>[a-z][a-z_-]{1,29}(?:\s[a-z][a-z_-]{1,29}){0,2})\s?(?P<year>(?:1[89]|20|21)\d{2})\s?(?P<venue>[\w(\[].{0,150})?$"
)
# What is left of an item row when the capture stops inside it ("prep", "preprint20").
_PARTIAL_META = re.compile(r"^[a-z][a-z_-]{0,29}\s?(?:1|19|20|1[89]\d|2[01]\d)?$")
_LIST_HEADER = re.compile(
    rf"^(?P<n>{NUMBER})\s(?:published\s(?:items?|works?|papers?)|items?)(?:\s?\(s\))?$", re.IGNORECASE
)
_NO_ITEMS = re.compile(r"^no (?:published )?(?:items|works|publications)\b", re.IGNORECASE)
_PROFILE_LABEL = re.compile(r"^researcher profile$", re.IGNORECASE)
_TRUST = re.compile(
    r"^Trust\s?(?:score\s?)?:?\s?(?P<score>\d+)(?:\s?[-–—:·|]\s?(?P<tier>[A-Z][A-Za-z]*(?:\s[A-Z][A-Za-z]*)*?))?"
    r"\s?(?=Verification|Unclaimed|Claimed|$)"
)
_VERIFICATION = re.compile(
    r"Verification\s?(?:level\s?)?:?\s?(?P<level>L\s?\d+|Level\s?\d+|\d+|[A-Z][a-z]+?)(?=Unclaimed|Claimed|\s|$)"
)
_CLAIM = re.compile(r"(?<![A-Za-z])(?P<claim>Unclaimed|Claimed)(?![a-z])")
_CLAIM_LINE = re.compile(r"^(?P<claim>Unclaimed|Claimed)(?:\s(?:author|profile|by\b.*))?$")
_COUNTS = {
    "declared_works": re.compile(rf"^(?P<n>{NUMBER})\s?works?$", re.IGNORECASE),
    "followers": re.compile(rf"^(?P<n>{NUMBER})\s?followers?$", re.IGNORECASE),
    "topics": re.compile(rf"^(?P<n>{NUMBER})\s?topics?$", re.IGNORECASE),
    "close_collaborators": re.compile(rf"^(?P<n>{NUMBER})\s?close\scollaborators?$", re.IGNORECASE),
}
# A count line whose value is not a number we read ("-5works", "1.2.3followers"): NULL + an issue.
_LOOSE_COUNTS = {
    "declared_works": re.compile(rf"^{LOOSE_NUMBER}\s?works?$", re.IGNORECASE),
    "followers": re.compile(rf"^{LOOSE_NUMBER}\s?followers?$", re.IGNORECASE),
    "topics": re.compile(rf"^{LOOSE_NUMBER}\s?topics?$", re.IGNORECASE),
    "close_collaborators": re.compile(rf"^{LOOSE_NUMBER}\s?close\scollaborators?$", re.IGNORECASE),
}
_LONG_SUFFIXES = {"works": "declared_works", "work": "declared_works", "followers": "followers",
                  "follower": "followers", "topics": "topics", "topic": "topics",
                  "close collaborators": "close_collaborators", "close collaborator": "close_collaborators"}
_ROLE_PREFIX = re.compile(
    r"^(?P<role>Independent Researcher|Postdoctoral Researcher|Research Scientist|Assistant Professor"
    r"|Associate Professor|PhD Student|Researcher|Scientist|Professor|Lecturer|Student|Postdoc|Engineer)"
    r"(?=[A-Z]|\s?[·|•,-]|$)"
)
_COLLAB_SUFFIX = re.compile(
    r"(?P<collab>(?:Open|Not open|Closed) (?:to|for) collaborat\w*|Not accepting collaborat\w*)$", re.IGNORECASE
)
_NO_AFFILIATION = re.compile(r"affiliation not (?:imported|available|set)|no affiliation", re.IGNORECASE)
_HEADER_LABELS = frozenset({
    "researcher profile", "trust snapshot", "quick read", "actions", "published work", "research graph",
    "identity and collaboration", "direct collaboration",
})


def is_meta_row(line: str) -> bool:
    return len(line) <= 160 and META.match(line) is not None


def content_signals(lines: list[str]) -> int:
    """How strongly these lines look like a BZPEER researcher page (for site detection)."""
    return site_signals(lines, max_len=160, meta=META, tiers=(
        (2, lambda line: bool(_PROFILE_LABEL.match(line) or _TRUST.match(line))),
        (3, lambda line: bool(_LIST_HEADER.match(line)) and "published" in line.lower()),
        (1, lambda line: any(rx.match(line) for rx in _COUNTS.values())),
    ), brand=lambda line: "BZPEER" in line or "bzpeer" in line)


def _is_role_line(line: str) -> bool:
    return bool(_NO_AFFILIATION.search(line) or _COLLAB_SUFFIX.search(line) or _ROLE_PREFIX.match(line))


def _is_structure(line: str) -> bool:
    """A header line that is a metric, label or state, i.e. never the name or the bio."""
    return bool(
        line.lower() in _HEADER_LABELS or _TRUST.match(line) or _LIST_HEADER.match(line) or _is_role_line(line)
        or _CLAIM_LINE.match(line) or any(rx.match(line) for rx in _COUNTS.values())
        or any(rx.match(line) for rx in _LOOSE_COUNTS.values())
    )


def _affiliation(line: str) -> str | None:
    text = line
    m = _ROLE_PREFIX.match(text)
    if m:
        text = text[m.end():]
    m = _COLLAB_SUFFIX.search(text)
    if m:
        text = text[: m.start()]
    text = text.strip(" ·|•,-–")
    if not text or _NO_AFFILIATION.search(text):
        return None
    return text


def parse_profile(lines: list[str], header_end: int, issues: list[dict] | None = None) -> tuple[dict | None, str | None]:
    """Profile columns from the header block (lines before ``header_end``). Count lines whose value
    cannot be read are appended to ``issues`` (``unreadable_value``)."""
    profile = empty_profile()
    issues = [] if issues is None else issues
    label_index, first_anchor = _read_header(lines, header_end, profile, issues)
    if label_index is None and first_anchor is None:
        return None, None
    name_index = _name_index(lines, header_end, label_index, first_anchor)
    if name_index is None:
        return None, None
    profile["name"] = lines[name_index]

    for i in range(name_index + 1, header_end):
        line = lines[i]
        if is_ui_label(line) or is_footer(line):
            continue
        if _is_structure(line):
            break
        profile["bio"] = line
        break
    for i in range(name_index + 1, header_end):
        if _is_role_line(lines[i]) and len(lines[i]) <= 200:
            profile["affiliation"] = _affiliation(lines[i])
            break
    return profile, profile["name"]


def _read_header(lines: list[str], header_end: int, profile: dict, issues: list[dict]) -> tuple[int | None, int | None]:
    """Fill ``profile``'s metrics from the header's metric lines (trust, counts, claim, declared
    items); returns the index of the "Researcher profile" label and of the first metric or role
    line (None when absent)."""
    def count(key: str, raw: str, line: str) -> int | None:
        value = parse_count(raw)
        if value is None:
            issues.append(make_issue("unreadable_value", key, "nulled", line, f"{key}: {raw!r} is not a count"))
        return value

    label_index = first_anchor = None
    trust_line = None
    for i in range(header_end):
        line = lines[i]
        if len(line) > 160:
            if key := overlong_metric(line, _LONG_SUFFIXES):
                issues.append(make_issue("unreadable_value", key, "nulled", line,
                                         f"{key}: a value of {len(line):,} characters is not a count"))
            continue
        if _PROFILE_LABEL.match(line):
            label_index = label_index if label_index is not None else i
            continue
        if m := _TRUST.match(line):
            if trust_line is None:
                trust_line = line
                _read_trust(m, line, profile)
        elif m := _LIST_HEADER.match(line):
            profile["declared_items"] = count("declared_items", m["n"], line)
        elif _NO_ITEMS.match(line):
            profile["declared_items"] = 0
        elif m := _CLAIM_LINE.match(line):
            if profile["claimed"] is None:
                profile["claimed"] = m["claim"] == "Claimed"
        else:
            for key, rx in _COUNTS.items():
                if (m := rx.match(line)) and profile[key] is None:
                    profile[key] = count(key, m["n"], line)
                    break
            else:
                loose = next(((key, lm) for key, rx in _LOOSE_COUNTS.items() if (lm := rx.match(line))), None)
                if loose is not None and not any(rx.match(line) for rx in _COUNTS.values()):
                    key, lm = loose
                    issues.append(make_issue("unreadable_value", key, "nulled", line,
                                             f"{key}: {lm['n']!r} is not a number: stored as NULL"))
                elif not _is_role_line(line):
                    continue
        if first_anchor is None:
            first_anchor = i
    return label_index, first_anchor


def _read_trust(m: re.Match, line: str, profile: dict) -> None:
    """The trust line: score and tier, the verification level and the claim state it may carry."""
    profile["trust_score"] = int(m["score"])
    profile["trust_tier"] = m["tier"]
    if v := _VERIFICATION.search(line):
        level = v["level"].replace(" ", "")
        profile["verification_level"] = f"L{level[5:]}" if level.startswith("Level") else level
    if c := _CLAIM.search(line, m.end()):
        profile["claimed"] = c["claim"] == "Claimed"


def _name_index(lines: list[str], header_end: int, label_index: int | None, first_anchor: int | None) -> int | None:
    """The name's line: the line after the "Researcher profile" label when it reads as a name, else
    the name above the bio/anchor (``name_line``: a bio or tagline is passed over), never above the
    label."""
    if label_index is not None:
        for i in range(label_index + 1, header_end):
            if is_ui_label(lines[i]) or is_footer(lines[i]):
                continue
            if not _is_structure(lines[i]) and looks_like_person_name(lines[i]):
                return i
            break
    if first_anchor is None:
        return None
    return name_line(lines, first_anchor, _is_structure, floor=0 if label_index is None else label_index + 1)


def find_list_header(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if len(line) <= 60 and (_LIST_HEADER.match(line) or _NO_ITEMS.match(line)):
            return i
    return None


def parse(page: Page) -> SiteParse:
    lines = page.lines
    # Items follow the list header; without one, they start at the first item row.
    list_header = find_list_header(lines)
    items_from = list_header + 1 if list_header is not None else 0
    starts = [i for i in range(items_from, len(lines)) if is_meta_row(lines[i])]
    header_end = items_from if list_header is not None else (starts[0] if starts else len(lines))
    issues: list[dict] = []
    profile, name = parse_profile(lines, header_end, issues)
    stop = content_end(lines, starts[-1]) if starts else len(lines)
    ends_cleanly = page.ends_cleanly or stop < len(lines)
    items = split_items(page, starts, stop, META)

    drafts = []
    for item in items:
        content = item.content
        drafts.append({
            "title": content[0] if content else None,
            "title_index": item.content_index[0] if content else None,
            "abstract_lines": content[1:],
            "abstract": "\n".join(content[1:]) if len(content) > 1 else None,
            "byline_seen": False,
        })
    listings, rejects, truncated = judge_items(
        items, drafts, lines=lines, ends_cleanly=ends_cleanly, partial_row=_PARTIAL_META, build=_listing,
    )
    if profile is not None:
        profile["listed_items"] = len(listings)
        profile["truncated"] = truncated
    return SiteParse(site=SITE, profile=profile, profile_name=name, listings=listings, rejects=rejects,
                     truncated=truncated, issues=issues)


def _listing(item, draft: dict) -> dict:
    meta = item.meta
    title, abstract = draft["title"], draft["abstract"]
    listing = empty_listing(item.position)
    paper_url, arxiv_id, arxiv_version = item_paper_link(item, draft["title_index"], title, abstract)
    venue = (meta["venue"] or "").strip() or None
    listing.update(
        title=title,
        title_normalized=normalize_text(title),
        abstract=abstract,
        abstract_normalized=normalize_text(abstract),
        pub_type=meta["type"],
        venue=venue,
        year=int(meta["year"]),
        pub_date=None,
        date_precision="year",
        date_raw=meta["year"],
        year_inferred=False,
        has_code=None,
        arxiv_id=arxiv_id,
        arxiv_version=arxiv_version,
        paper_url=paper_url,
        code_urls=code_urls(abstract),
    )
    return listing

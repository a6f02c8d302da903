"""The page as both site parsers see it: visible lines (+ links by line), split into items.

A site parser finds its item rows (the glued meta row that opens every item), and this module
cuts the page into a header (before the first item) and item blocks, drops navigation/footer
lines, hands each item its links, and judges whether an item is complete.

Completeness (the ``truncated_item`` reject) is decided from the text alone, because a capture
cut mid-item carries no marker:
- an item without a title is incomplete wherever it is;
- the *last* item, when the page does not end cleanly (no footer after it, HTML not closed), is
  incomplete if it stops before the abstract while the other items have one (or, on Scholar Feed,
  before the byline while the others have one), or if its abstract stops mid-sentence
  (``fields.ends_open``: last character a letter/digit/comma…, a trailing URL counts as an end).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from datetime import date

from pipelines.staging.parsing.fields import (
    NAME_PARTICLES, arxiv_from_link, arxiv_from_text, ends_like_a_name, ends_open, is_footer, is_paper_link,
    is_ui_label,
)
from pipelines.staging.parsing.result import make_reject



@dataclass
class Page:
    lines: list[str]                       # visible, whitespace-collapsed, non-empty lines
    links: list[tuple[int, str]]           # (line index, absolute URL), sorted by line
    ends_cleanly: bool                     # HTML closed: the capture was not cut
    captured: date


@dataclass
class Item:
    position: int                          # 1-based, counts every item row incl. incomplete ones
    meta_index: int
    meta: re.Match
    content: list[str]                     # lines after the meta row, controls/labels dropped
    content_index: list[int]               # their line indexes
    links: list[tuple[int, str]] = field(default_factory=list)
    is_last: bool = False


def text_lines(text: str) -> list[str]:
    """Split plain text into the same lines the HTML walker produces (collapsed, non-empty)."""
    out = []
    for raw in text.splitlines():
        line = " ".join(raw.split())  # str.split() collapses any Unicode whitespace, in C
        if line:
            out.append(line)
    return out


def content_end(lines: list[str], last_start: int) -> int:
    """Index where the page's content stops: the first footer line after the last item row."""
    for i in range(last_start + 1, len(lines)):
        if is_footer(lines[i]):
            return i
    return len(lines)


def split_items(page: Page, starts: list[int], stop: int, meta_pattern: re.Pattern) -> list[Item]:
    """One Item per meta row in ``starts`` (sorted), content up to the next row or ``stop``."""
    items: list[Item] = []
    link_lines = [line for line, _ in page.links]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else stop
        content, content_index = [], []
        for i in range(start + 1, end):
            line = page.lines[i]
            if is_ui_label(line) or is_footer(line):
                continue
            content.append(line)
            content_index.append(i)
        lo = bisect.bisect_left(link_lines, start)
        hi = bisect.bisect_left(link_lines, end)
        items.append(Item(position=n + 1, meta_index=start, meta=meta_pattern.match(page.lines[start]),
                          content=content, content_index=content_index, links=page.links[lo:hi]))
    if items:
        items[-1].is_last = True
    return items


def incomplete_reason(
    *, title: str | None, abstract: str | None, byline_seen: bool, is_last: bool, ends_cleanly: bool,
    others_have_abstract: bool, others_have_byline: bool,
) -> str | None:
    """Why an item is incomplete (see the module docstring), or None when it is complete."""
    if not title:
        return "the item has no title" + ("" if is_last else " (mid-page)")
    if not is_last or ends_cleanly:
        return None
    if abstract is None:
        if others_have_abstract:
            return "the page ends before this item's abstract"
        if not byline_seen and others_have_byline:
            return "the page ends before this item's byline"
        return None
    if ends_open(abstract):
        return "the page ends inside this item's abstract"
    return None


def judge_items(
    items: list[Item], drafts: list[dict], *, lines: list[str], ends_cleanly: bool, partial_row: re.Pattern, build,
) -> tuple[list[dict], list[dict], bool]:
    """Complete items -> listings (via ``build(item, draft)``), incomplete ones -> truncated_item rejects.

    ``drafts`` hold each item's ``title``, ``abstract`` (joined), ``abstract_lines`` and
    ``byline_seen``. Returns (listings, rejects, truncated) where truncated means the page ends mid-item.
    """
    trailing_partial = None
    if drafts and not ends_cleanly:
        tail = drafts[-1]["abstract_lines"]
        # The capture stopped inside the next item's row ("prepr", "68.9AIMa"): not abstract text.
        if len(tail) >= 2 and len(tail[-1]) <= 40 and partial_row.match(tail[-1]):
            trailing_partial = tail.pop()
            drafts[-1]["abstract"] = "\n".join(tail)
    has_abstract = [d["abstract"] is not None for d in drafts]
    has_byline = [d["byline_seen"] for d in drafts]
    n_abstract, n_byline = sum(has_abstract), sum(has_byline)
    listings: list[dict] = []
    rejects: list[dict] = []
    truncated = trailing_partial is not None
    for k, (item, draft) in enumerate(zip(items, drafts)):
        is_last = item.is_last and trailing_partial is None
        reason = incomplete_reason(
            title=draft["title"], abstract=draft["abstract"], byline_seen=draft["byline_seen"],
            is_last=is_last, ends_cleanly=ends_cleanly,
            others_have_abstract=n_abstract - has_abstract[k] > 0,
            others_have_byline=n_byline - has_byline[k] > 0,
        )
        if reason:
            truncated = truncated or is_last
            rejects.append(make_reject("truncated_item", f"{reason}: {lines[item.meta_index]!r}", item.position))
        else:
            listings.append(build(item, draft))
    if trailing_partial is not None:
        rejects.append(make_reject("truncated_item", f"the page ends inside an item row: {trailing_partial!r}",
                                   len(items) + 1))
    return listings, rejects, truncated


def pick_paper_link(item: Item, title_index: int | None, is_paper_link) -> str | None:
    """The item's link: a paper-page link (preferring one on the title line), else the title's link."""
    on_title = [url for line, url in item.links if line == title_index]
    for url in on_title:
        if is_paper_link(url):
            return url
    for _, url in item.links:
        if is_paper_link(url):
            return url
    return on_title[0] if on_title else None


def item_paper_link(item: Item, title_index: int | None, title: str,
                    abstract: str | None) -> tuple[str | None, str | None, int | None]:
    """The item's paper link (``pick_paper_link``) and its arXiv id and version: from that link, else
    the first of the item's links that carries one, else its title and abstract."""
    paper_url = pick_paper_link(item, title_index, is_paper_link)
    arxiv_id, arxiv_version = arxiv_from_link(paper_url) if paper_url else (None, None)
    if arxiv_id is None:
        for _, url in item.links:
            arxiv_id, arxiv_version = arxiv_from_link(url)
            if arxiv_id:
                break
    if arxiv_id is None:
        arxiv_id, arxiv_version = arxiv_from_text(f"{title}\n{abstract or ''}")
    return paper_url, arxiv_id, arxiv_version


_SITE_NAMES = frozenset({"bzpeer", "scholar feed", "scholarfeed"})
_AFFILIATION_WORDS = re.compile(
    r"\b(?:universit\w*|institut\w*|college|school|academy|laborator\w*|lab|labs|department|dept|faculty"
    r"|centre|center|hospital|inc|ltd|corp\w*|gmbh|research|technolog\w*|polytechnic)\b",
    re.IGNORECASE,
)


def looks_like_affiliation(line: str) -> bool:
    return bool(_AFFILIATION_WORDS.search(line))


def nearest_name_line(lines: list[str], before: int, skip, floor: int = 0) -> int | None:
    """Index of the closest line before ``before`` (and at or after ``floor``) that is not
    navigation, the site's name, nor matched by ``skip``."""
    for i in range(before - 1, floor - 1, -1):
        line = lines[i]
        if is_ui_label(line) or is_footer(line) or line.lower() in _SITE_NAMES or skip(line):
            continue
        return i
    return None


# Lower-case words a tagline or bio has and a name has not ("Efficient training for LLMs",
# "works on the theory of ..."). Name particles ("de", "van", "y", Catalan "i") are not among them.
_FUNCTION_WORDS = frozenset(
    "a an the and or of for in on at to from with by via into onto over under about across toward towards"
    " through using based is are was were be been we our my you your its their this that these those"
    " how what why who which not".split()
)
# Headline words: a line naming a role or a field reads as the person's headline, not their name.
_HEADLINE_WORDS = re.compile(
    r"\b(?:researchers?|professor|student|scientist|engineer|lecturer|postdoc\w*|candidate|phd|developer"
    r"|scholar|director|founder|enthusiast|learning|intelligence|profile|author|authors)\b",
    re.IGNORECASE,
)
_MAX_NAME_WORDS = 6       # more words than this (particles aside) read as a headline
_NAME_LOOKBACK = 3        # lines examined upwards for the name when the closest is a headline


def _lowercase_words(words: list[str]) -> list[str]:
    return [w for w in words if w[0].islower() and w.lower() not in NAME_PARTICLES]


def looks_like_sentence(line: str) -> bool:
    """A tagline or bio: a lower-case function word ("for", "the"), or three words or more, most
    of them lower case."""
    words = [w for w in line.split() if any(ch.isalpha() for ch in w)]
    lower = _lowercase_words(words)
    if any(w.strip(".,;:!?()\"'") in _FUNCTION_WORDS for w in lower):
        return True
    return len(words) >= 3 and 2 * len(lower) > len(words)


def _name_shaped(line: str) -> bool:
    """Short, has letters, does not end as a sentence does. A final period is a name's only when it
    closes an initial or a suffix ("Smith J.", "Robert Smith Jr.")."""
    if not line or len(line) > 120 or line.endswith(("!", "?", ":")) or not ends_like_a_name(line):
        return False
    return len(line.split()) <= 12 and any(ch.isalpha() for ch in line)


def looks_like_person_name(line: str) -> bool:
    """A profile name: name-shaped (``_name_shaped``) and not a sentence."""
    return _name_shaped(line) and not looks_like_sentence(line)


def _reads_as_headline(line: str) -> bool:
    words = line.split()
    return (looks_like_affiliation(line) or bool(_HEADLINE_WORDS.search(line))
            or len(words) - sum(w.lower() in NAME_PARTICLES for w in words) > _MAX_NAME_WORDS)


def name_line(lines: list[str], before: int, skip, floor: int = 0) -> int | None:
    """The profile name's line above ``before``: among the few closest lines (``nearest_name_line``),
    the first that reads as a person's name and not as a headline (an affiliation, a role, a field,
    many words); else the first that reads as a name at all; else the closest name-shaped line even
    if it reads as a sentence ("juan carlos niebles", "Jane Doe – PhD in Physics": a page is never
    lost for the way its name is written); None when none is. So a tagline or bio between the name
    and the metrics ("Efficient distributed training for LLMs") is passed over for the name above it."""
    headline = shaped = None
    i = nearest_name_line(lines, before, skip, floor)
    for _ in range(_NAME_LOOKBACK):
        if i is None:
            break
        if looks_like_person_name(lines[i]):
            if not _reads_as_headline(lines[i]):
                return i
            headline = i if headline is None else headline
        elif shaped is None and _name_shaped(lines[i]):
            shaped = i
        i = nearest_name_line(lines, i, skip, floor)
    return headline if headline is not None else shaped


def site_signals(lines: list[str], *, max_len: int, tiers, meta: re.Pattern, brand) -> int:
    """How strongly ``lines`` look like one site's page (for site detection): per line of at most
    ``max_len`` characters, the points of the first of ``tiers`` (``(points, test)``) it passes, else
    a point for each of the first three item rows (``meta``); and a point for every line naming the
    site (``brand``)."""
    score = 0
    metas = 0
    for line in lines:
        if len(line) > max_len:
            continue
        for points, test in tiers:
            if test(line):
                score += points
                break
        else:
            if metas < 3 and meta.match(line):
                metas += 1
                score += 1
        if brand(line):
            score += 1
    return score

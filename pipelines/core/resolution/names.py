"""Person names: parsing, blocking keys and the compatibility test used by both matchers.

A byline name is read into a family name and a list of given-name parts, each part either a
full word or an initial. Different forms of one person's name are *compatible* when some
reading of each puts the same family name next to given names that agree part by part:

- initials against full words: ``Y. Zhang`` ~ ``Yunquan Zhang``, ``J.-H. Lu`` ~ ``Jun-Hui Lu``;
- spacing and hyphens inside given names: ``Jun-Hui`` ~ ``Junhui`` ~ ``Jun Hui``;
- diacritics and case: ``Jörg`` ~ ``Jorg``;
- a missing middle name: ``Kenneth A. Ross`` ~ ``Kenneth Ross`` (but not ``Kenneth B. Ross``);
- family-first order, common for Chinese, Korean and Japanese names: ``Zhang Yunquan``;
- ``Family, Given`` with a comma, and Scholar-style glued initials ``JC Freytag``.

Compatibility is necessary, never sufficient: ``Yuchen Zhang`` and ``Yunquan Zhang`` are not
compatible (different full given names), ``Daning Chen`` and ``Daning Cheng`` are not either
(different family names); two compatible or even identical names still need shared evidence
before the author matcher merges them. Those rules live in ``authors.py``.

Everything here is pure string logic with a small cache; it runs once per distinct name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from pipelines.textnorm import fold_unicode

# Lower-case particles that belong to the family name ("van der Berg", "de la Cruz").
_PARTICLES = frozenset(
    "van von der den de del della di da dos das du le la lo ten ter bin ibn al el st".split()
)
_SUFFIXES = frozenset("jr sr ii iii iv phd md".split())
# Bylines end with these when the list was cut ("et al."), or carry placeholders.
_NOT_A_NAME = re.compile(r"^(et\.? ?al\.?|others|and others|\.\.\.|…)$", re.IGNORECASE)
_NAME_CHARS = re.compile(r"[^\w\s,\-'.]|[\d_]")
_NON_LETTERS = re.compile(r"[\W\d_]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class GivenPart:
    """One given-name part: ``text`` is the folded word (``"junhui"``) or a single letter.

    ``initials`` are the letters it stands for: ``Jun-Hui`` gives ``("j", "h")`` so that it
    matches both ``J. Lu`` and ``J.-H. Lu``.
    """

    text: str
    is_initial: bool
    initials: tuple[str, ...]


@dataclass(frozen=True)
class NameReading:
    """One way of reading a name: family name plus given-name parts in order."""

    family: str
    given: tuple[GivenPart, ...]

    @property
    def key(self) -> str:
        """Blocking key: family name and first given initial (``zhang y``)."""
        first = self.given[0].initials[0] if self.given else ""
        return f"{self.family} {first}".strip()

    @property
    def first_initial(self) -> str:
        return self.given[0].initials[0] if self.given else ""


@dataclass(frozen=True)
class ParsedName:
    """A parsed name: its folded display form and every plausible reading (most likely first)."""

    folded: str
    readings: tuple[NameReading, ...]

    @property
    def primary(self) -> NameReading | None:
        return self.readings[0] if self.readings else None

    @property
    def keys(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for reading in self.readings:
            seen.setdefault(reading.key, None)
        return tuple(seen)

    @property
    def has_full_given(self) -> bool:
        reading = self.primary
        return bool(reading and any(not part.is_initial for part in reading.given))


def _given_part(raw: str, glued_initials: bool) -> list[GivenPart]:
    """Turn one given-name token into parts: ``jc`` (glued initials) -> j, c; ``jun-hui`` -> one part."""
    token = raw.strip(".-'")
    if not token:
        return []
    if glued_initials:
        return [GivenPart(ch, True, (ch,)) for ch in token if ch.isalpha()]
    pieces = [p for p in re.split(r"[.\-']+", token) if p]
    if not pieces:
        return []
    if all(len(p) == 1 for p in pieces):
        # "J.-H." or "J.H." — a run of initials.
        return [GivenPart(p, True, (p,)) for p in pieces]
    # "Jun-Hui": one part, but each syllable gives an initial so "J.-H." agrees with it.
    return [GivenPart("".join(pieces), False, tuple(p[0] for p in pieces))]


def _split_tokens(raw: str) -> tuple[list[str], list[str]] | None:
    """Return (original-case tokens, lower-case tokens) of a cleaned name, family-last order."""
    text = raw if raw.isascii() else fold_unicode(raw)  # NFKC and mark-stripping leave ASCII as is
    text = _NAME_CHARS.sub(" ", text)
    text = _SPACES.sub(" ", text).strip(" ,")
    if not text or _NOT_A_NAME.match(text):
        return None
    if text.count(",") == 1:
        family, given = (part.strip() for part in text.split(","))
        if family and given:
            if given.lower().strip(".") in _SUFFIXES:
                text = family
            else:
                text = f"{given} {family}"
        else:
            text = family or given
    text = text.replace(",", " ")
    # "J.Smith" / "J.-H.Lu": a period glued to the next word separates tokens.
    text = re.sub(r"\.(?=[A-Za-z]{2})", ". ", text)
    tokens = [t for t in _SPACES.split(text) if t.strip(".-'")]
    tokens = [t for t in tokens if t.lower().strip(".") not in _SUFFIXES] or tokens
    if not tokens:
        return None
    return tokens, [t.lower() for t in tokens]


def _is_glued_initials(token: str) -> bool:
    """Scholar writes given names as glued capitals: ``JC`` in ``JC Freytag``, ``HV`` in ``HV Jagadish``."""
    core = token.strip(".")
    return 2 <= len(core) <= 3 and core.isalpha() and core.isupper()


@lru_cache(maxsize=500_000)
def parse_name(raw: str | None) -> ParsedName:
    """Parse a byline name into readings. Unparseable input gives a name with no readings."""
    if not raw or not raw.strip():
        return ParsedName("", ())
    split = _split_tokens(raw)
    if split is None:
        return ParsedName("", ())
    orig, low = split
    folded = " ".join(t.strip(".") for t in low)
    if len(low) == 1:
        family = _NON_LETTERS.sub("", low[0])
        return ParsedName(folded, (NameReading(family, ()),) if family else ())

    # Family name: the last token, plus any particles before it ("van der berg").
    start = len(low) - 1
    while start > 1 and low[start - 1] in _PARTICLES:
        start -= 1
    family = _NON_LETTERS.sub("", "".join(low[start:]))
    all_caps = all(t.strip(".-").isupper() for t in orig if t.strip(".-"))
    given: list[GivenPart] = []
    for o, t in zip(orig[:start], low[:start]):
        given.extend(_given_part(t, glued_initials=_is_glued_initials(o) and not all_caps))
    readings = [NameReading(family, tuple(given))] if family else []

    # Family-first order ("Zhang Yunquan", "ZHANG Yunquan"): two full words can be read either way.
    full_words = [t for t in low if any(len(p) > 1 for p in re.split(r"[.\-']+", t))]
    if len(low) == 2 and len(full_words) == 2 and not _is_glued_initials(orig[0]):
        alt_family = _NON_LETTERS.sub("", low[0])
        alt_given = _given_part(low[1], glued_initials=False)
        alt = NameReading(alt_family, tuple(alt_given))
        if alt_family and alt not in readings:
            readings.append(alt)
    return ParsedName(folded, tuple(readings))


def _given_compatible(a: tuple[GivenPart, ...], b: tuple[GivenPart, ...]) -> int:
    """0 = incompatible; 1 = compatible through initials or a missing part; 2 = same full given names."""
    if not a or not b:
        return 1  # a bare family name says nothing against
    a_full = all(not p.is_initial for p in a)
    b_full = all(not p.is_initial for p in b)
    if a_full and b_full:
        a_join, b_join = "".join(p.text for p in a), "".join(p.text for p in b)
        if a_join == b_join:
            return 2  # "Jun-Hui" / "Junhui" / "Jun Hui"
        # A dropped middle name: "Kenneth Alan Ross" / "Kenneth Ross".
        short, long_ = (a, b) if len(a) < len(b) else (b, a)
        if short[0].text == long_[0].text and all(p.text in {q.text for q in long_[1:]} for p in short[1:]):
            return 1
        return 0
    # Mixed: compare letter by letter, full words must agree where both sides have one.
    a_letters = [(i, p) for p in a for i in p.initials]
    b_letters = [(i, p) for p in b for i in p.initials]
    if a_letters[0][0] != b_letters[0][0]:
        return 0
    if not a[0].is_initial and not b[0].is_initial and a[0].text != b[0].text:
        return 0
    for (ia, _), (ib, _) in zip(a_letters, b_letters):
        if ia != ib:
            return 0
    return 1


def name_compatibility(left: str | None, right: str | None) -> int:
    """How well two name strings can denote one person: 0 no, 1 through initials/partial forms, 2 same full name.

    Name forms only: a 2 is not evidence of identity, a 0 is evidence against.
    """
    left, right = left or "", right or ""
    # Symmetric: one cache entry per unordered pair.
    return _compat_cached(left, right) if left <= right else _compat_cached(right, left)


def name_levels(left: Iterable[str], right: Iterable[str]) -> tuple[int, int]:
    """(worst, best) :func:`name_compatibility` over every pair of non-empty names of two
    clusters, or (0, 0) when there is none. Stops at the first incompatible pair, so ``best`` only
    means anything when ``worst`` > 0."""
    worst, best = 2, 0
    right = list(right)
    for x in left:
        for y in right:
            level = _compat_cached(x, y) if x <= y else _compat_cached(y, x)
            if level == 0:
                return 0, best
            if level < worst:
                worst = level
            if level > best:
                best = level
    return (worst, best) if best else (0, 0)


@lru_cache(maxsize=1_000_000)
def _compat_cached(left: str, right: str) -> int:
    a, b = parse_name(left), parse_name(right)
    best = 0
    for ra in a.readings:
        for rb in b.readings:
            if ra.family != rb.family:
                continue
            best = max(best, _given_compatible(ra.given, rb.given))
            if best == 2:
                return 2
    return best


def full_form(parsed: ParsedName) -> str | None:
    """``"yunquan zhang"`` for a name with a full given name (hyphens and spacing dropped), else None."""
    reading = parsed.primary
    if reading is None or not parsed.has_full_given:
        return None
    return f"{''.join(p.text for p in reading.given)} {reading.family}"


@lru_cache(maxsize=500_000)
def name_forms(raw: str | None) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(primary key, full form, all keys) of a raw name, cached: the hot path of author matching."""
    parsed = parse_name(raw)
    return (parsed.primary.key if parsed.primary else None, full_form(parsed), parsed.keys)


def split_author_list(text: str | None) -> list[str]:
    """Split a free-text author list ("A. Blum, M. Furst, and R. J. Lipton") into names.

    Handles ``,`` / ``;`` / `` and `` / ``&`` separators and the ``Family, G.`` form where a comma
    separates family name and initials (``Brodley, C. E. & Utgoff, P. E.``).
    """
    if not text:
        return []
    cleaned = re.sub(r"\s+(?:and|&)\s+", ";", text.strip().strip(".,;"), flags=re.IGNORECASE)
    cleaned = re.sub(r"\s+(?:et\.? ?al\.?)\s*$", "", cleaned, flags=re.IGNORECASE)
    chunks = [c.strip() for c in re.split(r";", cleaned) if c.strip()]
    names: list[str] = []
    for chunk in chunks:
        parts = [p.strip() for p in chunk.split(",") if p.strip()]
        i = 0
        while i < len(parts):
            part = parts[i]
            nxt = parts[i + 1] if i + 1 < len(parts) else None
            # "Brodley, C. E." — a lone family name followed by initials only.
            if (
                nxt is not None
                and " " not in part.strip()
                and re.fullmatch(r"(?:[A-Za-z]\.?\s*-?\s*){1,4}", nxt)
            ):
                names.append(f"{part}, {nxt}")
                i += 2
                continue
            names.append(part)
            i += 1
    return [n for n in names if parse_name(n).readings]

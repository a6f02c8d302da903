"""Field-level readers shared by both site parsers: counts, dates, arXiv ids, bylines, boilerplate.

Everything here works on one short string at a time, with regexes compiled once at import,
so the per-page cost stays linear in the page size.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from pipelines.textnorm import find_urls, fold_unicode

# --- counts -----------------------------------------------------------------------------------

# A count as sites print it: "108", "1,234", "1 234" (also NBSP / thin space), "1.2k", "3M".
NUMBER = r"(?:\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?!\d)|\d+(?:[.,]\d+)?[kKM]|\d+)"
# A count or metric value we cannot read ("-5", "1.2.3", "~40"): it needs a digit. The sites' metric
# lines with such a value land as NULL with an ``unreadable_value`` issue.
LOOSE_NUMBER = r"(?P<n>[-+−–~≈<>]?\s?\d\S{0,40}?)"
_SUFFIX_MULTIPLIER = {"k": 1_000, "K": 1_000, "M": 1_000_000}
_DOT_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+")
_THOUSANDS_SEP = re.compile(r"[,\u00a0\u202f ]")


def parse_count(raw: str | None) -> int | None:
    """``'1,234'`` -> 1234, ``'1 234'`` -> 1234, ``'1.2k'`` -> 1200, ``'3M'`` -> 3000000; junk -> None."""
    if raw is None:
        return None
    text = raw.strip()
    if not text:
        return None
    multiplier = 1
    if text[-1] in _SUFFIX_MULTIPLIER:
        multiplier = _SUFFIX_MULTIPLIER[text[-1]]
        text = text[:-1].strip()
        try:
            return int(round(float(text.replace(",", ".")) * multiplier))
        except (ValueError, OverflowError):
            return None
    # "1.234" with exact 3-digit groups is a thousands separator in a count, not a decimal.
    if _DOT_THOUSANDS.fullmatch(text):
        text = text.replace(".", "")
    text = _THOUSANDS_SEP.sub("", text)
    try:
        return int(text) if text.isdecimal() else int(float(text))
    except (ValueError, OverflowError):
        return None


_COUNTISH = re.compile(r"[-+−–~≈<>]?\s?\d[\d.,\s\u00a0\u202f]*")


def overlong_metric(line: str, suffixes: dict[str, str], prefixes: dict[str, str] | None = None) -> str | None:
    """The field of a metric line longer than the parsers read (``'9…9citations'`` with thousands
    of digits): ``suffixes`` / ``prefixes`` map the metric's word to its field. None otherwise —
    a sentence ending in "papers" has letters before the word, not a number."""
    low = line.lower()
    for word, key in suffixes.items():
        if low.endswith(word) and _COUNTISH.fullmatch(low[: -len(word)].strip()):
            return key
    for word, key in (prefixes or {}).items():
        if low.startswith(word) and _COUNTISH.fullmatch(low[len(word):].strip(" :%")):
            return key
    return None


def parse_float(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        return float(raw.strip().replace(",", "."))
    except ValueError:
        return None


# --- dates ------------------------------------------------------------------------------------

MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_MONTH_NUMBER = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}

# The date part of a Scholar Feed meta row, in every form we accept (named groups).
DATE = (
    rf"(?:(?P<mon>{MONTH})\s?(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:(?:,\s?|\s)(?P<year>\d{{4}}))?"  # May 14 / Dec 15, 2025 / Dec 15 2025 / May 14th
    rf"|(?P<mon_m>{MONTH})\s?,?\s?(?P<year_m>\d{{4}})"                     # May 2025
    rf"|(?P<day_d>\d{{1,2}})\s(?P<mon_d>{MONTH})(?:,?\s(?P<year_d>\d{{4}}))?"  # 14 May 2025
    r"|(?P<iso_y>(?:19|20)\d{2})-(?P<iso_m>0?[1-9]|1[0-2])-(?P<iso_d>\d{1,2})"  # 2025-12-15
    rf"|(?P<year_y>(?:19|20)\d{{2}})"                                       # 2025
    r"|(?P<rel_n>\d{1,3}|an?)\s?(?P<rel_unit>minute|hour|day|week|month|year)s?\s?ago"  # 3 days ago, a month ago
    # Capitalised, only glued to the category ("LGToday"): "AI Today" may be a title.
    r"|(?P<rel_word>today|yesterday|(?<=[A-Za-z])(?:Today|Yesterday)))"
)


def month_number(raw: str) -> int:
    return _MONTH_NUMBER[raw.strip(".")[:3].lower()]


def infer_year(month: int, day: int, captured: date) -> int | None:
    """The capture's year, or the year before when that lands after the capture (``Dec 18``
    captured 2026-11-21 -> 2025). Feb 29 walks back to the last leap year. None if impossible."""
    year = captured.year
    for _ in range(9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            year -= 1
            continue
        if candidate <= captured:
            return year
        year -= 1
    return None


def read_date(groups: dict[str, str | None], captured: date) -> dict:
    """Turn the named groups of ``DATE`` into the listing's date columns.

    pub_date is the exact day for day precision, the month's first day for month precision and
    None for year precision (``year`` carries it). A day that does not exist ("Feb 30, 2025",
    "Apr 31") keeps its year and month at month precision, and ``impossible_day`` is set so the
    caller records the repair. A year outside what a date can hold (``0000``) keeps only ``year``
    (the domain checks then null it)."""
    out = {"year": None, "pub_date": None, "date_precision": None, "year_inferred": False, "impossible_day": False}
    mon = groups.get("mon") or groups.get("mon_d")
    day = groups.get("day") or groups.get("day_d") or groups.get("iso_d")
    if (mon or groups.get("iso_m")) and day:
        m, d = (month_number(mon) if mon else int(groups["iso_m"])), int(day)
        year_raw = groups.get("year") or groups.get("year_d") or groups.get("iso_y")
        if year_raw:
            y = int(year_raw)
        else:
            y = infer_year(m, d, captured)
            out["year_inferred"] = True
            if y is None:  # no year has this day: the month's year, by the same capture-year rule
                y = captured.year if m <= captured.month else captured.year - 1
        if not 1 <= y <= 9999:
            out.update(year=y, date_precision="year")
            return out
        try:
            out["pub_date"] = date(y, m, d)
        except ValueError:  # "Feb 30, 2025": keep the year and month, drop the impossible day
            out.update(year=y, pub_date=date(y, m, 1), date_precision="month", impossible_day=True)
            return out
        out.update(year=y, date_precision="day")
        return out
    if groups.get("mon_m"):
        y, m = int(groups["year_m"]), month_number(groups["mon_m"])
        if not 1 <= y <= 9999:
            out.update(year=y, date_precision="year")
            return out
        out.update(year=y, pub_date=date(y, m, 1), date_precision="month")
        return out
    if groups.get("year_y"):
        out.update(year=int(groups["year_y"]), date_precision="year")
        return out
    if groups.get("rel_word") or groups.get("rel_n"):
        if groups.get("rel_word"):
            delta = timedelta(days=0 if groups["rel_word"].lower() == "today" else 1)
        else:
            n = 1 if groups["rel_n"].startswith("a") else int(groups["rel_n"])
            unit = groups["rel_unit"].lower()
            if unit in ("month", "year"):
                # "2 months ago", "a year ago": no date is kept (``date_raw`` is). A year read from
                # them would drift as the page ages ("a year ago" becomes "2 years ago" on a later
                # night), and the year is part of the listing's key: the paper would come back
                # under a new key, twice.
                return out
            delta = timedelta(weeks=n) if unit == "week" else timedelta(days=n if unit == "day" else 0)
        day_value = captured - delta
        out.update(year=day_value.year, pub_date=day_value, date_precision="day", year_inferred=True)
    return out


# --- arXiv ids --------------------------------------------------------------------------------

_ARXIV_NEW = r"(?P<new>\d{4}\.\d{4,5})"
_ARXIV_OLD = r"(?P<old>[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7})"
_ARXIV_ID_CORE = rf"(?:{_ARXIV_NEW}|{_ARXIV_OLD})(?:v(?P<version>\d+))?"
# Where an id may appear in text: arxiv URLs, "arXiv:<id>", the arXiv DOI.
_ARXIV_IN_TEXT = re.compile(
    rf"(?:arxiv\.org/(?:abs|pdf|html)/|arxiv:\s?|10\.48550/arxiv\.){_ARXIV_ID_CORE}(?![\d])", re.IGNORECASE
)
# Site paper pages: scholarfeed /paper/<id>v<n>; bzpeer /works/<slug>-<id> (id may be an arXiv id).
_PAPER_PATH = re.compile(rf"/paper/{_ARXIV_ID_CORE}(?:[/?#]|$)")
_WORKS_PATH = re.compile(r"/works?/(?P<slug>[^/?#]+)")
_TRAILING_NEW_ID = re.compile(r"(?:^|-)(?P<new>\d{4}\.\d{4,5})(?:v(?P<version>\d+))?$")
_ARXIV_HOST = re.compile(r"^https?://(?:www\.|export\.)?arxiv\.org/", re.IGNORECASE)


def _id_from_match(m: re.Match) -> tuple[str, int | None]:
    arxiv_id = m.group("new") or m.group("old")
    version = m.group("version")
    return arxiv_id, int(version) if version else None


def arxiv_from_text(text: str | None) -> tuple[str | None, int | None]:
    """First arXiv id in free text (``arXiv:2312.01234v2``, arxiv.org URLs, the arXiv DOI)."""
    if not text or ("arxiv" not in text and "arXiv" not in text and "ARXIV" not in text and "10.48550" not in text):
        return None, None
    m = _ARXIV_IN_TEXT.search(text)
    return _id_from_match(m) if m else (None, None)


def is_paper_link(href: str) -> bool:
    """A link to a paper page: /paper/<id>, /works/<slug>, or an arXiv abstract/PDF."""
    return bool(_PAPER_PATH.search(href) or _WORKS_PATH.search(href) or _ARXIV_HOST.match(href))


def arxiv_from_link(href: str) -> tuple[str | None, int | None]:
    m = _PAPER_PATH.search(href)
    if m:
        return _id_from_match(m)
    if _ARXIV_HOST.match(href):
        return arxiv_from_text(href)
    m = _WORKS_PATH.search(href)
    if m:
        tail = _TRAILING_NEW_ID.search(m.group("slug"))
        if tail:
            return tail.group("new"), int(tail.group("version")) if tail.group("version") else None
    return None, None


# --- bylines ----------------------------------------------------------------------------------

# How a cut author list ends: "et al.", "and others", "and 5 others", "4 more", "+3", "…".
_MORE_WORD = r"(?:more(?:\s(?:authors?|others))?|others?|(?:other|more)\s(?:co-?)?authors?|co-?authors?|authors)"
_ET_AL = re.compile(
    r"(?:,?\s*(?:et\.?\s?al\.?|and others"
    rf"|(?:(?:and|&)\s)?\+?\s?\d{{1,5}}\s?{_MORE_WORD}|\+\s?\d{{1,5}}|…|\.\.\.))\s*$",
    re.IGNORECASE,
)
_SERIAL_AND = re.compile(r",\s*(?:and|&)\s", re.IGNORECASE)
# Separators between names; the Oxford ", and" first so that "and" does not start a name.
_NAME_SPLIT = re.compile(r"\s*(?:,\s*(?:and|&)\s|,|;|\s&\s|\sand\s|\s[·•]\s)\s*")
NAME_PARTICLES = frozenset(
    "van von der den de del della di da das do dos du le la las los bin ibn al el y i e zu ter ten af av".split()
)
# A particle glued to a capitalised family name: "d'Alembert", "dell'Acqua", "al-Farabi", "el-Sayed".
_PARTICLE_GLUED = re.compile(r"(?:[a-z]{1,4}['’]|(?:al|el|ul|bin|ibn|abu|ben|bint)-)[^\W\d_]")
# Generational suffixes and degrees written after a name; names.py drops the same ones when matching,
# so a byline keeps them as the page wrote them ("John Smith Jr.").
NAME_SUFFIXES = frozenset("jr sr jnr snr ii iii iv phd md".split())
# "Smith J." / "Rowling J.K." end a name, not a sentence; so do "Jr." and "Ph.D.".
_ENDS_WITH_INITIAL = re.compile(r"(?:^|[\s.\-])[^\W\d_]\.$")
_NAME_TOKEN = re.compile(r"[^\W\d_](?:[^\W\d_]|['’.\-])*")
# Footnote and affiliation marks after a name: "Cheng†", "Gao*", "Yue¹", "Cheng1,2". Digits only count
# glued to a lower-case letter: "Cheng, 2024" keeps its year (and fails as a byline), and "C4", "GPT4"
# or "T5" stay model names, not the names "C", "GPT", "T".
_MARKS = re.compile(
    r"[†‡§¶*∗⋆✝#✉⁰¹²³⁴⁵⁶⁷⁸⁹]+|(?<=[a-zà-öø-ÿ])\d{1,3}(?:,\d{1,3}(?=[,;\s]|$))*(?![^\W_])"
)
# Asides a byline may carry that parse_byline does not read: "(Alibaba)", "[1]", "<a@b.org>", "a@b.org".
# The address's parts are bounded so that a long run without "@" is not rescanned from every start.
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|<[^<>]*>|[\w.+-]{1,64}@[\w.-]{1,255}")


def is_name_suffix(token: str) -> bool:
    return token.replace(".", "").lower() in NAME_SUFFIXES


def ends_like_a_name(text: str) -> bool:
    """A trailing period that closes a name, not a sentence: an initial ("Smith J.") or a suffix
    ("Robert Smith Jr.", "Jane Doe, Ph.D.")."""
    if not text.endswith("."):
        return True
    words = text.split()
    return bool(_ENDS_WITH_INITIAL.search(text)) or (bool(words) and is_name_suffix(words[-1]))


def _looks_like_name(part: str) -> bool:
    tokens = part.split()
    if not 1 <= len(tokens) <= 6 or len(part) > 60:
        return False
    for i, token in enumerate(tokens):
        if not _NAME_TOKEN.fullmatch(token):
            return False
        first = token[0]
        if first.isupper() or not first.isascii():
            continue
        # A particle is never the whole name nor its end ("de Souza", "Bob van der Berg").
        if token.lower() in NAME_PARTICLES and i < len(tokens) - 1:
            continue
        glued = _PARTICLE_GLUED.match(token)
        if glued and token[glued.end() - 1].isupper():
            continue
        return False
    return True


def _byline_parts(text: str) -> tuple[list[str], bool, str]:
    """The names a byline line lists (marks dropped, a suffix after its own comma joined to its
    name), whether the list says it was cut, and the text before the cut."""
    text = " ".join(_MARKS.sub("", text).split())
    truncated = False
    m = _ET_AL.search(text)
    if m:
        truncated = True
        text = text[: m.start()].strip()
    parts: list[str] = []
    for part in _NAME_SPLIT.split(text):
        if not part:
            continue
        if parts and all(is_name_suffix(t) for t in part.split()):  # "John Smith, Jr." is one person
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    return parts, truncated, text


def parse_byline(line: str) -> tuple[list[str], bool] | None:
    """``'A B, C D, E F et al.'`` -> (['A B', 'C D', 'E F'], True); None if it is not a byline.

    Footnote marks are dropped (``'Cheng†'``, ``'Gao1,2'``), suffixes stay with their name
    (``'John Smith Jr.'``), and "and 5 others" / "4 more" mark the list as cut like "et al."."""
    text = line.strip()
    # Colons, brackets, question marks and exclamations belong to sentences, not to name lists.
    # No length limit: a byline of 500 names is a byline (a large collaboration), not an abstract;
    # every name must still read as one, and the checks are linear in the line.
    if not text or any(ch in text for ch in ":()[]?!"):
        return None
    parts, truncated, text = _byline_parts(text)
    if not text or not ends_like_a_name(text) or not parts:
        return None
    if not all(_looks_like_name(p) for p in parts):
        return None
    # "Transformers, Attention, and Memory" is a title: a list joined by a serial ", and" is not read
    # as names when most of its parts are one word ("Mausam, Daniel S. Weld, and Oren Etzioni" is;
    # "J.Smith" counts as two).
    if _SERIAL_AND.search(text) and 2 * sum(len(p.replace(".", ". ").split()) < 2 for p in parts) > len(parts):
        return None
    return parts, truncated


def looks_like_byline(line: str) -> bool:
    """A line ``parse_byline`` cannot read that is still mostly names: at least two thirds of its
    words sit in parts that read as names, one of them of two words or more, once asides in
    brackets and e-mail addresses are set apart ("Jialiang Cheng (Alibaba), Ning Gao"). A sentence
    ("We compare A, B and C.") has too many words outside names."""
    parts, _, _ = _byline_parts(_ASIDE.sub(" ", line))
    words = named = 0
    has_full_name = False
    for part in parts:
        n = sum(1 for w in part.split() if any(ch.isalpha() for ch in w))
        words += n
        if n and _looks_like_name(part):
            named += n
            has_full_name = has_full_name or n >= 2
    return has_full_name and 3 * named >= 2 * words


# --- boilerplate ------------------------------------------------------------------------------

# Controls and navigation that are whole lines on either site (compared case-insensitively).
UI_LABELS = frozenset((
    "actions", "view", "view paper", "view work", "view details", "details", "open", "open paper",
    "open work", "save", "saved", "share", "cite", "bookmark", "pdf", "abstract", "show more",
    "show less", "read more", "see more", "load more", "more", "less", "expand", "collapse", "follow",
    "following", "unfollow", "copy link", "export", "bibtex", "next", "previous", "prev", "back",
    "back to top", "…", "...", "sort by", "filter", "filters", "newest", "oldest", "most cited",
    "relevance", "top", "latest", "menu", "home", "search", "explore", "trending", "sign in",
    "sign up", "log in", "login", "log out", "register", "skip to content", "skip to main content",
    "toggle navigation", "toggle theme", "close", "dismiss", "accept", "accept all", "reject all",
    "got it", "ok",
))
# Lines that end a page's content (footer, pagination). Deliberately narrow: a short abstract
# paragraph about "privacy policy compliance" must not read as a footer.
_FOOTER_WORDS = (
    r"(?:privacy(?: policy)?|terms(?: of (?:service|use))?|terms (?:&|and) (?:privacy|conditions)"
    r"|cookie (?:policy|settings|preferences)|cookies|about(?: us)?|contact(?: us)?|help|faq|blog|careers"
    r"|status|api|docs|documentation|sitemap|imprint|legal|press|pricing|accessibility|feedback)"
)
_FOOTER = re.compile(
    r"^(?:©|\(c\)\s?\d{4}|copyright\b)|all rights reserved|^powered by\b"
    rf"|^{_FOOTER_WORDS}(?:\s?[·|•]\s?{_FOOTER_WORDS})*$"
    r"|^page \d+ of \d+$|^showing \d+(?:\s?[-–]\s?\d+)? of \d+\b|^\d+\s?[-–]\s?\d+ of \d+$"
    r"|^(?:load|show|view|see) (?:all|more)\b.{0,30}$",
    re.IGNORECASE,
)


def is_ui_label(line: str) -> bool:
    """A control / navigation label on a line of its own ("Show more", "Share", "·")."""
    if len(line) > 40:
        return False
    label = line.strip(" .:·|•-–—").lower()
    return not label or label in UI_LABELS


def is_footer(line: str) -> bool:
    """A footer / pagination line ("© 2026 BZPEER", "Privacy · Terms", "Load more")."""
    return len(line) <= 120 and bool(_FOOTER.search(line))


# --- text helpers -----------------------------------------------------------------------------

_SLUG_DROP = re.compile(r"[^a-z0-9]+")
_URL_END_OPEN = re.compile(r"https?://\S+$")
_OPEN_ENDINGS = frozenset(",;:-–—(/[{\\&+=<")


def slugify(text: str) -> str:
    return _SLUG_DROP.sub("-", fold_unicode(text).lower()).strip("-")


def ends_open(text: str) -> bool:
    """True when text stops mid-sentence (last char a letter/digit/comma…), i.e. looks cut off.
    A trailing URL counts as a proper end (abstracts often end with a code link)."""
    stripped = text.rstrip()
    if not stripped:
        return True
    if _URL_END_OPEN.search(stripped):
        return False
    last = stripped[-1]
    return last.isalnum() or last in _OPEN_ENDINGS


_LATEX_URL = re.compile(r"\\(?:url|href)\{([^{}]*)\}")


def code_urls(abstract: str | None) -> list[str]:
    """URLs in an abstract (``\\url{...}`` unwrapped, unbalanced closing brackets trimmed)."""
    if not abstract or "://" not in abstract:
        return []
    text = _LATEX_URL.sub(lambda m: f" {m.group(1)} ", abstract)
    out: dict[str, None] = {}
    for url in find_urls(text):
        while url and url[-1] in "}]" and url.count(url[-1]) > url.count("{" if url[-1] == "}" else "["):
            url = url[:-1].rstrip(".,;:")
        if url.count("(") > url.count(")"):  # "https://x.org/a_(b" lost its ")" to the URL regex
            url += ")" if abstract.find(url + ")") >= 0 else ""
        if "://" in url and len(url) > len("https://"):
            out.setdefault(url, None)
    return list(out)

"""Is an API's answer about what we asked? The checks every arXiv / OpenAlex answer passes before use.

A 200 is not a right answer. Servers answer a lookup with another record (a DOI lookup answered
with a different work, an ORCID lookup with another person, a merged id redirected elsewhere, an
older arXiv version), with an error object, a cut or invalid body, an HTML page, an empty list or
a body far too large. Nothing of that may reach ``core`` or the marts: each such answer is turned
down here (or, for the answers that cannot even be read, in the clients) with a **reason code**
and a one-line detail, and the enrichment step stores the rejection (``enrichment.arxiv_rejects``
/ ``enrichment.openalex_rejects``) instead of the answer.

What is compared (``PaperEvidence`` is what the listings — and arXiv, for OpenAlex — say):

- **ids**: the id the answer carries must be the one asked for (arXiv id; DOI or the arXiv id of
  its locations for a lookup by DOI; OpenAlex id; ORCID). A redirect to a merged record is another
  id: it is rejected, not silently re-keyed.
- **title**: the same words (``resolution.titles`` keys), one title a part of the other (a dropped
  subtitle), or a title diff with no veto scoring at least ``TITLE_MIN_SCORE`` — the paper
  matcher's own comparison, so ``static``/``dynamic`` stays two papers here too.
- **year**: within ``YEAR_TOLERANCE`` of a year the listings show (an arXiv record spans its
  first to its latest version). A record found by its id may also be older than the listings
  (a preprint, listed with its later journal year); it may never be newer — a paper cannot appear
  after a page listed it. A title search, weaker evidence, needs the years to agree.
- **authors**: some name the listings show can be one of the answer's authors
  (``resolution.names.name_compatibility``: initials and name order allowed, never another family
  name). With no names known there is nothing to contradict.
- **person** (an ORCID lookup): the record's names must be compatible with the names the ORCID
  was found under.
- **version**: an arXiv answer older than a version the listings already show is stale.
- **values**: counts must fit the warehouse's integers (a citation count of 10^30 is a broken
  answer, not a number to store).

Pure: no Dagster, no environment, no I/O. The record types are read by attribute only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from pipelines.core.resolution.names import name_compatibility
from pipelines.core.resolution.titles import compare_titles, title_key, title_parts, title_tokens

# ---------------------------------------------------------------------------------- reason codes
# The answer is about something else.
ID_MISMATCH = "id_mismatch"            # the answer's id is not the one asked for (another record, a redirect)
VERSION_MISMATCH = "version_mismatch"  # an older arXiv version than the listings already show
TITLE_MISMATCH = "title_mismatch"      # its title is not the listed paper's
YEAR_MISMATCH = "year_mismatch"        # its year is too far from the listed paper's
AUTHORS_MISMATCH = "authors_mismatch"  # none of the names the listings show is among its authors
NAME_MISMATCH = "name_mismatch"        # a person whose names fit none of the names the ORCID was found under
IMPLAUSIBLE_VALUE = "implausible_value"  # a count or version no real record has (negative, beyond 32 bits)
# The answer cannot be used at all (raised by the clients as ``BadAnswer``).
ERROR_ANSWER = "error_answer"          # an error object / error entry served as the answer
INVALID_BODY = "invalid_body"          # JSON or XML that does not parse (cut short, garbage)
WRONG_CONTENT_TYPE = "wrong_content_type"  # an HTML page (or anything not JSON / Atom) where data was expected
UNEXPECTED_SHAPE = "unexpected_shape"  # parses, but is not the record or list asked for
EMPTY_ANSWER = "empty_answer"          # an empty record or result list where one record was asked for
OVERSIZE = "oversize"                  # larger than the client's body limit: abandoned unread
# No answer.
NOT_FOUND = "not_found"                # the API does not know the id (HTTP 404, or not in the feed)
UNAVAILABLE = "unavailable"            # timeouts, 5xx after the retries
REFUSED = "refused"                    # a 4xx: the API refused the query
RATE_LIMITED = "rate_limited"          # arXiv kept answering "Rate exceeded."
BUDGET_EXHAUSTED = "budget_exhausted"  # the OpenAlex daily budget is spent

WRONG_RECORD = (ID_MISMATCH, VERSION_MISMATCH, TITLE_MISMATCH, YEAR_MISMATCH, AUTHORS_MISMATCH, NAME_MISMATCH,
                IMPLAUSIBLE_VALUE)
UNUSABLE = (ERROR_ANSWER, INVALID_BODY, WRONG_CONTENT_TYPE, UNEXPECTED_SHAPE, EMPTY_ANSWER, OVERSIZE)
NO_ANSWER = (NOT_FOUND, UNAVAILABLE, REFUSED, RATE_LIMITED, BUDGET_EXHAUSTED)
REASONS = WRONG_RECORD + UNUSABLE + NO_ANSWER

TITLE_MIN_SCORE = 0.8      # the paper matcher's "close titles" bar (its review queue starts there)
YEAR_TOLERANCE = 1         # a preprint and its publication often straddle a new year
MAX_COUNT = 2**31 - 1      # the warehouse stores counts as INTEGER
MAX_ARXIV_VERSION = 999
MIN_YEAR, MAX_YEAR = 1000, 2999   # a year outside is a broken answer, not a date


class BadAnswer(Exception):
    """A mixin for the clients' exceptions: an answer that cannot be used, with its reason code."""

    reason: str = UNEXPECTED_SHAPE


@dataclass(frozen=True)
class Rejection:
    reason: str     # one of REASONS
    detail: str     # one line: what was asked, what came back

    def __post_init__(self) -> None:
        if self.reason not in REASONS:
            raise ValueError(f"unknown rejection reason {self.reason!r}")


@dataclass(frozen=True)
class PaperEvidence:
    """What we already know about a paper we ask an API about."""

    titles: tuple[str, ...] = ()
    years: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    version: int | None = None     # the highest arXiv version a listing shows

    def merged(self, other: "PaperEvidence") -> "PaperEvidence":
        versions = [v for v in (self.version, other.version) if v is not None]
        return PaperEvidence(
            titles=tuple(dict.fromkeys(self.titles + other.titles)),
            years=tuple(sorted(set(self.years + other.years))),
            names=tuple(dict.fromkeys(self.names + other.names)),
            version=max(versions) if versions else None,
        )


def evidence(titles: Iterable[str | None] = (), years: Iterable[int | None] = (), names: Iterable[str | None] = (),
             version: int | None = None) -> PaperEvidence:
    return PaperEvidence(
        titles=tuple(dict.fromkeys(t for t in titles if t and t.strip())),
        years=tuple(sorted({int(y) for y in years if y is not None})),
        names=tuple(dict.fromkeys(n for n in names if n and n.strip())),
        version=version,
    )


# ---------------------------------------------------------------------------------- comparisons

def titles_compatible(left: str | None, right: str | None) -> bool:
    """The same paper's title, as the paper matcher reads titles (see the module docstring)."""
    a, b = title_key(left), title_key(right)
    if not a or not b:
        return False
    if a == b or a in title_parts(right) or b in title_parts(left):
        return True
    comparison = compare_titles(title_tokens(left), title_tokens(right))
    return comparison.veto is None and comparison.score >= TITLE_MIN_SCORE


def years_compatible(answer: Iterable[int | None], known: Iterable[int | None], tolerance: int = YEAR_TOLERANCE,
                     *, older_ok: bool = False) -> bool:
    """Some answer year within ``tolerance`` of some known year (true when either side has none);
    with ``older_ok``, also an answer older than a known year (a preprint of a later publication)."""
    answer = [y for y in answer if y is not None]
    known = [y for y in known if y is not None]
    if not answer or not known:
        return True
    if older_ok and min(answer) <= max(known) + tolerance:
        return True
    return any(abs(a - k) <= tolerance for a in answer for k in known)


def names_agree(known: Sequence[str] | None, authors: Sequence[str | None]) -> bool:
    """Whether some name we know can be one of the answer's authors.

    With no known names there is nothing to contradict. ``name_compatibility`` accepts initials
    and name-order variants, never a different family name.
    """
    known = [k for k in (known or []) if k]
    if not known:
        return True
    return any(name_compatibility(k, a) >= 1 for k in known for a in authors if a)


def _short(values: Iterable[Any], n: int = 4) -> str:
    values = [str(v) for v in values if v is not None and str(v)]
    return ", ".join(values[:n]) + (f" (+{len(values) - n})" if len(values) > n else "") if values else "none"


def _quoted(title: str | None, n: int = 80) -> str:
    if not title:
        return "no title"
    return repr(title if len(title) <= n else title[: n - 1] + "…")


def _paper_checks(title: str | None, years: Sequence[int | None], authors: Sequence[str | None],
                  known: PaperEvidence, what: str, cut: bool = False, by_id: bool = True) -> Rejection | None:
    """The title, year and author checks shared by every paper answer."""
    if known.titles and not any(titles_compatible(title, t) for t in known.titles):
        return Rejection(TITLE_MISMATCH, f"{what} is titled {_quoted(title)}, the listings {_quoted(known.titles[0])}")
    if not years_compatible(years, known.years, older_ok=by_id):
        return Rejection(YEAR_MISMATCH, f"{what} is from {_short(sorted(set(y for y in years if y)))}, "
                                        f"the listings say {_short(known.years)}")
    if not names_agree(known.names, authors):
        return Rejection(AUTHORS_MISMATCH, f"none of {what}'s authors ({_short(authors)}"
                                           f"{', a list cut short' if cut else ''}) is a name the listings "
                                           f"show ({_short(known.names)})")
    return None


def _counts(values: dict[str, Any], what: str, low: int = 0, high: int = MAX_COUNT) -> Rejection | None:
    for name, value in values.items():
        if value is not None and not low <= value <= high:
            return Rejection(IMPLAUSIBLE_VALUE, f"{what} has {name} {value}")
    return None


# ---------------------------------------------------------------------------------- arXiv

def check_arxiv_record(record: Any, asked_id: str, known: PaperEvidence = PaperEvidence(), *,
                       by: str = "id") -> Rejection | None:
    """An ``ArxivRecord`` answered for ``asked_id`` (bare, no version): None when it may be used.

    ``by``: ``'id'`` (looked up by its id) or ``'title'`` (an exact-title search's hit).
    """
    what = f"arXiv {record.arxiv_id}v{record.version}" if record.version else f"arXiv {record.arxiv_id}"
    if record.arxiv_id != asked_id:
        return Rejection(ID_MISMATCH, f"asked arXiv {asked_id}, the answer is {what} {_quoted(record.title)}")
    if record.version is not None and not 1 <= record.version <= MAX_ARXIV_VERSION:
        return Rejection(IMPLAUSIBLE_VALUE, f"{what} has version {record.version}")
    if known.version is not None and record.version is not None and record.version < known.version:
        return Rejection(VERSION_MISMATCH, f"asked the latest version of {asked_id}, the answer is v{record.version}; "
                                           f"the listings already show v{known.version}")
    years = [ts.year for ts in (record.published, record.updated) if ts is not None]
    if len(years) == 2:
        years = list(range(years[0], years[1] + 1))
    return _paper_checks(record.title, years, record.author_names, known, what, by_id=by == "id")


# ---------------------------------------------------------------------------------- OpenAlex

def check_openalex_work(work: Any, *, asked: str, by: str, known: PaperEvidence = PaperEvidence()) -> Rejection | None:
    """An ``OpenAlexWork`` answered for ``asked``: None when it may be used.

    ``by``: ``'arxiv_doi'`` (``asked`` is the bare arXiv id, looked up by ``10.48550/arXiv.<id>``;
    the work must carry that DOI or that arXiv id), ``'doi'`` (a bare DOI), ``'openalex_id'``
    (``W…``) or ``'title'`` (a title search: ``asked`` is the title).
    """
    what = f"OpenAlex {work.openalex_id or '(no id)'}"
    if not work.openalex_id:
        return Rejection(UNEXPECTED_SHAPE, f"the answer to {asked} is a work without an OpenAlex id")
    if by == "arxiv_doi":
        doi = f"10.48550/arxiv.{asked}".lower()
        if (work.doi or "").lower() != doi and work.arxiv_id != asked:
            return Rejection(ID_MISMATCH, f"asked doi:{doi}, the answer is {what} (doi {work.doi or 'none'}, "
                                          f"arXiv {work.arxiv_id or 'none'}) {_quoted(work.title)}")
    elif by == "doi":
        if (work.doi or "").lower() != asked.lower():
            return Rejection(ID_MISMATCH, f"asked doi:{asked}, the answer is {what} (doi {work.doi or 'none'}) "
                                          f"{_quoted(work.title)}")
    elif by == "openalex_id":
        if work.openalex_id != asked:
            return Rejection(ID_MISMATCH, f"asked OpenAlex {asked}, the answer is {what} {_quoted(work.title)} "
                                          "(a merged or redirected record is not taken for the one asked)")
    elif by != "title":
        raise ValueError(f"unknown lookup {by!r}")
    bad = _counts({"cited_by_count": work.cited_by_count,
                   **{f"cited_by_count in {y}": c for y, c in work.counts_by_year}}, what) or _counts(
        {"publication_year": work.publication_year, **{"a counts_by_year year": y for y, _ in work.counts_by_year}},
        what, MIN_YEAR, MAX_YEAR)
    if bad:
        return bad
    authors = [a.raw_author_name or a.display_name for a in work.authorships]
    return _paper_checks(work.title, [work.publication_year], authors, known, what, cut=work.is_authors_truncated,
                         by_id=by != "title")


def check_openalex_author(author: Any, *, asked_orcid: str | None = None, asked_id: str | None = None,
                          names: Sequence[str | None] = ()) -> Rejection | None:
    """An ``OpenAlexAuthor`` answered for an ORCID (or an OpenAlex id): None when it may be used.

    ``names``: the names the ORCID (id) was found under in the works' authorships.
    """
    what = f"OpenAlex {author.openalex_id or '(no id)'} ({author.display_name or 'no name'})"
    if not author.openalex_id:
        return Rejection(UNEXPECTED_SHAPE, f"the answer to {asked_orcid or asked_id} is a person without an OpenAlex id")
    if asked_orcid is not None and (author.orcid or "").upper() != asked_orcid.upper():
        return Rejection(ID_MISMATCH, f"asked ORCID {asked_orcid}, the answer is {what} with ORCID {author.orcid or 'none'}")
    if asked_id is not None and author.openalex_id != asked_id:
        return Rejection(ID_MISMATCH, f"asked OpenAlex {asked_id}, the answer is {what} "
                                      "(a merged or redirected record is not taken for the one asked)")
    bad = _counts({"works_count": author.works_count, "cited_by_count": author.cited_by_count,
                   "h_index": author.h_index, "i10_index": author.i10_index}, what)
    if bad:
        return bad
    own = [author.display_name, *author.display_name_alternatives]
    if not names_agree(names, own):
        return Rejection(NAME_MISMATCH, f"{what} is named {_short(own)}; the ORCID was found as {_short(names)}")
    return None

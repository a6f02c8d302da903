"""What OpenAlex's answers become: the records (``OpenAlexWork`` with its ``Authorship`` list,
``OpenAlexAuthor``), parsed from the API's JSON (``parse_work``, ``parse_author``: ids shortened,
DOIs and ORCIDs made bare, abstracts rebuilt from ``abstract_inverted_index``), and their Polars
frames. No network: the client is ``openalex.py``. No Dagster imports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Iterable, Mapping

import polars as pl

from pipelines.ingest.sources.arxiv import parse_arxiv_id

_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


# ------------------------------------------------------------------------------------ records

@dataclass(frozen=True)
class Authorship:
    position: int                      # 1-based order in the author list
    author_position: str | None        # OpenAlex's 'first' | 'middle' | 'last'
    display_name: str | None
    raw_author_name: str | None
    openalex_author_id: str | None
    orcid: str | None
    institutions: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpenAlexWork:
    openalex_id: str
    doi: str | None
    arxiv_id: str | None
    title: str | None
    abstract: str | None
    publication_year: int | None
    publication_date: date | None
    type: str | None
    cited_by_count: int | None
    counts_by_year: tuple[tuple[int, int], ...]       # (year, cited_by_count), ascending
    authorships: tuple[Authorship, ...]
    is_authors_truncated: bool
    fetched_at: datetime | None = None
    matched_by: str | None = None      # 'doi' | 'arxiv_doi' | 'title' | 'openalex_id' | 'list'


@dataclass(frozen=True)
class OpenAlexAuthor:
    openalex_id: str
    orcid: str | None
    display_name: str | None
    display_name_alternatives: tuple[str, ...]
    works_count: int | None
    cited_by_count: int | None
    h_index: int | None
    i10_index: int | None
    counts_by_year: tuple[tuple[int, int, int], ...]  # (year, works_count, cited_by_count), ascending
    fetched_at: datetime | None = None


# ------------------------------------------------------------------------------------ helpers

def short_id(value: str | None) -> str | None:
    """``https://openalex.org/W123`` -> ``W123``."""
    if not value or not isinstance(value, str):
        return None
    return value.rstrip("/").rsplit("/", 1)[-1]


def normalize_doi(value: str | None) -> str | None:
    """Bare lower-case DOI (``10.x/y``) from a DOI, ``doi:`` or ``https://doi.org/`` form; None if not a DOI."""
    if not value or not isinstance(value, str):
        return None
    doi = _DOI_PREFIX.sub("", value.strip()).strip().lower()
    return doi if doi.startswith("10.") and "/" in doi else None


def normalize_orcid(value: str | None) -> str | None:
    """Bare ORCID (``0000-0002-9344-7439``) from any usual form; None if not one."""
    if not value or not isinstance(value, str):
        return None
    m = _ORCID.search(value.strip().rstrip("/"))
    return m.group(1).upper() if m else None


def rebuild_abstract(inverted_index: Mapping[str, Iterable[int]] | None) -> str | None:
    """Words placed back at their positions (OpenAlex ships abstracts as an inverted index)."""
    if not inverted_index or not isinstance(inverted_index, Mapping):
        return None
    placed: list[tuple[int, str]] = []
    for word, positions in inverted_index.items():
        if not isinstance(positions, (list, tuple)):
            continue
        for pos in positions:
            try:
                placed.append((int(pos), word))
            except (TypeError, ValueError):
                continue
    if not placed:
        return None
    placed.sort()
    return " ".join(word for _, word in placed)


def _int(value: Any) -> int | None:
    """A JSON number as an int (a count too large for its column is ``answers``' to reject, with
    its reason: ``implausible_value``); None for what is no number (``1e400`` parses as inf)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _date(value: Any) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _work_arxiv_id(data: Mapping[str, Any], doi: str | None) -> str | None:
    candidates: list[str | None] = []
    if doi and doi.startswith("10.48550/arxiv."):
        candidates.append(doi)
    ids = data.get("ids") or {}
    candidates.append(ids.get("arxiv") if isinstance(ids, dict) else None)
    for loc_key in ("primary_location", "best_oa_location"):
        loc = data.get(loc_key) or {}
        if isinstance(loc, dict):
            candidates += [loc.get("landing_page_url"), loc.get("pdf_url")]
    for loc in _records(data.get("locations")):
        if isinstance(loc, dict):
            candidates += [loc.get("landing_page_url"), loc.get("pdf_url")]
    for cand in candidates:
        if isinstance(cand, str) and "arxiv" in cand.lower():
            parsed = parse_arxiv_id(cand)
            if parsed:
                return parsed[0]
    return None


def _records(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON list (a ``null`` or a string among them skipped; not a list: none)."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    """A JSON string as is; a number as its text; anything else (an object, a list) None."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def parse_work(data: Mapping[str, Any], *, fetched_at: datetime | None = None, matched_by: str | None = None) -> OpenAlexWork:
    """An OpenAlex work. Parts of an odd shape (a ``null`` in ``authorships``, an ``author`` that is
    a string, a number where text belongs) are read as absent, never raised on: one odd record
    must not fail the night's enrichment (its answer is cached before it is parsed)."""
    doi = normalize_doi(data.get("doi"))
    authorships = []
    for i, a in enumerate(_records(data.get("authorships")), start=1):
        author = a.get("author") if isinstance(a.get("author"), Mapping) else {}
        authorships.append(
            Authorship(
                position=i,
                author_position=_str(a.get("author_position")),
                display_name=_str(author.get("display_name")),
                raw_author_name=_str(a.get("raw_author_name")),
                openalex_author_id=short_id(author.get("id")),
                orcid=normalize_orcid(author.get("orcid")),
                institutions=tuple(
                    name for inst in _records(a.get("institutions"))
                    if isinstance(name := inst.get("display_name"), str) and name
                ),
            )
        )
    counts = sorted(
        (y, _int(c.get("cited_by_count")) or 0)
        for c in _records(data.get("counts_by_year"))
        if (y := _int(c.get("year"))) is not None
    )
    return OpenAlexWork(
        openalex_id=short_id(data.get("id")) or "",
        doi=doi,
        arxiv_id=_work_arxiv_id(data, doi),
        title=_str(data.get("title")) or _str(data.get("display_name")),
        abstract=rebuild_abstract(data.get("abstract_inverted_index")),
        publication_year=_int(data.get("publication_year")),
        publication_date=_date(data.get("publication_date")),
        type=_str(data.get("type")),
        cited_by_count=_int(data.get("cited_by_count")),
        counts_by_year=tuple(counts),
        authorships=tuple(authorships),
        is_authors_truncated=bool(data.get("is_authors_truncated", False)),
        fetched_at=fetched_at,
        matched_by=matched_by,
    )


def parse_author(data: Mapping[str, Any], *, fetched_at: datetime | None = None) -> OpenAlexAuthor:
    stats = data.get("summary_stats") if isinstance(data.get("summary_stats"), Mapping) else {}
    counts = sorted(
        (y, _int(c.get("works_count")) or 0, _int(c.get("cited_by_count")) or 0)
        for c in _records(data.get("counts_by_year"))
        if (y := _int(c.get("year"))) is not None
    )
    ids = data.get("ids") if isinstance(data.get("ids"), Mapping) else {}
    orcid = data.get("orcid") or ids.get("orcid")
    return OpenAlexAuthor(
        openalex_id=short_id(data.get("id")) or "",
        orcid=normalize_orcid(orcid),
        display_name=_str(data.get("display_name")),
        display_name_alternatives=tuple(
            name for name in (data.get("display_name_alternatives") if isinstance(data.get("display_name_alternatives"), list) else ())
            if isinstance(name, str)
        ),
        works_count=_int(data.get("works_count")),
        cited_by_count=_int(data.get("cited_by_count")),
        h_index=_int(stats.get("h_index")),
        i10_index=_int(stats.get("i10_index")),
        counts_by_year=tuple(counts),
        fetched_at=fetched_at,
    )


# ------------------------------------------------------------------------------------ frames

_COUNTS_WORK = pl.Struct({"year": pl.Int32, "cited_by_count": pl.Int64})
_COUNTS_AUTHOR = pl.Struct({"year": pl.Int32, "works_count": pl.Int64, "cited_by_count": pl.Int64})
_AUTHORSHIP = pl.Struct(
    {
        "position": pl.Int32,
        "display_name": pl.Utf8,
        "raw_author_name": pl.Utf8,
        "openalex_author_id": pl.Utf8,
        "orcid": pl.Utf8,
    }
)
WORKS_SCHEMA = {
    "openalex_id": pl.Utf8,
    "doi": pl.Utf8,
    "arxiv_id": pl.Utf8,
    "title": pl.Utf8,
    "abstract": pl.Utf8,
    "publication_year": pl.Int32,
    "publication_date": pl.Date,
    "cited_by_count": pl.Int64,
    "counts_by_year": pl.List(_COUNTS_WORK),
    "authorships": pl.List(_AUTHORSHIP),
    "is_authors_truncated": pl.Boolean,
    "fetched_at": pl.Datetime("us", "UTC"),
    "matched_by": pl.Utf8,
}
AUTHORS_SCHEMA = {
    "openalex_id": pl.Utf8,
    "orcid": pl.Utf8,
    "display_name": pl.Utf8,
    "display_name_alternatives": pl.List(pl.Utf8),
    "works_count": pl.Int64,
    "cited_by_count": pl.Int64,
    "h_index": pl.Int64,
    "i10_index": pl.Int64,
    "counts_by_year": pl.List(_COUNTS_AUTHOR),
    "fetched_at": pl.Datetime("us", "UTC"),
}


def openalex_works_frame(works: Iterable[OpenAlexWork]) -> pl.DataFrame:
    rows = [
        {
            "openalex_id": w.openalex_id,
            "doi": w.doi,
            "arxiv_id": w.arxiv_id,
            "title": w.title,
            "abstract": w.abstract,
            "publication_year": w.publication_year,
            "publication_date": w.publication_date,
            "cited_by_count": w.cited_by_count,
            "counts_by_year": [{"year": y, "cited_by_count": c} for y, c in w.counts_by_year],
            "authorships": [
                {
                    "position": a.position,
                    "display_name": a.display_name,
                    "raw_author_name": a.raw_author_name,
                    "openalex_author_id": a.openalex_author_id,
                    "orcid": a.orcid,
                }
                for a in w.authorships
            ],
            "is_authors_truncated": w.is_authors_truncated,
            "fetched_at": w.fetched_at,
            "matched_by": w.matched_by,
        }
        for w in works
    ]
    return pl.DataFrame(rows, schema=WORKS_SCHEMA) if rows else pl.DataFrame(schema=WORKS_SCHEMA)


def openalex_authors_frame(authors: Iterable[OpenAlexAuthor]) -> pl.DataFrame:
    rows = [
        {
            "openalex_id": a.openalex_id,
            "orcid": a.orcid,
            "display_name": a.display_name,
            "display_name_alternatives": list(a.display_name_alternatives),
            "works_count": a.works_count,
            "cited_by_count": a.cited_by_count,
            "h_index": a.h_index,
            "i10_index": a.i10_index,
            "counts_by_year": [{"year": y, "works_count": w, "cited_by_count": c} for y, w, c in a.counts_by_year],
            "fetched_at": a.fetched_at,
        }
        for a in authors
    ]
    return pl.DataFrame(rows, schema=AUTHORS_SCHEMA) if rows else pl.DataFrame(schema=AUTHORS_SCHEMA)

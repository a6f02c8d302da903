"""What an API's answer is checked against, and what the accepted answers become: the evidence the
listings (and arXiv's records) give about each paper (``answers.PaperEvidence``), the OpenAlex
authorship naming the same person as each arXiv author, and the author lists
(``enrichment.author_lists``) that replace truncated bylines in ``core``."""

from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from pipelines.core.resolution.names import name_compatibility
from pipelines.ingest.lookup_plan import _normalized_id, _owner_names, empty, found_title_matches
from pipelines.ingest.sources import answers
from pipelines.ingest.sources.arxiv import parse_arxiv_id
from pipelines.ingest.sources.openalex import Authorship, OpenAlexWork
from pipelines.textnorm import match_key
from pipelines.warehouse import contract

AUTHOR_LISTS_SCHEMA = contract.polars_schema("enrichment.author_lists", drop=("partition_date",))


names_agree = answers.names_agree   # the author check (sources/answers.py), also used by callers here


def listing_evidence(listings: pl.DataFrame, profiles: pl.DataFrame, titles: pl.DataFrame | None = None,
                     searches: pl.DataFrame | None = None) -> dict[str, answers.PaperEvidence]:
    """What the listings say about each paper, to check an API's answer about it against.

    ``arxiv_id → PaperEvidence``: titles, years, names (bylines and profile owners) and the highest
    version shown by the listings that carry the id; for an id an exact-title search found, the
    searched title's (``titles`` / ``searches``: ``titles_without_id`` and the title searches)."""
    out: dict[str, answers.PaperEvidence] = {}
    if listings.height:
        rows = listings.filter(pl.col("arxiv_id").is_not_null())
        if rows.height:
            rows = (
                rows.select("source", "source_profile_id", "title", "year", "arxiv_id", "byline_authors").unique()
                .join(_owner_names(profiles), on=["source", "source_profile_id"], how="left")
            )
            for r in rows.iter_rows(named=True):
                parsed = parse_arxiv_id(r["arxiv_id"])
                if parsed is None:
                    continue
                found = answers.evidence([r["title"]], [r["year"]], [*(r["byline_authors"] or []), r["owner_name"]],
                                         parsed[1])
                out[parsed[0]] = out[parsed[0]].merged(found) if parsed[0] in out else found
    if titles is not None and searches is not None and titles.height and searches.height:
        matched = found_title_matches(searches).join(titles, on="title_key")
        for r in matched.iter_rows(named=True):
            norm = _normalized_id(r["arxiv_id"])
            if norm is None:
                continue
            found = answers.evidence([r["title"]], [r["year"]], r["names"] or [])
            out[norm] = out[norm].merged(found) if norm in out else found
    return out


def arxiv_evidence(arxiv_works: pl.DataFrame) -> dict[str, answers.PaperEvidence]:
    """``arxiv_id → PaperEvidence`` from accepted arXiv records (title, authors, first to latest year)."""
    out: dict[str, answers.PaperEvidence] = {}
    for r in arxiv_works.iter_rows(named=True) if arxiv_works.height else ():
        years = [ts.year for ts in (r.get("published"), r.get("updated")) if ts is not None]
        out[r["arxiv_id"]] = answers.evidence([r["title"]], range(min(years), max(years) + 1) if years else (),
                                              r["authors"] or [])
    return out


def align_authorships(names: Sequence[str], authorships: Sequence[Authorship]) -> list[Authorship | None]:
    """For each arXiv author, the OpenAlex authorship naming the same person (or None).

    Greedy on (name agreement, then closeness of position): ``Fang Liu`` takes ``F. Liu`` in the
    same place; a name with no compatible authorship gets nothing rather than a neighbour's ORCID.
    Very long lists compare only nearby positions (author lists are the same order in both).
    """
    out: list[Authorship | None] = [None] * len(names)
    if not names or not authorships:
        return out
    window = None if len(names) * len(authorships) <= 40_000 else 10
    pairs = []
    for i, name in enumerate(names):
        js = range(len(authorships)) if window is None else range(max(0, i - window), min(len(authorships), i + window + 1))
        for j in js:
            a = authorships[j]
            score = max(name_compatibility(name, a.raw_author_name), name_compatibility(name, a.display_name))
            if score:
                pairs.append((-score, abs(i - j), i, j))
    pairs.sort()
    used_i: set[int] = set()
    used_j: set[int] = set()
    for _score, _dist, i, j in pairs:
        if i in used_i or j in used_j:
            continue
        out[i] = authorships[j]
        used_i.add(i)
        used_j.add(j)
    return out


def build_author_lists(arxiv_works: pl.DataFrame, openalex_works: Sequence[OpenAlexWork]) -> pl.DataFrame:
    """One row per author of each enriched paper (``AUTHOR_LISTS_SCHEMA``), see the module docstring."""
    rows: list[dict[str, Any]] = []
    by_arxiv: dict[str, OpenAlexWork] = {}
    for work in openalex_works:
        if work.arxiv_id:
            by_arxiv.setdefault(work.arxiv_id, work)
    covered: set[str] = set()
    for rec in arxiv_works.sort("arxiv_id").iter_rows(named=True):
        names = [n for n in (rec["authors"] or []) if n]
        if not names or rec["arxiv_id"] in covered:
            continue
        covered.add(rec["arxiv_id"])
        work = by_arxiv.get(rec["arxiv_id"])
        aligned = align_authorships(names, work.authorships if work else ())
        for position, (name, match) in enumerate(zip(names, aligned), start=1):
            rows.append({
                "arxiv_id": rec["arxiv_id"], "openalex_work_id": work.openalex_id if work else None,
                "title_key": rec["title_key"], "name": name, "author_position": position, "evidence": "arxiv",
                "orcid": match.orcid if match else None,
                "openalex_author_id": match.openalex_author_id if match else None,
            })
    done_works: set[str] = set()
    for work in sorted(openalex_works, key=lambda w: w.openalex_id):
        if (work.arxiv_id and work.arxiv_id in covered) or work.openalex_id in done_works:
            continue
        if work.is_authors_truncated:
            continue  # a cut list is exactly what this table exists to replace
        done_works.add(work.openalex_id)
        if work.arxiv_id:
            covered.add(work.arxiv_id)
        position = 0
        for a in work.authorships:
            name = a.raw_author_name or a.display_name
            if not name:
                continue
            position += 1
            rows.append({
                "arxiv_id": work.arxiv_id, "openalex_work_id": work.openalex_id, "title_key": match_key(work.title),
                "name": name, "author_position": position, "evidence": "openalex", "orcid": a.orcid,
                "openalex_author_id": a.openalex_author_id,
            })
    return pl.DataFrame(rows, schema=AUTHOR_LISTS_SCHEMA) if rows else empty(AUTHOR_LISTS_SCHEMA)

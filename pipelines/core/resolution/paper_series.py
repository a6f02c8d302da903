"""Titles that are not one paper however alike: series (a column that recurs over the years by
other people) and catalogues (sources that list each work once), steps 6 and 8 of ``papers.py``."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.core.resolution.paper_features import PaperFeatures

# Title evidence never makes a paper whose records' years spread over more than this; an
# identifier (arXiv id, DOI) may (a 2019 preprint and its 2022 journal version).
MAX_YEAR_SPAN = 2
SERIES_VETO = "a series title (it recurs over the years by other people): years apart, or no shared author"
# A title key seen in this many distinct years (or spread wider than MAX_YEAR_SPAN) is a series.
SERIES_MIN_YEARS = 3


def series_flags(keys: list[str], years: list[int | None], authors: list[frozenset[str]],
                  sources: list[str | None]) -> list[bool]:
    """Per record, whether its title recurs as a series in this input: one source lists the same
    title key more than once, over at least ``SERIES_MIN_YEARS`` distinct years (or years more
    than ``MAX_YEAR_SPAN`` apart), by different people (two of its records list authors and share
    none). One paper's records lie within a couple of years, keep their authors when a citation
    gets the year wrong, and a source lists it once; a column that appears every issue under
    changing editors ("Editor's Notes", "Reminiscences on Influential Papers") does none of this.
    Two records of a series title are never one paper when their years are two or more apart or
    their author lists share nobody. Without a ``source`` column (one list of citations) no title
    is a series."""
    years_of: dict[str, set[int]] = {}
    lists_of: dict[str, list[frozenset[str]]] = {}
    per_source: dict[tuple[str, str], int] = {}
    repeated: set[str] = set()
    for key, year, names, source in zip(keys, years, authors, sources):
        if not key or source is None:
            continue
        per_source[(key, source)] = per_source.get((key, source), 0) + 1
        if per_source[(key, source)] > 1:
            repeated.add(key)
        if year is not None:
            years_of.setdefault(key, set()).add(year)
        if names:
            lists_of.setdefault(key, []).append(names)
    series = set()
    for key, ys in years_of.items():
        if key not in repeated:
            continue
        if len(ys) < SERIES_MIN_YEARS and max(ys) - min(ys) <= MAX_YEAR_SPAN:
            continue
        lists = list(dict.fromkeys(lists_of.get(key, [])))
        if any(a.isdisjoint(b) for x, a in enumerate(lists) for b in lists[x + 1:]):
            series.add(key)
    return [bool(key) and key in series for key in keys]


# A source that shows (almost) every distinctive title once is a catalogue — a bibliography such as
# DBLP or the ACM library, not profile pages or citation lists that repeat a work: two of its own
# records are two works ("Editor's Notes" of 2001 and of 2002, one editor's three "Chair's
# Message" of one year), whatever their titles say. Measured on the first clustering: of the
# source's records with at least CATALOGUE_MIN_CONTENT content words (titles nobody repeats by
# chance), at most CATALOGUE_MAX_SELF_SHARE share a paper with another record of the source of the
# same year (or without a year), among at least CATALOGUE_MIN_RECORDS such records. Records of one
# work in different years are the catalogue's own versions (a conference paper and its journal
# version are two entries of DBLP and of the ACM library), not repeats. Forbidding its records to
# merge with one another costs at most that share of its records, the bound the rule measures.
# Measured (share of repeats): DBLP 0.11 % and Google Scholar 1.57 % on DBLP-Scholar; ACM 0.40 %
# and DBLP 0.71 % on DBLP-ACM.
CATALOGUE_MIN_RECORDS = 200
CATALOGUE_MIN_CONTENT = 5
CATALOGUE_MAX_SELF_SHARE = 0.01


def catalogue_sources(feats: PaperFeatures, roots: list[int]) -> list[str]:
    """The sources of ``feats`` that list each work once, judged from the clustering ``roots``."""
    if not feats.sources:
        return []
    # Per (source, cluster): how many of its records carry each year (None: no year).
    years_of: dict[tuple[str, int], Counter] = {}
    for source, root, year in zip(feats.sources, roots, feats.years):
        if source is not None:
            years_of.setdefault((source, root), Counter())[year] += 1
    distinctive: dict[str, int] = {}
    repeated: dict[str, int] = {}
    for source, root, words, year in zip(feats.sources, roots, feats.n_content, feats.years):
        if source is None or words < CATALOGUE_MIN_CONTENT:
            continue
        distinctive[source] = distinctive.get(source, 0) + 1
        years = years_of[(source, root)]
        # Another record of the source in the cluster, of this year or either without one.
        same_year = years[year] - 1 + (years[None] if year is not None else sum(years.values()) - years[None])
        if same_year > 0:
            repeated[source] = repeated.get(source, 0) + 1
    return sorted(s for s, n in distinctive.items()
                  if n >= CATALOGUE_MIN_RECORDS and repeated.get(s, 0) <= CATALOGUE_MAX_SELF_SHARE * n)

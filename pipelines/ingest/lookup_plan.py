"""What the enrichment asks the arXiv and OpenAlex APIs for, night by night: the arXiv ids the
listings carry, the titles without one (searched by exact title, capped, newest first, retried
after a while), the titles for OpenAlex's title search (taking turns over a backlog), and the
hand-off to ``core`` (listings given the arXiv id a title search confirmed). No API calls here:
``api_lookups.py`` makes them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Iterable

import polars as pl

from pipelines.ingest.sources.arxiv import parse_arxiv_id
from pipelines.textnorm import match_key

# Title-search outcomes (enrichment.arxiv_title_searches.outcome).
FOUND = "found"
NOT_FOUND = "not_found"
REJECTED = "rejected"     # same title, but none of its authors is a name the listings show
ERROR = "error"           # the API refused or failed: searched again next night


TITLES_SCHEMA = {
    "title_key": pl.String,
    "title": pl.String,
    "year": pl.Int32,
    "last_listed": pl.Date,
    "names": pl.List(pl.String),
}


@dataclass(frozen=True)
class EnrichmentLimits:
    max_title_searches: int = 200       # per API per night (arXiv: 200 × 3 s = 10 minutes)
    max_author_lookups: int = 500       # OpenAlex authors by ORCID per night
    title_search_retry_days: int = 30   # a title arXiv did not have is asked again after this
    max_consecutive_failures: int = 3   # an API failing this many times in a row is left for the night


def empty(schema: dict) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def _title_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``title_key`` (computed once per distinct title)."""
    keys = frame.select("title").unique().with_columns(
        title_key=pl.col("title").map_elements(match_key, return_dtype=pl.String))
    return frame.join(keys, on="title", how="left")


def _normalized_id(value: str | None) -> str | None:
    parsed = parse_arxiv_id(value)
    return parsed[0] if parsed else None


def _with_ids(listings: pl.DataFrame) -> pl.DataFrame:
    ids = listings.select("arxiv_id").unique().with_columns(
        norm_id=pl.col("arxiv_id").map_elements(_normalized_id, return_dtype=pl.String))
    return listings.join(ids, on="arxiv_id", how="left", nulls_equal=True)


def listing_arxiv_ids(listings: pl.DataFrame) -> list[str]:
    """Distinct arXiv ids (normalised, version-less) the listings carry, sorted."""
    if listings.height == 0:
        return []
    return sorted(_with_ids(listings)["norm_id"].drop_nulls().unique().to_list())


def titles_without_id(listings: pl.DataFrame, profiles: pl.DataFrame) -> pl.DataFrame:
    """One row per title key no listing gives an arXiv id for (``TITLES_SCHEMA``).

    ``names``: every name the listings of that title show — byline names and the owners of the
    profiles listing it — used to confirm a title match. ``title``/``year``: the latest listing's.
    """
    if listings.height == 0:
        return empty(TITLES_SCHEMA)
    rows = _title_keys(_with_ids(listings)).filter(pl.col("title_key") != "")
    with_id = rows.filter(pl.col("norm_id").is_not_null())["title_key"].unique()
    rows = rows.filter(~pl.col("title_key").is_in(with_id.to_list()))
    if rows.height == 0:
        return empty(TITLES_SCHEMA)
    rows = rows.join(_owner_names(profiles), on=["source", "source_profile_id"], how="left")
    latest = rows.sort(["partition_date", "title", "year"], descending=[True, False, True], nulls_last=True).group_by(
        "title_key", maintain_order=True).agg(
        pl.col("title").first(),
        pl.col("year").first().cast(pl.Int32),
        pl.col("partition_date").max().alias("last_listed"),
    )
    names = (
        rows.select("title_key", name=pl.concat_list(pl.col("byline_authors").cast(pl.List(pl.String)), pl.col("owner_name")))
        .explode("name")
        .filter(pl.col("name").is_not_null() & (pl.col("name").str.strip_chars() != ""))
        .group_by("title_key").agg(pl.col("name").unique().sort().alias("names"))
    )
    latest = latest.join(names, on="title_key", how="left").with_columns(
        pl.col("names").fill_null(pl.lit([], dtype=pl.List(pl.String))))
    return latest.select(list(TITLES_SCHEMA)).cast(TITLES_SCHEMA).sort("title_key")


def _previous(searches: pl.DataFrame, day: date) -> pl.DataFrame:
    return searches.filter(pl.col("partition_date") != day) if searches.height else searches


def found_title_matches(searches: pl.DataFrame) -> pl.DataFrame:
    """``title_key → arxiv_id`` from the title searches that found a paper (the latest per title)."""
    schema = {"title_key": pl.String, "arxiv_id": pl.String}
    if searches.height == 0:
        return empty(schema)
    return (
        searches.filter((pl.col("outcome") == FOUND) & pl.col("arxiv_id").is_not_null())
        .sort(["partition_date", "searched_at"], descending=True, nulls_last=True)
        .unique("title_key", keep="first")
        .select(list(schema)).sort("title_key")
    )


def select_arxiv_title_searches(titles: pl.DataFrame, searches: pl.DataFrame, day: date,
                                limits: EnrichmentLimits) -> tuple[pl.DataFrame, int]:
    """The titles to search on arXiv tonight (newest listings first, at most the cap) and how many wait.

    ``searches``: ``enrichment.arxiv_title_searches`` rows (any partition). This partition's own
    earlier rows do not count, so a re-run selects the same titles (and the cache answers them).
    """
    previous = _previous(searches, day)
    settled: set[str] = set()
    if previous.height:
        since = day - timedelta(days=limits.title_search_retry_days)
        settled = set(previous.filter(
            (pl.col("outcome") == FOUND)
            | (pl.col("outcome").is_in([NOT_FOUND, REJECTED]) & (pl.col("partition_date") >= since))
        )["title_key"].to_list())
    candidates = titles.filter(~pl.col("title_key").is_in(list(settled))).sort(
        ["last_listed", "title_key"], descending=[True, False])
    cap = max(0, limits.max_title_searches)
    return candidates.head(cap), max(0, candidates.height - cap)


def arxiv_ids_to_fetch(listings: pl.DataFrame, titles: pl.DataFrame, searches: pl.DataFrame) -> dict[str, str]:
    """``arxiv_id → matched_by`` for the partition: the listings' ids ('id') and the ids title
    searches found for titles listed up to the partition ('title')."""
    wanted = {i: "id" for i in listing_arxiv_ids(listings)}
    if titles.height and searches.height:
        found = found_title_matches(searches).filter(pl.col("title_key").is_in(titles["title_key"].to_list()))
        for arxiv_id in found["arxiv_id"].to_list():
            norm = _normalized_id(arxiv_id)
            if norm:
                wanted.setdefault(norm, "title")
    return dict(sorted(wanted.items()))


def titles_for_openalex(titles: pl.DataFrame, searches: pl.DataFrame, day: date, cap: int,
                        previously_matched: Iterable[str] = ()) -> tuple[pl.DataFrame, int]:
    """Titles arXiv does not have (latest arXiv outcome not_found / rejected): search OpenAlex.

    Titles OpenAlex matched on an earlier night come first (their citation counts need the
    refresh). The rest take turns: in a fixed (hashed) order, each night starting where the
    previous night's share ended, so a backlog larger than the cap is covered in
    ``ceil(backlog / cap)`` nights instead of the same first titles every night.
    """
    cap = max(0, cap)
    if titles.height == 0 or searches.height == 0:
        return titles.head(0), 0
    latest = (
        searches.sort(["partition_date", "searched_at"], descending=True, nulls_last=True)
        .unique("title_key", keep="first")
    )
    absent = set(latest.filter(pl.col("outcome").is_in([NOT_FOUND, REJECTED]))["title_key"].to_list())
    candidates = titles.filter(pl.col("title_key").is_in(list(absent)))
    again = set(previously_matched)
    first = candidates.filter(pl.col("title_key").is_in(list(again))).sort("title_key")
    rest = candidates.filter(~pl.col("title_key").is_in(list(again))).with_columns(
        _order=pl.col("title_key").map_elements(lambda k: hashlib.sha1(k.encode()).hexdigest(), return_dtype=pl.String)
    ).sort("_order").drop("_order")
    share = cap - min(cap, first.height)
    if rest.height and share:
        start = (day.toordinal() * share) % rest.height
        rest = pl.concat([rest.slice(start), rest.slice(0, start)])
    ordered = pl.concat([first, rest])
    return ordered.head(cap), max(0, ordered.height - cap)


def fill_listing_arxiv_ids(listings: pl.DataFrame, searches: pl.DataFrame) -> pl.DataFrame:
    """Listings with ``arxiv_id`` filled from confirmed title matches where the page gave none.

    The hand-off to ``core``: a BZPEER text capture carries no arXiv id, so without this the
    enrichment author lists (joined on ``arxiv_id``) and OpenAlex citation counts never reach its
    paper. A match is an exact title (``match_key``) that shares an author with the listings.
    """
    if listings.height == 0 or searches.height == 0:
        return listings
    found = found_title_matches(searches).rename({"arxiv_id": "_matched_id"})
    if found.height == 0:
        return listings
    keyed = _title_keys(listings).join(found, on="title_key", how="left")
    return keyed.with_columns(arxiv_id=pl.coalesce("arxiv_id", "_matched_id")).drop("title_key", "_matched_id")


def _owner_names(profiles: pl.DataFrame) -> pl.DataFrame:
    schema = {"source": pl.String, "source_profile_id": pl.String, "owner_name": pl.String}
    if profiles.height == 0:
        return pl.DataFrame(schema=schema)
    return (
        profiles.filter(pl.col("name").is_not_null())
        .sort("partition_date", descending=True)
        .unique(["source", "source_profile_id"], keep="first")
        .select("source", "source_profile_id", owner_name="name")
    )

"""The core build's mentions step: every author mention of tonight's papers — each listing's profile
owner (``owner:<listing_key>``), each byline name (``byline:<listing_key>:<name key>``) and each name
of an enrichment author list (``arxiv:``/``openalex:<arxiv id>:<name key>``) — and the rows the author
matcher sees, collapsed to one per (paper, owner profile) and per (paper, name key), so its cost
follows distinct evidence, not the nights stored."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pipelines.core.frames import per_distinct
from pipelines.textnorm import match_key


@dataclass
class Mentions:
    """Tonight's author mentions and the author matcher's input."""

    mentions: pl.DataFrame   # one row per evidence key, with its collapse ``group``
    collapsed: pl.DataFrame  # one matcher row per group; ``mention_id`` is the group's smallest key


def collect_mentions(listings: pl.DataFrame, extra_authorships: pl.DataFrame | None = None) -> Mentions:
    """Step "mentions": the mentions of ``listings`` (the current listings with their ``paper_id``)
    and of ``extra_authorships`` (enrichment author lists: ``arxiv_id``, ``name``, ``author_position``,
    ``evidence``, ``orcid``, ``openalex_author_id``), collapsed for the matcher."""
    mentions = _listing_mentions(listings)
    extra = _extra_mentions(extra_authorships, listings)
    if extra is not None:
        mentions = pl.concat([mentions, extra], how="vertical_relaxed").unique("key", keep="first", maintain_order=True)
    return _collapse(mentions, listings)


def _listing_mentions(latest: pl.DataFrame) -> pl.DataFrame:
    """Every author mention of the current listings: each listing's profile owner, and each byline name."""
    owner_mentions = latest.filter(pl.col("owner_name").is_not_null()).select(
        key=pl.concat_str(pl.lit("owner:"), "listing_key"),
        name="owner_name", paper_id="paper_id", source="source", source_profile_id="source_profile_id",
        is_profile_owner=pl.lit(True), author_position=pl.lit(None, pl.Int32), coauthors="byline_authors",
        evidence=pl.lit("profile"), orcid=pl.lit(None, pl.String), openalex_id=pl.lit(None, pl.String),
        first_seen="first_seen",
    )
    byline_mentions = (
        latest.select("listing_key", "paper_id", "source", "byline_authors", "owner_name", "first_seen")
        .with_columns(author_position=pl.int_ranges(1, pl.col("byline_authors").list.len() + 1))
        .explode(["byline_authors", "author_position"])
        .filter(pl.col("byline_authors").is_not_null())
        .with_columns(name=pl.col("byline_authors"))
        .join(
            latest.select("listing_key", all_names="byline_authors"), on="listing_key"
        )
        .select(
            key=pl.concat_str(pl.lit("byline:"), "listing_key", pl.lit(":"), per_distinct("name", match_key)),
            name="name", paper_id="paper_id", source="source", source_profile_id=pl.lit(None, pl.String),
            is_profile_owner=pl.lit(False), author_position=pl.col("author_position").cast(pl.Int32),
            coauthors=pl.col("all_names").list.set_difference(pl.concat_list("name")),
            evidence=pl.lit("byline"), orcid=pl.lit(None, pl.String), openalex_id=pl.lit(None, pl.String),
            first_seen="first_seen",
        )
    )
    return pl.concat([owner_mentions, byline_mentions], how="vertical_relaxed").unique("key", keep="first", maintain_order=True)


def _extra_mentions(extra: pl.DataFrame | None, latest: pl.DataFrame) -> pl.DataFrame | None:
    """The names of the enrichment author lists whose arXiv id is one of the listings' papers."""
    if extra is None or extra.height == 0:
        return None
    by_arxiv = latest.filter(pl.col("arxiv_id").is_not_null()).group_by("arxiv_id").agg(pl.col("paper_id").first())
    rows = extra.join(by_arxiv, on="arxiv_id")
    if rows.height == 0:
        return None
    names = rows.group_by("arxiv_id").agg(pl.col("name").alias("all_names"))
    seen = latest.group_by("paper_id").agg(pl.col("first_seen").min())
    return rows.join(names, on="arxiv_id").join(seen, on="paper_id", how="left").select(
        key=pl.concat_str(pl.col("evidence"), pl.lit(":"), "arxiv_id", pl.lit(":"), per_distinct("name", match_key)),
        name="name", paper_id="paper_id", source=pl.col("evidence"), source_profile_id=pl.lit(None, pl.String),
        is_profile_owner=pl.lit(False), author_position=pl.col("author_position").cast(pl.Int32),
        coauthors=pl.col("all_names").list.set_difference(pl.concat_list("name")), evidence="evidence",
        orcid=pl.col("orcid").cast(pl.String), openalex_id=pl.col("openalex_author_id").cast(pl.String),
        first_seen="first_seen",
    )


def _collapse(mentions: pl.DataFrame, latest: pl.DataFrame) -> Mentions:
    """Collapse: one matcher row per (paper, owner profile) and per (paper, name key)."""
    mentions = mentions.with_columns(
        group=pl.when(pl.col("is_profile_owner"))
        .then(pl.concat_str(pl.lit("o|"), "paper_id", pl.lit("|"), "source", pl.lit("|"), "source_profile_id"))
        .otherwise(pl.concat_str(pl.lit("n|"), "paper_id", pl.lit("|"), per_distinct("name", match_key)))
    )
    papers_info = latest.group_by("paper_id").agg(pl.col("title").first(), pl.col("year").first(), pl.col("venue").first())
    collapsed = (
        mentions.group_by("group").agg(
            pl.col("key").min().alias("mention_id"), pl.col("name").first(), pl.col("paper_id").first(),
            pl.col("coauthors").list.explode(keep_nulls=False, empty_as_null=False).unique().sort().alias("coauthors"),
            pl.col("source").first(), pl.col("source_profile_id").first(), pl.col("is_profile_owner").first(),
            pl.col("orcid").drop_nulls().min().alias("orcid"), pl.col("openalex_id").drop_nulls().min().alias("openalex_id"),
        )
        .join(papers_info, on="paper_id", how="left")
        .with_columns(affiliation=pl.lit(None, pl.String), coauthors=pl.col("coauthors").list.drop_nulls())
        .sort("mention_id")
    )
    return Mentions(mentions=mentions, collapsed=collapsed)

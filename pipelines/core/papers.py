"""The core build's paper steps: tonight's current listings (one row per listing key), the paper
matcher over them, then stable paper ids, the paper overrides and the identifier crosswalk.

``match_listings`` is the matcher alone (records → ``PaperNight``, the title-diff cache);
``identify_papers`` turns its clusters into paper ids (``core.paper_listings``' keys, the ids the
author side hangs its mentions on)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from pipelines.core import identifiers
from pipelines.core.identity.overrides import OverrideResult, Overrides
from pipelines.core.identity.stable_ids import IdAssignment
from pipelines.core.ids import overridden, stable_ids
from pipelines.core.resolution.incremental import scheduled_full
from pipelines.core.resolution.incremental_papers import PaperNight, resolve_papers_incrementally
from pipelines.core.resolution.papers import TitleDiffCache
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.timing import StageTimer


def latest_listings(listings: pl.DataFrame, profiles: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The newest row of every listing key (a paper on a profile) with its ``first_seen`` and the
    profile owner's name; and the owners (latest name per profile)."""
    if "first_seen" not in listings.columns:
        listings = listings.with_columns(first_seen=pl.col("partition_date").min().over("listing_key"))
    latest = (
        listings.sort(["partition_date", "listing_id"], descending=[True, False]).unique("listing_key", keep="first", maintain_order=True)
        # Newest night first, then key order: every "first" picked downstream (a collapsed
        # mention's name, a paper's venue) then follows the content, not the night's row ids, so
        # unchanged listings give the author matcher identical input from night to night.
        .sort(["partition_date", "listing_key"], descending=[True, False])
    )
    owners = (
        profiles.sort(["partition_date", "captured_at", "capture_id"], descending=True)
        .unique(["source", "source_profile_id"], keep="first")
        .select("source", "source_profile_id", owner_name="name", last_captured="partition_date")
    )
    return latest.join(owners, on=["source", "source_profile_id"], how="left"), owners


def paper_records(latest: pl.DataFrame) -> pl.DataFrame:
    """The records the paper matcher sees: one per listing key."""
    return latest.select(
        record_id="listing_key",
        title="title",
        # The owner is an author of every paper on their profile, even when a truncated byline hides them.
        authors=pl.when(pl.col("owner_name").is_not_null())
        .then(pl.col("byline_authors").list.concat(pl.concat_list("owner_name")).list.unique(maintain_order=True))
        .otherwise(pl.col("byline_authors")),
        venue="venue",
        year="year",
        source="source",
        arxiv_id="arxiv_id",
        doi=pl.col("doi") if "doi" in latest.columns else pl.lit(None, pl.String),
    )


@dataclass
class PaperMatch:
    """What the paper matcher made of tonight's listings."""

    night: PaperNight            # assignments (listing key → cluster), review pairs, the state for the next night
    title_diffs: pl.DataFrame    # cache.title_diffs for the next run
    diffs_reused: int
    diffs_computed: int


def match_listings(latest: pl.DataFrame, *, title_diffs: pl.DataFrame | TitleDiffCache | None,
                   state: pl.DataFrame | None, review: pl.DataFrame | None, today: date,
                   timer: StageTimer, options: MatchOptions) -> PaperMatch:
    """Step "papers" (the matcher): the listings (with identifiers attached) resolved into papers,
    incrementally when ``state``/``review`` (``cache.paper_matches`` / ``cache.paper_match_review``)
    allow it; ``title_diffs`` (``cache.title_diffs``) are reused where the same titles meet again."""
    records = paper_records(latest)
    diffs_cache = title_diffs if isinstance(title_diffs, TitleDiffCache) else TitleDiffCache(title_diffs)
    del title_diffs
    with timer.stage("resolve_papers", rows=records.height):
        night = resolve_papers_incrementally(records, state, review, title_diffs=diffs_cache,
                                             full_reason=scheduled_full(today), options=options)
    # The next run's cache; the earlier runs' diffs are let go here, unless only a subset was
    # compared tonight (the next night still needs the rest).
    used = diffs_cache.finish(keep_earlier=night.stats["mode"] == "incremental")
    return PaperMatch(night=night, title_diffs=used, diffs_reused=diffs_cache.reused,
                      diffs_computed=diffs_cache.computed)


@dataclass
class Papers:
    """Tonight's papers: the listings with their ``paper_id``, how each key got it, the crosswalk."""

    listings: pl.DataFrame        # the current listings with identifiers and paper_id
    key_to_paper: pl.DataFrame    # listing_key, method, score, algo_id (before overrides), paper_id
    listing_papers: pl.DataFrame  # listing_key, paper_id, method, score, listing_id (CoreTables.listing_papers)
    identifiers: identifiers.IdentifierTables
    assignment: IdAssignment      # the updated registry and the algorithm's redirects
    overrides: OverrideResult
    match: PaperMatch


def identify_papers(attached: identifiers.ListingIdentifiers, match: PaperMatch, registry: pl.DataFrame, *,
                    redirects: pl.DataFrame, overrides: Overrides, today: date) -> Papers:
    """Step "papers" (the ids): stable paper ids for the matcher's clusters, the paper overrides
    (a changed id is method 'override'), and the identifier crosswalk of the papers."""
    latest = attached.listings
    matched = match.night.assignments.select(key="record_id", cluster="paper_id", method="method", score="score")
    assignment = stable_ids(matched, registry, "paper", today=today)
    members = (
        matched.join(assignment.cluster_ids, on="cluster")
        .join(latest.select(key="listing_key", label="title"), on="key")
        .with_columns(profile=pl.lit(None, pl.String))
    )
    over = overridden(members, assignment, "paper", overrides=overrides, redirects=redirects, today=today)
    key_to_paper = (
        members.select("key", "method", "score", algo_id="id")
        .join(over.members.select("key", "id"), on="key")
        .with_columns(method=pl.when(pl.col("id") != pl.col("algo_id")).then(pl.lit("override")).otherwise(pl.col("method")))
        .rename({"key": "listing_key", "id": "paper_id"})
    )
    listing_papers = (
        key_to_paper.select("listing_key", "paper_id", "method", pl.col("score").cast(pl.Float64))
        .join(latest.select("listing_key", "listing_id"), on="listing_key", how="left")
        .sort("listing_key")
    )
    return Papers(
        listings=latest.join(key_to_paper.select("listing_key", "paper_id"), on="listing_key"),
        key_to_paper=key_to_paper, listing_papers=listing_papers,
        identifiers=identifiers.build_crosswalk(attached, key_to_paper, today=today),
        assignment=assignment, overrides=over, match=match,
    )

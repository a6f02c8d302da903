"""The core build's author steps: the author matcher over the collapsed mentions, then stable author
ids for its clusters and the author overrides (merges, splits, profile assignments), every mention
ending with its ``author_id``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from pipelines.core.identity.overrides import OverrideResult, Overrides
from pipelines.core.identity.stable_ids import IdAssignment
from pipelines.core.ids import overridden, stable_ids
from pipelines.core.mentions import Mentions
from pipelines.core.resolution.incremental import AuthorNight, resolve_authors_incrementally, scheduled_full
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.timing import StageTimer


def match_mentions(collapsed: pl.DataFrame, *, state: pl.DataFrame | None, review: pl.DataFrame | None,
                   model: pl.DataFrame | None, today: date, timer: StageTimer, options: MatchOptions) -> AuthorNight:
    """Step "authors": the collapsed mentions resolved into people, incrementally when ``state`` /
    ``review`` / ``model`` (``cache.author_matches`` / ``cache.author_match_review`` /
    ``cache.author_model``) allow it."""
    with timer.stage("resolve_authors", rows=collapsed.height):
        return resolve_authors_incrementally(collapsed.drop("group"), state, review, model=model,
                                             full_reason=scheduled_full(today), options=options)


@dataclass
class Authors:
    """Tonight's authors: every mention with its ``author_id``, and how the ids came about."""

    members: pl.DataFrame       # the mentions with group, cluster, a_method, a_score, label, profile, author_id
    mentions_matched: int       # mentions the matcher placed (stats: author_mentions)
    assignment: IdAssignment    # the updated registry and the algorithm's redirects
    overrides: OverrideResult
    night: AuthorNight
    collapsed: pl.DataFrame     # the matcher's rows (the review queue names their authors)


def identify_authors(mentions: Mentions, night: AuthorNight, registry: pl.DataFrame, *, redirects: pl.DataFrame,
                     overrides: Overrides, today: date) -> Authors:
    """Step "overrides": stable author ids for the matcher's clusters, then the author overrides."""
    collapsed = mentions.collapsed
    group_to_cluster = collapsed.select("group", "mention_id").join(
        night.assignments.select("mention_id", cluster="author_id", a_method="method", a_score="score"), on="mention_id")
    matched = mentions.mentions.join(group_to_cluster.drop("mention_id"), on="group")
    assignment = stable_ids(matched, registry, "author", today=today)
    members = matched.join(assignment.cluster_ids, on="cluster").with_columns(
        label=pl.col("name"),
        profile=pl.when(pl.col("is_profile_owner")).then(pl.concat_str("source", pl.lit(":"), "source_profile_id")),
    )
    over = overridden(members, assignment, "author", overrides=overrides, redirects=redirects, today=today)
    members = members.drop("id").join(over.members.select("key", "id"), on="key").rename({"id": "author_id"})
    return Authors(members=members, mentions_matched=matched.height, assignment=assignment, overrides=over,
                   night=night, collapsed=collapsed)

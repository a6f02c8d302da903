"""Incremental nights for the paper matcher: re-resolve the papers a change can reach, keep every
other paper as the last night left it.

The author matcher's incremental nights (``incremental.py``) work from what the last resolution
saw and decided; so does this, with the paper matcher's own notion of reach. The core step keeps,
per record (a listing key), a digest of the record's matcher input and its cluster, method and
score (``cache.paper_matches``), and the review rows (``cache.paper_match_review``):

1. **What changed.** A record is *changed* when it is new or its digest (title, author list,
   year, arXiv id, DOI — every column the matcher reads) differs; records gone since the last
   night are *removed*.
2. **Who a change can reach.** Blocking runs on the whole corpus every night, on the titles
   alone (``papers.candidate_graph``: the same keys, word rarity and oversize-block windows as a
   full resolution, without parsing author lists or scoring anything — about a fifth of a
   full resolution's cost). The *seed* is the changed records plus every record of a paper that
   held a changed or removed one. A record can only be merged with, or queued for review
   against, a record it is a candidate pair with or shares an identifier (arXiv id, DOI) with.
   So the *subset* is the seed, the records those pairs and identifiers reach, the whole papers
   of all of these (and whole collapsed nodes: records with one title, year and identifiers),
   and the papers the last review queue paired with any of them.
3. **Re-resolve the subset** with the ordinary matcher (``resolve_papers``), handing it the
   corpus-wide candidate pairs among the subset rather than letting it block the subset on its
   own (rarity and oversize blocks are corpus-wide facts). Every other record keeps its paper,
   method and score. Papers are whole, so the result is a partition and labels (the smallest
   record id of a paper) cannot collide.
4. **Review queue**: the subset's new rows, plus the last night's rows that still hold.

Candidate pairs between unchanged records are scored as they were (a pair's score depends only
on its two records), so what this does not redo is the same kind of ripple as for authors: a
paper outside the subset whose fate depended on a constraint with a paper inside it (a year
span, a cannot-link) two steps away; and a pair of unchanged records that becomes, or stops
being, a candidate pair only because the corpus around them changed (a word grew common, a block
grew oversize and its sorted windows shifted). (A pair's title score is a function of the pair
alone: ``paper_scoring.score_pairs`` keys its title comparisons by both title keys *and* whether one title is
a part of the other, so the subset scores every pair as the full run does.)
The weekly full night heals both (``incremental.scheduled_full``), as do the fallbacks: no
state (or no review queue beside it), another matcher version, more than ``MAX_CHANGED_SHARE``
changed, or ``SCHOLARHOUSE_INCREMENTAL_RESOLUTION=off``. The weekly full night also trims the
title-diff cache, which incremental nights only add to.

Pure logic, Polars in and out; no Dagster, no warehouse.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import polars as pl

from pipelines.core.resolution.incremental import (MAX_CHANGED_SHARE, StateComparison, code_fingerprint, compare_with_state,
                                                   matcher_modules, merge_review)
from pipelines.core.resolution.papers import ASSIGNMENT_SCHEMA, TitleDiffCache, candidate_graph, resolve_papers
from pipelines.core.resolution.review import REVIEW_SCHEMA
from pipelines.core.resolution.runtime import MatchOptions

PAPER_STATE_SCHEMA = {
    "record_id": pl.String,
    "digest": pl.UInt64,
    "paper_id": pl.String,  # the matcher's cluster label (smallest record id), not the stable id
    "method": pl.String,
    "score": pl.Float64,
    "version": pl.String,
}

# What the paper matcher reads of a record (paper_features.prepare_features), with the types the digest uses.
_MATCHER_COLUMNS = ("title", "authors", "year", "arxiv_id", "doi")
# The pipeline's sources are profile pages, which list one paper on every author's profile: none
# is a catalogue (papers.CATALOGUE_MAX_SELF_SHARE), whatever one night's pages happen to repeat.
PIPELINE_CATALOGUES: tuple[str, ...] = ()


def paper_matcher_version() -> str:
    """Fingerprint of the paper matcher's code and of Polars' and rapidfuzz's versions: state
    written by another version is not used."""
    import rapidfuzz

    from pipelines.core.resolution import incremental, papers

    return code_fingerprint([*matcher_modules(papers), incremental, sys.modules[__name__]],
                            [pl.__version__, rapidfuzz.__version__])


def record_digests(records: pl.DataFrame) -> pl.Series:
    """Per record, a 64-bit digest of what the paper matcher reads of it."""
    columns = [pl.col("record_id").cast(pl.String)]
    for name in _MATCHER_COLUMNS:
        if name not in records.columns:
            columns.append(pl.lit(None, pl.String).alias(name))
        elif name == "authors" and records.schema[name] != pl.String:
            columns.append(pl.col(name).cast(pl.List(pl.String)))
        elif name == "year":
            columns.append(pl.col(name).cast(pl.Int64, strict=False))
        else:
            columns.append(pl.col(name).cast(pl.String))
    return records.select(pl.struct(columns).hash().alias("digest"))["digest"]


@dataclass
class PaperNight:
    """One night's paper resolution and the state the next night starts from."""

    assignments: pl.DataFrame  # papers.ASSIGNMENT_SCHEMA, sorted by record_id
    review: pl.DataFrame  # REVIEW_SCHEMA
    state: pl.DataFrame  # PAPER_STATE_SCHEMA
    stats: dict = field(default_factory=dict)


def resolve_papers_incrementally(
    records: pl.DataFrame,
    state: pl.DataFrame | None = None,
    review: pl.DataFrame | None = None,
    *,
    title_diffs: TitleDiffCache | None = None,
    max_changed_share: float = MAX_CHANGED_SHARE,
    full_reason: str | None = None,
    options: MatchOptions | None = None,
) -> PaperNight:
    """``resolve_papers`` for a night that follows another: ``state``/``review`` are what the
    last night returned (``PaperNight.state``/``.review``). Without them — or when they cannot be
    used, or ``full_reason`` asks for it — every record is resolved; ``stats["mode"]`` says which
    ran and why. ``options``: how the matcher runs (workers; whether a night may be incremental)."""
    options = options or MatchOptions()
    if records.height == 0:
        return PaperNight(pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA),
                          pl.DataFrame(schema=PAPER_STATE_SCHEMA), {"mode": "full", "reason": "no records"})
    if "record_id" not in records.columns:
        raise ValueError("records lack columns: ['record_id']")
    records = records.with_columns(pl.col("record_id").cast(pl.String))
    if records["record_id"].null_count() or records["record_id"].n_unique() != records.height:
        raise ValueError("record_id must be unique and not null")
    current, version, comparison = compare_records(records, state, review, full_reason=full_reason,
                                                   max_changed_share=max_changed_share, incremental=options.incremental)
    reason = comparison.reason
    if reason is not None:
        assigned, queue = resolve_papers(records, title_diffs=title_diffs, workers=options.workers, catalogues=PIPELINE_CATALOGUES)
        return PaperNight(assigned, queue, _state(current, assigned, version),
                          {"mode": "full", "reason": reason, "resolved": records.height})
    return _incremental(records, current, comparison.joined, comparison.changed, comparison.removed, review, version,
                        title_diffs, options.workers)


def compare_records(records: pl.DataFrame, state: pl.DataFrame | None, review: pl.DataFrame | None, *,
                    full_reason: str | None = None, max_changed_share: float = MAX_CHANGED_SHARE,
                    incremental: bool = True) -> tuple[pl.DataFrame, str, StateComparison]:
    """Tonight's records against the last night's ``state``: their digests (``record_id``,
    ``digest``), the matcher's version, and whether tonight can be incremental — the one decision
    :func:`resolve_papers_incrementally` and the core's shard plan both take."""
    version = paper_matcher_version()
    current = pl.DataFrame({"record_id": records["record_id"].cast(pl.String), "digest": record_digests(records)})
    comparison = compare_with_state(
        current, state, PAPER_STATE_SCHEMA, "record_id", version, what="records", max_changed_share=max_changed_share,
        full_reason=full_reason,
        extra_reason=None if review is not None else "no earlier review queue (its rows between kept papers would be lost)",
        incremental=incremental)
    return current, version, comparison


def _state(current: pl.DataFrame, assigned: pl.DataFrame, version: str) -> pl.DataFrame:
    return (
        current.join(assigned.select("record_id", "paper_id", "method", "score"), on="record_id", how="left")
        .with_columns(version=pl.lit(version))
        .select(list(PAPER_STATE_SCHEMA)).cast(PAPER_STATE_SCHEMA)
        .sort("record_id")
    )


def _incremental(records, current, joined, changed, removed, review, version, title_diffs, workers) -> PaperNight:
    frame = joined.select("record_id", "paper_id", "method", "score").with_columns(changed=changed)
    n_changed = int(changed.sum())
    if n_changed == 0 and removed.height == 0:
        assigned = frame.select(list(ASSIGNMENT_SCHEMA)).cast(ASSIGNMENT_SCHEMA).sort("record_id")
        queue = review.select(list(REVIEW_SCHEMA)).cast(REVIEW_SCHEMA) if review is not None else pl.DataFrame(schema=REVIEW_SCHEMA)
        return PaperNight(assigned, queue, _state(current, assigned, version),
                          {"mode": "incremental", "changed": 0, "removed": 0, "resolved": 0})

    graph = candidate_graph(records)
    node_of = graph.nodes  # record_id, node_id
    cluster_of = frame.select("record_id", "paper_id").drop_nulls()

    touched = set(frame.filter(pl.col("changed"))["paper_id"].drop_nulls().to_list()) | set(removed["paper_id"].drop_nulls().to_list())
    seed = frame.filter(pl.col("changed") | pl.col("paper_id").is_in(list(touched)).fill_null(False))["record_id"]
    seed_nodes = node_of.filter(pl.col("record_id").is_in(seed.implode()))["node_id"].unique()

    # The records the seed could be compared with: candidate pairs and shared identifiers.
    pairs = graph.pairs
    touching = pairs.filter(pl.col("left_id").is_in(seed_nodes.implode()) | pl.col("right_id").is_in(seed_nodes.implode()))
    reached_nodes = pl.concat([seed_nodes, touching["left_id"], touching["right_id"]]).unique()
    seed_labels = graph.identifiers.filter(pl.col("record_id").is_in(seed.implode()))["label"].unique()
    by_identifier = graph.identifiers.filter(pl.col("label").is_in(seed_labels.implode()))["record_id"]
    reached_nodes = pl.concat([reached_nodes, node_of.filter(pl.col("record_id").is_in(by_identifier.implode()))["node_id"]]).unique()

    # Whole papers and whole nodes; then the papers the last review queue paired with them.
    nodes, clusters = _whole(set(reached_nodes.to_list()), set(), node_of, cluster_of)
    if review is not None and review.height:
        c = list(clusters)
        clusters |= set(review.filter(pl.col("left_cluster").is_in(c))["right_cluster"].to_list())
        clusters |= set(review.filter(pl.col("right_cluster").is_in(c))["left_cluster"].to_list())
        nodes, clusters = _whole(nodes, clusters, node_of, cluster_of)

    in_subset = node_of.filter(pl.col("node_id").is_in(list(nodes)))["record_id"]
    subset = records.filter(pl.col("record_id").is_in(in_subset.implode()))
    node_list = list(nodes)
    candidates = pairs.filter(pl.col("left_id").is_in(node_list) & pl.col("right_id").is_in(node_list))
    assigned_sub, review_sub = resolve_papers(subset, title_diffs=title_diffs, candidates=candidates, workers=workers,
                                             catalogues=PIPELINE_CATALOGUES)

    kept = frame.filter(~pl.col("record_id").is_in(in_subset.implode())).select(list(ASSIGNMENT_SCHEMA))
    assigned = pl.concat([kept.cast(ASSIGNMENT_SCHEMA), assigned_sub.cast(ASSIGNMENT_SCHEMA)]).sort("record_id")
    queue = merge_review(
        review, review_sub, assigned.select(id="record_id", cluster="paper_id"), set(subset["record_id"].to_list()),
        records.select(id="record_id", label=pl.col("title").cast(pl.String).fill_null("")))
    return PaperNight(assigned, queue, _state(current, assigned, version), {
        "mode": "incremental", "changed": n_changed, "removed": removed.height, "resolved": subset.height,
        "candidate_pairs": candidates.height,
    })


def _whole(nodes: set[str], clusters: set[str], node_of: pl.DataFrame, cluster_of: pl.DataFrame) -> tuple[set[str], set[str]]:
    """Grow (nodes, clusters) until every node's records' papers and every paper's records'
    nodes are in: the subset never splits a paper or a collapsed node."""
    while True:
        records = pl.concat([
            node_of.filter(pl.col("node_id").is_in(list(nodes)))["record_id"],
            cluster_of.filter(pl.col("paper_id").is_in(list(clusters)))["record_id"],
        ]).unique()
        grown_nodes = nodes | set(node_of.filter(pl.col("record_id").is_in(records.implode()))["node_id"].to_list())
        grown_clusters = clusters | set(cluster_of.filter(pl.col("record_id").is_in(records.implode()))["paper_id"].to_list())
        if grown_nodes == nodes and grown_clusters == clusters:
            return nodes, clusters
        nodes, clusters = grown_nodes, grown_clusters

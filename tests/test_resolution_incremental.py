"""Incremental author nights: only the people a change can reach are re-resolved, and the result
is the full resolution's wherever the change's reach is one step (resolution/incremental.py)."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.resolution import resolve_authors
from pipelines.resolution.incremental import (
    AUTHOR_STATE_SCHEMA,
    mention_digests,
    resolve_authors_incrementally,
)
from pipelines.resolution.synthetic import synthetic_mentions


@pytest.fixture(scope="module")
def corpus():
    frame, _ = synthetic_mentions(seed=7, n_groups=80)
    return frame.sort("mention_id")


def _night(frame, previous=None, **kwargs):
    if previous is None:
        return resolve_authors_incrementally(frame, **kwargs)
    return resolve_authors_incrementally(frame, previous.state, previous.review, **kwargs)


def _papers(frame: pl.DataFrame) -> list[str]:
    return frame["paper_id"].drop_nulls().unique().sort().to_list()


def test_first_night_is_a_full_resolution_and_leaves_its_state(corpus):
    night = _night(corpus)
    whole, review = resolve_authors(corpus)
    assert night.stats["mode"] == "full" and night.stats["reason"] == "no earlier resolution"
    assert night.assignments.equals(whole) and night.review.equals(review)
    assert night.state.schema == pl.Schema(AUTHOR_STATE_SCHEMA)
    assert night.state.height == corpus.height and night.state["labels"].list.len().min() > 0


def test_an_unchanged_night_resolves_nobody_and_returns_the_same_result(corpus):
    first = _night(corpus)
    again = _night(corpus.sample(fraction=1.0, shuffle=True, seed=3), first)
    assert again.stats == {"mode": "incremental", "changed": 0, "removed": 0, "resolved": 0}
    assert again.assignments.equals(first.assignments)
    assert again.review.equals(first.review)
    assert again.state.equals(first.state)


@pytest.mark.parametrize("change", ["added", "removed"])
def test_a_night_with_a_few_papers_changed_matches_the_full_resolution(corpus, change):
    papers = _papers(corpus)
    few = set(papers[:: max(1, len(papers) // 4)][:4])
    smaller = corpus.filter(~pl.col("paper_id").is_in(list(few)))
    before, after = (smaller, corpus) if change == "added" else (corpus, smaller)
    night = _night(after, _night(before), max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    assert 0 < night.stats["resolved"] < after.height
    whole, review = resolve_authors(after)
    assert night.assignments.equals(whole)
    assert night.review.equals(review)


def test_a_new_coauthor_changes_every_mention_of_that_paper():
    base = pl.DataFrame({
        "mention_id": ["a", "b", "c"], "name": ["Ann Lee", "Bo Chen", "Cy Park"], "paper_id": ["p1", "p1", "p2"],
        "coauthors": [["Bo Chen"], ["Ann Lee"], []],
    })
    before = mention_digests(base)
    with_third = pl.concat([base, pl.DataFrame({"mention_id": ["d"], "name": ["Dee Kim"], "paper_id": ["p1"],
                                                "coauthors": [["Ann Lee", "Bo Chen"]]})])
    after = mention_digests(with_third)
    assert after[0] != before[0] and after[1] != before[1]  # the names on p1 changed
    assert after[2] == before[2]  # p2 did not
    assert mention_digests(base.reverse()).reverse().equals(before)  # row order does not matter


def test_falls_back_to_a_full_resolution_when_the_state_cannot_be_used(corpus, monkeypatch):
    first = _night(corpus)
    stale = first.state.with_columns(version=pl.lit("another"))
    assert _night(corpus, type(first)(first.assignments, first.review, stale)).stats["reason"] == \
        "the matcher changed since the earlier resolution"
    half = corpus.head(corpus.height // 2)
    assert _night(half, first).stats["mode"] == "full"  # half the mentions gone: more than 5 % changed
    monkeypatch.setenv("SCHOLARHOUSE_INCREMENTAL_RESOLUTION", "off")
    night = _night(corpus, first)
    assert night.stats["mode"] == "full" and night.assignments.equals(first.assignments)


def test_kept_review_rows_follow_tonights_clusters(corpus):
    """A review row between a kept cluster and a re-resolved one stays, with tonight's cluster
    labels, oriented left < right, one row per pair of clusters."""
    night = _night(corpus, _night(corpus.filter(pl.col("paper_id") != _papers(corpus)[0])), max_changed_share=0.5)
    review = night.review
    assert (review["left_cluster"] < review["right_cluster"]).all()
    assert review.select("left_cluster", "right_cluster").is_duplicated().sum() == 0
    cluster = dict(zip(night.assignments["mention_id"].to_list(), night.assignments["author_id"].to_list()))
    assert all(cluster[r["left_id"]] == r["left_cluster"] and cluster[r["right_id"]] == r["right_cluster"]
               for r in review.iter_rows(named=True))


def test_empty_input():
    night = resolve_authors_incrementally(pl.DataFrame(schema={"mention_id": pl.String, "name": pl.String,
                                                               "paper_id": pl.String}))
    assert night.assignments.height == 0 and night.state.height == 0

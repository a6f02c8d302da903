"""Incremental author nights: only the people a change can reach are re-resolved, and the result
is the full resolution's wherever the change's reach is one step (resolution/incremental.py)."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.core.resolution import resolve_authors
from pipelines.core.resolution.incremental import (
    AUTHOR_STATE_SCHEMA,
    mention_digests,
    model_of,
    resolve_authors_incrementally,
)
from pipelines.core.resolution.runtime import MatchOptions
from benchmarks.bibliographies import synthetic_mentions


@pytest.fixture(scope="module")
def corpus():
    frame, _ = synthetic_mentions(seed=7, n_groups=80)
    return frame.sort("mention_id")


def _night(frame, previous=None, **kwargs):
    if previous is None:
        return resolve_authors_incrementally(frame, **kwargs)
    return resolve_authors_incrementally(frame, previous.state, previous.review, model=previous.model, **kwargs)


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
    previous = _night(before)
    night = _night(after, previous, max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    assert 0 < night.stats["resolved"] < after.height
    # ... weighed as the full resolution weighs evidence with the model the last full night fitted
    whole, review = resolve_authors(after, model=model_of(previous.model))
    assert night.assignments.equals(whole)
    assert night.review.equals(review)


def _with_columns_of(frame: pl.DataFrame, rows: list[dict]) -> pl.DataFrame:
    extra = pl.DataFrame(rows, schema={c: frame.schema[c] for c in rows[0]})
    return pl.concat([frame, extra], how="diagonal_relaxed").select(frame.columns)


_TOPICS = ["Quantum error correction codes for superconducting qubits", "Surface codes and superconducting qubit decoders",
           "Decoding quantum error correction on superconducting hardware"]
_ZAGREB = "Department of Physics, University of Zagreb, Croatia"


@pytest.mark.parametrize("name, title, affiliation", [
    ("Zofia Quigley", "Superconducting qubits and quantum error correction codes", None),
    ("Quigley Zofia", "Superconducting qubits and quantum error correction codes", None),  # family first
    ("Z. Quigley", "Superconducting qubits and quantum error correction codes", None),
    ("Zofia M. Quigley", "Superconducting qubits and quantum error correction codes", None),
    ("Z. Quigley", None, "University of Zagreb, Physics Department, Zagreb"),  # a similar affiliation alone
])
def test_a_known_person_under_another_form_of_the_name_joins_as_in_the_full_night(corpus, name, title, affiliation):
    """A new paper of a known person — another form of the name, a new co-author, only a close
    title or a similar affiliation in common: the linkage joins these in one step, so an
    incremental night must re-resolve the person's cluster with it (found in review: re-resolving
    only the clusters that share a co-author, paper, affiliation or the very same name missed them)."""
    before = _with_columns_of(corpus, [
        {"mention_id": f"zq{i}", "name": "Zofia Quigley", "paper_id": f"pz{i}", "coauthors": ["Ann Lee"],
         "title": topic if title else None, "year": 2020 + i, "venue": "Physical Review A" if title else None,
         "affiliation": None if title else _ZAGREB} for i, topic in enumerate(_TOPICS)])
    after = _with_columns_of(before, [{"mention_id": "zqn", "name": name, "paper_id": "pzn", "coauthors": ["Tom Oak"],
                                       "title": title, "year": 2023, "venue": "Physical Review A" if title else None,
                                       "affiliation": affiliation}])
    previous = _night(before)
    night = _night(after, previous)
    whole, _ = resolve_authors(after, model=model_of(previous.model))
    assert whole.filter(pl.col("mention_id") == "zqn")["author_id"].item() == "zq0"  # the full night joins them
    assert night.stats["mode"] == "incremental" and night.assignments.equals(whole)


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
    assert _night(corpus, type(first)(first.assignments, first.review, stale, model=first.model)).stats["reason"] == \
        "the matcher changed since the earlier resolution"
    without_model = resolve_authors_incrementally(corpus, first.state, first.review)
    assert without_model.stats["reason"] == "no stored author model"
    half = corpus.head(corpus.height // 2)
    assert _night(half, first).stats["mode"] == "full"  # half the mentions gone: more than 5 % changed
    night = _night(corpus, first, options=MatchOptions(incremental=False))  # SCHOLARHOUSE_INCREMENTAL_RESOLUTION=off
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


_SCHEMA = {"mention_id": pl.String, "name": pl.String, "paper_id": pl.String, "coauthors": pl.List(pl.String),
           "orcid": pl.String, "openalex_id": pl.String}
_ORCID = "0000-0000-0000-0001"


def _fillers(n: int = 40) -> list[dict]:
    return [{"mention_id": f"f{i:02d}", "name": f"Filler{i} Person", "paper_id": f"x{i}"} for i in range(n)]


def _case(name: str) -> tuple[list[dict], list[dict]]:
    """(last night's mentions, tonight's new ones) of cases found in review."""
    if name == "identity lends evidence":
        # A nameless new mention shares an ORCID with one Wei Wang and a co-author with another:
        # merged with the first, it brings the co-author the second shares.
        return ([{"mention_id": "s", "name": "Wei Wang", "paper_id": "ps", "orcid": _ORCID},
                 {"mention_id": "g", "name": "Wei Wang", "paper_id": "pg", "coauthors": ["Jun Li"]}, *_fillers()],
                [{"mention_id": "n", "name": None, "paper_id": "pn", "coauthors": ["Jun Li"], "orcid": _ORCID}])
    if name == "co-author spelled as another paper's mention":
        # "Li, Jun" is a mention's name on another paper; on px it is only a listed co-author
        # (px's mention reads "LI Jun", another key): its key must still count as evidence.
        return ([{"mention_id": "k", "name": "Wei Wang", "paper_id": "pz", "coauthors": ["J. Li"]},
                 {"mention_id": "lj", "name": "LI Jun", "paper_id": "px"},
                 {"mention_id": "y", "name": "Li, Jun", "paper_id": "py"}, *_fillers()],
                [{"mention_id": "a", "name": "Wei Wang", "paper_id": "px", "coauthors": ["Li, Jun"]}])
    # 62 Wei Wangs sharing two co-authors: a group the matcher skips as too common; two new
    # mentions join two of them by identity.
    many = [{"mention_id": f"ww{i:02d}", "name": "Wei Wang", "paper_id": f"p{i}", "coauthors": ["Jun Li", "Yu Zhang"],
             "orcid": _ORCID if i == 0 else None, "openalex_id": "A11" if i == 1 else None} for i in range(62)]
    return many, [{"mention_id": "zn0", "name": "Wei Wang", "paper_id": "q0", "orcid": _ORCID},
                  {"mention_id": "zn1", "name": "Wei Wang", "paper_id": "q1", "openalex_id": "A11"}]


@pytest.mark.parametrize("case", ["identity lends evidence", "co-author spelled as another paper's mention",
                                  "a common evidence group reached by identity"])
def test_cases_found_in_review_match_the_full_resolution(case):
    before_rows, new_rows = _case(case)
    before = pl.DataFrame(before_rows, schema=_SCHEMA)
    after = pl.concat([before, pl.DataFrame(new_rows, schema=_SCHEMA)])
    previous = _night(before)
    night = _night(after, previous)
    assert night.stats["mode"] == "incremental"
    whole, review = resolve_authors(after, model=model_of(previous.model))
    assert night.assignments.equals(whole)
    assert night.review.select("left_id", "right_id").equals(review.select("left_id", "right_id"))


def test_a_weekly_full_resolution():
    from datetime import date

    from pipelines.core.resolution.incremental import scheduled_full
    assert scheduled_full(date(2026, 11, 22)) is not None  # a Sunday
    assert scheduled_full(date(2026, 11, 23)) is None
    frame = pl.DataFrame(_fillers(), schema=_SCHEMA)
    night = resolve_authors_incrementally(frame, _night(frame).state, full_reason=scheduled_full(date(2026, 11, 22)))
    assert night.stats["mode"] == "full" and "weekly" in night.stats["reason"]

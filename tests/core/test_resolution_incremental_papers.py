"""Incremental paper nights: only the papers a change can reach are re-resolved, with the
corpus-wide candidate pairs, and the result is the full resolution's
(resolution/incremental_papers.py)."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.core.resolution import resolve_papers
from pipelines.core.resolution.incremental_papers import (
    PAPER_STATE_SCHEMA,
    record_digests,
    resolve_papers_incrementally,
)
from pipelines.core.resolution.papers import TitleDiffCache, candidate_graph
from pipelines.core.resolution.runtime import MatchOptions
from benchmarks.bibliographies import synthetic_papers


@pytest.fixture(scope="module")
def corpus():
    records, _ = synthetic_papers(seed=11, n_papers=500)
    # identifiers too: some records carry an arXiv id or a DOI
    arxiv = [f"2401.{i:05d}" if i % 9 == 0 else None for i in range(records.height)]
    return records.sort("record_id").with_columns(arxiv_id=pl.Series(arxiv, dtype=pl.String))


def _night(frame, previous=None, **kwargs):
    if previous is None:
        return resolve_papers_incrementally(frame, **kwargs)
    return resolve_papers_incrementally(frame, previous.state, previous.review, **kwargs)


def _same_as_full(night, frame):
    whole, review = resolve_papers(frame)
    assert night.assignments.equals(whole)
    assert night.review.sort("left_id", "right_id").equals(review.sort("left_id", "right_id"))


def test_first_night_is_a_full_resolution_and_leaves_its_state(corpus):
    night = _night(corpus)
    assert night.stats["mode"] == "full" and night.stats["reason"] == "no earlier resolution"
    _same_as_full(night, corpus)
    assert night.state.schema == pl.Schema(PAPER_STATE_SCHEMA)
    assert night.state.height == corpus.height


def test_an_unchanged_night_resolves_nothing_and_returns_the_same_result(corpus):
    first = _night(corpus)
    again = _night(corpus.sample(fraction=1.0, shuffle=True, seed=3), first)
    assert again.stats == {"mode": "incremental", "changed": 0, "removed": 0, "resolved": 0}
    assert again.assignments.equals(first.assignments)
    assert again.review.equals(first.review)
    assert again.state.equals(first.state)


@pytest.mark.parametrize("change", ["added", "removed", "edited"])
def test_a_night_with_a_few_records_changed_matches_the_full_resolution(corpus, change):
    ids = corpus["record_id"].to_list()
    few = set(ids[:: len(ids) // 12][:12])
    if change == "edited":
        before = corpus
        after = corpus.with_columns(
            title=pl.when(pl.col("record_id").is_in(list(few))).then(pl.col("title") + " revisited").otherwise("title"),
            year=pl.when(pl.col("record_id").is_in(list(few))).then(pl.col("year") + 3).otherwise("year"),
        )
    else:
        smaller = corpus.filter(~pl.col("record_id").is_in(list(few)))
        before, after = (smaller, corpus) if change == "added" else (corpus, smaller)
    night = _night(after, _night(before), max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    assert night.stats["changed" if change != "removed" else "removed"] == len(few)
    assert 0 < night.stats["resolved"] < after.height
    _same_as_full(night, after)


def test_a_new_record_joins_its_paper_through_a_shared_arxiv_id(corpus):
    first = _night(corpus)
    holder = corpus.filter(pl.col("arxiv_id").is_not_null()).row(0, named=True)
    newcomer = pl.DataFrame([{**holder, "record_id": "Z999999", "title": "An entirely different wording of it",
                              "authors": []}], schema=corpus.schema)
    after = pl.concat([corpus, newcomer])
    night = _night(after, first, max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    paper = dict(zip(night.assignments["record_id"], night.assignments["paper_id"]))
    assert paper["Z999999"] == paper[holder["record_id"]]
    _same_as_full(night, after)


def test_the_subset_is_handed_the_corpus_wide_candidate_pairs(corpus):
    graph = candidate_graph(corpus)
    assert graph.nodes.height == corpus.height
    assert (graph.pairs["left_id"] < graph.pairs["right_id"]).all()
    # resolving everything with the graph's pairs is the ordinary resolution
    assert resolve_papers(corpus, candidates=graph.pairs)[0].equals(resolve_papers(corpus)[0])


def test_digests_follow_the_matcher_input_not_the_row_order_or_other_columns(corpus):
    digests = dict(zip(corpus["record_id"], record_digests(corpus)))
    shuffled = corpus.sample(fraction=1.0, shuffle=True, seed=5)
    assert dict(zip(shuffled["record_id"], record_digests(shuffled))) == digests
    other_venue = corpus.with_columns(venue=pl.lit("Somewhere"))  # the matcher does not read venues
    assert dict(zip(other_venue["record_id"], record_digests(other_venue))) == digests
    retitled = corpus.with_columns(title=pl.col("title") + "!")
    assert all(a != b for a, b in zip(record_digests(retitled), record_digests(corpus)))


@pytest.mark.parametrize("why", ["share", "version", "switch", "asked"])
def test_fallbacks_resolve_everything(corpus, why, monkeypatch):
    first = _night(corpus)
    state, kwargs = first.state, {}
    frame = corpus.with_columns(title=pl.when(pl.col("record_id") == corpus["record_id"][0]).then(pl.lit("Changed")).otherwise("title"))
    if why == "share":
        kwargs["max_changed_share"] = 0.0
    elif why == "version":
        state = state.with_columns(version=pl.lit("older"))
    elif why == "switch":  # SCHOLARHOUSE_INCREMENTAL_RESOLUTION=off
        kwargs["options"] = MatchOptions(incremental=False)
    else:
        kwargs["full_reason"] = "the weekly full resolution (Sunday night)"
    night = resolve_papers_incrementally(frame, state, first.review, **kwargs)
    assert night.stats["mode"] == "full" and night.stats["resolved"] == frame.height
    _same_as_full(night, frame)


def test_an_incremental_night_keeps_the_earlier_title_diffs_for_the_next(corpus):
    first_cache = TitleDiffCache()
    first = _night(corpus, title_diffs=first_cache)
    known = first_cache.finish()
    cache = TitleDiffCache(known)
    after = corpus.with_columns(title=pl.when(pl.col("record_id") == corpus["record_id"][3])
                                .then(pl.col("title") + " again").otherwise("title"))
    night = _night(after, first, title_diffs=cache, max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    kept = cache.finish(keep_earlier=True)
    assert kept.join(known, on=["left_key", "right_key"], how="semi").height == known.height


def test_a_pair_is_scored_the_same_whatever_else_is_compared():
    # Found by review: the title score of a pair of title keys used to come from its first
    # occurrence, whose title parts (punctuation) could differ from another pair's with the same
    # keys; the subset saw a different first occurrence than the full run and merged R2 and R3.
    schema = {"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String,
              "year": pl.Int64, "source": pl.String}
    au = ["Ada Lovelace", "Alan Turing"]
    long = "Deep Learning for Graphs Methods and Applications in Computational Chemistry"
    before = pl.DataFrame([
        ("R1", long, ["Bob Other"], "v", 2010, "s"),
        ("R2", long.replace("Graphs Methods", "Graphs: Methods"), au, "v", 2020, "s"),
        ("R3", "Deep Learning for Graphs", au, "v", 2020, "s"),
    ], schema=schema, orient="row")
    after = pl.concat([before, pl.DataFrame([("R4", "Reinforcement Deep Learning for Graphs", ["Carl Third"], "v", 2015, "s")],
                                            schema=schema, orient="row")])
    night = _night(after, _night(before), max_changed_share=0.5)
    assert night.stats["mode"] == "incremental"
    _same_as_full(night, after)


def test_state_without_its_review_queue_is_a_full_night(corpus):
    first = _night(corpus)
    night = resolve_papers_incrementally(corpus, first.state, None)
    assert night.stats["mode"] == "full" and "review" in night.stats["reason"]


def test_candidates_refuse_one_to_one_linkage(corpus):
    with pytest.raises(ValueError, match="one_to_one_between"):
        resolve_papers(corpus, one_to_one_between="source", candidates=candidate_graph(corpus).pairs)


def test_the_matcher_fingerprints_cover_every_module_the_matchers_use():
    """State written by other code is not reused: the fingerprints must follow every module of the
    matcher, including ones split out of papers.py/authors.py that nobody listed by hand."""
    import importlib
    import pkgutil

    from pipelines.core import resolution
    from pipelines.core.resolution import authors, incremental, papers

    covered_papers = {m.__name__.rsplit(".", 1)[-1] for m in incremental.matcher_modules(papers)}
    covered_authors = {m.__name__.rsplit(".", 1)[-1] for m in incremental.matcher_modules(authors)}
    assert {"papers", "paper_features", "paper_scoring", "paper_series", "title_diffs", "titles", "names", "textnorm"} <= covered_papers
    assert {"authors", "author_linkage", "fellegi_sunter", "names", "textnorm"} <= covered_authors
    # Each module of the package is either in one fingerprint or is not matcher code.
    not_matcher_code = {"incremental", "incremental_papers", "shards", "__init__"}
    for info in pkgutil.iter_modules(resolution.__path__):
        importlib.import_module(f"{resolution.__name__}.{info.name}")
        assert info.name in covered_papers | covered_authors | not_matcher_code, info.name


def test_a_module_that_only_lends_data_is_in_the_fingerprint(tmp_path, monkeypatch):
    """A matcher module that imports only data from another (a frozenset of names, a table) still
    depends on it: changing the data must change the fingerprint."""
    import importlib
    import sys

    from pipelines.core.resolution import incremental

    package = tmp_path / "probe_matcher"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "data.py").write_text("NAMES = frozenset({'zhang', 'wang'})\n")
    (package / "matcher.py").write_text("from probe_matcher.data import NAMES\n\n\ndef known(name):\n    return name in NAMES\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(incremental, "_MATCHER_PACKAGES", ("probe_matcher.",))
    try:
        matcher = importlib.import_module("probe_matcher.matcher")
        assert {m.__name__ for m in incremental.matcher_modules(matcher)} == {"probe_matcher.matcher", "probe_matcher.data"}
    finally:
        for name in [n for n in sys.modules if n.startswith("probe_matcher")]:
            del sys.modules[name]

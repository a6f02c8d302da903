"""Tests for pipelines.marts.scoring: our own novelty score (see docs/scoring.md).

Small hand-made frames pin the definition (earlier-vs-later asymmetry, category isolation,
percentiles, new terms, nulls); a slow-but-obvious reference implementation checks the
vectorised, chunked one on random corpora, including tiny chunks and the dense/sparse split.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
import string

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.marts.scoring import METHOD_VERSION, author_novelty, score_paper_novelty
from pipelines.marts.scoring import features as features_module
from pipelines.marts.scoring import neighbours as neighbours_module
from pipelines.marts.scoring import novelty as novelty_module
from pipelines.marts.scoring.terms import (
    BREAK_TOKEN,
    STOPWORDS,
    _lowered_or_keyed,
    light_stem,
    terms_of,
    tokenize,
)
from pipelines.textnorm import match_key

SCHEMA = {
    "paper_id": pl.String,
    "title": pl.String,
    "abstract": pl.String,
    "category": pl.String,
    "year": pl.Int64,
    "pub_date": pl.Date,
}


def frame(rows: list[dict]) -> pl.DataFrame:
    full = [{name: row.get(name) for name in SCHEMA} for row in rows]
    return pl.DataFrame(full, schema=SCHEMA)


def paper(pid, title, abstract=None, category="cs.LG", year=None, date=None):
    if date is not None and year is None:
        year = date.year
    return {
        "paper_id": pid,
        "title": title,
        "abstract": abstract,
        "category": category,
        "year": year,
        "pub_date": date,
    }


def by_id(scores: pl.DataFrame) -> dict[str, dict]:
    return {row["paper_id"]: row for row in scores.to_dicts()}


GRAPH = "Graph neural networks for molecule property prediction"
GRAPH_ABSTRACT = (
    "We propose a message passing architecture for molecules. "
    "It improves property prediction on standard benchmarks."
)


# --- the definition on small frames --------------------------------------------------------


def test_later_copy_scores_zero_and_does_not_penalise_the_original():
    papers = frame(
        [
            paper(
                "c",
                "Protein folding with attention",
                "Attention models fold proteins.",
                date=dt.date(2019, 5, 1),
            ),
            paper("a", GRAPH, GRAPH_ABSTRACT, date=dt.date(2020, 1, 1)),
            paper("b", GRAPH, GRAPH_ABSTRACT, date=dt.date(2021, 1, 1)),
        ]
    )
    s = by_id(score_paper_novelty(papers, k=1))
    assert s["b"]["novelty_raw"] == pytest.approx(0.0, abs=1e-6)
    assert s["b"]["nearest_paper_id"] == "a"
    assert s["b"]["nearest_similarity"] == pytest.approx(1.0, abs=1e-6)
    assert s["b"]["neighbours_compared"] == 2
    # the original is compared only with the older paper, never with its later copy
    assert s["a"]["neighbours_compared"] == 1
    assert s["a"]["nearest_paper_id"] != "b"
    assert s["a"]["novelty_raw"] > 0.8
    assert s["c"]["cold_start"] and s["c"]["novelty_raw"] == 1.0 and s["c"]["neighbours_compared"] == 0
    # the copy adds no vocabulary; the original introduced all of its own
    assert s["b"]["new_terms_share"] == 0.0 and s["b"]["new_term_pairs_share"] == 0.0
    assert s["b"]["new_terms"] == []
    assert s["a"]["new_terms_share"] > 0.5


def test_copy_of_the_only_earlier_paper_scores_zero_with_default_k():
    papers = frame(
        [paper("a", GRAPH, GRAPH_ABSTRACT, year=2020), paper("b", GRAPH, GRAPH_ABSTRACT, year=2021)]
    )
    s = by_id(score_paper_novelty(papers))
    assert s["b"]["novelty_raw"] == pytest.approx(0.0, abs=1e-6) and not s["b"]["cold_start"]
    assert s["a"]["novelty_raw"] == 1.0 and s["a"]["cold_start"]
    # with more earlier papers the mean runs over the k most similar: a copy is low, not zero
    more = frame(
        [
            paper("a", GRAPH, GRAPH_ABSTRACT, year=2020),
            paper("c", "Protein folding with attention", "Attention models fold proteins.", year=2020),
            paper("b", GRAPH, GRAPH_ABSTRACT, year=2021),
        ]
    )
    s = by_id(score_paper_novelty(more, k=2))
    assert s["b"]["novelty_raw"] == pytest.approx(1 - (1.0 + 0.0) / 2, abs=1e-6)


def test_same_date_or_same_year_is_not_earlier():
    same_day = frame(
        [
            paper("x", GRAPH, GRAPH_ABSTRACT, date=dt.date(2022, 3, 1)),
            paper("y", GRAPH, GRAPH_ABSTRACT, date=dt.date(2022, 3, 1)),
        ]
    )
    s = by_id(score_paper_novelty(same_day))
    for pid in "xy":
        assert s[pid]["cold_start"] and s[pid]["neighbours_compared"] == 0 and s[pid]["novelty_raw"] == 1.0
        assert s[pid]["new_terms_share"] == 1.0
    # a year-only paper is not earlier than a dated paper of the same year, nor later
    mixed = frame(
        [
            paper("x", GRAPH, GRAPH_ABSTRACT, year=2022),
            paper("y", GRAPH, GRAPH_ABSTRACT, date=dt.date(2022, 3, 1)),
        ]
    )
    s = by_id(score_paper_novelty(mixed))
    assert s["x"]["neighbours_compared"] == 0 and s["y"]["neighbours_compared"] == 0
    # an earlier year counts even without dates
    years = frame(
        [
            paper("x", GRAPH, GRAPH_ABSTRACT, year=2021),
            paper("y", GRAPH, GRAPH_ABSTRACT, date=dt.date(2022, 3, 1)),
        ]
    )
    s = by_id(score_paper_novelty(years))
    assert s["y"]["neighbours_compared"] == 1 and s["y"]["novelty_raw"] == pytest.approx(0.0, abs=1e-6)


def test_categories_are_isolated_but_vocabulary_is_warehouse_wide():
    papers = frame(
        [
            paper("lg", GRAPH, GRAPH_ABSTRACT, category="cs.LG", date=dt.date(2020, 1, 1)),
            paper("ai", GRAPH, GRAPH_ABSTRACT, category="cs.AI", date=dt.date(2021, 1, 1)),
        ]
    )
    s = by_id(score_paper_novelty(papers))
    assert s["ai"]["cold_start"] and s["ai"]["novelty_raw"] == 1.0 and s["ai"]["nearest_paper_id"] is None
    # new terms are judged against every earlier paper in the warehouse, whatever its category
    assert s["ai"]["new_terms_share"] == 0.0


def test_new_terms_and_new_pairs():
    papers = frame(
        [
            paper(
                "old1", "Graph neural networks", "Graph networks learn molecules.", date=dt.date(2019, 1, 1)
            ),
            paper("old2", "Transformers for text", "Transformer models read text.", date=dt.date(2019, 6, 1)),
            # only known words, but "graph" next to "transformer" is a new combination
            paper("combo", "Graph transformers", None, date=dt.date(2020, 1, 1)),
            # one brand-new word
            paper("fresh", "Graph zebrafication", None, date=dt.date(2020, 2, 1)),
        ]
    )
    s = by_id(score_paper_novelty(papers))
    assert s["combo"]["new_terms_share"] == 0.0
    assert s["combo"]["new_term_pairs_share"] == 1.0  # its only pair: (graph, transformer)
    assert s["fresh"]["new_terms_share"] == 0.5
    assert s["fresh"]["new_terms"] == ["zebrafication"]
    # plural and singular are the same term: "networks" in old1 covers "network"
    later = frame(
        [
            paper("old1", "Graph neural networks", None, date=dt.date(2019, 1, 1)),
            paper("new", "A network", None, date=dt.date(2020, 1, 1)),
        ]
    )
    assert by_id(score_paper_novelty(later))["new"]["new_terms_share"] == 0.0


def test_new_terms_examples_are_capped_ranked_and_readable():
    words = " ".join(f"quux{letter}word" for letter in string.ascii_lowercase[:15])
    papers = frame([paper("p", "Networks", f"{words} zebras zebras zebras", date=dt.date(2020, 1, 1))])
    examples = score_paper_novelty(papers).get_column("new_terms")[0].to_list()
    assert len(examples) == novelty_module.MAX_NEW_TERM_EXAMPLES
    # highest TF-IDF weight first (zebra occurs three times), then alphabetical by stem;
    # shown as the words the paper used ("networks", "zebras"), not as stems
    assert examples == ["zebras", "networks"] + [f"quux{letter}word" for letter in "abcdefgh"]


def test_percentiles_are_within_bounds_and_follow_novelty_raw():
    rng = random.Random(3)
    vocabulary = [f"term{i}" for i in range(40)]
    rows = []
    for i in range(60):
        rows.append(
            paper(
                f"p{i:02d}",
                " ".join(rng.choices(vocabulary, k=5)),
                " ".join(rng.choices(vocabulary, k=25)),
                category=rng.choice(["cs.LG", "cs.AI", None]),
                date=dt.date(2018 + i % 4, 1 + i % 12, 1),
            )
        )
    rows.append(paper("solo", "alone in its group", None, category="math.CO", date=dt.date(2020, 1, 1)))
    s = score_paper_novelty(frame(rows))
    for column in ("novelty_percentile", "novelty_score"):
        values = s.get_column(column)
        assert values.null_count() == 0
        assert values.min() > 0.0 and values.max() < 100.0
    assert by_id(s)["solo"]["novelty_percentile"] == 50.0
    for _, group in s.group_by(["category", "year"]):
        ordered = group.sort("novelty_raw")
        pct = ordered.get_column("novelty_percentile").to_list()
        assert pct == sorted(pct)
        raw = ordered.get_column("novelty_raw").to_list()
        for a, b, pa, pb in zip(raw, raw[1:], pct, pct[1:]):
            if a == b:
                assert pa == pb
    weights = (
        novelty_module.WEIGHT_SIMILARITY,
        novelty_module.WEIGHT_NEW_TERMS,
        novelty_module.WEIGHT_NEW_PAIRS,
    )
    assert sum(weights) == pytest.approx(1.0)


def test_row_order_and_chunking_do_not_change_anything():
    papers = random_corpus(seed=11, n=80)
    reference = score_paper_novelty(papers)
    shuffled = papers.sample(fraction=1.0, shuffle=True, seed=5)
    assert score_paper_novelty(shuffled).equals(reference)
    assert score_paper_novelty(papers, chunk_size=3, n_threads=2, text_batch_size=7).equals(reference)
    assert score_paper_novelty(papers, chunk_size=1, n_threads=1).equals(reference)


def test_nulls_everywhere_still_give_every_paper_a_score():
    papers = frame(
        [
            paper("dated", GRAPH, GRAPH_ABSTRACT, date=dt.date(2020, 1, 1)),
            paper("year_only", GRAPH, None, year=2021),
            paper("undated", GRAPH, GRAPH_ABSTRACT),  # no year, no date
            paper("no_cat", GRAPH, GRAPH_ABSTRACT, category=None, year=2020),
            paper("no_cat_later", GRAPH, GRAPH_ABSTRACT, category=None, year=2021),
            paper("no_text", None, None, date=dt.date(2022, 1, 1)),
            paper("numbers_only", "2023 1 2 3", "$x$ 42", date=dt.date(2023, 1, 1)),
        ]
    )
    s = by_id(score_paper_novelty(papers))
    assert len(s) == 7
    for row in s.values():
        assert row["novelty_score"] is not None and row["novelty_percentile"] is not None
        assert 0.0 <= row["novelty_raw"] <= 1.0
        assert row["method_version"] == METHOD_VERSION
    # an undated paper comes after every dated one of its category (and before none)
    assert s["undated"]["neighbours_compared"] == 4
    assert s["undated"]["year"] is None
    assert s["dated"]["neighbours_compared"] == 0
    # null category is a group of its own
    assert s["no_cat_later"]["neighbours_compared"] == 1
    assert s["no_cat_later"]["nearest_paper_id"] == "no_cat"
    # a paper without terms shares nothing: similarity 0, no nearest paper, no new terms
    assert s["no_text"]["nearest_similarity"] == 0.0 and s["no_text"]["nearest_paper_id"] is None
    assert s["no_text"]["new_terms_share"] == 0.0 and s["numbers_only"]["new_terms"] == []


def test_empty_input_and_bad_input():
    empty = score_paper_novelty(frame([]))
    assert empty.height == 0
    assert empty.schema == pl.Schema(novelty_module.output_schema())
    with pytest.raises(ValueError, match="unique"):
        score_paper_novelty(
            frame([paper("a", "x", date=dt.date(2020, 1, 1)), paper("a", "y", date=dt.date(2021, 1, 1))])
        )
    with pytest.raises(ValueError, match="missing"):
        score_paper_novelty(pl.DataFrame({"paper_id": ["a"], "title": ["x"]}))
    with pytest.raises(ValueError):
        score_paper_novelty(frame([paper("a", "x")]), k=0)


def test_nearest_ties_go_to_the_earlier_sorted_paper():
    papers = frame(
        [
            paper("b", GRAPH, GRAPH_ABSTRACT, date=dt.date(2020, 1, 1)),
            paper("a", GRAPH, GRAPH_ABSTRACT, date=dt.date(2020, 1, 1)),
            paper("z", GRAPH, GRAPH_ABSTRACT, date=dt.date(2019, 1, 1)),
            paper("new", GRAPH, GRAPH_ABSTRACT, date=dt.date(2021, 1, 1)),
        ]
    )
    s = by_id(score_paper_novelty(papers, k=2))
    assert s["new"]["nearest_paper_id"] == "z"  # oldest among equally similar
    assert s["a"]["nearest_paper_id"] == "z" and s["b"]["nearest_paper_id"] == "z"
    papers = papers.filter(pl.col("paper_id") != "z")
    assert by_id(score_paper_novelty(papers))["new"]["nearest_paper_id"] == "a"  # same date: paper_id


def test_k_averages_over_the_k_most_similar():
    papers = frame(
        [
            paper("near", GRAPH, GRAPH_ABSTRACT, date=dt.date(2019, 1, 1)),
            paper(
                "far",
                "Sorting networks in hardware",
                "Comparator networks sort numbers fast.",
                date=dt.date(2019, 2, 1),
            ),
            paper("q", GRAPH, GRAPH_ABSTRACT, date=dt.date(2020, 1, 1)),
        ]
    )
    s1 = by_id(score_paper_novelty(papers, k=1))
    s2 = by_id(score_paper_novelty(papers, k=2))
    assert s1["q"]["novelty_raw"] == pytest.approx(0.0, abs=1e-6)
    assert s2["q"]["novelty_raw"] > 0.3  # the dissimilar second neighbour now counts


def test_author_novelty():
    scores = pl.DataFrame({"paper_id": ["p1", "p2", "p3"], "novelty_percentile": [20.0, 60.0, 90.0]})
    authorships = pl.DataFrame(
        {
            "paper_id": ["p1", "p2", "p2", "p3", "p9"],
            "author_id": ["A", "A", "A", "B", "C"],  # A-p2 twice (two evidences): counted once
        }
    )
    out = author_novelty(scores, authorships)
    assert out.columns == ["author_id", "computed_novelty", "papers_scored", "method_version"]
    by_author = {r["author_id"]: r for r in out.to_dicts()}
    assert by_author["A"]["computed_novelty"] == pytest.approx(40.0) and by_author["A"]["papers_scored"] == 2
    assert by_author["B"]["computed_novelty"] == pytest.approx(90.0) and by_author["B"]["papers_scored"] == 1
    assert by_author["C"]["computed_novelty"] is None and by_author["C"]["papers_scored"] == 0
    assert all(r["method_version"] == METHOD_VERSION for r in by_author.values())
    assert out.get_column("author_id").to_list() == ["A", "B", "C"]
    assert author_novelty(scores.head(0), authorships.head(0)).height == 0


def test_author_novelty_end_to_end():
    papers = random_corpus(seed=2, n=30)
    scores = score_paper_novelty(papers)
    authorships = pl.DataFrame({"paper_id": papers.get_column("paper_id"), "author_id": ["X", "Y"] * 15})
    out = author_novelty(scores, authorships)
    expected = (
        scores.join(authorships, on="paper_id").group_by("author_id").agg(pl.col("novelty_percentile").mean())
    )
    for row in expected.to_dicts():
        got = out.filter(pl.col("author_id") == row["author_id"]).row(0, named=True)
        assert got["computed_novelty"] == pytest.approx(row["novelty_percentile"], abs=1e-3)
        assert got["papers_scored"] == 15


# --- text handling -----------------------------------------------------------------------------


def test_terms_strip_latex_urls_stopwords_numbers_and_fold_plurals():
    text = (
        r"The \textbf{L}oss of Schrödinger networks: see https://github.com/foo/bar-baz. "
        r"We study $\delta$-approaches in 2023 with 3D models"
    )
    terms = terms_of(text)
    assert "loss" in terms and "schrodinger" in terms and "network" in terms and "approach" in terms
    assert "3d" in terms and "model" in terms
    assert not {"github", "foo", "bar", "baz", "com", "https"} & set(terms)
    assert not {"the", "of", "we", "in", "with", "2023"} & set(terms)
    assert BREAK_TOKEN not in terms
    assert [
        light_stem(w) for w in ["studies", "losses", "approaches", "networks", "analysis", "corpus", "gas"]
    ] == [
        "study",
        "loss",
        "approach",
        "network",
        "analysis",
        "corpus",
        "gas",
    ]


def test_sentence_breaks_stop_pairs():
    stream = tokenize(pl.Series([None], dtype=pl.String), pl.Series(["alpha beta. gamma delta"]))
    ids = stream.abstract.term.tolist()
    assert ids.count(-1) == 1 and ids.index(-1) == 2  # alpha beta | gamma delta


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=string.ascii_letters + string.digits + " .,:;()[]{}-_'\"!?/&%#@*+=<>|~^`\n\t", max_size=80
    )
)
def test_fast_path_splits_exactly_like_match_key(text):
    # Plain ASCII without LaTeX characters is only lower-cased (vectorised) and split on
    # non-alphanumerics: that must give the words of match_key.
    assert re.findall("[0-9a-z]+", text.lower()) == match_key(text).split()


def test_non_ascii_and_latex_go_through_match_key():
    texts = pl.Series(["Schrödinger \\textbf{L}oss", "plain Text", "$\\alpha$-Net", None])
    out = _lowered_or_keyed(texts).to_list()
    assert out == ["schrodinger loss", "plain text", "net", ""]  # α is not a latin letter: dropped


def test_stopwords_are_lower_case_words():
    assert all(w == w.lower() and w.isalpha() for w in STOPWORDS)


# --- the vectorised implementation against an obvious one ----------------------------------------


def random_corpus(seed: int, n: int) -> pl.DataFrame:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(25)] + ["graph", "networks", "network", "study", "studies"]
    rows = []
    for i in range(n):
        title = " ".join(rng.choices(vocabulary, k=rng.randint(0, 6)))
        abstract = (
            None
            if rng.random() < 0.15
            else ". ".join(
                " ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(rng.randint(1, 4))
            )
        )
        roll = rng.random()
        year = rng.randint(2018, 2021)
        date = dt.date(year, rng.randint(1, 3), 1) if roll < 0.6 else None
        rows.append(
            paper(
                f"p{rng.randrange(10**6):06d}-{i}",
                title,
                abstract,
                category=rng.choice(["a", "a", "b", None]),
                year=None if roll > 0.9 else year,
                date=date,
            )
        )
    return frame(rows)


def _is_earlier(a: dict, b: dict) -> bool:
    """The spec, spelt out: a strictly earlier date when both have one, else an earlier year;
    no year: after every paper with a year."""
    if a["year"] is None:
        return False
    if b["year"] is None:
        return True
    if a["pub_date"] is not None and b["pub_date"] is not None:
        return a["pub_date"] < b["pub_date"]
    return a["year"] < b["year"]


def reference_scores(papers: pl.DataFrame, k: int, window: int | None = None) -> dict[str, dict]:
    canon = novelty_module._canonical(papers)
    rows = canon.to_dicts()
    stream = tokenize(canon.get_column("title"), canon.get_column("abstract"))
    n = len(rows)
    seqs: list[list[list[int]]] = [[[], []] for _ in range(n)]
    for part, sequences in enumerate([stream.title, stream.abstract]):
        for d in range(n):
            seqs[d][part] = sequences.term[sequences.indptr[d] : sequences.indptr[d + 1]].tolist()
    features, term_sets, pair_sets = [], [], []
    for title, abstract in seqs:
        counts: dict = {}
        pairs: set = set()
        for seq in (title, abstract):
            for a, b in zip(seq, seq[1:]):
                if a >= 0 and b >= 0:
                    counts[("bi", a, b)] = counts.get(("bi", a, b), 0) + 1
                    if a != b:
                        pairs.add((min(a, b), max(a, b)))
            for t in seq:
                if t >= 0:
                    counts[("uni", t)] = counts.get(("uni", t), 0) + 1
        distinct_title = list(dict.fromkeys(t for t in title if t >= 0))[
            : features_module.MAX_TITLE_PAIR_TERMS
        ]
        for i, a in enumerate(distinct_title):
            for b in distinct_title[i + 1 :]:
                pairs.add((min(a, b), max(a, b)))
        features.append(counts)
        term_sets.append({key[1] for key in counts if key[0] == "uni"})
        pair_sets.append(pairs)
    df: dict = {}
    for counts in features:
        for key in counts:
            df[key] = df.get(key, 0) + 1
    vectors = []
    for counts in features:
        vec = {key: (1 + math.log(c)) * (math.log((1 + n) / (1 + df[key])) + 1) for key, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in vec.values())) or 1.0
        vectors.append({key: w / norm for key, w in vec.items()})
    out = {}
    for i, row in enumerate(rows):
        earlier = [j for j in range(n) if _is_earlier(rows[j], row)]
        same_cat = [j for j in earlier if rows[j]["category"] == row["category"]]
        if window is not None:
            same_cat = same_cat[-window:]  # the most recent earlier papers (canonical order)
        sims = [(sum(w * vectors[j].get(key, 0.0) for key, w in vectors[i].items()), j) for j in same_cat]
        ranked = sorted(sims, key=lambda sj: (-sj[0], sj[1]))
        top = [s for s, _ in ranked[:k]]
        used_terms = set().union(*(term_sets[j] for j in earlier)) if earlier else set()
        used_pairs = set().union(*(pair_sets[j] for j in earlier)) if earlier else set()
        out[row["paper_id"]] = {
            "neighbours_compared": len(same_cat),
            "novelty_raw": 1.0 if not top else 1.0 - sum(top) / len(top),
            "nearest_similarity": ranked[0][0] if ranked else None,
            "nearest_paper_id": rows[ranked[0][1]]["paper_id"] if ranked and ranked[0][0] > 0 else None,
            "new_terms_share": (len(term_sets[i] - used_terms) / len(term_sets[i])) if term_sets[i] else 0.0,
            "new_term_pairs_share": (len(pair_sets[i] - used_pairs) / len(pair_sets[i]))
            if pair_sets[i]
            else 0.0,
        }
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("dense_split", [False, True])
def test_matches_the_obvious_implementation(seed, dense_split, monkeypatch):
    batch = 50_000
    if dense_split:
        # force the dense-hot / sparse-cold split on tiny segments, several pair partitions
        # and small text batches: the paths a million papers take
        monkeypatch.setattr(neighbours_module, "_MIN_ROWS_FOR_DENSE", 1)
        monkeypatch.setattr(neighbours_module, "_HOT_MIN_SHARE", 0.2)
        monkeypatch.setattr(features_module, "_PAIR_ENTRIES_PER_PARTITION", 60)
        batch = 9
    papers = random_corpus(seed, n=70)
    k = 1 + seed % 3
    got = by_id(
        score_paper_novelty(
            papers, k=k, chunk_size=4 + 10 * seed, text_batch_size=batch
        )  # tiny to whole-segment blocks
    )
    expected = reference_scores(papers, k)
    assert got.keys() == expected.keys()
    for pid, want in expected.items():
        row = got[pid]
        assert row["neighbours_compared"] == want["neighbours_compared"], pid
        assert row["cold_start"] == (want["neighbours_compared"] == 0)
        assert row["novelty_raw"] == pytest.approx(want["novelty_raw"], abs=2e-6), pid
        assert row["new_terms_share"] == pytest.approx(want["new_terms_share"], abs=2e-6), pid
        assert row["new_term_pairs_share"] == pytest.approx(want["new_term_pairs_share"], abs=2e-6), pid
        if want["nearest_similarity"] is None:
            assert row["nearest_similarity"] is None
        else:
            assert row["nearest_similarity"] == pytest.approx(want["nearest_similarity"], abs=2e-6)
        # ties in similarity are broken by sort position; float noise may reorder exact ties
        if row["nearest_paper_id"] != want["nearest_paper_id"]:
            assert want["nearest_paper_id"] is not None
            assert row["nearest_similarity"] == pytest.approx(want["nearest_similarity"], abs=2e-6)


@pytest.mark.parametrize("window", [1, 4, 17])
@pytest.mark.parametrize("seed", [0, 5])
def test_window_compares_with_the_most_recent_earlier_papers(seed, window):
    papers = random_corpus(seed, n=70)
    got = by_id(score_paper_novelty(papers, k=3, chunk_size=4 + 3 * seed, window=window))
    expected = reference_scores(papers, 3, window=window)
    for pid, want in expected.items():
        row = got[pid]
        assert row["neighbours_compared"] == want["neighbours_compared"], pid
        assert row["novelty_raw"] == pytest.approx(want["novelty_raw"], abs=2e-6), pid
        if want["nearest_similarity"] is None:
            assert row["nearest_similarity"] is None
        else:
            assert row["nearest_similarity"] == pytest.approx(want["nearest_similarity"], abs=2e-6), pid


def test_window_at_least_the_category_size_is_the_exact_search():
    from pipelines.settings import Settings

    def window(value: str):  # as the run reads SCHOLARHOUSE_NOVELTY_WINDOW
        return Settings.from_env({"SCHOLARHOUSE_NOVELTY_WINDOW": value}).novelty_window

    papers = random_corpus(3, n=60)
    exact = score_paper_novelty(papers, window=None)
    assert score_paper_novelty(papers, window=60).equals(exact)
    assert score_paper_novelty(papers, window=window("none")).equals(exact)
    assert score_paper_novelty(papers, window=window("2"))["neighbours_compared"].max() == 2
    with pytest.raises(ValueError, match="window"):
        score_paper_novelty(papers, window=0)


def test_count_earlier_matches_pairwise_rule():
    rng = np.random.default_rng(0)
    n = 300
    year = rng.integers(2018, 2022, size=n)
    dated = rng.random(n) < 0.6
    has_year = rng.random(n) < 0.9
    day = np.array([dt.date(int(y), int(m), 1).toordinal() for y, m in zip(year, rng.integers(1, 4, size=n))])
    qy = np.where(has_year, year, novelty_module._NO_YEAR)
    qd = np.where(dated & has_year, day, novelty_module._NO_DAY_QUERY)
    cd = np.where(dated & has_year, day, novelty_module._NO_DAY_CAND)
    counts = neighbours_module.count_earlier(qy, qy, qd, cd)
    pairwise = ((qy[None, :] < qy[:, None]) | (cd[None, :] < qd[:, None])).sum(axis=1)
    assert np.array_equal(counts, pairwise)


def test_output_schema_and_sort():
    s = score_paper_novelty(random_corpus(seed=4, n=20))
    assert s.schema == pl.Schema(novelty_module.output_schema())
    assert s.get_column("paper_id").to_list() == sorted(s.get_column("paper_id").to_list())
    assert s.get_column("method_version").unique().to_list() == [METHOD_VERSION]


@pytest.mark.parametrize("n_cols", [30, 5000])  # bincount path and sort path
def test_drop_unshared_columns_keeps_every_product(n_cols):
    rng = np.random.default_rng(n_cols)
    dense = (rng.random((40, n_cols)) < 8 / n_cols) * rng.random((40, n_cols))
    matrix = sp.csr_matrix(dense.astype(np.float32))
    dropped = neighbours_module._drop_unshared_columns(matrix)
    used = (dense > 0).sum(axis=0)
    assert dropped.shape == (40, int((used >= 2).sum()))
    # the kept columns, in order: every row-row product between different rows is unchanged
    np.testing.assert_array_equal(dropped.toarray(), dense[:, used >= 2].astype(np.float32))


def test_a_category_whose_papers_have_no_terms_next_to_one_that_has():
    """Stopword-only titles in one category while another has terms: every paper is scored (this
    once stopped the scorer with an IndexError in the similarity search's column pruning)."""
    papers = frame(
        [
            paper("a1", "Quantum kernels", year=2020),
            paper("a2", "Quantum kernels again", year=2021),
            paper("b1", "The of", category="cs.CL", year=2020),
            paper("b2", "And the", category="cs.CL", year=2021),
        ]
    )
    s = by_id(score_paper_novelty(papers))
    assert s["b2"]["novelty_raw"] == 1.0 and s["b2"]["neighbours_compared"] == 1 and s["b2"]["nearest_paper_id"] is None
    assert s["a2"]["nearest_paper_id"] == "a1"
    assert (neighbours_module._drop_unshared_columns(sp.csr_matrix((3, 5), dtype=np.float32)).shape == (3, 0))

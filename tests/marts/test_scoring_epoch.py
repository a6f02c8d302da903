"""Novelty epochs (pipelines/marts/scoring/epoch.py, docs/scoring.md "Epochs"): a paper is scored once,
when it arrives, with the vocabulary and IDF of the epoch; a night scores only its new papers.

The invariant: the papers a night scores get exactly the scores a full re-score of that night's
corpus under the same epoch model gives them (percentiles included when the corpus only grew
with later work; otherwise the percentile groups are the stored scores plus the night's papers).
"""

from __future__ import annotations

import datetime as dt
import random

import polars as pl
import pytest

from pipelines.marts.scoring import epoch as ep
from pipelines.marts.scoring import score_paper_novelty

SCHEMA = {"paper_id": pl.String, "title": pl.String, "abstract": pl.String, "category": pl.String,
          "year": pl.Int64, "pub_date": pl.Date}
WORDS = ("graph neural network molecule protein folding attention transformer diffusion model sparse "
         "kernel bayesian inference causal reinforcement policy gradient robust adversarial quantum "
         "circuit optimisation language retrieval vision segmentation contrastive federated privacy "
         "spectral clustering manifold topology fairness benchmark").split()


def corpus(n: int, seed: int, *, start_year: int = 2015, years: int = 6, prefix: str = "P") -> pl.DataFrame:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        year = start_year + rng.randrange(years)
        dated = rng.random() < 0.8
        rows.append({
            "paper_id": f"{prefix}{seed:02d}{i:05d}",
            "title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))),
            "abstract": None if rng.random() < 0.1 else ". ".join(
                " ".join(rng.choice(WORDS) + ("s" if rng.random() < 0.2 else "") for _ in range(rng.randint(4, 12)))
                for _ in range(rng.randint(1, 4))) + (f" novelword{seed}x{i}" if rng.random() < 0.1 else ""),
            "category": rng.choice(["cs.LG", "cs.CL", "stat.ML", None]),
            "year": year,
            "pub_date": dt.date(year, rng.randint(1, 12), rng.randint(1, 28)) if dated else None,
        })
    return pl.DataFrame(rows, schema=SCHEMA)


def night(state: dict, papers: pl.DataFrame, **kw) -> pl.DataFrame:
    """One incremental night on ``state`` (model, tokens, scores), as the marts run it: papers
    without a score are scored, the rest kept. Returns the night's new score rows."""
    to_score = papers.join(state["scores"].select("paper_id"), on="paper_id", how="anti")["paper_id"]
    out = ep.score_arrivals(papers, to_score, state["model"], state["tokens"], state["scores"], **kw)
    state["model"] = out.model
    state["tokens"] = pl.concat([state["tokens"], out.tokens])
    state["scores"] = pl.concat([state["scores"], out.scores]).sort("paper_id")
    return out.scores


def start(papers: pl.DataFrame, **kw) -> dict:
    full = ep.score_epoch(papers, **kw)
    return {"model": full.model, "tokens": full.tokens, "scores": full.scores}


def test_a_new_epoch_scores_like_score_paper_novelty():
    papers = corpus(300, 1)
    assert ep.score_epoch(papers).scores.equals(score_paper_novelty(papers))
    assert ep.score_epoch(papers, window=20).scores.equals(score_paper_novelty(papers, window=20))


@pytest.mark.parametrize("window", [None, 25])
def test_incremental_night_equals_a_full_rescore_under_the_epoch(window):
    """(a) Nights that add later papers: every paper a night scores has the scores (all columns,
    percentiles too) a full re-score of the night's corpus with the epoch model gives it."""
    base = corpus(250, 2, start_year=2015, years=5)
    state = start(base, window=window)
    papers = base
    for i in range(3):
        arrivals = corpus(40, 10 + i, start_year=2020 + i, years=1, prefix=f"N{i}")
        papers = pl.concat([papers, arrivals])
        scored = night(state, papers, window=window)
        assert sorted(scored["paper_id"]) == sorted(arrivals["paper_id"])
        full = ep.score_epoch(papers, model=state["model"], window=window).scores
        assert scored.equals(full.filter(pl.col("paper_id").is_in(scored["paper_id"].implode())))
    # and every stored score is what the full re-score under the epoch gives (nothing earlier arrived late)
    assert state["scores"].equals(ep.score_epoch(papers, model=state["model"], window=window).scores)


def test_incremental_components_equal_the_full_rescore_when_older_papers_arrive_late():
    """(a) When a night brings papers of any date (older ones too), the components of the papers it
    scores are still the full re-score's; their percentiles rank them among the stored group."""
    base = corpus(250, 3)
    state = start(base)
    papers = pl.concat([base, corpus(60, 4, prefix="L")])  # same years: some are earlier than stored papers
    scored = night(state, papers)
    full = ep.score_epoch(papers, model=state["model"]).scores
    columns = ["paper_id", "category", "year", "novelty_raw", "neighbours_compared", "nearest_paper_id",
               "nearest_similarity", "new_terms_share", "new_term_pairs_share", "new_terms", "cold_start"]
    assert scored.select(columns).equals(full.filter(pl.col("paper_id").is_in(scored["paper_id"].implode())).select(columns))


def test_a_night_leaves_existing_scores_untouched():
    """(b) The stored rows are kept as they were, even when a night brings earlier work."""
    base = corpus(200, 5)
    state = start(base)
    before = state["scores"]
    papers = pl.concat([base, corpus(50, 6, start_year=2010, years=12, prefix="X")])
    night(state, papers)
    assert state["scores"].filter(pl.col("paper_id").is_in(before["paper_id"].implode())).equals(before)
    assert state["scores"].height == papers.height


def test_a_night_with_nothing_new_scores_nothing_and_is_repeatable():
    """(c) at the scorer's level: scoring the same arrivals twice gives the same rows, and a night
    with no arrivals scores nothing."""
    base = corpus(200, 7)
    papers = pl.concat([base, corpus(30, 8, start_year=2021, years=1, prefix="R")])
    first, second = start(base), start(base)
    assert night(first, papers).equals(night(second, papers))
    assert night(first, papers).height == 0


def test_model_round_trips_through_its_warehouse_rows():
    state = start(corpus(150, 9))
    model = state["model"]
    back = ep.NoveltyModel.from_frames(model.idf.n_docs, model.terms_frame(), model.bigrams_frame())
    assert back.vocabulary == model.vocabulary and back.surface == model.surface
    assert (back.idf.term_df == model.idf.term_df).all()
    assert (back.idf.bigram_codes == model.idf.bigram_codes).all() and (back.idf.bigram_df == model.idf.bigram_df).all()
    papers = pl.concat([corpus(150, 9), corpus(20, 11, start_year=2021, years=1, prefix="T")])
    to_score = corpus(20, 11, start_year=2021, years=1, prefix="T")["paper_id"]
    a = ep.score_arrivals(papers, to_score, model, state["tokens"], state["scores"])
    b = ep.score_arrivals(papers, to_score, back, state["tokens"], state["scores"])
    assert a.scores.equals(b.scores)


def test_new_words_keep_the_epoch_idf_of_unseen_terms():
    """A stem first seen after the epoch gets the next id and df 0 (the IDF of an unseen term)."""
    base = corpus(100, 12)
    state = start(base)
    arrival = pl.DataFrame([{"paper_id": "Z1", "title": "zzyzx quantum circuits", "abstract": None,
                             "category": "cs.LG", "year": 2030, "pub_date": None}], schema=SCHEMA)
    scored = night(state, pl.concat([base, arrival]))
    assert state["model"].vocabulary[-1] == "zzyzx"
    assert state["model"].terms_frame()["df"][-1] == 0
    assert scored["new_terms"][0].to_list() == ["zzyzx"]


# --- in the warehouse: marts.build_paper_scores ----------------------------------------------

import duckdb  # noqa: E402

from pipelines import warehouse  # noqa: E402
from pipelines.marts import build as marts  # noqa: E402

D1, D2, D3 = dt.date(2026, 11, 23), dt.date(2026, 11, 24), dt.date(2026, 11, 25)


def load_core(con, papers: pl.DataFrame) -> None:
    """core.papers := ``papers`` (the scorer's inputs plus the NOT NULL columns)."""
    rows = papers.with_columns(
        title=pl.col("title").fill_null("untitled"), listings_count=pl.lit(1), profiles_count=pl.lit(1),
        sources=pl.lit(["scholarfeed"]), authors_known=pl.lit(1), byline_complete=pl.lit(True),
        first_seen=pl.lit(D1), last_seen=pl.lit(D1), has_code=pl.lit(None, dtype=pl.Boolean))
    warehouse.replace_slice(con, [("core.papers", rows)])


def scores(con) -> pl.DataFrame:
    return warehouse.read_frame(con, "SELECT * FROM marts.paper_scores ORDER BY paper_id")


@pytest.fixture
def con(tmp_path):
    with duckdb.connect(str(tmp_path / "wh.duckdb")) as c:
        warehouse.ensure_schema(c)
        yield c


def test_warehouse_nights_score_arrivals_only_and_equal_the_full_rescore(con):
    """(a) + (b) through the warehouse: night 1 fits the epoch; night 2 scores its arrivals only,
    keeps every other row as it was (scored_on too), and the arrivals' rows equal a full re-score
    of night 2's corpus under the epoch model."""
    base = corpus(200, 20)
    load_core(con, base)
    first = marts.build_paper_scores(con, D1)
    assert (first.mode, first.reason, first.scored) == ("new epoch", "no epoch yet", 200)
    before = scores(con)
    assert set(before["epoch_id"]) == {"2026-11-23"} and set(before["method_version"]) == {marts.METHOD_VERSION}

    arrivals = corpus(30, 21, start_year=2021, years=1, prefix="A")
    load_core(con, pl.concat([base, arrivals]))
    second = marts.build_paper_scores(con, D2)
    assert (second.mode, second.scored, second.kept, second.removed) == ("incremental", 30, 200, 0)
    after = scores(con)
    assert after.filter(pl.col("paper_id").is_in(before["paper_id"].implode())).equals(before)
    new = after.filter(pl.col("scored_on") == D2)
    assert sorted(new["paper_id"]) == sorted(arrivals["paper_id"])
    assert set(new["epoch_id"]) == {"2026-11-23"}

    model = NoveltyModel_from_warehouse(con)
    full = ep.score_epoch(pl.concat([base, arrivals]), model=model).scores
    columns = [c for c in full.columns]
    assert new.select(columns).equals(full.filter(pl.col("paper_id").is_in(new["paper_id"].implode())).select(columns))


def NoveltyModel_from_warehouse(con) -> ep.NoveltyModel:
    papers = warehouse.scalar(con, "SELECT papers FROM cache.novelty_epochs ORDER BY fitted_at DESC LIMIT 1")
    return ep.NoveltyModel.from_frames(
        papers, warehouse.read_frame(con, "SELECT term_id, stem, surface, df FROM cache.novelty_terms"),
        warehouse.read_frame(con, "SELECT first_id, second_id, df FROM cache.novelty_bigrams"))


def test_warehouse_rerun_of_a_night_is_idempotent(con):
    """(c) Re-running a night (the same corpus) changes no row, duplicates none, and a re-run of
    the night that fitted the epoch does not fit another."""
    base = corpus(150, 22)
    load_core(con, base)
    marts.build_paper_scores(con, D1)
    load_core(con, pl.concat([base, corpus(20, 23, start_year=2021, years=1, prefix="B")]))
    marts.build_paper_scores(con, D2)
    tables = ["marts.paper_scores", "cache.novelty_tokens", "cache.novelty_terms", "cache.novelty_bigrams",
              "cache.novelty_epochs"]
    snapshot = {t: warehouse.read_frame(con, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}
    again = marts.build_paper_scores(con, D2)
    assert (again.mode, again.scored, again.removed) == ("incremental", 0, 0)
    assert all(warehouse.read_frame(con, f"SELECT * FROM {t} ORDER BY ALL").equals(snapshot[t]) for t in tables)
    assert again.rows == warehouse.scalar(con, "SELECT count(DISTINCT paper_id) FROM marts.paper_scores")
    # the epoch's own night again: still that epoch, nothing re-scored
    assert marts.build_paper_scores(con, D1).mode == "incremental"


def test_warehouse_version_schedule_window_and_demand_start_a_new_epoch(con, monkeypatch):
    """(d) A new scorer version, an epoch older than the cadence, another window and a run that asks
    for it each re-score every paper under a new epoch; in between, nights are incremental."""
    base = corpus(120, 24)
    load_core(con, base)
    marts.build_paper_scores(con, D1, epoch_days=7)

    def everything_rescored(night: dt.date, **kw) -> marts.PaperScoresNight:
        out = marts.build_paper_scores(con, night, **kw)
        rows = scores(con)
        assert out.mode == "new epoch" and out.scored == rows.height == base.height
        assert set(rows["scored_on"]) == {night} and set(rows["epoch_id"]) == {night.isoformat()}
        return out

    assert marts.build_paper_scores(con, D1 + dt.timedelta(days=6), epoch_days=7).mode == "incremental"
    assert "days old" in everything_rescored(D1 + dt.timedelta(days=7), epoch_days=7).reason
    assert everything_rescored(D1 + dt.timedelta(days=8), new_epoch=True).reason == "asked for (on demand)"
    assert "window" in everything_rescored(D1 + dt.timedelta(days=9), novelty_window=30).reason
    monkeypatch.setattr(marts, "METHOD_VERSION", "tfidf-knn-test")
    out = everything_rescored(D1 + dt.timedelta(days=10), novelty_window=30)
    assert "version changed" in out.reason and set(scores(con)["method_version"]) == {"tfidf-knn-test"}
    # the model tables hold the current epoch only; the epochs table keeps the history
    assert warehouse.read_frame(con, "SELECT DISTINCT epoch_id, method_version FROM cache.novelty_tokens").rows() == [
        ("2026-12-03", "tfidf-knn-test")]
    assert warehouse.scalar(con, "SELECT count(*) FROM cache.novelty_epochs") == 5
    # never on a schedule with epoch_days=None
    assert marts.build_paper_scores(con, D1 + dt.timedelta(days=60), epoch_days=None,
                                    novelty_window=30).mode == "incremental"


def test_warehouse_changed_inputs_and_removed_papers(con):
    """A paper whose title changed is scored again (and only it, with the papers that named a removed
    paper as their nearest); a paper gone from core.papers loses its row and its tokens."""
    base = corpus(150, 25)
    load_core(con, base)
    marts.build_paper_scores(con, D1)
    before = scores(con)
    victim = before.filter(pl.col("nearest_paper_id").is_not_null())["nearest_paper_id"][0]
    pointing = set(before.filter(pl.col("nearest_paper_id") == victim)["paper_id"])
    edited = base["paper_id"][0] if base["paper_id"][0] != victim else base["paper_id"][1]
    tonight = base.filter(pl.col("paper_id") != victim).with_columns(
        title=pl.when(pl.col("paper_id") == edited).then(pl.lit("entirely different wording zzqv"))
        .otherwise(pl.col("title")))
    load_core(con, tonight)
    out = marts.build_paper_scores(con, D2)
    after = scores(con)
    rescored = set(after.filter(pl.col("scored_on") == D2)["paper_id"])
    assert rescored == (pointing | {edited}) - {victim}
    assert out.removed == 1 and victim not in set(after["paper_id"])
    assert warehouse.scalar(con, "SELECT count(*) FROM cache.novelty_tokens WHERE paper_id = ?", [victim]) == 0
    assert after.filter(~pl.col("paper_id").is_in(list(rescored))).equals(
        before.filter(~pl.col("paper_id").is_in(list(rescored | {victim}))))
    assert after.filter(pl.col("nearest_paper_id") == victim).height == 0


def test_warehouse_reported_columns_follow_the_pages_on_kept_rows(con):
    base = corpus(80, 26)
    load_core(con, base)
    marts.build_paper_scores(con, D1)
    con.execute("UPDATE core.papers SET has_code = true WHERE paper_id = ?", [base["paper_id"][3]])
    out = marts.build_paper_scores(con, D2)
    assert out.scored == 0
    row = scores(con).filter(pl.col("paper_id") == base["paper_id"][3])
    assert row["has_code"][0] is True and row["scored_on"][0] == D1


def test_the_run_tag_asks_for_a_new_epoch_and_a_rerun_scores_nothing(tmp_path):
    """Through Dagster on the samples: the first night fits an epoch, a re-run of it scores nothing
    (and keeps every row), and a run tagged scholarhouse/novelty_epoch=new re-scores every paper."""
    import dagster as dg

    from tests.conftest import SAMPLE_DATE, SAMPLES
    from pipelines.assets.marts import NEW_EPOCH_TAG
    from pipelines.definitions import defs
    from pipelines.resources import CapturesFolderResource, WarehouseResource

    path = tmp_path / "wh.duckdb"
    job = defs.resolve_job_def("nightly_refresh")

    def run(tags=None) -> dict:
        result = job.execute_in_process(
            partition_key=SAMPLE_DATE, instance=dg.DagsterInstance.ephemeral(), tags=tags or {},
            resources={"page_source": CapturesFolderResource(path=str(SAMPLES)),
                       "warehouse_db": WarehouseResource(path=str(path))}, raise_on_error=False)
        assert result.success
        shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
                 for ev in result.get_asset_materialization_events()}["marts/paper_scores"]
        return {k: v.value for k, v in shown.items() if k in ("mode", "papers_scored_tonight", "new_epoch_reason")}

    first = run()
    assert first["mode"] == "new epoch" and first["new_epoch_reason"] == "no epoch yet"
    with duckdb.connect(str(path), read_only=True) as c:
        rows = warehouse.read_frame(c, "SELECT * FROM marts.paper_scores ORDER BY paper_id")
    assert run() == {"mode": "incremental", "papers_scored_tonight": 0, "new_epoch_reason": ""}
    with duckdb.connect(str(path), read_only=True) as c:
        assert warehouse.read_frame(c, "SELECT * FROM marts.paper_scores ORDER BY paper_id").equals(rows)
    asked = run({NEW_EPOCH_TAG: "new"})
    assert asked["mode"] == "new epoch" and asked["new_epoch_reason"] == "asked for (on demand)"
    assert asked["papers_scored_tonight"] == rows.height


def test_the_idf_a_new_epoch_keeps_is_fit_idf():
    """score_epoch keeps the document frequencies the TF-IDF weighed with: fit_idf's, for the corpus."""
    from pipelines.marts.scoring.features import fit_idf
    from pipelines.marts.scoring.novelty import canonical_frame, tokenize_frame

    papers = corpus(120, 30)
    model = ep.score_epoch(papers).model
    fitted = fit_idf(tokenize_frame(canonical_frame(papers)))
    assert model.idf.n_docs == fitted.n_docs == 120
    for a, b in ((model.idf.term_df, fitted.term_df), (model.idf.bigram_codes, fitted.bigram_codes),
                 (model.idf.bigram_df, fitted.bigram_df)):
        assert a.tolist() == b.tolist()


def test_incremental_night_on_the_paths_a_large_corpus_takes(monkeypatch):
    """(a) again with the dense/sparse split of the similarity forced on small categories and small
    text batches and chunks: the night's papers' scores equal the full re-score under the epoch (the
    dense BLAS products may round a last bit differently; the 6-decimal rounding absorbs it)."""
    from pipelines.marts.scoring import neighbours as neighbours_module

    monkeypatch.setattr(neighbours_module, "_MIN_ROWS_FOR_DENSE", 1)
    monkeypatch.setattr(neighbours_module, "_HOT_MIN_SHARE", 0.2)
    kw = {"chunk_size": 16, "text_batch_size": 37}
    base = corpus(240, 31)
    state = start(base, **kw)
    papers = pl.concat([base, corpus(50, 32, start_year=2021, years=2, prefix="D")])
    scored = night(state, papers, **kw)
    full = ep.score_epoch(papers, model=state["model"], **kw).scores
    assert scored.equals(full.filter(pl.col("paper_id").is_in(scored["paper_id"].implode())))


def test_an_epoch_fitted_on_papers_without_terms_serves_the_next_night(con):
    """Titles of stopwords only: the epoch's vocabulary is empty, and the next night still loads it
    and scores its arrival (it once refused an empty vocabulary: 'term ids are not 0..n-1')."""
    empty = pl.DataFrame([{"paper_id": f"E{i}", "title": "The of and", "abstract": None, "category": "cs.LG",
                           "year": 2020, "pub_date": None} for i in range(3)], schema=SCHEMA)
    load_core(con, empty)
    assert marts.build_paper_scores(con, D1).mode == "new epoch"
    assert warehouse.scalar(con, "SELECT count(*) FROM cache.novelty_terms") == 0
    arrival = pl.DataFrame([{"paper_id": "E9", "title": "quantum kernels", "abstract": None, "category": "cs.LG",
                             "year": 2021, "pub_date": None}], schema=SCHEMA)
    load_core(con, pl.concat([empty, arrival]))
    out = marts.build_paper_scores(con, D2)
    assert (out.mode, out.scored) == ("incremental", 1)
    assert scores(con).filter(pl.col("paper_id") == "E9")["new_terms"][0].to_list() == ["kernels", "quantum"]

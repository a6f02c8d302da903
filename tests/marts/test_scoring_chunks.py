"""Novelty in chunks (pipelines/marts/scoring/chunks.py, the marts/paper_scores graph): the night's scoring
split by category into independent steps that exchange Parquet files gives exactly the scores of
the one-piece scoring — a new epoch and incremental nights, for any number of chunks — and the
asset runs it as plan (pool) -> chunks (no pool) -> write (pool)."""

from __future__ import annotations

import datetime as dt
import shutil

import dagster as dg
import duckdb
import numpy as np
import polars as pl
import pytest
from tests.marts.test_scoring_epoch import D1, D2, corpus, load_core

from pipelines import warehouse
from pipelines.marts import build as marts
from pipelines.marts.scoring import chunks
from pipelines.marts.scoring import epoch as ep

TABLES = ("marts.paper_scores", "cache.novelty_tokens", "cache.novelty_terms", "cache.novelty_bigrams",
          "cache.novelty_epochs")


def in_chunks(prepared: chunks.Prepared, n: int, window, folder=None, group=None) -> ep.EpochScores:
    """Score ``prepared`` in ``n`` chunks (through a folder, as the steps do, when one is given)."""
    if folder is not None:
        chunks.save_prepared(prepared, folder)
        prepared = chunks.load_prepared(folder)
    parts = []
    for index, rows in enumerate(chunks.assign_chunks(prepared, n, window=window)):
        part = chunks.score_chunk(prepared, rows, window=window)
        if folder is not None:
            part = pl.read_parquet(chunks.save_chunk(part, folder, index))
        parts.append(part)
    return chunks.finish(prepared, parts, group)


@pytest.mark.parametrize("window", [None, 40])
def test_a_new_epoch_in_any_number_of_chunks_scores_like_score_epoch(window, tmp_path):
    papers = pl.concat([corpus(800, 1), corpus(200, 2, prefix="Q")])
    whole = ep.score_epoch(papers, window=window)
    prepared = chunks.prepare_epoch(papers)
    for n in (1, 2, 5):
        got = in_chunks(prepared, n, window, tmp_path / f"n{n}" if n > 1 else None)
        assert got.scores.equals(whole.scores), n
        assert got.tokens.equals(whole.tokens)
        assert got.model.vocabulary == whole.model.vocabulary and got.model.surface == whole.model.surface
        for a, b in zip(vars(got.model.idf).values(), vars(whole.model.idf).values()):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("window", [None, 25])
def test_an_incremental_night_in_chunks_scores_like_score_arrivals(window, tmp_path):
    base = corpus(600, 3)
    first = ep.score_epoch(base, window=window)
    papers = pl.concat([base, corpus(120, 4, start_year=2018, years=4, prefix="A")])
    to_score = papers.join(first.scores.select("paper_id"), on="paper_id", how="anti")["paper_id"]
    whole = ep.score_arrivals(papers, to_score, first.model, first.tokens, first.scores, window=window)
    prepared = chunks.prepare_arrivals(papers, to_score, first.model, first.tokens)
    for n in (1, 3):
        got = in_chunks(prepared, n, window, tmp_path / f"n{n}", group=first.scores)
        assert got.scores.equals(whole.scores), n
        assert got.tokens.equals(whole.tokens)
        assert got.model.vocabulary == whole.model.vocabulary and got.model.surface == whole.model.surface


def test_chunks_cover_every_query_row_once_and_split_a_large_category():
    papers = pl.concat([corpus(900, 5), corpus(50, 6, prefix="R").with_columns(category=pl.lit("math.AG"))])
    prepared = chunks.prepare_epoch(papers)
    for n in (1, 2, 4, 9):
        parts = chunks.assign_chunks(prepared, n, window=100)
        assert 1 <= len(parts) <= n
        rows = np.concatenate(parts)
        assert sorted(rows.tolist()) == list(range(prepared.frame.height)), n
    # four categories (three and null) into 9 chunks: the large ones are cut into runs of rows
    assert len(chunks.assign_chunks(prepared, 9, window=100)) > 4
    nothing = chunks.Prepared(prepared.frame, prepared.tokens, prepared.model,
                              np.zeros(prepared.frame.height, dtype=bool), prepared.new_tokens, False)
    assert [len(p) for p in chunks.assign_chunks(nothing, 3)] == [0]
    assert chunks.score_chunk(nothing, np.zeros(0, dtype=np.int64)).height == 0


def _snapshot(con) -> dict[str, pl.DataFrame]:
    return {t: warehouse.read_frame(con, f"SELECT * EXCLUDE (fitted_at) FROM {t} ORDER BY ALL" if t.endswith("epochs")
                                    else f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES}


def _chunked_night(con, day, n, folder) -> marts.PaperScoresNight:
    """What the asset's steps do: plan -> folder -> prepare -> chunks -> finish -> write."""
    plan = marts.plan_paper_scores(con, day, novelty_window=30, fingerprint=True)
    marts.save_plan(plan, folder)
    plan = marts.load_plan(folder)
    prepared = marts.prepare_plan(plan)
    parts = []
    if prepared is not None:
        chunks.save_prepared(prepared, folder / "prepared")
        prepared = chunks.load_prepared(folder / "prepared")
        parts = [pl.read_parquet(chunks.save_chunk(chunks.score_chunk(prepared, rows, window=30), folder, i))
                 for i, rows in enumerate(chunks.assign_chunks(prepared, n, window=30))]
    assert marts.scores_fingerprint(con) == plan.fingerprint
    return marts.write_paper_scores(con, plan, marts.finish_plan(plan, prepared, parts))


def test_warehouse_nights_in_chunks_equal_build_paper_scores(tmp_path):
    """A new epoch, an incremental night with arrivals and a re-run of it: every novelty table equal."""
    base = corpus(300, 7)
    nights = [(D1, base), (D2, pl.concat([base, corpus(40, 8, start_year=2019, years=3, prefix="A")]))]
    nights.append(nights[-1])
    seen = {}
    for how in ("whole", "chunks"):
        with duckdb.connect(str(tmp_path / f"{how}.duckdb")) as con:
            warehouse.ensure_schema(con)
            results = []
            for i, (day, papers) in enumerate(nights):
                load_core(con, papers)
                results.append(marts.build_paper_scores(con, day, novelty_window=30) if how == "whole"
                               else _chunked_night(con, day, 3, tmp_path / f"night{i}"))
            seen[how] = ([(r.mode, r.reason, r.scored, r.kept, r.removed, r.cold_start, r.rows) for r in results],
                         _snapshot(con))
    assert seen["chunks"][0] == seen["whole"][0]
    assert [r[2] for r in seen["whole"][0]] == [300, 40, 0]
    for table in TABLES:
        assert seen["chunks"][1][table].equals(seen["whole"][1][table]), table


def test_the_fingerprint_sees_changed_inputs_and_scores(tmp_path):
    with duckdb.connect(str(tmp_path / "wh.duckdb")) as con:
        warehouse.ensure_schema(con)
        base = corpus(80, 9)
        load_core(con, base)
        marts.build_paper_scores(con, D1)
        before = marts.scores_fingerprint(con)
        assert marts.scores_fingerprint(con) == before
        load_core(con, base.with_columns(title=pl.when(pl.col("paper_id") == base["paper_id"][0])
                                         .then(pl.lit("a changed title")).otherwise("title")))
        changed_inputs = marts.scores_fingerprint(con)
        assert changed_inputs != before
        marts.build_paper_scores(con, D2)
        assert marts.scores_fingerprint(con) != changed_inputs


def test_the_asset_scores_in_chunk_steps_outside_the_pool_like_one_piece(tmp_path, monkeypatch):
    """nightly_refresh on the samples with SCHOLARHOUSE_NOVELTY_CHUNKS=3: three chunk steps, the work
    folder gone afterwards, and the novelty tables equal to a one-piece scoring of the same corpus."""
    from tests.conftest import SAMPLE_DATE, SAMPLES

    from pipelines.definitions import defs
    from pipelines.resources import CapturesFolderResource, WarehouseResource

    monkeypatch.setenv("SCHOLARHOUSE_NOVELTY_CHUNKS", "3")
    path = tmp_path / "wh.duckdb"
    result = defs.resolve_job_def("nightly_refresh").execute_in_process(
        partition_key=SAMPLE_DATE, instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
        resources={"page_source": CapturesFolderResource(path=str(SAMPLES)),
                   "warehouse_db": WarehouseResource(path=str(path))})
    assert result.success
    steps = {e.step_key for e in result.all_events if e.step_key}
    assert sum(1 for s in steps if s.startswith("marts__paper_scores.score_novelty_chunk[")) == 3
    shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
             for ev in result.get_asset_materialization_events()}["marts/paper_scores"]
    assert shown["novelty_chunks"].value == 3 and shown["mode"].value == "new epoch"
    assert not any((tmp_path / "work" / "novelty").iterdir())

    whole = tmp_path / "whole.duckdb"
    shutil.copy(path, whole)
    with duckdb.connect(str(whole)) as con:
        for table in TABLES:
            con.execute(f"DELETE FROM {table}")
        marts.build_paper_scores(con, dt.date.fromisoformat(SAMPLE_DATE))
        expected = _snapshot(con)
    with duckdb.connect(str(path), read_only=True) as con:
        got = _snapshot(con)
    assert expected["marts.paper_scores"].height > 0
    for table in TABLES:
        assert got[table].equals(expected[table]), table

"""The core build in steps with sharded resolution (pipelines/core/sharded.py, the ``core_tables`` graph):
every table the core step writes equals the one-piece ``build_core``'s, for 1 and 3 shards, on a
full night and on an incremental night that follows it; the asset runs the shards as steps outside
the warehouse pool; the write step notices when the warehouse changed since the plan."""

from __future__ import annotations

import shutil
from datetime import date

import duckdb
import polars as pl
import pytest

from pipelines.assets import core as core_assets
from pipelines.core import build as core_build
from pipelines.core import sharded
from pipelines.core.identity.overrides import Overrides
from pipelines.core.resolution.papers import TitleDiffCache
from pipelines.core.resolution.runtime import MatchOptions
from pipelines import warehouse
from pipelines.warehouse import contract
from tests.conftest import SAMPLE_DATE, SAMPLES, build_warehouse

DAY = date.fromisoformat(SAMPLE_DATE)


def _inputs(path) -> core_build.CoreInputs:
    with duckdb.connect(str(path), read_only=True) as con:
        return core_build.read_core_inputs(con, DAY)


def _one_piece(inputs: core_build.CoreInputs, options: MatchOptions) -> core_build.CoreTables:
    return core_build.build_core(inputs.listings, inputs.profiles, overrides=Overrides(), today=DAY,
                                 title_diffs=TitleDiffCache(inputs.title_diffs), options=options,
                                 **inputs.build_arguments())


def _assert_same_tables(got: core_build.CoreTables, expected: core_build.CoreTables) -> None:
    for (table, frame), (_, want) in zip(got.writes(), expected.writes()):
        assert frame.equals(want), table
    assert got.listing_papers.equals(expected.listing_papers)


def _changed(inputs: core_build.CoreInputs) -> core_build.CoreInputs:
    """Tonight's listings with one title edited: a few records and mentions changed (an incremental night)."""
    key = inputs.listings.sort("listing_key")["listing_key"][0]
    inputs.listings = inputs.listings.with_columns(
        title=pl.when(pl.col("listing_key") == key).then(pl.col("title") + " revisited").otherwise("title"))
    return inputs


@pytest.mark.parametrize("night", ["full", "incremental"])
@pytest.mark.parametrize("k", [1, 3])
def test_the_core_in_steps_equals_build_core(demo_warehouse, tmp_path, night, k):
    """The demo night's warehouse, resolved again: every author and paper re-resolved (``full``: the
    incremental switch off, so with k = 3 the shards run) or a night with one listing's title changed
    (``incremental``: both matchers in one piece, from the stored state). Every table equal to
    ``build_core``'s."""
    options = MatchOptions(workers=1, incremental=night == "incremental")
    prepare = _changed if night == "incremental" else (lambda inputs: inputs)
    expected = _one_piece(prepare(_inputs(demo_warehouse)), options)
    got = sharded.run_in_steps(tmp_path / "work", prepare(_inputs(demo_warehouse)), None, k, today=DAY, options=options)
    _assert_same_tables(got, expected)
    for side in ("paper_resolution", "author_resolution"):
        assert got.stats[side]["mode"] == expected.stats[side]["mode"] == night, side
        # a full night in k > 1 shards; one shard (the default) runs the matcher itself, in one piece
        assert got.stats[side].get("shards", 1) == (k if night == "full" else 1), side
    if night == "full":  # the shards' title diffs together are the one piece's cache for the next night
        assert got.title_diffs.height > 0 and got.stats["title_diffs_computed"] >= expected.stats["title_diffs_computed"]
    assert got.stats["timings"]["resolve_papers"]["seconds"] >= 0 and "resolve_authors" in got.stats["timings"]


def test_the_fingerprint_sees_what_the_core_step_reads(demo_warehouse, tmp_path):
    path = tmp_path / "wh.duckdb"
    shutil.copy(demo_warehouse, path)
    with duckdb.connect(str(path)) as con:
        before = core_build.inputs_fingerprint(con)
        assert core_build.inputs_fingerprint(con) == before
        assert [t for t, *_ in before] == sorted(core_build.CORE_READS)
        con.execute("DELETE FROM cache.title_diffs WHERE rowid = (SELECT min(rowid) FROM cache.title_diffs)")
        assert core_build.inputs_fingerprint(con) != before


def _snapshot(path) -> dict[str, pl.DataFrame]:
    tables = [*contract.core_build_writes(), "core.paper_listings"]
    with duckdb.connect(str(path), read_only=True) as con:
        return {t: warehouse.read_frame(con, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}


def test_the_asset_resolves_in_shard_steps_like_one_piece(demo_warehouse, tmp_path, monkeypatch):
    """nightly_refresh on the samples with SCHOLARHOUSE_RESOLUTION_SHARDS=3: three paper and three author
    shard steps, outside the pool; the work folder gone afterwards; every core table and matcher cache equal
    to the demo run's (one shard). The next night (nothing changed: incremental) resolves in one piece."""
    monkeypatch.setenv("SCHOLARHOUSE_RESOLUTION_SHARDS", "3")
    path = tmp_path / "wh.duckdb"
    result = build_warehouse(SAMPLES, path)
    assert result.success
    steps = {e.step_key for e in result.all_events if e.step_key}
    assert sum(1 for s in steps if s.startswith("core_tables.score_paper_shard[")) == 3
    assert sum(1 for s in steps if s.startswith("core_tables.resolve_author_shard[")) == 3
    assert core_assets.plan_core.pool == core_assets.write_core_tables.pool == "warehouse"
    for op in (core_assets.plan_paper_shards, core_assets.score_paper_shard, core_assets.cluster_papers,
               core_assets.resolve_author_shard, core_assets.assemble_core):
        assert op.pool is None, op.name
    shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
             for ev in result.get_asset_materialization_events()}
    assert shown["core/papers"]["paper_shards"].value == 3 and shown["core/authors"]["author_shards"].value == 3
    assert shown["core/papers"]["paper_resolution"].value == "full"
    assert not any((tmp_path / "work" / "core").iterdir())
    got, expected = _snapshot(path), _snapshot(demo_warehouse)
    assert expected["core.authors"].height > 0
    for table, frame in expected.items():
        assert got[table].equals(frame), table

    again = build_warehouse(SAMPLES, path, "2026-11-23")  # a Monday: 2026-11-22 is the weekly full night
    assert again.success
    shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
             for ev in again.get_asset_materialization_events()}
    assert shown["core/papers"]["paper_resolution"].value == "incremental"
    assert shown["core/authors"]["author_resolution"].value == "incremental"
    assert shown["core/papers"]["paper_shards"].value == 0


def test_a_write_after_the_warehouse_changed_resolves_the_night_again(demo_warehouse, tmp_path, monkeypatch):
    """If another run wrote what the plan read (the fingerprint differs at the write), the shards' work is
    stale: the write step resolves the night again in one piece — the same tables as the demo run."""
    monkeypatch.setenv("SCHOLARHOUSE_RESOLUTION_SHARDS", "2")
    real, calls = core_build.inputs_fingerprint, []

    def moved(con):  # the plan's read is the real one; by the write, "another run" has changed a table
        calls.append(1)
        value = real(con)
        return value if len(calls) == 1 else [*value, ["another run", 1, 1]]

    monkeypatch.setattr(core_build, "inputs_fingerprint", moved)
    path = tmp_path / "wh.duckdb"
    result = build_warehouse(SAMPLES, path)
    assert result.success and len(calls) == 2
    shown = {ev.materialization.asset_key.to_user_string(): ev.materialization.metadata
             for ev in result.get_asset_materialization_events()}
    # resolved again in the write step, in one piece (the plan's 2 shards were not used)
    assert shown["core/papers"]["paper_shards"].value == 0 and shown["core/authors"]["author_shards"].value == 0
    got, expected = _snapshot(path), _snapshot(demo_warehouse)
    for table, frame in expected.items():
        assert got[table].equals(frame), table

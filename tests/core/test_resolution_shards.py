"""Author resolution in shards (pipelines/core/resolution/shards.py): the model fitted once on all the
mentions, whole components dealt to shards, each shard resolved apart with that model, the
shards' results put together — exactly the full resolution, for any number of shards."""

from __future__ import annotations

import polars as pl
import pytest

from pipelines.core.resolution import shards
from pipelines.core.resolution.authors import fit_author_model, resolve_authors
from pipelines.core.resolution.incremental import model_frame
from benchmarks.bibliographies import synthetic_mentions

try:
    from tests.core.test_resolution_authors import sample_mentions
except ImportError:  # tests collected as a package
    from tests.core.test_resolution_authors import sample_mentions


def _sharded(frame: pl.DataFrame, k: int, tmp_path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the steps would do: the model as rows through Parquet, each shard's input through Parquet."""
    model_path = tmp_path / "model.parquet"
    model_frame(fit_author_model(frame)).write_parquet(model_path)
    results = []
    for s, (part, paper_rows) in enumerate(shards.author_shards(frame, k)):
        part.write_parquet(tmp_path / f"part{s}.parquet")
        paper_rows.write_parquet(tmp_path / f"papers{s}.parquet")
        results.append(shards.resolve_author_shard(pl.read_parquet(tmp_path / f"part{s}.parquet"),
                                                   pl.read_parquet(tmp_path / f"papers{s}.parquet"),
                                                   pl.read_parquet(model_path)))
    return shards.union_author_shards(results)


def _synthetic(seed: int) -> pl.DataFrame:
    frame, _ = synthetic_mentions(seed=seed, n_groups=60)
    return frame.with_columns(orcid=pl.when(pl.int_range(pl.len()) % 97 == 0).then(pl.lit("0000-0002-1825-0097")))


@pytest.mark.parametrize("source", ["samples", "synthetic"])
def test_shards_resolve_like_the_whole(source, tmp_path):
    frame = sample_mentions() if source == "samples" else _synthetic(3)
    whole, whole_review = resolve_authors(frame)
    for k in (1, 3, 8):
        got, got_review = _sharded(frame, k, tmp_path)
        assert got.equals(whole), k
        assert got_review.equals(whole_review), k
    if source == "synthetic":
        assert whole_review.height > 0


def test_shards_hold_whole_components_and_the_mentions_of_their_papers():
    frame = _synthetic(5)
    parts = shards.author_shards(frame, 4)
    assert len(parts) == 4
    ids = pl.concat([p["mention_id"] for p, _ in parts])
    assert ids.len() == frame.height and ids.n_unique() == frame.height
    for part, paper_rows in parts:
        assert set(part["mention_id"]) <= set(paper_rows["mention_id"])
        wanted = set(frame.filter(pl.col("paper_id").is_in(part["paper_id"].unique().implode()))["mention_id"])
        assert wanted <= set(paper_rows["mention_id"])
    # more shards than components: no empty shard; nothing in: one empty shard
    assert all(p.height for p, _ in shards.author_shards(frame.head(3), 50))
    empty = shards.author_shards(frame.head(0), 3)
    assert len(empty) == 1 and shards.union_author_shards(
        [shards.resolve_author_shard(*empty[0], model_frame(fit_author_model(frame.head(0))))])[0].height == 0


# --- papers: the candidate pairs scored in shards, clustered in one union step

def _paper_records(source: str) -> pl.DataFrame:
    if source == "samples":
        try:
            from tests.core.test_resolution_papers import sample_records
        except ImportError:  # tests collected as a package
            from tests.core.test_resolution_papers import sample_records
        return sample_records()
    from benchmarks.bibliographies import synthetic_papers
    return synthetic_papers(seed=7, n_papers=1500)[0]


@pytest.mark.parametrize("source", ["samples", "synthetic"])
def test_paper_pairs_scored_in_shards_resolve_like_the_whole(source, tmp_path):
    """What the pipeline runs (``catalogues=()``: its sources are profile pages), pairs and scored
    rows through Parquet as the steps would hand them over."""
    from pipelines.core.resolution.papers import resolve_papers

    records = _paper_records(source)
    whole, whole_review = resolve_papers(records, catalogues=())
    pairs = shards.paper_pairs(records)
    for k in (1, 3, 8):
        scored = []
        for s, part in enumerate(shards.paper_pair_shards(pairs, k)):
            shards.score_paper_shard(records, part).write_parquet(tmp_path / f"scored{k}_{s}.parquet")
            scored.append(pl.read_parquet(tmp_path / f"scored{k}_{s}.parquet"))
        assert sum(p.height for p in shards.paper_pair_shards(pairs, k)) == pairs.height
        got, got_review = shards.union_paper_shards(records, scored)
        assert got.equals(whole), k
        assert got_review.equals(whole_review), k
    if source == "synthetic":
        assert whole_review.height > 0 and whole["paper_id"].n_unique() < records.height

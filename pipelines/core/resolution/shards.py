"""Paper and author resolution in shards: the pieces a sharded core stage is built from (issue 24, part 1).

Wired into the asset graph by ``pipelines/core/sharded.py`` (the ``core_tables`` graph's
``score_paper_shard`` and ``resolve_author_shard`` steps, on full nights). What is here is the part
whose result must not move.

**Authors** (components never interact):

1. **fit** — ``fit_author_model`` on *all* the mentions (frequency tables over all of them, EM on a
   deterministic sample), kept as rows (``incremental.model_frame``: Parquet-ready, the same rows
   ``cache.author_model`` keeps);
2. **shard** — ``author_shards``: the mentions' independent components (``author_components.components``:
   shared name key, loose key, profile, ORCID, OpenAlex id, transitively) dealt to ``k`` shards
   whole, largest first to the least loaded; each shard also carries every mention of its papers
   (the names on a paper are what its mentions' co-author evidence reads);
3. **resolve** — ``resolve_author_shard``: one shard with the fixed model, anywhere;
4. **union** — ``union_author_shards``: the shards' assignments and review rows together. Every
   candidate pair, constraint and merge lies inside one component, and an author id is the smallest
   mention id of its cluster, so the union is a concatenation.

**Papers** (their candidate graph is one component, so the *pairs* are sharded):

1. **plan** — ``paper_pairs``: the title candidate pairs of the collapsed records, blocked over all
   of them (word rarity, oversize blocks), as representative record ids;
2. **shard** — ``score_paper_shard``: one slice of the pairs (``paper_pair_shards``) scored; scoring
   is pair-local once the features are built (each shard rebuilds them: a linear pass);
3. **union** — ``union_paper_shards``: every scored pair clustered at once (strongest edge first
   over the whole graph, with the constraints), then assignments and review as ``resolve_papers``.

The invariants (tests/core/test_resolution_shards.py), for any ``k``: the authors' union equals
``resolve_authors(mentions, model=fit_author_model(mentions))`` — a full night's resolution — and the
papers' equals ``resolve_papers(records, catalogues=())`` — the pipeline's full night (its sources
are profile pages; catalogue detection's second clustering is not sharded). Pure logic: Polars in
and out, no Dagster, no environment.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines.core.resolution import papers as _papers
from pipelines.core.resolution.paper_features import collapse, node_features, prepare_features
from pipelines.core.resolution.paper_scoring import candidate_pairs, score_pairs
from pipelines.core.resolution.authors import ASSIGNMENT_SCHEMA, components, resolve_authors
from pipelines.core.resolution.incremental import model_of
from pipelines.core.resolution.review import REVIEW_SCHEMA, concat_queues


def author_shards(mentions: pl.DataFrame, k: int) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    """``mentions`` dealt to at most ``k`` shards of whole components: per shard ``(part, paper_rows)``,
    its mentions and every mention of the papers they are on. Deterministic; never an empty shard
    (at least one shard, empty when ``mentions`` is)."""
    k = max(1, int(k))
    if mentions.height == 0:
        return [(mentions, mentions)]
    component = components(mentions)
    sizes = np.bincount(component)
    loads = np.zeros(k, dtype=np.int64)
    shard_of = np.empty(sizes.size, dtype=np.int64)
    # largest component first, to the least loaded shard (ties: lower shard, lower component)
    for c in np.lexsort((np.arange(sizes.size), -sizes)).tolist():
        at = int(np.argmin(loads))
        shard_of[c] = at
        loads[at] += sizes[c]
    row_shard = shard_of[component]
    papers = mentions["paper_id"].cast(pl.String)
    shards = []
    for s in range(k):
        mask = row_shard == s
        if not mask.any():
            continue
        part = mentions.filter(pl.Series(mask))
        own = part["paper_id"].cast(pl.String).drop_nulls().unique().implode()
        shards.append((part, mentions.filter(papers.is_in(own) | pl.Series(mask))))
    return shards


def resolve_author_shard(part: pl.DataFrame, paper_rows: pl.DataFrame, model_rows: pl.DataFrame, *,
                         batch: int | None = None, workers: int | None = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(assignments, review) of one shard, with the evidence weights ``model_rows``
    (``incremental.model_frame`` of the model fitted on all the mentions)."""
    if part.height == 0:
        return pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA)
    return resolve_authors(part, paper_rows=paper_rows, model=model_of(model_rows), batch=batch, workers=workers)


def union_author_shards(results: list[tuple[pl.DataFrame, pl.DataFrame]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The shards' (assignments, review) as one resolution (``resolve_authors``' answer)."""
    assignments = [a for a, _ in results if a.height]
    reviews = [r for _, r in results if r.height]
    assigned = (pl.concat(assignments).sort("mention_id") if assignments
                else pl.DataFrame(schema=ASSIGNMENT_SCHEMA))
    return assigned, (concat_queues(reviews) if reviews else pl.DataFrame(schema=REVIEW_SCHEMA))


# --- papers: the candidate pairs scored in shards, the clustering in one union step
#
# The papers' candidate graph is one component, so shards split the *pairs*: every shard rebuilds
# the records' features (blocking rarity, series flags and the collapse look at all records: a
# linear pass) and scores its slice of the pairs, which is pair-local; the union clusters all the
# scored pairs at once (strongest edge first over the whole graph), as ``resolve_papers`` does.


def _nodes(records: pl.DataFrame):
    """(features, node features, representative record ids) of ``records``, as the matcher builds them."""
    feats = prepare_features(records, None)
    reps, node_of = collapse(feats)
    nodes = feats if len(reps) == len(feats.record_ids) else node_features(feats, reps, node_of)
    return feats, nodes, pl.Series(feats.record_ids, dtype=pl.String).gather(reps)


def _node_index(rep_ids: pl.Series, pairs: pl.DataFrame) -> pl.DataFrame:
    """``pairs`` (left_id, right_id: representative record ids) as node indices (i, j)."""
    index = pl.DataFrame({"id": rep_ids, "node": np.arange(rep_ids.len(), dtype=np.int64)})
    return (pairs.join(index.rename({"id": "left_id", "node": "i"}), on="left_id", how="left", maintain_order="left")
            .join(index.rename({"id": "right_id", "node": "j"}), on="right_id", how="left", maintain_order="left"))


def paper_pairs(records: pl.DataFrame) -> pl.DataFrame:
    """The title candidate pairs the full resolution scores (``left_id``, ``right_id``: representative
    record ids of the collapsed nodes), in its order."""
    _, nodes, rep_ids = _nodes(records)
    pairs = candidate_pairs(nodes)
    return pl.DataFrame({"left_id": rep_ids.gather(pairs["i"]), "right_id": rep_ids.gather(pairs["j"])},
                        schema={"left_id": pl.String, "right_id": pl.String})


def paper_pair_shards(pairs: pl.DataFrame, k: int) -> list[pl.DataFrame]:
    """``pairs`` in at most ``k`` consecutive slices (pairs of one block stay together mostly, so a
    shard's distinct title pairs are diffed once)."""
    k = max(1, min(int(k), pairs.height or 1))
    bounds = np.linspace(0, pairs.height, k + 1).astype(np.int64)
    return [pairs.slice(int(a), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:])]


def score_paper_shard(records: pl.DataFrame, pairs: pl.DataFrame, *, title_diffs=None,
                      workers: int | None = 1) -> pl.DataFrame:
    """The scored rows of one slice of the candidate pairs (``score_pairs``' columns, with
    ``left_id`` / ``right_id`` instead of node indices)."""
    _, nodes, rep_ids = _nodes(records)
    indexed = _node_index(rep_ids, pairs)
    scored = score_pairs(nodes, indexed.select("i", "j"), title_diffs, workers)
    return scored.with_columns(left_id=rep_ids.gather(scored["i"]), right_id=rep_ids.gather(scored["j"])).drop("i", "j")


def union_paper_shards(records: pl.DataFrame, scored: list[pl.DataFrame], *,
                       workers: int | None = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(assignments, review) of ``records`` from every shard's scored pairs: ``resolve_papers``' answer."""
    if records.height == 0:
        return pl.DataFrame(schema=_papers.ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA)
    feats, _, rep_ids = _nodes(records)
    rows = _node_index(rep_ids, pl.concat(scored)).drop("left_id", "right_id")
    rows = rows.select("i", "j", *[c for c in rows.columns if c not in ("i", "j")]).sort("i", "j")
    res = _papers._resolve(feats, None, None, workers, rows)
    assignments = _papers._assignments(feats, res)
    return assignments, _papers._review(feats, res, assignments["paper_id"].to_list())

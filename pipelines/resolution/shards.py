"""Author resolution in shards: the pieces a sharded core stage is built from (issue 24, part 1).

Not wired into the asset graph yet (``core_tables`` is still one step; docs/scaling.md, "How the
split into steps goes", says what is left). What is here is the part whose result must not move:

1. **fit** — ``fit_author_model`` on *all* the mentions (frequency tables over all of them, EM on a
   deterministic sample), kept as rows (``incremental.model_frame``: Parquet-ready, the same rows
   ``cache.author_model`` keeps);
2. **shard** — ``author_shards``: the mentions' independent components (``authors._components``:
   shared name key, loose key, profile, ORCID, OpenAlex id, transitively) dealt to ``k`` shards
   whole, largest first to the least loaded; each shard also carries every mention of its papers
   (the names on a paper are what its mentions' co-author evidence reads);
3. **resolve** — ``resolve_author_shard``: one shard with the fixed model, anywhere;
4. **union** — ``union_author_shards``: the shards' assignments and review rows together. Components
   never interact (every candidate pair, constraint and merge lies inside one), and an author id is
   the smallest mention id of its cluster, so the union is a concatenation.

The invariant (tests/test_resolution_shards.py): for any ``k``, the union equals
``resolve_authors(mentions, model=fit_author_model(mentions))`` — the full night's resolution.
Pure logic: Polars in and out, no Dagster, no environment.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from pipelines.resolution.authors import ASSIGNMENT_SCHEMA, _components, resolve_authors
from pipelines.resolution.incremental import model_of
from pipelines.resolution.review import REVIEW_SCHEMA, concat_queues


def author_shards(mentions: pl.DataFrame, k: int) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    """``mentions`` dealt to at most ``k`` shards of whole components: per shard ``(part, paper_rows)``,
    its mentions and every mention of the papers they are on. Deterministic; never an empty shard
    (at least one shard, empty when ``mentions`` is)."""
    k = max(1, int(k))
    if mentions.height == 0:
        return [(mentions, mentions)]
    component = _components(mentions)
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

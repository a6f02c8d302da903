"""Stable ids: a paper or author keeps its id across nightly runs and backfills.

The matchers cluster *evidence keys* (listing keys for papers; profile and byline keys for
authors) afresh on every run. This module turns those clusters into warehouse ids using an
append-only registry holding, for every key ever seen, the id it was first given (its *home* id):

- a cluster whose keys share one home id keeps it;
- a cluster whose keys carry several ids (new evidence merged two entities) keeps the **oldest**
  (earliest first_seen, then smallest id); the others become redirects (old id → surviving id);
- when one old id is claimed by several clusters (an entity was split), the cluster holding most of
  that id's keys keeps it and the others take their next-best id or a new one;
- a cluster with no known id gets a new one, derived from its smallest key (so a re-run mints
  the same id, whatever the processing order).

Everything is deterministic: the same clusters and registry always give the same ids.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

import polars as pl

REGISTRY_SCHEMA = {"key": pl.String, "id": pl.String, "first_seen": pl.Date}
REDIRECT_SCHEMA = {"old_id": pl.String, "new_id": pl.String, "reason": pl.String, "redirected_on": pl.Date}


def mint_id(prefix: str, seed: str, attempt: int = 0) -> str:
    digest = hashlib.sha256(f"{seed}\x1f{attempt}".encode()).hexdigest()[:12]
    return f"{prefix}{digest}"


@dataclass
class IdAssignment:
    cluster_ids: pl.DataFrame   # cluster, id
    registry: pl.DataFrame      # key, id, first_seen — the full, updated registry
    redirects: pl.DataFrame     # old_id, new_id, reason, redirected_on — new this run


def assign_stable_ids(
    members: pl.DataFrame, registry: pl.DataFrame, *, prefix: str, today: date
) -> IdAssignment:
    """members: ``key`` (str, unique), ``cluster`` (str). registry: ``key``, ``id``, ``first_seen``."""
    members = members.select(pl.col("key").cast(pl.String), pl.col("cluster").cast(pl.String)).unique("key")
    registry = registry.select(list(REGISTRY_SCHEMA)).cast(REGISTRY_SCHEMA)
    id_age = registry.group_by("id").agg(pl.col("first_seen").min().alias("id_first_seen"))

    known = members.join(registry, on="key", how="inner").join(id_age, on="id", how="left")
    # candidate ids per cluster, with how many of the cluster's keys carry each
    candidates = (
        known.group_by("cluster", "id")
        .agg(pl.len().alias("votes"), pl.col("id_first_seen").first())
        .sort(["cluster", "id_first_seen", "id"])
    )
    # Which cluster owns each contested id: the one holding most of its keys (then smallest cluster name).
    owner = (
        candidates.sort(["id", "votes", "cluster"], descending=[False, True, False])
        .group_by("id", maintain_order=True).first().select("id", pl.col("cluster").alias("owner"))
    )
    candidates = candidates.join(owner, on="id").with_columns(is_owner=pl.col("cluster") == pl.col("owner"))

    chosen: dict[str, str] = {}
    for cluster, ids in (
        candidates.filter("is_owner").sort(["cluster", "id_first_seen", "id"])
        .group_by("cluster", maintain_order=True).agg(pl.col("id")).iter_rows()
    ):
        chosen[cluster] = ids[0]  # the oldest id this cluster owns

    used = set(registry["id"].to_list()) | set(chosen.values())
    cluster_min_key = members.group_by("cluster").agg(pl.col("key").min().alias("seed")).sort("cluster")
    for cluster, seed in cluster_min_key.iter_rows():
        if cluster in chosen:
            continue
        attempt = 0
        new_id = mint_id(prefix, seed)
        while new_id in used:
            attempt += 1
            new_id = mint_id(prefix, seed, attempt)
        chosen[cluster] = new_id
        used.add(new_id)

    cluster_ids = pl.DataFrame({"cluster": list(chosen), "id": list(chosen.values())}, schema={"cluster": pl.String, "id": pl.String})

    # Redirects: ids a cluster held but did not keep, and that no other cluster owns now.
    surviving = set(chosen.values())
    redirect_rows = (
        candidates.join(cluster_ids.rename({"id": "new_id"}), on="cluster")
        .filter((pl.col("id") != pl.col("new_id")) & ~pl.col("id").is_in(list(surviving)))
        .sort(["id", "votes", "cluster"], descending=[False, True, False])
        .group_by("id", maintain_order=True).first()
        .select(pl.col("id").alias("old_id"), "new_id")
        .with_columns(reason=pl.lit("merged"), redirected_on=pl.lit(today))
    )

    # Registry: append-only. Known keys keep their home id (so a later split can give each part its
    # original id back); new keys are registered with their cluster's id.
    new_keys = (
        members.join(registry.select("key"), on="key", how="anti")
        .join(cluster_ids, on="cluster")
        .select("key", "id", first_seen=pl.lit(today))
    )
    full_registry = pl.concat([registry, new_keys.cast(REGISTRY_SCHEMA)]).sort("key")
    return IdAssignment(cluster_ids.sort("cluster"), full_registry, redirect_rows.cast(REDIRECT_SCHEMA))


def merge_redirects(existing: pl.DataFrame, new: pl.DataFrame, live_ids: set[str]) -> pl.DataFrame:
    """Accumulate redirects and collapse chains (a→b, b→c ⇒ a→c). An id that is live again is not redirected.

    A redirect issued again (same old id, target and reason: the same merge seen on another night)
    keeps the date it was first made, so an unchanged warehouse gives identical rows every night.
    """
    rows = {}
    for frame in (existing, new):
        for old, new_id, reason, when in frame.select(list(REDIRECT_SCHEMA)).iter_rows():
            before = rows.get(old)
            if before is not None and before[:2] == (new_id, reason) and before[2] is not None and when is not None:
                when = min(when, before[2])
            rows[old] = (new_id, reason, when)
    resolved = []
    for old, (target, reason, when) in rows.items():
        if old in live_ids:
            continue
        seen = {old}
        while target in rows and target not in seen and target not in live_ids:
            seen.add(target)
            target = rows[target][0]
        if target != old:
            resolved.append((old, target, reason, when))
    return pl.DataFrame(resolved, schema=REDIRECT_SCHEMA, orient="row").sort("old_id")

"""Stable ids and the user's overrides, the same way for papers and authors: the matcher's clusters
get the ids the registry already knew (``identity/stable_ids.py``), then ``config/overrides.toml``
has the last word (``identity/overrides.py``). Also the stored redirects, read as both need them."""

from __future__ import annotations

from datetime import date

import polars as pl

from pipelines.core.identity.overrides import OverrideResult, Overrides, apply_overrides
from pipelines.core.identity.stable_ids import REDIRECT_SCHEMA, REGISTRY_SCHEMA, IdAssignment, assign_stable_ids

# entity -> (id prefix, the registry table's key column, its id column)
ENTITIES = {"paper": ("P", "listing_key", "paper_id"), "author": ("A", "mention_key", "author_id")}


def stored_redirects(redirects: pl.DataFrame) -> pl.DataFrame:
    """core.id_redirects as stored (``entity_type`` and REDIRECT_SCHEMA), or none with those columns."""
    if redirects.height:
        return redirects.select(["entity_type", *REDIRECT_SCHEMA])
    return pl.DataFrame(schema={"entity_type": pl.String, **REDIRECT_SCHEMA})


def stable_ids(members: pl.DataFrame, registry: pl.DataFrame, entity: str, *, today: date) -> IdAssignment:
    """The ids of ``members``' clusters (``key``, ``cluster``), from the entity's stored registry
    (``core.paper_id_registry`` / ``core.author_id_registry`` rows)."""
    prefix, key, ident = ENTITIES[entity]
    return assign_stable_ids(members.select("key", "cluster"), _registry(registry, key, ident), prefix=prefix, today=today)


def overridden(members: pl.DataFrame, assignment: IdAssignment, entity: str, *, overrides: Overrides,
               redirects: pl.DataFrame, today: date) -> OverrideResult:
    """The entity's overrides applied to ``members`` (``key``, ``id``, ``label``, ``profile``): a merge
    keeps the oldest id (by the registry's first_seen), an id that was redirected is followed."""
    prefix = ENTITIES[entity][0]
    return apply_overrides(members.select("key", "id", "label", "profile"), overrides.for_entity(entity),
                           prefix=prefix, id_age=_id_age(assignment.registry),
                           redirects=_redirect_map(redirects, entity), today=today)


def _registry(frame: pl.DataFrame, key: str, ident: str) -> pl.DataFrame:
    if frame.height == 0:
        return pl.DataFrame(schema=REGISTRY_SCHEMA)
    return frame.select(key=pl.col(key), id=pl.col(ident), first_seen=pl.col("first_seen")).cast(REGISTRY_SCHEMA)


def _id_age(registry: pl.DataFrame) -> dict:
    return dict(registry.group_by("id").agg(pl.col("first_seen").min()).iter_rows())


def _redirect_map(redirects: pl.DataFrame, entity: str) -> dict[str, str]:
    return dict(redirects.filter(pl.col("entity_type") == entity).select("old_id", "new_id").iter_rows())

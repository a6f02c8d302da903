"""The warehouse's tables, one list: every table ``sql/schema/*.sql`` creates, in DDL order, read
through the catalog (``pipelines/catalog.py``). The asset modules, the exports and the core build
ask here instead of keeping lists of their own, so a table added to the DDL is one edit, and a list
that disagrees with the DDL cannot exist. ``tests/test_warehouse_contract.py`` checks the users.

Plain Python, no Dagster imports; reads the DDL files only, never the warehouse.
"""

from __future__ import annotations

import functools

from pipelines import catalog

# Append-only bookkeeping of the core step (stable ids): written with the core tables, but neither
# assets of their own (the core.papers / core.authors suites guard them) nor exported.
ID_REGISTRIES = ("core.paper_id_registry", "core.author_id_registry")
# Filled by SQL from staging inside the core step's transaction (sql/core/paper_listings.sql), not
# from a frame of the core build.
FILLED_BY_SQL = ("core.paper_listings",)


@functools.cache
def all_tables() -> tuple[str, ...]:
    """Every table of the contract, ``schema.table``, in DDL order."""
    return tuple(catalog.ddl_tables())


def layer(schema: str) -> list[str]:
    """The tables of one layer (``raw``, ``staging``, ``enrichment``, ``core``, ``marts``, ``cache``)."""
    return [t for t in all_tables() if t.split(".", 1)[0] == schema]


def asset_tables(schema: str) -> list[str]:
    """The tables of a layer that are assets (and exported, for core and marts): all but the id registries."""
    return [t for t in layer(schema) if t not in ID_REGISTRIES]


def core_build_writes() -> list[str]:
    """What the core step replaces from the core build's frames (``CoreTables.writes``): every core and
    cache table but those SQL fills."""
    return [t for t in layer("core") + layer("cache") if t not in FILLED_BY_SQL]


def short(table: str) -> str:
    """``core.papers`` -> ``papers``."""
    return table.split(".", 1)[1]


def asset_key(table: str) -> list[str]:
    """``core.papers`` -> ``["core", "papers"]``."""
    return table.split(".", 1)

"""The warehouse's tables, one list: every table ``sql/schema/*.sql`` creates, in DDL order, read
through the catalog (``pipelines/warehouse/catalog.py``). The asset modules, the exports and the core build
ask here instead of keeping lists of their own, so a table added to the DDL is one edit, and a list
that disagrees with the DDL cannot exist. The Polars schemas of the frames written to a table come
from here too (``polars_schema``), so a column's type is declared once, in the DDL. ``tests/warehouse/test_warehouse_contract.py`` checks the users.

Plain Python, no Dagster imports; reads the DDL files only, never the warehouse.
"""

from __future__ import annotations

import functools

import polars as pl

from pipelines.warehouse import catalog

# Append-only bookkeeping of the core step (stable ids): written with the core tables, but neither
# assets of their own (the core.papers / core.authors suites guard them) nor exported.
ID_REGISTRIES = ("core.paper_id_registry", "core.author_id_registry")
# Filled by SQL from staging inside the core step's transaction (sql/core/paper_listings.sql), not
# from a frame of the core build.
FILLED_BY_SQL = ("core.paper_listings",)
# Where the views of the contract keep their rows (``raw.page_captures`` is a view over each distinct
# body stored once and a small row per fetch, the staging tables views over each parse stored once and
# a row per fetch of a night; docs/warehouse.md, "Stored once"): written by the assets of the views,
# neither assets of their own nor exported.
BEHIND_VIEWS = ("raw.page_bodies", "raw.fetches", "staging.night_fetches", "staging.parsed_profiles",
                "staging.parsed_listings", "staging.parsed_rejects", "staging.parsed_issues")
# Cache tables the marts step writes (the novelty epochs: pipelines/marts/scoring/epoch.py), not the core build.
WRITTEN_BY_MARTS = ("cache.novelty_epochs", "cache.novelty_terms", "cache.novelty_bigrams", "cache.novelty_tokens")


@functools.cache
def _ddl() -> dict[str, list[tuple[str, str, bool, str]]]:
    return catalog.ddl_tables()


def all_tables() -> tuple[str, ...]:
    """Every table of the contract, ``schema.table``, in DDL order."""
    return tuple(_ddl())


def layer(schema: str) -> list[str]:
    """The tables of one layer (``raw``, ``staging``, ``enrichment``, ``core``, ``marts``, ``cache``)."""
    return [t for t in all_tables() if t.split(".", 1)[0] == schema]


def asset_tables(schema: str) -> list[str]:
    """The tables of a layer that are assets (and exported, for core and marts): all but the id
    registries and the tables behind a view."""
    return [t for t in layer(schema) if t not in ID_REGISTRIES + BEHIND_VIEWS]


def core_build_writes() -> list[str]:
    """What the core step replaces from the core build's frames (``CoreTables.writes``): every core and
    cache table but those SQL fills and those the marts step writes."""
    return [t for t in layer("core") + layer("cache") if t not in FILLED_BY_SQL + WRITTEN_BY_MARTS]


def short(table: str) -> str:
    """``core.papers`` -> ``papers``."""
    return table.split(".", 1)[1]


def asset_key(table: str) -> list[str]:
    """``core.papers`` -> ``["core", "papers"]``."""
    return table.split(".", 1)


_SCALARS = {
    "VARCHAR": pl.String, "TEXT": pl.String, "INTEGER": pl.Int32, "INT": pl.Int32, "BIGINT": pl.Int64,
    "SMALLINT": pl.Int16, "UBIGINT": pl.UInt64, "UINTEGER": pl.UInt32, "USMALLINT": pl.UInt16, "DOUBLE": pl.Float64, "REAL": pl.Float32, "FLOAT": pl.Float32, "BOOLEAN": pl.Boolean,
    "DATE": pl.Date, "TIMESTAMPTZ": pl.Datetime("us", "UTC"), "TIMESTAMP": pl.Datetime("us"), "BLOB": pl.Binary,
}


def polars_type(ddl_type: str) -> pl.DataType:
    """A DuckDB column type as the DDL writes it (``VARCHAR[]``, ``STRUCT(year INTEGER, ...)[]``) as the
    Polars type of the frames written to it."""
    text = ddl_type.strip()
    if text.endswith("[]"):
        return pl.List(polars_type(text[:-2]))
    if text.upper().startswith("STRUCT(") and text.endswith(")"):
        fields, depth, start, inner = {}, 0, 0, text[7:-1]
        parts = []
        for k, ch in enumerate(inner + ","):
            depth += ch in "(["
            depth -= ch in ")]"
            if ch == "," and depth == 0:
                parts.append(inner[start:k].strip())
                start = k + 1
        for part in parts:
            name, _, field_type = part.partition(" ")
            fields[name] = polars_type(field_type)
        return pl.Struct(fields)
    return _SCALARS[text.upper()]


def polars_schema(table: str, *, drop: tuple[str, ...] = ()) -> dict[str, pl.DataType]:
    """The Polars schema of ``table``'s rows, from the DDL, in column order (without the ``drop`` columns)."""
    return {column: polars_type(ddl_type) for column, ddl_type, _nn, _c in _ddl()[table]
            if column not in drop}

"""One list of tables: the asset modules, the exports and the core build take their tables from
pipelines/warehouse/contract.py, which reads them from sql/schema's DDL."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from pipelines import publish
from pipelines.assets import core, exports
from pipelines.core_build import CoreTables
from pipelines.definitions import all_assets
from pipelines.warehouse import contract

ROOT = Path(__file__).resolve().parents[1]


def _ddl_tables() -> list[str]:
    """The tables of sql/schema, read here independently of the catalog: every CREATE TABLE, in order."""
    text = "".join(p.read_text() for p in sorted((ROOT / "sql" / "schema").glob("*.sql")))
    return re.findall(r"CREATE TABLE IF NOT EXISTS\s+(\w+\.\w+)", text)


def test_the_list_is_the_ddl():
    assert list(contract.all_tables()) == _ddl_tables()
    assert set(contract.ID_REGISTRIES) | set(contract.FILLED_BY_SQL) <= set(contract.all_tables())


def test_every_table_of_a_built_layer_is_an_asset_but_the_registries():
    assets = {".".join(spec.key.path) for a in all_assets for spec in a.specs if spec.key.path[0] != "exports"}
    built = {t for t in contract.all_tables() if not t.startswith("cache.")}
    assert assets == built - set(contract.ID_REGISTRIES)


def test_core_assets_exports_and_the_core_build_agree_with_the_ddl():
    assert [f"core.{n}" for n in core.CORE_TABLES] == contract.asset_tables("core")
    assert set(core.DESCRIPTIONS) == set(core.CORE_TABLES)
    assert [".".join(k) for k in exports.CORE_KEYS] == contract.asset_tables("core")
    assert [".".join(k) for k in exports.MART_KEYS] == [t for t in _ddl_tables() if t.startswith("marts.")]
    assert publish.EXPORT_EXCLUDE == set(contract.ID_REGISTRIES)
    empty = pl.DataFrame()
    tables = CoreTables(**{f: empty for f in ("papers", "listing_papers", "authors", "author_names", "author_profiles",
                                              "authorships", "match_review", "id_redirects")},
                        paper_registry=pl.DataFrame(schema={"key": pl.Utf8, "id": pl.Utf8}),
                        author_registry=pl.DataFrame(schema={"key": pl.Utf8, "id": pl.Utf8}))
    writes = dict(tables.writes())
    assert list(writes) == [t for t in _ddl_tables() if t.split(".")[0] in ("core", "cache") and t != "core.paper_listings"]
    assert writes["core.paper_id_registry"].columns == ["listing_key", "paper_id"]
    assert writes["core.author_id_registry"].columns == ["mention_key", "author_id"]

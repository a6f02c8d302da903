"""One list of tables: the asset modules, the exports and the core build take their tables from
pipelines/warehouse/contract.py, which reads them from sql/schema's DDL."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from pipelines.publish import exports as publish
from pipelines.assets import core, exports
from pipelines.core.build import CoreTables
from pipelines.definitions import all_assets
from pipelines.warehouse import contract

ROOT = Path(__file__).resolve().parents[2]


def _ddl_tables() -> list[str]:
    """The tables of sql/schema, read here independently of the catalog: every CREATE TABLE, in order."""
    text = "".join(p.read_text() for p in sorted((ROOT / "sql" / "schema").glob("*.sql")))
    return re.findall(r"CREATE TABLE IF NOT EXISTS\s+(\w+\.\w+)", text)


def test_the_list_is_the_ddl():
    assert list(contract.all_tables()) == _ddl_tables()
    assert (set(contract.ID_REGISTRIES) | set(contract.FILLED_BY_SQL) | set(contract.WRITTEN_BY_MARTS)
            | set(contract.BEHIND_VIEWS)) <= set(contract.all_tables())


def test_every_table_of_a_built_layer_is_an_asset_but_the_registries():
    assets = {".".join(spec.key.path) for a in all_assets for spec in a.specs if spec.key.path[0] != "exports"}
    built = {t for t in contract.all_tables() if not t.startswith("cache.")}
    assert assets == built - set(contract.ID_REGISTRIES) - set(contract.BEHIND_VIEWS)


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
    # The novelty epochs' cache tables are the marts step's (pipelines/marts/scoring/epoch.py).
    assert list(writes) == [t for t in _ddl_tables() if t.split(".")[0] in ("core", "cache") and t != "core.paper_listings"
                            and not t.startswith("cache.novelty_")]
    assert writes["core.paper_id_registry"].columns == ["listing_key", "paper_id"]
    assert writes["core.author_id_registry"].columns == ["mention_key", "author_id"]


def test_every_ddl_column_has_a_polars_type():
    for table in contract.all_tables():
        assert contract.polars_schema(table), table


def test_the_frames_written_to_a_table_have_its_ddl_schema():
    """Derived from the DDL (landing, enrichment, identifiers), or, in the matching library, which keeps
    its own plain dicts, equal to it."""
    from pipelines.ingest import api_lookups as enrichment
    from pipelines.core import identifiers
    from pipelines.staging import build as landing
    from pipelines.core.identity import stable_ids
    from pipelines.core.resolution import incremental, incremental_papers, papers, review

    no_partition = ("partition_date",)
    expected = [
        (landing.RAW_SCHEMA, "raw.page_captures", ()), (landing.PROFILE_SCHEMA, "staging.profiles", ()),
        (landing.LISTING_SCHEMA, "staging.listings", ()), (landing.REJECT_SCHEMA, "staging.rejects", ()),
        (landing.ISSUE_SCHEMA, "staging.quality_issues", ()),
        (enrichment.ARXIV_WORKS_SCHEMA, "enrichment.arxiv_works", no_partition),
        (enrichment.TITLE_SEARCH_SCHEMA, "enrichment.arxiv_title_searches", no_partition),
        (enrichment.OPENALEX_WORKS_SCHEMA, "enrichment.openalex_works", no_partition),
        (enrichment.OPENALEX_AUTHORS_SCHEMA, "enrichment.openalex_authors", no_partition),
        (enrichment.AUTHOR_LISTS_SCHEMA, "enrichment.author_lists", no_partition),
        (enrichment.REJECTS_SCHEMA, "enrichment.arxiv_rejects", no_partition),
        (enrichment.REJECTS_SCHEMA, "enrichment.openalex_rejects", no_partition),
        (identifiers.CROSSWALK_SCHEMA, "core.paper_identifiers", ()),
        (identifiers.REJECTS_SCHEMA, "core.identifier_rejects", ()),
        (identifiers.REDIRECTS_SCHEMA, "core.id_redirects", ()),
        (stable_ids.REDIRECT_SCHEMA, "core.id_redirects", ("entity_type",)),
        (papers.TITLE_DIFF_SCHEMA, "cache.title_diffs", ()),
        (incremental.AUTHOR_STATE_SCHEMA, "cache.author_matches", ()),
        (incremental.AUTHOR_MODEL_SCHEMA, "cache.author_model", ()),
        (review.REVIEW_SCHEMA, "cache.author_match_review", ()),
        (review.REVIEW_SCHEMA, "cache.paper_match_review", ()),
        (incremental_papers.PAPER_STATE_SCHEMA, "cache.paper_matches", ()),
    ]
    for schema, table, drop in expected:
        assert list(schema.items()) == list(contract.polars_schema(table, drop=drop).items()), table

"""The UI's description of the warehouse is generated, never hand-kept: every table asset carries the
column schema of the DDL (names, types, nullability) with the data dictionary's meanings, and every
asset has owners, tags, a code version and (nightly) a freshness policy.

The generator is tested on the project's own DDL and dictionary (what the UI shows today) and on a
made-up schema folder (a table added tomorrow gets its schema with no code change)."""

from __future__ import annotations

import dagster as dg

from pipelines.warehouse import catalog
from pipelines.assets import describe
from dagster._core.definitions.freshness import CronFreshnessPolicy

from pipelines.definitions import all_assets, defs


def _specs() -> dict[str, dg.AssetSpec]:
    return {spec.key.to_user_string(): spec for a in all_assets for spec in a.specs}


def test_every_table_asset_shows_the_ddl_columns_with_the_dictionarys_meanings():
    tables = catalog.load()
    specs = _specs()
    table_assets = {key: spec for key, spec in specs.items() if key.replace("/", ".") in tables}
    # every warehouse layer the graph builds is covered (raw, staging, enrichment, core, marts)
    assert {key.split("/")[0] for key in table_assets} == {"raw", "staging", "enrichment", "core", "marts"}
    assert len(table_assets) == len([k for k in specs if not k.startswith("exports/")])
    for key, spec in table_assets.items():
        table = tables[key.replace("/", ".")]
        schema = spec.metadata["dagster/column_schema"]
        assert isinstance(schema, dg.TableSchema), key
        assert [(c.name, c.type, c.constraints.nullable) for c in schema.columns] == \
            [(c.name, c.type, not c.not_null) for c in table.columns], key
        assert all(c.description for c in schema.columns), (key, [c.name for c in schema.columns if not c.description])
        assert spec.metadata["dagster/table_name"] == key.replace("/", ".")
    papers = {c.name: c for c in specs["core/papers"].metadata["dagster/column_schema"].columns}
    assert papers["paper_id"].description.startswith("stable paper id") and not papers["paper_id"].constraints.nullable
    assert papers["doi"].constraints.nullable and "(NULL: no arXiv id and no DOI from enrichment)" in papers["doi"].description
    captures = {c.name: c for c in specs["raw/page_captures"].metadata["dagster/column_schema"].columns}
    assert captures["capture_issues"].type.startswith("STRUCT(reason VARCHAR")
    # an escaped pipe in a meaning is the text's, not a cell boundary
    assert "'bzpeer' | 'scholarfeed' | 'unknown'" in captures["source"].description.replace("`", "")


def test_every_asset_has_owners_tags_a_code_version_and_nightly_freshness():
    for key, spec in _specs().items():
        layer = key.split("/")[0]
        assert spec.owners and all(o.startswith("team:") for o in spec.owners), key
        assert spec.tags["layer"] == layer, key
        assert spec.tags["audience"] in {"pipeline", "analysts", "apps"}, key
        assert spec.code_version and len(spec.code_version) == 12, key
        policy = spec.freshness_policy
        assert isinstance(policy, CronFreshnessPolicy), key
        assert policy.deadline_cron == "0 8 * * *"
    # the definitions the UI loads are these
    graph = defs.resolve_asset_graph()
    node = graph.get(dg.AssetKey(["marts", "author_metrics"]))
    assert node.owners == ["team:analytics"] and node.code_version == _specs()["marts/author_metrics"].code_version


def test_code_versions_follow_the_code_behind_each_asset():
    specs = _specs()
    # a mart's version covers its own SQL: two marts built by the same module still differ
    assert specs["marts/author_metrics"].code_version != specs["marts/citations"].code_version
    # every table of one step shares the step's code
    assert len({specs[k].code_version for k in specs if k.startswith("staging/")}) == 1
    assert describe.code_version("marts", "marts.citations", None) == describe.code_version("marts", "marts.citations", None)


DDL = """
CREATE SCHEMA IF NOT EXISTS marts;
-- Grain: one row per night.
CREATE TABLE IF NOT EXISTS marts.night_figures (
    as_of        DATE NOT NULL,            -- the night
    pages        INTEGER,                  -- pages landed (a, b; c)
    shape        STRUCT(a INTEGER, b VARCHAR)[],
    score        DOUBLE NOT NULL DEFAULT 0 -- 0-100
);
"""

DICTIONARY = """
# Data dictionary

### `marts.night_figures`

**Grain:** one row per night; key `as_of`.
**Built by:** nothing yet.

| column | type | nullable | meaning |
| --- | --- | --- | --- |
| `as_of` | `DATE` | no | the night (partition date) |
| `pages` | `INTEGER` | yes: no captures that night | pages landed, `'a'` \\| `'b'` |

```sql
### `marts.not_a_heading`
```
"""


def test_a_table_added_to_the_ddl_gets_its_schema_with_no_code_change(tmp_path):
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "09_new.sql").write_text(DDL)
    (tmp_path / "warehouse.md").write_text(DICTIONARY)
    tables = catalog.load(tmp_path / "schema", tmp_path / "warehouse.md")
    assert list(tables) == ["marts.night_figures"]
    table = tables["marts.night_figures"]
    assert table.grain == "one row per night; key `as_of`."
    assert [(c.name, c.type, c.not_null) for c in table.columns] == [
        ("as_of", "DATE", True), ("pages", "INTEGER", False),
        ("shape", "STRUCT(a INTEGER, b VARCHAR)[]", False), ("score", "DOUBLE", True)]
    by_name = {c.name: c for c in table.columns}
    assert by_name["pages"].description == "pages landed, `'a'` | `'b'`"
    assert by_name["pages"].null_when == "no captures that night"
    # not in the dictionary: the DDL comment says what it is, and it is listed as undocumented
    assert by_name["score"].description == "0-100"
    assert by_name["shape"].description == ""
    assert table.undocumented == ("shape", "score")

    spec = describe.annotate(dg.AssetSpec(["marts", "night_figures"], group_name="marts"), tables)
    columns = spec.metadata["dagster/column_schema"].columns
    assert [c.name for c in columns] == ["as_of", "pages", "shape", "score"]
    assert columns[1].description == "pages landed, `'a'` | `'b'` (NULL: no captures that night)"
    assert columns[2].description is None
    assert spec.owners == ["team:analytics"] and spec.tags["layer"] == "marts"
    assert spec.freshness_policy is None  # not partitioned: not a nightly asset

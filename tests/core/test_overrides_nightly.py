"""Manual decisions stick: the overrides file in place, night after night, gives the same ids.

Through the real assets (raw → staging → core, ``dg.materialize``) on the bundled samples: one
night without overrides to learn the ids, then four nights (Saturday to Tuesday, so both the
weekly full resolution and incremental nights are among them) with a merge of two authors, a
merge of two papers, a paper split and a profile assignment in ``SCHOLARHOUSE_OVERRIDES``. Every
night must report every entry applied and nothing unmatched, and leave identical ids, names,
profiles and redirects — with incremental resolution on and off.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from tests.conftest import SAMPLES
from pipelines.assets.core import core_tables
from pipelines.assets.ingest import page_captures
from pipelines.assets.staging import staging_tables
from pipelines.resources import CapturesFolderResource, WarehouseResource

FIRST = "2026-11-20"                                             # a Friday: learn the ids
NIGHTS = ["2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"]  # Sat, Sun (weekly full), Mon, Tue


def night(wh: Path, day: str) -> dict:
    result = dg.materialize(
        [page_captures, staging_tables, core_tables], partition_key=day,
        resources={"page_source": CapturesFolderResource(path=str(SAMPLES)), "warehouse_db": WarehouseResource(path=str(wh))},
    )
    assert result.success
    meta = {e.materialization.asset_key.to_user_string(): e.materialization.metadata
            for e in result.get_asset_materialization_events()}
    return {k: v.value for k, v in meta["core/id_redirects"].items() if k.startswith("overrides_")}


def q(wh: Path, sql: str, params=()) -> list[tuple]:
    with duckdb.connect(str(wh), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def snapshot(wh: Path) -> dict:
    """Everything an override decides, as the analyst sees it."""
    return {
        "listings": q(wh, "SELECT l.listing_key, p.paper_id, p.method FROM core.paper_listings p "
                          "JOIN staging.listings l USING (listing_id) GROUP BY ALL ORDER BY ALL"),
        "papers": q(wh, "SELECT paper_id, title, first_seen FROM core.papers ORDER BY ALL"),
        "authors": q(wh, "SELECT author_id, display_name, first_seen FROM core.authors ORDER BY ALL"),
        "names": q(wh, "SELECT name_variant, author_id FROM core.author_names ORDER BY ALL"),
        "profiles": q(wh, "SELECT source, source_profile_id, author_id, method FROM core.author_profiles ORDER BY ALL"),
        "authorships": q(wh, "SELECT paper_id, author_id FROM core.authorships ORDER BY ALL"),
        "redirects": q(wh, "SELECT * FROM core.id_redirects ORDER BY ALL"),
    }


def overrides_for(wh: Path) -> tuple[str, dict]:
    """Four decisions a person could take after the first night (ids read from the warehouse)."""
    reviews = q(wh, "SELECT entity_type, left_id, right_id, left_label, right_label FROM core.match_review")
    (author_pair,) = [(l, r) for e, l, r, ll, rl in reviews if e == "author" and {ll, rl} == {"Daning Chen", "Daning Cheng"}]
    (paper_pair,) = [(l, r) for e, l, r, *_ in reviews if e == "paper"]
    ((dynatrain, title),) = q(wh, "SELECT paper_id, title FROM core.papers WHERE title LIKE 'DynaTrain%'")
    ((yuchen,),) = q(wh, "SELECT author_id FROM core.authors WHERE display_name = 'Yuchen Zhang'")
    text = (
        f'[[merge]]\nentity = "author"\nids = ["{author_pair[0]}", "{author_pair[1]}"]\n\n'
        f'[[merge]]\nentity = "paper"\nids = ["{paper_pair[0]}", "{paper_pair[1]}"]\n\n'
        f'[[split]]\nentity = "paper"\nid = "{dynatrain}"\ntitles = ["{title}"]\n\n'
        f'[[assign_profile]]\nsource = "scholarfeed"\nsource_profile_id = "1000001"\nauthor_id = "{yuchen}"\n'
    )
    return text, {"author_merge": author_pair, "paper_merge": paper_pair, "split": dynatrain, "assigned_to": yuchen}


@pytest.mark.parametrize("incremental", ["on", "off"])
def test_overrides_hold_on_every_night(tmp_path, monkeypatch, incremental):
    monkeypatch.setenv("SCHOLARHOUSE_INCREMENTAL_RESOLUTION", incremental)
    overrides = tmp_path / "overrides.toml"
    monkeypatch.setenv("SCHOLARHOUSE_OVERRIDES", str(overrides))
    wh = tmp_path / "wh.duckdb"
    night(wh, FIRST)
    text, ids = overrides_for(wh)
    overrides.write_text(text)

    reports, snapshots = [], []
    for day in NIGHTS:
        reports.append(night(wh, day))
        snapshots.append(snapshot(wh))

    for day, report in zip(NIGHTS, reports):
        assert report["overrides_unmatched"] == "none", (day, report)
        assert len(report["overrides_applied"].splitlines()) == 4, (day, report)
    for day, snap in zip(NIGHTS[1:], snapshots[1:]):
        for table, rows in snap.items():
            assert rows == snapshots[0][table], (day, table)

    # ... and the decisions are the ones asked for.
    snap = snapshots[0]
    author_survivor = {a for (_, a) in snap["names"] if a in ids["author_merge"]}
    assert len(author_survivor) == 1
    (loser,) = set(ids["author_merge"]) - author_survivor
    redirects = {(entity, old): (new, reason, on) for entity, old, new, reason, on in snap["redirects"]}
    assert redirects[("author", loser)][:2] == (author_survivor.pop(), "override")
    assert str(redirects[("author", loser)][2]) == NIGHTS[0]      # redirected once, on the first night
    assert len({p for (_, p, _) in snap["listings"] if p in ids["paper_merge"]}) == 1
    assert ids["split"] not in {p for (_, p, _) in snap["listings"]}
    assert ("scholarfeed", "1000001", ids["assigned_to"], "override") in snap["profiles"]

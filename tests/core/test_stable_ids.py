"""Stable ids: kept across runs, oldest survives a merge, a split gives ids back, deterministic."""

from datetime import date

import polars as pl
import pytest

from pipelines.core.identity.stable_ids import REDIRECT_SCHEMA, REGISTRY_SCHEMA, assign_stable_ids, merge_redirects

D1, D2, D3 = date(2026, 1, 1), date(2026, 1, 2), date(2026, 1, 3)
EMPTY = pl.DataFrame(schema=REGISTRY_SCHEMA)


def members(mapping: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame({"key": list(mapping), "cluster": list(mapping.values())})


def ids_by_key(result, m: pl.DataFrame) -> dict[str, str]:
    return dict(m.join(result.cluster_ids, on="cluster").select("key", "id").iter_rows())


def test_rerun_gives_identical_ids():
    m = members({"a": "1", "b": "1", "c": "2"})
    first = assign_stable_ids(m, EMPTY, prefix="P", today=D1)
    again = assign_stable_ids(m, first.registry, prefix="P", today=D1)
    assert ids_by_key(first, m) == ids_by_key(again, m)
    assert again.redirects.height == 0
    assert again.registry.equals(first.registry)


def test_cluster_labels_and_row_order_do_not_matter():
    m1 = members({"a": "x", "b": "x", "c": "y"})
    m2 = members({"c": "q", "b": "p", "a": "p"})
    assert ids_by_key(assign_stable_ids(m1, EMPTY, prefix="P", today=D1), m1) == ids_by_key(
        assign_stable_ids(m2, EMPTY, prefix="P", today=D1), m2)


def test_new_evidence_keeps_ids_and_extends_clusters():
    m1 = members({"a": "1", "c": "2"})
    r1 = assign_stable_ids(m1, EMPTY, prefix="P", today=D1)
    m2 = members({"a": "1", "b": "1", "c": "2", "d": "3"})
    r2 = assign_stable_ids(m2, r1.registry, prefix="P", today=D2)
    before, after = ids_by_key(r1, m1), ids_by_key(r2, m2)
    assert after["a"] == after["b"] == before["a"]
    assert after["c"] == before["c"]
    assert after["d"] not in before.values()


def test_merge_keeps_the_older_id_and_redirects_the_other():
    r1 = assign_stable_ids(members({"a": "1"}), EMPTY, prefix="A", today=D1)
    r2 = assign_stable_ids(members({"a": "1", "b": "2"}), r1.registry, prefix="A", today=D2)
    old, young = ids_by_key(r2, members({"a": "1", "b": "2"})).values()
    r3 = assign_stable_ids(members({"a": "m", "b": "m"}), r2.registry, prefix="A", today=D3)
    assert r3.cluster_ids["id"].to_list() == [old]
    assert r3.redirects.select("old_id", "new_id").rows() == [(young, old)]


def test_split_gives_each_part_its_original_id_back():
    m = members({"a": "1", "b": "1", "c": "2"})
    r1 = assign_stable_ids(m, EMPTY, prefix="P", today=D1)
    merged = assign_stable_ids(members({"a": "x", "b": "x", "c": "x"}), r1.registry, prefix="P", today=D2)
    split = assign_stable_ids(m, merged.registry, prefix="P", today=D3)
    assert ids_by_key(split, m) == ids_by_key(r1, m)


def test_redirect_chains_collapse_and_live_ids_are_not_redirected():
    schema = {"old_id": pl.String, "new_id": pl.String, "reason": pl.String, "redirected_on": pl.Date}
    old = pl.DataFrame([("a", "b", "merged", D1)], schema=schema, orient="row")
    new = pl.DataFrame([("b", "c", "merged", D2)], schema=schema, orient="row")
    out = merge_redirects(old, new, live_ids={"c"})
    assert dict(out.select("old_id", "new_id").iter_rows()) == {"a": "c", "b": "c"}
    revived = merge_redirects(out, new.clear(), live_ids={"c", "a"})
    assert "a" not in revived["old_id"].to_list()


@pytest.mark.parametrize("n", [1, 50])
def test_every_key_is_registered_once(n):
    m = members({f"k{i}": str(i % 7) for i in range(n)})
    r = assign_stable_ids(m, EMPTY, prefix="P", today=D1)
    assert r.registry["key"].n_unique() == r.registry.height == n


def test_a_redirect_issued_again_keeps_its_first_date():
    def frame(rows):
        return pl.DataFrame(rows, schema=REDIRECT_SCHEMA, orient="row")

    first = frame([("A2", "A1", "override", date(2026, 11, 21))])
    again = merge_redirects(first, frame([("A2", "A1", "override", date(2026, 11, 24))]), {"A1"})
    assert again.rows() == [("A2", "A1", "override", date(2026, 11, 21))]
    moved = merge_redirects(first, frame([("A2", "A3", "merged", date(2026, 11, 24))]), {"A3"})
    assert moved.rows() == [("A2", "A3", "merged", date(2026, 11, 24))]   # a new decision: its own date

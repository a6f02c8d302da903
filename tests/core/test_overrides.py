"""The overrides file outranks the algorithm: merge, split, assign a profile; errors are clear."""

from datetime import date

import re
import polars as pl
import pytest

from pipelines.core.identity.overrides import OverridesError, apply_overrides, load_overrides

TODAY = date(2026, 11, 21)


def write(tmp_path, text):
    path = tmp_path / "overrides.toml"
    path.write_text(text)
    return path


def author_members():
    return pl.DataFrame({
        "key": ["o1", "o2", "b1", "b2"],
        "id": ["A1", "A1", "A2", "A3"],
        "label": ["Daning Cheng", "Daning Cheng", "Daning Chen", "Yuchen Zhang"],
        "profile": ["bzpeer:daning-cheng", "bzpeer:daning-cheng", None, None],
    })


def test_missing_file_means_no_overrides(tmp_path):
    o = load_overrides(tmp_path / "absent.toml")
    assert not (o.merges or o.splits or o.profile_assignments)


def test_merge_keeps_the_oldest_id(tmp_path):
    o = load_overrides(write(tmp_path, '[[merge]]\nentity = "author"\nids = ["A2", "A1"]\n'))
    res = apply_overrides(author_members(), o.for_entity("author"), prefix="A",
                          id_age={"A1": date(2026, 1, 1), "A2": date(2026, 2, 1)}, redirects={}, today=TODAY)
    assert set(res.members.filter(pl.col("key").is_in(["o1", "b1"]))["id"]) == {"A1"}
    assert res.redirects.select("old_id", "new_id", "reason").rows() == [("A2", "A1", "override")]


def test_split_moves_name_variants_to_a_new_stable_id(tmp_path):
    o = load_overrides(write(tmp_path, '[[split]]\nentity = "author"\nid = "A1"\nnames = ["daning  CHENG"]\n'))
    first = apply_overrides(author_members(), o.for_entity("author"), prefix="A", id_age={}, redirects={}, today=TODAY)
    second = apply_overrides(author_members(), o.for_entity("author"), prefix="A", id_age={}, redirects={}, today=TODAY)
    new_ids = set(first.members.filter(pl.col("key").is_in(["o1", "o2"]))["id"])
    assert len(new_ids) == 1 and new_ids != {"A1"}
    assert first.members.equals(second.members)


def test_assign_profile_and_redirected_ids_are_followed(tmp_path):
    o = load_overrides(write(tmp_path, '[[assign_profile]]\nsource = "bzpeer"\nsource_profile_id = "daning-cheng"\nauthor_id = "A9"\n'))
    res = apply_overrides(author_members(), o.for_entity("author"), prefix="A", id_age={}, redirects={"A9": "A3"}, today=TODAY)
    assert set(res.members.filter(pl.col("profile").is_not_null())["id"]) == {"A3"}


def test_unmatched_entries_are_reported(tmp_path):
    o = load_overrides(write(tmp_path, '[[merge]]\nentity = "author"\nids = ["A404", "A405"]\n'))
    res = apply_overrides(author_members(), o.for_entity("author"), prefix="A", id_age={}, redirects={}, today=TODAY)
    assert res.unmatched and not res.applied


@pytest.mark.parametrize("text", [
    '[[merge]]\nentity = "author"\nids = ["only-one"]\n',
    '[[merge]]\nentity = "person"\nids = ["a", "b"]\n',
    '[[split]]\nentity = "paper"\nid = "P1"\n',
    '[[assign_profile]]\nsource = "bzpeer"\n',
    'this is not toml',
])
def test_malformed_files_fail_with_a_clear_error(tmp_path, text):
    with pytest.raises(OverridesError):
        load_overrides(write(tmp_path, text))


def test_a_merge_finds_last_nights_loser_again_and_keeps_the_survivor(tmp_path):
    """Last night's merge redirected A2 → A1, but A2 is still the algorithm's id for its evidence
    tonight (the registry keeps home ids): the entry must merge it again, not report it unmatched."""
    o = load_overrides(write(tmp_path, '[[merge]]\nentity = "author"\nids = ["A2", "A1"]\n'))
    ages = {"A1": date(2026, 1, 1), "A2": date(2026, 2, 1)}
    res = apply_overrides(author_members(), o.for_entity("author"), prefix="A", id_age=ages,
                          redirects={"A2": "A1"}, today=TODAY)
    assert not res.unmatched and len(res.applied) == 1
    assert set(res.members.filter(pl.col("key").is_in(["o1", "b1"]))["id"]) == {"A1"}
    assert res.redirects.select("old_id", "new_id", "reason").rows() == [("A2", "A1", "override")]
    # the algorithm now puts both in one entity: the entry holds, and says so
    together = author_members().with_columns(id=pl.when(pl.col("id") == "A2").then(pl.lit("A1")).otherwise(pl.col("id")))
    res = apply_overrides(together, o.for_entity("author"), prefix="A", id_age=ages, redirects={"A2": "A1"}, today=TODAY)
    assert not res.unmatched and res.applied == ["merge ['A2', 'A1']: already one entity, A1"]


@pytest.mark.parametrize("text, says", [
    ('[[merges]]\nentity = "author"\nids = ["A1", "A2"]\n', "unknown [[merges]]"),        # a typo of [[merge]]
    ('[[assign-profile]]\nsource = "bzpeer"\nsource_profile_id = "x"\nauthor_id = "A1"\n', "unknown [[assign-profile]]"),
    ('[[split]]\nentity = "author"\nid = "A1"\nnames = [1]\n', "split #1 needs"),           # not strings
    ('assign_profile = ["x"]\n', "assign_profile #1 is not a table"),                       # not tables
    ('merge = 3\n', "merge must be written as"),
])
def test_an_overrides_file_that_cannot_mean_what_it_says_is_refused_naming_it(tmp_path, text, says):
    """Was: the first two loaded as no overrides (the decision dropped every night, not even listed
    as unmatched), the others failed deep in the core step with an AttributeError."""
    path = tmp_path / "overrides.toml"
    path.write_text(text)
    with pytest.raises(OverridesError, match=re.escape(says)) as info:
        load_overrides(path)
    assert str(path) in str(info.value)


def test_an_overrides_file_that_is_not_utf8_names_itself(tmp_path):
    path = tmp_path / "overrides.toml"
    path.write_bytes(b"# \xff\n")
    with pytest.raises(OverridesError, match="overrides.toml"):
        load_overrides(path)

"""The core build's named steps (``pipelines/core/build.py``: papers → mentions → authors → overrides →
tables), each run alone on the identifier zoo's small world (``test_fault_zoo_identifiers.BASE``), and
run one after another by hand: the same tables as ``build_core``."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipelines.core import build as core_build
from pipelines.core import identifiers as I
from pipelines.core.authors import identify_authors, match_mentions
from pipelines.core.identity.overrides import Overrides
from pipelines.core.ids import stored_redirects
from pipelines.core.mentions import collect_mentions
from pipelines.core.papers import identify_papers, latest_listings, match_listings
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.core.tables import assemble_tables
from pipelines.timing import StageTimer
from tests.core.test_fault_zoo_identifiers import BASE, DAY, DYNATRAIN, HONPAS, LISTING_SCHEMA, PROFILE_SCHEMA, PROFILES

EMPTY_REGISTRY = pl.DataFrame(schema={"key": pl.String, "id": pl.String, "first_seen": pl.Date})
OPTIONS = MatchOptions(workers=1)


def inputs():
    listings = pl.DataFrame(list(BASE.listings), schema=LISTING_SCHEMA)
    profiles = pl.DataFrame(
        [{"partition_date": DAY, "captured_at": None, "capture_id": f"c-{p}", "source": s, "source_profile_id": p,
          "name": n} for s, p, n in PROFILES], schema=PROFILE_SCHEMA)
    evidence = I.IdentifierEvidence(
        arxiv_records=pl.DataFrame(list(BASE.arxiv_records), schema=I.ARXIV_RECORDS_SCHEMA),
        openalex_answers=pl.DataFrame(list(BASE.openalex), schema=I.OPENALEX_ANSWERS_SCHEMA),
        page_ids=pl.DataFrame(list(BASE.page_ids), schema=I.PAGE_IDS_SCHEMA),
    )
    return listings, profiles, evidence


def papers_step(overrides: Overrides = Overrides()):
    listings, profiles, evidence = inputs()
    latest, owners = latest_listings(listings, profiles)
    attached = I.attach_identifiers(latest, evidence)
    match = match_listings(attached.listings, title_diffs=None, state=None, review=None, today=DAY,
                           timer=StageTimer(), options=OPTIONS)
    papers = identify_papers(attached, match, EMPTY_REGISTRY, redirects=stored_redirects(pl.DataFrame()),
                             overrides=overrides, today=DAY)
    return papers, owners


def test_papers_step_gives_each_listing_its_paper():
    papers, owners = papers_step()
    assert papers.listings.height == 3 and owners.height == len(PROFILES)
    by_title = dict(papers.listings.select("title", "paper_id").unique().group_by("title").len().iter_rows())
    assert by_title == {DYNATRAIN: 1, HONPAS: 1}  # the two DynaTrain listings are one paper
    assert "override" not in set(papers.key_to_paper["method"])
    assert papers.listing_papers["listing_key"].to_list() == ["k-dyna-bz", "k-dyna-sf", "k-honpas"]
    assert papers.match.night.stats["mode"] == "full"


def test_a_paper_merge_override_applies_in_the_papers_step():
    papers, _ = papers_step()
    ids = sorted(papers.listings["paper_id"].unique())
    merged, _ = papers_step(Overrides(merges=[{"entity": "paper", "ids": ids}]))
    assert merged.listings["paper_id"].n_unique() == 1
    assert "override" in set(merged.key_to_paper["method"])
    assert merged.overrides.redirects.height == 1


def test_mentions_step_keys_owners_bylines_and_collapses():
    papers, _ = papers_step()
    mentions = collect_mentions(papers.listings)
    keys = set(mentions.mentions["key"])
    assert {"owner:k-dyna-bz", "owner:k-dyna-sf", "owner:k-honpas"} <= keys
    assert sum(k.startswith("byline:k-dyna-sf:") for k in keys) == 3
    # one matcher row per group, named by the group's smallest key
    assert mentions.collapsed.height == mentions.mentions["group"].n_unique()
    assert mentions.collapsed["mention_id"].is_sorted()


def test_authors_and_overrides_steps_give_every_mention_an_author():
    papers, _ = papers_step()
    mentions = collect_mentions(papers.listings)
    night = match_mentions(mentions.collapsed, state=None, review=None, model=None, today=DAY,
                           timer=StageTimer(), options=OPTIONS)
    authors = identify_authors(mentions, night, EMPTY_REGISTRY, redirects=stored_redirects(pl.DataFrame()),
                               overrides=Overrides(), today=DAY)
    assert authors.members["author_id"].null_count() == 0
    assert authors.mentions_matched == mentions.mentions.height
    owner = authors.members.filter(pl.col("key") == "owner:k-dyna-bz")
    target = authors.members.filter(pl.col("key") == "owner:k-honpas")["author_id"][0]
    assigned = identify_authors(
        mentions, night, EMPTY_REGISTRY, redirects=stored_redirects(pl.DataFrame()), today=DAY,
        overrides=Overrides(profile_assignments=[{"source": "bzpeer", "source_profile_id": "daning-cheng",
                                                  "author_id": target}]))
    assert owner["author_id"][0] != target
    assert assigned.members.filter(pl.col("key") == "owner:k-dyna-bz")["author_id"][0] == target


@pytest.mark.parametrize("enrich", [False, True])
def test_the_steps_one_after_another_are_build_core(enrich: bool):
    listings, profiles, evidence = inputs()
    extra = pl.DataFrame(
        [{"arxiv_id": "2604.02156", "name": n, "author_position": i, "evidence": "arxiv", "orcid": None,
          "openalex_author_id": None} for i, n in enumerate(["Yuanqing Wang", "Yuchen Zhang", "Hao Lin", "D. Cheng"], 1)],
        schema={"arxiv_id": pl.String, "name": pl.String, "author_position": pl.Int32, "evidence": pl.String,
                "orcid": pl.String, "openalex_author_id": pl.String}) if enrich else None
    whole = core_build.build_core(listings, profiles, paper_registry=EMPTY_REGISTRY, author_registry=EMPTY_REGISTRY,
                                  redirects=pl.DataFrame(), overrides=Overrides(), today=DAY,
                                  identifier_evidence=evidence, extra_authorships=extra, options=OPTIONS)
    papers, owners = papers_step()
    mentions = collect_mentions(papers.listings, extra)
    night = match_mentions(mentions.collapsed, state=None, review=None, model=None, today=DAY,
                           timer=StageTimer(), options=OPTIONS)
    authors = identify_authors(mentions, night, EMPTY_REGISTRY, redirects=stored_redirects(pl.DataFrame()),
                               overrides=Overrides(), today=DAY)
    steps = assemble_tables(papers, authors, owners=owners, overrides=Overrides(),
                            redirects=stored_redirects(pl.DataFrame()), extra_authorships=extra, today=DAY)
    assert [t for t, _ in steps.writes()] == [t for t, _ in whole.writes()]
    for (_, a), (_, b) in zip(steps.writes(), whole.writes()):
        assert_frame_equal(a, b)
    assert steps.stats == {k: v for k, v in whole.stats.items() if k != "timings"}
    if enrich:
        assert any(k.startswith("arxiv:") for k in authors.members["key"])

"""The identifier zoo: one bad identifier input per row, and the trace each leaves in the core tables.

A small world goes through the real core build (``core_build.build_core``: resolution, stable ids,
``pipelines/core/identifiers.py``), no Dagster: DynaTrain listed on Daning Cheng's BZPEER profile (link
``/works/dynatrain-…-2604.02156``) and on Yunquan Zhang's Scholar Feed profile (``/paper/2604.02156v2``),
arXiv's record of it (version 2, a journal DOI), the OpenAlex work answered for its arXiv DOI; and the
HONPAS paper (no arXiv copy) on Yunquan Zhang's BZPEER profile, which OpenAlex found by its title.

With every input right, the crosswalk holds what the baseline test asserts and nothing is turned
down. Each zoo row changes **one** input and asserts the exact trace: the ``core.identifier_rejects``
rows (scheme, value, reason) with the one-line detail, what is no longer in ``core.paper_identifiers``,
``core.papers.doi``, and the identifier redirects — and that everything the fault did not touch is still
there. A new class of bad identifier is one more row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Callable

import polars as pl
import pytest

from pipelines.core import build as core_build
from pipelines.core import identifiers as I
from pipelines.core.identity.overrides import Overrides

DAY = date(2026, 11, 21)
EARLIER = DAY - timedelta(days=2)
DYNATRAIN = "DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training"
HONPAS = "The static parallel distribution algorithms for hybrid density-functional calculations in HONPAS package"
DYNA_ID, HONPAS_W, DYNA_W = "2604.02156", "W4400000003", "W4415000001"
JOURNAL_DOI, HONPAS_DOI = "10.1000/fixture.dynatrain.2026", "10.1000/fixture.honpas.2020"
SLUG = "dynatrain-fast-online-parallelism-switching-for-elastic-llm-2604.02156"

LISTING_SCHEMA = {
    "listing_id": pl.String, "listing_key": pl.String, "partition_date": pl.Date, "source": pl.String,
    "source_profile_id": pl.String, "title": pl.String, "venue": pl.String, "year": pl.Int32, "year_inferred": pl.Boolean,
    "pub_date": pl.Date, "category": pl.String, "has_code": pl.Boolean, "byline_authors": pl.List(pl.String),
    "byline_truncated": pl.Boolean, "arxiv_id": pl.String, "first_seen": pl.Date,
}
PROFILE_SCHEMA = {"partition_date": pl.Date, "captured_at": pl.Datetime("us", "UTC"), "capture_id": pl.String,
                  "source": pl.String, "source_profile_id": pl.String, "name": pl.String}


def listing(key: str, source: str, profile: str, title: str, year: int, arxiv_id: str | None = None,
            byline: list[str] | None = None) -> dict:
    return {"listing_id": f"id-{key}", "listing_key": key, "partition_date": DAY, "source": source,
            "source_profile_id": profile, "title": title, "venue": None, "year": year, "year_inferred": False,
            "pub_date": None, "category": None, "has_code": None, "byline_authors": byline or [],
            "byline_truncated": False, "arxiv_id": arxiv_id, "first_seen": EARLIER}


def page_id(key: str, source: str, url: str | None, arxiv_id: str | None = None, version: int | None = None,
            first: date = EARLIER, last: date = DAY) -> dict:
    return {"listing_key": key, "source": source, "arxiv_id": arxiv_id, "arxiv_version": version,
            "paper_url": url, "first_seen": first, "last_seen": last}


def work(openalex_id: str, matched_by: str, *, arxiv_id=None, title_key=None, doi=None, year=2026,
         names=None, first: date = EARLIER, last: date = DAY) -> dict:
    return {"openalex_id": openalex_id, "matched_by": matched_by, "arxiv_id": arxiv_id, "title_key": title_key,
            "doi": doi, "publication_year": year, "author_names": names, "first_seen": first, "last_seen": last}


@dataclass(frozen=True)
class World:
    listings: tuple[dict, ...]
    page_ids: tuple[dict, ...]
    arxiv_records: tuple[dict, ...]
    openalex: tuple[dict, ...]

    def but(self, **changes) -> "World":
        return replace(self, **changes)


HONPAS_KEY = "title:" + "the static parallel distribution algorithms for hybrid density functional calculations in honpas package"
BASE = World(
    listings=(
        listing("k-dyna-bz", "bzpeer", "daning-cheng", DYNATRAIN, 2026, DYNA_ID),
        listing("k-dyna-sf", "scholarfeed", "3", DYNATRAIN, 2026, DYNA_ID, ["Yuanqing Wang", "Yuchen Zhang", "Hao Lin"]),
        listing("k-honpas", "bzpeer", "yunquan-zhang", HONPAS, 2020),
    ),
    page_ids=(
        page_id("k-dyna-bz", "bzpeer", f"https://www.bzpeer.com/works/{SLUG}", DYNA_ID),
        page_id("k-dyna-sf", "scholarfeed", f"https://www.scholarfeed.org/paper/{DYNA_ID}v2", DYNA_ID, 2),
    ),
    arxiv_records=({"arxiv_id": DYNA_ID, "versions": [2], "doi": "10.1000/FIXTURE.DynaTrain.2026",
                    "first_seen": DAY, "last_seen": DAY},),
    openalex=(
        work(DYNA_W, "arxiv_doi", arxiv_id=DYNA_ID, doi=f"10.48550/arxiv.{DYNA_ID}",
             names=["Yuanqing Wang", "Yuchen Zhang", "Hao Lin", "Boyang Zhang", "D. Cheng", "Yunquan Zhang"]),
        work(HONPAS_W, "title", title_key=HONPAS_KEY.removeprefix("title:"), doi=HONPAS_DOI, year=2020,
             names=["Cai Fixture", "Dong Fixture", "Y. Zhang"]),
    ),
)
PROFILES = (("bzpeer", "daning-cheng", "Daning Cheng"), ("scholarfeed", "3", "Yunquan Zhang"),
            ("bzpeer", "yunquan-zhang", "Yunquan Zhang"), ("bzpeer", "ann-other", "Ann Other"))


def build(world: World) -> core_build.CoreTables:
    listings = pl.DataFrame(list(world.listings), schema=LISTING_SCHEMA)
    profiles = pl.DataFrame(
        [{"partition_date": DAY, "captured_at": None, "capture_id": f"c-{p}", "source": s, "source_profile_id": p, "name": n}
         for s, p, n in PROFILES], schema=PROFILE_SCHEMA)
    evidence = I.IdentifierEvidence(
        arxiv_records=pl.DataFrame(list(world.arxiv_records), schema=I.ARXIV_RECORDS_SCHEMA),
        openalex_answers=pl.DataFrame(list(world.openalex), schema=I.OPENALEX_ANSWERS_SCHEMA),
        page_ids=pl.DataFrame(list(world.page_ids), schema=I.PAGE_IDS_SCHEMA),
    )
    empty_registry = pl.DataFrame(schema={"key": pl.String, "id": pl.String, "first_seen": pl.Date})
    return core_build.build_core(
        listings, profiles, paper_registry=empty_registry, author_registry=empty_registry,
        redirects=pl.DataFrame(), overrides=Overrides(), today=DAY, identifier_evidence=evidence,
    )


def crosswalk(core: core_build.CoreTables) -> set[tuple[str, str, str]]:
    """(title of the paper, scheme, value) of every crosswalk row."""
    titles = dict(core.papers.select("paper_id", "title").iter_rows())
    return {(titles[p], s, v) for p, s, v in core.paper_identifiers.select("paper_id", "scheme", "value").iter_rows()}


def dois(core: core_build.CoreTables) -> dict[str, str | None]:
    return dict(core.papers.select("title", "doi").iter_rows())


BASELINE = {
    (DYNATRAIN, "arxiv", DYNA_ID), (DYNATRAIN, "doi", JOURNAL_DOI), (DYNATRAIN, "doi", f"10.48550/arxiv.{DYNA_ID}"),
    (DYNATRAIN, "openalex", DYNA_W), (DYNATRAIN, "bzpeer_work", SLUG), (DYNATRAIN, "scholarfeed_paper", f"{DYNA_ID}v2"),
    (HONPAS, "openalex", HONPAS_W), (HONPAS, "doi", HONPAS_DOI),
}


def test_right_inputs_fill_the_crosswalk_and_nothing_is_turned_down():
    core = build(BASE)
    assert crosswalk(core) == BASELINE
    assert core.identifier_rejects.height == 0
    assert core.id_redirects.filter(pl.col("entity_type") != "paper").height == 0
    assert dois(core) == {DYNATRAIN: JOURNAL_DOI, HONPAS: HONPAS_DOI}   # a journal DOI before arXiv's
    rows = {(s, v): r for s, v, r in core.paper_identifiers.select(
        "scheme", "value", pl.struct("versions", "sources", "linked_by", "is_primary")).iter_rows()}
    assert rows[("arxiv", DYNA_ID)] == {"versions": [2], "sources": ["arxiv", "bzpeer", "scholarfeed"],
                                        "linked_by": "page", "is_primary": True}
    assert rows[("doi", JOURNAL_DOI)]["linked_by"] == "arxiv_id" and rows[("doi", JOURNAL_DOI)]["sources"] == ["arxiv"]
    assert not rows[("doi", f"10.48550/arxiv.{DYNA_ID}")]["is_primary"]
    assert rows[("openalex", HONPAS_W)]["linked_by"] == "title" and rows[("openalex", HONPAS_W)]["versions"] is None
    assert core.papers.filter(pl.col("title") == DYNATRAIN)["listings_count"].to_list() == [2]


# ============================================================================ the zoo

@dataclass(frozen=True)
class Case:
    name: str
    change: Callable[[World], World]
    rejects: tuple[tuple[str, str, str], ...]        # (scheme, value, reason), sorted
    detail: str                                       # a fragment the detail must contain
    gone: frozenset = frozenset()                     # BASELINE rows the fault may cost
    added: frozenset = frozenset()                    # rows it adds
    doi: dict = field(default_factory=dict)           # core.papers.doi changes
    redirects: tuple[tuple[str, str, str], ...] = ()  # (entity_type, old_id, new_id)


def _openalex(**changes_by_id) -> Callable[[World], World]:
    def change(world: World) -> World:
        return world.but(openalex=tuple({**w, **changes_by_id.get(w["openalex_id"], {})} for w in world.openalex))
    return change


def _other_persons_honpas(world: World) -> World:
    """Ann Other lists a same-titled paper of her own (2020): the HONPAS hit is not hers."""
    return world.but(listings=world.listings + (listing("k-honpas-ann", "bzpeer", "ann-other", HONPAS, 2020),))


def _shared_journal_doi(world: World) -> World:
    """Another arXiv paper whose record claims DynaTrain's journal DOI: different arXiv ids keep the two
    papers apart, so the DOI would name both."""
    other = "2605.00001"
    return world.but(
        listings=world.listings + (listing("k-other", "bzpeer", "ann-other", "Elastic Parallelism Switching", 2026, other),),
        arxiv_records=world.arxiv_records + ({"arxiv_id": other, "versions": [1], "doi": JOURNAL_DOI,
                                              "first_seen": DAY, "last_seen": DAY},))


def _sf_link_moved(world: World) -> World:
    """Scholar Feed linked v1 two nights ago; tonight the listing links v2."""
    return world.but(page_ids=(
        world.page_ids[0],
        page_id("k-dyna-sf", "scholarfeed", f"https://www.scholarfeed.org/paper/{DYNA_ID}v1", DYNA_ID, 1,
                first=EARLIER, last=EARLIER),
        page_id("k-dyna-sf", "scholarfeed", f"https://www.scholarfeed.org/paper/{DYNA_ID}v2", DYNA_ID, 2, first=DAY),
    ))


def _openalex_replaced_work(world: World) -> World:
    """Two nights ago OpenAlex answered DynaTrain's DOI with W4400000999; since then with W4415000001."""
    earlier = work("W4400000999", "arxiv_doi", arxiv_id=DYNA_ID, doi=f"10.48550/arxiv.{DYNA_ID}", first=EARLIER, last=EARLIER)
    return world.but(openalex=({**world.openalex[0], "first_seen": DAY}, world.openalex[1], earlier))


ZOO = [
    Case("arXiv's record gives a DOI that is not one",
         lambda w: w.but(arxiv_records=({**w.arxiv_records[0], "doi": "see journal version"},)),
         rejects=(("doi", "see journal version", I.MALFORMED),),
         detail=f"arXiv {DYNA_ID}'s record gives DOI 'see journal version', not a DOI",
         gone=frozenset({(DYNATRAIN, "doi", JOURNAL_DOI)}), doi={DYNATRAIN: f"10.48550/arxiv.{DYNA_ID}"}),
    Case("OpenAlex gives a DOI that is not one", _openalex(**{HONPAS_W: {"doi": "10.1000"}}),
         rejects=(("doi", "10.1000", I.MALFORMED),), detail=f"OpenAlex {HONPAS_W} gives DOI '10.1000', not a DOI",
         gone=frozenset({(HONPAS, "doi", HONPAS_DOI)}), doi={HONPAS: None}),
    Case("OpenAlex gives a work id that is not one", _openalex(**{HONPAS_W: {"openalex_id": "https://openalex.org/"}}),
         rejects=(("openalex", "https://openalex.org/", I.MALFORMED),), detail="not a W… id",
         gone=frozenset({(HONPAS, "openalex", HONPAS_W), (HONPAS, "doi", HONPAS_DOI)}), doi={HONPAS: None}),
    Case("a listing's arXiv id that does not parse",
         lambda w: w.but(listings=(w.listings[0], {**w.listings[1], "arxiv_id": "arXiv:pending"}, w.listings[2])),
         # the listing is still DynaTrain by its title, and its link still its own: it costs nothing else
         rejects=(("arxiv", "arXiv:pending", I.MALFORMED),), detail="the listing's arXiv id 'arXiv:pending' is not an arXiv id"),
    Case("a title hit by other people", _other_persons_honpas,
         rejects=(("openalex", HONPAS_W, I.NOT_VERIFIED),),
         detail="none of OpenAlex W4400000003's authors (Cai Fixture, Dong Fixture, Y. Zhang) is a name the listing (bzpeer:ann-other) shows (Ann Other)"),
    Case("a title hit from another decade",
         lambda w: w.but(listings=(*w.listings[:2], {**w.listings[2], "year": 2011})),
         rejects=(("openalex", HONPAS_W, I.NOT_VERIFIED),),
         detail="OpenAlex W4400000003 (found by title) is from 2020, the listing (bzpeer:yunquan-zhang) says 2011",
         gone=frozenset({(HONPAS, "openalex", HONPAS_W), (HONPAS, "doi", HONPAS_DOI)}), doi={HONPAS: None}),
    Case("one journal DOI claimed by two papers", _shared_journal_doi,
         rejects=(("doi", JOURNAL_DOI, I.AMBIGUOUS), ("doi", JOURNAL_DOI, I.AMBIGUOUS)),
         detail="the same doi names 2 papers: P",
         gone=frozenset({(DYNATRAIN, "doi", JOURNAL_DOI)}),
         added=frozenset({("Elastic Parallelism Switching", "arxiv", "2605.00001"),
                          ("Elastic Parallelism Switching", "doi", "10.48550/arxiv.2605.00001")}),
         doi={DYNATRAIN: f"10.48550/arxiv.{DYNA_ID}", "Elastic Parallelism Switching": "10.48550/arxiv.2605.00001"}),
    Case("a site paper id the listing replaced", _sf_link_moved, rejects=(), detail="",
         redirects=(("scholarfeed_paper", f"{DYNA_ID}v1", f"{DYNA_ID}v2"),)),
    Case("an OpenAlex work id OpenAlex replaced", _openalex_replaced_work, rejects=(), detail="",
         redirects=(("openalex", "W4400000999", DYNA_W),)),
]


@pytest.mark.parametrize("case", ZOO, ids=[c.name for c in ZOO])
def test_a_bad_identifier_leaves_its_trace_and_costs_nothing_else(case: Case):
    core = build(case.change(BASE))
    rejects = core.identifier_rejects
    assert sorted(rejects.select("scheme", "value", "reason").rows()) == sorted(case.rejects)
    if case.rejects:
        assert all(case.detail in d for d in rejects["detail"]), rejects["detail"].to_list()
        assert rejects["paper_id"].null_count() == 0 and rejects["source"].null_count() == 0
    assert crosswalk(core) == (BASELINE - case.gone) | case.added
    assert dois(core) == {**{DYNATRAIN: JOURNAL_DOI, HONPAS: HONPAS_DOI}, **case.doi}
    identifier_redirects = core.id_redirects.filter(pl.col("entity_type") != "paper")
    assert identifier_redirects.select("entity_type", "old_id", "new_id").rows() == list(case.redirects)
    if case.redirects:
        assert identifier_redirects["reason"].unique().to_list() == ["superseded"]
        assert identifier_redirects["redirected_on"].to_list() == [DAY]   # the night the replacement was first given
    # a value names one paper
    assert core.paper_identifiers.select("scheme", "value").is_duplicated().sum() == 0


@pytest.mark.parametrize(
    ("normalize", "given", "expected"),
    [
        (I.normalize_doi, "https://doi.org/10.1145/3580305.3599256", "10.1145/3580305.3599256"),
        (I.normalize_doi, "doi: 10.1000/FIXTURE.X", "10.1000/fixture.x"),
        (I.normalize_doi, "10.48550/arXiv.2604.02156", "10.48550/arxiv.2604.02156"),
        (I.normalize_doi, "10.1000", None),
        (I.normalize_doi, "N/A", None),
        (I.normalize_work_id, "https://openalex.org/W4415000001", "W4415000001"),
        (I.normalize_work_id, "w4415000001", "W4415000001"),
        (I.normalize_work_id, "A5100000006", None),
        (lambda url: I.site_paper_id("bzpeer", url), f"https://www.bzpeer.com/works/{SLUG}", ("bzpeer_work", SLUG)),
        (lambda url: I.site_paper_id("scholarfeed", url), "/paper/2002.07399v3?ref=author", ("scholarfeed_paper", "2002.07399v3")),
        (lambda url: I.site_paper_id("scholarfeed", url), "https://arxiv.org/abs/2002.07399", None),   # an arXiv link, not the site's id
        (lambda url: I.site_paper_id("bzpeer", url), "https://www.bzpeer.com/authors/daning-cheng", None),
    ],
)
def test_values_are_normalised_or_refused(normalize, given, expected):
    assert normalize(given) == expected


def test_a_doi_from_enrichment_joins_a_retitled_version_to_its_preprint():
    """Identifiers are resolution evidence: a journal version listed under another title, which OpenAlex
    found by that title (and the listing agrees with), carries the DOI arXiv's record gives the preprint —
    so it is the preprint's paper, by DOI, though the titles alone would keep them apart."""
    journal_title = "Elastic Parallelism Reconfiguration for Large Model Training at Scale"
    world = BASE.but(
        listings=BASE.listings + (listing("k-journal", "bzpeer", "daning-cheng", journal_title, 2026),),
        openalex=BASE.openalex + (work("W4470000007", "title", title_key=journal_title.lower(), doi=JOURNAL_DOI,
                                       names=["Yuanqing Wang", "Daning Cheng"]),),
    )
    core = build(world)
    paper_of = dict(core.listing_papers.select("listing_key", "paper_id").iter_rows())
    assert paper_of["k-journal"] == paper_of["k-dyna-bz"] == paper_of["k-dyna-sf"]
    assert core.listing_papers.filter(pl.col("listing_key") == "k-journal")["method"].item() == "doi"
    assert crosswalk(core) == BASELINE | {(DYNATRAIN, "openalex", "W4470000007")}
    assert core.identifier_rejects.height == 0
    # without the DOI the journal title stays a paper of its own
    alone = build(world.but(arxiv_records=()))
    assert len({dict(alone.listing_papers.select("listing_key", "paper_id").iter_rows())[k]
                for k in ("k-journal", "k-dyna-bz")}) == 2

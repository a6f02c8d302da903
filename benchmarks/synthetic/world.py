"""The latent world behind a synthetic corpus: people, communities, papers, profile pages.

Built once per (profiles, seed), vectorised with numpy, before any page is written:

1. **Communities** (labs / groups, median ~18 people) with a research field and a dominant
   name culture; communities of one field sit next to each other so "neighbouring" groups
   collaborate on related topics.
2. **People**: names from ``names.py`` (homonyms arise from real name frequencies); a subset
   are *profile holders* (followed researchers), concentrated in some communities, with a
   heavier-tailed activity (papers written) than their co-authors without profiles.
3. **Papers**: per community, ~sum(activity)/authors-per-paper papers; authors (1-12) drawn by
   activity inside the community plus occasional outsiders from neighbouring communities; lab
   heads often last. Dates 2015..capture (growing with time), arXiv id and version, category,
   Code flag, per-paper AI score (mostly on recent papers), citations, canonical title
   (``titles.py``), abstract plan (sentence templates from ``vocab.py``).
   A small share of papers get a **near-twin**: a different paper by the same people whose
   title differs by one content word.
4. **Pages**: each profile holder has a BZPEER profile, a Scholar Feed profile or both
   (~25 %); a few BZPEER people have a second, duplicate profile under a name variant. A site
   *knows* a random subset of the person's papers (declared count) and *lists* all or most of
   them. Pages are shuffled, given URLs, file names, a format (text / HTML) and, for a small
   share, a bad-page kind.

Nothing here writes files; ``render.py`` turns a page of this world into bytes.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import NamedTuple

import numpy as np

from . import vocab
from .names import CULTURE_NAMES, CULTURE_WEIGHTS, PersonName, make_name
from .titles import make_title, slugify, twin_title
from .abstracts import PLAN_COLS, plan_abstracts
from .draws import _affine_ids, _at_least_one, _community_sizes, _draw_authorship, _rank_within, _ranges

SOURCES = ("bzpeer", "scholarfeed")
SITE_BZPEER, SITE_SCHOLARFEED = 0, 1
BAD_KINDS = ("ok", "empty", "bot_challenge", "error_page", "binary", "truncated")
# Share of each kind among bad pages.
BAD_KIND_MIX = {"empty": 0.2, "bot_challenge": 0.25, "error_page": 0.25, "binary": 0.1, "truncated": 0.2}

BOTH_SITES_SHARE = 0.25      # profile holders with a profile on both sites
BZPEER_ONLY_SHARE = 0.33     # the rest (0.42) are on Scholar Feed only
DUPLICATE_PROFILE_SHARE = 0.012  # BZPEER people with a second profile under a name variant
NONPROFILE_PER_PROFILE = 2.0     # co-authors without a profile, per profile holder
HOLDER_ACTIVITY_MEDIAN = 12.0    # papers written, median, by followed researchers (lognormal tail)
OTHER_ACTIVITY_MEDIAN = 7.0      # ... and by their co-authors without a profile
FOLLOWED_BETA = (1.5, 1.5)       # how strongly profile holders concentrate in some communities
TWIN_SHARE = 0.006           # papers that get a near-twin (a different paper, one word apart)
LATEX_TITLE_SHARE = 0.015
FIELD_WEIGHTS = {"llm_systems": 16, "compression": 10, "federated": 8, "hpc": 12, "vision": 10, "nlp": 10,
                 "recsys": 6, "theory": 7, "agents": 7, "graphs": 6, "architecture": 5, "reliability": 3}
EPOCH = date(1970, 1, 1)
FIRST_DAY = date(2015, 1, 1)


@dataclass(frozen=True)
class CorpusParams:
    profiles: int
    seed: int = 0
    html_share: float = 0.3
    bad_page_share: float = 0.005
    captured_at: datetime = datetime(2026, 11, 21, tzinfo=timezone.utc)

    def to_json(self) -> dict:
        return {"profiles": self.profiles, "seed": self.seed, "html_share": self.html_share,
                "bad_page_share": self.bad_page_share, "captured_at": self.captured_at.isoformat()}

    @classmethod
    def from_json(cls, data: dict) -> "CorpusParams":
        return cls(profiles=int(data["profiles"]), seed=int(data["seed"]), html_share=float(data["html_share"]),
                   bad_page_share=float(data["bad_page_share"]),
                   captured_at=datetime.fromisoformat(data["captured_at"]))


@dataclass
class World:
    params: CorpusParams
    capture_day: int                      # days since 1970-01-01
    # communities
    community_field: np.ndarray
    # people
    names: list[PersonName | None]          # None: never shown on any page
    person_community: np.ndarray
    person_activity: np.ndarray
    person_has_profile: np.ndarray
    # papers (CSR authorship: authors of paper p are paper_authors[paper_ptr[p]:paper_ptr[p+1]], in byline order)
    paper_ptr: np.ndarray
    paper_authors: np.ndarray
    paper_field: np.ndarray
    paper_category: np.ndarray            # index into CATEGORY_CODES
    paper_day: np.ndarray                 # v1 date, days since epoch
    paper_version: np.ndarray
    paper_bz_type: np.ndarray             # 0 preprint, 1 conference, 2 article
    paper_bz_venue: np.ndarray            # index into the venue list of its type
    paper_bz_year: np.ndarray
    paper_has_code: np.ndarray
    paper_code_in_abstract: np.ndarray
    paper_score: np.ndarray               # Scholar Feed per-paper score, NaN when not shown
    paper_citations: np.ndarray
    paper_arxiv_month: np.ndarray         # arXiv id yymm part as yyyymm (e.g. 202603)
    paper_arxiv_number: np.ndarray        # arXiv id number part
    paper_work_id: np.ndarray             # BZPEER work id
    paper_twin_of: np.ndarray             # -1, or the paper this one is a near-twin of
    paper_title: list[str]
    paper_method: list[str]
    paper_expansion: list[str]
    paper_slots: np.ndarray               # (P, 9) indices: obj, task, tech, hw, data, data2, base, adj, org
    paper_numbers: np.ndarray             # (P, 5) float: speed-up, pct, small pct, count, model size idx
    paper_number_style: np.ndarray
    paper_plan: np.ndarray                # (P, PLAN_COLS) template index per column
    paper_plan_mask: np.ndarray           # (P,) bit i set: column i is used
    paper_propose_bank: np.ndarray
    # pages
    page_person: np.ndarray
    page_site: np.ndarray
    page_duplicate: np.ndarray            # the person's second profile on the same site
    page_html: np.ndarray
    page_bad: np.ndarray                  # index into BAD_KINDS
    page_known_ptr: np.ndarray
    page_known: np.ndarray                # papers the site knows for the page (declared count)
    page_listed: np.ndarray               # bool per known row: shown on the page
    page_name: list[str]
    page_profile_id: list[str]
    page_url: list[str]
    page_file: list[str]
    abstract_cache: dict = field(default_factory=dict)   # paper -> sentences (renderer's FIFO cache)

    @property
    def n_papers(self) -> int:
        return len(self.paper_title)

    @property
    def n_pages(self) -> int:
        return len(self.page_person)

    def arxiv_id(self, paper: int) -> str:
        return arxiv_id(int(self.paper_arxiv_month[paper]), int(self.paper_arxiv_number[paper]))

    def arxiv_ids(self) -> list[str]:
        return [arxiv_id(m, n) for m, n in zip(self.paper_arxiv_month.tolist(), self.paper_arxiv_number.tolist())]

    def authors(self, paper: int) -> np.ndarray:
        return self.paper_authors[self.paper_ptr[paper]:self.paper_ptr[paper + 1]]


CATEGORY_CODES = tuple(vocab.CATEGORY_FULL)
_CATEGORY_INDEX = {c: i for i, c in enumerate(CATEGORY_CODES)}


# ---------------------------------------------------------------------------------------------
# small numpy helpers
# ---------------------------------------------------------------------------------------------


def arxiv_id(month_key: int, number: int) -> str:
    """yyyymm + number -> the new-style arXiv id ``yymm.NNNNN``."""
    return f"{month_key // 100 % 100:02d}{month_key % 100:02d}.{number:05d}"


def day_to_date(day: int) -> date:
    return EPOCH + timedelta(days=int(day))


# ---------------------------------------------------------------------------------------------
# abstract plans
# ---------------------------------------------------------------------------------------------


def draw_paper_numbers(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    numbers = np.empty((n, 5), dtype=np.float64)
    numbers[:, 0] = np.round(np.clip(rng.lognormal(np.log(3.0), 0.7, n), 1.1, 120.0), 1)   # speed-up
    numbers[:, 1] = np.round(rng.uniform(5, 98, n), 1)                                      # percentage
    numbers[:, 2] = np.round(rng.uniform(0.1, 6, n), 1)                                     # small pct
    numbers[:, 3] = rng.choice([2, 3, 4, 5, 8, 12, 14, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], n)
    numbers[:, 4] = rng.integers(0, 8, n)                                                   # model size
    style = rng.choice(3, n, p=[0.55, 0.3, 0.15])
    return numbers, style


def draw_slots(rng: np.random.Generator, fields: np.ndarray) -> np.ndarray:
    """Per paper, indices into its field's vocabulary lists (kept so title and abstract agree)."""
    n = len(fields)
    out = np.zeros((n, 9), dtype=np.int16)
    lists = ("objects", "tasks", "techniques", "hardware", "datasets", "datasets", "baselines")
    u = rng.random((n, 9))
    for j, attr in enumerate(lists):
        sizes = np.array([len(getattr(f, attr)) for f in vocab.FIELDS])[fields]
        out[:, j] = np.minimum((u[:, j] * sizes).astype(np.int64), sizes - 1)
    out[:, 7] = (u[:, 7] * len(vocab.ADJECTIVES)).astype(np.int64)
    out[:, 8] = (u[:, 8] * len(vocab.GITHUB_ORGS)).astype(np.int64)
    # the second dataset differs from the first where the field has more than one
    sizes = np.array([len(f.datasets) for f in vocab.FIELDS])[fields]
    same = out[:, 5] == out[:, 4]
    out[same, 5] = (out[same, 4] + 1) % sizes[same]
    return out


# ---------------------------------------------------------------------------------------------
# the world
# ---------------------------------------------------------------------------------------------
class _People(NamedTuple):
    """Communities and people: who is in which community, who holds a profile, how active each is."""
    n_people: int
    n_holders: int
    sizes: np.ndarray          # people per community
    comm_field: np.ndarray     # field index per community
    comm_start: np.ndarray     # first person of each community
    person_comm: np.ndarray
    person_culture: np.ndarray
    holders: np.ndarray        # people with a profile, sorted
    has_profile: np.ndarray
    activity: np.ndarray


class _Papers(NamedTuple):
    """Authorship rows (sorted by paper) and the near-twins appended after the ``n_p1`` originals."""
    a_paper: np.ndarray
    a_person: np.ndarray
    paper_comm: np.ndarray
    ptr: np.ndarray            # CSR pointer of the authorship rows per paper
    twin_of: np.ndarray        # -1, or the paper a twin was derived from
    twin_src: np.ndarray
    n_p1: int


def build_world(params: CorpusParams) -> World:
    if params.profiles < 1:
        raise ValueError("profiles must be >= 1")
    rng = np.random.default_rng([params.seed, 0x5EED])
    capture_date = params.captured_at.astimezone(timezone.utc).date()
    capture_day = (capture_date - EPOCH).days
    # every step draws from the one generator, in this order: the order is part of the corpus
    people = _draw_people(rng, params.profiles)
    papers = _draw_papers(rng, people)
    n_papers = len(papers.paper_comm)
    paper_field = people.comm_field[papers.paper_comm]
    facts = _draw_paper_facts(rng, papers, paper_field, capture_date, capture_day)
    month_key, num = _arxiv_numbers(facts["day"])
    work_id = _affine_ids(n_papers, 9_999_991, 7_368_787, 1_234_567, 1_000_000)
    slots = draw_slots(rng, paper_field)
    numbers, number_style = draw_paper_numbers(rng, n_papers)
    latex = rng.random(n_papers) < LATEX_TITLE_SHARE
    page_person, page_site, page_dup = _draw_pages(rng, params.profiles, people, papers.a_person)
    known_ptr, r_paper, listed = _draw_page_papers(rng, params.seed, people.n_people, papers,
                                                   page_person, page_site, page_dup)
    n_pages = len(page_person)

    # --- titles and abstracts (python: string work) ---------------------------------------
    titles, methods, expansions = _titles(params, n_papers, paper_field, slots, papers.twin_of, papers.twin_src,
                                          latex, r_paper[listed], month_key, num)
    propose_bank, plan, plan_mask = _plan_abstracts(rng, methods, expansions, facts["code_in_abstract"])

    # --- people's names; names shown, ids, urls, files ------------------------------------
    names = _names(params, people.n_people, n_papers, papers.a_paper, papers.a_person, r_paper, people.holders,
                   people.person_culture)
    page_name, page_profile_id, page_url = _page_names_and_urls(params, names, page_person, page_site, page_dup)
    page_html = rng.random(n_pages) < params.html_share
    page_bad = _assign_bad_pages(rng, n_pages, params.bad_page_share)
    width = max(3, len(str(n_pages - 1)))
    page_file = [
        f"{i:0{width}d}_{hashlib.sha256(url.encode()).hexdigest()[:16]}.{'html' if h else 'txt'}"
        for i, (url, h) in enumerate(zip(page_url, page_html.tolist()))
    ]

    return World(
        params=params, capture_day=capture_day, community_field=people.comm_field,
        names=names, person_community=people.person_comm, person_activity=people.activity,
        person_has_profile=people.has_profile,
        paper_ptr=papers.ptr, paper_authors=papers.a_person.astype(np.int64), paper_field=paper_field,
        paper_category=facts["cat"], paper_day=facts["day"], paper_version=facts["version"],
        paper_bz_type=facts["bz_type"], paper_bz_venue=facts["bz_venue"], paper_bz_year=facts["bz_year"],
        paper_has_code=facts["has_code"], paper_code_in_abstract=facts["code_in_abstract"],
        paper_score=facts["score"], paper_citations=facts["citations"], paper_arxiv_month=month_key,
        paper_arxiv_number=num, paper_work_id=work_id,
        paper_twin_of=papers.twin_of, paper_title=titles, paper_method=methods, paper_expansion=expansions,
        paper_slots=slots, paper_numbers=numbers, paper_number_style=number_style, paper_plan=plan,
        paper_plan_mask=plan_mask, paper_propose_bank=propose_bank,
        page_person=page_person, page_site=page_site, page_duplicate=page_dup, page_html=page_html,
        page_bad=page_bad, page_known_ptr=known_ptr, page_known=r_paper, page_listed=listed,
        page_name=page_name, page_profile_id=page_profile_id, page_url=page_url, page_file=page_file,
    )


def _draw_people(rng: np.random.Generator, n_pages_wanted: int) -> _People:
    """Sizing, communities (a field and a dominant name culture each) and the profile holders:
    concentrated in some communities (the followed research areas), more active than the rest."""
    pages_per_holder = 1 + BOTH_SITES_SHARE + DUPLICATE_PROFILE_SHARE * (BOTH_SITES_SHARE + BZPEER_ONLY_SHARE)
    n_holders = int(math.ceil(n_pages_wanted / pages_per_holder * 1.03)) + 2
    n_people = n_holders + int(math.ceil(NONPROFILE_PER_PROFILE * n_holders))

    sizes = _community_sizes(rng, n_people)
    n_comm = len(sizes)
    field_keys = list(FIELD_WEIGHTS)
    fw = np.array([FIELD_WEIGHTS[k] for k in field_keys], dtype=float)
    comm_field = np.sort(np.array([vocab.FIELD_INDEX[field_keys[i]] for i in rng.choice(len(field_keys), n_comm, p=fw / fw.sum())]))
    comm_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    person_comm = np.repeat(np.arange(n_comm), sizes)
    cw = np.array(CULTURE_WEIGHTS, dtype=float)
    comm_culture = rng.choice(len(CULTURE_NAMES), n_comm, p=cw / cw.sum())
    person_culture = np.where(rng.random(n_people) < 0.7, comm_culture[person_comm],
                              rng.choice(len(CULTURE_NAMES), n_people, p=cw / cw.sum()))

    followed = rng.beta(FOLLOWED_BETA[0], FOLLOWED_BETA[1], n_comm)
    keys = np.log(followed[person_comm] + 1e-9) + rng.gumbel(size=n_people)
    holders = np.sort(np.argpartition(-keys, n_holders - 1)[:n_holders])
    has_profile = np.zeros(n_people, dtype=bool)
    has_profile[holders] = True
    activity = np.where(has_profile, rng.lognormal(np.log(HOLDER_ACTIVITY_MEDIAN), 0.85, n_people),
                        rng.lognormal(np.log(OTHER_ACTIVITY_MEDIAN), 0.9, n_people))
    activity = np.clip(activity, 1.0, 400.0)
    return _People(n_people, n_holders, sizes, comm_field, comm_start, person_comm, person_culture, holders,
                   has_profile, activity)


def _draw_papers(rng: np.random.Generator, people: _People) -> _Papers:
    """Who wrote what, then the near-twins: a different paper by (mostly) the same people, one
    title word apart."""
    a_paper, a_person, paper_comm = _draw_authorship(
        rng, people.activity, people.sizes, people.comm_start, people.person_comm, people.has_profile,
        people.n_people)
    n_p1 = len(paper_comm)

    n_twins = int(round(TWIN_SHARE * n_p1))
    twin_src = np.sort(rng.choice(n_p1, n_twins, replace=False)) if n_twins else np.zeros(0, dtype=np.int64)
    ptr = np.concatenate(([0], np.cumsum(np.bincount(a_paper, minlength=n_p1))))
    if n_twins:
        lens = ptr[twin_src + 1] - ptr[twin_src]
        drop_last = (rng.random(n_twins) < 0.4) & (lens >= 2)
        tl = lens - drop_last
        rows = _ranges(ptr[twin_src], tl)
        t_paper = np.repeat(np.arange(n_p1, n_p1 + n_twins), tl)
        a_paper = np.concatenate((a_paper, t_paper))
        a_person = np.concatenate((a_person, a_person[rows]))
        paper_comm = np.concatenate((paper_comm, paper_comm[twin_src]))
    n_papers = len(paper_comm)
    ptr = np.concatenate(([0], np.cumsum(np.bincount(a_paper, minlength=n_papers))))
    twin_of = np.full(n_papers, -1, dtype=np.int64)
    twin_of[n_p1:] = twin_src
    return _Papers(a_paper, a_person, paper_comm, ptr, twin_of, twin_src, n_p1)


def _draw_paper_facts(rng: np.random.Generator, papers: _Papers, paper_field: np.ndarray, capture_date: date,
                      capture_day: int) -> dict[str, np.ndarray]:
    """Per paper: category, day, versions, BZPEER type/venue/year, code, site score, citations (a
    twin shares its source's category and lies within 200 days of it)."""
    n_papers, n_p1, twin_src = len(papers.paper_comm), papers.n_p1, papers.twin_src
    n_twins = len(twin_src)
    cat = np.zeros(n_papers, dtype=np.int16)
    ucat = rng.random(n_papers)
    for fi, f in enumerate(vocab.FIELDS):
        sel = paper_field == fi
        if not sel.any():
            continue
        codes = [_CATEGORY_INDEX[c] for c, _ in f.categories]
        w = np.cumsum([w for _, w in f.categories])
        cat[sel] = np.array(codes)[np.minimum(np.searchsorted(w / w[-1], ucat[sel]), len(codes) - 1)]
    # a few papers anywhere are cross-listed with stat.ML as primary
    cat[rng.random(n_papers) < 0.02] = _CATEGORY_INDEX["ML"]

    span = capture_day - (FIRST_DAY - EPOCH).days
    growth = 0.28 / 365.0
    t = np.log1p(rng.random(n_papers) * np.expm1(growth * span)) / growth
    day = (FIRST_DAY - EPOCH).days + np.minimum(t.astype(np.int64), span)
    if n_twins:
        day[n_p1:] = np.clip(day[twin_src] + rng.integers(-200, 200, n_twins), (FIRST_DAY - EPOCH).days, capture_day)
    cat[n_p1:] = cat[twin_src]
    version = rng.choice([1, 2, 3, 4], n_papers, p=[0.5, 0.3, 0.13, 0.07])
    latest = np.minimum(day + np.where(version > 1, rng.integers(10, 420, n_papers), 0), capture_day)
    ydays = _year_of_days(day)
    latest_year = _year_of_days(latest)
    bz_type = rng.choice(3, n_papers, p=[0.86, 0.09, 0.05])
    bz_venue = np.where(bz_type == 1, rng.integers(0, len(vocab.VENUES_CONFERENCE), n_papers),
                        rng.integers(0, len(vocab.VENUES_JOURNAL), n_papers))
    pub_year = np.minimum(ydays + (rng.random(n_papers) < 0.4), capture_date.year)
    bz_year = np.where(bz_type == 0, latest_year, pub_year)
    has_code = rng.random(n_papers) < 0.28
    code_in_abstract = (has_code & (rng.random(n_papers) < 0.6)) | (rng.random(n_papers) < 0.04)
    recent = (capture_day - day) <= 365
    scored = rng.random(n_papers) < np.where(recent, 0.35, 0.02)
    score = np.where(scored, np.round(np.clip(rng.normal(62, 9, n_papers), 30, 99.9), 1), np.nan)
    age_years = (capture_day - day) / 365.25
    lam = np.exp(rng.normal(np.log1p(3.5 * age_years), 1.2))
    citations = rng.poisson(np.minimum(lam, 1e5)).astype(np.int64)
    return {"cat": cat, "day": day, "version": version, "bz_type": bz_type, "bz_venue": bz_venue,
            "bz_year": bz_year, "has_code": has_code, "code_in_abstract": code_in_abstract, "score": score,
            "citations": citations}


def _arxiv_numbers(day: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """arXiv ids: yymm.NNNNN, unique within the month (affine bijection of the rank in the month)."""
    n_papers = len(day)
    month_key = _month_key(day)
    order = np.lexsort((np.arange(n_papers), month_key))
    rank_in_month = np.empty(n_papers, dtype=np.int64)
    rank_in_month[order] = _rank_within(month_key[order])
    modulus = 29999 if rank_in_month.max(initial=0) < 29999 else 99999
    num = 1 + (rank_in_month * 7919 + (month_key * 131) % modulus) % modulus
    return month_key, num


def _draw_pages(rng: np.random.Generator, n_pages_wanted: int, people: _People,
                a_person: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Profile pages: each holder on BZPEER, Scholar Feed or both, some with a duplicate BZPEER
    profile; at most ``n_pages_wanted``, shuffled. Returns (person, site, duplicate) per page."""
    holders, n_holders = people.holders, people.n_holders
    u = rng.random(n_holders)
    on_bz = u < BOTH_SITES_SHARE + BZPEER_ONLY_SHARE
    on_sf = (u < BOTH_SITES_SHARE) | (u >= BOTH_SITES_SHARE + BZPEER_ONLY_SHARE)
    pp_person = np.bincount(a_person, minlength=people.n_people)
    dup = on_bz & (rng.random(n_holders) < DUPLICATE_PROFILE_SHARE) & (pp_person[holders] >= 2)
    page_person = np.concatenate((holders[on_bz], holders[on_sf], holders[dup]))
    page_site = np.concatenate((np.zeros(on_bz.sum(), np.int8), np.ones(on_sf.sum(), np.int8), np.zeros(dup.sum(), np.int8)))
    page_dup = np.concatenate((np.zeros(on_bz.sum() + on_sf.sum(), bool), np.ones(dup.sum(), bool)))
    if len(page_person) > n_pages_wanted:
        keep = np.sort(rng.choice(len(page_person), n_pages_wanted, replace=False))
        page_person, page_site, page_dup = page_person[keep], page_site[keep], page_dup[keep]
    perm = rng.permutation(len(page_person))
    return page_person[perm], page_site[perm], page_dup[perm]


def _draw_page_papers(rng: np.random.Generator, seed: int, n_people: int, papers: _Papers, page_person: np.ndarray,
                      page_site: np.ndarray, page_dup: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which of its person's papers a page knows (a duplicate BZPEER profile holds its own share)
    and which of those it lists. Returns the CSR pointer per page, the known papers, the listed mask."""
    n_pages = len(page_person)
    a_paper, a_person = papers.a_paper, papers.a_person
    pp_person = np.bincount(a_person, minlength=n_people)
    order = np.argsort(a_person, kind="stable")   # a_paper is sorted: rows become (person, paper)
    person_papers = a_paper[order]
    person_ptr = np.concatenate(([0], np.cumsum(pp_person)))
    deg = pp_person[page_person]
    rows = _ranges(person_ptr[page_person], deg)
    r_page = np.repeat(np.arange(n_pages), deg)
    r_paper = person_papers[rows]
    coverage = rng.beta(8, 1.5, n_pages)
    known = rng.random(len(rows)) < coverage[r_page]
    split = ((page_person[r_page] * 1_000_003 + r_paper * 7_919 + seed) % 1000) < 300
    has_dup_page = np.zeros(n_people, dtype=bool)
    has_dup_page[page_person[page_dup]] = True
    bz_split = (page_site[r_page] == SITE_BZPEER) & has_dup_page[page_person[r_page]]
    known &= np.where(bz_split, np.where(page_dup[r_page], split, ~split), True)
    known = _at_least_one(known, r_page, n_pages, prefer=np.where(bz_split, np.where(page_dup[r_page], split, ~split), True))
    r_page, r_paper = r_page[known], r_paper[known]
    hide_share = np.where(rng.random(n_pages) < np.where(page_site == SITE_BZPEER, 0.3, 0.15), rng.uniform(0.05, 0.25, n_pages), 0.0)
    listed = rng.random(len(r_page)) >= hide_share[r_page]
    listed = _at_least_one(listed, r_page, n_pages)
    known_ptr = np.concatenate(([0], np.cumsum(np.bincount(r_page, minlength=n_pages))))
    return known_ptr, r_paper, listed


def _plan_abstracts(rng: np.random.Generator, methods: list, expansions: list,
                    code_in_abstract: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each abstract's sentence plan, from whether its title coined a name or an expansion."""
    n_papers = len(methods)
    has_name = np.array([bool(m) for m in methods])
    has_exp = np.array([bool(e) for e in expansions])
    propose_bank = np.where(has_exp & (rng.random(n_papers) < 0.5), 1, np.where(has_name, 0, 2))
    # in batches: the planner's temporaries are ~0.5 kB per paper
    plans = [plan_abstracts(rng, propose_bank[lo:lo + 100_000], code_in_abstract[lo:lo + 100_000])
             for lo in range(0, n_papers, 100_000)]
    plan = np.concatenate([p for p, _ in plans]) if plans else np.zeros((0, PLAN_COLS), np.int16)
    plan_mask = np.concatenate([m for _, m in plans]) if plans else np.zeros(0, np.int64)
    return propose_bank, plan, plan_mask


def _titles(params: CorpusParams, n_papers: int, paper_field: np.ndarray, slots: np.ndarray, twin_of: np.ndarray,
            twin_src: np.ndarray, latex: np.ndarray, needed_papers: np.ndarray, month_key: np.ndarray,
            num: np.ndarray) -> tuple[list[str], list[str], list[str]]:
    """Titles (python: string work, from a random stream of their own), with the method name and the
    acronym expansion each uses, for the papers some page lists (``needed_papers``) and the originals of
    listed near-twins."""
    trng = random.Random(params.seed * 1_000_003 + 17)
    titles: list[str] = [""] * n_papers
    methods: list[str] = [""] * n_papers
    expansions: list[str] = [""] * n_papers
    seen: set[str] = set()
    is_twin_source = np.zeros(n_papers, dtype=bool)
    is_twin_source[twin_src] = True
    slots_l = slots.tolist()
    field_l = paper_field.tolist()
    # Only papers some page lists (and the originals of listed near-twins) are ever shown:
    # the others stay latent (authorship, counts) and get no title, which keeps big worlds cheap.
    needed = np.zeros(n_papers, dtype=bool)
    needed[needed_papers] = True
    needed[twin_of[needed & (twin_of >= 0)]] = True
    for p in np.flatnonzero(needed).tolist():
        f = vocab.FIELDS[field_l[p]]
        s = slots_l[p]
        if twin_of[p] >= 0:
            src = int(twin_of[p])
            title = twin_title(titles[src], trng)
            if title.casefold() in seen:
                title = title + " Revisited"
            titles[p], methods[p], expansions[p] = title, methods[src], expansions[src]
            seen.add(title.casefold())
            continue
        for attempt in range(30):
            title, method, expansion = make_title(
                trng, f, f.objects[s[0]], f.tasks[s[1]], f.techniques[s[2]], f.hardware[s[3]],
                twin_source=bool(is_twin_source[p]), latex=bool(latex[p]),
            )
            if attempt >= 3:   # a crowded field: vary the phrase slots too
                s = [trng.randrange(len(f.objects)), trng.randrange(len(f.tasks)), trng.randrange(len(f.techniques)),
                     trng.randrange(len(f.hardware))] + s[4:]
            if title.casefold() not in seen:
                break
        else:
            title = f"{title} ({arxiv_id(int(month_key[p]), int(num[p]))})"
        seen.add(title.casefold())
        titles[p], methods[p], expansions[p] = title, method, expansion
    return titles, methods, expansions


def _names(params: CorpusParams, n_people: int, n_papers: int, a_paper: np.ndarray, a_person: np.ndarray,
           r_paper: np.ndarray, holders: np.ndarray, person_culture: np.ndarray) -> list[PersonName | None]:
    """Names (from a random stream of their own) for everyone who authors a paper some page knows
    (owners, bylines, new co-authors) and every profile holder."""
    nrng = random.Random(params.seed * 1_000_033 + 29)
    named = np.zeros(n_people, dtype=bool)
    known_papers = np.zeros(n_papers, dtype=bool)
    known_papers[r_paper] = True
    named[a_person[known_papers[a_paper]]] = True
    named[holders] = True
    names: list[PersonName | None] = [None] * n_people
    cultures = person_culture.tolist()
    for i in np.flatnonzero(named).tolist():
        names[i] = make_name(nrng, CULTURE_NAMES[cultures[i]])
    return names


def _page_names_and_urls(params: CorpusParams, names: list, page_person: np.ndarray, page_site: np.ndarray,
                        page_dup: np.ndarray) -> tuple[list[str], list[str], list[str]]:
    """Each page's name as shown (Scholar Feed the canonical form, BZPEER the habitual one, a duplicate
    BZPEER profile another variant), its profile id and its url."""
    n_pages = len(page_person)
    page_name = []
    for person, site, is_dup in zip(page_person.tolist(), page_site.tolist(), page_dup.tolist()):
        nm = names[person]
        if site == SITE_SCHOLARFEED:
            page_name.append(nm.canonical)
        elif not is_dup:
            page_name.append(nm.habitual)
        else:
            alts = [v for v in (nm.canonical,) + nm.variants if v != nm.habitual]
            page_name.append(alts[(person * 7 + params.seed) % len(alts)] if alts else nm.habitual)
    bz_num = _affine_ids(n_pages, 8_999_993, 5_023_907, 424_242, 1_000)
    sf_num = _affine_ids(n_pages, 9_999_991, 3_141_593, 271_828, 100_000)
    page_profile_id, page_url = [], []
    for i, (site, name) in enumerate(zip(page_site.tolist(), page_name)):
        if site == SITE_BZPEER:
            pid = f"{slugify(name, 60)}-{int(bz_num[i])}"
            page_url.append(f"https://www.bzpeer.com/authors/{pid}")
        else:
            pid = str(int(sf_num[i]))
            page_url.append(f"https://www.scholarfeed.org/author/{pid}")
        page_profile_id.append(pid)
    return page_name, page_profile_id, page_url


def _assign_bad_pages(rng: np.random.Generator, n_pages: int, share: float) -> np.ndarray:
    out = np.zeros(n_pages, dtype=np.int8)
    n_bad = int(round(share * n_pages))
    if n_bad <= 0:
        return out
    kinds = list(BAD_KIND_MIX)
    quota = np.array([BAD_KIND_MIX[k] for k in kinds]) * n_bad
    counts = np.floor(quota).astype(int)
    for j in np.argsort(-(quota - counts), kind="stable")[: n_bad - counts.sum()]:
        counts[j] += 1
    labels = np.repeat([BAD_KINDS.index(k) for k in kinds], counts)
    pages = rng.choice(n_pages, n_bad, replace=False)
    out[pages] = rng.permutation(labels)
    return out


def _year_of_days(days: np.ndarray) -> np.ndarray:
    return days.astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970


def _month_key(days: np.ndarray) -> np.ndarray:
    months = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
    return (months // 12 + 1970) * 100 + months % 12 + 1

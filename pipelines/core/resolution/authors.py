"""Author matching: which name mentions (profile owners, byline names) are one person.

Input: one row per name on one document — ``mention_id``, ``name``, ``paper_id``, ``coauthors``
(the other names on that document), ``title``, ``year``, ``venue``, ``affiliation``; optional
``source``, ``source_profile_id`` + ``is_profile_owner`` (the mention of a profile's owner),
``orcid``, ``openalex_id``. Output: ``mention_id``, ``author_id`` (smallest mention id of the
person's cluster), ``method``, ``score``.

Names alone never merge two mentions. How it works:

1. **Identity evidence** (score 1.0): mentions of the owner of one profile
   (``source`` + ``source_profile_id``) are one person; so are mentions with one ORCID or one
   OpenAlex author id. Two different ORCIDs are never one person.
2. **Same paper**: two mentions on one ``paper_id`` with compatible names (``names.py``:
   initials, diacritics, hyphens, family-first order) are one person — the owner of a profile
   and their own byline entry, or one byline seen on several listings — unless they are two
   entries of one byline: listed side by side (one name among the other's co-authors), or two
   rows of one paper that name no source (two names on one document; a truncated co-author list
   must not hide it). A profile owner is *not* matched
   to a merely similar byline name: when a truncated byline (``et al.``) hides the owner,
   ``Yunquan Zhang`` never becomes ``Yuchen Zhang``. An owner compatible with two co-listed
   byline names is ambiguous and left for review.
3. **Probabilistic linkage** (``author_linkage.py``, ``fellegi_sunter.py``): every pair of
   compatible names in a block (family name + first initial) is compared on name form,
   co-authors, title topic, affiliation, venue and year; the weights are estimated from the
   input itself (Fellegi–Sunter, EM, term frequency of names counted in people) and kept in an
   ``AuthorModel``. Average linkage per block merges clusters whose mean match probability
   reaches ``MERGE_PROBABILITY``; different ORCIDs, two entries of one byline and two profiles
   on one site are hard constraints; a merge must be backed by pairs that agree on more than the
   name (a full name at most two people carry counts as evidence), and a long career under one
   not-common full name is joined across eras.
4. **Clustering** applies identity, same-paper and linkage edges through a union-find that
   refuses a merge across those constraints or that would hold two incompatible full names
   (``Y. Zhang`` may join ``Yunquan Zhang`` or ``Yuchen Zhang``, never both).
5. **Review queue**: pairs of clusters left apart with a mean probability of at least
   ``REVIEW_PROBABILITY`` (with their evidence), similar yet incompatible names that share
   evidence (``Daning Chen``/``Daning Cheng``), merges a constraint refused, ambiguous owners.

docs/resolution.md has every rule with its reasons and the figures on real data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import polars as pl
from rapidfuzz.distance import JaroWinkler

from pipelines.core.resolution.author_linkage import (
    MERGE_PROBABILITY,
    AuthorModel,
    blocks as linkage_blocks,
    compare_pairs,
    describe_levels,
    affiliation_key,
    canonical_name,
    fit_linkage,
    FIT_MAX_PAIRS,
    frequency_tables,
    people_per_name,
    link_block,
    mention_evidence,
    packed,
    random_pairs,
)
from pipelines.core.resolution.blocking import pair_code, star_pairs, unique_pairs
from pipelines.core.resolution.clustering import ConstrainedUnionFind
from pipelines.core.resolution.review import REVIEW_SCHEMA, concat_queues, review_queue
from pipelines.core.resolution.runtime import map_in_processes, match_workers, without_cycle_collection
from pipelines.core.resolution.names import name_compatibility, name_forms, name_levels, parse_name
from pipelines.textnorm import match_key

REVIEW_NAME_SIMILARITY = 0.85  # Jaro-Winkler of folded names for the "similar but incompatible" queue
MAX_EVIDENCE_GROUP = 60
MAX_PAPER_AUTHORS = 100  # beyond this (consortium papers) only the listed co-authors count  # clusters sharing one (name key, evidence) value beyond this are too common to link
METHOD_PRIORITY = {"orcid": 6, "profile": 5, "openalex_id": 4, "same_paper": 3, "shared_evidence": 2, "singleton": 0}

ASSIGNMENT_SCHEMA = {"mention_id": pl.String, "author_id": pl.String, "method": pl.String, "score": pl.Float64}
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)
_OPENALEX = re.compile(r"(A\d+)$", re.IGNORECASE)


def normalize_orcid(value: str | None) -> str | None:
    m = _ORCID.search(value or "")
    return m.group(1).upper() if m else None


def normalize_openalex_id(value: str | None) -> str | None:
    m = _OPENALEX.search((value or "").strip())
    return m.group(1).upper() if m else None


@dataclass
class _Mentions:
    ids: list[str]
    names: list[str]
    folded: list[str]
    keys: list[tuple[str, ...]]
    papers: list[str | None]
    coauthor_names: list[set[str]]  # folded co-author names, to detect side-by-side listing
    coauthor_keys: list[frozenset[str]]  # surname + first initial
    coauthor_full: list[frozenset[str]]  # "given family" of co-authors written with a full given name
    owner: list[bool]
    source: list[str | None]
    profile: list[str | None]
    orcid: list[str | None]
    openalex: list[str | None]
    affiliation: list[str | None]
    venue: list[str | None]
    titles: list[str | None]
    years: list[int | None]


def _col(df: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    return pl.col(name).cast(dtype, strict=False) if name in df.columns else pl.lit(None, dtype=dtype)


def _is_owner(mentions: pl.DataFrame) -> pl.Expr:
    """The mention of a profile's owner (by default: a mention that names a profile)."""
    if "is_profile_owner" in mentions.columns:
        return pl.col("is_profile_owner").cast(pl.Boolean, strict=False).fill_null(False)
    return _col(mentions, "source_profile_id", pl.String).is_not_null()


def _prepare(mentions: pl.DataFrame, on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None) -> _Mentions:
    """Per-mention features. ``on_paper`` (from :func:`_paper_names_of`): the names on each paper,
    when ``mentions`` is a batch of a larger input; by default computed from ``mentions``."""
    missing = {"mention_id", "name", "paper_id"} - set(mentions.columns)
    if missing:
        raise ValueError(f"mentions lack columns: {sorted(missing)}")
    coauthors = (
        pl.col("coauthors").cast(pl.List(pl.String)).fill_null([]) if "coauthors" in mentions.columns else pl.lit([], dtype=pl.List(pl.String))
    )
    df = mentions.select(
        pl.col("mention_id").cast(pl.String),
        pl.col("name").cast(pl.String),
        pl.col("paper_id").cast(pl.String),
        coauthors.alias("coauthors"),
        _col(mentions, "venue", pl.String).alias("venue"),
        _col(mentions, "affiliation", pl.String).alias("affiliation"),
        _col(mentions, "title", pl.String).alias("title"),
        _col(mentions, "year", pl.Int64).alias("year"),
        _col(mentions, "source", pl.String).alias("source"),
        _col(mentions, "source_profile_id", pl.String).alias("source_profile_id"),
        _is_owner(mentions).alias("owner"),
        _col(mentions, "orcid", pl.String).alias("orcid"),
        _col(mentions, "openalex_id", pl.String).alias("openalex_id"),
    ).sort("mention_id")
    _check_mention_ids(df["mention_id"])

    names = [n or "" for n in df["name"].to_list()]
    papers = df["paper_id"].to_list()
    own_forms = [name_forms(n) for n in names]
    name_info: dict[str, tuple[str | None, str | None, str]] = {}
    coauthor_names, coauthor_keys, coauthor_full = _listed_coauthors(own_forms, df["coauthors"].to_list(), name_info)
    if on_paper is None:
        on_paper = _paper_names_of(mentions)
    # Co-authors are everyone on the same paper, not only the names a listing showed: a BZPEER
    # owner mention has no byline, yet the other mentions of that paper are its co-authors.
    for i, (p, (_, _, own_keys)) in enumerate(zip(papers, own_forms)):
        if p is not None and p in on_paper and len(on_paper[p][0]) <= MAX_PAPER_AUTHORS:
            coauthor_keys[i] = frozenset(on_paper[p][0].difference(own_keys))
            coauthor_full[i] = frozenset(f for f, k in on_paper[p][1].items() if k not in own_keys)
    owners = df["owner"].to_list()
    profiles = [
        f"{src or ''}|{pid}" if is_owner and pid else None
        for src, pid, is_owner in zip(df["source"].to_list(), df["source_profile_id"].to_list(), owners)
    ]
    return _Mentions(
        ids=df["mention_id"].to_list(),
        names=names,
        folded=[parse_name(n).folded for n in names],
        keys=[f[2] for f in own_forms],  # == parse_name(n).keys, cached
        papers=papers,
        coauthor_names=coauthor_names,
        coauthor_keys=coauthor_keys,
        coauthor_full=coauthor_full,
        owner=owners,
        source=df["source"].to_list(),
        profile=profiles,
        orcid=[normalize_orcid(v) for v in df["orcid"].to_list()],
        openalex=[normalize_openalex_id(v) for v in df["openalex_id"].to_list()],
        affiliation=_per_value(df["affiliation"].to_list(), affiliation_key),
        venue=_per_value(df["venue"].to_list(), lambda v: match_key(v) or None),
        titles=df["title"].to_list(),
        years=df["year"].to_list(),
    )


def _check_mention_ids(ids: pl.Series) -> None:
    if ids.null_count():
        raise ValueError("mention_id must not be null")
    if ids.n_unique() != ids.len():
        raise ValueError("mention_id must be unique")


def _per_value(values: list, fn) -> list:
    """``fn`` once per distinct value; equal values share one result object."""
    cache: dict = {}
    out = []
    for v in values:
        if v not in cache:
            cache[v] = fn(v)
        out.append(cache[v])
    return out


def _row_coauthors(own_keys, names, name_info) -> tuple[set[str], set[str], set[str]]:
    """The co-authors one mention's own listing shows: folded names, keys (surname + first
    initial, the mention's own keys excluded) and full "given family" forms."""
    folded, keys, full = set(), set(), set()
    for name in names or ():
        info = name_info.get(name)
        if info is None:
            # Co-author names repeat across mentions: read each distinct name once.
            key, form, _ = name_forms(name)
            info = name_info[name] = (key, form, parse_name(name).folded if key is not None else "")
        key, form, folded_name = info
        if key is None:
            continue
        folded.add(folded_name)
        if key not in own_keys:
            keys.add(key)
            if form:
                full.add(form)
    return folded, keys, full


def _listed_coauthors(own_forms, coauthor_lists, name_info) -> tuple[list[set[str]], list[frozenset[str]], list[frozenset[str]]]:
    coauthor_names: list[set[str]] = []
    coauthor_keys: list[frozenset[str]] = []
    coauthor_full: list[frozenset[str]] = []
    for (_, _, own_keys), co in zip(own_forms, coauthor_lists):
        folded, keys, full = _row_coauthors(own_keys, co, name_info)
        coauthor_names.append(folded)
        coauthor_keys.append(frozenset(keys))
        coauthor_full.append(frozenset(full))
    return coauthor_names, coauthor_keys, coauthor_full


def _co_listed(m: _Mentions, i: int, j: int) -> bool:
    """Two byline mentions listed side by side: each name is among the other's co-authors.

    A profile owner's mention is not a byline entry, so it is never co-listed: its co-authors
    may well contain the owner's own byline entry under another form (``Y. Zhang``).
    """
    if m.owner[i] or m.owner[j] or not m.folded[i] or not m.folded[j]:
        return False
    return m.folded[i] in m.coauthor_names[j] and m.folded[j] in m.coauthor_names[i]


def _one_record(m: _Mentions, i: int, j: int) -> bool:
    """Two byline mentions of one paper that are two names on it: neither is a profile owner and
    neither names a source. A row is one name on one document, so without a source two rows of
    one paper are two of its authors (a benchmark's signatures), even when a truncated co-author
    list (a collaboration's first 50 names) hides that each is among the other's co-authors. A
    named source may list one paper more than once (on each co-author's profile, re-rendered
    from night to night), so there only the byline itself (co-listing) tells two entries apart."""
    if m.owner[i] or m.owner[j]:
        return False
    return not m.source[i] and not m.source[j]


def _same_paper_candidates(m: _Mentions) -> pl.DataFrame:
    """Pairs of mentions on one paper sharing a name key (any reading)."""
    # Columnar lists: building frames from per-row tuples is several times slower.
    idx_col: list[int] = []
    key_col: list[str] = []
    paper_col: list[str] = []
    for i, (keys, p) in enumerate(zip(m.keys, m.papers)):
        if p is not None and keys:
            idx_col += [i] * len(keys)
            key_col += keys
            paper_col += [p] * len(keys)
    if not idx_col:
        return pl.DataFrame(schema={"i": pl.Int64, "j": pl.Int64})
    long = pl.DataFrame({"idx": idx_col, "key": key_col, "paper": paper_col},
                        schema={"idx": pl.Int64, "key": pl.String, "paper": pl.String})
    return (
        long.join(long, on=["paper", "key"], suffix="_r")
        .filter(pl.col("idx") < pl.col("idx_r"))
        .select(pl.col("idx").alias("i"), pl.col("idx_r").alias("j"))
        .unique()
        .sort("i", "j")
    )


@dataclass
class _Review:
    i: int
    j: int
    score: float
    evidence_for: str
    evidence_against: str


class _AuthorUnionFind(ConstrainedUnionFind):
    """Adds the name-consistency rule (a cluster never holds two incompatible names) and, for
    merges on shared evidence, one profile per site (see :meth:`conflict`)."""

    def __init__(self, m: _Mentions) -> None:
        super().__init__(len(m.ids), exclusive={"ORCID": m.orcid})
        self.cluster_names: dict[int, set[str]] = {i: {n} for i, n in enumerate(m.names) if n}
        # Per root: site -> profile labels its owner mentions hold.
        self.cluster_profiles: dict[int, dict[str, set[str]]] = {
            i: {p.split("|", 1)[0]: {p}} for i, p in enumerate(m.profile) if p
        }
        self._check = self._names_agree
        self.identity_mode = False  # identity evidence (ORCID, profile) overrides name forms
        self.one_profile_per_site = False

    def _names_agree(self, ra: int, rb: int) -> bool:
        if self.identity_mode:
            return True
        a, b = self.cluster_names.get(ra), self.cluster_names.get(rb)
        return not a or not b or name_levels(a, b)[0] > 0

    def conflict(self, ra: int, rb: int, *, spans: bool = True) -> str | None:
        # Two clusters that own different profiles on one site are, as a rule, two people (a
        # site rarely holds one researcher twice): shared co-authors — common among homonyms of
        # one lab — must not merge them. Same-paper and identity evidence may (a duplicate
        # profile lists the same papers).
        if self.one_profile_per_site:
            pa, pb = self.cluster_profiles.get(ra), self.cluster_profiles.get(rb)
            if pa and pb and any(site in pb and labels.isdisjoint(pb[site]) for site, labels in pa.items()):
                return "different profiles on one site"
        return super().conflict(ra, rb, spans=spans)

    def has_constraints(self, root: int) -> bool:
        return super().has_constraints(root) or root in self.cluster_profiles

    def _merged(self, root: int, absorbed: int) -> None:
        names = self.cluster_names.pop(absorbed, None)
        if names:
            self.cluster_names.setdefault(root, set()).update(names)
        profiles = self.cluster_profiles.pop(absorbed, None)
        if profiles:
            mine = self.cluster_profiles.setdefault(root, {})
            for site, labels in profiles.items():
                mine.setdefault(site, set()).update(labels)


def _evidence_rows(m: _Mentions, roots: list[int], *, affiliations: bool) -> tuple[list[int], list[str]]:
    """(cluster, evidence) as two columns: ``c:`` co-author keys, ``p:`` papers and, if asked,
    ``a:`` affiliations. Columnar lists: frames from per-row tuples build several times slower."""
    ev_root: list[int] = []
    ev_col: list[str] = []
    for i, r in enumerate(roots):
        co = m.coauthor_keys[i]
        if co:
            ev_root += [r] * len(co)
            ev_col += ["c:" + ck for ck in co]
        if m.papers[i] is not None:
            ev_root.append(r)
            ev_col.append("p:" + m.papers[i])
        if affiliations and m.affiliation[i]:
            ev_root.append(r)
            ev_col.append("a:" + m.affiliation[i])
    return ev_root, ev_col


def _pairs_sharing(key_root: list[int], key_col: list[str], evidence: tuple[list[int], list[str]]) -> pl.DataFrame:
    """Cluster pairs ``a < b`` that share a key and a piece of evidence, skipping (key, evidence)
    groups of one cluster or of more than ``MAX_EVIDENCE_GROUP`` (too common to link anyone)."""
    ev_root, ev_col = evidence
    if not key_root or not ev_root:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64})
    # Keys and evidence become integer ids first, and each (key, evidence) group an integer: the
    # joins then carry integers, not strings (the self-join's output is the largest frame here).
    keys = (pl.DataFrame({"root": key_root, "key": key_col}, schema={"root": pl.Int64, "key": pl.String}).unique()
            .select("root", key=pl.col("key").rank("dense")))
    shown = (pl.DataFrame({"root": ev_root, "ev": ev_col}, schema={"root": pl.Int64, "ev": pl.String}).unique()
             .select("root", ev=pl.col("ev").rank("dense")))
    keyed = keys.join(shown, on="root")
    groups = (
        keyed.group_by("key", "ev").agg(pl.len().alias("size"))
        .filter((pl.col("size") > 1) & (pl.col("size") <= MAX_EVIDENCE_GROUP))
        .with_row_index("group")
    )
    keyed = keyed.join(groups, on=["key", "ev"]).select("group", "root")
    pairs = (
        keyed.join(keyed, on="group", suffix="_r")
        .filter(pl.col("root") < pl.col("root_r"))
        .select(pair_code(pl.col("root"), pl.col("root_r")))
    )
    return unique_pairs(pairs["pair"], names=("a", "b"))


@dataclass
class _ClusterView:
    names: dict[int, set[str]]
    coauthors: dict[int, set[str]]
    coauthors_full: dict[int, set[str]]
    papers: dict[int, set[str]]
    affiliations: dict[int, set[str]]
    venues: dict[int, set[str]]
    members: dict[int, list[int]]


def _cluster_view(m: _Mentions, roots: list[int], wanted: set[int]) -> _ClusterView:
    """Evidence of the clusters in ``wanted`` (those in some candidate pair)."""
    view = _ClusterView({}, {}, {}, {}, {}, {}, {})
    members, coauthors, coauthors_full = view.members, view.coauthors, view.coauthors_full
    names, papers, affiliations, venues = view.names, view.papers, view.affiliations, view.venues
    for i, r in enumerate(roots):
        if r not in wanted:
            continue
        group = members.get(r)
        if group is None:
            members[r] = [i]
            coauthors[r] = set(m.coauthor_keys[i])
            coauthors_full[r] = set(m.coauthor_full[i])
        else:
            group.append(i)
            coauthors[r].update(m.coauthor_keys[i])
            coauthors_full[r].update(m.coauthor_full[i])
        if m.names[i]:
            names.setdefault(r, set()).add(m.names[i])
        if m.papers[i] is not None:
            papers.setdefault(r, set()).add(m.papers[i])
        if m.affiliation[i]:
            affiliations.setdefault(r, set()).add(m.affiliation[i])
        if m.venue[i]:
            venues.setdefault(r, set()).add(m.venue[i])
    return view


def _pair_evidence(view: _ClusterView, a: int, b: int) -> tuple[float, list[str]]:
    """Points of shared evidence between clusters ``a`` and ``b`` and their descriptions."""
    shared_papers = view.papers.get(a, set()) & view.papers.get(b, set())
    # A co-author seen with the same full name on both sides counts 1; one matched only by
    # surname + initial ("Y. Zhang") counts half — common keys ("wang y") collide across groups.
    shared_full = sorted(view.coauthors_full[a] & view.coauthors_full[b])
    full_keys = {name_forms(f)[0] for f in shared_full}
    shared_keys = sorted((view.coauthors[a] & view.coauthors[b]) - full_keys)
    coauthor_points = min(4.0, len(shared_full) + 0.5 * len(shared_keys))
    shared_aff = view.affiliations.get(a, set()) & view.affiliations.get(b, set())
    shared_venues = view.venues.get(a, set()) & view.venues.get(b, set())
    points = (
        2.0 * len(shared_papers)
        + coauthor_points
        + (0.5 if shared_aff else 0.0)
        + (0.25 if shared_venues else 0.0)
    )
    described = []
    if shared_papers:
        described.append(f"{len(shared_papers)} shared paper(s)")
    if shared_full or shared_keys:
        shown = [f.title() for f in shared_full] + [k for k in shared_keys]
        described.append(f"{len(shown)} shared co-author(s): {', '.join(shown[:5])}")
    if shared_aff:
        described.append(f"same affiliation {sorted(shared_aff)[0]!r}")
    if shared_venues:
        described.append(f"same venue {sorted(shared_venues)[0]!r}")
    return points, described


def _score(points: float) -> float:
    return round(points / (points + 1.0), 4)


def _label(view: _ClusterView, r: int) -> str:
    return " / ".join(sorted(view.names.get(r, {""})))


@dataclass
class _AuthorResolution:
    roots: list[int]
    edges: list[tuple[int, int, str, float]]
    review: list[_Review]


def _resolve(m: _Mentions, model: AuthorModel) -> _AuthorResolution:
    n = len(m.ids)
    uf = _AuthorUnionFind(m)
    edges: list[tuple[int, int, str, float]] = []
    review: list[_Review] = []
    idx = np.arange(n, dtype=np.int64)

    # 1. Identity evidence.
    uf.identity_mode = True
    for method, labels in (("orcid", m.orcid), ("profile", m.profile), ("openalex_id", m.openalex)):
        star = star_pairs(pl.DataFrame({"idx": idx, "label": labels}, schema={"idx": pl.Int64, "label": pl.String}))
        for i, j in star.iter_rows():
            if uf.union(i, j) or uf.find(i) == uf.find(j):
                edges.append((i, j, method, 1.0))
    uf.identity_mode = False

    # 2. Same paper, compatible names, not side by side on one byline.
    candidates = _same_paper_candidates(m)
    compatible: dict[int, list[int]] = {}
    for i, j in candidates.iter_rows():
        if not m.names[i] or not m.names[j]:
            continue
        one_record = _one_record(m, i, j)
        if (_co_listed(m, i, j) or one_record) and m.folded[i] != m.folded[j]:
            uf.add_cannot_link(i, j)
            continue
        if one_record:
            # The very same name twice on one record: two namesakes of one byline, or the entry
            # repeated. Not forbidden (in a collaboration's 3,000-name byline a hard constraint
            # on every such pair fragments each namesake's clustering), not merged: the linkage weighs it.
            continue
        if name_compatibility(m.names[i], m.names[j]) > 0:
            compatible.setdefault(i, []).append(j)
            compatible.setdefault(j, []).append(i)
    same_paper_edges = []
    ambiguous: set[int] = set()
    for i, partners in sorted(compatible.items()):
        # Compatible with two names that share a byline (Y. Zhang vs Yunquan and Yuchen): ambiguous.
        if any(_co_listed(m, a, b) for a in partners for b in partners if a < b and m.folded[a] != m.folded[b]):
            ambiguous.add(i)
            distinct = ", ".join(sorted({m.names[j] for j in partners}))
            for j in partners:
                review.append(_Review(min(i, j), max(i, j), 0.9, "same paper, compatible names", f"{m.names[i]!r} fits several names on this byline: {distinct}"))
    for i, partners in sorted(compatible.items()):
        for j in partners:
            if i < j and i not in ambiguous and j not in ambiguous:
                level = name_compatibility(m.names[i], m.names[j])
                same_paper_edges.append((i, j, 1.0 if level == 2 else 0.9))
    for i, j, s in sorted(same_paper_edges, key=lambda e: (-e[2], e[0], e[1])):
        if uf.union(i, j) or uf.find(i) == uf.find(j):
            edges.append((i, j, "same_paper", s))

    # 3. Probabilistic linkage of compatible names within blocks (author_linkage.py).
    uf.one_profile_per_site = True
    seen_review: set[tuple[int, int]] = set()
    _link(m, model, uf, edges, review, seen_review)

    # 4. Similar but incompatible names with shared evidence: review only.
    roots = uf.roots()
    similar = _similar_name_candidates(m, roots)
    view = _cluster_view(m, roots, set(similar["a"].to_list()) | set(similar["b"].to_list()))
    for a, b in similar.iter_rows():
        if uf.find(a) == uf.find(b):
            continue
        na, nb = view.names.get(a, set()), view.names.get(b, set())
        worst, _ = name_levels(na, nb)
        if worst > 0:
            continue  # compatible clusters were judged in step 3
        similarity = max(JaroWinkler.normalized_similarity(parse_name(x).folded, parse_name(y).folded) for x in na for y in nb)
        points, ev_for = _pair_evidence(view, a, b)
        # Very similar strings (Chen/Cheng) need one point of shared evidence; one family name
        # and one initial with different given names (Yuchen/Yunquan Zhang) need two.
        if not (similarity >= REVIEW_NAME_SIMILARITY and points >= 1) and not (points >= 2 and _same_family_initial(na, nb)):
            continue
        key = (min(a, b), max(a, b))
        if key in seen_review:
            continue
        seen_review.add(key)
        review.append(
            _Review(
                view.members[a][0], view.members[b][0], round(_score(points) * similarity, 4),
                f"similar names ({similarity:.2f}); " + "; ".join(ev_for),
                "names are not compatible forms of one name",
            )
        )
    return _AuthorResolution(uf.roots(), edges, review)


def _same_family_initial(a: set[str], b: set[str]) -> bool:
    keys_a = {k for x in a for k in parse_name(x).keys}
    return any(k in keys_a for y in b for k in parse_name(y).keys)


def _similar_name_candidates(m: _Mentions, roots: list[int]) -> pl.DataFrame:
    """Cluster pairs with loosely similar names (surname prefix + first initial) sharing a
    co-author or a paper."""
    loose_root: list[int] = []
    loose_col: list[str] = []
    for r, name in zip(roots, m.names):
        for reading in parse_name(name).readings:
            if reading.family:
                loose_root.append(r)
                loose_col.append(f"{reading.family[:3]} {reading.first_initial}")
    return _pairs_sharing(loose_root, loose_col, _evidence_rows(m, roots, affiliations=False))


def _link(m: _Mentions, model: AuthorModel, uf: _AuthorUnionFind, edges: list, review: list[_Review],
          seen_review: set[tuple[int, int]]) -> None:
    """Step 3: average linkage of each block's pair probabilities (author_linkage.py), applied
    through the union-find so identity, byline and profile constraints still hold."""
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    start = np.array(uf.roots(), dtype=np.int64)
    constrained = {r for r in set(start.tolist()) if uf.has_constraints(r)}
    for rows, block_of in packed(linkage_blocks(m.keys, ev.canonical, ev.year, m.ids)):
        result = link_block(ev, model, rows, block_of, start[rows], _forbidden(uf, start[rows], constrained))
        for label in range(int(result.labels.max()) + 1):
            members = np.flatnonzero(result.labels == label)
            anchor = int(rows[members[0]])
            for k in members[1:].tolist():
                other = int(rows[k])
                ra, rb = uf.find(anchor), uf.find(other)
                if ra == rb:
                    continue
                score = round(float(result.score[k]), 4)
                reason = uf.conflict(ra, rb)
                if reason is None:
                    uf.union(ra, rb)
                    edges.append((anchor, other, "shared_evidence", score))
                elif (min(ra, rb), max(ra, rb)) not in seen_review:
                    seen_review.add((min(ra, rb), max(ra, rb)))
                    lo, hi = min(anchor, other), max(anchor, other)
                    review.append(_Review(lo, hi, score, "linked by their evidence", f"{reason} ({m.names[lo]} / {m.names[hi]})"))
        for ri, rj, mean, levels in result.review:
            a, b = int(rows[ri]), int(rows[rj])
            ra, rb = uf.find(a), uf.find(b)
            key = (min(ra, rb), max(ra, rb))
            if ra == rb or key in seen_review:
                continue
            seen_review.add(key)
            reason = uf.conflict(ra, rb)
            lo, hi = min(a, b), max(a, b)
            against = (f"{reason} ({m.names[lo]} / {m.names[hi]})" if reason is not None
                       else f"mean match probability {mean:.2f}, {MERGE_PROBABILITY:g} needed")
            review.append(_Review(lo, hi, round(mean, 4), describe_levels(levels), against))


def _forbidden(uf: _AuthorUnionFind, start: np.ndarray, constrained: set[int]) -> np.ndarray:
    """Pairs of a block's rows whose starting clusters may never merge: two entries of one byline,
    different ORCIDs, different profiles on one site (names are the linkage's own test)."""
    present = sorted(constrained.intersection(start.tolist()))
    if len(present) < 2:
        return np.zeros((len(start), len(start)), dtype=bool)
    q = len(present)
    conflicts = np.zeros((q + 1, q + 1), dtype=bool)  # the last row/column: an unconstrained cluster
    for x in range(q):
        for y in range(x + 1, q):
            reason = uf.conflict(present[x], present[y])
            conflicts[x, y] = conflicts[y, x] = reason is not None and reason != "incompatible"
    position = {r: k for k, r in enumerate(present)}
    at = np.array([position.get(r, q) for r in start.tolist()], dtype=np.int64)
    return conflicts[at[:, None], at[None, :]]


def _assignments(m: _Mentions, res: _AuthorResolution) -> pl.DataFrame:
    n = len(m.ids)
    first: dict[int, int] = {}
    for i, r in enumerate(res.roots):
        first.setdefault(r, i)  # rows are sorted by mention_id: the first is the smallest
    best: dict[int, tuple[int, float, str]] = {}
    for i, j, method, score in res.edges:
        if res.roots[i] != res.roots[j]:
            continue
        cand = (METHOD_PRIORITY[method], score, method)
        for k in (i, j):
            if k not in best or cand[:2] > best[k][:2]:
                best[k] = cand
    return pl.DataFrame(
        {
            "mention_id": m.ids,
            "author_id": [m.ids[first[res.roots[i]]] for i in range(n)],
            "method": [best[i][2] if i in best else "singleton" for i in range(n)],
            "score": [best[i][1] if i in best else 1.0 for i in range(n)],
        },
        schema=ASSIGNMENT_SCHEMA,
    )


def _review_frame(m: _Mentions, res: _AuthorResolution, cluster_of: list[str]) -> pl.DataFrame:
    rows = []
    for r in res.review:
        ci, cj = cluster_of[r.i], cluster_of[r.j]
        if ci == cj:
            continue
        left, right = (r.i, r.j) if ci < cj else (r.j, r.i)
        rows.append(
            {
                "left_id": m.ids[left],
                "right_id": m.ids[right],
                "left_label": m.names[left],
                "right_label": m.names[right],
                "score": r.score,
                "evidence_for": r.evidence_for,
                "evidence_against": r.evidence_against,
                "left_cluster": cluster_of[left],
                "right_cluster": cluster_of[right],
            }
        )
    return review_queue(rows)


# Inputs larger than this are resolved one batch of independent components at a time, so the
# matcher's per-mention features (~2 KB each) are held for one batch, not for the corpus.
BATCH_MENTIONS = 250_000


# Inputs of at least this many mentions are resolved in worker processes, BATCHES_PER_WORKER
# batches of components per worker (starting a worker costs about a second).
PARALLEL_AUTHOR_MIN = 100_000
BATCHES_PER_WORKER = 3


def _batch_size(configured: int | None = None) -> int:
    """Mentions resolved at once: ``configured`` (the setting ``SCHOLARHOUSE_AUTHOR_BATCH``), else BATCH_MENTIONS."""
    return max(1, int(configured)) if configured else BATCH_MENTIONS


def _interaction_labels(name: str) -> tuple[str, ...]:
    """Labels two mentions must share to ever be compared: their name keys (same-paper and
    shared-evidence candidates) and loose keys (similar-name review)."""
    parsed = parse_name(name)
    keys = ["k|" + k for k in name_forms(name)[2]]
    keys += [f"l|{r.family[:3]} {r.first_initial}" for r in parsed.readings if r.family]
    return tuple(dict.fromkeys(keys))


def name_label_table(names: pl.Series) -> pl.DataFrame:
    """``(name, label)``: the interaction labels of each distinct name (read once per name)."""
    distinct = names.cast(pl.String).fill_null("").unique()
    return pl.DataFrame({"name": distinct, "label": [list(_interaction_labels(x)) for x in distinct.to_list()]},
                        schema={"name": pl.String, "label": pl.List(pl.String)})


def identity_label_columns(mentions: pl.DataFrame) -> list[pl.Series]:
    """Per mention, its identity labels as columns (null where it has none): the profile it owns
    (the same label as _prepare's ``profile``: owner mentions only), its ORCID, its OpenAlex id."""
    # with_columns, not select: without the optional profile columns the label is a literal,
    # which select would leave one row long.
    columns = [mentions.with_columns(
        pl.when(_is_owner(mentions))
        .then(pl.concat_str(pl.lit("p|"), _col(mentions, "source", pl.String).fill_null(""), pl.lit("|"),
                            _col(mentions, "source_profile_id", pl.String)))
        .alias("__profile_label")
    )["__profile_label"]]
    for column, prefix, normalize in (("orcid", "o|", normalize_orcid), ("openalex_id", "x|", normalize_openalex_id)):
        if column in mentions.columns:
            values = _per_value(mentions[column].cast(pl.String).to_list(), normalize)
            columns.append(pl.Series([prefix + v if v else None for v in values], dtype=pl.String))
    return columns


def _components(mentions: pl.DataFrame) -> np.ndarray:
    """Component of each row: rows that share a name key, a loose key, an owned profile, an
    ORCID or an OpenAlex id — transitively. Every candidate pair, constraint and merge of
    :func:`_resolve` lies inside one component, so components can be resolved separately with
    the same result."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = mentions.height
    names = mentions["name"].cast(pl.String).fill_null("")
    rows = pl.DataFrame({"idx": np.arange(n, dtype=np.int64), "name": names})
    long = [rows.join(name_label_table(names), on="name").explode("label").select("idx", "label")]
    long += [pl.DataFrame({"idx": rows["idx"], "label": labels}, schema={"idx": pl.Int64, "label": pl.String})
             for labels in identity_label_columns(mentions)]
    edges = pl.concat(long).drop_nulls("label").with_columns(pl.col("label").rank("dense").cast(pl.Int64) - 1 + n)
    size = n + (int(edges["label"].max()) + 1 - n if edges.height else 0)
    graph = coo_matrix((np.ones(edges.height, dtype=np.int8), (edges["idx"].to_numpy(), edges["label"].to_numpy())), shape=(size, size))
    return connected_components(graph, directed=False)[1][:n]


def _component_batches(mentions: pl.DataFrame, batch: int,
                       on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None,
                       ) -> Iterator[tuple[pl.DataFrame, dict[str, tuple[set[str], dict[str, str]]]]]:
    """``mentions`` as batches of whole independent components of about ``batch`` rows (in order
    of first row), each with the names on its papers (``on_paper``; by default from all of
    ``mentions``)."""
    component = _components(mentions)
    sizes = np.bincount(component)
    order = np.unique(component, return_index=True)[1]
    batch_of_component = np.empty(sizes.size, dtype=np.int64)
    current, filled = 0, 0
    for c in component[np.sort(order)].tolist():
        if filled and filled + sizes[c] > batch:
            current, filled = current + 1, 0
        batch_of_component[c] = current
        filled += int(sizes[c])
    batch_of_row = batch_of_component[component]
    if on_paper is None:
        on_paper = _paper_names_of(mentions)
    for b in range(current + 1):
        part = mentions.filter(pl.Series(batch_of_row == b))
        # Only the batch's own papers: what a worker process is sent stays proportional to it.
        papers = part["paper_id"].cast(pl.String).drop_nulls().unique().to_list()
        yield part, {p: on_paper[p] for p in papers if p in on_paper}


def _resolved(mentions: pl.DataFrame, model: AuthorModel | None = None,
              batch: int | None = None) -> Iterator[tuple[_Mentions, _AuthorResolution]]:
    """(features, resolution) of ``mentions``: in one piece, or per batch of components."""
    batch = _batch_size(batch)
    if mentions.height <= batch:
        m = _prepare(mentions)
        yield m, _resolve(m, model or _model_for(m, mentions, None))
        return
    on_paper = _paper_names_of(mentions)
    model = model or fit_author_model(mentions, on_paper=on_paper)
    for part, part_on_paper in _component_batches(mentions, batch, on_paper):
        m = _prepare(part, part_on_paper)
        yield m, _resolve(m, model)


@without_cycle_collection
def _resolve_batch(batch: tuple[pl.DataFrame, dict[str, tuple[set[str], dict[str, str]]] | None, AuthorModel | None]
                   ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(assignments, review) of one batch of whole components — in a worker process or here.
    Without a model (the input is this one batch) the model is fitted on the batch itself."""
    part, on_paper, model = batch
    m = _prepare(part, on_paper)
    res = _resolve(m, model or _model_for(m, part, on_paper))
    assigned = _assignments(m, res)
    return assigned, _review_frame(m, res, assigned["author_id"].to_list())


def _model_for(m: _Mentions, mentions: pl.DataFrame, on_paper) -> AuthorModel:
    """The model of an input resolved in one piece (``m``: its prepared form, reused when the
    input is small enough to be fitted on whole) — the same as :func:`fit_author_model`'s."""
    if mentions.height <= FIT_MENTIONS:
        return _fit(m, mentions)
    return fit_author_model(mentions, on_paper=on_paper)


# The model is fitted on at most this many mentions (whole name keys, chosen by a hash of the key).
FIT_MENTIONS = 60_000


def fit_author_model(mentions: pl.DataFrame, *, on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None
                     ) -> AuthorModel:
    """The evidence weights of the author linkage (author_linkage.py), fitted on ``mentions``:
    frequency tables over all of them, ``m``/``u`` on a deterministic sample of whole name keys
    (at most ``FIT_MENTIONS`` mentions). Pass it to :func:`resolve_authors` to weigh a part of a
    corpus (an incremental night's subset, a batch) exactly as the whole."""
    if mentions.height == 0:
        return _fit(_prepare(mentions), mentions)
    sample = mentions
    if mentions.height > FIT_MENTIONS:
        names = mentions["name"].cast(pl.String).fill_null("")
        distinct = names.unique()
        table = pl.DataFrame({"name": distinct, "key": [name_forms(x)[0] or "" for x in distinct.to_list()]},
                             schema={"name": pl.String, "key": pl.String})
        keys = pl.DataFrame({"name": names}).join(table, on="name", how="left", maintain_order="left")["key"]
        buckets = keys.hash(seed=0) % 1024  # fixed seed: the same keys in every process and night
        counts = np.bincount(buckets.to_numpy().astype(np.int64), minlength=1024)
        keep = int(np.searchsorted(np.cumsum(counts), FIT_MENTIONS, side="right"))
        sample = mentions.filter(buckets < max(keep, 1))
    if on_paper is None:
        on_paper = _paper_names_of(mentions)
    papers = sample["paper_id"].cast(pl.String).drop_nulls().unique().to_list()
    m = _prepare(sample, {p: on_paper[p] for p in papers if p in on_paper})
    return _fit(m, mentions)


def _fit(m: _Mentions, mentions: pl.DataFrame) -> AuthorModel:
    """Fit on the prepared mentions ``m`` (all of ``mentions`` or a sample of them); the
    frequency tables count all of ``mentions``."""
    names = mentions["name"].cast(pl.String).fill_null("").to_list() if mentions.height else []
    canonical = [f[0] for f in _per_value(names, canonical_name)]
    link_rows, links = _name_links(mentions)
    per_name = people_per_name(canonical, link_rows, links)
    affiliations = _per_value(mentions["affiliation"].cast(pl.String).to_list() if "affiliation" in mentions.columns
                              else [None] * mentions.height, affiliation_key)
    titles = mentions["title"].cast(pl.String).to_list() if "title" in mentions.columns else [None] * mentions.height
    affiliation_counts, title_df = frequency_tables(affiliations, titles)
    model = AuthorModel(None, max(mentions.height, 1), per_name, affiliation_counts, title_df)  # type: ignore[arg-type]
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    packs = list(packed(linkage_blocks(m.keys, ev.canonical, ev.year, m.ids)))
    # EM sees about FIT_MAX_PAIRS candidate pairs at most: beyond that every block keeps a fixed,
    # seeded share of its rows (so every block is represented, with fewer pairs each).
    pairs = sum(len(rows) * (len(rows) - 1) // 2 for rows, _ in packs)
    if pairs > FIT_MAX_PAIRS:
        keep = np.random.default_rng(20261125).random(len(m.ids)) < np.sqrt(FIT_MAX_PAIRS / pairs)
        packs = [(rows[keep[rows]], block_of[keep[rows]]) for rows, block_of in packs if keep[rows].sum() > 1]
    a, b = random_pairs(len(m.ids))
    model.linkage = fit_linkage(((ev, packs),), compare_pairs(ev, a, b))
    return model


def _name_links(mentions: pl.DataFrame) -> tuple[np.ndarray, list[str]]:
    """What ties two mentions of one name to one person when counting people per name
    (``people_per_name``): their listed co-authors' name keys, their paper, their identities."""
    n = mentions.height
    if n == 0:
        return np.empty(0, dtype=np.int64), []
    rows = pl.DataFrame({"row": np.arange(n, dtype=np.int64), "name": mentions["name"].cast(pl.String).fill_null("")})
    parts = [rows.select("row", link=pl.concat_str(pl.lit("p:"), mentions["paper_id"].cast(pl.String)))]
    if "coauthors" in mentions.columns:
        listed = rows.with_columns(co=mentions["coauthors"].cast(pl.List(pl.String))).explode("co").drop_nulls("co")
        distinct = pl.concat([listed["co"], rows["name"]]).unique()
        forms = [name_forms(x) for x in distinct.to_list()]
        table = pl.DataFrame({"co": distinct, "key": [f[0] for f in forms], "keys": [list(f[2]) for f in forms]},
                             schema={"co": pl.String, "key": pl.String, "keys": pl.List(pl.String)})
        own = rows.join(table.select(name="co", own="keys"), on="name", how="left")
        parts.append(
            listed.join(table.select("co", "key"), on="co").drop_nulls("key").join(own.select("row", "own"), on="row")
            .filter(~pl.col("own").fill_null([]).list.contains(pl.col("key")))
            .select("row", link=pl.concat_str(pl.lit("c:"), "key")))
    if "affiliation" in mentions.columns:
        affiliations = _per_value(mentions["affiliation"].cast(pl.String).to_list(), affiliation_key)
        parts.append(pl.DataFrame({"row": rows["row"], "link": affiliations}, schema={"row": pl.Int64, "link": pl.String})
                     .drop_nulls("link").select("row", pl.concat_str(pl.lit("a:"), "link").alias("link")))
    for k, labels in enumerate(identity_label_columns(mentions)):
        parts.append(pl.DataFrame({"row": rows["row"], "link": labels}).select("row", pl.concat_str(pl.lit(f"i{k}:"), "link").alias("link")))
    long = pl.concat(parts).drop_nulls("link").unique().sort("row", "link")
    return long["row"].to_numpy(), long["link"].to_list()


def _paper_names_of(mentions: pl.DataFrame) -> dict[str, tuple[set[str], dict[str, str]]]:
    """The names on each paper, from all of ``mentions``, as joins: each distinct name is read
    once (``name_forms``), and only the result becomes Python sets and dicts.

    Per paper (``{paper: (name keys, {full form: key})}``): the primary key of every mention's
    own name, and every listed co-author's key unless it is one of that mention's own keys (a
    second reading of its own name); full forms map to their key — a mention's own form to its
    own key, a co-author's form to the form's key. When the two disagree (``Smith, Ph.D.`` is
    ``smith p``, its form ``phd smith`` reads as ``smith``) the own key wins."""
    coauthors = (mentions["coauthors"].cast(pl.List(pl.String)).fill_null([]) if "coauthors" in mentions.columns
                 else pl.Series([[]] * mentions.height, dtype=pl.List(pl.String)))
    rows = pl.DataFrame({
        "row": np.arange(mentions.height, dtype=np.int64),
        "paper": mentions["paper_id"].cast(pl.String),
        "name": mentions["name"].cast(pl.String).fill_null(""),
        "co": coauthors,
    }).filter(pl.col("paper").is_not_null())
    distinct = pl.concat([rows["name"], rows["co"].explode().drop_nulls()]).unique().to_list()
    forms = [name_forms(x) for x in distinct]
    info = pl.DataFrame(
        {"name": distinct, "key": [f[0] for f in forms], "form": [f[1] for f in forms], "keys": [list(f[2]) for f in forms]},
        schema={"name": pl.String, "key": pl.String, "form": pl.String, "keys": pl.List(pl.String)},
    )
    del forms
    own_all = rows.select("row", "paper", "name").join(info, on="name", how="left")
    own = own_all.filter(pl.col("key").is_not_null())
    listed = (
        rows.select("row", "paper", "co").explode("co").drop_nulls("co")
        .join(info.select(pl.col("name").alias("co"), "key", "form"), on="co")
        .filter(pl.col("key").is_not_null())
        .join(own_all.select("row", own_keys="keys"), on="row")
        .filter(~pl.col("own_keys").fill_null([]).list.contains(pl.col("key")))
    )
    keys = pl.concat([listed.select("paper", "key"), own.select("paper", "key")]).unique().group_by("paper").agg("key")
    listed_forms = listed.filter(pl.col("form").is_not_null() & (pl.col("form") != "")).select("paper", "form").unique()
    form_names = listed_forms["form"].unique().to_list()
    form_keys = pl.DataFrame({"form": form_names, "value": [name_forms(f)[0] for f in form_names]},
                             schema={"form": pl.String, "value": pl.String})
    full = (
        pl.concat([
            listed_forms.join(form_keys, on="form", how="left").with_columns(own=pl.lit(False)),
            own.filter(pl.col("form").is_not_null() & (pl.col("form") != "")).select("paper", "form", value="key", own=pl.lit(True)),
        ])
        .unique()
        # The last value written wins: an own key over a co-author's reading, then the largest.
        .sort("paper", "form", "own", "value", nulls_last=False)
    )
    on_paper: dict[str, tuple[set[str], dict[str, str]]] = {p: (set(), {}) for p in rows["paper"].unique().to_list()}
    for p, k in zip(keys["paper"].to_list(), keys["key"].to_list()):
        on_paper[p][0].update(k)
    for p, f, v in zip(full["paper"].to_list(), full["form"].to_list(), full["value"].to_list()):
        on_paper[p][1][f] = v
    return on_paper


@without_cycle_collection
def resolve_authors(mentions: pl.DataFrame, *, paper_rows: pl.DataFrame | None = None,
                    model: AuthorModel | None = None, batch: int | None = None,
                    workers: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Match mentions into people; return ``(assignments, review)``.

    ``review`` rows name one mention of each cluster (``left_id``/``right_id`` are mention ids,
    ``left_cluster``/``right_cluster`` the author ids); labels are the mentions' names.

    ``paper_rows`` (optional): when ``mentions`` is part of a larger input (an incremental night
    re-resolves only the people a change can reach), every mention of the papers ``mentions``
    are on — the names on a paper are its mentions' co-authors. By default ``mentions`` itself.
    ``model`` (optional, :func:`fit_author_model`): the evidence weights to use; by default fitted
    on ``mentions``.
    ``batch`` / ``workers``: the settings ``SCHOLARHOUSE_AUTHOR_BATCH`` / ``SCHOLARHOUSE_MATCH_WORKERS``
    (by default :data:`BATCH_MENTIONS`, and one worker per core, at most 8); the result is the same.
    """
    if mentions.height == 0:
        return pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA)
    # Checked here as well as per batch: a repeated id can fall into two different batches.
    if "mention_id" in mentions.columns:
        _check_mention_ids(mentions["mention_id"].cast(pl.String))
    on_paper = None if paper_rows is None else _paper_names_of(paper_rows)
    batch, workers = _batch_size(batch), match_workers(workers)
    parallel = workers > 1 and mentions.height >= PARALLEL_AUTHOR_MIN
    if mentions.height <= batch and not parallel:
        return _resolve_batch((mentions, on_paper, model))
    if model is None:
        on_paper = on_paper if on_paper is not None else _paper_names_of(mentions)
        model = fit_author_model(mentions, on_paper=on_paper)
    if parallel:
        # The batch size bounds the mentions being resolved at once, across workers (a component
        # larger than a worker's share stays whole); a few batches per worker keep every core busy.
        batch = max(1, min(batch // workers, -(-mentions.height // (workers * BATCHES_PER_WORKER))))
    assignments, reviews = [], []
    batches = ((part, papers, model) for part, papers in _component_batches(mentions, batch, on_paper))
    for assigned, review in map_in_processes(_resolve_batch, batches,
                                             workers=workers if parallel else 1,
                                             failure="author-matching worker processes failed; matching in this process"):
        assignments.append(assigned)
        reviews.append(review)
    assigned = assignments[0] if len(assignments) == 1 else pl.concat(assignments).sort("mention_id")
    return assigned, concat_queues(reviews)


def match_authors(mentions: pl.DataFrame, *, model: AuthorModel | None = None) -> pl.DataFrame:
    """One row per mention: ``mention_id``, ``author_id``, ``method``, ``score``.

    ``author_id`` is the smallest ``mention_id`` of the person's cluster. ``method`` is the
    strongest evidence that put the mention in its cluster: ``orcid`` | ``profile`` |
    ``openalex_id`` | ``same_paper`` | ``shared_evidence``, or ``singleton`` (score 1.0).
    """
    return resolve_authors(mentions, model=model)[0]


@without_cycle_collection
def author_review_pairs(mentions: pl.DataFrame, result: pl.DataFrame, *, model: AuthorModel | None = None,
                        batch: int | None = None) -> pl.DataFrame:
    """The review queue for ``mentions`` as clustered in ``result`` (``mention_id``, ``author_id``).

    Only pairs that ``result`` keeps apart are listed, so manual overrides are respected.
    """
    if mentions.height == 0:
        return pl.DataFrame(schema=REVIEW_SCHEMA)
    mapping = dict(zip(result["mention_id"].cast(pl.String).to_list(), result["author_id"].cast(pl.String).to_list()))
    return concat_queues([_review_frame(m, res, [mapping.get(i, i) for i in m.ids]) for m, res in _resolved(mentions, model, batch)])

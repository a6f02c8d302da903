"""Clusters of author mentions: the union-find that keeps a person's constraints (one ORCID,
compatible names, one profile per site) and the evidence two clusters share, which the review
queue shows (similar but incompatible names, step 4 of ``authors.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pipelines.core.resolution.author_mentions import Mentions
from pipelines.core.resolution.blocking import pair_code, unique_pairs
from pipelines.core.resolution.clustering import ConstrainedUnionFind
from pipelines.core.resolution.names import name_forms, name_levels, parse_name

# Clusters sharing one (name key, evidence) value beyond this are too common to link.
MAX_EVIDENCE_GROUP = 60


@dataclass
class ReviewPair:
    i: int
    j: int
    score: float
    evidence_for: str
    evidence_against: str


class AuthorUnionFind(ConstrainedUnionFind):
    """Adds the name-consistency rule (a cluster never holds two incompatible names) and, for
    merges on shared evidence, one profile per site (see :meth:`conflict`)."""

    def __init__(self, m: Mentions) -> None:
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


def _evidence_rows(m: Mentions, roots: list[int], *, affiliations: bool) -> tuple[list[int], list[str]]:
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
class ClusterView:
    names: dict[int, set[str]]
    coauthors: dict[int, set[str]]
    coauthors_full: dict[int, set[str]]
    papers: dict[int, set[str]]
    affiliations: dict[int, set[str]]
    venues: dict[int, set[str]]
    members: dict[int, list[int]]


def cluster_view(m: Mentions, roots: list[int], wanted: set[int]) -> ClusterView:
    """Evidence of the clusters in ``wanted`` (those in some candidate pair)."""
    view = ClusterView({}, {}, {}, {}, {}, {}, {})
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


def pair_evidence(view: ClusterView, a: int, b: int) -> tuple[float, list[str]]:
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


def evidence_score(points: float) -> float:
    return round(points / (points + 1.0), 4)


def same_family_initial(a: set[str], b: set[str]) -> bool:
    keys_a = {k for x in a for k in parse_name(x).keys}
    return any(k in keys_a for y in b for k in parse_name(y).keys)


def similar_name_candidates(m: Mentions, roots: list[int]) -> pl.DataFrame:
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

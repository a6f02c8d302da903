"""Paper matching: which bibliographic records (profile listings, bibliography rows) are one paper.

Input: one row per record — ``record_id``, ``title``, ``authors`` (list of names, may be empty or
truncated), ``venue``, ``year``; optional ``source``, ``arxiv_id``, ``doi``. Output: one row per
record with ``paper_id`` (the smallest ``record_id`` of its cluster), ``method`` and ``score``.

How it works
------------
1. **Identifiers.** Records with the same arXiv id (version suffix dropped; arXiv DOIs
   ``10.48550/arXiv.*`` count as arXiv ids) or the same DOI are one paper. Two *different*
   arXiv ids are never one paper, whatever the titles say; nor are two different DOIs — unless
   the records share an arXiv id: one arXiv id is one version family (a preprint and its
   conference and journal versions), whose DOIs all belong to the paper.
2. **Collapse.** Records with the same normalised title (at least three content words), year,
   arXiv id and DOI would match each other whatever else they carry (score ≥ 0.88, no
   constraint between them): they become one *node* up front (``title_exact``), carrying the
   union of their author lists and of their title parts (a node with an author-less record is
   never penalised for sharing no author). A paper listed on forty profiles is compared once, not forty
   times, so the work below grows with distinct titles rather than with listings. (Short titles
   and one-to-one linkage are not collapsed: their records can legitimately stay apart.)
3. **Blocking** (``blocking.py``). Each record emits keys from its normalised title
   (``titles.py``): the whole title and each part of it (main title, subtitle), its first three
   and last three content words, every pair of its four rarest content words (rarest within the
   input; words seen once skipped), and the first/last sixteen letters of the title without
   spaces (glued words). Oversize blocks are reduced to sorted neighbourhoods (rows ordered by
   their whole title), so candidates grow linearly with the input.
4. **Scoring.** Candidates are screened with vectorised string similarity
   (``rapidfuzz.process.cpdist``: character similarity, then token-set similarity for a grey
   zone); survivors get a token-level title diff (equivalent spellings, acronyms, dropped
   subtitles vs. content-word substitutions; reused from an earlier run when a
   ``TitleDiffCache`` holds it), then author and year evidence:

   ``score = title + 0.10·author_overlap (or −0.12 when both author lists are known and share
   nobody) + year term (+0.03 same, 0 for ±1, −0.15 for 2, −0.30 beyond)``, with −0.20 more for a
   short title (≤ 2 content words) that no shared author backs. Author lists are compared by
   surname + first initial (``M Rusinkiewicz`` = ``Marek Rusinkiewicz``), as overlap over the
   shorter list, so ``et al.`` truncation does not count against a pair.
5. **Decision.** A pair with ``score ≥ 0.85`` and no title veto is a match edge. A vetoed pair
   (``dynamic`` vs ``static`` in otherwise identical titles) becomes a *cannot-link*.
6. **Clustering** (``clustering.py``). Identifier edges first, then title edges strongest first,
   through a union-find that refuses merges across a cannot-link, across different identifiers,
   that would spread a cluster's years over more than ``MAX_YEAR_SPAN`` (title evidence only),
   and — with ``one_to_one_between`` — between two records of the same source (so each record
   links at most one record per other source, best score first).
7. **Review queue.** Candidate pairs left in different papers whose score lies in
   ``[0.65, 0.85)``, or that a veto or identifier conflict kept apart although their titles are
   close (title score ≥ 0.8), one row per pair of papers — the pairs a person should look at.

Modules: ``paper_features`` (steps 1-2's inputs: identifiers, title keys, author keys, the
collapse), ``paper_series`` (series titles and catalogues), ``paper_scoring`` (steps 3-5),
``title_diffs`` (the title diff over many pairs, cached between nights), ``titles`` (the diff
itself); this module clusters (steps 6-7) and holds the public API.

Deterministic: rows are sorted by ``record_id`` first, keys and ties are ordered by value, so the
same input in any row order gives the same clusters, ids and review rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from pipelines.core.resolution.blocking import star_pairs
from pipelines.core.resolution.clustering import ConstrainedUnionFind
from pipelines.core.resolution.paper_features import (PaperFeatures, collapse, node_features, normalize_arxiv_id,
                                                      normalize_doi, prepare_features)
from pipelines.core.resolution.paper_scoring import MATCH_THRESHOLD, REVIEW_LOW, candidate_pairs, score_pairs
from pipelines.core.resolution.paper_series import CATALOGUE_MAX_SELF_SHARE, MAX_YEAR_SPAN, catalogue_sources
from pipelines.core.resolution.review import REVIEW_SCHEMA, review_queue
from pipelines.core.resolution.runtime import without_cycle_collection
from pipelines.core.resolution.title_diffs import TITLE_DIFF_SCHEMA, TitleDiffCache, compare_many

__all__ = ["ASSIGNMENT_SCHEMA", "CATALOGUE_MAX_SELF_SHARE", "CandidateGraph", "MATCH_THRESHOLD", "MAX_YEAR_SPAN",
           "REVIEW_LOW", "TITLE_DIFF_SCHEMA", "TitleDiffCache", "candidate_graph", "compare_many", "match_papers",
           "normalize_arxiv_id", "normalize_doi", "paper_review_pairs", "resolve_papers"]

REVIEW_VETO_TITLE = 0.8
METHOD_PRIORITY = {"arxiv_id": 4, "doi": 3, "title_exact": 2, "title_fuzzy": 1, "singleton": 0}

ASSIGNMENT_SCHEMA = {"record_id": pl.String, "paper_id": pl.String, "method": pl.String, "score": pl.Float64}


def _identifier_edges(feats: PaperFeatures) -> pl.DataFrame:
    n = len(feats.record_ids)
    idx = np.arange(n, dtype=np.int64)
    parts = []
    for method, values in (("arxiv_id", feats.arxiv), ("doi", feats.doi)):
        star = star_pairs(pl.DataFrame({"idx": idx, "label": values}, schema={"idx": pl.Int64, "label": pl.String}))
        parts.append(star.with_columns(pl.lit(method).alias("method"), pl.lit(1.0).alias("score")))
    return pl.concat(parts)


@dataclass
class _Resolution:
    roots: list[int]
    scored: pl.DataFrame
    edges: pl.DataFrame  # accepted edges (identifier and title) with method, score
    refused: pl.DataFrame  # accepted title edges a constraint kept apart, with the reason


def _resolve(feats: PaperFeatures, diffs_cache: TitleDiffCache | None = None, candidates: pl.DataFrame | None = None,
             workers: int | None = None, scored: pl.DataFrame | None = None) -> _Resolution:
    """Resolve the records: collapse them into nodes, resolve the nodes, and express the result
    per record (record indices throughout; a node's edges are its representative's).
    ``candidates`` (``left_id``, ``right_id``: representative record ids, see
    :func:`candidate_graph`): the title candidate pairs to score instead of blocking these
    records on their own."""
    reps, node_of = collapse(feats)
    pairs = None
    if candidates is not None:
        node_index = pl.DataFrame({"rid": [feats.record_ids[r] for r in reps.tolist()],
                                   "node": np.arange(len(reps), dtype=np.int64)}, schema={"rid": pl.String, "node": pl.Int64})
        pairs = (
            candidates.select(pl.col("left_id").cast(pl.String), pl.col("right_id").cast(pl.String))
            .join(node_index.rename({"rid": "left_id", "node": "i"}), on="left_id")
            .join(node_index.rename({"rid": "right_id", "node": "j"}), on="right_id")
            .select(i=pl.min_horizontal("i", "j"), j=pl.max_horizontal("i", "j"))
            .filter(pl.col("i") != pl.col("j")).unique().sort("i", "j")
        )
    if len(reps) == len(feats.record_ids):
        return _resolve_nodes(feats, diffs_cache, pairs, workers, scored)
    res = _resolve_nodes(node_features(feats, reps, node_of), diffs_cache, pairs, workers, scored)
    rep = pl.Series(reps)

    def to_records(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.with_columns(rep.gather(frame["i"]).alias("i"), rep.gather(frame["j"]).alias("j"))

    roots = reps[np.asarray(res.roots, dtype=np.int64)][node_of]
    # Each record joins its node's representative by the strongest evidence they share.
    idx = np.arange(len(node_of), dtype=np.int64)
    inside = idx != reps[node_of]
    member = idx[inside]
    head = reps[node_of[inside]]
    methods = [
        "arxiv_id" if feats.arxiv[i] else "doi" if feats.doi[i] else "title_exact" for i in member.tolist()
    ]
    intra = pl.DataFrame(
        {"i": head, "j": member, "method": methods, "score": np.ones(len(member))},
        schema={"i": pl.Int64, "j": pl.Int64, "method": pl.String, "score": pl.Float64},
    )
    return _Resolution(
        roots=roots.tolist(),
        scored=to_records(res.scored),
        edges=pl.concat([to_records(res.edges).cast(intra.schema), intra]),
        refused=to_records(res.refused),
    )


def _resolve_nodes(feats: PaperFeatures, diffs_cache: TitleDiffCache | None = None, pairs: pl.DataFrame | None = None,
                   workers: int | None = None, scored: pl.DataFrame | None = None) -> _Resolution:
    """``scored`` (optional): the candidate pairs already scored (``score_pairs``' rows, in (i, j)
    order; resolution/shards.py scores them in shards), so only the clustering runs here."""
    n = len(feats.record_ids)
    if scored is None:
        scored = score_pairs(feats, candidate_pairs(feats) if pairs is None else pairs, diffs_cache, workers)
    id_edges = _identifier_edges(feats)
    uf = ConstrainedUnionFind(
        n,
        exclusive={"arXiv id": feats.arxiv, "DOI": feats.doi},
        groups=feats.groups,
        spans={"year": (feats.years, MAX_YEAR_SPAN)},
    )
    for i, j, method in id_edges.select("i", "j", "method").iter_rows():
        # A shared identifier holds across any years; a shared arXiv id across differing DOIs too
        # (one version family: the preprint's and the published versions' DOIs).
        uf.union(i, j, spans=False, ignore=("DOI",) if method == "arxiv_id" else ())
    vetoed = scored.filter(pl.col("veto").is_not_null())
    uf.add_cannot_links(vetoed.select("i", "j").iter_rows())
    title_edges = (
        scored.filter(pl.col("veto").is_null() & (pl.col("score") >= MATCH_THRESHOLD))
        .with_columns(pl.col("method").replace_strict(METHOD_PRIORITY, return_dtype=pl.Int64).alias("_prio"))
        .sort(["score", "_prio", "i", "j"], descending=[True, True, False, False])
    )
    refused: list[tuple[int, int, str]] = []
    for i, j in title_edges.select("i", "j").iter_rows():
        ri, rj = uf.find(i), uf.find(j)
        if ri == rj:
            continue
        reason = uf.conflict(ri, rj)
        if reason is None:
            uf.union(i, j)
        elif reason != "same group":
            refused.append((i, j, reason))
    edges = pl.concat([id_edges, title_edges.select("i", "j", "method", "score")])
    refused_df = pl.DataFrame(refused, schema={"i": pl.Int64, "j": pl.Int64, "reason": pl.String}, orient="row")
    return _Resolution(uf.roots(), scored, edges, refused_df)


def _assignments(feats: PaperFeatures, res: _Resolution) -> pl.DataFrame:
    n = len(feats.record_ids)
    ids = pl.Series("record_id", feats.record_ids, dtype=pl.String)
    roots = pl.Series("root", res.roots, dtype=pl.Int64)
    # paper_id = smallest record_id in the cluster; rows are sorted by record_id, so the min index.
    cluster_min = pl.DataFrame({"idx": np.arange(n, dtype=np.int64), "root": roots}).with_columns(
        pl.col("idx").min().over("root").alias("first")
    )
    paper_id = ids.gather(cluster_min["first"])
    edges = res.edges.with_columns(
        roots.gather(res.edges["i"]).alias("ri"), roots.gather(res.edges["j"]).alias("rj")
    ).filter(pl.col("ri") == pl.col("rj"))
    ends = pl.concat([edges.select(pl.col("i").alias("idx"), "method", "score"), edges.select(pl.col("j").alias("idx"), "method", "score")])
    best = (
        ends.with_columns(pl.col("method").replace_strict(METHOD_PRIORITY, return_dtype=pl.Int64).alias("_prio"))
        .sort(["idx", "_prio", "score"], descending=[False, True, True])
        .group_by("idx", maintain_order=True)
        .first()
    )
    out = (
        pl.DataFrame({"idx": np.arange(n, dtype=np.int64), "record_id": ids, "paper_id": paper_id})
        .join(best.select("idx", "method", "score"), on="idx", how="left")
        .with_columns(pl.col("method").fill_null("singleton"), pl.col("score").fill_null(1.0))
        .sort("idx")
        .select(list(ASSIGNMENT_SCHEMA))
    )
    return out.cast(ASSIGNMENT_SCHEMA)


def _review(feats: PaperFeatures, res: _Resolution, cluster_of: list[str]) -> pl.DataFrame:
    clusters = pl.Series(cluster_of, dtype=pl.String)
    scored = res.scored.join(res.refused, on=["i", "j"], how="left")
    borderline = pl.col("veto").is_null() & (pl.col("score") >= REVIEW_LOW) & (pl.col("score") < MATCH_THRESHOLD)
    kept_apart = (pl.col("veto").is_not_null() | pl.col("reason").is_not_null()) & (pl.col("title_score") >= REVIEW_VETO_TITLE)
    queued = scored.with_columns(
        clusters.gather(scored["i"]).alias("ci"), clusters.gather(scored["j"]).alias("cj")
    ).filter((pl.col("ci") != pl.col("cj")) & (borderline | kept_apart))
    rows = []
    for r in queued.iter_rows(named=True):
        ci, cj = r["ci"], r["cj"]
        i, j = r["i"], r["j"]
        evidence_for = [f"title {r['title_score']:.2f} ({r['detail']})" if r["veto"] is None else f"title {r['title_score']:.2f}"]
        against = []
        if r["veto"]:
            against.append(f"titles differ: {r['veto']}")
        if r["reason"]:
            against.append(f"{r['reason']} between the two papers")
        if r["author_overlap"] is not None:
            if r["shared_authors"]:
                evidence_for.append(f"{r['shared_authors']} shared author(s)")
            else:
                against.append("no shared author")
        else:
            against.append("no author list to compare")
        if r["year_diff"] is not None:
            (evidence_for if r["year_diff"] <= 1 else against).append(f"years {feats.years[i]} / {feats.years[j]}")
        if feats.arxiv[i] and feats.arxiv[j] and feats.arxiv[i] != feats.arxiv[j]:
            against.append(f"arXiv {feats.arxiv[i]} vs {feats.arxiv[j]}")
        elif feats.doi[i] and feats.doi[j] and feats.doi[i] != feats.doi[j]:
            against.append(f"DOI {feats.doi[i]} vs {feats.doi[j]}")
        left, right = (i, j) if ci < cj else (j, i)
        rows.append(
            {
                "left_id": feats.record_ids[left],
                "right_id": feats.record_ids[right],
                "left_label": feats.titles[left],
                "right_label": feats.titles[right],
                "score": r["score"],
                "evidence_for": "; ".join(evidence_for),
                "evidence_against": "; ".join(against) or "score below the match threshold",
                "left_cluster": cluster_of[left],
                "right_cluster": cluster_of[right],
            }
        )
    return review_queue(rows)


@dataclass
class CandidateGraph:
    """Who the matcher could compare with whom, from the titles alone (see :func:`candidate_graph`)."""

    nodes: pl.DataFrame  # record_id, node_id: the representative record of its collapsed node
    pairs: pl.DataFrame  # left_id, right_id: candidate pairs of representatives (left < right)
    identifiers: pl.DataFrame  # record_id, label: normalised arXiv id ("arxiv:") or DOI ("doi:")


def candidate_graph(records: pl.DataFrame) -> CandidateGraph:
    """The collapsed nodes and the title candidate pairs the matcher forms for ``records`` —
    the same blocking as :func:`resolve_papers` (keys, rarity and oversize blocks over all the
    records), without reading author lists or scoring anything. An incremental night uses it to
    find every record a changed one could be compared with, and hands the pairs among the
    re-resolved subset to ``resolve_papers(candidates=...)``."""
    if records.height == 0:
        empty = pl.DataFrame(schema={"record_id": pl.String, "node_id": pl.String})
        return CandidateGraph(empty, pl.DataFrame(schema={"left_id": pl.String, "right_id": pl.String}),
                              pl.DataFrame(schema={"record_id": pl.String, "label": pl.String}))
    feats = prepare_features(records, None, with_authors=False)
    reps, node_of = collapse(feats)
    record_ids = pl.Series(feats.record_ids, dtype=pl.String)
    rep_ids = record_ids.gather(reps)
    nodes = pl.DataFrame({"record_id": record_ids, "node_id": rep_ids.gather(node_of)})
    node_feats = feats if len(reps) == len(feats.record_ids) else node_features(feats, reps, node_of)
    pairs = candidate_pairs(node_feats)
    pairs = pl.DataFrame({"left_id": rep_ids.gather(pairs["i"]), "right_id": rep_ids.gather(pairs["j"])},
                         schema={"left_id": pl.String, "right_id": pl.String})
    identifiers = pl.concat([
        pl.DataFrame({"record_id": record_ids, "label": pl.Series(feats.arxiv, dtype=pl.String)})
        .drop_nulls().with_columns(pl.concat_str(pl.lit("arxiv:"), "label").alias("label")),
        pl.DataFrame({"record_id": record_ids, "label": pl.Series(feats.doi, dtype=pl.String)})
        .drop_nulls().with_columns(pl.concat_str(pl.lit("doi:"), "label").alias("label")),
    ])
    return CandidateGraph(nodes, pairs, identifiers)


def _resolve_records(records: pl.DataFrame, one_to_one_between: str | None, catalogues: str | tuple[str, ...],
                     title_diffs: TitleDiffCache | None = None, candidates: pl.DataFrame | None = None,
                     workers: int | None = None) -> tuple[PaperFeatures, _Resolution]:
    """Features and resolution of ``records``; when some sources are catalogues (named, or judged
    from a first clustering with ``"auto"``), resolved again with their records kept apart."""
    feats = prepare_features(records, one_to_one_between)
    if not catalogues or one_to_one_between is not None or candidates is not None:
        return feats, _resolve(feats, title_diffs, candidates, workers)
    diffs = title_diffs if title_diffs is not None else TitleDiffCache()
    res = _resolve(feats, diffs, None, workers)
    listed_once = set(catalogue_sources(feats, res.roots) if catalogues == "auto" else catalogues)
    if listed_once:
        # The second clustering compares the same titles: it reuses the first one's diffs.
        feats = replace(feats, groups=[s if s in listed_once else None for s in feats.sources])
        res = _resolve(feats, TitleDiffCache(diffs.frame()), None, workers)
    return feats, res


@without_cycle_collection
def resolve_papers(
    records: pl.DataFrame, *, one_to_one_between: str | None = None, title_diffs: TitleDiffCache | None = None,
    candidates: pl.DataFrame | None = None, workers: int | None = None, catalogues: str | tuple[str, ...] = "auto",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Match records into papers; return ``(assignments, review)``.

    ``assignments``: ``record_id, paper_id, method, score`` (see :func:`match_papers`).
    ``review``: borderline or vetoed candidate pairs that were not merged; ``left_id``/``right_id``
    are record ids, ``left_cluster``/``right_cluster`` their paper ids.
    ``title_diffs``: diffs of earlier runs to reuse (and to collect this run's into); the result
    is the same with or without it.
    ``candidates``: the title candidate pairs (``left_id``, ``right_id``), as :func:`candidate_graph`
    gives them for a larger set of records these are part of (incremental nights: blocking on the
    whole corpus, not on the subset). Without it, the records are blocked on their own.
    ``workers``: processes that diff title pairs (the setting ``SCHOLARHOUSE_MATCH_WORKERS``; by
    default one per core, at most 8).
    ``catalogues``: the ``source`` values that list each work once, whose records never merge with
    one another (see ``CATALOGUE_MAX_SELF_SHARE``): ``"auto"`` judges them from a first clustering,
    ``()`` names none (the pipeline's own sources are profile pages, which repeat a paper).
    """
    if candidates is not None and one_to_one_between is not None:
        # candidate_graph collapses records, which one-to-one linkage does not
        raise ValueError("candidates cannot be combined with one_to_one_between")
    if records.height == 0:
        return pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA)
    feats, res = _resolve_records(records, one_to_one_between, catalogues, title_diffs, candidates, workers)
    assignments = _assignments(feats, res)
    review = _review(feats, res, assignments["paper_id"].to_list())
    return assignments, review


def match_papers(records: pl.DataFrame, *, one_to_one_between: str | None = None, workers: int | None = None,
                 catalogues: str | tuple[str, ...] = "auto") -> pl.DataFrame:
    """One row per record: ``record_id``, ``paper_id``, ``method``, ``score``.

    Records sharing a ``paper_id`` are one paper; ``paper_id`` is the smallest ``record_id`` of
    the cluster. ``method`` is the strongest evidence that put the record in its cluster
    (``arxiv_id`` | ``doi`` | ``title_exact`` | ``title_fuzzy``, or ``singleton`` when alone, with
    score 1.0). ``one_to_one_between='source'`` links clean sources: a record joins at most one
    record of each other source value, and records of one source are never merged together.
    Without it, a ``source`` that lists each work once (a catalogue, judged from the data; see
    ``catalogues`` in :func:`resolve_papers`) still never has two of its records merged.
    """
    return resolve_papers(records, one_to_one_between=one_to_one_between, workers=workers, catalogues=catalogues)[0]


@without_cycle_collection
def paper_review_pairs(records: pl.DataFrame, result: pl.DataFrame, *, one_to_one_between: str | None = None,
                       catalogues: str | tuple[str, ...] = "auto") -> pl.DataFrame:
    """The review queue for ``records`` as clustered in ``result`` (``record_id``, ``paper_id``).

    ``result`` may differ from what :func:`match_papers` returned (manual overrides applied):
    only pairs that ``result`` keeps in different papers are listed.
    """
    if records.height == 0:
        return pl.DataFrame(schema=REVIEW_SCHEMA)
    feats, res = _resolve_records(records, one_to_one_between, catalogues)
    mapping = dict(zip(result["record_id"].cast(pl.String).to_list(), result["paper_id"].cast(pl.String).to_list()))
    cluster_of = [mapping.get(rid, rid) for rid in feats.record_ids]
    return _review(feats, res, cluster_of)

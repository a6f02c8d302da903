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

Deterministic: rows are sorted by ``record_id`` first, keys and ties are ordered by value, so the
same input in any row order gives the same clusters, ids and review rows.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import polars as pl
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, Levenshtein

from pipelines.core.resolution.blocking import empty_pairs, pairs_from_keys, star_pairs
from pipelines.core.resolution.clustering import ConstrainedUnionFind
from pipelines.core.resolution.review import REVIEW_SCHEMA, review_queue
from pipelines.core.resolution.runtime import map_in_processes, match_workers, without_cycle_collection
from pipelines.core.resolution.names import name_forms, split_author_list
from pipelines.core.resolution.titles import STOPWORDS, TitleComparison, compare_titles, content_tokens, title_parts, title_tokens
from pipelines.textnorm import match_key

MATCH_THRESHOLD = 0.85
REVIEW_LOW = 0.65
REVIEW_VETO_TITLE = 0.8
# Candidate screen: pairs below this character similarity of their title keys are diffed only
# if their token sets agree (SCREEN_TOKEN_SIMILARITY; SCREEN_TOKEN_SIMILARITY_SHORTER when one
# title is much shorter: a truncated title, a dropped subtitle). Measured on 750k synthetic
# candidate pairs: the screen passes every pair that matched under a looser screen (0.7 / 0.8)
# and 98% of the review-queue pairs, and sends 3x fewer pairs to the Python diff.
SCREEN_SIMILARITY = 0.8
SCREEN_TOKEN_SIMILARITY = 0.85
SCREEN_TOKEN_SIMILARITY_SHORTER = 0.8
# Below this even a title that contains the other is too unlike it (length ratio beyond ~1:5).
SCREEN_FLOOR = 0.35
# Title score when one title equals the main title or subtitle of the other.
SUBTITLE_SCORE = 0.9
YEAR_PENALTY_2 = -0.15
YEAR_PENALTY_FAR = -0.30
# Title evidence never makes a paper whose records' years spread over more than this; an
# identifier (arXiv id, DOI) may (a 2019 preprint and its 2022 journal version).
MAX_YEAR_SPAN = 2
# Blocks larger than this are not expanded in full; their rows meet their BLOCK_WINDOW neighbours.
BLOCK_MAX = 50
BLOCK_WINDOW = 6
# Title pairs to diff before the diff runs in worker processes (starting them costs ~1 s).
PARALLEL_DIFF_MIN = 20_000
METHOD_PRIORITY = {"arxiv_id": 4, "doi": 3, "title_exact": 2, "title_fuzzy": 1, "singleton": 0}

ASSIGNMENT_SCHEMA = {"record_id": pl.String, "paper_id": pl.String, "method": pl.String, "score": pl.Float64}

_ARXIV_NEW = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?$")
_ARXIV_OLD = re.compile(r"([a-z\-]+(?:\.[a-z]{2})?/\d{7})(v\d+)?$")


def normalize_arxiv_id(value: str | None) -> str | None:
    """``arXiv:2401.01234v2`` / ``https://arxiv.org/abs/2401.01234`` -> ``2401.01234``."""
    if not value:
        return None
    text = value.strip().lower()
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        m = pattern.search(text)
        if m:
            return m.group(1)
    return None


def normalize_doi(value: str | None) -> str | None:
    """Lower-case DOI without resolver prefix; ``None`` when it is not a DOI."""
    if not value:
        return None
    text = value.strip().lower()
    text = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", text)
    return text if text.startswith("10.") and "/" in text else None


@dataclass
class _Features:
    """Per-record features, aligned with the row index of the record_id-sorted frame."""

    record_ids: list[str]
    titles: list[str]
    tokens: list[tuple[str, ...]]
    keys: list[str]
    parts: list[tuple[str, ...]]
    n_content: list[int]
    author_sets: list[list[frozenset[str]]]
    author_union: list[frozenset[str]]
    author_families: list[frozenset[str]]
    # Every word (3+ letters) of every name as written, glued forms included ("HinneburgA",
    # "J Cho andH"): what a garbled list still says (see _garbled_lists).
    author_words: list[frozenset[str]]
    years: list[int | None]
    arxiv: list[str | None]
    doi: list[str | None]
    groups: list[str | None] | None
    # Records whose title recurs as a series (the key in three or more distinct years, or spread
    # over more than MAX_YEAR_SPAN): "Editor's Notes", "Book Review Column" (see _series_keys).
    series: list[bool] | None = None
    sources: list[str | None] | None = None
    # A node some of whose records carry no author list: author lists that share nobody are no
    # evidence against it (the record without a list would not have been penalised).
    authors_partial: list[bool] | None = None


def _column_or_null(df: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    return pl.col(name).cast(dtype, strict=False) if name in df.columns else pl.lit(None, dtype=dtype)


def _prepare(records: pl.DataFrame, one_to_one_between: str | None, *, with_authors: bool = True) -> _Features:
    """Per-record features, rows sorted by record_id. ``with_authors=False`` leaves every author
    list empty (the title side alone: what blocking and collapsing read)."""
    missing = {"record_id", "title"} - set(records.columns)
    if missing:
        raise ValueError(f"records lack columns: {sorted(missing)}")
    if one_to_one_between is not None and one_to_one_between not in records.columns:
        raise ValueError(f"one_to_one_between={one_to_one_between!r} is not a column of records")
    if "authors" in records.columns and records.schema["authors"] == pl.String:
        authors = pl.col("authors").map_elements(split_author_list, return_dtype=pl.List(pl.String))
    elif "authors" in records.columns:
        authors = pl.col("authors").cast(pl.List(pl.String)).fill_null([])
    else:
        authors = pl.lit([], dtype=pl.List(pl.String))
    df = records.select(
        pl.col("record_id").cast(pl.String),
        pl.col("title").cast(pl.String),
        authors.alias("authors"),
        _column_or_null(records, "year", pl.Int64).alias("year"),
        _column_or_null(records, "arxiv_id", pl.String).alias("arxiv_id"),
        _column_or_null(records, "doi", pl.String).alias("doi"),
        (_column_or_null(records, one_to_one_between, pl.String) if one_to_one_between else pl.lit(None, pl.String)).alias("_group"),
        _column_or_null(records, "source", pl.String).alias("_source"),
    ).sort("record_id")
    if df["record_id"].null_count():
        raise ValueError("record_id must not be null")
    if df["record_id"].n_unique() != df.height:
        raise ValueError("record_id must be unique")

    titles = [t or "" for t in df["title"].to_list()]
    # Titles and author lists repeat heavily (one paper listed on many profiles): every
    # per-string feature is computed once per distinct value.
    title_cache: dict[str, tuple[tuple[str, ...], str, tuple[str, ...], int]] = {}
    tokens, keys, parts, n_content = [], [], [], []
    for t in titles:
        f = title_cache.get(t)
        if f is None:
            tok = title_tokens(t)
            f = title_cache[t] = (tok, " ".join(tok), title_parts(t), sum(1 for w in tok if w not in STOPWORDS))
        tokens.append(f[0])
        keys.append(f[1])
        parts.append(f[2])
        n_content.append(f[3])
    author_cache: dict[tuple[str, ...], tuple[list[frozenset[str]], frozenset[str], frozenset[str], frozenset[str]]] = {}
    author_sets: list[list[frozenset[str]]] = []
    author_union: list[frozenset[str]] = []
    author_families: list[frozenset[str]] = []
    author_words: list[frozenset[str]] = []
    # Per distinct name: its keys ("family initial") and their family names alone (for garbled
    # lists, "RG ATV"); names repeat across many author lists.
    name_keys: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for names in (df["authors"].to_list() if with_authors else [()] * df.height):
        names_key = tuple(names or ())
        a = author_cache.get(names_key)
        if a is None:
            sets, families = [], []
            for n in names_key:
                forms = name_keys.get(n)
                if forms is None:
                    own = frozenset(name_forms(n)[2])
                    forms = name_keys[n] = (own, frozenset(k.rsplit(" ", 1)[0] for k in own))
                if forms[0]:
                    sets.append(forms[0])
                    families.append(forms[1])
            family_names = frozenset().union(*families)
            words = family_names | {w for n in names_key for w in match_key(n).split() if len(w) >= 3}
            a = author_cache[names_key] = (sets, frozenset().union(*sets), family_names, words)
        author_sets.append(a[0])
        author_union.append(a[1])
        author_families.append(a[2])
        author_words.append(a[3])
    arxiv = [normalize_arxiv_id(a) for a in df["arxiv_id"].to_list()]
    doi = []
    for i, d in enumerate(df["doi"].to_list()):
        nd = normalize_doi(d)
        if nd and nd.startswith("10.48550/arxiv."):
            arxiv[i] = arxiv[i] or normalize_arxiv_id(nd.split("arxiv.", 1)[1])
            nd = None
        doi.append(nd)
    feats = _Features(
        record_ids=df["record_id"].to_list(),
        titles=titles,
        tokens=tokens,
        keys=keys,
        parts=parts,
        n_content=n_content,
        author_sets=author_sets,
        author_union=author_union,
        author_families=author_families,
        author_words=author_words,
        years=df["year"].to_list(),
        arxiv=arxiv,
        doi=doi,
        groups=df["_group"].to_list() if one_to_one_between else None,
        series=_series_flags(keys, df["year"].to_list(), author_union, df["_source"].to_list()),
        sources=df["_source"].to_list(),
    )
    return feats


SERIES_VETO = "a series title (it recurs over the years by other people): years apart, or no shared author"
# A title key seen in this many distinct years (or spread wider than MAX_YEAR_SPAN) is a series.
SERIES_MIN_YEARS = 3


def _series_flags(keys: list[str], years: list[int | None], authors: list[frozenset[str]],
                  sources: list[str | None]) -> list[bool]:
    """Per record, whether its title recurs as a series in this input: one source lists the same
    title key more than once, over at least ``SERIES_MIN_YEARS`` distinct years (or years more
    than ``MAX_YEAR_SPAN`` apart), by different people (two of its records list authors and share
    none). One paper's records lie within a couple of years, keep their authors when a citation
    gets the year wrong, and a source lists it once; a column that appears every issue under
    changing editors ("Editor's Notes", "Reminiscences on Influential Papers") does none of this.
    Two records of a series title are never one paper when their years are two or more apart or
    their author lists share nobody. Without a ``source`` column (one list of citations) no title
    is a series."""
    years_of: dict[str, set[int]] = {}
    lists_of: dict[str, list[frozenset[str]]] = {}
    per_source: dict[tuple[str, str], int] = {}
    repeated: set[str] = set()
    for key, year, names, source in zip(keys, years, authors, sources):
        if not key or source is None:
            continue
        per_source[(key, source)] = per_source.get((key, source), 0) + 1
        if per_source[(key, source)] > 1:
            repeated.add(key)
        if year is not None:
            years_of.setdefault(key, set()).add(year)
        if names:
            lists_of.setdefault(key, []).append(names)
    series = set()
    for key, ys in years_of.items():
        if key not in repeated:
            continue
        if len(ys) < SERIES_MIN_YEARS and max(ys) - min(ys) <= MAX_YEAR_SPAN:
            continue
        lists = list(dict.fromkeys(lists_of.get(key, [])))
        if any(a.isdisjoint(b) for x, a in enumerate(lists) for b in lists[x + 1:]):
            series.add(key)
    return [bool(key) and key in series for key in keys]


# A source that shows (almost) every distinctive title once is a catalogue — a bibliography such as
# DBLP or the ACM library, not profile pages or citation lists that repeat a work: two of its own
# records are two works ("Editor's Notes" of 2001 and of 2002, one editor's three "Chair's
# Message" of one year), whatever their titles say. Measured on the first clustering: of the
# source's records with at least CATALOGUE_MIN_CONTENT content words (titles nobody repeats by
# chance), at most CATALOGUE_MAX_SELF_SHARE share a paper with another record of the source of the
# same year (or without a year), among at least CATALOGUE_MIN_RECORDS such records. Records of one
# work in different years are the catalogue's own versions (a conference paper and its journal
# version are two entries of DBLP and of the ACM library), not repeats. Forbidding its records to
# merge with one another costs at most that share of its records, the bound the rule measures.
# Measured (share of repeats): DBLP 0.11 % and Google Scholar 1.57 % on DBLP-Scholar; ACM 0.40 %
# and DBLP 0.71 % on DBLP-ACM.
CATALOGUE_MIN_RECORDS = 200
CATALOGUE_MIN_CONTENT = 5
CATALOGUE_MAX_SELF_SHARE = 0.01


def _catalogue_sources(feats: _Features, roots: list[int]) -> list[str]:
    """The sources of ``feats`` that list each work once, judged from the clustering ``roots``."""
    if not feats.sources:
        return []
    # Per (source, cluster): how many of its records carry each year (None: no year).
    years_of: dict[tuple[str, int], Counter] = {}
    for source, root, year in zip(feats.sources, roots, feats.years):
        if source is not None:
            years_of.setdefault((source, root), Counter())[year] += 1
    distinctive: dict[str, int] = {}
    repeated: dict[str, int] = {}
    for source, root, words, year in zip(feats.sources, roots, feats.n_content, feats.years):
        if source is None or words < CATALOGUE_MIN_CONTENT:
            continue
        distinctive[source] = distinctive.get(source, 0) + 1
        years = years_of[(source, root)]
        # Another record of the source in the cluster, of this year or either without one.
        same_year = years[year] - 1 + (years[None] if year is not None else sum(years.values()) - years[None])
        if same_year > 0:
            repeated[source] = repeated.get(source, 0) + 1
    return sorted(s for s, n in distinctive.items()
                  if n >= CATALOGUE_MIN_RECORDS and repeated.get(s, 0) <= CATALOGUE_MAX_SELF_SHARE * n)


def _blocking_keys(feats: _Features) -> pl.DataFrame:
    """Long table ``(idx, key, title_key)`` of title blocking keys (flat lists: fast to load)."""
    idx_col: list[int] = []
    key_col: list[str] = []
    word_idx: list[int] = []
    word_col: list[str] = []
    for i, (tokens, key, parts) in enumerate(zip(feats.tokens, feats.keys, feats.parts)):
        if not key:
            continue
        content = [w for w in tokens if w not in STOPWORDS] or list(tokens)
        glued = "".join(tokens)
        # Whole title and each part (a record may keep only the main title); first and last
        # three content words; the first/last letters without spaces (glued words).
        keys = ["x|" + key, *("x|" + p for p in parts), "p|" + " ".join(content[:3]), "s|" + " ".join(content[-3:])]
        if len(glued) >= 20:
            keys += ["c|" + glued[:16], "e|" + glued[-16:]]
        idx_col += [i] * len(keys)
        key_col += keys
        unique_words = set(content)
        word_idx += [i] * len(unique_words)
        word_col += unique_words
    fixed = pl.DataFrame({"idx": idx_col, "key": key_col}, schema={"idx": pl.Int64, "key": pl.String})
    words = pl.DataFrame({"idx": word_idx, "word": word_col}, schema={"idx": pl.Int64, "word": pl.String})
    df_words = words.group_by("word").agg(pl.len().alias("df"))
    # Pairs of the four rarest words; a word seen in one record only cannot pair it with anything.
    rare = (
        words.join(df_words.filter(pl.col("df") > 1), on="word")
        .sort("idx", "df", "word")
        .group_by("idx", maintain_order=True)
        .head(4)
    )
    rare_pairs = (
        rare.join(rare, on="idx", suffix="_r")
        .filter(pl.col("word") < pl.col("word_r"))
        .select("idx", ("r|" + pl.col("word") + " " + pl.col("word_r")).alias("key"))
    )
    title_keys = pl.DataFrame({"idx": np.arange(len(feats.keys), dtype=np.int64), "title_key": feats.keys})
    return pl.concat([fixed, rare_pairs]).join(title_keys, on="idx", how="left")


def _candidate_pairs(feats: _Features) -> pl.DataFrame:
    if not feats.tokens:
        return empty_pairs()
    # Inside an oversize block, rows sorted by their whole title key put near-identical titles
    # next to each other (classic sorted neighbourhood).
    pairs = pairs_from_keys(_blocking_keys(feats), max_block=BLOCK_MAX, window=BLOCK_WINDOW, order_by=["title_key"])
    if feats.groups is not None and pairs.height:
        # One-to-one linkage: two records of one source are never compared.
        groups = pl.Series(feats.groups, dtype=pl.String)
        same = pairs.with_columns(gi=groups.gather(pairs["i"]), gj=groups.gather(pairs["j"]))
        pairs = same.filter(pl.col("gi").is_null() | pl.col("gj").is_null() | (pl.col("gi") != pl.col("gj"))).select("i", "j")
    return pairs


def _author_overlap(a: list[frozenset[str]], b: list[frozenset[str]], ua: frozenset[str], ub: frozenset[str]) -> tuple[int, float | None]:
    """(shared names, share of the shorter list) — None when either list is empty."""
    if not a or not b:
        return 0, None
    if len(a) <= len(b):
        shared = sum(1 for keys in a if not keys.isdisjoint(ub))
    else:
        shared = sum(1 for keys in b if not keys.isdisjoint(ua))
    return shared, shared / min(len(a), len(b))


GARBLED_LIST_MAX_NAMES = 10  # longer lists are a byline, not a scraped citation's few names


def _garbled_lists(families: frozenset[str], words: frozenset[str]) -> bool:
    """Whether a family name of one list is legible among the other list's words although no
    name matched: the very word, glued to an initial or two or to the next name (``hinneburg`` in
    ``hinneburga``, ``chaudhuri`` in ``chaudhuriandv``; family names of five letters or more, so
    ``chen`` is not found in ``cheng``), or misspelt by a letter in seven or more letters, two in
    nine or more (``gravano``/``fravano``, ``mylopoulos``/``myopoulos``; not ``zhang``/``chang``)."""
    for f in families:
        if len(f) < 3:
            continue
        if f in words:
            return True
        if len(f) < 5:
            continue
        for w in words:
            if len(w) > len(f) and f in w:
                rest = w.replace(f, "", 1)
                if len(rest) <= 2 or (rest.startswith("and") and len(rest) <= 5):
                    return True
            if len(f) >= 7 and abs(len(w) - len(f)) <= 2:
                if Levenshtein.distance(f, w, score_cutoff=2) <= (2 if min(len(f), len(w)) >= 9 else 1):
                    return True
    return False


def _combine(title: np.ndarray, overlap: np.ndarray, year_diff: np.ndarray, min_content: np.ndarray) -> np.ndarray:
    """Pair scores from their evidence, vectorised (``overlap``/``year_diff`` NaN when unknown):

    title + year term (+0.03 same year, 0 for ±1, −0.15 for 2, −0.30 beyond) + 0.10·author
    overlap (−0.12 when both lists are known and share nobody), −0.20 for a short title that no
    shared author backs; clipped to [0, 1], rounded to 4 places."""
    year_term = np.select(
        [np.isnan(year_diff), year_diff == 0, year_diff == 1, year_diff == 2],
        [0.0, 0.03, 0.0, YEAR_PENALTY_2],
        default=YEAR_PENALTY_FAR,
    )
    score = title + year_term
    known = ~np.isnan(overlap)
    backed = known & (overlap > 0)
    score = np.where(backed, score + 0.10 * np.where(backed, overlap, 0.0), np.where(known, score - 0.12, score))
    score = np.where((min_content <= 2) & ~backed, score - 0.20, score)  # "Introduction": the title alone identifies nothing
    return np.round(np.clip(score, 0.0, 1.0), 4)


# Candidate pairs screened per batch: the screen's string lists stay bounded at any corpus size.
SCREEN_BATCH = 2_000_000


def _screen(keys: list[str], I: np.ndarray, J: np.ndarray) -> np.ndarray:
    """Positions of the candidate pairs worth a title diff.

    Character similarity of the title keys; pairs in the grey zone get a second chance if their
    token sets agree (a truncated or extended title, a dropped subtitle)."""
    lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
    out = []
    for start in range(0, len(I), SCREEN_BATCH):
        bi, bj = I[start : start + SCREEN_BATCH], J[start : start + SCREEN_BATCH]
        left = [keys[i] for i in bi.tolist()]
        right = [keys[j] for j in bj.tolist()]
        sim = process.cpdist(left, right, scorer=Indel.normalized_similarity, workers=-1)
        keep = sim >= SCREEN_SIMILARITY
        li, lj = lengths[bi], lengths[bj]
        length_ratio = np.minimum(li, lj) / np.maximum(np.maximum(li, lj), 1)
        # Grey zone: a much shorter title (truncated, subtitle dropped) or a fairly similar one
        # (reordered words, an acronym spelled out); similar-length titles with little in common
        # are not worth a look.
        shorter = length_ratio < 0.75
        grey = np.flatnonzero((sim >= SCREEN_FLOOR) & ~keep & (shorter | (sim >= 0.55)))
        if grey.size:
            gl, gr = [left[k] for k in grey.tolist()], [right[k] for k in grey.tolist()]
            # A title that is a prefix or a part of the other has a token-set similarity of 1.
            token_sim = process.cpdist(gl, gr, scorer=fuzz.token_set_ratio, workers=-1) / 100.0
            keep[grey] = token_sim >= np.where(shorter[grey], SCREEN_TOKEN_SIMILARITY_SHORTER, SCREEN_TOKEN_SIMILARITY)
        keep &= (li > 0) & (lj > 0)
        out.append(np.flatnonzero(keep) + start)
    return np.concatenate(out) if out else np.empty(0, dtype=np.int64)


def _dense_ids(values: list, key=lambda v: v) -> tuple[np.ndarray, list]:
    """(id of each value, the distinct values in order of first appearance)."""
    ids: dict = {}
    distinct: list = []
    out = np.empty(len(values), dtype=np.int64)
    for n, v in enumerate(values):
        k = key(v)
        d = ids.get(k)
        if d is None:
            d = ids[k] = len(distinct)
            distinct.append(v)
        out[n] = d
    return out, distinct


def _distinct_pairs(a: np.ndarray, b: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(position of the first occurrence of each distinct (a, b) pair, pair index of every row)."""
    _, first, inverse = np.unique(a * size + b, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _score_pairs(feats: _Features, pairs: pl.DataFrame, diffs_cache: TitleDiffCache | None = None,
                 workers: int | None = None) -> pl.DataFrame:
    """Score title candidates: one row per surviving pair with the evidence behind its score.

    Columnar: the title diff runs once per distinct pair of title keys and the author overlap
    once per distinct pair of author lists; the score is combined over arrays."""
    schema = {
        "i": pl.Int64, "j": pl.Int64, "method": pl.String, "score": pl.Float64, "title_score": pl.Float64,
        "veto": pl.String, "detail": pl.String, "shared_authors": pl.Int64, "author_overlap": pl.Float64,
        "year_diff": pl.Int64,
    }
    if pairs.height == 0:
        return pl.DataFrame(schema=schema)
    # Cheap vectorised screen over all candidates; only survivors reach the Python diff.
    I, J = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    survivors = _screen(feats.keys, I, J)
    I, J = I[survivors], J[survivors]
    if I.size == 0:
        return pl.DataFrame(schema=schema)

    # ---- titles: one comparison per distinct pair of title keys and whether one title is a part
    # of the other (a node's parts follow its punctuation, not only its key): a pair's title score
    # depends on its two nodes alone, never on which other pairs were compared.
    key_of, distinct_keys = _dense_ids(feats.keys)
    part_hit = np.fromiter(
        (feats.keys[i] in feats.parts[j] or feats.keys[j] in feats.parts[i] for i, j in zip(I.tolist(), J.tolist())),
        dtype=np.int64, count=I.size)
    first, title_pair = _distinct_pairs(key_of[I] * 2 + part_hit, key_of[J], len(distinct_keys))
    t_score = np.empty(first.size)
    t_veto: list[str | None] = [None] * first.size
    t_detail: list[str] = [""] * first.size
    todo: list[int] = []
    for d, k in enumerate(first.tolist()):
        i, j = int(I[k]), int(J[k])
        ki, kj = feats.keys[i], feats.keys[j]
        if ki == kj:
            t_score[d], t_detail[d] = 1.0, "identical title"
        elif part_hit[k]:
            # One record kept only the main title (or only the subtitle) of the other.
            shorter = ki if len(ki) < len(kj) else kj
            n_words = len(content_tokens(shorter.split()))
            t_score[d] = SUBTITLE_SCORE if n_words >= 3 else SUBTITLE_SCORE - 0.1
            t_detail[d] = "one title is a part of the other"
        else:
            todo.append(d)
    # The token-level diff is the costly kind: run on every core when there are many pairs (a
    # pure function of the two token lists: same result either way).
    if diffs_cache is None:
        diffs = compare_many([(feats.tokens[int(I[first[d]])], feats.tokens[int(J[first[d]])]) for d in todo],
                             workers=workers)
        for d, comparison in zip(todo, diffs):
            t_score[d], t_veto[d], t_detail[d] = comparison.score, comparison.veto, comparison.detail
    else:
        rows = first[np.asarray(todo, dtype=np.int64)]
        left, right = I[rows], J[rows]
        found = diffs_cache.compare(
            [feats.keys[i] for i in left.tolist()], [feats.keys[j] for j in right.tolist()],
            tokens=lambda at: [(feats.tokens[i], feats.tokens[j]) for i, j in zip(left[at].tolist(), right[at].tolist())],
            workers=workers,
        )
        for d, score, veto, detail in zip(todo, found["score"].to_list(), found["veto"].to_list(), found["detail"].to_list()):
            t_score[d], t_veto[d], t_detail[d] = score, veto, detail
        del found, rows, left, right
    del todo

    # ---- authors: one overlap per distinct pair of author lists (shared objects per distinct
    # list, see ``_prepare``: their identity is the list's id).
    list_of, lists = _dense_ids(feats.author_sets, key=id)
    first_a, author_pair = _distinct_pairs(list_of[I], list_of[J], len(lists))
    a_shared = np.zeros(first_a.size, dtype=np.int64)
    a_overlap = np.full(first_a.size, np.nan)
    for d, k in enumerate(first_a.tolist()):
        i, j = int(I[k]), int(J[k])
        shared, overlap = _author_overlap(feats.author_sets[i], feats.author_sets[j], feats.author_union[i], feats.author_union[j])
        if overlap == 0 and not feats.author_families[i].isdisjoint(feats.author_families[j]):
            overlap = None  # a family name agrees, its initial not: garbled list, no evidence either way
        a_shared[d] = shared
        a_overlap[d] = np.nan if overlap is None else overlap
    shared = a_shared[author_pair]
    overlap = a_overlap[author_pair]
    if feats.authors_partial is not None:
        partial = np.asarray(feats.authors_partial, dtype=bool)
        # A record of the node had no list: nothing to hold against the pair.
        overlap = np.where((overlap == 0) & (partial[I] | partial[J]), np.nan, overlap)

    years = np.array([np.nan if y is None else y for y in feats.years], dtype=np.float64)
    year_diff = np.abs(years[I] - years[J])
    n_content = np.asarray(feats.n_content, dtype=np.int64)
    title_score = t_score[title_pair]
    # Lists that share nobody but where one's family name is still legible in the other's words
    # (glued, misspelt, transliterated): garbled, no evidence either way. Only looked at where the
    # penalty could decide (the pair would reach the review band without it): few pairs.
    nothing = np.full(I.size, np.nan)
    deciding = np.flatnonzero((overlap == 0) & (_combine(title_score, nothing, year_diff, np.minimum(n_content[I], n_content[J])) >= REVIEW_LOW))
    for k in deciding.tolist():
        i, j = int(I[k]), int(J[k])
        if max(len(feats.author_sets[i]), len(feats.author_sets[j])) > GARBLED_LIST_MAX_NAMES:
            continue
        if _garbled_lists(feats.author_families[i], feats.author_words[j]) or _garbled_lists(feats.author_families[j], feats.author_words[i]):
            overlap[k] = np.nan
    score = _combine(title_score, overlap, year_diff, np.minimum(n_content[I], n_content[J]))
    veto = pl.Series(t_veto, dtype=pl.String).gather(title_pair)
    if feats.series is not None and any(feats.series):
        series = np.asarray(feats.series, dtype=bool)
        # Evidence against, not a missing value: years further apart than one paper's versions
        # (a year off by one is a preprint and its print), or author lists that share nobody.
        other_issue = (year_diff > 1) | (overlap == 0)
        veto = pl.select(pl.when(pl.Series((series[I] | series[J]) & other_issue) & veto.is_null())
                         .then(pl.lit(SERIES_VETO)).otherwise(veto).alias("veto"))["veto"]
    return pl.DataFrame(
        {
            "i": I,
            "j": J,
            "method": np.where(key_of[I] == key_of[J], "title_exact", "title_fuzzy"),
            "score": score,
            "title_score": title_score,
            "veto": veto,
            "detail": pl.Series(t_detail, dtype=pl.String).gather(title_pair),
            "shared_authors": shared,
            "author_overlap": pl.Series(overlap, nan_to_null=True),
            "year_diff": pl.Series(year_diff, nan_to_null=True).cast(pl.Int64),
        },
        schema=schema,
    )


def compare_many(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]], *, workers: int | None = None) -> list[TitleComparison]:
    """``compare_titles`` over many pairs of token lists, in order; in worker processes
    (``runtime.map_in_processes``) when there are enough pairs to repay starting them.
    ``workers`` (the setting ``SCHOLARHOUSE_MATCH_WORKERS``; 1: none) sets how many, by default
    :func:`runtime.match_workers`' choice."""
    workers = match_workers() if workers is None else workers
    if workers <= 1 or len(pairs) < PARALLEL_DIFF_MIN:
        return _compare_chunk(pairs)
    size = min(50_000, max(2_000, len(pairs) // (workers * 8)))
    chunks = (pairs[start : start + size] for start in range(0, len(pairs), size))
    out: list[TitleComparison] = []
    for diffs in map_in_processes(_compare_chunk, chunks, workers=workers,
                                  failure="title-diff worker processes failed; diffing in this process"):
        out.extend(diffs)
    return out


def _compare_chunk(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> list[TitleComparison]:
    return [compare_titles(a, b) for a, b in pairs]


TITLE_DIFF_SCHEMA = {"left_key": pl.String, "right_key": pl.String, "score": pl.Float64, "veto": pl.String,
                     "detail": pl.String, "version": pl.String}


def title_diff_version() -> str:
    """Fingerprint of the title diff's code (``titles.py`` and rapidfuzz's version): diffs cached
    by another version are not reused."""
    import hashlib
    import inspect
    import marshal

    import rapidfuzz

    from pipelines.core.resolution import titles

    try:
        code = inspect.getsource(titles).encode()
    except (OSError, TypeError):  # no source shipped (a zipped or compiled deployment): the bytecode
        code = b"".join(marshal.dumps(f.__code__) for f in vars(titles).values() if inspect.isfunction(f))
    return hashlib.sha256(code + rapidfuzz.__version__.encode()).hexdigest()[:16]


class TitleDiffCache:
    """Title diffs of earlier runs, reused by the next (incremental nights).

    ``compare_titles`` is a pure function of the two token lists, and a title key is its tokens
    joined by spaces, so a diff keyed by the ordered pair of title keys holds on every later night
    until the diff's code changes (``version``; other versions' rows are ignored). Most pairs
    repeat from night to night; only pairs with a new or changed title are diffed again.
    :meth:`frame` returns the diffs this run used — what the next run needs — so the cache follows
    the corpus rather than growing with its history. Lookups are joins on columnar frames: at
    millions of pairs, Python dicts of string pairs would cost gigabytes."""

    def __init__(self, frame: pl.DataFrame | None = None):
        self.version = title_diff_version()
        if frame is not None and frame.height:
            self._known = (
                frame.filter(pl.col("version") == self.version)
                .select(list(TITLE_DIFF_SCHEMA))
                .cast(TITLE_DIFF_SCHEMA)
                .unique(["left_key", "right_key"], keep="first")
            )
        else:
            self._known = pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        self._used: list[pl.DataFrame] = []
        self.reused = 0
        self.computed = 0

    def compare(self, left_keys: list[str], right_keys: list[str], tokens, *, workers: int | None = None) -> pl.DataFrame:
        """``score``, ``veto``, ``detail`` of each ordered pair of title keys, in order: cached,
        else diffed now. ``tokens(positions)`` returns the token lists of the pairs at those
        positions (the matcher holds them; re-splitting millions of keys would cost more)."""
        wanted = pl.DataFrame({"left_key": left_keys, "right_key": right_keys}, schema={"left_key": pl.String, "right_key": pl.String})
        if self._known.height:
            found = wanted.join(self._known.drop("version"), on=["left_key", "right_key"], how="left", maintain_order="left")
        else:
            found = wanted.with_columns(
                score=pl.lit(None, pl.Float64), veto=pl.lit(None, pl.String), detail=pl.lit(None, pl.String))
        missing = found["score"].is_null()
        n_missing = int(missing.sum())
        if n_missing:
            where = np.flatnonzero(missing.to_numpy())
            fresh = compare_many(tokens(where), workers=workers)
            computed = pl.DataFrame(
                {"score": [c.score for c in fresh], "veto": [c.veto for c in fresh], "detail": [c.detail for c in fresh]},
                schema={"score": pl.Float64, "veto": pl.String, "detail": pl.String},
            )
            del fresh
            positions = pl.Series(where)
            found = found.with_columns(
                found["score"].scatter(positions, computed["score"]),
                found["veto"].scatter(positions, computed["veto"]),
                found["detail"].scatter(positions, computed["detail"]),
            )
        self._used.append(found.with_columns(version=pl.lit(self.version)))
        self.reused += found.height - n_missing
        self.computed += n_missing
        return found.select("score", "veto", "detail")

    def finish(self, *, keep_earlier: bool = False) -> pl.DataFrame:
        """:meth:`frame`, and let go of the earlier runs' diffs: call once matching is done (at
        100k profiles each copy of the diffs is about a gigabyte, which the author matcher can use).
        ``keep_earlier``: also keep the earlier runs' diffs (a night that compared only a subset
        of the corpus: the next night still needs the rest)."""
        if keep_earlier and self._known.height:
            self._used.append(self._known)
        used = self.frame()
        self._known = pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        self._used = [used]
        return used

    def frame(self) -> pl.DataFrame:
        """The diffs used by this run (``TITLE_DIFF_SCHEMA``), one row per pair, in key order."""
        if not self._used:
            return pl.DataFrame(schema=TITLE_DIFF_SCHEMA)
        return (
            pl.concat(self._used).select(list(TITLE_DIFF_SCHEMA)).cast(TITLE_DIFF_SCHEMA)
            .unique(["left_key", "right_key"], keep="first").sort("left_key", "right_key")
        )


def _identifier_edges(feats: _Features) -> pl.DataFrame:
    n = len(feats.record_ids)
    idx = np.arange(n, dtype=np.int64)
    parts = []
    for method, values in (("arxiv_id", feats.arxiv), ("doi", feats.doi)):
        star = star_pairs(pl.DataFrame({"idx": idx, "label": values}, schema={"idx": pl.Int64, "label": pl.String}))
        parts.append(star.with_columns(pl.lit(method).alias("method"), pl.lit(1.0).alias("score")))
    return pl.concat(parts)


def _collapse(feats: _Features) -> tuple[np.ndarray, np.ndarray]:
    """(representative record of each node, node of each record).

    A node is a set of records that every pairwise comparison would match with no constraint
    between them: the same title key with at least three content words (an identical title
    scores 1.0; even author lists that share nobody leave 0.88 >= MATCH_THRESHOLD), the same year
    and the same identifiers. Representatives are the nodes' first records, in record order."""
    n = len(feats.record_ids)
    node_of = np.empty(n, dtype=np.int64)
    reps: list[int] = []
    seen: dict[tuple, int] = {}
    collapsible = feats.groups is None
    series = feats.series or [False] * n
    for i in range(n):
        key = feats.keys[i]
        if collapsible and key and feats.n_content[i] >= 3 and not series[i]:
            sig = (key, feats.years[i], feats.arxiv[i], feats.doi[i])
            node = seen.get(sig)
            if node is None:
                node = seen[sig] = len(reps)
                reps.append(i)
        else:
            node = len(reps)
            reps.append(i)
        node_of[i] = node
    return np.asarray(reps, dtype=np.int64), node_of


def _node_features(feats: _Features, reps: np.ndarray, node_of: np.ndarray) -> _Features:
    """Features of the nodes: the representative's, with the union of the members' author lists."""
    members: list[list[int]] = [[] for _ in range(len(reps))]
    for i, node in enumerate(node_of.tolist()):
        members[node].append(i)
    author_sets, author_union, author_families, author_words, partial, parts = [], [], [], [], [], []
    for group in members:
        # Members share the title key but not necessarily its punctuation: the node has every
        # member's title parts (main title, subtitle).
        parts.append(tuple(dict.fromkeys(p for i in group for p in feats.parts[i])))
        if len(group) == 1 or all(feats.author_sets[i] is feats.author_sets[group[0]] for i in group):
            i = group[0]
            author_sets.append(feats.author_sets[i])
            author_union.append(feats.author_union[i])
            author_families.append(feats.author_families[i])
            author_words.append(feats.author_words[i])
            partial.append(False)
            continue
        sets = list(dict.fromkeys(s for i in group for s in feats.author_sets[i]))
        author_sets.append(sets)
        author_union.append(frozenset().union(*(feats.author_union[i] for i in group)))
        author_families.append(frozenset().union(*(feats.author_families[i] for i in group)))
        author_words.append(frozenset().union(*(feats.author_words[i] for i in group)))
        partial.append(bool(sets) and any(not feats.author_sets[i] for i in group))
    pick = reps.tolist()
    return _Features(
        record_ids=[feats.record_ids[i] for i in pick],
        titles=[feats.titles[i] for i in pick],
        tokens=[feats.tokens[i] for i in pick],
        keys=[feats.keys[i] for i in pick],
        parts=parts,
        n_content=[feats.n_content[i] for i in pick],
        author_sets=author_sets,
        author_union=author_union,
        author_families=author_families,
        author_words=author_words,
        years=[feats.years[i] for i in pick],
        arxiv=[feats.arxiv[i] for i in pick],
        doi=[feats.doi[i] for i in pick],
        groups=None if feats.groups is None else [feats.groups[i] for i in pick],
        series=None if feats.series is None else [feats.series[i] for i in pick],
        sources=None if feats.sources is None else [feats.sources[i] for i in pick],
        authors_partial=partial,
    )


@dataclass
class _Resolution:
    roots: list[int]
    scored: pl.DataFrame
    edges: pl.DataFrame  # accepted edges (identifier and title) with method, score
    refused: pl.DataFrame  # accepted title edges a constraint kept apart, with the reason


def _resolve(feats: _Features, diffs_cache: TitleDiffCache | None = None, candidates: pl.DataFrame | None = None,
             workers: int | None = None, scored: pl.DataFrame | None = None) -> _Resolution:
    """Resolve the records: collapse them into nodes, resolve the nodes, and express the result
    per record (record indices throughout; a node's edges are its representative's).
    ``candidates`` (``left_id``, ``right_id``: representative record ids, see
    :func:`candidate_graph`): the title candidate pairs to score instead of blocking these
    records on their own."""
    reps, node_of = _collapse(feats)
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
    res = _resolve_nodes(_node_features(feats, reps, node_of), diffs_cache, pairs, workers, scored)
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


def _resolve_nodes(feats: _Features, diffs_cache: TitleDiffCache | None = None, pairs: pl.DataFrame | None = None,
                   workers: int | None = None, scored: pl.DataFrame | None = None) -> _Resolution:
    """``scored`` (optional): the candidate pairs already scored (``_score_pairs``' rows, in (i, j)
    order; resolution/shards.py scores them in shards), so only the clustering runs here."""
    n = len(feats.record_ids)
    if scored is None:
        scored = _score_pairs(feats, _candidate_pairs(feats) if pairs is None else pairs, diffs_cache, workers)
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


def _assignments(feats: _Features, res: _Resolution) -> pl.DataFrame:
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


def _review(feats: _Features, res: _Resolution, cluster_of: list[str]) -> pl.DataFrame:
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
    feats = _prepare(records, None, with_authors=False)
    reps, node_of = _collapse(feats)
    record_ids = pl.Series(feats.record_ids, dtype=pl.String)
    rep_ids = record_ids.gather(reps)
    nodes = pl.DataFrame({"record_id": record_ids, "node_id": rep_ids.gather(node_of)})
    node_feats = feats if len(reps) == len(feats.record_ids) else _node_features(feats, reps, node_of)
    pairs = _candidate_pairs(node_feats)
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
                     workers: int | None = None) -> tuple[_Features, _Resolution]:
    """Features and resolution of ``records``; when some sources are catalogues (named, or judged
    from a first clustering with ``"auto"``), resolved again with their records kept apart."""
    feats = _prepare(records, one_to_one_between)
    if not catalogues or one_to_one_between is not None or candidates is not None:
        return feats, _resolve(feats, title_diffs, candidates, workers)
    diffs = title_diffs if title_diffs is not None else TitleDiffCache()
    res = _resolve(feats, diffs, None, workers)
    listed_once = set(_catalogue_sources(feats, res.roots) if catalogues == "auto" else catalogues)
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

"""Probabilistic author linkage: which mentions of compatible names are one person.

The author matcher's third step (``authors.py``). Identity evidence (profiles, ORCID, OpenAlex)
and the same-paper rule have already joined what they can; here every pair of mentions that
could be one person — compatible names in one *block* (the mentions sharing a name key, family
name + first initial, transitively) — is compared column by column and weighed with a
Fellegi–Sunter model fitted to the input itself (``fellegi_sunter.py``):

=============  ==================================================================================
comparison     levels (the first is the strongest agreement unless said otherwise)
=============  ==================================================================================
name           identical full name · identical initials (two or more) · identical single initial ·
               compatible full names (``Jun-Hui``/``Jun Hui``, a dropped middle name) · compatible
               through two or more initials (``S.M.``/``Song-Ming``) · through one initial only;
               identical names are term-frequency adjusted: a rare name says far more than
               ``Wei Wang``
coauthors      none shared · shared on long author lists (a collaboration), few · most · one
               shared on short lists · two or more shared on short lists; on short lists, keys
               commoner than the reference key weigh less (``zhang y`` is on 1 % of all lists)
title          topical similarity of the titles (TF-IDF cosine): unrelated · weak · related · close
affiliation    different · similar words (IDF-weighted) · the same (term-frequency adjusted)
venue          different · the same
year           0–1 apart · 2–3 · 4–7 · 8–15 · more than 15
=============  ==================================================================================

``m``/``u`` are estimated without labels (``u`` from random pairs, ``m`` and the match share by
EM over the candidate pairs) on the whole input before it is split into batches, so every batch,
worker process and incremental night weighs evidence alike (:func:`fit_author_model`).

Clustering (``author_blocks.py``, with the blocks) is average linkage (SciPy) over each block's pair probabilities: two clusters merge
when the mean probability over *all* their cross pairs reaches ``MERGE_PROBABILITY``, so one
strong link cannot chain two large clusters (single linkage would). Hard constraints are
distances no average can bridge: incompatible names, two names of one byline, different
ORCIDs, different profiles on one site; members of one identity/same-paper cluster start at
distance 0. Then a name alone never merges: a cluster must be connected by pairs that agree on
more than the name (a telling co-author — not only a common key —, the affiliation, a close
title), and a pair known by nothing
but its names is capped below the bar — so a rare name with one agreeing signal merges, a
common one needs several. And a long career is one person: clusters with one identical, not
common full name that share a co-author or an affiliation somewhere are joined
(``author_blocks._same_full_name_merges``). Cluster pairs left apart with a mean probability of at least
``REVIEW_PROBABILITY`` go to the review queue with their evidence.

Blocks larger than ``MAX_BLOCK`` mentions are cut into pieces of that size after sorting by
name, then year (their pairs across pieces are never compared: a documented limit of very
common name keys). Small blocks are packed together (pairs across blocks are never candidates)
so the per-block overhead stays small.

Pure logic: NumPy, SciPy, Polars; no Dagster, no environment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import polars as pl
import scipy.sparse as sp

from pipelines.core.resolution.fellegi_sunter import (
    BAYES_FACTOR_BITS,
    Comparison,
    LinkageModel,
    estimate_u,
    level_patterns,
    merge_patterns,
    probability,
    tf_adjustment,
    train_em,
)
from pipelines.core.resolution.names import name_compatibility, parse_name
from pipelines.textnorm import match_key

MERGE_PROBABILITY = 0.25
REVIEW_PROBABILITY = 0.12
# A pair that agrees on nothing but the name stays below the bar (the matcher's rule: a name
# alone never merges two mentions).
NAME_ONLY_CAP = 0.5 * MERGE_PROBABILITY
# Clusters carrying one identical, not common full name (log2 rarity at least -1: at most twice
# as common as a typical name) that share a co-author or affiliation need only this mean probability.
SAME_NAME_PROBABILITY = 0.05
SAME_NAME_RARITY = -1.0
# A full name at most as common as a typical one (log2 rarity >= 0): evidence that leans one way
# besides it is enough.
RARE_NAME_RARITY = 0.0
MAX_BLOCK = 3000
PACK_BLOCKS_UP_TO = 256  # small blocks are compared together, up to this many mentions at once
FIT_MAX_PAIRS = 2_000_000  # candidate pairs EM sees (beyond: a seeded share of every block's rows)
RANDOM_PAIRS = 200_000
PRIOR_STRENGTH = 1000.0  # pseudo-pairs pulling each estimate towards its prior (dominates a small input)
_FORBIDDEN = 1e6  # distance of a pair that must never be one cluster
_NOT_COMPARED = -2  # level code of a pair that is no candidate (different blocks, incompatible names)

NAME_LEVELS = ("identical full name", "identical initials", "identical single initial", "compatible full names",
               "compatible through two or more initials", "compatible through one initial")
COMPARISONS = (
    # Name u is re-estimated by EM (every candidate shares a name key, so random pairs say nothing).
    Comparison("name", NAME_LEVELS, m_prior=(0.40, 0.25, 0.25, 0.02, 0.03, 0.05),
               u_prior=(0.02, 0.03, 0.08, 0.01, 0.03, 0.83)),
    Comparison("coauthors", ("none shared", "long lists, few shared", "long lists, most shared", "one shared",
                             "two or more shared"),
               m_prior=(0.30, 0.05, 0.15, 0.25, 0.25), u_prior=(0.93, 0.03, 0.01, 0.025, 0.005),
               agreeing=frozenset({2, 3, 4})),
    Comparison("title", ("unrelated", "weakly related", "related", "close"),
               m_prior=(0.45, 0.30, 0.15, 0.10), u_prior=(0.90, 0.08, 0.015, 0.005), agreeing=frozenset({3})),
    Comparison("affiliation", ("different", "similar", "same"),
               m_prior=(0.25, 0.10, 0.65), u_prior=(0.90, 0.03, 0.07), agreeing=frozenset({1, 2})),
    Comparison("venue", ("different", "same"), m_prior=(0.45, 0.55), u_prior=(0.85, 0.15)),
    Comparison("year", ("0-1 apart", "2-3 apart", "4-7 apart", "8-15 apart", "more than 15 apart"),
               m_prior=(0.45, 0.30, 0.15, 0.08, 0.02), u_prior=(0.20, 0.20, 0.25, 0.25, 0.10)),
)
NAMES = [c.name for c in COMPARISONS]
LONG_AUTHOR_LIST = 20  # co-author lists this long or longer are a collaboration's
_STOP = frozenset("a an the of and in on for to with by from at as is are its via using into under over between "
                  "towards toward new study studies analysis".split())


def canonical_name(raw: str | None) -> tuple[str, bool, int]:
    """(canonical form, has a full given name, number of given initials) of a name.

    ``Wang, Song-Ming``, ``Song Ming Wang`` -> ``wang|songming``; ``Wang, S.M.`` -> ``wang|sm.``."""
    parsed = parse_name(raw)
    reading = parsed.primary
    if reading is None:
        return "", False, 0
    full = parsed.has_full_given
    given = "".join(part.text for part in reading.given)
    return f"{reading.family}|{given}{'' if full else '.'}", full, sum(len(p.initials) for p in reading.given)


def _kind(canonical: str) -> str:
    """``full`` (a full given name), ``initials`` (two or more) or ``initial``."""
    if not canonical.endswith("."):
        return "full"
    return "initials" if len(canonical.split("|", 1)[-1]) > 2 else "initial"


def title_tokens(title: str | None) -> list[str]:
    """Content words of a title (normalised, stop words dropped), each once."""
    return list(dict.fromkeys(w for w in match_key(title or "").split() if len(w) > 1 and w not in _STOP))


def affiliation_key(affiliation: str | None) -> str | None:
    return match_key(affiliation or "") or None


@dataclass
class AuthorModel:
    """What the author linkage weighs evidence with, fitted once on the whole input."""

    linkage: LinkageModel
    mentions: int  # how many mentions the frequency tables count
    people_per_name: dict[str, int]  # canonical name -> estimated people (see people_per_name)
    affiliation_counts: dict[str, int]  # affiliation key -> mentions
    title_df: dict[str, int]  # title word -> mentions whose title has it
    # co-author key -> fitted mentions (short author lists) whose co-authors hold it; empty: no adjustment
    coauthor_counts: dict[str, int] = field(default_factory=dict)
    _typical: dict[str, float] | None = None
    _affiliation_df: dict[str, int] | None = None
    _typical_coauthor: float | None = None

    def name_rarity(self, canonical: list[str]) -> np.ndarray:
        """Per name, the term-frequency adjustment of an identical-name agreement on it: log2 of
        how much rarer it is than the name of a typical identical-name pair of its kind (full
        given names, several initials, one initial). Counted in people, not mentions, so that one
        prolific author does not make their name look common; zero for a typical name, positive
        for a rare one, negative for a common one. (The typical pair's name is the pair-weighted
        mean, sum n^3 / sum n^2.)"""
        typical = self._typical_people()
        return np.array([np.log2(typical[_kind(c)] / max(self.people_per_name.get(c, 1), 1)) if c else 0.0
                         for c in canonical], dtype=np.float64)

    def _typical_people(self) -> dict[str, float]:
        if self._typical is None:
            cubes: Counter = Counter()
            squares: Counter = Counter()
            for c, n in self.people_per_name.items():
                cubes[_kind(c)] += float(n) ** 3
                squares[_kind(c)] += float(n) ** 2
            self._typical = {k: cubes[k] / squares[k] if squares[k] else 1.0 for k in ("full", "initials", "initial")}
        return self._typical

    def coauthor_rarity(self, keys: list[str]) -> dict[str, float]:
        """Per co-author key (surname + first initial), the term-frequency adjustment of sharing
        it: log2 of how much rarer it is than the key a typical pair sharing one co-author shares
        (the pair-weighted mean count, sum c^3 / sum c^2, as for names: it sits among the commonest
        keys, so only those lose). Sharing ``zhang y`` — on 1 % of all author lists at 100k
        profiles — says less than sharing ``jablonski k``; a key the fitted mentions never showed
        counts once. All zero without counts (too few lists, or a model stored before them).
        Splink's reference, the count of a random listed co-author's key (sum c^2 / sum c), marks
        many more keys common: measured, it cost INSPIRE recall (docs/resolution.md)."""
        if not self.coauthor_counts:
            return {k: 0.0 for k in keys}
        if self._typical_coauthor is None:
            counts = np.fromiter(self.coauthor_counts.values(), dtype=np.float64)
            self._typical_coauthor = float((counts ** 3).sum() / (counts ** 2).sum())
        reference = self._typical_coauthor
        return {k: float(np.log2(reference / max(self.coauthor_counts.get(k, 1), 1))) for k in keys}

    def affiliation_word_df(self) -> dict[str, int]:
        """Per affiliation word, how many mentions' affiliations hold it (derived from
        ``affiliation_counts`` once per model)."""
        if self._affiliation_df is None:
            df: Counter = Counter()
            for key, count in self.affiliation_counts.items():
                for w in set(key.split()):
                    df[w] += count
            self._affiliation_df = dict(df)
        return self._affiliation_df

    def affiliation_frequency(self, keys: list[str | None]) -> np.ndarray:
        return np.array([self.affiliation_counts.get(k, 1) if k else 1 for k in keys], dtype=np.float64) / max(self.mentions, 1)


@dataclass
class MentionEvidence:
    """Per-mention features of one batch, as arrays and sparse rows (row = the batch's mention)."""

    n: int
    names: list[str]
    canonical: list[str]
    canonical_id: np.ndarray
    full: np.ndarray
    initials: np.ndarray
    name_rarity: np.ndarray  # log2 term-frequency adjustment of an identical name
    coauthors: sp.csr_matrix  # binary, co-author keys
    # The same cells as ``coauthors``: each key's adjustment when it is commoner than the reference
    # (min(rarity, 0)) and whether it is not (1/0); None when the model counts no co-authors.
    coauthor_penalty: sp.csr_matrix | None
    coauthor_telling: sp.csr_matrix | None
    coauthor_count: np.ndarray
    titles: sp.csr_matrix  # TF-IDF, rows L2-normalised
    title_words: np.ndarray
    affiliation: np.ndarray  # code, -1 none
    affiliation_words: sp.csr_matrix  # TF-IDF of its words, rows L2-normalised
    affiliation_frequency: np.ndarray
    venue: np.ndarray  # code, -1 none
    year: np.ndarray  # -1 none


def _codes(values: list) -> np.ndarray:
    table: dict = {}
    return np.array([table.setdefault(v, len(table)) if v else -1 for v in values], dtype=np.int64)


def _l2_rows(matrix: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ matrix)


def _bag(rows: list[list[str]], weights: dict[str, float] | None = None, default: float = 1.0) -> sp.csr_matrix:
    """Rows of words as a sparse matrix (a column per distinct word): 1 per word, or its weight
    from ``weights`` (``default`` for a word without one)."""
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    words = [w for r in rows for w in r]
    if not words:
        return sp.csr_matrix((len(rows), 1), dtype=np.float64)
    series = pl.Series(words, dtype=pl.String)
    vocab = series.unique(maintain_order=True)
    cols = series.replace_strict(vocab, pl.int_range(vocab.len(), eager=True), return_dtype=pl.Int64).to_numpy()
    if weights is None:
        values = np.ones(len(words))
    else:
        table = pl.DataFrame({"w": list(weights), "v": list(weights.values())}, schema={"w": pl.String, "v": pl.Float64})
        values = (pl.DataFrame({"w": series}).join(table, on="w", how="left", maintain_order="left")["v"]
                  .fill_null(default).to_numpy())
    row_index = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    return sp.csr_matrix((values, (row_index, cols)), shape=(len(rows), max(1, vocab.len())))


def mention_evidence(names: list[str], coauthor_keys: list[frozenset[str]], titles: list[str | None],
                     years: list[int | None], venues: list[str | None], affiliations: list[str | None],
                     model: AuthorModel) -> MentionEvidence:
    """Features of a batch's mentions (``affiliations``/``venues`` already normalised keys)."""
    n = len(names)
    forms = per_value(names, canonical_name)
    coauthor_rows = [sorted(k) for k in coauthor_keys]
    rarity = model.coauthor_rarity(sorted({k for ks in coauthor_keys for k in ks})) if model.coauthor_counts else None
    canonical = [f[0] for f in forms]
    total = max(model.mentions, 1)
    tokens = per_value(titles, title_tokens)
    aff_words = per_value(affiliations, lambda a: (a or "").split())
    # Words weighed by how rare they are: "department", "university", "college of medicine" say
    # nothing; "cardiology", "kyunghee" do (unweighted, two long affiliations of one country's
    # medical schools looked alike in any two departments).
    title_idf = _idf(model.title_df, {w for t in set(map(tuple, tokens)) for w in t}, total)
    affiliation_idf = _idf(model.affiliation_word_df(), {w for ws in set(map(tuple, aff_words)) for w in ws}, total)
    return MentionEvidence(
        n=n,
        names=names,
        canonical=canonical,
        canonical_id=_codes(canonical),
        full=np.array([f[1] for f in forms], dtype=bool),
        initials=np.array([min(f[2], 127) for f in forms], dtype=np.int8),  # levels ask 1, >= 2: a garbage name's 130 is 127
        name_rarity=model.name_rarity(canonical),
        coauthors=_bag(coauthor_rows),
        coauthor_penalty=None if rarity is None else _bag(coauthor_rows, {k: min(r, 0.0) for k, r in rarity.items()}, 0.0),
        coauthor_telling=None if rarity is None else _bag(coauthor_rows, {k: float(r >= 0.0) for k, r in rarity.items()}, 0.0),
        coauthor_count=np.array([len(k) for k in coauthor_keys], dtype=np.int32),
        titles=_l2_rows(_bag(tokens, title_idf, _idf_of(0, total))),
        title_words=np.array([len(t) for t in tokens], dtype=np.int64),
        affiliation=_codes(affiliations),
        affiliation_words=_l2_rows(_bag(aff_words, affiliation_idf, _idf_of(0, total))),
        affiliation_frequency=model.affiliation_frequency(affiliations),
        venue=_codes(venues),
        year=np.array([int(y) if y is not None and _YEAR_MIN <= y <= _YEAR_MAX else -1 for y in years], dtype=np.int16),
    )


def _idf_of(document_frequency: int, total: int) -> float:
    """Smoothed inverse document frequency of a word held by ``document_frequency`` of ``total``."""
    return float(np.log((total + 1) / (document_frequency + 1)) + 1.0)


def _idf(document_frequency: dict[str, int], words: set[str], total: int) -> dict[str, float]:
    return {w: _idf_of(document_frequency.get(w, 0), total) for w in words}


def per_value(values: list, fn) -> list:
    cache: dict = {}
    return [cache[v] if v in cache else cache.setdefault(v, fn(v)) for v in values]


# --- comparisons --------------------------------------------------------------------------------

# Years outside this range are no year (a scraped "40000" or "-5"); in range, gaps fit int16.
_YEAR_MIN, _YEAR_MAX = 1000, 9999
# Year level per gap in years, 16 and more the last: 0-1, 2-3, 4-7, 8-15, more than 15 apart.
_YEAR_GAP_LEVEL = np.digitize(np.arange(17), (1.5, 3.5, 7.5, 15.5)).astype(np.int8)


def _levels(ev: MentionEvidence, a: np.ndarray, b: np.ndarray, compat: np.ndarray,
            shared_coauthors: np.ndarray, title_cosine: np.ndarray, affiliation_cosine: np.ndarray) -> dict[str, np.ndarray]:
    """Comparison levels of the pairs ``(a, b)`` (any broadcastable index arrays) given their
    name compatibility (0/1/2) and similarities. Non-candidates (incompatible names) get
    ``_NOT_COMPARED`` as their name level."""
    full_a, full_b = ev.full[a], ev.full[b]
    same = ev.canonical_id[a] == ev.canonical_id[b]
    fewest = np.minimum(ev.initials[a], ev.initials[b])
    name = np.full(np.broadcast(a, b).shape, _NOT_COMPARED, dtype=np.int8)
    name[compat >= 1] = 5
    name[(compat >= 1) & (fewest >= 2)] = 4
    name[(compat >= 1) & full_a & full_b] = 3
    name[compat == 2] = 0
    name[same & ~full_a & (ev.initials[a] == 1)] = 2
    name[same & ~full_a & (ev.initials[a] >= 2)] = 1
    name[same & full_a] = 0

    shortest = np.minimum(ev.coauthor_count[a], ev.coauthor_count[b])
    shared_coauthors = shared_coauthors.astype(np.int32)  # counts (dot products of 0/1 rows)
    long_lists = np.where(shared_coauthors * 2 >= shortest, np.int8(2), np.int8(1))
    coauthors = np.where(shortest >= LONG_AUTHOR_LIST, long_lists, np.where(shared_coauthors == 1, np.int8(3), np.int8(4)))
    coauthors = np.where(shared_coauthors == 0, np.int8(0), coauthors)
    coauthors = np.where(shortest == 0, np.int8(-1), coauthors)
    no_title = (ev.title_words[a] == 0) | (ev.title_words[b] == 0)
    # Levels as counts of thresholds reached (np.digitize's answer, without its binary search).
    topical = (title_cosine >= 0.05).astype(np.int8) + (title_cosine >= 0.15) + (title_cosine >= 0.3)
    title = np.where(no_title, np.int8(-1), topical)
    aff_a, aff_b = ev.affiliation[a], ev.affiliation[b]
    affiliation = np.where((aff_a < 0) | (aff_b < 0), np.int8(-1),
                           np.where(aff_a == aff_b, np.int8(2), (affiliation_cosine >= 0.5).astype(np.int8)))
    ven_a, ven_b = ev.venue[a], ev.venue[b]
    venue = np.where((ven_a < 0) | (ven_b < 0), np.int8(-1), (ven_a == ven_b).astype(np.int8))
    ya, yb = ev.year[a], ev.year[b]
    gap = np.minimum(np.abs(ya - yb), len(_YEAR_GAP_LEVEL) - 1)
    year = np.where((ya < 0) | (yb < 0), np.int8(-1), _YEAR_GAP_LEVEL[gap])
    return {"name": name, "coauthors": coauthors, "title": title.astype(np.int8),
            "affiliation": affiliation.astype(np.int8), "venue": venue.astype(np.int8), "year": year.astype(np.int8)}


def _compatibility_table(ev: MentionEvidence, rows: np.ndarray, block_of: np.ndarray | None = None) -> np.ndarray:
    """Name compatibility (0/1/2) of every pair of ``rows``; distinct names are compared once, and
    only within one ``block_of`` value (rows of different blocks get 0)."""
    names = np.array([ev.names[i] for i in rows], dtype=object)
    groups = [np.arange(len(rows))] if block_of is None else [np.flatnonzero(block_of == g) for g in np.unique(block_of)]
    out = np.zeros((len(rows), len(rows)), dtype=np.int8)
    for members in groups:
        distinct, inverse = np.unique(names[members], return_inverse=True)
        table = _distinct_name_table(distinct)
        out[np.ix_(members, members)] = table[inverse[:, None], inverse[None, :]]
    return out


def _distinct_name_table(distinct: np.ndarray) -> np.ndarray:
    """:func:`names.name_compatibility` of every pair of ``distinct`` names, vectorised: a name's
    compatibility with another is the best over their readings (``Zeda He`` reads as family He or
    family Zeda) with one family name, so every reading is a row here and each pair of names takes
    the best of its readings' pairs. Reading pairs the array rules below cannot settle (the same
    family and the same first or whole given name: 1 or 2), and names with a reading without given
    names, are compared by ``name_compatibility`` itself."""
    k = len(distinct)
    table = np.zeros((k, k), dtype=np.int8)
    owner, readings, whole_name = [], [], np.zeros(k, dtype=bool)
    for x, name in enumerate(distinct.tolist()):
        found = _readings(name)
        if found is None:
            whole_name[x] = True  # compared pair by pair below
            continue
        owner += [x] * len(found)
        readings += found
    unsettled = whole_name[:, None] | whole_name[None, :]
    if readings:
        settled, value = _reading_table(readings)
        at = np.asarray(owner, dtype=np.int64)
        rows, cols = np.broadcast_arrays(at[:, None], at[None, :])
        np.maximum.at(table, (rows, cols), np.where(settled, value, 0).astype(np.int8))
        np.logical_or.at(unsettled, (rows, cols), ~settled)
    for x, y in zip(*np.nonzero(np.triu(unsettled))):
        table[x, y] = table[y, x] = name_compatibility(distinct[x], distinct[y])
    return table


def _reading_table(readings: list[_Reading]) -> tuple[np.ndarray, np.ndarray]:
    """(settled, value) for every pair of name readings: what the array rules decide, and their
    0/1 where they do (names._given_compatible's rules for one family, vectorised)."""
    r = len(readings)
    family = _codes([f.family for f in readings])
    # Two readings, every given part a full word, are incompatible when their family names
    # differ, or when both their first given names and their whole given names differ
    # (``Jun-Hui``/``Jun Hui`` agree as a whole; a dropped middle name keeps the first): most
    # pairs of a large block, settled here without parsing them against each other.
    full_only = np.array([f.full for f in readings])
    first = _codes([f.family + "|" + f.first if f.full else None for f in readings])
    whole = _codes([f.family + "|" + f.whole if f.full else None for f in readings])
    settled = (family[:, None] != family[None, :]) | (full_only[:, None] & full_only[None, :] & (
        (first[:, None] != first[None, :]) & (whole[:, None] != whole[None, :])))
    value = np.zeros((r, r), dtype=np.int8)
    # A pair where some given part is an initial is settled by its letters: the same family, one
    # letter sequence a prefix of the other, and the first given words equal where both are
    # written out (names.name_compatibility's rule, vectorised).
    word = _codes([f.first for f in readings])
    lengths = np.array([len(f.letters) for f in readings])
    letters = np.zeros((r, max(int(lengths.max()), 1)), dtype=np.int32)
    for x, f in enumerate(readings):
        letters[x, :len(f.letters)] = [ord(c) for c in f.letters]
    mismatch = np.zeros((r, r), dtype=bool)
    for pos in range(letters.shape[1]):
        both = (lengths[:, None] > pos) & (lengths[None, :] > pos)
        mismatch |= both & (letters[:, pos][:, None] != letters[:, pos][None, :])
    words_differ = (word[:, None] >= 0) & (word[None, :] >= 0) & (word[:, None] != word[None, :])
    mixed = ~(full_only[:, None] & full_only[None, :])
    value[mixed & (family[:, None] == family[None, :]) & ~mismatch & ~words_differ] = 1
    return settled | mixed, value


class _Reading(NamedTuple):
    """A name read one way, with given parts."""

    family: str
    letters: str  # the letters its given parts stand for (``Jun-Hui`` -> ``jh``)
    first: str | None  # the first given word, None when it is an initial
    full: bool  # every given part a full word
    whole: str  # the given parts' text joined (``Jun-Hui`` / ``Jun Hui`` -> ``junhui``)


def _readings(name: str) -> list[_Reading] | None:
    """Every reading of ``name``, or None when it has none or one without given names (such a
    name is compared pair by pair)."""
    parsed = parse_name(name)
    if not parsed.readings or any(not reading.given for reading in parsed.readings):
        return None
    out = []
    for reading in parsed.readings:
        head = reading.given[0]
        out.append(_Reading(reading.family, "".join(i for part in reading.given for i in part.initials),
                            None if head.is_initial else head.text, all(not p.is_initial for p in reading.given),
                            "".join(part.text for part in reading.given)))
    return out


def compare_block(ev: MentionEvidence, rows: np.ndarray, block_of: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Levels of every pair of ``rows`` as square matrices (rows that belong to different
    ``block_of`` values are not compared). See :func:`shared_coauthors` for the
    co-author term frequencies of the same pairs."""
    compat = _compatibility_table(ev, rows, block_of)
    c = ev.coauthors[rows]
    shared = (c @ c.T).toarray()
    t = ev.titles[rows]
    a = ev.affiliation_words[rows]
    return _levels(ev, rows[:, None], rows[None, :], compat, shared, (t @ t.T).toarray(), (a @ a.T).toarray())


class SharedCoauthors(NamedTuple):
    """Per pair of a block's rows (square): the summed adjustments of the common co-author keys the
    two share (0 or below) and how many of the keys they share are not common."""

    penalty: np.ndarray
    telling: np.ndarray


def shared_coauthors(ev: MentionEvidence, rows: np.ndarray) -> SharedCoauthors | None:
    """:class:`SharedCoauthors` of every pair of ``rows``; None when the model counts no co-authors
    (every shared key then weighs as its level says and tells)."""
    if ev.coauthor_penalty is None or ev.coauthor_telling is None:
        return None
    c = ev.coauthors[rows].T
    return SharedCoauthors((ev.coauthor_penalty[rows] @ c).toarray(), (ev.coauthor_telling[rows] @ c).toarray())


def _row_dot(matrix: sp.csr_matrix, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(matrix[a].multiply(matrix[b]).sum(axis=1)).ravel()


def compare_pairs(ev: MentionEvidence, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Levels of the pairs ``(a[k], b[k])`` (for the random pairs that estimate ``u``)."""
    compat = np.array([name_compatibility(ev.names[i], ev.names[j]) for i, j in zip(a.tolist(), b.tolist())], dtype=np.int8)
    return _levels(ev, a, b, compat, _row_dot(ev.coauthors, a, b), _row_dot(ev.titles, a, b),
                   _row_dot(ev.affiliation_words, a, b))


def coauthor_adjustment(model: AuthorModel, level: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """The term-frequency adjustment of the co-author comparison, on short author lists (one or
    two or more shared): the shared keys commoner than the reference key weigh that much less
    (``penalty``, from :func:`shared_coauthors`), never below sharing nothing. Rarer keys gain
    nothing: ``u`` comes from random pairs of the whole input, and within a name block (one family
    name, mostly one culture and field) a rare key is shared more often than its corpus-wide
    frequency says (measured: the gain lowered precision on INSPIRE and PatentsView). Long lists (a
    collaboration's) are judged by the share they have in common; nothing is adjusted there."""
    short = (level == 3) | (level == 4)
    if not short.any():
        return np.zeros(level.shape)
    base = model.linkage.log2_bayes_factor("coauthors", level)
    floor = np.minimum(base, model.linkage.bayes_factors("coauthors")[0])
    return np.where(short, np.maximum(base + penalty, floor) - base, 0.0)


def pair_weights(ev: MentionEvidence, model: AuthorModel, levels: dict[str, np.ndarray], a: np.ndarray,
                 coauthor_penalty: np.ndarray | None = None) -> np.ndarray:
    """Match weights (log2 odds) of compared pairs, with the term-frequency adjustments of an
    identical name (:meth:`AuthorModel.name_rarity`), of the shared co-authors
    (``coauthor_penalty``, :func:`shared_coauthors`; none when not given) and of the same
    affiliation (its share of all mentions against the level's ``u``); ``a``: the first mention
    of each pair."""
    lm = model.linkage
    weight = lm.match_weight(levels)  # a level below 0 (missing, not compared) weighs nothing
    if coauthor_penalty is not None:
        weight = weight + coauthor_adjustment(model, levels["coauthors"], coauthor_penalty)
    floor = 1.0 / max(model.mentions, 1)
    identical = (levels["name"] >= 0) & (levels["name"] <= 2)
    if identical.any():
        rows = np.broadcast_to(a, levels["name"].shape)[identical]
        weight[identical] += ev.name_rarity[rows]
    same_aff = levels["affiliation"] == 2
    if same_aff.any():
        rows = np.broadcast_to(a, levels["affiliation"].shape)[same_aff]
        weight[same_aff] += tf_adjustment(lm.u["affiliation"][2], ev.affiliation_frequency[rows], floor)
    return weight


def pair_probabilities(ev: MentionEvidence, model: AuthorModel, levels: dict[str, np.ndarray], a: np.ndarray,
                       coauthor_penalty: np.ndarray | None = None) -> np.ndarray:
    """Match probability of each compared pair; a pair known by nothing but its names (every
    other comparison missing) is capped at ``NAME_ONLY_CAP``: a name alone never merges."""
    p = probability(pair_weights(ev, model, levels, a, coauthor_penalty))
    known = np.zeros(levels["name"].shape, dtype=bool)
    for c in COMPARISONS[1:]:
        known |= levels[c.name] >= 0
    return np.where(known, p, np.minimum(p, NAME_ONLY_CAP))


# --- fitting ------------------------------------------------------------------------------------

def people_per_name(canonical: list[str], link_rows: np.ndarray, links: list[str]) -> dict[str, int]:
    """Estimated people per canonical name: the mentions of one name that are
    linked — transitively — by a shared co-author, paper or identity (``links[k]`` belongs to row
    ``link_rows[k]``) count as one person. A prolific author is one person however many papers
    they list; a common name is many unlinked groups."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(canonical)
    labels: dict[str, int] = {}
    cols = np.array([labels.setdefault(canonical[r] + "\0" + link, len(labels)) for r, link in zip(link_rows.tolist(), links)],
                    dtype=np.int64)
    graph = coo_matrix((np.ones(len(cols), dtype=np.int8), (link_rows.astype(np.int64), cols + n)),
                       shape=(n + len(labels), n + len(labels)))
    component = connected_components(graph, directed=False)[1][:n]
    groups: dict[str, set[int]] = {}
    for c, comp in zip(canonical, component.tolist()):
        if c:
            groups.setdefault(c, set()).add(comp)
    return {c: len(g) for c, g in groups.items()}


def frequency_tables(affiliations: list[str | None], titles: list[str | None]) -> tuple[dict[str, int], dict[str, int]]:
    """Per affiliation key, how many mentions carry it; per title word, how many mentions'
    titles hold it (each distinct title read once)."""
    affiliation_counts = Counter(a for a in affiliations if a)
    title_df: Counter = Counter()
    for title, count in Counter(titles).items():
        for w in title_tokens(title):
            title_df[w] += count
    return dict(affiliation_counts), dict(title_df)


def fit_linkage(comparison_batches: Iterator[tuple[MentionEvidence, list[tuple[np.ndarray, np.ndarray]]]],
                random_levels: dict[str, np.ndarray]) -> LinkageModel:
    """EM over the level patterns of the candidate pairs in ``comparison_batches`` (features and
    packed blocks) with ``u`` from ``random_levels``."""
    parts = []
    for ev, groups in comparison_batches:
        for rows, block_of in groups:
            levels = compare_block(ev, rows, block_of)
            upper = np.triu(np.ones(levels["name"].shape, dtype=bool), 1) & (levels["name"] >= 0)
            parts.append(level_patterns({k: v[upper] for k, v in levels.items()}, NAMES))
    patterns, counts = merge_patterns(parts, NAMES)
    u = estimate_u(COMPARISONS, random_levels, PRIOR_STRENGTH)
    return train_em(COMPARISONS, patterns, counts, u, prior=0.3, free_u=("name",), prior_strength=PRIOR_STRENGTH)


def random_pairs(n: int, count: int = RANDOM_PAIRS, seed: int = 20261125) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``count`` distinct random pairs of rows ``0..n-1``, deterministic. Each pair once: in
    a small input the few pairs there are must not be counted thousands of times (``u`` would
    then be the input's own matches, not chance agreement)."""
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, count)
    b = rng.integers(0, n - 1, count)
    b = np.where(b >= a, b + 1, b)
    codes = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
    return codes // n, codes % n


# --- storage --------------------------------------------------------------------------------------

def model_rows(model: AuthorModel) -> dict[str, list]:
    """The model as long rows (``part``, ``key``, ``value``) — a table the warehouse can keep
    between nights (``cache.author_model``), so an incremental night weighs evidence exactly as
    the full night that fitted it."""
    parts, keys, values = [], [], []

    def add(part: str, key: str, value: float) -> None:
        parts.append(part)
        keys.append(key)
        values.append(float(value))

    add("prior", "", model.linkage.prior)
    add("mentions", "", model.mentions)
    for c in model.linkage.comparisons:
        for level in range(c.n_levels):
            add("m", f"{c.name}:{level}", model.linkage.m[c.name][level])
            add("u", f"{c.name}:{level}", model.linkage.u[c.name][level])
    for table, part in ((model.people_per_name, "people"), (model.affiliation_counts, "affiliation"), (model.title_df, "title"),
                        (model.coauthor_counts, "coauthor")):
        for key, value in sorted(table.items()):
            add(part, key, value)
    return {"part": parts, "key": keys, "value": values}


def model_from_rows(part: list[str], key: list[str], value: list[float]) -> AuthorModel:
    """The inverse of :func:`model_rows`."""
    m = {c.name: np.zeros(c.n_levels) for c in COMPARISONS}
    u = {c.name: np.zeros(c.n_levels) for c in COMPARISONS}
    tables: dict[str, dict[str, int]] = {"people": {}, "affiliation": {}, "title": {}, "coauthor": {}}
    scalars: dict[str, float] = {}
    for p, k, v in zip(part, key, value):
        if p in ("m", "u"):
            name, level = k.rsplit(":", 1)
            (m if p == "m" else u)[name][int(level)] = v
        elif p in tables:
            tables[p][k] = int(v)
        else:
            scalars[p] = v
    linkage = LinkageModel(COMPARISONS, m, u, scalars["prior"])
    return AuthorModel(linkage, int(scalars["mentions"]), tables["people"], tables["affiliation"], tables["title"],
                       tables["coauthor"])

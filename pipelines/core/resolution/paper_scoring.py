"""Candidate pairs of paper records and their scores (steps 3-5 of ``papers.py``): title blocking
keys, a vectorised string screen, the title diff once per distinct pair of title keys, author
overlap once per distinct pair of author lists, and the score combined over arrays."""

from __future__ import annotations

import numpy as np
import polars as pl
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, Levenshtein

from pipelines.core.resolution.blocking import empty_pairs, pairs_from_keys
from pipelines.core.resolution.paper_features import PaperFeatures
from pipelines.core.resolution.paper_series import SERIES_VETO
from pipelines.core.resolution.title_diffs import TitleDiffCache, compare_many
from pipelines.core.resolution.titles import STOPWORDS, compare_titles, content_tokens

MATCH_THRESHOLD = 0.85
REVIEW_LOW = 0.65
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
# Blocks larger than this are not expanded in full; their rows meet their BLOCK_WINDOW neighbours.
BLOCK_MAX = 50
BLOCK_WINDOW = 6


def _blocking_keys(feats: PaperFeatures) -> pl.DataFrame:
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


def candidate_pairs(feats: PaperFeatures) -> pl.DataFrame:
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


def combine_scores(title: np.ndarray, overlap: np.ndarray, year_diff: np.ndarray, min_content: np.ndarray) -> np.ndarray:
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


SCORED_SCHEMA = {
    "i": pl.Int64, "j": pl.Int64, "method": pl.String, "score": pl.Float64, "title_score": pl.Float64,
    "veto": pl.String, "detail": pl.String, "shared_authors": pl.Int64, "author_overlap": pl.Float64,
    "year_diff": pl.Int64,
}


def score_pairs(feats: PaperFeatures, pairs: pl.DataFrame, diffs_cache: TitleDiffCache | None = None,
                workers: int | None = None) -> pl.DataFrame:
    """Score title candidates: one row per surviving pair with the evidence behind its score.

    Columnar: the title diff runs once per distinct pair of title keys and the author overlap
    once per distinct pair of author lists; the score is combined over arrays."""
    if pairs.height == 0:
        return pl.DataFrame(schema=SCORED_SCHEMA)
    # Cheap vectorised screen over all candidates; only survivors reach the Python diff.
    I, J = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    survivors = _screen(feats.keys, I, J)
    I, J = I[survivors], J[survivors]
    if I.size == 0:
        return pl.DataFrame(schema=SCORED_SCHEMA)
    key_of, title_pair, t_score, t_veto, t_detail = _title_scores(feats, I, J, diffs_cache, workers)
    shared, overlap = _author_evidence(feats, I, J)
    years = np.array([np.nan if y is None else y for y in feats.years], dtype=np.float64)
    year_diff = np.abs(years[I] - years[J])
    n_content = np.asarray(feats.n_content, dtype=np.int64)
    min_content = np.minimum(n_content[I], n_content[J])
    title_score = t_score[title_pair]
    _forgive_garbled_lists(feats, I, J, overlap, combine_scores(title_score, np.full(I.size, np.nan), year_diff, min_content))
    title_score, title_detail = _without_citation_preambles(feats, I, J, title_score, t_veto, t_detail, title_pair,
                                                            overlap, year_diff, min_content)
    score = combine_scores(title_score, overlap, year_diff, min_content)
    veto = _series_vetoes(feats, I, J, pl.Series(t_veto, dtype=pl.String).gather(title_pair), year_diff, overlap)
    return pl.DataFrame(
        {
            "i": I,
            "j": J,
            "method": np.where(key_of[I] == key_of[J], "title_exact", "title_fuzzy"),
            "score": score,
            "title_score": title_score,
            "veto": veto,
            "detail": title_detail,
            "shared_authors": shared,
            "author_overlap": pl.Series(overlap, nan_to_null=True),
            "year_diff": pl.Series(year_diff, nan_to_null=True).cast(pl.Int64),
        },
        schema=SCORED_SCHEMA,
    )


def _title_scores(feats: PaperFeatures, I: np.ndarray, J: np.ndarray, diffs_cache: TitleDiffCache | None,
                  workers: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str | None], list[str]]:
    """(title key id per record, distinct title pair of each candidate, and per distinct title pair
    its score, veto and detail).

    One comparison per distinct pair of title keys and whether one title is a part of the other
    (a node's parts follow its punctuation, not only its key): a pair's title score depends on its
    two nodes alone, never on which other pairs were compared."""
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
    return key_of, title_pair, t_score, t_veto, t_detail


def _author_evidence(feats: PaperFeatures, I: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(shared names, overlap or NaN when there is no evidence) per candidate: one overlap per
    distinct pair of author lists (shared objects per distinct list, see
    ``paper_features.prepare_features``: their identity is the list's id)."""
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
    return shared, overlap


def _forgive_garbled_lists(feats: PaperFeatures, I: np.ndarray, J: np.ndarray, overlap: np.ndarray,
                           score_without_authors: np.ndarray) -> None:
    """Lists that share nobody but where one's family name is still legible in the other's words
    (glued, misspelt, transliterated) are garbled, no evidence either way: their ``overlap`` is set
    to NaN in place. Only looked at where the penalty could decide (the pair would reach the
    review band without it): few pairs."""
    deciding = np.flatnonzero((overlap == 0) & (score_without_authors >= REVIEW_LOW))
    for k in deciding.tolist():
        i, j = int(I[k]), int(J[k])
        if max(len(feats.author_sets[i]), len(feats.author_sets[j])) > GARBLED_LIST_MAX_NAMES:
            continue
        if _garbled_lists(feats.author_families[i], feats.author_words[j]) or _garbled_lists(feats.author_families[j], feats.author_words[i]):
            overlap[k] = np.nan


def _series_vetoes(feats: PaperFeatures, I: np.ndarray, J: np.ndarray, veto: pl.Series, year_diff: np.ndarray,
                   overlap: np.ndarray) -> pl.Series:
    """``veto`` with the series veto added where a series title's two records disagree: years
    further apart than one paper's versions (a year off by one is a preprint and its print), or
    author lists that share nobody (evidence against, not a missing value)."""
    if feats.series is None or not any(feats.series):
        return veto
    series = np.asarray(feats.series, dtype=bool)
    other_issue = (year_diff > 1) | (overlap == 0)
    return pl.select(pl.when(pl.Series((series[I] | series[J]) & other_issue) & veto.is_null())
                     .then(pl.lit(SERIES_VETO)).otherwise(veto).alias("veto"))["veto"]


# Words that may stand in a citation's preamble besides the names and single letters: "and", "et al".
_PREAMBLE_WORDS = frozenset({"and", "et", "al"})


def preamble_names(words: frozenset[str], keys: frozenset[str]) -> frozenset[str]:
    """What a citation preamble may name: the words of author names (``words``, stopwords left out:
    a garbled author field yields "the", "on") and each name glued to its first initial, as
    scraped references write them (``WidomJ``, from the name key ``widom j`` in ``keys``)."""
    return frozenset(w for w in words if w not in STOPWORDS) | frozenset(k.replace(" ", "") for k in keys)


def _debris(token: str) -> bool:
    return len(token) == 1 or token.isdigit() or token in _PREAMBLE_WORDS


def citation_preamble(tokens: tuple[str, ...], names: frozenset[str]) -> int:
    """How many leading tokens of a title are a citation's preamble — the authors and the year
    that a scraped reference string keeps in front of the title (``Suresha and K Ramamritham.
    Proxy-based acceleration ...``, ``WidomJ (2003) Adaptive filters ...``, ``schapire (1996),
    experiments with ...``): names of the pair's authors (``names``, see :func:`preamble_names`),
    years and numbers, single letters, ``and``/``et al``. At least one must be a name, and at
    least three content words must remain (0: no preamble)."""
    k, named = 0, False
    for token in tokens:
        if token in names:
            named = True
        elif not _debris(token):
            break
        k += 1
    if not named or len(content_tokens(tokens[k:])) < 3:
        return 0
    return k


def _may_have_preamble(tokens: tuple[str, ...], names: frozenset[str]) -> bool:
    """Whether some pair could find a preamble in ``tokens`` given ``names`` ⊇ every pair's names:
    the scan of :func:`citation_preamble` meets a name before another word. (With more names the
    scan goes at least as far, so no pair's preamble is missed: the answer stays the pair's own.)"""
    for token in tokens:
        if token in names:
            return True
        if not _debris(token):
            return False
    return False


def _without_citation_preambles(feats: PaperFeatures, I: np.ndarray, J: np.ndarray, title_score: np.ndarray,
                                t_veto: list[str | None], t_detail: list[str], title_pair: np.ndarray,
                                overlap: np.ndarray, year_diff: np.ndarray, min_content: np.ndarray,
                                ) -> tuple[np.ndarray, pl.Series]:
    """Title scores and details with citation preambles set aside: a pair below the match bar
    whose title starts with names of either record's authors is compared again without them (a
    title's own first words are another paper's modifier; a reference string's author names and
    year are not title words). Few pairs: only those the preamble could decide."""
    detail = pl.Series(t_detail, dtype=pl.String).gather(title_pair)
    # Only titles whose leading run names someone of any author list can have a preamble: flagged
    # per record first, so the per-pair look stays with a few pairs at any size.
    every_name = preamble_names(frozenset().union(*feats.author_words), frozenset().union(*feats.author_union))
    may_have = np.fromiter((_may_have_preamble(tokens, every_name) for tokens in feats.tokens),
                           dtype=bool, count=len(feats.tokens))
    below = np.flatnonzero((may_have[I] | may_have[J]) & (combine_scores(title_score, overlap, year_diff, min_content) < MATCH_THRESHOLD))
    if below.size == 0:
        return title_score, detail
    title_score = title_score.copy()
    changed: dict[int, str] = {}
    for k in below.tolist():
        if t_veto[int(title_pair[k])] is not None:
            continue
        i, j = int(I[k]), int(J[k])
        names = preamble_names(feats.author_words[i] | feats.author_words[j], feats.author_union[i] | feats.author_union[j])
        if not names:
            continue
        ti, tj = feats.tokens[i], feats.tokens[j]
        ci, cj = citation_preamble(ti, names), citation_preamble(tj, names)
        if not ci and not cj:
            continue
        again = compare_titles(ti[ci:], tj[cj:])
        if again.veto is None and again.score > title_score[k]:
            title_score[k] = again.score
            dropped = " ".join(ti[:ci] if ci else tj[:cj])
            changed[k] = f"citation preamble {dropped!r} set aside; {again.detail}"
    if changed:
        positions = list(changed)
        detail = detail.scatter(positions, [changed[k] for k in positions])
    return title_score, detail


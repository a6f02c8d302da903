"""Paper records as the matcher reads them: identifiers normalised, titles reduced to comparison
tokens, keys and parts, author lists to name keys, and the collapse of records that any
comparison would match into one *node* (step 2 of ``papers.py``).

Everything here is computed once per distinct title and once per distinct author list (one
paper listed on many profiles repeats both)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.core.resolution.names import name_forms, split_author_list
from pipelines.core.resolution.paper_series import series_flags
from pipelines.core.resolution.titles import STOPWORDS, title_parts, title_tokens
from pipelines.textnorm import match_key

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
class PaperFeatures:
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



def prepare_features(records: pl.DataFrame, one_to_one_between: str | None, *, with_authors: bool = True) -> PaperFeatures:
    """Per-record features, rows sorted by record_id. ``with_authors=False`` leaves every author
    list empty (the title side alone: what blocking and collapsing read)."""
    df = _record_frame(records, one_to_one_between)
    titles = [t or "" for t in df["title"].to_list()]
    tokens, keys, parts, n_content = _title_features(titles)
    author_sets, author_union, author_families, author_words = _author_features(
        df["authors"].to_list() if with_authors else [()] * df.height)
    arxiv, doi = _identifiers(df["arxiv_id"].to_list(), df["doi"].to_list())
    return PaperFeatures(
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
        series=series_flags(keys, df["year"].to_list(), author_union, df["_source"].to_list()),
        sources=df["_source"].to_list(),
    )


def _record_frame(records: pl.DataFrame, one_to_one_between: str | None) -> pl.DataFrame:
    """The columns the matcher reads, typed, one row per record sorted by record_id (checked)."""
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
    return df


def _title_features(titles: list[str]) -> tuple[list[tuple[str, ...]], list[str], list[tuple[str, ...]], list[int]]:
    """(tokens, key, parts, number of content words) of each title, computed once per distinct
    title: titles repeat heavily (one paper listed on many profiles)."""
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
    return tokens, keys, parts, n_content


def _author_features(author_lists: list) -> tuple[list[list[frozenset[str]]], list[frozenset[str]], list[frozenset[str]], list[frozenset[str]]]:
    """(name keys per name, their union, family names, every word) of each author list, computed
    once per distinct list; records with one list share the very objects (``paper_scoring`` keys
    its author overlaps by their identity)."""
    author_cache: dict[tuple[str, ...], tuple[list[frozenset[str]], frozenset[str], frozenset[str], frozenset[str]]] = {}
    author_sets: list[list[frozenset[str]]] = []
    author_union: list[frozenset[str]] = []
    author_families: list[frozenset[str]] = []
    author_words: list[frozenset[str]] = []
    # Per distinct name: its keys ("family initial") and their family names alone (for garbled
    # lists, "RG ATV"); names repeat across many author lists.
    name_keys: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for names in author_lists:
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
    return author_sets, author_union, author_families, author_words


def _identifiers(arxiv_ids: list[str | None], dois: list[str | None]) -> tuple[list[str | None], list[str | None]]:
    """Normalised (arXiv id, DOI) per record; an arXiv DOI (``10.48550/arXiv.*``) is an arXiv id."""
    arxiv = [normalize_arxiv_id(a) for a in arxiv_ids]
    doi = []
    for i, d in enumerate(dois):
        nd = normalize_doi(d)
        if nd and nd.startswith("10.48550/arxiv."):
            arxiv[i] = arxiv[i] or normalize_arxiv_id(nd.split("arxiv.", 1)[1])
            nd = None
        doi.append(nd)
    return arxiv, doi


def collapse(feats: PaperFeatures) -> tuple[np.ndarray, np.ndarray]:
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


def node_features(feats: PaperFeatures, reps: np.ndarray, node_of: np.ndarray) -> PaperFeatures:
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
    return PaperFeatures(
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


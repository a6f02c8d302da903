"""Author mentions as the matcher reads them (step 0 of ``authors.py``): names parsed once per
distinct name, co-authors as name keys (listed co-authors, or the names on the mention's paper),
identities (owned profile, ORCID, OpenAlex id) normalised, and which mentions share a paper —
with the two tests that keep two entries of one byline apart (listed side by side, one record)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.core.resolution.author_linkage import affiliation_key, per_value
from pipelines.core.resolution.names import name_forms, parse_name
from pipelines.textnorm import match_key

MAX_PAPER_AUTHORS = 100  # beyond this (consortium papers) only the listed co-authors count
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)
_OPENALEX = re.compile(r"(A\d+)$", re.IGNORECASE)


def normalize_orcid(value: str | None) -> str | None:
    m = _ORCID.search(value or "")
    return m.group(1).upper() if m else None


def normalize_openalex_id(value: str | None) -> str | None:
    m = _OPENALEX.search((value or "").strip())
    return m.group(1).upper() if m else None


@dataclass
class Mentions:
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


def optional_column(df: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    return pl.col(name).cast(dtype, strict=False) if name in df.columns else pl.lit(None, dtype=dtype)


def is_owner(mentions: pl.DataFrame) -> pl.Expr:
    """The mention of a profile's owner (by default: a mention that names a profile)."""
    if "is_profile_owner" in mentions.columns:
        return pl.col("is_profile_owner").cast(pl.Boolean, strict=False).fill_null(False)
    return optional_column(mentions, "source_profile_id", pl.String).is_not_null()


def prepare_mentions(mentions: pl.DataFrame, on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None) -> Mentions:
    """Per-mention features. ``on_paper`` (from :func:`paper_names_of`): the names on each paper,
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
        optional_column(mentions, "venue", pl.String).alias("venue"),
        optional_column(mentions, "affiliation", pl.String).alias("affiliation"),
        optional_column(mentions, "title", pl.String).alias("title"),
        optional_column(mentions, "year", pl.Int64).alias("year"),
        optional_column(mentions, "source", pl.String).alias("source"),
        optional_column(mentions, "source_profile_id", pl.String).alias("source_profile_id"),
        is_owner(mentions).alias("owner"),
        optional_column(mentions, "orcid", pl.String).alias("orcid"),
        optional_column(mentions, "openalex_id", pl.String).alias("openalex_id"),
    ).sort("mention_id")
    check_mention_ids(df["mention_id"])

    names = [n or "" for n in df["name"].to_list()]
    papers = df["paper_id"].to_list()
    own_forms = [name_forms(n) for n in names]
    name_info: dict[str, tuple[str | None, str | None, str]] = {}
    coauthor_names, coauthor_keys, coauthor_full = _listed_coauthors(own_forms, df["coauthors"].to_list(), name_info)
    if on_paper is None:
        on_paper = paper_names_of(mentions)
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
    return Mentions(
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
        affiliation=per_value(df["affiliation"].to_list(), affiliation_key),
        venue=per_value(df["venue"].to_list(), lambda v: match_key(v) or None),
        titles=df["title"].to_list(),
        years=df["year"].to_list(),
    )


def check_mention_ids(ids: pl.Series) -> None:
    if ids.null_count():
        raise ValueError("mention_id must not be null")
    if ids.n_unique() != ids.len():
        raise ValueError("mention_id must be unique")




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


def co_listed(m: Mentions, i: int, j: int) -> bool:
    """Two byline mentions listed side by side: each name is among the other's co-authors.

    A profile owner's mention is not a byline entry, so it is never co-listed: its co-authors
    may well contain the owner's own byline entry under another form (``Y. Zhang``).
    """
    if m.owner[i] or m.owner[j] or not m.folded[i] or not m.folded[j]:
        return False
    return m.folded[i] in m.coauthor_names[j] and m.folded[j] in m.coauthor_names[i]


def one_record(m: Mentions, i: int, j: int) -> bool:
    """Two byline mentions of one paper that are two names on it: neither is a profile owner and
    neither names a source. A row is one name on one document, so without a source two rows of
    one paper are two of its authors (a benchmark's signatures), even when a truncated co-author
    list (a collaboration's first 50 names) hides that each is among the other's co-authors. A
    named source may list one paper more than once (on each co-author's profile, re-rendered
    from night to night), so there only the byline itself (co-listing) tells two entries apart."""
    if m.owner[i] or m.owner[j]:
        return False
    return not m.source[i] and not m.source[j]


def same_paper_candidates(m: Mentions) -> pl.DataFrame:
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


def paper_names_of(mentions: pl.DataFrame) -> dict[str, tuple[set[str], dict[str, str]]]:
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

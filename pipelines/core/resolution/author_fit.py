"""Fitting the author linkage's evidence weights (``author_linkage.AuthorModel``) on an input:
frequency tables over all of it, Fellegi–Sunter ``m``/``u`` by EM on a deterministic sample of
whole name keys."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl

from pipelines.core.resolution.author_components import identity_label_columns
from pipelines.core.resolution.author_blocks import blocks as linkage_blocks, packed
from pipelines.core.resolution.author_linkage import (FIT_MAX_PAIRS, LONG_AUTHOR_LIST, AuthorModel, affiliation_key, canonical_name,
                                                      compare_pairs, fit_linkage, frequency_tables, mention_evidence,
                                                      people_per_name, per_value, random_pairs)
from pipelines.core.resolution.author_mentions import Mentions, paper_names_of, prepare_mentions
from pipelines.core.resolution.names import name_forms


def model_for(m: Mentions, mentions: pl.DataFrame, on_paper) -> AuthorModel:
    """The model of an input resolved in one piece (``m``: its prepared form, reused when the
    input is small enough to be fitted on whole) — the same as :func:`fit_author_model`'s."""
    if mentions.height <= FIT_MENTIONS:
        return fit_on(m, mentions)
    return fit_author_model(mentions, on_paper=on_paper)


# Co-author frequencies are counted only from this many short co-author lists up (coauthor_frequencies).
MIN_COAUTHOR_LISTS = 1000
# The model is fitted on at most this many mentions (whole name keys, chosen by a hash of the key).
FIT_MENTIONS = 60_000


def fit_author_model(mentions: pl.DataFrame, *, on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None
                     ) -> AuthorModel:
    """The evidence weights of the author linkage (author_linkage.py), fitted on ``mentions``:
    frequency tables over all of them, ``m``/``u`` on a deterministic sample of whole name keys
    (at most ``FIT_MENTIONS`` mentions). Pass it to :func:`resolve_authors` to weigh a part of a
    corpus (an incremental night's subset, a batch) exactly as the whole."""
    if mentions.height == 0:
        return fit_on(prepare_mentions(mentions), mentions)
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
        on_paper = paper_names_of(mentions)
    papers = sample["paper_id"].cast(pl.String).drop_nulls().unique().to_list()
    m = prepare_mentions(sample, {p: on_paper[p] for p in papers if p in on_paper})
    return fit_on(m, mentions)


def fit_on(m: Mentions, mentions: pl.DataFrame) -> AuthorModel:
    """Fit on the prepared mentions ``m`` (all of ``mentions`` or a sample of them); the
    frequency tables count all of ``mentions``."""
    names = mentions["name"].cast(pl.String).fill_null("").to_list() if mentions.height else []
    canonical = [f[0] for f in per_value(names, canonical_name)]
    link_rows, links = _name_links(mentions)
    per_name = people_per_name(canonical, link_rows, links)
    affiliations = per_value(mentions["affiliation"].cast(pl.String).to_list() if "affiliation" in mentions.columns
                              else [None] * mentions.height, affiliation_key)
    titles = mentions["title"].cast(pl.String).to_list() if "title" in mentions.columns else [None] * mentions.height
    affiliation_counts, title_df = frequency_tables(affiliations, titles)
    model = AuthorModel(None, max(mentions.height, 1), per_name, affiliation_counts, title_df,  # type: ignore[arg-type]
                        coauthor_frequencies(m.coauthor_keys))
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


def coauthor_frequencies(coauthor_keys: list[frozenset[str]]) -> dict[str, int]:
    """Per co-author key, how many of the fitted mentions list it among short co-author lists (the
    lists whose shared keys the co-author comparison counts one by one; a collaboration's are judged
    by their overlap). Counted on the fitting sample: only the ratio of a key's count to the typical
    count is used (``AuthorModel.coauthor_rarity``), and the sample holds whole name keys, so
    every mention's co-authors are as they are in the corpus. Fewer than ``MIN_COAUTHOR_LISTS``
    lists say little about how common a colleague is (a few profiles' pages: their owner is on
    every list): then no counts, and no adjustment."""
    lists = [keys for keys in coauthor_keys if 0 < len(keys) < LONG_AUTHOR_LIST]
    if len(lists) < MIN_COAUTHOR_LISTS:
        return {}
    return dict(Counter(k for keys in lists for k in keys))


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
        affiliations = per_value(mentions["affiliation"].cast(pl.String).to_list(), affiliation_key)
        parts.append(pl.DataFrame({"row": rows["row"], "link": affiliations}, schema={"row": pl.Int64, "link": pl.String})
                     .drop_nulls("link").select("row", pl.concat_str(pl.lit("a:"), "link").alias("link")))
    for k, labels in enumerate(identity_label_columns(mentions)):
        parts.append(pl.DataFrame({"row": rows["row"], "link": labels}).select("row", pl.concat_str(pl.lit(f"i{k}:"), "link").alias("link")))
    long = pl.concat(parts).drop_nulls("link").unique().sort("row", "link")
    return long["row"].to_numpy(), long["link"].to_list()

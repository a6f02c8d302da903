"""Independent components of an author input: mentions that could ever be compared, constrained
or merged (a name key, a loose key, an owned profile, an ORCID, an OpenAlex id — transitively).
Resolving components separately gives the same result as resolving the whole, so a large input
is resolved in batches of whole components, in worker processes."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import polars as pl

from pipelines.core.resolution.author_mentions import (is_owner, normalize_openalex_id, normalize_orcid, optional_column,
                                                       paper_names_of, per_value)
from pipelines.core.resolution.names import name_forms, parse_name


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
    (the same label as prepare_mentions's ``profile``: owner mentions only), its ORCID, its OpenAlex id."""
    # with_columns, not select: without the optional profile columns the label is a literal,
    # which select would leave one row long.
    columns = [mentions.with_columns(
        pl.when(is_owner(mentions))
        .then(pl.concat_str(pl.lit("p|"), optional_column(mentions, "source", pl.String).fill_null(""), pl.lit("|"),
                            optional_column(mentions, "source_profile_id", pl.String)))
        .alias("__profile_label")
    )["__profile_label"]]
    for column, prefix, normalize in (("orcid", "o|", normalize_orcid), ("openalex_id", "x|", normalize_openalex_id)):
        if column in mentions.columns:
            values = per_value(mentions[column].cast(pl.String).to_list(), normalize)
            columns.append(pl.Series([prefix + v if v else None for v in values], dtype=pl.String))
    return columns


def components(mentions: pl.DataFrame) -> np.ndarray:
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


def component_batches(mentions: pl.DataFrame, batch: int,
                       on_paper: dict[str, tuple[set[str], dict[str, str]]] | None = None,
                       ) -> Iterator[tuple[pl.DataFrame, dict[str, tuple[set[str], dict[str, str]]]]]:
    """``mentions`` as batches of whole independent components of about ``batch`` rows (in order
    of first row), each with the names on its papers (``on_paper``; by default from all of
    ``mentions``)."""
    component = components(mentions)
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
        on_paper = paper_names_of(mentions)
    for b in range(current + 1):
        part = mentions.filter(pl.Series(batch_of_row == b))
        # Only the batch's own papers: what a worker process is sent stays proportional to it.
        papers = part["paper_id"].cast(pl.String).drop_nulls().unique().to_list()
        yield part, {p: on_paper[p] for p in papers if p in on_paper}

"""Candidate generation: which pairs of rows are worth scoring at all.

Every row emits a few *blocking keys*; rows sharing a key become candidate pairs. A key shared
by many rows (a common title word, ``Introduction``, the surname ``Zhang``) would make a block
with a quadratic number of pairs, so blocks larger than ``max_block`` are not expanded in full:
their rows are sorted by a caller-given order (for titles: the whole title) and each row is paired
with its ``window`` next neighbours only (sorted neighbourhood). The number of pairs is
therefore at most ``rows x keys x max(max_block, window)``: linear in the input.

All of it is Polars joins on integer row indices; no Python loop runs over pairs.
"""

from __future__ import annotations

import polars as pl

PAIR_SCHEMA = {"i": pl.Int64, "j": pl.Int64}


def empty_pairs() -> pl.DataFrame:
    return pl.DataFrame(schema=PAIR_SCHEMA)


def pairs_from_keys(
    keys: pl.DataFrame,
    *,
    max_block: int = 60,
    window: int = 8,
    order_by: list[str] | None = None,
) -> pl.DataFrame:
    """Candidate pairs ``(i, j)``, ``i < j``, unique, from a long table of ``(idx, key)`` rows.

    ``keys`` may carry extra columns named in ``order_by``; they set the order inside oversize
    blocks (ties broken by ``idx``, so the result is deterministic).
    """
    if keys.height == 0:
        return empty_pairs()
    keys = keys.filter(pl.col("key").is_not_null() & (pl.col("key") != "")).unique(["idx", "key"])
    sizes = keys.group_by("key").agg(pl.len().alias("block_size"))
    keys = keys.join(sizes.filter(pl.col("block_size") > 1), on="key", how="inner")
    small = keys.filter(pl.col("block_size") <= max_block).select("key", "idx")
    big = keys.filter(pl.col("block_size") > max_block)

    parts = []
    if small.height:
        parts.append(
            small.join(small, on="key", suffix="_r")
            .filter(pl.col("idx") < pl.col("idx_r"))
            .select(pl.col("idx").alias("i"), pl.col("idx_r").alias("j"))
        )
    if big.height:
        order = ["key", *(order_by or []), "idx"]
        ranked = big.sort(order, nulls_last=True).with_columns(
            pl.int_range(pl.len()).over("key").alias("rank")
        ).select("key", "idx", "rank")
        for step in range(1, window + 1):
            shifted = ranked.with_columns((pl.col("rank") - step).alias("rank"))
            parts.append(
                ranked.join(shifted, on=["key", "rank"], suffix="_r").select(
                    pl.min_horizontal("idx", "idx_r").alias("i"),
                    pl.max_horizontal("idx", "idx_r").alias("j"),
                )
            )
    if not parts:
        return empty_pairs()
    out = pl.concat(parts).filter(pl.col("i") != pl.col("j")).unique().sort("i", "j")
    return out.cast(PAIR_SCHEMA)


def star_pairs(labels: pl.DataFrame) -> pl.DataFrame:
    """Link every row of a label group to the group's first row: ``(idx, label)`` -> pairs.

    For exact identifiers (arXiv id, DOI, profile id) a star is enough to connect the group and
    keeps the number of edges linear.
    """
    labels = labels.filter(pl.col("label").is_not_null())
    if labels.height == 0:
        return empty_pairs()
    first = labels.group_by("label").agg(pl.col("idx").min().alias("i"))
    return (
        labels.join(first, on="label")
        .filter(pl.col("idx") != pl.col("i"))
        .select("i", pl.col("idx").alias("j"))
        .unique()
        .sort("i", "j")
        .cast(PAIR_SCHEMA)
    )

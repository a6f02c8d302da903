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
_SHIFT = 2**32


def empty_pairs() -> pl.DataFrame:
    return pl.DataFrame(schema=PAIR_SCHEMA)


# A pair travels as one integer, i * 2^32 + j (row indices are far below 2^32): deduplicating and
# sorting tens of millions of pairs is then one column's work.
def pair_code(i: pl.Expr, j: pl.Expr) -> pl.Expr:
    """The pair ``(i, j)`` as one integer column ``pair``."""
    return (i.cast(pl.UInt64) * _SHIFT + j.cast(pl.UInt64)).alias("pair")


def unique_pairs(codes: pl.Series, names: tuple[str, str] = ("i", "j")) -> pl.DataFrame:
    """The distinct pairs of a ``pair_code`` column, sorted, as two Int64 columns."""
    codes = codes.unique().sort()
    first, second = names
    return pl.DataFrame({first: (codes // _SHIFT).cast(pl.Int64), second: (codes % _SHIFT).cast(pl.Int64)},
                        schema={first: pl.Int64, second: pl.Int64})


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
    # Each shared key becomes an integer block id: the joins below then carry integers, not key
    # strings (at 100k profiles a string key column in the self-join's output alone took gigabytes).
    sizes = (
        keys.group_by("key").agg(pl.len().alias("block_size"))
        .filter(pl.col("block_size") > 1)
        .with_row_index("block")
    )
    keys = keys.join(sizes, on="key", how="inner").drop("key")
    small = keys.filter(pl.col("block_size") <= max_block).select("block", "idx")
    big = keys.filter(pl.col("block_size") > max_block)
    if keys.height and keys["idx"].max() >= _SHIFT:
        raise ValueError("pairs_from_keys: row indices must be below 2**32")
    del keys

    parts = []
    if small.height:
        parts.append(
            small.join(small, on="block", suffix="_r")
            .filter(pl.col("idx") < pl.col("idx_r"))
            .select(pair_code(pl.col("idx"), pl.col("idx_r")))
        )
    if big.height:
        # Sorted within each block, a row pairs with the next ``window`` rows of the same block.
        ranked = big.sort(["block", *(order_by or []), "idx"], nulls_last=True).select("block", "idx")
        for step in range(1, window + 1):
            other = pl.col("idx").shift(-step)
            parts.append(
                ranked.select(
                    pair_code(pl.min_horizontal("idx", other), pl.max_horizontal("idx", other)),
                    same=pl.col("block") == pl.col("block").shift(-step),
                    differ=pl.col("idx") != other,
                ).filter(pl.col("same") & pl.col("differ")).select("pair")
            )
    if not parts:
        return empty_pairs()
    return unique_pairs(pl.concat(parts)["pair"])


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

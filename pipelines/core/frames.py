"""Polars helpers the core build shares: a Python string function applied once per distinct value,
and the most common value per group."""

from __future__ import annotations

from typing import Callable

import polars as pl


def per_distinct(column: str, fn: Callable, dtype=pl.String) -> pl.Expr:
    """``fn`` applied once per distinct non-null value of ``column`` (names, titles and identifiers
    repeat a lot), instead of once per row; nulls stay null."""
    def apply(series: pl.Series) -> pl.Series:
        distinct = series.drop_nulls().unique()
        mapped = pl.Series([fn(v) for v in distinct.to_list()], dtype=dtype)
        return series.replace_strict(distinct, mapped, default=None, return_dtype=dtype)
    return pl.col(column).map_batches(apply, return_dtype=dtype)


def most_common(frame: pl.DataFrame, by: str | list[str], column: str) -> pl.DataFrame:
    """Per ``by``: the most common non-null ``column`` value, ties broken by the smallest value."""
    keys = [by] if isinstance(by, str) else list(by)
    return (
        frame.filter(pl.col(column).is_not_null())
        .group_by(*keys, column).len()
        .sort([*keys, "len", column], descending=[*([False] * len(keys)), True, False])
        .unique(keys, keep="first", maintain_order=True)
        .select(*keys, column)
    )

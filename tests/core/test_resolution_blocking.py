"""Candidate generation: pairs_from_keys gives exactly the pairs its docstring promises."""

from __future__ import annotations

import random
from itertools import combinations

import polars as pl
import pytest

from pipelines.core.resolution.blocking import pairs_from_keys


def reference_pairs(rows: list[tuple[int, str, str]], max_block: int, window: int) -> set[tuple[int, int]]:
    """Every pair inside a block of at most ``max_block`` rows; in a larger block, each row with its
    ``window`` next rows in (order, idx) order. Blocks of one row, and empty keys, give nothing."""
    blocks: dict[str, set[tuple[str, int]]] = {}
    for idx, key, order in rows:
        if key:
            blocks.setdefault(key, set()).add((order, idx))
    out = set()
    for members in blocks.values():
        ranked = [idx for _, idx in sorted(members)]
        if len(ranked) <= max_block:
            out |= {(min(a, b), max(a, b)) for a, b in combinations(ranked, 2)}
        else:
            for p, a in enumerate(ranked):
                for b in ranked[p + 1 : p + 1 + window]:
                    out.add((min(a, b), max(a, b)))
    return {pair for pair in out if pair[0] != pair[1]}


@pytest.mark.parametrize("seed", range(6))
def test_pairs_match_the_reference(seed):
    rng = random.Random(seed)
    n_rows, n_keys = rng.randint(1, 400), rng.randint(1, 40)
    titles = [f"title {rng.randint(0, 50):02d}" for _ in range(n_rows)]
    rows = [(i, rng.choice([f"k{rng.randint(0, n_keys)}", ""]), titles[i])
            for i in range(n_rows) for _ in range(rng.randint(0, 3))]
    rows += rows[: len(rows) // 5]  # the same (row, key) twice counts once
    max_block, window = rng.randint(2, 12), rng.randint(1, 5)
    keys = pl.DataFrame(rows, schema={"idx": pl.Int64, "key": pl.String, "title_key": pl.String}, orient="row")
    got = pairs_from_keys(keys, max_block=max_block, window=window, order_by=["title_key"])
    assert got.schema == {"i": pl.Int64, "j": pl.Int64}
    assert got.rows() == sorted(reference_pairs(rows, max_block, window))


def test_no_keys_no_pairs():
    empty = pl.DataFrame(schema={"idx": pl.Int64, "key": pl.String})
    assert pairs_from_keys(empty).height == 0
    lonely = pl.DataFrame({"idx": [0, 1], "key": ["a", "b"]})
    assert pairs_from_keys(lonely).height == 0

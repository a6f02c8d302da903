"""Fellegi–Sunter record linkage: evidence weighed by how telling it is, learnt from the data.

A candidate pair is compared column by column; each comparison gives a *level* (an integer: the
names are identical, the co-author lists share two names, the years are three apart, ...; ``-1``
when a side has no value, which then says nothing either way). Under the Fellegi–Sunter model a
level contributes ``log2(m / u)`` to the pair's match weight, where ``m`` is how often true matches
show that level and ``u`` how often non-matches do. A rare agreement (``u`` small) therefore says
far more than a common one, and the weights are estimated from the data itself, without labels —
the approach Splink takes:

- ``u`` from pairs drawn at random (almost all non-matches; :func:`estimate_u`);
- ``m`` and the share of matches among the candidate pairs by expectation–maximisation over the
  candidate pairs' level patterns (:func:`train_em`), holding ``u`` fixed except for the columns
  named in ``free_u`` — the columns the candidates were blocked on (all candidates share a name
  key, so a random pair's name agreement says nothing about a candidate's);
- both smoothed towards the comparison's prior by ``prior_strength`` pseudo-pairs, so a small
  input (a handful of profiles) falls back to the documented defaults instead of a degenerate fit.

Term-frequency adjustment (a match on a rare value tells more than on a common one) is the
caller's: replace ``u`` of an exact-agreement level by the value's own frequency,
``log2(u_level / freq(value))`` added to the weight (:func:`tf_adjustment`).

Pure NumPy; deterministic (no sampling here: callers pass the pairs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

MISSING = -1
BAYES_FACTOR_BITS = (-5.0, 8.0)


@dataclass(frozen=True)
class Comparison:
    """One comparison column: its levels' labels (index = level code), the prior ``m``/``u``
    (relative weights, normalised here) and the levels that count as *agreement*."""

    name: str
    levels: tuple[str, ...]
    m_prior: tuple[float, ...]
    u_prior: tuple[float, ...]
    agreeing: frozenset[int] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        n = len(self.levels)
        if len(self.m_prior) != n or len(self.u_prior) != n:
            raise ValueError(f"{self.name}: priors need one value per level ({n})")

    @property
    def n_levels(self) -> int:
        return len(self.levels)


def _normalised(values) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    return a / a.sum()


@dataclass
class LinkageModel:
    """Estimated ``m``/``u`` per comparison and ``prior``: the share of matches among candidates."""

    comparisons: tuple[Comparison, ...]
    m: dict[str, np.ndarray]
    u: dict[str, np.ndarray]
    prior: float
    iterations: int = 0

    def log2_bayes_factor(self, comparison: str, levels: np.ndarray) -> np.ndarray:
        """``log2(m/u)`` of each level (0 where the level is missing), within ``BAYES_FACTOR_BITS``."""
        table = self.bayes_factors(comparison)
        codes = np.asarray(levels)
        # One gather over a table whose last entry (0) every missing level points at: no boolean
        # mask over the codes (blocks make millions of them).
        return np.append(table, 0.0)[np.where(codes >= 0, codes, len(table))]

    def bayes_factors(self, comparison: str) -> np.ndarray:
        """Per level, ``log2(m/u)`` clipped to ``BAYES_FACTOR_BITS``: EM drives the ``m`` of a
        level that matches rarely show towards zero, and one comparison must not then outvote
        all the others (a career longer than fifteen years is rare, not impossible)."""
        low, high = BAYES_FACTOR_BITS
        return np.clip(np.log2(self.m[comparison] / self.u[comparison]), low, high)

    def match_weight(self, levels: Mapping[str, np.ndarray]) -> np.ndarray:
        """Prior log-odds plus every comparison's log2 Bayes factor, per pair."""
        first = next(iter(levels.values()))
        weight = np.full(np.shape(first), np.log2(self.prior / (1.0 - self.prior)))
        for c in self.comparisons:
            if c.name in levels:
                weight += self.log2_bayes_factor(c.name, levels[c.name])
        return weight

    def describe(self) -> list[dict]:
        """One row per (comparison, level): m, u and the weight — for logs and the docs."""
        rows = []
        for c in self.comparisons:
            for k, label in enumerate(c.levels):
                m, u = float(self.m[c.name][k]), float(self.u[c.name][k])
                rows.append({"comparison": c.name, "level": label, "m": round(m, 5), "u": round(u, 5),
                             "log2_bayes_factor": round(float(self.bayes_factors(c.name)[k]), 3)})
        return rows


def probability(weight: np.ndarray) -> np.ndarray:
    """Match probability from a log2-odds match weight (overflow-safe)."""
    return 1.0 / (1.0 + np.exp2(-np.clip(weight, -60.0, 60.0)))


def tf_adjustment(u_level: float, value_frequency: np.ndarray, floor: float) -> np.ndarray:
    """Term-frequency adjustment for an exact agreement on a value seen with ``value_frequency``
    (share of records): ``log2(u_level / max(freq, floor))``. Rare values gain, common ones lose."""
    return np.log2(u_level / np.maximum(value_frequency, floor))


def estimate_u(comparisons: tuple[Comparison, ...], random_levels: Mapping[str, np.ndarray],
               prior_strength: float) -> dict[str, np.ndarray]:
    """``u`` per comparison from the levels of randomly drawn pairs, smoothed towards the prior."""
    u = {}
    for c in comparisons:
        codes = np.asarray(random_levels.get(c.name, np.empty(0, dtype=np.int64)))
        counts = np.bincount(codes[codes >= 0], minlength=c.n_levels).astype(np.float64)
        u[c.name] = _normalised(counts + prior_strength * _normalised(c.u_prior) + 1e-9)
    return u


_BASE = 64  # level codes per comparison are below 62 (and at least MISSING)


def level_patterns(levels: Mapping[str, np.ndarray], names: list[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The distinct level patterns of the pairs and how many pairs show each: EM then runs over a
    few thousand patterns instead of millions of pairs."""
    code = np.zeros(np.asarray(levels[names[0]]).size, dtype=np.int64)
    for n in names:
        code = code * _BASE + (np.asarray(levels[n], dtype=np.int64).ravel() + 2)
    distinct, counts = np.unique(code, return_counts=True)
    return _decode(distinct, names), counts.astype(np.float64)


def _decode(codes: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    out = {}
    for n in reversed(names):
        out[n] = codes % _BASE - 2
        codes = codes // _BASE
    return {n: out[n] for n in names}


def merge_patterns(parts: list[tuple[dict[str, np.ndarray], np.ndarray]], names: list[str]
                   ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Pattern counts of several batches of pairs as one."""
    parts = [p for p in parts if len(p[1])]
    if not parts:
        return {n: np.empty(0, dtype=np.int64) for n in names}, np.empty(0)
    merged = {n: np.concatenate([p[0][n] for p in parts]) for n in names}
    counts = np.concatenate([p[1] for p in parts])
    code = np.zeros(len(counts), dtype=np.int64)
    for n in names:
        code = code * _BASE + (merged[n] + 2)
    distinct, inverse = np.unique(code, return_inverse=True)
    return _decode(distinct, names), np.bincount(inverse.ravel(), weights=counts)


def train_em(comparisons: tuple[Comparison, ...], patterns: Mapping[str, np.ndarray], counts: np.ndarray,
             u: Mapping[str, np.ndarray], *, prior: float, free_u: tuple[str, ...] = (),
             prior_strength: float = 50.0, max_iterations: int = 60, tolerance: float = 1e-5) -> LinkageModel:
    """Expectation–maximisation of ``m`` (and of ``u`` for ``free_u``) and of the match share.

    ``patterns``/``counts``: the candidate pairs' distinct level patterns (:func:`level_patterns`).
    Every update adds ``prior_strength`` pseudo-pairs spread as the comparison's prior, so a
    level no pair shows keeps a sensible value and a tiny input stays near the defaults."""
    m = {c.name: _normalised(c.m_prior) for c in comparisons}
    uu = {c.name: np.asarray(u[c.name], dtype=np.float64).copy() for c in comparisons}
    for name in free_u:
        c = next(c for c in comparisons if c.name == name)
        uu[name] = _normalised(c.u_prior)
    total = float(counts.sum())
    if total == 0:
        return LinkageModel(comparisons, m, uu, prior, 0)
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        log_m = np.full(len(counts), np.log(prior))
        log_u = np.full(len(counts), np.log(1.0 - prior))
        for c in comparisons:
            codes = patterns[c.name]
            known = codes >= 0
            log_m[known] += np.log(m[c.name][codes[known]])
            log_u[known] += np.log(uu[c.name][codes[known]])
        p = 1.0 / (1.0 + np.exp(np.clip(log_u - log_m, -700, 700)))
        matched, unmatched = counts * p, counts * (1.0 - p)
        new_prior = float(np.clip((matched.sum() + prior_strength * prior) / (total + prior_strength), 1e-6, 1 - 1e-6))
        change = abs(new_prior - prior)
        for c in comparisons:
            codes = patterns[c.name]
            known = codes >= 0
            fitted = np.bincount(codes[known], weights=matched[known], minlength=c.n_levels)
            new_m = _normalised(fitted + prior_strength * _normalised(c.m_prior) + 1e-9)
            change = max(change, float(np.abs(new_m - m[c.name]).max()))
            m[c.name] = new_m
            if c.name in free_u:
                fitted_u = np.bincount(codes[known], weights=unmatched[known], minlength=c.n_levels)
                new_u = _normalised(fitted_u + prior_strength * _normalised(c.u_prior) + 1e-9)
                change = max(change, float(np.abs(new_u - uu[c.name]).max()))
                uu[c.name] = new_u
        prior = new_prior
        if change < tolerance:
            break
    return LinkageModel(comparisons, m, uu, prior, iteration)

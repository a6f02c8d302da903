"""Abstracts of synthetic papers: the sentence banks (``vocab.py``) compiled once, and
``plan_abstracts``, which picks each paper's templates so that its abstract lands in
600-1900 characters. Split from ``world.py``."""

from __future__ import annotations

import math

import numpy as np

from . import vocab


# Abstract layout: columns of the sentence plan, by role.
PLAN_ROLES = [role for role, _lo, hi in vocab.ROLE_LAYOUT for _ in range(hi)]


PLAN_COLS = len(PLAN_ROLES)


PROPOSE_BANKS = (vocab.ROLE_PROPOSE_NAMED, vocab.ROLE_PROPOSE_EXPANDED, vocab.ROLE_PROPOSE_UNNAMED)


def _start_capitalised(template: str) -> str:
    # A method name that opens a sentence must be capitalised when it is the generic "our method".
    return "@MC@" + template[3:] if template.startswith("@M@") else template


BANKS = {role: tuple(_start_capitalised(t) for t in bank) for role, bank in vocab.ROLE_BANKS.items()}


PROPOSE_BANKS = tuple(tuple(_start_capitalised(t) for t in bank) for bank in PROPOSE_BANKS)


# Templates as str.format patterns over a fixed slot order, so rendering a sentence is one C call.
COMPILED_BANKS = {role: tuple(vocab.format_template(t) for t in bank) for role, bank in BANKS.items()}


COMPILED_PROPOSE = tuple(tuple(vocab.format_template(t) for t in bank) for bank in PROPOSE_BANKS)


COMPILED_CODE = tuple(vocab.format_template(t) for t in vocab.ROLE_CODE)


BANK_LENGTHS = {role: np.array([vocab.estimated_length(t) for t in bank]) for role, bank in BANKS.items()}


PROPOSE_LENGTHS = tuple(np.array([vocab.estimated_length(t) for t in bank]) for bank in PROPOSE_BANKS)


CODE_LENGTH = int(np.mean([vocab.estimated_length(t) for t in vocab.ROLE_CODE]))


ABSTRACT_MIN, ABSTRACT_MAX = 600, 1900


def plan_abstracts(rng: np.random.Generator, propose_bank: np.ndarray, with_code: np.ndarray):
    """Choose sentence templates per paper so that abstracts land in 600-1900 characters.

    Returns (plan, mask): ``plan[p, c]`` is a template index for column c (roles in
    ``PLAN_ROLES``), ``mask[p]`` has bit c set when the column is used.
    """
    n = len(propose_bank)
    plan = np.zeros((n, PLAN_COLS), dtype=np.int16)
    lengths = np.zeros((n, PLAN_COLS), dtype=np.int32)
    mandatory = np.zeros(PLAN_COLS, dtype=bool)
    col = 0
    for role, lo, hi in vocab.ROLE_LAYOUT:
        if role == "propose":
            idx = np.zeros(n, dtype=np.int64)
            for b, bank in enumerate(PROPOSE_BANKS):
                sel = propose_bank == b
                idx[sel] = rng.integers(0, len(bank), int(sel.sum()))
                lengths[sel, col] = PROPOSE_LENGTHS[b][idx[sel]]
            plan[:, col] = idx
            mandatory[col] = True
            col += 1
            continue
        size = len(BANKS[role])
        # distinct templates within a role: an arithmetic walk first + j*step (mod size) with a step
        # coprime to the bank size never repeats within `size` picks
        steps = np.array([st for st in range(1, size) if math.gcd(st, size) == 1])
        first = rng.integers(0, size, n)
        step = steps[rng.integers(0, len(steps), n)]
        picks = (first[:, None] + np.arange(hi)[None, :] * step[:, None]) % size
        plan[:, col:col + hi] = picks
        lengths[:, col:col + hi] = BANK_LENGTHS[role][picks]
        mandatory[col:col + lo] = True
        col += hi
    target = np.clip(rng.normal(1250, 320, n), ABSTRACT_MIN + 120, ABSTRACT_MAX - 100)
    base = lengths[:, mandatory].sum(axis=1) + np.where(with_code, CODE_LENGTH + 1, 0) + mandatory.sum()
    optional_cols = np.flatnonzero(~mandatory)
    priority = np.argsort(rng.random((n, len(optional_cols)), dtype=np.float32), axis=1)
    opt_cols = optional_cols[priority]                       # (n, n_opt) columns in priority order
    opt_len = np.take_along_axis(lengths, opt_cols, axis=1) + 1
    cum = base[:, None] + np.cumsum(opt_len, axis=1)
    take = cum <= target[:, None]
    # too short even so: take everything
    short = (base + opt_len.sum(axis=1)) <= ABSTRACT_MIN
    take[short] = True
    # at least the minimum length
    need_more = (base + np.where(take, opt_len, 0).sum(axis=1)) < ABSTRACT_MIN + 90
    for j in range(opt_cols.shape[1]):
        if not need_more.any():
            break
        add = need_more & ~take[:, j]
        take[add, j] = True
        need_more = (base + np.where(take, opt_len, 0).sum(axis=1)) < ABSTRACT_MIN + 90
    mask = np.zeros(n, dtype=np.int64)
    for c in np.flatnonzero(mandatory):
        mask |= 1 << int(c)
    bits = np.where(take, 1 << opt_cols, 0).sum(axis=1)
    mask |= bits
    return plan, mask

"""Small numpy and random helpers of the synthetic world, and its two bigger draws: community
sizes and who wrote which paper (``_draw_authorship``). Split from ``world.py``."""

from __future__ import annotations

import numpy as np



# Authors per paper, 1..12 (ML/HPC preprints: a mode at 3-5, a long tail of big collaborations).
AUTHORS_PER_PAPER = np.array([3, 10, 17, 18, 15, 11, 8, 6, 4, 3, 2.5, 2.5]) / 100.0


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + n) for each (s, n)."""
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts.astype(np.int64) - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return offsets + np.arange(total, dtype=np.int64)


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """For a sorted group array, the 0-based index of each row within its group."""
    if len(groups) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    lengths = np.diff(np.r_[starts, len(groups)])
    return np.arange(len(groups)) - np.repeat(starts, lengths)


def _affine_ids(n: int, modulus: int, mult: int, add: int, base: int) -> np.ndarray:
    """n distinct pseudo-random ids in [base, base + modulus): an affine bijection of 0..n-1."""
    assert n <= modulus
    return base + (np.arange(n, dtype=np.int64) * mult + add) % modulus


_M64 = (1 << 64) - 1


_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    """SplitMix64 finaliser: a well-mixed 64-bit value from any 64-bit input."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def seed_for(*parts: int) -> int:
    """A stable 64-bit seed from integers (for per-page / per-listing generators)."""
    h = _GOLDEN
    for p in parts:
        h = _mix64((h ^ (int(p) & _M64)) + _GOLDEN & _M64)
    return h


class FastRandom:
    """SplitMix64 generator with the few ``random.Random`` methods the renderer uses per listing.

    Seeding ``random.Random`` costs microseconds (Mersenne Twister state); a listing needs a handful
    of draws, so this cheap generator keeps per-listing randomness independent and fast.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _M64

    def _next(self) -> int:
        self.state = (self.state + _GOLDEN) & _M64
        return _mix64(self.state)

    def random(self) -> float:
        z = self.state = (self.state + _GOLDEN) & _M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0)

    def randrange(self, start: int, stop: int | None = None) -> int:
        if stop is None:
            start, stop = 0, start
        return start + self._next() % (stop - start)

    def randint(self, a: int, b: int) -> int:
        return self.randrange(a, b + 1)

    def choice(self, seq):
        return seq[self._next() % len(seq)]


def _community_sizes(rng: np.random.Generator, n_people: int) -> np.ndarray:
    """Community sizes (lognormal, 5 to 200 people) adding up to ``n_people``."""
    sizes = []
    total = 0
    while total < n_people:
        batch = np.clip(np.round(rng.lognormal(np.log(18), 0.55, 1024)), 5, 200).astype(np.int64)
        sizes.append(batch)
        total += int(batch.sum())
    sizes = np.concatenate(sizes)
    cut = int(np.searchsorted(np.cumsum(sizes), n_people))
    sizes = sizes[:cut + 1].copy()
    sizes[-1] -= int(sizes.sum()) - n_people
    if sizes[-1] <= 0:
        sizes = sizes[:-1]
    return sizes


def _draw_authorship(rng, activity, sizes, comm_start, person_comm, has_profile, n_people):
    """Papers per community and their authors, in byline order.

    Returns (a_paper, a_person, paper_comm) with rows sorted by paper then byline position.
    Authors are drawn by activity inside the paper's community (with replacement, oversampled,
    first occurrences kept), plus outsiders from neighbouring communities inserted at random
    byline positions; on some papers the most active author (the lab head) signs last; profile
    holders left without a paper get a small one in their group.
    """
    n_comm = len(sizes)
    comm_activity = np.add.reduceat(activity, comm_start)
    papers_per_comm = np.maximum(1, np.round(comm_activity / 4.4)).astype(np.int64)
    paper_comm = np.repeat(np.arange(n_comm), papers_per_comm)
    n_p0 = len(paper_comm)
    k = rng.choice(np.arange(1, 13), n_p0, p=AUTHORS_PER_PAPER)
    n_out = np.minimum(rng.choice(3, n_p0, p=[0.75, 0.18, 0.07]), k - 1)
    kin = np.minimum(k - n_out, sizes[paper_comm])
    cum = np.cumsum(activity)
    cum_lo = np.where(comm_start > 0, cum[comm_start - 1], 0.0)
    cum_hi = cum[comm_start + sizes - 1]

    a_paper, a_person, a_key = _community_authors(rng, cum, cum_lo, cum_hi, paper_comm, kin, comm_start,
                                                  sizes, n_people)
    a_paper, a_person = _add_outsiders(rng, a_paper, a_person, a_key, n_out, paper_comm, kin, cum, cum_lo, cum_hi,
                                       comm_start, sizes, n_people)
    a_paper, a_person, paper_comm = _orphan_papers(rng, a_paper, a_person, paper_comm, person_comm, has_profile,
                                                   comm_start, sizes, n_people)
    _lab_heads_last(rng, a_paper, a_person, paper_comm, activity)
    return a_paper, a_person, paper_comm


def _community_authors(rng, cum, cum_lo, cum_hi, paper_comm, kin, comm_start, sizes, n_people):
    """Each paper's in-community authors: weighted draws with replacement inside the community,
    oversampled, first occurrences kept, ``kin`` of them; returns (paper, person, key) rows with the
    byline keys at even numbers."""
    n_p0 = len(paper_comm)
    # weighted draws with replacement inside the community, oversampled, first occurrences kept
    draws = np.ceil(kin * 1.5).astype(np.int64) + 1
    d_paper = np.repeat(np.arange(n_p0), draws)
    c = paper_comm[d_paper]
    u = cum_lo[c] + rng.random(len(d_paper)) * (cum_hi[c] - cum_lo[c])
    d_person = np.clip(np.searchsorted(cum, u, side="right"), comm_start[c], comm_start[c] + sizes[c] - 1)
    del c, u
    # draws are generated in (paper, seq) order, so a stable sort on (paper, person) keeps the
    # earliest draw of each person first; kept rows return to (paper, seq) order by index
    pair = d_paper * n_people + d_person
    order = np.argsort(pair, kind="stable")
    sp = pair[order]
    kept = np.sort(order[np.r_[True, sp[1:] != sp[:-1]]])
    del pair, order, sp
    rank = _rank_within(d_paper[kept])
    sel = rank < kin[d_paper[kept]]
    kept, rank = kept[sel], rank[sel]
    a_paper, a_person = d_paper[kept], d_person[kept]
    a_key = 2 * rank                       # in-community authors at even keys
    del d_paper, d_person, kept, rank
    return a_paper, a_person, a_key


def _add_outsiders(rng, a_paper, a_person, a_key, n_out, paper_comm, kin, cum, cum_lo, cum_hi, comm_start, sizes,
                   n_people):
    """The authors with ``n_out`` outsiders per paper inserted at random byline positions."""
    n_p0, n_comm = len(paper_comm), len(sizes)
    # outsiders from neighbouring communities (mostly the same field), at odd keys: interleaved
    o_paper = np.repeat(np.arange(n_p0), n_out)
    if len(o_paper):
        offsets = rng.choice([-3, -2, -1, 1, 2, 3], len(o_paper))
        far = rng.random(len(o_paper)) < 0.1
        oc = np.where(far, rng.integers(0, n_comm, len(o_paper)), (paper_comm[o_paper] + offsets) % n_comm)
        ou = cum_lo[oc] + rng.random(len(o_paper)) * (cum_hi[oc] - cum_lo[oc])
        o_person = np.clip(np.searchsorted(cum, ou, side="right"), comm_start[oc], comm_start[oc] + sizes[oc] - 1)
        o_key = 2 * rng.integers(0, kin[o_paper] + 1) + 1
        # another community's members cannot collide with in-community authors; outsiders can collide
        o_paper, o_person, o_key = _drop_duplicate_authors(o_paper, o_person, o_key, n_people)
        a_paper = np.concatenate((a_paper, o_paper))
        a_person = np.concatenate((a_person, o_person))
        a_key = np.concatenate((a_key, o_key))
        # two sorted runs: a stable (tim)sort merges them in linear time
        order = np.argsort(a_paper * 64 + a_key, kind="stable")
        a_paper, a_person = a_paper[order], a_person[order]
        del order
    return a_paper, a_person


def _orphan_papers(rng, a_paper, a_person, paper_comm, person_comm, has_profile, comm_start, sizes, n_people):
    """Every profile holder has at least one paper: the unlucky ones get a small paper in their group."""
    n_p0 = len(paper_comm)
    # every profile holder has at least one paper: give the unlucky ones a small paper in their group
    per_person = np.bincount(a_person, minlength=n_people)
    orphans = np.flatnonzero(has_profile & (per_person == 0))
    if len(orphans):
        extra_paper = np.arange(n_p0, n_p0 + len(orphans))
        co = rng.integers(0, 3, len(orphans))
        ep, eperson, ekey = [extra_paper], [orphans], [np.zeros(len(orphans), dtype=np.int64)]
        for j in (1, 2):
            sel = co >= j
            cc = person_comm[orphans[sel]]
            mate = comm_start[cc] + (rng.random(int(sel.sum())) * sizes[cc]).astype(np.int64)
            ok = mate != orphans[sel]
            ep.append(extra_paper[sel][ok])
            eperson.append(mate[ok])
            ekey.append(np.full(int(ok.sum()), j))
        e_paper, e_person, e_key = _drop_duplicate_authors(np.concatenate(ep), np.concatenate(eperson),
                                                           np.concatenate(ekey), n_people)
        order = np.lexsort((e_key, e_paper))
        a_paper = np.concatenate((a_paper, e_paper[order]))
        a_person = np.concatenate((a_person, e_person[order]))
        paper_comm = np.concatenate((paper_comm, person_comm[orphans]))
    return a_paper, a_person, paper_comm


def _lab_heads_last(rng, a_paper, a_person, paper_comm, activity) -> None:
    """On 40% of papers with 3+ authors the most active author swaps into last place (in place)."""
    # lab heads last: on 40% of papers with 3+ authors the most active author swaps into last place
    n_p = len(paper_comm)
    counts = np.bincount(a_paper, minlength=n_p)
    ptr = np.concatenate(([0], np.cumsum(counts)))
    act = activity[a_person]
    nonempty = counts > 0
    maxact = np.zeros(n_p)
    maxact[nonempty] = np.maximum.reduceat(act, ptr[:-1][nonempty])
    is_max = np.flatnonzero(act == maxact[a_paper])
    head = is_max[np.r_[True, a_paper[is_max][1:] != a_paper[is_max][:-1]]]
    flagged = (rng.random(n_p) < 0.4) & (counts >= 3)
    head = head[flagged[a_paper[head]]]
    last = ptr[a_paper[head] + 1] - 1
    a_person[head], a_person[last] = a_person[last], a_person[head].copy()


def _drop_duplicate_authors(a_paper, a_person, a_key, n_people):
    """Keep one row per (paper, person): the one with the smallest byline key."""
    order = np.lexsort((a_key, a_paper * n_people + a_person))
    pair = (a_paper * n_people + a_person)[order]
    keep = order[np.r_[True, pair[1:] != pair[:-1]]]
    return a_paper[keep], a_person[keep], a_key[keep]


def _at_least_one(mask: np.ndarray, group: np.ndarray, n_groups: int, prefer: np.ndarray | None = None) -> np.ndarray:
    """Set one row per group (sorted groups) when the group has none set (preferring `prefer` rows)."""
    mask = mask.copy()
    have = np.bincount(group, weights=mask, minlength=n_groups) > 0
    if have.all():
        return mask
    starts = np.searchsorted(group, np.arange(n_groups), side="left")
    ends = np.searchsorted(group, np.arange(n_groups), side="right")
    for g in np.flatnonzero(~have):
        if starts[g] == ends[g]:
            continue
        pick = starts[g]
        if prefer is not None:
            cand = np.flatnonzero(prefer[starts[g]:ends[g]])
            if len(cand):
                pick = starts[g] + int(cand[0])
        mask[pick] = True
    return mask

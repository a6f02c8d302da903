"""Clustering of accepted match edges: union-find that refuses merges the evidence forbids.

Plain connected components chain errors: A~B and B~C merge A with C even when A and C are
clearly different (two near-twin papers, two people sharing an initial). Here edges are applied
strongest first, and a merge of two clusters is refused when, taken as wholes, they disagree:

- *cannot-link*: some member of one was vetoed against some member of the other (a content-word
  conflict between titles, two distinct names on one byline);
- *exclusive labels*: both clusters carry labels of a kind that identifies an entity and share
  none of them (two arXiv ids, two DOIs, two ORCIDs). A merge the caller lets past one kind
  (``union(..., ignore=...)``: one arXiv id ties a preprint to its journal versions, whatever their
  DOIs) leaves that cluster with several labels of the kind; it then conflicts with a cluster that
  shares none of them;
- *one per group*: both clusters already hold a member of the same group (one-to-one linkage of
  clean sources: a DBLP record may join at most one Scholar record);
- *span*: a numeric attribute whose range over the merged cluster would exceed a limit (the
  publication years of one paper's records lie within a couple of years; a record without a
  year must not bridge a 1989 conference paper and its 1993 journal version);
- an optional caller check on the two clusters (the author matcher's name-consistency test).

The order of edges is fixed by the caller (score, then ids), so the result does not depend on
input row order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable


class ConstrainedUnionFind:
    """Union-find over ``0..n-1`` with cluster-level constraints (see module docstring)."""

    def __init__(
        self,
        n: int,
        *,
        exclusive: dict[str, list[Hashable | None]] | None = None,
        groups: list[Hashable | None] | None = None,
        spans: dict[str, tuple[list[float | None], float]] | None = None,
        check: Callable[[int, int], bool] | None = None,
    ) -> None:
        self.parent = list(range(n))
        self.size = [1] * n
        self._cannot: dict[int, set[int]] = {}
        # Per root: kind -> set of labels (at most one label per kind once constraints hold).
        self._labels: dict[int, dict[str, set[Hashable]]] = {}
        for kind, values in (exclusive or {}).items():
            for i, value in enumerate(values):
                if value is not None:
                    self._labels.setdefault(i, {}).setdefault(kind, set()).add(value)
        self._groups: dict[int, set[Hashable]] | None = None
        if groups is not None:
            self._groups = {i: {g} for i, g in enumerate(groups) if g is not None}
        self._check = check
        # Per kind: (limit, root -> (min, max)).
        self._spans: dict[str, tuple[float, dict[int, tuple[float, float]]]] = {}
        for kind, (values, limit) in (spans or {}).items():
            self._spans[kind] = (limit, {i: (v, v) for i, v in enumerate(values) if v is not None})

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def add_cannot_link(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self._cannot.setdefault(ra, set()).add(rb)
        self._cannot.setdefault(rb, set()).add(ra)

    def add_cannot_links(self, pairs: Iterable[tuple[int, int]]) -> None:
        for a, b in pairs:
            self.add_cannot_link(a, b)

    def conflict(self, ra: int, rb: int, *, spans: bool = True, ignore: tuple[str, ...] = ()) -> str | None:
        """Why roots ``ra`` and ``rb`` may not merge, or None (``spans=False``: ignore span limits;
        ``ignore``: exclusive label kinds that may differ for this merge)."""
        if rb in self._cannot.get(ra, ()):
            return "cannot-link"
        la, lb = self._labels.get(ra), self._labels.get(rb)
        if la and lb:
            for kind, values in la.items():
                other = lb.get(kind)
                if other and other.isdisjoint(values) and kind not in ignore:
                    return f"different {kind}"
        if self._groups is not None:
            ga, gb = self._groups.get(ra), self._groups.get(rb)
            if ga and gb and not ga.isdisjoint(gb):
                return "same group"
        for kind, (limit, ranges) in self._spans.items() if spans else ():
            a, b = ranges.get(ra), ranges.get(rb)
            if a and b and max(a[1], b[1]) - min(a[0], b[0]) > limit:
                return f"{kind} span"
        if self._check is not None and not self._check(ra, rb):
            return "incompatible"
        return None

    def union(self, a: int, b: int, *, spans: bool = True, ignore: tuple[str, ...] = ()) -> bool:
        """Merge the clusters of ``a`` and ``b`` unless a constraint forbids it. True if merged now.

        ``spans=False`` lets strong evidence (a shared identifier) exceed the span limits; ``ignore``
        lets it join clusters whose labels of those kinds differ (both sets are kept).
        """
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        # (``ignore`` only when given: subclasses that refine ``conflict`` need not know of it)
        reason = self.conflict(ra, rb, spans=spans, ignore=ignore) if ignore else self.conflict(ra, rb, spans=spans)
        if reason is not None:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        # Fold rb's constraint state into ra.
        cannot_b = self._cannot.pop(rb, None)
        if cannot_b:
            mine = self._cannot.setdefault(ra, set())
            for other in cannot_b:
                peers = self._cannot.get(other)
                if peers is not None:
                    peers.discard(rb)
                    peers.add(ra)
                mine.add(other)
        labels_b = self._labels.pop(rb, None)
        if labels_b:
            mine_l = self._labels.setdefault(ra, {})
            for kind, values in labels_b.items():
                mine_l.setdefault(kind, set()).update(values)
        if self._groups is not None:
            groups_b = self._groups.pop(rb, None)
            if groups_b:
                self._groups.setdefault(ra, set()).update(groups_b)
        for _, ranges in self._spans.values():
            b_range = ranges.pop(rb, None)
            if b_range is not None:
                a_range = ranges.get(ra)
                ranges[ra] = b_range if a_range is None else (min(a_range[0], b_range[0]), max(a_range[1], b_range[1]))
        self._merged(ra, rb)
        return True

    def has_constraints(self, root: int) -> bool:
        """Whether ``root``'s cluster carries any cannot-link, exclusive label or group."""
        return bool(self._cannot.get(root) or self._labels.get(root) or (self._groups and self._groups.get(root)))

    def _merged(self, root: int, absorbed: int) -> None:
        """Hook for subclasses that keep their own per-cluster state."""

    def roots(self) -> list[int]:
        return [self.find(i) for i in range(len(self.parent))]

"""User overrides: a person's decision outranks the algorithm.

The file (default ``config/overrides.toml``, or ``$SCHOLARHOUSE_OVERRIDES``) holds three kinds of
entries, applied after the matchers and the stable-id step, in this order:

``[[split]]``   take name variants (authors) or titles (papers) out of an entity into their own:
                ``entity = "author", id = "A…", names = ["Daning Chen"]`` /
                ``entity = "paper", id = "P…", titles = ["…"]``
``[[assign_profile]]``  a source profile belongs to this author:
                ``source = "bzpeer", source_profile_id = "daning-cheng", author_id = "A…"``
``[[merge]]``   these ids are one entity: ``entity = "author" | "paper", ids = ["A…", "A…"]``;
                the oldest id survives and the others are redirected (reason ``override``).

Ids may be old (redirected) ids: each is followed along ``core.id_redirects`` to the nearest id
that exists tonight — itself if it still has evidence. That includes the redirects an entry left
on earlier nights: the loser of last night's ``[[merge]]`` is still the algorithm's id for its
evidence tonight (the registry keeps each key's home id), so the entry finds it again and merges
it again, with the same survivor, every night. A merge whose ids already are one entity (the
algorithm now agrees) is reported as holding. An entry that matches nothing is reported, never
silently ignored. No Dagster imports.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from pipelines.core.identity.stable_ids import REDIRECT_SCHEMA, mint_id
from pipelines.textnorm import match_key

DEFAULT_OVERRIDES = Path(__file__).resolve().parents[3] / "config" / "overrides.toml"
ENTITIES = ("paper", "author")


class OverridesError(ValueError):
    """The overrides file is malformed: the run stops with the line to fix, rather than guess."""


@dataclass
class Overrides:
    merges: list[dict] = field(default_factory=list)
    splits: list[dict] = field(default_factory=list)
    profile_assignments: list[dict] = field(default_factory=list)

    def for_entity(self, entity: str) -> "Overrides":
        return Overrides(
            merges=[m for m in self.merges if m["entity"] == entity],
            splits=[s for s in self.splits if s["entity"] == entity],
            profile_assignments=self.profile_assignments if entity == "author" else [],
        )


_TABLES = ("merge", "split", "assign_profile")


def load_overrides(path: Path | None = None) -> Overrides:
    """The overrides in ``path`` (default: ``config/overrides.toml``; the run's file is the setting
    ``SCHOLARHOUSE_OVERRIDES``, which the core asset passes); a missing file is no overrides."""
    path = Path(path) if path else DEFAULT_OVERRIDES
    if not path.exists():
        return Overrides()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise OverridesError(f"{path}: {exc}") from exc
    # A table name the loader does not read ([[merges]], [[assign-profile]]) would be a decision
    # dropped every night without a word.
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise OverridesError(f"{path}: unknown {', '.join(f'[[{k}]]' for k in unknown)}; "
                             f"expected {', '.join(f'[[{k}]]' for k in _TABLES)}")
    for table in _TABLES:
        if not isinstance(data.get(table, []), list):
            raise OverridesError(f"{path}: {table} must be written as [[{table}]] tables")
    out = Overrides()
    for i, entry in enumerate(data.get("merge", []), 1):
        _check(entry, path, f"merge #{i}", entity=True)
        ids = entry.get("ids")
        if not isinstance(ids, list) or len(ids) < 2 or not all(isinstance(x, str) for x in ids):
            raise OverridesError(f"{path}: merge #{i} needs ids = [at least two ids]")
        out.merges.append({"entity": entry["entity"], "ids": ids, "note": entry.get("note")})
    for i, entry in enumerate(data.get("split", []), 1):
        _check(entry, path, f"split #{i}", entity=True)
        labels = entry.get("names") if entry["entity"] == "author" else entry.get("titles")
        if (not isinstance(entry.get("id"), str) or not isinstance(labels, list) or not labels
                or not all(isinstance(label, str) and label.strip() for label in labels)):
            what = "names" if entry["entity"] == "author" else "titles"
            raise OverridesError(f"{path}: split #{i} needs id = \"…\" and {what} = [\"…\"]")
        out.splits.append({"entity": entry["entity"], "id": entry["id"], "labels": labels, "note": entry.get("note")})
    for i, entry in enumerate(data.get("assign_profile", []), 1):
        _check(entry, path, f"assign_profile #{i}", entity=False)
        missing = [k for k in ("source", "source_profile_id", "author_id") if not isinstance(entry.get(k), str)]
        if missing:
            raise OverridesError(f"{path}: assign_profile #{i} is missing {missing}")
        out.profile_assignments.append(dict(entry))
    return out


def _check(entry: dict, path: Path, where: str, *, entity: bool) -> None:
    if not isinstance(entry, dict):
        raise OverridesError(f"{path}: {where} is not a table")
    if entity and entry.get("entity") not in ENTITIES:
        raise OverridesError(f"{path}: {where} needs entity = \"paper\" or \"author\"")


@dataclass
class OverrideResult:
    members: pl.DataFrame      # key, id, label, profile — ids after overrides
    redirects: pl.DataFrame    # old_id, new_id, reason='override', redirected_on
    applied: list[str]         # one line per entry: what it changed
    unmatched: list[str]       # entries that matched nothing (shown to the operator)


def apply_overrides(
    members: pl.DataFrame,
    overrides: Overrides,
    *,
    prefix: str,
    id_age: dict[str, date],
    redirects: dict[str, str],
    today: date,
) -> OverrideResult:
    """members: ``key``, ``id``, ``label`` (name variant or title), ``profile`` (``source:profile_id`` or null)."""
    applied: list[str] = []
    unmatched: list[str] = []

    def follow(identifier: str) -> str:
        """The nearest id along the redirects that has evidence now (else the chain's end)."""
        chain = _chain(identifier, redirects)
        live = set(members["id"].unique().to_list())
        return next((i for i in chain if i in live), chain[-1])

    for split in overrides.splits:
        target = follow(split["id"])
        wanted = {match_key(x) for x in split["labels"]}
        mask = (pl.col("id") == target) & pl.col("label").map_elements(match_key, return_dtype=pl.String).is_in(list(wanted))
        hit = members.filter(mask).height
        if not hit:
            unmatched.append(f"split {split['id']} {split['labels']}: no such {('names' if prefix == 'A' else 'titles')} on that id")
            continue
        new_id = mint_id(prefix, f"split\x1f{target}\x1f{sorted(wanted)}")
        members = members.with_columns(id=pl.when(mask).then(pl.lit(new_id)).otherwise(pl.col("id")))
        applied.append(f"split {target}: {hit} evidence rows → {new_id}")

    for assign in overrides.profile_assignments:
        profile = f"{assign['source']}:{assign['source_profile_id']}"
        mask = pl.col("profile") == profile
        hit = members.filter(mask).height
        if not hit:
            unmatched.append(f"assign_profile {profile}: profile not in the warehouse")
            continue
        target = follow(assign["author_id"])
        members = members.with_columns(id=pl.when(mask).then(pl.lit(target)).otherwise(pl.col("id")))
        applied.append(f"assign_profile {profile} → {target} ({hit} evidence rows)")

    redirect_rows = []
    for merge in overrides.merges:
        live = set(members["id"].unique().to_list())
        found = {i: next((c for c in _chain(i, redirects) if c in live), None) for i in merge["ids"]}
        present = {c for c in found.values() if c is not None}
        if sum(c is not None for c in found.values()) < 2:
            unmatched.append(f"merge {merge['ids']}: fewer than two of these ids exist now")
            continue
        if len(present) == 1:
            applied.append(f"merge {merge['ids']}: already one entity, {present.pop()}")
            continue
        survivor = min(present, key=lambda i: (id_age.get(i, today), i))
        losers = sorted(present - {survivor})
        members = members.with_columns(id=pl.when(pl.col("id").is_in(losers)).then(pl.lit(survivor)).otherwise(pl.col("id")))
        redirect_rows += [(old, survivor, "override", today) for old in losers]
        applied.append(f"merge {losers} → {survivor}")

    return OverrideResult(
        members=members,
        redirects=pl.DataFrame(redirect_rows, schema=REDIRECT_SCHEMA, orient="row"),
        applied=applied,
        unmatched=unmatched,
    )


def _chain(identifier: str, redirects: dict[str, str]) -> list[str]:
    """``identifier`` and the ids it was redirected to, in order (a cycle stops the walk)."""
    chain = [identifier]
    while identifier in redirects and redirects[identifier] not in chain:
        identifier = redirects[identifier]
        chain.append(identifier)
    return chain


def merge_ids(overrides: Overrides) -> set[str]:
    """Every id a ``[[merge]]`` entry names: their override redirects of earlier nights stay."""
    return {i for m in overrides.merges for i in m["ids"]}

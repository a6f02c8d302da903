"""The core build as separate steps, with paper and author resolution in shards (issue 24).

``build_core`` runs in one process; ``core_tables`` (``pipelines/assets/core.py``) runs the same build
as a graph of steps that exchange Parquet files in one work folder (``Settings.core_work_dir`` /
``<run id>``), so that the resolution's heavy parts can run side by side on other workers and only the
reads and the write hold the warehouse:

1. **plan** (warehouse) — ``save_inputs``: what ``read_core_inputs`` reads, as Parquet, with the
   fingerprint of the tables it came from (``build.inputs_fingerprint``) and the overrides file;
2. **paper shards** (no warehouse) — ``plan_papers``: the records; on a *full* paper night (the
   incremental matcher's own decision, ``paper_full_reason``) with ``k`` > 1 the candidate pairs
   blocked once over all records (``shards.paper_pairs``) and cut into ``k`` slices;
3. **score** × k — ``score_papers``: one slice scored (``shards.score_paper_shard``) with the title
   diffs of the last night (``cache.title_diffs``); the diffs it used are kept for the next night;
4. **cluster** — ``finish_papers``: every scored pair clustered at once (``shards.union_paper_shards``)
   into the ``PaperMatch`` ``papers.match_listings`` returns; an incremental night (a few thousand
   records) is resolved here in one piece, by ``match_listings`` itself; then ``plan_authors``: the
   papers' ids and mentions, and on a *full* author night (``author_full_reason``) with ``k`` > 1 the
   evidence weights fitted once on all the mentions and whole components dealt to ``k`` shards
   (``shards.author_shards``);
5. **resolve** × k — ``resolve_authors_shard``: one shard with the fixed weights;
6. **assemble** — ``assemble``: the shards' union as the ``AuthorNight`` ``authors.match_mentions``
   returns (an incremental night: resolved here in one piece), then ``build_core``'s other steps
   with both matchers' answers handed in: ids, overrides, tables (``save_core``);
7. **write** (warehouse) — ``build.write_core``, if the warehouse's inputs still have the plan's
   fingerprint; otherwise the caller resolves again in one piece (another run changed them).

The steps between plan and write recompute the cheap, deterministic parts they need (the current
listings, identifiers, paper ids, mentions) from the saved inputs rather than pass them along: the
files carry only what each matcher decided. The tables equal ``build_core``'s for any ``k``: a full
night's shards give the full resolution's answer (``shards.py``); an incremental night, and any night
with one shard (the default), runs the matchers themselves in one piece inside the cluster and
assemble steps (tests/core/test_core_shards.py).

Pure logic: Polars and files, no Dagster, no environment, no database.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, fields
from datetime import date
from pathlib import Path

import polars as pl

from pipelines.core import identifiers
from pipelines.core.build import CoreInputs, build_core, current_listings
from pipelines.core.identity.overrides import Overrides, load_overrides
from pipelines.core.ids import stored_redirects
from pipelines.core.mentions import Mentions, collect_mentions
from pipelines.core.papers import PaperMatch, identify_papers, match_listings, paper_records
from pipelines.core.resolution import incremental as _inc
from pipelines.core.resolution import incremental_papers as _incp
from pipelines.core.resolution import shards
from pipelines.core.resolution.incremental import AuthorNight, scheduled_full
from pipelines.core.resolution.incremental_papers import PaperNight
from pipelines.core.resolution.papers import TITLE_DIFF_SCHEMA, TitleDiffCache
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.core.tables import CoreTables
from pipelines.timing import StageTimer

# --- files


def _write(frame: pl.DataFrame, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(path)
    return str(path)


def _plain(value):
    """JSON for the figures (numpy and Polars scalars, dates) — the steps' metadata only."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _write_json(value, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, default=_plain))


def save_inputs(inputs: CoreInputs, folder: Path, *, fingerprint: list, overrides_file: Path | None) -> None:
    """``inputs`` as Parquet in ``folder``/inputs, with the fingerprint of the tables they were read
    from and a copy of the overrides file: every later step sees exactly what the plan read."""
    target = folder / "inputs"
    for f in fields(CoreInputs):
        value = getattr(inputs, f.name)
        if isinstance(value, pl.DataFrame):
            _write(value, target / f"{f.name}.parquet")
    evidence = inputs.identifier_evidence
    for f in fields(identifiers.IdentifierEvidence):
        _write(getattr(evidence, f.name), target / f"evidence.{f.name}.parquet")
    if overrides_file is not None and Path(overrides_file).exists():
        shutil.copyfile(overrides_file, target / "overrides.toml")
    _write_json({"until": inputs.until.isoformat(), "fingerprint": fingerprint}, target / "plan.json")


def load_inputs(folder: Path) -> CoreInputs:
    source = folder / "inputs"
    frames = {f.name: pl.read_parquet(source / f"{f.name}.parquet") for f in fields(CoreInputs)
              if (source / f"{f.name}.parquet").exists()}
    evidence = identifiers.IdentifierEvidence(**{
        f.name: pl.read_parquet(source / f"evidence.{f.name}.parquet") for f in fields(identifiers.IdentifierEvidence)})
    return CoreInputs(until=date.fromisoformat(plan_meta(folder)["until"]), identifier_evidence=evidence, **frames)


def plan_meta(folder: Path) -> dict:
    """The plan's window end and fingerprint."""
    return json.loads((folder / "inputs" / "plan.json").read_text())


def load_plan_overrides(folder: Path) -> Overrides:
    """The overrides the plan saw (none when it had no file)."""
    path = folder / "inputs" / "overrides.toml"
    return load_overrides(path) if path.exists() else Overrides()


# --- papers


def paper_full_reason(records: pl.DataFrame, state: pl.DataFrame | None, review: pl.DataFrame | None, *,
                      today: date, options: MatchOptions) -> str | None:
    """Why tonight resolves every paper (then it is sharded), or None: an incremental night, or no
    records (resolved in one piece). The decision ``resolve_papers_incrementally`` takes."""
    if records.height == 0:
        return None
    return _incp.compare_records(records, state, review, full_reason=scheduled_full(today),
                                 incremental=options.incremental)[2].reason


@dataclass
class PaperPlan:
    """Tonight's paper records and, on a sharded night, the slices of candidate pairs to score."""

    reason: str | None          # why every paper is resolved tonight; None: an incremental night
    records: pl.DataFrame
    slices: list[pl.DataFrame]  # empty: the paper matcher runs in one piece (``finish_papers``)

    @property
    def sharded(self) -> bool:
        return bool(self.slices)


def plan_papers(inputs: CoreInputs, k: int, *, today: date, options: MatchOptions) -> PaperPlan:
    """Step "paper shards": the records the paper matcher sees and, on a full night with ``k`` > 1,
    the candidate pairs blocked once over all of them, in ``k`` slices. One shard, an incremental
    night or no candidate pair at all: no slices (the matcher in one piece: the same answer, without
    the shards' extra passes)."""
    records = paper_records(listings_with_identifiers(inputs).listings)
    reason = paper_full_reason(records, inputs.paper_state, inputs.paper_state_review, today=today, options=options)
    if reason is None or k <= 1:
        return PaperPlan(reason, records, [])
    pairs = shards.paper_pairs(records)
    return PaperPlan(reason, records, shards.paper_pair_shards(pairs, k) if pairs.height else [])


def save_paper_plan(plan: PaperPlan, folder: Path) -> list[str | None]:
    """The plan's records and slices as Parquet; the slices' paths (one None: not sharded)."""
    _write(plan.records, folder / "papers" / "records.parquet")
    _write_json({"reason": plan.reason, "sharded": plan.sharded}, folder / "papers" / "plan.json")
    return [_write(s, folder / "papers" / f"pairs-{i:05d}.parquet") for i, s in enumerate(plan.slices)] or [None]


def score_papers(folder: Path, index: int, pairs_path: Path, *, workers: int | None) -> dict:
    """Step "score" (one slice): its pairs scored with the last night's title diffs; writes the
    scored rows and the diffs it used. Returns the figures."""
    started = time.perf_counter()
    records = pl.read_parquet(folder / "papers" / "records.parquet")
    cache = TitleDiffCache(pl.read_parquet(folder / "inputs" / "title_diffs.parquet"))
    pairs = pl.read_parquet(pairs_path)
    scored = shards.score_paper_shard(records, pairs, title_diffs=cache, workers=workers)
    _write(scored, folder / "papers" / f"scored-{index:05d}.parquet")
    _write(cache.finish(), folder / "papers" / f"diffs-{index:05d}.parquet")
    return {"pairs": pairs.height, "reused": cache.reused, "computed": cache.computed,
            "seconds": round(time.perf_counter() - started, 3)}


def listings_with_identifiers(inputs: CoreInputs) -> identifiers.ListingIdentifiers:
    """The current listings with their identifiers (``build.current_listings``), worked out again from
    the saved inputs by the steps that need them."""
    return current_listings(inputs.listings, inputs.profiles, inputs.identifier_evidence, timer=StageTimer())[0]


def finish_papers(folder: Path, inputs: CoreInputs, attached: identifiers.ListingIdentifiers,
                  shard_figures: list[dict], *, today: date, options: MatchOptions) -> tuple[PaperMatch, float]:
    """Step "cluster" (papers): the ``PaperMatch`` of tonight — every scored slice clustered at once
    on a full night, else ``match_listings`` in one piece. Also the matcher's seconds in this step."""
    plan = json.loads((folder / "papers" / "plan.json").read_text())
    started = time.perf_counter()
    if not plan["sharded"]:
        timer = StageTimer()
        match = match_listings(attached.listings, title_diffs=inputs.title_diffs, state=inputs.paper_state,
                               review=inputs.paper_state_review, today=today, timer=timer, options=options)
        return match, timer.summary()["resolve_papers"]["seconds"]
    records = pl.read_parquet(folder / "papers" / "records.parquet").with_columns(pl.col("record_id").cast(pl.String))
    scored = [pl.read_parquet(p) for p in sorted((folder / "papers").glob("scored-*.parquet"))]
    assigned, queue = shards.union_paper_shards(records, scored, workers=options.workers)
    current = pl.DataFrame({"record_id": records["record_id"], "digest": _incp.record_digests(records)})
    night = PaperNight(assigned, queue, _incp._state(current, assigned, _incp.paper_matcher_version()),
                       {"mode": "full", "reason": plan["reason"], "resolved": records.height,
                        "shards": len(scored)})
    used = [pl.read_parquet(p) for p in sorted((folder / "papers").glob("diffs-*.parquet"))]
    diffs = (pl.concat(used).select(list(TITLE_DIFF_SCHEMA)).cast(TITLE_DIFF_SCHEMA)
             .unique(["left_key", "right_key"], keep="first").sort("left_key", "right_key")
             if used else pl.DataFrame(schema=TITLE_DIFF_SCHEMA))
    match = PaperMatch(night=night, title_diffs=diffs, diffs_reused=sum(f.get("reused", 0) for f in shard_figures),
                       diffs_computed=sum(f.get("computed", 0) for f in shard_figures))
    return match, time.perf_counter() - started


def save_paper_match(match: PaperMatch, folder: Path, seconds: float) -> None:
    target = folder / "papers"
    for name in ("assignments", "review", "state"):
        _write(getattr(match.night, name), target / f"match.{name}.parquet")
    _write(match.title_diffs, target / "match.title_diffs.parquet")
    _write_json({"stats": match.night.stats, "reused": match.diffs_reused, "computed": match.diffs_computed,
                 "seconds": seconds}, target / "match.json")


def load_paper_match(folder: Path) -> tuple[PaperMatch, float]:
    source = folder / "papers"
    meta = json.loads((source / "match.json").read_text())
    night = PaperNight(*(pl.read_parquet(source / f"match.{n}.parquet") for n in ("assignments", "review", "state")),
                       meta["stats"])
    return (PaperMatch(night=night, title_diffs=pl.read_parquet(source / "match.title_diffs.parquet"),
                       diffs_reused=meta["reused"], diffs_computed=meta["computed"]), meta["seconds"])


# --- authors


def tonight_mentions(inputs: CoreInputs, attached: identifiers.ListingIdentifiers, match: PaperMatch,
                     overrides: Overrides, *, today: date) -> Mentions:
    """The author mentions of tonight's papers (``build_core``'s steps 1–2 with the paper match given)."""
    papers = identify_papers(attached, match, inputs.paper_registry, redirects=stored_redirects(inputs.redirects),
                             overrides=overrides, today=today)
    return collect_mentions(papers.listings, inputs.extra_authorships)


def _matcher_rows(mentions: Mentions) -> pl.DataFrame:
    """The author matcher's input, as ``authors.match_mentions`` hands it over."""
    return mentions.collapsed.drop("group").with_columns(pl.col("mention_id").cast(pl.String))


def author_full_reason(rows: pl.DataFrame, state: pl.DataFrame | None, review: pl.DataFrame | None,
                       model: pl.DataFrame | None, *, today: date, options: MatchOptions) -> str | None:
    """Why tonight resolves every author (then it is sharded), or None: an incremental night, or no
    mentions (one piece). The decision ``resolve_authors_incrementally`` takes."""
    if rows.height == 0:
        return None
    return _inc.compare_mentions(rows, state, model, full_reason=scheduled_full(today),
                                 incremental=options.incremental)[2].reason


def plan_authors(folder: Path, inputs: CoreInputs, attached: identifiers.ListingIdentifiers, match: PaperMatch,
                 overrides: Overrides, k: int, *, today: date, options: MatchOptions) -> list[int | None]:
    """Step "cluster" (authors' plan): on a full author night with ``k`` > 1, the evidence weights fitted
    on all the mentions and the mentions dealt to ``k`` shards of whole components, as Parquet; returns
    the shards' numbers ([None]: an incremental night or one shard, resolved in one piece by the
    assemble step)."""
    rows = _matcher_rows(tonight_mentions(inputs, attached, match, overrides, today=today))
    reason = author_full_reason(rows, inputs.author_state, inputs.author_state_review, inputs.author_model,
                                today=today, options=options)
    target = folder / "authors"
    _write_json({"reason": reason, "sharded": False}, target / "plan.json")
    if reason is None or k <= 1:
        return [None]
    started = time.perf_counter()
    _write(rows, target / "mentions.parquet")  # every matcher row: the union step's state digests read them
    _write(_inc.model_frame(_inc.fit_author_model(rows)), target / "model.parquet")
    numbers = []
    for i, (part, paper_rows) in enumerate(shards.author_shards(rows, k)):
        _write(part, target / f"part-{i:05d}.parquet")
        _write(paper_rows, target / f"rows-{i:05d}.parquet")
        numbers.append(i)
    _write_json({"reason": reason, "sharded": True, "fit_seconds": time.perf_counter() - started},
                target / "plan.json")
    return numbers


def resolve_authors_shard(folder: Path, index: int, *, batch: int | None, workers: int | None) -> dict:
    """Step "resolve" (one author shard): its mentions resolved with the fitted weights."""
    started = time.perf_counter()
    source = folder / "authors"
    part = pl.read_parquet(source / f"part-{index:05d}.parquet")
    assigned, review = shards.resolve_author_shard(part, pl.read_parquet(source / f"rows-{index:05d}.parquet"),
                                                   pl.read_parquet(source / "model.parquet"), batch=batch, workers=workers)
    _write(assigned, source / f"assigned-{index:05d}.parquet")
    _write(review, source / f"review-{index:05d}.parquet")
    return {"mentions": part.height, "seconds": round(time.perf_counter() - started, 3)}


def finish_authors(folder: Path) -> AuthorNight | None:
    """The ``AuthorNight`` of a full night from its shards (None: not sharded, one piece)."""
    source = folder / "authors"
    plan = json.loads((source / "plan.json").read_text())
    if not plan["sharded"]:
        return None
    rows = pl.read_parquet(source / "mentions.parquet")
    results = [(pl.read_parquet(a), pl.read_parquet(source / a.name.replace("assigned-", "review-")))
               for a in sorted(source.glob("assigned-*.parquet"))]
    assigned, queue = shards.union_author_shards(results)
    current = pl.DataFrame({"mention_id": rows["mention_id"], "digest": _inc.mention_digests(rows)})
    state = _inc._state(current, assigned, _inc.name_labels(rows["name"]), _inc.author_matcher_version())
    return AuthorNight(assigned, queue, state,
                       {"mode": "full", "reason": plan["reason"], "resolved": rows.height, "shards": len(results)},
                       pl.read_parquet(source / "model.parquet"))


# --- assemble


def assemble(folder: Path, *, today: date, options: MatchOptions, author_figures: list[dict] | None = None,
             paper_seconds: float = 0.0) -> CoreTables:
    """Step "assemble": both matchers' answers, then ``build_core``'s ids, overrides and tables.
    ``paper_seconds`` / ``author_figures``: the matchers' time in the earlier steps, for the figures."""
    inputs = load_inputs(folder)
    overrides = load_plan_overrides(folder)
    match, seconds = load_paper_match(folder)
    timer = StageTimer()
    records = pl.scan_parquet(folder / "papers" / "records.parquet").select(pl.len()).collect().item()
    timer.add("resolve_papers", seconds + paper_seconds, records)
    started = time.perf_counter()
    author_night = finish_authors(folder)
    if author_night is not None:
        fit = json.loads((folder / "authors" / "plan.json").read_text()).get("fit_seconds", 0.0)
        timer.add("resolve_authors", time.perf_counter() - started + fit
                  + sum(f.get("seconds", 0.0) for f in author_figures or []), author_night.state.height)
    listings, inputs.listings = inputs.listings, None
    return build_core(listings, inputs.profiles, overrides=overrides, today=today, timer=timer, options=options,
                      title_diffs=inputs.title_diffs, paper_match=match, author_night=author_night,
                      **inputs.build_arguments())


def save_core(core: CoreTables, folder: Path) -> None:
    """``core`` as Parquet (every table the write replaces, and the listing → paper rows) and its figures."""
    target = folder / "core"
    for f in fields(CoreTables):
        value = getattr(core, f.name)
        if isinstance(value, pl.DataFrame):
            _write(value, target / f"{f.name}.parquet")
    _write_json(core.stats, target / "stats.json")


def load_core(folder: Path) -> CoreTables:
    source = folder / "core"
    frames = {f.name: pl.read_parquet(source / f"{f.name}.parquet") for f in fields(CoreTables)
              if (source / f"{f.name}.parquet").exists()}
    return CoreTables(**frames, stats=json.loads((source / "stats.json").read_text()))


def run_in_steps(folder: Path, inputs: CoreInputs, overrides_file: Path | None, k: int, *, today: date,
                 options: MatchOptions | None = None) -> CoreTables:
    """Every step above in order, in this process (what the Dagster graph runs step by step): for tests
    and benchmarks. ``folder`` must be empty or absent."""
    options = options or MatchOptions()
    save_inputs(inputs, folder, fingerprint=[], overrides_file=overrides_file)
    inputs = load_inputs(folder)
    paper_paths = save_paper_plan(plan_papers(inputs, k, today=today, options=options), folder)
    figures = [score_papers(folder, i, Path(p), workers=options.workers) for i, p in enumerate(paper_paths) if p]
    attached = listings_with_identifiers(inputs)
    match, seconds = finish_papers(folder, inputs, attached, figures, today=today, options=options)
    save_paper_match(match, folder, seconds)
    numbers = plan_authors(folder, inputs, attached, match, load_plan_overrides(folder), k, today=today,
                           options=options)
    del attached
    author_figures = [resolve_authors_shard(folder, i, batch=options.author_batch, workers=options.workers)
                      for i in numbers if i is not None]
    core = assemble(folder, today=today, options=options, author_figures=author_figures,
                    paper_seconds=sum(f["seconds"] for f in figures))
    save_core(core, folder)
    return load_core(folder)

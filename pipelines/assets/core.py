"""core layer: entity resolution — one paper, one author — with stable ids and overrides.

``core_tables`` is a graph of steps that exchange Parquet files in the core work folder beside the
warehouse (``work/core/<run id>``; ``pipelines/core/sharded.py`` says what each file is):

    plan_core (pool "warehouse")          read staging, enrichment, registries and caches
      -> plan_paper_shards (no pool)      records; a full night with k > 1: candidate pairs blocked once, k slices
      -> score_paper_shard (no pool, one per slice: SCHOLARHOUSE_RESOLUTION_SHARDS)
      -> cluster_papers (no pool)         every scored pair clustered at once (an incremental night: the
                                          paper matcher in one piece); paper ids, mentions; a full night:
                                          the author model fitted once, whole components in k shards
      -> resolve_author_shard (no pool, one per shard)
      -> assemble_core (no pool)          the shards' union (an incremental night: the author matcher in
                                          one piece), stable ids, overrides, the core rows
      -> write_core_tables (pool "warehouse")  one transaction (the night resolved again in one piece if
                                          another run changed the inputs since the plan)

An incremental night, or any night with one shard (the default), runs each matcher in one piece inside
cluster_papers / assemble_core, with one empty item at each fan-out. The tables are the same for any
number of shards (tests/core/test_core_shards.py).
"""

import shutil
from datetime import date
from pathlib import Path

import dagster as dg

from pipelines import warehouse
from pipelines.core import build as core_build
from pipelines.core import sharded
from pipelines.assets.common import WAREHOUSE_POOL, night_window, preview, transient_retries
from pipelines.core.identity.overrides import load_overrides
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.assets.partitions import daily_partitions
from pipelines.orchestration.executors import DISTRIBUTED, executor_kind
from pipelines.resources import WarehouseResource
from pipelines.settings import Settings
from pipelines.staging import build as landing
from pipelines.warehouse import contract

# What each core asset is, for the UI; the tables themselves are the DDL's (pipelines/warehouse/contract.py).
DESCRIPTIONS = {
    "papers": "One row per resolved paper: the same paper listed on several profiles or sites is one row, "
    "with its best title, year, category, arXiv id, DOI, the Code flag and how many listings/profiles show it.",
    "paper_identifiers": "The crosswalk: every identifier of every paper (arXiv id with its versions, DOIs, "
    "OpenAlex work id, BZPEER work slug, Scholar Feed paper id), one row per paper, scheme and value, with "
    "where it came from. A value names one paper.",
    "identifier_rejects": "Identifier values turned down, and why: malformed, an OpenAlex title hit a "
    "listing does not agree with, or a value that would name two papers.",
    "paper_listings": "Which paper each staged listing is, and why (method: arxiv_id, title_exact, "
    "title_fuzzy, singleton, override) with the match score.",
    "authors": "One row per resolved person. Names alone never merge two authors: shared papers, "
    "co-authors, profiles or ORCID do.",
    "author_names": "Every name form seen for each author (initials, diacritics, order variants).",
    "author_profiles": "Which author each site profile belongs to (algorithm or override).",
    "authorships": "Who wrote what: paper × author, with the evidence (profile ownership, byline, arXiv, OpenAlex).",
    "match_review": "Pairs the algorithm did not merge on its own, with the score, the evidence for and "
    "against, and the overrides.toml entry that would settle each.",
    "id_redirects": "Old ids that were merged into another, and identifiers a source replaced "
    "(an OpenAlex work id, a site's paper id): follow old_id → new_id.",
}
CORE_TABLES = [contract.short(t) for t in contract.asset_tables("core")]


# The assets core_tables reads (staging, enrichment): the plan step waits for them.
UPSTREAM = {"staging_listings": ["staging", "listings"], "staging_profiles": ["staging", "profiles"],
            "author_lists": ["enrichment", "author_lists"], "arxiv_title_searches": ["enrichment", "arxiv_title_searches"],
            "arxiv_works": ["enrichment", "arxiv_works"], "openalex_works": ["enrichment", "openalex_works"]}


def _match_workers(context: dg.OpExecutionContext, configured: int | None) -> int | None:
    """One matcher process per shard step when the run already runs steps side by side (multiprocess,
    Celery, Kubernetes: the executor is the parallelism); otherwise the setting's workers."""
    kind = executor_kind(context.run_config, default=Settings.one_from_env("executor"))
    return 1 if kind in DISTRIBUTED else configured


@dg.op(pool=WAREHOUSE_POOL, out=dg.Out(dict), ins={name: dg.In(dg.Nothing) for name in UPSTREAM},
       description="Read what tonight's resolution needs — the current listings and profiles, enrichment, the id "
       "registries and redirects, the matchers' caches — with a fingerprint of the tables read, and write it "
       "as Parquet to the core work folder.")
@transient_retries
def plan_core(context: dg.OpExecutionContext, warehouse_db: WarehouseResource) -> dict:
    settings = warehouse_db.settings()
    landing.sweep_work_dirs(settings.core_work_dir)  # folders left by failed, abandoned runs
    folder = settings.core_work_dir / context.run_id
    night = night_window(context)
    with warehouse_db.connect() as con:
        fingerprint = core_build.inputs_fingerprint(con)
        inputs = core_build.read_core_inputs(con, night.day)
    sharded.save_inputs(inputs, folder, fingerprint=fingerprint, overrides_file=settings.overrides)
    context.log.info(f"resolving through {inputs.until}: {inputs.listings.height} current listings, "
                     f"up to {settings.resolution_shards} shard(s)")
    options = warehouse_db.match_options()
    # handed down to the steps that follow, which open no database and need no resource
    return {"folder": str(folder), "day": night.key, "shards": settings.resolution_shards,
            "options": {"workers": options.workers, "author_batch": options.author_batch,
                        "incremental": options.incremental}}


def _options(step: dict) -> MatchOptions:
    """How the matchers run tonight, as the plan read it from the settings."""
    return MatchOptions(**step["options"])


@dg.op(out=dg.DynamicOut(dict),
       description="The paper records; on a full night (the paper matcher's own decision) with more than one "
       "shard, the candidate pairs "
       "blocked once over every record and cut into SCHOLARHOUSE_RESOLUTION_SHARDS slices. No database.")
@transient_retries
def plan_paper_shards(context: dg.OpExecutionContext, plan: dict):
    folder = Path(plan["folder"])
    options = _options(plan)
    paper_plan = sharded.plan_papers(sharded.load_inputs(folder), plan["shards"], today=date.fromisoformat(plan["day"]),
                                     options=options)
    paths = sharded.save_paper_plan(paper_plan, folder)
    context.log.info(f"{paper_plan.records.height} paper records, "
                     + (f"full night ({paper_plan.reason})" if paper_plan.reason else "incremental night") + ": "
                     + (f"{sum(s.height for s in paper_plan.slices)} candidate pairs in {len(paper_plan.slices)} "
                        "shard(s)" if paper_plan.sharded else "resolved in one piece"))
    for index, path in enumerate(paths):  # at least one item, so the cluster step runs
        yield dg.DynamicOutput({**plan, "index": index, "pairs": path}, mapping_key=f"p{index:05d}")


@dg.op(out=dg.Out(dict),
       description="Score one slice of the paper candidate pairs (the title diffs of the last night reused) and "
       "write the scored pairs as Parquet. No database, so shards run side by side on multi-process executors.")
@transient_retries
def score_paper_shard(context: dg.OpExecutionContext, shard: dict) -> dict:
    if shard["pairs"] is None:
        return {**shard, "scored": None}
    figures = sharded.score_papers(Path(shard["folder"]), shard["index"], Path(shard["pairs"]),
                                   workers=_match_workers(context, _options(shard).workers))
    context.log.info(f"paper shard {shard['index']}: {figures['pairs']} pairs scored "
                     f"({figures['reused']} title diffs reused, {figures['computed']} computed)")
    return {**shard, "scored": figures}


@dg.op(out=dg.DynamicOut(dict),
       description="Cluster every scored paper pair at once (an incremental night: the paper matcher in one "
       "piece), give the papers their ids and collect their author mentions; on a full author night, fit the "
       "author model once on every mention and deal whole components to SCHOLARHOUSE_RESOLUTION_SHARDS shards. "
       "No database.")
@transient_retries
def cluster_papers(context: dg.OpExecutionContext, scored: list[dict]):
    first = min(scored, key=lambda s: s["index"])
    folder, day = Path(first["folder"]), date.fromisoformat(first["day"])
    options = _options(first)
    inputs = sharded.load_inputs(folder)
    figures = [s["scored"] for s in sorted(scored, key=lambda s: s["index"]) if s["scored"]]
    attached = sharded.listings_with_identifiers(inputs)
    match, seconds = sharded.finish_papers(folder, inputs, attached, figures, today=day, options=options)
    sharded.save_paper_match(match, folder, seconds)
    numbers = sharded.plan_authors(folder, inputs, attached, match, sharded.load_plan_overrides(folder),
                                   first["shards"], today=day, options=options)
    context.log.info(f"papers: {match.night.stats.get('mode')} ({match.night.stats.get('reason', 'incremental')}); "
                     + (f"authors: {len(numbers)} shard(s)" if numbers != [None] else "authors: one piece"))
    paper_seconds = sum(f["seconds"] for f in figures)
    for number in numbers:  # at least one item, so the assemble step runs
        yield dg.DynamicOutput({"folder": str(folder), "day": first["day"], "options": first["options"],
                                "index": number, "paper_seconds": paper_seconds}, mapping_key=f"a{number or 0:05d}")


@dg.op(out=dg.Out(dict),
       description="Resolve one shard of whole author components with the evidence weights fitted on every "
       "mention. No database, so shards run side by side on multi-process executors.")
@transient_retries
def resolve_author_shard(context: dg.OpExecutionContext, shard: dict) -> dict:
    if shard["index"] is None:
        return {**shard, "resolved": None}
    options = _options(shard)
    figures = sharded.resolve_authors_shard(Path(shard["folder"]), shard["index"], batch=options.author_batch,
                                            workers=_match_workers(context, options.workers))
    context.log.info(f"author shard {shard['index']}: {figures['mentions']} mentions resolved")
    return {**shard, "resolved": figures}


@dg.op(out=dg.Out(dict),
       description="The author shards' union (an incremental night: the author matcher in one piece), then stable "
       "ids, the overrides and the core rows, written as Parquet. No database.")
@transient_retries
def assemble_core(context: dg.OpExecutionContext, resolved: list[dict]) -> dict:
    first = resolved[0]
    folder = Path(first["folder"])
    core = sharded.assemble(folder, today=date.fromisoformat(first["day"]), options=_options(first),
                            author_figures=[r["resolved"] for r in resolved if r["resolved"]],
                            paper_seconds=first["paper_seconds"])
    sharded.save_core(core, folder)
    return {"folder": str(folder), "day": first["day"],
            "paper_shards": core.stats["paper_resolution"].get("shards", 0),
            "author_shards": core.stats["author_resolution"].get("shards", 0)}


@dg.op(pool=WAREHOUSE_POOL, out={name: dg.Out(dg.Nothing) for name in CORE_TABLES},
       description="Replace the core tables and the matchers' caches in one transaction (resolved again here, "
       "in one piece, if another run changed what the plan read).")
@transient_retries
def write_core_tables(context: dg.OpExecutionContext, warehouse_db: WarehouseResource, assembled: dict):
    folder = Path(assembled["folder"])
    settings = warehouse_db.settings()
    day = date.fromisoformat(assembled["day"])
    plan = sharded.plan_meta(folder)
    with warehouse_db.connect() as con:
        if core_build.inputs_fingerprint(con) == plan["fingerprint"]:
            core, until = sharded.load_core(folder), date.fromisoformat(plan["until"])
            core_build.write_core(con, core, until)
        else:  # another run wrote what the plan read: the shards' work is stale
            context.log.warning("the warehouse changed since the plan: resolving the night again in this step")
            core, until = core_build.resolve_in_warehouse(con, day, load_overrides(settings.overrides),
                                                          options=warehouse_db.match_options())
        # core.paper_listings is filled in SQL (every night's rows of each listing key): show the table
        listings_preview = warehouse.read_frame(con, "SELECT * FROM core.paper_listings ORDER BY listing_id LIMIT 5")
    shutil.rmtree(folder, ignore_errors=True)
    for name, metadata in _metadata(context, core, until, listings_preview, settings).items():
        yield dg.Output(None, output_name=name, metadata=metadata)


def _metadata(context, core, until, listings_preview, settings) -> dict[str, dict]:
    """What the UI shows of each core table: rows, a preview, and the night's figures."""
    stats = core.stats
    if stats["identifier_rejects"]:
        context.log.warning("identifier values turned down: " + ", ".join(
            f"{reason} {n}" for reason, n in stats["identifier_rejects"].items()) + "; see core.identifier_rejects")
    if stats["overrides_unmatched"]:
        context.log.warning("overrides that matched nothing: " + "; ".join(stats["overrides_unmatched"]))
    frames = {
        "papers": (core.papers, ["paper_id", "title", "year", "listings_count", "sources"]),
        "paper_identifiers": (core.paper_identifiers, ["paper_id", "scheme", "value", "sources", "linked_by"]),
        "identifier_rejects": (core.identifier_rejects, ["scheme", "value", "reason", "detail"]),
        "paper_listings": (listings_preview, ["listing_id", "paper_id", "method", "score"]),
        "authors": (core.authors, ["author_id", "display_name", "profiles_count", "papers_count"]),
        "author_names": (core.author_names, ["name_variant", "author_id", "mentions_count"]),
        "author_profiles": (core.author_profiles, ["source", "source_profile_id", "author_id", "method"]),
        "authorships": (core.authorships, ["paper_id", "author_id", "evidence"]),
        "match_review": (core.match_review, ["entity_type", "left_label", "right_label", "score"]),
        "id_redirects": (core.id_redirects, ["entity_type", "old_id", "new_id", "reason"]),
    }
    extra_meta = {
        "papers": {"listings_resolved": stats["listings_resolved"], "listings_merged": stats["listings_merged"],
                   "seconds_resolving_papers": stats["timings"]["resolve_papers"]["seconds"],
                   "match_methods": stats["paper_methods"], "resolved_through": str(until),
                   # title diffs taken from the previous run's cache (cache.title_diffs) vs computed now
                   "title_diffs_reused": stats["title_diffs_reused"], "title_diffs_computed": stats["title_diffs_computed"],
                   # incremental: only the papers tonight's changes can reach were re-resolved
                   "paper_resolution": stats["paper_resolution"].get("mode", "full"),
                   "paper_resolution_detail": ", ".join(f"{k}: {v}" for k, v in stats["paper_resolution"].items()),
                   # a full night's paper pairs were scored in this many score_paper_shard steps (0: one piece)
                   "paper_shards": stats["paper_resolution"].get("shards", 0)},
        "authors": {"author_mentions": stats["author_mentions"],
                    "seconds_resolving_authors": stats["timings"]["resolve_authors"]["seconds"],
                    # incremental: only the people tonight's changes can reach were re-resolved
                    "author_resolution": stats["author_resolution"].get("mode", "full"),
                    "author_resolution_detail": ", ".join(f"{k}: {v}" for k, v in stats["author_resolution"].items()),
                    # a full night's authors were resolved in this many resolve_author_shard steps (0: one piece)
                    "author_shards": stats["author_resolution"].get("shards", 0)},
        "match_review": {"review_queue": stats["review_queue"]},
        "paper_identifiers": {"by_scheme": dg.MetadataValue.json(stats["identifiers"]),
                              "seconds_attaching_identifiers": stats["timings"]["identifiers"]["seconds"]},
        "identifier_rejects": {"by_reason": dg.MetadataValue.json(stats["identifier_rejects"])},
        "id_redirects": {"redirects_new": stats["redirects_new"], "identifier_redirects": stats["identifier_redirects"],
                         "overrides_file": str(settings.overrides),
                         "overrides_applied": "\n".join(stats["overrides_applied"]) or "none",
                         "overrides_unmatched": "\n".join(stats["overrides_unmatched"]) or "none"},
    }
    row_counts = {"paper_listings": stats["paper_listings"]}
    return {name: {"dagster/row_count": row_counts.get(name, frame.height), "preview": preview(frame, cols),
                   **extra_meta.get(name, {})} for name, (frame, cols) in ((n, frames[n]) for n in CORE_TABLES)}


@dg.graph_multi_asset(
    name="core_tables",
    ins={name: dg.AssetIn(key=key, dagster_type=dg.Nothing) for name, key in UPSTREAM.items()},
    outs={name: dg.AssetOut(key=["core", name], kinds={"duckdb", "polars"}, description=DESCRIPTIONS[name])
          for name in CORE_TABLES},
    partitions_def=daily_partitions,
    group_name="core",
)
def core_tables(staging_listings, staging_profiles, author_lists, arxiv_title_searches, arxiv_works, openalex_works):
    """Resolve all staged listings and profiles up to the partition (papers, then authors, each in
    SCHOLARHOUSE_RESOLUTION_SHARDS shard steps on a full night) and replace the core tables in one transaction."""
    plan = plan_core(staging_listings=staging_listings, staging_profiles=staging_profiles, author_lists=author_lists,
                     arxiv_title_searches=arxiv_title_searches, arxiv_works=arxiv_works, openalex_works=openalex_works)
    scored = plan_paper_shards(plan).map(score_paper_shard)
    resolved = cluster_papers(scored.collect()).map(resolve_author_shard)
    written = write_core_tables(assemble_core(resolved.collect()))
    return {name: getattr(written, name) for name in CORE_TABLES}

"""core layer: entity resolution — one paper, one author — with stable ids and overrides."""

import dagster as dg

from pipelines import warehouse
from pipelines.core import build as core_build
from pipelines.assets.common import WAREHOUSE_POOL, night_window, preview, transient_retries
from pipelines.core.identity.overrides import load_overrides
from pipelines.assets.partitions import daily_partitions
from pipelines.resources import WarehouseResource
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


@dg.multi_asset(
    name="core_tables",
    specs=[
        dg.AssetSpec(["core", name], deps=[["staging", "listings"], ["staging", "profiles"],
                                           ["enrichment", "author_lists"], ["enrichment", "arxiv_title_searches"],
                                           ["enrichment", "arxiv_works"], ["enrichment", "openalex_works"]],
                     group_name="core", kinds={"duckdb", "polars"}, description=DESCRIPTIONS[name])
        for name in CORE_TABLES
    ],
    partitions_def=daily_partitions,
    pool=WAREHOUSE_POOL,
)
@transient_retries
def core_tables(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
    """Resolve all staged listings and profiles up to the partition; replace the core tables in one transaction."""
    night = night_window(context)
    settings = warehouse_db.settings()
    overrides = load_overrides(settings.overrides)
    with warehouse_db.connect() as con:
        core, until = core_build.resolve_in_warehouse(con, night.day, overrides, options=warehouse_db.match_options())
        # core.paper_listings is filled in SQL (every night's rows of each listing key): show the table
        listings_preview = warehouse.read_frame(con, "SELECT * FROM core.paper_listings ORDER BY listing_id LIMIT 5")
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
                   "paper_resolution_detail": ", ".join(f"{k}: {v}" for k, v in stats["paper_resolution"].items())},
        "authors": {"author_mentions": stats["author_mentions"],
                    "seconds_resolving_authors": stats["timings"]["resolve_authors"]["seconds"],
                    # incremental: only the people tonight's changes can reach were re-resolved
                    "author_resolution": stats["author_resolution"].get("mode", "full"),
                    "author_resolution_detail": ", ".join(f"{k}: {v}" for k, v in stats["author_resolution"].items())},
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
    for name in CORE_TABLES:
        frame, cols = frames[name]
        yield dg.MaterializeResult(
            asset_key=["core", name],
            metadata={"dagster/row_count": row_counts.get(name, frame.height), "preview": preview(frame, cols), **extra_meta.get(name, {})},
        )


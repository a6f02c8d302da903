"""enrichment layer: full author lists, arXiv metadata and OpenAlex citation counts for listed papers.

Two steps per partition, each replacing its tables' slice in one transaction:

1. ``arxiv_enrichment`` → ``enrichment/arxiv_works``, ``enrichment/arxiv_title_searches``,
   ``enrichment/arxiv_rejects``
2. ``openalex_enrichment`` → ``enrichment/openalex_works``, ``enrichment/openalex_authors``,
   ``enrichment/author_lists`` (built here, after both APIs: arXiv's lists carry OpenAlex's ORCIDs),
   ``enrichment/openalex_rejects``

Every answer is checked against what was asked before it is kept (``pipelines/ingest/sources/answers.py``);
the ones turned down, and every failed lookup, are the ``*_rejects`` rows with their reason, and
the step logs a warning with their count.

They read ``staging`` (not ``core``: core reads ``enrichment.author_lists``, so core runs after
these). What is looked up, and why: ``pipelines/ingest/api_lookups.py``. Whether it runs at all:
``EnrichmentResource`` — without a contact address the steps write empty slices, do no I/O and
say so in their metadata. API failures and a spent budget are reported, never raised.
"""

# No ``from __future__ import annotations``: Dagster reads the asset functions' annotations at
# definition time (context type, resources) and rejects them as strings.
from typing import Any

import dagster as dg
import polars as pl

from pipelines.ingest import api_lookups as enrich
from pipelines import warehouse
from pipelines.assets.common import WAREHOUSE_POOL, NightWindow, night_window, preview, transient_retries
from pipelines.assets.partitions import daily_partitions
from pipelines.resources.apis import EnrichmentResource
from pipelines.resources.warehouse import WarehouseResource

STAGING = [["staging", "listings"], ["staging", "profiles"]]
ARXIV_TABLES = {
    "arxiv_works": (
        enrich.ARXIV_WORKS_SCHEMA,
        "arXiv records of the listed papers, as of the capture date: full author list, versions, "
        "categories, journal DOI. Found by the arXiv id a listing carries (matched_by='id') or by exact "
        "title plus a shared author (matched_by='title').",
        ["arxiv_id", "title", "authors", "primary_category", "matched_by"],
    ),
    "arxiv_title_searches": (
        enrich.TITLE_SEARCH_SCHEMA,
        "Exact-title searches on arXiv for listings without an id (at most max_title_searches a night) "
        "and their outcome: found, not_found, rejected (same title, no author in common) or error.",
        ["title", "outcome", "arxiv_id", "detail"],
    ),
    "arxiv_rejects": (
        enrich.REJECTS_SCHEMA,
        "arXiv lookups that gave nothing usable, with the reason: an answer about another paper or version, "
        "an unreadable answer (error entry, invalid XML, HTML page, oversize), not found, or no answer.",
        ["lookup", "asked", "reason", "detail"],
    ),
}
OPENALEX_TABLES = {
    "openalex_works": (
        enrich.OPENALEX_WORKS_SCHEMA,
        "OpenAlex works of the listed papers, as of the capture date: cited_by_count and counts_by_year "
        "(marts.citations builds per-paper series from them). By arXiv DOI, or by title for papers arXiv "
        "does not have.",
        ["openalex_id", "arxiv_id", "title", "cited_by_count", "matched_by"],
    ),
    "openalex_authors": (
        enrich.OPENALEX_AUTHORS_SCHEMA,
        "OpenAlex authors looked up by the ORCIDs the works carry (profile owners first): works, "
        "citations, h-index as OpenAlex computes them.",
        ["openalex_id", "orcid", "display_name", "works_count", "h_index"],
    ),
    "author_lists": (
        enrich.AUTHOR_LISTS_SCHEMA,
        "One row per author of each enriched paper: the full list that replaces truncated bylines as "
        "authorship evidence (core joins it on arxiv_id), with ORCID and OpenAlex author id where known.",
        ["arxiv_id", "author_position", "name", "evidence", "orcid"],
    ),
    "openalex_rejects": (
        enrich.REJECTS_SCHEMA,
        "OpenAlex lookups that gave nothing usable, with the reason: another work or person than asked "
        "(other DOI, merged id, incompatible title/year/authors/name), an unreadable answer (error JSON, "
        "invalid JSON, HTML page, empty list, oversize), not found, or no answer.",
        ["lookup", "asked", "reason", "detail"],
    ),
}
# What downstream steps depend on (core reads author_lists and, for title matches,
# arxiv_title_searches; marts.citations reads openalex_works).
ENRICHMENT_KEYS = [dg.AssetKey(["enrichment", name]) for name in (*ARXIV_TABLES, *OPENALEX_TABLES)]


def _specs(tables: dict, deps: list) -> list[dg.AssetSpec]:
    return [
        dg.AssetSpec(["enrichment", name], deps=deps, group_name="enrichment",
                     kinds={"duckdb", "polars", "python"}, description=desc)
        for name, (_schema, desc, _cols) in tables.items()
    ]


def _metadata_value(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return dg.MetadataValue.json(value)
    return "none" if value is None else value


def _emit(tables: dict, frames: dict[str, pl.DataFrame], common: dict[str, Any]):
    for name, (schema, _desc, columns) in tables.items():
        frame = frames[name] if name in frames else enrich.empty(schema)
        yield dg.MaterializeResult(
            asset_key=["enrichment", name],
            metadata={"dagster/row_count": frame.height, "preview": preview(frame, columns),
                      **{k: _metadata_value(v) for k, v in common.items()}},
        )


def _warn_rejects(context: dg.AssetExecutionContext, api: str, night: NightWindow, report: dict[str, Any]) -> None:
    """One warning line per problem: turned-down answers (by reason), and an API given up for the night."""
    if report.get("rejected"):
        reasons = ", ".join(f"{reason} {n}" for reason, n in report["rejected_by_reason"].items())
        context.log.warning(f"{api} {night.key}: {report['rejected']} lookups rejected ({reasons}); "
                            f"see enrichment.{api.lower()}_rejects")
    if report.get("stopped"):
        context.log.warning(f"{api} stopped for {night.key}: {report['stopped']}")


def _write_night(warehouse_db: WarehouseResource, night: NightWindow,
                 frames: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Replace the night's slice of the enrichment tables ``frames`` names with their rows (stamped
    with the night's ``partition_date``), all in one transaction; returns the rows written."""
    frames = {name: enrich.with_partition(frame, night.day) for name, frame in frames.items()}
    with warehouse_db.connect() as con:
        warehouse.replace_slice(con, [(f"enrichment.{name}", frame) for name, frame in frames.items()],
                                where="partition_date = ?", params=[night.day])
    return frames


def _skipped(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, api: str, tables: dict,
             night: NightWindow, reason: str):
    """An API's enrichment that does not run tonight (``reason``): its tables' slices emptied, and
    their results saying why."""
    context.log.info(f"{api} enrichment {reason}")
    _write_night(warehouse_db, night, {name: enrich.empty(schema) for name, (schema, _d, _c) in tables.items()})
    yield from _emit(tables, {}, {"enrichment": reason})


def _staging(con, night: NightWindow) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every staged listing and profile up to the night."""
    listings = warehouse.read_frame(
        con, "SELECT partition_date, source, source_profile_id, title, year, arxiv_id, byline_authors "
             "FROM staging.listings WHERE partition_date <= ?", [night.day])
    profiles = warehouse.read_frame(
        con, "SELECT partition_date, source, source_profile_id, name FROM staging.profiles WHERE partition_date <= ?",
        [night.day])
    return listings, profiles


def _lookup_inputs(con, night: NightWindow) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """What both APIs' lookups start from: the staged listings and profiles up to the night, and every
    arXiv title search stored."""
    listings, profiles = _staging(con, night)
    return listings, profiles, warehouse.read_frame(con, "SELECT * FROM enrichment.arxiv_title_searches")


@dg.multi_asset(
    name="arxiv_enrichment",
    specs=_specs(ARXIV_TABLES, STAGING),
    partitions_def=daily_partitions,
    pool=WAREHOUSE_POOL,
)
@transient_retries
def arxiv_enrichment(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, enrichment: EnrichmentResource):
    """Fetch arXiv records for the papers listed up to the partition; search titles without an id."""
    night = night_window(context)
    status = enrichment.status()
    for warning in status.warnings:
        context.log.warning(warning)
    if not status.enabled:
        yield from _skipped(context, warehouse_db, "arXiv", ARXIV_TABLES, night, status.reason)
        return
    limits = enrichment.limits()
    with enrichment.clients() as api:
        # Read, close, fetch, reopen, write: no DuckDB connection is held while waiting on arXiv.
        with warehouse_db.connect() as con:
            listings, profiles, searches = _lookup_inputs(con, night)
        result = enrich.enrich_arxiv(api.arxiv, listings=listings, profiles=profiles, searches=searches,
                                     day=night.day, limits=limits)
    out = _write_night(warehouse_db, night, {"arxiv_works": result.works, "arxiv_title_searches": result.title_searches,
                                             "arxiv_rejects": result.rejects})
    _warn_rejects(context, "arXiv", night, result.report)
    yield from _emit(ARXIV_TABLES, out, {"enrichment": "enabled", "arxiv": result.report,
                                         "api": enrichment.describe()})


@dg.multi_asset(
    name="openalex_enrichment",
    specs=_specs(OPENALEX_TABLES, [*STAGING, *(["enrichment", name] for name in ARXIV_TABLES)]),
    partitions_def=daily_partitions,
    pool=WAREHOUSE_POOL,
)
@transient_retries
def openalex_enrichment(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, enrichment: EnrichmentResource):
    """Look the partition's papers (and their ORCID authors) up in OpenAlex; build the full author lists."""
    night = night_window(context)
    status = enrichment.status()
    if not status.enabled:
        yield from _skipped(context, warehouse_db, "OpenAlex", OPENALEX_TABLES, night, status.reason)
        return
    limits = enrichment.limits()
    with enrichment.clients() as api:
        with warehouse_db.connect() as con:
            listings, profiles, searches = _lookup_inputs(con, night)
            arxiv_works = warehouse.read_frame(
                con, "SELECT * FROM enrichment.arxiv_works WHERE partition_date = ?", [night.day])
            matched = con.execute(
                "SELECT DISTINCT title_key FROM enrichment.openalex_works "
                "WHERE matched_by = 'title' AND title_key IS NOT NULL AND partition_date <> ?", [night.day]).fetchall()
        result = enrich.enrich_openalex(
            api.openalex, listings=listings, profiles=profiles, searches=searches, arxiv_works=arxiv_works,
            day=night.day, limits=limits, previously_matched=[m[0] for m in matched],
        )
    out = _write_night(warehouse_db, night, {"openalex_works": result.works, "openalex_authors": result.authors,
                                             "author_lists": result.author_lists, "openalex_rejects": result.rejects})
    _warn_rejects(context, "OpenAlex", night, result.report)
    yield from _emit(OPENALEX_TABLES, out, {"enrichment": "enabled", "openalex": result.report,
                                            "api": enrichment.describe()})

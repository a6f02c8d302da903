"""marts layer: metrics and citations with provenance, novelty and AI scores, collaboration edges."""

import dagster as dg

from pipelines import marts, warehouse
from pipelines.assets.common import WAREHOUSE_POOL, night_window, preview, transient_retries
from pipelines.partitions import daily_partitions
from pipelines.resources import WarehouseResource

CORE = lambda *names: [["core", n] for n in names]  # noqa: E731
COMMON = dict(group_name="marts", partitions_def=daily_partitions, pool=WAREHOUSE_POOL)


def _result(con, table: str, columns: list[str], **extra) -> dg.MaterializeResult:
    frame = warehouse.read_frame(con, f"SELECT * FROM {table} LIMIT 5")
    count = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    return dg.MaterializeResult(metadata={"dagster/row_count": count, "preview": preview(frame, columns), **extra})


@dg.asset(key=["marts", "author_metrics"],
          deps=[["staging", "profiles"], ["enrichment", "openalex_works"],
                *CORE("author_profiles", "authorships", "papers", "paper_identifiers", "id_redirects")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Per profile and capture date: every metric the source reports (h-index, citations, "
          "papers/works, followers, trust, Novelty %, AI Score) next to what the warehouse recomputes (papers "
          "held; citations, h-index and i10 from the per-paper counts of the person's papers, with their "
          "coverage and source), with provenance and the flags h_index_implausible and listing_incomplete. "
          "SQL: sql/marts/author_metrics.sql")
@transient_retries
def author_metrics(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect() as con:
        marts.build_author_metrics(con, night.day)
        flagged = con.execute(
            "SELECT count(*) FILTER (h_index_implausible), count(*) FILTER (listing_incomplete), "
            "count(*) FILTER (recomputed_h_index IS NOT NULL) "
            "FROM marts.author_metrics WHERE as_of = ?", [night.day]).fetchall()[0]
        return _result(con, "marts.author_metrics",
                       ["source", "profile_name", "reported_h_index", "recomputed_h_index", "citation_coverage",
                        "h_index_implausible", "listing_incomplete"],
                       h_index_implausible=flagged[0], listing_incomplete=flagged[1], profiles_recomputed=flagged[2])


@dg.asset(key=["marts", "citations"],
          deps=[["staging", "profiles"], ["enrichment", "openalex_works"],
                *CORE("author_profiles", "papers", "paper_identifiers", "id_redirects")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Citation counts over time with the change since the previous point: per profile "
          "(reported totals) and per paper (OpenAlex, when enriched: the nightly totals, and the citations "
          "received in each year from counts_by_year). Rebuilt over the whole history, so a backfill fills "
          "the series. SQL: sql/marts/citations.sql")
@transient_retries
def citations(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_citations(con)
        by_measure = dict(con.execute("SELECT level || ':' || measure, count(*) FROM marts.citations GROUP BY 1 ORDER BY 1").fetchall())
        return _result(con, "marts.citations", ["level", "measure", "source", "paper_id", "as_of", "year", "citations", "change"],
                       rows_by_measure=dg.MetadataValue.json(by_measure))


# A run tagged with this key and the value "new" fits a new novelty epoch (every paper re-scored).
NEW_EPOCH_TAG = "scholarhouse/novelty_epoch"


@dg.asset(key=["marts", "paper_scores"], deps=CORE("papers", "paper_listings"),
          kinds={"duckdb", "polars"}, **COMMON,
          description="Per paper: the score sources report (Scholar Feed) and our own novelty score — distance "
          "to the most similar earlier papers in the same category (TF-IDF), its percentile within category "
          "and year, and the share of new terms. Scored once, when the paper arrives, with the vocabulary and "
          "IDF of the current epoch (epoch_id); every paper is re-scored in a new epoch: weekly "
          "(SCHOLARHOUSE_NOVELTY_EPOCH_DAYS), on a new scorer version, or for a run tagged "
          f"{NEW_EPOCH_TAG}=new. Definition: docs/scoring.md")
@transient_retries
def paper_scores(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    settings = warehouse_db.settings()
    asked = context.run.tags.get(NEW_EPOCH_TAG, "").strip().lower() == "new"
    day = night_window(context).day
    with warehouse_db.connect() as con:
        night = marts.build_paper_scores(con, day, novelty_window=settings.novelty_window,
                                         epoch_days=settings.novelty_epoch_days, new_epoch=asked)
        return _result(con, "marts.paper_scores", ["paper_id", "category", "novelty_raw", "novelty_percentile", "novelty_score"],
                       method_version=marts.METHOD_VERSION, epoch_id=night.epoch_id, mode=night.mode,
                       new_epoch_reason=night.reason or "", papers_scored_tonight=night.scored,
                       scores_kept=night.kept, scores_removed=night.removed, cold_start=night.cold_start)


@dg.asset(key=["marts", "author_scores"], deps=[["marts", "paper_scores"], *CORE("authors", "authorships", "author_profiles")],
          kinds={"duckdb", "sql"}, **COMMON,
          description="Per author and source: reported Novelty % and AI Score, and our computed author novelty "
          "(mean paper percentile, with the paper count behind it). SQL: sql/marts/author_scores.sql")
@transient_retries
def author_scores(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_author_scores(con)
        return _result(con, "marts.author_scores", ["author_id", "source", "reported_novelty_pct", "computed_novelty", "papers_scored"])


@dg.asset(key=["marts", "collaboration_edges"], deps=CORE("authorships", "papers"),
          kinds={"duckdb", "sql"}, **COMMON,
          description="One row per unordered author pair who share a paper: papers_count, first/last year, the "
          "paper ids and the evidence. No self-edges; truncated bylines never invent edges. "
          "SQL: sql/marts/collaboration_edges.sql")
@transient_retries
def collaboration_edges(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        marts.build_collaboration_edges(con)
        return _result(con, "marts.collaboration_edges", ["author_a", "author_b", "papers_count", "first_year", "last_year"])


@dg.asset(key=["marts", "nightly_summary"],
          deps=[["raw", "page_captures"], ["staging", "profiles"], ["staging", "listings"], ["staging", "rejects"],
                ["staging", "quality_issues"], *CORE("papers", "authors", "match_review"), ["marts", "collaboration_edges"]],
          kinds={"duckdb", "sql"}, **COMMON,
          description="One row per night: what it landed (pages, profiles, listings, rejects, values with an issue) "
          "and what the warehouse held after it (papers, authors, the review queue by entity, collaboration edges). "
          "The nightly report draws the nights from it. SQL: sql/marts/nightly_summary.sql")
@transient_retries
def nightly_summary(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    night = night_window(context)
    with warehouse_db.connect() as con:
        marts.build_nightly_summary(con, night.day)
        return _result(con, "marts.nightly_summary",
                       ["as_of", "pages", "profiles", "rejects", "review_paper_pairs", "review_author_pairs"])

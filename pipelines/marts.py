"""Building the marts: analyst-readable SQL from sql/marts/, plus the Polars novelty scorer.
No Dagster imports; the assets call these with an open connection."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl

from pipelines import warehouse
from pipelines.scoring import METHOD_VERSION, score_paper_novelty

MAX_AUTHORS_FOR_EDGES = 100


def _insert_sql(con: duckdb.DuckDBPyConnection, table: str, sql_name: str, params: dict, where: str | None = None,
                where_params: list | None = None) -> int:
    """Replace a slice (or all) of ``table`` with the rows of sql/<sql_name>.sql, in one transaction."""
    select = warehouse.read_sql(sql_name)
    with warehouse.transaction(con):
        if where:
            con.execute(f"DELETE FROM {table} WHERE {where}", where_params or [])
        else:
            con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} BY NAME {select}", params)
    return con.execute(f"SELECT count(*) FROM {table}" + (f" WHERE {where}" if where else ""), where_params or []).fetchall()[0][0]


# Recomputed metrics judge a reported h-index only when the warehouse holds a per-paper count for at
# least this share of the person's papers (marts.author_metrics.citation_coverage) ...
MIN_CITATION_COVERAGE = 0.8
# ... and flag it only beyond FACTOR x bound + ADD: the sites' citation databases may count more than
# OpenAlex does, so the recomputed bound is a yardstick, not a proof (docs/warehouse.md).
H_INDEX_MARGIN_FACTOR = 1.5
H_INDEX_MARGIN_ADD = 2


def build_author_metrics(con: duckdb.DuckDBPyConnection, as_of: date) -> int:
    _paper_citation_snapshots(con)
    return _insert_sql(con, "marts.author_metrics", "marts/author_metrics",
                       {"as_of": as_of, "min_coverage": MIN_CITATION_COVERAGE,
                        "h_margin_factor": H_INDEX_MARGIN_FACTOR, "h_margin_add": H_INDEX_MARGIN_ADD},
                       where="as_of = ?", where_params=[as_of])


def _paper_citation_snapshots(con: duckdb.DuckDBPyConnection) -> None:
    """The temp view ``paper_citation_snapshots`` (sql/marts/paper_citation_snapshots.sql): per paper
    and night, OpenAlex's count and yearly series, linked through the crosswalk."""
    con.execute("CREATE OR REPLACE TEMP VIEW paper_citation_snapshots AS "
                + warehouse.read_sql("marts/paper_citation_snapshots"))


def build_citations(con: duckdb.DuckDBPyConnection) -> int:
    _paper_citation_snapshots(con)
    return _insert_sql(con, "marts.citations", "marts/citations", {})


def build_collaboration_edges(con: duckdb.DuckDBPyConnection) -> int:
    return _insert_sql(con, "marts.collaboration_edges", "marts/collaboration_edges", {"max_authors": MAX_AUTHORS_FOR_EDGES})


def build_nightly_summary(con: duckdb.DuckDBPyConnection, as_of: date) -> int:
    return _insert_sql(con, "marts.nightly_summary", "marts/nightly_summary", {"as_of": as_of},
                       where="as_of = ?", where_params=[as_of])


def build_author_scores(con: duckdb.DuckDBPyConnection) -> int:
    return _insert_sql(con, "marts.author_scores", "marts/author_scores", {"method_version": METHOD_VERSION})


def paper_scores_frame(con: duckdb.DuckDBPyConnection, *, novelty_window: int | None | str = "default") -> pl.DataFrame:
    """``novelty_window``: the setting ``SCHOLARHOUSE_NOVELTY_WINDOW`` (see ``score_paper_novelty``)."""
    papers = warehouse.read_frame(con, "SELECT paper_id, title, abstract, category, year, pub_date FROM core.papers")
    # The score a listing shows now: its current row's, like every other paper field (the core
    # step's rule, sql/core/current_listings.sql: the newest night, then the smallest listing_id);
    # an older night's score of a listing is history, not what the page reports.
    reported = warehouse.read_frame(con, """
        SELECT paper_id, max(listing_score) AS reported_score, 'scholarfeed' AS reported_score_source
        FROM (
            SELECT pl.paper_id, l.listing_score
            FROM core.paper_listings pl JOIN staging.listings l USING (listing_id)
            QUALIFY row_number() OVER (PARTITION BY l.listing_key ORDER BY l.partition_date DESC, l.listing_id) = 1
        )
        WHERE listing_score IS NOT NULL
        GROUP BY paper_id
    """)
    scores = score_paper_novelty(papers, window=novelty_window)
    # What the pages say about the paper, carried through (core.papers): the site's Code flag, and
    # whether the year the score is grouped by was inferred from year-less dates.
    flags = warehouse.read_frame(con, "SELECT paper_id, has_code, year_inferred FROM core.papers")
    return scores.join(reported, on="paper_id", how="left").join(flags, on="paper_id", how="left")


def build_paper_scores(con: duckdb.DuckDBPyConnection, *, novelty_window: int | None | str = "default") -> pl.DataFrame:
    frame = paper_scores_frame(con, novelty_window=novelty_window)
    columns = warehouse.table_columns(con, "marts.paper_scores")
    frame = frame.select([c for c in columns if c in frame.columns])
    warehouse.replace_slice(con, [("marts.paper_scores", frame)])
    return frame


def build_marts(con: duckdb.DuckDBPyConnection, as_of: date, *, timer=None,
                novelty_window: int | None | str = "default") -> dict[str, int]:
    """Every mart, in dependency order (what `make bench` times; the assets run them one by one)."""
    from pipelines.profiling import StageTimer

    timer = timer or StageTimer()
    counts = {}
    with timer.stage("marts"):
        counts["marts.author_metrics"] = build_author_metrics(con, as_of)
        counts["marts.citations"] = build_citations(con)
        counts["marts.paper_scores"] = build_paper_scores(con, novelty_window=novelty_window).height
        counts["marts.author_scores"] = build_author_scores(con)
        counts["marts.collaboration_edges"] = build_collaboration_edges(con)
        counts["marts.nightly_summary"] = build_nightly_summary(con, as_of)
    return counts

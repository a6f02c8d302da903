-- marts.nightly_summary: one row for the night $as_of — what it landed (its partition of raw and
-- staging) and what the warehouse held after its run (core, the edges). Re-running the night replaces
-- the row. The core figures are the state the run left: a backfill of an older night records the
-- history-wide tables as they stand at the backfill (core never rolls back in time).
SELECT
    CAST($as_of AS DATE)                                                             AS as_of,
    (SELECT count(*) FROM raw.page_captures    WHERE partition_date = $as_of)        AS pages,
    (SELECT count(*) FROM staging.profiles     WHERE partition_date = $as_of)        AS profiles,
    (SELECT count(*) FROM staging.listings     WHERE partition_date = $as_of)        AS listings,
    (SELECT count(*) FROM staging.rejects      WHERE partition_date = $as_of)        AS rejects,
    (SELECT count(*) FROM staging.quality_issues WHERE partition_date = $as_of)      AS quality_issues,
    (SELECT count(*) FROM core.papers)                                               AS papers,
    (SELECT count(*) FROM core.authors)                                              AS authors,
    (SELECT count(*) FROM core.match_review WHERE entity_type = 'paper')             AS review_paper_pairs,
    (SELECT count(*) FROM core.match_review WHERE entity_type = 'author')            AS review_author_pairs,
    (SELECT count(*) FROM marts.collaboration_edges)                                 AS collaboration_edges,
    now()                                                                            AS built_at

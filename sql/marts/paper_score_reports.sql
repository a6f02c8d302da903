-- What the pages say about each paper, carried into marts.paper_scores next to our own score and
-- refreshed every night for every paper (the score itself is kept; these columns follow the pages):
-- the score a listing shows now, its current row's, like every other paper field (the core step's
-- rule, sql/core/current_listings.sql: the newest night, then the smallest listing_id; an older
-- night's score of a listing is history, not what the page reports), the site's Code flag, and
-- whether the year the score is grouped by was inferred from year-less dates (core.papers).
WITH reported AS (
    SELECT paper_id, max(listing_score) AS reported_score
    FROM (
        SELECT pl.paper_id, l.listing_score
        FROM core.paper_listings pl JOIN staging.listings l USING (listing_id)
        QUALIFY row_number() OVER (PARTITION BY l.listing_key ORDER BY l.partition_date DESC, l.listing_id) = 1
    )
    WHERE listing_score IS NOT NULL
    GROUP BY paper_id
)
SELECT
    p.paper_id,
    r.reported_score,
    CASE WHEN r.reported_score IS NOT NULL THEN 'scholarfeed' END AS reported_score_source,
    p.has_code,
    p.year_inferred
FROM core.papers p
LEFT JOIN reported r USING (paper_id)

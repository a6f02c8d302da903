-- What the pages say about each paper, carried into marts.paper_scores next to our own score and
-- refreshed every night for every paper (the score itself is kept; these columns follow the pages):
-- the score a listing shows now, its current row's, like every other paper field (the core step's
-- rule, sql/core/current_listings.sql: the newest night, then the smallest listing_id; an older
-- night's score of a listing is history, not what the page reports), the site's Code flag, and
-- whether the year the score is grouped by was inferred from year-less dates (core.papers).
WITH window_end AS (
    -- the newest night core resolved (core.papers.last_seen is its listings' newest night): the rows of
    -- core.paper_listings are every staged row up to it
    SELECT max(last_seen) AS night FROM core.papers
),
newest AS (
    SELECT l.listing_key, max(n.last_night) AS night
    FROM staging.parsed_listings AS l
    JOIN (SELECT parse_id, max(partition_date) AS last_night
          FROM staging.night_fetches
          WHERE role = 'parsed' AND partition_date <= (SELECT night FROM window_end)
          GROUP BY parse_id) AS n USING (parse_id)
    GROUP BY l.listing_key
),
current_rows AS (
    -- each key's current row, with the listing_id staging.listings gives it (the view's expression),
    -- computed for these rows only: the parses and the nights that show them are read, not the view
    SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16) AS listing_id,
           l.listing_score
    FROM newest AS k
    JOIN staging.parsed_listings AS l USING (listing_key)
    JOIN staging.night_fetches AS n ON n.parse_id = l.parse_id AND n.partition_date = k.night AND n.role = 'parsed'
    QUALIFY row_number() OVER (PARTITION BY l.listing_key ORDER BY listing_id) = 1
),
reported AS (
    SELECT pl.paper_id, max(c.listing_score) AS reported_score
    FROM current_rows AS c
    JOIN core.paper_listings AS pl USING (listing_id)
    WHERE c.listing_score IS NOT NULL
    GROUP BY pl.paper_id
)
SELECT
    p.paper_id,
    r.reported_score,
    CASE WHEN r.reported_score IS NOT NULL THEN 'scholarfeed' END AS reported_score_source,
    p.has_code,
    p.year_inferred
FROM core.papers p
LEFT JOIN reported r USING (paper_id)

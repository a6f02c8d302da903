-- marts.citations: citation counts over time, with the change since the previous point.
-- Author level (measure 'total'): the total each profile reports, one row per partition date it was captured.
-- Paper level, measure 'total': the per-paper count OpenAlex gave, one row per night it was fetched
--   (our own nightly observations); measure 'in_year': the citations the paper received in each
--   calendar year, from the counts_by_year of its newest OpenAlex record (as_of = that night).
--   OpenAlex leaves out years without citations: the years between the first year it lists and the
--   record's year are filled with 0.
-- Every paper-level count comes from paper_citation_snapshots (sql/marts/paper_citation_snapshots.sql):
-- works linked to papers by arXiv id or a verified title, through core.paper_identifiers.
-- Rebuilt over the whole history, so backfilling an old partition fills (and re-links) the series.
WITH author_level AS (
    SELECT 'author' AS level, 'total' AS measure, p.source, p.source_profile_id, ap.author_id,
           CAST(NULL AS VARCHAR) AS paper_id, p.partition_date AS as_of, CAST(NULL AS INTEGER) AS year,
           p.citations, p.capture_id
    FROM staging.profiles p
    LEFT JOIN core.author_profiles ap USING (source, source_profile_id)
    WHERE p.citations IS NOT NULL
    -- one point per profile and date: complete capture first, then the latest
    QUALIFY row_number() OVER (PARTITION BY p.source, p.source_profile_id, p.partition_date
                               ORDER BY p.truncated, p.captured_at DESC, p.capture_id) = 1
),
paper_level AS (
    SELECT 'paper' AS level, 'total' AS measure, s.source, CAST(NULL AS VARCHAR) AS source_profile_id,
           CAST(NULL AS VARCHAR) AS author_id, s.paper_id, s.as_of, CAST(NULL AS INTEGER) AS year,
           s.citations, s.capture_id
    FROM paper_citation_snapshots s
),
newest AS (   -- each paper's newest record: the yearly series it gives
    SELECT * FROM paper_citation_snapshots
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY as_of DESC) = 1
),
listed AS (
    SELECT n.paper_id, n.source, n.as_of, n.capture_id, unnest(n.counts_by_year) AS c
    FROM newest n
),
counted AS (
    SELECT paper_id, source, as_of, capture_id, c.year AS year, sum(c.cited_by_count) AS citations
    FROM listed
    WHERE c.year IS NOT NULL AND c.cited_by_count IS NOT NULL
    GROUP BY paper_id, source, as_of, capture_id, c.year
),
spans AS (
    SELECT paper_id, source, as_of, capture_id, min(year) AS first_year,
           greatest(max(year), CAST(year(as_of) AS INTEGER)) AS last_year
    FROM counted
    GROUP BY paper_id, source, as_of, capture_id
),
paper_years AS (
    SELECT 'paper' AS level, 'in_year' AS measure, y.source, CAST(NULL AS VARCHAR) AS source_profile_id,
           CAST(NULL AS VARCHAR) AS author_id, y.paper_id, y.as_of, CAST(y.year AS INTEGER) AS year,
           CAST(coalesce(c.citations, 0) AS INTEGER) AS citations, y.capture_id
    FROM (SELECT s.*, unnest(range(s.first_year, s.last_year + 1)) AS year FROM spans s) y
    LEFT JOIN counted c ON c.paper_id = y.paper_id AND c.year = y.year
),
series AS (
    SELECT * FROM author_level
    UNION ALL
    SELECT * FROM paper_level
    UNION ALL
    SELECT * FROM paper_years
)
SELECT
    level, measure, source, source_profile_id, author_id, paper_id, as_of, year, citations,
    CASE WHEN measure = 'total' THEN lag(as_of) OVER w END AS previous_as_of,
    lag(citations) OVER w                                   AS previous_citations,
    citations - lag(citations) OVER w                       AS change,
    capture_id
FROM series
WINDOW w AS (PARTITION BY level, measure, source, coalesce(source_profile_id, ''), coalesce(paper_id, '')
             ORDER BY as_of, year)
ORDER BY level, measure, source, source_profile_id, paper_id, as_of, year

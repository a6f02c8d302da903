-- marts.citations: citation counts over time, with the change since the previous capture.
-- Author level: the total each profile reports, one row per partition date it was captured.
-- Paper level: per-paper counts where a source gives them (OpenAlex enrichment), one row per fetch date.
-- Rebuilt over the whole history, so backfilling an old partition fills (and re-links) the series.
WITH author_level AS (
    SELECT 'author' AS level, p.source, p.source_profile_id, ap.author_id, CAST(NULL AS VARCHAR) AS paper_id,
           p.partition_date AS as_of, p.citations, p.capture_id
    FROM staging.profiles p
    LEFT JOIN core.author_profiles ap USING (source, source_profile_id)
    WHERE p.citations IS NOT NULL
    -- one point per profile and date: complete capture first, then the latest
    QUALIFY row_number() OVER (PARTITION BY p.source, p.source_profile_id, p.partition_date
                               ORDER BY p.truncated, p.captured_at DESC, p.capture_id) = 1
),
paper_level AS (
    SELECT 'paper' AS level, w.source, CAST(NULL AS VARCHAR) AS source_profile_id, CAST(NULL AS VARCHAR) AS author_id,
           w.paper_id, w.as_of, w.citations, w.capture_id
    FROM paper_citation_snapshots w
),
series AS (
    SELECT * FROM author_level
    UNION ALL
    SELECT * FROM paper_level
)
SELECT
    level, source, source_profile_id, author_id, paper_id, as_of, citations,
    lag(as_of)     OVER w AS previous_as_of,
    lag(citations) OVER w AS previous_citations,
    citations - lag(citations) OVER w AS change,
    capture_id
FROM series
WINDOW w AS (PARTITION BY level, source, coalesce(source_profile_id, ''), coalesce(paper_id, '') ORDER BY as_of)
ORDER BY level, source, source_profile_id, paper_id, as_of

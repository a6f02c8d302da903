-- marts.author_scores: the scores sources report for an author (latest capture per profile), next to
-- our own computed author novelty: the mean novelty percentile of the author's papers
-- (marts.paper_scores), with the number of papers behind it. Authors with no site profile
-- (known from bylines only) get one row with source NULL.
-- The mean is summed as DECIMAL: exact, so the same in every run. A DOUBLE sum depends on the order
-- DuckDB's threads add the rows in, and two runs of the same night differed in the last bits of
-- ~5,500 of 39,281 rows at 10k profiles (make cluster-demo's comparison found it).
WITH computed AS (
    SELECT a.author_id,
           avg(CAST(s.novelty_percentile AS DECIMAL(18, 9)))::DOUBLE AS computed_novelty,
           count(s.novelty_percentile) AS papers_scored,
           any_value(s.method_version) AS method_version
    FROM core.authorships a
    JOIN marts.paper_scores s USING (paper_id)
    GROUP BY a.author_id
),
latest_profile AS (
    SELECT p.source, p.source_profile_id, p.partition_date AS as_of, p.novelty_pct, p.ai_score
    FROM staging.profiles p
    QUALIFY row_number() OVER (PARTITION BY p.source, p.source_profile_id ORDER BY p.partition_date DESC, p.captured_at DESC) = 1
),
reported AS (
    SELECT ap.author_id, lp.source, lp.source_profile_id, lp.as_of, lp.novelty_pct, lp.ai_score
    FROM core.author_profiles ap
    JOIN latest_profile lp USING (source, source_profile_id)
)
SELECT
    au.author_id,
    r.source,
    r.source_profile_id,
    r.as_of,
    r.novelty_pct                    AS reported_novelty_pct,
    r.ai_score                       AS reported_ai_score,
    c.computed_novelty,
    coalesce(c.papers_scored, 0)     AS papers_scored,
    coalesce(c.method_version, $method_version) AS method_version
FROM core.authors au
LEFT JOIN reported r USING (author_id)
LEFT JOIN computed c USING (author_id)
ORDER BY au.author_id, r.source, r.source_profile_id

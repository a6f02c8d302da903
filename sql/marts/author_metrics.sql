-- marts.author_metrics: every metric a profile reports, next to what the warehouse can recompute.
-- One row per profile captured on the partition date $as_of.
--   h_index_implausible: reported h-index > min(reported papers, floor(sqrt(reported citations)))
--     (h papers with >= h citations each need h <= papers and h*h <= citations).
--   listing_incomplete: the page declares more items than it lists.
-- A profile captured twice on one date (a re-capture, a duplicate file) counts once: the complete
-- capture before a truncated one, then the latest, then the one listing most items.
WITH day_profiles AS (
    SELECT * FROM staging.profiles
    WHERE partition_date = $as_of
    QUALIFY row_number() OVER (PARTITION BY source, source_profile_id
                               ORDER BY truncated, captured_at DESC, listed_items DESC, capture_id) = 1
),
-- papers_held counts the person's papers the warehouse had seen by $as_of (core.papers.first_seen), so
-- a day's row says the same whichever order the days were run in (a backfill adds no later papers).
held AS (
    SELECT s.author_id, count(DISTINCT s.paper_id) AS papers_held
    FROM core.authorships s
    JOIN core.papers p USING (paper_id)
    WHERE p.first_seen <= $as_of
    GROUP BY s.author_id
)
SELECT
    p.source,
    p.source_profile_id,
    ap.author_id,
    p.partition_date                              AS as_of,
    p.capture_id,
    p.captured_at,
    p.url,
    p.name                                        AS profile_name,
    p.h_index                                     AS reported_h_index,
    p.citations                                   AS reported_citations,
    coalesce(p.declared_papers, p.declared_works) AS reported_papers,
    p.declared_items,
    p.listed_items,
    p.followers,
    p.trust_score,
    p.trust_tier,
    p.novelty_pct                                 AS reported_novelty_pct,
    p.ai_score                                    AS reported_ai_score,
    coalesce(held.papers_held, 0)                 AS papers_held,
    CASE WHEN p.citations IS NOT NULL OR coalesce(p.declared_papers, p.declared_works) IS NOT NULL
         THEN least(coalesce(p.declared_papers, p.declared_works, 2147483647),
                    CAST(floor(sqrt(coalesce(p.citations, 2147483647))) AS INTEGER))
    END                                           AS h_index_upper_bound,
    coalesce(p.h_index > least(coalesce(p.declared_papers, p.declared_works, 2147483647),
                               CAST(floor(sqrt(coalesce(p.citations, 2147483647))) AS INTEGER)), FALSE)
                                                  AS h_index_implausible,
    coalesce(greatest(p.declared_items, 0) > p.listed_items, FALSE) AS listing_incomplete
FROM day_profiles p
LEFT JOIN core.author_profiles ap USING (source, source_profile_id)
LEFT JOIN held ON held.author_id = ap.author_id
ORDER BY p.source, p.source_profile_id

-- marts.author_metrics: every metric a profile reports, next to what the warehouse can recompute.
-- One row per profile captured on the partition date $as_of.
--   h_index_implausible: the reported h-index is more than the evidence allows —
--     * reported h-index > min(reported papers, floor(sqrt(reported citations))) (h papers with >= h
--       citations each need h <= papers and h*h <= citations); or
--     * when citation_coverage >= $min_coverage: reported h-index > $h_margin_factor x
--       recomputed_h_index_bound + $h_margin_add (the margin allows for citation databases that
--       count more than OpenAlex does).
--   listing_incomplete: the page declares more items than it lists.
-- Recomputed metrics come from the per-paper counts (paper_citation_snapshots: OpenAlex, linked by
-- arXiv id or a verified title) of the papers the warehouse attributes to the person and had seen by
-- $as_of, each paper's newest count up to $as_of.
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
person_papers AS (
    SELECT DISTINCT s.author_id, s.paper_id
    FROM core.authorships s
    JOIN core.papers p USING (paper_id)
    WHERE p.first_seen <= $as_of
),
held AS (
    SELECT author_id, count(*) AS papers_held FROM person_papers GROUP BY author_id
),
counts AS (   -- each paper's newest per-paper count up to $as_of
    SELECT paper_id, source, as_of AS counted_on, citations
    FROM paper_citation_snapshots
    WHERE as_of <= $as_of
    QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY as_of DESC) = 1
),
ranked AS (
    SELECT pp.author_id, c.citations, c.source, c.counted_on,
           row_number() OVER (PARTITION BY pp.author_id ORDER BY c.citations DESC, pp.paper_id) AS rank
    FROM person_papers pp
    JOIN counts c USING (paper_id)
),
recomputed AS (
    SELECT author_id,
           count(*)                                            AS papers_with_citations,
           sum(citations)                                      AS recomputed_citations,
           count(*) FILTER (WHERE citations >= rank)           AS recomputed_h_index,
           count(*) FILTER (WHERE citations >= 10)             AS recomputed_i10_index,
           string_agg(DISTINCT source, ',' ORDER BY source)    AS recomputed_source,
           max(counted_on)                                     AS recomputed_as_of,
           list(citations ORDER BY citations DESC)             AS counts_desc
    FROM ranked
    GROUP BY author_id
),
joined AS (
    SELECT
        p.*,
        ap.author_id,
        coalesce(p.declared_papers, p.declared_works)               AS reported_papers_,
        coalesce(held.papers_held, 0)                               AS papers_held_,
        coalesce(r.papers_with_citations, 0)                        AS papers_with_citations_,
        r.recomputed_citations, r.recomputed_h_index, r.recomputed_i10_index, r.recomputed_source,
        r.recomputed_as_of, coalesce(r.counts_desc, [])             AS counts_desc
    FROM day_profiles p
    LEFT JOIN core.author_profiles ap USING (source, source_profile_id)
    LEFT JOIN held ON held.author_id = ap.author_id
    LEFT JOIN recomputed r ON r.author_id = ap.author_id
),
measured AS (
    SELECT *,
           CASE WHEN greatest(papers_held_, coalesce(reported_papers_, 0)) > 0
                THEN papers_with_citations_ / greatest(papers_held_, coalesce(reported_papers_, 0)) END
                                                                     AS citation_coverage_,
           -- papers the person has (as many as we hold, or the site counts) without a count of ours
           greatest(papers_held_, coalesce(reported_papers_, 0)) - papers_with_citations_ AS uncounted
    FROM joined
),
bounded AS (
    SELECT *,
           -- the largest h the counts allow, every uncounted paper taken as cited without limit:
           -- uncounted + #{j : counts_desc[j] >= uncounted + j}
           CASE WHEN papers_with_citations_ > 0 AND citation_coverage_ >= $min_coverage
                THEN uncounted + len(list_filter(range(1, len(counts_desc) + 1), lambda j: counts_desc[j] >= uncounted + j))
           END                                                       AS recomputed_h_index_bound_,
           CASE WHEN citations IS NOT NULL OR reported_papers_ IS NOT NULL
                THEN least(coalesce(reported_papers_, 2147483647),
                           CAST(floor(sqrt(coalesce(citations, 2147483647))) AS INTEGER))
           END                                                       AS h_index_upper_bound_
    FROM measured
)
SELECT
    source,
    source_profile_id,
    author_id,
    partition_date                                AS as_of,
    capture_id,
    captured_at,
    url,
    name                                          AS profile_name,
    h_index                                       AS reported_h_index,
    citations                                     AS reported_citations,
    reported_papers_                              AS reported_papers,
    declared_items,
    listed_items,
    followers,
    trust_score,
    trust_tier,
    novelty_pct                                   AS reported_novelty_pct,
    ai_score                                      AS reported_ai_score,
    papers_held_                                  AS papers_held,
    h_index_upper_bound_                          AS h_index_upper_bound,
    coalesce(h_index > h_index_upper_bound_, FALSE)
        OR coalesce(h_index > $h_margin_factor * recomputed_h_index_bound_ + $h_margin_add, FALSE)
                                                  AS h_index_implausible,
    coalesce(greatest(declared_items, 0) > listed_items, FALSE) AS listing_incomplete,
    papers_with_citations_                        AS papers_with_citations,
    citation_coverage_                            AS citation_coverage,
    CAST(recomputed_citations AS INTEGER)         AS recomputed_citations,
    CAST(recomputed_h_index AS INTEGER)           AS recomputed_h_index,
    CAST(recomputed_i10_index AS INTEGER)         AS recomputed_i10_index,
    recomputed_source,
    recomputed_as_of,
    CAST(recomputed_h_index_bound_ AS INTEGER)    AS recomputed_h_index_bound
FROM bounded
ORDER BY source, source_profile_id

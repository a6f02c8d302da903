-- The identifiers the pages show, over every staged night up to the window's end $until: per listing
-- key, each arXiv id / version and paper link seen, with the first and last night it was shown
-- (pipelines/core/identifiers.py: versions are kept; a site id a listing no longer shows is redirected
-- to the one it shows now). Narrow columns of the rows that carry something.
SELECT
    listing_key,
    source,
    arxiv_id,
    arxiv_version,
    paper_url,
    min(partition_date) AS first_seen,
    max(partition_date) AS last_seen
FROM staging.listings
WHERE partition_date <= $until
  AND (arxiv_id IS NOT NULL OR paper_url IS NOT NULL)
GROUP BY listing_key, source, arxiv_id, arxiv_version, paper_url
ORDER BY listing_key, first_seen, arxiv_id, arxiv_version, paper_url;

-- Every OpenAlex work answered for a lookup up to the window's end $until, one row per work and
-- lookup (by arXiv DOI: arxiv_id; by title: title_key), with the nights it was the answer
-- (pipelines/core/identifiers.py links them to listings and finds the works OpenAlex replaced).
-- Fields that can change between nights are the newest night's.
SELECT
    openalex_id,
    matched_by,
    arxiv_id,
    title_key,
    arg_max(doi, partition_date)              AS doi,
    arg_max(publication_year, partition_date) AS publication_year,
    arg_max(author_names, partition_date)     AS author_names,
    min(partition_date)                       AS first_seen,
    max(partition_date)                       AS last_seen
FROM enrichment.openalex_works
WHERE partition_date <= $until
GROUP BY openalex_id, matched_by, arxiv_id, title_key
ORDER BY openalex_id, matched_by, arxiv_id, title_key;

-- What arXiv's records say about each arXiv id up to the window's end $until (the core step's
-- identifier evidence, pipelines/core/identifiers.py): every version seen, the journal DOI of the newest
-- record, and the nights arXiv answered. Only accepted records are in enrichment.arxiv_works.
SELECT
    arxiv_id,
    list_sort(list(DISTINCT version) FILTER (WHERE version IS NOT NULL)) AS versions,
    arg_max(doi, partition_date)                                          AS doi,
    min(partition_date)                                                   AS first_seen,
    max(partition_date)                                                   AS last_seen
FROM enrichment.arxiv_works
WHERE partition_date <= $until
GROUP BY arxiv_id
ORDER BY arxiv_id;

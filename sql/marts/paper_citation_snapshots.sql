-- paper_citation_snapshots (a temporary view, defined by pipelines/marts/build.py before the marts that
-- read it): per paper and night, the citation count OpenAlex gave for the paper's work, with the
-- yearly series (counts_by_year) of that record.
-- A work reaches a paper only through the crosswalk (core.paper_identifiers, scheme 'openalex'):
-- found by the paper's arXiv DOI, or by a title hit the paper's own listings agree with
-- (pipelines/core/identifiers.py). A work id OpenAlex has since replaced follows its redirect to the
-- current one, so the history of the old id stays the paper's. Two works of one paper on one night
-- (a preprint and its published version): the larger count.
SELECT
    'openalex'                         AS source,
    x.paper_id,
    w.partition_date                   AS as_of,
    CAST(w.cited_by_count AS INTEGER)  AS citations,
    w.counts_by_year,
    w.openalex_id                      AS capture_id
FROM enrichment.openalex_works w
LEFT JOIN core.id_redirects r ON r.entity_type = 'openalex' AND r.old_id = w.openalex_id
JOIN core.paper_identifiers x ON x.scheme = 'openalex' AND x.value = coalesce(r.new_id, w.openalex_id)
WHERE w.cited_by_count IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY x.paper_id, w.partition_date
                           ORDER BY w.cited_by_count DESC, w.openalex_id) = 1

-- marts.collaboration_edges: one row per unordered pair of authors who share a paper.
-- Built only from authorships the warehouse holds, so a truncated byline ("et al.") never invents
-- an edge to someone it did not name. No self-edges (author_a < author_b). Papers with more than
-- $max_authors known authors (large consortia) are left out: every pair there would be noise.
WITH sized AS (
    SELECT paper_id FROM core.authorships GROUP BY paper_id HAVING count(*) <= $max_authors
),
pairs AS (
    SELECT a.author_id AS author_a, b.author_id AS author_b, a.paper_id,
           list_distinct(list_concat(a.evidence_all, b.evidence_all)) AS evidence
    FROM core.authorships a
    JOIN core.authorships b ON a.paper_id = b.paper_id AND a.author_id < b.author_id
    WHERE a.paper_id IN (SELECT paper_id FROM sized)
)
SELECT
    author_a,
    author_b,
    count(DISTINCT pairs.paper_id)                        AS papers_count,
    min(p.year)                                           AS first_year,
    max(p.year)                                           AS last_year,
    list_sort(list(DISTINCT pairs.paper_id))              AS paper_ids,
    list_sort(list_distinct(flatten(list(pairs.evidence)))) AS evidence
FROM pairs
JOIN core.papers p ON p.paper_id = pairs.paper_id
GROUP BY author_a, author_b
ORDER BY author_a, author_b

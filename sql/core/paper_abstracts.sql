-- core.papers.abstract: the longest abstract among a paper's listings (ties: the first in text
-- order). Run by the core step right after it writes core.papers and core.paper_listings, in the
-- same transaction: abstracts are most of the listings' bytes, so the step never loads them into
-- Python (1.7 GB of 2.0 GB at 1.5M listings).
UPDATE core.papers AS p
SET abstract = best.abstract
FROM (
    SELECT pl.paper_id, l.abstract
    FROM core.paper_listings AS pl
    JOIN staging.listings AS l USING (listing_id)
    WHERE l.abstract IS NOT NULL AND l.abstract <> ''
    QUALIFY row_number() OVER (PARTITION BY pl.paper_id ORDER BY length(l.abstract) DESC, l.abstract) = 1
) AS best
WHERE p.paper_id = best.paper_id;

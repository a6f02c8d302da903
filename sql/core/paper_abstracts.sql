-- core.papers.abstract: the longest abstract among the current rows of a paper's listings (one row
-- per listing key: its newest night, then the smallest listing_id, sql/core/current_listings.sql;
-- ties between abstracts: the first in text order) — the rule every other paper field follows
-- (core_build.build_core).
-- Run by the core step right after it writes core.papers, in the same transaction, with
-- listing_papers (listing_key → paper_id and listing_id, the key's current row) registered:
-- abstracts are most of the listings' bytes, so the step never loads them into Python (1.7 GB of
-- 2.0 GB at 1.5M listings). Reading only the current rows keeps the cost the size of the corpus;
-- reading every stored night's rows grew by ~0.75 s a night at 10k profiles.
UPDATE core.papers AS p
SET abstract = best.abstract
FROM (
    SELECT k.paper_id, l.abstract
    FROM listing_papers AS k
    JOIN staging.listings AS l ON l.listing_id = k.listing_id
    WHERE l.abstract IS NOT NULL AND l.abstract <> ''
    QUALIFY row_number() OVER (PARTITION BY k.paper_id ORDER BY length(l.abstract) DESC, l.abstract) = 1
) AS best
WHERE p.paper_id = best.paper_id;

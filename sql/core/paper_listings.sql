-- core.paper_listings: every staged listing row up to the window's end $until → its paper. The
-- core step resolves one row per listing key (sql/core/current_listings.sql); this fans its result,
-- listing_papers (listing_key → paper_id, method, score; and listing_id, the key's current row, which
-- sql/core/paper_abstracts.sql reads), out to every night's rows of that key.
-- Run by the core step inside its write transaction, after emptying the table.
INSERT INTO core.paper_listings BY NAME
SELECT l.listing_id, k.paper_id, k.method, k.score
FROM staging.listings AS l
JOIN listing_papers AS k USING (listing_key)
WHERE l.partition_date <= $until
ORDER BY l.listing_id;

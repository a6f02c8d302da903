-- core.paper_listings: every staged listing row up to the window's end $until → its paper. The
-- core step resolves one row per listing key (sql/core/current_listings.sql); this fans its result,
-- listing_papers (listing_key → paper_id, method, score; and listing_id, the key's current row, which
-- sql/core/papers_with_abstracts.sql reads), out to every night's rows of that key: what staging.listings
-- shows, read from the parses and the nights that show them (each row's listing_id is the view's).
-- Run by the core step inside its write transaction, after emptying the table.
INSERT INTO core.paper_listings BY NAME
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16) AS listing_id,
       k.paper_id, k.method, k.score
FROM staging.night_fetches AS n
JOIN staging.parsed_listings AS l ON l.parse_id = n.parse_id
JOIN listing_papers AS k ON k.listing_key = l.listing_key
WHERE n.role = 'parsed' AND n.partition_date <= $until
ORDER BY listing_id;

-- core.papers, written with their abstracts: every paper row the core step built
-- (papers_without_abstracts, registered by the step, with _row, its place in the step's order) and
-- the longest abstract among the current rows of its listings (one row per listing key: its newest
-- night up to the window's end $until, then the smallest listing_id, sql/core/current_listings.sql;
-- ties between abstracts: the first in text order) — the rule every other paper field follows
-- (core_build.build_core).
-- Run by the core step inside its write transaction, with listing_papers (listing_key → paper_id
-- and listing_id, the key's current row) registered. Abstracts are most of the listings' bytes, so
-- the step never loads them into Python (1.7 GB of 2.0 GB at 1.5M listings), and they are joined in
-- as the rows are inserted: an UPDATE of every paper's abstract after the insert held them all in
-- DuckDB's memory inside the transaction and ran out of the 3 GB buffer pool at 100k profiles.
-- Reading only the current rows keeps the cost the size of the corpus. It reads the parses
-- (staging.parsed_listings) and the nights that show them, not the staging.listings view, so only the
-- newest night's rows of a key get their listing_id computed (the view's expression), not every night's.
INSERT INTO core.papers BY NAME
SELECT p.* EXCLUDE (_row), best.abstract
FROM papers_without_abstracts AS p
LEFT JOIN (
    WITH newest AS (
        SELECT l.listing_key, max(n.last_night) AS night
        FROM staging.parsed_listings AS l
        JOIN (SELECT parse_id, max(partition_date) AS last_night
              FROM staging.night_fetches
              WHERE role = 'parsed' AND partition_date <= $until
              GROUP BY parse_id) AS n USING (parse_id)
        GROUP BY l.listing_key
    ),
    newest_rows AS (
        SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16) AS listing_id,
               l.abstract
        FROM newest AS k
        JOIN staging.parsed_listings AS l USING (listing_key)
        JOIN staging.night_fetches AS n ON n.parse_id = l.parse_id AND n.partition_date = k.night AND n.role = 'parsed'
        WHERE l.abstract IS NOT NULL AND l.abstract <> ''
    ),
    scored AS (
        SELECT k.paper_id, r.abstract, length(r.abstract) AS n
        FROM listing_papers AS k
        JOIN newest_rows AS r ON r.listing_id = k.listing_id
    ),
    longest AS (
        SELECT paper_id, max(n) AS n FROM scored GROUP BY paper_id
    )
    -- the longest, then the first in text order: aggregates, which DuckDB spills to disk; a window
    -- (row_number() over each paper's rows) held every abstract in memory: 4.7 GB at 100k profiles
    SELECT s.paper_id, min(s.abstract) AS abstract
    FROM scored AS s
    JOIN longest AS l USING (paper_id, n)
    GROUP BY s.paper_id
) AS best USING (paper_id)
ORDER BY p._row;

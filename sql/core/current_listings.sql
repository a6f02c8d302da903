-- The rows the core step resolves: the newest staged row of every listing key (a paper on a
-- profile) up to the window's end $until, with first_seen, the key's earliest partition date.
-- Every night shows its listings (staging.listings), so resolving all of them would grow with the
-- nights kept; this keeps the step's input the size of the corpus. Ties within one night (the same
-- listing on two captures of a profile): the smallest listing_id. Only the columns resolution uses:
-- not the abstracts (most of the bytes; sql/core/papers_with_abstracts.sql joins the papers' abstracts
-- as core.papers is written), code URLs or raw dates.
-- It reads what staging.listings is a view over — each parse once (staging.parsed_listings) and the
-- nights that show it (staging.night_fetches) — not the view: the view computes every night's
-- listing_id (a sha256), and only the newest night's rows of a key need theirs. The same rows as
-- reading the view (tests/core/test_core_reads.py).
WITH parse_nights AS (
    -- the nights up to $until that show each parse
    SELECT parse_id, min(partition_date) AS first_night, max(partition_date) AS last_night
    FROM staging.night_fetches
    WHERE role = 'parsed' AND partition_date <= $until
    GROUP BY parse_id
),
keys AS (
    SELECT l.listing_key, min(p.first_night) AS first_seen, max(p.last_night) AS newest
    FROM staging.parsed_listings AS l
    JOIN parse_nights AS p USING (parse_id)
    GROUP BY l.listing_key
),
chosen AS (
    -- the key's rows on its newest night, each with the listing_id staging.listings gives it (the
    -- view's expression); the smallest one
    SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16) AS listing_id,
           l.parse_id, l.position, n.partition_date, k.first_seen
    FROM keys AS k
    JOIN staging.parsed_listings AS l USING (listing_key)
    JOIN staging.night_fetches AS n ON n.parse_id = l.parse_id AND n.partition_date = k.newest AND n.role = 'parsed'
    QUALIFY row_number() OVER (PARTITION BY l.listing_key ORDER BY listing_id) = 1
)
SELECT c.listing_id, l.listing_key, c.partition_date, l.source, l.source_profile_id, l.title, l.venue,
       l.year, l.year_inferred, l.pub_date, l.category, l.has_code, l.byline_authors, l.byline_truncated,
       l.arxiv_id, c.first_seen
FROM chosen AS c
JOIN staging.parsed_listings AS l ON l.parse_id = c.parse_id AND l.position = c.position
ORDER BY l.listing_key;

-- The rows the core step resolves: the newest staged row of every listing key (a paper on a
-- profile) up to the window's end $until, with first_seen, the key's earliest partition date.
-- staging.listings shows every night's rows (a view: each parse stored once), so resolving all of them would grow with the nights
-- kept; this keeps the step's input the size of the corpus. The scan for the newest row reads
-- narrow columns; the rest are fetched for the chosen rows only, and only the columns resolution
-- uses: not the abstracts (most of the table's bytes; sql/core/paper_abstracts.sql fills the
-- papers' abstracts after the write), code URLs or raw dates. Ties within one night (the same
-- listing on two captures of a profile): the smallest listing_id.
WITH keys AS (
    SELECT listing_key, min(partition_date) AS first_seen, max(partition_date) AS newest
    FROM staging.listings
    WHERE partition_date <= $until
    GROUP BY listing_key
),
chosen AS (
    SELECT l.listing_key, min(l.listing_id) AS listing_id, any_value(k.first_seen) AS first_seen
    FROM staging.listings AS l
    JOIN keys AS k ON l.listing_key = k.listing_key AND l.partition_date = k.newest
    GROUP BY l.listing_key
)
SELECT l.listing_id, l.listing_key, l.partition_date, l.source, l.source_profile_id, l.title, l.venue,
       l.year, l.year_inferred, l.pub_date, l.category, l.has_code, l.byline_authors, l.byline_truncated,
       l.arxiv_id, c.first_seen
FROM staging.listings AS l
JOIN chosen AS c USING (listing_id)
ORDER BY l.listing_key;

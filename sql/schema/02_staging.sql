-- staging: typed rows parsed from raw captures (one parser per site, text or HTML in).
CREATE SCHEMA IF NOT EXISTS staging;

-- Stored: each parse once — a body parsed for its url by a parser version (parse_id) — and each night
-- a small row per fetch saying which parse it shows. An unchanged page costs a staging.night_fetches row
-- a night ("seen again"), not a copy of its listings. The per-night tables analysts query
-- (staging.profiles, staging.listings, staging.rejects, staging.quality_issues, further down) are views
-- over these, with the grain and columns they had as tables.

-- One row per fetch of a staged night (grain: partition_date × fetch_id): how staging accounted for it.
CREATE TABLE IF NOT EXISTS staging.night_fetches (
    partition_date       DATE NOT NULL,
    fetch_id             VARCHAR NOT NULL,  -- raw.fetches.fetch_id
    capture_id           VARCHAR NOT NULL,
    source               VARCHAR NOT NULL,  -- as raw says
    url                  VARCHAR,
    captured_at          TIMESTAMPTZ NOT NULL,
    role                 VARCHAR NOT NULL,  -- 'parsed' (the body's parsed fetch) | 'copy' (another fetch of it) | 'fetch_reject'
    parse_id             VARCHAR,           -- the parse the fetch shows (parsed) or its body's (copy); NULL for fetch_reject
    same_as              VARCHAR,           -- copy: where the body was staged (file name, else url)
    fetch_reject         VARCHAR,           -- fetch_reject: the source's reason and detail
    fetch_reject_detail  VARCHAR,
    capture_issues       STRUCT(reason VARCHAR, field VARCHAR, action VARCHAR, raw_value VARCHAR, detail VARCHAR)[],
    parser_version       VARCHAR NOT NULL   -- the parser the night was staged with
);

-- The profile of a parse (grain: parse_id): staging.profiles without the night's columns.
CREATE TABLE IF NOT EXISTS staging.parsed_profiles (
    parse_id             VARCHAR NOT NULL,  -- hash of capture_id, url, parser_version (16 hex)
    capture_id           VARCHAR NOT NULL,
    source               VARCHAR NOT NULL,
    source_profile_id    VARCHAR NOT NULL,
    url                  VARCHAR,
    name                 VARCHAR,
    bio                  VARCHAR,
    affiliation          VARCHAR,
    trust_score          INTEGER,
    trust_tier           VARCHAR,
    verification_level   VARCHAR,
    claimed              BOOLEAN,
    declared_works       INTEGER,
    followers            INTEGER,
    topics               INTEGER,
    close_collaborators  INTEGER,
    primary_category     VARCHAR,
    primary_category_raw VARCHAR,
    h_index              INTEGER,
    declared_papers      INTEGER,
    citations            INTEGER,
    novelty_pct          DOUBLE,
    ai_score             DOUBLE,
    declared_items       INTEGER,
    listed_items         INTEGER NOT NULL,
    truncated            BOOLEAN NOT NULL,
    parser_version       VARCHAR NOT NULL
);

-- The listings of a parse (grain: parse_id × position): staging.listings without the night's columns.
CREATE TABLE IF NOT EXISTS staging.parsed_listings (
    parse_id            VARCHAR NOT NULL,
    listing_key         VARCHAR NOT NULL,
    capture_id          VARCHAR NOT NULL,
    source              VARCHAR NOT NULL,
    source_profile_id   VARCHAR NOT NULL,
    position            INTEGER NOT NULL,
    title               VARCHAR NOT NULL,
    title_normalized    VARCHAR,
    abstract            VARCHAR USING COMPRESSION ZSTD,
    abstract_normalized VARCHAR USING COMPRESSION ZSTD,
    pub_type            VARCHAR,
    venue               VARCHAR,
    year                INTEGER,
    pub_date            DATE,
    date_precision      VARCHAR,
    date_raw            VARCHAR,
    year_inferred       BOOLEAN,
    category            VARCHAR,
    category_raw        VARCHAR,
    has_code            BOOLEAN,
    listing_score       DOUBLE,
    byline_authors      VARCHAR[] NOT NULL,
    byline_truncated    BOOLEAN NOT NULL,
    arxiv_id            VARCHAR,
    arxiv_version       INTEGER,
    paper_url           VARCHAR,
    code_urls           VARCHAR[] NOT NULL
);

-- What a parse dropped (grain: parse_id × reason × position): the parser's rejects of the page.
CREATE TABLE IF NOT EXISTS staging.parsed_rejects (
    parse_id          VARCHAR NOT NULL,
    capture_id        VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    reason            VARCHAR NOT NULL,
    detail            VARCHAR,
    position          INTEGER,
    parser_version    VARCHAR NOT NULL
);

-- What a parse repaired or doubted (grain: parse_id × position × field × reason × raw_value).
CREATE TABLE IF NOT EXISTS staging.parsed_issues (
    parse_id          VARCHAR NOT NULL,
    capture_id        VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    position          INTEGER,
    field             VARCHAR,
    reason            VARCHAR NOT NULL,
    action            VARCHAR NOT NULL,
    raw_value         VARCHAR,
    detail            VARCHAR,
    parser_version    VARCHAR NOT NULL
);

-- What analysts query: the views below. Each one's contract (columns, types and meaning) is declared
-- as a table inside a comment right before it, so this file runs as it is (DuckDB CLI: .read
-- sql/schema/02_staging.sql) and nothing creates those tables. A warehouse of an older release, where
-- they are tables, is moved into the tables above when the pipeline first opens it (ensure_schema).
-- One row per profile capture (grain: partition_date × capture_id).
/* contract of the view staging.profiles below (not run):
CREATE TABLE IF NOT EXISTS staging.profiles (
    capture_id           VARCHAR NOT NULL,
    fetch_id             VARCHAR NOT NULL,  -- the fetch parsed (raw.page_captures.fetch_id)
    partition_date       DATE NOT NULL,
    source               VARCHAR NOT NULL,
    source_profile_id    VARCHAR NOT NULL,
    url                  VARCHAR,
    captured_at          TIMESTAMPTZ NOT NULL,
    name                 VARCHAR,
    bio                  VARCHAR,
    affiliation          VARCHAR,
    trust_score          INTEGER,      -- BZPEER
    trust_tier           VARCHAR,      -- BZPEER ('Emerging', ...)
    verification_level   VARCHAR,      -- BZPEER ('L1', ...)
    claimed              BOOLEAN,      -- BZPEER claim state
    declared_works       INTEGER,      -- BZPEER "6works"
    followers            INTEGER,
    topics               INTEGER,
    close_collaborators  INTEGER,
    primary_category     VARCHAR,      -- Scholar Feed, full arXiv code ('cs.LG')
    primary_category_raw VARCHAR,
    h_index              INTEGER,      -- Scholar Feed, as reported
    declared_papers      INTEGER,      -- Scholar Feed "15papers"
    citations            INTEGER,      -- Scholar Feed, as reported
    novelty_pct          DOUBLE,       -- Scholar Feed "Novelty53%"
    ai_score             DOUBLE,       -- Scholar Feed "AI Score57"
    declared_items       INTEGER,      -- the list header ("6 published item(s)", "15 Papers")
    listed_items         INTEGER NOT NULL,  -- items actually parsed from the page
    truncated            BOOLEAN NOT NULL,  -- the page ended mid-item
    parser_version       VARCHAR NOT NULL
);
*/

CREATE OR REPLACE VIEW staging.profiles AS
SELECT p.capture_id, n.fetch_id, n.partition_date, p.source, p.source_profile_id, p.url, n.captured_at, p.name,
       p.bio, p.affiliation, p.trust_score, p.trust_tier, p.verification_level, p.claimed, p.declared_works,
       p.followers, p.topics, p.close_collaborators, p.primary_category, p.primary_category_raw, p.h_index,
       p.declared_papers, p.citations, p.novelty_pct, p.ai_score, p.declared_items, p.listed_items, p.truncated,
       p.parser_version
FROM staging.night_fetches AS n
JOIN staging.parsed_profiles AS p ON p.parse_id = n.parse_id
WHERE n.role = 'parsed';

-- One row per paper listed on a profile capture (grain: partition_date × capture_id × position).
/* contract of the view staging.listings below (not run):
CREATE TABLE IF NOT EXISTS staging.listings (
    listing_id          VARCHAR NOT NULL,  -- unique; hash of partition_date, capture_id, position
    listing_key         VARCHAR NOT NULL,  -- stable across nights: hash of source, profile, title key, year
    capture_id          VARCHAR NOT NULL,
    partition_date      DATE NOT NULL,
    source              VARCHAR NOT NULL,
    source_profile_id   VARCHAR NOT NULL,
    position            INTEGER NOT NULL,  -- 1-based order on the page
    title               VARCHAR NOT NULL,  -- raw, as shown
    title_normalized    VARCHAR,
    abstract            VARCHAR,
    abstract_normalized VARCHAR,
    pub_type            VARCHAR,           -- BZPEER ('preprint', ...)
    venue               VARCHAR,           -- BZPEER ('arXiv', ...)
    year                INTEGER,
    pub_date            DATE,
    date_precision      VARCHAR,           -- 'day' | 'month' | 'year'
    date_raw            VARCHAR,
    year_inferred       BOOLEAN,           -- the year was not on the page (capture-year rule)
    category            VARCHAR,           -- full arXiv code ('cs.LG', 'stat.ML')
    category_raw        VARCHAR,
    has_code            BOOLEAN,
    listing_score       DOUBLE,            -- Scholar Feed per-paper score
    byline_authors      VARCHAR[] NOT NULL,
    byline_truncated    BOOLEAN NOT NULL,  -- the byline ended with "et al."
    arxiv_id            VARCHAR,
    arxiv_version       INTEGER,
    paper_url           VARCHAR,
    code_urls           VARCHAR[] NOT NULL
);
*/

CREATE OR REPLACE VIEW staging.listings AS
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(l.capture_id AS VARCHAR), ''), coalesce(CAST(l.position AS VARCHAR), ''))), 1, 16) AS listing_id,
       l.listing_key, l.capture_id, n.partition_date, l.source, l.source_profile_id, l.position, l.title,
       l.title_normalized, l.abstract, l.abstract_normalized, l.pub_type, l.venue, l.year, l.pub_date,
       l.date_precision, l.date_raw, l.year_inferred, l.category, l.category_raw, l.has_code, l.listing_score,
       l.byline_authors, l.byline_truncated, l.arxiv_id, l.arxiv_version, l.paper_url, l.code_urls
FROM staging.night_fetches AS n
JOIN staging.parsed_listings AS l ON l.parse_id = n.parse_id
WHERE n.role = 'parsed';

-- What was dropped — a fetch, a page or an item — and why. Never dropped silently: every fetch
-- of raw.page_captures has a profile or at least one reject row of its own.
/* contract of the view staging.rejects below (not run):
CREATE TABLE IF NOT EXISTS staging.rejects (
    reject_id         VARCHAR NOT NULL,  -- hash of partition_date, fetch_id, reason, position
    capture_id        VARCHAR NOT NULL,
    fetch_id          VARCHAR NOT NULL,  -- the fetch it is about (raw.page_captures.fetch_id)
    partition_date    DATE NOT NULL,
    source            VARCHAR NOT NULL,
    url               VARCHAR,
    reason            VARCHAR NOT NULL,  -- stable code: empty, not_text, unknown_site, bot_challenge, ...
    detail            VARCHAR,
    position          INTEGER,           -- the item on the page, for item-level rejects
    stage             VARCHAR NOT NULL,  -- 'fetch' (the source could not deliver it) | 'parse'
    parser_version    VARCHAR NOT NULL
);
*/

CREATE OR REPLACE VIEW staging.rejects AS
-- the source could not deliver the fetch
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST(n.fetch_reject AS VARCHAR), ''), coalesce(CAST(NULL AS VARCHAR), ''))), 1, 16) AS reject_id, n.capture_id, n.fetch_id,
       n.partition_date, n.source, n.url, n.fetch_reject AS reason,
       coalesce(n.fetch_reject_detail, 'rejected while fetching') AS detail, CAST(NULL AS INTEGER) AS position,
       'fetch' AS stage, n.parser_version
FROM staging.night_fetches AS n
WHERE n.role = 'fetch_reject'
UNION ALL
-- what the parse of the fetch's body dropped
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST(r.reason AS VARCHAR), ''), coalesce(CAST(r.position AS VARCHAR), ''))), 1, 16), n.capture_id, n.fetch_id, n.partition_date,
       r.source, n.url, r.reason, r.detail, r.position, 'parse', r.parser_version
FROM staging.night_fetches AS n
JOIN staging.parsed_rejects AS r ON r.parse_id = n.parse_id
WHERE n.role = 'parsed'
UNION ALL
-- another fetch of a body staged tonight: the page-level rejects of its parse ...
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST(r.reason AS VARCHAR), ''), coalesce(CAST(NULL AS VARCHAR), ''))), 1, 16), n.capture_id, n.fetch_id, n.partition_date,
       r.source, n.url, r.reason, r.detail, CAST(NULL AS INTEGER), 'parse', r.parser_version
FROM staging.night_fetches AS n
JOIN staging.parsed_rejects AS r ON r.parse_id = n.parse_id AND r.position IS NULL
WHERE n.role = 'copy'
UNION ALL
-- ... or, when it became a profile, one duplicate_body reject naming where it was staged
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST('duplicate_body' AS VARCHAR), ''), coalesce(CAST(NULL AS VARCHAR), ''))), 1, 16), n.capture_id, n.fetch_id, n.partition_date,
       p.source, n.url, 'duplicate_body', 'the same bytes as ' || n.same_as || ', staged there once',
       CAST(NULL AS INTEGER), 'parse', n.parser_version
FROM staging.night_fetches AS n
JOIN staging.parsed_profiles AS p ON p.parse_id = n.parse_id
WHERE n.role = 'copy';

-- What landed but was repaired or is doubtful, one row per value: the raw text as read and what
-- was stored instead. Dropped things are in staging.rejects; this table is about rows that exist.
/* contract of the view staging.quality_issues below (not run):
CREATE TABLE IF NOT EXISTS staging.quality_issues (
    issue_id          VARCHAR NOT NULL,  -- hash of partition_date, fetch_id, position, field, reason, raw_value
    capture_id        VARCHAR NOT NULL,
    fetch_id          VARCHAR NOT NULL,
    partition_date    DATE NOT NULL,
    source            VARCHAR NOT NULL,
    url               VARCHAR,
    position          INTEGER,           -- the item (staging.listings.position); NULL: the page or profile
    field             VARCHAR,           -- the column it is about ('h_index', 'pub_date', 'captured_at', ...)
    reason            VARCHAR NOT NULL,  -- stable code: value_out_of_range, impossible_date, bad_sidecar, ...
    action            VARCHAR NOT NULL,  -- 'nulled' | 'repaired' | 'kept'
    raw_value         VARCHAR,           -- what the page (or sidecar) said, as text
    detail            VARCHAR,
    stage             VARCHAR NOT NULL,  -- 'fetch' (the page source) | 'parse'
    parser_version    VARCHAR NOT NULL
);
*/

CREATE OR REPLACE VIEW staging.quality_issues AS
-- the parser's, for the fetch it parsed
SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST(i.position AS VARCHAR), ''), coalesce(CAST(i.field AS VARCHAR), ''), coalesce(CAST(i.reason AS VARCHAR), ''), coalesce(CAST(i.raw_value AS VARCHAR), ''))), 1, 16) AS issue_id,
       n.capture_id, n.fetch_id, n.partition_date, i.source, n.url, i.position, i.field, i.reason, i.action,
       i.raw_value, i.detail, 'parse' AS stage, i.parser_version
FROM staging.night_fetches AS n
JOIN staging.parsed_issues AS i ON i.parse_id = n.parse_id
WHERE n.role = 'parsed'
UNION ALL
-- the source's, for every fetch (raw.page_captures.capture_issues), once per issue
SELECT * FROM (
    SELECT substr(sha256(concat_ws(chr(31), coalesce(CAST(n.partition_date AS VARCHAR), ''), coalesce(CAST(n.fetch_id AS VARCHAR), ''), coalesce(CAST(NULL AS VARCHAR), ''), coalesce(CAST(n.i.field AS VARCHAR), ''), coalesce(CAST(n.i.reason AS VARCHAR), ''), coalesce(CAST(n.i.raw_value AS VARCHAR), ''))), 1, 16) AS issue_id,
           n.capture_id, n.fetch_id, n.partition_date, n.source, n.url, CAST(NULL AS INTEGER) AS position,
           n.i.field, n.i.reason, n.i.action, n.i.raw_value, n.i.detail, 'fetch' AS stage, n.parser_version
    FROM (SELECT *, unnest(capture_issues) AS i FROM staging.night_fetches WHERE len(capture_issues) > 0) AS n
    QUALIFY row_number() OVER (PARTITION BY n.partition_date, issue_id ORDER BY n.url) = 1
);

-- staging: typed rows parsed from raw captures (one parser per site, text or HTML in).
CREATE SCHEMA IF NOT EXISTS staging;

-- One row per profile capture (grain: partition_date × capture_id).
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

-- One row per paper listed on a profile capture (grain: partition_date × capture_id × position).
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
    abstract            VARCHAR USING COMPRESSION ZSTD,  -- long text: ZSTD stores it in ~1/6 of DuckDB's default
    abstract_normalized VARCHAR USING COMPRESSION ZSTD,
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

-- What was dropped — a fetch, a page or an item — and why. Never dropped silently: every fetch
-- of raw.page_captures has a profile or at least one reject row of its own.
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

-- What landed but was repaired or is doubtful, one row per value: the raw text as read and what
-- was stored instead. Dropped things are in staging.rejects; this table is about rows that exist.
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

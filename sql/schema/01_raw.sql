-- raw: every page exactly as it arrived. Never thrown away, so a parser fix is a backfill, not a re-scrape.
CREATE SCHEMA IF NOT EXISTS raw;

-- One row per page seen on a partition date (grain: partition_date × url).
-- capture_id is the sha256 of the body: an unchanged page keeps its id from night to night.
CREATE TABLE IF NOT EXISTS raw.page_captures (
    capture_id        VARCHAR NOT NULL,   -- sha256 hex of the body bytes
    source            VARCHAR NOT NULL,   -- 'bzpeer' | 'scholarfeed' | 'unknown'
    url               VARCHAR NOT NULL,   -- page URL, or file:// URI of a captured file
    source_profile_id VARCHAR,            -- site profile id (URL slug/number, or 'name:<slug>')
    captured_at       TIMESTAMPTZ NOT NULL,
    partition_date    DATE NOT NULL,
    content_type      VARCHAR,            -- 'text/plain' | 'text/html'
    http_status       INTEGER,            -- NULL for files read from a folder
    body              VARCHAR USING COMPRESSION ZSTD,  -- decoded text (NULL when the bytes are not text)
    body_bytes        BLOB,               -- the raw bytes, kept only when they could not be decoded
    encoding          VARCHAR,            -- how body was decoded ('utf-8', 'cp1252', ...)
    byte_size         BIGINT NOT NULL,
    origin            VARCHAR NOT NULL,   -- 'captures' (folder) | 'http' (live crawl)
    source_file       VARCHAR,            -- file name within the captures folder
    etag              VARCHAR,
    last_modified     VARCHAR,
    fetch_ms          DOUBLE,
    not_modified      BOOLEAN NOT NULL DEFAULT FALSE,
    fetch_reject      VARCHAR,            -- fetch-level reject reason (bot_challenge, oversize, ...)
    fetch_reject_detail VARCHAR,
    loaded_at         TIMESTAMPTZ NOT NULL
);

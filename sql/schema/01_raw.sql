-- raw: every page exactly as it arrived. Never thrown away, so a parser fix is a backfill, not a re-scrape.
CREATE SCHEMA IF NOT EXISTS raw;

-- One row per fetch: a page (url) read on a partition date, or one file of a captures folder
-- (grain: partition_date × fetch_id). capture_id is the sha256 of the body: it names the bytes, which
-- fetches may share (an unchanged page keeps it from night to night; failed fetches with an empty
-- body all have the same one), so a fetch is identified by fetch_id, never by capture_id.
CREATE TABLE IF NOT EXISTS raw.page_captures (
    capture_id        VARCHAR NOT NULL,   -- sha256 hex of the body bytes
    fetch_id          VARCHAR NOT NULL,   -- the fetch: hash of partition_date, url, source_file (16 hex)
    source            VARCHAR NOT NULL,   -- 'bzpeer' | 'scholarfeed' | 'unknown'
    url               VARCHAR NOT NULL,   -- page URL, or file:// URI of a captured file
    source_profile_id VARCHAR,            -- site profile id (URL slug/number, or 'name:<slug>')
    captured_at       TIMESTAMPTZ NOT NULL,
    partition_date    DATE NOT NULL,
    content_type      VARCHAR,            -- 'text/plain' | 'text/html'
    http_status       INTEGER,            -- NULL for files read from a folder
    body              VARCHAR USING COMPRESSION ZSTD,  -- decoded text (NULL when the bytes are not text)
    body_bytes        BLOB,               -- the raw bytes, kept whenever body is not exactly their UTF-8
    encoding          VARCHAR,            -- how body was decoded ('utf-8', 'cp1252', ...)
    byte_size         BIGINT NOT NULL,
    origin            VARCHAR NOT NULL,   -- 'captures' (folder) | 'http' (live crawl)
    source_file       VARCHAR,            -- file name within the captures folder
    etag              VARCHAR,
    last_modified     VARCHAR,
    fetch_ms          DOUBLE,
    not_modified      BOOLEAN NOT NULL DEFAULT FALSE,
    fetch_reject      VARCHAR,            -- fetch-level reject reason (bot_challenge, oversize, outside_root, ...)
    fetch_reject_detail VARCHAR,
    -- what the source doubted or repaired while reading the page (a sidecar that is not JSON, ...)
    capture_issues    STRUCT(reason VARCHAR, field VARCHAR, action VARCHAR, raw_value VARCHAR, detail VARCHAR)[],
    loaded_at         TIMESTAMPTZ NOT NULL
);

-- raw: every page exactly as it arrived. Never thrown away, so a parser fix is a backfill, not a re-scrape.
CREATE SCHEMA IF NOT EXISTS raw;

-- Stored: each distinct body once (content-addressed), and each fetch as a small row pointing at its
-- body. An unchanged page costs a raw.fetches row a night, not a copy of its body.

-- One row per distinct body (grain: capture_id × encoding): the bytes' sha256 names it; the decoded
-- text also depends on the charset a fetch declared, hence the encoding in the key.
CREATE TABLE IF NOT EXISTS raw.page_bodies (
    capture_id        VARCHAR NOT NULL,   -- sha256 hex of the body bytes
    encoding          VARCHAR,            -- how body was decoded ('utf-8', 'cp1252', ...; NULL: not text)
    body              VARCHAR USING COMPRESSION ZSTD,  -- decoded text (NULL when the bytes are not text)
    body_bytes        BLOB,               -- the raw bytes, kept whenever body is not exactly their UTF-8
    byte_size         BIGINT NOT NULL
);

-- One row per fetch (grain: partition_date × fetch_id): every column of raw.page_captures but the body's.
CREATE TABLE IF NOT EXISTS raw.fetches (
    capture_id        VARCHAR NOT NULL,   -- the body (raw.page_bodies, with encoding)
    fetch_id          VARCHAR NOT NULL,   -- hash of partition_date, url, source_file (16 hex)
    source            VARCHAR NOT NULL,
    url               VARCHAR NOT NULL,
    source_profile_id VARCHAR,
    captured_at       TIMESTAMPTZ NOT NULL,
    partition_date    DATE NOT NULL,
    content_type      VARCHAR,
    http_status       INTEGER,
    encoding          VARCHAR,
    origin            VARCHAR NOT NULL,
    source_file       VARCHAR,
    etag              VARCHAR,
    last_modified     VARCHAR,
    fetch_ms          DOUBLE,
    not_modified      BOOLEAN NOT NULL DEFAULT FALSE,
    fetch_reject      VARCHAR,
    fetch_reject_detail VARCHAR,
    capture_issues    STRUCT(reason VARCHAR, field VARCHAR, action VARCHAR, raw_value VARCHAR, detail VARCHAR)[],
    loaded_at         TIMESTAMPTZ NOT NULL
);

-- What analysts query: the view below. Its contract (columns, types and meaning, which the catalog,
-- the data dictionary and the frames read) is declared as a table inside a comment, so this file runs
-- as it is (DuckDB CLI: .read sql/schema/01_raw.sql) and nothing creates that table. A warehouse of an
-- older release, where it is a table, is moved into the two tables above when the pipeline first opens
-- it (warehouse.ensure_schema; the view cannot replace the table by hand).
-- One row per fetch: a page (url) read on a partition date, or one file of a captures folder
-- (grain: partition_date × fetch_id). capture_id is the sha256 of the body: it names the bytes, which
-- fetches may share (an unchanged page keeps it from night to night; failed fetches with an empty
-- body all have the same one), so a fetch is identified by fetch_id, never by capture_id.
/* contract of the view raw.page_captures below (not run):
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
    body              VARCHAR,            -- decoded text (NULL when the bytes are not text)
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
*/

CREATE OR REPLACE VIEW raw.page_captures AS
SELECT f.capture_id, f.fetch_id, f.source, f.url, f.source_profile_id, f.captured_at, f.partition_date,
       f.content_type, f.http_status, b.body, b.body_bytes, f.encoding, b.byte_size, f.origin, f.source_file,
       f.etag, f.last_modified, f.fetch_ms, f.not_modified, f.fetch_reject, f.fetch_reject_detail,
       f.capture_issues, f.loaded_at
FROM raw.fetches AS f
JOIN raw.page_bodies AS b ON b.capture_id = f.capture_id AND b.encoding IS NOT DISTINCT FROM f.encoding;

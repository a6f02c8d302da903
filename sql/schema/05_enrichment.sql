-- enrichment: what the arXiv and OpenAlex APIs say about the papers the profiles list.
-- Written by the enrichment assets (pipelines/assets/enrichment.py); read by core (full author
-- lists) and marts (per-paper citation counts). Each partition's slice is a snapshot as of that
-- capture date, replaced in one transaction when the partition is re-run. Empty when enrichment
-- is disabled (no SCHOLARHOUSE_CONTACT). How it is selected and fetched: docs/live_sources.md.
CREATE SCHEMA IF NOT EXISTS enrichment;

-- arXiv records (grain: partition_date × arxiv_id). Text as arXiv serves it, whitespace unwrapped.
CREATE TABLE IF NOT EXISTS enrichment.arxiv_works (
    partition_date    DATE NOT NULL,
    arxiv_id          VARCHAR NOT NULL,   -- without version: 2401.01234, cond-mat/0102536
    version           INTEGER,            -- latest version
    title             VARCHAR NOT NULL,
    title_key         VARCHAR NOT NULL,   -- textnorm.match_key(title)
    abstract          VARCHAR USING COMPRESSION ZSTD,
    authors           VARCHAR[] NOT NULL, -- the full author list, in order
    primary_category  VARCHAR,
    categories        VARCHAR[] NOT NULL,
    published         TIMESTAMPTZ,        -- first version
    updated           TIMESTAMPTZ,        -- latest version
    doi               VARCHAR,            -- the journal DOI, when the authors gave one
    journal_ref       VARCHAR,
    comment           VARCHAR,
    fetched_at        TIMESTAMPTZ,        -- when arXiv answered (a cached answer keeps its time)
    matched_by        VARCHAR NOT NULL    -- 'id' (a listing carries the id) | 'title' (exact-title search)
);

-- arXiv exact-title searches for listings without an id (grain: partition_date × title_key).
-- Memory of what was asked: found titles are not searched again, not_found/rejected after a while.
CREATE TABLE IF NOT EXISTS enrichment.arxiv_title_searches (
    partition_date    DATE NOT NULL,
    title_key         VARCHAR NOT NULL,
    title             VARCHAR NOT NULL,   -- as listed
    year              INTEGER,            -- as listed
    outcome           VARCHAR NOT NULL,   -- 'found' | 'not_found' | 'rejected' (same title, no author in common) | 'error'
    arxiv_id          VARCHAR,            -- the match, or the same-titled paper that was turned down
    detail            VARCHAR,
    searched_at       TIMESTAMPTZ
);

-- OpenAlex works (grain: partition_date × openalex_id): citation counts as of the fetch.
CREATE TABLE IF NOT EXISTS enrichment.openalex_works (
    partition_date       DATE NOT NULL,
    openalex_id          VARCHAR NOT NULL,   -- W…
    doi                  VARCHAR,            -- bare, lower case (10.48550/arxiv.… for preprints)
    arxiv_id             VARCHAR,
    title                VARCHAR,
    title_key            VARCHAR,
    publication_year     INTEGER,
    publication_date     DATE,
    type                 VARCHAR,
    cited_by_count       INTEGER,
    counts_by_year       STRUCT(year INTEGER, cited_by_count INTEGER)[],
    authors_count        INTEGER,
    author_names         VARCHAR[],          -- as printed (raw, else display name): checked against each listing before use
    is_authors_truncated BOOLEAN NOT NULL,
    fetched_at           TIMESTAMPTZ,
    matched_by           VARCHAR NOT NULL    -- 'arxiv_doi' (by 10.48550/arXiv.<id>) | 'title'
);

-- OpenAlex authors looked up by ORCID (grain: partition_date × openalex_id).
CREATE TABLE IF NOT EXISTS enrichment.openalex_authors (
    partition_date  DATE NOT NULL,
    openalex_id     VARCHAR NOT NULL,   -- A…
    orcid           VARCHAR,            -- bare: 0000-0002-1825-0097
    display_name    VARCHAR,
    works_count     INTEGER,
    cited_by_count  INTEGER,
    h_index         INTEGER,
    i10_index       INTEGER,
    fetched_at      TIMESTAMPTZ
);

-- Full author lists of enriched papers (grain: partition_date × paper × author_position): the
-- evidence that replaces truncated bylines. core joins them to papers on arxiv_id.
CREATE TABLE IF NOT EXISTS enrichment.author_lists (
    partition_date      DATE NOT NULL,
    arxiv_id            VARCHAR,            -- NULL only for works OpenAlex matched by title with no arXiv copy
    openalex_work_id    VARCHAR,
    title_key           VARCHAR,
    name                VARCHAR NOT NULL,   -- as the source prints it
    author_position     INTEGER NOT NULL,   -- 1-based
    evidence            VARCHAR NOT NULL,   -- 'arxiv' (arXiv's list) | 'openalex' (OpenAlex's, when arXiv gave none)
    orcid               VARCHAR,            -- from the OpenAlex authorship naming the same person
    openalex_author_id  VARCHAR
);

-- Lookups that gave nothing usable, one row per lookup and query and night (grain: partition_date ×
-- lookup × asked), with the reason (pipelines/ingest/sources/answers.py): an answer about something else
-- (id_mismatch, version_mismatch, title_mismatch, year_mismatch, authors_mismatch, name_mismatch,
-- implausible_value), an answer that cannot be used (error_answer, invalid_body, wrong_content_type,
-- unexpected_shape, empty_answer, oversize) or none (not_found, unavailable, refused, rate_limited,
-- budget_exhausted). What is rejected here never reaches the tables above, core or the marts.
CREATE TABLE IF NOT EXISTS enrichment.arxiv_rejects (
    partition_date  DATE NOT NULL,
    lookup          VARCHAR NOT NULL,   -- 'id' (by arXiv id) | 'title' (exact-title search)
    asked           VARCHAR NOT NULL,   -- the arXiv id or title asked for
    reason          VARCHAR NOT NULL,
    detail          VARCHAR NOT NULL,   -- one line: what was asked, what came back
    answered_id     VARCHAR,            -- the arXiv id (with version) of a turned-down record
    rejected_at     TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS enrichment.openalex_rejects (
    partition_date  DATE NOT NULL,
    lookup          VARCHAR NOT NULL,   -- 'arxiv_doi' | 'title' | 'openalex_id' (a title hit's full record) | 'orcid'
    asked           VARCHAR NOT NULL,   -- the DOI (10.48550/arxiv.<id>), title, W… id or ORCID asked for
    reason          VARCHAR NOT NULL,
    detail          VARCHAR NOT NULL,
    answered_id     VARCHAR,            -- the OpenAlex id (W… / A…) of a turned-down record
    rejected_at     TIMESTAMPTZ
);

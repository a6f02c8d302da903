-- core: resolved entities. One paper, one author — from evidence, with stable ids.
CREATE SCHEMA IF NOT EXISTS core;

-- Registries: every id ever issued, and the evidence key it was issued for. Append-only, so a
-- paper or author keeps its id across nights and backfills (see docs/resolution.md).
CREATE TABLE IF NOT EXISTS core.paper_id_registry (
    listing_key     VARCHAR NOT NULL,   -- staging.listings.listing_key
    paper_id        VARCHAR NOT NULL,
    first_seen      DATE NOT NULL
);
CREATE TABLE IF NOT EXISTS core.author_id_registry (
    mention_key     VARCHAR NOT NULL,   -- stable key of an author mention
    author_id       VARCHAR NOT NULL,
    first_seen      DATE NOT NULL
);

CREATE TABLE IF NOT EXISTS core.papers (
    paper_id          VARCHAR NOT NULL,
    title             VARCHAR NOT NULL,   -- the most common raw title among its listings
    title_normalized  VARCHAR,
    abstract          VARCHAR USING COMPRESSION ZSTD,
    year              INTEGER,
    pub_date          DATE,
    category          VARCHAR,
    arxiv_id          VARCHAR,
    doi               VARCHAR,
    venue             VARCHAR,
    listings_count    INTEGER NOT NULL,
    profiles_count    INTEGER NOT NULL,
    sources           VARCHAR[] NOT NULL,
    authors_known     INTEGER NOT NULL,   -- distinct authors linked by any evidence
    byline_complete   BOOLEAN NOT NULL,   -- some evidence gives the full author list
    first_seen        DATE NOT NULL,
    last_seen         DATE NOT NULL
);

CREATE TABLE IF NOT EXISTS core.paper_listings (
    listing_id  VARCHAR NOT NULL,
    paper_id    VARCHAR NOT NULL,
    method      VARCHAR NOT NULL,   -- arxiv_id | doi | title_exact | title_fuzzy | singleton | override
    score       DOUBLE NOT NULL
);

CREATE TABLE IF NOT EXISTS core.authors (
    author_id       VARCHAR NOT NULL,
    display_name    VARCHAR NOT NULL,
    name_key        VARCHAR,
    orcid           VARCHAR,
    openalex_id     VARCHAR,
    profiles_count  INTEGER NOT NULL,
    papers_count    INTEGER NOT NULL,
    names_count     INTEGER NOT NULL,
    first_seen      DATE NOT NULL
);

CREATE TABLE IF NOT EXISTS core.author_names (
    name_variant    VARCHAR NOT NULL,
    author_id       VARCHAR NOT NULL,
    mentions_count  INTEGER NOT NULL,
    sources         VARCHAR[] NOT NULL
);

CREATE TABLE IF NOT EXISTS core.author_profiles (
    source             VARCHAR NOT NULL,
    source_profile_id  VARCHAR NOT NULL,
    author_id          VARCHAR NOT NULL,
    profile_name       VARCHAR,
    method             VARCHAR NOT NULL,   -- algorithm | override
    last_captured      DATE NOT NULL
);

CREATE TABLE IF NOT EXISTS core.authorships (
    paper_id        VARCHAR NOT NULL,
    author_id       VARCHAR NOT NULL,
    evidence        VARCHAR NOT NULL,   -- 'profile' | 'byline' | 'arxiv' | 'openalex' (the strongest seen)
    evidence_all    VARCHAR[] NOT NULL,
    author_position INTEGER,            -- 1-based byline position when known
    name_as_listed  VARCHAR
);

-- Pairs the algorithm did not merge on its own: a person decides (via config/overrides.toml).
CREATE TABLE IF NOT EXISTS core.match_review (
    review_id           VARCHAR NOT NULL,
    entity_type         VARCHAR NOT NULL,   -- 'paper' | 'author'
    left_id             VARCHAR NOT NULL,   -- paper_id / author_id
    right_id            VARCHAR NOT NULL,
    left_label          VARCHAR,
    right_label         VARCHAR,
    score               DOUBLE NOT NULL,
    evidence_for        VARCHAR,
    evidence_against    VARCHAR,
    suggested_override  VARCHAR             -- the overrides.toml entry that would settle it
);

CREATE TABLE IF NOT EXISTS core.id_redirects (
    entity_type  VARCHAR NOT NULL,   -- 'paper' | 'author'
    old_id       VARCHAR NOT NULL,
    new_id       VARCHAR NOT NULL,
    reason       VARCHAR NOT NULL,   -- 'merged' | 'override'
    redirected_on DATE NOT NULL
);

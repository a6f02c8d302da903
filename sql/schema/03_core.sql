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
    doi               VARCHAR,            -- the primary DOI of core.paper_identifiers (journal DOI, else arXiv's)
    venue             VARCHAR,
    listings_count    INTEGER NOT NULL,
    profiles_count    INTEGER NOT NULL,
    sources           VARCHAR[] NOT NULL,
    authors_known     INTEGER NOT NULL,   -- distinct authors linked by any evidence
    byline_complete   BOOLEAN NOT NULL,   -- some evidence gives the full author list
    first_seen        DATE NOT NULL,
    last_seen         DATE NOT NULL,
    has_code          BOOLEAN,            -- a listing shows the site's Code flag (NULL: no site shows the flag)
    year_inferred     BOOLEAN             -- no listing shows the year: inferred from year-less dates
);

-- The crosswalk: every identifier of every paper, one row per (paper, scheme, value), with where it
-- came from. A value names one paper (ambiguous ones are in core.identifier_rejects instead).
CREATE TABLE IF NOT EXISTS core.paper_identifiers (
    paper_id      VARCHAR NOT NULL,
    scheme        VARCHAR NOT NULL,   -- 'arxiv' | 'doi' | 'openalex' | 'bzpeer_work' | 'scholarfeed_paper'
    value         VARCHAR NOT NULL,   -- normalised: arXiv id without version, DOI bare lower case, W…, the site's id
    versions      INTEGER[],          -- arXiv: every version seen (listings, arXiv's record)
    sources       VARCHAR[] NOT NULL, -- who gave it: 'bzpeer' | 'scholarfeed' | 'arxiv' | 'openalex'
    linked_by     VARCHAR NOT NULL,   -- the strongest link: 'page' | 'arxiv_id' | 'title' | 'derived'
    is_primary    BOOLEAN NOT NULL,   -- the paper's one value of the scheme (core.papers.arxiv_id / doi)
    first_seen    DATE NOT NULL,
    last_seen     DATE NOT NULL
);

-- Identifier values that were turned down, and why: nothing is dropped silently.
CREATE TABLE IF NOT EXISTS core.identifier_rejects (
    scheme      VARCHAR NOT NULL,
    value       VARCHAR NOT NULL,   -- as given
    source      VARCHAR NOT NULL,   -- who gave it
    reason      VARCHAR NOT NULL,   -- 'malformed' | 'not_verified' | 'ambiguous'
    detail      VARCHAR NOT NULL,
    paper_id    VARCHAR             -- the paper it would have named
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
    entity_type  VARCHAR NOT NULL,   -- 'paper' | 'author' | an identifier scheme ('openalex', 'bzpeer_work', 'scholarfeed_paper')
    old_id       VARCHAR NOT NULL,
    new_id       VARCHAR NOT NULL,
    reason       VARCHAR NOT NULL,   -- 'merged' | 'override' | 'superseded' (an identifier the source replaced)
    redirected_on DATE NOT NULL
);

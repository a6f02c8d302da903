-- marts: what analysts query and apps read. Definitions: sql/marts/<table>.sql and docs/warehouse.md.
CREATE SCHEMA IF NOT EXISTS marts;

-- Grain: source × source_profile_id × as_of (a partition date on which the profile was captured).
CREATE TABLE IF NOT EXISTS marts.author_metrics (
    source               VARCHAR NOT NULL,
    source_profile_id    VARCHAR NOT NULL,
    author_id            VARCHAR,
    as_of                DATE NOT NULL,
    capture_id           VARCHAR NOT NULL,   -- provenance: which capture
    captured_at          TIMESTAMPTZ NOT NULL,
    url                  VARCHAR,
    profile_name         VARCHAR,
    reported_h_index     INTEGER,
    reported_citations   INTEGER,
    reported_papers      INTEGER,            -- Scholar Feed "papers" / BZPEER "works"
    declared_items       INTEGER,
    listed_items         INTEGER,
    followers            INTEGER,
    trust_score          INTEGER,
    trust_tier           VARCHAR,
    reported_novelty_pct DOUBLE,
    reported_ai_score    DOUBLE,
    papers_held          INTEGER,            -- recomputed: papers the warehouse links to this author
    h_index_upper_bound  INTEGER,            -- min(reported papers, floor(sqrt(reported citations)))
    h_index_implausible  BOOLEAN NOT NULL,
    listing_incomplete   BOOLEAN NOT NULL,
    -- recomputed from the per-paper counts of the papers the warehouse attributes to the person
    papers_with_citations  INTEGER,          -- papers held with a per-paper count as of as_of
    citation_coverage      DOUBLE,           -- papers_with_citations / greatest(papers_held, reported_papers), 0-1
    recomputed_citations   INTEGER,          -- sum of those counts
    recomputed_h_index     INTEGER,          -- h-index of those counts
    recomputed_i10_index   INTEGER,          -- papers with >= 10 of them
    recomputed_source      VARCHAR,          -- where the per-paper counts come from ('openalex')
    recomputed_as_of       DATE,             -- the newest per-paper count used
    recomputed_h_index_bound INTEGER         -- the largest h the counts allow (papers without one count as unbounded); NULL below the coverage bar
);

-- Grain: level × measure × (source, source_profile_id | paper_id) × (as_of | year).
CREATE TABLE IF NOT EXISTS marts.citations (
    level               VARCHAR NOT NULL,   -- 'author' (a profile's reported total) | 'paper' (per-paper counts)
    measure             VARCHAR NOT NULL,   -- 'total' (the count as of as_of) | 'in_year' (citations received during year)
    source              VARCHAR NOT NULL,   -- 'scholarfeed', 'openalex', ...
    source_profile_id   VARCHAR,
    author_id           VARCHAR,
    paper_id            VARCHAR,
    as_of               DATE NOT NULL,      -- 'in_year': the night of the record the yearly series comes from
    year                INTEGER,            -- 'in_year' only: the calendar year counted
    citations           INTEGER NOT NULL,
    previous_as_of      DATE,               -- 'total' only
    previous_citations  INTEGER,            -- the series' previous point (previous capture / previous year)
    change              INTEGER,            -- citations - previous_citations (NULL for the first point)
    capture_id          VARCHAR             -- provenance (profile capture, or enrichment fetch)
);

-- Grain: paper_id.
CREATE TABLE IF NOT EXISTS marts.paper_scores (
    paper_id               VARCHAR NOT NULL,
    category               VARCHAR,
    year                   INTEGER,
    reported_score         DOUBLE,      -- Scholar Feed's per-paper score (max over its listings' current rows)
    reported_score_source  VARCHAR,
    novelty_raw            DOUBLE,
    neighbours_compared    INTEGER,
    nearest_paper_id       VARCHAR,
    nearest_similarity     DOUBLE,
    novelty_percentile     DOUBLE,
    new_terms_share        DOUBLE,
    new_term_pairs_share   DOUBLE,
    new_terms              VARCHAR[],
    cold_start             BOOLEAN,
    novelty_score          DOUBLE,
    method_version         VARCHAR NOT NULL,
    has_code               BOOLEAN,     -- core.papers.has_code
    year_inferred          BOOLEAN,     -- core.papers.year_inferred
    epoch_id               VARCHAR,     -- the novelty epoch (vocabulary and IDF) that scored it: cache.novelty_epochs
    scored_on              DATE         -- the night it was scored (kept until its inputs change or a new epoch)
);

-- Grain: author_id × source profile (one row per profile the author has; a single row with source NULL
-- for authors known only from bylines).
CREATE TABLE IF NOT EXISTS marts.author_scores (
    author_id             VARCHAR NOT NULL,
    source                VARCHAR,
    source_profile_id     VARCHAR,
    as_of                 DATE,
    reported_novelty_pct  DOUBLE,
    reported_ai_score     DOUBLE,
    computed_novelty      DOUBLE,    -- mean novelty_percentile of the author's papers
    papers_scored         INTEGER NOT NULL,
    method_version        VARCHAR NOT NULL
);

-- Grain: unordered author pair (author_a < author_b).
CREATE TABLE IF NOT EXISTS marts.collaboration_edges (
    author_a      VARCHAR NOT NULL,
    author_b      VARCHAR NOT NULL,
    papers_count  INTEGER NOT NULL,
    first_year    INTEGER,
    last_year     INTEGER,
    paper_ids     VARCHAR[] NOT NULL,
    evidence      VARCHAR[] NOT NULL   -- 'byline' (both named on one byline), 'profile' (a profile owner and a byline name), 'arxiv', 'openalex'
);

-- Grain: as_of (one row per partition date the marts were built for): what the night landed and what
-- the warehouse held after it. The nightly report draws the rejects and the review queue over the nights
-- from it: core.match_review is replaced every night, so its size has no history anywhere else.
CREATE TABLE IF NOT EXISTS marts.nightly_summary (
    as_of                DATE NOT NULL,
    pages                INTEGER NOT NULL,   -- raw.page_captures rows of the night (fetches)
    profiles             INTEGER NOT NULL,   -- staging.profiles rows of the night
    listings             INTEGER NOT NULL,
    rejects              INTEGER NOT NULL,
    quality_issues       INTEGER NOT NULL,
    papers               INTEGER NOT NULL,   -- core.papers after the night's run
    authors              INTEGER NOT NULL,
    review_paper_pairs   INTEGER NOT NULL,   -- core.match_review rows after the night's run
    review_author_pairs  INTEGER NOT NULL,
    collaboration_edges  INTEGER NOT NULL,
    built_at             TIMESTAMPTZ NOT NULL
);

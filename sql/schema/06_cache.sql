-- cache: work a step can reuse on a later night instead of redoing it. Internal: not part of the
-- analysts' contract, not exported, no quality suites; dropping the schema only costs one slower
-- night (ensure_schema recreates it empty).
CREATE SCHEMA IF NOT EXISTS cache;

-- The paper matcher's title diffs (pipelines/resolution/papers.py TitleDiffCache). A diff is a pure
-- function of the two title keys, so it holds on every later night until the diff's code changes
-- (version: a fingerprint of that code). Grain: ordered pair of title keys. Rewritten by the core
-- step with the diffs that run used, so it follows the corpus, not its history (an incremental
-- night, which compares only a subset, keeps the earlier diffs too; the weekly full night trims).
CREATE TABLE IF NOT EXISTS cache.title_diffs (
    left_key    VARCHAR NOT NULL,   -- title key (textnorm.match_key, stemmed) of the pair's left record
    right_key   VARCHAR NOT NULL,
    score       DOUBLE NOT NULL,    -- titles.compare_titles(...).score
    veto        VARCHAR,            -- why the titles name different papers (NULL: no veto)
    detail      VARCHAR NOT NULL,
    version     VARCHAR NOT NULL    -- titles.py's fingerprint when the diff was computed
);

-- The author matcher's last resolution (pipelines/resolution/incremental.py): per collapsed
-- mention, a digest of what the matcher saw, the cluster it landed in and the name labels it was
-- compared on. The next night re-resolves only the people a change can reach and keeps the rest.
-- Grain: mention_id. Rewritten by the core step every night.
CREATE TABLE IF NOT EXISTS cache.author_matches (
    mention_id  VARCHAR NOT NULL,   -- the matcher's mention id (smallest evidence key of the mention)
    digest      UBIGINT NOT NULL,   -- Polars hash of the mention's matcher input and the names on its paper
    author_id   VARCHAR NOT NULL,   -- the matcher's cluster label (smallest mention id), not the stable id
    method      VARCHAR NOT NULL,
    score       DOUBLE NOT NULL,
    labels      VARCHAR[] NOT NULL, -- name keys and loose keys it was compared on
    version     VARCHAR NOT NULL    -- incremental.author_matcher_version() when it was resolved
);

-- The author matcher's evidence weights (pipelines/resolution/author_linkage.py, model_rows): the
-- Fellegi-Sunter m/u per comparison level and the match share ("m", "u", "prior"), the count of
-- mentions they were fitted on ("mentions"), and the term-frequency tables — estimated people per
-- name ("people"), mentions per affiliation ("affiliation"), mentions per title word ("title").
-- Fitted on every full night; an incremental night reuses it, so it weighs evidence exactly as
-- that full night did. Grain: (part, key). Rewritten by the core step every night.
CREATE TABLE IF NOT EXISTS cache.author_model (
    part   VARCHAR NOT NULL,
    key    VARCHAR NOT NULL,
    value  DOUBLE NOT NULL
);

-- The author matcher's review rows of that resolution (matcher ids, as resolve_authors returns them).
CREATE TABLE IF NOT EXISTS cache.author_match_review (
    left_id          VARCHAR NOT NULL,
    right_id         VARCHAR NOT NULL,
    left_label       VARCHAR NOT NULL,
    right_label      VARCHAR NOT NULL,
    score            DOUBLE NOT NULL,
    evidence_for     VARCHAR NOT NULL,
    evidence_against VARCHAR NOT NULL,
    left_cluster     VARCHAR NOT NULL,
    right_cluster    VARCHAR NOT NULL
);

-- The paper matcher's last resolution (pipelines/resolution/incremental_papers.py): per record (a
-- listing key), a digest of what the matcher read and the paper it landed in. The next night
-- re-resolves only the papers a change can reach and keeps the rest. Grain: record_id. Rewritten
-- by the core step every night.
CREATE TABLE IF NOT EXISTS cache.paper_matches (
    record_id   VARCHAR NOT NULL,   -- the listing key
    digest      UBIGINT NOT NULL,   -- Polars hash of the record's title, author list, year, arXiv id, DOI
    paper_id    VARCHAR NOT NULL,   -- the matcher's cluster label (smallest record id), not the stable id
    method      VARCHAR NOT NULL,
    score       DOUBLE NOT NULL,
    version     VARCHAR NOT NULL    -- incremental_papers.paper_matcher_version() when it was resolved
);

-- The paper matcher's review rows of that resolution (record ids, as resolve_papers returns them).
CREATE TABLE IF NOT EXISTS cache.paper_match_review (
    left_id          VARCHAR NOT NULL,
    right_id         VARCHAR NOT NULL,
    left_label       VARCHAR NOT NULL,
    right_label      VARCHAR NOT NULL,
    score            DOUBLE NOT NULL,
    evidence_for     VARCHAR NOT NULL,
    evidence_against VARCHAR NOT NULL,
    left_cluster     VARCHAR NOT NULL,
    right_cluster    VARCHAR NOT NULL
);

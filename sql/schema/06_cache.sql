-- cache: work a step can reuse on a later night instead of redoing it. Internal: not part of the
-- analysts' contract, not exported, no quality suites; dropping the schema only costs one slower
-- night (ensure_schema recreates it empty).
CREATE SCHEMA IF NOT EXISTS cache;

-- The paper matcher's title diffs (pipelines/resolution/papers.py TitleDiffCache). A diff is a pure
-- function of the two title keys, so it holds on every later night until the diff's code changes
-- (version: a fingerprint of that code). Grain: ordered pair of title keys. Rewritten by the core
-- step with the diffs that run used, so it follows the corpus, not its history.
CREATE TABLE IF NOT EXISTS cache.title_diffs (
    left_key    VARCHAR NOT NULL,   -- title key (textnorm.match_key, stemmed) of the pair's left record
    right_key   VARCHAR NOT NULL,
    score       DOUBLE NOT NULL,    -- titles.compare_titles(...).score
    veto        VARCHAR,            -- why the titles name different papers (NULL: no veto)
    detail      VARCHAR NOT NULL,
    version     VARCHAR NOT NULL    -- titles.py's fingerprint when the diff was computed
);

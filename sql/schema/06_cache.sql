-- cache: work a step can reuse on a later night instead of redoing it. Internal: not part of the
-- analysts' contract, not exported, no quality suites; dropping the schema only costs one slower
-- night (ensure_schema recreates it empty).
CREATE SCHEMA IF NOT EXISTS cache;

-- The paper matcher's title diffs (pipelines/core/resolution/papers.py TitleDiffCache). A diff is a pure
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

-- The author matcher's last resolution (pipelines/core/resolution/incremental.py): per collapsed
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

-- The author matcher's evidence weights (pipelines/core/resolution/author_linkage.py, model_rows): the
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

-- The paper matcher's last resolution (pipelines/core/resolution/incremental_papers.py): per record (a
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

-- Novelty epochs (pipelines/marts/scoring/epoch.py, docs/scoring.md "Epochs"): the vocabulary and IDF the
-- novelty scorer fits on the corpus once per epoch; every marts.paper_scores row names its epoch
-- (epoch_id) and scorer version (method_version). A night scores only the papers without a score under
-- the current epoch and keeps the rest. Grain: (epoch_id, method_version); one row per epoch ever fitted
-- (the history of epochs; the model tables below hold the current epoch only).
CREATE TABLE IF NOT EXISTS cache.novelty_epochs (
    epoch_id        VARCHAR NOT NULL,   -- the night that fitted it (YYYY-MM-DD)
    method_version  VARCHAR NOT NULL,   -- pipelines.marts.scoring.METHOD_VERSION
    fitted_on       DATE NOT NULL,      -- the partition date of that night
    papers          INTEGER NOT NULL,   -- N of the IDF: the papers it was fitted on
    terms           INTEGER NOT NULL,   -- stems in its vocabulary when fitted
    bigrams         INTEGER NOT NULL,   -- ordered adjacent term pairs with a document frequency
    novelty_window  INTEGER,            -- SCHOLARHOUSE_NOVELTY_WINDOW it scored with (NULL: every earlier paper)
    reason          VARCHAR NOT NULL,   -- why a new epoch: none before, scorer version, schedule, on demand, window
    fitted_at       TIMESTAMPTZ NOT NULL
);

-- The current epoch's vocabulary: term id, stem, readable word and document frequency in the fit corpus.
-- Stems first met on a later night are appended with the next ids and df 0. Grain: (epoch_id, method_version, term_id).
CREATE TABLE IF NOT EXISTS cache.novelty_terms (
    epoch_id        VARCHAR NOT NULL,
    method_version  VARCHAR NOT NULL,
    term_id         INTEGER NOT NULL,
    stem            VARCHAR NOT NULL,
    surface         VARCHAR NOT NULL,   -- the shortest word seen that stems to it (what new_terms shows)
    df              INTEGER NOT NULL    -- papers of the fit corpus using it (0: first met after the fit)
);

-- The current epoch's document frequencies of ordered adjacent term pairs (the bigram half of the IDF).
-- Grain: (epoch_id, method_version, first_id, second_id).
CREATE TABLE IF NOT EXISTS cache.novelty_bigrams (
    epoch_id        VARCHAR NOT NULL,
    method_version  VARCHAR NOT NULL,
    first_id        INTEGER NOT NULL,   -- cache.novelty_terms.term_id
    second_id       INTEGER NOT NULL,
    df              INTEGER NOT NULL
);

-- Every current paper's terms as the current epoch read them (term ids, -1 = sentence break), and the
-- digest of the inputs it was scored from (sql/marts/paper_score_inputs.sql): a night tokenises only
-- the papers it scores and reads the rest from here. Grain: (epoch_id, method_version, paper_id).
CREATE TABLE IF NOT EXISTS cache.novelty_tokens (
    epoch_id        VARCHAR NOT NULL,
    method_version  VARCHAR NOT NULL,
    paper_id        VARCHAR NOT NULL,
    inputs_digest   VARCHAR NOT NULL,
    title_terms     INTEGER[] NOT NULL,
    abstract_terms  INTEGER[] NOT NULL
);

-- The novelty scorer's input, one row per paper of core.papers (docs/scoring.md): what the score
-- reads, and a digest of it. A paper is scored again under the current epoch only when its digest
-- differs from the one it was scored with (cache.novelty_tokens.inputs_digest), so a night scores
-- new papers and papers whose title, abstract, category, year or date changed, nothing else.
-- chr(0) stands for NULL (no title ends up equal to a missing one), chr(31) separates the fields.
SELECT
    paper_id, title, abstract, category, year, pub_date,
    md5(concat_ws(chr(31),
                  coalesce(title, chr(0)), coalesce(abstract, chr(0)), coalesce(category, chr(0)),
                  coalesce(CAST(year AS VARCHAR), chr(0)), coalesce(CAST(pub_date AS VARCHAR), chr(0)))) AS inputs_digest
FROM core.papers

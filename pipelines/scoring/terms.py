"""Turning titles and abstracts into term ids, vectorised for a million papers.

The novelty score (``pipelines.scoring.novelty``) needs, for every paper, the sequence of its
*terms*: lower-case words with LaTeX, URLs, English stopwords and numbers removed and a light
plural-folding stemmer applied. This module produces them as flat integer arrays (one entry per
token, papers in the caller's order) so the rest of the scorer never touches Python strings.

Design:
- Normalisation is ``pipelines.textnorm.match_key`` (NFKC, LaTeX stripped, diacritics folded,
  lower case, punctuation to spaces). Calling it once per string costs ~10 µs per abstract, so
  plain-ASCII strings with no LaTeX characters take an equivalent vectorised Polars path
  (lower-case, non-alphanumerics to spaces) and only the rest go through ``match_key``. The two
  paths give identical keys on the strings the fast path accepts (a test checks this).
- URLs are removed from the raw text first (``match_key`` would keep them as word soup), and
  sentence ends (``. ! ? ;`` followed by white space) become a break marker, so word pairs are only
  formed inside a sentence.
- Tokens are processed in batches of papers so memory stays bounded; term ids are finally
  renumbered by the stem's string order, so ids (and every float summed in id order downstream)
  do not depend on the batch size or the input row order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.textnorm import match_key

# Same URL shape as pipelines.textnorm (code links in abstracts); removed before normalising.
URL_PATTERN = r"""https?://[^\s<>"')\]]+"""
# A sentence end: the words on either side must not form a pair.
_SENTENCE_END_PATTERN = r"[.!?;]\s+"
# Placeholder word for a sentence break; survives match_key (lower-case letters) and is
# not a real English word. It never becomes a term.
BREAK_TOKEN = "xxsentencebreakxx"
# Strings the vectorised path cannot normalise exactly like match_key: anything non-ASCII
# (NFKC, diacritics) and LaTeX markup (backslash commands, $...$ math).
_NEEDS_MATCH_KEY_PATTERN = r"[^\x00-\x7f]|[\\$]"

MIN_TERM_CHARS = 2
MAX_TERM_CHARS = 40
# Term id used in the token stream for a sentence break (no real term has a negative id).
BREAK_ID = -1

# English function words, plus the contractions' leftovers after punctuation became spaces.
# Deliberately no domain words ("model", "method"): inverse document frequency already makes
# those weigh little, and a field's own vocabulary is exactly what novelty is measured in.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although
    always am among amongst an and another any anyhow anyone anything anyway anywhere are around as at
    be became because become becomes becoming been before beforehand behind being below beside besides
    between beyond both but by can cannot could did do does doing done down due during each eg either
    else elsewhere enough etc even ever every everyone everything everywhere except few for former
    formerly from further furthermore had has have having he hence her here hereafter hereby herein
    hereupon hers herself him himself his how however ie if in indeed into is it its itself just last
    latter latterly least less many may me meanwhile might mine more moreover most mostly much must my
    myself namely neither never nevertheless next no nobody none noone nor not nothing now nowhere of
    off often on once one only onto or other others otherwise our ours ourselves out over own per
    perhaps rather re same seem seemed seeming seems several she should since so some somehow someone
    something sometime sometimes somewhere still such than that the their theirs them themselves then
    thence there thereafter thereby therefore therein thereupon these they this those though through
    throughout thru thus to together too toward towards under until up upon us very via was we well were
    what whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
    whether which while whither who whoever whole whom whose why will with within without would yet you
    your yours yourself yourselves
    s t d ll m ve re don doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven hadn
    """.split()
)


def _prepared(texts: pl.Series) -> pl.Series:
    """Raw text with URLs removed and sentence ends replaced by ``BREAK_TOKEN``; nulls -> ''."""
    return (
        texts.cast(pl.String)
        .fill_null("")
        .str.replace_all(URL_PATTERN, " ")
        .str.replace_all(_SENTENCE_END_PATTERN, f" {BREAK_TOKEN} ")
    )


def _lowered_or_keyed(texts: pl.Series) -> pl.Series:
    """Per string: ``match_key`` of it when it has non-ASCII or LaTeX characters, else just its
    lower-case form. Splitting either on non-alphanumerics gives the words of ``match_key``
    (on plain ASCII, NFKC / LaTeX stripping / diacritic folding are no-ops and the spacing
    repairs only touch punctuation, which separates words anyway)."""
    prepared = _prepared(texts)
    lowered = prepared.str.to_lowercase()
    needs_slow = prepared.str.contains(_NEEDS_MATCH_KEY_PATTERN)
    if not needs_slow.any():
        return lowered
    slow_positions = np.flatnonzero(needs_slow.to_numpy())
    slow_values = [match_key(text) for text in prepared.gather(slow_positions).to_list()]
    return lowered.scatter(slow_positions, slow_values)


def clean_keys(texts: pl.Series) -> pl.Series:
    """Normalised keys (``match_key`` semantics) of raw titles or abstracts, URLs removed,
    sentence ends replaced by ``BREAK_TOKEN``. Nulls become empty strings."""
    return fast_match_key(_lowered_or_keyed(texts))


def fast_match_key(texts: pl.Series) -> pl.Series:
    """``match_key`` for plain-ASCII text without LaTeX: lower-case, non-alphanumerics to single
    spaces, trimmed."""
    return texts.str.to_lowercase().str.replace_all(r"[^0-9a-z]+", " ").str.strip_chars()


def stem_expr(word: pl.Expr) -> pl.Expr:
    """A light, plural-folding stemmer (after Harman's S-stemmer), as a Polars expression.

    studies -> study, losses -> loss, approaches -> approach, networks -> network, images -> image;
    words ending in ss / us / is (loss, corpus, analysis) and words of three letters or fewer keep
    their s. Light on purpose: it merges singular and plural, never unrelated words.
    """
    n = word.str.len_chars()
    ends = word.str.ends_with
    return (
        pl.when((n > 4) & ends("ies") & ~ends("eies") & ~ends("aies"))
        .then(word.str.slice(0, n - 3) + pl.lit("y"))
        .when((n > 4) & (ends("sses") | ends("ches") | ends("shes") | ends("xes") | ends("zzes")))
        .then(word.str.slice(0, n - 2))
        .when((n > 3) & ends("s") & ~ends("ss") & ~ends("us") & ~ends("is"))
        .then(word.str.slice(0, n - 1))
        .otherwise(word)
    )


def light_stem(word: str) -> str:
    """``stem_expr`` for one word (for tests and readers)."""
    return pl.select(stem_expr(pl.lit(word))).item()


@dataclass(frozen=True)
class TokenStream:
    """Term ids of every paper's title and abstract, as flat arrays in paper order.

    ``doc[i]`` is the paper's position in the input, ``term[i]`` its term id (``BREAK_ID`` for a
    sentence break), tokens of one paper are contiguous and in text order. ``vocabulary[t]`` is the
    stem of term ``t`` (ids follow the stems' sorted order) and ``surface[t]`` a readable word for
    it (the shortest, then alphabetically first, word that stems to it).
    """

    title_doc: np.ndarray
    title_term: np.ndarray
    abstract_doc: np.ndarray
    abstract_term: np.ndarray
    vocabulary: list[str]
    surface: list[str]

    @property
    def n_terms(self) -> int:
        return len(self.vocabulary)


def _tokens(doc_ids: np.ndarray, texts: pl.Series) -> pl.DataFrame:
    """(doc, token) rows of raw texts after removing stopwords, numbers, one-letter and overlong
    tokens; sentence breaks are kept (they only stop pairs)."""
    token = pl.col("token")
    n = token.str.len_bytes()  # words are ASCII here
    return (
        pl.DataFrame({"doc": doc_ids, "token": _lowered_or_keyed(texts).str.extract_all("[0-9a-z]+")})
        .explode("token")
        .filter(
            (token == BREAK_TOKEN)
            | (
                (n >= MIN_TERM_CHARS)
                & (n <= MAX_TERM_CHARS)
                & token.str.contains("[a-z]")
                & ~token.is_in(list(STOPWORDS))
            )
        )
    )


def tokenize(
    titles: pl.Series, abstracts: pl.Series, *, batch_size: int = 100_000
) -> TokenStream:
    """Tokenise papers (in the given order) into a ``TokenStream``."""
    if len(titles) != len(abstracts):
        raise ValueError("titles and abstracts differ in length")
    n = len(titles)
    # stem -> provisional id (order of first appearance) and best surface word
    vocab = pl.DataFrame(schema={"stem": pl.String, "tid": pl.Int64, "surface": pl.String})
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"title": [], "abstract": []}
    for start in range(0, n, batch_size):
        stop = min(n, start + batch_size)
        doc_ids = np.arange(start, stop, dtype=np.int64)
        batch_tokens = {
            "title": _tokens(doc_ids, titles.slice(start, stop - start)),
            "abstract": _tokens(doc_ids, abstracts.slice(start, stop - start)),
        }
        words = (
            pl.concat([batch_tokens["title"], batch_tokens["abstract"]])
            .filter(pl.col("token") != BREAK_TOKEN)
            .select(pl.col("token").unique())
            .with_columns(stem=stem_expr(pl.col("token")))
        )
        batch_surface = words.group_by("stem").agg(
            pl.col("token").sort_by(pl.col("token").str.len_chars(), pl.col("token")).first().alias("surface_new")
        )
        merged = batch_surface.join(vocab, on="stem", how="left")
        fresh = merged.filter(pl.col("tid").is_null()).sort("stem")
        fresh = fresh.with_columns(tid=pl.int_range(len(vocab), len(vocab) + len(fresh), dtype=pl.Int64))
        known = merged.filter(pl.col("tid").is_not_null())
        improved = known.with_columns(
            surface=pl.when(
                (pl.col("surface_new").str.len_chars() < pl.col("surface").str.len_chars())
                | (
                    (pl.col("surface_new").str.len_chars() == pl.col("surface").str.len_chars())
                    & (pl.col("surface_new") < pl.col("surface"))
                )
            )
            .then(pl.col("surface_new"))
            .otherwise(pl.col("surface"))
        ).select("stem", "tid", "surface")
        vocab = pl.concat(
            [
                vocab.join(improved, on="stem", how="anti"),
                improved,
                fresh.select("stem", "tid", pl.col("surface_new").alias("surface")),
            ]
        )
        token_to_tid = words.join(vocab.select("stem", "tid"), on="stem").select("token", "tid")
        for part, frame in batch_tokens.items():
            mapped = frame.join(token_to_tid, on="token", how="left", maintain_order="left").with_columns(
                pl.col("tid").fill_null(BREAK_ID)
            )
            parts[part].append((mapped.get_column("doc").to_numpy(), mapped.get_column("tid").to_numpy()))

    # Renumber by the stems' sorted order: ids independent of batch size and row order.
    vocab = vocab.sort("tid")
    order = np.argsort(np.array(vocab.get_column("stem").to_list(), dtype=object), kind="stable")
    provisional_to_final = np.empty(len(order), dtype=np.int64)
    provisional_to_final[order] = np.arange(len(order), dtype=np.int64)
    stems = vocab.get_column("stem").to_list()
    surfaces = vocab.get_column("surface").to_list()

    def _concat(part: str) -> tuple[np.ndarray, np.ndarray]:
        if not parts[part]:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        docs = np.concatenate([d for d, _ in parts[part]]).astype(np.int64, copy=False)
        tids = np.concatenate([t for _, t in parts[part]]).astype(np.int64, copy=False)
        real = tids >= 0
        tids = tids.copy()
        tids[real] = provisional_to_final[tids[real]]
        return docs, tids

    title_doc, title_term = _concat("title")
    abstract_doc, abstract_term = _concat("abstract")
    return TokenStream(
        title_doc=title_doc,
        title_term=title_term,
        abstract_doc=abstract_doc,
        abstract_term=abstract_term,
        vocabulary=[stems[i] for i in order],
        surface=[surfaces[i] for i in order],
    )


def terms_of(text: str | None) -> list[str]:
    """The stemmed terms of one text, in order (a readable helper for tests and docs)."""
    stream = tokenize(pl.Series([text], dtype=pl.String), pl.Series([None], dtype=pl.String))
    return [stream.vocabulary[t] for t in stream.title_term if t >= 0]


__all__ = [
    "BREAK_ID",
    "BREAK_TOKEN",
    "STOPWORDS",
    "TokenStream",
    "clean_keys",
    "fast_match_key",
    "light_stem",
    "stem_expr",
    "terms_of",
    "tokenize",
]

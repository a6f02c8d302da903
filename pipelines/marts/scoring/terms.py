"""Turning titles and abstracts into term ids, vectorised for a million papers.

The novelty score (``pipelines.marts.scoring.novelty``) needs, for every paper, the sequence of its
*terms*: lower-case words with LaTeX, URLs, English stopwords and numbers removed and a light
plural-folding stemmer applied. This module produces them as flat integer arrays (one entry per
token, papers in the caller's order) so the rest of the scorer never touches Python strings.

Design:
- Normalisation is ``pipelines.textnorm.match_key`` (NFKC, LaTeX stripped, diacritics folded,
  lower case, punctuation to spaces); words are the runs of [0-9a-z]. Calling it once per string
  costs ~10 µs per abstract, so plain-ASCII strings with no LaTeX characters take an equivalent
  vectorised Polars path (lower-case, then split on non-alphanumerics) and only the rest go
  through ``match_key``. Both give the same words on the strings the fast path accepts (a
  property test checks this).
- URLs are removed from the raw text first (``match_key`` would keep them as word soup), and
  sentence ends (``. ! ? ;`` followed by white space) become a break marker, so word pairs are only
  formed inside a sentence.
- Tokens are processed in batches of papers so memory stays bounded; term ids are finally
  renumbered by the stem's string order, so ids (and every float summed in id order downstream)
  do not depend on the batch size or the input row order.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
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
class TermSequences:
    """One text field (title or abstract) of every paper as term ids.

    Paper ``i``'s terms, in text order, are ``term[indptr[i]:indptr[i + 1]]`` (int32;
    ``BREAK_ID`` marks a sentence break)."""

    indptr: np.ndarray
    term: np.ndarray

    def rows(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(paper - start, term) of every token of papers [start, stop), flattened."""
        lo, hi = int(self.indptr[start]), int(self.indptr[stop])
        local = np.repeat(np.arange(stop - start, dtype=np.int64), np.diff(self.indptr[start : stop + 1]))
        return local, self.term[lo:hi]


@dataclass(frozen=True)
class TokenStream:
    """Term ids of every paper's title and abstract.

    Term ids follow the stems' sorted order: ``vocabulary[t]`` is the stem of term ``t`` and
    ``surface[t]`` a readable word for it (the shortest, then alphabetically first, word that
    stems to it)."""

    title: TermSequences
    abstract: TermSequences
    vocabulary: list[str]
    surface: list[str]

    @property
    def n_terms(self) -> int:
        return len(self.vocabulary)

    @property
    def n_docs(self) -> int:
        return len(self.title.indptr) - 1


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


@dataclass(frozen=True)
class _BatchText:
    """The string work of one batch (done on worker threads): filtered tokens of each field, and
    the batch's distinct words with their stems."""

    start: int
    stop: int
    fields: dict[str, pl.DataFrame]  # "title" / "abstract" -> (doc, token)
    words: pl.DataFrame  # token, stem


def _batch_text(titles: pl.Series, abstracts: pl.Series, start: int, stop: int) -> _BatchText:
    doc_ids = np.arange(start, stop, dtype=np.int64)
    fields = {
        "title": _tokens(doc_ids, titles.slice(start, stop - start)),
        "abstract": _tokens(doc_ids, abstracts.slice(start, stop - start)),
    }
    words = (
        pl.concat([fields["title"].select("token"), fields["abstract"].select("token")])
        .filter(pl.col("token") != BREAK_TOKEN)
        .unique()
        .with_columns(stem=stem_expr(pl.col("token")))
    )
    return _BatchText(start, stop, fields, words)


def tokenize(
    titles: pl.Series, abstracts: pl.Series, *, batch_size: int = 50_000, n_threads: int = 1
) -> TokenStream:
    """Tokenise papers (in the given order) into a ``TokenStream``.

    Batches' string work runs on ``n_threads`` threads (Polars releases the GIL); term ids are
    assigned on this thread, in batch order."""
    if len(titles) != len(abstracts):
        raise ValueError("titles and abstracts differ in length")
    n = len(titles)
    # stem -> provisional id (order of first appearance; renumbered at the end)
    vocab = pl.DataFrame(schema={"stem": pl.String, "tid": pl.Int64})
    n_vocab = 0
    all_words: list[pl.DataFrame] = []
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"title": [], "abstract": []}  # (counts, tids)
    bounds = [(start, min(n, start + batch_size)) for start in range(0, n, batch_size)]
    with ThreadPoolExecutor(max_workers=max(1, n_threads)) as pool:
        pending: deque = deque()
        for start, stop in bounds:
            pending.append(pool.submit(_batch_text, titles, abstracts, start, stop))
            if len(pending) < max(1, n_threads):  # at most n_threads batches alive at once
                continue
            n_vocab, vocab = _assign(pending.popleft().result(), vocab, n_vocab, parts, all_words)
        while pending:
            n_vocab, vocab = _assign(pending.popleft().result(), vocab, n_vocab, parts, all_words)

    # The readable form of each stem: its shortest, then alphabetically first, word.
    surface_of = (
        (
            pl.concat(all_words)
            .unique(subset="token")
            .group_by("stem")
            .agg(
                pl.col("token")
                .sort_by(pl.col("token").str.len_bytes(), pl.col("token"))
                .first()
                .alias("surface")
            )
        )
        if all_words
        else pl.DataFrame(schema={"stem": pl.String, "surface": pl.String})
    )
    # Renumber by the stems' sorted order: ids independent of batch size and row order.
    vocab = vocab.join(surface_of, on="stem", how="left").sort("stem")
    provisional_to_final = np.empty(vocab.height, dtype=np.int32)
    provisional_to_final[vocab.get_column("tid").to_numpy()] = np.arange(vocab.height, dtype=np.int32)

    def _concat(part: str) -> TermSequences:
        indptr = np.zeros(n + 1, dtype=np.int64)
        if not parts[part]:
            return TermSequences(indptr, np.empty(0, dtype=np.int32))
        np.cumsum(np.concatenate([c for c, _ in parts[part]]), out=indptr[1:])
        tids = np.concatenate([t for _, t in parts[part]])
        parts[part].clear()
        real = tids >= 0
        tids[real] = provisional_to_final[tids[real]]
        return TermSequences(indptr, tids)

    return TokenStream(
        title=_concat("title"),
        abstract=_concat("abstract"),
        vocabulary=vocab.get_column("stem").to_list(),
        surface=vocab.get_column("surface").to_list(),
    )


def _assign(
    batch: _BatchText,
    vocab: pl.DataFrame,
    n_vocab: int,
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]],
    all_words: list[pl.DataFrame],
) -> tuple[int, pl.DataFrame]:
    """Give the batch's new stems the next provisional ids, map its tokens to ids, and append
    (tokens per paper, ids) to ``parts``."""
    stems = batch.words.select("stem").unique().join(vocab, on="stem", how="left")
    fresh = stems.filter(pl.col("tid").is_null()).sort("stem")
    fresh = fresh.with_columns(tid=pl.int_range(n_vocab, n_vocab + fresh.height, dtype=pl.Int64))
    vocab = pl.concat([vocab, fresh])
    n_vocab += fresh.height
    token_to_tid = batch.words.join(
        pl.concat([stems.filter(pl.col("tid").is_not_null()), fresh]), on="stem"
    ).select("token", "tid")
    for part, frame in batch.fields.items():
        mapped = frame.join(token_to_tid, on="token", how="left", maintain_order="left")
        tids = mapped.get_column("tid").fill_null(BREAK_ID).to_numpy().astype(np.int32)
        counts = np.bincount(
            mapped.get_column("doc").to_numpy() - batch.start, minlength=batch.stop - batch.start
        )
        parts[part].append((counts, tids))
    all_words.append(batch.words)
    return n_vocab, vocab


def terms_of(text: str | None) -> list[str]:
    """The stemmed terms of one text, in order (a readable helper for tests and docs)."""
    stream = tokenize(pl.Series([text], dtype=pl.String), pl.Series([None], dtype=pl.String))
    return [stream.vocabulary[t] for t in stream.title.term if t >= 0]


__all__ = [
    "BREAK_ID",
    "BREAK_TOKEN",
    "STOPWORDS",
    "TermSequences",
    "TokenStream",
    "light_stem",
    "stem_expr",
    "terms_of",
    "tokenize",
]

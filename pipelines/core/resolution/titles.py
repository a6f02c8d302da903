"""Paper titles: comparison keys and a token-level diff that tells edits from different papers.

Two titles are reduced to token lists (``textnorm.match_key``: case, punctuation, spacing, LaTeX
and diacritics gone; then a light plural stemmer) and their words are aligned: identical words
(in order with ``difflib``, then moved words anywhere), then *equivalent* forms — a word joined
or split (``data base``/``database``, ``QueryOptimization``), an acronym and its expansion
(``LLM``/``large language model``), spelling variants (``behaviour``/``behavior``,
``heterogenous``/``heterogeneous``, ``update``/``updating``, ``dept``/``department``); and, when a
single content word is left on each side, in one place among three or more agreeing words, and
the two look alike (``tunable``/``tumble``, ``Gangam``/``Sangam``: an OCR slip or a typo), they are
aligned as a typo that weighs half an edit. The words left over are classified:

- *conflict* (a veto): content words replaced by different ones in the middle, or a one/two-word
  change at the start or end (``dynamic``/``static`` — the HONPAS pair); a negation prefix
  (``linear``/``nonlinear``); different numbers (``GPT-3``/``GPT-4``, ``Part II``/``Part III``);
  a word added in front of or inside a short title (``Mixture of [Neuron] Experts``);
- *edits*: words on one side only. Inside or in front of the title they weigh 1, at the end
  (a dropped subtitle, a truncated title) 1/2, stray letters and numbers at either end
  (citation debris) 1/8.

The title score is ``common / (common + weighted edits)`` over content words. A conflict sets
``veto``: the paper matcher never merges such a pair on title evidence (only an identical arXiv
id or DOI can), and shows it in the review queue when the titles are otherwise close.
:func:`title_parts` splits a title at ``:``/``?``/`` - ``/brackets so that a record that kept only
the main title (or only the subtitle) can be recognised.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Indel, Levenshtein

from pipelines.textnorm import match_key, normalize_text

STOPWORDS = frozenset(
    """a an the of for in on at to and or with by from into via using use under over toward towards
    its it their is are be been as about through between within without based upon vs versus
    this that these those how what when which do does can we our your not no""".split()
)
# A word made from another by one of these prefixes means the opposite, however similar the strings.
_NEGATION_PREFIXES = ("non", "un", "a", "in", "im", "ir", "il", "dis", "anti", "de", "semi", "multi", "sub", "super")
# Prefixes that turn a word into its opposite or counterpart: the rest of the word equal, the two
# are different words however alike the strings (``increasing``/``decreasing``,
# ``hypertension``/``hypotension``, ``intracellular``/``intercellular``).
_OPPOSITE_PREFIXES = (("in", "de"), ("en", "de"), ("in", "ex"), ("im", "ex"), ("inter", "intra"), ("hyper", "hypo"),
                      ("micro", "macro"), ("over", "under"), ("pre", "post"), ("homo", "hetero"), ("endo", "exo"),
                      ("sub", "super"), ("uni", "multi"), ("mono", "poly"), ("up", "down"), ("inner", "outer"),
                      ("max", "min"), ("ana", "cata"), ("in", "out"))
# Letter groups typeset as one ligature glyph, lost when text is extracted from PDFs.
_LIGATURES = re.compile("ffi|ffl|ff|fi|fl")
# Word endings that make a variant of one root ("updat|e" / "updat|ing").
_ENDINGS = frozenset(
    """ s es ed d e y ing ings ion ions ation ations al ally ly ive ative ively ity ities ness ment ments er ers
    or ors ic ics ical ically ism ist ists ize ise ized ised izing ising able ible ance ence ant ent ure
    ures ial ious ous""".split()
) | {""}
# Titles with at most this many content words change meaning when one word is added.
SHORT_TITLE_WORDS = 4
# A lone word replaced by a look-alike among this many agreeing content words is a typo (OCR,
# a slip of the keyboard), not another paper; alike: normalised Indel similarity at least this.
TYPO_CONTEXT_WORDS = 3
TYPO_SIMILARITY = 0.75
TYPO_WEIGHT = 0.5  # such a pair weighs half an edit in the title score
_ROMAN = re.compile(r"^(?=[ivxlc]+$)c{0,3}(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")


def stem(token: str) -> str:
    """Light English plural stripping: enough to treat ``models``/``model`` as one word."""
    if len(token) <= 3 or token.isdigit():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("sses"):
        return token[:-2]
    if token.endswith(("ches", "shes", "xes", "zes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is", "ys")):
        return token[:-1]
    return token


_GLUED_DIGITS = re.compile(r"^([a-z]+)\d+$")
# Where a title splits into main title and subtitle (or a series prefix and the title proper).
_PART_CHARS = re.compile(r"[:?!.()\u2013\u2014\uff1a\uff1f]| - ")
_TITLE_PARTS = re.compile(r"\s*(?::|\?|!|\.\s|\s[-\u2013\u2014]+\s|\u2014|\s*\(|\))\s*")


# Cached: a corpus has far fewer distinct words than word occurrences.
@lru_cache(maxsize=1_000_000)
def _token(raw: str) -> str:
    glued = _GLUED_DIGITS.match(raw)
    if glued and glued.group(1) in STOPWORDS:
        return glued.group(1)  # "and1": a footnote mark glued to a word
    return stem(raw)


@lru_cache(maxsize=200_000)
def title_tokens(title: str | None) -> tuple[str, ...]:
    """Stemmed comparison tokens of a title (empty for a missing title)."""
    return tuple([_token(t) for t in match_key(title).split()])


@lru_cache(maxsize=200_000)
def title_parts(title: str | None) -> tuple[str, ...]:
    """Keys of the main title, the subtitle(s) and runs of them when a title has several parts.

    ``"The ClustRa Telecom Database: High Availability, ..."`` gives the keys of both halves, so
    a record that kept only one half can be recognised (``()`` for a one-part title). Parts of fewer than two content words
    (``"DynaTrain"``) identify too little to be used alone.
    """
    if not title or not _PART_CHARS.search(title):
        return ()
    pieces = [p for p in _TITLE_PARTS.split(normalize_text(title) or "") if p.strip()]
    if len(pieces) < 2:
        return ()
    pieces = pieces[:6]
    keys = []
    # Every run of consecutive parts but the whole: "Duschka. Infomaster: An Information
    # Integration System" contains "Infomaster: An Information Integration System".
    for start in range(len(pieces)):
        for stop in range(start + 1, len(pieces) + 1):
            if stop - start == len(pieces):
                continue
            tokens = tuple(t for piece in pieces[start:stop] for t in title_tokens(piece))
            if len(content_tokens(tokens)) >= 2:
                keys.append(" ".join(tokens))
    return tuple(dict.fromkeys(keys))


def title_key(title: str | None) -> str:
    """Exact-match key: two titles with the same key are the same words in the same order."""
    return " ".join(title_tokens(title))


def content_tokens(tokens: tuple[str, ...] | list[str]) -> list[str]:
    return [t for t in tokens if t not in STOPWORDS]


_DIGIT = re.compile(r"\d")


def _is_number(token: str) -> bool:
    return token.isdigit() or bool(_ROMAN.match(token)) and token not in {"i", "c", "l", "v", "x"}


@lru_cache(maxsize=200_000)
def _is_numbered(token: str) -> bool:
    """A number, or a word with digits glued to letters ("gpt3", "v2", "h264": part of a name)."""
    return _is_number(token) or (not token.isdigit() and _DIGIT.search(token) is not None)


def _numbers(tokens: list[str]) -> set[str]:
    return {t for t in tokens if _is_numbered(t)}


def _negation_pair(a: str, b: str) -> bool:
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return any(long_ == p + short for p in _NEGATION_PREFIXES)


def _opposite_prefix_pair(a: str, b: str) -> bool:
    """``increasing``/``decreasing``, ``hyperplane``/``hypoplane``: one stem behind two prefixes
    that mean opposite or counterpart things."""
    for p, q in _OPPOSITE_PREFIXES:
        for x, y in ((a, b), (b, a)):
            if x.startswith(p) and y.startswith(q) and len(x) - len(p) >= 3 and x[len(p):] == y[len(q):]:
                return True
    return False


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _is_subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


@lru_cache(maxsize=200_000)
def spelling_variant(a: str, b: str) -> bool:
    """Same word written differently — not a different word that merely looks alike.

    Accepted: one root with English endings (``update``/``updating``,
    ``implement``/``implementation``, ``adaptive``/``adaptable``); a letter dropped or doubled in
    a word of 5+ letters (``acess``/``access``, ``heterogenous``/``heterogeneous``,
    ``behaviour``/``behavior``); one changed letter in 8+ letters, two in 9+
    (``optimisation``/``optimization``); an abbreviation (``dept``/``department``); a lost PDF
    ligature (``e cient``/``efficient``); stray digits (``and1``/``and``). Refused whatever the similarity: a negation prefix (``linear``/``nonlinear``),
    different numbers, other endings (``quantum``/``quantile``, ``graph``/``graphene``), short
    look-alikes (``model``/``modal``, ``cluster``/``clutter``).
    """
    if a == b:
        return True
    if _negation_pair(a, b) or _opposite_prefix_pair(a, b):
        return False
    na, nb = _numbers([a]), _numbers([b])
    if na and nb:
        return False
    la, lb = re.sub(r"\d", "", a), re.sub(r"\d", "", b)
    if (na or nb) and la == lb and len(la) >= 2:
        return True
    if na or nb:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    prefix = _common_prefix(a, b)
    if prefix >= 4 and a[prefix:] in _ENDINGS and b[prefix:] in _ENDINGS:
        return True
    if 3 <= len(short) <= 5 and len(long_) >= 2 * len(short) and prefix >= 2 and _is_subsequence(short, long_):
        return True
    if len(short) >= 5 and Indel.distance(a, b, score_cutoff=1) <= 1:
        return True
    if len(short) >= 4 and _LIGATURES.sub("", long_) == short:
        return True  # a PDF ligature lost in extraction: "buer"/"buffer", "trac"/"traffic"
    if len(short) >= 8:
        distance = Levenshtein.distance(a, b, score_cutoff=2)
        return distance <= 1 or (distance == 2 and len(short) >= 9)
    return False


def _acronym_of(short: list[str], long_: list[str]) -> bool:
    """``llm`` against ``large language model`` (stopwords in the expansion may be skipped)."""
    if len(short) != 1 or len(long_) < 2:
        return False
    acro = short[0]
    initials_all = "".join(t[0] for t in long_)
    initials_content = "".join(t[0] for t in long_ if t not in STOPWORDS)
    # Stemming made "llms" into "llm"; acronyms are compared without a final s as well.
    candidates = {acro, acro.rstrip("s")}
    return bool(candidates & {initials_all, initials_content})


def _typo_in_context(left: tuple[str, ...], right: tuple[str, ...], match_l: list[int | None],
                     match_r: list[int | None], notes: list[str]) -> bool:
    """One content word left on each side, in the same place among at least
    ``TYPO_CONTEXT_WORDS`` agreeing content words, and alike as strings (``TYPO_SIMILARITY``):
    a typo or an OCR slip (``tunable``/``tumble``, ``Gangam``/``Sangam``, ``Illustra``/``lllustra``)
    rather than another paper: the two are aligned, and the title score counts the pair as half an
    edit (authors and years then decide). Numbers, negations, opposite prefixes, other beginnings
    and short words stay differences."""
    free_l = [i for i, t in enumerate(left) if match_l[i] is None and t not in STOPWORDS]
    free_r = [j for j, t in enumerate(right) if match_r[j] is None and t not in STOPWORDS]
    if len(free_l) != 1 or len(free_r) != 1:
        return False
    i, j = free_l[0], free_r[0]
    a, b = left[i], right[j]
    agreeing = [k for k, t in enumerate(left) if t not in STOPWORDS and match_l[k] is not None]
    if (len(agreeing) < TYPO_CONTEXT_WORDS or min(len(a), len(b)) < 4 or _numbers([a, b]) or _negation_pair(a, b)
            or _opposite_prefix_pair(a, b)):
        return False
    # The same place: as many agreeing words before it on either side.
    before_l = sum(1 for k in agreeing if k < i)
    before_r = sum(1 for k in agreeing if match_l[k] < j)
    if before_l != before_r or Indel.normalized_similarity(a, b) < TYPO_SIMILARITY:
        return False
    # A change in the first two letters is a slip only when it is the only one (``Gangam``/``Sangam``);
    # more there is another prefix: ``encoding``/``decoding``, ``internal``/``external``.
    if a[:2] != b[:2] and Levenshtein.distance(a, b, score_cutoff=1) > 1:
        return False
    match_l[i], match_r[j] = j, i
    notes.append(f"{a!r}~{b!r} (a typo?)")
    return True


@dataclass(frozen=True)
class TitleComparison:
    score: float  # 0..1, content-word agreement
    veto: str | None  # why the titles name different papers, or None
    common: int
    middle: int  # content words inserted inside the title
    edge: int  # content words added/dropped at either end
    detail: str  # human-readable summary of the differences


def compare_titles(left: tuple[str, ...], right: tuple[str, ...]) -> TitleComparison:
    """Align two stemmed token lists and classify their differences (see module docstring)."""
    if left == right:
        n = len(content_tokens(left)) or len(left)
        return TitleComparison(1.0 if left else 0.0, None, n, 0, 0, "identical title")
    match_l: list[int | None] = [None] * len(left)
    match_r: list[int | None] = [None] * len(right)
    notes: list[str] = []
    _align_identical(left, right, match_l, match_r)
    for side_a, side_b, ma, mb in ((left, right, match_l, match_r), (right, left, match_r, match_l)):
        _align_joined_words(side_a, side_b, ma, mb, notes)
    _align_spelling_variants(left, right, match_l, match_r, notes)
    typo = _typo_in_context(left, right, match_l, match_r, notes)
    lh, lm, lt = _unmatched(left, match_l)
    rh, rm, rt = _unmatched(right, match_r)
    veto = _vetoes(left, right, (lh, lm, lt), (rh, rm, rt), notes)
    common_l = sum(1 for k, t in enumerate(left) if t not in STOPWORDS and match_l[k] is not None)
    common_r = sum(1 for k, t in enumerate(right) if t not in STOPWORDS and match_r[k] is not None)
    common = (common_l + common_r) / 2
    middle = len(lm) + len(rm)
    edge = len(lh) + len(lt) + len(rh) + len(rt)
    # Words missing at the end are a truncated title or a dropped subtitle: half weight. A word
    # added in front is usually a modifier ("Recurrent Cascade-Correlation"): full weight. Stray
    # letters and numbers at either end are citation debris ("..., in Saitta L. (ed.)",
    # "VLDB'98"), not title words: an eighth.
    edge_weight = sum(0.125 if len(w) <= 2 or w.isdigit() else 1.0 for w in lh + rh) + sum(
        0.125 if len(w) <= 2 or w.isdigit() else 0.5 for w in lt + rt
    )
    denominator = common + middle + edge_weight + (TYPO_WEIGHT if typo else 0.0)
    score = common / denominator if denominator else 0.0
    detail = "; ".join(dict.fromkeys(veto + notes)) or "same words"
    return TitleComparison(round(score, 4), "; ".join(veto) or None, round(common), middle, edge, detail)


def _align_identical(left: tuple[str, ...], right: tuple[str, ...], match_l: list[int | None],
                     match_r: list[int | None]) -> None:
    """Step 1: identical words, in order first (longest common blocks), then moved words anywhere."""
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            match_l[block.a + k], match_r[block.b + k] = block.b + k, block.a + k
    free_r: dict[str, list[int]] = {}
    for j in range(len(right)):
        if match_r[j] is None:
            free_r.setdefault(right[j], []).append(j)
    for i in range(len(left)):
        if match_l[i] is None and free_r.get(left[i]):
            j = free_r[left[i]].pop(0)
            match_l[i], match_r[j] = j, i


def _align_joined_words(side_a: tuple[str, ...], side_b: tuple[str, ...], ma: list[int | None], mb: list[int | None],
                        notes: list[str]) -> None:
    """Step 2, one direction: a token of ``side_a`` against a run of 2-5 unmatched tokens of
    ``side_b`` — joined/split words and acronyms."""
    todo = [i for i, t in enumerate(side_a) if ma[i] is None and len(t) >= 2 and t not in STOPWORDS]
    if not todo:
        return
    # Only forms as long as some lookup below can hit are built (first occurrence kept, as
    # the lookups expect): the forms of a run are the hot spot of the whole diff.
    lengths: set[int] = set()
    for i in todo:
        token = side_a[i]
        lengths.update((len(token), len(token.rstrip("s")), len(_LIGATURES.sub("", token))))
        if len(token) >= 10:
            lengths.update(range(len(token) - 2, len(token) + 3))  # Indel distance <= 2
    runs: dict[str, tuple[int, int]] = {}
    n_b = len(side_b)
    for j in range(n_b):
        if mb[j] is not None:
            continue
        joined_len = len(side_b[j])
        n_content = 0 if side_b[j] in STOPWORDS else 1
        for size in range(2, 6):
            if j + size > n_b or mb[j + size - 1] is not None:
                break
            last = side_b[j + size - 1]
            joined_len += len(last)
            n_content += last not in STOPWORDS
            run = side_b[j : j + size]
            if joined_len in lengths:
                runs.setdefault("".join(run), (j, size))
            if size in lengths:
                runs.setdefault("".join(t[0] for t in run), (j, size))
            if n_content in lengths:
                runs.setdefault("".join(t[0] for t in run if t not in STOPWORDS), (j, size))
    for i in todo:
        token = side_a[i]
        hit = runs.get(token) or runs.get(token.rstrip("s")) or runs.get(_LIGATURES.sub("", token))
        if hit is None and len(token) >= 10:
            # Glued words keep their plural "s" ("limitationsand") where the split words
            # were stemmed: allow two letters of slack on long glued tokens.
            hit = next(
                (pos for form, pos in runs.items() if pos[1] > 1 and len(form) >= 8 and Indel.distance(form, token, score_cutoff=2) <= 2),
                None,
            )
        if hit is None:
            continue
        j, size = hit
        if any(m is not None for m in mb[j : j + size]):
            continue
        ma[i] = j
        for k in range(j, j + size):
            mb[k] = i
        notes.append(f"{token!r}~{' '.join(side_b[j : j + size])!r}")


def _align_spelling_variants(left: tuple[str, ...], right: tuple[str, ...], match_l: list[int | None],
                             match_r: list[int | None], notes: list[str]) -> None:
    """Step 3: spelling variants among the rest, nearest position first. Variants share their
    first letter (typos, endings and abbreviations keep it)."""
    by_initial: dict[str, list[int]] = {}
    for j in range(len(right)):
        if match_r[j] is None and right[j] not in STOPWORDS:
            by_initial.setdefault(right[j][:1], []).append(j)
    for i in range(len(left)):
        if match_l[i] is not None or left[i] in STOPWORDS:
            continue
        free = [j for j in by_initial.get(left[i][:1], ()) if match_r[j] is None]
        for j in sorted(free, key=lambda j: abs(j - i)):
            if spelling_variant(left[i], right[j]):
                match_l[i], match_r[j] = j, i
                notes.append(f"{left[i]!r}~{right[j]!r}")
                break


def _unmatched(tokens: tuple[str, ...], marks: list[int | None]) -> tuple[list[str], list[str], list[str]]:
    """Unmatched content words split into (at start, in the middle, at end)."""
    content_pos = [k for k, t in enumerate(tokens) if t not in STOPWORDS]
    head, mid, tail = [], [], []
    first_matched = next((k for k in content_pos if marks[k] is not None), None)
    last_matched = next((k for k in reversed(content_pos) if marks[k] is not None), None)
    for k in content_pos:
        if marks[k] is not None:
            continue
        if first_matched is None or k < first_matched:
            head.append(tokens[k])
        elif k > last_matched:
            tail.append(tokens[k])
        else:
            mid.append(tokens[k])
    return head, mid, tail


def _vetoes(left: tuple[str, ...], right: tuple[str, ...], left_only: tuple[list[str], list[str], list[str]],
            right_only: tuple[list[str], list[str], list[str]], notes: list[str]) -> list[str]:
    """Why the two titles name different papers (see the module docstring), from each side's
    unmatched content words (at start, in the middle, at end); what is only a difference goes to
    ``notes``."""
    lh, lm, lt = left_only
    rh, rm, rt = right_only
    veto: list[str] = []
    l_only, r_only = lh + lm + lt, rh + rm + rt
    ln = _numbers(l_only)
    rn = _numbers(r_only) if ln else set()
    if ln and rn:
        veto.append(f"number {' '.join(sorted(ln))!r} vs {' '.join(sorted(rn))!r}")
    r_set = set(r_only)
    # A negation pair is one word inside the other's end ("linear"/"nonlinear"): only then is
    # it worth trying every prefix.
    negations = [
        (x, y)
        for x in l_only
        if any(y.endswith(x) or x.endswith(y) for y in r_set)
        for p in _NEGATION_PREFIXES
        for y in (p + x, x[len(p) :] if x.startswith(p) else None)
        if y in r_set
    ]
    if negations:
        veto.append(f"negation {negations[0][0]!r} vs {negations[0][1]!r}")
    if lm and rm:
        veto.append(f"word {' '.join(lm)!r} vs {' '.join(rm)!r}")
    for a, b, where in ((lh, rh, "start"), (lt, rt, "end")):
        if a and b:
            if min(len(a), len(b)) <= 2:
                veto.append(f"word {' '.join(a)!r} vs {' '.join(b)!r} at the {where}")
            else:
                notes.append(f"{where} differs {' '.join(a)!r} / {' '.join(b)!r}")
    if not veto:
        # A word added in front of or inside a short title is a modifier that makes another
        # paper ("Mixture of Neuron Experts", "Recurrent Cascade-Correlation ...").
        for added, other in ((lh + lm, right), (rh + rm, left)):
            words = [w for w in added if len(w) > 2 and not w.isdigit()]
            if words and len(content_tokens(other)) <= SHORT_TITLE_WORDS:
                veto.append(f"added {' '.join(words)!r} to a short title")
    if not veto:
        for words, side in ((lh + lt, "left"), (rh + rt, "right")):
            if words:
                notes.append(f"{side} adds {' '.join(words)!r} at an end")
        for words, side in ((lm, "left"), (rm, "right")):
            if words:
                notes.append(f"{side} adds {' '.join(words)!r}")
    return veto

"""Text normalisation shared by the parsers, the matchers and the scorers.

Raw text is always kept; these functions make the *normalised copies* next to it.
No Dagster imports: this is plain logic, usable on any string.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

# LaTeX commands whose argument is the visible text: \textbf{L}oss -> Loss.
_LATEX_WRAPPERS = re.compile(
    r"\\(?:textbf|textit|emph|mathrm|mathbf|mathit|mathcal|mathbb|texttt|textsc|text|underline|textsf|operatorname|boldsymbol|url|mbox)\s*\{([^{}]*)\}"
)
_LATEX_ACCENTS = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
    "=": "\u0304", ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "H": "\u030b",
}
# Symbol accents (\'e, \"{o}) take a letter directly; letter accents (\c{c}, \v s) need a brace or a
# space, so commands that merely start with c/v/u/H (\url, \cite) are not mistaken for accents.
_LATEX_ACCENT_RE = re.compile(r"\\(?:([\'`^\"~=.])\s*\{?([A-Za-z])\}?|([cvuH])(?:\{([A-Za-z])\}|\s+([A-Za-z])))")
_LATEX_SYMBOLS = {
    r"\alpha": "α", r"\beta": "β", r"\gamma": "γ", r"\delta": "δ", r"\epsilon": "ε",
    r"\varepsilon": "ε", r"\theta": "θ", r"\lambda": "λ", r"\mu": "μ", r"\pi": "π",
    r"\sigma": "σ", r"\tau": "τ", r"\phi": "φ", r"\varphi": "φ", r"\omega": "ω",
    r"\Delta": "Δ", r"\Omega": "Ω", r"\ell": "ℓ", r"\times": "×", r"\approx": "≈",
    r"\leq": "≤", r"\geq": "≥", r"\le": "≤", r"\ge": "≥", r"\infty": "∞", r"\sim": "~",
    r"\cdot": "·", r"\pm": "±", r"\rightarrow": "→", r"\to": "→", r"\%": "%", r"\&": "&",
    r"\_": "_", r"\#": "#", r"\$": "$",
}
_LATEX_SYMBOL_RE = re.compile("|".join(re.escape(k) + r"(?![A-Za-z])" for k in sorted(_LATEX_SYMBOLS, key=len, reverse=True)))
_LATEX_OTHER_CMD = re.compile(r"\\[A-Za-z]+\s*")
_MATH_DOLLARS = re.compile(r"\$([^$]{0,200})\$")
# A closing bracket glued to a word: "(CALM)a fine-tuning-free" lost a dash or a space.
_GLUED_AFTER_BRACKET = re.compile(r"([)\]])([A-Za-z])")
# A colon glued to a capitalised word: "MoE-DisCo:Low" (but not "http://", "10:30").
# (The lookbehind follows the colon so that the regex engine can scan for ":"/";" first.)
_GLUED_AFTER_COLON = re.compile(r"[:;](?<=[A-Za-z0-9)][:;])(?=[A-Z][a-z]|[A-Z]\s)")
_URL_RE = re.compile(r"https?://[^\s<>\"')\]{}]+")


def fold_unicode(text: str) -> str:
    """NFKC-normalise, then strip combining marks (Schrödinger -> Schrodinger, ﬁ -> fi) and the
    invisible format characters (soft hyphen, zero-width space and joiners, bidi marks: category
    Cf), which would otherwise split a word in two (``Trans\u00adformer``)."""
    if text.isascii():  # nothing to normalise or strip; most names and titles take this path
        return text
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    if decomposed.isascii():
        return decomposed
    # Only the non-ASCII runs are looked at character by character (an abstract has ~1,000
    # characters and a handful of marks; a Python test per character cost ~100 µs).
    return _NON_ASCII_RUN.sub(_without_marks, decomposed)


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _without_marks(run: re.Match) -> str:
    return "".join(ch for ch in run.group(0) if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf")


def strip_latex(text: str) -> str:
    """Replace LaTeX markup with the text it shows: ``\\textbf{L}oss`` -> ``Loss``, ``$\\delta$`` -> ``δ``."""
    if "\\" not in text and "$" not in text:
        return text
    out = text
    for _ in range(3):  # nested wrappers: \textbf{\emph{x}}
        new = _LATEX_WRAPPERS.sub(r"\1", out)
        if new == out:
            break
        out = new
    out = _LATEX_ACCENT_RE.sub(_accent, out)
    out = _LATEX_SYMBOL_RE.sub(lambda m: _LATEX_SYMBOLS[m.group(0).rstrip()], out)
    out = _MATH_DOLLARS.sub(lambda m: m.group(1), out)
    out = _LATEX_OTHER_CMD.sub("", out)
    out = out.replace("{", "").replace("}", "").replace("~", " ")
    return out


def _accent(m: re.Match) -> str:
    accent = m.group(1) or m.group(3)
    letter = m.group(2) or m.group(4) or m.group(5)
    return unicodedata.normalize("NFC", letter + _LATEX_ACCENTS[accent])


def normalize_text(text: str | None) -> str | None:
    """A readable normalised copy of a title or abstract.

    Unicode NFKC, LaTeX removed, spacing slips repaired (``MoE-DisCo:Low`` -> ``MoE-DisCo: Low``,
    ``(CALM)a`` -> ``(CALM) a``), whitespace collapsed. Case and diacritics are kept.
    """
    if text is None:
        return None
    out = unicodedata.normalize("NFKC", text)
    out = strip_latex(out)
    # Repair spacing slips outside URLs only (a URL's own colons and brackets are not slips).
    pieces, last = [], 0
    for m in _URL_RE.finditer(out):
        pieces.append(_repair_spacing(out[last:m.start()]))
        pieces.append(m.group(0))
        last = m.end()
    pieces.append(_repair_spacing(out[last:]))
    return " ".join("".join(pieces).split())  # whitespace runs collapsed (str.split: the same set as \s)


def _repair_spacing(text: str) -> str:
    if ")" in text or "]" in text:
        text = _GLUED_AFTER_BRACKET.sub(r"\1 \2", text)
    if ":" in text or ";" in text:
        text = _GLUED_AFTER_COLON.sub(lambda m: m.group(0) + " ", text)
    return text


# Every byte that is not [0-9a-z] -> a space: the C-speed way to split ASCII text on everything
# else (a regex substitution cost ~40 µs per abstract).
_ALNUM_OR_SPACE = bytes.maketrans(bytes(range(256)), bytes(c if c in b"0123456789abcdefghijklmnopqrstuvwxyz" else 32 for c in range(256)))


def _alnum_words(lowered: str) -> str:
    """The runs of [0-9a-z] of a lower-cased string, joined by single spaces."""
    if not lowered.isascii():
        lowered = _NON_ASCII_RUN.sub(" ", lowered)
    return " ".join(lowered.encode("ascii").translate(_ALNUM_OR_SPACE).decode("ascii").split())


def match_key(text: str | None) -> str:
    """A comparison key: normalised, diacritics folded, lower case, punctuation as spaces."""
    if not text:
        return ""
    if text.isascii() and "\\" not in text and "$" not in text:
        # Most titles and names: NFKC, LaTeX and diacritics do not apply, and the spacing repairs
        # only add spaces next to punctuation, which becomes a space below anyway.
        return _alnum_words(text.lower())
    # normalize_text's spacing repairs and whitespace collapsing only touch characters that
    # become a separator here anyway, so the key skips them (same key, half the work).
    return _alnum_words(fold_unicode(strip_latex(unicodedata.normalize("NFKC", text))).lower())


# Runs of letters and digits in any script (``[^\W_]``: \w without the underscore).
_UNICODE_WORD = re.compile(r"[^\W_]+")


def identity_key(text: str | None) -> str:
    """``match_key`` that keeps letters and digits outside ASCII: ``match_key`` drops every
    character it cannot fold to ASCII, so two Chinese titles both key to ``""`` and ``Ω-theory``
    keys like ``Φ-theory``. Equal to ``match_key`` when every letter and digit folds to ASCII (not
    for ``Gauß``, ``β-VAE``). A text with no letter or digit at all (``???``) is its own key,
    whitespace collapsed. See ``title_key`` for the key titles are stored under."""
    if not text:
        return ""
    if text.isascii() and "\\" not in text and "$" not in text:
        key = _alnum_words(text.lower())
    else:
        folded = fold_unicode(strip_latex(unicodedata.normalize("NFKC", text))).lower()
        key = _alnum_words(folded) if folded.isascii() else " ".join(_UNICODE_WORD.findall(folded))
    return key or " ".join(text.split())


def title_key(text: str | None) -> str:
    """The key of *which* title this is, on a profile (``listing_key``, the in-page dedupe):
    ``match_key``, and ``identity_key`` where ``match_key`` is empty (a title in Chinese, Cyrillic,
    Greek, or of symbols only). Keys stored before stay the same for every title that has a Latin
    letter or a digit; the titles that had none all keyed to ``""`` and collided. Two titles
    that differ only outside ASCII (``Ω-theory``, ``Φ-theory``) still share a key: the page's
    dedupe then rejects the second as a repeat, visibly, rather than one key hiding the other."""
    return match_key(text) or identity_key(text)


def find_urls(text: str | None) -> list[str]:
    """URLs in free text (code links in abstracts), trailing punctuation trimmed, in order, unique."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for url in _URL_RE.findall(text):
        seen.setdefault(url.rstrip(".,;:"), None)
    return list(seen)


# ``charset=`` in a Content-Type header (the crawler keeps it, staging decodes with it).
HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]{1,40})", re.IGNORECASE)


def text_codec(name: str | None) -> str | None:
    """The codec a declared charset names, when it is a text encoding that can decode bytes; None
    for unknown names and for Python codecs that are not text encodings (``undefined`` — which
    Python knows but which fails on every byte —, ``rot13``, ``base64``, ``zlib``...): a page
    declaring one is decoded as if it declared nothing."""
    if not name:
        return None
    try:
        info = codecs.lookup(name.strip())
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name == "undefined":
        return None
    return info.name

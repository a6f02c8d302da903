"""match_key and fold_unicode against their readable definitions.

Both take shortcuts for speed (a regex pass over non-ASCII runs instead of a test per character,
byte translation instead of a regex split, no spacing repairs that only touch separators); the
definitions below are what they must keep giving, character for character."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.textnorm import fold_unicode, match_key, normalize_text

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def reference_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch) and unicodedata.category(ch) != "Cf")


def reference_match_key(text: str | None) -> str:
    if not text:
        return ""
    return _NOT_ALNUM.sub(" ", reference_fold(normalize_text(text) or "").lower()).strip()


def every_code_point(step: int = 1):
    return (chr(c) for c in range(0, sys.maxunicode + 1, step) if not 0xD800 <= c < 0xE000)


def test_fold_unicode_matches_its_definition_on_every_code_point():
    chars = list(every_code_point())
    assert [fold_unicode(c) for c in chars] == [reference_fold(c) for c in chars]


def test_match_key_matches_its_definition_on_every_code_point_in_context():
    # each character between letters, next to a colon and a bracket (the spacing repairs' cases)
    texts = ["a" + c + "b: (x)y" for c in every_code_point(step=3)]
    assert [match_key(t) for t in texts] == [reference_match_key(t) for t in texts]


@pytest.mark.parametrize(
    "text, key",
    [
        ("Schrödinger \\textbf{L}oss", "schrodinger loss"),
        ("$\\alpha$-Net ×2: MoE-DisCo:Low", "net 2 moe disco low"),
        ("Caf\\'e \\c{c}a  \\emph{\\textbf{va}}", "cafe ca va"),
        ("ﬁne-tuning  (CALM)a\u2009test", "fine tuning calm a test"),
        ("see https://github.com/x/y.", "see https github com x y"),
        ("", ""),
        (None, ""),
    ],
)
def test_match_key_examples(text, key):
    assert match_key(text) == key == reference_match_key(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_match_key_matches_its_definition_on_any_text(text):
    assert match_key(text) == reference_match_key(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\\textbf{", "}", "{", "$", "\\'", "\\c ", "\\alpha", "\\%", "é", "ß", " ", "x", "Ab", ":", ")", "~"]), max_size=20))
def test_match_key_matches_its_definition_on_latex_soup(parts):
    text = "".join(parts)
    assert match_key(text) == reference_match_key(text)


def test_invisible_format_characters_do_not_split_words():
    """A soft hyphen or zero-width space inside a word (copied from a PDF or a web page) had made
    ``Trans\\u00adformer`` key as ``trans former``: an exact-title lookup then missed."""
    assert match_key("Trans\u00adformer Net\u200bworks") == "transformer networks"
    assert match_key("\u200eAttention\u200f is all\ufeff you need") == "attention is all you need"
    assert fold_unicode("Schr\u00f6\u00ad\u200bdinger") == "Schrodinger"


def test_identity_key_keeps_other_scripts_and_title_key_keeps_stored_keys():
    from pipelines.textnorm import identity_key, title_key

    for latin in ("Attention Is All You Need", "Schrödinger's $\\textbf{C}$at: a Café study", "Don’t Stop — 2024!",
                  "Gauß and the β-VAE", "$\\alpha$-Net"):
        assert title_key(latin) == match_key(latin)  # keys stored before stay the same
    assert identity_key("Gauß and the β-VAE") == "gauß and the β vae" != match_key("Gauß and the β-VAE")
    assert title_key("基于深度学习的图像分割") == "基于深度学习的图像分割" and title_key("???") == "???"
    assert identity_key("基于深度学习的图像分割") == "基于深度学习的图像分割" and match_key("基于深度学习的图像分割") == ""
    assert identity_key("Ω-theory of learning") != identity_key("Φ-theory of learning")
    assert identity_key("$\\Omega$-Theory of Learning") == identity_key("Ω-theory of learning") == "ω theory of learning"
    assert identity_key("Обучение  нейронных сетей") == "обучение неиронных сетеи"  # marks folded, as in match_key
    assert identity_key("???") == "???" and identity_key("") == "" and identity_key(None) == ""

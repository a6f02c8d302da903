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
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


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

"""arXiv subject categories as Scholar Feed shows them (``LG``, ``ML``, ``SP``) -> full codes.

Scholar Feed prints only the part after the dot, in capitals. Most suffixes belong to one
archive (``LG`` -> ``cs.LG``, ``ML`` -> ``stat.ML``, ``OC`` -> ``math.OC``), but some exist in
several (``CV``: cs.CV and math.CV; ``SP``: eess.SP and math.SP; ``CO``: stat.CO and math.CO).

Collision rule: the first archive in ``ARCHIVE_PRIORITY`` that has the suffix wins —
cs, stat, eess, math, q-bio, q-fin, econ, nlin, astro-ph. Scholar Feed is a computing/ML site, so
the cs reading is the likely one, and statistics before the rest of mathematics. Consequences
worth knowing: ``CV`` -> cs.CV, ``SY`` -> cs.SY (arXiv's alias of eess.SY), ``NA`` -> cs.NA
(alias of math.NA), ``IT`` -> cs.IT, ``SP`` -> eess.SP, ``AP``/``CO``/``TH`` -> stat.*,
``ST`` -> math.ST (stat has no ST; stat.TH is its alias), ``GN`` -> math.GN.
The raw suffix is always kept next to the mapped code (``category_raw``), so a different rule is
a re-derivation, not a re-parse. Unknown suffixes map to ``None``.

A full code shown verbatim (``cs.LG``, ``quant-ph``, ``physics.optics``) is accepted as is.
"""

from __future__ import annotations

import re

ARCHIVE_PRIORITY: tuple[str, ...] = ("cs", "stat", "eess", "math", "q-bio", "q-fin", "econ", "nlin", "astro-ph")

# Subject classes per archive (arXiv category taxonomy).
_SUFFIXES: dict[str, str] = {
    "cs": "AI AR CC CE CG CL CR CV CY DB DC DL DM DS ET FL GL GR GT HC IR IT LG LO MA MM MS NA NE NI OH OS PF PL RO SC SD SE SI SY",
    "stat": "AP CO ME ML OT TH",
    "eess": "AS IV SP SY",
    "math": "AC AG AP AT CA CO CT CV DG DS FA GM GN GR GT HO IT KT LO MG MP NA NT OA OC PR QA RA RT SG SP ST",
    "q-bio": "BM CB GN MN NC OT PE QM SC TO",
    "q-fin": "CP EC GN MF PM PR RM ST TR",
    "econ": "EM GN TH",
    "nlin": "AO CD CG PS SI",
    "astro-ph": "CO EP GA HE IM SR",
}

# Archives without subject classes, and the lowercase-suffix ones (physics.optics, cond-mat.soft).
STANDALONE_ARCHIVES: frozenset[str] = frozenset(
    {"quant-ph", "hep-th", "hep-ph", "hep-ex", "hep-lat", "gr-qc", "nucl-th", "nucl-ex", "math-ph",
     "cond-mat", "astro-ph", "physics", "nlin", "q-alg", "alg-geom", "dg-ga", "funct-an", "chao-dyn",
     "solv-int", "patt-sol", "adap-org", "comp-gas", "cmp-lg", "mtrl-th", "supr-con", "acc-phys",
     "ao-sci", "atom-ph", "bayes-an", "chem-ph", "plasm-ph"}
)


def _build_suffix_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for archive in ARCHIVE_PRIORITY:
        for suffix in _SUFFIXES[archive].split():
            table.setdefault(suffix, f"{archive}.{suffix}")
    return table


SUFFIX_TO_CATEGORY: dict[str, str] = _build_suffix_table()
ALL_CATEGORIES: frozenset[str] = frozenset(
    f"{archive}.{suffix}" for archive, suffixes in _SUFFIXES.items() for suffix in suffixes.split()
)

_FULL_CODE = re.compile(r"[a-z]+(?:-[a-z]+)?\.[A-Za-z]{2,}(?:-[a-z]+)?")


def map_category(raw: str | None) -> str | None:
    """``'LG'`` -> ``'cs.LG'``, ``'ML'`` -> ``'stat.ML'``, ``'cs.CV'`` -> ``'cs.CV'``; unknown -> None."""
    if not raw:
        return None
    code = raw.strip()
    if code in SUFFIX_TO_CATEGORY:
        return SUFFIX_TO_CATEGORY[code]
    if code.upper() in SUFFIX_TO_CATEGORY and len(code) == 2:
        return SUFFIX_TO_CATEGORY[code.upper()]
    if code in STANDALONE_ARCHIVES:
        return code
    if _FULL_CODE.fullmatch(code):
        archive = code.split(".", 1)[0]
        if code in ALL_CATEGORIES or archive in STANDALONE_ARCHIVES:
            return code
    return None

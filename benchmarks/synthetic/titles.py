"""Paper titles: coined system names, near-twin titles, and per-listing title variants.

``make_title`` writes the canonical title of a paper (the truth); ``twin_title`` derives the
title of a *different* paper that differs by one content word (``dynamic`` -> ``static``,
possibly with the head noun's number changing too, as in the two HONPAS papers of sample 001);
``listing_title`` shows a canonical title the way one listing shows it (spacing slip
``Name:Subtitle``, abbreviation expanded or contracted, case change, LaTeX rendered, trailing
period) so that the same paper reads slightly differently on different profiles.
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

from .vocab import (
    ABBREV_RE, ACRONYM_PREFIXES, ACRONYM_SUFFIXES, ADJECTIVES, CONCEPTS, EXPAND_RE, GERUNDS,
    HARDWARE_PREFIX, HEADS, LATEX_TITLE_TERMS, PLURALS, SINGULARS, TWIN_PAIRS, TWIN_SWAP, Field,
    lower_phrase, sentence_case, title_case,
)

_TWIN_WORDS = tuple(w for pair in TWIN_PAIRS for w in pair)
_CONNECT = frozenset({"for", "and", "of", "in", "on", "with", "via", "the", "a", "an", "to", "as", "at", "by"})


def _initials_acronym(phrase: str, rng: random.Random) -> str:
    """Letters of an expansion: ``Binary Expert Activation Masking`` -> ``BEAM``.

    Hyphenated words give one letter per part; some acronyms keep a second, lower-case letter
    of one word (``Efficient DIstributed Training`` -> ``EDiT``).
    """
    parts = []
    for word in phrase.split(" "):
        if word.lower() in _CONNECT:
            continue
        parts.extend(p for p in word.split("-") if p and p[0].isalpha())
    parts = parts[:5]
    letters = [p[0].upper() for p in parts]
    if len(letters) >= 3 and rng.random() < 0.12:
        i = rng.randrange(1, len(letters))
        if len(parts[i]) > 1 and parts[i][1].isalpha():
            letters[i] += parts[i][1].lower()
    return "".join(letters)


def coin_name(rng: random.Random, field: Field) -> tuple[str, str]:
    """A system or method name, and its expansion when the name is an acronym (else '')."""
    r = rng.random()
    if r < 0.42:
        return rng.choice(ACRONYM_PREFIXES) + rng.choice(ACRONYM_SUFFIXES), ""
    if r < 0.72:
        words = [rng.choice(ADJECTIVES)] + rng.choice(field.objects).split(" ")[:3]
        if rng.random() < 0.5:
            words.append(rng.choice(("Masking", "Routing", "Scheduling", "Tuning", "Sharding", "Merging",
                                     "Partitioning", "Compression", "Caching", "Balancing")))
        expansion = " ".join(words)
        acronym = _initials_acronym(expansion, rng)
        if len(acronym) < 3:
            acronym += rng.choice("AEIOSX")
        return acronym, expansion
    if r < 0.84:
        head = rng.choice(("MoE", "LLM", "GNN", "FL", "HPC", "DC", "KV", "GEMM", "NAS", "ViT"))
        return f"{head}-{rng.choice(ACRONYM_PREFIXES)}{rng.choice(ACRONYM_SUFFIXES)[:3].capitalize()}", ""
    if r < 0.955:
        core = "".join(rng.choice("ABCDEFGHIKLMNPQRSTVW") for _ in range(rng.randint(3, 5)))
        return rng.choice(HARDWARE_PREFIX) + core + (f"-{rng.choice(('SCI', 'MD', 'FFT', 'RT', 'X'))}" if rng.random() < 0.4 else ""), ""
    if r < 0.995:
        return f"{rng.choice(('HPC', 'AI', 'ML', 'Edge', 'Graph'))} {rng.choice(('AI', 'Bench', 'Perf'))}{rng.choice((100, 500, 1000, 2024))}", ""
    a = "".join(rng.choice("ABCDFGIKMNPQRST") for _ in range(2))
    return f"{a}=x{rng.choice(('INT', 'FP', 'BIN'))}", ""


def _adjective(rng: random.Random, twin_word: str | None, latex: bool) -> str:
    if twin_word:
        return twin_word
    if latex:
        return rng.choice(LATEX_TITLE_TERMS)[0]
    return rng.choice(ADJECTIVES)


def make_title(
    rng: random.Random,
    field: Field,
    obj: str,
    task: str,
    tech: str,
    hw: str,
    *,
    twin_source: bool = False,
    latex: bool = False,
) -> tuple[str, str, str]:
    """Canonical title, method name (or ''), expansion (or '').

    ``twin_source`` guarantees a word from ``TWIN_PAIRS`` so a near-twin can be derived;
    ``latex`` puts a LaTeX term (``$k$-Means``) where an adjective would go.
    """
    for _ in range(12):
        title, name, expansion = _draw_title(rng, field, obj, task, tech, hw, twin_source=twin_source, latex=latex)
        if not twin_source or any(w.rstrip(":,?") in TWIN_SWAP for w in title.split(" ")):
            return title, name, expansion
    word = rng.choice(_TWIN_WORDS)
    return f"{word} {obj} with {tech}", "", ""


def _draw_title(
    rng: random.Random,
    field: Field,
    obj: str,
    task: str,
    tech: str,
    hw: str,
    *,
    twin_source: bool = False,
    latex: bool = False,
) -> tuple[str, str, str]:
    twin_word = rng.choice(_TWIN_WORDS) if twin_source else None
    adj = _adjective(rng, twin_word, latex and not twin_source)
    r = rng.random()
    w = _TitleWords(adj, obj, task, tech, hw, twin_word)
    if field.key == "hpc" and r < 0.08:
        return _hpc_title(rng, field, w)
    if r < 0.42:
        return _named_title(rng, field, w)
    if r < 0.60:
        return _gerund_title(rng, w)
    if r < 0.84:
        return _plain_title(rng, field, w)
    if r < 0.90:
        return _question_title(rng, w)
    return _report_title(rng, field, w, r)


class _TitleWords(NamedTuple):
    """The words a title is drawn from."""

    adj: str
    obj: str
    task: str
    tech: str
    hw: str
    twin_word: str | None


def _hpc_title(rng: random.Random, field: Field, w: _TitleWords) -> tuple[str, str, str]:
    """Old-style HPC titles, mostly lower case."""
    adj, obj, task, tech, hw, twin_word = w
    # Old-style HPC titles, mostly lower case (sample 001: "... in HONPAS package").
    noun = rng.choice(("algorithm", "scheme", "method", "strategy"))
    name, _ = coin_name(rng, field)
    pkg = name if name.isupper() or len(name) <= 6 else (_initials_acronym(obj + " " + tech, rng) or name)
    title = f"The {lower_phrase(adj)} {lower_phrase(tech)} {noun} for {lower_phrase(obj)} in {pkg} package"
    return title, "", ""


def _named_title(rng: random.Random, field: Field, w: _TitleWords) -> tuple[str, str, str]:
    """A coined system name, then what it does."""
    adj, obj, task, tech, hw, twin_word = w
    name, expansion = coin_name(rng, field)
    if expansion and rng.random() < 0.5:
        sub = f"{expansion} for {twin_word} {task}" if twin_word else f"{expansion} for {task}"
        return f"{name}: {sub}", name, expansion
    k = rng.randrange(8)
    if k == 0:
        sub = f"{adj} {tech} for {task}"
    elif k == 1:
        sub = f"{_article(adj)} {adj} {rng.choice(HEADS)} for {task}"
    elif k == 2:
        sub = f"{adj} {obj} via {tech}"
    elif k == 3:
        sub = f"{adj} and {rng.choice(ADJECTIVES)} {obj} on {hw}"
    elif k == 4:
        sub = f"Towards {adj} {task} with {tech}"
    elif k == 5:
        sub = f"Improve {obj} Performance via {tech}"
    elif k == 6:
        sub = f"Large-Scale {obj} on {hw}"
    else:
        sub = f"{adj} {task} at Scale"
    return f"{name}: {sub}", name, expansion


def _gerund_title(rng: random.Random, w: _TitleWords) -> tuple[str, str, str]:
    """A title that starts with a gerund."""
    adj, obj, task, tech, hw, twin_word = w
    gerund = rng.choice(GERUNDS)
    k = rng.randrange(5)
    if k == 0:
        title = f"{gerund} {obj} as {rng.choice(CONCEPTS)} for {adj} {task}"
    elif k == 1:
        title = f"{gerund} {adj} {tech} for {task}"
    elif k == 2:
        title = f"{gerund} {obj} via {adj} {tech}"
    elif k == 3:
        title = f"{gerund} {obj}: {adj} {tech} for {task}"
    else:
        title = f"{gerund} {adj} {obj} on {hw}"
    return title, "", ""


def _plain_title(rng: random.Random, field: Field, w: _TitleWords) -> tuple[str, str, str]:
    """A descriptive title without a system name."""
    adj, obj, task, tech, hw, twin_word = w
    k = rng.randrange(8)
    if k == 0:
        title = f"{adj} {obj} with {tech}"
    elif k == 1:
        title = f"{obj} for {task}: {adj} {tech} and {rng.choice(field.techniques)}"
    elif k == 2:
        prop = rng.choice(("Convergence", "Robustness", "Scalability", "Generalization", "Efficiency", "Stability"))
        title = f"On the {prop} of {adj} {obj}"
    elif k == 3:
        title = f"{_article(adj)} {adj} {rng.choice(HEADS)} for {task}"
    elif k == 4:
        title = f"{tech} for {adj} {obj} on {hw}"
    elif k == 5:
        title = f"{_article(adj)} {adj} {tech} Method for {task}"
    elif k == 6:
        title = f"{adj} {task} through {tech}"
    else:
        what = rng.choice(("Dataset", "Topology", "Precision", "Batch Size", "Memory"))
        title = f"The Scalability for {adj} {obj}: {what} Matters"
    return title, "", ""


def _question_title(rng: random.Random, w: _TitleWords) -> tuple[str, str, str]:
    """A question, often with a study."""
    adj, obj, task, tech, hw, twin_word = w
    if rng.random() < 0.5:
        verb = rng.choice(("Described by Human Ability", "Trusted", "Made Practical", "Scaled Further"))
        study = rng.choice(("Meta Study", "Case Study", "Critical Analysis"))
        title = f"Can {adj} {obj} Be {verb}? A {study}"
    else:
        title = f"How {rng.choice(ADJECTIVES)} Are {adj} {obj}? An Empirical Study on {task}"
    return title, "", ""


def _report_title(rng: random.Random, field: Field, w: _TitleWords, r: float) -> tuple[str, str, str]:
    """A coined system name's report, benchmark or method."""
    adj, obj, task, tech, hw, twin_word = w
    name, expansion = coin_name(rng, field)
    if r < 0.95:
        k = rng.randrange(3)
        if twin_word or k == 2:
            title = f"{name}: {adj} {tech} for {obj} on {hw}"
        elif k == 0:
            title = f"{name} Technical Report"
        else:
            title = f"{name}: A Benchmark Suite for {adj} {task}"
        return title, name, expansion
    return f"{name}: {adj} {obj} for {task}", name, expansion


def _article(word: str) -> str:
    return "An" if word[:1].upper() in "AEIOU" else "A"


def twin_title(title: str, rng: random.Random) -> str:
    """A different paper's title: one twin word swapped, sometimes a head noun's number too."""
    words = title.split(" ")
    for i, w in enumerate(words):
        core = w.rstrip(":,?")
        if core in TWIN_SWAP:
            words[i] = TWIN_SWAP[core] + w[len(core):]
            break
    else:
        return title + " Revisited"
    if rng.random() < 0.5:
        for j in range(len(words) - 1, -1, -1):
            core = words[j].rstrip(":,?")
            swap = PLURALS.get(core) or SINGULARS.get(core)
            if swap:
                words[j] = swap + words[j][len(core):]
                break
    return " ".join(words)


# --------------------------------------------------------------------------------------------
# Per-listing variants of a canonical title.
# --------------------------------------------------------------------------------------------
TITLE_VARIANT_RATES = {
    "colon_space": 0.03,      # "Name: Subtitle" -> "Name:Subtitle" (sample 000/001 MoE-DisCo)
    "abbreviation": 0.03,     # "LLM" <-> "Large Language Model"
    "case": 0.02,             # Title Case <-> sentence case
    "latex_rendered": 0.5,    # of titles that contain LaTeX: shown rendered ("$k$-Means" -> "k-Means")
    "trailing_period": 0.01,  # "... Models."
}


def listing_title(title: str, rng: random.Random) -> tuple[str, str | None]:
    """How one listing shows a paper's title, and which variant was applied (None: verbatim)."""
    if "$" in title or "\\" in title:
        if rng.random() < TITLE_VARIANT_RATES["latex_rendered"]:
            shown = title
            for latex, rendered in LATEX_TITLE_TERMS:
                shown = shown.replace(latex, rendered)
            if shown != title:
                return shown, "latex_rendered"
        return title, None
    r = rng.random()
    cut = TITLE_VARIANT_RATES["colon_space"]
    if r < cut:
        if ": " in title:
            return title.replace(": ", ":", 1), "colon_space"
        return title, None
    cut += TITLE_VARIANT_RATES["abbreviation"]
    if r < cut:
        for pattern, abbr, expansion in ABBREV_RE:
            if pattern.search(title):
                return pattern.sub(expansion, title), "abbreviation"
        for pattern, abbr, expansion in EXPAND_RE:
            if pattern.search(title):
                return pattern.sub(abbr, title), "abbreviation"
        return title, None
    cut += TITLE_VARIANT_RATES["case"]
    if r < cut:
        shown = sentence_case(title) if sum(w[:1].isupper() for w in title.split(" ")) > len(title.split(" ")) / 2 else title_case(title)
        return (shown, "case") if shown != title else (title, None)
    cut += TITLE_VARIANT_RATES["trailing_period"]
    if r < cut and not title.endswith((".", "?")):
        return title + ".", "trailing_period"
    return title, None


_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(text: str, max_len: int = 80) -> str:
    """URL slug: ASCII-folded, lower case, hyphen-separated, trimmed at a word boundary."""
    from .names import fold_ascii

    slug = _SLUG_RE.sub("-", fold_ascii(text).lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0]
    return slug or "untitled"

"""Seeded synthetic bibliographies with ground truth, for benchmarking both matchers.

Nothing here is sampled from real people: names are drawn from syllable and surname lists, titles
from a technical vocabulary. The generators plant the traps the real sources have:

Papers (:func:`synthetic_papers`): each true paper is listed one to four times with edits a
listing site makes — case, punctuation and spacing slips (``Name:Subtitle``), LaTeX markup, a
dropped subtitle, an abbreviation expanded or contracted (``LLM``/``large language model``), a
plural, one typo, a year off by one, author lists truncated to three names, written as initials,
or missing. Near-twins (same authors and year, one content word different — the HONPAS pair)
and generic titles by different authors (``Editorial``) are separate papers.

People (:func:`synthetic_mentions`): research groups write papers together; some members own
profiles on two sites (owner mentions, BZPEER-style without byline, Scholar-Feed-style with a
three-name byline that may hide the owner); byline names appear as full names, initials,
family-first, hyphenated or without diacritics. Traps: homonyms (two people with one name in
different groups), look-alike names inside one group (``Yuchen``/``Yunquan Zhang``,
``Chen``/``Cheng``), and a few surname typos of one person (same person in the truth; a matcher
that refuses name-only merges will miss them — they measure the review queue, not a bug).
"""

from __future__ import annotations

import random

import polars as pl

_SYLLABLES = (
    "an bo chen da fei gang hao hui jia jian jie jun kai lan lei li liang lin ming na ning peng qi qiang "
    "quan rui shan sheng tao ting wei wen xiang xin xu yan yang yi ying yong yu yuan yun ze zhen zhi zhong"
).split()
_CHINESE_FAMILY = "Zhang Wang Li Liu Chen Cheng Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo Lin He Gao".split()
_WESTERN_GIVEN = "Anna Marek Lukas Sofia Jose Ines Pierre Helene Jorg Bjorn Zoe Renee Carlos Elena Tomas Marta".split()
_WESTERN_FAMILY = "Muller Garcia Rusinkiewicz Klas Novak Dubois Lopez Martin Schmidt Rossi Kowalski Silva Berg Fischer".split()
_ACCENTED = {"Jose": "José", "Ines": "Inés", "Helene": "Hélène", "Jorg": "Jörg", "Bjorn": "Björn", "Zoe": "Zoë", "Renee": "Renée",
             "Tomas": "Tomás", "Muller": "Müller", "Garcia": "García", "Lopez": "López"}
_WORDS = (
    "adaptive sparse quantization federated distributed graph neural attention transformer kernel "
    "stochastic gradient convex bayesian inference sampling compression pruning distillation routing "
    "expert mixture scheduling memory cache parallel pipeline tensor operator compiler runtime "
    "benchmark dataset retrieval ranking embedding contrastive diffusion generative robust private "
    "secure verification simulation molecular quantum chemistry lattice climate forecasting spectral "
    "clustering regression classification segmentation detection tracking planning control policy "
    "reward exploration offline online streaming elastic heterogeneous hierarchical temporal causal "
    "symbolic program synthesis reasoning language vision speech audio recommendation scalable"
).split()
_ACRONYMS = {"large language model": "LLM", "graph neural network": "GNN", "reinforcement learning": "RL", "mixture of experts": "MoE"}
_GENERIC = ["Editorial", "Introduction", "Preface", "Book Review"]
# The sites whose listings show a paper's byline (a second listing of one paper is on another site).
LISTING_SITES = ("scholarfeed", "openalex")


def _person_name(rng: random.Random, chinese: bool) -> tuple[str, str]:
    if chinese:
        given = rng.choice(_SYLLABLES) + rng.choice(_SYLLABLES)
        return given.capitalize(), rng.choice(_CHINESE_FAMILY)
    return rng.choice(_WESTERN_GIVEN), rng.choice(_WESTERN_FAMILY)


def _name_variant(rng: random.Random, given: str, family: str, chinese: bool) -> str:
    """One way a byline writes a person's name."""
    roll = rng.random()
    if roll < 0.70:
        return f"{_ACCENTED.get(given, given)} {_ACCENTED.get(family, family)}" if not chinese and rng.random() < 0.5 else f"{given} {family}"
    if roll < 0.85:
        return f"{given[0]}. {family}"
    if chinese and roll < 0.92:
        return f"{family} {given}"  # family-first
    if chinese:
        # Hyphenated syllables: "Yunquan" -> "Yun-Quan" (split where the second syllable starts).
        for k in range(2, len(given) - 1):
            if given[:k].lower() in _SYLLABLES and given[k:].lower() in _SYLLABLES:
                return f"{given[:k]}-{given[k:].capitalize()} {family}"
        return f"{given} {family}"
    return f"{given[0]} {family}"


def _title(rng: random.Random) -> str:
    words = rng.sample(_WORDS, rng.randint(4, 7))
    if rng.random() < 0.25:
        phrase = rng.choice(list(_ACRONYMS))
        words.insert(rng.randint(0, len(words)), phrase)
    head = " ".join(words[:2]).title().replace(" ", "")
    body = " ".join(words[2:])
    if rng.random() < 0.5:
        return f"{head}: {body.capitalize()} for {rng.choice(_WORDS)} {rng.choice(_WORDS)}"
    return f"{' '.join(words).capitalize()} with {rng.choice(_WORDS)} {rng.choice(_WORDS)}"


def _edit_title(rng: random.Random, title: str) -> str:
    """A listing's copy of a title: one or two harmless edits."""
    out = title
    for _ in range(rng.randint(1, 2)):
        roll = rng.random()
        if roll < 0.2:
            out = out.lower() if rng.random() < 0.5 else out.title()
        elif roll < 0.35:
            out = out.replace(": ", ":") if ": " in out else out + "."
        elif roll < 0.5:
            for phrase, acro in _ACRONYMS.items():
                if phrase in out.lower():
                    start = out.lower().index(phrase)
                    out = out[:start] + acro + out[start + len(phrase):]
                    break
                if acro in out:
                    out = out.replace(acro, phrase, 1)
                    break
        elif roll < 0.7:
            words = out.split()
            k = rng.randrange(len(words))
            if words[k].isalpha() and len(words[k]) > 3:
                words[k] = words[k] + "s" if not words[k].endswith("s") else words[k][:-1]
            out = " ".join(words)
        elif roll < 0.8:
            words = out.split()
            k = rng.randrange(len(words))
            if len(words[k]) >= 7 and words[k].isalpha():
                pos = rng.randrange(2, len(words[k]) - 1)
                words[k] = words[k][:pos] + words[k][pos + 1:]  # one dropped letter
            out = " ".join(words)
        elif roll < 0.9:
            words = out.split()
            k = rng.randrange(len(words))
            if words[k].isalpha():
                words[k] = "\\textbf{" + words[k][0] + "}" + words[k][1:]
            out = " ".join(words)
        elif len(out.split(": ", 1)[0].split()) >= 3 and ": " in out:
            out = out.split(": ", 1)[0]  # subtitle dropped
    return out


def synthetic_papers(seed: int = 7, n_papers: int = 1500) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Records (``record_id, title, authors, venue, year, source``) and truth (``record_id, true_paper``)."""
    rng = random.Random(seed)
    people = [_person_name(rng, chinese=rng.random() < 0.6) for _ in range(n_papers // 2)]
    papers = []
    for p in range(n_papers):
        authors = rng.sample(people, rng.randint(2, 6))
        year = rng.randint(2005, 2025)
        if rng.random() < 0.03:
            title = rng.choice(_GENERIC)
        else:
            title = _title(rng)
        papers.append((f"P{p:05d}", title, authors, year))
        if rng.random() < 0.08 and title not in _GENERIC:
            # Near-twin: one content word replaced; same group, same year — a different paper.
            words = title.split()
            k = rng.randrange(len(words))
            while not words[k].isalpha() or words[k].lower() not in _WORDS:
                k = (k + 1) % len(words)
            replacement = rng.choice([w for w in _WORDS if w != words[k].lower()])
            words[k] = replacement.capitalize() if words[k][0].isupper() else replacement
            papers.append((f"P{p:05d}t", " ".join(words), authors, year))
    rows, truth = [], []
    n = 0
    for pid, title, authors, year in papers:
        for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
            listed = [_name_variant(rng, g, f, f in _CHINESE_FAMILY) for g, f in authors]
            roll = rng.random()
            if roll < 0.25:
                listed = []  # BZPEER-like: no byline
            elif roll < 0.6:
                listed = listed[:3]  # "et al."
            rows.append(
                {
                    "record_id": f"R{n:06d}",
                    "title": _edit_title(rng, title) if rng.random() < 0.6 else title,
                    "authors": listed,
                    "venue": rng.choice(["arXiv", None, "NeurIPS", "ICML"]),
                    "year": None if rng.random() < 0.1 else year + (1 if rng.random() < 0.15 else 0),
                    "source": rng.choice(["bzpeer", "scholarfeed"]),
                }
            )
            truth.append({"record_id": f"R{n:06d}", "true_paper": pid})
            n += 1
    order = list(range(len(rows)))
    rng.shuffle(order)
    records = pl.DataFrame([rows[k] for k in order], schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64, "source": pl.String})
    return records, pl.DataFrame(truth)


def _synthetic_people(rng: random.Random, n_groups: int):
    """The people of ``synthetic_mentions``: (persons as (given, family, chinese), the groups of
    collaborators, the sites each profile owner is on, the people whose names get typos)."""
    persons: list[tuple[str, str, bool]] = []  # (given, family, chinese)
    groups: list[list[int]] = []
    for _ in range(n_groups):
        members = []
        for _ in range(rng.randint(4, 8)):
            chinese = rng.random() < 0.7
            persons.append((*_person_name(rng, chinese), chinese))
            members.append(len(persons) - 1)
        groups.append(members)
    # Homonyms: a person in another group gets the exact name of someone else.
    for _ in range(n_groups // 4):
        a, b = rng.sample(range(n_groups), 2)
        src, dst = rng.choice(groups[a]), rng.choice(groups[b])
        persons[dst] = persons[src]
    # Look-alikes inside one group: a second member whose name differs by a syllable or a letter.
    for g in rng.sample(range(n_groups), n_groups // 5):
        given, family, chinese = persons[rng.choice(groups[g])]
        if rng.random() < 0.5 and chinese:
            endings = [e for e in ("en", "an", "ong") if not given.endswith(e)]
            other = (given[:-2] + rng.choice(endings), family, True)
        else:
            other = (given, family + "g" if not family.endswith("g") else family[:-1], chinese)
        persons.append(other)
        groups[g].append(len(persons) - 1)
    # Profiles: some members own a profile on one or both sites.
    profiles: dict[int, list[str]] = {}
    for members in groups:
        for person in rng.sample(members, max(1, len(members) // 3)):
            profiles[person] = [s for s in ("bzpeer", "scholarfeed") if rng.random() < 0.7] or ["scholarfeed"]
    typo_people = set(rng.sample(range(len(persons)), len(persons) // 40))
    return persons, groups, profiles, typo_people


def synthetic_mentions(seed: int = 7, n_groups: int = 120) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Mentions (the ``match_authors`` schema) and truth (``mention_id, true_person``)."""
    rng = random.Random(seed)
    persons, groups, profiles, typo_people = _synthetic_people(rng, n_groups)

    rows, truth = [], []

    def add(person: int, name: str, paper: str, coauthors: list[str], title: str, year: int, **extra) -> None:
        mid = f"M{len(rows):06d}"
        rows.append({"mention_id": mid, "name": name, "paper_id": paper, "coauthors": coauthors, "title": title,
                     "year": year, "venue": None, "affiliation": None, "source": extra.get("source"),
                     "source_profile_id": extra.get("profile"), "is_profile_owner": extra.get("owner", False),
                     "orcid": extra.get("orcid")})
        truth.append({"mention_id": mid, "true_person": f"person{person}"})

    orcids = {p: f"0000-0002-{p // 10000:04d}-{p % 10000:04d}" for p in range(len(persons)) if rng.random() < 0.15}
    paper_no = 0
    for members in groups:
        for _ in range(rng.randint(3, 10)):
            authors = rng.sample(members, rng.randint(2, min(6, len(members))))
            paper_id = f"paper{paper_no}"
            paper_no += 1
            title, year = _title(rng), rng.randint(2012, 2026)
            # Each paper is seen on one or two sites' listings; each writes names its own way.
            for site in LISTING_SITES[: rng.choice([1, 1, 2])]:
                names = []
                for person in authors:
                    given, family, chinese = persons[person]
                    name = _name_variant(rng, given, family, chinese)
                    if person in typo_people and rng.random() < 0.3:
                        name = name[:-1] if len(name) > 4 else name  # a surname typo
                    names.append(name)
                shown = names[:3]  # the byline a listing shows
                for k, person in enumerate(authors[:3]):
                    others = [x for x in shown if x != shown[k]]
                    add(person, shown[k], paper_id, others, title, year, source=site,
                        orcid=orcids.get(person) if rng.random() < 0.3 else None)
            # Owners whose profile lists this paper.
            for person in authors:
                for site in profiles.get(person, []):
                    if rng.random() < 0.8:
                        given, family, _ = persons[person]
                        byline = [] if site == "bzpeer" else names[:3]
                        add(person, f"{given} {family}", paper_id, byline, title, year, source=site, profile=f"{site}-{person}", owner=True)
    order = list(range(len(rows)))
    rng.shuffle(order)
    mentions = pl.DataFrame(
        [rows[k] for k in order],
        schema={"mention_id": pl.String, "name": pl.String, "paper_id": pl.String, "coauthors": pl.List(pl.String), "title": pl.String,
                "year": pl.Int64, "venue": pl.String, "affiliation": pl.String, "source": pl.String, "source_profile_id": pl.String,
                "is_profile_owner": pl.Boolean, "orcid": pl.String},
    )
    return mentions, pl.DataFrame(truth)

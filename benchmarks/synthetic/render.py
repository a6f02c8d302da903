"""Turn one page of the latent world into the bytes a capture would hold, plus its truth rows.

A page is first built as a small *document* (``document.py``): a sequence of block lines (each with a tag and
inline parts), blank-line markers and wrapper open/close tags. The same document is then
serialised either as **visible text** (the samples' format: one block per line, blank lines
where the page has paragraph spacing, inline parts glued) or as **HTML page source** (doctype,
head with title/meta/canonical/style/scripts, nav, ``<main>`` holding the document, footer).
Because both come from one document, the visible text of the HTML's ``<main>`` equals the text
variant under the browser ``innerText`` rules: every block element ends a line, ``<p>`` is
separated from its neighbours by a blank line, inline elements (span, a, time, strong,
button) are glued with no whitespace between them, and ``<script>``/``<style>``/``<head>`` are
invisible.

Per-listing randomness (title variant, byline name forms, typos) comes from a generator seeded
by (seed, page, paper), so adding a paper to a page (``mutate``) leaves the other listings as
they were.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass, field

import numpy as np

from . import vocab
from .names import surname_typo
from .titles import listing_title, slugify
from .abstracts import COMPILED_BANKS, COMPILED_CODE, COMPILED_PROPOSE, PLAN_COLS, PLAN_ROLES, ABSTRACT_MIN
from .draws import FastRandom, seed_for
from .document import Doc, attr, esc, new_doc
from .world import BAD_KINDS, CATEGORY_CODES, SITE_BZPEER, World, day_to_date

BZPEER_BIO = "{name} contributes to research discovery and scholarly infrastructure."
TRUST_TIERS = ((85, "Distinguished"), (60, "Trusted"), (30, "Established"), (0, "Emerging"))
BZ_TYPES = ("preprint", "conference", "article")
MODEL_SIZES = ("1.3B", "2.7B", "7B", "13B", "34B", "70B", "175B", "235B")
NAME_TYPO_RATE = 0.006          # byline mentions with a one-letter slip in the surname
NAME_VARIANT_RATE = 0.14        # byline mentions using a variant other than the person's usual form
ABSTRACT_REVISED_RATE = 0.03    # listings showing a revised abstract (last sentence missing)
# Pages are rendered grouped by the owner's community, so co-authors' shared papers recur within a
# short window: a small FIFO cache of rendered abstracts avoids most re-rendering.
ABSTRACT_CACHE_SIZE = 4096


@dataclass
class PageResult:
    body: bytes
    listings: list = field(default_factory=list)   # (position, paper, title_variant, abstract_variant, partial)
    mentions: list = field(default_factory=list)   # (position|None, name, byline_index|None, person, kind)
    declared: int = 0
    listed: int = 0
    truncated_at: int | None = None                # 1-based position of the cut item
    facts: dict = field(default_factory=dict)      # metrics the page shows (for metric-check benchmarks)


# ---------------------------------------------------------------------------------------------
# formatting helpers
# ---------------------------------------------------------------------------------------------
def count_str(n: int) -> str:
    """Counts as the sites print them: thousands separators from 1,000 on."""
    return f"{n:,}"


def sf_date(day: int, capture_year: int) -> tuple[str, str]:
    """(shown, ISO) — ``May 14`` in the capture's year, ``Mar 18, 2023`` otherwise."""
    d = day_to_date(day)
    shown = f"{vocab.MONTHS[d.month - 1]} {d.day}" if d.year == capture_year else f"{vocab.MONTHS[d.month - 1]} {d.day}, {d.year}"
    return shown, d.isoformat()


def trust_tier(score: int) -> str:
    for floor, name in TRUST_TIERS:
        if score >= floor:
            return name
    return "Emerging"


def _a_adj(adj: str) -> str:
    return ("an " if adj[:1].lower() in "aeiou" else "a ") + adj


def _number(value: float, kind: str, style: int) -> str:
    v = f"{value:g}"
    if kind == "X":
        return (f"{v}x", f"{v}$\\times$", f"{v}×")[style]
    if kind in ("P", "Q"):
        return (f"{v}%", f"{v}\\%", f"{v} percent")[style]
    return v


def repo_name(world: World, paper: int) -> str:
    method = world.paper_method[paper]
    if method:
        return slugify(method, 30)
    return "-".join(slugify(world.paper_title[paper], 60).split("-")[:3])


def paper_code_url(world: World, paper: int) -> str:
    org = vocab.GITHUB_ORGS[int(world.paper_slots[paper, 8])]
    return f"https://github.com/{org}/{repo_name(world, paper)}"


def abstract_sentences(world: World, paper: int) -> list[str]:
    """The paper's canonical abstract, as a list of sentences."""
    f = vocab.FIELDS[int(world.paper_field[paper])]
    s = world.paper_slots[paper].tolist()
    nums = world.paper_numbers[paper].tolist()
    style = int(world.paper_number_style[paper])
    method = world.paper_method[paper]
    lower = vocab.lower_phrase
    adj = lower(vocab.ADJECTIVES[s[7]])
    obj = lower(f.objects[s[0]])
    task = lower(f.tasks[s[1]])
    code = bool(world.paper_code_in_abstract[paper])
    # values in vocab.SLOT_ORDER
    values = (
        method or "our method", method or "Our method", world.paper_expansion[paper] or method,
        obj, obj[:1].upper() + obj[1:], task, task[:1].upper() + task[1:],
        lower(f.techniques[s[2]]), lower(f.hardware[s[3]]), f.datasets[s[4]], f.datasets[s[5]], f.baselines[s[6]],
        f.domain, adj, adj, adj, _a_adj(adj),
        _number(nums[0], "X", style), _number(nums[1], "P", style), _number(nums[2], "Q", style),
        str(int(nums[3])), MODEL_SIZES[int(nums[4])],
        vocab.GITHUB_ORGS[s[8]], repo_name(world, paper) if code else "",
    )
    plan = world.paper_plan[paper].tolist()
    mask = int(world.paper_plan_mask[paper])
    propose_bank = COMPILED_PROPOSE[int(world.paper_propose_bank[paper])]
    sentences = []
    for c in range(PLAN_COLS):
        if (mask >> c) & 1:
            role = PLAN_ROLES[c]
            pattern = propose_bank[plan[c]] if role == "propose" else COMPILED_BANKS[role][plan[c]]
            sentences.append(pattern.format(*values))
    if code:
        sentences.append(COMPILED_CODE[paper % len(COMPILED_CODE)].format(*values))
    return sentences


def abstract_text(world: World, paper: int) -> str:
    return " ".join(abstract_sentences(world, paper))


def _byline_name(world: World, person: int, rng: FastRandom) -> tuple[str, str]:
    """How one byline shows a person: usual form, sometimes another variant, rarely a surname typo."""
    nm = world.names[person]
    r = rng.random()
    if r < NAME_VARIANT_RATE and nm.variants:
        j = int(r / NAME_VARIANT_RATE * (len(nm.variants) + 1))
        form = nm.canonical if j >= len(nm.variants) else nm.variants[j]
        kind = "canonical" if form == nm.canonical else nm.variant_kinds[j]
    else:
        form = nm.habitual
        kind = "canonical" if form == nm.canonical else nm.variant_kinds[nm.variants.index(form)]
        if r >= 1.0 - NAME_TYPO_RATE:
            typo = surname_typo(form, nm.family, rng)
            if typo != form:
                return typo, "typo"
    return form, kind


def _profile_name_kind(world: World, person: int, name: str) -> str:
    nm = world.names[person]
    if name == nm.canonical:
        return "canonical"
    return nm.variant_kinds[nm.variants.index(name)] if name in nm.variants else "other"


# ---------------------------------------------------------------------------------------------
# pages
# ---------------------------------------------------------------------------------------------
@dataclass
class _Listing:
    paper: int
    title: str
    title_variant: str | None
    abstract: str
    abstract_variant: str | None
    rng: FastRandom
    order_key: float
    byline: list = field(default_factory=list)   # (shown name, name form, person) of the first three authors


def _listing(world: World, page: int, paper: int) -> _Listing:
    # seeded by (seed, page, paper): adding a paper to the page leaves the others unchanged
    lrng = FastRandom(seed_for(world.params.seed, page, paper, 2))
    order_key = lrng.random()          # Scholar Feed's (relevance-like) order: stable under insertions
    title, variant = listing_title(world.paper_title[paper], lrng)
    cache = world.abstract_cache
    sentences = cache.get(paper)
    if sentences is None:
        sentences = abstract_sentences(world, paper)
        if len(cache) >= ABSTRACT_CACHE_SIZE:
            del cache[next(iter(cache))]
        cache[paper] = sentences
    abstract_variant = None
    if (len(sentences) >= 5 and lrng.random() < ABSTRACT_REVISED_RATE
            and sum(map(len, sentences[:-1])) + len(sentences) - 2 >= ABSTRACT_MIN):
        sentences = sentences[:-1]
        abstract_variant = "revised"
    return _Listing(paper, title, variant, " ".join(sentences), abstract_variant, lrng, order_key)


def page_papers(world: World, page: int, ops: list[dict] | None = None) -> tuple[list[int], int]:
    """(papers listed on the page, declared count), after any mutations."""
    lo, hi = int(world.page_known_ptr[page]), int(world.page_known_ptr[page + 1])
    known = world.page_known[lo:hi]
    listed = known[world.page_listed[lo:hi]].tolist()
    declared = hi - lo
    for op in ops or ():
        if op["op"] == "add_paper":
            listed.append(int(op["paper_truth_id"]))
            declared += 1
    return listed, declared


def render_page(world: World, page: int, ops: list[dict] | None = None) -> PageResult:
    """Bytes and truth rows of one page (bad pages included)."""
    params = world.params
    prng = random.Random(seed_for(params.seed, page, 1))
    site = int(world.page_site[page])
    person = int(world.page_person[page])
    name = world.page_name[page]
    listed_papers, declared = page_papers(world, page, ops)
    bump = sum(int(op["delta"]) for op in ops or () if op["op"] == "bump")
    listings = [_listing(world, page, p) for p in listed_papers]
    is_html = bool(world.page_html[page])
    kind = BAD_KINDS[int(world.page_bad[page])]
    # binary pages may be the gzip of the real page, so bad pages render it in the page's format too
    if site == SITE_BZPEER:
        by = world.paper_bz_year
        listings.sort(key=lambda it: (-int(by[it.paper]), it.title.casefold(), it.paper))
        doc, facts = _bzpeer_doc(world, page, prng, name, listings, declared, bump, is_html)
    else:
        listings.sort(key=lambda it: (it.order_key, it.paper))
        doc, facts = _scholarfeed_doc(world, page, prng, name, listings, declared, bump, is_html)

    result = PageResult(body=b"", declared=declared, listed=len(listings), facts=facts)
    if is_html:
        main, spans = doc.to_html()
        head, tail = _html_shell(world, page, name, declared, site)
        body = head + main + tail
        spans = [(a + len(head), b + len(head)) for a, b in spans]
    else:
        body, spans = doc.to_text()

    n_complete = len(listings)
    if kind == "truncated":
        n = len(listings)
        cut_item = prng.randint(2, n) if n >= 2 else 1
        a, b = spans[cut_item - 1]
        cut = prng.randint(a + 1, max(a + 1, b - 2))
        body = body[:cut]
        n_complete = cut_item - 1
        result.truncated_at = cut_item
    elif kind != "ok":
        result.body = _bad_body(kind, prng, site, is_html, body, world.page_url[page])
        return result

    result.body = body.encode("utf-8")
    result.mentions.append((None, name, None, person, _profile_name_kind(world, person, name)))
    for pos, item in enumerate(listings[:n_complete], start=1):
        result.listings.append((pos, item.paper, item.title_variant, item.abstract_variant, False))
        for bi, (shown, mkind, who) in enumerate(item.byline):
            result.mentions.append((pos, shown, bi, who, mkind))
    if result.truncated_at is not None:
        # the item the cut falls in: on the page, but incomplete (a cut inside the last abstract of a
        # text capture cannot be told from a short abstract, so a parser may well return it)
        item = listings[result.truncated_at - 1]
        result.listings.append((result.truncated_at, item.paper, item.title_variant, item.abstract_variant, True))
    return result


def _bzpeer_doc(world: World, page: int, prng: random.Random, name: str, listings: list[_Listing],
                declared: int, bump: int, is_html: bool) -> tuple[Doc, dict]:
    claimed = prng.random() < 0.12
    if claimed:
        level = prng.choice((2, 2, 3))
        score = prng.randint(40, 97)
    else:
        level = prng.choices((0, 1, 2), weights=(30, 65, 5))[0]
        score = prng.randint(5, 38)
    followers = int(prng.lognormvariate(3.0, 1.6)) if claimed else (0 if prng.random() < 0.8 else int(prng.expovariate(0.15)) + 1)
    followers += bump
    known = _known(world, page)
    cats = {int(c) for c in world.paper_category[known].tolist()}
    topics = max(1, min(40, len(cats) + prng.randint(0, 6)))
    collaborators = _close_collaborators(world, page, known)

    d = new_doc(is_html)
    sp = d.span
    d.open('<header class="profile-hero">')
    d.line("p", ' class="eyebrow"', "Researcher profile", gap=True)
    d.line("h1", ' class="profile-name"', name, gap=True)
    d.line("p", ' class="bio"', BZPEER_BIO.format(name=name), gap=True)
    d.line("p", ' class="badges"', (sp("role", "Researcher"), sp("affiliation", "Affiliation not imported"),
                                     sp("availability", "Open to collaborate")), gap=True)
    d.close("</header>")
    d.open('<section class="trust-snapshot" aria-labelledby="trust-title">')
    d.line("h2", ' id="trust-title"', "Trust snapshot", gap=True)
    d.line("p", ' class="kicker"', "Quick read", gap=True)
    d.open('<ul class="quick-stats">')
    d.line("li", ' class="trust-line"', (sp("trust-score", f"Trust {score} - {trust_tier(score)}"),
                                         sp("verification", f"Verification L{level}"),
                                         sp("claim-state", "Claimed author" if claimed else "Unclaimed author")))
    d.line("li", ' class="stat"', (sp("value", count_str(declared), "strong"), sp("label", "works")))
    d.line("li", ' class="stat"', (sp("value", count_str(followers), "strong"), sp("label", "followers")))
    d.line("li", ' class="stat"', (sp("value", count_str(topics), "strong"), sp("label", "topics")))
    d.line("li", ' class="stat"', (sp("value", count_str(collaborators), "strong"), sp("label", "close collaborators")))
    d.close("</ul>")
    d.close("</section>")
    d.blank()
    _bzpeer_panels(d, world, page, followers, is_html)
    _bzpeer_works(d, world, listings, declared, is_html)
    return d, {"claimed": claimed, "followers": followers, "trust_score": score}


def _bzpeer_panels(d: Doc, world: World, page: int, followers: int, is_html: bool) -> None:
    """BZPEER's fixed panels between the trust snapshot and the works: actions, identity and
    collaboration, the research graph."""
    url = world.page_url[page]
    d.open('<section class="actions">')
    d.line("p", ' class="section-title"', "Actions", gap=True)
    d.line("p", "", "Decide how to stay connected", gap=True)
    follow = f"Follow researcher{count_str(followers)}"
    d.line("p", ' class="follow"', ((f'<button type="button" class="btn-follow">Follow researcher'
                                     f'<span class="count">{count_str(followers)}</span></button>') if is_html else None,
                                    follow), gap=True)
    d.close("</section>")
    d.open('<section class="identity">')
    d.line("h2", "", "Identity and collaboration", gap=True)
    d.line("p", "", "How to connect with this researcher", gap=True)
    d.line("p", "", "Claiming links this public author record to a researcher profile and unlocks direct collaboration workflows.", gap=True)
    d.line("p", "", d.link(f"/login?next={url[len('https://www.bzpeer.com'):]}", "Log in to claim", "btn"), gap=True)
    d.line("h3", "", "Direct collaboration", gap=True)
    d.line("p", "", "Open a focused conversation when the fit is right", gap=True)
    d.line("p", ' class="hint"', "Claim this author entity first to unlock direct invitations.", gap=True)
    d.close("</section>")
    d.open('<section class="research-graph">')
    d.line("h2", "", "Research graph", gap=True)
    d.line("p", "", "See the researcher in context", gap=True)
    d.line("p", "", d.link(f"/explore?author={world.page_profile_id[page]}", "Open full explorer"), gap=True)
    d.line("p", "", "Inspect adjacent work, topics, institutions and collaborators without jumping out to a separate graph page.", gap=True)
    d.line("h3", ' class="loading-title"', "Building this graph slice", gap=True)
    d.line("p", ' class="loading"', "BZPEER is loading the nearby papers, people, topics and institutions for this page.", gap=True)
    d.close("</section>")


def _bzpeer_works(d: Doc, world: World, listings: list[_Listing], declared: int, is_html: bool) -> None:
    """BZPEER's "Published work" section: one work card per listing."""
    sp = d.span
    d.open('<section class="published-work">')
    d.line("h2", "", "Published work", gap=True)
    d.line("p", ' class="count"', f"{count_str(declared)} published item(s)")
    bz_type, bz_year, bz_venue = world.paper_bz_type, world.paper_bz_year, world.paper_bz_venue
    for item in listings:
        p = item.paper
        t = int(bz_type[p])
        venue = "arXiv" if t == 0 else (vocab.VENUES_CONFERENCE if t == 1 else vocab.VENUES_JOURNAL)[int(bz_venue[p])]
        d.blank()
        d.item_start()
        d.open('<article class="work-card">')
        d.line("p", ' class="work-meta"', (sp("work-type", BZ_TYPES[t]), sp("work-year", str(int(bz_year[p]))),
                                            sp("work-venue", venue)), gap=True)
        href = f"/works/{slugify(item.title)}-{int(world.paper_work_id[p])}" if is_html else None
        d.line("h3", ' class="work-title"', d.link(href, item.title), gap=True)
        d.line("p", ' class="work-abstract"', item.abstract)
        d.close("</article>")
        d.item_end()
    d.close("</section>")


def _scholarfeed_doc(world: World, page: int, prng: random.Random, name: str, listings: list[_Listing],
                     declared: int, bump: int, is_html: bool) -> tuple[Doc, dict]:
    capture_year = world.params.captured_at.year
    known = _known(world, page)
    cats = np.bincount(world.paper_category[known], minlength=len(CATEGORY_CODES))
    primary = CATEGORY_CODES[int(np.argmax(cats))]
    cites = sorted(world.paper_citations[known].tolist(), reverse=True)
    citations = sum(cites) + bump
    h = 0
    for i, c in enumerate(cites, start=1):
        if c < i:
            break
        h = i
    implausible = prng.random() < 0.03
    if implausible:
        # imported metric that cannot be right (sample 002: h-index 39 with 15 papers)
        h = min(declared, int(citations ** 0.5)) + prng.randint(3, 60)
    novelty = max(5, min(95, int(round(prng.gauss(52, 10)))))
    ai_score = max(5, min(99, int(round(prng.gauss(55, 12)))))

    d = new_doc(is_html)
    sp = d.span
    d.open('<header class="author-header">')
    d.line("p", ' class="author-name"', name, gap=True)
    d.open('<div class="author-stats">')
    d.line("div", ' class="primary-category"', primary)
    d.line("div", ' class="stat"', (sp("label", "h-index"), sp("value", str(h), "strong")))
    d.line("div", ' class="stat"', (sp("value", count_str(declared), "strong"), sp("label", "papers")))
    d.line("div", ' class="stat"', (sp("value", count_str(citations), "strong"), sp("label", "citations")))
    d.line("div", ' class="stat"', (sp("label", "Novelty"), sp("value", str(novelty), "strong"), sp("unit", "%")))
    d.line("div", ' class="stat"', (sp("label", "AI Score"), sp("value", str(ai_score), "strong")))
    d.close("</div>")
    d.close("</header>")
    d.blank()
    d.open('<section class="papers">')
    d.line("p", ' class="papers-count"', f"{count_str(declared)} Papers")
    comma, et_al = d.plain(", "), d.plain(" et al.")
    for item in listings:
        p = item.paper
        shown_date, iso = sf_date(int(world.paper_day[p]), capture_year)
        meta = []
        score = world.paper_score[p]
        if score == score:  # not NaN
            meta.append(sp("ai-score", f"{score:.1f}"))
        meta.append(sp("cat", CATEGORY_CODES[int(world.paper_category[p])]))
        meta.append((f'<time datetime="{iso}">{esc(shown_date)}</time>' if is_html else None, shown_date))
        if world.paper_has_code[p]:
            meta.append(d.link(paper_code_url(world, p) if is_html else None, "Code", "code-link"))
        authors = world.authors(p).tolist()
        parts = []
        for bi, who in enumerate(authors[:3]):
            shown, kind = _byline_name(world, who, item.rng)
            item.byline.append((shown, kind, who))
            if bi:
                parts.append(comma)
            parts.append(sp("author", shown))
        if len(authors) > 3:
            parts.append(et_al)
        href = f"/paper/{world.arxiv_id(p)}v{int(world.paper_version[p])}" if is_html else None
        d.blank()
        d.item_start()
        d.open('<article class="paper-card">')
        d.line("div", ' class="paper-meta"', tuple(meta))
        d.line("h3", ' class="paper-title"', d.link(href, item.title), gap=True)
        d.line("p", ' class="authors"', tuple(parts), gap=True)
        d.line("p", ' class="abstract"', item.abstract)
        d.close("</article>")
        d.item_end()
    d.close("</section>")
    return d, {"h_index": h, "h_index_implausible": implausible, "citations": citations}


def _known(world: World, page: int) -> np.ndarray:
    lo, hi = int(world.page_known_ptr[page]), int(world.page_known_ptr[page + 1])
    return world.page_known[lo:hi]


def _close_collaborators(world: World, page: int, known: np.ndarray) -> int:
    """Co-authors sharing at least two of the profile's papers."""
    if len(known) < 2:
        return 0
    person = int(world.page_person[page])
    ptr = world.paper_ptr
    rows = np.concatenate([np.arange(ptr[p], ptr[p + 1]) for p in known.tolist()])
    co = world.paper_authors[rows]
    counts = np.bincount(co[co != person] - co.min()) if len(co) else np.zeros(0)
    return int((counts >= 2).sum())


# ---------------------------------------------------------------------------------------------
# HTML shell
# ---------------------------------------------------------------------------------------------
_BZ_STYLE = (":root{--accent:#3b5bdb;--muted:#6b7280}body{margin:0;font-family:Inter,system-ui,sans-serif;color:#111}"
             ".work-meta span+span{margin-left:.4rem}.quick-stats{list-style:none;padding:0}.eyebrow{color:var(--muted)}")
_SF_STYLE = ("body{margin:0;font:15px/1.5 -apple-system,Segoe UI,Roboto,sans-serif}.paper-card{padding:12px 0;"
             "border-bottom:1px solid #eee}.paper-meta>*{margin-right:6px}.author-stats div{display:block}")


def _html_shell(world: World, page: int, name: str, declared: int, site: int) -> tuple[str, str]:
    url = world.page_url[page]
    year = world.params.captured_at.year
    ld = json.dumps({"@context": "https://schema.org", "@type": "Person", "name": name, "url": url},
                    ensure_ascii=False).replace("</", "<\\/")
    if site == SITE_BZPEER:
        title = f"{name} · Researcher profile · BZPEER"
        desc = f"{name} contributes to research discovery and scholarly infrastructure. {declared} published works."
        head_extra = (f'<link rel="stylesheet" href="/_app/static/css/profile.4c1e9b7a.css">\n<style>{_BZ_STYLE}</style>\n'
                      f'<script type="application/ld+json">{ld}</script>\n'
                      '<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}'
                      "gtag('js',new Date());gtag('config','G-BZP2024');</script>")
        nav = ('<nav class="site-nav" aria-label="Main"><a class="brand" href="/">BZPEER</a><ul>'
               '<li><a href="/explore">Explore</a></li><li><a href="/topics">Topics</a></li>'
               '<li><a href="/login">Log in</a></li></ul></nav>')
        footer = (f'<footer class="site-footer"><p>© {year} BZPEER. Public author records imported from arXiv.</p>'
                  '<ul><li><a href="/about">About</a></li><li><a href="/privacy">Privacy</a></li>'
                  '<li><a href="/terms">Terms</a></li></ul></footer>\n'
                  '<script src="/_app/static/chunks/profile.8d2f1a07.js" defer></script>')
    else:
        title = f"{name} - Scholar Feed"
        desc = f"Papers by {name} on Scholar Feed: {declared} papers with AI scores and novelty."
        head_extra = (f'<style>{_SF_STYLE}</style>\n<script type="application/ld+json">{ld}</script>\n'
                      '<script async src="/static/js/analytics.js"></script>\n'
                      f'<script>window.__SF__={{"route":"author","id":{json.dumps(world.page_profile_id[page])}}};</script>')
        nav = ('<nav class="topbar"><a class="logo" href="/">Scholar Feed</a><ul>'
               '<li><a href="/feed">Feed</a></li><li><a href="/trending">Trending</a></li>'
               '<li><a href="/search">Search</a></li><li><a href="/signin">Sign in</a></li></ul></nav>')
        footer = (f'<footer class="footer"><p>© {year} Scholar Feed · Data from arXiv</p>'
                  '<ul><li><a href="/about">About</a></li><li><a href="/api">API</a></li></ul></footer>')
    head = ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<meta name=\"description\" content=\"{attr(desc)}\">\n"
            f"<meta property=\"og:title\" content=\"{attr(name)}\">\n<meta property=\"og:url\" content=\"{attr(url)}\">\n"
            f"<link rel=\"canonical\" href=\"{attr(url)}\">\n{head_extra}\n</head>\n<body>\n{nav}\n<main id=\"main\">\n")
    tail = f"\n</main>\n{footer}\n</body>\n</html>\n"
    return head, tail


# ---------------------------------------------------------------------------------------------
# bad pages
# ---------------------------------------------------------------------------------------------
def _bad_body(kind: str, rng: random.Random, site: int, is_html: bool, good_body: str, url: str) -> bytes:
    host = "www.bzpeer.com" if site == SITE_BZPEER else "www.scholarfeed.org"
    if kind == "empty":
        if is_html and rng.random() < 0.5:
            # a single-page-app shell captured before the app rendered anything
            return (b'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title></title>\n'
                    b'<script src="/_app/static/chunks/main.js" defer></script>\n</head>\n<body>\n'
                    b'<div id="__next"></div>\n</body>\n</html>\n')
        return b"" if rng.random() < 0.7 else b"\n\n"
    if kind == "bot_challenge":
        ray = "%016x" % rng.getrandbits(64)
        if rng.random() < 0.6:
            lines = ["Just a moment...", host, "Verifying you are human. This may take a few seconds.",
                     f"{host} needs to review the security of your connection before proceeding.",
                     f"Ray ID: {ray}", "Performance & security by Cloudflare"]
            title = "Just a moment..."
        else:
            lines = ["Access denied", "Please enable JavaScript and cookies to continue.",
                     "We detected unusual traffic from your network. Complete the check below to continue to " + host + ".",
                     f"Reference: {ray}"]
            title = "Access denied"
        if not is_html:
            return "\n\n".join(lines).encode()
        body = "\n".join(f"<p>{esc(x)}</p>" if i else f"<h1>{esc(x)}</h1>" for i, x in enumerate(lines))
        return (f'<!DOCTYPE html><html lang="en-US"><head><title>{esc(title)}</title>'
                '<meta http-equiv="refresh" content="390"><meta name="robots" content="noindex,nofollow">'
                '<style>body{font-family:system-ui}</style></head><body><noscript>Enable JavaScript and cookies to continue</noscript>'
                f'<div class="main-wrapper" role="main">{body}</div>'
                f'<script>(function(){{window._cf_chl_opt={{cRay:"{ray}",cZone:"{host}"}};}}());</script></body></html>').encode()
    if kind == "error_page":
        if site == SITE_BZPEER:
            options = [
                ["Researcher profile", "Something went wrong while loading this researcher.",
                 "Please refresh the page or try again later.", "Error 502 - Bad gateway"],
                ["404", "This page could not be found."],
                ["Application error: a client-side exception has occurred (see the browser console for more information)."],
            ]
        else:
            options = [
                ["Author not found", "The author you are looking for does not exist or has been removed.", "Back to home"],
                ["Internal Server Error", "The server encountered an internal error and was unable to complete your request."],
                ["Scholar Feed", "We're having trouble loading this page.", "Try again"],
            ]
        lines = rng.choice(options)
        if not is_html:
            return "\n\n".join(lines).encode()
        inner = "\n".join(f"<p>{esc(x)}</p>" for x in lines)
        return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{esc(lines[0][:60])}</title>\n'
                f'<link rel="canonical" href="{attr(url)}">\n</head>\n<body>\n<main id="main">\n{inner}\n</main>\n</body>\n</html>\n').encode()
    if kind == "binary":
        if rng.random() < 0.5:
            # a gzip-compressed body stored without being decoded
            return gzip.compress(good_body.encode("utf-8"), compresslevel=6, mtime=0)
        return rng.randbytes(rng.randint(2_000, 40_000))
    raise ValueError(kind)

"""The synthetic corpus generator: determinism, truth consistency, page format, HTML, bad pages, mutation."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from benchmarks.synthetic import generate_corpus, mutate
from benchmarks.synthetic.names import surname_typo

SAMPLES = Path(__file__).resolve().parents[2] / "pipelines" / "samples"
ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------------------------
# Line patterns of the two sites. They are checked against the real samples too, so they
# describe the real format, not just what the generator happens to write.
# --------------------------------------------------------------------------------------------
COUNT = r"\d{1,3}(?:,\d{3})*"
MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
BZ_TRUST = re.compile(r"^Trust \d+ - [A-Z][a-z]+Verification L\d(?:Unclaimed|Claimed) author$")
BZ_STATS = [re.compile(rf"^{COUNT}{label}$") for label in ("works", "followers", "topics", "close collaborators")]
BZ_ITEMS = re.compile(rf"^({COUNT}) published item\(s\)$")
BZ_META = re.compile(r"^(?:preprint|conference|article)(?:19|20)\d\d(?:arXiv|[A-Z].*)$")
SF_STATS = [re.compile(p) for p in (r"^[A-Z]{2}$", r"^h-index\d+$", rf"^{COUNT}papers$", rf"^{COUNT}citations$",
                                    r"^Novelty\d+%$", r"^AI Score\d+$")]
SF_PAPERS = re.compile(rf"^({COUNT}) Papers$")
SF_META = re.compile(rf"^(?:\d{{1,2}}\.\d)?[A-Z]{{2}}{MONTH} \d{{1,2}}(?:, (?:19|20)\d\d)?(?:Code)?$")
SF_BYLINE = re.compile(r"^[^,]+(?:, [^,]+){0,2}(?: et al\.)?$")


def _sample(prefix: str) -> str:
    return next(SAMPLES.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8")


def check_bzpeer_text(text: str) -> int:
    """Assert the BZPEER line structure; return the number of items."""
    lines = text.split("\n")
    ref = _sample("000").split("\n")
    assert lines[0] == "Researcher profile" and lines[1] == "" and lines[3] == ""
    name = lines[2]
    assert lines[4] == f"{name} contributes to research discovery and scholarly infrastructure."
    assert lines[6] == ref[6]                                   # glued Researcher / affiliation / open
    assert lines[8:12] == ref[8:12]
    assert BZ_TRUST.match(lines[12]), lines[12]
    for pattern, line in zip(BZ_STATS, lines[13:17]):
        assert pattern.match(line), line
    followers = lines[14][: -len("followers")]
    assert lines[22] == f"Follow researcher{followers}"
    # boilerplate between the stats and the list, identical to the real page
    assert [line for i, line in enumerate(lines[17:52]) if i != 5] == [line for i, line in enumerate(ref[17:52]) if i != 5]
    assert lines[50] == "Published work"
    m = BZ_ITEMS.match(lines[52])
    assert m, lines[52]
    items = lines[53:]
    assert len(items) % 6 == 0, "each item: blank, meta, blank, title, blank, abstract"
    for i in range(0, len(items), 6):
        blank1, meta, blank2, title, blank3, abstract = items[i:i + 6]
        assert blank1 == blank2 == blank3 == ""
        assert BZ_META.match(meta), meta
        assert title and not title.startswith(" ") and not title.endswith(" ")
        assert 500 <= len(abstract) <= 2100, len(abstract)
    assert int(m.group(1).replace(",", "")) >= len(items) // 6     # declared >= listed
    return len(items) // 6


def check_scholarfeed_text(text: str) -> int:
    """Assert the Scholar Feed line structure; return the number of items."""
    lines = text.split("\n")
    assert lines[0] and lines[1] == ""
    for pattern, line in zip(SF_STATS, lines[2:8]):
        assert pattern.match(line), line
    assert lines[8] == ""
    m = SF_PAPERS.match(lines[9])
    assert m, lines[9]
    items = lines[10:]
    assert len(items) % 7 == 0, "each item: blank, meta, title, blank, byline, blank, abstract"
    for i in range(0, len(items), 7):
        blank1, meta, title, blank2, byline, blank3, abstract = items[i:i + 7]
        assert blank1 == blank2 == blank3 == ""
        assert SF_META.match(meta), meta
        assert title
        assert SF_BYLINE.match(byline), byline
        assert 500 <= len(abstract) <= 2100, len(abstract)
    return len(items) // 7


def test_line_patterns_describe_the_real_samples():
    assert check_bzpeer_text(_sample("000")) == 5
    assert check_bzpeer_text(_sample("001")) == 9
    assert check_scholarfeed_text(_sample("002")) == 15
    assert check_scholarfeed_text(_sample("003")) == 16
    assert check_scholarfeed_text(_sample("004")) == 3


# --------------------------------------------------------------------------------------------
# A tiny innerText: blocks break lines, <p> gets a blank line around it, inline elements glue.
# --------------------------------------------------------------------------------------------
_BLOCKS = frozenset("p div h1 h2 h3 h4 h5 h6 li ul ol section article header footer nav main body html".split())
_HIDDEN = frozenset("script style head title noscript template".split())


class _InnerText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.pending = 0
        self.hidden = 0
        self.depth_main = 0

    def _break(self, tag: str) -> None:
        if self.depth_main and tag in _BLOCKS:
            self.pending = max(self.pending, 2 if tag == "p" else 1)

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self.hidden += 1
        self._break(tag)
        if tag == "main":
            self.depth_main += 1

    def handle_endtag(self, tag):
        if tag in _HIDDEN:
            self.hidden -= 1
        if tag == "main":
            self.depth_main -= 1
        self._break(tag)

    def handle_data(self, data):
        if self.hidden or not self.depth_main:
            return
        text = re.sub(r"\s+", " ", data)
        if not text.strip():
            return
        if self.pending and self.out:
            self.out.append("\n" * self.pending)
        self.pending = 0
        self.out.append(text)


def visible_text(html: str) -> str:
    parser = _InnerText()
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


# --------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(out, profiles=60, seed=3, bad_page_share=0.1, html_share=0.3, workers=2)
    return out


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_byte_identical_output(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate_corpus(a, profiles=50, seed=11, workers=1)
    generate_corpus(b, profiles=50, seed=11, workers=2)
    generate_corpus(c, profiles=50, seed=12, workers=1)
    da, db, dc = _tree_digest(a), _tree_digest(b), _tree_digest(c)
    assert da == db
    assert len([k for k in da if k.startswith("captures/")]) == 100      # 50 pages + 50 sidecars
    assert da != dc
    # regenerating into the same folder replaces the corpus
    generate_corpus(a, profiles=50, seed=11, workers=1)
    assert _tree_digest(a) == da


def test_refuses_to_overwrite_foreign_folders(tmp_path):
    (tmp_path / "captures").mkdir()
    (tmp_path / "captures" / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        generate_corpus(tmp_path, profiles=5)
    assert (tmp_path / "captures" / "mine.txt").read_text() == "keep me"


def test_files_sidecars_and_truth_agree(corpus):
    captures, truth = corpus / "captures", corpus / "truth"
    profiles = pl.read_parquet(truth / "profiles.parquet")
    listings = pl.read_parquet(truth / "listings.parquet")
    mentions = pl.read_parquet(truth / "mentions.parquet")
    papers = pl.read_parquet(truth / "papers.parquet")
    people = pl.read_parquet(truth / "people.parquet")
    summary = json.loads((truth / "summary.json").read_text())

    pages = sorted(p.name for p in captures.iterdir() if not p.name.endswith(".meta.json"))
    assert pages == sorted(profiles["file"].to_list()) and len(pages) == 60
    assert profiles.select(["source", "source_profile_id"]).is_unique().all()
    for row in profiles.iter_rows(named=True):
        meta = json.loads((captures / (row["file"] + ".meta.json")).read_text())
        assert set(meta) == {"url", "captured_at"}
        assert meta["captured_at"] == "2026-11-21T00:00:00+00:00"
        assert meta["url"] == row["url"]
        if row["source"] == "bzpeer":
            assert re.fullmatch(r"https://www\.bzpeer\.com/authors/[a-z0-9-]+-\d+", meta["url"])
        else:
            assert re.fullmatch(r"https://www\.scholarfeed\.org/author/\d+", meta["url"])
        assert meta["url"].rsplit("/", 1)[1] == row["source_profile_id"]
        assert row["file"].endswith("." + row["format"])

    # every truth listing row points to a real file and an item position on it
    items_on = {}
    for row in profiles.filter(pl.col("page_kind") == "ok").iter_rows(named=True):
        body = (captures / row["file"]).read_bytes().decode("utf-8")
        text = body if row["format"] == "txt" else visible_text(body)
        check = check_bzpeer_text if row["source"] == "bzpeer" else check_scholarfeed_text
        items_on[row["file"]] = check(text)
        assert items_on[row["file"]] == row["listed_items"]
    per_file = listings.group_by("file").agg(pl.col("position").sort())
    for file, positions in per_file.iter_rows():
        assert (captures / file).exists()
        if file in items_on:
            assert positions == list(range(1, items_on[file] + 1))
    assert listings["paper_truth_id"].is_in(papers["paper_truth_id"].implode()).all()
    assert papers.join(listings, on="paper_truth_id", how="semi")["title"].null_count() == 0
    assert mentions["person_truth_id"].is_in(people["person_truth_id"].implode()).all()
    # one owner mention per parsed page, bylines only on Scholar Feed, at most three names each
    owners = mentions.filter(pl.col("byline_index").is_null())
    assert owners["position"].null_count() == owners.height
    assert owners.join(profiles, on="file").select(pl.col("person_truth_id") == pl.col("person_truth_id_right")).to_series().all()
    bylines = mentions.filter(pl.col("byline_index").is_not_null())
    assert set(bylines["source"].unique()) <= {"scholarfeed"}
    assert bylines["byline_index"].max() <= 2
    assert summary["counts"]["listings"] == listings.filter(~pl.col("partial")).height
    assert summary["params"]["seed"] == 3


def test_byline_names_match_the_page(corpus):
    """Mentions name exactly what the byline line shows, and the people are the paper's authors."""
    captures, truth = corpus / "captures", corpus / "truth"
    profiles = pl.read_parquet(truth / "profiles.parquet").filter(
        (pl.col("source") == "scholarfeed") & (pl.col("format") == "txt") & (pl.col("page_kind") == "ok"))
    mentions = pl.read_parquet(truth / "mentions.parquet")
    listings = pl.read_parquet(truth / "listings.parquet")
    authorships = pl.read_parquet(truth / "authorships.parquet")
    checked = 0
    for row in profiles.iter_rows(named=True):
        lines = (captures / row["file"]).read_text(encoding="utf-8").split("\n")
        bylines = [lines[10 + 7 * i + 4] for i in range(row["listed_items"])]
        page = mentions.filter((pl.col("file") == row["file"]) & pl.col("byline_index").is_not_null())
        for pos, byline in enumerate(bylines, start=1):
            names = page.filter(pl.col("position") == pos).sort("byline_index")
            shown = ", ".join(names["name"].to_list())
            assert byline in (shown, shown + " et al."), (byline, shown)
            paper = listings.filter((pl.col("file") == row["file"]) & (pl.col("position") == pos))["paper_truth_id"][0]
            first3 = authorships.filter(pl.col("paper_truth_id") == paper).sort("author_index").head(3)
            assert names["person_truth_id"].to_list() == first3["person_truth_id"].to_list()
            checked += 1
    assert checked > 50


def test_html_visible_text_equals_the_text_capture(tmp_path):
    """Same seed, all-text vs all-HTML: the HTML's visible text is the text capture, line for line."""
    as_text, as_html = tmp_path / "t", tmp_path / "h"
    generate_corpus(as_text, profiles=30, seed=5, html_share=0.0, bad_page_share=0.0, workers=1)
    generate_corpus(as_html, profiles=30, seed=5, html_share=1.0, bad_page_share=0.0, workers=1)
    profiles = pl.read_parquet(as_html / "truth" / "profiles.parquet")
    seen_sites = set()
    for row in profiles.iter_rows(named=True):
        html = (as_html / "captures" / row["file"]).read_text(encoding="utf-8")
        text = (as_text / "captures" / row["file"].replace(".html", ".txt")).read_text(encoding="utf-8")
        assert html.startswith("<!doctype html>")
        assert f'<link rel="canonical" href="{row["url"]}">' in html
        assert "<script" in html and "<style>" in html and "<nav" in html and "<footer" in html
        assert visible_text(html) == text
        seen_sites.add(row["source"])
        if row["source"] == "scholarfeed":
            assert re.search(r'<a href="/paper/\d{4}\.\d{5}v\d">', html)
            assert re.search(r'<span class="cat">[A-Z]{2}</span><time datetime="\d{4}-\d\d-\d\d">', html)
        else:
            assert re.search(r'<a href="/works/[a-z0-9-]+-\d+">', html)
    assert seen_sites == {"bzpeer", "scholarfeed"}
    # the truth does not depend on the format
    for name in ("listings", "mentions"):
        a = pl.read_parquet(as_text / "truth" / f"{name}.parquet").drop("file")
        b = pl.read_parquet(as_html / "truth" / f"{name}.parquet").drop("file")
        assert a.equals(b)


def test_bad_pages_at_the_requested_share(corpus):
    captures, truth = corpus / "captures", corpus / "truth"
    profiles = pl.read_parquet(truth / "profiles.parquet")
    listings = pl.read_parquet(truth / "listings.parquet")
    bad = profiles.filter(pl.col("page_kind") != "ok")
    assert bad.height == 6                                   # 10% of 60
    assert set(bad["page_kind"]) == {"empty", "bot_challenge", "error_page", "binary", "truncated"}
    assert bad["expect_reject"].all() and not profiles.filter(pl.col("page_kind") == "ok")["expect_reject"].any()
    for row in bad.iter_rows(named=True):
        body = (captures / row["file"]).read_bytes()
        kind = row["page_kind"]
        n_truth = listings.filter((pl.col("file") == row["file"]) & ~pl.col("partial")).height
        partial = listings.filter((pl.col("file") == row["file"]) & pl.col("partial"))
        if kind == "empty":
            assert not body.strip() or b"<body>\n<div id=\"__next\"></div>" in body
        elif kind == "bot_challenge":
            assert b"Just a moment" in body or b"Access denied" in body
        elif kind == "error_page":
            assert b"published item(s)" not in body and b" Papers" not in body
        elif kind == "binary":
            assert body[:2] == b"\x1f\x8b" or not _decodes(body)
            if body[:2] == b"\x1f\x8b":
                assert gzip.decompress(body)              # a real page, stored compressed
        elif kind == "truncated":
            assert row["truncated_at"] >= 1 and n_truth == row["truncated_at"] - 1
            assert row["listed_items"] == n_truth
            assert partial["position"].to_list() == [row["truncated_at"]]
        if kind != "truncated":
            assert n_truth == 0 and partial.height == 0
    summary = json.loads((truth / "summary.json").read_text())
    assert summary["pages"]["by_kind"]["ok"] == 54 and summary["pages"]["bad_share"] == 0.1


def _decodes(body: bytes) -> bool:
    try:
        body.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_mutate_changes_about_the_requested_share(tmp_path):
    out = tmp_path / "c"
    generate_corpus(out, profiles=200, seed=2, bad_page_share=0.0, workers=2)
    before = _tree_digest(out / "captures")
    listings_before = pl.read_parquet(out / "truth" / "listings.parquet")
    result = mutate(out, share=0.05, seed=1)
    after = _tree_digest(out / "captures")
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == sorted(result.changed_files) and len(changed) == 10
    assert result.papers_added + result.counts_changed >= 10
    listings = pl.read_parquet(out / "truth" / "listings.parquet")
    profiles = pl.read_parquet(out / "truth" / "profiles.parquet")
    papers = pl.read_parquet(out / "truth" / "papers.parquet")
    assert listings.height == listings_before.height + result.papers_added
    assert listings["paper_truth_id"].is_in(papers["paper_truth_id"].implode()).all()
    # the truth of unchanged pages is untouched; changed pages still agree with their files
    unchanged = listings_before.filter(~pl.col("file").is_in(changed))
    assert unchanged.equals(listings.filter(~pl.col("file").is_in(changed)))
    for file in changed:
        row = profiles.filter(pl.col("file") == file).row(0, named=True)
        body = (out / "captures" / file).read_bytes().decode("utf-8")
        text = body if row["format"] == "txt" else visible_text(body)
        check = check_bzpeer_text if row["source"] == "bzpeer" else check_scholarfeed_text
        assert check(text) == row["listed_items"] == listings.filter(pl.col("file") == file).height
    summary = json.loads((out / "truth" / "summary.json").read_text())
    assert summary["mutations"][0]["pages_changed"] == 10
    # a second batch replays the first and adds to it; the same batches give the same bytes
    mutate(out, share=0.05, seed=2)
    twin = tmp_path / "twin"
    generate_corpus(twin, profiles=200, seed=2, bad_page_share=0.0, workers=1)
    mutate(twin, share=0.05, seed=1)
    mutate(twin, share=0.05, seed=2)
    assert _tree_digest(out) == _tree_digest(twin)


def test_realistic_shape_at_small_scale(tmp_path):
    summary = generate_corpus(tmp_path, profiles=400, seed=0, workers=2).stats
    lp = summary["listings_per_profile"]
    assert 9 <= lp["mean"] <= 22 and lp["max"] > 2 * lp["mean"]
    assert 0.12 <= summary["overlap"]["people_on_both_sites_share"] <= 0.35
    assert summary["overlap"]["papers_on_2plus_profiles_share"] > 0.2
    hard = summary["hard_cases"]
    assert 0.02 <= hard["title_variant_rate"] <= 0.12
    assert hard["near_twin_pairs_both_listed"] >= 1
    assert 0.001 <= hard["byline_typo_rate"] <= 0.02
    assert {"canonical", "initials", "family_first", "given_joining"} <= set(hard["name_forms"])
    assert summary["pages"]["declared_gt_listed_share"] > 0.05
    assert summary["pages"]["by_format"]["html"] > 60


def test_surname_typos_are_one_edit_slips():
    import random

    from rapidfuzz.distance import DamerauLevenshtein

    rng = random.Random(0)
    seen = set()
    for name, family in (("Daning Cheng", "Cheng"), ("Wei Zhang", "Zhang"), ("José García", "García")):
        for _ in range(100):
            typo = surname_typo(name, family, rng)
            given = name[: -len(family)]
            assert typo.startswith(given) and typo != name
            assert DamerauLevenshtein.distance(typo[len(given):], family) == 1
            seen.add(typo)
    assert "Daning Chen" in seen                 # the slip of sample 003's CALM byline


def test_cli_writes_a_corpus(tmp_path):
    out = tmp_path / "cli"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_captures.py"), "--profiles", "12",
                           "--seed", "4", "--out", str(out), "--workers", "1"],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(proc.stdout)["profiles"] == 12
    assert (out / "truth" / "summary.json").exists()
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_captures.py"), "--mutate", "--share", "0.2",
                           "--seed", "1", "--out", str(out)], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(proc.stdout)["pages_changed"] >= 2


def test_captured_at_controls_year_less_dates(tmp_path):
    generate_corpus(tmp_path, profiles=40, seed=1, html_share=0.0, bad_page_share=0.0, workers=1,
                    captured_at=datetime(2026, 11, 21, tzinfo=timezone.utc))
    metas = []
    for path in (tmp_path / "captures").glob("*.txt"):
        text = path.read_text(encoding="utf-8")
        if text.startswith("Researcher profile"):
            continue
        for line in text.split("\n"):
            if SF_META.match(line):
                metas.append(line)
    year_less = [m for m in metas if not re.search(r", \d{4}", m)]
    with_year = [m for m in metas if re.search(r", \d{4}", m)]
    assert year_less and with_year
    assert not any(", 2026" in m for m in with_year)          # this year's dates drop the year
    assert all(int(re.search(r", (\d{4})", m).group(1)) >= 2015 for m in with_year)


def test_mutate_stamps_a_new_capture_time_only_on_changed_pages(tmp_path):
    generate_corpus(tmp_path, profiles=40, seed=8, bad_page_share=0.0, workers=1)
    later = datetime(2026, 11, 22, 3, 0, tzinfo=timezone.utc)
    result = mutate(tmp_path, share=0.1, seed=5, captured_at=later)
    changed = set(result.changed_files)
    assert len(changed) == 4
    for sidecar in (tmp_path / "captures").glob("*.meta.json"):
        stamp = json.loads(sidecar.read_text())["captured_at"]
        expected = later.isoformat() if sidecar.name[: -len(".meta.json")] in changed else "2026-11-21T00:00:00+00:00"
        assert stamp == expected

"""Parsers for BZPEER and Scholar Feed captures: the five real samples, every trap they teach,
every reject reason, and HTML captures that must give the same rows as the text captures."""

from __future__ import annotations

import json
import re
import random
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from pipelines.staging.parsing import (
    LISTING_KEYS, PARSER_VERSION, PROFILE_KEYS, REJECT_REASONS, ParseResult, decode_body, detect_site,
    html_to_document, html_to_text, parse_capture,
)
from pipelines.staging.parsing.categories import map_category
from pipelines.staging.parsing.fields import arxiv_from_link, arxiv_from_text, infer_year, parse_byline, parse_count

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "pipelines" / "samples"
HTML_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "html"
CAPTURED = datetime(2026, 11, 21, tzinfo=timezone.utc)

S000 = "000_c5cc6f46b58abda9.txt"  # BZPEER, Daning Cheng
S001 = "001_05f49289928d0f65.txt"  # BZPEER, Yunquan Zhang
S002 = "002_9c9c8f84cf558702.txt"  # Scholar Feed, Yucheng Ding
S003 = "003_5373d79505ae5ddf.txt"  # Scholar Feed, Yunquan Zhang
S004 = "004_34c8893c0fa5ecd2.txt"  # Scholar Feed, Jialiang Cheng


def sample_bytes(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def parse_sample(name: str, **overrides) -> ParseResult:
    meta = json.loads((SAMPLES / f"{name}.meta.json").read_text())
    kwargs = {"url": meta["url"], "captured_at": datetime.fromisoformat(meta["captured_at"])}
    kwargs.update(overrides)
    return parse_capture(sample_bytes(name), **kwargs)


def parse_text(text: str, url: str | None = None, captured_at: datetime = CAPTURED, **kw) -> ParseResult:
    return parse_capture(text.encode("utf-8"), url=url, captured_at=captured_at, **kw)


def reasons(result: ParseResult) -> list[str]:
    return [r["reason"] for r in result.rejects]


# --------------------------------------------------------------------------------------------
# The five samples: counts, profiles, and every field of 000 and 002
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, source, listings",
    [(S000, "bzpeer", 5), (S001, "bzpeer", 9), (S002, "scholarfeed", 15), (S003, "scholarfeed", 16),
     (S004, "scholarfeed", 3)],
)
def test_samples_parse_cleanly(name, source, listings):
    result = parse_sample(name)
    assert result.source == source
    assert result.content_type == "text/plain"
    assert result.encoding == "utf-8"
    assert result.rejects == []
    assert len(result.listings) == listings
    assert result.profile["listed_items"] == listings
    assert result.profile["truncated"] is False
    assert set(result.profile) == set(PROFILE_KEYS)
    for position, listing in enumerate(result.listings, start=1):
        assert set(listing) == set(LISTING_KEYS)
        assert listing["position"] == position
        assert listing["title"] and listing["abstract"]


def test_samples_total_48_listings():
    assert sum(len(parse_sample(n).listings) for n in (S000, S001, S002, S003, S004)) == 48


BZPEER_PROFILES = {
    S000: dict(name="Daning Cheng", bio="Daning Cheng contributes to research discovery and scholarly infrastructure.",
               declared_works=6, followers=0, topics=4, close_collaborators=4, declared_items=6, listed_items=5),
    S001: dict(name="Yunquan Zhang", bio="Yunquan Zhang contributes to research discovery and scholarly infrastructure.",
               declared_works=9, followers=0, topics=8, close_collaborators=4, declared_items=9, listed_items=9),
}


@pytest.mark.parametrize("name", sorted(BZPEER_PROFILES))
def test_bzpeer_profiles(name):
    result = parse_sample(name)
    expected = dict(
        affiliation=None,  # "Affiliation not imported"
        trust_score=21, trust_tier="Emerging", verification_level="L1", claimed=False,
        primary_category=None, primary_category_raw=None, h_index=None, declared_papers=None, citations=None,
        novelty_pct=None, ai_score=None, truncated=False, **BZPEER_PROFILES[name],
    )
    assert result.profile == expected
    # The samples' sidecars carry the page URL (/authors/<slug>): the profile id is its slug ...
    assert result.source_profile_id == expected["name"].lower().replace(" ", "-")
    # ... and without a URL it falls back to the slug of the name
    assert parse_sample(name, url=None).source_profile_id == "name:" + expected["name"].lower().replace(" ", "-")


SCHOLARFEED_PROFILES = {
    S002: dict(name="Yucheng Ding", primary_category="cs.LG", primary_category_raw="LG", h_index=39,
               declared_papers=15, citations=108, novelty_pct=53.0, ai_score=57.0, declared_items=15, listed_items=15),
    S003: dict(name="Yunquan Zhang", primary_category="cs.LG", primary_category_raw="LG", h_index=4,
               declared_papers=16, citations=99, novelty_pct=57.0, ai_score=57.0, declared_items=16, listed_items=16),
    S004: dict(name="Jialiang Cheng", primary_category="cs.AI", primary_category_raw="AI", h_index=3,
               declared_papers=3, citations=28, novelty_pct=40.0, ai_score=45.0, declared_items=3, listed_items=3),
}


@pytest.mark.parametrize("name", sorted(SCHOLARFEED_PROFILES))
def test_scholarfeed_profiles(name):
    result = parse_sample(name)
    expected = dict.fromkeys(PROFILE_KEYS)
    expected.update(truncated=False, **SCHOLARFEED_PROFILES[name])
    assert result.profile == expected


S000_LISTINGS = [
    # position, pub_type, venue, year, title, abstract start, abstract end, abstract length
    (1, "preprint", "arXiv", 2026, "A Qualitative Test-Risk Mechanism for Scaling Behavior in Normalized Residual Networks",
     "The scaling behavior, in which test perf", "ansion can be controlled.", 1680),
    (2, "preprint", "arXiv", 2026, "DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training",
     "Modern large language model (LLM) traini", "e preserving correctness.", 1220),
    (3, "preprint", "arXiv", 2026, "MoE-DisCo:Low Economy Cost Training Mixture-of-Experts Models",
     "Training large-scale Mixture-of-Experts ", "cross different datasets.", 1257),
    (4, "preprint", "arXiv", 2022,
     "Mixed-Precision Inference Quantization: Radically Towards Faster inference speed, Lower Storage requirement, and Lower Loss",
     "Based on the model's resilience to compu", "works using quantization.", 824),
    (5, "preprint", "arXiv", 2020, "The Scalability for Parallel Machine Learning Training Algorithm: Dataset Matters",
     "To gain a better performance, many resea", "hine learning algorithms.", 1499),
]


def test_sample_000_every_listing_field():
    listings = parse_sample(S000).listings
    assert len(listings) == len(S000_LISTINGS)
    for listing, (pos, pub_type, venue, year, title, a_start, a_end, a_len) in zip(listings, S000_LISTINGS):
        abstract = listing["abstract"]
        assert abstract.startswith(a_start) and abstract.endswith(a_end) and len(abstract) == a_len
        assert listing == {
            "position": pos, "title": title, "title_normalized": listing["title_normalized"],
            "abstract": abstract, "abstract_normalized": listing["abstract_normalized"],
            "pub_type": pub_type, "venue": venue, "year": year, "pub_date": None, "date_precision": "year",
            "date_raw": str(year), "year_inferred": False, "category": None, "category_raw": None,
            "has_code": None, "listing_score": None, "byline_authors": [], "byline_truncated": False,
            "arxiv_id": None, "arxiv_version": None, "paper_url": None, "code_urls": [],
        }
        assert listing["abstract_normalized"] == abstract  # plain ASCII prose: nothing to normalise
    # The spacing slip is kept raw and repaired in the normalised copy.
    assert listings[2]["title"] == "MoE-DisCo:Low Economy Cost Training Mixture-of-Experts Models"
    assert listings[2]["title_normalized"] == "MoE-DisCo: Low Economy Cost Training Mixture-of-Experts Models"
    assert [l["title_normalized"] for l in listings[:2] + listings[3:]] == [l["title"] for l in listings[:2] + listings[3:]]


S002_LISTINGS = [
    # position, category_raw, category, date_raw, pub_date, year_inferred, has_code, listing_score,
    # title, byline, byline_truncated, abstract start, abstract end, code_urls
    (1, "LG", "cs.LG", "Mar 18, 2023", date(2023, 3, 18), False, False, None,
     "DC-CCL: Device-Cloud Collaborative Controlled Learning for Large Vision Models",
     ["Yucheng Ding", "Chaoyue Niu", "Fan Wu"], True,
     "Many large vision models have been deplo", "nt backbone architecture.", []),
    (2, "IR", "cs.IR", "Oct 21, 2022", date(2022, 10, 21), False, False, None,
     "On-Device Model Fine-Tuning with Label Correction in Recommender Systems",
     ["Yucheng Ding", "Chaoyue Niu", "Fan Wu"], True,
     "To meet the practical requirements of lo", "ning without fine-tuning.", []),
    (3, "DC", "cs.DC", "Dec 15, 2025", date(2025, 12, 15), False, True, None,
     "SIGMA: An AI-Empowered Training Stack on Early-Life Hardware",
     ["Lei Qu", "Lianhai Ren", "Peng Cheng"], True,
     "An increasing variety of AI accelerators", "ft/LuciaTrainingPlatform.",
     ["https://github.com/microsoft/LuciaTrainingPlatform"]),
    (4, "CL", "cs.CL", "Dec 18, 2025", date(2025, 12, 18), False, True, None,
     "Sigma-MoE-Tiny Technical Report",
     ["Qingguo Hu", "Zhenghao Lin", "Ziyue Yang"], True,
     "Mixture-of-Experts (MoE) has emerged as ", "microsoft/ltp-megatron-lm",
     ["https://qghuxmu.github.io/Sigma-MoE-Tiny", "https://github.com/microsoft/ltp-megatron-lm"]),
    (5, "CL", "cs.CL", "May 19", date(2026, 5, 19), True, False, 68.5,
     "m3BERT: A Modern, Multi-lingual, Matryoshka Bidirectional Encoder",
     ["Yaoxiang Wang", "Simiao Zuo", "Qingguo Hu"], True,
     "Embedding models are pivotal in industri", "hka pretraining strategy.", []),
    (6, "LG", "cs.LG", "Feb 2", date(2026, 2, 2), True, False, None,
     "MSign: An Optimizer Preventing Training Instability in Large Language Models via Stable Rank Restoration",
     ["Lianhai Ren", "Yucheng Ding", "Xiao Liu"], True,
     "Training instability remains a critical ", "erhead of less than 7.0%.", []),
    (7, "CV", "cs.CV", "May 12, 2025", date(2025, 5, 12), False, False, None,
     "Discovering Fine-Grained Visual-Concept Relations by Disentangled Optimal Transport Concept Bottleneck Models",
     ["Yan Xie", "Zequn Zeng", "Hao Zhang"], True,
     "Concept Bottleneck Models (CBMs) try to ", "tribution generalization.", []),
    (8, "LG", "cs.LG", "Jan 10, 2025", date(2025, 1, 10), False, False, None,
     "Personalized Language Model Learning on Text Data Without User Identifiers",
     ["Yucheng Ding", "Yangwenjian Tan", "Xiangyu Liu"], True,
     "In many practical natural language appli", "me inference requirement.", []),
    (9, "LG", "cs.LG", "Apr 17, 2025", date(2025, 4, 17), False, False, None,
     "Collaborative Learning of On-Device Small Model and Cloud-Based Large Model: Advances and Future Directions",
     ["Chaoyue Niu", "Yucheng Ding", "Junhui Lu"], True,
     "The conventional cloud-based large model", "s rapidly evolving field.", []),
    (10, "LG", "cs.LG", "Oct 9, 2025", date(2025, 10, 9), False, False, None,
     "Recycling Pretrained Checkpoints: Orthogonal Growth of Mixture-of-Experts for Efficient Large Language Model Pre-Training",
     ["Ruizhe Wang", "Yucheng Ding", "Xiao Liu"], True,
     "The rapidly increasing computational cos", "nguage model pretraining.", []),
    (11, "CL", "cs.CL", "Oct 7, 2025", date(2025, 10, 7), False, False, None,
     "Mixture of Neuron Experts",
     ["Runxi Cheng", "Yuchen Guan", "Yucheng Ding"], True,
     "In this work, we first explore whether t", "iency in MoE-like models.", []),
    (12, "CL", "cs.CL", "Sep 30, 2025", date(2025, 9, 30), False, False, None,
     "Training Matryoshka Mixture-of-Experts for Elastic Inference-Time Expert Utilization",
     ["Yaoxiang Wang", "Qingguo Hu", "Yucheng Ding"], True,
     "Mixture-of-Experts (MoE) has emerged as ", "f large-scale MoE models.", []),
    (13, "LG", "cs.LG", "Sep 16, 2021", date(2021, 9, 16), False, False, None,
     "Federated Submodel Optimization for Hot and Cold Data Features",
     ["Yucheng Ding", "Chaoyue Niu", "Fan Wu"], True,
     "We study practical data characteristics ", " FedAvg and its variants.", []),
    (14, "LG", "cs.LG", "Feb 18, 2020", date(2020, 2, 18), False, False, None,
     "Distributed Optimization over Block-Cyclic Data",
     ["Yucheng Ding", "Chaoyue Niu", "Yikai Yan"], True,
     "We consider practical data characteristi", "e of critical parameters.", []),
    (15, "ML", "stat.ML", "Feb 18, 2020", date(2020, 2, 18), False, False, None,
     "Distributed Non-Convex Optimization with Sublinear Speedup under Intermittent Client Availability",
     ["Yikai Yan", "Chaoyue Niu", "Yucheng Ding"], True,
     "Federated learning is a new distributed ", "ches a sublinear speedup.", []),
]


def test_sample_002_every_listing_field():
    listings = parse_sample(S002).listings
    assert len(listings) == len(S002_LISTINGS)
    for listing, row in zip(listings, S002_LISTINGS):
        (pos, cat_raw, cat, date_raw, pub_date, inferred, has_code, score, title, byline, etal,
         a_start, a_end, urls) = row
        abstract = listing["abstract"]
        assert abstract.startswith(a_start) and abstract.endswith(a_end)
        assert "\n" not in abstract
        assert listing == {
            "position": pos, "title": title, "title_normalized": title,
            "abstract": abstract, "abstract_normalized": listing["abstract_normalized"],
            "pub_type": None, "venue": None, "year": pub_date.year, "pub_date": pub_date,
            "date_precision": "day", "date_raw": date_raw, "year_inferred": inferred,
            "category": cat, "category_raw": cat_raw, "has_code": has_code, "listing_score": score,
            "byline_authors": byline, "byline_truncated": etal, "arxiv_id": None, "arxiv_version": None,
            "paper_url": None, "code_urls": urls,
        }
    # LaTeX in 002's abstracts: "$μ$" and "$O(1/\sqrt{NT})$" lose their markup in the normalised copy.
    assert "via $μ$P" in listings[5]["abstract"] and "via μP" in listings[5]["abstract_normalized"]
    assert "$O(1/\\sqrt{NT})$" in listings[13]["abstract"] and "rate of O(1/NT)" in listings[13]["abstract_normalized"]


def test_samples_003_and_004_spot_checks():
    s003 = parse_sample(S003).listings
    assert [l["category_raw"] for l in s003[:5]] == ["CV", "LG", "DC", "LG", "PF"]
    assert [l["has_code"] for l in s003[:5]] == [True, True, False, False, True]
    assert s003[2]["date_raw"] == "Apr 20" and s003[2]["pub_date"] == date(2026, 4, 20)
    assert s003[4]["category"] == "cs.PF"
    # A three-name byline without "et al." is complete.
    assert s003[7]["byline_authors"] == ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]
    assert s003[7]["byline_truncated"] is False
    # Name traps are kept verbatim: Daning Chen (CALM byline), Yuchen Zhang (DynaTrain byline).
    assert "Daning Chen" in s003[6]["byline_authors"]
    assert "Yuchen Zhang" in s003[3]["byline_authors"]
    # \url{...} code link: the LaTeX wrapper's closing brace is not part of the URL.
    assert s003[4]["code_urls"] == ["http://www.benchcouncil.org/AIBench/index.html"]
    s004 = parse_sample(S004).listings
    assert (s004[0]["listing_score"], s004[0]["category"], s004[0]["date_raw"]) == (68.9, "cs.AI", "May 14")
    assert s004[0]["pub_date"] == date(2026, 5, 14) and s004[0]["year_inferred"] is True
    assert s004[1]["has_code"] is True and s004[1]["code_urls"] == [
        "https://github.com/intelligent-machine-learning/atorch/tree/main/atorch/local_sgd"]


# --------------------------------------------------------------------------------------------
# Traps
# --------------------------------------------------------------------------------------------

def test_declared_works_differs_from_listed_items_is_not_truncation():
    result = parse_sample(S000)
    assert result.profile["declared_works"] == 6
    assert result.profile["declared_items"] == 6
    assert result.profile["listed_items"] == 5
    assert result.profile["truncated"] is False
    assert result.rejects == []


def test_year_less_dates_take_capture_year_or_the_year_before():
    # Captured 2026-11-21: "May 14" is this year, "Dec 18" would be in the future -> 2025.
    assert infer_year(5, 14, date(2026, 11, 21)) == 2026
    assert infer_year(12, 18, date(2026, 11, 21)) == 2025
    assert infer_year(11, 21, date(2026, 11, 21)) == 2026  # the capture day itself is not the future
    assert infer_year(2, 29, date(2026, 11, 21)) == 2024   # Feb 29 walks back to a leap year
    page = SF_MINIMAL.format(rows="LGDec 18\nFuture-looking title\nA Person, B Person\nAbstract text.\n\n"
                                  "AIMay 14\nPast title\nA Person\nAbstract text.")
    a, b = parse_text(page).listings
    assert (a["pub_date"], a["year"], a["year_inferred"], a["date_precision"]) == (date(2025, 12, 18), 2025, True, "day")
    assert (b["pub_date"], b["year"], b["year_inferred"]) == (date(2026, 5, 14), 2026, True)
    # The same page captured earlier in the year moves "May 14" back a year too.
    early = parse_text(page, captured_at=datetime(2026, 3, 1, tzinfo=timezone.utc)).listings
    assert [l["pub_date"] for l in early] == [date(2025, 12, 18), date(2025, 5, 14)]


def test_month_and_year_precision_dates():
    page = SF_MINIMAL.format(rows="CVMar 2024\nMonth title\nA Person\nShort abstract.\n\nRO2019\nYear title\nA Person\nShort abstract.")
    month, year = parse_text(page).listings
    assert (month["date_precision"], month["pub_date"], month["year"], month["date_raw"]) == ("month", date(2024, 3, 1), 2024, "Mar 2024")
    assert (year["date_precision"], year["pub_date"], year["year"], year["date_raw"]) == ("year", None, 2019, "2019")
    assert year["category"] == "cs.RO" and not year["year_inferred"]


def test_category_mapping_rules():
    assert map_category("LG") == "cs.LG"
    assert map_category("ML") == "stat.ML"
    assert map_category("AI") == "cs.AI"
    assert map_category("SP") == "eess.SP"
    assert map_category("AS") == "eess.AS"
    assert map_category("IV") == "eess.IV"
    assert map_category("OC") == "math.OC"
    assert map_category("ST") == "math.ST"
    assert map_category("CV") == "cs.CV"    # collision with math.CV: cs first
    assert map_category("CO") == "stat.CO"  # collision with math.CO: stat before math
    assert map_category("QM") == "q-bio.QM"
    assert map_category("cs.LG") == "cs.LG"
    assert map_category("quant-ph") == "quant-ph"
    assert map_category("XY") is None
    assert map_category("") is None


def test_unknown_category_is_kept_raw():
    page = SF_MINIMAL.format(rows="ZZMar 18, 2023\nSome title\nA Person\nShort abstract.")
    (listing,) = parse_text(page).listings
    assert (listing["category"], listing["category_raw"]) == (None, "ZZ")


def test_ml_maps_to_stat_ml_in_sample():
    last = parse_sample(S002).listings[-1]
    assert (last["category_raw"], last["category"]) == ("ML", "stat.ML")


@pytest.mark.parametrize("raw, value", [
    ("108", 108), ("1,234", 1234), ("1 234", 1234), ("1\u00a0234", 1234), ("12,345,678", 12345678),
    ("1.2k", 1200), ("3M", 3_000_000), ("1.234", 1234), ("0", 0), ("", None), ("abc", None),
])
def test_parse_count(raw, value):
    assert parse_count(raw) == value


def test_thousands_separators_in_profiles():
    sf = parse_text("Ann Example\nLG\nh-index1,024\n1,234papers\n12 345citations\nNovelty53.5%\nAI Score57.2\n0 Papers")
    p = sf.profile
    assert (p["h_index"], p["declared_papers"], p["citations"], p["novelty_pct"], p["ai_score"]) == (1024, 1234, 12345, 53.5, 57.2)
    assert p["declared_items"] == 0 and sf.listings == [] and sf.rejects == []
    bz = parse_text(BZ_HEADER.format(works="1.2k", followers="12,345") + "\n0 published item(s)\n")
    assert (bz.profile["declared_works"], bz.profile["followers"]) == (1200, 12345)


def test_glued_bzpeer_header_variants():
    header = BZ_HEADER.replace("Trust 21 - EmergingVerification L1Unclaimed author",
                               "Trust 87 - Very HighVerification L3Claimed author")
    header = header.replace("ResearcherAffiliation not importedOpen to collaborate",
                            "ResearcherTsinghua UniversityOpen to collaborate")
    result = parse_text(header.format(works="2", followers="5") + "\n1 published item(s)\n"
                        "article2019Nature Communications\nDeep things\nAbstract of deep things.")
    p = result.profile
    assert (p["trust_score"], p["trust_tier"], p["verification_level"], p["claimed"]) == (87, "Very High", "L3", True)
    assert p["affiliation"] == "Tsinghua University"
    (listing,) = result.listings
    assert (listing["pub_type"], listing["year"], listing["venue"]) == ("article", 2019, "Nature Communications")


@pytest.mark.parametrize("row, pub_type, year, venue", [
    ("preprint2026arXiv", "preprint", 2026, "arXiv"),
    ("article2019Nature Communications", "article", 2019, "Nature Communications"),
    ("conference2021NeurIPS", "conference", 2021, "NeurIPS"),
    ("journal-article2023IEEE Transactions on Parallel and Distributed Systems", "journal-article", 2023,
     "IEEE Transactions on Parallel and Distributed Systems"),
    ("conference20213DV", "conference", 2021, "3DV"),
    ("preprint 2024 arXiv", "preprint", 2024, "arXiv"),
])
def test_bzpeer_item_rows(row, pub_type, year, venue):
    result = parse_text(BZ_HEADER.format(works="1", followers="0") + f"\n1 published item(s)\n{row}\nA title\nAn abstract.")
    (listing,) = result.listings
    assert (listing["pub_type"], listing["year"], listing["venue"]) == (pub_type, year, venue)


@pytest.mark.parametrize("row, score, cat, date_raw, code", [
    ("68.9AIMay 14", 68.9, "AI", "May 14", False),
    ("DCDec 15, 2025Code", None, "DC", "Dec 15, 2025", True),
    ("LGMar 18, 2023", None, "LG", "Mar 18, 2023", False),
    ("CLSep 30, 2025", None, "CL", "Sep 30, 2025", False),
    ("70CVJan 3, 2024Code", 70.0, "CV", "Jan 3, 2024", True),
    ("68.9 AI May 14 Code", 68.9, "AI", "May 14", True),  # spaced (an HTML capture with whitespace)
])
def test_scholarfeed_item_rows(row, score, cat, date_raw, code):
    (listing,) = parse_text(SF_MINIMAL.format(rows=f"{row}\nA title\nA Person\nAn abstract.")).listings
    assert (listing["listing_score"], listing["category_raw"], listing["date_raw"], listing["has_code"]) == (score, cat, date_raw, code)


def test_byline_et_al_and_separators():
    assert parse_byline("Yucheng Ding, Chaoyue Niu, Fan Wu et al.") == (["Yucheng Ding", "Chaoyue Niu", "Fan Wu"], True)
    assert parse_byline("Boyang Zhang, Daning Cheng, Yunquan Zhang") == (["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"], False)
    assert parse_byline("Ana López and Bob van der Berg") == (["Ana López", "Bob van der Berg"], False)
    assert parse_byline("A. Smith & J. K. Rowling") == (["A. Smith", "J. K. Rowling"], False)
    assert parse_byline("ChangQing Xu, Yi Liu, XinFang Liao et al.") == (["ChangQing Xu", "Yi Liu", "XinFang Liao"], True)
    # Abstracts are not bylines.
    assert parse_byline("We study the problem of learning, in the wild.") is None
    assert parse_byline("In this paper, a novel machine learning regression based method is proposed.") is None
    assert parse_byline("Keywords: Deep Learning, Compression") is None


def test_items_without_byline_or_abstract():
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nNo byline here\nJust an abstract, which is a sentence.\n\n"
                                  "CLMar 19, 2023\nNo abstract here\nA Person, B Person\n\n"
                                  "CVMar 20, 2023\nLast one\nC Person\nShort abstract.")
    a, b, c = parse_text(page).listings
    assert (a["byline_authors"], a["abstract"]) == ([], "Just an abstract, which is a sentence.")
    assert (b["byline_authors"], b["abstract"]) == (["A Person", "B Person"], None)
    assert c["abstract"] == "Short abstract."


def test_latex_and_lost_dash_normalisation():
    calm = parse_sample(S001).listings[1]
    assert "Modularization)a fine-tuning-free" in calm["abstract"]
    assert "Modularization) a fine-tuning-free" in calm["abstract_normalized"]
    llc = parse_sample(S003).listings[0]
    assert "\\textbf{L}oss\\textbf{L}ess" in llc["abstract"]
    assert "LossLess Compression" in llc["abstract_normalized"] and "\\textbf" not in llc["abstract_normalized"]
    lowrank = parse_sample(S003).listings[1]
    assert "$δ$" in lowrank["abstract"] and "error δ between" in lowrank["abstract_normalized"]


def test_arxiv_ids_from_text_and_links():
    assert arxiv_from_text("see arXiv:2312.01234v2 for details") == ("2312.01234", 2)
    assert arxiv_from_text("https://arxiv.org/abs/cs/0601001") == ("cs/0601001", None)
    assert arxiv_from_text("doi 10.48550/arXiv.2101.00001") == ("2101.00001", None)
    assert arxiv_from_text("version 2312.01234 alone is not enough") == (None, None)
    assert arxiv_from_link("https://www.scholarfeed.org/paper/2303.04217v1") == ("2303.04217", 1)
    assert arxiv_from_link("https://www.bzpeer.com/works/dynatrain-fast-2604.02156") == ("2604.02156", None)
    assert arxiv_from_link("https://www.bzpeer.com/works/some-title-88213") == (None, None)
    assert arxiv_from_link("https://arxiv.org/pdf/2401.00002v4") == ("2401.00002", 4)
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nTitle\nA Person\nPreprint at arXiv:2303.04217v3, code at https://github.com/a/b.")
    (listing,) = parse_text(page).listings
    assert (listing["arxiv_id"], listing["arxiv_version"]) == ("2303.04217", 3)
    assert listing["code_urls"] == ["https://github.com/a/b"]


def test_boilerplate_and_footer_are_not_listings():
    page = ("Scholar Feed\nTrending\nSign in\n" + SF_MINIMAL.format(rows="LGMar 18, 2023\nTitle\nA Person\nShort abstract.\nShare\n\n"
            "CLMar 19, 2023\nSecond\nB Person\nAbstract two.") + "\nLoad more\n© 2026 Scholar Feed\nAbout · Privacy · Terms")
    result = parse_text(page)
    assert result.profile["name"] == "Ann Example"
    assert [l["abstract"] for l in result.listings] == ["Short abstract.", "Abstract two."]
    assert result.rejects == []


def test_multi_paragraph_abstract_is_joined():
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nTitle\nA Person\nFirst paragraph.\nSecond paragraph.")
    (listing,) = parse_text(page).listings
    assert listing["abstract"] == "First paragraph.\nSecond paragraph."
    assert listing["abstract_normalized"] == "First paragraph. Second paragraph."


def test_profile_ids_from_urls():
    assert parse_sample(S000, url="https://www.bzpeer.com/authors/daning-cheng").source_profile_id == "daning-cheng"
    assert parse_sample(S002, url="https://www.scholarfeed.org/author/48213907?tab=papers").source_profile_id == "48213907"
    assert parse_sample(S002, url="file:///captures/002.txt").source_profile_id == "name:yucheng-ding"


def test_detect_site():
    assert detect_site(sample_bytes(S000).decode(), None) == "bzpeer"
    assert detect_site(sample_bytes(S004).decode(), None) == "scholarfeed"
    assert detect_site("anything", "https://www.bzpeer.com/authors/x") == "bzpeer"
    assert detect_site("anything", "https://scholarfeed.org/author/1") == "scholarfeed"
    # The URL host wins over the content when it is a site.
    assert detect_site(sample_bytes(S000).decode(), "https://www.scholarfeed.org/author/1") == "scholarfeed"
    assert detect_site(sample_bytes(S000).decode(), "file:///tmp/x.txt") == "bzpeer"
    assert detect_site("Hello world", None) == "unknown"
    html = (HTML_FIXTURES / "scholarfeed_002_yucheng_ding.html").read_text()
    assert detect_site(html, None) == "scholarfeed"


def test_parser_version_is_exposed():
    assert isinstance(PARSER_VERSION, str) and PARSER_VERSION


# --------------------------------------------------------------------------------------------
# Rejects
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [b"", b"   \n\t\r\n  "])
def test_empty(body):
    result = parse_capture(body, url=None, captured_at=CAPTURED)
    assert reasons(result) == ["empty"] and result.profile is None and result.listings == []


def test_binary_garbage():
    rng = random.Random(20261121)
    for body in (bytes(rng.randrange(256) for _ in range(4096)), b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
                 b"\x00" * 64, b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(500))):
        result = parse_capture(body, url="https://www.bzpeer.com/authors/x", captured_at=CAPTURED)
        assert reasons(result) == ["not_text"], body[:8]
        assert result.encoding is None and result.profile is None


def test_neither_site():
    result = parse_text("Welcome to my blog\n\nToday I baked bread.\nIt was good.\n\n© 2026 Me")
    assert reasons(result) == ["unknown_site"] and result.source == "unknown"
    html = "<html><head><title>Recipes</title></head><body><h1>Bread</h1><p>Flour, water, salt.</p></body></html>"
    assert reasons(parse_text(html)) == ["unknown_site"]


CLOUDFLARE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8e"></script></head>
<body><div class="main-wrapper" role="main"><div class="main-content"><h1 class="zone-name-title h1">www.bzpeer.com</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div class="h2">Enable JavaScript and cookies to continue</div></noscript>
<div id="challenge-body-text" class="core-msg spacer">www.bzpeer.com needs to review the security of your connection before proceeding.</div>
</div></div><div class="footer" role="contentinfo"><div class="footer-inner">Ray ID: <code>8e2f1a2b3c4d5e6f</code>
Performance &amp; security by Cloudflare</div></div></body></html>"""


@pytest.mark.parametrize("body, url", [
    (CLOUDFLARE, "https://www.bzpeer.com/authors/daning-cheng"),
    (CLOUDFLARE, None),
    ("www.scholarfeed.org\nVerify you are human by completing the action below.\n"
     "www.scholarfeed.org needs to review the security of your connection before proceeding.", None),
    ("<html><body><h1>Access Denied</h1><p>You don't have permission to access this server.</p>"
     "<p>Reference #18.2f3e</p></body></html>", "https://www.scholarfeed.org/author/1"),
    ("<html><body><form id='captcha-form'><div class='g-recaptcha' data-sitekey='x'></div>"
     "<p>Please solve the CAPTCHA to continue</p></form></body></html>", None),
    ("<html><head><title>Just a moment...</title></head><body></body></html>", None),
])
def test_bot_challenge(body, url):
    result = parse_text(body, url=url)
    assert reasons(result) == ["bot_challenge"]
    assert result.profile is None and result.listings == []


@pytest.mark.parametrize("body, url", [
    ("<html><head><title>Scholar Feed</title></head><body><nav><a href='/'>Scholar Feed</a></nav>"
     "<main><h1>404</h1><p>This page could not be found.</p></main></body></html>", "https://www.scholarfeed.org/author/123"),
    ("Researcher profile\nSomething went wrong\nPlease try again later.", None),
    ("<html><body><h1>500 Internal Server Error</h1></body></html>", "https://www.bzpeer.com/authors/x"),
    ("BZPEER\nPage not found\nThe author you are looking for does not exist.", None),
])
def test_http_200_error_page(body, url):
    result = parse_text(body, url=url)
    assert reasons(result) == ["error_page"]


def test_site_known_but_no_profile():
    result = parse_text("Some unrelated page text\nwith nothing of a profile", url="https://www.bzpeer.com/authors/x")
    assert reasons(result) == ["no_profile"] and result.source == "bzpeer"
    assert result.source_profile_id == "x"


def test_abstract_mentioning_captcha_or_404_is_still_a_profile():
    page = SF_MINIMAL.format(rows="CRMar 18, 2023\nBreaking CAPTCHA at scale\nA Person\n"
                                  "We show that reCAPTCHA challenges can be solved; access denied pages return 404.")
    result = parse_text(page)
    assert result.rejects == [] and len(result.listings) == 1


def test_cp1252_bytes_decode_and_parse():
    text = sample_bytes(S000).decode().replace("Daning Cheng", "Dan\u00edng Ch\u00e9ng").replace(
        "inherently dynamic:", "inherently dynamic \u2014 \u201cnaïve\u201d:")
    body = text.encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    result = parse_capture(body, url=None, captured_at=CAPTURED)
    assert result.encoding == "cp1252"
    assert result.rejects == [] and len(result.listings) == 5
    assert result.profile["name"] == "Daníng Chéng"
    assert result.source_profile_id == "name:daning-cheng"
    assert "dynamic \u2014 \u201cnaïve\u201d:" in result.listings[1]["abstract"]


def test_decode_body_variants():
    text = "Schrödinger — “quoted”"
    assert decode_body(text.encode("utf-8")) == (text, "utf-8")
    assert decode_body(b"\xef\xbb\xbf" + text.encode("utf-8")) == (text, "utf-8-sig")
    assert decode_body(text.encode("utf-16")) == (text, "utf-16-le")
    assert decode_body(text.encode("utf-16-be")) == (text, "utf-16-be")  # no BOM: NUL pattern
    assert decode_body(text.encode("cp1252")) == (text, "cp1252")
    assert decode_body(b"\x00\x01\x02\x03binary") == (None, None)
    # A declared charset is honoured when the bytes are not UTF-8.
    greek = "Ελληνικά κείμενα".encode("iso-8859-7")
    assert decode_body(greek, "text/html; charset=iso-8859-7") == ("Ελληνικά κείμενα", "iso8859-7")


def test_utf16_and_bom_captures_parse():
    for body in (sample_bytes(S002).decode().encode("utf-16"), b"\xef\xbb\xbf" + sample_bytes(S002),
                 sample_bytes(S002).replace(b"\n", b"\r\n")):
        result = parse_capture(body, url=None, captured_at=CAPTURED)
        assert result.rejects == [] and len(result.listings) == 15


def test_truncated_mid_abstract():
    body = sample_bytes(S000)
    cut = body.index(b"Based on the model's resilience") + 200  # inside item 4's abstract
    result = parse_capture(body[:cut], url=None, captured_at=CAPTURED)
    assert len(result.listings) == 3
    assert [l["position"] for l in result.listings] == [1, 2, 3]
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("truncated_item", 4)]
    assert result.profile["truncated"] is True and result.profile["listed_items"] == 3
    assert result.profile["declared_works"] == 6


@pytest.mark.parametrize("marker, offset, complete", [
    (b"MLFeb 18, 2020", 3, 14),                        # inside the meta row
    (b"MLFeb 18, 2020", 20, 14),                        # inside the title
    (b"Yikai Yan, Chaoyue Niu, Yucheng Ding", 12, 14),  # inside the byline
    (b"Federated learning is a new distributed", 60, 14),  # inside the abstract
])
def test_truncated_scholarfeed(marker, offset, complete):
    body = sample_bytes(S002)
    result = parse_capture(body[: body.index(marker) + offset], url=None, captured_at=CAPTURED)
    assert len(result.listings) == complete
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("truncated_item", 15)]
    assert result.profile["truncated"] is True


@pytest.mark.parametrize("row, offset", [
    ("ML2020-02-18", 4), ("ML2020-02-18", 7), ("ML2020-02-18", 11),  # the ISO date form, cut inside
    ("ML3 months ago", 3), ("ML3 months ago", 8), ("ML3 months ago", 13),
    ("MLa year ago", 3), ("MLa year ago", 9),
])
def test_truncated_inside_a_meta_row_of_another_date_form(row, offset):
    """A capture cut inside the next item's meta row is a truncated page whatever the row's date
    form: the cut row is not taken for the end of the previous abstract."""
    body = sample_bytes(S002).replace(b"MLFeb 18, 2020", row.encode())
    assert len(parse_capture(body, url=None, captured_at=CAPTURED).listings) == 15
    result = parse_capture(body[: body.index(row.encode()) + offset], url=None, captured_at=CAPTURED)
    assert len(result.listings) == 14
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("truncated_item", 15)]
    assert result.profile["truncated"] is True
    assert not result.listings[-1]["abstract"].endswith(row[:offset])


def test_cut_between_items_is_not_detectable_and_not_rejected():
    body = sample_bytes(S002)
    result = parse_capture(body[: body.index(b"MLFeb 18, 2020")], url=None, captured_at=CAPTURED)
    assert len(result.listings) == 14 and result.rejects == []
    assert result.profile["declared_items"] == 15 and result.profile["listed_items"] == 14


def test_item_without_title_mid_page():
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nCLMar 19, 2023\nSecond\nB Person\nAbstract two.")
    result = parse_text(page)
    assert [l["position"] for l in result.listings] == [2]
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("truncated_item", 1)]
    assert result.profile["truncated"] is False


def test_parse_error_is_caught(monkeypatch):
    from pipelines.staging.parsing import capture

    def boom(page):
        raise ValueError("synthetic failure")

    monkeypatch.setitem(capture._PARSERS, "bzpeer", boom)
    result = parse_sample(S000)
    assert reasons(result) == ["parse_error"]
    assert "synthetic failure" in result.rejects[0]["detail"]
    assert result.profile is None and result.listings == []


def test_reject_reasons_are_documented():
    import pipelines.staging.parsing as parsing

    for reason in REJECT_REASONS:
        assert f"``{reason}``" in parsing.__doc__


# --------------------------------------------------------------------------------------------
# What a page says that the tables cannot hold, or that the parser doubts or repairs:
# NULL (or kept) with an issue keeping the raw text — never a crash, never a silent change
# --------------------------------------------------------------------------------------------

def _variant(name: str, *edits: tuple[str, str]) -> bytes:
    text = sample_bytes(name).decode()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text.encode()


# (id, sample, edits, where: "profile" or a listing position, column, value stored, issue)
VALUE_CASES = [
    ("h-index of 10^30", S002, [("h-index39", "h-index" + "1" + "0" * 30)], "profile", "h_index", None,
     ("value_out_of_range", "h_index", "nulled", "1" + "0" * 30)),
    ("citations of 2^31", S002, [("108citations", "2147483648citations")], "profile", "citations", None,
     ("value_out_of_range", "citations", "nulled", "2147483648")),
    ("a count of 5000 digits", S002, [("108citations", "9" * 5000 + "citations")], "profile", "citations", None,
     ("unreadable_value", "citations", "nulled", "9" * 5000 + "citations")),
    ("negative citations", S002, [("108citations", "-5citations")], "profile", "citations", None,
     ("unreadable_value", "citations", "nulled", "-5citations")),
    ("a count with two dots", S002, [("15papers", "1.2.3papers")], "profile", "declared_papers", None,
     ("unreadable_value", "declared_papers", "nulled", "1.2.3papers")),
    ("BZPEER followers negative", S000, [("0followers", "-3followers")], "profile", "followers", None,
     ("unreadable_value", "followers", "nulled", "-3followers")),
    ("BZPEER trust score of 10^11", S000, [("Trust 21 - ", "Trust 99999999999 - ")], "profile", "trust_score", None,
     ("value_out_of_range", "trust_score", "nulled", "99999999999")),
    ("Novelty 500% (a gate)", S002, [("Novelty53%", "Novelty500%")], "profile", "novelty_pct", None,
     ("value_out_of_range", "novelty_pct", "nulled", "500.0")),
    ("AI Score 250 (a warning)", S002, [("AI Score57", "AI Score250")], "profile", "ai_score", 250.0,
     ("value_out_of_range", "ai_score", "kept", "250.0")),
    ("item score 168.9 (a warning)", S004, [("68.9AIMay 14", "168.9AIMay 14")], 1, "listing_score", 168.9,
     ("value_out_of_range", "listing_score", "kept", "168.9")),
    ("year 0999", S002, [("LGMar 18, 2023", "LGMar 18, 0999")], 1, "year", None,
     ("value_out_of_range", "year", "nulled", "Mar 18, 0999")),
    ("year 0000", S002, [("LGMar 18, 2023", "LGMar 18, 0000")], 1, "year", None,
     ("value_out_of_range", "year", "nulled", "Mar 18, 0000")),
    ("Feb 30, 2023", S002, [("LGMar 18, 2023", "LGFeb 30, 2023")], 1, "pub_date", date(2023, 2, 1),
     ("impossible_date", "pub_date", "repaired", "Feb 30, 2023")),
    ("Apr 31 without a year", S002, [("LGMar 18, 2023", "LGApr 31")], 1, "pub_date", date(2026, 4, 1),
     ("impossible_date", "pub_date", "repaired", "Apr 31")),
    ("dated after the capture", S002, [("LGMar 18, 2023", "LGMar 18, 2031")], 1, "year", 2031,
     ("date_after_capture", "pub_date", "kept", "Mar 18, 2031")),
    ("arXiv version 0", S002, [("fresh samples are continuously", "fresh samples (arXiv:2401.01234v0) are continuously")],
     1, "arxiv_version", None, ("value_out_of_range", "arxiv_version", "nulled", "0")),
]


@pytest.mark.parametrize("sample, edits, where, column, stored, issue", [c[1:] for c in VALUE_CASES],
                         ids=[c[0] for c in VALUE_CASES])
def test_values_outside_their_domain_land_with_an_issue(sample, edits, where, column, stored, issue):
    result = parse_capture(_variant(sample, *edits), url=None, captured_at=CAPTURED)
    assert result.profile is not None and result.rejects == []
    row = result.profile if where == "profile" else next(l for l in result.listings if l["position"] == where)
    assert row[column] == stored
    position = None if where == "profile" else where
    assert [(i["reason"], i["field"], i["action"], i["raw_value"], i["position"]) for i in result.issues] == [
        (*issue[:3], issue[3] if len(issue[3]) <= 200 else issue[3][:199] + "…", position)]


def test_a_year_out_of_range_drops_the_whole_date_but_keeps_what_the_page_said():
    result = parse_capture(_variant(S002, ("LGMar 18, 2023", "LGMar 18, 0999")), url=None, captured_at=CAPTURED)
    first = result.listings[0]
    assert (first["year"], first["pub_date"], first["date_precision"], first["date_raw"]) == (None, None, None, "Mar 18, 0999")


def test_a_byline_of_500_names_is_a_byline_not_an_abstract():
    names = ", ".join(f"Aname{chr(65 + i % 26)}{chr(97 + i // 26 % 26)} Bname{chr(65 + i // 26 % 26)}" for i in range(500))
    result = parse_capture(_variant(S002, ("Yucheng Ding, Chaoyue Niu, Fan Wu et al.\n\nMany", names + "\n\nMany")),
                           url=None, captured_at=CAPTURED)
    first = result.listings[0]
    assert len(first["byline_authors"]) == 500 and first["byline_truncated"] is False
    assert first["abstract"].startswith("Many large vision models")


def test_an_item_repeated_on_the_page_is_kept_once_and_each_repeat_rejected():
    text = sample_bytes(S002).decode()
    start, end = text.index("IROct 21, 2022"), text.index("DCDec 15, 2025Code")
    block = text[start:end].strip() + "\n\n"
    result = parse_capture((text[:start] + block * 400 + text[end:]).encode(), url=None, captured_at=CAPTURED)
    assert len(result.listings) == 15 and result.profile["listed_items"] == 15
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("duplicate_item", p) for p in range(3, 402)]
    assert "repeats item 2 (same title and year)" in result.rejects[0]["detail"]
    assert [l["position"] for l in result.listings][:3] == [1, 2, 402]


@pytest.mark.parametrize("body, encoding, issue", [
    (sample_bytes(S000).decode().replace("Daning Cheng", "Dan\u00edng Ch\u00e9ng").encode("cp1252"), "cp1252",
     ("encoding_guessed", "kept")),
    (sample_bytes(S002).replace(b"Yucheng Ding\n", "Yüchéng Dìng\n".encode(), 1).replace(b"Many large", b"Many \xff large"),
     "utf-8-lossy",
     ("invalid_bytes", "repaired")),
    (sample_bytes(S002) + b"\x00" * 4096, "utf-8", ("nul_padding", "repaired")),
], ids=["cp1252 guessed", "invalid UTF-8 byte replaced", "NUL padding dropped"])
def test_a_guessed_or_repaired_decoding_is_an_issue(body, encoding, issue):
    result = parse_capture(body, url=None, captured_at=CAPTURED)
    assert result.profile is not None and result.encoding == encoding
    assert [(i["reason"], i["action"], i["field"]) for i in result.issues] == [(*issue, "body")]


def test_nul_bytes_inside_a_page_are_not_text_and_say_where():
    body = sample_bytes(S002)
    result = parse_capture(body[:3000] + b"\x00" + body[3000:], url=None, captured_at=CAPTURED)
    assert reasons(result) == ["not_text"] and "a NUL byte at offset 3,000" in result.rejects[0]["detail"]


def test_a_declared_type_the_content_contradicts_is_overruled():
    html = (HTML_FIXTURES / "scholarfeed_002_yucheng_ding.html").read_bytes()
    as_text = parse_capture(html, url=None, captured_at=CAPTURED, content_type="text/plain")
    assert as_text.content_type == "text/html" and len(as_text.listings) == 15
    as_html = parse_capture(sample_bytes(S002), url=None, captured_at=CAPTURED, content_type="text/html")
    assert as_html.content_type == "text/plain" and len(as_html.listings) == 15


def test_issue_reasons_are_documented():
    import pipelines.staging.parsing.result as result

    for reason in result.ISSUE_REASONS + result.SOURCE_ISSUE_REASONS:
        assert f"``{reason}``" in result.__doc__


# --------------------------------------------------------------------------------------------
# HTML captures
# --------------------------------------------------------------------------------------------

HTML_PAIRS = [
    ("bzpeer_000_daning_cheng.html", S000, "https://www.bzpeer.com/authors/daning-cheng", "daning-cheng"),
    ("scholarfeed_002_yucheng_ding.html", S002, "https://www.scholarfeed.org/author/48213907", "48213907"),
]


@pytest.mark.parametrize("fixture, sample, canonical, profile_id", HTML_PAIRS)
def test_html_fixture_renders_to_the_sample_text(fixture, sample, canonical, profile_id):
    html = (HTML_FIXTURES / fixture).read_text(encoding="utf-8")
    from pipelines.staging.parsing.layout import text_lines

    assert html_to_text(html).split("\n") == text_lines(sample_bytes(sample).decode("utf-8"))


@pytest.mark.parametrize("fixture, sample, canonical, profile_id", HTML_PAIRS)
def test_html_and_text_captures_give_the_same_rows(fixture, sample, canonical, profile_id):
    html_result = parse_capture((HTML_FIXTURES / fixture).read_bytes(), url=None, captured_at=CAPTURED)
    text_result = parse_sample(sample)
    assert html_result.content_type == "text/html"
    assert html_result.rejects == []
    assert html_result.page_url == canonical             # the canonical URL stands in for the missing url
    assert html_result.source_profile_id == profile_id
    assert html_result.source == text_result.source
    assert html_result.profile == text_result.profile
    assert len(html_result.listings) == len(text_result.listings)
    html_only = {"paper_url", "arxiv_id", "arxiv_version"}
    for h, t in zip(html_result.listings, text_result.listings):
        assert {k: v for k, v in h.items() if k not in html_only} == {k: v for k, v in t.items() if k not in html_only}
        assert h["paper_url"].startswith(canonical.split("/author")[0])
        assert h["arxiv_id"] is not None


def test_html_paper_links_attach_to_their_items():
    result = parse_capture((HTML_FIXTURES / "scholarfeed_002_yucheng_ding.html").read_bytes(), url=None,
                           captured_at=CAPTURED)
    first, last = result.listings[0], result.listings[-1]
    assert first["paper_url"] == "https://www.scholarfeed.org/paper/2303.04217v1"
    assert (first["arxiv_id"], first["arxiv_version"]) == ("2303.04217", 1)
    assert (last["arxiv_id"], last["arxiv_version"]) == ("2002.07399", 3)
    bz = parse_capture((HTML_FIXTURES / "bzpeer_000_daning_cheng.html").read_bytes(), url=None, captured_at=CAPTURED)
    assert bz.listings[1]["paper_url"] == (
        "https://www.bzpeer.com/works/dynatrain-fast-online-parallelism-switching-for-elastic-llm-2604.02156")
    assert bz.listings[1]["arxiv_id"] == "2604.02156"


def test_html_given_url_wins_over_canonical():
    result = parse_capture((HTML_FIXTURES / "bzpeer_000_daning_cheng.html").read_bytes(),
                           url="https://www.bzpeer.com/authors/daning-cheng-2", captured_at=CAPTURED)
    assert result.source_profile_id == "daning-cheng-2"


def test_html_to_text_rules():
    html = """<html><head><title>T</title><style>.a{color:red}</style><script>var x = "<p>no</p>";</script></head>
    <body><header><nav><a href="/">Home</a></nav><a href="/login">Log in</a></header>
    <main><header class="profile"><h1>Jane &amp; Co</h1></header>
    <div><span>LG</span><time>Mar 18, 2023</time><span>Code</span></div>
    <p>one<br>two</p><p aria-hidden="true">hidden</p><noscript>noscript text</noscript>
    <template><p>template</p></template><svg><text>svg text</text></svg>
    <div hidden>hidden attr</div><div style="display: none">display none</div>
    <ul><li>a <b>bold</b>  word</li><li>b&nbsp;c</li></ul>
    <table><tr><td>x</td><td>y</td></tr></table></main>
    <footer>© 2026 Site</footer></body></html>"""
    assert html_to_text(html).split("\n") == [
        "Jane & Co", "LGMar 18, 2023Code", "one", "two", "a bold word", "b c", "x y",
    ]


def test_html_links_recorded_against_lines():
    doc = html_to_document(
        '<div><a href="/paper/2101.00001v2"><h3>Title one</h3></a><p>Body <a href="https://x.org">x</a></p>'
        '<a href="/icon-only"><svg></svg></a></div><link rel="canonical" href="https://www.scholarfeed.org/author/5">'
    )
    assert doc.lines == ["Title one", "Body x"]
    assert doc.links == [(0, "/paper/2101.00001v2"), (1, "https://x.org"), (1, "/icon-only")]
    assert doc.canonical_url == "https://www.scholarfeed.org/author/5"
    assert doc.closed is False


def test_truncated_html_capture():
    body = (HTML_FIXTURES / "scholarfeed_002_yucheng_ding.html").read_bytes()
    cut = body.index(b"We consider practical data characteristics") + 100
    result = parse_capture(body[:cut], url=None, captured_at=CAPTURED)
    assert len(result.listings) == 13
    assert [(r["reason"], r["position"]) for r in result.rejects] == [("truncated_item", 14)]
    assert result.profile["truncated"] is True


def test_closed_html_without_abstract_on_last_item_is_complete():
    html = ("<html><body><h1>Ann Example</h1><div>LG</div><div>h-index3</div><h2>2 Papers</h2>"
            "<article><div>LGMar 18, 2023</div><h3>One</h3><p>A Person</p><p>Abstract one.</p></article>"
            "<article><div>CLMar 19, 2023</div><h3>Two</h3><p>B Person</p></article></body></html>")
    result = parse_text(html)
    assert result.rejects == [] and len(result.listings) == 2
    assert result.listings[1]["abstract"] is None


def test_content_type_sniffing_and_declared():
    html = (HTML_FIXTURES / "bzpeer_000_daning_cheng.html").read_bytes()
    assert parse_capture(html, url=None, captured_at=CAPTURED).content_type == "text/html"
    assert parse_capture(html, url=None, captured_at=CAPTURED, content_type="text/html; charset=utf-8").content_type == "text/html"
    assert parse_sample(S000, content_type="text/plain").content_type == "text/plain"


# --------------------------------------------------------------------------------------------
# Small synthetic pages used above
# --------------------------------------------------------------------------------------------

SF_MINIMAL = "Ann Example\nLG\nh-index3\n3papers\n28citations\nNovelty40%\nAI Score45\n3 Papers\n\n{rows}"

BZ_HEADER = """Researcher profile

Jane Public

Jane Public contributes to research discovery and scholarly infrastructure.

ResearcherAffiliation not importedOpen to collaborate

Trust snapshot

Trust 21 - EmergingVerification L1Unclaimed author
{works}works
{followers}followers
4topics
4close collaborators

Actions

Follow researcher0

Published work
"""


@pytest.mark.parametrize("fixture, sample, canonical, profile_id", HTML_PAIRS)
@pytest.mark.parametrize("variant", ["no </head>", "no <head> tags", "no </head> and no <body>"])
def test_html_without_the_optional_head_end_tag_gives_the_same_rows(fixture, sample, canonical, profile_id, variant):
    """``</head>`` (and ``<head>`` itself) are optional in HTML and dropped by minifiers: the body
    still starts at ``<body>``, as in a browser (the whole page had been hidden as head)."""
    html = (HTML_FIXTURES / fixture).read_text(encoding="utf-8")
    if variant == "no </head>":
        html = html.replace("</head>", "")
    elif variant == "no <head> tags":
        html = html.replace("<head>", "").replace("</head>", "")
    else:  # the body's content right after the head: no </head>, no <body>
        html = re.sub(r"<body[^>]*>", "", html.replace("</head>", ""), count=1)
        assert "<body" not in html
    result = parse_capture(html.encode("utf-8"), url=None, captured_at=CAPTURED)
    expected = parse_capture((HTML_FIXTURES / fixture).read_bytes(), url=None, captured_at=CAPTURED)
    assert result.rejects == [] and result.profile == expected.profile and result.listings == expected.listings


def test_head_left_open_ends_at_the_first_body_tag_or_text():
    assert html_to_text("<html><head><title>T</title><meta charset=utf-8><div>Hello</div></html>") == "Hello"
    assert html_to_text("<head><title>T</title><style>p{}</style>Plain words<p>More</p>") == "Plain words\nMore"
    assert html_to_text("<head><title>T</title></head><body><p>Body</p></body>") == "Body"


def test_titles_in_other_scripts_are_distinct_items_not_duplicates():
    """Two Chinese (or Greek, Cyrillic) titles in one year: the dedupe key kept only [0-9a-z], so both
    keyed to '' and the second was rejected as a repeat of the first (and their listing keys met)."""
    from pipelines.staging.rows import listing_key

    titles = ["基于深度学习的图像分割", "大规模并行训练系统", "Θεωρία μάθησης", "Обучение нейронных сетей", "∑∞?"]
    head = "Jane Roe\n\nLG\nh-index3\n5papers\n12citations\n\n5 Papers\n\n"
    items = "".join(f"LGMar {i + 1}, 2024\n{title}\n\nJane Roe, Li Wei\n\nAn abstract of this paper number {i}.\n\n"
                    for i, title in enumerate(titles))
    result = parse_text(head + items, url="https://www.scholarfeed.org/author/123")
    assert reasons(result) == []
    assert [item["title"] for item in result.listings] == titles
    keys = {listing_key("scholarfeed", "123", item["title"], item["year"]) for item in result.listings}
    assert len(keys) == len(titles)
    # A repeat is still a repeat, in any script.
    repeated = parse_text(head.replace("5", "6") + items + f"LGMar 9, 2024\n{titles[0]}\n\nJane Roe\n\nAgain.\n\n",
                          url="https://www.scholarfeed.org/author/123")
    assert reasons(repeated) == ["duplicate_item"] and len(repeated.listings) == len(titles)
    # Titles that differ only outside ASCII but share Latin words keep their (stored) match key:
    # the second is a visible duplicate_item, never hidden under the first's key.
    greek = parse_text(head.replace("5", "2") + "LGMar 1, 2024\nΩ-theory of learning\n\nJane Roe\n\nOne.\n\n"
                       "LGMar 2, 2024\nΦ-theory of learning\n\nJane Roe\n\nTwo.\n\n", url="https://www.scholarfeed.org/author/123")
    assert reasons(greek) == ["duplicate_item"] and len(greek.listings) == 1


def test_a_charset_python_knows_but_cannot_decode_with_is_ignored():
    """``codecs.lookup('undefined')`` succeeds, yet decoding with it raises UnicodeError (not
    UnicodeDecodeError): it had failed the whole landing of the night."""
    from pipelines.staging.parsing import decode_report

    for charset in ("undefined", "rot13", "base64", "zlib"):
        body = f'<html><head><meta charset="{charset}"></head><body>Caf\xe9</body></html>'.encode("latin-1")
        text, encoding, notes = decode_report(body, None)
        assert "Café" in text and encoding == "cp1252", charset
        text, encoding, _ = decode_report(b"Caf\xe9 au lait", f"text/html; charset={charset}")
        assert text == "Café au lait", charset


def test_more_date_forms_on_scholar_feed_rows():
    """``LGToday``, ``LG2 months ago``, ``LGa year ago``, ``LG2025-12-15``: rows the site's other
    renderings use. Unread, such a row and its title, byline and abstract had been glued onto the
    previous item's abstract: a paper lost with no reject. "N months/years ago" keep no date (a
    year read from them would drift from night to night, and the year is in the listing key)."""
    rows = ["LGMar 18, 2023", "LGToday", "CVYesterday", "LG2 months ago", "ROa year ago", "AI2025-12-15",
            "CL2025-02-30", "LGan hour ago"]
    page = SF_MINIMAL.format(rows="\n\n".join(f"{row}\nTitle number {i}\nA Person\nAbstract {i}." for i, row in enumerate(rows)))
    listings = parse_text(page).listings  # captured 2026-11-21
    assert [l["title"] for l in listings] == [f"Title number {i}" for i in range(len(rows))]
    assert [l["abstract"] for l in listings] == [f"Abstract {i}." for i in range(len(rows))]
    got = [(l["pub_date"], l["year"], l["date_precision"]) for l in listings]
    assert [l["date_raw"] for l in listings][3:5] == ["2 months ago", "a year ago"]
    assert got == [
        (date(2023, 3, 18), 2023, "day"), (date(2026, 11, 21), 2026, "day"), (date(2026, 11, 20), 2026, "day"),
        (None, None, None), (None, None, None), (date(2025, 12, 15), 2025, "day"),
        (date(2025, 2, 1), 2025, "month"), (date(2026, 11, 21), 2026, "day"),
    ]


def test_a_title_that_reads_like_a_capitalised_relative_date_stays_a_title():
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nAI Today\nA Person\nAbstract one.\n\nCVToday\nAnother title\nA Person\nAbstract two.")
    listings = parse_text(page).listings
    assert [l["title"] for l in listings] == ["AI Today", "Another title"]
    assert listings[1]["pub_date"] == date(2026, 11, 21)


@pytest.mark.parametrize("row, pub_date", [
    ("DCDec 10 2024Code", date(2024, 12, 10)),     # no comma before the year
    ("DCDecember 10th, 2024Code", date(2024, 12, 10)),
    ("DC2024/12/10Code", None),                    # forms we do not read: the item lands without a date
    ("DC10.12.2024Code", None),
    ("DCCode", None),                              # no date at all
])
def test_an_item_row_in_another_form_is_an_item_not_abstract_text(row, pub_date):
    """Was: a row the pattern did not know was read as the end of the previous abstract — that item's
    abstract took the next item's title, byline and abstract, and the next item vanished without a trace."""
    page = sample_bytes(S004).decode()
    result = parse_text(page.replace("DCDec 10, 2024Code", row, 1), url="https://www.scholarfeed.org/author/1000003")
    titles = [l["title"][:5] for l in result.listings]
    assert titles == ["BEAM:", "EDiT:", "Machi"] and result.rejects == []
    assert "EDiT" not in result.listings[0]["abstract"]
    edit = result.listings[1]
    assert (edit["pub_date"], edit["category"], edit["has_code"]) == (pub_date, "cs.DC", True)
    assert edit["byline_authors"][:2] == ["Jialiang Cheng", "Ning Gao"]
    unreadable = [i for i in result.issues if i["reason"] == "unreadable_value"]
    if pub_date is None:
        assert [(i["field"], i["raw_value"], i["position"]) for i in unreadable] == [("pub_date", row, 2)]
    else:
        assert unreadable == []


def test_the_first_item_row_in_another_form_keeps_its_item():
    page = sample_bytes(S004).decode()
    for row, expected in (("68.9AIMay 14th", date(2026, 5, 14)), ("68.9AI2026/05/14", None)):
        result = parse_text(page.replace("68.9AIMay 14", row, 1), url="https://www.scholarfeed.org/author/1000003")
        assert [l["title"][:5] for l in result.listings] == ["BEAM:", "EDiT:", "Machi"], row
        assert result.listings[0]["pub_date"] == expected and result.profile["name"] == "Jialiang Cheng"


def test_text_that_starts_like_an_item_row_stays_text():
    """A short line opening with two capitals and a number is a row only where a title and a byline follow."""
    page = sample_bytes(S004).decode()
    abstract_start = page.index("\n", page.index("Jialiang Cheng, Ning Gao, Yun Yue et al.")) + 1
    edited = page[:abstract_start] + "AI 2024 results\nare promising.\n" + page[abstract_start:]
    result = parse_text(edited, url="https://www.scholarfeed.org/author/1000003")
    assert [l["title"][:5] for l in result.listings] == ["BEAM:", "EDiT:", "Machi"] and result.issues == []
    assert result.listings[1]["abstract"].startswith("AI 2024 results\nare promising.")


def test_a_page_of_the_other_site_than_its_url_says_so():
    """A Scholar Feed page under a BZPEER URL (a sidecar copied from the wrong file): the URL decides
    the site, and the reject says the two disagree (was: "no bzpeer profile name/header found")."""
    result = parse_text(sample_bytes(S004).decode(), url="https://www.bzpeer.com/authors/someone")
    assert result.profile is None and [r["reason"] for r in result.rejects][:1] == ["no_profile"]
    assert result.rejects[0]["detail"].startswith(
        "the page reads as a scholarfeed page but its URL 'https://www.bzpeer.com/authors/someone' is bzpeer's")


# --------------------------------------------------------------------------------------------
# Names: bylines with suffixes, marks and counted cuts; profile names beside taglines
# --------------------------------------------------------------------------------------------

S004_BYLINE = "Jialiang Cheng, Ning Gao, Yun Yue et al."  # item 2 of sample 004
SF_URL = "https://www.scholarfeed.org/author/1000003"
BZ_URL = "https://www.bzpeer.com/authors/daning-cheng"


def _s004_with_byline(byline: str) -> ParseResult:
    return parse_capture(_variant(S004, (S004_BYLINE, byline)), url=SF_URL, captured_at=CAPTURED)


BYLINE_FORMS = [
    # (id, byline as printed, names read, byline_truncated)
    ("suffix Jr.", "Jialiang Cheng, Ning Gao, John Smith Jr.", ["Jialiang Cheng", "Ning Gao", "John Smith Jr."], False),
    ("suffix after its own comma", "John Smith, Jr., Ning Gao, Yun Yue III", ["John Smith Jr.", "Ning Gao", "Yun Yue III"], False),
    ("affiliation marks", "Jialiang Cheng†, Ning Gao*, Yun Yue‡ et al.", ["Jialiang Cheng", "Ning Gao", "Yun Yue"], True),
    ("footnote numbers", "Jialiang Cheng1,2, Ning Gao², Yun Yue3", ["Jialiang Cheng", "Ning Gao", "Yun Yue"], False),
    ("and N others", "Jialiang Cheng, Ning Gao and 5 others", ["Jialiang Cheng", "Ning Gao"], True),
    ("N more", "Jialiang Cheng, Ning Gao, Yun Yue, 4 more", ["Jialiang Cheng", "Ning Gao", "Yun Yue"], True),
    ("+N more authors", "Jialiang Cheng, Ning Gao +12 more authors", ["Jialiang Cheng", "Ning Gao"], True),
    ("particle first", "de Souza M., van der Berg J., Ning Gao", ["de Souza M.", "van der Berg J.", "Ning Gao"], False),
    ("glued particles", "Jean le Rond d'Alembert, Omar al-Farabi", ["Jean le Rond d'Alembert", "Omar al-Farabi"], False),
    ("conjunctions inside names", "Josep Puig i Cadafalch, Maria Silva e Costa", ["Josep Puig i Cadafalch", "Maria Silva e Costa"], False),
    ("serial comma", "Jialiang Cheng, Ning Gao, and Yun Yue", ["Jialiang Cheng", "Ning Gao", "Yun Yue"], False),
    ("middle dots", "Jialiang Cheng · Ning Gao · Yun Yue", ["Jialiang Cheng", "Ning Gao", "Yun Yue"], False),
]


@pytest.mark.parametrize("byline, names, truncated", [c[1:] for c in BYLINE_FORMS], ids=[c[0] for c in BYLINE_FORMS])
def test_common_byline_forms_are_read_as_bylines(byline, names, truncated):
    """One name the reader could not read ("Smith Jr.", "Cheng†", "and 5 others") made the whole
    line abstract text: the item's authors were lost without a trace."""
    assert parse_byline(byline) == (names, truncated)
    result = _s004_with_byline(byline)
    item = result.listings[1]
    assert (item["byline_authors"], item["byline_truncated"]) == (names, truncated)
    assert item["abstract"].startswith("Distributed training methods")
    assert result.issues == [] and result.rejects == []


def test_forms_that_already_read_stay_read():
    assert parse_byline("Smith J., Doe K.") == (["Smith J.", "Doe K."], False)
    assert parse_byline("Rowling J.K., Jean-Pierre O'Neil") == (["Rowling J.K.", "Jean-Pierre O'Neil"], False)


@pytest.mark.parametrize("line", [
    "We compare Adam, SGD and Local SGD.",
    "Deep Learning, Reinforcement Learning, and Computer Vision are important.",
    "C4, T5 and GPT4",                      # digits glued to capitals are model names, not footnotes
    "In 2024, we trained 5 more models.",
    "Results on ImageNet (top-1), CIFAR-10 and more",
    "Withdrawn.",
])
def test_abstract_lines_are_neither_bylines_nor_unread_bylines(line):
    from pipelines.staging.parsing.fields import looks_like_byline

    assert parse_byline(line) is None and not looks_like_byline(line)
    result = _s004_with_byline(line)
    assert result.listings[1]["byline_authors"] == [] and result.listings[1]["abstract"].startswith(line)
    assert result.issues == []


@pytest.mark.parametrize("byline", [
    "Jialiang Cheng (Alibaba Group), Ning Gao, Yun Yue et al.",
    "Jialiang Cheng <jialiang@example.org>, Ning Gao",
    "Jialiang Cheng [1], Ning Gao [2], Yun Yue [1]",
    "Jialiang Cheng, Ning Gao, ..., Yun Yue",
])
def test_a_names_line_that_is_not_a_readable_byline_is_an_issue_not_silent_abstract(byline):
    """Kept as the abstract's start (the line is only probably a byline and the issue keeps 200
    characters of it), with an ``unreadable_byline`` issue on the item."""
    result = _s004_with_byline(byline)
    item = result.listings[1]
    assert item["byline_authors"] == [] and item["abstract"].startswith(byline)
    assert [(i["reason"], i["field"], i["action"], i["raw_value"], i["position"]) for i in result.issues] == [
        ("unreadable_byline", "byline_authors", "kept", byline, 2)]
    assert result.rejects == [] and [l["byline_authors"] != [] for l in result.listings] == [True, False, True]


def test_an_unread_names_line_is_not_doubted_where_no_item_has_a_byline():
    page = SF_MINIMAL.format(rows="LGMar 18, 2023\nFirst title\nJialiang Cheng (Alibaba), Ning Gao\n\n"
                                  "CLMar 19, 2023\nSecond title\nAn abstract, which is a sentence.")
    result = parse_text(page)
    assert [l["byline_authors"] for l in result.listings] == [[], []] and result.issues == []


PROFILE_NAMES = ["Robert Smith Jr.", "Robert Smith III", "Smith R.", "Jane Doe, Ph.D."]


@pytest.mark.parametrize("name", PROFILE_NAMES)
@pytest.mark.parametrize("sample, old, url", [(S004, "Jialiang Cheng\n", SF_URL), (S000, "Daning Cheng\n", BZ_URL)],
                         ids=["scholarfeed", "bzpeer"])
def test_a_profile_name_with_a_suffix_or_a_final_initial_is_a_name(sample, old, url, name):
    """A name ending in a period ("Jr.", "R.") was "a sentence": the whole profile was lost (no_profile)."""
    result = parse_capture(_variant(sample, (old, name + "\n")), url=url, captured_at=CAPTURED)
    assert result.rejects == [] and result.profile["name"] == name


TAGLINE = "Efficient distributed training for LLMs"


@pytest.mark.parametrize("header, name", [
    (f"Jialiang Cheng\n\n{TAGLINE}\n\nAI\n", "Jialiang Cheng"),
    ("Jialiang Cheng\n\nMachine Learning Researcher\n\nAI\n", "Jialiang Cheng"),
    (f"Jialiang Cheng\n\n{TAGLINE}\n\nAlibaba Group Research\n\nAI\n", "Jialiang Cheng"),
    ("jialiang cheng\n\nAI\n", "jialiang cheng"),                 # a name written in lower case is still one
    ("Ana María de la Cruz y Gasset\n\nAI\n", "Ana María de la Cruz y Gasset"),
    ("Josep Puig i Cadafalch\n\nAI\n", "Josep Puig i Cadafalch"),
], ids=["tagline", "role headline", "tagline and affiliation", "lower-case name", "particles", "Catalan conjunction"])
def test_a_tagline_between_the_name_and_the_metrics_is_not_the_name(header, name):
    result = parse_capture(_variant(S004, ("Jialiang Cheng\n\nAI\n", header)), url=SF_URL, captured_at=CAPTURED)
    assert result.rejects == [] and result.profile["name"] == name


def test_a_tagline_alone_is_the_name_rather_than_the_page_lost():
    """With no name-like line above it, the closest name-shaped line is the name, as before the
    tagline rule: a page is never lost (a no_profile reject drops its items) for how its name reads."""
    result = parse_capture(_variant(S004, ("Jialiang Cheng\n", TAGLINE + "\n")), url=SF_URL, captured_at=CAPTURED)
    assert result.profile["name"] == TAGLINE and reasons(result) == [] and len(result.listings) == 3


@pytest.mark.parametrize("name", ["juan carlos niebles", "jan van gemert", "Jane Doe – PhD in Physics",
                                  "Ding Yucheng | AI for Science", "daning c. cheng"])
def test_a_name_written_like_a_sentence_still_names_its_profile(name):
    """Was (with the tagline rule, before it fell back): no_profile, and every item of the page dropped."""
    sf = parse_capture(_variant(S004, ("Jialiang Cheng\n", name + "\n")), url=SF_URL, captured_at=CAPTURED)
    assert sf.profile["name"] == name and reasons(sf) == [] and len(sf.listings) == 3
    bz = parse_capture(_variant(S000, ("\nDaning Cheng\n", f"\n{name}\n")), url=None, captured_at=CAPTURED)
    assert bz.profile is not None and bz.profile["name"] == name and len(bz.listings) == 5


BZ_BIO = "Daning Cheng contributes to research discovery and scholarly infrastructure."


@pytest.mark.parametrize("edits, bio", [
    # No label, and a bio without a final period: the bio was taken for the name.
    ((("Researcher profile\n", ""), (BZ_BIO, "Working on efficient distributed training for LLMs")),
     "Working on efficient distributed training for LLMs"),
    # A tagline between the label and the name: the tagline was taken for the name.
    ((("Researcher profile\n\nDaning Cheng\n", f"Researcher profile\n\n{TAGLINE}\n\nDaning Cheng\n"),), BZ_BIO),
], ids=["no label, bio without a period", "tagline after the label"])
def test_a_bzpeer_bio_or_tagline_is_not_the_name(edits, bio):
    result = parse_capture(_variant(S000, *edits), url=BZ_URL, captured_at=CAPTURED)
    assert result.rejects == [] and (result.profile["name"], result.profile["bio"]) == ("Daning Cheng", bio)


@pytest.mark.parametrize("line", ["Transformers, Attention, and Memory",
                                  "Toward Efficient Inference, Training, and Serving"])
def test_a_title_case_list_with_a_serial_and_is_not_a_byline(line):
    from pipelines.staging.parsing.fields import parse_byline

    assert parse_byline(line) is None
    assert parse_byline("Jialiang Cheng, Ning Gao, and Yun Yue") == (["Jialiang Cheng", "Ning Gao", "Yun Yue"], False)


@pytest.mark.parametrize("url, text, reason", [
    (SF_URL, "Scholar Feed\n\nThis author could not be found\n\n0 Papers\n\nBack to home\n", "error_page"),
    (SF_URL, "Page not found\nh-index0\n0papers\n0citations\n", "error_page"),
    (SF_URL, "Please verify you are a human\n\nAI\nh-index3\n3papers\n", "bot_challenge"),
    (SF_URL, "Something went wrong on our end\n\nAI\nh-index3\n", "error_page"),
    (BZ_URL, "Checking your browser before accessing\n\n0works\n0followers\n", "bot_challenge"),
    (BZ_URL, "Researcher profile\n\nThis profile is not available\n\n0works\n0followers\n", "no_profile"),
])
def test_an_error_page_or_bot_wall_is_never_a_profile_named_by_its_message(url, text, reason):
    """The name fallback (a line that reads as a sentence) never names a profile on a page that reads
    as an error page or a bot wall, or that lists nothing (was, briefly: "Page not found" became a
    profile's name and the page's reject was gone)."""
    result = parse_capture(text.encode(), url=url, captured_at=CAPTURED)
    assert result.profile is None and reasons(result)[:1] == [reason]


@pytest.mark.parametrize("line, names", [
    ("Mausam, Daniel S. Weld, and Oren Etzioni", ["Mausam", "Daniel S. Weld", "Oren Etzioni"]),  # one-word names are real
    ("J.Smith, K.Lee, and M.Wong", ["J.Smith", "K.Lee", "M.Wong"]),
])
def test_a_serial_and_byline_with_short_names_is_still_a_byline(line, names):
    from pipelines.staging.parsing.fields import parse_byline

    assert parse_byline(line) == (names, False)

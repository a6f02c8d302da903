"""Paper matching: the five sample pages' traps, title edits vs near-twins, determinism, options.

The listing frames below are typed by hand from pipelines/samples/*.txt (titles, years, bylines
as shown; BZPEER lists carry no byline). ``test_resolution_authors`` reuses them.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

from pipelines.core.resolution import match_papers, paper_review_pairs, resolve_papers
from pipelines.core.resolution.names import name_compatibility, split_author_list
from pipelines.core.resolution.titles import compare_titles, spelling_variant, title_tokens

TEST_RISK = "A Qualitative Test-Risk Mechanism for Scaling Behavior in Normalized Residual Networks"
DYNATRAIN = "DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training"
MOE_DISCO = "MoE-DisCo:Low Economy Cost Training Mixture-of-Experts Models"
CALM = "CALM: A CKA-Guided Adaptive Layer-Wise Modularization Framework for LLM Quantization"
SCALABILITY = "The Scalability for Parallel Machine Learning Training Algorithm: Dataset Matters"
HONPAS_DYNAMIC = "The dynamic parallel distribution algorithm for hybrid density-functional calculations in HONPAS package"
HONPAS_STATIC = "The static parallel distribution algorithms for hybrid density-functional calculations in HONPAS package"

# (listing id, source, profile id, profile owner, title, year, byline)
SAMPLE_LISTINGS: list[tuple[str, str, str, str, str, int, list[str]]] = [
    # 000 BZPEER, Daning Cheng
    ("bz-dc-1", "bzpeer", "daning-cheng", "Daning Cheng", TEST_RISK, 2026, []),
    ("bz-dc-2", "bzpeer", "daning-cheng", "Daning Cheng", DYNATRAIN, 2026, []),
    ("bz-dc-3", "bzpeer", "daning-cheng", "Daning Cheng", MOE_DISCO, 2026, []),
    ("bz-dc-4", "bzpeer", "daning-cheng", "Daning Cheng", "Mixed-Precision Inference Quantization: Radically Towards Faster inference speed, Lower Storage requirement, and Lower Loss", 2022, []),
    ("bz-dc-5", "bzpeer", "daning-cheng", "Daning Cheng", SCALABILITY, 2020, []),
    # 001 BZPEER, Yunquan Zhang
    ("bz-yz-1", "bzpeer", "yunquan-zhang", "Yunquan Zhang", TEST_RISK, 2026, []),
    ("bz-yz-2", "bzpeer", "yunquan-zhang", "Yunquan Zhang", CALM, 2026, []),
    ("bz-yz-3", "bzpeer", "yunquan-zhang", "Yunquan Zhang", DYNATRAIN, 2026, []),
    ("bz-yz-4", "bzpeer", "yunquan-zhang", "Yunquan Zhang", MOE_DISCO, 2026, []),
    ("bz-yz-5", "bzpeer", "yunquan-zhang", "Yunquan Zhang", "IAAT: A Input-Aware Adaptive Tuning framework for Small GEMM", 2022, []),
    ("bz-yz-6", "bzpeer", "yunquan-zhang", "Yunquan Zhang", "Large-Scale Simulation of Quantum Computational Chemistry on a New Sunway Supercomputer", 2022, []),
    ("bz-yz-7", "bzpeer", "yunquan-zhang", "Yunquan Zhang", HONPAS_DYNAMIC, 2020, []),
    ("bz-yz-8", "bzpeer", "yunquan-zhang", "Yunquan Zhang", SCALABILITY, 2020, []),
    ("bz-yz-9", "bzpeer", "yunquan-zhang", "Yunquan Zhang", HONPAS_STATIC, 2020, []),
    # 003 Scholar Feed, Yunquan Zhang (bylines: three names, "et al." dropped)
    ("sf-yz-01", "scholarfeed", "3", "Yunquan Zhang", "Compression for Better: A General and Stable Lossless Compression Framework", 2024, ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]),
    ("sf-yz-02", "scholarfeed", "3", "Yunquan Zhang", "Lossless Model Compression via Joint Low-Rank Factorization Optimization", 2024, ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]),
    ("sf-yz-03", "scholarfeed", "3", "Yunquan Zhang", "cuNNQS-SCI: A Fully GPU-Accelerated Framework for High-Performance Configuration Interaction Selection with Neural Network Quantum States", 2026, ["Daran Sun", "Bowen Kan", "Haoquan Long"]),
    ("sf-yz-04", "scholarfeed", "3", "Yunquan Zhang", DYNATRAIN, 2026, ["Yuanqing Wang", "Yuchen Zhang", "Hao Lin"]),
    ("sf-yz-05", "scholarfeed", "3", "Yunquan Zhang", "HPC AI500: A Benchmark Suite for HPC AI Systems", 2019, ["Zihan Jiang", "Wanling Gao", "Lei Wang"]),
    ("sf-yz-06", "scholarfeed", "3", "Yunquan Zhang", TEST_RISK, 2026, ["Daning Cheng", "Zeyu Liu", "Jun Sun"]),
    ("sf-yz-07", "scholarfeed", "3", "Yunquan Zhang", CALM, 2025, ["Jinhao Zhang", "Yunquan Zhang", "Daning Chen"]),
    ("sf-yz-08", "scholarfeed", "3", "Yunquan Zhang", "Rethinking Parameter Sharing as Graph Coloring for Structured Compression", 2025, ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]),
    ("sf-yz-09", "scholarfeed", "3", "Yunquan Zhang", "Unfolding an Atomistic World: Atomistic Simulation of Reactor Pressure Vessel Steel Across Year-and-Meter Scales", 2026, ["Haozhi Han", "Ruge Zhang", "Haoquan Chen"]),
    ("sf-yz-10", "scholarfeed", "3", "Yunquan Zhang", "FP=xINT:A Low-Bit Series Expansion Algorithm for Post-Training Quantization", 2024, ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]),
    ("sf-yz-11", "scholarfeed", "3", "Yunquan Zhang", "A General Error-Theoretical Analysis Framework for Constructing Compression Strategies", 2025, ["Boyang Zhang", "Daning Cheng", "Yunquan Zhang"]),
    ("sf-yz-12", "scholarfeed", "3", "Yunquan Zhang", "MoQE: Improve Quantization Model performance via Mixture of Quantization Experts", 2025, ["Jinhao Zhang", "Yunquan Zhang", "Boyang Zhang"]),
    ("sf-yz-13", "scholarfeed", "3", "Yunquan Zhang", "Can the capability of Large Language Models be described by human ability? A Meta Study", 2025, ["Mingrui Zan", "Yunquan Zhang", "Boyang Zhang"]),
    ("sf-yz-14", "scholarfeed", "3", "Yunquan Zhang", "Exploiting Block Coordinate Descent for Cost-Effective LLM Model Training", 2025, ["Zeyu Liu", "Yan Li", "Yunquan Zhang"]),
    ("sf-yz-15", "scholarfeed", "3", "Yunquan Zhang", "An Accurate and Efficient Large-scale Regression Method through Best Friend Clustering", 2021, ["Kun Li", "Liang Yuan", "Yunquan Zhang"]),
    ("sf-yz-16", "scholarfeed", "3", "Yunquan Zhang", "AIPerf: Automated machine learning as an AI-HPC benchmark", 2020, ["Zhixiang Ren", "Yongheng Liu", "Tianhui Shi"]),
    # 002 Scholar Feed, Yucheng Ding (a few rows) and 004, Jialiang Cheng
    ("sf-yd-07", "scholarfeed", "2", "Yucheng Ding", "Mixture of Neuron Experts", 2025, ["Runxi Cheng", "Yuchen Guan", "Yucheng Ding"]),
    ("sf-yd-08", "scholarfeed", "2", "Yucheng Ding", "Training Matryoshka Mixture-of-Experts for Elastic Inference-Time Expert Utilization", 2025, ["Yaoxiang Wang", "Qingguo Hu", "Yucheng Ding"]),
    ("sf-yd-09", "scholarfeed", "2", "Yucheng Ding", "Distributed Optimization over Block-Cyclic Data", 2020, ["Yucheng Ding", "Chaoyue Niu", "Yikai Yan"]),
    ("sf-yd-10", "scholarfeed", "2", "Yucheng Ding", "Distributed Non-Convex Optimization with Sublinear Speedup under Intermittent Client Availability", 2020, ["Yikai Yan", "Chaoyue Niu", "Yucheng Ding"]),
    ("sf-jc-1", "scholarfeed", "4", "Jialiang Cheng", "BEAM: Binary Expert Activation Masking for Dynamic Routing in MoE", 2026, ["Juntong Wu", "Jialiang Cheng", "Qishen Yin"]),
    ("sf-jc-2", "scholarfeed", "4", "Jialiang Cheng", "EDiT: A Local-SGD-Based Efficient Distributed Training Method for Large Language Models", 2024, ["Jialiang Cheng", "Ning Gao", "Yun Yue"]),
]


def sample_records() -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"record_id": lid, "title": title, "authors": byline, "venue": "arXiv" if src == "bzpeer" else None, "year": year, "source": src}
            for lid, src, _pid, _owner, title, year, byline in SAMPLE_LISTINGS
        ],
        schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64, "source": pl.String},
    )


def records(rows: list[dict]) -> pl.DataFrame:
    base = {"authors": [], "venue": None, "year": None}
    return pl.DataFrame(
        [{**base, **r} for r in rows],
        schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64},
    )


def paper_of(result: pl.DataFrame) -> dict[str, str]:
    return dict(zip(result["record_id"].to_list(), result["paper_id"].to_list()))


def test_sample_papers_across_profiles():
    result = match_papers(sample_records())
    paper = paper_of(result)
    assert paper["bz-dc-1"] == paper["bz-yz-1"] == paper["sf-yz-06"]  # the test-risk paper
    assert paper["bz-dc-2"] == paper["bz-yz-3"] == paper["sf-yz-04"]  # DynaTrain
    assert paper["bz-yz-2"] == paper["sf-yz-07"]  # CALM (2026 on BZPEER, Dec 2025 on Scholar Feed)
    assert paper["bz-dc-3"] == paper["bz-yz-4"]  # MoE-DisCo
    assert paper["bz-dc-5"] == paper["bz-yz-8"]  # the scalability paper
    assert paper["bz-yz-7"] != paper["bz-yz-9"]  # HONPAS dynamic vs static
    # Everything else stays a paper of its own.
    assert result["paper_id"].n_unique() == len(SAMPLE_LISTINGS) - 7
    assert paper["bz-dc-1"] == "bz-dc-1"  # paper_id: smallest record_id of the cluster
    methods = dict(zip(result["record_id"].to_list(), result["method"].to_list()))
    assert methods["bz-dc-2"] == "title_exact"
    assert methods["bz-dc-4"] == "singleton"


def test_honpas_near_twins_are_in_the_review_queue():
    _, review = resolve_papers(sample_records())
    pair = review.filter(pl.col("left_id").is_in(["bz-yz-7", "bz-yz-9"]) & pl.col("right_id").is_in(["bz-yz-7", "bz-yz-9"]))
    assert pair.height == 1
    assert "dynamic" in pair["evidence_against"][0] and "static" in pair["evidence_against"][0]
    # Only borderline pairs: no row for the papers that were merged or are plainly different.
    assert review.height <= 3


def test_identifiers_beat_titles_and_conflicting_identifiers_veto():
    result = match_papers(
        records(
            [
                {"record_id": "a", "title": "Attention is all you need", "arxiv_id": "1706.03762v5"},
                {"record_id": "b", "title": "Transformers: attention only", "arxiv_id": "arXiv:1706.03762"},
                {"record_id": "c", "title": "Attention is all you need", "arxiv_id": "1706.99999"},
                {"record_id": "d", "title": "Some paper", "doi": "https://doi.org/10.1000/XYZ"},
                {"record_id": "e", "title": "Some paper (extended)", "doi": "10.1000/xyz"},
            ]
        ).with_columns(pl.Series("arxiv_id", ["1706.03762v5", "arXiv:1706.03762", "1706.99999", None, None]), pl.Series("doi", [None, None, None, "https://doi.org/10.1000/XYZ", "10.1000/xyz"]))
    )
    paper = paper_of(result)
    assert paper["a"] == paper["b"]
    assert paper["c"] != paper["a"]  # same title, different arXiv id: two papers
    assert paper["d"] == paper["e"]
    methods = dict(zip(result["record_id"].to_list(), result["method"].to_list()))
    assert methods["b"] == "arxiv_id" and methods["e"] == "doi" and methods["c"] == "singleton"


def test_same_arxiv_id_overrides_a_title_veto():
    result = match_papers(
        records([{"record_id": "a", "title": HONPAS_DYNAMIC}, {"record_id": "b", "title": HONPAS_STATIC}]).with_columns(
            pl.lit("2001.00001").alias("arxiv_id")
        )
    )
    assert result["paper_id"].n_unique() == 1


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Scaling LLM Training on Commodity Clusters", "Scaling Large Language Model Training on Commodity Clusters"),
        ("MoE-DisCo:Low Economy Cost Training Mixture-of-Experts Models", "MoE-DisCo: Low economy cost training mixture of experts models."),
        ("Analysis of Navigation Behaviour in Web Sites", "Analysis of navigation behavior in web sites"),
        ("Schr\u00f6dinger bridges for generative modelling", "Schrodinger Bridges for Generative Modelling"),
        (r"\textbf{L}oss landscapes of $\delta$-networks", "Loss Landscapes of δ-Networks"),
        ("Query Optimization for XML", "QueryOptimization forXML"),
        ("The ClustRa Telecom Database: High Availability, High Throughput, and Real-Time Response", "The ClustRa Telecom Database"),
        # A typo or an OCR slip among several agreeing words (DBLP vs Google Scholar).
        ("Efficient and Tunable Similar Set Retrieval", "Efficient and tumble similar set retrieval"),
        ("Gangam - A Solution to Support Multiple Data Models", "Sangam-a solution to support multiple data models"),
    ],
)
def test_lightly_edited_titles_are_one_paper(left, right):
    authors = ["Marek Rusinkiewicz", "Wolfgang Klas"]
    result = match_papers(
        records(
            [
                {"record_id": "1", "title": left, "authors": authors, "year": 2021},
                {"record_id": "2", "title": right, "authors": ["M Rusinkiewicz", "W. Klas", "T Tesch"], "year": 2022},
            ]
        )
    )
    assert result["paper_id"].n_unique() == 1, result


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (HONPAS_DYNAMIC, HONPAS_STATIC),
        ("Linear regression with noisy labels", "Nonlinear regression with noisy labels"),
        ("Evaluating GPT-3 on reasoning benchmarks", "Evaluating GPT-4 on reasoning benchmarks"),
        ("Cascade-Correlation Learning Architecture", "Recurrent Cascade-Correlation Learning Architecture"),
        ("Local search for graph colouring", "Global search for graph colouring"),
        ("Mixture of Experts", "Mixture of Neuron Experts"),
    ],
)
def test_near_twins_stay_apart_despite_same_authors_and_year(left, right):
    result = match_papers(
        records(
            [
                {"record_id": "1", "title": left, "authors": ["Yunquan Zhang", "Daning Cheng"], "year": 2020},
                {"record_id": "2", "title": right, "authors": ["Yunquan Zhang", "Daning Cheng"], "year": 2020},
            ]
        )
    )
    assert result["paper_id"].n_unique() == 2


def test_a_look_alike_word_is_a_typo_only_among_enough_agreeing_words():
    typo = compare_titles(title_tokens("Efficient and Tunable Similar Set Retrieval"),
                          title_tokens("Efficient and tumble similar set retrieval"))
    assert typo.veto is None and 0.85 <= typo.score < 1.0  # half an edit: authors and years decide
    # Too little agreeing context, a number, a short word: still different papers.
    assert compare_titles(title_tokens("Mining rules"), title_tokens("Mixing rules")).veto
    assert compare_titles(title_tokens("Evaluating GPT-3 on reasoning benchmarks"),
                          title_tokens("Evaluating GPT-4 on reasoning benchmarks")).veto
    assert compare_titles(title_tokens(HONPAS_DYNAMIC), title_tokens(HONPAS_STATIC)).veto
    # Look-alike words that mean the opposite or the counterpart are different papers.
    for left, right in (("Adaptive increasing step size for stochastic gradient methods",
                         "Adaptive decreasing step size for stochastic gradient methods"),
                        ("Robust encoding of sparse neural spike trains", "Robust decoding of sparse neural spike trains"),
                        ("Internal validity of randomized clinical trial designs",
                         "External validity of randomized clinical trial designs"),
                        ("Renal hypertension in elderly diabetic patients", "Renal hypotension in elderly diabetic patients"),
                        ("Intracellular calcium waves in cardiac myocytes", "Intercellular calcium waves in cardiac myocytes")):
        assert compare_titles(title_tokens(left), title_tokens(right)).veto, (left, right)
    # A look-alike title by other people in another year is another paper.
    result = match_papers(records([
        {"record_id": "1", "title": "Learning to rank with partial labels", "authors": ["Ann Lee"], "year": 2015},
        {"record_id": "2", "title": "Learning to rant with partial labels", "authors": ["Bob Ray"], "year": 2015},
    ]))
    assert result["paper_id"].n_unique() == 2


def test_a_garbled_author_list_is_no_evidence_against():
    """Scraped citation strings glue and misspell names ("J Cho andH", "ChaudhuriandV"): a list
    in which a family name of the other is still legible is not "no shared author"; a list that
    names other people still is."""
    dblp = {"record_id": "d", "title": "Synchronizing a Database to Improve Freshness",
            "authors": ["Junghoo Cho", "Hector Garcia-Molina"], "year": 2000}
    garbled = [
        {"record_id": "s1", "title": "Garcia-Molina. Synchronizing a database to improve freshness", "authors": ["J Cho andH"]},
        {"record_id": "s2", "title": "Synchronizing a database to improve freshness. In SIGMOD", "authors": ["H GarciaMolinaJ"]},
        {"record_id": "s3", "title": "Synchronizing a database to improve freshness, in Proc", "authors": ["H Garcia-Molna"]},
    ]
    for record in garbled:
        assert match_papers(records([dblp, record]))["paper_id"].n_unique() == 1, record
    other = {"record_id": "s4", "title": "Synchronizing a database to improve freshness. In SIGMOD", "authors": ["P Smith"]}
    assert match_papers(records([dblp, other]))["paper_id"].n_unique() == 2
    # Other people whose names merely look alike are no garbled list: Chen is not Chenault or
    # Cheng, Zhang is not Chang.
    chen = {"record_id": "c", "title": "Scalable sketches for streaming joins over sliding windows", "authors": ["Paul Chen"]}
    for names in (["Mark Chenault"], ["Li Cheng"], ["Wei Chang"]):
        other = {"record_id": "o", "title": "Scalable sketches for streaming joins over sliding windows, in Proc", "authors": names}
        before = match_papers(records([chen, {**other, "authors": ["Xavier Quartermain"]}]))["paper_id"].n_unique()
        assert match_papers(records([chen, other]))["paper_id"].n_unique() == before, names


def test_year_and_author_evidence():
    result = match_papers(
        records(
            [
                # Same title, authors agree, year 1 apart: one paper.
                {"record_id": "a1", "title": "Inference of finite automata using homing sequences", "authors": ["R. L. Rivest", "R. E. Schapire"], "year": 1989},
                {"record_id": "a2", "title": "Inference of Finite Automata Using Homing Sequences", "authors": ["Ronald L. Rivest", "Robert E. Schapire"], "year": 1990},
                # Four years later (the journal version): not by title alone, and a record without
                # a year does not bridge the two.
                {"record_id": "a3", "title": "Inference of finite automata using homing sequences", "authors": ["Rivest, R. L."], "year": 1993},
                {"record_id": "a4", "title": "Inference of finite automata using homing sequences", "authors": ["R Rivest"], "year": None},
                # A generic title with different authors: different papers.
                {"record_id": "b1", "title": "Introduction", "authors": ["A. Smith"], "year": 2001},
                {"record_id": "b2", "title": "Introduction", "authors": ["B. Jones"], "year": 2001},
            ]
        )
    )
    paper = paper_of(result)
    assert paper["a1"] == paper["a2"]
    assert paper["a3"] != paper["a1"]
    assert not (paper["a4"] == paper["a1"] and paper["a4"] == paper["a3"])
    assert paper["b1"] != paper["b2"]


def test_one_to_one_between_sources():
    rows = records(
        [
            {"record_id": "d1", "title": "Efficient joins over streams", "authors": ["Ann Lee"], "year": 2001},
            {"record_id": "s1", "title": "Efficient joins over streams", "authors": ["A Lee"], "year": 2001},
            {"record_id": "s2", "title": "Efficient joins over stream", "authors": ["A Lee"], "year": None},
            {"record_id": "d2", "title": "Efficient join over streams", "authors": ["Bob Ray"], "year": 1995},
        ]
    ).with_columns(pl.Series("source", ["dblp", "scholar", "scholar", "dblp"]))
    free = paper_of(match_papers(rows))
    assert free["d1"] == free["s1"] == free["s2"]
    linked = paper_of(match_papers(rows, one_to_one_between="source"))
    assert linked["d1"] == linked["s1"]  # best score wins the assignment
    assert linked["s2"] != linked["s1"]  # one record per source in a cluster
    assert linked["d2"] != linked["d1"]
    with pytest.raises(ValueError):
        match_papers(rows, one_to_one_between="nope")


def test_a_series_title_is_one_paper_only_with_its_year_and_a_shared_author():
    """A column every issue carries ("Reminiscences on Influential Papers", other authors each
    year, a source listing it several times) is a series: its records are not one paper because
    the title is identical. Before, records of one title and year were collapsed into one paper up
    front, whoever wrote them."""
    title = "Reminiscences on Influential Papers"
    rows = records(
        [
            {"record_id": "d1", "title": title, "authors": ["Richard Snodgrass"], "year": 1998},
            {"record_id": "d2", "title": title, "authors": ["Serge Abiteboul", "Victor Vianu"], "year": 2000},
            {"record_id": "d3", "title": title, "authors": ["Kenneth Ross", "Jun Rao"], "year": 2002},
            {"record_id": "d4", "title": title, "authors": ["Theodore Johnson", "Amr El Abbadi"], "year": 2002},
            {"record_id": "s1", "title": title, "authors": ["KA Ross"], "year": 2002},
            # One paper whose title recurs in no series: still one paper with other author lists.
            {"record_id": "d9", "title": "Efficient joins over streams", "authors": ["Ann Lee"], "year": 2001},
            {"record_id": "s9", "title": "Efficient joins over streams", "authors": ["Bob Ray"], "year": 2001},
        ]
    ).with_columns(pl.Series("source", ["dblp", "dblp", "dblp", "dblp", "scholar", "dblp", "scholar"]))
    paper = paper_of(match_papers(rows))
    assert paper["d3"] != paper["d4"]  # one year, other authors: two columns
    assert paper["s1"] == paper["d3"]  # the same year and a shared author: one
    assert len({paper["d1"], paper["d2"], paper["d3"]}) == 3
    assert paper["d9"] == paper["s9"]
    # Without a source column (one list of citations, which repeats itself) no title is a series.
    citations = paper_of(match_papers(rows.drop("source")))
    assert citations["d3"] == citations["d4"]


def _distinct_titles(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ("adaptive query streams index join cost model learned cardinality skew partition "
             "transaction recovery replication consensus lattice provenance sketch sampling graph "
             "temporal spatial columnar storage compression vector retrieval ranking cache lineage "
             "federated privacy workload tuning benchmark crowdsourcing cleaning integration schema "
             "mapping ontology keyword search spreadsheet visualization lakehouse sharding quorum").split()
    titles: dict[frozenset[str], str] = {}
    while len(titles) < n:  # no two share more than three words: two works, not two spellings of one
        picked = rng.sample(words, 6)
        if all(len(other & set(picked)) <= 3 for other in titles):
            titles[frozenset(picked)] = " ".join(picked).capitalize()
    return sorted(titles.values())


def test_a_source_that_lists_each_work_once_never_has_two_of_its_records_merged():
    """A catalogue (a bibliography that lists every work once, judged from the data: almost none
    of its distinctive titles shares a paper with another of its records) holds one editor's
    three "Editor's Notes" of one year as three works; another source's copy joins one of them.
    A source that repeats its works (profile pages) is no catalogue: there the same records are
    one paper, as before. Before, whole-table dedup merged the catalogue's columns."""
    def rows_of(source: str, titles: list[str], copies: int) -> list[dict]:
        return [{"record_id": f"{source}{k:03d}-{c}", "title": t, "authors": [f"Author {k}"], "year": 2000 + k % 5,
                 "source": source} for k, t in enumerate(titles) for c in range(copies)]

    notes = [{"record_id": f"notes-{k}", "title": "Editor's Notes", "authors": ["Ling Liu"], "year": 2002} for k in range(3)]
    catalogue = records([{k: v for k, v in r.items() if k != "source"} for r in rows_of("cat", _distinct_titles(220, 1), 1)]
                        + notes + [{"record_id": "copy-1", "title": "Editor's notes", "authors": ["L. Liu"], "year": 2002}])
    catalogue = catalogue.with_columns(pl.Series("source", ["cat"] * 223 + ["other"]))
    paper = paper_of(match_papers(catalogue))
    assert len({paper["notes-0"], paper["notes-1"], paper["notes-2"]}) == 3
    assert paper["copy-1"] in {paper["notes-0"], paper["notes-1"], paper["notes-2"]}
    # Named explicitly: no catalogue, the old whole-table dedup.
    named_none = paper_of(match_papers(catalogue, catalogues=()))
    assert len({named_none["notes-0"], named_none["notes-1"], named_none["notes-2"]}) == 1

    pages = records([{k: v for k, v in r.items() if k != "source"} for r in rows_of("pages", _distinct_titles(220, 2), 2)] + notes)
    pages = pages.with_columns(pl.Series("source", ["pages"] * 443))
    paper = paper_of(match_papers(pages))
    assert len({paper["notes-0"], paper["notes-1"], paper["notes-2"]}) == 1
    assert paper["pages000-0"] == paper["pages000-1"]


def test_a_catalogue_that_lists_conference_and_journal_versions_is_still_a_catalogue():
    """DBLP and the ACM library list a conference paper and its journal version (same title, a
    year later) as two entries: such versions are not repeats, so a catalogue that holds many of
    them is still recognised, and its two "Editor's Notes" of one year stay two works (before,
    5 % of versions made it look like a list that repeats its works; DBLP-ACM 0.946 -> 0.977)."""
    titles = _distinct_titles(220, 3)
    rows = [{"record_id": f"cat{k:03d}", "title": t, "authors": [f"Author {k}"], "year": 2000 + k % 5}
            for k, t in enumerate(titles)]
    rows += [{"record_id": f"cat{k:03d}-journal", "title": titles[k], "authors": [f"Author {k}"], "year": 2001 + k % 5}
             for k in range(0, 220, 20)]
    rows += [{"record_id": f"notes-{k}", "title": "Editor's Notes", "authors": ["Ling Liu"], "year": 2002} for k in range(2)]
    # One work listed twice in its year: 2 of 232 distinctive records (0.9 %, under the 1 % bar).
    rows += [{"record_id": "cat001-again", "title": titles[1], "authors": ["Author 1"], "year": 2001}]
    frame = records(rows).with_columns(pl.lit("cat").alias("source"))
    paper = paper_of(match_papers(frame))
    assert paper["notes-0"] != paper["notes-1"]
    assert paper["cat020"] != paper["cat020-journal"]  # two entries of the catalogue
    assert paper_of(match_papers(frame, catalogues=()))["cat020"] == paper_of(match_papers(frame, catalogues=()))["cat020-journal"]


def test_deterministic_under_row_shuffles():
    base = sample_records()
    expected = match_papers(base).sort("record_id")
    review = resolve_papers(base)[1]
    rng = random.Random(3)
    for _ in range(3):
        order = list(range(base.height))
        rng.shuffle(order)
        shuffled = base[order]
        result, shuffled_review = resolve_papers(shuffled)
        assert result.sort("record_id").equals(expected)
        assert shuffled_review.equals(review)


def test_empty_nulls_and_schema():
    empty = match_papers(records([]))
    assert empty.height == 0 and empty.columns == ["record_id", "paper_id", "method", "score"]
    odd = records(
        [
            {"record_id": "1", "title": None, "authors": None},
            {"record_id": "2", "title": "", "year": None},
            {"record_id": "3", "title": "Deep learning", "authors": ["", "et al."]},
            {"record_id": "4", "title": "Deep learning", "authors": ["Yann LeCun"], "year": 2015},
        ]
    )
    result = match_papers(odd)
    assert result.height == 4
    paper = paper_of(result)
    assert paper["1"] != paper["2"]  # two empty titles are not evidence of anything
    assert result["score"].is_between(0, 1).all()
    # Author lists given as plain strings are split.
    as_text = pl.DataFrame({"record_id": ["x", "y"], "title": ["A study of joins", "A study of joins"], "authors": ["Lee, A. and Ray, B.", "Ann Lee, Bob Ray"]})
    assert match_papers(as_text)["paper_id"].n_unique() == 1
    with pytest.raises(ValueError):
        match_papers(records([{"record_id": "1", "title": "x"}, {"record_id": "1", "title": "y"}]))


def test_review_pairs_respect_a_given_result():
    base = sample_records()
    result, review = resolve_papers(base)
    assert paper_review_pairs(base, result).equals(review)
    # An override that merged the HONPAS twins removes them from the queue.
    merged = result.with_columns(pl.when(pl.col("record_id") == "bz-yz-9").then(pl.lit("bz-yz-7")).otherwise(pl.col("paper_id")).alias("paper_id"))
    assert "bz-yz-9" not in paper_review_pairs(base, merged)["right_id"].to_list() + paper_review_pairs(base, merged)["left_id"].to_list()


def test_title_diff_building_blocks():
    diff = compare_titles(title_tokens(HONPAS_DYNAMIC), title_tokens(HONPAS_STATIC))
    assert diff.veto and "dynamic" in diff.veto
    assert compare_titles(title_tokens("Scaling LLM training"), title_tokens("Scaling large language model training")).veto is None
    assert spelling_variant("behaviour", "behavior") and spelling_variant("update", "updating")
    assert not spelling_variant("model", "modal") and not spelling_variant("local", "global")
    assert not spelling_variant("linear", "nonlinear")
    assert not spelling_variant("quantum", "quantile") and not spelling_variant("graph", "graphene")
    assert spelling_variant("buffer", "buer")  # a lost PDF ligature
    assert split_author_list("A. Blum, M. Furst, and R. J. Lipton") == ["A. Blum", "M. Furst", "R. J. Lipton"]
    assert name_compatibility("M Rusinkiewicz", "Marek Rusinkiewicz") == 1


def test_shared_identifier_holds_across_years():
    frame = records(
        [
            {"record_id": "pre", "title": "Sparse attention for long documents", "year": 2019},
            {"record_id": "pub", "title": "Sparse Attention for Long Documents", "year": 2022},
        ]
    ).with_columns(pl.Series("arxiv_id", ["1901.00001v1", "1901.00001v3"]))
    assert match_papers(frame)["paper_id"].n_unique() == 1
    # Without the identifier, three years apart and no authors: not merged by title alone.
    assert match_papers(frame.drop("arxiv_id"))["paper_id"].n_unique() == 2



def test_one_arxiv_id_is_one_version_family_whatever_its_dois():
    """A preprint's records carry the journal DOIs its versions got (arXiv's record: the journal DOI,
    OpenAlex: the conference one): one arXiv id ties them into one paper. A record with a third DOI
    and no arXiv id is another version of nobody's — two different DOIs without a shared arXiv id
    stay apart, and the close titles go to the review queue."""
    title = "Sparse attention for long documents"
    frame = records(
        [
            {"record_id": "a-journal", "title": title, "year": 2022},
            {"record_id": "a-conf", "title": title + " (extended abstract)", "year": 2021},
            {"record_id": "journal-copy", "title": "Sparse Attention for Long Documents", "year": 2022},
            {"record_id": "other", "title": "Sparse Attention for Long Documents", "year": 2022},
        ]
    ).with_columns(
        pl.Series("arxiv_id", ["2101.00001v2", "2101.00001v1", None, None]),
        pl.Series("doi", ["10.1000/journal.2022", "10.1000/conf.2021", "https://doi.org/10.1000/JOURNAL.2022", "10.1000/third"]),
    )
    assignments, review = resolve_papers(frame)
    paper = paper_of(assignments)
    assert paper["a-journal"] == paper["a-conf"]            # one arXiv id: one paper, both DOIs
    assert paper["journal-copy"] == paper["a-journal"]      # shares one of the family's DOIs
    assert paper["other"] != paper["a-journal"]             # a DOI of no version of it
    (row,) = review.rows(named=True)
    assert {row["left_id"], row["right_id"]} & {"other"}
    assert "DOI" in row["evidence_against"] and "10.1000/third" in row["evidence_against"]

# --- records with one title collapse into a node before matching -------------------------------


def test_listings_of_one_title_are_matched_once_and_keep_their_methods():
    rows = [{"record_id": f"r{k}", "title": "Sparse Mixture Routing for Efficient Serving", "authors": ["Ann Lee", f"Owner{k} Smith"], "year": 2024}
            for k in range(40)]
    rows.append({"record_id": "z", "title": "Sparse Mixture Routing for Efficient Serving", "authors": ["Ann Lee"], "year": 2024})
    result = match_papers(records(rows))
    assert result["paper_id"].n_unique() == 1
    methods = dict(zip(result["record_id"], result["method"]))
    assert methods["r1"] == "title_exact" and methods["z"] == "title_exact"


def test_a_node_keeps_every_members_title_parts():
    """The record that sorts first lacks the colon; another member's subtitle still matches."""
    rows = [
        {"record_id": "r1", "title": "Foo Systems Scalable Query Routing Engines", "authors": ["Ann Lee"], "year": 2021},
        {"record_id": "r2", "title": "Foo Systems: Scalable Query Routing Engines", "authors": ["Ann Lee"], "year": 2021},
        {"record_id": "r3", "title": "Scalable Query Routing Engines", "authors": ["Ann Lee"], "year": 2021},
    ]
    assert len(set(paper_of(match_papers(records(rows))).values())) == 1


def test_a_member_without_authors_shields_the_node_from_the_no_shared_author_penalty():
    """Unpooled, the author-less record would match the variant (0.95); pooling the other
    member's authors must not turn that into 'no shared author' (0.83)."""
    rows = [
        {"record_id": "a", "title": "Scalable Graph Learning for Molecular Property Prediction Tasks", "authors": [], "year": 2020},
        {"record_id": "b", "title": "Scalable Graph Learning for Molecular Property Prediction Tasks", "authors": ["Xia Alpha"], "year": 2020},
        {"record_id": "c", "title": "Scalable Graph Learning for Molecular Property Prediction", "authors": ["Yves Beta"], "year": 2020},
    ]
    assert len(set(paper_of(match_papers(records(rows))).values())) == 1


def test_title_diffs_in_worker_processes_give_the_same_result(monkeypatch):
    from pipelines.core.resolution import title_diffs as diffs_module

    rows = [
        {"record_id": f"r{k}", "title": title, "authors": ["Ann Lee"], "year": 2020 + k % 3}
        for k, title in enumerate([
            "Dynamic Load Balancing for Sparse Transformers", "Static Load Balancing for Sparse Transformers",
            "Dynamic Load-Balancing for Sparse Transformer Models", "A Survey of Load Balancing in Transformers",
            "Large Language Models for Code Review", "LLMs for Code Review", "Code Review with Large Language Models",
        ] * 3)
    ]
    sequential = resolve_papers(records(rows))
    monkeypatch.setattr(diffs_module, "PARALLEL_DIFF_MIN", 1)
    parallel = resolve_papers(records(rows), workers=2)
    assert sequential[0].equals(parallel[0]) and sequential[1].equals(parallel[1])
    pairs = [(title_tokens(a["title"]), title_tokens(b["title"])) for a in rows[:7] for b in rows[:7]]
    assert diffs_module.compare_many(pairs, workers=2) == [compare_titles(a, b) for a, b in pairs]


def test_title_diffs_fall_back_to_this_process_when_workers_die(monkeypatch):
    import concurrent.futures
    from concurrent.futures.process import BrokenProcessPool

    from pipelines.core.resolution import title_diffs as diffs_module

    class DeadPool:
        def __init__(self, *args, **kwargs): ...
        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def submit(self, *args, **kwargs): raise BrokenProcessPool("worker died")
        def shutdown(self, *args, **kwargs): ...

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", DeadPool)
    monkeypatch.setattr(diffs_module, "PARALLEL_DIFF_MIN", 1)
    pairs = [(title_tokens("Dynamic Load Balancing"), title_tokens("Static Load Balancing"))] * 3
    with pytest.warns(RuntimeWarning, match="diffing in this process"):
        assert diffs_module.compare_many(pairs, workers=2) == [compare_titles(*pairs[0])] * 3


def test_title_diffs_of_an_earlier_run_are_reused_with_the_same_result():
    from pipelines.core.resolution.papers import TitleDiffCache

    base = sample_records()
    expected = resolve_papers(base)
    first = TitleDiffCache()
    assert all(a.equals(b) for a, b in zip(resolve_papers(base, title_diffs=first), expected))
    cached = first.frame()
    assert first.computed == cached.height > 0 and first.reused == 0
    assert cached.select("left_key", "right_key").is_duplicated().sum() == 0

    # The next night: every diff comes from the cache, and the result is the same.
    second = TitleDiffCache(cached)
    assert all(a.equals(b) for a, b in zip(resolve_papers(base, title_diffs=second), expected))
    assert second.computed == 0 and second.reused == cached.height
    assert second.frame().equals(cached)

    # One title changed: only the pairs it is in are diffed again.
    changed = base.with_columns(
        pl.when(pl.col("record_id") == "bz-yz-2").then(pl.lit(CALM + " Revisited")).otherwise(pl.col("title")).alias("title"))
    third = TitleDiffCache(cached)
    assert all(a.equals(b) for a, b in zip(resolve_papers(changed, title_diffs=third), resolve_papers(changed)))
    assert 0 < third.computed < third.reused


def test_cached_title_diffs_of_another_version_are_not_used():
    from pipelines.core.resolution.papers import TitleDiffCache

    base = sample_records()
    first = TitleDiffCache()
    resolve_papers(base, title_diffs=first)
    # A diff cached by another version of the diff code (here: a wrong veto on every pair) is ignored.
    stale = first.frame().with_columns(veto=pl.lit("stale"), version=pl.lit("old"))
    again = TitleDiffCache(stale)
    assert all(a.equals(b) for a, b in zip(resolve_papers(base, title_diffs=again), resolve_papers(base)))
    assert again.reused == 0 and again.computed == first.computed
    # ...while one of this version is trusted as it is: that is what makes it a cache.
    trusted = TitleDiffCache(stale.with_columns(version=pl.lit(first.version)))
    resolve_papers(base, title_diffs=trusted)
    assert trusted.computed == 0


def test_a_reference_string_with_its_authors_and_year_in_front_is_the_paper():
    """Scraped citations keep the authors and year before the title ("Suresha, and K. Ramamritham.
    Proxy-based ...", "WidomJ (2003) Adaptive ..."): names of the pair's authors there are set aside."""
    rows = [
        {"record_id": "d1", "title": "Proxy-based acceleration of dynamically generated content on the world wide web: an approach and implementation",
         "authors": ["Suresha", "Kaushik Dutta", "Krithi Ramamritham", "Anindya Datta"], "year": 2002},
        {"record_id": "s1", "title": "Suresha, and K. Ramamritham. Proxy-based acceleration of dynamically generated content on the world",
         "authors": ["A Datta", "K Dutta"]},
        {"record_id": "d2", "title": "Adaptive Filters for Continuous Queries over Distributed Data Streams",
         "authors": ["Jennifer Widom", "Chris Olston", "Jing Jiang"], "year": 2003},
        {"record_id": "s2", "title": "WidomJ (2003) Adaptive filters for continuous queries over distributed data streams",
         "authors": ["C Olston"]},
    ]
    paper = paper_of(match_papers(records(rows)))
    assert paper["d1"] == paper["s1"] and paper["d2"] == paper["s2"] and paper["d1"] != paper["d2"]


def test_a_citation_preamble_is_only_names_of_the_pair_and_years():
    from pipelines.core.resolution.paper_scoring import citation_preamble, preamble_names

    names = preamble_names(frozenset({"widom", "olston", "jennifer", "the"}), frozenset({"widom j", "olston c"}))
    assert citation_preamble(title_tokens("WidomJ (2003) Adaptive filters for continuous queries"), names) == 2
    assert citation_preamble(title_tokens("Widom and Olston. Adaptive filters for continuous queries"), names) == 3
    # A first word that names nobody on the two author lists is the title's own ("Recurrent ...").
    assert citation_preamble(title_tokens("Recurrent filters for continuous queries"), names) == 0
    # Years and letters alone are no preamble, and the title must keep three content words.
    assert citation_preamble(title_tokens("2003 Adaptive filters for continuous queries"), names) == 0
    assert citation_preamble(title_tokens("Widom filters queries"), names) == 0
    # A garbled author field's stopwords are no names; a surname's ending is no glued initial
    # ("Younger" is not "Young" + an initial); two-letter words are title words ("3D", "On").
    assert citation_preamble(title_tokens("The adaptive filters for continuous queries"), names) == 0
    young = preamble_names(frozenset({"young", "hadwiger", "kalman"}), frozenset({"young e", "hadwiger h", "kalman r"}))
    assert citation_preamble(title_tokens("Younger stars in the galactic disk region"), young) == 0
    assert citation_preamble(title_tokens("On Hadwiger's conjecture for graph products"), young) == 0
    assert citation_preamble(title_tokens("3D Kalman filtering for sensor networks"), young) == 0


def test_a_pairs_preamble_does_not_depend_on_the_other_records():
    """A pair's score is the pair's alone (incremental nights score subsets): another record's
    author list must not decide whether a preamble is looked for."""
    import polars as pl

    from pipelines.core.resolution.paper_features import prepare_features
    from pipelines.core.resolution.paper_scoring import score_pairs

    a = {"record_id": "a", "title": "R. J. and K. Hill, and DA Wood. DBMSs on a Modern Processor: Where does time go In",
         "authors": ["M Hill"]}
    b = {"record_id": "b", "title": "DBMSs on a Modern Processor: Where Does Time Go?", "authors": ["Mark D. Hill", "David A. Wood"],
         "year": 2003}
    c = {"record_id": "c", "title": "Something else entirely about graphs and trees", "authors": ["Tom and Jerry"], "year": 2001}
    scores = []
    for rows in ([a, b], [a, b, c]):
        feats = prepare_features(records(rows), None)
        pair = pl.DataFrame({"i": [0], "j": [1]}, schema={"i": pl.Int64, "j": pl.Int64})
        scores.append(score_pairs(feats, pair, None, 1).select("score", "title_score").row(0))
    assert scores[0] == scores[1]


def test_a_name_in_front_does_not_join_two_different_papers():
    """A first word that is an author's name is set aside only to compare the rest: what remains
    must still be one title (here another word differs: another paper)."""
    rows = [
        {"record_id": "a", "title": "Kalman filtering for sensor networks with packet loss", "authors": ["R Kalman"], "year": 2005},
        {"record_id": "b", "title": "Particle filtering for sensor networks with packet loss", "authors": ["R Kalman"], "year": 2005},
    ]
    paper = paper_of(match_papers(records(rows)))
    assert paper["a"] != paper["b"]

"""Smoke test of the Splink benchmark baseline (scripts/splink_baseline.py).

Splink is only in the optional ``bench`` extra: the tests that run it are skipped, with the reason,
when it is not importable. The record preparation is plain Polars and always tested.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import polars as pl
import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "splink_baseline.py"


def _load_baseline():
    spec = importlib.util.spec_from_file_location("splink_baseline", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("splink_baseline", module)
    spec.loader.exec_module(module)
    return module


baseline = _load_baseline()

try:
    import splink  # noqa: F401

    _SPLINK_MISSING = None
except ImportError as exc:  # the bench extra is not installed
    _SPLINK_MISSING = f"splink is not importable ({exc}); install the 'bench' extra"

needs_splink = pytest.mark.skipif(_SPLINK_MISSING is not None, reason=_SPLINK_MISSING or "")

_WORDS = (
    "adaptive sparse attention graph neural scalable federated quantization pipeline parallel "
    "kernel tuning memory efficient robust contrastive diffusion retrieval compiler scheduling "
    "benchmark inference training distributed elastic mixture experts low rank pruning "
    "vectorization cache streaming hybrid density functional calculation autotuning transformer"
).split()
_SURNAMES = "zhang cheng wang li chen garcia muller rossi novak kim sato silva ivanov smith brown".split()


def _corpus(seed: int = 3, papers: int = 50) -> tuple[pl.DataFrame, dict[str, int]]:
    """Papers listed 1-4 times with the edits the sources make; returns (records, record -> paper)."""
    rng = random.Random(seed)
    rows, truth = [], {}
    for paper in range(papers):
        title = " ".join(rng.sample(_WORDS, rng.randint(5, 9))).capitalize()
        authors = [f"{rng.choice('ABCDEFGHJKLMNPRSTW')}. {rng.choice(_SURNAMES).title()}" for _ in range(rng.randint(1, 3))]
        year = rng.randint(2015, 2026)
        arxiv = f"{year % 100:02d}{rng.randint(1, 12):02d}.{rng.randint(10000, 99999)}" if rng.random() < 0.3 else None
        for copy in range(rng.randint(1, 4)):
            variant = title
            if copy == 1:
                variant = title.upper() + "."
            elif copy == 2:
                variant = title.replace(" ", ": ", 1)
            listed_year = year + (1 if copy == 3 else 0)
            record_id = f"r{len(rows):04d}"
            rows.append(
                {
                    "record_id": record_id,
                    "title": variant,
                    "authors": authors if copy != 2 else [],  # BZPEER-style listing: no byline
                    "venue": None,
                    "year": listed_year,
                    "source": "bzpeer" if copy == 2 else "scholarfeed",
                    "arxiv_id": (f"{arxiv}v{copy + 1}" if arxiv and copy != 2 else None),
                }
            )
            truth[record_id] = paper
    schema = {"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String,
              "year": pl.Int64, "source": pl.String, "arxiv_id": pl.String}
    return pl.DataFrame(rows, schema=schema), truth


def _pairs(groups: dict[str, object]) -> set[tuple[str, str]]:
    members: dict[object, list[str]] = {}
    for record, group in groups.items():
        members.setdefault(group, []).append(record)
    return {(a, b) for ids in members.values() for a in ids for b in ids if a < b}


def test_prepare_records_derives_keys():
    records = pl.DataFrame(
        {
            "record_id": ["a", "b", "c"],
            "title": ["MoE-DisCo:Low Economy Cost Training", "moe disco low economy cost training.", "Zebra Cost"],
            "authors": [["Yunquan Zhang", "Zhang, Y.", "JC Freytag"], [], None],
            "year": [2026, None, 2020],
            "arxiv_id": ["arXiv:2601.01234v3", None, " "],
        },
        schema_overrides={"authors": pl.List(pl.String)},
    )
    prepared = baseline.prepare_records(records).to_dicts()
    first, second, third = prepared
    assert first["unique_id"] == "a"
    assert first["title_key"] == second["title_key"] == "moe disco low economy cost training"
    assert first["title_first3"] == "moe disco low" and first["title_last2"] == "cost training"
    assert first["title_first2"] == "moe disco"
    assert first["author_surnames"] == ["freytag", "zhang"]
    assert second["author_surnames"] is None and third["author_surnames"] is None
    assert first["arxiv_id"] == "2601.01234" and third["arxiv_id"] is None
    # Rarest token shared by at least two titles: "cost" is in all three, the others in two.
    assert first["title_rare_token"] == "disco" and third["title_rare_token"] == "cost"


def test_prepare_records_rejects_duplicate_ids():
    with pytest.raises(ValueError, match="unique"):
        baseline.prepare_records(pl.DataFrame({"record_id": ["x", "x"], "title": ["A", "B"]}))


def _precision_recall(clusters: pl.DataFrame, truth: dict[str, int]) -> tuple[float, float]:
    predicted, gold = _pairs(dict(clusters.iter_rows())), _pairs(truth)
    true_positives = len(predicted & gold)
    return true_positives / max(len(predicted), 1), true_positives / len(gold)


@needs_splink
def test_run_splink_clusters_duplicates_deterministically():
    records, truth = _corpus()
    kwargs = {"threshold": 0.9, "u_max_pairs": 1e5}
    clusters, info = baseline.run_splink(records, blocking="tight", **kwargs)

    assert clusters.columns == ["record_id", "cluster_id"]
    assert clusters["record_id"].to_list() == records["record_id"].to_list()
    # A cluster is named after its smallest record id.
    smallest = clusters.group_by("cluster_id").agg(pl.col("record_id").min().alias("first"))
    assert all(cid == first for cid, first in smallest.iter_rows())
    precision, recall = _precision_recall(clusters, truth)
    assert precision >= 0.95 and recall >= 0.85, (precision, recall)

    assert info["blocking"] == "tight" and info["pairs_scored"] > 0 and info["seconds"] > 0
    assert info["pairs_above_threshold"] <= info["pairs_scored"]
    assert isinstance(info["settings"], str) and "dedupe_only" in info["settings"]

    again, _ = baseline.run_splink(records, blocking="tight", **kwargs)
    assert again.equals(clusters)

    broad_clusters, broad = baseline.run_splink(records, blocking="broad", **kwargs)
    assert broad["blocking"] == "broad" and broad["pairs_scored"] > info["pairs_scored"]
    precision, recall = _precision_recall(broad_clusters, truth)
    assert precision >= 0.95 and recall >= 0.85, (precision, recall)


@needs_splink
def test_run_splink_trivial_and_invalid_inputs():
    one = pl.DataFrame({"record_id": ["only"], "title": ["A Title"]})
    clusters, info = baseline.run_splink(one)
    assert clusters.to_dicts() == [{"record_id": "only", "cluster_id": "only"}]
    assert info["pairs_scored"] == 0
    with pytest.raises(ValueError, match="blocking"):
        baseline.run_splink(one, blocking="loose")
    with pytest.raises(ValueError, match="threshold"):
        baseline.run_splink(one, threshold=1.5)

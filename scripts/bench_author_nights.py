"""An incremental author night against the full one, on real and synthetic mentions with truth.

    .venv/bin/python scripts/bench_author_nights.py [--data ../shared/benchmarks] [--share 0.01]
        [--only inspire,synthetic] [--mentions dump.parquet]

Night 1 resolves every mention but those of a held-out share of the papers (the full night,
which fits the evidence weights); night 2 adds them back — new papers arriving — and is resolved
twice: incrementally from night 1's state (``resolve_authors_incrementally``) and in full under
night 1's weights (what the incremental night's answer is compared with). Printed per data set:
mentions re-resolved, seconds, B-cubed agreement of the two answers and each one's B-cubed
figures against the truth. ``--mentions``: a frame of mentions (the ``match_authors`` schema,
no truth), e.g. one dumped from the core step of a ``make bench`` night: agreement and seconds only.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bibliographies import synthetic_mentions  # noqa: E402
from pipelines.core.resolution import resolve_authors  # noqa: E402
from pipelines.core.resolution.incremental import model_of, resolve_authors_incrementally  # noqa: E402
from pipelines.core.resolution.runtime import MatchOptions  # noqa: E402
from scripts.bench_resolution import b_cubed, inspire_mentions  # noqa: E402


def held_out_papers(mentions: pl.DataFrame, share: float, seed: int) -> list[str]:
    """A seeded sample of ``share`` of the papers (at least one): tonight's new papers."""
    papers = sorted(mentions["paper_id"].drop_nulls().unique().to_list())
    return random.Random(seed).sample(papers, max(1, round(share * len(papers))))


def two_nights(mentions: pl.DataFrame, share: float, seed: int, workers: int) -> dict:
    """Night 1 without the held-out papers, night 2 with them: incremental and full answers."""
    new = held_out_papers(mentions, share, seed)
    before = mentions.filter(~pl.col("paper_id").is_in(new) | pl.col("paper_id").is_null())
    options = MatchOptions(workers=workers)
    first = resolve_authors_incrementally(before, options=options)
    t = time.perf_counter()
    night = resolve_authors_incrementally(mentions, first.state, first.review, model=first.model,
                                          max_changed_share=1.0, options=options)
    incremental_s = time.perf_counter() - t
    t = time.perf_counter()
    full, _ = resolve_authors(mentions, model=model_of(first.model), workers=workers)
    full_s = time.perf_counter() - t
    inc = night.assignments.join(full, on="mention_id", suffix="_full")
    return {"papers_new": len(new), "stats": night.stats, "incremental_s": incremental_s, "full_s": full_s,
            "answers": inc.sort("mention_id"),
            "agreement": b_cubed(inc["author_id"].to_list(), inc["author_id_full"].to_list()),
            "moved": int((inc["author_id"] != inc["author_id_full"]).sum())}


def report(name: str, result: dict, truth: dict[str, str] | None) -> None:
    s = result["stats"]
    print(f"{name}: {s.get('changed', 0):,} changed mentions ({result['papers_new']:,} new papers); "
          f"{s['mode']} night re-resolved {s.get('resolved', 0):,} of {result['answers'].height:,} mentions "
          f"in {result['incremental_s']:.1f} s (full night {result['full_s']:.1f} s)")
    p, r, f = result["agreement"]
    print(f"  incremental vs full: B3 P={p:.4f} R={r:.4f} F1={f:.4f}; {result['moved']:,} mentions in another cluster")
    if truth is not None:
        answers = result["answers"]
        true = [truth[m] for m in answers["mention_id"].to_list()]
        for label, column in (("incremental", "author_id"), ("full", "author_id_full")):
            p, r, f = b_cubed(answers[column].to_list(), true)
            print(f"  {label:>11} vs truth: B3 P={p:.4f} R={r:.4f} F1={f:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "benchmarks")
    parser.add_argument("--only", default="inspire,synthetic", help="comma-separated subset of inspire,synthetic")
    parser.add_argument("--mentions", type=Path, help="a parquet frame of mentions (no truth) to run instead")
    parser.add_argument("--share", type=float, default=0.01, help="share of the papers that arrive on night 2")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.mentions:
        report(args.mentions.name, two_nights(pl.read_parquet(args.mentions), args.share, args.seed, args.workers), None)
        return
    wanted = set(args.only.split(","))
    if "inspire" in wanted:
        frame, truth = inspire_mentions(args.data / "and_inspire_wang")
        report("INSPIRE wang", two_nights(frame, args.share, args.seed, args.workers),
               dict(zip(frame["mention_id"].to_list(), truth)))
    if "synthetic" in wanted:
        frame, truth = synthetic_mentions(seed=3, n_groups=2000)
        report("synthetic people (seed 3, 2,000 groups)", two_nights(frame, args.share, args.seed, args.workers),
               dict(zip(truth["mention_id"].to_list(), truth["true_person"].to_list())))


if __name__ == "__main__":
    main()

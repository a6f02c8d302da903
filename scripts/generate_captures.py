"""Generate a synthetic capture corpus with ground truth (or mutate one in place).

    python scripts/generate_captures.py --profiles 10000 --seed 0 --out /tmp/corpus10k
    python scripts/generate_captures.py --mutate --share 0.01 --seed 1 --out /tmp/corpus10k

See docs/synthetic.md for what is generated.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic import generate_corpus, mutate  # noqa: E402
from benchmarks.synthetic.generator import DEFAULT_CAPTURED_AT  # noqa: E402


def _datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="output folder (captures/ and truth/ go inside)")
    parser.add_argument("--profiles", type=int, default=1000, help="number of profile pages")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--html-share", type=float, default=0.3, help="share of pages written as HTML source")
    parser.add_argument("--bad-page-share", type=float, default=0.005, help="share of bad pages (empty, bot, error, binary, truncated)")
    parser.add_argument("--captured-at", type=_datetime, default=None,
                        help=f"capture time, ISO 8601 (default {DEFAULT_CAPTURED_AT.isoformat()}; with --mutate: keep)")
    parser.add_argument("--workers", type=int, default=None, help="render processes (output does not depend on it)")
    parser.add_argument("--mutate", action="store_true", help="change --share of an existing corpus in place")
    parser.add_argument("--share", type=float, default=0.01, help="with --mutate: share of pages to change")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    if args.mutate:
        result = mutate(args.out, share=args.share, seed=args.seed, captured_at=args.captured_at)
        print(json.dumps({"pages_changed": result.pages_changed, "papers_added": result.papers_added,
                          "counts_changed": result.counts_changed, "elapsed_s": result.elapsed_s}, indent=2))
        return 0
    summary = generate_corpus(
        args.out, profiles=args.profiles, seed=args.seed, html_share=args.html_share,
        bad_page_share=args.bad_page_share, captured_at=args.captured_at or DEFAULT_CAPTURED_AT,
        workers=args.workers,
    )
    print(json.dumps({"out_dir": str(summary.out_dir), "profiles": summary.profiles, "listings": summary.listings,
                      "mentions": summary.mentions, "bad_pages": summary.bad_pages,
                      "elapsed_s": summary.elapsed_s, "phases": summary.phases}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

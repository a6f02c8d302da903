"""Benchmark pipelines.marts.scoring.score_paper_novelty on synthetic papers.

Prints wall time and process CPU time (all threads) of the scoring call, peak RSS (includes the
generated input), and the number of within-category pairs (sum of n^2 / 2), which drives the cost.

    .venv/bin/python scripts/bench_scoring.py --papers 20000 200000 [--categories 40] [--skew 1.0]

Synthetic corpus: a vocabulary of pseudo-words with Zipf-distributed frequencies; every category
boosts its own topic words; titles of 6-14 words and abstracts of 100-220 words with stopwords and
sentence ends; dates spread over 2010-2025 (8% year only, 2% undated). Category sizes follow a
Zipf law with exponent --skew (0 = equal sizes), because the exact nearest-earlier search costs
~n^2/2 per category: the largest category dominates the run time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import time

import numpy as np
import polars as pl

from pipelines.marts.scoring import score_paper_novelty
from pipelines.settings import Settings

_FILLER = "the of and in to a we is for that with on this by are as an from be which our".split()
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "pra", "den", "gor", "lin"]


def _pseudo_word(index: int) -> str:
    """A distinct pronounceable non-word per index (base-14 syllables)."""
    out = []
    index += 14 * 14  # at least three syllables
    while index:
        index, digit = divmod(index, len(_SYLLABLES))
        out.append(_SYLLABLES[digit])
    return "".join(out)


def synthetic_papers(n: int, *, categories: int = 40, skew: float = 1.0, seed: int = 0) -> pl.DataFrame:
    """Random papers whose word statistics look roughly like arXiv abstracts after stopwording:
    a Zipf-like content vocabulary (f_r ~ 1 / (r + 20)), re-weighted per category (log-normal
    factors, so each field has its own frequent words), a few multi-word phrases per abstract,
    stopword filler and sentence ends."""
    rng = np.random.default_rng(seed)
    vocab_size = 60_000
    words = np.array([_pseudo_word(i) for i in range(vocab_size)], dtype=object)
    base = 1.0 / (np.arange(1, vocab_size + 1) + 20.0)
    weights = 1.0 / np.arange(1, categories + 1) ** skew
    category = np.sort(rng.choice(categories, size=n, p=weights / weights.sum()))
    titles: list[str] = []
    abstracts: list[str] = []
    for c in range(categories):
        count = int(np.count_nonzero(category == c))
        if count == 0:
            continue
        p = base * rng.lognormal(0.0, 1.0, size=vocab_size)
        p /= p.sum()
        phrases = [" ".join(words[rng.choice(vocab_size, size=2, p=p)]) for _ in range(400)]
        title_len = rng.integers(6, 15, size=count)
        abstract_len = rng.integers(100, 221, size=count)
        draws = words[rng.choice(vocab_size, size=int(title_len.sum() + abstract_len.sum()), p=p)]
        filler = rng.random(len(draws)) < 0.35
        filler_words = rng.choice(_FILLER, size=len(draws))
        phrase_counts = rng.poisson(3, size=count)
        pos = 0
        for i in range(count):
            t, a = int(title_len[i]), int(abstract_len[i])
            titles.append(" ".join(draws[pos : pos + t]).capitalize())
            body = [
                (f + " " + w) if use else w
                for w, f, use in zip(
                    draws[pos + t : pos + t + a],
                    filler_words[pos + t : pos + t + a],
                    filler[pos + t : pos + t + a],
                )
            ]
            for j in rng.integers(0, a, size=phrase_counts[i]):
                body[j] = phrases[int(rng.integers(0, len(phrases)))]
            for cut in range(int(rng.integers(12, 25)), a, 18):
                body[cut] += "."
            abstracts.append(" ".join(body).capitalize() + ".")
            pos += t + a
    start = dt.date(2010, 1, 1).toordinal()
    days = rng.integers(0, 16 * 365, size=n)
    dates = [dt.date.fromordinal(start + int(d)) for d in days]
    r = rng.random(n)
    return pl.DataFrame(
        {
            "paper_id": [f"P{i:08d}" for i in rng.permutation(n)],
            "title": titles,
            "abstract": abstracts,
            "category": [f"cat.{c:02d}" for c in category],
            "year": [d.year if x >= 0.02 else None for d, x in zip(dates, r)],
            "pub_date": [d if x >= 0.10 else None for d, x in zip(dates, r)],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--papers", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--categories", type=int, default=40)
    parser.add_argument("--skew", type=float, default=1.0)
    parser.add_argument("--chunk-size", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    for n in args.papers:
        t0 = time.perf_counter()
        papers = synthetic_papers(n, categories=args.categories, skew=args.skew)
        t1 = time.perf_counter()
        sizes = papers.group_by("category").len().get_column("len").cast(pl.Float64)
        pairs = float((sizes * sizes).sum() / 2)
        cpu0 = time.process_time()
        t1 = time.perf_counter()
        scores = score_paper_novelty(papers, chunk_size=args.chunk_size, n_threads=args.threads,
                                     window=Settings.from_env().novelty_window)
        t2 = time.perf_counter()
        cpu = time.process_time() - cpu0
        peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(
            f"papers={n} largest_category={int(sizes.max())} pairs={pairs:.2e} generate={t1 - t0:.1f}s "
            f"score_wall={t2 - t1:.1f}s score_cpu={cpu:.1f}s peak_rss={peak_gb:.2f}GB "
            f"cold_start={scores['cold_start'].sum()} "
            f"median_raw={scores['novelty_raw'].median():.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

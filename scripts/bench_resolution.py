"""Quality benchmark of the entity-resolution library (not a test: it prints figures).

    /work/main/.venv/bin/python scripts/bench_resolution.py [--data ../shared/benchmarks] [--only inspire,dblp,cora,synthetic]

- DBLP-Scholar, whole tables (2,516 DBLP + 11,151 Scholar records in one table with a
  ``source`` column): pairwise precision/recall/F1 of the DBLP x Scholar pairs implied by the
  clusters against the one-to-one gold, with and without ``one_to_one_between='source'``.
- Cora (1,295 and 1,879 citation records): pairwise P/R/F1 of the dedup clusters.
- INSPIRE-HEP "wang" (15,424 author mentions, 524 people): B-cubed and pairwise P/R/F1 of
  ``resolve_authors`` beside the naive floors (exact full name; first initial + surname), computed
  here from the data; and the same mentions with every name cut to ``Family, I.`` (a set where a
  name says little and many people share one, as on author-name sets of common names).
- Synthetic people and papers (``benchmarks.bibliographies``, seeded): both matchers.

Records are mapped into the matcher's schema here (the public files have shifted and messy
columns); the library itself has no knowledge of these data sets.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.resolution import match_papers, resolve_authors, resolve_papers  # noqa: E402
from pipelines.core.resolution.names import split_author_list  # noqa: E402
from benchmarks.bibliographies import synthetic_mentions, synthetic_papers  # noqa: E402
from pipelines.settings import Settings  # noqa: E402

# The matchers' tuning settings (SCHOLARHOUSE_MATCH_WORKERS, SCHOLARHOUSE_AUTHOR_BATCH) apply as in a run.
_SETTINGS = Settings.from_env()
PAPERS = {"workers": _SETTINGS.match_workers}
AUTHORS = {"workers": _SETTINGS.match_workers, "batch": _SETTINGS.author_batch}

_YEAR = re.compile(r"(1[89]\d\d|20\d\d)")


def _year(value: str | None) -> int | None:
    if not value:
        return None
    m = _YEAR.search(value)
    return int(m.group(1)) if m else None


def pairwise_scores(predicted: set[tuple[str, str]], gold: set[tuple[str, str]]) -> tuple[float, float, float]:
    tp = len(predicted & gold)
    precision = tp / len(predicted) if predicted else 1.0
    recall = tp / len(gold) if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def cluster_pairs(assignments: pl.DataFrame, id_col: str = "record_id", cluster_col: str = "paper_id") -> set[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for members in assignments.group_by(cluster_col).agg(pl.col(id_col)).get_column(id_col).to_list():
        members = sorted(members)
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                pairs.add((members[a], members[b]))
    return pairs


def report(name: str, p: float, r: float, f: float, seconds: float, extra: str = "") -> None:
    print(f"{name:<48} P={p:.3f} R={r:.3f} F1={f:.3f}  {seconds:6.2f}s {extra}")


# --- DBLP-Scholar -----------------------------------------------------------------------------

def dblp_scholar_records(folder: Path) -> tuple[pl.DataFrame, set[tuple[str, str]]]:
    dblp = pl.read_csv(folder / "dblp_jedai.csv", infer_schema=False)
    scholar = pl.read_csv(folder / "scholar_subset.csv", infer_schema=False)
    gold = pl.read_csv(folder / "jedai_gold_pairs.csv", infer_schema=False).filter(pl.col("scholar_in_subset") == "True")

    def to_records(df: pl.DataFrame, source: str) -> pl.DataFrame:
        rows = []
        for r in df.iter_rows(named=True):
            year, venue = _year(r["year"]), r["venue"]
            # Scholar rows are shifted: a bare year often sits in the venue column.
            if year is None and venue and re.fullmatch(r"\s*(1[89]|20)\d\d\s*", venue):
                year, venue = int(venue), None
            rows.append(
                {
                    "record_id": f"{source}:{r['jedai_idx']}",
                    "title": r["title"] or "",
                    "authors": split_author_list(r["authors"]),
                    "venue": venue,
                    "year": year,
                    "source": source,
                }
            )
        return pl.DataFrame(rows, schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64, "source": pl.String})

    records = pl.concat([to_records(dblp, "dblp"), to_records(scholar, "scholar")])
    gold_pairs = {(f"dblp:{d}", f"scholar:{s}") for d, s in gold.select("dblp_jedai_idx", "scholar_jedai_idx").iter_rows()}
    return records, gold_pairs


def dblp_cross_pairs(assignments: pl.DataFrame) -> set[tuple[str, str]]:
    pairs = set()
    for members in assignments.group_by("paper_id").agg("record_id").get_column("record_id").to_list():
        if len(members) < 2:
            continue
        d = [m for m in members if m.startswith("dblp:")]
        s = [m for m in members if m.startswith("scholar:")]
        pairs.update((a, b) for a in d for b in s)
    return pairs


def bench_dblp_scholar(data: Path) -> None:
    records, gold = dblp_scholar_records(data / "dblp_scholar")
    for label, option in (("DBLP-Scholar one_to_one_between='source'", "source"), ("DBLP-Scholar (no one-to-one)", None)):
        start = time.perf_counter()
        result = match_papers(records, one_to_one_between=option, **PAPERS)
        seconds = time.perf_counter() - start
        p, r, f = pairwise_scores(dblp_cross_pairs(result), gold)
        report(label, p, r, f, seconds, f"({records.height} records, {len(gold)} gold pairs)")


# --- Cora -------------------------------------------------------------------------------------

def _clean(value: str | None) -> str:
    return (value or "").strip().strip(",.;:'\"` ").strip()


def cora_1295_records(folder: Path) -> tuple[pl.DataFrame, dict[str, str]]:
    df = pl.read_csv(folder / "cora_1295.csv", infer_schema=False)
    clusters = pl.read_csv(folder / "cora_1295_clusters.csv", infer_schema=False)
    rows = []
    for r in df.iter_rows(named=True):
        rows.append(
            {
                "record_id": f"{int(r['id']):05d}",
                "title": _clean(r["title"]),
                "authors": split_author_list(_clean(r["author"])),
                "venue": _clean(r["venue"]) or None,
                "year": _year(r["year"]),
            }
        )
    truth = {f"{int(a):05d}": b for a, b in clusters.iter_rows()}
    return pl.DataFrame(rows, schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64}), truth


def cora_1879_records(folder: Path) -> tuple[pl.DataFrame, dict[str, str]]:
    df = pl.read_csv(folder / "cora_1879_labelled.csv", infer_schema=False)
    rows, truth = [], {}
    for r in df.iter_rows(named=True):
        rid = f"{int(r['id']):05d}"
        venue = next((_clean(r[c]) for c in ("journal", "booktitle", "institution", "publisher") if _clean(r[c])), None)
        rows.append(
            {
                "record_id": rid,
                "title": _clean(r["title"]),
                "authors": split_author_list(_clean(r["author"])),
                "venue": venue,
                "year": _year(r["year"]) or _year(r["date"]),
            }
        )
        truth[rid] = r["label"]
    return pl.DataFrame(rows, schema={"record_id": pl.String, "title": pl.String, "authors": pl.List(pl.String), "venue": pl.String, "year": pl.Int64}), truth


def bench_cora(data: Path) -> None:
    for label, loader in (("Cora 1295", cora_1295_records), ("Cora 1879 (labelled)", cora_1879_records)):
        records, truth = loader(data / "cora")
        start = time.perf_counter()
        result = match_papers(records, **PAPERS)
        seconds = time.perf_counter() - start
        gold_frame = pl.DataFrame({"record_id": list(truth), "paper_id": list(truth.values())})
        p, r, f = pairwise_scores(cluster_pairs(result), cluster_pairs(gold_frame))
        report(label, p, r, f, seconds, f"({records.height} records, {result['paper_id'].n_unique()} clusters, truth {len(set(truth.values()))})")


# --- INSPIRE-HEP "wang" (authors) ------------------------------------------------------------

def b_cubed(predicted: list[str], truth: list[str]) -> tuple[float, float, float]:
    """Mention-averaged B-cubed precision, recall and F1."""
    from collections import Counter

    n = len(truth)
    cell, sizes_p, sizes_t = Counter(zip(predicted, truth)), Counter(predicted), Counter(truth)
    p = sum(c * c / sizes_p[a] for (a, _), c in cell.items()) / n
    r = sum(c * c / sizes_t[t] for (_, t), c in cell.items()) / n
    return p, r, 2 * p * r / (p + r)


def inspire_mentions(folder: Path, initials_only: bool = False) -> tuple[pl.DataFrame, list[str]]:
    from pipelines.core.resolution.names import parse_name

    raw = pl.read_csv(folder / "mentions.csv", infer_schema=False).join(
        pl.read_csv(folder / "truth.csv", infer_schema=False), on="mention_id")
    if initials_only:
        def cut(name: str | None) -> str | None:
            reading = parse_name(name).primary
            if reading is None or not reading.given:
                return name
            return f"{reading.family.title()}, {reading.given[0].initials[0].upper()}."
        distinct = raw["name"].unique().to_list()
        raw = raw.with_columns(pl.col("name").replace_strict(distinct, [cut(x) for x in distinct]))
    frame = raw.select(
        "mention_id", pl.col("name").fill_null(""), "paper_id",
        pl.col("coauthors").fill_null("").str.split("; ").list.eval(pl.element().filter(pl.element() != "")).alias("coauthors"),
        "title", pl.col("year").cast(pl.Int64, strict=False), "venue", "affiliation",
    )
    return frame, raw["person_id"].to_list()


def _floor(frame: pl.DataFrame, truth: list[str], key) -> tuple[float, float, float]:
    names = frame["name"].to_list()
    return b_cubed([key(x) for x in names], truth)


def bench_inspire(data: Path) -> None:
    from pipelines.core.resolution.names import parse_name

    folder = data / "and_inspire_wang"
    exact = lambda x: parse_name(x).folded  # noqa: E731
    initial = lambda x: parse_name(x).primary.key if parse_name(x).primary else x  # noqa: E731
    for label, initials_only in (('INSPIRE "wang" authors', False), ('INSPIRE "wang", names cut to Family, I.', True)):
        frame, truth = inspire_mentions(folder, initials_only)
        start = time.perf_counter()
        result, review = resolve_authors(frame, **AUTHORS)
        seconds = time.perf_counter() - start
        author = dict(zip(result["mention_id"].to_list(), result["author_id"].to_list()))
        predicted = [author[i] for i in frame["mention_id"].to_list()]
        p, r, f = b_cubed(predicted, truth)
        floors = "; ".join(f"{name} F1 {_floor(frame, truth, key)[2]:.3f}" for name, key in
                           (("exact-name floor", exact), ("initial+surname floor", initial)))
        report(label + " (B3)", p, r, f, seconds, f"({frame.height} mentions; {floors}; review queue {review.height})")


# --- Synthetic --------------------------------------------------------------------------------

def bench_synthetic() -> None:
    papers, paper_truth = synthetic_papers(seed=7)
    start = time.perf_counter()
    result, review = resolve_papers(papers, **PAPERS)
    seconds = time.perf_counter() - start
    p, r, f = pairwise_scores(cluster_pairs(result), cluster_pairs(paper_truth, cluster_col="true_paper"))
    report("Synthetic papers", p, r, f, seconds, f"({papers.height} records, review queue {review.height})")

    mentions, person_truth = synthetic_mentions(seed=7)
    start = time.perf_counter()
    result, review = resolve_authors(mentions, **AUTHORS)
    seconds = time.perf_counter() - start
    truth = dict(person_truth.select("mention_id", "true_person").iter_rows())
    p, r, f = pairwise_scores(
        cluster_pairs(result, "mention_id", "author_id"),
        cluster_pairs(person_truth, "mention_id", "true_person"),
    )
    same = sum(truth[a] == truth[b] for a, b in review.select("left_id", "right_id").iter_rows())
    report(
        "Synthetic authors", p, r, f, seconds,
        f"({mentions.height} mentions, review queue {review.height}, {same} of them one person)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "benchmarks")
    parser.add_argument("--only", default="inspire,dblp,cora,synthetic",
                        help="comma-separated subset of inspire,dblp,cora,synthetic")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    public = wanted & {"inspire", "dblp", "cora"}
    if public and not args.data.is_dir():
        parser.exit(2, f"bench_resolution: no benchmark data at {args.data} (the public sets sit beside the "
                       f"checkout in ../shared/benchmarks): pass --data DIR, or --only synthetic\n")
    if "inspire" in wanted:
        bench_inspire(args.data)
    if "dblp" in wanted:
        bench_dblp_scholar(args.data)
    if "cora" in wanted:
        bench_cora(args.data)
    if "synthetic" in wanted:
        bench_synthetic()


if __name__ == "__main__":
    main()

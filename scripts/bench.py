"""`make bench`: the whole pipeline on generated corpora, stage by stage, with quality against truth.

For each size (default 1k, 10k, 100k profiles) it generates a deterministic synthetic corpus
(benchmarks.synthetic), then runs the same step functions the Dagster assets run, on a fresh
warehouse file:

  parse    decode + parse every page (pipelines.staging.build)      land     write raw + staging rows
  resolve papers / resolve authors (pipelines.core.resolution via pipelines.core.build)
  core     the rest of the core step (read staging, stable ids, assemble, write)
  marts    every mart (pipelines.marts.build)                      exports  Parquet + analytics copy

and prints per stage: wall time, rows/s and peak memory (each stage's own peak RSS); the
end-to-end time; the cost ratio between sizes; pairwise precision/recall/F1 of paper and author
resolution against the generator's ground truth; Splink (DuckDB backend) on the same paper
records, side by side; and incremental nights where 1% of the captures changed (each in a
fresh process, as the nightly schedule runs every night; ``--incremental-nights``, default 5 in a
row at every size up to 100k, shows whether a night's cost grows with the nights stored); and last,
issue 23's targets beside what this run measured (``targets``).

Results go to bench_results/latest.json and bench_results/latest.md (git-ignored);
docs/benchmarks.md summarises the latest figures. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines import warehouse  # noqa: E402
from pipelines.core import build as core_build  # noqa: E402
from pipelines.staging import build as landing  # noqa: E402
from pipelines.marts import build as marts  # noqa: E402
from pipelines.publish import exports as publish  # noqa: E402
from pipelines.core.identity.overrides import Overrides  # noqa: E402
from pipelines.timing import StageTimer, peak_memory_mb  # noqa: E402
from pipelines.core.resolution.runtime import MatchOptions  # noqa: E402
from pipelines.settings import Settings  # noqa: E402
from pipelines.ingest.sources.folder import FolderSource  # noqa: E402
from benchmarks.synthetic import generate_corpus, mutate  # noqa: E402
from pipelines.textnorm import match_key  # noqa: E402

# A Monday and a Tuesday: Sunday nights resolve every author in any case (incremental.scheduled_full).
NIGHT_1 = date(2026, 11, 23)
NIGHT_2 = date(2026, 11, 24)
STAGES = ["parse", "land", "resolve_papers", "resolve_authors", "core", "marts", "exports"]


# ---------------------------------------------------------------------------------------- quality

def pairwise_scores(pred: pl.DataFrame, truth_col: str = "truth", pred_col: str = "pred") -> dict:
    """Pairwise precision/recall/F1 of a clustering, counted without enumerating pairs."""
    def pairs(counts: pl.Series) -> int:
        return int((counts * (counts - 1) // 2).sum())
    tp = pairs(pred.group_by(pred_col, truth_col).len()["len"])
    predicted = pairs(pred.group_by(pred_col).len()["len"])
    actual = pairs(pred.group_by(truth_col).len()["len"])
    precision = tp / predicted if predicted else 1.0
    recall = tp / actual if actual else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "records": pred.height, "true_pairs": actual, "predicted_pairs": predicted}


def paper_quality(con, truth_dir: Path, day: date) -> tuple[dict, pl.DataFrame]:
    truth = pl.read_parquet(truth_dir / "listings.parquet").select("source", "source_profile_id", "position", "paper_truth_id")
    ours = warehouse.read_frame(con, """
        SELECT l.source, l.source_profile_id, l.position, l.listing_key, pl.paper_id
        FROM staging.listings l JOIN core.paper_listings pl USING (listing_id)
        WHERE l.partition_date = ?""", [day])
    joined = ours.join(truth.cast({"position": pl.Int32}), on=["source", "source_profile_id", "position"])
    scores = pairwise_scores(joined.select(pred="paper_id", truth="paper_truth_id"))
    scores["unmatched_truth_rows"] = truth.height - joined.height
    return scores, joined


def author_quality(core: core_build.CoreTables, listings_truth: pl.DataFrame, truth_dir: Path) -> dict:
    mentions = pl.read_parquet(truth_dir / "mentions.parquet")
    keyed = listings_truth.select("source", "source_profile_id", "position", "listing_key")
    owners = (
        mentions.filter(pl.col("byline_index").is_null())
        .select("source", "source_profile_id", "person_truth_id")
        .join(keyed, on=["source", "source_profile_id"])
        .select(key=pl.concat_str(pl.lit("owner:"), "listing_key"), truth="person_truth_id")
    )
    bylines = (
        mentions.filter(pl.col("byline_index").is_not_null())
        .join(keyed, on=["source", "source_profile_id", "position"])
        .with_columns(name_key=pl.col("name").map_elements(match_key, return_dtype=pl.String))
        .select(key=pl.concat_str(pl.lit("byline:"), "listing_key", pl.lit(":"), "name_key"), truth="person_truth_id")
    )
    truth = pl.concat([owners, bylines]).unique("key")
    joined = core.mention_authors.join(truth, on="key")
    return pairwise_scores(joined.select(pred="author_id", truth="truth"))


def splink_side_by_side(con, truth_joined: pl.DataFrame, ours_seconds: float) -> dict:
    try:
        sys.path.insert(0, str(ROOT / "scripts"))
        from splink_baseline import run_splink  # type: ignore[import-not-found]
    except ImportError as exc:
        return {"skipped": f"splink not available ({exc}); install with: pip install -e '.[bench]'"}
    records = core_build.paper_records_from_warehouse(con)
    clusters, info = run_splink(records)
    pred = clusters.join(truth_joined.select(record_id="listing_key", truth="paper_truth_id").unique("record_id"), on="record_id")
    scores = pairwise_scores(pred.select(pred="cluster_id", truth="truth"))
    return {**scores, "seconds": round(info["seconds"], 2), "ours_seconds": round(ours_seconds, 2),
            "speedup": round(info["seconds"] / max(ours_seconds, 1e-9), 2), "blocking": info.get("blocking")}


# ---------------------------------------------------------------------------------------- one night

def run_night(wh: Path, captures: Path, day: date, exports_dir: Path) -> tuple[dict, core_build.CoreTables]:
    timer = StageTimer()
    # The tuning settings (SCHOLARHOUSE_MATCH_WORKERS, ..._AUTHOR_BATCH, ..._INCREMENTAL_RESOLUTION,
    # ..._PARSE_*, ..._NOVELTY_WINDOW, ..._DUCKDB_MEMORY_LIMIT) apply as in a Dagster run; the paths are the bench's.
    s = Settings.from_env().with_warehouse(wh)
    options = MatchOptions(workers=s.match_workers, author_batch=s.author_batch, incremental=s.incremental_resolution)
    start = time.perf_counter()
    with warehouse.connect(wh, memory_limit=s.duckdb_memory_limit) as con:
        warehouse.ensure_schema(con)
        land = landing.land_partition(con, FolderSource(captures).iter_captures(day), day, timer=timer)
        staged = landing.stage_partition(con, day, timer=timer, shard_pages=s.parse_shard_pages, workers=s.parse_workers)
        core, _ = core_build.resolve_in_warehouse(con, day, Overrides(), timer=timer, options=options)
        mart_counts = marts.build_marts(con, day, timer=timer, novelty_window=s.novelty_window,
                                        epoch_days=s.novelty_epoch_days)
    with timer.stage("exports"), warehouse.connect(wh, read_only=True, memory_limit=s.duckdb_memory_limit) as con:
        publish.export_tables(con, exports_dir, day)
        publish.publish_export(exports_dir, day)  # the bench writes no report
    with timer.stage("exports"):
        publish.publish_analytics_copy(wh, s.analytics_path, memory_limit=s.duckdb_memory_limit)
    total = time.perf_counter() - start
    stored_mb = warehouse_mb(wh)
    t = timer.summary()
    # "parse" includes reading and decoding the files and exporting the pages to parse as shards; "core" is the core step minus the two matchers
    merged = {
        "parse": _sum(t, ["read_and_decode", "plan", "parse"], rows=t.get("parse", {}).get("rows") or land["pages"]),
        "land": t.get("land", {}),
        "resolve_papers": t.get("resolve_papers", {}),
        "resolve_authors": t.get("resolve_authors", {}),
        "core": _sum(t, ["core_read", "core_write"]),
        "marts": t.get("marts", {}),
        "exports": t.get("exports", {}),
    }
    accounted = sum(v.get("seconds", 0) for v in merged.values())
    merged["core"]["seconds"] = round(merged["core"]["seconds"] + max(0.0, total - accounted), 3)  # assemble etc.
    night = {"stages": merged, "end_to_end_s": round(total, 2), "pages": land["pages"],
             "listings": staged.get("parsed_listings", 0), "pages_parsed": staged["pages_parsed"],
             "pages_reused": staged["pages_unchanged_reused"],
             # the night's peak is the largest stage peak (each stage resets the high-water mark)
             "peak_mb": round(max([s.get("peak_mb", 0) for s in merged.values()] + [peak_memory_mb() or 0]), 1),
             "peak_with_workers_mb": round(max([s.get("peak_with_workers_mb", 0) for s in merged.values()]
                                               + [peak_memory_mb() or 0]), 1),
             "papers": core.papers.height, "authors": core.authors.height, "warehouse_mb": stored_mb,
             "novelty_scored": mart_counts.get("papers scored tonight")}
    return night, core


def warehouse_mb(wh: Path) -> float:
    """The warehouse's stored data after a night: its used blocks (the file may hold free blocks
    left by replaced tables, which DuckDB reuses the next night)."""
    with warehouse.connect(wh, read_only=True) as con:
        used, size = con.execute("SELECT used_blocks, block_size FROM pragma_database_size()").fetchall()[0]
    return round(used * size / 1e6, 1)


def night_in_fresh_process(wh: Path, captures: Path, day: date, exports_dir: Path, truth: Path) -> dict:
    """:func:`run_night` in a new Python process, as the nightly schedule runs it (every night is a
    new Dagster run): the second night does not inherit the first night's heap, caches and
    warmed-up imports, which made it both slower and faster by turns in one process. Also
    returns the night's resolution quality against ``truth`` and how the author matcher ran."""
    result = wh.parent / f"night-{day.isoformat()}.json"
    cmd = [sys.executable, __file__, "--night", str(wh), str(captures), day.isoformat(), str(exports_dir), str(truth), str(result)]
    subprocess.run(cmd, check=True)
    return json.loads(result.read_text())


def _night_main(argv: list[str]) -> int:
    wh, captures, day, exports_dir, truth, result = argv
    night, core = run_night(Path(wh), Path(captures), date.fromisoformat(day), Path(exports_dir))
    night["author_resolution"] = core.stats.get("author_resolution", {})
    night["paper_resolution"] = core.stats.get("paper_resolution", {})
    with warehouse.connect(Path(wh), read_only=True) as con:
        papers, joined = paper_quality(con, Path(truth), date.fromisoformat(day))
    night["quality"] = {"papers": papers, "authors": author_quality(core, joined, Path(truth))}
    Path(result).write_text(json.dumps(night, default=str))
    return 0


def _sum(timings: dict, names: list[str], rows: int | None = None) -> dict:
    parts = [timings[n] for n in names if n in timings]
    seconds = sum(p["seconds"] for p in parts)
    out = {"seconds": round(seconds, 3), "peak_mb": max((p.get("peak_mb", 0) for p in parts), default=0.0),
           "peak_with_workers_mb": max((p.get("peak_with_workers_mb", 0) for p in parts), default=0.0)}
    if rows:
        out["rows"] = rows
        out["rows_per_s"] = round(rows / max(seconds, 1e-9), 1)
    return out


def later_night(day: date) -> date:
    """The next night after ``day`` that is not a Sunday (Sunday nights re-resolve every author by
    design, incremental.scheduled_full: a different night, not the growth being measured)."""
    day += timedelta(days=1)
    return day + timedelta(days=1) if day.weekday() == 6 else day


def exit_reason(returncode: int) -> str:
    """How a night's or a size's process ended, for the report (-9: the kernel's out-of-memory kill)."""
    return f"exit {returncode}" + (" (killed: out of memory?)" if returncode == -9 else "")


def bench_size(profiles: int, work: Path, seed: int, splink: bool, incremental_share: float,
               incremental_nights: int = 1) -> dict:
    corpus = work / f"corpus-{profiles}"
    if corpus.exists():
        shutil.rmtree(corpus)
    t0 = time.perf_counter()
    generate_corpus(corpus, profiles=profiles, seed=seed)
    generated_s = time.perf_counter() - t0
    wh_dir = work / f"warehouse-{profiles}"
    shutil.rmtree(wh_dir, ignore_errors=True)
    wh_dir.mkdir(parents=True)
    wh = wh_dir / "scholarhouse.duckdb"
    result: dict = {"profiles": profiles, "generate_s": round(generated_s, 2)}

    night, core = run_night(wh, corpus / "captures", NIGHT_1, wh_dir / "exports")
    result["full"] = night
    with warehouse.connect(wh, read_only=True) as con:
        papers, joined = paper_quality(con, corpus / "truth", NIGHT_1)
        result["quality"] = {"papers": papers, "authors": author_quality(core, joined, corpus / "truth")}
        if splink:
            result["splink"] = splink_side_by_side(con, joined, night["stages"]["resolve_papers"]["seconds"])
            print(f"   Splink at {profiles:,}: {json.dumps(result['splink'], default=str)}", flush=True)
    # The full night's frames (~10 GB at 100k) are not needed by the 1 % nights, each a process of its
    # own: held here, they and a 1 % night's process outgrew a 24 GB machine (OOM-killed at 100k).
    del core, joined
    gc.collect()
    # Printed now, so a later night that fails does not take the full night's figures with it.
    figures = {"end_to_end_s": night["end_to_end_s"], "peak_mb": night["peak_mb"],
               "peak_with_workers_mb": night["peak_with_workers_mb"],
               "stages_s": {k: v.get("seconds") for k, v in night["stages"].items()}, "quality": result["quality"]}
    print(f"   full night at {profiles:,}: {json.dumps(figures)}", flush=True)

    if incremental_share > 0:
        # 1 % nights in a row on the same warehouse, each changing another 1 %: the first is "the"
        # incremental night; the rest show whether a night's cost grows with the nights stored.
        day, nights = NIGHT_2, []
        for i in range(incremental_nights):
            day = later_night(day) if i else day
            mutate(corpus, share=incremental_share, seed=seed + 1 + i)
            try:
                n = night_in_fresh_process(wh, corpus / "captures", day, wh_dir / "exports", corpus / "truth")
            except subprocess.CalledProcessError as exc:
                # kept in the result with the nights before it: the full night and Splink are not lost with it
                result["incremental_failed"] = f"night {i + 2} ({day.isoformat()}) failed: {exit_reason(exc.returncode)}"
                print(f"   {result['incremental_failed']}", flush=True)
                break
            n["share_changed"] = incremental_share
            n["ratio_to_full"] = round(n["end_to_end_s"] / max(night["end_to_end_s"], 1e-9), 4)
            if not i:
                result["incremental"] = n
            nights.append({"night": i + 2, "day": day.isoformat(), "end_to_end_s": n["end_to_end_s"],
                           "ratio_to_full": n["ratio_to_full"],
                           "stages": {k: v.get("seconds", 0) for k, v in n["stages"].items()},
                           "warehouse_mb": n["warehouse_mb"], "novelty_scored": n.get("novelty_scored"),
                           "peak_with_workers_mb": n.get("peak_with_workers_mb"),
                           "quality": n["quality"]})
            print(f"   1 % night {i + 2} at {profiles:,}: {n['end_to_end_s']:.1f} s, {n['ratio_to_full']:.2f} of the full night",
                  flush=True)
        result["incremental_nights"] = nights
    shutil.rmtree(corpus, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------------------- report

# Issue 23's targets (docs/benchmarks.md, "Targets and the gap"): the size they are measured at and the bounds.
TARGET_PROFILES = 100_000
TARGET_SECONDS = 600.0
TARGET_PEAK_MB = 8 * 1024.0  # "8 GB", in the MiB the stage timer measures, worker processes included
TARGET_SCALING = 11.0
TARGET_NIGHT_RATIO = 0.05
TARGET_NIGHTS = 5
TARGET_SPLINK_SPEEDUP = 5.0


def targets(results: list[dict], failed: dict | None = None) -> list[str]:
    """One row per target: what this run measured and whether it meets it; a target needing a size
    or a measurement the run did not make says so instead of passing, and a size whose process
    failed (``failed``: profiles -> why) fails every target it was needed for."""
    failed = {int(k): v for k, v in (failed or {}).items()}
    by_size = {r["profiles"]: r for r in results}
    big, small = by_size.get(TARGET_PROFILES), by_size.get(TARGET_PROFILES // 10)
    at = f"{TARGET_PROFILES:,}"
    rows = []

    def row(target: str, measured: str, met: bool | None, unjudged: str = "not measured") -> None:
        rows.append(f"| {target} | {measured} | {unjudged if met is None else 'met' if met else '**not met**'} |")

    def missing(size: int, otherwise: str) -> tuple[str, bool | None]:
        return (f"the {size:,} run failed: {failed[size]}", False) if size in failed else (otherwise, None)

    if big:
        full = big["full"]
        row(f"{at} profiles end to end ≤ {TARGET_SECONDS / 60:.0f} min", f"{full['end_to_end_s']:,.0f} s",
            full["end_to_end_s"] <= TARGET_SECONDS)
        # every night of the size counts: a 1 % night holds the corpus too (17.6 GB at 100k, 2026-11-26)
        peaks = [full["peak_with_workers_mb"]] + [n["peak_with_workers_mb"] for n in big.get("incremental_nights", [])
                                                  if n.get("peak_with_workers_mb")]
        killed = big.get("incremental_failed", "")
        row(f"peak memory ≤ {TARGET_PEAK_MB:,.0f} MB with worker processes, any night",
            f"{max(peaks):,.0f} MB (full night {full['peak_with_workers_mb']:,.0f})" + (f"; then {killed}" if killed else ""),
            max(peaks) <= TARGET_PEAK_MB and exit_reason(-9) not in killed)
    else:
        row(f"{at} profiles end to end ≤ {TARGET_SECONDS / 60:.0f} min, ≤ {TARGET_PEAK_MB:,.0f} MB", *missing(TARGET_PROFILES, f"no {at} run"))
    if big and small:
        x = big["full"]["end_to_end_s"] / max(small["full"]["end_to_end_s"], 1e-9)
        row(f"{TARGET_PROFILES // 10:,} → {at} ≤ {TARGET_SCALING:g}×", f"{x:.1f}×", x <= TARGET_SCALING)
    else:
        lost = next((size for size in (TARGET_PROFILES // 10, TARGET_PROFILES) if size in failed), None)
        row(f"{TARGET_PROFILES // 10:,} → {at} ≤ {TARGET_SCALING:g}×", *(missing(lost, "") if lost else ("needs both sizes", None)))
    nights = (big or {}).get("incremental_nights") or []
    night_target = f"a 1 % night ≤ {TARGET_NIGHT_RATIO:.0%} of a full night at {at}, over ≥ {TARGET_NIGHTS} nights"
    if nights:
        ratios = [n["ratio_to_full"] for n in nights]
        stored = [n.get("warehouse_mb") or 0 for n in nights]
        row(night_target,
            f"{len(nights)} nights: {min(ratios):.2f}–{max(ratios):.2f} of the full night "
            f"({', '.join(format(n['end_to_end_s'], ',.0f') for n in nights)} s; stored MB {stored[0]:,.0f} → {stored[-1]:,.0f})"
            + (f"; then {big['incremental_failed']}" if big.get("incremental_failed") else ""),
            max(ratios) <= TARGET_NIGHT_RATIO and len(nights) >= TARGET_NIGHTS and not big.get("incremental_failed"))
    elif (big or {}).get("incremental_failed"):
        row(night_target, big["incremental_failed"], False)
    else:
        row(night_target, *missing(TARGET_PROFILES, f"no 1 % nights at {at} (`--incremental-max`)"))
    sp = (big or {}).get("splink") or {}
    if sp and "skipped" not in sp:
        ours = big["quality"]["papers"]["f1"]
        row(f"paper resolution ≥ {TARGET_SPLINK_SPEEDUP:g}× Splink's speed at {at}, F1 ≥ Splink's",
            f"{sp['speedup']}× ({sp['ours_seconds']:,.1f} s against {sp['seconds']:,.1f} s), F1 {ours:.3f} against {sp['f1']:.3f}",
            sp["speedup"] >= TARGET_SPLINK_SPEEDUP and ours >= sp["f1"])
    else:
        row(f"paper resolution ≥ {TARGET_SPLINK_SPEEDUP:g}× Splink's speed at {at}, F1 ≥ Splink's",
            *missing(TARGET_PROFILES, sp.get("skipped", f"no Splink run at {at}")))
    if results:
        # "unchanged" needs a reference run: the figures are printed here, compared in docs/benchmarks.md
        row("quality against the generator's truth unchanged",
            "; ".join(f"{r['profiles']:,}: papers F1 {r['quality']['papers']['f1']:.3f}, authors F1 {r['quality']['authors']['f1']:.3f}"
                      for r in results), None, "against the last run in docs/benchmarks.md")
    return ["", "Issue 23's targets:", "", "| target | measured | status |", "| --- | --- | --- |", *rows]


def render(results: list[dict], meta: dict, with_targets: bool = True) -> str:
    lines = [f"# scholarhouse benchmark — {meta['date']} on {meta['machine']}", ""]
    # Peak MB: this process; with workers: plus its worker processes (parse, title diffs, author batches), sampled.
    lines.append("| profiles | stage | seconds | rows/s | peak MB | peak MB with workers |")
    lines.append("| ---: | --- | ---: | ---: | ---: | ---: |")
    for r in results:
        for stage in STAGES:
            s = r["full"]["stages"].get(stage, {})
            rate = f"{s['rows_per_s']:,.0f}" if s.get("rows_per_s") else ""
            lines.append(f"| {r['profiles']:,} | {stage} | {s.get('seconds', 0):.2f} | {rate} | {s.get('peak_mb', 0):,.0f} | "
                         f"{s.get('peak_with_workers_mb', 0):,.0f} |")
        lines.append(f"| {r['profiles']:,} | **end to end** | **{r['full']['end_to_end_s']:.2f}** | | "
                     f"{r['full']['peak_mb']:,.0f} | {r['full']['peak_with_workers_mb']:,.0f} |")
    lines += ["", "| profiles | pages | listings | papers | authors | papers P/R/F1 | authors P/R/F1 | incremental (1%) s | ratio | "
              "stored MB: night 1 → 2 |",
              "| ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for r in results:
        qp, qa, inc = r["quality"]["papers"], r["quality"]["authors"], r.get("incremental", {})
        lines.append(f"| {r['profiles']:,} | {r['full']['pages']:,} | {r['full']['listings']:,} | {r['full']['papers']:,} | "
                     f"{r['full']['authors']:,} | {qp['precision']:.3f} / {qp['recall']:.3f} / {qp['f1']:.3f} | "
                     f"{qa['precision']:.3f} / {qa['recall']:.3f} / {qa['f1']:.3f} | {inc.get('end_to_end_s', '')} | "
                     f"{inc.get('ratio_to_full', '')} | {r['full'].get('warehouse_mb', '')}"
                     f"{' → ' + str(inc['warehouse_mb']) if inc.get('warehouse_mb') else ''} |")
    for r in results:
        inc = r.get("incremental")
        if inc and inc.get("quality"):
            ar, qp, qa = inc.get("author_resolution", {}), inc["quality"]["papers"], inc["quality"]["authors"]
            how = (f"{ar['resolved']:,} mentions re-resolved ({ar['changed']:,} changed, {ar['removed']:,} removed)"
                   if ar.get("mode") == "incremental" else f"full ({ar.get('reason', '?')})")
            pr = inc.get("paper_resolution", {})
            how_papers = (f"{pr['resolved']:,} records re-resolved ({pr['changed']:,} changed, {pr['removed']:,} removed)"
                          if pr.get("mode") == "incremental" else f"full ({pr.get('reason', '?')})")
            lines += ["", f"Incremental night at {r['profiles']:,}: papers {how_papers}; authors {how}; quality against the changed truth: "
                          f"papers {qp['precision']:.3f} / {qp['recall']:.3f} / {qp['f1']:.3f}, "
                          f"authors {qa['precision']:.3f} / {qa['recall']:.3f} / {qa['f1']:.3f} (P / R / F1)."]
    for r in results:
        if r.get("incremental_failed"):
            lines += ["", f"**1 % nights at {r['profiles']:,}: {r['incremental_failed']}**"
                      + ("; the nights before it are below." if r.get("incremental_nights") else ".")]
    grown = [r for r in results if r.get("incremental_nights")]
    if grown:
        lines += ["", "1 % nights in a row (night 2 is the incremental night above; each later night changes another 1 %):", "",
                  "| profiles | night | seconds | / full night | " + " | ".join(STAGES) + " | stored MB | papers scored |",
                  "| ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in STAGES) + " | ---: | ---: |"]
        for r in grown:
            for n in r["incremental_nights"]:
                lines.append(f"| {r['profiles']:,} | {n['night']} | {n['end_to_end_s']:.1f} | {n['ratio_to_full']:.2f} | "
                             + " | ".join(f"{n['stages'].get(st, 0):.1f}" for st in STAGES) + f" | {n.get('warehouse_mb', '')} | "
                             + f"{n.get('novelty_scored') if n.get('novelty_scored') is not None else ''} |")
    ratios = [(a["profiles"], b["profiles"], round(b["full"]["end_to_end_s"] / max(a["full"]["end_to_end_s"], 1e-9), 2))
              for a, b in zip(results, results[1:])]
    if ratios:
        lines += ["", "Cost ratio between sizes: " + ", ".join(f"{a:,} → {b:,}: {x}×" for a, b, x in ratios)]
    sp = [r for r in results if "splink" in r]
    if sp:
        lines += ["", "| profiles | Splink F1 | ours F1 | Splink s | ours s | ours faster by |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in sp:
            s = r["splink"]
            if "skipped" in s:
                lines.append(f"| {r['profiles']:,} | {s['skipped']} | | | | |")
            else:
                lines.append(f"| {r['profiles']:,} | {s['f1']:.3f} | {r['quality']['papers']['f1']:.3f} | {s['seconds']:.1f} | "
                             f"{s['ours_seconds']:.1f} | {s['speedup']}× |")
    if with_targets:
        lines += targets(results, meta.get("failed"))
    return "\n".join(lines) + "\n"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", type=Path, metavar="LATEST_JSON",
                        help="print the report of a saved run (its latest.json) again, running nothing")
    parser.add_argument("--work", type=Path, default=ROOT / "bench_results" / "work")
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results")
    parser.add_argument("--no-splink", action="store_true", help="skip the Splink side-by-side run")
    parser.add_argument("--splink-max", type=int, default=100000, help="largest size to run Splink on")
    parser.add_argument("--incremental-share", type=float, default=0.01)
    # issue 23's targets are the 1 % night at 100k, flat over >= 5 nights: the default run measures exactly that
    parser.add_argument("--incremental-max", type=int, default=100000,
                        help="largest size to run the 1 %% nights on (default 100k: each 100k night takes 18-22 minutes)")
    parser.add_argument("--incremental-nights", type=int, default=5,
                        help="1 %%-changed nights in a row after the full night, night 2 included (at least 1): "
                             "how a night's cost grows with the nights stored")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print(render(saved["results"], saved["meta"]))
        return 0
    if args.incremental_nights < 1:
        parser.error("--incremental-nights counts the 1 % nights including night 2: at least 1 (use --incremental-share 0 for none)")
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()}
    results = []
    for size in sorted(args.sizes):
        print(f"== {size:,} profiles", flush=True)
        # each size in its own process: peak memory and caches do not leak between sizes
        out = args.work / f"result-{size}.json"
        cmd = [sys.executable, __file__, "--one", str(size), "--seed", str(args.seed), "--work", str(args.work),
               "--incremental-share", str(args.incremental_share if size <= args.incremental_max else 0),
               "--incremental-nights", str(args.incremental_nights)]
        if args.no_splink or size > args.splink_max:
            cmd.append("--no-splink")
        proc = subprocess.run(cmd + ["--result", str(out)])
        if proc.returncode != 0:
            print(f"   size {size} failed (exit {proc.returncode})", file=sys.stderr)
            meta.setdefault("failed", {})[str(size)] = exit_reason(proc.returncode)
            continue
        results.append(json.loads(out.read_text()))
        print(render(results[-1:], meta, with_targets=False), flush=True)
    report = render(results, meta)
    (args.out / "latest.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    (args.out / "latest.md").write_text(report)
    print(report)
    print(f"written: {args.out / 'latest.md'} and latest.json")
    return 0 if len(results) == len(args.sizes) and not any(r.get("incremental_failed") for r in results) else 1


def one() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--no-splink", action="store_true")
    parser.add_argument("--incremental-share", type=float, default=0.01)
    parser.add_argument("--incremental-nights", type=int, default=1)
    args = parser.parse_args()
    result = bench_size(args.one, args.work, args.seed, not args.no_splink, args.incremental_share, args.incremental_nights)
    args.result.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--night"]:
        sys.exit(_night_main(sys.argv[2:]))
    sys.exit(one() if "--one" in sys.argv else main())

"""Synthetic capture corpora with ground truth, for the scale and resolution benchmarks.

``generate_corpus(out_dir, profiles=N, seed=S)`` writes

- ``captures/<nnn>_<hash>.txt|.html``: one profile page each (BZPEER or Scholar Feed), in the
  visible-text format of ``pipelines/samples`` or as HTML page source, with a sidecar
  ``<file>.meta.json`` = ``{"url": ..., "captured_at": ...}``;
- ``truth/``: ``listings.parquet`` (which paper each listed item is), ``mentions.parquet`` (who
  each shown name is: the profile owner and every byline name), ``profiles.parquet`` (who each
  page is about, its file, format and page kind — bad pages say what should be rejected),
  ``papers.parquet``, ``people.parquet``, ``authorships.parquet`` and ``summary.json``.

The corpus is a pure function of (profiles, seed, html_share, bad_page_share, captured_at):
the same arguments give byte-identical files, whatever the number of worker processes.
``mutate(out_dir, share, seed)`` (``mutation.py``) then changes a share of the pages in place (a
new paper listed, a changed count) and rewrites their truth, for incremental-run benchmarks; every
mutation batch is logged in ``truth/mutations.json`` so later batches replay earlier ones.

Design: ``world.py`` builds the latent world with numpy (people, communities, papers, which
site knows which papers); ``render.py`` renders one page at a time from it (bounded memory,
files streamed out); pages are rendered in contiguous chunks by worker processes (spawned, each
sent the world once) that write their parts, merged in page order at the end.
No Dagster imports.
"""

from __future__ import annotations

import ctypes
import gc
import json
import logging
import math
import multiprocessing as mp
import os
import pickle
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl

from . import vocab
from .names import fold_ascii
from .render import render_page
from .world import BAD_KINDS, CATEGORY_CODES, SOURCES, CorpusParams, World, build_world

log = logging.getLogger(__name__)

GENERATOR = "pipelines.synthetic"  # the corpus format's name in truth/summary.json, kept from before the
# move to benchmarks/ so that corpora written earlier are still recognised (mutate, re-generation)
GENERATOR_VERSION = 1
DEFAULT_CAPTURED_AT = datetime(2026, 11, 21, tzinfo=timezone.utc)
TRUTH_FILES = ("listings.parquet", "mentions.parquet", "profiles.parquet", "papers.parquet",
               "people.parquet", "authorships.parquet", "summary.json")


@dataclass
class CorpusSummary:
    """What a generation (or mutation) run produced; ``stats`` is the content of summary.json."""

    out_dir: Path
    profiles: int
    listings: int
    mentions: int
    papers: int
    people: int
    bad_pages: dict[str, int]
    elapsed_s: float
    stats: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)   # wall seconds per phase (world, render, truth)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["out_dir"] = str(self.out_dir)
        return d


# ---------------------------------------------------------------------------------------------
# generation
# ---------------------------------------------------------------------------------------------
def generate_corpus(
    out_dir: Path,
    *,
    profiles: int,
    seed: int = 0,
    html_share: float = 0.3,
    bad_page_share: float = 0.005,
    captured_at: datetime = DEFAULT_CAPTURED_AT,
    workers: int | None = None,
) -> CorpusSummary:
    """Write a corpus of ``profiles`` profile pages with ground truth into ``out_dir``.

    ``workers``: render processes (default: up to 2, fewer on a 1-CPU machine). The output does
    not depend on it. An existing corpus written by this generator in ``out_dir`` is replaced;
    any other non-empty ``captures/`` or ``truth/`` folder is refused.
    """
    t0 = time.perf_counter()
    if not 0.0 <= html_share <= 1.0 or not 0.0 <= bad_page_share <= 1.0:
        raise ValueError("html_share and bad_page_share must be in [0, 1]")
    if captured_at.tzinfo is None:
        captured_at = captured_at.replace(tzinfo=timezone.utc)
    out_dir = Path(out_dir)
    captures, truth = out_dir / "captures", out_dir / "truth"
    _prepare_output(captures, truth)
    params = CorpusParams(profiles=profiles, seed=seed, html_share=html_share, bad_page_share=bad_page_share,
                          captured_at=captured_at)
    phases: dict[str, float] = {}
    world = build_world(params)
    _release_memory()
    phases["world_s"] = round(time.perf_counter() - t0, 3)
    log.info("world: %d pages, %d papers, %d people (%.1fs, peak RSS %d MB)", world.n_pages, world.n_papers,
             len(world.names), phases["world_s"], _peak_rss_mb())
    parts_dir = truth / "_parts"
    parts_dir.mkdir(parents=True)
    n_workers = max(1, min(workers or min(2, os.cpu_count() or 1), world.n_pages))
    chunk = max(1, min(2500, math.ceil(world.n_pages / (n_workers * 4))))
    # Render in order of the owner's community: co-authors' pages (sharing papers) come close
    # together, which makes the renderer's abstract cache effective. Output does not depend on it.
    order = np.argsort(world.person_community[world.page_person], kind="stable")
    tasks = [(i, order[lo:lo + chunk]) for i, lo in enumerate(range(0, world.n_pages, chunk))]
    t1 = time.perf_counter()
    _run_chunks(world, tasks, captures, parts_dir, n_workers)
    phases["render_s"] = round(time.perf_counter() - t1, 3)
    log.info("pages written with %d worker(s) (%.1fs)", n_workers, phases["render_s"])
    t2 = time.perf_counter()
    stats = _write_truth(world, truth, parts_dir, len(tasks))
    shutil.rmtree(parts_dir)
    phases["truth_s"] = round(time.perf_counter() - t2, 3)
    log.info("truth written (%.1fs, peak RSS %d MB)", phases["truth_s"], _peak_rss_mb())
    return CorpusSummary(
        out_dir=out_dir, profiles=world.n_pages, listings=stats["counts"]["listings"],
        mentions=stats["counts"]["mentions"], papers=stats["counts"]["papers_in_world"],
        people=stats["counts"]["people_in_world"], bad_pages=stats["pages"]["by_kind"],
        elapsed_s=round(time.perf_counter() - t0, 3), stats=stats, phases=phases,
    )


def _release_memory() -> None:
    """Give freed heap back to the OS (glibc keeps it otherwise): a smaller parent process."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):   # not glibc
        pass


def _peak_rss_mb() -> int:
    try:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    except (ImportError, OSError):   # not on every platform
        return -1


def _prepare_output(captures: Path, truth: Path) -> None:
    ours = (truth / "summary.json").exists() and json.loads((truth / "summary.json").read_text()).get("generator") == GENERATOR
    for folder in (captures, truth):
        if folder.exists() and any(folder.iterdir()):
            if not ours:
                raise FileExistsError(f"{folder} is not empty and was not written by {GENERATOR}")
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)


_WORLD: World | None = None   # the world being rendered (sent once to each worker process)


def _run_chunks(world: World, tasks: list, captures: Path, parts_dir: Path, n_workers: int) -> None:
    global _WORLD
    _WORLD = world
    try:
        jobs = [(t, str(captures), str(parts_dir)) for t in tasks]
        if n_workers > 1:
            # spawn, not fork: a process forked from a multi-threaded parent (Polars' and
            # Dagster's threads, a test runner) can inherit a held lock and hang for ever.
            # Shut down with close + join (workers exit on their sentinel), not the context
            # manager's terminate(): that stops idle workers with SIGTERM, which never arrives
            # when the parent was started with SIGTERM ignored (dispositions are inherited), and
            # the join then hangs for ever.
            pool = mp.get_context("spawn").Pool(n_workers, initializer=_set_world, initargs=(world,))
            try:
                for _ in pool.imap_unordered(_render_chunk, jobs):
                    pass
                pool.close()
            except BaseException:
                pool.terminate()
                raise
            finally:
                pool.join()
        else:
            for job in jobs:
                _render_chunk(job)
    finally:
        _WORLD = None


def _set_world(world: World) -> None:
    global _WORLD
    _WORLD = world
    # A worker must stop on terminate() even if its parent ignored SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _render_chunk(job) -> int:
    (index, pages), captures, parts_dir = job
    world = _WORLD
    assert world is not None
    rows = _render_pages(world, pages.tolist(), Path(captures), {})
    _write_part(rows, Path(parts_dir) / f"{index:06d}")
    return len(pages)


def _render_pages(world: World, pages, captures: Path, ops_by_page: dict[int, list[dict]],
                  captured_at: dict[int, str] | None = None) -> dict:
    """Render and write the given pages; return their truth rows as columns.

    ``captured_at``: sidecar capture time per page, where it differs from the corpus capture time.
    """
    base_iso = world.params.captured_at.isoformat()
    captured_at = captured_at or {}
    L = {k: [] for k in ("page", "position", "paper", "title_variant", "abstract_variant", "partial")}
    M = {k: [] for k in ("page", "position", "name", "byline_index", "person", "name_form")}
    P = {k: [] for k in ("page", "declared_items", "listed_items", "truncated_at", "h_index",
                         "h_index_implausible", "citations", "followers", "claimed")}
    for page in pages:
        res = render_page(world, page, ops_by_page.get(page))
        name = world.page_file[page]
        _write_file(os.path.join(captures, name), res.body)
        _write_file(os.path.join(captures, name + ".meta.json"),
                    json.dumps({"url": world.page_url[page], "captured_at": captured_at.get(page, base_iso)}).encode("utf-8"))
        for row in res.listings:
            for column, value in zip(L.values(), (page, *row)):
                column.append(value)
        for row in res.mentions:
            for column, value in zip(M.values(), (page, *row)):
                column.append(value)
        f = res.facts
        complete = sum(1 for row in res.listings if not row[-1])
        for column, value in zip(P.values(), (page, res.declared, complete, res.truncated_at,
                                               f.get("h_index"), f.get("h_index_implausible"), f.get("citations"),
                                               f.get("followers"), f.get("claimed"))):
            column.append(value)
    return {"listings": L, "mentions": M, "pages": P}


_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


def _write_file(path: str, data: bytes) -> None:
    # os-level I/O: a buffered open() costs several extra system calls per file, which adds up to
    # many seconds over 200k small files
    fd = os.open(path, _WRITE_FLAGS, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


_SCHEMAS = {
    "listings": {"page": pl.Int64, "position": pl.Int32, "paper": pl.Int64, "title_variant": pl.String,
                 "abstract_variant": pl.String, "partial": pl.Boolean},
    "mentions": {"page": pl.Int64, "position": pl.Int32, "name": pl.String, "byline_index": pl.Int32,
                 "person": pl.Int64, "name_form": pl.String},
    "pages": {"page": pl.Int64, "declared_items": pl.Int32, "listed_items": pl.Int32, "truncated_at": pl.Int32,
              "h_index": pl.Int32, "h_index_implausible": pl.Boolean, "citations": pl.Int64,
              "followers": pl.Int64, "claimed": pl.Boolean},
}


def _frames(rows: dict) -> dict[str, pl.DataFrame]:
    return {k: pl.DataFrame(rows[k], schema=_SCHEMAS[k]) for k in _SCHEMAS}


def _write_part(rows: dict, stem: Path) -> None:
    # Plain pickle of the row columns; the parent builds the frames.
    with open(f"{stem}.pkl", "wb") as fh:
        pickle.dump(rows, fh, protocol=pickle.HIGHEST_PROTOCOL)


def _read_parts(parts_dir: Path, n_parts: int) -> dict[str, pl.DataFrame]:
    frames: dict[str, list[pl.DataFrame]] = {k: [] for k in _SCHEMAS}
    for i in range(n_parts):
        with open(parts_dir / f"{i:06d}.pkl", "rb") as fh:
            rows = pickle.load(fh)
        for k, df in _frames(rows).items():
            frames[k].append(df)
    return {k: pl.concat(v) for k, v in frames.items()}


# ---------------------------------------------------------------------------------------------
# truth
# ---------------------------------------------------------------------------------------------
def _page_frame(world: World) -> pl.DataFrame:
    return pl.DataFrame({
        "page": np.arange(world.n_pages, dtype=np.int64),
        "source": [SOURCES[s] for s in world.page_site.tolist()],
        "source_profile_id": world.page_profile_id,
        "person_truth_id": world.page_person.astype(np.int64),
        "file": world.page_file,
        "url": world.page_url,
        "format": np.where(world.page_html, "html", "txt"),
        "page_kind": [BAD_KINDS[b] for b in world.page_bad.tolist()],
        "duplicate_profile": world.page_duplicate,
        "name": world.page_name,
    })


def _finalise(world: World, raw: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Join per-page rows with page identities into the published truth tables (rows in page order)."""
    pages = _page_frame(world)
    ident = pages.select("source", "source_profile_id", "file")

    def with_ident(df: pl.DataFrame) -> pl.DataFrame:
        # gather by page number (no hash join), after sorting the narrow frame
        return pl.concat([ident.select(pl.all().gather(df["page"])), df], how="horizontal")

    # rows of one page are contiguous and in order within the raw frames: a stable sort on page keeps them
    listings = with_ident(raw["listings"].sort("page", "position")).select(
        "source", "source_profile_id", "position", pl.col("paper").alias("paper_truth_id"), "file",
        "title_variant", "abstract_variant", "partial")
    mentions = with_ident(raw["mentions"].sort("page", maintain_order=True)).select(
        "source", "source_profile_id", "position", "name", "byline_index",
        pl.col("person").alias("person_truth_id"), "name_form", "file")
    profiles = (pages.join(raw["pages"], on="page", how="left").sort("page")
                .with_columns(expect_reject=pl.col("page_kind") != "ok")
                .select("source", "source_profile_id", "person_truth_id", "file", "url", "format", "page_kind",
                        "expect_reject", "declared_items", "listed_items", "truncated_at", "duplicate_profile",
                        "name", "h_index", "h_index_implausible", "citations", "followers", "claimed"))
    return {"listings": listings, "mentions": mentions, "profiles": profiles}


def _world_tables(world: World) -> dict[str, pl.DataFrame]:
    n = world.n_papers
    ptr = world.paper_ptr
    papers = pl.DataFrame({
        "paper_truth_id": np.arange(n, dtype=np.int64),
        "title": [t or None for t in world.paper_title],   # latent papers no page lists have no title
        "arxiv_id": world.arxiv_ids(),
        "arxiv_version": world.paper_version.astype(np.int32),
        "pub_date": world.paper_day.astype("datetime64[D]"),
        "category": [vocab.CATEGORY_FULL[CATEGORY_CODES[c]] for c in world.paper_category.tolist()],
        "n_authors": np.diff(ptr).astype(np.int32),
        "twin_of": world.paper_twin_of.astype(np.int64),
        "has_code": world.paper_has_code,
        "citations": world.paper_citations.astype(np.int64),
    }).with_columns(twin_of=pl.when(pl.col("twin_of") >= 0).then(pl.col("twin_of")))
    n_authorships = len(world.paper_authors)
    paper_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    authorships = pl.DataFrame({
        "paper_truth_id": paper_of,
        "person_truth_id": world.paper_authors.astype(np.int64),
        "author_index": (np.arange(n_authorships) - ptr[:-1][paper_of]).astype(np.int32),
    })
    # people who never appear on any page (latent co-authors) have no name
    canon = [nm.canonical if nm is not None else None for nm in world.names]
    keys = [fold_ascii(c).casefold() if c is not None else None for c in canon]
    people = pl.DataFrame({
        "person_truth_id": np.arange(len(world.names), dtype=np.int64),
        "canonical_name": canon,
        "culture": [nm.culture if nm is not None else None for nm in world.names],
        "has_profile": world.person_has_profile,
        "n_papers": np.bincount(world.paper_authors, minlength=len(world.names)).astype(np.int32),
        "_key": keys,
    }).with_columns(same_name_people=pl.when(pl.col("_key").is_not_null())
                    .then(pl.len().over("_key") - 1).cast(pl.Int32)).drop("_key")
    return {"papers": papers, "authorships": authorships, "people": people}


def _write_truth(world: World, truth: Path, parts_dir: Path, n_parts: int) -> dict:
    raw = _read_parts(parts_dir, n_parts)
    tables = _finalise(world, raw)
    del raw
    _release_memory()
    tables |= _world_tables(world)
    for name, df in tables.items():
        df.write_parquet(truth / f"{name}.parquet")
    stats = _stats(world, tables)
    (truth / "summary.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return stats


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 5) if whole else 0.0


def _stats(world: World, t: dict[str, pl.DataFrame], mutations: list[dict] | None = None) -> dict:
    """summary.json: counts and the realised rate of every hard case (deterministic: no timings)."""
    profiles, mentions = t["profiles"], t["mentions"]
    listings = t["listings"].filter(~pl.col("partial"))
    papers, people = t["papers"], t["people"]
    ok = profiles.filter(pl.col("page_kind") == "ok")
    n_list = listings.height
    per_profile = ok["listed_items"].cast(pl.Float64)
    listed_papers = listings.group_by("paper_truth_id").agg(
        profiles=pl.len(), sources=pl.col("source").n_unique())
    tv = listings.group_by("title_variant").len().filter(pl.col("title_variant").is_not_null())
    nf = mentions.group_by("name_form").len()
    byline = mentions.filter(pl.col("byline_index").is_not_null())
    on_pages = profiles.group_by("person_truth_id").agg(sources=pl.col("source").n_unique(), pages=pl.len())
    shown_people = pl.concat([mentions.select("person_truth_id"), profiles.select("person_truth_id")]).unique()
    shown = people.join(shown_people, on="person_truth_id", how="semi")
    twins = papers.filter(pl.col("twin_of").is_not_null())
    listed_ids = listed_papers.select("paper_truth_id")
    twins_listed = twins.join(listed_ids, on="paper_truth_id", how="semi").join(
        listed_ids.rename({"paper_truth_id": "twin_of"}), on="twin_of", how="semi")
    kinds = {k: 0 for k in BAD_KINDS}
    for row in profiles.group_by("page_kind").len().iter_rows():
        kinds[row[0]] = row[1]
    stats = {
        "generator": GENERATOR,
        "generator_version": GENERATOR_VERSION,
        "params": world.params.to_json(),
        "counts": {
            "pages": profiles.height,
            "listings": n_list,
            "mentions": mentions.height,
            "byline_mentions": byline.height,
            "papers_in_world": papers.height,
            "papers_listed": listed_papers.height,
            "people_in_world": people.height,
            "people_with_pages": on_pages.height,
            "people_shown": shown.height,
        },
        "pages": {
            "by_source": dict(sorted(profiles.group_by("source").len().iter_rows())),
            "by_format": dict(sorted(profiles.group_by("format").len().iter_rows())),
            "by_kind": kinds,
            "bad_share": _rate(profiles.height - kinds["ok"], profiles.height),
            "declared_gt_listed_share": _rate(ok.filter(pl.col("declared_items") > pl.col("listed_items")).height, ok.height),
            "h_index_implausible": int(profiles["h_index_implausible"].fill_null(False).sum()),
            "duplicate_profiles": int(profiles["duplicate_profile"].sum()),
        },
        "listings_per_profile": {
            "mean": round(float(per_profile.mean() or 0), 3),
            "median": float(per_profile.median() or 0),
            "p90": float(per_profile.quantile(0.9) or 0),
            "max": int(per_profile.max() or 0),
        },
        "overlap": {
            "papers_on_2plus_profiles_share": _rate(listed_papers.filter(pl.col("profiles") >= 2).height, listed_papers.height),
            "papers_on_both_sites_share": _rate(listed_papers.filter(pl.col("sources") == 2).height, listed_papers.height),
            "people_on_both_sites_share": _rate(on_pages.filter(pl.col("sources") == 2).height, on_pages.height),
        },
        "hard_cases": {
            "title_variants": {k: {"count": v, "rate_per_listing": _rate(v, n_list)} for k, v in sorted(tv.iter_rows())},
            "title_variant_rate": _rate(int(tv["len"].sum()), n_list),
            "abstract_revised_rate": _rate(listings.filter(pl.col("abstract_variant").is_not_null()).height, n_list),
            "near_twin_papers": twins.height,
            "near_twin_pairs_both_listed": twins_listed.height,
            "name_forms": {k: {"count": v, "rate_per_mention": _rate(v, mentions.height)} for k, v in sorted(nf.iter_rows())},
            "byline_typo_rate": _rate(byline.filter(pl.col("name_form") == "typo").height, byline.height),
            "homonym_people_share": _rate(shown.filter(pl.col("same_name_people") > 0).height, shown.height),
            "latex_titles": int(papers["title"].str.contains("$", literal=True).fill_null(False).sum()),
        },
    }
    if mutations:
        stats["mutations"] = [{k: b[k] for k in ("seed", "share", "pages_changed", "papers_added", "counts_changed")}
                              for b in mutations]
    return stats

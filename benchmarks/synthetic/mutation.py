"""Mutation for incremental-run benchmarks: ``mutate(out_dir, share, seed)`` changes a share of a
generated corpus's pages in place (a new paper listed, a changed count) and rewrites their truth;
every batch is logged in ``truth/mutations.json`` so later batches replay earlier ones (the same
sequence of batches always gives the same bytes). The corpus itself: ``generator.py``.
No Dagster imports.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

from . import vocab
from .abstracts import plan_abstracts
from .draws import _affine_ids, seed_for
from .generator import GENERATOR, _finalise, _frames, _page_frame, _render_pages, _stats, _world_tables
from .titles import make_title
from .world import CorpusParams, World, build_world, day_to_date, draw_paper_numbers, draw_slots

@dataclass
class MutationSummary:
    out_dir: Path
    seed: int
    share: float
    pages_changed: int
    papers_added: int
    counts_changed: int
    changed_files: list[str]
    elapsed_s: float


def mutate(out_dir: Path, share: float = 0.01, seed: int = 1, captured_at: datetime | None = None) -> MutationSummary:
    """Change ~``share`` of the (good) captures in place and rewrite their truth.

    Each chosen page gets a new paper listed (declared count +1) or a changed count (citations on
    Scholar Feed, followers on BZPEER), sometimes both. ``captured_at`` (optional) is written to
    the changed pages' sidecars; by default they keep their capture time.
    """
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    truth, captures = out_dir / "truth", out_dir / "captures"
    stats = json.loads((truth / "summary.json").read_text())
    if stats.get("generator") != GENERATOR:
        raise ValueError(f"{out_dir} was not written by {GENERATOR}")
    params = CorpusParams.from_json(stats["params"])
    world = build_world(params)
    log_path = truth / "mutations.json"
    batches = json.loads(log_path.read_text()) if log_path.exists() else []
    ops_by_page: dict[int, list[dict]] = {}
    for batch in batches:
        _replay(world, batch, ops_by_page)

    rng = random.Random(seed_for(params.seed, seed, 77))
    ok_pages = np.flatnonzero(world.page_bad == 0).tolist()
    n = min(len(ok_pages), max(1, int(round(share * len(ok_pages))))) if share > 0 else 0
    chosen = sorted(rng.sample(ok_pages, n))
    ops: list[dict] = []
    new_specs = []
    for page in chosen:
        r = rng.random()
        if r < 0.55 or r >= 0.9:
            pid = world.n_papers + len(new_specs)
            new_specs.append((page, pid))
            ops.append({"page": page, "op": "add_paper", "paper_truth_id": pid})
        if r >= 0.55:
            ops.append({"page": page, "op": "bump", "delta": rng.randint(1, 40)})
    batch = {"seed": seed, "share": share, "captured_at": captured_at.isoformat() if captured_at else None,
             "ops": ops, "pages_changed": len(chosen), "papers_added": len(new_specs),
             "counts_changed": sum(1 for o in ops if o["op"] == "bump")}
    _replay(world, batch, ops_by_page)
    batches.append(batch)

    changed = sorted(set(chosen))
    # a changed page keeps its sidecar's capture time unless a new one is given
    stamps = {}
    for page in changed:
        if captured_at is not None:
            stamps[page] = captured_at.isoformat()
        else:
            sidecar = captures / (world.page_file[page] + ".meta.json")
            stamps[page] = json.loads(sidecar.read_text(encoding="utf-8"))["captured_at"]
    rows = _render_pages(world, changed, captures, ops_by_page, stamps)
    _rewrite_truth(world, truth, changed, rows, batches)
    log_path.write_text(json.dumps(batches, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return MutationSummary(out_dir=out_dir, seed=seed, share=share, pages_changed=len(changed),
                           papers_added=len(new_specs), counts_changed=batch["counts_changed"],
                           changed_files=[world.page_file[p] for p in changed],
                           elapsed_s=round(time.perf_counter() - t0, 3))


def _replay(world: World, batch: dict, ops_by_page: dict[int, list[dict]]) -> None:
    """Re-create a batch's new papers in the world and register its page operations."""
    adds = [op for op in batch["ops"] if op["op"] == "add_paper"]
    if adds:
        _add_papers(world, [(op["page"], op["paper_truth_id"]) for op in adds], batch["seed"])
    for op in batch["ops"]:
        ops_by_page.setdefault(op["page"], []).append(op)


def _add_papers(world: World, specs: list[tuple[int, int]], batch_seed: int) -> None:
    """Append brand-new papers (one per (page, id)) to the world: recent, by the page owner and co-authors."""
    assert [pid for _, pid in specs] == list(range(world.n_papers, world.n_papers + len(specs)))
    capture_day = world.capture_day
    nrng = np.random.default_rng([world.params.seed, batch_seed, 0xADD])
    prng = random.Random(seed_for(world.params.seed, batch_seed, 0xADD))
    seen = {t.casefold() for t in world.paper_title}
    k = len(specs)
    authors_lists, fields, cats, days = [], [], [], []
    for page, _pid in specs:
        owner = int(world.page_person[page])
        lo, hi = int(world.page_known_ptr[page]), int(world.page_known_ptr[page + 1])
        known = world.page_known[lo:hi]
        co = np.concatenate([world.authors(int(p)) for p in known]) if len(known) else np.zeros(0, np.int64)
        mates, counts = np.unique(co[co != owner], return_counts=True)
        take = min(len(mates), prng.randint(0, 5))
        picks = [int(x) for x in mates[np.argsort(-counts, kind="stable")][: max(take * 2, 1)]]
        prng.shuffle(picks)
        authors = picks[:take]
        authors.insert(prng.randint(0, len(authors)), owner)
        authors_lists.append(authors)
        fields.append(int(world.community_field[world.person_community[owner]]))
        cats.append(int(np.bincount(world.paper_category[known]).argmax()) if len(known) else 0)
        days.append(capture_day - prng.randint(0, 25))
    fields_a = np.array(fields, dtype=np.int64)
    slots = draw_slots(nrng, fields_a)
    numbers, style = draw_paper_numbers(nrng, k)
    has_code = nrng.random(k) < 0.28
    code_in_abstract = has_code & (nrng.random(k) < 0.6)
    titles, methods, expansions = [], [], []
    for j in range(k):
        f = vocab.FIELDS[fields[j]]
        s = slots[j].tolist()
        for _ in range(30):
            title, method, expansion = make_title(prng, f, f.objects[s[0]], f.tasks[s[1]], f.techniques[s[2]], f.hardware[s[3]])
            if title.casefold() not in seen:
                break
        seen.add(title.casefold())
        titles.append(title)
        methods.append(method)
        expansions.append(expansion)
    has_name = np.array([bool(m) for m in methods])
    has_exp = np.array([bool(e) for e in expansions])
    propose = np.where(has_exp & (nrng.random(k) < 0.5), 1, np.where(has_name, 0, 2))
    plan, mask = plan_abstracts(nrng, propose, code_in_abstract)
    # new ids above the numbers the world uses in that month
    arxiv_month, arxiv_number = [], []
    for d in days:
        dt = day_to_date(d)
        mk = dt.year * 100 + dt.month
        used = world.paper_arxiv_number[world.paper_arxiv_month == mk]
        taken = set(used.tolist()) | {n for m, n in zip(arxiv_month, arxiv_number) if m == mk}
        num = max(taken | {0}) + 1 + prng.randrange(20)
        while num in taken:
            num += 1
        arxiv_month.append(mk)
        arxiv_number.append(num)
    n0 = world.n_papers
    lens = np.array([len(a) for a in authors_lists])
    world.paper_authors = np.concatenate((world.paper_authors, np.array([x for a in authors_lists for x in a], dtype=np.int64)))
    world.paper_ptr = np.concatenate((world.paper_ptr, world.paper_ptr[-1] + np.cumsum(lens)))
    new_values = {
        "paper_field": fields_a, "paper_category": cats, "paper_day": days, "paper_version": np.ones(k),
        "paper_bz_type": np.zeros(k), "paper_bz_venue": np.zeros(k),
        "paper_bz_year": [day_to_date(d).year for d in days],
        "paper_has_code": has_code, "paper_code_in_abstract": code_in_abstract,
        "paper_score": np.where(nrng.random(k) < 0.35, np.round(np.clip(nrng.normal(62, 9, k), 30, 99.9), 1), np.nan),
        "paper_citations": np.zeros(k), "paper_twin_of": np.full(k, -1),
        "paper_work_id": _affine_ids(n0 + k, 9_999_991, 7_368_787, 1_234_567, 1_000_000)[n0:],
        "paper_slots": slots, "paper_numbers": numbers, "paper_number_style": style,
        "paper_plan": plan, "paper_plan_mask": mask, "paper_propose_bank": propose,
        "paper_arxiv_month": arxiv_month, "paper_arxiv_number": arxiv_number,
    }
    for name, values in new_values.items():
        old = getattr(world, name)
        setattr(world, name, np.concatenate((old, np.asarray(values, dtype=old.dtype))))
    world.paper_title.extend(titles)
    world.paper_method.extend(methods)
    world.paper_expansion.extend(expansions)


def _rewrite_truth(world: World, truth: Path, changed: list[int], rows: dict, batches: list[dict]) -> None:
    raw = _frames(rows)
    new = _finalise(world, raw)
    pages = _page_frame(world)
    changed_files = pl.DataFrame({"file": [world.page_file[p] for p in changed]})
    order = pages.select("file", "page")
    out = {}
    for name in ("listings", "mentions"):
        old = pl.read_parquet(truth / f"{name}.parquet").with_row_index("_row")
        kept = old.join(changed_files, on="file", how="anti")
        fresh = new[name].with_row_index("_row").with_columns(pl.col("_row") + old.height)
        merged = pl.concat([kept, fresh]).join(order, on="file", how="left")
        sort_cols = ["page", "position"] if name == "listings" else ["page", "_row"]
        out[name] = merged.sort(sort_cols, nulls_last=False).drop("_row", "page")
    old_profiles = pl.read_parquet(truth / "profiles.parquet")
    profiles = (pl.concat([old_profiles.join(changed_files, on="file", how="anti"), new["profiles"]])
                .join(order, on="file", how="left").sort("page").drop("page"))
    out["profiles"] = profiles
    out |= _world_tables(world)
    for name, df in out.items():
        df.write_parquet(truth / f"{name}.parquet")
    stats = _stats(world, out, batches)
    (truth / "summary.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")

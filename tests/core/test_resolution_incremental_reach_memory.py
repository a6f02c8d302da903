"""The incremental author night's reach (resolution/incremental.py): which clusters outside the
changed ones share a name label *and* a piece of evidence with them. At 100k profiles the 1 %
night's process grew past 19 GB in this step and was killed (make bench, 2026-11-26): the join
was keyed on the evidence alone, so a common affiliation multiplied every cluster holding it by
every wanted label beside it."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pipelines.core.resolution.incremental import sharing_label_and_evidence

ROOT = Path(__file__).resolve().parents[2]


def _by_evidence_alone(evidence, labels, wanted):  # the join as it was: the reference answer
    return set(evidence.join(wanted, on="ev").join(labels, on=["group", "label"], how="semi")["group"].to_list())


def test_the_reach_is_the_groups_holding_a_wanted_label_with_a_wanted_piece_of_evidence():
    rng = random.Random(3)
    for _ in range(30):
        groups = [f"g{i}" for i in range(rng.randint(1, 40))] + [None]
        evs = [f"a:{i}" for i in range(6)] + [f"c:{i}" for i in range(6)] + [None]
        names = [f"k|{i}" for i in range(8)] + [None]
        evidence = pl.DataFrame([(g, e) for g in groups for e in rng.sample(evs, rng.randint(0, 4))],
                                schema={"group": pl.String, "ev": pl.String}, orient="row").unique()
        labels = pl.DataFrame([(g, n) for g in groups for n in rng.sample(names, rng.randint(0, 3))],  # some without
                              schema={"group": pl.String, "label": pl.String}, orient="row").unique()
        wanted = pl.DataFrame([(rng.choice(names), rng.choice(evs)) for _ in range(rng.randint(0, 12))],
                              schema={"label": pl.String, "ev": pl.String}, orient="row").unique()
        assert sharing_label_and_evidence(evidence, labels, wanted) == _by_evidence_alone(evidence, labels, wanted)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the address-space limit is enforced on Linux")
def test_a_common_affiliation_does_not_multiply_the_clusters_by_the_wanted_labels():
    # 10,000 clusters of one university, 10,000 wanted labels with it: joined on the evidence alone
    # that is 10^8 rows (9.5 GB measured, and an abort under this limit: 3 GB more address space
    # than the process holds); the answer is the 5,000 clusters whose own label is among the wanted ones.
    script = textwrap.dedent("""
        import resource, sys
        import polars as pl
        from pipelines.core.resolution.incremental import sharing_label_and_evidence
        n = 10_000
        evidence = pl.DataFrame({"group": [f"g{i}" for i in range(n)], "ev": ["a:university"] * n})
        labels = pl.DataFrame({"group": [f"g{i}" for i in range(n)], "label": [f"k|name {i}" for i in range(n)]})
        wanted = pl.DataFrame({"label": [f"k|name {i}" for i in range(0, 2 * n, 2)], "ev": ["a:university"] * n})
        # 3 GB of address space beyond what the interpreter and Polars' threads already hold
        vm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmSize:"))
        limit = vm * 1024 + 3 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        print(len(sharing_label_and_evidence(evidence, labels, wanted)))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "5000"

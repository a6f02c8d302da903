"""Re-take the screenshots in docs/ (``make screenshots``): the nightly report, and the Dagster UI's page
of the report asset (its charts), of a table asset (its column schema) and the backfill dialog.

In a temporary folder: a fresh DAGSTER_HOME (the project's dagster_home.yaml) and warehouse, two demo
nights on the bundled samples (so the charts have a history), then ``dg dev`` on 127.0.0.1 with that
instance, and headless Chromium (tests/browser.py: Debian's package, installed with apt-get if
missing) for the pictures. Everything it started is stopped at the end. Takes a few minutes.

    .venv/bin/python scripts/screenshots.py [--out docs] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
from tests.browser import chromium_context, find_or_install_chromium  # noqa: E402

NIGHTS = ("2026-11-21", "2026-11-22")
STARTUP_TIMEOUT_S = 180


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(home: Path, warehouse: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    env.update({"DAGSTER_HOME": str(home), "SCHOLARHOUSE_WAREHOUSE": str(warehouse),
                "SCHOLARHOUSE_OVERRIDES": str(home / "no-overrides.toml"),
                "PATH": f"{PROJECT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}", **extra})
    return env


def _wait_for_ui(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    query = "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"dg dev exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            entries = requests.post(f"{url}/graphql", json={"query": query}, timeout=5).json()[
                "data"]["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except (requests.RequestException, ValueError, KeyError, TypeError):
            pass
        time.sleep(1)
    sys.exit(f"the UI did not load in {STARTUP_TIMEOUT_S}s:\n{log.read_text()[-3000:]}")


def _open(page, url: str, wait_for: str) -> None:
    page.goto(url, wait_until="networkidle", timeout=120_000)
    skip = page.get_by_role("button", name="Skip")  # the UI's first-visit "Join the community" dialog
    try:
        skip.wait_for(timeout=5_000)
        skip.click()
    except Exception:  # noqa: BLE001 - not shown: nothing to dismiss
        pass
    page.get_by_text(wait_for, exact=False).first.wait_for(timeout=60_000)


def _save(page, path: Path, **options) -> None:
    time.sleep(2)  # charts, images and fonts settle
    page.screenshot(path=str(path), **options)
    print(f"wrote {path}")


def shoot_report(page, report_file: Path, out: Path) -> None:
    _open(page, report_file.resolve().as_uri(), "Who works with whom")
    _save(page, out / "report.png", full_page=True, clip={"x": 0, "y": 0, "width": 1400, "height": 2300})


def shoot_report_asset(page, url: str, out: Path) -> None:
    """The report asset's page, with its collaboration network picture open over the metadata."""
    _open(page, f"{url}/assets/exports/report", "chart: Collaboration network")
    row = page.get_by_role("row").filter(has_text="chart: Collaboration network")
    row.get_by_text("[Show Markdown]").first.click()
    page.get_by_role("dialog").get_by_role("img").first.wait_for(timeout=30_000)
    _save(page, out / "ui-report-asset.png")


def shoot_column_schema(page, url: str, out: Path) -> None:
    _open(page, f"{url}/assets/marts/author_metrics", "h_index_implausible")
    _save(page, out / "ui-column-schema.png")


def shoot_backfill_dialog(page, url: str, out: Path) -> None:
    """Lineage → Materialize all: the partition range typed into the dialog."""
    _open(page, f"{url}/asset-groups", "Materialize all")
    page.get_by_role("button", name="Materialize all").first.click()
    field = page.get_by_placeholder("No matching partitions").or_(page.locator("input[placeholder*='partition' i]"))
    field.first.wait_for(timeout=30_000)
    field.first.fill(f"[{NIGHTS[0]}...{NIGHTS[-1]}]")
    field.first.press("Enter")
    _save(page, out / "ui-backfill-dialog.png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(PROJECT / "docs"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary instance and warehouse")
    args = parser.parse_args()
    out = Path(args.out)
    chromium, how = find_or_install_chromium()
    if chromium is None:
        sys.exit(f"no headless Chromium: {how}")

    root = Path(tempfile.mkdtemp(prefix="scholarhouse-screenshots-"))
    home, warehouse = root / "home", root / "warehouse" / "scholarhouse.duckdb"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home.yaml", home / "dagster.yaml")
    proc = None
    try:
        for night in NIGHTS:
            print(f"demo night {night} ...", flush=True)
            subprocess.run([sys.executable, "-m", "pipelines.demo"], cwd=PROJECT, check=True, stdout=subprocess.DEVNULL,
                           env=_env(home, warehouse, SCHOLARHOUSE_DATE=night))
        port = _free_port()
        log = root / "dg-dev.log"
        with log.open("wb") as fh:
            proc = subprocess.Popen([str(PROJECT / ".venv" / "bin" / "dg"), "dev", "-h", "127.0.0.1", "-p", str(port)],
                                    cwd=PROJECT, env=_env(home, warehouse), stdout=fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        _wait_for_ui(url, proc, log)
        report_file = warehouse.parent / "exports" / "latest" / "report.html"
        with chromium_context(chromium, root / "profile", width=1400, height=1000) as context:
            page = context.new_page()
            shoot_report(page, report_file, out)
            shoot_report_asset(page, url, out)
            shoot_column_schema(page, url, out)
            shoot_backfill_dialog(page, url, out)
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Headless Chromium for tests and screenshots: Debian's ``chromium`` package, driven by Playwright.

``find_or_install_chromium()`` returns the browser's path: an executable already there
(``SCHOLARHOUSE_CHROMIUM``, ``chromium``, ``chromium-browser``, ``google-chrome`` on PATH), else Debian's
package, installed quietly with ``apt-get`` when this process may (root, apt-get present; it waits for
another apt to finish). It returns ``None`` with the reason when it cannot, and the caller skips with
that reason. Playwright never downloads a browser of its own here (``executable_path`` is always given).

The launch flags are those this machine's browser needs with no network but the package registries:
no background networking, component updates, sync or QUIC, no first-run UI, no GPU and no sandbox
(tests run as root), and a fresh profile (``user_data_dir``) every launch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Playwright passes --headless (headless=True) and --user-data-dir (launch_persistent_context) itself.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
APT_TIMEOUT_S = 700  # each apt-get call (at most three); the browser test allows 2400 s in all


def _found() -> str | None:
    override = os.environ.get("SCHOLARHOUSE_CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


def find_or_install_chromium() -> tuple[str | None, str]:
    """(path to a Chromium, how it was found) or (None, why there is none)."""
    path = _found()
    if path:
        return path, "found"
    if not shutil.which("apt-get"):
        return None, "no Chromium on PATH and no apt-get to install Debian's chromium package"
    if os.geteuid() != 0:
        return None, "no Chromium on PATH; installing Debian's chromium package needs root (apt-get install chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    try:
        install = subprocess.run(["apt-get", "install", "-y", "-qq", *lock, "chromium"], env=env,
                                 capture_output=True, text=True, timeout=APT_TIMEOUT_S)
        if install.returncode != 0:  # the package lists may be missing or stale on a fresh machine
            subprocess.run(["apt-get", "update", "-qq", *lock], env=env, capture_output=True, timeout=APT_TIMEOUT_S)
            install = subprocess.run(["apt-get", "install", "-y", "-qq", *lock, "chromium"], env=env,
                                     capture_output=True, text=True, timeout=APT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"installing Debian's chromium failed: {exc}"
    path = _found()
    if path:
        return path, "installed with apt-get"
    if install.returncode == 0:
        return None, f"apt-get installed chromium, but none of {', '.join(CANDIDATES)} is on PATH"
    last = (install.stderr or install.stdout).strip().splitlines()[-1:] or ["no output"]
    return None, f"apt-get install chromium failed (exit {install.returncode}): {last[0]}"


@contextmanager
def chromium_context(executable: str, profile: Path, *, width: int = 1280, height: int = 900) -> Iterator[object]:
    """A Playwright browser context of headless Chromium with a fresh profile in ``profile``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=FLAGS,
            viewport={"width": width, "height": height}, timeout=60_000,
        )
        try:
            yield context
        finally:
            context.close()

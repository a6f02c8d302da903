"""The nightly report in a real browser: headless Chromium (Debian's package) opens
exports/latest/report.html from the demo warehouse, offline, and every chart draws.

What is checked: every chart's container is drawn (``data-rendered``, set by the page once Vega-Embed
finished) with an SVG holding marks of the chart's kind (the network's nodes and edges, the lines of
the series), nothing failed (no console error, no page error, no chart error), and the page asked
for nothing beyond its own file (every other request is blocked and recorded). A full-page screenshot
is saved (``report.png`` in the test's temporary folder, the path is printed).

Chromium comes from ``tests/browser.py``: found on PATH, or installed with apt-get where that is
possible (root); only where neither works is the test skipped, saying why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

try:
    from tests.browser import chromium_context, find_or_install_chromium
except ImportError:  # run from inside tests/
    from browser import chromium_context, find_or_install_chromium

from pipelines.publish import report

# Installing Debian's chromium on a fresh machine (apt-get) may take minutes: the default 600 s is not enough.
pytestmark = pytest.mark.timeout(2400)

# chart id -> (SVG mark class that must be there, at least how many)
EXPECTED_MARKS = {
    "network": [("mark-symbol", 30), ("mark-rule", 30), ("mark-text", 12)],
    "citations_authors": [("mark-line", 1), ("mark-symbol", 3)],
    "citations_papers": [("mark-text", 1)],           # enrichment is off in the demo: says why
    "scores_distribution": [("mark-rect", 3)],
    "scores_relation": [("mark-symbol", 5)],
    "nights": [("mark-symbol", 3)],
    "checks": [("mark-rect", 4)],
}


@pytest.fixture(scope="module")
def chromium() -> str:
    path, how = find_or_install_chromium()
    if path is None:
        pytest.skip(f"no headless Chromium here: {how}")
    return path


def test_every_chart_of_the_report_draws_in_headless_chromium(demo_warehouse, chromium, tmp_path):
    page_file = (demo_warehouse.parent / "exports" / "latest" / report.REPORT_FILE).resolve()
    console_errors, page_errors, outside = [], [], []
    with chromium_context(chromium, tmp_path / "profile") as context:
        def route(r):
            if r.request.url.startswith("file://") and r.request.url.split("#")[0] == page_file.as_uri():
                r.continue_()
            else:  # the page must need nothing else: no CDN, no font, no image
                outside.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        page.goto(page_file.as_uri(), wait_until="load")
        page.wait_for_function(
            "() => window.reportCharts && window.reportCharts.every(id => {"
            " const el = document.getElementById('chart-' + id); return el.dataset.rendered || el.dataset.error; })",
            timeout=60_000)
        charts = page.evaluate("window.reportCharts")
        errors = page.evaluate("window.reportErrors")
        marks = page.evaluate("""(expected) => Object.fromEntries(Object.entries(expected).map(([id, kinds]) => {
            const el = document.getElementById('chart-' + id);
            return [id, {rendered: el.dataset.rendered === 'true', svg: el.querySelectorAll('svg').length,
                         counts: Object.fromEntries(kinds.map(([cls]) => [cls,
                             el.querySelectorAll('g.' + cls + ' > *').length]))}];
        }))""", EXPECTED_MARKS)
        screenshot = tmp_path / "report.png"
        page.screenshot(path=str(screenshot), full_page=True)

    assert charts == list(EXPECTED_MARKS)
    assert errors == [] and page_errors == [] and console_errors == [], (errors, page_errors, console_errors)
    assert outside == [], f"the report fetched something besides itself: {outside}"
    for chart_id, kinds in EXPECTED_MARKS.items():
        drawn = marks[chart_id]
        assert drawn["rendered"] and drawn["svg"] >= 1, (chart_id, drawn)
        for cls, at_least in kinds:
            assert drawn["counts"][cls] >= at_least, (chart_id, cls, drawn)
    assert screenshot.stat().st_size > 50_000 and screenshot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot of the report: {screenshot}")

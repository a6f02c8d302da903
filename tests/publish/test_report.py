"""The nightly report (pipelines/publish/report.py): what it draws, from what, and that it needs no network.

The page itself is opened in a real browser by tests/publish/test_report_browser.py; here every chart's
Vega-Lite spec is compiled and rendered to PNG by vl-convert (no browser), which fails on a spec
Vega-Lite cannot draw."""

from __future__ import annotations

import json
import re
from datetime import date

import polars as pl
import pytest

from pipelines import warehouse
from pipelines.publish import report

DAY = date(2026, 11, 21)


def _specs(html_text: str) -> dict:
    return json.loads(re.search(r"const specs = (\{.*?\});\n", html_text, re.S).group(1).replace("<\\/", "</"))


def test_the_nightly_run_writes_the_report_beside_its_export(demo_warehouse):
    exports = demo_warehouse.parent / "exports"
    page = exports / "latest" / report.REPORT_FILE
    assert page.is_file() and (exports / DAY.isoformat() / report.REPORT_FILE).samefile(page)
    text = page.read_text(encoding="utf-8")
    # self-contained: no script, style sheet, image or frame is fetched from anywhere
    markup = re.sub(r"<script>.*?</script>", "<script></script>", text, flags=re.S)  # the page, not the libraries
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", markup, re.I)
    assert markup.count("<script>") == 2  # the inlined libraries, and the charts
    assert "vegaEmbed" in text and len(text) > 500_000  # the Vega libraries are inlined
    specs = _specs(text)
    assert list(specs) == ["network", "citations_authors", "citations_papers", "scores_distribution",
                           "scores_relation", "nights", "checks"]
    assert text.count("class='chart'") == len(specs)
    # drawn from the night's warehouse: the people, their citation totals, the night's figures and checks
    network = json.dumps(specs["network"])
    assert "Yucheng Ding" in network and "Yunquan Zhang" in network
    assert "108" in json.dumps(specs["citations_authors"])
    assert "<b>5</b>pages" in text and "<b>48</b>listings" in text
    assert re.search(r"<tr class='warning'><td>marts/author_metrics</td><td>warnings</td>", text)
    assert "Checks: " in text and "1 not passed" in text


def test_every_chart_renders_from_the_demo_warehouse(demo_warehouse):
    with warehouse.connect(demo_warehouse, read_only=True) as con:
        data = report.gather(con, DAY)
    nodes, edges = report.network_layout(data.frames["edges"])
    assert nodes.height == report.NETWORK_AUTHORS and edges.height > nodes.height
    for name, chart in report.charts(data).items():
        assert report.png(chart).startswith(b"\x89PNG"), name


def test_a_chart_without_data_says_why_instead_of_drawing_nothing(tmp_path):
    with warehouse.connect(tmp_path / "empty.duckdb") as con:
        warehouse.ensure_schema(con)
        data = report.gather(con, DAY)
    built = report.charts(data)
    for name, chart in built.items():
        spec = chart.to_dict()
        assert spec["mark"]["type"] == "text", name   # the "nothing to show, because ..." chart
        assert report.png(chart).startswith(b"\x89PNG"), name
    papers = json.dumps(built["citations_papers"].to_dict())
    assert "SCHOLARHOUSE_CONTACT" in papers  # why per-paper citations are missing: enrichment is off
    info = report.write(data, tmp_path / "out")
    assert (tmp_path / "out" / report.REPORT_FILE).stat().st_size == info["bytes"]
    assert set(info["pngs"]) == set(report.UI_CHARTS)
    assert not list((tmp_path / "out").glob(".*.tmp"))  # written through a temporary file, renamed


def test_the_network_keeps_the_most_connected_authors_and_draws_the_same_every_night():
    # a hub with 40 co-authors, a pair that wrote three papers together, and a loose chain
    rows = [("H", f"C{i:02d}", 1) for i in range(40)] + [("P1", "P2", 3)] + [(f"L{i}", f"L{i + 1}", 1) for i in range(5)]
    edges = pl.DataFrame([{"author_a": a, "author_b": b, "papers_count": n, "name_a": a.lower(), "name_b": b.lower()}
                          for a, b, n in rows])
    nodes, links = report.network_layout(edges, limit=10)
    kept = nodes["author_id"].to_list()
    # most co-authors first (the hub, the chain's inner links), then most shared papers (the pair)
    assert {"H", "L1", "L2", "L3", "L4", "P1", "P2"} <= set(kept) and len(kept) == 10
    drawn_coauthors = len([k for k in kept if k.startswith("C")])
    assert nodes.filter(pl.col("author_id") == "H")["degree"].item() == drawn_coauthors  # edges within the drawing
    again, _ = report.network_layout(edges, limit=10)
    assert again.equals(nodes)
    assert links.height == drawn_coauthors + 1 + 3 and set(links.columns) >= {"x", "y", "x2", "y2", "papers_count"}


def test_the_nights_chart_draws_a_night_without_rejects_as_zero():
    nights = pl.DataFrame({"as_of": [date(2026, 11, 21), date(2026, 11, 22)], "rejects": [0, 2],
                           "review_paper_pairs": [1, 1], "review_author_pairs": [2, 3]})
    rejects = pl.DataFrame({"as_of": [date(2026, 11, 22)], "reason": ["bot_challenge"], "rejects": [2]})
    data = report.Report(DAY, {"nights": nights, "rejects": rejects})
    values = report.nights_chart(data).to_dict()
    rows = next(iter(values["datasets"].values()))
    totals = {(r["as_of"], r["series"]): r["count"] for r in rows}
    assert totals[("2026-11-21", "rejects: all reasons")] == 0
    assert totals[("2026-11-22", "rejects: bot_challenge")] == 2
    assert totals[("2026-11-22", "review queue: authors")] == 3


@pytest.mark.parametrize("checks, expected", [
    ([], "No check ran in this run."),
    ([report.CheckResult("core/papers", "gates", False, "ERROR", "1 of 9 expectations failed: <ids>")],
     "<tr class='failed'><td>core/papers</td><td>gates</td><td>failed</td><td>1 of 9 expectations failed: &lt;ids&gt;</td>"),
])
def test_the_checks_table_says_each_result_in_words(checks, expected):
    assert expected in report._checks_table(checks)


def test_the_score_charts_draw_a_large_night():
    """A 10k-profile night has ~50,000 author scores and ~15,000 paper scores: Altair refuses a chart
    with over 5,000 rows of data, which failed exports/report on that night (found by make cluster-demo).
    The distributions are counted before drawing and the scatter is a seeded sample."""
    from datetime import date

    n = 20_000
    authors = pl.DataFrame({
        "author_id": [f"A{i}" for i in range(n)], "display_name": [f"Person {i}" for i in range(n)],
        "reported_novelty_pct": [float(i % 101) for i in range(n)], "reported_ai_score": [float(i % 97) for i in range(n)],
        "computed_novelty": [float(i % 89) for i in range(n)]})
    papers = pl.DataFrame({"title": [f"Paper {i}" for i in range(n)], "reported_score": [float(i % 100) for i in range(n)],
                           "novelty_score": [float(i % 83) for i in range(n)]})
    r = report.Report(as_of=date(2026, 11, 23), frames={"author_scores": authors, "paper_scores": papers})
    dist = report.score_distributions_chart(r).to_dict()
    rows = dist["datasets"][next(iter(dist["datasets"]))]
    assert len(rows) <= 30 and sum(row["authors"] for row in rows) == 3 * n  # at most 10 bins per measure, every author counted
    assert {row["start"] for row in rows} == set(range(0, 100, 10))
    relation = report.score_relation_chart(r).to_dict()
    points = relation["datasets"][next(iter(relation["datasets"]))]
    assert len(points) == 3 * report.SCATTER_POINTS and "a sample" in relation["title"]

"""The nightly report: one self-contained HTML page of pictures of the warehouse, readable offline.

``exports/<date>/report.html`` (and so ``exports/latest/report.html``) holds:

1. the collaboration network of the most connected authors, drawn as a graph (force layout);
2. citation growth over the nights for the top authors (reported totals) and papers (OpenAlex);
3. the distributions of reported Novelty %, AI Score and our computed novelty, and how they relate;
4. the rejects by reason and the review queue over the nights (``marts.nightly_summary``);
5. the night's check results (gates and warnings per table).

**Why Vega-Lite (through Altair).** A chart is a JSON spec that renders the same in two places without
a network: in the page, by the Vega, Vega-Lite and Vega-Embed JavaScript inlined into it (from
vl-convert's bundle — about 900 KB, no CDN), and as PNG for the Dagster UI, by ``vl-convert`` (Vega in
an embedded JavaScript engine: no browser, no Chrome). Altair is the Python API of Vega-Lite, kept by the
Vega project and widely used. Plotly would need kaleido and a Chrome for PNGs and a 3.5 MB script per
page; matplotlib draws only images, no page a person can hover. The network's layout (positions) is
computed by networkx (``spring_layout``, fixed seed: the same graph draws the same way every night);
Vega-Lite then draws the edges and nodes.

Every chart draws, whatever the data: a chart with nothing to show says why (``no rejects on any
night``) instead of being an empty frame. No Dagster imports; reads the warehouse through the
connection it is given (read-only is enough) and writes only the report file.
"""

from __future__ import annotations

import html
import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import duckdb
import polars as pl

from pipelines import warehouse

REPORT_FILE = "report.html"
NETWORK_AUTHORS = 30     # the most connected authors drawn in the network
NETWORK_LABELS = 12      # ... of which the best connected are named on the drawing
TOP_SERIES = 8           # citation series per chart (authors, papers)
WIDTH = 560
# The charts shown in the Dagster UI as pictures (the rest are in the page only).
UI_CHARTS = ("network", "citations_authors", "scores_relation", "nights")


@dataclass(frozen=True)
class CheckResult:
    """One asset check's result of the night, as the report shows it."""

    asset: str          # 'marts/author_metrics'
    check: str          # 'gates' | 'warnings'
    passed: bool
    severity: str       # 'ERROR' | 'WARN'
    description: str = ""


@dataclass
class Report:
    as_of: date
    frames: dict[str, pl.DataFrame]
    checks: list[CheckResult] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


# ============================================================================ data


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] | dict = ()) -> pl.DataFrame:
    return warehouse.read_frame(con, sql, params)


def gather(con: duckdb.DuckDBPyConnection, as_of: date, checks: Sequence[CheckResult] = ()) -> Report:
    """Everything the charts need, read from the warehouse as the night left it."""
    frames = {
        "edges": _frame(con, """
            SELECT e.author_a, e.author_b, e.papers_count, a.display_name AS name_a, b.display_name AS name_b
            FROM marts.collaboration_edges e
            JOIN core.authors a ON a.author_id = e.author_a
            JOIN core.authors b ON b.author_id = e.author_b"""),
        "authors": _frame(con, "SELECT author_id, display_name, papers_count, profiles_count FROM core.authors"),
        "citations_authors": _frame(con, """
            SELECT c.as_of, c.citations,
                   coalesce(a.display_name, c.source_profile_id) || ' (' || c.source || ')' AS series
            FROM marts.citations c LEFT JOIN core.authors a USING (author_id)
            WHERE c.level = 'author' AND c.as_of <= $as_of""", {"as_of": as_of}),
        "citations_papers": _frame(con, """
            SELECT c.as_of, c.citations,
                   CASE WHEN length(p.title) > 48 THEN left(p.title, 47) || '…' ELSE p.title END AS series
            FROM marts.citations c JOIN core.papers p USING (paper_id)
            WHERE c.level = 'paper' AND c.as_of <= $as_of""", {"as_of": as_of}),
        "author_scores": _frame(con, """
            SELECT s.author_id, a.display_name, s.source, s.reported_novelty_pct, s.reported_ai_score,
                   s.computed_novelty, s.papers_scored
            FROM marts.author_scores s JOIN core.authors a USING (author_id)"""),
        "paper_scores": _frame(con, """
            SELECT s.paper_id, p.title, s.reported_score, s.novelty_score, s.novelty_percentile
            FROM marts.paper_scores s JOIN core.papers p USING (paper_id)"""),
        "rejects": _frame(con, """
            SELECT partition_date AS as_of, reason, count(*) AS rejects
            FROM staging.rejects WHERE partition_date <= $as_of GROUP BY ALL""", {"as_of": as_of}),
        "nights": _frame(con, "SELECT * FROM marts.nightly_summary WHERE as_of <= $as_of ORDER BY as_of",
                         {"as_of": as_of}),
    }
    tonight = frames["nights"].filter(pl.col("as_of") == as_of)
    figures = tonight.row(0, named=True) if tonight.height else {}
    return Report(as_of, frames, list(checks), figures)


# ============================================================================ charts


def _alt():
    import altair as alt  # imported here: loading the definitions must stay quick

    return alt


def _dates(frame: pl.DataFrame, column: str = "as_of") -> pl.DataFrame:
    """Vega-Lite reads dates as ISO strings."""
    return frame.with_columns(pl.col(column).cast(pl.Utf8)) if column in frame.columns else frame


def _nothing(title: str, why: str):
    """A chart that draws and says why it has nothing to show."""
    alt = _alt()
    return alt.Chart(pl.DataFrame({"text": [why]})).mark_text(size=14, color="#666").encode(
        text="text:N").properties(title=title, width=WIDTH, height=120)


def network_layout(edges: pl.DataFrame, limit: int = NETWORK_AUTHORS) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nodes, edges) of the ``limit`` most connected authors (most co-authors, then most shared papers),
    with x/y positions: nodes ``author_id,
    name, degree, weight, x, y``; edges ``x, y, x2, y2, papers_count``. Deterministic (seeded layout)."""
    import networkx as nx

    graph = nx.Graph()
    for row in edges.iter_rows(named=True):
        graph.add_node(row["author_a"], name=row["name_a"])
        graph.add_node(row["author_b"], name=row["name_b"])
        graph.add_edge(row["author_a"], row["author_b"], weight=row["papers_count"])
    ranked = sorted(graph.nodes, key=lambda n: (-graph.degree(n), -graph.degree(n, weight="weight"), n))[:limit]
    sub = graph.subgraph(ranked)
    if not sub.number_of_nodes():
        return pl.DataFrame(), pl.DataFrame()
    positions = nx.spring_layout(sub, seed=7, weight="weight", k=2.5 / max(1, sub.number_of_nodes()) ** 0.5)
    nodes = pl.DataFrame([
        {"author_id": n, "name": sub.nodes[n]["name"], "degree": sub.degree(n),
         "weight": sub.degree(n, weight="weight"), "x": float(positions[n][0]), "y": float(positions[n][1])}
        for n in sorted(sub.nodes)
    ])
    links = pl.DataFrame([
        {"x": float(positions[a][0]), "y": float(positions[a][1]), "x2": float(positions[b][0]),
         "y2": float(positions[b][1]), "papers_count": int(d["weight"]),
         "pair": f"{sub.nodes[a]['name']} – {sub.nodes[b]['name']}"}
        for a, b, d in sorted(sub.edges(data=True))
    ], schema={"x": pl.Float64, "y": pl.Float64, "x2": pl.Float64, "y2": pl.Float64, "papers_count": pl.Int64,
               "pair": pl.Utf8})
    return nodes, links


def network_chart(report: Report):
    alt = _alt()
    title = f"Collaboration network: the {NETWORK_AUTHORS} most connected authors"
    nodes, links = network_layout(report.frames["edges"])
    if not nodes.height:
        return _nothing(title, "no collaboration edges yet")
    axis = alt.Axis(title=None, labels=False, ticks=False, grid=False, domain=False)
    x = alt.X("x:Q", axis=axis, scale=alt.Scale(padding=40))
    y = alt.Y("y:Q", axis=axis, scale=alt.Scale(padding=30))
    edges = alt.Chart(links).mark_rule(color="#9aa5b1", opacity=0.7).encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q",
        strokeWidth=alt.StrokeWidth("papers_count:Q", scale=alt.Scale(range=[1, 6]), title="shared papers"),
        tooltip=["pair:N", alt.Tooltip("papers_count:Q", title="shared papers")])
    points = alt.Chart(nodes).mark_circle(color="#2f6db5", opacity=0.9, stroke="white", strokeWidth=1).encode(
        x=x, y=y, size=alt.Size("weight:Q", scale=alt.Scale(range=[60, 600]), title="papers with co-authors"),
        tooltip=["name:N", alt.Tooltip("degree:Q", title="co-authors")])
    # names of the best connected only: thirty overlapping labels are unreadable (hover shows every name)
    named = nodes.sort(["weight", "name"], descending=[True, False]).head(NETWORK_LABELS)
    labels = alt.Chart(named).mark_text(dy=-13, fontSize=11, color="#222").encode(x=x, y=y, text="name:N")
    return (edges + points + labels).properties(title=title, width=WIDTH, height=420).configure_view(stroke=None)


def _top_series(frame: pl.DataFrame, top: int = TOP_SERIES) -> pl.DataFrame:
    latest = frame.sort("as_of").group_by("series").agg(pl.col("citations").last().alias("latest"))
    keep = latest.sort(["latest", "series"], descending=[True, False]).head(top)["series"]
    return frame.filter(pl.col("series").is_in(keep.implode())) if keep.len() else frame.head(0)


def citations_chart(report: Report, level: str):
    alt = _alt()
    frame = report.frames[f"citations_{level}"]
    title = f"Citations over the nights: top {TOP_SERIES} {level}"
    if not frame.height:
        why = ("no per-paper citation counts: they come from OpenAlex (set SCHOLARHOUSE_CONTACT to enrich)"
               if level == "papers" else "no citation counts reported yet")
        return _nothing(title, why)
    data = _dates(_top_series(frame).sort(["series", "as_of"]))
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("as_of:O", title="night", axis=alt.Axis(labelAngle=0, labelOverlap=True)), y=alt.Y("citations:Q", title="citations"),
        color=alt.Color("series:N", title=None, legend=alt.Legend(orient="right", labelLimit=260)),
        tooltip=["series:N", "as_of:O", "citations:Q"]).properties(title=title, width=WIDTH, height=260)


SCORE_LABELS = {"reported_novelty_pct": "reported Novelty %", "reported_ai_score": "reported AI Score",
                "computed_novelty": "our novelty (mean paper percentile)"}


def score_distributions_chart(report: Report):
    alt = _alt()
    scores = report.frames["author_scores"]
    title = "Distributions: reported Novelty %, AI Score and our novelty (authors, 0–100)"
    long = scores.unpivot(index=["author_id"], on=list(SCORE_LABELS), variable_name="measure", value_name="value") \
        .drop_nulls("value").with_columns(pl.col("measure").replace(SCORE_LABELS))
    if not long.height:
        return _nothing(title, "no scores yet")
    # Counted here, not by Vega-Lite: the chart carries 10 bins per measure, not one row per author
    # (Altair refuses data over 5,000 rows, and a 10k-profile night has 50,000 author scores).
    # Bins of 10 over [0, 100], the last one closed, as alt.Bin(extent=[0, 100], step=10) draws them.
    binned = long.with_columns(start=(pl.col("value").clip(0, 100) // 10 * 10).clip(0, 90).cast(pl.Int32)) \
        .group_by("measure", "start").agg(authors=pl.len()).with_columns(end=pl.col("start") + 10) \
        .sort("measure", "start")
    return alt.Chart(binned).mark_bar(opacity=0.85).encode(
        x=alt.X("start:Q", bin="binned", scale=alt.Scale(domain=[0, 100]), title="score"),
        x2="end:Q",
        y=alt.Y("authors:Q", title="authors"),
        color=alt.Color("measure:N", legend=None),
        row=alt.Row("measure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        tooltip=["measure:N", "start:Q", "end:Q", "authors:Q"]).properties(title=title, width=WIDTH, height=90)


SCATTER_POINTS = 1_500  # per kind of pair at most (a seeded sample beyond): three kinds stay under Altair's 5,000 rows


def score_relation_chart(report: Report):
    alt = _alt()
    title = "Our novelty against the sites' scores"
    authors = report.frames["author_scores"].drop_nulls(["computed_novelty"])
    papers = report.frames["paper_scores"].drop_nulls(["novelty_score"])
    parts = []
    for measure, label in (("reported_novelty_pct", "reported Novelty %"), ("reported_ai_score", "reported AI Score")):
        frame = authors.drop_nulls([measure])
        if frame.height:
            parts.append(frame.select(pl.col("display_name").alias("name"), pl.col(measure).alias("reported"),
                                      pl.col("computed_novelty").alias("ours"), pl.lit(f"author: {label}").alias("pair")))
    frame = papers.drop_nulls(["reported_score"])
    if frame.height:
        parts.append(frame.select(pl.col("title").str.slice(0, 60).alias("name"), pl.col("reported_score").alias("reported"),
                                  pl.col("novelty_score").alias("ours"), pl.lit("paper: Scholar Feed score").alias("pair")))
    if not parts:
        return _nothing(title, "no item has both a reported score and ours yet")
    sampled = [f"{p['pair'][0]}: {SCATTER_POINTS:,} of {p.height:,}" for p in parts if p.height > SCATTER_POINTS]
    parts = [p.sample(SCATTER_POINTS, seed=0) if p.height > SCATTER_POINTS else p for p in parts]
    if sampled:
        title = f"{title} (a sample — {'; '.join(sampled)})"
    data = pl.concat(parts, how="vertical_relaxed")
    scale = alt.Scale(domain=[0, 100])
    return alt.Chart(data).mark_point(filled=True, size=70).encode(
        x=alt.X("reported:Q", scale=scale, title="reported by the site"),
        y=alt.Y("ours:Q", scale=scale, title="our novelty"),
        color=alt.Color("pair:N", title=None, legend=alt.Legend(orient="bottom", columns=1)),
        tooltip=["name:N", "pair:N", "reported:Q", alt.Tooltip("ours:Q", format=".1f")],
    ).properties(title=title, width=WIDTH, height=300)


def nights_chart(report: Report):
    """Rejects by reason and the review queue, night by night."""
    alt = _alt()
    nights = report.frames["nights"]
    title = "Rejects by reason and the review queue, night by night"
    if not nights.height:
        return _nothing(title, "no night summarised yet (marts.nightly_summary)")
    rejects = report.frames["rejects"]
    # every night has a total, so a night without rejects draws as 0 rather than as a gap
    lines = pl.concat([
        nights.select("as_of", pl.lit("rejects: all reasons").alias("series"), pl.col("rejects").alias("count")),
        rejects.select("as_of", ("rejects: " + pl.col("reason")).alias("series"), pl.col("rejects").cast(pl.Int64).alias("count")),
        nights.select("as_of", pl.lit("review queue: papers").alias("series"), pl.col("review_paper_pairs").alias("count")),
        nights.select("as_of", pl.lit("review queue: authors").alias("series"), pl.col("review_author_pairs").alias("count")),
    ], how="vertical_relaxed").with_columns(
        pl.when(pl.col("series").str.starts_with("review")).then(pl.lit("review queue (pairs)"))
        .otherwise(pl.lit("rejects")).alias("panel"))
    return alt.Chart(_dates(lines)).mark_line(point=True).encode(
        x=alt.X("as_of:O", title="night", axis=alt.Axis(labelAngle=0, labelOverlap=True)), y=alt.Y("count:Q", title=None),
        color=alt.Color("series:N", title=None, legend=alt.Legend(orient="right", labelLimit=240)),
        row=alt.Row("panel:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        tooltip=["series:N", "as_of:O", "count:Q"],
    ).resolve_scale(y="independent").properties(title=title, width=WIDTH, height=150)


def checks_chart(report: Report):
    alt = _alt()
    title = "Checks of the night: gates and warnings per layer"
    if not report.checks:
        return _nothing(title, "no check ran in this run")
    data = pl.DataFrame([{"layer": c.asset.split("/")[0], "check": c.check,
                          "result": "passed" if c.passed else ("failed" if c.severity == "ERROR" else "warned")}
                         for c in report.checks])
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("layer:N", title=None), x=alt.X("count():Q", title="checks"),
        color=alt.Color("result:N", scale=alt.Scale(domain=["passed", "warned", "failed"],
                                                   range=["#4c9a2a", "#e6a700", "#c0392b"])),
        tooltip=["layer:N", "check:N", "result:N", "count():Q"]).properties(title=title, width=WIDTH, height=160)


def charts(report: Report) -> dict[str, Any]:
    """Every chart of the page, by id, in page order."""
    return {
        "network": network_chart(report),
        "citations_authors": citations_chart(report, "authors"),
        "citations_papers": citations_chart(report, "papers"),
        "scores_distribution": score_distributions_chart(report),
        "scores_relation": score_relation_chart(report),
        "nights": nights_chart(report),
        "checks": checks_chart(report),
    }


# ============================================================================ output


@lru_cache(maxsize=1)
def javascript_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed in one script (from vl-convert, offline): inlined in every page."""
    import vl_convert

    return vl_convert.javascript_bundle()


def png(chart: Any, scale: float = 1.0) -> bytes:
    """A chart as PNG, rendered without a browser (vl-convert)."""
    import vl_convert

    return vl_convert.vegalite_to_png(chart.to_dict(), scale=scale)


SECTIONS = (
    ("network", "Who works with whom", "Authors are nodes (size: papers shared with co-authors), a line joins two "
     "authors who share a paper (width: how many). Only evidence-backed authorships count: a truncated byline "
     "never invents an edge (marts.collaboration_edges)."),
    ("citations_authors", "Citation growth: authors", "The citation totals the profiles report, night by night "
     "(marts.citations, level 'author')."),
    ("citations_papers", "Citation growth: papers", "Per-paper citation counts from OpenAlex, night by night "
     "(marts.citations, level 'paper')."),
    ("scores_distribution", "Scores", "Scholar Feed's reported Novelty % and AI Score per profile, and our own "
     "novelty — the mean novelty percentile of the author's papers (marts.author_scores; docs/scoring.md)."),
    ("scores_relation", "Do the scores agree?", "Each point is an author (or a paper): the site's score across, "
     "ours up. Points on the diagonal agree."),
    ("nights", "Rejects and the review queue", "What each night dropped, by reason (staging.rejects), and the pairs "
     "waiting for a person's decision after it (core.match_review, kept per night in marts.nightly_summary)."),
    ("checks", "Data quality checks", "The Great Expectations suites run as Dagster asset checks in this run."),
)


def _checks_table(checks: Sequence[CheckResult]) -> str:
    if not checks:
        return "<p class='note'>No check ran in this run.</p>"
    rows = []
    for c in sorted(checks, key=lambda c: (c.passed, c.asset, c.check)):
        status = "passed" if c.passed else ("failed" if c.severity == "ERROR" else "warning")
        rows.append(f"<tr class='{status}'><td>{html.escape(c.asset)}</td><td>{html.escape(c.check)}</td>"
                    f"<td>{status}</td><td>{html.escape(c.description)}</td></tr>")
    return ("<table class='checks'><thead><tr><th>table</th><th>check</th><th>result</th><th>what it says</th>"
            "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1000px;
       color: #222; padding: 0 1rem; }
h1 { margin-bottom: .2rem; } .sub { color: #666; margin-top: 0; }
section { margin: 2rem 0; } .note { color: #666; }
.figures { display: flex; flex-wrap: wrap; gap: .6rem; padding: 0; list-style: none; }
.figures li { background: #f3f5f7; border-radius: 6px; padding: .4rem .8rem; }
.figures b { display: block; font-size: 1.3rem; }
table.checks { border-collapse: collapse; width: 100%; font-size: .9rem; margin-top: 1rem; }
table.checks td, table.checks th { border-bottom: 1px solid #ddd; padding: .3rem .5rem; text-align: left; }
tr.failed td { background: #fbe3e0; } tr.warning td { background: #fff4d6; }
"""


def render_html(report: Report, specs: dict[str, dict], *, generated_at: datetime | None = None,
                code_version: str = "") -> str:
    """The page: every chart's Vega-Lite spec embedded with the inlined JavaScript, no external request.
    Each chart's ``div.chart`` gets ``data-rendered="true"`` once drawn (or ``data-error``), which the
    browser test reads."""
    generated_at = generated_at or datetime.now(timezone.utc)
    fig = report.figures
    figures = "".join(f"<li><b>{fig.get(k, '–')}</b>{label}</li>" for k, label in (
        ("pages", "pages"), ("profiles", "profiles"), ("listings", "listings"), ("rejects", "rejects"),
        ("quality_issues", "values with an issue"), ("papers", "papers"), ("authors", "authors"),
        ("review_paper_pairs", "papers to review"), ("review_author_pairs", "authors to review"),
        ("collaboration_edges", "collaboration edges")))
    failed = [c for c in report.checks if not c.passed]
    sections = []
    for chart_id, heading, text in SECTIONS:
        if chart_id not in specs:
            continue
        extra = _checks_table(report.checks) if chart_id == "checks" else ""
        sections.append(f"<section><h2>{html.escape(heading)}</h2><p class='note'>{html.escape(text)}</p>"
                        f"<div class='chart' id='chart-{chart_id}' data-chart='{chart_id}'></div>{extra}</section>")
    payload = json.dumps(specs, separators=(",", ":")).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scholarhouse — nightly report {report.as_of}</title>
<style>{STYLE}</style>
<script>{javascript_bundle()}</script>
</head><body>
<h1>scholarhouse — the night of {report.as_of}</h1>
<p class="sub">Generated {generated_at:%Y-%m-%d %H:%M} UTC{f" by {html.escape(code_version)}" if code_version else ""}.
Checks: {len(report.checks) - len(failed)} passed, {len(failed)} not passed. This page works offline.</p>
<ul class="figures">{figures}</ul>
{''.join(sections)}
<script>
const specs = {payload};
window.reportCharts = Object.keys(specs);
window.reportErrors = [];
for (const [id, spec] of Object.entries(specs)) {{
  const el = document.getElementById('chart-' + id);
  vegaEmbed(el, spec, {{renderer: 'svg', actions: false}})
    .then(() => {{ el.dataset.rendered = 'true'; }})
    .catch((err) => {{ el.dataset.error = String(err); window.reportErrors.push(id + ': ' + err); console.error(err); }});
}}
</script>
</body></html>
"""


def write(report: Report, folder: Path, *, code_version: str = "") -> dict:
    """Write ``folder/report.html`` atomically (a temporary file renamed over it), and return its path,
    size and the PNGs of the charts shown in the Dagster UI."""
    built = charts(report)
    specs = {name: chart.to_dict() for name, chart in built.items()}
    text = render_html(report, specs, code_version=code_version)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / REPORT_FILE
    tmp = folder / f".{REPORT_FILE}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return {"path": str(target), "bytes": target.stat().st_size, "charts": list(specs),
            "pngs": {name: png(built[name]) for name in UI_CHARTS if name in built}}

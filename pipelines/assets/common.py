"""Small helpers the assets share: metadata for the UI."""

import dagster as dg
import polars as pl

WAREHOUSE_POOL = "warehouse"  # every asset that writes DuckDB: one writer at a time (see dagster_home.yaml)
RETRY = dg.RetryPolicy(max_retries=2, delay=10, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


def preview(frame: pl.DataFrame, columns: list[str] | None = None, rows: int = 5) -> dg.MetadataValue:
    """A small markdown table for the asset page."""
    if columns:
        frame = frame.select([c for c in columns if c in frame.columns])
    frame = frame.head(rows)
    if frame.width == 0:
        return dg.MetadataValue.md("_(empty)_")
    def cell(v: object) -> str:
        text = "" if v is None else str(v)
        text = text.replace("|", "\\|").replace("\n", " ")
        return text if len(text) <= 60 else text[:57] + "..."
    header = "| " + " | ".join(frame.columns) + " |\n| " + " | ".join("---" for _ in frame.columns) + " |\n"
    body = "".join("| " + " | ".join(cell(v) for v in row) + " |\n" for row in frame.iter_rows())
    return dg.MetadataValue.md(header + body)

"""Publish: Parquet exports and the analytics copy (``exports.py``), the nightly report
(``report.py``). Plain Python, no Dagster."""

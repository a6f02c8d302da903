"""Staging: the site parsers, and landing pages into raw.page_captures and the staging tables
(``build.py``). Plain Python, no Dagster."""

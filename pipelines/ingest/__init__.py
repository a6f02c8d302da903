"""Ingest: what comes from outside -- page sources (a captures folder, the live crawler), the
arXiv and OpenAlex clients, and the enrichment's lookups. Plain Python, no Dagster."""

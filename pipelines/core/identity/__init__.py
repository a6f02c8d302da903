"""Stable warehouse ids and user overrides on top of the matchers' clusters. No Dagster imports."""

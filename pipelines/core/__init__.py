"""Core: entity resolution (``resolution/``), stable ids and overrides (``identity/``), the
identifier crosswalk, and the build of the core tables (``build.py``). Plain Python, no Dagster."""

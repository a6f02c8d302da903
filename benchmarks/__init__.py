"""Benchmark and generator code, outside the runtime package: synthetic capture corpora with ground
truth (``synthetic/``) and synthetic bibliographies for the matchers (``bibliographies.py``).
Used by ``scripts/`` and the tests; never imported by ``pipelines``."""

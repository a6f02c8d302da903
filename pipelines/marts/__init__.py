"""Marts: the mart statements of ``sql/marts/`` and the novelty scorer (``scoring/``), run by
``build.py``. Plain Python, no Dagster."""

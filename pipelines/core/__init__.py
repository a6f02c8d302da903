"""Core: entity resolution (``resolution/``), stable ids and overrides (``identity/``), the
identifier crosswalk (``identifiers.py``), and the build of the core tables as named steps
(``build.py``: ``papers.py`` → ``mentions.py`` → ``authors.py`` → ``tables.py``). Plain Python, no Dagster."""

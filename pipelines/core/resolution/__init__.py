"""Entity resolution for bibliographic data: which records are one paper, which names one person.

Plain Polars-in, Polars-out functions, no Dagster: usable on any table (users dedupe their own
bibliographies with them). Unsupervised, deterministic (any row order gives the same clusters
and ids), and linear in the input thanks to blocking.

- :func:`match_papers` / :func:`resolve_papers` / :func:`paper_review_pairs` — ``papers.py``
- :func:`match_authors` / :func:`resolve_authors` / :func:`author_review_pairs` — ``authors.py``
- building blocks: ``names.py`` (person names), ``titles.py`` (title diff and vetoes),
  ``blocking.py`` (candidate pairs), ``clustering.py`` (constrained union-find),
  and seeded benchmark data with ground truth in ``benchmarks/bibliographies.py`` (outside the runtime package).
- incremental nights (re-resolve only what a night's changes can reach): ``incremental.py``
  (authors), ``incremental_papers.py`` (papers).

See ``docs/resolution.md`` for the algorithm in plain words and the benchmark figures.
"""

from pipelines.core.resolution.authors import author_review_pairs, match_authors, resolve_authors
from pipelines.core.resolution.names import name_compatibility, parse_name, split_author_list
from pipelines.core.resolution.papers import match_papers, paper_review_pairs, resolve_papers

__all__ = [
    "author_review_pairs",
    "match_authors",
    "match_papers",
    "name_compatibility",
    "paper_review_pairs",
    "parse_name",
    "resolve_authors",
    "resolve_papers",
    "split_author_list",
]

"""Deterministic synthetic profile-page corpora with ground truth (scale and quality benchmarks).

See ``generator.py`` (and ``mutation.py``) for the API and docs/synthetic.md for what is generated and at which rates.
"""

from .generator import CorpusSummary, generate_corpus
from .mutation import MutationSummary, mutate

__all__ = ["CorpusSummary", "MutationSummary", "generate_corpus", "mutate"]

"""Deterministic synthetic profile-page corpora with ground truth (scale and quality benchmarks).

See ``generator.py`` for the API and docs/synthetic.md for what is generated and at which rates.
"""

from .generator import CorpusSummary, MutationSummary, generate_corpus, mutate

__all__ = ["CorpusSummary", "MutationSummary", "generate_corpus", "mutate"]

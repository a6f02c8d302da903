"""Our own scores, computed from the warehouse (pure logic, no Dagster).

``score_paper_novelty`` gives every paper a novelty score relative to the earlier papers of its
field; ``author_novelty`` averages it per author. Definitions: docs/scoring.md.
"""

from pipelines.marts.scoring.novelty import (
    METHOD_VERSION,
    author_novelty,
    score_paper_novelty,
)

__all__ = ["METHOD_VERSION", "author_novelty", "score_paper_novelty"]

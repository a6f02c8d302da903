"""The review queue both matchers produce: pairs a person should look at, one per pair of clusters.

Rows name one member of each cluster (``left_id``/``right_id``) and the clusters themselves
(``left_cluster``/``right_cluster``); the strongest pair of each two clusters is kept, and the
queue is ordered by score, then ids, so the same input always gives the same queue.
"""

from __future__ import annotations

import polars as pl

REVIEW_SCHEMA = {
    "left_id": pl.String,
    "right_id": pl.String,
    "left_label": pl.String,
    "right_label": pl.String,
    "score": pl.Float64,
    "evidence_for": pl.String,
    "evidence_against": pl.String,
    "left_cluster": pl.String,
    "right_cluster": pl.String,
}
# Every column in the key: one pair can be queued twice with different evidence texts, and which
# one is kept must not depend on the sort's tie order.
_DEDUPE_ORDER = ["left_cluster", "right_cluster", "score", "left_id", "right_id", "evidence_for", "evidence_against"]
_QUEUE_ORDER = ["score", "left_id", "right_id"]


def review_queue(rows: list[dict]) -> pl.DataFrame:
    """Review rows (``REVIEW_SCHEMA`` dicts) -> the queue: one row per pair of clusters, in order."""
    if not rows:
        return pl.DataFrame(schema=REVIEW_SCHEMA)
    return queue_of(pl.DataFrame(rows, schema=REVIEW_SCHEMA))


def queue_of(frame: pl.DataFrame) -> pl.DataFrame:
    """Review rows as a frame (``REVIEW_SCHEMA``, ``left_cluster < right_cluster``) -> the queue."""
    return (
        frame.select(list(REVIEW_SCHEMA)).cast(REVIEW_SCHEMA)
        .sort(_DEDUPE_ORDER, descending=[False, False, True, False, False, False, False])
        .unique(["left_cluster", "right_cluster"], keep="first", maintain_order=True)
        .sort(_QUEUE_ORDER, descending=[True, False, False], maintain_order=True)
    )


def concat_queues(queues: list[pl.DataFrame]) -> pl.DataFrame:
    """Queues of disjoint sets of clusters (batches of a matcher's input) -> one queue, in order."""
    if len(queues) == 1:
        return queues[0]
    return pl.concat(queues).sort(_QUEUE_ORDER, descending=[True, False, False], maintain_order=True)

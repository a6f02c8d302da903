"""Incremental nights for the author matcher: re-resolve the people a change can reach, keep
everyone else as the last night left them.

Most nights change a sliver of the corpus (a profile lists a new paper, a count moves), yet a
full author resolution costs the same every night. So the core step keeps, per mention, what
the last resolution saw and decided (``cache.author_matches``: a digest of the mention's matcher
input, its cluster, method and score, its name labels; ``cache.author_match_review``: the
review rows) and the next night works from that:

1. **What changed.** A mention is *changed* when it is new or its digest differs. The digest
   covers every column the matcher reads for it *and* the names on its paper (its co-authors),
   so a new byline on a paper changes all of that paper's mentions. Mentions gone since the
   last night are *removed*.
2. **Who a change can reach.** The *seed*: the changed mentions plus every mention of a cluster
   that held a changed or removed mention. Any cluster that shares a name label (name key or
   loose key, as the matcher's candidates do) *and* a piece of evidence (a co-author key, a
   paper, an affiliation) with a seed cluster, or an identity (profile, ORCID, OpenAlex id)
   with a seed mention, could be merged with it or queued for review against it; so could a
   cluster the last review queue paired with a seed cluster. These join the *subset*: every
   candidate pair the matcher itself could form with a changed mention.
3. **Re-resolve the subset** with the ordinary matcher (``resolve_authors``, the names on its
   papers taken from all mentions), and keep every other mention's cluster, method and score.
   Clusters are whole: a cluster is either entirely re-resolved or entirely kept, so the result
   is a partition, and cluster labels (the smallest mention id) cannot collide.
4. **Review queue**: the subset's new rows, plus the last night's rows between kept clusters
   (and those with one side in the subset, relabelled), one row per pair of clusters.
   Re-running a night with nothing changed re-resolves nobody and returns the same result.

What this does not redo: a ripple two steps away — cluster A absorbs a changed mention, and
that extra evidence would now let A merge with a cluster that shares nothing with the seed.
Nor does it see a (name key, evidence) group that the matcher skips as too common (over
``MAX_EVIDENCE_GROUP`` clusters corpus-wide) but that the subset holds only part of. A full
resolution picks both up; it runs every Sunday night (``scheduled_full``), when there is no
state, when the matcher's code changed (``version``), when more than ``MAX_CHANGED_SHARE`` of
the mentions changed, or with ``SCHOLARHOUSE_INCREMENTAL_RESOLUTION=off``. On the benchmark's 1 %
night the incremental result is compared with the full one (docs/benchmarks.md).

Pure logic, Polars in and out; no Dagster, no warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import numpy as np
import polars as pl

from pipelines.core.resolution import authors as _authors
from pipelines.core.resolution.author_mentions import check_mention_ids, is_owner, optional_column
from pipelines.core.resolution.authors import (
    ASSIGNMENT_SCHEMA,
    fit_author_model,
    identity_label_columns,
    name_label_table,
    resolve_authors,
)
from pipelines.core.resolution.author_linkage import model_from_rows, model_rows, per_value
from pipelines.core.resolution.names import name_forms
from pipelines.core.resolution.review import REVIEW_SCHEMA, queue_of
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.textnorm import match_key

# Above this share of changed + removed mentions a full resolution is cheaper than working out
# who the changes reach (and leaves no ripple behind).
MAX_CHANGED_SHARE = 0.05

AUTHOR_STATE_SCHEMA = {
    "mention_id": pl.String,
    "digest": pl.UInt64,
    "author_id": pl.String,  # the matcher's cluster label (smallest mention id), not the stable id
    "method": pl.String,
    "score": pl.Float64,
    "labels": pl.List(pl.String),
    "version": pl.String,
}

AUTHOR_MODEL_SCHEMA = {"part": pl.String, "key": pl.String, "value": pl.Float64}


def model_frame(model: _authors.AuthorModel) -> pl.DataFrame:
    """An author model as the rows ``cache.author_model`` keeps."""
    return pl.DataFrame(model_rows(model), schema=AUTHOR_MODEL_SCHEMA)


def model_of(frame: pl.DataFrame) -> _authors.AuthorModel:
    """The author model kept in ``frame`` (:func:`model_frame`)."""
    return model_from_rows(frame["part"].to_list(), frame["key"].to_list(), frame["value"].to_list())


# The columns the matcher reads for a mention (see author_mentions.prepare_mentions), with their types.
_MATCHER_COLUMNS = {
    "name": pl.String, "paper_id": pl.String, "title": pl.String, "year": pl.Int64, "venue": pl.String,
    "affiliation": pl.String, "source": pl.String,
    "source_profile_id": pl.String, "orcid": pl.String, "openalex_id": pl.String,
}


# A full resolution on this weekday's night (Sunday) lets whatever an incremental night cannot
# see (the module docstring) heal within a week.
FULL_RESOLUTION_WEEKDAY = 6


def scheduled_full(night: date) -> str | None:
    """Why ``night`` resolves every author in any case (its weekly full night), else None."""
    return "the weekly full resolution (Sunday night)" if night.weekday() == FULL_RESOLUTION_WEEKDAY else None


def code_fingerprint(modules, versions: list[str]) -> str:
    """A 16-hex fingerprint of ``modules``' source and of library ``versions``: a matcher's state
    written under another fingerprint is not used (shared by the author and paper nights)."""
    import hashlib
    import inspect

    parts = [v.encode() for v in versions]
    for module in modules:
        try:
            parts.append(inspect.getsource(module).encode())
        except (OSError, TypeError):  # no source shipped: the module's name (a release bumps it)
            parts.append(module.__name__.encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


# The packages whose modules a matcher's fingerprint covers (the matchers' own code and the text
# normalisation they read through).
_MATCHER_PACKAGES = ("pipelines.core.resolution.", "pipelines.textnorm")


def matcher_modules(entry) -> list:
    """``entry`` (a matcher's module) and every module of the matchers' packages it uses, directly
    or through one another (modules imported, or whose functions and classes they imported), by
    name: a module split out of a matcher is covered without anyone listing it."""
    import inspect
    import sys

    seen = {entry.__name__: entry}
    todo = [entry]
    while todo:
        current = todo.pop()
        found = [value if inspect.ismodule(value) else sys.modules.get(getattr(value, "__module__", None) or "")
                 for value in vars(current).values()]
        # Names imported from a module that are plain data (a frozenset of names) carry no module:
        # the import statements say where they came from.
        found += [_module_named(name) for name in _imported_modules(current)]
        for module in found:
            if module is None or module.__name__ in seen or not module.__name__.startswith(_MATCHER_PACKAGES):
                continue
            seen[module.__name__] = module
            todo.append(module)
    return [seen[name] for name in sorted(seen)]


def _module_named(name: str):
    """The matcher-package module ``name`` (imported now if only a function imports it, so the
    fingerprint does not depend on what happened to be loaded), else None."""
    import importlib
    import sys

    if name in sys.modules or not name.startswith(_MATCHER_PACKAGES):
        return sys.modules.get(name)
    try:
        return importlib.import_module(name)
    except ImportError:  # "package.module.function": a name imported from a module, not a module
        return None


def _imported_modules(module) -> list[str]:
    """The modules ``module``'s source imports from (absolute imports; none without source)."""
    import ast
    import inspect

    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def author_matcher_version() -> str:
    """Fingerprint of the author matcher's code and Polars' version (the digests are Polars
    hashes, stable within one version): state written by another version is not used."""
    import sys

    return code_fingerprint([*matcher_modules(_authors), sys.modules[__name__]], [pl.__version__])


@dataclass
class StateComparison:
    """Tonight's records against the last night's state (see :func:`compare_with_state`)."""

    reason: str | None  # why everything must be resolved tonight; None: an incremental night can run
    joined: pl.DataFrame | None = None  # tonight's rows with the state's columns (previous_digest, ...)
    changed: pl.Series | None = None  # per row of ``joined``: new, or its digest differs
    removed: pl.DataFrame | None = None  # state rows whose record is gone


def compare_with_state(current: pl.DataFrame, state: pl.DataFrame | None, schema: dict, key: str, version: str, *,
                       what: str, max_changed_share: float, full_reason: str | None = None,
                       extra_reason: str | None = None, incremental: bool = True) -> StateComparison:
    """Shared by the author and paper nights: whether tonight can be incremental and, if so,
    which records changed. ``current``: ``key``, ``digest`` of every record tonight; ``state``:
    the last night's rows (``schema``, with ``digest`` and ``version``); ``extra_reason``: a
    caller's own reason for a full night, checked after the missing state; ``incremental``: the
    setting ``SCHOLARHOUSE_INCREMENTAL_RESOLUTION`` (False: every night is a full one)."""
    if full_reason is not None:
        return StateComparison(full_reason)
    if not incremental:
        return StateComparison("SCHOLARHOUSE_INCREMENTAL_RESOLUTION is off")
    if state is None or state.height == 0:
        return StateComparison("no earlier resolution")
    if extra_reason is not None:
        return StateComparison(extra_reason)
    if state["version"].n_unique() != 1 or state["version"][0] != version:
        return StateComparison("the matcher changed since the earlier resolution")
    previous = state.select(list(schema)).cast(schema).drop("version")
    joined = current.join(previous.rename({"digest": "previous_digest"}), on=key, how="left", maintain_order="left")
    changed = joined["previous_digest"].is_null() | (joined["previous_digest"] != joined["digest"])
    removed = previous.join(current, on=key, how="anti")
    share = (int(changed.sum()) + removed.height) / current.height
    if share > max_changed_share:
        return StateComparison(f"{share:.1%} of the {what} changed (more than {max_changed_share:.0%})")
    return StateComparison(None, joined, changed, removed)


def mention_digests(mentions: pl.DataFrame) -> pl.Series:
    """Per mention, a 64-bit digest of its matcher input: its own columns and the names on its
    paper (every mention's name and listed co-authors there)."""
    coauthors = (pl.col("coauthors").cast(pl.List(pl.String)) if "coauthors" in mentions.columns
                 else pl.lit(None, pl.List(pl.String)))
    own = mentions.select(
        pl.col("mention_id").cast(pl.String),
        *[optional_column(mentions, c, t).alias(c) for c, t in _MATCHER_COLUMNS.items()],
        coauthors.alias("coauthors"),
        is_owner(mentions).alias("owner"),
    )
    names_here = (
        own.filter(pl.col("paper_id").is_not_null())
        .with_columns(h=pl.struct("name", "coauthors").hash())
        .group_by("paper_id").agg(pl.col("h").sort())
        .select("paper_id", paper_digest=pl.col("h").hash())
    )
    return (
        own.join(names_here, on="paper_id", how="left", maintain_order="left")
        .select(pl.struct(pl.all()).hash().alias("digest"))["digest"]
    )


def name_labels(names: pl.Series, only: pl.Series | None = None) -> pl.Series:
    """The matcher's interaction labels of each name (name keys ``k|``, loose keys ``l|``);
    with ``only`` (a mask), computed for those rows and null elsewhere."""
    names = names.cast(pl.String).fill_null("")
    table = name_label_table(names if only is None else names.filter(only)).rename({"label": "labels"})
    frame = pl.DataFrame({"name": names, "only": True if only is None else only})
    return frame.join(table, on="name", how="left", maintain_order="left").select(
        pl.when("only").then("labels"))["labels"]


@dataclass
class AuthorNight:
    """One night's author resolution and the state the next night starts from."""

    assignments: pl.DataFrame  # ASSIGNMENT_SCHEMA, sorted by mention_id
    review: pl.DataFrame  # REVIEW_SCHEMA
    state: pl.DataFrame  # AUTHOR_STATE_SCHEMA
    stats: dict = field(default_factory=dict)
    # the evidence weights this night used (AUTHOR_MODEL_SCHEMA): fitted on a full night, kept by
    # the incremental nights after it (cache.author_model)
    model: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=AUTHOR_MODEL_SCHEMA))


def resolve_authors_incrementally(
    mentions: pl.DataFrame,
    state: pl.DataFrame | None = None,
    review: pl.DataFrame | None = None,
    *,
    model: pl.DataFrame | None = None,
    max_changed_share: float = MAX_CHANGED_SHARE,
    full_reason: str | None = None,
    options: MatchOptions | None = None,
) -> AuthorNight:
    """``resolve_authors`` for a night that follows another: ``state``/``review``/``model`` are
    what the last night returned (``AuthorNight.state``/``.review``/``.model``). Without them —
    or when they cannot be used, or ``full_reason`` asks for it — every mention is resolved with
    evidence weights fitted tonight; ``stats["mode"]`` says which ran and why. An incremental
    night weighs evidence with the stored ``model`` (fitted by the last full night), so its
    result is the full resolution's under that model. ``options``: how the matcher runs (workers,
    batch size, whether a night may be incremental; the settings, by default their defaults)."""
    options = options or MatchOptions()
    if mentions.height == 0:
        return AuthorNight(pl.DataFrame(schema=ASSIGNMENT_SCHEMA), pl.DataFrame(schema=REVIEW_SCHEMA),
                           pl.DataFrame(schema=AUTHOR_STATE_SCHEMA), {"mode": "full", "reason": "no mentions"})
    if "mention_id" not in mentions.columns:
        raise ValueError("mentions lack columns: ['mention_id']")
    mentions = mentions.with_columns(pl.col("mention_id").cast(pl.String))
    current, version, comparison = compare_mentions(mentions, state, model, full_reason=full_reason,
                                                    max_changed_share=max_changed_share, incremental=options.incremental)
    reason = comparison.reason
    if reason is not None:
        fitted = fit_author_model(mentions)
        assigned, queue = resolve_authors(mentions, model=fitted, batch=options.author_batch, workers=options.workers)
        return AuthorNight(assigned, queue, _state(current, assigned, name_labels(mentions["name"]), version),
                           {"mode": "full", "reason": reason, "resolved": mentions.height}, model_frame(fitted))
    night = _incremental(mentions, current, comparison.joined, comparison.changed, comparison.removed, review, version,
                         model_of(model), options)
    night.model = model
    return night


def compare_mentions(mentions: pl.DataFrame, state: pl.DataFrame | None, model: pl.DataFrame | None, *,
                     full_reason: str | None = None, max_changed_share: float = MAX_CHANGED_SHARE,
                     incremental: bool = True) -> tuple[pl.DataFrame, str, StateComparison]:
    """Tonight's mentions (ids checked) against the last night's ``state``: their digests
    (``mention_id``, ``digest``), the matcher's version, and whether tonight can be incremental —
    the one decision :func:`resolve_authors_incrementally` and the core's shard plan both take."""
    check_mention_ids(mentions["mention_id"])
    version = author_matcher_version()
    current = pl.DataFrame({"mention_id": mentions["mention_id"], "digest": mention_digests(mentions)})
    comparison = compare_with_state(current, state, AUTHOR_STATE_SCHEMA, "mention_id", version, what="mentions",
                                    max_changed_share=max_changed_share, full_reason=full_reason,
                                    extra_reason=None if model is not None and model.height else "no stored author model",
                                    incremental=incremental)
    return current, version, comparison


def _state(current: pl.DataFrame, assigned: pl.DataFrame, labels: pl.Series, version: str) -> pl.DataFrame:
    return (
        current.with_columns(labels=labels)
        .join(assigned, on="mention_id", how="left")
        .with_columns(version=pl.lit(version))
        .select(list(AUTHOR_STATE_SCHEMA)).cast(AUTHOR_STATE_SCHEMA)
        .sort("mention_id")
    )


def _identity_labels(mentions: pl.DataFrame) -> pl.Series:
    """Each mention's identity labels (a list): the profile it owns, its ORCID, its OpenAlex id."""
    columns = identity_label_columns(mentions)
    return pl.DataFrame({f"c{k}": c for k, c in enumerate(columns)}).select(
        pl.concat_list(pl.all()).list.drop_nulls().alias("identity"))["identity"]


def _group_evidence(groups: pl.DataFrame, base: pl.DataFrame, mentions: pl.DataFrame) -> pl.DataFrame:
    """``(group, ev)`` for the mentions in ``groups`` (``mention_id``, ``group``): the evidence
    the matcher pairs clusters on (author_clusters._evidence_rows) — papers ``p:``, affiliations ``a:``
    and co-author keys ``c:`` — read from the stored name labels rather than by parsing names
    again. The co-author keys are every name key on the paper (each reading) but the mention's
    own, so the set can only be larger than the matcher's: it may reach a cluster too many,
    never one too few."""
    rows = base.join(groups, on="mention_id")
    papers = rows.select("group", "paper").drop_nulls().unique()
    wanted = papers["paper"].unique()
    keys = (base.filter(pl.col("paper").is_in(wanted.implode())).select("paper", key="labels").explode("key")
            .filter(pl.col("key").str.starts_with("k|")).select("paper", pl.col("key").str.slice(2)))
    # Listed co-authors that are no mention's name on that paper have no stored labels: read them here.
    listed = (
        mentions.select(paper=pl.col("paper_id").cast(pl.String), co=pl.col("coauthors").cast(pl.List(pl.String)))
        .filter(pl.col("paper").is_in(wanted.implode())).explode("co").drop_nulls()
        # per paper: one spelling may read differently from another of the same key
        .join(base.select("paper", co="name").unique(), on=["paper", "co"], how="anti").unique()
    ) if "coauthors" in mentions.columns else pl.DataFrame(schema={"paper": pl.String, "co": pl.String})
    if listed.height:
        distinct = listed["co"].unique()
        read = pl.DataFrame({"co": distinct, "key": [name_forms(x)[0] for x in distinct.to_list()]},
                            schema={"co": pl.String, "key": pl.String})
        keys = pl.concat([keys, listed.join(read, on="co").select("paper", "key").drop_nulls()])
    affiliations = rows.select("group", "affiliation").drop_nulls()
    return pl.concat([
        papers.select("group", ev=pl.concat_str(pl.lit("p:"), "paper")),
        # not a mention's own name keys (as the matcher: a second reading of one's own name)
        rows.select("group", "paper", own="labels").drop_nulls("paper").join(keys.unique(), on="paper")
        .filter(~pl.col("own").list.contains(pl.concat_str(pl.lit("k|"), "key")))
        .select("group", ev=pl.concat_str(pl.lit("c:"), "key")),
        affiliations.select("group", ev=pl.concat_str(pl.lit("a:"), "affiliation")),
    ]).unique()


def sharing_label_and_evidence(evidence: pl.DataFrame, labels: pl.DataFrame, wanted: pl.DataFrame) -> set:
    """The groups of ``evidence`` (``group``, ``ev``) holding a piece of evidence ``ev`` together
    with a name label of theirs (``labels``: ``group``, ``label``) as a pair of ``wanted``
    (``label``, ``ev``). Each side is first cut to the evidence and labels ``wanted`` holds, then
    joined per group and matched on the pair: joined on the evidence alone, a common affiliation
    multiplied every group holding it by every wanted label beside it (at 100k profiles a 1 %
    night's process grew past 19 GB there and was killed, 2026-11-26)."""
    evidence = evidence.join(wanted.select("ev").unique(), on="ev", how="semi")
    labels = labels.join(wanted.select("label").unique(), on="label", how="semi")
    return set(evidence.join(labels, on="group").join(wanted, on=["label", "ev"], how="semi")["group"].unique().to_list())


def _incremental(mentions, current, joined, changed, removed, review, version, model, options: MatchOptions) -> AuthorNight:
    n_changed = int(changed.sum())
    # Labels: the earlier night's for unchanged mentions (same digest, same name), fresh for the rest.
    fresh = name_labels(mentions["name"], only=changed)
    labels = pl.select(pl.when(changed).then(fresh).otherwise(joined["labels"]).alias("labels"))["labels"]
    frame = joined.select("mention_id", "author_id", "method", "score").with_columns(labels=labels, changed=changed)

    touched = set(frame.filter(pl.col("changed") & pl.col("author_id").is_not_null())["author_id"].to_list())
    touched |= set(removed["author_id"].to_list())
    in_seed = (pl.col("changed") | pl.col("author_id").is_in(list(touched))).fill_null(False)
    frame = frame.with_columns(in_seed=in_seed)
    # Clusters with an identity (a profile, an ORCID, an OpenAlex id) of a seed mention will be
    # merged with it: they join the seed, and seed groups joined by an identity count as one
    # group below (a nameless new mention with an ORCID lends its co-authors to the named
    # cluster it joins).
    identity = (frame.select("mention_id", "author_id", "in_seed").with_columns(label=_identity_labels(mentions))
                .explode("label").drop_nulls("label"))
    seed_identities = identity.filter(pl.col("in_seed"))["label"].unique()
    id_reached = set(identity.filter(~pl.col("in_seed") & pl.col("label").is_in(seed_identities.implode()))["author_id"].to_list())
    frame = frame.with_columns(in_seed=pl.col("in_seed") | pl.col("author_id").is_in(list(id_reached)).fill_null(False))
    # A seed group is a touched or identity-reached cluster, or a new mention on its own.
    seed = frame.filter("in_seed").with_columns(
        group=pl.coalesce("author_id", pl.concat_str(pl.lit("new|"), "mention_id")))
    links = identity.join(seed.select("mention_id", "group"), on="mention_id").group_by("label").agg(pl.col("group").unique())
    seed = seed.with_columns(pl.col("group").replace(_joined_groups(links["group"].to_list())))
    rest = frame.filter(~pl.col("in_seed"))

    # Clusters outside the seed that share a name label with it ...
    seed_labels = seed.select("group", label="labels").explode("label").drop_nulls().unique()
    near_clusters = rest.select("author_id", label="labels").explode("label").join(
        seed_labels.select("label").unique(), on="label", how="semi")["author_id"].unique()
    near = rest.filter(pl.col("author_id").is_in(near_clusters.to_list())).select("mention_id", group="author_id")

    # ... and, with the same seed group, a piece of evidence: the pairs the matcher could form.
    affiliations = (mentions["affiliation"].cast(pl.String).to_list() if "affiliation" in mentions.columns
                    else [None] * mentions.height)
    base = frame.select("mention_id", "labels").with_columns(
        paper=mentions["paper_id"].cast(pl.String), name=mentions["name"].cast(pl.String).fill_null(""),
        affiliation=pl.Series(per_value(affiliations, lambda a: match_key(a) or None), dtype=pl.String))
    wanted = seed_labels.join(_group_evidence(seed.select("mention_id", "group"), base, mentions), on="group").select(
        "label", "ev").unique()
    near_labels = (frame.join(near, on="mention_id").select("group", label="labels")
                   .explode("label").drop_nulls().unique())
    reached = sharing_label_and_evidence(_group_evidence(near, base, mentions), near_labels, wanted)
    reached |= id_reached
    # ... or a review row with a seed cluster (the evidence behind it may have changed).
    if review is not None and review.height and touched:
        t = list(touched)
        reached |= set(review.filter(pl.col("left_cluster").is_in(t))["right_cluster"].to_list())
        reached |= set(review.filter(pl.col("right_cluster").is_in(t))["left_cluster"].to_list())

    start = frame.filter(pl.col("in_seed") | pl.col("author_id").is_in(list(reached)).fill_null(False))
    # The linkage compares every pair of a block (a name key, transitively), so whole blocks are
    # re-resolved — and with them whole clusters, and the blocks those clusters reach.
    redo = _block_closure(frame, start["mention_id"])
    subset = mentions.join(redo, on="mention_id", how="semi")
    sub_papers = subset["paper_id"].cast(pl.String).drop_nulls().unique()
    assigned_sub, review_sub = resolve_authors(
        subset, paper_rows=mentions.filter(pl.col("paper_id").cast(pl.String).is_in(sub_papers.to_list())),
        model=model, batch=options.author_batch, workers=options.workers)

    kept = frame.join(redo.select("mention_id"), on="mention_id", how="anti").select(list(ASSIGNMENT_SCHEMA))
    assigned = pl.concat([kept.cast(ASSIGNMENT_SCHEMA), assigned_sub.cast(ASSIGNMENT_SCHEMA)]).sort("mention_id")
    queue = merge_review(
        review, review_sub, assigned.select(id="mention_id", cluster="author_id"), set(subset["mention_id"].to_list()),
        mentions.select(id=pl.col("mention_id").cast(pl.String), label=pl.col("name").cast(pl.String).fill_null("")))
    return AuthorNight(assigned, queue, _state(current, assigned, labels, version), {
        "mode": "incremental", "changed": n_changed, "removed": removed.height, "resolved": subset.height,
    })


def _block_closure(frame: pl.DataFrame, start: pl.Series) -> pl.DataFrame:
    """``mention_id`` of every mention connected to ``start`` through a shared name key (``k|``
    label) or last night's cluster, transitively: the blocks and clusters a re-resolution of
    ``start`` must take whole."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = frame.height
    rows = frame.select(row=pl.int_range(pl.len(), dtype=pl.Int64), labels="labels", cluster="author_id")
    links = pl.concat([
        rows.select("row", label=pl.col("labels")).explode("label").filter(pl.col("label").str.starts_with("k|")),
        rows.filter(pl.col("cluster").is_not_null()).select("row", label=pl.concat_str(pl.lit("c|"), "cluster")),
    ]).with_columns(node=pl.col("label").rank("dense").cast(pl.Int64) - 1 + n)
    size = n + (int(links["node"].max()) + 1 - n if links.height else 0)
    graph = coo_matrix((np.ones(links.height, dtype=np.int8), (links["row"].to_numpy(), links["node"].to_numpy())),
                       shape=(size, size))
    component = connected_components(graph, directed=False)[1][:n]
    wanted = np.unique(component[frame.select(pl.col("mention_id").is_in(start.implode()))["mention_id"].to_numpy()])
    return frame.filter(pl.Series(np.isin(component, wanted))).select("mention_id")


def _joined_groups(linked: list[list[str]]) -> dict[str, str]:
    """Groups linked (transitively) by sharing a label -> the smallest group of each set."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for groups in linked:
        roots = sorted({find(g) for g in groups})
        for r in roots[1:]:
            parent[r] = roots[0]
    return {g: find(g) for g in parent}


def merge_review(previous: pl.DataFrame | None, fresh: pl.DataFrame, cluster: pl.DataFrame, resolved: set[str],
                 names: pl.DataFrame) -> pl.DataFrame:
    """The last night's review rows that still hold (both records exist, not both re-resolved,
    still two clusters; clusters and labels as of tonight) plus the subset's new rows.
    ``cluster``: ``id``, ``cluster`` of every record tonight; ``names``: ``id``, ``label``.
    (Shared by the author and the paper matcher's incremental nights.)"""
    if previous is None or previous.height == 0:
        return queue_of(fresh)
    old = (
        previous.select(list(REVIEW_SCHEMA)).cast(REVIEW_SCHEMA)
        .filter(~(pl.col("left_id").is_in(list(resolved)) & pl.col("right_id").is_in(list(resolved))))
        .drop("left_cluster", "right_cluster", "left_label", "right_label")
        .join(cluster.rename({"id": "left_id", "cluster": "a_cluster"}), on="left_id")
        .join(cluster.rename({"id": "right_id", "cluster": "b_cluster"}), on="right_id")
        .join(names.rename({"id": "left_id", "label": "a_label"}), on="left_id", how="left")
        .join(names.rename({"id": "right_id", "label": "b_label"}), on="right_id", how="left")
        .filter(pl.col("a_cluster") != pl.col("b_cluster"))
    )
    swap = pl.col("a_cluster") > pl.col("b_cluster")
    old = old.select(
        left_id=pl.when(swap).then("right_id").otherwise("left_id"),
        right_id=pl.when(swap).then("left_id").otherwise("right_id"),
        left_label=pl.when(swap).then("b_label").otherwise("a_label"),
        right_label=pl.when(swap).then("a_label").otherwise("b_label"),
        score="score", evidence_for="evidence_for", evidence_against="evidence_against",
        left_cluster=pl.when(swap).then("b_cluster").otherwise("a_cluster"),
        right_cluster=pl.when(swap).then("a_cluster").otherwise("b_cluster"),
    )
    return queue_of(pl.concat([old.cast(REVIEW_SCHEMA), fresh.select(list(REVIEW_SCHEMA)).cast(REVIEW_SCHEMA)]))

"""Build the core tables from staging: resolve papers and authors, give them stable ids, apply
the user's overrides, and lay out core.* rows. No Dagster imports; the asset reads and writes.

Evidence keys (stable from night to night, so ids can be too):
- a listing: ``staging.listings.listing_key`` (source, profile, title key, year);
- a profile owner on one listing: ``owner:<listing_key>``;
- a byline name on one listing: ``byline:<listing_key>:<name key>``.
The matchers work on collapsed rows (one per paper and name), so the cost follows distinct
evidence, not the number of nights stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import polars as pl

from pipelines import warehouse
from pipelines.ingest import api_lookups as enrichment
from pipelines.core import identifiers
from pipelines.core.identity.overrides import Overrides, apply_overrides, merge_ids
from pipelines.timing import StageTimer
from pipelines.core.identity.stable_ids import REDIRECT_SCHEMA, REGISTRY_SCHEMA, assign_stable_ids, merge_redirects
from pipelines.core.resolution.incremental import (
    AUTHOR_MODEL_SCHEMA,
    AUTHOR_STATE_SCHEMA,
    resolve_authors_incrementally,
    scheduled_full,
)
from pipelines.core.resolution.incremental_papers import PAPER_STATE_SCHEMA, resolve_papers_incrementally
from pipelines.core.resolution.review import REVIEW_SCHEMA
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.core.resolution.papers import TITLE_DIFF_SCHEMA, TitleDiffCache
from pipelines.textnorm import match_key, normalize_text
from pipelines.warehouse import contract

EVIDENCE_RANK = {"profile": 0, "arxiv": 1, "openalex": 2, "byline": 3}


@dataclass
class CoreTables:
    papers: pl.DataFrame
    # listing_key → paper_id, method, score, and listing_id (the key's current row): one row per listing
    # key. core.paper_listings (one row per staged listing row of every night) is this fanned out in
    # SQL (sql/core/paper_listings.sql); the papers' abstracts are read from the current rows
    # (sql/core/paper_abstracts.sql).
    listing_papers: pl.DataFrame
    authors: pl.DataFrame
    author_names: pl.DataFrame
    author_profiles: pl.DataFrame
    authorships: pl.DataFrame
    match_review: pl.DataFrame
    id_redirects: pl.DataFrame
    paper_registry: pl.DataFrame
    author_registry: pl.DataFrame
    stats: dict = field(default_factory=dict)
    mention_authors: pl.DataFrame | None = None   # evidence key → author_id (for evaluation; not stored)
    title_diffs: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TITLE_DIFF_SCHEMA))  # cache for the next run
    # the author matcher's resolution, for the next night (cache.author_matches / author_match_review)
    author_state: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=AUTHOR_STATE_SCHEMA))
    author_state_review: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=REVIEW_SCHEMA))
    # the author matcher's evidence weights, fitted on the last full night (cache.author_model)
    author_model: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=AUTHOR_MODEL_SCHEMA))
    # the paper matcher's resolution, for the next night (cache.paper_matches / paper_match_review)
    paper_state: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=PAPER_STATE_SCHEMA))
    paper_state_review: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=REVIEW_SCHEMA))
    # the crosswalk and what was turned down (pipelines/core/identifiers.py)
    paper_identifiers: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=identifiers.CROSSWALK_SCHEMA))
    identifier_rejects: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=identifiers.REJECTS_SCHEMA))

    # The tables whose frame is a field of another name; every other table's is the field named as it.
    _FIELD = {"core.paper_id_registry": "paper_registry", "core.author_id_registry": "author_registry",
              "cache.author_matches": "author_state", "cache.author_match_review": "author_state_review",
              "cache.paper_matches": "paper_state", "cache.paper_match_review": "paper_state_review"}
    # The registries are kept as key -> id; the tables name the key and the id.
    _RENAME = {"core.paper_id_registry": {"key": "listing_key", "id": "paper_id"},
               "core.author_id_registry": {"key": "mention_key", "id": "author_id"}}

    def writes(self) -> list[tuple[str, pl.DataFrame]]:
        """Every table the core step replaces from this build (contract.core_build_writes), with its rows."""
        out = []
        for table in contract.core_build_writes():
            frame = getattr(self, self._FIELD.get(table, contract.short(table)))
            out.append((table, frame.rename(self._RENAME[table]) if table in self._RENAME else frame))
        return out

def build_core(
    listings: pl.DataFrame,
    profiles: pl.DataFrame,
    *,
    paper_registry: pl.DataFrame,
    author_registry: pl.DataFrame,
    redirects: pl.DataFrame,
    overrides: Overrides,
    today: date,
    extra_authorships: pl.DataFrame | None = None,
    title_diffs: pl.DataFrame | TitleDiffCache | None = None,
    author_state: pl.DataFrame | None = None,
    author_state_review: pl.DataFrame | None = None,
    author_model: pl.DataFrame | None = None,
    paper_state: pl.DataFrame | None = None,
    paper_state_review: pl.DataFrame | None = None,
    identifier_evidence: identifiers.IdentifierEvidence | None = None,
    timer: StageTimer | None = None,
    options: MatchOptions | None = None,
) -> CoreTables:
    """listings/profiles: staging rows of the partitions in the window (several nights allowed). Only
    the newest row of each listing key is resolved, so the warehouse path reads just those, with a
    ``first_seen`` column (the key's earliest partition date); without it, it is computed here.

    extra_authorships (optional, from enrichment): ``listing_key``-free rows ``arxiv_id``, ``name``,
    ``author_position``, ``evidence`` ('arxiv'|'openalex'), ``orcid`` — full author lists that replace
    truncated bylines as authorship evidence.

    title_diffs (optional, ``cache.title_diffs``): the paper matcher's title diffs from an earlier
    run, reused where the same pair of titles meets again; the result is the same without them.

    author_state / author_state_review (optional, ``cache.author_matches`` /
    ``cache.author_match_review``) and author_model (``cache.author_model``): the author matcher's
    last resolution and the evidence weights its last full night fitted; only the people tonight's
    changes can reach are re-resolved (``resolution/incremental.py``). Without them, everyone is.
    paper_state / paper_state_review (optional, ``cache.paper_matches`` / ``cache.paper_match_review``):
    the same for the paper matcher (``resolution/incremental_papers.py``).

    identifier_evidence (optional): what enrichment and the listings' history say about identifiers
    (``pipelines/core/identifiers.py``): DOIs join the paper matcher's evidence, and the crosswalk
    (``core.paper_identifiers``), its rejects and the identifier redirects are built from it. Without
    it, the listings' own arXiv ids (and the DOIs derived from them) are all there is.

    options (optional): how the matchers run — worker processes, the author batch, whether a night
    may be incremental (``runtime.MatchOptions``, from the settings); the defaults are the settings'.
    """
    options = options or MatchOptions()
    redirects = redirects.select(["entity_type", *REDIRECT_SCHEMA]) if redirects.height else pl.DataFrame(
        schema={"entity_type": pl.String, **REDIRECT_SCHEMA})
    latest, owners = latest_listings(listings, profiles)
    del listings  # frees it when the caller handed over its only reference (resolve_in_warehouse does)
    timer = timer or StageTimer()
    with timer.stage("identifiers", rows=latest.height):
        attached = identifiers.attach_identifiers(latest, identifier_evidence)
    latest = attached.listings
    records = paper_records(latest)
    diffs_cache = title_diffs if isinstance(title_diffs, TitleDiffCache) else TitleDiffCache(title_diffs)
    del title_diffs
    with timer.stage("resolve_papers", rows=records.height):
        paper_night = resolve_papers_incrementally(records, paper_state, paper_state_review, title_diffs=diffs_cache,
                                                   full_reason=scheduled_full(today), options=options)
    del paper_state, paper_state_review
    paper_match, paper_review = paper_night.assignments, paper_night.review
    # The next run's cache; the earlier runs' diffs are let go here, unless only a subset was
    # compared tonight (the next night still needs the rest).
    used_diffs = diffs_cache.finish(keep_earlier=paper_night.stats["mode"] == "incremental")
    del records
    paper_ids = assign_stable_ids(
        paper_match.select(key="record_id", cluster="paper_id"),
        _registry(paper_registry, "listing_key", "paper_id"), prefix="P", today=today,
    )
    members = (
        paper_match.select(key="record_id", cluster="paper_id", method="method", score="score")
        .join(paper_ids.cluster_ids, on="cluster")
        .join(latest.select(key="listing_key", label="title"), on="key")
        .with_columns(profile=pl.lit(None, pl.String))
    )
    id_age = _id_age(paper_ids.registry)
    redirect_map = _redirect_map(redirects, "paper")
    paper_over = apply_overrides(members.select("key", "id", "label", "profile"), overrides.for_entity("paper"),
                                 prefix="P", id_age=id_age, redirects=redirect_map, today=today)
    key_to_paper = (
        members.select("key", "method", "score", algo_id="id")
        .join(paper_over.members.select("key", "id"), on="key")
        .with_columns(method=pl.when(pl.col("id") != pl.col("algo_id")).then(pl.lit("override")).otherwise(pl.col("method")))
        .rename({"key": "listing_key", "id": "paper_id"})
    )
    listing_papers = (
        key_to_paper.select("listing_key", "paper_id", "method", pl.col("score").cast(pl.Float64))
        .join(latest.select("listing_key", "listing_id"), on="listing_key", how="left")
        .sort("listing_key")
    )
    latest = latest.join(key_to_paper.select("listing_key", "paper_id"), on="listing_key")
    id_tables = identifiers.build_crosswalk(attached, key_to_paper, today=today)
    del attached

    # ---- author mentions ----------------------------------------------------------------------
    mentions = _author_mentions(latest)
    # The author matcher is the step's largest working set: what the paper side no longer needs goes first.
    del members, paper_match
    extra = _extra_mentions(extra_authorships, key_to_paper, latest)
    if extra is not None:
        mentions = pl.concat([mentions, extra], how="vertical_relaxed").unique("key", keep="first", maintain_order=True)

    mentions, collapsed = _collapse_mentions(mentions, latest)
    with timer.stage("resolve_authors", rows=collapsed.height):
        author_night = resolve_authors_incrementally(collapsed.drop("group"), author_state, author_state_review,
                                                     model=author_model, full_reason=scheduled_full(today),
                                                     options=options)
    author_match, author_review = author_night.assignments, author_night.review
    group_to_cluster = collapsed.select("group", "mention_id").join(
        author_match.select("mention_id", cluster="author_id", a_method="method", a_score="score"), on="mention_id")
    mentions = mentions.join(group_to_cluster.drop("mention_id"), on="group")
    author_ids = assign_stable_ids(
        mentions.select("key", "cluster"), _registry(author_registry, "mention_key", "author_id"),
        prefix="A", today=today,
    )
    a_members = mentions.join(author_ids.cluster_ids, on="cluster").with_columns(
        label=pl.col("name"),
        profile=pl.when(pl.col("is_profile_owner")).then(pl.concat_str("source", pl.lit(":"), "source_profile_id")),
    )
    author_over = apply_overrides(a_members.select("key", "id", "label", "profile"), overrides.for_entity("author"),
                                  prefix="A", id_age=_id_age(author_ids.registry),
                                  redirects=_redirect_map(redirects, "author"), today=today)
    a_members = a_members.drop("id").join(author_over.members.select("key", "id"), on="key").rename({"id": "author_id"})

    # ---- core tables --------------------------------------------------------------------------
    authorships = _authorships(a_members)
    paper_authors = authorships.group_by("paper_id").agg(pl.len().alias("authors_known"))
    byline_complete = _byline_complete(latest, a_members, extra_authorships)

    papers = _papers(latest, id_tables, paper_authors, byline_complete)

    authors = _authors(a_members, today)
    author_names = _author_names(a_members)
    author_profiles = _author_profiles(a_members, owners, overrides, today)

    # ---- redirects and review queue -------------------------------------------------------------
    id_redirects = _id_redirects(redirects, overrides, id_tables, live_papers=set(papers["paper_id"].to_list()),
                                 live_authors=set(authors["author_id"].to_list()),
                                 paper_changes=(paper_ids.redirects, paper_over.redirects),
                                 author_changes=(author_ids.redirects, author_over.redirects))

    review = _review_rows(paper_review, author_review, key_to_paper, collapsed, a_members, papers, authors)

    stats = {
        "listings_resolved": latest.height,
        "papers": papers.height,
        "listings_merged": latest.height - papers.height,
        "authors": authors.height,
        "author_mentions": mentions.height,
        "review_queue": review.height,
        "redirects_new": paper_ids.redirects.height + author_ids.redirects.height,
        "overrides_applied": paper_over.applied + author_over.applied,
        "overrides_unmatched": paper_over.unmatched + author_over.unmatched,
        "paper_methods": dict(listing_papers.group_by("method").len().sort("method").iter_rows()),
        "title_diffs_reused": diffs_cache.reused,
        "title_diffs_computed": diffs_cache.computed,
        "author_resolution": author_night.stats,
        "paper_resolution": paper_night.stats,
        "identifiers": dict(id_tables.crosswalk.group_by("scheme").len().sort("scheme").iter_rows()),
        "identifier_rejects": dict(id_tables.rejects.group_by("reason").len().sort("reason").iter_rows()),
        "identifier_redirects": id_tables.redirects.height,
        "timings": timer.summary(),
    }
    return CoreTables(
        papers=papers, listing_papers=listing_papers, authors=authors, author_names=author_names,
        author_profiles=author_profiles, authorships=authorships, match_review=review, id_redirects=id_redirects,
        paper_registry=paper_ids.registry, author_registry=author_ids.registry, stats=stats,
        mention_authors=a_members.select("key", "author_id"), title_diffs=used_diffs,
        author_state=author_night.state, author_state_review=author_night.review, author_model=author_night.model,
        paper_state=paper_night.state, paper_state_review=paper_night.review,
        paper_identifiers=id_tables.crosswalk, identifier_rejects=id_tables.rejects,
    )


def _id_redirects(redirects: pl.DataFrame, overrides: Overrides, id_tables, *, live_papers: set[str],
                  live_authors: set[str], paper_changes: tuple[pl.DataFrame, pl.DataFrame],
                  author_changes: tuple[pl.DataFrame, pl.DataFrame]) -> pl.DataFrame:
    """core.id_redirects: the stored redirects merged with tonight's (``*_changes``: the algorithm's and
    the overrides' redirects of each entity), and the identifier redirects."""
    new_redirects = []
    for entity, algo, over, live in (
        ("paper", *paper_changes, live_papers),
        ("author", *author_changes, live_authors),
    ):
        # An override's redirects last while the override does: those of ids a [[merge]] in the
        # file still names are kept (tonight's merge re-issues them), the others go with their entry.
        named = list(merge_ids(overrides.for_entity(entity)))
        old = redirects.filter(
            (pl.col("entity_type") == entity) & ((pl.col("reason") != "override") | pl.col("old_id").is_in(named))
        ).drop("entity_type")
        merged = merge_redirects(old, pl.concat([algo, over]), live)
        new_redirects.append(merged.with_columns(entity_type=pl.lit(entity)))
    # Identifier redirects (a work id or site id its source replaced) are derived afresh from the
    # evidence every night (identifiers.build_crosswalk): last night's are not carried over.
    new_redirects.append(id_tables.redirects)
    columns = ["entity_type", *REDIRECT_SCHEMA]
    return pl.concat([r.select(columns) for r in new_redirects], how="vertical_relaxed").select(
        "entity_type", "old_id", "new_id", "reason", "redirected_on").sort("entity_type", "old_id")


def _author_mentions(latest: pl.DataFrame) -> pl.DataFrame:
    """Every author mention of the current listings: each listing's profile owner, and each byline name."""
    owner_mentions = latest.filter(pl.col("owner_name").is_not_null()).select(
        key=pl.concat_str(pl.lit("owner:"), "listing_key"),
        name="owner_name", paper_id="paper_id", source="source", source_profile_id="source_profile_id",
        is_profile_owner=pl.lit(True), author_position=pl.lit(None, pl.Int32), coauthors="byline_authors",
        evidence=pl.lit("profile"), orcid=pl.lit(None, pl.String), openalex_id=pl.lit(None, pl.String),
        first_seen="first_seen",
    )
    byline_mentions = (
        latest.select("listing_key", "paper_id", "source", "byline_authors", "owner_name", "first_seen")
        .with_columns(author_position=pl.int_ranges(1, pl.col("byline_authors").list.len() + 1))
        .explode(["byline_authors", "author_position"])
        .filter(pl.col("byline_authors").is_not_null())
        .with_columns(name=pl.col("byline_authors"))
        .join(
            latest.select("listing_key", all_names="byline_authors"), on="listing_key"
        )
        .select(
            key=pl.concat_str(pl.lit("byline:"), "listing_key", pl.lit(":"), _mapped("name", match_key)),
            name="name", paper_id="paper_id", source="source", source_profile_id=pl.lit(None, pl.String),
            is_profile_owner=pl.lit(False), author_position=pl.col("author_position").cast(pl.Int32),
            coauthors=pl.col("all_names").list.set_difference(pl.concat_list("name")),
            evidence=pl.lit("byline"), orcid=pl.lit(None, pl.String), openalex_id=pl.lit(None, pl.String),
            first_seen="first_seen",
        )
    )
    return pl.concat([owner_mentions, byline_mentions], how="vertical_relaxed").unique("key", keep="first", maintain_order=True)



def _collapse_mentions(mentions: pl.DataFrame, latest: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Collapse: one matcher row per (paper, owner profile) and per (paper, name key). Returns the
    mentions with their ``group`` and the matcher's rows (``mention_id`` the group's smallest key)."""
    mentions = mentions.with_columns(
        group=pl.when(pl.col("is_profile_owner"))
        .then(pl.concat_str(pl.lit("o|"), "paper_id", pl.lit("|"), "source", pl.lit("|"), "source_profile_id"))
        .otherwise(pl.concat_str(pl.lit("n|"), "paper_id", pl.lit("|"), _mapped("name", match_key)))
    )
    papers_info = latest.group_by("paper_id").agg(pl.col("title").first(), pl.col("year").first(), pl.col("venue").first())
    collapsed = (
        mentions.group_by("group").agg(
            pl.col("key").min().alias("mention_id"), pl.col("name").first(), pl.col("paper_id").first(),
            pl.col("coauthors").list.explode(keep_nulls=False, empty_as_null=False).unique().sort().alias("coauthors"),
            pl.col("source").first(), pl.col("source_profile_id").first(), pl.col("is_profile_owner").first(),
            pl.col("orcid").drop_nulls().min().alias("orcid"), pl.col("openalex_id").drop_nulls().min().alias("openalex_id"),
        )
        .join(papers_info, on="paper_id", how="left")
        .with_columns(affiliation=pl.lit(None, pl.String), coauthors=pl.col("coauthors").list.drop_nulls())
        .sort("mention_id")
    )
    return mentions, collapsed



def _authorships(a_members: pl.DataFrame) -> pl.DataFrame:
    """One row per paper and author: the best evidence (EVIDENCE_RANK), every evidence, the position
    and the name as listed."""
    return (
        a_members.with_columns(rank=pl.col("evidence").replace_strict(EVIDENCE_RANK, return_dtype=pl.Int32))
        .sort(["paper_id", "author_id", "rank", "author_position"], nulls_last=True)
        .group_by("paper_id", "author_id", maintain_order=True)
        .agg(
            pl.col("evidence").first(),
            pl.col("evidence").unique().sort().alias("evidence_all"),
            pl.col("author_position").drop_nulls().min().alias("author_position"),
            pl.col("name").filter(pl.col("evidence") != "profile").first().alias("name_as_listed"),
        )
        .sort(["paper_id", "author_id"])
    )



def _byline_complete(latest: pl.DataFrame, a_members: pl.DataFrame, extra_authorships: pl.DataFrame | None) -> pl.DataFrame:
    """Per paper: whether one of its bylines is complete (not cut with 'et al.'), or an enrichment author list covers it."""
    byline_complete = latest.group_by("paper_id").agg(
        ((pl.col("byline_authors").list.len() > 0) & ~pl.col("byline_truncated")).any().alias("byline_complete"))
    if extra_authorships is not None and extra_authorships.height:
        full = a_members.filter(pl.col("evidence").is_in(["arxiv", "openalex"]))["paper_id"].unique()
        byline_complete = byline_complete.with_columns(
            byline_complete=pl.col("byline_complete") | pl.col("paper_id").is_in(full.to_list()))
    return byline_complete



def _papers(latest: pl.DataFrame, id_tables, paper_authors: pl.DataFrame, byline_complete: pl.DataFrame) -> pl.DataFrame:
    """core.papers: a paper's fields come from the current (newest) row of each of its listings."""
    return (
        latest.group_by("paper_id").agg(
            _longest_abstract(latest),
            pl.col("pub_date").drop_nulls().min().alias("pub_date"),
            pl.col("arxiv_id").drop_nulls().min().alias("arxiv_id"),
            pl.col("listing_key").n_unique().cast(pl.Int32).alias("listings_count"),
            pl.concat_str("source", pl.lit(":"), "source_profile_id").n_unique().cast(pl.Int32).alias("profiles_count"),
            pl.col("source").unique().sort().alias("sources"),
            pl.col("first_seen").min().alias("first_seen"),
            pl.col("partition_date").max().alias("last_seen"),
        )
        .join(_most_common(latest, "paper_id", "title"), on="paper_id", how="left")
        .join(_most_common(latest, "paper_id", "year"), on="paper_id", how="left")
        .join(_most_common(latest, "paper_id", "category"), on="paper_id", how="left")
        .join(_most_common(latest, "paper_id", "venue"), on="paper_id", how="left")
        .join(id_tables.primary("doi"), on="paper_id", how="left")
        .join(_page_flags(latest), on="paper_id", how="left")
        .with_columns(title_normalized=_mapped("title", normalize_text))
        .join(paper_authors, on="paper_id", how="left")
        .join(byline_complete, on="paper_id", how="left")
        .with_columns(pl.col("authors_known").fill_null(0).cast(pl.Int32), pl.col("byline_complete").fill_null(False))
        .sort("paper_id")
    )



def _authors(a_members: pl.DataFrame, today: date) -> pl.DataFrame:
    """core.authors."""
    # first_seen is the data's: the earliest partition holding any of the person's evidence (the
    # listing a mention comes from; for an enrichment author list, its paper's listings), so a
    # backfill of earlier days moves it back. The id registry's first_seen is the run that issued the id.
    return (
        a_members
        .group_by("author_id").agg(
            # a profile is (site, profile id): the same slug on two sites is two profiles
            pl.concat_str("source", pl.lit(":"), "source_profile_id").drop_nulls().n_unique().cast(pl.Int32).alias("profiles_count"),
            pl.col("paper_id").n_unique().cast(pl.Int32).alias("papers_count"),
            pl.col("name").n_unique().cast(pl.Int32).alias("names_count"),
            pl.col("first_seen").min().fill_null(today).alias("first_seen"),
        )
        .join(_display_names(a_members), on="author_id", how="left")
        # identity evidence from enrichment: the most common value (ties: the smallest)
        .join(_most_common(a_members, "author_id", "orcid"), on="author_id", how="left")
        .join(_most_common(a_members, "author_id", "openalex_id"), on="author_id", how="left")
        .with_columns(name_key=_mapped("display_name", match_key))
        .sort("author_id")
    )



def _author_names(a_members: pl.DataFrame) -> pl.DataFrame:
    """core.author_names: every name form of every author."""
    return (
        a_members.group_by("name", "author_id").agg(
            pl.len().cast(pl.Int32).alias("mentions_count"), pl.col("source").unique().sort().alias("sources"))
        .rename({"name": "name_variant"}).sort(["author_id", "name_variant"])
    )



def _author_profiles(a_members: pl.DataFrame, owners: pl.DataFrame, overrides: Overrides, today: date) -> pl.DataFrame:
    """core.author_profiles: which author each site profile belongs to (algorithm or override)."""
    assigned = {f"{a['source']}:{a['source_profile_id']}" for a in overrides.profile_assignments}
    return (
        a_members.filter(pl.col("is_profile_owner"))
        .group_by("source", "source_profile_id").agg(
            pl.col("name").first().alias("profile_name"))
        .join(_most_common(a_members.filter(pl.col("is_profile_owner")), ["source", "source_profile_id"], "author_id"),
              on=["source", "source_profile_id"], how="left")
        .join(owners.select("source", "source_profile_id", "last_captured"), on=["source", "source_profile_id"], how="left")
        .with_columns(
            method=pl.when(pl.concat_str("source", pl.lit(":"), "source_profile_id").is_in(list(assigned)))
            .then(pl.lit("override")).otherwise(pl.lit("algorithm")),
            last_captured=pl.col("last_captured").fill_null(today),
        )
        .sort(["source", "source_profile_id"])
    )


def read_current_listings(con, until: date) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The newest staged row of every listing key and of every profile up to ``until``: the core
    step's input, the size of the corpus however many nights are stored."""
    params = {"until": until}
    return (warehouse.read_frame(con, warehouse.read_sql("core/current_listings"), params),
            warehouse.read_frame(con, warehouse.read_sql("core/current_profiles"), params))


def read_identifier_evidence(con, until: date) -> identifiers.IdentifierEvidence:
    """What the crosswalk is built from, up to ``until``: arXiv's records, OpenAlex's answers (one row per
    work and lookup, with the nights it was given) and the arXiv ids and site links of every staged
    listing row (sql/core/*.sql)."""
    params = {"until": until}
    return identifiers.IdentifierEvidence(
        arxiv_records=warehouse.read_frame(con, warehouse.read_sql("core/arxiv_records"), params),
        openalex_answers=warehouse.read_frame(con, warehouse.read_sql("core/openalex_answers"), params),
        page_ids=warehouse.read_frame(con, warehouse.read_sql("core/page_identifiers"), params),
    )


def write_core(con, core: "CoreTables", until: date) -> None:
    """Replace the core tables in one transaction; core.paper_listings and the papers' abstracts are
    filled by SQL from staging inside it."""
    def fill_from_staging() -> None:
        con.execute("DELETE FROM core.paper_listings")
        con.register("listing_papers", core.listing_papers.to_arrow())
        try:
            con.execute(warehouse.read_sql("core/paper_listings"), {"until": until})
            con.execute(warehouse.read_sql("core/paper_abstracts"), {"until": until})
        finally:
            con.unregister("listing_papers")
    warehouse.replace_slice(con, core.writes(), after=fill_from_staging)
    core.stats["paper_listings"] = warehouse.scalar(con, "SELECT count(*) FROM core.paper_listings")


def latest_listings(listings: pl.DataFrame, profiles: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The newest row of every listing key (a paper on a profile) with its ``first_seen`` and the
    profile owner's name; and the owners (latest name per profile)."""
    if "first_seen" not in listings.columns:
        listings = listings.with_columns(first_seen=pl.col("partition_date").min().over("listing_key"))
    latest = (
        listings.sort(["partition_date", "listing_id"], descending=[True, False]).unique("listing_key", keep="first", maintain_order=True)
        # Newest night first, then key order: every "first" picked downstream (a collapsed
        # mention's name, a paper's venue) then follows the content, not the night's row ids, so
        # unchanged listings give the author matcher identical input from night to night.
        .sort(["partition_date", "listing_key"], descending=[True, False])
    )
    owners = (
        profiles.sort(["partition_date", "captured_at", "capture_id"], descending=True)
        .unique(["source", "source_profile_id"], keep="first")
        .select("source", "source_profile_id", owner_name="name", last_captured="partition_date")
    )
    return latest.join(owners, on=["source", "source_profile_id"], how="left"), owners


def paper_records(latest: pl.DataFrame) -> pl.DataFrame:
    """The records the paper matcher sees: one per listing key."""
    return latest.select(
        record_id="listing_key",
        title="title",
        # The owner is an author of every paper on their profile, even when a truncated byline hides them.
        authors=pl.when(pl.col("owner_name").is_not_null())
        .then(pl.col("byline_authors").list.concat(pl.concat_list("owner_name")).list.unique(maintain_order=True))
        .otherwise(pl.col("byline_authors")),
        venue="venue",
        year="year",
        source="source",
        arxiv_id="arxiv_id",
        doi=pl.col("doi") if "doi" in latest.columns else pl.lit(None, pl.String),
    )


def paper_records_from_warehouse(con) -> pl.DataFrame:
    """Paper records for every staged listing key (benchmarks compare other matchers on these)."""
    until = warehouse.scalar(con, "SELECT max(partition_date) FROM staging.listings") or date.max
    return paper_records(latest_listings(*read_current_listings(con, until))[0])


def resolution_window_end(con, run_date: date) -> date:
    """Resolve everything up to the run's partition — or further, if a later night was already
    resolved, so backfilling an old partition never rolls the core tables back in time."""
    rows = con.execute("SELECT max(last_seen) FROM core.papers").fetchall()
    latest = rows[0][0] if rows else None
    return max(run_date, latest) if latest else run_date


def resolve_in_warehouse(con, run_date: date, overrides: Overrides, *, timer: StageTimer | None = None,
                         options: MatchOptions | None = None) -> tuple[CoreTables, date]:
    """The core step: read staging (and enrichment) up to the window's end, resolve, and replace
    the core tables in one transaction. Returns the tables and the window's end."""
    timer = timer or StageTimer()
    until = resolution_window_end(con, run_date)
    with timer.stage("core_read"):
        listings, profiles = read_current_listings(con, until)
        paper_registry = warehouse.read_frame(con, "SELECT * FROM core.paper_id_registry")
        author_registry = warehouse.read_frame(con, "SELECT * FROM core.author_id_registry")
        redirects = warehouse.read_frame(con, "SELECT * FROM core.id_redirects")
        # held by the cache only, which lets go of it once the paper matcher is done
        title_diffs = TitleDiffCache(warehouse.read_frame(con, "SELECT * FROM cache.title_diffs"))
        author_state = warehouse.read_frame(con, "SELECT * FROM cache.author_matches")
        author_state_review = warehouse.read_frame(con, "SELECT * FROM cache.author_match_review")
        author_model = warehouse.read_frame(con, "SELECT * FROM cache.author_model")
        paper_state = warehouse.read_frame(con, "SELECT * FROM cache.paper_matches")
        paper_state_review = warehouse.read_frame(con, "SELECT * FROM cache.paper_match_review")
        # Enrichment: arXiv ids found by exact-title search, and the latest full author list per paper.
        searches = warehouse.read_frame(
            con, "SELECT * FROM enrichment.arxiv_title_searches WHERE partition_date <= ?", [until])
        listings = listings.with_columns(arxiv_from=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.lit("page")))
        listings = enrichment.fill_listing_arxiv_ids(listings, searches).with_columns(
            arxiv_from=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.col("arxiv_from").fill_null("title_search")))
        identifier_evidence = read_identifier_evidence(con, until)
        extra = warehouse.read_frame(
            con,
            "SELECT * FROM enrichment.author_lists WHERE partition_date <= ? "
            "QUALIFY partition_date = max(partition_date) OVER (PARTITION BY coalesce(arxiv_id, openalex_work_id))",
            [until],
        )
    handed_over = [listings]  # build_core drops the listings once it has their newest rows: keep no reference here
    del listings
    core = build_core(
        handed_over.pop(), profiles, paper_registry=paper_registry, author_registry=author_registry,
        redirects=redirects, overrides=overrides, today=run_date, extra_authorships=extra,
        title_diffs=title_diffs, author_state=author_state, author_state_review=author_state_review,
        author_model=author_model, paper_state=paper_state, paper_state_review=paper_state_review,
        identifier_evidence=identifier_evidence, timer=timer, options=options,
    )
    with timer.stage("core_write"):
        write_core(con, core, until)
    core.stats["timings"] = timer.summary()
    return core, until


# ---- helpers ------------------------------------------------------------------------------------

def _longest_abstract(listed: pl.DataFrame) -> pl.Expr:
    """A paper's longest abstract (ties: the first in text order) — null when the listings were
    read without abstracts (the warehouse path fills them in SQL, same rule)."""
    if "abstract" not in listed.columns:
        return pl.lit(None, pl.String).alias("abstract")
    present = pl.col("abstract").filter(pl.col("abstract").is_not_null() & (pl.col("abstract") != ""))
    return present.sort_by([present.str.len_chars(), present], descending=[True, False]).first().alias("abstract")


def _per_unique(fn):
    """Apply a Python string function once per distinct value (names and titles repeat a lot),
    instead of once per row."""
    def apply(series: pl.Series) -> pl.Series:
        distinct = series.drop_nulls().unique()
        mapped = pl.Series([fn(v) for v in distinct.to_list()], dtype=pl.String)
        return series.replace_strict(distinct, mapped, default=None, return_dtype=pl.String)
    return apply


def _mapped(column: str, fn) -> pl.Expr:
    return pl.col(column).map_batches(_per_unique(fn), return_dtype=pl.String)


def _most_common(frame: pl.DataFrame, by: str | list[str], column: str) -> pl.DataFrame:
    """Per ``by``: the most common non-null ``column`` value, ties broken by the smallest value."""
    keys = [by] if isinstance(by, str) else list(by)
    return (
        frame.filter(pl.col(column).is_not_null())
        .group_by(*keys, column).len()
        .sort([*keys, "len", column], descending=[*([False] * len(keys)), True, False])
        .unique(keys, keep="first", maintain_order=True)
        .select(*keys, column)
    )


def _display_names(mentions: pl.DataFrame) -> pl.DataFrame:
    """Per author: the name a profile owner uses if any; else the most common form, longest first."""
    return (
        mentions.group_by("author_id", "name")
        .agg(pl.col("is_profile_owner").any().alias("owner"), pl.len().alias("n"))
        .with_columns(length=pl.col("name").str.len_chars())
        .sort(["author_id", "owner", "n", "length", "name"], descending=[False, True, True, True, False])
        .unique("author_id", keep="first", maintain_order=True)
        .select("author_id", display_name="name")
    )


def _page_flags(latest: pl.DataFrame) -> pl.DataFrame:
    """Per paper, what the pages say beyond the fields: ``has_code`` (some listing shows the site's
    Code flag; FALSE when the flag is shown off everywhere, NULL when no site shows it) and
    ``year_inferred`` (the paper's year — its most common listing year — comes only from year-less
    dates: no listing giving that year shows it; NULL without a year)."""
    columns = latest.columns
    flags = latest.group_by("paper_id").agg(
        (pl.col("has_code").cast(pl.Boolean).max() if "has_code" in columns else pl.lit(None, pl.Boolean)).alias("has_code"))
    if "year_inferred" not in columns:
        return flags.with_columns(year_inferred=pl.lit(None, pl.Boolean))
    years = _most_common(latest, "paper_id", "year").rename({"year": "paper_year"})
    inferred = (
        latest.join(years, on="paper_id").filter(pl.col("year") == pl.col("paper_year"))
        .group_by("paper_id").agg(pl.col("year_inferred").cast(pl.Boolean).min().alias("year_inferred"))
    )
    return flags.join(inferred, on="paper_id", how="left")


def _registry(frame: pl.DataFrame, key: str, ident: str) -> pl.DataFrame:
    if frame.height == 0:
        return pl.DataFrame(schema=REGISTRY_SCHEMA)
    return frame.select(key=pl.col(key), id=pl.col(ident), first_seen=pl.col("first_seen")).cast(REGISTRY_SCHEMA)


def _id_age(registry: pl.DataFrame) -> dict:
    return dict(registry.group_by("id").agg(pl.col("first_seen").min()).iter_rows())


def _redirect_map(redirects: pl.DataFrame, entity: str) -> dict[str, str]:
    return dict(redirects.filter(pl.col("entity_type") == entity).select("old_id", "new_id").iter_rows())


def _extra_mentions(extra: pl.DataFrame | None, key_to_paper: pl.DataFrame, latest: pl.DataFrame) -> pl.DataFrame | None:
    if extra is None or extra.height == 0:
        return None
    by_arxiv = latest.filter(pl.col("arxiv_id").is_not_null()).group_by("arxiv_id").agg(pl.col("paper_id").first())
    rows = extra.join(by_arxiv, on="arxiv_id")
    if rows.height == 0:
        return None
    names = rows.group_by("arxiv_id").agg(pl.col("name").alias("all_names"))
    seen = latest.group_by("paper_id").agg(pl.col("first_seen").min())
    return rows.join(names, on="arxiv_id").join(seen, on="paper_id", how="left").select(
        key=pl.concat_str(pl.col("evidence"), pl.lit(":"), "arxiv_id", pl.lit(":"), _mapped("name", match_key)),
        name="name", paper_id="paper_id", source=pl.col("evidence"), source_profile_id=pl.lit(None, pl.String),
        is_profile_owner=pl.lit(False), author_position=pl.col("author_position").cast(pl.Int32),
        coauthors=pl.col("all_names").list.set_difference(pl.concat_list("name")), evidence="evidence",
        orcid=pl.col("orcid").cast(pl.String), openalex_id=pl.col("openalex_author_id").cast(pl.String),
        first_seen="first_seen",
    )


def _review_rows(paper_review, author_review, key_to_paper, collapsed, a_members, papers, authors) -> pl.DataFrame:
    schema = {"review_id": pl.String, "entity_type": pl.String, "left_id": pl.String, "right_id": pl.String,
              "left_label": pl.String, "right_label": pl.String, "score": pl.Float64, "evidence_for": pl.String,
              "evidence_against": pl.String, "suggested_override": pl.String}
    rows = []
    paper_of = dict(key_to_paper.select("listing_key", "paper_id").iter_rows())
    paper_title = dict(papers.select("paper_id", "title").iter_rows())
    for r in paper_review.iter_rows(named=True):
        left, right = paper_of.get(r["left_id"]), paper_of.get(r["right_id"])
        if not left or not right or left == right:
            continue
        rows.append(("paper", left, right, paper_title.get(left), paper_title.get(right), r))
    mention_author = dict(
        collapsed.select("group", "mention_id").join(a_members.select("group", "author_id").unique("group"), on="group")
        .select("mention_id", "author_id").iter_rows()
    )
    author_name = dict(authors.select("author_id", "display_name").iter_rows())
    for r in author_review.iter_rows(named=True):
        left, right = mention_author.get(r["left_id"]), mention_author.get(r["right_id"])
        if not left or not right or left == right:
            continue
        rows.append(("author", left, right, author_name.get(left), author_name.get(right), r))
    out = {}
    for entity, left, right, ll, rl, r in rows:
        if right < left:
            left, right, ll, rl = right, left, rl, ll
        review_id = f"{entity}:{left}:{right}"
        if review_id in out and out[review_id]["score"] >= r["score"]:
            continue
        out[review_id] = {
            "review_id": review_id, "entity_type": entity, "left_id": left, "right_id": right,
            "left_label": ll, "right_label": rl, "score": float(r["score"]),
            "evidence_for": r.get("evidence_for"), "evidence_against": r.get("evidence_against"),
            "suggested_override": f'[[merge]]\nentity = "{entity}"\nids = ["{left}", "{right}"]',
        }
    return pl.DataFrame(list(out.values()), schema=schema).sort(["entity_type", "score"], descending=[False, True])

"""The core build's last step: the core.* rows laid out from the resolved papers and authors
(``CoreTables``: papers, authors, their names, profiles and authorships, the id redirects, the review
queue, the registries and the matchers' caches for the next night), and the night's figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import polars as pl

from pipelines.core import identifiers
from pipelines.core.authors import Authors
from pipelines.core.frames import most_common, per_distinct
from pipelines.core.identity.overrides import Overrides, merge_ids
from pipelines.core.identity.stable_ids import REDIRECT_SCHEMA, merge_redirects
from pipelines.core.papers import Papers
from pipelines.core.resolution.incremental import AUTHOR_MODEL_SCHEMA, AUTHOR_STATE_SCHEMA
from pipelines.core.resolution.incremental_papers import PAPER_STATE_SCHEMA
from pipelines.core.resolution.papers import TITLE_DIFF_SCHEMA
from pipelines.core.resolution.review import REVIEW_SCHEMA
from pipelines.textnorm import match_key, normalize_text
from pipelines.warehouse import contract

EVIDENCE_RANK = {"profile": 0, "arxiv": 1, "openalex": 2, "byline": 3}


@dataclass
class CoreTables:
    papers: pl.DataFrame
    # listing_key → paper_id, method, score, and listing_id (the key's current row): one row per listing
    # key. core.paper_listings (one row per staged listing row of every night) is this fanned out in
    # SQL (sql/core/paper_listings.sql); the papers' abstracts are read from the current rows
    # as core.papers is written (sql/core/papers_with_abstracts.sql).
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


def assemble_tables(papers: Papers, authors: Authors, *, owners: pl.DataFrame, overrides: Overrides,
                    redirects: pl.DataFrame, extra_authorships: pl.DataFrame | None, today: date) -> CoreTables:
    """Step "tables": the core.* rows, the registries and caches for the next night, and the figures
    (``stats``, without the timings: the caller's timer adds them)."""
    a_members = authors.members
    authorships = _authorships(a_members)
    paper_authors = authorships.group_by("paper_id").agg(pl.len().alias("authors_known"))
    byline_complete = _byline_complete(papers.listings, a_members, extra_authorships)
    paper_rows = _papers(papers.listings, papers.identifiers, paper_authors, byline_complete)
    author_rows = _authors(a_members, today)
    id_redirects = _id_redirects(redirects, overrides, papers.identifiers,
                                 live_papers=set(paper_rows["paper_id"].to_list()),
                                 live_authors=set(author_rows["author_id"].to_list()),
                                 paper_changes=(papers.assignment.redirects, papers.overrides.redirects),
                                 author_changes=(authors.assignment.redirects, authors.overrides.redirects))
    paper_night, author_night = papers.match.night, authors.night
    review = _review_rows(paper_night.review, author_night.review, papers.key_to_paper, authors.collapsed,
                          a_members, paper_rows, author_rows)
    return CoreTables(
        papers=paper_rows, listing_papers=papers.listing_papers, authors=author_rows,
        author_names=_author_names(a_members), author_profiles=_author_profiles(a_members, owners, overrides, today),
        authorships=authorships, match_review=review, id_redirects=id_redirects,
        paper_registry=papers.assignment.registry, author_registry=authors.assignment.registry,
        stats=_stats(papers, authors, paper_rows, author_rows, review),
        mention_authors=a_members.select("key", "author_id"), title_diffs=papers.match.title_diffs,
        author_state=author_night.state, author_state_review=author_night.review, author_model=author_night.model,
        paper_state=paper_night.state, paper_state_review=paper_night.review,
        paper_identifiers=papers.identifiers.crosswalk, identifier_rejects=papers.identifiers.rejects,
    )


def _stats(papers: Papers, authors: Authors, paper_rows: pl.DataFrame, author_rows: pl.DataFrame,
           review: pl.DataFrame) -> dict:
    """The build's figures (the core step's metadata, ``make bench``)."""
    id_tables, listings = papers.identifiers, papers.listings
    return {
        "listings_resolved": listings.height,
        "papers": paper_rows.height,
        "listings_merged": listings.height - paper_rows.height,
        "authors": author_rows.height,
        "author_mentions": authors.mentions_matched,
        "review_queue": review.height,
        "redirects_new": papers.assignment.redirects.height + authors.assignment.redirects.height,
        "overrides_applied": papers.overrides.applied + authors.overrides.applied,
        "overrides_unmatched": papers.overrides.unmatched + authors.overrides.unmatched,
        "paper_methods": dict(papers.listing_papers.group_by("method").len().sort("method").iter_rows()),
        "title_diffs_reused": papers.match.diffs_reused,
        "title_diffs_computed": papers.match.diffs_computed,
        "author_resolution": authors.night.stats,
        "paper_resolution": papers.match.night.stats,
        "identifiers": dict(id_tables.crosswalk.group_by("scheme").len().sort("scheme").iter_rows()),
        "identifier_rejects": dict(id_tables.rejects.group_by("reason").len().sort("reason").iter_rows()),
        "identifier_redirects": id_tables.redirects.height,
    }


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
        .join(most_common(latest, "paper_id", "title"), on="paper_id", how="left")
        .join(most_common(latest, "paper_id", "year"), on="paper_id", how="left")
        .join(most_common(latest, "paper_id", "category"), on="paper_id", how="left")
        .join(most_common(latest, "paper_id", "venue"), on="paper_id", how="left")
        .join(id_tables.primary("doi"), on="paper_id", how="left")
        .join(_page_flags(latest), on="paper_id", how="left")
        .with_columns(title_normalized=per_distinct("title", normalize_text))
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
        .join(most_common(a_members, "author_id", "orcid"), on="author_id", how="left")
        .join(most_common(a_members, "author_id", "openalex_id"), on="author_id", how="left")
        .with_columns(name_key=per_distinct("display_name", match_key))
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
        .join(most_common(a_members.filter(pl.col("is_profile_owner")), ["source", "source_profile_id"], "author_id"),
              on=["source", "source_profile_id"], how="left")
        .join(owners.select("source", "source_profile_id", "last_captured"), on=["source", "source_profile_id"], how="left")
        .with_columns(
            method=pl.when(pl.concat_str("source", pl.lit(":"), "source_profile_id").is_in(list(assigned)))
            .then(pl.lit("override")).otherwise(pl.lit("algorithm")),
            last_captured=pl.col("last_captured").fill_null(today),
        )
        .sort(["source", "source_profile_id"])
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


def _review_rows(paper_review, author_review, key_to_paper, collapsed, a_members, papers, authors) -> pl.DataFrame:
    """core.match_review: the matchers' review pairs between tonight's ids (a pair the ids already
    merge is gone), one row per pair of ids, the highest score kept."""
    schema = {"review_id": pl.String, "entity_type": pl.String, "left_id": pl.String, "right_id": pl.String,
              "left_label": pl.String, "right_label": pl.String, "score": pl.Float64, "evidence_for": pl.String,
              "evidence_against": pl.String, "suggested_override": pl.String}
    paper_of = dict(key_to_paper.select("listing_key", "paper_id").iter_rows())
    paper_title = dict(papers.select("paper_id", "title").iter_rows())
    mention_author = dict(
        collapsed.select("group", "mention_id").join(a_members.select("group", "author_id").unique("group"), on="group")
        .select("mention_id", "author_id").iter_rows()
    )
    author_name = dict(authors.select("author_id", "display_name").iter_rows())
    rows = [*_review_pairs("paper", paper_review, paper_of, paper_title),
            *_review_pairs("author", author_review, mention_author, author_name)]
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


def _longest_abstract(listed: pl.DataFrame) -> pl.Expr:
    """A paper's longest abstract (ties: the first in text order) — null when the listings were
    read without abstracts (the warehouse path fills them in SQL, same rule)."""
    if "abstract" not in listed.columns:
        return pl.lit(None, pl.String).alias("abstract")
    present = pl.col("abstract").filter(pl.col("abstract").is_not_null() & (pl.col("abstract") != ""))
    return present.sort_by([present.str.len_chars(), present], descending=[True, False]).first().alias("abstract")


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
    years = most_common(latest, "paper_id", "year").rename({"year": "paper_year"})
    inferred = (
        latest.join(years, on="paper_id").filter(pl.col("year") == pl.col("paper_year"))
        .group_by("paper_id").agg(pl.col("year_inferred").cast(pl.Boolean).min().alias("year_inferred"))
    )
    return flags.join(inferred, on="paper_id", how="left")


def _review_pairs(entity: str, review: pl.DataFrame, id_of: dict, label_of: dict) -> list[tuple]:
    """The matcher's review pairs (of records or mentions) as pairs of tonight's ids, with their labels."""
    rows = []
    for r in review.iter_rows(named=True):
        left, right = id_of.get(r["left_id"]), id_of.get(r["right_id"])
        if not left or not right or left == right:
            continue
        rows.append((entity, left, right, label_of.get(left), label_of.get(right), r))
    return rows

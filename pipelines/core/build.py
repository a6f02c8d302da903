"""The core build, as named steps, and the core step's reads and writes. No Dagster imports; the
asset (``pipelines/assets/core.py``) calls ``resolve_in_warehouse``.

``build_core`` runs the steps in order, each a function testable alone:

1. **papers** — ``papers.latest_listings`` (the newest row of every listing key), the identifiers
   attached (``identifiers.attach_identifiers``), ``papers.match_listings`` (the paper matcher) and
   ``papers.identify_papers`` (stable paper ids, the paper overrides, the crosswalk);
2. **mentions** — ``mentions.collect_mentions``: every author mention of those papers, collapsed for
   the matcher;
3. **authors** — ``authors.match_mentions``: the author matcher;
4. **overrides** — ``authors.identify_authors``: stable author ids and the author overrides;
5. **tables** — ``tables.assemble_tables``: the core.* rows (``CoreTables``), the registries, the
   matchers' caches for the next night, and the figures.

Evidence keys (stable from night to night, so ids can be too):
- a listing: ``staging.listings.listing_key`` (source, profile, title key, year);
- a profile owner on one listing: ``owner:<listing_key>``;
- a byline name on one listing: ``byline:<listing_key>:<name key>``.
The matchers work on collapsed rows (one per paper and name), so the cost follows distinct
evidence, not the number of nights stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import duckdb
import polars as pl

from pipelines import warehouse
from pipelines.core import identifiers
from pipelines.core.authors import identify_authors, match_mentions
from pipelines.core.resolution.incremental import AuthorNight
from pipelines.core.identity.overrides import Overrides
from pipelines.core.ids import stored_redirects
from pipelines.core.mentions import collect_mentions
from pipelines.core.papers import PaperMatch, identify_papers, latest_listings, match_listings, paper_records
from pipelines.core.resolution.papers import TitleDiffCache
from pipelines.core.resolution.runtime import MatchOptions
from pipelines.core.tables import CoreTables, assemble_tables
from pipelines.ingest import api_lookups as enrichment
from pipelines.timing import StageTimer

__all__ = ["CORE_READS", "CoreInputs", "CoreTables", "build_core", "current_listings", "inputs_fingerprint",
           "read_core_inputs", "latest_listings", "paper_records", "paper_records_from_warehouse",
           "read_current_listings", "read_identifier_evidence", "resolution_window_end", "resolve_in_warehouse",
           "write_core"]


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
    paper_match: PaperMatch | None = None,
    author_night: AuthorNight | None = None,
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

    paper_match / author_night (optional): the matchers' answers, worked out elsewhere — the sharded
    core (``pipelines/core/sharded.py``) resolves in separate steps and hands them in here; the
    matcher is then not run and its state/cache arguments are not read. Every other step is the same.
    """
    options = options or MatchOptions()
    redirects = stored_redirects(redirects)
    timer = timer or StageTimer()
    handed_over = [listings]
    del listings  # frees it when the caller handed over its only reference (resolve_in_warehouse does)
    attached, owners = current_listings(handed_over.pop(), profiles, identifier_evidence, timer=timer)

    # 1. papers
    match = paper_match or match_listings(attached.listings, title_diffs=title_diffs, state=paper_state,
                                          review=paper_state_review, today=today, timer=timer, options=options)
    del title_diffs, paper_state, paper_state_review
    papers = identify_papers(attached, match, paper_registry, redirects=redirects, overrides=overrides, today=today)
    del attached, match
    # 2. mentions — the author matcher is the step's largest working set: the paper side's
    # intermediate frames are gone by now.
    mentions = collect_mentions(papers.listings, extra_authorships)
    # 3. authors
    night = author_night or match_mentions(mentions.collapsed, state=author_state, review=author_state_review,
                                           model=author_model, today=today, timer=timer, options=options)
    # 4. overrides
    authors = identify_authors(mentions, night, author_registry, redirects=redirects, overrides=overrides, today=today)
    del mentions, night
    # 5. tables
    core = assemble_tables(papers, authors, owners=owners, overrides=overrides, redirects=redirects,
                           extra_authorships=extra_authorships, today=today)
    core.stats["timings"] = timer.summary()
    return core


def current_listings(listings: pl.DataFrame, profiles: pl.DataFrame,
                     identifier_evidence: identifiers.IdentifierEvidence | None, *,
                     timer: StageTimer) -> tuple[identifiers.ListingIdentifiers, pl.DataFrame]:
    """Step "papers" (its input): the newest row of every listing key with the identifiers attached,
    and the profile owners. Deterministic: the sharded core works it out again in the steps that
    need it rather than pass it between them."""
    latest, owners = latest_listings(listings, profiles)
    del listings
    with timer.stage("identifiers", rows=latest.height):
        return identifiers.attach_identifiers(latest, identifier_evidence), owners


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
    """Replace the core tables in one transaction; core.paper_listings and core.papers (their
    abstracts joined in from staging) are written by SQL inside it."""
    writes = core.writes()
    papers = dict(writes)["core.papers"]
    if papers.height:
        # the step's column order checked against the contract as insert_frame does
        warehouse.check_columns(con, "core.papers", papers.columns)

    def fill_from_staging() -> None:
        con.execute("DELETE FROM core.paper_listings")
        con.execute("DELETE FROM core.papers")
        con.register("listing_papers", core.listing_papers.to_arrow())
        con.register("papers_without_abstracts",
                     papers.drop("abstract", strict=False).with_row_index("_row").to_arrow())
        try:
            con.execute(warehouse.read_sql("core/paper_listings"), {"until": until})
            con.execute(warehouse.read_sql("core/papers_with_abstracts"), {"until": until})
        finally:
            for name in ("listing_papers", "papers_without_abstracts"):
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass  # an aborted transaction refuses even this: the statement's own error is raised
    warehouse.replace_slice(con, [(t, f) for t, f in writes if t != "core.papers"], after=fill_from_staging)
    core.stats["paper_listings"] = warehouse.scalar(con, "SELECT count(*) FROM core.paper_listings")


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


@dataclass
class CoreInputs:
    """Everything the core step reads of the warehouse (``read_core_inputs``): the current listings
    (with the arXiv ids exact-title search found) and profiles up to ``until``, the id registries and
    redirects, the matchers' caches of the last night, and what enrichment says. The sharded core
    saves it as Parquet for its steps (``pipelines/core/sharded.py``)."""

    until: date
    listings: pl.DataFrame | None
    profiles: pl.DataFrame
    paper_registry: pl.DataFrame
    author_registry: pl.DataFrame
    redirects: pl.DataFrame
    title_diffs: pl.DataFrame | None
    author_state: pl.DataFrame
    author_state_review: pl.DataFrame
    author_model: pl.DataFrame
    paper_state: pl.DataFrame
    paper_state_review: pl.DataFrame
    extra_authorships: pl.DataFrame
    identifier_evidence: identifiers.IdentifierEvidence

    def build_arguments(self) -> dict:
        """``build_core``'s keyword arguments (the listings and profiles aside)."""
        return dict(paper_registry=self.paper_registry, author_registry=self.author_registry,
                    redirects=self.redirects, extra_authorships=self.extra_authorships,
                    author_state=self.author_state, author_state_review=self.author_state_review,
                    author_model=self.author_model, paper_state=self.paper_state,
                    paper_state_review=self.paper_state_review, identifier_evidence=self.identifier_evidence)


def read_core_inputs(con, run_date: date) -> CoreInputs:
    """The core step's reads: staging (and enrichment) up to the window's end, the registries, the caches."""
    until = resolution_window_end(con, run_date)
    listings, profiles = read_current_listings(con, until)
    # Enrichment: arXiv ids found by exact-title search, and the latest full author list per paper.
    searches = warehouse.read_frame(
        con, "SELECT * FROM enrichment.arxiv_title_searches WHERE partition_date <= ?", [until])
    listings = listings.with_columns(arxiv_from=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.lit("page")))
    listings = enrichment.fill_listing_arxiv_ids(listings, searches).with_columns(
        arxiv_from=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.col("arxiv_from").fill_null("title_search")))
    return CoreInputs(
        until=until, listings=listings, profiles=profiles,
        paper_registry=warehouse.read_frame(con, "SELECT * FROM core.paper_id_registry"),
        author_registry=warehouse.read_frame(con, "SELECT * FROM core.author_id_registry"),
        redirects=warehouse.read_frame(con, "SELECT * FROM core.id_redirects"),
        title_diffs=warehouse.read_frame(con, "SELECT * FROM cache.title_diffs"),
        author_state=warehouse.read_frame(con, "SELECT * FROM cache.author_matches"),
        author_state_review=warehouse.read_frame(con, "SELECT * FROM cache.author_match_review"),
        author_model=warehouse.read_frame(con, "SELECT * FROM cache.author_model"),
        paper_state=warehouse.read_frame(con, "SELECT * FROM cache.paper_matches"),
        paper_state_review=warehouse.read_frame(con, "SELECT * FROM cache.paper_match_review"),
        extra_authorships=warehouse.read_frame(
            con,
            "SELECT * FROM enrichment.author_lists WHERE partition_date <= ? "
            "QUALIFY partition_date = max(partition_date) OVER (PARTITION BY coalesce(arxiv_id, openalex_work_id))",
            [until],
        ),
        identifier_evidence=read_identifier_evidence(con, until),
    )


# What the core step reads (``read_core_inputs``), as stored tables (the staging views' own tables):
# the write of a sharded core checks that none changed since its plan (``inputs_fingerprint``).
CORE_READS = ("staging.night_fetches", "staging.parsed_profiles", "staging.parsed_listings",
              "core.papers", "core.paper_id_registry", "core.author_id_registry", "core.id_redirects",
              "cache.title_diffs", "cache.author_matches", "cache.author_match_review", "cache.author_model",
              "cache.paper_matches", "cache.paper_match_review",
              "enrichment.arxiv_title_searches", "enrichment.author_lists", "enrichment.arxiv_works",
              "enrichment.openalex_works")


def inputs_fingerprint(con) -> list[list]:
    """What the core step's reads depend on, in a few numbers per table (rows, and an XOR of every
    row's hash: any row added, removed or changed moves it). Equal fingerprints: the same inputs."""
    parts = " UNION ALL ".join(
        f"SELECT '{table}' AS t, count(*)::BIGINT AS n, coalesce(bit_xor(hash(r)), 0)::UBIGINT AS h FROM {table} r"
        for table in CORE_READS)
    return [[t, int(n), int(h)] for t, n, h in con.execute(f"SELECT * FROM ({parts}) ORDER BY t").fetchall()]


def resolve_in_warehouse(con, run_date: date, overrides: Overrides, *, timer: StageTimer | None = None,
                         options: MatchOptions | None = None) -> tuple[CoreTables, date]:
    """The core step in one piece: read staging (and enrichment) up to the window's end, resolve, and
    replace the core tables in one transaction. Returns the tables and the window's end."""
    timer = timer or StageTimer()
    with timer.stage("core_read"):
        inputs = read_core_inputs(con, run_date)
    # build_core drops the listings once it has their newest rows, and the title-diff cache lets go
    # of the earlier diffs once the paper matcher is done: keep no reference to either here
    handed_over, inputs.listings = [inputs.listings], None
    title_diffs, inputs.title_diffs = TitleDiffCache(inputs.title_diffs), None
    core = build_core(
        handed_over.pop(), inputs.profiles, overrides=overrides, today=run_date, title_diffs=title_diffs,
        timer=timer, options=options, **inputs.build_arguments(),
    )
    with timer.stage("core_write"):
        write_core(con, core, inputs.until)
    core.stats["timings"] = timer.summary()
    return core, inputs.until

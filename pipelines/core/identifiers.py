"""Paper identifiers: what each listing is known as, the crosswalk, its rejects and its redirects.

Analysts join the warehouse to the rest of the scholarly world by identifiers. This module (no
Dagster, no I/O, no environment) turns the evidence the core step reads into:

- **per listing, before resolution** (``attach_identifiers``): the arXiv id (the page's, an exact-title
  search's, or a verified OpenAlex title hit's), the DOI the paper matcher uses as evidence, and the
  OpenAlex work it is linked to;
- **per paper, after resolution** (``build_crosswalk``): ``core.paper_identifiers`` — one row per
  (paper, scheme, value) with where it came from — ``core.identifier_rejects`` — every value turned
  down, with the reason — and the identifier rows of ``core.id_redirects`` (a value the source
  replaced → the value it gives now).

Schemes and how values are normalised:

| scheme | value | from |
| --- | --- | --- |
| ``arxiv`` | ``2401.01234`` / ``cond-mat/0102536`` (version stripped; ``versions`` keeps every version seen) | a listing's link or text, a verified title search, arXiv's record |
| ``doi`` | bare, lower case ``10.1145/3580305`` | arXiv's record (the journal DOI its authors gave), OpenAlex's work, and ``10.48550/arxiv.<id>`` derived from the arXiv id |
| ``openalex`` | ``W4415000001`` | the OpenAlex work answered for the arXiv DOI, or a title hit verified against the listing |
| ``bzpeer_work`` | ``dynatrain-fast-online-…-2604.02156`` | a BZPEER listing's ``/works/<slug>`` link |
| ``scholarfeed_paper`` | ``2002.07399v3`` (the site's id, as it shows it) | a Scholar Feed listing's ``/paper/<id>`` link |

Rules (docs/resolution.md, "Identifiers as evidence"):

- A value names **one** paper: a value that would name two (one DOI claimed by two papers that
  different arXiv ids keep apart) is an ``ambiguous`` reject instead of a crosswalk row.
- An OpenAlex work found by **title** is linked to a listing only when the listing's own year and
  names agree with it (the enrichment step checked it against all listings of that title; here each
  one must agree): a same-titled listing of another paper gets a ``not_verified`` reject.
- A value that is not an identifier of its scheme (a DOI without ``10.…/``, a work id that is not
  ``W…``) is a ``malformed`` reject.
- A paper keeps every DOI of its version family: arXiv's DOI, the journal DOI arXiv's record gives,
  the one OpenAlex gives. ``is_primary`` picks the paper's DOI (``core.papers.doi``): a journal DOI
  before arXiv's, then the strongest link, the most sources, the smallest.
- Only **current** values are in the crosswalk (the listing's newest row, the newest OpenAlex answer
  for a lookup). A site id or OpenAlex work id the source has since replaced for the same listing or
  lookup becomes a redirect (``reason='superseded'``) to the value it gives now; arXiv ids and DOIs
  are permanent and never redirected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from pipelines.core.frames import per_distinct
from pipelines.core.resolution.papers import normalize_arxiv_id
from pipelines.ingest.sources import answers
from pipelines.textnorm import match_key
from pipelines.warehouse import contract

SCHEMES = ("arxiv", "doi", "openalex", "bzpeer_work", "scholarfeed_paper")
REDIRECTED_SCHEMES = ("openalex", "bzpeer_work", "scholarfeed_paper")   # ids a source may replace
SITE_SCHEMES = {"bzpeer": "bzpeer_work", "scholarfeed": "scholarfeed_paper"}
LINKS = ("page", "arxiv_id", "title", "derived")          # strongest first
LINK_RANK = {name: rank for rank, name in enumerate(LINKS)}
MALFORMED, NOT_VERIFIED, AMBIGUOUS = "malformed", "not_verified", "ambiguous"
REJECT_REASONS = (MALFORMED, NOT_VERIFIED, AMBIGUOUS)
ARXIV_DOI_PREFIX = "10.48550/arxiv."

_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_WORK = re.compile(r"^W\d{1,15}$")
_SITE_PATH = {"bzpeer": re.compile(r"^/works/([^/?#]+)/?$"), "scholarfeed": re.compile(r"^/paper/([^/?#]+)/?$")}
_URL_PATH = r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://[^/?#]*)?(/[^?#]*)"   # the path of a URL (or of a bare path)

CROSSWALK_SCHEMA = contract.polars_schema("core.paper_identifiers")
REJECTS_SCHEMA = contract.polars_schema("core.identifier_rejects")
REDIRECTS_SCHEMA = contract.polars_schema("core.id_redirects")
# One observation of a value: who gave it, how it reached the paper, when, and whether it is what
# the source says now (``lookup``: what it answers — a listing key, an arXiv id, a title key).
_OBS_SCHEMA = {"listing_key": pl.String, "scheme": pl.String, "value": pl.String, "version": pl.Int32,
               "source": pl.String, "linked_by": pl.String, "first_seen": pl.Date, "last_seen": pl.Date,
               "current": pl.Boolean, "lookup": pl.String}
# What the core step reads of the enrichment tables (resolve_in_warehouse's queries give these).
ARXIV_RECORDS_SCHEMA = {"arxiv_id": pl.String, "versions": pl.List(pl.Int32), "doi": pl.String,
                        "first_seen": pl.Date, "last_seen": pl.Date}
OPENALEX_ANSWERS_SCHEMA = {"openalex_id": pl.String, "matched_by": pl.String, "arxiv_id": pl.String,
                           "title_key": pl.String, "doi": pl.String, "publication_year": pl.Int32,
                           "author_names": pl.List(pl.String), "first_seen": pl.Date, "last_seen": pl.Date}
PAGE_IDS_SCHEMA = {"listing_key": pl.String, "source": pl.String, "arxiv_id": pl.String, "arxiv_version": pl.Int32,
                   "paper_url": pl.String, "first_seen": pl.Date, "last_seen": pl.Date}


# ================================================================================ normalising

def normalize_doi(value: str | None) -> str | None:
    """Bare lower-case DOI (``10.1145/3580305``) from a DOI, ``doi:`` or resolver URL; None if not one."""
    if not value or not isinstance(value, str):
        return None
    text = _DOI_PREFIX.sub("", value.strip()).strip().lower()
    return text if _DOI.match(text) else None


def is_arxiv_doi(doi: str | None) -> bool:
    return bool(doi) and doi.startswith(ARXIV_DOI_PREFIX)


def arxiv_doi(arxiv_id: str) -> str:
    return f"{ARXIV_DOI_PREFIX}{arxiv_id}".lower()


def normalize_work_id(value: str | None) -> str | None:
    """``W4415000001`` from a bare or URL OpenAlex work id; None if not one."""
    if not value or not isinstance(value, str):
        return None
    short = value.strip().rstrip("/").rsplit("/", 1)[-1]
    short = short[:1].upper() + short[1:]
    return short if _WORK.match(short) else None


def site_paper_id(source: str | None, url: str | None) -> tuple[str, str] | None:
    """``(scheme, id)`` of a site's own paper page (``/works/<slug>``, ``/paper/<id>``); None for any
    other link (an arXiv abstract is an arXiv id, not a site id)."""
    pattern = _SITE_PATH.get(source or "")
    if pattern is None or not url:
        return None
    path = re.match(_URL_PATH, url.strip())
    m = pattern.match(path.group(1)) if path else None
    return (SITE_SCHEMES[source], m.group(1)) if m else None


# ================================================================================ inputs

@dataclass
class IdentifierEvidence:
    """What the core step reads of enrichment and of the listings' history (see the schemas)."""

    arxiv_records: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ARXIV_RECORDS_SCHEMA))
    openalex_answers: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=OPENALEX_ANSWERS_SCHEMA))
    page_ids: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=PAGE_IDS_SCHEMA))

    def __post_init__(self) -> None:
        self.arxiv_records = _conform(self.arxiv_records, ARXIV_RECORDS_SCHEMA)
        self.openalex_answers = _conform(self.openalex_answers, OPENALEX_ANSWERS_SCHEMA)
        self.page_ids = _conform(self.page_ids, PAGE_IDS_SCHEMA)


def _conform(frame: pl.DataFrame | None, schema: dict) -> pl.DataFrame:
    if frame is None or frame.height == 0:
        return pl.DataFrame(schema=schema)
    return frame.select([pl.col(c) if c in frame.columns else pl.lit(None).alias(c) for c in schema]).cast(schema)


def _openalex_with_lookups(answers_frame: pl.DataFrame) -> pl.DataFrame:
    """OpenAlex answers with their ``lookup`` (``arxiv:<id>`` / ``title:<key>``) and whether each is the
    lookup's current (newest) answer."""
    if answers_frame.height == 0:
        return answers_frame.with_columns(lookup=pl.lit(None, pl.String), current=pl.lit(None, pl.Boolean))
    frame = answers_frame.with_columns(
        arxiv_norm=per_distinct("arxiv_id", normalize_arxiv_id),
    ).with_columns(
        lookup=pl.when(pl.col("matched_by") == "title").then(pl.concat_str(pl.lit("title:"), "title_key"))
        .otherwise(pl.concat_str(pl.lit("arxiv:"), "arxiv_norm")),
    ).filter(pl.col("lookup").is_not_null())
    return frame.with_columns(current=pl.col("last_seen") == pl.col("last_seen").max().over("lookup"))


# ================================================================================ per listing

@dataclass
class ListingIdentifiers:
    listings: pl.DataFrame      # the listings with arxiv_id filled, arxiv_from, doi and openalex_id
    observations: pl.DataFrame  # every sighting of a value (_OBS_SCHEMA)
    rejects: pl.DataFrame       # REJECTS_SCHEMA with listing_key instead of paper_id (known after resolution)


_LISTING_REJECTS = {**{k: v for k, v in REJECTS_SCHEMA.items() if k != "paper_id"}, "listing_key": pl.String}


def attach_identifiers(latest: pl.DataFrame, evidence: IdentifierEvidence | None) -> ListingIdentifiers:
    """The current listing rows (``listing_key``, ``source``, ``source_profile_id``, ``title``,
    ``year``, ``arxiv_id``, ``byline_authors``, ``owner_name``, ``partition_date``; optional
    ``arxiv_from``: 'page' or 'title_search') with identifiers attached:

    - ``arxiv_id`` (normalised), also from a verified OpenAlex title hit that carries one
      (``arxiv_from``: 'page' | 'title_search' | 'openalex_title');
    - ``doi``: the DOI the paper matcher reads — arXiv's record's journal DOI, else the linked
      OpenAlex work's (never an arXiv DOI: the matcher reads those as arXiv ids);
    - ``openalex_id``: the current OpenAlex work linked by the arXiv id or a verified title hit.

    Also every sighting of a value (for the crosswalk) and the values turned down.
    """
    evidence = evidence or IdentifierEvidence()
    rejects: list[pl.DataFrame] = []
    obs: list[pl.DataFrame] = []
    if "arxiv_id" in latest.columns:
        given = latest.select("listing_key", "source", "arxiv_id",
                              norm=per_distinct("arxiv_id", normalize_arxiv_id),
                              **({"arxiv_from": "arxiv_from"} if "arxiv_from" in latest.columns else {}))
        bad = given.filter(pl.col("arxiv_id").is_not_null() & pl.col("norm").is_null())
        rejects.append(bad.select(
            "listing_key", scheme=pl.lit("arxiv"), value=pl.col("arxiv_id").cast(pl.String),
            source=(pl.when(pl.col("arxiv_from") == "title_search").then(pl.lit("arxiv")).otherwise("source")
                    if "arxiv_from" in bad.columns else pl.col("source")),
            reason=pl.lit(MALFORMED),
            detail=pl.format("the listing's arXiv id '{}' is not an arXiv id", pl.col("arxiv_id").cast(pl.String))))
    base = latest.with_columns(
        arxiv_id=per_distinct("arxiv_id", normalize_arxiv_id),
        arxiv_from=(pl.col("arxiv_from").cast(pl.String) if "arxiv_from" in latest.columns else pl.lit(None, pl.String)),
    ).with_columns(arxiv_from=pl.when(pl.col("arxiv_id").is_not_null()).then(pl.col("arxiv_from").fill_null("page")))
    base = base.drop([c for c in ("doi", "openalex_id") if c in base.columns])

    # ---- OpenAlex works: by the listing's arXiv id, or a title hit this listing agrees with
    oa = _openalex_with_lookups(evidence.openalex_answers)
    links = pl.DataFrame(schema={"listing_key": pl.String, "how": pl.String, **{c: oa.schema[c] for c in oa.columns}})
    if oa.height:
        # what hangs off an arXiv id is as strongly linked as the id itself: by a page, or by a title
        by_id = (base.filter(pl.col("arxiv_id").is_not_null())
                 .select("listing_key", lookup=pl.concat_str(pl.lit("arxiv:"), "arxiv_id"),
                         how=pl.when(pl.col("arxiv_from") == "page").then(pl.lit("arxiv_id")).otherwise(pl.lit("title")))
                 .join(oa, on="lookup"))
        by_title = _verified_title_hits(base, oa, rejects)
        links = pl.concat([by_id.select(links.columns), by_title.select(links.columns)]).cast(links.schema)
    if links.height:
        links = links.with_columns(wid=per_distinct("openalex_id", normalize_work_id), wdoi=per_distinct("doi", normalize_doi))
        bad_w = links.filter(pl.col("wid").is_null())
        rejects.append(bad_w.select("listing_key", scheme=pl.lit("openalex"), value=pl.col("openalex_id").fill_null(""),
                                    source=pl.lit("openalex"), reason=pl.lit(MALFORMED),
                                    detail=pl.format("OpenAlex answered {} with work id '{}', not a W… id", "lookup",
                                                     pl.col("openalex_id").fill_null(""))))
        bad_doi = links.filter(pl.col("doi").is_not_null() & pl.col("wdoi").is_null())
        rejects.append(bad_doi.select("listing_key", scheme=pl.lit("doi"), value="doi", source=pl.lit("openalex"),
                                      reason=pl.lit(MALFORMED),
                                      detail=pl.format("OpenAlex {} gives DOI '{}', not a DOI", "openalex_id", "doi")))
        links = links.filter(pl.col("wid").is_not_null())
        obs.append(links.select("listing_key", scheme=pl.lit("openalex"), value="wid", version=pl.lit(None, pl.Int32),
                                source=pl.lit("openalex"), linked_by="how", first_seen="first_seen",
                                last_seen="last_seen", current="current", lookup="lookup"))
        now = links.filter("current")
        obs.append(now.filter(pl.col("wdoi").is_not_null()).select(
            "listing_key", scheme=pl.lit("doi"), value="wdoi", version=pl.lit(None, pl.Int32), source=pl.lit("openalex"),
            linked_by="how", first_seen="first_seen", last_seen="last_seen", current=pl.lit(True),
            lookup=pl.lit(None, pl.String)))
        per_listing = now.sort("listing_key", "wid").group_by("listing_key").agg(
            pl.col("wid").first().alias("openalex_id"),
            pl.col("wdoi").filter(~pl.col("wdoi").str.starts_with(ARXIV_DOI_PREFIX)).min().alias("openalex_doi"),
            pl.col("arxiv_id").filter(pl.col("how") == "title").drop_nulls().min().alias("title_arxiv"),
        ).with_columns(title_arxiv=per_distinct("title_arxiv", normalize_arxiv_id))
        base = base.join(per_listing, on="listing_key", how="left").with_columns(
            arxiv_from=pl.when(pl.col("arxiv_id").is_null() & pl.col("title_arxiv").is_not_null())
            .then(pl.lit("openalex_title")).otherwise("arxiv_from"),
            arxiv_id=pl.coalesce("arxiv_id", "title_arxiv"),
        ).drop("title_arxiv")
    else:
        base = base.with_columns(openalex_id=pl.lit(None, pl.String), openalex_doi=pl.lit(None, pl.String))

    # ---- arXiv: the id, its record's versions and journal DOI, and the DOI arXiv gives every paper
    with_id = base.filter(pl.col("arxiv_id").is_not_null()).select(
        "listing_key", "arxiv_id", "partition_date",
        source=pl.when(pl.col("arxiv_from") == "page").then(pl.col("source"))
        .when(pl.col("arxiv_from") == "title_search").then(pl.lit("arxiv")).otherwise(pl.lit("openalex")),
        how=pl.when(pl.col("arxiv_from") == "page").then(pl.lit("page")).otherwise(pl.lit("title")),
    )
    obs.append(with_id.select("listing_key", scheme=pl.lit("arxiv"), value="arxiv_id", version=pl.lit(None, pl.Int32),
                              source="source", linked_by="how", first_seen="partition_date", last_seen="partition_date",
                              current=pl.lit(True), lookup=pl.lit(None, pl.String)))
    obs.append(with_id.select("listing_key", scheme=pl.lit("doi"), value=pl.concat_str(pl.lit(ARXIV_DOI_PREFIX), "arxiv_id").str.to_lowercase(),
                              version=pl.lit(None, pl.Int32), source="source", linked_by=pl.lit("derived"),
                              first_seen="partition_date", last_seen="partition_date", current=pl.lit(True),
                              lookup=pl.lit(None, pl.String)))
    records = evidence.arxiv_records.with_columns(rdoi=per_distinct("doi", normalize_doi))
    rec = with_id.select("listing_key", "arxiv_id", record_how=pl.when(pl.col("how") == "page").then(pl.lit("arxiv_id"))
                         .otherwise(pl.lit("title"))).join(records, on="arxiv_id")
    obs.append(rec.with_columns(version=pl.col("versions").list.drop_nulls()).explode("version").select(
        "listing_key", scheme=pl.lit("arxiv"), value="arxiv_id", version=pl.col("version").cast(pl.Int32),
        source=pl.lit("arxiv"), linked_by="record_how", first_seen="first_seen", last_seen="last_seen",
        current=pl.lit(True), lookup=pl.lit(None, pl.String)))
    obs.append(rec.filter(pl.col("rdoi").is_not_null()).select(
        "listing_key", scheme=pl.lit("doi"), value="rdoi", version=pl.lit(None, pl.Int32), source=pl.lit("arxiv"),
        linked_by="record_how", first_seen="first_seen", last_seen="last_seen", current=pl.lit(True),
        lookup=pl.lit(None, pl.String)))
    rejects.append(rec.filter(pl.col("doi").is_not_null() & pl.col("rdoi").is_null()).select(
        "listing_key", scheme=pl.lit("doi"), value="doi", source=pl.lit("arxiv"), reason=pl.lit(MALFORMED),
        detail=pl.format("arXiv {}'s record gives DOI '{}', not a DOI", "arxiv_id", "doi")))
    journal = rec.filter(pl.col("rdoi").is_not_null() & ~pl.col("rdoi").str.starts_with(ARXIV_DOI_PREFIX)).select(
        "listing_key", arxiv_doi_value="rdoi")
    # the matcher's DOI: the authors' own statement (arXiv's record) first, then OpenAlex's
    listings = (base.join(journal, on="listing_key", how="left")
                .with_columns(doi=pl.coalesce("arxiv_doi_value", "openalex_doi"))
                .drop("arxiv_doi_value", "openalex_doi"))

    obs.append(_page_observations(evidence.page_ids, listings))
    observations = pl.concat([o.select(list(_OBS_SCHEMA)).cast(_OBS_SCHEMA) for o in obs])
    turned_down = [r.select(list(_LISTING_REJECTS)).cast(_LISTING_REJECTS) for r in rejects if r.height]
    return ListingIdentifiers(
        listings=listings,
        observations=observations,
        rejects=pl.concat(turned_down) if turned_down else pl.DataFrame(schema=_LISTING_REJECTS),
    )


def _verified_title_hits(base: pl.DataFrame, oa: pl.DataFrame, rejects: list[pl.DataFrame]) -> pl.DataFrame:
    """(listing, OpenAlex title hit) pairs where the listing's own year and names agree with the work;
    the others become ``not_verified`` rejects. Only listings without an arXiv id are looked at."""
    hits = oa.filter(pl.col("lookup").str.starts_with("title:"))
    empty = base.head(0).select("listing_key").join(oa.head(0), how="cross").with_columns(how=pl.lit(None, pl.String))
    if hits.height == 0:
        return empty
    candidates = base.filter(pl.col("arxiv_id").is_null() & pl.col("title").is_not_null())
    keyed = candidates.with_columns(lookup=pl.concat_str(pl.lit("title:"), per_distinct("title", match_key)))
    pairs = keyed.join(hits, on="lookup", suffix="_work")
    if pairs.height == 0:
        return empty
    ok, turned_down = [], []
    for r in pairs.iter_rows(named=True):
        problem = _title_hit_problem(r)
        (turned_down if problem else ok).append((r["listing_key"], r["openalex_id"], problem))
    if turned_down:
        rejects.append(pl.DataFrame(
            [{"listing_key": k, "scheme": "openalex", "value": w or "", "source": "openalex", "reason": NOT_VERIFIED,
              "detail": p} for k, w, p in turned_down], schema=_LISTING_REJECTS))
    verified = pl.DataFrame([(k, w) for k, w, _ in ok], schema={"listing_key": pl.String, "openalex_id": pl.String},
                            orient="row").unique()
    return (verified.join(hits, on="openalex_id").join(keyed.select("listing_key", "lookup"), on=["listing_key", "lookup"])
            .with_columns(how=pl.lit("title")))


def _title_hit_problem(pair: dict) -> str | None:
    """Why an OpenAlex work found by this listing's title is not this listing's paper, or None."""
    where = f"{pair['source']}:{pair.get('source_profile_id')}"
    year, work_year = pair.get("year"), pair["publication_year"]
    if not answers.years_compatible([work_year], [year]):
        return f"OpenAlex {pair['openalex_id']} (found by title) is from {work_year}, the listing ({where}) says {year}"
    names = [n for n in [*(pair.get("byline_authors") or []), pair.get("owner_name")] if n]
    authors = pair["author_names"]
    if authors is not None and not answers.names_agree(names, authors):
        shown = ", ".join(authors[:4]) + (f" (+{len(authors) - 4})" if len(authors) > 4 else "")
        return (f"none of OpenAlex {pair['openalex_id']}'s authors ({shown or 'none'}) is a name the listing "
                f"({where}) shows ({', '.join(names) or 'none'})")
    return None


def _page_observations(page_ids: pl.DataFrame, listings: pl.DataFrame) -> pl.DataFrame:
    """arXiv ids (with their versions) and site ids from every staged row of the current listing keys.
    A value is current when the key's newest row shows it; an arXiv id counts only while it is still
    the key's arXiv id (resolution used that one)."""
    if page_ids.height == 0:
        return pl.DataFrame(schema=_OBS_SCHEMA)
    frame = page_ids.join(listings.select("listing_key", newest="partition_date", current_arxiv="arxiv_id"),
                          on="listing_key").with_columns(
        at_newest=pl.col("last_seen") >= pl.col("newest"),
        arxiv_norm=per_distinct("arxiv_id", normalize_arxiv_id),
        path=pl.col("paper_url").str.strip_chars().str.extract(_URL_PATH, 1),
    ).with_columns(
        site_scheme=pl.col("source").replace_strict(SITE_SCHEMES, default=None, return_dtype=pl.String),
        site_value=pl.when(pl.col("source") == "bzpeer").then(pl.col("path").str.extract(_SITE_PATH["bzpeer"].pattern, 1))
        .when(pl.col("source") == "scholarfeed").then(pl.col("path").str.extract(_SITE_PATH["scholarfeed"].pattern, 1)),
    )
    arxiv = frame.filter(pl.col("arxiv_norm").is_not_null() & (pl.col("arxiv_norm") == pl.col("current_arxiv"))).select(
        "listing_key", scheme=pl.lit("arxiv"), value="arxiv_norm", version="arxiv_version", source="source",
        linked_by=pl.lit("page"), first_seen="first_seen", last_seen="last_seen", current="at_newest",
        lookup=pl.lit(None, pl.String))
    site = frame.filter(pl.col("site_scheme").is_not_null() & pl.col("site_value").is_not_null()).select(
        "listing_key", scheme="site_scheme", value="site_value",
        version=pl.lit(None, pl.Int32), source="source", linked_by=pl.lit("page"), first_seen="first_seen",
        last_seen="last_seen", current="at_newest", lookup=pl.concat_str(pl.lit("listing:"), "listing_key"))
    return pl.concat([arxiv.cast(_OBS_SCHEMA), site.cast(_OBS_SCHEMA)])


# ================================================================================ per paper

@dataclass
class IdentifierTables:
    crosswalk: pl.DataFrame    # core.paper_identifiers (CROSSWALK_SCHEMA)
    rejects: pl.DataFrame      # core.identifier_rejects (REJECTS_SCHEMA)
    redirects: pl.DataFrame    # core.id_redirects rows for identifiers (REDIRECTS_SCHEMA)

    def primary(self, scheme: str) -> pl.DataFrame:
        """``paper_id`` → the paper's primary value of ``scheme`` (column named after the scheme)."""
        return (self.crosswalk.filter((pl.col("scheme") == scheme) & pl.col("is_primary"))
                .select("paper_id", pl.col("value").alias(scheme)))


def build_crosswalk(attached: ListingIdentifiers, key_to_paper: pl.DataFrame, *, today: date) -> IdentifierTables:
    """The crosswalk, its rejects and the identifier redirects, from the observations of
    ``attach_identifiers`` and where resolution put each listing key (``listing_key``, ``paper_id``)."""
    papers = key_to_paper.select("listing_key", "paper_id").unique("listing_key")
    obs = attached.observations.join(papers, on="listing_key", how="inner")
    rejects = attached.rejects.join(papers, on="listing_key", how="left").drop("listing_key")

    grouped = (
        obs.with_columns(rank=pl.col("linked_by").replace_strict(LINK_RANK, return_dtype=pl.Int32))
        .group_by("paper_id", "scheme", "value")
        .agg(
            pl.col("current").any().alias("current"),
            pl.col("version").drop_nulls().unique().sort().alias("versions"),
            pl.col("source").unique().sort().alias("sources"),
            pl.col("rank").min().alias("rank"),
            pl.col("first_seen").min().alias("first_seen"),
            pl.col("last_seen").max().alias("last_seen"),
        )
        .filter(pl.col("current"))
    )
    # A value names one paper: one that would name two is turned down on both.
    claims = grouped.group_by("scheme", "value").agg(pl.col("paper_id").unique().sort().alias("claimants"))
    ambiguous = claims.filter(pl.col("claimants").list.len() > 1)
    if ambiguous.height:
        amb_rows = grouped.join(ambiguous, on=["scheme", "value"]).sort("scheme", "value", "paper_id")
        rejects = pl.concat([rejects, amb_rows.select(
            "scheme", "value", pl.col("sources").list.join(",").alias("source"), pl.lit(AMBIGUOUS).alias("reason"),
            pl.concat_str(pl.lit("the same "), "scheme", pl.lit(" names "), pl.col("claimants").list.len().cast(pl.String),
                          pl.lit(" papers: "), pl.col("claimants").list.join(", ")).alias("detail"),
            "paper_id",
        )], how="vertical_relaxed")
        grouped = grouped.join(ambiguous.select("scheme", "value"), on=["scheme", "value"], how="anti")

    crosswalk = (
        grouped.with_columns(
            journal=(pl.col("scheme") == "doi") & ~pl.col("value").str.starts_with(ARXIV_DOI_PREFIX),
            n_sources=pl.col("sources").list.len(),
            versions=pl.when(pl.col("scheme") == "arxiv").then(pl.col("versions")),
            # arXiv: the smallest id (core.papers.arxiv_id's rule); the others by what follows
            arxiv_first=pl.when(pl.col("scheme") == "arxiv").then(pl.col("value")),
        )
        # DOI: a journal DOI before arXiv's; all: the newest, the strongest link, the most sources, the smallest
        .sort(["paper_id", "scheme", "arxiv_first", "journal", "last_seen", "rank", "n_sources", "value"],
              descending=[False, False, False, True, True, False, True, False], nulls_last=True)
        .with_columns(
            is_primary=pl.int_range(pl.len()).over("paper_id", "scheme") == 0,
            linked_by=pl.col("rank").replace_strict(dict(enumerate(LINKS)), return_dtype=pl.String),
        )
        .select(list(CROSSWALK_SCHEMA)).cast(CROSSWALK_SCHEMA).sort("paper_id", "scheme", "value")
    )
    redirects = _redirects(obs, crosswalk, today)
    rejects = (rejects.select(list(REJECTS_SCHEMA)).cast(REJECTS_SCHEMA)
               .unique(["scheme", "value", "source", "reason", "paper_id"], keep="first")
               .sort("scheme", "value", "reason", "paper_id", nulls_last=True))
    return IdentifierTables(crosswalk, rejects, redirects)


def _redirects(obs: pl.DataFrame, crosswalk: pl.DataFrame, today: date) -> pl.DataFrame:
    """A value a source replaced → what the same lookup gives now (see the module docstring)."""
    keyed = obs.filter(pl.col("lookup").is_not_null() & pl.col("scheme").is_in(list(REDIRECTED_SCHEMES)))
    if keyed.height == 0:
        return pl.DataFrame(schema=REDIRECTS_SCHEMA)
    live = crosswalk.select("scheme", "value")
    now = (keyed.filter("current").join(live, on=["scheme", "value"])
           .group_by("lookup", "scheme", "value").agg(pl.col("first_seen").min())
           .rename({"value": "new_id", "first_seen": "redirected_on"}))
    old = (keyed.filter(~pl.col("current")).select("lookup", "scheme", old_id="value")
           .join(live.rename({"value": "old_id"}), on=["scheme", "old_id"], how="anti").unique())
    rows = (
        old.join(now, on=["lookup", "scheme"])
        .filter(pl.col("old_id") != pl.col("new_id"))
        .sort(["scheme", "old_id", "redirected_on", "new_id"], descending=[False, False, True, False])
        .unique(["scheme", "old_id"], keep="first")
        .select(entity_type="scheme", old_id="old_id", new_id="new_id", reason=pl.lit("superseded"),
                redirected_on=pl.col("redirected_on").fill_null(today))
    )
    return rows.cast(REDIRECTS_SCHEMA).sort("entity_type", "old_id")

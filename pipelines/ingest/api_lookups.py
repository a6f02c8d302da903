"""Enrichment from the arXiv and OpenAlex APIs: what to ask for, and what the answers become.

Profile pages show truncated bylines ("three names et al.") and no citation counts per paper; the
arXiv API has the full author lists, OpenAlex the citation counts over time and the ORCIDs. This
module decides what to look up for one partition date, calls the clients (``pipelines.ingest.sources``),
and shapes the answers into the ``enrichment.*`` tables (what to ask for: ``lookup_plan.py``; what an
answer is checked against and what it becomes: ``lookup_answers.py``; their names are importable from
here too). No Dagster imports: the assets in
``pipelines/assets/enrichment.py`` read staging, call ``enrich_arxiv`` / ``enrich_openalex`` and
write the frames.

What a partition's enrichment covers (every table's slice for date D is a snapshot "as of D"):

- **arXiv by id** — every distinct arXiv id of ``staging.listings`` up to D, plus the ids earlier
  title searches found for titles listed up to D. One request per 100 ids, answered by the cache
  (7 days) on re-runs and backfills.
- **arXiv by exact title** — listings without an id (BZPEER text, Scholar Feed without links) are
  searched by title, at most ``max_title_searches`` per night (arXiv asks for one request per 3 s),
  newest listings first. A hit needs the same ``match_key`` title *and* an author the listings name
  (profile owner or byline): a same-titled paper by other people is ``rejected``, not matched.
  Outcomes are remembered in ``enrichment.arxiv_title_searches``: a found title is never searched
  again; ``not_found`` / ``rejected`` are retried after ``title_search_retry_days``; ``error`` the
  next night. So the backlog drains night after night and a re-run sends nothing new.
- **OpenAlex** — each arXiv id by its DOI ``10.48550/arXiv.<id>`` (citation counts refresh nightly:
  the cache keeps answers 20 h); titles arXiv does not have (``not_found``/``rejected``) by OpenAlex
  title search (same title key, year ± 1, an author in common), capped like arXiv's and rotated by
  date so a long backlog is covered over the nights; then the authors whose ORCID the works carry,
  profile owners first, at most ``max_author_lookups``.
- **Author lists** — one row per author of an enriched paper: arXiv's list (evidence ``arxiv``),
  with the ORCID / OpenAlex author id of the OpenAlex authorship that names the same person; or
  OpenAlex's list (evidence ``openalex``) for works arXiv did not give us. ``core`` joins these to
  papers on ``arxiv_id`` (and can on ``title_key``, see ``fill_listing_arxiv_ids``).

Every answer is checked against what was asked before it is kept (``pipelines/ingest/sources/answers.py``:
the id, a compatible title, year and authors, the latest listed arXiv version, a person's name):
an answer about another paper or person, or one that cannot be read, is a row of the night's
``rejects`` (``REJECTS_SCHEMA``: ``enrichment.arxiv_rejects`` / ``openalex_rejects``) with its
reason code, and so are failed lookups. Nothing rejected reaches the other tables, hence ``core``.

Failures never stop the night: an arXiv error entry or an OpenAlex 400 costs that one item;
an unavailable API is given up after ``max_consecutive_failures`` failures in a row; a spent
OpenAlex budget (``OpenAlexBudgetExhausted``) stops OpenAlex at once. Everything done so far is
kept, reported (``report``), and cached, so the next run continues where this one stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from typing import Any, Callable, Iterable, Sequence

import polars as pl

from pipelines.core.resolution.names import name_compatibility
from pipelines.ingest.lookup_answers import (  # noqa: F401 - re-exported: this module is the enrichment's import path
    AUTHOR_LISTS_SCHEMA,
    align_authorships,
    arxiv_evidence,
    build_author_lists,
    listing_evidence,
    names_agree,
)
from pipelines.ingest.lookup_plan import (  # noqa: F401 - re-exported, as above
    ERROR,
    FOUND,
    NOT_FOUND,
    REJECTED,
    TITLES_SCHEMA,
    EnrichmentLimits,
    _previous,
    arxiv_ids_to_fetch,
    empty,
    fill_listing_arxiv_ids,
    found_title_matches,
    listing_arxiv_ids,
    select_arxiv_title_searches,
    titles_for_openalex,
    titles_without_id,
)
from pipelines.ingest.sources import answers
from pipelines.ingest.sources.arxiv import (
    ArxivApiError,
    ArxivClient,
    ArxivRateLimited,
    ArxivRecord,
    ArxivUnavailable,
    arxiv_records_frame,
)
from pipelines.ingest.sources.openalex import (
    OpenAlexBudgetExhausted,
    OpenAlexClient,
    OpenAlexError,
    OpenAlexUnavailable,
    OpenAlexWork,
)
from pipelines.textnorm import match_key
from pipelines.warehouse import contract

# The rows of the enrichment tables (sql/schema/05_enrichment.sql, whose comments say what each column
# holds) before the partition_date the assets stamp them with: pipelines/warehouse/contract.py.
ARXIV_WORKS_SCHEMA = contract.polars_schema("enrichment.arxiv_works", drop=("partition_date",))
TITLE_SEARCH_SCHEMA = contract.polars_schema("enrichment.arxiv_title_searches", drop=("partition_date",))
OPENALEX_WORKS_SCHEMA = contract.polars_schema("enrichment.openalex_works", drop=("partition_date",))
OPENALEX_AUTHORS_SCHEMA = contract.polars_schema("enrichment.openalex_authors", drop=("partition_date",))
REJECTS_SCHEMA = contract.polars_schema("enrichment.arxiv_rejects", drop=("partition_date",))  # and openalex_rejects


# ================================================================================ API calls

class ApiGuard:
    """Calls into one API for one night: counts errors, and knows when to stop asking.

    ``fatal`` exceptions stop at once (a spent budget, arXiv's persistent ``Rate exceeded.``);
    ``transient`` ones (unavailable, unreadable answers) and ``per_item`` ones (an error answer
    about one query) stop the API after ``max_consecutive`` in a row. Nothing propagates: the
    night goes on.
    """

    def __init__(self, api: str, *, fatal: tuple[type[BaseException], ...], transient: tuple[type[BaseException], ...],
                 per_item: tuple[type[BaseException], ...], max_consecutive: int) -> None:
        self.api = api
        self.fatal, self.transient, self.per_item = fatal, transient, per_item
        self.max_consecutive = max(1, max_consecutive)
        self.stopped: str | None = None
        self.errors: dict[str, int] = {}
        self.error_sample: list[str] = []
        self._consecutive = 0

    def _record(self, exc: BaseException) -> None:
        kind = type(exc).__name__
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.error_sample) < 5:
            self.error_sample.append(f"{kind}: {exc}"[:300])

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        """``(True, value)``; ``(False, exception)`` when the call failed; ``(False, None)`` when the
        API is stopped and nothing was sent."""
        if self.stopped:
            return False, None
        try:
            value = fn(*args, **kwargs)
        except self.fatal as exc:
            self._record(exc)
            self.stopped = f"{type(exc).__name__}: {exc}"[:300]
            return False, exc
        except (*self.transient, *self.per_item) as exc:
            self._record(exc)
            self._consecutive += 1
            if self._consecutive >= self.max_consecutive:
                self.stopped = f"{self._consecutive} failures in a row, last {type(exc).__name__}: {exc}"[:300]
            return False, exc
        self._consecutive = 0
        return True, value

    def report(self) -> dict[str, Any]:
        return {"errors": sum(self.errors.values()), "errors_by_kind": dict(sorted(self.errors.items())),
                "error_sample": list(self.error_sample), "stopped": self.stopped}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def failure_reason(exc: BaseException) -> str:
    """The ``answers`` reason code of a failed lookup."""
    if isinstance(exc, answers.BadAnswer):
        return exc.reason
    for kind, reason in ((OpenAlexBudgetExhausted, answers.BUDGET_EXHAUSTED), (OpenAlexUnavailable, answers.UNAVAILABLE),
                         (OpenAlexError, answers.REFUSED), (ArxivRateLimited, answers.RATE_LIMITED),
                         (ArxivApiError, answers.ERROR_ANSWER), (ArxivUnavailable, answers.UNAVAILABLE)):
        if isinstance(exc, kind):
            return reason
    return answers.UNAVAILABLE


class Rejects:
    """The night's rejected lookups of one API (``REJECTS_SCHEMA``): one row per lookup and query."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, lookup: str, asked: str, reason: str, detail: str, answered_id: str | None = None) -> None:
        key = (lookup, asked)
        if key not in self.rows:
            self.rows[key] = {"lookup": lookup, "asked": asked, "reason": reason, "detail": " ".join(detail.split())[:500],
                              "answered_id": answered_id, "rejected_at": _now()}

    def rejection(self, lookup: str, asked: str, rejection: answers.Rejection, answered_id: str | None = None) -> None:
        self.add(lookup, asked, rejection.reason, rejection.detail, answered_id)

    def failure(self, lookup: str, asked: str, exc: BaseException) -> None:
        self.add(lookup, asked, failure_reason(exc), f"{type(exc).__name__}: {exc}")

    def frame(self) -> pl.DataFrame:
        rows = sorted(self.rows.values(), key=lambda r: (r["lookup"], r["asked"]))
        return pl.DataFrame(rows, schema=REJECTS_SCHEMA) if rows else empty(REJECTS_SCHEMA)

    def report(self) -> dict[str, Any]:
        by_reason: dict[str, int] = {}
        for row in self.rows.values():
            by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + 1
        return {"rejected": len(self.rows), "rejected_by_reason": dict(sorted(by_reason.items()))}


@dataclass
class ArxivEnrichment:
    works: pl.DataFrame             # ARXIV_WORKS_SCHEMA
    title_searches: pl.DataFrame    # TITLE_SEARCH_SCHEMA: the searches made for this partition
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))
    report: dict[str, Any] = field(default_factory=dict)


def enrich_arxiv(client: ArxivClient, *, listings: pl.DataFrame, profiles: pl.DataFrame, searches: pl.DataFrame,
                 day: date, limits: EnrichmentLimits = EnrichmentLimits()) -> ArxivEnrichment:
    """Fetch the arXiv records for the partition (see the module docstring).

    ``listings`` / ``profiles``: staging rows up to ``day``; ``searches``: every
    ``enrichment.arxiv_title_searches`` row stored so far (this partition's are ignored). Every
    record is checked against what the listings say (``answers.check_arxiv_record``); what is
    turned down, and every lookup that failed, is a row of ``rejects``.
    """
    requests_before = client.requests_made
    guard = ApiGuard("arxiv", fatal=(ArxivRateLimited,), transient=(ArxivUnavailable,), per_item=(ArxivApiError,),
                     max_consecutive=limits.max_consecutive_failures)
    previous = _previous(searches, day)
    titles = titles_without_id(listings, profiles)
    wanted = arxiv_ids_to_fetch(listings, titles, previous)
    known = listing_evidence(listings, profiles, titles, previous)
    records: dict[str, tuple[ArxivRecord, str]] = {}
    rejects = Rejects()
    missing, api_errors = _records_by_id(client, guard, wanted, known, records, rejects)
    to_search, backlog = select_arxiv_title_searches(titles, previous, day, limits)
    rows = _records_by_title(client, guard, to_search, records, rejects)
    not_reached = to_search.height - len(rows)

    works = _arxiv_works_frame(records.values())
    searched = pl.DataFrame(rows, schema=TITLE_SEARCH_SCHEMA) if rows else empty(TITLE_SEARCH_SCHEMA)
    outcomes = {k: int(v) for k, v in searched.group_by("outcome").len().iter_rows()} if rows else {}
    report = {
        "ids_requested": len(wanted),
        "records": works.height,
        "records_by_match": {k: int(v) for k, v in works.group_by("matched_by").len().sort("matched_by").iter_rows()},
        "missing_ids": len(missing),
        "missing_sample": missing[:10],
        "api_error_entries": len(api_errors),
        "api_error_sample": api_errors[:5],
        "title_searches": len(rows),
        "title_outcomes": dict(sorted(outcomes.items())),
        "title_backlog": backlog + not_reached,
        "requests": client.requests_made - requests_before,
        **rejects.report(),
        **guard.report(),
    }
    return ArxivEnrichment(works=works, title_searches=searched, rejects=rejects.frame(), report=report)


def _records_by_id(client: ArxivClient, guard: ApiGuard, wanted: dict[str, str],
                   known: dict[str, answers.PaperEvidence], records: dict[str, tuple[ArxivRecord, str]],
                   rejects: Rejects) -> tuple[list[str], list[str]]:
    """arXiv by id, one batch per call: a failing batch costs itself, not the batches already
    fetched. Accepted records go to ``records``; returns the ids arXiv had no entry for and its
    error entries."""
    missing: list[str] = []
    api_errors: list[str] = []
    ids = list(wanted)
    for start in range(0, len(ids), client.batch_size):
        batch = ids[start:start + client.batch_size]
        ok, got = guard.call(client.fetch_by_ids, batch)
        if not ok:
            for arxiv_id in batch if got is not None else ():
                rejects.failure("id", arxiv_id, got)
            if guard.stopped:
                break
            continue
        for rec in got:
            rejection = answers.check_arxiv_record(rec, rec.arxiv_id, known.get(rec.arxiv_id, answers.PaperEvidence()))
            if rejection:
                rejects.rejection("id", rec.arxiv_id, rejection, _versioned(rec))
            else:
                records.setdefault(rec.arxiv_id, (rec, wanted.get(rec.arxiv_id, "id")))
        _reject_missing(got, rejects)
        missing += got.missing_ids
        for e in got.errors:
            api_errors.append(f"{','.join(e.ids)}: {e.message}")
            for arxiv_id in e.ids:
                rejects.add("id", arxiv_id, answers.ERROR_ANSWER if e.kind == "api_error" else answers.REFUSED, e.message)
    return missing, api_errors


def _reject_missing(got, rejects: Rejects) -> None:
    """A rejects row for every id of a batch arXiv gave no entry for: ``id_mismatch`` when another
    paper's entry came instead, else ``not_found``."""
    instead: dict[str, list[str]] = {}
    for rec in got.unexpected:
        for arxiv_id in got.missing_for.get(rec.arxiv_id, []):
            instead.setdefault(arxiv_id, []).append(_versioned(rec))
    for arxiv_id in got.missing_ids:
        if arxiv_id in instead:
            rejects.add("id", arxiv_id, answers.ID_MISMATCH,
                        f"asked arXiv {arxiv_id}, the answer holds {', '.join(instead[arxiv_id])} instead",
                        ",".join(instead[arxiv_id]))
        else:
            rejects.add("id", arxiv_id, answers.NOT_FOUND, f"arXiv returned no entry for {arxiv_id}")


def _records_by_title(client: ArxivClient, guard: ApiGuard, to_search: pl.DataFrame,
                      records: dict[str, tuple[ArxivRecord, str]], rejects: Rejects) -> list[dict[str, Any]]:
    """Exact-title searches (``to_search``: capped already): one ``TITLE_SEARCH_SCHEMA`` row per
    title searched; a confirmed hit goes to ``records``."""
    rows: list[dict[str, Any]] = []
    for t in to_search.iter_rows(named=True):
        if guard.stopped:
            break
        ok, result = guard.call(client.search_title, t["title"])
        row = {"title_key": t["title_key"], "title": t["title"], "year": t["year"], "searched_at": _now(),
               "arxiv_id": None, "detail": None}
        if not ok:
            rows.append({**row, "outcome": ERROR, "detail": f"{type(result).__name__}: {result}"[:500]})
            if result is not None:
                rejects.failure("title", t["title"], result)
            continue
        if result is None:
            rows.append({**row, "outcome": NOT_FOUND})
            continue
        rejection = answers.check_arxiv_record(result, result.arxiv_id,
                                               answers.evidence([t["title"]], [t["year"]], t["names"] or []), by="title")
        if rejection:
            rows.append({**row, "outcome": REJECTED, "arxiv_id": result.arxiv_id, "detail": rejection.detail[:500]})
            rejects.rejection("title", t["title"], rejection, _versioned(result))
        else:
            rows.append({**row, "outcome": FOUND, "arxiv_id": result.arxiv_id, "searched_at": result.fetched_at or row["searched_at"]})
            records.setdefault(result.arxiv_id, (result, "title"))
    return rows


def _versioned(record: ArxivRecord) -> str:
    return f"{record.arxiv_id}v{record.version}" if record.version else record.arxiv_id


def _arxiv_works_frame(matches: Iterable[tuple[ArxivRecord, str]]) -> pl.DataFrame:
    matches = sorted(matches, key=lambda m: m[0].arxiv_id)
    if not matches:
        return empty(ARXIV_WORKS_SCHEMA)
    frame = arxiv_records_frame([m[0] for m in matches]).with_columns(
        matched_by=pl.Series([m[1] for m in matches], dtype=pl.String),
        title_key=pl.col("title").map_elements(match_key, return_dtype=pl.String),
    )
    return frame.select(list(ARXIV_WORKS_SCHEMA)).cast(ARXIV_WORKS_SCHEMA)


@dataclass
class OpenAlexEnrichment:
    works: pl.DataFrame             # OPENALEX_WORKS_SCHEMA
    authors: pl.DataFrame           # OPENALEX_AUTHORS_SCHEMA
    author_lists: pl.DataFrame      # AUTHOR_LISTS_SCHEMA (arXiv lists too: built here, after both APIs)
    rejects: pl.DataFrame = field(default_factory=lambda: empty(REJECTS_SCHEMA))
    report: dict[str, Any] = field(default_factory=dict)


def enrich_openalex(client: OpenAlexClient | None, *, listings: pl.DataFrame, profiles: pl.DataFrame,
                    searches: pl.DataFrame, arxiv_works: pl.DataFrame, day: date,
                    limits: EnrichmentLimits = EnrichmentLimits(),
                    previously_matched: Iterable[str] = ()) -> OpenAlexEnrichment:
    """Look the partition's papers and their ORCID authors up in OpenAlex; build the author lists.

    ``searches``: every ``enrichment.arxiv_title_searches`` row, this partition's included (they
    were just written); ``arxiv_works``: this partition's ``enrichment.arxiv_works``;
    ``previously_matched``: title keys OpenAlex matched on earlier nights. With ``client=None``
    (OpenAlex not available) the author lists come from arXiv alone. Every work is checked
    against the arXiv record and the listings, every person against the names their ORCID was
    found under (``sources/answers.py``); what is turned down, and every failed lookup, is a row
    of ``rejects``.
    """
    titles = titles_without_id(listings, profiles)
    wanted = arxiv_ids_to_fetch(listings, titles, searches)
    works: dict[str, OpenAlexWork] = {}
    report: dict[str, Any] = {"works_requested": len(wanted)}
    if client is None:
        report["stopped"] = "OpenAlex not configured"
        return OpenAlexEnrichment(_openalex_works_frame([]), empty(OPENALEX_AUTHORS_SCHEMA),
                                  build_author_lists(arxiv_works, []), report=report)
    requests_before, hits_before = client.requests_made, client.cache_hits
    guard = ApiGuard("openalex", fatal=(OpenAlexBudgetExhausted,), transient=(OpenAlexUnavailable,),
                     per_item=(OpenAlexError,), max_consecutive=limits.max_consecutive_failures)
    rejects = Rejects()
    known = listing_evidence(listings, profiles, titles, searches)
    for arxiv_id, from_arxiv in arxiv_evidence(arxiv_works).items():
        known[arxiv_id] = known[arxiv_id].merged(from_arxiv) if arxiv_id in known else from_arxiv
    not_found = _works_by_arxiv_doi(client, guard, wanted, known, works, rejects)

    to_search, backlog = titles_for_openalex(titles, searches, day, limits.max_title_searches, previously_matched)
    searched, title_found, title_rejected = _works_by_title(client, guard, to_search, works, rejects)
    backlog += to_search.height - searched

    # Authors by ORCID: the profile owners first (the people this warehouse is about), then the rest.
    ordered, found_as = _orcids_to_look_up(works, profiles)
    authors, asked_authors = _authors_by_orcid(client, guard, ordered[: max(0, limits.max_author_lookups)], found_as, rejects)

    work_list = sorted(works.values(), key=lambda w: w.openalex_id)
    works_frame = _openalex_works_frame(work_list)
    report.update({
        "works": works_frame.height,
        "works_by_match": {k: int(v) for k, v in works_frame.group_by("matched_by").len().sort("matched_by").iter_rows()},
        "works_not_found": not_found,
        "title_searches": searched,
        "title_found": title_found,
        "title_rejected": title_rejected,
        "title_backlog": backlog,
        "orcids_known": len(ordered),
        "authors_requested": asked_authors,
        "authors": len(authors),
        "author_backlog": len(ordered) - asked_authors,
        "requests": client.requests_made - requests_before,
        "cache_hits": client.cache_hits - hits_before,
        "budget_used_today": client.budget_used(),
        "daily_budget": client.daily_budget,
        **rejects.report(),
        **guard.report(),
    })
    return OpenAlexEnrichment(
        works=works_frame, authors=_openalex_authors_frame(authors),
        author_lists=build_author_lists(arxiv_works, work_list), rejects=rejects.frame(), report=report,
    )


def _works_by_arxiv_doi(client: OpenAlexClient, guard: ApiGuard, wanted: Iterable[str],
                        known: dict[str, answers.PaperEvidence], works: dict[str, "OpenAlexWork"], rejects: "Rejects") -> int:
    """Look each arXiv id up by its arXiv DOI: the works that pass the check go into ``works``, the rest
    into ``rejects``. Returns how many OpenAlex does not have."""
    not_found = 0
    for arxiv_id in wanted:
        asked = f"10.48550/arxiv.{arxiv_id}"
        ok, work = guard.call(client.work_by_arxiv_id, arxiv_id)
        if not ok:
            if work is not None:
                rejects.failure("arxiv_doi", asked, work)
            if guard.stopped:
                break
            continue
        if work is None:
            not_found += 1
            rejects.add("arxiv_doi", asked, answers.NOT_FOUND, f"OpenAlex has no work with doi:{asked} (HTTP 404)")
            continue
        rejection = answers.check_openalex_work(work, asked=arxiv_id, by="arxiv_doi",
                                                known=known.get(arxiv_id, answers.PaperEvidence()))
        if rejection:
            rejects.rejection("arxiv_doi", asked, rejection, work.openalex_id or None)
            continue
        if work.arxiv_id is None:            # its DOI is the arXiv DOI asked for
            work = replace(work, arxiv_id=arxiv_id)
        works.setdefault(work.openalex_id, work)
    return not_found


def _works_by_title(client: OpenAlexClient, guard: ApiGuard, to_search: pl.DataFrame,
                    works: dict[str, "OpenAlexWork"], rejects: "Rejects") -> tuple[int, int, int]:
    """Search OpenAlex for each title (an exact title, a year within one), fetching a work whose list
    answer cut its authorships; the works that pass the check go into ``works``, the rest into
    ``rejects``. Returns the titles searched, found and rejected."""
    searched = title_found = title_rejected = 0
    for t in to_search.iter_rows(named=True):
        if guard.stopped:
            break
        searched += 1
        ok, work = guard.call(client.search_work_by_title, t["title"], t["year"])
        if not ok:
            if work is not None:
                rejects.failure("title", t["title"], work)
            continue
        if work is None:
            rejects.add("title", t["title"], answers.NOT_FOUND, "no OpenAlex work with this exact title and a year "
                                                                f"within one of {t['year']}")
            continue
        title_known = answers.evidence([t["title"]], [t["year"]], t["names"] or [])
        if work.is_authors_truncated:
            # List answers cut authorships at 100: the work itself has them all (and the
            # author check below needs them).
            ok, full = guard.call(client.work_by_id, work.openalex_id)
            if not ok and full is not None:
                rejects.failure("openalex_id", work.openalex_id, full)
            if guard.stopped:
                break
            if ok and full is None:
                rejects.add("openalex_id", work.openalex_id, answers.NOT_FOUND,
                            f"OpenAlex has no work {work.openalex_id} (HTTP 404), though its title search returned it")
            elif ok:
                rejection = answers.check_openalex_work(full, asked=work.openalex_id, by="openalex_id", known=title_known)
                if rejection:
                    rejects.rejection("openalex_id", work.openalex_id, rejection, full.openalex_id or None)
                else:
                    work = replace(full, matched_by="title")
        rejection = answers.check_openalex_work(work, asked=t["title"], by="title", known=title_known)
        if rejection:
            title_rejected += 1
            rejects.rejection("title", t["title"], rejection, work.openalex_id)
            continue
        title_found += 1
        works.setdefault(work.openalex_id, work)
    return searched, title_found, title_rejected


def _orcids_to_look_up(works: dict[str, "OpenAlexWork"], profiles: pl.DataFrame) -> tuple[list[str], dict[str, list[str]]]:
    """The ORCIDs the works carry, the profile owners first (the people this warehouse is about), then
    the rest; and for each, the names it was found under."""
    owners = profiles["name"].drop_nulls().unique().to_list() if profiles.height else []
    orcids: dict[str, tuple[int, str]] = {}
    found_as: dict[str, list[str]] = {}
    for work in works.values():
        for a in work.authorships:
            if not a.orcid:
                continue
            owner = any(max(name_compatibility(o, a.raw_author_name), name_compatibility(o, a.display_name)) == 2
                        for o in owners)
            rank = (0 if owner else 1, a.orcid)
            orcids[a.orcid] = min(orcids.get(a.orcid, rank), rank)
            found_as.setdefault(a.orcid, []).extend(n for n in (a.raw_author_name, a.display_name) if n)
    ordered = [o for o, _ in sorted(orcids.items(), key=lambda kv: kv[1])]
    return ordered, found_as


def _authors_by_orcid(client: OpenAlexClient, guard: ApiGuard, orcids: Sequence[str], found_as: dict[str, list[str]],
                      rejects: "Rejects") -> tuple[list, int]:
    """Look each ORCID up: the people who pass the check, and how many were asked."""
    authors = []
    asked_authors = 0
    for orcid in orcids:
        if guard.stopped:
            break
        asked_authors += 1
        ok, author = guard.call(client.author_by_orcid, orcid)
        if not ok:
            if author is not None:
                rejects.failure("orcid", orcid, author)
            continue
        if author is None:
            rejects.add("orcid", orcid, answers.NOT_FOUND, f"OpenAlex has no person with ORCID {orcid} (HTTP 404)")
            continue
        rejection = answers.check_openalex_author(author, asked_orcid=orcid, names=found_as.get(orcid, []))
        if rejection:
            rejects.rejection("orcid", orcid, rejection, author.openalex_id or None)
            continue
        authors.append(author)
    return authors, asked_authors


def _openalex_works_frame(works: Sequence[OpenAlexWork]) -> pl.DataFrame:
    rows = [
        {
            "openalex_id": w.openalex_id, "doi": w.doi, "arxiv_id": w.arxiv_id, "title": w.title,
            "title_key": match_key(w.title) or None, "publication_year": w.publication_year,
            "publication_date": w.publication_date, "type": w.type, "cited_by_count": w.cited_by_count,
            "counts_by_year": [{"year": y, "cited_by_count": c} for y, c in w.counts_by_year],
            "authors_count": len(w.authorships),
            "author_names": [n for a in w.authorships if (n := a.raw_author_name or a.display_name)],
            "is_authors_truncated": w.is_authors_truncated,
            "fetched_at": w.fetched_at, "matched_by": w.matched_by,
        }
        for w in works
    ]
    return pl.DataFrame(rows, schema=OPENALEX_WORKS_SCHEMA) if rows else empty(OPENALEX_WORKS_SCHEMA)


def _openalex_authors_frame(authors: Sequence[Any]) -> pl.DataFrame:
    rows = [
        {"openalex_id": a.openalex_id, "orcid": a.orcid, "display_name": a.display_name, "works_count": a.works_count,
         "cited_by_count": a.cited_by_count, "h_index": a.h_index, "i10_index": a.i10_index, "fetched_at": a.fetched_at}
        for a in authors
    ]
    return pl.DataFrame(rows, schema=OPENALEX_AUTHORS_SCHEMA) if rows else empty(OPENALEX_AUTHORS_SCHEMA)


def with_partition(frame: pl.DataFrame, day: date) -> pl.DataFrame:
    """The frame as rows of the partition ``day`` (``partition_date`` first)."""
    return frame.select(pl.lit(day, dtype=pl.Date).alias("partition_date"), pl.all())

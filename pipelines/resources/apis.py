"""The arXiv / OpenAlex enrichment as a resource: whether it runs, and the clients it runs with.

Enrichment talks to public APIs, so it runs only when we can say who we are: by default it is
enabled exactly when a contact address is available at run time (``SCHOLARHOUSE_CONTACT``, or
the variable ``config/profiles.toml`` names in ``crawler.contact_env``). The demo and the
tests have none, so their enrichment assets write empty slices and touch nothing — no network,
no cache file. ``enabled=True`` / ``False`` overrides the default.

Shared with the live crawl (``config/profiles.toml``, ``[crawler]``): the contact, the project
URL of the User-Agent, the HTTP settings (timeouts, retries, per-host floors) and the SQLite
cache (``cache_path``) that makes an interrupted run resume and a backfill not refetch. A missing
or unreadable config file falls back to the defaults. The profile list is not used here.

Pacing: arXiv one request per 3 s, OpenAlex ~6 per second (the clients' documented defaults).
``min_interval_s`` overrides both — but only for a base URL other than the public API, so a
test against 127.0.0.1 runs at full speed and production cannot be made impolite by accident.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg

from pipelines.ingest.api_lookups import EnrichmentLimits
from pipelines.resources.live import DEFAULT_CONFIG, identified_http, project_path
from pipelines.ingest.sources import arxiv as arxiv_mod
from pipelines.ingest.sources import openalex as openalex_mod
from pipelines.ingest.sources.arxiv import ArxivClient
from pipelines.ingest.sources.cache import SourceCache
from pipelines.settings import Settings
from pipelines.ingest.sources.crawler import CONTACT_ENV, CrawlConfigError, load_crawl_config
from pipelines.ingest.sources.http import ContactRequiredError, HttpSettings, PoliteHttp, validate_contact
from pipelines.ingest.sources.openalex import OpenAlexClient

ARXIV_MIN_INTERVAL_S = 3.0
OPENALEX_MIN_INTERVAL_S = 0.15


@dataclass(frozen=True)
class EnrichmentStatus:
    enabled: bool
    reason: str                     # shown in the assets' metadata
    contact: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass
class EnrichmentClients:
    http: PoliteHttp
    cache: SourceCache
    arxiv: ArxivClient
    openalex: OpenAlexClient


@dataclass(frozen=True)
class _Shared:
    """What the crawl config contributes (or the defaults)."""

    contact_env: str
    contact: str | None
    http: HttpSettings
    cache_path: Path
    warnings: tuple[str, ...] = ()


class EnrichmentResource(dg.ConfigurableResource):
    """arXiv and OpenAlex enrichment settings (see the module docstring)."""

    enabled: Optional[bool] = None
    config_path: Optional[str] = None
    mailto: Optional[str] = None
    arxiv_base_url: str = arxiv_mod.DEFAULT_BASE_URL
    openalex_base_url: str = openalex_mod.DEFAULT_BASE_URL
    cache_path: Optional[str] = None
    max_title_searches: int = 200
    max_author_lookups: int = 500
    daily_budget: int = 50_000
    title_search_retry_days: int = 30
    max_consecutive_failures: int = 3
    # Test knobs: pacing (ignored against the public APIs) and the HTTP retry schedule.
    min_interval_s: Optional[float] = None
    max_retries: Optional[int] = None
    backoff_base_s: Optional[float] = None

    # -- configuration, read at run time only
    def _shared(self) -> _Shared:
        path = project_path(self.config_path, DEFAULT_CONFIG)
        environ = os.environ  # the config may name its own contact variable (crawler.contact_env)
        settings = Settings.from_env(environ)
        warnings: list[str] = []
        if path.is_file():
            try:
                config = load_crawl_config(path, env=environ, default_cache_path=settings.source_cache)
                return _Shared(config.contact_env, config.contact, config.http, config.cache_path)
            except (CrawlConfigError, OSError, ValueError) as exc:
                warnings.append(f"{path}: {exc} — using the default HTTP settings")
        return _Shared(CONTACT_ENV, settings.contact, HttpSettings(contact=settings.contact, project_url=""),
                       settings.source_cache, tuple(warnings))

    def status(self) -> EnrichmentStatus:
        """Whether enrichment runs now, and why (never raises: a bad setting disables it, with the reason)."""
        if self.enabled is False:
            return EnrichmentStatus(False, "disabled — enrichment.enabled is false")
        shared = self._shared()
        contact = (self.mailto or "").strip() or shared.contact
        if not contact:
            if self.enabled:
                return EnrichmentStatus(False, f"disabled — enabled, but no contact address: set {shared.contact_env}",
                                        warnings=shared.warnings)
            return EnrichmentStatus(False, f"disabled — set {shared.contact_env} to enable", warnings=shared.warnings)
        try:
            contact = validate_contact(contact)
        except ContactRequiredError:
            return EnrichmentStatus(False, f"disabled — {shared.contact_env} is not a usable e-mail address",
                                    warnings=shared.warnings)
        return EnrichmentStatus(True, "enabled", contact, shared.warnings)

    def limits(self) -> EnrichmentLimits:
        return EnrichmentLimits(
            max_title_searches=self.max_title_searches, max_author_lookups=self.max_author_lookups,
            title_search_retry_days=self.title_search_retry_days, max_consecutive_failures=self.max_consecutive_failures,
        )

    def resolved_cache_path(self) -> Path:
        return project_path(self.cache_path, self.cache_path) if self.cache_path else self._shared().cache_path

    def _interval(self, base_url: str, public_url: str, documented: float) -> float:
        if self.min_interval_s is None:
            return documented
        if base_url.rstrip("/") == public_url.rstrip("/"):
            return max(documented, self.min_interval_s)  # never faster than the API asks
        return max(0.0, self.min_interval_s)

    def describe(self) -> str:
        return f"arXiv {self.arxiv_base_url}, OpenAlex {self.openalex_base_url}, cache {self.resolved_cache_path()}"

    @contextmanager
    def clients(self) -> Iterator[EnrichmentClients]:
        """One HTTP session and the two API clients over the shared cache. Requires ``status().enabled``."""
        status = self.status()
        if not status.enabled:
            raise RuntimeError(f"enrichment is {status.reason}")
        shared = self._shared()
        overrides: dict = {"contact": status.contact}
        if self.max_retries is not None:
            overrides["max_retries"] = self.max_retries
        if self.backoff_base_s is not None:
            overrides["backoff_base_s"] = self.backoff_base_s
        http = identified_http(shared.http.with_overrides(**overrides))
        cache = SourceCache.shared(self.resolved_cache_path())
        try:
            yield EnrichmentClients(
                http=http,
                cache=cache,
                arxiv=ArxivClient(
                    http, cache, base_url=self.arxiv_base_url,
                    min_interval_s=self._interval(self.arxiv_base_url, arxiv_mod.DEFAULT_BASE_URL, ARXIV_MIN_INTERVAL_S),
                ),
                openalex=OpenAlexClient(
                    http, cache, status.contact, self.daily_budget, base_url=self.openalex_base_url,
                    min_interval_s=self._interval(self.openalex_base_url, openalex_mod.DEFAULT_BASE_URL,
                                                  OPENALEX_MIN_INTERVAL_S),
                ),
            )
        finally:
            http.close()  # the cache is the process-wide shared instance: left open

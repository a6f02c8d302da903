"""The live page source as a resource, and the choice between it and the captures folder.

``LiveProfileSourceResource`` crawls the profile URLs listed in ``config/profiles.toml`` with
``pipelines.ingest.sources.crawler.LiveProfileSource`` (polite HTTP, robots.txt, change detection, a
resumable per-night fetch log). Everything is read when a run asks for captures — the config
file, the contact address (``SCHOLARHOUSE_CONTACT``, or the variable the config names), the
cache — never when the definitions load, so the long-lived code server touches neither files nor
the network.

``page_source_from_env()`` is what ``definitions.py`` calls: ``SCHOLARHOUSE_SOURCE=captures``
(default) or ``live``. The assets see a ``PageSourceResource`` either way and do not change.

Identification: requests carry ``scholarhouse/<version> (+<project_url>; mailto:<contact>)``.
The project URL comes from ``crawler.project_url``; while it is unset, a placeholder, or the
library's built-in default (which names no real page), it is left out of the User-Agent —
``scholarhouse/<version> (mailto:<contact>)`` — rather than pointing operators at a page that
does not exist. ``identified_http`` is the one place that decides; the enrichment resource uses it too.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Iterator, Mapping, Optional
from urllib.parse import urlsplit

import requests
from pydantic import PrivateAttr

from pipelines.resources.sources import CapturesFolderResource, PageSourceResource
from pipelines.ingest.sources import http as http_mod
from pipelines.ingest.sources.base import Capture
from pipelines.ingest.sources.cache import SourceCache
from pipelines.ingest.sources.crawler import CrawlConfig, LiveProfileSource, load_crawl_config
from pipelines.ingest.sources.http import Clock, HttpSettings, PoliteHttp
from pipelines.settings import Settings
from pipelines.warehouse import PROJECT_ROOT

SOURCE_ENV = "SCHOLARHOUSE_SOURCE"
DEFAULT_CONFIG = "config/profiles.toml"

# RFC 2606 / 6761 names reserved for examples: never a real project page.
_RESERVED_HOST = re.compile(r"(^|\.)(example\.(com|org|net)|example|invalid|test|localhost)$", re.IGNORECASE)


def project_path(path: str | os.PathLike[str] | None, default: str) -> Path:
    """``path`` (or ``default``); a relative path is relative to the project root, not the cwd."""
    resolved = Path(path or default).expanduser()
    return resolved if resolved.is_absolute() else PROJECT_ROOT / resolved


def project_url_is_set(url: str | None) -> bool:
    """Whether ``url`` is a real page describing this deployment (not empty, a placeholder, or the
    library's invented default)."""
    value = (url or "").strip()
    if not value or value == http_mod.DEFAULT_PROJECT_URL or any(c in value for c in "<>{} "):
        return False
    parts = urlsplit(value)
    host = (parts.hostname or "").lower()
    return parts.scheme in ("http", "https") and bool(host) and "." in host and not _RESERVED_HOST.search(host)


def user_agent(contact: str, project_url: str | None) -> str:
    """The User-Agent we send; the project URL only when it is really set."""
    if project_url_is_set(project_url):
        return http_mod.build_user_agent(contact, str(project_url).strip())
    return f"{http_mod.AGENT_TOKEN}/{http_mod.package_version()} (mailto:{http_mod.validate_contact(contact)})"


def identified_http(settings: HttpSettings, *, clock: Clock | None = None,
                    session: requests.Session | None = None) -> PoliteHttp:
    """A ``PoliteHttp`` whose User-Agent follows ``user_agent`` (see the module docstring)."""
    client = PoliteHttp(settings, clock=clock, session=session)
    client.user_agent = user_agent(client.contact, settings.project_url)
    client.session.headers["User-Agent"] = client.user_agent
    return client


class IdentifiedLiveProfileSource(LiveProfileSource):
    """``LiveProfileSource`` with our User-Agent rule (no invented project URL)."""

    def _new_http(self) -> PoliteHttp:
        assert self.settings is not None
        return identified_http(self.settings, clock=self.clock, session=self.session)


class LiveProfileSourceResource(PageSourceResource):
    """The live crawl of the profiles listed in ``config_path`` (see ``config/README.md``).

    ``contact`` overrides the address from the environment (tests); ``cache_path`` the SQLite
    cache from the config; ``refetch_transient`` re-tries tonight's timeouts and connection errors
    on a re-run instead of replaying them from the fetch log.
    """

    config_path: Optional[str] = None
    contact: Optional[str] = None
    cache_path: Optional[str] = None
    refetch_transient: bool = False

    _last_stats: dict = PrivateAttr(default_factory=dict)
    _last_profiles: Optional[int] = PrivateAttr(default=None)
    _cache_set_aside: Optional[str] = PrivateAttr(default=None)

    def resolved_config_path(self) -> Path:
        return project_path(self.config_path, DEFAULT_CONFIG)

    def load_config(self) -> CrawlConfig:
        """The crawl configuration, read now (run time); the contact comes from the environment, the
        default cache from the settings (beside the warehouse)."""
        environ = os.environ
        config = load_crawl_config(self.resolved_config_path(), env=environ,
                                   default_cache_path=Settings.from_env(environ).source_cache)
        if self.contact:
            config = replace(config, http=config.http.with_overrides(contact=self.contact))
        if self.cache_path:
            config = replace(config, cache_path=project_path(self.cache_path, self.cache_path))
        return config

    def build_source(self) -> IdentifiedLiveProfileSource:
        config = self.load_config()
        self._last_profiles = len(config.profiles)
        cache = SourceCache.shared(config.cache_path)
        self._cache_set_aside = cache.set_aside
        return IdentifiedLiveProfileSource.from_config(config, cache=cache, refetch_transient=self.refetch_transient)

    def iter_captures(self, partition_date: date) -> Iterator[Capture]:
        source = self.build_source()
        try:
            yield from source.iter_captures(partition_date)
        finally:
            self._last_stats = dict(source.stats)

    def describe(self) -> str:
        text = f"live crawl of {self.resolved_config_path()}"
        if self._last_profiles is not None:
            text += f" ({self._last_profiles} profiles)"
        if self._last_stats:
            text += ": " + ", ".join(f"{k} {v}" for k, v in sorted(self._last_stats.items()))
        if self._cache_set_aside:
            text += f"; the source cache could not be read: moved to {self._cache_set_aside}, a new one started"
        return text


def page_source_from_env(env: Mapping[str, str] | None = None) -> PageSourceResource:
    """``SCHOLARHOUSE_SOURCE`` = ``captures`` (default) | ``live``. Constructs the resource only:
    nothing is read or fetched until a run asks for captures. An unknown value is refused at load,
    so a typo cannot silently crawl (or silently not crawl)."""
    choice = Settings.one_from_env("source", env)  # a SettingsError (a ValueError) names the variable
    if choice == "live":
        return LiveProfileSourceResource()
    return CapturesFolderResource()

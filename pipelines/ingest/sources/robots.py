"""robots.txt for the live crawler: fetched once per host per run, then obeyed.

Policy (RFC 9309, "Robots Exclusion Protocol"):

- 2xx: the file is parsed (``urllib.robotparser``) and its rules apply to our user-agent token.
- 4xx (404, 410, 401, 403, ...): "unavailable" — the site has no rules for us, everything is allowed.
- 5xx, 429, a timeout or a refused connection: "unreachable" — the whole host is treated as
  disallowed for this run. A server that cannot serve its robots.txt is not a server to crawl.
- A redirect chain that loops or runs past the redirect limit: "unavailable" (allow), as the RFC permits.
- Only the first ``robots_max_bytes`` bytes are parsed (the RFC asks for at least 500 KiB).

``urllib.robotparser`` groups the file by user-agent and reads ``Crawl-delay`` / ``Request-rate``
(a decimal Crawl-delay such as ``10.5``, which it drops, is read here), but it matches rules first-come and without wildcards. Rules are therefore evaluated here the way
RFC 9309 says: the longest matching path pattern wins, ``Allow`` wins a tie, ``*`` matches any run
of characters and a trailing ``$`` anchors the end.

No network code lives here: the owner (``PoliteHttp``) passes in a function that fetches a URL.
"""

from __future__ import annotations

import math
import re
import urllib.robotparser
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote, urlsplit

ALLOW_ALL = "allow_all"
DISALLOW_ALL = "disallow_all"
RULES = "rules"


@dataclass(frozen=True)
class RobotsRules:
    """What one host's robots.txt told us, for one run."""

    state: str                        # ALLOW_ALL | DISALLOW_ALL | RULES
    reason: str                       # why this state (shown in reject details)
    parser: urllib.robotparser.RobotFileParser | None = None
    crawl_delay_s: float | None = None  # Crawl-delay, or the interval implied by Request-rate
    # When robots.txt could not be fetched at all ('timeout' / 'connection_error'), that error: the
    # host is skipped, and the caller can report the real cause rather than "disallowed".
    fetch_error: str | None = None

    def allows(self, url: str, agent_token: str) -> bool:
        if self.state == ALLOW_ALL:
            return True
        if self.state == DISALLOW_ALL or self.parser is None:
            return False
        return _rfc_allows(self.parser, url, agent_token)


@dataclass(frozen=True)
class RobotsDecision:
    allowed: bool
    detail: str
    crawl_delay_s: float | None = None
    fetch_error: str | None = None    # see RobotsRules.fetch_error


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + ("$" if anchored else ""))


def _entry_for(parser: urllib.robotparser.RobotFileParser, agent_token: str):
    for entry in parser.entries:
        if entry.applies_to(agent_token):
            return entry
    return parser.default_entry


def _rfc_allows(parser: urllib.robotparser.RobotFileParser, url: str, agent_token: str) -> bool:
    entry = _entry_for(parser, agent_token)
    if entry is None:
        return True
    parts = urlsplit(url)
    target = unquote(parts.path or "/") + (("?" + unquote(parts.query)) if parts.query else "")
    best_len = -1
    best_allow = True
    for rule in entry.rulelines:
        # robotparser stores paths percent-quoted ('*' -> '%2A'); undo that to see the pattern.
        pattern = unquote(rule.path)
        if pattern == "":
            # "Disallow:" with no path allows everything; it matches nothing.
            continue
        if not pattern.startswith("/") and not pattern.startswith("*"):
            pattern = "/" + pattern
        if _pattern_regex(pattern).match(target) is None:
            continue
        length = len(pattern)
        if length > best_len or (length == best_len and rule.allowance):
            best_len = length
            best_allow = bool(rule.allowance)
    return best_allow


def _crawl_delay(lines: list[str], agent_token: str) -> float | None:
    """The Crawl-delay of the group that applies to us, decimals included; None if none or not a
    finite, non-negative number.

    urllib.robotparser keeps only integer values (``10.5`` is dropped), so each Crawl-delay value is
    swapped for its line number and the file parsed again: robotparser still picks the group.
    """
    values: dict[int, str] = {}
    numbered = []
    for i, line in enumerate(lines):
        key, sep, value = line.split("#", 1)[0].partition(":")  # as robotparser splits a line
        if sep and key.strip().lower() == "crawl-delay":
            values[i] = value.strip()
            line = f"Crawl-delay: {i}"
        numbered.append(line)
    if not values:
        return None
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(numbered)
    index = parser.crawl_delay(agent_token)
    try:
        delay = float(values[index]) if index is not None else None
    except ValueError:
        return None
    return delay if delay is not None and math.isfinite(delay) and delay >= 0 else None


def rules_from_response(
    status: int | None, body: bytes, error: str | None, agent_token: str, error_detail: str | None = None
) -> RobotsRules:
    """Turn the outcome of fetching ``/robots.txt`` into rules (see the module docstring)."""
    if error in ("redirect_loop",):
        return RobotsRules(ALLOW_ALL, f"robots.txt unavailable ({error_detail or error}); all allowed")
    if status is None or error in ("timeout", "connection_error", "truncated"):
        return RobotsRules(
            DISALLOW_ALL, f"robots.txt unreachable ({error_detail or error or 'no response'}); host skipped",
            fetch_error=error if error in ("timeout", "connection_error") else None,
        )
    if status == 429 or status >= 500:
        return RobotsRules(DISALLOW_ALL, f"robots.txt answered HTTP {status}; host skipped for this run")
    if 400 <= status < 500:
        return RobotsRules(ALLOW_ALL, f"robots.txt HTTP {status}: no rules; all allowed")
    if not (200 <= status < 300):
        return RobotsRules(ALLOW_ALL, f"robots.txt HTTP {status}: treated as unavailable; all allowed")
    lines = body.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(lines)
    delay = _crawl_delay(lines, agent_token)
    rate = parser.request_rate(agent_token)
    if rate is not None and rate.requests > 0:
        implied = rate.seconds / rate.requests
        delay = implied if delay is None else max(delay, implied)
    return RobotsRules(RULES, "robots.txt rules", parser=parser, crawl_delay_s=delay)


class RobotsCache:
    """robots.txt per host (scheme + netloc), fetched at most once for the life of this object.

    ``fetch_robots(url) -> (status, body, error, error_detail)`` does the actual request.
    """

    def __init__(
        self,
        fetch_robots: Callable[[str], tuple[int | None, bytes, str | None, str | None]],
        agent_token: str,
        *,
        max_crawl_delay_s: float | None = None,
    ) -> None:
        self._fetch = fetch_robots
        self.agent_token = agent_token
        self.max_crawl_delay_s = max_crawl_delay_s
        self._rules: dict[str, RobotsRules] = {}

    @staticmethod
    def origin(url: str) -> str:
        parts = urlsplit(url)
        return f"{parts.scheme.lower()}://{parts.netloc.lower()}"

    def rules_for(self, url: str) -> RobotsRules:
        origin = self.origin(url)
        rules = self._rules.get(origin)
        if rules is None:
            status, body, error, detail = self._fetch(origin + "/robots.txt")
            rules = rules_from_response(status, body, error, self.agent_token, detail)
            if (
                rules.state == RULES
                and self.max_crawl_delay_s is not None
                and rules.crawl_delay_s is not None
                and rules.crawl_delay_s > self.max_crawl_delay_s
            ):
                # Honouring a very long delay would stall the night; not crawling at all is the
                # polite alternative.
                rules = RobotsRules(
                    DISALLOW_ALL,
                    f"robots.txt Crawl-delay {rules.crawl_delay_s:g} s exceeds our max "
                    f"{self.max_crawl_delay_s:g} s; host skipped",
                    crawl_delay_s=rules.crawl_delay_s,
                )
            self._rules[origin] = rules
        return rules

    def check(self, url: str) -> RobotsDecision:
        rules = self.rules_for(url)
        if rules.allows(url, self.agent_token):
            return RobotsDecision(True, rules.reason, rules.crawl_delay_s)
        if rules.state == RULES:
            detail = f"disallowed by {self.origin(url)}/robots.txt for user-agent {self.agent_token!r}"
        else:
            detail = rules.reason
        return RobotsDecision(False, detail, rules.crawl_delay_s, rules.fetch_error)

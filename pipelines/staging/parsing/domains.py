"""The staging contract's value domains, enforced on every parsed row before it is stored.

A page is the world's data: a count of 10^30, "Novelty 500%", a year 0999 or an arXiv ``v0`` is
what the page says, and none of it may fail the night — neither by crashing the insert (a 2^31
count does not fit ``INTEGER``) nor by tripping a blocking gate downstream (``novelty_pct`` must be
0–100, ``year`` at least 1000, ``arxiv_version`` at least 1). So every value is checked here
against the domain its column promises:

- outside a domain a gate guards (or the column's type): the value is set to NULL and an issue
  ``value_out_of_range`` keeps the raw text (action ``nulled``);
- outside the 0–100 scale of the site scores, which are only a warning: kept, with an issue
  (action ``kept``) — the number is the site's claim;
- an item dated after the capture (the site's claim, a warning): kept, with ``date_after_capture``.

The checks cover every numeric field of ``PROFILE_KEYS`` / ``LISTING_KEYS``, so a new parser or a
new field is covered as soon as it is listed here; ``pipelines.staging.build`` still isolates any page
whose rows do not fit the tables, as a last resort. No Dagster imports.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

from pipelines.staging.parsing.result import make_issue

INT32_MAX = 2**31 - 1

# Non-negative counts as the sites print them (INTEGER columns; gates: >= 0).
PROFILE_COUNTS = (
    "trust_score", "declared_works", "followers", "topics", "close_collaborators", "h_index",
    "declared_papers", "citations", "declared_items",
)
# (low, high, blocking): a blocking domain nulls the value, a warning one keeps it.
PROFILE_RANGES = {"novelty_pct": (0.0, 100.0, True), "ai_score": (0.0, 100.0, False)}
LISTING_RANGES = {"listing_score": (0.0, 100.0, False)}
YEAR_MIN, YEAR_MAX = 1000, 9999
_DATE_FIELDS = ("year", "pub_date", "date_precision")


def _count_problem(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return f"is not a whole number ({type(value).__name__})"
    if value < 0:
        return "is negative"
    if value > INT32_MAX:
        return f"does not fit the INTEGER column (at most {INT32_MAX:,})"
    return None


def check_profile(profile: dict) -> list[dict]:
    """Null (or flag) the profile's values outside their domain; returns the issues."""
    issues = []
    for key in PROFILE_COUNTS:
        value = profile.get(key)
        problem = _count_problem(value)
        if problem:
            issues.append(make_issue("value_out_of_range", key, "nulled", value, f"{key} {value} {problem}: stored as NULL"))
            profile[key] = None
    for key, (low, high, blocking) in PROFILE_RANGES.items():
        issue = _check_range(profile, key, low, high, blocking)
        if issue:
            issues.append(issue)
    return issues


def check_listing(listing: dict, captured: date) -> list[dict]:
    """Null (or flag) the listing's values outside their domain; returns the issues."""
    issues = []
    position = listing.get("position")
    year = listing.get("year")
    if year is not None and not (YEAR_MIN <= year <= YEAR_MAX):
        issues.append(make_issue("value_out_of_range", "year", "nulled", listing.get("date_raw") or year,
                                 f"year {year} is not a four-digit year: the date is stored as NULL", position))
        for key in _DATE_FIELDS:
            listing[key] = None
        listing["year_inferred"] = False
    version = listing.get("arxiv_version")
    if version is not None and not (1 <= version <= INT32_MAX):
        issues.append(make_issue("value_out_of_range", "arxiv_version", "nulled", version,
                                 f"arXiv version {version} does not exist (versions start at v1): stored as NULL",
                                 position))
        listing["arxiv_version"] = None
    for key, (low, high, blocking) in LISTING_RANGES.items():
        issue = _check_range(listing, key, low, high, blocking, position)
        if issue:
            issues.append(issue)
    # The staging.listings warning "dated_after_capture", with the same one day of slack for time zones.
    latest = captured + timedelta(days=1)
    pub_date, year = listing.get("pub_date"), listing.get("year")
    if not listing.get("year_inferred") and ((pub_date is not None and pub_date > latest)
                                             or (year is not None and year > latest.year)):
        issues.append(make_issue("date_after_capture", "pub_date" if pub_date else "year", "kept",
                                 listing.get("date_raw"), f"dated after the page was captured ({captured}): "
                                 "kept as the site shows it", position))
    return issues


def _check_range(row: dict, key: str, low: float, high: float, blocking: bool, position: int | None = None):
    value = row.get(key)
    if value is None:
        return None
    if not math.isfinite(value):
        row[key] = None
        return make_issue("value_out_of_range", key, "nulled", value, f"{key} is not a finite number: stored as NULL",
                          position)
    if low <= value <= high:
        return None
    if blocking:
        row[key] = None
        return make_issue("value_out_of_range", key, "nulled", value,
                          f"{key} {value:g} is outside {low:g}–{high:g}: stored as NULL", position)
    return make_issue("value_out_of_range", key, "kept", value,
                      f"{key} {value:g} is outside the site's {low:g}–{high:g} scale: kept as reported", position)

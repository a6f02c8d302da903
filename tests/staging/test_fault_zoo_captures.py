"""The input zoo: bad capture files and failed fetches, through the real assets.

**A captures folder** holds the five bundled sample pages beside one file (or entry) per class of
bad input a real folder contains. One nightly run (``nightly_refresh``, in process, module
fixture) reads it; then every class is one row of ``ZOO`` and one parametrised test that checks
the exact trace its file must leave, found by its file name: the fetch's ``raw.page_captures``
row (``fetch_reject``), its ``staging.rejects`` rows (reason, stage, a fragment of the detail),
its ``staging.quality_issues`` rows (reason, field, action, raw value), and whether its profile
landed. Around the table: the good pages' rows land unchanged, the night succeeds with no step
failed or retried, the WARN checks count what the rows say, and nothing outside the folder is
read or published. A new class is one more row.

**A live crawl** against a server on 127.0.0.1 (``tests/httpserver.py``) answers one URL per
HTTP fault; several fail with the same (empty) body. Every fetch must keep its own raw row and
its own reject row (``LIVE``, one row per fault).

Never the network; no timed assertions. The night is run once per part (about 20 s in all).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable

import dagster as dg
import duckdb
import pytest

from tests.conftest import SAMPLE_DATE, SAMPLES

try:
    from tests.httpserver import LocalHttpServer, Reply
except ImportError:  # tests/ not importable as a package in this layout
    from httpserver import LocalHttpServer, Reply

DAY = date.fromisoformat(SAMPLE_DATE)
MIDNIGHT = datetime(DAY.year, DAY.month, DAY.day, tzinfo=timezone.utc)
MAX_FILE_BYTES = 1_500_000
SF_TEXT = (SAMPLES / "002_9c9c8f84cf558702.txt").read_text(encoding="utf-8")
SF_HTML = (Path(__file__).parents[1] / "fixtures" / "html" / "scholarfeed_002_yucheng_ding.html").read_text(encoding="utf-8")
GOOD = {  # the bundled samples: file -> (profile name, listings)
    "000_c5cc6f46b58abda9.txt": ("Daning Cheng", 5), "001_05f49289928d0f65.txt": ("Yunquan Zhang", 9),
    "002_9c9c8f84cf558702.txt": ("Yucheng Ding", 15), "003_5373d79505ae5ddf.txt": ("Yunquan Zhang", 16),
    "004_34c8893c0fa5ecd2.txt": ("Jialiang Cheng", 3),
}
SECRET = "root:x:0:0"  # the first bytes of /etc/passwd: must never reach the warehouse


# =============================================================================== building the files

def scholarfeed(name: str, *edits: tuple[str, str]) -> str:
    """Sample 002 (Scholar Feed) under another profile name, with (old, new) text edits."""
    text = name + SF_TEXT[len("Yucheng Ding"):]
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def write(name: str, content: str | bytes, sidecar: object = None) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / name).write_bytes(data)
        if sidecar is not None:
            text = sidecar if isinstance(sidecar, str) else json.dumps(sidecar)
            (folder / f"{name}.meta.json").write_text(text, encoding="utf-8")
    return build


def symlink(name: str, target: str | Path) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        (folder / name).symlink_to(target if str(target).startswith("/") else folder / target)
    return build


def repeated_block(times: int) -> str:
    """The page's header, then one item block repeated (a page stuck in a render loop)."""
    start, end = SF_TEXT.index("IROct 21, 2022"), SF_TEXT.index("DCDec 15, 2025Code")
    return "Zoo Repeated" + SF_TEXT[len("Yucheng Ding"):start] + (SF_TEXT[start:end].strip() + "\n\n") * times


BYLINE_500 = ", ".join(f"Aname{chr(65 + i % 26)}{chr(97 + i // 26 % 26)} Bname{chr(65 + i // 26 % 26)}" for i in range(500))


def nested(folder: Path) -> None:
    (folder / "older-nights").mkdir()
    (folder / "older-nights" / "page.txt").write_text(scholarfeed("Zoo Nested"))


def fifo(folder: Path) -> None:
    os.mkfifo(folder / "pipe.txt")


def unix_socket(folder: Path) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "sock.txt"))
    sock.close()


def name_not_utf8(folder: Path) -> None:
    fd = os.open(os.fsencode(folder) + b"/caf\xe9-latin1-name.txt", os.O_CREAT | os.O_WRONLY)
    os.write(fd, scholarfeed("Zoo Latinname").encode())
    os.close(fd)


def sidecar_link(folder: Path) -> None:
    (folder / "sidecar-link.txt").write_text(scholarfeed("Zoo Sidecarlink"))
    (folder / "sidecar-link.txt.meta.json").symlink_to("/etc/passwd")


def same_url(folder: Path) -> None:
    meta = json.dumps({"url": "https://www.scholarfeed.org/author/777001", "captured_at": "2026-11-21T09:00:00Z"})
    (folder / "same-url-a.txt").write_text(scholarfeed("Zoo Sameurl"))
    (folder / "same-url-a.txt.meta.json").write_text(meta)
    (folder / "same-url-b.txt").write_text(scholarfeed("Zoo Sameurl", ("108citations", "109citations")))
    (folder / "same-url-b.txt.meta.json").write_text(meta)


# =============================================================================== the zoo

@dataclass(frozen=True)
class Case:
    id: str
    file: str                                # the entry's name in the folder (its source_file)
    build: Callable[[Path], None]
    profile: str | None = None               # the profile name that must land, None: no profile
    fetch_reject: str | None = None          # raw.page_captures.fetch_reject
    rejects: tuple[tuple[str, str, str], ...] = ()       # page-level: (reason, stage, detail fragment)
    item_rejects: tuple[tuple[str, int], ...] = ()       # (reason, how many)
    issues: tuple[tuple[str, str | None, str, str | None], ...] = ()  # (reason, field, action, raw value)
    check: Callable[[duckdb.DuckDBPyConnection, str], None] | None = None  # more, given the fetch_id


def _one(con, sql: str, *params):
    rows = con.execute(sql, list(params)).fetchall()
    assert len(rows) == 1, rows
    return rows[0]


def _huge_count(con, fid):
    assert _one(con, "SELECT h_index, citations FROM staging.profiles WHERE fetch_id = ?", fid) == (None, 108)


def _novelty(con, fid):
    assert _one(con, "SELECT novelty_pct, h_index FROM staging.profiles WHERE fetch_id = ?", fid) == (None, 39)


def _listing(position: int, expected: tuple, columns: str):
    def check(con, fid):
        row = _one(con, f"SELECT {columns} FROM staging.listings l JOIN staging.profiles p USING (partition_date, capture_id) "
                        "WHERE p.fetch_id = ? AND l.position = ?", fid, position)
        assert row == expected
    return check


def _byline(con, fid):
    authors, abstract = _one(con, "SELECT l.byline_authors, l.abstract FROM staging.listings l JOIN staging.profiles p "
                                  "USING (partition_date, capture_id) WHERE p.fetch_id = ? AND l.position = 1", fid)
    assert len(authors) == 500 and authors[0] == "AnameAa Bname" + "A"
    assert abstract.startswith("Many large vision models")


# Item 3's byline (printed once on the page) with affiliations in brackets, which no byline reads.
UNREAD_BYLINE = ("Lei Qu, Lianhai Ren, Peng Cheng et al.", "Lei Qu (MSRA), Lianhai Ren (Tsinghua), Peng Cheng et al.")


def _unread_byline(con, fid):
    authors, abstract = _one(con, "SELECT l.byline_authors, l.abstract FROM staging.listings l JOIN staging.profiles p "
                                  "USING (partition_date, capture_id) WHERE p.fetch_id = ? AND l.position = 3", fid)
    assert authors == [] and abstract.startswith(UNREAD_BYLINE[1] + "\nAn increasing variety")


def _listed(n: int):
    def check(con, fid):
        assert _one(con, "SELECT listed_items FROM staging.profiles WHERE fetch_id = ?", fid) == (n,)
    return check


def _bytes_kept(encoding: str):
    def check(con, fid):
        enc, kept = _one(con, "SELECT encoding, body_bytes IS NOT NULL FROM raw.page_captures WHERE fetch_id = ?", fid)
        assert (enc, kept) == (encoding, True)
    return check


def _empty_body(con, fid):
    assert _one(con, "SELECT byte_size, body, body_bytes FROM raw.page_captures WHERE fetch_id = ?", fid) == (0, "", None)


def _captured_at_default(con, fid):
    assert _one(con, "SELECT captured_at FROM raw.page_captures WHERE fetch_id = ?", fid) == (MIDNIGHT,)


def _oversize(con, fid):
    assert _one(con, "SELECT byte_size FROM raw.page_captures WHERE fetch_id = ?", fid) == (MAX_FILE_BYTES,)


ZOO = [
    # --- one page must never fail the night
    Case("count over 2^31", "huge-count.txt", write("huge-count.txt", scholarfeed("Zoo Hugecount", ("h-index39", "h-index" + "1" + "0" * 30))),
         profile="Zoo Hugecount", issues=(("value_out_of_range", "h_index", "nulled", "1" + "0" * 30),), check=_huge_count),
    Case("percentage a gate forbids", "novelty.txt", write("novelty.txt", scholarfeed("Zoo Novelty", ("Novelty53%", "Novelty500%"))),
         profile="Zoo Novelty", issues=(("value_out_of_range", "novelty_pct", "nulled", "500.0"),), check=_novelty),
    Case("year a gate forbids", "old-year.txt", write("old-year.txt", scholarfeed("Zoo Oldyear", ("LGMar 18, 2023", "LGMar 18, 0999"))),
         profile="Zoo Oldyear", issues=(("value_out_of_range", "year", "nulled", "Mar 18, 0999"),),
         check=_listing(1, (None, None, None, "Mar 18, 0999"), "l.year, l.pub_date, l.date_precision, l.date_raw")),
    Case("unreadable file", "unreadable.txt", write("unreadable.txt", scholarfeed("Zoo Unreadable")),
         fetch_reject="unreadable", rejects=(("unreadable", "fetch", "Permission denied (EACCES)"),), check=_empty_body),
    # --- what should never be read
    Case("symlink leaving the folder", "passwd.txt", symlink("passwd.txt", "/etc/passwd"), fetch_reject="outside_root",
         rejects=(("outside_root", "fetch", "a link to /etc/passwd, outside the captures folder: not read"),), check=_empty_body),
    Case("sidecar linking out of the folder", "sidecar-link.txt", sidecar_link, profile="Zoo Sidecarlink",
         issues=(("bad_sidecar", None, "repaired", None),), check=_captured_at_default),
    # --- not silently skipped
    Case("directory", "older-nights", nested, fetch_reject="not_a_file",
         rejects=(("not_a_file", "fetch", "a directory holding 1 entries: folders inside the captures folder are not read"),)),
    Case("FIFO", "pipe.txt", fifo, fetch_reject="not_a_file", rejects=(("not_a_file", "fetch", "a FIFO (named pipe): not read"),)),
    Case("socket", "sock.txt", unix_socket, fetch_reject="not_a_file", rejects=(("not_a_file", "fetch", "a socket: not read"),)),
    Case("broken symlink", "broken-link.txt", symlink("broken-link.txt", "no-such-page.txt"), fetch_reject="unreadable",
         rejects=(("unreadable", "fetch", "no-such-page.txt, which does not exist"),)),
    Case("file over the size limit", "huge.txt", write("huge.txt", scholarfeed("Zoo Huge") + "x" * MAX_FILE_BYTES),
         fetch_reject="oversize", rejects=(("oversize", "fetch", f"its first {MAX_FILE_BYTES:,} bytes are kept"),), check=_oversize),
    # --- not silently repaired
    Case("sidecar not JSON", "bad-sidecar.txt", write("bad-sidecar.txt", scholarfeed("Zoo Badsidecar"), "{not json"),
         profile="Zoo Badsidecar", issues=(("bad_sidecar", None, "repaired", "{not json"),), check=_captured_at_default),
    Case("sidecar from the future", "future.txt", write("future.txt", scholarfeed("Zoo Future"), {"captured_at": "2999-01-01T00:00:00Z"}),
         profile="Zoo Future", issues=(("implausible_capture_time", "captured_at", "repaired", "2999-01-01T00:00:00Z"),),
         check=_captured_at_default),
    Case("sidecar with weird values", "weird-sidecar.txt",
         write("weird-sidecar.txt", scholarfeed("Zoo Weirdsidecar"), {"url": 42, "captured_at": "31/02/2026", "capturedAt": "x"}),
         profile="Zoo Weirdsidecar", issues=(("bad_sidecar_value", "url", "repaired", "42"),
                                             ("bad_sidecar_value", "captured_at", "repaired", "31/02/2026"),
                                             ("bad_sidecar_value", "capturedAt", "nulled", "x")), check=_captured_at_default),
    Case("one listing repeated", "repeated.txt", write("repeated.txt", repeated_block(300)), profile="Zoo Repeated",
         item_rejects=(("duplicate_item", 299),), check=_listed(2)),
    Case("500-name byline", "long-byline.txt",
         write("long-byline.txt", scholarfeed("Zoo Longbyline", ("Yucheng Ding, Chaoyue Niu, Fan Wu et al.\n\nMany", BYLINE_500 + "\n\nMany")) ),
         profile="Zoo Longbyline", check=_byline),
    Case("byline of names it cannot read", "unread-byline.txt",
         write("unread-byline.txt", scholarfeed("Zoo Unreadbyline", (UNREAD_BYLINE[0], UNREAD_BYLINE[1]))),
         profile="Zoo Unreadbyline", issues=(("unreadable_byline", "byline_authors", "kept", UNREAD_BYLINE[1]),),
         check=_unread_byline),
    Case("impossible day", "feb30.txt", write("feb30.txt", scholarfeed("Zoo Febthirty", ("LGMar 18, 2023", "LGFeb 30, 2023"))),
         profile="Zoo Febthirty", issues=(("impossible_date", "pub_date", "repaired", "Feb 30, 2023"),),
         check=_listing(1, (2023, date(2023, 2, 1), "month"), "l.year, l.pub_date, l.date_precision")),
    Case("negative count", "negative.txt", write("negative.txt", scholarfeed("Zoo Negative", ("108citations", "-5citations"))),
         profile="Zoo Negative", issues=(("unreadable_value", "citations", "nulled", "-5citations"),)),
    Case("invalid UTF-8", "latin1.txt", write("latin1.txt", scholarfeed("Zoé Latinone").encode("cp1252", "replace")),
         profile="Zoé Latinone", issues=(("encoding_guessed", "body", "kept", "cp1252"),), check=_bytes_kept("cp1252")),
    Case("NUL padding", "nul-padded.txt", write("nul-padded.txt", scholarfeed("Zoo Nulpadded").encode() + b"\x00" * 4096),
         profile="Zoo Nulpadded", issues=(("nul_padding", "body", "repaired", "utf-8"),), check=_bytes_kept("utf-8")),
    Case("HTML saved as .txt", "page-source.txt", write("page-source.txt", SF_HTML.replace("Yucheng Ding", "Zoo Pagesource")),
         profile="Zoo Pagesource", issues=(("content_type_mismatch", "content_type", "repaired", "text/plain"),)),
    Case("text saved as .html", "visible-text.html", write("visible-text.html", scholarfeed("Zoo Visibletext")),
         profile="Zoo Visibletext", issues=(("content_type_mismatch", "content_type", "repaired", "text/html"),)),
    Case("file name not UTF-8", "caf\\xe9-latin1-name.txt", name_not_utf8, profile="Zoo Latinname",
         issues=(("file_name_not_utf8", "source_file", "repaired", "caf\\xe9-latin1-name.txt"),)),
    Case("more items than declared", "overlisted.txt", write("overlisted.txt", scholarfeed("Zoo Overlisted", ("15 Papers", "2 Papers"))),
         profile="Zoo Overlisted", check=_listed(15)),
    # --- classes that were already handled: the trace they leave, pinned
    Case("zero bytes", "zero.txt", write("zero.txt", b""), rejects=(("empty", "parse", "empty or whitespace only"),)),
    Case("zero bytes again", "zero-again.txt", write("zero-again.txt", b""), rejects=(("empty", "parse", "empty or whitespace only"),)),
    Case("binary", "scan.pdf", write("scan.pdf", bytes(range(256)) * 64), rejects=(("not_text", "parse", "16384 bytes that do not decode"),)),
    Case("NUL bytes inside", "nul.txt", write("nul.txt", scholarfeed("Zoo Nul").encode()[:3000] + b"\x00" + scholarfeed("Zoo Nul").encode()[3000:]),
         rejects=(("not_text", "parse", "a NUL byte at offset 3,000"),)),
    Case("UTF-8 BOM", "bom.txt", write("bom.txt", b"\xef\xbb\xbf" + scholarfeed("Zoo Bom").encode()), profile="Zoo Bom",
         check=_bytes_kept("utf-8-sig")),
    Case("UTF-16", "utf16.txt", write("utf16.txt", scholarfeed("Zoo Utfsixteen").encode("utf-16")), profile="Zoo Utfsixteen",
         check=_listed(15)),
    Case("CRLF line ends", "crlf.txt", write("crlf.txt", scholarfeed("Zoo Crlf").replace("\n", "\r\n")), profile="Zoo Crlf",
         check=_listed(15)),
    Case("truncated HTML", "cut.html", write("cut.html", SF_HTML.replace("Yucheng Ding", "Zoo Cut")[:12000]), profile="Zoo Cut",
         item_rejects=(("truncated_item", 1),), check=_listed(4)),
    Case("another site's page", "blog.txt", write("blog.txt", "Welcome to my cooking blog\n\nPasta recipes\n\nBake at 200C."),
         rejects=(("unknown_site", "parse", "neither BZPEER nor Scholar Feed"),)),
    Case("bot challenge", "challenge.html", write("challenge.html", "<html><head><title>Just a moment...</title></head><body>"
                                                  "<p>Please verify you are human.</p></body></html>"),
         rejects=(("bot_challenge", "parse", "Please verify you are human"),)),
    Case("byte copy of a good page", "copy-of-001.txt", write("copy-of-001.txt", (SAMPLES / "001_05f49289928d0f65.txt").read_bytes()),
         rejects=(("duplicate_body", "parse", "the same bytes as 001_05f49289928d0f65.txt, staged there once"),)),
    Case("symlink to a good page", "link-to-004.txt", symlink("link-to-004.txt", "004_34c8893c0fa5ecd2.txt"),
         rejects=(("duplicate_body", "parse", "the same bytes as 004_34c8893c0fa5ecd2.txt, staged there once"),)),
    Case("two files, one url (a)", "same-url-a.txt", same_url, profile="Zoo Sameurl"),
    Case("two files, one url (b)", "same-url-b.txt", lambda folder: None, profile="Zoo Sameurl"),
]
NOT_PAGES = {".DS_Store": b"\x00\x01", ".page.txt.swp": b"x", "orphan.txt.meta.json": b"{}"}


@pytest.fixture(scope="module")
def zoo_night(tmp_path_factory):
    """The folder, one nightly run over it, and a read-only connection to the warehouse."""
    from pipelines.definitions import defs
    from pipelines.resources import CapturesFolderResource, WarehouseResource
    from pipelines.ingest.sources import folder as folder_module

    root = tmp_path_factory.mktemp("zoo")
    captures = root / "captures"
    shutil.copytree(SAMPLES, captures)
    for case in ZOO:
        case.build(captures)
    for name, data in NOT_PAGES.items():
        (captures / name).write_bytes(data)
    locked = captures / "unreadable.txt"
    locked.chmod(0)  # enough for a normal user; root reads anything, so the open is refused below too
    real_open = os.open

    def refusing_open(path, flags, *args, **kwargs):
        if os.fsdecode(path) == str(locked):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    warehouse_path = root / "warehouse" / "scholarhouse.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        for var in ("SCHOLARHOUSE_CONTACT", "SCHOLARHOUSE_SOURCE", "SCHOLARHOUSE_CAPTURES"):
            mp.delenv(var, raising=False)
        mp.setenv("SCHOLARHOUSE_OVERRIDES", str(root / "no-overrides.toml"))
        mp.setattr(folder_module.os, "open", refusing_open)
        result = defs.resolve_job_def("nightly_refresh").execute_in_process(
            partition_key=SAMPLE_DATE, instance=dg.DagsterInstance.ephemeral(), raise_on_error=False,
            resources={"page_source": CapturesFolderResource(path=str(captures), max_file_bytes=MAX_FILE_BYTES),
                       "warehouse_db": WarehouseResource(path=str(warehouse_path))},
        )
    locked.chmod(0o644)
    con = duckdb.connect(str(warehouse_path), read_only=True)
    yield result, con, warehouse_path
    con.close()


def _fetch(con, source_file: str) -> str:
    (fid,) = _one(con, "SELECT fetch_id FROM raw.page_captures WHERE source_file = ?", source_file)
    return fid


@pytest.mark.parametrize("case", ZOO, ids=[c.id for c in ZOO])
def test_each_bad_file_leaves_its_trace(zoo_night, case: Case):
    _, con, _ = zoo_night
    fid = _fetch(con, case.file)
    assert _one(con, "SELECT fetch_reject FROM raw.page_captures WHERE fetch_id = ?", fid) == (case.fetch_reject,)
    page_rejects = con.execute("SELECT reason, stage, detail FROM staging.rejects WHERE fetch_id = ? AND position IS NULL "
                               "ORDER BY reason", [fid]).fetchall()
    assert [(r, s) for r, s, _ in page_rejects] == [(r, s) for r, s, _ in case.rejects]
    for (_, _, detail), (_, _, fragment) in zip(page_rejects, case.rejects):
        assert fragment in detail, (detail, fragment)
    item_rejects = con.execute("SELECT reason, count(*) FROM staging.rejects WHERE fetch_id = ? AND position IS NOT NULL "
                               "GROUP BY 1 ORDER BY 1", [fid]).fetchall()
    assert item_rejects == list(case.item_rejects)
    issues = con.execute("SELECT reason, field, action, raw_value FROM staging.quality_issues WHERE fetch_id = ? "
                         "ORDER BY reason, field", [fid]).fetchall()
    assert issues == sorted(case.issues, key=lambda i: (i[0], i[1] or ""))
    profiles = con.execute("SELECT name FROM staging.profiles WHERE fetch_id = ?", [fid]).fetchall()
    assert profiles == ([(case.profile,)] if case.profile else [])
    if case.check:
        case.check(con, fid)


def test_the_night_succeeds_and_the_good_pages_land_as_alone(zoo_night, demo_warehouse):
    result, con, _ = zoo_night
    assert result.success
    failed = [e.step_key for e in result.all_events if e.event_type_value in ("STEP_FAILURE", "STEP_UP_FOR_RETRY")]
    assert failed == []
    with duckdb.connect(str(demo_warehouse), read_only=True) as alone:
        for file, (name, listings) in GOOD.items():
            fid = _fetch(con, file)
            assert _one(con, "SELECT name, listed_items FROM staging.profiles WHERE fetch_id = ?", fid) == (name, listings)
            columns = "position, title, abstract, year, pub_date, category, byline_authors, arxiv_id"
            query = (f"SELECT {columns} FROM staging.listings l JOIN raw.page_captures c USING (partition_date, capture_id) "
                     "WHERE c.source_file = ? ORDER BY position")
            assert con.execute(query, [file]).fetchall() == alone.execute(query, [file]).fetchall()


def test_every_entry_is_a_fetch_accounted_for_and_not_pages_are_counted(zoo_night):
    result, con, _ = zoo_night
    files = {r[0] for r in con.execute("SELECT source_file FROM raw.page_captures").fetchall()}
    assert files == set(GOOD) | {c.file for c in ZOO}
    unaccounted = con.execute("""
        SELECT c.source_file FROM raw.page_captures c
        WHERE NOT EXISTS (SELECT 1 FROM staging.profiles p WHERE p.fetch_id = c.fetch_id)
          AND NOT EXISTS (SELECT 1 FROM staging.rejects r WHERE r.fetch_id = c.fetch_id)""").fetchall()
    assert unaccounted == []
    raw_meta = {e.asset_key.to_user_string(): e.materialization.metadata
                for e in result.get_asset_materialization_events()}["raw/page_captures"]
    assert "(skipped, not pages: hidden file ×2, sidecar without a page ×1)" in raw_meta["source"].value
    assert raw_meta["fetch_rejects_by_reason"].value == {"not_a_file": 3, "outside_root": 1, "oversize": 1, "unreadable": 2}


def test_the_warn_checks_count_what_the_rows_say(zoo_night):
    result, con, _ = zoo_night
    checks = {(e.asset_key.to_user_string(), e.check_name): e for e in result.get_asset_check_evaluations()}
    assert all(e.passed for (_, name), e in checks.items() if name == "gates")
    issues = checks[("staging/quality_issues", "warnings")]
    expected = sum(len(c.issues) for c in ZOO)
    assert not issues.passed and issues.severity == dg.AssetCheckSeverity.WARN
    assert issues.metadata["unexpected_rows"].value == expected
    assert _one(con, "SELECT count(*) FROM staging.quality_issues") == (expected,)
    profiles = checks[("staging/profiles", "warnings")]
    assert not profiles.passed and profiles.metadata["unexpected_rows"].value == 1  # Zoo Overlisted
    rate = checks[("staging/rejects", "warnings")]
    fetches, rejected = _one(con, "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM staging.profiles p "
                                  "WHERE p.capture_id = c.capture_id)) FROM raw.page_captures c")
    assert (fetches, rejected) == (len(GOOD) + len(ZOO), 13)  # the rejected cases without a profile of their body
    assert not rate.passed and f"| {fetches} | {rejected} |" in rate.metadata["failed #10: expect_column_values_to_be_in_set(reject_rate_high)"].value


def test_nothing_outside_the_folder_is_read_or_published(zoo_night):
    _, con, path = zoo_night
    for table, column in (("raw.page_captures", "body"), ("staging.rejects", "detail"),
                          ("staging.quality_issues", "raw_value"), ("staging.quality_issues", "detail")):
        assert _one(con, f"SELECT count(*) FROM {table} WHERE contains({column}, ?)", SECRET) == (0,), table
    assert _one(con, "SELECT count(*) FROM raw.page_captures WHERE contains(CAST(body_bytes AS VARCHAR), ?)", SECRET) == (0,)
    with duckdb.connect(str(path.parent / "analytics.duckdb"), read_only=True) as published:
        assert _one(published, "SELECT count(*) FROM raw.page_captures WHERE contains(body, ?)", SECRET) == (0,)


# =============================================================================== the live crawl

@dataclass(frozen=True)
class Fault:
    id: str
    path: str
    reply: Reply | None            # None: not routed (a 404), or handled by robots.txt
    reason: str                    # the fetch reject, and the staging reject
    empty_body: bool = True


LIVE = [
    Fault("robots.txt disallows", "/private/author/1", Reply(200, SF_TEXT, content_type="text/plain"), "robots_disallowed"),
    Fault("read timeout", "/author/slow", Reply(200, "late", delay_s=2.0), "timeout"),
    Fault("redirect loop", "/author/loop", Reply(302, headers={"Location": "/author/loop"}), "redirect_loop"),
    Fault("declared oversize", "/author/huge", Reply(200, "x", content_length=50_000_000), "oversize"),
    Fault("empty 200", "/author/empty", Reply(200, b"", content_type="text/html"), "error_page"),
    Fault("404 with an empty body", "/author/gone-1", Reply(404, b""), "error_page"),
    Fault("another 404 with an empty body", "/author/gone-2", Reply(404, b""), "error_page"),
    Fault("connection dropped", "/author/drop", Reply(drop=True), "connection_error"),
    Fault("bot wall", "/author/wall", Reply(503, "<html><head><title>Just a moment...</title></head></html>",
                                            headers={"cf-mitigated": "challenge"}), "bot_challenge", empty_body=False),
    Fault("HTTP 500", "/author/error", Reply(500, "<h1>Internal Server Error</h1>"), "error_page", empty_body=False),
]
LIVE_GOOD = "/author/1001"


@pytest.fixture(scope="module")
def live_night(tmp_path_factory):
    from pipelines.assets import ingest, staging
    from pipelines.assets.checks import build_quality_checks
    from pipelines.resources import LiveProfileSourceResource, WarehouseResource
    from pipelines.resources.great_expectations import GreatExpectationsResource

    root = tmp_path_factory.mktemp("live")
    with LocalHttpServer() as site:
        site.route("/robots.txt", Reply(200, "User-agent: *\nDisallow: /private/\n", content_type="text/plain"))
        site.route(LIVE_GOOD, Reply(200, (SAMPLES / "003_5373d79505ae5ddf.txt").read_bytes(), content_type="text/plain"))
        for fault in LIVE:
            if fault.reply is not None:
                site.route(fault.path, fault.reply)
        urls = [site.url(LIVE_GOOD)] + [site.url(f.path) for f in LIVE]
        config = root / "config" / "profiles.toml"
        config.parent.mkdir()
        config.write_text(
            '[crawler]\nproject_url = ""\nrate_limit_s = 0.0\nallow_fast = true\nmax_retries = 0\n'
            "read_timeout_s = 0.3\nconnect_timeout_s = 1.0\nmax_fetch_s = 5.0\nmax_body_bytes = 1000000\n"
            f'cache_path = "{root / "cache.sqlite"}"\n'
            "[sites.local]\nurl_pattern = '^http://127\\.0\\.0\\.1:\\d+/(?:private/)?author/(?P<id>[a-z0-9-]+)$'\n"
            f"profiles = {json.dumps(urls)}\n"
        )
        assets = [ingest.page_captures, staging.staging_tables]
        wh = root / "wh.duckdb"
        result = dg.materialize(
            [*assets, *build_quality_checks(assets)], partition_key=SAMPLE_DATE, raise_on_error=False,
            resources={"page_source": LiveProfileSourceResource(config_path=str(config), contact="zoo-tests@example.org"),
                       "warehouse_db": WarehouseResource(path=str(wh)), "gx": GreatExpectationsResource()},
        )
        base = site.base_url
    con = duckdb.connect(str(wh), read_only=True)
    yield result, con, base
    con.close()


@pytest.mark.parametrize("fault", LIVE, ids=[f.id for f in LIVE])
def test_each_failed_fetch_keeps_its_own_capture_and_reject(live_night, fault: Fault):
    _, con, base = live_night
    fid, capture_id, reject, size = _one(con, "SELECT fetch_id, capture_id, fetch_reject, byte_size FROM raw.page_captures "
                                              "WHERE url = ?", base + fault.path)
    assert reject == fault.reason
    assert (size == 0) == fault.empty_body
    if fault.empty_body:
        assert capture_id == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of b""
    assert con.execute("SELECT reason, stage, url FROM staging.rejects WHERE fetch_id = ?", [fid]).fetchall() == [
        (fault.reason, "fetch", base + fault.path)]


def test_the_live_night_accounts_for_every_url(live_night):
    result, con, base = live_night
    assert result.success
    assert _one(con, "SELECT count(*), count(DISTINCT fetch_id) FROM raw.page_captures") == (len(LIVE) + 1,) * 2
    assert _one(con, "SELECT count(*) FROM staging.rejects") == (len(LIVE),)
    assert _one(con, "SELECT name FROM staging.profiles WHERE url = ?", base + LIVE_GOOD) == ("Yunquan Zhang",)
    empty = sum(f.empty_body for f in LIVE)
    assert _one(con, "SELECT count(DISTINCT fetch_id) FROM staging.rejects WHERE capture_id = "
                     "'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'") == (empty,)
    checks = {(e.asset_key.to_user_string(), e.check_name): e for e in result.get_asset_check_evaluations()}
    assert checks[("staging/rejects", "gates")].passed
    rate = checks[("staging/rejects", "warnings")]
    assert not rate.passed and f"| {len(LIVE) + 1} | {len(LIVE)} |" in rate.metadata[
        "failed #10: expect_column_values_to_be_in_set(reject_rate_high)"].value


# =============================================================================== the last resort

def test_a_page_whose_rows_do_not_fit_the_tables_is_its_own_reject(tmp_path, monkeypatch):
    """A value the parser's domain checks do not know (a future field, a parser bug) that no
    staging column can hold: that page is one parse_error reject; the batch's other pages land."""
    from pipelines.staging import build as landing
    from pipelines.staging.parsing import domains
    from pipelines.ingest.sources.folder import FolderSource

    shutil.copy(SAMPLES / "000_c5cc6f46b58abda9.txt", tmp_path)
    (tmp_path / "huge.txt").write_text(scholarfeed("Zoo Hugecount", ("h-index39", "h-index" + "1" + "0" * 30)))
    monkeypatch.setattr(domains, "check_profile", lambda profile: [])  # as if the checks missed the field
    raw = landing.raw_rows(FolderSource(tmp_path).iter_captures(DAY), DAY)
    profiles, listings, rejects, issues = landing.stage_captures(raw)
    assert profiles["name"].to_list() == ["Daning Cheng"] and listings.height == 5
    (reject,) = rejects.to_dicts()
    assert reject["reason"] == "parse_error" and reject["url"].endswith("/huge.txt") and reject["stage"] == "parse"
    assert reject["detail"].startswith("the page's rows do not fit the staging tables: ")


# =============================================================================== re-runs and the next night

def _traces(con, day: date) -> dict[str, list]:
    """Per file: its profile name or its rejects, and its issues, on one night."""
    rows = con.execute("""
        SELECT c.source_file,
               (SELECT list(p.name) FROM staging.profiles p WHERE p.partition_date = c.partition_date AND p.fetch_id = c.fetch_id),
               (SELECT list((r.reason, r.stage, r.position) ORDER BY r.reason, r.position) FROM staging.rejects r
                 WHERE r.partition_date = c.partition_date AND r.fetch_id = c.fetch_id),
               (SELECT list((i.reason, i.field, i.raw_value) ORDER BY i.reason, i.field) FROM staging.quality_issues i
                 WHERE i.partition_date = c.partition_date AND i.fetch_id = c.fetch_id)
        FROM raw.page_captures c WHERE c.partition_date = ? ORDER BY 1""", [day]).fetchall()
    return {file: [names, rejects, issues] for file, names, rejects, issues in rows}


def test_a_rerun_and_the_next_night_leave_the_same_trace_per_fetch(tmp_path):
    """Re-running a night replaces its rows with the same ones; the next night copies the unchanged
    pages' rows (no re-parse) and still accounts for every fetch on its own, with fresh ids."""
    from pipelines import warehouse
    from pipelines.staging import build as landing
    from pipelines.ingest.sources.folder import FolderSource

    folder = tmp_path / "captures"
    folder.mkdir()
    for name in ("000_c5cc6f46b58abda9.txt", "001_05f49289928d0f65.txt"):
        shutil.copy(SAMPLES / name, folder)
    for build in (write("zero.txt", b""), write("zero-again.txt", b""), symlink("passwd.txt", "/etc/passwd"),
                  write("copy-of-001.txt", (SAMPLES / "001_05f49289928d0f65.txt").read_bytes()),
                  write("bad-sidecar.txt", scholarfeed("Zoo Badsidecar"), "{not json"),
                  write("huge-count.txt", scholarfeed("Zoo Hugecount", ("h-index39", "h-index" + "1" + "0" * 30))),
                  write("repeated.txt", repeated_block(5))):
        build(folder)
    night2 = date.fromordinal(DAY.toordinal() + 1)
    tables = ("staging.profiles", "staging.listings", "staging.rejects", "staging.quality_issues")
    with warehouse.connect(tmp_path / "wh.duckdb") as con:
        warehouse.ensure_schema(con)
        stages = []
        for day in (DAY, DAY, night2):
            landing.land_partition(con, FolderSource(folder).iter_captures(day), day)
            stages.append(landing.stage_partition(con, day))
            if day == DAY and len(stages) == 1:
                first = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
        assert {t: con.execute(f"SELECT * FROM {t} WHERE partition_date = ? ORDER BY ALL", [DAY]).fetchall()
                for t in tables} == first
        assert stages[2]["pages_parsed"] == 0 and stages[2]["pages_unchanged_reused"] == 6
        one, two = _traces(con, DAY), _traces(con, night2)
        assert one == two
        assert one["zero.txt"][1] == one["zero-again.txt"][1] == [("empty", "parse", None)]
        assert one["copy-of-001.txt"][1] == [("duplicate_body", "parse", None)]
        assert one["passwd.txt"][1] == [("outside_root", "fetch", None)]
        assert one["huge-count.txt"][0] == ["Zoo Hugecount"] and one["huge-count.txt"][2] == [
            ("value_out_of_range", "h_index", "1" + "0" * 30)]
        assert one["bad-sidecar.txt"][2] == [("bad_sidecar", None, "{not json")]
        assert len(one["repeated.txt"][1]) == 4
        for table, key in (("staging.rejects", "reject_id"), ("staging.quality_issues", "issue_id"),
                           ("raw.page_captures", "fetch_id")):
            assert warehouse.scalar(con, f"SELECT count(*) - count(DISTINCT {key}) FROM {table}") == 0, table


def test_a_charset_declared_only_in_the_http_header_decodes_the_page_through_staging():
    """A live page served as ``text/html; charset=Shift_JIS`` with no ``<meta charset>``: the crawler
    had kept only ``text/html``, so raw and staging guessed cp1252 (mojibake and a false
    ``encoding_guessed``)."""
    from pipelines.ingest.sources.base import Capture
    from pipelines.ingest.sources.crawler import _mime
    from pipelines.staging import build as landing

    assert _mime("text/html; charset=Shift_JIS") == "text/html; charset=shift_jis"
    assert _mime("application/xhtml+xml;charset=\"windows-1251\"") == "text/html; charset=windows-1251"
    assert _mime("text/plain") == "text/plain" and _mime("application/pdf; charset=utf-8") is None

    text = scholarfeed("山田 太郎", ("DC-CCL: Device-Cloud", "分散学習 DC-CCL: Device-Cloud"))
    html = "<html><body>" + "".join(f"<div>{line}</div>" for line in text.splitlines() if line.strip()) + "</body></html>"
    capture = Capture(url="https://www.scholarfeed.org/author/77", captured_at=datetime(2026, 11, 21, tzinfo=timezone.utc),
                      body=html.encode("shift_jis"), content_type=_mime("text/html; charset=Shift_JIS"), origin="http")
    raw = landing.raw_rows([capture], DAY)
    assert raw["encoding"].to_list() == ["shift_jis"] and raw["content_type"].to_list() == ["text/html"]
    profiles, listings, rejects, issues = landing.stage_captures(raw)
    assert rejects.height == 0 and profiles["name"].to_list() == ["山田 太郎"]
    assert listings["title"][0].startswith("分散学習 DC-CCL") and "encoding_guessed" not in issues["reason"].to_list()

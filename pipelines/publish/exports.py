"""Publishing for readers: Parquet exports for apps, and a read-only analytics copy of the warehouse.

Both are swapped in atomically, so a reader never sees a half-written export or database:

exports/
  .versions/<date>-<run>/      the real directories, written completely before anyone can see them
  .staged/<date> -> …          the tables of a night written by the tables step, not yet published
  <date>  -> .versions/…       a symlink, replaced atomically (os.replace) when a version is published
  latest  -> <date>            likewise: the date whose tables were exported last (after a backfill of an
                               earlier day, that day's: its snapshot holds the newest history)

A night is published in two steps: ``export_tables`` writes and stages the tables, and
``publish_export`` — run by the report step — adds the report and the manifest that lists it, and only
then repoints ``<date>`` and ``latest``. So readers see the previous complete export (tables, report,
manifest) until the new one is complete. A version directory is never changed once published: a re-run
of the report alone publishes a new version whose tables are hard links to the published ones.

analytics.duckdb is written to a temporary file next to it and renamed over the old one; a reader
that already had the old file open keeps reading it undisturbed.
No Dagster imports.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb

from pipelines import warehouse
from pipelines.publish.report import REPORT_FILE
from pipelines.warehouse import contract

EXPORT_SCHEMAS = ("core", "marts")
EXPORT_EXCLUDE = set(contract.ID_REGISTRIES)  # internal bookkeeping
KEEP_VERSIONS = 14
STAGED = ".staged"  # exports/.staged/<date>: tables written, not yet published


def code_version() -> str:
    """The git commit of the code that produced the export (or 'unknown' outside a checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=warehouse.PROJECT_ROOT,
                             capture_output=True, text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=warehouse.PROJECT_ROOT,
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib.metadata import version
    try:
        return f"scholarhouse {version('scholarhouse')}"
    except Exception:  # noqa: BLE001 - metadata may be missing in odd installs
        return "unknown"


def exported_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
        "WHERE table_schema IN ('core', 'marts') AND table_type = 'BASE TABLE' ORDER BY 1"
    ).fetchall()
    return [t for (t,) in rows if t not in EXPORT_EXCLUDE]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _swap_symlink(link: Path, target: str) -> None:
    tmp = link.with_name(f".{link.name}.{uuid.uuid4().hex}")
    os.symlink(target, tmp)
    os.replace(tmp, link)  # atomic on POSIX


def _new_version_name(as_of: date) -> str:
    return f"{as_of.isoformat()}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


@dataclass
class _Version:
    work: Path                                     # where the block writes the files
    final: Path                                    # .versions/<name>, once written
    manifest: dict = field(default_factory=dict)   # written as manifest.json beside the files


@contextmanager
def _writing_version(exports_dir: Path, as_of: date) -> Iterator[_Version]:
    """A new version directory for ``as_of``: the block fills ``version.work`` (``.versions/.tmp-<name>``)
    and sets ``version.manifest``; then the manifest is written and the folder renamed to
    ``version.final`` at once, so nobody reads a half-written version. A block that fails leaves nothing."""
    versions = exports_dir / ".versions"
    versions.mkdir(parents=True, exist_ok=True)
    name = _new_version_name(as_of)
    version = _Version(work=versions / f".tmp-{name}", final=versions / name)
    version.work.mkdir()
    try:
        yield version
        (version.work / "manifest.json").write_text(json.dumps(version.manifest, indent=2, sort_keys=True))
        os.rename(version.work, version.final)
    except BaseException:
        shutil.rmtree(version.work, ignore_errors=True)
        raise


def export_tables(con: duckdb.DuckDBPyConnection, exports_dir: Path, as_of: date) -> dict:
    """Write every core and mart table as Parquet for ``as_of`` into a new version directory, with a
    manifest of the tables, and stage it (``.staged/<date>``). Readers see nothing of it until
    ``publish_export`` publishes it with its report."""
    exports_dir = Path(exports_dir)
    with _writing_version(exports_dir, as_of) as version:
        tables = {}
        for table in exported_tables(con):
            file = version.work / f"{table}.parquet"
            con.execute(f"COPY (SELECT * FROM {table}) TO {warehouse.sql_path(file)} (FORMAT parquet, COMPRESSION zstd)")
            schema = [{"name": c, "type": t} for c, t, *_ in con.execute(f"DESCRIBE {table}").fetchall()]
            tables[table] = {
                "file": file.name,
                "rows": con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0],
                "schema": schema,
                "sha256": _sha256(file),
                "bytes": file.stat().st_size,
            }
        version.manifest = {
            "as_of": as_of.isoformat(),
            "generated_at": datetime.now(timezone.utc).isoformat(),
            "code_version": code_version(),
            "tables": tables,
        }
    staged = exports_dir / STAGED
    staged.mkdir(exist_ok=True)
    _swap_symlink(staged / as_of.isoformat(), f"../.versions/{version.final.name}")
    return {"path": str(exports_dir / as_of.isoformat()), "version_dir": str(version.final), **version.manifest}


def publish_export(exports_dir: Path, as_of: date, write_report: Callable[[Path], Any] | None = None) -> dict:
    """Publish ``as_of``'s export complete — its tables, its report and a manifest listing both — in a
    new version directory, then repoint ``<date>``, and ``latest`` unless it shows newer tables.

    The tables are the staged ones when the tables step wrote new ones, else the published ones of
    ``<date>`` (a re-run of the report alone); they are hard-linked, not copied. ``write_report(folder)``
    writes ``report.html`` into ``folder``. Without it (the tables re-run alone), or when it raises, the
    report readers have now — ``<date>``'s, else ``latest``'s — is kept beside the new tables and the
    manifest says so (``report.current`` false, ``report.reason``); the exception is raised again once the
    export is published, so a report that fails neither holds back the new tables nor leaves ``latest``
    without a report. Returns the manifest, with ``path``, ``version_dir`` and ``report_written`` (what
    ``write_report`` returned)."""
    exports_dir = Path(exports_dir)
    key = as_of.isoformat()
    staged, dated = exports_dir / STAGED / key, exports_dir / key
    if staged.exists():
        source = Path(os.path.realpath(staged))
    elif dated.exists():
        source = Path(os.path.realpath(dated))
    else:
        raise FileNotFoundError(f"no export for {as_of}: neither {staged} nor {dated} exists "
                                "(the exports/parquet step writes it)")
    manifest = json.loads((source / "manifest.json").read_text())
    failure, written = None, None
    with _writing_version(exports_dir, as_of) as version:
        work = version.work
        for table in manifest["tables"].values():
            _link_or_copy(source / table["file"], work / table["file"])
        if write_report is None:
            manifest["report"] = _keep_report(exports_dir, key, work, "the tables were re-exported without the report")
        else:
            try:
                written = write_report(work)
                manifest["report"] = _report_entry(work / REPORT_FILE, key)
            except Exception as exc:  # noqa: BLE001 - raised again below, once the tables are published
                failure = exc
                reason = f"the report could not be written: {type(exc).__name__}: {exc}"
                manifest["report"] = _keep_report(exports_dir, key, work, reason[:500])
        version.manifest = manifest
    if dated.exists() and not dated.is_symlink():  # an old-style real directory: move it aside first
        os.rename(dated, exports_dir / ".versions" / f"legacy-{key}-{uuid.uuid4().hex[:6]}")
    _swap_symlink(dated, f".versions/{version.final.name}")
    # `latest` is the export whose tables were written last, whatever its date: every export is a snapshot
    # of the whole core and marts tables, and a backfill of an earlier day rebuilds the history-wide ones
    # over the whole history, so its snapshot is the newest state there is (and the one analytics.duckdb
    # holds). A re-run of an older date's report alone, or tables staged long ago, must not move it back.
    shown = _tables_written_at(exports_dir / "latest")
    if shown is None or shown <= datetime.fromisoformat(manifest["generated_at"]):
        _swap_symlink(exports_dir / "latest", key)
    if staged.is_symlink() and Path(os.path.realpath(staged)) == source:
        staged.unlink()  # published: its files are linked into the new version, nobody reads it
        shutil.rmtree(source, ignore_errors=True)
    _prune(exports_dir)
    if failure is not None:
        raise failure
    return {"path": str(dated), "version_dir": str(version.final), "report_written": written, **manifest}


def _tables_written_at(export: Path) -> datetime | None:
    """When the tables ``export`` shows were written (None when there is no manifest to read)."""
    try:
        return datetime.fromisoformat(json.loads((export / "manifest.json").read_text())["generated_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # a file system without hard links
        shutil.copy2(source, target)


def _report_entry(path: Path, as_of: str | None, reason: str | None = None) -> dict:
    written = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat()
    entry = {"file": path.name, "as_of": as_of, "generated_at": written, "sha256": _sha256(path),
             "bytes": path.stat().st_size, "current": reason is None}
    return entry if reason is None else {**entry, "reason": reason}


def _keep_report(exports_dir: Path, key: str, folder: Path, reason: str) -> dict | None:
    """Link the report readers see now — ``<key>``'s, else ``latest``'s — into ``folder`` and return its
    manifest entry, marked not current; None when there is none."""
    for shown in (exports_dir / key, exports_dir / "latest"):
        if (shown / REPORT_FILE).is_file():
            (folder / REPORT_FILE).unlink(missing_ok=True)  # whatever a failed write left
            _link_or_copy(shown / REPORT_FILE, folder / REPORT_FILE)
            try:
                before = json.loads((shown / "manifest.json").read_text())
                report_as_of = (before.get("report") or {}).get("as_of", before["as_of"])
            except (OSError, ValueError, KeyError):
                report_as_of = None
            return _report_entry(folder / REPORT_FILE, report_as_of, reason)
    (folder / REPORT_FILE).unlink(missing_ok=True)
    return None


def _prune(exports_dir: Path) -> None:
    """Keep the versions a symlink points to (a date's, a staged one), plus the newest KEEP_VERSIONS;
    drop the rest."""
    versions = exports_dir / ".versions"
    links = [p for p in exports_dir.iterdir() if p.is_symlink() and p.name != "latest"]
    if (exports_dir / STAGED).is_dir():
        links += [p for p in (exports_dir / STAGED).iterdir() if p.is_symlink()]
    live = {os.path.basename(os.readlink(p)) for p in links}
    candidates = sorted((p for p in versions.iterdir() if not p.name.startswith(".tmp-")), key=lambda p: p.stat().st_mtime)
    for old in candidates[:-KEEP_VERSIONS]:
        if old.name not in live:
            shutil.rmtree(old, ignore_errors=True)


def publish_analytics_copy(source: Path, target: Path, *, memory_limit: str = warehouse.DUCKDB_MEMORY_LIMIT) -> dict:
    """Copy the whole warehouse file to ``target`` (for read-only use), swapped in atomically.

    Runs in the warehouse pool, so no writer is open: the file is checkpointed and a plain file
    copy is a consistent snapshot (far cheaper than re-inserting every row). If a write-ahead log
    is present (a writer died mid-run), the copy goes through DuckDB instead, which replays it —
    opened like every warehouse connection (``warehouse.connect``: waiting out another process's
    lock, with the ``memory_limit`` setting).
    """
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        if Path(f"{source}.wal").exists():
            with warehouse.connect(source, read_only=True, memory_limit=memory_limit) as con:
                con.execute(f"ATTACH {warehouse.sql_path(tmp)} AS analytics_copy (READ_WRITE)")
                con.execute(f"COPY FROM DATABASE {_current_database(con)} TO analytics_copy")
                con.execute("DETACH analytics_copy")
        else:
            shutil.copyfile(source, tmp)
        with duckdb.connect(str(tmp), read_only=True) as check:  # refuse to publish a file that does not open
            check.execute("SELECT count(*) FROM information_schema.tables").fetchall()
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, Path(f"{tmp}.wal")):
            if leftover.exists():
                leftover.unlink()
    return {"path": str(target), "bytes": target.stat().st_size}


def _current_database(con: duckdb.DuckDBPyConnection) -> str:
    """The attached warehouse's name as a quoted identifier: DuckDB names it after the file, which may
    hold a quote, a dash or a space."""
    name = con.execute("SELECT current_database()").fetchall()[0][0]
    return '"' + name.replace('"', '""') + '"'

"""Publishing for readers: Parquet exports for apps, and a read-only analytics copy of the warehouse.

Both are swapped in atomically, so a reader never sees a half-written export or database:

exports/
  .versions/<date>-<run>/      the real directories, written completely before anyone can see them
  <date>  -> .versions/…       a symlink, replaced atomically (os.replace) when a re-export finishes
  latest  -> <date>            likewise: the date whose export was written last (after a backfill of an
                               earlier day, that day's: its snapshot holds the newest history)

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
from datetime import date, datetime, timezone
from pathlib import Path

import duckdb

from pipelines import warehouse
from pipelines.warehouse import contract

EXPORT_SCHEMAS = ("core", "marts")
EXPORT_EXCLUDE = set(contract.ID_REGISTRIES)  # internal bookkeeping
KEEP_VERSIONS = 14


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


def export_tables(con: duckdb.DuckDBPyConnection, exports_dir: Path, as_of: date) -> dict:
    """Write every core and mart table as Parquet for ``as_of``, then repoint <date> and latest to it."""
    versions = exports_dir / ".versions"
    versions.mkdir(parents=True, exist_ok=True)
    name = f"{as_of.isoformat()}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    work = versions / f".tmp-{name}"
    work.mkdir()
    try:
        tables = {}
        for table in exported_tables(con):
            file = work / f"{table}.parquet"
            con.execute(f"COPY (SELECT * FROM {table}) TO '{file}' (FORMAT parquet, COMPRESSION zstd)")
            schema = [{"name": c, "type": t} for c, t, *_ in con.execute(f"DESCRIBE {table}").fetchall()]
            tables[table] = {
                "file": file.name,
                "rows": con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0],
                "schema": schema,
                "sha256": _sha256(file),
                "bytes": file.stat().st_size,
            }
        manifest = {
            "as_of": as_of.isoformat(),
            "generated_at": datetime.now(timezone.utc).isoformat(),
            "code_version": code_version(),
            "tables": tables,
        }
        (work / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
        final = versions / name
        os.rename(work, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    dated = exports_dir / as_of.isoformat()
    if dated.exists() and not dated.is_symlink():  # an old-style real directory: move it aside first
        os.rename(dated, versions / f"legacy-{as_of.isoformat()}-{uuid.uuid4().hex[:6]}")
    _swap_symlink(dated, f".versions/{name}")
    # `latest` is the export just written, whatever its date: every export is a snapshot of the whole
    # core and marts tables, and a backfill of an earlier day rebuilds the history-wide ones over the
    # whole history, so its snapshot is the newest state there is (and the one analytics.duckdb holds).
    _swap_symlink(exports_dir / "latest", as_of.isoformat())
    _prune(exports_dir)
    return {"path": str(dated), "version_dir": str(final), **manifest}


def export_folder(exports_dir: Path, as_of: date) -> Path:
    """The directory ``exports/<as_of>`` points to (a version directory), for files added beside the
    tables after the export (the nightly report). Raises FileNotFoundError when the date has no export."""
    dated = Path(exports_dir) / as_of.isoformat()
    if not dated.exists():
        raise FileNotFoundError(f"no export for {as_of}: {dated} does not exist (the exports/parquet step writes it)")
    return Path(os.path.realpath(dated))


def _prune(exports_dir: Path) -> None:
    """Keep the versions a symlink points to, plus the newest KEEP_VERSIONS; drop the rest."""
    versions = exports_dir / ".versions"
    live = {os.path.basename(os.readlink(p)) for p in exports_dir.iterdir() if p.is_symlink() and p.name != "latest"}
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
                con.execute(f"ATTACH '{tmp}' AS analytics_copy (READ_WRITE)")
                con.execute("COPY FROM DATABASE " + _current_database(con) + " TO analytics_copy")
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
    return con.execute("SELECT current_database()").fetchall()[0][0]

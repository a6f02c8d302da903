"""The DuckLake side of scripts/ducklake_prototype.py, run in a separate virtualenv with DuckDB 1.5.x and
the ``duckdb-extension-ducklake`` / ``duckdb-extension-postgres-scanner`` packages (DuckLake has no build
for DuckDB 2.0, the project's DuckDB). Reads a warehouse exported as Parquet, one file per table, and
measures the same work on a DuckDB 1.5 file and on DuckLake (catalog in PostgreSQL, data as Parquet).
Prints one JSON object. Not part of `make test`.

usage: python ducklake_probe.py PARQUET_DIR WORK_DIR POSTGRES_CONNINFO
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import duckdb
import duckdb_extension_ducklake
import duckdb_extension_postgres_scanner


def _ext(module, name: str) -> str:
    base = Path(module.__file__).parent / "extensions"
    (found,) = base.glob(f"*/{name}.duckdb_extension")
    return str(found)


DUCKLAKE = _ext(duckdb_extension_ducklake, "ducklake")
POSTGRES = _ext(duckdb_extension_postgres_scanner, "postgres_scanner")

# The score query the marts run (sql/marts/author_scores.sql's core): a join and a grouped mean.
QUERY = """SELECT a.author_id, avg(CAST(s.novelty_percentile AS DECIMAL(18, 9)))::DOUBLE AS v, count(*) AS n
           FROM {db}.core.authorships a JOIN {db}.marts.paper_scores s USING (paper_id) GROUP BY a.author_id"""


def lake(work: Path, conninfo: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"LOAD '{POSTGRES}'")
    con.execute(f"LOAD '{DUCKLAKE}'")
    con.execute(f"ATTACH 'ducklake:postgres:{conninfo}' AS db (DATA_PATH '{work / 'lake_data'}/')")
    return con


def native(work: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{work / 'native.duckdb'}' AS db")
    return con


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return round(time.perf_counter() - t0, 3)


def load(con, tables: list[tuple[str, str, Path]]) -> None:
    schemas = sorted({s for s, _, _ in tables})
    for s in schemas:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS db.{s}")
    con.execute("BEGIN")
    for s, t, path in tables:
        con.execute(f"CREATE TABLE db.{s}.{t} AS SELECT * FROM read_parquet('{path}')")
    con.execute("COMMIT")


def rewrite(con, parquet: Path) -> None:
    """A night's rewrite of a mart: delete every row and insert the new ones, in one transaction."""
    con.execute("BEGIN")
    con.execute("DELETE FROM db.marts.paper_scores")
    con.execute(f"INSERT INTO db.marts.paper_scores SELECT * FROM read_parquet('{parquet / 'marts.paper_scores.parquet'}')")
    con.execute("COMMIT")


def _writer(kind: str, work: str, conninfo: str, table: str, parquet: str, out) -> None:
    try:
        con = lake(Path(work), conninfo) if kind == "lake" else native(Path(work))
        t0 = time.perf_counter()
        con.execute("BEGIN")
        con.execute(f"DELETE FROM db.{table}")
        con.execute(f"INSERT INTO db.{table} SELECT * FROM read_parquet('{parquet}')")
        time.sleep(1.0)  # hold the transaction open while the other process writes
        con.execute("COMMIT")
        out.put((table, "committed", round(time.perf_counter() - t0, 3)))
    except Exception as exc:  # noqa: BLE001 - the finding
        out.put((table, f"failed: {str(exc).splitlines()[0][:160]}", None))


def two_writers(kind: str, work: Path, conninfo: str, parquet: Path) -> list:
    """Two processes write two tables at the same time (what two Celery workers would do)."""
    out = mp.Queue()
    procs = [mp.Process(target=_writer, args=(kind, str(work), conninfo, t, str(parquet / f"{t}.parquet"), out))
             for t in ("marts.citations", "marts.collaboration_edges")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [out.get() for _ in procs]


def size_mb(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 1e6, 1)
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6, 1)


def main(parquet: Path, work: Path, conninfo: str) -> dict:
    tables = sorted((p.stem.split(".")[0], p.stem.split(".")[1], p) for p in parquet.glob("*.parquet"))
    result: dict = {"duckdb": duckdb.__version__, "tables": len(tables),
                    "rows": int(duckdb.sql(f"SELECT count(*) FROM read_parquet('{parquet}/*.parquet', union_by_name=true)").fetchone()[0])}
    for kind, connect in (("native", lambda: native(work)), ("ducklake", lambda: lake(work, conninfo))):
        con = connect()
        r = {"load_s": timed(lambda: load(con, tables))}
        r["query_s"] = min(timed(lambda: con.execute(QUERY.format(db="db")).fetchall()) for _ in range(3))
        r["rewrite_mart_s"] = timed(lambda: rewrite(con, parquet))
        if kind == "ducklake":
            snaps = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('db')").fetchone()[0]
            r["snapshots"] = snaps
            # last night's table, read from the snapshot before the rewrite: what the analytics copy is for
            r["read_previous_snapshot_s"] = timed(lambda: con.execute(
                f"SELECT count(*) FROM db.marts.paper_scores AT (VERSION => {snaps - 1})").fetchall())
            con.execute("DETACH db")
            r["stored_mb"] = size_mb(work / "lake_data")
        else:
            con.execute("DETACH db")
            r["stored_mb"] = size_mb(work / "native.duckdb")
            r["analytics_copy_s"] = timed(lambda: duckdb.connect().execute(
                f"ATTACH '{work / 'native.duckdb'}' AS src (READ_ONLY); ATTACH '{work / 'copy.duckdb'}' AS dst; "
                "COPY FROM DATABASE src TO dst"))
        con.close()
        r["two_writers"] = two_writers("lake" if kind == "ducklake" else "native", work, conninfo, parquet)
        result[kind] = r
    return result


if __name__ == "__main__":
    mp.set_start_method("spawn")
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])))

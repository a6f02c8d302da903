"""The DuckLake prototype of docs/scaling.md ("The warehouse past one writer"): what moving the warehouse
from one DuckDB file to DuckLake (catalog in PostgreSQL, tables as Parquet) would cost and gain, on a
synthetic 10k night. Not part of `make test`.

    python scripts/bench.py --sizes 10000 --no-splink --incremental-share 0 --work /tmp/dl --out /tmp/dl
    python scripts/ducklake_prototype.py /tmp/dl/warehouse-10000/scholarhouse.duckdb

1. exports every table of the (DuckDB 2.0) warehouse to Parquet — DuckLake's extension exists only for
   DuckDB 1.5.x (``duckdb-extension-ducklake`` on PyPI), so the data crosses versions as Parquet;
2. makes a virtualenv (``bench_results/ducklake-venv``, once) with duckdb 1.5.5 and the DuckLake and
   postgres_scanner extension packages, and a throw-away PostgreSQL for the catalog (as
   ``make cluster-demo`` does);
3. runs ``scripts/ducklake_probe.py`` there: the same load, a mart-style query, a mart rewrite, two
   processes writing at once, and a previous snapshot read, on a DuckDB 1.5 file and on DuckLake.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
PACKAGES = ["duckdb==1.5.5", "duckdb-extension-ducklake==1.5.5", "duckdb-extension-postgres-scanner==1.5.5", "pytz"]


def venv() -> Path:
    path = ROOT / "bench_results" / "ducklake-venv"
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    return python


def export(warehouse: Path, out: Path) -> tuple[float, int]:
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect(str(warehouse), read_only=True)
    tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()
    for schema, table in tables:
        con.execute(f"COPY {schema}.{table} TO '{out / f'{schema}.{table}.parquet'}' (FORMAT parquet)")
    con.close()
    return time.perf_counter() - t0, len(tables)


def main() -> int:
    warehouse = Path(sys.argv[1])
    from cluster_demo import start_postgres  # the same throw-away PostgreSQL as make cluster-demo

    python = venv()
    work = Path(tempfile.mkdtemp(prefix="scholarhouse-ducklake-"))
    work.chmod(0o755)
    try:
        with ExitStack() as stack:
            (work / "parquet").mkdir()
            seconds, n = export(warehouse, work / "parquet")
            print(f"export: {n} tables of {warehouse} as Parquet in {seconds:.1f} s (DuckDB 2.0)")
            pg = start_postgres(work, stack)
            conninfo = (f"host={pg['DAGSTER_PG_HOST']} port={pg['DAGSTER_PG_PORT']} user={pg['DAGSTER_PG_USER']} "
                        f"password={pg['DAGSTER_PG_PASSWORD']} dbname={pg['DAGSTER_PG_DB']}")
            (work / "probe").mkdir()
            out = subprocess.run([str(python), str(ROOT / "scripts" / "ducklake_probe.py"), str(work / "parquet"),
                                  str(work / "probe"), conninfo], check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            result["export_s"] = round(seconds, 2)
            print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

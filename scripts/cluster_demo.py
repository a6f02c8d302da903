"""`make cluster-demo`: one synthetic night on Celery workers, on a PostgreSQL instance, proven equal to
the same night in one process.

What it does, all on 127.0.0.1 and in a temporary folder it owns (removed at the end):

1. installs Debian's ``postgresql`` and ``redis-server`` if they are missing (as root; otherwise it
   says what to install);
2. starts PostgreSQL (a fresh cluster: ``initdb`` as the ``postgres`` user when run as root) and Redis,
   each on a free non-default port, with a random password;
3. makes a Dagster instance whose ``dagster.yaml`` is ``deploy/instance/dagster.yaml`` (PostgreSQL
   storage, the ``warehouse`` pool of one slot), and generates a synthetic corpus of ``--profiles``
   profiles (10,000) with ``benchmarks.synthetic`` (what ``make bench`` uses);
4. starts ``--workers`` (2) Celery workers, ``dagster-celery worker start -y deploy/celery/worker.yaml``,
   each a process of its own that runs one step at a time;
5. runs ``nightly_refresh`` for the night with ``SCHOLARHOUSE_EXECUTOR=celery`` (``dg launch``: this
   process orchestrates, the workers run the steps), the novelty scoring in ``--novelty-chunks`` (4)
   chunk steps and the paper and author resolution in ``--resolution-shards`` (2) shard steps each, then
   the same night with the default, in-process executor (one novelty chunk, one resolution shard) into
   another warehouse — the same code, the executor chosen by the setting alone;
6. prints every step of the Celery run (worker, pid, start, seconds; the in-process run's seconds
   beside), whether steps in the ``warehouse`` pool ever overlapped, and compares every warehouse table
   of the two runs (as multisets: ``EXCEPT ALL`` both ways), ending with one line
   ``tables identical: yes|no (...)``.

Every server and worker it started is stopped on the way out, whatever happened (SIGINT/SIGTERM too).
Exit status: 0 when both runs succeeded and the tables are identical, 1 otherwise.
Not part of `make test`; needs the ``cluster`` extra (``pip install -e '.[cluster]'``, the Makefile does it).
"""

from __future__ import annotations

import argparse
import os
import platform
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import date, datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEPLOY = ROOT / "deploy"
NIGHT = date(2026, 11, 23)  # the bench's first night (a Monday)
PG_USER, PG_DB = "scholarhouse", "dagster"
# Columns that record when a row was written, not what it says: equal rows, different clocks.
CLOCK_COLUMNS = {"loaded_at", "built_at", "fetched_at", "searched_at", "rejected_at", "fitted_at"}


def say(line: str = "") -> None:
    print(line, flush=True)


class Stop(Exception):
    """SIGTERM/SIGINT: leave through the cleanup."""


def _on_signal(signum, _frame):
    raise Stop(signal.Signals(signum).name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, ready, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with status {proc.returncode}\n{tail}")
        try:
            if ready():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s" + (f" (log: {log})" if log else ""))


# --- Debian packages -----------------------------------------------------------------------------


def pg_bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def ensure_packages() -> None:
    missing = [pkg for pkg, present in (("postgresql", pg_bindir() is not None),
                                         ("redis-server", shutil.which("redis-server") is not None)) if not present]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"error: {' and '.join(missing)} missing: sudo apt-get install -y {' '.join(missing)}")
    say(f"installing {' '.join(missing)} (Debian packages) ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "install", "-y", *missing], env=env, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL, check=True)
        subprocess.run(["apt-get", "install", "-y", *missing], env=env, stdout=subprocess.DEVNULL, check=True)


# --- servers -------------------------------------------------------------------------------------


def stop_process(proc: subprocess.Popen, name: str, sig: int = signal.SIGTERM, group: bool = False,
                 timeout: float = 30) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        say(f"  {name} did not stop in {timeout:.0f} s: killed")
        os.killpg(proc.pid, signal.SIGKILL) if group else proc.kill()
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def start_postgres(work: Path, stack: ExitStack) -> dict:
    """A throw-away PostgreSQL cluster on 127.0.0.1; returns the DAGSTER_PG_* environment."""
    bindir = pg_bindir()
    root = os.geteuid() == 0
    owner = pwd.getpwnam("postgres") if root else None
    base = work / "postgres"
    data, sock = base / "data", base / "socket"
    for d in (base, sock):
        d.mkdir(parents=True)
    password = secrets.token_hex(16)
    pwfile = base / "pwfile"
    pwfile.write_text(password + "\n")
    as_user = {}
    if owner is not None:  # initdb refuses root: the cluster belongs to the postgres user
        for p in (base, sock, pwfile):
            os.chown(p, owner.pw_uid, owner.pw_gid)
        as_user = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
    subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, f"--pwfile={pwfile}",
                    "--auth=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"],
                   check=True, stdout=subprocess.DEVNULL, **as_user)
    port = free_port()
    log = base / "postgres.log"
    logf = open(log, "w")  # noqa: SIM115 - closed by the stack
    stack.callback(logf.close)
    proc = subprocess.Popen(
        [str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(sock),
         "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"],
        stdout=logf, stderr=subprocess.STDOUT, start_new_session=True, **as_user)
    # SIGINT: PostgreSQL's fast shutdown (ends sessions, then checkpoints)
    stack.callback(stop_process, proc, "PostgreSQL", signal.SIGINT)
    import psycopg2

    def connect(db: str):
        return psycopg2.connect(host="127.0.0.1", port=port, user=PG_USER, password=password, dbname=db)

    wait_for("PostgreSQL", lambda: connect("postgres").close() or True, 60, proc, log)
    con = connect("postgres")
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f"CREATE DATABASE {PG_DB}")
    con.close()
    version = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
    say(f"  PostgreSQL: 127.0.0.1:{port} (pid {proc.pid}, {version}), data in {data}")
    return {"DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(port), "DAGSTER_PG_USER": PG_USER,
            "DAGSTER_PG_PASSWORD": password, "DAGSTER_PG_DB": PG_DB}


def start_redis(work: Path, stack: ExitStack) -> str:
    """A throw-away Redis on 127.0.0.1 (no persistence); returns its URL."""
    base = work / "redis"
    base.mkdir()
    port, password = free_port(), secrets.token_hex(16)
    conf = base / "redis.conf"  # the password in a file, not on a command line
    conf.write_text(f"port {port}\nbind 127.0.0.1\nprotected-mode yes\nrequirepass {password}\nsave \"\"\n"
                    f"appendonly no\ndir {base}\ndaemonize no\n")
    log = base / "redis.log"
    logf = open(log, "w")  # noqa: SIM115
    stack.callback(logf.close)
    proc = subprocess.Popen(["redis-server", str(conf)], stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
    stack.callback(stop_process, proc, "Redis")
    import redis

    url = f"redis://:{password}@127.0.0.1:{port}/0"
    wait_for("Redis", lambda: redis.Redis.from_url(url).ping(), 30, proc, log)
    version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].removeprefix("v=")
    say(f"  Redis: 127.0.0.1:{port} (pid {proc.pid}, {version})")
    return url


def start_workers(n: int, env: dict, work: Path, stack: ExitStack, broker: str) -> dict[int, str]:
    """``n`` Celery workers, each one process that runs one step at a time (the solo pool: a step may
    start processes of its own, which a prefork pool's daemon children may not)."""
    names = []
    for i in range(1, n + 1):
        log = work / f"worker-{i}.log"
        logf = open(log, "w")  # noqa: SIM115
        stack.callback(logf.close)
        proc = subprocess.Popen(
            [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
             "-y", str(DEPLOY / "celery" / "worker.yaml"), "-n", f"worker{i}", "--loglevel", "WARNING",
             "--", "--pool=solo"],
            env=env, cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        # the process group: dagster-celery and the celery worker it starts
        stack.callback(stop_process, proc, f"worker {i}", signal.SIGTERM, True, 60)
        names.append(f"worker{i}@{socket.gethostname()}")
    from celery import Celery

    app = Celery(broker=broker, backend=broker)
    wait_for(f"{n} Celery workers", lambda: len(app.control.ping(timeout=1.0)) >= n, 180)
    pids = {name: info.get("pid") for name, info in (app.control.inspect(timeout=2.0).stats() or {}).items()}
    for name in names:
        say(f"  Celery worker {name}: pid {pids.get(name)}, pool solo (one step at a time)")
    return {pid: name for name, pid in pids.items() if pid}


# --- the runs ------------------------------------------------------------------------------------


def launch(label: str, env: dict, work: Path) -> tuple[str, float, bool]:
    """``dg launch`` of the night; returns (run id, seconds, succeeded)."""
    log = work / f"run-{label}.log"
    launched = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    with open(log, "w") as logf:
        proc = subprocess.run([str(BIN / "dg"), "launch", "--job", "nightly_refresh", "--partition", NIGHT.isoformat()],
                              env=env, cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - t0
    import dagster as dg

    with dg.DagsterInstance.get() as instance:  # the runs go one after another: the newest since the launch
        records = instance.get_run_records(
            filters=dg.RunsFilter(job_name="nightly_refresh", created_after=launched), limit=1)
        if not records:
            raise RuntimeError(f"the {label} run left no record (log: {log})")
        run = records[0].dagster_run
    ok = proc.returncode == 0 and run.status == dg.DagsterRunStatus.SUCCESS
    say(f"  {label} run {run.run_id}: {run.status.value} in {seconds:.1f} s (log: {log})")
    return run.run_id, seconds, ok


def step_table(run_id: str, workers: dict[int, str] | None = None) -> dict[str, dict]:
    """step key → start, end, seconds, pid, worker (from the run's event log in the instance: the
    Celery task's "Executing steps ... in celery worker" event names the worker; else the step's pid,
    looked up in ``workers``, the Celery workers' pids)."""
    import dagster as dg

    steps: dict[str, dict] = {}
    with dg.DagsterInstance.get() as instance:
        for record in instance.all_logs(run_id):
            event = record.dagster_event
            if event is None or not event.step_key:
                continue
            step = steps.setdefault(event.step_key, {})
            kind = event.event_type_value
            if kind == dg.DagsterEventType.STEP_START.value:
                step.update(start=record.timestamp, pid=event.pid)
            elif kind in (dg.DagsterEventType.STEP_SUCCESS.value, dg.DagsterEventType.STEP_FAILURE.value):
                step.update(end=record.timestamp, status=kind)
            elif kind == dg.DagsterEventType.ENGINE_EVENT.value and (event.message or "").startswith("Executing steps"):
                meta = event.engine_event_data.metadata if event.engine_event_data else {}
                worker = meta.get("Celery worker")
                if worker is not None:
                    step["worker"] = worker.value
    for step in steps.values():
        if "worker" not in step:
            step["worker"] = (workers or {}).get(step.get("pid"), f"pid {step.get('pid')}")
        if "start" in step and "end" in step:
            step["seconds"] = step["end"] - step["start"]
    return {k: v for k, v in steps.items() if "start" in v}


def pooled_steps(run_id: str) -> set[str]:
    """The run's steps in the ``warehouse`` pool (from the job's execution plan)."""
    import dagster as dg
    from dagster._core.execution.api import create_execution_plan

    from pipelines.definitions import defs

    job = defs.resolve_job_def("nightly_refresh")
    with dg.DagsterInstance.get() as instance:
        run = instance.get_run_by_id(run_id)
    plan = create_execution_plan(job, run_config=run.run_config, tags=run.tags, instance_ref=None)
    return {step.key for step in plan.steps if getattr(step, "pool", None) == "warehouse"}


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    points = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda p: (p[0], p[1]))
    now = peak = 0
    for _, d in points:
        now += d
        peak = max(peak, now)
    return peak


def print_steps(celery: dict[str, dict], in_process: dict[str, dict], pooled: set[str]) -> dict:
    t0 = min(s["start"] for s in celery.values())
    say(f"  {'step':<64} {'worker':<28} {'pid':>7} {'start s':>8} {'celery s':>9} {'in-proc s':>9}")
    by_worker: dict[str, list[float]] = {}
    for key, step in sorted(celery.items(), key=lambda kv: kv[1]["start"]):
        worker = step.get("worker", "?")
        by_worker.setdefault(worker, []).append(step.get("seconds", 0.0))
        other = in_process.get(key, {}).get("seconds")
        mark = "" if key in pooled else "  (no pool)"
        say(f"  {key[:64]:<64} {worker[:28]:<28} {step.get('pid') or '':>7} {step['start'] - t0:8.1f} "
            f"{step.get('seconds', float('nan')):9.1f} {other if other is not None else float('nan'):9.1f}{mark}")
    for worker, secs in sorted(by_worker.items()):
        say(f"  {worker}: {len(secs)} steps, {sum(secs):.1f} s of step time")
    pool_peak = max_overlap([(s["start"], s["end"]) for k, s in celery.items() if k in pooled and "end" in s])
    free = [k for k in celery if k not in pooled]
    free_peak = max_overlap([(celery[k]["start"], celery[k]["end"]) for k in free if "end" in celery[k]])
    workers_of_free = sorted({celery[k].get("worker", "?") for k in free})
    say(f"  warehouse pool: {len(pooled & set(celery))} pooled steps, at most {pool_peak} running at once "
        f"({'serialised' if pool_peak <= 1 else 'OVERLAPPED'}) across {len(by_worker)} workers")
    say(f"  steps outside the pool ({', '.join(sorted(free)) or 'none'}): at most {free_peak} at once, "
        f"on {', '.join(workers_of_free)}")
    return {"pool_peak": pool_peak, "free_peak": free_peak}


# --- comparing the warehouses --------------------------------------------------------------------


def compare(a: Path, b: Path) -> tuple[bool, str]:
    import duckdb

    con = duckdb.connect()
    con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")

    def tables(db: str) -> set[tuple[str, str]]:
        return set(con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ?",
                               [db]).fetchall())

    ta, tb = tables("a"), tables("b")
    differing, rows_total, skipped_cols = [], 0, set()
    for schema, table in sorted(ta | tb):
        name = f"{schema}.{table}"
        if (schema, table) not in ta or (schema, table) not in tb:
            differing.append(f"{name} only in {'celery' if (schema, table) in ta else 'in-process'}")
            continue
        cols_a = [c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name='a' AND schema_name=? AND table_name=? "
            "ORDER BY column_index", [schema, table]).fetchall()]
        cols_b = [c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name='b' AND schema_name=? AND table_name=? "
            "ORDER BY column_index", [schema, table]).fetchall()]
        if cols_a != cols_b:
            differing.append(f"{name} columns differ")
            continue
        cols = [c for c in cols_a if c not in CLOCK_COLUMNS]
        skipped_cols |= {f"{name}.{c}" for c in cols_a if c in CLOCK_COLUMNS}
        select = ", ".join(f'"{c}"' for c in cols)
        n_a = con.execute(f'SELECT count(*) FROM a."{schema}"."{table}"').fetchone()[0]
        n_b = con.execute(f'SELECT count(*) FROM b."{schema}"."{table}"').fetchone()[0]
        only_a = con.execute(f'SELECT count(*) FROM (SELECT {select} FROM a."{schema}"."{table}" EXCEPT ALL '
                             f'SELECT {select} FROM b."{schema}"."{table}")').fetchone()[0]
        only_b = con.execute(f'SELECT count(*) FROM (SELECT {select} FROM b."{schema}"."{table}" EXCEPT ALL '
                             f'SELECT {select} FROM a."{schema}"."{table}")').fetchone()[0]
        rows_total += n_a
        same = n_a == n_b and only_a == 0 and only_b == 0
        say(f"  {name:<40} {n_a:>10,} rows  {'same' if same else f'DIFFERENT: {n_b:,} rows in-process, {only_a:,} only in celery, {only_b:,} only in-process'}")
        if not same:
            differing.append(name)
    con.close()
    n = len(ta | tb)
    detail = (f"{n} tables, {rows_total:,} rows compared as multisets"
              + (f"; clock columns left out: {', '.join(sorted(skipped_cols))}" if skipped_cols else ""))
    if differing:
        return False, f"{len(differing)} of {n} tables differ: {', '.join(differing[:8])}; {detail}"
    return True, detail


# --- main ----------------------------------------------------------------------------------------


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=int, default=10_000, help="synthetic profiles (default 10,000)")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (default 2)")
    parser.add_argument("--shard-pages", type=int, default=2_500,
                        help="pages per parse shard, both runs (default 2,500: several shard steps to spread)")
    parser.add_argument("--novelty-chunks", type=int, default=4,
                        help="novelty chunk steps of the Celery run (default 4; the in-process run keeps the "
                        "default, 1, so the comparison also proves the scores do not depend on it)")
    parser.add_argument("--resolution-shards", type=int, default=2,
                        help="paper and author resolution shard steps of the Celery run (default 2; the in-process "
                        "run keeps the default, 1, so the comparison also proves the tables do not depend on it)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, warehouses)")
    return parser.parse_args()


def _demo(args: argparse.Namespace, work: Path, stack: ExitStack) -> tuple[bool, bool, str]:
    """Servers, instance, corpus, workers, the two runs, their steps and the tables compared (every
    server and worker started is stopped by ``stack``). Returns (both runs succeeded, the tables
    are identical, the last line)."""
    say(f"servers (127.0.0.1, work folder {work}):")
    pg_env = start_postgres(work, stack)
    broker = start_redis(work, stack)
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(DEPLOY / "instance" / "dagster.yaml", home / "dagster.yaml")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARHOUSE_")}
    base_env.update(pg_env, DAGSTER_HOME=str(home), PYTHONPATH=str(ROOT),
                    PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                    SCHOLARHOUSE_PARSE_SHARD_PAGES=str(args.shard_pages))
    os.environ.update(pg_env, DAGSTER_HOME=str(home))  # this process reads the same instance
    import dagster as dg

    # The instance's tables, created once before the workers start (two processes creating
    # them at the same moment collide: `type "event_logs" already exists`).
    with dg.DagsterInstance.get() as instance:
        say(f"  Dagster instance: {type(instance.run_storage).__name__}, "
            f"{type(instance.event_log_storage).__name__} (deploy/instance/dagster.yaml)")

    say(f"corpus: {args.profiles:,} synthetic profiles (benchmarks.synthetic, seed 0)")
    sys.path.insert(0, str(ROOT))
    from benchmarks.synthetic.generator import generate_corpus

    t0 = time.perf_counter()
    generate_corpus(work / "corpus", profiles=args.profiles, seed=0)
    say(f"  generated in {time.perf_counter() - t0:.1f} s")
    captures = work / "corpus" / "captures"

    celery_env = {**base_env, "SCHOLARHOUSE_EXECUTOR": "celery", "SCHOLARHOUSE_CELERY_BROKER": broker,
                  "SCHOLARHOUSE_CAPTURES": str(captures),
                  "SCHOLARHOUSE_NOVELTY_CHUNKS": str(args.novelty_chunks),
                  "SCHOLARHOUSE_RESOLUTION_SHARDS": str(args.resolution_shards),
                  "SCHOLARHOUSE_WAREHOUSE": str(work / "celery" / "scholarhouse.duckdb")}
    inproc_env = {**base_env, "SCHOLARHOUSE_CAPTURES": str(captures),
                  "SCHOLARHOUSE_WAREHOUSE": str(work / "in_process" / "scholarhouse.duckdb")}
    for d in ("celery", "in_process"):
        (work / d).mkdir()

    say(f"workers ({args.workers}, deploy/celery/worker.yaml):")
    workers = start_workers(args.workers, celery_env, work, stack, broker)

    say(f"runs of nightly_refresh for {NIGHT} (dg launch; same code, SCHOLARHOUSE_EXECUTOR decides; "
        f"novelty in {args.novelty_chunks} chunk steps and resolution in {args.resolution_shards} shard steps "
        "on Celery, in one each in process):")
    celery_id, celery_s, celery_ok = launch("celery", celery_env, work)
    inproc_id, inproc_s, inproc_ok = launch("in_process", inproc_env, work)
    ok = celery_ok and inproc_ok

    say("steps of the Celery run (from the run's event log in PostgreSQL):")
    celery_steps, inproc_steps = step_table(celery_id, workers), step_table(inproc_id)
    print_steps(celery_steps, inproc_steps, pooled_steps(celery_id))
    say(f"  whole runs: celery {celery_s:.1f} s, in-process {inproc_s:.1f} s (dg launch to exit)")

    say("tables (celery warehouse against in-process warehouse):")
    identical, detail = compare(Path(celery_env["SCHOLARHOUSE_WAREHOUSE"]),
                                Path(inproc_env["SCHOLARHOUSE_WAREHOUSE"]))
    if not ok:
        detail += "; a run failed"
    line = f"tables identical: {'yes' if identical else 'no'} ({detail})"
    say("stopping the workers and servers ...")
    return ok, identical, line


def main() -> int:
    args = _arguments()
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    started = datetime.now(timezone.utc)
    say(f"scholarhouse cluster demo — {started:%Y-%m-%d %H:%M} UTC on {platform.node()} "
        f"({os.cpu_count()} cores, Python {platform.python_version()})")
    ensure_packages()
    work = Path(tempfile.mkdtemp(prefix="scholarhouse-cluster-"))
    work.chmod(0o755)  # the postgres user reaches its data folder through it
    ok = identical = False
    line = "tables identical: no (the demo did not get to the comparison)"
    try:
        with ExitStack() as stack:
            ok, identical, line = _demo(args, work, stack)
    except Stop as exc:
        line = f"tables identical: no (stopped by {exc})"
    except Exception as exc:  # noqa: BLE001 - say it, after the cleanup, in one line
        import traceback

        traceback.print_exc()
        line = f"tables identical: no (error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    finally:
        if args.keep:
            say(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    say(line)
    return 0 if (ok and identical) else 1


if __name__ == "__main__":
    sys.exit(main())

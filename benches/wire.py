"""Point lookups per second over the MySQL wire: `noria-py serve` against a real MariaDB.

Both servers get the same table (primary-key index) and the same client: pymysql, one query
``SELECT id, name, v FROM bench WHERE id = %s`` with a random key at a time, from 1 and from 8
connections (8 client processes). MariaDB is started by this script on loopback with its own
datadir, port and socket, and stopped by its pid.

    python benches/wire.py [--seconds 5] [--rows 10000]

Writes benches/results/wire.json (noria_qps_1, mariadb_qps_1, ratio_1, noria_qps_8, ...).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymysql

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "wire.json"
QUERY = "SELECT id, name, v FROM bench WHERE id = %s"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing listening on port {port}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_noria() -> tuple[subprocess.Popen, dict]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "noria_py.server.mysql", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
    )
    wait_port(port, proc)
    return proc, {"host": "127.0.0.1", "port": port, "user": "bench", "database": "noria"}


def start_mariadb(workdir: Path) -> tuple[subprocess.Popen, dict]:
    install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    mariadbd = shutil.which("mariadbd") or shutil.which("mysqld") or "/usr/sbin/mariadbd"
    if not install or not os.path.exists(mariadbd):
        raise RuntimeError("MariaDB server not installed (apt-get install -y mariadb-server)")
    datadir = workdir / "data"
    sock = workdir / "mariadb.sock"
    subprocess.run(
        [
            install,
            f"--datadir={datadir}",
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port = free_port()
    proc = subprocess.Popen(
        [
            mariadbd,
            "--no-defaults",
            f"--datadir={datadir}",
            f"--socket={sock}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            "--user=root",
            f"--pid-file={workdir / 'mariadb.pid'}",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=128M",
            "--max-connections=200",
            f"--log-error={workdir / 'mariadb.err'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port, proc)
    conn = pymysql.connect(unix_socket=str(sock), user="root", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE bench")
        cur.execute("CREATE USER 'bench'@'127.0.0.1'")
        cur.execute("GRANT ALL ON bench.* TO 'bench'@'127.0.0.1'")
    conn.close()
    return proc, {"host": "127.0.0.1", "port": port, "user": "bench", "database": "bench"}


def load(params: dict, rows: int) -> None:
    conn = pymysql.connect(autocommit=True, **params)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE bench (id INT PRIMARY KEY, name VARCHAR(50), v INT)")
        for start in range(0, rows, 1000):
            batch = [(i, f"name {i}", i * 7) for i in range(start, min(rows, start + 1000))]
            cur.executemany("INSERT INTO bench (id, name, v) VALUES (%s, %s, %s)", batch)
    conn.close()


def client(params: dict, rows: int, seconds: float, warmup: float, seed: int, out) -> None:
    rng = random.Random(seed)
    conn = pymysql.connect(autocommit=True, **params)
    cur = conn.cursor()
    end_warm = time.perf_counter() + warmup
    while time.perf_counter() < end_warm:
        cur.execute(QUERY, (rng.randrange(rows),))
        cur.fetchall()
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(50):
            cur.execute(QUERY, (rng.randrange(rows),))
            if len(cur.fetchall()) != 1:
                raise AssertionError("lookup lost its row")
        n += 50
        now = time.perf_counter()
        if now >= deadline:
            break
    conn.close()
    out.put((n, now - t0))


def measure(params: dict, rows: int, connections: int, seconds: float, warmup: float) -> float:
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=client, args=(params, rows, seconds, warmup, i, out))
        for i in range(connections)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + warmup + 120) for _ in procs]
    for p in procs:
        p.join()
    return sum(n for n, _ in results) / max(t for _, t in results)


def warm_all_keys(params: dict, rows: int) -> None:
    """Touch every key once so both servers answer from memory."""
    conn = pymysql.connect(autocommit=True, **params)
    with conn.cursor() as cur:
        for k in range(rows):
            cur.execute(QUERY, (k,))
            cur.fetchall()
    conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per client")
    ap.add_argument("--rows", type=int, default=10000, help="rows in the table")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    results: dict = {
        "query": QUERY,
        "rows": args.rows,
        "seconds": args.seconds,
        "client": f"pymysql {pymysql.__version__}, one process per connection",
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="wirebench-") as tmp:
        for name, starter in (
            ("noria", lambda: start_noria()),
            ("mariadb", lambda: start_mariadb(Path(tmp))),
        ):
            proc, params = starter()
            try:
                load(params, args.rows)
                warm_all_keys(params, args.rows)
                for conns in (1, 8):
                    qps = measure(params, args.rows, conns, args.seconds, args.warmup)
                    results[f"{name}_qps_{conns}"] = round(qps, 1)
                    print(f"{name:8s} {conns} connection(s): {qps:10.1f} lookups/s", flush=True)
            finally:
                stop(proc)
    for conns in (1, 8):
        results[f"ratio_{conns}"] = round(
            results[f"noria_qps_{conns}"] / results[f"mariadb_qps_{conns}"], 3
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

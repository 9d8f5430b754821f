"""Point lookups per second over the MySQL wire: `noria-py serve` against a real MariaDB.

Both servers get the same table (primary-key index), the same rows and the same client: pymysql,
one query ``SELECT id, name, v FROM bench WHERE id = %s`` with a random key at a time, from 1 and
from 8 connections (one client process each). MariaDB is started by this script on loopback
with its own datadir, port and socket, and stopped by its pid.

To be fair on a small shared machine, both servers run side by side (the idle one costs
nothing) and the measurement alternates between them, ``--rounds`` times each; each qps figure
is the median of its rounds, and the load average is recorded with every round. Beside the
throughput, each round records the server's CPU time per query (user + system, from
/proc/PID/stat), which other processes on the machine disturb much less than qps.

    python benches/wire.py [--seconds 3] [--rounds 5] [--rows 10000] [--connector]

``--workers 1 2`` measures `noria-py serve --workers 1` and `--workers 2` (processes sharing the
port and the file) side by side with MariaDB; keys are warmed through one connection, so a
second process fills its views during the warm-up of each round.
``--connector`` adds the same lookups through mysql-connector-python with ``prepared=True``
(server-side prepared statements, binary protocol). ``--profile PATH`` samples the noria server
with py-spy during one extra single-connection run and writes a summary to PATH.

Writes benches/results/wire.json (noria_qps_1, mariadb_qps_1, ratio_1, noria_qps_8, ...).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import queue
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymysql

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "wire.json"
QUERY = "SELECT id, name, v FROM bench WHERE id = %s"
CONNECTIONS = (1, 8)


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


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


def start_noria(workers: int = 1) -> tuple[subprocess.Popen, dict]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "noria_py.server.mysql",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(cmd + ["--workers", str(workers)], stdout=subprocess.DEVNULL)
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


def _connect(client: str, params: dict):
    if client == "pymysql":
        conn = pymysql.connect(autocommit=True, **params)
        return conn, conn.cursor()
    import mysql.connector

    conn = mysql.connector.connect(autocommit=True, **params)
    return conn, conn.cursor(prepared=True)


def client(
    client_name: str, params: dict, rows: int, seconds: float, warmup: float, seed: int, out
) -> None:
    try:
        rng = random.Random(seed)
        conn, cur = _connect(client_name, params)
        end_warm = time.perf_counter() + warmup
        while time.perf_counter() < end_warm:
            cur.execute(QUERY, (rng.randrange(rows),))
            cur.fetchall()
        n = 0
        c0 = time.process_time()
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
        cpu = time.process_time() - c0
        conn.close()
        out.put((n, now - t0, cpu))
    except BaseException as e:  # report instead of leaving the parent waiting
        out.put(e)


def server_cpu(pid: int) -> float:
    """User + system CPU seconds of a server so far (threads that ended included), its worker
    processes (``serve --workers``) included."""
    import psutil

    total = 0.0
    for p in [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True):
        with open(f"/proc/{p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def wait_idle(pid: int, timeout: float = 30.0) -> None:
    """Wait until a server has finished its background work after the load (InnoDB flushes
    and purges for a while): under 5% of a core over half a second, or ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        c0 = server_cpu(pid)
        time.sleep(0.5)
        if server_cpu(pid) - c0 < 0.025:
            return


def measure(
    client_name: str,
    params: dict,
    pid: int,
    rows: int,
    connections: int,
    seconds: float,
    warmup: float,
) -> dict:
    """One round: ``connections`` client processes for ``seconds`` after ``warmup``."""
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=client, args=(client_name, params, rows, seconds, warmup, 1000 * pid + i, out)
        )
        for i in range(connections)
    ]
    load_before = os.getloadavg()[0]
    cpu0 = server_cpu(pid)
    for p in procs:
        p.start()
    results = []
    deadline = time.monotonic() + seconds + warmup + 120
    while len(results) < len(procs):
        try:
            r = out.get(timeout=1.0)
        except queue.Empty:
            if time.monotonic() > deadline or not any(p.is_alive() for p in procs):
                raise RuntimeError("a benchmark client died without reporting") from None
            continue
        if isinstance(r, BaseException):
            raise RuntimeError(f"benchmark client failed: {r!r}")
        results.append(r)
    for p in procs:
        p.join()
    cpu = server_cpu(pid) - cpu0
    n = sum(r[0] for r in results)
    qps = n / max(r[1] for r in results)
    return {
        "qps": round(qps, 1),
        "server_cpu_us_per_query": round(cpu / n * 1e6, 1),
        "client_cpu_us_per_query": round(sum(r[2] for r in results) / n * 1e6, 1),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def warm_all_keys(params: dict, rows: int) -> None:
    """Touch every key once so both servers answer from memory."""
    conn = pymysql.connect(autocommit=True, **params)
    with conn.cursor() as cur:
        for k in range(rows):
            cur.execute(QUERY, (k,))
            cur.fetchall()
    conn.close()


def profile_noria(pid: int, params: dict, rows: int, seconds: float, path: Path) -> None:
    """Sample the noria server with py-spy while one client runs; write a summary to ``path``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not os.path.exists(spy):
        print("py-spy is not installed; no profile written", file=sys.stderr)
        return
    raw = path.with_suffix(".raw")
    prof = subprocess.Popen(
        [spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "500", "--native"]
        + ["-f", "raw", "-o", str(raw)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    m = measure("pymysql", params, pid, rows, 1, max(1.0, seconds - 2), 0.0)
    prof.wait()
    own, total = collections.Counter(), collections.Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        samples += n
        frames = stack.split(";")
        own[frames[-1]] += n
        for f in set(frames):
            total[f] += n
    raw.unlink()
    lines = [
        "py-spy samples (wall clock, 500 Hz, native frames) of `noria-py serve` while one pymysql",
        f"client ran point lookups: {m['qps']} qps, server CPU {m['server_cpu_us_per_query']} us",
        f"per query, load average {m['load_before']} -> {m['load_after']}; {samples} samples.",
        "epoll_pwait is the server waiting for the client (idle); write is the send system call,",
        "which on loopback also delivers the segment and wakes the client; the rest is the",
        "server's own work (see the cProfile section at the end for its Python part).",
        "",
        "Own time (top 30):",
    ]
    lines += [f"{100 * n / samples:6.1f}%  {f}" for f, n in own.most_common(30)]
    lines += ["", "Inclusive time (top 40):"]
    lines += [f"{100 * n / samples:6.1f}%  {f}" for f, n in total.most_common(40)]
    path.write_text("\n".join(lines) + "\n")
    print(f"profile written to {path}")


def micro(rows: int = 10000, profile: bool = False) -> tuple[dict, str]:
    """The server's own Python cost per command, without sockets: COM_QUERY point lookups and
    COM_STMT_EXECUTE fed to a CommandProtocol whose transport only keeps the last write.
    Returns ({"query_us": ..., "execute_us": ...}, a cProfile summary of the COM_QUERY path)."""
    import asyncio
    import cProfile
    import io
    import pstats
    import struct

    from noria_py.engine import Engine
    from noria_py.server import protocol as P
    from noria_py.server.connection import CommandProtocol
    from noria_py.server.mysql import NoriaServer, WireConnection
    from noria_py.server.session import Session

    class Transport:
        last = b""

        def write(self, data: bytes) -> None:
            self.last = data

        def set_protocol(self, proto: object) -> None:
            pass

        def is_reading(self) -> bool:
            return True

        def close(self) -> None:
            pass

    def pkt(payload: bytes) -> bytes:
        return len(payload).to_bytes(3, "little") + b"\x00" + payload

    async def run() -> tuple[dict, str]:
        engine = Engine()
        engine.execute("CREATE TABLE bench (id INT PRIMARY KEY, name VARCHAR(50), v INT)")
        engine.executemany(
            "INSERT INTO bench (id, name, v) VALUES (?, ?, ?)",
            [(i, f"name {i}", i * 7) for i in range(rows)],
        )
        server = NoriaServer(engine)
        session = Session(server.state)
        session.username, session.database = "bench", "noria"
        conn = WireConnection(P.BoundedStream(None, None, 1 << 20), server, session)
        proto = CommandProtocol(conn)
        transport = Transport()
        proto.take_over(transport, b"", False)
        text = b"\x03" + QUERY.replace("%s", "%d").encode()
        queries = [pkt(text % k) for k in range(rows)]
        proto.data_received(pkt(b"\x16" + QUERY.replace("%s", "?").encode()))
        head = b"\x17" + struct.pack("<IBI", 1, 0, 1) + b"\x00\x01\x08\x00"
        executes = [pkt(head + struct.pack("<q", k)) for k in range(rows)]
        out = {}
        for name, batch in (("query_us", queries), ("execute_us", executes)):
            for q in batch:  # first pass: fills, plans
                proto.data_received(q)
            best = float("inf")
            for i in range(60):
                part = batch[(i * 500) % rows :][:500]
                t0 = time.perf_counter()
                for q in part:
                    proto.data_received(q)
                best = min(best, (time.perf_counter() - t0) / len(part))
            out[name] = round(best * 1e6, 2)
        summary = ""
        if profile:
            prof = cProfile.Profile()
            prof.enable()
            for q in queries[:5000]:
                proto.data_received(q)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
            summary = buf.getvalue()
        engine.close()
        return out, summary

    return asyncio.run(run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="measured seconds per round")
    ap.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per client")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per server and client count")
    ap.add_argument("--rows", type=int, default=10000, help="rows in the table")
    ap.add_argument(
        "--connector",
        action="store_true",
        help="also measure mysql-connector-python with prepared=True (binary protocol)",
    )
    ap.add_argument("--profile", type=Path, default=None, help="write a py-spy summary here")
    ap.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="noria server process counts to measure side by side (e.g. --workers 1 2)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()

    results: dict = {
        "query": QUERY,
        "rows": args.rows,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "client": f"PyMySQL {_version('PyMySQL')}, one process per connection"
        + (
            f"; mysql-connector-python {_version('mysql-connector-python')}"
            if args.connector
            else ""
        ),
        "cpus": os.cpu_count(),
        "method": "both servers up side by side; rounds alternate noria/mariadb; medians",
    }
    clients = ["pymysql"] + (["connector"] if args.connector else [])
    with tempfile.TemporaryDirectory(prefix="wirebench-") as tmp:
        servers: dict[str, tuple[subprocess.Popen, dict]] = {}
        try:
            for w in args.workers:
                servers["noria" if w == 1 else f"noria_w{w}"] = start_noria(w)
            servers["mariadb"] = start_mariadb(Path(tmp))
            for _proc, params in servers.values():
                load(params, args.rows)
                warm_all_keys(params, args.rows)
            for proc, _params in servers.values():
                wait_idle(proc.pid)
            rounds: dict[str, list[dict]] = {}
            for client_name in clients:
                suffix = "" if client_name == "pymysql" else "_prepared"
                for conns in CONNECTIONS:
                    for r in range(args.rounds):
                        for name, (proc, params) in servers.items():
                            m = measure(
                                client_name,
                                params,
                                proc.pid,
                                args.rows,
                                conns,
                                args.seconds,
                                args.warmup,
                            )
                            rounds.setdefault(f"{name}_{conns}{suffix}", []).append(m)
                            print(
                                f"{client_name:9s} {name:8s} {conns} conn round {r + 1}: "
                                f"{m['qps']:9.1f} qps, server {m['server_cpu_us_per_query']:5.1f}"
                                f" us/query, load {m['load_before']:.2f}",
                                flush=True,
                            )
                    for name in servers:
                        ms = rounds[f"{name}_{conns}{suffix}"]
                        results[f"{name}_qps_{conns}{suffix}"] = round(
                            statistics.median(m["qps"] for m in ms), 1
                        )
                        results[f"{name}_cpu_us_per_query_{conns}{suffix}"] = round(
                            statistics.median(m["server_cpu_us_per_query"] for m in ms), 1
                        )
                    for name in servers:
                        if name == "mariadb":
                            continue
                        tag = "" if name == "noria" else name[len("noria") :]
                        results[f"ratio{tag}_{conns}{suffix}"] = round(
                            results[f"{name}_qps_{conns}{suffix}"]
                            / results[f"mariadb_qps_{conns}{suffix}"],
                            3,
                        )
            results["rounds_detail"] = rounds
            if args.profile is not None and "noria" in servers:
                proc, params = servers["noria"]
                profile_noria(proc.pid, params, args.rows, 8.0, args.profile)
        finally:
            for proc, _params in servers.values():
                stop(proc)
    python_cost, summary = micro(args.rows, profile=args.profile is not None)
    results["noria_python_us_per_command"] = python_cost
    print(f"noria's own Python per command (no sockets, best of 60 x 500): {python_cost}")
    if args.profile is not None:
        with args.profile.open("a") as f:
            f.write(
                "\nThe server's own Python per command, without sockets (CommandProtocol fed"
                f" directly, best of 60 x 500): {python_cost}\n"
                "cProfile of 5000 COM_QUERY point lookups through that path:\n\n" + summary
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k != "rounds_detail"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

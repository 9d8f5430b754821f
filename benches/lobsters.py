"""Lobsters: the highest load each backend sustains with p95 sojourn latency under 50 ms.

For each backend (the embedded engine, ``noria-py serve`` over the MySQL protocol with one
process and with ``--workers 2``, MariaDB with the natural queries, MariaDB with the
hand-optimized queries) the data set is primed once, then
the offered rate climbs geometrically; each step runs open-loop for a short warm-up plus a
measured window. A step passes when the p95 sojourn latency over all pages stays under the
threshold, every measured request finished, and nothing failed. The best passing step's achieved
pages/s and the RSS of the database process at that point are reported. Past the threshold the
rate keeps climbing until the backend saturates (achieves clearly less than offered), and the
most pages/s achieved at any rate is reported too (``peak_pages_per_s``): a baseline that misses
the latency bound even when idle still has a throughput to compare with. Two more backends, not in the default list, compare the cache in front of MySQL
(``noria-py serve --upstream``) with the database it fronts: ``mariadb-binlog`` is MariaDB with
the natural queries and a ROW binlog (what an upstream needs), and ``noria-upstream`` primes that
same MariaDB, puts ``noria-py serve --upstream`` in front of it and drives the server; during
each of its steps the replication lag is sampled (the time from reading MariaDB's binlog
position until the mirror has applied it), reported as p50/p99 per step. The MySQL-protocol
backends are driven from ``--processes`` load generator processes (the same for all of them),
at CPU niceness ``--client-nice`` so that on a small machine they do not take CPU time from the
server under test (clients of a real server run on other machines).

    python benches/lobsters.py                    # default sweep, a few minutes
    python benches/lobsters.py --scale 0.2 --duration 10 --backends embedded,mariadb-optimized

Writes benches/results/lobsters.json and benches/results/lobsters.png.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

from noria_py.workloads.lobsters import backends as B
from noria_py.workloads.lobsters import pages, report
from noria_py.workloads.lobsters.data import Workload
from noria_py.workloads.lobsters.driver import RunConfig, run, run_processes

RESULTS = Path(__file__).resolve().parent / "results"
# what an upstream of ``noria-py serve --upstream`` runs with
BINLOG = (
    "--log-bin=mariadb-bin",
    "--binlog-format=ROW",
    "--binlog-row-metadata=FULL",
    "--server-id=1",
)
# (engine, baseline) pairs whose ratios are reported
PAIRS = [
    (e, b)
    for e in ("embedded", "noria-serve", "noria-serve-w2")
    for b in ("mariadb-natural", "mariadb-optimized")
] + [("noria-upstream", "mariadb-binlog")]
ALL_BACKENDS = (
    "embedded",
    "noria-serve",
    "noria-serve-w2",
    "mariadb-natural",
    "mariadb-optimized",
)


def start_noria_server(timeout: float = 60.0, workers: int = 1, upstream: str | None = None):
    """``python -m noria_py.server.mysql`` on a free loopback port -> (process, url)."""
    cmd = [sys.executable, "-m", "noria_py.server.mysql", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--workers", str(workers)]
    if upstream is not None:
        cmd += ["--upstream", upstream]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1")
    )
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with code {proc.returncode}")
            if sel.select(timeout=0.2):
                line = proc.stdout.readline()
                if "serving MySQL protocol on" in line:
                    addr = line.split(" on ", 1)[1].split()[0]
                    host, port = addr.rsplit(":", 1)
                    db = upstream.rsplit("/", 1)[1] if upstream else "noria"
                    return proc, f"mysql://bench@{host}:{port}/{db}"
        raise RuntimeError("server did not report readiness")
    except BaseException:
        stop_process(proc)
        raise
    finally:
        sel.close()


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class LagSampler:
    """Replication lag of ``noria-py serve --upstream`` while a step runs: every ``every``
    seconds, MariaDB's binlog position is read, then the server's applied position
    (``SHOW UPSTREAM STATUS``) is polled until it has reached it; the time that took is one
    sample."""

    def __init__(self, upstream: B.MySQLBackend, served: B.MySQLBackend, every: float = 0.25):
        self.upstream, self.served, self.every = upstream, served, every
        self.samples: list[float] = []
        self._stop = None
        self._thread = None

    def start(self) -> None:
        import threading

        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from noria_py.upstream.source import Position, at_or_after

        up, mine = self.upstream.connect(), self.served.connect()
        try:
            while not self._stop.is_set():
                t0 = time.perf_counter()
                with up.cursor() as cur:
                    cur.execute("SHOW MASTER STATUS")
                    f, pos = cur.fetchone()[:2]
                target = Position(f, int(pos))
                while not self._stop.is_set():
                    with mine.cursor() as cur:
                        cur.execute("SHOW UPSTREAM STATUS")
                        row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
                    file, _, at = row["applied"].rpartition(":")
                    if at_or_after(Position(file, int(at)), target):
                        self.samples.append(time.perf_counter() - t0)
                        break
                    time.sleep(0.002)
                self._stop.wait(self.every)
        finally:
            up.close()
            mine.close()

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join(timeout=30)
        xs = sorted(self.samples)
        if not xs:
            return {"samples": 0}

        def pct(p: float) -> float:
            return round(1000 * xs[min(len(xs) - 1, int(p / 100 * len(xs)))], 1)

        return {"samples": len(xs), "p50_ms": pct(50), "p99_ms": pct(99), "max_ms": pct(100)}


def sweep(backend, label: str, args, variant: str, log, prime: bool = True, sampler=None) -> dict:
    workload = Workload(args.scale, args.seed)
    t = time.perf_counter()
    if prime:
        B.prime(
            backend, workload, variant, drop_existing=not isinstance(backend, B.EmbeddedBackend)
        )
    session = backend.session()
    pages.warm(session, workload, variant == "optimized", seed=args.seed)
    session.close()
    prime_s = time.perf_counter() - t
    log(f"{label}: primed in {prime_s:.1f} s")
    steps = []
    best = None
    rate = args.start_rate
    failures = 0
    while rate <= args.max_rate:
        cfg = RunConfig(
            rate=rate,
            duration=args.duration,
            warmup=args.warmup,
            in_flight=args.in_flight,
            seed=args.seed + len(steps),
            variant=variant,
            drain=max(5.0, args.duration),
            nice=args.client_nice,
        )
        if sampler is not None:
            sampler.start()
        if args.processes > 1 and isinstance(backend, B.MySQLBackend):
            result = run_processes(backend.url, args.scale, args.seed, cfg, args.processes)
        else:
            result = run(backend, workload, cfg)
        lag = sampler.stop() if sampler is not None else None
        if result.unfinished == 0:  # otherwise backend.close() closes them after the workers
            for s in result.sessions:
                s.close()
        summary = report.summarize(result, rss_mb=backend.rss_mb())
        ok = (
            summary["p95_ms"] is not None
            and summary["p95_ms"] < args.threshold_ms
            and summary["unfinished"] == 0
            and summary["errors"] == 0
        )
        step = {
            "offered_pages_per_s": rate,
            "pages_per_s": summary["pages_per_s"],
            "p95_ms": summary["p95_ms"],
            "mean_ms": summary["mean_ms"],
            "errors": summary["errors"],
            "unfinished": summary["unfinished"],
            "rss_mb": summary["rss_mb"],
            "passed": ok,
        }
        if lag is not None:
            step["replication_lag"] = lag
        if summary.get("error_samples"):
            step["error_samples"] = summary["error_samples"][:3]
        steps.append(step)
        log(
            f"{label}: offered {rate:7.1f}  achieved {step['pages_per_s']:7.1f}  "
            f"p95 {step['p95_ms']} ms  {'ok' if ok else 'over'}"
            + (f"  lag p50 {lag.get('p50_ms')} p99 {lag.get('p99_ms')} ms" if lag else "")
        )
        if ok:
            best = step
            failures = 0
        else:
            failures += 1
            # past the latency threshold, keep climbing until the backend saturates (achieves
            # clearly less than offered): that gives its peak throughput too
            saturated = step["pages_per_s"] < 0.9 * rate
            if (
                (failures >= 2 and saturated)
                or step["p95_ms"] is None
                or step["p95_ms"] > 40 * args.threshold_ms
                or failures >= 6
            ):
                break
        rate = round(rate * args.factor, 1)
    out = {
        "variant": variant,
        "note": None
        if best
        else f"p95 {steps[0]['p95_ms']} ms already at the lowest offered rate {args.start_rate:g}",
        "prime_s": round(prime_s, 1),
        "max_pages_per_s": best["pages_per_s"] if best else 0.0,
        # the most pages/s achieved at any offered rate, whatever the latency
        "peak_pages_per_s": max(s["pages_per_s"] for s in steps) if steps else 0.0,
        "offered_at_max": best["offered_pages_per_s"] if best else None,
        "rss_mb_at_max": best["rss_mb"] if best else None,
        "replication_lag_at_max": best.get("replication_lag") if best else None,
        "steps": steps,
    }
    cache = backend.cache_stats()
    if cache:
        out["cache"] = {k: v for k, v in cache.items() if k != "proxied"}
    return out


def run_backend(name: str, args, log) -> dict:
    if name == "embedded":
        backend = B.EmbeddedBackend()
        try:
            return sweep(backend, name, args, "natural", log)
        finally:
            backend.close()
    if name in ("noria-serve", "noria-serve-w2"):
        try:
            import noria_py.server.mysql  # noqa: F401
        except ImportError as e:
            return {"skipped": f"noria_py.server.mysql is not importable: {e}"}
        proc, url = start_noria_server(workers=2 if name.endswith("-w2") else 1)
        backend = B.MySQLBackend(url, rss_pid=proc.pid, name=name)
        try:
            return sweep(backend, name, args, "natural", log)
        finally:
            backend.close()
            stop_process(proc)
    if name in ("mariadb-binlog", "noria-upstream"):
        if not B.mariadb_available():
            return {"skipped": "mariadbd is not installed"}
        server = B.MariaDBServer(extra_args=BINLOG).start()
        direct = server.backend("mariadb-binlog")
        try:
            if name == "mariadb-binlog":
                return sweep(direct, name, args, "natural", log)
            B.prime(direct, Workload(args.scale, args.seed), "natural", drop_existing=True)
            t = time.perf_counter()
            proc, url = start_noria_server(timeout=600, upstream=server.url)
            log(f"{name}: snapshot and start in {time.perf_counter() - t:.1f} s")
            backend = B.MySQLBackend(url, rss_pid=proc.pid, name=name)
            try:
                return sweep(
                    backend,
                    name,
                    args,
                    "natural",
                    log,
                    prime=False,
                    sampler=LagSampler(direct, backend),
                )
            finally:
                backend.close()
                stop_process(proc)
        finally:
            direct.close()
            server.stop()
    if name.startswith("mariadb-"):
        if not B.mariadb_available():
            return {"skipped": "mariadbd is not installed"}
        variant = name.split("-", 1)[1]
        server = B.MariaDBServer().start()
        backend = server.backend(name)
        try:
            return sweep(backend, name, args, variant, log)
        finally:
            backend.close()
            server.stop()
    raise ValueError(f"unknown backend {name}")


def plot(results: dict, path: Path, threshold: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, res in results["backends"].items():
        steps = res.get("steps")
        if not steps:
            continue
        xs = [s["offered_pages_per_s"] for s in steps]
        ax1.plot(xs, [s["p95_ms"] for s in steps], marker="o", label=name)
        ax2.plot(xs, [s["pages_per_s"] for s in steps], marker="o", label=name)
    ax1.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("offered pages/s")
    ax1.set_ylabel("p95 sojourn (ms)")
    ax1.set_title(f"Lobsters latency (scale {results['config']['scale']})")
    ax1.legend()
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("offered pages/s")
    ax2.set_ylabel("achieved pages/s")
    ax2.set_title("throughput")
    lim = [min(ax2.get_xlim()[0], ax2.get_ylim()[0]), max(ax2.get_xlim()[1], ax2.get_ylim()[1])]
    ax2.plot(lim, lim, color="grey", linestyle=":", linewidth=1)
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--backends",
        default=",".join(ALL_BACKENDS),
        help="comma-separated subset; also mariadb-binlog and noria-upstream (the cache in "
        "front of MySQL and its baseline)",
    )
    p.add_argument("--scale", type=float, default=0.1, help="data scale (default: %(default)s)")
    p.add_argument("--start-rate", type=float, default=5.0, help="first offered rate")
    p.add_argument("--factor", type=float, default=1.6, help="rate multiplier per step")
    p.add_argument("--max-rate", type=float, default=5000.0)
    p.add_argument("--duration", type=float, default=6.0, help="measured seconds per step")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per step")
    p.add_argument("--in-flight", type=int, default=50)
    p.add_argument(
        "--processes",
        type=int,
        default=2,
        help="load generator processes for the MySQL-protocol backends (the same for "
        "noria-py serve and MariaDB; the embedded engine runs in this process)",
    )
    p.add_argument(
        "--client-nice",
        type=int,
        default=10,
        help="CPU niceness of those load generator processes (the same for every MySQL-protocol "
        "backend): on a small machine they would otherwise take CPU time from the server under "
        "test, which clients on other machines do not (default: %(default)s; 0 turns it off)",
    )
    p.add_argument("--threshold-ms", type=float, default=50.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=str(RESULTS / "lobsters.json"))
    args = p.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, flush=True)

    results = {
        "config": {
            "scale": args.scale,
            "start_rate": args.start_rate,
            "factor": args.factor,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "in_flight": args.in_flight,
            "processes_for_mysql_backends": args.processes,
            "client_nice_for_mysql_backends": args.client_nice,
            "threshold_p95_ms": args.threshold_ms,
            "seed": args.seed,
            "cpus": os.cpu_count(),
        },
        "backends": {},
    }
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        try:
            results["backends"][name] = run_backend(name, args, log)
        except Exception as e:  # one backend failing must not lose the others' numbers
            results["backends"][name] = {"skipped": f"{type(e).__name__}: {e}"}
            log(f"{name}: {type(e).__name__}: {e}")
    maxes = {
        n: r["max_pages_per_s"] for n, r in results["backends"].items() if "max_pages_per_s" in r
    }
    results["max_pages_per_s"] = maxes
    ratios = {}
    for engine, base in PAIRS:
        if engine in maxes and base in maxes:
            # None when the baseline never met the threshold (the ratio is unbounded)
            ratio = maxes[engine] / maxes[base] if maxes[base] else None
            ratios[f"{engine}/{base}"] = round(ratio, 2) if ratio is not None else None
    results["ratios"] = ratios
    peaks = {
        n: r["peak_pages_per_s"] for n, r in results["backends"].items() if "peak_pages_per_s" in r
    }
    results["peak_pages_per_s"] = peaks
    results["peak_ratios"] = {
        f"{engine}/{base}": round(peaks[engine] / peaks[base], 2)
        for engine, base in PAIRS
        if engine in peaks and peaks.get(base)
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    plot(results, out.with_suffix(".png"), args.threshold_ms)
    log(
        json.dumps(
            {
                "max_pages_per_s": maxes,
                "ratios": ratios,
                "peak_pages_per_s": peaks,
                "peak_ratios": results["peak_ratios"],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

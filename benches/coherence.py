"""Several processes on one database file: how soon a commit in one process shows in another
process's cached view, what the change log costs a writer, and what a writer costs a reader.

Three measurements, all on one file on this machine:

1. **Delay**: process A commits ``UPDATE counters SET n = token``; process B spins on its cached
   ``SELECT n FROM counters WHERE id = ?`` and notes when each token first appears. The delay
   is B's first sight minus the moment A's ``execute`` returned (``time.monotonic``, one clock
   for every process). Writes are paced (``--rate`` per second) so they do not queue.
2. **Writer cost**: single-statement writes with the view maintained, per second, in one
   process, with the change log (``shared=True``, the default for a file) and without it
   (``shared=False``) on the same kind of file: the ratio is what coherence costs a write.
3. **Reader cost**: B's cached reads per second while A writes flat out, against B's rate
   with A idle.

    python benches/coherence.py                 # 500 delay samples at 100 writes/s
    python benches/coherence.py --samples 200 --rate 50
    python benches/coherence.py --domains threads   # every process on domain threads

Results go to benches/results/coherence.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import noria_py  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
POINT = "SELECT n FROM counters WHERE id = ?"


def _setup(path: str, rows: int = 1000) -> None:
    conn = noria_py.connect(path)
    conn.execute("CREATE TABLE counters (id INT PRIMARY KEY, grp INT, n BIGINT)")
    conn.executemany(
        "INSERT INTO counters VALUES (?, ?, 0)", [(i, i % 10) for i in range(1, rows + 1)]
    )
    conn.close()


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


# --- 1. delay -----------------------------------------------------------------------------------


def _delay_writer(path: str, samples: int, rate: float, ready, out, opts) -> None:
    conn = noria_py.connect(path, **opts)
    ready.wait(60)
    gap = 1.0 / rate
    next_at = time.monotonic()
    for token in range(1, samples + 1):
        next_at += gap
        conn.execute("UPDATE counters SET n = ? WHERE id = 1", (token,))
        out.put((token, time.monotonic()))
        pause = next_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    out.put(None)
    conn.close()


def _delay_reader(path: str, samples: int, ready, out, opts) -> None:
    conn = noria_py.connect(path, **opts)
    conn.execute(POINT, (1,)).fetchall()
    seen: dict[int, float] = {}
    ready.set()
    deadline = time.monotonic() + samples / 5 + 60
    while len(seen) < samples and time.monotonic() < deadline:
        v = conn.execute(POINT, (1,)).fetchall()[0][0]
        if v not in seen:
            seen[v] = time.monotonic()
    out.put(seen)
    conn.close()


def measure_delay(path: str, samples: int, rate: float, opts: dict) -> dict:
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    committed_q, seen_q = ctx.Queue(), ctx.Queue()
    reader = ctx.Process(target=_delay_reader, args=(path, samples, ready, seen_q, opts))
    writer = ctx.Process(target=_delay_writer, args=(path, samples, rate, ready, committed_q, opts))
    reader.start()
    writer.start()
    committed = {}
    while True:
        item = committed_q.get(timeout=600)
        if item is None:
            break
        committed[item[0]] = item[1]
    seen = seen_q.get(timeout=600)
    writer.join(60)
    reader.join(60)
    # a token overwritten before the reader looked is not a sample (with pacing: rare)
    delays = [(seen[t] - committed[t]) * 1000 for t in committed if t in seen]
    return {
        "samples": len(delays),
        "missed": len(committed) - len(delays),
        "rate_per_s": rate,
        "delay_ms_p50": round(_pct(delays, 50), 3),
        "delay_ms_p90": round(_pct(delays, 90), 3),
        "delay_ms_p99": round(_pct(delays, 99), 3),
        "delay_ms_max": round(max(delays), 3),
        # below 0: the writer process was descheduled between its commit and its timestamp
        "delay_ms_min": round(min(delays), 3),
        "delay_ms_mean": round(statistics.fmean(delays), 3),
    }


# --- 2. writer cost -----------------------------------------------------------------------------


def measure_writes(tmp: str, writes: int, opts: dict) -> dict:
    out = {}
    for shared in (False, True):
        path = os.path.join(tmp, f"writes_{shared}.db")
        _setup(path)
        conn = noria_py.connect(path, shared=shared, **opts)
        total = "SELECT grp, COUNT(*), SUM(n) FROM counters WHERE grp = ? GROUP BY grp"
        for g in range(10):
            conn.execute(total, (g,)).fetchall()
        t0 = time.perf_counter()
        for i in range(writes):
            conn.execute("UPDATE counters SET n = ? WHERE id = ?", (i, i % 1000 + 1))
        out["shared" if shared else "unshared"] = round(writes / (time.perf_counter() - t0), 1)
        conn.close()
    out["ratio_shared_to_unshared"] = round(out["shared"] / out["unshared"], 3)
    return out


# --- 3. reader cost -----------------------------------------------------------------------------


def _busy_writer(path: str, stop, ready, opts) -> None:
    conn = noria_py.connect(path, **opts)
    ready.set()
    i = 0
    while not stop.is_set():
        i += 1
        conn.execute("UPDATE counters SET n = ? WHERE id = ?", (i, i % 1000 + 1))
    conn.close()


def _read_rate(conn, seconds: float) -> float:
    n = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        for k in range(1, 101):
            conn.execute(POINT, (k,)).fetchall()
        n += 100
        now = time.perf_counter()
        if now >= end:
            return n / (now - t0)


def measure_reads(path: str, seconds: float, opts: dict) -> dict:
    conn = noria_py.connect(path, **opts)
    for k in range(1, 101):
        conn.execute(POINT, (k,)).fetchall()
    idle = _read_rate(conn, seconds)
    ctx = mp.get_context("spawn")
    stop, ready = ctx.Event(), ctx.Event()
    writer = ctx.Process(target=_busy_writer, args=(path, stop, ready, opts))
    writer.start()
    ready.wait(60)
    busy = _read_rate(conn, seconds)
    stop.set()
    writer.join(60)
    conn.close()
    return {
        "reads_per_s_writer_idle": round(idle, 1),
        "reads_per_s_writer_busy": round(busy, 1),
        "ratio_busy_to_idle": round(busy / idle, 3),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=500)
    ap.add_argument("--rate", type=float, default=100.0, help="delay writes per second")
    ap.add_argument("--writes", type=int, default=5000)
    ap.add_argument("--seconds", type=float, default=3.0, help="per read-rate measurement")
    ap.add_argument(
        "--domains",
        choices=["inline", "threads"],
        default="inline",
        help="how every process runs its dataflow (threads: a thread per domain)",
    )
    ap.add_argument("--out", default=None, help="default: benches/results/coherence[-DOMAINS].json")
    args = ap.parse_args(argv)
    opts = {"domains": args.domains}
    suffix = "" if args.domains == "inline" else f"-{args.domains}"
    args.out = args.out or str(RESULTS / f"coherence{suffix}.json")
    tmp = tempfile.mkdtemp(prefix="noria-coherence-")
    path = os.path.join(tmp, "shared.db")
    _setup(path)
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "domains": args.domains,
        "delay": measure_delay(path, args.samples, args.rate, opts),
        "writes_per_s": measure_writes(tmp, args.writes, opts),
        "reader": measure_reads(path, args.seconds, opts),
    }
    print(json.dumps(result, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

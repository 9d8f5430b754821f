"""Cached reads with and without a saturating write stream, inline vs threaded writes, and the
cost of read-your-writes. Writes benches/results/concurrency.json.

    python benches/concurrency.py [--stories 10000] [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time

from hdrh.histogram import HdrHistogram

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import noria_py  # noqa: E402

Q = (
    "SELECT s.id, s.title, COUNT(v.user_id) AS votes FROM stories s LEFT JOIN votes v "
    "ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
INS = "INSERT INTO votes VALUES (?, ?)"


def build(n: int, **options):
    conn = noria_py.connect(**options)
    conn.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(40))")
    conn.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    conn.engine.load_rows("stories", None, [(i, f"story {i}") for i in range(n)])
    rng = random.Random(1)
    conn.engine.load_rows(
        "votes", None, [(rng.randrange(1000), rng.randrange(n)) for _ in range(5 * n)]
    )
    for i in range(n):  # warm every key: the read side measures cached reads only
        conn.execute(Q, (i,))
    return conn


def read_loop(conn, n, stop, hist, counter, seed):
    rng = random.Random(seed)
    cur = conn.cursor()
    done = 0
    while time.monotonic() < stop:
        k = rng.randrange(n)
        t0 = time.perf_counter_ns()
        cur.execute(Q, (k,))
        cur.fetchall()
        hist.record_value(max(1, (time.perf_counter_ns() - t0) // 1000))
        done += 1
    counter.append(done)


def write_loop(conn, n, stop, counter, seed):
    rng = random.Random(seed)
    cur = conn.cursor()
    done = 0
    while time.monotonic() < stop:
        cur.execute(INS, (rng.randrange(1000), rng.randrange(n)))
        done += 1
    counter.append(done)


def reads(conn, n, seconds, readers, with_writer):
    hist = HdrHistogram(1, 10_000_000, 3)
    counts: list = []
    wcounts: list = []
    stop = time.monotonic() + seconds
    ts = [
        threading.Thread(target=read_loop, args=(conn, n, stop, hist, counts, i))
        for i in range(readers)
    ]
    if with_writer:
        ts.append(threading.Thread(target=write_loop, args=(conn, n, stop, wcounts, 99)))
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {
        "reads_per_s": round(sum(counts) / seconds, 1),
        "p50_us": hist.get_value_at_percentile(50),
        "p99_us": hist.get_value_at_percentile(99),
        "writes_per_s": round(sum(wcounts) / seconds, 1) if with_writer else 0,
    }


def write_rate(conn, n, count):
    rng = random.Random(5)
    rows = [(rng.randrange(1000), rng.randrange(n)) for _ in range(count)]
    t = time.perf_counter()
    for r in rows:
        conn.execute(INS, r)
    conn.engine.sync()
    return round(count / (time.perf_counter() - t), 1)


def ryw_latency(conn, n, count, ryw):
    cur = conn.cursor()
    cur.read_your_writes = ryw
    hist = HdrHistogram(1, 10_000_000, 3)
    rng = random.Random(7)
    for _ in range(count):
        k = rng.randrange(n)
        t0 = time.perf_counter_ns()
        cur.execute(INS, (1, k))
        cur.execute(Q, (k,))
        cur.fetchall()
        hist.record_value(max(1, (time.perf_counter_ns() - t0) // 1000))
    return {"p50_us": hist.get_value_at_percentile(50), "p99_us": hist.get_value_at_percentile(99)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--stories", type=int, default=10000)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--writes", type=int, default=5000)
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "concurrency.json")
    )
    a = ap.parse_args()
    out = {"stories": a.stories, "seconds": a.seconds, "readers": a.readers}
    modes = {
        "inline": {"domains": "inline"},
        "threads": {"domains": "threads", "upqueries": "direct"},  # one dataflow thread
        # every domain on its own thread, upqueries as messages between them
        "domain_threads": {"domains": "threads"},
    }
    for mode, options in modes.items():
        conn = build(a.stories, **options)
        alone = reads(conn, a.stories, a.seconds, a.readers, False)
        busy = reads(conn, a.stories, a.seconds, a.readers, True)
        out[mode] = {
            "reads_alone": alone,
            "reads_under_writes": busy,
            "read_ratio_under_writes": round(busy["reads_per_s"] / alone["reads_per_s"], 3),
            "single_thread_writes_per_s": write_rate(conn, a.stories, a.writes),
        }
        if mode != "inline":
            out[mode]["write_then_read_eventual"] = ryw_latency(conn, a.stories, 2000, False)
            out[mode]["write_then_read_ryw"] = ryw_latency(conn, a.stories, 2000, True)
        conn.close()
        print(mode, json.dumps(out[mode]))
    out["read_ratio_under_writes"] = out["threads"]["read_ratio_under_writes"]
    out["threaded_over_inline_writes"] = round(
        out["threads"]["single_thread_writes_per_s"] / out["inline"]["single_thread_writes_per_s"],
        3,
    )
    out["domain_threads_over_threads_writes"] = round(
        out["domain_threads"]["single_thread_writes_per_s"]
        / out["threads"]["single_thread_writes_per_s"],
        3,
    )
    out["domain_threads_read_ratio_under_writes"] = out["domain_threads"]["read_ratio_under_writes"]
    out["loadavg_1min"] = os.getloadavg()[0]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps({k: v for k, v in out.items() if not isinstance(v, dict)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Range reads: noria_py's range readers against SQLite with an index, same process, same data.

One table of timestamped events, ``events(id, k, ts, v)``: ``--rows`` rows, ``k`` uniform over
``--keys`` keys, ``ts`` increasing with ``id``. Four queries:

    key       SELECT id, ts, v FROM events WHERE k = ? AND ts BETWEEN ? AND ?
    page      SELECT id, ts FROM events WHERE ts > ? ORDER BY ts LIMIT 10
    agg       SELECT COUNT(*), MIN(v), MAX(v) FROM events WHERE k = ? AND ts BETWEEN ? AND ?
    distinct  SELECT DISTINCT k FROM events WHERE ts BETWEEN ? AND ?

``agg`` and ``distinct`` keep a range reader over the rows beneath the aggregate (DISTINCT) and
compute it per read over the rows of the range (``noria_py/dataflow/post_lookup.py``).

Reads favour hot keys and recent events, as a dashboard's do: ``key`` reads choose ``k`` from a
Zipf(``--zipf``) distribution (hot keys spread over the key space) and a window of ``--window``
of the time span ending at one of 100 positions counted back from the newest event (Zipf: the
latest window is the most read), and ``agg`` reads are the same as ``key`` reads;
``distinct`` reads take a window of 50 events ending where a ``page`` read starts; ``page`` reads start at one of 1,000 positions (one every
``rows / 1000`` events), Zipf from the newest backwards. SQLite answers the same statements with indexes on ``(k, ts)`` and ``(ts)``.

The engine runs twice on the same data, each time with a fresh connection: partial state (the
default: each key's reader fills only the ranges that are read) and full state
(``partial=False``). For each query and mode: a first (cold) pass over the read sequence, then
``--rounds`` rounds alternating engine and SQLite; the best round of each counts, and each
ratio compares a mode with the SQLite rounds it alternated with (same machine load). The memory
figures are ``graph.state_bytes()`` after the reads: ``partial_range_bytes`` (ranges filled on
demand) against ``full_bytes`` (everything materialized). Then ``--writes`` random inserts,
updates and deletes go to both databases, and a sample of reads is compared.

    python benches/ranges.py                         # 100k rows, 1000 keys, 50k reads per pass
    python benches/ranges.py --rows 3000 --keys 30 --reads 2000 --rounds 1   # smoke size

Results go to benches/results/ranges.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import bisect
import gc
import itertools
import json
import os
import platform
import random
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import noria_py
from noria_py.dataflow.post_lookup import PostLookup

RESULTS = Path(__file__).resolve().parent / "results"

ENGINE_SCHEMA = (
    "CREATE TABLE events (id INT PRIMARY KEY, k INT NOT NULL, ts INT NOT NULL, v DOUBLE)"
)
SQLITE_SCHEMA = [
    "CREATE TABLE events (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, ts INTEGER NOT NULL, v REAL)",
    "CREATE INDEX events_k_ts ON events (k, ts)",
    "CREATE INDEX events_ts ON events (ts)",
]
INSERT = "INSERT INTO events (id, k, ts, v) VALUES (?, ?, ?, ?)"
QUERIES = {
    "key": "SELECT id, ts, v FROM events WHERE k = ? AND ts BETWEEN ? AND ?",
    "page": "SELECT id, ts FROM events WHERE ts > ? ORDER BY ts LIMIT 10",
    "agg": "SELECT COUNT(*), MIN(v), MAX(v) FROM events WHERE k = ? AND ts BETWEEN ? AND ?",
    "distinct": "SELECT DISTINCT k FROM events WHERE ts BETWEEN ? AND ?",
}
UNORDERED = ("key", "distinct")  # compared as multisets
TARGETS = {"range_read_ratio_min": 5.0}
TS_STEP = 10  # ts of row i is about i * TS_STEP
PROXIED_READS = 300


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=100_000, help="events to load (default 100000)")
    p.add_argument("--keys", type=int, default=1000, help="distinct k values (default 1000)")
    p.add_argument("--reads", type=int, default=50_000, help="reads per pass (default 50000)")
    p.add_argument(
        "--window",
        type=float,
        default=0.1,
        help="width of a key read's ts window, as a fraction of the time span (default 0.1)",
    )
    p.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent of reads (default 1.1)")
    p.add_argument(
        "--rounds", type=int, default=5, help="measured rounds; the best one counts (default 5)"
    )
    p.add_argument(
        "--writes", type=int, default=2000, help="writes before the final check (default 2000)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "ranges.json")
    return p.parse_args(argv)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Zipf:
    """Seeded sampler of [0, n) with P(i) proportional to 1 / (i + 1) ** s (inverse CDF)."""

    def __init__(self, n: int, s: float, rng: random.Random):
        self.cdf = list(itertools.accumulate((i + 1) ** -s for i in range(n)))
        self.total = self.cdf[-1]
        self.rng = rng
        self.n = n

    def __call__(self) -> int:
        return min(bisect.bisect_left(self.cdf, self.rng.random() * self.total), self.n - 1)


def make_rows(args: argparse.Namespace) -> list[tuple]:
    rng = random.Random(args.seed)
    return [
        (i, rng.randrange(args.keys), i * TS_STEP + rng.randrange(TS_STEP), round(rng.random(), 6))
        for i in range(args.rows)
    ]


def make_reads(args: argparse.Namespace) -> dict[str, list[tuple]]:
    rng = random.Random(args.seed + 1)
    span = args.rows * TS_STEP
    width = int(span * args.window)
    # hot keys (shuffled, so they are spread over the key space) and recent windows
    keys = list(range(args.keys))
    rng.shuffle(keys)
    key_of = Zipf(args.keys, args.zipf, rng)
    ends = 100
    end_of = Zipf(ends, args.zipf, rng)
    positions = 1000
    page_of = Zipf(positions, args.zipf, rng)
    key_reads = []
    for _ in range(args.reads):
        hi = span - end_of() * (span - width) // ends
        key_reads.append((keys[key_of()], hi - width, hi))
    page_reads = [(span - (page_of() + 1) * span // positions,) for _ in range(args.reads)]
    distinct_reads = [(p - 50 * TS_STEP, p) for (p,) in page_reads]
    return {"key": key_reads, "page": page_reads, "agg": key_reads, "distinct": distinct_reads}


def read_pass(cur, sql: str, params: list[tuple]) -> tuple[float, int]:
    """Seconds to run ``sql`` with every parameter tuple, fetching all rows; rows fetched."""
    execute = cur.execute
    n = 0
    start = time.perf_counter()
    for p in params:
        execute(sql, p)
        n += len(cur.fetchall())
    return time.perf_counter() - start, n


def writes(rng: random.Random, args: argparse.Namespace, next_id: int) -> list[tuple]:
    """Inserts (in and out of read ranges), ts updates and deletes."""
    out = []
    for _ in range(args.writes):
        r = rng.random()
        if r < 0.6:
            ts = rng.randrange(args.rows * TS_STEP)
            out.append(("ins", (next_id, rng.randrange(args.keys), ts, 0.5)))
            next_id += 1
        elif r < 0.85:
            out.append(("upd", (rng.randrange(args.rows * TS_STEP), rng.randrange(args.rows))))
        else:
            out.append(("del", (rng.randrange(args.rows),)))
    return out


def apply_writes(db, ws) -> None:
    for kind, params in ws:
        if kind == "ins":
            db.execute(INSERT, params)
        elif kind == "upd":
            db.execute("UPDATE events SET ts = ? WHERE id = ?", params)
        else:
            db.execute("DELETE FROM events WHERE id = ?", params)


def range_stats(conn) -> dict:
    """How much of each range reader is filled: keys, rows, intervals."""
    out = {}
    for node in conn.engine.graph.nodes.values():
        if node.kind != "reader":
            continue
        keys, rows = node.state_size()
        filled = getattr(node, "filled", {})
        out[f"reader {node.id}"] = {
            "describe": node.describe(),
            "materialization": node.materialization,
            "keys": keys,
            "rows": rows,
            "intervals": sum(len(s) for s in filled.values()),
            "upqueries": getattr(node, "upqueries", 0),
            "upquery_rows": getattr(node, "upquery_rows", 0),
        }
    return out


def run_mode(mode: str, args, rows, reads, db: sqlite3.Connection) -> tuple[dict, object]:
    options = {} if mode == "partial" else {"partial": False}
    conn = noria_py.connect(**options)
    cur = conn.cursor()
    cur.execute(ENGINE_SCHEMA)
    start = time.perf_counter()
    for part in range(0, len(rows), 20_000):
        cur.executemany(INSERT, rows[part : part + 20_000])
    load_s = time.perf_counter() - start
    scur = db.cursor()
    result: dict = {"load_s": round(load_s, 2)}
    for name, sql in QUERIES.items():
        result[name] = measure(cur, scur, sql, reads[name], args)
        log(f"  {mode} {name}: {result[name]['reads_per_s']:,.0f} reads/s warm")
    # the same reads of the aggregate and DISTINCT queries, each answer computed from the
    # range's rows (a read repeated on unchanged rows is otherwise answered from the memo)
    size = PostLookup.MEMO_SIZE
    PostLookup.MEMO_SIZE = 0
    try:
        for entry in conn.engine.queries.values():
            if entry.compiled is not None and entry.compiled.post is not None:
                entry.compiled.post.memo.clear()
        for name in ("agg", "distinct"):
            result[f"{name}_computed"] = measure(cur, scur, QUERIES[name], reads[name], args)
            log(f"  {mode} {name}, no memo: {result[name + '_computed']['reads_per_s']:,.0f}")
    finally:
        PostLookup.MEMO_SIZE = size
    result["state_bytes"] = conn.engine.graph.state_bytes()
    result["readers"] = range_stats(conn)
    result["explain"] = {
        name: [" | ".join(map(str, r)) for r in cur.execute("EXPLAIN " + sql)]
        for name, sql in QUERIES.items()
    }
    return result, conn


def measure(cur, scur, sql: str, reads: list, args) -> dict:
    """One query's reads: installed, a cold pass, then rounds alternating engine and SQLite."""
    start = time.perf_counter()
    cur.execute(sql, reads[0]).fetchall()  # installs the query
    install_ms = (time.perf_counter() - start) * 1000
    cold_s, nrows = read_pass(cur, sql, reads)
    # what exists now lives through the timed rounds: keep the garbage collector's full
    # passes over it out of them (they would land in whichever loop is running)
    gc.collect()
    gc.freeze()
    times, sqlite_times = [], []
    for _ in range(args.rounds):
        times.append(read_pass(cur, sql, reads)[0])
        sqlite_times.append(read_pass(scur, sql, reads)[0])
    gc.unfreeze()
    n = len(reads)
    return {
        "install_ms": round(install_ms, 1),
        "cold_reads_per_s": round(n / cold_s, 1),
        "reads_per_s": round(n / min(times), 1),
        "reads_per_s_rounds": [round(n / t, 1) for t in times],
        "rows_per_read": round(nrows / n, 2),
        # SQLite's rounds alternate with this mode's: the ratio compares the two under the
        # same machine load
        "sqlite_reads_per_s": round(n / min(sqlite_times), 1),
        "sqlite_reads_per_s_rounds": [round(n / t, 1) for t in sqlite_times],
        "ratio": round(min(sqlite_times) / min(times), 3),
    }


def proxied_rates(args, rows, reads) -> dict:
    """Reads per second of the aggregate and DISTINCT queries answered by base storage, as
    they were before range reads kept them (an engine with ``dataflow=False``): the best of
    ``--rounds`` passes over the first ``PROXIED_READS`` reads."""
    conn = noria_py.connect(dataflow=False)
    cur = conn.cursor()
    cur.execute(ENGINE_SCHEMA)
    cur.executemany(INSERT, rows)
    out = {}
    for name in ("agg", "distinct"):
        sample = reads[name][:PROXIED_READS]  # base storage scans the table for each
        best = min(read_pass(cur, QUERIES[name], sample)[0] for _ in range(args.rounds))
        out[name] = round(len(sample) / best, 1)
        log(f"  proxied {name}: {out[name]:,.0f} reads/s")
    conn.close()
    return out


def mismatches(conn, db, reads: dict, sample: int, rng: random.Random) -> dict:
    bad = {}
    for name, sql in QUERIES.items():
        ps = rng.sample(reads[name], min(sample, len(reads[name])))
        wrong = 0
        for p in ps:
            got = [tuple(r) for r in conn.execute(sql, p).fetchall()]
            want = db.execute(sql, p).fetchall()
            if name in UNORDERED:
                got, want = sorted(got), sorted(want)
            wrong += got != want
        bad[name] = wrong
    return bad


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()[0]
    log(f"generating {args.rows} events over {args.keys} keys")
    rows = make_rows(args)
    reads = make_reads(args)
    db = sqlite3.connect(":memory:", isolation_level=None)
    for stmt in SQLITE_SCHEMA:
        db.execute(stmt)
    db.execute("BEGIN")
    db.executemany(INSERT, rows)
    db.execute("COMMIT")

    modes = {}
    conns = {}
    for mode in ("partial", "full"):
        log(f"{mode} state")
        modes[mode], conns[mode] = run_mode(mode, args, rows, reads, db)
        if mode == "partial":
            conns[mode].close()  # its memory figure is taken; the full run needs the room
    proxied = proxied_rates(args, rows, reads)

    # writes, then answers compared with SQLite (on a fresh partial connection and the full one)
    rng = random.Random(args.seed + 2)
    ws = writes(rng, args, args.rows)
    check = noria_py.connect()
    check.execute(ENGINE_SCHEMA)
    check.executemany(INSERT, rows)
    for name, sql in QUERIES.items():  # fill some ranges before the writes
        for p in reads[name][:200]:
            check.execute(sql, p).fetchall()
    for target in (check, conns["full"]):
        apply_writes(target, ws)
    apply_writes(db, ws)
    wrong = {
        "partial": mismatches(check, db, reads, 300, random.Random(args.seed + 3)),
        "full": mismatches(conns["full"], db, reads, 300, random.Random(args.seed + 3)),
    }
    check.close()
    conns["full"].close()

    held = {
        mode: sum(r["rows"] for r in modes[mode]["readers"].values())
        for mode in ("partial", "full")
    }
    partial_bytes = modes["partial"]["state_bytes"]
    full_bytes = modes["full"]["state_bytes"]
    ratio = {name: modes["partial"][name]["ratio"] for name in QUERIES}
    result = {
        "range_read_ratio": ratio["key"],
        "page_read_ratio": ratio["page"],
        "range_aggregate_ratio": ratio["agg"],
        "range_distinct_ratio": ratio["distinct"],
        "range_aggregate_ratio_computed": modes["partial"]["agg_computed"]["ratio"],
        "range_distinct_ratio_computed": modes["partial"]["distinct_computed"]["ratio"],
        "proxied_reads_per_s": proxied,
        # the partial engine's reads (memo off) over the same reads answered by base storage
        "over_proxied_computed": {
            name: round(modes["partial"][f"{name}_computed"]["reads_per_s"] / proxied[name], 2)
            for name in proxied
        },
        "range_read_ratio_full": modes["full"]["key"]["ratio"],
        "page_read_ratio_full": modes["full"]["page"]["ratio"],
        "partial_range_bytes": partial_bytes,
        "full_bytes": full_bytes,
        "memory_ratio": round(partial_bytes / full_bytes, 4) if full_bytes else None,
        "rows_held": held,
        "targets": TARGETS,
        "range_read_ratio_within_target": ratio["key"] >= TARGETS["range_read_ratio_min"],
        "partial": modes["partial"],
        "full": modes["full"],
        "answer_mismatches_after_writes": wrong,
        "queries": QUERIES,
        "rows": args.rows,
        "keys": args.keys,
        "reads": args.reads,
        "window": args.window,
        "zipf": args.zipf,
        "rounds": args.rounds,
        "writes": args.writes,
        "seed": args.seed,
        "loadavg_1min_start": round(load_start, 2),
        "loadavg_1min_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "sqlite_version": sqlite3.sqlite_version,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "note": "reads_per_s: execute + fetchall per read, best of --rounds rounds alternating"
        " engine and SQLite (all rounds in *_rounds), with the garbage collector's old objects"
        " frozen; cold_reads_per_s is the first pass after"
        " the query was installed (partial state fills there). range_read_ratio: the key query,"
        " partial engine over SQLite in the rounds alternating with it; page_read_ratio: the"
        " page query; range_aggregate_ratio and range_distinct_ratio: the agg and distinct"
        " queries (an aggregate or DISTINCT computed per read from a range reader's rows, a"
        " read repeated on unchanged rows answered from the memo); *_computed: the same reads"
        " with the memo off (every answer computed from the range's rows)."
        " *_bytes: the engine's"
        " graph.state_bytes() after the reads.",
    }
    db.close()
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{args.rows} events, {args.keys} keys, {args.reads} reads per pass")
    print(f"{'reads/s':22}{'engine':>12}{'sqlite3':>12}{'ratio':>8}")
    for mode in ("partial", "full"):
        for name in [*QUERIES, "agg_computed", "distinct_computed"]:
            m = modes[mode][name]
            print(
                f"{name + ' (' + mode + ')':<22}{m['reads_per_s']:>12,.0f}"
                f"{m['sqlite_reads_per_s']:>12,.0f}{m['ratio']:>8.2f}"
            )
    print(f"proxied (dataflow=False) reads/s: {proxied}")
    print(
        f"state bytes: partial {partial_bytes:,}, full {full_bytes:,}"
        f" (ratio {result['memory_ratio']})"
    )
    if any(v for m in wrong.values() for v in m.values()):
        print(f"WRONG ANSWERS after writes: {wrong}")
    print(f"1-minute load average: {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()

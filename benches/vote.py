"""Partial vs full state on the vote workload: memory held and read latency under Zipf skew.

Stories and votes, read through the "story with its vote count" query keyed on the story id:

    SELECT s.id, s.title, COUNT(v.story_id) AS votes FROM stories s
    LEFT JOIN votes v ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title

Every story starts with ``--votes-per-story`` votes (2 by default, from distinct users). After
loading, one seeded sequence of ``--ops`` operations runs: 99% reads of the query and 1% vote
inserts (``--write-fraction``), both choosing the story id from a Zipf(1.15) distribution over
[0, N). The same data and the same sequence run in three fresh processes:

* ``full``    ``connect(partial=False)``: every materialization is computed when the query is
  installed;
* ``partial`` ``connect(partial=True)``: state starts empty and fills on reader misses;
* ``budget``  partial with ``memory_limit`` set to ``--budget-fraction`` of the partial run's
  ``state_bytes``, so the evictor must keep the state bounded.

    python benches/vote.py                       # 1M stories, 2M votes, 200k ops
    python benches/vote.py --stories 100000 --ops 50000

Results go to benches/results/vote.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

RESULTS = Path(__file__).resolve().parent / "results"

SCHEMA = [
    "CREATE TABLE stories (id INT NOT NULL PRIMARY KEY, title VARCHAR(150) NOT NULL)",
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)",
]
VOTE_SQL = (
    "SELECT s.id, s.title, COUNT(v.story_id) AS votes FROM stories s"
    " LEFT JOIN votes v ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
INSERT_VOTE = "INSERT INTO votes (user_id, story_id) VALUES (?, ?)"
TARGETS = {"memory_ratio_max": 0.33}


# --- workload ---------------------------------------------------------------------------------


class Zipf:
    """Seeded Zipf(s) sampler over the integers [0, n): P(k) is proportional to 1 / (k + 1)^s.

    Inverse CDF over precomputed cumulative weights; the uniform draws come from
    ``random.Random(seed)`` and the search uses numpy when it is installed, ``bisect`` otherwise,
    so both paths give the same sequence for the same seed.
    """

    def __init__(self, n: int, s: float, seed: int):
        self.n = n
        self.s = s
        self.rng = random.Random(seed)
        try:
            import numpy as np
        except ImportError:
            np = None
        self.np = np
        if np is not None:
            cdf = np.cumsum(np.arange(1, n + 1, dtype=np.float64) ** -s)
            self.total = float(cdf[-1])
            self.cdf = cdf
        else:
            self.cdf = list(itertools.accumulate((k + 1) ** -s for k in range(n)))
            self.total = self.cdf[-1]

    @property
    def method(self) -> str:
        return "numpy.searchsorted" if self.np is not None else "bisect"

    def sample(self, count: int) -> list[int]:
        draws = [self.rng.random() * self.total for _ in range(count)]
        last = self.n - 1
        if self.np is not None:
            idx = self.np.searchsorted(self.cdf, self.np.array(draws), side="right")
            return [min(int(i), last) for i in idx]
        return [min(bisect.bisect_right(self.cdf, u), last) for u in draws]


def make_ops(args: argparse.Namespace) -> list[tuple[bool, int]]:
    """The op sequence: (is_write, story id) pairs."""
    zipf = Zipf(args.stories, args.zipf, args.seed)
    keys = zipf.sample(args.ops)
    rng = random.Random(args.seed + 1)
    return [(rng.random() < args.write_fraction, k) for k in keys]


def story_rows(n: int) -> list[tuple]:
    return [(i, f"story number {i}") for i in range(n)]


def vote_rows(n: int, per_story: int) -> list[tuple]:
    """``per_story`` votes on every story, by users 0..per_story-1 (distinct pairs)."""
    return [(k // n, k % n) for k in range(n * per_story)]


# --- measuring --------------------------------------------------------------------------------


def rss_mb() -> float:
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cache_row(conn, sql: str) -> tuple:
    """The SHOW CACHES row (name, query, status, keys, hits, misses, bytes) of ``sql``."""
    rows = [tuple(r) for r in conn.execute("SHOW CACHES").fetchall()]
    for r in rows:
        if " ".join(str(r[1]).split()) == " ".join(sql.split()):
            return r
    raise RuntimeError(f"query not in SHOW CACHES: {sql!r} (rows: {rows})")


def histogram():
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(1, 60_000_000, 3)  # microseconds, 1 us .. 60 s


def latency_summary(hist) -> dict:
    return {
        "p50_ms": hist.get_value_at_percentile(50) / 1000,
        "p95_ms": hist.get_value_at_percentile(95) / 1000,
        "p99_ms": hist.get_value_at_percentile(99) / 1000,
        "max_ms": hist.get_max_value() / 1000,
        "mean_ms": round(hist.get_mean_value() / 1000, 4),
    }


def run_ops(conn, ops: list[tuple[bool, int]], first_user: int, hist) -> dict:
    """Run the op sequence; read latencies go into ``hist`` (us). Returns counts and timings."""
    cur = conn.cursor()
    execute, fetchall = cur.execute, cur.fetchall
    clock = time.perf_counter_ns
    record = hist.record_value
    reads = writes = 0
    read_ns = write_ns = 0
    user = first_user
    start = clock()
    for is_write, story in ops:
        if is_write:
            t0 = clock()
            execute(INSERT_VOTE, (user, story))
            write_ns += clock() - t0
            user += 1
            writes += 1
        else:
            t0 = clock()
            execute(VOTE_SQL, (story,))
            fetchall()
            dt = clock() - t0
            read_ns += dt
            record(max(1, dt // 1000))
            reads += 1
    wall_s = (clock() - start) / 1e9
    return {
        "reads": reads,
        "writes": writes,
        "reads_per_s": round(reads / (read_ns / 1e9), 1) if read_ns else None,
        "writes_per_s": round(writes / (write_ns / 1e9), 1) if write_ns else None,
        "ops_per_s": round(len(ops) / wall_s, 1),
        "ops_wall_s": round(wall_s, 3),
    }


# --- one mode, in its own process ---------------------------------------------------------------


def run_mode(args: argparse.Namespace) -> dict:
    import noria_py

    mode = args.mode
    options: dict = {"partial": mode != "full"}
    if mode == "budget":
        options["memory_limit"] = args.budget
    log(f"[{mode}] generating data and ops")
    ops = make_ops(args)
    stories = story_rows(args.stories)
    votes = vote_rows(args.stories, args.votes_per_story)
    rss_datagen = rss_mb()

    conn = noria_py.connect(**options)
    for stmt in SCHEMA:
        conn.execute(stmt)
    t0 = time.perf_counter()
    conn.engine.load_rows("stories", ["id", "title"], stories)
    conn.engine.load_rows("votes", ["user_id", "story_id"], votes)
    load_s = time.perf_counter() - t0
    del stories, votes
    rss_loaded = rss_mb()
    log(f"[{mode}] loaded in {load_s:.1f}s, rss {rss_loaded:.0f} MB")

    # The first execution installs the query (and, fully materialized, computes all its state).
    t0 = time.perf_counter()
    conn.execute(VOTE_SQL, (ops[0][1],)).fetchall()
    install_ms = (time.perf_counter() - t0) * 1000
    log(f"[{mode}] installed in {install_ms:.0f} ms; running {len(ops)} ops")
    before = cache_row(conn, VOTE_SQL)

    hist = histogram()
    first_user = args.votes_per_story + 1000
    counts = run_ops(conn, ops, first_user, hist)
    after = cache_row(conn, VOTE_SQL)
    hits, misses = after[4] - before[4], after[5] - before[5]
    state_bytes = conn.engine.graph.state_bytes()
    evictor = getattr(conn.engine.graph, "evictor", None)
    rss_end = rss_mb()

    # Answers for a fixed sample of stories (hot ones first), compared across modes.
    rng = random.Random(args.seed + 2)
    check = list(range(min(20, args.stories))) + rng.sample(
        range(args.stories), min(200, args.stories)
    )
    answers = [[list(r) for r in conn.execute(VOTE_SQL, (k,)).fetchall()] for k in check]
    explain = [" | ".join(map(str, r)) for r in conn.execute("EXPLAIN " + VOTE_SQL)]
    conn.close()

    result = {
        "mode": mode,
        "load_s": round(load_s, 2),
        "install_ms": round(install_ms, 1),
        **counts,
        **latency_summary(hist),
        "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None,
        "hits": hits,
        "misses": misses,
        "reader_keys": after[3],
        "reader_bytes": after[6],
        "state_bytes": state_bytes,
        "rss_mb": round(rss_end, 1),
        "rss_loaded_mb": round(rss_loaded, 1),
        "rss_state_mb": round(rss_end - rss_loaded, 1),
        "rss_after_datagen_mb": round(rss_datagen, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "explain": explain,
        "answers": answers,
    }
    if evictor is not None:
        result.update(
            budget_bytes=evictor.budget,
            evictor_used_bytes=evictor.used,
            evictions=evictor.evictions,
        )
    return result


def spawn(args: argparse.Namespace, mode: str, budget: int | None = None) -> dict:
    """Run one mode in a fresh interpreter (so its RSS and heap are its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{mode}.json"
        cmd = [
            sys.executable,
            __file__,
            "--mode",
            mode,
            "--child-out",
            str(out),
            "--stories",
            str(args.stories),
            "--votes-per-story",
            str(args.votes_per_story),
            "--ops",
            str(args.ops),
            "--write-fraction",
            str(args.write_fraction),
            "--zipf",
            str(args.zipf),
            "--seed",
            str(args.seed),
        ]
        if budget is not None:
            cmd += ["--budget", str(budget)]
        subprocess.run(cmd, check=True)
        return json.loads(out.read_text())


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stories", type=int, default=1_000_000, help="stories (default 1M)")
    p.add_argument("--votes-per-story", type=int, default=2, help="initial votes per story (2)")
    p.add_argument("--ops", type=int, default=200_000, help="ops after loading (default 200k)")
    p.add_argument("--write-fraction", type=float, default=0.01, help="vote inserts (0.01)")
    p.add_argument("--zipf", type=float, default=1.15, help="Zipf exponent (1.15)")
    p.add_argument(
        "--budget-fraction",
        type=float,
        default=0.25,
        help="memory_limit of the budget run, as a fraction of the partial state_bytes (0.25)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "vote.json")
    p.add_argument("--mode", choices=["full", "partial", "budget"], help=argparse.SUPPRESS)
    p.add_argument("--budget", type=int, help=argparse.SUPPRESS)
    p.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.mode:
        args.child_out.write_text(json.dumps(run_mode(args)))
        return {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()[0]
    started = time.perf_counter()

    full = spawn(args, "full")
    partial = spawn(args, "partial")
    budget_bytes = max(1, int(partial["state_bytes"] * args.budget_fraction))
    budget = spawn(args, "budget", budget_bytes)
    runs = {"full": full, "partial": partial, "budget": budget}

    reference = full.pop("answers")
    mismatches = {}
    for name in ("partial", "budget"):
        got = runs[name].pop("answers")
        bad = [i for i, (a, b) in enumerate(zip(reference, got)) if a != b]
        mismatches[name] = len(bad)
    for name in ("partial", "budget"):
        if runs[name]["explain"] == full["explain"]:
            runs[name].pop("explain")

    ratio = partial["state_bytes"] / full["state_bytes"] if full["state_bytes"] else None
    rss_ratio = partial["rss_state_mb"] / full["rss_state_mb"] if full["rss_state_mb"] > 0 else None
    result = {
        "partial_state_bytes": partial["state_bytes"],
        "full_state_bytes": full["state_bytes"],
        "memory_ratio": round(ratio, 4) if ratio is not None else None,
        "rss_state_ratio": round(rss_ratio, 4) if rss_ratio is not None else None,
        "targets": TARGETS,
        "memory_ratio_within_target": ratio is not None and ratio <= TARGETS["memory_ratio_max"],
        "full": full,
        "partial": partial,
        "budget": budget,
        "answer_mismatches_vs_full": mismatches,
        "stories": args.stories,
        "votes_per_story": args.votes_per_story,
        "votes": args.stories * args.votes_per_story,
        "ops": args.ops,
        "write_fraction": args.write_fraction,
        "zipf_exponent": args.zipf,
        "zipf_sampler": Zipf(2, args.zipf, args.seed).method,
        "budget_fraction": args.budget_fraction,
        "seed": args.seed,
        "query": VOTE_SQL,
        "wall_s": round(time.perf_counter() - started, 1),
        "loadavg_1min_start": round(load_start, 2),
        "loadavg_1min_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "note": "each mode runs in its own process on the same data and op sequence."
        " reads_per_s: reads / time spent in reads (execute + fetchall); latencies are per read"
        " (HdrHistogram, us). hit_rate: reader hits / lookups during the ops (SHOW CACHES),"
        " excluding the installing read. state_bytes: graph.state_bytes() after the ops."
        " rss_state_mb: RSS after the ops minus RSS after loading the base tables."
        " budget: memory_limit = budget_fraction x partial state_bytes; the evictor accounts"
        " with its own per-key size estimate (evictor_used_bytes).",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{args.stories} stories, {args.stories * args.votes_per_story} votes, {args.ops} ops")
    head = f"{'':10}{'reads/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'hit rate':>10}"
    print(head + f"{'state MB':>10}{'RSS MB':>9}{'install ms':>12}")
    for name, r in runs.items():
        print(
            f"{name:10}{r['reads_per_s'] or 0:>10,.0f}{r['p50_ms']:>9.3f}{r['p95_ms']:>9.3f}"
            f"{r['p99_ms']:>9.3f}{r['hit_rate'] or 0:>10.3f}{r['state_bytes'] / 2**20:>10.1f}"
            f"{r['rss_mb']:>9.0f}{r['install_ms']:>12.0f}"
        )
    print(f"memory_ratio (partial/full state_bytes): {result['memory_ratio']}")
    print(f"budget run: {budget.get('evictions')} evictions, evictor used")
    print(f"  {budget.get('evictor_used_bytes')} of {budget.get('budget_bytes')} bytes")
    if any(mismatches.values()):
        print(f"WRONG ANSWERS vs full: {mismatches}")
    print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()

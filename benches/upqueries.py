"""Direct upqueries vs the message-passing dataflow, in one process on the same data.

``connect(upqueries="direct")`` (the default) computes a miss's fill in place, one recursive call
up the path; ``"messages"`` sends the upquery as request and response messages delivered FIFO
(``dataflow/domain.py``), the protocol the interleaving tests check under every message order.
With nothing else in flight the two give the same state; this measures what the messages cost:

- cold reads (every read a miss) of the vote query (stories LEFT JOIN votes, COUNT) and of a
  union view (votes and ratings summed per story), per mode;
- Zipf(1.15) reads with 10% vote inserts, with and without a memory budget (constant eviction).

    python benches/upqueries.py [--stories 20000] [--reads 20000]

Writes benches/results/upqueries.json: per mode and workload the seconds, and
``ratio_*`` = direct time / messages time (above 1: messages faster).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from pathlib import Path

import noria_py

RESULTS = Path(__file__).resolve().parent / "results"
SCHEMA = [
    "CREATE TABLE stories (id INT PRIMARY KEY, title TEXT)",
    "CREATE TABLE votes (user_id INT, story_id INT)",
    "CREATE TABLE ratings (user_id INT, story_id INT, stars INT)",
]
VOTE_SQL = (
    "SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v"
    " ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
UNION_SQL = (
    "SELECT story_id, SUM(r) FROM (SELECT story_id, 1 AS r FROM votes"
    " UNION ALL SELECT story_id, stars AS r FROM ratings) u WHERE story_id = ? GROUP BY story_id"
)


def zipf_keys(n: int, count: int, s: float, seed: int) -> list[int]:
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) ** s for i in range(n)]
    return rng.choices(range(n), weights=weights, k=count)


def build(mode: str, args, limit=None):
    conn = noria_py.connect(upqueries=mode, memory_limit=limit)
    for stmt in SCHEMA:
        conn.execute(stmt)
    rng = random.Random(args.seed)
    n = args.stories
    conn.engine.load_rows("stories", ["id", "title"], [(i, f"story {i}") for i in range(n)])
    conn.engine.load_rows(
        "votes", ["user_id", "story_id"], [(i, rng.randrange(n)) for i in range(n * 5)]
    )
    conn.engine.load_rows(
        "ratings",
        ["user_id", "story_id", "stars"],
        [(i, rng.randrange(n), rng.randint(1, 5)) for i in range(n * 2)],
    )
    return conn


def cold(mode: str, sql: str, args) -> float:
    conn = build(mode, args)
    cur = conn.cursor()
    keys = list(range(args.stories))
    random.Random(args.seed + 1).shuffle(keys)
    keys = keys[: args.reads]
    cur.execute(sql, (keys[0],))
    t0 = time.perf_counter()
    for k in keys[1:]:
        cur.execute(sql, (k,))
        cur.fetchall()
    dt = time.perf_counter() - t0
    conn.close()
    return dt


def mixed(mode: str, args, limit) -> float:
    conn = build(mode, args, limit)
    cur = conn.cursor()
    keys = zipf_keys(args.stories, args.reads, 1.15, args.seed + 2)
    rng = random.Random(args.seed + 3)
    cur.execute(VOTE_SQL, (0,))
    t0 = time.perf_counter()
    for i, k in enumerate(keys):
        if rng.random() < 0.1:
            cur.execute("INSERT INTO votes VALUES (?, ?)", (10**7 + i, k))
        else:
            cur.execute(VOTE_SQL, (k,))
            cur.fetchall()
    dt = time.perf_counter() - t0
    conn.close()
    return dt


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stories", type=int, default=20000)
    p.add_argument("--reads", type=int, default=20000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "upqueries.json")
    args = p.parse_args(argv)
    load0 = os.getloadavg()[0]
    res: dict = {"stories": args.stories, "reads": args.reads}
    for name, fn in (
        ("cold_vote", lambda m: cold(m, VOTE_SQL, args)),
        ("cold_union", lambda m: cold(m, UNION_SQL, args)),
        ("zipf_mixed", lambda m: mixed(m, args, None)),
        ("zipf_mixed_evicting", lambda m: mixed(m, args, "2MB")),
    ):
        times = {}
        for mode in ("direct", "messages", "direct", "messages"):  # alternate, keep the best
            t = fn(mode)
            times[mode] = min(times.get(mode, t), t)
        res[name] = {m: round(t, 3) for m, t in times.items()}
        res["ratio_" + name] = round(times["direct"] / times["messages"], 3)
        print(f"{name}: direct {times['direct']:.2f}s messages {times['messages']:.2f}s")
    res["loadavg_1min_start"] = round(load0, 2)
    res["loadavg_1min_end"] = round(os.getloadavg()[0], 2)
    res["python"] = platform.python_version()
    res["cpus"] = os.cpu_count()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"results: {args.out}")
    return res


if __name__ == "__main__":
    main()

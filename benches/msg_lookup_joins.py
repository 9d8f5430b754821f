"""The vote query's cold reads, hot reads and writes: direct upqueries vs the message scheduler,
with copying joins (the message scheduler's only joins before lookup joins ran under it) and
with lookup joins, in one process on the same data.

    SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v
    ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title

Configurations (``noria_py.connect`` options):

- ``direct``: ``upqueries="direct"`` (lookup joins, the default);
- ``messages_copying``: ``upqueries="messages", lookup_joins=False``;
- ``messages_lookup``: ``upqueries="messages"`` (lookup joins, now the default).

Each engine is loaded with ``--stories`` stories of ``--votes`` votes each; the configurations
take turns every ``--chunk`` operations within each measurement (the machine's load moves by
more than the differences measured). Per configuration: cold reads (each a miss on a story never
read), hot reads (``--hot`` filled keys read again and again), and writes (one vote inserted per
execute, keys warm). Reported in microseconds per operation (the best of ``--repeat`` runs).

    python benches/msg_lookup_joins.py [--stories 20000] [--votes 10] [--ops 5000]

Results: benches/results/msg_lookup_joins.json (``--out``).
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
VOTE_SQL = (
    "SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v"
    " ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
CONFIGS = {
    "direct": {"upqueries": "direct"},
    "messages_copying": {"upqueries": "messages", "lookup_joins": False},
    "messages_lookup": {"upqueries": "messages"},
}


def load(opts: dict, stories: int, votes: int):
    conn = noria_py.connect(**opts)
    cur = conn.cursor()
    cur.execute("CREATE TABLE stories (id INT PRIMARY KEY, title TEXT)")
    cur.execute("CREATE TABLE votes (id INT PRIMARY KEY, story_id INT)")
    cur.execute("CREATE INDEX votes_story ON votes (story_id)")
    cur.executemany("INSERT INTO stories VALUES (?, ?)", [(i, f"s{i}") for i in range(stories)])
    rows = [(i * votes + j, i) for i in range(stories) for j in range(votes)]
    cur.executemany("INSERT INTO votes VALUES (?, ?)", rows)
    cur.execute(VOTE_SQL, (0,))
    cur.fetchall()
    return conn, cur


def timed_turns(runs: dict, ops: dict, chunk: int) -> dict:
    """``runs[name](op)`` for every op of ``ops[name]``, taking turns every ``chunk`` ops;
    seconds per configuration."""
    spent = dict.fromkeys(runs, 0.0)
    n = len(next(iter(ops.values())))
    for start in range(0, n, chunk):
        for name, fn in runs.items():
            part = ops[name][start : start + chunk]
            t = time.perf_counter()
            for op in part:
                fn(op)
            spent[name] += time.perf_counter() - t
    return spent


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stories", type=int, default=20000)
    ap.add_argument("--votes", type=int, default=10)
    ap.add_argument("--ops", type=int, default=5000)
    ap.add_argument("--hot", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS / "msg_lookup_joins.json"))
    args = ap.parse_args(argv)
    best: dict = {}
    for rep in range(args.repeat):
        engines = {name: load(opts, args.stories, args.votes) for name, opts in CONFIGS.items()}
        rng = random.Random(rep)
        cold = rng.sample(range(1, args.stories), min(args.ops, args.stories - 1))
        hot = list(range(1, args.hot + 1))
        next_id = args.stories * args.votes

        def reader(cur):
            def read(key):
                cur.execute(VOTE_SQL, (key,))
                cur.fetchall()

            return read

        want = {}
        for name, (_conn, cur) in engines.items():
            cur.execute(VOTE_SQL, (cold[0],))
            want[name] = cur.fetchall()
        assert len({repr(v) for v in want.values()}) == 1, want
        results = {}
        runs = {name: reader(cur) for name, (_c, cur) in engines.items()}
        spent = timed_turns(runs, {n: cold[1:] for n in engines}, args.chunk)
        results["cold_us"] = {n: s / (len(cold) - 1) * 1e6 for n, s in spent.items()}
        for fn in runs.values():
            for k in hot:
                fn(k)
        hot_ops = [hot[i % len(hot)] for i in range(args.ops)]
        spent = timed_turns(runs, {n: hot_ops for n in engines}, args.chunk)
        results["hot_us"] = {n: s / len(hot_ops) * 1e6 for n, s in spent.items()}
        writes = [(next_id + i, rng.choice(hot)) for i in range(args.ops)]

        def writer(cur):
            def write(row):
                cur.execute("INSERT INTO votes VALUES (?, ?)", row)

            return write

        wruns = {name: writer(cur) for name, (_c, cur) in engines.items()}
        spent = timed_turns(wruns, {n: writes for n in engines}, args.chunk)
        results["write_us"] = {n: s / len(writes) * 1e6 for n, s in spent.items()}
        answers = set()
        for _name, (conn, cur) in engines.items():
            cur.execute(VOTE_SQL, (hot[0],))
            answers.add(repr(cur.fetchall()))
            conn.close()
        assert len(answers) == 1, answers
        for metric, per in results.items():
            slot = best.setdefault(metric, {})
            for name, us in per.items():
                slot[name] = min(slot.get(name, us), us)
    out = {
        "bench": "msg_lookup_joins",
        "query": VOTE_SQL,
        "stories": args.stories,
        "votes_per_story": args.votes,
        "ops": args.ops,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "us_per_op_best": best,
        "ratio_messages_lookup_vs_direct": {
            m: best[m]["messages_lookup"] / best[m]["direct"] for m in best
        },
        "ratio_messages_lookup_vs_copying": {
            m: best[m]["messages_lookup"] / best[m]["messages_copying"] for m in best
        },
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()

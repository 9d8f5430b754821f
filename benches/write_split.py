"""Where a write's time goes: one-row vote inserts with and without the vote view installed,
split into base storage's insert, the dataflow and the rest of the engine's path, against the
same inserts into stdlib ``sqlite3`` (the schema and data of ``benches/misses.py``).

The engine's ``SQLiteStorage.insert_rows`` and ``insert_one`` (the cursor's one-row INSERT,
``Engine.insert_now``) and ``Graph.propagate`` are timed by wrapping them;
the sides alternate every ``--chunk`` inserts. With the view, half of the stories are cached
(read once) before the inserts, so about half the votes reach a cached story.

    python benches/write_split.py [--stories 20000] [--votes 50] [--writes 30000]

Writes benches/results/write_split.json (microseconds per insert).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import misses as M  # noqa: E402

from noria_py.dataflow.graph import Graph  # noqa: E402
from noria_py.storage.sqlite import SQLiteStorage  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "write_split.json"


def measure(view: bool, args: argparse.Namespace) -> dict:
    stories, votes = M.story_rows(args.stories), M.vote_rows(args.stories, args.votes)
    conn, _ = M.build_noria(stories, votes)
    db, _ = M.build_sqlite(stories, votes)
    cur, scur = conn.cursor(), db.cursor()
    if view:
        M.time_reads(cur, list(range(0, args.stories, 2)))
    spent = {"insert": 0.0, "dataflow": 0.0}
    insert, insert_one = SQLiteStorage.insert_rows, SQLiteStorage.insert_one
    propagate = Graph.propagate
    clock = time.perf_counter

    def timed(fn, part: str):
        """``fn``, its time added to ``spent[part]``."""

        def run(self, *a):
            t = clock()
            try:
                return fn(self, *a)
            finally:
                spent[part] += clock() - t

        return run

    rng = random.Random(args.seed)
    rows = [(M.FIRST_NEW_USER + i, rng.randrange(args.stories)) for i in range(args.writes)]
    noria = lite = 0.0
    SQLiteStorage.insert_rows = timed(insert, "insert")
    SQLiteStorage.insert_one = timed(insert_one, "insert")
    Graph.propagate = timed(propagate, "dataflow")
    try:
        for i in range(0, len(rows), args.chunk):
            part = rows[i : i + args.chunk]
            noria += M.time_writes(cur, part)
            lite += M.time_writes(scur, part)
    finally:
        SQLiteStorage.insert_rows, Graph.propagate = insert, propagate
        SQLiteStorage.insert_one = insert_one
    M.check_answers(cur, scur, sorted({s for _u, s in rows[:50]}), "after the writes")
    conn.close()
    n = len(rows)
    us = 1e6 / n
    return {
        "noria_us": round(noria * us, 1),
        "storage_insert_us": round(spent["insert"] * us, 1),
        "dataflow_us": round(spent["dataflow"] * us, 1),
        "engine_path_us": round((noria - spent["insert"] - spent["dataflow"]) * us, 1),
        "sqlite_us": round(lite * us, 1),
        "ratio": round(lite / noria, 3),
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stories", type=int, default=20000)
    p.add_argument("--votes", type=int, default=50, help="votes per story")
    p.add_argument("--writes", type=int, default=30000)
    p.add_argument("--chunk", type=int, default=100)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    result = {
        "stories": args.stories,
        "votes_per_story": args.votes,
        "writes": args.writes,
        "with_view": measure(True, args),
        "without_view": measure(False, args),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()

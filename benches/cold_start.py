"""Cold start: reopening a database primed by the Lobsters workload, against stdlib ``sqlite3``
opening the same file.

The database is primed once into a temporary file (``prime(EmbeddedBackend(path),
Workload(scale))``: the natural variant's tables, data and views). Then each round starts two
fresh Python processes, one per side, in alternating order, so that imports count:

* noria: ``import noria_py``, ``noria_py.connect(path)`` (every view's state is computed again),
  then the first answer of each read below, from the views;
* sqlite: ``import sqlite3``, ``sqlite3.connect(path)``, then the same reads answered by SQL over
  the base tables (a case-insensitive collation registered under the name the tables use) (each view written as a common table expression of its own SQL, from
  ``workloads/lobsters/schema.py``).

The reads (``workloads/lobsters/pages.py``): the frontpage's top 51 by hotness and their
``story_with_votes`` rows, a story page's ``story_with_votes`` row by short id and its
``comment_with_votes`` rows, the author's ``user_stats`` and ``notifications``. The two sides'
answers are compared (values as text) before anything is reported; a difference stops the run.

Times are seconds, the median over ``--rounds``; ``ratio`` is the median over the rounds of
sqlite's total / noria's total in the same round (above 1: noria faster).

    python benches/cold_start.py [--scale 0.2] [--rounds 5]

Writes benches/results/cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "cold_start.json"

# the reads: (name, SQL over the views, parameters from the context)
FRONTPAGE_TOP = "SELECT id FROM story_hotness ORDER BY hotness ASC, id ASC LIMIT 51"
FRONTPAGE_STORIES = (
    "SELECT * FROM story_with_votes WHERE id IN ({marks})"
    " AND merged_story_id IS NULL AND is_expired = 0 AND score >= 0"
)
STORY = "SELECT * FROM story_with_votes WHERE short_id = ?"
STORY_COMMENTS = "SELECT * FROM comment_with_votes WHERE story_id = ? ORDER BY score DESC, id"
USER_STATS = "SELECT * FROM user_stats WHERE id = ?"
NOTIFICATIONS = "SELECT notifications FROM notifications WHERE user_id = ?"


def _padded(values: list) -> list:
    """An IN list padded to a power of two by repeating its last value (as pages.py does)."""
    n = 1
    while n < len(values):
        n *= 2
    return values + [values[-1]] * (n - len(values))


def run_reads(execute, story_slug: str) -> tuple[dict, dict]:
    """Run the reads through ``execute(sql, params) -> rows``: (seconds per read, answers)."""
    clock = time.perf_counter
    times: dict[str, float] = {}
    answers: dict[str, list] = {}

    def read(name, sql, params=()):
        t = clock()
        rows = execute(sql, params)
        times[name] = clock() - t
        answers[name] = rows
        return rows

    top = read("frontpage_top", FRONTPAGE_TOP)
    ids = _padded([r[0] for r in top])
    marks = ", ".join("?" * len(ids))
    read("frontpage_stories", FRONTPAGE_STORIES.format(marks=marks), ids)
    story = read("story", STORY, (story_slug,))
    sid, author = story[0][0], story[0][3]
    read("story_comments", STORY_COMMENTS, (sid,))
    read("user_stats", USER_STATS, (author,))
    read("notifications", NOTIFICATIONS, (author,))
    return times, answers


def sqlite_views_cte() -> str:
    """Every view of the natural variant as a common table expression, in SQLite's SQL."""
    from noria_py.workloads.lobsters import schema

    parts = []
    for stmt in schema.view_statements("natural"):
        m = re.match(r"CREATE VIEW (\w+) AS\s+(.*)", stmt, re.S)
        name, body = m.group(1), m.group(2).replace("<=>", "IS")
        parts.append(f"{name} AS ({body})")
    return "WITH " + ",\n".join(parts) + "\n"


def child_noria(path: str, story_slug: str) -> dict:
    clock = time.perf_counter
    t0 = clock()
    import noria_py

    t1 = clock()
    conn = noria_py.connect(path)
    t2 = clock()
    cur = conn.cursor()

    def execute(sql, params):
        cur.execute(sql, params)
        return cur.fetchall()

    times, answers = run_reads(execute, story_slug)
    t3 = clock()
    conn.close()
    return _child_result(t1 - t0, t2 - t1, t3 - t2, times, answers)


def child_sqlite(path: str, story_slug: str, cte: str) -> dict:
    clock = time.perf_counter
    t0 = clock()
    import sqlite3

    t1 = clock()
    conn = sqlite3.connect(path)
    # the tables' text columns name the engine's default collation: a case-insensitive compare
    # stands in for it (the reads compare only ASCII short ids by it)
    conn.create_collation("utf8mb4_general_ci", _casefold_compare)
    t2 = clock()

    def execute(sql, params):
        return conn.execute(cte + sql, params).fetchall()

    times, answers = run_reads(execute, story_slug)
    t3 = clock()
    conn.close()
    return _child_result(t1 - t0, t2 - t1, t3 - t2, times, answers)


def _casefold_compare(a: str, b: str) -> int:
    a, b = a.casefold(), b.casefold()
    return (a > b) - (a < b)


def _child_result(imp, connect, reads, times, answers) -> dict:
    return {
        "import_s": imp,
        "connect_s": connect,
        "reads_s": reads,
        "total_s": imp + connect + reads,
        "read_s": times,
        # values as text: the engine returns datetimes and Decimals where sqlite3 has text and ints
        "answers": {
            k: [[None if v is None else str(v) for v in r] for r in rows]
            for k, rows in answers.items()
        },
    }


def run_child(side: str, path: str, story_slug: str, cte_file: str) -> dict:
    cmd = [sys.executable, __file__, "--child", side, "--db", path, "--slug", story_slug]
    cmd += ["--cte", cte_file]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.splitlines()[-1])


def prime_file(path: str, scale: float) -> dict:
    from noria_py.workloads.lobsters.backends import EmbeddedBackend, prime
    from noria_py.workloads.lobsters.data import Workload

    backend = EmbeddedBackend(path)
    try:
        return prime(backend, Workload(scale=scale))
    finally:
        backend.close()


def compare(noria: dict, lite: dict) -> None:
    for name, rows in noria.items():
        other = lite[name]
        if name == "frontpage_stories":  # no ORDER BY: compare as sets
            rows, other = sorted(rows, key=repr), sorted(other, key=repr)
        if rows != other:
            raise SystemExit(f"answers differ for {name}: noria {rows[:3]} sqlite {other[:3]}")


def _median(runs: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 4)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.2, help="Lobsters workload scale (0.2)")
    p.add_argument("--rounds", type=int, default=5, help="rounds of one process per side (5)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--child", choices=("noria", "sqlite"), help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--slug", help=argparse.SUPPRESS)
    p.add_argument("--cte", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child == "noria":
        print(json.dumps(child_noria(args.db, args.slug)))
        return {}
    if args.child == "sqlite":
        cte = Path(args.cte).read_text()
        print(json.dumps(child_sqlite(args.db, args.slug, cte)))
        return {}

    from noria_py.workloads.lobsters import data as D

    with tempfile.TemporaryDirectory(prefix="cold_start") as tmp:
        path = os.path.join(tmp, "lobsters.db")
        t = time.perf_counter()
        counts = prime_file(path, args.scale)
        prime_s = time.perf_counter() - t
        cte_file = os.path.join(tmp, "views.sql")
        Path(cte_file).write_text(sqlite_views_cte())
        story_slug = D.slug(counts["stories"] // 2)
        runs: dict[str, list[dict]] = {"noria": [], "sqlite": []}
        ratios = []
        for i in range(args.rounds):
            order = ("noria", "sqlite") if i % 2 == 0 else ("sqlite", "noria")
            got = {side: run_child(side, path, story_slug, cte_file) for side in order}
            compare(got["noria"]["answers"], got["sqlite"]["answers"])
            for side, r in got.items():
                r.pop("answers")
                runs[side].append(r)
            ratios.append(got["sqlite"]["total_s"] / got["noria"]["total_s"])
            print(
                f"round {i + 1}: noria import {got['noria']['import_s']:.3f} s connect "
                f"{got['noria']['connect_s']:.3f} s reads {got['noria']['reads_s']:.3f} s; "
                f"sqlite total {got['sqlite']['total_s']:.3f} s",
                file=sys.stderr,
            )
    result: dict = {"scale": args.scale, "rows": counts, "prime_s": round(prime_s, 2)}
    for side, rs in runs.items():
        result[side] = {k: _median(rs, k) for k in ("import_s", "connect_s", "reads_s", "total_s")}
        result[side]["read_s"] = {
            name: round(statistics.median(r["read_s"][name] for r in rs), 4)
            for name in rs[0]["read_s"]
        }
        result[side]["total_runs"] = [round(r["total_s"], 4) for r in rs]
    result["ratio"] = round(statistics.median(ratios), 4)
    result["ratio_runs"] = [round(r, 4) for r in ratios]
    result["answers_checked"] = args.rounds
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # the checkout this script is in, not another install
    main()

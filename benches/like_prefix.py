"""``name LIKE ?`` prefix reads: noria_py's range readers against SQLite with an index.

One table ``users(id, grp, name)``: ``--rows`` rows whose names are random words of mixed case
(``Alvarez``, ``aLVAREZ ``...), ``grp`` uniform over 100 groups. Two queries:

    prefix   SELECT id, name FROM users WHERE name LIKE ?            (pattern 'abc%')
    count    SELECT grp, COUNT(*) FROM users WHERE name LIKE ? GROUP BY grp

The engine keeps a range reader ordered by the name's collation key (``utf8mb4_general_ci``:
case-insensitive, PAD SPACE); a read takes the range of keys the pattern's prefix allows
(``sql.collation.prefix_key_range``) and keeps the rows the pattern matches; ``count`` computes
the aggregate from the range's rows (``dataflow/post_lookup.py``). Patterns are a name's first
three letters plus ``%`` in a random case, prefixes drawn Zipf(``--zipf``) from the prefixes in
the data (hot prefixes read most). SQLite answers the same statements on a ``name TEXT COLLATE
NOCASE`` column with an index on it, so its LIKE optimization scans only the prefix's range (the
data is ASCII, where NOCASE's case-insensitive LIKE is general_ci's). Base storage's answer
before (the same reads with ``dataflow=False``) is measured on a sample. Then ``--writes``
inserts, renames and deletes go to both, and a sample of reads is compared.

    python benches/like_prefix.py                          # 100k rows, 20k reads per pass
    python benches/like_prefix.py --rows 3000 --reads 1000 --rounds 1   # smoke size

Results go to benches/results/like_prefix.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import string
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ranges import Zipf, log, measure, read_pass  # noqa: E402

import noria_py  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ENGINE_SCHEMA = "CREATE TABLE users (id INT PRIMARY KEY, grp INT NOT NULL, name VARCHAR(40))"
SQLITE_SCHEMA = [
    "CREATE TABLE users (id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, name TEXT COLLATE NOCASE)",
    "CREATE INDEX users_name ON users (name)",
]
INSERT = "INSERT INTO users (id, grp, name) VALUES (?, ?, ?)"
QUERIES = {
    "prefix": "SELECT id, name FROM users WHERE name LIKE ?",
    "count": "SELECT grp, COUNT(*) FROM users WHERE name LIKE ? GROUP BY grp",
}
PROXIED_READS = 40  # base storage scans the table for each: slow


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=100_000, help="users to load (default 100000)")
    p.add_argument("--reads", type=int, default=20_000, help="reads per pass (default 20000)")
    p.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent of reads (default 1.1)")
    p.add_argument(
        "--rounds", type=int, default=5, help="measured rounds; the best one counts (default 5)"
    )
    p.add_argument(
        "--writes", type=int, default=2000, help="writes before the final check (default 2000)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "like_prefix.json")
    return p.parse_args(argv)


def word(rng: random.Random) -> str:
    w = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(4, 10)))
    w = "".join(c.upper() if rng.random() < 0.2 else c for c in w)
    return w + (" " if rng.random() < 0.05 else "")


def make_rows(args) -> list[tuple]:
    rng = random.Random(args.seed)
    return [(i, rng.randrange(100), word(rng)) for i in range(args.rows)]


def make_reads(args, rows) -> list[tuple]:
    rng = random.Random(args.seed + 1)
    prefixes = sorted({r[2][:3].lower() for r in rows})
    rng.shuffle(prefixes)
    pick = Zipf(len(prefixes), args.zipf, rng)
    out = []
    for _ in range(args.reads):
        p = prefixes[pick()]
        out.append(("".join(c.upper() if rng.random() < 0.5 else c for c in p) + "%",))
    return out


UPDATE = "UPDATE users SET name = ? WHERE id = ?"
DELETE = "DELETE FROM users WHERE id = ?"


def writes(rng: random.Random, args, next_id: int) -> list[tuple]:
    """``(statement, parameters)`` pairs: half inserts, then updates of a name and deletes."""
    out = []
    for _ in range(args.writes):
        r = rng.random()
        if r < 0.5:
            out.append((INSERT, (next_id, rng.randrange(100), word(rng))))
            next_id += 1
        elif r < 0.8:
            out.append((UPDATE, (word(rng), rng.randrange(args.rows))))
        else:
            out.append((DELETE, (rng.randrange(args.rows),)))
    return out


def apply_writes(db, ws) -> None:
    for sql, params in ws:
        db.execute(sql, params)


def mismatches(conn, db, reads, sample: int, rng: random.Random) -> dict:
    bad = {}
    for name, sql in QUERIES.items():
        wrong = 0
        for p in rng.sample(reads, min(sample, len(reads))):
            got = sorted(tuple(r) for r in conn.execute(sql, p).fetchall())
            want = sorted(db.execute(sql, p).fetchall())
            wrong += got != want
        bad[name] = wrong
    return bad


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()[0]
    rows = make_rows(args)
    reads = make_reads(args, rows)
    db = sqlite3.connect(":memory:", isolation_level=None)
    for stmt in SQLITE_SCHEMA:
        db.execute(stmt)
    db.execute("BEGIN")
    db.executemany(INSERT, rows)
    db.execute("COMMIT")
    plan = db.execute("EXPLAIN QUERY PLAN " + QUERIES["prefix"], reads[0]).fetchall()

    conn = noria_py.connect()
    cur = conn.cursor()
    cur.execute(ENGINE_SCHEMA)
    for part in range(0, len(rows), 20_000):
        cur.executemany(INSERT, rows[part : part + 20_000])
    scur = db.cursor()
    result_q = {}
    for name, sql in QUERIES.items():
        result_q[name] = measure(cur, scur, sql, reads, args)
        log(
            f"  {name}: {result_q[name]['reads_per_s']:,.0f} reads/s, ratio {result_q[name]['ratio']}"
        )
    caches = {r[1]: r[2] for r in cur.execute("SHOW CACHES")}
    explain = {
        name: [" | ".join(map(str, r)) for r in cur.execute("EXPLAIN " + sql)]
        for name, sql in QUERIES.items()
    }
    state_bytes = conn.engine.graph.state_bytes()

    # before: base storage answered these reads (the dataflow proxied them)
    proxy = noria_py.connect(dataflow=False)
    proxy.execute(ENGINE_SCHEMA)
    proxy.executemany(INSERT, rows)
    pcur = proxy.cursor()
    sample = reads[:PROXIED_READS]
    proxied = {}
    for name, sql in QUERIES.items():
        best = read_pass(pcur, sql, sample)[0]  # one pass: each read takes long enough
        proxied[name] = round(len(sample) / best, 1)
        log(f"  proxied {name}: {proxied[name]:,.0f} reads/s")
    proxy.close()

    ws = writes(random.Random(args.seed + 2), args, args.rows)
    apply_writes(conn, ws)
    apply_writes(db, ws)
    wrong = mismatches(conn, db, reads, 300, random.Random(args.seed + 3))
    conn.close()
    db.close()

    result = {
        "like_prefix_ratio": result_q["prefix"]["ratio"],
        "like_count_ratio": result_q["count"]["ratio"],
        "over_proxied": {
            name: round(result_q[name]["reads_per_s"] / proxied[name], 1) for name in QUERIES
        },
        "proxied_reads_per_s": proxied,
        "queries": {name: {"sql": QUERIES[name], **result_q[name]} for name in QUERIES},
        "caches": caches,
        "explain": explain,
        "sqlite_plan": [str(r) for r in plan],
        "state_bytes": state_bytes,
        "answer_mismatches_after_writes": wrong,
        "rows": args.rows,
        "reads": args.reads,
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
        " engine and SQLite (an index on name COLLATE NOCASE: a LIKE prefix range scan);"
        " cold_reads_per_s: the first pass after the query was installed (the reader fills"
        " each prefix's range there). ratio: engine over SQLite in alternating rounds."
        " proxied_reads_per_s: the same statements answered by base storage (dataflow=False),"
        " how they were answered before LIKE ? was cached; over_proxied: engine over that.",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{args.rows} users, {args.reads} reads per pass")
    print(f"{'reads/s':12}{'engine':>12}{'cold':>12}{'sqlite3':>12}{'ratio':>8}{'proxied':>10}")
    for name in QUERIES:
        m = result_q[name]
        print(
            f"{name:<12}{m['reads_per_s']:>12,.0f}{m['cold_reads_per_s']:>12,.0f}"
            f"{m['sqlite_reads_per_s']:>12,.0f}{m['ratio']:>8.2f}{proxied[name]:>10,.0f}"
        )
    if any(wrong.values()):
        print(f"WRONG ANSWERS after writes: {wrong}")
    print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()

"""Point reads and vote inserts: noria_py against stdlib sqlite3, same process, same data.

The read is the Lobsters "story with its vote count" query, parameterized on the story id:

    SELECT s.*, COUNT(v.story_id) FROM stories s LEFT JOIN votes v ON s.id = v.story_id
    WHERE s.id = ? GROUP BY s.id

noria_py answers it from an incrementally maintained view; SQLite recomputes it on each read with
an index on votes(story_id). The writes insert new votes while that view is maintained: one
statement per vote (``execute``), and batches (``executemany``). SQLite inserts the same rows into
its own copy of the data, in autocommit mode, each batch in one transaction.

    python benches/read_write.py                      # 20k stories, 1M votes
    python benches/read_write.py --stories 2000 --votes 50000 --reads 5000 --writes 2000
    python benches/read_write.py --profile            # also save profiles of both loops

Results go to benches/results/read_write.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil

import noria_py

RESULTS = Path(__file__).resolve().parent / "results"

READ_SQL = (
    "SELECT s.*, COUNT(v.story_id) FROM stories s LEFT JOIN votes v ON s.id = v.story_id"
    " WHERE s.id = ? GROUP BY s.id"
)
INSERT_STORY = "INSERT INTO stories (id, user_id, title, url) VALUES (?, ?, ?, ?)"
INSERT_VOTE = "INSERT INTO votes (user_id, story_id) VALUES (?, ?)"

ENGINE_SCHEMA = [
    "CREATE TABLE stories ("
    " id INT NOT NULL PRIMARY KEY,"
    " user_id INT NOT NULL,"
    " title VARCHAR(150) NOT NULL,"
    " url VARCHAR(250))",
    "CREATE TABLE votes ("
    " user_id INT NOT NULL,"
    " story_id INT NOT NULL,"
    " PRIMARY KEY (user_id, story_id),"
    " KEY story_idx (story_id))",
]
SQLITE_SCHEMA = [
    "CREATE TABLE stories ("
    " id INTEGER NOT NULL PRIMARY KEY,"
    " user_id INTEGER NOT NULL,"
    " title TEXT NOT NULL,"
    " url TEXT)",
    "CREATE TABLE votes ("
    " user_id INTEGER NOT NULL,"
    " story_id INTEGER NOT NULL,"
    " PRIMARY KEY (user_id, story_id))",
    "CREATE INDEX votes_story ON votes (story_id)",
]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stories", type=int, default=20_000, help="stories to load (default 20000)")
    p.add_argument("--votes", type=int, default=1_000_000, help="votes to load (default 1M)")
    p.add_argument("--reads", type=int, default=20_000, help="point reads per pass (default 20000)")
    p.add_argument(
        "--writes",
        type=int,
        default=10_000,
        help="votes inserted per write variant (default 10000)",
    )
    p.add_argument(
        "--batch", type=int, default=500, help="rows per executemany batch (default 500)"
    )
    p.add_argument("--chunk", type=int, default=20_000, help="rows per executemany while loading")
    p.add_argument(
        "--rounds", type=int, default=3, help="measured rounds; the best one counts (default 3)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "read_write.json")
    p.add_argument(
        "--profile",
        action="store_true",
        help="profile an extra read pass and an extra write pass (pyinstrument if installed,"
        " else cProfile) and save the text reports next to the JSON",
    )
    return p.parse_args(argv)


def make_data(args: argparse.Namespace) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(args.seed)
    stories = [
        (i, rng.randint(1, 5000), f"story number {i}", f"https://example.com/{i}")
        for i in range(1, args.stories + 1)
    ]
    # Distinct (user, story) pairs, every story getting votes / stories of them, in random order.
    n = args.stories
    votes = [(k // n + 1, k % n + 1) for k in range(args.votes)]
    rng.shuffle(votes)
    return stories, votes


def new_votes(rng: random.Random, first_user: int, count: int, stories: int) -> list[tuple]:
    return [(first_user + k, rng.randint(1, stories)) for k in range(count)]


def rss_mb() -> float:
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def chunks(rows: list[tuple], size: int):
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


# --- loading ----------------------------------------------------------------------------------


def load_engine(conn, stories: list[tuple], votes: list[tuple], chunk: int) -> float:
    cur = conn.cursor()
    for stmt in ENGINE_SCHEMA:
        cur.execute(stmt)
    start = time.perf_counter()
    for part in chunks(stories, chunk):
        cur.executemany(INSERT_STORY, part)
    for i, part in enumerate(chunks(votes, chunk)):
        cur.executemany(INSERT_VOTE, part)
        if i % 10 == 9:
            log(f"  engine: {min((i + 1) * chunk, len(votes))} votes loaded")
    return time.perf_counter() - start


def load_sqlite(db: sqlite3.Connection, stories: list[tuple], votes: list[tuple]) -> float:
    for stmt in SQLITE_SCHEMA:
        db.execute(stmt)
    start = time.perf_counter()
    db.execute("BEGIN")
    db.executemany(INSERT_STORY, stories)
    db.executemany(INSERT_VOTE, votes)
    db.execute("COMMIT")
    return time.perf_counter() - start


# --- timed loops ------------------------------------------------------------------------------


def read_loop(cur, ids: list[int]) -> float:
    """Seconds to run the point read for every id, fetching every row."""
    execute = cur.execute
    fetchall = cur.fetchall
    start = time.perf_counter()
    for story_id in ids:
        execute(READ_SQL, (story_id,))
        fetchall()
    return time.perf_counter() - start


def single_writes(execute: Callable, rows: list[tuple]) -> float:
    start = time.perf_counter()
    for row in rows:
        execute(INSERT_VOTE, row)
    return time.perf_counter() - start


def engine_batch_writes(cur, rows: list[tuple], batch: int) -> float:
    start = time.perf_counter()
    for part in chunks(rows, batch):
        cur.executemany(INSERT_VOTE, part)
    return time.perf_counter() - start


def sqlite_batch_writes(db: sqlite3.Connection, rows: list[tuple], batch: int) -> float:
    start = time.perf_counter()
    for part in chunks(rows, batch):
        db.execute("BEGIN")
        db.executemany(INSERT_VOTE, part)
        db.execute("COMMIT")
    return time.perf_counter() - start


def mismatches(engine_cur, db: sqlite3.Connection, ids: list[int]) -> list[int]:
    """Story ids whose engine answer differs from SQLite's."""
    bad = []
    for story_id in ids:
        got = engine_cur.execute(READ_SQL, (story_id,)).fetchall()
        want = db.execute(READ_SQL, (story_id,)).fetchall()
        if [tuple(r) for r in got] != want:
            bad.append(story_id)
    return bad


# --- profiling --------------------------------------------------------------------------------


def profile(label: str, fn: Callable[[], object], out: Path) -> Path:
    try:
        from pyinstrument import Profiler
    except ImportError:
        Profiler = None  # noqa: N806
    path = out.with_name(f"{out.stem}_profile_{label}.txt")
    if Profiler is not None:
        profiler = Profiler()
        profiler.start()
        fn()
        profiler.stop()
        path.write_text(profiler.output_text(unicode=False, color=False))
    else:
        prof = cProfile.Profile()
        prof.runcall(fn)
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(60)
        stats.sort_stats("tottime").print_stats(40)
        path.write_text(buf.getvalue())
    return path


# --- main -------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed + 1)

    load_start = os.getloadavg()[0]
    log(f"generating {args.stories} stories and {args.votes} votes")
    stories, votes = make_data(args)

    log("loading noria_py (in-memory base storage)")
    conn = noria_py.connect()
    engine_load_s = load_engine(conn, stories, votes, args.chunk)
    log(f"  {engine_load_s:.1f}s, rss {rss_mb():.0f} MB")
    log("loading sqlite3 (:memory:)")
    db = sqlite3.connect(":memory:", isolation_level=None)
    sqlite_load_s = load_sqlite(db, stories, votes)
    del votes

    ecur = conn.cursor()
    # The first execution of the query installs it in the dataflow (and computes whatever state
    # the engine keeps fully materialized).
    start = time.perf_counter()
    ecur.execute(READ_SQL, (1,)).fetchall()
    engine_install_s = time.perf_counter() - start
    explain = [" | ".join(map(str, row)) for row in ecur.execute("EXPLAIN " + READ_SQL)]

    # (a) point reads. The first engine pass fills partial state on misses; the rounds after it
    # read the same ids again. Engine and SQLite passes alternate, and the best round of each
    # counts, so that a burst of load from other processes does not favour either side.
    ids = [rng.randint(1, args.stories) for _ in range(args.reads)]
    log(f"reads: {args.reads} random story ids per pass, {args.rounds} rounds")
    engine_cold_s = read_loop(ecur, ids)
    scur = db.cursor()
    read_loop(scur, ids[: min(1000, len(ids))])
    engine_read_times, sqlite_read_times = [], []
    for _ in range(args.rounds):
        engine_read_times.append(read_loop(ecur, ids))
        sqlite_read_times.append(read_loop(scur, ids))
    check_ids = rng.sample(range(1, args.stories + 1), min(500, args.stories))
    read_mismatches = mismatches(ecur, db, check_ids)

    # (b) vote inserts with the view maintained, one statement at a time and in batches. Each
    # round inserts new votes (fresh user ids) into both databases.
    log(f"writes: {args.writes} votes per variant, {args.rounds} rounds")
    next_user = (args.votes // args.stories + 10) * 1000
    times: dict[str, list[float]] = {k: [] for k in ("e1", "s1", "eb", "sb")}
    touched: set[int] = set()
    for _ in range(args.rounds):
        single_rows = new_votes(rng, next_user, args.writes, args.stories)
        batch_rows = new_votes(rng, next_user + args.writes, args.writes, args.stories)
        next_user += 2 * args.writes
        times["e1"].append(single_writes(ecur.execute, single_rows))
        times["s1"].append(single_writes(scur.execute, single_rows))
        times["eb"].append(engine_batch_writes(ecur, batch_rows, args.batch))
        times["sb"].append(sqlite_batch_writes(db, batch_rows, args.batch))
        touched.update(story for _, story in single_rows + batch_rows)
    write_mismatches = mismatches(ecur, db, rng.sample(sorted(touched), min(500, len(touched))))
    engine_warm_s, sqlite_read_s = min(engine_read_times), min(sqlite_read_times)
    engine_single_s, sqlite_single_s = min(times["e1"]), min(times["s1"])
    engine_batch_s, sqlite_batch_s = min(times["eb"]), min(times["sb"])

    profiles = {}
    if args.profile:
        log("profiling an extra read pass and an extra write pass")
        profiles["reads"] = str(profile("reads", lambda: read_loop(ecur, ids), args.out))
        extra = new_votes(rng, next_user, args.writes, args.stories)
        profiles["writes"] = str(
            profile("writes", lambda: single_writes(ecur.execute, extra), args.out)
        )

    result = {
        "engine_reads_per_s": round(args.reads / engine_warm_s, 1),
        "sqlite_reads_per_s": round(args.reads / sqlite_read_s, 1),
        "read_ratio": round(sqlite_read_s / engine_warm_s, 3),
        "engine_writes_per_s": round(args.writes / engine_single_s, 1),
        "sqlite_writes_per_s": round(args.writes / sqlite_single_s, 1),
        "write_ratio": round(sqlite_single_s / engine_single_s, 3),
        "engine_cold_reads_per_s": round(args.reads / engine_cold_s, 1),
        "engine_batch_writes_per_s": round(args.writes / engine_batch_s, 1),
        "sqlite_batch_writes_per_s": round(args.writes / sqlite_batch_s, 1),
        "batch_write_ratio": round(sqlite_batch_s / engine_batch_s, 3),
        "rounds": args.rounds,
        "engine_reads_per_s_rounds": [round(args.reads / t, 1) for t in engine_read_times],
        "sqlite_reads_per_s_rounds": [round(args.reads / t, 1) for t in sqlite_read_times],
        "engine_writes_per_s_rounds": [round(args.writes / t, 1) for t in times["e1"]],
        "sqlite_writes_per_s_rounds": [round(args.writes / t, 1) for t in times["s1"]],
        "engine_batch_writes_per_s_rounds": [round(args.writes / t, 1) for t in times["eb"]],
        "sqlite_batch_writes_per_s_rounds": [round(args.writes / t, 1) for t in times["sb"]],
        "engine_install_query_s": round(engine_install_s, 3),
        "engine_load_votes_per_s": round(args.votes / engine_load_s, 1),
        "sqlite_load_votes_per_s": round(args.votes / sqlite_load_s, 1),
        "read_mismatches": read_mismatches[:20],
        "write_mismatches": write_mismatches[:20],
        "engine_explain": explain,
        "stories": args.stories,
        "votes": args.votes,
        "reads": args.reads,
        "writes": args.writes,
        "batch": args.batch,
        "load_chunk": args.chunk,
        "seed": args.seed,
        "rss_mb_end": round(rss_mb(), 1),
        "loadavg_1min_start": round(load_start, 2),
        "loadavg_1min_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "profiles": profiles,
        "note": "writes_per_s: one INSERT per execute(); batch_: executemany of --batch rows"
        " (SQLite: one transaction per batch). reads_per_s: execute + fetchall per story id."
        " Each figure is the best of --rounds alternating rounds (all rounds in *_rounds);"
        " engine_cold_reads_per_s is the first pass, right after the query was installed.",
    }
    conn.close()
    db.close()
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{args.stories} stories, {args.votes} votes, {args.reads} reads, {args.writes} writes")
    print(f"{'':28}{'noria_py':>12}{'sqlite3':>12}{'ratio':>9}")
    table = [
        ("point reads/s (warm)", "engine_reads_per_s", "sqlite_reads_per_s", "read_ratio"),
        ("point reads/s (first pass)", "engine_cold_reads_per_s", None, None),
        ("vote inserts/s (execute)", "engine_writes_per_s", "sqlite_writes_per_s", "write_ratio"),
        (
            f"vote inserts/s (batch {args.batch})",
            "engine_batch_writes_per_s",
            "sqlite_batch_writes_per_s",
            "batch_write_ratio",
        ),
        ("load votes/s", "engine_load_votes_per_s", "sqlite_load_votes_per_s", None),
    ]
    for label, eng, sql, ratio in table:
        cells = [f"{result[eng]:>12,.0f}", f"{result[sql]:>12,.0f}" if sql else f"{'':>12}"]
        cells.append(f"{result[ratio]:>9.3f}" if ratio else "")
        print(f"{label:<28}" + "".join(cells))
    if read_mismatches or write_mismatches:
        print(f"WRONG ANSWERS: reads {read_mismatches[:5]}, after writes {write_mismatches[:5]}")
    print(f"installing the query in the engine took {engine_install_s:.2f}s")
    print(f"1-minute load average: {load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()

"""Reader misses, hits and writes of the vote query against SQLite, in one process.

The vote query, keyed on the story id:

    SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v
    ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title

runs on ``noria_py.connect()`` (embedded, default options: partial state filled by upqueries on
a reader miss) and on stdlib ``sqlite3`` (":memory:", autocommit) holding the same rows, with
the primary key on ``stories.id`` and an index on ``votes(story_id)``. Every story has exactly
``v`` votes, for each ``v`` of ``--votes`` (5, 50, 500); there are ``min(--stories,
--max-votes // v)`` stories, so the 500-votes setting keeps ~2M vote rows. Both sides are
queried the same way (``cur.execute(sql, (k,)); cur.fetchall()``). Per setting:

1. cold: first reads of keys never read before (distinct, shuffled), every one a noria miss;
2. mix: 90% of the reads on 1% of the stories, 10% uniform over all of them (seeded), on a fresh
   engine, so a key misses the first time it is read and hits afterwards;
3. hot: repeated reads of ``--hot-keys`` keys that are already filled;
4. writes: ``INSERT INTO votes VALUES (?, ?)``, one row per execute (story ids uniform), with
   the view installed and keys warm, vs the same inserts into SQLite in autocommit;
5. full state: a separate ``connect(partial=False)`` engine with the same data and the query
   installed: ``graph.state_bytes()`` (as benches/vote.py), per vote row, and the RSS delta of
   the installation.

Each repeat (``--repeat``, 3) loads a fresh noria engine and a fresh SQLite database and runs
on both, after a check of ~20 keys' answers (noria's rows must equal SQLite's: a difference stops
the run): the mix, then cold reads of keys the mix never touched, then hot reads, then the writes
(answers checked again after them). Within each measurement the two sides take turns every
``--chunk`` (100) operations, so that both run under the same machine conditions (the load of
other processes on a shared machine moves by more than the differences measured), and the side
that goes first alternates between repeats; the time of each side is the sum of its turns.
Rates are operations per second of the timed loop; ``ratio`` is the median over the repeats of
noria's rate / SQLite's rate in the same repeat (above 1: noria faster); ``*_ops_per_s`` are
each side's best.

    python benches/misses.py                    # 3 settings, 3 repeats, a few minutes
    python benches/misses.py --votes 50 --repeat 1
    python benches/misses.py --quick            # a small smoke run
    python benches/misses.py --votes 5,50 --only writes   # the writes alone, in seconds

``--only`` measures some of the sections (cold, mix, hot, writes, full); the reads of the others
still run on noria, untimed, before the writes, so that the sections measured find the state a
full run leaves them (unmeasured writes are left out; full state is skipped unless named).

Results go to benches/results/misses.json (``--out`` to change), with the targets and whether
each is met. The full-state target compares with ``--baseline`` (benches/results/
misses-before.json; when it has no matching setting, this run's own value is the baseline).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

# Measure the checkout this file is in (run by path, the script's own directory is first on
# sys.path, and an installed noria_py elsewhere would be imported instead).
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import noria_py  # noqa: E402

RESULTS = ROOT / "benches" / "results"

SCHEMA = [
    "CREATE TABLE stories (id INT NOT NULL PRIMARY KEY, title VARCHAR(150) NOT NULL)",
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)",
]
SQLITE_INDEX = "CREATE INDEX votes_story_id ON votes (story_id)"
VOTE_SQL = (
    "SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v"
    " ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
INSERT_VOTE = "INSERT INTO votes VALUES (?, ?)"
FIRST_NEW_USER = 10**7  # user ids of the timed inserts; loaded votes use 0 .. votes-1

TARGETS = {
    "cold_ratio_min": 0.5,
    "mix_ratio_min": 5.0,
    "hot_ratio_min": 10.0,
    "writes_ratio_min": 0.5,
    "full_state_bytes_max_fraction_of_before": 1 / 3,
}

DEFAULTS = {
    "stories": 20_000,
    "max_votes": 2_000_000,
    "cold": 2000,
    "mix": 5000,
    "hot_keys": 200,
    "hot_reads": 20_000,
    "writes": 5000,
    "check_keys": 20,
    "repeat": 3,
}
QUICK = {
    "stories": 200,
    "max_votes": 50_000,
    "cold": 100,
    "mix": 400,
    "hot_keys": 20,
    "hot_reads": 400,
    "writes": 200,
    "check_keys": 20,
    "repeat": 1,
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- data and workloads -----------------------------------------------------------------------


def story_rows(n: int) -> list[tuple]:
    return [(i, f"story number {i}") for i in range(n)]


def vote_rows(n: int, per_story: int) -> list[tuple]:
    """Exactly ``per_story`` votes on every story, by users 0..per_story-1 (distinct pairs)."""
    return [(k // n, k % n) for k in range(n * per_story)]


class Plan:
    """The keys every repeat reads, the same for all repeats (each repeat's engine is fresh).

    ``check``: the keys whose answers are compared before timing (also what installs the
    query); they are left out of the workloads. ``mix``: the 90/10 sequence. ``cold``: shuffled
    distinct keys the check and the mix never read. ``hot``: the first ``hot_keys`` of ``cold``
    (filled by the cold reads), read again ``hot_reads`` times in a shuffled order. ``writes``:
    the (user_id, story_id) rows inserted.
    """

    def __init__(self, n: int, args: argparse.Namespace):
        rng = random.Random(args.seed)
        keys = list(range(n))
        rng.shuffle(keys)
        self.check = keys[: min(args.check_keys, n)]
        rest = keys[len(self.check) :]
        if not rest:
            raise SystemExit(f"{n} stories leave no keys beyond the {len(self.check)} checked")
        self.hot_set = rng.sample(rest, max(1, n // 100))
        self.mix = [
            rng.choice(self.hot_set) if rng.random() < 0.9 else rng.choice(rest)
            for _ in range(args.mix)
        ]
        touched = set(self.mix)
        untouched = [k for k in rest if k not in touched]
        self.cold = untouched[: args.cold]
        if not self.cold:
            raise SystemExit(f"{n} stories leave no cold keys after a mix of {args.mix} reads")
        self.hot = self.cold[: args.hot_keys]
        self.hot_reads = [self.hot[i % len(self.hot)] for i in range(args.hot_reads)]
        rng.shuffle(self.hot_reads)
        self.writes = [(FIRST_NEW_USER + i, rng.randrange(n)) for i in range(args.writes)]
        # after the writes: some written stories (warm or not) and some hot ones
        self.recheck = sorted({s for _u, s in self.writes[: args.check_keys]} | set(self.hot[:5]))

    def describe(self) -> dict:
        return {
            "check_keys": len(self.check),
            "mix_reads": len(self.mix),
            "mix_hot_set_keys": len(self.hot_set),
            "mix_distinct_keys": len(set(self.mix)),
            "cold_reads": len(self.cold),
            "hot_keys": len(self.hot),
            "hot_reads": len(self.hot_reads),
            "writes": len(self.writes),
        }


# --- the two sides ----------------------------------------------------------------------------


def build_sqlite(stories: list[tuple], votes: list[tuple]) -> tuple[sqlite3.Connection, float]:
    t0 = time.perf_counter()
    db = sqlite3.connect(":memory:", isolation_level=None)
    for stmt in SCHEMA:
        db.execute(stmt)
    db.execute("BEGIN")
    db.executemany("INSERT INTO stories VALUES (?, ?)", stories)
    db.executemany("INSERT INTO votes VALUES (?, ?)", votes)
    db.execute("COMMIT")
    db.execute(SQLITE_INDEX)
    db.execute("ANALYZE")
    return db, time.perf_counter() - t0


def build_noria(stories: list[tuple], votes: list[tuple], **options):
    t0 = time.perf_counter()
    conn = noria_py.connect(**options)
    for stmt in SCHEMA:
        conn.execute(stmt)
    conn.engine.load_rows("stories", ["id", "title"], stories)
    conn.engine.load_rows("votes", ["user_id", "story_id"], votes)
    return conn, time.perf_counter() - t0


def answers(cur, keys: Sequence[int]) -> list[list[tuple]]:
    out = []
    for k in keys:
        cur.execute(VOTE_SQL, (k,))
        out.append([tuple(r) for r in cur.fetchall()])
    return out


def check_answers(noria_cur, sqlite_cur, keys: Sequence[int], when: str) -> int:
    """Compare noria's rows with SQLite's for ``keys``; raise on the first difference."""
    got = answers(noria_cur, keys)
    want = answers(sqlite_cur, keys)
    for k, g, w in zip(keys, got, want):
        if g != w:
            raise AssertionError(f"{when}: story {k}: noria returned {g!r}, sqlite {w!r}")
    return len(keys)


def cache_stats(conn) -> tuple[int, int]:
    """(hits, misses) of the vote query's reader so far (SHOW CACHES)."""
    want = " ".join(VOTE_SQL.split())
    for r in conn.execute("SHOW CACHES").fetchall():
        if " ".join(str(r[1]).split()) == want:
            return int(r[4]), int(r[5])
    return 0, 0


def time_reads(cur, keys: Sequence[int]) -> float:
    execute, fetchall = cur.execute, cur.fetchall
    sql = VOTE_SQL
    t0 = time.perf_counter()
    for k in keys:
        execute(sql, (k,))
        fetchall()
    return time.perf_counter() - t0


def time_writes(cur, rows: Sequence[tuple]) -> float:
    execute = cur.execute
    sql = INSERT_VOTE
    t0 = time.perf_counter()
    for row in rows:
        execute(sql, row)
    return time.perf_counter() - t0


def time_interleaved(fn, curs: dict, items: Sequence, chunk: int, first: str) -> dict:
    """``fn`` over ``items`` on both sides, ``chunk`` items at a time, the sides alternating
    chunk by chunk (``first`` starting): seconds per side. Each side sees every item in order;
    chunks this short put both under the same machine conditions (on a shared machine the
    load of other processes moves by more than the difference measured)."""
    order = (first, "sqlite" if first == "noria" else "noria")
    spent = {side: 0.0 for side in order}
    if chunk <= 0:
        chunk = len(items) or 1
    for i in range(0, len(items), chunk):
        part = items[i : i + chunk]
        for side in order:
            spent[side] += fn(curs[side], part)
    return spent


def rss_bytes() -> int:
    return psutil.Process(os.getpid()).memory_info().rss


# --- one setting ------------------------------------------------------------------------------


SECTIONS = ("cold", "mix", "hot", "writes")
ONLY = (*SECTIONS, "full")


def measure_full(data: list, plan: Plan, baseline, per_story: int, args) -> dict:
    """Full materialization: a separate engine, the query installed by its first read.
    ``data``: [story rows, vote rows], emptied once loaded (freed before the RSS is read)."""
    full, full_load_s = build_noria(*data, partial=False)
    n, nvotes = len(data[0]), len(data[1])
    data.clear()
    gc.collect()
    rss0 = rss_bytes()
    t0 = time.perf_counter()
    fcur = full.cursor()
    fcur.execute(VOTE_SQL, (plan.check[0],))
    fcur.fetchall()
    install_s = time.perf_counter() - t0
    gc.collect()
    rss_delta = rss_bytes() - rss0
    full_state_bytes = full.engine.graph.state_bytes()
    full.close()
    del full, fcur
    log(f"  full: state {full_state_bytes / 2**20:.1f} MB, installed in {install_s:.1f}s")
    before = None
    if baseline is not None:
        before = baseline.get(str(per_story))
        if before is not None and before.get("stories") != n:
            before = None
    before_bytes = before["state_bytes"] if before else full_state_bytes
    max_bytes = before_bytes * TARGETS["full_state_bytes_max_fraction_of_before"]
    return {
        "state_bytes": full_state_bytes,
        "bytes_per_vote": round(full_state_bytes / nvotes, 1),
        "rss_delta_bytes": rss_delta,
        "install_s": round(install_s, 2),
        "load_s": round(full_load_s, 2),
        "before_state_bytes": before_bytes,
        "before_source": str(args.baseline) if before else "this run",
        "target_max_bytes": int(max_bytes),
    }


def run_setting(per_story: int, args: argparse.Namespace, baseline: dict | None) -> dict:
    n = max(1, min(args.stories, args.max_votes // per_story))
    log(f"[{per_story} votes/story] {n} stories, {n * per_story} votes")
    stories = story_rows(n)
    votes = vote_rows(n, per_story)
    plan = Plan(n, args)

    db, sqlite_load_s = build_sqlite(stories, votes)
    scur = db.cursor()
    sqlite_plan = [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + VOTE_SQL, (0,))]

    measured = [s for s in SECTIONS if s in args.only]
    rates: dict[str, dict[str, list[float]]] = {s: {"noria": [], "sqlite": []} for s in measured}
    counts = {
        "cold": len(plan.cold),
        "mix": len(plan.mix),
        "hot": len(plan.hot_reads),
        "writes": len(plan.writes),
    }
    noria_load_s = []
    checked = 0
    hits_misses: dict = {}
    partial_state_bytes = None

    for rep in range(args.repeat):
        if rep:
            # a fresh SQLite database per repeat, as noria's engine is: inserts into the pages
            # the last repeat's deleted rows freed would be cheaper than the first repeat's
            db.close()
            db, _ = build_sqlite(stories, votes)
            scur = db.cursor()
        conn, load_s = build_noria(stories, votes)
        noria_load_s.append(load_s)
        ncur = conn.cursor()
        # Before timing: the check keys' answers (the first read installs the query).
        checked += check_answers(ncur, scur, plan.check, f"repeat {rep}, before timing")
        if args.gc_freeze:
            gc.collect()
            gc.freeze()
        order = ("noria", "sqlite") if rep % 2 == 0 else ("sqlite", "noria")
        curs = {"noria": ncur, "sqlite": scur}

        for section, fn, arg in (
            ("mix", time_reads, plan.mix),
            ("cold", time_reads, plan.cold),
            ("hot", time_reads, plan.hot_reads),
            ("writes", time_writes, plan.writes),
        ):
            if section not in args.only:
                if section != "writes":
                    fn(ncur, arg)  # untimed, on noria alone: its reads fill what they fill
                continue
            h0 = cache_stats(conn)
            spent = time_interleaved(fn, curs, arg, args.chunk, order[0])
            h1 = cache_stats(conn)
            hits_misses[section] = {"hits": h1[0] - h0[0], "misses": h1[1] - h0[1]}
            for side in order:
                rates[section][side].append(counts[section] / spent[side])
        checked += check_answers(ncur, scur, plan.recheck, f"repeat {rep}, after the writes")
        partial_state_bytes = conn.engine.graph.state_bytes()
        conn.close()
        if args.gc_freeze:
            gc.unfreeze()
        del conn, ncur, curs
        gc.collect()
        log(
            f"  repeat {rep}: "
            + ", ".join(
                f"{s} {rates[s]['noria'][-1]:,.0f}/{rates[s]['sqlite'][-1]:,.0f}" for s in measured
            )
            + " ops/s (noria/sqlite)"
        )

    db.close()
    del db, scur

    data = [stories, votes]
    del stories, votes
    full_state = None
    if "full" in args.only:
        full_state = measure_full(data, plan, baseline, per_story, args)
    del data

    result: dict = {
        "stories": n,
        "votes_per_story": per_story,
        "votes": n * per_story,
        "workload": plan.describe(),
    }
    for s in measured:
        best_n, best_s = max(rates[s]["noria"]), max(rates[s]["sqlite"])
        # each repeat's ratio compares two rates measured under the same conditions (turns of
        # --chunk operations): the ratio reported is their median
        ratios = [n_ / s_ for n_, s_ in zip(rates[s]["noria"], rates[s]["sqlite"])]
        result[s] = {
            "ops": counts[s],
            "noria_ops_per_s": round(best_n, 1),
            "sqlite_ops_per_s": round(best_s, 1),
            "ratio": round(statistics.median(ratios), 4),
            "ratio_runs": [round(r, 4) for r in ratios],
            "noria_runs": [round(r, 1) for r in rates[s]["noria"]],
            "sqlite_runs": [round(r, 1) for r in rates[s]["sqlite"]],
        }
        if s in hits_misses:
            result[s]["noria_reader"] = hits_misses[s]
    if full_state is not None:
        result["full_state"] = full_state
    result["partial_state_bytes_after_repeat"] = partial_state_bytes
    result["targets_met"] = {s: result[s]["ratio"] >= TARGETS[f"{s}_ratio_min"] for s in measured}
    if full_state is not None:
        result["targets_met"]["full_state_bytes"] = (
            full_state["state_bytes"] <= full_state["target_max_bytes"]
        )
    result["answers_checked"] = checked
    result["load_s"] = {"noria": round(min(noria_load_s), 2), "sqlite": round(sqlite_load_s, 2)}
    result["sqlite_plan"] = sqlite_plan
    return result


# --- main -------------------------------------------------------------------------------------


def load_baseline(path: Path | None) -> dict | None:
    """{votes_per_story: {"stories", "state_bytes"}} from an earlier result, if readable."""
    if path is None or not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        return {
            v: {"stories": s["stories"], "state_bytes": s["full_state"]["state_bytes"]}
            for v, s in data["settings"].items()
        }
    except (ValueError, KeyError, TypeError):
        return None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--votes", default="5,50,500", help="votes per story, comma-separated")
    p.add_argument("--stories", type=int, help="stories (20000; fewer when votes exceed it)")
    p.add_argument("--max-votes", type=int, help="cap on stories x votes per story (2M)")
    p.add_argument("--cold", type=int, help="cold reads (2000)")
    p.add_argument("--mix", type=int, help="reads of the 90/10 mix (5000)")
    p.add_argument("--hot-keys", type=int, help="keys of the hot reads (200)")
    p.add_argument("--hot-reads", type=int, help="hot reads (20000)")
    p.add_argument("--writes", type=int, help="vote inserts (5000)")
    p.add_argument("--check-keys", type=int, help="keys whose answers are compared (20)")
    p.add_argument("--repeat", type=int, help="best of N, alternating noria and sqlite (3)")
    p.add_argument(
        "--chunk",
        type=int,
        default=100,
        help="operations per turn: the two sides alternate every CHUNK operations within each"
        " measurement (100; 0: each side runs its whole section in one turn)",
    )
    p.add_argument(
        "--gc-freeze",
        action="store_true",
        help="freeze the objects alive after each setup out of the cyclic collector before"
        " timing (both sides share the process): does the collector's scan of long-lived"
        " objects cost the reads anything?",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="small sizes, one repeat (a smoke run)")
    p.add_argument(
        "--only",
        default=",".join(ONLY),
        help="the sections measured, comma-separated, of " + ", ".join(ONLY) + " (all); the"
        " reads of the others still run on noria, untimed",
    )
    p.add_argument("--baseline", type=Path, default=RESULTS / "misses-before.json")
    p.add_argument("--out", type=Path, default=RESULTS / "misses.json")
    args = p.parse_args(argv)
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.votes_per_story = [int(v) for v in args.votes.split(",") if v.strip()]
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    if not args.only or any(s not in ONLY for s in args.only):
        p.error("--only takes sections of " + ", ".join(ONLY))
    if not args.votes_per_story or min(args.votes_per_story) < 1 or args.repeat < 1:
        p.error("--votes needs positive numbers and --repeat at least 1")
    return args


def summarize(setting: dict) -> dict:
    """A setting's ratios and full state (those measured: see ``--only``)."""
    out = {"stories": setting["stories"]}
    for s in SECTIONS:
        if s in setting:
            out[f"{s}_ratio"] = setting[s]["ratio"]
    if "full_state" in setting:
        out["full_state_bytes"] = setting["full_state"]["state_bytes"]
        out["full_state_bytes_per_vote"] = setting["full_state"]["bytes_per_vote"]
    out["targets_met"] = setting["targets_met"]
    return out


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    baseline = load_baseline(args.baseline)
    settings = {str(v): run_setting(v, args, baseline) for v in args.votes_per_story}
    summary = {v: summarize(s) for v, s in settings.items()}
    result = {
        "query": VOTE_SQL,
        "schema": SCHEMA,
        "sqlite_index": SQLITE_INDEX,
        "summary": summary,
        "targets": TARGETS,
        "all_targets_met": all(all(s["targets_met"].values()) for s in settings.values()),
        "settings": settings,
        "config": {
            k: getattr(args, k)
            for k in ("votes_per_story", "seed", "quick", "only", "gc_freeze", *DEFAULTS)
            if hasattr(args, k)
        },
        "wall_s": round(time.perf_counter() - started, 1),
        "loadavg_1min_start": round(load_start, 2),
        "loadavg_1min_end": round(os.getloadavg()[0], 2),
        "noria_py": str(Path(noria_py.__file__).parent),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "note": "one process; noria: noria_py.connect() (partial, default options), a fresh"
        " engine per repeat; sqlite3: one ':memory:' database, isolation_level=None. *_ops_per_s:"
        " operations / seconds of the timed loop (execute + fetchall per read, one execute per"
        " insert), best of the repeats (*_runs: every repeat); the two sides take turns every"
        " --chunk operations within a measurement; ratio = the median over the repeats of"
        " noria's rate / sqlite's rate in that repeat (ratio_runs: each repeat's)."
        " noria_reader: hits and misses of the query's reader in the last repeat (SHOW CACHES)."
        " full_state: a connect(partial=False) engine with the same rows, state_bytes ="
        " graph.state_bytes() once the query is installed (with default options the initial"
        " state over >= 1M base rows is computed by a Spark bulk replay), rss_delta_bytes ="
        " RSS after the installation minus before it. partial_state_bytes_after_repeat:"
        " graph.state_bytes() of the partial engine after the last repeat's workload.",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{'votes/story':>11}{'stories':>8}{'cold':>8}{'mix':>8}{'hot':>8}{'writes':>8}", end="")
    print(f"{'full state MB':>15}{'B/vote':>8}")
    for v, s in summary.items():
        ratios = "".join(
            f"{s[f'{sec}_ratio']:>8.3f}" if f"{sec}_ratio" in s else f"{'-':>8}" for sec in SECTIONS
        )
        full = (
            f"{s['full_state_bytes'] / 2**20:>15.1f}{s['full_state_bytes_per_vote']:>8.0f}"
            if "full_state_bytes" in s
            else f"{'-':>15}{'-':>8}"
        )
        print(f"{v:>11}{s['stories']:>8}{ratios}{full}")
    print("(ratios: noria ops/s / sqlite ops/s)")
    measured = (
        "" if len(args.only) == len(ONLY) else f" (of those measured: {', '.join(args.only)})"
    )
    print(f"all targets met{measured}: {result['all_targets_met']}")
    print(f"results: {args.out}")
    return result


if __name__ == "__main__":
    main()

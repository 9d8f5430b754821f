"""A migration on a loaded system: how soon a new view answers, and how fast its cache warms.

The system holds stories, votes and ratings and serves the vote query of ``benches/vote.py``
(Zipf(1.15) reads with 1% vote inserts) in one thread. Between measurements that op loop keeps
running. The migration then adds a view that scores each story from its votes and its ratings,
in the style of the thesis' listing 6.2 (``--view union``, the default):

    SELECT s.id, s.title, sc.score FROM stories s LEFT JOIN
      (SELECT story_id, SUM(rating) AS score FROM
         (SELECT story_id, 1 AS rating FROM votes
          UNION ALL SELECT story_id, stars AS rating FROM ratings) AS u
       GROUP BY story_id) AS sc ON sc.story_id = s.id
    WHERE s.id = ?

``--view join`` uses two left joins instead (COUNT(DISTINCT v.user_id), SUM(r.stars)). The ratings
table is created and loaded (``--ratings-per-story``) with the rest of the data, before the
migration; the migration is the view's installation.

Two fresh processes run the same steps, one with ``connect(partial=True)`` and one with
``partial=False``:

1. load the base tables, install the vote query, run ``--warmup-ops`` background ops;
2. time the first read of the new view (installation + one read): ``first_read_ms`` with partial
   state, ``full_build_ms`` fully materialized (there the installation computes all its state);
3. for ``--window`` seconds, read the new view with Zipf-chosen story ids (with
   ``--write-fraction`` vote and rating inserts mixed in) and record the reader hit rate of each
   second (SHOW CACHES hits and misses).

    python benches/migration.py                      # 200k stories
    python benches/migration.py --stories 50000 --window 5

Results go to benches/results/migration.json and migration.png (``--out``, ``--png``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from vote import (
    INSERT_VOTE,
    SCHEMA,
    VOTE_SQL,
    Zipf,
    cache_row,
    histogram,
    latency_summary,
    log,
    peak_rss_mb,
    rss_mb,
    run_ops,
    story_rows,
    vote_rows,
)

RESULTS = Path(__file__).resolve().parent / "results"

RATINGS_SCHEMA = (
    "CREATE TABLE ratings (user_id INT NOT NULL, story_id INT NOT NULL, stars INT NOT NULL)"
)
# ratings.story_id is a foreign key; applications index their foreign keys (Lobsters' schema does),
# so the new view's upquery path finds its base-table index already built. ``--no-fk-index``
# leaves it out: the migration then builds it (one CREATE INDEX over every rating).
RATINGS_INDEX = "CREATE INDEX ratings_story_id ON ratings (story_id)"
INSERT_RATING = "INSERT INTO ratings (user_id, story_id, stars) VALUES (?, ?, ?)"
VIEWS = {
    "union": (
        "SELECT s.id, s.title, sc.score FROM stories s LEFT JOIN"
        " (SELECT story_id, SUM(rating) AS score FROM"
        " (SELECT story_id, 1 AS rating FROM votes"
        " UNION ALL SELECT story_id, stars AS rating FROM ratings) AS u"
        " GROUP BY story_id) AS sc ON sc.story_id = s.id WHERE s.id = ?"
    ),
    "join": (
        "SELECT s.id, COUNT(DISTINCT v.user_id) AS votes, SUM(r.stars) AS score FROM stories s"
        " LEFT JOIN votes v ON v.story_id = s.id LEFT JOIN ratings r ON r.story_id = s.id"
        " WHERE s.id = ? GROUP BY s.id"
    ),
}
TARGETS = {"first_read_ms_max": 50, "seconds_to_90pct_hits_max": 5, "hit_rate": 0.9}


def rating_rows(n: int, per_story: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    return [(k // n, k % n, rng.randint(1, 5)) for k in range(n * per_story)]


def window(conn, view_sql: str, args: argparse.Namespace, zipf: Zipf, first_user: int) -> dict:
    """Zipf reads of the new view (and a few writes) for ``args.window`` seconds; per-second
    reader hit rates and read counts."""
    cur = conn.cursor()
    execute, fetchall = cur.execute, cur.fetchall
    rng = random.Random(args.seed + 4)
    clock = time.perf_counter
    hist = histogram()
    record = hist.record_value
    hit_rates, reads_per_s, writes_per_s = [], [], []
    prev = cache_row(conn, view_sql)
    user = first_user
    keys: list[int] = []
    start = clock()
    for second in range(1, int(args.window) + 1):
        reads = writes = 0
        end = start + second
        while True:
            if not keys:
                keys = zipf.sample(20_000)
                keys.reverse()
            story = keys.pop()
            if rng.random() < args.write_fraction:
                if writes % 2:
                    execute(INSERT_RATING, (user, story, rng.randint(1, 5)))
                else:
                    execute(INSERT_VOTE, (user, story))
                user += 1
                writes += 1
            else:
                t0 = clock()
                execute(view_sql, (story,))
                fetchall()
                t1 = clock()
                record(max(1, int((t1 - t0) * 1e6)))
                reads += 1
                if t1 >= end:
                    break
        row = cache_row(conn, view_sql)
        hits, misses = row[4] - prev[4], row[5] - prev[5]
        prev = row
        hit_rates.append(round(hits / (hits + misses), 4) if hits + misses else None)
        reads_per_s.append(reads)
        writes_per_s.append(writes)
    reached = [i + 1 for i, h in enumerate(hit_rates) if h is not None and h >= TARGETS["hit_rate"]]
    return {
        "hit_rate_per_s": hit_rates,
        "reads_per_s": reads_per_s,
        "writes_per_s": writes_per_s,
        "seconds_to_90pct_hits": reached[0] if reached else None,
        "window_read_latency": latency_summary(hist),
        "window_hits": prev[4],
        "window_misses": prev[5],
        "reader_keys": prev[3],
    }


def run_mode(args: argparse.Namespace) -> dict:
    import noria_py

    mode = args.mode
    view_sql = VIEWS[args.view]
    log(f"[{mode}] generating data")
    stories = story_rows(args.stories)
    votes = vote_rows(args.stories, args.votes_per_story)
    ratings = rating_rows(args.stories, args.ratings_per_story, args.seed + 5)

    conn = noria_py.connect(partial=mode == "partial")
    for stmt in [*SCHEMA, RATINGS_SCHEMA] + ([RATINGS_INDEX] if args.fk_index else []):
        conn.execute(stmt)
    t0 = time.perf_counter()
    conn.engine.load_rows("stories", ["id", "title"], stories)
    conn.engine.load_rows("votes", ["user_id", "story_id"], votes)
    conn.engine.load_rows("ratings", ["user_id", "story_id", "stars"], ratings)
    load_s = time.perf_counter() - t0
    del stories, votes, ratings
    log(f"[{mode}] loaded in {load_s:.1f}s; installing the vote query and running background ops")

    # The loaded system: the vote query installed and serving Zipf reads and votes.
    t0 = time.perf_counter()
    conn.execute(VOTE_SQL, (0,)).fetchall()
    vote_install_ms = (time.perf_counter() - t0) * 1000
    background = Zipf(args.stories, args.zipf, args.seed)
    brng = random.Random(args.seed + 1)
    ops = [(brng.random() < args.write_fraction, k) for k in background.sample(args.warmup_ops)]
    user = args.votes_per_story + args.ratings_per_story + 1000
    bg_hist = histogram()
    bg = run_ops(conn, ops, user, bg_hist)
    user += bg["writes"]
    state_before = conn.engine.graph.state_bytes()
    rss_before = rss_mb()

    # The migration: the first read of the new view installs it.
    zipf = Zipf(args.stories, args.zipf, args.seed + 3)
    first_key = zipf.sample(1)[0]
    log(f"[{mode}] migrating: first read of the new view (story {first_key})")
    t0 = time.perf_counter()
    first_rows = conn.execute(view_sql, (first_key,)).fetchall()
    first_read_ms = (time.perf_counter() - t0) * 1000
    second_key = (first_key + args.stories // 2) % args.stories
    t0 = time.perf_counter()
    conn.execute(view_sql, (second_key,)).fetchall()
    second_read_ms = (time.perf_counter() - t0) * 1000
    status = cache_row(conn, view_sql)[2]
    explain = [" | ".join(map(str, r)) for r in conn.execute("EXPLAIN " + view_sql)]
    log(f"[{mode}] first read {first_read_ms:.0f} ms; {args.window}s of reads on the new view")

    win = window(conn, view_sql, args, zipf, user + 10_000_000)
    result = {
        "mode": mode,
        "load_s": round(load_s, 2),
        "vote_install_ms": round(vote_install_ms, 1),
        "background_ops": args.warmup_ops,
        "background_reads_per_s": bg["reads_per_s"],
        "background_p99_ms": latency_summary(bg_hist)["p99_ms"],
        "first_read_ms": round(first_read_ms, 1),
        "first_read_key": first_key,
        "first_read_rows": [list(r) for r in first_rows],
        "second_cold_read_ms": round(second_read_ms, 2),
        "view_status": status,
        **win,
        "state_bytes_before": state_before,
        "state_bytes_after": conn.engine.graph.state_bytes(),
        "rss_before_mb": round(rss_before, 1),
        "rss_after_mb": round(rss_mb(), 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "explain": explain,
    }
    conn.close()
    return result


def spawn(args: argparse.Namespace, mode: str, fk_index: bool = True) -> dict:
    """Run one mode in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{mode}.json"
        cmd = [sys.executable, __file__, "--mode", mode, "--child-out", str(out)]
        if not fk_index:
            cmd.append("--no-fk-index")
        for name in (
            "stories",
            "votes_per_story",
            "ratings_per_story",
            "warmup_ops",
            "window",
            "write_fraction",
            "zipf",
            "seed",
            "view",
        ):
            cmd += ["--" + name.replace("_", "-"), str(getattr(args, name))]
        subprocess.run(cmd, check=True)
        return json.loads(out.read_text())


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, style in (("partial", "o-"), ("full", "s--")):
        rates = result[mode]["hit_rate_per_s"]
        xs = [i + 1 for i, h in enumerate(rates) if h is not None]
        ys = [h for h in rates if h is not None]
        label = (
            f"partial (first read {result['first_read_ms']:.0f} ms)"
            if mode == "partial"
            else f"full (build {result['full_build_ms']:.0f} ms)"
        )
        ax.plot(xs, ys, style, label=label)
    ax.axhline(TARGETS["hit_rate"], color="grey", linestyle=":", label="90% hits")
    ax.axvline(TARGETS["seconds_to_90pct_hits_max"], color="grey", linestyle="-.", linewidth=0.8)
    ax.set_xlabel("seconds after the migration's first read")
    ax.set_ylabel("reader hit rate in that second")
    ax.set_ylim(0, 1.05)
    ax.set_title(
        f"new view ({result['view']}) on {result['stories']:,} stories, Zipf {result['zipf_exponent']}"
    )
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stories", type=int, default=200_000, help="stories (default 200k)")
    p.add_argument("--votes-per-story", type=int, default=2, help="initial votes per story (2)")
    p.add_argument("--ratings-per-story", type=int, default=1, help="initial ratings (1)")
    p.add_argument(
        "--warmup-ops", type=int, default=50_000, help="background ops before the migration"
    )
    p.add_argument("--window", type=int, default=10, help="seconds of reads on the new view (10)")
    p.add_argument("--write-fraction", type=float, default=0.01, help="inserts among ops (0.01)")
    p.add_argument("--zipf", type=float, default=1.15, help="Zipf exponent (1.15)")
    p.add_argument("--view", choices=sorted(VIEWS), default="union", help="new view (union)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS / "migration.json")
    p.add_argument("--png", type=Path, help="plot path (default: --out with .png)")
    p.add_argument(
        "--no-fk-index",
        dest="fk_index",
        action="store_false",
        help="no index on ratings.story_id: the migration builds it",
    )
    p.add_argument("--mode", choices=["full", "partial"], help=argparse.SUPPRESS)
    p.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.mode:
        args.child_out.write_text(json.dumps(run_mode(args), default=str))
        return {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    png = args.png or args.out.with_suffix(".png")
    load_start = os.getloadavg()[0]
    started = time.perf_counter()

    partial = spawn(args, "partial", args.fk_index)
    unindexed = spawn(args, "partial", False) if args.fk_index else partial
    full = spawn(args, "full", args.fk_index)
    result = {
        "first_read_ms": partial["first_read_ms"],
        "fk_index": args.fk_index,
        "first_read_ms_building_index": unindexed["first_read_ms"],
        "full_build_ms": full["first_read_ms"],
        "hit_rate_per_s": partial["hit_rate_per_s"],
        "seconds_to_90pct_hits": partial["seconds_to_90pct_hits"],
        "full_hit_rate_per_s": full["hit_rate_per_s"],
        "targets": TARGETS,
        "first_read_within_target": partial["first_read_ms"] <= TARGETS["first_read_ms_max"],
        "hits_within_target": partial["seconds_to_90pct_hits"] is not None
        and partial["seconds_to_90pct_hits"] <= TARGETS["seconds_to_90pct_hits_max"],
        "same_first_answer": partial["first_read_rows"] == full["first_read_rows"],
        "partial": partial,
        "full": full,
        "view": args.view,
        "view_sql": VIEWS[args.view],
        "stories": args.stories,
        "votes": args.stories * args.votes_per_story,
        "ratings": args.stories * args.ratings_per_story,
        "warmup_ops": args.warmup_ops,
        "window_s": args.window,
        "write_fraction": args.write_fraction,
        "zipf_exponent": args.zipf,
        "seed": args.seed,
        "wall_s": round(time.perf_counter() - started, 1),
        "loadavg_1min_start": round(load_start, 2),
        "loadavg_1min_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "note": "first_read_ms: installing the new view plus its first read, partial state."
        " full_build_ms: the same with partial=False (the installation computes the view's"
        " whole state). hit_rate_per_s[i]: reader hits / lookups of the new view during second"
        " i+1 after the first read (SHOW CACHES deltas). seconds_to_90pct_hits: end of the"
        " first second whose hit rate is >= 0.9. Each mode runs in its own process."
        " fk_index: ratings.story_id carries an index (as a foreign key); then the"
        " migration builds no base-table index. first_read_ms_building_index: the same first"
        " read in a run without that index, so the migration's CREATE INDEX over all ratings"
        " is inside the measurement.",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    plot(result, png)

    print(f"{args.stories} stories, view {args.view!r}")
    print(f"partial: first read {result['first_read_ms']:.1f} ms (install + read)")
    print(f"partial, index built by the migration: {result['first_read_ms_building_index']:.1f} ms")
    print(f"full:    build + first read {result['full_build_ms']:.1f} ms")
    print(f"partial hit rate per second: {result['hit_rate_per_s']}")
    print(f"seconds to >= 90% hits: {result['seconds_to_90pct_hits']}")
    print(f"new view reads per second (partial): {partial['reads_per_s']}")
    print(f"results: {args.out}, {png}")
    return result


if __name__ == "__main__":
    main()

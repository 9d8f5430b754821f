"""Spark's bulk work: backfill throughput and bulk-replay time, against the in-process paths.

Backfill: loads of one Parquet votes table into a fresh in-memory engine (table votes, primary
key (user_id, story_id)):

- ``spark``: ``Connection.backfill`` (Spark reads and validates the file, casts it and streams
  Arrow batches to ``Engine.load_arrow``);
- ``pyarrow``: ``pyarrow.parquet`` reads the file batch by batch straight into ``load_arrow``
  (run first and last; the faster run counts);
- ``spark_only``: the Spark path with an engine that only counts the rows it is handed, which
  is what Spark itself costs;
- ``backfill_unchecked``: the Spark path with ``validate=False`` (no checking pass: no scan for
  unconvertible values, no shuffle looking for duplicate keys).

Bulk replay: installing the fully materialized vote count
``SELECT story_id, COUNT(*) FROM votes GROUP BY story_id`` over the loaded table, once replayed
in process and once through Spark (``spark/replay.py``: Parquet snapshot of the column it
reads, group-by in Spark, the consolidated rows fed to the aggregate), with the Spark session
already running and the snapshot written afresh. ``replay_speedup`` is in-process time over
Spark time. The same comparison at smaller sizes (``--replay-sizes``) locates
``replay_crossover_rows``, the base-table size above which Spark is faster (interpolated between
the measured sizes; the default ``bulk_replay_rows`` sits above it).

    python benches/spark.py                        # 10M votes
    python benches/spark.py --rows 1000000         # a quicker run
    python benches/spark.py --rows 1000000 --profile

Results go to benches/results/spark.json (``--out`` to change); ``--profile`` also profiles the
pyarrow path on a slice of the rows and saves the report as spark_profile.txt next to it. Spark
runs in local mode, where the executors share the driver's JVM: ``--driver-memory`` (default 6g)
sizes that heap, which the 10M-row validation pass needs (the default 1g runs out).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import math
import os
import platform
import pstats
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import noria_py
from noria_py.dataflow.records import consolidate

RESULTS = Path(__file__).resolve().parent / "results"
VOTES_DDL = (
    "CREATE TABLE votes ("
    " user_id INT NOT NULL,"
    " story_id INT NOT NULL,"
    " vote TINYINT NOT NULL,"
    " PRIMARY KEY (user_id, story_id))"
)
VIEW = "SELECT story_id, COUNT(*) FROM votes WHERE story_id = ? GROUP BY story_id"
FULL_VIEW = "SELECT story_id, COUNT(*) FROM votes GROUP BY story_id"
VOTES_PER_USER = 50


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000, help="votes (default 10M)")
    p.add_argument("--stories", type=int, default=100_000, help="distinct stories (default 100k)")
    p.add_argument("--batch-rows", type=int, default=50_000, help="rows per engine batch")
    p.add_argument("--spark-master", default=None, help="Spark master (default local[*])")
    p.add_argument(
        "--driver-memory",
        default="6g",
        help="spark.driver.memory: the heap of the driver, and of the executors in local mode",
    )
    p.add_argument(
        "--replay-sizes",
        default="250000,500000,1000000,2000000,4000000",
        help="comma-separated table sizes (below --rows) at which to time bulk replays, to"
        " locate the crossover",
    )
    p.add_argument(
        "--with-view",
        action="store_true",
        help=f"install the view `{VIEW}` before loading (its deltas then cost too)",
    )
    p.add_argument("--data-dir", type=Path, help="where to write the Parquet file (default: tmp)")
    p.add_argument("--out", type=Path, default=RESULTS / "spark.json")
    p.add_argument(
        "--profile",
        action="store_true",
        help="profile the pyarrow path on min(rows, 500k) rows with cProfile",
    )
    return p.parse_args(argv)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def write_votes(path: Path, rows: int, stories: int) -> None:
    """Distinct (user_id, story_id) pairs: each user votes on VOTES_PER_USER stories."""
    stride = max(1, stories // VOTES_PER_USER)
    rng = np.random.default_rng(1)
    writer = None
    chunk = 1_000_000
    for start in range(0, rows, chunk):
        i = np.arange(start, min(rows, start + chunk), dtype=np.int64)
        user = i // VOTES_PER_USER + 1
        story = (i % VOTES_PER_USER) * stride + (user % stride) + 1
        vote = np.where(rng.random(len(i)) < 0.9, 1, -1).astype(np.int8)
        table = pa.table({"user_id": user, "story_id": story, "vote": vote})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=256_000)
    writer.close()


def fresh_engine(with_view: bool):
    conn = noria_py.connect()
    conn.execute(VOTES_DDL)
    if with_view:
        conn.execute(VIEW, (1,)).fetchall()
    return conn


def load_pyarrow(conn, path: Path, batch_rows: int, limit: int | None = None) -> int:
    engine = conn.engine
    done = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
        if limit is not None and done >= limit:
            break
        done += engine.load_arrow("votes", [batch])
    return done


class CountingEngine:
    """Stands in for the engine: keeps the schema, counts the rows it is handed."""

    def __init__(self, engine):
        self.storage = engine.storage
        self.lock = contextlib.nullcontext()
        self.rows = 0

    def load_arrow(self, table, batches, on_duplicate="error") -> int:
        n = sum(b.num_rows for b in batches)
        self.rows += n
        return n


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def replay_once(engine, through_spark: bool):
    """Install FULL_VIEW (its state replayed through Spark or in process), then remove it.

    Returns (seconds to install, the aggregate's state, the Spark replay record or None). A new
    hook per run: the snapshot is exported every time, as for a first install.
    """
    from noria_py.spark.replay import BulkReplay

    hook = BulkReplay(engine, threshold=0) if through_spark else None
    engine.graph.bulk_replay = hook
    try:
        start = time.perf_counter()
        engine.prepare(FULL_VIEW)
        elapsed = time.perf_counter() - start
    finally:
        engine.graph.bulk_replay = None
    name = list(engine.queries)[-1]
    agg = next(n for n in engine.graph.nodes.values() if n.kind == "aggregate")
    state = sorted(consolidate(agg.contents()))
    engine._remove_query(name)
    record = None
    if hook is not None:
        used = [r for r in hook.records if r.path == "spark"]
        if not used:
            raise RuntimeError(f"the bulk replay did not use Spark: {list(hook.records)}")
        record = used[0]
    return elapsed, state, record


def measure_replay(engine) -> dict:
    """Bulk-replay time of FULL_VIEW through Spark and in process over the engine's votes."""
    rows = engine.storage.count("votes")
    log(f"bulk replay over {rows:,} votes: Spark")
    spark_s, spark_state, rec = replay_once(engine, through_spark=True)
    log(f"bulk replay over {rows:,} votes: in process")
    in_process_s, state, _ = replay_once(engine, through_spark=False)
    if spark_state != state:
        raise AssertionError("the Spark replay computed another state than the in-process one")
    return {
        "rows": rows,
        "in_process_s": round(in_process_s, 2),
        "spark_s": round(spark_s, 2),
        "speedup": round(in_process_s / spark_s, 3),
        "spark_snapshot_s": round(rec.snapshot_s, 2),
        "spark_compute_s": round(rec.spark_s, 2),
        "spark_load_s": round(rec.load_s, 2),
        "records_from_spark": rec.records,
        "groups": len(state),
    }


def crossover(points: list[dict]) -> int | None:
    """The table size where Spark starts to win: log-linear between the sizes around it."""
    points = sorted(points, key=lambda p: p["rows"])
    if points and points[0]["speedup"] >= 1:
        return points[0]["rows"]  # at or below the smallest size measured
    for a, b in zip(points, points[1:]):
        if a["speedup"] < 1 <= b["speedup"]:
            f = (1 - a["speedup"]) / (b["speedup"] - a["speedup"])
            la, lb = math.log(a["rows"]), math.log(b["rows"])
            return int(round(math.exp(la + f * (lb - la)), -3))
    return None  # in process stays faster at every size measured


def profile_pyarrow(path: Path, args, rows: int) -> tuple[str, list[dict]]:
    conn = fresh_engine(args.with_view)
    prof = cProfile.Profile()
    prof.enable()
    load_pyarrow(conn, path, args.batch_rows, limit=rows)
    prof.disable()
    conn.close()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text).sort_stats("tottime")
    stats.print_stats(25)
    total = sum(v[2] for v in stats.stats.values())
    top = []
    for (file, line, func), (_, calls, tottime, cumtime, _) in sorted(
        stats.stats.items(), key=lambda kv: -kv[1][2]
    )[:12]:
        top.append(
            {
                "function": f"{os.path.basename(file)}:{line}({func})",
                "calls": calls,
                "tottime_s": round(tottime, 3),
                "share_of_total": round(tottime / total, 3) if total else None,
                "cumtime_s": round(cumtime, 3),
            }
        )
    return text.getvalue(), top


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from noria_py.spark import session
    from noria_py.spark.backfill import backfill

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / f"votes_{args.rows}.parquet"
        if not path.exists():
            log(f"writing {args.rows:,} votes to {path}")
            write_votes(path, args.rows, args.stories)
        file_mb = path.stat().st_size / 2**20

        load_before = os.getloadavg()
        log("starting Spark")
        config = {"spark.driver.memory": args.driver_memory}
        start_s, spark = timed(lambda: session.get_session(args.spark_master, config))
        master = spark.sparkContext.master

        # Spark's first jobs in a session pay for Python workers and code generation: warm up.
        warm = data_dir / "warmup.parquet"
        write_votes(warm, 1000, 100)
        conn = fresh_engine(False)
        backfill(CountingEngine(conn.engine), "votes", str(warm), progress=False)
        conn.close()

        log("pyarrow -> engine")
        conn = fresh_engine(args.with_view)
        pyarrow_s, n = timed(lambda: load_pyarrow(conn, path, args.batch_rows))
        assert n == args.rows, n
        conn.close()

        log("Spark only (rows counted, not loaded)")
        conn = fresh_engine(args.with_view)
        counting = CountingEngine(conn.engine)
        spark_only_s, n = timed(
            lambda: backfill(
                counting, "votes", str(path), batch_rows=args.batch_rows, progress=False
            )
        )
        assert n == args.rows, n
        conn.close()

        log("Spark -> engine")
        conn = fresh_engine(args.with_view)
        backfill_s, n = timed(
            lambda: conn.backfill("votes", str(path), batch_rows=args.batch_rows, progress=True)
        )
        assert n == args.rows, n
        check = conn.execute("SELECT COUNT(*) FROM votes").fetchall()[0][0]
        assert check == args.rows, check
        conn.close()

        log("Spark -> engine, without the checking pass")
        conn = fresh_engine(args.with_view)
        unchecked_s, n = timed(
            lambda: conn.backfill(
                "votes", str(path), batch_rows=args.batch_rows, progress=False, validate=False
            )
        )
        assert n == args.rows, n
        conn.close()

        # Once more at the end: the first run can share the CPU with Spark's JVM warming up.
        log("pyarrow -> engine, again")
        conn = fresh_engine(args.with_view)
        pyarrow_again_s, n = timed(lambda: load_pyarrow(conn, path, args.batch_rows))
        assert n == args.rows, n

        # Bulk replay over the table just loaded, then at smaller sizes for the crossover.
        for name in list(conn.engine.queries):
            conn.engine._remove_query(name)  # --with-view: its aggregate would be reused
        replay = measure_replay(conn.engine)
        conn.close()
        points = []
        sizes = sorted({int(x) for x in args.replay_sizes.split(",") if x.strip()})
        for size in [n for n in sizes if n < args.rows]:
            small = fresh_engine(False)
            load_pyarrow(small, path, args.batch_rows, limit=size)
            points.append(measure_replay(small.engine))
            small.close()
        points.append(replay)
        load_after = os.getloadavg()
        pyarrow_runs = [round(pyarrow_s, 2), round(pyarrow_again_s, 2)]
        pyarrow_s = min(pyarrow_s, pyarrow_again_s)

        profile = None
        if args.profile:
            rows = min(args.rows, 500_000)
            log(f"profiling the pyarrow path on {rows:,} rows")
            report, top = profile_pyarrow(path, args, rows)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            (args.out.parent / "spark_profile.txt").write_text(report)
            profile = {"rows": rows, "top_by_own_time": top}
        session.stop_session()

    import pyspark

    result = {
        "rows": args.rows,
        "batch_rows": args.batch_rows,
        "with_view": args.with_view,
        "parquet_mb": round(file_mb, 1),
        "spark_master": master,
        "spark_session_start_s": round(start_s, 2),
        "backfill_s": round(backfill_s, 2),
        "backfill_rows_per_s": round(args.rows / backfill_s, 1),
        "pyarrow_s": round(pyarrow_s, 2),
        "pyarrow_runs_s": pyarrow_runs,
        "pyarrow_rows_per_s": round(args.rows / pyarrow_s, 1),
        "ratio": round(pyarrow_s / backfill_s, 3),
        "backfill_unchecked_s": round(unchecked_s, 2),
        "backfill_unchecked_rows_per_s": round(args.rows / unchecked_s, 1),
        "spark_only_s": round(spark_only_s, 2),
        "spark_only_rows_per_s": round(args.rows / spark_only_s, 1),
        "replay_view": FULL_VIEW,
        "replay_rows": replay["rows"],
        "replay_in_process_s": replay["in_process_s"],
        "replay_spark_s": replay["spark_s"],
        "replay_speedup": replay["speedup"],
        "replay_crossover_rows": crossover(points),
        "replay_points": points,
        "driver_memory": args.driver_memory,
        "load_average_1m": {"start": round(load_before[0], 2), "end": round(load_after[0], 2)},
        "profile": profile,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "pyspark": pyspark.__version__,
            "pyarrow": pa.__version__,
            "platform": platform.platform(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    log(json.dumps({k: v for k, v in result.items() if k not in ("profile", "machine")}, indent=2))
    log(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

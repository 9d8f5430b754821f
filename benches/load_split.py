"""Where a load's time goes: the phases of ``benches/load.py``'s loads, timed in one process.

For each load (the same rows, files and table as ``benches/load.py``), the wall time of:

- ``spark_csv_shape``: a CSV file through Spark: the pass over its files' shape (parsing the
  file, kept by Spark for the next pass; a multi-line CSV file is one Spark task);
- ``spark_check_pass``: the Spark pass that reads the rows cast to the table's columns and
  checks them (``_check_while_reading``), of which ``spark_wait`` the driver spent waiting for
  Spark's next Arrow batch (the rest: checking and holding them, finding repeated keys);
  ``*_two_pass``: the same load with ``ONE_PASS = False``, a separate checking aggregation
  (``spark_check_aggregation``) and a second read that streams the rows (``spark_wait``);
- ``write``: the writes to base storage (``Engine.load_stored``: SQLite's ``executemany``, fed
  with rows made from the converted batches' columns as it goes, and the commit);
- ``views_rebuilt``: with views over the table, building the dataflow's indexes and the full
  views again after the load (``Engine.bulk_load``'s end);
- ``total``: the whole ``conn.backfill`` call; ``other``: what the phases above leave out
  (reading a local file, converting and checking batches in Arrow, opening the source).

    python benches/load_split.py                    # 1M rows: local, Spark, JDBC loads
    python benches/load_split.py --only parquet_spark,csv_views

Results go to benches/results/load_split.json (``--out`` to change). The first load through
Spark also starts its session (not counted: the session starts before the loads).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import load as L  # noqa: E402

from noria_py.engine import loads as engine_loads  # noqa: E402
from noria_py.spark import backfill as bf  # noqa: E402

PHASES = collections.Counter()


def _timed(owner, name: str, phase: str) -> None:
    real = getattr(owner, name)

    @functools.wraps(real)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            PHASES[phase] += time.perf_counter() - start

    setattr(owner, name, timed)


def _instrument() -> None:
    _timed(bf, "_check_csv_files", "spark_csv_shape")
    _timed(bf, "_check_while_reading", "spark_check_pass")
    _timed(bf, "_validate", "spark_check_aggregation")
    _timed(engine_loads.LoadsMixin, "load_stored", "write")
    real_stream = bf._arrow_batches

    def stream(df, batch_rows):
        batches = real_stream(df, batch_rows)

        def waited():
            while True:
                start = time.perf_counter()
                try:
                    batch = next(batches)
                except StopIteration:
                    return
                finally:
                    PHASES["spark_wait"] += time.perf_counter() - start
                yield batch

        gen = waited()

        class Stream:
            def __iter__(self):
                return gen

            def close(self):
                gen.close()
                batches.close()

        return Stream()

    bf._arrow_batches = stream
    real_bulk = engine_loads.LoadsMixin.bulk_load

    @contextlib.contextmanager
    def bulk_load(self, table, rows):
        marks = {}
        with real_bulk(self, table, rows) as dropped:
            try:
                yield dropped
            finally:
                marks["end"] = time.perf_counter()
        PHASES["views_rebuilt"] += time.perf_counter() - marks["end"]

    engine_loads.LoadsMixin.bulk_load = bulk_load


def _two_pass(run):
    bf.ONE_PASS = False
    try:
        return run()
    finally:
        bf.ONE_PASS = True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", default="", help="comma-separated loads to run")
    parser.add_argument("--out", default=str(L.RESULTS / "load_split.json"))
    args = parser.parse_args(argv)
    n = args.rows
    _instrument()
    result: dict = {
        "rows": n,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "seconds": {},
    }
    with tempfile.TemporaryDirectory(prefix="noria-split-") as directory:
        csv_path, parquet_path = L.write_sources(n, directory)
        result["sqlite_seconds"] = round(n / L.sqlite_baseline(n, directory), 3)
        runs = {
            "csv": lambda: L.noria_load(n, directory, csv_path),
            "parquet": lambda: L.noria_load(n, directory, parquet_path),
            "csv_views": lambda: L.noria_load(n, directory, csv_path, views=True),
            "parquet_spark": lambda: L.noria_load(n, directory, parquet_path, via="spark"),
            "parquet_spark_views": lambda: L.noria_load(
                n, directory, parquet_path, views=True, via="spark"
            ),
            "csv_spark": lambda: L.noria_load(n, directory, csv_path, via="spark"),
            # the same with the separate checking pass (``ONE_PASS = False``), as before
            "parquet_spark_two_pass": lambda: _two_pass(
                lambda: L.noria_load(n, directory, parquet_path, via="spark")
            ),
            "csv_spark_two_pass": lambda: _two_pass(
                lambda: L.noria_load(n, directory, csv_path, via="spark")
            ),
        }
        server = None
        if not args.only or "jdbc" in args.only:
            server, url = L.jdbc_source(n, csv_path)
            runs["jdbc"] = lambda: L.noria_load(
                n, directory, url, options={"dbtable": "items", "user": "root"}
            )
        if args.only:
            runs = {k: v for k, v in runs.items() if k in args.only.split(",")}
        try:
            if any("spark" in k or "jdbc" in k for k in runs):
                from noria_py.spark.session import get_session

                get_session()
            for name, run in runs.items():
                PHASES.clear()
                start = time.perf_counter()
                run()
                total = time.perf_counter() - start
                phases = {k: round(v, 3) for k, v in PHASES.items() if not k.startswith("_")}
                # the wait for Spark's batches is part of the checking pass when there is one
                inside = "spark_check_pass" in phases
                counted = sum(v for k, v in phases.items() if k != "spark_wait" or not inside)
                phases["other"] = round(total - counted, 3)
                phases["total"] = round(total, 3)
                result["seconds"][name] = phases
                print(f"{name:22s} {phases}", file=sys.stderr)
        finally:
            if server is not None:
                server.stop()
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

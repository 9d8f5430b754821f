"""How the backfill's load pass moves batches from Spark to the driver, both ways measured.

- ``jvm``: Spark's JVM converts each partition to Arrow record batches (``toArrowBatchRdd``),
  which the driver reads partition by partition; no Python worker runs.
- ``python``: Python workers pack each partition into Arrow IPC messages (``mapInArrow``), which
  the driver reads as one small row per batch; the workers need pyarrow.

Each is timed on the same Parquet votes file twice, Spark only (an engine that counts the rows it
is handed, so the engine's own cost is left out) with and without the checking pass; the faster
of two runs counts. The session is started (and warmed up) first.

    python benches/backfill_transfer.py                  # 1M votes
    python benches/backfill_transfer.py --rows 5000000

Results go to benches/results/backfill_transfer.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark import CountingEngine, fresh_engine, write_votes  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="votes (default 1M)")
    p.add_argument("--stories", type=int, default=100_000, help="distinct stories")
    p.add_argument("--spark-master", default="local[2]", help="Spark master (default local[2])")
    p.add_argument("--driver-memory", default="2g", help="the local-mode JVM's heap")
    p.add_argument("--out", type=Path, default=RESULTS / "backfill_transfer.json")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from noria_py.spark import backfill as bf
    from noria_py.spark import session

    results: dict = {
        "rows": args.rows,
        "spark_master": args.spark_master,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "runs": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "votes.parquet"
        write_votes(path, args.rows, args.stories)
        warm = Path(tmp) / "warm.parquet"
        write_votes(warm, 1000, 100)
        session.get_session(args.spark_master, {"spark.driver.memory": args.driver_memory})
        for transfer in ("jvm", "python"):
            bf.TRANSFER = transfer
            conn = fresh_engine(False)
            bf.backfill(CountingEngine(conn.engine), "votes", str(warm), progress=False)
            conn.close()
            for validate in (False, True):
                best = None
                for _ in range(2):
                    conn = fresh_engine(False)
                    start = time.perf_counter()
                    n = bf.backfill(
                        CountingEngine(conn.engine),
                        "votes",
                        str(path),
                        progress=False,
                        validate=validate,
                    )
                    elapsed = time.perf_counter() - start
                    conn.close()
                    assert n == args.rows, n
                    best = elapsed if best is None else min(best, elapsed)
                key = f"{transfer}{'' if validate else '_unchecked'}"
                results["runs"][key] = {
                    "seconds": round(best, 3),
                    "rows_per_s": round(args.rows / best),
                }
                print(f"{key:>18}: {best:6.2f} s  {args.rows / best:>12,.0f} rows/s", flush=True)
        session.stop_session()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

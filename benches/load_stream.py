"""A checked load written while it is checked, against the loader's other ways, in one process.

Two comparisons, each alternating the two ways ``--rounds`` times on the same source (rows of
``benches/load.py``, into a fresh database file each run), medians of rows/s:

* beyond the cache: the loader's cache forced to ``--cache-mb`` (as a load too large to hold
  is): written while checked once the held batches outgrow it (``STREAM_BYTES``), against the
  old way, reading the source a second time for the load pass;
* within the cache: written while checked from the first batches (``STREAM_BYTES`` = 1) against
  checking everything first and then writing (what the loader does below the cache).

Sources: CSV and Parquet read here, and with ``--jdbc`` a MariaDB table read by its client
program (a server started on loopback, as ``benches/load.py --jdbc`` does).

    python benches/load_stream.py [--rows 1000000] [--rounds 4] [--jdbc]

Writes benches/results/load_stream.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benches"))

import load as L  # noqa: E402 - benches/load.py, beside this file

from noria_py import loader  # noqa: E402

RESULTS = ROOT / "benches" / "results" / "load_stream.json"
HUGE = 1 << 62


def compare(n, directory, source, options, rounds, ways: dict) -> dict:
    """Median rows/s of each way (``name -> (CACHE_BYTES, STREAM_BYTES)``), alternating."""
    names = list(ways)
    runs: dict[str, list[float]] = {name: [] for name in names}
    saved = loader.CACHE_BYTES, loader.STREAM_BYTES
    try:
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                loader.CACHE_BYTES, loader.STREAM_BYTES = ways[name]
                kw = {"options": options} if options else {}
                runs[name].append(L.noria_load(n, directory, source, **kw))
    finally:
        loader.CACHE_BYTES, loader.STREAM_BYTES = saved
    out = {name: round(statistics.median(v)) for name, v in runs.items()}
    out["runs"] = {name: [round(x) for x in v] for name, v in runs.items()}
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--cache-mb", type=int, default=64)
    p.add_argument("--jdbc", action="store_true", help="also a MariaDB source")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    cache = args.cache_mb << 20
    beyond = {"written_while_checked": (cache, cache), "read_twice": (cache, HUGE)}
    within = {
        "written_while_checked": (loader.CACHE_BYTES, 1),
        "checked_first": (loader.CACHE_BYTES, HUGE),
    }
    result: dict = {"rows": args.rows, "rounds": args.rounds, "cache_mb": args.cache_mb}
    with tempfile.TemporaryDirectory(prefix="load_stream") as d:
        csv_path, parquet_path = L.write_sources(args.rows, d)
        sources = [("csv", csv_path, None), ("parquet", parquet_path, None)]
        server = None
        if args.jdbc:
            server, url = L.jdbc_source(args.rows, csv_path)
            sources.append(("mariadb_client", url, {"dbtable": "items", "user": "root"}))
        try:
            for name, source, options in sources:
                for label, ways in (("beyond_the_cache", beyond), ("within_the_cache", within)):
                    got = compare(args.rows, d, source, options, args.rounds, ways)
                    result.setdefault(label, {})[name] = got
                    print(label, name, {k: v for k, v in got.items() if k != "runs"}, flush=True)
        finally:
            if server is not None:
                server.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()

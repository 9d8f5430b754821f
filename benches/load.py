"""Loading speed: rows per second into base storage, against SQLite's own ``executemany`` of the
same rows into the same table, measured side by side in this process.

The rows: ``items (id INT PRIMARY KEY, name VARCHAR(40), qty INT, price DECIMAL(10,2), created
DATETIME)`` with names holding commas and quotes. They are written once as a CSV file (Python's
``csv`` module, RFC 4180) and a Parquet file, then loaded into a fresh database file by:

- ``sqlite``: the baseline, ``sqlite3`` ``executemany`` of the rows already in memory, in base
  storage's form (text for the DECIMAL and the DATETIME), into a plain SQLite file (default
  settings: rollback journal, synchronous FULL) with the same columns and primary key, in one
  transaction; ``sqlite_wal``: the same into a file set up as base storage is (WAL journal,
  synchronous NORMAL, which lets other processes read while one writes);
- ``csv`` and ``parquet``: ``conn.backfill`` reading the file in this process (Arrow, no
  Spark), with validation (the default);
- ``csv_views`` / ``parquet_views``: the same loads with two views over the table (a grouped
  aggregate, fully materialized, and a parameterized one read before the load, partial);
- ``csv_spark`` / ``parquet_spark`` (``--spark``): the same files through local Spark, and
  ``csv_spark_views`` / ``parquet_spark_views`` with the views;
- ``jdbc`` (``--jdbc``): the rows from a MariaDB table (started here on loopback) at a
  ``jdbc:mariadb://`` URL, read as by default: by the ``mariadb`` client program, without Spark
  (``noria_py.mysql_client``); ``jdbc_views`` with the views; ``jdbc_spark`` and
  ``jdbc_spark_views`` the same through Spark's JDBC reader (``via="spark"``), and
  ``jdbc_ranges`` through Spark in four key ranges.

Each rate is the best of ``--repeat`` runs (SQLite's own rate varies by half between runs on
this machine). Each ratio is the load's rate over a baseline's (``ratio_to_sqlite``, ``ratio_to_sqlite_wal``).
A file's read time is part of the load.

    python benches/load.py                        # 1M rows, local loads
    python benches/load.py --rows 10000000        # 10M rows
    python benches/load.py --spark --jdbc         # and the Spark paths

Results go to benches/results/load.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import noria_py  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DDL = (
    "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT, price DECIMAL(10,2),"
    " created DATETIME)"
)
COLUMNS = ["id", "name", "qty", "price", "created"]


def rows(n: int, seed: int = 7):
    """The rows in base storage's form: (int, str, int, str, str)."""
    rnd = random.Random(seed)
    start = dt.datetime(2020, 1, 1)
    for i in range(1, n + 1):
        cents = rnd.randrange(1_000_000)
        when = start + dt.timedelta(seconds=rnd.randrange(100_000_000))
        yield (
            i,
            f'item {i}, "{rnd.choice("abcdef")}"',
            rnd.randrange(1000),
            f"{cents // 100}.{cents % 100:02d}",
            when.strftime("%Y-%m-%d %H:%M:%S"),
        )


def write_sources(n: int, directory: str) -> tuple[str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv_path = os.path.join(directory, "items.csv")
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows(n))
    parquet_path = os.path.join(directory, "items.parquet")
    writer = None
    chunk: list = []

    def flush():
        nonlocal writer
        cols = list(zip(*chunk))
        table = pa.table(
            {
                "id": pa.array(cols[0], pa.int32()),
                "name": pa.array(cols[1], pa.string()),
                "qty": pa.array(cols[2], pa.int32()),
                "price": pa.array(cols[3]).cast(pa.decimal128(10, 2)),
                "created": pa.array(cols[4]).cast(pa.timestamp("us")),
            }
        )
        if writer is None:
            writer = pq.ParquetWriter(parquet_path, table.schema)
        writer.write_table(table)

    for r in rows(n):
        chunk.append(r)
        if len(chunk) == 500_000:
            flush()
            chunk = []
    if chunk:
        flush()
    writer.close()
    return csv_path, parquet_path


def sqlite_baseline(n: int, directory: str, wal: bool = False) -> float:
    path = os.path.join(directory, "baseline.db")
    conn = sqlite3.connect(path)
    if wal:  # configured as base storage is: readers in other processes never wait
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price NUMERIC,"
        " created TEXT)"
    )
    data = list(rows(n))
    start = time.perf_counter()
    conn.executemany("INSERT INTO items VALUES (?, ?, ?, ?, ?)", data)
    conn.commit()
    elapsed = time.perf_counter() - start
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return n / elapsed


def noria_load(
    n: int, directory: str, source, views: bool = False, via: str | None = None, **kw
) -> float:
    path = os.path.join(directory, "noria.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = noria_py.connect(path, bulk_replay_rows=None)  # the checks below stay in process
    conn.execute(DDL)
    if views:
        conn.execute(
            "CREATE VIEW by_qty AS SELECT qty, COUNT(*) AS n, SUM(price) AS total FROM items"
            " GROUP BY qty"
        )
        conn.execute("SELECT * FROM by_qty WHERE qty = ?", (5,)).fetchall()
        conn.execute("SELECT name, price FROM items WHERE id = ?", (1,)).fetchall()
    start = time.perf_counter()
    loaded = conn.backfill("items", source, progress=False, via=via, **kw)
    elapsed = time.perf_counter() - start
    assert loaded == n, (loaded, n)
    if views:
        # the views stay exact
        want = conn.execute("SELECT COUNT(*), SUM(price) FROM items WHERE qty = 5").fetchall()
        got = conn.execute("SELECT n, total FROM by_qty WHERE qty = ?", (5,)).fetchall()
        assert got == want, (got, want)
    conn.close()
    plain = sqlite3.connect(path)  # every row is in base storage (read without a view)
    count = plain.execute("SELECT COUNT(*) FROM items").fetchone()[0]
    plain.close()
    assert count == n, (count, n)
    return n / elapsed


def jdbc_source(n: int, csv_path: str):
    """A MariaDB server on loopback holding the rows (loaded from the CSV by LOAD DATA)."""
    from noria_py.workloads.lobsters.backends import MariaDBServer

    server = MariaDBServer(collation="utf8mb4_general_ci").start()
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS bench")
    cur.execute("USE bench")
    cur.execute(DDL)
    os.chmod(os.path.dirname(csv_path), 0o755)
    os.chmod(csv_path, 0o644)
    cur.execute(
        f"LOAD DATA INFILE '{csv_path}' INTO TABLE items FIELDS TERMINATED BY ','"
        " OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' IGNORE 1 LINES"
    )
    conn.close()
    return server, f"jdbc:mariadb://127.0.0.1:{server.port}/bench"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--spark", action="store_true", help="also load through local Spark")
    parser.add_argument("--jdbc", action="store_true", help="also load from MariaDB over JDBC")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated loads to run (beside the SQLite baselines), e.g. jdbc,jdbc_ranges"
        " (give another --out: the file holds only what ran)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each load; the best counts (default 3)"
    )
    parser.add_argument(
        "--local-only", action="store_true", help="only the baselines and the Arrow reader"
    )
    parser.add_argument("--out", default=str(RESULTS / "load.json"))
    args = parser.parse_args(argv)
    n = args.rows
    result: dict = {
        "rows": n,
        "repeat": args.repeat,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "rows_per_s": {},
        "ratio_to_sqlite": {},
    }
    with tempfile.TemporaryDirectory(prefix="noria-load-") as directory:
        t = time.perf_counter()
        csv_path, parquet_path = write_sources(n, directory)
        print(f"sources written in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        runs = {
            "sqlite": lambda: sqlite_baseline(n, directory),
            "sqlite_wal": lambda: sqlite_baseline(n, directory, wal=True),
            "csv": lambda: noria_load(n, directory, csv_path),
            "parquet": lambda: noria_load(n, directory, parquet_path),
            "csv_views": lambda: noria_load(n, directory, csv_path, views=True),
            "parquet_views": lambda: noria_load(n, directory, parquet_path, views=True),
            "csv_no_validation": lambda: noria_load(n, directory, csv_path, validate=False),
        }
        if args.spark:
            runs["csv_spark"] = lambda: noria_load(n, directory, csv_path, via="spark")
            runs["parquet_spark"] = lambda: noria_load(n, directory, parquet_path, via="spark")
            runs["csv_spark_views"] = lambda: noria_load(
                n, directory, csv_path, views=True, via="spark"
            )
            runs["parquet_spark_views"] = lambda: noria_load(
                n, directory, parquet_path, views=True, via="spark"
            )
        server = None
        if args.jdbc:
            server, url = jdbc_source(n, csv_path)
            runs["jdbc"] = lambda: noria_load(
                n, directory, url, options={"dbtable": "items", "user": "root"}
            )
            runs["jdbc_views"] = lambda: noria_load(
                n, directory, url, views=True, options={"dbtable": "items", "user": "root"}
            )
            runs["jdbc_spark"] = lambda: noria_load(
                n, directory, url, via="spark", options={"dbtable": "items", "user": "root"}
            )
            runs["jdbc_spark_views"] = lambda: noria_load(
                n,
                directory,
                url,
                views=True,
                via="spark",
                options={"dbtable": "items", "user": "root"},
            )
            # Spark reads in 4 key ranges in parallel (each its own snapshot: asked for)
            runs["jdbc_ranges"] = lambda: noria_load(
                n,
                directory,
                url,
                via="spark",
                options={"dbtable": "items", "user": "root", "numPartitions": "4"},
            )
        try:
            if args.only:
                keep = {"sqlite", "sqlite_wal", *args.only.split(",")}
                runs = {k: v for k, v in runs.items() if k in keep}
            if args.local_only:
                runs = {
                    k: v for k, v in runs.items() if k in ("sqlite", "sqlite_wal", "csv", "parquet")
                }
            for name, run in runs.items():
                # the best of --repeat runs (the first Spark run also starts the session)
                rate = max(run() for _ in range(args.repeat))
                result["rows_per_s"][name] = round(rate)
                print(f"{name:20s} {rate:12,.0f} rows/s", file=sys.stderr)
        finally:
            if server is not None:
                server.stop()
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    base = result["rows_per_s"]["sqlite"]
    wal = result["rows_per_s"]["sqlite_wal"]
    result["ratio_to_sqlite_wal"] = {}
    for name, rate in result["rows_per_s"].items():
        if not name.startswith("sqlite"):
            result["ratio_to_sqlite"][name] = round(rate / base, 3)
            result["ratio_to_sqlite_wal"][name] = round(rate / wal, 3)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("ratio_to_sqlite", "ratio_to_sqlite_wal")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

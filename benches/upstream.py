"""Upstream mode: how fast the snapshot loads, and how fast replication applies the binlog.

A private MariaDB with a ROW binlog is started (as the tests' fixture starts it) and one table
of ``--rows`` rows is filled. Then:

- ``snapshot``: ``noria_py.upstream.snapshot`` into a fresh in-memory engine (consistent
  snapshot, rows streamed from MariaDB, coerced and bulk-loaded), against the baseline of the
  same rows streamed from MariaDB by the same cursor and written by SQLite's own
  ``executemany`` into an in-memory table of the same columns. ``load_ratio`` is the
  baseline's time over the snapshot's (1.0: as fast as the baseline; the target is >= 0.5).
- ``replication``: ``--txns`` single-row UPDATE transactions committed on MariaDB by one
  client while a mirror (``noria_py.connect(upstream=...)`` with a cached view over the table)
  replicates them; the time from the first commit until the mirror has applied the last, and
  the lag seen when the writer finished.

    python benches/upstream.py                      # 200k rows, 2000 transactions
    python benches/upstream.py --rows 1000000
    python benches/upstream.py --lobsters           # the Lobsters comparison below

``--lobsters`` runs the Lobsters natural queries against MariaDB alone (with its ROW binlog) and
against the same MariaDB behind ``noria-py serve --upstream``, with the same data and load
generator, and reports the pages/s each sustains at p95 < 50 ms and the replication lag (p50,
p99) at that load (``benches/lobsters.py --backends mariadb-binlog,noria-upstream``; results in
benches/results/upstream_lobsters.json and .png).

Results go to benches/results/upstream.json (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).resolve().parent / "results"

DDL = (
    "CREATE TABLE items (id BIGINT PRIMARY KEY, owner INT NOT NULL, title VARCHAR(60), "
    "price DECIMAL(10,2), created DATETIME, KEY (owner))"
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=200_000, help="rows in the table (200k)")
    p.add_argument("--txns", type=int, default=2_000, help="replicated transactions (2000)")
    p.add_argument("--out", type=Path, default=RESULTS / "upstream.json")
    p.add_argument(
        "--lobsters",
        action="store_true",
        help="the Lobsters comparison instead (further options go to benches/lobsters.py)",
    )
    args, rest = p.parse_known_args(argv)
    if rest and not args.lobsters:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    return args


def fill(conn, rows: int) -> None:
    with conn.cursor() as cur:
        cur.execute(DDL)
        step = 5_000
        for lo in range(0, rows, step):
            values = [
                (i, i % 1000, f"item number {i}", f"{i % 997}.{i % 100:02d}", "2024-01-02 03:04:05")
                for i in range(lo, min(rows, lo + step))
            ]
            cur.executemany("INSERT INTO items VALUES (%s, %s, %s, %s, %s)", values)


def baseline(url) -> tuple[float, int]:
    """The same rows streamed by the same cursor into SQLite's executemany."""
    import pymysql.cursors

    start = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, title TEXT, "
        "price TEXT, created TEXT)"
    )
    db.execute("CREATE INDEX items_owner ON items (owner)")
    conn = url.connect()
    cur = conn.cursor(pymysql.cursors.SSCursor)
    cur.execute("SELECT id, owner, title, price, created FROM items")
    n = 0
    while True:
        batch = cur.fetchmany(20_000)
        if not batch:
            break
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO items VALUES (?, ?, ?, ?, ?)",
            [(a, b, c, str(d), e.isoformat(" ")) for a, b, c, d, e in batch],
        )
        db.execute("COMMIT")
        n += len(batch)
    cur.close()
    conn.close()
    return time.perf_counter() - start, n


def load_only(url, rows: int) -> tuple[float, float]:
    """The load step alone, on rows fetched beforehand: the snapshot's (coercion and the
    engine's bulk load) and SQLite's executemany of the same rows. Best of two each."""
    from noria_py.engine import Engine
    from noria_py.upstream.snapshot import load_batch, mirror_txn

    conn = url.connect()
    with conn.cursor() as cur:
        cur.execute("SHOW CREATE TABLE items")
        ddl = cur.fetchone()[1]
        cur.execute("SELECT id, owner, title, price, created FROM items")
        fetched = list(cur.fetchall())
    conn.close()
    batches = [fetched[i : i + 20_000] for i in range(0, len(fetched), 20_000)]
    ours = theirs = float("inf")
    for _ in range(2):
        engine = Engine()
        engine.execute(ddl)
        schema = engine.storage.schemas["items"]
        txn = mirror_txn(engine)
        start = time.perf_counter()
        for b in batches:
            load_batch(engine, txn, schema, b)
        ours = min(ours, time.perf_counter() - start)
        assert engine.storage.count("items") == rows
        engine.close()
        db = sqlite3.connect(":memory:")
        db.execute(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, title TEXT, "
            "price TEXT, created TEXT)"
        )
        db.execute("CREATE INDEX items_owner ON items (owner)")
        start = time.perf_counter()
        for b in batches:
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?)",
                [(a, o, t, str(p), c.isoformat(" ")) for a, o, t, p, c in b],
            )
            db.execute("COMMIT")
        theirs = min(theirs, time.perf_counter() - start)
        db.close()
    return ours, theirs


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.lobsters:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import lobsters

        return lobsters.main(
            ["--backends", "mariadb-binlog,noria-upstream"]
            + ["--out", str(RESULTS / "upstream_lobsters.json")]
            + args.rest
        )
    import noria_py
    from noria_py.engine import Engine
    from noria_py.upstream.snapshot import snapshot
    from noria_py.upstream.source import UpstreamURL
    from noria_py.workloads.lobsters.backends import MariaDBServer

    server = MariaDBServer(
        buffer_pool="256M",
        collation="utf8mb4_general_ci",
        extra_args=(
            "--log-bin=mariadb-bin",
            "--binlog-format=ROW",
            "--binlog-row-metadata=FULL",
            "--server-id=1",
        ),
    )
    server.database = "bench"
    server.start()
    results: dict = {
        "rows": args.rows,
        "txns": args.txns,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    try:
        url = UpstreamURL.parse(f"mysql://root@127.0.0.1:{server.port}/bench")
        conn = url.connect()
        fill(conn, args.rows)
        base_s, n = min(baseline(url) for _ in range(2))
        snap_s = None
        for _ in range(2):
            engine = Engine()
            start = time.perf_counter()
            report = snapshot(engine, url)
            took = time.perf_counter() - start
            assert report.tables == {"items": args.rows}, report
            engine.close()
            snap_s = took if snap_s is None else min(snap_s, took)
        load_s, sqlite_s = load_only(url, args.rows)
        results["snapshot"] = {
            "load_only_seconds": round(load_s, 3),
            "sqlite_executemany_only_seconds": round(sqlite_s, 3),
            "load_only_ratio": round(sqlite_s / load_s, 3),
            "seconds": round(snap_s, 3),
            "rows_per_s": round(args.rows / snap_s),
            "baseline_seconds": round(base_s, 3),
            "baseline_rows_per_s": round(n / base_s),
            "load_ratio": round(base_s / snap_s, 3),
        }
        print("snapshot", results["snapshot"], flush=True)

        mirror = noria_py.connect(upstream=url_text(server))
        q = "SELECT title, price FROM items WHERE owner = ?"
        for owner in range(50):
            mirror.execute(q, (owner,)).fetchall()
        start = time.perf_counter()
        with conn.cursor() as cur:
            for i in range(args.txns):
                cur.execute(
                    "UPDATE items SET price = price + 1 WHERE id = %s", (i * 7 % args.rows,)
                )
        wrote = time.perf_counter() - start
        lag = mirror.upstream.status()
        assert mirror.upstream.sync(600)
        done = time.perf_counter() - start
        results["replication"] = {
            "transactions": args.txns,
            "writer_seconds": round(wrote, 3),
            "applied_seconds": round(done, 3),
            "applied_per_s": round(args.txns / done),
            "lag_bytes_when_writer_finished": lag["lag_bytes"],
            "lag_seconds_when_writer_finished": lag["lag_seconds"],
        }
        print("replication", results["replication"], flush=True)
        mirror.close()
        conn.close()
    finally:
        server.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


def url_text(server) -> str:
    return f"mysql://root@127.0.0.1:{server.port}/bench"


if __name__ == "__main__":
    sys.exit(main())

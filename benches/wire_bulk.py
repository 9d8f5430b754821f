"""Batched inserts over the MySQL wire: pymysql's ``executemany`` into `noria-py serve` against a
real MariaDB (started here on loopback, as ``benches/wire.py`` does).

pymysql binds parameters on the client and sends an ``executemany`` of an INSERT as multi-row
``INSERT ... VALUES (...), (...)`` statements of up to about a megabyte each, every one a new
text; the server turns each into its parameterized form (``sql/literals.lift_write``) and
prepares that from its one-row form (``engine/inserts.rows_form``). Each round loads ``--rows``
rows into a fresh table on each server in turn (the order alternating), ``--batch`` rows per
``executemany`` call; rows per second is the median over ``--rounds``.

    python benches/wire_bulk.py [--rows 50000] [--batch 5000] [--rounds 3]

Writes benches/results/wire_bulk.json (noria_rows_per_s, mariadb_rows_per_s, ratio).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wire import start_mariadb, start_noria, stop  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "wire_bulk.json"
DDL = (
    "CREATE TABLE bulk (id INT PRIMARY KEY, name VARCHAR(60), score INT,"
    " price DECIMAL(10,2), at DATETIME)"
)
INSERT = "INSERT INTO bulk (id, name, score, price, at) VALUES (%s, %s, %s, %s, %s)"


def rows(n: int) -> list[tuple]:
    base = dt.datetime(2024, 1, 2, 3, 4, 5)
    return [
        (i, f"name {i} 'q' \\ é", i % 997, f"{i % 10000}.{i % 100:02d}", base + dt.timedelta(i))
        for i in range(n)
    ]


def load(params: dict, data: list[tuple], batch: int) -> float:
    """Seconds to load ``data`` into a fresh table, ``batch`` rows per executemany; checks the
    count and a checksum afterwards."""
    conn = pymysql.connect(autocommit=True, **params)
    try:
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS bulk")
            cur.execute(DDL)
            t0 = time.perf_counter()
            for i in range(0, len(data), batch):
                cur.executemany(INSERT, data[i : i + batch])
            spent = time.perf_counter() - t0
            cur.execute("SELECT COUNT(*), SUM(score), MAX(name) FROM bulk")
            count, total, top = cur.fetchone()
            assert count == len(data), (count, len(data))
            assert int(total) == sum(r[2] for r in data)
            assert top == max(r[1] for r in data)
        return spent
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=50000)
    p.add_argument("--batch", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    data = rows(args.rows)
    noria, nparams = start_noria()
    with tempfile.TemporaryDirectory() as tmp:
        maria, mparams = start_mariadb(Path(tmp))
        try:
            spent: dict[str, list[float]] = {"noria": [], "mariadb": []}
            for r in range(args.rounds):
                order = [("noria", nparams), ("mariadb", mparams)]
                for name, params in order if r % 2 == 0 else order[::-1]:
                    spent[name].append(load(params, data, args.batch))
                    print(f"round {r + 1} {name}: {args.rows / spent[name][-1]:,.0f} rows/s")
        finally:
            stop(maria)
            stop(noria)
    rate = {k: args.rows / statistics.median(v) for k, v in spent.items()}
    result = {
        "rows": args.rows,
        "batch": args.batch,
        "rounds": args.rounds,
        "noria_rows_per_s": round(rate["noria"]),
        "mariadb_rows_per_s": round(rate["mariadb"]),
        "ratio": round(rate["noria"] / rate["mariadb"], 3),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()

"""A load into a database file that `noria-py serve` is serving, while clients read and write
it: afterwards every view the server caches equals a fresh computation over the table.

`noria-py load` runs in its own process on the same file. A load of more than
``LOG_ROWS_LIMIT`` rows tells the other processes to rebuild their views from base storage
(a smaller one logs its rows); both are exercised."""

from __future__ import annotations

import csv
import os
import random
import subprocess
import sys
import threading

import pytest
from conftest import start_server, stop_server

pytestmark = pytest.mark.wire

DDL = "CREATE TABLE votes (id INT PRIMARY KEY, story INT NOT NULL, vote INT NOT NULL)"
# Views the server keeps: partial (a parameter), full (no parameter), a join of the table
# with itself would need a second table; an aggregate over a filter covers the filter path.
QUERIES = [
    ("SELECT story, COUNT(*), SUM(vote) FROM votes WHERE story = %s GROUP BY story", True),
    ("SELECT COUNT(*), SUM(vote) FROM votes", False),
    ("SELECT id, vote FROM votes WHERE story = %s AND vote > 0 ORDER BY id", True),
]
STORIES = 20


def write_csv(path, first: int, count: int, seed: int) -> None:
    rnd = random.Random(seed)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "story", "vote"])
        for i in range(first, first + count):
            w.writerow([i, rnd.randrange(STORIES), rnd.choice([-1, 1, 1])])


def fresh(cur, sql: str, param) -> list:
    """The query computed from the table's rows in Python, not by any view."""
    cur.execute("SELECT id, story, vote FROM votes /* fresh */ WHERE id > %s", (-1,))
    rows = cur.fetchall()
    if sql.startswith("SELECT story"):
        mine = [r for r in rows if r[1] == param]
        return [(param, len(mine), sum(r[2] for r in mine))] if mine else []
    if sql.startswith("SELECT COUNT"):
        return [(len(rows), sum(r[2] for r in rows) if rows else None)]
    return sorted((r[0], r[2]) for r in rows if r[1] == param and r[2] > 0)


def normal(rows) -> list:
    return [tuple(int(v) if v is not None else None for v in r) for r in rows]


@pytest.mark.parametrize("rows", [3000, 40000])
def test_a_load_beside_a_live_server_leaves_every_view_exact(tmp_path, rows):
    db = str(tmp_path / "live.db")
    srv = start_server("--data", db)
    try:
        conn = srv.pymysql()
        cur = conn.cursor()
        cur.execute(DDL)
        cur.executemany(
            "INSERT INTO votes VALUES (%s, %s, %s)", [(i, i % STORIES, 1) for i in range(1, 201)]
        )
        for sql, param in QUERIES:  # install and fill the views
            for story in range(STORIES) if param else [None]:
                cur.execute(sql, (story,) if param else ())
                cur.fetchall()
        source = tmp_path / "more.csv"
        write_csv(source, 1000, rows, seed=rows)
        stop = threading.Event()
        errors: list[BaseException] = []

        def client():
            # writes and cached reads all through the load, on their own connection
            c = srv.pymysql()
            k = 0
            try:
                while not stop.is_set():
                    k += 1
                    cc = c.cursor()
                    cc.execute(
                        "INSERT INTO votes VALUES (%s, %s, %s)", (500 + k % 400, k % STORIES, -1)
                    )
                    cc.execute("DELETE FROM votes WHERE id = %s", (500 + (k + 200) % 400,))
                    for sql, param in QUERIES:
                        cc.execute(sql, (k % STORIES,) if param else ())
                        cc.fetchall()
            except Exception as e:  # noqa: BLE001 - reported by the test
                if "Duplicate entry" not in str(e):
                    errors.append(e)
            finally:
                c.close()

        thread = threading.Thread(target=client)
        thread.start()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "noria_py.cli", "load", "votes"]
                + ["--data", db, "--csv", str(source), "--no-progress"],
                capture_output=True,
                text=True,
                timeout=300,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        finally:
            stop.set()
            thread.join(timeout=60)
        assert done.returncode == 0, done.stderr
        assert f"loaded {rows} rows" in done.stdout
        assert not errors, errors
        # every cached view equals a fresh computation over the table
        for sql, param in QUERIES:
            for story in range(STORIES) if param else [None]:
                args = (story,) if param else ()
                cur.execute(sql, args)
                got = normal(cur.fetchall())
                want = fresh(cur, sql, story)
                assert sorted(got) == sorted(want), (sql, story)
        cur.execute("SELECT COUNT(*) FROM votes WHERE id >= %s", (1000,))
        assert cur.fetchall()[0][0] == rows
        conn.close()
    finally:
        assert stop_server(srv) == 0

"""64 concurrent connections mixing reads and writes for a few seconds: no errors, and
afterwards every view agrees with SQLite fed the same acknowledged writes."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

pytestmark = pytest.mark.wire

CONNECTIONS = 64
PREPARED = 8  # of which use mysql-connector prepared statements
DURATION = 4.0
GROUPS = 16


def _worker(server, n, stop, errors, results):
    rng = random.Random(n)
    rows: dict[int, tuple[int, int]] = {}
    next_id = n * 1_000_000
    ops = 0
    try:
        if n < PREPARED:
            conn = server.connector()
            cur = conn.cursor(prepared=True)
        else:
            conn = server.pymysql()
            cur = conn.cursor()
        while not stop.is_set():
            r = rng.random()
            if r < 0.30 or not rows:
                next_id += 1
                grp, v = rng.randrange(GROUPS), rng.randrange(1000)
                cur.execute(
                    "INSERT INTO load_t (id, grp, v) VALUES (%s, %s, %s)", (next_id, grp, v)
                )
                rows[next_id] = (grp, v)
            elif r < 0.40:
                key = rng.choice(list(rows))
                v = rng.randrange(1000)
                cur.execute("UPDATE load_t SET v = %s WHERE id = %s", (v, key))
                rows[key] = (rows[key][0], v)
            elif r < 0.45:
                key = rng.choice(list(rows))
                cur.execute("DELETE FROM load_t WHERE id = %s", (key,))
                del rows[key]
            elif r < 0.50 and n >= PREPARED:
                # a two-write transaction
                conn.begin()
                a, b = next_id + 1, next_id + 2
                next_id += 2
                cur.execute("INSERT INTO load_t (id, grp, v) VALUES (%s, %s, %s)", (a, 0, 1))
                cur.execute("INSERT INTO load_t (id, grp, v) VALUES (%s, %s, %s)", (b, 1, 2))
                conn.commit()
                rows[a], rows[b] = (0, 1), (1, 2)
            elif r < 0.85:
                key = rng.choice(list(rows)) if rng.random() < 0.7 else rng.randrange(1 << 30)
                cur.execute("SELECT grp, v FROM load_t WHERE id = %s", (key,))
                cur.fetchall()
            else:
                cur.execute(
                    "SELECT grp, COUNT(*), SUM(v) FROM load_t WHERE grp = %s GROUP BY grp",
                    (rng.randrange(GROUPS),),
                )
                cur.fetchall()
            ops += 1
        conn.close()
    except Exception as e:  # collected and reported by the test
        errors.append((n, repr(e)))
    results[n] = (rows, ops)


def test_concurrent_load_matches_sqlite(server):
    admin = server.pymysql()
    with admin.cursor() as cur:
        cur.execute("CREATE TABLE load_t (id BIGINT PRIMARY KEY, grp INT NOT NULL, v INT NOT NULL)")
    stop = threading.Event()
    errors: list = []
    results: dict = {}
    threads = [
        threading.Thread(target=_worker, args=(server, n, stop, errors, results))
        for n in range(CONNECTIONS)
    ]
    for t in threads:
        t.start()
    time.sleep(DURATION)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert len(results) == CONNECTIONS
    total_ops = sum(ops for _, ops in results.values())
    assert total_ops > CONNECTIONS  # every connection got work done

    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE load_t (id INTEGER PRIMARY KEY, grp INT, v INT)")
    for rows, _ in results.values():
        lite.executemany(
            "INSERT INTO load_t VALUES (?, ?, ?)", [(k, g, v) for k, (g, v) in rows.items()]
        )
    want_groups = lite.execute(
        "SELECT grp, COUNT(*), SUM(v) FROM load_t GROUP BY grp ORDER BY grp"
    ).fetchall()
    want_rows = lite.execute("SELECT id, grp, v FROM load_t ORDER BY id").fetchall()

    def snapshot():
        with admin.cursor() as cur:
            groups = []
            for g in range(GROUPS):
                cur.execute(
                    "SELECT grp, COUNT(*), SUM(v) FROM load_t WHERE grp = %s GROUP BY grp", (g,)
                )
                groups += [tuple(int(x) for x in r) for r in cur.fetchall()]
            cur.execute("SELECT id, grp, v FROM load_t")
            rows = sorted(tuple(r) for r in cur.fetchall())
            return groups, rows

    deadline = time.monotonic() + 15
    while True:  # views converge once writes stop
        got = snapshot()
        if got == (want_groups, want_rows) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert got[0] == want_groups
    assert got[1] == want_rows
    sample = random.Random(0).sample(want_rows, min(200, len(want_rows)))
    with admin.cursor() as cur:
        for key, grp, v in sample:
            cur.execute("SELECT grp, v FROM load_t WHERE id = %s", (key,))
            assert cur.fetchall() == ((grp, v),)
    admin.close()
    assert server.alive()

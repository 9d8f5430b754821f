"""Threads sharing one connection (threadsafety 2): writers serialized, readers of filled keys
lock-free; after the threads stop, every view equals a recomputation on SQLite."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

import noria_py

VOTES = (
    "SELECT s.id, s.title, COUNT(v.user_id) AS n FROM stories s LEFT JOIN votes v "
    "ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
)
BY_USER = "SELECT story_id FROM votes WHERE user_id = ? ORDER BY story_id"
RECENT = "SELECT id FROM stories WHERE id > ? ORDER BY id LIMIT 5"


def snapshot(conn) -> sqlite3.Connection:
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE stories (id INT PRIMARY KEY, title TEXT)")
    ref.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    for t in ("stories", "votes"):
        rows = conn.execute(f"SELECT * FROM {t}").fetchall()
        if rows:
            ref.executemany(f"INSERT INTO {t} VALUES ({','.join('?' * len(rows[0]))})", rows)
    return ref


@pytest.mark.timeout(120)
@pytest.mark.parametrize("options", [{}, {"memory_limit": "16KB"}])
def test_writers_and_readers_share_a_connection(options):
    conn = noria_py.connect(**options)
    conn.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(20))")
    conn.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    conn.executemany("INSERT INTO stories VALUES (?, ?)", [(i, f"s{i}") for i in range(50)])
    stop = time.monotonic() + 3.0
    errors: list = []

    def writer(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                r = rng.random()
                if r < 0.7:
                    cur.execute(
                        "INSERT INTO votes VALUES (?, ?)", (rng.randrange(10), rng.randrange(50))
                    )
                elif r < 0.9:
                    cur.execute(
                        "DELETE FROM votes WHERE user_id = ? AND story_id = ?",
                        (rng.randrange(10), rng.randrange(50)),
                    )
                else:
                    cur.execute(
                        "UPDATE stories SET title = ? WHERE id = ?",
                        (f"t{rng.random():.3f}", rng.randrange(50)),
                    )
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def reader(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                q = rng.choice((VOTES, BY_USER, RECENT))
                cur.execute(q, (rng.randrange(50),))
                rows = cur.fetchall()
                if q == VOTES:
                    assert len(rows) <= 1
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=reader, args=(100 + i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread did not finish (deadlock?)"
    assert not errors, errors[:3]
    ref = snapshot(conn)
    for q in (VOTES, BY_USER, RECENT):
        for k in range(50):
            got = conn.execute(q, (k,)).fetchall()
            want = ref.execute(q, (k,)).fetchall()
            assert got == want, (q, k)
    conn.close()


def test_threadsafety_level():
    assert noria_py.threadsafety == 2

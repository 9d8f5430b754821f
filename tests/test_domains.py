"""connect(domains="threads"): the dataflow on its own thread; writes return when durable, views
catch up, read-your-writes on request, failures surface, close() stops the thread."""

from __future__ import annotations

import random
import threading
import time

import pytest
from test_threads import BY_USER, RECENT, VOTES, snapshot

import noria_py
from noria_py.dataflow.ops.aggregate import Aggregate


def setup(conn):
    conn.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(20))")
    conn.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    conn.executemany("INSERT INTO stories VALUES (?, ?)", [(i, f"s{i}") for i in range(30)])


def threads_named(name: str) -> list:
    return [t for t in threading.enumerate() if t.name == name]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ryw", [False, True])
@pytest.mark.parametrize("inbox_limit", [10000, 3])
def test_writers_and_readers_then_views_equal_sqlite(ryw, inbox_limit):
    conn = noria_py.connect(domains="threads", read_your_writes=ryw, inbox_limit=inbox_limit)
    setup(conn)
    stop = time.monotonic() + 2.5
    errors: list = []
    stale = [0]

    def writer(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                if rng.random() < 0.8:
                    cur.execute(
                        "INSERT INTO votes VALUES (?, ?)", (rng.randrange(8), rng.randrange(30))
                    )
                else:
                    cur.execute(
                        "DELETE FROM votes WHERE user_id = ? AND story_id = ?",
                        (rng.randrange(8), rng.randrange(30)),
                    )
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def reader(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                cur.execute(rng.choice((VOTES, BY_USER, RECENT)), (rng.randrange(30),))
                cur.fetchall()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def own_writes(seed):
        # a writer that reads back its own write: with read-your-writes it must see it
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                user = 100 + rng.randrange(5)
                cur.execute("INSERT INTO votes VALUES (?, ?)", (user, 7))
                n = len(cur.execute(BY_USER, (user,)).fetchall())
                m = conn.execute("SELECT COUNT(*) FROM votes WHERE user_id = ?", (user,)).fetchall()
                if n != m[0][0]:
                    stale[0] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    workers = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    workers += [threading.Thread(target=reader, args=(10 + i,)) for i in range(3)]
    workers.append(threading.Thread(target=own_writes, args=(99,)))
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in workers), "deadlock"
    assert not errors, errors[:3]
    if ryw:
        assert stale[0] == 0
    conn.engine.sync()
    ref = snapshot(conn)
    for q in (VOTES, BY_USER, RECENT):
        for k in list(range(30)) + [100, 101, 102, 103, 104]:
            assert conn.execute(q, (k,)).fetchall() == ref.execute(q, (k,)).fetchall(), (q, k)
    conn.close()
    assert not threads_named("noria-dataflow")


def test_a_write_returns_before_the_views_catch_up():
    conn = noria_py.connect(domains="threads", batch_window=0.2)
    setup(conn)
    q = "SELECT story_id FROM votes WHERE user_id = ?"
    assert conn.execute(q, (1,)).fetchall() == []
    conn.execute("INSERT INTO votes VALUES (1, 5)")
    # the dataflow thread waits 0.2 s to batch: the cached read is still the old answer
    assert conn.execute(q, (1,)).fetchall() == []
    cur = conn.cursor()
    cur.read_your_writes = True
    assert cur.execute(q, (1,)).fetchall() == [(5,)]
    conn.close()


def test_a_failure_in_the_dataflow_surfaces_and_stops_work(monkeypatch):
    conn = noria_py.connect(domains="threads", batch_window=0)
    setup(conn)
    conn.execute(VOTES, (1,))

    def broken(self, port, batch):
        raise RuntimeError("operator exploded")

    monkeypatch.setattr(Aggregate, "on_input", broken)
    conn.execute("INSERT INTO votes VALUES (1, 1)")  # durable; the dataflow thread then fails
    deadline = time.monotonic() + 10
    while conn.engine._failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(noria_py.OperationalError, match="operator exploded"):
        conn.execute("INSERT INTO votes VALUES (2, 2)")
    with pytest.raises(noria_py.OperationalError):
        conn.execute(BY_USER, (1,))
    conn.close()
    assert not threads_named("noria-dataflow")


def test_close_stops_the_thread_and_keeps_acknowledged_writes(tmp_path):
    path = str(tmp_path / "d.db")
    conn = noria_py.connect(path, domains="threads")
    setup(conn)
    for i in range(50):
        conn.execute("INSERT INTO votes VALUES (?, ?)", (i, i % 30))
    conn.close()
    assert not threads_named("noria-dataflow")
    again = noria_py.connect(path)
    assert again.execute("SELECT COUNT(*) FROM votes").fetchall() == [(50,)]
    again.close()

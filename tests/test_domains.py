"""connect(domains="threads"): the dataflow off the caller's thread; writes return when durable,
views catch up, read-your-writes on request, failures surface, close() stops every thread.

Each test runs in both threaded modes: every domain on a thread of its own with upqueries as
messages between them (the default with threads), and one dataflow thread with direct upqueries
(``upqueries="direct"``)."""

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
    return [t for t in threading.enumerate() if t.name == name or t.name.startswith(name + "-")]


def dataflow_threads() -> list:
    return threads_named("noria-dataflow") + threads_named("noria-domain")


# one dataflow thread with direct upqueries; a thread per domain (the default with threads)
MODES = [{"upqueries": "direct"}, {}, {"memory_limit": "8KB"}]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ryw", [False, True])
@pytest.mark.parametrize("inbox_limit", [10000, 3])
def test_writers_and_readers_then_views_equal_sqlite(ryw, inbox_limit, mode):
    conn = noria_py.connect(
        domains="threads", read_your_writes=ryw, inbox_limit=inbox_limit, **mode
    )
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
    assert not dataflow_threads()


def test_a_write_returns_before_the_views_catch_up():
    conn = noria_py.connect(domains="threads", upqueries="direct", batch_window=0.2)
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


@pytest.mark.parametrize("mode", MODES[:2])
def test_a_failure_in_the_dataflow_surfaces_and_stops_work(monkeypatch, mode):
    conn = noria_py.connect(domains="threads", batch_window=0, **mode)
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
    assert not dataflow_threads()


@pytest.mark.parametrize("mode", MODES[:2])
def test_close_stops_the_thread_and_keeps_acknowledged_writes(tmp_path, mode):
    path = str(tmp_path / "d.db")
    conn = noria_py.connect(path, domains="threads", **mode)
    setup(conn)
    for i in range(50):
        conn.execute("INSERT INTO votes VALUES (?, ?)", (i, i % 30))
    conn.execute(VOTES, (3,)).fetchall()  # a cached query: its domains get threads
    conn.close()
    assert not dataflow_threads()
    again = noria_py.connect(path)
    assert again.execute("SELECT COUNT(*) FROM votes").fetchall() == [(50,)]
    again.close()


@pytest.mark.timeout(60)
def test_domain_threads_per_domain_and_explain_shows_them():
    conn = noria_py.connect(domains="threads")
    setup(conn)
    conn.execute(VOTES, (1,)).fetchall()
    conn.execute(BY_USER, (1,)).fetchall()
    explain = conn.execute("EXPLAIN " + VOTES).fetchall()
    domains = {r[1]: r[6] for r in explain}
    assert domains["base"] == 0
    assert domains["reader"] != domains["aggregate"] != 0
    # one thread per domain that received a message (base storage's answers included)
    names = {t.name for t in threads_named("noria-domain")}
    assert f"noria-domain-{domains['reader']}" in names
    assert "noria-domain-0" in names
    conn.close()
    assert not dataflow_threads()


@pytest.mark.timeout(60)
def test_transactions_with_domain_threads():
    # a transaction holds base storage: its own cache misses are answered by its thread, and
    # rows filled from its uncommitted writes are dropped at COMMIT / ROLLBACK
    conn = noria_py.connect(domains="threads")
    setup(conn)
    cur = conn.cursor()
    for ending in ("ROLLBACK", "COMMIT"):
        cur.execute("BEGIN")
        cur.execute("INSERT INTO votes VALUES (?, ?)", (7, 3))
        cur.execute(VOTES, (3,)).fetchall()  # a miss inside the transaction
        cur.execute(BY_USER, (7,)).fetchall()
        cur.execute(ending)
        conn.engine.sync()
        ref = snapshot(conn)
        for q, k in ((VOTES, 3), (BY_USER, 7)):
            assert cur.execute(q, (k,)).fetchall() == ref.execute(q, (k,)).fetchall(), (q, ending)
    conn.close()
    assert not dataflow_threads()


@pytest.mark.timeout(60)
def test_domain_threads_batch_deltas_and_misses():
    # while a domain's thread is busy, deltas queued for one edge become one batch and misses
    # queued at one reader become one upquery
    conn = noria_py.connect(domains="threads")
    setup(conn)
    prep = conn.engine.prepare(BY_USER)
    reader = prep.reader
    conn.execute(BY_USER, (0,)).fetchall()
    rt = conn.engine._runtime
    gate = threading.Event()
    rt.call(reader, gate.wait)  # the reader's domain is busy until the gate opens
    got = {}
    waiting = []
    for user in range(1, 6):

        def read(user=user):
            got[user] = reader.fill((user,))

        t = threading.Thread(target=read)
        t.start()
        waiting.append(t)
    deadline = time.monotonic() + 10
    while len(rt.inboxes[reader.domain]) < 5 and time.monotonic() < deadline:
        time.sleep(0.005)
    before = rt.dataflow.upqueries
    gate.set()
    for t in waiting:
        t.join(timeout=10)
    # one request per hop up to base storage, for the five keys together
    hops = rt.dataflow.upqueries - before
    assert hops <= 3, hops
    conn.engine.sync()
    ref = snapshot(conn)
    for user in range(1, 6):
        assert list(got[user]) == ref.execute(BY_USER, (user,)).fetchall()
    conn.close()


@pytest.mark.timeout(60)
def test_domain_threads_batch_window_groups_writes():
    conn = noria_py.connect(domains="threads", batch_window=0.3)
    setup(conn)
    conn.execute(BY_USER, (1,)).fetchall()
    conn.engine.sync()
    rt = conn.engine._runtime
    calls = []
    original = rt.dataflow._on_delta

    def counting(node, port, batch):
        calls.append((node.id, len(batch)))
        return original(node, port, batch)

    rt.dataflow._on_delta = counting
    for i in range(10):
        conn.execute("INSERT INTO votes VALUES (1, ?)", (i,))
        time.sleep(0.01)  # without the window each write would travel on its own
    conn.engine.sync()
    base = conn.engine.graph.lookup("base(votes)")
    first = {c.id for c, _ in base.children}
    deliveries = [n for nid, n in calls if nid in first]
    # ten writes within the window reach the first domain as (at most) a couple of batches
    assert sum(deliveries) == 10 * len(first)
    assert len(deliveries) <= 2 * len(first)
    assert conn.execute(BY_USER, (1,)).fetchall() == [(i,) for i in range(10)]
    conn.close()


@pytest.mark.timeout(120)
def test_domain_threads_migrations_while_reads_miss_and_writes_flow():
    # new queries (some sharing nodes with cached ones, some turning partial state full) are
    # installed while other threads miss and write: every view still equals SQLite
    conn = noria_py.connect(domains="threads", memory_limit="16KB")
    setup(conn)
    stop = time.monotonic() + 2.0
    errors: list = []

    def worker(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                if rng.random() < 0.3:
                    cur.execute(
                        "INSERT INTO votes VALUES (?, ?)", (rng.randrange(8), rng.randrange(30))
                    )
                else:
                    cur.execute(VOTES, (rng.randrange(30),)).fetchall()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in workers:
        t.start()
    views = []
    i = 0
    while time.monotonic() < stop:
        q = f"SELECT story_id, COUNT(*) FROM votes WHERE user_id <> {i % 7} AND story_id = ? GROUP BY story_id"
        conn.execute(q, (i % 30,)).fetchall()
        views.append(q)
        if i % 3 == 0:
            full = f"SELECT user_id, COUNT(*) FROM votes WHERE story_id <> {i} GROUP BY user_id"
            conn.execute(full).fetchall()
            views.append(full)
        i += 1
    for t in workers:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in workers), "deadlock"
    assert not errors, errors[:3]
    conn.engine.sync()
    ref = snapshot(conn)
    for q in [VOTES] + views:
        keys = range(30) if "?" in q else [None]
        for k in keys:
            params = (k,) if k is not None else ()
            got = sorted(conn.execute(q, params).fetchall())
            want = sorted(ref.execute(q, params).fetchall())
            assert got == want, (q, k)
    conn.close()
    assert not dataflow_threads()

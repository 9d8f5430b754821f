"""Several connections and several OS processes on one database file: every committed write
reaches every process's cached views, exactly once; nothing uncommitted or rolled back is ever
read; a process killed in the middle of its transactions loses nothing it acknowledged."""

from __future__ import annotations

import faulthandler
import multiprocessing as mp
import os
import signal
import sqlite3
import time
import traceback
from contextlib import contextmanager
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

ROW = "SELECT n FROM counters WHERE id = ?"
TOTAL = "SELECT grp, COUNT(*), SUM(n) FROM counters WHERE grp = ? GROUP BY grp"
JOINED = (
    "SELECT c.id, c.n, l.note FROM counters c JOIN labels l ON l.id = c.id "
    "WHERE c.grp = ? ORDER BY c.id"
)
# every way the dataflow can run: upqueries computed in place or as messages, on the caller's
# thread or on domain threads (one, or one per domain)
MODES = {
    "direct": {"upqueries": "direct"},
    "messages": {"upqueries": "messages"},
    "threads": {"domains": "threads"},
    "thread-direct": {"domains": "threads", "upqueries": "direct"},
}

QUERIES = (
    [(ROW, k) for k in range(1, 7)] + [(TOTAL, g) for g in (0, 1)] + [(JOINED, g) for g in (0, 1)]
)


def _norm(rows):
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in rows]


def _setup(path: str) -> None:
    conn = noria_py.connect(path)
    conn.execute("CREATE TABLE counters (id INT PRIMARY KEY, grp INT, n BIGINT)")
    conn.execute("CREATE TABLE labels (id INT PRIMARY KEY, note VARCHAR(20))")
    for i in range(1, 7):
        conn.execute("INSERT INTO counters VALUES (?, ?, 0)", (i, i % 2))
        conn.execute("INSERT INTO labels VALUES (?, ?)", (i, f"row {i}"))
    conn.close()


def _truth(path: str, sql: str, key) -> list:
    db = sqlite3.connect(path)
    try:
        rows = db.execute(sql.replace("?", str(int(key)))).fetchall()
    finally:
        db.close()
    return _norm(rows)


def _cached(conn, path: str, wait: float = 10.0) -> dict:
    """Every query's answer from this process's views, once they show what the file holds.
    Other processes' commits reach these views within a few poll intervals, not at once, so
    a stale answer is read again until ``wait`` seconds have passed: a commit the views never
    take is still returned stale (and fails the caller's comparison)."""
    deadline = time.monotonic() + wait
    while True:
        now = {(q, k): _norm(conn.execute(q, (k,)).fetchall()) for q, k in QUERIES}
        if time.monotonic() > deadline:
            return now
        if all(rows == _truth(path, q, k) for (q, k), rows in now.items()):
            return now
        time.sleep(0.02)


# --- connections in one process --------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_a_schema_change_is_seen_at_once_by_the_other_connections(tmp_path, mode):
    # as in MySQL: once CREATE / ALTER / DROP returns, every connection's next statement
    # knows it, before the background thread has noticed the other process's commit
    path = str(tmp_path / "ddl.db")
    _setup(path)
    a = noria_py.connect(path, **MODES[mode])
    b = noria_py.connect(path, **MODES[mode])
    assert b.execute(ROW, (1,)).fetchall() == [(0,)]

    def errno_of(sql: str) -> int:
        with pytest.raises(noria_py.ProgrammingError) as err:
            b.execute(sql)
        return err.value.errno

    for _ in range(5):
        a.execute("CREATE TABLE fresh (id INT PRIMARY KEY, v INT)")
        a.execute("INSERT INTO fresh VALUES (1, 10)")
        b.execute("UPDATE fresh SET v = v + 1 WHERE id = 1")
        b.execute("INSERT INTO fresh VALUES (2, 20)")
        assert b.execute("SELECT v FROM fresh WHERE id = ?", (1,)).fetchall() == [(11,)]
        assert errno_of("CREATE TABLE fresh (id INT PRIMARY KEY)") == 1050
        a.execute("ALTER TABLE fresh ADD COLUMN w INT")
        b.execute("UPDATE fresh SET w = 3 WHERE id = 2")
        a.execute("DROP TABLE fresh")
        assert errno_of("DROP TABLE fresh") == 1051
        assert errno_of("INSERT INTO fresh VALUES (3, 30)") == 1146
    assert b.execute(ROW, (1,)).fetchall() == [(0,)]
    a.close()
    b.close()


def test_a_lock_free_read_racing_a_rebuild_is_answered_by_the_new_views(tmp_path):
    # a cached statement is looked up, then (before its read) the background thread rebuilds
    # the views for another process's DDL: the read, which missed, is planned again instead of
    # waiting forever for an upquery through the removed reader
    import threading

    path = str(tmp_path / "race.db")
    _setup(path)
    a = noria_py.connect(path, domains="threads")
    b = noria_py.connect(path, domains="threads")
    assert a.execute(ROW, (1,)).fetchall() == [(0,)]  # planned: the next read is lock-free
    b.execute("UPDATE counters SET n = 42 WHERE id = 2")
    eng = a._engine
    deadline = time.monotonic() + 10
    while eng._behind or not eng.fast:  # until a has seen b's commit, and reads lock-free
        assert time.monotonic() < deadline
        a.execute(ROW, (1,)).fetchall()
        time.sleep(0.05)
    real = eng.lock_free_read
    raced = []

    def racing(txn, queued_ok=False):
        ok = real(txn, queued_ok)
        if ok and not raced:
            raced.append(True)
            b.execute("CREATE TABLE other (id INT PRIMARY KEY)")
            with eng.lock:
                eng._behind = True
                eng._catch_up()  # what the tail thread does when it wins the race
        return ok

    eng.lock_free_read = racing
    got = []
    reader = threading.Thread(target=lambda: got.append(a.execute(ROW, (2,)).fetchall()))
    reader.daemon = True
    reader.start()
    reader.join(60)
    assert raced and not reader.is_alive(), "the read waited for a reader that was removed"
    assert got == [[(42,)]]
    del eng.lock_free_read
    assert a.execute("SELECT COUNT(*) FROM other").fetchall() == [(0,)]
    a.close()
    b.close()


def test_a_statement_whose_view_a_rebuild_removed_is_planned_again(tmp_path):
    # the engine's own path: a statement looked up, then a catch-up inside it rebuilt the views
    path = str(tmp_path / "replan.db")
    _setup(path)
    a = noria_py.connect(path, domains="threads")
    assert a.execute(ROW, (1,)).fetchall() == [(0,)]
    eng = a._engine
    prep = eng._cache[ROW]
    with eng.lock:
        eng._runtime.wait_idle()
        eng._reload_catalog()  # what a catch-up after another process's DDL does
        assert eng._cache.get(ROW) is None
        res = eng._run(ROW, prep, (2,))  # a miss through the removed reader
    assert list(res.rows) == [(0,)]
    a.close()


def test_a_new_connection_follows_the_log_without_a_rebuild(tmp_path, monkeypatch):
    # the log keeps only what some process has not read: a process connecting after it was
    # emptied starts at its true end (and is counted among its readers before it pins its
    # snapshot), so the next commits reach it as deltas, not by a rebuild of every view
    from noria_py.engine import Engine

    path = str(tmp_path / "join.db")
    _setup(path)
    a = noria_py.connect(path)
    for i in range(5):
        a.execute("UPDATE counters SET n = ? WHERE id = 1", (i,))
    eng = a._engine
    eng.sync()  # a has read the whole log...
    eng.storage.log_housekeeping(eng._origin, eng._applied)  # ...so all of it is dropped
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM __noria_changes").fetchone() == (0,)
    rebuilt = []
    real = Engine._reload_catalog

    def counted(self):
        rebuilt.append(self)
        real(self)

    monkeypatch.setattr(Engine, "_reload_catalog", counted)
    b = noria_py.connect(path)
    assert b.execute(ROW, (1,)).fetchall() == [(4,)]
    a.execute("UPDATE counters SET n = 77 WHERE id = 1")
    b._engine.sync()
    assert b.execute(ROW, (1,)).fetchall() == [(77,)]
    assert rebuilt == []
    a.close()
    b.close()


def test_a_commit_made_while_a_connection_restores_reaches_its_views(tmp_path, monkeypatch):
    # a connection restores its views from a snapshot; what another process commits before it
    # follows the log reaches those views too (a full view computed at restore included)
    from noria_py.engine import Engine

    path = str(tmp_path / "restore.db")
    _setup(path)
    a = noria_py.connect(path)
    a.execute("CREATE VIEW totals AS SELECT grp, SUM(n) AS s FROM counters GROUP BY grp")
    real = Engine._restore

    def restore_then_commit(self):
        real(self)
        if self is not a._engine:
            a.execute("UPDATE counters SET n = 1000 WHERE id = 1")

    monkeypatch.setattr(Engine, "_restore", restore_then_commit)
    b = noria_py.connect(path)
    monkeypatch.setattr(Engine, "_restore", real)
    b._engine.sync()
    assert sorted(b.execute("SELECT grp, s FROM totals").fetchall()) == [(0, 0), (1, 1000)]
    assert b.execute(ROW, (1,)).fetchall() == [(1000,)]
    a.close()
    b.close()


@pytest.mark.parametrize("mode", list(MODES))
def test_two_connections_on_one_file_see_each_others_commits(tmp_path, mode):
    path = str(tmp_path / "two.db")
    _setup(path)
    a = noria_py.connect(path, **MODES[mode])
    b = noria_py.connect(path, **MODES[mode])
    for q, k in QUERIES:
        a.execute(q, (k,)).fetchall()
        b.execute(q, (k,)).fetchall()
    a.execute("UPDATE counters SET n = 5 WHERE id = 1")
    a.execute("BEGIN")
    a.execute("UPDATE counters SET n = 99 WHERE id = 2")  # uncommitted: never seen by b
    deadline = time.monotonic() + 5
    while b.execute(ROW, (1,)).fetchall() != [(5,)]:
        assert time.monotonic() < deadline, "a commit never reached the other connection"
        time.sleep(0.002)
    assert b.execute(ROW, (2,)).fetchall() == [(0,)]
    a.execute("ROLLBACK")
    b.execute("UPDATE counters SET n = 7 WHERE id = 3")
    a.execute("CREATE TABLE extra (id INT PRIMARY KEY)")  # a schema change reaches b too
    a.execute("INSERT INTO extra VALUES (1)")
    deadline = time.monotonic() + 5
    while True:
        try:
            if b.execute("SELECT COUNT(*) FROM extra").fetchall() == [(1,)]:
                break
        except noria_py.Error:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.005)
    for conn in (a, b):
        got = _cached(conn, path)
        for (q, k), rows in got.items():
            assert rows == _truth(path, q, k), (q, k)
    a.close()
    b.close()


# --- OS processes ----------------------------------------------------------------------------


def _writer(path: str, me: int, plan: list, out, finish, opts=None) -> None:
    """Run ``plan`` (per transaction: its ops and whether it commits) on this process's own
    row(s); report each acknowledged token right after COMMIT returns."""
    conn = noria_py.connect(path, **(opts or {}))
    for q, k in QUERIES:
        conn.execute(q, (k,)).fetchall()
    token = me * 100000
    for ops, commit in plan:
        conn.execute("BEGIN")
        written = []
        for row, savepoint in ops:
            token += 1
            written.append((row, token))
            if savepoint:
                conn.execute("SAVEPOINT s")
                conn.execute("UPDATE counters SET n = ? WHERE id = ?", (-token, row))
                conn.execute("ROLLBACK TO SAVEPOINT s")
            conn.execute("UPDATE counters SET n = ? WHERE id = ?", (token, row))
            # the transaction reads its own write, cached query or not
            assert conn.execute(ROW, (row,)).fetchall() == [(token,)]
        conn.execute("COMMIT" if commit else "ROLLBACK")
        if commit:
            out.put(("committed", me, written))
    out.put(("done", me, None))
    finish.wait(120)  # every writer is done: the views must now show everything
    out.put(("views", me, _cached(conn, path)))
    conn.close()


def _reader(path: str, rows: list, stop, out, opts=None) -> None:
    """Read the writers' rows from this process's cached views until told to stop."""
    conn = noria_py.connect(path, **(opts or {}))
    seen: dict[int, list] = {r: [] for r in rows}
    while not stop.is_set():
        for r in rows:
            v = conn.execute(ROW, (r,)).fetchall()[0][0]
            if not seen[r] or seen[r][-1] != v:
                seen[r].append(v)
    out.put(("seen", 0, seen))
    out.put(("views", -1, _cached(conn, path)))
    conn.close()


def _reported(target, out, *args) -> None:
    """Run a child process's ``target``; an exception is put on ``out`` with its traceback, so
    the test fails at once with the child's own error instead of waiting for a message that
    never comes."""
    # a child still running after 90 s is stuck: its threads' stacks go to stderr (shown with
    # the failure) before the test gives up on it at 120 s
    faulthandler.dump_traceback_later(90)
    try:
        globals()[target](*args)
    except BaseException:
        out.put(("error", target, traceback.format_exc()))
        raise


@contextmanager
def _children(procs, *events):
    """Start ``procs`` (daemons); however the test ends, set ``events`` (which tell the children
    to finish) and end any child still running, so none outlives the test."""
    try:
        for p in procs:
            p.daemon = True
            p.start()
        yield
    finally:
        for e in events:
            e.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(10)


def _message(out):
    kind, me, data = out.get(timeout=120)
    if kind == "error":
        pytest.fail(f"child process {me} failed:\n{data}")
    return kind, me, data


_txn = st.tuples(
    st.lists(st.tuples(st.integers(0, 1), st.booleans()), min_size=1, max_size=3),
    st.booleans(),
)


@pytest.mark.parametrize("mode", list(MODES))
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plans=st.lists(st.lists(_txn, min_size=1, max_size=12), min_size=2, max_size=2))
def test_processes_agree_and_never_read_uncommitted_writes(tmp_path_factory, plans, mode):
    path = str(tmp_path_factory.mktemp("procs") / "shared.db")
    _setup(path)
    ctx = mp.get_context("spawn")
    out, stop, finish = ctx.Queue(), ctx.Event(), ctx.Event()
    # writer i owns rows 2i+1 and 2i+2 (so its tokens on a row increase with time)
    plans = [
        [([(2 * i + 1 + r, sp) for r, sp in ops], c) for ops, c in p] for i, p in enumerate(plans)
    ]
    opts = MODES[mode]
    writers = [
        ctx.Process(target=_reported, args=("_writer", out, path, i + 1, p, out, finish, opts))
        for i, p in enumerate(plans)
    ]
    reader = ctx.Process(
        target=_reported, args=("_reader", out, path, [1, 2, 3, 4], stop, out, opts)
    )
    committed: dict[int, list] = {r: [0] for r in range(1, 7)}
    views = []
    seen = None
    with _children([reader, *writers], stop, finish):
        pending = len(writers)
        while pending:
            kind, me, data = _message(out)
            if kind == "committed":
                for row, token in data:
                    committed[row].append(token)
            elif kind == "done":
                pending -= 1
        finish.set()
        stop.set()
        while seen is None or len(views) < len(writers) + 1:
            kind, me, data = _message(out)
            if kind == "seen":
                seen = data
            elif kind == "views":
                views.append(data)
        for p in writers + [reader]:
            p.join(30)
            assert p.exitcode == 0
    # every value a reader saw was committed, in commit order (never a rolled-back token)
    for row, values in seen.items():
        order = committed[row]
        pos = [order.index(v) if v in order else None for v in values]
        assert None not in pos, (row, values, order)
        assert pos == sorted(pos), (row, values, order)
    # afterwards every process's views equal SQLite over the base tables
    truth = {(q, k): _truth(path, q, k) for q, k in QUERIES}
    for v in views:
        assert v == truth


def _crashing_writer(path: str, out) -> None:
    conn = noria_py.connect(path)
    token = 0
    while True:
        token += 1
        conn.execute("BEGIN")
        conn.execute("UPDATE counters SET n = ? WHERE id = 1", (token,))
        conn.execute("INSERT INTO labels VALUES (?, ?)", (100 + token, f"t{token}"))
        conn.execute("COMMIT")
        out.put(token)  # acknowledged


def test_a_killed_writer_loses_nothing_it_acknowledged(tmp_path):
    path = str(tmp_path / "crash.db")
    _setup(path)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    watcher = noria_py.connect(path)
    for q, k in QUERIES:
        watcher.execute(q, (k,)).fetchall()
    proc = ctx.Process(target=_crashing_writer, args=(path, out))
    acked = 0
    deadline = time.monotonic() + 60
    with _children([proc]):
        while acked < 30 and time.monotonic() < deadline:
            acked = max(acked, out.get(timeout=60))
            watcher.execute(ROW, (1,)).fetchall()  # reading while it writes
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)
    while not out.empty():
        try:
            acked = max(acked, out.get(timeout=1))
        except Exception:  # noqa: BLE001 - a half-written queue item of the killed process
            break
    assert acked >= 30
    # the watcher's views catch up with everything committed, and agree with base storage
    got = _cached(watcher, path)
    n = got[(ROW, 1)][0][0]
    assert n >= acked
    assert got == {(q, k): _truth(path, q, k) for q, k in QUERIES}
    watcher.close()
    reopened = noria_py.connect(path)
    assert reopened.execute(ROW, (1,)).fetchall() == [(n,)]
    assert reopened.execute("SELECT COUNT(*) FROM labels WHERE id > ?", (100,)).fetchall() == [(n,)]
    reopened.close()


def test_the_change_log_is_truncated_once_every_process_has_read_it(tmp_path):
    path = str(tmp_path / "trunc.db")
    _setup(path)
    a = noria_py.connect(path)
    b = noria_py.connect(path)
    b.execute(ROW, (1,)).fetchall()
    for i in range(50):
        a.execute("UPDATE counters SET n = ? WHERE id = 1", (i,))
    a.engine.storage.log_housekeeping(a.engine._origin, a.engine._applied)
    deadline = time.monotonic() + 10
    while True:
        with b.engine.lock:
            b.engine._catch_up()
            b.engine.storage.log_housekeeping(b.engine._origin, b.engine._applied)
        with a.engine.lock:
            a.engine.storage.log_housekeeping(a.engine._origin, a.engine._applied)
        left = sqlite3.connect(path).execute("SELECT COUNT(*) FROM __noria_changes").fetchone()[0]
        if left == 0:
            break
        assert time.monotonic() < deadline, f"{left} log entries never truncated"
        time.sleep(0.05)
    assert b.execute(ROW, (1,)).fetchall() == [(49,)]
    a.close()
    b.close()


@pytest.mark.parametrize("shared", [True, False])
def test_shared_can_be_turned_off(tmp_path, shared):
    path = str(tmp_path / "off.db")
    _setup(path)
    conn = noria_py.connect(path, shared=shared)
    assert conn.engine.shared is shared
    conn.execute("UPDATE counters SET n = 3 WHERE id = 1")
    assert conn.execute(ROW, (1,)).fetchall() == [(3,)]
    conn.close()


def _signalling_writer(path: str, commits, acks) -> None:
    conn = noria_py.connect(path)
    for token in range(1, 41):
        conn.execute("UPDATE counters SET n = ? WHERE id = 6", (token,))
        acks.put(token)  # committed: the reader reads after this
        commits.get(timeout=60)  # wait for the reader's read
    conn.close()


def test_sync_orders_a_read_after_another_process_commit(tmp_path):
    # a read that follows another process's commit (here: told through a queue) and calls
    # sync() first sees that commit, every time
    path = str(tmp_path / "order.db")
    _setup(path)
    ctx = mp.get_context("spawn")
    commits, acks = ctx.Queue(), ctx.Queue()
    reader = noria_py.connect(path)
    reader.execute(ROW, (6,)).fetchall()
    proc = ctx.Process(target=_signalling_writer, args=(path, commits, acks))
    with _children([proc]):
        for _ in range(40):
            token = acks.get(timeout=60)
            reader.engine.sync()
            assert reader.execute(ROW, (6,)).fetchall() == [(token,)]
            commits.put(True)
        proc.join(30)
    assert proc.exitcode == 0
    reader.close()


def test_every_column_kind_crosses_the_change_log(tmp_path):
    import datetime as dt

    from noria_py.storage.sqlite import decode_batch, encode_batch

    row = (
        1,
        -(2**70),
        1.5,
        "é",
        b"\x00\xff",
        None,
        Decimal("12.30"),
        dt.date(2024, 2, 29),
        dt.datetime(2024, 2, 29, 10, 11, 12, 345678),
        dt.timedelta(days=-1, seconds=5, microseconds=7),
    )
    assert decode_batch(encode_batch([(row, 1), (row, -1)])) == [(row, 1), (row, -1)]
    path = str(tmp_path / "kinds.db")
    a = noria_py.connect(path)
    a.execute(
        "CREATE TABLE k (id INT PRIMARY KEY, d DECIMAL(10,2), day DATE, at DATETIME(6), "
        "t TIME, s VARCHAR(10), b VARBINARY(4))"
    )
    b = noria_py.connect(path)
    q = "SELECT d, day, at, t, s, b FROM k WHERE id = ?"
    assert b.execute(q, (1,)).fetchall() == []
    a.execute(
        "INSERT INTO k VALUES (1, 12.3, '2024-02-29', '2024-02-29 10:11:12.345678', "
        "'-01:02:03', 'Ünï', ?)",
        (b"\x00\xff",),
    )
    b.engine.sync()
    want = a.execute(q, (1,)).fetchall()
    assert b.execute(q, (1,)).fetchall() == want
    assert want[0][0] == Decimal("12.30")
    a.close()
    b.close()


def test_a_connection_without_the_change_log_is_alone_on_its_file(tmp_path):
    """shared=False keeps views that do not follow other connections' writes: such a
    connection and any other on the same file refuse each other at open (in one process and
    across processes), instead of one serving stale views."""
    import subprocess
    import sys

    path = str(tmp_path / "alone.db")
    _setup(path)
    a = noria_py.connect(path)
    b = noria_py.connect(path, domains="threads")  # two that follow each other: fine
    for options in ({"shared": False}, {"shared": False, "domains": "threads"}):
        with pytest.raises(noria_py.OperationalError) as info:
            noria_py.connect(path, **options)
        assert "in use" in str(info.value)
    a.close()
    b.close()
    t = noria_py.connect(path, shared=False)
    with pytest.raises(noria_py.OperationalError):
        noria_py.connect(path)
    probe = (
        "import sys, noria_py\n"
        "try:\n"
        "    noria_py.connect(sys.argv[1])\n"
        "except noria_py.OperationalError as e:\n"
        "    print('refused', e.errno)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, path], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "refused 1105", out.stderr[-2000:]
    t.execute("UPDATE counters SET n = 7 WHERE id = 1")
    t.close()
    again = noria_py.connect(path)  # released at close
    assert again.execute(ROW, (1,)).fetchall() == [(7,)]
    again.close()

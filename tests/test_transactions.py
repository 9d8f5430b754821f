"""Transactions of the embedded connection, in every dataflow mode and with both kinds of base
storage: a transaction reads its own writes (cached queries included), ROLLBACK leaves nothing
visible, savepoints, READ ONLY, autocommit off. A hypothesis test compares every read with
SQLite running the same statements."""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

MODES = {
    "inline": {},
    "messages": {"upqueries": "messages"},
    "thread": {"domains": "threads", "upqueries": "direct"},
    "threads": {"domains": "threads"},
}

POINT = "SELECT name FROM a WHERE id = ?"
AGG = "SELECT a_id, COUNT(*), SUM(v) FROM b WHERE a_id = ? GROUP BY a_id"
JOIN = "SELECT a.name, b.v FROM a JOIN b ON b.a_id = a.id WHERE a.id = ? ORDER BY b.v"


def _open(mode: str, storage: str, tmp_path):
    path = str(tmp_path / "tx.db") if storage == "file" else None
    conn = noria_py.connect(path, **MODES[mode])
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20))")
    conn.execute("CREATE TABLE b (id INT AUTO_INCREMENT PRIMARY KEY, a_id INT, v INT)")
    conn.execute("INSERT INTO a (name) VALUES ('ann'), ('bob')")
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 10), (1, 20), (2, 5)")
    return conn


def _read(conn, sql, key):
    conn.engine.sync()  # with dataflow threads, committed writes reach the views first
    return [
        tuple(int(v) if isinstance(v, Decimal) else v for v in r)
        for r in conn.execute(sql, (key,)).fetchall()
    ]


@pytest.fixture(params=["memory", "file"])
def storage(request):
    return request.param


@pytest.mark.parametrize("mode", list(MODES))
def test_a_transaction_reads_its_own_writes_cached_or_not(mode, storage, tmp_path):
    conn = _open(mode, storage, tmp_path)
    for sql in (POINT, AGG, JOIN):  # cached and filled before the transaction
        conn.execute(sql, (1,)).fetchall()
    conn.execute("BEGIN")
    conn.execute("UPDATE a SET name = 'ann2' WHERE id = 1")
    cur = conn.execute("INSERT INTO b (a_id, v) VALUES (1, 7)")
    assert cur.lastrowid == 4  # known at the INSERT, not at COMMIT
    assert conn.execute(POINT, (1,)).fetchall() == [("ann2",)]
    assert _read(conn, AGG, 1) == [(1, 3, 37)]
    assert _read(conn, JOIN, 1) == [("ann2", 7), ("ann2", 10), ("ann2", 20)]
    conn.execute("DELETE FROM b WHERE v = 10")
    assert _read(conn, AGG, 1) == [(1, 2, 27)]
    # a query over tables the transaction did not write keeps the cached path
    conn.execute("COMMIT")
    assert _read(conn, POINT, 1) == [("ann2",)]
    assert _read(conn, AGG, 1) == [(1, 2, 27)]
    assert _read(conn, JOIN, 1) == [("ann2", 7), ("ann2", 20)]
    conn.close()


@pytest.mark.parametrize("mode", list(MODES))
def test_nothing_of_a_rolled_back_transaction_is_visible(mode, storage, tmp_path):
    conn = _open(mode, storage, tmp_path)
    for _ in range(20):  # the read right after ROLLBACK, many times (a race once)
        conn.execute(POINT, (1,)).fetchall()
        conn.execute(AGG, (1,)).fetchall()
        conn.execute("BEGIN")
        conn.execute("UPDATE a SET name = 'gone' WHERE id = 1")
        conn.execute("INSERT INTO b (a_id, v) VALUES (1, 1000)")
        assert conn.execute(POINT, (1,)).fetchall() == [("gone",)]
        conn.execute("ROLLBACK")
        assert conn.execute(POINT, (1,)).fetchall() == [("ann",)]
        assert _read(conn, AGG, 1) == [(1, 2, 30)]
    conn.close()


@pytest.mark.parametrize("mode", ["inline", "threads"])
def test_savepoints(mode, storage, tmp_path):
    conn = _open(mode, storage, tmp_path)
    conn.execute("SAVEPOINT outside")  # accepted outside a transaction, and forgotten
    with pytest.raises(noria_py.OperationalError) as info:
        conn.execute("ROLLBACK TO SAVEPOINT outside")
    assert info.value.errno == 1305
    conn.execute("START TRANSACTION")
    conn.execute("SAVEPOINT first")  # before any write
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 1)")
    conn.execute("SAVEPOINT s1")
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 2)")
    conn.execute("SAVEPOINT s2")
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 4)")
    assert _read(conn, AGG, 1) == [(1, 5, 37)]
    conn.execute("ROLLBACK TO s2")
    assert _read(conn, AGG, 1) == [(1, 4, 33)]
    conn.execute("ROLLBACK TO SAVEPOINT s1")  # s2 is gone with it
    with pytest.raises(noria_py.OperationalError):
        conn.execute("RELEASE SAVEPOINT s2")
    assert _read(conn, AGG, 1) == [(1, 3, 31)]
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 8)")
    conn.execute("RELEASE SAVEPOINT s1")
    conn.execute("ROLLBACK TO first")  # undoes every write; the transaction goes on
    assert _read(conn, AGG, 1) == [(1, 2, 30)]
    conn.execute("INSERT INTO b (a_id, v) VALUES (1, 16)")
    conn.execute("COMMIT")
    assert _read(conn, AGG, 1) == [(1, 3, 46)]
    conn.close()


def test_read_only_transaction_refuses_writes_and_keeps_cached_reads():
    conn = _open("inline", "memory", None)
    conn.execute(POINT, (1,))
    conn.execute("START TRANSACTION READ ONLY")
    with pytest.raises(noria_py.OperationalError) as info:
        conn.execute("UPDATE a SET name = 'x' WHERE id = 1")
    assert info.value.errno == 1792
    hits = conn.engine.queries[conn.engine.prepare(POINT).entry.name].hits
    assert conn.execute(POINT, (1,)).fetchall() == [("ann",)]
    assert conn.engine.queries[conn.engine.prepare(POINT).entry.name].hits == hits + 1
    conn.execute("COMMIT")
    conn.execute("UPDATE a SET name = 'x' WHERE id = 1")
    assert conn.execute(POINT, (1,)).fetchall() == [("x",)]


def test_autocommit_off_starts_transactions_implicitly():
    conn = _open("inline", "memory", None)
    conn.execute("SET autocommit = 0")
    conn.execute("INSERT INTO a (name) VALUES ('cid')")
    assert conn.in_transaction
    assert conn.execute(POINT, (3,)).fetchall() == [("cid",)]
    conn.execute("ROLLBACK")
    assert conn.execute(POINT, (3,)).fetchall() == []
    conn.execute("INSERT INTO a (name) VALUES ('dan')")
    conn.execute("SET autocommit = 1")  # commits the open transaction
    assert not conn.in_transaction
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT COUNT(*) FROM a WHERE name = ?", ("dan",)).fetchall() == [(1,)]


def test_an_error_in_a_transaction_undoes_only_its_statement():
    conn = _open("inline", "memory", None)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO a (id, name) VALUES (10, 'x')")
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("INSERT INTO a (id, name) VALUES (11, 'y'), (10, 'dup')")
    assert info.value.errno == 1062
    assert conn.execute(POINT, (11,)).fetchall() == []  # the failed statement left nothing
    conn.execute("COMMIT")
    assert conn.execute(POINT, (10,)).fetchall() == [("x",)]
    assert conn.execute(POINT, (11,)).fetchall() == []


def test_a_failed_one_row_insert_in_a_transaction_leaves_the_rest():
    """A one-row INSERT runs without a statement savepoint (one SQLite statement undoes its
    own part): its failure keeps the transaction's earlier writes and the transaction open."""
    conn = _open("inline", "memory", None)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO a (id, name) VALUES (?, ?)", (10, "x"))
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("INSERT INTO a (id, name) VALUES (?, ?)", (10, "dup"))
    assert info.value.errno == 1062
    assert conn.in_transaction
    conn.execute("INSERT INTO a (id, name) VALUES (?, ?)", (12, "z"))
    conn.execute("COMMIT")
    assert conn.execute(POINT, (10,)).fetchall() == [("x",)]
    assert conn.execute(POINT, (12,)).fetchall() == [("z",)]


def test_ddl_commits_the_open_transaction():
    conn = _open("inline", "memory", None)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO a (name) VALUES ('kept')")
    conn.execute("CREATE TABLE c (id INT PRIMARY KEY)")
    assert not conn.in_transaction
    conn.execute("ROLLBACK")
    assert conn.execute(POINT, (3,)).fetchall() == [("kept",)]


def test_no_cached_read_after_an_internal_failure():
    conn = _open("inline", "memory", None)
    assert conn.execute(POINT, (1,)).fetchall() == [("ann",)]
    conn.engine._failure = RuntimeError("a domain failed")
    with pytest.raises(noria_py.OperationalError):
        conn.execute(POINT, (1,))  # the lock-free lookup path checks too


# --- hypothesis: the same statements on SQLite ---------------------------------------------

_op = st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 3), st.integers(-5, 50)),
    st.tuples(st.just("update"), st.integers(1, 3), st.integers(-5, 50)),
    st.tuples(st.just("delete"), st.integers(1, 3), st.integers(0, 50)),
    st.tuples(st.just("read"), st.integers(1, 3), st.integers(0, 2)),
    st.tuples(st.sampled_from(["begin", "commit", "rollback"]), st.just(0), st.just(0)),
    st.tuples(
        st.sampled_from(["savepoint", "rollback_to", "release"]), st.integers(0, 2), st.just(0)
    ),
)

_READS = [
    "SELECT id, v FROM t WHERE g = ? ORDER BY id",
    "SELECT g, COUNT(*), SUM(v), MAX(v) FROM t WHERE g = ? GROUP BY g",
    "SELECT COUNT(*) FROM t WHERE g = ?",
]


def _norm(rows):
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in rows]


@pytest.mark.parametrize("mode", ["inline", "threads"])
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(_op, max_size=30))
def test_transactions_match_sqlite(mode, ops, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("htx") / "h.db")
    conn = noria_py.connect(path, **MODES[mode])
    model = sqlite3.connect(":memory:", isolation_level=None)
    for db in (conn, model):
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, g INT, v INT)")
    in_tx = False
    savepoints: list[str] = []
    next_id = 0
    for kind, a, b in ops:
        if kind == "insert":
            next_id += 1
            sql, params = "INSERT INTO t (id, g, v) VALUES (?, ?, ?)", (next_id, a, b)
        elif kind == "update":
            sql, params = "UPDATE t SET v = v + ? WHERE g = ?", (b, a)
        elif kind == "delete":
            sql, params = "DELETE FROM t WHERE g = ? AND v < ?", (a, b)
        elif kind == "read":
            conn.engine.sync()
            got = _norm(conn.execute(_READS[b], (a,)).fetchall())
            want = _norm(model.execute(_READS[b], (a,)).fetchall())
            assert got == want, (_READS[b], a)
            continue
        elif kind == "begin":
            sql, params = "BEGIN", ()
            in_tx = True
            savepoints = []
        elif kind in ("commit", "rollback"):
            conn.execute(kind.upper())
            if in_tx:
                model.execute(kind.upper())
            in_tx = False
            savepoints = []
            continue
        else:
            name = f"sp{a}"
            if kind == "savepoint":
                conn.execute(f"SAVEPOINT {name}")
                if in_tx:
                    if name in savepoints:
                        # MySQL replaces a savepoint of the same name: SQLite keeps both, and
                        # releasing the newer one (nothing of it undone) leaves the older
                        savepoints.remove(name)
                    model.execute(f"SAVEPOINT {name}")
                    savepoints.append(name)
                continue
            if name not in savepoints:
                with pytest.raises(noria_py.OperationalError):
                    conn.execute(
                        f"{'ROLLBACK TO' if kind == 'rollback_to' else 'RELEASE SAVEPOINT'} {name}"
                    )
                continue
            i = savepoints.index(name)
            if kind == "rollback_to":
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                model.execute(f"ROLLBACK TO {name}")
                del savepoints[i + 1 :]
            else:
                conn.execute(f"RELEASE SAVEPOINT {name}")
                model.execute(f"RELEASE {name}")
                del savepoints[i:]
            continue
        if kind == "begin":
            conn.execute("BEGIN")
            if model.in_transaction:
                model.execute("COMMIT")
            model.execute("BEGIN")
            continue
        conn.execute(sql, params)
        model.execute(sql, params)
    conn.execute("COMMIT")
    if model.in_transaction:
        model.execute("COMMIT")
    conn.engine.sync()
    for q in _READS:
        for g in (1, 2, 3):
            assert _norm(conn.execute(q, (g,)).fetchall()) == _norm(
                model.execute(q, (g,)).fetchall()
            )
    conn.close()


def test_select_for_update_takes_the_write_lock_first(tmp_path):
    path = str(tmp_path / "tx.db")
    conn = _open("inline", "file", tmp_path)
    conn.close()
    engine = noria_py.connect(path).engine
    a, b = engine.new_txn(), engine.new_txn()
    engine.begin(a)
    engine.begin(b)
    read = "SELECT v FROM b WHERE id = ? FOR UPDATE"
    assert engine.execute(read, (1,), a).rows == ((10,),)
    # b's locking read waits for a (LockWait: the server parks it), a plain read does not
    with pytest.raises(noria_py.OperationalError) as info:
        engine.execute(read, (1,), b)
    assert info.value.errno == 1205
    assert list(engine.execute("SELECT v FROM b WHERE id = ?", (1,), b).rows) == [(10,)]
    engine.execute("UPDATE b SET v = v + 1 WHERE id = 1", (), a)
    engine.commit(a)
    assert list(engine.execute(read, (1,), b).rows) == [(11,)]
    engine.execute("UPDATE b SET v = v + 1 WHERE id = 1", (), b)
    engine.commit(b)
    assert list(engine.execute("SELECT v FROM b WHERE id = ?", (1,)).rows) == [(12,)]
    engine.close()

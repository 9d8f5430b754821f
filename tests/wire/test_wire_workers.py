"""``noria-py serve --workers N``: N processes on one port and one database file. Connections
are spread over the processes; a connection reads its own writes at once, every other one
within moments, and a writer on one process waits for a transaction open on another."""

from __future__ import annotations

import threading
import time

import psutil
import pymysql
import pytest
from conftest import start_server, stop_server

pytestmark = pytest.mark.wire


@pytest.fixture(scope="module")
def workers():
    srv = start_server("--workers", "2")
    yield srv
    assert stop_server(srv) == 0


def _eventually(cur, sql, params, want, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        cur.execute(sql, params)
        got = cur.fetchall()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.005)


def test_connections_spread_over_processes_and_stay_coherent(workers):
    conns = [workers.pymysql() for _ in range(12)]
    children = psutil.Process(workers.proc.pid).children()
    assert len(children) == 2
    busy = [
        sum(1 for c in p.net_connections(kind="tcp") if c.status == psutil.CONN_ESTABLISHED)
        for p in children
    ]
    assert all(n > 0 for n in busy), busy  # both processes serve connections
    cur0 = conns[0].cursor()
    cur0.execute("CREATE TABLE wk (id INT PRIMARY KEY, g INT, v INT)")
    cur0.execute("INSERT INTO wk VALUES (1, 1, 0), (2, 1, 0)")
    point = "SELECT v FROM wk WHERE id = %s"
    total = "SELECT g, COUNT(*), SUM(v) FROM wk WHERE g = %s GROUP BY g"
    for c in conns:  # every process caches both queries
        cur = c.cursor()
        assert _eventually(cur, point, (1,), ((0,),)) == ((0,),)
        cur.execute(total, (1,))
    for i, c in enumerate(conns):
        cur = c.cursor()
        cur.execute("UPDATE wk SET v = v + 1 WHERE id = 1")
        cur.execute(point, (1,))
        assert cur.fetchall() == ((i + 1,),)  # its own write, at once
    for c in conns:
        cur = c.cursor()
        assert _eventually(cur, point, (1,), ((12,),)) == ((12,),)
        cur.execute(total, (1,))
        assert [tuple(map(int, r)) for r in cur.fetchall()] == [(1, 2, 12)]
    for c in conns:
        c.close()


def test_a_writer_waits_for_a_transaction_on_another_process(workers):
    conns = [workers.pymysql() for _ in range(8)]
    cur = conns[0].cursor()
    cur.execute("CREATE TABLE wt (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO wt VALUES (1, 0)")
    holder = conns[0]
    holder.begin()
    holder.cursor().execute("UPDATE wt SET v = 100 WHERE id = 1")
    others = conns[1:]
    # one of the others, at least, is on the other process; each must wait, then apply
    threading.Timer(0.3, holder.commit).start()
    t0 = time.monotonic()
    for c in others:
        c.cursor().execute("UPDATE wt SET v = v + 1 WHERE id = 1")
    assert time.monotonic() - t0 >= 0.25
    for c in conns:
        assert _eventually(c.cursor(), "SELECT v FROM wt WHERE id = %s", (1,), ((107,),)) == (
            (107,),
        )
    # and a lock wait that outlasts innodb_lock_wait_timeout is 1205
    holder.begin()
    holder.cursor().execute("UPDATE wt SET v = 0 WHERE id = 1")
    timed_out = 0
    for c in others:
        cur = c.cursor()
        cur.execute("SET innodb_lock_wait_timeout = 1")
        try:
            cur.execute("UPDATE wt SET v = -1 WHERE id = 1")
        except pymysql.err.OperationalError as e:
            assert e.args[0] == 1205
            timed_out += 1
        break
    holder.rollback()
    assert timed_out == 1
    for c in conns:
        c.close()


def test_named_locks_are_one_across_the_processes(workers):
    # GET_LOCK on one process, the other process's sessions see it taken, and get it once
    # it is released
    conns = [workers.pymysql() for _ in range(6)]
    cur = conns[0].cursor()
    cur.execute("SELECT GET_LOCK('deploy', 0), CONNECTION_ID()")
    ((got, holder),) = cur.fetchall()
    assert got == 1
    for c in conns[1:]:
        with c.cursor() as other:
            other.execute("SELECT GET_LOCK('deploy', 0), IS_USED_LOCK('deploy')")
            assert other.fetchall() == ((0, holder),)
    cur.execute("SELECT RELEASE_LOCK('deploy')")
    assert cur.fetchall() == ((1,),)
    with conns[-1].cursor() as last:
        last.execute("SELECT GET_LOCK('deploy', 5)")
        assert last.fetchall() == ((1,),)
    for c in conns:
        c.close()

"""LOCK TABLES / UNLOCK TABLES over the wire, with two connections: while one connection holds
table locks, another's write waits for UNLOCK TABLES (or times out with 1205), and its reads see
the state from before the locks; what the locking connection wrote with autocommit on is kept
when it goes away, and rolled back with autocommit off."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

pytestmark = pytest.mark.wire


def _count(cur, table="lk") -> int:
    cur.execute(f"SELECT COUNT(*) FROM {table}")
    return cur.fetchone()[0]


@pytest.fixture
def tables(server):
    c = server.pymysql()
    cur = c.cursor()
    cur.execute("DROP TABLE IF EXISTS lk")
    cur.execute("DROP TABLE IF EXISTS lk_other")
    cur.execute("CREATE TABLE lk (id INT PRIMARY KEY, v INT)")
    cur.execute("CREATE TABLE lk_other (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO lk VALUES (1, 1)")
    yield
    cur.execute("DROP TABLE IF EXISTS lk")
    cur.execute("DROP TABLE IF EXISTS lk_other")
    c.close()


def test_another_writer_waits_for_unlock(server, tables):
    a, b = server.pymysql(), server.pymysql()
    ac, bc = a.cursor(), b.cursor()
    try:
        ac.execute("LOCK TABLES lk WRITE")
        ac.execute("INSERT INTO lk VALUES (2, 2), (3, 3)")
        assert _count(ac) == 3  # its own writes
        assert _count(bc) == 1  # the state from before the locks
        done = threading.Event()
        errors = []

        def write():
            try:
                bc.execute("INSERT INTO lk VALUES (4, 4)")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            done.set()

        t = threading.Thread(target=write)
        t.start()
        assert not done.wait(0.6)  # waits for the locks
        ac.execute("UNLOCK TABLES")
        assert done.wait(10)
        t.join()
        assert errors == []
        assert _count(bc) == 4
        assert _count(ac) == 4
    finally:
        a.close()
        b.close()


def test_a_waiting_writer_times_out_with_1205(server, tables):
    a, b = server.pymysql(), server.pymysql()
    ac, bc = a.cursor(), b.cursor()
    try:
        ac.execute("LOCK TABLES lk READ")
        bc.execute("SET innodb_lock_wait_timeout = 1")
        start = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError) as info:
            bc.execute("INSERT INTO lk_other VALUES (1)")
        assert info.value.args[0] == 1205
        assert time.monotonic() - start >= 0.9
        ac.execute("UNLOCK TABLES")
        bc.execute("INSERT INTO lk_other VALUES (1)")
        assert _count(ac, "lk_other") == 1
    finally:
        a.close()
        b.close()


def test_locks_end_with_the_connection(server, tables):
    """Autocommit on: MySQL committed each statement under the locks; they are kept when the
    connection goes away, and the next writer proceeds. Autocommit off: the open transaction
    rolls back."""
    a, b = server.pymysql(), server.pymysql()
    bc = b.cursor()
    try:
        ac = a.cursor()
        ac.execute("LOCK TABLES lk WRITE")
        ac.execute("INSERT INTO lk VALUES (5, 5)")
        ac.execute("ROLLBACK")  # nothing to undo with autocommit on
        a.close()
        bc.execute("SET innodb_lock_wait_timeout = 5")
        bc.execute("INSERT INTO lk VALUES (6, 6)")  # the locks went with the connection
        assert _count(bc) == 3

        a = server.pymysql(autocommit=False)
        ac = a.cursor()
        ac.execute("LOCK TABLES lk WRITE")
        ac.execute("INSERT INTO lk VALUES (7, 7)")
        a.close()
        bc.execute("INSERT INTO lk VALUES (8, 8)")
        bc.execute("SELECT id FROM lk ORDER BY id")
        assert [r[0] for r in bc.fetchall()] == [1, 5, 6, 8]
    finally:
        a.close() if a.open else None
        b.close()


def test_begin_releases_the_locks(server, tables):
    a, b = server.pymysql(), server.pymysql()
    ac, bc = a.cursor(), b.cursor()
    try:
        ac.execute("LOCK TABLES lk WRITE")
        ac.execute("INSERT INTO lk VALUES (9, 9)")
        ac.execute("BEGIN")  # commits, releases the locks
        assert _count(bc) == 2
        bc.execute("SET innodb_lock_wait_timeout = 5")
        bc.execute("INSERT INTO lk VALUES (10, 10)")
        ac.execute("COMMIT")
        assert _count(ac) == 3
    finally:
        a.close()
        b.close()

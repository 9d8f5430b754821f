"""GET_LOCK over the wire: sessions contend for a name, and a connection that goes away
releases what it held (a migration tool's lock is not left behind)."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

pytestmark = pytest.mark.wire


def test_over_the_wire_sessions_contend_and_a_lost_connection_releases(server):
    a, b = server.pymysql(), server.pymysql()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("SELECT CONNECTION_ID()")
    a_id = ca.fetchall()[0][0]
    ca.execute("SELECT GET_LOCK('migrations', 0)")
    assert ca.fetchall() == ((1,),)
    cb.execute("SELECT GET_LOCK('migrations', 0), IS_USED_LOCK('migrations')")
    assert cb.fetchall() == ((0, a_id),)
    a.close()  # the connection goes away: its lock with it
    deadline = time.monotonic() + 5
    while True:
        cb.execute("SELECT GET_LOCK('migrations', 0)")
        if cb.fetchall() == ((1,),) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    cb.execute("SELECT IS_USED_LOCK('migrations') = CONNECTION_ID()")
    assert cb.fetchall() == ((1,),)
    with pytest.raises(pymysql.err.NotSupportedError):
        cb.execute("SELECT GET_LOCK('x', 0) FROM information_schema.tables")
    b.close()


def _in_background(conn, sql: str):
    """Run ``sql`` on ``conn`` in a thread of its own: (the thread, the list its rows go to)."""
    done: list = []

    def run():
        with conn.cursor() as cur:
            cur.execute(sql)
            done.append(cur.fetchall())

    t = threading.Thread(target=run)
    t.start()
    return t, done


def test_sleep_waits_in_its_session_only(server):
    # SLEEP(n) holds its own session, never the engine: another session's statements go on
    a, b = server.pymysql(), server.pymysql()
    t, done = _in_background(a, "SELECT SLEEP(2)")
    time.sleep(0.2)
    with b.cursor() as cur:
        cur.execute("CREATE TABLE slept (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO slept VALUES (1)")
        cur.execute("SELECT COUNT(*) FROM slept")
        assert cur.fetchall() == ((1,),)
    assert t.is_alive() and not done  # b was answered while a slept
    t.join(10)
    assert done == [((0,),)]
    with b.cursor() as cur:
        with pytest.raises(pymysql.err.NotSupportedError):
            cur.execute("SELECT SLEEP(1) FROM slept")
    a.close()
    b.close()


def test_a_session_waiting_for_a_name_leaves_the_others_running(server):
    # b waits for the name a holds; a (and anyone else) is still answered meanwhile, and its
    # release hands the name to b
    a, b = server.pymysql(), server.pymysql()
    ca = a.cursor()
    ca.execute("SELECT GET_LOCK('w', 0)")
    assert ca.fetchall() == ((1,),)
    t, got = _in_background(b, "SELECT GET_LOCK('w', 20)")
    time.sleep(0.3)
    ca.execute("SELECT IS_FREE_LOCK('w'), 1 + 1")
    assert ca.fetchall() == ((0, 2),)
    assert t.is_alive() and not got
    ca.execute("SELECT RELEASE_LOCK('w')")
    assert ca.fetchall() == ((1,),)
    t.join(10)
    assert got == [((1,),)]
    a.close()
    b.close()

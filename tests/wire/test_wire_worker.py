"""Commands that may run long under the engine lock (DDL, queries new to the engine or proxied
to base storage) run on the server's worker thread: the event loop keeps answering other
connections' lookups meanwhile, and a connection's own commands stay in order behind the one on
the worker."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import start_server, stop_server
from rawmysql import RawClient, packet, read_result

pytestmark = pytest.mark.wire

# a cross join the dataflow cannot maintain: proxied to SQLite, seconds of work under the lock
SLOW = "SELECT COUNT(*) FROM worker_t a, worker_t b, worker_t c WHERE a.v + b.v + c.v > %s"
ROWS = 260


@pytest.fixture(scope="module")
def worker_t(server):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE worker_t (id INT PRIMARY KEY, v INT)")
        cur.executemany("INSERT INTO worker_t VALUES (%s, %s)", [(i, i) for i in range(ROWS)])
    conn.close()
    return "worker_t"


def test_a_slow_statement_does_not_hold_up_other_connections(server, worker_t):
    slow, fast = server.pymysql(), server.pymysql()
    with fast.cursor() as cur:
        cur.execute("SELECT v FROM worker_t WHERE id = %s", (7,))  # fills the key
        assert cur.fetchall() == ((7,),)
    done = threading.Event()
    got = {}

    def run_slow() -> None:
        with slow.cursor() as cur:
            cur.execute(SLOW, (-1,))
            got["count"] = cur.fetchall()[0][0]
        done.set()

    th = threading.Thread(target=run_slow)
    th.start()
    time.sleep(0.3)  # the slow statement is on the worker by now
    answered_while_busy = 0
    with fast.cursor() as cur:
        for _ in range(20):
            cur.execute("SELECT v FROM worker_t WHERE id = %s", (7,))
            assert cur.fetchall() == ((7,),)
            answered_while_busy += not done.is_set()
    th.join(timeout=120)
    assert got["count"] == ROWS**3
    # every cached lookup was answered while the slow statement was still running
    assert answered_while_busy == 20
    slow.close()
    fast.close()


def test_commands_behind_an_offloaded_one_keep_their_order(server, worker_t):
    c = RawClient(server.host, server.port)
    assert c.handshake()[0] == 0x00
    # a query new to the engine (worker), then a write, a lookup of what it wrote, an update
    # and the lookup again (event loop, once the first is answered): answered in the order sent
    c.sock.sendall(
        packet(b"\x03SELECT COUNT(*) FROM worker_t a, worker_t b WHERE a.v < 30 AND b.v < 20")
        + packet(b"\x03INSERT INTO worker_t VALUES (1000, 5)")
        + packet(b"\x03SELECT v FROM worker_t WHERE id = 1000")
        + packet(b"\x03UPDATE worker_t SET v = 6 WHERE id = 1000")
        + packet(b"\x03SELECT v FROM worker_t WHERE id = 1000")
        + packet(b"\x0e")
    )
    first, cols, rows = read_result(c)
    assert rows[:-1] == [b"\x03600"]
    ok = c.read_packet()
    assert ok[0] == 0x00 and ok[1] == 1  # one row affected
    for want in (b"\x015", None, b"\x016"):
        if want is None:
            assert c.read_packet()[0] == 0x00  # the UPDATE's OK
            continue
        first, cols, rows = read_result(c)
        assert rows[:-1] == [want]
    assert c.read_packet()[0] == 0x00  # COM_PING
    c.close()


def test_disconnect_and_shutdown_while_a_command_is_on_the_worker(worker_t):
    srv = start_server()
    try:
        setup = srv.pymysql()
        with setup.cursor() as cur:
            cur.execute("CREATE TABLE worker_t (id INT PRIMARY KEY, v INT)")
            cur.executemany("INSERT INTO worker_t VALUES (%s, %s)", [(i, i) for i in range(ROWS)])
        # a client that sends a slow statement and vanishes
        c = RawClient(srv.host, srv.port)
        assert c.handshake()[0] == 0x00
        c.send_packet(b"\x03" + (SLOW % -1).encode(), seq=0)
        c.close()
        with setup.cursor() as cur:  # the server still serves (the statement runs to its end)
            cur.execute("SELECT v FROM worker_t WHERE id = %s", (3,))
            assert cur.fetchall() == ((3,),)
        # another slow statement is running when the server is told to stop: it stops cleanly
        d = RawClient(srv.host, srv.port)
        assert d.handshake()[0] == 0x00
        d.send_packet(b"\x03" + (SLOW % -1).encode(), seq=0)
        time.sleep(0.2)
        setup.close()
    finally:
        assert stop_server(srv) == 0

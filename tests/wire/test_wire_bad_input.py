"""Garbage, truncated handshakes, oversized and malformed packets, abrupt disconnects: each ends
at most the offending connection; the server keeps serving everyone else."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from rawmysql import RawClient, error_code

pytestmark = pytest.mark.wire


def _works(server) -> None:
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("SELECT @@version_comment")
        assert cur.fetchone() == ("noria_py dataflow database",)
    conn.close()
    assert server.alive()


@pytest.fixture(scope="module")
def watcher(server):
    """A connection opened before the abuse starts, which must keep working throughout."""
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE bad_input_t (id INT PRIMARY KEY, v VARCHAR(20))")
        cur.execute("INSERT INTO bad_input_t VALUES (1, 'one')")
    yield conn
    with conn.cursor() as cur:
        cur.execute("SELECT v FROM bad_input_t WHERE id = 1")
        assert cur.fetchall() == (("one",),)
    conn.close()


def test_garbage_instead_of_handshake(server, watcher):
    c = RawClient(server.host, server.port)
    c.read_packet()  # greeting
    c.sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_random_bytes_before_greeting_is_read(server, watcher):
    c = RawClient(server.host, server.port)
    c.sock.sendall(bytes(range(256)) * 4)
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_truncated_handshakes(server, watcher):
    for cut in (0, 1, 3, 4, 10, 30):
        c = RawClient(server.host, server.port)
        c.read_packet()
        payload = struct.pack("<IIB23x", 0x88200, 1 << 24, 45) + b"user\x00\x00"
        packet = len(payload).to_bytes(3, "little") + b"\x01" + payload
        c.sock.sendall(packet[:cut])
        c.sock.shutdown(socket.SHUT_WR)
        assert c.closed_by_server()
        c.close()
    _works(server)


def test_malformed_handshake_payload_gets_an_error(server, watcher):
    c = RawClient(server.host, server.port)
    c.read_packet()
    c.send_packet(b"\x00\x02\x00\x00\x01")  # far too short for a handshake response
    reply = c.read_packet()
    assert error_code(reply) == 1043
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_oversized_packet_before_login(server, watcher):
    c = RawClient(server.host, server.port)
    c.read_packet()
    c.sock.sendall(b"\xff\xff\xff\x01" + b"x" * 100_000)
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_oversized_packet_after_login(server, watcher):
    c = RawClient(server.host, server.port)
    assert c.handshake()[0] == 0x00
    # The server runs with --max-packet 4MB: announce 16MB (split) and start sending.
    c.seq = 0
    try:
        c.sock.sendall(b"\xff\xff\xff\x00\x03" + b"x" * 1_000_000)
    except OSError:
        pass
    reply = c.read_packet()
    assert error_code(reply) == 1153
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_oversized_query_from_a_driver(server, watcher):
    import pymysql

    conn = server.pymysql()
    with pytest.raises(pymysql.err.MySQLError):
        with conn.cursor() as cur:
            cur.execute("SELECT '" + "a" * (5 << 20) + "'")
    conn.close()
    _works(server)


def test_malformed_commands_keep_the_connection(server, watcher):
    c = RawClient(server.host, server.port)
    assert c.handshake()[0] == 0x00
    assert error_code(c.command(b"")) == 1835  # empty command packet
    assert error_code(c.command(b"\xee")) == 1047  # unknown command
    assert error_code(c.command(b"\x17\x01")) == 1835  # truncated COM_STMT_EXECUTE
    assert error_code(c.command(b"\x17" + b"\x63\x00\x00\x00" + b"\x00\x01\x00\x00\x00")) == 1243
    assert error_code(c.command(b"\x1c\x01\x00")) == 1835  # truncated COM_STMT_FETCH
    # prepare a statement with a parameter, then execute it with a broken parameter block
    prep = c.command(b"\x16SELECT v FROM bad_input_t WHERE id = ?")
    assert prep[0] == 0x00, prep
    stmt_id = prep[1:5]
    n_params = int.from_bytes(prep[7:9], "little")
    assert n_params == 1
    while True:  # param definitions (and an EOF, since DEPRECATE_EOF was not asked for)
        if c.read_packet()[0] == 0xFE:
            break
    n_cols = int.from_bytes(prep[5:7], "little")
    if n_cols:
        while c.read_packet()[0] != 0xFE:
            pass
    bad = b"\x17" + stmt_id + b"\x00\x01\x00\x00\x00" + b"\x00\x01" + b"\x08\x00" + b"\x01"
    assert error_code(c.command(bad)) == 1835  # LONGLONG parameter with one byte of value
    bad_type = b"\x17" + stmt_id + b"\x00\x01\x00\x00\x00" + b"\x00\x01" + b"\x99\x00" + b"x" * 8
    assert error_code(c.command(bad_type)) == 1835
    good = b"\x17" + stmt_id + b"\x00\x01\x00\x00\x00" + b"\x00\x01" + b"\x08\x00"
    good += struct.pack("<q", 1)
    first = c.command(good)
    assert first == b"\x01"  # one column follows
    packets = [c.read_packet() for _ in range(4)]  # column, EOF, row, EOF
    assert packets[1][0] == 0xFE and packets[3][0] == 0xFE
    assert packets[2] == b"\x00\x00\x03one"  # binary row: header, NULL bitmap, 'one'
    assert c.command(b"\x0e")[0] == 0x00  # ping still answered on the same connection
    c.close()
    _works(server)


def test_out_of_order_sequence_id_closes_only_that_connection(server, watcher):
    c = RawClient(server.host, server.port)
    assert c.handshake()[0] == 0x00
    c.seq = 0
    c.sock.sendall(b"\x05\x00\x00\x07\x03SELECT")  # a command with sequence id 7
    reply = c.read_packet()
    assert error_code(reply) == 1835
    assert c.closed_by_server()
    c.close()
    _works(server)


def test_abrupt_disconnects(server, watcher):
    for step in range(4):
        c = RawClient(server.host, server.port)
        if step >= 1:
            c.read_packet()
        if step >= 2:
            c.close()
            c = RawClient(server.host, server.port)
            assert c.handshake()[0] == 0x00
        if step == 3:
            # half a query packet, then gone
            c.sock.sendall(b"\x40\x00\x00\x00\x03SELECT v FROM")
        if step == 2:
            # a full query, then gone before reading the answer
            c.seq = 0
            c.send_packet(b"\x03SELECT v FROM bad_input_t WHERE id = 1")
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()  # RST
    time.sleep(0.2)
    _works(server)


def test_many_idle_half_open_connections(server, watcher):
    socks = [socket.create_connection((server.host, server.port)) for _ in range(50)]
    _works(server)
    for s in socks:
        s.close()
    _works(server)

"""The command phase at the packet level: pipelined commands, split (16 MB and more) packets,
long data, NULL and hostile parameters bound natively, status flags, statement invalidation
after DDL, clients that stop reading, and COM_CHANGE_USER."""

from __future__ import annotations

import socket
import struct
import time

import mysql.connector
import pytest
from conftest import start_server, stop_server
from rawmysql import (
    RawClient,
    error_code,
    is_eof,
    packet,
    read_logical,
    read_result,
    split_packets,
    status_of_eof,
)

pytestmark = pytest.mark.wire

T_LONG, T_LONGLONG, T_VAR_STRING, T_BLOB = 0x03, 0x08, 0xFD, 0xFC
HOSTILE = "x' OR '1'='1'; DROP TABLE proto_t; -- \\' \\\\ \" `"


@pytest.fixture(scope="module")
def proto_t(server):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE proto_t (id INT PRIMARY KEY, s VARCHAR(100), n INT)")
        cur.executemany(
            "INSERT INTO proto_t (id, s, n) VALUES (%s, %s, %s)",
            [(1, "one", 10), (2, "two", None), (3, HOSTILE, 30)],
        )
    conn.close()
    return "proto_t"


def _login(server) -> RawClient:
    c = RawClient(server.host, server.port)
    assert c.handshake()[0] == 0x00
    return c


def _lenenc_str(b: bytes) -> bytes:
    assert len(b) < 251
    return bytes([len(b)]) + b


def _text_values(row: bytes) -> list[bytes | None]:
    out: list[bytes | None] = []
    pos = 0
    while pos < len(row):
        if row[pos] == 0xFB:
            out.append(None)
            pos += 1
            continue
        n = row[pos]
        out.append(row[pos + 1 : pos + 1 + n])
        pos += 1 + n
    return out


def _prepare(c: RawClient, sql: str) -> tuple[bytes, int, int]:
    """COM_STMT_PREPARE; returns (statement id bytes, columns, parameters)."""
    reply = c.command(b"\x16" + sql.encode())
    assert reply[0] == 0x00, reply
    stmt_id, ncols, nparams = reply[1:5], *struct.unpack_from("<HH", reply, 5)
    if nparams:
        for _ in range(nparams):
            c.read_packet()
        assert is_eof(c.read_packet())
    if ncols:
        for _ in range(ncols):
            c.read_packet()
        assert is_eof(c.read_packet())
    return stmt_id, ncols, nparams


def _execute(stmt_id: bytes, types: list[int], values: list[bytes | None]) -> bytes:
    """A COM_STMT_EXECUTE payload; None values are sent through the NULL bitmap."""
    nulls = bytearray((len(types) + 7) // 8)
    for i, v in enumerate(values):
        if v is None:
            nulls[i >> 3] |= 1 << (i & 7)
    body = b"".join(v for v in values if v is not None)
    return (
        b"\x17" + stmt_id + b"\x00\x01\x00\x00\x00" + bytes(nulls) + b"\x01"
        + b"".join(struct.pack("<BB", t, 0) for t in types) + body
    )  # fmt: skip


def test_pipelined_commands_are_answered_in_order(server, proto_t):
    c = _login(server)
    c.sock.sendall(
        packet(b"\x0e")  # COM_PING
        + packet(b"\x03SELECT s FROM proto_t WHERE id = 1")
        + packet(b"\x03SELECT s FROM proto_t WHERE id = 2")
        + packet(b"\x03SELECT s FROM nowhere WHERE id = 2")
        + packet(b"\x03SELECT n FROM proto_t WHERE id = 2")
        + packet(b"\x0e")
    )
    assert c.read_packet()[0] == 0x00
    for want in (b"one", b"two"):
        first, cols, rows = read_result(c)
        assert first == b"\x01" and len(cols) == 1
        assert [_text_values(r) for r in rows[:-1]] == [[want]]
    assert error_code(c.read_packet()) == 1146
    first, cols, rows = read_result(c)
    assert [_text_values(r) for r in rows[:-1]] == [[None]]
    assert c.read_packet()[0] == 0x00
    # a command split across writes, one byte at a time, is still one command
    for b in packet(b"\x03SELECT s FROM proto_t WHERE id = 1"):
        c.sock.sendall(bytes([b]))
    first, cols, rows = read_result(c)
    assert [_text_values(r) for r in rows[:-1]] == [[b"one"]]
    c.close()


def test_hostile_and_null_parameters_are_bound_not_pasted(server, proto_t):
    c = _login(server)
    stmt, ncols, nparams = _prepare(c, "SELECT id FROM proto_t WHERE s = ?")
    assert (ncols, nparams) == (1, 1)
    for value, ids in ((HOSTILE, [3]), ("x' OR '1'='1", []), ("one", [1])):
        c.seq = 0
        c.send_packet(_execute(stmt, [T_VAR_STRING], [_lenenc_str(value.encode())]))
        first, cols, rows = read_result(c)
        # binary rows: 0x00 header, NULL bitmap, then the integer
        assert [(r[:2], int.from_bytes(r[2:], "little")) for r in rows[:-1]] == [
            (b"\x00\x00", i) for i in ids
        ], value
    c.seq = 0
    c.send_packet(_execute(stmt, [T_VAR_STRING], [None]))  # s = NULL matches nothing
    first, cols, rows = read_result(c)
    assert rows[:-1] == []
    stmt2, _, nparams = _prepare(c, "SELECT s, n FROM proto_t WHERE id = ? AND s = ?")
    assert nparams == 2
    c.seq = 0
    c.send_packet(
        _execute(stmt2, [T_LONGLONG, T_VAR_STRING], [struct.pack("<q", 3), _lenenc_str(HOSTILE.encode())])
    )  # fmt: skip
    first, cols, rows = read_result(c)
    assert len(rows) == 2 and rows[0][:1] == b"\x00"
    assert HOSTILE.encode() in rows[0]
    c.close()


def test_long_data_is_appended_and_pipelined(server, proto_t):
    c = _login(server)
    stmt, _, nparams = _prepare(c, "INSERT INTO proto_t (id, s, n) VALUES (?, ?, ?)")
    assert nparams == 3
    pieces = [b"it's ", b"back\\slash ", b'"quoted"']
    data = b""
    for p in pieces:  # COM_STMT_SEND_LONG_DATA has no reply: all of it in one write
        data += packet(b"\x18" + stmt + b"\x01\x00" + p)
    # the NULL bitmap marks the long-data parameter NULL too: sent long data wins, as in MySQL
    values = [struct.pack("<q", 40), None, None]
    data += packet(_execute(stmt, [T_LONGLONG, T_BLOB, T_LONGLONG], values))
    c.sock.sendall(data)
    reply = c.read_packet()
    assert reply[0] == 0x00, reply  # OK: one row inserted
    first, cols, rows = read_result_cmd(c, b"\x03SELECT s, n FROM proto_t WHERE id = 40")
    assert [_text_values(r) for r in rows[:-1]] == [[b"".join(pieces), None]]
    # long data serves one execution only
    values = [struct.pack("<q", 42), None, None]
    c.seq = 0
    c.send_packet(_execute(stmt, [T_LONGLONG, T_BLOB, T_LONGLONG], values))
    assert c.read_packet()[0] == 0x00
    first, cols, rows = read_result_cmd(c, b"\x03SELECT s, n FROM proto_t WHERE id = 42")
    assert [_text_values(r) for r in rows[:-1]] == [[None, None]]
    c.close()


def test_long_data_replaces_value_when_not_null(server, proto_t):
    c = _login(server)
    stmt, _, _ = _prepare(c, "INSERT INTO proto_t (id, s) VALUES (?, ?)")
    c.sock.sendall(
        packet(b"\x18" + stmt + b"\x01\x00" + b"first ")
        + packet(b"\x18" + stmt + b"\x01\x00" + b"second")
    )
    # param 1 is not NULL and has no inline value: its value is the long data
    c.seq = 0
    c.send_packet(
        b"\x17" + stmt + b"\x00\x01\x00\x00\x00" + b"\x00" + b"\x01"
        + struct.pack("<BBBB", T_LONGLONG, 0, T_BLOB, 0) + struct.pack("<q", 41)
    )  # fmt: skip
    assert c.read_packet()[0] == 0x00
    c.seq = 0
    c.send_packet(b"\x03SELECT s FROM proto_t WHERE id = 41")
    first, cols, rows = read_result(c)
    assert [_text_values(r) for r in rows[:-1]] == [[b"first second"]]
    c.close()


def test_status_flags_follow_the_transaction(server, proto_t):
    c = _login(server)
    first, _, rows = read_result_cmd(c, b"\x03SELECT s FROM proto_t WHERE id = 1")
    assert status_of_eof(rows[-1]) & 0x0003 == 0x0002  # autocommit, no transaction
    assert c.command(b"\x03BEGIN")[0] == 0x00
    first, _, rows = read_result_cmd(c, b"\x03SELECT s FROM proto_t WHERE id = 1")
    assert status_of_eof(rows[-1]) & 0x0003 == 0x0003  # in a transaction
    assert c.command(b"\x03ROLLBACK")[0] == 0x00
    first, _, rows = read_result_cmd(c, b"\x03SELECT s FROM proto_t WHERE id = 1")
    assert status_of_eof(rows[-1]) & 0x0003 == 0x0002
    c.close()


def read_result_cmd(c: RawClient, payload: bytes):
    c.seq = 0
    c.send_packet(payload)
    return read_result(c)


def test_ddl_invalidates_cached_lookups(server):
    conn = server.pymysql()
    other = server.connector()
    pcur = other.cursor(prepared=True)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE proto_ddl (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO proto_ddl VALUES (1, 'a')")
        for _ in range(3):
            cur.execute("SELECT v FROM proto_ddl WHERE id = %s", (1,))
            assert cur.fetchall() == (("a",),)
            pcur.execute("SELECT v FROM proto_ddl WHERE id = %s", (1,))
            assert pcur.fetchall() == [("a",)]
        cur.execute("DROP TABLE proto_ddl")
        with pytest.raises(Exception) as info:
            cur.execute("SELECT v FROM proto_ddl WHERE id = %s", (1,))
        assert info.value.args[0] == 1146
        cur.execute("CREATE TABLE proto_ddl (id INT PRIMARY KEY, v DOUBLE)")
        cur.execute("INSERT INTO proto_ddl VALUES (1, 2.5)")
        cur.execute("SELECT v FROM proto_ddl WHERE id = %s", (1,))
        assert cur.fetchall() == ((2.5,),)  # new type in the column definition
        assert cur.description[0][1] == 5  # DOUBLE
        pcur = other.cursor(prepared=True)
        pcur.execute("SELECT v FROM proto_ddl WHERE id = %s", (1,))
        assert pcur.fetchall() == [(2.5,)]
    conn.close()
    other.close()


def test_client_that_stops_reading_does_not_stall_others(server, proto_t):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE proto_big (id INT PRIMARY KEY, s TEXT)")
        cur.execute("INSERT INTO proto_big VALUES (%s, %s)", (1, "z" * 20000))
    c = _login(server)
    c.sock.settimeout(30)
    n = 600  # about 12 MB of answers, far beyond the socket buffers
    c.sock.sendall(packet(b"\x03SELECT s FROM proto_big WHERE id = 1") * n)
    time.sleep(0.5)
    with conn.cursor() as cur:  # meanwhile another client is served
        cur.execute("SELECT s FROM proto_t WHERE id = %s", (1,))
        assert cur.fetchall() == (("one",),)
    for _ in range(n):
        first, cols, rows = read_result(c)
        assert len(rows) == 2 and len(rows[0]) == 20003
    assert c.command(b"\x0e")[0] == 0x00
    c.close()
    conn.close()


# ---------------------------------------------------------------------------------------------
# 16 MB and more: split packets in both directions (a server with the default 64 MB limit)


@pytest.fixture(scope="module")
def big_server():
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0


BIG = 0xFFFFFF + 1000  # one full part and a short one


def test_split_packets_with_drivers(big_server):
    value = ("ab'\\" * (BIG // 4 + 1))[:BIG]
    conn = big_server.connector()
    cur = conn.cursor(prepared=True)
    cur.execute("CREATE TABLE big_t (id INT PRIMARY KEY, s LONGTEXT)")
    cur.execute("INSERT INTO big_t (id, s) VALUES (%s, %s)", (1, value))  # > 16 MB request
    conn.close()
    # a > 16 MB binary row (read raw: mysql-connector's pure-Python binary row reader truncates
    # rows split across packets, against MariaDB too)
    c = _login(big_server)
    stmt, _, _ = _prepare(c, "SELECT s FROM big_t WHERE id = ?")
    c.seq = 0
    c.send_packet(_execute(stmt, [T_LONGLONG], [struct.pack("<q", 1)]))
    assert c.read_packet() == b"\x01"
    c.read_packet()
    assert is_eof(c.read_packet())
    row = read_logical(c)
    assert row[:3] == b"\x00\x00\xfe"  # row header, NULL bitmap, 8-byte length
    assert int.from_bytes(row[3:11], "little") == BIG and row[11:] == value.encode()
    assert is_eof(c.read_packet())
    c.close()
    conn = big_server.pymysql()
    with conn.cursor() as cur:
        cur.execute("SELECT s FROM big_t WHERE id = %s", (1,))  # > 16 MB text row
        assert cur.fetchall() == ((value,),)
        cur.execute("SELECT LENGTH(s) FROM big_t WHERE id = %s", (1,))
        assert cur.fetchall() == ((BIG,),)
    conn.close()


@pytest.mark.parametrize("size", [0xFFFFFF - 7, BIG])
def test_split_long_data_packet(big_server, size):
    """A payload of exactly 0xFFFFFF bytes is followed by an empty packet; the answer to a
    split command continues the sequence after its last part."""
    c = _login(big_server)
    admin = big_server.pymysql()
    with admin.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS big_ld (id INT PRIMARY KEY, b LONGTEXT)")
    admin.close()
    stmt, _, _ = _prepare(c, "INSERT INTO big_ld (id, b) VALUES (?, ?)")
    payload = b"\x18" + stmt + b"\x01\x00" + b"q" * size
    framed = split_packets(payload)
    parts = len(payload) // 0xFFFFFF + 1
    assert len(framed) == len(payload) + 4 * parts
    c.sock.sendall(framed)
    c.seq = 0
    c.send_packet(
        b"\x17" + stmt + b"\x00\x01\x00\x00\x00" + b"\x00" + b"\x01"
        + struct.pack("<BBBB", T_LONGLONG, 0, T_BLOB, 0) + struct.pack("<q", size)
    )  # fmt: skip
    assert c.read_packet()[0] == 0x00
    # a split COM_QUERY: the answer's first sequence id follows the last part's
    query = b"\x03SELECT LENGTH(b) FROM big_ld WHERE id = " + str(size).encode()
    query += b" " * (0xFFFFFF - len(query))  # exactly one full part, then an empty one
    c.sock.sendall(split_packets(query))
    header = c.recv_exact(4)
    assert header[3] == 2  # parts 0 and 1 were the client's
    first = c.recv_exact(int.from_bytes(header[:3], "little"))
    assert first == b"\x01", first
    c.read_packet()
    assert is_eof(c.read_packet())
    assert _text_values(c.read_packet()) == [str(size).encode()]
    assert is_eof(c.read_packet())
    c.close()


def test_split_packet_out_of_order_closes_only_that_connection(big_server):
    c = _login(big_server)
    data = bytearray(split_packets(b"\x03SELECT 1" + b" " * 0xFFFFFF))
    data[0xFFFFFF + 4 + 3] = 9  # the second part claims sequence id 9
    try:
        c.sock.sendall(bytes(data))
    except OSError:
        pass
    assert error_code(c.read_packet()) == 1835
    assert c.closed_by_server()
    c.close()
    conn = big_server.pymysql()
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    conn.close()


# ---------------------------------------------------------------------------------------------
# COM_CHANGE_USER


def test_change_user(auth_server):
    from test_wire_auth import PASSWORD

    conn = auth_server.connector(user="bob", password="")
    cur = conn.cursor()
    cur.execute("SELECT CURRENT_USER()")
    assert cur.fetchall()[0][0].startswith("bob@")
    conn.cmd_change_user(username="alice", password=PASSWORD, database="noria")
    cur = conn.cursor()
    cur.execute("SELECT CURRENT_USER()")
    assert cur.fetchall()[0][0].startswith("alice@")
    cur = conn.cursor(prepared=True)  # statements work after the switch
    cur.execute("SELECT %s", (7,))
    assert [tuple(r) for r in cur.fetchall()] == [(7,)]
    with pytest.raises(mysql.connector.Error) as info:
        conn.cmd_change_user(username="alice", password="wrong", database="noria")
    assert info.value.errno == 1045
    conn.close()


def test_garbage_after_login_then_close(server, proto_t):
    """Random bytes after login produce errors or a closed connection, never a crash."""
    import random

    rng = random.Random(5)
    for _ in range(20):
        c = _login(server)
        c.sock.settimeout(2)
        try:
            c.sock.sendall(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))
            c.sock.shutdown(socket.SHUT_WR)
            while c.sock.recv(65536):
                pass
        except OSError:
            pass
        c.close()
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("SELECT s FROM proto_t WHERE id = %s", (1,))
        assert cur.fetchall() == (("one",),)
    conn.close()


def test_parameter_in_select_list(server, proto_t):
    conn = server.connector()
    cur = conn.cursor(prepared=True)
    cur.execute("SELECT %s", (7,))
    assert [tuple(r) for r in cur.fetchall()] == [(7,)]  # not NULL: typed after its value
    cur.execute("SELECT %s, s FROM proto_t WHERE id = %s", ("x'y", 1))
    assert [tuple(r) for r in cur.fetchall()] == [("x'y", "one")]
    conn.close()
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("SELECT 5, s FROM proto_t WHERE id = %s", (2,))
        assert cur.fetchall() == ((5, "two"),)
        cur.execute("SELECT 6, s FROM proto_t WHERE id = %s", (1,))  # same shape, new literals
        assert cur.fetchall() == ((6, "one"),)
    conn.close()

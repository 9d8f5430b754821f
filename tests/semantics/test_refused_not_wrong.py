"""Values this version cannot keep as MySQL does are refused (1235), never answered wrong.

A TIMESTAMP column under a session time_zone other than the system's: MySQL keeps TIMESTAMP
values in UTC and shows, compares and stores them in the session's time zone. This version
keeps them as written, so under another time_zone a statement that reads or writes one is
refused on every path (embedded, a cached lookup's fast path, over the wire); a DATETIME
column, and the system's own zone, are unaffected.

A BIGINT UNSIGNED above 2^63 - 1, which base storage's 64-bit signed integers cannot hold.
"""

from __future__ import annotations

import time

import pytest

import noria_py
from noria_py import errors as E

# a fixed offset the system's zone is not (the system keeps one offset all year on CI)
OTHER = "+05:30" if time.timezone != -(5 * 3600 + 1800) else "+03:00"
SYSTEM_OFFSET = "{}{:02d}:{:02d}".format(
    "-" if time.timezone > 0 else "+", abs(time.timezone) // 3600, abs(time.timezone) % 3600 // 60
)


def _setup(conn):
    conn.execute("CREATE TABLE z (id INT PRIMARY KEY, ts TIMESTAMP NULL, dt DATETIME)")
    conn.execute("INSERT INTO z VALUES (1, '2024-01-01 12:00:00', '2024-01-01 12:00:00')")


def test_embedded_refuses_timestamps_in_another_zone():
    conn = noria_py.connect()
    _setup(conn)
    assert conn.execute("SELECT ts FROM z WHERE id = ?", (1,)).fetchall()  # cached, fast path
    conn.execute(f"SET time_zone = '{OTHER}'")
    for sql, params in (
        ("SELECT ts FROM z WHERE id = ?", (1,)),
        ("SELECT * FROM z", ()),
        ("SELECT id FROM z WHERE ts > '2024-01-01'", ()),
        ("INSERT INTO z (id, dt) VALUES (2, NOW())", ()),
        ("UPDATE z SET dt = NOW() WHERE id = 1", ()),
    ):
        with pytest.raises(E.NotSupportedError, match="TIMESTAMP column under a session"):
            conn.execute(sql, params)
    # a DATETIME column answers in any zone, and DDL reads and writes no TIMESTAMP value
    assert conn.execute("SELECT dt FROM z WHERE id = ?", (1,)).fetchall()
    conn.execute("CREATE INDEX z_ts ON z (ts)")
    conn.execute("ALTER TABLE z ADD COLUMN note VARCHAR(10)")
    conn.execute(f"SET time_zone = '{SYSTEM_OFFSET}'")  # the system's own offset
    assert conn.execute("SELECT ts FROM z WHERE id = ?", (1,)).fetchall()
    conn.execute("SET time_zone = 'SYSTEM'")
    assert conn.execute("SELECT COUNT(*) FROM z").fetchall() == [(1,)]
    conn.close()


def test_the_wire_refuses_timestamps_in_another_zone():
    from . import wire_fixtures

    fx = wire_fixtures()
    srv = fx.start_server()
    try:
        c = srv.pymysql()
        with c.cursor() as cur:
            cur.execute("CREATE DATABASE zdb")
            cur.execute("USE zdb")
            cur.execute("CREATE TABLE z (id INT PRIMARY KEY, ts TIMESTAMP NULL, dt DATETIME)")
            cur.execute("INSERT INTO z VALUES (1, '2024-01-01 12:00:00', '2024-01-01 12:00:00')")
            for _ in range(2):  # the second read is a cached lookup
                cur.execute("SELECT ts FROM z WHERE id = 1")
                assert cur.fetchall()
            cur.execute(f"SET time_zone = '{OTHER}'")
            with pytest.raises(Exception, match="1235"):
                cur.execute("SELECT ts FROM z WHERE id = 1")
            cur.execute("SELECT dt FROM z WHERE id = 1")
            assert cur.fetchall()
        c.close()
    finally:
        assert fx.stop_server(srv) == 0


def test_a_bigint_unsigned_beyond_storage_is_refused_not_called_out_of_range():
    """MySQL stores 18446744073709551615 in a BIGINT UNSIGNED; base storage holds 64-bit
    signed integers, so the statement is 1235 (never 1264, which would say MySQL refuses it)."""
    conn = noria_py.connect()
    conn.execute("CREATE TABLE big (id INT PRIMARY KEY, u BIGINT UNSIGNED)")
    with pytest.raises(E.NotSupportedError, match="BIGINT UNSIGNED values above"):
        conn.execute("INSERT INTO big VALUES (1, 18446744073709551615)")
    conn.execute("INSERT INTO big VALUES (2, 9223372036854775807)")
    assert conn.execute("SELECT u FROM big").fetchall() == [(9223372036854775807,)]
    conn.close()

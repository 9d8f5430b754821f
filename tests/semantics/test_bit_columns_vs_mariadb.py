"""BIT(M) columns compared with MariaDB. A BIT(M) was a TINYINT: BIT(16) refused 300, BIT(1)
took 5, and the string '1' was stored as 1 where MySQL stores its byte (0x31). Now the column
keeps its width, a string is its bytes as a big-endian number, a number is rounded, and more than
M bits is 1406 (IGNORE: the largest value, 1264). Values are compared as numbers (`f + 0`): the
engine returns a BIT as its unsigned number where MySQL returns its bytes (see the README)."""

from __future__ import annotations

from decimal import Decimal

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_bit")
    yield conn
    conn.close()


def _outcome(cur, sql, params=None, theirs=False):
    try:
        cur.execute(sql, params) if params is not None else cur.execute(sql)
    except (pymysql.err.MySQLError, E.Error) as e:
        return ("error", e.args[0] if theirs else e.errno)
    rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
    return ("ok", rows)


def _compare(oracle, statements):
    conn = noria_py.connect()
    cur = conn.cursor()
    try:
        with oracle.cursor() as oc:
            oc.execute("DROP TABLE IF EXISTS bi, bk")
            for sql in statements:
                assert _outcome(cur, sql) == _outcome(oc, sql, theirs=True), sql
    finally:
        conn.close()


def test_bit_columns(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE bi (id INT PRIMARY KEY, f BIT(4), b BIT DEFAULT b'1', w BIT(16))",
            "INSERT IGNORE INTO bi (id, f) VALUES (1, 20), (2, 'AB'), (3, -1)",
            "INSERT INTO bi (id, f) VALUES (4, 1.5), (5, 2.5), (6, b'101'), (7, 0x0F)",
            "INSERT INTO bi (id, f) VALUES (8, 16)",
            "INSERT INTO bi (id, f) VALUES (9, -1)",
            "INSERT INTO bi (id, f, b) VALUES (10, '', 0)",
            "INSERT INTO bi (id, b) VALUES (11, 2)",
            "INSERT INTO bi (id, w) VALUES (12, 300), (13, '1'), (14, 'AB')",
            "INSERT INTO bi (id, w) VALUES (15, 'ABC')",
            "SELECT id, f + 0, b + 0, w + 0, HEX(w) FROM bi ORDER BY id",
            "SELECT id FROM bi WHERE f = 15 ORDER BY id",
            "SELECT COUNT(*) FROM bi WHERE b = b'1'",
            "UPDATE bi SET f = 'A' WHERE id = 4",
            "UPDATE bi SET f = 3 WHERE id = 5",
            "SELECT id, f + 0 FROM bi WHERE id IN (4, 5) ORDER BY id",
            "CREATE TABLE bk (id INT PRIMARY KEY, f BIT(0))",
            "INSERT INTO bk VALUES (1, 1)",
            "INSERT INTO bk VALUES (2, 2)",
            "SELECT id, f + 0 FROM bk ORDER BY id",
        ],
    )


def test_a_bit_default_survives_reopening(tmp_path):
    path = str(tmp_path / "bits.db")
    conn = noria_py.connect(path)
    conn.execute("CREATE TABLE bt (id INT PRIMARY KEY, h BIT DEFAULT b'1', k BIT(10) DEFAULT 5)")
    conn.execute("INSERT INTO bt (id) VALUES (1)")
    conn.commit()
    conn.close()
    conn = noria_py.connect(path)
    try:
        show = conn.execute("SHOW CREATE TABLE bt").fetchall()[0][1]
        assert "`h` bit(1) DEFAULT b'1'" in show and "`k` bit(10) DEFAULT b'101'" in show
        conn.execute("INSERT INTO bt (id) VALUES (2)")
        assert conn.execute("SELECT id, h + 0, k + 0 FROM bt ORDER BY id").fetchall() == [
            (1, 1, 5),
            (2, 1, 5),
        ]
    finally:
        conn.close()


def _literal(v) -> str:
    """``v`` as a SQL literal of its own type: a DOUBLE with an exponent, a DECIMAL with its
    point, a binary string in hex, a string quoted."""
    if isinstance(v, float):
        r = repr(v)
        return r if "e" in r else r + "e0"
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        return f"X'{v.hex()}'"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"
    return str(v)


_VALUE = st.one_of(
    st.integers(-3, 2**20),
    st.binary(max_size=3),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=2),
    st.decimals(-2, 300, places=1, allow_nan=False),
    st.floats(-2, 70000, allow_nan=False),
)


@settings(deadline=None, max_examples=40)
@given(
    width=st.integers(1, 24),
    values=st.lists(_VALUE, min_size=1, max_size=4),
    ignore=st.booleans(),
)
def test_drawn_values(oracle, width, values, ignore):
    conn = noria_py.connect()
    try:
        with oracle.cursor() as oc:
            oc.execute("DROP TABLE IF EXISTS bd")
            ddl = f"CREATE TABLE bd (id INT PRIMARY KEY, f BIT({width}))"
            oc.execute(ddl)
            conn.execute(ddl)
            verb = "INSERT IGNORE" if ignore else "INSERT"
            for i, v in enumerate(values):
                sql = f"{verb} INTO bd VALUES ({i}, {_literal(v)})"  # the same text to both
                got = _outcome(conn.cursor(), sql)
                want = _outcome(oc, sql, theirs=True)
                assert got[0] == want[0] and (got[0] == "ok" or got[1] == want[1]), (sql, got, want)
            q = "SELECT id, f + 0 FROM bd ORDER BY id"
            oc.execute(q)
            assert [tuple(r) for r in conn.execute(q).fetchall()] == [
                tuple(r) for r in oc.fetchall()
            ]
    finally:
        conn.close()

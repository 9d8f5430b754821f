"""The embedded connection's diagnostics area (noria_py.diagnostics): what SHOW WARNINGS,
SHOW ERRORS and the count variables read, the cursor's fast path clearing it, one area per
connection, and clear errors for what is not answered. MariaDB comparisons are in
tests/semantics/test_warnings_vs_mariadb.py."""

from __future__ import annotations

import pytest

import noria_py
from noria_py import errors as E

DUP = ("Warning", 1062, "Duplicate entry '1' for key 't.PRIMARY'")


@pytest.fixture
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    c.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    yield c
    c.close()


def _show(conn, sql="SHOW WARNINGS") -> list:
    return conn.execute(sql).fetchall()


def test_cursor_fast_path_clears(conn):
    cur = conn.cursor()
    for _ in range(3):  # a cached parameterized lookup: the cursor's fast path
        assert cur.execute("SELECT v FROM t WHERE id = ?", (2,)).fetchall() == [("b",)]
    conn.execute("INSERT IGNORE INTO t VALUES (1, 'x')")
    assert _show(conn) == [DUP]
    assert cur.execute("SELECT v FROM t WHERE id = ?", (1,)).fetchall() == [("a",)]
    assert _show(conn) == []


def test_limits_counts_and_parameters(conn):
    conn.execute("INSERT IGNORE INTO t VALUES (1, 'x'), (2, 'y'), (3, 'c')")
    dup2 = ("Warning", 1062, "Duplicate entry '2' for key 't.PRIMARY'")
    assert _show(conn) == [DUP, dup2]
    assert _show(conn, "SHOW WARNINGS LIMIT 1") == [DUP]
    assert _show(conn, "SHOW WARNINGS LIMIT 1 OFFSET 1") == [dup2]
    assert conn.execute("SHOW WARNINGS LIMIT ?, ?", (1, 5)).fetchall() == [dup2]
    assert _show(conn, "SHOW ERRORS") == []
    assert _show(conn, "SHOW COUNT(*) WARNINGS") == [(2,)]
    cur = conn.execute("SELECT @@warning_count AS w, @@error_count + ?", (10,))
    assert cur.fetchall() == [(2, 10)]
    assert [d[0] for d in cur.description] == ["w", "@@error_count + ?"]
    with pytest.raises(E.ProgrammingError) as info:
        conn.execute("SHOW COUNT(*) WARNINGS LIMIT 1")
    assert info.value.errno == 1064
    assert _show(conn) == [("Error", 1064, info.value.msg)]


def test_one_area_per_connection(conn):
    other = noria_py.connect()
    conn.execute("INSERT IGNORE INTO t VALUES (1, 'x')")
    assert _show(other) == []
    assert _show(conn) == [DUP]
    other.close()


def test_executemany_insert_ignore(conn):
    conn.executemany("INSERT IGNORE INTO t VALUES (?, ?)", [(1, "x"), (5, "e")])
    assert _show(conn) == [DUP]


def test_what_is_refused(conn):
    with pytest.raises(E.NotSupportedError) as info:
        conn.execute("SELECT @@warning_count FROM t")
    assert info.value.errno == 1235
    assert "@@" in info.value.msg and "SQLite" not in info.value.msg
    # system variables without FROM are the session's (as over the wire)
    assert (
        conn.execute("SELECT @@version").fetchall() == conn.execute("SELECT VERSION()").fetchall()
    )
    with pytest.raises(E.Error) as info:
        conn.execute("SELECT @@global.error_count")
    assert info.value.errno == 1238
    assert _show(conn, "SHOW ERRORS") == [("Error", 1238, info.value.msg)]


def test_a_select_from_information_schema_clears(conn):
    conn.execute("INSERT IGNORE INTO t VALUES (1, 'x')")
    assert _show(conn) == [DUP]
    rows = conn.execute(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 't'"
        " ORDER BY ORDINAL_POSITION"
    ).fetchall()
    assert rows == [("id",), ("v",)]
    assert _show(conn) == []

"""Named cases of IGNORE's adjusted values, each compared with MariaDB (the examples the
differential test ``test_ignore_vs_mariadb.py`` grew from, and the paths it does not draw):
the statements of the issue, executemany (its rows numbered through the parameter sets, as
pymysql's one multi-row INSERT numbers them), UPDATE IGNORE skipping the rows a key refuses,
a cached view read before and after, and what noria_py refuses instead of storing a different
value (the zero date, BIGINT UNSIGNED above 2^63 - 1)."""

from __future__ import annotations

import re

import pytest

import noria_py
from noria_py import errors as E

DDL = (
    "CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL, s VARCHAR(3), d DECIMAL(5,2), "
    "dt DATE, ti TINYINT)"
)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_ignore_named")
    yield conn
    conn.close()


def _norm(rows) -> list:
    return [
        (
            lv,
            int(code),
            re.sub(r"`[^`]+`\.(`[^`]+`\.`)", r"\1", re.sub(r"for key '[^'.]*\.", "for key '", m)),
        )
        for lv, code, m in rows
    ]


def _both(oracle, setup: list[str]):
    conn = noria_py.connect()
    ours = conn.cursor()
    with oracle.cursor() as oc:
        oc.execute("DROP TABLE IF EXISTS t")
    for s in setup:
        ours.execute(s)
        with oracle.cursor() as oc:
            oc.execute(s)
    return conn, ours


def _same(oracle, ours, sql: str, params=None, many: bool = False) -> None:
    """``sql`` on both: the same affected rows, warnings and table."""
    run = "executemany" if many else "execute"
    with oracle.cursor() as oc:
        getattr(oc, run)(sql if params is None else sql.replace("?", "%s"), params)
        want_n = oc.rowcount
        oc.execute("SHOW WARNINGS")
        want_w = _norm(oc.fetchall())
        oc.execute("SELECT * FROM t ORDER BY id")
        want_rows = [tuple(r) for r in oc.fetchall()]
    if params is None:
        getattr(ours, run)(sql)
    else:
        getattr(ours, run)(sql, params)
    assert ours.rowcount == want_n, sql
    assert _norm(ours.execute("SHOW WARNINGS").fetchall()) == want_w, sql
    assert ours.execute("SELECT * FROM t ORDER BY id").fetchall() == want_rows, sql


def test_the_issues_statements(oracle):
    conn, ours = _both(oracle, [DDL])
    try:
        for k in (1, 3):  # a cached lookup, read before the writes
            assert ours.execute("SELECT n, s, ti FROM t WHERE id = ?", (k,)).fetchall() == []
        _same(
            oracle,
            ours,
            "INSERT IGNORE INTO t VALUES (1, 'abc', 'abcdef', 1234.567, '2020-01-01', 1)",
        )
        _same(
            oracle, ours, "INSERT IGNORE INTO t VALUES (2, '12abc', 'x', 99999, '2020-12-05x', 300)"
        )
        _same(oracle, ours, "INSERT IGNORE INTO t VALUES (3, NULL, 'x', 'zz', NULL, -300)")
        _same(oracle, ours, "INSERT IGNORE INTO t (id) VALUES (4)")
        _same(oracle, ours, "UPDATE IGNORE t SET ti = 1000 WHERE id = 1")
        # the cached lookups are exact after the adjusted writes
        assert ours.execute("SELECT n, s, ti FROM t WHERE id = ?", (1,)).fetchall() == [
            (0, "abc", 127)
        ]
        assert ours.execute("SELECT n, s, ti FROM t WHERE id = ?", (3,)).fetchall() == [
            (0, "x", -128)
        ]
        # without IGNORE an error, worded as MariaDB's, naming the row
        with oracle.cursor() as oc:
            with pytest.raises(Exception) as theirs:
                oc.execute(
                    "INSERT INTO t VALUES (5, 1, 'x', 1, NULL, 1), (6, 'abc', 'x', 1, NULL, 1)"
                )
        with pytest.raises(E.DataError) as mine:
            ours.execute(
                "INSERT INTO t VALUES (5, 1, 'x', 1, NULL, 1), (6, 'abc', 'x', 1, NULL, 1)"
            )
        assert mine.value.errno == theirs.value.args[0] == 1366
        assert _norm([("", 0, mine.value.msg)]) == _norm([("", 0, theirs.value.args[1])])
        assert mine.value.msg.endswith("at row 2")
    finally:
        conn.close()


def test_executemany_numbers_rows_through_the_parameter_sets(oracle):
    conn, ours = _both(oracle, [DDL, "INSERT INTO t VALUES (2, 0, 'a', 0, NULL, 0)"])
    try:
        rows = [(1, "7x", "long", "1.005"), (2, "8", "ok", "2"), (3, "", "abcd", "1e9")]
        _same(oracle, ours, "INSERT IGNORE INTO t (id, n, s, d) VALUES (?, ?, ?, ?)", rows, True)
    finally:
        conn.close()


def test_update_ignore_skips_the_rows_a_key_refuses(oracle):
    setup = [DDL, "INSERT INTO t (id, n, ti) VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3), (5, 5, 5)"]
    conn, ours = _both(oracle, setup)
    try:
        assert ours.execute("SELECT COUNT(*), SUM(ti) FROM t").fetchall() == [(4, 11)]
        _same(oracle, ours, "UPDATE IGNORE t SET id = id + 1, ti = ti * 100")
        _same(oracle, ours, "UPDATE IGNORE t SET n = NULL, s = 'abcd' WHERE id >= 3")
        got = ours.execute("SELECT COUNT(*), SUM(ti) FROM t").fetchall()
        with oracle.cursor() as oc:
            oc.execute("SELECT COUNT(*), SUM(ti) FROM t")
            assert [tuple(r) for r in oc.fetchall()] == [(got[0][0], got[0][1])]
    finally:
        conn.close()


def test_insert_ignore_select(oracle):
    setup = [DDL, "CREATE TABLE src (k INT, v VARCHAR(10))"]
    with oracle.cursor() as oc:
        oc.execute("DROP TABLE IF EXISTS src")
    conn, ours = _both(oracle, setup)
    try:
        for s in ("INSERT INTO src VALUES (1, 'abc'), (2, NULL), (3, '99999')",):
            ours.execute(s)
            with oracle.cursor() as oc:
                oc.execute(s)
        _same(oracle, ours, "INSERT IGNORE INTO t (id, n, ti) SELECT k, v, v FROM src ORDER BY k")
    finally:
        conn.close()


def test_zero_date_and_big_unsigned_are_refused_not_changed():
    conn = noria_py.connect()
    cur = conn.cursor()
    try:
        cur.execute(DDL)
        cur.execute("INSERT INTO t (id, n) VALUES (1, 1)")
        assert cur.execute("SELECT COUNT(*) FROM t WHERE n = ?", (1,)).fetchall() == [(1,)]
        for sql in (
            "INSERT IGNORE INTO t (id, n, dt) VALUES (2, 1, '2020-13-45')",
            "UPDATE IGNORE t SET dt = 'not a date'",
        ):
            with pytest.raises(E.NotSupportedError, match="zero date") as info:
                cur.execute(sql)
            assert info.value.errno == 1235
        # a row a key keeps out is skipped as MySQL skips it: its zero date is never stored
        cur.execute("INSERT IGNORE INTO t (id, n, dt) VALUES (1, 1, '2020-13-45')")
        assert cur.rowcount == 0
        assert [w[1] for w in cur.execute("SHOW WARNINGS").fetchall()] == [1265, 1062]
        cur.execute("CREATE TABLE u (id INT PRIMARY KEY, b BIGINT UNSIGNED)")
        with pytest.raises(E.NotSupportedError) as info:
            cur.execute("INSERT IGNORE INTO u VALUES (1, 1e30)")
        assert info.value.errno == 1235 and "BIGINT UNSIGNED" in info.value.msg
        assert cur.execute("SELECT * FROM t").fetchall() == [(1, 1, None, None, None, None)]
        assert cur.execute("SELECT COUNT(*) FROM t WHERE n = ?", (1,)).fetchall() == [(1,)]
        assert cur.execute("SELECT * FROM u").fetchall() == []
    finally:
        conn.close()


def test_update_warnings_number_the_rows_mariadb_reads(oracle):
    """A condition on no indexed column: MariaDB reads every row, and numbers its warnings
    (and notes, and a strict error) by the row's place in the table; on the key, by the rows
    the condition finds."""
    setup = [DDL, "INSERT INTO t (id, n, d) VALUES (1, 1, 1), (2, 2, 2), (3, 0, 3), (4, 0, 4)"]
    conn, ours = _both(oracle, setup)
    try:
        _same(oracle, ours, "UPDATE IGNORE t SET ti = 1000 WHERE n = 0")
        _same(oracle, ours, "UPDATE IGNORE t SET ti = -1000 WHERE id > 2")
        _same(oracle, ours, "UPDATE t SET d = d + 0.001 WHERE n = 0")
        with oracle.cursor() as oc:
            with pytest.raises(Exception) as theirs:
                oc.execute("UPDATE t SET s = 'abcd' WHERE n = 0")
        with pytest.raises(E.DataError) as mine:
            ours.execute("UPDATE t SET s = 'abcd' WHERE n = 0")
        assert (mine.value.errno, mine.value.msg) == tuple(theirs.value.args)
        assert mine.value.msg.endswith("at row 3")
    finally:
        conn.close()

"""The diagnostics area over the wire: the OK packet's warning count, ``SHOW WARNINGS`` (also
through pymysql's ``show_warnings()``), ``SHOW ERRORS``, ``@@warning_count`` and
``@@error_count`` agree; each client connection has its own; a SELECT from a table answered by
the server's fast paths (a remembered lookup plan for a client-side-bound query, a prepared
statement's cached lookup) clears it as any other does."""

from __future__ import annotations

import pymysql
import pytest

pytestmark = pytest.mark.wire


def _setup(cur, table: str) -> None:
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, v VARCHAR(10))")
    cur.execute(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')")


def _warnings(conn) -> list:
    with conn.cursor() as cur:
        cur.execute("SHOW WARNINGS")
        return [tuple(r) for r in cur.fetchall()]


def test_insert_ignore_warnings_and_errors(server):
    conn = server.pymysql()
    cur = conn.cursor()
    _setup(cur, "wn_a")
    assert cur.execute("INSERT IGNORE INTO wn_a VALUES (1, 'x'), (3, 'c'), (2, 'y')") == 1
    assert conn._result.warning_count == 2  # the OK packet's count
    want = [
        ("Warning", 1062, "Duplicate entry '1' for key 'wn_a.PRIMARY'"),
        ("Warning", 1062, "Duplicate entry '2' for key 'wn_a.PRIMARY'"),
    ]
    assert [tuple(r) for r in conn.show_warnings()] == want
    assert _warnings(conn) == want  # reading them changes nothing
    cur.execute("SELECT @@warning_count, @@error_count, @@session.warning_count + 0")
    assert cur.fetchall() == ((2, 0, 2),)
    assert [d[0] for d in cur.description] == [
        "@@warning_count",
        "@@error_count",
        "@@session.warning_count + 0",
    ]
    cur.execute("SHOW COUNT(*) WARNINGS")
    assert cur.fetchall() == ((2,),) and cur.description[0][0] == "@@session.warning_count"
    cur.execute("SHOW WARNINGS LIMIT 1, 1")
    assert [tuple(r) for r in cur.fetchall()] == want[1:]
    cur.execute("SELECT 1")  # no table: the warnings stay (MySQL and MariaDB)
    cur.execute("SET @x = 1")
    assert _warnings(conn) == want
    cur.execute("SHOW TABLES")  # a statement that uses tables clears them
    assert _warnings(conn) == []

    with pytest.raises(pymysql.err.ProgrammingError):
        cur.execute("SELECT * FROM wn_nope")
    cur.execute("SHOW ERRORS")
    errs = cur.fetchall()
    assert len(errs) == 1 and errs[0][:2] == ("Error", 1146)
    assert _warnings(conn) == [tuple(errs[0])]
    cur.execute("SELECT @@warning_count, @@error_count")
    assert cur.fetchall() == ((1, 1),)
    with pytest.raises(pymysql.err.OperationalError) as info:
        cur.execute("SET @@warning_count = 5")
    assert info.value.args[0] == 1238
    cur.execute("SHOW COUNT(*) ERRORS")
    assert cur.fetchall() == ((1,),)
    conn.close()


def test_each_connection_has_its_own(server):
    a, b = server.pymysql(), server.pymysql()
    ca, cb = a.cursor(), b.cursor()
    _setup(ca, "wn_b")
    ca.execute("INSERT IGNORE INTO wn_b VALUES (1, 'x')")
    assert len(_warnings(a)) == 1
    assert _warnings(b) == []
    cb.execute("SELECT @@warning_count")
    assert cb.fetchall() == ((0,),)
    a.close()
    b.close()


def test_fast_path_lookup_clears_warnings(server):
    conn = server.pymysql()
    cur = conn.cursor()
    _setup(cur, "wn_c")
    for _ in range(3):  # the lookup's plan is remembered: later runs take the fast path
        cur.execute("SELECT v FROM wn_c WHERE id = %s", (1,))
        assert cur.fetchall() == (("a",),)
    for key in (1, 2):
        cur.execute("INSERT IGNORE INTO wn_c VALUES (1, 'dup')")
        assert conn._result.warning_count == 1
        assert len(_warnings(conn)) == 1
        cur.execute("SELECT v FROM wn_c WHERE id = %s", (key,))
        assert conn._result.warning_count == 0  # the EOF packet's count
        assert _warnings(conn) == []
        cur.execute("SELECT @@warning_count")
        assert cur.fetchall() == ((0,),)
    conn.close()


def test_prepared_statement_fast_path_clears_warnings(server):
    conn = server.connector()
    cur = conn.cursor()
    _setup(cur, "wn_d")
    ps = conn.cursor(prepared=True)
    for _ in range(3):
        ps.execute("SELECT v FROM wn_d WHERE id = ?", (2,))
        assert ps.fetchall() == [("b",)]
    cur.execute("INSERT IGNORE INTO wn_d VALUES (2, 'dup'), (9, 'i')")
    assert cur.warning_count == 1
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == [("Warning", 1062, "Duplicate entry '2' for key 'wn_d.PRIMARY'")]
    ps.execute("SELECT v FROM wn_d WHERE id = ?", (9,))
    assert ps.fetchall() == [("i",)]
    cur.execute("SHOW WARNINGS")
    assert cur.fetchall() == []
    conn.close()


def test_load_data_local_warnings_match_the_ok_packet(server, tmp_path):
    path = tmp_path / "rows.tsv"
    path.write_text("1\tdup\n7\tg\textra\n8\th\n", encoding="utf-8")
    conn = server.pymysql(local_infile=True)
    cur = conn.cursor()
    _setup(cur, "wn_e")
    assert cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE wn_e") == 2
    assert conn._result.warning_count == 2
    assert [tuple(r) for r in conn.show_warnings()] == [
        ("Warning", 1062, "Duplicate entry '1' for key 'wn_e.PRIMARY'"),
        (
            "Warning",
            1262,
            "Row 2 was truncated; it contained more data than there were input columns",
        ),
    ]
    cur.execute("SELECT COUNT(*) FROM wn_e")
    assert cur.fetchall() == ((4,),)
    assert _warnings(conn) == []
    conn.close()


def test_adjusted_values_over_the_wire_match_mariadb(server, mariadb_oracle):
    """INSERT IGNORE, its executemany and UPDATE IGNORE store what does not fit as MySQL
    adjusts it: the affected rows, the OK packet's warning count, SHOW WARNINGS and the rows
    are MariaDB's (the database's name left out of 1366's column); a cached lookup read before
    sees the adjusted rows; strict mode's error is MariaDB's, naming the row."""
    import re

    def norm(rows):
        m = [re.sub(r"for key '[^'.]*\.", "for key '", m) for _lv, _c, m in rows]  # MySQL 8's
        m = [re.sub(r"`[^`]+`\.(`[^`]+`\.`)", r"\1", x) for x in m]
        return [(lv, int(c), x) for (lv, c, _m), x in zip(rows, m)]

    steps = [
        (
            "INSERT IGNORE INTO wn_adj VALUES (1, 'abc', 'abcdef', 1234.567), (2, '7x', NULL, 'z')",
            None,
        ),
        ("INSERT IGNORE INTO wn_adj (id, s) VALUES (%s, %s)", [(3, "long text"), (1, "dup")]),
        ("UPDATE IGNORE wn_adj SET n = 1e12, s = 'four' WHERE id >= 2", None),
        ("INSERT INTO wn_adj VALUES (5, 1, 'a', 1), (6, 'bad', 'b', 2)", None),
    ]

    def run(conn):
        out = []
        cur = conn.cursor()
        cur.execute("DROP TABLE IF EXISTS wn_adj")
        cur.execute(
            "CREATE TABLE wn_adj (id INT PRIMARY KEY, n INT NOT NULL, s VARCHAR(3), d DECIMAL(5,2))"
        )
        cur.execute("SELECT n, s FROM wn_adj WHERE id = %s", (2,))  # cached, before
        assert cur.fetchall() == ()
        for sql, params in steps:
            try:
                if isinstance(params, list):
                    n = cur.executemany(sql, params)
                else:
                    n = cur.execute(sql)
                got = (n, conn._result.warning_count, norm(conn.show_warnings()))
            except pymysql.err.MySQLError as e:
                got = ("error", e.args[0], norm([("Error", e.args[0], e.args[1])]))
            cur.execute("SELECT * FROM wn_adj ORDER BY id")
            out.append((got, cur.fetchall()))
        cur.execute("SELECT n, s FROM wn_adj WHERE id = %s", (2,))
        out.append(cur.fetchall())
        return out

    oracle = mariadb_oracle.connect()
    try:
        want = run(oracle)
    finally:
        oracle.close()
    assert want[0][0][:2] == (2, 5) and want[-1] == ((2147483647, "fou"),)
    conn = server.pymysql()
    try:
        assert run(conn) == want
    finally:
        conn.close()

"""Session statements, embedded and over the wire, compared with MariaDB.

A MySQL application sets session variables, reads system variables inside expressions and
uses user variables (``SET @x = 5`` ... ``WHERE id = @x``). The wire server's session answers
these; the embedded API answers them with the same session code on the connection's own
transaction. Each script runs on MariaDB, on an embedded connection and over the wire; the
answers that do not depend on the server's identity must be equal, value and type.
"""

from __future__ import annotations

import datetime as dt

import pymysql
import pytest

import noria_py
from noria_py import errors as E

SETUP = [
    "DROP TABLE IF EXISTS sv",
    "CREATE TABLE sv (id INT PRIMARY KEY, v INT, s VARCHAR(10))",
    "INSERT INTO sv VALUES (5, 50, 'five'), (6, 60, 'six')",
    "DROP TABLE IF EXISTS sa",
    "CREATE TABLE sa (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
]

# (statement, compare its rows?) — statements whose rows name the server are run, not compared
SCRIPT = [
    ("SET NAMES utf8mb4", False),
    ("SET @x = 5", False),
    ("SELECT @x, @x + 1, @nosuch, @x * 2.5", True),
    ("SELECT v FROM sv WHERE id = @x", True),
    ("SELECT id, v FROM sv WHERE id > @x OR id = @nosuch ORDER BY id", True),
    ("SET @y = 'six', @z = 7", False),
    ("SELECT id FROM sv WHERE s = @y", True),
    ("INSERT INTO sv VALUES (@z, @x * 10, @y)", False),
    ("SELECT * FROM sv ORDER BY id", True),
    # SELECT @v := expr (no FROM): assigned in order (a variable read in the statement that
    # assigns it is typed by MariaDB at the statement's start: not compared)
    ("SELECT @a := 5, @c := 'txt'", True),
    ("SELECT @a, @a + 1, @c", True),
    ("SELECT @b := @a * 2 AS twice, @d := NULL", True),
    ("SELECT @b, @d IS NULL", True),
    ("SELECT v FROM sv WHERE id = @a", True),
    ("SELECT @a := @a + 1 FROM DUAL", True),
    ("SELECT @a", True),
    ("SELECT @@autocommit, @@session.autocommit + 0", True),
    ("SET autocommit = 0", False),
    ("SELECT @@autocommit", True),
    ("INSERT INTO sv VALUES (8, 80, 'eight')", False),
    ("ROLLBACK", False),
    ("SET autocommit = 1", False),
    ("SELECT COUNT(*) FROM sv", True),
    ("SET time_zone = '+02:00'", False),
    ("SELECT @@time_zone, TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())", True),
    ("SET SESSION time_zone = '-05:00'", False),
    ("SELECT TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())", True),
    ("SELECT @@warning_count, @@error_count", True),
    ("SELECT @@max_allowed_packet > 0, @@character_set_client", True),
    # LAST_INSERT_ID(): the first value the last INSERT that generated any generated
    ("INSERT INTO sa (v) VALUES (1)", False),
    ("SELECT LAST_INSERT_ID()", True),
    ("INSERT INTO sa (v) VALUES (2), (3)", False),
    ("SELECT LAST_INSERT_ID(), LAST_INSERT_ID() + 1", True),
    ("INSERT INTO sa (id, v) VALUES (10, 4)", False),
    ("SELECT LAST_INSERT_ID()", True),
    ("UPDATE sa SET v = v + 1 WHERE id > 1", False),
    ("SELECT ROW_COUNT()", True),
    ("SELECT ROW_COUNT()", True),
    ("INSERT INTO sa (v) VALUES (@x)", False),
    ("SELECT LAST_INSERT_ID(), @x, ROW_COUNT()", True),
    ("SELECT id, v FROM sa WHERE id = LAST_INSERT_ID()", True),
    # an INSERT of constants runs without the session's values bound, one that calls a
    # function with them (each run twice: the second run is of the prepared statement)
    ("INSERT INTO sa (v) VALUES (7)", False),
    ("INSERT INTO sa (v) VALUES (ROW_COUNT() + 10)", False),
    ("INSERT INTO sa (v) VALUES (ROW_COUNT() + 10)", False),
    ("INSERT INTO sa (v) VALUES (7)", False),
    ("INSERT INTO sa (v) VALUES (LAST_INSERT_ID())", False),
    ("INSERT INTO sa (v) VALUES (LAST_INSERT_ID())", False),
    ("INSERT INTO sa (id, v) VALUES (30, 8)", False),
    ("INSERT INTO sa VALUES (NULL, ROW_COUNT()), (NULL, LAST_INSERT_ID())", False),
    ("INSERT INTO sa VALUES (NULL, ROW_COUNT()), (NULL, LAST_INSERT_ID())", False),
    ("SELECT id, v FROM sa WHERE id > 10 ORDER BY id", True),
    ("SELECT LAST_INSERT_ID(), ROW_COUNT()", True),
]


# FOUND_ROWS(): the rows the last SELECT returned, or found before its LIMIT with
# SQL_CALC_FOUND_ROWS; writes leave it as it is. Each statement runs twice where a cached
# statement could keep a value it computed the first time.
FOUND_ROWS_SCRIPT = [
    ("SELECT SQL_CALC_FOUND_ROWS id FROM sv WHERE v > 10 ORDER BY id LIMIT 1", True),
    ("SELECT FOUND_ROWS()", True),
    ("SELECT FOUND_ROWS()", True),
    ("SELECT id FROM sv WHERE id = 5", True),
    ("SELECT FOUND_ROWS() + 1, FOUND_ROWS()", True),
    ("SELECT SQL_CALC_FOUND_ROWS id FROM sv ORDER BY id LIMIT 1 OFFSET 1", True),
    ("SELECT FOUND_ROWS() + 1, FOUND_ROWS()", True),
    ("INSERT INTO sa (v) VALUES (1)", False),
    ("SELECT FOUND_ROWS(), LAST_INSERT_ID() + 1", True),
    ("INSERT INTO sa (v) VALUES (2)", False),
    ("SELECT FOUND_ROWS(), LAST_INSERT_ID() + 1", True),
    ("SELECT SQL_CALC_FOUND_ROWS v, COUNT(*) FROM sa GROUP BY v ORDER BY v LIMIT 1", True),
    ("SELECT FOUND_ROWS()", True),
    ("SELECT SQL_CALC_FOUND_ROWS id FROM sv WHERE id > 100 LIMIT 2", True),
    ("SELECT FOUND_ROWS()", True),
    ("SELECT SQL_CALC_FOUND_ROWS id FROM sv UNION SELECT 7 LIMIT 1", True),
    ("SELECT FOUND_ROWS()", True),
    ("SELECT id FROM sv WHERE id = FOUND_ROWS() + 3", True),
]


def _mariadb(oracle, script):
    conn = oracle.connect(database="oracle")
    out = []
    try:
        with conn.cursor() as cur:
            for sql in SETUP:
                cur.execute(sql)
            for sql, compare in script:
                cur.execute(sql)
                rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
                out.append(rows if compare else None)
        conn.commit()
    finally:
        conn.close()
    return out


def _embedded(script):
    conn = noria_py.connect()
    out = []
    try:
        for sql in SETUP:
            conn.execute(sql)
        for sql, compare in script:
            cur = conn.execute(sql)
            rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
            out.append(rows if compare else None)
    finally:
        conn.close()
    return out


def _wire(server, script):
    conn = server.pymysql()
    out = []
    try:
        with conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS sessiondb")
            cur.execute("CREATE DATABASE sessiondb")
            cur.execute("USE sessiondb")
            for sql in SETUP:
                cur.execute(sql)
            for sql, compare in script:
                cur.execute(sql)
                rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
                out.append(rows if compare else None)
    finally:
        conn.close()
    return out


@pytest.fixture(scope="module")
def server():
    from . import wire_fixtures

    fx = wire_fixtures()
    srv = fx.start_server()
    yield srv
    assert fx.stop_server(srv) == 0


def _diff(want, got, script) -> list[str]:
    bad = []
    for (sql, _c), w, g in zip(script, want, got):
        if w != g or [list(map(type, r)) for r in w or []] != [list(map(type, r)) for r in g or []]:
            bad.append(f"{sql}\n   MariaDB {w!r}\n   noria   {g!r}")
    return bad


SCRIPTS = pytest.mark.parametrize(
    "script", [SCRIPT, FOUND_ROWS_SCRIPT], ids=["session", "found_rows"]
)


@SCRIPTS
def test_session_script_embedded_matches_mariadb(mariadb_oracle, script):
    want = _mariadb(mariadb_oracle, script)
    problems = _diff(want, _embedded(script), script)
    assert not problems, "\n".join(problems)


@SCRIPTS
def test_session_script_over_the_wire_matches_mariadb(mariadb_oracle, server, script):
    want = _mariadb(mariadb_oracle, script)
    problems = _diff(want, _wire(server, script), script)
    assert not problems, "\n".join(problems)


def test_assigning_a_user_variable_in_a_query_over_tables_is_refused(server):
    # MySQL numbers the rows as it reads them (@n := @n + 1 ... FROM t): refused, embedded
    # and over the wire, never answered with a value computed once
    conn = noria_py.connect()
    conn.execute("CREATE TABLE rn (id INT PRIMARY KEY)")
    conn.execute("SET @n = 0")
    with pytest.raises(noria_py.Error) as err:
        conn.execute("SELECT @n := @n + 1 AS rn, id FROM rn ORDER BY id")
    assert err.value.errno == 1235
    assert conn.execute("SELECT @n").fetchall() == [(0,)]
    wire = server.pymysql()
    with wire.cursor() as cur:
        with pytest.raises(pymysql.err.NotSupportedError) as werr:
            cur.execute("SELECT @n := @n + 1 AS rn FROM information_schema.tables")
        assert werr.value.args[0] == 1235
        cur.execute("SELECT 1")  # the connection goes on
        assert cur.fetchall() == ((1,),)
    wire.close()


def test_session_functions_are_not_folded_into_a_cached_statement():
    """``LAST_INSERT_ID() + 1`` or ``RAND() + 1`` without FROM is evaluated at each run: a
    function whose value changes is no constant, even with no arguments."""
    conn = noria_py.connect()
    conn.execute("CREATE TABLE ai (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
    conn.execute("INSERT INTO ai (v) VALUES (1)")
    assert conn.execute("SELECT LAST_INSERT_ID() + 1").fetchall() == [(2,)]
    conn.execute("INSERT INTO ai (v) VALUES (2)")
    assert conn.execute("SELECT LAST_INSERT_ID() + 1").fetchall() == [(3,)]
    draws = {conn.execute("SELECT RAND() + 1").fetchall()[0][0] for _ in range(5)}
    assert len(draws) > 1
    conn.close()


def test_embedded_system_variables_and_errors():
    conn = noria_py.connect()
    try:
        version = conn.execute("SELECT @@version, VERSION()").fetchall()[0]
        assert version[0] == version[1]
        assert "NO_ZERO_DATE" in conn.execute("SELECT @@sql_mode").fetchall()[0][0]
        rows = conn.execute("SHOW VARIABLES LIKE 'autocommit'").fetchall()
        assert rows == [("autocommit", "ON")]
        with pytest.raises(E.Error) as info:
            conn.execute("SELECT @@no_such_variable")
        assert info.value.errno == 1193
        with pytest.raises(E.Error) as info:
            conn.execute("SET @@version = 'x'")
        assert info.value.errno == 1238
        # the session's time zone reaches NOW() in a query over a table, too
        conn.execute("CREATE TABLE tz (id INT PRIMARY KEY)")
        conn.execute("INSERT INTO tz VALUES (1)")
        conn.execute("SET time_zone = '+03:00'")
        (diff,) = conn.execute(
            "SELECT TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW()) FROM tz WHERE id = 1"
        ).fetchall()[0]
        assert diff == 3
        # and does not leak to another connection on the same thread
        other = noria_py.connect()
        (d2,) = other.execute("SELECT TIMESTAMPDIFF(HOUR, UTC_TIMESTAMP(), NOW())").fetchall()[0]
        local = round(
            (dt.datetime.now() - dt.datetime.now(dt.UTC).replace(tzinfo=None)).total_seconds()
            / 3600
        )
        assert d2 == local
        other.close()
    finally:
        conn.close()


def test_user_variables_over_pymysql_placeholders(server):
    conn = server.pymysql()
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS uvdb")
            cur.execute("USE uvdb")
            cur.execute("CREATE TABLE IF NOT EXISTS uv (id INT PRIMARY KEY, v INT)")
            cur.execute("INSERT INTO uv VALUES (1, 10), (2, 20)")
            cur.execute("SET @k = %s", (2,))
            cur.execute("SELECT v FROM uv WHERE id = @k")
            assert cur.fetchall() == ((20,),)
    except pymysql.MySQLError:
        raise
    finally:
        conn.close()

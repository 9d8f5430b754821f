"""Statements compared with MariaDB one by one (outcome, SHOW WARNINGS, the table after):
comments before a statement's first word (drivers and tools put them there: REPLACE, UPDATE
IGNORE and LOAD DATA read their first words themselves), and numbers with a fraction written
into ENUM and SET columns (MySQL truncates them to a position, or to a SET's mask)."""

from __future__ import annotations

import os
import tempfile

import pymysql
import pytest

import noria_py
from noria_py import errors as E


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_edges", local_infile=True)
    yield conn
    conn.close()


def _outcome_oracle(cur, sql):
    try:
        cur.execute(sql)
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0])
    rows = [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount
    cur.execute("SHOW WARNINGS")
    return ("ok", rows, [tuple(w) for w in cur.fetchall()])


def _outcome_noria(cur, sql):
    try:
        cur.execute(sql)
    except E.Error as e:
        return ("error", e.errno)
    rows = [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount
    return ("ok", rows, [tuple(w) for w in cur.execute("SHOW WARNINGS").fetchall()])


def _compare(oracle, statements):
    conn = noria_py.connect()
    cur = conn.cursor()
    try:
        with oracle.cursor() as oc:
            oc.execute("DROP TABLE IF EXISTS t")
            for sql in statements:
                assert _outcome_noria(cur, sql) == _outcome_oracle(oc, sql), sql
    finally:
        conn.close()


def test_comments_before_the_first_word(oracle):
    fd, path = tempfile.mkstemp(suffix=".tsv")
    with os.fdopen(fd, "w") as f:
        f.write("7\t70\n8\t80\n")
    os.chmod(path, 0o644)
    try:
        _compare(
            oracle,
            [
                "CREATE TABLE t (id INT PRIMARY KEY, v TINYINT)",
                "/* app=x */ REPLACE INTO t VALUES (1, 2)",
                "-- note\nREPLACE t VALUES (2, 3)",
                "# note\n  REPLACE LOW_PRIORITY INTO t VALUES (3, 4)",
                "/* a */ /* b */ UPDATE IGNORE t SET v = v * 100",
                "/* c */ UPDATE t SET v = 1 WHERE id = 3",
                f"/* d */ LOAD DATA LOCAL INFILE '{path}' INTO TABLE t",
                "/* e */ SELECT * FROM t ORDER BY id",
            ],
        )
    finally:
        os.unlink(path)


def test_numbers_with_a_fraction_into_enum_and_set(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), s SET('x','y'))",
            "INSERT IGNORE INTO t VALUES (1, 1.4, 1.4), (2, 1.6, 3.9), (3, '1.4', '3.5')",
            "INSERT IGNORE INTO t VALUES (4, 2.5, 2.5), (5, 0.4, 0.4), (6, -0.5, -0.5)",
            "INSERT IGNORE INTO t VALUES (7, 2.99e0, 1.5e0), (8, -1.5, 4.5)",
            "INSERT INTO t VALUES (9, 1.6, 1.2)",
            "INSERT INTO t VALUES (10, 0.6, 1)",
            "INSERT INTO t VALUES (11, 1, 7.2)",
            "UPDATE IGNORE t SET e = 2.7 WHERE id = 1",
            "SELECT * FROM t ORDER BY id",
        ],
    )


def test_replace_of_a_row_the_statement_itself_inserted(oracle):
    """REPLACE whose later row replaces an earlier one of the same statement: the views (a
    sorted one, a grouped one) get the statement's net change."""
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, c0 BIGINT, u INT UNIQUE)",
            "SELECT * FROM t ORDER BY id",
            "SELECT c0, COUNT(*) FROM t GROUP BY c0 ORDER BY c0",
            "INSERT INTO t (id) VALUES (1)",
            "REPLACE INTO t (id) VALUES (1), (1)",
            "SELECT * FROM t ORDER BY id",
            "REPLACE INTO t (id, c0, u) VALUES (2, 5, 7), (3, 6, 7), (2, 8, 9), (4, 1, 9)",
            "SELECT * FROM t ORDER BY id",
            "SELECT c0, COUNT(*) FROM t GROUP BY c0 ORDER BY c0",
        ],
    )


def test_a_double_into_a_string_column(oracle):
    """A double whose text fits the column is stored as MariaDB stores it; one that does not
    fit is refused (1235) with nothing stored: MySQL writes it again in fewer digits (1.5 into
    CHAR(2) is '2'), which this engine does not do, and a cut-off text would be a wrong value."""
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, c CHAR(4), v VARCHAR(6))",
            "INSERT INTO t VALUES (1, 1.5e0, 12.25e0), (2, -2.5e0, 1e20)",
            "INSERT IGNORE INTO t VALUES (3, 1e0, 0.5e0)",
            "UPDATE t SET v = 2.5e0 WHERE id = 1",
            "SELECT * FROM t ORDER BY id",
        ],
    )
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, c CHAR(2), v VARCHAR(3))")
    for sql in (
        "INSERT INTO t VALUES (1, 1.5e0, '')",
        "INSERT IGNORE INTO t VALUES (1, 'a', 1234e0)",
        "INSERT INTO t VALUES (1, ?, '')",
    ):
        with pytest.raises(E.NotSupportedError) as err:
            conn.execute(sql, (0.125,) if "?" in sql else ())
        assert err.value.errno == 1235 and "narrower than its text" in str(err.value)
    assert conn.execute("SELECT COUNT(*) FROM t").fetchall() == [(0,)]
    conn.close()


def test_numbers_with_an_exponent_into_time_under_ignore(oracle):
    """A number with an exponent ('1e2x', '1.5e1') is no time: IGNORE stores 00:00:00 (not the
    seconds of its leading digits), while '1e' (no exponent digits) is 1 second."""
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, v TIME)",
            "INSERT IGNORE INTO t VALUES (1, '1e2x'), (2, '1e2'), (3, '12x'), (4, '1.5e1'), "
            "(5, 'x'), (6, '1:2x'), (7, '12.5x'), (8, '1e'), (9, '-1e2x'), (10, ' 2E-1')",
            "SELECT * FROM t ORDER BY id",
        ],
    )

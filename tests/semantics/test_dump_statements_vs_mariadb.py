"""What a MySQL dump's statements do, compared with MariaDB one by one (outcome, SHOW
WARNINGS): executable comments (``/*! */``, ``/*!NNNNN */``, ``/*M! */``), statements of only
comments, SET with variables and expressions, sql_mode (its normal form, NO_AUTO_VALUE_ON_ZERO),
ALTER TABLE ... DISABLE KEYS, a view's DEFINER, LOCK TABLES on one connection, and text that
is not UTF-8."""

from __future__ import annotations

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E
from noria_py.sql import comments


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_dump")
    yield conn
    conn.close()


def _norm(rows):
    return [tuple(float(v) if isinstance(v, float) else v for v in r) for r in rows]


def _outcome_oracle(cur, sql):
    try:
        cur.execute(sql)
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0])
    rows = _norm(cur.fetchall()) if cur.description else cur.rowcount
    cur.execute("SHOW WARNINGS")
    # (the oracle's database is oracle_dump, the engine's noria)
    warnings = [(lv, code, msg.replace("oracle_dump", "noria")) for lv, code, msg in cur.fetchall()]
    return ("ok", rows, warnings)


def _outcome_noria(cur, sql):
    try:
        cur.execute(sql)
    except E.Error as e:
        return ("error", e.errno)
    rows = _norm(cur.fetchall()) if cur.description else cur.rowcount
    return ("ok", rows, [tuple(w) for w in cur.execute("SHOW WARNINGS").fetchall()])


def _compare(oracle, statements):
    conn = noria_py.connect()
    cur = conn.cursor()
    try:
        with oracle.cursor() as oc:
            oc.execute("UNLOCK TABLES")
            oc.execute("SET SESSION sql_mode = DEFAULT, foreign_key_checks = 0, autocommit = 1")
            oc.execute("DROP VIEW IF EXISTS v, w")
            for t in ("f", "g", "k", "t", "u"):
                oc.execute(f"DROP TABLE IF EXISTS {t}")
            oc.execute("SET foreign_key_checks = 1")
            # the engine's default modes (MySQL 8's), which the oracle's server lacks
            oc.execute(
                "SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,"
                "NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
            )
            oc.execute("CREATE TABLE IF NOT EXISTS _clear (x INT)")
            oc.execute("SELECT * FROM _clear")  # (a statement over a table clears the notes)
            for sql in statements:
                assert _outcome_noria(cur, sql) == _outcome_oracle(oc, sql), sql
    finally:
        conn.close()


def test_executable_comments(oracle):
    _compare(
        oracle,
        [
            "SELECT 1 /*! + 1 */",
            "SELECT 1 /*!40101 + 1 */",
            "SELECT 1 /*!50001+1*/",
            "SELECT 1 /*!50699 + 1 */",
            "SELECT 1 /*!50700 + 1 */",  # MySQL 5.7 and later: not MariaDB's
            "SELECT 1 /*!80000 + 1 */",
            "SELECT 1 /*!99999 + 1 */",
            "SELECT 1 /*!100000 + 1 */",
            "SELECT 1 /*!010000 + 1 */",
            "SELECT 1 /*!401012 + 1 */",  # six digits: a later version
            "SELECT 1 /*!999999 + 1 */",
            "SELECT 1 /*M! + 1 */",
            "SELECT 1 /*M!50700 + 1 */",  # MariaDB's own: numbered by its versions
            "SELECT 1 /*M!100000 + 1 */",
            "SELECT 1 /*M!999999 + 1 */",
            "SELECT 1 /*!4010 + 1 */",  # four digits: no version, the body as written
            "SELECT 1 /*M!4010 + 1 */",
            "SELECT 1 /*!  40101 + 1 */",
            "SELECT 1 /*!40101 + LENGTH('*/') */",
            'SELECT 1 /*!40101 + LENGTH("a*/") */',
            "SELECT 1 /*!999999 + '*/' */",  # the body of one that does not apply: not SQL
            "SELECT 1 /*!999999 + 1 -- x */",
            "SELECT 1 /*!50700 + 1 -- x */ + 1",
            "SELECT 1 /*M!999999 /* x */ + 1",
            "SELECT 1 /*!40101 + 1 /* inner */ + 1 */",
            "SELECT 1 /*!40101+1*//*!40101+1*/",
            "SELECT 1 /*!40101 + 1 -- x */",
            "SELECT 1 /*!40101 + 1 # x */",
            "SELECT 1 /*!40101 + 1",
            "SELECT 1 /* abc",
            "SELECT 1 + 'abc",
            "SELECT 1 /*!40101 + 'abc */",
            'SELECT "abc',
            "SELECT `abc",
            "SELECT 1 /*! /*! + 1 */ */",
            "SELECT '/*!40101 x */', `/*!40101 y */` FROM (SELECT 2 AS `/*!40101 y */`) d",
            "SELECT /*!STRAIGHT_JOIN*/ 1",
            "/*!40101 SELECT 1 */",
            "/*!40101 SET @x = 5 */",
            "SELECT @x",
            "/*!40101 CREATE TABLE t (id INT PRIMARY KEY, v INT) */",
            "INSERT INTO t VALUES (1, 10) /*!40101 , (2, 20) */",
            "INSERT INTO t VALUES (3, 30) /*!99999 , (4, 40) */",
            "SELECT * FROM t /*!40101 WHERE id > 1 */ ORDER BY id",
            "/*!40000 ALTER TABLE t DISABLE KEYS */",
            "/*!40000 ALTER TABLE t ENABLE KEYS */",
            "ALTER TABLE nope DISABLE KEYS",
            "CREATE DEFINER=`` VIEW v AS SELECT 1 AS x",
            "/*!50001 CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER "
            "VIEW v AS "
            "SELECT id, v * 2 AS d FROM t */",
            "CREATE OR REPLACE DEFINER=CURRENT_USER VIEW w AS SELECT COUNT(*) AS n FROM t",
            "CREATE OR REPLACE DEFINER=''@'%' VIEW w AS SELECT COUNT(*) AS n FROM t",
            "CREATE OR REPLACE DEFINER=nobody SQL SECURITY INVOKER VIEW w AS SELECT 2 AS n",
            "SELECT * FROM v ORDER BY id",
            "SELECT * FROM w",
        ],
    )


def test_statements_of_only_comments(oracle):
    _compare(
        oracle,
        [
            "/* plain */",
            "-- x",
            "--\n-- y\n",
            "# z",
            "/*!99999 SELECT 1 */",
            "/*M!999999\\- enable the sandbox mode */",
            "/* a */ -- b\n SELECT 1",
            "--\nSELECT 2",
            "",
            ";",
        ],
    )


def test_set_with_variables_and_expressions(oracle):
    _compare(
        oracle,
        [
            "SET @a = 1 + 1",
            "SELECT @a",
            "SET @b = @a * 10, @c = @b + 1",
            "SELECT @a, @b, @c",
            "SET @s = CONCAT('x', @a)",
            "SELECT @s",
            "SET @old_notes = @@sql_notes, sql_notes = 0",
            "SELECT @old_notes, @@sql_notes",
            "SET @old_fk = @@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS = 0",
            "SELECT @old_fk, @@foreign_key_checks",
            "SET FOREIGN_KEY_CHECKS = @old_fk",
            "SELECT @@foreign_key_checks",
            "SET sql_notes = @old_notes",
            "SELECT @@sql_notes",
            "SET foreign_key_checks = @nothing_set",
            "SET @@session.unique_checks = 1 - 1",
            "SELECT @@unique_checks",
            "SET unique_checks = 1",
            "SET @@SESSION.SQL_LOG_BIN= 0",  # MySQL's dumps with GTIDs
            "SET @MYSQLDUMP_TEMP_LOG_BIN = @@SESSION.SQL_LOG_BIN",
            "SELECT @MYSQLDUMP_TEMP_LOG_BIN, @@sql_log_bin",
            "SET @@SESSION.SQL_LOG_BIN = 1",
        ],
    )


def test_disable_keys(oracle):
    """InnoDB keeps every index current: DISABLE/ENABLE KEYS change nothing, with a note when
    the table has a key that is not unique (or none)."""
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, v INT, UNIQUE KEY (v))",
            "ALTER TABLE t DISABLE KEYS",
            "ALTER TABLE t ENABLE KEYS",
            "ALTER TABLE t ENABLE KEYS, DISABLE KEYS",
            "ALTER TABLE t DISABLE KEYS, ENABLE KEYS",
            "CREATE TABLE u (id INT PRIMARY KEY, v INT, KEY (v))",
            "ALTER TABLE u DISABLE KEYS",
            "ALTER TABLE u ENABLE KEYS, DISABLE KEYS",
            "ALTER TABLE u ADD COLUMN w INT, DISABLE KEYS",
            "INSERT INTO u VALUES (1, 2, 3)",
            "SELECT * FROM u",
            "CREATE TABLE k (v INT)",
            "ALTER TABLE k DISABLE KEYS",
            "ALTER TABLE k ENABLE KEYS",
            "CREATE TABLE f (id INT PRIMARY KEY, t_id INT, FOREIGN KEY (t_id) REFERENCES t (id))",
            "ALTER TABLE f DISABLE KEYS",
            "CREATE TABLE g (id INT PRIMARY KEY, FOREIGN KEY (id) REFERENCES t (id))",
            "ALTER TABLE g DISABLE KEYS",
            "CREATE VIEW v AS SELECT 1 AS x",
            "ALTER TABLE v DISABLE KEYS",
            "ALTER TABLE nope ENABLE KEYS",
        ],
    )


def test_sql_notes_off_keeps_notes_out(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(4))",
            "DROP TABLE IF EXISTS nope",
            "SET sql_notes = 0",
            "DROP TABLE IF EXISTS nope",
            "ALTER TABLE t DISABLE KEYS",
            "INSERT INTO t VALUES (1, 'ab  ')",
            "SET sql_notes = 1",
            "INSERT INTO t VALUES (2, 'cd   ')",
        ],
    )


def test_sql_mode_forms(oracle):
    _compare(
        oracle,
        [
            "SET sql_mode = 'no_auto_value_on_zero'",
            "SELECT @@sql_mode",
            "SET sql_mode = 'strict_trans_tables,,no_auto_value_on_zero'",
            "SELECT @@sql_mode",
            "SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_AUTO_VALUE_ON_ZERO'",
            "SELECT @@sql_mode",
            "SET sql_mode = 'TRADITIONAL'",
            "SELECT @@sql_mode",
            "SET sql_mode = ''",
            "SELECT @@sql_mode",
            "SET sql_mode = 'bogus'",
            "SET sql_mode = ' no_zero_date'",
            "SET sql_mode = NULL",
            "SET sql_mode = 524288",
            "SELECT @@sql_mode",
            "SET @@sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')",
            "SELECT @@sql_mode",
            "SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
            "SELECT @@sql_mode",
        ],
    )


def test_modes_that_change_meaning_are_refused():
    """ANSI_QUOTES, PIPES_AS_CONCAT and the like change what a statement means; the engine
    does not implement them, so setting one is 1235 and the mode stays as it was."""
    conn = noria_py.connect()
    try:
        before = conn.execute("SELECT @@sql_mode").fetchall()
        for mode in ("ANSI", "ANSI_QUOTES", "PIPES_AS_CONCAT", "4", "NO_BACKSLASH_ESCAPES"):
            with pytest.raises(E.Error) as info:
                conn.execute(
                    f"SET sql_mode = '{mode}'" if not mode.isdigit() else f"SET sql_mode = {mode}"
                )
            assert info.value.errno == 1235, mode
        assert conn.execute("SELECT @@sql_mode").fetchall() == before
        assert conn.execute("SELECT 'a' || 'b'").fetchall() == [(0,)]
    finally:
        conn.close()


def test_outside_strict_mode_an_adjusted_value_is_refused_not_stored_differently(oracle):
    """Outside strict mode MySQL stores 300 in a TINYINT as 127 with a warning; the engine
    does not adjust values there and says so (1235), storing nothing."""
    conn = noria_py.connect()
    try:
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v TINYINT)")
        conn.execute("SET sql_mode = 'NO_ENGINE_SUBSTITUTION'")
        for sql in ("INSERT INTO t VALUES (1, 300)", "INSERT INTO t VALUES (1, 'x')"):
            with pytest.raises(E.Error) as info:
                conn.execute(sql)
            assert info.value.errno == 1235
        conn.execute("INSERT INTO t VALUES (2, 5)")  # a value that fits is stored
        with pytest.raises(E.Error) as info:
            conn.executemany("INSERT INTO t VALUES (?, ?)", [(3, 1), (4, 999)])
        assert info.value.errno == 1235
        conn.execute("SET sql_mode = 'STRICT_ALL_TABLES'")
        with pytest.raises(E.Error) as info:
            conn.execute("INSERT INTO t VALUES (1, 300)")
        assert info.value.errno == 1264
        assert conn.execute("SELECT * FROM t").fetchall() == [(2, 5)]
    finally:
        conn.close()


def test_no_auto_value_on_zero(oracle):
    _compare(
        oracle,
        [
            # (InnoDB uses a value up for an explicit 0 too: the generated keys after one
            # differ, see the README; the rows that hold 0 are compared)
            "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
            "INSERT INTO t VALUES (0, 1)",
            "SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES'",
            "INSERT INTO t VALUES (0, 2)",
            "INSERT INTO t VALUES (0, 3)",
            "INSERT INTO t VALUES (NULL, 4)",
            "SELECT v, id = 0, id > 1 FROM t ORDER BY v",
            "SET sql_mode = 'STRICT_TRANS_TABLES'",
            "INSERT INTO t VALUES (0, 7)",
            "SELECT v, id = 0 FROM t ORDER BY v",
        ],
    )


def test_lock_tables_on_one_connection(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, v INT)",
            "CREATE TABLE u (id INT PRIMARY KEY)",
            "LOCK TABLES t WRITE",
            "INSERT INTO t VALUES (1, 1), (2, 2)",
            "SELECT COUNT(*) FROM t",
            "ROLLBACK",  # autocommit: every statement was committed
            "SELECT COUNT(*) FROM t",
            "UNLOCK TABLES",
            "SELECT COUNT(*) FROM t",
            "LOCK TABLES `t` AS x READ LOCAL, u LOW_PRIORITY WRITE",
            "UNLOCK TABLE",
            "LOCK TABLE t WRITE, u READ",
            "UNLOCK TABLES",
            "UNLOCK TABLES",
            "LOCK TABLES nope WRITE",
            "LOCK TABLES t",
            "LOCK TABLES",
            "SET autocommit = 0",
            "LOCK TABLES t WRITE",
            "INSERT INTO t VALUES (3, 3)",
            "ROLLBACK",
            "SELECT COUNT(*) FROM t",
            "INSERT INTO t VALUES (4, 4)",
            "COMMIT",
            "INSERT INTO t VALUES (5, 5)",
            "UNLOCK TABLES",
            "ROLLBACK",
            "SELECT id FROM t ORDER BY id",
            "SET autocommit = 1",
        ],
    )


def test_text_that_is_not_utf8(oracle):
    """A client's bytes that are not UTF-8 (a dump's binary column in a string literal) are
    stored as sent into a binary column and refused (1366) by a text column; the server decodes
    them as lone surrogates, which is what the embedded connection is given here."""
    conn = noria_py.connect()
    cur = conn.cursor()
    ocur = oracle.cursor()
    ocur.execute("UNLOCK TABLES")
    try:
        for c in (cur, ocur):
            c.execute("DROP TABLE IF EXISTS inv") if c is ocur else None
            c.execute("CREATE TABLE inv (id INT PRIMARY KEY, s VARCHAR(20), b VARBINARY(20))")
        cases = [
            (b"INSERT INTO inv VALUES (1, NULL, 'q\xff\x80')", None),
            (b"INSERT INTO inv VALUES (2, 'ab\xff\x80cdefghij', NULL)", 1366),
            (b"INSERT INTO inv VALUES (3, 'xyz\xff', NULL)", 1366),
            (b"INSERT INTO inv VALUES (4, '\xffa', NULL)", 1366),
        ]
        for raw, errno in cases:
            text = raw.decode("utf-8", "surrogateescape")
            expected = None
            try:
                ocur._query(raw)  # the bytes as a client sends them
            except pymysql.err.MySQLError as e:
                expected = (e.args[0], e.args[1])
            got = None
            try:
                cur.execute(text)
            except E.Error as e:
                got = (e.errno, e.args[0])
            if expected is not None:
                expected = (expected[0], expected[1].replace("oracle_dump", "noria"))
            assert got == expected, raw
            assert (got or (None,))[0] == errno
        ocur.execute("SELECT id, HEX(b), HEX(s) FROM inv ORDER BY id")
        assert cur.execute("SELECT id, HEX(b), HEX(s) FROM inv ORDER BY id").fetchall() == [
            tuple(r) for r in ocur.fetchall()
        ]
    finally:
        ocur.execute("DROP TABLE IF EXISTS inv")
        conn.close()


_VERSIONS = st.one_of(
    st.just(""),
    st.integers(0, 9999).map(str),  # too short for a version: part of the body
    st.integers(10000, 99999).map(lambda v: f"{v:05d}"),
    # six digits, away from the oracle's own 10.11.x (which the engine answers as 10.11.0)
    st.integers(100000, 999999).filter(lambda v: not 101100 <= v <= 101199).map(str),
)
_BODIES = st.sampled_from(
    ["+ 1", "+1", "+ '*/'", "+ 1 /* c */ + 2", "+ 1 -- c\n + 4", "* 3", "+ LENGTH('a*/b')", ""]
)


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["!", "M!"]), _VERSIONS, _BODIES, st.sampled_from(["", " "])),
        min_size=1,
        max_size=3,
    )
)
def test_executable_comments_drawn(oracle, parts):
    sql = "SELECT 1" + "".join(
        f" /*{marker}{version}{space}{body} */" for marker, version, body, space in parts
    )
    assert comments.has_executable(sql)
    with oracle.cursor() as oc:
        expected = _outcome_oracle(oc, sql)
    conn = noria_py.connect()
    try:
        got = _outcome_noria(conn.cursor(), sql)
    finally:
        conn.close()
    if expected[0] == "ok":
        expected = ("ok", expected[1], [w for w in expected[2] if w[1] != 1287])
    assert got[:2] == expected[:2], sql


def test_generated_column_values_outside_strict_mode(oracle):
    """MariaDB's dumps write the generated columns' values too: outside strict mode they are
    ignored with warning 1906 (in strict mode the engine keeps MySQL 8's 3105)."""
    _compare(
        oracle,
        [
            "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT AS (a * 2) VIRTUAL, "
            "c INT AS (a + 1) STORED)",
            "SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
            "INSERT INTO t VALUES (1, 5, 10, 6), (2, 7, 99, 0)",
            "INSERT INTO t VALUES (3, 1, DEFAULT, DEFAULT)",
            "SELECT * FROM t ORDER BY id",
        ],
    )

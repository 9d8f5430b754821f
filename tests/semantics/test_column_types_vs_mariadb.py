"""Column types whose limits the engine ignored, compared with MariaDB: TINYTEXT, TEXT(n) and
the BLOBs hold a number of bytes (256 characters went into a TINYTEXT), DECIMAL UNSIGNED and
DOUBLE UNSIGNED hold no negatives (-1 was stored), a VARCHAR needs its length and has a largest
one (1064, 1074). A text cut inside a character is 1366 naming it, as MariaDB words it. ZEROFILL
and spatial types are refused (1235) rather than kept without their meaning."""

from __future__ import annotations

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_types", "CHARACTER SET utf8mb4")
    yield conn
    conn.close()


def _outcome_oracle(cur, sql):
    try:
        cur.execute(sql)
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0], e.args[1].replace("oracle_types", "noria"))
    rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
    cur.execute("SHOW WARNINGS")
    warnings = [(a, b, c.replace("oracle_types", "noria")) for a, b, c in cur.fetchall()]
    return ("ok", rows, warnings)


def _outcome_noria(cur, sql):
    try:
        cur.execute(sql)
    except E.Error as e:
        return ("error", e.errno, e.args[0])
    rows = [tuple(r) for r in cur.fetchall()] if cur.description else None
    return ("ok", rows, [tuple(w) for w in cur.execute("SHOW WARNINGS").fetchall()])


def _compare(oracle, statements, messages=True):
    conn = noria_py.connect()
    cur = conn.cursor()
    try:
        with oracle.cursor() as oc:
            for t in ("ty", "ty3", "ty4", "ty5", "ty6"):
                oc.execute(f"DROP TABLE IF EXISTS {t}")
            for sql in statements:
                got, want = _outcome_noria(cur, sql), _outcome_oracle(oc, sql)
                if not messages and got[0] == want[0] == "error":
                    got, want = got[:2], want[:2]
                assert got == want, sql
    finally:
        conn.close()


def test_type_limits(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, a TINYTEXT, b TINYBLOB, c TEXT, "
            "f DECIMAL(5,2) UNSIGNED, g CHAR(0), h TEXT(10), e DOUBLE UNSIGNED)",
            "INSERT INTO ty (id, a) VALUES (1, REPEAT('x', 255))",
            "INSERT INTO ty (id, a) VALUES (2, REPEAT('x', 256))",
            "INSERT INTO ty (id, a) VALUES (3, REPEAT('é', 128))",
            "INSERT INTO ty (id, a) VALUES (4, REPEAT('é', 127))",
            "INSERT IGNORE INTO ty (id, a) VALUES (5, CONCAT(REPEAT('x', 254), 'é'))",
            "INSERT INTO ty (id, a) VALUES (6, REPEAT('é', 200))",
            "INSERT INTO ty (id, a) VALUES (7, CONCAT(REPEAT('x', 253), '😀ab'))",
            "INSERT IGNORE INTO ty (id, a) VALUES (8, REPEAT('x', 300))",
            "INSERT INTO ty (id, b) VALUES (9, REPEAT('y', 256))",
            "INSERT IGNORE INTO ty (id, b) VALUES (10, REPEAT('y', 256))",
            "INSERT INTO ty (id, f) VALUES (11, -1)",
            "INSERT IGNORE INTO ty (id, f) VALUES (12, -1)",
            "INSERT INTO ty (id, f) VALUES (13, -0.001)",
            "INSERT INTO ty (id, e) VALUES (14, -1)",
            "INSERT IGNORE INTO ty (id, e) VALUES (15, -2.5)",
            "INSERT INTO ty (id, e) VALUES (16, 2.5)",
            "INSERT IGNORE INTO ty (id, f, e) VALUES (161, -99999, -1e300), (162, 99999, 1e308)",
            "INSERT INTO ty (id, f) VALUES (163, -99999)",
            "INSERT INTO ty (id, g) VALUES (17, 'a')",
            "INSERT INTO ty (id, g) VALUES (18, '')",
            "INSERT INTO ty (id, h) VALUES (19, REPEAT('z', 300))",
            "INSERT INTO ty (id, h) VALUES (20, REPEAT('z', 255))",
            "UPDATE ty SET a = REPEAT('q', 256) WHERE id = 1",
            "SELECT id, LENGTH(a), LENGTH(b), LENGTH(h), f, e FROM ty ORDER BY id",
        ],
    )


def test_declarations(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE ty3 (id INT PRIMARY KEY, v VARCHAR)",
            "CREATE TABLE ty4 (id INT PRIMARY KEY, v VARCHAR(70000))",
            "CREATE TABLE ty5 (id INT PRIMARY KEY, v CHAR(256))",
            "CREATE TABLE ty6 (id INT PRIMARY KEY, v VARBINARY(70000))",
        ],
        messages=False,  # (1064's text: where each parser stops reading)
    )


def test_zerofill_and_spatial_types_are_refused(tmp_path):
    conn = noria_py.connect()
    try:
        for ddl in (
            "CREATE TABLE z (id INT PRIMARY KEY, d INT(5) ZEROFILL)",
            "CREATE TABLE z (id INT PRIMARY KEY, g GEOMETRY)",
        ):
            with pytest.raises(E.Error) as info:
                conn.execute(ddl)
            assert info.value.errno == 1235
        conn.execute("CREATE TABLE z (id INT PRIMARY KEY)")
        with pytest.raises(E.Error) as info:
            conn.execute("ALTER TABLE z ADD COLUMN d INT ZEROFILL")
        assert info.value.errno == 1235
    finally:
        conn.close()


_CHARS = st.sampled_from(["x", "é", "😀", "ß", " "])


@settings(deadline=None, max_examples=40)
@given(
    parts=st.lists(st.tuples(_CHARS, st.integers(1, 130)), min_size=1, max_size=3),
    ignore=st.booleans(),
)
def test_drawn_text_lengths(oracle, parts, ignore):
    value = "".join(c * n for c, n in parts)
    verb = "INSERT IGNORE" if ignore else "INSERT"
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, a TINYTEXT, h TEXT(20))",
            f"{verb} INTO ty (id, a) VALUES (1, '{value}')",
            f"{verb} INTO ty (id, h) VALUES (2, '{value}')",
            "SELECT id, a, h FROM ty ORDER BY id",
        ],
    )


def test_json_columns_hold_valid_json(oracle):
    """MariaDB's JSON is a text its JSON_VALID check guards: invalid JSON is 4025 (it was
    stored). Under IGNORE, where MariaDB skips the row, the engine refuses (1235)."""
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, j JSON)",
            "INSERT INTO ty VALUES (1, '1'), (2, '\"x\"'), (3, 'null'), (4, ' [1] ')",
            "INSERT INTO ty VALUES (5, '')",
            "INSERT INTO ty VALUES (6, 'NaN')",
            'INSERT INTO ty VALUES (7, \'{"a":1,"a":2}\')',
            "INSERT INTO ty VALUES (8, 'tru')",
            "INSERT INTO ty VALUES (9, '[1,]'), (10, '[2]')",
            "INSERT INTO ty VALUES (11, 12)",
            "UPDATE ty SET j = '{x' WHERE id = 1",
            "UPDATE ty SET j = '{\"y\": 2}' WHERE id = 1",
            "SELECT id, j FROM ty ORDER BY id",
        ],
    )
    conn = noria_py.connect()
    try:
        conn.execute("CREATE TABLE ty (id INT PRIMARY KEY, j JSON)")
        with pytest.raises(E.Error) as info:
            conn.execute("INSERT IGNORE INTO ty VALUES (1, '{bad')")
        assert info.value.errno == 1235
        assert conn.execute("SELECT COUNT(*) FROM ty").fetchall() == [(0,)]
    finally:
        conn.close()


def test_alter_into_narrower_types(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, t TEXT, j TEXT, b INT)",
            "INSERT INTO ty VALUES (1, REPEAT('x', 300), '{bad', 300)",
            "ALTER TABLE ty MODIFY t TINYTEXT",
            "ALTER TABLE ty MODIFY j JSON",
            "ALTER TABLE ty MODIFY b BIT(4)",
            "ALTER TABLE ty MODIFY b BIT(9)",
            "UPDATE ty SET t = 'short', j = '[1]'",
            "ALTER TABLE ty MODIFY t TINYTEXT, MODIFY j JSON",
            "SELECT id, t, j, b + 0 FROM ty",
        ],
    )


def test_year_columns_read_two_digits_as_mysql_does(oracle):
    """69 was stored as the year 69: 1-69 are 2001-2069, 70-99 are 1970-1999, a string zero
    of fewer than four digits is 2000, and outside 1901-2155 (and 0) is out of range."""
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, y YEAR)",
            "INSERT INTO ty VALUES (1, 0), (2, 1), (3, 69), (4, 70), (5, 99), (6, 1901), (7, 2155)",
            "INSERT INTO ty VALUES (8, 100)",
            "INSERT IGNORE INTO ty VALUES (9, 100), (10, 2156), (11, -1)",
            "INSERT INTO ty VALUES (12, '0'), (13, '00'), (14, '000'), (15, '0000'), (16, '1'), "
            "(17, '69'), (18, '70'), (19, '2024'), (20, ' 5')",
            "INSERT INTO ty VALUES (21, 'abc')",
            "INSERT IGNORE INTO ty VALUES (22, 'abc'), (23, ''), (24, '5x')",
            "INSERT INTO ty VALUES (25, '5x')",
            "INSERT INTO ty VALUES (26, 69.5), (27, 1.5), (28, '69.5'), (29, 2024.4)",
            "UPDATE ty SET y = 5 WHERE id = 1",
            "SELECT id, y + 0 FROM ty ORDER BY id",
        ],
    )


def test_timestamp_range(oracle):
    """A TIMESTAMP holds 1970-01-01 00:00:00 to 2038-01-19 03:14:08 UTC, both exclusive (the
    system's zone is both servers' here); outside is 1292 (IGNORE would store the zero date,
    which the engine refuses, 1235)."""
    _compare(
        oracle,
        [
            "CREATE TABLE ty (id INT PRIMARY KEY, ts TIMESTAMP(2) NULL)",
            "INSERT INTO ty VALUES (1, '1970-01-01 00:00:00')",
            "INSERT INTO ty VALUES (2, '1970-01-01 00:00:00.99'), (3, '1970-01-01 00:00:01'), "
            "(4, '2038-01-19 03:14:07.99')",
            "INSERT INTO ty VALUES (5, '2038-01-19 03:14:08')",
            "INSERT INTO ty VALUES (6, '1969-12-31 23:59:59')",
            "INSERT INTO ty VALUES (7, '2100-01-01')",
            "INSERT INTO ty VALUES (8, 19700101000000)",
            "UPDATE ty SET ts = '2040-01-01' WHERE id = 2",
            "SELECT * FROM ty ORDER BY id",
        ],
    )

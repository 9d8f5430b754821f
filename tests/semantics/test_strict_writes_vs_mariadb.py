"""Strict mode inside a write's expressions, compared with MariaDB: where a SELECT would only
warn (a string that is not wholly a number read as one, x / 0), an UPDATE's WHERE and SET and an
INSERT's values, ON DUPLICATE KEY UPDATE and an INSERT ... SELECT from one table are errors (1292,
1365), and nothing of the statement is written; a DELETE keeps them warnings. Outside strict mode (or without ERROR_FOR_DIVISION_BY_ZERO) they stay warnings.

Each statement's outcome (its rows or error code) and the table after it are compared; the
warnings are not (the engine does not raise a SELECT's or DELETE's conversion warnings)."""

from __future__ import annotations

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

MODES = (
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_strict")
    yield conn
    conn.close()


def _outcome(run, sql):
    try:
        rows = run(sql)
    except (pymysql.err.MySQLError, E.Error) as e:
        return ("error", e.args[0] if isinstance(e, pymysql.err.MySQLError) else e.errno)
    return ("ok", rows)


def _session(oracle):
    conn = noria_py.connect()
    cur = conn.cursor()
    oc = oracle.cursor()

    def ours(sql):
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else None

    def theirs(sql):
        oc.execute(sql)
        return [tuple(r) for r in oc.fetchall()] if oc.description else None

    oc.execute("DROP TABLE IF EXISTS sw")
    oc.execute(f"SET SESSION sql_mode = '{MODES}'")
    return conn, ours, theirs


def _compare(oracle, statements):
    conn, ours, theirs = _session(oracle)
    try:
        for sql in statements:
            assert _outcome(ours, sql) == _outcome(theirs, sql), sql
            if not sql.startswith(("CREATE", "SET")):
                q = "SELECT * FROM sw ORDER BY id"
                assert ours(q) == theirs(q), sql
    finally:
        conn.close()


def test_updates_inserts_and_deletes(oracle):
    _compare(
        oracle,
        [
            "CREATE TABLE sw (id INT PRIMARY KEY, a DOUBLE, s VARCHAR(10))",
            "INSERT INTO sw VALUES (1, 0, 'x'), (2, 2, '3y'), (3, 3, '3'), (4, 4, ' 4 ')",
            "UPDATE sw SET a = 5 WHERE s = 3",  # 'x' is no number: the whole UPDATE fails
            "UPDATE sw SET a = 6 WHERE id = 3 AND s = 3",  # only clean strings are read
            "UPDATE sw SET a = 7 WHERE s = 4.0",
            "UPDATE sw SET a = 8 WHERE id = 4 AND s = 4.0",
            "UPDATE sw SET a = s + 1 WHERE id = 1",
            "UPDATE sw SET a = s + 1 WHERE id IN (3, 4)",
            "UPDATE sw SET a = ABS(s) WHERE id = 2",
            "UPDATE sw SET a = 10 / (a - a) WHERE id = 3",
            "UPDATE sw SET a = 10 MOD 0 WHERE id = 3",
            "UPDATE sw SET a = 1 WHERE s",
            "UPDATE sw SET a = 2 WHERE id = 3 AND s",
            "INSERT INTO sw VALUES (5, 'x' + 1, 'a')",
            "INSERT INTO sw VALUES (6, 1 / 0, 'a')",
            "INSERT INTO sw VALUES (7, ABS('3y'), 'a')",
            "INSERT INTO sw VALUES (8, ' 5 ' + 1, 'a'), (9, 5 DIV 0, 'b')",
            "INSERT INTO sw VALUES (10, '1e2' * 2, '')",
            "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'",  # no ERROR_FOR_DIVISION_BY_ZERO
            "UPDATE sw SET a = a / 0 WHERE id = 3",
            "INSERT INTO sw VALUES (11, 1 / 0, 'c')",
            "UPDATE sw SET a = 12 WHERE s = 3",
            f"SET SESSION sql_mode = '{MODES}'",
            "DELETE FROM sw WHERE s = 3",  # a DELETE only warns
            "INSERT IGNORE INTO sw VALUES (12, 'x' + 1, 'd')",
            "UPDATE IGNORE sw SET a = 13 WHERE s = 0",
            "INSERT INTO sw VALUES (12, 5, 'q') ON DUPLICATE KEY UPDATE a = s + 1",
            "INSERT INTO sw VALUES (4, 5, 'q') ON DUPLICATE KEY UPDATE a = a / 0",
            "INSERT INTO sw VALUES (4, 5, 'q') ON DUPLICATE KEY UPDATE a = s * 2",
            "INSERT IGNORE INTO sw VALUES (12, 5, 'q') ON DUPLICATE KEY UPDATE a = s + 1",
            "INSERT INTO sw SELECT id + 100, s + 1, s FROM sw",
            "INSERT INTO sw SELECT id + 100, a / 0, s FROM sw",
            "INSERT INTO sw SELECT id + 100, s + 1, s FROM sw WHERE id = 4",
            "INSERT INTO sw SELECT id + 200, a * 2, s FROM sw WHERE s = 4",
            "INSERT INTO sw (id, a) SELECT sw.id + 300, ABS(sw.s) FROM sw WHERE sw.id IN (3, 4)",
            "INSERT IGNORE INTO sw SELECT id + 400, s + 1, s FROM sw",
        ],
    )


def test_casts_and_null_operands(oracle):
    """CAST of a string that is not wholly its number is refused in a strict write (12.5 AS
    SIGNED, '' AS DECIMAL); an operand or argument that is NULL does not spare the string the
    other one holds its conversion (s * NULL, ROUND(s, NULL), s = NULL), except where MySQL
    stops at a NULL read first (NULL DIV s)."""
    _compare(
        oracle,
        [
            "CREATE TABLE sw (id INT PRIMARY KEY, a DOUBLE, s VARCHAR(30), n INT)",
            "INSERT INTO sw VALUES (1, 0, '12', NULL), (2, 0, ' 12 ', NULL), (3, 0, '12.5', NULL),"
            " (4, 0, '1e2', NULL), (5, 0, '', NULL), (6, 0, 'abc', NULL), (7, 0, '-3', NULL),"
            " (8, 0, '99999999999999999999999', NULL), (9, 0, '3x', NULL)",
            "SELECT COUNT(*) FROM sw",  # (all nine rows are there)
            f"SET SESSION sql_mode = '{MODES}'",
        ]
        + [
            f"UPDATE sw SET a = CAST(s AS {t}) WHERE id = {i}"
            for i in range(1, 9)
            for t in ("SIGNED", "UNSIGNED", "DECIMAL(30,4)", "DOUBLE")
        ]
        + [
            f"UPDATE sw SET a = {e} WHERE id = 9"
            for e in (
                "s * n",
                "n * s",
                "s + n",
                "n - s",
                "s / n",
                "n / s",
                "s MOD n",
                "n MOD s",
                "s DIV n",
                "n DIV s",
                "ROUND(s, n)",
                "ROUND(n, s)",
                "POW(s, n)",
                "MOD(n, s)",
                "s = n",
                "n = s",
                "s <=> n",
                "s < n",
                "ABS(s)",
            )
        ],  # fmt: skip
    )


# strings a date or time function may be given: not dates at all, invalid dates, a date with
# no time of day (an error where a time is read), times, and numbers spelled as text
_TEMPORAL_TEXTS = (
    "3x", "", "2020-13-45", "2020-02-30", "2020-01-01", "20200101", "2020-01-01 10:00:00",
    "2020-01-01 25:00:00", "2020-01-01 10:00:00x", "1 10:00:00", "99:99:99", "2020/01/01",
    "abc", "12", "2020-01-01T10:00", "3:4", "2020-01-01x", "12:30:45 pm",
)  # fmt: skip
_TEMPORAL_CALLS = (
    "DATE_ADD(s, INTERVAL 1 DAY)", "s - INTERVAL 1 HOUR", "YEAR(s)", "MONTH(s)", "QUARTER(s)",
    "DAYOFWEEK(s)", "DAYNAME(s)", "TO_DAYS(s)", "LAST_DAY(s)", "WEEK(s)", "UNIX_TIMESTAMP(s)",
    "DATE(s)", "EXTRACT(YEAR FROM s)", "EXTRACT(HOUR FROM s)", "HOUR(s)", "SECOND(s)",
    "TIME_TO_SEC(s)", "TIMEDIFF(s, '01:00:00')", "ADDTIME(s, '01:00:00')", "TIME(s)",
    "DATEDIFF(s, '2020-01-01')", "TIMESTAMPDIFF(DAY, s, '2020-01-01')",
    "TIMESTAMPADD(DAY, 1, s)", "DATE_FORMAT(s, '%Y')", "CAST(s AS DATE)", "CAST(s AS TIME)",
    "CAST(s AS DATETIME)",
)  # fmt: skip


def test_date_and_time_functions_refuse_what_is_no_date(oracle):
    """A string that is not a date (or, where a time is read, not a time: a date without its
    time of day) given to a date or time function is refused in a strict write (MySQL's
    warning 1292 made an error), in SET and in WHERE alike; what MySQL reads is written."""
    rows = ", ".join(f"({i}, '{t}', NULL)" for i, t in enumerate(_TEMPORAL_TEXTS, 1))
    _compare(
        oracle,
        [
            "CREATE TABLE sw (id INT PRIMARY KEY, s VARCHAR(30), n INT)",
            f"INSERT INTO sw VALUES {rows}",
            f"SET SESSION sql_mode = '{MODES}'",
        ]
        + [
            f"UPDATE sw SET n = ({call}) IS NULL WHERE id = {i}"
            for call in _TEMPORAL_CALLS
            for i in range(1, len(_TEMPORAL_TEXTS) + 1)
        ]
        + [
            "UPDATE sw SET n = id WHERE DATE_ADD(s, INTERVAL 1 DAY) IS NULL",
            "UPDATE sw SET n = id WHERE YEAR(s) > 2000",
            "DELETE FROM sw WHERE HOUR(s) = 34",
            "INSERT INTO sw (id, n) SELECT id + 100, YEAR(s) FROM sw WHERE id = 1",
            "INSERT INTO sw (id, n) VALUES (200, DAYOFWEEK('2020-02-30'))",
        ],
    )


def test_dates_written_in_every_form_mysql_reads(oracle):
    """A DATE or DATETIME column takes every form MySQL reads ('20200101', 20200102,
    '2020/01/05', '20-01-06', '2020.01.07', '200109'; they were refused), and a date or time
    followed by other characters is refused in a strict write, TIME included."""
    _compare(
        oracle,
        [
            "CREATE TABLE sw (id INT PRIMARY KEY, d DATE, t DATETIME, tm TIME)",
            f"SET SESSION sql_mode = '{MODES}'",
            "INSERT INTO sw (id, d) VALUES (1, '20200101')",
            "INSERT INTO sw (id, d) VALUES (2, 20200102)",
            "INSERT INTO sw (id, t) VALUES (3, '20200101101010')",
            "INSERT INTO sw (id, t) VALUES (4, 20200101101010)",
            "INSERT INTO sw (id, d) VALUES (5, '2020/01/05')",
            "INSERT INTO sw (id, d) VALUES (6, '20-01-06')",
            "INSERT INTO sw (id, d) VALUES (7, '2020.01.07')",
            "INSERT INTO sw (id, d) VALUES (8, '200109')",
            "INSERT INTO sw (id, d) VALUES (9, 20200230)",
            "INSERT INTO sw (id, d) VALUES (10, 2020.5)",
            "INSERT INTO sw (id, d) VALUES (11, '2020-01-01x')",
            "INSERT INTO sw (id, t) VALUES (12, '2020-01-01 10:00:00x')",
            "INSERT INTO sw (id, tm) VALUES (13, '2020-01-01x')",
            "INSERT INTO sw (id, tm) VALUES (14, '10:00:00x')",
            "INSERT INTO sw (id, tm) VALUES (15, '3x')",
            "INSERT INTO sw (id, tm) VALUES (16, '2020-01-01 10:00:00')",
            "UPDATE sw SET d = 20200115 WHERE id = 1",
            "UPDATE sw SET t = '20200116' WHERE id = 3",
            "UPDATE sw SET tm = '2020-01-01x' WHERE id = 16",
        ],
    )


def test_null_arguments_of_greatest_and_bit_operators(oracle):
    """GREATEST/LEAST with a NULL argument still read the arguments before it as their
    comparison's type, and bit operators read both operands as numbers: a string that is
    not one is refused in a strict write although the result is NULL."""
    _compare(
        oracle,
        [
            "CREATE TABLE sw (id INT PRIMARY KEY, s VARCHAR(20), n INT, d DOUBLE, c VARCHAR(5),"
            " dt DATE)",
            "INSERT INTO sw VALUES (1, '3x', NULL, NULL, NULL, NULL),"
            " (2, '7', NULL, NULL, NULL, NULL)",
            f"SET SESSION sql_mode = '{MODES}'",
        ]
        + [
            f"UPDATE sw SET {e} WHERE id = {i}"
            for i in (1, 2)
            for e in (
                "n = s & n",
                "n = s | n",
                "n = s ^ n",
                "n = s << n",
                "n = n >> s",
                "n = ~s",
                "d = GREATEST(s, n)",
                "d = LEAST(s, 2, n)",
                "d = GREATEST(n, s)",
                "d = GREATEST(s, c)",
                "d = GREATEST(s, NULL)",
                "dt = GREATEST(s, dt)",
                "d = GREATEST(s, CAST(NULL AS SIGNED))",
            )
        ]
        + [
            "UPDATE sw SET d = id WHERE GREATEST(s, n) IS NULL",
            "INSERT INTO sw (id, d) VALUES (11, GREATEST('3x', NULL))",
            "INSERT INTO sw (id, n) VALUES (12, '3x' & NULL)",
            "INSERT INTO sw (id, n) VALUES (13, NULL << '3x')",
        ],  # fmt: skip
    )


def test_outside_strict_mode_they_are_warnings(oracle):
    conn, ours, theirs = _session(oracle)
    try:
        for sql in [
            "CREATE TABLE sw (id INT PRIMARY KEY, a DOUBLE, s VARCHAR(10))",
            "INSERT INTO sw VALUES (1, 0, 'x'), (2, 2, '3y')",
            "SET SESSION sql_mode = 'ERROR_FOR_DIVISION_BY_ZERO'",
            "UPDATE sw SET a = 5 WHERE s = 3",
            "UPDATE sw SET a = s + 1 WHERE id = 1",
            "INSERT INTO sw VALUES (3, 'x' + 1, 'a')",
        ]:
            assert _outcome(ours, sql) == _outcome(theirs, sql), sql
        q = "SELECT * FROM sw ORDER BY id"
        assert ours(q) == theirs(q)
    finally:
        conn.close()


_TEXT = st.sampled_from(
    ["", " ", "x", "3y", "3", " 4 ", "1e2", "1e", ".5", "-0", "+2", "0x10", "\t7\n", "1,5", "12"]
)
_UPDATE = st.sampled_from(
    [
        "UPDATE sw SET a = 1 WHERE s = {n}",
        "UPDATE sw SET a = 2 WHERE s = {n}.5",
        "UPDATE sw SET a = 3 WHERE s > {n}",
        "UPDATE sw SET a = s + {n} WHERE id = {i}",
        "UPDATE sw SET a = s * 2",
        "UPDATE sw SET a = FLOOR(s) WHERE id <= {i}",
        "UPDATE sw SET a = {n} / (id - {i}) WHERE id = {i}",
        "UPDATE sw SET a = {n} WHERE s AND id = {i}",
        "INSERT INTO sw VALUES (100 + {i}, s_value + {n}, 'n')",
        "DELETE FROM sw WHERE s = {n}",
        "INSERT INTO sw SELECT id + 1000 * ({n} + 1), s * {i}, 'z' FROM sw",
        "INSERT INTO sw SELECT id + 100 * ({n} + 1), a, s FROM sw WHERE s > {i}",
    ]
)


@settings(deadline=None, max_examples=40)
@given(
    texts=st.lists(_TEXT, min_size=1, max_size=5),
    stmts=st.lists(st.tuples(_UPDATE, st.integers(0, 4), st.integers(0, 12), _TEXT), max_size=4),
)
def test_drawn_writes(oracle, texts, stmts):
    statements = ["CREATE TABLE sw (id INT PRIMARY KEY, a DOUBLE, s VARCHAR(10))"]
    values = ", ".join(f"({i}, {i}, '{t}')" for i, t in enumerate(texts))
    statements.append(f"INSERT INTO sw VALUES {values}")
    for form, i, n, text in stmts:
        sql = form.format(i=i, n=n).replace("s_value", f"'{text}'")
        statements.append(sql)
    _compare(oracle, statements)

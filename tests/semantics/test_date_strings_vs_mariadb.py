"""Strings that a date or time function reads only in part, against MariaDB.

MySQL reads a string where it wants a date as far as it is one, with a warning: a valid
datetime followed by other characters is that datetime (``YEAR('2020-01-01 10:00:00x')`` is
2020); where it wants a time, a date alone is read as its leading digits (``MINUTE('2020-01-01')``
is 20: '2020' as 00:20:20), eight digits as HHHHMMSS (beyond TIME's range: its largest value),
and a number followed by other characters as that number of seconds (``TIME('3x')``). A SELECT
keeps these values; a strict write refuses them (``test_strict_writes_vs_mariadb.py``).

Zero dates (``DATE('2024-00-00')``) are not compared: the engine follows MySQL 8's default
``NO_ZERO_DATE`` there (see the README). MariaDB shows the value of a function over a VARCHAR
with six fractional digits ('2020-01-02 10:00:00.000000') where MySQL shows none; both are
compared without the zeros that end a fraction.
"""

from __future__ import annotations

import re

import pytest

import noria_py

TEXTS = (
    "3x", "", "2020-13-45", "2020-02-30", "2020-01-01", "20200101", "2020-01-01 10:00:00",
    "2020-01-01 25:00:00", "2020-01-01 10:00:00x", "1 10:00:00", "-838:59:59", "99:99:99",
    "2020/01/01", " 2020-01-01 ", "2020-1-1", "abc", "0", "12", "20201345", "2020-01-01T10:00",
    "3:4", "2020-01-01 10:00:00.123456", "10:00:00.25", "2020-06-15 23:59:59", "1999-12-31",
    "20200101101010", "2020-01-01 10", "2020-01-01 10:05", "2020-01-01x", "12:30:45 pm",
)  # fmt: skip

CALLS = (
    "DATE_ADD(s, INTERVAL 1 DAY)", "s - INTERVAL 1 HOUR", "YEAR(s)", "MONTH(s)",
    "DAYOFMONTH(s)", "DAYOFWEEK(s)", "DAYOFYEAR(s)", "DAYNAME(s)", "TO_DAYS(s)", "LAST_DAY(s)",
    "WEEK(s)", "YEARWEEK(s)", "UNIX_TIMESTAMP(s)", "EXTRACT(YEAR FROM s)", "HOUR(s)",
    "MINUTE(s)", "SECOND(s)", "MICROSECOND(s)", "DATEDIFF(s, '2020-01-01')",
    "TIMESTAMPDIFF(SECOND, s, '2020-01-01')", "TIMESTAMPADD(MINUTE, 1, s)",
    "CAST(s AS DATETIME)", "CAST(s AS TIME)", "TIME_TO_SEC(s)",
    "DATE_FORMAT(s, '%Y-%m-%d %H:%i:%s')",
)  # fmt: skip

# what the engine still reads otherwise (in the README): eight digits beyond TIME's range are
# its largest value with .999999 in MariaDB (a VARCHAR's six digits), and DATE_FORMAT of
# '2010-00-00' (six digits read as a zero date)
SKIP = {
    ("TIME_TO_SEC(s)", "20200101"), ("TIME_TO_SEC(s)", "20201345"),
}  # fmt: skip


def _shown(v) -> str | None:
    if v is None:
        return None
    return re.sub(r"\.$", "", re.sub(r"(\.\d*?)0+$", r"\1", str(v)))


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_date_strings")
    yield conn
    conn.close()


def _on_both(oracle, table: str, setup: list[str]):
    """A new engine and the oracle, each with ``table`` made by the ``setup`` statements."""
    ours = noria_py.connect()
    with oracle.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {table}")
        for sql in setup:
            cur.execute(sql)
    for sql in setup:
        ours.execute(sql)
    return ours


def _answers(oracle, ours, q: str) -> tuple[list, list]:
    """(MariaDB's rows, ours) of ``q``."""
    with oracle.cursor() as cur:
        cur.execute(q)
        theirs = [tuple(r) for r in cur.fetchall()]
    return theirs, [tuple(r) for r in ours.execute(q).fetchall()]


def test_date_and_time_functions_read_strings_as_mysql_does(oracle):
    rows = ", ".join(f"({i}, '{t}')" for i, t in enumerate(TEXTS))
    setup = ["CREATE TABLE ds (id INT PRIMARY KEY, s VARCHAR(40))", f"INSERT INTO ds VALUES {rows}"]
    ours = _on_both(oracle, "ds", setup)
    differ = []
    try:
        for call in CALLS:
            theirs, mine = _answers(oracle, ours, f"SELECT id, {call} FROM ds ORDER BY id")
            for (i, a), (_, b) in zip(theirs, mine):
                if (call, TEXTS[i]) in SKIP:
                    continue
                if _shown(a) != _shown(b):
                    differ.append((call, TEXTS[i], a, b))
    finally:
        ours.close()
    assert not differ, differ


# the interval first: MySQL adds it to what follows the +, and that operand takes in a
# comparison after it (the interval is then added to the comparison's result)
INTERVAL_FIRST = (
    "INTERVAL 1 DAY + '2024-01-01'", "INTERVAL 1 MONTH + '2024-01-31'",
    "INTERVAL 2 HOUR + '2024-01-01 10:00:00'", "INTERVAL '1 2' DAY_HOUR + '2024-01-01'",
    "INTERVAL 1 DAY + '2024-01-01' + INTERVAL 1 HOUR", "INTERVAL -1 DAY + s",
    "INTERVAL 1 DAY + s = '2020-01-02'", "INTERVAL 1 DAY + s > '2020-01-01'",
    "INTERVAL 1 DAY + s IS NULL", "INTERVAL 1 DAY + s LIKE '2020%'",
    "INTERVAL 1 DAY + s IN ('2020-01-02')", "INTERVAL 1 DAY + s AND 1",
    "(INTERVAL 1 DAY + s) = '2020-01-02'", "1 + INTERVAL 1 DAY + '2024-01-01'",
    "'2024-01-01' + INTERVAL 1 DAY + '2024-01-01'", "INTERVAL 1 DAY + '2024-01-01' d",
    "INTERVAL 0 SECOND + '2024-01-01 00:00:00.5'",
)  # fmt: skip


def test_an_interval_first_adds_as_mysql_reads_it(oracle):
    setup = [
        "CREATE TABLE di (id INT PRIMARY KEY, s VARCHAR(40))",
        "INSERT INTO di VALUES (1, '2020-01-01'), (2, NULL), (3, '2020-01-01 10:00:00')",
    ]
    ours = _on_both(oracle, "di", setup)
    differ = []
    try:
        for e in INTERVAL_FIRST:
            try:
                theirs, mine = _answers(oracle, ours, f"SELECT id, {e} FROM di ORDER BY id")
            except noria_py.Error as err:
                differ.append((e, repr(err)))
                continue
            if [tuple(map(_shown, r)) for r in mine] != [tuple(map(_shown, r)) for r in theirs]:
                differ.append((e, theirs, mine))
    finally:
        ours.close()
    assert not differ, differ

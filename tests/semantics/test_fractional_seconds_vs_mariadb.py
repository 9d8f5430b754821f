"""DATETIME(n), TIMESTAMP(n) and TIME(n): a column keeps n fraction digits of a second.

MySQL 8 rounds a value with more digits to the column's (half away from zero, carrying into
the seconds, minutes, ... days); MariaDB truncates. The specification is MySQL's, so where the
two agree (no digit dropped, or the first dropped digit below 5) MariaDB is the oracle, and the
rounding itself is checked against MySQL 8's documented results. The declared precision shows
in SHOW CREATE TABLE and information_schema as in both."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.errors import DataError

DDL = (
    "CREATE TABLE fs (id INT PRIMARY KEY, a DATETIME, b DATETIME(2), c TIMESTAMP(3),"
    " t TIME, u TIME(4), w DATETIME(6))"
)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("DROP TABLE IF EXISTS fs")
        cur.execute(DDL)
    yield conn
    conn.close()


def test_declared_precision_shows_as_in_mariadb(oracle):
    conn = noria_py.connect()
    conn.execute(DDL)
    with oracle.cursor() as cur:
        cur.execute(
            "SELECT COLUMN_NAME, DATETIME_PRECISION FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = 'oracle' AND TABLE_NAME = 'fs' ORDER BY ORDINAL_POSITION"
        )
        theirs = list(cur.fetchall())
    ours = conn.execute(
        "SELECT COLUMN_NAME, DATETIME_PRECISION FROM information_schema.COLUMNS"
        " WHERE TABLE_NAME = 'fs' ORDER BY ORDINAL_POSITION"
    ).fetchall()
    assert [tuple(r) for r in ours] == theirs
    create = conn.execute("SHOW CREATE TABLE fs").fetchall()[0][1]
    for text in ("`a` datetime ", "`b` datetime(2)", "`c` timestamp(3)", "`u` time(4)"):
        assert text in create, create
    with oracle.cursor() as cur, pytest.raises(Exception) as theirs_error:
        cur.execute("CREATE TABLE fs7 (a DATETIME(7))")
    with pytest.raises(DataError) as ours_error:
        conn.execute("CREATE TABLE fs7 (a DATETIME(7))")
    assert ours_error.value.errno == theirs_error.value.args[0] == 1426


def _kept_down(micro: int, fsp: int) -> int:
    """A fraction with the digits beyond ``fsp`` made to round down (first dropped digit < 5)."""
    unit = 10 ** (6 - fsp)
    return micro // unit * unit + (micro % (unit // 2) if unit > 1 else 0)


MOMENT = st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2037, 12, 31))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(moment=MOMENT, seconds=st.integers(-3_000_000, 3_000_000), micro=st.integers(0, 999_999))
def test_values_where_rounding_and_truncating_agree_match_mariadb(oracle, moment, seconds, micro):
    base = moment.replace(microsecond=0)
    row = (
        1,
        base.replace(microsecond=_kept_down(micro, 0)),
        base.replace(microsecond=_kept_down(micro, 2)),
        base.replace(microsecond=_kept_down(micro, 3)),
        _time(seconds, _kept_down(micro, 0)),
        _time(seconds, _kept_down(micro, 4)),
        base.replace(microsecond=micro),
    )
    texts = [r if isinstance(r, int) else _text(r) for r in row]
    conn = noria_py.connect()
    conn.execute(DDL)
    conn.execute("INSERT INTO fs VALUES (?, ?, ?, ?, ?, ?, ?)", texts)
    with oracle.cursor() as cur:
        cur.execute("DELETE FROM fs")
        cur.execute("INSERT INTO fs VALUES (%s, %s, %s, %s, %s, %s, %s)", texts)
        cur.execute("SELECT * FROM fs")
        theirs = list(cur.fetchall())
    assert conn.execute("SELECT * FROM fs").fetchall() == theirs
    assert conn.execute("SELECT * FROM fs WHERE id = ?", (1,)).fetchall() == theirs


def _time(seconds: int, micro: int) -> dt.timedelta:
    """A TIME of ``seconds`` whole seconds and ``micro`` more, away from zero."""
    magnitude = abs(seconds) * 1_000_000 + micro
    return dt.timedelta(microseconds=-magnitude if seconds < 0 else magnitude)


def _text(v) -> str:
    if isinstance(v, dt.timedelta):
        total = v // dt.timedelta(microseconds=1)
        sign = "-" if total < 0 else ""
        total = abs(total)
        secs, micro = divmod(total, 1_000_000)
        return f"{sign}{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}.{micro:06d}"
    return v.isoformat(" ")


def test_rounding_is_mysql_8s():
    # MySQL 8.0 reference manual, "Fractional Seconds in Time Values": '17:51:04.777' into
    # TIME(2), DATETIME(2) and TIMESTAMP(2) columns is stored as 17:51:04.78.
    conn = noria_py.connect()
    conn.execute("CREATE TABLE fractest (c1 TIME(2), c2 DATETIME(2), c3 TIMESTAMP(2))")
    conn.execute(
        "INSERT INTO fractest VALUES"
        " ('17:51:04.777', '2018-09-08 17:51:04.777', '2018-09-08 17:51:04.777')"
    )
    assert conn.execute("SELECT * FROM fractest").fetchall() == [
        (
            dt.timedelta(hours=17, minutes=51, seconds=4, microseconds=780000),
            dt.datetime(2018, 9, 8, 17, 51, 4, 780000),
            dt.datetime(2018, 9, 8, 17, 51, 4, 780000),
        )
    ]
    # the carry runs through the seconds into the next year; a negative TIME rounds away from 0
    conn.execute("CREATE TABLE carry (id INT PRIMARY KEY, a DATETIME, t TIME)")
    conn.execute("INSERT INTO carry VALUES (1, '2024-12-31 23:59:59.5', '-10:00:00.5')")
    conn.execute("UPDATE carry SET a = '2024-02-28 23:59:59.49' WHERE id = 1")
    conn.execute("INSERT INTO carry VALUES (2, '2024-12-31 23:59:59.5', '10:59:59.999')")
    assert conn.execute("SELECT * FROM carry ORDER BY id").fetchall() == [
        (1, dt.datetime(2024, 2, 28, 23, 59, 59), -dt.timedelta(hours=10, seconds=1)),
        (2, dt.datetime(2025, 1, 1), dt.timedelta(hours=11)),
    ]

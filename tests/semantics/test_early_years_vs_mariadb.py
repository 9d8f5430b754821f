"""DATE and DATETIME values before the year 1000: stored, read back (from base storage, from a
cached view, through a fill) and printed with a four-digit year, as MariaDB does."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

DDL = "CREATE TABLE ey (id INT PRIMARY KEY, g INT, d DATE, t DATETIME(6))"
READS = (
    "SELECT id, d, t FROM ey ORDER BY id",
    "SELECT d, t, CAST(d AS CHAR), CAST(t AS CHAR), CONCAT(d, '|', t) FROM ey WHERE id = ?",
    "SELECT g, MIN(d), MAX(t), COUNT(*) FROM ey WHERE g = ? GROUP BY g",
    "SELECT id FROM ey WHERE d = ?",
)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS ey")
        cur.execute(DDL)
    yield conn
    conn.close()


def _mine(rows):
    return [tuple(r) for r in rows]


dates = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
times = st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 2), dates, times), min_size=1, max_size=6))
def test_early_years_read_back_as_in_mariadb(oracle, rows):
    conn = noria_py.connect()
    conn.execute(DDL)
    with oracle.cursor() as cur:
        cur.execute("DELETE FROM ey")
    for i, (g, d, t) in enumerate(rows):
        ds, ts = d.isoformat(), t.isoformat(" ")
        conn.execute("INSERT INTO ey VALUES (?, ?, ?, ?)", (i, g, ds, ts))
        with oracle.cursor() as cur:
            cur.execute("INSERT INTO ey VALUES (%s, %s, %s, %s)", (i, g, ds, ts))
    params = {
        READS[0]: [()],
        READS[1]: [(i,) for i in range(len(rows))],
        READS[2]: [(g,) for g in range(3)],
        READS[3]: [(rows[0][1].isoformat(),)],
    }
    for _ in range(2):  # the second round reads the cached views
        for sql in READS:
            for p in params[sql]:
                with oracle.cursor() as cur:
                    cur.execute(sql.replace("?", "%s"), p)
                    theirs = list(cur.fetchall())
                assert _mine(conn.execute(sql, p).fetchall()) == theirs, (sql, p)

"""A DATETIME(n) or TIME(n) read as a string shows n fraction digits, compared with MariaDB.

MySQL's text of such a value always has the column's fraction digits (``.00`` for a whole
second in a DATETIME(2)); the value itself does not say how many, so the compiler formats
the column where a string function, LIKE or CAST AS CHAR reads it, on every path: cached,
with a parameter, answered by base storage, grouped.
"""

from __future__ import annotations

import datetime as dt

import pytest

import noria_py

SCHEMA = (
    "CREATE TABLE fr (id INT PRIMARY KEY, ts DATETIME(2), tm TIME(3), t6 DATETIME(6), t0 DATETIME)"
)
ROWS = [
    (1, dt.datetime(2020, 1, 1), dt.timedelta(hours=1, minutes=2, seconds=3, microseconds=500000),
     dt.datetime(2020, 1, 1, 0, 0, 0, 500000), dt.datetime(2020, 1, 1)),
    (2, dt.datetime(2021, 1, 1, 0, 0, 0, 250000), -dt.timedelta(hours=1, minutes=2, seconds=3),
     dt.datetime(2020, 1, 1), None),
]  # fmt: skip


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    mariadb_oracle.query("DROP TABLE IF EXISTS fr")
    mariadb_oracle.query(SCHEMA)
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO fr VALUES (%s, %s, %s, %s, %s)", ROWS)
    flow = noria_py.connect()
    flow.execute(SCHEMA)
    flow.executemany("INSERT INTO fr VALUES (?, ?, ?, ?, ?)", ROWS)
    yield flow, mariadb_oracle
    flow.close()


@pytest.mark.parametrize(
    "sql, params",
    [
        ("SELECT id, CONCAT(ts), CAST(ts AS CHAR), CONCAT(tm), LENGTH(ts), UPPER(ts), "
         "ts LIKE '%.00', CONCAT(t6), CONCAT(t0), LEFT(ts, 22), CONCAT_WS('/', ts, tm) "
         "FROM fr ORDER BY id", ()),
        ("SELECT id, CONCAT(ts), CAST(tm AS CHAR) FROM fr WHERE id = ?", (1,)),
        ("SELECT id, CONCAT(ts), CAST(tm AS CHAR) FROM fr WHERE id < ? ORDER BY id", (5,)),
        ("SELECT id, GROUP_CONCAT(ts) FROM fr GROUP BY id ORDER BY id", ()),
        ("SELECT id FROM fr WHERE CONCAT(ts) = '2020-01-01 00:00:00.00'", ()),
        ("SELECT id, ts + 0, DATE_ADD(ts, INTERVAL 1 SECOND), ts = '2020-01-01' FROM fr "
         "ORDER BY id", ()),
    ],
)  # fmt: skip
def test_fraction_digits_of_a_temporal_read_as_text(engines, sql, params):
    flow, oracle = engines
    with oracle.conn.cursor() as cur:
        cur.execute(sql.replace("?", "%s"), params or None)
        want = [tuple(r) for r in cur.fetchall()]
    got = [tuple(r) for r in flow.execute(sql, params).fetchall()]
    assert got == want

"""STDDEV, VARIANCE and their forms, and numeric aggregates of dates, compared with MariaDB.

The value is a DOUBLE. MariaDB shows it with its argument's decimals plus 4 when the argument
has fixed decimals (an integer, a DECIMAL, a DATE), so a client reads ``2.4166`` for STDDEV of
integers where the engine gave ``2.4166091947189146``; of a DOUBLE or a string it shows every
digit. Arithmetic on the value uses the whole double. Hypothesis draws the rows; each query
runs cached (the dataflow) and on base storage (``dataflow=False``), and values and Python
types must be MariaDB's as pymysql reads them.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

DDL = (
    "CREATE TABLE st (id INT PRIMARY KEY, g INT, i INT, d DECIMAL(7,2), f DOUBLE, dt DATE,"
    " ts DATETIME, tm TIME)"
)
QUERIES = [
    "SELECT STDDEV(i), VARIANCE(i), STD(d), VAR_SAMP(d), STDDEV_SAMP(i), VAR_POP(f), STDDEV(dt)"
    " FROM st",
    "SELECT g, STDDEV_POP(i), VARIANCE(d), STDDEV(f) FROM st GROUP BY g ORDER BY g",
    "SELECT g, STDDEV(i / 3), STDDEV(d + 0.125), VAR_SAMP(i * 2) FROM st GROUP BY g ORDER BY g",
    "SELECT g, STDDEV(d) > 1, VARIANCE(i) < 2 FROM st GROUP BY g ORDER BY g",
    "SELECT g, STDDEV(i) FROM st WHERE g = 1 GROUP BY g",
    # a date, a datetime and a time are the numbers their digits spell (they were read as text:
    # SUM(dt) was the sum of the years on base storage, and an error in the dataflow)
    "SELECT g, SUM(dt), AVG(ts), BIT_OR(dt), STDDEV(tm), VARIANCE(dt), SUM(tm) FROM st"
    " GROUP BY g ORDER BY g",
]

ROWS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.none() | st.integers(-1000, 1000),
        st.none()
        | st.decimals(min_value=-99999, max_value=99999, places=2, allow_nan=False).map(
            lambda d: d.quantize(Decimal("0.01"))
        ),
        st.none() | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    ),
    max_size=12,
).map(lambda rs: [(i + 1, *r) for i, r in enumerate(rs)])


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    yield conn
    conn.close()


def decimals(v: float) -> int:
    text = repr(v)
    return 99 if "e" in text or "." not in text else len(text.split(".")[1])


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if type(a) is not type(b):
        return False
    if not isinstance(a, float) or a == b:
        return a == b
    if math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
        return True  # MariaDB adds doubles in row order, the engine exactly
    # a value shown with fixed decimals: MariaDB rounded the double it summed in row order, so
    # the last shown digit may differ by one; never more digits than MariaDB shows
    da = decimals(a)
    return decimals(b) <= da and abs(a - b) <= 1.01 * 10.0**-da


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ROWS)
def test_statistics_show_mariadbs_digits(oracle, rows):
    data = [
        (i, g, v, d, f)
        + (
            (None, None, None)
            if v is None
            else (
                f"2024-01-{(abs(v) % 28) + 1:02d}",
                f"2023-12-{(abs(v) % 28) + 1:02d} 10:{abs(v) % 60:02d}:07",
                f"{v // 10}:{abs(v) % 60:02d}:00",
            )
        )
        for i, g, v, d, f in rows
    ]
    want = {}
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS st")
        cur.execute(DDL)
        if data:
            cur.executemany("INSERT INTO st VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", data)
        for sql in QUERIES:
            cur.execute(sql)
            want[sql] = [tuple(r) for r in cur.fetchall()]
    for options in ({}, {"dataflow": False}):
        conn = noria_py.connect(**options)
        conn.execute(DDL)
        if data:
            conn.executemany("INSERT INTO st VALUES (?, ?, ?, ?, ?, ?, ?, ?)", data)
        for sql in QUERIES:
            got = [tuple(r) for r in conn.execute(sql).fetchall()]
            assert len(got) == len(want[sql]), (options, sql)
            for w, g in zip(want[sql], got):
                assert all(same(a, b) for a, b in zip(w, g)), (options, sql, w, g)
        conn.close()

"""A DATE or DATETIME column compared with a string parameter, against MariaDB.

MySQL compares a temporal column with a string as dates: a datetime against a DATE as the
DATE at midnight ('2020-01-01 10:00:00' is above the DATE 2020-01-01 and never equal to it),
'20200101' as the date it spells, a valid date followed by other characters as that date, a
date with zero parts ('2024-00-00') between the last date before it and the first after it,
and any other string ('3x', '') as the zero date, below every date. Each comparison runs on
every path that answers it: a reader's key lookup (=), a range reader (<, >, BETWEEN), base
storage for a proxied query (a parameter beside a literal in IN, an OR), and an expression
over two columns.
"""

from __future__ import annotations

import pytest

import noria_py

SETUP = [
    "CREATE TABLE dc (id INT PRIMARY KEY, s VARCHAR(30), d DATE, t DATETIME, KEY (d), KEY (t))",
    "INSERT INTO dc VALUES (1, '3x', '2020-01-01', '2020-01-01 10:00:00'),"
    " (2, '2020-13-45', '1999-05-05', '1999-05-05 00:00:00'),"
    " (3, '2024-00-00', '2024-01-15', '2024-01-15 12:00:00'),"
    " (4, '', '2024-02-01', '2024-02-01 00:00:00'), (5, '2020-01-01', NULL, NULL),"
    " (6, 'abc', '1999-01-01', '1999-01-01 00:00:00')",
]
VALUES = (
    "3x", "abc", "", "2024-00-00", "2024-02-00", "0000-00-00", "2020-01-01 10:00:00",
    "2020-01-01 00:00:00", "2020-01-01 10:00:00x", "2020-01-01x", "2024-01-15 12:00:00",
    "2020-01-01", "20200101",
)  # fmt: skip
ONE = [
    "SELECT id FROM dc WHERE {c} {op} %s ORDER BY id".replace("{op}", op)
    for op in (">", ">=", "<", "<=", "=")
] + [
    "SELECT id FROM dc WHERE {c} > %s OR id = 2 ORDER BY id",
    "SELECT id FROM dc WHERE {c} = %s OR id = 2 ORDER BY id",
    "SELECT COUNT(*) FROM dc WHERE {c} > %s",
]
# (MariaDB's IN does not read a valid date followed by other characters as that date, as its
# = does: those strings are left out of IN)
IN_LIST = "SELECT id FROM dc WHERE {c} IN (%s, '1999-05-05') ORDER BY id"
PREFIXED = ("2020-01-01 10:00:00x", "2020-01-01x")
TWO = [
    "SELECT id FROM dc WHERE {c} BETWEEN %s AND %s ORDER BY id",
]
PAIRS = (
    ("3x", "2021-01-01"), ("2024-00-00", "2024-02-00"), ("2020-01-01x", "zz"), ("", "2020-01-01"),
)  # fmt: skip
COLUMNS_COMPARED = (
    "SELECT id, s > d, s < d, s = d, d > s, s <=> d, s > t, s < t, d BETWEEN s AND '2030-01-01'"
    " FROM dc ORDER BY id"
)


def _differences(oracle, ours, cases) -> list:
    """(query, parameters, MariaDB's rows, ours) of each case whose answers differ."""
    out = []
    for q, params in cases:
        with oracle.cursor() as cur:
            cur.execute(q, params)
            want = [tuple(r) for r in cur.fetchall()]
        got = [tuple(r) for r in ours.execute(q.replace("%s", "?"), params).fetchall()]
        if got != want:
            out.append((q, params, want, got))
    return out


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_date_comparisons")
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS dc")
        for sql in SETUP:
            cur.execute(sql)
    yield conn
    conn.close()


def test_temporal_columns_against_strings(oracle):
    ours = noria_py.connect()
    for sql in SETUP:
        ours.execute(sql)
    cases = []
    for c in ("d", "t"):
        for q in ONE:
            cases += [(q.format(c=c), (v,)) for v in VALUES]
        cases += [(IN_LIST.format(c=c), (v,)) for v in VALUES if v not in PREFIXED]
        for q in TWO:
            cases += [(q.format(c=c), p) for p in PAIRS]
    cases.append((COLUMNS_COMPARED, ()))
    try:
        differ = _differences(oracle, ours, cases)
    finally:
        ours.close()
    assert not differ, differ


TIME_SETUP = [
    "CREATE TABLE tc (id INT PRIMARY KEY, tm TIME, s VARCHAR(30), KEY (tm))",
    "INSERT INTO tc VALUES (1, '10:00:00', '3x'), (2, '-01:00:00', '10'),"
    " (3, '100:00:00', '2020-01-01 10:00:00'), (4, '00:00:03', 'abc'), (5, NULL, NULL)",
]


def test_time_columns_against_strings_and_numbers(oracle):
    """A TIME compared with a string reads it as far as it is a time (no time at all is
    00:00:00), with a number as HHMMSS: through a reader's key and range lookups, in base
    storage (whose TIME text does not order 100:00:00 or -01:00:00 as times) and in an
    expression. (Before, a string bound of a TIME range failed with a TypeError.)"""
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS tc")
        for sql in TIME_SETUP:
            cur.execute(sql)
    ours = noria_py.connect()
    for sql in TIME_SETUP:
        ours.execute(sql)
    values = (
        "3x", "abc", "", "10", "10:00", "99:99:99", "10:00:00x", "100000", "1 02:00:00",
        "-01:00:00", 100000, -10000, 3,
    )  # fmt: skip
    cases = [
        (q.format(op=op), (v,))
        for q in (
            "SELECT id FROM tc WHERE tm {op} %s ORDER BY id",
            "SELECT id FROM tc WHERE tm {op} %s OR id = 5 ORDER BY id",  # base storage's
        )
        for op in (">", ">=", "<", "<=", "=")
        for v in values
    ]
    cases.append(("SELECT id, tm > s, tm = s, s < tm, tm <= s FROM tc ORDER BY id", ()))
    try:
        differ = _differences(oracle, ours, cases)
    finally:
        ours.close()
    assert not differ, differ

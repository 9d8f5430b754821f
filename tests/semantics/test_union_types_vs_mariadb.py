"""The type of a UNION's columns, compared with MariaDB.

MySQL types each column of a UNION once, from all its branches, and converts every branch's
values to it: an INT beside a DECIMAL(6,2) comes back as ``1.00``, a number beside a string as
its text, a DATE beside a DATETIME as a DATETIME, a signed beside an unsigned integer as a
DECIMAL. SQLite and a plain union of the branches' rows hand back each branch's own values.

Hypothesis picks two or three branches, each a column of ``ut`` or a literal, and one of the
query forms the engine answers differently: cached by the dataflow (with or without a
parameter), answered by base storage (a range parameter, a derived table with ORDER BY and
LIMIT, INTERSECT), and a UNION inside a derived table. The rows, values and Python types must
be MariaDB's.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

SCHEMA = (
    "CREATE TABLE ut (id INT PRIMARY KEY, ti TINYINT, iu INT UNSIGNED, bi BIGINT, "
    "d2 DECIMAL(6,2), d0 DECIMAL(8,0), d4 DECIMAL(12,4), f DOUBLE, s VARCHAR(20), "
    "vb VARBINARY(10), dt DATE, ts DATETIME, tm TIME, y YEAR, en ENUM('lo','hi'))"
)
ROWS = [
    (1, -5, 7, 9007199254740993, Decimal("1.50"), Decimal("12"), Decimal("-0.0625"), 0.5,
     "Ab", b"x\x00y", dt.date(2024, 2, 29), dt.datetime(2024, 3, 1, 10, 0, 0),
     dt.timedelta(hours=10, minutes=30), 2021, "hi"),
    (2, 127, 4000000000, -3, Decimal("-3.25"), Decimal("-7"), Decimal("2.5000"), 1e20, "",
     b"", dt.date(1999, 12, 31), dt.datetime(2000, 1, 1, 0, 0, 1),
     dt.timedelta(hours=-1, minutes=-15), 1999, "lo"),
    (3, None, None, None, None, None, None, None, None, None, None, None, None, None, None),
    (4, 0, 0, 0, Decimal("0.00"), Decimal("0"), Decimal("0.0000"), -2.5, "12",
     b"12", dt.date(2000, 1, 1), dt.datetime(2020, 2, 29, 23, 59, 59), dt.timedelta(0),
     2000, "hi"),
]  # fmt: skip
COLUMNS = ["id", "ti", "iu", "bi", "d2", "d0", "d4", "f", "s", "vb", "dt", "ts", "tm", "y", "en"]
LITERALS = ["1", "-2", "2.5", "0.125", "'a'", "'7'", "NULL", "1e0", "0x41"]

# each form is one query; {u} is the UNION, its first column named x
FORMS = [
    "{u}",  # cached by the dataflow
    "{u_param}",  # cached, with a `col = ?` parameter in each branch
    "{u_range}",  # a range parameter: answered by base storage
    "SELECT * FROM ({u} ORDER BY 1 LIMIT 5) q",  # base storage, the union in a derived table
    "SELECT x FROM ({u}) q WHERE x IS NOT NULL",  # a filter over the union
]


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    oracle = mariadb_oracle
    oracle.query("DROP TABLE IF EXISTS ut")
    oracle.query(SCHEMA)
    marks = ", ".join(["%s"] * len(COLUMNS))
    with oracle.conn.cursor() as cur:
        cur.executemany(f"INSERT INTO ut VALUES ({marks})", ROWS)
    flow = noria_py.connect()
    flow.execute(SCHEMA)
    flow.executemany(f"INSERT INTO ut VALUES ({', '.join('?' * len(COLUMNS))})", ROWS)
    yield flow, oracle
    flow.close()


def _key(v):
    if isinstance(v, float):
        return ("float", repr(v))
    return (type(v).__name__, str(v) if isinstance(v, Decimal) else repr(v))


def _bag(rows) -> Counter:
    return Counter(tuple(_key(v) for v in r) for r in rows)


def check(engines, sql: str, params: tuple) -> None:
    flow, oracle = engines
    try:
        with oracle.conn.cursor() as cur:
            cur.execute(sql.replace("?", "%s"), params or None)
            want = _bag(cur.fetchall())
    except pymysql.MySQLError as e:
        want = ("error", e.args[0])
    try:
        got = _bag(flow.execute(sql, params).fetchall())
    except E.Error as e:
        got = ("error", e.errno)
    assert got == want, f"{sql} {params}\n   MariaDB {want}\n   noria   {got}"


@st.composite
def unions(draw):
    n = draw(st.integers(2, 3))
    items = draw(
        st.lists(st.sampled_from(COLUMNS[1:] + LITERALS), min_size=n, max_size=n).filter(
            lambda xs: any(x in COLUMNS for x in xs)
        )
    )
    op = draw(st.sampled_from(["UNION ALL", "UNION"]))
    form = draw(st.sampled_from(FORMS))
    key = draw(st.integers(1, 4))

    def branch(item, i, where):
        name = " AS x" if i == 0 else ""
        return f"SELECT {item}{name} FROM ut{where}"

    def union(where):
        return f" {op} ".join(branch(item, i, where) for i, item in enumerate(items))

    params: tuple = ()
    if "{u_param}" in form:
        sql = union(" WHERE id = ?")
        params = (key,) * n
    elif "{u_range}" in form:
        sql = union(" WHERE id < ?")
        params = (key,) * n
    else:
        sql = form.format(u=union(""))
    return sql, params


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=unions())
def test_union_columns_take_mysqls_merged_type(engines, q):
    check(engines, *q)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM ut UNION ALL SELECT d2 FROM ut",
        "SELECT d2 FROM ut UNION ALL SELECT d4 FROM ut",
        "SELECT s FROM ut UNION ALL SELECT id FROM ut",
        "SELECT s FROM ut UNION ALL SELECT d2 FROM ut",
        "SELECT id FROM ut UNION ALL SELECT iu FROM ut",
        "SELECT y FROM ut UNION ALL SELECT id FROM ut",
        "SELECT dt FROM ut UNION ALL SELECT ts FROM ut",
        "SELECT tm FROM ut UNION ALL SELECT id FROM ut",
        "SELECT s FROM ut UNION ALL SELECT vb FROM ut",
        # a binary literal yields to a text column's character set (its coercibility): text,
        # beside literals, numbers or a binary column binary; not UTF-8, 1300
        "SELECT en AS x FROM ut UNION ALL SELECT 0x41 FROM ut",
        "SELECT s FROM ut UNION ALL SELECT X'C3A9' FROM ut WHERE id = 1 UNION SELECT 5",
        "SELECT 0x41, s FROM ut UNION ALL SELECT s, _binary'b' FROM ut",
        "SELECT s FROM ut WHERE id < ? UNION ALL SELECT b'1000001' FROM ut",
        "SELECT s FROM ut UNION ALL SELECT 0xFF FROM ut",
        "SELECT 'z' FROM ut UNION ALL SELECT 0x41 FROM ut UNION ALL SELECT id FROM ut",
        "SELECT s FROM ut UNION ALL SELECT 0x41 FROM ut UNION ALL SELECT vb FROM ut",
        "SELECT id, d2 FROM ut INTERSECT SELECT 1, 1.5",
        "SELECT id FROM ut EXCEPT SELECT d0 FROM ut",
        "SELECT x, COUNT(*) FROM (SELECT s AS x FROM ut UNION ALL SELECT id FROM ut) q GROUP BY x",
        "SELECT d2 FROM ut UNION ALL SELECT NULL FROM ut UNION ALL SELECT id FROM ut",
        "(SELECT id FROM ut ORDER BY id LIMIT 1) UNION ALL (SELECT d2 FROM ut ORDER BY d2 LIMIT 1)",
        # a bare NULL beside unsigned integers merges as a signed one: a DECIMAL
        "SELECT iu AS x FROM ut UNION ALL SELECT NULL FROM ut",
        "SELECT NULL AS x FROM ut UNION SELECT iu FROM ut",
        "SELECT y FROM ut UNION ALL SELECT NULL FROM ut UNION ALL SELECT NULL FROM ut",
        "SELECT x FROM (SELECT iu AS x FROM ut UNION ALL SELECT NULL FROM ut) q WHERE x > 5",
        "SELECT ti FROM ut UNION ALL SELECT NULL FROM ut",
        "SELECT iu FROM ut UNION ALL SELECT CAST(NULL AS UNSIGNED) FROM ut",  # a typed NULL
    ],
)
def test_named_unions(engines, sql):
    check(engines, sql, (3,) if "?" in sql else ())


def test_a_year_is_unsigned(engines):
    """MySQL reads a YEAR as unsigned: beside a signed integer the union is a DECIMAL, and
    arithmetic below zero overflows."""
    check(engines, "SELECT y FROM ut UNION ALL SELECT ti FROM ut", ())
    check(engines, "SELECT y - 3000 FROM ut WHERE id = 1", ())


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id, COALESCE(iu, 0), IFNULL(iu, 0), IF(id = 1, iu, 0), "
        "CASE WHEN id = 1 THEN iu ELSE 0 END, COALESCE(iu, bi), IF(id = 1, ti, iu), "
        "GREATEST(ti, iu), LEAST(iu, 0), COALESCE(y, 1) FROM ut",
        "SELECT id, COALESCE(iu, 0), IF(id = 1, iu, bi), GREATEST(ti, iu) FROM ut WHERE id < 9",
        "SELECT id, COALESCE(iu, 0) FROM ut WHERE id = 1",
        "SELECT SUM(COALESCE(iu, 0)), MAX(IF(id = 1, iu, ti)) FROM ut",
        "SELECT id, IF(id = 1, d2, ti), COALESCE(d0, d4), IFNULL(s, id), IF(id = 2, dt, ts) FROM ut",
        # a NULL argument is a signed integer beside an unsigned one, except IF()'s and the
        # NULL of a CASE without ELSE
        "SELECT id, COALESCE(iu, NULL), IFNULL(NULL, iu), CASE WHEN id = 1 THEN iu ELSE NULL END,"
        " CASE WHEN id = 1 THEN iu WHEN id = 2 THEN NULL END, CASE WHEN id = 1 THEN iu END,"
        " IF(id = 1, iu, NULL), IF(id = 1, NULL, y), COALESCE(ti, NULL),"
        " COALESCE(iu, CAST(NULL AS UNSIGNED)) FROM ut",
    ],
)
def test_conditionals_merge_types_as_unions_do(engines, sql):
    """IF, CASE, COALESCE, IFNULL, GREATEST and LEAST merge their arguments' types by the
    same rules: a signed beside an unsigned integer is a DECIMAL (``COALESCE(iu, 0)``)."""
    check(engines, sql, ())


NULL_ONLY = ["CASE WHEN id = 0 THEN NULL END", "CASE id WHEN 0 THEN NULL END"]


@pytest.mark.parametrize("item", ["ti", "iu", "bi", "d2", "f", "s", "vb", "dt", "ts", "y"])
@pytest.mark.parametrize("null", NULL_ONLY)
@pytest.mark.parametrize(
    "form",
    [
        "SELECT {a} AS x FROM ut UNION ALL SELECT {b} FROM ut",  # cached by the dataflow
        "SELECT {b} AS x FROM ut UNION SELECT {a} FROM ut",
        # answered by base storage, the union typed for it
        "SELECT * FROM (SELECT {a} AS x FROM ut UNION SELECT {b} FROM ut ORDER BY 1 LIMIT 50) q",
        "SELECT * FROM (SELECT SUM(1) AS x, {a} AS y FROM ut GROUP BY id UNION"
        " SELECT id, {b} FROM ut ORDER BY 1, 2 LIMIT 50) q",
    ],
)
def test_a_branch_that_can_only_be_null_takes_the_others_type(engines, form, null, item):
    """A branch item that can only be NULL (a CASE or IF of NULLs) is typed as a NULL is: the
    union's column takes its other branches' type (it left the union untyped, and base
    storage's own values came back: ``'1'`` for a DECIMAL beside a string column's NULLs)."""
    check(engines, form.format(a=item, b=null), ())


@pytest.mark.parametrize("item", ["ti", "iu", "d2", "f", "s", "vb", "dt"])
@pytest.mark.parametrize(
    "form",
    [
        "SELECT {a} AS x FROM ut UNION ALL SELECT {b} FROM ut",
        "SELECT * FROM (SELECT {a} AS x FROM ut UNION SELECT {b} FROM ut ORDER BY 1 LIMIT 50) q",
        "SELECT id, COALESCE({b}, {a}) FROM ut",
        "SELECT id, IFNULL({b}, {a}), IF(id = 1, {b}, {a}) FROM ut",
    ],
)
def test_an_if_of_nulls_is_a_string(engines, form, item):
    """MySQL types ``IF(c, NULL, NULL)`` as a string: beside a number in a UNION, a COALESCE
    or another IF, the column is text (a CASE of NULLs is not: it takes the others' type)."""
    check(engines, form.format(a=item, b="IF(id > 0, NULL, NULL)"), ())

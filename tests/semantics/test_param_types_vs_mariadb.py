"""Parameters of another type than the column they are compared with, compared with MariaDB.

MySQL compares a bound value as its own type: ``s = ?`` with the integer 0 compares the string
column as a number (``'x'`` matches), ``id IN (?)`` with ``'x'`` compares as numbers too
(``'x'`` is 0). A cached lookup keys by the column's type, so such a value is answered by the
statement with the value written in as a literal of its type (``engine.binds_otherwise``). The
embedded API (dataflow and base storage) is compared with MariaDB, where pymysql writes the
values into the text as literals.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

DDL = "CREATE TABLE pt (id INT PRIMARY KEY, s VARCHAR(10), d DECIMAL(10,2), f DOUBLE, b BIGINT)"
ROWS = [
    (0, "x", Decimal("0.00"), 0.0, 0),
    (1, "1", Decimal("1.00"), 1.0, 1),
    (2, " 1.0", Decimal("1.50"), 1.5, -1),
    (3, "1e1", Decimal("10.00"), 10.0, 10),
    (4, "abc", Decimal("-2.25"), -2.25, 9007199254740993),
    (5, "0", None, None, None),
    (6, "10", Decimal("99999999.99"), 0.5, 2),
    (7, "", Decimal("0.50"), 2.0, 3),
]
COLUMNS = ["id", "s", "d", "f", "b"]
SHAPES = [
    "SELECT id FROM pt WHERE {c} = ?",
    "SELECT id FROM pt WHERE {c} IN (?, ?)",
    "SELECT id FROM pt WHERE {c} = ? OR id = ?",
    "SELECT COUNT(*) FROM pt WHERE {c} = ?",
]

values = st.one_of(
    st.sampled_from([0, 1, 10, -1, 2, 9007199254740992]),
    st.sampled_from(["x", "0", "1", "1.0", " 1", "1e1", "abc", "", "10", "1.50", "-2.25"]),
    st.sampled_from([0.0, 1.0, 1.5, 10.0, 0.5, -2.25]),
    st.sampled_from([Decimal("1.5"), Decimal("0"), Decimal("10.00"), Decimal("-2.25")]),
    st.none(),
)


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    mariadb_oracle.query("DROP TABLE IF EXISTS pt")
    mariadb_oracle.query(DDL)
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO pt VALUES (%s, %s, %s, %s, %s)", ROWS)
    mariadb_oracle.conn.commit()
    conns = []
    for opts in ({}, {"dataflow": False}):
        c = noria_py.connect(**opts)
        c.execute(DDL)
        c.executemany("INSERT INTO pt VALUES (?, ?, ?, ?, ?)", ROWS)
        conns.append(c)
    yield conns, mariadb_oracle
    for c in conns:
        c.close()


def check(engines, shape: str, col: str, params: tuple) -> list[str]:
    conns, oracle = engines
    sql = shape.format(c=col)
    n = sql.count("?")
    params = tuple(params[:n])
    want, _ = oracle.query(sql.replace("?", "%s"), params)
    want = sorted(tuple(r) for r in want)
    bad = []
    for c, path in zip(conns, ("dataflow", "storage")):
        got = sorted(tuple(r) for r in c.execute(sql, params).fetchall())
        if got != want:
            bad.append(f"{path}: {sql} {params!r}: MariaDB {want}, noria {got}")
    return bad


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(SHAPES),
    col=st.sampled_from(COLUMNS),
    params=st.tuples(values, values),
)
def test_parameters_of_any_type_compare_as_mariadb(engines, shape, col, params):
    problems = check(engines, shape, col, params)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "shape,col,params",
    [
        (SHAPES[0], "s", (0, None)),  # 'x', 'abc', '0', '' are 0 as numbers
        (SHAPES[0], "s", (1, None)),  # '1' and ' 1.0'
        (SHAPES[1], "id", ("x", "1abc")),
        (SHAPES[0], "id", ("x", None)),
        (SHAPES[0], "d", ("1.50", None)),
        (SHAPES[0], "d", ("x", None)),  # a DECIMAL against 'x': 0 (it matched nothing)
        (SHAPES[0], "d", ("1.5abc", None)),
        (SHAPES[0], "s", (10.0, None)),  # '1e1' and '10'
        (SHAPES[2], "s", (0, 3)),
    ],
)
def test_named_parameter_types(engines, shape, col, params):
    problems = check(engines, shape, col, params)
    assert not problems, "\n".join(problems)

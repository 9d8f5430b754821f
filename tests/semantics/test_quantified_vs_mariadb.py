"""Comparisons with ANY / SOME / ALL (subquery), compared with MariaDB.

``x = ANY`` is IN and ``x <> ALL`` is NOT IN; every other comparison with a quantified subquery
was error 1235. They are now written as EXISTS over the subquery's one column with MySQL's
three-valued answer (``noria_py.sql.parse._quantified``): NULL when no row decides and some
value, or ``x``, is NULL; an empty subquery makes ANY false and ALL true. Hypothesis draws the
tables (NULLs, case-insensitive duplicates), the operator, the quantifier, the subquery's filter
(none, correlated, empty, grouped) and where the comparison stands (WHERE, select list, under
NOT). Also: a column qualified by a table's name that a subquery reads too (``FROM t WHERE t.x
IN (SELECT x FROM t)``) was reported ambiguous (1052).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import two_tables
from .two_tables import compare

A = "CREATE TABLE qa (id INT PRIMARY KEY, x INT, s VARCHAR(10))"
B = "CREATE TABLE qb (id INT PRIMARY KEY, x INT, s VARCHAR(10))"

ROWS = st.lists(
    st.tuples(st.none() | st.integers(0, 4), st.none() | st.sampled_from(["a", "A ", "b", "c"])),
    max_size=6,
).map(lambda rs: [(i + 1, x, s) for i, (x, s) in enumerate(rs)])

SUBQUERIES = [
    "SELECT {c} FROM qb",
    "SELECT {c} FROM qb WHERE qb.id = qa.id",
    "SELECT {c} FROM qb WHERE qb.id >= qa.id",
    "SELECT {c} FROM qb WHERE {c} IS NOT NULL",
    "SELECT {c} FROM qb WHERE id > 100",
    "SELECT MAX({c}) FROM qb GROUP BY id % 2",
    "SELECT {c} FROM qb UNION SELECT {c} FROM qa WHERE id = 1",
]
SHAPES = [
    "SELECT id FROM qa WHERE {cmp} ORDER BY id",
    "SELECT id, {cmp} FROM qa ORDER BY id",
    "SELECT id FROM qa WHERE NOT ({cmp}) ORDER BY id",
    "SELECT COUNT(*) FROM qa WHERE ({cmp}) IS NULL",
]


def query(shape: str, op: str, quant: str, sub: str, col: str) -> str:
    cmp = f"qa.{col} {op} {quant} ({sub.format(c=col)})"
    return shape.format(cmp=cmp)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    yield conn
    conn.close()


def load(oracle, a_rows, b_rows):
    return two_tables.load(oracle, [("qa", A, a_rows), ("qb", B, b_rows)])


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    a_rows=ROWS,
    b_rows=ROWS,
    shape=st.sampled_from(SHAPES),
    op=st.sampled_from(["=", "<>", "<", "<=", ">", ">="]),
    quant=st.sampled_from(["ANY", "SOME", "ALL"]),
    sub=st.sampled_from(SUBQUERIES),
    col=st.sampled_from(["x", "s"]),
)
def test_quantified_comparisons(oracle, a_rows, b_rows, shape, op, quant, sub, col):
    conn = load(oracle, a_rows, b_rows)
    try:
        compare(oracle, conn, query(shape, op, quant, sub, col))
    finally:
        conn.close()


NAMED = [
    "SELECT id FROM qa WHERE x > ANY (SELECT x, id FROM qb)",  # 1241
    "SELECT id, x >= ALL (SELECT x FROM qb), s < SOME (SELECT s FROM qb) FROM qa ORDER BY id",
    "SELECT qa.id FROM qa WHERE qa.x IN (SELECT x FROM qa WHERE x > 1) ORDER BY 1",
    "SELECT qb.id, (SELECT MAX(qb.x) FROM qb) FROM qb ORDER BY 1",
    "SELECT qb.id FROM qb WHERE EXISTS (SELECT 1 FROM qb WHERE qb.id = 1) ORDER BY 1",
    "SELECT qb.id FROM qb WHERE qb.x = (SELECT MIN(qb.x) FROM qb WHERE qb.s <> 'x')",
]


@pytest.mark.parametrize("sql", NAMED)
def test_named(oracle, sql):
    conn = load(
        oracle,
        [(1, 1, "a"), (2, None, "b"), (3, 3, None), (4, 4, "A "), (5, 2, "c")],
        [(1, 1, "A"), (2, None, "x"), (3, 3, "b ")],
    )
    try:
        compare(oracle, conn, sql)
    finally:
        conn.close()

"""Derived tables, CTEs and UNIONs in FROM, compared with MariaDB.

A query over a derived table is answered by base storage. Its outer expressions must be
evaluated with MySQL's semantics like any other, so the derived table's columns are typed:
passed-through columns keep their table's type, and computed ones get the evaluator's kind and
scale. Without that, SQLite's own arithmetic, comparisons and collation answered.

Hypothesis draws an expression from the expression grammar of
``test_expressions_vs_mariadb`` and evaluates it over ``vals`` seen through one of several
shapes: a derived table, a CTE, a UNION ALL of two halves. Each shape either passes the columns
through or computes each from its column with the same type (``i + 0``, ``CONCAT(s, '')``,
``DATE_ADD(dt, INTERVAL 0 DAY)``, ...). Values and Python types must match MariaDB's.
"""

from __future__ import annotations

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

from . import oracle_data as D
from .test_expressions_vs_mariadb import _same, expressions

PASS = "id, s, i, d, f, dt, ts, tm"
COMPUTED = (
    "id, CONCAT(s, '') AS s, i + 0 AS i, d + 0 AS d, f * 1e0 AS f, "
    "DATE_ADD(dt, INTERVAL 0 DAY) AS dt, ts + INTERVAL 0 SECOND AS ts, "
    "ADDTIME(tm, '00:00:00') AS tm"
)


def shapes(cols: str) -> list[str]:
    """Each ``{expr}`` query over ``vals`` seen through a derived table, as (id, value)."""
    return [
        f"SELECT id, {{expr}} FROM (SELECT {cols} FROM vals) x ORDER BY id",
        f"WITH c AS (SELECT {cols} FROM vals) SELECT id, {{expr}} FROM c ORDER BY id",
        f"SELECT id, {{expr}} FROM (SELECT {cols} FROM vals WHERE id <= 4 UNION ALL "
        f"SELECT {cols} FROM vals WHERE id > 4) AS u ORDER BY id",
        f"WITH a AS (SELECT {cols} FROM vals), b AS (SELECT * FROM a) "
        f"SELECT b.id, {{expr}} FROM b JOIN vals v ON v.id = b.id ORDER BY b.id",
    ]


SHAPES = shapes(PASS) + shapes(COMPUTED)


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    D.load_mariadb(mariadb_oracle)
    mariadb_oracle.query("SET time_zone = '+00:00'")
    flow = noria_py.connect()
    D.load_noria(flow)
    yield flow, mariadb_oracle
    flow.close()


def _qualified(expr: str, shape: str) -> str:
    # the last shape joins vals back: its columns are named through b
    if "JOIN vals v" not in shape:
        return expr
    import re

    return re.sub(r"\b(s|i|d|f|dt|ts|tm)\b(?!\s*\()", r"b.\1", expr)


def check(engines, shape: str, expr: str) -> list[str]:
    flow, oracle = engines
    sql = shape.format(expr=_qualified(expr, shape))
    try:
        rows, _ = oracle.query(sql)
        want = {r[0]: r[1] for r in rows}
    except pymysql.MySQLError as e:
        want = ("error", e.args[0])
    try:
        got = {r[0]: r[1] for r in flow.execute(sql).fetchall()}
    except E.Error as e:
        got = ("error", e.errno)
    if isinstance(want, tuple) or isinstance(got, tuple):
        if want != got:
            return [f"{sql}\n   MariaDB {want!r}\n   noria   {got!r}"]
        return []
    bad = []
    for rid, w in want.items():
        g = got.get(rid)
        if not _same(w, g):
            bad.append(
                f"{sql} row {rid}\n   MariaDB {w!r} ({type(w).__name__})\n"
                f"   noria   {g!r} ({type(g).__name__})"
            )
    return bad


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(shape=st.sampled_from(SHAPES), expr=expressions())
def test_expressions_over_derived_tables_match_mariadb(engines, shape, expr):
    problems = check(engines, shape, expr)
    assert not problems, "\n".join(problems)


# Each was answered with SQLite's semantics: '1x' = 1 false, 'a' = 'A ' false, d / 3 a double.
REGRESSIONS = [
    "s = 'bob'", "s + 0", "d / 3", "d * 2", "i DIV 2", "CONCAT(d)", "dt + 0", "tm * 2",
    "PI() * i", "s < 'c'", "d = '9.99'", "dt = 20240229",
]  # fmt: skip


@pytest.mark.parametrize("expr", REGRESSIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_named_regressions(engines, shape, expr):
    problems = check(engines, shape, expr)
    assert not problems, "\n".join(problems)


def test_literal_derived_tables_and_unions(engines):
    for sql in (
        "SELECT s + 0, d / 3, d * 2, i DIV 2, 'a' = 'A ', CONCAT(d), s = 1 "
        "FROM (SELECT '1x' AS s, 1.50 AS d, 7 AS i) x",
        "SELECT x.d / 3 FROM (SELECT 1.5 AS d UNION ALL SELECT 2) x ORDER BY 1",
        "WITH c AS (SELECT 1.50 AS d, '1x' AS s) SELECT d / 3, s + 0, 7 / 2 FROM c",
        "SELECT PI(), i * PI(), f * PI(), PI() / i, PI() = 3.141593 "
        "FROM (SELECT 2 AS i, 0.5e0 AS f) x",
        "SELECT n, n = 'A' FROM (SELECT 'a' AS n UNION ALL SELECT 'b') t ORDER BY n",
    ):
        flow, oracle = engines
        want, _ = oracle.query(sql)
        got = flow.execute(sql).fetchall()
        assert len(got) == len(want), sql
        for g, w in zip(got, want):
            assert all(_same(a, b) for a, b in zip(w, g)), (sql, w, g)


def test_a_union_with_parameters_is_typed_as_mariadb(engines):
    """A UNION with parameters is answered by base storage: its columns take the type the
    branches' types merge to (an exact SUM's text was handed back as a string)."""
    flow, oracle = engines
    for sql, params in (
        ("SELECT SUM(i) FROM vals WHERE id < ? UNION SELECT i FROM vals WHERE id = 2", (3,)),
        ("SELECT SUM(id) FROM vals UNION SELECT d FROM vals WHERE id = ?", (1,)),
        ("SELECT d FROM vals WHERE id = ? UNION SELECT i FROM vals WHERE id = 3", (2,)),
    ):
        want, _ = oracle.query(sql.replace("?", str(params[0])))
        got = flow.execute(sql, params).fetchall()
        key = lambda r: str(r[0])  # noqa: E731
        assert len(got) == len(want), sql
        for g, w in zip(sorted(got, key=key), sorted(want, key=key)):
            assert _same(w[0], g[0]), (sql, w, g)

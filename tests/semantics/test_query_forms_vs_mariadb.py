"""Query forms that were silently answered otherwise than MySQL answers them.

``= ANY`` / ``<> ALL`` subqueries, window aggregates (``SUM(x) OVER (...)``), ``SELECT ...
INTO @var`` are compared with MariaDB, embedded and over the wire (``SQL_CALC_FOUND_ROWS``
and ``FOUND_ROWS()`` in ``test_session_vs_mariadb``); forms without an exact answer yet
(``WITH ROLLUP`` beside ORDER BY, ``WITH CUBE``) must be error 1235 on every path, never
rows.
"""

from __future__ import annotations

from decimal import Decimal

import pymysql
import pytest

import noria_py
from noria_py import errors as E

SETUP = [
    "DROP TABLE IF EXISTS qf",
    "CREATE TABLE qf (id INT PRIMARY KEY, dept VARCHAR(5), salary INT, d DECIMAL(6,2))",
    "INSERT INTO qf VALUES (1,'a',10,1.50),(2,'a',20,2.25),(3,'b',5,NULL),(4,'b',NULL,0.10),"
    "(5,'c',20,-3.00)",
]

COMPARED = [
    "SELECT id FROM qf WHERE salary = ANY (SELECT salary FROM qf WHERE dept = 'b') ORDER BY id",
    "SELECT id FROM qf WHERE salary = SOME (SELECT salary FROM qf WHERE id < 3) ORDER BY id",
    "SELECT id FROM qf WHERE salary <> ALL (SELECT salary FROM qf WHERE id < 3) ORDER BY id",
    "SELECT id FROM qf WHERE salary <> ALL (SELECT salary FROM qf) ORDER BY id",
    "SELECT id FROM qf WHERE salary > ALL (SELECT salary FROM qf WHERE dept = 'b') ORDER BY id",
    "SELECT id FROM qf WHERE salary < ANY (SELECT salary FROM qf) ORDER BY id",
    "SELECT id, SUM(salary) OVER (ORDER BY id) FROM qf ORDER BY id",
    "SELECT id, SUM(d) OVER (PARTITION BY dept) FROM qf ORDER BY id",
    "SELECT id, AVG(salary) OVER () FROM qf ORDER BY id",
    "SELECT id, AVG(d) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM qf "
    "ORDER BY id",
    "SELECT id, SUM(d) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM qf "
    "ORDER BY id",
    "SELECT id, MAX(d) OVER (PARTITION BY dept), MIN(salary) OVER (), COUNT(d) OVER (ORDER BY id)"
    " FROM qf ORDER BY id",
    "SELECT id, SUM(salary) OVER w FROM qf WINDOW w AS (ORDER BY id) ORDER BY id",
    "SELECT id, ROW_NUMBER() OVER (ORDER BY salary, id), RANK() OVER (ORDER BY dept), "
    "PERCENT_RANK() OVER (ORDER BY id) FROM qf ORDER BY id",
    # WITH ROLLUP (``test_rollup_vs_mariadb`` has more)
    "SELECT dept, SUM(salary) FROM qf GROUP BY dept WITH ROLLUP",
    # a WITH RECURSIVE's columns are typed from its non-recursive SELECT (they were untyped:
    # SUM(n) an integer, a DECIMAL SQLite's double or text)
    "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
    "SELECT SUM(n), AVG(n), MAX(n) FROM r",
    "WITH RECURSIVE r AS (SELECT 1 AS n, CAST(0.1 AS DECIMAL(10,2)) AS d UNION ALL "
    "SELECT n + 1, d + 0.1 FROM r WHERE n < 30) SELECT SUM(d), MAX(d), COUNT(*) FROM r",
    "WITH RECURSIVE r AS (SELECT 1 AS n, CAST(1.5 AS DECIMAL(5,2)) AS d UNION ALL "
    "SELECT n + 1, d * 2 FROM r WHERE n < 4) SELECT * FROM r",
    "WITH RECURSIVE r AS (SELECT 1 AS n, DATE '2024-01-30' AS d UNION ALL "
    "SELECT n + 1, d + INTERVAL 1 DAY FROM r WHERE n < 4) SELECT * FROM r",
    "WITH RECURSIVE r AS (SELECT id, d FROM qf WHERE id = 1 UNION ALL "
    "SELECT qf.id, qf.d FROM r JOIN qf ON qf.id = r.id + 1) SELECT * FROM r ORDER BY id",
]

REFUSED = [
    "SELECT dept, SUM(salary) FROM qf GROUP BY dept WITH ROLLUP ORDER BY dept",
    "SELECT dept, SUM(salary) FROM qf GROUP BY dept WITH CUBE",
]

INTO = [
    ("SELECT id, salary INTO @i, @s FROM qf WHERE id = 2", None),
    ("SELECT @i, @s", "rows"),
    ("SELECT id INTO @i FROM qf WHERE id = 99", None),  # no row: 1329, @i keeps 2
    ("SELECT @i", "rows"),
    ("SELECT id INTO @i FROM qf", 1172),
    ("SELECT id, dept INTO @i FROM qf WHERE id = 1", 1222),
    ("SELECT COUNT(*) INTO @n FROM qf", None),
    ("SELECT @n, @n + 1", "rows"),
    ("SELECT salary FROM qf WHERE id = @i", "rows"),
]


def _norm(rows):
    return [tuple(r) for r in rows]


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    for sql in SETUP:
        mariadb_oracle.query(sql)
    mariadb_oracle.conn.commit()
    return mariadb_oracle


@pytest.fixture(scope="module")
def embedded():
    conns = []
    for opts in ({}, {"dataflow": False}):
        c = noria_py.connect(**opts)
        for sql in SETUP:
            c.execute(sql)
        conns.append(c)
    yield conns
    for c in conns:
        c.close()


def _same(want, got) -> bool:
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            if type(a) is not type(b):
                return False
            if isinstance(a, float) and abs(a - b) > 1e-9 * max(1.0, abs(a)):
                return False
            if not isinstance(a, float) and a != b:
                return False
            if isinstance(a, Decimal) and str(a) != str(b):
                return False  # the scale MySQL shows
    return True


@pytest.mark.parametrize("sql", COMPARED)
def test_forms_match_mariadb(oracle, embedded, sql):
    want, _ = oracle.query(sql)
    for c in embedded:
        got = _norm(c.execute(sql).fetchall())
        assert _same(_norm(want), got), (sql, _norm(want), got)


@pytest.mark.parametrize("sql", REFUSED)
def test_forms_without_an_exact_answer_are_1235(embedded, sql):
    for c in embedded:
        with pytest.raises(E.NotSupportedError) as info:
            c.execute(sql).fetchall()
        assert info.value.errno == 1235


def _run_into(run, script):
    out = []
    for sql, expect in script:
        try:
            rows = run(sql)
        except (E.Error, pymysql.MySQLError) as e:
            code = e.errno if isinstance(e, E.Error) else e.args[0]
            out.append(("error", code))
            continue
        out.append(_norm(rows) if expect == "rows" else "ok")
    return out


def test_select_into_user_variables_embedded_and_wire(oracle):
    conn = oracle.connect(database="oracle")
    try:
        with conn.cursor() as cur:

            def maria(sql):
                cur.execute(sql)
                return cur.fetchall()

            want = _run_into(maria, INTO)
    finally:
        conn.close()
    assert want[4] == ("error", 1172) and want[5] == ("error", 1222)
    emb = noria_py.connect()
    for sql in SETUP:
        emb.execute(sql)
    got = _run_into(lambda sql: emb.execute(sql).fetchall(), INTO)
    assert got == want
    assert emb.execute("SHOW WARNINGS").fetchall() == []  # cleared by the last SELECT
    emb.execute("SELECT id INTO @z FROM qf WHERE id = 99")
    assert [r[1] for r in emb.execute("SHOW WARNINGS").fetchall()] == [1329]
    emb.close()

    from . import wire_fixtures

    fx = wire_fixtures()
    srv = fx.start_server()
    try:
        wc = srv.pymysql()
        with wc.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS intodb")
            cur.execute("USE intodb")
            for sql in SETUP:
                cur.execute(sql)

            def wire(sql):
                cur.execute(sql)
                return cur.fetchall()

            assert _run_into(wire, INTO) == want
        wc.close()
    finally:
        assert fx.stop_server(srv) == 0


def test_window_sum_of_decimals_is_exact(embedded):
    for c in embedded:
        rows = c.execute(
            "SELECT id, SUM(d) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
            "FROM qf ORDER BY id"
        ).fetchall()
        assert rows[3] == (4, Decimal("0.10"))  # NULL then 0.10: the frame's exact sum

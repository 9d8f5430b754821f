"""Subqueries compared with MariaDB: in a select list, a condition, an UPDATE's SET, and the
WHERE of an UPDATE or DELETE.

A scalar subquery that finds more than one row is error 1242 in MySQL (SQLite, which answers
such queries, took the first row); one that finds none is NULL. ``UPDATE t SET c =
(SELECT ...)`` (a correlated count, an EXISTS, a subquery over another table) was 1235; each
row's value is now computed by base storage from the row as it was before the statement. An
UPDATE or DELETE whose WHERE holds a subquery (``IN (SELECT ...)``, ``EXISTS``, a scalar one)
was 1235 too; base storage now finds its rows, as the statement began. A subquery in an
INSERT's VALUES is computed by base storage before the row is stored.
"""

from __future__ import annotations

import pymysql
import pytest

import noria_py
from noria_py import errors as E

SETUP = [
    "CREATE TABLE sa (id INT PRIMARY KEY, v INT, c INT)",
    "CREATE TABLE sb (id INT PRIMARY KEY, a_id INT, w INT)",
    "INSERT INTO sa VALUES (1, 0, 0), (2, 0, 0), (3, 0, 0)",
    "INSERT INTO sb VALUES (1, 1, 5), (2, 1, 7), (3, 2, 9)",
]
SCRIPT = [
    "SELECT id, (SELECT w FROM sb WHERE sb.a_id = sa.id) FROM sa ORDER BY id",
    "SELECT id, (SELECT w FROM sb WHERE sb.a_id = sa.id) AS x FROM sa WHERE id > 1 ORDER BY id",
    "SELECT id FROM sa WHERE v < (SELECT w FROM sb)",
    "SELECT id FROM sa WHERE v < (SELECT w FROM sb WHERE id = 3) ORDER BY id",
    "SELECT id, (SELECT MAX(w) FROM sb WHERE sb.a_id = sa.id) FROM sa ORDER BY id",
    "UPDATE sa SET c = (SELECT COUNT(*) FROM sb WHERE sb.a_id = sa.id)",
    "SELECT * FROM sa ORDER BY id",
    "UPDATE sa SET v = EXISTS (SELECT 1 FROM sb WHERE sb.a_id = sa.id AND sb.w > 6)",
    "SELECT * FROM sa ORDER BY id",
    "UPDATE sa SET v = (SELECT w FROM sb WHERE sb.a_id = sa.id)",
    "SELECT * FROM sa ORDER BY id",
    "UPDATE sa SET v = (SELECT MAX(w) FROM sb) + id WHERE id = 3",
    "UPDATE sa SET c = (SELECT SUM(w) FROM sb WHERE sb.a_id = sa.id), v = v + 1",
    "SELECT * FROM sa ORDER BY id",
    # subqueries in the WHERE of writes
    "UPDATE sa SET v = v + 1 WHERE id IN (SELECT a_id FROM sb WHERE w > 6)",
    "SELECT * FROM sa ORDER BY id",
    "UPDATE sa SET v = 0 WHERE EXISTS (SELECT 1 FROM sb WHERE sb.a_id = sa.id AND sb.w = 5)",
    "SELECT * FROM sa ORDER BY id",
    "DELETE FROM sb WHERE w < (SELECT MAX(c) FROM sa WHERE sa.id = sb.a_id)",
    "SELECT * FROM sb ORDER BY id",
    "UPDATE sa SET v = 99 WHERE v = (SELECT w FROM sb)",
    "UPDATE sa SET v = v * 2 WHERE id IN (SELECT a_id FROM sb) ORDER BY id LIMIT 1",
    "DELETE FROM sa WHERE id NOT IN (SELECT a_id FROM sb WHERE a_id IS NOT NULL)",
    "SELECT * FROM sa ORDER BY id",
    # subqueries in VALUES
    "INSERT INTO sb VALUES ((SELECT MAX(id) FROM sa) + 10, 1, (SELECT COUNT(*) FROM sb))",
    "INSERT INTO sb VALUES (20, 1, (SELECT w FROM sb))",
    "SELECT * FROM sb ORDER BY id",
]


def _run(cur, errors) -> list:
    out = []
    for sql in SCRIPT:
        try:
            cur.execute(sql)
            out.append([tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount)
        except errors as e:
            out.append(("error", e.args[0] if isinstance(e, pymysql.MySQLError) else e.errno))
    return out


@pytest.fixture(scope="module")
def oracle_answers(mariadb_oracle):
    conn = mariadb_oracle.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS sa, sb")
            for sql in SETUP:
                cur.execute(sql)
            return _run(cur, pymysql.MySQLError)
    finally:
        conn.close()


def test_scalar_subqueries_as_mariadb(oracle_answers):
    conn = noria_py.connect()
    for sql in SETUP:
        conn.execute(sql)
    got = _run(conn.cursor(), E.Error)
    conn.close()
    assert ("error", 1242) in oracle_answers  # the script reaches MySQL's error
    for sql, want, have in zip(SCRIPT, oracle_answers, got):
        assert have == want, sql


TYPED_SETUP = [
    "CREATE TABLE st_a (id INT PRIMARY KEY, v INT)",
    "CREATE TABLE st_b (id INT PRIMARY KEY, a_id INT, amt DECIMAL(10,2), f FLOAT, dt DATE)",
    "INSERT INTO st_a VALUES (1, 10), (2, NULL), (3, 5)",
    "INSERT INTO st_b VALUES (1, 1, 2.50, 1.5, '2024-01-01'), (2, 1, 3.25, 2.25, '2024-02-01'),"
    " (3, 2, 1.00, 3, NULL)",
]
TYPED = [
    "SELECT a.id, (SELECT MAX(amt) FROM st_b b WHERE b.a_id = a.id) FROM st_a a ORDER BY a.id",
    "SELECT a.id, (SELECT SUM(amt) FROM st_b b WHERE b.a_id = a.id),"
    " (SELECT amt FROM st_b b WHERE b.id = a.id) FROM st_a a ORDER BY a.id",
    "SELECT (SELECT MAX(amt) FROM st_b), (SELECT SUM(v) FROM st_a), (SELECT MIN(dt) FROM st_b),"
    " (SELECT MAX(f) FROM st_b), (SELECT AVG(v) FROM st_a)",
    "SELECT a.id, (SELECT MIN(dt) FROM st_b b WHERE b.a_id = a.id) AS d,"
    " (SELECT AVG(amt) FROM st_b b WHERE b.a_id = a.id) FROM st_a a ORDER BY a.id",
    "SELECT a.id, (SELECT MAX(amt + a.v) FROM st_b b WHERE b.a_id = a.id) FROM st_a a ORDER BY a.id",
    "SELECT id, (SELECT amt FROM st_b WHERE id = 9) FROM st_a ORDER BY id",
    # expressions over them: computed by the evaluator from the typed value
    "SELECT a.id, (SELECT MAX(amt) FROM st_b b WHERE b.a_id = a.id) * 2 FROM st_a a ORDER BY a.id",
    "SELECT a.id, v + (SELECT SUM(amt) FROM st_b b WHERE b.a_id = a.id) FROM st_a a ORDER BY a.id",
    "SELECT a.id, COALESCE((SELECT SUM(amt) FROM st_b b WHERE b.a_id = a.id), 0) FROM st_a a"
    " ORDER BY a.id",
    "SELECT a.id, CONCAT('x', (SELECT MAX(amt) FROM st_b b WHERE b.a_id = a.id)) FROM st_a a"
    " ORDER BY a.id",
    "SELECT (SELECT MAX(amt) FROM st_b) / 3, (SELECT SUM(amt) FROM st_b) - 0.005",
    "SELECT a.id, (SELECT COUNT(*) FROM st_b b WHERE b.a_id = a.id) / 2 FROM st_a a ORDER BY a.id",
    "SELECT a.id, ROUND((SELECT AVG(amt) FROM st_b b WHERE b.a_id = a.id), 1) FROM st_a a"
    " ORDER BY a.id",
    "SELECT a.id, DATE_ADD((SELECT MIN(dt) FROM st_b b WHERE b.a_id = a.id), INTERVAL 1 DAY)"
    " FROM st_a a ORDER BY a.id",
    "SELECT a.id, (a.id IN (SELECT a_id FROM st_b)) + (SELECT MAX(amt) FROM st_b) FROM st_a a"
    " ORDER BY a.id",
]


@pytest.mark.parametrize("sql", TYPED)
def test_a_scalar_subquerys_value_has_its_columns_type(mariadb_oracle, sql):
    """A scalar subquery's value is typed as its one column: a DECIMAL keeps its scale, a DATE
    is a date, AVG shows four more decimals; an expression over it is computed from that value
    by the evaluator (exact DECIMAL arithmetic). Base storage answered with SQLite's value (the
    float ``1`` for 1.00, the text ``'2024-01-01'``, ``'2.875000000'``, ``6.5`` for 6.50)."""
    conn = mariadb_oracle.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS st_a, st_b")
            for s in TYPED_SETUP:
                cur.execute(s)
            cur.execute(sql)
            want = repr([tuple(r) for r in cur.fetchall()])
    finally:
        conn.close()
    for dataflow in (True, False):
        ours = noria_py.connect(dataflow=dataflow)
        for s in TYPED_SETUP:
            ours.execute(s)
        got = repr([tuple(r) for r in ours.execute(sql).fetchall()])
        ours.close()
        assert got == want, (dataflow, sql)

"""Results over the wire equal the embedded engine's, through the text protocol (pymysql,
including literal queries the server parameterizes itself) and the binary protocol
(mysql-connector prepared cursors)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from noria_py.engine import Engine

pytestmark = pytest.mark.wire

SCHEMA = [
    "CREATE TABLE d_cats (id INT PRIMARY KEY, label VARCHAR(40) NOT NULL)",
    "CREATE TABLE d_items (id INT PRIMARY KEY, category INT NOT NULL, name VARCHAR(60), "
    "qty INT, price DOUBLE, added DATE, note TEXT)",
]
NAMES = ["plain", "it's", "back\\slash", 'dq"', "ünï", "", "x; DROP TABLE d_items"]


def _rows():
    cats = [(i, f"cat {i}") for i in range(1, 5)]
    items = []
    for i in range(1, 41):
        items.append(
            (
                i,
                i % 4 + 1,
                NAMES[i % len(NAMES)] + str(i % 3),
                i % 5,
                round(i * 1.25, 2),
                datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
                None if i % 3 == 0 else f"note {i}",
            )
        )
    return cats, items


QUERIES = [
    ("SELECT * FROM d_items WHERE id = ?", [(1,), (7,), (40,), (41,)]),
    ("SELECT name, price FROM d_items WHERE category = ?", [(1,), (2,), (9,)]),
    ("SELECT id FROM d_items WHERE name = ?", [(n + "1",) for n in NAMES]),
    ("SELECT id, qty FROM d_items WHERE category = ? AND qty = ?", [(2, 1), (3, 0), (4, 4)]),
    ("SELECT category, COUNT(*), SUM(qty) FROM d_items GROUP BY category", [()]),
    ("SELECT category, COUNT(*) FROM d_items WHERE qty > ? GROUP BY category", [(2,), (0,)]),
    ("SELECT MAX(price), MIN(price) FROM d_items WHERE category = ?", [(1,), (3,)]),
    (
        "SELECT i.name, c.label FROM d_items i JOIN d_cats c ON i.category = c.id WHERE c.id = ?",
        [(1,), (4,)],
    ),
    ("SELECT id, price FROM d_items WHERE price > ? ORDER BY price DESC LIMIT 3", [(10.0,)]),
    ("SELECT DISTINCT category FROM d_items", [()]),
    ("SELECT COUNT(*) FROM d_items WHERE note IS NULL", [()]),
    ("SELECT id, added FROM d_items WHERE added = ?", [(datetime.date(2024, 1, 5),)]),
]
LITERAL_QUERIES = [
    "SELECT name FROM d_items WHERE id = 3",
    "SELECT name FROM d_items WHERE id = '3'",
    "SELECT id FROM d_items WHERE category = 2 AND qty = 1",
    "SELECT id FROM d_items WHERE name = 'it''s1'",
    "SELECT id FROM d_items WHERE name = 'it\\'s1'",
    "SELECT id FROM d_items WHERE name = 'back\\\\slash2'",
    "SELECT id FROM d_items WHERE category = -1",
    "SELECT id FROM d_items WHERE id = 5 OR id = 6",
    "SELECT id FROM d_items WHERE qty > 3 AND category = 1",
]


def _norm(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode()
    return value


def _canon(rows):
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)


@pytest.fixture(scope="module")
def both(server):
    embedded = Engine()
    conn = server.pymysql()
    cats, items = _rows()
    with conn.cursor() as cur:
        for ddl in SCHEMA:
            cur.execute(ddl)
            embedded.execute(ddl)
        for row in cats:
            cur.execute("INSERT INTO d_cats VALUES (%s, %s)", row)
            embedded.execute("INSERT INTO d_cats VALUES (?, ?)", row)
        for row in items:
            cur.execute("INSERT INTO d_items VALUES (%s, %s, %s, %s, %s, %s, %s)", row)
            embedded.execute("INSERT INTO d_items VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        # some later writes, so that views see deltas too
        cur.execute("UPDATE d_items SET qty = qty + 1 WHERE category = 2")
        embedded.execute("UPDATE d_items SET qty = qty + 1 WHERE category = 2")
        cur.execute("DELETE FROM d_items WHERE id = 13")
        embedded.execute("DELETE FROM d_items WHERE id = 13")
    conn.close()
    yield embedded
    embedded.close()


@pytest.mark.parametrize("sql,param_sets", QUERIES, ids=[q[0][:50] for q in QUERIES])
def test_pymysql_matches_embedded(server, both, sql, param_sets):
    conn = server.pymysql()
    with conn.cursor() as cur:
        for params in param_sets:
            expected = both.execute(sql, params)
            cur.execute(sql.replace("?", "%s"), params)
            assert [d[0] for d in cur.description] == expected.columns
            assert _canon(cur.fetchall()) == _canon(expected.rows), (sql, params)
    conn.close()


@pytest.mark.parametrize("sql,param_sets", QUERIES, ids=[q[0][:50] for q in QUERIES])
def test_prepared_matches_embedded(server, both, sql, param_sets):
    conn = server.connector()
    cur = conn.cursor(prepared=True)
    for params in param_sets:
        expected = both.execute(sql, params)
        cur.execute(sql.replace("?", "%s"), params)
        assert [d[0] for d in cur.description] == expected.columns
        assert _canon(cur.fetchall()) == _canon(expected.rows), (sql, params)
    conn.close()


@pytest.mark.parametrize("sql", LITERAL_QUERIES)
def test_literal_queries_match_embedded(server, both, sql):
    expected = both.execute(sql)
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute(sql)
        assert [d[0] for d in cur.description] == expected.columns
        assert _canon(cur.fetchall()) == _canon(expected.rows), sql
    conn.close()

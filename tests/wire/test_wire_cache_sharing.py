"""Literal lookups over the wire (client-side binding): one query per shape, and the answers of
the texts as written (an embedded engine with ``lift_literals=False``), also where a literal
must not become a parameter (its plan falls back) and on the COM_QUERY fast path (rounds after
the first)."""

from __future__ import annotations

import pytest

import noria_py

pytestmark = pytest.mark.wire

SETUP = [
    "CREATE TABLE cs (id INT PRIMARY KEY, name VARCHAR(10), bi BIGINT, f DOUBLE)",
    "INSERT INTO cs VALUES (1, 'a', 5, 5), (2, 'A', 9223372036854775807, 9007199254740992),"
    " (3, 'abc', 7, 1.5), (4, '0', 0, 0), (5, 'B', 12, 12), (6, NULL, NULL, NULL)",
]

TEXTS = [
    "SELECT id FROM cs WHERE name = 'a'",
    "SELECT id FROM cs WHERE name = 0",  # 'abc' = 0 in MySQL: the text as written
    "SELECT id FROM cs WHERE name = 'b'",
    "SELECT id FROM cs WHERE name = 1",
    "SELECT id FROM cs WHERE bi = '5'",
    "SELECT id FROM cs WHERE bi = '9223372036854775806'",  # compared as doubles
    "SELECT id FROM cs WHERE bi = '7'",
    "SELECT id FROM cs WHERE f = 9007199254740993",  # compared as doubles
    "SELECT id FROM cs WHERE f = 5",
    "SELECT id FROM cs WHERE id = 3",
    "SELECT id FROM cs WHERE id = 4",
    "SELECT id, name FROM cs WHERE id IN (1, 2, 3)",
    "SELECT id, name FROM cs WHERE id IN (4)",
    "SELECT id, name FROM cs WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8)",
    "SELECT id, name FROM cs WHERE id IN (5, 5, 6)",
]


def test_literal_lookups_share_queries_and_answer_as_written(server):
    base = noria_py.connect(lift_literals=False)
    conn = server.pymysql()
    try:
        cur = conn.cursor()
        for sql in SETUP:
            cur.execute(sql)
            base.execute(sql)
        for _round in range(3):
            for sql in TEXTS:
                cur.execute(sql)
                assert sorted(cur.fetchall()) == sorted(base.execute(sql).fetchall()), sql
        cur.execute("SHOW CACHES")
        shown = sorted(r[1] for r in cur.fetchall() if "FROM cs" in r[1])
        assert "SELECT id FROM cs WHERE id = ?" in shown
        assert "SELECT id FROM cs WHERE name = ?" in shown
        assert "SELECT id FROM cs WHERE name = 0" in shown  # answered as written
        assert sum("IN (" in s for s in shown) == 1  # every list length: one query
        cur.execute("DROP TABLE cs")
    finally:
        conn.close()
        base.close()

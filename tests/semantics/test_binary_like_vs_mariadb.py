"""LIKE with a binary string on either side matches bytes, case-sensitively, as MySQL does:
``b LIKE 'h%'`` over a VARBINARY column, ``s LIKE BINARY '%world%'``, ``BINARY s LIKE ...``
(the case-insensitive collation of the text columns answered before), cached, with a
parameter, and on base storage."""

from __future__ import annotations

import pytest

import noria_py

SCHEMA = "CREATE TABLE bl (id INT PRIMARY KEY, s VARCHAR(40), b VARBINARY(20))"
ROWS = [(1, "Hello World", b"Hello"), (2, "aAbB", b"aAbB"), (3, "", b""), (4, None, None)]
QUERIES = [
    ("SELECT id, s LIKE BINARY '%world%', s LIKE BINARY '%World%', b LIKE 'h%', "
     "b LIKE 'H%', BINARY s LIKE 'hello%', b LIKE '%B', s LIKE 'hello%' FROM bl ORDER BY id", ()),
    ("SELECT id FROM bl WHERE b LIKE 'h%'", ()),
    ("SELECT id FROM bl WHERE b LIKE 'H%' ORDER BY id", ()),
    ("SELECT id FROM bl WHERE s LIKE BINARY 'hello%' AND id < ?", (9,)),
    ("SELECT id FROM bl WHERE b LIKE 'a%' AND id < ?", (9,)),
    ("SELECT s FROM bl WHERE id = ? AND b LIKE 'aa%'", (2,)),
]  # fmt: skip


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    mariadb_oracle.query("DROP TABLE IF EXISTS bl")
    mariadb_oracle.query(SCHEMA)
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO bl VALUES (%s, %s, %s)", ROWS)
    flow = noria_py.connect()
    flow.execute(SCHEMA)
    flow.executemany("INSERT INTO bl VALUES (?, ?, ?)", ROWS)
    yield flow, mariadb_oracle
    flow.close()


@pytest.mark.parametrize("sql, params", QUERIES)
def test_binary_like_as_mariadb(engines, sql, params):
    flow, oracle = engines
    with oracle.conn.cursor() as cur:
        if params:
            cur.execute(sql.replace("%", "%%").replace("?", "%s"), params)
        else:
            cur.execute(sql)
        want = [tuple(r) for r in cur.fetchall()]
    got = [tuple(r) for r in flow.execute(sql, params).fetchall()]
    assert got == want

"""GROUP_CONCAT with ORDER BY, compared with MariaDB on both paths.

The dataflow keeps GROUP_CONCAT's values ordered by its ORDER BY; base storage (a query with
a range parameter) had handed SQLite an ORDER BY inside the aggregate, which SQLite before
3.44 cannot parse, so such a query failed. Base storage now computes it with the dataflow's
own accumulator. The values here never tie under the collation (MariaDB's order of ties is
its sort's).
"""

from __future__ import annotations

import pytest

import noria_py

SCHEMA = "CREATE TABLE gco (id INT PRIMARY KEY, g INT, s VARCHAR(5), n INT, d DECIMAL(5,2))"
ROWS = [
    (1, 1, "b", 3, "1.50"), (2, 1, "A", 1, "2.25"), (3, 2, "c", 2, None), (4, 1, "d", 2, "0.50"),
    (5, 2, None, 7, "3.00"), (6, 1, "E", 9, "1.50"),
]  # fmt: skip
QUERIES = [
    "SELECT g, GROUP_CONCAT(s ORDER BY s) FROM gco{w} GROUP BY g ORDER BY g",
    "SELECT g, GROUP_CONCAT(s ORDER BY s DESC SEPARATOR '|') FROM gco{w} GROUP BY g ORDER BY g",
    "SELECT GROUP_CONCAT(DISTINCT n ORDER BY n) FROM gco{w}",
    "SELECT g, GROUP_CONCAT(n ORDER BY n DESC, id) FROM gco{w} GROUP BY g ORDER BY g",
    "SELECT g, GROUP_CONCAT(s, n ORDER BY n, s) FROM gco{w} GROUP BY g ORDER BY g",
    "SELECT g, GROUP_CONCAT(s ORDER BY id DESC) FROM gco{w} GROUP BY g ORDER BY g",
]


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    mariadb_oracle.query("DROP TABLE IF EXISTS gco")
    mariadb_oracle.query(SCHEMA)
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO gco VALUES (%s, %s, %s, %s, %s)", ROWS)
    flow = noria_py.connect()
    flow.execute(SCHEMA)
    flow.executemany("INSERT INTO gco VALUES (?, ?, ?, ?, ?)", ROWS)
    yield flow, mariadb_oracle
    flow.close()


@pytest.mark.parametrize("sql", QUERIES)
@pytest.mark.parametrize("where", ["", " WHERE id < ?"])
def test_group_concat_order_by_as_mariadb(engines, sql, where):
    flow, oracle = engines
    text = sql.format(w=where)
    params = (9,) if where else ()
    with oracle.conn.cursor() as cur:
        cur.execute(text.replace("?", "%s"), params or None)
        want = [tuple(r) for r in cur.fetchall()]
    got = [tuple(r) for r in flow.execute(text, params).fetchall()]
    assert got == want

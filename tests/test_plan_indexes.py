"""Base storage gets the indexes the dataflow's lookups use, and no others: a lookup that a full
state answers from itself (a full aggregate or DISTINCT, as under a view without parameters)
asks nothing of base storage, so base storage keeps no index for it (every write and every
large load would maintain it for nothing). A partial state filled by a key keeps its index."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

import noria_py

N3 = sum(1 for i in range(200) if i % 7 == 3)  # the rows of qty 3 the fixture loads
SUM3 = sum(i * 3 for i in range(200) if i % 7 == 3)


def indexes(conn) -> set[str]:
    rows = conn.engine.storage.conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    ).fetchall()
    return {r[0] for r in rows}


def on(column: str, found: set[str]) -> bool:
    return any(f'("{column}")' in sql for sql in found)


@pytest.fixture
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE items (id INT PRIMARY KEY, qty INT, name VARCHAR(20), price INT)")
    c.executemany(
        "INSERT INTO items VALUES (?, ?, ?, ?)",
        [(i, i % 7, f"n{i % 5}", i * 3) for i in range(200)],
    )
    yield c
    c.close()


def check_writes(conn, view_sql: str, param_sql: str, keys) -> None:
    """Inserts, updates and deletes; after each, the parameterized query over the view equals
    the same rows computed by a query over the table (a fresh computation)."""
    rng = random.Random(5)
    for step in range(60):
        op = rng.choice(("insert", "update", "delete"))
        if op == "insert":
            i = 1000 + step
            conn.execute(
                "INSERT INTO items VALUES (?, ?, ?, ?)",
                (i, rng.randrange(9), f"n{rng.randrange(5)}", rng.randrange(100)),
            )
        elif op == "update":
            conn.execute(
                "UPDATE items SET qty = ? WHERE id = ?", (rng.randrange(9), rng.randrange(200))
            )
        else:
            conn.execute("DELETE FROM items WHERE id = ?", (rng.randrange(200),))
        for k in keys:
            got = sorted(conn.execute(param_sql, (k,)).fetchall())
            want = sorted(conn.execute(view_sql, (k,)).fetchall())
            assert got == want, (op, k)


FULL = [
    # (view, lookup over it, the same rows over the table, its stateful node, rows of qty 3)
    (
        "CREATE VIEW v AS SELECT qty, COUNT(*) AS n, SUM(price) AS t FROM items GROUP BY qty",
        "SELECT * FROM v WHERE qty = ?",
        "SELECT qty, COUNT(*), SUM(price) FROM items WHERE qty = ? GROUP BY qty",
        "aggregate",
        1,
    ),
    (
        "CREATE VIEW v AS SELECT DISTINCT qty, name FROM items",
        "SELECT * FROM v WHERE qty = ?",
        "SELECT DISTINCT qty, name FROM items WHERE qty = ?",
        "distinct",
        5,
    ),
]


@pytest.mark.parametrize("view, lookup, direct, kind, n3", FULL)
def test_a_full_state_under_a_view_asks_base_storage_for_no_index(
    conn, view, lookup, direct, kind, n3
):
    before = indexes(conn)
    conn.execute(view)
    conn.execute("SELECT * FROM v").fetchall()
    assert len(conn.execute(lookup, (3,)).fetchall()) == n3
    plan = conn.execute("EXPLAIN " + lookup).fetchall()
    assert [r[4] for r in plan if r[1] == kind] == ["full"]
    assert not on("qty", indexes(conn) - before)
    check_writes(conn, direct, lookup, range(9))


def test_partial_aggregate_keeps_the_index_it_fills_by(conn):
    before = indexes(conn)
    sql = "SELECT qty, COUNT(*), SUM(price) FROM items WHERE qty = ? GROUP BY qty"
    assert conn.execute(sql, (3,)).fetchall() == [(3, N3, Decimal(SUM3))]
    plan = conn.execute("EXPLAIN " + sql).fetchall()
    assert [r[4] for r in plan if r[1] == "aggregate"] == ["partial"]
    assert on("qty", indexes(conn) - before)


def test_partial_distinct_keeps_the_index_it_fills_by(conn):
    before = indexes(conn)
    sql = "SELECT DISTINCT qty, name FROM items WHERE qty = ?"
    assert len(conn.execute(sql, (3,)).fetchall()) == 5
    plan = conn.execute("EXPLAIN " + sql).fetchall()
    assert [r[4] for r in plan if r[1] == "distinct"] == ["partial"]
    assert on("qty", indexes(conn) - before)

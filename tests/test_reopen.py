"""Reopening a file computes every view's state again (``Engine._restore``): the new nodes
share their inputs' contents (``Graph.shared_contents``), and full joins and aggregates are
built without computing their output (``absorb``). Each view after the reopen, keyed reads over
the views (partial readers over the rebuilt state, and a persisted partial cache) and the same
after writes, updates and deletes that follow the reopen, must equal stdlib ``sqlite3`` running
the view's SELECT over the base tables of the same file (and, right after the reopen, the
engine's own answers before it closed)."""

from __future__ import annotations

import math
import os
import sqlite3
import tempfile
from decimal import Decimal

from hypothesis import example, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.dataflow.graph import Graph
from noria_py.dataflow.node import Node

TABLES = [
    "CREATE TABLE t (id INT PRIMARY KEY, a INT, b TINYINT, s VARCHAR(8))",
    "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, n INT)",
]

# name -> SELECT, in the order created (the same text runs on sqlite3 as CTEs over the base
# tables); a column named gc_* is a GROUP_CONCAT, compared as the sorted list of its parts
VIEWS = {
    "agg_t": "SELECT a, COUNT(*) AS c, COUNT(b) AS cb, SUM(b) AS sb, MIN(b) AS lo, "
    "MAX(b) AS hi, AVG(b) AS av FROM t GROUP BY a",
    "distinct_b": "SELECT a, COUNT(DISTINCT b) AS d, SUM(DISTINCT b) AS sd FROM t GROUP BY a",
    "concat_ids": "SELECT b, GROUP_CONCAT(id) AS gc_ids, MIN(s) AS lo, MAX(s) AS hi "
    "FROM t GROUP BY b",
    "total": "SELECT COUNT(*) AS c, SUM(a) AS s, MIN(s) AS lo, MAX(a) AS hi, AVG(a) AS av FROM t",
    "filtered": "SELECT id, a FROM t WHERE b = 1",
    # a filter of integer equalities: its rows looked up in base storage
    "pushed": "SELECT a, COUNT(*) AS c, MAX(s) AS hi FROM t WHERE b = 1 AND a = 2 GROUP BY a",
    "joined": "SELECT t.id, t.a, u.id AS uid, u.n FROM t JOIN u ON u.t_id = t.a",
    "left_joined": "SELECT t.id, u.id AS uid, u.n FROM t LEFT JOIN u ON u.t_id = t.b",
    "self_joined": "SELECT x.id, y.id AS yid FROM t x JOIN t y ON x.a = y.b",
    "two_keys": "SELECT t.id, u.id AS uid FROM t JOIN u ON t.a = u.t_id AND t.b = u.n",
    "distinct_ab": "SELECT DISTINCT a, b FROM t",
    # views over views: an aggregate of a join, a join of an aggregate, an aggregate of a union
    "joined_sum": "SELECT a, SUM(n) AS total, COUNT(*) AS c, MAX(n) AS hi, AVG(n) AS av "
    "FROM joined GROUP BY a",
    "with_counts": "SELECT u.id, u.n, g.c, g.hi FROM u LEFT JOIN agg_t g ON g.a = u.t_id",
    "keys": "SELECT a AS k FROM t WHERE b = 0 UNION ALL SELECT t_id AS k FROM u",
    "key_count": "SELECT k, COUNT(*) AS c, COUNT(DISTINCT k) AS d FROM keys GROUP BY k",
    # a join whose inputs repeat rows (a projection of a view without the key)
    "ab": "SELECT a, b FROM t",
    "ab_pairs": "SELECT x.a, y.b FROM ab x JOIN ab y ON x.a = y.b",
    "agg_pair": "SELECT g.a, g.c, d.d FROM agg_t g JOIN distinct_b d ON d.a = g.a",
    "chain": "SELECT j.id, j.uid, x.id AS xid, x.s FROM joined j JOIN t x ON x.b = j.n",
    # stateful nodes over each other in one view (built in one install, parents first)
    "nested": "SELECT g.a, COUNT(*) AS c, SUM(g.c) AS s FROM "
    "(SELECT a, COUNT(*) AS c, MAX(b) AS hi FROM t GROUP BY a) g "
    "JOIN u ON u.t_id = g.a GROUP BY g.a",
    "avg_join": "SELECT u.t_id, AVG(t.b) AS av, MIN(t.s) AS lo, COUNT(u.n) AS c "
    "FROM u JOIN t ON t.id = u.t_id GROUP BY u.t_id",
}
# dropped and created again with another query (its catalog entry moves after the others)
RECREATED = ("filtered", "SELECT id, a, b FROM t WHERE b = 1 OR a = 2")

# keyed reads: partial readers over the rebuilt full states, and base tables
READS = [
    "SELECT * FROM agg_t WHERE a = ?",
    "SELECT * FROM joined WHERE a = ?",
    "SELECT * FROM left_joined WHERE id = ?",
    "SELECT * FROM joined_sum WHERE a = ?",
    "SELECT * FROM with_counts WHERE n = ?",
    "SELECT a, COUNT(*), MAX(b), AVG(b) FROM t WHERE a = ? GROUP BY a",
]
# a view created after the reopen, and queries first read then
LATER = (
    "SELECT j.a, COUNT(*) AS c, MIN(j.n) AS lo FROM joined j JOIN agg_t g ON g.a = j.a GROUP BY j.a"
)
FRESH = [
    "SELECT * FROM later",
    "SELECT a, c, av FROM agg_t",
    "SELECT COUNT(*), SUM(n) FROM joined",
    "SELECT id, yid FROM self_joined WHERE id > 1",
    "SELECT * FROM nested",
    "SELECT c, COUNT(*) FROM key_count GROUP BY c",
    "SELECT * FROM with_counts WHERE id = ?",
]
# a partial cache, persisted in the catalog and restored on reopen
CACHE = "SELECT t.id, u.n FROM t JOIN u ON u.t_id = t.a WHERE t.a = ?"
KEYS = (None, -1, 0, 1, 2, 3)

small = st.none() | st.integers(-1, 3)
T_ROW = st.tuples(small, st.none() | st.integers(-1, 2), st.sampled_from(["s0", "s1", "s2", None]))
U_ROW = st.tuples(small, st.none() | st.integers(-2, 2))


def _norm(rows, names) -> list:
    """Rows comparable across engines: an integral Decimal (MySQL's SUM) as its int, another
    number as a float, a GROUP_CONCAT as the sorted tuple of its parts."""
    out = []
    for r in rows:
        row = []
        for name, v in zip(names, r):
            if name.startswith("gc_") and v is not None:
                v = tuple(sorted(str(v).split(",")))
            elif isinstance(v, Decimal):
                v = int(v) if v == v.to_integral_value() else float(v)
            row.append(v)
        out.append(tuple(row))
    # (no two rows of a view differ only in a float: sorting ignores them)
    return sorted(out, key=lambda r: repr(tuple(None if type(v) is float else v for v in r)))


def _same(got: list, want: list) -> bool:
    """Equal rows, floats within MySQL's AVG digits (4 decimals) of SQLite's."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if len(g) != len(w):
            return False
        for x, y in zip(g, w):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(x, y, abs_tol=1e-3):
                    return False
            elif x != y:
                return False
    return True


def _answers(conn, reads=None) -> dict:
    """Every view and keyed read (or just ``reads``), as the engine answers it (normalized)."""
    out = {}
    for name in VIEWS if reads is None else ():
        cur = conn.execute(f"SELECT * FROM {name}")
        out[name] = _norm(cur.fetchall(), [d[0] for d in cur.description])
    for sql in READS + [CACHE] if reads is None else reads:
        for key in KEYS if "?" in sql else (None,):
            cur = conn.execute(sql, (key,) if "?" in sql else ())
            out[(sql, key)] = _norm(cur.fetchall(), [d[0] for d in cur.description])
    return out


def _oracle(path: str, views: dict, reads=None) -> dict:
    """The same answers from sqlite3 over the file's base tables."""
    lite = sqlite3.connect(path)
    # the string column's collation (its values are lower case ASCII: any order of them agrees)
    lite.create_collation(
        "utf8mb4_general_ci", lambda x, y: (x.lower() > y.lower()) - (x.lower() < y.lower())
    )
    try:
        ctes = "WITH " + ", ".join(f"{n} AS ({sql})" for n, sql in views.items()) + " "
        out = {}
        for name in views if reads is None else ():
            cur = lite.execute(f"{ctes}SELECT * FROM {name}")
            out[name] = _norm(cur.fetchall(), [d[0] for d in cur.description])
        for sql in READS + [CACHE] if reads is None else reads:
            for key in KEYS if "?" in sql else (None,):
                cur = lite.execute(ctes + sql, (key,) if "?" in sql else ())
                out[(sql, key)] = _norm(cur.fetchall(), [d[0] for d in cur.description])
        return out
    finally:
        lite.close()


def _check(got: dict, want: dict, step: str) -> None:
    for k in want:
        assert _same(got[k], want[k]), (step, k, got[k], want[k])


def _insert(conn, t_rows, u_rows, start: int) -> None:
    conn.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?)",
        [(start + i, a, b, s) for i, (a, b, s) in enumerate(t_rows)],
    )
    conn.executemany(
        "INSERT INTO u VALUES (?, ?, ?)", [(start + i, t, n) for i, (t, n) in enumerate(u_rows)]
    )


def _dataflow_answers_every_view(conn) -> None:
    """No view is proxied to base storage (the test would compare SQLite with itself), and
    every node comes after its parents in id order (``Graph.topological``)."""
    engine = conn.engine
    for name in VIEWS:
        sql = f"SELECT * FROM {name}"
        conn.execute(sql).fetchall()
        # the read's own query (a view restored by reopening is compiled when read)
        entry = getattr(engine._cache.get(sql), "entry", None)
        assert entry is not None and entry.compiled is not None, name
    nodes = engine.graph.nodes
    for n in nodes.values():
        for p in n.parents:
            assert p.id < n.id and nodes.get(p.id) is p, (n, p)


@settings(max_examples=10, deadline=None)
@given(
    t_rows=st.lists(T_ROW, max_size=20),
    u_rows=st.lists(U_ROW, max_size=12),
    more_t=st.lists(T_ROW, max_size=8),
    more_u=st.lists(U_ROW, max_size=6),
    updates=st.lists(st.tuples(st.integers(0, 19), T_ROW), max_size=6),
    deletes=st.lists(st.integers(0, 19), max_size=5),
    views_first=st.booleans(),
)
@example(  # repeated rows, NULL keys, matches on every join
    t_rows=[(1, 1, "s0"), (1, 1, "s1"), (1, 0, "s1"), (None, None, None), (2, None, "s2")],
    u_rows=[(1, 1), (1, 1), (None, 0), (2, -1), (0, 0)],
    more_t=[(1, 1, "s0"), (0, 0, None)],
    more_u=[(2, 1)],
    updates=[(0, (2, 1, "s2")), (4, (1, 1, "s0"))],
    deletes=[1, 2],
    views_first=False,
)
def test_views_after_reopen_equal_sqlite(
    t_rows, u_rows, more_t, more_u, updates, deletes, views_first
):
    views = dict(VIEWS)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "db.sqlite")
        conn = noria_py.connect(path)
        try:
            for ddl in TABLES:
                conn.execute(ddl)
            if not views_first:
                _insert(conn, t_rows, u_rows, 0)
            for name, sql in VIEWS.items():
                conn.execute(f"CREATE VIEW {name} AS {sql}")
            conn.execute(f"DROP VIEW {RECREATED[0]}")
            conn.execute(f"CREATE VIEW {RECREATED[0]} AS {RECREATED[1]}")
            views[RECREATED[0]] = RECREATED[1]
            conn.execute(f"CREATE CACHE pairs FROM {CACHE}")
            if views_first:
                _insert(conn, t_rows, u_rows, 0)
            conn.commit()
            before = _answers(conn)
        finally:
            conn.close()
        _check(before, _oracle(path, views), "before closing")

        conn = noria_py.connect(path)
        try:
            _dataflow_answers_every_view(conn)
            assert "pairs" in conn.engine.queries  # the cache came back
            got = _answers(conn)
            assert got == before  # the engine's own answers before it closed
            _check(got, _oracle(path, views), "reopened")
            # the states built on reopen take deltas: inserts, updates and deletes after it
            _insert(conn, more_t, more_u, 100)
            for i, (a, b, s) in updates:
                conn.execute("UPDATE t SET a = ?, b = ?, s = ? WHERE id = ?", (a, b, s, i))
                conn.execute("UPDATE u SET n = ? WHERE id = ?", (b, i))
            for i in deletes:
                conn.execute("DELETE FROM t WHERE id = ?", (i,))
                conn.execute("DELETE FROM u WHERE id = ?", (i + 1,))
            conn.commit()
            _check(_answers(conn), _oracle(path, views), "after writes")
            # states built after those writes, from the states the reopen built: a view and
            # queries not read before
            conn.execute(f"CREATE VIEW later AS {LATER}")
            views["later"] = LATER
            _check(_answers(conn, FRESH), _oracle(path, views, FRESH), "built after writes")
        finally:
            conn.close()


def test_topological_order_follows_edges_when_ids_do_not():
    """``Graph.topological`` is id order while every node's parents have smaller ids, and is
    sorted by the edges otherwise (a node added before its parent)."""
    g = Graph()
    top = Node([], ["x"], ["int"])
    mid = Node([top], ["x"], ["int"])
    low = Node([mid], ["x"], ["int"])
    g.add(top, "top")
    g.add(mid, "mid")
    g.add(low, "low")
    assert g.topological() == [top, mid, low]
    assert g.topological([low, top]) == [top, low]
    g2 = Graph()
    g2.add(low, "low")  # ids inverted: low 0, mid 1, top 2
    g2.add(mid, "mid")
    g2.add(top, "top")
    assert [n.id for n in (low, mid, top)] == [0, 1, 2]
    assert g2.topological() == [top, mid, low]
    assert g2.topological([low, mid]) == [mid, low]

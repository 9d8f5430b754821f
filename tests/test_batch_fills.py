"""Batch fills: a read of several keys (an IN list) that misses more than one of them fills all
the missing keys with one upquery, which base storage answers with one query, and every key's
rows are exactly those a key-by-key fill would give."""

from __future__ import annotations

import sqlite3
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.dataflow.ops.base import BaseTable
from noria_py.dataflow.ops.reader import Reader

IN3 = "SELECT * FROM h WHERE user_id = ? AND story_id IN (?, ?, ?)"


def table_queries(conn, table: str) -> list[str]:
    """Start recording the statements base storage runs that read ``table``."""
    log: list[str] = []

    def trace(sql: str) -> None:
        if sql.startswith("SELECT") and f'"{table}"' in sql:
            log.append(sql)

    conn.engine.storage.conn.set_trace_callback(trace)
    return log


def caches(conn, sql):
    want = " ".join(sql.split())
    for row in conn.execute("SHOW CACHES"):
        if " ".join(str(row[1]).split()) == want:
            return row
    raise AssertionError(f"not installed: {sql}")


def setup_h(conn):
    conn.execute("CREATE TABLE h (user_id INT, story_id INT, note VARCHAR(20))")
    rows = [(u, s, f"n{u}-{s}") for u in range(6) for s in range(8)]
    rows += [(2, 3, "again"), (None, 1, "no user"), (1, None, "no story")]
    conn.executemany("INSERT INTO h VALUES (?, ?, ?)", rows)


def test_in_list_misses_are_filled_by_one_storage_query():
    conn = noria_py.connect()
    setup_h(conn)
    conn.execute(IN3, (0, 0, 0, 0)).fetchall()  # installs the query
    log = table_queries(conn, "h")
    got = conn.execute(IN3, (2, 3, 5, 99)).fetchall()
    assert sorted(got) == [(2, 3, "again"), (2, 3, "n2-3"), (2, 5, "n2-5")]
    assert len(log) == 1, log  # three missing keys, one query
    _, _, status, keys, hits, misses = caches(conn, IN3.replace("?, ?, ?", "?, ?"))[:6]
    assert status == "cached"
    # a read of two filled keys and a new one: the new one alone is asked for, by itself
    log.clear()
    got = conn.execute(IN3, (2, 3, 5, 6)).fetchall()
    assert sorted(got) == [(2, 3, "again"), (2, 3, "n2-3"), (2, 5, "n2-5"), (2, 6, "n2-6")]
    assert len(log) == 1 and " OR " not in log[0]
    after = caches(conn, IN3.replace("?, ?, ?", "?, ?"))
    assert (after[4] - hits, after[5] - misses) == (2, 1)  # each key a hit or a miss once
    # the filled keys stay exact under writes
    conn.execute("INSERT INTO h VALUES (2, 5, 'new'), (2, 99, 'late')")
    conn.execute("DELETE FROM h WHERE note = 'again'")
    log.clear()
    got = conn.execute(IN3, (2, 3, 5, 99)).fetchall()
    assert sorted(got) == [(2, 3, "n2-3"), (2, 5, "n2-5"), (2, 5, "new"), (2, 99, "late")]
    assert log == []  # every key filled: no upquery


def test_batch_fill_through_a_filter_and_projection_with_order_and_collation():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (name VARCHAR(10), v INT, flag INT)")
    rows = [("Bob", 1, 1), ("bob ", 2, 1), ("alice", 3, 1), ("ALICE", 4, 0), ("carl", 5, 1)]
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    sql = "SELECT v, name FROM t WHERE flag = 1 AND name IN (?, ?, ?) ORDER BY v DESC"
    conn.execute(sql, ("x", "y", "z")).fetchall()
    log = table_queries(conn, "t")
    # 'BOB' and 'bob' are one key under utf8mb4_general_ci (PAD SPACE: 'bob ' too)
    got = conn.execute(sql, ("BOB", "Alice", "bob")).fetchall()
    assert got == [(3, "alice"), (2, "bob "), (1, "Bob")]
    assert len(log) == 1, log
    conn.execute("UPDATE t SET flag = 1 WHERE v = 4")
    assert conn.execute(sql, ("alice", "CARL", "nobody")).fetchall() == [
        (5, "carl"),
        (4, "ALICE"),
        (3, "alice"),
    ]


def test_base_table_query_many_leaves_out_pending_deltas():
    conn = noria_py.connect()
    setup_h(conn)
    conn.execute(IN3, (0, 0, 0, 0)).fetchall()  # (a query puts the table in the graph)
    base = conn.engine.graph.lookup("base(h)")
    assert isinstance(base, BaseTable)
    keys = [(2, 3), (4, 4), (None, 1)]
    want = Counter(r for k in keys for r in base.query([0, 1], k))
    assert len(want) == 4
    assert Counter(base.query_many([0, 1], keys)) == want
    # a delta base storage holds but the dataflow has not received yet is left out, as
    # ``query`` leaves it out
    row = (4, 4, "pending")
    conn.engine.storage.insert_rows("h", [list(row)], None)
    base.pending.append([(row, 1)])
    try:
        assert Counter(base.query_many([0, 1], keys)) == want
    finally:
        base.pending.clear()
    assert Counter(base.query_many([0, 1], keys)) == want + Counter([(row, 1)])


def test_a_record_of_no_asked_key_falls_back_to_key_by_key_fills(monkeypatch):
    conn = noria_py.connect()
    setup_h(conn)
    conn.execute(IN3, (0, 0, 0, 0)).fetchall()
    reader = next(
        n
        for n in conn.engine.graph.nodes.values()
        if isinstance(n, Reader) and n.partial and n.key_cols
    )
    parent = reader.parents[0]
    real = type(parent).query_many

    stranger = parent.query(list(reader.key_cols), (5, 7))
    assert stranger  # a record of a key nobody asks for below

    def with_a_stranger(self, cols, keys):
        return real(self, cols, keys) + stranger

    monkeypatch.setattr(type(parent), "query_many", with_a_stranger)
    got = conn.execute(IN3, (3, 1, 2, 4)).fetchall()
    assert sorted(got) == [(3, 1, "n3-1"), (3, 2, "n3-2"), (3, 4, "n3-4")]


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("read"),
            st.integers(0, 4),
            st.lists(st.one_of(st.integers(0, 6), st.none()), min_size=1, max_size=5),
        ),
        st.tuples(st.just("insert"), st.integers(0, 4), st.integers(0, 6)),
        st.tuples(st.just("delete"), st.integers(0, 4), st.integers(0, 6)),
    ),
    max_size=30,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=40),
    ops,
    st.sampled_from([None, 5_000]),
)
def test_in_list_reads_equal_sqlite(rows, steps, memory_limit):
    """Any sequence of IN-list reads (missing, filled, repeated and NULL keys) and writes
    answers as SQLite does (plain integers: the dataflow's bookkeeping is what is checked),
    with and without a memory budget that evicts."""
    conn = noria_py.connect(memory_limit=memory_limit)
    db = sqlite3.connect(":memory:")
    for c in (conn, db):
        c.execute("CREATE TABLE h (user_id INT, story_id INT)")
        c.executemany("INSERT INTO h VALUES (?, ?)", rows)
    for step in steps:
        if step[0] == "read":
            _, user, stories = step
            marks = ", ".join("?" * len(stories))
            sql = f"SELECT user_id, story_id FROM h WHERE user_id = ? AND story_id IN ({marks})"
            got = sorted(conn.execute(sql, (user, *stories)).fetchall())
            want = sorted(db.execute(sql, (user, *stories)).fetchall())
            assert got == want, (step, got, want)
        elif step[0] == "insert":
            for c in (conn, db):
                c.execute("INSERT INTO h VALUES (?, ?)", step[1:])
        else:
            for c in (conn, db):
                c.execute("DELETE FROM h WHERE user_id = ? AND story_id = ?", step[1:])
    conn.close()
    db.close()

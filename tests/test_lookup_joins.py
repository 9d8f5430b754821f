"""Lookup joins and fills pushed into base storage, against base storage alone.

A join of two base tables keeps no copy of its inputs: a delta from one side is joined with the
other side looked up in base storage, minus the deltas base storage holds that the dataflow has
not received yet (a write that changes two tables, a COMMIT, another process's writes). A fill
over such joins and column picks is one SQLite query, and an aggregate's COUNT/SUM/AVG fill one
grouped query. Hypothesis draws writes that change both sides of the joins (cascading deletes,
transactions, rollbacks) and reads; every answer must equal the same query answered by base
storage alone (``dataflow=False``), with and without a memory budget that keeps evicting.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

SCHEMA = [
    "CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(20), grp INT)",
    "CREATE TABLE posts (id INT PRIMARY KEY, author INT, score INT, tag VARCHAR(10),"
    " FOREIGN KEY (author) REFERENCES authors (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE tags (tag VARCHAR(10), label VARCHAR(20))",
]

QUERIES = [
    # the vote query's shape: a left join under an aggregate keyed by the left side
    "SELECT a.id, a.name, COUNT(p.id), SUM(p.score), AVG(p.score) FROM authors a"
    " LEFT JOIN posts p ON p.author = a.id WHERE a.id = ? GROUP BY a.id, a.name",
    # grouped by a text column (spellings that are one group under the collation; which
    # spelling a group shows is the engine's choice: see test_a_group_shows_a_current_spelling)
    "SELECT LOWER(a.name), COUNT(*), SUM(p.score) FROM posts p JOIN authors a"
    " ON a.id = p.author WHERE a.grp = ? GROUP BY a.name",
    # an inner join read by the right side's column
    "SELECT p.id, p.score, a.name FROM posts p JOIN authors a ON a.id = p.author WHERE p.author = ?",
    # a left join read by the left side, right rows appearing and disappearing
    "SELECT a.id, p.id, p.tag FROM authors a LEFT JOIN posts p ON p.author = a.id WHERE a.id = ?",
    # a join on a text key compared under the collation, and a chain of two joins
    "SELECT p.id, t.label FROM posts p JOIN tags t ON t.tag = p.tag WHERE p.author = ?",
    "SELECT a.grp, COUNT(t.label) FROM authors a JOIN posts p ON p.author = a.id"
    " LEFT JOIN tags t ON t.tag = p.tag WHERE a.grp = ? GROUP BY a.grp",
    # a filter above the join (its fill is the join's query, filtered in the dataflow)
    "SELECT p.id, a.name FROM posts p JOIN authors a ON a.id = p.author"
    " WHERE p.score > 2 AND a.grp = ?",
    # a filter on an input (no single query: the join answers a fill by lookups itself)
    "SELECT a.id, COUNT(p.id), SUM(p.score) FROM authors a LEFT JOIN posts p"
    " ON p.author = a.id AND p.score > 2 WHERE a.id = ? GROUP BY a.id",
    "SELECT p.id, a.name FROM (SELECT * FROM authors WHERE grp > 0) a JOIN posts p"
    " ON p.author = a.id WHERE p.author = ?",
    # filters of integer equalities and NULL tests are SQL conditions of the one query: on
    # the right input of a left join (its ON), on an inner join's inputs (its WHERE)
    "SELECT a.id, COUNT(p.id), SUM(p.score) FROM authors a LEFT JOIN posts p"
    " ON p.author = a.id AND p.score = 2 WHERE a.id = ? GROUP BY a.id",
    "SELECT a.id, COUNT(p.id) FROM authors a LEFT JOIN posts p"
    " ON p.author = a.id AND p.score IS NULL AND p.tag IS NOT NULL WHERE a.id = ? GROUP BY a.id",
    "SELECT p.id, a.name FROM (SELECT * FROM authors WHERE grp = 1) a JOIN posts p"
    " ON p.author = a.id WHERE p.score IS NOT NULL AND p.author = ?",
    "SELECT p.author, COUNT(*), SUM(p.score) FROM posts p WHERE p.score = -1 AND p.author = ?"
    " GROUP BY p.author",
]

NAMES = ["ann", "Ann", "bob", "BOB ", "cy"]
TAGS = ["x", "X", "y", "z", None]

ops = st.one_of(
    st.tuples(st.just("author"), st.integers(0, 7), st.sampled_from(NAMES), st.integers(0, 2)),
    st.tuples(
        st.just("post"),
        st.integers(0, 30),
        st.integers(0, 8),
        st.one_of(st.none(), st.integers(-3, 9)),
        st.sampled_from(TAGS),
    ),
    st.tuples(st.just("tag"), st.sampled_from(TAGS[:4]), st.sampled_from(["l1", "l2"])),
    st.tuples(st.just("rename"), st.integers(0, 7), st.sampled_from(NAMES)),
    st.tuples(st.just("move"), st.integers(0, 30), st.integers(0, 8)),
    st.tuples(st.just("reid"), st.integers(0, 7), st.integers(0, 9)),
    st.tuples(st.just("del_author"), st.integers(0, 7)),
    st.tuples(st.just("del_post"), st.integers(0, 30)),
    st.tuples(st.just("del_tag"), st.sampled_from(TAGS[:4])),
    st.tuples(st.just("tx"), st.sampled_from(["BEGIN", "COMMIT", "ROLLBACK"])),
    st.tuples(st.just("read"), st.integers(0, len(QUERIES) - 1), st.integers(0, 8)),
)


def _statement(op):
    kind = op[0]
    if kind == "author":
        return "INSERT INTO authors VALUES (?, ?, ?)", op[1:]
    if kind == "post":
        return "INSERT INTO posts VALUES (?, ?, ?, ?)", op[1:]
    if kind == "tag":
        return "INSERT INTO tags VALUES (?, ?)", op[1:]
    if kind == "rename":
        return "UPDATE authors SET name = ? WHERE id = ?", (op[2], op[1])
    if kind == "move":
        return "UPDATE posts SET author = ? WHERE id = ?", (op[2], op[1])
    if kind == "reid":  # cascades to the posts: one write changes both tables
        return "UPDATE authors SET id = ? WHERE id = ?", (op[2], op[1])
    if kind == "del_author":  # cascades too
        return "DELETE FROM authors WHERE id = ?", (op[1],)
    if kind == "del_post":
        return "DELETE FROM posts WHERE id = ?", (op[1],)
    if kind == "del_tag":
        return "DELETE FROM tags WHERE tag = ?", (op[1],)
    return None


def _run(conn, sql, params):
    try:
        cur = conn.execute(sql, params)
        return ("ok", sorted(map(tuple, cur.fetchall()), key=repr) if cur.description else None)
    except noria_py.Error as e:
        return ("error", e.args[1] if len(e.args) > 1 else type(e).__name__)


def _check(script, **options):
    engine = noria_py.connect(**options)
    oracle = noria_py.connect(dataflow=False)
    for conn in (engine, oracle):
        for sql in SCHEMA:
            conn.execute(sql)
    in_tx = False
    for op in script:
        if op[0] == "tx":
            if (op[1] == "BEGIN") == in_tx:
                continue
            in_tx = op[1] == "BEGIN"
            for conn in (engine, oracle):
                conn.execute(op[1])
            continue
        if op[0] == "read":
            sql, params = QUERIES[op[1]], (op[2],)
        else:
            sql, params = _statement(op)
        got, want = _run(engine, sql, params), _run(oracle, sql, params)
        assert got == want, (op, sql, params)
    if in_tx:
        for conn in (engine, oracle):
            conn.execute("COMMIT")
    # after the last write every query, at every key, still agrees
    for sql in QUERIES:
        for k in range(9):
            assert _run(engine, sql, (k,)) == _run(oracle, sql, (k,)), (sql, k)
    joins = [n for n in engine._engine.graph.nodes.values() if n.kind == "join"]
    assert joins and all(j.lookup for j in joins)
    engine.close()
    oracle.close()


FACTOR = int(os.environ.get("NORIA_EXAMPLES_FACTOR", "1"))


def _examples(n: int):
    return settings(
        max_examples=n * FACTOR,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@_examples(60)
@given(st.lists(ops, min_size=5, max_size=80))
def test_lookup_joins_match_base_storage(script):
    _check(script)


@_examples(30)
@given(st.lists(ops, min_size=5, max_size=80))
def test_lookup_joins_match_base_storage_while_evicting(script):
    _check(script, memory_limit="2KB")


def test_full_materialization_over_lookup_joins():
    script = [("author", i, NAMES[i % 5], i % 3) for i in range(8)]
    script += [("post", i, i % 9, i - 3, TAGS[i % 5]) for i in range(30)]
    script += [("tag", "x", "l1"), ("reid", 2, 9), ("del_author", 3), ("move", 4, 9)]
    script += [("read", q, k) for q in range(len(QUERIES)) for k in range(9)]
    _check(script, partial=False)


def test_a_group_shows_a_current_spelling():
    # a grouped fill counts each spelling's rows, as the copying path does row by row
    q = (
        "SELECT a.name, COUNT(*) FROM posts p JOIN authors a ON a.id = p.author"
        " WHERE a.grp = ? GROUP BY a.name"
    )
    answers = []
    for lookup in (True, False):
        conn = noria_py.connect(lookup_joins=lookup)
        for sql in SCHEMA:
            conn.execute(sql)
        conn.execute("INSERT INTO authors VALUES (1, 'bob', 0), (2, 'Bob', 0), (3, 'BOB ', 0)")
        conn.execute("INSERT INTO posts VALUES (1, 1, 0, 'x'), (2, 2, 0, 'x'), (3, 3, 0, 'x')")
        seen = [conn.execute(q, (0,)).fetchall()]
        for victim in (3, 2):
            conn.execute("DELETE FROM authors WHERE id = ?", (victim,))
            seen.append(conn.execute(q, (0,)).fetchall())
        conn.execute("DELETE FROM posts")
        seen.append(conn.execute(q, (0,)).fetchall())
        answers.append(seen)
    assert answers[0] == answers[1]
    assert answers[0] == [[("BOB ", 3)], [("Bob", 2)], [("bob", 1)], []]


def test_a_write_to_both_sides_is_joined_once():
    # a cascading UPDATE changes the author and its posts in one statement: each side's delta
    # must meet the other side as the join had received it, or the new rows count twice
    conn = noria_py.connect()
    for sql in SCHEMA:
        conn.execute(sql)
    conn.execute("INSERT INTO authors VALUES (1, 'ann', 0)")
    conn.execute("INSERT INTO posts VALUES (1, 1, 5, 'x'), (2, 1, 7, 'y')")
    q = QUERIES[0]
    assert conn.execute(q, (1,)).fetchall() == [(1, "ann", 2, 12, 6)]
    conn.execute("UPDATE authors SET id = 4 WHERE id = 1")
    assert conn.execute(q, (4,)).fetchall() == [(4, "ann", 2, 12, 6)]
    assert conn.execute(q, (1,)).fetchall() == []
    conn.execute("DELETE FROM authors WHERE id = 4")
    assert conn.execute(q, (4,)).fetchall() == []
    assert conn.execute("SELECT COUNT(*) FROM posts").fetchall() == [(0,)]


def test_pending_deltas_are_what_a_lookup_leaves_out(monkeypatch):
    # without taking the pending deltas out, the cascade above double counts: the mechanism
    # matters
    from noria_py.dataflow.ops import base

    monkeypatch.setattr(base.BaseTable, "_received", lambda self, rows, cols, key: rows)
    conn = noria_py.connect()
    for sql in SCHEMA:
        conn.execute(sql)
    conn.execute("INSERT INTO authors VALUES (1, 'ann', 0)")
    conn.execute("INSERT INTO posts VALUES (1, 1, 5, 'x')")
    q = "SELECT a.id, p.id FROM authors a JOIN posts p ON p.author = a.id WHERE a.grp = ?"
    assert conn.execute(q, (0,)).fetchall() == [(1, 1)]
    conn.execute("UPDATE authors SET id = 4 WHERE id = 1")
    assert sorted(conn.execute(q, (0,)).fetchall()) != [(4, 1)]


def test_a_query_installed_inside_a_transaction_over_a_lookup_join():
    # a full state built inside a transaction replays its uncommitted writes, then takes them
    # back out (through the lookup join) until COMMIT
    conn = noria_py.connect(partial=False)
    other = conn  # same connection: the transaction's own reads go to base storage
    for sql in SCHEMA:
        conn.execute(sql)
    conn.execute("INSERT INTO authors VALUES (1, 'ann', 0), (2, 'bob', 0)")
    conn.execute("INSERT INTO posts VALUES (1, 1, 5, 'x')")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO posts VALUES (2, 2, 1, 'x')")
    conn.execute("UPDATE authors SET id = 3 WHERE id = 1")
    q = QUERIES[1]
    assert sorted(other.execute(q, (0,)).fetchall()) == [("ann", 1, 5), ("bob", 1, 1)]
    conn.execute("ROLLBACK")
    assert sorted(conn.execute(q, (0,)).fetchall()) == [("ann", 1, 5)]
    conn.execute("BEGIN")
    conn.execute("INSERT INTO posts VALUES (2, 2, 1, 'x')")
    conn.execute("UPDATE authors SET id = 3 WHERE id = 1")
    conn.execute("COMMIT")
    assert sorted(conn.execute(q, (0,)).fetchall()) == [("ann", 1, 5), ("bob", 1, 1)]


def test_sum_overflowing_sqlite_integers_falls_back_to_exact_python():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE a (id INT PRIMARY KEY)")
    conn.execute("CREATE TABLE b (aid INT, v BIGINT)")
    conn.execute("INSERT INTO a VALUES (1)")
    big = 2**63 - 1
    conn.execute("INSERT INTO b VALUES (1, ?), (1, ?), (1, -5)", (big, big))
    q = "SELECT a.id, SUM(b.v) FROM a JOIN b ON b.aid = a.id WHERE a.id = ? GROUP BY a.id"
    from decimal import Decimal

    assert conn.execute(q, (1,)).fetchall() == [(1, Decimal(2 * big - 5))]


def _two_engines(tmp_path):
    """Two engines on one database file with the schema (as two processes would be)."""
    path = str(tmp_path / "db.sqlite")
    a = noria_py.connect(path)
    for sql in SCHEMA:
        a.execute(sql)
    return a, noria_py.connect(path)


@pytest.mark.parametrize("writer_first", [True, False])
def test_two_processes_on_one_file_with_lookup_joins(tmp_path, writer_first):
    # the views of a file's second engine join the first engine's writes as they arrive
    # through the change log: lookups read the snapshot pinned at the applied position
    a, b = _two_engines(tmp_path)
    q = QUERIES[0]
    if not writer_first:
        # both engines have the key filled: the writes below are joined as they arrive, by
        # lookups in a snapshot that must hold the writer's own earlier writes
        assert b.execute(q, (1,)).fetchall() == []
        assert a.execute(q, (1,)).fetchall() == []
    a.execute("INSERT INTO authors VALUES (1, 'ann', 0)")
    a.execute("INSERT INTO posts VALUES (1, 1, 5, 'x'), (2, 1, 7, 'y')")
    b.engine.sync()
    assert b.execute(q, (1,)).fetchall() == [(1, "ann", 2, 12, 6)]
    a.execute("UPDATE authors SET id = 4 WHERE id = 1")  # both tables, one log entry
    b.execute("INSERT INTO authors VALUES (5, 'cy', 1)")
    b.execute("INSERT INTO posts VALUES (3, 5, 1, 'z')")
    a.execute("INSERT INTO posts VALUES (4, 5, 2, 'z')")
    for conn in (a, b):
        conn.engine.sync()
        assert conn.execute(q, (4,)).fetchall() == [(4, "ann", 2, 12, 6)]
        assert conn.execute(q, (1,)).fetchall() == []
        assert conn.execute(q, (5,)).fetchall() == [(5, "cy", 2, 3, 1.5)]
    # a transaction's writes to both tables enter at COMMIT, joined as the snapshot holds them
    a.execute("BEGIN")
    a.execute("INSERT INTO authors VALUES (6, 'dee', 1)")
    a.execute("INSERT INTO posts VALUES (5, 6, 4, 'x'), (6, 4, 1, 'x')")
    a.execute("DELETE FROM posts WHERE id = 3")
    a.execute("COMMIT")
    for conn in (a, b):
        conn.engine.sync()
        assert conn.execute(q, (6,)).fetchall() == [(6, "dee", 1, 4, 4)]
        assert conn.execute(q, (4,)).fetchall() == [(4, "ann", 3, 13, Decimal("4.3333"))]
        assert conn.execute(q, (5,)).fetchall() == [(5, "cy", 1, 2, 2)]
    a.close()
    b.close()


def test_a_delta_nobody_below_keeps_skips_its_lookups(monkeypatch):
    from noria_py.dataflow.ops.join import Join

    lookups = []
    real = Join._bag
    monkeypatch.setattr(
        Join, "_bag", lambda self, side, key: lookups.append(key) or real(self, side, key)
    )
    conn = noria_py.connect()
    for sql in SCHEMA:
        conn.execute(sql)
    conn.execute("INSERT INTO authors VALUES (1, 'ann', 0), (2, 'bob', 0)")
    q = QUERIES[0]
    assert conn.execute(q, (1,)).fetchall() == [(1, "ann", 0, None, None)]
    lookups.clear()
    conn.execute("INSERT INTO posts VALUES (1, 2, 5, 'x')")  # author 2 was never read
    assert lookups == []
    conn.execute("INSERT INTO posts VALUES (2, 1, 5, 'x')")  # author 1 is filled below
    assert lookups
    assert conn.execute(q, (1,)).fetchall() == [(1, "ann", 1, 5, 5)]
    assert conn.execute(q, (2,)).fetchall() == [(2, "bob", 1, 5, 5)]
    # a query keyed otherwise below the same join (a full reader by the tag): every delta
    # must be looked up
    by_tag = "SELECT a.id, p.id FROM authors a LEFT JOIN posts p ON p.author = a.id WHERE p.tag = ?"
    conn.execute("INSERT INTO authors VALUES (3, 'cy', 0)")
    assert conn.execute(by_tag, ("y",)).fetchall() == []
    lookups.clear()
    conn.execute("INSERT INTO posts VALUES (3, 3, 1, 'y')")  # author 3 was never read
    assert lookups
    assert conn.execute(by_tag, ("y",)).fetchall() == [(3, 3)]
    joins = [n for n in conn._engine.graph.nodes.values() if n.kind == "join"]
    assert len(joins) == 1  # both queries share the join


def test_a_full_aggregate_is_built_by_one_grouped_query(monkeypatch):
    # cold start: the initial state of a full COUNT/SUM/AVG over a lookup join comes from
    # SQLite's own join and grouping, not from the join's contents in Python
    from noria_py.dataflow.ops.join import Join

    real = Join._lookup_contents

    def refuse(self):
        if self.sql_rel() is not None:
            raise AssertionError("the join's contents were computed in Python")
        return real(self)  # a filtered input: no single query

    monkeypatch.setattr(Join, "_lookup_contents", refuse)
    script = [("author", i, NAMES[i % 5], i % 3) for i in range(8)]
    script += [("post", i, i % 9, None if i % 7 == 0 else i - 3, TAGS[i % 5]) for i in range(30)]
    script += [("read", 0, k) for k in range(9)] + [("read", 1, k) for k in range(3)]
    script += [("post", 40, 2, 4, "x"), ("del_author", 2), ("read", 0, 2), ("read", 1, 0)]
    _check(script, partial=False, bulk_replay_rows=None)


def test_integer_equality_and_null_filters_are_conditions_of_the_one_query(monkeypatch):
    # the full aggregates over filtered inputs (the Lobsters vote counts' shape) are built by
    # one grouped query, and a left join's filtered right side by the join's ON
    from noria_py.dataflow import sqlrel
    from noria_py.dataflow.ops.filter import Filter

    real = Filter.contents

    def describable(text):  # integer equalities and NULL tests only
        return all(
            re.fullmatch(r"(NOT )?#\d+ IS NULL|#\d+ = -?\d+", p) for p in text.split(" AND ")
        )

    def one_query(self):
        if describable(self.text) and sqlrel.pushed(self) is None:
            raise AssertionError(f"the filter {self.text} ran in Python")
        return real(self)

    monkeypatch.setattr(Filter, "contents", one_query)
    script = [("author", i, NAMES[i % 5], i % 3) for i in range(8)]
    script += [
        ("post", i, i % 9, None if i % 4 == 0 else i % 5 - 1, TAGS[i % 5]) for i in range(30)
    ]
    first = len(QUERIES) - 4
    script += [("read", q, k) for q in range(first, len(QUERIES)) for k in range(9)]
    script += [("post", 40, 2, 2, None), ("post", 41, 2, None, "y"), ("del_post", 8)]
    script += [("reid", 1, 9), ("read", first, 2), ("read", first + 1, 9)]
    _check(script, partial=False, bulk_replay_rows=None)


def test_another_process_committing_right_after_this_one(tmp_path):
    # between this engine's COMMIT and its deltas entering the dataflow, another process
    # commits a row the new one joins: the lookups must not see it before its delta arrives
    # (the engine pins a snapshot holding its own commit and applies the other's entry first)
    a, b = _two_engines(tmp_path)
    q = QUERIES[0]
    assert a.execute(q, (1,)).fetchall() == []
    storage = a.engine.storage
    real_commit = storage.commit
    armed = [True]

    def commit_then_the_other():
        real_commit()
        if armed:
            armed.pop()
            b.execute("INSERT INTO posts VALUES (9, 1, 100, 'z')")

    storage.commit = commit_then_the_other
    a.execute("INSERT INTO authors VALUES (1, 'ann', 0)")
    storage.commit = real_commit
    for conn in (a, b):
        conn.engine.sync()
        assert conn.execute(q, (1,)).fetchall() == [(1, "ann", 1, 100, 100)]
    a.close()
    b.close()


def test_a_left_join_counts_the_right_side_only_while_it_knows_no_bound(monkeypatch):
    """A left join's right delta must know whether the key had right rows before it (the
    padded row goes or comes back). Once counted, a lower bound per key kept up by every right
    delta answers the next inserts without counting; deletes that may reach zero count again,
    and the answers stay those of base storage."""
    from noria_py.dataflow.ops.join import Join

    counted = []
    real = Join._right_nonempty
    monkeypatch.setattr(
        Join,
        "_right_nonempty",
        lambda self, key, d: counted.append(key) or real(self, key, d),
    )
    conn = noria_py.connect()
    plain = noria_py.connect(dataflow=False)
    for c in (conn, plain):
        for sql in SCHEMA:
            c.execute(sql)
        c.execute("INSERT INTO authors VALUES (1, 'ann', 0), (2, 'bob', 0)")
    q = QUERIES[3]

    def same():
        for k in (1, 2):
            assert sorted(conn.execute(q, (k,)).fetchall(), key=repr) == sorted(
                plain.execute(q, (k,)).fetchall(), key=repr
            )

    same()
    steps = [
        ("INSERT INTO posts VALUES (1, 1, 1, 'x')", True),  # counted: no bound yet
        ("INSERT INTO posts VALUES (2, 1, 1, 'x')", False),  # bound 1 -> 2
        ("INSERT INTO posts VALUES (3, 1, 1, 'x')", False),  # bound 2 -> 3
        ("DELETE FROM posts WHERE id = 3", False),  # 3 - 1 > 0: still known
        ("DELETE FROM posts WHERE id IN (1, 2)", True),  # may reach zero: counted
        ("INSERT INTO posts VALUES (4, 1, 1, 'x')", True),  # padded again, then counted
        ("INSERT INTO posts VALUES (5, 2, 1, 'x')", True),
        ("UPDATE posts SET author = 2 WHERE id = 4", True),  # key 1 -1, key 2 +1
    ]
    for sql, counts in steps:
        counted.clear()
        for c in (conn, plain):
            c.execute(sql)
        assert bool(counted) == counts, sql
        same()
    # a change to the graph (another query installed) forgets every bound
    conn.execute(
        "SELECT a.id, p.tag FROM authors a LEFT JOIN posts p ON p.author = a.id WHERE a.grp = ?",
        (0,),
    ).fetchall()
    counted.clear()
    conn.execute("INSERT INTO posts VALUES (6, 2, 1, 'x')")
    plain.execute("INSERT INTO posts VALUES (6, 2, 1, 'x')")
    assert counted
    same()


def test_an_executemany_under_a_left_join_is_one_delta_counted_per_key():
    """An executemany of many rows is one delta: the left join asks, per key, how many of the
    delta's own records it holds (still pending in base storage) from an index of the batch,
    and the padded rows of keys that had no right rows go."""
    conn = noria_py.connect()
    plain = noria_py.connect(dataflow=False)
    for c in (conn, plain):
        for sql in SCHEMA:
            c.execute(sql)
        c.executemany("INSERT INTO authors VALUES (?, ?, 0)", [(k, f"a{k}") for k in range(10)])
        c.execute("INSERT INTO posts VALUES (1000, 3, 1, 'x')")
    q = QUERIES[0]
    for k in range(10):
        conn.execute(q, (k,)).fetchall()  # every key filled below the join
    rows = [(i, i % 7, i % 3, "x") for i in range(200)]  # keys 0..6, author 3 had a post
    for c in (conn, plain):
        c.executemany("INSERT INTO posts VALUES (?, ?, ?, ?)", rows)
    for k in range(10):
        assert conn.execute(q, (k,)).fetchall() == plain.execute(q, (k,)).fetchall(), k
    by_post = QUERIES[3]
    for k in range(10):
        got = sorted(conn.execute(by_post, (k,)).fetchall(), key=repr)
        assert got == sorted(plain.execute(by_post, (k,)).fetchall(), key=repr), k


def _grouped_sql(conn, sql):
    from noria_py.dataflow.ops.aggregate import Aggregate

    (agg,) = [n for n in conn.engine.graph.nodes.values() if isinstance(n, Aggregate)]
    return agg._grouped[0].sql


def test_a_fill_keyed_by_a_unique_row_asks_sqlite_for_no_grouping():
    # the fill of a key that fixes the primary key (or a NOT NULL unique key) of the table
    # every group column comes from has one group at most: SQLite need not group (or sort) it,
    # and a key with no row (SQLite's one row of COUNT(*) = 0) is no group
    conn = noria_py.connect()
    for sql in SCHEMA:
        conn.execute(sql)
    conn.execute("INSERT INTO authors VALUES (1, 'ann', 0), (2, 'Ann', 0), (3, 'bob', 1)")
    conn.execute("INSERT INTO posts VALUES (1, 1, 5, 'x'), (2, 1, 7, 'y'), (3, 3, 1, 'x')")
    q = QUERIES[0]
    assert conn.execute(q, (1,)).fetchall() == [(1, "ann", 2, Decimal(12), Decimal("6.0000"))]
    assert conn.execute(q, (2,)).fetchall() == [(2, "Ann", 0, None, None)]
    assert conn.execute(q, (9,)).fetchall() == []
    assert conn.execute(q, (None,)).fetchall() == []
    assert "GROUP BY" not in _grouped_sql(conn, q)
    # keyed by a column that is no key: grouped by SQLite
    conn2 = noria_py.connect()
    for sql in SCHEMA:
        conn2.execute(sql)
    conn2.execute("INSERT INTO authors VALUES (1, 'ann', 0), (2, 'Ann', 0), (3, 'bob', 0)")
    conn2.execute("INSERT INTO posts VALUES (1, 1, 5, 'x'), (2, 3, 7, 'y')")
    by_grp = "SELECT a.id, COUNT(p.id) FROM authors a LEFT JOIN posts p ON p.author = a.id"
    by_grp += " WHERE a.grp = ? GROUP BY a.id"
    assert sorted(conn2.execute(by_grp, (0,)).fetchall()) == [(1, 1), (2, 0), (3, 1)]
    assert "GROUP BY" in _grouped_sql(conn2, by_grp)
    for key_col, key, want, grouped in (
        ("code", "ab", [("ab", 1)], False),  # NOT NULL UNIQUE (a text key under the collation)
        ("opt", 4, [(4, 1)], True),  # a unique key that may be NULL: NULLs repeat
    ):
        c = noria_py.connect()
        c.execute("CREATE TABLE u (code VARCHAR(5) NOT NULL UNIQUE, opt INT UNIQUE, v INT)")
        c.execute("INSERT INTO u VALUES ('ab', NULL, 1), ('cd', NULL, 2), ('ef', 4, 3)")
        uq = f"SELECT {key_col}, COUNT(*) FROM u WHERE {key_col} = ? GROUP BY {key_col}"
        assert c.execute(uq, (key,)).fetchall() == want
        if not grouped:
            assert c.execute(uq, ("AB",)).fetchall() == [("ab", 1)]
        assert ("GROUP BY" in _grouped_sql(c, uq)) == grouped

"""A GROUP BY that names a table's primary key and other columns of that table (``GROUP BY
s.id, s.title``): the aggregate keys its groups by the primary key alone, since the other
columns are the same on every row of a group (``ops/aggregate.py`` ``_dependent_groups``), and
shows them as the rows spell them. Hypothesis writes stories whose titles differ only in case
or accents (one group each under utf8mb4_general_ci all the same: their ids differ), retitles
them, deletes them and adds and removes votes; after each step, every key read from the
maintained view must equal MariaDB's answer to the same query over the same rows. A self-join,
where a primary key does not determine the other side's columns, keeps every column in the
key."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py

TITLES = ["Bob", "bob", "BOB", "Bób", "x", ""]
KEYS = [1, 2, 3, 4]

_step = st.one_of(
    st.tuples(st.just("story"), st.sampled_from(KEYS), st.sampled_from(TITLES)),
    st.tuples(st.just("retitle"), st.sampled_from(KEYS), st.sampled_from(TITLES)),
    st.tuples(st.just("unstory"), st.sampled_from(KEYS), st.none()),
    st.tuples(st.just("vote"), st.sampled_from(KEYS), st.integers(1, 3)),
    st.tuples(st.just("unvote"), st.sampled_from(KEYS), st.integers(1, 3)),
)


def _writes(step, s: str, v: str) -> list:
    kind, key, arg = step
    if kind == "story":
        return [(f"INSERT IGNORE INTO {s} VALUES (%s, %s)", (key, arg))]
    if kind == "retitle":
        return [(f"UPDATE {s} SET title = %s WHERE id = %s", (arg, key))]
    if kind == "unstory":
        return [(f"DELETE FROM {s} WHERE id = %s", (key,))]
    if kind == "vote":
        return [(f"INSERT INTO {v} VALUES (%s, %s)", (arg, key))]
    return [(f"DELETE FROM {v} WHERE user_id = %s AND story_id = %s", (arg, key))]


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(_step, min_size=1, max_size=14))
def test_groups_keyed_by_a_primary_key_match_mariadb(mariadb_oracle, steps):
    tag = uuid.uuid4().hex[:8]
    s, v = f"dg_s_{tag}", f"dg_v_{tag}"
    ddl = [
        f"CREATE TABLE {s} (id INT NOT NULL PRIMARY KEY, title VARCHAR(20) NOT NULL)",
        f"CREATE TABLE {v} (user_id INT NOT NULL, story_id INT NOT NULL)",
    ]
    queries = [
        f"SELECT s.id, s.title, COUNT(v.story_id) FROM {s} s LEFT JOIN {v} v"
        f" ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title",
        f"SELECT s.title, s.id, COUNT(*) FROM {s} s JOIN {v} v ON v.story_id = s.id"
        f" WHERE s.id = ? GROUP BY s.title, s.id",
    ]
    conn = noria_py.connect()
    try:
        for stmt in ddl:
            conn.execute(stmt)
            mariadb_oracle.query(stmt)
        for q in queries:  # installed before the writes, read after each
            conn.execute(q, (1,)).fetchall()
        dependent = [
            n._dependent for n in conn.engine.graph.nodes.values() if n.kind == "aggregate"
        ]
        assert dependent and all(dependent), dependent  # the titles are out of the keys
        for step in steps:
            for sql, params in _writes(step, s, v):
                conn.execute(sql.replace("%s", "?"), params)
                mariadb_oracle.query(sql, params)
            for q in queries:
                for k in KEYS:
                    got = conn.execute(q, (k,)).fetchall()
                    want, _ = mariadb_oracle.query(q.replace("?", "%s"), (k,))
                    assert sorted(got) == sorted(tuple(r) for r in want), (step, q, k)
    finally:
        conn.close()
        mariadb_oracle.query(f"DROP TABLE IF EXISTS {s}, {v}")


def test_a_self_join_keeps_every_group_column_in_the_key():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10), boss INT)")
    conn.executemany(
        "INSERT INTO p VALUES (?, ?, ?)", [(1, "Ann", None), (2, "bo", 1), (3, "BO", 1)]
    )
    q = (
        "SELECT a.id, b.name, COUNT(*) FROM p a JOIN p b ON b.boss = a.id"
        " WHERE a.id = ? GROUP BY a.id, b.name"
    )
    assert conn.execute(q, (1,)).fetchall() == [(1, "BO", 2)]  # 'bo' and 'BO': one group
    (agg,) = [n for n in conn.engine.graph.nodes.values() if n.kind == "aggregate"]
    assert agg._dependent == set()
    conn.close()


def test_a_state_filled_by_a_dependent_column_keys_it():
    """Read by the title, the state is filled by it: the title stays in the group key."""
    conn = noria_py.connect()
    conn.execute("CREATE TABLE s (id INT PRIMARY KEY, title VARCHAR(10))")
    conn.executemany("INSERT INTO s VALUES (?, ?)", [(1, "a"), (2, "A"), (3, "b")])
    q = "SELECT id, title, COUNT(*) FROM s WHERE title = ? GROUP BY id, title"
    assert sorted(conn.execute(q, ("a",)).fetchall()) == [(1, "a", 1), (2, "A", 1)]
    conn.execute("UPDATE s SET title = 'B' WHERE id = 1")
    assert conn.execute(q, ("a",)).fetchall() == [(2, "A", 1)]
    assert sorted(conn.execute(q, ("b",)).fetchall()) == [(1, "B", 1), (3, "b", 1)]
    conn.close()

"""Lookup joins under the test scheduler: hypothesis chooses the message order.

A lookup join keeps no copy of its inputs: it joins each delta with the other input read from
base storage as of the last write of that table that has reached the join (``reading_at`` in
``noria_py/dataflow/ops/base.py``). These tests run graphs whose joins look up (inner, left, a
join of joins, filters and projections between base storage and a join, aggregates above), next
to a self-join (which keeps its copies), with writes, multi-table transactions, reads and
evictions interleaved with deliveries in any order across edges, and compare every filled
reader key with SQLite after the dataflow drains (``world.py``).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py

from .test_interleavings import _ARGS
from .world import KEYS, QUERIES, WRITES, World, initial_rows

LOOKUP_QUERIES = {
    "join": QUERIES["join"],
    "join_by_key": QUERIES["join_by_key"],
    "left_join": QUERIES["left_join"],
    "left_join_count": QUERIES["left_join_count"],
    "agg_over_join": QUERIES["agg_over_join"],
    "self_join": QUERIES["self_join"],
    # a filter on each side between base storage and the join
    "filtered_join": "SELECT s.id, u.grp FROM stories s JOIN users u ON s.author = u.id "
    "WHERE s.score > 3 AND u.grp <> 1 AND s.author = ?",
    "filtered_left_join": "SELECT s.id, COUNT(v.voter) FROM stories s LEFT JOIN "
    "(SELECT story, voter FROM votes WHERE voter > 1) v ON v.story = s.id "
    "WHERE s.id = ? GROUP BY s.id",
    # a join of joins: votes -> stories -> users
    "join_of_joins": "SELECT v.id, s.id, u.grp FROM votes v JOIN stories s ON v.story = s.id "
    "JOIN users u ON s.author = u.id WHERE u.grp = ?",
    "left_join_of_joins": "SELECT s.id, u.grp, v.voter FROM stories s JOIN users u "
    "ON s.author = u.id LEFT JOIN votes v ON v.story = s.id WHERE s.author = ?",
}
LOOKUPS = {  # the queries whose joins all look up
    "join",
    "join_by_key",
    "left_join",
    "left_join_count",
    "agg_over_join",
    "filtered_join",
    "filtered_left_join",
    "join_of_joins",
    "left_join_of_joins",
}


def _write(draw):
    sql = draw(st.sampled_from([w for w, _ in WRITES]))
    return sql, tuple(draw(st.sampled_from(list(r))) for r in _ARGS[sql])


@st.composite
def actions(draw, names):
    kind = draw(
        st.sampled_from(["write", "transaction", "read", "step", "step", "step", "step", "evict"])
    )
    if kind == "write":
        return ("write",) + _write(draw)
    if kind == "transaction":
        return ("transaction", [_write(draw) for _ in range(draw(st.integers(2, 4)))])
    if kind == "read":
        return ("read", draw(st.sampled_from(names)), draw(st.sampled_from(list(KEYS))))
    return (kind, draw(st.integers(0, 50)))


@st.composite
def scenarios(draw):
    names = draw(
        st.lists(st.sampled_from(sorted(LOOKUP_QUERIES)), min_size=1, max_size=3, unique=True)
    )
    seed = draw(st.integers(0, 2**16))
    acts = draw(st.lists(actions(names), min_size=5, max_size=60))
    drain_seed = draw(st.integers(0, 2**16))
    split = draw(st.sampled_from(["nodes", "domains"]))
    return names, seed, acts, drain_seed, split


def run_scenario(scenario) -> list[str]:
    names, seed, acts, drain_seed, split = scenario
    world = World(
        names,
        initial_rows(random.Random(seed)),
        split=split,
        queries=LOOKUP_QUERIES,
        lookup_joins=True,
    )
    try:
        joins = [n for n in world.engine.graph.nodes.values() if n.kind == "join"]
        if LOOKUPS & set(names):
            assert any(n.lookup for n in joins), "no lookup join in the graph"
        for act in acts:
            if act[0] == "write":
                world.write(act[1], act[2])
            elif act[0] == "transaction":
                world.transaction(act[1])
            elif act[0] == "read":
                world.read(act[1], act[2])
            elif act[0] == "step":
                world.step(act[1])
            else:
                world.evict(act[1])
        for name in names:
            for k in KEYS:
                world.read(name, k)
        rng = random.Random(drain_seed)
        world.drain(lambda n: rng.randrange(n))
        return world.problems()
    finally:
        world.close()


@settings(max_examples=2 * settings.default.max_examples)
@given(scenarios())
def test_lookup_join_interleavings_match_sqlite(scenario):
    problems = run_scenario(scenario)
    assert not problems, "\n".join(problems)


# --- named cases ----------------------------------------------------------------------------
USERS = [("INSERT INTO users VALUES (?, ?)", (i, i % 3)) for i in range(4)]
STORIES = [("INSERT INTO stories VALUES (?, ?, ?)", (i, i % 4, i)) for i in range(6)]


def _lookup_world(names) -> World:
    return World(names, USERS + STORIES, queries=LOOKUP_QUERIES, lookup_joins=True)


@pytest.mark.parametrize("first", ["stories", "users"])
def test_a_transaction_writing_both_inputs_is_joined_once(first):
    # one transaction adds a user and a story that joins it: whichever delta reaches the join
    # first must not see the other in base storage yet (it has not reached the join)
    w = _lookup_world(["join_by_key"])
    try:
        w.read("join_by_key", 7)
        w.drain()
        join = next(n for n in w.engine.graph.nodes.values() if n.kind == "join")
        assert join.lookup
        w.transaction(
            [
                ("INSERT INTO users VALUES (?, ?)", (7, 2)),
                ("INSERT INTO stories VALUES (?, ?, ?)", (9, 7, 1)),
            ]
        )
        # deliver the chosen table's delta all the way first, then the rest
        w.deliver_while(lambda m: m[3] == "delta" and first in m[0].describe())
        w.drain()
        assert list(w.readers["join_by_key"].published[(7,)]) == [(9, 2)]
        assert not w.problems()
    finally:
        w.close()


def test_a_left_join_pads_as_of_the_votes_it_has_received():
    # a story's only vote is deleted while the story's own update is still on its way: the
    # update's lookup must still see the vote (its deletion has not reached the join)
    w = _lookup_world(["left_join"])
    try:
        w.write("INSERT INTO votes VALUES (?, ?, ?)", (1, 2, 3))
        w.read("left_join", 2)
        w.drain()
        w.write("UPDATE stories SET score = ? WHERE id = ?", (8, 2))
        w.write("DELETE FROM votes WHERE id = ?", (1,))
        w.deliver_while(lambda m: m[3] == "delta" and "stories" in m[0].describe())
        w.drain()
        assert list(w.readers["left_join"].published[(2,)]) == [(2, None)]
        assert not w.problems()
    finally:
        w.close()


def test_inline_messages_use_lookup_joins_and_forget_their_log():
    conn = noria_py.connect(upqueries="messages")
    cur = conn.cursor()
    cur.execute("CREATE TABLE stories (id INT PRIMARY KEY, title TEXT)")
    cur.execute("CREATE TABLE votes (id INT PRIMARY KEY, story_id INT)")
    cur.execute("INSERT INTO stories VALUES (1, 'a'), (2, 'b')")
    q = (
        "SELECT s.id, s.title, COUNT(v.story_id) FROM stories s LEFT JOIN votes v "
        "ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
    )
    assert cur.execute(q, (1,)).fetchall() == [(1, "a", 0)]
    graph = conn._engine.graph
    joins = [n for n in graph.nodes.values() if n.kind == "join"]
    assert joins and all(j.lookup and not j.state_size()[1] for j in joins)
    cur.execute("BEGIN")
    cur.execute("INSERT INTO votes VALUES (1, 1), (2, 1)")
    cur.execute("UPDATE stories SET title = 'c' WHERE id = 1")
    cur.execute("COMMIT")
    assert cur.execute(q, (1,)).fetchall() == [(1, "c", 2)]
    cur.execute("DELETE FROM votes WHERE id = 1")
    assert cur.execute(q, (1,)).fetchall() == [(1, "c", 1)]
    assert all(not n.log for n in graph.nodes.values() if n.kind == "base")
    conn.close()


def test_domain_threads_keep_copying_joins():
    conn = noria_py.connect(domains="threads")
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE a (id INT PRIMARY KEY, b INT)")
        cur.execute("CREATE TABLE b (id INT PRIMARY KEY, x INT)")
        cur.execute("SELECT a.id, b.x FROM a JOIN b ON a.b = b.id WHERE a.id = ?", (1,))
        joins = [n for n in conn._engine.graph.nodes.values() if n.kind == "join"]
        assert joins and not any(j.lookup for j in joins)
    finally:
        conn.close()

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
            elif act[0] == "drain":
                order = random.Random(act[1])
                world.drain(lambda n, order=order: order.randrange(n))
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


# --- quiet stretches: a lookup join's gate ---------------------------------------------------
# With no fill under way (``Dataflow.quiet``), a lookup join stops a delta of keys that every
# state below lacks, and sends its position down alone. These scenarios read a few keys, let
# every message through now and then (so the dataflow goes quiet), and write mostly keys no
# state holds, so that stopped deltas, their positions on their way, and fills that start
# while they travel meet in every order.
@st.composite
def quiet_actions(draw, names):
    kind = draw(st.sampled_from(["write"] * 4 + ["read", "step", "drain", "drain"]))
    if kind == "write":
        # mostly votes and stories: the deltas a join of stories gates by their story or author
        sql = draw(st.sampled_from([w for w, _ in WRITES if "votes" in w or "stories" in w]))
        return ("write", sql, tuple(draw(st.sampled_from(list(r))) for r in _ARGS[sql]))
    if kind == "read":
        return ("read", draw(st.sampled_from(names)), draw(st.sampled_from(list(KEYS))))
    if kind == "drain":
        return ("drain", draw(st.integers(0, 2**16)))
    return ("step", draw(st.integers(0, 50)))


@st.composite
def quiet_scenarios(draw):
    names = draw(
        st.lists(
            st.sampled_from(["left_join_count", "agg_over_join", "join", "filtered_left_join"]),
            min_size=1,
            max_size=2,
            unique=True,
        )
    )
    seed = draw(st.integers(0, 2**16))
    acts = draw(st.lists(quiet_actions(names), min_size=5, max_size=60))
    drain_seed = draw(st.integers(0, 2**16))
    split = draw(st.sampled_from(["nodes", "domains"]))
    return names, seed, acts, drain_seed, split


@given(quiet_scenarios())
def test_gated_lookup_join_interleavings_match_sqlite(scenario):
    problems = run_scenario(scenario)
    assert not problems, "\n".join(problems)


def _lookups(join) -> list:
    """The join keys ``join`` looks its other input up by from now on (appended as it does)."""
    seen: list = []
    bag = join._bag
    join._bag = lambda side, key: seen.append(key) or bag(side, key)
    return seen


def test_a_quiet_lookup_join_stops_a_delta_no_state_below_holds():
    # the vote of a story no state holds stops at the join (no lookup of its story), its
    # position reaches the aggregate below, and a later read of that story fills it with the
    # vote by one grouped query at the aggregate (no upquery reaches the join)
    w = _lookup_world(["left_join_count"])
    try:
        w.read("left_join_count", 1)
        w.drain()
        graph = w.engine.graph
        join = next(n for n in graph.nodes.values() if n.kind == "join")
        agg = next(n for n in graph.nodes.values() if n.kind == "aggregate")
        assert join.lookup and agg.view is not None
        assert w.sched.dataflow.quiet()
        lookups = _lookups(join)
        w.write("INSERT INTO votes VALUES (?, ?, ?)", (1, 3, 2))
        w.drain()
        assert lookups == []  # stopped at the gate: no story looked up
        assert agg.view == join.view  # the position went down alone
        asked = []
        on_request = join.on_request
        join.on_request = lambda *a, **k: asked.append(a) or on_request(*a, **k)
        w.read("left_join_count", 3)
        w.drain()
        assert asked == []  # filled at the aggregate from base storage at its position
        assert list(w.readers["left_join_count"].published[(3,)]) == [(3, 1)]
        # a vote of the story a state holds still goes through
        w.write("INSERT INTO votes VALUES (?, ?, ?)", (2, 1, 4))
        w.drain()
        assert list(w.readers["left_join_count"].published[(1,)]) == [(1, 1)]
        assert not w.problems()
    finally:
        w.close()


def test_a_fill_under_way_keeps_the_gate_open():
    # a read of story 3 is on its way up when a vote of story 3 reaches the join: the join
    # does not stop it (the aggregate may be filled by an answer the vote must still reach)
    w = _lookup_world(["left_join_count"])
    try:
        w.read("left_join_count", 1)
        w.drain()
        w.read("left_join_count", 3)  # queued: the fill is under way
        join = next(n for n in w.engine.graph.nodes.values() if n.kind == "join")
        lookups = _lookups(join)
        w.write("INSERT INTO votes VALUES (?, ?, ?)", (1, 3, 2))
        w.deliver_while(lambda m: m[3] == "delta")
        assert lookups == [3]  # joined with its story, not stopped
        w.drain()
        assert list(w.readers["left_join_count"].published[(3,)]) == [(3, 1)]
        assert not w.problems()
    finally:
        w.close()


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

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

from hypothesis import given, settings
from hypothesis import strategies as st

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
        names, initial_rows(random.Random(seed)), split=split, queries=LOOKUP_QUERIES,
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


@settings(max_examples=3 * settings.default.max_examples)
@given(scenarios())
def test_lookup_join_interleavings_match_sqlite(scenario):
    problems = run_scenario(scenario)
    assert not problems, "\n".join(problems)

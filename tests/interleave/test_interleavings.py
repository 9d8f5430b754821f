"""Interleaving tests: hypothesis chooses queries, writes, reads, message order and eviction points.

Hypothesis picks the domain split: every node its own domain (each graph edge a FIFO channel, the
finest split) or the engine's domain assignment (one channel per pair of domains, messages inside
a domain handled to completion). At each step it picks
one action: a write (applied to base storage at once, its delta queued), a read (a miss queues an
upquery), the delivery of the head message of some channel, or the eviction of some filled key of
some partial state. Then the dataflow drains in an order hypothesis also picks, and every filled
reader key must equal SQLite's answer, every read must have completed, and every partial state
must equal a fully materialized twin (invariants I-III, ``noria_py/dataflow/audit.py``).

``EXAMPLES_FACTOR`` times the profile's ``max_examples`` (100 under the default "ci" profile):
300 examples per CI run (`--hypothesis-profile=long`: 6,000).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from .world import KEYS, QUERIES, WRITES, World, initial_rows

EXAMPLES_FACTOR = 3

_ARGS = {
    # per parameter position of each write: the values it draws from
    "INSERT INTO users VALUES (?, ?)": (range(6), range(3)),
    "UPDATE users SET grp = ? WHERE id = ?": (range(3), range(6)),
    "DELETE FROM users WHERE id = ?": (range(6),),
    "INSERT INTO stories VALUES (?, ?, ?)": (range(8), range(5), range(10)),
    "UPDATE stories SET author = ? WHERE id = ?": (range(5), range(8)),
    "UPDATE stories SET score = ? WHERE id = ?": (range(10), range(8)),
    "DELETE FROM stories WHERE id = ?": (range(8),),
    "INSERT INTO votes VALUES (?, ?, ?)": (range(10), range(8), range(5)),
    "DELETE FROM votes WHERE id = ?": (range(10),),
}


@st.composite
def actions(draw, names):
    kind = draw(st.sampled_from(["write", "read", "step", "step", "step", "step", "evict"]))
    if kind == "write":
        sql = draw(st.sampled_from([w for w, _ in WRITES]))
        params = tuple(draw(st.sampled_from(list(r))) for r in _ARGS[sql])
        return ("write", sql, params)
    if kind == "read":
        return ("read", draw(st.sampled_from(names)), draw(st.sampled_from(list(KEYS))))
    return (kind, draw(st.integers(0, 50)))


@st.composite
def scenarios(draw):
    names = draw(st.lists(st.sampled_from(sorted(QUERIES)), min_size=1, max_size=3, unique=True))
    seed = draw(st.integers(0, 2**16))
    acts = draw(st.lists(actions(names), min_size=5, max_size=60))
    drain_seed = draw(st.integers(0, 2**16))
    split = draw(st.sampled_from(["nodes", "domains"]))
    return names, seed, acts, drain_seed, split


@settings(max_examples=EXAMPLES_FACTOR * settings.default.max_examples)
@given(scenarios())
def test_interleavings_match_sqlite(scenario):
    names, seed, acts, drain_seed, split = scenario
    world = World(names, initial_rows(random.Random(seed)), split=split)
    try:
        for act in acts:
            if act[0] == "write":
                world.write(act[1], act[2])
            elif act[0] == "read":
                world.read(act[1], act[2])
            elif act[0] == "step":
                world.step(act[1])
            else:
                world.evict(act[1])
        # read every key at the end too, so each query's state is exercised after the races
        for name in names:
            for k in KEYS:
                world.read(name, k)
        rng = random.Random(drain_seed)
        world.drain(lambda n: rng.randrange(n))
        problems = world.problems()
        assert not problems, "\n".join(problems)
    finally:
        world.close()

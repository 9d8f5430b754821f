"""Each race mechanism of the upquery protocol, on a schedule that needs it.

Every test runs its schedule twice: with the mechanism on the result equals SQLite (and the full
twin), with it switched off (``Dataflow.mechanisms``) the same schedule gives a wrong answer. So
each test fails if its mechanism is removed.
"""

from __future__ import annotations

import pytest

from noria_py.dataflow.ops.base import BaseTable
from noria_py.dataflow.ops.filter import Filter
from noria_py.dataflow.ops.join import Join
from noria_py.dataflow.ops.union import Union

from .world import World

USERS = [("INSERT INTO users VALUES (?, ?)", (i, i % 3)) for i in range(4)]


def _stories(*rows):
    return [("INSERT INTO stories VALUES (?, ?, ?)", r) for r in rows]


def _nodes(world, cls):
    return [n for n in world.engine.graph.nodes.values() if isinstance(n, cls)]


def _run(world, schedule):
    try:
        schedule(world)
        world.drain()
        return world.problems()
    finally:
        world.close()


def _both(names, initial, mechanism, schedule):
    good = _run(World(names, initial), schedule)
    bad = _run(World(names, initial, mechanisms={mechanism: False}), schedule)
    return good, bad


def test_union_buffering_three_chained_unions_eight_paths():
    # thesis figure 4.1: three chained unions, each fed twice by the one above
    initial = USERS + _stories((1, 1, 4), (2, 1, 7), (3, 1, 1), (4, 2, 5))

    def schedule(w):
        unions = _nodes(w, Union)
        assert len(unions) == 3
        w.read("chained_unions", 1)

    good, bad = _both(["chained_unions"], initial, "union_buffering", schedule)
    assert good == []
    assert any("chained_unions (1,)" in p for p in bad), bad

    # the one read reaches base storage along all eight paths
    w = World(["chained_unions"], initial)
    w.read("chained_unions", 1)
    reqs = w.drain_watching(base_of(w))
    assert len(reqs) == 8
    assert w.problems() == []
    w.close()


def base_of(world, table="stories"):
    return next(n for n in _nodes(world, BaseTable) if n.table == table)


def test_union_folds_deltas_from_parents_that_already_answered():
    initial = USERS + _stories((1, 1, 4), (2, 1, 8))

    def schedule(w):
        union = _nodes(w, Union)[0]
        base = base_of(w)
        # the second branch's filter: its request to base storage is held back
        branch_b = union.parents[1]
        while not isinstance(branch_b, Filter):
            branch_b = branch_b.parents[0]

        def not_held(msg):
            src, dst, _port, kind, _payload = msg
            return not (kind == "req" and src is branch_b and dst is base)

        w.read("union", 1)
        w.deliver_while(not_held)
        # branch A has answered, branch B has not: a new row passing both filters arrives
        w.write("INSERT INTO stories VALUES (?, ?, ?)", (9, 1, 5))
        w.deliver_while(not_held)

    good, bad = _both(["union"], initial, "union_fold", schedule)
    assert good == []
    assert any("union (1,)" in p for p in bad), bad


def test_dependent_upquery_fills_the_join_key_then_reissues():
    initial = USERS + _stories((1, 2, 5), (2, 3, 6))

    def schedule(w):
        w.read("join", 1)

    good, bad = _both(["join"], initial, "dependent_upqueries", schedule)
    assert good == []
    assert any("join (1,)" in p for p in bad), bad


def test_dependent_upquery_repeats_when_the_filled_key_is_evicted_meanwhile():
    initial = USERS + _stories((1, 2, 5))
    w = World(["join"], initial)
    join = _nodes(w, Join)[0]
    w.read("join", 1)
    evicted = False
    while w.sched.ready():
        w.step(0)
        if not evicted and 2 in join.filled:
            assert w.sched.evict(join, 2)  # the re-issued request is still on its way up
            evicted = True
    assert evicted
    assert w.sched.dataflow.reissued == 2
    assert w.readers["join"].published[(1,)] == ((1, 5, 2),)
    assert w.problems() == []
    w.close()


def test_join_fill_folds_deltas_from_the_side_that_answered():
    initial = USERS + _stories((1, 1, 5))

    def schedule(w):
        users = base_of(w, "users")

        def not_held(msg):
            src, dst, _port, kind, _payload = msg
            return not (kind == "req" and dst is users)

        w.read("join_by_key", 1)  # the join fills author 1 on both sides
        w.deliver_while(not_held)
        # the stories side has answered, the users side not: a story by author 1 arrives
        w.write("INSERT INTO stories VALUES (?, ?, ?)", (7, 1, 3))
        w.deliver_while(not_held)

    good, bad = _both(["join_by_key"], initial, "join_fill_buffering", schedule)
    assert good == []
    assert any("join_by_key (1,)" in p for p in bad), bad


def test_incongruent_join_evicts_downstream_keys():
    # stories joined with users on author, read by story id; the author changes to a user whose
    # row the join does not hold, so the new row is dropped there and the reader must let go
    initial = USERS + _stories((1, 0, 5))

    def schedule(w):
        w.read("join", 1)
        w.drain()
        assert w.readers["join"].published[(1,)] == ((1, 5, 0),)
        w.write("UPDATE stories SET author = ? WHERE id = ?", (2, 1))

    good, bad = _both(["join"], initial, "incongruent_eviction", schedule)
    assert good == []
    assert any("join (1,)" in p for p in bad), bad


def test_concurrent_misses_on_one_key_coalesce():
    w = World(["count"], USERS + _stories((1, 1, 5), (2, 1, 6)))
    w.read("count", 1)
    w.read("count", 1)
    assert len(w.drain_watching(base_of(w))) == 1
    assert w.readers["count"].published[(1,)] == ((1, 2),)
    assert len([k for k in w.sched.answers if k[1] == (1,)]) == 1
    w.close()


def test_misses_on_many_keys_batch_into_one_upquery():
    # users of group 1 are 1 and 4; the join misses both authors at once and fills them together
    initial = USERS + [("INSERT INTO users VALUES (?, ?)", (4, 1))]
    initial += _stories((1, 1, 5), (2, 4, 6), (3, 1, 2))
    w = World(["agg_over_join"], initial)
    w.read("agg_over_join", 1)
    keys_asked = [sorted(msg[4][3]) for msg in w.drain_watching(base_of(w))]
    assert keys_asked == [[(1,), (4,)]]
    assert w.problems() == []
    w.close()


@pytest.mark.parametrize("name", ["join", "left_join_count", "chained_unions", "self_join"])
def test_eviction_evicts_what_was_derived_downstream(name):
    initial = USERS + _stories((1, 1, 4), (2, 1, 5), (3, 2, 6))
    w = World([name], initial)
    for k in range(4):
        w.read(name, k)
    w.drain()
    reader = w.readers[name]
    before = set(reader.published)
    # evict every key of every partial state above the reader, one at a time
    for node, key in w.evictable():
        if node is not reader:
            w.sched.evict(node, key)
    w.drain()
    if any(n.partial for n in w.engine.graph.nodes.values() if n is not reader):
        assert set(reader.published) < before
    w.write("INSERT INTO stories VALUES (?, ?, ?)", (8, 1, 5))
    for k in range(4):
        w.read(name, k)
    w.drain()
    assert w.problems() == []
    w.close()


@pytest.mark.parametrize("name", ["join_by_key", "count", "distinct"])
def test_evicting_an_empty_key_evicts_it_below(name):
    # the reader holds key 1 filled and empty; the state above it evicts key 1 (nothing derived
    # from it) and then drops a delta for key 1 without a probe (everything below is keyed the
    # same way): the reader must have let key 1 go
    initial = USERS + _stories((1, 0, 5))
    w = World([name], initial)
    w.read(name, 1)
    w.drain()
    assert w.readers[name].published[(1,)] == ()
    above = [(n, k) for n, k in w.evictable() if n is not w.readers[name]]
    assert above
    for node, key in above:
        w.sched.evict(node, key)
    w.drain()
    w.write("UPDATE stories SET author = ? WHERE id = ?", (1, 1))
    w.drain()
    assert w.problems() == []
    w.close()

"""Ranged upqueries as messages: range readers driven message by message by the test scheduler.

A range reader's miss sends a ranged request (key, range column, ``[lo, hi)``, optional limit)
up its path; base storage answers the sub-range it answered in full, unions buffer and answer the
smallest sub-range their parents answered, joins fill the join keys of the rows that come back;
the reader marks only the answered sub-range filled (``noria_py/dataflow/domain.py``). Here
hypothesis chooses writes, range reads, which channel delivers next and which filled piece (or
join key) is evicted, for range readers over a base table, over a union of two tables and over a
join. Each read's answer, when it completes, must be the query's answer on *some* state of the
base tables that were written meanwhile (one version of each table: what FIFO channels
guarantee); after the dataflow drains, every filled range must hold what a fully materialized
twin holds, and every read, asked again, must equal SQLite's answer.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
import threading
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.dataflow.audit import audit
from noria_py.dataflow.ops.base import BaseTable
from noria_py.dataflow.ops.join import Join
from noria_py.dataflow.ops.union import Union
from noria_py.dataflow.scheduler import filled_keys

from .scheduling import TestScheduler

TABLES = [
    "CREATE TABLE t (id INT PRIMARY KEY, a INT, x INT)",
    "CREATE TABLE u (id INT PRIMARY KEY, a INT, x INT)",
    "CREATE TABLE g (a INT PRIMARY KEY, name INT)",
]
VIEWS = [
    "CREATE VIEW tu AS SELECT id, a, x FROM t WHERE x > 1 UNION ALL SELECT id, a, x FROM u",
]


def _sorted_by(rows, desc):
    return sorted(rows, key=lambda r: (r[1], r[0]), reverse=desc)


def _tu(db):
    return [r for r in db["t"] if r[2] is not None and r[2] > 1] + list(db["u"])


def _join(db):
    names = {a: name for a, name in db["g"]}
    return [(i, x, names[a]) for i, a, x in db["t"] if a in names and x is not None]


# name -> (SQL, tables it reads, parameter values, the answer recomputed from the tables)
QUERIES = {
    "below": (
        "SELECT id, x FROM t WHERE x < ?",
        ("t",),
        (range(-1, 12),),
        lambda db, hi: [(i, x) for i, _a, x in db["t"] if x is not None and x < hi],
    ),
    "between": (
        "SELECT id, x FROM t WHERE a = ? AND x BETWEEN ? AND ?",
        ("t",),
        (range(3), range(-1, 11), range(-1, 11)),
        lambda db, a, lo, hi: [
            (i, x) for i, aa, x in db["t"] if aa == a and x is not None and lo <= x <= hi
        ],
    ),
    "first": (  # a bounded fill from lo upward
        "SELECT id, x FROM t WHERE a = ? AND x >= ? ORDER BY x, id LIMIT 2",
        ("t",),
        (range(3), range(-1, 11)),
        lambda db, a, lo: _sorted_by(
            [(i, x) for i, aa, x in db["t"] if aa == a and x is not None and x >= lo], False
        )[:2],
    ),
    "last": (  # a bounded fill from hi downward
        "SELECT id, x FROM t WHERE x < ? ORDER BY x DESC, id DESC LIMIT 2",
        ("t",),
        (range(-1, 12),),
        lambda db, hi: _sorted_by(
            [(i, x) for i, _a, x in db["t"] if x is not None and x < hi], True
        )[:2],
    ),
    "union": (
        "SELECT id, x FROM tu WHERE a = ? AND x > ?",
        ("t", "u"),
        (range(3), range(-1, 11)),
        lambda db, a, lo: [(i, x) for i, aa, x in _tu(db) if aa == a and x is not None and x > lo],
    ),
    "union_first": (  # parents answer different sub-ranges; the union answers the smallest
        "SELECT id, x FROM tu WHERE x >= ? ORDER BY x, id LIMIT 3",
        ("t", "u"),
        (range(-1, 11),),
        lambda db, lo: _sorted_by(
            [(i, x) for i, _a, x in _tu(db) if x is not None and x >= lo], False
        )[:3],
    ),
    "join": (
        "SELECT t.id, t.x, g.name FROM t JOIN g ON t.a = g.a WHERE t.x > ? AND t.x <= ?",
        ("t", "g"),
        (range(-1, 11), range(-1, 11)),
        lambda db, lo, hi: [r for r in _join(db) if lo < r[1] <= hi],
    ),
    "join_last": (
        "SELECT t.id, t.x, g.name FROM t JOIN g ON t.a = g.a WHERE t.x < ? "
        "ORDER BY t.x DESC, t.id DESC LIMIT 2",
        ("t", "g"),
        (range(-1, 12),),
        lambda db, hi: _sorted_by([r for r in _join(db) if r[1] < hi], True)[:2],
    ),
    "join_right": (  # the range comes from the join's right side
        "SELECT g.name, t.id, t.x FROM g JOIN t ON g.a = t.a WHERE t.x >= ?",
        ("t", "g"),
        (range(-1, 11),),
        lambda db, lo: [(n, i, x) for i, x, n in _join(db) if x >= lo],
    ),
}
FAMILIES = {
    "base": ["below", "between", "first", "last"],
    "union": ["union", "union_first"],
    "join": ["join", "join_last", "join_right"],
}

_X = [None, *range(10)]
WRITES = {
    "INSERT INTO t VALUES (?, ?, ?)": (range(8), range(3), _X),
    "UPDATE t SET x = ? WHERE id = ?": (_X, range(8)),
    "UPDATE t SET a = ? WHERE id = ?": (range(3), range(8)),
    "DELETE FROM t WHERE id = ?": (range(8),),
    "INSERT INTO u VALUES (?, ?, ?)": (range(8), range(3), _X),
    "UPDATE u SET x = ? WHERE id = ?": (_X, range(8)),
    "DELETE FROM u WHERE id = ?": (range(8),),
    "INSERT INTO g VALUES (?, ?)": (range(3), range(3)),
    "UPDATE g SET name = ? WHERE a = ?": (range(3), range(3)),
    "DELETE FROM g WHERE a = ?": (range(3),),
}


def initial_rows(rng: random.Random) -> list[tuple[str, tuple]]:
    out = []
    for i in range(5):
        out.append(("INSERT INTO t VALUES (?, ?, ?)", (i, rng.randrange(3), rng.randrange(10))))
    for i in range(3, 7):
        out.append(("INSERT INTO u VALUES (?, ?, ?)", (i, rng.randrange(3), rng.randrange(10))))
    for a in range(2):
        out.append(("INSERT INTO g VALUES (?, ?)", (a, rng.randrange(3))))
    return out


def _unordered(sql: str) -> bool:
    return "ORDER BY" not in sql


def _same(sql: str, got, want) -> bool:
    got, want = [tuple(r) for r in got], [tuple(r) for r in want]
    if _unordered(sql):
        return Counter(got) == Counter(want)
    return got == want


class RangeWorld:
    """An engine on the test scheduler with range queries; reads are started, not awaited."""

    def __init__(self, names, initial, mechanisms=None, split="nodes", slack=0):
        self.names = list(names)
        self.conn = noria_py.connect(lookup_joins=False)
        self.engine = self.conn._engine
        self.cur = self.conn.cursor()
        for sql in TABLES + VIEWS:
            self.cur.execute(sql)
        for sql, params in initial:
            self.cur.execute(sql, params)
        self.preps = {n: self.engine.prepare(QUERIES[n][0]) for n in self.names}
        for prep in self.preps.values():
            assert prep.reader.partial and prep.reader.ranged, prep.reader
            # fill exactly what a bounded read needs, so limits cut answers often
            prep.reader.FILL_SLACK = slack
        self.sched = TestScheduler(self.engine.graph, split).attach()
        for m, on in (mechanisms or {}).items():
            self.sched.dataflow.mechanisms[m] = on
        self.history = {tb: [self._scan(tb)] for tb in ("t", "u", "g")}
        self.reads: list = []  # (name, params, answer or None)
        self.errors: list[str] = []

    def _scan(self, table):
        return tuple(self.engine.storage.scan(table))

    # --- actions -------------------------------------------------------------------------
    def write(self, sql: str, params: tuple) -> None:
        try:
            self.cur.execute(sql, params)
        except noria_py.IntegrityError:
            return
        table = sql.split()[2] if sql.startswith(("INSERT", "DELETE")) else sql.split()[1]
        self.history[table].append(self._scan(table))

    def _shape(self, name, params):
        prep = self.preps[name]
        key = prep._key(params)
        lo, hi = prep._interval(params)
        offset, limit = prep._page(params)
        desc = prep._lead_desc
        need = None if limit is None or desc is None else offset + limit
        return prep, key, lo, hi, need, bool(desc), offset, limit

    def read(self, name: str, params: tuple) -> None:
        """Start a read; its answer is checked when it completes."""
        prep, key, lo, hi, need, desc, offset, limit = self._shape(name, params)
        slot = [name, params, None]
        self.reads.append(slot)
        if not lo < hi:
            slot[2] = ()
            return

        def done(rows):
            answer = prep._range_finish(list(rows), offset, limit, False)
            slot[2] = answer
            if not self._consistent(name, params, answer):
                self.errors.append(f"{name} {params}: answered {answer}, which no state gives")

        self.sched.read_range(prep.reader, key, lo, hi, need, desc, on_done=done)

    def _consistent(self, name, params, answer) -> bool:
        """Is ``answer`` the query's answer on some version of each table it reads?"""
        sql, tables, _values, fn = QUERIES[name]
        for versions in itertools.product(*(self.history[tb] for tb in tables)):
            db = {"t": (), "u": (), "g": ()}
            db.update(zip(tables, versions))
            if _same(sql, answer, fn(db, *params)):
                return True
        return False

    def step(self, index: int) -> None:
        if self.sched.ready():
            self.sched.step(index)

    def evictable(self) -> list:
        out = []
        for nid in sorted(self.engine.graph.nodes):
            node = self.engine.graph.nodes[nid]
            for key in sorted(filled_keys(node), key=repr):
                out.append((node, key))
        return out

    def evict(self, index: int) -> None:
        choices = self.evictable()
        if choices:
            node, key = choices[index % len(choices)]
            self.sched.evict(node, key)

    def drain(self, choose=None) -> None:
        self.sched.run(choose)

    # --- checks --------------------------------------------------------------------------
    def _copy_into(self, cur) -> None:
        for sql in TABLES + VIEWS:
            cur.execute(sql)
        for table in ("t", "u", "g"):
            rows = self.engine.storage.scan(table)
            if rows:
                marks = ",".join("?" * len(rows[0]))
                cur.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def problems(self) -> list[str]:
        """After ``drain``: answers no state gives, reads that never completed, filled ranges
        that differ from a full twin, and reads that (asked again) differ from SQLite."""
        out = list(self.errors)
        out += [f"read {n} {p} never completed" for n, p, a in self.reads if a is None]
        twin = noria_py.connect(partial=False, lookup_joins=False)
        self._copy_into(twin.cursor())
        twin_readers = {n: twin._engine.prepare(QUERIES[n][0]).reader for n in self.names}
        for name, prep in self.preps.items():
            reader, full = prep.reader, twin_readers[name]
            for key in list(reader.filled):
                got = Counter(reader.all_rows(key))
                want = Counter(reader.restrict(key, full.all_rows(key)))
                if got != want:
                    out.append(f"{name} key {key} filled {reader.filled[key]}: {got} != {want}")
        out += audit(self.engine.graph, twin._engine.graph)
        twin.close()
        db = sqlite3.connect(":memory:")
        self._copy_into(db)
        again = []
        for name, params, _answer in self.reads:
            prep, key, lo, hi, need, desc, offset, limit = self._shape(name, params)
            if lo < hi:
                slot = []
                again.append((name, params, slot))
                self.sched.read_range(
                    prep.reader,
                    key,
                    lo,
                    hi,
                    need,
                    desc,
                    on_done=lambda rows, s=slot, p=prep, o=offset, n=limit: s.append(
                        p._range_finish(list(rows), o, n, False)
                    ),
                )
        self.sched.run()
        for name, params, slot in again:
            want = db.execute(QUERIES[name][0], params).fetchall()
            if not slot or not _same(QUERIES[name][0], slot[0], want):
                out.append(f"{name} {params} again: got {slot} want {want}")
        return out

    def close(self) -> None:
        self.sched.detach()
        self.conn.close()


# --- hypothesis: writes, reads, deliveries and evictions in any order ------------------------


EXAMPLES_FACTOR = 3  # times the profile's max_examples (100 under the default "ci" profile)
KINDS = ["write", "read", "read", "step", "step", "step", "evict"]


def _action(rnd: random.Random, names) -> tuple:
    kind = rnd.choice(KINDS)
    if kind == "write":
        sql = rnd.choice(sorted(WRITES))
        return ("write", sql, tuple(rnd.choice(list(r)) for r in WRITES[sql]))
    if kind == "read":
        name = rnd.choice(names)
        return ("read", name, tuple(rnd.choice(list(r)) for r in QUERIES[name][2]))
    return (kind, rnd.randrange(50))


@st.composite
def scenarios(draw):
    """Queries of one family, initial rows, and a list of actions. The actions come from a
    random generator hypothesis controls (``st.randoms``): drawn element by element, hypothesis
    keeps lists short and values simple, and rarely reaches the long races that matter here."""
    family = draw(st.sampled_from(sorted(FAMILIES)))
    names = draw(st.lists(st.sampled_from(FAMILIES[family]), min_size=1, max_size=2, unique=True))
    seed = draw(st.integers(0, 2**16))
    rnd = draw(st.randoms(use_true_random=False))
    acts = [_action(rnd, names) for _ in range(rnd.randint(4, 40))]
    drain_seed = draw(st.integers(0, 2**16))
    split = draw(st.sampled_from(["nodes", "domains"]))
    slack = draw(st.sampled_from([0, 0, 16]))
    return names, seed, acts, drain_seed, split, slack


def _play(world: RangeWorld, acts) -> None:
    for act in acts:
        if act[0] == "write":
            world.write(act[1], act[2])
        elif act[0] == "read":
            world.read(act[1], act[2])
        elif act[0] == "step":
            world.step(act[1])
        else:
            world.evict(act[1])


@settings(max_examples=EXAMPLES_FACTOR * settings.default.max_examples, deadline=None)
@given(scenarios())
def test_range_interleavings_match_sqlite(scenario):
    names, seed, acts, drain_seed, split, slack = scenario
    world = RangeWorld(names, initial_rows(random.Random(seed)), split=split, slack=slack)
    try:
        _play(world, acts)
        rng = random.Random(drain_seed)
        world.drain(lambda n: rng.randrange(n))
        problems = world.problems()
        assert not problems, "\n".join(problems)
    finally:
        world.close()


# --- the thesis' sequence: x = 42 written, x < 50 read, x = 49 written -----------------------


def _x42_world():
    w = RangeWorld(["below"], [])
    w.write("INSERT INTO t VALUES (?, ?, ?)", (1, 0, 42))  # durable; its delta waits
    w.read("below", (50,))  # a miss: the ranged request waits too
    return w


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 8), st.lists(st.integers(0, 10), max_size=20))
def test_x42_read_below_50_then_x49_in_any_order(before, order):
    """The answer to ``x < 50`` contains 42 once, whether the delta of x = 42 reaches the reader
    before the response (dropped there: the range is not filled yet, and the response includes
    it) or not; x = 49, written after base storage answered, arrives after the response and is
    applied; written before, it is in the response and its delta is dropped."""
    w = _x42_world()
    try:
        for i in order[:before]:
            w.step(i)
        w.write("INSERT INTO t VALUES (?, ?, ?)", (2, 0, 49))
        for i in order[before:]:
            w.step(i)
        w.drain()
        assert w.reads[0][2] in (((1, 42),), ((1, 42), (2, 49)))
        assert w.problems() == []
        reader = w.preps["below"].reader
        assert sorted(reader.all_rows(())) == [(1, 42, 42), (2, 49, 49)]
    finally:
        w.close()


def test_x42_delta_before_the_response_is_dropped_not_counted_twice():
    w = _x42_world()
    try:
        reader = w.preps["below"].reader
        base = _nodes(w, BaseTable)[0]
        # deliver the request up to base storage first: its answer (with 42) is queued behind
        # the delta of x = 42 on the way down
        while _deliver_where(w, lambda m: m[3] == "req"):
            pass
        assert base.id not in [ch[0] for ch in w.sched.ready() if ch[-1] == "up"]
        w.write("INSERT INTO t VALUES (?, ?, ?)", (2, 0, 49))  # after the answer
        dropped = reader.dropped
        w.drain()
        assert reader.dropped == dropped + 1  # 42's delta: its range was not filled yet
        assert w.reads[0][2] == ((1, 42),)  # complete when the response arrives, before 49
        assert sorted(reader.all_rows(())) == [(1, 42, 42), (2, 49, 49)]
        assert w.problems() == []
    finally:
        w.close()


# --- each mechanism matters for ranged requests too ------------------------------------------


def _nodes(world, cls):
    return [n for n in world.engine.graph.nodes.values() if isinstance(n, cls)]


def _base(world, table):
    return next(n for n in _nodes(world, BaseTable) if n.table == table)


def _deliver_where(world, pred) -> bool:
    for ch in world.sched.ready():
        msg = world.sched.channels[ch][0]
        if pred(msg):
            world.sched.channels[ch].popleft()
            world.sched._deliver(msg)
            return True
    return False


def _run(world, schedule):
    try:
        schedule(world)
        world.drain()
        return world.problems()
    finally:
        world.close()


UNION_ROWS = [
    ("INSERT INTO t VALUES (?, ?, ?)", (1, 1, 4)),
    ("INSERT INTO t VALUES (?, ?, ?)", (2, 1, 8)),
    ("INSERT INTO u VALUES (?, ?, ?)", (3, 1, 6)),
    ("INSERT INTO u VALUES (?, ?, ?)", (4, 2, 7)),
]


def test_union_buffering_matters_for_ranged_requests():
    def schedule(w):
        assert len(_nodes(w, Union)) == 1
        w.read("union", (1, 2))

    good = _run(RangeWorld(["union"], UNION_ROWS), schedule)
    bad = _run(RangeWorld(["union"], UNION_ROWS, {"union_buffering": False}), schedule)
    assert good == []
    assert any("union (1, 2)" in p for p in bad), bad


def test_union_answers_the_smallest_sub_range_its_parents_answered():
    # t holds many rows from 2 up, u one: a bounded read (LIMIT 3 from x >= 0) gets t's answer
    # cut short and u's whole; the union keeps only what both answered in full
    rows = [("INSERT INTO t VALUES (?, ?, ?)", (i, 0, 2 + i)) for i in range(6)]
    rows.append(("INSERT INTO u VALUES (?, ?, ?)", (9, 0, 9)))
    w = RangeWorld(["union_first"], rows)
    try:
        w.read("union_first", (0,))
        w.drain()
        assert w.reads[0][2] == ((0, 2), (1, 3), (2, 4))
        filled = w.preps["union_first"].reader.filled[()]
        assert not filled.contains(9) and filled.contains(4), filled
        w.read("union_first", (6,))  # beyond the filled range: another bounded fill
        w.drain()
        assert w.reads[1][2] == ((4, 6), (5, 7), (9, 9))
        assert w.problems() == []
    finally:
        w.close()


def test_union_fold_matters_for_ranged_requests():
    def schedule(w):
        u = _base(w, "u")

        def not_held(msg):  # the union's request to u waits
            return not (msg[3] == "req" and msg[1] is u)

        w.read("union", (1, 2))
        while _deliver_where(w, not_held):
            pass
        # t has answered, u has not: a row of t inside the asked key and range arrives
        w.write("INSERT INTO t VALUES (?, ?, ?)", (5, 1, 9))
        while _deliver_where(w, not_held):
            pass

    good = _run(RangeWorld(["union"], UNION_ROWS), schedule)
    bad = _run(RangeWorld(["union"], UNION_ROWS, {"union_fold": False}), schedule)
    assert good == []
    assert any("union (1, 2)" in p for p in bad), bad


def test_union_fold_keeps_deltas_outside_the_asked_range_out():
    # the same schedule with rows outside the range (and key): folding must not add them
    def schedule(w):
        u = _base(w, "u")

        def not_held(msg):
            return not (msg[3] == "req" and msg[1] is u)

        w.read("union", (1, 5))
        while _deliver_where(w, not_held):
            pass
        w.write("INSERT INTO t VALUES (?, ?, ?)", (5, 1, 3))  # below the range
        w.write("INSERT INTO t VALUES (?, ?, ?)", (6, 2, 9))  # another key
        w.write("INSERT INTO t VALUES (?, ?, ?)", (7, 1, 9))  # inside
        while _deliver_where(w, not_held):
            pass

    assert _run(RangeWorld(["union"], UNION_ROWS), schedule) == []


JOIN_ROWS = [
    ("INSERT INTO g VALUES (?, ?)", (0, 10)),
    ("INSERT INTO g VALUES (?, ?)", (1, 11)),
    ("INSERT INTO t VALUES (?, ?, ?)", (1, 0, 3)),
    ("INSERT INTO t VALUES (?, ?, ?)", (2, 1, 5)),
    ("INSERT INTO t VALUES (?, ?, ?)", (3, 2, 6)),
]


def test_dependent_upqueries_matter_for_ranged_requests():
    # the ranged answer from t meets join keys the join has not filled: it is discarded, the
    # keys are filled on both sides, and the ranged request is sent again
    def schedule(w):
        w.read("join", (0, 9))

    good_world = RangeWorld(["join"], JOIN_ROWS)
    good = _run(good_world, schedule)
    assert good_world.sched.dataflow.reissued == 1
    bad = _run(RangeWorld(["join"], JOIN_ROWS, {"dependent_upqueries": False}), schedule)
    assert good == []
    assert any("join (0, 9)" in p for p in bad), bad


def test_a_join_key_evicted_while_the_ranged_request_is_reissued():
    w = RangeWorld(["join_right"], JOIN_ROWS)
    try:
        join = _nodes(w, Join)[0]
        w.read("join_right", (4,))
        evicted = False
        while w.sched.ready():
            w.step(0)
            if not evicted and 1 in join.filled:
                assert w.sched.evict(join, 1)
                evicted = True
        assert evicted
        assert w.reads[0][2] is not None
        assert sorted(w.reads[0][2]) == [(11, 2, 5)]
        assert w.problems() == []
    finally:
        w.close()


# --- concurrent reads of one key -------------------------------------------------------------


def test_overlapping_reads_of_one_key_fill_each_range_once():
    rows = [("INSERT INTO t VALUES (?, ?, ?)", (i, 0, i)) for i in range(10)]
    w = RangeWorld(["between"], rows)
    try:
        base = _base(w, "t")
        w.read("between", (0, 0, 5))
        w.read("between", (0, 3, 8))  # overlaps the first, which is still on its way
        w.read("between", (0, 1, 4))  # inside the first
        asked = []
        while w.sched.ready():
            msg = w.sched.channels[w.sched.ready()[0]][0]
            if msg[3] == "req" and msg[1] is base:
                asked.append(msg[4][4][1:3])
            w.step(0)
        # the first read fills [0, 5]; the others wait for it, then only [6, 8] is missing
        assert len(asked) == 2, asked
        reader = w.preps["between"].reader
        assert sorted(r[0] for r in reader.all_rows((0,))) == list(range(9))
        assert [a for _n, _p, a in w.reads] == [
            tuple((i, i) for i in range(6)),
            tuple((i, i) for i in range(3, 9)),
            tuple((i, i) for i in range(1, 5)),
        ]
        assert w.problems() == []
    finally:
        w.close()


def test_eviction_between_pieces_of_one_read_refills():
    # a read of [0, 9] misses the two pieces around a filled one; the filled one is evicted
    # while a missing one is still on its way: the read fills it again before it answers
    rows = [("INSERT INTO t VALUES (?, ?, ?)", (i, 0, i)) for i in range(10)]
    w = RangeWorld(["between"], rows)
    try:
        reader = w.preps["between"].reader
        w.read("between", (0, 4, 5))
        w.drain()
        (middle,) = reader.pieces[(0,)]
        w.read("between", (0, 0, 9))
        while len(reader.pieces[(0,)]) < 2:
            w.step(0)
        assert w.reads[1][2] is None
        assert w.sched.evict(reader, middle)
        w.drain()
        assert w.reads[1][2] == tuple((i, i) for i in range(10))
        assert reader.upqueries == 4
        assert w.problems() == []
    finally:
        w.close()


# --- a thread per domain: concurrent range reads racing writes -------------------------------

THREAD_QUERIES = [
    "SELECT id, x FROM t WHERE a = ? AND x BETWEEN ? AND ?",
    "SELECT id, x FROM t WHERE x > ? ORDER BY x, id LIMIT 3",
    "SELECT id, x FROM tu WHERE x < ? ORDER BY x DESC, id DESC LIMIT 4",
    "SELECT t.id, t.x, g.name FROM t JOIN g ON t.a = g.a WHERE t.x >= ?",
]


def _thread_params(sql, rng):
    n = sql.count("?")
    key = (rng.randrange(3),) if "a = ?" in sql else ()
    bounds = sorted(rng.randrange(-1, 30) for _ in range(n - len(key)))
    return key + tuple(bounds)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("options", [{}, {"memory_limit": "4KB"}])
def test_concurrent_range_reads_on_domain_threads_converge(options):
    """Readers on several threads read overlapping ranges of the same keys (so fills of one key
    meet) while writers change the rows. Afterwards every filled range holds exactly what a full
    twin holds (nothing added twice) and every read equals SQLite's answer."""
    conn = noria_py.connect(domains="threads", **options)
    for sql in TABLES + VIEWS:
        conn.execute(sql)
    for a in range(3):
        conn.execute("INSERT INTO g VALUES (?, ?)", (a, 10 + a))
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, i % 3, i) for i in range(30)])
    conn.executemany("INSERT INTO u VALUES (?, ?, ?)", [(i, i % 3, 29 - i) for i in range(30)])
    for sql in THREAD_QUERIES:
        reader = _installed_reader(conn, sql)
        assert reader.partial and reader.ranged, reader
    stop = time.monotonic() + 1.5
    errors: list = []
    asked: list = []

    def writer(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                i = rng.randrange(40)
                table = rng.choice("tu")
                op = rng.random()
                if op < 0.4:
                    try:
                        cur.execute(
                            f"INSERT INTO {table} VALUES (?, ?, ?)",
                            (i, rng.randrange(3), rng.randrange(30)),
                        )
                    except noria_py.IntegrityError:
                        pass
                elif op < 0.8:
                    cur.execute(f"UPDATE {table} SET x = ? WHERE id = ?", (rng.randrange(30), i))
                else:
                    cur.execute(f"DELETE FROM {table} WHERE id = ?", (i,))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def reader(seed):
        rng = random.Random(seed)
        cur = conn.cursor()
        try:
            while time.monotonic() < stop:
                sql = rng.choice(THREAD_QUERIES)
                params = _thread_params(sql, rng)
                asked.append((sql, params))
                cur.execute(sql, params).fetchall()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    workers += [threading.Thread(target=reader, args=(10 + i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert not any(w.is_alive() for w in workers), "deadlock"
    assert not errors, errors[:3]
    conn.engine.sync()
    db = sqlite3.connect(":memory:")
    twin = noria_py.connect(partial=False, lookup_joins=False)
    for target in (db, twin):
        for sql in TABLES + VIEWS:
            target.execute(sql)
        for table in ("t", "u", "g"):
            rows = conn.engine.storage.scan(table)
            marks = ",".join("?" * len(rows[0]))
            target.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    for sql in THREAD_QUERIES:
        reader = _installed_reader(conn, sql)
        full = twin.engine.prepare(sql).reader
        for key in list(reader.filled):
            got = Counter(reader.all_rows(key))
            assert got == Counter(reader.restrict(key, full.all_rows(key))), (sql, key)
    for sql, params in sorted(set(asked)):
        got = conn.execute(sql, params).fetchall()
        assert _same(sql, got, db.execute(sql, params).fetchall()), (sql, params)
    twin.close()
    conn.close()


def _installed_reader(conn, sql):
    rid = list(conn.execute("EXPLAIN " + sql))[-1][0]
    return conn.engine.graph.nodes[rid]

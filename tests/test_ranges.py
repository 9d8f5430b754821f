"""Range parameters, LIMIT ?/OFFSET ? and keyset pagination against SQLite, with writes between
reads and with eviction on."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py

QUERIES = [
    ("SELECT id, b FROM t WHERE b > ?", ["b"]),
    ("SELECT id, b FROM t WHERE b <= ? ORDER BY b, id", ["b"]),
    ("SELECT id FROM t WHERE a = ? AND b >= ? ORDER BY b DESC, id DESC LIMIT 3", ["a", "b"]),
    ("SELECT id, b FROM t WHERE a = ? AND b BETWEEN ? AND ? ORDER BY id", ["a", "b", "b"]),
    ("SELECT id FROM t WHERE id < ? ORDER BY id DESC LIMIT 4", ["id"]),
    ("SELECT id, a FROM t ORDER BY id LIMIT ? OFFSET ?", ["n", "n"]),
    ("SELECT id FROM t WHERE a = ? ORDER BY b, id LIMIT ? OFFSET ?", ["a", "n", "n"]),
    ("SELECT id FROM t WHERE a IN (?, ?) AND b < ? ORDER BY id LIMIT 5", ["a", "a", "b"]),
]

values = {
    "a": st.one_of(st.none(), st.integers(0, 3)),
    "b": st.one_of(st.none(), st.integers(-5, 25)),
    "id": st.integers(0, 30),
    "n": st.integers(0, 6),
}

writes = st.lists(
    st.one_of(
        st.tuples(st.just("ins"), st.integers(0, 30), values["a"], values["b"]),
        st.tuples(st.just("del"), st.integers(0, 30)),
        st.tuples(st.just("upd"), st.integers(0, 30), values["b"]),
    ),
    max_size=12,
)


@st.composite
def reads(draw):
    i = draw(st.integers(0, len(QUERIES) - 1))
    q, kinds = QUERIES[i]
    return q, tuple(draw(values[k]) if k != "b" else draw(values["b"]) for k in kinds)


@settings(max_examples=150)
@given(
    st.lists(st.tuples(st.integers(0, 30), values["a"], values["b"]), max_size=25),
    st.lists(st.tuples(reads(), writes), min_size=1, max_size=6),
    st.sampled_from([{}, {"memory_limit": "2KB"}, {"partial": False}]),
)
def test_ranges_match_sqlite(initial, steps, options):
    conn = noria_py.connect(**options)
    ref = sqlite3.connect(":memory:")
    for db in (conn, ref):
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    rows = {}
    for r in initial:
        rows[r[0]] = r
    for db in (conn, ref):
        db.executemany("INSERT INTO t VALUES (?, ?, ?)", list(rows.values()))
    for (q, params), ws in steps:
        got = conn.execute(q, params).fetchall()
        want = ref.execute(q, params).fetchall()
        if "ORDER BY" in q:
            assert got == want, (q, params)
        else:
            assert sorted(got) == sorted(want), (q, params)
        for w in ws:
            if w[0] == "ins":
                if w[1] in rows:
                    continue
                rows[w[1]] = w[1:]
                for db in (conn, ref):
                    db.execute("INSERT INTO t VALUES (?, ?, ?)", w[1:])
            elif w[0] == "del":
                rows.pop(w[1], None)
                for db in (conn, ref):
                    db.execute("DELETE FROM t WHERE id = ?", (w[1],))
            else:
                for db in (conn, ref):
                    db.execute("UPDATE t SET b = ? WHERE id = ?", (w[2], w[1]))


def test_range_reads_are_cached_not_proxied():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    for q, kinds in QUERIES:
        conn.execute(q, tuple(1 for _ in kinds))
    statuses = {r[1]: r[2] for r in conn.execute("SHOW CACHES")}
    assert set(statuses.values()) == {"cached"}, statuses


def test_bad_limit_parameter_is_an_error():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    try:
        conn.execute("SELECT id FROM t ORDER BY id LIMIT ?", (-1,))
    except noria_py.ProgrammingError:
        pass
    else:
        raise AssertionError("negative LIMIT accepted")


# --- partial range state: interval sets, ranged upqueries, subsumption ---------------------------


def _engine_with(rows, options=None):
    conn = noria_py.connect(**(options or {}))
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    return conn


def _reader(conn, sql):
    """The reader of an installed query (found through EXPLAIN's last row)."""
    rid = list(conn.execute("EXPLAIN " + sql))[-1][0]
    return conn.engine.graph.nodes[rid]


def _count_base_rows(conn) -> dict:
    """Wrap base storage so the test sees how many rows each kind of upquery fetched."""
    storage = conn.engine.storage
    seen = {"range": 0, "lookup": 0, "range_calls": 0}
    range_lookup, lookup = storage.range_lookup, storage.lookup

    def counted_range(*args, **kwargs):
        rows = range_lookup(*args, **kwargs)
        seen["range"] += len(rows)
        seen["range_calls"] += 1
        return rows

    def counted_lookup(*args, **kwargs):
        rows = lookup(*args, **kwargs)
        seen["lookup"] += len(rows)
        return rows

    storage.range_lookup = counted_range
    storage.lookup = counted_lookup
    return seen


def test_only_missing_pieces_are_upqueried():
    conn = _engine_with([(i, i % 2, i) for i in range(200)])  # key a=0: even b, a=1: odd b
    q = "SELECT id FROM t WHERE a = ? AND b BETWEEN ? AND ?"
    conn.execute(q, (0, 1000, 1000))  # install (fills only the empty range [1000, 1000])
    seen = _count_base_rows(conn)
    reader = _reader(conn, q)
    assert reader.partial and reader.ranged

    def read(lo, hi):
        got = sorted(r[0] for r in conn.execute(q, (0, lo, hi)))
        assert got == [i for i in range(lo, hi + 1) if i % 2 == 0]

    read(10, 20)  # 10, 12, ..., 20
    assert seen["range"] == 6
    read(15, 30)  # only (20, 30]: 22 .. 30
    assert seen["range"] == 6 + 5
    read(0, 40)  # [0, 10) and (30, 40]
    assert seen["range"] == 11 + 5 + 5
    calls = seen["range_calls"]
    read(5, 35)  # inside what is filled: no upquery at all
    read(12, 12)
    assert seen["range_calls"] == calls and seen["lookup"] == 0
    s = reader.filled[(0,)]
    assert len(s) == 2  # [0, 40] and the point 1000
    assert reader.state_size()[1] == 21


def test_delta_inside_a_filled_range_is_applied_and_outside_dropped():
    conn = _engine_with([(i, 0, i) for i in range(100)])
    q = "SELECT id, b FROM t WHERE a = ? AND b BETWEEN ? AND ?"
    assert len(conn.execute(q, (0, 10, 20)).fetchall()) == 11
    reader = _reader(conn, q)
    seen = _count_base_rows(conn)
    conn.execute("INSERT INTO t VALUES (1000, 0, 15)")  # inside [10, 20]: applied
    conn.execute("INSERT INTO t VALUES (1001, 0, 50)")  # outside every filled range: dropped
    conn.execute("INSERT INTO t VALUES (1002, 1, 15)")  # a key that is not filled: dropped
    assert reader.dropped == 2
    rows = conn.execute(q, (0, 10, 20)).fetchall()
    assert (1000, 15) in rows and len(rows) == 12
    assert seen["range_calls"] == 0  # answered from state
    assert all(r[1] != 50 for r in reader.state[(0,)])
    # updates move rows in and out of the filled range; a delete inside is applied
    conn.execute("UPDATE t SET b = 55 WHERE id = 1000")  # leaves the range
    conn.execute("UPDATE t SET b = 11 WHERE id = 1001")  # enters it
    conn.execute("DELETE FROM t WHERE id = 12")
    rows = conn.execute(q, (0, 10, 20)).fetchall()
    assert sorted(rows) == sorted([(i, i) for i in range(10, 21) if i != 12] + [(1001, 11)])
    assert seen["range_calls"] == 0
    # the dropped row is fetched when its range is read
    assert (1000, 55) in conn.execute(q, (0, 50, 60)).fetchall()
    assert seen["range_calls"] == 1


def test_evicting_a_piece_refetches_only_that_piece():
    conn = _engine_with([(i, 0, i) for i in range(100)])
    q = "SELECT id FROM t WHERE a = ? AND b BETWEEN ? AND ?"
    conn.execute(q, (0, 10, 19)).fetchall()
    conn.execute(q, (0, 30, 39)).fetchall()
    conn.execute(q, (0, 20, 29)).fetchall()  # merges into [10, 39]
    reader = _reader(conn, q)
    assert len(reader.filled[(0,)]) == 1
    piece = next(p for p in reader.pieces[(0,)] if p[1][1] == 30)
    reader.evict_key(piece)  # what the eviction policy does with an LRU entry
    assert [tuple(iv) for iv in reader.filled[(0,)]] != []
    assert reader.filled[(0,)].covers(*_cuts(10, 29)) and not reader.filled[(0,)].contains(30)
    assert sorted(r[reader.range_col] for r in reader.state[(0,)]) == list(range(10, 30))
    seen = _count_base_rows(conn)
    got = sorted(r[0] for r in conn.execute(q, (0, 10, 39)))
    assert got == list(range(10, 40))
    assert seen["range"] == 10  # only [30, 39] again


def _cuts(lo, hi):
    from noria_py.dataflow.intervals import interval_of

    return interval_of([(">=", lo), ("<=", hi)])


def test_eviction_under_a_memory_budget_keeps_answers_exact():
    conn = _engine_with([(i, i % 3, i % 40) for i in range(300)], {"memory_limit": "1KB"})
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    ref.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, i % 3, i % 40) for i in range(300)])
    q = "SELECT id FROM t WHERE a = ? AND b BETWEEN ? AND ? ORDER BY id"
    for n in range(60):
        params = (n % 3, (n * 7) % 35, (n * 7) % 35 + 5)
        assert conn.execute(q, params).fetchall() == ref.execute(q, params).fetchall()
        if n % 5 == 0:
            for db in (conn, ref):
                db.execute("UPDATE t SET b = ? WHERE id = ?", ((n * 3) % 40, n))
    assert conn.engine.graph.evictor.evictions > 0


def test_limit_reads_fill_only_what_they_need():
    conn = _engine_with([(i, 0, i) for i in range(1000)])
    q = "SELECT id, b FROM t WHERE b > ? ORDER BY b LIMIT 5"
    assert conn.execute(q, (100,)).fetchall() == [(i, i) for i in range(101, 106)]
    reader = _reader(conn, q)
    assert reader.partial and reader.key_cols == ()  # a range-only reader is partial
    seen = _count_base_rows(conn)
    slack = type(reader).FILL_SLACK
    fetched = reader.upquery_rows
    assert fetched <= 5 + slack
    # a read inside the filled run whose rows run out before LIMIT fetches only what follows
    lo = 100 + fetched - 2
    assert conn.execute(q, (lo,)).fetchall() == [(i, i) for i in range(lo + 1, lo + 6)]
    assert 0 < seen["range"] <= 5 + slack
    # keyset pagination downward fills from the upper end
    q2 = "SELECT id FROM t WHERE id < ? ORDER BY id DESC LIMIT 3"
    assert conn.execute(q2, (500,)).fetchall() == [(499,), (498,), (497,)]
    assert _reader(conn, q2).upquery_rows <= 3 + slack
    assert reader.state_size()[1] < 100


def test_limit_read_cut_through_ties_is_exact():
    rows = [(i, 0, i // 4) for i in range(100)]  # every b value four times
    conn = _engine_with(rows)
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    ref.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    from noria_py.dataflow.ops.reader import RangeReader

    default = RangeReader.FILL_SLACK
    RangeReader.FILL_SLACK = 0
    try:
        for q in (
            "SELECT id, b FROM t WHERE b >= ? ORDER BY b, id DESC LIMIT 6",
            "SELECT id, b FROM t WHERE b < ? ORDER BY b DESC, id LIMIT 6",
            "SELECT id, b FROM t WHERE b > ? ORDER BY b, id LIMIT 3",
        ):
            for v in (3, 5, 4, 10, 9, 20, 2):
                assert conn.execute(q, (v,)).fetchall() == ref.execute(q, (v,)).fetchall()
    finally:
        RangeReader.FILL_SLACK = default


def test_subsumption_equality_lookup_answered_from_a_range_reader():
    conn = _engine_with([(i, i % 5, i % 7) for i in range(100)])
    rq = "SELECT id, b FROM t WHERE a = ? AND b > ?"
    eq = "SELECT id, b FROM t WHERE a = ? AND b = ?"
    assert _reader(conn, rq).parents[0] is _reader(conn, eq).parents[0]  # one shared node
    conn.execute(rq, (2, -1)).fetchall()  # key a = 2, all of b >= 0
    seen = _count_base_rows(conn)
    got = conn.execute(eq, (2, 3)).fetchall()
    assert sorted(got) == [(i, 3) for i in range(100) if i % 5 == 2 and i % 7 == 3]
    assert seen == {"range": 0, "lookup": 0, "range_calls": 0}  # no upquery
    assert _reader(conn, eq).subsumed == 1
    # a point outside the filled range (b = -5 < 0) is not covered: it upqueries
    conn.execute(eq, (2, -5)).fetchall()
    assert seen["lookup"] == 0 and _reader(conn, eq).subsumed == 1
    # and the copied key stays current
    conn.execute("INSERT INTO t VALUES (1000, 2, 3)")
    assert (1000, 3) in conn.execute(eq, (2, 3)).fetchall()


def test_subsumption_within_a_range_reader_whole_key():
    """A key filled over the whole range answers every sub-range: here through a join over a
    DISTINCT, whose state is keyed by ``a`` alone, so ranged upqueries are not planned and a
    miss fills the whole key."""
    conn = _engine_with([(i, i % 4, i) for i in range(50)])
    conn.execute("CREATE TABLE s (a INT PRIMARY KEY, name VARCHAR(10))")
    conn.executemany("INSERT INTO s VALUES (?, ?)", [(a, f"n{a}") for a in range(4)])
    q = (
        "SELECT d.id, s.name FROM (SELECT DISTINCT id, a, b FROM t) AS d JOIN s ON d.a = s.a"
        " WHERE d.a = ? AND d.b BETWEEN ? AND ?"
    )
    assert len(conn.execute(q, (1, 0, 10)).fetchall()) == 3
    reader = _reader(conn, q)
    assert reader.partial and not reader.ranged
    assert reader.filled[(1,)].is_whole()
    before = reader.upqueries
    for lo, hi in ((0, 49), (20, 30), (7, 7), (-100, 100)):
        got = sorted(conn.execute(q, (1, lo, hi)).fetchall())
        assert got == [(i, "n1") for i in range(50) if i % 4 == 1 and lo <= i <= hi]
    assert reader.upqueries == before


def test_range_fills_inside_a_transaction_are_forgotten():
    conn = _engine_with([(i, 0, i) for i in range(30)])
    q = "SELECT id FROM t WHERE b > ? ORDER BY id"
    conn.execute(q, (100,)).fetchall()
    reader = _reader(conn, q)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO t VALUES (100, 0, 5)")
    conn.execute(q, (0,)).fetchall()  # fills (0, +inf) from uncommitted rows
    conn.execute("ROLLBACK")
    assert not reader.filled.get((), None) or not reader.filled[()].contains(5)
    assert conn.execute(q, (0,)).fetchall() == [(i,) for i in range(1, 30)]


def test_ranged_upquery_uses_an_index():
    conn = _engine_with([(i, i % 3, i) for i in range(10)])
    conn.execute("SELECT id FROM t WHERE a = ? AND b > ?", (1, 2)).fetchall()
    conn.execute("SELECT id FROM t WHERE b < ?", (5,)).fetchall()
    db = conn.engine.storage.conn
    for sql in (
        'SELECT * FROM "t" WHERE "a" IS ? AND "b" > ?',
        'SELECT * FROM "t" WHERE "b" < ? ORDER BY "b" LIMIT ?',
    ):
        plan = " ".join(
            r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sql, (1, 2)[: sql.count("?")])
        )
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan


# --- the blocks of rows behind a range reader's key --------------------------------------------

_cut = st.one_of(
    st.just((0,)),
    st.just((2,)),
    st.tuples(st.just(1), st.integers(-1, 8), st.sampled_from([0, 1])),
)


@settings(max_examples=500)
@given(
    st.integers(1, 3),
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.integers(0, 7), st.integers(0, 3)),
            st.tuples(st.just("add"), st.integers(0, 7), st.integers(0, 3)),
            st.tuples(st.just("remove"), st.integers(0, 40)),
            st.tuples(st.just("delete"), _cut, _cut),
        ),
        max_size=60,
    ),
    _cut,
    _cut,
    st.one_of(st.none(), st.integers(0, 5)),
    st.booleans(),
)
def test_range_rows_blocks_match_a_sorted_list(load, ops, lo, hi, need, desc):
    from noria_py.dataflow.intervals import in_interval
    from noria_py.dataflow.ops.reader import RangeRows, RangeSnapshot, _slice, _window

    default = RangeRows.LOAD
    RangeRows.LOAD = load
    try:
        st_ = RangeRows(0)
        model: list = []  # rows (value, tag); order within equal values is free
        snaps = []
        for op in ops:
            if op[0] == "add":
                row = (op[1], op[2])
                st_.add(row)
                model.append(row)
            elif op[0] == "remove":
                if model:
                    row = model[op[1] % len(model)]
                    st_.remove(row)
                    model.remove(row)
            else:
                gone = st_.delete(op[1], op[2])
                keep = [r for r in model if not in_interval(r[0], op[1], op[2])]
                assert gone == len(model) - len(keep)
                model = keep
            snaps.append((RangeSnapshot(None, st_), sorted(model)))
            assert len(st_) == len(model)
            assert sorted(st_) == sorted(model)
            assert [r[0] for r in st_] == sorted(r[0] for r in model)  # in value order
            assert all(0 < len(b) <= 2 * load for b in st_.vals)
            assert st_.firsts == [b[0] for b in st_.vals]
        # every snapshot still shows the rows of its moment
        for snap, rows in snaps:
            assert sorted(r for rs in snap.rows for r in rs) == rows
        # a window: the rows in [lo, hi), or the first (last) `need` and their tie group
        want = sorted(r[0] for r in model if in_interval(r[0], lo, hi))
        i, j = _window(st_.firsts, st_.vals, lo, hi, need, desc)
        got = sorted(r[0] for r in _slice(st_.rows, i, j))
        if need is not None and len(want) > need:
            edge = want[-need] if desc else want[need - 1]
            if need == 0:
                want = []
            elif desc:
                want = [v for v in want if v >= edge]
            else:
                want = [v for v in want if v <= edge]
        assert got == want
    finally:
        RangeRows.LOAD = default


def test_range_rows_remove_inside_a_middle_block():
    from noria_py.dataflow.ops.reader import RangeRows

    default = RangeRows.LOAD
    RangeRows.LOAD = 1
    try:
        rows = RangeRows(0)
        for r in [(1,), (3,), (5,), (6,), (7,), (4,)]:
            rows.add(r)
        assert rows.vals == [[1], [3, 4], [5], [6, 7]]
        rows.remove((4,))  # not first in its block, and the next block starts above it
        rows.remove((7,))
        assert list(rows) == [(1,), (3,), (5,), (6,)]
    finally:
        RangeRows.LOAD = default


# --- ranged upqueries on columns of every kind: partial (SQLite range queries) = full -----------

_KINDS = {
    "VARCHAR(8)": st.text("abcAB é", max_size=3),
    "DOUBLE": st.floats(-5, 5, allow_nan=False).map(lambda f: round(f, 1)),
    "DECIMAL(6,2)": st.decimals("-50", "50", places=2),
    "DATE": st.dates(min_value=__import__("datetime").date(1990, 1, 1)).map(str),
    "DATETIME": st.datetimes(
        min_value=__import__("datetime").datetime(2020, 1, 1),
        max_value=__import__("datetime").datetime(2020, 1, 3),
    ).map(lambda d: d.replace(microsecond=d.microsecond // 250000 * 250000)),
}


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(sorted(_KINDS)))
def test_ranged_upqueries_on_every_column_kind(data, kind):
    values = _KINDS[kind]
    rows = data.draw(
        st.lists(st.tuples(st.integers(0, 2), st.one_of(st.none(), values)), max_size=20)
    )
    dbs = [noria_py.connect(), noria_py.connect(partial=False)]
    for db in dbs:
        db.execute(f"CREATE TABLE t (id INT PRIMARY KEY, a INT, b {kind})")
        db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i,) + r for i, r in enumerate(rows)])
    queries = [
        ("SELECT id, b FROM t WHERE b > ? ORDER BY b, id LIMIT 3", 1),
        ("SELECT id FROM t WHERE a = ? AND b BETWEEN ? AND ?", 3),
        ("SELECT id, b FROM t WHERE b <= ? ORDER BY b DESC, id", 1),
    ]
    for _ in range(6):
        q, n = data.draw(st.sampled_from(queries))
        params = tuple(
            data.draw(st.integers(0, 2)) if n == 3 and k == 0 else data.draw(values)
            for k in range(n)
        )
        got, want = (sorted(map(tuple, db.execute(q, params).fetchall()), key=repr) for db in dbs)
        assert got == want, (q, params)
        if data.draw(st.booleans()):
            row = (100 + len(rows), data.draw(st.integers(0, 2)), data.draw(values))
            rows.append(row[1:])
            for db in dbs:
                db.execute("INSERT INTO t VALUES (?, ?, ?)", row)


# --- ranged upqueries racing deltas at range boundaries (thesis: x = 42, x < 50, x = 49) -------
#
# With the dataflow on its own thread, a write returns once it is in base storage while its delta
# still waits to be applied. A range read that fills from base storage meanwhile must neither count
# that write twice (once from the fill, once from the delta) nor lose a write that lands just
# inside or outside the filled range.

RACE_MODES = [
    # one dataflow thread that batches for a long time: deltas are pending when reads arrive
    {"domains": "threads", "upqueries": "direct", "batch_window": 0.05},
    {"domains": "threads", "upqueries": "direct", "batch_window": 0.05, "memory_limit": "1KB"},
    # a thread per domain: partial range readers, filled by ranged upqueries sent as messages
    {"domains": "threads"},
    {"domains": "threads", "memory_limit": "1KB"},  # ... evicting filled pieces all the time
    {"upqueries": "messages"},  # the same messages, delivered inline
]


def _upqueries(options) -> str:
    """How a mode's fills travel: "messages" (the default with a thread per domain) or "direct"."""
    return options.get("upqueries", "messages" if options.get("domains") == "threads" else "direct")


def _xs(conn, sql, *params):
    return [r[0] for r in conn.execute(sql, params).fetchall()]


@pytest.mark.parametrize("options", RACE_MODES)
def test_range_fill_racing_boundary_writes(options):
    conn = noria_py.connect(**options)
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
    below = "SELECT x FROM t WHERE x < ? ORDER BY x"
    conn.execute("INSERT INTO t VALUES (1, 42)")  # durable; its delta may still be pending
    assert _xs(conn, below, 50) in ([], [42])  # eventual: never a double 42
    conn.execute("INSERT INTO t VALUES (2, 49)")  # just inside the filled range
    conn.execute("INSERT INTO t VALUES (3, 50)")  # just outside it
    conn.engine.sync()
    assert _xs(conn, below, 50) == [42, 49]
    assert _xs(conn, below, 51) == [42, 49, 50]
    conn.execute("DELETE FROM t WHERE x = 49")
    assert _xs(conn, below, 50) in ([42], [42, 49])
    conn.engine.sync()
    assert _xs(conn, below, 50) == [42]
    conn.close()


@settings(max_examples=60)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("insert"), st.integers(0, 20), st.integers(45, 55)),
            st.tuples(st.just("delete"), st.integers(0, 20)),
            st.tuples(
                st.just("read"), st.sampled_from(["<", "<=", ">", ">="]), st.integers(44, 56)
            ),
            st.tuples(st.just("sync")),
        ),
        max_size=25,
    ),
    mode=st.sampled_from(range(len(RACE_MODES))),
)
def test_range_reads_racing_writes_converge(steps, mode):
    conn = noria_py.connect(**RACE_MODES[mode])
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
    ref = sqlite3.connect(":memory:")
    ref.execute("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
    reads = set()
    for step in steps:
        if step[0] == "insert":
            try:
                conn.execute("INSERT INTO t VALUES (?, ?)", step[1:])
            except noria_py.IntegrityError:
                continue
            ref.execute("INSERT INTO t VALUES (?, ?)", step[1:])
        elif step[0] == "delete":
            conn.execute("DELETE FROM t WHERE id = ?", step[1:])
            ref.execute("DELETE FROM t WHERE id = ?", step[1:])
        elif step[0] == "read":
            sql = f"SELECT id, x FROM t WHERE x {step[1]} ? ORDER BY x, id"
            reads.add((sql, step[2]))
            conn.execute(sql, (step[2],)).fetchall()
        else:
            conn.engine.sync()
    conn.engine.sync()
    for sql, v in sorted(reads):
        assert conn.execute(sql, (v,)).fetchall() == ref.execute(sql, (v,)).fetchall(), (sql, v)
        if _upqueries(RACE_MODES[mode]) == "messages":
            reader = _reader(conn, sql)
            assert reader.partial and reader.ranged, reader
    conn.close()


def test_a_range_hit_keeps_its_piece_from_eviction():
    """Eviction is LRU per filled piece, and a read answered from a piece (lock-free from the
    snapshot, or under the lock) counts as a use: of three equal pieces in a budget for two,
    the one not read again goes."""
    rows = [(i, 0, i) for i in range(100)]
    q = "SELECT id FROM t WHERE b >= ? AND b < ?"
    for reread in ("lock-free", "locked"):
        conn = _engine_with(rows, {"memory_limit": "5000"})
        conn.execute(q, (0, 10)).fetchall()  # piece A
        reader = _reader(conn, q)
        conn.execute(q, (20, 30)).fetchall()  # piece B
        if reread == "locked":
            reader.published.clear()  # no snapshot: the hit is served under the lock
        assert sorted(conn.execute(q, (2, 8)).fetchall()) == [(i,) for i in range(2, 8)]
        conn.execute(q, (40, 50)).fetchall()  # piece C: one piece must go
        s = reader.filled[()]
        assert s.contains(5) and s.contains(45), reread
        assert not s.contains(25), reread
        conn.close()

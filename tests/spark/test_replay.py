"""Bulk replays in Spark give fully materialized nodes exactly the state an in-process replay gives.

Each case builds the same database twice, fully materialized (``partial=False``): once with bulk
replays off and once with ``bulk_replay_rows=0`` (every translatable input goes through Spark).
After the same query is installed in both, every full node's state (its contents, compared value
by value with ``repr``, so ``Decimal('1.50')`` differs from ``Decimal('1.5')`` and ``1`` from
``1.0``) and every reader's published results must be identical. Spark jobs cost about a second
each on the shared local session, so the property tests draw few examples.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections import Counter
from decimal import Decimal

import pytest
from differential import queries as dq
from differential.schema import MAX_ID, tables, values_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.dataflow.records import consolidate

from .data import COUNT_VIEW, VOTES_DDL, vote_rows

pytestmark = pytest.mark.spark


def few(n: int) -> settings:
    """Hypothesis settings for ``n`` examples: each costs a Spark job or two."""
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- comparing two engines -------------------------------------------------------------------


def typed(row) -> tuple:
    return tuple(repr(v) for v in row)


def full_states(conn) -> dict[str, list]:
    """Every fully materialized node's contents, by node signature, values compared by repr."""
    out = {}
    for n in conn.engine.graph.nodes.values():
        if n.materialization == "full":
            out[n.signature] = sorted((typed(r), m) for r, m in consolidate(n.contents()))
    return out


def published(conn) -> dict[str, dict]:
    """Every reader's published results; rows in order when the reader orders them."""
    out = {}
    for n in conn.engine.graph.nodes.values():
        if n.kind != "reader" or (n.limit is not None and not n.order):
            continue  # LIMIT without ORDER BY: any rows are a right answer
        out[n.signature] = {
            typed(k): [typed(r) for r in rows] if n.order else sorted(typed(r) for r in rows)
            for k, rows in n.published.items()
        }
    return out


def assert_same_state(expected, actual) -> None:
    want, got = full_states(expected), full_states(actual)
    assert want.keys() == got.keys()
    for sig in want:
        assert got[sig] == want[sig], sig
    assert published(actual) == published(expected)


def paths(conn) -> Counter:
    return Counter(r.path for r in conn.engine.graph.bulk_replay.records)


def twin(setup) -> tuple:
    """(in-process engine, bulk-replay engine), both prepared by ``setup(conn)``."""
    plain = noria_py.connect(partial=False, bulk_replay_rows=None)
    bulk = noria_py.connect(partial=False, bulk_replay_rows=0)
    assert plain.engine.graph.bulk_replay is None
    for c in (plain, bulk):
        setup(c)
    return plain, bulk


def install_both(plain, bulk, sql: str, params: tuple = ()) -> bool:
    """Install ``sql`` in both engines; False when it fails (in both, the same way)."""
    outcomes = []
    for c in (plain, bulk):
        try:
            c.execute(sql, params).fetchall()
            outcomes.append("ok")
        except noria_py.Error as e:
            outcomes.append(type(e).__name__)
    assert outcomes[0] == outcomes[1], sql
    return outcomes[0] == "ok"


# --- a fixed plan: the vote count ------------------------------------------------------------


def load_votes(rows):
    def setup(c):
        c.execute(VOTES_DDL)
        c.executemany("INSERT INTO votes VALUES (?, ?, ?)", rows)

    return setup


def test_vote_count_view_is_computed_in_spark_and_stays_live(spark):
    rows = vote_rows(3000, stories=50, seed=11)
    plain, bulk = twin(load_votes(rows))
    sql = "SELECT story_id, COUNT(*), SUM(vote), AVG(vote) FROM votes GROUP BY story_id"
    install_both(plain, bulk, sql)
    records = [r for r in bulk.engine.graph.bulk_replay.records if r.path == "spark"]
    assert len(records) == 1 and records[0].node.split(": ")[1].startswith("aggregate")
    spark_record = records[0]
    # the aggregate's input rows are (story_id, vote): Spark hands over each distinct pair once
    assert spark_record.base_rows == 3000
    assert spark_record.records == len({(s, v) for _, s, v in rows})
    assert spark_record.position is not None
    assert_same_state(plain, bulk)
    # deltas after the replay flow into the Spark-computed state like any other
    for c in (plain, bulk):
        c.execute("INSERT INTO votes VALUES (?, ?, ?)", (99999, 7, 1))
        c.execute("DELETE FROM votes WHERE story_id = ?", (3,))
        c.execute("UPDATE votes SET vote = -vote WHERE story_id = ?", (8,))
    assert_same_state(plain, bulk)
    want = plain.execute(sql).fetchall()
    assert sorted(bulk.execute(sql).fetchall()) == sorted(want)


def test_variance_and_bit_aggregates_take_the_spark_result_and_stay_live(spark):
    # Spark hands over each distinct (story, vote) once with its count: the accumulators must
    # count it that many times, and retract exactly afterwards
    rows = vote_rows(2000, stories=30, seed=5)
    plain, bulk = twin(load_votes(rows))
    sql = (
        "SELECT story_id, VAR_POP(vote), STDDEV_SAMP(vote), BIT_AND(vote), BIT_OR(vote),"
        " BIT_XOR(vote) FROM votes GROUP BY story_id"
    )
    install_both(plain, bulk, sql)
    records = [r for r in bulk.engine.graph.bulk_replay.records if r.path == "spark"]
    assert len(records) == 1 and records[0].records < 2000
    assert_same_state(plain, bulk)
    for c in (plain, bulk):
        c.execute("DELETE FROM votes WHERE story_id = ?", (3,))
        c.execute("UPDATE votes SET vote = -vote WHERE story_id = ?", (8,))
    assert_same_state(plain, bulk)
    assert sorted(bulk.execute(sql).fetchall()) == sorted(plain.execute(sql).fetchall())


def test_filtered_and_parameterized_views_over_spark_computed_aggregates(spark):
    plain, bulk = twin(load_votes(vote_rows(800, stories=20, seed=5)))
    install_both(plain, bulk, COUNT_VIEW.replace("story_id = ?", "story_id > 0"))
    for s in range(1, 21):
        assert (
            bulk.execute(COUNT_VIEW, (s,)).fetchall() == plain.execute(COUNT_VIEW, (s,)).fetchall()
        )
    assert_same_state(plain, bulk)


def test_below_the_threshold_the_replay_stays_in_process():
    conn = noria_py.connect(partial=False)  # the default threshold
    conn.execute(VOTES_DDL)
    conn.executemany("INSERT INTO votes VALUES (?, ?, ?)", vote_rows(200))
    # (MAX keeps every value of a group: base storage cannot build it in one grouped query)
    conn.execute("SELECT story_id, MAX(vote) FROM votes GROUP BY story_id").fetchall()
    records = list(conn.engine.graph.bulk_replay.records)
    assert records and all(r.path == "in-process" for r in records)
    assert any(r.reason == "below the threshold" and r.base_rows == 200 for r in records)


def test_a_count_is_built_by_base_storage_whatever_its_size():
    # a COUNT/SUM aggregate over base tables is one grouped query of base storage: Spark is
    # not asked (only bulk_replay_rows=0 sends it there), at any size
    conn = noria_py.connect(partial=False, bulk_replay_rows=1)
    conn.execute(VOTES_DDL)
    conn.executemany("INSERT INTO votes VALUES (?, ?, ?)", vote_rows(200))
    sql = "SELECT story_id, COUNT(*), SUM(vote) FROM votes GROUP BY story_id"
    got = sorted(conn.execute(sql).fetchall())
    records = list(conn.engine.graph.bulk_replay.records)
    assert not any("aggregate" in r.node for r in records)
    store = noria_py.connect(dataflow=False)
    store.execute(VOTES_DDL)
    store.executemany("INSERT INTO votes VALUES (?, ?, ?)", vote_rows(200))
    assert got == sorted(store.execute(sql).fetchall())


def test_without_pyspark_the_replay_stays_in_process(monkeypatch):
    from noria_py.spark import session

    def missing():
        raise ImportError(session.INSTALL_HINT)

    monkeypatch.setattr(session, "require_pyspark", missing)
    plain, bulk = twin(load_votes(vote_rows(100)))
    install_both(plain, bulk, "SELECT story_id, COUNT(*) FROM votes GROUP BY story_id")
    records = list(bulk.engine.graph.bulk_replay.records)
    assert any("pip install noria_py[spark]" in r.reason for r in records)
    assert all(r.path == "in-process" for r in records)
    assert_same_state(plain, bulk)


def test_self_joins_and_later_views_share_one_snapshot_per_table_and_position(spark):
    def setup(c):
        c.execute("CREATE TABLE p (id INT PRIMARY KEY, parent INT, name VARCHAR(5), w DOUBLE)")
        rows = [(i, i // 3 if i % 4 else None, "abcde"[i % 5], i * 0.25) for i in range(60)]
        c.executemany("INSERT INTO p VALUES (?, ?, ?, ?)", rows)

    plain, bulk = twin(setup)
    # the two scans of p need different columns: one snapshot holds both
    install_both(
        plain,
        bulk,
        "SELECT a.parent, COUNT(b.id), MAX(b.name) FROM p AS a LEFT JOIN p AS b"
        " ON b.id = a.parent GROUP BY a.parent",
    )
    install_both(plain, bulk, "SELECT name, SUM(w) FROM p GROUP BY name")
    for c in (plain, bulk):
        c.execute("UPDATE p SET w = w + 1 WHERE id < 10")
    install_both(plain, bulk, "SELECT name, MIN(w), AVG(w) FROM p GROUP BY name")
    spark = [r for r in bulk.engine.graph.bulk_replay.records if r.path == "spark"]
    assert len(spark) == 3
    assert spark[0].position == spark[1].position < spark[2].position
    assert_same_state(plain, bulk)


def test_views_rebuilt_when_a_database_reopens_are_replayed_in_spark(spark, tmp_path):
    db = str(tmp_path / "app.db")
    sql = "SELECT story_id, COUNT(*) AS n, SUM(vote) AS total FROM votes GROUP BY story_id"
    first = noria_py.connect(db, partial=False, bulk_replay_rows=None)
    load_votes(vote_rows(500, stories=25))(first)
    first.execute(f"CREATE VIEW tally AS {sql}")
    want = sorted(first.execute("SELECT * FROM tally").fetchall())
    first.close()
    reopened = noria_py.connect(db, partial=False, bulk_replay_rows=0)
    try:
        # opening defines the view; its state is computed when a query first reads it
        assert not reopened.engine.graph.bulk_replay.records
        assert sorted(reopened.execute("SELECT * FROM tally").fetchall()) == want
        records = list(reopened.engine.graph.bulk_replay.records)
        assert [r.path for r in records if "aggregate" in r.node] == ["spark"]
    finally:
        reopened.close()


def test_bulk_replay_rows_is_checked():
    for bad in (-1, "many", 1.5):
        with pytest.raises(noria_py.ProgrammingError, match="bulk_replay_rows"):
            noria_py.connect(bulk_replay_rows=bad)


def test_untranslatable_inputs_replay_in_process(spark):
    def setup(c):
        c.execute("CREATE TABLE a (id INT PRIMARY KEY, x DOUBLE, g INT)")
        c.execute("CREATE TABLE b (id INT PRIMARY KEY, k INT)")
        c.executemany("INSERT INTO a VALUES (?, ?, ?)", [(i, i / 2, i % 3) for i in range(40)])
        c.executemany("INSERT INTO b VALUES (?, ?)", [(i, i % 7) for i in range(30)])

    plain, bulk = twin(setup)
    # DOUBLE = INT: Spark would compare after a cast, Python compares exactly
    install_both(plain, bulk, "SELECT a.x, COUNT(*) FROM a JOIN b ON a.x = b.k GROUP BY a.x")
    # an aggregate over an aggregate: the inner one's contents feed the outer one
    install_both(
        plain,
        bulk,
        "SELECT c, COUNT(*) FROM (SELECT g, COUNT(*) AS c FROM a GROUP BY g) AS t GROUP BY c",
    )
    reasons = [r.reason for r in bulk.engine.graph.bulk_replay.records if r.path == "in-process"]
    assert any("compare differently in Spark" in r for r in reasons)
    assert any("is materialized" in r for r in reasons)
    assert_same_state(plain, bulk)


def test_a_computed_value_of_another_type_falls_back_to_in_process(spark):
    def setup(c):
        c.execute("CREATE TABLE a (id INT PRIMARY KEY, g INT)")
        c.executemany("INSERT INTO a VALUES (?, ?)", [(i, i % 5 - 2) for i in range(30)])

    plain, bulk = twin(setup)
    # a DOUBLE column whose closure computes -0.0 for some rows: Arrow would not keep the sign
    sql = "SELECT g * -0e0, COUNT(*) FROM a GROUP BY g * -0e0"
    install_both(plain, bulk, sql)
    reasons = [r.reason for r in bulk.engine.graph.bulk_replay.records if r.path == "in-process"]
    assert any("UnsafeValue: -0.0 in a DOUBLE column" in r for r in reasons), reasons
    assert_same_state(plain, bulk)


def test_values_of_another_type_than_their_column_are_refused():
    from noria_py.spark.replay import STR_T, UnsafeValue, encode_values

    with pytest.raises(UnsafeValue, match="int, str values in a column of kind"):
        encode_values(["x", 1, None], STR_T)
    assert encode_values(["x", None], STR_T) == ["x", None]


# --- random plans over typed columns ---------------------------------------------------------

T1 = (
    "CREATE TABLE t1 (id INT PRIMARY KEY, g INT, s VARCHAR(8), d DECIMAL(6,2), f DOUBLE,"
    " dt DATE, ts DATETIME)"
)
T2 = "CREATE TABLE t2 (id INT PRIMARY KEY, k INT, d2 DECIMAL(8,3), s2 VARCHAR(8))"

small_ints = st.one_of(st.none(), st.integers(-3, 3))
strings = st.one_of(st.none(), st.sampled_from(["a", "b", "ab", "ba", "", "abc"]))
decimals = st.one_of(
    st.none(), st.integers(-500, 500).map(lambda n: Decimal(n).scaleb(-2).quantize(Decimal("0.01")))
)
doubles = st.one_of(st.none(), st.sampled_from([0.5, -2.25, 0.1, 1e20, 3.0, 1 / 3]))
dates = st.one_of(st.none(), st.integers(0, 9).map(lambda n: dt.date(2020, 1, 1 + n)))
stamps = st.one_of(
    st.none(),
    st.integers(0, 5).map(lambda n: dt.datetime(2021, 3, 4, 5, 6, n, 123456 * (n % 2))),
)


@st.composite
def typed_data(draw):
    n1 = draw(st.integers(0, 30))
    t1 = [
        (
            i,
            draw(small_ints),
            draw(strings),
            draw(decimals),
            draw(doubles),
            draw(dates),
            draw(stamps),
        )
        for i in range(n1)
    ]
    n2 = draw(st.integers(0, 15))
    t2 = [
        (
            i,
            draw(small_ints),
            draw(decimals.map(lambda d: None if d is None else d / 4)),
            draw(strings),
        )
        for i in range(n2)
    ]
    return t1, t2


KEYS = ["t1.g", "t1.s", "t1.d", "t1.dt", "t1.d / 3", "t1.g + 1", "LOWER(t1.s)", "t1.f", "t1.ts"]
AGGS = [
    "COUNT(*)",
    "COUNT(t1.s)",
    "COUNT(DISTINCT t1.g)",
    "SUM(t1.d)",
    "SUM(t1.f)",
    "SUM(t1.g)",
    "AVG(t1.d)",
    "AVG(t1.g)",
    "AVG(t1.f)",
    "MIN(t1.ts)",
    "MAX(t1.dt)",
    "MIN(t1.s)",
    "MAX(t1.d * 2)",
    "GROUP_CONCAT(t1.s)",
    "GROUP_CONCAT(DISTINCT t1.s ORDER BY t1.s DESC SEPARATOR '|')",
    "VAR_POP(t1.f)",
    "STDDEV_SAMP(t1.d)",
    "BIT_OR(t1.g)",
    "BIT_XOR(t1.d)",
]
JOINED_AGGS = ["SUM(t2.d2)", "COUNT(t2.id)", "MAX(t2.s2)", "AVG(t2.d2)", "VARIANCE(t2.d2)"]
PREDICATES = [
    "t1.d > 0",
    "t1.s LIKE 'a%'",
    "t1.f IS NOT NULL",
    "t1.dt >= '2020-01-05'",
    "t1.g IN (1, 2, -3)",
    "t1.ts < '2021-03-04 05:06:03'",
    "NOT (t1.g = 0)",
    "t1.d * t1.g > 1",
]
PLAIN_COLUMNS = ["t1.g", "t1.s", "t1.d", "t1.d + t1.g", "t1.f * 2", "t1.dt", "t1.ts", "t1.d / 3"]


@st.composite
def typed_queries(draw) -> str:
    def some(options, lo=1, hi=2):
        return draw(st.lists(st.sampled_from(options), min_size=lo, max_size=hi, unique=True))

    join = draw(st.sampled_from(["", " JOIN t2 ON t2.k = t1.g", " LEFT JOIN t2 ON t2.k = t1.g"]))
    preds = some(PREDICATES, 0, 2)
    where = f" WHERE {' AND '.join(preds)}" if preds else ""
    form = draw(st.sampled_from(["aggregate", "aggregate", "distinct", "union", "topk"]))
    if form == "aggregate":
        keys = some(KEYS, 0, 2)
        aggs = some(AGGS + (JOINED_AGGS if join else []), 1, 3)
        sql = f"SELECT {', '.join(keys + aggs)} FROM t1{join}{where}"
        return sql + (f" GROUP BY {', '.join(keys)}" if keys else "")
    if form == "distinct":
        return f"SELECT DISTINCT {', '.join(some(PLAIN_COLUMNS, 1, 2))} FROM t1{join}{where}"
    if form == "union":
        op = draw(st.sampled_from(["UNION", "UNION ALL"]))
        other = draw(
            st.sampled_from(["SELECT t2.s2 FROM t2", "SELECT t2.s2 FROM t2 WHERE t2.k > 0"])
        )
        sql = f"SELECT t1.s FROM t1{join}{where} {op} {other}"
        return f"SELECT s, COUNT(*) FROM ({sql}) AS u GROUP BY s"
    cols = some(PLAIN_COLUMNS, 1, 2)
    order = ", ".join(f"{c} {draw(st.sampled_from(['ASC', 'DESC']))}" for c in cols)
    return f"SELECT {', '.join(cols)}, t1.id FROM t1{join}{where} ORDER BY {order}, t1.id LIMIT 4"


def test_random_typed_plans_match_the_in_process_replay(spark):
    used = Counter()

    @few(8)
    @given(data=typed_data(), sql=typed_queries())
    def check(data, sql):
        t1, t2 = data

        def setup(c):
            c.execute(T1)
            c.execute(T2)
            if t1:
                c.executemany("INSERT INTO t1 VALUES (?, ?, ?, ?, ?, ?, ?)", t1)
            if t2:
                c.executemany("INSERT INTO t2 VALUES (?, ?, ?, ?)", t2)

        plain, bulk = twin(setup)
        try:
            if install_both(plain, bulk, sql):
                assert_same_state(plain, bulk)
                used.update(paths(bulk))
        finally:
            plain.close()
            bulk.close()

    check()
    assert used["spark"] > 0


# --- random plans from the differential query generator ---------------------------------------


@st.composite
def differential_cases(draw):
    tabs = draw(tables(1, 3))
    rows = {}
    for t in tabs:
        ids = draw(st.lists(st.integers(0, MAX_ID), unique=True, max_size=12))
        rows[t.name] = [
            tuple([i] + [draw(values_of(kind)) for _, kind in t.data_columns]) for i in ids
        ]
    family = draw(st.sampled_from(["join", "aggregate", "union", "nested", "topk"]))
    query = dq.query(draw, list(tabs), family)
    return tabs, rows, query.sql, query.param_sets[0]


def test_differential_queries_match_the_in_process_replay(spark):
    used = Counter()

    @few(6)
    @given(case=differential_cases())
    def check(case):
        tabs, rows, sql, params = case

        def setup(c):
            for t in tabs:
                c.execute(t.ddl())
                marks = ", ".join("?" * len(t.columns))
                if rows[t.name]:
                    c.executemany(f"INSERT INTO {t.name} VALUES ({marks})", rows[t.name])

        plain, bulk = twin(setup)
        try:
            if install_both(plain, bulk, sql, params):
                assert_same_state(plain, bulk)
                used.update(paths(bulk))
        finally:
            plain.close()
            bulk.close()

    check()
    assert used["spark"] > 0


# --- writes racing the replay ----------------------------------------------------------------


def _random_write(rng: random.Random) -> tuple[str, tuple]:
    form = rng.randrange(3)
    if form == 0:
        return "INSERT INTO votes VALUES (?, ?, ?)", (
            rng.randrange(10**6, 2 * 10**6),
            rng.randrange(1, 30),
            rng.choice((1, -1)),
        )
    if form == 1:
        return "UPDATE votes SET vote = -vote WHERE user_id = ?", (rng.randrange(1, 60),)
    return "DELETE FROM votes WHERE user_id = ? AND story_id = ?", (
        rng.randrange(1, 60),
        rng.randrange(1, 30),
    )


@few(3)
@given(seed=st.integers(0, 2**16), writers=st.integers(1, 3), per_writer=st.integers(1, 15))
def test_writes_racing_the_replay_are_applied_exactly_once(spark, seed, writers, per_writer):
    conn = noria_py.connect(partial=False, bulk_replay_rows=0)
    conn.execute(VOTES_DDL)
    conn.executemany("INSERT INTO votes VALUES (?, ?, ?)", vote_rows(1500, stories=29, seed=seed))
    hook = conn.engine.graph.bulk_replay
    snapshot_taken = threading.Event()
    hook.on_snapshot = lambda record: snapshot_taken.set()
    issued_during_replay = []
    errors = []

    def writer(k: int) -> None:
        rng = random.Random(seed * 10 + k)
        try:
            snapshot_taken.wait(120)
            for _ in range(per_writer):
                sql, params = _random_write(rng)
                issued_during_replay.append(replaying.is_set())
                try:
                    conn.execute(sql, params)
                except noria_py.IntegrityError:
                    pass  # a duplicate key: changes nothing
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    replaying = threading.Event()
    replaying.set()
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    sql = "SELECT story_id, COUNT(*), SUM(vote) FROM votes GROUP BY story_id"
    try:
        conn.execute(sql).fetchall()  # installs the view: a bulk replay, writers blocked meanwhile
        replaying.clear()
        for t in threads:
            t.join(120)
        assert not errors, errors
        assert [r.path for r in hook.records if r.node.split(": ")[1].startswith("aggregate")] == [
            "spark"
        ]
        assert any(issued_during_replay), "no write was issued while the replay ran"
        conn.engine.sync()
        # the view equals a fresh in-process replay of the final base data: each write once
        final = conn.engine.storage.scan("votes")
        fresh = noria_py.connect(partial=False, bulk_replay_rows=None)
        fresh.execute(VOTES_DDL)
        fresh.executemany("INSERT INTO votes VALUES (?, ?, ?)", final)
        fresh.execute(sql).fetchall()
        assert_same_state(fresh, conn)
        assert sorted(conn.execute(sql).fetchall()) == sorted(fresh.execute(sql).fetchall())
        fresh.close()
    finally:
        snapshot_taken.set()
        for t in threads:
            t.join(120)
        conn.close()

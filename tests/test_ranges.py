"""Range parameters, LIMIT ?/OFFSET ? and keyset pagination against SQLite, with writes between
reads and with eviction on."""

from __future__ import annotations

import sqlite3

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

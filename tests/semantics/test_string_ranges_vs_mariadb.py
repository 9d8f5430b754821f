"""Range parameters on a string column, cached in partial range readers, compared with MariaDB.

A range reader over a string column orders its rows and its filled ranges by the engine's
collation keys (``dataflow/intervals.py``), and base storage answers its ranged upqueries under
the same collation. Hypothesis draws strings of mixed case, accents, trailing spaces, a tab, and
``%``, ``_`` and the backslash, then interleaves reads (``s >= ?``, ``s < ?``, ``BETWEEN``, with
an equality key, ORDER BY ... LIMIT, an aggregate over the range) with inserts, updates and
deletes, under several collations (the engine's collation is the process's: each is set up in
turn, with MariaDB's table declared under the same one), with eviction on and off. Every
answer must be MariaDB's, and every query must have been cached (SHOW CACHES), not proxied.
"""

from __future__ import annotations

import gc
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.sql import collation as C

COLLATIONS = ["utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_ci", "utf8mb4_general_nopad_ci"]

ALPHABET = ["a", "A", "b", "B", "é", "É", "e", "s", "ß", " ", "\t", "%", "_", "\\", "|", "z"]
strings = st.text(alphabet=st.sampled_from(ALPHABET), max_size=4)
# LIKE patterns: a literal prefix (escapes, wildcards and spaces in it too), then a tail
patterns = st.builds(
    lambda head, tail: head + tail,
    st.text(alphabet=st.sampled_from(ALPHABET), max_size=3),
    st.sampled_from(["%", "", "_%", "%a", "_", " %", "\\%", "|_%"]),
)
values = {
    "a": st.integers(0, 2),
    "s": strings,
    "p": patterns,
}

# (query, the kinds of its parameters, how answers compare: "ids" exact multiset, "seq" exact
# sequence, "keys" strings by collation key)
QUERIES = [
    ("SELECT id FROM t WHERE s >= ?", ["s"], "ids"),
    ("SELECT id, s FROM t WHERE s < ?", ["s"], "ids"),
    ("SELECT id FROM t WHERE s > ? AND s <= ?", ["s", "s"], "ids"),
    ("SELECT id FROM t WHERE a = ? AND s BETWEEN ? AND ?", ["a", "s", "s"], "ids"),
    ("SELECT id FROM t WHERE s >= ? ORDER BY s, id LIMIT 3", ["s"], "seq"),
    ("SELECT id FROM t WHERE a = ? AND s < ? ORDER BY s DESC, id DESC LIMIT 2", ["a", "s"], "seq"),
    ("SELECT COUNT(*), MIN(s), MAX(s) FROM t WHERE s > ?", ["s"], "keys"),
    ("SELECT a, COUNT(*) FROM t WHERE s <= ? GROUP BY a", ["s"], "ids"),
    ("SELECT id FROM t WHERE a IN (?, ?) AND s > ? ORDER BY id", ["a", "a", "s"], "seq"),
]

# col LIKE ?: a prefix range of the reader, then the pattern on its rows
LIKE_QUERIES = [
    ("SELECT id FROM t WHERE s LIKE ?", ["p"], "ids"),
    ("SELECT id, s FROM t WHERE a = ? AND s LIKE ?", ["a", "p"], "ids"),
    ("SELECT id FROM t WHERE s LIKE ? ESCAPE '|'", ["p"], "ids"),
    ("SELECT id FROM t WHERE s LIKE ? ORDER BY s, id LIMIT 2", ["p"], "seq"),
    ("SELECT COUNT(*) FROM t WHERE s LIKE ? AND s >= ?", ["p", "s"], "ids"),
    ("SELECT a, COUNT(*) FROM t WHERE s LIKE ? GROUP BY a", ["p"], "ids"),
    ("SELECT id FROM t WHERE a IN (?, ?) AND s LIKE ? ORDER BY id", ["a", "a", "p"], "seq"),
]

writes = st.lists(
    st.one_of(
        st.tuples(st.just("ins"), st.integers(0, 20), values["a"], strings),
        st.tuples(st.just("del"), st.integers(0, 20)),
        st.tuples(st.just("upd"), st.integers(0, 20), strings),
    ),
    max_size=4,
)


@st.composite
def reads(draw, queries):
    sql, kinds, how = draw(st.sampled_from(queries))
    return sql, tuple(draw(values[k]) for k in kinds), how


def _key(coll, v):
    return coll.key(v) if isinstance(v, str) else v


def _same(coll, how, got, want) -> bool:
    if how == "seq":
        return list(got) == [tuple(r) for r in want]
    if how == "keys":
        return Counter(tuple(_key(coll, v) for v in r) for r in got) == Counter(
            tuple(_key(coll, v) for v in r) for r in want
        )
    return Counter(got) == Counter(tuple(r) for r in want)


class Side:
    """MariaDB's table under one collation (in a database of this module's own) and a factory
    of engines comparing strings under the same collation."""

    def __init__(self, oracle, collation: str):
        self.collation = collation
        self.coll = C.get(collation)
        admin = oracle.connect(database=None)
        with admin.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS noria_string_ranges")
        admin.close()
        self.db = oracle.connect(database="noria_string_ranges")
        self.engines: list = []

    def reset(self, rows) -> None:
        with self.db.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS t")
            cur.execute(
                # no index on s: MariaDB 10.11 answers `s LIKE 'A%'` under utf8mb4_bin from
                # an index range that misses 'A\t' (a PAD SPACE key below 'A'), where its
                # row-by-row LIKE (and MySQL's semantics) keeps it
                "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20)) "
                f"DEFAULT CHARSET=utf8mb4 COLLATE={self.collation}"
            )
            if rows:
                cur.executemany("INSERT INTO t VALUES (%s, %s, %s)", rows)

    def query(self, sql, params):
        with self.db.cursor() as cur:
            cur.execute(sql.replace("?", "%s"), params)
            return cur.fetchall()

    def write(self, sql, params) -> None:
        with self.db.cursor() as cur:
            cur.execute(sql.replace("?", "%s"), params)

    def engine(self, **options):
        conn = noria_py.connect(collation=self.collation, **options)
        self.engines.append(conn)
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20))")
        return conn

    def close(self) -> None:
        for c in self.engines:
            c.close()
        self.engines.clear()


@pytest.fixture(scope="module", params=COLLATIONS)
def side(request, mariadb_oracle):
    gc.collect()  # engines of earlier tests, unreferenced, must not hold the process's collation
    s = Side(mariadb_oracle, request.param)
    try:
        yield s
    finally:
        s.close()
        with s.db.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS noria_string_ranges")
        s.db.close()
        gc.collect()
        C.set_current(C.DEFAULT)


def run_steps(side: Side, conn, initial, steps) -> None:
    """Load ``initial`` rows, then per step: a read compared with MariaDB, then its writes
    applied to both."""
    rows = {}
    for r in initial:
        rows.setdefault(r[0], r)
    side.reset(list(rows.values()))
    if rows:
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", list(rows.values()))
    for (sql, params, how), ws in steps:
        want = side.query(sql, params)
        got = conn.execute(sql, params).fetchall()
        assert _same(side.coll, how, got, want), (
            f"{side.collation}: {sql} {params!r}\n  MariaDB {want}\n  noria   {got}"
        )
        for w in ws:
            if w[0] == "ins":
                if w[1] in rows:
                    continue
                rows[w[1]] = w[1:]
                stmt, args = "INSERT INTO t VALUES (?, ?, ?)", w[1:]
            elif w[0] == "del":
                rows.pop(w[1], None)
                stmt, args = "DELETE FROM t WHERE id = ?", (w[1],)
            else:
                stmt, args = "UPDATE t SET s = ? WHERE id = ?", (w[2], w[1])
            side.write(stmt, args)
            conn.execute(stmt, args)


def assert_cached(conn) -> None:
    statuses = {r[1]: r[2] for r in conn.execute("SHOW CACHES")}
    assert statuses and set(statuses.values()) == {"cached"}, statuses


initial_rows = st.lists(st.tuples(st.integers(0, 20), values["a"], strings), max_size=14)
options_st = st.sampled_from(
    [{}, {"memory_limit": "1KB"}, {"upqueries": "messages"}, {"partial": False}]
)


@pytest.mark.parametrize("queries", ["ranges", "like"])
@settings(max_examples=25, deadline=None)
@given(initial_rows, st.data(), options_st)
def test_string_reads_match_mariadb(side, queries, initial, data, options):
    """Range reads (``ranges``) or ``LIKE ?`` reads (``like``) interleaved with writes."""
    steps = data.draw(
        st.lists(
            st.tuples(reads(QUERIES if queries == "ranges" else LIKE_QUERIES), writes),
            min_size=1,
            max_size=6,
        )
    )
    conn = side.engine(**options)
    try:
        run_steps(side, conn, initial, steps)
        assert_cached(conn)
    finally:
        side.close()


@pytest.mark.parametrize(
    "pattern",
    ["b%", "B_%", "bob", "bo%b", "é%", "E%", "a %", "a\t%", "\\%%", "\\_%", "%b", "_", "ss%"],
)
def test_like_prefix_named_cases(side, pattern):
    """Patterns whose prefix ends where a case-, accent- or PAD SPACE-insensitive range is
    easy to get wrong: the rows MariaDB matches, read cold and then warm after writes."""
    words = ["b", "B", "bob", "Bob ", "bo", "bob\t", "bé", "É", "e", "ea", "a", "a ", "a \t",
             "a\t", "a\tz", "%", "\\", "_", "ß", "ss", "SS", "sß", "z"]  # fmt: skip
    rows = [(i, i % 2, w) for i, w in enumerate(words)]
    conn = side.engine(memory_limit="1KB")
    try:
        steps = [
            (("SELECT id FROM t WHERE s LIKE ?", (pattern,), "ids"), [("ins", 40, 0, "bob2")]),
            (("SELECT id FROM t WHERE a = ? AND s LIKE ?", (1, pattern), "ids"), [("del", 3)]),
            (("SELECT id FROM t WHERE s LIKE ?", (pattern,), "ids"), [("upd", 5, "BOB")]),
            (("SELECT id FROM t WHERE s LIKE ?", (pattern,), "ids"), []),
        ]
        run_steps(side, conn, rows, steps)
        assert_cached(conn)
    finally:
        side.close()


def test_string_range_reads_are_cached(side):
    conn = side.engine()
    try:
        conn.executemany(
            "INSERT INTO t VALUES (?, ?, ?)", [(1, 0, "bob"), (2, 0, "Bob "), (3, 1, "alice")]
        )
        for sql, kinds, _how in QUERIES + LIKE_QUERIES:
            conn.execute(sql, tuple(0 if k == "a" else "b%" if k == "p" else "b" for k in kinds))
            plan = conn.execute("EXPLAIN " + sql).fetchall()
            assert any(r[1] == "reader" and " range " in r[2] for r in plan), plan
            assert all(r[1] != "proxied" for r in plan), plan
            if "LIKE" in sql:  # the pattern is applied per read to the range's rows
                assert any(r[1] == "post-lookup" and "s LIKE ?" in r[2] for r in plan), plan
        assert_cached(conn)
    finally:
        side.close()


def test_a_number_against_the_string_column_compares_as_numbers(side):
    """A number bound to ``s >= ?`` or ``s LIKE ?`` is read as MySQL reads it (the range as
    numbers, the pattern as the number's text): the statement runs with the value written in."""
    rows = [(1, 0, "1x"), (2, 0, "10"), (3, 0, "x"), (4, 1, "2"), (5, 1, " 3")]
    conn = side.engine()
    try:
        steps = [
            (("SELECT id FROM t WHERE s >= ?", (2,), "ids"), []),
            (("SELECT id FROM t WHERE s < ?", (1.5,), "ids"), []),
            (("SELECT id FROM t WHERE s LIKE ?", (10,), "ids"), []),
            (("SELECT id FROM t WHERE s LIKE ?", ("1%",), "ids"), []),
        ]
        run_steps(side, conn, rows, steps)
    finally:
        side.close()

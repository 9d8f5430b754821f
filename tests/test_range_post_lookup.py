"""Range parameters under an aggregate, DISTINCT, HAVING or ORDER BY ... LIMIT: the dataflow keeps
a range reader over the rows beneath the aggregate, and each read applies the aggregate and what
follows it to the rows of its range (``noria_py/dataflow/post_lookup.py``).

The answers are compared with three references: the same statements on an engine that runs every
query on base storage (``dataflow=False``: the proxied path, MySQL's functions and aggregates
registered in SQLite), a computation in Python of the aggregates, and MariaDB.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.dataflow.ops.reader import RangeReader, RangeRows

SCHEMA = (
    "CREATE TABLE items (id INT PRIMARY KEY, cat VARCHAR(10), shop INT, price DECIMAL(8,2),"
    " qty INT, w DOUBLE)"
)
SCHEMA_S = "CREATE TABLE shops (sid INT PRIMARY KEY, region INT)"

# (query, parameter kinds, ordered?): p a price bound, s a shop, q a qty bound, n a LIMIT
QUERIES = [
    ("SELECT cat, COUNT(*) FROM items WHERE price >= ? GROUP BY cat", "p", False),
    ("SELECT DISTINCT cat FROM items WHERE price BETWEEN ? AND ?", "pp", False),
    (
        "SELECT cat, SUM(qty), MAX(price) FROM items WHERE shop = ? AND price < ? GROUP BY cat"
        " ORDER BY cat LIMIT 5",
        "sp",
        True,
    ),
    (
        "SELECT COUNT(*), COUNT(cat), SUM(price), AVG(price), MIN(qty), MAX(qty), SUM(w)"
        " FROM items WHERE price > ?",
        "p",
        True,
    ),
    (
        "SELECT cat, AVG(qty) AS a, COUNT(DISTINCT shop) FROM items WHERE shop IN (?, ?)"
        " AND qty >= ? GROUP BY cat HAVING COUNT(*) > 1 ORDER BY a DESC, cat",
        "ssq",
        True,
    ),
    (
        "SELECT shop, GROUP_CONCAT(id ORDER BY id) FROM items WHERE qty BETWEEN ? AND ?"
        " GROUP BY shop ORDER BY shop",
        "qq",
        True,
    ),
    (
        "SELECT DISTINCT shop, cat FROM items WHERE shop = ? AND price <= ? ORDER BY cat, shop"
        " LIMIT ?",
        "spn",
        True,
    ),
    (
        "SELECT s.region, COUNT(*), SUM(i.qty) FROM items i JOIN shops s ON i.shop = s.sid"
        " WHERE i.price < ? GROUP BY s.region ORDER BY s.region",
        "p",
        True,
    ),
    ("SELECT SUM(qty) * 2, MAX(price) - MIN(price) FROM items WHERE qty < ?", "q", True),
]

PRICES = [
    None,
    Decimal("-1.50"),
    Decimal("0.00"),
    Decimal("1.25"),
    Decimal("2.00"),
    Decimal("7.10"),
]
VALUES = {
    "p": st.one_of(st.none(), st.sampled_from([-2, 0, 1, 2, 3, 8]), st.sampled_from(PRICES[1:])),
    "s": st.one_of(st.none(), st.integers(0, 3)),
    "q": st.one_of(st.none(), st.integers(-1, 10)),
    "n": st.integers(0, 4),
}
rows = st.tuples(
    st.integers(0, 20),
    st.sampled_from([None, "a", "b", "c"]),
    st.one_of(st.none(), st.integers(0, 3)),
    st.sampled_from(PRICES),
    st.one_of(st.none(), st.integers(0, 9)),
    st.sampled_from([None, 0.1, 0.2, 1e300, -1e300, 2.5]),
)
write = st.one_of(
    st.tuples(st.just("ins"), rows),
    st.tuples(st.just("del"), st.integers(0, 20)),
    st.tuples(st.just("price"), st.integers(0, 20), st.sampled_from(PRICES)),
    st.tuples(st.just("qty"), st.integers(0, 20), VALUES["q"]),
    st.tuples(st.just("cat"), st.integers(0, 20), st.sampled_from([None, "a", "b", "c"])),
    st.tuples(st.just("shop"), st.integers(0, 3), st.integers(0, 2)),
)

WRITES = {
    "ins": "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)",
    "del": "DELETE FROM items WHERE id = ?",
    "price": "UPDATE items SET price = ? WHERE id = ?",
    "qty": "UPDATE items SET qty = ? WHERE id = ?",
    "cat": "UPDATE items SET cat = ? WHERE id = ?",
    "shop": "UPDATE shops SET region = ? WHERE sid = ?",
}


def apply_write(db, w) -> None:
    kind = w[0]
    args = w[1] if kind == "ins" else (w[1],) if kind == "del" else (w[2], w[1])
    try:
        db.execute(WRITES[kind], args)
    except noria_py.IntegrityError:
        pass  # a duplicate id: both engines refuse it


MODES = {
    "partial": ({}, RangeReader.FILL_SLACK, RangeRows.LOAD),
    "evicting": ({"memory_limit": "1KB"}, 0, 2),
    "full": ({"partial": False}, 0, 2),
    "threads": ({"domains": "threads", "read_your_writes": True}, 0, 3),
}


def setup(db, initial) -> None:
    db.execute(SCHEMA)
    db.execute(SCHEMA_S)
    db.executemany("INSERT INTO shops VALUES (?, ?)", [(s, s % 2) for s in range(4)])
    db.executemany(
        "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)", list({r[0]: r for r in initial}.values())
    )


def answer(db, q: str, params, ordered: bool) -> list:
    got = [tuple(r) for r in db.execute(q, params).fetchall()]
    return got if ordered else sorted(got, key=repr)


@st.composite
def scenario(draw):
    focus = draw(st.lists(st.integers(0, len(QUERIES) - 1), min_size=1, max_size=3, unique=True))
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        reads = []
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.sampled_from(focus))
            reads.append((i, tuple(draw(VALUES[k]) for k in QUERIES[i][1])))
        steps.append((reads, draw(st.lists(write, max_size=4))))
    return steps


@pytest.mark.parametrize("mode", list(MODES))
@settings(max_examples=25)
@given(initial=st.lists(rows, max_size=12), steps=scenario())
def test_range_aggregates_match_the_proxied_answer(mode, initial, steps):
    """Reads with writes between them: the cached answer is the answer base storage gives."""
    options, slack, load = MODES[mode]
    defaults = RangeReader.FILL_SLACK, RangeRows.LOAD
    RangeReader.FILL_SLACK, RangeRows.LOAD = slack, load
    conn = noria_py.connect(**options)
    ref = noria_py.connect(dataflow=False)
    try:
        for db in (conn, ref):
            setup(db, initial)
        for reads, writes in steps:
            for i, params in reads:
                q, _kinds, ordered = QUERIES[i]
                want = answer(ref, q, params, ordered)
                assert answer(conn, q, params, ordered) == want, (q, params)
            for w in writes:
                for db in (conn, ref):
                    apply_write(db, w)
        statuses = {r[1]: r[2] for r in conn.execute("SHOW CACHES")}
        assert set(statuses.values()) == {"cached"}, statuses
    finally:
        RangeReader.FILL_SLACK, RangeRows.LOAD = defaults
        conn.close()
        ref.close()


def test_range_aggregates_are_cached_not_proxied():
    conn = noria_py.connect()
    conn.execute(SCHEMA)
    conn.execute(SCHEMA_S)
    for q, kinds, _ordered in QUERIES:
        plan = conn.execute("EXPLAIN " + q).fetchall()
        kinds_ = [r[1] for r in plan]
        assert "proxied" not in kinds_, (q, plan)
        assert "reader" in kinds_ and "post-lookup" in kinds_, (q, plan)
        conn.execute(q, tuple(1 for _ in kinds)).fetchall()
    statuses = {r[1]: r[2] for r in conn.execute("SHOW CACHES")}
    assert set(statuses.values()) == {"cached"}, statuses
    # the reader keeps the rows beneath the aggregate; the aggregate runs per read
    plan = conn.execute("EXPLAIN " + QUERIES[0][0]).fetchall()
    assert [r[1] for r in plan] == ["base", "project", "reader", "post-lookup", "post-lookup"]
    assert "range price" in plan[2][2] and "COUNT(*)" in plan[3][2]


def python_answer(table: dict, shop, hi) -> list:
    """``SELECT cat, SUM(qty), MAX(price), COUNT(*) ... WHERE shop = ? AND price < ? GROUP BY
    cat ORDER BY cat`` computed in Python (NULL groups first, as MySQL orders them)."""
    groups: dict = defaultdict(list)
    for _id, cat, s, price, qty in table.values():
        if s == shop and price is not None and price < hi:
            groups[cat].append((qty, price))
    out = []
    for cat in sorted(groups, key=lambda c: (c is not None, c or "")):
        qs = [q for q, _p in groups[cat] if q is not None]
        out.append(
            (
                cat,
                Decimal(sum(qs)) if qs else None,
                max(p for _q, p in groups[cat]),
                len(groups[cat]),
            )
        )
    return out


def test_writes_inside_and_outside_held_ranges():
    """Inserts, updates and deletes inside a held range, outside it, and moving rows across its
    bound, each followed by reads of held and new ranges, against a Python computation."""
    conn = noria_py.connect()
    conn.execute(SCHEMA)
    q = (
        "SELECT cat, SUM(qty), MAX(price), COUNT(*) FROM items WHERE shop = ? AND price < ?"
        " GROUP BY cat ORDER BY cat"
    )
    table: dict = {}

    def put(*row):
        conn.execute("REPLACE INTO items VALUES (?, ?, ?, ?, ?, NULL)", row)
        table[row[0]] = row

    def check():
        for shop in (1, 2):
            for hi in (Decimal("5"), Decimal("10"), Decimal("100")):
                assert conn.execute(q, (shop, hi)).fetchall() == python_answer(table, shop, hi)

    for i in range(10):
        put(i, "ab"[i % 2], 1 + i % 2, Decimal(i), i)
    assert conn.execute(q, (1, 5)).fetchall() == python_answer(table, 1, Decimal(5))
    (entry,) = conn.engine.queries.values()
    reader = entry.compiled.reader
    check()
    ups = reader.upqueries
    put(20, "a", 1, Decimal("3.5"), 100)  # inside every held range of shop 1
    put(21, "c", 1, Decimal("50"), 7)  # outside [.., 5) and [.., 10), inside [.., 100)
    put(22, "c", 3, Decimal("1"), 7)  # a key no read holds
    check()
    conn.execute("UPDATE items SET price = 12 WHERE id = 2")  # out of [.., 10) of shop 1
    table[2] = (2, "a", 1, Decimal(12), 2)
    conn.execute("UPDATE items SET price = 1 WHERE id = 21")  # into every range
    table[21] = (21, "c", 1, Decimal(1), 7)
    conn.execute("UPDATE items SET qty = NULL WHERE id = 4")
    table[4] = (4, "a", 1, Decimal(4), None)
    conn.execute("DELETE FROM items WHERE id IN (0, 9)")
    del table[0], table[9]
    check()
    assert reader.upqueries == ups  # the held ranges took the writes: no new fills
    conn.execute("DELETE FROM items")
    table.clear()
    check()
    assert conn.execute(q, (1, 5)).fetchall() == []
    implicit = "SELECT COUNT(*), SUM(qty), MAX(price) FROM items WHERE price >= ?"
    assert conn.execute(implicit, (0,)).fetchall() == [(0, None, None)]
    put(1, "a", 1, Decimal(2), 5)
    assert conn.execute(implicit, (0,)).fetchall() == [(1, Decimal(5), Decimal("2.00"))]
    assert conn.execute(implicit, (3,)).fetchall() == [(0, None, None)]
    assert conn.execute(implicit, (None,)).fetchall() == [(0, None, None)]


def test_collation_groups_as_without_a_range():
    """Groups and DISTINCT values of a case-insensitive column are one under the collation and
    shown as the query without a range parameter shows them."""
    conn = noria_py.connect()
    conn.execute(SCHEMA)
    data = [(1, "b", 1), (2, "B", 1), (3, "a", 1), (4, "A", 1), (5, "b", 1), (6, None, 1)]
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, ?, ?, 1, NULL)", [(i, c, s, i) for i, c, s in data]
    )
    plain = "SELECT cat, COUNT(*) FROM items WHERE shop = ? GROUP BY cat ORDER BY cat"
    ranged = (
        "SELECT cat, COUNT(*) FROM items WHERE shop = ? AND price > ? GROUP BY cat ORDER BY cat"
    )
    want = conn.execute(plain, (1,)).fetchall()
    assert len(want) == 3
    assert conn.execute(ranged, (1, -1)).fetchall() == want
    plain_d = "SELECT DISTINCT cat FROM items WHERE shop = ? ORDER BY cat"
    ranged_d = "SELECT DISTINCT cat FROM items WHERE shop = ? AND price > ? ORDER BY cat"
    assert conn.execute(ranged_d, (1, -1)).fetchall() == conn.execute(plain_d, (1,)).fetchall()
    conn.execute("DELETE FROM items WHERE id = 2")
    assert conn.execute(ranged, (1, -1)).fetchall() == conn.execute(plain, (1,)).fetchall()


def test_matches_mariadb(mariadb_oracle):
    """Every query of ``QUERIES`` on data with DECIMAL, DOUBLE and NULL values, read over several
    ranges, against MariaDB."""
    import random

    rnd = random.Random(7)
    data = {}
    for i in range(40):
        data[i] = (
            i,
            rnd.choice([None, "a", "b", "c"]),
            rnd.choice([None, 0, 1, 2, 3]),
            rnd.choice(PRICES),
            rnd.choice([None, *range(10)]),
            # sums exact in binary: MariaDB adds doubles in row order, the engine exactly
            rnd.choice([None, 0.5, 0.25, 2.5, 1e10]),
        )
    conn = noria_py.connect()
    setup(conn, list(data.values()))
    my = mariadb_oracle.conn
    with my.cursor() as cur:
        for t in ("rp_items", "rp_shops"):
            cur.execute(f"DROP TABLE IF EXISTS {t}")
        cur.execute(SCHEMA.replace("items", "rp_items"))
        cur.execute(SCHEMA_S.replace("shops", "rp_shops"))
        cur.executemany("INSERT INTO rp_shops VALUES (%s, %s)", [(s, s % 2) for s in range(4)])
        cur.executemany("INSERT INTO rp_items VALUES (%s, %s, %s, %s, %s, %s)", list(data.values()))
        try:
            for q, kinds, ordered in QUERIES:
                mq = q.replace("items", "rp_items").replace("shops", "rp_shops").replace("?", "%s")
                for _ in range(6):
                    params = tuple(
                        {
                            "p": rnd.choice([-2, 0, 1, 2, 8]),
                            "s": rnd.randint(0, 3),
                            "q": rnd.randint(-1, 10),
                            "n": rnd.randint(0, 4),
                        }[k]
                        for k in kinds
                    )
                    cur.execute(mq, params)
                    want = [tuple(r) for r in cur.fetchall()]
                    got = [tuple(r) for r in conn.execute(q, params).fetchall()]
                    if not ordered:
                        want, got = sorted(want, key=repr), sorted(got, key=repr)
                    assert got == want, (q, params)
        finally:
            cur.execute("DROP TABLE rp_items")
            cur.execute("DROP TABLE rp_shops")

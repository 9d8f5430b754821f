"""LIMIT and OFFSET without ORDER BY over one table, compared with MariaDB row for row.

SQL leaves the order open, but MySQL reads one table in its primary key's order (InnoDB's
clustered index; an equality on a secondary index reads that key's rows in primary key order
too; a whole-table scan a secondary index covers reads that index), and applications page
through tables that way. A view keeps equal rows together and puts a
changed row last, so ``SELECT s * k FROM t LIMIT 2`` kept two equal rows where MySQL keeps the
first two.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

SCHEMA = "CREATE TABLE lw (id INT PRIMARY KEY, g INT, v INT, KEY (g))"
ITEMS = ["v", "v * 2", "g", "id, v", "*", "v + g", "g, id"]
WHERES = [
    "",
    " WHERE g = ?",
    " WHERE v = ?",
    " WHERE g = ? AND v <> ?",
    " WHERE v > 1",
    " WHERE v > ?",
    " WHERE id > ?",
    " WHERE id IN (?, ?)",
]
# where MySQL's optimizer may pick either index for columns KEY (g) covers: left out
COVERED = {"g", "g, id"}
COVERED_WHERES = {"", " WHERE g = ?"}
LIMITS = [" LIMIT 1", " LIMIT 2", " LIMIT 3", " LIMIT 1, 2", " LIMIT 2 OFFSET 1", " LIMIT ?"]


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("limit_order")
    yield conn
    conn.close()


def _load(oracle, rows):
    ours = noria_py.connect()
    ours.execute(SCHEMA)
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS lw")
        cur.execute(SCHEMA)
        if rows:
            cur.executemany("INSERT INTO lw VALUES (%s, %s, %s)", rows)
    if rows:
        ours.executemany("INSERT INTO lw VALUES (?, ?, ?)", rows)
    return ours


def _compare(oracle, ours, sql, params):
    with oracle.cursor() as cur:
        cur.execute(sql.replace("?", "%s"), params)
        want = [tuple(r) for r in cur.fetchall()]
    got = [tuple(r) for r in ours.execute(sql, params).fetchall()]
    assert got == want, f"{sql} {params}"


def test_named_cases(oracle):
    rows = [(5, 1, 8), (1, 2, 8), (3, 1, 4), (2, 1, 8), (4, 2, 4), (6, 1, 8)]
    ours = _load(oracle, rows)
    for sql, params in [
        ("SELECT v FROM lw LIMIT 3", ()),
        ("SELECT v * 2 FROM lw LIMIT 2, 3", ()),
        ("SELECT g FROM lw WHERE g = ? LIMIT 2", (1,)),
        ("SELECT v FROM lw WHERE v > ? LIMIT ?", (5, 2)),
        ("SELECT x.v FROM lw AS x WHERE x.id > ? LIMIT 2", (1,)),
        ("SELECT * FROM lw LIMIT 4", ()),
        ("SELECT g FROM lw LIMIT 4", ()),  # KEY (g) covers it: MySQL reads that index
        ("SELECT id, g FROM lw LIMIT 1, 3", ()),
        ("SELECT v FROM lw LIMIT 9", ()),
        ("SELECT v FROM lw WHERE id = g + 3 OR id = v LIMIT 3", ()),  # no key pinned
        ("SELECT v FROM lw WHERE v = g * 4 LIMIT 3", ()),
        ("SELECT v FROM lw WHERE g = ? LIMIT 9", (1,)),
        ("SELECT * FROM lw WHERE id IN (?, ?, ?) LIMIT 5", (6, 1, 3)),
    ]:
        _compare(oracle, ours, sql, params)
    # the order follows writes: an updated row stays in its key's place
    for stmt in ["UPDATE lw SET v = 9 WHERE id = 1", "DELETE FROM lw WHERE id = 2"]:
        with oracle.cursor() as cur:
            cur.execute(stmt)
        ours.execute(stmt)
        _compare(oracle, ours, "SELECT v FROM lw LIMIT 3", ())
        _compare(oracle, ours, "SELECT v FROM lw WHERE g = ? LIMIT 2", (1,))
        _compare(oracle, ours, "SELECT id, v FROM lw WHERE g = ? LIMIT 5", (1,))
        _compare(oracle, ours, "SELECT v FROM lw LIMIT 1, 9", ())
        _compare(oracle, ours, "SELECT * FROM lw WHERE id IN (?, ?, ?) LIMIT 2", (6, 3, 5))
    ours.close()


def _read_sql(item, where, limit):
    if item in COVERED and where not in COVERED_WHERES:
        return None
    return f"SELECT {item} FROM lw{where}{limit}"


ROWS = st.lists(
    st.tuples(st.integers(1, 40), st.integers(0, 2), st.integers(0, 3)),
    max_size=12,
    unique_by=lambda r: r[0],
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=ROWS,
    writes=st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "UPDATE lw SET v = ? WHERE id = ?",
                    "DELETE FROM lw WHERE id = ?",
                    "INSERT INTO lw VALUES (?, 1, 2)",
                ]
            ),
            st.integers(1, 40),
        ),
        max_size=3,
    ),
    reads=st.lists(
        st.tuples(
            st.sampled_from(ITEMS),
            st.sampled_from(WHERES),
            st.sampled_from(LIMITS),
            st.lists(st.integers(0, 3), min_size=3, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_drawn_limits_keep_mysqls_rows(oracle, rows, writes, reads):
    ours = _load(oracle, rows)
    for read in reads[:1]:  # views installed before the writes
        sql = _read_sql(*read[:3])
        if sql is not None:
            _compare(oracle, ours, sql, tuple(read[3][: sql.count("?")]))
    for stmt, n in writes:
        params = (3, n) if stmt.count("?") == 2 else (n,)
        with oracle.cursor() as cur:
            try:
                cur.execute(stmt.replace("?", "%s"), params)
            except Exception:  # noqa: BLE001 - a duplicate key: both refuse it
                with pytest.raises(noria_py.IntegrityError):
                    ours.execute(stmt, params)
                continue
        ours.execute(stmt, params)
    for read in reads:
        sql = _read_sql(*read[:3])
        if sql is not None:
            _compare(oracle, ours, sql, tuple(read[3][: sql.count("?")]))
    ours.close()

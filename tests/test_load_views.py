"""Loads into a table that views read (``Engine.bulk_load``), compared with MariaDB.

A large load (at least ``LOG_ROWS_LIMIT`` rows and a quarter of the table) takes the queries
over the table out of the dataflow, stores the rows in one write and installs the views again
from base storage; a smaller one, or one inside a transaction, sends every batch through the
dataflow. Either way every cached answer afterwards must be MariaDB's for the same rows: a
grouped view with DECIMAL sums and averages, a partial lookup read before the load, and a join
over the loaded table. A full aggregate's DECIMAL sums are computed by SQLite in integer units
(``sqlrel.grouped``); their exactness is checked here against MariaDB too."""

from __future__ import annotations

import os
import random
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.engine import LOG_ROWS_LIMIT
from noria_py.errors import IntegrityError

DDL = (
    "CREATE TABLE lv_items (id INT PRIMARY KEY, grp INT, name VARCHAR(30),"
    " price DECIMAL(10,2), big DECIMAL(30,4))"
)
CATS = "CREATE TABLE lv_cats (id INT PRIMARY KEY, label VARCHAR(10))"
VIEW = (
    "CREATE VIEW lv_by_grp AS SELECT grp, COUNT(*) AS n, COUNT(price) AS np, SUM(price) AS total,"
    " AVG(price) AS mean, SUM(big) AS bigsum FROM lv_items GROUP BY grp"
)
BY_GRP = "SELECT * FROM lv_by_grp WHERE grp = %s"
BY_ID = "SELECT name, price FROM lv_items WHERE id = %s"
JOINED = (
    "SELECT c.label, COUNT(i.id), SUM(i.price) FROM lv_cats c LEFT JOIN lv_items i"
    " ON i.grp = c.id WHERE c.id = %s GROUP BY c.id, c.label"
)
GROUPS = range(0, 13)
LOAD_ROWS = LOG_ROWS_LIMIT + 200


def item_rows(first: int, count: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    rows = []
    for i in range(first, first + count):
        price = None if rng.random() < 0.05 else Decimal(rng.randrange(-99999999, 99999999)) / 100
        big = None if rng.random() < 0.05 else Decimal(rng.randrange(-(10**25), 10**25)) / 10**4
        name = rng.choice(['a "q"', "b,c", "日本", "", None, "x\ny"])
        rows.append((i, rng.randrange(0, 12), name, price, big))
    return rows


def csv_of(rows) -> str:
    def field(v):
        if v is None:
            return "NULL"
        if isinstance(v, str):
            return '"' + v.replace('"', '""') + '"'
        return format(v, "f") if isinstance(v, Decimal) else str(v)

    lines = ["id,grp,name,price,big"] + [",".join(field(v) for v in r) for r in rows]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    yield conn
    conn.close()


def oracle_answers(oracle, before: list[tuple], csv_path: str | None) -> dict:
    """Every query's answer from MariaDB after ``before`` and, when given, the CSV file."""
    with oracle.cursor() as cur:
        for t in ("lv_by_grp",):
            cur.execute(f"DROP VIEW IF EXISTS {t}")
        cur.execute("DROP TABLE IF EXISTS lv_items, lv_cats")
        cur.execute(DDL)
        cur.execute(CATS)
        cur.execute(VIEW)
        cur.executemany("INSERT INTO lv_cats VALUES (%s, %s)", [(g, f"c{g}") for g in GROUPS])
        cur.executemany("INSERT INTO lv_items VALUES (%s, %s, %s, %s, %s)", before)
        if csv_path is not None:
            cur.execute(
                f"LOAD DATA INFILE '{csv_path}' INTO TABLE lv_items FIELDS TERMINATED BY ','"
                " OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES TERMINATED BY '\\n'"
                " IGNORE 1 LINES"
            )
        return answers(cur.execute, cur.fetchall)


def answers(execute, fetchall, ids=range(1, 40)) -> dict:
    out = {}
    for g in GROUPS:
        execute(BY_GRP, (g,))
        out["grp", g] = [tuple(r) for r in fetchall()]
        execute(JOINED, (g,))
        out["join", g] = [tuple(r) for r in fetchall()]
    for i in ids:
        execute(BY_ID, (i,))
        out["id", i] = [tuple(r) for r in fetchall()]
    return out


def engine_answers(conn) -> dict:
    cur = conn.cursor()
    return answers(lambda sql, p: cur.execute(sql.replace("%s", "?"), p), cur.fetchall)


def setup_engine(path: str, before: list[tuple]):
    conn = noria_py.connect(path)
    conn.execute(DDL)
    conn.execute(CATS)
    conn.execute(VIEW)
    conn.executemany("INSERT INTO lv_cats VALUES (?, ?)", [(g, f"c{g}") for g in GROUPS])
    conn.executemany("INSERT INTO lv_items VALUES (?, ?, ?, ?, ?)", before)
    engine_answers(conn)  # every query cached, partial keys filled before the load
    return conn


@pytest.fixture
def shared_dir(tmp_path):
    os.chmod(tmp_path, 0o755)  # the oracle's server reads the CSV file
    return tmp_path


@pytest.mark.parametrize("seed", [1, 2])
def test_a_large_load_rebuilds_the_views_once_and_they_answer_as_mariadb(oracle, shared_dir, seed):
    before = item_rows(1, 1000, seed)
    loaded = item_rows(20, 0, seed) + item_rows(1001, LOAD_ROWS, seed + 10)
    path = shared_dir / "items.csv"
    path.write_text(csv_of(loaded), encoding="utf-8", newline="")
    os.chmod(path, 0o644)
    conn = setup_engine(str(shared_dir / "noria.db"), before)
    engine = conn._engine
    writes = engine.write_count
    assert conn.backfill("lv_items", str(path), progress=False, batch_rows=500) == LOAD_ROWS
    # the rows went to base storage in one write, not one delta per batch
    assert engine.write_count == writes + 1
    want = oracle_answers(oracle, before, str(path))
    assert engine_answers(conn) == want
    # and the views keep up with writes after the rebuild
    conn.execute("INSERT INTO lv_items VALUES (999999, 3, 'z', 1.25, NULL)")
    conn.execute("DELETE FROM lv_items WHERE id = 1001")
    with oracle.cursor() as cur:
        cur.execute("INSERT INTO lv_items VALUES (999999, 3, 'z', 1.25, NULL)")
        cur.execute("DELETE FROM lv_items WHERE id = 1001")
        want = answers(cur.execute, cur.fetchall, ids=[1001, 999999])
    cur = conn.cursor()
    assert (
        answers(
            lambda sql, p: cur.execute(sql.replace("%s", "?"), p), cur.fetchall, ids=[1001, 999999]
        )
        == want
    )
    conn.close()


def test_a_load_in_a_transaction_stays_the_transactions_until_rollback(oracle, shared_dir):
    before = item_rows(1, 1000, 5)
    loaded = item_rows(1001, LOAD_ROWS, 6)
    path = shared_dir / "items.csv"
    path.write_text(csv_of(loaded), encoding="utf-8", newline="")
    os.chmod(path, 0o644)
    conn = setup_engine(str(shared_dir / "noria.db"), before)
    untouched = engine_answers(conn)
    conn.begin()
    conn.backfill("lv_items", str(path), progress=False, batch_rows=2000)
    # the connection reads its own load through the views
    assert engine_answers(conn) == oracle_answers(oracle, before, str(path))
    conn.rollback()
    assert engine_answers(conn) == untouched == oracle_answers(oracle, before, None)
    conn.close()


def test_a_failed_large_load_leaves_the_views_as_the_table_is(shared_dir):
    before = item_rows(1, 1000, 8)
    # the last row repeats a key the table holds: the load's one write fails whole
    loaded = item_rows(1001, LOAD_ROWS, 9) + [(500, 1, "dup", Decimal("1.00"), None)]
    path = shared_dir / "items.csv"
    path.write_text(csv_of(loaded), encoding="utf-8", newline="")
    conn = setup_engine(str(shared_dir / "noria.db"), before)
    untouched = engine_answers(conn)
    with pytest.raises(IntegrityError, match="Duplicate entry '500'"):
        conn.backfill("lv_items", str(path), progress=False)
    assert conn.execute("SELECT COUNT(*) FROM lv_items").fetchall() == [(1000,)]
    assert engine_answers(conn) == untouched
    conn.close()


def test_a_small_load_into_a_large_table_keeps_the_views_and_their_state(shared_dir):
    before = item_rows(1, 4 * LOAD_ROWS + 1000, 3)
    loaded = item_rows(len(before) + 1, LOAD_ROWS, 4)
    path = shared_dir / "items.csv"
    path.write_text(csv_of(loaded), encoding="utf-8", newline="")
    conn = setup_engine(str(shared_dir / "noria.db"), before)
    engine = conn._engine
    readers = {name: e for name, e in engine.queries.items() if e.compiled is not None}
    conn.backfill("lv_items", str(path), progress=False, batch_rows=2500)
    # deltas, batch by batch: the same queries, still installed
    assert {n: e for n, e in engine.queries.items() if n in readers} == readers
    cur = conn.cursor()
    got = answers(lambda sql, p: cur.execute(sql.replace("%s", "?"), p), cur.fetchall)
    fresh = noria_py.connect(str(shared_dir / "noria.db"))
    assert got == engine_answers(fresh)
    fresh.close()
    conn.close()


DECIMALS = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.none() | st.decimals(min_value=-(10**10) + 1, max_value=10**10 - 1, places=5),
        st.none() | st.decimals(min_value=-(10**14) + 1, max_value=10**14 - 1, places=2),
    ),
    max_size=30,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=DECIMALS)
@example(
    rows=[
        (0, Decimal("9999999999.99999"), Decimal("99999999999999.99")),
        (0, Decimal("-0.00001"), Decimal("12345678901234.57")),
        (1, Decimal("9999999999.99997"), Decimal("-99999999999999.97")),
        (1, Decimal("1234567890.12345"), Decimal("0.01")),
    ]
)
def test_decimal_sums_from_one_grouped_query_are_mariadbs(oracle, rows):
    """DECIMAL(15,5) (the widest summed by SQLite in integer units) and DECIMAL(16,2) (summed
    row by row): a full view built from base storage, a partial one filled by a grouped query,
    and both after a write."""
    ddl = "CREATE TABLE lv_d (id INT PRIMARY KEY, g INT, a DECIMAL(15,5), b DECIMAL(16,2))"
    full = "SELECT g, SUM(a), AVG(a), SUM(b), AVG(b), COUNT(a) FROM lv_d GROUP BY g ORDER BY g"
    part = "SELECT g, SUM(a), AVG(a), SUM(b), AVG(b) FROM lv_d WHERE g = %s GROUP BY g"
    data = [(i, g, a, b) for i, (g, a, b) in enumerate(rows)]
    extra = (10_000, 1, Decimal("-0.00001"), Decimal("99999999999999.99"))
    conn = noria_py.connect()
    conn.execute(ddl)
    conn.executemany("INSERT INTO lv_d VALUES (?, ?, ?, ?)", data)
    conn.execute("CREATE VIEW lv_dv AS " + full.replace(" ORDER BY g", ""))
    got = [conn.execute("SELECT * FROM lv_dv ORDER BY g").fetchall()]
    got.append([conn.execute(part.replace("%s", "?"), (g,)).fetchall() for g in range(4)])
    conn.execute("INSERT INTO lv_d VALUES (?, ?, ?, ?)", extra)
    got.append(conn.execute("SELECT * FROM lv_dv ORDER BY g").fetchall())
    got.append([conn.execute(part.replace("%s", "?"), (g,)).fetchall() for g in range(4)])
    conn.close()
    want = []
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS lv_d")
        cur.execute(ddl)
        cur.executemany("INSERT INTO lv_d VALUES (%s, %s, %s, %s)", data)
        for step in range(2):
            if step:
                cur.execute("INSERT INTO lv_d VALUES (%s, %s, %s, %s)", extra)
            cur.execute(full)
            want.append([tuple(r) for r in cur.fetchall()])
            per = []
            for g in range(4):
                cur.execute(part, (g,))
                per.append([tuple(r) for r in cur.fetchall()])
            want.append(per)
    assert got == want

"""Strings compare under MariaDB's default collation (utf8mb4_general_ci) on every path.

Hypothesis writes rows whose strings differ in case, accents and trailing spaces, then compares
lookups, filters, GROUP BY, DISTINCT, ORDER BY, MIN/MAX, COUNT(DISTINCT), joins, LIKE and IN
between the dataflow (cached, partial state), base storage (``dataflow=False``) and MariaDB.
Where MySQL may show any spelling of a group (GROUP BY, DISTINCT, MIN of equal strings), the
comparison is by collation key, and the spelling shown must be one a row of the group has.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.sql.collation import get

GENERAL = get("utf8mb4_general_ci")

SCHEMA = "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(20), city VARCHAR(20), n INT)"
SCHEMA2 = "CREATE TABLE cities (city VARCHAR(20) PRIMARY KEY, country VARCHAR(20))"

NAMES = ["bob", "Bob", "BOB", "bob ", "élodie", "Elodie", "ELODIE ", "zoë", "Zoe", "ann", "Ann"]
CITIES = ["paris", "Paris", "PARIS ", "lyon", "Lyon", "nice", "Nîmes", "nimes"]

rows_st = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from(CITIES), st.integers(0, 5)),
    min_size=1,
    max_size=25,
)

QUERIES = [
    ("SELECT id FROM people WHERE name = ?", "param"),
    ("SELECT id, name FROM people WHERE city = ?", "param"),
    ("SELECT city, COUNT(*), SUM(n) FROM people GROUP BY city", "groups"),
    ("SELECT DISTINCT city FROM people", "groups"),
    ("SELECT COUNT(DISTINCT name) FROM people", "exact"),
    ("SELECT MIN(name), MAX(name) FROM people", "keys"),
    ("SELECT id FROM people WHERE name LIKE 'e%'", "exact"),
    ("SELECT id FROM people WHERE name IN ('BOB', 'zoe')", "exact"),
    ("SELECT id FROM people WHERE city > 'M'", "exact"),
    ("SELECT p.id, c.country FROM people p JOIN cities c ON c.city = p.city WHERE p.id = ?", "id"),
    ("SELECT name, id FROM people ORDER BY name, id LIMIT 5", "ordered"),
    ("SELECT city, COUNT(*) FROM people WHERE name = ? GROUP BY city", "param-groups"),
]


def _key(v):
    return GENERAL.key(v) if isinstance(v, str) else v


def _norm_rows(rows):
    return Counter(tuple(_key(v) for v in r) for r in rows)


@pytest.fixture(scope="module")
def setup(mariadb_oracle):
    yield mariadb_oracle


def _load(oracle, rows):
    oracle.query("DROP TABLE IF EXISTS people")
    oracle.query("DROP TABLE IF EXISTS cities")
    oracle.query(SCHEMA)
    oracle.query(SCHEMA2)
    data = [(i + 1, nm, ct, n) for i, (nm, ct, n) in enumerate(rows)]
    cities = {}
    for _, _, ct, _ in data:
        cities.setdefault(GENERAL.key(ct), ct)
    cdata = [(ct, f"country-{GENERAL.key(ct).strip()}"[:20]) for ct in cities.values()]
    with oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO people VALUES (%s, %s, %s, %s)", data)
        cur.executemany("INSERT INTO cities VALUES (%s, %s)", cdata)
    engines = []
    for opts in ({}, {"dataflow": False}):
        c = noria_py.connect(**opts)
        c.execute(SCHEMA)
        c.execute(SCHEMA2)
        c.executemany("INSERT INTO people VALUES (?, ?, ?, ?)", data)
        c.executemany("INSERT INTO cities VALUES (?, ?)", cdata)
        engines.append(c)
    return data, engines


def _params(kind, data, draw_name, draw_city):
    if kind in ("param", "param-groups"):
        return [(draw_name,), (draw_city,)]
    if kind == "id":
        return [(data[0][0],)]
    return [()]


@settings(max_examples=40, deadline=None)
@given(rows_st, st.sampled_from(NAMES + ["BÓB", "nobody"]), st.sampled_from(CITIES + ["PARİS"]))
def test_collation_matches_mariadb(setup, rows, name, city):
    oracle = setup
    data, engines = _load(oracle, rows)
    try:
        for sql, kind in QUERIES:
            for params in _params(kind, data, name, city):
                if "?" in sql and sql.count("?") != len(params):
                    params = params[:1] if params else params
                if sql.count("?") != len(params):
                    continue
                want, _ = oracle.query(sql.replace("?", "%s"), params or None)
                for conn, path in zip(engines, ("dataflow", "storage")):
                    got = conn.execute(sql, params).fetchall()
                    where = f"{path}: {sql} {params}\n  MariaDB {want}\n  noria   {got}"
                    if kind in ("exact", "param", "id"):
                        assert Counter(got) == Counter(want), where
                    elif kind == "ordered":
                        assert [tuple(_key(v) for v in r) for r in got] == [
                            tuple(_key(v) for v in r) for r in want
                        ], where
                    else:
                        assert _norm_rows(got) == _norm_rows(want), where
                        spellings = {v for r in data for v in r if isinstance(v, str)}
                        for r in got:
                            for v in r:
                                if isinstance(v, str):
                                    assert v in spellings, where
    finally:
        for c in engines:
            c.close()


def test_cached_lookup_finds_every_spelling():
    c = noria_py.connect()
    c.execute(SCHEMA)
    c.executemany(
        "INSERT INTO people VALUES (?, ?, ?, ?)",
        [(1, "Bob", "x", 0), (2, "bob ", "x", 0), (3, "BÖB", "x", 0), (4, "rob", "x", 0)],
    )
    sql = "SELECT id FROM people WHERE name = ?"
    assert sorted(c.execute(sql, ("BOB",)).fetchall()) == [(1,), (2,), (3,)]
    c.execute("INSERT INTO people VALUES (5, 'bOb', 'y', 0)")
    assert sorted(c.execute(sql, ("bob",)).fetchall()) == [(1,), (2,), (3,), (5,)]
    c.execute("DELETE FROM people WHERE id = 1")
    assert sorted(c.execute(sql, ("Bob",)).fetchall()) == [(2,), (3,), (5,)]
    status = {r[1]: r[2] for r in c.execute("SHOW CACHES").fetchall()}
    assert status[sql] == "cached"


def test_unique_key_is_unique_under_the_collation():
    c = noria_py.connect()
    c.execute("CREATE TABLE t (name VARCHAR(10) PRIMARY KEY)")
    c.execute("INSERT INTO t VALUES ('Bob')")
    with pytest.raises(noria_py.IntegrityError) as ei:
        c.execute("INSERT INTO t VALUES ('bob ')")
    assert ei.value.errno == 1062


def test_a_group_shows_a_spelling_it_still_has():
    c = noria_py.connect()
    c.execute(SCHEMA)
    c.execute("INSERT INTO people VALUES (1, 'Bob', 'x', 1), (2, 'bob', 'x', 2)")
    sql = "SELECT name, SUM(n) FROM people GROUP BY name"
    assert c.execute(sql).fetchall() == [("Bob", 3)]
    c.execute("DELETE FROM people WHERE id = 1")
    assert c.execute(sql).fetchall() == [("bob", 2)]


def _run(code: str) -> str:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip()


def test_a_file_written_under_another_collation_is_rebuilt_under_the_new_one(tmp_path):
    db = str(tmp_path / "app.db")
    _run(
        "import noria_py\n"
        f"c = noria_py.connect({db!r}, collation='utf8mb4_bin')\n"
        "c.execute('CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), KEY (name))')\n"
        "c.execute(\"INSERT INTO t VALUES (1, 'Bob'), (2, 'bob'), (3, 'ann')\")\n"
        "assert c.execute('SELECT id FROM t WHERE name = ?', ('bob',)).fetchall() == [(2,)]\n"
        "c.close()\n"
    )
    got = _run(
        "import noria_py\n"
        f"c = noria_py.connect({db!r})\n"
        "print(sorted(c.execute('SELECT id FROM t WHERE name = ?', ('BOB',)).fetchall()))\n"
        "print(c.execute('SELECT name FROM t ORDER BY name, id').fetchall())\n"
    )
    assert got.splitlines() == ["[(1,), (2,)]", "[('ann',), ('Bob',), ('bob',)]"]


def test_a_second_collation_in_one_process_is_refused():
    c = noria_py.connect()
    try:
        with pytest.raises(noria_py.NotSupportedError) as ei:
            noria_py.connect(collation="utf8mb4_bin")
        assert ei.value.errno == 1235
        with pytest.raises(noria_py.ProgrammingError):
            noria_py.connect(collation="no_such_collation")
    finally:
        c.close()


def test_serve_collation_option():
    from . import wire_fixtures

    mod = wire_fixtures()
    srv = mod.start_server("--collation", "utf8mb4_bin")
    try:
        conn = srv.pymysql()
        with conn.cursor() as cur:
            cur.execute("SELECT 'a' = 'A', 'a' = 'a ', 'a' < 'B'")
            assert cur.fetchone() == (0, 1, 0)  # binary, PAD SPACE
        conn.close()
    finally:
        assert mod.stop_server(srv) == 0

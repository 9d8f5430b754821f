"""Columns and tables declared with another collation than the engine's, compared with MariaDB.

Base storage declares each text column with its own collation, and every query that compares
such a column is answered there with the comparison made under it (``a COLLATE
utf8mb4_bin``), so ``=``, ``IN``, ``LIKE``, ORDER BY, GROUP BY, DISTINCT, MIN/MAX, joins,
UPDATE and DELETE follow the column's collation; other columns keep the engine's.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

DDL = (
    "CREATE TABLE colls (id INT PRIMARY KEY, a VARCHAR(10) COLLATE utf8mb4_bin, "
    "b VARCHAR(10) COLLATE utf8mb4_unicode_ci, c VARCHAR(10), KEY ka (a))"
)
DDL_TABLE = (
    "CREATE TABLE tcoll (id INT PRIMARY KEY, t VARCHAR(10), u VARCHAR(10) COLLATE "
    "utf8mb4_general_ci) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
)
WORDS = ["a", "A", "a ", "á", "ss", "ß", "SS", "b", "Bob", "bob", "x", ""]
ROWS = [(i + 1, w, WORDS[(i + 3) % len(WORDS)], WORDS[(i + 5) % len(WORDS)])
        for i, w in enumerate(WORDS)]  # fmt: skip

TEMPLATES = [
    "SELECT id FROM colls WHERE {col} = {lit} ORDER BY id",
    "SELECT id FROM colls WHERE {col} IN ({lit}, 'b') ORDER BY id",
    "SELECT id FROM colls WHERE {col} LIKE CONCAT({lit}, '%') ORDER BY id",
    "SELECT id FROM colls WHERE {col} < {lit} ORDER BY id",
    # (a group shows one of its spellings: groups are compared by their rows' ids)
    "SELECT MIN(id), MAX(id), COUNT(*) FROM colls GROUP BY {col}",
    "SELECT COUNT(DISTINCT {col}) FROM colls",
    "SELECT id FROM colls ORDER BY {col}, id",
    "SELECT id FROM colls WHERE {col} = (SELECT MIN({col}) FROM colls) ORDER BY id",
    "SELECT id FROM colls WHERE {col} = (SELECT MAX({col}) FROM colls) ORDER BY id",
    "SELECT x.id, y.id FROM colls x JOIN colls y ON x.{col} = y.{col} ORDER BY 1, 2",
    "SELECT id, UPPER({col}) = UPPER({lit}) FROM colls ORDER BY id",
]


def _norm(rows):
    return sorted(tuple(r) for r in rows) if rows else []


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    mariadb_oracle.query("DROP TABLE IF EXISTS colls")
    mariadb_oracle.query("DROP TABLE IF EXISTS tcoll")
    mariadb_oracle.query(DDL)
    mariadb_oracle.query(DDL_TABLE)
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO colls VALUES (%s, %s, %s, %s)", ROWS)
        cur.executemany("INSERT INTO tcoll VALUES (%s, %s, %s)", [r[:3] for r in ROWS])
    mariadb_oracle.conn.commit()
    conns = []
    for opts in ({}, {"dataflow": False}):
        c = noria_py.connect(**opts)
        c.execute(DDL)
        c.execute(DDL_TABLE)
        c.executemany("INSERT INTO colls VALUES (?, ?, ?, ?)", ROWS)
        c.executemany("INSERT INTO tcoll VALUES (?, ?, ?)", [r[:3] for r in ROWS])
        conns.append(c)
    yield conns, mariadb_oracle
    for c in conns:
        c.close()


def check(sides, sql: str) -> list[str]:
    conns, oracle = sides
    want = _norm(oracle.query(sql)[0])
    bad = []
    for c in conns:
        got = _norm(c.execute(sql).fetchall())
        if got != want:
            bad.append(f"{sql}\n   MariaDB {want}\n   noria   {got}")
    return bad


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tpl=st.sampled_from(TEMPLATES),
    col=st.sampled_from(["a", "b", "c"]),
    lit=st.sampled_from(WORDS),
)
def test_queries_compare_under_the_columns_collation(sides, tpl, col, lit):
    sql = tpl.format(col=col, lit="'" + lit + "'")
    problems = check(sides, sql)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM tcoll WHERE t = 'A' ORDER BY id",  # the table's collation: binary
        "SELECT id FROM tcoll WHERE u = 'A' ORDER BY id",  # the column's own
        "SELECT MIN(id), COUNT(*) FROM tcoll GROUP BY t",
        "SELECT COUNT(*) FROM (SELECT DISTINCT b FROM colls) d",
        "SELECT id FROM colls WHERE a = c ORDER BY id",
        "SELECT id FROM colls WHERE a COLLATE utf8mb4_general_ci = 'A' ORDER BY id",
    ],
)
def test_named_collation_queries(sides, sql):
    problems = check(sides, sql)
    assert not problems, "\n".join(problems)


def test_writes_and_reopen_keep_the_collation(mariadb_oracle, tmp_path):
    path = str(tmp_path / "coll.db")
    conn = noria_py.connect(path)
    conn.execute(DDL)
    conn.executemany("INSERT INTO colls VALUES (?, ?, ?, ?)", ROWS)
    conn.execute("UPDATE colls SET c = 'upd' WHERE a = 'A'")
    conn.execute("DELETE FROM colls WHERE b = 'ss'")
    mine = conn.execute("SELECT id, c FROM colls ORDER BY id").fetchall()
    create = conn.execute("SHOW CREATE TABLE colls").fetchall()[0][1]
    conn.close()
    assert "`a` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" in create
    mariadb_oracle.query("DROP TABLE IF EXISTS colls_w")
    mariadb_oracle.query(DDL.replace("colls", "colls_w"))
    with mariadb_oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO colls_w VALUES (%s, %s, %s, %s)", ROWS)
        cur.execute("UPDATE colls_w SET c = 'upd' WHERE a = 'A'")
        cur.execute("DELETE FROM colls_w WHERE b = 'ss'")
    mariadb_oracle.conn.commit()
    want = [tuple(r) for r in mariadb_oracle.query("SELECT id, c FROM colls_w ORDER BY id")[0]]
    assert [tuple(r) for r in mine] == want
    again = noria_py.connect(path)
    assert again.execute("SELECT id FROM colls WHERE a = 'a' ORDER BY id").fetchall() == [
        tuple(r)
        for r in mariadb_oracle.query("SELECT id FROM colls_w WHERE a = 'a' ORDER BY id")[0]
    ]
    again.close()


def test_a_collation_nothing_knows_is_1273():
    conn = noria_py.connect()
    with pytest.raises(noria_py.Error) as info:
        conn.execute("CREATE TABLE bad (s VARCHAR(5) COLLATE no_such_collation)")
    assert info.value.errno == 1273
    conn.close()


def test_a_databases_default_collation(mariadb_oracle, tmp_path):
    script = [
        "DROP DATABASE IF EXISTS collated_db",
        "CREATE DATABASE collated_db COLLATE utf8mb4_bin",
        "CREATE TABLE collated_db.bt (id INT PRIMARY KEY, s VARCHAR(10), "
        "g VARCHAR(10) COLLATE utf8mb4_general_ci)",
        "INSERT INTO collated_db.bt VALUES (1, 'a', 'a'), (2, 'A', 'A'), (3, 'a ', 'á')",
    ]
    reads = [
        "SELECT id FROM collated_db.bt WHERE s = 'a' ORDER BY id",
        "SELECT id FROM collated_db.bt WHERE g = 'a' ORDER BY id",
        "SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
        "'collated_db' ORDER BY ORDINAL_POSITION",
    ]
    c = mariadb_oracle.connect(database=None)
    want = []
    with c.cursor() as cur:
        for sql in script:
            cur.execute(sql)
        for sql in reads:
            cur.execute(sql)
            want.append([tuple(r) for r in cur.fetchall()])
        cur.execute("DROP DATABASE collated_db")
    c.close()
    path = str(tmp_path / "dbcoll.db")
    conn = noria_py.connect(path)
    for sql in script[1:]:
        conn.execute(sql)
    assert [[tuple(r) for r in conn.execute(sql).fetchall()] for sql in reads] == want
    conn.close()
    again = noria_py.connect(path)  # the database's collation is kept in the catalog
    again.execute("CREATE TABLE collated_db.bt2 (s VARCHAR(10))")
    again.execute("INSERT INTO collated_db.bt2 VALUES ('a'), ('A')")
    assert again.execute("SELECT COUNT(*) FROM collated_db.bt2 WHERE s = 'a'").fetchall() == [(1,)]
    again.close()


FUNCTIONS_AND_MIXES = [
    # string functions compare under the column's own collation (they used the engine's)
    "SELECT id, STRCMP(a, c), STRCMP(c, a), STRCMP(a, 'SS') FROM colls ORDER BY id",
    "SELECT id, LOCATE('s', a), INSTR(a, 'S'), FIELD(a, 'bob', 'SS') FROM colls ORDER BY id",
    "SELECT id, STRCMP(a, b), LOCATE('ss', b) FROM colls ORDER BY id",
    "SELECT id FROM colls WHERE STRCMP(a, 'bob') = 0 ORDER BY id",
    # two columns' collations that MySQL will not mix: 1267 (they were answered)
    "SELECT id, STRCMP(b, c) FROM colls ORDER BY id",
    "SELECT id FROM colls WHERE b = c ORDER BY id",
    "SELECT id FROM colls WHERE c < b ORDER BY id",
    # ... unless the statement says which
    "SELECT id FROM colls WHERE b = c COLLATE utf8mb4_general_ci ORDER BY id",
    "SELECT id FROM colls WHERE c COLLATE utf8mb4_unicode_ci = b ORDER BY id",
    "SELECT id, STRCMP(b COLLATE utf8mb4_general_ci, c) FROM colls ORDER BY id",
]


@pytest.mark.parametrize("sql", FUNCTIONS_AND_MIXES)
def test_functions_and_mixed_collations(sides, sql):
    conns, oracle = sides
    try:
        want = ("rows", _norm(oracle.query(sql)[0]))
    except Exception as e:  # noqa: BLE001 - pymysql's error
        want = ("error", e.args[0])
    for c in conns:
        try:
            got = ("rows", _norm(c.execute(sql).fetchall()))
        except noria_py.Error as e:
            got = ("error", e.errno)
        assert got == want, sql

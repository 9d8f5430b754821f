"""DDL sequences compared with a real MariaDB: hypothesis draws a table's history (ALTER TABLE
in all its forms, RENAME TABLE, CREATE/DROP INDEX, and writes in between) and runs it on both.
After every statement both must agree on whether it was accepted (and its error code), on the
table's columns and keys (DESCRIBE and the keys of SHOW CREATE TABLE), on its rows (read
through a cached query), and on a view over it (its rows, or 1356 once it is invalid)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
from decimal import Decimal

import pymysql
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

TYPES = ["INT", "BIGINT", "TINYINT", "VARCHAR(4)", "VARCHAR(20)", "DECIMAL(6,2)", "DATE"]
NAMES = ["a", "b", "c", "d", "e"]
VALUES = st.one_of(
    st.none(),
    st.integers(-300, 300).map(str),
    st.sampled_from(["'x'", "'12'", "'12abc'", "'abcdefgh'", "'2024-02-29'", "'1.5'", "''"]),
    st.sampled_from(["1.25", "-7.5", "99999.99"]),
).map(lambda v: "NULL" if v is None else v)
DEFAULTS = st.sampled_from(
    ["", " DEFAULT NULL", " DEFAULT 7", " DEFAULT 'q'", " DEFAULT '2020-01-01'"]
)
POSITION = st.sampled_from(["", " FIRST", " AFTER a", " AFTER id", " AFTER e"])
NULLS = st.sampled_from(["", " NOT NULL", " NULL"])


@st.composite
def _column(draw) -> str:
    return f"{draw(st.sampled_from(TYPES))}{draw(NULLS)}{draw(DEFAULTS)}"


@st.composite
def _step(draw) -> str:
    n = draw(st.sampled_from(NAMES))
    m = draw(st.sampled_from(NAMES + ["id"]))
    kind = draw(
        st.sampled_from(
            [
                "insert",
                "insert",
                "update",
                "delete",
                "add",
                "add",
                "drop",
                "modify",
                "change",
                "rename_col",
                "add_index",
                "add_unique",
                "drop_index",
                "create_index",
                "drop_index_stmt",
                "default",
                "drop_pk",
                "add_pk",
                "rename",
                "two",
            ]
        )
    )
    if kind == "insert":
        cols = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
        vals = [draw(VALUES) for _ in cols]
        return f"INSERT INTO {{t}} ({', '.join(cols)}) VALUES ({', '.join(vals)})"
    if kind == "update":
        return f"UPDATE {{t}} SET {n} = {draw(VALUES)} WHERE id % 2 = {draw(st.integers(0, 1))}"
    if kind == "delete":
        return f"DELETE FROM {{t}} WHERE id = {draw(st.integers(1, 6))}"
    if kind == "add":
        return f"ALTER TABLE {{t}} ADD COLUMN {n} {draw(_column())}{draw(POSITION)}"
    if kind == "drop":
        return f"ALTER TABLE {{t}} DROP COLUMN {m}"
    if kind == "modify":
        return f"ALTER TABLE {{t}} MODIFY {n} {draw(_column())}{draw(POSITION)}"
    if kind == "change":
        return f"ALTER TABLE {{t}} CHANGE {n} {m} {draw(_column())}"
    if kind == "rename_col":
        return f"ALTER TABLE {{t}} RENAME COLUMN {n} TO {m}"
    if kind == "add_index":
        cols = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
        name = draw(st.sampled_from(["", "k1 ", "k2 "]))
        return f"ALTER TABLE {{t}} ADD INDEX {name}({', '.join(cols)})"
    if kind == "add_unique":
        name = draw(st.sampled_from(["", "u1 ", "k1 "]))
        return f"ALTER TABLE {{t}} ADD UNIQUE KEY {name}({n})"
    if kind == "drop_index":
        return f"ALTER TABLE {{t}} DROP INDEX {draw(st.sampled_from(['k1', 'k2', 'u1', n]))}"
    if kind == "create_index":
        u = draw(st.sampled_from(["", "UNIQUE "]))
        return f"CREATE {u}INDEX {draw(st.sampled_from(['k1', 'k3']))} ON {{t}} ({n})"
    if kind == "drop_index_stmt":
        return f"DROP INDEX {draw(st.sampled_from(['k1', 'k3', 'u1', n]))} ON {{t}}"
    if kind == "default":
        if draw(st.booleans()):
            return f"ALTER TABLE {{t}} ALTER COLUMN {n} DROP DEFAULT"
        value = draw(st.sampled_from(["5", "'z'"]))
        return f"ALTER TABLE {{t}} ALTER {n} SET DEFAULT {value}"
    if kind == "drop_pk":
        return "ALTER TABLE {t} DROP PRIMARY KEY"
    if kind == "add_pk":
        return f"ALTER TABLE {{t}} ADD PRIMARY KEY ({n})"
    if kind == "rename":
        return "RENAME" if draw(st.booleans()) else "ALTER_RENAME"
    # (not the same name: MariaDB keeps the dropped column's key, with its old prefix length)
    m = draw(st.sampled_from([x for x in NAMES if x != n]))
    return (
        f"ALTER TABLE {{t}} ADD COLUMN {n} {draw(_column())}, "
        f"DROP COLUMN {m}, ALGORITHM=COPY, LOCK=SHARED"
    )


_INT_WIDTH = re.compile(r"\b(tinyint|smallint|mediumint|int|bigint)\(\d+\)")


def _describe(run, table):
    rows = run(f"DESCRIBE {table}")
    out = []
    for field, typ, null, _key, default, extra in rows:
        typ = _INT_WIDTH.sub(r"\1", str(typ).lower())
        if default is not None:
            default = str(default).strip("'")
        out.append((field, typ, null, default if default != "NULL" else None, extra))
    return out


_KEY = re.compile(r"^\s*(PRIMARY KEY|UNIQUE KEY `([^`]+)`|KEY `([^`]+)`) \(([^)]*)\)", re.M)


def _keys(run, table):
    text = run(f"SHOW CREATE TABLE {table}")[0][1]
    out = set()
    for m in _KEY.finditer(text):
        kind = "PRIMARY" if m.group(1) == "PRIMARY KEY" else ("UNIQUE" if m.group(2) else "KEY")
        out.add((kind, m.group(2) or m.group(3) or "", m.group(4).replace("`", "")))
    return out


def _norm(v):
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, Decimal):
        return Decimal(v).normalize() if v == v.to_integral_value() else v
    if isinstance(v, _dt.datetime):
        return v.isoformat()
    if isinstance(v, _dt.date):
        return v.isoformat()
    return v


def _rows(rows):
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)


class _Side:
    """One database under test: run a statement, answer (rows or None, error code or None)."""

    def __init__(self, execute):
        self._execute = execute

    def __call__(self, sql):
        rows, err = self.try_(sql)
        if err is not None:
            raise AssertionError(f"{sql} failed with {err}")
        return rows

    def try_(self, sql):
        try:
            return self._execute(sql), None
        except pymysql.MySQLError as e:
            return None, e.args[0]
        except E.Error as e:
            return None, e.errno


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    conn = mariadb_oracle.connect()
    conn.cursor().execute("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")

    def theirs(sql):
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    yield conn, theirs
    conn.close()


def _noria():
    """(connection, run(sql) -> rows) of a fresh embedded database."""
    conn = noria_py.connect()
    cur = conn.cursor()

    def run(sql):
        cur.execute(sql)
        return list(cur.fetchall()) if cur.description else []

    return conn, run


@contextlib.contextmanager
def _pair(sides, drop: str):
    """(ours, theirs) sides with ``drop`` run on both first."""
    conn, ours_fn = _noria()
    ours, theirs = _Side(ours_fn), _Side(sides[1])
    try:
        for run in (ours, theirs):
            run(drop)
        yield ours, theirs
    finally:
        conn.close()


def _play(ours, theirs, script, after) -> None:
    """Each statement on both sides: the same error code (or none), then ``after(sql,
    error)``'s own comparisons."""
    for sql in script:
        e1 = ours.try_(sql)[1]
        e2 = theirs.try_(sql)[1]
        assert e1 == e2, f"{sql}: noria {e1}, MariaDB {e2}"
        after(sql, e1)


def _start(theirs_conn, theirs):
    ours_conn, ours = _noria()
    for run in (ours, theirs):
        run("DROP VIEW IF EXISTS ddl_v")
        run("DROP TABLE IF EXISTS ddl_t")
        run("DROP TABLE IF EXISTS ddl_u")
        run(
            "CREATE TABLE ddl_t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, a INT, "
            "b VARCHAR(20), c DECIMAL(6,2) DEFAULT 1.50)"
        )
        run("INSERT INTO ddl_t (a, b, c) VALUES (1, 'x', 2.5), (NULL, '12', NULL), (3, NULL, 0)")
        run("CREATE VIEW ddl_v AS SELECT id, a, b FROM ddl_t WHERE id > 1")
    return ours_conn, _Side(ours), _Side(theirs)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(_step(), min_size=1, max_size=8))
def test_ddl_sequences_match_mariadb(sides, steps):
    conn, theirs_fn = sides
    ours_conn, ours, theirs = _start(conn, theirs_fn)
    table = "ddl_t"
    try:
        for step in steps:
            if step in ("RENAME", "ALTER_RENAME"):
                other = "ddl_u" if table == "ddl_t" else "ddl_t"
                sql = (
                    f"RENAME TABLE {table} TO {other}"
                    if step == "RENAME"
                    else f"ALTER TABLE {table} RENAME TO {other}"
                )
            else:
                sql = step.format(t=table)
            _r1, e1 = ours.try_(sql)
            if e1 == 1235 and "DATE NOT NULL" in sql:
                reject()  # the zero date MySQL fills in is not kept (a documented 1235)
            _r2, e2 = theirs.try_(sql)
            if e1 in (1292, 1366) and e2 is None:
                stored = theirs(f"SELECT * FROM {table}")
                if any(
                    isinstance(v, str) and v.startswith("0000-00-00") for r in stored for v in r
                ):
                    reject()  # MariaDB stored a zero date (not kept here: a documented 1292)
            assert e1 == e2, f"{sql}: noria {e1}, MariaDB {e2}"
            if e1 is None and step in ("RENAME", "ALTER_RENAME"):
                table = other
            assert _describe(ours, table) == _describe(theirs, table), sql
            assert _keys(ours, table) == _keys(theirs, table), sql
            assert _rows(ours(f"SELECT * FROM {table}")) == _rows(
                theirs(f"SELECT * FROM {table}")
            ), sql
            v1, ve1 = ours.try_("SELECT * FROM ddl_v")
            v2, ve2 = theirs.try_("SELECT * FROM ddl_v")
            assert ve1 == ve2, f"view after {sql}: noria {ve1}, MariaDB {ve2}"
            if ve1 is None:
                assert _rows(v1) == _rows(v2), f"view after {sql}"
    finally:
        ours_conn.close()


SCRIPT = [
    "CREATE TABLE ddl_src (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
    "x VARCHAR(10) NOT NULL DEFAULT 'q', d DECIMAL(6,2), KEY (x))",
    "INSERT INTO ddl_src (x, d) VALUES ('b', 3.00), ('A', 1.00), ('a', 3.00), ('c', NULL), "
    "('d', 1.00)",
    "CREATE TABLE ddl_like LIKE ddl_src",
    "CREATE TABLE ddl_ctas AS SELECT id, x AS y, d FROM ddl_src WHERE id > 1",
    "INSERT INTO ddl_like SELECT * FROM ddl_src",
    "DELETE FROM ddl_like ORDER BY d DESC, id LIMIT 1",
    "UPDATE ddl_like SET d = 9 WHERE d < 3 OR d IS NULL ORDER BY x LIMIT 2",
    "DELETE FROM ddl_ctas LIMIT 2",
    "UPDATE ddl_ctas SET y = 'z' ORDER BY y DESC LIMIT 1",
    "CREATE TABLE ddl_like LIKE ddl_src",  # 1050
    "CREATE TABLE IF NOT EXISTS ddl_like LIKE ddl_src",
]


def test_like_ctas_and_ordered_limited_writes_match_mariadb(sides):
    with _pair(sides, "DROP TABLE IF EXISTS ddl_src, ddl_like, ddl_ctas") as (ours, theirs):

        def after(sql, error):
            for t in ("ddl_like", "ddl_ctas"):
                if error is None and ours.try_(f"SELECT 1 FROM {t}")[1] is None:
                    assert _rows(ours(f"SELECT * FROM {t}")) == _rows(
                        theirs(f"SELECT * FROM {t}")
                    ), f"{t} after {sql}"

        _play(ours, theirs, SCRIPT, after)
        for t in ("ddl_like", "ddl_ctas"):
            assert _describe(ours, t) == _describe(theirs, t), t
            assert _keys(ours, t) == _keys(theirs, t), t


GENERATED = [
    "CREATE TABLE ddl_gen (id INT PRIMARY KEY, a INT, s VARCHAR(10), "
    "b BIGINT GENERATED ALWAYS AS (a * 2 + id) STORED, "
    "c VARCHAR(30) AS (CONCAT(s, '-', COALESCE(a, 'none'))) VIRTUAL, "
    "d DECIMAL(8,2) AS (a / 3) STORED)",
    "INSERT INTO ddl_gen (id, a, s) VALUES (1, 5, 'x'), (2, NULL, 'y'), (3, -4, NULL)",
    "UPDATE ddl_gen SET a = a + 1 WHERE id <> 2",
    "INSERT INTO ddl_gen (id, a, s) VALUES (1, 9, 'z') ON DUPLICATE KEY UPDATE a = VALUES(a)",
    "ALTER TABLE ddl_gen MODIFY b BIGINT GENERATED ALWAYS AS (a * 10) STORED",
    "ALTER TABLE ddl_gen ADD COLUMN e INT AS (id * 100) VIRTUAL AFTER id",
    "UPDATE ddl_gen SET s = 'w' WHERE id = 3",
]


def test_generated_columns_match_mariadb(sides):
    with _pair(sides, "DROP TABLE IF EXISTS ddl_gen") as (ours, theirs):

        def after(sql, _error):
            q = "SELECT * FROM ddl_gen"
            assert _rows(ours(q)) == _rows(theirs(q)), sql
            for k in (1, 2, 3):  # and through a cached read
                q = f"SELECT b, c FROM ddl_gen WHERE id = {k}"
                assert _rows(ours(q)) == _rows(theirs(q)), (sql, k)

        _play(ours, theirs, GENERATED, after)


def test_on_update_current_timestamp():
    ours_conn = noria_py.connect()
    cur = ours_conn.cursor()
    cur.execute(
        "CREATE TABLE ddl_ts (id INT PRIMARY KEY, v INT, "
        "changed DATETIME NOT NULL DEFAULT '2000-01-01 00:00:00' ON UPDATE CURRENT_TIMESTAMP, "
        "fixed DATETIME DEFAULT '2000-01-01 00:00:00')"
    )
    cur.execute("INSERT INTO ddl_ts (id, v) VALUES (1, 1), (2, 2)")
    cur.execute("UPDATE ddl_ts SET v = 1 WHERE id = 1")  # no change: no new time
    cur.execute("UPDATE ddl_ts SET v = 5 WHERE id = 2")
    cur.execute("SELECT id, YEAR(changed) > 2000, YEAR(fixed) FROM ddl_ts ORDER BY id")
    assert cur.fetchall() == [(1, 0, 2000), (2, 1, 2000)]
    cur.execute("UPDATE ddl_ts SET v = 7, changed = '2001-02-03 00:00:00' WHERE id = 1")
    cur.execute("SELECT changed FROM ddl_ts WHERE id = 1")  # an explicit value wins
    assert str(cur.fetchall()[0][0]) == "2001-02-03 00:00:00"
    cur.execute("SHOW CREATE TABLE ddl_ts")
    assert "ON UPDATE CURRENT_TIMESTAMP" in cur.fetchall()[0][1]
    ours_conn.close()


MULTI = [
    "CREATE TABLE mt_a (id INT PRIMARY KEY, x INT, s VARCHAR(5))",
    "CREATE TABLE mt_b (aid INT, y INT, CONSTRAINT mt_fk FOREIGN KEY (aid) REFERENCES mt_a (id) "
    "ON DELETE CASCADE)",
    "INSERT INTO mt_a VALUES (1, 0, 'p'), (2, 0, 'q'), (3, 0, 'r'), (4, 5, 's')",
    "INSERT INTO mt_b VALUES (1, 10), (1, 11), (2, 20), (4, 1)",
    "UPDATE mt_a JOIN mt_b ON mt_a.id = mt_b.aid SET mt_a.x = mt_b.y + 1 WHERE mt_b.y >= 10",
    "UPDATE mt_a a JOIN mt_b b ON a.id = b.aid SET a.s = CONCAT(a.s, b.y), b.y = b.y * 2 "
    "WHERE a.id = 4",
    "UPDATE mt_a, mt_b SET x = 1",  # 1052? no: x is only in mt_a
    "UPDATE mt_a, mt_b SET y = 3 WHERE mt_a.id = mt_b.aid AND mt_a.id = 2",
    "DELETE mt_a FROM mt_a JOIN mt_b ON mt_a.id = mt_b.aid WHERE mt_b.y = 3",  # cascades
    "DELETE FROM mt_b USING mt_b JOIN mt_a ON mt_a.id = mt_b.aid WHERE mt_a.s = 'p'",
    "DELETE a, b FROM mt_a a LEFT JOIN mt_b b ON a.id = b.aid WHERE a.id = 3",
    "UPDATE mt_a JOIN mt_b ON mt_a.id = mt_b.aid SET nope = 1",  # 1054
    "DELETE mt_c FROM mt_a JOIN mt_b ON mt_a.id = mt_b.aid",  # 1109
]


def test_multi_table_writes_match_mariadb(sides):
    with _pair(sides, "DROP TABLE IF EXISTS mt_b, mt_a") as (ours, theirs):

        def after(sql, _error):
            for t in ("mt_a", "mt_b"):
                if ours.try_(f"SELECT 1 FROM {t}")[1] is None:
                    assert _rows(ours(f"SELECT * FROM {t}")) == _rows(
                        theirs(f"SELECT * FROM {t}")
                    ), f"{t} after {sql}"
            if ours.try_("SELECT 1 FROM mt_b")[1] is None:
                q = "SELECT COUNT(*), SUM(y) FROM mt_b WHERE aid = 1"  # a cached aggregate
                assert _rows(ours(q)) == _rows(theirs(q)), sql

        _play(ours, theirs, MULTI, after)


MEMBERS = [
    "CREATE TABLE en_t (id INT PRIMARY KEY, e ENUM('b','a','C'), s SET('x','y','z'), "
    "f ENUM('lo','mid') NOT NULL DEFAULT 'lo')",
    "INSERT INTO en_t VALUES (1, 'A', 'y,x', 'mid')",
    "INSERT INTO en_t VALUES (2, 'c', '', 'lo')",
    "INSERT INTO en_t (id, e) VALUES (3, 'zz')",
    "INSERT INTO en_t (id, e) VALUES (3, '')",
    "INSERT INTO en_t (id, s) VALUES (3, 'x,w')",
    "INSERT INTO en_t (id, e, s) VALUES (3, 2, 5)",
    "INSERT INTO en_t (id, s) VALUES (4, 'z,X,z')",
    "UPDATE en_t SET f = 'bogus' WHERE id = 1",
    "UPDATE en_t SET f = 'MID' WHERE id = 2",
    "ALTER TABLE en_t MODIFY f ENUM('lo','mid','top') NOT NULL DEFAULT 'top'",
    "INSERT INTO en_t (id) VALUES (5)",
    "ALTER TABLE en_t MODIFY f ENUM('lo') NOT NULL",
]


def test_enum_and_set_match_mariadb(sides):
    with _pair(sides, "DROP TABLE IF EXISTS en_t") as (ours, theirs):

        def after(sql, _error):
            assert _rows(ours("SELECT * FROM en_t")) == _rows(theirs("SELECT * FROM en_t")), sql
            assert _describe(ours, "en_t") == _describe(theirs, "en_t"), sql
            q = "SELECT id FROM en_t WHERE e = 'a'"  # compares as text, under the collation
            assert _rows(ours(q)) == _rows(theirs(q)), sql

        _play(ours, theirs, MEMBERS, after)
        q = "SELECT id, f FROM en_t ORDER BY f, id"  # declared in text order: same order
        assert ours(q) == theirs(q)
        q = "SELECT id, e FROM en_t ORDER BY e, id"  # 'b','a','C': by declared position
        assert ours(q) == theirs(q)

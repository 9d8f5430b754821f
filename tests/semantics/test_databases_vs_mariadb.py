"""Several databases, compared with a real MariaDB: CREATE/DROP DATABASE, USE, ``db.table``
everywhere (each database its own namespace of tables and views), and the errors MySQL gives
(1049 unknown database, 1007/1008, 1046 no database selected). Every statement runs on both
sides; they must agree on the error code or on the rows, and every SELECT runs twice (the second
time from the cache, which is keyed by the connection's database as well as the text)."""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

DBS = ["ndb_a", "ndb_b"]
# MariaDB's codes where MySQL 8 (which noria_py answers as) has its own
_MYSQL_CODE = {4025: 3819}  # ER_CONSTRAINT_FAILED: MySQL's ER_CHECK_CONSTRAINT_VIOLATED

SCRIPT = [
    "CREATE DATABASE ndb_a",
    "CREATE DATABASE ndb_a",  # 1007
    "CREATE DATABASE IF NOT EXISTS ndb_a",
    "CREATE SCHEMA ndb_b",
    "CREATE TABLE ndb_a.items (id INT PRIMARY KEY, name VARCHAR(10), qty INT)",
    "CREATE TABLE ndb_b.items (id INT PRIMARY KEY, name VARCHAR(10), qty INT)",
    "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10), qty INT)",
    "INSERT INTO ndb_a.items VALUES (1, 'apple', 3), (2, 'pear', 5)",
    "INSERT INTO ndb_b.items VALUES (1, 'boat', 1)",
    "INSERT INTO items VALUES (1, 'home', 9)",
    "SELECT * FROM items",
    "SELECT * FROM ndb_a.items WHERE id = 1",
    "SELECT name FROM ndb_b.items WHERE id = 1",
    "SELECT a.name, b.name FROM ndb_a.items a JOIN ndb_b.items b ON a.id = b.id",
    "SELECT ndb_a.items.name FROM ndb_a.items WHERE ndb_a.items.qty > 3",
    "SELECT COUNT(*) FROM ndb_a.items JOIN items ON items.id = ndb_a.items.id",
    "USE ndb_a",
    "SELECT DATABASE()",
    "SELECT * FROM items",  # ndb_a's: the same text, another table
    "SELECT * FROM items WHERE id = 1",
    "SELECT name FROM {home}.items WHERE id = 1",
    "SHOW TABLES",
    "CREATE VIEW big AS SELECT name, qty FROM items WHERE qty > 2",
    "SELECT * FROM big",
    "INSERT INTO items VALUES (3, 'plum', 7)",
    "SELECT * FROM big",
    "CREATE VIEW ndb_b.mirror AS SELECT id, name FROM items",  # ndb_a.items: the current db
    "SELECT * FROM ndb_b.mirror",
    "UPDATE ndb_a.items SET qty = qty + 1 WHERE id = 2",
    "SELECT * FROM big",
    "USE ndb_b",
    "SELECT * FROM mirror",
    "SELECT * FROM items",
    "SHOW FULL TABLES",
    "SHOW TABLES FROM ndb_a",
    "SHOW TABLES FROM nosuchdb",  # 1049
    "CREATE TABLE parent (id INT PRIMARY KEY)",
    "CREATE TABLE ndb_a.child (id INT PRIMARY KEY, pid INT, "
    "FOREIGN KEY (pid) REFERENCES ndb_b.parent (id) ON DELETE CASCADE)",
    "INSERT INTO parent VALUES (10), (11)",
    "INSERT INTO ndb_a.child VALUES (1, 10), (2, 11)",
    "INSERT INTO ndb_a.child VALUES (3, 12)",  # 1452
    "DELETE FROM parent WHERE id = 10",
    "SELECT * FROM ndb_a.child",
    "DROP TABLE parent",  # 1451: referenced from ndb_a
    "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
    "WHERE TABLE_SCHEMA IN ('ndb_a', 'ndb_b') ORDER BY 1, 2",
    "SELECT TABLE_SCHEMA, TABLE_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME "
    "FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'ndb_a' "
    "AND REFERENCED_TABLE_NAME IS NOT NULL",
    "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'ndb%' ORDER BY 1",
    "INSERT INTO items SELECT id + 100, name, qty FROM ndb_a.items",
    "SELECT * FROM items",
    "UPDATE items i JOIN ndb_a.items a ON a.id + 100 = i.id SET i.qty = a.qty * 10",
    "SELECT * FROM items",
    "DELETE i FROM items i JOIN ndb_a.items a ON a.id + 100 = i.id WHERE a.name = 'plum'",
    "SELECT * FROM items",
    "CREATE TABLE copy LIKE ndb_a.items",
    "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS "
    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'copy'",
    "RENAME TABLE copy TO ndb_a.copy2",
    "SHOW TABLES",
    "SELECT * FROM ndb_a.copy2",
    "ALTER TABLE ndb_a.copy2 RENAME TO ndb_b.copy3",
    "SELECT COUNT(*) FROM copy3",
    "ALTER TABLE ndb_a.items ADD CONSTRAINT qpos CHECK (qty >= 0)",
    "INSERT INTO ndb_a.items VALUES (9, 'neg', -1)",  # 3819
    "CREATE INDEX iname ON ndb_a.items (name)",
    "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS "
    "WHERE TABLE_SCHEMA = 'ndb_a' AND TABLE_NAME = 'items'",
    "DROP INDEX iname ON ndb_a.items",
    "DROP INDEX iname ON ndb_a.items",  # 1091
    "TRUNCATE TABLE ndb_a.items",
    "SELECT * FROM mirror",
    "SELECT * FROM nosuchdb.items",  # 1049
    "INSERT INTO nosuchdb.items VALUES (1, 'x', 1)",  # 1049
    "CREATE TABLE nosuchdb.t (id INT)",  # 1049
    "USE nosuchdb",  # 1049
    "SELECT * FROM items WHERE id = 1",  # still ndb_b
    "DROP DATABASE nosuchdb",  # 1008
    "DROP DATABASE IF EXISTS nosuchdb",
    "USE {home}",
    "SELECT * FROM items",
    "DROP DATABASE ndb_a",
    "SELECT * FROM ndb_a.items",  # 1049
    "SELECT * FROM ndb_b.mirror",  # 1356: its table went with ndb_a
    "USE ndb_b",
    "DROP DATABASE ndb_b",
    "SELECT DATABASE()",
    "SELECT * FROM items",  # 1046
    "CREATE TABLE t (id INT)",  # 1046
    "SELECT * FROM {home}.items",
    "USE {home}",
    "SELECT * FROM items",
]


def _norm(v):
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, Decimal):
        return Decimal(v).normalize()
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    return v


def _rows(rows):
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=repr)


class _Side:
    """Run statements on one side: (rows, None) or (None, error code)."""

    def __init__(self, cursor, home: str):
        self.cur = cursor
        self.home = home

    def run(self, sql: str):
        sql = sql.replace("{home}", self.home)
        try:
            self.cur.execute(sql)
            return (_rows(self.cur.fetchall()) if self.cur.description else None), None
        except pymysql.MySQLError as e:
            return None, _MYSQL_CODE.get(e.args[0], e.args[0])
        except E.Error as e:
            return None, e.errno


@pytest.fixture
def sides(mariadb_oracle):
    theirs_conn = mariadb_oracle.connect()
    cur = theirs_conn.cursor()
    for db in DBS:
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
    cur.execute("DROP TABLE IF EXISTS items")
    ours_conn = noria_py.connect()
    yield _Side(ours_conn.cursor(), "noria"), _Side(cur, "oracle")
    for db in DBS:
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
    cur.execute("USE oracle")
    cur.execute("DROP TABLE IF EXISTS items")
    theirs_conn.close()
    ours_conn.close()


def _compare(ours: _Side, theirs: _Side, sql: str) -> None:
    a = ours.run(sql)
    b = theirs.run(sql)
    assert a == b, f"{sql}: noria {a}, MariaDB {b}"
    if sql.startswith("SELECT") and a[1] is None:
        again = ours.run(sql)
        assert again == a, f"{sql} (from the cache): {again} after {a}"


def test_script_matches_mariadb(sides):
    ours, theirs = sides
    for sql in SCRIPT:
        _compare(ours, theirs, sql)


VIEW_ORDER = [
    "CREATE DATABASE ndb_a",
    "CREATE TABLE ndb_a.tb (id INT PRIMARY KEY, v INT)",
    "INSERT INTO ndb_a.tb VALUES (1, 10), (2, 20)",
    "CREATE VIEW ndb_a.vw AS SELECT v FROM ndb_a.tb",
    # the SELECT is checked before the name: a missing table, column or function first
    "CREATE VIEW ndb_a.vw AS SELECT v FROM ndb_a.ta",  # 1146, not 1050
    "CREATE VIEW ndb_a.vw AS SELECT nope FROM ndb_a.tb",  # 1054
    "CREATE VIEW ndb_a.tb AS SELECT v FROM ndb_a.ta",  # 1146
    "CREATE VIEW ndb_a.vw AS SELECT FOO(v) FROM ndb_a.tb",  # 1305
    "CREATE VIEW IF NOT EXISTS ndb_a.vw AS SELECT v FROM ndb_a.ta",  # 1146
    "CREATE VIEW ndb_a.vw AS SELECT v FROM ndb_a.tb",  # 1050
    "CREATE VIEW ndb_a.tb AS SELECT v FROM ndb_a.tb",  # 1050
    # an OR REPLACE that fails leaves the view it would replace
    "CREATE OR REPLACE VIEW ndb_a.vw AS SELECT v FROM ndb_a.ta",
    "SELECT * FROM ndb_a.vw ORDER BY v",
    "CREATE OR REPLACE VIEW ndb_a.tb AS SELECT v FROM ndb_a.tb",  # 1347: a table
    "CREATE OR REPLACE VIEW ndb_a.vw AS SELECT id FROM ndb_a.tb",
    "SELECT * FROM ndb_a.vw ORDER BY id",
    # a name the select list spells twice: 1060, after the tables and columns, before the name
    "CREATE VIEW ndb_a.v3 AS SELECT v, v FROM ndb_a.tb",
    "CREATE VIEW ndb_a.v3 AS SELECT v, V FROM ndb_a.tb",
    "CREATE VIEW ndb_a.v3 AS SELECT v AS a, id AS a FROM ndb_a.tb",
    "CREATE VIEW ndb_a.v3 (a, a) AS SELECT v, id FROM ndb_a.tb",
    "CREATE VIEW ndb_a.v3 AS SELECT t.v, u.v FROM ndb_a.tb t JOIN ndb_a.tb u ON t.id = u.id",
    "CREATE VIEW ndb_a.v3 AS SELECT v, 1 AS v FROM ndb_a.tb UNION SELECT id, 2 FROM ndb_a.tb",
    "CREATE VIEW ndb_a.v3 AS SELECT v, v FROM ndb_a.ta",  # 1146
    "CREATE VIEW ndb_a.v3 AS SELECT nope, nope FROM ndb_a.tb",  # 1054
    "CREATE VIEW ndb_a.vw AS SELECT v, v FROM ndb_a.tb",  # 1060, not 1050
    "CREATE VIEW ndb_a.v3 AS SELECT v, id FROM ndb_a.tb",
    "SELECT * FROM ndb_a.v3 ORDER BY id",
]


def test_create_view_checks_its_select_before_its_name(sides):
    ours, theirs = sides
    for sql in VIEW_ORDER:
        _compare(ours, theirs, sql)


def test_show_create_table_names_a_parent_in_another_database(sides):
    ours, theirs = sides
    for sql in [
        "CREATE DATABASE ndb_a",
        "CREATE DATABASE ndb_b",
        "CREATE TABLE ndb_b.p (id INT PRIMARY KEY)",
        "CREATE TABLE ndb_a.p (id INT PRIMARY KEY)",
        "CREATE TABLE ndb_a.c (id INT PRIMARY KEY, x INT, y INT, "
        "FOREIGN KEY (x) REFERENCES ndb_b.p (id), FOREIGN KEY (y) REFERENCES p (id), "
        "CHECK (x > 0))",
    ]:
        _compare(ours, theirs, sql)
    a = ours.run("SHOW CREATE TABLE ndb_a.c")[0][0][1]
    b = theirs.run("SHOW CREATE TABLE ndb_a.c")[0][0][1]
    for text in (a, b):
        assert "CREATE TABLE `c`" in text
        assert "REFERENCES `ndb_b`.`p` (`id`)" in text
        assert "REFERENCES `p` (`id`)" in text
        assert "CONSTRAINT `c_ibfk_1`" in text
    assert "CONSTRAINT `c_chk_1`" in a  # MySQL 8's name (MariaDB says CONSTRAINT_1)


# --- generated: the same statements in several databases ---------------------------------------

NAMES = ["ta", "tb"]


@st.composite
def _step(draw) -> str:
    db = draw(st.sampled_from(DBS + ["{home}", ""]))
    q = f"{db}." if db else ""
    t = draw(st.sampled_from(NAMES))
    kind = draw(
        st.sampled_from(
            ["use", "create_db", "drop_db", "create", "drop", "insert", "insert", "select",
             "select", "select_key", "view", "view_read", "update", "delete", "join"]
        )
    )  # fmt: skip
    if kind == "use":
        return f"USE {db or '{home}'}"
    if kind == "create_db":
        return f"CREATE DATABASE {draw(st.sampled_from(DBS))}"
    if kind == "drop_db":
        return f"DROP DATABASE {draw(st.sampled_from(DBS))}"
    if kind == "create":
        return f"CREATE TABLE {q}{t} (id INT PRIMARY KEY, v INT)"
    if kind == "drop":
        return f"DROP TABLE {q}{t}"
    if kind == "insert":
        k = draw(st.integers(1, 4))
        return f"INSERT INTO {q}{t} VALUES ({k}, {draw(st.integers(0, 9))})"
    if kind == "select":
        return f"SELECT id, v FROM {q}{t}"
    if kind == "select_key":
        return f"SELECT v FROM {q}{t} WHERE id = {draw(st.integers(1, 4))}"
    if kind == "view":
        return f"CREATE VIEW {q}vw AS SELECT v, COUNT(*) AS n FROM {t} GROUP BY v"
    if kind == "view_read":
        return f"SELECT * FROM {q}vw"
    if kind == "update":
        return f"UPDATE {q}{t} SET v = v + 1 WHERE id = {draw(st.integers(1, 4))}"
    if kind == "delete":
        return f"DELETE FROM {q}{t} WHERE id = {draw(st.integers(1, 4))}"
    other = draw(st.sampled_from(DBS))
    return f"SELECT x.id, x.v, y.v FROM {q}{t} x JOIN {other}.{t} y ON x.id = y.id"


@settings(max_examples=60)
@given(st.lists(_step(), min_size=1, max_size=25))
def test_generated_statements_match_mariadb(mariadb_oracle, steps):
    theirs_conn = mariadb_oracle.connect()
    cur = theirs_conn.cursor()
    ours_conn = noria_py.connect()
    try:
        for db in DBS:
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
        for t in NAMES:
            cur.execute(f"DROP TABLE IF EXISTS {t}")
        cur.execute("DROP VIEW IF EXISTS vw")
        ours, theirs = _Side(ours_conn.cursor(), "noria"), _Side(cur, "oracle")
        for sql in steps:
            _compare(ours, theirs, sql)
    finally:
        cur.execute("USE oracle")
        for db in DBS:
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
        cur.execute("DROP VIEW IF EXISTS vw")
        for t in NAMES:
            cur.execute(f"DROP TABLE IF EXISTS {t}")
        theirs_conn.close()
        ours_conn.close()


def test_databases_survive_a_reopen(tmp_path):
    path = str(tmp_path / "db.sqlite")
    c = noria_py.connect(path)
    c.execute("CREATE DATABASE shop")
    c.execute("CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(10))")
    c.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10))")
    c.execute("INSERT INTO shop.items VALUES (1, 'shop')")
    c.execute("INSERT INTO items VALUES (1, 'home')")
    c.execute("USE shop")
    c.execute("CREATE VIEW names AS SELECT name FROM items")  # shop.items
    c.execute("CREATE TABLE child (id INT PRIMARY KEY, pid INT REFERENCES noria.items (id))")
    c.execute("CREATE TABLE child2 (id INT PRIMARY KEY, pid INT, "
              "FOREIGN KEY (pid) REFERENCES noria.items (id))")  # fmt: skip
    c.close()
    c = noria_py.connect(path)
    assert ("shop",) in c.execute("SHOW DATABASES").fetchall()
    assert c.execute("SELECT * FROM shop.names").fetchall() == [("shop",)]
    assert c.execute("SELECT name FROM items").fetchall() == [("home",)]
    with pytest.raises(E.IntegrityError) as info:
        c.execute("INSERT INTO shop.child2 VALUES (1, 2)")
    assert info.value.errno == 1452
    c.execute("INSERT INTO shop.child2 VALUES (1, 1)")
    c.execute("USE shop")
    assert c.execute("SHOW TABLES").fetchall() == [("child",), ("child2",), ("items",), ("names",)]
    c.close()


def test_show_create_view_qualifies_every_table():
    """A view's definition names each table with its database, so the text SHOW CREATE VIEW
    gives recreates the same view from any database."""
    c = noria_py.connect()
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
    c.execute("INSERT INTO t VALUES (1, 10)")
    c.execute("CREATE DATABASE s")
    c.execute("USE s")
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5))")
    c.execute("INSERT INTO t VALUES (1, 'a')")
    c.execute("CREATE VIEW v AS SELECT t.a, x.n FROM t JOIN noria.t AS x ON x.id = t.id")
    name, text = c.execute("SHOW CREATE VIEW v").fetchall()[0][:2]
    assert name == "v"
    assert "FROM `s`.`t` JOIN `noria`.`t` AS x" in text
    c.execute("USE noria")
    c.execute(text.replace("VIEW `v`", "VIEW `v2`"))  # in noria now, over the same tables
    assert c.execute("SELECT * FROM v2").fetchall() == c.execute("SELECT * FROM s.v").fetchall()
    assert c.execute("SELECT * FROM v2").fetchall() == [("a", 10)]
    c.close()

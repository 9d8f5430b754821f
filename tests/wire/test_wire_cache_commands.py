"""Cache commands over the wire: CREATE CACHE, DROP CACHE, DROP ALL CACHES, SHOW CACHES, SHOW
PROXIED QUERIES, with `noria-py serve` caching every supported query (the default) and with
``--caching explicit``; errors as MySQL error codes; server-side prepared statements and
literal texts keep answering what base storage answers through creates and drops."""

from __future__ import annotations

import pymysql
import pytest
from conftest import start_server, stop_server

import noria_py

pytestmark = pytest.mark.wire

SETUP = [
    "CREATE TABLE {t} (id INT PRIMARY KEY, grp INT, name VARCHAR(10))",
    "INSERT INTO {t} VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 3, 'd')",
]


@pytest.fixture(scope="module")
def explicit_server():
    srv = start_server("--caching", "explicit")
    yield srv
    assert stop_server(srv) == 0


def setup(cur, table: str, base=None) -> None:
    for sql in SETUP:
        cur.execute(sql.format(t=table))
        if base is not None:
            base.execute(sql.format(t=table))


def rows_of(cur, sql: str) -> dict:
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    return {r[1]: dict(zip(names, r)) for r in cur.fetchall()}


def test_create_drop_and_show_over_the_wire(server):
    conn = server.pymysql()
    try:
        cur = conn.cursor()
        setup(cur, "cc1")
        cur.execute("SELECT name FROM cc1 WHERE grp = 1")
        assert sorted(cur.fetchall()) == [("a",), ("b",)]
        text = "SELECT name FROM cc1 WHERE grp = ?"
        shown = rows_of(cur, "SHOW CACHES")
        assert shown[text]["status"] == "cached"
        assert shown[text]["fallback behavior"] == "fallback allowed"
        cur.execute(f"DROP CACHE {shown[text]['name']}")
        assert text not in rows_of(cur, "SHOW CACHES")
        cur.execute("SELECT name FROM cc1 WHERE grp = 1")
        assert sorted(cur.fetchall()) == [("a",), ("b",)]
        assert rows_of(cur, "SHOW CACHES")[text]["status"] == "proxied"
        cur.execute("INSERT INTO cc1 VALUES (5, 1, 'e')")
        cur.execute("SELECT name FROM cc1 WHERE grp = 1")
        assert sorted(cur.fetchall()) == [("a",), ("b",), ("e",)]
        proxied = rows_of(cur, "SHOW PROXIED QUERIES")
        assert proxied[text]["readyset supported"] == "yes"
        assert proxied[text]["query id"] == shown[text]["query id"]
        cur.execute(f"CREATE CACHE by_group FROM {proxied[text]['query id']}")
        shown = rows_of(cur, "SHOW CACHES")
        assert shown[text]["name"] == "by_group" and shown[text]["status"] == "cached"
        cur.execute("SELECT name FROM cc1 WHERE grp = 1")
        assert sorted(cur.fetchall()) == [("a",), ("b",), ("e",)]
        cur.execute("DROP ALL CACHES")
        assert all(r["status"] == "proxied" for r in rows_of(cur, "SHOW CACHES").values())
        cur.execute("DROP TABLE cc1")
    finally:
        conn.close()


def test_errors_are_mysql_error_codes(server):
    conn = server.pymysql()
    try:
        cur = conn.cursor()
        setup(cur, "cc2")
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("DROP CACHE no_such_cache")
        assert e.value.args[0] == 1051
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute(
                "CREATE CACHE FROM SELECT id FROM cc2 WHERE id IN (SELECT id FROM cc2 WHERE grp = 1)"
            )
        assert e.value.args[0] == 1235 and "subquery in WHERE" in e.value.args[1]
        cur.execute("SELECT id FROM cc2 WHERE id IN (SELECT id FROM cc2 WHERE grp = 1) ORDER BY id")
        assert cur.fetchall() == ((1,), (2,))
        cur.execute("SHOW PROXIED QUERIES")
        row = [r for r in cur.fetchall() if "IN (SELECT" in r[1]]
        assert row and row[0][2] == "no" and row[0][4] == "subquery in WHERE"
        cur.execute("CREATE CACHE c2 FROM SELECT name FROM cc2 WHERE id = ?")
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("CREATE CACHE c2 FROM SELECT grp FROM cc2 WHERE id = ?")
        assert e.value.args[0] == 1050
        cur.execute("DROP CACHE c2")
        cur.execute("DROP TABLE cc2")
    finally:
        conn.close()


def test_explicit_mode_caches_only_what_was_asked_for(explicit_server):
    base = noria_py.connect(dataflow=False)  # every answer from base storage
    conn = explicit_server.pymysql()
    try:
        cur = conn.cursor()
        setup(cur, "cc3", base)
        queries = [
            "SELECT name FROM cc3 WHERE grp = {}",
            "SELECT grp, COUNT(*) FROM cc3 WHERE grp = {} GROUP BY grp",
        ]

        def check():
            for q in queries:
                for v in (1, 2, 3):
                    cur.execute(q.format(v))
                    got = sorted(cur.fetchall())
                    assert got == sorted(base.execute(q.format(v)).fetchall()), q

        check()
        cur.execute("SHOW CACHES")
        assert [r for r in cur.fetchall() if r[2] == "cached"] == []
        shapes = rows_of(cur, "SHOW PROXIED QUERIES")
        assert shapes["SELECT name FROM cc3 WHERE grp = ?"]["count"] == 3
        cur.execute("CREATE CACHE FROM SELECT name FROM cc3 WHERE grp = 9")
        cached = [r for r in rows_of(cur, "SHOW CACHES").values() if r["status"] == "cached"]
        assert [r["query"] for r in cached] == ["SELECT name FROM cc3 WHERE grp = ?"]
        check()
        write = "UPDATE cc3 SET grp = 2 WHERE id = 1"
        cur.execute(write)
        base.execute(write)
        check()
        shown = rows_of(cur, "SHOW CACHES")
        assert shown["SELECT name FROM cc3 WHERE grp = ?"]["count"] >= 6
        cur.execute(f"DROP CACHE {cached[0]['name']}")
        write = "INSERT INTO cc3 VALUES (7, 2, 'g')"
        cur.execute(write)
        base.execute(write)
        check()
        cur.execute("DROP TABLE cc3")
    finally:
        conn.close()
        base.close()


def test_prepared_statements_follow_creates_and_drops(explicit_server):
    import mysql.connector

    base = noria_py.connect(dataflow=False)
    conn = explicit_server.connector()
    admin = explicit_server.pymysql()
    try:
        acur = admin.cursor()
        setup(acur, "cc4", base)
        text = "SELECT name FROM cc4 WHERE grp = %s"
        cur = conn.cursor(prepared=True)

        def check(v):
            cur.execute(text, (v,))
            got = sorted(tuple(r) for r in cur.fetchall())
            want = sorted(base.execute(text.replace("%s", "?"), (v,)).fetchall())
            assert got == want

        check(1)
        acur.execute("CREATE CACHE p4 FROM SELECT name FROM cc4 WHERE grp = ?")
        check(1)
        check(2)
        acur.execute("DROP CACHE p4")
        for write in ("INSERT INTO cc4 VALUES (8, 1, 'h')", "DELETE FROM cc4 WHERE id = 2"):
            acur.execute(write)
            base.execute(write)
        check(1)
        check(2)
        acur.execute("CREATE CACHE p4 FROM SELECT name FROM cc4 WHERE grp = ?")
        acur.execute("UPDATE cc4 SET grp = 1 WHERE id = 3")
        base.execute("UPDATE cc4 SET grp = 1 WHERE id = 3")
        check(1)
        check(2)
        acur.execute("DROP TABLE cc4")
    except mysql.connector.Error:
        raise
    finally:
        conn.close()
        admin.close()
        base.close()

"""EXPLAIN over the wire: the plan of the parameterized query the server runs for a text with
literals, columns by name, the reason a query is proxied, and no cache installed by EXPLAIN."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.wire


@pytest.fixture(scope="module")
def db(server):
    conn = server.pymysql()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS ex_items")
    cur.execute("CREATE TABLE ex_items (id INT PRIMARY KEY, name VARCHAR(20), qty INT)")
    cur.execute("INSERT INTO ex_items VALUES (1, 'a', 5), (2, 'b', 6)")
    yield cur
    cur.execute("DROP TABLE IF EXISTS ex_items")
    conn.close()


def caches(cur) -> list:
    cur.execute("SHOW CACHES")
    return cur.fetchall()


def test_explain_of_a_literal_installs_nothing_and_shows_the_lookup(db):
    before = caches(db)
    db.execute("EXPLAIN SELECT name FROM ex_items WHERE id = 1")
    rows = db.fetchall()
    assert [d[0] for d in db.description][:3] == ["node", "operator", "description"]
    assert [r[1] for r in rows] == ["base", "project", "reader"]
    assert rows[-1][2].startswith("reader key (id)")  # the parameterized lookup, no filter
    assert caches(db) == before
    # the query itself then installs the plan EXPLAIN showed, and EXPLAIN shows it reused
    db.execute("SELECT name FROM ex_items WHERE id = 2")
    assert db.fetchall() == (("b",),)
    assert len(caches(db)) == len(before) + 1
    db.execute("EXPLAIN SELECT name FROM ex_items WHERE id = 7")
    assert all(r[7] == "no" for r in db.fetchall())  # the installed query's own nodes
    assert len(caches(db)) == len(before) + 1


def test_explain_names_why_a_query_is_proxied(db):
    before = caches(db)
    db.execute("EXPLAIN SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM ex_items")
    ((node, op, why, *_),) = db.fetchall()
    assert op == "proxied" and "window functions" in why
    assert caches(db) == before


def test_explain_as_a_prepared_statement(server, db):
    conn = server.connector()
    cur = conn.cursor(prepared=True)
    cur.execute("EXPLAIN SELECT qty FROM ex_items WHERE name = ?", ("a",))
    rows = cur.fetchall()
    assert rows[-1][1] == "reader" and "name" in rows[-1][2]
    conn.close()


def test_describe_of_a_table_still_describes(db):
    db.execute("EXPLAIN ex_items")
    assert [r[0] for r in db.fetchall()] == ["id", "name", "qty"]


def test_explain_of_a_bad_query_is_its_error_and_installs_nothing(db):
    import pymysql

    before = caches(db)
    with pytest.raises(pymysql.err.OperationalError) as info:
        db.execute("EXPLAIN SELECT nope FROM ex_items WHERE id = 1")
    assert info.value.args[0] == 1054
    with pytest.raises(pymysql.err.ProgrammingError) as info:
        db.execute("EXPLAIN SELECT name FROM no_such_table WHERE id = 1")
    assert info.value.args[0] == 1146
    assert caches(db) == before
    db.execute("SELECT COUNT(*) FROM ex_items")  # the connection goes on
    assert db.fetchall() == ((2,),)

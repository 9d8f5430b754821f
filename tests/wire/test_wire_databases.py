"""Several databases over the wire: the login database (1049 when unknown), USE and
COM_INIT_DB, the same statement text answered per database on every path the server has (text
queries lifted to cached lookups, prepared statements, the lock-free fast paths), and
SQLAlchemy's inspector and Core with ``schema=``."""

from __future__ import annotations

import pymysql
import pytest


def _setup(server) -> None:
    with server.pymysql() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS wdb")
        cur.execute("DROP TABLE IF EXISTS wdb.kv")
        cur.execute("DROP TABLE IF EXISTS kv")
        cur.execute("CREATE TABLE kv (k INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("CREATE TABLE wdb.kv (k INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO kv VALUES (1, 'home-1'), (2, 'home-2')")
        cur.execute("INSERT INTO wdb.kv VALUES (1, 'wdb-1'), (2, 'wdb-2')")


def test_login_to_an_unknown_database_is_refused(server):
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.pymysql(database="no_such_db")
    assert info.value.args[0] == 1049
    with server.pymysql() as conn, conn.cursor() as cur:  # the server is fine
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)


def test_the_same_text_reads_each_connections_database(server):
    _setup(server)
    home = server.pymysql()
    other = server.pymysql(database="wdb")
    for _ in range(5):  # repeated: the lifted lookup plans and the fast path
        for conn, want in ((home, "home"), (other, "wdb")):
            with conn.cursor() as cur:
                cur.execute("SELECT v FROM kv WHERE k = 1")
                assert cur.fetchall() == ((f"{want}-1",),)
                cur.execute("SELECT COUNT(*), MIN(v) FROM kv")
                assert cur.fetchall() == ((2, f"{want}-1"),)
    # COM_INIT_DB switches a connection's database; the same text follows it
    home.select_db("wdb")
    with home.cursor() as cur:
        cur.execute("SELECT v FROM kv WHERE k = 2")
        assert cur.fetchall() == (("wdb-2",),)
        cur.execute("SELECT DATABASE()")
        assert cur.fetchall() == (("wdb",),)
    with pytest.raises(pymysql.err.OperationalError) as info:
        home.select_db("no_such_db")
    assert info.value.args[0] == 1049
    with home.cursor() as cur:
        cur.execute("USE noria")
        cur.execute("SELECT v FROM kv WHERE k = 2")
        assert cur.fetchall() == (("home-2",),)
        cur.execute("UPDATE wdb.kv SET v = 'changed' WHERE k = 2")
    with other.cursor() as cur:
        cur.execute("SELECT v FROM kv WHERE k = 2")
        assert cur.fetchall() == (("changed",),)
    home.close()
    other.close()


def test_prepared_statements_per_database(server):
    _setup(server)
    a = server.connector()
    b = server.connector(database="wdb")
    for _ in range(4):
        for conn, want in ((a, "home"), (b, "wdb")):
            cur = conn.cursor(prepared=True)
            cur.execute("SELECT v FROM kv WHERE k = ?", (2,))
            assert cur.fetchall() == [(f"{want}-2",)]
            cur.close()
    cur = a.cursor(prepared=True)
    cur.execute("SELECT v FROM wdb.kv WHERE k = ?", (1,))
    assert cur.fetchall() == [("wdb-1",)]
    cur.close()
    a.close()
    b.close()


def test_sqlalchemy_schema_argument(server):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    from sqlalchemy import Column, Integer, MetaData, String, Table, inspect, select

    _setup(server)
    engine = sqlalchemy.create_engine(server.url())
    meta = MetaData(schema="wdb")
    notes = Table(
        "notes", meta, Column("id", Integer, primary_key=True), Column("body", String(20))
    )
    meta.drop_all(engine)
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(notes.insert(), [{"id": 1, "body": "a"}, {"id": 2, "body": "b"}])
    with engine.connect() as conn:
        assert conn.execute(select(notes.c.body).where(notes.c.id == 2)).all() == [("b",)]
    insp = inspect(engine)
    assert "wdb" in insp.get_schema_names()
    assert set(insp.get_table_names(schema="wdb")) >= {"kv", "notes"}
    assert "notes" not in insp.get_table_names()
    cols = insp.get_columns("notes", schema="wdb")
    assert [c["name"] for c in cols] == ["id", "body"]
    assert insp.has_table("notes", schema="wdb") and not insp.has_table("notes")
    meta.drop_all(engine)
    assert "notes" not in inspect(engine).get_table_names(schema="wdb")
    engine.dispose()

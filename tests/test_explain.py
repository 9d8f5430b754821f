"""EXPLAIN: nodes by column name, why a query is proxied, literals explained as parameters,
and ``Engine.explain`` (the server's EXPLAIN) installing nothing."""

from __future__ import annotations

import pytest

import noria_py


@pytest.fixture
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(50), author INT)")
    c.execute("CREATE TABLE votes (uid INT, story_id INT, PRIMARY KEY (uid, story_id))")
    c.execute("INSERT INTO stories VALUES (1, 'a', 7), (2, 'b', 8)")
    c.execute("INSERT INTO votes VALUES (1, 1), (2, 1), (3, 2)")
    yield c
    c.close()


def plan(conn, sql: str) -> list[tuple]:
    return conn.execute("EXPLAIN " + sql).fetchall()


def caches(conn) -> int:
    return len(conn.execute("SHOW CACHES").fetchall())


def test_nodes_name_their_columns(conn):
    rows = plan(conn, "SELECT title, author FROM stories WHERE id = ?")
    text = " | ".join(r[2] for r in rows)
    assert "#" not in text
    project = [r for r in rows if r[1] == "project"][0]
    assert project[2] == "project title,author,id"
    reader = [r for r in rows if r[1] == "reader"][0]
    assert reader[2].startswith("reader key (id)") and reader[5] == "id"


def test_join_columns_are_qualified_by_table(conn):
    sql = (
        "SELECT s.title, COUNT(*) FROM stories s JOIN votes v ON s.id = v.story_id"
        " WHERE s.id = ? GROUP BY s.title"
    )
    rows = plan(conn, sql)
    agg = [r for r in rows if r[1] == "aggregate"][0]
    assert agg[2].startswith("aggregate by stories.title,stories.id: COUNT(*)")
    assert "#" not in " ".join(r[2] + r[5] for r in rows)


def test_filter_and_order_by_name(conn):
    rows = plan(conn, "SELECT title FROM stories WHERE author > 3 AND id = ? ORDER BY title")
    assert [r[2] for r in rows if r[1] == "filter"] == ["filter author > 3"]
    assert "order title" in [r[2] for r in rows if r[1] == "reader"][0]


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM stories", "window functions"),
        ("SELECT id FROM stories WHERE author = ? UNION SELECT uid FROM votes", "UNION"),
        ("SELECT id FROM stories WHERE id IN (SELECT story_id FROM votes)", "subquery"),
    ],
)
def test_proxied_query_names_the_construct(conn, sql, construct):
    rows = plan(conn, sql)
    assert len(rows) == 1 and rows[0][1] == "proxied"
    assert rows[0][2].startswith("executed on base storage (SQLite): ")
    assert construct in rows[0][2]
    # the reason is kept: asked again (the query is installed as proxied now) it is the same
    assert plan(conn, sql) == rows


def test_proxied_because_dataflow_is_off():
    c = noria_py.connect(dataflow=False)
    c.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    (row,) = plan(c, "SELECT id FROM t WHERE id = ?")
    assert "dataflow=False" in row[2]
    c.close()


def test_literal_is_explained_as_the_parameterized_query(conn):
    lit = plan(conn, "SELECT title FROM stories WHERE id = 1")
    assert not any(r[1] == "filter" for r in lit)  # no literal filter of its own
    assert [r for r in lit if r[1] == "reader"][0][2].startswith("reader key (id)")
    # and running the literal text afterwards reuses what EXPLAIN described: one cache
    n = caches(conn)
    assert conn.execute("SELECT title FROM stories WHERE id = 2").fetchall() == [("b",)]
    assert caches(conn) == n


def test_literal_kept_without_lifting():
    c = noria_py.connect(lift_literals=False)
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    rows = plan(c, "SELECT a FROM t WHERE id = 1")
    assert [r[2] for r in rows if r[1] == "filter"] == ["filter id = 1"]
    c.close()


def test_engine_explain_installs_nothing(conn):
    eng = conn.engine
    before = (caches(conn), len(eng.graph.nodes))
    res = eng.explain("EXPLAIN SELECT title FROM stories WHERE id = 1")
    assert [r[1] for r in res.rows] == ["base", "project", "reader"]
    assert res.rows[-1][4] == "partial"
    res = eng.explain("EXPLAIN SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM stories")
    assert "window functions" in res.rows[0][2]
    assert (caches(conn), len(eng.graph.nodes)) == before
    # the plan it described is the one running the query installs
    dry = eng.explain("EXPLAIN SELECT title FROM stories WHERE id = ?").rows
    conn.execute("SELECT title FROM stories WHERE id = ?", (1,))
    installed = eng.explain("EXPLAIN SELECT title FROM stories WHERE id = ?").rows

    def shape(rows):
        return [(r[1], r[2].split(" from node")[0], r[4], r[5]) for r in rows]

    assert shape(dry) == shape(installed)
    assert caches(conn) == before[0] + 1


def test_engine_explain_leaves_base_storage_indexes_alone(conn):
    def indexes():
        return conn.engine.storage.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'"
        ).fetchall()

    before = indexes()
    conn.engine.explain("EXPLAIN SELECT uid FROM votes WHERE story_id = ?")
    assert indexes() == before
    conn.execute("SELECT uid FROM votes WHERE story_id = ?", (1,))
    assert indexes() != before  # installing it does make the index the plan asks for


def test_engine_explain_of_other_statements_runs_them(conn):
    assert conn.engine.explain("EXPLAIN stories").columns[0] == "Field"


def test_explain_takes_the_statements_parameters():
    """``EXPLAIN SELECT ... WHERE id = ?`` with a value for the placeholder (as a driver sends a
    prepared EXPLAIN) plans the query; without one too; with too many it is an error."""
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    with_value = conn.execute("EXPLAIN SELECT v FROM t WHERE id = ?", (1,)).fetchall()
    without = conn.execute("EXPLAIN SELECT v FROM t WHERE id = ?").fetchall()
    assert with_value == without and with_value
    with pytest.raises(noria_py.ProgrammingError, match="bindings"):
        conn.execute("EXPLAIN SELECT v FROM t WHERE id = ?", (1, 2))
    conn.close()

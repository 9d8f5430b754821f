"""The shared graph: node reuse by signature, migrations on live data, the statement cache."""

from __future__ import annotations

import sqlite3

import pytest

import noria_py
from noria_py.sql import parse as parse_mod


@pytest.fixture
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(50), author INT)")
    c.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    c.execute("CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20))")
    c.executemany("INSERT INTO stories VALUES (?, ?, ?)", [(i, f"s{i}", i % 3) for i in range(10)])
    c.executemany("INSERT INTO users VALUES (?, ?)", [(i, f"u{i}") for i in range(3)])
    c.executemany("INSERT INTO votes VALUES (?, ?)", [(u, s) for u in range(3) for s in range(5)])
    yield c
    c.close()


def nodes(c) -> int:
    return len(c.engine.graph.nodes)


def test_same_query_twice_adds_no_node(conn):
    q = "SELECT title FROM stories WHERE author = ?"
    conn.execute(q, (1,))
    n = nodes(conn)
    # other text, same plan (whitespace and case of keywords differ)
    conn.execute("select title  from stories where author = ?", (2,))
    assert nodes(conn) == n
    caches = conn.execute("SHOW CACHES").fetchall()
    assert len(caches) == 1 and caches[0][4] + caches[0][5] == 2  # one query, read twice


def test_queries_sharing_a_join_share_it(conn):
    conn.execute(
        "SELECT s.title, u.name FROM stories s JOIN users u ON s.author = u.id WHERE s.id = ?", (1,)
    )
    joins_before = [n for n in conn.engine.graph.nodes.values() if n.kind == "join"]
    n = nodes(conn)
    conn.execute(
        "SELECT s.title, u.name FROM stories s JOIN users u ON s.author = u.id WHERE u.id = ?", (1,)
    )
    joins_after = [n for n in conn.engine.graph.nodes.values() if n.kind == "join"]
    assert len(joins_before) == len(joins_after) == 1
    # only a new projection and a new reader
    assert nodes(conn) == n + 2
    rows = conn.execute(
        "EXPLAIN SELECT s.title, u.name FROM stories s JOIN users u "
        "ON s.author = u.id WHERE u.id = ?"
    ).fetchall()
    by_kind = {r[1]: r[7] for r in rows}
    assert by_kind["join"] == "yes" and by_kind["base"] == "yes"


def test_a_parenthesized_leading_join_is_maintained_as_the_plain_join(conn):
    """MySQL writes a view's joins as ``FROM ((a JOIN b ON ..) LEFT JOIN c ON ..)``: the same
    query as without the parentheses, and maintained like it."""
    nested = (
        "SELECT s.title, u.name, COUNT(v.user_id) FROM ((stories s JOIN users u "
        "ON (u.id = s.author)) LEFT JOIN votes v ON (v.story_id = s.id)) "
        "WHERE s.author = ? GROUP BY s.id, s.title, u.name"
    )
    plain = (
        nested.replace("((", "").replace("s.id)) ", "s.id) ").replace("s.author)) ", "s.author) ")
    )
    plain = plain.replace("(u.id = s.author)", "u.id = s.author")
    assert "((" not in plain and "))" not in plain
    assert conn.execute(f"EXPLAIN {nested}").fetchall()[0][1] != "proxied"
    conn.execute("INSERT INTO votes VALUES (9, 1)")
    got = sorted(conn.execute(nested, (1,)).fetchall())
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE stories (id INT PRIMARY KEY, title TEXT, author INT)")
    db.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    db.execute("CREATE TABLE users (id INT PRIMARY KEY, name TEXT)")
    for t in ("stories", "votes", "users"):
        rows = conn.execute(f"SELECT * FROM {t}").fetchall()
        db.executemany(f"INSERT INTO {t} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    assert got == sorted(db.execute(plain, (1,)).fetchall())
    assert got and any(r[2] == 4 for r in got)


def test_view_reused_by_queries_over_it(conn):
    conn.execute("CREATE VIEW vc AS SELECT story_id, COUNT(*) AS n FROM votes GROUP BY story_id")
    n = nodes(conn)
    assert conn.execute("SELECT n FROM vc WHERE story_id = ?", (1,)).fetchall() == [(3,)]
    aggs = [x for x in conn.engine.graph.nodes.values() if x.kind == "aggregate"]
    assert len(aggs) == 1
    assert nodes(conn) == n + 2  # a filter-free projection + reader keyed by story_id


def test_new_query_on_live_data_sees_everything_and_stays_current(conn):
    q1 = "SELECT story_id, COUNT(*) FROM votes WHERE story_id = ? GROUP BY story_id"
    assert conn.execute(q1, (2,)).fetchall() == [(2, 3)]
    conn.execute("INSERT INTO votes VALUES (9, 2)")
    # a second query installed after writes: its join replays the current contents
    q2 = (
        "SELECT s.title, COUNT(v.user_id) FROM stories s LEFT JOIN votes v "
        "ON v.story_id = s.id WHERE s.id = ? GROUP BY s.id, s.title"
    )
    assert conn.execute(q2, (2,)).fetchall() == [("s2", 4)]
    conn.execute("DELETE FROM votes WHERE user_id = 0")
    assert conn.execute(q1, (2,)).fetchall() == [(2, 3)]
    assert conn.execute(q2, (2,)).fetchall() == [("s2", 3)]
    assert conn.execute(q2, (7,)).fetchall() == [("s7", 0)]


def test_dropping_a_view_removes_nodes_no_one_else_uses(conn):
    base = nodes(conn)
    conn.execute("CREATE VIEW a AS SELECT author, COUNT(*) AS n FROM stories GROUP BY author")
    with_a = nodes(conn)
    conn.execute("CREATE VIEW b AS SELECT author, COUNT(*) AS n FROM stories GROUP BY author")
    # b shares everything with a except its reader? both read the same plan: no new node
    assert nodes(conn) == with_a
    conn.execute("DROP VIEW a")
    assert nodes(conn) == with_a  # still used by b
    assert conn.execute("SELECT n FROM b WHERE author = ?", (0,)).fetchall() == [(4,)]
    conn.execute("DROP VIEW b")
    # only the queries installed by the SELECT above remain
    remaining = {n.kind for n in conn.engine.graph.nodes.values()}
    assert nodes(conn) < with_a + 2
    assert base <= nodes(conn)
    assert "base" in remaining


def test_statement_text_is_parsed_once(conn, monkeypatch):
    calls = []
    real = parse_mod.parse

    def counting(sql):
        calls.append(sql)
        return real(sql)

    monkeypatch.setattr("noria_py.engine.core.parse", counting)
    q = "SELECT title FROM stories WHERE id = ?"
    for i in range(50):
        conn.execute(q, (i % 10,))
    ins = "INSERT INTO votes (user_id, story_id) VALUES (?, ?)"
    for i in range(20):
        conn.execute(ins, (i, i))
    assert calls.count(q) == 1
    assert calls.count(ins) == 1


def test_views_match_sqlite_after_mixed_writes(conn):
    queries = [
        "SELECT s.id, s.title, COUNT(v.user_id) FROM stories s LEFT JOIN votes v "
        "ON v.story_id = s.id GROUP BY s.id, s.title",
        "SELECT u.name, COUNT(*) FROM votes v JOIN users u ON u.id = v.user_id GROUP BY u.name",
        "SELECT DISTINCT author FROM stories",
        "SELECT title FROM stories WHERE author = 1 UNION ALL SELECT name FROM users",
    ]
    for q in queries:
        conn.execute(q)
    conn.execute("UPDATE stories SET author = 2 WHERE id < 4")
    conn.execute("DELETE FROM votes WHERE story_id = 3")
    conn.execute("UPDATE votes SET story_id = 8 WHERE user_id = 1 AND story_id = 0")
    conn.execute("INSERT INTO users VALUES (7, 'u7')")
    conn.execute("INSERT INTO votes VALUES (7, 9), (7, 9)")
    ref = sqlite3.connect(":memory:")
    for t in ("stories", "votes", "users"):
        rows = conn.execute(f"SELECT * FROM {t}").fetchall()
        cols = len(rows[0])
        ref.execute(f"CREATE TABLE {t} ({', '.join(f'c{i}' for i in range(cols))})")
        ref.executemany(f"INSERT INTO {t} VALUES ({', '.join('?' * cols)})", rows)
    ref.execute("ALTER TABLE stories RENAME c0 TO id")
    ref.execute("ALTER TABLE stories RENAME c1 TO title")
    ref.execute("ALTER TABLE stories RENAME c2 TO author")
    ref.execute("ALTER TABLE votes RENAME c0 TO user_id")
    ref.execute("ALTER TABLE votes RENAME c1 TO story_id")
    ref.execute("ALTER TABLE users RENAME c0 TO id")
    ref.execute("ALTER TABLE users RENAME c1 TO name")
    for q in queries:
        got = sorted(conn.execute(q).fetchall(), key=repr)
        want = sorted(ref.execute(q).fetchall(), key=repr)
        assert got == want, q


def test_plain_read_of_a_view_with_its_own_limit_is_maintained(conn):
    # found by the differential tests: ORDER BY may name view outputs the outer query drops
    conn.execute(
        "CREATE VIEW v0 AS SELECT id AS c0, id AS c1, author AS c2 FROM stories "
        "ORDER BY c2 DESC, c1 DESC LIMIT 2"
    )
    assert conn.execute("SELECT c0 FROM v0").fetchall() == [(8,), (5,)]
    conn.execute("DELETE FROM stories WHERE id = 8")
    assert conn.execute("SELECT c0 FROM v0").fetchall() == [(5,), (2,)]
    statuses = {r[1]: r[2] for r in conn.execute("SHOW CACHES")}
    assert statuses["SELECT c0 FROM v0"] == "cached"
    # anything around the limited view acts after the limit: proxied, still correct
    assert conn.execute("SELECT c0 FROM v0 WHERE c0 < 5").fetchall() == [(2,)]


def test_order_by_inside_a_subquery_or_view_adds_no_column(conn):
    # an ORDER BY on a column the subquery does not select must not leak a hidden column
    q = "SELECT * FROM (SELECT id FROM stories WHERE id < 3 ORDER BY author DESC) x"
    assert sorted(conn.execute(q).fetchall()) == [(0,), (1,), (2,)]
    conn.execute("CREATE VIEW vo AS SELECT id FROM stories WHERE id < 2 ORDER BY title")
    assert sorted(conn.execute("SELECT * FROM vo").fetchall()) == [(0,), (1,)]


def readers(c) -> list:
    return [n for n in c.engine.graph.nodes.values() if n.kind == "reader"]


@pytest.mark.parametrize("partial", [True, False])
def test_a_view_holds_no_reader_of_its_own_until_read(partial):
    # A view is read through the queries over it: CREATE VIEW installs and maintains its
    # operators, but no reader holding (and rebuilding on every write) the whole view.
    c = noria_py.connect(partial=partial)
    c.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    c.executemany("INSERT INTO votes VALUES (?, ?)", [(u, s) for u in range(3) for s in range(4)])
    c.execute("CREATE VIEW tally AS SELECT story_id, COUNT(*) AS n FROM votes GROUP BY story_id")
    assert readers(c) == []
    aggs = [n for n in c.engine.graph.nodes.values() if n.kind == "aggregate"]
    assert len(aggs) == 1 and aggs[0].materialization == "full"  # as the view's reader had it
    row = {r[0]: r for r in c.execute("SHOW CACHES")}["tally"]
    assert row[2] == "cached" and row[3] is None and row[6] is None
    c.execute("INSERT INTO votes VALUES (9, 1)")
    # a query over the view shares its operators
    assert c.execute("SELECT n FROM tally WHERE story_id = ?", (1,)).fetchall() == [(4,)]
    assert len([n for n in c.engine.graph.nodes.values() if n.kind == "aggregate"]) == 1
    # reading the whole view installs a reader like any query, built from the view's state
    assert sorted(c.execute("SELECT * FROM tally").fetchall()) == [(0, 3), (1, 4), (2, 3), (3, 3)]
    assert len(readers(c)) == 2
    c.execute("DELETE FROM votes WHERE story_id = 0")
    assert sorted(c.execute("SELECT * FROM tally").fetchall()) == [(1, 4), (2, 3), (3, 3)]
    assert c.execute("SELECT n FROM tally WHERE story_id = ?", (1,)).fetchall() == [(4,)]
    c.execute("DROP VIEW tally")
    assert (
        readers(c) == []
        and c.engine.graph.nodes
        and all(n.kind == "base" for n in c.engine.graph.nodes.values())
    )
    c.close()


def test_a_view_created_again_answers_with_its_new_definition(conn):
    conn.execute("CREATE VIEW v AS SELECT id, author FROM stories WHERE id > 1")
    conn.execute("CREATE VIEW w AS SELECT id FROM v WHERE id < 5")
    assert conn.execute("SELECT id FROM v WHERE author = ?", (1,)).fetchall() == [(4,), (7,)]
    assert conn.execute("SELECT * FROM w").fetchall() == [(2,), (3,), (4,)]
    conn.execute("DROP VIEW v")
    with pytest.raises(noria_py.ProgrammingError):
        conn.execute("SELECT id FROM v WHERE author = ?", (1,))
    with pytest.raises(noria_py.ProgrammingError):
        conn.execute("SELECT * FROM w")
    conn.execute("CREATE VIEW v AS SELECT id, author FROM stories WHERE id > 5")
    # queries over the old definition were installed; they must not answer any more
    assert conn.execute("SELECT id FROM v WHERE author = ?", (1,)).fetchall() == [(7,)]
    assert conn.execute("SELECT * FROM w").fetchall() == []
    conn.execute("CREATE OR REPLACE VIEW v AS SELECT id, author FROM stories WHERE id < 3")
    assert conn.execute("SELECT id FROM v WHERE author = ?", (1,)).fetchall() == [(1,)]
    assert conn.execute("SELECT * FROM w").fetchall() == [(0,), (1,), (2,)]

"""Cache commands (noria_py/cache_commands.py) in the embedded API: CREATE CACHE, DROP CACHE,
DROP ALL CACHES, SHOW CACHES, SHOW PROXIED QUERIES, and caching="auto" | "explicit".

A dropped query keeps answering (from base storage) exactly as before; its reader and every node
no other query uses leave the graph with their state; what stays passes the partial-state audit
against a fully materialized twin."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E
from noria_py.dataflow.audit import audit

SCHEMA = [
    "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20))",
    "CREATE TABLE stories (id INT PRIMARY KEY, author INT, score INT, title VARCHAR(20))",
]

BY_AUTHOR = "SELECT id, title FROM stories WHERE author = ?"
WITH_NAME = "SELECT s.id, u.name FROM stories s JOIN users u ON s.author = u.id WHERE s.author = ?"
WITH_TITLE = (
    "SELECT s.title, u.name FROM stories s JOIN users u ON s.author = u.id WHERE s.author = ?"
)
TOTALS = "SELECT author, COUNT(*), SUM(score) FROM stories WHERE author = ? GROUP BY author"
UNSUPPORTED = "SELECT id FROM stories WHERE author IN (SELECT id FROM users WHERE name = ?)"
QUERIES = [BY_AUTHOR, WITH_NAME, WITH_TITLE, TOTALS]


def fill(conn) -> None:
    for sql in SCHEMA:
        conn.execute(sql)
    conn.executemany("INSERT INTO users VALUES (?, ?)", [(i, f"u{i}") for i in range(1, 5)])
    conn.executemany(
        "INSERT INTO stories VALUES (?, ?, ?, ?)",
        [(i, i % 4 + 1, i * 3 % 7, f"t{i}") for i in range(1, 21)],
    )


@pytest.fixture
def conn():
    c = noria_py.connect()
    fill(c)
    yield c
    c.close()


def caches(conn) -> dict:
    """SHOW CACHES by name: the row as a dict of column -> value."""
    cur = conn.execute("SHOW CACHES")
    names = [d[0] for d in cur.description]
    return {r[0]: dict(zip(names, r)) for r in cur.fetchall()}


def cached(conn) -> dict:
    """query text -> cache name, for the cached queries only."""
    return {r["query"]: n for n, r in caches(conn).items() if r["status"] == "cached"}


def proxied(conn) -> dict:
    cur = conn.execute("SHOW PROXIED QUERIES")
    names = [d[0] for d in cur.description]
    return {r[1]: dict(zip(names, r)) for r in cur.fetchall()}


def twin_audit(conn, texts) -> list[str]:
    """Partial-state audit of ``conn``'s graph against a fully materialized twin holding the
    same rows and the queries ``texts``."""
    twin = noria_py.connect(partial=False, lookup_joins=False)
    for sql in SCHEMA:
        twin.execute(sql)
    for table in ("users", "stories"):
        rows = conn.engine.storage.scan(table)
        if rows:
            marks = ",".join("?" * len(rows[0]))
            twin.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    for t in texts:
        twin.engine.prepare(t)
    try:
        return audit(conn.engine.graph, twin.engine.graph)
    finally:
        twin.close()


def graph_problems(conn) -> list[str]:
    """Graph-wide bookkeeping after drops: every edge joins nodes in the graph, every
    operator has a user, the signature index matches the nodes."""
    g = conn.engine.graph
    out = []
    for n in g.nodes.values():
        for p in n.parents:
            if p.id not in g.nodes:
                out.append(f"{n} reads removed {p}")
        for c, _port in n.children:
            if c.id not in g.nodes:
                out.append(f"{n} feeds removed {c}")
        if n.kind != "base" and n.refcount <= 0:
            out.append(f"{n} has no query")
        if g.by_signature.get(n.signature) is not n:
            out.append(f"{n} missing from the signature index")
    if len(g.by_signature) != len(g.nodes):
        out.append("signature index holds removed nodes")
    return out


def operators(conn) -> set[int]:
    """Ids of the graph's nodes other than base tables (which stay while their table does)."""
    return {i for i, n in conn.engine.graph.nodes.items() if n.kind != "base"}


def state_rows(conn) -> int:
    total = 0
    for n in conn.engine.graph.nodes.values():
        size = n.state_size()
        if size:
            total += size[1]
    return total


# --- CREATE / DROP / SHOW ---------------------------------------------------------------------


def test_drop_cache_answers_from_base_storage_and_keeps_it_proxied(conn):
    before = conn.execute(BY_AUTHOR, (2,)).fetchall()
    name = cached(conn)[BY_AUTHOR]
    conn.execute(f"DROP CACHE {name}")
    assert BY_AUTHOR not in cached(conn)
    assert conn.execute(BY_AUTHOR, (2,)).fetchall() == before
    conn.execute("INSERT INTO stories VALUES (100, 2, 1, 'new')")
    assert sorted(conn.execute(BY_AUTHOR, (2,)).fetchall()) == sorted(before + [(100, "new")])
    # auto mode: a dropped query stays proxied until CREATE CACHE asks for it again
    assert BY_AUTHOR not in cached(conn)
    row = proxied(conn)[BY_AUTHOR]
    assert row["readyset supported"] == "yes" and row["count"] == 2
    assert row["query id"].startswith("q_") and len(row["query id"]) == 18
    conn.execute(f"CREATE CACHE FROM {BY_AUTHOR}")
    assert BY_AUTHOR in cached(conn) and BY_AUTHOR not in proxied(conn)
    assert sorted(conn.execute(BY_AUTHOR, (2,)).fetchall()) == sorted(before + [(100, "new")])


def test_show_caches_keeps_its_columns_and_adds_readysets(conn):
    conn.execute(BY_AUTHOR, (1,))
    conn.execute(UNSUPPORTED, ("u1",))
    cur = conn.execute("SHOW CACHES")
    names = [d[0] for d in cur.description]
    assert names == [
        "name",
        "query",
        "status",
        "keys",
        "hits",
        "misses",
        "bytes",
        "query id",
        "fallback behavior",
        "count",
    ]
    rows = {r[1]: r for r in cur.fetchall()}
    assert rows[BY_AUTHOR][2] == "cached" and rows[BY_AUTHOR][8] == "fallback allowed"
    assert rows[BY_AUTHOR][9] == 1
    assert rows[UNSUPPORTED][2] == "proxied" and rows[UNSUPPORTED][8] is None
    # the lobsters driver's summary reads it as before
    from noria_py.workloads.lobsters.backends import summarize_caches

    summary = summarize_caches(names, list(rows.values()))
    assert summary["cached_queries"] == 1 and summary["proxied_queries"] == 1


def test_create_cache_names_and_query_ids(conn):
    conn.execute(f"CREATE CACHE by_author FROM {BY_AUTHOR}")
    assert cached(conn)[BY_AUTHOR] == "by_author"
    assert (
        conn.execute(BY_AUTHOR, (3,)).fetchall()
        == conn.engine.storage.conn.execute(
            "SELECT id, title FROM stories WHERE author = 3"
        ).fetchall()
    )
    assert caches(conn)["by_author"]["misses"] == 1
    # idempotent: the same query again changes nothing; a new name renames it
    conn.execute(f"CREATE CACHE FROM {BY_AUTHOR}")
    assert cached(conn)[BY_AUTHOR] == "by_author"
    conn.execute(f"CREATE CACHE `stories of` FROM {BY_AUTHOR}")
    assert cached(conn)[BY_AUTHOR] == "stories of"
    assert caches(conn)["stories of"]["misses"] == 1  # the same cache, renamed
    # a name another cache has is refused
    conn.execute(f"CREATE CACHE totals FROM {TOTALS}")
    with pytest.raises(E.ProgrammingError) as e:
        conn.execute(f"CREATE CACHE totals FROM {WITH_NAME}")
    assert e.value.errno == 1050 and "totals" in str(e.value)
    # no name: the query id
    conn.execute(f"CREATE CACHE FROM {WITH_NAME}")
    row = caches(conn)[cached(conn)[WITH_NAME]]
    assert row["name"] == row["query id"]
    one = conn.execute(f"SHOW CACHES WHERE query_id = '{row['query id']}'").fetchall()
    assert [r[1] for r in one] == [WITH_NAME]
    # DROP CACHE takes the name or the query id
    conn.execute("DROP CACHE `stories of`")
    conn.execute(f"DROP CACHE {row['query id']}")
    assert set(cached(conn)) == {TOTALS}


def test_create_cache_from_a_proxied_query_id():
    c = noria_py.connect(caching="explicit")
    fill(c)
    c.execute(TOTALS, (1,))
    qid = proxied(c)[TOTALS]["query id"]
    c.execute(f"CREATE CACHE t FROM {qid}")
    assert cached(c) == {TOTALS: "t"}
    assert caches(c)["t"]["query id"] == qid
    with pytest.raises(E.ProgrammingError):
        c.execute("CREATE CACHE FROM q_0123456789abcdef")
    c.close()


def test_create_cache_of_what_the_dataflow_cannot_keep_is_1235(conn):
    with pytest.raises(E.NotSupportedError) as e:
        conn.execute(f"CREATE CACHE FROM {UNSUPPORTED}")
    assert e.value.errno == 1235 and "parameter that is not `col = ?`" in str(e.value)
    assert conn.execute(UNSUPPORTED, ("u2",)).fetchall() == [(1,), (5,), (9,), (13,), (17,)]
    row = proxied(conn)[UNSUPPORTED]
    assert row["readyset supported"] == "no" and row["reason"] in str(e.value)
    with pytest.raises(E.Error) as e:
        conn.execute("CREATE CACHE FROM INSERT INTO users VALUES (9, 'x')")
    with pytest.raises(E.ProgrammingError) as e:
        conn.execute("CREATE CACHE FROM SELECT * FROM nowhere WHERE id = ?")
    assert e.value.errno == 1146


def test_drop_cache_errors(conn):
    with pytest.raises(E.ProgrammingError) as e:
        conn.execute("DROP CACHE nothing")
    assert e.value.errno == 1051 and "nothing" in str(e.value)
    conn.execute("CREATE VIEW v AS SELECT author, COUNT(*) AS n FROM stories GROUP BY author")
    with pytest.raises(E.ProgrammingError) as e:
        conn.execute("DROP CACHE v")
    assert "DROP VIEW" in str(e.value)
    conn.execute(UNSUPPORTED, ("u1",))
    name = caches(conn)
    name = next(n for n, r in name.items() if r["query"] == UNSUPPORTED)
    with pytest.raises(E.ProgrammingError):
        conn.execute(f"DROP CACHE {name}")  # a proxied query is no cache


def test_literal_queries_share_one_cache_in_explicit_mode():
    c = noria_py.connect(caching="explicit")
    fill(c)
    assert c.execute("SELECT id, title FROM stories WHERE author = 1").fetchall()
    assert c.execute("SELECT id, title FROM stories WHERE author = 2").fetchall()
    assert cached(c) == {}
    assert proxied(c)[BY_AUTHOR]["count"] == 2  # one parameterized shape
    assert not c.engine.graph.nodes  # nothing installed
    c.execute("CREATE CACHE FROM SELECT id, title FROM stories WHERE author = 7")
    assert list(cached(c)) == [BY_AUTHOR] and BY_AUTHOR not in proxied(c)
    want = c.engine.storage.conn.execute(
        "SELECT id, title FROM stories WHERE author = 3"
    ).fetchall()
    assert sorted(c.execute("SELECT id, title FROM stories WHERE author = 3").fetchall()) == sorted(
        want
    )
    assert caches(c)[cached(c)[BY_AUTHOR]]["misses"] == 1
    # other queries stay proxied
    assert c.execute(TOTALS, (1,)).fetchall() == [(1, 5, 19)]
    assert TOTALS not in cached(c)
    c.close()


def test_a_literal_that_does_not_lift_as_written_caches_the_text():
    """`name = 0` compares the strings as numbers in MySQL ('abc' = 0): the parameterized form
    would not answer it, so CREATE CACHE caches the text as written, which its reads use."""
    c = noria_py.connect(caching="explicit")
    c.execute("CREATE TABLE cs (id INT PRIMARY KEY, name VARCHAR(10))")
    c.execute("INSERT INTO cs VALUES (1, 'a'), (2, '0'), (3, 'abc'), (4, '5')")
    c.execute("CREATE CACHE zero FROM SELECT id FROM cs WHERE name = 0")
    assert cached(c) == {"SELECT id FROM cs WHERE name = 0": "zero"}
    assert sorted(c.execute("SELECT id FROM cs WHERE name = 0").fetchall()) == [(1,), (2,), (3,)]
    assert caches(c)["zero"]["count"] == 1
    c.close()


def test_in_lists_of_every_length_follow_their_shared_cache(conn):
    q3 = "SELECT id FROM stories WHERE author IN (?, ?, ?)"
    assert conn.execute(q3, (1, 2, 3)).fetchall()
    [(text, name)] = cached(conn).items()
    assert "IN (?, ?)" in text
    conn.execute(f"DROP CACHE {name}")
    for n in (1, 2, 4):
        marks = ", ".join("?" * n)
        got = conn.execute(f"SELECT id FROM stories WHERE author IN ({marks})", (1, 2, 3, 4)[:n])
        want = conn.engine.storage.conn.execute(
            f"SELECT id FROM stories WHERE author IN ({marks})", (1, 2, 3, 4)[:n]
        )
        assert sorted(got.fetchall()) == sorted(want.fetchall())
    assert cached(conn) == {}  # no length compiled on its own instead
    conn.execute("CREATE CACHE FROM SELECT id FROM stories WHERE author IN (5, 6, 7)")
    assert list(cached(conn)) == [text]


def test_drop_all_caches_and_proxied_queries(conn):
    for q in QUERIES:
        conn.execute(q, (1,))
    conn.execute(UNSUPPORTED, ("u1",))
    assert len(cached(conn)) == 4
    conn.execute("DROP ALL CACHES")
    assert cached(conn) == {}
    assert {n.kind for n in conn.engine.graph.nodes.values()} == {"base"}
    assert {r["readyset supported"] for r in proxied(conn).values()} == {"no"}
    for q in QUERIES:
        conn.execute(q, (1,))
    assert set(proxied(conn)) == set(QUERIES) | {UNSUPPORTED}
    assert cached(conn) == {}
    conn.execute("CREATE VIEW unkept AS SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM users")
    assert conn.execute("SELECT n FROM unkept WHERE id = 2").fetchall() == [(2,)]
    conn.execute("DROP ALL PROXIED QUERIES")
    assert proxied(conn) == {}
    assert "unkept" in caches(conn)  # a view's own entry stays
    assert conn.execute("SELECT n FROM unkept WHERE id = 3").fetchall() == [(3,)]
    cur = conn.execute("SHOW PROXIED SUPPORTED QUERIES")
    assert cur.fetchall() == []


def test_show_proxied_queries_filters():
    c = noria_py.connect(caching="explicit")
    fill(c)
    c.execute(BY_AUTHOR, (1,))
    c.execute(UNSUPPORTED, ("u1",))
    rows = c.execute("SHOW PROXIED SUPPORTED QUERIES").fetchall()
    assert [r[1] for r in rows] == [BY_AUTHOR]
    qid = proxied(c)[UNSUPPORTED]["query id"]
    rows = c.execute(f"SHOW PROXIED QUERIES WHERE query_id = '{qid}'").fetchall()
    assert [(r[1], r[2]) for r in rows] == [(UNSUPPORTED, "no")]
    c.close()


def test_explicit_caches_come_back_after_ddl_with_their_name():
    c = noria_py.connect(caching="explicit")
    fill(c)
    c.execute(f"CREATE CACHE mine FROM {BY_AUTHOR}")
    c.execute("ALTER TABLE stories ADD COLUMN extra INT")
    c.execute(TOTALS, (1,))
    assert c.execute(BY_AUTHOR, (1,)).fetchall()
    assert cached(c) == {BY_AUTHOR: "mine"}
    c.close()


def test_a_user_name_is_never_given_to_another_query(conn):
    conn.execute(f"CREATE CACHE q2 FROM {BY_AUTHOR}")
    conn.execute(TOTALS, (1,))
    conn.execute(WITH_NAME, (1,))
    assert cached(conn)[BY_AUTHOR] == "q2"
    assert len(set(cached(conn).values())) == 3


def test_caches_are_kept_in_the_database_file(tmp_path):
    path = str(tmp_path / "caches.db")
    c = noria_py.connect(path, caching="explicit")
    fill(c)
    c.execute(f"CREATE CACHE mine FROM {BY_AUTHOR}")
    c.execute("CREATE CACHE FROM SELECT id FROM stories WHERE author IN (1, 2, 3)")
    c.execute("ALTER TABLE stories ADD COLUMN extra INT")  # the table's entry moves after them
    c.close()
    c = noria_py.connect(path, caching="explicit")
    assert set(cached(c)) == {BY_AUTHOR, "SELECT id FROM stories WHERE author IN (?, ?)"}
    assert cached(c)[BY_AUTHOR] == "mine"
    want = c.engine.storage.conn.execute("SELECT id, title FROM stories WHERE author = 2")
    assert sorted(c.execute(BY_AUTHOR, (2,)).fetchall()) == sorted(want.fetchall())
    c.execute("DROP CACHE mine")
    c.close()
    # auto mode: the dropped query stays proxied after reopening, until CREATE CACHE
    c = noria_py.connect(path)
    c.execute(BY_AUTHOR, (2,))
    c.execute(TOTALS, (2,))
    assert BY_AUTHOR not in cached(c) and TOTALS in cached(c)
    c.execute(f"CREATE CACHE FROM {BY_AUTHOR}")
    c.close()
    c = noria_py.connect(path)
    c.execute(BY_AUTHOR, (2,))
    assert BY_AUTHOR in cached(c)
    c.close()


def test_processes_sharing_a_file_share_the_cache_commands(tmp_path):
    path = str(tmp_path / "shared.db")
    a = noria_py.connect(path, caching="explicit")
    fill(a)
    b = noria_py.connect(path, caching="explicit")
    a.execute(f"CREATE CACHE mine FROM {BY_AUTHOR}")
    b.execute("INSERT INTO stories VALUES (77, 3, 0, 'b')")  # b catches up first
    assert cached(b) == {BY_AUTHOR: "mine"}
    want = b.engine.storage.conn.execute("SELECT id, title FROM stories WHERE author = 3")
    assert sorted(b.execute(BY_AUTHOR, (3,)).fetchall()) == sorted(want.fetchall())
    b.execute("DROP CACHE mine")
    a.execute("INSERT INTO stories VALUES (78, 3, 0, 'a')")
    assert cached(a) == {}
    assert sorted(a.execute(BY_AUTHOR, (3,)).fetchall()) == sorted(
        a.engine.storage.conn.execute("SELECT id, title FROM stories WHERE author = 3").fetchall()
    )
    a.close()
    b.close()


def test_cache_commands_commit_an_open_transaction_as_ddl_does(conn):
    conn.execute("BEGIN")
    conn.execute("INSERT INTO stories VALUES (90, 1, 0, 'kept')")
    conn.execute(f"CREATE CACHE FROM {BY_AUTHOR}")
    conn.execute("ROLLBACK")  # nothing left to roll back
    assert (90, "kept") in conn.execute(BY_AUTHOR, (1,)).fetchall()


def test_caching_option_is_checked():
    with pytest.raises(E.ProgrammingError) as e:
        noria_py.connect(caching="sometimes")
    assert "'auto' or 'explicit'" in str(e.value)


# --- what DROP frees, and what it leaves --------------------------------------------------------


def test_drop_frees_the_nodes_and_state_of_its_query(conn):
    conn.execute(BY_AUTHOR, (1,))
    nodes = operators(conn)
    rows = state_rows(conn)
    nbytes = conn.engine.graph.state_bytes()
    for a in range(1, 5):
        conn.execute(WITH_NAME, (a,))
        conn.execute(TOTALS, (a,))
    assert len(operators(conn)) > len(nodes) and state_rows(conn) > rows
    conn.execute(f"DROP CACHE {cached(conn)[WITH_NAME]}")
    conn.execute(f"DROP CACHE {cached(conn)[TOTALS]}")
    assert operators(conn) == nodes
    assert state_rows(conn) == rows
    assert conn.engine.graph.state_bytes() == nbytes
    assert graph_problems(conn) == []


def test_drop_gives_back_the_memory_budget():
    c = noria_py.connect(memory_limit="64MB")
    fill(c)
    c.execute(BY_AUTHOR, (1,))
    used = c.engine.graph.evictor.used
    for a in range(1, 5):
        c.execute(WITH_NAME, (a,))
    assert c.engine.graph.evictor.used > used
    c.execute(f"DROP CACHE {cached(c)[WITH_NAME]}")
    assert c.engine.graph.evictor.used == used
    assert set(c.engine.graph.evictor.nodes) <= set(c.engine.graph.nodes)
    c.close()


def test_shared_nodes_survive_the_drop_of_one_cache(conn):
    for a in range(1, 5):
        conn.execute(WITH_NAME, (a,))
        conn.execute(WITH_TITLE, (a,))
    g = conn.engine.graph
    joins = [n for n in g.nodes.values() if n.kind == "join"]
    assert len(joins) == 1 and joins[0].refcount == 2  # one join, both queries
    conn.execute(f"DROP CACHE {cached(conn)[WITH_NAME]}")
    assert joins[0].id in g.nodes and joins[0].refcount == 1
    conn.execute("UPDATE users SET name = 'renamed' WHERE id = 2")
    conn.execute("DELETE FROM stories WHERE id = 5")
    conn.execute("INSERT INTO stories VALUES (50, 2, 0, 'fifty')")
    for a in range(1, 5):
        want = conn.engine.storage.conn.execute(WITH_TITLE.replace("?", str(a))).fetchall()
        assert sorted(conn.execute(WITH_TITLE, (a,)).fetchall()) == sorted(want)
        assert sorted(conn.execute(WITH_NAME, (a,)).fetchall()) == sorted(
            conn.engine.storage.conn.execute(WITH_NAME.replace("?", str(a))).fetchall()
        )
    assert graph_problems(conn) == []
    assert twin_audit(conn, [WITH_TITLE]) == []


@pytest.mark.parametrize(
    "opts",
    [
        {"domains": "threads"},
        {"upqueries": "messages"},
        {"domains": "threads", "upqueries": "direct"},
        {"partial": False},
    ],
    ids=["threads", "messages", "one-thread", "full"],
)
def test_drops_in_every_dataflow_mode(opts):
    c = noria_py.connect(read_your_writes=True, **opts)
    fill(c)
    try:
        for a in range(1, 5):
            for q in (WITH_NAME, WITH_TITLE, TOTALS):
                c.execute(q, (a,))
        c.execute(f"DROP CACHE {cached(c)[WITH_NAME]}")
        c.execute(f"DROP CACHE {cached(c)[TOTALS]}")
        c.execute("INSERT INTO stories VALUES (60, 2, 3, 'x')")
        c.execute("UPDATE users SET name = 'zz' WHERE id = 2")
        c.execute(f"CREATE CACHE FROM {TOTALS}")
        c.execute("DELETE FROM stories WHERE id = 3")
        for a in range(1, 5):
            for q in (WITH_NAME, WITH_TITLE, TOTALS):
                want = c.engine.storage.conn.execute(q.replace("?", str(a))).fetchall()
                assert sorted(c.execute(q, (a,)).fetchall()) == sorted(want), (q, a)
        assert graph_problems(c) == []
    finally:
        c.close()


def test_a_dropped_reader_is_never_read_again(conn):
    """Regression: a statement prepared before DROP CACHE must not keep reading the removed
    reader, which no write updates any more."""
    assert conn.execute(BY_AUTHOR, (1,)).fetchall()
    conn.execute(f"DROP CACHE {cached(conn)[BY_AUTHOR]}")
    before = conn.execute(BY_AUTHOR, (1,)).fetchall()
    conn.execute("INSERT INTO stories VALUES (99, 1, 0, 'late')")
    assert sorted(conn.execute(BY_AUTHOR, (1,)).fetchall()) == sorted(before + [(99, "late")])


# --- differential: drops, creates and writes against SQLite --------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.sampled_from(range(len(QUERIES))), st.integers(1, 3)),
        st.tuples(st.just("drop"), st.sampled_from(range(len(QUERIES))), st.just(0)),
        st.tuples(st.just("create"), st.sampled_from(range(len(QUERIES))), st.just(0)),
        st.tuples(st.just("insert"), st.integers(21, 40), st.integers(1, 3)),
        st.tuples(st.just("delete"), st.integers(1, 40), st.just(0)),
        st.tuples(st.just("move"), st.integers(1, 40), st.integers(1, 3)),
        st.tuples(st.just("rename"), st.integers(1, 3), st.just(0)),
    ),
    max_size=40,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, explicit=st.booleans(), budget=st.booleans())
def test_results_equal_sqlite_through_drops_and_creates(ops, explicit, budget):
    conn = noria_py.connect(
        caching="explicit" if explicit else "auto", memory_limit="2KB" if budget else None
    )
    fill(conn)
    oracle = sqlite3.connect(":memory:")
    fill(oracle)
    try:
        for op, a, b in ops:
            if op == "read":
                q = QUERIES[a]
                got = conn.execute(q, (b,)).fetchall()
                want = oracle.execute(q, (b,)).fetchall()
                assert sorted(got) == sorted(want), (q, b)
            elif op in ("drop", "create"):
                if op == "create":
                    conn.execute(f"CREATE CACHE FROM {QUERIES[a]}")
                else:
                    name = cached(conn).get(QUERIES[a])
                    if name is not None:
                        conn.execute(f"DROP CACHE {name}")
                for b in range(1, 4):
                    assert sorted(conn.execute(QUERIES[a], (b,)).fetchall()) == sorted(
                        oracle.execute(QUERIES[a], (b,)).fetchall()
                    ), (op, QUERIES[a], b)
            else:
                sql, params = {
                    "insert": ("INSERT OR IGNORE INTO stories VALUES (?, ?, ?, ?)", (a, b, a, "w")),
                    "delete": ("DELETE FROM stories WHERE id = ?", (a,)),
                    "move": ("UPDATE stories SET author = ? WHERE id = ?", (b, a)),
                    "rename": ("UPDATE users SET name = name || 'x' WHERE id = ?", (a,)),
                }[op]
                oracle.execute(sql, params)
                if op == "insert":
                    sql = "INSERT IGNORE INTO stories VALUES (?, ?, ?, ?)"
                if op == "rename":
                    sql = "UPDATE users SET name = CONCAT(name, 'x') WHERE id = ?"
                conn.execute(sql, params)
                for q in QUERIES:  # every read after a write: a stale state shows at once
                    for b in range(1, 4):
                        assert sorted(conn.execute(q, (b,)).fetchall()) == sorted(
                            oracle.execute(q, (b,)).fetchall()
                        ), (q, b)
        assert graph_problems(conn) == []
        assert twin_audit(conn, list(cached(conn))) == []
    finally:
        conn.close()
        oracle.close()

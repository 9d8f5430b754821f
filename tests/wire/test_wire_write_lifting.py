"""Writes sent with their values in the text (client-side binding) run as the parameterized
form of their shape (literals.lift_write): which literals are lifted, and, against the engine
running the text as written, the same rows stored and the same errors for random values."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noria_py import errors
from noria_py.engine import Engine
from noria_py.server.session import ServerState, Session
from noria_py.sql.literals import lift_write, lift_write_cached

pytestmark = pytest.mark.wire


@pytest.mark.parametrize(
    "sql,lifted,params",
    [
        ("INSERT INTO t (a, b) VALUES (1, 'x')", "INSERT INTO t (a, b) VALUES (?, ?)", [1, "x"]),
        ("insert into t values (1,2),(3,'it''s \\n')", "insert into t values (?,?),(?,?)", [1, 2, 3, "it's \n"]),
        ("INSERT INTO t VALUES (NULL, NOW(), -3, 1.5, X'41', 'a' 'b', 7)", "INSERT INTO t VALUES (?, NOW(), ?, ?, X'41', 'a' 'b', ?)", [None, -3, Decimal("1.5"), 7]),
        ("INSERT INTO t VALUES (2.5e0, -1E-2, 99999999999999999999, - 4, -x)", "INSERT INTO t VALUES (?, ?, ?, - 4, -x)", [2.5, -0.01, Decimal(99999999999999999999)]),
        ("REPLACE INTO t VALUES (1, 'x')", "REPLACE INTO t VALUES (?, ?)", [1, "x"]),
        ("UPDATE t SET a = 'x', b = b + 1 WHERE id = 3 LIMIT 1", "UPDATE t SET a = ?, b = b + 1 WHERE id = ? LIMIT 1", ["x", 3]),
        ("UPDATE t SET a = 1 WHERE id = 3 AND c = 'y' OR d = 4", "UPDATE t SET a = ? WHERE id = ? AND c = 'y' OR d = 4", [1, 3]),
        ("DELETE FROM t WHERE id = 5 AND s = 'q' ORDER BY id LIMIT 3", "DELETE FROM t WHERE id = ? AND s = ? ORDER BY id LIMIT 3", [5, "q"]),
    ],
)  # fmt: skip
def test_lifted_writes(sql, lifted, params):
    assert lift_write(sql) == (lifted, params)
    for _ in range(2):  # the shape cache gives the same answer
        assert lift_write_cached(sql) == (lifted, params)


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t (a) SELECT 1",
        "INSERT INTO t SET a = 1",
        "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
        "UPDATE t SET a = 1 WHERE id = (SELECT 1)",
        "UPDATE t JOIN u ON t.id = u.id SET t.a = 1",
        "DELETE FROM t WHERE id IN (1, 2)",
        "INSERT INTO t VALUES (1, 2) /* note */",
        "INSERT INTO t VALUES (1, 2); DELETE FROM t",
        "UPDATE t SET a = ?",
        "SELECT 1 FROM t WHERE id = 1",
    ],
)
def test_writes_left_as_they_are(sql):
    assert lift_write(sql) is None
    assert lift_write_cached(sql) is None


SCHEMA = "CREATE TABLE w (id INT PRIMARY KEY, n INT, s VARCHAR(20), d DATETIME, x DECIMAL(6,2))"
ints = st.one_of(st.integers(-5, 5), st.integers(0, 2**40))
strings = st.text(st.sampled_from(list("ab'\\\"%_\n\r\t\x00\x1aé€ 09:-")), max_size=12)
values = st.one_of(ints, strings, st.just("2026-11-26 03:04:05"), st.just("12abc"))


def _sql_literal(v) -> str:
    """How a client-side binding driver (pymysql's escape_string) writes ``v`` in the text."""
    if isinstance(v, int):
        return str(v)
    out = []
    for ch in v:
        out.append(
            {
                "\\": "\\\\",
                "'": "\\'",
                '"': '\\"',
                "\n": "\\n",
                "\r": "\\r",
                "\x00": "\\0",
                "\x1a": "\\Z",
            }.get(ch, ch)
        )
    return "'" + "".join(out) + "'"


writes = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(0, 6), values, values, values, values),
        st.tuples(st.just("update"), st.integers(0, 6), st.sampled_from("nsdx"), values),
        st.tuples(st.just("delete"), st.integers(0, 6), values),
    ),
    max_size=8,
)


def _text(w) -> str:
    if w[0] == "insert":
        vals = ", ".join(_sql_literal(v) for v in w[1:])
        return f"INSERT INTO w (id, n, s, d, x) VALUES ({vals})"
    if w[0] == "update":
        return f"UPDATE w SET {w[2]} = {_sql_literal(w[3])} WHERE id = {w[1]}"
    return f"DELETE FROM w WHERE id = {w[1]} AND s = {_sql_literal(w[2])}"


@settings(max_examples=80, deadline=None)
@given(writes=writes)
def test_lifted_writes_store_what_the_text_stores(writes):
    plain, lifted = Engine(), Engine()
    for e in (plain, lifted):
        e.execute(SCHEMA)
    session = Session(ServerState(engine=lifted))
    for w in writes:
        sql = _text(w)
        outcomes = []
        for run in (plain.execute, session.execute):
            try:
                res = run(sql)
                outcomes.append(("ok", res.rowcount))
            except errors.Error as e:
                outcomes.append(("error", e.errno))
        assert outcomes[0] == outcomes[1], sql
    q = "SELECT id, n, s, d, x FROM w ORDER BY id"
    assert plain.execute(q).rows == lifted.execute(q).rows
    plain.close()
    lifted.close()


def test_a_session_runs_one_prepared_statement_per_write_shape():
    engine = Engine()
    engine.execute(SCHEMA)
    session = Session(ServerState(engine=engine))
    for i in range(20):
        session.execute(f"INSERT INTO w (id, n, s) VALUES ({i}, {i * 2}, 'v{i}')")
        session.execute(f"UPDATE w SET s = 'u{i}' WHERE id = {i}")
    cached = [sql for sql in engine._cache if sql.startswith(("INSERT", "UPDATE"))]
    assert sorted(cached) == [
        "INSERT INTO w (id, n, s) VALUES (?, ?, ?)",
        "UPDATE w SET s = ? WHERE id = ?",
    ]
    assert list(engine.execute("SELECT s FROM w WHERE id = 19").rows) == [("u19",)]
    engine.close()

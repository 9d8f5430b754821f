"""Malformed statements and parameters: only PEP 249 errors reach the caller, the connection keeps
working, and nothing acknowledged is lost."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

VALID = [
    "SELECT id, name FROM t WHERE id = ?",
    "SELECT name, COUNT(*) FROM t GROUP BY name",
    "SELECT UPPER(name), CHAR_LENGTH(name) FROM t WHERE id IN (?, ?)",
    "INSERT INTO t (id, name, price) VALUES (?, ?, ?)",
    "UPDATE t SET price = price + ? WHERE id = ?",
    "DELETE FROM t WHERE id = ?",
    "SELECT DATE_ADD(d, INTERVAL 1 DAY), CAST(price AS SIGNED) FROM t WHERE id = ?",
    "SELECT * FROM t WHERE name LIKE ? ORDER BY id LIMIT 3",
    "SELECT t.id, u.id FROM t JOIN t AS u ON u.id = t.id WHERE t.id = ?",
]
FRAGMENTS = [
    "SELECT", "FROM", "WHERE", "t", "id", "name", "(", ")", ",", "?", "?1", "@x", "@@version",
    "=", "==", "+", "*", "'", '"', "`", "1e999", "-", "NULL", "AND", "OR", "NOT", "IN", "LIKE",
    "GROUP BY", "ORDER BY", "LIMIT", "INTERVAL", "DAY", "CAST", "AS", "SIGNED", "%s", ";",
    "/*", "*/", "--", "#", "\\", "\x00", "é", "😀", "UNION", "JOIN", "ON", "INSERT", "INTO",
    "VALUES", "UPDATE", "SET", "DELETE", "CREATE", "TABLE", "DROP", "COUNT(*)", "SUM(", "1",
    "99999999999999999999999", "0x", "b'", "X'4", "CONCAT(", "DATE_ADD(", "FOO(", "::",
]  # fmt: skip

PARAMS = st.one_of(
    st.none(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.text(max_size=20),
    st.binary(max_size=10),
    st.dates(),
    st.datetimes(),
    st.booleans(),
    st.just(object()),
    st.lists(st.integers(), max_size=2),
)


@pytest.fixture(scope="module")
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), d DATE)")
    c.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?)",
        [(i, f"n{i % 5}", Decimal(i) / 4, dt.date(2024, 1, 1 + i)) for i in range(1, 21)],
    )
    yield c
    c.close()


def _run(conn, sql, params):
    try:
        conn.execute(sql, params).fetchall()
    except E.Error:
        pass  # the PEP 249 hierarchy: what a caller can catch
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{sql!r} {params!r} raised {type(e).__name__}: {e}") from None


def _still_works(conn):
    assert conn.execute("SELECT 1 + 1").fetchall() == [(2,)]
    (n,) = conn.execute("SELECT COUNT(*) FROM t").fetchone()
    ids = conn.execute("SELECT id FROM t").fetchall()
    assert n == len(ids)
    row = (
        conn.execute("SELECT COUNT(*) FROM t WHERE id = ?", (ids[0][0],)).fetchone()
        if ids
        else (0,)
    )
    assert row[0] in (0, 1)


@settings(max_examples=150)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12), st.lists(PARAMS, max_size=4))
def test_random_token_soup(conn, tokens, params):
    _run(conn, " ".join(tokens), params)
    _still_works(conn)


@settings(max_examples=150)
@given(st.sampled_from(VALID), st.data())
def test_mutated_statements(conn, sql, data):
    ops = data.draw(
        st.lists(st.tuples(st.integers(0, 200), st.sampled_from(FRAGMENTS)), max_size=3)
    )
    text = sql
    for pos, frag in ops:
        pos %= len(text) + 1
        cut = data.draw(st.integers(0, 3))
        text = text[:pos] + frag + text[pos + cut :]
    params = data.draw(st.lists(PARAMS, max_size=4))
    _run(conn, text, params)
    _still_works(conn)


@settings(max_examples=100)
@given(st.sampled_from(VALID), st.lists(PARAMS, min_size=0, max_size=4))
def test_valid_statements_with_any_parameters(conn, sql, params):
    _run(conn, sql, params)
    _still_works(conn)


def test_percent_s_placeholders_get_a_hint(conn):
    with pytest.raises(E.ProgrammingError, match=r"placeholders are \?"):
        conn.execute("SELECT id FROM t WHERE id = %s", (1,))


def test_syntax_error_reads_like_mysql(conn):
    with pytest.raises(E.ProgrammingError) as ei:
        conn.execute("SELECT * FROM t WHERE id = = 3")
    assert ei.value.errno == 1064
    msg = str(ei.value)
    assert msg.startswith("You have an error in your SQL syntax; check the manual")
    assert "near '= 3' at line 1" in msg
    assert "sqlglot" not in msg and "Required keyword" not in msg


def test_unknown_function_is_1305(conn):
    with pytest.raises(E.ProgrammingError) as ei:
        conn.execute("SELECT NO_SUCH_FN(id) FROM t")
    assert ei.value.errno == 1305
    assert "no_such_fn" in str(ei.value).lower()


def test_wrong_argument_count_is_1582(conn):
    with pytest.raises(E.ProgrammingError) as ei:
        conn.execute("SELECT LEFT(name) FROM t")
    assert ei.value.errno == 1582


def test_a_question_mark_followed_by_a_name_is_a_syntax_error(conn):
    """`?1` once reached the evaluator as parameter 1 and raised IndexError."""
    with pytest.raises(E.ProgrammingError) as ei:
        conn.execute("SELECT ?1", (None,))
    assert ei.value.errno == 1064 and "near '?1'" in str(ei.value)

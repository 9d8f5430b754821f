"""ENUM and SET columns where MySQL reads them as numbers (a member's position, a SET's bit
mask), compared with a real MariaDB. Every generated query gets MariaDB's answer or error 1235
(a numeric use this engine does not model), never another answer, on the dataflow and on base
storage. Answered (1235 fails the test): a parameter compared with such a column (mapped to the
member at its position); the column as an operand of arithmetic or a bit operator, under CAST AS
SIGNED/UNSIGNED/DECIMAL, compared with number literals (``s = 2``, ``s IN (1, 3)``, ``s BETWEEN
1 AND 2``); SUM, AVG and the bit aggregates of the column; and ``FIND_IN_SET(<constant>, <SET
column>)``, which MySQL reads from the bit mask (the member's declared place, not its place in
the row's text). Still refused: other functions of the column's number (``ABS(s)``), and a
derived table's column in numeric context."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

from . import both_sides

SETUP = [
    "CREATE TABLE en_e (id INT PRIMARY KEY, s ENUM('b','a','c'), n INT)",
    "INSERT INTO en_e VALUES (1,'a',1),(2,'c',2),(3,'b',3),(4,NULL,4),(5,'a',5)",
    "CREATE TABLE en_s (id INT PRIMARY KEY, s SET('x','y','z'))",
    "INSERT INTO en_s VALUES (1,'x,y'),(2,'z'),(3,'y,x'),(4,NULL),(5,'')",
]

ANSWERED = [
    "s + 0", "s = 2", "s IN (1, 3)", "s > 1", "-s", "s BETWEEN 1 AND 2", "s * 2 - 1", "s | 0",
    "s & 2", "s DIV 2", "CAST(s AS SIGNED)", "CAST(s AS UNSIGNED)", "s <> -1", "s = 2.0",
    "FIND_IN_SET('y', s)", "FIND_IN_SET('Z', s)", "FIND_IN_SET('q', s)", "FIND_IN_SET(?, s)",
]  # fmt: skip
ANSWERED += ["SUM(s)", "AVG(DISTINCT s)", "BIT_OR(s)"]
NUMERIC = [*ANSWERED, "ABS(s)"]


@st.composite
def _query(draw):
    table = draw(st.sampled_from(["en_e", "en_s"]))
    kind = draw(st.sampled_from(["eq_param", "in_param", "ne_param", "text", "numeric", "range"]))
    value = draw(
        st.one_of(
            st.integers(-1, 8), st.sampled_from([1.0, 2.5, "a", "c", "x,y", "y,x", "z", "q", ""])
        )
    )
    if kind == "eq_param":
        return f"SELECT id FROM {table} WHERE s = ? ORDER BY id", [value]
    if kind == "ne_param":
        return f"SELECT id FROM {table} WHERE s <> ? ORDER BY id", [value]
    if kind == "in_param":
        other = draw(st.one_of(st.integers(0, 4), st.sampled_from(["b", "z"])))
        return f"SELECT id FROM {table} WHERE s IN (?, ?) ORDER BY id", [value, other]
    if kind == "text":
        expr = draw(st.sampled_from(["UPPER(s)", "CONCAT(s, '!')", "CHAR_LENGTH(s)", "s"]))
        return f"SELECT id, {expr} FROM {table} WHERE s IS NOT NULL ORDER BY id", []
    if kind == "range":
        return f"SELECT id FROM {table} WHERE s > ? ORDER BY id", [value]
    expr = draw(st.sampled_from(NUMERIC))
    if "?" in expr:
        return f"SELECT id, {expr} FROM {table} ORDER BY id", [draw(st.sampled_from("xyzaQ"))]
    if expr[:3] in ("SUM", "AVG", "BIT"):
        return f"SELECT {expr} FROM {table}", []
    if "=" in expr or "IN" in expr or ">" in expr or "BETWEEN" in expr:
        return f"SELECT id FROM {table} WHERE {expr} ORDER BY id", []
    return f"SELECT id, {expr} FROM {table} ORDER BY id", []


def _norm(rows):
    out = []
    for r in rows:
        out.append(tuple(float(v) if isinstance(v, (Decimal, float)) else v for v in r))
    return out


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    yield from both_sides(mariadb_oracle, SETUP, "en_e, en_s")


@settings(max_examples=150)
@given(_query())
def test_numeric_uses_answer_as_mariadb_or_refuse(sides, q):
    ours, cur = sides
    sql, params = q
    try:
        cur.execute(sql.replace("?", "%s"), params)
        theirs = ("rows", _norm(cur.fetchall()))
    except Exception as e:  # noqa: BLE001 - pymysql's errors
        theirs = ("error", e.args[0])
    for mode, conn in ours.items():
        try:
            got = ("rows", _norm(conn.execute(sql, params).fetchall()))
        except E.Error as e:
            got = ("error", e.errno)
        if got == ("error", 1235):
            assert "?" not in sql or " > ? " in sql, f"{mode}: {sql} {params} refused"
            assert not any(f" {a} " in sql for a in ANSWERED), f"{mode}: {sql} refused"
            continue
        assert got == theirs, f"{mode}: {sql} {params}: noria {got}, MariaDB {theirs}"


def test_parameters_are_positions_and_unmodelled_numeric_uses_are_refused():
    c = noria_py.connect()
    for sql in SETUP:
        c.execute(sql)
    q = "SELECT id FROM en_e WHERE s = ? ORDER BY id"
    assert c.execute(q, [2]).fetchall() == [(1,), (5,)]  # 'a' is the second member
    assert c.execute(q, ["a"]).fetchall() == [(1,), (5,)]
    assert c.execute(q, [2.5]).fetchall() == []
    assert c.execute("SELECT id FROM en_s WHERE s = ? ORDER BY id", [3]).fetchall() == [(1,), (3,)]
    c.execute("UPDATE en_e SET n = 0 WHERE s = ?", [3])
    assert c.execute("SELECT id FROM en_e WHERE n = 0").fetchall() == [(2,)]
    assert c.execute("SELECT id, s + 0 FROM en_e WHERE s = 2 ORDER BY id").fetchall() == [
        (1, 2),
        (5, 2),
    ]
    # 'z' is the third member of SET('x','y','z'), though the first item of row 2's text
    q = "SELECT id, FIND_IN_SET('z', s) FROM en_s ORDER BY id"
    assert c.execute(q).fetchall() == [(1, 0), (2, 3), (3, 0), (4, None), (5, 0)]
    assert c.execute("SELECT SUM(s), SUM(DISTINCT s) FROM en_e").fetchall() == [(8, 6)]
    for sql in ("SELECT ABS(s) FROM en_e", "SELECT SUM(x.s) FROM (SELECT s FROM en_e) x"):
        with pytest.raises(E.NotSupportedError) as info:
            c.execute(sql)
        assert info.value.errno == 1235 and "ENUM or SET" in str(info.value)
    c.close()


ORDERS = [
    "SELECT id, s FROM en_e ORDER BY s, id",
    "SELECT id, s FROM en_e ORDER BY s DESC, id LIMIT 3",
    "SELECT id, s AS x FROM en_e ORDER BY x, id",
    "SELECT s, COUNT(*) FROM en_e GROUP BY s ORDER BY s",
    "SELECT DISTINCT s FROM en_e ORDER BY s",
    "SELECT a.id FROM en_e a JOIN en_e b ON b.id = a.id ORDER BY b.s, a.id",
    "SELECT id, s FROM en_s ORDER BY s, id",
    "SELECT id, n AS s FROM en_e ORDER BY s",  # an alias of another column: not the ENUM
]


@pytest.mark.parametrize("sql", ORDERS)
def test_order_by_a_member_column_follows_its_declared_order(sides, sql):
    """ORDER BY an ENUM sorts by member position, a SET by bit mask (it was 1235 where that
    differs from the text's order; an alias of such a column was sorted as text)."""
    ours, cur = sides
    cur.execute(sql)
    want = _norm(cur.fetchall())
    for mode, conn in ours.items():
        assert _norm(conn.execute(sql).fetchall()) == want, mode


def test_a_cached_top_k_over_an_enum_keeps_the_declared_order():
    c = noria_py.connect()
    for sql in SETUP:
        c.execute(sql)
    q = "SELECT id, s FROM en_e WHERE n > ? ORDER BY s, id LIMIT 2"
    assert c.execute(q, [0]).fetchall() == [(4, None), (3, "b")]
    c.execute("UPDATE en_e SET s = 'b' WHERE id = 4")
    assert c.execute(q, [0]).fetchall() == [(3, "b"), (4, "b")]
    c.execute("DELETE FROM en_e WHERE s = 'b'")
    assert c.execute(q, [0]).fetchall() == [(1, "a"), (5, "a")]
    c.close()

"""Character set introducers (``_binary'...'``, ``_utf8mb4'...'``, ``_binary X'..'``) and
``N'...'`` compared with MariaDB.

mysqlclient (the driver under Django and most SQLAlchemy setups) and pymysql with
``binary_prefix=True`` send every bytes parameter as ``_binary'...'``; mysqldump and hand-written
SQL use the others. They were proxied to base storage, which failed on them (a syntax error, or
1235 on an INSERT). Hypothesis draws the strings (quotes, backslashes, NUL, non-ASCII) and
each is written with each introducer, read back, compared and stored, as MariaDB does.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

SETUP = "CREATE TABLE intro (id INT PRIMARY KEY, b VARBINARY(40), v VARCHAR(40), t TEXT)"


def _quoted(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "''").replace("\0", "\\0") + "'"


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    conn = mariadb_oracle.connect()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS intro")
    cur.execute(SETUP)
    ours = noria_py.connect()
    ours.execute(SETUP)
    yield ours, cur
    cur.execute("DROP TABLE IF EXISTS intro")
    ours.close()


def _both(sides, sql):
    ours, cur = sides
    try:
        cur.execute(sql)
        want = ("rows", [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount)
    except Exception as e:  # noqa: BLE001 - pymysql's errors
        want = ("error", e.args[0])
    try:
        res = ours.execute(sql)
        got = ("rows", [tuple(r) for r in res.fetchall()] if res.description else res.rowcount)
    except E.Error as e:
        got = ("error", e.errno)
    assert got == want, sql
    return got


TEXT = st.text(st.sampled_from(list("aAbsZ '\"\\%_\0\nßéÄ✓😀")), min_size=0, max_size=8)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(s=TEXT, other=TEXT)
def test_introduced_strings_read_compare_and_store_as_in_mariadb(sides, s, other):
    lit = _quoted(s)
    hexed = s.encode("utf-8").hex().upper()
    # utf8mb3 (_utf8, N) holds three bytes a character at most: beyond, MySQL shows '?' and
    # cannot store it; the engine refuses it
    mb3 = ("_utf8mb3", "N") if all(ord(c) <= 0xFFFF for c in s) else ()
    _both(sides, "DELETE FROM intro")
    _both(
        sides,
        f"INSERT INTO intro VALUES (1, _binary{lit}, _utf8mb4{lit}, {'N' if mb3 else ''}{lit}),"
        f" (2, _binary X'{hexed}', _utf8mb4 X'{hexed}', {'_utf8 ' if mb3 else ''}{lit}),"
        f" (3, {_quoted(other)}, {_quoted(other)}, {_quoted(other)})",
    )
    _both(sides, "SELECT id, b, v, t, HEX(b), LENGTH(v) FROM intro ORDER BY id")
    if not mb3:
        with pytest.raises(noria_py.NotSupportedError):
            sides[0].execute(f"SELECT N{lit}")
    for intro in ("_binary", "_utf8mb4", *mb3):
        _both(sides, f"SELECT id FROM intro WHERE b = {intro}{lit} ORDER BY id")
        _both(sides, f"SELECT id FROM intro WHERE v = {intro}{lit} ORDER BY id")
        _both(sides, f"SELECT id FROM intro WHERE t LIKE {intro}{lit} ORDER BY id")
    _both(
        sides,
        f"SELECT _binary{lit}, _utf8mb4{lit} = {_quoted(other)}, _binary{lit} = {_quoted(other)},"
        f" LENGTH(_binary{lit}), CHAR_LENGTH(_utf8mb4 X'{hexed}'), _utf8mb4{lit}",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT _utf8mb4 X'FF'",  # not UTF-8: 1300
        "SELECT _utf8mb4 X'C3A9', _binary 0x41, _binary X'00FF'",
        "SELECT _ascii'abc', _latin1'plain ascii' = 'PLAIN ASCII'",
        "SELECT _binary'a' LIKE 'A', _utf8mb4'a' LIKE 'A', _binary'é' = 'é'",
        "SELECT CONCAT(_utf8mb4'x', 1), UPPER(_utf8mb4'straße'), UPPER(_binary'abc')",
    ],
)
def test_introducer_forms_as_in_mariadb(sides, sql):
    _both(sides, sql)


def test_a_binary_literal_takes_the_columns_collation_in_like(sides):
    """``t LIKE _binary'A'`` over a text column: the column's collation (coercibility 2) wins
    over the literal's (4), so it matches 'a' as ``t = _binary'A'`` does, and so do binary
    strings made of constants (``UNHEX('41')``, ``CHAR(65)``); a binary column, two literals,
    or ``BINARY 'x'``, ``CAST('x' AS BINARY)`` and ``CONVERT('x' USING binary)`` (a column's
    coercibility, 2) compare as bytes."""
    _both(sides, "DELETE FROM intro")
    _both(
        sides,
        "INSERT INTO intro VALUES (1, 'A', 'A', 'Ab'), (2, 'a', 'a', 'ab'), (3, 'b', 'b', 'b')",
    )
    for cond in (
        "t LIKE _binary'A'", "t LIKE _binary'A%'", "v LIKE _binary'A'", "t LIKE 0x4125",
        "v LIKE _binary'a%' ESCAPE '!'", "b LIKE 'A'", "b LIKE _binary'a'", "t = _binary'AB'",
        "t = BINARY 'ab'", "t = CAST('ab' AS BINARY)", "t LIKE BINARY 'a%'", "t = (0x4142)",
        "t = UNHEX('4142')", "t = CHAR(65, 66)", "t = CONCAT(_binary'AB')",
        "t = CONVERT('ab' USING binary)", "t = CONCAT(BINARY 'ab')", "t LIKE UNHEX('4125')",
        "t IN (_binary'AB', 'x')", "t IN (0x4142)", "t IN (BINARY 'ab')",
        "t BETWEEN _binary'AA' AND _binary'AC'", "NULLIF(t, _binary'AB') IS NULL",
        "NULLIF(t, BINARY 'ab') IS NULL",
    ):  # fmt: skip
        _both(sides, f"SELECT id FROM intro WHERE {cond} ORDER BY id")
    _both(sides, "SELECT id, t LIKE _binary'A%', _binary'a' LIKE 'A' FROM intro ORDER BY id")
    _both(sides, "SELECT CONVERT('ab' USING binary) = 'AB', HEX(CONVERT('é' USING binary))")
    _both(
        sides,
        "SELECT id, GREATEST(t, _binary'AB'), LEAST(t, 0x41), GREATEST('abc', 0x41),"
        " GREATEST(0x41, 1), NULLIF(t, _binary'AB') FROM intro ORDER BY id",
    )
    # a binary literal as another branch of COALESCE, IF or CASE beside a text column: text
    _both(
        sides,
        "SELECT id, COALESCE(t, _binary'x') = 'AB', IF(id > 1, t, _binary'x') = 'ab',"
        " CASE WHEN id > 2 THEN _binary'x' ELSE t END = 'AB', IFNULL(t, 0x41) = 'ab',"
        " COALESCE(_binary'a', 'b'), IF(id > 1, 0x41, t), COALESCE(t, BINARY 'x') = 'AB'"
        " FROM intro ORDER BY id",
    )


def test_another_set_on_non_ascii_text_is_refused_not_misread():
    # MariaDB reads the bytes in that set (_latin1'é' is 'Ã©'): refused, never answered as 'é'
    conn = noria_py.connect()
    with pytest.raises(noria_py.NotSupportedError) as err:
        conn.execute("SELECT _latin1'é'")
    assert err.value.errno == 1235 and "latin1" in str(err.value)

"""IGNORE's adjusted values compared with MariaDB's: hypothesis draws a table (integer types
signed and unsigned, DECIMALs, strings, DOUBLE, TIME, ENUM, VARBINARY, DATE; NULL or NOT
NULL, with or without a DEFAULT) and a few statements writing hostile values into it (text
that is no number or only begins with one, numbers out of range or with too many decimals,
long strings, NULL into NOT NULL, columns left out, duplicate keys): INSERT IGNORE with one or
more rows, INSERT IGNORE ... SELECT, UPDATE IGNORE, LOAD DATA LOCAL (which loads as IGNORE
does, short and long rows included), and the same INSERTs without IGNORE (strict mode: an
error, whose text must be MariaDB's). After each statement both must agree on its outcome
(affected rows or error code and message), ``SHOW WARNINGS`` (level, code, text; the
database's name left out; strict mode's notes too) and every stored row, and a cached query over the table must
return what MariaDB's table holds.

MariaDB stores the zero date for a date it cannot read; noria_py keeps no zero dates and
refuses such a statement with 1235, storing nothing of it (MariaDB's statement is rolled
back, and the sequence goes on). UPDATE IGNORE's conditions are on the primary key or on a
column no index holds, where this engine numbers the warnings' rows as MariaDB reads them."""

from __future__ import annotations

import os
import re
import tempfile

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

TYPES = {
    "INT": "0",
    "TINYINT": "5",
    "TINYINT UNSIGNED": "5",
    "SMALLINT UNSIGNED": "7",
    "BIGINT": "9",
    "DECIMAL(5,2)": "1.50",
    "DECIMAL(3,0)": "4",
    "VARCHAR(3)": "'d'",
    "CHAR(2)": "'d'",
    "DOUBLE": "2.5",
    "TIME": "'01:02:03'",
    "ENUM('a','b')": "'b'",
    "VARBINARY(3)": "'d'",
    "DATE": "'2024-02-29'",
}
VALUES = [
    "'abc'", "'12abc'", "''", "'  '", "' 7'", "'7 '", "'1.5x'", "'1e2x'", "NULL", "NULL",
    "0", "1", "300", "-300", "99999", "-1", "1.4", "'2.555'", "1234.567", "'abcdef'",
    "'ab  '", "'99999999999'", "'-'", "'10:00:00x'", "'839:00:00'", "'a'", "'b'",
    "'2020-01-01'", "'2020-13-45'", "'2020-01-01x'", "-9223372036854775809", "'-0'",
]  # fmt: skip
FIELDS = [
    "abc", "12abc", "", "  ", "7", "1.5x", "300", "-300", "99999", "2.555", "abcdef",
    "\\N", "2020-01-01", "2020-13-45", "10:00:00x", "a", "-1",
]  # fmt: skip
KEYS = st.integers(1, 4)
# MySQL 8 rounds a TIME's fraction (the specification here), MariaDB truncates it: no
# fractions for TIME columns (tests/semantics/test_fractional_seconds_vs_mariadb.py)
_FRACTION = re.compile(r"\d\.\d*[5-9]")


def _pool(pool: list, ctype: str) -> list:
    if ctype == "TIME":
        return [v for v in pool if not _FRACTION.search(v)]
    if ctype == "DATE":  # a number is no date here (1292, strict or not); MariaDB reads one
        return [v for v in pool if not re.fullmatch(r"-?[\d.]+", v)]
    return pool


@st.composite
def _table(draw):
    cols = []
    for k in range(draw(st.integers(1, 3))):
        t = draw(st.sampled_from(sorted(TYPES)))
        null = draw(st.sampled_from(["", "NOT NULL", f"NOT NULL DEFAULT {TYPES[t]}"]))
        cols.append((f"c{k}", t, null))
    return cols


@st.composite
def _statement(draw, cols):
    names = [c for c, _t, _n in cols]
    types = {c: t for c, t, _n in cols}
    kind = draw(
        st.sampled_from(["insert", "insert", "strict", "select", "update", "update", "load"])
    )
    if kind in ("insert", "strict"):
        listed = draw(st.permutations(names))[: draw(st.integers(0, len(names)))]
        listed = draw(st.permutations(["id", *listed]))
        rows = []
        for _ in range(draw(st.integers(1, 3))):
            vals = [
                str(draw(KEYS)) if c == "id" else draw(st.sampled_from(_pool(VALUES, types[c])))
                for c in listed
            ]
            rows.append(f"({', '.join(vals)})")
        verb = "INSERT IGNORE" if kind == "insert" else "INSERT"
        return f"{verb} INTO t ({', '.join(listed)}) VALUES {', '.join(rows)}"
    if kind == "select":
        col = draw(st.sampled_from(names))
        return f"INSERT IGNORE INTO t (id, {col}) SELECT k, v FROM src ORDER BY k"
    if kind == "update":
        sets = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        text = ", ".join(f"{c} = {draw(st.sampled_from(_pool(VALUES, types[c])))}" for c in sets)
        where = draw(
            st.sampled_from(["", " WHERE id = {k}", " WHERE id >= {k}", " WHERE {c} IS NULL"])
        )
        where = where.format(k=draw(KEYS), c=draw(st.sampled_from(names)))
        return f"UPDATE IGNORE t SET {text}{where}"
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        width = len(cols) + 1 + draw(st.sampled_from([0, 0, 0, -1, 1]))
        fields = [str(draw(KEYS))] + [
            draw(st.sampled_from(_pool(FIELDS, types[cols[min(j, len(cols) - 1)][0]])))
            for j in range(width - 1)
        ]
        lines.append("\t".join(fields[: max(width, 1)]) + "\n")
    return ("load", "".join(lines))


@st.composite
def _case(draw):
    cols = draw(_table())
    return cols, draw(st.lists(_statement(cols), min_size=1, max_size=3))


SRC = [(1, "abc"), (2, "12x"), (3, "99999999999"), (5, None), (6, "a")]


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_ignore", local_infile=True)
    yield conn
    conn.close()


def _norm(rows) -> list:
    """Warnings as both word them: a duplicate key's name without its table (MySQL 8's
    't.PRIMARY', MariaDB's 'PRIMARY'), 1366's and 1292's column without its database."""
    out = []
    for level, code, msg in rows:
        msg = re.sub(r"for key '[^'.]*\.", "for key '", msg)
        msg = re.sub(r"`[^`]+`\.(`[^`]+`\.`)", r"\1", msg)
        out.append((level, int(code), msg))
    return out


def _value(v):
    return bytes(v) if isinstance(v, (bytes, bytearray)) else v


def _rows(cur) -> list:
    cur.execute("SELECT * FROM t ORDER BY id")
    return [tuple(_value(v) for v in r) for r in cur.fetchall()]


def _oracle_run(oc, sql: str):
    """(outcome, warnings, rows) of ``sql`` on MariaDB, in a transaction that is rolled back
    when it stored a zero date (outcome "zero date")."""
    oc.execute("BEGIN")
    try:
        oc.execute(sql)
        outcome = ("ok", oc.rowcount)
    except pymysql.err.MySQLError as e:
        oc.execute("ROLLBACK")
        return ("error", e.args[0], _norm([("Error", e.args[0], e.args[1])])[0][2]), [], None
    oc.execute("SHOW WARNINGS")
    warnings = _norm(oc.fetchall())
    rows = _rows(oc)
    if any(isinstance(v, str) and re.match(r"\d{4}-\d\d-\d\d", v) for r in rows for v in r):
        # (pymysql gives the text of a date with zeros in it: 0000-00-00, 2000-03-00)
        oc.execute("ROLLBACK")
        return ("zero date",), warnings, _rows(oc)
    oc.execute("COMMIT")
    return outcome, warnings, rows


def _noria_run(cur, sql: str):
    try:
        cur.execute(sql)
        outcome = ("ok", cur.rowcount)
    except E.Error as e:
        if e.errno == 1235 and "zero date" in e.msg:
            return ("zero date",), [], _rows(cur)
        return ("error", e.errno, _norm([("Error", e.errno, e.msg)])[0][2]), [], None
    warnings = _norm(cur.execute("SHOW WARNINGS").fetchall())
    return outcome, warnings, _rows(cur)


def _check(oracle, cols, statements) -> None:
    ddl = "CREATE TABLE t (id INT PRIMARY KEY, " + ", ".join(
        f"{c} {t} {n}" for c, t, n in cols
    ) + ")"  # fmt: skip
    setup = [
        ddl,
        "CREATE TABLE src (k INT PRIMARY KEY, v VARCHAR(20))",
        "INSERT INTO src VALUES "
        + ", ".join(f"({k}, {'NULL' if v is None else repr(v)})" for k, v in SRC),  # fmt: skip
    ]
    conn = noria_py.connect()
    cur = conn.cursor()
    files = []
    try:
        with oracle.cursor() as oc:
            oc.execute("DROP TABLE IF EXISTS t, src")
            for s in setup:
                oc.execute(s)
                cur.execute(s)
            lookup = "SELECT * FROM t WHERE id = ?"
            for k in (1, 2):  # cached lookups, read before the writes
                assert cur.execute(lookup, (k,)).fetchall() == []
            done = []
            for stmt in statements:
                if isinstance(stmt, tuple):
                    fd, path = tempfile.mkstemp(suffix=".tsv")
                    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                        f.write(stmt[1])
                    os.chmod(path, 0o644)
                    files.append(path)
                    stmt = f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t"
                done.append(stmt)
                want = _oracle_run(oc, stmt)
                got = _noria_run(cur, stmt)
                if got[0][0] == "error" == want[0][0]:
                    assert got[0] == want[0], (ddl, done)  # the code and MariaDB's text
                    continue
                assert got[0] == want[0], (ddl, done, got, want)
                if want[0][0] != "zero date":
                    assert got[1] == want[1], (ddl, done)
                assert got[2] == want[2], (ddl, done)
                for k in (1, 2, 3, 4):  # the cached view is exact after the adjusted writes
                    cached = [
                        tuple(_value(v) for v in r) for r in cur.execute(lookup, (k,)).fetchall()
                    ]
                    assert cached == [r for r in want[2] if r[0] == k], (ddl, done, k)
    finally:
        conn.close()
        for p in files:
            os.unlink(p)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(_case())
def test_ignore_matches_mariadb(oracle, case):
    cols, statements = case
    _check(oracle, cols, statements)

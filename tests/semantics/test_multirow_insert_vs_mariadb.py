"""INSERT, INSERT IGNORE and REPLACE of several rows of placeholders (``VALUES (?, ?), (?, ?)``:
what drivers batch, and what the server makes of a batch sent with its values written in) are
prepared from their one-row form instead of parsing the whole statement
(``engine.inserts.rows_form``). Hypothesis draws a table and such statements with hostile values
(text that is no number, numbers out of range, long strings, NULL into NOT NULL, duplicate keys in
the batch and against stored rows); each must do what MariaDB does with the same rows written into
its text (affected rows, or the error's code and text; SHOW WARNINGS with their row numbers; the
stored rows; a cached view over the table), and exactly what the same statement does when parsed
whole."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.engine.inserts import RowsInsertPrepared
from noria_py.sql.literals import lift_write_cached

from .test_ignore_vs_mariadb import KEYS, VALUES, _norm, _oracle_run, _pool, _table, _value
from .test_ignore_vs_mariadb import _rows as _stored


def _python(literal: str):
    """A literal of the value pool as the Python value a driver binds."""
    if literal == "NULL":
        return None
    if literal.startswith("'"):
        return literal[1:-1]
    return Decimal(literal) if "." in literal else int(literal)


@st.composite
def _statement(draw, cols):
    names = [c for c, _t, _n in cols]
    types = {c: t for c, t, _n in cols}
    listed = draw(st.permutations(names))[: draw(st.integers(0, len(names)))]
    listed = draw(st.permutations(["id", *listed]))
    params = []
    nrows = draw(st.integers(2, 5))
    for _ in range(nrows):
        for c in listed:
            if c == "id":
                params.append(draw(KEYS))
            else:
                pool = [v for v in _literals(types[c]) if v in VALUES]
                params.append(_python(draw(st.sampled_from(pool))))
    verb = draw(st.sampled_from(["INSERT IGNORE INTO", "INSERT INTO", "REPLACE INTO"]))
    row = "(" + ", ".join("?" * len(listed)) + ")"
    return f"{verb} t ({', '.join(listed)}) VALUES {', '.join([row] * nrows)}", params


@st.composite
def _case(draw):
    cols = draw(_table())
    return cols, draw(st.lists(_statement(cols), min_size=1, max_size=3))


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.database("oracle_multirow")
    yield conn
    conn.close()


def _noria_run(cur, sql: str, params):
    from noria_py import errors as E

    try:
        cur.execute(sql, params)
        outcome = ("ok", cur.rowcount, cur.lastrowid)
    except E.Error as e:
        if e.errno == 1235 and "zero date" in e.msg:
            return ("zero date",), [], _stored(cur)
        return ("error", e.errno, _norm([("Error", e.errno, e.msg)])[0][2]), [], None
    warnings = _norm(cur.execute("SHOW WARNINGS").fetchall())
    return outcome, warnings, _stored(cur)


def _check(oracle, cols, statements, placeholders_only: bool = False) -> None:
    """Run each ``(sql, params, ref_sql, ref_params, text)``: ``sql`` on one engine, the same
    statement as ``ref_sql`` (parsed whole) on another, ``text`` (the values written in) on
    MariaDB; all three must agree, and a cached view over the table must stay exact.
    ``placeholders_only``: ``sql`` must take the one-row form."""
    ddl = "CREATE TABLE t (id INT PRIMARY KEY, " + ", ".join(
        f"{c} {t} {n}" for c, t, n in cols
    ) + ")"  # fmt: skip
    conn = noria_py.connect()
    ref = noria_py.connect()
    cur, rcur = conn.cursor(), ref.cursor()
    try:
        with oracle.cursor() as oc:
            oc.execute("DROP TABLE IF EXISTS t")
            oc.execute(ddl)
            cur.execute(ddl)
            rcur.execute(ddl)
            lookup = "SELECT * FROM t WHERE id = ?"
            for k in (1, 2):  # cached lookups, read before the writes
                assert cur.execute(lookup, (k,)).fetchall() == []
            done = []
            for sql, params, ref_sql, ref_params, text in statements:
                done.append(text)
                if placeholders_only:
                    assert isinstance(conn.engine.prepare(sql), RowsInsertPrepared)
                got = _noria_run(cur, sql, params)
                assert _noria_run(rcur, ref_sql, ref_params) == got, (ddl, done)
                want = _oracle_run(oc, text)
                if got[0][0] == "error" == want[0][0]:
                    assert got[0] == want[0], (ddl, done)  # the code and MariaDB's text
                    continue
                assert got[0][:2] == want[0], (ddl, done, got, want)
                if want[0][0] != "zero date":
                    assert got[1] == want[1], (ddl, done)
                assert got[2] == want[2], (ddl, done)
                for k in (1, 2, 3, 4):  # the cached view is exact after the batch
                    cached = [
                        tuple(_value(v) for v in r) for r in cur.execute(lookup, (k,)).fetchall()
                    ]
                    assert cached == [r for r in want[2] if r[0] == k], (ddl, done, k)
    finally:
        conn.close()
        ref.close()


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(_case())
def test_multirow_batches_match_mariadb_and_the_whole_parse(oracle, case):
    cols, statements = case
    with oracle.cursor() as oc:
        runs = [
            # the same statement parsed whole: a comment keeps it from the one-row form
            (sql, params, "/* whole */ " + sql, params, oc.mogrify(sql.replace("?", "%s"), params))
            for sql, params in statements
        ]
    _check(oracle, cols, runs, placeholders_only=True)


def test_an_auto_increment_batch_reports_its_first_id():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    cur = conn.execute("INSERT INTO a (v) VALUES (?), (?), (?)", ("x", "y", "z"))
    assert (cur.rowcount, cur.lastrowid) == (3, 1)
    cur = conn.execute("INSERT INTO a (id, v) VALUES (?, ?), (?, ?)", (None, "p", None, "q"))
    assert (cur.rowcount, cur.lastrowid) == (2, 4)
    assert conn.execute("SELECT LAST_INSERT_ID()").fetchall() == [(4,)]
    assert conn.execute("SELECT id, v FROM a ORDER BY id").fetchall() == [
        (1, "x"), (2, "y"), (3, "z"), (4, "p"), (5, "q")
    ]  # fmt: skip


def test_forms_that_are_parsed_whole():
    """Rows of different widths, literals among the placeholders, ON DUPLICATE KEY UPDATE and a
    single row are parsed as written (an error is the whole statement's own)."""
    from noria_py import errors as E
    from noria_py.engine.inserts import rows_form

    conn = noria_py.connect()
    conn.execute("CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    assert rows_form("INSERT INTO b VALUES (?, ?), (?, ?)") == ("INSERT INTO b VALUES (?, ?)", 2, 2)
    assert rows_form("insert  into `b` (`id`,v) values(?,?) , (?, ?);") is not None
    for sql in (
        "INSERT INTO b VALUES (?, ?)",
        "INSERT INTO b VALUES (?, ?), (?, 1)",
        "INSERT INTO b VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE v = 1",
        "/* c */ INSERT INTO b VALUES (?, ?), (?, ?)",
        "INSERT INTO b SELECT ?, ? UNION SELECT ?, ?",
    ):
        assert rows_form(sql) is None, sql
    with pytest.raises(E.Error) as err:
        conn.execute("INSERT INTO b VALUES (?, ?), (?)", (1, 2, 3))
    assert err.value.errno == 1136
    with pytest.raises(E.Error) as err:
        conn.execute("INSERT INTO b (id, nope) VALUES (?, ?), (?, ?)", (1, 2, 3, 4))
    assert err.value.errno == 1054
    with pytest.raises(E.Error) as err:
        conn.execute("INSERT INTO b VALUES (?, ?), (?, ?)", (1, 2, 1, 3))
    assert err.value.errno == 1062
    assert conn.execute("SELECT * FROM b").fetchall() == []  # nothing of the statement stays


# the literals a driver writes into a batch: the pool's, and doubles with an exponent
LITERALS = [v for v in VALUES if v != "-9223372036854775809"] + ["1.5e0", "-2E1", "-0", "-7.25"]


def _literals(ctype: str) -> list:
    pool = _pool(LITERALS, ctype)
    if "CHAR" in ctype or "BINARY" in ctype:
        # a double wider than a string column is refused (1235; MySQL rounds it to fit):
        # test_statement_edges_vs_mariadb
        pool = [v for v in pool if "e" not in v.lower() or v.startswith("'")]
    if ctype == "DATE":
        # no number is a date here (see test_ignore_vs_mariadb), doubles neither; and a time
        # of day is MariaDB's date with zero month and day, which this engine refuses
        pool = [v for v in pool if not re.fullmatch(r"-?[\d.]+[eE]-?\d+|'[\d:]+'", v)]
    return pool


@st.composite
def _written(draw, cols):
    """A several-row INSERT with its values written in, as pymysql and mysql-connector send an
    executemany."""
    names = [c for c, _t, _n in cols]
    types = {c: t for c, t, _n in cols}
    listed = draw(st.permutations(names))[: draw(st.integers(0, len(names)))]
    listed = draw(st.permutations(["id", *listed]))
    rows = []
    for _ in range(draw(st.integers(2, 4))):
        vals = [
            str(draw(KEYS)) if c == "id" else draw(st.sampled_from(_literals(types[c])))
            for c in listed
        ]
        rows.append("(" + ",".join(vals) + ")")
    verb = draw(st.sampled_from(["INSERT IGNORE INTO", "INSERT INTO", "REPLACE INTO"]))
    return f"{verb} t ({','.join(listed)}) VALUES {','.join(rows)}"


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data())
def test_batches_written_in_and_lifted_match_mariadb(oracle, data):
    """The server's path for such a batch: the values lifted into parameters (NULL, signed
    integers, DECIMALs and doubles included), then the one-row form."""
    cols = data.draw(_table())
    texts = data.draw(st.lists(_written(cols), min_size=1, max_size=3))
    statements = []
    for text in texts:
        lifted = lift_write_cached(text)
        assert lifted is not None and "?" in lifted[0] and "VALUES (?" in lifted[0], text
        assert lifted == lift_write_cached(text)  # by its shape, as the first time
        # against the text itself, parsed whole with its literals in place
        statements.append((lifted[0], list(lifted[1]), text, (), text))
    _check(oracle, cols, statements)

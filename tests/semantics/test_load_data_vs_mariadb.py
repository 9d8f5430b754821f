"""LOAD DATA INFILE compared with MariaDB's: hypothesis writes a file (hostile strings with
separators, quotes, escapes, newlines and non-ASCII text; NULLs; numbers and dates, also
malformed ones; short and long rows) in one of several dialects, and both databases load it
into the same table (the oracle runs on this machine, so it reads the same path). Both must
agree on whether the load is accepted, its error code, the affected rows, every stored
value and, where the load goes on past bad values (IGNORE, LOCAL: MySQL's adjusted values),
the warnings; a cached query over the table must see the loaded rows. A date MariaDB turns
into the zero date is error 1235 here (no zero dates are kept). ``LOAD DATA LOCAL`` (the
embedded connection reads the file itself, as the oracle's client does) loads as IGNORE does
unless REPLACE is given."""

from __future__ import annotations

import os
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

DIALECTS = [
    "",  # tab-separated, backslash escapes, \N for NULL
    "FIELDS TERMINATED BY ',' ENCLOSED BY '\"' LINES TERMINATED BY '\\n'",
    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\'",
    "FIELDS TERMINATED BY ';' LINES TERMINATED BY '\\r\\n'",
    "FIELDS TERMINATED BY '|' ENCLOSED BY '\\'' ESCAPED BY ''",
]
TEXT = st.lists(
    st.sampled_from(list("ab ,;|\"'\\\tNé日\n") + ["\r\n"]), min_size=0, max_size=6
).map("".join)
NUMBER = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.sampled_from(["", "1.5", "12abc", "x", "99999999999"]),
    st.sampled_from(["5", "7"]),  # duplicate keys: the table holds 5 already
)
DATE = st.sampled_from(["2024-02-29", "2023-13-01", "", "2024-1-5"])


def _encode(v, dialect: int) -> str:
    """A field as the file holds it in this dialect (None: SQL NULL)."""
    if dialect == 4:  # no escapes: quote fields, double a quote
        return "NULL" if v is None else "'" + v.replace("'", "''") + "'"
    if v is None:
        return "\\N"
    esc = v.replace("\\", "\\\\")
    if dialect in (0, 3):
        sep = "\t" if dialect == 0 else ";"
        return esc.replace(sep, "\\" + sep).replace("\n", "\\n").replace("\r", "\\r")
    return '"' + esc.replace('"', '\\"') + '"'


@st.composite
def _file(draw):
    dialect = draw(st.integers(0, len(DIALECTS) - 1))
    rows = []
    for _ in range(draw(st.integers(0, 5))):
        row = [
            draw(st.one_of(st.none(), NUMBER)),
            draw(st.one_of(st.none(), TEXT)),
            draw(st.one_of(st.none(), DATE)),
        ]
        width = draw(st.sampled_from([3, 3, 3, 3, 2, 4]))
        rows.append((row + ["7"])[:width])
    sep = {0: "\t", 1: ",", 2: ",", 3: ";", 4: "|"}[dialect]
    term = "\r\n" if dialect == 3 else "\n"
    body = "".join(sep.join(_encode(v, dialect) for v in r) + term for r in rows)
    ignore = draw(st.sampled_from(["", " IGNORE 1 LINES"])) if rows else ""
    mode = draw(st.sampled_from(["", "", "IGNORE ", "REPLACE "]))
    local = draw(st.sampled_from(["", "LOCAL "]))
    return dialect, body, ignore, mode, local


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect(local_infile=True)  # its client sends LOCAL files
    yield conn
    conn.close()


def _write_file(body: str, suffix: str) -> str:
    """A file the oracle (a local server) can read too."""
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(body)
    os.chmod(path, 0o644)
    return path


def _load_both(cur, oracle, table: str, setup: list, sql: str, ours_ready: bool = False):
    """Create ``table`` with ``setup`` on both sides (on the oracle only when ``ours_ready``),
    run the load on both: ((affected rows, error code) ours, the same theirs, MariaDB's
    warnings)."""
    for stmt in [] if ours_ready else setup:
        cur.execute(stmt)
    with oracle.cursor() as oc:
        oc.execute(f"DROP TABLE IF EXISTS {table}")
        for stmt in setup:
            oc.execute(stmt)
    try:
        cur.execute(sql)
        mine = (cur.rowcount, None)
    except E.Error as e:
        mine = (None, e.errno)
    try:
        with oracle.cursor() as oc:
            oc.execute(sql)
            theirs = (oc.rowcount, None)
            oc.execute("SHOW WARNINGS")
            warned = oc.fetchall()
    except Exception as e:  # noqa: BLE001 - pymysql's errors carry MySQL's code
        theirs, warned = (None, e.args[0]), ()
    return mine, theirs, warned


def _norm_warnings(rows) -> list:
    """Warnings as both word them: a duplicate key's name without its table (MySQL 8's
    't.PRIMARY', MariaDB's 'PRIMARY'), 1366's column without its database."""
    out = []
    for level, code, msg in rows:
        msg = re.sub(r"for key '[^'.]*\.", "for key '", msg)
        msg = re.sub(r"`[^`]+`\.(`[^`]+`\.`)", r"\1", msg)
        out.append((level, int(code), msg))
    return out


def _rows_of(oracle, table: str):
    with oracle.cursor() as oc:
        oc.execute(f"SELECT * FROM {table}")
        return oc.fetchall()


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(_file())
def test_load_data_matches_mariadb(oracle, case):
    dialect, body, ignore, mode, local = case
    path = _write_file(body, ".txt")
    ddl = "CREATE TABLE ld_t (n INT, s VARCHAR(10), d DATE, UNIQUE (n))"
    sql = f"LOAD DATA {local}INFILE '{path}' {mode}INTO TABLE ld_t {DIALECTS[dialect]}{ignore}"
    ours = noria_py.connect()
    try:
        cur = ours.cursor()
        setup = [ddl, "INSERT INTO ld_t VALUES (5, 'old', NULL)"]
        for stmt in setup:
            cur.execute(stmt)
        # a cached query over the table before the load
        assert cur.execute("SELECT COUNT(*) FROM ld_t WHERE n = ?", (5,)).fetchall() == [(1,)]
        mine, theirs, warned = _load_both(cur, oracle, "ld_t", setup, sql, ours_ready=True)
        want = _rows_of(oracle, "ld_t")
        if any(r[2] == "0000-00-00" for r in want):
            # IGNORE stored the zero date for a date it could not read: this engine keeps no
            # zero dates, and refuses the load (1235) instead, storing nothing of it
            assert mine == (None, 1235), (sql, body, warned)
            assert cur.execute("SELECT * FROM ld_t").fetchall() == [(5, "old", None)]
            return
        if mine[1] is None:  # IGNORE's adjusted values and short rows: MariaDB's warnings
            got = cur.execute("SHOW WARNINGS").fetchall()
            assert _norm_warnings(got) == _norm_warnings(warned), (sql, body)
        assert mine == theirs, (sql, body, mine, theirs)
        got = cur.execute("SELECT * FROM ld_t").fetchall()
        assert sorted(got, key=repr) == sorted(want, key=repr), (sql, body)
        assert cur.execute("SELECT COUNT(*) FROM ld_t WHERE n = ?", (5,)).fetchall() == [
            (sum(1 for r in want if r[0] == 5),)
        ]
    finally:
        ours.close()
        os.unlink(path)


SET_CASES = [
    ("1,3/12/2024,abc,zz\n2,\\N,de,yy\n", "(id, @d, s, @skip) SET d = STR_TO_DATE(@d, "
     "'%d/%m/%Y'), u = UPPER(s), n = CHAR_LENGTH(@skip) + id"),
    ("7,x\n8,y\n", "(@a, s) SET id = @a * 10, n = @nope"),
    ("7,x,1\n", "(@a, s) SET id = @a"),  # a long row: 1262
    ("9,29/02/2024\n", "(id, @d) SET d = STR_TO_DATE(@d, '%d/%m/%Y')"),
]  # fmt: skip


@pytest.mark.parametrize("body, tail", SET_CASES)
def test_load_data_variables_and_set_match_mariadb(oracle, body, tail):
    path = _write_file(body, ".csv")
    ddl = "CREATE TABLE ls_t (id INT PRIMARY KEY, d DATE, s VARCHAR(5), u VARCHAR(5), n INT)"
    sql = f"LOAD DATA INFILE '{path}' INTO TABLE ls_t FIELDS TERMINATED BY ',' {tail}"
    ours = noria_py.connect()
    try:
        cur = ours.cursor()
        mine, theirs, _warned = _load_both(cur, oracle, "ls_t", [ddl], sql)
        assert mine == theirs, sql
        got = cur.execute("SELECT * FROM ls_t").fetchall()
        assert sorted(got) == sorted(_rows_of(oracle, "ls_t")), sql
    finally:
        ours.close()
        os.unlink(path)


ESCAPE_CASES = [
    # \N is NULL only as a whole field; elsewhere it is an N, and what follows it stays
    "1,\\NN\n2,\\Nab\\tc\n3,x\\N\n4,\\N\\N\n5,\\N\n6,NULL\n",
    '1,"\\NN"\n2,"a\\N"\n3,"\\N\\N"\n4,"\\N"\n5,"NULL"\n',
    # a quote that never closes: the field is the rest of the file, its opening quote included
    '1,"\\N\n',
    '1,"x" \n2,y\n',
    '1,"ab\n2,\\N\n',
]


@pytest.mark.parametrize("ignore", ["", " IGNORE 1 LINES"])
@pytest.mark.parametrize("body", ESCAPE_CASES + ['\\N,"\n",\\N\n'])
def test_load_data_escapes_and_open_quotes_match_mariadb(oracle, body, ignore):
    """Escapes inside a field and a quote left open at the end of the file, read as MariaDB
    reads them (LOCAL: a short row is a warning); the last body's first line holds an open
    quote, which IGNORE 1 LINES skips as a line of its own."""
    path = _write_file(body, ".csv")
    ddl = "CREATE TABLE le_t (id VARCHAR(20), v VARCHAR(20))"
    sql = (
        f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE le_t FIELDS TERMINATED BY ','"
        f" ENCLOSED BY '\"'{ignore}"
    )
    ours = noria_py.connect()
    try:
        cur = ours.cursor()
        mine, theirs, warned = _load_both(cur, oracle, "le_t", [ddl], sql)
        assert mine == theirs, (body, mine, theirs)
        got = cur.execute("SHOW WARNINGS").fetchall()
        assert _norm_warnings(got) == _norm_warnings(warned), body
        got = cur.execute("SELECT * FROM le_t").fetchall()
        assert sorted(got, key=repr) == sorted(_rows_of(oracle, "le_t"), key=repr), body
    finally:
        ours.close()
        os.unlink(path)

"""The diagnostics area compared with MariaDB's: after every statement of a sequence (INSERT
IGNORE with duplicate keys, LOAD DATA IGNORE / LOCAL with duplicates and long rows, failing
statements, SELECTs with and without tables, SET, transactions, SHOW WARNINGS itself), both
must list the same ``SHOW WARNINGS`` and ``SHOW ERRORS`` (with and without LIMIT) and agree on
``SHOW COUNT(*) WARNINGS | ERRORS``, ``@@warning_count`` and ``@@error_count``. Reading them
changes nothing, so they are read after each statement. Named sequences first, then
hypothesis chooses sequences.

Messages are compared for the conditions whose text is the same on both: LOAD DATA's row
messages and 1238; a duplicate key's names the key as MySQL 8 does (``'t.PRIMARY'``) where
MariaDB writes ``'PRIMARY'``; other errors are compared by level and code (their texts name
the database differently)."""

from __future__ import annotations

import os
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

TABLE = "CREATE TABLE ww (id INT PRIMARY KEY, v VARCHAR(10))"
SEED = "INSERT INTO ww VALUES (1, 'a'), (5, 'e')"

# a file with a duplicate of a seeded key, a long row and a fresh row
_FILE = "1\tdup\n7\tg\textra\n8\th\n5\tdup2\n"
_LONG_ONLY = "9\ti\tmore\tand more\n"

READS = [
    "SHOW WARNINGS",
    "SHOW ERRORS",
    "SHOW WARNINGS LIMIT 1",
    "SHOW WARNINGS LIMIT 1, 2",
    "SHOW ERRORS LIMIT 0",
    "SHOW COUNT(*) WARNINGS",
    "SHOW COUNT(*) ERRORS",
    "SELECT @@warning_count, @@error_count",
    "SELECT @@session.warning_count, @@SESSION.error_count AS e",
    "SELECT @@warning_count + 0, 1 + @@error_count * 2",
]


def _statements(path: str, long_path: str) -> list[str]:
    return [
        "INSERT IGNORE INTO ww VALUES (1, 'x'), (2, 'y'), (5, 'z')",
        "INSERT IGNORE INTO ww VALUES (3, 'c')",
        "INSERT INTO ww VALUES (1, 'again')",
        "INSERT INTO ww VALUES (100, 'new')",
        f"LOAD DATA INFILE '{path}' IGNORE INTO TABLE ww",
        f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE ww",
        f"LOAD DATA INFILE '{long_path}' IGNORE INTO TABLE ww",
        f"LOAD DATA INFILE '{long_path}' INTO TABLE ww",
        f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE ww",
        "SELECT * FROM ww ORDER BY id",
        "SELECT v FROM ww WHERE id = 1",
        "SELECT COUNT(*) FROM ww WHERE id > 2",
        "SELECT 1",
        "SELECT 1 + 1 FROM dual",
        "SELECT * FROM no_such_table",
        "SELEC 1",
        "SELECT @@global.warning_count",
        "UPDATE ww SET v = 'u' WHERE id = 99",
        "DELETE FROM ww WHERE id > 5",
        "SHOW TABLES",
        "DESCRIBE ww",
        "BEGIN",
        "COMMIT",
        "SET autocommit = 1",
        # IF [NOT] EXISTS leaves a note where the statement had nothing to do
        "CREATE TABLE IF NOT EXISTS ww (id INT PRIMARY KEY)",
        "DROP TABLE IF EXISTS nosuch_a, nosuch_b",
        "DROP VIEW IF EXISTS nosuch_v",
        "CREATE INDEX IF NOT EXISTS ixv ON ww (v)",
        "DROP INDEX IF EXISTS nox ON ww",
        "DROP DATABASE IF EXISTS nosuch_db",
        *READS,
    ]


def _norm(rows) -> list:
    out = []
    for level, code, msg in rows:
        code = int(code)
        if code == 1062:
            msg = re.sub(r"for key '[^'.]*\.", "for key '", msg)
        elif code not in (1261, 1262, 1238, 1050, 1061, 1091, 1008):
            msg = None
        out.append((level, code, msg))
    return out


def _state_oracle(cur) -> dict:
    state = {}
    for q in READS:
        cur.execute(q)
        rows = cur.fetchall()
        state[q] = _norm(rows) if q.startswith("SHOW") and "COUNT" not in q else list(rows)
    return state


def _state_noria(cur) -> dict:
    state = {}
    for q in READS:
        cur.execute(q)
        rows = cur.fetchall()
        if q.startswith("SHOW") and "COUNT" not in q:
            state[q] = _norm(rows)
        else:
            state[q] = [tuple(int(v) for v in r) for r in rows]
    return state


def _outcome_oracle(cur, sql: str):
    import pymysql

    try:
        cur.execute(sql)
        cur.fetchall()
        return ("ok", cur.rowcount if cur.description is None else None)
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0])


def _outcome_noria(cur, sql: str):
    try:
        cur.execute(sql)
        cur.fetchall()
        return ("ok", cur.rowcount if cur.description is None else None)
    except E.Error as e:
        return ("error", e.errno)


@pytest.fixture(scope="module")
def files():
    paths = []
    for body in (_FILE, _LONG_ONLY):
        fd, path = tempfile.mkstemp(prefix="noria-warn-", suffix=".tsv")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        os.chmod(path, 0o644)
        paths.append(path)
    yield paths
    for p in paths:
        os.unlink(p)


@pytest.fixture(scope="module")
def oracle_db(mariadb_oracle):
    c = mariadb_oracle.connect(database=None)
    with c.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS oracle_warn")
    c.close()
    return mariadb_oracle


def _compare(oracle_db, statements: list[str]) -> None:
    """Run ``statements`` on a fresh MariaDB connection and a fresh embedded one (both with
    the seeded table) and compare the outcome and the diagnostics after each."""
    ora = oracle_db.connect(database="oracle_warn", local_infile=True)
    nor = noria_py.connect()
    try:
        ocur, ncur = ora.cursor(), nor.cursor()
        ocur.execute("DROP TABLE IF EXISTS ww")
        for sql in (TABLE, SEED):
            ocur.execute(sql)
            ncur.execute(sql)
        assert _state_noria(ncur) == _state_oracle(ocur), "after the setup"
        done = []
        for sql in statements:
            done.append(sql)
            got, want = _outcome_noria(ncur, sql), _outcome_oracle(ocur, sql)
            assert got == want, done
            assert _state_noria(ncur) == _state_oracle(ocur), done
        ocur.execute("SELECT * FROM ww ORDER BY id")
        ncur.execute("SELECT * FROM ww ORDER BY id")
        assert [tuple(r) for r in ncur.fetchall()] == [tuple(r) for r in ocur.fetchall()]
    finally:
        ora.close()
        nor.close()


def test_insert_ignore_then_reads_keep_then_select_clears(oracle_db, files):
    _compare(
        oracle_db,
        [
            "INSERT IGNORE INTO ww VALUES (1, 'x'), (2, 'y'), (5, 'z')",
            "SHOW WARNINGS",
            "SELECT @@warning_count",
            "SELECT 1",  # no table: the warnings stay
            "SET autocommit = 1",
            "BEGIN",
            "COMMIT",
            "SELECT * FROM ww ORDER BY id",  # a table: cleared
            "INSERT IGNORE INTO ww VALUES (5, 'again')",
            "SELECT v FROM ww WHERE id = 1",
            "INSERT IGNORE INTO ww VALUES (5, 'again')",
            "SHOW TABLES",
            "INSERT IGNORE INTO ww VALUES (3, 'c')",  # no duplicate: cleared
        ],
    )


def test_load_data_ignore_and_local_warnings(oracle_db, files):
    path, long_path = files
    _compare(
        oracle_db,
        [
            f"LOAD DATA INFILE '{path}' IGNORE INTO TABLE ww",  # 1062, 1262, 1062 in row order
            "SHOW WARNINGS LIMIT 1, 2",
            "DELETE FROM ww WHERE id > 5",
            f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE ww",
            f"LOAD DATA INFILE '{long_path}' IGNORE INTO TABLE ww",
            f"LOAD DATA INFILE '{long_path}' INTO TABLE ww",  # 1262 is an error without IGNORE
            f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE ww",
        ],
    )


def test_errors_replace_the_area(oracle_db, files):
    _compare(
        oracle_db,
        [
            "INSERT IGNORE INTO ww VALUES (1, 'x')",
            "SELECT * FROM no_such_table",
            "SHOW ERRORS",
            "SELECT 1",  # the error stays
            "INSERT INTO ww VALUES (1, 'again')",
            "SELEC 1",
            "SELECT @@global.warning_count",
            "SHOW WARNINGS LIMIT 0",
            "UPDATE ww SET v = 'u' WHERE id = 99",  # a table: cleared
            "SELECT @@warning_count + 0, 1 + @@error_count * 2",
        ],
    )


def test_if_exists_notes(oracle_db, files):
    _compare(
        oracle_db,
        [
            "CREATE TABLE IF NOT EXISTS ww (id INT PRIMARY KEY)",  # 1050
            "SHOW WARNINGS",
            "SELECT 1",  # the note stays
            "DROP TABLE IF EXISTS nosuch_a, nosuch_b",  # 1051 for both, one note
            "DROP VIEW IF EXISTS nosuch_v",  # 4092
            "CREATE INDEX IF NOT EXISTS ixv ON ww (v)",  # created: the area is cleared
            "CREATE INDEX IF NOT EXISTS ixv ON ww (v)",  # 1061
            "DROP INDEX IF EXISTS nox ON ww",  # 1091
            "DROP DATABASE IF EXISTS nosuch_db",  # 1008
            "CREATE TABLE IF NOT EXISTS fresh_t (id INT)",
            "DROP TABLE IF EXISTS fresh_t",
        ],
    )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_statement_sequences(oracle_db, files, data):
    pool = _statements(*files)
    seq = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))
    _compare(oracle_db, seq)


def test_notes_before_an_error(oracle_db, files):
    """A statement that leaves notes and then fails: the area lists the notes it raised before
    the error (a DECIMAL's digits rounded away, 1265), then the error, as MariaDB does, for a
    one-row and a multi-row INSERT (the values computed column by column, row by row) and for
    an UPDATE of one row and of several. (The failing column is the row's last: MariaDB goes
    on through the failing row's other columns and adds their notes after the error, which the
    engine does not.)"""
    _compare(
        oracle_db,
        [
            "DROP TABLE IF EXISTS wn",
            "CREATE TABLE wn (id INT PRIMARY KEY, d DECIMAL(5,2), s VARCHAR(3))",
            "INSERT INTO wn VALUES (1, 0.001, 'long')",
            "INSERT INTO wn VALUES (1, 0.005, 'a')",
            "INSERT INTO wn VALUES (2, 1.001, 'b')",
            "INSERT INTO wn (id, d, s) VALUES (3, 0.001, 'c'), (4, 0.002, 'long')",
            "INSERT INTO wn (id, d) VALUES (5, 0.001), (6, 0.002), (7, 1234.5)",
            "UPDATE wn SET d = 0.001, s = 'toolong' WHERE id = 1",
            "UPDATE wn SET d = 2.004, s = 'x' WHERE id >= 1",
            "UPDATE wn SET d = 3.001, s = 'long' WHERE id >= 1",
            "UPDATE wn SET s = 'y', d = 4.001 WHERE id = 2",
            "DROP TABLE wn",
        ],
    )

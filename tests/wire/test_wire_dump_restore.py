"""A MariaDB database dumped by ``mariadb-dump`` and restored into noria_py: through the
``mariadb`` command-line client against ``noria-py serve``, and through ``noria-py shell`` on a
database file. Every row and every view is compared with MariaDB's.

The dump is what a user moving an application brings: executable comments holding the session
settings, ``LOCK TABLES``, ``DISABLE KEYS``, tables in name order with foreign key checks off (a
child before its parent), a key 0 under ``NO_AUTO_VALUE_ON_ZERO``, binary columns written as raw
bytes in string literals, and each view first as a placeholder, then as ``CREATE ALGORITHM=...
DEFINER=... VIEW``. Hypothesis draws the rows of one table of many types for the last test."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py

pytestmark = pytest.mark.wire

SCHEMA = [
    "CREATE TABLE b_parent (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(40) NOT NULL, "
    "note TEXT, price DECIMAL(12,3), ratio DOUBLE, d DATE, dt DATETIME(6), tm TIME, "
    "small TINYINT UNSIGNED, big BIGINT, e ENUM('x','y','z'), s SET('a','b','c'), "
    "bin VARBINARY(16), UNIQUE KEY (name), KEY (price))",
    "CREATE TABLE a_child (id INT PRIMARY KEY AUTO_INCREMENT, parent_id INT, label VARCHAR(20), "
    "FOREIGN KEY (parent_id) REFERENCES b_parent (id) ON DELETE CASCADE)",
    "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES'",
    "INSERT INTO b_parent VALUES (0, 'zero', NULL, -1.5, 0.1, '2020-02-29', "
    "'2020-01-01 01:02:03.456789', '-838:59:59', 255, -9223372036854775808, 'y', 'a,c', "
    "X'00FF27225C0A0D1A')",
    "INSERT INTO b_parent (name, note, price, ratio, d, dt, tm, small, big, e, s, bin) VALUES "
    "('a''b\\\\c\\n\"\\r\\t', 'tab\\there\\0nul', 123456789.125, 1e300, '0001-01-01', "
    "'9999-12-31 23:59:59.999999', '838:59:59', 0, 9223372036854775807, NULL, '', X''), "
    "('😀 漢字 trailing  ', '', 0, -2.5e-300, NULL, NULL, NULL, NULL, NULL, 'z', 'b', NULL), "
    "('/*!40101 not a comment */ -- nor this', '# nor this;', NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, X'2F2A212A2F')",
    "INSERT INTO a_child VALUES (1, 0, 'c0'), (2, 1, 'c1'), (3, NULL, 'orphan'), (4, 3, ';')",
    # MariaDB's dump writes the generated columns' values too (ignored outside strict mode),
    # and a BIT as its raw bytes
    "CREATE TABLE c_more (id INT PRIMARY KEY, a INT, b INT AS (a * 2) VIRTUAL, "
    "c INT AS (a + 1) STORED, flags BIT(8), wide BIT(12), j JSON, ts TIMESTAMP NULL, "
    "y YEAR, f FLOAT)",
    "INSERT INTO c_more (id, a, flags, wide, j, ts, y, f) VALUES "
    "(1, 5, b'10100101', 4095, '{\"k\": [1, \"x\"]}', '2024-01-02 03:04:05', 2024, 1.25), "
    "(2, NULL, b'00110001', 0, NULL, NULL, NULL, NULL)",
    "CREATE DEFINER=`root`@`localhost` VIEW v_counts AS SELECT p.name, COUNT(c.id) AS n "
    "FROM b_parent p LEFT JOIN a_child c ON c.parent_id = p.id GROUP BY p.name",
    "CREATE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW v_big AS "
    "SELECT id, price * 2 AS double_price FROM b_parent WHERE price > 0",
]
TABLES = {
    "a_child": "SELECT * FROM a_child ORDER BY id",
    "b_parent": "SELECT * FROM b_parent ORDER BY id",
    # (a BIT compared as its number: MySQL returns its bytes, the engine its number)
    "c_more": "SELECT id, a, b, c, flags + 0, wide + 0, j, ts, y, f FROM c_more ORDER BY id",
}
VIEWS = {
    "v_counts": "SELECT * FROM v_counts ORDER BY name",
    "v_big": "SELECT * FROM v_big ORDER BY id",
}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not installed (apt-get install -y mariadb-client)")
    return path


def _source(mariadb_oracle, db: str, statements: list[str]):
    c = mariadb_oracle.connect(database=None)
    with c.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
        cur.execute(f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
        cur.execute(f"USE {db}")
        for sql in statements:
            cur.execute(sql)
    c.close()


def _dump(mariadb_oracle, db: str) -> bytes:
    out = subprocess.run(
        [_tool("mariadb-dump"), "-h127.0.0.1", f"-P{mariadb_oracle.port}", "-uroot", db],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out.stdout


def _rows(cur, query: str) -> list[tuple]:
    cur.execute(query)
    out = []
    for row in cur.fetchall():
        out.append(tuple(bytes(v) if isinstance(v, (bytes, bytearray)) else v for v in row))
    return out


def _oracle_rows(mariadb_oracle, db: str, names: dict) -> dict:
    c = mariadb_oracle.connect(database=db)
    try:
        with c.cursor() as cur:
            return {n: _rows(cur, q) for n, q in names.items()}
    finally:
        c.close()


def _restore_over_the_wire(server, dump: bytes) -> None:
    res = subprocess.run(
        [
            _tool("mariadb"),
            "--default-character-set=utf8mb4",
            "-h127.0.0.1",
            f"-P{server.port}",
            "-utester",
            "noria",
        ],
        input=dump,
        capture_output=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr.decode("utf-8", "replace")


def _restore_embedded(path: str, dump: bytes) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "noria_py.cli", "shell", "--data", path, "--create"],
        input=dump,
        capture_output=True,
        timeout=180,
        env=dict(os.environ, PYTHONIOENCODING="utf-8:surrogateescape"),
    )
    assert res.returncode == 0, res.stderr.decode("utf-8", "replace")
    assert b"ERROR" not in res.stderr, res.stderr.decode("utf-8", "replace")


def _check_over_the_wire(server, expected: dict, names: dict) -> None:
    c = server.pymysql()
    try:
        with c.cursor() as cur:
            got = {n: _rows(cur, q) for n, q in names.items()}
            cur.execute("SELECT @@sql_mode, @@foreign_key_checks, @@sql_notes")
            modes = cur.fetchone()
    finally:
        c.close()
    assert got == expected
    # the dump put the session's settings back as they were
    assert "STRICT_TRANS_TABLES" in modes[0] and modes[1:] == (1, 1)


def _check_embedded(path: str, expected: dict, names: dict) -> None:
    conn = noria_py.connect(path)
    try:
        cur = conn.cursor()
        got = {n: _rows(cur, q) for n, q in names.items()}
    finally:
        conn.close()
    assert got == expected


def test_a_dump_restores_through_the_mariadb_client(server, mariadb_oracle):
    _source(mariadb_oracle, "dump_src", SCHEMA)
    dump = _dump(mariadb_oracle, "dump_src")
    assert b"/*!40101 SET" in dump and b"LOCK TABLES" in dump and b"DISABLE KEYS" in dump
    names = {**TABLES, **VIEWS}
    expected = _oracle_rows(mariadb_oracle, "dump_src", names)
    assert expected["b_parent"][0][0] == 0  # the key 0 the dump must keep
    _restore_over_the_wire(server, dump)
    _check_over_the_wire(server, expected, names)
    _restore_over_the_wire(server, dump)  # again: DROP TABLE IF EXISTS, then all of it anew
    _check_over_the_wire(server, expected, names)
    c = server.pymysql()
    try:
        with c.cursor() as cur:  # the views are maintained: a write after the restore
            cur.execute("DELETE FROM b_parent WHERE id = 1")
            cur.execute("SELECT name, n FROM v_counts ORDER BY name")
            counts = cur.fetchall()
            cur.execute("SELECT COUNT(*) FROM a_child")
            children = cur.fetchone()[0]
    finally:
        c.close()
    assert len(counts) == len(expected["v_counts"]) - 1 and children == 3


def test_a_dump_restores_through_the_shell(tmp_path, mariadb_oracle):
    _source(mariadb_oracle, "dump_src_shell", SCHEMA)
    dump = _dump(mariadb_oracle, "dump_src_shell")
    names = {**TABLES, **VIEWS}
    expected = _oracle_rows(mariadb_oracle, "dump_src_shell", names)
    path = str(tmp_path / "restored.db")
    _restore_embedded(path, dump)
    _check_embedded(path, expected, names)


_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
) | st.sampled_from(["'", "\\", '"', "\n", "\r", "\0", "\x1a", "*/", "/*!", "-- ", "#", ";", " a "])
_ROW = st.tuples(
    st.none() | _TEXT,
    st.none() | st.decimals(-(10**8), 10**8, places=2, allow_nan=False),
    st.none() | st.floats(allow_nan=False, allow_infinity=False),
    st.none() | st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)),
    st.none()
    | st.datetimes(datetime.datetime(1000, 1, 1), datetime.datetime(9999, 12, 31)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
    ),
    st.none() | st.binary(max_size=10),
    st.none() | st.integers(-(2**63), 2**63 - 1),
)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_ROW, max_size=12))
def test_drawn_rows_survive_a_dump(server, mariadb_oracle, rows):
    """Every drawn value, dumped by mariadb-dump and restored through the mariadb client,
    reads back from noria_py as MariaDB reads it."""
    c = mariadb_oracle.connect(database=None)
    with c.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS dump_drawn")
        cur.execute("CREATE DATABASE dump_drawn CHARACTER SET utf8mb4")
        cur.execute("USE dump_drawn")
        cur.execute(
            "CREATE TABLE drawn (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(12), "
            "d DECIMAL(12,2), f DOUBLE, dd DATE, dt DATETIME(3), b VARBINARY(10), i BIGINT)"
        )
        for row in rows:
            cur.execute(
                "INSERT INTO drawn (s, d, f, dd, dt, b, i) VALUES (%s,%s,%s,%s,%s,%s,%s)", row
            )
    c.close()
    dump = _dump(mariadb_oracle, "dump_drawn")
    expected = _oracle_rows(
        mariadb_oracle, "dump_drawn", {"drawn": "SELECT * FROM drawn ORDER BY id"}
    )
    _restore_over_the_wire(server, dump)
    n = server.pymysql()
    try:
        with n.cursor() as cur:
            got = _rows(cur, "SELECT * FROM drawn ORDER BY id")
    finally:
        n.close()
    assert got == expected["drawn"]
    for g in got:  # (DECIMALs compare as numbers: their scale too)
        assert g[2] is None or isinstance(g[2], Decimal)

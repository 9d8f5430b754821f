"""Named user-level locks (GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK,
IS_USED_LOCK): one session's calls compared with MariaDB's, and sessions contending for a
name, embedded (connections on one file) and over the wire."""

from __future__ import annotations

import threading
import time

import pytest

import noria_py

# one session's calls; MariaDB's answers are the oracle (names differ in more than case, and
# stay within MySQL's 64 characters: there MariaDB differs from MySQL)
SCRIPT = [
    "SELECT GET_LOCK('L', 0)",
    "SELECT GET_LOCK('L', 0) AS again, IS_USED_LOCK('L') > 0, IS_FREE_LOCK('L'),"
    " IS_FREE_LOCK('other')",
    "SELECT RELEASE_LOCK('L')",
    "SELECT RELEASE_LOCK('L'), IS_FREE_LOCK('L')",
    "SELECT RELEASE_LOCK('L')",
    "SELECT RELEASE_LOCK('nope'), IS_USED_LOCK('nope')",
    "SELECT GET_LOCK(NULL, 0), GET_LOCK('', 0), RELEASE_LOCK(NULL), IS_FREE_LOCK(NULL)",
    "SELECT GET_LOCK('m', 0), GET_LOCK('n', 1), GET_LOCK('n', 0), RELEASE_ALL_LOCKS()",
    "SELECT RELEASE_ALL_LOCKS(), IS_FREE_LOCK('m')",
    "SELECT GET_LOCK('t', NULL)",
    "SELECT GET_LOCK(CONCAT('a', 'b'), 0), 1 + 1, RELEASE_LOCK('ab') FROM DUAL",
]


def test_one_sessions_locks_answer_as_mariadb(mariadb_oracle, tmp_path):
    oracle = mariadb_oracle.connect()
    conn = noria_py.connect(str(tmp_path / "locks.db"))
    with oracle.cursor() as cur:
        cur.execute("SELECT RELEASE_ALL_LOCKS()")
        for sql in SCRIPT:
            cur.execute(sql)
            want = [tuple(r) for r in cur.fetchall()]
            got = [tuple(r) for r in conn.execute(sql).fetchall()]
            assert got == want, sql
    oracle.close()
    conn.close()


def test_refused_where_mysql_would_call_it_per_row_or_maybe_not_at_all():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE lk (id INT PRIMARY KEY)")
    for sql in (
        "SELECT GET_LOCK('x', 0) FROM lk",
        "SELECT IF(1, GET_LOCK('x', 0), 0)",
        "SELECT COALESCE(NULL, RELEASE_LOCK('x'))",
    ):
        with pytest.raises(noria_py.Error) as err:
            conn.execute(sql)
        assert err.value.errno == 1235, sql
    with pytest.raises(noria_py.Error) as err:
        conn.execute("SELECT GET_LOCK('x')")
    assert err.value.errno == 1582
    long = "x" * 65
    with pytest.raises(noria_py.Error) as err:
        conn.execute(f"SELECT GET_LOCK('{long}', 0)")
    assert err.value.errno == 3057  # MySQL's limit of 64 characters
    assert conn.execute("SELECT IS_FREE_LOCK('x')").fetchall() == [(1,)]


def _one(conn, sql):
    return conn.execute(sql).fetchall()[0][0]


def test_connections_on_one_file_contend_and_a_closed_one_releases(tmp_path):
    path = str(tmp_path / "contend.db")
    a, b = noria_py.connect(path), noria_py.connect(path)
    assert _one(a, "SELECT GET_LOCK('job', 0)") == 1
    assert _one(b, "SELECT GET_LOCK('JOB', 0)") == 0  # names compare without case
    assert _one(b, "SELECT IS_FREE_LOCK('job')") == 0
    assert _one(b, "SELECT RELEASE_LOCK('job')") == 0  # not b's to release
    a.execute("BEGIN")
    a.execute("ROLLBACK")  # a transaction's end leaves it
    assert _one(b, "SELECT GET_LOCK('job', 0.05)") == 0
    # b waits; a releases meanwhile; b gets it once a has
    threading.Timer(0.3, lambda: a.execute("SELECT RELEASE_LOCK('job')")).start()
    t0 = time.monotonic()
    assert _one(b, "SELECT GET_LOCK('job', 10)") == 1
    assert 0.2 < time.monotonic() - t0 < 5
    assert _one(a, "SELECT GET_LOCK('job', 0)") == 0
    b.close()  # the session's end releases its locks
    assert _one(a, "SELECT GET_LOCK('job', 0)") == 1
    a.close()

"""``AUTO_INCREMENT = n``, as a CREATE TABLE option and in ALTER TABLE, compared with MariaDB.

The option was accepted and ignored: after ``ALTER TABLE t AUTO_INCREMENT = 100`` the next key
was still the old counter's. The next key given is now ``n``, or one above the largest key the
table holds when that is larger; alone in an ALTER it sets the counter without rebuilding the
table, beside other changes after them; the counter survives reopening the file.

As InnoDB's, the counter is not undone: a value given to a row that a duplicate key refused, or
whose transaction rolled back, is not given again.
"""

from __future__ import annotations

import pymysql
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

SCRIPT = [
    "CREATE TABLE ai (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))"
    " AUTO_INCREMENT=50",
    "INSERT INTO ai (v) VALUES ('a')",
    "ALTER TABLE ai AUTO_INCREMENT = 100",
    "INSERT INTO ai (v) VALUES ('b'), ('c')",
    "ALTER TABLE ai AUTO_INCREMENT = 5",  # below a key in use: one above the largest
    "INSERT INTO ai (v) VALUES ('d')",
    "DELETE FROM ai WHERE id > 100",
    "ALTER TABLE ai AUTO_INCREMENT = 60",  # above the largest, below the old counter
    "INSERT INTO ai (v) VALUES ('e')",
    "ALTER TABLE ai ADD COLUMN w INT, AUTO_INCREMENT = 1000",
    "INSERT INTO ai (v) VALUES ('f')",
    "CREATE TABLE plain (a INT PRIMARY KEY) AUTO_INCREMENT=7",  # nothing to count: accepted
]


def _run(cur, script: list, table: str) -> list:
    """Run ``script`` on a DB-API cursor (MariaDB's or ours); after each INSERT: the table's
    (id, v) rows and the first key the statement gave."""
    out = []
    for sql in script:
        cur.execute(sql)
        if sql.startswith("INSERT"):
            first = cur.lastrowid
            cur.execute(f"SELECT id, v FROM {table} ORDER BY id")
            out.append(([tuple(r) for r in cur.fetchall()], first))
    return out


def _on_mariadb(oracle, script: list, table: str, tables: str) -> list:
    """``_run`` on MariaDB, ``tables`` dropped before and after."""
    conn = oracle.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {tables}")
            try:
                return _run(cur, script, table)
            finally:
                cur.execute(f"DROP TABLE IF EXISTS {tables}")
    finally:
        conn.close()


def test_auto_increment_option_as_mariadb(mariadb_oracle, tmp_path):
    want = _on_mariadb(mariadb_oracle, SCRIPT, "ai", "ai, plain")
    path = str(tmp_path / "ai.db")
    ours = noria_py.connect(path)
    assert _run(ours.cursor(), SCRIPT, "ai") == want
    ours.close()
    again = noria_py.connect(path)  # the counter is kept in the file
    again.execute("INSERT INTO ai (v) VALUES ('g')")
    assert again.execute("SELECT MAX(id) FROM ai").fetchall() == [(1001,)]
    again.close()


def test_auto_increment_option_without_a_counter_to_set():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE two (a INT AUTO_INCREMENT, b INT, PRIMARY KEY (a, b))")
    try:
        conn.execute("ALTER TABLE two AUTO_INCREMENT = 7")
    except E.NotSupportedError as e:
        assert e.errno == 1235
    else:
        raise AssertionError("AUTO_INCREMENT = n was accepted for a key it cannot set")
    conn.close()


MOVED = [
    "CREATE TABLE mv (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))",
    "INSERT INTO mv (v) VALUES ('a'), ('b'), ('c')",
    "UPDATE mv SET id = 50 WHERE id = 3",  # above the counter: the counter follows
    "DELETE FROM mv WHERE id = 50",
    "INSERT INTO mv (v) VALUES ('d')",  # 51, not 4: 50 was given out once
    "UPDATE mv SET id = id + 100",  # several keys moved at once
    "DELETE FROM mv WHERE id > 100",
    "INSERT INTO mv (v) VALUES ('e')",
    "UPDATE mv SET id = 7 WHERE v = 'e'",  # below the counter: no change
    "INSERT INTO mv (v) VALUES ('f')",
]


def test_a_key_moved_above_the_counter_is_never_given_again(mariadb_oracle):
    """MySQL moves the AUTO_INCREMENT counter past a key an UPDATE moved above it, so the key
    is not given out again once its row is deleted (SQLite's counter follows inserts only)."""
    want = _on_mariadb(mariadb_oracle, MOVED, "mv", "mv")
    ours = noria_py.connect()
    assert _run(ours.cursor(), MOVED, "mv") == want
    ours.close()


# --- values given out stay given out -----------------------------------------------------------

SPENT_TABLE = (
    "CREATE TABLE sp (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, u INT, v VARCHAR(10), "
    "UNIQUE KEY sp_u (u))"
)
spent_statements = st.one_of(
    st.builds(lambda u: f"INSERT INTO sp (u, v) VALUES ({u}, 'i')", st.integers(0, 4)),
    st.builds(lambda u: f"INSERT IGNORE INTO sp (u, v) VALUES ({u}, 'g')", st.integers(0, 4)),
    st.builds(
        lambda u: f"INSERT INTO sp (u, v) VALUES ({u}, 'o') ON DUPLICATE KEY UPDATE v = 'up'",
        st.integers(0, 4),
    ),
    st.builds(
        lambda i, u: f"INSERT INTO sp VALUES ({i}, {u}, 'e')", st.integers(1, 9), st.integers(5, 9)
    ),
    st.builds(
        lambda us: "INSERT INTO sp (u, v) VALUES " + ", ".join(f"({u}, 'm')" for u in us),
        st.lists(st.integers(0, 4), min_size=2, max_size=3),
    ),
    st.builds(lambda u: f"DELETE FROM sp WHERE u = {u}", st.integers(0, 9)),
    st.sampled_from(["BEGIN", "COMMIT", "ROLLBACK"]),
)


def _spent_run(cur, script: list) -> list:
    out = []
    for sql in script:
        try:
            cur.execute(sql)
        except (pymysql.err.MySQLError, E.Error) as e:
            out.append(("error", e.args[0] if isinstance(e, pymysql.err.MySQLError) else e.errno))
            continue
        cur.execute("SELECT id, u, v FROM sp ORDER BY id")
        out.append([tuple(r) for r in cur.fetchall()])
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(spent_statements, min_size=1, max_size=14))
def test_values_given_out_stay_given_out_as_mariadb(mariadb_oracle, script):
    """InnoDB's counter is not undone: a value given to a row a duplicate key refused (INSERT,
    INSERT IGNORE, ON DUPLICATE KEY UPDATE's update) or whose transaction rolled back is not
    given again, so the next rows' keys are MariaDB's."""
    conn = mariadb_oracle.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS sp")
            cur.execute(SPENT_TABLE)
            want = _spent_run(cur, [*script, "ROLLBACK"])
            cur.execute("DROP TABLE sp")
    finally:
        conn.close()
    ours = noria_py.connect()
    cur = ours.cursor()
    cur.execute(SPENT_TABLE)
    try:
        assert _spent_run(cur, [*script, "ROLLBACK"]) == want
    finally:
        ours.close()

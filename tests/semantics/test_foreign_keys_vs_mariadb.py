"""FOREIGN KEYs compared with a real MariaDB: hypothesis draws the referential actions of a
parent, a child and a grandchild (RESTRICT, CASCADE, SET NULL) and a sequence of writes to all
three (with keys that exist and keys that do not, also with FOREIGN_KEY_CHECKS off for a
while); after every statement both must agree on whether it was accepted (and its error code)
and on every table's rows, and a cached count over the child must equal a fresh count."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

ACTION = st.sampled_from(["RESTRICT", "CASCADE", "SET NULL", "NO ACTION"])
KEY = st.integers(1, 5)


@st.composite
def _step(draw) -> str:
    kind = draw(
        st.sampled_from(
            [
                "ins_p",
                "ins_p",
                "ins_c",
                "ins_c",
                "ins_g",
                "ins_c_ignore",
                "del_p",
                "del_c",
                "upd_p",
                "upd_c",
                "checks_off",
                "checks_on",
            ]
        )
    )
    k, v = draw(KEY), draw(KEY)
    ref = draw(st.one_of(st.none(), KEY))
    ref_sql = "NULL" if ref is None else str(ref)
    if kind == "ins_p":
        return f"INSERT INTO fk_p (id, name) VALUES ({k}, 'p{k}')"
    if kind == "ins_c":
        return f"INSERT INTO fk_c (id, pid) VALUES ({k}, {ref_sql})"
    if kind == "ins_c_ignore":  # a row its constraint refuses is skipped, not an error
        return f"INSERT IGNORE INTO fk_c (id, pid) VALUES ({k}, {ref_sql}), ({v}, {v})"
    if kind == "ins_g":
        return f"INSERT INTO fk_g (id, cid) VALUES ({k}, {ref_sql})"
    if kind == "del_p":
        return f"DELETE FROM fk_p WHERE id = {k}"
    if kind == "del_c":
        return f"DELETE FROM fk_c WHERE id = {k}"
    if kind == "upd_p":
        return f"UPDATE fk_p SET id = {v} WHERE id = {k}"
    if kind == "upd_c":
        return f"UPDATE fk_c SET pid = {ref_sql} WHERE id = {k}"
    return f"SET FOREIGN_KEY_CHECKS = {0 if kind == 'checks_off' else 1}"


@pytest.fixture(scope="module")
def theirs(mariadb_oracle):
    conn = mariadb_oracle.connect()

    def run(sql):
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    yield run
    conn.close()


def _try(run, sql):
    try:
        return run(sql), None
    except E.Error as e:
        return None, e.errno
    except Exception as e:  # pymysql's errors
        return None, e.args[0]


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ACTION, ACTION, ACTION, ACTION, st.lists(_step(), min_size=1, max_size=14))
def test_foreign_keys_match_mariadb(theirs, on_del_c, on_upd_c, on_del_g, on_upd_g, steps):
    conn = noria_py.connect()
    cur = conn.cursor()

    def ours(sql):
        cur.execute(sql)
        return list(cur.fetchall()) if cur.description else []

    ddl = [
        "CREATE TABLE fk_p (id INT PRIMARY KEY, name VARCHAR(10))",
        "CREATE TABLE fk_c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_c_p FOREIGN KEY (pid) "
        f"REFERENCES fk_p (id) ON DELETE {on_del_c} ON UPDATE {on_upd_c})",
        "CREATE TABLE fk_g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES fk_c (id) "
        f"ON DELETE {on_del_g} ON UPDATE {on_upd_g})",
    ]
    theirs("SET FOREIGN_KEY_CHECKS = 1")
    theirs("DROP TABLE IF EXISTS fk_g, fk_c, fk_p")
    for sql in ddl:
        ours(sql)
        theirs(sql)
    assert (
        ours("SHOW CREATE TABLE fk_g")[0][1].split("ENGINE")[0]
        == theirs("SHOW CREATE TABLE fk_g")[0][1].replace("int(11)", "int").split("ENGINE")[0]
    )
    try:
        for sql in steps:
            _r1, e1 = _try(ours, sql)
            _r2, e2 = _try(theirs, sql)
            assert e1 == e2, f"{sql}: noria {e1}, MariaDB {e2}"
            for t in ("fk_p", "fk_c", "fk_g"):
                assert sorted(ours(f"SELECT * FROM {t}")) == sorted(theirs(f"SELECT * FROM {t}")), (
                    f"{t} after {sql}"
                )
            for pid in (1, 2):  # a cached count over the child, against base storage
                got = ours(f"SELECT COUNT(*) FROM fk_c WHERE pid = {pid}")
                raw = conn.engine.storage.conn.execute(
                    "SELECT COUNT(*) FROM fk_c WHERE pid = ?", (pid,)
                ).fetchall()
                assert got == [tuple(raw[0])]
    finally:
        theirs("SET FOREIGN_KEY_CHECKS = 1")
        conn.close()


@st.composite
def _tree_step(draw) -> str:
    kind = draw(st.sampled_from(["ins", "ins", "ins", "del", "del_range", "del_all", "upd"]))
    k, v = draw(KEY), draw(KEY)
    ref = draw(st.one_of(st.none(), KEY))
    ref_sql = "NULL" if ref is None else str(ref)
    order = draw(st.sampled_from(["", " ORDER BY id", " ORDER BY id DESC"]))
    if kind == "ins":
        return f"INSERT INTO fk_tree (id, pid) VALUES ({k}, {ref_sql})"
    if kind == "del":
        return f"DELETE FROM fk_tree WHERE id IN ({k}, {v}){order}"
    if kind == "del_range":
        return f"DELETE FROM fk_tree WHERE id >= {k}{order}"
    if kind == "del_all":
        return f"DELETE FROM fk_tree{order}"
    return f"UPDATE fk_tree SET pid = {ref_sql} WHERE id = {k}"


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ACTION, st.lists(_tree_step(), min_size=1, max_size=14))
def test_a_table_referencing_itself_matches_mariadb(theirs, on_delete, steps):
    """InnoDB deletes row by row (in primary-key order, or the statement's ORDER BY), so a
    RESTRICT foreign key of a table to itself refuses a DELETE that would remove a row before
    the rows referencing it, even when it removes them too."""
    conn = noria_py.connect()
    cur = conn.cursor()

    def ours(sql):
        cur.execute(sql)
        return list(cur.fetchall()) if cur.description else []

    ddl = (
        "CREATE TABLE fk_tree (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) "
        f"REFERENCES fk_tree (id) ON DELETE {on_delete})"
    )
    theirs("DROP TABLE IF EXISTS fk_tree")
    ours(ddl)
    theirs(ddl)
    try:
        for sql in steps:
            _r1, e1 = _try(ours, sql)
            _r2, e2 = _try(theirs, sql)
            assert e1 == e2, f"{sql}: noria {e1}, MariaDB {e2}"
            assert sorted(ours("SELECT * FROM fk_tree"), key=repr) == sorted(
                theirs("SELECT * FROM fk_tree"), key=repr
            ), f"after {sql}"
    finally:
        conn.close()

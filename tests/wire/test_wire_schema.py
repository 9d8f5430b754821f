"""Schemas as ORMs read them back: SHOW CREATE TABLE (which SQLAlchemy's inspector parses),
named and unnamed keys, CREATE [UNIQUE] INDEX and DROP INDEX, compared with a real MariaDB by
reflecting the same tables from both through SQLAlchemy."""

from __future__ import annotations

import pymysql
import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.wire

TABLES = [
    "CREATE TABLE s_people (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL "
    "DEFAULT 'x', age INT, score DECIMAL(10,2), born DATETIME, CONSTRAINT uq_name UNIQUE (name), "
    "KEY (age))",
    "CREATE TABLE s_pairs (a INT NOT NULL, b BIGINT NOT NULL, note TEXT, flag TINYINT(1) "
    "DEFAULT 0, PRIMARY KEY (a, b), UNIQUE KEY (b, a), KEY k_note_a (a), INDEX (b))",
    "CREATE TABLE s_misc (id BIGINT UNSIGNED NOT NULL, d DATE DEFAULT '2024-01-02', "
    "v DOUBLE NOT NULL, c CHAR(3), t TIME, UNIQUE (c), UNIQUE (c, d), PRIMARY KEY (id))",
]
INDEXES = [
    "CREATE INDEX ix_people_born ON s_people (born, age)",
    "CREATE UNIQUE INDEX ux_people_score ON s_people (score)",
]


def _norm_type(t) -> tuple:
    return (
        type(t).__name__,
        getattr(t, "length", None),
        getattr(t, "precision", None),
        getattr(t, "scale", None),
        bool(getattr(t, "unsigned", False)),
    )


def _norm_default(d):
    if d is None or d == "NULL":
        return None
    return str(d).strip("'")


def _reflect(url: str, table: str) -> dict:
    eng = sa.create_engine(url)
    try:
        insp = sa.inspect(eng)
        cols = [
            (
                c["name"],
                _norm_type(c["type"]),
                c["nullable"],
                _norm_default(c.get("default")),
                bool(c.get("autoincrement", False))
                and c["name"] in insp.get_pk_constraint(table)["constrained_columns"],
            )
            for c in insp.get_columns(table)
        ]
        pk = insp.get_pk_constraint(table)["constrained_columns"]
        idx = sorted(
            (i["name"], tuple(i["column_names"]), bool(i["unique"]))
            for i in insp.get_indexes(table)
        )
        return {"columns": cols, "pk": pk, "indexes": idx}
    finally:
        eng.dispose()


def test_reflection_matches_mariadb(server, mariadb_oracle):
    oracle_url = f"mysql+pymysql://root@127.0.0.1:{mariadb_oracle.port}/oracle"
    noria = server.pymysql()
    cur = noria.cursor()
    for t in ("s_people", "s_pairs", "s_misc"):
        mariadb_oracle.query(f"DROP TABLE IF EXISTS {t}")
        cur.execute(f"DROP TABLE IF EXISTS {t}")
    for ddl in TABLES + INDEXES:
        mariadb_oracle.query(ddl)
        cur.execute(ddl)
    for t in ("s_people", "s_pairs", "s_misc"):
        ours, theirs = _reflect(server.url(), t), _reflect(oracle_url, t)
        assert ours == theirs, t
    noria.close()


def test_show_create_table_round_trips(server):
    conn = server.pymysql()
    cur = conn.cursor()
    for ddl in TABLES:
        name = ddl.split()[2]
        cur.execute(f"DROP TABLE IF EXISTS {name}")
        cur.execute(ddl)
    cur.execute("CREATE INDEX ix_misc_v ON s_misc (v)")
    for name in ("s_people", "s_pairs", "s_misc"):
        cur.execute(f"SHOW CREATE TABLE {name}")
        ((tname, text),) = cur.fetchall()
        assert tname == name
        cur.execute(f"DROP TABLE {name}")
        cur.execute(text)  # its output creates the same table
        cur.execute(f"SHOW CREATE TABLE {name}")
        assert cur.fetchall()[0][1] == text
    conn.close()


def test_unique_keys_are_enforced_and_indexes_dropped(server):
    conn = server.pymysql()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS s_keys")
    cur.execute(
        "CREATE TABLE s_keys (id INT PRIMARY KEY, a INT, b INT, CONSTRAINT uq_a UNIQUE (a))"
    )
    cur.execute("INSERT INTO s_keys VALUES (1, 1, 1), (2, 2, 1)")
    with pytest.raises(pymysql.err.IntegrityError) as info:
        cur.execute("INSERT INTO s_keys VALUES (3, 1, 3)")  # a named CONSTRAINT ... UNIQUE
    assert info.value.args[0] == 1062 and "uq_a" in info.value.args[1]
    with pytest.raises(pymysql.err.IntegrityError) as info:
        cur.execute("CREATE UNIQUE INDEX ux_b ON s_keys (b)")  # existing duplicates
    assert info.value.args == (1062, "Duplicate entry '1' for key 's_keys.ux_b'")
    cur.execute("UPDATE s_keys SET b = 2 WHERE id = 2")
    cur.execute("CREATE UNIQUE INDEX ux_b ON s_keys (b)")
    with pytest.raises(pymysql.err.IntegrityError) as info:
        cur.execute("INSERT INTO s_keys VALUES (3, 3, 2)")
    assert info.value.args[0] == 1062 and "ux_b" in info.value.args[1]
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute("CREATE INDEX ux_b ON s_keys (a)")
    assert info.value.args[0] == 1061
    cur.execute("DROP INDEX ux_b ON s_keys")
    cur.execute("INSERT INTO s_keys VALUES (3, 3, 2)")  # no longer unique
    with pytest.raises(pymysql.err.OperationalError) as info:
        cur.execute("DROP INDEX nope ON s_keys")
    assert info.value.args[0] == 1091
    cur.execute("DROP INDEX uq_a ON s_keys")  # declared in CREATE TABLE: the table is rebuilt
    cur.execute("INSERT INTO s_keys VALUES (4, 1, 4)")  # a no longer unique
    cur.execute("SHOW CREATE TABLE s_keys")
    assert "uq_a" not in cur.fetchall()[0][1]
    conn.close()


def test_created_indexes_survive_a_restart(tmp_path):
    import noria_py

    path = str(tmp_path / "ix.db")
    conn = noria_py.connect(path)
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    conn.execute("CREATE UNIQUE INDEX ux_a ON t (a)")
    conn.execute("INSERT INTO t VALUES (1, 1)")
    conn.close()
    conn = noria_py.connect(path)
    text = conn.execute("SHOW CREATE TABLE t").fetchall()[0][1]
    assert "UNIQUE KEY `ux_a` (`a`)" in text
    with pytest.raises(noria_py.IntegrityError):
        conn.execute("INSERT INTO t VALUES (2, 1)")
    conn.execute("DROP INDEX ux_a ON t")
    conn.close()
    conn = noria_py.connect(path)
    assert "ux_a" not in conn.execute("SHOW CREATE TABLE t").fetchall()[0][1]
    conn.execute("INSERT INTO t VALUES (2, 1)")
    conn.close()


def test_truncate_and_dual_as_mariadb(server, mariadb_oracle):
    conn = server.pymysql()
    cur = conn.cursor()
    script = [
        "DROP TABLE IF EXISTS s_trunc",
        "CREATE TABLE s_trunc (id INT AUTO_INCREMENT PRIMARY KEY, g INT, v INT)",
        "INSERT INTO s_trunc (g, v) VALUES (1, 1), (1, 2), (2, 3)",
        "TRUNCATE TABLE s_trunc",
        "INSERT INTO s_trunc (g, v) VALUES (1, 10)",
        "TRUNCATE s_trunc",
        "INSERT INTO s_trunc (g, v) VALUES (2, 20), (1, 30)",
    ]
    reads = [
        ("SELECT id, g, v FROM s_trunc ORDER BY id", ()),
        ("SELECT g, COUNT(*), SUM(v) FROM s_trunc WHERE g = %s GROUP BY g", (1,)),
        ("SELECT 1 + 1, 'x' FROM DUAL", ()),
    ]
    for n, stmt in enumerate(script):
        if n == 3:  # a cached view over the table before TRUNCATE
            cur.execute(reads[1][0], reads[1][1])
            assert cur.fetchall() == ((1, 2, 3),)
        mariadb_oracle.query(stmt)
        cur.execute(stmt)
    for sql, params in reads:
        want, _ = mariadb_oracle.query(sql, params)
        cur.execute(sql, params)
        assert [tuple(map(str, r)) for r in cur.fetchall()] == [tuple(map(str, r)) for r in want]
    conn.close()

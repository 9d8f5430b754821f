"""REPLACE and MariaDB's INSERT/DELETE ... RETURNING over the wire, compared with MariaDB:
the rows returned (with generated keys), the affected-row counts, the table afterwards, and a
cached query over it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.wire

SCRIPT = [
    "INSERT INTO ret_t (a, s) VALUES (1, 'x'), (2, 'y'), (3, NULL) RETURNING id, a, a * 2 AS dbl",
    "REPLACE INTO ret_t (id, a, s) VALUES (1, 7, 'r')",
    "REPLACE ret_t VALUES (4, 7, 'q')",
    "REPLACE INTO ret_t (a, s) VALUES (9, 'n') RETURNING *",
    "DELETE FROM ret_t WHERE a > 5 RETURNING id, CONCAT(s, '!') AS loud",
    "INSERT INTO ret_t (a) VALUES (2) RETURNING id",  # 1062: a is unique
]


def test_replace_and_returning_match_mariadb(server, mariadb_oracle):
    with server.pymysql() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS oracle")
    ours = server.pymysql(database="oracle")
    theirs = mariadb_oracle.connect()
    ddl = "CREATE TABLE ret_t (id INT AUTO_INCREMENT PRIMARY KEY, a INT, s VARCHAR(5), UNIQUE (a))"
    for conn in (ours, theirs):
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS ret_t")
            cur.execute(ddl)
    for sql in SCRIPT:
        results = []
        for conn in (ours, theirs):
            with conn.cursor() as cur:
                try:
                    cur.execute(sql)
                    results.append(
                        (
                            cur.rowcount,
                            [d[0] for d in cur.description] if cur.description else None,
                            cur.fetchall(),
                            None,
                        )
                    )
                except Exception as e:  # noqa: BLE001 - both sides' errors are compared
                    results.append((None, None, None, e.args[0]))
        assert results[0] == results[1], sql
        with ours.cursor() as a, theirs.cursor() as b:
            a.execute("SELECT * FROM ret_t ORDER BY id")
            b.execute("SELECT * FROM ret_t ORDER BY id")
            assert a.fetchall() == b.fetchall(), sql
            a.execute("SELECT s FROM ret_t WHERE a = %s", (7,))
            b.execute("SELECT s FROM ret_t WHERE a = %s", (7,))
            assert a.fetchall() == b.fetchall(), sql
    ours.close()
    theirs.close()

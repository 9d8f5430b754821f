"""Two small tables loaded alike into a fresh noria_py connection and the MariaDB oracle, and
answers compared (rows, or the error number either side raised)."""

from __future__ import annotations

import pymysql

import noria_py
from noria_py import errors as E


def answers(run, sql: str):
    """``run(sql)``'s rows as tuples, or ``("error", errno)``."""
    try:
        return [tuple(r) for r in run(sql)]
    except (E.Error, pymysql.MySQLError) as e:
        return ("error", e.args[0] if isinstance(e, pymysql.MySQLError) else e.errno)


def load(oracle, tables: list[tuple[str, str, list]]):
    """A new connection holding ``tables`` (``(name, CREATE TABLE, rows)``), created again in
    the oracle's database; rows of three columns."""
    conn = noria_py.connect()
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS " + ", ".join(name for name, _d, _r in tables))
        for _name, ddl, _rows in tables:
            cur.execute(ddl)
            conn.execute(ddl)
        for name, _ddl, rows in tables:
            if rows:
                cur.executemany(f"INSERT INTO {name} VALUES (%s, %s, %s)", rows)
                conn.executemany(f"INSERT INTO {name} VALUES (?, ?, ?)", rows)
    return conn


def compare(oracle, conn, sql: str) -> None:
    def mariadb(q):
        with oracle.cursor() as cur:
            cur.execute(q)
            return cur.fetchall()

    want = answers(mariadb, sql)
    got = answers(lambda q: conn.execute(q).fetchall(), sql)
    assert got == want, sql

"""Fixtures for upstream mode: a MariaDB with a ROW binlog, started once per test session.

The server is the oracle fixture's (``MariaDBServer`` in
``noria_py.workloads.lobsters.backends``) with ``--log-bin --binlog-format=ROW
--binlog-row-metadata=FULL --server-id=1`` on its own loopback port, datadir and socket.
Each test gets a database of its own (``upstream``), so replication of one test never sees
another's tables.
"""

from __future__ import annotations

import itertools

import pytest

from noria_py.workloads.lobsters import backends

_seq = itertools.count(1)


class Upstream:
    """One test's database on the binlog server, with an autocommit pymysql connection."""

    def __init__(self, server: backends.MariaDBServer, database: str):
        self.server = server
        self.database = database
        self._conn = None

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        return f"mysql://root@127.0.0.1:{self.server.port}/{self.database}"

    def connect(self, **kw):
        import pymysql

        return pymysql.connect(
            host="127.0.0.1",
            port=self.server.port,
            user="root",
            database=self.database,
            autocommit=True,
            **kw,
        )

    @property
    def conn(self):
        if self._conn is None or not self._conn.open:
            self._conn = self.connect()
        return self._conn

    def run(self, *statements: str, params=None) -> None:
        with self.conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql, params)

    def rows(self, sql: str, params=None) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def forget(self) -> None:
        """Drop the connection (after the server restarted)."""
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
        self._conn = None


@pytest.fixture(scope="session")
def binlog_mariadb():
    if not backends.mariadb_available():
        pytest.fail("mariadbd not installed (apt-get install -y mariadb-server mariadb-client)")
    server = backends.MariaDBServer(
        buffer_pool="64M",
        collation="utf8mb4_general_ci",
        extra_args=(
            "--log-bin=mariadb-bin",
            "--binlog-format=ROW",
            "--binlog-row-image=FULL",
            "--binlog-row-metadata=FULL",
            "--server-id=1",
        ),
    )
    server.database = "upstream_base"
    server.start()
    try:
        yield server
    finally:
        server.stop()


def fresh_database(server: backends.MariaDBServer, name: str | None = None) -> Upstream:
    """A new empty database on the binlog server (``up<N>`` unless named)."""
    name = name or f"up{next(_seq)}"
    admin = Upstream(server, None)
    admin.run(f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")
    admin.forget()
    return Upstream(server, name)


@pytest.fixture(scope="session")
def new_upstream(binlog_mariadb):
    """A factory of fresh databases on the binlog server (for module-scoped fixtures)."""
    made = []

    def make(name: str | None = None) -> Upstream:
        up = fresh_database(binlog_mariadb, name)
        made.append(up)
        return up

    yield make
    for up in made:
        up.forget()


@pytest.fixture
def upstream(binlog_mariadb):
    up = fresh_database(binlog_mariadb)
    try:
        yield up
    finally:
        up.forget()

"""The upstream server: its URL, a connection to it, its binlog settings and positions."""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from .. import errors as E


@dataclasses.dataclass(frozen=True, order=True)
class Position:
    """A place in the upstream's binlog: the file and the offset of the next event. Files
    are numbered (``name.000042``), so positions compare across rotations."""

    file: str
    pos: int

    @property
    def key(self) -> tuple[str, int, int]:
        stem, _, num = self.file.rpartition(".")
        return (stem, int(num) if num.isdigit() else 0, self.pos)

    def __str__(self) -> str:
        return f"{self.file}:{self.pos}"


def at_or_after(a: Position, b: Position) -> bool:
    """Is ``a`` at or after ``b`` in the binlog?"""
    return a.key >= b.key


@dataclasses.dataclass(frozen=True)
class UpstreamURL:
    """``mysql://user:password@host:port/database`` (``mariadb://`` is the same)."""

    host: str
    port: int
    user: str
    password: str
    database: str

    @classmethod
    def parse(cls, url: str) -> UpstreamURL:
        parts = urlsplit(url)
        if parts.scheme not in ("mysql", "mariadb", "mysql+pymysql"):
            raise E.ProgrammingError(
                f"upstream URL {_hide(url)!r}: the scheme must be mysql:// (or mariadb://)"
            )
        database = unquote(parts.path.lstrip("/"))
        if not database or "/" in database:
            raise E.ProgrammingError(
                f"upstream URL {_hide(url)!r} names no database: mysql://user:pass@host:port/db"
            )
        try:
            port = parts.port or 3306
        except ValueError:
            raise E.ProgrammingError(f"upstream URL {_hide(url)!r}: bad port") from None
        return cls(
            host=parts.hostname or "127.0.0.1",
            port=port,
            user=unquote(parts.username or "root"),
            password=unquote(parts.password or ""),
            database=database,
        )

    def settings(self) -> dict[str, Any]:
        """pymysql.connect keyword arguments (without the database)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
        }

    def connect(self, database: bool = True, **kw: Any):
        """A new autocommit pymysql connection (OperationalError 2003 if it cannot)."""
        import pymysql

        try:
            return _connection_class()(
                **self.settings(),
                database=self.database if database else None,
                autocommit=True,
                charset="utf8mb4",
                **kw,
            )
        except pymysql.err.MySQLError as e:
            raise E.OperationalError(
                f"cannot connect to the upstream {self}: {e.args[-1]}", 2003, "HY000"
            ) from None

    def __str__(self) -> str:
        return f"mysql://{self.user}@{self.host}:{self.port}/{self.database}"


_CONNECTION = None


def _connection_class():
    """pymysql's connection, but with one TLS context for the whole process: without TLS
    options pymysql offers TLS when the server has it (its PREFERRED mode) and builds a new
    context, loading the system's certificates, for every connection (about 14 ms of CPU;
    routing opens an upstream session per client connection). The context is the same one
    every time, so it is built once."""
    global _CONNECTION
    if _CONNECTION is None:
        import threading

        from pymysql.connections import Connection

        lock = threading.Lock()
        contexts: dict = {}

        class _Connection(Connection):
            def _create_ssl_ctx(self, sslp):
                if sslp:
                    return super()._create_ssl_ctx(sslp)
                with lock:
                    if "preferred" not in contexts:
                        contexts["preferred"] = super()._create_ssl_ctx(sslp)
                    return contexts["preferred"]

        _CONNECTION = _Connection
    return _CONNECTION


def _hide(url: str) -> str:
    return re.sub(r"(//[^:/@]*:)[^@]*@", r"\1***@", url)


def check_binlog(conn) -> None:
    """Refuse an upstream whose binlog cannot feed exact replication: it must be on, in ROW
    format with full row images and (where the server has the setting) full row metadata."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@log_bin, @@binlog_format, @@binlog_row_image")
        log_bin, fmt, image = cur.fetchone()
    if not log_bin:
        raise E.OperationalError(
            "the upstream's binary log is off: start it with --log-bin --binlog-format=ROW "
            "--server-id=N",
            1236,
            "HY000",
        )
    if str(fmt).upper() != "ROW":
        raise E.OperationalError(
            f"the upstream's binlog_format is {fmt}; replication needs ROW "
            "(SET GLOBAL binlog_format = 'ROW', or start it with --binlog-format=ROW)",
            1236,
            "HY000",
        )
    if str(image).upper() != "FULL":
        raise E.OperationalError(
            f"the upstream's binlog_row_image is {image}; replication needs FULL",
            1236,
            "HY000",
        )
    import pymysql

    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@binlog_row_metadata")
            metadata = cur.fetchone()[0]
    except pymysql.err.MySQLError:
        return  # an older server: column names and character sets come from its catalog
    if str(metadata).upper() != "FULL":
        # without it the binlog does not say which columns are binary, nor their names
        raise E.OperationalError(
            f"the upstream's binlog_row_metadata is {metadata}; replication needs FULL "
            "(SET GLOBAL binlog_row_metadata = 'FULL', or start it with "
            "--binlog-row-metadata=FULL)",
            1236,
            "HY000",
        )


def current_position(conn) -> Position:
    """The upstream's binlog position now (the end of its last committed transaction)."""
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    if row is None:
        raise E.OperationalError("the upstream's binary log is off", 1236, "HY000")
    return Position(row[0], int(row[1]))


def is_mariadb(conn) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        return "mariadb" in cur.fetchone()[0].lower()

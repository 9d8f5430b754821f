"""Which statements a connection in upstream mode sends to the upstream, and sending them.

A read the dataflow maintains is answered by the dataflow (over the mirror). Everything else
goes to the upstream on the connection's own upstream session: writes, DDL, every statement
of a transaction (from ``BEGIN``, or while autocommit is off, to ``COMMIT``/``ROLLBACK``),
session statements and reads of session state (``LAST_INSERT_ID()``, ``@var``), locking reads,
and every query the dataflow does not maintain (the upstream answers it with MySQL's own
semantics), and ``SHOW``/``DESCRIBE`` (the upstream's catalog lists the tables not mirrored
too). ``EXPLAIN``, ``SHOW CACHES`` and ``SHOW PROXIED QUERIES`` are answered here, ``SHOW
UPSTREAM STATUS`` reports replication, and ``SHOW WARNINGS``/``ERRORS`` go where the last
statement ran.

Read-your-writes (``upstream_read_your_writes=seconds``): after a write the router reads the
upstream's binlog position; the connection's next cached read waits until replication has
applied it, at most that long, and is otherwise answered by the upstream.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from .. import errors as E
from ..result import Result
from ..sql.literals import sql_literal, write_in
from .source import Position, current_position

_FIRST = re.compile(r"\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*|#[^\n]*\n\s*)*\(*\s*(\w+)", re.S)
# reads that need the upstream session: locking reads, INTO, session functions and variables
_SESSIONISH = re.compile(
    r"\bfor\s+update\b|\block\s+in\s+share\s+mode\b|\bfor\s+share\b|\binto\b|@"
    r"|\b(?:last_insert_id|found_rows|row_count|connection_id|get_lock|release_lock"
    r"|is_used_lock|is_free_lock|sleep|benchmark|uuid|rand|now|sysdate|current_timestamp"
    r"|database|schema|user|current_user|session_user|system_user)\s*\(",
    re.I,
)
_STATUS = re.compile(r"\s*show\s+upstream\s+status\s*;?\s*\Z", re.I)
# SHOW statements about this server's own state; every other SHOW describes the upstream's
_OWN_SHOW = re.compile(r"\s*show\s+(?:caches|proxied\s+queries)\b", re.I)
_DIAGNOSTICS = re.compile(
    r"\s*show\s+(?:warnings|errors|count\s*\(\s*\*\s*\)\s*(?:warnings|errors))", re.I
)
_LOCAL_WORDS = frozenset(("show", "describe", "desc", "explain", "help"))
_READ_WORDS = frozenset(("select", "with", "table", "values"))

_TYPES = {
    0: "DECIMAL",
    1: "TINYINT",
    2: "SMALLINT",
    3: "INT",
    4: "FLOAT",
    5: "DOUBLE",
    6: "NULL",
    7: "TIMESTAMP",
    8: "BIGINT",
    9: "INT",
    10: "DATE",
    11: "TIME",
    12: "DATETIME",
    13: "SMALLINT",
    15: "VARCHAR",
    16: "BIGINT",
    245: "JSON",
    246: "DECIMAL",
    247: "VARCHAR",
    248: "VARCHAR",
    249: "BLOB",
    250: "BLOB",
    251: "BLOB",
    252: "TEXT",
    253: "VARCHAR",
    254: "VARCHAR",
}


def first_word(sql: str) -> str:
    m = _FIRST.match(sql)
    return m.group(1).lower() if m else ""


def bind(sql: str, params: Sequence[Any], conn) -> str:
    """``sql`` with each ``?`` placeholder (outside quotes and comments) replaced by the
    upstream's literal for its parameter."""
    if not params:
        return sql
    return write_in(sql, params, conn.escape)


def _error(e: Exception) -> E.Error:
    """A pymysql error as the PEP 249 error of the same class, with MySQL's code."""
    import pymysql

    code = e.args[0] if e.args and isinstance(e.args[0], int) else 2013
    msg = e.args[1] if len(e.args) > 1 else str(e)
    for theirs, ours in (
        (pymysql.err.IntegrityError, E.IntegrityError),
        (pymysql.err.DataError, E.DataError),
        (pymysql.err.ProgrammingError, E.ProgrammingError),
        (pymysql.err.NotSupportedError, E.NotSupportedError),
        (pymysql.err.InternalError, E.InternalError),
        (pymysql.err.OperationalError, E.OperationalError),
    ):
        if isinstance(e, theirs):
            return ours(msg, code)
    return E.DatabaseError(msg, code)


class Router:
    """One connection's routing between the dataflow and its own upstream session."""

    def __init__(self, mirror) -> None:
        self.mirror = mirror
        self._conn = None
        self.in_txn = False
        self.autocommit = True
        self.target: Position | None = None  # read-your-writes: the last write's position
        self.ryw = mirror.read_your_writes
        self.last_upstream = False  # did the last statement run on the upstream?
        self.database = mirror.url.database  # the upstream session's current database
        # threads may share an embedded connection (threadsafety 2); its upstream session
        # serves one statement at a time
        self._lock = threading.Lock()

    @property
    def pinned(self) -> bool:
        """Must every statement go to the upstream session now (inside its transaction)?"""
        return self.in_txn or not self.autocommit

    def route(self, engine, sql: str) -> str:
        """``"engine"`` (maintained read, or a local SHOW), ``"status"`` or ``"upstream"``."""
        word = first_word(sql)
        if word in _READ_WORDS:
            if self.pinned or _SESSIONISH.search(sql) or not self.in_mirrored_database:
                return "upstream"
            prep = self.maintained(engine, sql)
            if prep is None:
                return "upstream"
            copying = self.mirror.replicator.copying
            if copying and not copying.isdisjoint(prep.tables):
                return "upstream"  # a table being copied again after DDL: not whole yet
            self.last_upstream = False
            return "engine"
        if word in _LOCAL_WORDS:
            if _STATUS.match(sql):
                return "status"
            if word == "explain" or _OWN_SHOW.match(sql):
                self.last_upstream = False
                return "engine"  # this server's plans and caches
            if _DIAGNOSTICS.match(sql):
                # the diagnostics area of whichever ran the last statement
                return "upstream" if self.last_upstream else "engine"
            return "upstream"  # SHOW TABLES, DESCRIBE ...: the upstream's own catalog
        return "upstream"

    @property
    def in_mirrored_database(self) -> bool:
        """Is the upstream session in the database the mirror holds (after ``USE other``,
        unqualified names are that database's tables)?"""
        return self.database.lower() == self.mirror.url.database.lower()

    def maintained(self, engine, sql: str):
        """The dataflow's statement for this SELECT (for its literal-lifted form, when it has
        one), or None when the dataflow does not maintain it. Preparing it installs it, as the
        engine's own first read would. A text found not maintained is not planned again until
        the catalog changes (``not_maintained``, shared by the mirror's connections)."""
        from ..engine import SelectPrepared

        prep = engine.cached(sql)
        if prep is None:
            known = self.mirror.not_maintained
            if known.get(sql) == engine.statements_generation:
                return None
            lifted = engine.lifted(sql)
            text = lifted[0] if lifted is not None else sql
            prep = engine.cached(text)
            if prep is None:
                generation = engine.statements_generation
                try:
                    prep = engine.prepare(text)
                except E.Error:
                    prep = None
                if prep is None or prep.__class__ is not SelectPrepared:
                    if len(known) > 10_000:
                        known.clear()
                    known[sql] = generation
                    return None
        return prep if prep.__class__ is SelectPrepared else None

    def may_read_cached(self) -> bool:
        """Read-your-writes: wait for this connection's last write to replicate. False: it did
        not in time, answer from the upstream."""
        target = self.target
        if target is None:
            return True
        if self.mirror.replicator.wait_for(target, self.ryw):
            self.target = None
            return True
        return False

    def connection(self):
        if self._conn is None:
            # LOCAL INFILE is announced to the upstream, but answered only for the file of a
            # client's own LOAD DATA LOCAL (``load_local``), never for a file the upstream asks
            conn = self.mirror.url.connect(local_infile=True)
            conn._local_infile = False
            self._conn = conn
        return self._conn

    def load_local(self, sql: str, source) -> Result:
        """``LOAD DATA LOCAL INFILE`` with the file a client sent (``source``, binary, read
        from its start): the upstream session runs the statement with the file name replaced
        by a private copy of those bytes, which this session sends it when asked."""
        import os
        import shutil
        import tempfile

        m = re.search(r"\binfile\s+('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\")", sql, re.I)
        if m is None:
            raise E.ProgrammingError("LOAD DATA LOCAL INFILE needs a file name", 1064, "42000")
        fd, path = tempfile.mkstemp(prefix="noria-local-", suffix=".load")
        try:
            with os.fdopen(fd, "wb") as out:
                source.seek(0)
                shutil.copyfileobj(source, out)
            text = sql[: m.start(1)] + sql_literal(path) + sql[m.end(1) :]
            with self._lock:
                conn = self.connection()
                conn._local_infile = True
                try:
                    return self._execute(text, ())
                finally:
                    conn._local_infile = False
        finally:
            os.unlink(path)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement on this connection's upstream session."""
        with self._lock:
            return self._execute(sql, params)

    def _execute(self, sql: str, params: Sequence[Any]) -> Result:
        import pymysql

        word = first_word(sql)
        conn = self.connection()
        self.last_upstream = not _DIAGNOSTICS.match(sql)
        try:
            text = bind(sql, params, conn)
            with conn.cursor() as cur:
                cur.execute(text)
                desc = cur.description
                rows = tuple(cur.fetchall()) if desc else ()
                rowcount, lastrowid = cur.rowcount, cur.lastrowid
        except pymysql.err.MySQLError as e:
            if isinstance(e, (pymysql.err.OperationalError, pymysql.err.InterfaceError)) and (
                e.args and e.args[0] in (2006, 2013, 0)
            ):
                self._drop()  # the session is gone with its transaction
            raise _error(e) from None
        self._track(word, sql)
        if word not in _READ_WORDS and word not in _LOCAL_WORDS and not self.pinned and self.ryw:
            try:
                self.target = current_position(conn)
            except pymysql.err.MySQLError:
                self.target = None
        if desc is None:
            return Result(rowcount=rowcount, lastrowid=lastrowid or None)
        return Result(
            [d[0] for d in desc],
            rows,
            [_TYPES.get(d[1], "VARCHAR") for d in desc],
            [bool(d[6]) for d in desc],
            rowcount=len(rows),
            status="upstream",
        )

    def _track(self, word: str, sql: str) -> None:
        """Follow the upstream session's transaction state."""
        low = sql.lower()
        if word == "begin" or (word == "start" and "transaction" in low):
            self.in_txn = True
        elif word in ("commit", "rollback") and not re.search(r"\bto\b", low):
            self.in_txn = False
        elif word == "set" and "autocommit" in low:
            m = re.search(r"autocommit\s*:?=\s*(\w+)", low)
            if m:
                self.autocommit = m.group(1) in ("1", "on", "true")
                if self.autocommit:
                    self.in_txn = False
        elif word in ("create", "alter", "drop", "rename", "truncate", "lock", "unlock"):
            self.in_txn = False  # implicit commit
        elif word == "use":
            m = re.match(r"\s*use\s+(`(?:[^`]|``)+`|\S+)", sql, re.I)
            if m:
                name = m.group(1).rstrip(";")
                if name.startswith("`"):
                    name = name[1:-1].replace("``", "`")
                self.database = name

    def status(self) -> Result:
        st = self.mirror.replicator.status()
        names = list(st)
        return Result(
            names,
            (tuple(_shown(st[n]) for n in names),),
            ["VARCHAR"] * len(names),
            [True] * len(names),
            rowcount=1,
        )

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        self.in_txn = False
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        if self._conn is not None and self.in_txn:
            try:
                self._conn.rollback()
            except Exception:  # noqa: BLE001
                pass
        self._drop()


def _shown(v: Any) -> Any:
    if v is None or isinstance(v, (int, float, str)):
        return None if v is None else str(v)
    import json

    return json.dumps(v)

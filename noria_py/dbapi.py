"""PEP 249 Connection and Cursor over an Engine, shaped like the stdlib ``sqlite3`` module.

Every write autocommits (it is durable and visible in the views when ``execute`` returns), unless
the connection is inside an explicit transaction started with ``BEGIN`` / ``START TRANSACTION``
(or ``conn.begin()``, or after ``SET autocommit = 0``): then each write is applied to base
storage when it runs (constraint errors at the statement, ``lastrowid`` at once), the
connection's reads see its own writes (a query over a table the transaction wrote is answered
by base storage inside the transaction), and the writes enter the views at ``commit()`` as one
batch; ``rollback()`` discards them. ``SAVEPOINT``, ``ROLLBACK TO SAVEPOINT`` and ``RELEASE
SAVEPOINT`` work inside a transaction; ``START TRANSACTION READ ONLY`` refuses writes (1792).

Threads may share a connection (``threadsafety = 2``), each with its own cursor: writes, DDL
and cache fills are serialized by the engine's lock, while lookups of already filled keys read
immutable published results without taking it. A transaction belongs to the connection, not to
the thread that began it.

As in ``sqlite3``, ``with conn:`` commits the block's transaction when the block ends normally
and rolls it back when it raises; the connection stays open. The module has PEP 249's type
objects (``STRING``, ``BINARY``, ``NUMBER``, ``DATETIME``, ``ROWID``; a ``description`` type
code, the column's MySQL type name, compares equal to its group) and constructors (``Date``,
``Time``, ``Timestamp``, ``*FromTicks``, ``Binary``).

Each connection has MySQL's diagnostics area (``noria_py.diagnostics``): ``SHOW WARNINGS``,
``SHOW ERRORS``, ``@@warning_count`` and ``@@error_count`` read what its last statement left.
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Iterable, Sequence

from . import errors as E
from .diagnostics import error_area
from .engine import (
    BindsOtherwise,
    Engine,
    InsertPrepared,
    ReaderGone,
    SelectPrepared,
    lifts_as_written,
)
from .result import Result, client_rows, float_columns

apilevel = "2.0"
threadsafety = 2  # threads may share the module and connections, not cursors
paramstyle = "qmark"

# --- type objects and constructors (PEP 249) --------------------------------------------------
# A cursor's ``description`` gives each column's MySQL type name ("BIGINT", "VARCHAR",
# "DATETIME", ...) as its type code; each type object below compares equal to the names of its
# group, so ``description[i][1] == NUMBER`` works as PEP 249 describes.

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:  # noqa: N802 - PEP 249's name
    """The local date of a POSIX timestamp (as ``sqlite3.DateFromTicks``)."""
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:  # noqa: N802 - PEP 249's name
    """The local time of day of a POSIX timestamp (as ``sqlite3.TimeFromTicks``)."""
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:  # noqa: N802 - PEP 249's name
    """The local date and time of a POSIX timestamp (as ``sqlite3.TimestampFromTicks``)."""
    return Timestamp(*time.localtime(ticks)[:6])


class DBAPITypeObject:
    """A PEP 249 type object: equal to every type code (MySQL type name) of its group."""

    __slots__ = ("name", "values")

    def __init__(self, name: str, *values: str) -> None:
        self.name = name
        self.values = frozenset(values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DBAPITypeObject):
            return self is other
        if isinstance(other, str):
            return other.upper() in self.values
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}>"


STRING = DBAPITypeObject(
    "STRING",
    *("CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET", "JSON"),
)
BINARY = DBAPITypeObject(
    "BINARY",
    *("BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "BIT"),
)
NUMBER = DBAPITypeObject(
    "NUMBER",
    *("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "DECIMAL", "NUMERIC"),
    *("FLOAT", "DOUBLE", "REAL", "YEAR", "BOOL", "BOOLEAN"),
)
DATETIME = DBAPITypeObject("DATETIME", "DATE", "TIME", "DATETIME", "TIMESTAMP")
# MySQL has no row id type (an AUTO_INCREMENT key is an integer, NUMBER): no type code is ROWID
ROWID = DBAPITypeObject("ROWID")


_SESSION_KINDS = frozenset(
    (
        "set", "show_vars", "show_simple", "session_select", "vars", "select_into",
        "assign_select", "lock_select",
    )
)  # fmt: skip
_LOCK_WORD = re.compile(r"_lock|locks\s*\(|sleep\s*\(", re.I)
_session_kinds: dict[str, bool] = {}


def _session_statement(sql: str) -> bool:
    """Is ``sql`` a statement the session answers (SET, SHOW VARIABLES, a SELECT of system or
    user variables) rather than the engine? Remembered per text."""
    known = _session_kinds.get(sql)
    if known is not None:
        return known
    text = sql.lstrip()
    if text[:1] in ("/", "-", "#"):  # comments first (an executable one holds the statement)
        from .server.session import strip_statement
        from .sql.comments import expand

        text = strip_statement(expand(text))
    head = text[:4].lower()
    found = False
    if head.startswith("set") or head == "show" or "@" in sql or _LOCK_WORD.search(sql):
        from .server.session import classify

        try:
            st = classify(sql)
        except E.Error:
            found = False
        else:
            found = st.kind in _SESSION_KINDS and (st.kind != "session_select" or "@" in sql)
            if st.kind == "unsupported" and ("@" in sql or _LOCK_WORD.search(sql)):
                found = True  # (SELECT @n := @n + 1 ... FROM t: the session's 1235)
            if st.kind == "write" and st.info != "load" and "@" in sql:
                from .server.session import _USER_VAR

                found = _USER_VAR.search(sql) is not None  # INSERT ... VALUES (@x)
            if st.kind == "show_simple" and st.info[0] == "databases":
                found = False  # the engine lists them
    if len(_session_kinds) < 10000:
        _session_kinds[sql] = found
    return found


def _description(res: Result):
    if res.columns is None:
        return None
    types = res.column_types or ["VARCHAR"] * len(res.columns)
    nulls = res.nullable or [True] * len(res.columns)
    return tuple(
        (name, t, None, None, None, None, n) for name, t, n in zip(res.columns, types, nulls)
    )


class Cursor:
    # (as sqlite3's cursor: no attributes beyond these; slots make the lookup path's many
    # attribute reads and writes cheaper)
    __slots__ = (
        "connection", "_engine", "_rows", "_pos", "description", "rowcount", "lastrowid",
        "_closed", "read_your_writes", "arraysize", "__weakref__",
    )  # fmt: skip

    def __init__(self, conn: Connection):
        self.arraysize = 1
        self.connection = conn
        self._engine = conn._engine
        self._rows: Sequence = ()
        self._pos = 0
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._closed = False
        self.read_your_writes = False  # per-cursor switch; see connect(read_your_writes=...)

    def _check(self):
        if self._closed:
            raise E.ProgrammingError("Cannot operate on a closed cursor.", 2000, "HY000")
        if self.connection._closed:
            raise E.ProgrammingError("Cannot operate on a closed database.", 2000, "HY000")

    def execute(self, sql: str, params: Sequence = ()) -> Cursor:
        conn = self.connection
        if self._closed or conn._closed:
            self._check()
        if conn._router is not None and self._upstream(sql, params):
            return self
        eng = self._engine
        if (self.read_your_writes or eng.read_your_writes) and (
            eng._pending or eng._runtime is not None or eng.shared
        ):
            # read-your-writes: every acknowledged write (with a shared file: every write any
            # process committed before this read) reaches the views first
            eng.sync()
        prep = eng._cache.get(sql)
        args = params
        if prep is None:
            if not params and eng.lift_literals:
                # a literal lookup (WHERE id = 42): its parameterized form's statement, when
                # the engine has it and the literals bind as they compare (Engine.execute)
                lifted = eng.lifted(sql)
                if lifted is not None:
                    prep = eng._cache.get(lifted[0])
                    args = lifted[1]
                    if prep is not None and not lifts_as_written(prep, args):
                        prep = None
            if prep is None:
                return self._execute(sql, params)
        t = eng._txn_default
        if (
            prep.__class__ is SelectPrepared
            and prep.simple
            and args.__class__ in (tuple, list)
            and len(args) == prep.param_count
            and not (prep.timestamps and conn._session is not None)
            # the engine's rule (counts the read); read_your_writes synced above
            and eng.lock_free_read(t, True)
        ):
            try:
                rows = prep.rows(args)
            except BindsOtherwise:
                rows = None  # compared as its own type: the engine's path writes it in
            except ReaderGone:
                rows = None  # the view was rebuilt meanwhile: the engine's path plans it again
            except TypeError:
                from .engine import check_params

                try:
                    check_params(args)  # names the parameter that cannot be a key
                except E.Error as e:
                    t.diag = error_area(e)
                    raise
                raise
            except E.Error:
                if args is params:
                    raise
                rows = None  # the lifted form failed: the engine's path answers as written
            if rows is not None:
                t.row_count = -1  # ROW_COUNT() after a SELECT
                t.found_rows = n = len(rows)
                if t.diag:
                    t.diag = ()  # a SELECT from a table clears the diagnostics area
                fc = prep.float_columns
                self._rows = client_rows(rows, fc) if fc else rows
                self._pos = 0
                self.rowcount = n
                d = prep.description
                if d is None:
                    d = prep.description = _description(
                        Result(prep.columns, (), prep.column_types, prep.nullable)
                    )
                self.description = d
                return self
        elif prep.__class__ is InsertPrepared and prep.one_row and args is params:
            try:
                if conn._session is None:
                    generated = eng.insert_now(sql, prep, args)
                else:  # (the session's values bound, as for the long path)
                    generated = conn._with_session(eng.insert_now, sql, prep, args)
            except E.Error as e:
                t.diag = error_area(e)  # SHOW WARNINGS / SHOW ERRORS list it
                raise
            if generated is not None:
                self._rows = ()
                self._pos = 0
                self.description = None
                self.rowcount = 1
                if generated:
                    self.lastrowid = generated
                return self
        return self._execute(sql, params)

    def _execute(self, sql: str, params: Sequence) -> Cursor:
        """``execute`` by the engine's path (not a lock-free lookup of a cached statement)."""
        eng = self._engine
        t = eng._txn_default
        if params.__class__ not in (tuple, list) and (
            not isinstance(params, Sequence) or isinstance(params, (str, bytes))
        ):
            if isinstance(params, dict):
                raise E.ProgrammingError("named parameters are not supported; use ?", 1210)
            params = tuple(params)
        try:
            if _session_statement(sql):
                res = self.connection._session_execute(sql, params)
            elif self.connection._session is not None:
                res = self.connection._with_session(eng.execute, sql, params)
            else:
                res = eng.execute(sql, params)
        except E.Error as e:
            t.diag = error_area(e)  # SHOW WARNINGS / SHOW ERRORS list it
            raise
        self._set(res)
        return self

    def _upstream(self, sql: str, params: Sequence) -> bool:
        """Upstream mode (``noria_py.upstream.routing``): run the statement on the upstream
        unless the dataflow answers it; True when it ran there."""
        from .load_data import parse_load
        from .upstream.routing import first_word

        router = self.connection._router
        where = router.route(self._engine, sql)
        if where == "engine" and router.may_read_cached():
            return False
        try:
            if where == "status":
                res = router.status()
            elif first_word(sql) == "load" and (spec := parse_load(sql)) and spec.local:
                # this process is the client: its file goes to the upstream
                try:
                    source = open(spec.path, "rb")  # noqa: SIM115 - closed below
                except OSError as e:  # the client's error, as MySQL's client library words it
                    raise E.OperationalError(
                        f"File '{spec.path}' not found (Errcode: {e.errno})", 2, "HY000"
                    ) from None
                with source:
                    res = router.load_local(sql, source)
            else:
                res = router.execute(sql, params)
        except E.Error as e:
            self._engine._txn_default.diag = error_area(e)
            raise
        self._set(res)
        return True

    def _set(self, res: Result):
        rows = res.rows if res.rows is not None else ()
        if rows:
            fc = res.float_columns
            if fc is None:
                fc = float_columns(res.column_types)
            if fc:
                rows = client_rows(rows, fc)
        self._rows = rows
        self._pos = 0
        self.description = _description(res) if res.columns is not None else None
        self.rowcount = res.rowcount
        if res.lastrowid is not None:
            self.lastrowid = res.lastrowid

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence]) -> Cursor:
        self._check()
        if self.connection._router is not None:
            total = 0
            for params in seq_of_params:
                self.execute(sql, params)
                total += max(self.rowcount, 0)
            self.rowcount = total
            return self
        try:
            res = self._engine.executemany(sql, seq_of_params)
        except E.Error as e:
            self._engine._txn_default.diag = error_area(e)
            raise
        self._set(res)
        if res.columns is None:
            self._rows = ()
            self.description = None
        return self

    def fetchone(self):
        self._check()
        if self._pos < len(self._rows):
            r = self._rows[self._pos]
            self._pos += 1
            return r
        return None

    def fetchmany(self, size: int | None = None) -> list:
        self._check()
        n = self.arraysize if size is None else size
        out = list(self._rows[self._pos : self._pos + n])
        self._pos += len(out)
        return out

    def fetchall(self) -> list:
        if self._closed or self.connection._closed:
            self._check()
        if self._pos == 0:
            self._pos = len(self._rows)
            return list(self._rows)
        out = list(self._rows[self._pos :])
        self._pos = len(self._rows)
        return out

    def __iter__(self):
        return self

    def __next__(self):
        r = self.fetchone()
        if r is None:
            raise StopIteration
        return r

    def close(self) -> None:
        self._closed = True
        self._rows = ()

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Connection:
    # PEP 249 optional extension: exceptions as connection attributes
    Error = E.Error
    Warning = E.Warning
    InterfaceError = E.InterfaceError
    DatabaseError = E.DatabaseError
    DataError = E.DataError
    OperationalError = E.OperationalError
    IntegrityError = E.IntegrityError
    InternalError = E.InternalError
    ProgrammingError = E.ProgrammingError
    NotSupportedError = E.NotSupportedError

    def __init__(self, path: str | None = None, **options):
        self._engine = Engine(path, **options)
        self._closed = False
        self._router = None
        self.upstream = None  # upstream mode: the Mirror (noria_py.upstream)
        url = self._engine.options["upstream"]
        if url:
            from .upstream import attach, show_progress, spark_threshold

            opts = self._engine.options
            try:
                with show_progress(summary=False) as progress:  # on a terminal only
                    self.upstream = attach(
                        self._engine,
                        url,
                        opts["upstream_server_id"],
                        opts["upstream_read_your_writes"],
                        progress,
                        spark_rows=spark_threshold(opts["upstream_spark_rows"]),
                    )
            except BaseException:
                self._engine.close()
                raise
            self._router = self.upstream.router()
        self._session = None  # the session statements' state, once one ran (_session_execute)

    def _session_execute(self, sql: str, params: Sequence) -> Result:
        """A statement a MySQL server session answers (``SET``, ``SELECT @@version``, user
        variables, ``SHOW VARIABLES``): answered as the wire server answers it, by a session
        on this connection's transaction (``noria_py.server.session``)."""
        sess = self._session
        if sess is None:
            from .server.session import ServerState, Session

            sess = Session(ServerState(self._engine), connection_id=1)
            sess.txn = self._engine._txn_default
            self._session = sess
        t = self._engine._txn_default
        sess.database = self._engine.current_database()
        sess.last_insert_id, sess.last_rowcount = t.last_insert_id, t.row_count
        from .sql import functions as F

        prev = F.current_context()
        try:
            res = sess.execute(sql, params)
        finally:
            F.set_context(prev)
        if res.columns is None and res.rowcount < 0:
            res.rowcount = 0  # SET, USE ...: no rows affected, as a MySQL driver reports
        if sess.last_insert_id:
            t.last_insert_id = sess.last_insert_id
        t.row_count = res.rowcount if res.columns is None else -1
        return res

    def _with_session(self, run, *args):
        """``run`` with this connection's session values bound (its ``time_zone`` for
        ``NOW()``), once a session statement set any."""
        from .sql import functions as F

        sess = self._session
        sess.database = self._engine.current_database()
        prev = F.current_context()
        sess._bind_context()
        try:
            return run(*args)
        finally:
            F.set_context(prev)

    @property
    def engine(self) -> Engine:
        return self._engine

    def _check(self):
        if self._closed:
            raise E.ProgrammingError("Cannot operate on a closed database.", 2000, "HY000")

    def cursor(self) -> Cursor:
        self._check()
        return Cursor(self)

    def execute(self, sql: str, params: Sequence = ()) -> Cursor:
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq_of_params) -> Cursor:
        return self.cursor().executemany(sql, seq_of_params)

    def backfill(self, table: str, source, **options) -> int:
        """Load a base table from a large source through Spark (see ``noria_py.spark.backfill``)."""
        self._check()
        from .spark.backfill import backfill

        return backfill(self._engine, table, source, **options)

    def begin(self) -> None:
        self._check()
        if self._router is not None:
            self._router.execute("BEGIN")
            return
        self._engine._begin()

    @property
    def in_transaction(self) -> bool:
        if self._router is not None:
            return self._router.in_txn
        return self._engine._txn_default.active

    def commit(self) -> None:
        self._check()
        if self._router is not None:
            if self._router.pinned:
                self._router.execute("COMMIT")
            return
        self._engine._commit()

    def rollback(self) -> None:
        self._check()
        if self._router is not None:
            if self._router.pinned:
                self._router.execute("ROLLBACK")
            return
        self._engine._rollback()

    def close(self) -> None:
        if not self._closed:
            if self._session is not None:
                self._session.release_user_locks()  # (GET_LOCK's, as a session's end does)
            if self._router is not None:
                self._router.close()
                self.upstream.close()
            self._engine.close()
            self._closed = True

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """As ``sqlite3``: the block's transaction commits when it ends normally and rolls back
        when it raises; the connection stays open (``close()`` closes it)."""
        if self._closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


def connect(path: str | None = None, **options) -> Connection:
    """Open a database. ``path=None`` keeps base tables in memory; a path makes them durable.

    The options are declared in ``noria_py.options.OPTIONS`` (name, default, allowed values,
    one line each; ``noria_py.options.describe()`` prints them). An unknown option or a value
    it does not take raises ``ProgrammingError`` before anything is opened.

    - ``partial`` (default True): materializations fill on demand; False materializes
      everything fully.
    - ``memory_limit`` (e.g. ``"256MB"``; default None): evict least-recently-read state to
      stay under it.
    - ``domains``: ``"inline"`` (the default): a write returns once every view reflects it;
      ``"threads"``: every domain of the dataflow runs on a thread of its own, a write returns
      once it is durable, and views catch up moments later.
    - ``upqueries``: ``"direct"`` (the default inline): a fill is computed in place;
      ``"messages"`` (the default with threads): upqueries are messages between domains;
      ``domains="threads"`` with ``upqueries="direct"`` runs the whole dataflow on one thread.
    - ``lookup_joins`` (default True; with inline domains, either upqueries): a join of two base tables
      keeps no copy of its inputs and looks the other side up in base storage, and a fill
      over such joins is one SQLite query.
    - ``read_your_writes`` (default False; with threads or a shared file): a read first waits
      for the connection's acknowledged writes; also settable per cursor.
    - ``batch_window``: seconds a dataflow thread waits to batch concurrent writes (0.2 ms by
      default on the single thread, 0 with a thread per domain).
    - ``inbox_limit`` (default 10000): writes in flight before a writer waits.
    - ``collation``: the collation strings compare by (one per process).
    - ``dataflow`` (default True): False answers every SELECT from base storage.
    - ``lift_literals`` (default True): a SELECT executed without parameters is answered as
      its parameterized form (``WHERE id = 42`` as ``WHERE id = ?`` with 42, as the server
      does for client-side binding drivers), so all its lookups share one cache; False runs
      each text as its own query.
    - ``caching`` (default ``"auto"``): every SELECT the dataflow can maintain is cached on
      first use; ``"explicit"`` caches only what ``CREATE CACHE`` asks for and answers the
      rest from base storage (see ``noria_py.cache_commands``).
    - ``private_storage`` (default False): an in-memory database lives in a temporary file,
      so other connections read committed rows while one writes.
    - ``shared`` (default True, with a path): other processes may open the same file; False
      takes it exclusively. ``busy_timeout`` (default 50 s): how long a write waits for another
      process's write lock; ``poll_interval`` (default 5 ms): how often this process looks for
      the others' commits.

    Upstream mode (``noria_py.upstream``): ``upstream`` (``"mysql://user:pass@host:port/db"``)
    mirrors that database (a consistent snapshot, then its ROW binlog) and sends writes,
    transactions and queries the dataflow does not maintain there; ``upstream_server_id``
    (the replica id on its binlog; default derived from the process id) and
    ``upstream_read_your_writes`` (seconds a cached read waits for this connection's last
    write to replicate before asking the upstream; default off), ``upstream_spark_rows``
    (tables of that many rows or more are snapshotted by Spark over JDBC; default a million
    when pyspark is installed, False never). ``conn.upstream`` is the mirror: ``sync()``,
    ``status()``.

    Bulk replays (``noria_py.spark.replay``): ``bulk_replay_rows`` (base rows beneath a new
    fully materialized node's input from which Spark computes its initial state; default one
    million, ``None`` never, ``0`` always), ``spark_master`` and ``spark_config`` (for the
    Spark session a bulk replay starts) and ``bulk_replay_dir`` (where the Parquet snapshots
    go; default a temporary directory).
    """
    return Connection(path, **options)

"""The engine: catalog, statement cache, migrations, and ``execute(sql, params)``.

A statement's text is parsed once and cached as a prepared object:

* a SELECT the compiler can maintain becomes a query in the shared dataflow graph and is
  answered by a reader lookup keyed by its parameters ("cached");
* any other SELECT runs on SQLite after transpiling ("proxied");
* a write is applied to SQLite (atomically, inside a savepoint) and the resulting signed deltas
  are pushed through the dataflow in the same step, so every materialization stays current;
* DDL changes the catalog (kept in the same SQLite file) and drops cached statements.

This module holds the ``Engine`` class: its state, the statement cache and the dispatch of a
parsed statement; the work of each kind of statement is in the part (a mixin, one per module of
this package) that ``Engine`` is composed of.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import re
import threading
import weakref

from sqlglot import exp

from .. import errors as E
from .. import options as _options
from ..cache_commands import CacheRules, prepare_cache_command
from ..dataflow.graph import Graph
from ..dataflow.scheduler import ReaderGone
from ..result import Result
from ..sql import functions as F
from ..sql import names as N
from ..sql import values as V
from ..sql.comments import expand, has_executable, remap_syntax_error
from ..sql.dialect import DIALECT
from ..sql.literals import lift_literals, lift_literals_cached, write_in
from ..sql.parse import blank, parse
from ..storage.sqlite import SQLiteStorage, TableSchema
from .base import QueryEntry, _count_params, _locked
from .catalog import CatalogMixin, _alter_add_check
from .explain import ExplainMixin
from .inserts import InsertPrepared, InsertsMixin, _noted, rows_form, rows_prepared
from .loads import LoadsMixin
from .prepared import (
    CalcFoundRowsPrepared,
    FuncPrepared,
    LockingPrepared,
    Prepared,
    _found_rows_count,
    _take_calc_found_rows,
    binds_otherwise,
    check_params,
    check_timestamp_zone,
    lifts_as_written,
)
from .reads import ReadsMixin
from .selects import SelectPrepared
from .show import ShowMixin
from .transactions import TransactionsMixin, Txn, _lock_file
from .updates import UpdatesMixin
from .views import ViewsMixin
from .writes import WritePathMixin

logging.getLogger("sqlglot").setLevel(logging.ERROR)

VERSION_STRING = "8.0.36-noria_py"

# Engine.lifted: texts longer than this are not lifted; how many texts it remembers
_LIFT_TEXT_MAX = 4096
# several-row INSERTs of placeholders: the first character of a text worth checking, and the
# longest such text the statement cache keeps (a longer one is prepared again from its cached
# one-row form: a driver's batches of every row count would fill the cache with their texts)
_ROWS_FIRST = frozenset("iIrR")
_ROWS_CACHED_TEXT = 4096
_LIFTED_TEXTS_LIMIT = 10000
_NOT_LIFTED: tuple = ()


_ENGINES: weakref.WeakSet = weakref.WeakSet()


def _use_collation(name: str | None, engine) -> None:
    """Make ``name`` the process's collation for ``engine`` (dataflow/partial.py: the dataflow
    keys strings by it, so every engine of a process shares one)."""
    from ..sql import collation as C

    if name is not None:
        try:
            coll = C.get(name)
        except KeyError:
            raise E.ProgrammingError(f"Unknown collation: '{name}'", 1273, "HY000") from None
        cur = C.current()
        if coll.name != cur.name:
            live = [e for e in _ENGINES if not getattr(e, "_closed", False)]
            if live:
                raise E.NotSupportedError(
                    f"collation {coll.name}: another open database uses {cur.name}, and one "
                    "process compares strings by one collation",
                    1235,
                    "42000",
                )
            C.set_current(coll.name)
    _ENGINES.add(engine)


# errors strict mode raises where MySQL outside strict mode stores an adjusted value and warns
_ADJUSTED_OUTSIDE_STRICT = frozenset((1264, 1265, 1292, 1364, 1365, 1366, 1367, 1406, 1411))

# what a statement naming something another process just created fails with (no such table,
# unknown column, unknown database, unknown table to drop, no such column to drop)
_CATALOG_ERRNOS = frozenset((1146, 1054, 1049, 1051, 1091))


def _not_strict(e: E.DatabaseError) -> E.NotSupportedError:
    return E.NotSupportedError(
        "This version of noria_py doesn't yet support 'storing an adjusted value outside "
        f"strict mode (sql_mode without STRICT_TRANS_TABLES)': {e.args[0] if e.args else e}",
        1235,
        "42000",
    )


_ALTER_TABLE = re.compile(
    r"\A\s*alter\s+(?:online\s+)?(?:ignore\s+)?table\s+(?:(?P<db>`(?:[^`]|``)+`|[\w$]+)\s*\.\s*)?"
    r"(?P<t>`(?:[^`]|``)+`|[\w$]+)\s+(?P<rest>.*?)\s*;?\s*\Z",
    re.I | re.S,
)
_KEYS_ACTION = re.compile(r"\s*(?:disable|enable)\s+keys\s*", re.I)


def _keys_actions(sql: str) -> tuple[str | None, str, str | None, bool] | None:
    """(database, table, the ALTER TABLE of the other actions or None, whether the last of
    them is ENABLE KEYS) of an ALTER TABLE that holds DISABLE KEYS or ENABLE KEYS; None for
    any other."""
    m = _ALTER_TABLE.match(sql)
    if m is None or not re.search(r"\b(?:disable|enable)\s+keys\b", m.group("rest"), re.I):
        return None
    from .catalog import _split_top

    parts = _split_top(m.group("rest"))
    others = [p for p in parts if not _KEYS_ACTION.fullmatch(p)]
    if len(others) == len(parts):
        return None
    head = sql[: m.start("rest")]
    last = [p for p in parts if _KEYS_ACTION.fullmatch(p)][-1].strip()[:6].lower()
    rest = (head + ", ".join(o.strip() for o in others)) if others else None
    return m.group("db"), m.group("t"), rest, last == "enable"


def _has_plain_key(schema) -> bool:
    """Has the table an index that is not unique (one of its own, or the one a foreign key
    adds for its columns)?"""
    if schema.indexes:
        return True
    keys = [list(schema.primary_key)] if schema.primary_key else []
    keys += [list(u) for u in schema.uniques]
    names = [c.name.lower() for c in schema.columns]
    for fk in schema.foreign_keys:
        cols = [names.index(c.lower()) for c in fk.cols if c.lower() in names]
        if not any(k[: len(cols)] == cols for k in keys):
            return True  # MySQL adds an index for the foreign key's columns
    return False


class Engine(
    TransactionsMixin,
    WritePathMixin,
    InsertsMixin,
    UpdatesMixin,
    LoadsMixin,
    ReadsMixin,
    CatalogMixin,
    ViewsMixin,
    ShowMixin,
    ExplainMixin,
):
    """One database: base storage, the dataflow graph, and the installed queries.

    The class holds the engine's state (``__init__``), runs statements (``execute``,
    ``prepare``, the statement cache) and hands each parsed statement to the part that
    prepares it; the parts are the mixins above, one per module of this package, each saying
    which state it owns and which other parts it calls."""

    upstream = None  # upstream mode: the Mirror replicating into this engine (noria_py.upstream)

    def __init__(self, path: str | None = None, **options):
        if path == ":memory:":  # sqlite3's spelling of an in-memory database
            path = None
        self.path = path
        # every option declared, checked and at its default unless given (noria_py/options.py)
        self.options = options = _options.validate(options)
        _use_collation(options["collation"], self)
        self.partial = options["partial"]
        # dataflow=False answers every SELECT from base storage (to compare the two paths)
        self.dataflow = options["dataflow"]
        # private_storage: keep an in-memory database in a temporary file instead, so that
        # while one connection's transaction is open the others read committed rows (the
        # server's sessions; see SQLiteStorage)
        self.storage = SQLiteStorage(path, private=options["private_storage"])
        self.graph = Graph()
        limit = options["memory_limit"]
        if limit is not None:
            from ..dataflow.eviction import Evictor, parse_size

            self.graph.evictor = Evictor(parse_size(limit))
        self.views: dict[str, exp.Expression] = {}
        self.view_sql: dict[str, str] = {}
        self.view_names: dict[str, str] = {}
        self._deferred_views: set[str] = set()  # restored, not yet compiled (views.py)
        self.queries: dict[str, QueryEntry] = {}
        self._by_sql: dict[str, QueryEntry] = {}
        self._cache: dict[str, Prepared] = {}
        self.statements_generation = 0  # moves whenever _cache is emptied by a catalog change
        self._session_ctx = None  # (values, context) last made by _in_database
        # which SELECTs become caches: every one it can (caching="auto") or only those CREATE
        # CACHE asked for ("explicit"); DROP CACHE keeps a query proxied (cache_commands.py)
        self.cache_rules = CacheRules(options["caching"])
        # literal lifting (see execute): texts -> their lifted form, lifted forms refused
        self.lift_literals = options["lift_literals"]
        self._lifted_texts: dict[str, tuple] = {}
        self.no_lift: set[str] = set()
        # normalized texts of IN-list shapes that do not compile as one query (_shared_in_lists)
        self._unshared: set[str] = set()
        # databases other than home (lower-case -> name as created); see sql/names.py
        self.databases: dict[str, str] = {}
        self.db_collations: dict[str, str] = {}  # a database's default collation, if not ours
        self._fk_parents: set | None = None  # see _fk_referenced
        self._check_fns: dict = {}  # id(schema) -> (schema, compiled CHECK constraints)
        self._gen_fns: dict = {}  # id(schema) -> (schema, compiled generated columns)
        self._qseq = 0
        self._tx = False  # base storage's write transaction is open (held by _writer)
        self._tx_deltas: list = []
        self._tx_tables: set = set()  # lower-case tables the open transaction wrote
        self._txn_default = Txn()  # the embedded connection's transaction
        self._txns: weakref.WeakSet = weakref.WeakSet([self._txn_default])
        self._cur = self._txn_default  # the transaction of the statement running now
        self._writer: Txn | None = None
        self._sp_seq = 0
        self.on_release: list = []  # called (under the lock) when the writer's transaction ends
        self._closed = False
        self.lock = threading.RLock()
        self.write_count = 0  # write statements that succeeded (``_write``)
        self._infile = None  # LOAD DATA LOCAL: the bytes a client sent, while load_local runs
        self.graph.lock = self.lock
        self.graph.sync = self._drain
        # --- bulk replays: Spark computes big full nodes' initial state (spark/replay.py) ---
        from ..spark.replay import configure as _bulk_replay

        self.graph.bulk_replay = _bulk_replay(self, options)
        # domains: "inline" runs the dataflow inside each write; "threads" gives it its own
        # thread, fed by a bounded inbox, so a write returns once it is durable in base storage
        self.domains = options["domains"]
        # upqueries: "direct" computes a fill in place (one recursive call up the path, under
        # the engine lock); "messages" sends requests and responses through the message-passing
        # dataflow (dataflow/domain.py) delivered in FIFO order by the inline scheduler
        self.upqueries = options["upqueries"] or (
            "messages" if self.domains == "threads" else "direct"
        )
        # a join over base tables looks the other input up in base storage instead of keeping
        # a copy of it (ops/join.py), reading it as the join has received it: without the
        # pending deltas inline (Graph.propagate_all), as of the last logged write that reached
        # the join under the inline message scheduler (scheduler.inject_all). Domain threads,
        # and a shared file's catch-up under messages, keep copying joins.
        self.graph.lookup_joins = bool(
            options["lookup_joins"]
            and self.domains == "inline"
            and (self.upqueries == "direct" or not (path and options["shared"]))
        )
        self._runtime = None  # the ThreadScheduler, when every domain has its own thread
        if self.upqueries == "messages" and self.domains == "threads":
            # every domain on its own thread, exchanging messages (dataflow/scheduler.py)
            from ..dataflow.scheduler import ThreadScheduler

            rt = ThreadScheduler(
                self.graph,
                options["inbox_limit"],
                0.0 if options["batch_window"] is None else options["batch_window"],
            )
            rt.on_failure = self._domain_failed
            self._runtime = rt.attach()
            self.graph.sync = lambda: None  # a miss needs no quiescence: messages handle races
        elif self.upqueries == "messages":
            from ..dataflow.scheduler import InlineScheduler

            InlineScheduler(self.graph).attach()
        self.read_your_writes = options["read_your_writes"]
        self.batch_window = 0.0002 if options["batch_window"] is None else options["batch_window"]
        self.inbox_limit = options["inbox_limit"]
        self._pending: collections.deque = collections.deque()
        self._failure: BaseException | None = None
        self._wake = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        # --- several processes on one file: a change log every process tails (see _catch_up)
        self.shared = bool(path and options["shared"])
        # without the change log this engine's views see no other connection's writes: it must
        # be alone on the file; with it, any number of such engines may share the file
        try:
            self._file_lock = _lock_file(path, exclusive=not self.shared) if path else None
        except E.Error:
            self.storage.close()
            raise
        self._origin = ""
        self._applied = 0  # the last change-log entry the dataflow reflects
        self._pin_stale = False  # this process committed since the snapshot was pinned
        self._behind = False  # another connection committed: catch up before the next read
        self._dv_conn = None
        self._tailer: threading.Thread | None = None
        if self.shared:
            import uuid

            self._origin = uuid.uuid4().hex
            self.storage.enable_log(self._origin, options["busy_timeout"])
            self.storage.log_join(self._origin)
            self._applied = self.storage.pin()
        self._restore()
        if self.shared:
            self.storage.others_committed()
            # the views restored read the snapshot pinned above: what other processes
            # committed since then enters them as deltas (or, after DDL, by a rebuild)
            self._catch_up()
            self.storage.log_housekeeping(self._origin, self._applied)
            self._poll = options["poll_interval"]
            self._tailer = threading.Thread(
                target=Engine._tail,
                args=(weakref.ref(self), path, self._poll),
                name="noria-tail",
                daemon=True,
            )
            self._tailer.start()
            import sqlite3 as _sqlite3

            self._dv_conn = _sqlite3.connect(path, check_same_thread=False)
            self._dv_last = self._dv_conn.execute("PRAGMA data_version").fetchone()[0]
        self._refresh_fast()
        if self.domains == "threads" and self._runtime is None:
            self._thread = threading.Thread(
                target=self._domain_loop, name="noria-dataflow", daemon=True
            )
            self._thread.start()

    # --- public API --------------------------------------------------------------------------
    def miss_seconds(self) -> float:
        """Time spent filling reader misses of key lookups since the engine opened (queries
        still installed)."""
        return sum(e.miss_ns for e in self.queries.values()) / 1e9

    @property
    def log_position(self) -> tuple[int, str] | None:
        """``(applied, origin)``: the last entry of the change log (several processes on one
        file) this engine has applied from the others, and its own writes' origin; None
        without a change log. Needs no lock."""
        return (self._applied, self._origin) if self.shared else None

    def select_statements(self) -> list[SelectPrepared]:
        """The SELECTs in the statement cache (the monitor samples their reads' latency).
        Needs no lock."""
        return [p for p in list(self._cache.values()) if isinstance(p, SelectPrepared)]

    def _forget_statements(self) -> None:
        """The catalog changed: prepared statements are planned again on their next use, and
        ``statements_generation`` moves (verdicts kept elsewhere about texts are stale)."""
        self._cache.clear()
        self.statements_generation += 1

    def cached(self, sql: str) -> Prepared | None:
        """The statement ``prepare(sql)`` would return if it is already prepared, else None
        (nothing is parsed). A caller holding a statement checks with ``cached(sql) is prep``
        that no DDL replaced it; no lock is needed."""
        return self._cache.get(sql)

    def execute(self, sql: str, params=(), txn: Txn | None = None) -> Result:
        """Run one statement. A SELECT text without parameters whose literals lift into
        parameters (``sql/literals.py``) is answered as its parameterized form, so that the
        lookups of one shape share one query (see ``lifted``), unless ``lift_literals`` is off."""
        with self.lock:  # (as ``_locked`` does, without a wrapper's call per statement)
            prev = self._cur
            self._cur = txn if txn is not None else self._txn_default
            try:
                if txn is None:
                    t = self._txn_default
                    if t.database is not None or t.last_insert_id or t.row_count != -1:
                        # the session's values bound for the statement (``_execute``'s steps,
                        # the prepared statement looked up once), unless it reads none of them
                        self._ready()
                        db = t.database
                        prep = self._cache.get(sql if db is None else f"\0{db}\0{sql}")
                        if prep is None:
                            res = self._in_database(self._execute, sql, params)
                        elif getattr(prep, "session_free", False):
                            res = self._run(sql, prep, params)  # (binds none of them)
                        else:
                            res = self._in_database(self._run, sql, prep, params)
                    else:
                        res = self._execute(sql, params)
                    if res.lastrowid:  # an AUTO_INCREMENT value was generated
                        t.last_insert_id = res.lastrowid
                    t.row_count = res.rowcount if res.columns is None else -1
                    return res
                return self._execute(sql, params)
            finally:
                self._cur = prev

    def insert_now(self, sql: str, prep: InsertPrepared, params) -> int | None:
        """``execute(sql, params)`` for the embedded connection (its default transaction
        state) when ``prep``, looked up by the caller, is the cached plain one-row INSERT of
        ``sql`` and nothing around it asks more than ``_insert_one`` does: autocommit, no
        transaction or table lock, the home database, inline or queued dataflow, no other
        process on the file, no FOREIGN KEY or CHECK, nothing the values compute reading the
        session. ``execute``'s layers (``_ready``, ``_run``, ``_insert_row``) collapsed into
        the steps they take for such a statement (``_build_one``, ``_store_one``). Returns
        the AUTO_INCREMENT value generated (0: none; the row count is 1), or None when one of
        the conditions fails (then ``execute`` answers, nothing having been done here)."""
        with self.lock:
            t = self._txn_default
            if (
                t.database is not None
                or not t.autocommit
                or t.active
                or t.locked is not None
                or self._writer_ is not None
                or self._tx
                or self._runtime is not None
                or self.shared
                or self._closed
                or self._failure_ is not None
                or self._behind_
                or self._cache.get(sql) is not prep
                or params.__class__ not in (tuple, list)
                or len(params) != prep.param_count
            ):
                return None
            ok = prep.now_ok
            if ok is None:
                # kept with the statement: DDL (which could add a FOREIGN KEY or a CHECK)
                # replaces every cached statement
                ok = prep.now_ok = (
                    prep.one_row and prep.session_free and not self._fk_involved(prep.schema)
                )
            if not ok:
                return None
            check_params(params)
            if prep.timestamps:
                check_timestamp_zone()
            prev = self._cur
            self._cur = t
            notes = V.Adjust(prep.table_text, 1, True)  # strict mode's notes (row 1, strict)
            try:
                generated = self._store_one(prep, self._build_one(prep, params, notes, t))
            except E.DatabaseError as e:
                if not t.strict and e.errno in _ADJUSTED_OUTSIDE_STRICT:
                    raise _not_strict(e) from e
                _noted(e, notes.conditions, t)
                raise
            finally:
                self._cur = prev
            if generated:
                t.last_insert_id = generated
            t.row_count = 1
            conditions = notes.conditions
            if conditions:  # the diagnostics area (noria_py.diagnostics)
                if not t.notes:  # sql_notes = 0
                    conditions = [c for c in conditions if c[0] != "Note"]
                t.diag = conditions
            elif t.diag and prep.clears:
                t.diag = ()
            return generated

    @_locked
    def execute_lifted(
        self, sql: str, lifted_sql: str, params, txn: Txn | None = None
    ) -> tuple[Result, bool]:
        """Answer ``sql``, a SELECT text without parameters, as ``lifted_sql`` with ``params``:
        its literal-lifted form (``literals.lift_literals``), as the server's lookup path
        computed it. Returns (the result, True), or (the result of ``sql`` as written, False)
        when the literals would not compare as parameters as they do in the text
        (``lifts_as_written``) or the engine refuses the form (remembered in ``no_lift``)."""
        prev = self._cur
        self._cur = txn if txn is not None else self._txn_default
        try:
            if txn is None and self._txn_default.database is not None:
                return self._in_database(self._execute_lifted, sql, lifted_sql, params)
            return self._execute_lifted(sql, lifted_sql, params)
        finally:
            self._cur = prev

    def _in_database(self, run, *args):
        """The embedded connection's session values: DATABASE() (after USE), LAST_INSERT_ID()
        and ROW_COUNT() read them. (A server session binds its own context.)"""
        t = self._txn_default
        base = F.current_context()
        db = t.database
        # (the base context is mutable: a server session rebinds its own; compare its values)
        key = (
            id(base),
            base.version,
            base.user,
            base.connection_id,
            base.time_zone,
            base.found_rows,
            base.now,
            base.collation,
            N.HOME if db is None else (db or None),  # current_database()
            t.last_insert_id,
            t.row_count,
        )
        made = self._session_ctx
        if made is not None and made[0] == key:
            ctx = made[1]  # the same values as the last statement's: most statements
        else:
            ctx = dataclasses.replace(
                base, database=key[-3], last_insert_id=key[-2], row_count=key[-1]
            )
            self._session_ctx = (key, ctx)
        prev = F.set_context(ctx)
        try:
            return run(*args)
        finally:
            F.set_context(prev)

    def lifted(self, sql: str) -> tuple[str, tuple] | None:
        """The literal-lifted form of a SELECT text and the literals as its parameters
        (``literals.lift_literals``: ``... WHERE id = 42`` -> ``... WHERE id = ?``, (42,)), or
        None: the text lifts nothing, or the engine refused its form before. Remembered per
        text (a bounded cache of SELECT texts); needs no lock."""
        hit = self._lifted_texts.get(sql)
        if hit is None:
            if sql[:6].lower() != "select" or has_executable(sql):
                return None
            if len(sql) > _LIFT_TEXT_MAX:
                # a long text (an IN list of thousands of keys): lifted each time, remembered
                # by neither cache (its shape is as long as it is)
                lifted = lift_literals(sql)
                if lifted is None or lifted[0] in self.no_lift:
                    return None
                return lifted[0], tuple(lifted[1])
            lifted = lift_literals_cached(sql)
            hit = _NOT_LIFTED if lifted is None else (lifted[0], tuple(lifted[1]))
            texts = self._lifted_texts
            if len(texts) >= _LIFTED_TEXTS_LIMIT:
                texts.clear()
            texts[sql] = hit
        if hit is _NOT_LIFTED or hit[0] in self.no_lift:
            return None
        return hit

    def _ready(self) -> None:
        """Before a statement: the engine is open, and the views have every other process's
        and connection's commits."""
        # (the properties' own fields: this runs before every statement)
        if self._closed or self._failure_ is not None:
            self._check_open()
        if self.fast <= 0 and self.shared:
            self.poll_commits()
        if self._behind_:
            self._catch_up()

    def _execute(self, sql: str, params) -> Result:
        self._ready()
        t = self._cur
        prep = self._cache.get(sql if t.database is None else f"\0{t.database}\0{sql}")
        if prep is None:
            if not params and self.lift_literals and params.__class__ in (tuple, list):
                lifted = self.lifted(sql)
                if lifted is not None:
                    return self._answer_lifted(sql, lifted[0], lifted[1])[0]
            prep = self.prepare(sql)
        return self._run(sql, prep, params)

    def _execute_lifted(self, sql: str, lifted_sql: str, params) -> tuple[Result, bool]:
        self._ready()
        return self._answer_lifted(sql, lifted_sql, params)

    def _prepared(self, sql: str) -> Prepared:
        db = self._cur.database
        return self._cache.get(sql if db is None else f"\0{db}\0{sql}") or self.prepare(sql)

    def _answer_lifted(self, sql: str, lifted_sql: str, params) -> tuple[Result, bool]:
        """``sql`` answered as its literal-lifted form (see ``execute_lifted``). When the
        engine does not answer that form, ``sql`` is answered as written, and if that works
        the form is remembered as refused (when ``sql`` fails too, its error was about its
        values, not about the form)."""
        refused = True
        try:
            prep = self._prepared(lifted_sql)
            if prep.param_count == len(params):
                refused = False
                if lifts_as_written(prep, params):
                    return self._run(lifted_sql, prep, params), True
        except E.LockWait:
            raise
        except E.Error:
            refused = True
        res = self._run(sql, self._prepared(sql), ())
        if refused:
            self.no_lift.add(lifted_sql)
        return res, False

    def _run(self, sql: str, prep: Prepared, params) -> Result:
        t = self._cur
        if not t.autocommit and not t.active and prep.kind != "tx" and prep.kind != "diag":
            t.active = True  # autocommit off: every statement runs inside a transaction
        if self._pending and not prep.is_write:
            self._drain()
        if params is None:
            params = ()
        if not isinstance(params, (tuple, list)):
            if isinstance(params, dict):
                raise E.ProgrammingError("named parameters are not supported; use ? and a sequence")
            params = tuple(params)
        check_params(params)
        if len(params) != prep.param_count and (params or prep.kind != "explain"):
            hint = " (placeholders are ?, not %s)" if "%s" in sql else ""
            raise E.ProgrammingError(
                f"Incorrect number of bindings supplied: the statement uses {prep.param_count}, "
                f"{len(params)} supplied{hint}",
                E.ER_WRONG_ARGUMENTS,
                "HY000",
            )
        if getattr(prep, "timestamps", False):
            check_timestamp_zone()
        if params and prep.is_select and binds_otherwise(prep, params):
            # MySQL compares the value as its type, not the column's: the text with the
            # values in place answers (literal lifting leaves such a text as written)
            text = write_in(sql, params)
            return self._run(text, self.prepare(text), ())  # as written: never lifted again
        try:
            if prep.kind == "ddl" and self.shared:
                self._catch_up()  # another process's DDL just before it counts (1050, 1051 ...)
                try:
                    res = prep.run(self, params)
                finally:
                    self._catch_up()  # a snapshot that holds this DDL
            elif getattr(prep, "reads_found_rows", False):
                from ..sql import functions as F

                ctx = F.current_context()
                F.set_context(dataclasses.replace(ctx, found_rows=t.found_rows))
                try:
                    res = prep.run(self, params)
                finally:
                    F.set_context(ctx)
            else:
                res = prep.run(self, params)
        except ReaderGone:
            # its view was rebuilt since the statement was looked up (a catch-up before the
            # read applied another process's DDL): planned again, on the new graph
            fresh = self.prepare(sql) if prep.is_select else prep
            if fresh is prep:
                raise E.OperationalError(
                    "the view this statement reads was removed while it read it", 1105, "HY000"
                ) from None
            return self._run(sql, fresh, params)
        except E.DatabaseError as e:
            if not t.strict and prep.is_write and e.errno in _ADJUSTED_OUTSIDE_STRICT:
                raise _not_strict(e) from e
            raise
        if t.locked is not None and self._writer is not t:
            self._relock(t)  # a DDL statement committed the table locks' transaction
        if res.columns is not None and prep.is_select and prep.kind != "diag":
            t.found_rows = len(res.rows) if res.found is None else res.found
        if res.conditions:  # the diagnostics area (noria_py.diagnostics)
            if not t.notes:  # sql_notes = 0
                res.conditions = [c for c in res.conditions if c[0] != "Note"]
            t.diag = res.conditions
        elif t.diag and prep.clears:
            t.diag = ()
        return res

    @_locked
    def executemany(self, sql: str, seq_of_params, txn: Txn | None = None) -> Result:
        prev = self._cur
        self._cur = txn if txn is not None else self._txn_default
        try:
            return self._executemany(sql, seq_of_params)
        finally:
            self._cur = prev

    def _executemany(self, sql: str, seq_of_params) -> Result:
        if self._closed or self._failure is not None:
            self._check_open()
        if self._behind:
            self._catch_up()
        db = self._cur.database
        prep = self._cache.get(sql if db is None else f"\0{db}\0{sql}") or self.prepare(sql)
        if getattr(prep, "timestamps", False):
            check_timestamp_zone()
        seq = [tuple(p) if p is not None else () for p in seq_of_params]
        for p in seq:
            check_params(p)
            if len(p) != prep.param_count:
                raise E.ProgrammingError(
                    f"Incorrect number of bindings supplied: the statement uses "
                    f"{prep.param_count}, {len(p)} supplied",
                    E.ER_WRONG_ARGUMENTS,
                    "HY000",
                )
        t = self._cur
        if not t.autocommit and not t.active:
            t.active = True
        if isinstance(prep, InsertPrepared) and prep.select is None:
            try:
                res = self._insert(prep, seq)
            except E.DatabaseError as e:
                if not t.strict and e.errno in _ADJUSTED_OUTSIDE_STRICT:
                    raise _not_strict(e) from e
                raise
            t.diag = res.conditions  # an INSERT uses its table: it clears the area
            return res
        total = 0
        last = None
        if prep.is_write:
            results = self.execute_batch([(sql, p) for p in seq])
            for r in results:
                total += max(r.rowcount, 0)
                last = r.lastrowid if r.lastrowid else last
            return Result(rowcount=total, lastrowid=last)
        res = Result(rowcount=-1)
        for p in seq:
            res = prep.run(self, p)
        return res

    @_locked
    def prepare(self, sql: str) -> Prepared:
        """Parse and plan a statement once; later calls with the same text (in the same
        database) reuse it."""
        db = self._cur.database
        key = sql if db is None else f"\0{db}\0{sql}"
        prep = self._cache.get(key)
        if prep is not None:
            return prep
        if has_executable(sql):
            text = expand(sql)  # MySQL's executable comments: what the statement stands for
            if text != sql:
                if blank(text):  # a comment for a later version, and nothing else
                    return FuncPrepared(lambda p: Result(rowcount=0), 0, clears=False)
                try:
                    prep = self.prepare(text)
                except E.ProgrammingError as e:
                    raise remap_syntax_error(e, sql) from None
                if prep.kind not in ("ddl", "tx"):
                    self._cache[key] = prep
                return prep
        if blank(sql):
            if not sql.strip().strip(";").strip():
                raise E.ProgrammingError("Query was empty", 1065, "42000")
            # only comments: a statement that does nothing (MariaDB's answer)
            return FuncPrepared(lambda p: Result(rowcount=0), 0, clears=False)
        tx = self._tx_statement(sql) if len(sql) < 200 or sql[:4].lower() == "lock" else None
        if tx is not None:
            what, arg = tx
            # (LOCK TABLES uses its tables: it clears the diagnostics area, as MySQL's does)
            return FuncPrepared(
                lambda p: self._tx_stmt(what, arg), 0, kind="tx", clears=what == "lock"
            )
        from ..diagnostics import prepare_show

        show = prepare_show(sql)  # SHOW WARNINGS / ERRORS / COUNT(*) ...
        if show is not None:
            self._cache[key] = show
            return show
        command = prepare_cache_command(self, sql)  # CREATE / DROP CACHE, SHOW PROXIED ...
        if command is not None:
            return command
        form = rows_form(sql) if sql[:1] in _ROWS_FIRST or sql[:1].isspace() else None
        if form is not None:
            # several rows of placeholders: prepared from the one-row form (parsed once)
            try:
                prep = rows_prepared(self.prepare(form[0]), form[1], form[2])
            except E.Error:
                prep = None  # the statement's own parse says what is wrong with it
            if prep is not None:
                if len(sql) <= _ROWS_CACHED_TEXT:
                    self._cache[key] = prep
                return prep
        text = sql
        ast, nparams = parse(sql)
        calc = _take_calc_found_rows(ast)
        if self._qualify(ast, db) or calc:
            sql = ast.sql(dialect=DIALECT)  # the text of what it now means (catalog, view keys)
        try:
            prep = self._prepare_ast(ast, nparams, sql)
        except E.ProgrammingError as e:
            if self._newer_catalog(e):
                return self.prepare(text)  # planned against the catalog just caught up with
            raise
        if any(f.name.upper() == "FOUND_ROWS" for f in ast.find_all(exp.Anonymous)):
            prep.reads_found_rows = True
        if isinstance(ast, exp.Select) and ast.args.get("locks"):
            prep = LockingPrepared(prep)
        if calc:
            count = _found_rows_count(ast)
            prep = CalcFoundRowsPrepared(prep, count.sql(dialect=DIALECT), count, nparams)
        if self._touches_timestamps(ast):
            prep.timestamps = True
        if prep.kind not in ("ddl", "tx"):
            if len(self._cache) > 50000:
                self._cache.clear()
            self._cache[key] = prep
        return prep

    def _newer_catalog(self, error: E.ProgrammingError) -> bool:
        """A statement names a table, column or database this process does not know. With a
        file shared by several processes, another one may have created it a moment ago, before
        the background thread noticed: catch up now (as in MySQL, DDL is seen at once by every
        connection once it returns). True when the catalog moved, so the statement is planned
        again; otherwise the error stands."""
        if not self.shared or self._tx or error.errno not in _CATALOG_ERRNOS:
            return False
        generation = self.statements_generation
        self._catch_up()
        return self.statements_generation != generation

    def _touches_timestamps(self, ast: exp.Expression) -> bool:
        """Does the statement read or write a TIMESTAMP column? A write to a table that has
        one does (a default or ON UPDATE of CURRENT_TIMESTAMP writes it unnamed); a read
        does when it names such a column of a table it reads (or a view over one), or *."""
        tables: set = set()
        todo = [t.name.lower() for t in ast.find_all(exp.Table)]
        while todo:
            name = todo.pop()
            if name in tables:
                continue
            tables.add(name)
            view = self.views.get(name)
            if view is not None:
                todo += [t.name.lower() for t in view.find_all(exp.Table)]
        stamps = set()
        for name in tables:
            schema = self.storage.schemas.get(name)
            if schema is not None:
                stamps.update(
                    c.name.lower() for c in schema.columns if c.ctype.mysql_name == "TIMESTAMP"
                )
        if not stamps:
            return False
        if isinstance(ast, (exp.Insert, exp.Update, exp.Delete, exp.LoadData)):
            return True
        if not isinstance(ast, (exp.Select, exp.SetOperation, exp.Subquery)):
            return False  # DDL, SHOW ...: no TIMESTAMP value read or written
        if ast.find(exp.Star) is not None:
            return True
        return any(c.name.lower() in stamps for c in ast.find_all(exp.Column))

    @_locked
    def execute_batch(self, statements) -> list[Result]:
        """Run several statements as one transaction: all applied (one dataflow batch) or none."""
        results = []
        t = self._cur
        own = not t.active
        if own:
            self._begin(t)
        try:
            for sql, params in statements:
                results.append(self.execute(sql, params, t))
        except BaseException:
            if own:
                self._rollback(t)
            raise
        if own:
            self._commit(t)
        return results

    def _toggle_keys(self, db: str | None, table: str, rest: str | None, enable: bool) -> Prepared:
        """ALTER TABLE t DISABLE|ENABLE KEYS (``mysqldump`` writes them around each table's
        rows), alone or beside other changes (``rest``, an ALTER TABLE of those, done as
        usual): base storage, like InnoDB, keeps every index current, so nothing changes but
        MySQL's note, which InnoDB gives for ENABLE KEYS, and for DISABLE KEYS when the table
        has a key that is not unique (the last of them counts). The table must exist and be a
        base table."""

        def unq(s):
            return s[1:-1].replace("``", "`") if s.startswith("`") else s

        name = self._engine_table_name(unq(db) if db else None, unq(table))
        if name.lower() in self.views:
            owner, bare = N.split(name)
            raise E.ProgrammingError(
                f"'{owner or N.HOME}.{bare}' is not of type 'BASE TABLE'", 1347, "HY000"
            )
        schema = self._schema(name)
        owner, bare = N.split(schema.name)
        note = []
        if enable or _has_plain_key(schema):
            msg = (
                f"Storage engine InnoDB of the table `{owner or N.HOME}`.`{bare}` doesn't "
                "have this option"
            )
            note = [("Note", 1031, msg)]
        if rest is None:
            return FuncPrepared(lambda p: Result(rowcount=0, conditions=list(note)), 0)
        inner = self.prepare(rest)

        def run(p):
            res = inner.run(self, p)
            res.conditions = list(note) + list(res.conditions or ())
            return res

        return FuncPrepared(run, 0, kind=inner.kind)

    def execute_ast(self, ast: exp.Expression, params=(), stored: bool = False) -> Result:
        """``ast`` run; ``stored``: a SELECT's values as a write stores them (``Compiler.stored``)."""
        prep = self._prepare_ast(ast, _count_params(ast), ast.sql(DIALECT), stored)
        return prep.run(self, params)

    def table_names(self) -> list[str]:
        return [s.name for s in self.storage.schemas.values()]

    def describe(self, table: str) -> list[tuple]:
        return list(self._describe(table).rows)

    @_locked
    def close(self) -> None:
        if self._closed:
            return
        if self._runtime is not None:
            if self._failure is None:
                try:
                    self._runtime.wait_idle(timeout=30)
                except BaseException:  # noqa: BLE001 - closing anyway
                    pass
            if self._writer is not None:
                self._end_writer()
            self._runtime.stop()
        if self._thread is not None:
            self._closed = True
            with self._wake:
                self._wake.notify_all()
            self.lock.release()  # let the domain thread finish its batch
            try:
                self._thread.join(timeout=10)
            finally:
                self.lock.acquire()
            self._closed = False
            if self._failure is None:
                self._drain()
        if self._writer is not None:
            self._end_writer()
        self._closed = True
        if self._tailer is not None:
            self.lock.release()  # let the tail thread see _closed
            try:
                self._tailer.join(timeout=5)
            finally:
                self.lock.acquire()
            self.storage.log_leave(self._origin)
            if self._dv_conn is not None:
                self._dv_conn.close()
        for n in list(self.graph.nodes.values()):
            n.on_removed()
        self.storage.close()
        if self._file_lock is not None:
            self._file_lock.close()  # releases the lock

    def _end_writer(self) -> None:
        """At close: the writing connection's transaction rolls back, unless it holds table
        locks with autocommit on (MySQL committed each of its statements)."""
        w = self._writer
        if w.locked is not None and w.autocommit:
            w.locked = None
            self._commit(w)
        else:
            self._rollback(w)

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._failure is not None:
            raise E.OperationalError(
                f"the dataflow failed and the database refuses further work: {self._failure!r}",
                2013,
                "HY000",
            ) from self._failure
        if self._closed:
            raise E.OperationalError("the database is closed", 2006, "HY000")

    # --- statement planning ------------------------------------------------------------------
    def _schema(self, name: str) -> TableSchema:
        s = self.storage.schemas.get(name.lower())
        if s is None:
            raise E.no_such_table(name)
        return s

    def _prepare_ast(
        self, ast: exp.Expression, nparams: int, sql: str, stored: bool = False
    ) -> Prepared:
        if isinstance(ast, exp.Select):
            frm = ast.args.get("from_")
            t = frm.this if frm is not None else None
            if (
                isinstance(t, exp.Table)
                and t.name.upper() == "DUAL"
                and not t.this.quoted
                and not t.db
                and not ast.args.get("joins")
            ):
                ast = ast.copy()
                ast.set("from_", None)  # FROM DUAL: MySQL's table of no columns and one row
        if isinstance(ast, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
            from ..infoschema import InfoSchemaPrepared, names_info_schema

            if ast.find(exp.SessionParameter) is not None:
                from ..diagnostics import prepare_select

                return prepare_select(ast, nparams)  # @@warning_count, @@error_count
            if names_info_schema(ast):
                return InfoSchemaPrepared(ast, nparams, sql)
            prep = self._prepare_select(ast, nparams, sql, stored=stored)
            if (
                prep.clears
                and not any(
                    t.name and not (t.name.upper() == "DUAL" and not t.this.quoted and not t.db)
                    for t in ast.find_all(exp.Table)
                )
                and not any(  # a derived table is a table
                    isinstance(q.parent, (exp.From, exp.Join)) for q in ast.find_all(exp.Subquery)
                )
            ):
                prep.clears = False  # a SELECT of no table: SELECT 1 keeps the diagnostics
            return prep
        if isinstance(ast, exp.Alter):
            return FuncPrepared(lambda p: self._alter_table(ast), 0, kind="ddl")
        if isinstance(ast, exp.TruncateTable):
            return FuncPrepared(lambda p: self._truncate(ast), 0, kind="ddl")
        if isinstance(ast, exp.Insert):
            return InsertPrepared(self, ast, nparams)
        if isinstance(ast, exp.Update):
            return self._prepare_update(ast, nparams)
        if isinstance(ast, exp.Delete):
            return self._prepare_delete(ast, nparams)
        if isinstance(ast, exp.Create):
            kind = (ast.args.get("kind") or "").upper()
            if kind == "TABLE":
                return FuncPrepared(lambda p: self._create_table(ast, sql), 0, kind="ddl")
            if kind == "VIEW":
                return FuncPrepared(lambda p: self._create_view(ast, sql), 0, kind="ddl")
            if kind == "INDEX":
                return FuncPrepared(lambda p: self._create_index(ast, sql), 0, kind="ddl")
            if kind in ("DATABASE", "SCHEMA"):
                return FuncPrepared(
                    lambda p: self._create_database(ast), 0, kind="ddl", clears=False
                )
            raise E.NotSupportedError(f"CREATE {kind} is not supported")
        if isinstance(ast, exp.Drop):
            kind = (ast.args.get("kind") or "").upper()
            if kind == "TABLE":
                return FuncPrepared(lambda p: self._drop_tables(ast), 0, kind="ddl")
            if kind == "VIEW":
                return FuncPrepared(lambda p: self._drop_views(ast), 0, kind="ddl")
            if kind == "INDEX":
                return FuncPrepared(lambda p: self._drop_index(ast), 0, kind="ddl")
            if kind in ("DATABASE", "SCHEMA"):
                return FuncPrepared(lambda p: self._drop_database(ast), 0, kind="ddl", clears=False)
            raise E.NotSupportedError(f"DROP {kind} is not supported")
        if isinstance(ast, exp.Use):
            name = ast.this.name if ast.this is not None else ""
            return FuncPrepared(lambda p: self._use(name), 0, kind="tx")
        if isinstance(ast, exp.Describe):
            target = ast.this
            if isinstance(target, exp.Table):
                if target.name.lower() in self.views:
                    return FuncPrepared(lambda p: self._show_columns(target.name, False), 0)
                return FuncPrepared(lambda p: self._describe(target.name), 0)
            # EXPLAIN of a statement with placeholders takes values for them, or none (a plan
            # does not depend on them)
            return FuncPrepared(lambda p: self._explain(target, nparams), nparams, kind="explain")
        if isinstance(ast, exp.Show):
            what = str(ast.this).upper()
            tbl = ast.args.get("target")
            tname = (tbl.name if hasattr(tbl, "name") else str(tbl).strip('`"')) if tbl else ""
            shown_db = ast.args.get("db")
            shown_db = shown_db.name if shown_db is not None else None
            if what in ("DATABASES", "SCHEMAS"):
                like = ast.args.get("like")
                return FuncPrepared(lambda p: self._show_databases(like), 0)
            if what in ("CREATE DATABASE", "CREATE SCHEMA"):
                return FuncPrepared(lambda p: self._show_create_database(tname), 0, clears=False)
            if tname:
                tname = self._engine_table_name(shown_db, tname)
            like = ast.args.get("like")
            where = ast.args.get("where")
            if where is not None and isinstance(where, exp.Where):
                where = where.this
            full = bool(ast.args.get("full"))
            if what == "TABLES":
                return FuncPrepared(lambda p: self._show_tables(full, like, where, shown_db), 0)
            if what == "CREATE TABLE":
                return FuncPrepared(lambda p: self._show_create_table(tname), 0)
            if what == "CREATE VIEW":
                return FuncPrepared(lambda p: self._show_create_view(tname), 0)
            if what in ("COLUMNS", "FIELDS"):
                if not full and like is None and where is None and tname.lower() not in self.views:
                    return FuncPrepared(lambda p: self._describe(tname), 0)
                return FuncPrepared(lambda p: self._show_columns(tname, full, like, where), 0)
            if what in ("INDEX", "INDEXES", "KEYS"):
                return FuncPrepared(lambda p: self._show_index(tname, where), 0)
            if what == "TABLE STATUS":
                return FuncPrepared(lambda p: self._show_table_status(like, where, shown_db), 0)
            raise E.NotSupportedError(f"SHOW {what} is not supported")
        if isinstance(ast, exp.Transaction):
            ro = any("READ ONLY" in str(m).upper() for m in ast.args.get("modes") or ())
            return FuncPrepared(lambda p: self._tx_stmt("begin", ro), 0, kind="tx")
        if isinstance(ast, exp.Commit):
            return FuncPrepared(lambda p: self._tx_stmt("commit"), 0, kind="tx")
        if isinstance(ast, exp.Rollback):
            return FuncPrepared(lambda p: self._tx_stmt("rollback"), 0, kind="tx")
        if isinstance(ast, exp.Command):
            name = str(ast.this).upper()
            rest = ast.expression
            rest = (rest.name if hasattr(rest, "name") else str(rest or "")).upper()
            if name == "LOAD":
                from ..load_data import parse_load

                spec = parse_load(sql)
                if spec is None:
                    raise E.parse_error(f"near '{sql.strip()[:40]}'")
                return FuncPrepared(lambda p: self._load_data(spec), 0, is_write=True, kind="load")
            if name == "RENAME" and rest.startswith("TABLE"):
                text = ast.expression.name if hasattr(ast.expression, "name") else rest
                text = text.strip()[len("TABLE") :]
                return FuncPrepared(lambda p: self._rename_tables(text), 0, kind="ddl")
            if name == "ALTER":
                keys = _keys_actions(sql)
                if keys is not None:
                    return self._toggle_keys(*keys)
                alter = _alter_add_check(sql)
                if alter is not None:
                    self._qualify(alter, self._cur.database)
                    return FuncPrepared(lambda p: self._alter_table(alter), 0, kind="ddl")
                raise E.NotSupportedError(f"This version doesn't yet support '{sql.strip()[:80]}'")
            if name == "SHOW" and rest.strip() == "CACHES":
                return FuncPrepared(lambda p: self._show_caches(), 0)
            text = ast.expression.name if hasattr(ast.expression, "name") else rest
            m = re.match(
                r"\s*(?:INDEX|INDEXES|KEYS)\s+(?:FROM|IN)\s+(?:(`(?:[^`]|``)+`|[\w$]+)\s*\.\s*)?"
                r"(`(?:[^`]|``)+`|[\w$]+)(?:\s+(?:FROM|IN)\s+(`(?:[^`]|``)+`|[\w$]+))?\s*\Z",
                text,
                re.I,
            )
            if name == "SHOW" and m:

                def unq(s):
                    return s[1:-1].replace("``", "`") if s and s.startswith("`") else s

                db = unq(m.group(1) or m.group(3))
                tname = self._engine_table_name(db, unq(m.group(2)))
                return FuncPrepared(lambda p: self._show_index(tname, None), 0)
            raise E.NotSupportedError(f"statement not supported: {sql.strip()[:60]}")
        if isinstance(ast, (exp.Query, exp.DDL, exp.DML, exp.Command)):
            raise E.NotSupportedError(f"statement not supported: {type(ast).__name__}")
        raise E.parse_error(f"near '{sql.strip()[:40]}'")

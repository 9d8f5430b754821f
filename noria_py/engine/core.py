"""The engine: catalog, statement cache, migrations, and ``execute(sql, params)``.

A statement's text is parsed once and cached as a prepared object:

* a SELECT the compiler can maintain becomes a query in the shared dataflow graph and is
  answered by a reader lookup keyed by its parameters ("cached");
* any other SELECT runs on SQLite after transpiling ("proxied");
* a write is applied to SQLite (atomically, inside a savepoint) and the resulting signed deltas
  are pushed through the dataflow in the same step, so every materialization stays current;
* DDL changes the catalog (kept in the same SQLite file) and drops cached statements.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import re
import sqlite3
import sys
import threading
import weakref

from sqlglot import exp

from .. import errors as E
from .. import options as _options
from ..cache_commands import CacheRules, prepare_cache_command
from ..dataflow.graph import Graph
from ..dataflow.node import Node
from ..result import Result
from ..sql import functions as F
from ..sql import names as N
from ..sql import values as V
from ..sql.compile import CompiledQuery, Compiler
from ..sql.dialect import DIALECT
from ..sql.expr import Unsupported
from ..sql.literals import lift_literals_cached, write_in
from ..sql.parse import item_name, parse
from ..storage.sqlite import ColumnDef, SQLiteStorage, TableSchema, q
from .base import QueryEntry, _count_params, _locked
from .inserts import InsertPrepared, InsertsMixin
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
from .reads import ReadsMixin, _normalize, _refuse_member_order, _select_columns, _selects_star
from .schema import (
    _collation_name,
    _column_collations,
    _mysql8_type,
    _quote_ident,
    _schema_from_create,
    current_collation_name,
    show_create_table,
)
from .selects import SelectPrepared
from .transactions import TransactionsMixin, Txn, _lock_file
from .updates import UpdatesMixin
from .writes import WritePathMixin

logging.getLogger("sqlglot").setLevel(logging.ERROR)

VERSION_STRING = "8.0.36-noria_py"

# Engine.lifted: texts longer than this are not lifted; how many texts it remembers
_LIFT_TEXT_MAX = 4096
_LIFTED_TEXTS_LIMIT = 10000
_NOT_LIFTED: tuple = ()


class _NoIndexes:
    """Base storage for a plan that installs nothing (Engine.explain): no index is made."""

    def __init__(self, storage) -> None:
        self._storage = storage

    def ensure_index(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, name: str):
        return getattr(self._storage, name)


def _upquery_note(n: Node) -> str:
    """For EXPLAIN: what fills a partial node's missing keys."""
    if not n.partial:
        return ""
    if n.kind == "join":
        return "; fills by join key from both parents"
    cols = getattr(n, "fill_cols", None)
    if n.kind == "reader":
        cols = list(n.key_cols)
    where = ",".join(f"#{c}" for c in cols or [])
    return f"; fills by ({where}) from node {n.parents[0].id}"


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


def _db_qualified(name: str) -> str:
    """An engine table name as MySQL's notes name it: ``database.table``."""
    db, table = N.split(name)
    return f"{db or N.HOME}.{table}"


def _view_column_list(ast: exp.Create) -> exp.Create:
    """``CREATE VIEW v (a, b) AS SELECT x, y ...`` as ``CREATE VIEW v AS SELECT x AS a, y AS
    b ...`` (a UNION's first SELECT names its columns), as MariaDB keeps such a view; 1353 when
    the counts differ, 1060 for a name given twice."""
    names = [c.name for c in ast.this.expressions]
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise E.ProgrammingError(f"Duplicate column name '{n}'", 1060, "42S21")
        seen.add(n.lower())
    ast = ast.copy()
    query = ast.expression
    first = query
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if not isinstance(first, exp.Select):
        raise E.NotSupportedError("This version doesn't yet support 'a view column list here'")
    if any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in first.expressions
    ):
        raise E.NotSupportedError(
            "This version doesn't yet support 'a view column list over SELECT *'"
        )
    if len(first.expressions) != len(names):
        raise E.ProgrammingError(
            "View's SELECT and view's field list have different column counts", 1353, "HY000"
        )
    first.set(
        "expressions",
        [
            exp.alias_(e.this if isinstance(e, exp.Alias) else e, n, quoted=True)
            for e, n in zip(first.expressions, names)
        ],
    )
    ast.set("this", ast.this.this)
    return ast


def _exists_note(name: str) -> Result:
    """``CREATE ... IF NOT EXISTS`` of a table or view that exists: nothing, and a note."""
    msg = f"Table '{N.bare(name)}' already exists"
    return Result(rowcount=0, conditions=[("Note", E.ER_TABLE_EXISTS_ERROR, msg)])


class Engine(
    TransactionsMixin,
    WritePathMixin,
    InsertsMixin,
    UpdatesMixin,
    LoadsMixin,
    ReadsMixin,
):
    """One database: base storage, the dataflow graph, and the installed queries."""

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
        # a copy of it (ops/join.py): exact while deltas enter one write at a time and every
        # lookup reads base storage as the dataflow has received it (Graph.propagate_all)
        self.graph.lookup_joins = (
            options["lookup_joins"] and self.domains == "inline" and self.upqueries == "direct"
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
            self._applied = self.storage.pin()
        self._restore()
        if self.shared:
            self.storage.others_committed()
            self._applied = self.storage.pin()
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
                        res = self._in_database(self._execute, sql, params)
                    else:
                        res = self._execute(sql, params)
                    if res.lastrowid:  # an AUTO_INCREMENT value was generated
                        t.last_insert_id = res.lastrowid
                    t.row_count = res.rowcount if res.columns is None else -1
                    return res
                return self._execute(sql, params)
            finally:
                self._cur = prev

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
            if sql[:6].lower() != "select" or len(sql) > _LIFT_TEXT_MAX:
                return None
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
        if self._closed or self._failure is not None:
            self._check_open()
        if self.fast <= 0 and self.shared:
            self.poll_commits()
        if self._behind:
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
        if prep.kind == "ddl" and self.shared:
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
        if res.columns is not None and prep.is_select and prep.kind != "diag":
            t.found_rows = len(res.rows) if res.found is None else res.found
        if res.conditions:  # the diagnostics area (noria_py.diagnostics)
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
            res = self._insert(prep, seq)
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
        tx = self._tx_statement(sql) if len(sql) < 200 else None
        if tx is not None:
            what, arg = tx
            return FuncPrepared(lambda p: self._tx_stmt(what, arg), 0, kind="tx")
        from ..diagnostics import prepare_show

        show = prepare_show(sql)  # SHOW WARNINGS / ERRORS / COUNT(*) ...
        if show is not None:
            self._cache[key] = show
            return show
        command = prepare_cache_command(self, sql)  # CREATE / DROP CACHE, SHOW PROXIED ...
        if command is not None:
            return command
        ast, nparams = parse(sql)
        calc = _take_calc_found_rows(ast)
        if self._qualify(ast, db) or calc:
            sql = ast.sql(dialect=DIALECT)  # the text of what it now means (catalog, view keys)
        prep = self._prepare_ast(ast, nparams, sql)
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

    # --- databases ---------------------------------------------------------------------------
    def _qualify(self, ast: exp.Expression, db: str | None) -> bool:
        """Rewrite the statement's table references to engine names (sql/names.py)."""
        if isinstance(ast, exp.Use) or (
            isinstance(ast, (exp.Create, exp.Drop))
            and (ast.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA")
        ):
            return False  # they name a database, not a table
        return N.qualify(ast, db, self._resolve_db)

    def _resolve_db(self, name: str) -> str | None:
        """A database's canonical name (None for home), or 1049."""
        low = name.lower()
        if low == N.HOME:
            return None
        found = self.databases.get(low)
        if found is None:
            raise N.unknown_database(name)
        return found

    def database_names(self) -> list[str]:
        """Every database, as SHOW DATABASES lists them (information_schema included)."""
        return sorted([N.HOME, N.INFORMATION_SCHEMA, *self.databases.values()])

    def use(self, name: str, txn: Txn | None = None) -> str:
        """USE name: the connection's current database (1049 when it does not exist)."""
        with self.lock:
            if name.lower() == N.INFORMATION_SCHEMA:
                raise E.NotSupportedError("USE information_schema is not supported (qualify it)")
            (txn or self._txn_default).database = self._resolve_db(name)
            return self.current_database(txn) or ""

    def current_database(self, txn: Txn | None = None) -> str | None:
        """What DATABASE() returns for the connection (None after its database was dropped)."""
        db = (txn or self._txn_default).database
        return N.HOME if db is None else (db or None)

    def _create_database(self, ast: exp.Create) -> Result:
        name = ast.this.name or ast.this.text("db")  # CREATE SCHEMA names it as a qualifier
        low = name.lower()
        if not name or "." in name or "/" in name or "\\" in name or name != name.rstrip():
            raise E.ProgrammingError(f"Incorrect database name '{name}'", 1102, "42000")
        if low in (N.HOME, N.INFORMATION_SCHEMA) or low in self.databases:
            msg = f"Can't create database '{name}'; database exists"
            if ast.args.get("exists"):
                return Result(rowcount=0, conditions=[("Note", 1007, msg)])
            raise E.ProgrammingError(msg, 1007, "HY000")
        from ..sql import collation as C

        coll = None
        for prop in (ast.args.get("properties") or exp.Properties()).expressions:
            if isinstance(prop, exp.CollateProperty):
                cname = _collation_name(prop)
                try:
                    coll = C.get(cname).name
                except KeyError:
                    raise E.ProgrammingError(
                        f"Unknown collation: '{cname}'", 1273, "HY000"
                    ) from None
                if coll == C.current().name:
                    coll = None
        self._ddl_guard()
        # a database's default collation: its tables' text columns take it (_column_collations)
        text = f"CREATE DATABASE `{name}`" + (f" COLLATE {coll}" if coll else "")
        self.storage.catalog_add("database", name, text)
        self.storage.commit()
        self.databases[low] = name
        if coll:
            self.db_collations[low] = coll
        return Result(rowcount=1)

    def _drop_database(self, ast: exp.Drop) -> Result:
        """DROP DATABASE: its views, then its tables (children before the parents they
        reference), then the database. The home database cannot be dropped."""
        tables = ast.args.get("tables") or ast.expressions or [ast.this]
        name = tables[0].name or tables[0].text("db")
        low = name.lower()
        if low == N.HOME:
            raise E.NotSupportedError(f"DROP DATABASE of the home database '{N.HOME}'")
        if low == N.INFORMATION_SCHEMA:
            raise E.ProgrammingError(
                f"Access denied for user 'root'@'localhost' to database '{name}'", 1044, "42000"
            )
        canon = self.databases.get(low)
        if canon is None:
            msg = f"Can't drop database '{name}'; database doesn't exist"
            if ast.args.get("exists"):
                return Result(rowcount=0, conditions=[("Note", 1008, msg)])
            raise E.ProgrammingError(msg, 1008, "HY000")
        prefix = canon.lower() + "."
        for v in [n for n in list(self.views) if n.startswith(prefix)]:
            if v in self.views:
                self._drop_view(self.view_names.get(v, v))
        mine = [s.name for s in self.storage.schemas.values() if s.name.lower().startswith(prefix)]
        ordered = self._drop_order(mine)
        if ordered:
            drop = exp.Drop(
                kind="TABLE",
                tables=[exp.Table(this=exp.Identifier(this=n, quoted=True)) for n in ordered],
            )
            self._drop_tables(drop)
        self._ddl_guard()
        self.storage.catalog_remove("database", canon)
        self.storage.commit()
        del self.databases[low]
        for t in self._txns:
            if t.database is not None and t.database.lower() == low:
                t.database = ""
        return Result(rowcount=len(ordered))

    def _drop_order(self, names: list[str]) -> list[str]:
        """Tables in an order DROP TABLE accepts: a table after every table referencing it."""
        left = {n.lower(): n for n in names}
        out = []
        while left:
            progress = False
            for low, n in list(left.items()):
                referenced = any(
                    fk.ref_table.lower() == low
                    for other in left
                    if other != low
                    for fk in self.storage.schemas[other].foreign_keys
                )
                if not referenced:
                    out.append(n)
                    del left[low]
                    progress = True
            if not progress:  # a cycle: one statement drops them together
                out.extend(left.values())
                break
        return out

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

    def execute_ast(self, ast: exp.Expression, params=()) -> Result:
        prep = self._prepare_ast(ast, _count_params(ast), ast.sql(DIALECT))
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
                self._rollback(self._writer)
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
            self._rollback(self._writer)
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

    def _prepare_ast(self, ast: exp.Expression, nparams: int, sql: str) -> Prepared:
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
            prep = self._prepare_select(ast, nparams, sql)
            if prep.clears and not any(
                t.name and not (t.name.upper() == "DUAL" and not t.this.quoted and not t.db)
                for t in ast.find_all(exp.Table)
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

    # --- DDL ---------------------------------------------------------------------------------
    def _ddl_guard(self):
        self._drain()
        t = self._cur
        if self._writer is not None and self._writer is not t:
            raise E.LockWait()  # DDL waits for the other connection's transaction
        self._commit(t)  # MySQL: DDL commits the open transaction
        self._catch_up()
        self._forget_statements()
        self._unshared.clear()
        self._fk_parents = None

    @staticmethod
    def _check_collations(ast: exp.Expression, other_ok: bool = False) -> None:
        """Each collation named exists (1273). One other than the engine's is kept by CREATE
        TABLE (``other_ok``: base storage declares it, queries comparing the column are
        answered there, see ``_collated``); elsewhere (ALTER TABLE) it is error 1235."""
        from ..sql import collation as C

        cur = C.current()
        for node in ast.find_all(exp.CollateColumnConstraint, exp.CollateProperty):
            name = node.this.name if hasattr(node.this, "name") else str(node.this)
            try:
                coll = C.get(name)
            except KeyError:
                raise E.ProgrammingError(f"Unknown collation: '{name}'", 1273, "HY000") from None
            if coll.name != cur.name and not other_ok:
                raise E.NotSupportedError(
                    f"This version doesn't yet support 'COLLATE {name}' on a database using "
                    f"{cur.name}: start it with that collation (connect(collation='{name}'), "
                    f"noria-py serve --collation {name}) or leave the clause out",
                    1235,
                    "42000",
                )

    def _create_table_like(self, ast: exp.Create, like: exp.Table) -> Result:
        """CREATE TABLE b LIKE a: a's columns, keys and CHECKs (not its FOREIGN KEYs, nor its
        rows), as MySQL copies them."""
        import dataclasses

        src = self._schema(like.name)
        name = ast.this.this.name if isinstance(ast.this, exp.Schema) else ast.this.name
        copy = dataclasses.replace(
            src,
            name=name,
            columns=[dataclasses.replace(c) for c in src.columns],
            foreign_keys=[],
            created_indexes={},
        )
        text = show_create_table(copy, current_collation_name())
        if ast.args.get("exists"):
            text = text.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)
        new_ast, _ = parse(text)
        return self._create_table(new_ast, text)

    def _create_table_as(self, ast: exp.Create, sql: str) -> Result:
        """CREATE TABLE b AS SELECT ...: a table of the query's columns, holding its rows. A
        plain column of a base table keeps its type, NOT NULL and DEFAULT, as in MySQL. A
        computed column gets a type that holds its values exactly (``_computed_column``):
        MySQL derives the width from the expression (``bigint(12)``, ``decimal(15,2)``,
        ``varchar(11)``), this engine the kind and, for DECIMAL, the scale of the values, with
        the widest precision and text length, so the stored values are MySQL's while
        DESCRIBE may show a wider type."""
        import dataclasses

        query = ast.expression
        if isinstance(ast.this, exp.Schema):
            raise E.NotSupportedError(
                "This version doesn't yet support 'CREATE TABLE ... (columns) SELECT'"
            )
        name = ast.this.name
        if name.lower() in self.storage.schemas or name.lower() in self.views:
            if ast.args.get("exists"):
                return _exists_note(name)
            raise E.ProgrammingError(
                f"Table '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        proxy = self._proxy(query, 0, query.sql(DIALECT))
        rows = proxy.run(self, ()).rows
        cols = _select_columns(query, self.storage.schemas)
        if cols is None or any(c is None for _n, c in cols):
            names = _ctas_names(query, len(proxy.out_kinds))
            cols = (
                [(n, c) for n, (_m, c) in zip(names, cols)] if cols else [(n, None) for n in names]
            )
        outer = any(
            (j.side or "").upper() in ("LEFT", "RIGHT") for j in query.args.get("joins") or []
        )
        if len(cols) != len(proxy.out_kinds):
            raise E.NotSupportedError(
                "This version doesn't yet support 'CREATE TABLE ... AS SELECT' of this query"
            )
        defs = []
        for i, (out_name, c) in enumerate(cols):
            if c is None:
                scale = proxy.out_scales[i] if i < len(proxy.out_scales) else None
                item = query.expressions[i] if i < len(query.expressions) else None
                defs.append(
                    _computed_column(
                        out_name, proxy.out_kinds[i], [r[i] for r in rows], scale, item
                    )
                )
                continue
            d = dataclasses.replace(c, name=out_name)
            if outer:  # an outer join's missing side is NULL
                d.nullable = True
            if d.auto_increment:  # the key's counter stays with the source; 0 is the default
                d.auto_increment = False
                d.has_default, d.default = True, 0
            defs.append(d)
        schema = TableSchema(name, defs)
        text = show_create_table(schema, current_collation_name())
        new_ast, _ = parse(text)
        self._create_table(new_ast, text)
        if rows:
            self._write(
                name,
                lambda: [
                    (r, 1) for r in self.storage.insert_rows(name, [list(r) for r in rows], None)
                ],
            )
        return Result(rowcount=len(rows))

    def _database_of(self, name: str) -> None:
        """A table or view is created in a database that exists (else 1049)."""
        db = N.split(name)[0]
        if db is not None and db.lower() not in self.databases:
            raise N.unknown_database(db)

    def _create_table(self, ast: exp.Create, sql: str, restoring: bool = False) -> Result:
        if not restoring:
            target = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
            self._database_of(target.name)
            props = ast.args.get("properties")
            likes = [
                p for p in (props.expressions if props else []) if isinstance(p, exp.LikeProperty)
            ]
            if isinstance(ast.this, exp.Schema):
                likes += [e for e in ast.this.expressions if isinstance(e, exp.LikeProperty)]
            if likes:
                return self._create_table_like(ast, likes[0].this)
            if isinstance(ast.expression, (exp.Select, exp.SetOperation)):
                return self._create_table_as(ast, sql)
        schema = _schema_from_create(ast)
        db = N.split(schema.name)[0]
        if db is not None and db.lower() in self.db_collations:
            _column_collations(ast, ast.this, schema.columns, self.db_collations[db.lower()])
        low = schema.name.lower()
        if low in self.storage.schemas or low in self.views:
            if ast.args.get("exists"):
                return _exists_note(schema.name)
            raise E.ProgrammingError(
                f"Table '{schema.name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        schema.ddl = sql
        if not restoring:
            self._check_collations(ast, other_ok=True)
            if schema.foreign_keys:
                from ..foreign_keys import validate

                validate(schema, self.storage.schemas, self._cur.fk_checks)
            if schema.checks:
                self._check_constraints(schema, [])  # compiles them: an unsupported one is 1235
        if restoring:
            self.storage.register(schema)
            self.storage.ensure_collation(schema)
            return Result(rowcount=0)
        self._ddl_guard()
        self.storage.begin()
        try:
            self._catch_up_writer()
            self.storage.create_table(schema)
            self.storage.catalog_add("table", schema.name, sql.strip())
        except BaseException:
            self.storage.rollback()
            self.storage.schemas.pop(low, None)
            raise
        self.storage.commit()
        return Result(rowcount=0)

    def _create_index(self, ast: exp.Create, sql: str = "", restoring: bool = False) -> Result:
        """CREATE [UNIQUE] INDEX name ON t (cols): a named key of the table, kept in the
        catalog (restored on reopen), dropped by DROP INDEX; a UNIQUE one is enforced."""
        idx = ast.this
        table = idx.args.get("table")
        if table is None:
            raise E.NotSupportedError("CREATE INDEX without a table")
        schema = self._schema(table.name)
        name = idx.name
        cols = []
        params = idx.args.get("params")
        for c in (params.args.get("columns") if params else []) or []:
            cname = c.this.name if isinstance(c, exp.Ordered) else c.name
            i = schema.index_of(cname)
            if i is None:
                raise E.ProgrammingError(
                    f"Key column '{cname}' doesn't exist in table", 1072, "42000"
                )
            cols.append(i)
        if not cols or not name:
            raise E.parse_error(f"near '{sql.strip()[:40]}'")
        if name.lower() in schema.key_names() or name.lower() == "primary":
            if ast.args.get("exists"):  # MariaDB's CREATE INDEX IF NOT EXISTS
                return Result(
                    rowcount=0, conditions=[("Note", 1061, f"Duplicate key name '{name}'")]
                )
            raise E.ProgrammingError(f"Duplicate key name '{name}'", 1061, "42000")
        unique = bool(ast.args.get("unique"))
        if not restoring:
            self._ddl_guard()
            self.storage.begin()
            try:
                real = self.storage.create_named_index(schema, name, cols, unique)
                self.storage.catalog_add("index", f"{schema.name}.{name}", sql.strip())
            except BaseException:
                self.storage.rollback()
                raise
            self.storage.commit()
        else:
            real = self.storage.create_named_index(schema, name, cols, unique, restoring=True)
        if unique:
            schema.uniques.append(cols)
            schema.unique_names.append(name)
        else:
            schema.indexes.append(cols)
            schema.index_names.append(name)
        schema.created_indexes[name.lower()] = real
        return Result(rowcount=0)

    def _truncate(self, ast: exp.TruncateTable) -> Result:
        """TRUNCATE [TABLE] t: every row goes (through the dataflow, as deletions) and the
        AUTO_INCREMENT counter starts again; like MySQL, it first commits the open
        transaction."""
        schemas = [self._schema(t.name) for t in ast.expressions]
        self._ddl_guard()
        if self._cur.fk_checks:
            for schema in schemas:
                for s in self.storage.schemas.values():
                    for fk in s.foreign_keys:
                        if fk.ref_table.lower() == schema.name.lower() and s is not schema:
                            raise E.ProgrammingError(
                                "Cannot truncate a table referenced in a foreign key "
                                f"constraint {fk.describe(s.name)}",
                                1701,
                                "42000",
                            )
        for schema in schemas:

            def apply(schema=schema):
                rows = self.storage.select_with_rowid(schema.name, None)
                self.storage.delete_rows(schema.name, [rid for rid, _ in rows])
                self.storage.reset_auto_increment(schema.name)
                return [(r, -1) for _, r in rows]

            self._write(schema.name, apply)
        return Result(rowcount=0)

    def _drop_index(self, ast: exp.Drop) -> Result:
        """DROP INDEX name ON t, for keys CREATE INDEX made (keys declared in CREATE TABLE
        need ALTER TABLE)."""
        on = ast.args.get("cluster")
        table = on.this if on is not None else None
        tables = ast.args.get("tables") or ast.expressions
        if not isinstance(table, exp.Table) or not tables:
            raise E.parse_error("near 'DROP INDEX': it needs ON table")
        schema = self._schema(table.name)
        name = tables[0].name
        low = name.lower()
        if low not in schema.key_names():
            msg = f"Can't DROP INDEX `{name}`; check that it exists"
            if ast.args.get("exists"):  # MariaDB's DROP INDEX IF EXISTS
                return Result(rowcount=0, conditions=[("Note", 1091, msg)])
            raise E.ProgrammingError(msg, 1091, "42000")
        real = schema.created_indexes.get(low)
        if real is None:  # a key of the table's definition: the table is rebuilt without it
            drop = exp.Drop(kind="INDEX", tables=[exp.to_table(name)])
            return self._alter_table(exp.Alter(this=table, kind="TABLE", actions=[drop]))
        self._ddl_guard()
        self.storage.begin()
        try:
            self.storage.drop_named_index(real)
            self.storage.catalog_remove("index", f"{schema.name}.{name}")
        except BaseException:
            self.storage.rollback()
            raise
        self.storage.commit()
        for names, keys in (
            (schema.unique_names, schema.uniques),
            (schema.index_names, schema.indexes),
        ):
            for k, n in enumerate(names):
                if n.lower() == low:
                    del names[k]
                    del keys[k]
                    break
        del schema.created_indexes[low]
        return Result(rowcount=0)

    def _show_create_table(self, table: str) -> Result:
        schema = self._schema(table)
        text = show_create_table(schema, current_collation_name(), shown=True)
        return Result(
            ["Table", "Create Table"],
            ((N.bare(schema.name), text),),
            ["VARCHAR", "VARCHAR"],
            [False, False],
            1,
        )

    def _drop_tables(self, ast: exp.Drop) -> Result:
        self._ddl_guard()
        targets = ast.expressions if ast.expressions else ast.args.get("tables") or []
        dropping = {t.name.lower() for t in targets}
        if self._cur.fk_checks:
            for s in self.storage.schemas.values():
                if s.name.lower() in dropping:
                    continue
                for fk in s.foreign_keys:
                    if fk.ref_table.lower() in dropping:
                        raise E.IntegrityError(
                            "Cannot delete or update a parent row: a foreign key constraint fails",
                            1451,
                            "23000",
                        )
        missing = []
        for t in targets:
            low = t.name.lower()
            if low not in self.storage.schemas:
                if ast.args.get("exists"):
                    missing.append(_db_qualified(t.name))
                    continue
                raise E.ProgrammingError(f"Unknown table '{t.name}'", E.ER_BAD_TABLE_ERROR, "42S02")
            self._forget_table(self.storage.schemas[low].name)
            self.storage.begin()
            self.storage.drop_table(t.name)
            self.storage.catalog_remove("table", t.name)
            self.storage.commit()
        if missing:  # one note names every table that was not there
            msg = f"Unknown table '{','.join(missing)}'"
            return Result(rowcount=0, conditions=[("Note", E.ER_BAD_TABLE_ERROR, msg)])
        return Result(rowcount=0)

    def _forget_table(self, name: str) -> None:
        """Every query over table ``name`` (and every proxied one) goes, and its base node:
        the table was dropped or changed shape. Queries are compiled again when next used."""
        base = self.graph.lookup(f"base({name})")
        if base is not None:
            for qname, entry in list(self.queries.items()):
                if entry.compiled and base in entry.compiled.nodes:
                    self._remove_query(qname)
            self.graph.remove(base)
        for qname, entry in list(self.queries.items()):
            if entry.compiled is None:
                self._remove_query(qname)

    def _revalidate_views(self) -> None:
        """After a table changed: compile every view that is not installed (its table changed
        under it, or it read what did not exist) again; one that no longer compiles stays
        defined and reports its error when read, as a MySQL view does."""
        for low, name in list(self.view_names.items()):
            if name in self.queries:
                continue
            sql = self.view_sql[low]
            ast, _ = parse(sql)
            self.views.pop(low, None)
            self.view_sql.pop(low, None)
            self.view_names.pop(low, None)
            self._load_view(ast, sql, name)

    def _load_view(self, ast, sql: str, name: str) -> None:
        try:
            self._create_view(ast, sql, restoring=True)
        except E.Error:
            # what the view reads was dropped: keep it; reading it reports the error
            low = name.lower()
            self.views[low] = ast.expression
            self.view_sql[low] = sql.strip()
            self.view_names[low] = name

    def _alter_table(self, ast: exp.Alter) -> Result:
        """ALTER TABLE, the way MySQL's copying algorithm does it: the rows are converted to
        the new definition (a value that does not fit stops it, nothing changed) and the
        table rebuilt in base storage in one transaction; queries over it are compiled again
        on their next use and views over it are checked again. ALGORITHM and LOCK clauses
        are accepted."""
        from .. import alter as A

        table = ast.this
        if (ast.args.get("kind") or "").upper() != "TABLE":
            raise E.NotSupportedError(f"ALTER {ast.args.get('kind')} is not supported")
        schema = self._schema(table.name)
        if table.name.lower() in self.views:
            raise E.ProgrammingError(f"'{table.name}' is not of type 'BASE TABLE'", 1347, "HY000")
        actions = ast.args.get("actions") or []
        plan = A.plan_alter(
            schema,
            actions,
            schema.name,
            exists=lambda n: n.lower() in self.storage.schemas or n.lower() in self.views,
        )
        self._check_collations(ast)
        if plan.new_fks:
            from ..foreign_keys import validate

            validate(plan.schema, self.storage.schemas, self._cur.fk_checks)
        self._ddl_guard()
        self._rebuild(schema, plan)
        return Result(rowcount=0)

    def _rebuild(self, schema: TableSchema, plan) -> None:
        from .. import alter as A

        new = plan.schema
        saved = self.storage.known_schemas()
        self.storage.begin()
        try:
            self._catch_up_writer()
            rows = [r for _rid, r in self.storage.select_with_rowid(schema.name, None)]
            new_rows = A.carry_rows(plan, schema, rows)
            if any(c.generated is not None for c in new.columns):
                new_rows = [self._fill_generated(new, list(r)) for r in new_rows]
            self.storage.rebuild_table(schema, new, new_rows)
            if new.checks:
                self._check_constraints(new, new_rows)
            if plan.new_fks and self._cur.fk_checks:
                from ..foreign_keys import Enforcer

                only_new = TableSchema(new.name, new.columns, foreign_keys=plan.new_fks)
                Enforcer(self.storage).check_children(only_new, new_rows)
            children = self._follow_parent(schema, plan)
            new.ddl = show_create_table(new, current_collation_name())
            # the table's definition now names every key, those CREATE INDEX made included
            self.storage.catalog_remove_indexes(schema.name)
            self.storage.catalog_replace("table", schema.name, new.name, new.ddl)
            for child, fks in children:  # their references follow the renamed parent
                child.foreign_keys = fks
                child.ddl = show_create_table(child, current_collation_name())
                self.storage.catalog_replace("table", child.name, child.name, child.ddl)
        except BaseException:
            self.storage.rollback()
            self.storage.restore_schemas(saved)
            raise
        self.storage.commit()
        self._forget_table(schema.name)
        self._forget_statements()
        self._revalidate_views()

    def _follow_parent(self, schema: TableSchema, plan) -> list:
        """FOREIGN KEYs that reference a table being altered: a renamed table or column is
        renamed in them (as MySQL does); a referenced column cannot go (1828). Returns the
        other tables' new FOREIGN KEY lists (the altered table's own are changed in place)."""
        import dataclasses

        new = plan.schema
        renamed = {}
        for i, o in enumerate(plan.origin):
            if o is not None:
                renamed[schema.columns[o].name.lower()] = new.columns[i].name
        old_low = schema.name.lower()
        out = []
        for other in [new] + [s for s in self.storage.schemas.values() if s is not new]:
            if other is not new and other.name.lower() == old_low:
                continue  # the old schema itself
            fks, changed = [], False
            for fk in other.foreign_keys:
                if fk.ref_table.lower() != old_low:
                    fks.append(fk)
                    continue
                ref_cols = []
                for c in fk.ref_cols:
                    if c.lower() not in renamed:
                        raise E.OperationalError(
                            f"Cannot drop column '{c}': needed in a foreign key constraint "
                            f"'{fk.name}' of table '{other.name}'",
                            1828,
                            "HY000",
                        )
                    ref_cols.append(renamed[c.lower()])
                fks.append(dataclasses.replace(fk, ref_table=new.name, ref_cols=ref_cols))
                changed = True
            if changed:
                if other is new:
                    new.foreign_keys = fks
                else:
                    out.append((other, fks))
        return out

    def _rename_tables(self, text: str) -> Result:
        """RENAME TABLE a TO b [, c TO d ...]: each pair in turn (so a swap through a third
        name works), every pair checked before any is done."""
        from .. import alter as A

        pairs = []
        for (old_db, old), (new_db, new) in A.parse_rename_table(text):
            if "." in old or "." in new:
                raise N.bad_table_name(new if "." in new else old)
            pairs.append(
                (self._engine_table_name(old_db, old), self._engine_table_name(new_db, new))
            )
        names = {s.name.lower(): s.name for s in self.storage.schemas.values()}
        for old, new in pairs:
            if old.lower() not in names:
                raise E.no_such_table(old)
            if new.lower() in names or new.lower() in self.views:
                raise E.ProgrammingError(
                    f"Table '{new}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
                )
            del names[old.lower()]
            names[new.lower()] = new
        self._ddl_guard()
        for old, new in pairs:
            schema = self._schema(old)
            rename = exp.AlterRename(this=exp.Table(this=exp.Identifier(this=new, quoted=True)))
            self._rebuild(schema, A.plan_alter(schema, [rename], schema.name))
        return Result(rowcount=0)

    def _remove_query(self, name: str) -> None:
        entry = self.queries.pop(name, None)
        if entry is None:
            return
        for k, v in list(self._by_sql.items()):
            if v is entry:
                del self._by_sql[k]
        if entry.compiled is not None:
            self.graph.release(entry.compiled.nodes)
        self._forget_statements()

    def _create_view(self, ast: exp.Create, sql: str, restoring: bool = False) -> Result:
        if isinstance(ast.this, exp.Schema):
            # CREATE VIEW v (a, b) AS ...: the list names the SELECT's columns, as aliases
            ast = _view_column_list(ast)
            sql = ast.sql(DIALECT)
        name = ast.this.name
        low = name.lower()
        query = ast.expression
        if ast.args.get("replace") and low in self.views:
            self._drop_view(name)
        if low in self.views or low in self.storage.schemas:
            if ast.args.get("exists"):  # MariaDB's CREATE VIEW IF NOT EXISTS
                return _exists_note(name)
            raise E.ProgrammingError(
                f"Table '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        if query.find(exp.Placeholder):
            raise E.ProgrammingError(
                "View's SELECT contains a variable or parameter", 1351, "HY000"
            )
        if not restoring:
            self._ddl_guard()
            if _selects_star(query):
                # as MySQL does, ``*`` stands for the columns there are now: the view keeps
                # them through a later ALTER TABLE (and becomes invalid when one goes)
                query = query.copy()
                for sel in list(query.find_all(exp.Select)):
                    self._expand_select_star(sel)
                sql = f"CREATE VIEW {_quote_ident(name)} AS {query.sql(DIALECT)}"
        # validate: the view's query must compile or be answerable on base storage
        self.views[low] = query
        self.view_sql[low] = sql.strip()
        self.view_names[low] = name
        try:
            select_sql = f"SELECT * FROM {_quote_ident(name)}"
            ast2, n = parse(select_sql)
            try:
                prep = self._prepare_select(ast2, n, select_sql, view=True)
            except E.ProgrammingError as e:
                inner = getattr(e, "inner", None)
                if inner is None or restoring:
                    raise
                raise inner from None
            if not restoring:
                try:
                    self._database_of(name)
                except E.Error:
                    self._remove_query(prep.entry.name)
                    raise
            entry = prep.entry
            self.queries.pop(entry.name, None)
            entry.name = name
            self.queries[name] = entry
            if not restoring:
                self._sqlite_view(name, query)
                if _selects_star(query):  # a star this engine could not expand (see above)
                    query, sql = _wrap_star(name, query, self._view_columns(prep))
                    self.views[low] = query
                    self.view_sql[low] = sql
                    self._sqlite_view(name, query)
            entry.sql = sql.strip()
            if not restoring:
                self.storage.begin()
                self.storage.catalog_add("view", name, sql.strip())
                self.storage.commit()
        except BaseException:
            self.views.pop(low, None)
            self.view_sql.pop(low, None)
            self.view_names.pop(low, None)
            raise
        return Result(rowcount=0)

    def _source_columns(self, item) -> tuple[str, list[str]] | None:
        """(qualifier, column names) of one FROM item, when they are known."""
        if isinstance(item, exp.Table) and not item.db:
            low = item.name.lower()
            if low in self.storage.schemas:
                return item.alias_or_name, [c.name for c in self.storage.schemas[low].columns]
            if low in self.views:
                names = _output_names(self.views[low])
                return (item.alias_or_name, names) if names is not None else None
            return None
        if isinstance(item, exp.Subquery) and item.alias:
            names = _output_names(item.this)
            return (item.alias, names) if names is not None else None
        return None

    def _expand_select_star(self, sel: exp.Select) -> None:
        """Write the select list's ``*`` and ``t.*`` out as the columns they stand for now
        (left as they are when a source's columns are not known)."""
        if not any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in sel.expressions
        ):
            return
        frm = sel.args.get("from_")
        if frm is None:
            return
        joins = sel.args.get("joins") or []
        if any(
            j.args.get("using") or "NATURAL" in str(j.args.get("method") or "").upper()
            for j in joins
        ):
            return  # the merged columns of USING and NATURAL: not expanded here
        sources = []
        for item in [frm.this] + [j.this for j in joins]:
            src = self._source_columns(item)
            if src is None:
                return
            sources.append(src)
        out = []
        for e in sel.expressions:
            if isinstance(e, exp.Star):
                srcs = sources
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                srcs = [s for s in sources if s[0].lower() == e.table.lower()]
                if not srcs:
                    return
            else:
                out.append(e)
                continue
            for qual, names in srcs:
                out.extend(exp.column(n, table=qual, quoted=True) for n in names)
        sel.set("expressions", out)

    def _sqlite_view(self, name: str, query) -> None:
        """The view's copy in base storage, which proxied queries over it read."""
        try:
            self.storage.conn.execute(f"DROP VIEW IF EXISTS {q(name)}")
            self.storage.conn.execute(
                f"CREATE VIEW IF NOT EXISTS {q(name)} AS {query.sql(dialect='sqlite')}"
            )
        except sqlite3.Error:
            pass  # only proxied queries over this view need the SQLite copy

    def _view_columns(self, prep) -> list[str]:
        cq = prep.entry.compiled
        if cq is not None:
            return list(cq.names[: cq.visible] if cq.visible else cq.names)
        cur = self.storage.conn.execute(f"SELECT * FROM ({prep.sql}) LIMIT 0")
        return [d[0] for d in cur.description]

    def _drop_view(self, name: str) -> None:
        low = name.lower()
        real = self.view_names.get(low, name)
        self._remove_query(real)
        # every query that read the view (its definition inlined, also through other views)
        # goes: a view created again under this name must not answer with the old definition
        for qname, entry in list(self.queries.items()):
            if entry.compiled is None or low in entry.compiled.views:
                self._remove_query(qname)
        self.views.pop(low, None)
        self.view_sql.pop(low, None)
        self.view_names.pop(low, None)
        try:
            self.storage.conn.execute(f"DROP VIEW IF EXISTS {q(real)}")
        except sqlite3.Error:
            pass
        self.storage.begin()
        self.storage.catalog_remove("view", real)
        self.storage.commit()

    def _drop_views(self, ast: exp.Drop) -> Result:
        self._ddl_guard()
        missing = []
        for t in ast.expressions if ast.expressions else ast.args.get("tables") or []:
            if t.name.lower() not in self.views:
                if ast.args.get("exists"):
                    missing.append(_db_qualified(t.name))
                    continue
                raise E.ProgrammingError(f"Unknown table '{t.name}'", E.ER_BAD_TABLE_ERROR, "42S02")
            self._drop_view(t.name)
        if missing:  # MariaDB's note for views that were not there
            return Result(
                rowcount=0, conditions=[("Note", 4092, f"Unknown VIEW: '{','.join(missing)}'")]
            )
        return Result(rowcount=0)

    def _restore(self) -> None:
        from ..cache_commands import restore as restore_caches

        entries = self.storage.catalog_entries()
        for kind, name, sql in entries:
            if kind == "database":  # the catalog holds engine names: nothing to resolve
                self.databases[name.lower()] = name
                m = re.search(r"\bCOLLATE\s+(\w+)", sql or "")
                if m:
                    self.db_collations[name.lower()] = m.group(1)
                continue
            if kind in ("cache", "nocache"):
                continue  # once the tables and views are there (restore_caches)
            ast, _ = parse(sql)
            if kind == "table":
                self._create_table(ast, sql, restoring=True)
            elif kind == "index":
                self._create_index(ast, sql, restoring=True)
            elif kind == "view":
                self._load_view(ast, sql, name)
        restore_caches(self, entries)

    # --- introspection -----------------------------------------------------------------------
    def _show_info(self, select: str, like=None, like_col: str = "", where=None) -> Result:
        """A SHOW statement answered by a SELECT over information_schema, its LIKE or WHERE
        applied to the SHOW's own column names."""
        from ..infoschema import InfoSchemaPrepared

        cond = None
        if where is not None:
            cond = where.sql(DIALECT)
        elif like is not None:
            cond = f"{_quote_ident(like_col)} LIKE {like.sql(DIALECT)}"
        sql = select if cond is None else f"SELECT * FROM ({select}) AS `__show` WHERE {cond}"
        ast, n = parse(sql)
        return InfoSchemaPrepared(ast, n, sql).run(self, ())

    def _database(self) -> str:
        """The current database's name (1046 when there is none)."""
        db = self.current_database(self._cur)
        if db is None:
            raise N.no_database()
        return db

    def _listed_db(self, name: str | None) -> str:
        """The database a SHOW ... FROM db lists (the current one without FROM)."""
        if name is None:
            return self._database()
        canon = self._resolve_db(name)
        return N.HOME if canon is None else canon

    @staticmethod
    def _where_table(table: str) -> str:
        """information_schema's condition for one engine table name."""
        db, bare = N.split(table)
        return f"TABLE_SCHEMA = '{_sql_str(db or N.HOME)}' AND TABLE_NAME = '{_sql_str(bare)}'"

    def _engine_table_name(self, db: str | None, table: str) -> str:
        """The engine name of ``table`` in database ``db`` (the current one when None)."""
        if db is not None:
            return N.engine_name(self._resolve_db(db), table)
        cur = self._cur.database
        if cur == "":
            raise N.no_database()
        return N.engine_name(cur, table)

    def _use(self, name: str) -> Result:
        self.use(name, self._cur)
        return Result(rowcount=0)

    def _show_databases(self, like=None) -> Result:
        select = (
            "SELECT SCHEMA_NAME AS `Database` FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME"
        )
        return self._show_info(select, like, "Database")

    def _show_create_database(self, name: str) -> Result:
        canon = self._resolve_db(name) if name.lower() != N.INFORMATION_SCHEMA else name
        shown = N.HOME if canon is None else canon
        text = (
            f"CREATE DATABASE {_quote_ident(shown)} /*!40100 DEFAULT CHARACTER SET utf8mb4 "
            f"COLLATE {current_collation_name()} */"
        )
        return Result(["Database", "Create Database"], ((shown, text),), ["VARCHAR"] * 2,
                      [False, False], 1)  # fmt: skip

    def _show_tables(self, full: bool = False, like=None, where=None, db=None) -> Result:
        shown = self._listed_db(db)
        col = f"Tables_in_{shown}"
        extra = ", TABLE_TYPE AS `Table_type`" if full else ""
        select = (
            f"SELECT TABLE_NAME AS {_quote_ident(col)}{extra} FROM information_schema.TABLES "
            f"WHERE TABLE_SCHEMA = '{_sql_str(shown)}' ORDER BY TABLE_NAME"
        )
        return self._show_info(select, like, col, where)

    def _show_columns(self, table: str, full: bool, like=None, where=None) -> Result:
        self._schema_or_view(table)
        coll = ", COLLATION_NAME AS `Collation`" if full else ""
        more = ", PRIVILEGES AS `Privileges`, COLUMN_COMMENT AS `Comment`" if full else ""
        select = (
            f"SELECT COLUMN_NAME AS `Field`, COLUMN_TYPE AS `Type`{coll}, IS_NULLABLE AS `Null`, "
            f"COLUMN_KEY AS `Key`, COLUMN_DEFAULT AS `Default`, EXTRA AS `Extra`{more} "
            f"FROM information_schema.COLUMNS WHERE {self._where_table(table)} "
            "ORDER BY ORDINAL_POSITION"
        )
        return self._show_info(select, like, "Field", where)

    def _show_index(self, table: str, where=None) -> Result:
        self._schema(table)
        select = (
            "SELECT TABLE_NAME AS `Table`, NON_UNIQUE AS `Non_unique`, INDEX_NAME AS `Key_name`, "
            "SEQ_IN_INDEX AS `Seq_in_index`, COLUMN_NAME AS `Column_name`, COLLATION AS "
            "`Collation`, CARDINALITY AS `Cardinality`, SUB_PART AS `Sub_part`, PACKED AS "
            "`Packed`, NULLABLE AS `Null`, INDEX_TYPE AS `Index_type`, COMMENT AS `Comment`, "
            "INDEX_COMMENT AS `Index_comment`, IS_VISIBLE AS `Visible`, EXPRESSION AS "
            "`Expression` FROM information_schema.STATISTICS "
            f"WHERE {self._where_table(table)}"
        )
        return self._show_info(select, where=where)

    def _show_table_status(self, like=None, where=None, db=None) -> Result:
        shown = self._listed_db(db)
        select = (
            "SELECT TABLE_NAME AS `Name`, ENGINE AS `Engine`, VERSION AS `Version`, ROW_FORMAT "
            "AS `Row_format`, TABLE_ROWS AS `Rows`, AVG_ROW_LENGTH AS `Avg_row_length`, "
            "DATA_LENGTH AS `Data_length`, MAX_DATA_LENGTH AS `Max_data_length`, INDEX_LENGTH "
            "AS `Index_length`, DATA_FREE AS `Data_free`, AUTO_INCREMENT AS `Auto_increment`, "
            "CREATE_TIME AS `Create_time`, UPDATE_TIME AS `Update_time`, CHECK_TIME AS "
            "`Check_time`, TABLE_COLLATION AS `Collation`, CHECKSUM AS `Checksum`, "
            "CREATE_OPTIONS AS `Create_options`, TABLE_COMMENT AS `Comment` "
            f"FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{_sql_str(shown)}' "
            "ORDER BY TABLE_NAME"
        )
        return self._show_info(select, like, "Name", where)

    def _show_create_view(self, name: str) -> Result:
        low = name.lower()
        if low not in self.views:
            if low in self.storage.schemas:
                raise E.ProgrammingError(
                    f"'{N.split(name)[0] or N.HOME}.{N.bare(name)}' is not of type 'VIEW'",
                    1347,
                    "HY000",
                )
            raise E.no_such_table(name)
        real = N.bare(self.view_names.get(low, name))
        text = (
            "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW "
            f"{_quote_ident(real)} AS {N.shown_sql(self.views[low])}"
        )
        coll = current_collation_name()
        return Result(
            ["View", "Create View", "character_set_client", "collation_connection"],
            ((real, text, "utf8mb4", coll),),
            ["VARCHAR"] * 4,
            [False] * 4,
            1,
        )

    def _schema_or_view(self, name: str) -> None:
        if name.lower() not in self.views:
            self._schema(name)

    def _describe(self, table: str) -> Result:
        schema = self._schema(table)
        rows = []
        for i, c in enumerate(schema.columns):
            key = ""
            if i in schema.primary_key:
                key = "PRI"
            elif any(u == [i] for u in schema.uniques):
                key = "UNI"
            elif any(ix and ix[0] == i for ix in schema.indexes):
                key = "MUL"
            default = None
            if c.has_default:
                default = (
                    "CURRENT_TIMESTAMP"
                    if callable(c.default)
                    else (None if c.default is None else V.format_value(c.default))
                )
            rows.append(
                (
                    c.name,
                    _mysql8_type(c.ctype),
                    "YES" if c.nullable else "NO",
                    key,
                    default,
                    _extra(c),
                )
            )
        names = ["Field", "Type", "Null", "Key", "Default", "Extra"]
        return Result(
            names, rows, ["VARCHAR"] * 6, [False, False, False, False, True, False], len(rows)
        )

    _EXPLAIN_NAMES = [
        "node",
        "operator",
        "description",
        "parents",
        "materialization",
        "key",
        "domain",
        "reused",
    ]
    _EXPLAIN_TYPES = ["BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"]
    _EXPLAIN_TYPES += ["BIGINT", "VARCHAR"]

    @_locked
    def explain(self, sql: str, params=(), txn: Txn | None = None) -> Result:
        """``EXPLAIN SELECT ...`` without installing anything: the plan of the query as the
        engine would run it (its literal-lifted form when ``lift_literals`` is on, as the
        server runs a text without parameters), from the installed query when there is one,
        else compiled, planned and taken down again. Any other text runs as ``execute`` does.
        The server answers EXPLAIN through this."""
        prev = self._cur
        self._cur = txn if txn is not None else self._txn_default
        try:
            self._ready()
            ast, nparams = parse(sql)
            target = ast.this if isinstance(ast, exp.Describe) else None
            if target is None or isinstance(target, exp.Table):
                return self._run(sql, self.prepare(sql), params)
            self._qualify(ast, self._cur.database)
            return self._explain(ast.this, nparams, install=False)
        finally:
            self._cur = prev

    def _explain(self, target: exp.Expression, nparams: int, install: bool = True) -> Result:
        """EXPLAIN's rows: one per dataflow node of the query, with columns by name, or one
        ``proxied`` row naming why base storage answers it. A text without parameters is
        explained as its literal-lifted form (``lifted``), the statement that answers it.
        ``install=False`` leaves the engine as it was (see ``explain``)."""
        sql = target.sql(DIALECT)
        if nparams == 0 and self.lift_literals:
            lifted = self.lifted(sql)
            if lifted is not None:
                try:
                    target, nparams = parse(lifted[0])
                    sql = lifted[0]
                except E.Error:
                    pass  # explained as written
        if install:
            prep = self._prepare_select(target, nparams, sql)
            if not isinstance(prep, SelectPrepared):
                return self._explain_proxied(getattr(getattr(prep, "entry", None), "reason", None))
            entry = prep.entry
            return self._explain_nodes(entry.compiled.nodes, entry.created, entry.compiled)
        return self._explain_dry(target, nparams)

    def _explain_proxied(self, reason: str | None) -> Result:
        why = "executed on base storage (SQLite)"
        if reason:
            why += f": the dataflow does not maintain {reason}"
        rows = [(None, "proxied", why, "", "none", "", 0, "")]
        return Result(self._EXPLAIN_NAMES, rows, self._EXPLAIN_TYPES, [True] * 8, 1)

    def _explain_nodes(self, nodes, created, cq: CompiledQuery | None = None) -> Result:
        """One row per node; then, for a range read with an aggregate or DISTINCT over the
        range, one ``post-lookup`` row per operation each read applies to its reader's rows
        (``dataflow/post_lookup.py``; no id: they are not in the graph)."""
        from ..dataflow import explain as X

        qualify = len({n.table for n in nodes if n.kind == "base"}) > 1
        rows = []
        for n in sorted(nodes, key=lambda n: n.id):
            rows.append(
                (
                    n.id,
                    n.kind,
                    X.describe(n, n.describe() + _upquery_note(n), qualify),
                    ",".join(str(p.id) for p in n.parents),
                    n.materialization,
                    X.key_labels(n, n.key_columns(), qualify),
                    n.domain,
                    "no" if n.id in created else "yes",
                )
            )
        post = cq.post if cq is not None else None
        if post is not None:
            reader = cq.reader
            for n, text in post.describe():
                rows.append(
                    (
                        None,
                        "post-lookup",
                        (X.describe(n, text, qualify) if n is not None else text) + " (per read)",
                        str(reader.id),
                        "none",
                        "",
                        reader.domain,
                        "no",
                    )
                )
        nullable = [post is not None] + [False] * 7  # post-lookup rows have no id
        return Result(self._EXPLAIN_NAMES, rows, self._EXPLAIN_TYPES, nullable, len(rows))

    def _explain_dry(self, target: exp.Expression, nparams: int) -> Result:
        """EXPLAIN of a query that installs nothing (``explain``)."""
        entry = self._by_sql.get(_normalize(target))
        if entry is not None:
            if entry.compiled is not None:
                return self._explain_nodes(entry.compiled.nodes, entry.created, entry.compiled)
            return self._explain_proxied(entry.reason)
        if not isinstance(target, exp.Select | exp.Union):
            return self._explain_proxied(None)
        if isinstance(target, exp.Select) and target.args.get("from_") is None:
            return self._explain_proxied("WHERE or GROUP BY without FROM")
        _refuse_member_order(target, self.storage.schemas)
        if not self.dataflow:
            return self._explain_proxied("the dataflow is off (dataflow=False)")
        compiler = Compiler(self.graph, self.storage, self.views)
        try:
            cq = compiler.compile_query(target, nparams)
        except Unsupported as e:
            self._discard(compiler)
            return self._explain_proxied(str(e))
        except BaseException:
            self._discard(compiler)
            raise
        try:
            from ..dataflow.plan_upqueries import plan

            new_ids = {id(n) for n in cq.new_nodes}
            # planned as _install would, with base storage's index obligations left out
            for n in plan(cq.reader, cq.new_nodes, self.partial, _NoIndexes(self.storage)):
                if id(n) in new_ids:
                    n.partial = False
            return self._explain_nodes(cq.nodes, {n.id for n in cq.new_nodes}, cq)
        finally:
            self._discard(compiler)

    def _show_caches(self) -> Result:
        from ..cache_commands import show_caches

        return show_caches(self)

    def explain_dot(self) -> str:
        return self.graph.to_dot()


def _estimate_bytes(reader) -> int:
    """Approximate memory held by a reader's state: sampled row sizes times row count."""
    total = 0
    sampled = 0
    sample_bytes = 0
    nrows = 0
    for k, rows in reader.state.items():
        n = len(rows)
        nrows += n
        total += sys.getsizeof(k) + 64
        if sampled < 200:
            for r in list(rows)[:4]:
                sample_bytes += sys.getsizeof(r) + sum(sys.getsizeof(v) for v in r)
                sampled += 1
    if sampled:
        total += int(sample_bytes / sampled * nrows)
    return total


def _output_names(query: exp.Expression) -> list[str] | None:
    """The column names a query's select list gives, when they are plain (no ``*``)."""
    if isinstance(query, exp.Subquery):
        return _output_names(query.this)
    if isinstance(query, exp.SetOperation):
        return _output_names(query.this)
    if not isinstance(query, exp.Select) or _selects_star(query):
        return None
    return [item_name(e) for e in query.expressions]


def _wrap_star(name: str, query: exp.Expression, columns: list[str]):
    """The view's query with its column list fixed: (query, CREATE VIEW text)."""
    seen: set[str] = set()
    for c in columns:
        if c.lower() in seen:
            raise E.ProgrammingError(f"Duplicate column name '{c}'", 1060, "42S21")
        seen.add(c.lower())
    outer = ", ".join(f"`__v`.{_quote_ident(c)} AS {_quote_ident(c)}" for c in columns)
    text = f"SELECT {outer} FROM ({query.sql(DIALECT)}) AS `__v`"
    sql = f"CREATE VIEW {_quote_ident(name)} AS {text}"
    ast, _ = parse(sql)
    return ast.expression, sql


_ALTER_HEAD = re.compile(
    r"\A\s*alter\s+table\s+(?:(?P<db>`(?:[^`]|``)+`|[\w$]+)\s*\.\s*)?"
    r"(?P<t>`(?:[^`]|``)+`|[\w$]+)\s+(?P<rest>.*?)\s*;?\s*\Z",
    re.I | re.S,
)
_ADD_CHECK = re.compile(
    r"\A\s*add\s+(?:constraint\s+(?P<n>`(?:[^`]|``)+`|[\w$]+)\s+)?check\s*(?P<e>\(.*\))\s*\Z",
    re.I | re.S,
)


def _split_top(text: str) -> list[str]:
    """Split at commas outside parentheses and quotes."""
    parts, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _alter_add_check(sql: str):
    """An ALTER TABLE holding ``ADD [CONSTRAINT name] CHECK (expr)`` (which the parser does
    not read), as the ``exp.Alter`` the other ALTER actions come in; None when some part is
    not understood."""
    import sqlglot

    head = _ALTER_HEAD.match(sql)
    if head is None:
        return None

    def ident(text):
        return text[1:-1].replace("``", "`") if text.startswith("`") else text

    table = ident(head.group("t"))
    actions, options = [], []
    for part in _split_top(head.group("rest")):
        m = _ADD_CHECK.match(part)
        if m is not None:
            expr, _n = parse(f"SELECT {m.group('e')}")
            check = exp.CheckColumnConstraint(this=expr.expressions[0].unnest())
            item = (
                exp.Constraint(this=exp.to_identifier(ident(m.group("n"))), expressions=[check])
                if m.group("n")
                else check
            )
            actions.append(exp.AddConstraint(expressions=[item]))
            continue
        try:
            one = sqlglot.parse_one(f"ALTER TABLE `_` {part}", read="mysql")
        except Exception:  # noqa: BLE001 - sqlglot raises assorted errors on odd input
            return None
        if not isinstance(one, exp.Alter):
            return None
        actions.extend(one.args.get("actions") or [])
        options.extend(one.args.get("options") or [])
    target = exp.Table(this=exp.Identifier(this=table, quoted=True))
    if head.group("db"):
        target.set("db", exp.Identifier(this=ident(head.group("db")), quoted=True))
    return exp.Alter(this=target, kind="TABLE", actions=actions, options=options)


def _ctas_names(query, n: int) -> list[str]:
    """A SELECT's output column names, as MySQL names them (the alias, else the text)."""
    names = [
        item_name(e)
        if not (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        else e.sql(DIALECT)
        for e in (query.expressions if isinstance(query, exp.Select) else [])
    ]
    if len(names) != n or any(not x for x in names):
        raise E.NotSupportedError(
            "This version doesn't yet support 'CREATE TABLE ... AS SELECT' of this select list"
        )
    if len({x.lower() for x in names}) < len(names):
        dup = next(x for x in names if sum(y.lower() == x.lower() for y in names) > 1)
        raise E.ProgrammingError(f"Duplicate column name '{dup}'", 1060, "42S21")
    return names


def _computed_column(name: str, kind: str, values: list, scale, item):
    """The column CREATE TABLE ... AS SELECT makes for a computed expression: a type that
    holds every value of its kind exactly (BIGINT, DECIMAL(65, MySQL's scale for the
    expression), DOUBLE, LONGTEXT, DATE, DATETIME, TIME); NOT NULL for what MySQL knows is
    never NULL (a constant, COUNT)."""
    present = [v for v in values if v is not None]
    if kind == V.INT:
        text = "BIGINT"
    elif kind == V.DECIMAL:
        if scale is None:  # not typed by the compiler: the values' own
            scale = max((max(0, -v.as_tuple().exponent) for v in present), default=0)
        if scale > 30:
            raise E.NotSupportedError(
                f"This version doesn't yet support 'a computed DECIMAL column of scale {scale}'"
            )
        text = f"DECIMAL(65,{scale})"
    elif kind == V.FLOAT:
        # MAX(f) of a FLOAT column f is a FLOAT (holding its values exactly); others DOUBLE
        single = kind.__class__ is V.FloatKind and kind.single and kind.dec is None
        text = "FLOAT" if single else "DOUBLE"
    elif kind == V.STR:
        text = "LONGTEXT"
    elif kind in (V.DATE, V.DATETIME, V.TIME):
        text = {V.DATE: "DATE", V.DATETIME: "DATETIME(6)", V.TIME: "TIME(6)"}[kind]
    else:
        raise E.NotSupportedError(
            f"This version doesn't yet support 'CREATE TABLE ... AS SELECT' of column '{name}' "
            "(NULL or of no type)"
        )
    ctype = V.column_type_from_sqlglot(exp.DataType.build(text, dialect="mysql"))
    inner = item.this if isinstance(item, exp.Alias) else item
    never_null = isinstance(inner, exp.Count) or (
        isinstance(inner, exp.Literal) and not isinstance(inner, exp.Null)
    )
    return ColumnDef(name, ctype, nullable=not never_null)


def _extra(c) -> str:
    """DESCRIBE's Extra column."""
    if c.generated is not None:
        return "STORED GENERATED" if c.stored else "VIRTUAL GENERATED"
    if c.auto_increment:
        return "auto_increment"
    if c.on_update:
        return "on update current_timestamp"
    return ""


def _sql_str(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "''")

"""Transactions: ``Txn``, BEGIN/COMMIT/ROLLBACK and savepoints, the lock-free-read rule, and
several processes on one file (the change log each tails, catching up with other processes'
commits).
"""

from __future__ import annotations

import re
import time

from .. import errors as E
from ..result import Result
from ..sql import names as N
from ..sql.parse import LEADING
from .base import _locked


def _lock_file(path: str, exclusive: bool):
    """Hold ``path``'s companion lock file: shared by engines that follow each other's commits
    through the change log, exclusive for one that does not (``shared=False``), whose cached
    views would otherwise go stale when another connection or process writes the file. A
    conflict is refused at open, never a stale view."""
    import fcntl

    f = open(f"{path}-noria.lock", "a+")  # noqa: SIM115 - held open until close()
    try:
        fcntl.flock(f, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError:
        f.close()
        how = (
            "it is open elsewhere, and this connection (shared=False) does not follow other "
            "connections' writes"
            if exclusive
            else "a connection that does not follow other connections' writes (shared=False) "
            "has it open"
        )
        raise E.OperationalError(
            f"database file {path} is in use: {how}; close the other connection, or open "
            "every connection with shared=True (the default), which keeps each one's views "
            "current through the change log",
            1105,
            "HY000",
        ) from None
    return f


# ---------------------------------------------------------------------------------------------


POLL_EVERY = 64  # lock-free reads between two looks for other processes' commits


class Txn:
    """One connection's transaction state: open or not, read-only, autocommit, savepoints.

    A transaction takes base storage's single write transaction at its first write (so a
    read-only transaction, or one that has not written yet, blocks nobody); until COMMIT or
    ROLLBACK it is the engine's *writer*, and another connection's write waits for it
    (``errors.LockWait``). Each savepoint is ``[name, storage savepoint or None (set before
    the first write), number of pending deltas when set]``."""

    __slots__ = (
        "active", "read_only", "autocommit", "savepoints", "fk_checks", "database", "diag",
        "last_insert_id", "row_count", "found_rows", "locked", "keep_zero", "strict",
        "div_zero", "notes", "__weakref__",
    )  # fmt: skip

    def __init__(self) -> None:
        self.database: str | None = None  # USE: None is the home database, "" none at all
        self.active = False
        self.read_only = False
        self.autocommit = True
        self.savepoints: list = []
        self.fk_checks = True  # SET FOREIGN_KEY_CHECKS
        # the connection's diagnostics area: (level, code, message) of the conditions its
        # last statement left (noria_py.diagnostics)
        self.diag: list | tuple = ()
        # what LAST_INSERT_ID() and ROW_COUNT() read on an embedded connection (a server
        # session keeps its own)
        self.last_insert_id = 0
        self.row_count = -1
        # what FOUND_ROWS() reads: the rows the last SELECT returned, or found before its
        # LIMIT with SQL_CALC_FOUND_ROWS (every session's, embedded or over the wire)
        self.found_rows = 0
        # LOCK TABLES: {table: "read" | "write"} while the connection holds table locks
        self.locked: dict | None = None
        # sql_mode NO_AUTO_VALUE_ON_ZERO: a 0 written to an AUTO_INCREMENT column is stored
        self.keep_zero = False
        # sql_mode without STRICT_TRANS_TABLES: MySQL stores an adjusted value with a warning
        # where strict mode refuses it; the engine does not, and says so (Engine._run)
        self.strict = True
        self.div_zero = True  # ERROR_FOR_DIVISION_BY_ZERO (with strict: x / 0 in a write is 1365)
        # sql_notes: a statement's notes are recorded (off: only its warnings and errors)
        self.notes = True


_TX_WORDS = re.compile(
    rf"\A{LEADING}(?:"
    r"(?P<savepoint>savepoint)\s+(?P<sp>`[^`]+`|\w+)"
    r"|(?P<release>release)\s+savepoint\s+(?P<rsp>`[^`]+`|\w+)"
    r"|(?P<rollback_to>rollback)(?:\s+work)?\s+to\s+(?:savepoint\s+)?(?P<tsp>`[^`]+`|\w+)"
    r"|(?P<start>start)\s+transaction(?P<modes>(?:\s*,?\s*(?:read\s+only|read\s+write"
    r"|with\s+consistent\s+snapshot))*)"
    r"|(?P<autocommit>set)\s+(?:(?:session\s+|local\s+)|@@(?:session\.|local\.)?)?"
    r"(?P<var>autocommit|foreign_key_checks)\s*(?:=|:=)\s*(?P<ac>0|1|on|off|true|false)"
    r"|(?P<unlock>unlock)\s+tables?"
    r"|(?P<lock>lock)\s+tables?(?:\s+(?P<list>.*?))?"
    r")\s*;?\s*\Z",
    re.I | re.S,
)
_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
# one table of LOCK TABLES: name [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY] WRITE [CONCURRENT]}
_LOCK_ITEM = re.compile(
    rf"\s*(?:(?P<db>{_IDENT})\s*\.\s*)?(?P<table>{_IDENT})(?:\s+(?:as\s+)?(?!(?:read|write|low_priority)\b)"
    rf"{_IDENT})?\s+(?:(?P<read>read)(?:\s+local)?|(?:low_priority\s+)?write(?:\s+concurrent)?)\s*\Z",
    re.I,
)
# the items of LOCK TABLES' list, each with its comma (backquoted names may hold commas)
_IDENT_LIST = re.compile(r"(?:`(?:[^`]|``)*`|[^`,])*,")


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


class TransactionsMixin:
    """Transactions and the lock-free-read rule: a part of ``Engine`` (engine/core.py).

    State it owns (set up in ``Engine.__init__``): the transactions (``_txns``, the running one's
    ``_tx``/``_tx_deltas``/``_tx_tables``, ``_sp_seq``, ``on_release``), the lock-free-read
    switches (``fast``, ``_writer``, ``_failure``, ``_behind``), and for a shared file the change
    log position (``_applied``, ``_pin_stale``, ``_dv_conn``/``_dv_last``; the thread
    ``_tailer`` runs ``_tail``).
    Calls into other parts: the write path (``_push``, ``_pin_own``, ``_catch_up_writer``,
    ``_forget_tx_fills``), the catalog (``_restore``, ``_remove_query``) and
    ``_forget_statements`` (core) when another process's DDL arrives.
    """

    # ``fast`` > 0 lets the lock-free read paths (dbapi.Cursor.execute, the server's lookups)
    # answer a filled key without the engine: no transaction is writing (its own reads must see
    # its writes), no internal failure, no other process's commit waiting to be applied. Each
    # such read counts it down; at 0 the read takes the engine's path, which (a shared file)
    # looks for other processes' commits and sets it again (see _refresh_fast). The callers
    # ask lock_free_read, the one place that applies this rule.
    fast = 0
    _writer_: Txn | None = None
    _failure_: BaseException | None = None
    _behind_ = False

    @property
    def _writer(self) -> Txn | None:
        return self._writer_

    @_writer.setter
    def _writer(self, t: Txn | None) -> None:
        self._writer_ = t
        self._refresh_fast()

    @property
    def _failure(self) -> BaseException | None:
        return self._failure_

    @_failure.setter
    def _failure(self, e: BaseException | None) -> None:
        self._failure_ = e
        self._refresh_fast()

    @property
    def _behind(self) -> bool:
        return self._behind_

    @_behind.setter
    def _behind(self, b: bool) -> None:
        self._behind_ = b
        self._refresh_fast()

    def _refresh_fast(self) -> None:
        ok = self._writer_ is None and self._failure_ is None and not self._behind_
        self.fast = (POLL_EVERY if getattr(self, "shared", False) else 1 << 62) if ok else 0

    @property
    def writes_queued(self) -> bool:
        """Are acknowledged writes still waiting to enter the dataflow (a dataflow thread)?
        Reads that must see them take the locked path, which applies them first."""
        return bool(self._pending)

    def lock_free_read(self, txn: Txn, queued_ok: bool = False) -> bool:
        """The one rule for the lock-free read paths (dbapi.Cursor.execute, the server's text
        and binary lookups): may ``txn`` read a statement the caller found to be this engine's
        cached plain reader lookup (a ``simple`` SelectPrepared) straight from its reader,
        without the engine lock? Yes when ``fast`` allows (no transaction writing, no internal
        failure, no other process's commit to apply), ``txn`` reads the home database (the
        statement cache is keyed by text) and no acknowledged write waits for a dataflow thread
        (unless ``queued_ok``: the embedded cursor without read_your_writes reads the views as
        they are). A yes counts the read against ``fast``: with a shared file, once it runs out
        the next read takes the engine's path, which looks for other processes' commits.
        Needs no lock."""
        if self.fast > 0 and txn.database is None and (queued_ok or not self._pending):
            self.fast -= 1
            return True
        return False

    def new_txn(self) -> Txn:
        """A transaction state for one more connection sharing this engine (the server's
        sessions); pass it as ``txn`` to ``execute``. With a database file (or
        ``private_storage``) other connections read the committed state while one writes; an
        in-memory engine makes them wait (``errors.LockWait``) for a read that is not a plain
        lookup of the committed views."""
        t = Txn()
        self._txns.add(t)
        return t

    def begin(self, txn: Txn, read_only: bool = False) -> None:
        with self.lock:
            txn.locked = None  # MySQL: a new transaction releases the table locks
            self._begin(txn, read_only)

    def commit(self, txn: Txn) -> None:
        with self.lock:
            if txn.active or self._writer is txn:
                self._commit(txn)
            if txn.locked is not None:
                self._lock_tables(txn)  # the locks outlive the commit

    def rollback(self, txn: Txn) -> None:
        with self.lock:
            if txn.locked is not None:
                self._unlocked_rollback(txn)
            elif txn.active or self._writer is txn:
                self._rollback(txn)

    def end_session(self, txn: Txn) -> None:
        """The connection is gone: its table locks are released (what it wrote under them
        with autocommit on is kept, as MySQL committed each statement), its open transaction
        rolls back."""
        with self.lock:
            if txn.locked is not None:
                txn.locked = None
                if txn.autocommit:
                    self._commit(txn)
            if txn.active or self._writer is txn:
                self._rollback(txn)

    # --- LOCK TABLES ---------------------------------------------------------------------------
    # A connection holding table locks holds the engine's single write transaction, taken at
    # LOCK TABLES: no other connection writes until UNLOCK TABLES, and other connections read
    # the state from before LOCK TABLES until then (as if their reads came first; MySQL makes
    # them wait). What the connection writes meanwhile enters the views at UNLOCK TABLES (or
    # at COMMIT). With autocommit on, ROLLBACK undoes nothing (MySQL committed each statement)
    # and a connection that goes away keeps its writes. READ and WRITE locks are both taken as
    # the write transaction, so two connections' READ locks wait for each other.
    def _lock_tables(self, t: Txn) -> None:
        """(Re)take the write transaction for ``t``'s table locks."""
        if not t.active:
            self._begin(t)
        self._write_gate(t)  # errors.LockWait while another connection writes

    def _relock(self, t: Txn) -> None:
        """After a statement that committed ``t``'s transaction (DDL) under table locks: take
        it again, or, while another connection writes, let ``t``'s next write wait for it."""
        if t.active and self._writer is not None:
            return
        try:
            self._lock_tables(t)
        except E.LockWait:
            pass

    def _unlocked_rollback(self, t: Txn) -> None:
        if t.autocommit:
            self._commit(t)  # every statement was committed: nothing to undo
        else:
            self._rollback(t)
        self._lock_tables(t)

    def _lock_statement(self, t: Txn, items: list[tuple[str, str]]) -> None:
        names = {}
        for (db, table), mode in items:
            if db is None:
                if t.database == "":
                    raise N.no_database()
                owner = t.database
                label = table
            else:
                owner = self._resolve_db(db)
                label = f"{db}.{table}"
            name = N.engine_name(owner, table).lower()
            if name not in self.storage.schemas and name not in self.views:
                raise E.no_such_table(
                    label if db is not None else f"{N.split(name)[0] or N.HOME}.{table}"
                )
            names[name] = mode
        t.locked = None
        if t.active or self._writer is t:
            self._commit(t)  # MySQL: LOCK TABLES commits the open transaction
        self._lock_tables(t)
        t.locked = names

    def _unlock_statement(self, t: Txn) -> None:
        if t.locked is None:
            return
        t.locked = None
        if t.active or self._writer is t:
            self._commit(t)  # MySQL: UNLOCK TABLES commits the open transaction

    # --- transactions ------------------------------------------------------------------------
    # A transaction reads its own writes: a SELECT over a table it wrote is answered by base
    # storage inside the transaction (``SelectPrepared.run``), while the dataflow, and so every
    # other connection's cached read, holds the last committed state. The writes' deltas wait
    # in ``_tx_deltas`` and enter the dataflow at COMMIT, in one batch; ROLLBACK drops them.
    @_locked
    def _begin(self, t: Txn | None = None, read_only: bool = False) -> None:
        t = t or self._cur
        if t.active:
            return
        t.active = True
        t.read_only = read_only
        t.savepoints = []

    def _acquire(self, t: Txn) -> None:
        """``t`` writes for the first time: it takes base storage's write transaction."""
        if self._runtime is not None and not self.storage.committed_reads:
            # base upqueries must not read this transaction's uncommitted rows
            self._runtime.base_acquire()
        try:
            self.storage.begin()
        except BaseException:
            if self._runtime is not None and not self.storage.committed_reads:
                self._runtime.base_release()
            raise
        if self.shared:
            self._catch_up_writer(pin=True)  # (under base storage's lock: see _catch_up)
        self._writer = t
        self._tx = True
        self._tx_deltas = []
        self._tx_tables = set()
        if not self.storage.committed_reads:
            self.graph.fill_log = []

    def _end(self, t: Txn) -> None:
        t.active = False
        t.read_only = False
        t.savepoints = []

    def _released(self) -> None:
        self._writer = None
        self._tx = False
        self._tx_deltas = []
        self._tx_tables = set()
        for cb in list(self.on_release):
            cb()

    @_locked
    def _commit(self, t: Txn | None = None) -> None:
        t = t or self._cur
        self._end(t)
        if self._writer is not t:
            return
        rt = self._runtime
        if rt is not None and self.storage.committed_reads:
            # the commit and its deltas go together under base storage's lock (see _write)
            rt.base_acquire()
        try:
            self.storage.commit()
            deltas = self._tx_deltas
            self._writer = None
            self._tx = False
            self._forget_tx_fills()
            if self.shared:
                self._pin_own(deltas)
            self._push(deltas)
            if self.shared:
                self._pin_stale = True  # the next fill pins a snapshot that holds this commit
                if rt is not None:
                    self._catch_up()  # now, under base storage's lock (see _write_logged)
        finally:
            if rt is not None:
                rt.base_release()
            self._released()

    @_locked
    def _rollback(self, t: Txn | None = None) -> None:
        t = t or self._cur
        self._end(t)
        if self._writer is not t:
            return
        self._undo_all()

    def _undo_all(self) -> None:
        """Roll base storage's write transaction back; the writer's deltas never enter."""
        try:
            self.storage.rollback()
            self._forget_tx_fills()
        finally:
            if self._runtime is not None and not self.storage.committed_reads:
                self._runtime.base_release()
            self._released()

    @_locked
    def _savepoint(self, name: str) -> None:
        t = self._cur
        if not t.active:
            if t.autocommit:
                return  # MySQL: outside a transaction a savepoint ends with the statement
            t.active = True  # autocommit off: the savepoint starts the transaction
        low = name.lower()
        t.savepoints = [sp for sp in t.savepoints if sp[0] != low]
        mark = None
        if self._writer is t:
            self._sp_seq += 1
            mark = f"noria_sp{self._sp_seq}"
            self.storage.savepoint(mark)
        t.savepoints.append([low, mark, len(self._tx_deltas)])

    def _find_savepoint(self, t: Txn, name: str) -> int:
        low = name.lower()
        for i in range(len(t.savepoints) - 1, -1, -1):
            if t.savepoints[i][0] == low:
                return i
        raise E.no_savepoint(name)

    @_locked
    def _rollback_to(self, name: str) -> None:
        t = self._cur
        i = self._find_savepoint(t, name)
        _low, mark, ndeltas = t.savepoints[i]
        del t.savepoints[i + 1 :]
        if self._writer is not t:
            return  # nothing written since
        if mark is None:
            # set before the transaction's first write: undo every write, stay in the transaction
            self._undo_all()
            return
        self.storage.rollback_to(mark, keep=True)
        del self._tx_deltas[ndeltas:]

    @_locked
    def _release_savepoint(self, name: str) -> None:
        t = self._cur
        i = self._find_savepoint(t, name)
        mark = t.savepoints[i][1]
        del t.savepoints[i:]
        if mark is not None and self._writer is t:
            self.storage.release(mark)

    def _write_gate(self, t: Txn) -> None:
        """Before a write of ``t`` changes anything: wait for another writer, refuse in a
        read-only transaction, take base storage's write transaction inside a transaction."""
        w = self._writer
        if w is t:
            return
        if t.active and t.read_only:
            raise E.read_only_transaction()
        if w is not None:
            raise E.LockWait()
        if t.active:
            self._acquire(t)

    def reads_own_writes(self, t: Txn, prep) -> bool:
        """Must ``prep`` (a dataflow SELECT) run in base storage for ``t`` to see its own
        uncommitted writes? (Only when ``t`` wrote a table the query reads.)"""
        if self._writer is not t:
            return False
        if not self.storage.committed_reads:
            return True  # the dataflow cannot fill while the writer holds base storage
        return not self._tx_tables.isdisjoint(prep.tables)

    # --- several processes, one file ---------------------------------------------------------
    # Every write appends its delta to the change log in the same SQLite transaction. Every
    # process applies the other processes' entries in log order (_catch_up) and answers its
    # fills from a read snapshot pinned at exactly the entry it applied last, so a fill and the
    # deltas never overlap or leave a gap. A background thread notices commits of other
    # connections (PRAGMA data_version) and catches up within a few milliseconds.
    def _catch_up(self) -> None:
        """(Under the lock.) Pin a new snapshot and apply the log entries up to it. With domain
        threads, the pin and the deltas go together under base storage's lock: a base upquery
        answered on a domain thread reads the old snapshot before the deltas, or the new one
        after them (as for this process's own writes, ``_write``)."""
        if not self.shared or self._tx or self._closed:
            return  # while this process writes, nobody else can commit
        rt = self._runtime
        if rt is None:
            self._catch_up_now()
            return
        rt.base_acquire()
        try:
            self._catch_up_now()
        finally:
            rt.base_release()

    def _catch_up_now(self) -> None:
        self._pin_stale = False
        self._behind = False  # a commit after the pin below sets it again
        seq = self.storage.pin()
        if seq <= self._applied:
            return
        from ..storage.sqlite import decode_batch

        entries = self.storage.log_entries(self._applied, seq)
        complete = len(entries) == seq - self._applied  # log sequence numbers have no holes
        if not complete or any(t == "" and o != self._origin for _s, o, t, _d in entries):
            # another process changed the catalog (CREATE/DROP ...), or this one fell so far
            # behind that the entries it needs were dropped: rebuild from the catalog, pinned
            # at this snapshot, which holds every logged write
            if self._runtime is not None:
                self._runtime.wait_idle()  # no message of the old graph is in flight
            self._reload_catalog()
            self._applied = seq
            return
        deltas = [
            (table, decode_batch(data))
            for _s, origin, table, data in entries
            if origin != self._origin and table  # own writes entered the views at commit
        ]
        self._applied = seq
        if deltas:
            self._push(deltas)

    def _reload_catalog(self) -> None:
        for name in list(self.queries):
            self._remove_query(name)
        for node in list(self.graph.nodes.values()):
            if node.kind == "base":
                self.graph.remove(node)
        self.views.clear()
        self.view_sql.clear()
        self.view_names.clear()
        self._deferred_views.clear()
        self._by_sql.clear()
        self._forget_statements()
        self._unshared.clear()
        self.storage.forget_schemas()
        self._fk_parents = None
        self.databases.clear()
        self._restore()

    def poll_commits(self) -> None:
        """After ``POLL_EVERY`` lock-free reads (``fast`` ran out): has another connection
        committed? (A thread spinning on cached reads keeps the interpreter, so the tail
        thread alone would notice late.)"""
        try:
            v = self._dv_conn.execute("PRAGMA data_version").fetchone()[0]
        except Exception:  # noqa: BLE001 - closed meanwhile: the tail thread has stopped
            return
        if v != self._dv_last:
            self._dv_last = v
            self._behind = True
        else:
            self._refresh_fast()

    @staticmethod
    def _tail(ref, path: str, poll: float) -> None:
        """Notice other connections' commits. The next statement of this process catches up
        first (on its own thread: a busy reader does not wait for this thread to get the
        interpreter), and this thread catches up itself when the engine is idle. It holds the
        engine only weakly: an engine dropped without close() is collected, and the thread
        ends."""
        import sqlite3 as _sqlite3

        watch = _sqlite3.connect(path, check_same_thread=False)
        try:
            last = watch.execute("PRAGMA data_version").fetchone()[0]
            housekeeping = time.monotonic() + 2.0
            while True:
                time.sleep(poll)
                eng = ref()
                if eng is None or eng._closed or eng._failure is not None:
                    return
                v = watch.execute("PRAGMA data_version").fetchone()[0]
                if v != last:
                    last = v
                    eng._behind = True
                now = time.monotonic()
                if (eng._behind or now >= housekeeping) and eng.lock.acquire(blocking=False):
                    try:
                        if eng._closed:
                            return
                        if eng._behind:
                            eng._catch_up()
                        if now >= housekeeping and not eng._tx:
                            housekeeping = now + 2.0
                            eng.storage.log_housekeeping(eng._origin, eng._applied)
                    except BaseException as e:  # noqa: BLE001 - surfaced to every caller
                        eng._failure = e
                        return
                    finally:
                        eng.lock.release()
                del eng  # between polls the engine is referenced only weakly
        finally:
            watch.close()

    def _tx_stmt(self, what: str, arg=None) -> Result:
        t = self._cur
        if what == "begin":
            t.locked = None  # a transaction releases the table locks
            self._commit(t)  # MySQL: BEGIN commits an open transaction
            self._begin(t, read_only=bool(arg))
        elif what == "commit":
            self._commit(t)
            if t.locked is not None:
                self._lock_tables(t)
        elif what == "rollback":
            if t.locked is not None:
                self._unlocked_rollback(t)
            else:
                self._rollback(t)
        elif what == "lock":
            self._lock_statement(t, arg)
        elif what == "unlock":
            self._unlock_statement(t)
        elif what == "savepoint":
            self._savepoint(arg)
        elif what == "rollback_to":
            self._rollback_to(arg)
        elif what == "release":
            self._release_savepoint(arg)
        elif what == "fk_checks":
            t.fk_checks = bool(arg)
        elif what == "autocommit":
            if arg and not t.autocommit:
                self._commit(t)  # MySQL: turning autocommit on commits the open transaction
            t.autocommit = bool(arg)
        return Result(rowcount=0)

    @staticmethod
    def _tx_statement(sql: str):
        """(what, argument) of a transaction statement sqlglot does not parse, else None."""
        m = _TX_WORDS.match(sql)
        if m is None:
            return None
        if m.group("savepoint"):
            return "savepoint", m.group("sp").strip("`")
        if m.group("release"):
            return "release", m.group("rsp").strip("`")
        if m.group("rollback_to"):
            return "rollback_to", m.group("tsp").strip("`")
        if m.group("unlock"):
            return "unlock", None
        if m.group("lock"):
            items = []
            for part in _IDENT_LIST.findall((m.group("list") or "") + ","):
                item = _LOCK_ITEM.match(part[:-1])
                if item is None:
                    raise E.parse_error(
                        "near ''" if not part[:-1].strip() else f"near '{part[:-1].strip()[:40]}'"
                    )
                db, table = item.group("db"), item.group("table")
                items.append(
                    (
                        (None if db is None else _unquote(db), _unquote(table)),
                        "read" if item.group("read") else "write",
                    )
                )
            return "lock", items
        if m.group("start"):
            modes = " ".join((m.group("modes") or "").lower().split())
            ro = "read only" in modes
            if ro and "read write" in modes:
                raise E.parse_error("near 'READ WRITE': READ ONLY and READ WRITE together")
            return "begin", ro
        on = m.group("ac").lower() in ("1", "on", "true")
        if m.group("var").lower() == "foreign_key_checks":
            return "fk_checks", on
        return "autocommit", on

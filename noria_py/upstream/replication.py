"""Replication: the upstream's ROW binlog applied to the mirror, one transaction at a time.

A thread reads the binlog (``pymysqlreplication.BinLogStreamReader``) from the position the
mirror has applied. Row events of the mirrored database are collected until their transaction
ends (an XID event, or ``COMMIT`` for a non-transactional table) and then applied as one engine
transaction: base storage changes, the new position is recorded in the same SQLite transaction
(``snapshot.STATE_TABLE``), and the deltas enter the dataflow together at commit, so a cached
view shows all of an upstream transaction or none of it, and a restart resumes exactly where
the last commit left off.

Row images are applied by primary key, which makes applying one twice harmless: an inserted
row is upserted, a deleted row is deleted by its key, an updated row is moved from its old key
(if the key changed) and upserted.

DDL on a mirrored table (``CREATE``, ``ALTER``, ``DROP``, ``RENAME``, ``TRUNCATE``, ``CREATE``/
``DROP INDEX``) drops its mirror with every query over it (they compile again when next read)
and, if the table still exists, snapshots it again; the binlog events of that table up to the
new snapshot's position are skipped, since the snapshot holds them.

A lost connection (the upstream restarted, the network failed) is retried with exponential
backoff from the last applied position; ``status()`` reports the position, the upstream's, the
lag and the last error.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import threading
import time
from typing import Any

from .. import errors as E
from .snapshot import (
    VIEW_REASON,
    acting,
    drop_mirror,
    mirror_txn,
    save_position,
    snapshot,
)
from .source import Position, UpstreamURL, at_or_after, current_position

log = logging.getLogger("noria_py.upstream")

_IDENT = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_NAME = rf"(?:{_IDENT}\s*\.\s*)?{_IDENT}"
_DDL = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?P<verb>"
    r"create\s+(?:or\s+replace\s+)?(?:temporary\s+)?table|alter\s+(?:online\s+)?(?:ignore\s+)?table"
    r"|drop\s+(?:temporary\s+)?table|rename\s+tables?|truncate(?:\s+table)?"
    r"|create\s+(?:or\s+replace\s+)?(?:unique\s+|fulltext\s+|spatial\s+)?index|drop\s+index"
    r"|drop\s+(?:database|schema)|create\s+(?:database|schema)"
    r"|(?:create|alter)\s+(?:or\s+replace\s+)?[^;]*?\bview|drop\s+view)\b",
    re.I | re.S,
)


_STATEMENT_DML = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:insert|update|delete|replace|load|call)\b", re.I | re.S
)


def _unquote(name: str) -> str:
    name = name.strip()
    if name.startswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _split_name(text: str) -> tuple[str | None, str]:
    m = re.match(rf"\s*(?:({_IDENT})\s*\.\s*)?({_IDENT})", text)
    if m is None:
        return None, ""
    return (_unquote(m.group(1)) if m.group(1) else None), _unquote(m.group(2))


def ddl_tables(query: str, schema: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(verb, [(database, table)]) a DDL statement changes, or None for any other statement.
    Tables are qualified with ``schema`` (the statement's default database) unless named."""
    m = _DDL.match(query)
    if m is None:
        return None
    verb = " ".join(m.group("verb").lower().split())
    rest = query[m.end() :]
    rest = re.sub(r"^\s*if\s+(?:not\s+)?exists\b", "", rest, flags=re.I)
    names: list[tuple[str | None, str]] = []
    if verb.endswith("view"):
        body = (
            rest
            if verb.startswith("drop")
            else re.split(r"\s+as\b", rest, maxsplit=1, flags=re.I)[0]
        )
        for part in body.split(","):
            names.append(_split_name(part))
        return "view", [(db or schema, t) for db, t in names if t]
    if verb.startswith(("drop database", "drop schema", "create database", "create schema")):
        db = _split_name(rest)[1]
        return ("database", [(db, "")])
    if "index" in verb:
        on = re.search(rf"\bon\s+({_NAME})", rest, re.I)
        if on:
            names.append(_split_name(on.group(1)))
    elif verb.startswith("rename"):
        for pair in re.finditer(rf"({_NAME})\s+to\s+({_NAME})", rest, re.I):
            names.append(_split_name(pair.group(1)))
            names.append(_split_name(pair.group(2)))
    elif verb.startswith("drop"):
        body = re.split(r"/\*|\b(?:restrict|cascade)\b", rest, flags=re.I)[0]
        for part in body.split(","):
            names.append(_split_name(part))
    else:
        names.append(_split_name(rest))
    if "temporary" in verb:
        return None  # a temporary table never is a mirror
    return verb, [(db or schema, t) for db, t in names if t]


class Replicator:
    """The thread applying the upstream's binlog to ``engine`` from ``position``."""

    def __init__(
        self,
        engine,
        url: UpstreamURL,
        position: Position,
        skipped: dict[str, str],
        server_id: int | None = None,
    ) -> None:
        self.engine = engine
        self.url = url
        self.applied = position
        self.skipped = skipped
        self.server_id = server_id or _default_server_id()
        self.txn = mirror_txn(engine)  # DDL and copies: no foreign-key checks
        # row changes: the engine runs the foreign keys' cascades, which the binlog leaves to
        # each replica (unless the upstream session had FOREIGN_KEY_CHECKS off: _changes)
        self.row_txn = engine.new_txn()
        self.error: str | None = None
        self.reconnects = 0
        self.transactions = 0
        self.last_event_time: float | None = None  # upstream commit time of the last applied
        self._skip_until: dict[str, Position] = {}  # table -> snapshot position of its copy
        # table -> where the binlog makes a copy Spark read exact (read outside the snapshot)
        self._exact_until: dict[str, Position] = {}
        # tables copied again after DDL of at least this many rows are read by Spark
        # (``snapshot``'s spark_rows; attach sets these from the engine's options)
        self.spark_rows: int | None = None
        self.spark_master = None
        self.spark_config = None
        self.copies: list = []  # the SnapshotReports of copies after DDL, latest last
        # the upstream's views as this process defined them (``sync_views``; attach gives the
        # snapshot's; after a resume, empty: the first view DDL defines every view again)
        self.views: dict[str, str] = {}
        # lower-case tables being copied again (after DDL): reads over them go upstream
        self.copying: frozenset[str] = frozenset()
        self._applied_cv = threading.Condition()
        self._stop = threading.Event()
        self._stream = None
        self._thread: threading.Thread | None = None
        self._ctl = None  # a connection for SHOW MASTER STATUS (status, sync)
        self._ctl_lock = threading.Lock()

    # --- control ------------------------------------------------------------------------------
    def start(self) -> Replicator:
        self._thread = threading.Thread(target=self._run, name="noria-upstream", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        stream = self._stream
        if stream is not None:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a broken stream
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        with self._ctl_lock:
            if self._ctl is not None:
                self._ctl.close()
                self._ctl = None

    def wait_for(self, target: Position, timeout: float | None = None) -> bool:
        """Wait until the mirror has applied the binlog up to ``target``; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._applied_cv:
            while not at_or_after(self.applied, target):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                if self._stop.is_set():
                    return False
                self._applied_cv.wait(0.5 if left is None else min(left, 0.5))
        return True

    def upstream_position(self) -> Position:
        """The upstream's binlog position now (one query on a control connection)."""
        with self._ctl_lock:
            return self._upstream_position()

    def _upstream_position(self) -> Position:
        import pymysql

        for attempt in (0, 1):
            try:
                if self._ctl is None:
                    self._ctl = self.url.connect()
                return current_position(self._ctl)
            except (pymysql.err.MySQLError, E.OperationalError):
                if self._ctl is not None:
                    try:
                        self._ctl.close()
                    except Exception:  # noqa: BLE001
                        pass
                self._ctl = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def sync(self, timeout: float | None = 60.0) -> bool:
        """Wait until everything the upstream committed before this call is applied."""
        return self.wait_for(self.upstream_position(), timeout)

    def status(self) -> dict[str, Any]:
        """Where replication is: positions, lag (bytes when in one file, seconds since the
        upstream committed the oldest transaction not applied yet), errors, reconnects."""
        applied = self.applied
        try:
            upstream: Position | None = self.upstream_position()
        except Exception:  # noqa: BLE001 - the upstream is down: report, do not fail
            upstream = None
        behind = None
        seconds = None
        if upstream is not None:
            caught_up = at_or_after(applied, upstream)
            if upstream.file == applied.file:
                behind = max(0, upstream.pos - applied.pos)
            seconds = 0.0 if caught_up else _since(self.last_event_time)
        return {
            "source": str(self.url),
            "applied": str(applied),
            "upstream": None if upstream is None else str(upstream),
            "lag_bytes": behind,
            "lag_seconds": seconds,
            "running": self._thread is not None and self._thread.is_alive(),
            "transactions": self.transactions,
            "reconnects": self.reconnects,
            "last_error": self.error,
            "server_id": self.server_id,
            "not_mirrored": dict(self.skipped),
        }

    # --- the stream ---------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.05
        while not self._stop.is_set():
            try:
                self._follow()
                backoff = 0.05
            except Exception as e:  # noqa: BLE001 - any failure: reconnect and go on
                if self._stop.is_set():
                    break
                self.error = f"{type(e).__name__}: {e}"
                log.warning("upstream replication: %s; reconnecting in %.1fs", self.error, backoff)
                self.reconnects += 1
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            finally:
                stream, self._stream = self._stream, None
                if stream is not None:
                    try:
                        stream.close()
                    except Exception:  # noqa: BLE001
                        pass

    def _follow(self) -> None:
        from pymysqlreplication import BinLogStreamReader
        from pymysqlreplication.event import (
            HeartbeatLogEvent,
            MariadbGtidEvent,
            QueryEvent,
            RotateEvent,
            XidEvent,
        )
        from pymysqlreplication.row_event import (
            DeleteRowsEvent,
            UpdateRowsEvent,
            WriteRowsEvent,
        )

        settings = dict(self.url.settings())
        stream = BinLogStreamReader(
            connection_settings=settings,
            server_id=self.server_id,
            resume_stream=True,
            blocking=True,
            log_file=self.applied.file,
            log_pos=self.applied.pos,
            only_events=[
                WriteRowsEvent,
                UpdateRowsEvent,
                DeleteRowsEvent,
                QueryEvent,
                XidEvent,
                RotateEvent,
                HeartbeatLogEvent,
                MariadbGtidEvent,
            ],
            # file-and-offset positions: the plain COM_BINLOG_DUMP, which MariaDB serves too
            # (the library's MariaDB mode starts from a GTID and ignores log_pos)
            is_mariadb=False,
            slave_heartbeat=1,
            enable_logging=False,
        )
        self._stream = stream
        db = self.url.database
        pending: list | None = None  # the row changes of the open transaction
        connected = False
        for ev in stream:
            if self._stop.is_set():
                return
            if not connected:
                connected = True
                self.error = None
            here = Position(stream.log_file, stream.log_pos)
            if isinstance(ev, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
                if ev.schema != db or ev.table in self.skipped:
                    continue
                if pending is None:
                    pending = []
                pending.append(_changes(ev))
                continue
            if isinstance(ev, MariadbGtidEvent):
                pending = []
                continue
            if isinstance(ev, XidEvent):
                self._commit(pending or [], here, ev.timestamp)
                pending = None
                continue
            if isinstance(ev, QueryEvent):
                query = ev.query.strip()
                word = query.split(None, 1)[0].upper() if query else ""
                if word == "BEGIN":
                    pending = []
                    continue
                if word == "COMMIT":
                    self._commit(pending or [], here, ev.timestamp)
                    pending = None
                    continue
                if pending:
                    self._commit(pending, here, ev.timestamp)
                pending = None
                schema = ev.schema.decode() if isinstance(ev.schema, bytes) else ev.schema
                self._ddl(query, schema, here, ev.timestamp)
                continue
            if pending is None and isinstance(ev, (RotateEvent, HeartbeatLogEvent)):
                # between transactions: everything before here is applied
                if isinstance(ev, RotateEvent):
                    here = Position(ev.next_binlog, ev.position)
                self._advance(here)

    def _advance(self, here: Position) -> None:
        with self._applied_cv:
            if here.file and at_or_after(here, self.applied):
                self.applied = here
                self._caught_up()
            self._applied_cv.notify_all()

    # --- applying -----------------------------------------------------------------------------
    def _commit(self, changes: list, end: Position, timestamp: int | None) -> None:
        """Apply one upstream transaction's row changes, and its end position, atomically."""
        try:
            self._apply(changes, end)
        except E.Error as e:
            # a row the mirror's definition does not take: copy the tables again (the
            # snapshot holds this transaction) and apply the rest of it
            tables = sorted({c[1] for c in changes})
            log.warning("upstream: %s; copying %s again", e, ", ".join(tables))
            self._resnapshot(tables)
            self._apply(changes, end)
        self.transactions += 1
        if timestamp:
            self.last_event_time = float(timestamp)
        with self._applied_cv:
            self.applied = end
            self._caught_up()
            self._applied_cv.notify_all()

    def _apply(self, changes: list, end: Position) -> None:
        eng = self.engine
        t = self.row_txn
        with acting(eng, t):
            eng._begin(t)
            try:
                for kind, table, rows, fk_checks in changes:
                    t.fk_checks = fk_checks
                    skip = self._skip_until.get(table.lower())
                    if skip is not None:
                        if not at_or_after(skip, end):
                            del self._skip_until[table.lower()]
                        else:
                            continue  # the table's copy already holds this transaction
                    schema = eng.storage.schemas.get(table.lower())
                    if schema is None:
                        continue
                    _apply_rows(eng, t, schema, kind, rows)
                save_position(eng, self.url, end)
                eng._commit(t)
            except BaseException:
                eng._rollback(t)
                raise

    def _ddl(self, query: str, schema: str, here: Position, timestamp: int | None) -> None:
        found = ddl_tables(query, schema)
        if found is None and _STATEMENT_DML.match(query):
            # a change logged as a statement (a session with binlog_format=STATEMENT): its
            # rows are unknown, so every mirrored table it names is copied again
            names = [
                t
                for t in self.engine.table_names()
                if re.search(rf"(?<![\w$]){re.escape(t)}(?![\w$])", query, re.I)
            ]
            if names:
                log.warning("upstream: a statement-logged change to %s", ", ".join(names))
                self._resnapshot(names)
        if found is not None:
            verb, names = found
            if verb == "database":
                if names[0][0] == self.url.database:
                    self._resnapshot(list(self.engine.table_names()) + list(self.skipped))
            elif verb != "view":
                ours = [t for db, t in names if db == self.url.database]
                if ours:
                    self._resnapshot(ours)
            if verb in ("view", "database") or verb.startswith("rename"):
                if any(db == self.url.database for db, _ in names):
                    self._sync_views()
        with acting(self.engine, self.txn):
            save_position(self.engine, self.url, here)
        if timestamp:
            self.last_event_time = float(timestamp)
        with self._applied_cv:
            self.applied = here
            self._caught_up()
            self._applied_cv.notify_all()

    def _resnapshot(self, tables: list[str]) -> None:
        """Copy ``tables`` from the upstream again (dropping the mirrors of those gone).
        Meanwhile reads over them are answered by the upstream (``copying``)."""
        names = {t.lower() for t in tables}
        self.copying = self.copying | names
        try:
            self._copy_again(tables)
        finally:
            # a copy is ahead of the other tables until replication reaches its position
            # (a transaction over it and another table would show in part): it stays in
            # ``copying`` until then (``_caught_up``)
            self.copying = frozenset(
                t
                for t in self.copying
                if t not in names or t in self._skip_until or t in self._exact_until
            )

    def _sync_views(self) -> None:
        """The upstream's views changed: define them here again (``sync_views``)."""
        from .snapshot import sync_views

        for name in [n for n, why in self.skipped.items() if why.startswith(VIEW_REASON)]:
            del self.skipped[name]
        conn = self.url.connect()
        try:
            self.skipped.update(sync_views(self.engine, self.txn, conn, self.views))
        finally:
            conn.close()
        with acting(self.engine, self.txn):
            self.engine.storage.conn.execute(
                "UPDATE __noria_upstream SET skipped = ? WHERE id = 1", (json.dumps(self.skipped),)
            )

    def _caught_up(self) -> None:
        """(After ``applied`` moved.) Tables whose copy replication has now reached are read
        from the mirror again."""
        if self.copying:
            applied = self.applied
            for t, pos in list(self._exact_until.items()):
                if at_or_after(applied, pos):
                    del self._exact_until[t]
            self.copying = frozenset(
                t
                for t in self.copying
                if (t in self._skip_until and not at_or_after(applied, self._skip_until[t]))
                or t in self._exact_until
            )

    def _copy_again(self, tables: list[str]) -> None:
        eng = self.engine
        with acting(eng, self.txn):
            for name in tables:
                drop_mirror(eng, self.txn, name)
                self.skipped.pop(name, None)
                self._skip_until.pop(name.lower(), None)
                self._exact_until.pop(name.lower(), None)
        conn = self.url.connect()
        try:
            from .snapshot import base_tables

            existing = {n.lower(): n for n in base_tables(conn)}
        finally:
            conn.close()
        present = [existing[n.lower()] for n in tables if n.lower() in existing]
        if not present:
            return
        report = snapshot(
            eng,
            self.url,
            present,
            spark_rows=self.spark_rows,
            spark_master=self.spark_master,
            spark_config=self.spark_config,
        )
        self.copies.append(report)
        self.skipped.update(report.skipped)
        for name in report.tables:
            self._skip_until[name.lower()] = report.position
        if report.exact_at is not None:
            # Spark read these outside the snapshot: they are exact once replication (applying
            # row images by key from the snapshot's position) reaches exact_at; a restart
            # before then waits for it too (attach), as after a first snapshot
            for name in report.spark:
                self._exact_until[name.lower()] = report.exact_at
        with acting(eng, self.txn):
            eng.storage.conn.execute(
                "UPDATE __noria_upstream SET skipped = ? WHERE id = 1", (json.dumps(self.skipped),)
            )
            if report.exact_at is not None:
                eng.storage.conn.execute(
                    "UPDATE __noria_upstream SET exact_file = ?, exact_pos = ? WHERE id = 1",
                    (report.exact_at.file, report.exact_at.pos),
                )


_NO_FOREIGN_KEY_CHECKS = 0x0002  # a rows event's flag: FOREIGN_KEY_CHECKS was off upstream


def _changes(ev) -> tuple[str, str, list, bool]:
    """(kind, table, rows, foreign keys checked) of one row event, values in column order
    (before, after for updates), read now while the event's packet is at hand."""
    from pymysqlreplication.row_event import DeleteRowsEvent, WriteRowsEvent

    fk = not (getattr(ev, "flags", 0) & _NO_FOREIGN_KEY_CHECKS)
    if isinstance(ev, WriteRowsEvent):
        return "insert", ev.table, [tuple(r["values"].values()) for r in ev.rows], fk
    if isinstance(ev, DeleteRowsEvent):
        return "delete", ev.table, [tuple(r["values"].values()) for r in ev.rows], fk
    rows = [
        (tuple(r["before_values"].values()), tuple(r["after_values"].values())) for r in ev.rows
    ]
    return "update", ev.table, rows, fk


_statements: dict[int, tuple] = {}


def _sql_for(schema) -> tuple[str, str, str]:
    """(upsert, delete by key, update by key) statements of a mirrored table."""
    key = id(schema)
    hit = _statements.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]

    def q(n: str) -> str:
        return "`" + n.replace("`", "``") + "`"

    names = [c.name for c in schema.columns]
    table = q(schema.name)
    cols = ", ".join(q(n) for n in names)
    marks = ", ".join("?" for _ in names)
    pk = [schema.columns[i].name for i in schema.primary_key]
    others = [n for n in names if n not in pk] or pk[:1]
    where = " AND ".join(f"{q(n)} = ?" for n in pk)
    upsert = f"INSERT INTO {table} ({cols}) VALUES ({marks}) ON DUPLICATE KEY UPDATE " + ", ".join(
        f"{q(n)} = VALUES({q(n)})" for n in others
    )
    delete = f"DELETE FROM {table} WHERE {where}"
    update = f"UPDATE {table} SET " + ", ".join(f"{q(n)} = ?" for n in names) + f" WHERE {where}"
    _statements[key] = (schema, (upsert, delete, update))
    return upsert, delete, update


def _apply_rows(eng, t, schema, kind: str, rows: list) -> None:
    upsert, delete, update = _sql_for(schema)
    pk = schema.primary_key
    width = len(schema.columns)
    members = [
        c.ctype.values if c.ctype.mysql_name == "SET" and c.ctype.values else None
        for c in schema.columns
    ]

    def fix(values: tuple) -> list:
        if len(values) != width:
            raise E.DataError(
                f"the binlog row of {schema.name} has {len(values)} columns, the mirror {width}"
            )
        out = list(values)
        for i, v in enumerate(out):
            if v.__class__ in (set, frozenset):
                order = members[i] or sorted(v)
                out[i] = ",".join(m for m in order if m in v)
            elif v.__class__ in (dict, list):
                out[i] = json.dumps(v)
        return out

    if kind == "insert":
        eng.executemany(upsert, [fix(r) for r in rows], t)
    elif kind == "delete":
        eng.executemany(delete, [[fix(r)[i] for i in pk] for r in rows], t)
    else:
        for before, after in rows:
            b, a = fix(before), fix(after)
            old = [b[i] for i in pk]
            if old != [a[i] for i in pk]:
                eng.execute(update, (*a, *old), t)
            eng.execute(upsert, a, t)


def _since(ts: float | None) -> float | None:
    return None if ts is None else max(0.0, time.time() - ts)


def _default_server_id() -> int:
    """A replica server id unlikely to clash with another instance's (the upstream drops the
    older of two connections with one id)."""
    return 1_000_000 + (os.getpid() * 1_000 + random.randrange(1_000)) % 1_000_000_000

"""Base tables in SQLite: the durable source of truth below the dataflow.

A file path gives a durable database (WAL journal); ``None`` keeps everything in ``:memory:``.
The catalog (CREATE TABLE and CREATE VIEW statements, in order) lives in the same file, so
reopening restores tables, rows and views. Every row has a SQLite rowid, which is how UPDATE and
DELETE address the exact rows they change. Values are stored in SQLite-friendly form and
converted back to their column kinds on the way out.
"""

from __future__ import annotations

import datetime as _dt
import marshal
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import (
    ER_BAD_NULL_ERROR,
    ER_DUP_ENTRY,
    IntegrityError,
    OperationalError,
)
from ..sql import values as V
from ..sql.collation import CK, KeyCut, ck
from ..sql.collation import current as current_collation
from ..sql.functions.coerce import ColumnFloat

CATALOG = "__noria_catalog"
CHANGES = "__noria_changes"  # the change log processes sharing one file tail (Engine, shared)
READERS = "__noria_readers"  # the processes tailing it, and how far each has read


def _enc(v):
    t = type(v)
    if t is int or t is str or t is float or v is None or t is bytes:
        return v
    if t is bool:
        return int(v)
    if t is Decimal:
        return ("D", str(v))
    if t is _dt.datetime:
        return ("T", v.isoformat())
    if t is _dt.date:
        return ("d", v.isoformat())
    if t is _dt.timedelta:
        return ("t", v.days, v.seconds, v.microseconds)
    if t is CK:
        return v.orig
    if t is ColumnFloat:
        return ("F", float(v), v.dec)
    raise TypeError(f"cannot log a {t.__name__}")


def _dec(v):
    if type(v) is not tuple:
        return v
    tag = v[0]
    if tag == "D":
        return Decimal(v[1])
    if tag == "F":
        return ColumnFloat(v[1], v[2])
    if tag == "T":
        return _dt.datetime.fromisoformat(v[1])
    if tag == "d":
        return _dt.date.fromisoformat(v[1])
    return _dt.timedelta(days=v[1], seconds=v[2], microseconds=v[3])


def encode_batch(batch: list) -> bytes:
    """A base-table delta ``[(row, multiplicity)]`` as bytes for the change log."""
    return marshal.dumps([(tuple(_enc(v) for v in row), m) for row, m in batch])


def decode_batch(data: bytes) -> list:
    return [(tuple(_dec(v) for v in row), m) for row, m in marshal.loads(data)]


class Schemas(dict):
    """The tables' schemas by lower-case name, with a ``version`` that every change counts: a
    plan described from them (``dataflow/sqlrel.py``) is stale once it moved."""

    version = 0

    def __setitem__(self, key, value) -> None:
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self.version += 1
        super().__delitem__(key)

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def update(self, *args, **kwargs) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def setdefault(self, key, default=None):
        self.version += 1
        return super().setdefault(key, default)

    def popitem(self):
        self.version += 1
        return super().popitem()


@dataclass
class ColumnDef:
    name: str
    ctype: V.ColumnType
    nullable: bool = True
    default: object = None
    has_default: bool = False
    auto_increment: bool = False
    generated: object = None  # GENERATED ALWAYS AS (expression), a sqlglot expression
    stored: bool = False  # STORED (else VIRTUAL; both are kept in base storage here)
    on_update: bool = False  # ON UPDATE CURRENT_TIMESTAMP


@dataclass
class TableSchema:
    name: str
    columns: list[ColumnDef]
    primary_key: list[int] = field(default_factory=list)
    uniques: list[list[int]] = field(default_factory=list)
    indexes: list[list[int]] = field(default_factory=list)
    ddl: str = ""
    unique_names: list[str] = field(default_factory=list)
    index_names: list[str] = field(default_factory=list)  # aligned with ``indexes``
    # keys added by CREATE [UNIQUE] INDEX (name -> SQLite index): DROP INDEX can drop these
    created_indexes: dict = field(default_factory=dict)
    foreign_keys: list = field(default_factory=list)  # foreign_keys.ForeignKey
    checks: list = field(default_factory=list)  # [name, expression (sqlglot), column or ""]

    def key_names(self) -> set[str]:
        return {n.lower() for n in self.unique_names + self.index_names}

    def index_of(self, name: str) -> int | None:
        low = name.lower()
        for i, c in enumerate(self.columns):
            if c.name.lower() == low:
                return i
        return None

    @property
    def auto_increment(self) -> int | None:
        for i, c in enumerate(self.columns):
            if c.auto_increment:
                return i
        return None


def _param(v):
    """A key value as a statement parameter: a collation key by the spelling it came from (text
    columns compare under the engine's collation, so the spelling finds every row of the key)."""
    if type(v) is CK:
        return v.orig
    return V.to_storage(v)


def _inline_pk(schema: TableSchema) -> bool:
    """Is the table's key one AUTO_INCREMENT integer (SQLite's INTEGER PRIMARY KEY
    AUTOINCREMENT, whose counter lives in sqlite_sequence)?"""
    pk = schema.primary_key
    return (
        len(pk) == 1
        and schema.columns[pk[0]].ctype.kind == V.INT
        and schema.columns[pk[0]].auto_increment
    )


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_bounds(lower, upper):
    """Range bounds on a text column as SQL can take them: ``(lower, upper, loose)``. A bound
    holding a :class:`KeyCut` (a position between keys, not a string) becomes a real string
    on its far side (``low`` below, ``high`` above; none when there is none), and ``loose``
    says the SQL range may hold rows beyond the bounds."""
    loose = False
    if lower is not None and type(lower[0]) is KeyCut:
        loose = True
        lower = None if lower[0].low is None else (lower[0].low, True)
    if upper is not None and type(upper[0]) is KeyCut:
        loose = True
        upper = None if upper[0].high is None else (upper[0].high, True)
    return lower, upper, loose


def _between(v, lower, upper) -> bool:
    """Is ``v`` within the ``(value, inclusive)`` bounds (None: unbounded)? NULL never is."""
    if v is None:
        return False
    if lower is not None and (v < lower[0] if lower[1] else v <= lower[0]):
        return False
    return upper is None or (v <= upper[0] if upper[1] else v < upper[0])


class SQLiteStorage:
    """Base tables in one SQLite database.

    ``conn`` is the writer's connection: writes, and reads of the transaction that writes. A
    file (and a ``private`` database, a temporary file removed on close) also has a second,
    read-only connection, ``rconn``: while a transaction is open on ``conn``, what the dataflow
    reads (fills, replays) and other sessions' proxied reads go through ``rconn`` and see only
    committed rows (WAL gives a reader the last commit without waiting for the writer).
    ``reading`` is the connection those reads use right now."""

    def __init__(self, path: str | None, private: bool = False):
        self._tmpdir = None
        if path is None and private:
            import tempfile

            self._tmpdir = tempfile.mkdtemp(prefix="noria-")
            path = os.path.join(self._tmpdir, "base.db")
        self.path = path
        self.conn = sqlite3.connect(
            path or ":memory:", isolation_level=None, check_same_thread=False
        )
        from .mysql_functions import register as _register_mysql

        _register_mysql(self.conn)
        self.rconn: sqlite3.Connection | None = None
        if path:
            self.conn.execute("PRAGMA journal_mode=WAL")
            # a private database need not survive a crash: no syncs
            self.conn.execute(f"PRAGMA synchronous={'OFF' if self._tmpdir else 'NORMAL'}")
            self.rconn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            _register_mysql(self.rconn)
            self.rconn.execute("PRAGMA query_only=1")
        self.reading = self.conn
        # ``insert_one``'s cursor, kept (``Connection.execute`` makes a cursor per call); the
        # engine writes under its lock, one statement at a time
        self._insert_cur = self.conn.cursor()
        self.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {CATALOG} "
            "(seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT, name TEXT, sql TEXT)"
        )
        self.schemas: Schemas = Schemas()
        self._converters: dict[str, list | None] = {}
        self._in_tx = False
        self._insert_sql: dict[str, str] = {}
        self._lookup_sql: dict[tuple, str] = {}
        self._lookup_many_sql: dict[tuple, str] = {}
        self._range_sql: dict[tuple, str] = {}
        # AUTO_INCREMENT as InnoDB counts: a value given out stays given out when its row is
        # refused (a duplicate key) or its transaction rolls back. SQLite's counter
        # (sqlite_sequence) is undone with them, so the highest value each table generated is
        # kept here, per table name, and put back before the table's next generated value
        # (``_auto_catch_up``) once a failure or a rollback may have taken the counter below.
        self._auto_given: dict[str, int] = {}
        self._auto_behind: set[str] = set()

    # --- catalog ---------------------------------------------------------------------------
    def catalog_entries(self) -> list[tuple[str, str, str]]:
        return list(self.conn.execute(f"SELECT kind, name, sql FROM {CATALOG} ORDER BY seq"))

    def catalog_add(self, kind: str, name: str, sql: str) -> None:
        self.conn.execute(
            f"INSERT INTO {CATALOG} (kind, name, sql) VALUES (?, ?, ?)", (kind, name, sql)
        )
        self._log_catalog()

    def catalog_remove(self, kind: str, name: str) -> None:
        self.conn.execute(
            f"DELETE FROM {CATALOG} WHERE kind = ? AND lower(name) = lower(?)", (kind, name)
        )
        if kind == "table":  # and the indexes created on it
            self.catalog_remove_indexes(name)
        self._log_catalog()

    def catalog_remove_indexes(self, table: str) -> None:
        """Forget the CREATE INDEX entries of a table."""
        self.conn.execute(
            f"DELETE FROM {CATALOG} WHERE kind = 'index' AND lower(name) LIKE lower(?) ESCAPE '\\'",
            (table.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + ".%",),
        )

    def catalog_replace(self, kind: str, name: str, new_name: str, sql: str) -> None:
        """Change an entry in place (its position, which restoring follows, stays)."""
        self.conn.execute(
            f"UPDATE {CATALOG} SET name = ?, sql = ? WHERE kind = ? AND lower(name) = lower(?)",
            (new_name, sql, kind, name),
        )
        self._log_catalog()

    def _log_catalog(self) -> None:
        if self.logging:  # a catalog change: an entry of no table tells the other processes
            self.log_rebuild()

    def log_rebuild(self) -> None:
        """An entry telling the other processes to rebuild their dataflow from the catalog and
        base storage (after a catalog change, or a bulk load too large to log row by row)."""
        self.conn.execute(
            f"INSERT INTO {CHANGES} (origin, tbl, delta) VALUES (?, '', x'')", (self.origin,)
        )

    # --- transactions ----------------------------------------------------------------------
    def begin(self) -> None:
        if not self._in_tx:
            try:
                # a shared file: take the write lock now (the change log is caught up after)
                self.conn.execute("BEGIN IMMEDIATE" if self.logging else "BEGIN")
            except sqlite3.OperationalError as e:
                if "locked" in str(e) or "busy" in str(e):
                    from ..errors import LockWait

                    raise LockWait() from None
                raise
            self._in_tx = True
            if self.rconn is not None:
                self.reading = self.rconn

    def commit(self) -> None:
        if self._in_tx:
            if self.logging and self.rconn.in_transaction:
                # end the pinned snapshot first: with no reader in the WAL, the checkpoint this
                # commit may run can reset it (else every commit copies pages and syncs)
                self.rconn.execute("COMMIT")
            self.conn.execute("COMMIT")
            self._in_tx = False
            if not self.logging:
                self.reading = self.conn

    def rollback(self) -> None:
        if self._in_tx:
            self.conn.execute("ROLLBACK")
            self._in_tx = False
            if self._auto_given:
                self._auto_behind.update(self._auto_given)
            if not self.logging:
                self.reading = self.conn

    # --- the change log (processes sharing one file) --------------------------------------
    logging = False

    def enable_log(self, origin: str, busy_timeout: float) -> None:
        """Log every write's delta (``log_append``, inside the write's transaction) for other
        processes, and read the dataflow's rows through ``rconn`` pinned at the log position
        applied (``pin``)."""
        self.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {CHANGES} (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "origin TEXT NOT NULL, tbl TEXT NOT NULL, delta BLOB NOT NULL)"
        )
        self.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {READERS} "
            "(origin TEXT PRIMARY KEY, pid INTEGER, applied INTEGER, seen REAL)"
        )
        self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        self.rconn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        self.logging = True
        self.origin = origin
        self.reading = self.rconn

    def pin(self) -> int:
        """Start a new read snapshot on ``rconn`` (ending the last one); returns its last log
        sequence number. The dataflow's reads see exactly this snapshot until the next pin."""
        rc = self.rconn
        if rc.in_transaction:
            rc.execute("COMMIT")
        rc.execute("BEGIN")
        return self._log_end(rc)

    @staticmethod
    def _log_end(conn) -> int:
        """The last log sequence number given out, read through ``conn``: AUTOINCREMENT's
        counter, which the entries every process has read (dropped by ``log_housekeeping``)
        do not take with them."""
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (CHANGES,)).fetchone()
        return row[0] if row else 0

    def log_join(self, origin: str) -> None:
        """Record this process as a reader of the log at its end, before pinning the snapshot
        it starts from: from then on no process's housekeeping drops an entry it has not
        applied (which would make it rebuild its dataflow at its first catch-up)."""
        import time as _time

        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                f"INSERT OR REPLACE INTO {READERS} (origin, pid, applied, seen) VALUES (?,?,?,?)",
                (origin, os.getpid(), self._log_end(self.conn), _time.time()),
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def others_committed(self) -> bool:
        """Has another connection committed since the last call? (``conn``'s data version;
        this process's own writes through ``conn`` do not count.)"""
        v = self.conn.execute("PRAGMA data_version").fetchone()[0]
        changed = v != self._data_version
        self._data_version = v
        return changed

    _data_version = -1

    def log_append(self, origin: str, table: str, batch: list) -> int:
        cur = self.conn.execute(
            f"INSERT INTO {CHANGES} (origin, tbl, delta) VALUES (?, ?, ?)",
            (origin, table, encode_batch(batch)),
        )
        return cur.lastrowid

    def log_entries(self, after: int, upto: int) -> list:
        """(seq, origin, table, delta) of the log entries after ``after`` up to ``upto``, in order,
        read in the pinned snapshot."""
        return self.rconn.execute(
            f"SELECT seq, origin, tbl, delta FROM {CHANGES} WHERE seq > ? AND seq <= ? "
            "ORDER BY seq",
            (after, upto),
        ).fetchall()

    def log_housekeeping(self, origin: str, applied: int, stale_after: float = 30.0) -> None:
        """Record how far this process has read, forget processes not seen for a while, and
        drop the log entries every live process has read. Skipped when another process
        writes right now (a later round does it)."""
        import time as _time

        now = _time.time()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return
        try:
            self.conn.execute(
                f"INSERT OR REPLACE INTO {READERS} (origin, pid, applied, seen) VALUES (?,?,?,?)",
                (origin, os.getpid(), applied, now),
            )
            self.conn.execute(f"DELETE FROM {READERS} WHERE seen < ?", (now - stale_after,))
            low = self.conn.execute(f"SELECT MIN(applied) FROM {READERS}").fetchone()[0]
            if low:
                self.conn.execute(f"DELETE FROM {CHANGES} WHERE seq <= ?", (low,))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def log_leave(self, origin: str) -> None:
        try:
            self.conn.execute(f"DELETE FROM {READERS} WHERE origin = ?", (origin,))
        except sqlite3.Error:
            pass

    @property
    def committed_reads(self) -> bool:
        """Do the dataflow's reads see only committed rows while a transaction is open?"""
        return self.rconn is not None

    def savepoint(self, name: str) -> None:
        self.conn.execute(f"SAVEPOINT {name}")

    def release(self, name: str) -> None:
        self.conn.execute(f"RELEASE {name}")

    def rollback_to(self, name: str, keep: bool = False) -> None:
        """Undo everything since savepoint ``name``; ``keep`` leaves the savepoint set."""
        self.conn.execute(f"ROLLBACK TO {name}")
        if self._auto_given:
            self._auto_behind.update(self._auto_given)
        if not keep:
            self.conn.execute(f"RELEASE {name}")

    def forget_schemas(self) -> None:
        """Drop what is known of the tables (they are registered again from the catalog)."""
        self.schemas.clear()
        self._converters.clear()
        self._insert_sql.clear()
        self._lookup_sql.clear()
        self._lookup_many_sql.clear()
        self._range_sql.clear()

    # --- DDL -------------------------------------------------------------------------------
    def register(self, schema: TableSchema) -> None:
        """Know a table's schema (on create, or when reopening a file)."""
        self.schemas[schema.name.lower()] = schema
        convs = []
        need = False
        for c in schema.columns:
            if V.needs_conversion(c.ctype):
                convs.append(c.ctype)
                need = True
            else:
                convs.append(None)
        self._converters[schema.name.lower()] = convs if need else None

    def create_table(self, schema: TableSchema) -> None:
        cols = []
        pk = schema.primary_key
        inline_pk = _inline_pk(schema)
        coll = current_collation().name
        for i, c in enumerate(schema.columns):
            aff = c.ctype.sqlite_affinity()
            part = f"{q(c.name)} {aff}"
            if c.ctype.kind == V.STR:
                # text compares, sorts, groups and is unique under the engine's collation, or
                # the column's own
                part += f" COLLATE {q(c.ctype.collation or coll)}"
            elif c.ctype.wide_decimal:
                part += f" COLLATE {q(V.DECIMAL_COLLATION)}"  # its text compares by value
            if inline_pk and i == pk[0]:
                part += " PRIMARY KEY AUTOINCREMENT"
            elif not c.nullable:
                part += " NOT NULL"
            cols.append(part)
        if pk and not inline_pk:
            cols.append("PRIMARY KEY (" + ", ".join(q(schema.columns[i].name) for i in pk) + ")")
        for u in schema.uniques:
            cols.append("UNIQUE (" + ", ".join(q(schema.columns[i].name) for i in u) + ")")
        self.conn.execute(f"CREATE TABLE {q(schema.name)} ({', '.join(cols)})")
        for n, idx in enumerate(schema.indexes):
            cols_sql = ", ".join(q(schema.columns[i].name) for i in idx)
            self.conn.execute(
                f"CREATE INDEX IF NOT EXISTS {q(f'ix_{schema.name}_{n}')} "
                f"ON {q(schema.name)} ({cols_sql})"
            )
        self.register(schema)

    def create_named_index(
        self, schema: TableSchema, name: str, cols: list[int], unique: bool, restoring=False
    ) -> str:
        """CREATE [UNIQUE] INDEX: a SQLite index of its own, named after the table and key
        (a UNIQUE one fails with the duplicate it finds, as MySQL's does). ``restoring``: the
        index normally exists already (a table copied by ensure_collation lost it)."""
        real = f"key_{schema.name}_{name}"
        cols_sql = ", ".join(q(schema.columns[i].name) for i in cols)
        kind = "UNIQUE INDEX" if unique else "INDEX"
        exists = " IF NOT EXISTS" if restoring else ""
        try:
            self.conn.execute(f"CREATE {kind}{exists} {q(real)} ON {q(schema.name)} ({cols_sql})")
        except sqlite3.IntegrityError:
            dup = self.conn.execute(
                f"SELECT {cols_sql} FROM {q(schema.name)} GROUP BY {cols_sql} "
                f"HAVING COUNT(*) > 1 LIMIT 1"
            ).fetchone()
            convs = self._converters.get(schema.name.lower())
            vals = [
                v if convs is None or convs[i] is None or v is None else V.from_storage(v, convs[i])
                for v, i in zip(dup, cols)
            ]
            entry = "-".join(V.format_value(v) for v in vals)
            raise IntegrityError(
                f"Duplicate entry '{entry}' for key '{schema.name}.{name}'", ER_DUP_ENTRY, "23000"
            ) from None
        return real

    def drop_named_index(self, real: str) -> None:
        self.conn.execute(f"DROP INDEX IF EXISTS {q(real)}")

    def ensure_collation(self, schema: TableSchema) -> None:
        """A table written with another collation (or none, by an older version) is copied
        into one declared with the engine's, its text columns compared by it from then on."""
        texts = [c for c in schema.columns if c.ctype.kind == V.STR]
        if not texts:
            return
        row = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (schema.name,)
        ).fetchone()
        coll = current_collation().name
        if row is None or all(
            f"{q(c.name)} TEXT COLLATE {q(c.ctype.collation or coll)}" in (row[0] or "")
            for c in texts
        ):
            return
        old = schema.name + "__old_collation"
        started = not self._in_tx
        if started:
            self.conn.execute("BEGIN")
        try:
            for (ix,) in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
                "AND sql IS NOT NULL",
                (schema.name,),
            ).fetchall():
                self.conn.execute(f"DROP INDEX {q(ix)}")
            self.conn.execute(f"ALTER TABLE {q(schema.name)} RENAME TO {q(old)}")
            self.create_table(schema)
            self.conn.execute(f"INSERT INTO {q(schema.name)} SELECT * FROM {q(old)}")
            self.conn.execute(f"DROP TABLE {q(old)}")
        except sqlite3.IntegrityError as e:
            if started:
                self.conn.execute("ROLLBACK")
            raise IntegrityError(
                f"table {schema.name} holds values equal under {coll} in a unique key: {e}",
                1062,
                "23000",
            ) from None
        except BaseException:
            if started:
                self.conn.execute("ROLLBACK")
            raise
        if started:
            self.conn.execute("COMMIT")

    def rebuild_table(self, old: TableSchema, new: TableSchema, rows: list[list]) -> None:
        """(Inside a transaction.) Replace table ``old`` by ``new`` holding ``rows`` (ALTER
        TABLE, RENAME TABLE). The AUTO_INCREMENT counter carries over, as in MySQL. On an
        error nothing is changed, the known schemas included."""
        seq = self.next_auto_value(old.name)
        saved = self.known_schemas()
        try:
            self.drop_table(old.name)
            self.create_table(new)
            self.insert_rows(new.name, rows, None)
            auto = new.auto_increment
            if auto is not None and _inline_pk(new):
                top = max((r[auto] for r in rows if r[auto] is not None), default=0)
                self._store_counter(new.name, max(seq or 0, top))
        except BaseException:
            self.restore_schemas(saved)
            raise

    def known_schemas(self):
        """What is known of the tables now (``restore_schemas`` goes back to it)."""
        return dict(self.schemas), dict(self._converters)

    def restore_schemas(self, saved) -> None:
        self.schemas.clear()
        self.schemas.update(saved[0])
        self._converters.clear()
        self._converters.update(saved[1])
        self._insert_sql.clear()
        self._lookup_sql.clear()
        self._lookup_many_sql.clear()
        self._range_sql.clear()

    def ensure_index(self, table: str, cols: list[int]) -> None:
        schema = self.schemas[table.lower()]
        if list(cols) == list(schema.primary_key) or list(cols) in schema.uniques:
            return  # already indexed by the key's own index
        if any(list(ix[: len(cols)]) == list(cols) for ix in schema.indexes):
            return
        name = f"nx_{schema.name}_" + "_".join(str(c) for c in cols)
        cols_sql = ", ".join(q(schema.columns[i].name) for i in cols)
        self.conn.execute(f"CREATE INDEX IF NOT EXISTS {q(name)} ON {q(schema.name)} ({cols_sql})")

    def drop_dataflow_indexes(self, table: str) -> list[str]:
        """Drop the indexes ``ensure_index`` made on ``table`` (a bulk load builds them again
        after, by one sort each, instead of an index insert per row); returns the statements
        that build them again. None dropped when another connection holds the write lock."""
        name = self.schemas[table.lower()].name
        prefix = f"nx_{name}_"
        found = self.conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (name,)
        ).fetchall()
        made = []
        for index, sql in found:
            if not index.startswith(prefix) or not sql:
                continue
            try:
                self.conn.execute(f"DROP INDEX {q(index)}")
            except sqlite3.OperationalError:
                break  # busy: the rest stay
            made.append(sql.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
        return made

    def build_indexes(self, statements: list[str]) -> None:
        for sql in statements:
            self.conn.execute(sql)

    def drop_table(self, name: str) -> None:
        schema = self.schemas.pop(name.lower())
        self._auto_given.pop(schema.name, None)
        self._auto_behind.discard(schema.name)
        self._insert_sql.pop(schema.name, None)
        self._lookup_sql = {
            k: v for k, v in self._lookup_sql.items() if k[0].lower() != name.lower()
        }
        self._lookup_many_sql = {
            k: v for k, v in self._lookup_many_sql.items() if k[0].lower() != name.lower()
        }
        self._range_sql = {k: v for k, v in self._range_sql.items() if k[0].lower() != name.lower()}
        self._converters.pop(name.lower(), None)
        self.conn.execute(f"DROP TABLE {q(schema.name)}")

    # --- reads -----------------------------------------------------------------------------
    def _convert(self, table: str, rows) -> list[tuple]:
        convs = self._converters.get(table.lower())
        if convs is None:
            return rows if isinstance(rows, list) else list(rows)
        out = []
        for r in rows:
            out.append(
                tuple(
                    v if c is None or v is None else V.from_storage(v, c) for v, c in zip(r, convs)
                )
            )
        return out

    def scan(self, table: str) -> list[tuple]:
        schema = self.schemas[table.lower()]
        cur = self.reading.execute(f"SELECT * FROM {q(schema.name)}")
        return self._convert(table, cur.fetchall())

    def count(self, table: str) -> int:
        schema = self.schemas[table.lower()]
        return self.reading.execute(f"SELECT COUNT(*) FROM {q(schema.name)}").fetchone()[0]

    def select_with_rowid(self, table: str, where_sql: str | None, params=()) -> list:
        """(rowid, row) pairs of the rows matching a SQLite predicate (all rows when None)."""
        schema = self.schemas[table.lower()]
        sql = f"SELECT rowid, * FROM {q(schema.name)}"
        if where_sql:
            sql += f" WHERE {where_sql}"
        raw = self.conn.execute(sql, params).fetchall()
        convs = self._converters.get(table.lower())
        if convs is None:
            return [(r[0], r[1:]) for r in raw]
        rows = self._convert(table, [r[1:] for r in raw])
        return [(r[0], row) for r, row in zip(raw, rows)]

    def lookup(self, table: str, cols: list[int], key: tuple) -> list[tuple]:
        """Rows whose ``cols`` equal ``key`` (NULL matches NULL): an upquery reaching base storage."""
        if not cols:
            return self.scan(table)
        sql = self._lookup_sql.get((table, tuple(cols)))
        if sql is None:
            schema = self.schemas[table.lower()]
            cond = " AND ".join(f"{q(schema.columns[c].name)} IS ?" for c in cols)
            sql = f"SELECT * FROM {q(schema.name)} WHERE {cond}"
            self._lookup_sql[(table, tuple(cols))] = sql
        cur = self.reading.execute(sql, [_param(v) for v in key])
        return self._convert(table, cur.fetchall())

    # keys per query of ``lookup_many`` (its statement text is cached per count)
    LOOKUP_MANY_KEYS = 32

    def lookup_many(self, table: str, cols: list[int], keys: list[tuple]) -> list[tuple]:
        """Rows whose ``cols`` equal one of ``keys`` (distinct; NULL matches NULL), as
        ``lookup`` of each would give them, from one query per ``LOOKUP_MANY_KEYS`` keys: an OR
        of the keys' equalities, which SQLite answers by one index search per key."""
        schema = self.schemas[table.lower()]
        names = [q(schema.columns[c].name) for c in cols]
        out: list = []
        step = self.LOOKUP_MANY_KEYS
        for i in range(0, len(keys), step):
            part = keys[i : i + step]
            skey = (table, tuple(cols), len(part))
            sql = self._lookup_many_sql.get(skey)
            if sql is None:
                term = " AND ".join(f"{n} IS ?" for n in names)
                if len(names) > 1:
                    term = f"({term})"
                cond = " OR ".join([term] * len(part))
                sql = f"SELECT * FROM {q(schema.name)} WHERE {cond}"
                self._lookup_many_sql[skey] = sql
            params = [_param(v) for key in part for v in key]
            out.extend(self.reading.execute(sql, params).fetchall())
        return self._convert(table, out)

    # kinds SQLite orders as Python does (numbers numerically, text and ISO dates by code point);
    # other kinds (DECIMAL stored as NUMERIC loses digits, TIME, BYTES) are compared in Python
    _RANGE_SQL_KINDS = (V.INT, V.FLOAT, V.STR, V.DATE, V.DATETIME)

    def range_lookup(
        self,
        table: str,
        cols: list[int],
        key: tuple,
        col: int,
        lower: tuple | None,
        upper: tuple | None,
        limit: int | None = None,
        desc: bool = False,
    ) -> list[tuple]:
        """Rows whose ``cols`` equal ``key`` (NULL matches NULL) and whose column ``col`` lies
        between ``lower`` and ``upper``, each ``(value, inclusive)`` or None for no bound (NULL
        is never in range), ordered by ``col`` (descending when ``desc``), at most ``limit`` of
        them: a ranged upquery reaching base storage. An index on ``cols + [col]`` serves it."""
        schema = self.schemas[table.lower()]
        name = schema.columns[col].name
        kind = schema.columns[col].ctype.kind
        if kind not in self._RANGE_SQL_KINDS:
            rows = [r for r in self.lookup(table, cols, key) if _between(r[col], lower, upper)]
            rows.sort(key=lambda r: r[col], reverse=desc)
            return rows if limit is None else rows[:limit]
        keyed = kind == V.STR
        if keyed:
            # text compares under the engine's collation (the column's, in SQLite too), and the
            # bounds are collation keys: SQL gets a spelling of each (a KeyCut's real strings
            # around it), the keys decide below
            sql_lower, sql_upper, loose = _sql_bounds(lower, upper)
        else:
            sql_lower, sql_upper, loose = lower, upper, False
        sql_limit = None if loose else limit  # loose bounds: rows beyond are cut out below
        shape = (
            table,
            tuple(cols),
            col,
            None if sql_lower is None else sql_lower[1],
            None if sql_upper is None else sql_upper[1],
            sql_limit is not None,
            desc,
        )
        sql = self._range_sql.get(shape)
        if sql is None:
            conds = [f"{q(schema.columns[c].name)} IS ?" for c in cols]
            if sql_lower is None and sql_upper is None:
                conds.append(f"{q(name)} IS NOT NULL")
            if sql_lower is not None:
                conds.append(f"{q(name)} {'>=' if sql_lower[1] else '>'} ?")
            if sql_upper is not None:
                conds.append(f"{q(name)} {'<=' if sql_upper[1] else '<'} ?")
            sql = f"SELECT * FROM {q(schema.name)} WHERE {' AND '.join(conds)}"
            if sql_limit is not None:
                sql += f" ORDER BY {q(name)}{' DESC' if desc else ''} LIMIT ?"
            self._range_sql[shape] = sql
        params = [_param(v) for v in key]
        if sql_lower is not None:
            params.append(_param(sql_lower[0]))
        if sql_upper is not None:
            params.append(_param(sql_upper[0]))
        if sql_limit is not None:
            params.append(sql_limit)
        rows = self._convert(table, self.reading.execute(sql, params).fetchall())
        # the bounds again, in Python: the dataflow compares values as Python does (strings by
        # their collation keys)
        if not keyed:
            return [r for r in rows if _between(r[col], lower, upper)]
        rows = [r for r in rows if _between(ck(r[col]), lower, upper)]
        if loose and limit is not None:
            rows.sort(key=lambda r: ck(r[col]), reverse=desc)
            rows = rows[:limit]
        return rows

    # --- writes ----------------------------------------------------------------------------
    def _integrity(self, schema: TableSchema, e: sqlite3.IntegrityError, row=None):
        msg = str(e)
        if "NOT NULL" in msg:
            col = msg.rsplit(".", 1)[-1]
            return IntegrityError(f"Column '{col}' cannot be null", ER_BAD_NULL_ERROR, "23000")
        key = "PRIMARY"
        if "UNIQUE" in msg:
            cols = [c.split(".")[-1] for c in msg.split(":", 1)[-1].split(",")]
            idx = [schema.index_of(c.strip()) for c in cols]
            if schema.primary_key and idx == schema.primary_key:
                key = "PRIMARY"
            else:
                key = cols[0].strip()
                for n, u in enumerate(schema.uniques):
                    if u == idx and n < len(schema.unique_names) and schema.unique_names[n]:
                        key = schema.unique_names[n]
            if row is not None and all(i is not None for i in idx):
                entry = "-".join(V.format_value(row[i]) for i in idx)
                return IntegrityError(
                    f"Duplicate entry '{entry}' for key '{schema.name}.{key}'",
                    ER_DUP_ENTRY,
                    "23000",
                )
        return IntegrityError(
            f"Duplicate entry for key '{schema.name}.{key}'", ER_DUP_ENTRY, "23000"
        )

    def insert_plan(self, table: str) -> tuple[str, bool]:
        """(the INSERT of a full row into ``table``, whether its values are converted for
        storage): what ``insert_one`` takes, valid until the table's schema changes."""
        schema = self.schemas[table.lower()]
        sql = self._insert_sql.get(schema.name)
        if sql is None:
            names = ", ".join(q(c.name) for c in schema.columns)
            marks = ", ".join("?" for _ in schema.columns)
            sql = f"INSERT INTO {q(schema.name)} ({names}) VALUES ({marks})"
            self._insert_sql[schema.name] = sql
        return sql, self._converters.get(table.lower()) is not None

    def insert_one(self, table: str, plan: tuple[str, bool], row: list) -> None:
        """Insert one full row, which holds every value (none for SQLite to assign), by
        ``plan`` (``insert_plan(table)``)."""
        sql, needs_conv = plan
        try:
            self._insert_cur.execute(sql, [V.to_storage(v) for v in row] if needs_conv else row)
        except sqlite3.IntegrityError as e:
            raise self._integrity(self.schemas[table.lower()], e, row) from None
        except sqlite3.OperationalError as e:
            raise OperationalError(str(e)) from None

    def insert_rows(self, table: str, rows: list[list], auto_col: int | None) -> list[tuple]:
        """Insert full rows; a None in ``auto_col`` is assigned by SQLite. Returns stored rows."""
        schema = self.schemas[table.lower()]
        sql, needs_conv = self.insert_plan(table)
        out = []
        conn = self.conn
        try:
            if len(rows) == 1 and (auto_col is None or rows[0][auto_col] is not None):
                conn.execute(sql, [V.to_storage(v) for v in rows[0]] if needs_conv else rows[0])
                return [tuple(rows[0])]
            if auto_col is None or all(r[auto_col] is not None for r in rows):
                data = [[V.to_storage(v) for v in r] for r in rows] if needs_conv else rows
                conn.execute("SAVEPOINT bulk")
                try:
                    conn.executemany(sql, data)
                except sqlite3.IntegrityError as e:
                    bad = self._conflicting_row(sql, rows, data)
                    raise self._integrity(schema, e, bad) from None
                conn.execute("RELEASE bulk")
                return [tuple(r) for r in rows]
            name = schema.name
            counted = _inline_pk(schema)
            if counted and name in self._auto_behind:
                self._auto_catch_up(name)
            given = self._auto_given
            for k, r in enumerate(rows):
                try:
                    cur = conn.execute(sql, [V.to_storage(v) for v in r] if needs_conv else r)
                except sqlite3.IntegrityError:
                    if counted and r[auto_col] is None:
                        # the values InnoDB reserved for the statement's rows are spent: this
                        # row's and the rest's
                        rest = sum(1 for x in rows[k:] if x[auto_col] is None)
                        spent = self.next_auto_value(name) + rest
                        if spent > given.get(name, 0):
                            given[name] = spent
                        self._auto_behind.add(name)
                    raise
                if r[auto_col] is None:
                    r = list(r)
                    r[auto_col] = v = cur.lastrowid
                    if counted and v > given.get(name, 0):
                        given[name] = v
                out.append(tuple(r))
            return out
        except sqlite3.IntegrityError as e:
            bad = None
            if len(rows) == 1:
                bad = rows[0]
            raise self._integrity(schema, e, bad) from None
        except sqlite3.OperationalError as e:
            raise OperationalError(str(e)) from None

    def _conflicting_row(self, sql: str, rows, data):
        """After a bulk insert under SAVEPOINT bulk failed: the first row (of ``rows``, stored
        as ``data``) that conflicts, for the message; the savepoint is rolled back and ended."""
        conn = self.conn
        conn.execute("ROLLBACK TO bulk")
        bad = None
        for r, d in zip(rows, data):
            try:
                conn.execute(sql, d)
            except sqlite3.IntegrityError:
                bad = r
                break
        conn.execute("ROLLBACK TO bulk")
        conn.execute("RELEASE bulk")
        return bad

    def insert_stored(self, table: str, rows: list, mode: str = "error") -> int:
        """Insert full rows already in storage form (``to_storage``), every column given.
        ``mode``: "error" (a key conflict raises, nothing of this call is kept), "ignore" (a
        conflicting row is left out) or "replace" (rows in its way are deleted, as MySQL's
        REPLACE does). Returns the rows inserted."""
        schema = self.schemas[table.lower()]
        names = ", ".join(q(c.name) for c in schema.columns)
        marks = ", ".join("?" for _ in schema.columns)
        verb = {"error": "INSERT", "ignore": "INSERT OR IGNORE", "replace": "INSERT OR REPLACE"}
        sql = f"{verb[mode]} INTO {q(schema.name)} ({names}) VALUES ({marks})"
        conn = self.conn
        conn.execute("SAVEPOINT bulk")
        before = conn.total_changes
        try:
            conn.executemany(sql, rows)
        except sqlite3.IntegrityError as e:
            bad = self._conflicting_row(sql, rows, rows)
            raise self._integrity(schema, e, bad) from None
        except sqlite3.OperationalError as e:
            conn.execute("ROLLBACK TO bulk")
            conn.execute("RELEASE bulk")
            raise OperationalError(str(e)) from None
        conn.execute("RELEASE bulk")
        if mode == "error":
            return len(rows)
        # total_changes counts the rows REPLACE deleted too; count what the table gained
        return conn.total_changes - before if mode == "ignore" else len(rows)

    def update_rows(self, table: str, changes: list[tuple[int, tuple]]) -> None:
        schema = self.schemas[table.lower()]
        sets = ", ".join(f"{q(c.name)} = ?" for c in schema.columns)
        sql = f"UPDATE {q(schema.name)} SET {sets} WHERE rowid = ?"
        try:
            self.conn.executemany(
                sql, [[V.to_storage(v) for v in row] + [rowid] for rowid, row in changes]
            )
        except sqlite3.IntegrityError as e:
            bad = changes[0][1] if len(changes) == 1 else None
            raise self._integrity(schema, e, bad) from None
        if _inline_pk(schema):
            # MySQL: a key moved above the AUTO_INCREMENT counter moves the counter past it,
            # so that key is never given out again, even once its row is gone (SQLite's
            # counter only follows inserts)
            pk = schema.primary_key[0]
            moved = [row[pk] for rowid, row in changes if row[pk] != rowid]
            if moved:
                top = max(moved)
                if top > self.next_auto_value(table):
                    self._store_counter(schema.name, top)

    def delete_rows(self, table: str, rowids: list[int]) -> None:
        schema = self.schemas[table.lower()]
        self.conn.executemany(
            f"DELETE FROM {q(schema.name)} WHERE rowid = ?", [(r,) for r in rowids]
        )

    def reset_auto_increment(self, table: str) -> None:
        name = self.schemas[table.lower()].name
        self.conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
        self._auto_given.pop(name, None)
        self._auto_behind.discard(name)

    def _auto_catch_up(self, name: str) -> None:
        """Before table ``name`` generates a value: its counter no lower than the highest
        value it gave out (a rollback or a refused row may have undone SQLite's)."""
        self._auto_behind.discard(name)
        top = self._auto_given.get(name, 0)
        if top > self.next_auto_value(name):
            self._store_counter(name, top)

    def set_auto_increment(self, table: str, value: int) -> bool:
        """``AUTO_INCREMENT = value`` (ALTER TABLE, a CREATE TABLE option): the next key given
        is ``value``, or one above the largest key the table holds if that is larger (MySQL
        does not move the counter below a key in use); True once set. For a key that is not one
        AUTO_INCREMENT integer there is no counter to set: False (a table without an AUTO_INCREMENT column
        has nothing to set either, and MySQL accepts the option)."""
        schema = self.schemas[table.lower()]
        if not _inline_pk(schema):
            return schema.auto_increment is None
        col = schema.columns[schema.primary_key[0]].name
        top = self.conn.execute(f"SELECT MAX({q(col)}) FROM {q(schema.name)}").fetchone()[0]
        seq = max(int(value) - 1, top or 0)
        self._store_counter(schema.name, seq)
        self._auto_given[schema.name] = seq  # (MySQL may move it down to the largest key)
        self._auto_behind.discard(schema.name)
        return True

    def _store_counter(self, name: str, seq: int) -> None:
        """Set the AUTO_INCREMENT counter of the SQLite table ``name``: the last key given."""
        self.conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
        self.conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (name, seq))

    def next_auto_value(self, table: str) -> int | None:
        try:
            row = self.conn.execute(
                "SELECT seq FROM sqlite_sequence WHERE name = ?",
                (self.schemas[table.lower()].name,),
            ).fetchone()
        except sqlite3.OperationalError:  # no AUTOINCREMENT table yet: no sqlite_sequence
            return 0
        return row[0] if row else 0

    def close(self) -> None:
        try:
            self.commit()
        finally:
            if self.rconn is not None:
                if self.rconn.in_transaction:
                    self.rconn.execute("COMMIT")
                self.rconn.close()
            self.conn.close()
            if self._tmpdir is not None:
                shutil.rmtree(self._tmpdir, ignore_errors=True)

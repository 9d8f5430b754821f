"""A consistent snapshot of the upstream's tables, loaded into base storage as its mirror.

One ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` on the upstream reads every table as of
one binlog position: on MariaDB the position the snapshot was taken at comes with it
(``binlog_snapshot_file`` / ``binlog_snapshot_position``, exact without any lock); on MySQL the
tables are read-locked (``FLUSH TABLES WITH READ LOCK``) for the moment it takes to open the
snapshot and read ``SHOW MASTER STATUS``. The binlog is then replayed from exactly that
position, so the mirror never misses or repeats a change.

Each table is created in the engine from the upstream's own ``SHOW CREATE TABLE`` and its rows
streamed in batches into the engine's bulk load path (``Engine.load_stored``: one
``executemany`` per batch). Only tables with a primary key are mirrored: replication applies
row images by primary key, which is what makes it exact (and idempotent); a query over another
table is answered by the upstream.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import re
import time
from collections.abc import Callable, Iterator

from .. import errors as E
from ..sql import values as V
from .source import Position, UpstreamURL, check_binlog, current_position, is_mariadb

STATE_TABLE = "__noria_upstream"  # base storage's own table: where the mirror is in the binlog
BATCH_ROWS = 20_000


@dataclasses.dataclass
class SnapshotReport:
    position: Position  # replication starts here
    tables: dict[str, int]  # mirrored table -> rows loaded
    skipped: dict[str, str]  # table -> why it is not mirrored
    seconds: float
    spark: list[str] = dataclasses.field(default_factory=list)  # tables Spark read over JDBC
    # with Spark tables: the upstream's position once Spark had read them; the mirror is exact
    # when replication (from ``position``, applying row images by key) has reached it
    exact_at: Position | None = None
    # a whole snapshot's views as defined here: name -> the upstream's text (``sync_views``)
    views: dict[str, str] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def acting(engine, txn) -> Iterator[None]:
    """Run engine calls that use the current transaction (``load_stored``, ``load_rows``) as
    ``txn``, under the engine lock."""
    with engine.lock:
        prev = engine._cur
        engine._cur = txn
        try:
            yield
        finally:
            engine._cur = prev


def mirror_txn(engine):
    """The transaction state replication and snapshots write with: foreign keys are not
    checked (the upstream checked them; tables load in any order)."""
    t = engine.new_txn()
    t.fk_checks = False
    return t


def ensure_state_table(engine) -> None:
    engine.storage.conn.execute(
        f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "source TEXT NOT NULL, file TEXT NOT NULL, pos INTEGER NOT NULL, skipped TEXT, "
        "exact_file TEXT, exact_pos INTEGER)"
    )


def saved_position(engine, url: UpstreamURL) -> tuple[Position, dict, Position | None] | None:
    """Where the mirror in base storage is, if it mirrors ``url``: the binlog position it has
    applied, the tables not mirrored, and the position from which it is exact (a snapshot
    with tables Spark read; None: it is exact wherever it is)."""
    import json

    ensure_state_table(engine)
    row = engine.storage.conn.execute(
        f"SELECT source, file, pos, skipped, exact_file, exact_pos FROM {STATE_TABLE} WHERE id = 1"
    ).fetchone()
    if row is None or row[0] != _source_key(url):
        return None
    exact = Position(row[4], row[5]) if row[4] else None
    return Position(row[1], row[2]), json.loads(row[3] or "{}"), exact


def save_position(
    engine,
    url: UpstreamURL,
    pos: Position,
    skipped: dict | None = None,
    exact_at: Position | None = None,
) -> None:
    """Record the applied position (inside base storage's open write transaction, if any, so
    it commits with the rows it covers); with ``skipped``, a new snapshot's state."""
    import json

    if skipped is None:
        engine.storage.conn.execute(
            f"UPDATE {STATE_TABLE} SET file = ?, pos = ? WHERE id = 1", (pos.file, pos.pos)
        )
        return
    engine.storage.conn.execute(
        f"INSERT OR REPLACE INTO {STATE_TABLE} "
        "(id, source, file, pos, skipped, exact_file, exact_pos) VALUES (1, ?, ?, ?, ?, ?, ?)",
        (
            _source_key(url),
            pos.file,
            pos.pos,
            json.dumps(skipped),
            exact_at.file if exact_at else None,
            exact_at.pos if exact_at else None,
        ),
    )


def _source_key(url: UpstreamURL) -> str:
    return f"{url.host}:{url.port}/{url.database}"


def open_snapshot(conn) -> Position:
    """Start a consistent-snapshot transaction on ``conn``; returns its binlog position."""
    with conn.cursor() as cur:
        if is_mariadb(conn):
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
            status = {k.lower(): v for k, v in cur.fetchall()}
            return Position(status["binlog_snapshot_file"], int(status["binlog_snapshot_position"]))
        cur.execute("FLUSH TABLES WITH READ LOCK")
        try:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            cur.execute("SHOW MASTER STATUS")
            row = cur.fetchone()
        finally:
            cur.execute("UNLOCK TABLES")
        return Position(row[0], int(row[1]))


def base_tables(conn) -> list[str]:
    with conn.cursor() as cur:
        cur.execute("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'")
        return [r[0] for r in cur.fetchall()]


def _show_create(conn, table: str) -> str | None:
    import pymysql

    with conn.cursor() as cur:
        try:
            cur.execute(f"SHOW CREATE TABLE `{table.replace('`', '``')}`")
        except pymysql.err.ProgrammingError:
            return None  # gone
        return cur.fetchone()[1]


VIEW_REASON = "its view definition is not supported here"
_VIEW_HEAD = re.compile(
    r"^\s*create\s+(?:or\s+replace\s+)?(?:algorithm\s*=\s*\w+\s+)?"
    r"(?:definer\s*=\s*(?:`(?:[^`]|``)*`|'[^']*'|[\w$.%-]+)(?:@(?:`(?:[^`]|``)*`|'[^']*'|[\w$.%-]+))?\s+)?"
    r"(?:sql\s+security\s+\w+\s+)?view\s+",
    re.I | re.S,
)


def upstream_views(conn) -> dict[str, str]:
    """The upstream database's views: name -> ``CREATE VIEW name AS <select>`` (the
    upstream's own text of the SELECT, without its ALGORITHM, DEFINER and SECURITY clauses,
    which say nothing about the rows)."""
    import pymysql

    out = {}
    with conn.cursor() as cur:
        cur.execute("SHOW FULL TABLES WHERE Table_type = 'VIEW'")
        names = [r[0] for r in cur.fetchall()]
        for name in names:
            try:
                cur.execute(f"SHOW CREATE VIEW `{name.replace('`', '``')}`")
            except pymysql.err.MySQLError:
                continue  # dropped meanwhile, or invalid upstream too
            text = cur.fetchone()[1]
            m = _VIEW_HEAD.match(text)
            if m is None:
                continue
            text = text[m.end() :]
            text = re.sub(
                r"\s+with\s+(?:cascaded\s+|local\s+)?check\s+option\s*$", "", text, flags=re.I
            )
            out[name] = "CREATE VIEW " + text
    return out


def sync_views(engine, txn, conn, have: dict[str, str]) -> dict[str, str]:
    """Make the engine's views those of the upstream (``upstream_views``): a view gone or
    changed upstream is dropped here, a new or changed one created, views over views in the
    order they need. Returns the views that could not be defined here, with why: queries over
    them are answered by the upstream. ``have``: the definitions this process synced before
    (name -> text), updated here; a view of the engine not in it is created again."""
    wanted = upstream_views(conn)
    with acting(engine, txn):
        for name in list(engine.view_names.values()):
            if have.get(name) is None or have.get(name) != wanted.get(name):
                engine.execute(f"DROP VIEW IF EXISTS `{name.replace('`', '``')}`", (), txn)
                have.pop(name, None)
        todo = {n: sql for n, sql in wanted.items() if n.lower() not in engine.view_names}
        failed: dict[str, str] = {}
        while todo:
            progress = False
            failed = {}
            for name, sql in list(todo.items()):
                try:
                    engine.execute(sql, (), txn)
                except E.Error as e:
                    failed[name] = f"{VIEW_REASON}: {e}"
                    continue
                have[name] = sql
                del todo[name]
                progress = True
            if not progress:
                break
    return failed


def drop_mirror(engine, txn, table: str) -> None:
    """Drop the mirror of ``table`` and every query over it (compiled again when next read)."""
    if table.lower() in engine.storage.schemas:
        engine.execute(f"DROP TABLE `{table.replace('`', '``')}`", (), txn)


def snapshot(
    engine,
    url: UpstreamURL,
    tables: list[str] | None = None,
    progress: Callable[[str, int], None] | None = None,
    spark_rows: int | None = None,
    spark_master: str | None = None,
    spark_config: dict | None = None,
) -> SnapshotReport:
    """Mirror ``tables`` (None: every base table of the upstream database) in ``engine`` as of
    one consistent snapshot; returns its position. A table mirrored before is replaced.

    ``spark_rows``: tables the upstream estimates at that many rows or more are read by Spark
    over JDBC, in parallel ranges of an integer primary key (``noria_py.spark.backfill``), on
    connections of their own, so not as of the snapshot: the report's ``exact_at`` says from
    which position on the binlog's row images (replayed from the snapshot's position, by
    primary key) make the mirror exact. None: no table goes to Spark."""
    start = time.perf_counter()
    conn = url.connect()
    big: list[str] = []
    try:
        check_binlog(conn)
        pos = open_snapshot(conn)
        names = base_tables(conn) if tables is None else tables
        if spark_rows is not None:
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES "
                    "WHERE TABLE_SCHEMA = %s",
                    (url.database,),
                )
                estimate = {n: r or 0 for n, r in cur.fetchall()}
            big = [n for n in names if estimate.get(n, 0) >= spark_rows]
        txn = mirror_txn(engine)
        creates = {}
        skipped: dict[str, str] = {}
        for name in names:
            ddl = _show_create(conn, name)
            if ddl is not None:
                creates[name] = ddl
        for name in creates:
            drop_mirror(engine, txn, name)
        for name, ddl in creates.items():
            try:
                engine.execute(ddl, (), txn)
            except E.Error as e:
                skipped[name] = f"its definition is not supported here: {e}"
                continue
            if not engine.storage.schemas[name.lower()].primary_key:
                drop_mirror(engine, txn, name)
                skipped[name] = "no primary key: its binlog rows cannot be applied exactly"
        big = [n for n in big if n in creates and n not in skipped]
        loaded = {}
        for name in creates:
            if name in skipped or name in big:
                continue
            loaded[name] = _copy_rows(engine, txn, conn, name, progress)
        views: dict[str, str] = {}
        if tables is None:
            skipped.update(sync_views(engine, txn, conn, views))
        with conn.cursor() as cur:
            cur.execute("COMMIT")
        exact_at = None
        for name in big:
            loaded[name] = _spark_copy(engine, txn, conn, url, name, spark_master, spark_config)
            if progress is not None:
                progress(name, loaded[name])
        if big:
            exact_at = current_position(conn)
    finally:
        conn.close()
    took = time.perf_counter() - start
    return SnapshotReport(pos, loaded, skipped, took, big, exact_at, views)


SPARK_PARTITIONS = 8


def _spark_copy(engine, txn, conn, url: UpstreamURL, name: str, master, config) -> int:
    """One table read by Spark over JDBC (ranges of its integer primary key in parallel)
    into its empty mirror; rows already there (none, or a row a range read twice) are
    replaced."""
    from ..spark.backfill import backfill

    schema = engine.storage.schemas[name.lower()]
    quoted = f"`{name.replace('`', '``')}`"
    options = {"dbtable": quoted, "user": url.user, "password": url.password}
    pk = schema.primary_key
    if len(pk) == 1 and schema.columns[pk[0]].ctype.kind == V.INT:
        column = schema.columns[pk[0]].name
        qcol = f"`{column.replace('`', '``')}`"
        with conn.cursor() as cur:
            cur.execute(f"SELECT MIN({qcol}), MAX({qcol}) FROM {quoted}")
            lo, hi = cur.fetchone()
        if lo is not None and hi > lo:
            options.update(
                partitionColumn=column,
                lowerBound=str(lo),
                upperBound=str(hi + 1),
                numPartitions=str(SPARK_PARTITIONS),
            )
    source = f"jdbc:mariadb://{url.host}:{url.port}/{url.database}"
    with acting(engine, txn):
        return int(
            backfill(
                engine,
                schema.name,
                source,
                options=options,
                spark_master=master,
                spark_config=config,
                on_duplicate="replace",
                progress=False,
                via="spark",
            )
        )


def _copy_rows(engine, txn, conn, name: str, progress) -> int:
    """Stream one table's rows from the snapshot into its mirror, a batch at a time."""
    import pymysql.cursors

    schema = engine.storage.schemas[name.lower()]
    names = [c.name for c in schema.columns]
    select = "SELECT " + ", ".join(f"`{n.replace('`', '``')}`" for n in names)
    total = 0
    cur = conn.cursor(pymysql.cursors.SSCursor)
    try:
        cur.execute(f"{select} FROM `{name.replace('`', '``')}`")
        while True:
            batch = cur.fetchmany(BATCH_ROWS)
            if not batch:
                break
            load_batch(engine, txn, schema, batch)
            total += len(batch)
            if progress is not None:
                progress(name, total)
    finally:
        cur.close()
    return total


def load_batch(engine, txn, schema, batch: list) -> None:
    """Rows as the upstream's driver returns them (every column, in order) into a mirror
    that holds none of them yet: converted column by column (``_column``), then one bulk
    load."""
    if not batch:
        return
    internal = []
    stored = []
    for values, col in zip(zip(*batch), schema.columns):
        ours, theirs = _column(list(values), col.ctype, col.name)
        internal.append(ours)
        stored.append(theirs)
    with acting(engine, txn):
        # the engine's values only when a delta is needed (views over the table)
        engine.load_stored(schema.name, list(zip(*stored)), lambda: list(zip(*internal)))


_INT64 = (-(2**63), 2**63 - 1)


def _column(values: list, ctype, name: str) -> tuple[list, list]:
    """One column of a batch as the engine's values and base storage's. The upstream's
    driver returns each column's values in its one Python type (int for integers, Decimal at
    the column's scale, str, datetime, date): those convert without a check per value; any
    other column goes through the engine's coercion value by value."""
    kind = ctype.kind
    present = [v for v in values if v is not None]
    types = {v.__class__ for v in present}
    if not present:
        return values, values
    if len(types) == 1:
        (t,) = types
        if kind == V.INT and t is int and _INT64[0] <= min(present) <= max(present) <= _INT64[1]:
            return values, values
        if kind == V.STR and t is str and ctype.values is None:
            return values, values
        if (
            kind == V.DECIMAL
            and t is decimal.Decimal
            and all(v.as_tuple().exponent == -(ctype.scale or 0) for v in present)
        ):
            return values, [None if v is None else format(v, "f") for v in values]
        if kind == V.DATETIME and t is datetime.datetime:
            return values, [None if v is None else v.isoformat(" ") for v in values]
        if kind == V.DATE and t is datetime.date:
            return values, [None if v is None else v.isoformat() for v in values]
    ours = [None if v is None else V.coerce_for_column(v, ctype, name) for v in values]
    return ours, [None if v is None else V.to_storage(v) for v in ours]

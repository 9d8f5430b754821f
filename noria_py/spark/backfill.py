"""Backfill a base table from a large source through Spark, in Arrow batches.

    conn = noria_py.connect("app.db")
    conn.backfill("votes", "/data/votes.parquet")                 # Parquet file or directory
    conn.backfill("votes", "votes.csv")                           # CSV with a header line
    conn.backfill("votes", "jdbc:postgresql://db/app", options={"dbtable": "votes"})
    conn.backfill("votes", spark_dataframe, on_duplicate="ignore")

    noria-py load votes --data app.db --parquet /data/votes.parquet
    python -m noria_py.spark.backfill votes --data app.db --csv votes.csv

How a backfill runs:

1. Spark reads the source (schema only; nothing is loaded yet). A CSV file is read as RFC 4180
   with a header, every field as text, the way MySQL's ``LOAD DATA ... FIELDS TERMINATED BY ','
   OPTIONALLY ENCLOSED BY '"' ESCAPED BY ''`` reads it (see ``_read_csv``); one pass over its
   files then refuses malformed rows (too few or too many fields, an unterminated quote) by
   row number, before anything else.
2. Each column of the table is taken from the source column of the same name (case-insensitive)
   and cast to the Spark type matching the column's kind. A table column the source lacks is
   left to its default (an error if it has none and is NOT NULL); a source column the table does
   not have is an error (a misspelt header), unless ``ignore_columns`` names it. Text with a UTC
   offset for a DATETIME is converted to UTC, as a zoned Parquet timestamp is.
3. Validation (``validate=True``), in the same Spark pass that reads the rows
   (``_check_while_reading``): each row comes cast, with its problems beside it: values that
   casting turns into NULL (``'abc'`` for an INT), integers out of the column's range, strings
   longer than the column and NULLs in NOT NULL columns. Spark's JVM converts each partition
   to Arrow record batches (no Python worker runs, so a DataFrame from the user's own session
   works even when its workers' Python lacks pyarrow); the driver streams them partition by
   partition (``toLocalIterator``: never a Python object per data row), checks each as it
   arrives and holds it (in memory up to 1 GB, then in a temporary Arrow file); with
   ``on_duplicate="error"`` the keys the source repeats are then found in Arrow. Any of these
   raises before a single row is loaded, listing up to MAX_ERRORS rows (row number for CSV),
   columns and values. With ``validate=False`` each batch carries its rows' problems and a bad
   batch is refused the same way, after the batches before it were loaded. (``ONE_PASS =
   False``, and a load that skips bad rows: one aggregation over the source counts the same
   problems and each key's distinct values, then a second read loads.)
4. Loading: the checked batches go to base storage, when no view in this process reads the
   table, in writes of up to ``loader.WRITE_ROWS`` rows (``loader.load_tables``: one
   transaction and one ``executemany`` each); otherwise each batch of ``batch_rows`` rows goes
   to ``Engine.load_arrow``, which coerces it to the column types, inserts it into base storage
   in one transaction and pushes it through the dataflow as one delta.

Duplicate keys (``on_duplicate``): ``"error"`` (the default) refuses keys repeated in the source
before loading anything, and stops at a batch whose keys are already in the table (batches loaded
before it stay loaded, the error says how many rows; rerun with ``"ignore"`` to resume);
``"ignore"`` keeps the row already there; ``"replace"`` lets the loaded row win. Between
duplicates inside the source, ``"ignore"`` keeps the first Spark delivers and ``"replace"`` the
last; give a sorted DataFrame if that order matters.

Writes arriving during a backfill are neither lost nor applied twice. The engine runs one
operation at a time (the loop holds ``engine.lock`` around each batch, for hosts that call the
engine from several threads), and a ``load_arrow`` call is atomic: one SQLite transaction, then
one delta through the dataflow, both finished before the call returns. Any other write therefore
falls strictly between two batches. It sees base storage and every view with batches 1..k applied
and none after; it is applied to storage and the dataflow in one step, once, with its own delta;
later batches go on top of it, and their deltas hold only the rows they actually stored. A later
batch row with the same key as such a write is a duplicate like any other (``on_duplicate``
decides). ``on_batch`` is called between batches, which is how the tests interleave writes.

The driver receives about two partitions of batches at a time (one being read, one
prefetched); when the rows are counted first (a JDBC source's ``COUNT(*)``, or the separate
checking pass), the streaming pass repartitions (a shuffle) so no partition holds more than
MAX_CELLS_PER_PARTITION values. Between duplicates inside the source, which one is
"first" then follows the shuffled order.

A validated source is read once (step 3); a CSV file is parsed once and kept (memory, then
disk) for the check of its files' shape and the pass that checks its values. For a JDBC source
the database's own ``COUNT(*)`` sizes the partitions. A MySQL or MariaDB table with an integer
primary key is read in key ranges in parallel when ``numPartitions`` asks for it
(``jdbc.partitioning``). Without validation (or when skipping bad rows) the source is read
twice; pass a cached DataFrame to read it once.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
import itertools
import operator
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .. import errors as E
from ..sql import values as V
from . import jdbc
from .session import get_session, require_pyspark

ON_DUPLICATE = ("error", "ignore", "replace")
DEFAULT_BATCH_ROWS = 200_000
FILE_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".orc": "orc",
    ".avro": "avro",
}
# Base storage holds 64-bit signed integers: BIGINT UNSIGNED stops at 2^63 - 1 (as on INSERT).
_UBIGINT_RANGE = (0, V.I64_MAX)
# Values (rows x columns) per Spark partition beyond which the load pass repartitions: the
# driver holds about two partitions (one loading, one prefetched) at a time.
MAX_CELLS_PER_PARTITION = 4_000_000
# How many example keys or values an error message quotes.
_EXAMPLES = 3
# A validated load checks the rows while reading them, in one Spark pass, and holds them for
# the load (``_check_while_reading``); False: a separate checking aggregation over the source
# (``_validate``), which a load that skips bad rows uses, then a second read for the load (the
# tests compare the two).
ONE_PASS = True


@dataclass(slots=True)
class _Target:
    """One table column and the source column it is loaded from (None: left to the default)."""

    column: Any  # storage ColumnDef
    source: str | None


def backfill(
    engine,
    table: str,
    source,
    *,
    format: str | None = None,  # noqa: A002 - the name Spark's readers use
    options: dict[str, Any] | None = None,
    spark_master: str | None = None,
    spark_config: dict[str, str] | None = None,
    on_duplicate: str = "error",
    batch_rows: int | None = None,
    progress: bool = True,
    validate: bool = True,
    on_batch: Callable[[Any, int], None] | None = None,
    ignore_columns: list[str] | tuple[str, ...] = (),
    skip_bad_rows: bool = False,
    via: str | None = None,
    create: bool = False,
    primary_key: list[str] | tuple[str, ...] = (),
) -> int:
    """Load ``table`` from ``source``; return the number of rows handed to the engine.

    ``via``: ``"local"`` reads a local file (CSV, Parquet, JSON lines), a pandas DataFrame or a
    pyarrow Table in this process with Arrow, without Spark (``noria_py.loader``); ``"client"``
    reads a ``jdbc:mysql://`` or ``jdbc:mariadb://`` source with the database's client program,
    without Spark (``noria_py.mysql_client``); ``"spark"`` reads through Spark; None (the
    default) picks local for those sources and the client for such a JDBC source it can read,
    unless a Spark master or configuration is given, and Spark for everything else (other JDBC
    sources, ORC, Avro, remote paths, Spark DataFrames). All follow the same rules.

    ``source``: a path (Parquet file or directory, CSV with a header, JSON, ORC), a JDBC URL
    (``options={"dbtable": ...}`` or ``{"query": ...}``) or a pyspark DataFrame. ``format``
    overrides the format guessed from the path; ``options`` go to Spark's reader (for CSV,
    ``header`` defaults to true). ``spark_master`` and ``spark_config`` apply when this call
    starts the Spark session. ``on_duplicate``: ``"error"``, ``"ignore"`` or ``"replace"`` (see
    the module docs). ``progress`` shows rows, rows/s and the time left on stderr.
    ``validate=False`` skips the checking pass: values are then checked batch by batch while
    loading, and a bad one stops the load at its batch (batches before it stay loaded); a CSV
    file's rows are still checked for their shape first. ``on_batch(arrow_table, rows_so_far)``
    runs after each batch. ``ignore_columns`` names source columns to leave out (any other
    source column the table lacks is an error).

    ``create=True`` first creates the table (it must not exist) with a column per source column,
    typed from the source as ``noria_py.loader.arrow_column_type`` describes (through Spark:
    ``spark_create_table_sql``), and ``primary_key`` as its key (a MySQL or MariaDB table read
    over JDBC: its own key and column types unless ``primary_key`` is given).

    ``skip_bad_rows=True`` loads the rows that fit and leaves out the others (malformed records,
    values that do not fit their column, NULLs in NOT NULL columns) instead of refusing the load:
    the result, an int, then has ``skipped`` (their count) and ``problems`` (the first of them).

    Raises DataError (a column missing, not convertible, out of range, too long), IntegrityError
    (NULL in a NOT NULL column, duplicate keys), ProgrammingError (unknown table, bad options) and
    OperationalError (Spark could not read the source).
    """
    from ..loader import DEFAULT_BATCH_ROWS as LOCAL_BATCH_ROWS
    from ..loader import is_local_source, load

    if via not in (None, "local", "spark", "client"):
        raise E.ProgrammingError(
            "via must be 'local', 'spark', 'client' or None (the one that suits the source)"
        )
    spark_wanted = spark_master is not None or bool(spark_config)
    if via in ("local", "client") and spark_wanted:
        raise E.ProgrammingError(f"a Spark master or configuration needs via='spark', not {via!r}")
    local = via == "local" or (via is None and not spark_wanted and is_local_source(source, format))
    client = None
    if via == "client" or (via is None and not spark_wanted and _is_jdbc(source, format)):
        # a MySQL or MariaDB source its own client program reads, without Spark
        from ..mysql_client import plan

        client = plan(os.fspath(source) if source is not None else source, options)
        if client is None and via == "client":
            raise E.ProgrammingError(
                "via='client' reads a jdbc:mysql:// or jdbc:mariadb:// source with the options"
                " dbtable or query, user and password, with the mariadb (or mysql) client"
                " program installed, and no BIT or spatial column: give via='spark' otherwise"
            )
    if create:
        _create(
            engine,
            table,
            source,
            format,
            options,
            primary_key,
            local,
            spark_master,
            spark_config,
            client,
        )
    elif primary_key:
        raise E.ProgrammingError("primary_key goes with create=True")
    if local or client is not None:
        if client is not None:
            # a checked load reads its source twice when the checked batches outgrow the
            # loader's cache: the second time from a copy of the client's output, so the
            # rows loaded are the rows checked, and the server is asked once
            client.keep_copy = validate or skip_bad_rows
        try:
            res = load(
                engine,
                table,
                source if client is None else client,
                format=format,
                options=options if client is None else None,
                on_duplicate=on_duplicate,
                batch_rows=batch_rows or LOCAL_BATCH_ROWS,
                progress=progress,
                validate=validate,
                on_batch=on_batch,
                ignore_columns=ignore_columns,
                skip_bad_rows=skip_bad_rows,
            )
        finally:
            if client is not None:
                client.drop_copy()
        if client is not None:
            res.via = "client"
        return res
    if on_duplicate not in ON_DUPLICATE:
        raise E.ProgrammingError(f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}")
    batch_rows = batch_rows or DEFAULT_BATCH_ROWS
    if batch_rows < 1:
        raise E.ProgrammingError("batch_rows must be at least 1")
    schema = engine.storage.schemas.get(table.lower())
    if schema is None:
        raise E.no_such_table(table)
    require_pyspark()

    df, csv, jdbc_opts = _read(
        source, format=format, options=options, master=spark_master, config=spark_config
    )
    # A validated source other than a CSV file is read once, by one pass that checks the rows
    # as they arrive and holds them (``_check_while_reading``): the load then writes what was
    # checked (no second read, no checking aggregation with a count-distinct shuffle).
    once = validate and not skip_bad_rows and ONE_PASS
    expected = jdbc.row_count(df.sparkSession, jdbc_opts) if once and jdbc_opts else None
    kept = None
    if (validate and not once and jdbc_opts is not None) or (validate and csv is not None):
        # read the database once: the checking pass and the load pass see the same rows; and
        # parse a CSV file once (multi-line: one task reads it whole, for every pass: the
        # check of its files' shape, then the one checking its values while reading them)
        from pyspark import StorageLevel

        df = kept = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return _backfill(
            engine,
            schema,
            df,
            csv,
            ignore_columns=ignore_columns,
            on_duplicate=on_duplicate,
            batch_rows=batch_rows,
            progress=progress,
            validate=validate,
            on_batch=on_batch,
            skip_bad_rows=skip_bad_rows,
            once=once,
            expected=expected,
        )
    finally:
        if kept is not None:
            kept.unpersist()


def _is_jdbc(source, format) -> bool:  # noqa: A002
    return format == "jdbc" or (isinstance(source, str) and source.startswith("jdbc:"))


def _backfill(
    engine,
    schema,
    df,
    csv,
    *,
    ignore_columns,
    on_duplicate,
    batch_rows,
    progress,
    validate,
    on_batch,
    skip_bad_rows,
    once=False,
    expected=None,
):
    """The Spark load of ``df`` (see ``backfill``). ``once``: check the rows while reading
    them, hold them and load what was held (``df`` is read once; validation only);
    ``expected``: about how many rows ``df`` holds, if known (sizes partitions)."""
    from ..loader import LoadResult, load_tables, stopped_at

    targets = _match_columns(schema, df, csv, ignore_columns)
    raws = {t.column.name: _raw_expr(df, t, csv) for t in targets if t.source is not None}
    casts = {
        name: _cast_expr(df, t, raws[name]) for t in targets if (name := t.column.name) in raws
    }
    if not casts:
        raise E.DataError(f"the source has none of the columns of table '{schema.name}'")
    checks = _checks(df, targets, raws, casts, csv)
    problem = _problem_expr(checks)
    report = _Report(schema.name, df, csv, problem)
    skipped = 0
    lines: list[str] = []
    if skip_bad_rows:
        try:
            if csv is not None:
                report.first_ids = _first_ids(df)
            lines = report.examples()
            skipped = df.where(problem.isNotNull()).count() if lines else 0
        except _spark_errors() as e:
            raise E.OperationalError(
                f"Spark failed while checking the source: {_first_line(e)}"
            ) from e
        df = df.where(problem.isNull())
    elif csv is not None:
        _check_csv_files(df, csv, report)
    held = None
    if once:
        held = _check_while_reading(
            df, schema, targets, casts, on_duplicate, checks, report, batch_rows, expected
        )
        total = held.rows
    else:
        total = (
            _validate(df, schema, targets, casts, on_duplicate, checks, report)
            if validate
            else None
        )
    cast_df = None
    if held is None:
        cast_df = df.select(*[expr.alias(name) for name, expr in casts.items()])
        if not validate and not skip_bad_rows:
            # Each batch carries its rows' problems (NULL for a good row) and is refused with them.
            extra = [problem.alias(_PROBLEM)]
            if csv is not None:
                extra += [df[_ROWID], df[_FILE]]
            cast_df = df.select(*[expr.alias(name) for name, expr in casts.items()], *extra)
        if total is not None:
            cast_df = _small_partitions(cast_df, total, len(casts))

    lock = getattr(engine, "lock", None) or contextlib.nullcontext()
    loaded = 0
    batches = 0
    bulk = getattr(engine, "bulk_load", None)  # views over the table: rebuilt once, after
    with (
        bulk(schema.name, total) if bulk else contextlib.nullcontext(),
        _Progress(schema.name, total, enabled=progress) as bar,
    ):
        stream = held
        try:
            if stream is None:
                stream = _arrow_batches(cast_df, batch_rows)
            if validate and on_batch is None and not engine.has_views_over(schema.name):
                # checked rows and no delta to compute: writes of many batches each
                loaded = load_tables(engine, schema.name, stream, on_duplicate, bar)
                stream_left = ()
            else:
                stream_left = stream
            for arrow in stream_left:
                if not validate:
                    arrow = report.refuse_bad_rows(arrow, loaded)
                try:
                    with lock:
                        loaded += engine.load_arrow(schema.name, [arrow], on_duplicate)
                except E.IntegrityError as e:
                    raise stopped_at(e, schema.name, batches + 1, loaded) from e
                batches += 1
                bar.advance(arrow.num_rows)
                if on_batch is not None:
                    on_batch(arrow, loaded)
        except _spark_errors() as e:
            raise E.OperationalError(
                f"Spark failed while reading the source of '{schema.name}' after {loaded} rows"
                f" were loaded: {_first_line(e)}"
            ) from e
        finally:
            if stream is not None:
                stream.close()  # stops Spark's job when the load ends early
            if held is not None:
                held.close()
    return LoadResult(loaded, skipped, lines, via="spark")


def _small_partitions(df, rows: int, width: int):
    """``df`` in partitions of at most MAX_CELLS_PER_PARTITION values, for ``rows`` rows of
    ``width`` columns: the driver receives a whole partition at a time."""
    wanted = -(-rows * width // MAX_CELLS_PER_PARTITION)
    if wanted > 1 and wanted > df._jdf.rdd().getNumPartitions():  # (the JVM's: no Python RDD)
        return df.repartition(wanted)
    return df


def _create(
    engine,
    table,
    source,
    format,  # noqa: A002
    options,
    primary_key,
    local,
    master,
    config,
    client=None,
) -> None:
    from ..loader import create_table_sql, is_local_source

    if engine.storage.schemas.get(table.lower()) is not None:
        raise E.ProgrammingError(
            f"Table '{table}' already exists (create=True / --create makes a new table)",
            E.ER_TABLE_EXISTS_ERROR,
            "42S01",
        )
    # a MySQL or MariaDB table its client program reads: typed by the client too, without Spark
    sql = client.create_table_sql(table, primary_key) if client is not None else None
    if sql is None and (local or is_local_source(source, format)):
        sql = create_table_sql(
            table, source, format=format, options=options, primary_key=primary_key
        )
    elif sql is None:
        sql = spark_create_table_sql(
            table,
            source,
            format=format,
            options=options,
            primary_key=primary_key,
            master=master,
            config=config,
        )
    engine.execute(sql)


def spark_create_table_sql(
    table: str,
    source,
    *,
    format: str | None = None,  # noqa: A002
    options: dict[str, Any] | None = None,
    primary_key=(),
    master: str | None = None,
    config: dict[str, str] | None = None,
) -> str:
    """A ``CREATE TABLE`` for ``table`` from a source Spark reads (JDBC, a Spark DataFrame, ORC,
    Avro, a remote path): a column per source column, typed from its Spark type as
    ``noria_py.loader.arrow_column_type`` types the Arrow type Spark gives it (text and binary
    by their longest value, a timestamp DATETIME(6) when a value has a fraction of a second:
    one Spark job over the source). A MySQL or MariaDB table read over JDBC (``dbtable`` naming
    a table) keeps its own column types, NOT NULLs and primary key, from its
    ``information_schema``, where Spark's types lose them (TIME, the digits of a DATETIME,
    UNSIGNED); ``primary_key``, when given, names the key instead."""
    require_pyspark()
    if _is_jdbc(source, format):
        opts = {k: str(v) if not isinstance(v, str) else v for k, v in (options or {}).items()}
        opts.setdefault("url", os.fspath(source))
        if "dbtable" not in opts and "query" not in opts:
            raise E.ProgrammingError(
                "a JDBC source needs the dbtable option (or query): options={'dbtable': 'name'}"
            )
        spark = jdbc.session_for(opts, master, config)
        try:
            df = spark.read.format("jdbc").options(**opts).load()  # Spark's types, not text
            own = jdbc.table_columns(spark, opts)
        except _spark_errors() as e:
            raise E.OperationalError(
                f"Spark could not read {_describe(opts['url'], 'jdbc')}: {_hint(e, 'jdbc')}"
            ) from e
    else:
        df, _csv, _opts = _read(
            source, format=format, options=options, master=master, config=config
        )
        own = {}
    fields = [f for f in df.schema.fields if f.name not in _INTERNAL]
    names = {f.name.lower() for f in fields}
    missing = [k for k in primary_key if k.lower() not in names]
    if missing:
        raise E.ProgrammingError(
            f"the source has no column {', '.join(missing)} for the primary key"
        )
    if not primary_key:
        keyed = sorted((c.key, name) for name, c in own.items() if c.key)
        primary_key = [name for _k, name in keyed]
    keys = {k.lower() for k in primary_key}
    stats = _type_stats(df, [f for f in fields if getattr(own.get(f.name), "sql", None) is None])
    defs = []
    for f in fields:
        mine = own.get(f.name)
        nullable = mine.nullable if mine is not None else True
        if mine is not None and mine.sql is not None:
            sql = mine.sql
        else:
            sql = _spark_column_type(f, stats.get(f.name))
        if f.name.lower() in keys:
            nullable = False
        defs.append(f"{_quote_name(f.name)} {sql}{'' if nullable else ' NOT NULL'}")
    if primary_key:
        defs.append("PRIMARY KEY (" + ", ".join(_quote_name(k) for k in primary_key) + ")")
    return f"CREATE TABLE {_quote_name(table)} (\n  " + ",\n  ".join(defs) + "\n)"


def _quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _type_stats(df, fields) -> dict[str, Any]:
    """One Spark job: the longest value of each text or binary column and whether a timestamp
    column has a fraction of a second."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    aggs = []
    for i, f in enumerate(fields):
        c = F.col(_quote_name(f.name))
        if isinstance(f.dataType, (T.StringType, T.BinaryType)):
            aggs.append(F.max(F.length(c)).alias(f"s{i}"))
        elif isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)):
            fraction = F.unix_micros(c.cast(T.TimestampType())) % 1_000_000 != 0
            aggs.append(F.max(fraction.cast("int")).alias(f"s{i}"))
    if not aggs:
        return {}
    try:
        row = df.agg(*aggs).first()
    except _spark_errors() as e:
        raise E.OperationalError(f"Spark failed while typing the source: {_first_line(e)}") from e
    found = row.asDict()
    return {f.name: found[f"s{i}"] for i, f in enumerate(fields) if f"s{i}" in found}


def _spark_column_type(field, stat) -> str:
    """The MySQL type of a column created for a Spark column (see ``spark_create_table_sql``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_type

    from ..loader import arrow_column_type, binary_column_type, text_column_type

    t = field.dataType
    if isinstance(t, T.StringType):
        return text_column_type(stat)
    if isinstance(t, T.BinaryType):
        return binary_column_type(stat)
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return "DATETIME(6)" if stat else "DATETIME"
    try:
        arrow = to_arrow_type(t)
    except Exception:  # noqa: BLE001 - pyspark raises its own for types Arrow lacks
        arrow = None
    if arrow is None or pa.types.is_nested(arrow):
        raise E.DataError(
            f"no MySQL column type holds the source column {field.name!r} of Spark type"
            f" {t.simpleString()}"
        )
    return arrow_column_type(pa, pc, pa.array([], type=arrow))


def _first_ids(df) -> dict[str, int]:
    """Each CSV file's first row id (row numbers count from it)."""
    from pyspark.sql import functions as F

    rows = df.groupBy(_FILE).agg(F.min(_ROWID).alias("first")).collect()
    return {r[_FILE]: r["first"] for r in rows}


# --- reading ---------------------------------------------------------------------------------


# Internal columns a CSV source gets: Spark's text of a malformed record, an id that counts the
# records of each file in order (a multi-line CSV file is read whole by one task), the file.
_MALFORMED = "__noria_malformed"
_ROWID = "__noria_rowid"
_FILE = "__noria_file"
_PROBLEM = "__noria_problem"
_INTERNAL = (_MALFORMED, _ROWID, _FILE, _PROBLEM)
# What Spark is told stands for NULL: text no file holds, so every NULL it produces is an
# unquoted empty field (or a field a malformed record lacks).
_NO_NULL = "\u0000noria-no-null\u0000"
# RFC 4180, which Python's csv module, pandas and spreadsheets write.
CSV_DEFAULTS = {"header": "true", "sep": ",", "quote": '"', "escape": '"', "multiLine": "true"}
# How many problems (bad rows or values) an error lists.
MAX_ERRORS = 10


@dataclass(slots=True)
class _Csv:
    """What reading a CSV source adds: its columns, its NULL marker and where its files are."""

    columns: list[str]  # the header's names
    null_marker: str  # an unquoted field with this text is NULL ("": an unquoted empty field)
    path: str
    sep: str = ","
    quote: str = '"'
    header: bool = True


def read_source(
    source,
    *,
    format: str | None = None,  # noqa: A002
    options: dict[str, Any] | None = None,
    master: str | None = None,
    config: dict[str, str] | None = None,
):
    """A Spark DataFrame over ``source`` (path, JDBC URL or DataFrame), nothing read yet."""
    return _read(source, format=format, options=options, master=master, config=config)[0]


def _read(
    source,
    *,
    format: str | None = None,  # noqa: A002
    options: dict[str, Any] | None = None,
    master: str | None = None,
    config: dict[str, str] | None = None,
):
    """(DataFrame, _Csv or None, JDBC options or None): a CSV source gets its internal columns
    and reading rules; a JDBC source's options are those Spark reads it with."""
    require_pyspark()
    from pyspark.sql import DataFrame

    if isinstance(source, DataFrame):
        return source, None, None
    opts = {k: str(v) if not isinstance(v, str) else v for k, v in (options or {}).items()}
    text = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    if text is None:
        raise E.ProgrammingError(
            f"a backfill source is a path, a JDBC URL or a pyspark DataFrame, not {type(source).__name__}"
        )
    if text.startswith("jdbc:") or format == "jdbc":
        fmt = "jdbc"
        opts.setdefault("url", text)
        if "dbtable" not in opts and "query" not in opts:
            raise E.ProgrammingError(
                "a JDBC source needs the dbtable option (or query): options={'dbtable': 'name'}"
            )
    else:
        fmt = format or _guess_format(text)
    spark = jdbc.session_for(opts, master, config) if fmt == "jdbc" else get_session(master, config)
    try:
        if fmt == "csv":
            return (*_read_csv(spark, text, opts), None)
        if fmt == "jdbc":
            return jdbc.read(spark, opts), None, opts
        reader = spark.read.format(fmt).options(**opts)
        return reader.load(text), None, None
    except _spark_errors() as e:
        raise E.OperationalError(
            f"Spark could not read {_describe(text, fmt)}: {_hint(e, fmt)}"
        ) from e


def _read_csv(spark, path: str, opts: dict[str, str]):
    """A CSV file read as MySQL's LOAD DATA reads it with ``FIELDS TERMINATED BY ','
    OPTIONALLY ENCLOSED BY '"' ESCAPED BY ''`` (and ``IGNORE 1 LINES`` for the header).

    Every column is text; an unquoted empty field comes back NULL and a quoted one '' (the
    casts make both '', as LOAD DATA does), an unquoted ``NULL`` is NULL. A record with too few
    or too many fields (an unterminated quote makes one) keeps its text in ``_MALFORMED``.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    lowered = {k.lower(): k for k in opts}
    for banned in ("mode", "columnnameofcorruptrecord", "inferschema", "emptyvalue"):
        if banned in lowered:
            raise E.ProgrammingError(
                f"the CSV option {lowered[banned]} cannot be set: a malformed row is always an"
                " error, every field is read as text and cast to its column's type"
            )
    if path.lower().endswith(".tsv") and "sep" not in lowered and "delimiter" not in lowered:
        opts["sep"] = "\t"
    for key, value in CSV_DEFAULTS.items():
        if key.lower() not in lowered and not (key == "sep" and "delimiter" in lowered):
            opts[key] = value
    null_key = lowered.get("nullvalue")
    null_marker = opts.pop(null_key) if null_key else "NULL"
    opts.update(nullValue=_NO_NULL, emptyValue="", mode="PERMISSIVE")
    names = spark.read.options(**opts).csv(path).columns
    schema = T.StructType(
        [T.StructField(n, T.StringType()) for n in names]
        + [T.StructField(_MALFORMED, T.StringType())]
    )
    df = (
        spark.read.schema(schema)
        .options(**opts, columnNameOfCorruptRecord=_MALFORMED)
        .csv(path)
        .withColumn(_ROWID, F.monotonically_increasing_id())
        .withColumn(_FILE, F.input_file_name())
    )
    given = {k.lower(): v for k, v in opts.items()}
    return df, _Csv(
        names,
        null_marker,
        path,
        sep=given.get("sep", given.get("delimiter", ",")),
        quote=given.get("quote", '"'),
        header=str(given.get("header", "true")).lower() == "true",
    )


def _guess_format(path: str) -> str:
    local = "://" not in path or path.startswith("file:")
    if local:
        fs_path = path[len("file:") :] if path.startswith("file:") else path
        fs_path = fs_path.removeprefix("//")
        if not os.path.exists(fs_path):
            raise E.OperationalError(f"backfill source {path} does not exist")
        if os.path.isdir(fs_path):
            found = _first_data_file(fs_path)
            if found is None:
                raise E.ProgrammingError(
                    f"no data files in {path}; name the format with format=... (parquet, csv, ...)"
                )
            path = found
    for suffix, fmt in FILE_FORMATS.items():
        name = path.lower().removesuffix(".gz").removesuffix(".bz2").removesuffix(".snappy")
        if name.endswith(suffix):
            return fmt
    raise E.ProgrammingError(
        f"cannot tell the format of {path}; name it with format=... (parquet, csv, json, orc)"
    )


def _first_data_file(directory: str) -> str | None:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            if not name.startswith((".", "_")) and not name.endswith(".crc"):
                return os.path.join(root, name)
    return None


def _describe(text: str, fmt: str) -> str:
    if fmt == "jdbc":
        return f"the JDBC source {text.split('?')[0]}"
    return f"{fmt} source {text}"


def _hint(error: BaseException, fmt: str) -> str:
    msg = (jdbc.explain(error) if fmt == "jdbc" else None) or _first_line(error)
    if fmt == "jdbc" and "suitable driver" in str(error).lower():
        msg += (
            " (no JDBC driver for this URL is on Spark's classpath: add its jar with --jar PATH"
            " or spark_config={'spark.jars': '/path/driver.jar'}, and name its class with"
            " options={'driver': ...} if needed)"
        )
    return msg


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def _first_line(error: BaseException) -> str:
    """The useful line of a Spark error: the root Java cause, or a Python worker's last line."""
    java = getattr(error, "java_exception", None)
    if java is not None:
        with contextlib.suppress(Exception):
            while java.getCause() is not None:
                java = java.getCause()
            error = Exception(java.toString())
    text = str(error).strip()
    lines = [ln.strip() for ln in text.splitlines()]
    if any("Traceback (most recent call last)" in ln for ln in lines):
        # A Python worker failed: the exception line ends its traceback.
        tail = [ln for ln in text.splitlines() if ln and not ln[0].isspace()]
        tail = [ln for ln in tail if not ln.startswith(("SQLSTATE", "JVM stacktrace"))]
        if tail:
            return tail[-1].strip()
    for line in lines:
        if line and not line.startswith(("JVM stacktrace", "at ")):
            return line
    return text or type(error).__name__


# --- casting ---------------------------------------------------------------------------------


def _match_columns(schema, df, csv: _Csv | None, ignore=()) -> list[_Target]:
    """Pair each table column with its source column; a source column the table lacks (a typo
    in a CSV header, say) is an error, unless ``ignore`` names it."""
    ignored = {n.lower() for n in ignore}
    by_lower: dict[str, str] = {}
    for name in df.columns:
        if name in _INTERNAL or name.lower() in ignored:
            continue
        if name.lower() in by_lower:
            raise E.DataError(
                f"the source has two columns named '{name}' (names are case-insensitive)"
            )
        by_lower[name.lower()] = name
    table_names = {c.name.lower() for c in schema.columns}
    unknown = [n for low, n in by_lower.items() if low not in table_names]
    if unknown:
        absent = [c.name for c in schema.columns if c.name.lower() not in by_lower]
        where = "the CSV header" if csv is not None else "the source"
        msg = (
            f"{where} names column(s) {', '.join(repr(n) for n in unknown)} that table"
            f" '{schema.name}' does not have"
        )
        guesses = [
            f"'{n}' for '{m[0]}'"
            for n in unknown
            if (m := difflib.get_close_matches(n.lower(), [a.lower() for a in absent], 1, 0.6))
        ]
        if guesses:
            msg += f" (did you mean {', '.join(guesses)}?)"
        msg += (
            f"; the table's columns missing from the source: {', '.join(absent) or 'none'};"
            " nothing was loaded (leave a source column out with --ignore-column /"
            " ignore_columns=[...])"
        )
        raise E.DataError(msg, E.ER_BAD_FIELD_ERROR)
    targets = []
    for c in schema.columns:
        src = by_lower.get(c.name.lower())
        if src is None and not (c.nullable or c.has_default or c.auto_increment):
            shown = [n for n in by_lower.values()]
            raise E.DataError(
                f"column '{c.name}' of table '{schema.name}' is missing from the source and has no"
                f" default (source columns: {', '.join(shown) or 'none'})",
                E.ER_NO_DEFAULT_FOR_FIELD,
            )
        targets.append(_Target(c, src))
    return targets


def _spark_type(ctype):
    from pyspark.sql import types as T

    kind = ctype.kind
    if kind == V.INT:
        if ctype.mysql_name == "BIGINT" and ctype.unsigned:
            return T.DecimalType(20, 0)
        return T.LongType()
    if kind == V.DECIMAL:
        precision = min(ctype.precision or 10, 38)
        return T.DecimalType(precision, min(ctype.scale or 0, precision))
    if kind == V.FLOAT:
        return T.DoubleType()
    if kind == V.BYTES:
        return T.BinaryType()
    if kind == V.DATE:
        return T.DateType()
    if kind == V.DATETIME:
        return T.TimestampNTZType()
    return T.StringType()  # str, time


def _column(df, name: str):
    """Source column ``name`` of ``df``, quoted: its name may hold dots, spaces or backticks."""
    return df["`" + name.replace("`", "``") + "`"]


def _raw_expr(df, target: _Target, csv: _Csv | None):
    """The source column before casting, with a CSV file's NULLs and empty fields as LOAD DATA
    reads them: an empty field (quoted or not) is '', the NULL marker (unquoted) is NULL."""
    from pyspark.sql import functions as F

    src = _column(df, target.source)
    if csv is None:
        return src
    if csv.null_marker == "":
        return src  # an unquoted empty field is NULL, a quoted "" is ''
    return F.when(src.isNull(), F.lit("")).when(src == csv.null_marker, F.lit(None)).otherwise(src)


# A time of day followed by a UTC offset (or Z) ends a timestamp that names its zone.
_OFFSET = r"\d:\d\d(:\d\d(\.\d*)?)?\s*(Z|[+-]\d\d(:?\d\d)?)$"


def _cast_expr(df, target: _Target, raw):
    """The source column cast to the table column's Spark type (NULL where it cannot be)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = target.column
    src = raw
    src_type = df.schema[target.source].dataType
    want = _spark_type(col.ctype)
    is_text = isinstance(src_type, T.StringType)
    if is_text and col.ctype.kind not in (V.STR, V.BYTES, V.TIME):
        src = F.trim(src)
    if col.ctype.mysql_name == "JSON":
        # each value must be checked as JSON_VALID checks it (an INSERT or a local load does)
        raise E.NotSupportedError(
            "This version doesn't yet support 'a Spark load into a JSON column' (column "
            f"'{col.name}'): load the file without Spark, or through INSERT"
        )
    if col.ctype.mysql_name == "BIT" and (is_text or isinstance(src_type, T.BinaryType)):
        # MySQL writes text into a BIT column as its bytes ('1' is 0x31), not as the number
        raise E.NotSupportedError(
            "This version doesn't yet support 'a Spark load of text or bytes into a BIT "
            f"column' (column '{col.name}'): load numbers, or load through INSERT"
        )
    if col.ctype.kind == V.INT:
        # Whole numbers round half away from zero, as MySQL does on INSERT.
        if is_text:
            expr = F.round(src.try_cast(T.DecimalType(38, 6))).try_cast(want)
        elif isinstance(src_type, (T.FloatType, T.DoubleType, T.DecimalType)):
            expr = F.round(src).try_cast(want)
        else:
            expr = src.try_cast(want)
    elif col.ctype.kind == V.BYTES and not isinstance(src_type, (T.StringType, T.BinaryType)):
        expr = src.try_cast(T.StringType()).try_cast(want)
    elif col.ctype.kind == V.DATETIME and is_text:
        # Text naming its zone is converted to the session's zone (UTC), as a Parquet or Spark
        # timestamp (an instant) is: the same instant gives the same DATETIME on every path.
        expr = F.when(src.rlike(_OFFSET), src.try_cast(T.TimestampType()).try_cast(want)).otherwise(
            src.try_cast(want)
        )
    elif col.ctype.kind.__class__ is V.FloatKind:
        if col.ctype.kind.dec is not None:
            raise E.NotSupportedError(
                "This version doesn't yet support 'a Spark load into a FLOAT(M,D) or "
                f"DOUBLE(M,D) column' (column '{col.name}')"
            )
        # a FLOAT holds the nearest single-precision value (Spark's float cast rounds so)
        expr = src.try_cast(T.FloatType()).try_cast(want)
    else:
        expr = src.try_cast(want)
    try:
        _ = df.select(expr).schema  # analyse now, so an impossible cast names its column
    except _spark_errors() as e:
        raise E.DataError(
            f"column '{col.name}': source column '{target.source}' of type"
            f" {src_type.simpleString()} cannot be converted to {col.ctype.mysql_name}"
            f" ({_first_line(e)})"
        ) from e
    return expr


# --- validation ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Check:
    column: str
    problem: str  # "cannot be converted to INT", ...
    cond: Any  # true on a row with the problem
    shown: Any  # the value the error quotes
    null: bool = False  # a NULL in a NOT NULL column (IntegrityError rather than DataError)


def _checks(df, targets: list[_Target], raws: dict, casts: dict, csv: _Csv | None) -> list[_Check]:
    """What makes a source row unloadable, one check per column and problem."""
    from pyspark.sql import functions as F

    checks: list[_Check] = []
    whole = None
    if csv is not None:
        bad_shape = df[_MALFORMED].isNotNull()
        checks.append(
            _Check(
                "",
                f"is malformed: not {len(csv.columns)} fields as in the header, or an"
                " unterminated quote",
                bad_shape,
                df[_MALFORMED],
            )
        )
        whole = ~bad_shape  # the other checks are about well-formed rows only
    for t in targets:
        c = t.column
        if t.source is None:
            continue
        src, raw, cast = _column(df, t.source), raws[c.name], casts[c.name]
        shown = (raw if csv is not None else src).try_cast("string")
        found = [(f"cannot be converted to {c.ctype.mysql_name}", raw.isNotNull() & cast.isNull())]
        bounds = None
        if c.ctype.kind == V.INT:
            if c.ctype.mysql_name == "BIGINT" and c.ctype.unsigned:
                bounds = _UBIGINT_RANGE
            elif c.ctype.mysql_name == "BIT":
                bounds = (0, (1 << c.ctype.length) - 1)
            elif c.ctype.mysql_name == "YEAR":
                # (two digits, and 0, are read as MySQL reads them only by INSERT and the
                # local load: refused here rather than stored as they are)
                bounds = (1901, 2155)
            else:
                bounds = V._INT_RANGES.get((c.ctype.mysql_name, c.ctype.unsigned))
        elif c.ctype.kind == V.DECIMAL and c.ctype.unsigned:
            bounds = (0, None)
        if bounds is not None:
            lo, hi = bounds
            # Decimal literals: 2**64 - 1 does not fit Spark's LongType.
            outside = cast < F.lit(Decimal(lo))
            if hi is not None:
                outside = outside | (cast > F.lit(Decimal(hi)))
            found.append((f"out of range for {_type_name(c.ctype)}", cast.isNotNull() & outside))
        if c.ctype.kind == V.STR and c.ctype.length is not None:
            too_long = F.char_length(cast) > F.lit(c.ctype.length)
            found.append((f"longer than {c.ctype.length} characters", too_long))
        top = V._TEXT_BYTES.get(c.ctype.mysql_name)
        if c.ctype.kind == V.STR and top is not None:  # TINYTEXT, TEXT, MEDIUMTEXT: bytes
            too_long = F.octet_length(cast) > F.lit(top)
            found.append((f"longer than {top} bytes", too_long))
        for problem, cond in found:
            checks.append(_Check(c.name, problem, cond if whole is None else whole & cond, shown))
        if not c.nullable and not c.auto_increment:
            cond = cast.isNull() & raw.isNull()
            checks.append(
                _Check(
                    c.name,
                    "in a NOT NULL column",
                    cond if whole is None else whole & cond,
                    F.lit(None),
                    null=True,
                )
            )
    return checks


def _quoted(value):
    """A Spark expression quoting ``value`` for an error message (shortened past 60 characters)."""
    from pyspark.sql import functions as F

    short = F.when(F.char_length(value) > 60, F.concat(F.substring(value, 1, 60), F.lit("...")))
    return F.concat(F.lit("'"), short.otherwise(value), F.lit("'"))


def _problem_expr(checks: list[_Check]):
    """Per row: its problems as text ("column 'qty' value 'oops' cannot be ..."), NULL if none."""
    from pyspark.sql import functions as F

    parts = []
    for ch in checks:
        value = F.lit("NULL") if ch.null else F.coalesce(_quoted(ch.shown), F.lit("NULL"))
        what = F.lit(f"column '{ch.column}' value ") if ch.column else F.lit("")
        parts.append(F.when(ch.cond, F.concat(what, value, F.lit(f" {ch.problem}"))))
    text = F.concat_ws("; ", *parts)
    return F.when(text != "", text)


class _Report:
    """Names the rows of a source in errors: "row N" of a CSV file counts its records from 1
    after the header, as LOAD DATA's "at row N" does."""

    def __init__(self, table: str, df, csv: _Csv | None, problem):
        self.table = table
        self.df = df
        self.csv = csv
        self.problem = problem
        self.first_ids: dict[str, int] = {}  # file -> the row id of its first record

    def label(self, rowid: int | None, file: str | None) -> str:
        if rowid is None or file not in self.first_ids:
            return ""
        row = f"row {rowid - self.first_ids[file] + 1}"
        if len(self.first_ids) > 1:
            row = f"{os.path.basename(file)} {row}"
        return row + ": "

    def examples(self, cond=None) -> list[str]:
        """Up to MAX_ERRORS problem lines, in the source's order (a second pass, on error only)."""
        from pyspark.sql import functions as F

        bad = self.df.where(self.problem.isNotNull() if cond is None else cond)
        if self.csv is None:
            rows = bad.select(self.problem.alias("p")).limit(MAX_ERRORS).collect()
            return [r["p"] for r in rows]
        rows = (
            bad.select(self.problem.alias("p"), F.col(_ROWID).alias("i"), F.col(_FILE).alias("f"))
            .orderBy("i")
            .limit(MAX_ERRORS)
            .collect()
        )
        return [self.label(r["i"], r["f"]) + r["p"] for r in rows]

    def fail(self, total: int, lines: list[str], null_column: str | None, loaded: int = 0):
        """Raise the error listing ``lines`` of ``total`` problems."""
        rows = "row" if self.csv is not None else "value"
        done = (
            f"the load stopped after {loaded} rows were loaded, which stay loaded"
            if loaded
            else "nothing was loaded"
        )
        msg = f"{total} bad {rows}(s) in the source of '{self.table}'; {done}:"
        msg += "".join(f"\n  {line}" for line in lines)
        if total > len(lines):
            msg += f"\n  (and {total - len(lines)} more)"
        if null_column is not None:
            raise E.IntegrityError(
                f"Column '{null_column}' cannot be null: {msg}", E.ER_BAD_NULL_ERROR, "23000"
            )
        raise E.DataError(msg, E.ER_TRUNCATED_WRONG_VALUE)

    def refuse_bad_rows(self, arrow, loaded: int):
        """``arrow`` without its internal columns, or the error naming its bad rows."""
        problems = arrow.column(_PROBLEM)
        if problems.null_count < arrow.num_rows:
            found = [i for i, p in enumerate(problems.to_pylist()) if p is not None]
            lines = []
            for i in found[:MAX_ERRORS]:
                where = ""
                if self.csv is not None:
                    where = self.label(
                        arrow.column(_ROWID)[i].as_py(), arrow.column(_FILE)[i].as_py()
                    )
                lines.append(where + problems[i].as_py())
            nulls_only = all(" in a NOT NULL column" in line and ";" not in line for line in lines)
            column = None
            if nulls_only:
                column = lines[0].split("column '", 1)[1].split("'", 1)[0]
            self.fail(len(found), lines, column, loaded)
        keep = [n for n in arrow.schema.names if n not in _INTERNAL]
        return arrow.select(keep)


def _check_csv_files(df, csv: _Csv, report: _Report) -> None:
    """One pass over a CSV source's files, before anything is loaded: each file's first row
    (for row numbers), malformed rows, an unterminated quote in the last field of the last
    row (which a parser cannot see: it runs to the end of the file), and the word NULL in
    quotes, which LOAD DATA reads as text while this reader would take it for NULL."""
    from pyspark.sql import functions as F

    bad_shape = df[_MALFORMED].isNotNull()
    last = _column(df, csv.columns[-1]) if csv.columns else F.lit(None)
    aggs = [
        F.min(_ROWID).alias("first"),
        F.max(_ROWID).alias("last"),
        F.max_by(last, df[_ROWID]).alias("tail"),
        F.max_by(df[_MALFORMED], df[_ROWID]).alias("tail_bad"),
        F.sum(F.when(bad_shape, 1).otherwise(0)).alias("malformed"),
    ]
    if csv.null_marker == "NULL" and csv.columns:
        words = functools.reduce(
            operator.add, [F.when(_column(df, c) == "NULL", 1).otherwise(0) for c in csv.columns]
        )
        aggs.append(F.sum(words).alias("nulls"))
    try:
        files = df.groupBy(_FILE).agg(*aggs).collect()
    except _spark_errors() as e:
        raise E.OperationalError(
            f"Spark failed while reading the CSV source: {_first_line(e)}"
        ) from e
    report.first_ids = {r[_FILE]: r["first"] for r in files}
    malformed = sum(r["malformed"] for r in files)
    if malformed:
        report.fail(malformed, report.examples(bad_shape), None)
    _refuse_blank_lines(csv, [r[_FILE] for r in files], report)
    for r in files:
        if (
            r["tail_bad"] is None
            and r["tail"] is not None
            and _runs_to_the_end(r[_FILE], r["tail"])
        ):
            line = report.label(r["last"], r[_FILE]) + (
                f"an unterminated quote: the last field runs to the end of the file ({r['tail'][:60]!r})"
            )
            report.fail(1, [line], None)
    if len(aggs) > 5 and any(r["nulls"] for r in files):
        quoted = None
        with contextlib.suppress(*_spark_errors()):
            spark = df.sparkSession
            quoted = (
                spark.read.text(csv.path)
                .where(F.col("value").contains('"NULL"'))
                .limit(1)
                .collect()
            )
        if quoted is None or quoted:
            raise E.DataError(
                "the CSV source holds the word NULL both as a field (NULL, which LOAD DATA reads as"
                ' NULL) and in quotes ("NULL", which LOAD DATA reads as the text NULL), and this'
                " reader cannot tell the two apart; name the text that means NULL with"
                " --null-value / options={'nullValue': ...} (e.g. '\\N', or '' for an unquoted"
                " empty field) and the word NULL is then text; nothing was loaded",
                E.ER_TRUNCATED_WRONG_VALUE,
            )


def _refuse_blank_lines(csv: _Csv, uris: list[str], report: _Report) -> None:
    """A blank line is a record of one empty field to LOAD DATA (an error in a file of several
    columns), while Spark's reader skips it: look for them in the local files."""
    from urllib.parse import unquote, urlparse

    from ..loader import _blank_records

    if len(csv.columns) < 2:
        return
    lines = []
    total = 0
    for uri in sorted(uris):
        parsed = urlparse(uri)
        path = unquote(parsed.path)
        if parsed.scheme not in ("", "file") or not os.path.isfile(path):
            continue
        found = _blank_records(path, csv.sep, csv.quote, MAX_ERRORS + 1)
        total += len(found)
        where = f"{os.path.basename(path)} row" if len(uris) > 1 else "row"
        skip = 1 if csv.header else 0
        lines += [
            f"{where} {n - skip}: is a blank line, not {len(csv.columns)} fields" for n in found
        ]
    if total:
        report.fail(total, lines[:MAX_ERRORS], None)


def _runs_to_the_end(uri: str, tail: str) -> bool:
    """Whether a local file ends with a quote opening ``tail`` that is never closed."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return False
    path = unquote(parsed.path)
    if not os.path.isfile(path):
        return False
    want = b'"' + tail.encode("utf-8")
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size < len(want):
            return False
        f.seek(size - len(want))
        end = f.read()
    if end != want:
        return False
    # '""' closing an empty field is not an unterminated quote.
    return tail != "" or not end.endswith(b'""')


def _validate(
    df, schema, targets: list[_Target], casts: dict, on_duplicate: str, checks, report: _Report
) -> int:
    """Check the whole source in one Spark pass (plus one per key); return its row count."""
    from pyspark.sql import functions as F

    aggs = [F.count(F.lit(1)).alias("rows")]
    for i, ch in enumerate(checks):
        aggs.append(F.sum(F.when(ch.cond, 1).otherwise(0)).alias(f"n{i}"))
    keysets = _keysets(schema, targets) if on_duplicate == "error" else []
    for j, (_label, names) in enumerate(keysets):
        # the same pass counts each key's complete values and its distinct ones: a group-by
        # finding the repeated keys runs only when the two differ
        keys = [casts[n] for n in names]
        complete = functools.reduce(operator.and_, [k.isNotNull() for k in keys])
        aggs.append(F.sum(F.when(complete, 1).otherwise(0)).alias(f"k{j}"))
        aggs.append(F.count_distinct(*keys).alias(f"d{j}"))
    try:
        summary = df.agg(*aggs).toArrow().to_pylist()[0]
        bad = {i: summary[f"n{i}"] for i in range(len(checks)) if summary[f"n{i}"]}
        lines = report.examples() if bad else []
    except _spark_errors() as e:
        raise E.OperationalError(f"Spark failed while checking the source: {_first_line(e)}") from e
    if bad:
        failing = [checks[i] for i in bad]
        null_column = failing[0].column if all(ch.null for ch in failing) else None
        if report.csv is None:
            total = sum(bad.values())
        else:  # rows, not values
            total = df.where(report.problem.isNotNull()).count()
        report.fail(total, lines, null_column)
    repeated = [ks for j, ks in enumerate(keysets) if summary[f"d{j}"] < (summary[f"k{j}"] or 0)]
    if repeated:
        _check_keys(df, repeated, casts)
    return int(summary["rows"])


def _type_name(ctype) -> str:
    return f"{ctype.mysql_name}{' UNSIGNED' if ctype.unsigned else ''}"


def _keysets(schema, targets: list[_Target]) -> list[tuple[str, list[str]]]:
    """(label, column names) of the primary and unique keys the source gives every column of
    (generated or defaulted key columns: the engine decides)."""
    keysets = ([("PRIMARY", schema.primary_key)] if schema.primary_key else []) + [
        (f"unique {'_'.join(schema.columns[i].name for i in ks)}", ks) for ks in schema.uniques
    ]
    return [
        (label, [schema.columns[i].name for i in positions])
        for label, positions in keysets
        if positions and all(targets[i].source is not None for i in positions)
    ]


def _check_keys(df, keysets: list[tuple[str, list[str]]], casts: dict) -> None:
    """Refuse primary/unique keys that the source repeats (after casting, as the engine sees
    them), naming some."""
    from pyspark.sql import functions as F

    for label, names in keysets:
        keyed = df.select(*[casts[n].alias(f"k{j}") for j, n in enumerate(names)])
        keys = [F.col(f"k{j}") for j in range(len(names))]
        complete = functools.reduce(operator.and_, [k.isNotNull() for k in keys])
        dup = keyed.where(complete).groupBy(*keys).count().where(F.col("count") > 1)
        try:
            found = dup.limit(_EXAMPLES).toArrow().to_pylist()
        except _spark_errors() as e:
            raise E.OperationalError(f"Spark failed while checking keys: {_first_line(e)}") from e
        if found:
            raise _duplicates(label, names, found)


def _duplicates(label: str, names: list[str], found: list[dict]) -> E.IntegrityError:
    """The error naming keys the source repeats: ``found`` holds rows of ``k0, k1, ...`` (the
    key's values) and ``count``."""
    shown = ", ".join(
        "'"
        + "-".join(V.format_value(r[f"k{j}"]) for j in range(len(names)))
        + f"' ({r['count']} times)"
        for r in found
    )
    return E.IntegrityError(
        f"Duplicate entry for key '{label}' ({', '.join(names)}) in the source: {shown};"
        " nothing was loaded (on_duplicate='ignore' keeps the first, 'replace' the last)",
        E.ER_DUP_ENTRY,
        "23000",
    )


# --- one pass: checked while read, then loaded -------------------------------------------------

_NBAD = "__noria_nbad"  # a bad row's failing checks
_NOTHER = "__noria_nother"  # ... of them not about a NULL in a NOT NULL column
_FIRSTNULL = "__noria_firstnull"  # the first NOT NULL check it fails (its index in checks)


def _check_while_reading(
    df, schema, targets, casts, on_duplicate, checks, report, batch_rows, expected
) -> _Held:
    """One Spark pass over ``df``: each row cast to the table's columns with its problems
    beside it (``_problem_expr``), streamed to the driver in Arrow batches that are checked
    as they arrive and held (``_Held``) for the load. Raises what ``_validate`` raises, from
    the same checks and with the same counts, before anything is loaded."""
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    def count(chosen):
        flags = [F.when(ch.cond, 1).otherwise(0) for ch in chosen]
        return functools.reduce(operator.add, flags) if flags else F.lit(0)

    nulls = [F.when(ch.cond, F.lit(i)) for i, ch in enumerate(checks) if ch.null]
    first_null = (
        F.lit(None).cast("int") if not nulls else nulls[0] if len(nulls) == 1 else F.least(*nulls)
    )
    problem = report.problem
    bad = problem.isNotNull()
    names = list(casts)
    where = []  # a CSV file's bad rows: where they are, for their row numbers
    if report.csv is not None:
        where = [F.when(bad, df[_ROWID]).alias(_ROWID), F.when(bad, df[_FILE]).alias(_FILE)]
    stream_df = df.select(
        *[expr.alias(name) for name, expr in casts.items()],
        problem.alias(_PROBLEM),
        F.when(bad, count(checks)).alias(_NBAD),
        F.when(bad, count([ch for ch in checks if not ch.null])).alias(_NOTHER),
        F.when(bad, first_null).alias(_FIRSTNULL),
        *where,
    )
    if expected is not None:
        stream_df = _small_partitions(stream_df, expected, len(names))
    from ..loader import CACHE_BYTES

    held = _Held(CACHE_BYTES)
    total = others = 0
    first = None
    lines: list[str] = []
    batches = None
    try:
        batches = _arrow_batches(stream_df, batch_rows)
        for arrow in batches:
            problems = arrow.column(_PROBLEM)
            if problems.null_count < arrow.num_rows:  # a bad row: nothing will be loaded
                held.clear()
                if where:  # a CSV file's problems are counted by row, as _validate does
                    total += arrow.num_rows - problems.null_count
                else:
                    total += pc.sum(arrow.column(_NBAD)).as_py()
                others += pc.sum(arrow.column(_NOTHER)).as_py() or 0
                least = pc.min(arrow.column(_FIRSTNULL)).as_py()
                if least is not None and (first is None or least < first):
                    first = least
                if len(lines) < MAX_ERRORS:
                    shown = arrow.filter(pc.is_valid(problems)).slice(0, MAX_ERRORS - len(lines))
                    for row in shown.select(
                        [_PROBLEM, *([_ROWID, _FILE] if where else [])]
                    ).to_pylist():
                        label = report.label(row[_ROWID], row[_FILE]) if where else ""
                        lines.append(label + row[_PROBLEM])
            elif not total:
                held.add(arrow.select(names))
    except _spark_errors() as e:
        held.close()
        raise E.OperationalError(f"Spark failed while checking the source: {_first_line(e)}") from e
    except BaseException:
        held.close()
        raise
    finally:
        if batches is not None:
            batches.close()
    if total:
        held.close()
        report.fail(
            total, lines, checks[first].column if first is not None and not others else None
        )
    try:
        for label, key in _keysets(schema, targets) if on_duplicate == "error" else []:
            found = held.repeated(key)
            if found:
                raise _duplicates(label, key, found)
    except BaseException:
        held.close()
        raise
    return held


class _Held:
    """Arrow tables read once and kept for the load: in memory up to ``limit`` bytes, the rest
    in a temporary Arrow file (memory-mapped when read back). Iterating hands each table over
    once, in the order added; ``close`` drops them all."""

    def __init__(self, limit: int):
        self.limit = limit
        self.tables: list = []
        self.bytes = 0
        self.rows = 0
        self.path: str | None = None
        self.writer = None
        self.chunks: list[int] = []  # record batches per table in the file

    def add(self, table) -> None:
        self.rows += table.num_rows
        if self.writer is None and self.bytes + table.nbytes <= self.limit:
            self.tables.append(table)
            self.bytes += table.nbytes
            return
        import tempfile

        import pyarrow as pa

        if self.writer is None:
            fd, self.path = tempfile.mkstemp(prefix="noria-load-", suffix=".arrow")
            os.close(fd)
            self.writer = pa.ipc.new_file(self.path, table.schema)
        batches = table.to_batches()
        for b in batches:
            self.writer.write_batch(b)
        self.chunks.append(len(batches))

    def _file(self):
        import pyarrow as pa

        if self.writer:
            self.writer.close()
            self.writer = False  # closed: nothing more is added
        return pa.ipc.open_file(pa.memory_map(self.path))

    def _spilled(self):
        if self.path is None:
            return
        import pyarrow as pa

        reader = self._file()
        at = 0
        for n in self.chunks:
            yield pa.Table.from_batches(
                [reader.get_batch(i) for i in range(at, at + n)], reader.schema
            )
            at += n

    def repeated(self, names: list[str]) -> list[dict]:
        """Up to _EXAMPLES values of the key ``names`` (complete: no NULL part) held more than
        once, as ``{"k0": ..., "count": n}``, compared as Spark's group-by compares them."""
        import pyarrow as pa
        import pyarrow.compute as pc

        parts = []
        for table in itertools.chain(self.tables, self._spilled()):
            keys = {}
            for j, n in enumerate(names):
                col = table.column(n)
                if pa.types.is_floating(col.type):
                    col = pc.add(col, 0.0)  # -0.0 is 0.0 (Spark's grouping normalizes it)
                keys[f"k{j}"] = col
            parts.append(pa.table(keys).drop_null())
        if not parts:
            return []
        keyed = pa.concat_tables(parts)
        if len(names) == 1 and pc.count_distinct(keyed.column(0)).as_py() == keyed.num_rows:
            return []  # one column, every value once
        counted = keyed.group_by(keyed.column_names, use_threads=False).aggregate(
            [([], "count_all")]
        )
        counted = counted.filter(pc.greater(counted["count_all"], 1))
        return [
            {**{k: r[k] for k in keyed.column_names}, "count": r["count_all"]}
            for r in counted.slice(0, _EXAMPLES).to_pylist()
        ]

    def __iter__(self):
        while self.tables:
            table = self.tables.pop(0)
            self.bytes -= table.nbytes
            yield table
        yield from self._spilled()

    def clear(self) -> None:
        self.close()
        self.rows = 0

    def close(self) -> None:
        self.tables = []
        self.bytes = 0
        if self.writer:
            self.writer.close()
        self.writer = None
        self.chunks = []
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.remove(self.path)
            self.path = None


# --- transfer --------------------------------------------------------------------------------


# How the load pass moves batches to the driver: "jvm" (Spark's JVM converts each partition to
# Arrow; no Python worker, so a session whose workers lack pyarrow works too) or "python"
# (mapInArrow packs IPC messages in Python workers). benches/backfill_transfer.py measures both:
# jvm is the faster (1M votes on local[2]: 1.99 s against 2.24 s without the checking pass).
TRANSFER = "jvm"


def _arrow_batches(df, batch_rows: int):
    """A generator of Arrow tables of ``batch_rows`` rows (the last may be shorter) holding
    ``df``'s rows, streamed partition by partition: the driver holds one partition being loaded
    and one prefetched. Closing it stops Spark's job."""
    names = df.columns
    if TRANSFER == "python":
        return _batches_from_python_workers(df, names, batch_rows)
    return _batches_from_jvm(df, names, batch_rows)


def _batches_from_jvm(df, names: list[str], batch_rows: int):
    """Spark's JVM turns each partition into Arrow record batches (as ``DataFrame.toArrow``
    does, without collecting them all); no Python worker runs, so the executors need neither
    pyarrow nor the driver's Python."""
    import pyarrow as pa
    from pyspark.core.rdd import RDD
    from pyspark.serializers import NoOpSerializer
    from pyspark.sql.pandas.types import to_arrow_schema

    spark = df.sparkSession
    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    schema = to_arrow_schema(
        df.schema,
        timezone=spark.conf.get("spark.sql.session.timeZone"),
        prefers_large_types=large,
    )
    messages = RDD(df._jdf.toArrowBatchRdd().toJavaRDD(), spark.sparkContext, NoOpSerializer())
    blobs = messages.toLocalIterator(prefetchPartitions=True)
    pending: list = []
    count = 0
    try:
        for blob in blobs:
            batch = pa.ipc.read_record_batch(pa.py_buffer(blob), schema)
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            count += batch.num_rows
            while count >= batch_rows:
                table = pa.Table.from_batches(pending).rename_columns(names)
                yield table.slice(0, batch_rows)
                rest = table.slice(batch_rows)
                pending = rest.to_batches() if rest.num_rows else []
                count = rest.num_rows
        if count:
            yield pa.Table.from_batches(pending).rename_columns(names)
    finally:
        if hasattr(blobs, "close"):
            blobs.close()


def _batches_from_python_workers(df, names: list[str], batch_rows: int):
    """Python workers pack each partition into Arrow IPC messages (``mapInArrow``), which the
    driver receives as one small row per batch; the workers need pyarrow."""
    import pyarrow as pa

    # Positional names: mapInArrow looks columns up by name, which a backtick would break.
    plain = df.toDF(*[f"c{i}" for i in range(len(names))])
    stream = plain.mapInArrow(_ipc_encoder(batch_rows), "ipc binary, rows long")
    records = stream.toLocalIterator(prefetchPartitions=True)
    try:
        for record in records:
            if record.rows:
                table = pa.ipc.open_stream(pa.py_buffer(record.ipc)).read_all()
                yield table.rename_columns(names)
    finally:
        if hasattr(records, "close"):
            records.close()


def _ipc_encoder(batch_rows: int):
    """A mapInArrow function packing its partition into Arrow IPC messages of ``batch_rows`` rows.

    It is defined here as a closure, so executors receive it by value and need only pyarrow.
    """

    def encode(batches):
        import pyarrow as pa

        pending: list = []
        count = 0

        def pack(table):
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            data = sink.getvalue()
            offsets = pa.array([0, data.size], pa.int32()).buffers()[1]
            blob = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, data])
            return pa.RecordBatch.from_arrays(
                [blob, pa.array([table.num_rows], pa.int64())], names=["ipc", "rows"]
            )

        for batch in batches:
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            count += batch.num_rows
            if count >= batch_rows:
                table = pa.Table.from_batches(pending)
                start = 0
                while table.num_rows - start >= batch_rows:
                    yield pack(table.slice(start, batch_rows))
                    start += batch_rows
                rest = table.slice(start)
                pending = rest.to_batches() if rest.num_rows else []
                count = rest.num_rows
        if count:
            yield pack(pa.Table.from_batches(pending))

    return encode


class _Progress:
    """Rows, rows/s and time left on stderr with rich; does nothing when disabled."""

    def __init__(self, table: str, total: int | None, enabled: bool):
        self._progress = None
        self._task = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task):
                speed = task.finished_speed or task.speed
                return Text(f"{speed:,.0f} rows/s" if speed else "- rows/s")

        self._progress = Progress(
            TextColumn(f"backfill {table}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rows"),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task("load", total=total)

    def __enter__(self):
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False

    def advance(self, rows: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, rows)


# --- command line ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``noria-py load``."""
    parser.add_argument(
        "table", help="the base table to load (it must exist in the database, unless --create)"
    )
    parser.add_argument(
        "--data",
        required=True,
        help="database file to load into (it must exist, unless --create makes the table)",
    )
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--parquet", metavar="PATH", help="a Parquet file or a directory of them")
    src.add_argument("--csv", metavar="PATH", help="a CSV file (or directory) with a header line")
    src.add_argument("--json", metavar="PATH", help="a JSON lines file (one object per line)")
    src.add_argument("--jdbc", metavar="URL", help="a JDBC URL; name the table with --dbtable")
    parser.add_argument("--dbtable", help="the table (or parenthesised subquery) to read over JDBC")
    parser.add_argument("--user", help="the user to connect to the JDBC source as")
    parser.add_argument(
        "--password",
        help=f"the JDBC user's password (default: ${jdbc.PASSWORD_ENV}, which other users of the"
        " machine cannot see in the process list)",
    )
    parser.add_argument(
        "--jar",
        action="append",
        default=[],
        metavar="PATH",
        help="a jar to put on Spark's classpath, e.g. a JDBC driver (repeatable; added to"
        " spark.jars). Without one, a jdbc:mysql: or jdbc:mariadb: source uses the system's"
        " MariaDB Connector/J (apt-get install libmariadb-java)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for Spark's reader, e.g. sep=; or user=app (repeatable)",
    )
    parser.add_argument(
        "--via",
        choices=("local", "client", "spark"),
        help="who reads the source: local (Arrow in this process, no Spark; the default for a"
        " local file), client (a jdbc:mysql:// or jdbc:mariadb:// source read by the mariadb"
        " or mysql client program, no Spark; the default for one when the program is"
        " installed and the options are its own) or spark (the default for other JDBC"
        " sources, and whenever --spark-master or --spark-conf is given)",
    )
    parser.add_argument(
        "--create",
        action="store_true",
        help="create the table from the source's columns and types (INT/BIGINT, DECIMAL(p,s)"
        " from the digits a CSV file holds, DOUBLE, VARCHAR(255) or TEXT by the longest value,"
        " DATE, DATETIME[(6)], ...; a MySQL or MariaDB table over JDBC keeps its own types"
        " and primary key, and a query's columns take the types the server reports, typed"
        " without Spark when the client program reads the source); the CREATE TABLE is"
        " printed",
    )
    parser.add_argument(
        "--primary-key",
        metavar="COLS",
        help="with --create: the primary key's columns, comma-separated",
    )
    parser.add_argument(
        "--skip-bad-rows",
        action="store_true",
        help="load the rows that fit and leave out the others (malformed records, values that"
        " do not fit their column, NULLs in NOT NULL columns), counting and listing them,"
        " instead of refusing the load",
    )
    parser.add_argument(
        "--spark-master",
        metavar="URL",
        help="Spark master: local[*] (default, or $NORIA_SPARK_MASTER), local[N], spark://host:port",
    )
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, e.g. spark.jars=/path/jdbc-driver.jar (repeatable)",
    )
    parser.add_argument(
        "--on-duplicate",
        choices=ON_DUPLICATE,
        default="error",
        help="a key already loaded or repeated in the source: stop with an error (default),"
        " ignore the new row, or replace the old one",
    )
    parser.add_argument(
        "--batch-rows",
        type=int,
        help="rows per batch handed to the engine (default 200000 read without Spark,"
        f" {DEFAULT_BATCH_ROWS} through Spark)",
    )
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="skip the checking pass over the source (faster): values are then checked batch by"
        " batch while loading, and a bad one stops the load at its batch, with the rows of"
        " earlier batches loaded; the error names each bad row, column and value (up to"
        f" {MAX_ERRORS}). A CSV file's rows are checked for their shape before loading either way",
    )
    parser.add_argument(
        "--ignore-column",
        action="append",
        default=[],
        metavar="NAME",
        help="a source column to leave out (repeatable); any other source column the table does"
        " not have is an error",
    )
    csv = parser.add_argument_group(
        "CSV dialect",
        "A CSV file is read as RFC 4180 (what Python's csv module, pandas and spreadsheets write):"
        " a header line names the columns, fields are separated by commas, a field may be quoted"
        ' with " and then hold separators and newlines, and "" inside quotes is one quote. Like'
        " MySQL's LOAD DATA ... FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY"
        " '' IGNORE 1 LINES, an empty field is the empty string (an error for a number or a date),"
        ' an unquoted NULL is NULL and a quoted "NULL" the text (a file holding both is refused:'
        " name the NULL text with --null-value). A row with too few or too many"
        " fields, an unterminated quote, or a header name the table lacks is an error naming the"
        " row or the column; nothing is loaded. A DATETIME with a UTC offset (2020-01-01"
        " 05:06:07+02:00, or Z) is converted to UTC, as a Parquet timestamp is.",
    )
    csv.add_argument(
        "--sep", metavar="CHAR", help="the field separator (default ',', TAB for .tsv)"
    )
    csv.add_argument("--quote", metavar="CHAR", help='the quote character (default ")')
    csv.add_argument(
        "--escape",
        metavar="CHAR",
        help='the character escaping a quote inside quotes (default ", i.e. a doubled quote;'
        " give \\ for backslash-escaped quotes)",
    )
    csv.add_argument(
        "--null-value",
        metavar="TEXT",
        help="the field text that means NULL (default: the unquoted word NULL); with '' an"
        ' unquoted empty field is NULL (a quoted "" stays the empty string)',
    )
    csv.add_argument(
        "--no-header",
        action="store_true",
        help="the file has no header line (its columns are then _c0, _c1, ...)",
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show a progress bar")


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise E.ProgrammingError(f"{what} must look like KEY=VALUE, not {item!r}")
        out[key.strip()] = value
    return out


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``noria-py load``; return the process exit code."""
    from ..dbapi import connect

    try:
        options = _pairs(args.option, "--option")
        config = _pairs(args.spark_conf, "--spark-conf")
        if args.jar:
            jars = [j for j in config.get("spark.jars", "").split(",") if j.strip()]
            config["spark.jars"] = ",".join(jars + args.jar)
        if args.jdbc:
            source, fmt = args.jdbc, "jdbc"
            if args.dbtable:
                options["dbtable"] = args.dbtable
            if args.user is not None:
                options["user"] = args.user
            password = args.password if args.password is not None else jdbc.password_from_env()
            if password is not None and not any(k.lower() == "password" for k in options):
                options["password"] = password
        elif args.parquet:
            source, fmt = args.parquet, "parquet"
        elif args.json:
            source, fmt = args.json, "json"
        else:
            source, fmt = args.csv, "csv"
            dialect = {"sep": args.sep, "quote": args.quote, "escape": args.escape}
            dialect["nullValue"] = args.null_value
            if args.no_header:
                dialect["header"] = "false"
            options.update({k: v for k, v in dialect.items() if v is not None})
        if args.primary_key and not args.create:
            raise E.ProgrammingError("--primary-key goes with --create")
        if not args.create and not os.path.exists(args.data):
            raise E.ProgrammingError(
                f"no database file {args.data} (give --create to make it and the table)"
            )
        conn = connect(args.data)
    except (E.Error, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        rows = conn.backfill(
            args.table,
            source,
            format=fmt,
            options=options,
            spark_master=args.spark_master,
            spark_config=config,
            on_duplicate=args.on_duplicate,
            batch_rows=args.batch_rows,
            progress=not args.no_progress,
            validate=not args.no_validate,
            ignore_columns=args.ignore_column,
            skip_bad_rows=args.skip_bad_rows,
            via=args.via,
            create=args.create,
            primary_key=[c.strip() for c in args.primary_key.split(",")]
            if args.primary_key
            else (),
        )
        if args.create:
            created = conn.execute(f"SHOW CREATE TABLE `{args.table}`").fetchall()[0][1]
            print(created + ";")
    except E.Error as e:
        print(f"error {e.errno}: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    elapsed = time.perf_counter() - start
    from .session import current_master

    rate = rows / elapsed if elapsed > 0 else 0.0
    via = getattr(rows, "via", "spark")
    how = {
        "spark": f"with Spark master {current_master()}",
        "client": "read without Spark, by the database's client program",
    }.get(via, "read without Spark")
    print(f"loaded {rows} rows into {args.table} in {elapsed:.1f} s ({rate:,.0f} rows/s) {how}")
    skipped = getattr(rows, "skipped", 0)
    if skipped:
        print(f"left out {skipped} bad row(s):")
        for line in rows.problems:
            print(f"  {line}")
        if skipped > len(rows.problems):
            print(f"  (and {skipped - len(rows.problems)} more)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m noria_py.spark.backfill",
        description="Backfill a base table from Parquet, CSV or JDBC through Spark.",
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

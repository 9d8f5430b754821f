"""Backfill a base table from a large source through Spark, in Arrow batches.

    conn = noria_py.connect("app.db")
    conn.backfill("votes", "/data/votes.parquet")                 # Parquet file or directory
    conn.backfill("votes", "votes.csv")                           # CSV with a header line
    conn.backfill("votes", "jdbc:postgresql://db/app", options={"dbtable": "votes"})
    conn.backfill("votes", spark_dataframe, on_duplicate="ignore")

    noria-py load votes --data app.db --parquet /data/votes.parquet
    python -m noria_py.spark.backfill votes --data app.db --csv votes.csv

How a backfill runs:

1. Spark reads the source (schema only; nothing is loaded yet).
2. Each column of the table is taken from the source column of the same name (case-insensitive)
   and cast to the Spark type matching the column's kind. A table column the source lacks is
   left to its default (an error if it has none and is NOT NULL); source columns the table does
   not have are ignored.
3. Validation in Spark (``validate=True``): one aggregation over the source counts values that
   casting turns into NULL (``'abc'`` for an INT), integers out of the column's range, strings
   longer than the column and NULLs in NOT NULL columns; with ``on_duplicate="error"`` a group-by
   per primary or unique key finds keys the source repeats. Any of these raises before a single row is loaded, naming the column
   (or key) and an example value.
4. Loading, a second pass: on the executors ``mapInArrow`` packs the cast rows into Arrow IPC
   messages of ``batch_rows`` rows; the driver streams them partition by partition
   (``toLocalIterator``: one small record per *batch*, never a Python object per data row) and
   hands each batch to ``Engine.load_arrow``, which coerces it to the column types, inserts it
   into base storage in one transaction and pushes it through the dataflow as one delta.

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

The driver holds about two partitions of batches at a time (one loading, one prefetched); when
validation has counted the rows, the load pass repartitions (a shuffle) so no partition holds
more than MAX_CELLS_PER_PARTITION values. Between duplicates inside the source, which one is
"first" then follows the shuffled order.

The source is read twice (validate, then load); a JDBC source that changes in between is still
checked row by row by the engine, but not by step 3. Pass a cached DataFrame to read it once.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
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
from .session import get_session, require_pyspark

ON_DUPLICATE = ("error", "ignore", "replace")
DEFAULT_BATCH_ROWS = 50_000
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
_UBIGINT_RANGE = (0, 2**64 - 1)
# Values (rows x columns) per Spark partition beyond which the load pass repartitions: the
# driver holds about two partitions (one loading, one prefetched) at a time.
MAX_CELLS_PER_PARTITION = 4_000_000
# How many example keys or values an error message quotes.
_EXAMPLES = 3


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
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: bool = True,
    validate: bool = True,
    on_batch: Callable[[Any, int], None] | None = None,
) -> int:
    """Load ``table`` from ``source`` through Spark; return the number of rows handed to the engine.

    ``source``: a path (Parquet file or directory, CSV with a header, JSON, ORC), a JDBC URL
    (``options={"dbtable": ...}`` or ``{"query": ...}``) or a pyspark DataFrame. ``format``
    overrides the format guessed from the path; ``options`` go to Spark's reader (for CSV,
    ``header`` defaults to true). ``spark_master`` and ``spark_config`` apply when this call
    starts the Spark session. ``on_duplicate``: ``"error"``, ``"ignore"`` or ``"replace"`` (see
    the module docs). ``progress`` shows rows, rows/s and the time left on stderr.
    ``validate=False`` skips the checking pass (the engine still rejects bad batches, but batches
    before a bad one stay loaded). ``on_batch(arrow_table, rows_so_far)`` runs after each batch.

    Raises DataError (a column missing, not convertible, out of range, too long), IntegrityError
    (NULL in a NOT NULL column, duplicate keys), ProgrammingError (unknown table, bad options) and
    OperationalError (Spark could not read the source).
    """
    if on_duplicate not in ON_DUPLICATE:
        raise E.ProgrammingError(f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}")
    if batch_rows < 1:
        raise E.ProgrammingError("batch_rows must be at least 1")
    schema = engine.storage.schemas.get(table.lower())
    if schema is None:
        raise E.no_such_table(table)
    require_pyspark()
    import pyarrow as pa

    df = read_source(
        source, format=format, options=options, master=spark_master, config=spark_config
    )
    targets = _match_columns(schema, df)
    casts = {t.column.name: _cast_expr(df, t) for t in targets if t.source is not None}
    if not casts:
        raise E.DataError(f"the source has none of the columns of table '{schema.name}'")
    total = _validate(df, schema, targets, casts, on_duplicate) if validate else None
    cast_df = df.select(*[expr.alias(name) for name, expr in casts.items()])
    if total is not None:
        # The driver receives a whole partition at a time: keep partitions small enough to hold.
        wanted = -(-total * len(casts) // MAX_CELLS_PER_PARTITION)
        if wanted > cast_df.rdd.getNumPartitions():
            cast_df = cast_df.repartition(wanted)
    stream = cast_df.mapInArrow(_ipc_encoder(batch_rows), "ipc binary, rows long")

    lock = getattr(engine, "lock", None) or contextlib.nullcontext()
    loaded = 0
    batches = 0
    with _Progress(schema.name, total, enabled=progress) as bar:
        blobs = None
        try:
            # One record per batch (an Arrow IPC message), one partition in flight at a time.
            blobs = stream.toLocalIterator(prefetchPartitions=True)
            for record in blobs:
                if record.rows == 0:
                    continue
                arrow = pa.ipc.open_stream(pa.py_buffer(record.ipc)).read_all()
                try:
                    with lock:
                        loaded += engine.load_arrow(schema.name, [arrow], on_duplicate)
                except E.IntegrityError as e:
                    done = (
                        f"after loading {loaded} rows, which stay loaded (run it again with"
                        " on_duplicate='ignore' to load the rest)"
                        if loaded
                        else "before loading anything"
                    )
                    raise type(e)(
                        f"{e.msg}; the backfill of '{schema.name}' stopped at batch"
                        f" {batches + 1} {done}",
                        e.errno,
                        e.sqlstate,
                    ) from e
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
            if blobs is not None and hasattr(blobs, "close"):
                blobs.close()  # stops Spark's job when the load ends early
    return loaded


# --- reading ---------------------------------------------------------------------------------


def read_source(
    source,
    *,
    format: str | None = None,  # noqa: A002
    options: dict[str, Any] | None = None,
    master: str | None = None,
    config: dict[str, str] | None = None,
):
    """A Spark DataFrame over ``source`` (path, JDBC URL or DataFrame), nothing read yet."""
    require_pyspark()
    from pyspark.sql import DataFrame

    if isinstance(source, DataFrame):
        return source
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
        if fmt == "csv":
            opts.setdefault("header", "true")
            if text.lower().endswith(".tsv"):
                opts.setdefault("sep", "\t")
    spark = get_session(master, config)
    reader = spark.read.format(fmt).options(**opts)
    try:
        return reader.load() if fmt == "jdbc" else reader.load(text)
    except _spark_errors() as e:
        raise E.OperationalError(
            f"Spark could not read {_describe(text, fmt)}: {_hint(e, fmt)}"
        ) from e


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
    msg = _first_line(error)
    if fmt == "jdbc" and "suitable driver" in str(error).lower():
        msg += (
            " (no JDBC driver for this URL is on Spark's classpath: add its jar with"
            " spark_config={'spark.jars': '/path/driver.jar'} or --spark-conf spark.jars=...,"
            " and name its class with options={'driver': ...} if needed)"
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
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
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


def _match_columns(schema, df) -> list[_Target]:
    by_lower: dict[str, str] = {}
    for name in df.columns:
        if name.lower() in by_lower:
            raise E.DataError(
                f"the source has two columns named '{name}' (names are case-insensitive)"
            )
        by_lower[name.lower()] = name
    targets = []
    for c in schema.columns:
        src = by_lower.get(c.name.lower())
        if src is None and not (c.nullable or c.has_default or c.auto_increment):
            raise E.DataError(
                f"column '{c.name}' of table '{schema.name}' is missing from the source and has no"
                f" default (source columns: {', '.join(df.columns) or 'none'})",
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


def _cast_expr(df, target: _Target):
    """The source column cast to the table column's Spark type (NULL where it cannot be)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = target.column
    src = df[target.source]
    src_type = df.schema[target.source].dataType
    want = _spark_type(col.ctype)
    is_text = isinstance(src_type, T.StringType)
    if is_text and col.ctype.kind not in (V.STR, V.BYTES, V.TIME):
        src = F.trim(src)
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


def _validate(df, schema, targets: list[_Target], casts: dict, on_duplicate: str) -> int:
    """Check the whole source in one Spark pass (plus one per key); return its row count."""
    from pyspark.sql import functions as F

    checks: list[tuple[str, str, Any, Any]] = []  # (column, problem, condition, shown value)
    for t in targets:
        c = t.column
        if t.source is None:
            continue
        src, cast = df[t.source], casts[c.name]
        shown = src.try_cast("string")
        checks.append(
            (
                c.name,
                f"cannot be converted to {c.ctype.mysql_name}",
                src.isNotNull() & cast.isNull(),
                shown,
            )
        )
        bounds = None
        if c.ctype.kind == V.INT:
            if c.ctype.mysql_name == "BIGINT" and c.ctype.unsigned:
                bounds = _UBIGINT_RANGE
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
            checks.append(
                (
                    c.name,
                    f"out of range for {_type_name(c.ctype)}",
                    cast.isNotNull() & outside,
                    shown,
                )
            )
        if c.ctype.kind == V.STR and c.ctype.length is not None:
            too_long = F.char_length(cast) > F.lit(c.ctype.length)
            checks.append((c.name, f"longer than {c.ctype.length} characters", too_long, shown))
        if not c.nullable and not c.auto_increment:
            checks.append(
                (c.name, "NULL in a NOT NULL column", cast.isNull() & src.isNull(), F.lit("NULL"))
            )

    aggs = [F.count(F.lit(1)).alias("rows")]
    for i, (_, _, cond, shown) in enumerate(checks):
        aggs.append(F.sum(F.when(cond, 1).otherwise(0)).alias(f"n{i}"))
        aggs.append(F.first(F.when(cond, shown), ignorenulls=True).alias(f"e{i}"))
    try:
        summary = df.agg(*aggs).toArrow().to_pylist()[0]
    except _spark_errors() as e:
        raise E.OperationalError(f"Spark failed while checking the source: {_first_line(e)}") from e
    for i, (name, problem, _, _) in enumerate(checks):
        bad = summary[f"n{i}"]
        if bad:
            example = summary[f"e{i}"]
            msg = f"column '{name}': {bad} source value(s) {problem} (for example {example!r});"
            msg += " nothing was loaded"
            if problem.startswith("NULL"):
                raise E.IntegrityError(
                    f"Column '{name}' cannot be null: {msg}", E.ER_BAD_NULL_ERROR, "23000"
                )
            raise E.DataError(msg, E.ER_TRUNCATED_WRONG_VALUE)
    if on_duplicate == "error":
        _check_keys(df, schema, targets, casts)
    return int(summary["rows"])


def _type_name(ctype) -> str:
    return f"{ctype.mysql_name}{' UNSIGNED' if ctype.unsigned else ''}"


def _check_keys(df, schema, targets: list[_Target], casts: dict) -> None:
    """Refuse primary/unique keys that the source repeats (after casting, as the engine sees them)."""
    from pyspark.sql import functions as F

    keysets = ([("PRIMARY", schema.primary_key)] if schema.primary_key else []) + [
        (f"unique {'_'.join(schema.columns[i].name for i in ks)}", ks) for ks in schema.uniques
    ]
    for label, positions in keysets:
        names = [schema.columns[i].name for i in positions]
        if not positions or any(targets[i].source is None for i in positions):
            continue  # generated or defaulted key columns: the engine decides
        keyed = df.select(*[casts[n].alias(f"k{j}") for j, n in enumerate(names)])
        keys = [F.col(f"k{j}") for j in range(len(names))]
        complete = functools.reduce(operator.and_, [k.isNotNull() for k in keys])
        dup = keyed.where(complete).groupBy(*keys).count().where(F.col("count") > 1)
        try:
            found = dup.limit(_EXAMPLES).toArrow().to_pylist()
        except _spark_errors() as e:
            raise E.OperationalError(f"Spark failed while checking keys: {_first_line(e)}") from e
        if found:
            shown = ", ".join(
                "'"
                + "-".join(V.format_value(r[f"k{j}"]) for j in range(len(names)))
                + f"' ({r['count']} times)"
                for r in found
            )
            raise E.IntegrityError(
                f"Duplicate entry for key '{label}' ({', '.join(names)}) in the source: {shown};"
                " nothing was loaded (on_duplicate='ignore' keeps the first, 'replace' the last)",
                E.ER_DUP_ENTRY,
                "23000",
            )


# --- transfer --------------------------------------------------------------------------------


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
    parser.add_argument("table", help="the base table to load (it must exist in the database)")
    parser.add_argument("--data", required=True, help="database file to load into")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--parquet", metavar="PATH", help="a Parquet file or a directory of them")
    src.add_argument("--csv", metavar="PATH", help="a CSV file (or directory) with a header line")
    src.add_argument("--jdbc", metavar="URL", help="a JDBC URL; name the table with --dbtable")
    parser.add_argument("--dbtable", help="the table (or parenthesised subquery) to read over JDBC")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for Spark's reader, e.g. sep=; or user=app (repeatable)",
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
        default=DEFAULT_BATCH_ROWS,
        help=f"rows per batch handed to the engine (default {DEFAULT_BATCH_ROWS})",
    )
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="skip the checking pass over the source (faster; a bad row then stops the load midway)",
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
        if args.jdbc:
            source, fmt = args.jdbc, "jdbc"
            if args.dbtable:
                options["dbtable"] = args.dbtable
        elif args.parquet:
            source, fmt = args.parquet, "parquet"
        else:
            source, fmt = args.csv, "csv"
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
        )
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
    print(
        f"loaded {rows} rows into {args.table} in {elapsed:.1f} s ({rate:,.0f} rows/s)"
        f" with Spark master {current_master()}"
    )
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

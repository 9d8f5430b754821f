"""Bulk replay: the initial state of a big fully materialized node, computed in Spark.

When a query is installed, each new fully materialized node (an aggregate, a join, a distinct or
a reader that cannot be partial, including every node of a view rebuilt when a database is
reopened) gets its initial state by a *replay*: ``Graph.install`` feeds it the current contents
of its parents. In process that is Python work for every base row beneath the node. When the
base rows beneath one of the node's inputs (a *port*) reach ``bulk_replay_rows``, that input is
computed in Spark instead:

    conn = noria_py.connect("app.db", bulk_replay_rows=1_000_000)   # the default threshold
    conn = noria_py.connect("app.db", bulk_replay_rows=None)        # always in process
    conn = noria_py.connect("app.db", spark_master="spark://host:7077")

1. **Plan.** The operators between the node and the base tables are translated into DataFrame
   operations, each from the relational operation it says it is (``Node.replay_op``; whether the
   node takes a Spark replay at all is its ``replay_role``): a base table is its snapshot, a projection of columns is a ``select``, an
   equi-join (inner or left) is a DataFrame join, a union is ``union``, a distinct is
   ``distinct``. Filters and computed projections are Python closures with MySQL semantics
   (``sql/expr.py``); they run inside Spark through ``mapInArrow`` calling the very same
   closures on the very same Python values, so they cannot disagree with the in-process
   replay. The node's own operator is not translated: aggregates (COUNT, SUM, AVG, MIN, MAX,
   COUNT DISTINCT, GROUP_CONCAT, STD/VARIANCE and their forms, BIT_AND/BIT_OR/BIT_XOR), join
   state and reader order/limit stay in the node's Python code, which receives the Spark result
   exactly as it would receive a replay (a consolidated row of multiplicity m counts m times).
2. **Snapshot.** The base tables the plan reads are exported to Parquet with pyarrow (only the
   columns the plan uses), through base storage's own connection, so the snapshot holds exactly
   the rows an in-process replay would read.
3. **Result.** Spark groups the input rows into ``(row, multiplicity)`` pairs (a consolidated
   batch, usually far smaller than the base data under an aggregate), the driver fetches them
   with ``toArrow`` (never Row objects) and hands them to ``node.on_input(port, batch)``.
   Operators are distributive over delta addition, so feeding the consolidated batch gives the
   state that feeding every row would.
4. **Deltas after the snapshot.** The replay runs inside ``Graph.install`` with the engine's
   lock held, as the in-process replay does: the snapshot is taken after every delta already
   acknowledged has been applied (``Engine._install`` drains pending deltas first) and no write
   can enter until the node is connected to its parents, so the deltas that arrive after the
   snapshot are exactly the ones the connected node receives through the live stream. Writers
   arriving meanwhile wait for the replay (they waited for the in-process replay too, which
   takes longer). The snapshot's position in the write stream is base storage's change counter
   (SQLite ``total_changes``); it is checked again before the result is loaded, and a moved
   position discards the Spark result.

Which inputs go to Spark: beneath an aggregate or a distinct node, whose consolidated input is
small, every translatable operator, joins and distincts included (they are recomputed from the
snapshot, which beats listing their materialized contents in Python). Beneath a join or a reader,
which keep every input row anyway, only stateless operators: a materialized node there already
holds the input, and a bare base table leaves Spark nothing to compute. A port falls back to the
in-process replay (never to a different answer) when it is below the threshold, when pyspark is
missing, when its operators include an aggregate (whose contents are at hand) or an operator of
unknown kind, when a join compares columns whose equality differs between Python and Spark (an
INT with a DOUBLE, a string with a number, a computed DECIMAL), when a computed column produces a
value that would not survive the trip through Arrow unchanged (a value whose Python type is not
the column's kind, NaN, -0.0, an integer beyond 64 bits) or a closure raises, or when Spark
fails. ``BulkReplay.records`` says which path each port took and why.

A computed DECIMAL column crosses Spark as text (its exact ``str``), so values equal as numbers
but written with different exponents (``1.5`` and ``1.50`` from a CASE mixing scales) are kept
apart by Spark and merged by the node, which keeps the first it receives; the in-process replay
keeps the first in scan order. Both are the same value.

Crossover (``benches/spark.py``, 2 shared cores, load average 6 to 14): for the grouped vote count
over 100k stories, with the Spark session already running, the in-process replay is faster below
about 360k base rows (``replay_crossover_rows``) and Spark is 5x faster at 10M rows (59 s in
process, 11.5 s in Spark: 5.9 s snapshot, 3.9 s Spark, 1.3 s feeding the 100k groups to the
aggregate). The first bulk replay of a process also starts the session (10 to 30 s), which pays
off from a few million rows. ``DEFAULT_BULK_REPLAY_ROWS`` (one million) sits between the two, and
keeps small databases from ever starting Spark.

On a cluster, executors read the snapshot files: put ``bulk_replay_dir`` on storage they share
and install noria_py on them (the closures refer to its modules).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import math
import os
import shutil
import tempfile
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..options import DEFAULT_BULK_REPLAY_ROWS  # the option's default (options.py)
from ..sql import values as V

log = logging.getLogger(__name__)

# Rows per chunk when exporting a base table, and per Arrow batch handed to Spark's writer.
EXPORT_CHUNK_ROWS = 200_000
# Replay records kept for inspection (BulkReplay.records).
MAX_RECORDS = 200

# --- transports: how a column's values cross Spark ------------------------------------------
# Each is exact for the Python values it accepts: the values that come back are equal and of the
# same type (and, for DECIMAL, the same exponent) as the values that went in.
INT_T = "int"  # int, within 64 bits: int64 / LongType
FLOAT_T = "float"  # float: float64 / DoubleType
STR_T = "str"  # str (VARCHAR, TEXT, TIME): string / StringType
BYTES_T = "bytes"  # bytes: binary / BinaryType
DATE_T = "date"  # datetime.date: date32 / DateType
DATETIME_T = "datetime"  # naive datetime.datetime: timestamp[us] / TimestampNTZType
DECTEXT_T = "dectext"  # a computed Decimal of any exponent, as its exact text
NULL_T = "null"  # always NULL
# ("dec", precision, scale): a DECIMAL base column, every value with exponent -scale.

_KIND_TRANSPORT = {
    V.INT: INT_T,
    V.FLOAT: FLOAT_T,
    V.STR: STR_T,
    V.TIME: STR_T,
    V.BYTES: BYTES_T,
    V.DATE: DATE_T,
    V.DATETIME: DATETIME_T,
    V.DECIMAL: DECTEXT_T,
    V.NULL: NULL_T,
}
_PY_TYPE = {
    INT_T: int,
    FLOAT_T: float,
    STR_T: str,
    BYTES_T: bytes,
    DATE_T: _dt.date,
    DATETIME_T: _dt.datetime,
    DECTEXT_T: Decimal,
}
_NONE = type(None)


class Untranslatable(Exception):
    """The port's operators (or its data) cannot go through Spark exactly: replay in process."""


class UnsafeValue(ValueError):
    """Raised inside Spark when a computed value would not cross Spark unchanged."""


def _is_dec(t) -> bool:
    return isinstance(t, tuple)


def _base_transport(ctype: V.ColumnType):
    kind = ctype.kind
    if kind == V.DECIMAL:
        precision = ctype.precision or 10
        scale = ctype.scale or 0
        if precision > 38 or scale > precision:
            raise Untranslatable(f"DECIMAL({precision},{scale}) is wider than Spark's decimals")
        return ("dec", precision, scale)
    if kind.__class__ is V.FloatKind:
        # its values are shown as the column's type shows them (ColumnFloat), not as doubles
        raise Untranslatable(f"column type {ctype.mysql_name} with its own display")
    t = _KIND_TRANSPORT.get(kind)
    if t is None or t in (DECTEXT_T, NULL_T):
        raise Untranslatable(f"column kind {kind}")
    return t


def arrow_type(t):
    import pyarrow as pa

    if _is_dec(t):
        return pa.decimal128(t[1], t[2])
    return {
        INT_T: pa.int64(),
        FLOAT_T: pa.float64(),
        STR_T: pa.string(),
        BYTES_T: pa.binary(),
        DATE_T: pa.date32(),
        DATETIME_T: pa.timestamp("us"),
        DECTEXT_T: pa.string(),
        NULL_T: pa.string(),
    }[t]


def spark_type(t):
    from pyspark.sql import types as T

    if _is_dec(t):
        return T.DecimalType(t[1], t[2])
    return {
        INT_T: T.LongType(),
        FLOAT_T: T.DoubleType(),
        STR_T: T.StringType(),
        BYTES_T: T.BinaryType(),
        DATE_T: T.DateType(),
        DATETIME_T: T.TimestampNTZType(),
        DECTEXT_T: T.StringType(),
        NULL_T: T.StringType(),
    }[t]


def _comparable(t) -> bool:
    """Spark's equality on this transport is Python's equality on the values."""
    return t != DECTEXT_T


def _join_compatible(a, b) -> bool:
    """Spark's ``a = b`` (after its implicit casts) agrees with Python's ``==`` for every pair."""
    if a == NULL_T or b == NULL_T:
        return True  # NULL never matches, in either
    if not (_comparable(a) and _comparable(b)):
        return False
    if _is_dec(a) and _is_dec(b):
        # the common type must hold both without rounding
        return max(a[1] - a[2], b[1] - b[2]) + max(a[2], b[2]) <= 38
    if _is_dec(a) or _is_dec(b):
        d = a if _is_dec(a) else b
        other = b if d is a else a
        return other == INT_T and max(20, d[1] - d[2]) + d[2] <= 38
    return a == b


def _union_type(types: list):
    first = types[0]
    if all(t == first for t in types):
        return first
    if all(_is_dec(t) for t in types) and len({t[2] for t in types}) == 1:
        return ("dec", max(t[1] for t in types), first[2])
    return None


def encode_values(values: list, t) -> list:
    """Check computed ``values`` against transport ``t``; return them ready for ``pa.array``.

    Raises UnsafeValue for a value that would come back different (another type, NaN, -0.0).
    """
    want = _PY_TYPE.get(t)
    found = set(map(type, values))
    found.discard(_NONE)
    if t == NULL_T:
        if found:
            raise UnsafeValue(f"a non-NULL value in a NULL column: {sorted(map(str, found))}")
        return values
    if not found:
        return values
    if found != {want}:
        names = ", ".join(sorted(k.__name__ for k in found))
        raise UnsafeValue(f"{names} values in a column of kind {t}")
    if t == FLOAT_T:
        for v in values:
            if v is not None and (v != v or (v == 0.0 and math.copysign(1.0, v) < 0)):
                raise UnsafeValue(f"{v!r} in a DOUBLE column")
    elif t == DECTEXT_T:
        out = []
        for v in values:
            if v is None:
                out.append(None)
            elif not v.is_finite():
                raise UnsafeValue(f"{v!r} in a DECIMAL column")
            else:
                out.append(str(v))
        return out
    elif t == DATETIME_T:
        for v in values:
            if v is not None and v.tzinfo is not None:
                raise UnsafeValue("a datetime with a time zone")
    return values


def decode_values(values: list, t) -> list:
    """Python values of a column fetched from Arrow (the inverse of ``encode_values``)."""
    if t == DECTEXT_T:
        return [None if v is None else Decimal(v) for v in values]
    return values


# --- the plan: a port's operators, checked and typed ------------------------------------------


class _Plan:
    """One relational operation of a port's plan, typed (a transport per column). Each kind
    says which base columns it needs and builds its own DataFrame (``_Job``)."""

    types: list
    counts_only = False  # only the number of rows matters (``_Empty``)

    def children(self) -> list[_Plan]:
        return []

    def mark_needed(self, cols: set) -> None:
        """Record in each scan below the base columns that reach ``cols`` of this plan's
        output or decide whether a row is in it."""
        for c in self.children():
            c.mark_needed(set(range(len(c.types))))

    def trivial(self) -> bool:
        """Only picks of base columns: nothing for Spark to compute."""
        return False

    def dataframe(self, job: _Job, F):
        """The DataFrame of this plan's output rows, columns named c0, c1, ..."""
        raise Untranslatable(f"no DataFrame for {type(self).__name__}")


@dataclass(eq=False)
class _Scan(_Plan):
    table: str
    schema: Any
    types: list
    needed: set = field(default_factory=set)

    def mark_needed(self, cols):
        self.needed |= cols

    def trivial(self):
        return True

    def dataframe(self, job, F):
        path, exported = job.paths[id(self)]
        df = job.spark.read.parquet(path)
        cols = []
        for i, t in enumerate(self.types):
            name = f"c{i}"
            if i in exported:
                cols.append(F.col(name).cast(spark_type(t)).alias(name))
            else:
                cols.append(F.lit(None).cast(spark_type(t)).alias(name))
        return df.select(*cols)


@dataclass(eq=False)
class _Pick(_Plan):
    child: _Plan
    cols: list
    types: list

    def children(self):
        return [self.child]

    def mark_needed(self, cols):
        self.child.mark_needed({self.cols[c] for c in cols})

    def trivial(self):
        return self.child.trivial()

    def dataframe(self, job, F):
        df = self.child.dataframe(job, F)
        return df.select(*[F.col(f"c{c}").alias(f"c{j}") for j, c in enumerate(self.cols)])


@dataclass(eq=False)
class _Compute(_Plan):
    child: _Plan
    cols: list  # input column per output, None when computed
    fns: list
    types: list

    def children(self):
        return [self.child]

    # (mark_needed: every closure runs, even for a column nobody needs, and reads anything)

    def dataframe(self, job, F):
        fn = _compute_fn(self.cols, self.fns, self.child.types, self.types, job.problems)
        return self.child.dataframe(job, F).mapInArrow(fn, _struct(self.types))


@dataclass(eq=False)
class _Where(_Plan):
    child: _Plan
    pred: Any
    types: list

    def children(self):
        return [self.child]

    def dataframe(self, job, F):
        fn = _filter_fn(self.pred, self.child.types, job.problems)
        return self.child.dataframe(job, F).mapInArrow(fn, _struct(self.types))


@dataclass(eq=False)
class _JoinP(_Plan):
    left: _Plan
    right: _Plan
    left_key: list
    right_key: list
    outer: bool
    types: list

    def children(self):
        return [self.left, self.right]

    def mark_needed(self, cols):
        nl = len(self.left.types)
        self.left.mark_needed({c for c in cols if c < nl} | set(self.left_key))
        self.right.mark_needed({c - nl for c in cols if c >= nl} | set(self.right_key))

    def dataframe(self, job, F):
        left = self.left.dataframe(job, F)
        nl, nr = len(self.left.types), len(self.right.types)
        right = self.right.dataframe(job, F).toDF(*_names(nr, "r"))
        cond = [F.col(f"c{a}") == F.col(f"r{b}") for a, b in zip(self.left_key, self.right_key)]
        joined = left.join(right, on=cond, how="left" if self.outer else "inner")
        out = [F.col(f"c{i}") for i in range(nl)]
        out += [F.col(f"r{j}").alias(f"c{nl + j}") for j in range(nr)]
        return joined.select(*out)


@dataclass(eq=False)
class _UnionP(_Plan):
    inputs: list
    types: list

    def children(self):
        return list(self.inputs)

    def mark_needed(self, cols):
        for p in self.inputs:
            p.mark_needed(cols)

    def dataframe(self, job, F):
        result = None
        for p in self.inputs:
            df = p.dataframe(job, F).select(
                *[
                    F.col(f"c{i}").cast(spark_type(t)).alias(f"c{i}")
                    for i, t in enumerate(self.types)
                ]
            )
            result = df if result is None else result.union(df)
        return result


@dataclass(eq=False)
class _DistinctP(_Plan):
    child: _Plan
    types: list

    def children(self):
        return [self.child]

    def dataframe(self, job, F):
        return self.child.dataframe(job, F).distinct()


@dataclass(eq=False)
class _Empty(_Plan):
    """A projection to no columns (``SELECT COUNT(*) ...``): only the row count matters."""

    child: _Plan
    types: list
    counts_only = True

    def children(self):
        return [self.child]

    def mark_needed(self, cols):
        self.child.mark_needed(set())


def plan_port(node, port: int, storage) -> _Plan:
    """The plan computing ``node``'s input on ``port``, or Untranslatable."""
    reducing = node.replay_role == "reduce"
    return _translate(node.parents[port], storage, reducing, top=True)


def _translate(n, storage, reducing: bool, top: bool = False) -> _Plan:
    """The plan of node ``n``'s output, from the relational operation it says it is
    (``Node.replay_op``) over the plans of its parents."""
    op = n.replay_op()
    what = op[0] if op is not None else None
    if what == "scan":
        table = op[1]
        schema = storage.schemas.get(table.lower())
        if schema is None or len(schema.columns) != len(n.columns):
            raise Untranslatable(f"base table {table} has no matching schema")
        return _Scan(table, schema, [_base_transport(c.ctype) for c in schema.columns])
    if what == "where":
        child = _translate(n.parents[0], storage, reducing)
        return _Where(child, op[1], list(child.types))
    if what == "map":
        child = _translate(n.parents[0], storage, reducing)
        cols = list(op[1])
        if not cols:
            if not top:
                raise Untranslatable("a projection to no columns inside the plan")
            return _Empty(child, [])
        if all(c is not None for c in cols):
            return _Pick(child, cols, [child.types[c] for c in cols])
        types = []
        for c, k in zip(cols, n.kinds):
            if c is not None:
                types.append(child.types[c])
            elif k in _KIND_TRANSPORT:
                types.append(_KIND_TRANSPORT[k])
            else:
                raise Untranslatable(f"a computed column of kind {k}")
        fns = list(op[2])
        if any(c is None and f is None for c, f in zip(cols, fns)):
            raise Untranslatable("a computed column without a function")
        return _Compute(child, cols, fns, types)
    if what == "union":
        inputs = [_translate(p, storage, reducing) for p in n.parents]
        width = len(inputs[0].types)
        if any(len(p.types) != width for p in inputs):
            raise Untranslatable("union inputs of different widths")
        types = []
        for i in range(width):
            t = _union_type([p.types[i] for p in inputs])
            if t is None:
                raise Untranslatable(f"union column {i} has different types in its inputs")
            types.append(t)
        return _UnionP(inputs, types)
    if what == "join" and reducing:
        _, left_key, right_key, outer = op
        left = _translate(n.parents[0], storage, reducing)
        right = _translate(n.parents[1], storage, reducing)
        for lk, rk in zip(left_key, right_key):
            if not _join_compatible(left.types[lk], right.types[rk]):
                raise Untranslatable(
                    f"join key types {left.types[lk]} and {right.types[rk]} compare differently"
                    " in Spark"
                )
        return _JoinP(
            left,
            right,
            list(left_key),
            list(right_key),
            bool(outer),
            left.types + right.types,
        )
    if what == "distinct" and reducing:
        child = _translate(n.parents[0], storage, reducing)
        if not all(_comparable(t) for t in child.types):
            raise Untranslatable("distinct over a computed DECIMAL")
        return _DistinctP(child, list(child.types))
    if what in ("join", "distinct", "state"):
        raise Untranslatable(f"input {n.kind} {n.id} is materialized: its contents are at hand")
    raise Untranslatable(f"{n.kind} {n.id} has no Spark translation")


def _scans(plan: _Plan) -> list[_Scan]:
    out = []
    stack = [plan]
    while stack:
        p = stack.pop()
        if not p.children():
            out.append(p)  # every leaf is a scan
        stack.extend(p.children())
    return out


# --- Spark side ------------------------------------------------------------------------------


def _names(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def _struct(types: list):
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField(name, spark_type(t), True) for name, t in zip(_names(len(types)), types)]
    )


def _rows_of(batch, types: list) -> list[tuple]:
    cols = [decode_values(batch.column(i).to_pylist(), t) for i, t in enumerate(types)]
    return list(zip(*cols)) if cols else [()] * batch.num_rows


class _Problems:
    """An accumulator (``AccumulatorParam``) of the first few problems met inside Spark.

    A mapInArrow function that meets a value it cannot pass on exactly (or a closure that
    raises) records why and drops its batch instead of failing the task, so Spark logs no error
    and the driver, seeing the problem, discards the result and replays in process.
    """

    def zero(self, value):
        return []

    def addInPlace(self, a, b):  # noqa: N802 - pyspark's AccumulatorParam interface
        return (a + b)[:5]


def _problem(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _filter_fn(pred, types: list, problems):
    """A mapInArrow function keeping the rows for which the filter's closure is true."""

    def run(batches):
        import pyarrow as pa

        for batch in batches:
            if batch.num_rows == 0:
                continue
            try:
                rows = _rows_of(batch, types)
                mask = pa.array([bool(pred(r, None)) for r in rows], pa.bool_())
            except Exception as e:  # noqa: BLE001 - reported to the driver
                problems.add([_problem(e)])
                continue
            yield batch.filter(mask)

    return run


def _compute_fn(cols: list, fns: list, in_types: list, out_types: list, problems):
    """A mapInArrow function evaluating a projection's closures; picked columns pass as is."""

    def run(batches):
        import pyarrow as pa

        names = _names(len(cols))
        arrow_types = [arrow_type(t) for t in out_types]
        for batch in batches:
            if batch.num_rows == 0:
                continue
            try:
                rows = _rows_of(batch, in_types)
                arrays = []
                for c, f, t, at in zip(cols, fns, out_types, arrow_types):
                    if c is not None:
                        arrays.append(batch.column(c))
                        continue
                    values = encode_values([f(r, None) for r in rows], t)
                    try:
                        arrays.append(pa.array(values, at))
                    except (OverflowError, pa.ArrowException) as e:
                        raise UnsafeValue(f"a computed {t} value does not fit: {e}") from None
            except Exception as e:  # noqa: BLE001 - reported to the driver
                problems.add([_problem(e)])
                continue
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return run


class _Job:
    """Builds one port's DataFrame and fetches its consolidated rows."""

    def __init__(self, spark, paths: dict):
        self.spark = spark
        self.paths = paths
        self.problems = spark.sparkContext.accumulator([], _Problems())

    def dataframe(self, plan: _Plan):
        """The DataFrame of ``plan``'s output rows, columns named c0, c1, ..."""
        from pyspark.sql import functions as F

        return plan.dataframe(self, F)

    def consolidated(self, plan: _Plan) -> list:
        """The port's input as a batch of (row, multiplicity) records, computed by Spark."""
        from pyspark.sql import functions as F

        if plan.counts_only:
            n = self.dataframe(plan.children()[0]).count()
            self._check()
            return [((), n)] if n else []
        names = _names(len(plan.types))
        grouped = self.dataframe(plan).groupBy(*names).agg(F.count(F.lit(1)).alias("__m"))
        table = grouped.toArrow()
        self._check()
        cols = [decode_values(table.column(n).to_pylist(), t) for n, t in zip(names, plan.types)]
        counts = table.column("__m").to_pylist()
        return list(zip(zip(*cols), counts))

    def _check(self) -> None:
        if self.problems.value:
            raise Untranslatable(self.problems.value[0])


# --- snapshots -------------------------------------------------------------------------------


@dataclass
class _Snapshot:
    path: str
    columns: frozenset
    position: int
    rows: int
    schema_id: int


def export_table(storage, schema, columns: list[int], types: list, path: str) -> int:
    """Write ``columns`` of a base table to a Parquet file; return the number of rows.

    Reads what ``storage.scan`` would (``storage.reading``: the committed rows when the storage
    has a read connection, else an open transaction's rows too), converted as it converts.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..storage.sqlite import q

    fields = [pa.field(f"c{c}", arrow_type(t)) for c, t in zip(columns, types)]
    arrow_schema = pa.schema(fields)
    writer = pq.ParquetWriter(path, arrow_schema)
    rows = 0
    try:
        if all(t == INT_T for t in types):
            for table in _int_chunks(storage, schema, columns, arrow_schema):
                writer.write_table(table)
                rows += table.num_rows
        else:
            names = ", ".join(q(schema.columns[c].name) for c in columns)
            cur = storage.reading.execute(f"SELECT {names} FROM {q(schema.name)}")
            ctypes = [schema.columns[c].ctype for c in columns]
            while True:
                chunk = cur.fetchmany(EXPORT_CHUNK_ROWS)
                if not chunk:
                    break
                arrays = []
                for i, (ctype, t) in enumerate(zip(ctypes, types)):
                    values = [r[i] for r in chunk]
                    arrays.append(_stored_array(values, ctype, t))
                writer.write_table(pa.Table.from_arrays(arrays, schema=arrow_schema))
                rows += len(chunk)
    finally:
        writer.close()
    return rows


def _stored_array(values: list, ctype, t):
    """An Arrow array of stored values, converted as base storage converts them on a scan."""
    import pyarrow as pa

    if ctype.kind in (V.DECIMAL, V.DATE, V.DATETIME):
        values = [None if v is None else V.from_storage(v, ctype) for v in values]
    found = set(map(type, values))
    found.discard(_NONE)
    want = Decimal if _is_dec(t) else _PY_TYPE[t]
    if found and found != {want}:
        names = ", ".join(sorted(k.__name__ for k in found))
        raise Untranslatable(f"column {t} holds {names} values")
    if _is_dec(t):
        exponent = -t[2]
        for v in values:
            if v is not None and (
                v.as_tuple().exponent != exponent or (v.is_zero() and v.is_signed())
            ):
                raise Untranslatable(f"DECIMAL value {v!r} does not have scale {t[2]}")
    return pa.array(values, arrow_type(t))


def _int_chunks(storage, schema, columns: list[int], arrow_schema):
    """Integer columns, read as CSV text built by SQLite (exact for integers, and C-fast)."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv

    from ..storage.sqlite import q

    parts = []
    for c in columns:
        col = schema.columns[c]
        name = q(col.name)
        parts.append(f"ifnull({name}, '')" if col.nullable else name)
    line = " || ',' || ".join(parts)
    select = f"SELECT rowid AS r, {line} AS line FROM {q(schema.name)}"
    outer = "SELECT max(r), count(*), group_concat(line, char(10)) FROM ({})"
    first = outer.format(f"{select} ORDER BY rowid LIMIT ?")
    after = outer.format(f"{select} WHERE rowid > ? ORDER BY rowid LIMIT ?")
    read = pcsv.ReadOptions(column_names=arrow_schema.names, block_size=1 << 26)
    parse = pcsv.ParseOptions(ignore_empty_lines=False)
    convert = pcsv.ConvertOptions(
        column_types={f.name: f.type for f in arrow_schema},
        null_values=[""],
        strings_can_be_null=True,
    )
    last = None
    while True:
        if last is None:
            top, n, text = storage.reading.execute(first, (EXPORT_CHUNK_ROWS,)).fetchone()
        else:
            top, n, text = storage.reading.execute(after, (last, EXPORT_CHUNK_ROWS)).fetchone()
        if not n:
            return
        try:
            table = pcsv.read_csv(
                io.BytesIO(text.encode()),
                read_options=read,
                parse_options=parse,
                convert_options=convert,
            )
        except pa.ArrowException as e:
            raise Untranslatable(f"an INT column of {schema.name} holds a non-integer: {e}") from e
        if table.num_rows != n:
            raise Untranslatable(f"exported {table.num_rows} of {n} rows of {schema.name}")
        yield table.cast(arrow_schema)
        last = top
        if n < EXPORT_CHUNK_ROWS:
            return


# --- the hook --------------------------------------------------------------------------------


@dataclass
class ReplayRecord:
    """How one port of one node got its initial state."""

    node: str
    port: int
    path: str  # "spark" or "in-process"
    reason: str = ""
    base_rows: int = 0
    records: int = 0  # (row, multiplicity) records handed to the node
    position: int | None = None  # base storage's change counter at the snapshot
    snapshot_s: float = 0.0
    spark_s: float = 0.0
    load_s: float = 0.0


class BulkReplay:
    """``Graph.bulk_replay``: called for each new fully materialized node before its replay.

    Returns the ports whose input it has fed; ``Graph.install`` replays the others in process.
    """

    def __init__(
        self,
        engine,
        threshold: int = DEFAULT_BULK_REPLAY_ROWS,
        master: str | None = None,
        config: dict[str, str] | None = None,
        scratch_dir: str | None = None,
    ):
        self.storage = engine.storage
        self.threshold = threshold
        self.master = master
        self.config = dict(config or {})
        self.scratch_dir = scratch_dir
        self.records: deque[ReplayRecord] = deque(maxlen=MAX_RECORDS)
        # test hook: called after the snapshot is exported, before Spark computes
        self.on_snapshot = None
        self._dir: str | None = None
        self._snapshots: dict[str, _Snapshot] = {}
        self._seq = 0
        self._missing: str | None = None

    # --- deciding ------------------------------------------------------------------------------
    def __call__(self, node) -> set[int]:
        if node.replay_role is None:
            return set()
        done = set()
        for port in range(len(node.parents)):
            if self._replay_port(node, port):
                done.add(port)
        return done

    def _replay_port(self, node, port: int) -> bool:
        label = f"{node.id}: {node.describe()}"
        try:
            plan = plan_port(node, port, self.storage)
        except Untranslatable as e:
            self._note(label, port, "in-process", str(e))
            return False
        reducing = node.replay_role == "reduce"
        if plan.trivial() and not reducing:
            self._note(label, port, "in-process", "nothing to compute: the input is a base table")
            return False
        scans = _scans(plan)
        base_rows = sum(self.storage.count(s.table) for s in scans)
        if base_rows < self.threshold:
            self._note(label, port, "in-process", "below the threshold", base_rows)
            return False
        if not self._spark_available():
            self._note(label, port, "in-process", self._missing or "", base_rows)
            return False
        record = ReplayRecord(label, port, "spark", base_rows=base_rows)
        try:
            batch = self._compute(plan, scans, record)
        except Untranslatable as e:  # the data cannot cross Spark exactly
            log.info("bulk replay of %s (port %d) runs in process: %s", label, port, e)
            self._note(label, port, "in-process", str(e), base_rows)
            return False
        except Exception as e:  # noqa: BLE001 - any failure means: replay in process
            reason = f"Spark failed: {_first_line(e)}"
            log.warning("bulk replay of %s (port %d) runs in process: %s", label, port, reason)
            self._note(label, port, "in-process", reason, base_rows)
            return False
        start = time.perf_counter()
        node.on_input(port, batch)
        record.load_s = time.perf_counter() - start
        record.records = len(batch)
        self.records.append(record)
        log.info(
            "bulk replay of %s (port %d): %d base rows -> %d records in %.2f s",
            label,
            port,
            base_rows,
            len(batch),
            record.snapshot_s + record.spark_s + record.load_s,
        )
        return True

    def _note(self, label: str, port: int, path: str, reason: str, base_rows: int = 0) -> None:
        self.records.append(ReplayRecord(label, port, path, reason, base_rows))

    def _spark_available(self) -> bool:
        if self._missing is None:
            try:
                from .session import require_pyspark

                require_pyspark()
                self._missing = ""
            except ImportError as e:
                self._missing = str(e)
                log.warning("bulk replays run in process: %s", e)
        return not self._missing

    # --- computing -----------------------------------------------------------------------------
    def _compute(self, plan: _Plan, scans: list[_Scan], record: ReplayRecord) -> list:
        from .session import get_session

        start = time.perf_counter()
        plan.mark_needed(set(range(len(plan.types))))
        position = self.storage.conn.total_changes
        # one snapshot per table, with the columns every scan of it (a self-join) needs
        needed: dict[str, set] = {}
        for s in scans:
            needed.setdefault(s.schema.name.lower(), set()).update(s.needed)
        snaps = {}
        for s in scans:
            key = s.schema.name.lower()
            if key not in snaps:
                # a row count still needs one column to count
                snaps[key] = self._snapshot(s, needed[key] or {0}, position)
        paths = {}
        for s in scans:
            snap = snaps[s.schema.name.lower()]
            paths[id(s)] = (snap.path, snap.columns)
        record.position = position
        record.snapshot_s = time.perf_counter() - start
        if self.on_snapshot is not None:
            self.on_snapshot(record)
        start = time.perf_counter()
        spark = get_session(self.master, self.config or None)
        batch = _Job(spark, paths).consolidated(plan)
        record.spark_s = time.perf_counter() - start
        if self.storage.conn.total_changes != position:
            raise Untranslatable("base storage changed during the bulk replay")
        return batch

    def _snapshot(self, scan: _Scan, needed: set, position: int) -> _Snapshot:
        """The Parquet snapshot of a base table's ``needed`` columns at ``position``.

        A snapshot of the same table at the same position (and size, and schema) is reused when
        it has the columns, and widened otherwise; the file it replaces is deleted.
        """
        schema = scan.schema
        key = schema.name.lower()
        rows = self.storage.count(schema.name)
        old = self._snapshots.get(key)
        current = (
            old is not None
            and old.position == position
            and old.rows == rows
            and old.schema_id == id(schema)
        )
        if current and needed <= old.columns:
            return old
        columns = sorted(needed | old.columns) if current else sorted(needed)
        self._seq += 1
        path = os.path.join(self._directory(), f"{key}-{self._seq}.parquet")
        written = export_table(
            self.storage, schema, columns, [scan.types[c] for c in columns], path
        )
        if written != rows:
            raise Untranslatable(f"exported {written} rows of {schema.name}, storage holds {rows}")
        if old is not None:
            with contextlib.suppress(OSError):
                os.remove(old.path)
        snap = _Snapshot(path, frozenset(columns), position, rows, id(schema))
        self._snapshots[key] = snap
        return snap

    def _directory(self) -> str:
        if self._dir is None:
            base = self.scratch_dir
            if base is not None:
                os.makedirs(base, exist_ok=True)
            self._dir = tempfile.mkdtemp(prefix="noria_py-replay-", dir=base)
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        return self._dir


def _first_line(error: BaseException) -> str:
    from .backfill import _first_line as first

    return first(error)


def configure(engine, options: dict) -> BulkReplay | None:
    """The bulk replay hook for an engine opened with ``options``, or None when disabled.

    ``bulk_replay_rows``: base rows beneath a node's input from which Spark computes it
    (default DEFAULT_BULK_REPLAY_ROWS; None turns bulk replays off; 0 sends every translatable
    input to Spark). ``spark_master``, ``spark_config``: used when a bulk replay starts the
    process's Spark session. ``bulk_replay_dir``: where snapshots are written (default: a
    temporary directory).
    """
    from ..errors import ProgrammingError

    threshold = options.get("bulk_replay_rows", DEFAULT_BULK_REPLAY_ROWS)
    if threshold is None or threshold is False:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise ProgrammingError("bulk_replay_rows must be a whole number of rows (>= 0) or None")
    return BulkReplay(
        engine,
        threshold,
        master=options.get("spark_master"),
        config=options.get("spark_config"),
        scratch_dir=options.get("bulk_replay_dir"),
    )

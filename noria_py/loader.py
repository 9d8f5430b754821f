"""Load a base table from a local file or an in-memory frame, without Spark.

    conn.backfill("votes", "votes.csv")          # CSV, Parquet, JSON lines: read here by Arrow
    conn.backfill("votes", pandas_frame)         # a pandas DataFrame or a pyarrow Table
    conn.backfill("votes", "votes.csv", via="spark")   # the same load through Spark

The rules are the Spark loader's (``noria_py.spark.backfill``): columns are matched by name
(case-insensitive), a CSV file is RFC 4180 read as MySQL's ``LOAD DATA ... FIELDS TERMINATED
BY ',' OPTIONALLY ENCLOSED BY '"' ESCAPED BY '' IGNORE 1 LINES`` reads it, and a value that does
not fit its column is an error naming the row, the column and the value, listing up to
``MAX_ERRORS`` of them, with nothing loaded. Here every source has row numbers (counted from 1,
after a CSV header), a blank line in a CSV file is a record of one empty field as in LOAD DATA,
and a quoted "NULL" is told apart from an unquoted NULL.

How a load runs: a first pass reads the source in Arrow batches and checks every value (the
conversion to each column's type runs in Arrow where Arrow's rules and MySQL's agree, value by
value with the engine's own coercion otherwise) and, with ``on_duplicate="error"``, the keys the
source repeats, keeping the converted batches (up to ``CACHE_BYTES``). The load pass hands them
to ``Engine.load_stored``: when no view in this process reads the table, up to ``WRITE_ROWS``
rows in one write (one transaction, one ``executemany`` fed from the batches' columns as it
goes); otherwise one write per batch, with its delta. Without the checking pass (or when the
converted batches did not fit in ``CACHE_BYTES``), each batch is converted and checked in turn
and written in the same writes of up to ``WRITE_ROWS`` rows (a bad batch stops the load with
the batches before it stored). ``skip_bad_rows=True`` loads the good rows and counts
the others instead of refusing the load.

A checked load whose converted batches outgrow ``STREAM_BYTES`` (outside a transaction, no
AUTO_INCREMENT column to number) does not read its source a second time (``_Stream``): base
storage takes the batches held so far and then each batch as soon as it is checked, in one
write that a problem, a repeated key or a failed read undoes, so the answer is the one a whole
checking pass first would give (``tests/test_load_stream.py`` compares the two), and a MySQL
source's client (whose output a thread drains) produces while SQLite writes.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import errors as E
from .sql import values as V
from .sql.collation import ck_tuple

MAX_ERRORS = 10
DEFAULT_BATCH_ROWS = 200_000
# The rows of checked batches that go to base storage in one write (one transaction) when no
# delta is needed; with views over the table, each batch is a write of its own.
WRITE_ROWS = 2_000_000
# The converted batches the checking pass keeps for the load pass (beyond, the source is read
# and converted again: a MySQL source from a copy of its client's output, mysql_client).
CACHE_BYTES = 1 << 30
# A checked load whose converted batches outgrow this is written while the rest is checked
# (``_Stream``) instead of reading its source a second time (7-15% faster beyond the cache in
# ``benches/load_stream.py``). Below it, writing while checking gained nothing measurable
# there (-3% to +5%; 232k against 274k rows/s in one earlier run), so the load checks first.
STREAM_BYTES = CACHE_BYTES
LOCAL_FORMATS = ("csv", "parquet", "json")
# The CSV options this reader takes (Spark's names); any other needs via="spark".
CSV_OPTIONS = ("header", "sep", "delimiter", "quote", "escape", "nullvalue", "encoding")
_UNSIGNED_BIGINT_MAX = 2**63 - 1  # base storage's integers are 64-bit signed
_OFFSET = re.compile(r"\d:\d\d(:\d\d(\.\d*)?)?\s*(Z|[+-]\d\d(:?\d\d)?)$")


class LoadResult(int):
    """The number of rows loaded; ``skipped`` counts the bad rows left out (``skip_bad_rows``),
    ``problems`` describes the first of them, ``via`` says who read the source."""

    skipped: int = 0
    problems: tuple[str, ...] = ()
    # who read the source: "local" (Arrow, this process), "client" (a MySQL source read by its
    # client program: noria_py.mysql_client) or "spark"
    via: str = "local"

    def __new__(cls, loaded: int, skipped: int = 0, problems=(), via: str = "local"):
        obj = super().__new__(cls, loaded)
        obj.skipped = skipped
        obj.problems = tuple(problems)
        obj.via = via
        return obj


def pyarrow_module():
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - pyarrow comes with the spark extra
        raise ImportError(
            "loading files needs pyarrow; install it with: pip install noria_py[spark]"
        ) from e
    return pa


def is_local_source(source, format: str | None) -> bool:  # noqa: A002
    """Whether this loader reads ``source``: a local CSV, Parquet or JSON-lines path, a pandas
    DataFrame or a pyarrow Table/RecordBatch."""
    if _frame_kind(source) is not None:
        return True
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if text.startswith("jdbc:") or format == "jdbc":
        return False
    if "://" in text and not text.startswith("file:"):
        return False
    if format is not None:
        return format in LOCAL_FORMATS
    try:
        from .spark.backfill import _guess_format

        return _guess_format(text) in LOCAL_FORMATS
    except E.Error:
        return True  # this loader gives the error (no such file, unknown format)


def _frame_kind(source) -> str | None:
    mod = type(source).__module__
    if mod.startswith("pandas") and type(source).__name__ == "DataFrame":
        return "pandas"
    if mod.startswith("pyarrow") and type(source).__name__ in ("Table", "RecordBatch"):
        return "arrow"
    return None


# --- sources ---------------------------------------------------------------------------------


@dataclass
class _Part:
    """One file (or frame) of a source: how to read its batches and how to name its rows."""

    label: str  # file name in row labels when the source has several parts; "" otherwise
    read: Callable[[int], Iterator[Any]]  # batch_rows -> record batches
    csv_path: str | None = None  # a CSV file's path (for its blank lines and its last field)
    malformed: list = field(default_factory=list)  # a CSV file's bad records: (row, text)
    header: bool = False


@dataclass
class _Source:
    columns: list[str]
    parts: list[_Part]
    csv: bool = False
    null_marker: str = "NULL"
    sep: str = ","
    quote: str = '"'


def _open(source, format: str | None, options: dict, text_columns=frozenset()) -> _Source:  # noqa: A002
    pa = pyarrow_module()
    from .mysql_client import ClientSource

    if isinstance(source, ClientSource):  # a MySQL or MariaDB table its client program reads
        return _Source(
            [c.name for c in source.columns],
            [_Part("", lambda _n: source.batches(pa))],
        )
    kind = _frame_kind(source)
    if kind is not None:
        if options:
            raise E.ProgrammingError(f"options do not apply to a {kind} source: {sorted(options)}")
        if kind == "pandas":
            try:
                table = pa.Table.from_pandas(source, preserve_index=False)
            except (pa.ArrowException, TypeError, ValueError) as e:
                raise E.DataError(f"the pandas DataFrame cannot be read: {e}") from e
        else:
            table = source if isinstance(source, pa.Table) else pa.Table.from_batches([source])
        return _Source(
            list(table.column_names), [_Part("", lambda n, t=table: iter(t.to_batches(n)))]
        )
    text = os.fspath(source)
    path = text[len("file:") :].removeprefix("//") if text.startswith("file:") else text
    from .spark.backfill import _guess_format

    fmt = format or _guess_format(path)
    if not os.path.exists(path):
        raise E.OperationalError(f"backfill source {text} does not exist")
    files = _files(path)
    if not files:
        raise E.ProgrammingError(f"no data files in {text}")
    if fmt == "csv":
        return _open_csv(files, options, path)
    if options:
        raise E.ProgrammingError(
            f"options do not apply to a {fmt} file read without Spark: {sorted(options)}"
            " (give via='spark' for Spark's reader options)"
        )
    if fmt == "parquet":
        import pyarrow.dataset as ds

        try:  # a directory may be partitioned (col=value/...): those columns count too
            data = ds.dataset(path, format="parquet", partitioning="hive")
        except (pa.ArrowException, OSError) as e:
            raise E.OperationalError(f"cannot read the Parquet source {text}: {e}") from e
        return _Source(
            list(data.schema.names),
            [_Part("", lambda n: data.to_batches(batch_size=n, use_threads=False))],
        )
    if fmt != "json":
        raise E.ProgrammingError(f"the {fmt} format is read through Spark only (give via='spark')")
    many = len(files) > 1
    parts = []
    columns: list[str] | None = None
    for f in files:
        table = _read_json(pa, f, text_columns)
        names = list(table.column_names)
        if columns is None:
            columns = names
        elif sorted(c.lower() for c in names) != sorted(c.lower() for c in columns):
            raise E.DataError(f"{f} has other columns than {files[0]}: {names} vs {columns}")
        parts.append(
            _Part(os.path.basename(f) if many else "", lambda n, t=table: iter(t.to_batches(n)))
        )
    return _Source(columns or [], parts)


def _read_json(pa, path: str, text_columns: set[str]):
    """A JSON-lines file as an Arrow table; a column loaded into a text column stays the text
    the file holds (Arrow would otherwise read '2020-01-01T10:00:00' as a timestamp)."""
    import pyarrow.json as pj

    try:
        table = pj.read_json(path)
        typed = [
            pa.field(n, pa.string())
            for n, t in zip(table.column_names, table.schema.types)
            if n.lower() in text_columns
            and not pa.types.is_string(t)
            and (pa.types.is_timestamp(t) or pa.types.is_date(t))
        ]
        if typed:
            options = pj.ParseOptions(
                explicit_schema=pa.schema(typed), unexpected_field_behavior="infer"
            )
            table = pj.read_json(path, parse_options=options)
    except (pa.ArrowException, OSError) as e:
        raise E.DataError(f"cannot read the JSON lines file {path}: {e}") from e
    return table


def _files(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path]
    out = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(names):
            if not name.startswith((".", "_")) and not name.endswith(".crc"):
                out.append(os.path.join(root, name))
    return out


def _open_csv(files: list[str], options: dict, path: str) -> _Source:
    pa = pyarrow_module()
    import pyarrow.csv as pcsv

    opts = {k.lower(): v for k, v in options.items()}
    unknown = sorted(k for k in opts if k not in CSV_OPTIONS)
    if unknown:
        raise E.ProgrammingError(
            f"the CSV option(s) {', '.join(unknown)} are Spark's: give via='spark' to use them"
            f" (this reader takes {', '.join(CSV_OPTIONS)})"
        )
    header = str(opts.get("header", "true")).lower() == "true"
    sep = opts.get("sep", opts.get("delimiter", "\t" if path.lower().endswith(".tsv") else ","))
    quote = opts.get("quote", '"')
    escape = opts.get("escape", quote)
    null_marker = opts.get("nullvalue", "NULL")
    encoding = opts.get("encoding", "utf8")
    for name, value in (("sep", sep), ("quote", quote), ("escape", escape)):
        if len(value) != 1:
            raise E.ProgrammingError(f"the CSV {name} must be one character, not {value!r}")
    many = len(files) > 1
    source = _Source([], [], csv=True, null_marker=null_marker, sep=sep, quote=quote)
    for f in files:
        part = _Part(os.path.basename(f) if many else "", None, csv_path=f, header=header)

        def bad_record(row, part=part):
            part.malformed.append((row.number, row.text))
            return "skip"

        def reader(n, f=f, part=part, names=None, blank_is_record=False, block_size=1 << 22):
            part.malformed.clear()
            return pcsv.open_csv(
                f,
                read_options=pcsv.ReadOptions(
                    use_threads=False,  # the records' numbers
                    block_size=block_size,
                    column_names=names if not header else None,
                    autogenerate_column_names=not header and names is None,
                    encoding=encoding,
                ),
                parse_options=pcsv.ParseOptions(
                    delimiter=sep,
                    quote_char=quote,
                    double_quote=escape == quote,
                    escape_char=False if escape == quote else escape,
                    newlines_in_values=True,
                    # a blank line is a record of one empty field to LOAD DATA: a value of
                    # a one-column file, else a malformed record (found by _blank_records)
                    ignore_empty_lines=not blank_is_record,
                    invalid_row_handler=bad_record,
                ),
                convert_options=pcsv.ConvertOptions(
                    column_types={c: pa.string() for c in names or ()},
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=False,
                    null_values=[null_marker],
                ),
            )

        try:
            try:  # the header only: a small first block (a long first record needs more)
                with reader(1, block_size=1 << 16) as probe:
                    names = list(probe.schema.names)
            except pa.ArrowInvalid:
                with reader(1) as probe:
                    names = list(probe.schema.names)
        except (pa.ArrowException, OSError) as e:
            raise E.OperationalError(f"cannot read the CSV file {f}: {e}") from e
        if not header:
            names = [f"_c{i}" for i in range(len(names))]
        if not source.columns:
            source.columns = names
        elif [c.lower() for c in names] != [c.lower() for c in source.columns]:
            raise E.DataError(f"{f} has other columns than {files[0]}: {names}")
        part.read = functools.partial(reader, names=names, blank_is_record=len(names) == 1)
        source.parts.append(part)
    return source


def _blank_records(path: str, sep: str, quote: str, limit: int) -> list[int]:
    """The record numbers (from 1, header included) of a CSV file's blank lines: a blank line
    is a record of one empty field to LOAD DATA, while Arrow skips it."""
    with open(path, "rb") as f:
        data = f.read()
    if not (b"\n\n" in data or b"\n\r\n" in data or data.startswith((b"\n", b"\r\n"))):
        return []
    import csv
    import io

    found = []
    text = io.StringIO(data.decode("utf-8", "replace"), newline="")
    for number, record in enumerate(csv.reader(text, delimiter=sep, quotechar=quote), 1):
        if not record:
            found.append(number)
            if len(found) >= limit:
                break
    return found


# --- conversion ------------------------------------------------------------------------------


@dataclass
class _Column:
    """One table column of a load: where its values come from and how they are checked."""

    index: int
    cdef: Any  # storage ColumnDef
    source: str | None  # the source column, None: the column's default
    trim: bool = False


class _Rows:
    """Rows made from columns on each iteration (``executemany`` takes them without a list of
    them all; a failed insert iterates again to name the bad row)."""

    __slots__ = ("columns", "size")

    def __init__(self, columns: list[list], size: int):
        self.columns = columns
        self.size = size

    def __iter__(self):
        return zip(*self.columns)

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0


class _Converted:
    """A batch converted to the table's columns: values in base storage's form and as the
    dataflow's values, by column (Arrow arrays or lists), and the problems of its rows."""

    __slots__ = ("columns", "inner", "problems", "size", "_lists")

    def __init__(self, columns: list, inner: list, problems: dict, size: int):
        self.columns = columns  # storage form: an Arrow array or a list per column
        # the dataflow's values: an array, a list, None (= columns) or a function making them
        self.inner = inner
        self.problems = problems  # delivered row number -> [problem text]
        self.size = size
        self._lists: list | None = None

    def rows(self, keep: list[int] | None = None) -> list:
        """The rows in storage form (those at ``keep`` only, when given)."""
        if self._lists is None:
            self._lists = [_pylist(c) for c in self.columns]
        if keep is None:
            return _Rows(self._lists, self.size)
        rows = list(zip(*self._lists))
        return [rows[i] for i in keep]

    def internal(self, keep: list[int] | None = None) -> list:
        """The rows as the dataflow's values."""
        lists = []
        for k, inner in enumerate(self.inner):
            if inner is None:
                inner = self.columns[k]
            elif callable(inner):
                inner = inner()  # made only when asked for
            lists.append(inner if isinstance(inner, list) else inner.to_pylist())
        rows = list(zip(*lists))
        return rows if keep is None else [rows[i] for i in keep]

    def nbytes(self) -> int:
        total = 0
        for c in (*self.columns, *self.inner):
            if c is None or callable(c):
                continue
            total += c.nbytes if not isinstance(c, list) else 40 * len(c)
        return total


# columns shorter than this are listed by Arrow itself: through NumPy, pyarrow imports pandas
# (about 0.3 s), which a small load would spend on nothing else
NUMPY_MIN_VALUES = 50_000


def _pylist(column) -> list:
    """An Arrow array's values as a list (through NumPy for long columns of integers without
    NULLs: faster)."""
    if isinstance(column, list):
        return column
    if (
        len(column) >= NUMPY_MIN_VALUES
        and column.null_count == 0
        and pyarrow_module().types.is_integer(column.type)
    ):
        return column.to_numpy().tolist()
    return column.to_pylist()


def _plan(schema, source: _Source, ignore) -> list[_Column]:
    from .spark.backfill import _match_columns

    class _Shape:
        columns = source.columns

    targets = _match_columns(schema, _Shape, True if source.csv else None, ignore)
    cols = []
    for i, t in enumerate(targets):
        kind = t.column.ctype.kind
        cols.append(_Column(i, t.column, t.source, trim=kind not in (V.STR, V.BYTES, V.TIME)))
    if not any(c.source is not None for c in cols):
        raise E.DataError(f"the source has none of the columns of table '{schema.name}'")
    return cols


def _shown(value) -> str:
    text = value if isinstance(value, str) else V.format_value(value)
    if len(text) > 60:
        text = text[:60] + "..."
    return f"'{text}'"


def _type_name(ctype) -> str:
    return f"{ctype.mysql_name}{' UNSIGNED' if ctype.unsigned else ''}"


def _problem(col: _Column, value, error: E.Error) -> str:
    ctype = col.cdef.ctype
    if error.errno == 1264:
        what = f"out of range for {_type_name(ctype)}"
    elif error.errno == 1406:
        what = f"longer than {ctype.length} characters"
    else:
        what = f"cannot be converted to {ctype.mysql_name}"
    return f"column '{col.cdef.name}' value {_shown(value)} {what}"


def _fast(pa, pc, col: _Column, arr):
    """(storage values, dataflow values or None when equal), as Arrow arrays, for a column
    Arrow converts exactly as the engine would; None when it cannot (the caller converts value
    by value)."""
    ctype = col.cdef.ctype
    kind = ctype.kind
    t = arr.type
    try:
        if kind == V.INT:
            if ctype.mysql_name in ("BIT", "YEAR"):
                return (
                    None  # a BIT's string is its bytes, a YEAR's two digits a year: value by value
                )
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                arr = pc.cast(arr, pa.int64())
            elif not pa.types.is_integer(t):
                return None
            lo, hi = V._INT_RANGES.get((ctype.mysql_name, ctype.unsigned), (None, None))
            if ctype.unsigned and ctype.mysql_name == "BIGINT":
                lo, hi = 0, _UNSIGNED_BIGINT_MAX
            if lo is not None and len(arr) - arr.null_count:
                mm = pc.min_max(arr).as_py()
                if mm["min"] < lo or mm["max"] > hi:
                    return None  # value by value names the rows
            return arr, None
        if kind == V.FLOAT:
            if kind.__class__ is V.FloatKind:
                return None  # single precision, D decimals: value by value
            if pa.types.is_integer(t) or pa.types.is_floating(t):
                arr = pc.cast(arr, pa.float64())
            else:
                return None
            return arr, None
        if kind == V.STR and ctype.values is None:
            if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                return None
            if ctype.mysql_name == "JSON":
                return None  # each value is checked to be JSON: value by value
            if ctype.length is not None and len(arr) - arr.null_count:
                if pc.max(pc.utf8_length(arr)).as_py() > ctype.length:
                    return None
            top = V._TEXT_BYTES.get(ctype.mysql_name)
            if top is not None and len(arr) - arr.null_count:
                if pc.max(pc.binary_length(arr)).as_py() > top:
                    return None  # a TEXT type holds that many bytes
            return arr, None
        if kind == V.DECIMAL:
            if not (
                pa.types.is_decimal(t)
                or pa.types.is_integer(t)
                or pa.types.is_string(t)
                or pa.types.is_large_string(t)
            ):
                return None
            precision = ctype.precision or 10
            scale = ctype.scale or 0
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                plain = _plain_decimal(pc, arr, precision, scale, ctype.unsigned)
                if plain is not None:
                    return plain
            if pa.types.is_decimal(t) and t.scale > scale:
                return None  # MySQL rounds; value by value
            if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t):
                wide = pa.decimal128(38, scale) if scale <= 38 else pa.decimal256(76, scale)
                arr = pc.cast(arr, wide)  # refuses text with more fraction digits (MySQL rounds)
            target = (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale)
            typed = pc.cast(arr, target)  # checks the precision
            if ctype.unsigned and len(typed) - typed.null_count:
                if pc.min(typed).as_py() < 0:
                    return None
            return pc.cast(typed, pa.string()), typed
        if kind == V.DATE:
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                arr = pc.cast(arr, pa.date32())
            elif not pa.types.is_date(t):
                return None
            arr = pc.cast(arr, pa.date32())
            return pc.cast(arr, pa.string()), arr
        if kind == V.DATETIME:
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                arr = pc.cast(arr, pa.timestamp("us"))  # text naming a zone fails here
            elif pa.types.is_timestamp(t):
                if t.tz is not None:  # an instant: its UTC time, as on the Spark path
                    arr = pc.cast(arr, pa.timestamp(t.unit, "UTC")).cast(pa.timestamp(t.unit))
                if t.unit == "ns":
                    arr = pc.cast(arr, pa.timestamp("us"))  # refuses lost nanoseconds
            elif pa.types.is_date(t):
                arr = pc.cast(pc.cast(arr, pa.date32()), pa.timestamp("us"))
            else:
                return None
            # MySQL's text: seconds, and six fraction digits when there is a fraction
            try:
                stored = pc.cast(pc.cast(arr, pa.timestamp("s")), pa.string())  # whole seconds
            except pa.ArrowInvalid:
                if ctype.precision is not None and ctype.precision < 6:
                    return None  # a fraction rounded to the column's digits, value by value
                full = pc.cast(pc.cast(arr, pa.timestamp("us")), pa.string())
                seconds = pc.cast(arr, pa.timestamp("s"), safe=False)
                whole = pc.equal(pc.cast(seconds, pa.timestamp("us")), arr)
                stored = pc.if_else(whole, pc.utf8_slice_codeunits(full, 0, 19), full)
            return stored, arr
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        return None
    return None


@functools.lru_cache(maxsize=64)
def _canonical_decimal(precision: int, scale: int, unsigned: bool) -> str:
    """A pattern of the text a DECIMAL(precision, scale) value is stored as: no leading zero,
    exactly ``scale`` fraction digits, at most ``precision - scale`` whole digits (a negative
    value's whole part not 0: ``-0.5`` and ``-0.00`` take the general path)."""
    whole = precision - scale
    sign = "" if unsigned else "-?"
    fraction = rf"\.[0-9]{{{scale}}}" if scale else ""
    alternatives = [rf"0{fraction}"]
    if whole:
        alternatives.append(rf"{sign}[1-9][0-9]{{0,{whole - 1}}}{fraction}")
    return "^(" + "|".join(alternatives) + ")$"


def _plain_decimal(pc, arr, precision: int, scale: int, unsigned: bool):
    """(the text, a function making the Decimal values) when every value of ``arr`` is text
    already in the form a DECIMAL(precision, scale) stores: no conversion needed, the checks
    of the general path hold (it fits, no rounding); None otherwise."""
    pattern = _canonical_decimal(precision, scale, unsigned)
    if len(arr) - arr.null_count and not pc.all(pc.match_substring_regex(arr, pattern)).as_py():
        return None
    pa = pyarrow_module()
    target = (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale)
    return arr, lambda: pc.cast(arr, target).to_pylist()


def _value_by_value(col: _Column, values: list, problems: dict, base: int) -> tuple[list, list]:
    """(storage values, dataflow values) converted by the engine's coercion; a value that does
    not fit adds its problem under its row (``base`` + index) and leaves None."""
    cdef = col.cdef
    ctype = cdef.ctype
    stored, internal = [], []
    zoned = ctype.kind == V.DATETIME
    for i, v in enumerate(values):
        if v is None:
            stored.append(None)
            internal.append(None)
            continue
        try:
            if zoned and isinstance(v, str) and _OFFSET.search(v.strip()):
                c = _instant(v.strip(), ctype, cdef.name)
            else:
                c = V.coerce_for_column(v, ctype, cdef.name)
        except E.Error as e:
            problems.setdefault(base + i, []).append(_problem(col, v, e))
            stored.append(None)
            internal.append(None)
            continue
        stored.append(V.to_storage(c))
        internal.append(c)
    return stored, internal


def _instant(text: str, ctype, name: str):
    """Text naming its zone (``2020-01-01 05:06:07+02:00``, ``...Z``) as its UTC time."""
    import datetime as dt

    value = text.replace(" ", "T", 1) if "T" not in text else text
    value = re.sub(r"\s+(?=[Zz+-]\d*)", "", value)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise E.DataError(f"Incorrect datetime value: '{text}' for column '{name}'", 1292) from None
    if moment.tzinfo is None:
        return V.coerce_for_column(text, ctype, name)
    return V.round_fraction(moment.astimezone(dt.UTC).replace(tzinfo=None), ctype.precision)


def _convert(pa, pc, cols: list[_Column], batch, source: _Source, base: int) -> _Converted:
    """A batch converted to the table's columns (rows numbered from ``base``)."""
    n = batch.num_rows
    problems: dict[int, list[str]] = {}
    stored_cols: list[list] = []
    internal_cols: list = []  # a list, an Arrow array (to_pylist on demand) or None (= stored)
    for col in cols:
        cdef = col.cdef
        if col.source is None:
            if cdef.auto_increment:
                stored_cols.append([None] * n)
                internal_cols.append(None)
                continue
            default = cdef.default() if callable(cdef.default) else cdef.default
            value = (
                V.coerce_for_column(default, cdef.ctype, cdef.name) if cdef.has_default else None
            )
            stored_cols.append([V.to_storage(value)] * n)
            internal_cols.append([value] * n)
            continue
        arr = batch.column(col.source)
        if source.csv and col.trim:
            arr = pc.utf8_trim(arr, " \t\r\n\f\v")
        fast = _fast(pa, pc, col, arr)
        if fast is not None:
            stored, internal = fast
        else:
            stored, internal = _value_by_value(col, arr.to_pylist(), problems, base)
        if not cdef.nullable and not cdef.auto_increment:
            raw_nulls = arr.null_count
            if raw_nulls:
                for i, v in enumerate(arr.to_pylist()):
                    if v is None:
                        problems.setdefault(base + i, []).append(
                            f"column '{cdef.name}' value NULL in a NOT NULL column"
                        )
        stored_cols.append(stored)
        internal_cols.append(internal)
    return _Converted(stored_cols, internal_cols, problems, n)


# --- the load --------------------------------------------------------------------------------


class _Problems:
    """The bad rows of a source, and the error that lists the first of them in source order."""

    def __init__(self, table: str):
        self.table = table
        self.found: list[tuple[int, int, str, list[str]]] = []  # (part, record, label, texts)

    @property
    def count(self) -> int:
        return len(self.found)

    def add(self, p: int, part: _Part, record: int, texts: list[str]) -> None:
        label = f"{part.label} row {record}" if part.label else f"row {record}"
        self.found.append((p, record, label, texts))

    def lines(self) -> list[str]:
        first = sorted(self.found, key=lambda f: (f[0], f[1]))[:MAX_ERRORS]
        return [f"{label}: {'; '.join(texts)}" for _p, _r, label, texts in first]

    def fail(self, loaded: int = 0):
        done = (
            f"the load stopped after {loaded} rows were loaded, which stay loaded"
            if loaded
            else "nothing was loaded"
        )
        lines = self.lines()
        msg = f"{self.count} bad row(s) in the source of '{self.table}'; {done}:"
        msg += "".join(f"\n  {line}" for line in lines)
        if self.count > len(lines):
            msg += f"\n  (and {self.count - len(lines)} more)"
        texts = [t for f in self.found for t in f[3]]
        if all(t.endswith(" in a NOT NULL column") for t in texts):
            column = texts[0].split("'", 2)[1]
            raise E.IntegrityError(
                f"Column '{column}' cannot be null: {msg}", E.ER_BAD_NULL_ERROR, "23000"
            )
        raise E.DataError(msg, E.ER_TRUNCATED_WRONG_VALUE)


class _Records:
    """A CSV part's record numbers (from 1, after the header): Arrow delivers the well-formed
    records only, and numbers a malformed one without the blank lines before it."""

    def __init__(self, part: _Part, source: _Source):
        self.skip = 1 if part.header else 0
        width = len(source.columns)
        blank = []
        if part.csv_path is not None and width > 1:
            blank = _blank_records(part.csv_path, source.sep, source.quote, 10**9)
        self.blank = [b - self.skip for b in blank]
        bad = []
        for number, _text in part.malformed:  # numbered by Arrow, blank lines left out
            r = number - self.skip
            for b in self.blank:
                if b <= r:
                    r += 1
            bad.append(r)
        self.malformed = [(r, text) for r, (_n, text) in zip(bad, part.malformed)]
        self.gaps = sorted(self.blank + bad)

    def record(self, delivered: int) -> int:
        """The record number of the ``delivered``-th well-formed record (from 1)."""
        r = delivered
        for g in self.gaps:
            if g <= r:
                r += 1
            else:
                break
        return r

    def problems(self, width: int) -> list[tuple[int, str]]:
        out = [(r, _malformed_text(width, text)) for r, text in self.malformed]
        out += [(b, f"is a blank line, not {width} fields") for b in self.blank]
        return sorted(out)


def _batches(pa, part: _Part, batch_rows: int):
    """(first delivered row, batch) of one part, in batches of ``batch_rows`` rows."""
    first = 1
    try:
        pending = []
        count = 0
        for batch in part.read(batch_rows):
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            count += batch.num_rows
            while count >= batch_rows:
                table = pa.Table.from_batches(pending).combine_chunks()
                yield first, table.slice(0, batch_rows)
                first += batch_rows
                rest = table.slice(batch_rows)
                pending = rest.to_batches() if rest.num_rows else []
                count = rest.num_rows
        if count:
            yield first, pa.Table.from_batches(pending).combine_chunks()
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        where = part.csv_path or "the source"
        raise E.OperationalError(f"cannot read {where}: {e}") from e


def _malformed_text(width: int, text: str) -> str:
    shown = text if len(text) <= 60 else text[:60] + "..."
    return f"'{shown}' is malformed: not {width} fields as in the header, or an unterminated quote"


def _last_field_open(part: _Part, last_value) -> bool:
    """Whether a CSV file's last field opens a quote that never closes (Arrow reads it to the
    end of the file as a value)."""
    from .spark.backfill import _runs_to_the_end

    return isinstance(last_value, str) and _runs_to_the_end(part.csv_path, last_value)


def load(
    engine,
    table: str,
    source,
    *,
    format: str | None = None,  # noqa: A002
    options: dict | None = None,
    on_duplicate: str = "error",
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: bool = True,
    validate: bool = True,
    on_batch: Callable[[Any, int], None] | None = None,
    ignore_columns=(),
    skip_bad_rows: bool = False,
) -> LoadResult:
    """Load ``table`` from a local file or frame (see the module docs); rows loaded."""
    pa = pyarrow_module()
    import pyarrow.compute as pc

    if on_duplicate not in ("error", "ignore", "replace"):
        raise E.ProgrammingError("on_duplicate must be one of error, ignore, replace")
    if batch_rows < 1:
        raise E.ProgrammingError("batch_rows must be at least 1")
    schema = engine.storage.schemas.get(table.lower())
    if schema is None:
        raise E.no_such_table(table)
    text_columns = {c.name.lower() for c in schema.columns if c.ctype.kind in (V.STR, V.TIME)}
    src = _open(source, format, dict(options or {}), text_columns)
    cols = _plan(schema, src, ignore_columns)
    problems = _Problems(schema.name)
    total = None
    cache = None
    if validate or skip_bad_rows or src.csv:
        # The first pass: a CSV file's shape always; with validation, every value and key.
        keys = _KeyCheck(schema, cols) if on_duplicate == "error" and validate else None
        checking = validate or skip_bad_rows
        # the converted batches, kept for the load pass while they fit in CACHE_BYTES
        cache = _Cache(len(src.parts)) if checking else None
        check = _Check(pa, pc, src, cols, batch_rows, checking, skip_bad_rows, problems, keys)
        if checking and on_batch is None and _streams(engine, schema, cols):
            stream = _Stream(check, cache, problems, keys)
            if stream.grows_past():
                # large: written while it is checked, in one write that a problem undoes
                done = stream.load(engine, schema, on_duplicate, progress, skip_bad_rows, source)
                if done is not None:
                    return done
        else:
            for item in check.items():
                if cache is not None:
                    cache.add(*item)
        total = check.total
        _report(problems, keys, skip_bad_rows)
        if cache is not None and cache.overflowed:
            cache = None  # too big to hold: the load pass reads the source again
    return _load_pass(
        engine, schema, src, cols, cache, total, problems, on_duplicate, batch_rows, progress,
        on_batch, skip_bad_rows, pa, pc,
    )  # fmt: skip


class _Check:
    """The first pass over ``src``: a CSV file's shape always; when ``checking``, every value
    (``_convert``) and, with ``keys``, the keys it repeats. ``items()`` yields each converted
    batch as ``(part, first row, batch, converted)``; the problems go to ``problems``, the
    rows read to ``total``."""

    def __init__(
        self, pa, pc, src, cols, batch_rows, checking, skip_bad_rows, problems, keys
    ):  # fmt: skip
        self.pa, self.pc, self.src, self.cols = pa, pc, src, cols
        self.batch_rows = batch_rows
        self.checking = checking
        self.skip_bad_rows = skip_bad_rows
        self.problems, self.keys = problems, keys
        self.total = 0

    def items(self):
        pa, src = self.pa, self.src
        width = len(src.columns)
        problems = self.problems
        for p, part in enumerate(src.parts):
            last = None
            part_problems = []
            delivered = 0
            for first, batch in _batches(pa, part, self.batch_rows):
                self.total += batch.num_rows
                delivered += batch.num_rows
                if src.csv and width:
                    last = batch.column(width - 1)[batch.num_rows - 1].as_py()
                if not self.checking:
                    continue
                conv = _convert(pa, self.pc, self.cols, batch, src, first)
                part_problems += sorted(conv.problems.items())
                if self.keys is not None:
                    self.keys.add(conv, first)
                yield p, first, batch, conv
            if part.csv_path is not None:
                records = _Records(part, src)
                shape = records.problems(width)
                if not shape and last is not None and _last_field_open(part, last):
                    shape = [
                        (
                            records.record(delivered),
                            f"an unterminated quote: the last field runs to the end of the file ({last[:60]!r})",
                        )
                    ]
                for record, text in shape:
                    problems.add(p, part, record, [text])
                if shape and not self.skip_bad_rows:
                    continue  # a file's shape first: its values are not listed
                for delivered, texts in part_problems:
                    problems.add(p, part, records.record(delivered), texts)
            else:
                for delivered, texts in part_problems:
                    problems.add(p, part, delivered, texts)


class _Cache:
    """The checked batches the load pass takes, per part, while they fit in CACHE_BYTES."""

    __slots__ = ("parts", "nbytes", "overflowed")

    def __init__(self, parts: int):
        self.parts: list[list] = [[] for _ in range(parts)]
        self.nbytes = 0
        self.overflowed = False

    def add(self, p: int, first: int, batch, conv) -> None:
        if self.overflowed:
            return
        self.nbytes += conv.nbytes() + batch.nbytes
        if self.nbytes <= CACHE_BYTES:
            self.parts[p].append((first, batch, conv))
        else:
            self.overflowed = True
            self.parts = [[] for _ in self.parts]


def _report(problems: _Problems, keys, skip_bad_rows: bool) -> None:
    """After a checking pass: its problems' error (unless skipped), or the keys it found
    repeated."""
    if problems.count and not skip_bad_rows:
        problems.fail()
    if keys is not None:
        keys.check()


def _streams(engine, schema, cols) -> bool:
    """Whether a checked load into ``schema``'s table may be written while it is checked:
    no AUTO_INCREMENT column for the table to number and no transaction open (its rows stay
    the transaction's, as deltas)."""
    if any(c.cdef.auto_increment for c in cols):
        return False
    return engine.loads_in_one_write(schema.name)


_DONE = object()  # the end of a source's batches


class _Abort(Exception):
    """Ends a write made while its rows are checked: a problem was found (the write is undone,
    then the problems are reported as after a checking pass)."""


class _Stream:
    """A checked load written while it is checked: each batch of the source is checked and
    handed to base storage in turn, in one write (one ``executemany``) that a problem, a
    repeated key or a failed read undoes, so the load stores everything or nothing, as after
    a checking pass, without holding the checked batches for a second pass. (A MySQL source's
    client keeps producing meanwhile: ``mysql_client`` drains its output on a thread.) Until
    the batches outgrow ``STREAM_BYTES`` (``grows_past``) they are held, and a check that ends
    first leaves them to the ordinary load pass (in the cache)."""

    def __init__(self, check: _Check, cache: _Cache, problems, keys):
        self.check = check
        self.cache = cache
        self.problems = problems
        self.keys = keys
        self.items = check.items()
        self.held: list = []  # checked batches until the load is known to be large
        self.ended = False  # every batch was checked

    def _next(self):
        item = next(self.items, _DONE)
        if item is _DONE:
            self.ended = True
        return item

    def grows_past(self) -> bool:
        """Hold the checked batches until they outgrow ``STREAM_BYTES`` with more rows than a
        write logs row by row (True: the rest is written as it is checked) or the source ends
        (False: everything is in the cache). Whether views leave the dataflow for the load is
        ``Engine.bulk_load``'s to say (``load`` falls back when they stay)."""
        from .engine import LOG_ROWS_LIMIT

        nbytes = 0
        while nbytes <= STREAM_BYTES or self.check.total <= LOG_ROWS_LIMIT:
            item = self._next()
            if item is _DONE:
                for held in self.held:
                    self.cache.add(*held)
                self.held = []
                return False
            self.held.append(item)
            nbytes += item[3].nbytes() + item[2].nbytes
        return True

    def load(
        self, engine, schema, on_duplicate, progress, skip_bad_rows, source
    ) -> LoadResult | None:
        """Write the batches as they are checked, in one write; None when the table's views
        stayed in the dataflow (a transaction is open somewhere): then everything is checked
        and held in the cache for the ordinary load pass. A MySQL ``source`` stops copying
        its client's output once the write starts (the source is read once)."""
        from .mysql_client import ClientSource
        from .spark.backfill import _Progress

        rows = _StreamRows(self, skip_bad_rows)
        try:
            with engine.bulk_load(schema.name, self.check.total):
                if not engine.has_views_over(schema.name):
                    if isinstance(source, ClientSource):
                        source.keep_copy = False
                    with _Progress(schema.name, None, enabled=progress) as bar:
                        rows.bar = bar
                        loaded = engine.load_stored(schema.name, rows, rows.internal, on_duplicate)
                    return _loaded(loaded, self.problems, skip_bad_rows)
        except _Abort:  # a problem in the source: the write is undone, the problems said
            self._drain()
            _report(self.problems, self.keys, skip_bad_rows)
            raise AssertionError("a checked load stopped without a problem") from None
        except E.IntegrityError as e:  # a key base storage holds, or one the source repeats
            self._drain()
            _report(self.problems, self.keys, skip_bad_rows)
            raise stopped_at(e, schema.name, 1, 0) from e
        for item in self.held:  # the views stayed: everything goes to the cache, as without
            self.cache.add(*item)  # a stream
        self.held = []
        while (item := self._next()) is not _DONE:
            self.cache.add(*item)
        return None

    def _drain(self) -> None:
        """Check the rest of the source (every problem listed), dropping its batches."""
        while not self.ended:
            self._next()


class _StreamRows:
    """The storage-form rows of a ``_Stream``'s batches for one ``executemany``: made batch by
    batch as they are checked (those held first). A problem the check found (unless skipped)
    raises ``_Abort`` in the write, which undoes it. Iterating again (a failed insert naming
    its row) makes the rows delivered so far again, while they fit in CACHE_BYTES."""

    def __init__(self, stream: _Stream, skip_bad_rows: bool):
        self.stream = stream
        self.skip = skip_bad_rows
        self.bar = None
        self.size = stream.check.total  # rows so far; exact once iterated
        self.delivered: list | None = []  # (converted, rows kept) for iterating again
        self.nbytes = 0
        self.iterated = False

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return True  # (made once the source has more rows than a logged write)

    def __iter__(self):
        if self.iterated:
            return itertools.chain.from_iterable(
                conv.rows(keep) for conv, keep in (self.delivered or ())
            )
        self.iterated = True
        return itertools.chain.from_iterable(self._batches())

    def _items(self):
        stream = self.stream
        held, stream.held = stream.held, []
        yield from held
        del held
        while (item := stream._next()) is not _DONE:
            yield item

    def _batches(self):
        stream = self.stream
        size = 0
        for _p, first, batch, conv in self._items():
            if conv.problems or stream.problems.count:
                if not self.skip:
                    raise _Abort
            keep = None
            if conv.problems:
                keep = _kept(first, conv)
            size += conv.size if keep is None else len(keep)
            if self.delivered is not None:
                self.nbytes += conv.nbytes() + batch.nbytes
                if self.nbytes <= CACHE_BYTES:
                    self.delivered.append((conv, keep))
                else:
                    self.delivered = None
            yield conv.rows(keep)
            conv._lists = None
            if self.bar is not None:
                self.bar.advance(conv.size)
        if stream.problems.count and not self.skip:
            raise _Abort  # (a CSV file's shape, known at its end)
        if stream.keys is not None:
            try:
                stream.keys.check()
            except E.IntegrityError:
                raise _Abort from None
        self.size = size

    def internal(self) -> list:
        """The rows as the dataflow's values (a view over the table appeared meanwhile)."""
        if self.delivered is None:
            raise E.OperationalError(
                "a view over the table appeared while a large load was written; nothing was"
                " loaded (load again)"
            )
        return [r for conv, keep in self.delivered for r in conv.internal(keep)]


def _kept(first: int, conv) -> list[int]:
    """The rows of a converted batch (its first row numbered ``first``) without a problem."""
    return [i for i in range(conv.size) if first + i not in conv.problems]


def _loaded(loaded: int, problems: _Problems, skip_bad_rows: bool) -> LoadResult:
    if skip_bad_rows:
        return LoadResult(loaded, problems.count, problems.lines())
    return LoadResult(loaded)


def _load_pass(
    engine, schema, src, cols, cache, total, problems, on_duplicate, batch_rows, progress,
    on_batch, skip_bad_rows, pa, pc,
) -> LoadResult:  # fmt: skip
    """The load pass: the checked batches ``cache`` holds (None: the source read again, each
    batch converted in turn) written to base storage."""
    from .spark.backfill import _Progress

    if cache is not None:
        cache = cache.parts
    # a large load into a table views read: the views are rebuilt once, after it
    with engine.bulk_load(schema.name, total):
        loaded = 0
        batches = 0
        if cache is not None and on_batch is None and not engine.has_views_over(schema.name):
            # every batch checked and held: one write of up to WRITE_ROWS rows (one transaction,
            # one checkpoint), its rows made batch by batch while SQLite takes them
            with _Progress(schema.name, total, enabled=progress) as bar:
                group: list = []
                for p in range(len(src.parts)):
                    held, cache[p] = cache[p], []
                    for _first, _batch, conv in held:
                        if conv.problems:
                            keep = _kept(_first, conv)
                        else:
                            keep = None
                        group.append((conv, keep))
                        if sum(c.size if k is None else len(k) for c, k in group) >= WRITE_ROWS:
                            batches += 1
                            loaded += _write_group(
                                engine, schema.name, cols, group, on_duplicate, bar, batches, loaded
                            )
                            group = []
                if group:
                    batches += 1
                    loaded += _write_group(
                        engine, schema.name, cols, group, on_duplicate, bar, batches, loaded
                    )
            return _loaded(loaded, problems, skip_bad_rows)
        # unchecked batches and no delta to compute: writes of several batches (a bad batch
        # still stops the load with the batches before it stored)
        grouped = on_batch is None and not engine.has_views_over(schema.name)
        group: list = []
        with _Progress(schema.name, total, enabled=progress) as bar:

            def flush():
                nonlocal loaded, batches, group
                if group:
                    batches += 1
                    loaded += _write_group(
                        engine, schema.name, cols, group, on_duplicate, bar, batches, loaded
                    )
                    group = []

            for p, part in enumerate(src.parts):
                if cache is not None:
                    converted = iter(cache[p])
                    cache[p] = []  # each batch is freed once loaded
                else:
                    converted = (
                        (first, batch, _convert(pa, pc, cols, batch, src, first))
                        for first, batch in _batches(pa, part, batch_rows)
                    )
                for first, batch, conv in converted:
                    keep = None
                    if conv.problems and not skip_bad_rows:
                        # unvalidated: this batch's problems stop the load (earlier ones stay)
                        flush()
                        records = _Records(part, src) if part.csv_path is not None else None
                        late = _Problems(schema.name)
                        for delivered, texts in sorted(conv.problems.items()):
                            number = records.record(delivered) if records else delivered
                            late.add(p, part, number, texts)
                        late.fail(loaded)
                    if conv.problems:
                        keep = _kept(first, conv)
                    if grouped:
                        group.append((conv, keep))
                        if sum(c.size if k is None else len(k) for c, k in group) >= WRITE_ROWS:
                            flush()
                        continue
                    stored = conv.rows(keep)
                    internal = functools.partial(conv.internal, keep)
                    batches += 1
                    try:
                        if _auto_nulls(cols, stored):
                            n = engine.load_rows(schema.name, None, internal(), on_duplicate)
                        else:
                            n = engine.load_stored(schema.name, stored, internal, on_duplicate)
                    except E.IntegrityError as e:
                        raise stopped_at(e, schema.name, batches, loaded) from e
                    loaded += n
                    bar.advance(batch.num_rows)
                    if on_batch is not None:
                        on_batch(batch, loaded)
            flush()
        return _loaded(loaded, problems, skip_bad_rows)


class _GroupRows:
    """The storage-form rows of several converted batches, made batch by batch as they are
    iterated (and dropped after), so one ``executemany`` takes them all without a list of
    them all; iterating again (a failed insert naming its row) makes them again."""

    __slots__ = ("group", "size", "bar")

    def __init__(self, group: list, bar=None):
        self.group = group
        self.size = sum(c.size if k is None else len(k) for c, k in group)
        self.bar = bar

    def __iter__(self):
        return itertools.chain.from_iterable(self._batches())

    def _batches(self):
        for conv, keep in self.group:
            yield conv.rows(keep)
            conv._lists = None
            if self.bar is not None:
                self.bar.advance(conv.size)

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0


def _write_group(engine, table: str, cols, group: list, on_duplicate, bar, batch, loaded) -> int:
    """The rows of ``group`` (converted batches, each with the rows to keep) in one write."""
    auto = any(c.cdef.auto_increment for c in cols)
    if auto and any(_auto_nulls(cols, conv.rows(keep)) for conv, keep in group):
        n = 0
        for conv, keep in group:
            n += engine.load_rows(table, None, conv.internal(keep), on_duplicate)
            bar.advance(conv.size)
        return n
    stored = _GroupRows(group, bar)

    def internal():
        return [r for conv, keep in group for r in conv.internal(keep)]

    try:
        return engine.load_stored(table, stored, internal, on_duplicate)
    except E.IntegrityError as e:
        raise stopped_at(e, table, batch, loaded) from e


def load_batch(engine, table: str, batch, on_duplicate: str = "error") -> int:
    """One Arrow batch into ``table`` (``Engine.load_arrow``): its columns matched by name, the
    others left to their defaults; a value that does not fit stops it with nothing stored."""
    pa = pyarrow_module()
    import pyarrow.compute as pc

    schema = engine.storage.schemas.get(table.lower())
    if schema is None:
        raise E.no_such_table(table)
    if isinstance(batch, pa.RecordBatch):
        batch = pa.Table.from_batches([batch])
    src = _Source(list(batch.schema.names), [])
    cols = _plan(schema, src, ())
    conv = _convert(pa, pc, cols, batch, src, 1)
    if conv.problems:
        found = _Problems(schema.name)
        part = _Part("", None)
        for row in sorted(conv.problems):
            found.add(0, part, row, conv.problems[row])
        found.fail()
    stored = conv.rows()
    if _auto_nulls(cols, stored):
        return engine.load_rows(schema.name, None, conv.internal(), on_duplicate)
    return engine.load_stored(schema.name, stored, conv.internal, on_duplicate)


class _NoBar:
    @staticmethod
    def advance(rows: int) -> None:
        pass


def load_tables(engine, table: str, tables, on_duplicate: str = "error", bar=None) -> int:
    """Arrow tables (checked already: a Spark load's batches) into ``table`` as ``load_batch``
    converts each, in writes of up to ``WRITE_ROWS`` rows (one transaction and one
    ``executemany`` each, fed from the batches' columns as it goes) rather than one per batch:
    for a load no view in this process reads (no delta is needed). A table whose values do not
    fit stops the load there, the writes before it stored (the error says how many rows);
    a key conflict stops it at its write (``stopped_at``). Returns the rows loaded."""
    pa = pyarrow_module()
    import pyarrow.compute as pc

    schema = engine.storage.schemas.get(table.lower())
    if schema is None:
        raise E.no_such_table(table)
    bar = bar or _NoBar
    loaded = pending = writes = 0
    group: list = []
    cols = src = None

    def flush():
        nonlocal loaded, pending, writes, group
        if group:
            writes += 1
            loaded += _write_group(
                engine, schema.name, cols, group, on_duplicate, bar, writes, loaded
            )
            group, pending = [], 0

    for batch in tables:
        if isinstance(batch, pa.RecordBatch):
            batch = pa.Table.from_batches([batch])
        if cols is None:
            src = _Source(list(batch.schema.names), [])
            cols = _plan(schema, src, ())
        conv = _convert(pa, pc, cols, batch, src, loaded + pending + 1)
        if conv.problems:
            flush()  # the rows before this table stay loaded, as batch by batch
            found = _Problems(schema.name)
            part = _Part("", None)
            for row in sorted(conv.problems):
                found.add(0, part, row, conv.problems[row])
            found.fail(loaded)
        group.append((conv, None))
        pending += conv.size
        if pending >= WRITE_ROWS:
            flush()
    flush()
    return loaded


def stopped_at(error: E.IntegrityError, table: str, batch: int, loaded: int) -> E.IntegrityError:
    """A key conflict that stopped a load at ``batch``, saying what stays loaded."""
    done = (
        f"after loading {loaded} rows, which stay loaded (run it again with"
        " on_duplicate='ignore' to load the rest)"
        if loaded
        else "before loading anything"
    )
    return type(error)(
        f"{error.msg}; the load of '{table}' stopped at batch {batch} {done}",
        error.errno,
        error.sqlstate,
    )


def _auto_nulls(cols: list[_Column], stored: list) -> bool:
    """Whether an AUTO_INCREMENT column has a row for the table to number."""
    return any(c.cdef.auto_increment and any(r[c.index] is None for r in stored) for c in cols)


class _KeyCheck:
    """The primary and unique keys the source repeats, compared as the table compares them
    (text under the collation, in Python; other keys by their stored form, in Arrow)."""

    def __init__(self, schema, cols: list[_Column]):
        self.schema = schema
        sets = []
        if schema.primary_key:
            sets.append(("PRIMARY", schema.primary_key))
        for ks in schema.uniques:
            sets.append((f"unique {'_'.join(schema.columns[i].name for i in ks)}", ks))
        self.sets = [
            (label, ks) for label, ks in sets if ks and all(cols[i].source is not None for i in ks)
        ]
        self.texts = [any(cols[i].cdef.ctype.kind == V.STR for i in ks) for _l, ks in self.sets]
        self.seen: list[dict] = [{} for _ in self.sets]  # text keys: collation key -> count
        self.parts: list[list] = [[] for _ in self.sets]  # other keys: Arrow tables

    def add(self, conv: _Converted, first: int) -> None:
        pa = pyarrow_module()
        bad = conv.problems
        for n, (_label, ks) in enumerate(self.sets):
            if self.texts[n]:
                seen = self.seen[n]
                parts = [conv.columns[c] for c in ks]
                parts = [p if isinstance(p, list) else p.to_pylist() for p in parts]
                for i, key in enumerate(zip(*parts)):
                    if None in key or (bad and first + i in bad):
                        continue
                    k = ck_tuple(key)
                    seen[k] = seen.get(k, 0) + 1
                continue
            table = pa.table(
                {
                    f"k{j}": conv.columns[c]
                    if not isinstance(conv.columns[c], list)
                    else pa.array(conv.columns[c])
                    for j, c in enumerate(ks)
                }
            )
            if bad:
                keep = [first + i not in bad for i in range(table.num_rows)]
                table = table.filter(pa.array(keep))
            self.parts[n].append(table.drop_null())

    def check(self) -> None:
        pa = pyarrow_module()
        import pyarrow.compute as pc

        for n, (label, ks) in enumerate(self.sets):
            if self.texts[n]:
                dups = [
                    (tuple(getattr(v, "orig", v) for v in k), c)
                    for k, c in self.seen[n].items()
                    if c > 1
                ]
            elif self.parts[n]:
                table = pa.concat_tables(self.parts[n], promote_options="permissive")
                names = table.column_names
                if len(names) == 1 and pc.count_distinct(table.column(0)).as_py() == len(table):
                    continue  # one column, every value once (without Acero's group-by)
                counted = table.group_by(names, use_threads=False).aggregate([([], "count_all")])
                counted = counted.filter(pc.greater(counted["count_all"], 1))
                dups = [
                    (tuple(row[c] for c in names), row["count_all"])
                    for row in counted.slice(0, 3).to_pylist()
                ]
            else:
                dups = []
            if not dups:
                continue
            names = [self.schema.columns[i].name for i in ks]
            shown = ", ".join(
                "'" + "-".join(V.format_value(v) for v in k) + f"' ({c} times)" for k, c in dups[:3]
            )
            raise E.IntegrityError(
                f"Duplicate entry for key '{label}' ({', '.join(names)}) in the source: {shown};"
                " nothing was loaded (on_duplicate='ignore' keeps the first, 'replace' the last)",
                E.ER_DUP_ENTRY,
                "23000",
            )


# --- creating the table from the source ------------------------------------------------------

_PLAIN_DECIMAL = r"^[+-]?\d*\.?\d*$"


def create_table_sql(table: str, source, *, format=None, options=None, primary_key=()) -> str:  # noqa: A002
    """A ``CREATE TABLE`` for ``table`` with a column per source column, typed from the source
    (see ``arrow_column_type``): Parquet's and JSON's own types, a CSV file's inferred by
    reading it whole. ``primary_key`` names the key columns (NOT NULL)."""
    pa = pyarrow_module()
    import pyarrow.compute as pc

    src = _open(source, format, dict(options or {}))
    raw = None
    if src.csv:
        tables = [_csv_typed(pa, part.csv_path, src, options or {}) for part in src.parts]
        texts = [pa.Table.from_batches(list(part.read(DEFAULT_BATCH_ROWS))) for part in src.parts]
        raw = pa.concat_tables(texts) if len(texts) > 1 else texts[0]
    else:
        tables = [pa.Table.from_batches(list(part.read(DEFAULT_BATCH_ROWS))) for part in src.parts]
    data = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    keys = {k.lower() for k in primary_key}
    known = {c.lower() for c in data.column_names}
    missing = [k for k in primary_key if k.lower() not in known]
    if missing:
        raise E.ProgrammingError(
            f"the source has no column {', '.join(missing)} for the primary key"
        )
    defs = []
    for name in data.column_names:
        column = data.column(name)
        sql = arrow_column_type(pa, pc, column, raw.column(name) if raw is not None else None)
        nullable = name.lower() not in keys
        defs.append(f"`{name.replace('`', '``')}` {sql}{'' if nullable else ' NOT NULL'}")
    if primary_key:
        defs.append(
            "PRIMARY KEY (" + ", ".join(f"`{k.replace('`', '``')}`" for k in primary_key) + ")"
        )
    return f"CREATE TABLE `{table.replace('`', '``')}` (\n  " + ",\n  ".join(defs) + "\n)"


def _csv_typed(pa, path: str, src: _Source, options: dict):
    """A CSV file read with Arrow's type inference (every field the NULL marker is NULL)."""
    import pyarrow.csv as pcsv

    opts = {k.lower(): v for k, v in options.items()}
    header = str(opts.get("header", "true")).lower() == "true"
    escape = opts.get("escape", src.quote)
    try:
        return pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(autogenerate_column_names=not header),
            parse_options=pcsv.ParseOptions(
                delimiter=src.sep,
                quote_char=src.quote,
                double_quote=escape == src.quote,
                escape_char=False if escape == src.quote else escape,
                newlines_in_values=True,
            ),
            convert_options=pcsv.ConvertOptions(
                null_values=[src.null_marker],
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
                true_values=["\0"],  # no column is read as BOOLEAN: MySQL has none
                false_values=["\0\0"],
            ),
        )
    except (pa.ArrowException, OSError) as e:
        raise E.DataError(f"cannot read {path} to type its columns: {e}") from e


def arrow_column_type(pa, pc, column, raw=None) -> str:
    """The MySQL type of a column created for Arrow values:

    - integers: the smallest of TINYINT/SMALLINT/INT/BIGINT (UNSIGNED for unsigned types) that
      the Arrow type holds; from a CSV file (``raw``: the column's text), INT if every value
      fits, else BIGINT;
    - floating point: FLOAT (32 bits), DOUBLE (64); from a CSV file, numbers written with at
      most one point and 65 digits are DECIMAL(p,s) with the digits the file holds, others
      DOUBLE;
    - decimal(p,s): DECIMAL(p,s) (p up to 65);
    - boolean: BOOLEAN; text: VARCHAR(255) when every value fits, else TEXT (LONGTEXT beyond
      16M characters); binary: VARBINARY(255) or BLOB likewise;
    - date: DATE; timestamp: DATETIME, DATETIME(6) when a value has a fraction of a second
      (a zoned timestamp is loaded as its UTC time); time: TIME;
    - a column of NULLs only: VARCHAR(255).
    """
    t = column.type
    types = pa.types
    if types.is_null(t):
        return "VARCHAR(255)"
    if types.is_boolean(t):
        return "BOOLEAN"
    if types.is_integer(t):
        if raw is not None:
            mm = pc.min_max(column).as_py()
            fits = mm["min"] is None or (-(2**31) <= mm["min"] and mm["max"] < 2**31)
            return "INT" if fits else "BIGINT"
        name = {8: "TINYINT", 16: "SMALLINT", 32: "INT", 64: "BIGINT"}[t.bit_width]
        return name + (" UNSIGNED" if types.is_unsigned_integer(t) else "")
    if types.is_floating(t):
        if raw is not None:
            return _decimal_from_text(pa, pc, raw)
        return "FLOAT" if t.bit_width == 32 else "DOUBLE"
    if types.is_decimal(t):
        if t.precision > 65:
            raise E.DataError(f"a DECIMAL({t.precision},{t.scale}) has more than 65 digits")
        return f"DECIMAL({t.precision},{t.scale})"
    if types.is_string(t) or types.is_large_string(t):
        return text_column_type(pc.max(pc.utf8_length(column)).as_py())
    if types.is_binary(t) or types.is_large_binary(t) or types.is_fixed_size_binary(t):
        return binary_column_type(pc.max(pc.binary_length(column)).as_py())
    if types.is_date(t):
        return "DATE"
    if types.is_timestamp(t):
        if t.unit == "s":
            return "DATETIME"
        try:
            pc.cast(column, pa.timestamp("s", t.tz))
            return "DATETIME"
        except pa.ArrowInvalid:
            return "DATETIME(6)"
    if types.is_time(t):
        return "TIME"
    raise E.DataError(f"no MySQL column type holds the source's {t} values")


def text_column_type(longest: int | None) -> str:
    """The text type for values of at most ``longest`` characters (None: no values)."""
    longest = longest or 0
    if longest <= 255:
        return "VARCHAR(255)"
    return "TEXT" if longest <= 65535 else "LONGTEXT" if longest > 2**24 - 1 else "MEDIUMTEXT"


def binary_column_type(longest: int | None) -> str:
    """The binary type for values of at most ``longest`` bytes (None: no values)."""
    return "VARBINARY(255)" if (longest or 0) <= 255 else "LONGBLOB"


def _decimal_from_text(pa, pc, raw) -> str:
    """DECIMAL(p,s) holding every value of a CSV column of numbers (``raw``: their text), when
    each is written as plain digits with at most one point; DOUBLE otherwise (an exponent, or
    more than 65 digits)."""
    text = pc.utf8_trim_whitespace(raw)
    if pc.all(pc.match_substring_regex(text, _PLAIN_DECIMAL)).as_py() is False:
        return "DOUBLE"
    whole = scale = 0
    for v in text.to_pylist():
        if v is None:
            continue
        head, _dot, tail = v.lstrip("+-").partition(".")
        whole = max(whole, len(head.lstrip("0")))
        scale = max(scale, len(tail))
    if whole + scale > 65 or scale > 30:
        return "DOUBLE"
    return f"DECIMAL({max(whole + scale, 1)},{scale})"

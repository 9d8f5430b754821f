"""SQL values with MySQL semantics: column kinds, coercion on write, and comparison helpers.

Internally a value is ``None`` (NULL), ``int``, ``decimal.Decimal``, ``float``, ``str``,
``bytes``, ``datetime.date`` or ``datetime.datetime``. Booleans are the integers 0 and 1, as in
MySQL. Strings compare with a binary collation (``'a' != 'A'``); see the README.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import sys
import threading
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from ..errors import DataError

# MySQL's DECIMAL holds up to 65 digits; Python's default context keeps 28.
decimal.DefaultContext.prec = 65
decimal.getcontext().prec = 65

# Internal column kinds.
INT = "int"
DECIMAL = "decimal"
FLOAT = "float"
STR = "str"
BYTES = "bytes"
DATE = "date"
DATETIME = "datetime"
TIME = "time"
NULL = "null"

NUMERIC_KINDS = frozenset((INT, DECIMAL, FLOAT))
I64_MAX = 2**63 - 1

_INT_TYPES = {
    "TINYINT": "TINYINT",
    "UTINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "USMALLINT": "SMALLINT",
    "MEDIUMINT": "MEDIUMINT",
    "UMEDIUMINT": "MEDIUMINT",
    "INT": "INT",
    "UINT": "INT",
    "BIGINT": "BIGINT",
    "UBIGINT": "BIGINT",
    "BOOLEAN": "TINYINT",
    "BIT": "TINYINT",
    "SERIAL": "BIGINT",
}
_INT_RANGES = {
    ("TINYINT", False): (-128, 127),
    ("TINYINT", True): (0, 255),
    ("SMALLINT", False): (-32768, 32767),
    ("SMALLINT", True): (0, 65535),
    ("MEDIUMINT", False): (-8388608, 8388607),
    ("MEDIUMINT", True): (0, 16777215),
    ("INT", False): (-2147483648, 2147483647),
    ("INT", True): (0, 4294967295),
    ("BIGINT", False): (-(2**63), 2**63 - 1),
    ("BIGINT", True): (0, 2**64 - 1),
}
_STR_TYPES = {
    "CHAR",
    "NCHAR",
    "VARCHAR",
    "NVARCHAR",
    "TEXT",
    "TINYTEXT",
    "MEDIUMTEXT",
    "LONGTEXT",
    "ENUM",
    "SET",
    "JSON",
    "UUID",
}
_BYTES_TYPES = {"BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY"}
_FLOAT_TYPES = {"FLOAT", "DOUBLE", "REAL", "DOUBLE PRECISION"}
_DECIMAL_TYPES = {"DECIMAL", "NUMERIC", "DEC", "UDECIMAL", "BIGDECIMAL", "MONEY"}


# what a number that is no member's position compares as: text no ENUM/SET column holds
NO_MEMBER = "\x00no member"


class MemberKind(str):
    """The kind of an ENUM or SET column. It is ``STR`` wherever a kind is compared or hashed
    (the values are the members' text), and it travels with the column through the compiler,
    so the places where MySQL reads such a column as a number (its position, or for SET its bit
    mask) can tell: a number compared for equality with it means the member at that position
    (:meth:`member_for`); any other numeric use is refused (1235, ``expr.py``) rather than
    answered from the text."""

    def __new__(cls, ctype, ranged: bool = False):
        obj = super().__new__(cls, STR)
        obj.ctype = ctype
        obj.ranged = ranged  # compared by < or >: a number there cannot be a member
        return obj

    def __reduce__(self):
        return (MemberKind, (self.ctype, self.ranged))

    def for_range(self) -> MemberKind:
        return MemberKind(self.ctype, True)

    def member_for(self, v):
        """The stored text a number compared with ``=`` to the column stands for, or None when
        no row can hold it (not a whole number, or no member/mask of that value)."""
        from ..errors import NotSupportedError

        if self.ranged:
            raise NotSupportedError(
                "This version doesn't yet support 'an ENUM or SET column compared by < or > "
                "with a number (its position)'"
            )
        try:
            n = Decimal(v) if not isinstance(v, float) else Decimal(repr(v))
        except (InvalidOperation, ValueError, TypeError):
            return None
        if not n.is_finite() or n != n.to_integral_value():
            return None
        try:
            return _member_value(int(n), self.ctype, "")
        except DataError:
            return None


class FloatKind(str):
    """The kind of a FLOAT column (single precision) or of a FLOAT(M,D) or DOUBLE(M,D) one
    (``dec`` decimals). It is ``FLOAT`` wherever a kind is compared or hashed; it travels with
    the column through the compiler, so the places where MySQL keeps such a column's type
    (the column itself, MIN/MAX, IF/COALESCE of such columns only) show its values as MySQL
    shows the column's (``ColumnFloat``), and the others as the double they hold."""

    def __new__(cls, single: bool, dec: int | None):
        obj = super().__new__(cls, FLOAT)
        obj.single = single
        obj.dec = dec
        return obj

    def __reduce__(self):
        return (FloatKind, (self.single, self.dec))

    def same(self, other) -> bool:
        return (
            other.__class__ is FloatKind and other.single == self.single and other.dec == self.dec
        )

    def wrap(self, v):
        """A double (base storage's, an aggregate's) as this column type's value."""
        column_float = _float_values()[0]
        if v is None or v.__class__ is column_float:
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return column_float(v, self.dec)
        return v


_FLOAT_VALUES: tuple = ()


def _float_values() -> tuple:
    """(ColumnFloat, to_float32), imported on first use (``functions`` imports this module)."""
    global _FLOAT_VALUES
    if not _FLOAT_VALUES:
        from .functions.coerce import ColumnFloat, to_float32

        _FLOAT_VALUES = (ColumnFloat, to_float32)
    return _FLOAT_VALUES


def float_sum_kind(kind: str, avg: bool) -> str:
    """The kind of SUM (or AVG) of a DOUBLE-valued argument: a DOUBLE, shown with the
    argument's fixed decimals (AVG's 4 more) when a FLOAT(M,D) or DOUBLE(M,D) column has them,
    as MariaDB types it."""
    if kind.__class__ is FloatKind and kind.dec is not None:
        dec = kind.dec + (4 if avg else 0)
        if dec <= 30:
            return FloatKind(False, dec)
    return FLOAT


# A double keeps any 15 significant digits exactly: a DECIMAL of up to 15 digits is stored as a
# SQLite number; a wider one as its text, compared by the DECIMAL_COLLATION (by value).
EXACT_DOUBLE_DIGITS = 15
DECIMAL_COLLATION = "noria_decimal"


class ColumnType:
    """A column's declared type: the internal kind plus what coercion and metadata need."""

    __slots__ = (
        "kind", "mysql_name", "unsigned", "length", "precision", "scale", "values", "computed",
        "collation", "literal",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,
        mysql_name: str,
        unsigned: bool = False,
        length: int | None = None,
        precision: int | None = None,
        scale: int | None = None,
        values: tuple | None = None,
        computed: bool = False,
    ):
        self.kind = kind
        # a derived table's computed column: SQLite holds what the expression gave (a DECIMAL
        # as its exact text) with no collation of its own
        self.computed = computed
        # a text column declared with another collation than the engine's: its name (base
        # storage declares it; queries comparing the column say COLLATE, see engine)
        self.collation: str | None = None
        # a derived table's string column of a literal's coercibility (``_binary'x'``):
        # compared with a text column, it takes that column's collation (None: a UNION's,
        # whose coercibility is not known)
        self.literal: bool | None = False
        self.mysql_name = mysql_name
        self.unsigned = unsigned
        self.length = length
        self.precision = precision
        self.scale = scale
        self.values = values  # ENUM and SET: the members, as declared
        if values is not None and mysql_name in ("ENUM", "SET"):
            self.kind = MemberKind(self)
        elif kind == FLOAT and not computed and (mysql_name == "FLOAT" or scale is not None):
            self.kind = FloatKind(mysql_name == "FLOAT", scale)

    def __repr__(self) -> str:
        return f"ColumnType({self.mysql_name})"

    @property
    def wide_decimal(self) -> bool:
        """A DECIMAL with more digits than a double keeps (SQLite stores it as text)."""
        return self.kind == DECIMAL and (self.precision or 10) > EXACT_DOUBLE_DIGITS

    def sqlite_affinity(self) -> str:
        if self.kind == INT:
            return "INTEGER"
        if self.kind in (FLOAT, DECIMAL):
            if self.kind == FLOAT:
                return "REAL"
            return "TEXT" if self.wide_decimal else "NUMERIC"
        if self.kind == BYTES:
            return "BLOB"
        return "TEXT"


# A YEAR column's int_range: this very tuple (``is``) tells a YEAR from an expression of the
# same range (``y + 0`` is a BIGINT UNSIGNED).
YEAR_RANGE = (0, 2155, True)


def int_range(ctype: ColumnType) -> tuple | None:
    """An integer column's (lowest, highest, unsigned) for the expression compiler's overflow
    checks (base storage stops BIGINT UNSIGNED at 2^63 - 1); None for other columns."""
    if ctype.kind != INT:
        return None
    if ctype.mysql_name == "YEAR":
        return YEAR_RANGE  # MySQL reads a YEAR as unsigned (`y - 3000` overflows)
    if ctype.mysql_name == "BIT":
        return (0, min((1 << ctype.length) - 1, 2**63 - 1), True)
    lo, hi = _INT_RANGES.get((ctype.mysql_name, ctype.unsigned), (-(2**63), 2**63 - 1))
    return (lo, min(hi, 2**63 - 1), ctype.unsigned)


def column_scale(ctype: ColumnType) -> int | None:
    """What an expression ``Scope`` knows of a column's digits: a DECIMAL's scale, a
    DATETIME's or TIME's fraction digits (arithmetic reads them), else None."""
    if ctype.kind == DECIMAL:
        return ctype.scale
    if ctype.kind in (DATE, DATETIME, TIME):
        return ctype.precision or 0
    return None


def scope_columns(schema, qualifier: str | None = None) -> tuple[list, list, list]:
    """(columns, scales, ranges) of a table for an expression ``Scope``."""
    from .names import bare

    q = qualifier or bare(schema.name)
    cols = [(q, c.name, c.ctype.kind) for c in schema.columns]
    scales = [column_scale(c.ctype) for c in schema.columns]
    return cols, scales, [int_range(c.ctype) for c in schema.columns]


# the most bytes a TEXT or BLOB type holds
_TEXT_BYTES = {"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 16777215}
_BLOB_BYTES = {"TINYBLOB": 255, "BLOB": 65535, "MEDIUMBLOB": 16777215}


def hex_bytes(digits: str) -> bytes:
    """The bytes a hexadecimal literal's digits spell (``X'4142'``, ``0x414``: an odd count
    has a leading zero)."""
    return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits)


def _text_of_bytes(n: int, base: str) -> str:
    """TEXT(n) / BLOB(n): the smallest of the type's sizes holding ``n`` bytes."""
    for prefix, top in (("TINY", 255), ("", 65535), ("MEDIUM", 16777215)):
        if n <= top:
            return prefix + base
    return "LONG" + base


def _unsigned_base(dtype, name: str):
    from sqlglot import exp

    return exp.DataType(this=exp.DataType.Type[name], expressions=dtype.expressions)


def column_type_from_sqlglot(dtype) -> ColumnType:
    """Map a sqlglot ``DataType`` from a MySQL ``CREATE TABLE`` to a ColumnType."""
    name = dtype.this.name if hasattr(dtype.this, "name") else str(dtype.this)
    params = [p.this for p in dtype.expressions] if dtype.expressions else []
    nums = []
    for p in params:
        try:
            nums.append(int(p.name if hasattr(p, "name") else p))
        except (TypeError, ValueError):
            pass
    unsigned = name.startswith("U") and name[1:] in _INT_TYPES or name == "UDECIMAL"
    if name == "BIT":
        m = nums[0] if nums else 1
        if m > 64:
            raise DataError("Display width out of range for a BIT column (max = 64)", 1439, "42000")
        return ColumnType(INT, "BIT", unsigned=True, length=max(m, 1))
    if name in _INT_TYPES:
        base = _INT_TYPES[name]
        if name == "BOOLEAN":
            return ColumnType(INT, "TINYINT", length=1)
        return ColumnType(INT, base, unsigned=unsigned)
    if name in _DECIMAL_TYPES:
        precision = nums[0] if nums else 10
        scale = nums[1] if len(nums) > 1 else 0
        return ColumnType(DECIMAL, "DECIMAL", unsigned=unsigned, precision=precision, scale=scale)
    if name in ("UDOUBLE", "UFLOAT"):  # (deprecated, as MySQL keeps them: no negatives)
        plain = column_type_from_sqlglot(_unsigned_base(dtype, name[1:]))
        plain.unsigned = True
        return plain
    if name in _FLOAT_TYPES:
        single = name == "FLOAT" and not (len(nums) == 1 and nums[0] > 24)  # FLOAT(25..53)
        if len(nums) == 2:  # FLOAT(M,D), DOUBLE(M,D)
            m, d = nums
            if d > m:
                raise DataError(
                    "For float(M,D), double(M,D) or decimal(M,D), M must be >= D", 1427, "42000"
                )
            if d > 30:
                raise DataError(f"Too big scale {d} specified. Maximum is 30", 1425, "42000")
            return ColumnType(FLOAT, "FLOAT" if single else "DOUBLE", precision=m, scale=d)
        return ColumnType(FLOAT, "FLOAT" if single else "DOUBLE")
    if name in ("ENUM", "SET"):
        members = tuple(p.name if hasattr(p, "name") else str(p) for p in params)
        if not members:
            raise DataError(f"{name} needs its members", 1064, "42000")
        if name == "SET" and any("," in m for m in members):
            raise DataError("Illegal set value: a member holds ','", 1367, "HY000")
        return ColumnType(STR, name, values=members)
    if name == "TEXT" and nums:  # TEXT(n): the smallest TEXT holding n characters
        name = _text_of_bytes(nums[0] * 4, "TEXT")
        nums = []
    if name == "BLOB" and nums:
        name = _text_of_bytes(nums[0], "BLOB")
        nums = []
    if name in _STR_TYPES:
        mysql = {"NCHAR": "CHAR", "NVARCHAR": "VARCHAR", "UUID": "CHAR"}.get(name, name)
        length = nums[0] if nums and name in ("CHAR", "NCHAR", "VARCHAR", "NVARCHAR") else None
        if name in ("ENUM", "SET", "JSON"):
            mysql = "VARCHAR" if name != "JSON" else "JSON"
        return ColumnType(STR, mysql, length=length)
    if name in _BYTES_TYPES:
        length = nums[0] if nums and name in ("BINARY", "VARBINARY") else None
        if name in _BLOB_BYTES:
            length = _BLOB_BYTES[name]  # the most bytes it holds
        return ColumnType(BYTES, name, length=length)
    if name in ("GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
                "MULTIPOLYGON", "GEOMETRYCOLLECTION"):  # fmt: skip
        from ..errors import NotSupportedError

        raise NotSupportedError(
            f"This version of noria_py doesn't yet support '{name} columns'", 1235, "42000"
        )
    if name == "DATE":
        return ColumnType(DATE, "DATE")
    if name in ("DATETIME", "TIMESTAMP", "DATETIME64", "TIMESTAMPTZ", "TIMESTAMPLTZ"):
        mysql = "TIMESTAMP" if name.startswith("TIMESTAMP") else "DATETIME"
        return ColumnType(DATETIME, mysql, precision=_fsp(nums))
    if name == "TIME":
        return ColumnType(TIME, "TIME", precision=_fsp(nums))
    if name == "YEAR":
        return ColumnType(INT, "YEAR")
    raise DataError(f"Unsupported column type {name}", 1064, "42000")


def _fsp(nums: list[int]) -> int:
    """The fractional seconds precision of a DATETIME(n), TIMESTAMP(n) or TIME(n): 0 to 6."""
    fsp = nums[0] if nums else 0
    if not 0 <= fsp <= 6:
        raise DataError(f"Too big precision {fsp} specified. Maximum is 6.", 1426, "42000")
    return fsp


def round_fraction(value, fsp: int | None):
    """A DATETIME or TIME value rounded to ``fsp`` fraction digits, half away from zero, as
    MySQL 8 stores it in a column of that precision (None: kept whole)."""
    if fsp is None or fsp >= 6:
        return value
    unit = 10 ** (6 - fsp)
    if isinstance(value, _dt.datetime):
        micro = value.microsecond
        if micro % unit == 0:
            return value
        kept = (micro + unit // 2) // unit * unit
        try:
            if kept == 1_000_000:
                return value.replace(microsecond=0) + _dt.timedelta(seconds=1)
            return value.replace(microsecond=kept)
        except OverflowError:  # past 9999-12-31 23:59:59: the last representable moment
            return value.replace(microsecond=micro // unit * unit)
    if isinstance(value, _dt.timedelta):
        total = value // _dt.timedelta(microseconds=1)
        magnitude = abs(total)
        if magnitude % unit == 0:
            return value
        magnitude = (magnitude + unit // 2) // unit * unit
        return _dt.timedelta(microseconds=magnitude if total >= 0 else -magnitude)
    return value


_NUM_PREFIX = re.compile(r"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")
_DATE_RE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")
_DATETIME_RE = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?\s*$"
)


class _StrictEvaluation(threading.local):
    """Inside a write's expressions under strict mode (``Engine`` sets it around an UPDATE's
    WHERE and SET and an INSERT's values): MySQL makes the warnings a conversion would give
    errors there (a SELECT, and a DELETE, keep them warnings)."""

    on = False
    division = False  # ERROR_FOR_DIVISION_BY_ZERO too


STRICT_EVALUATION = _StrictEvaluation()
_CLEAN_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*\Z")


def check_number_text(s, kind: str) -> None:
    """Under strict evaluation: 1292 when string ``s`` is not wholly a number (MySQL would
    truncate it to its numeric prefix with a warning), naming ``kind`` (DOUBLE, DECIMAL,
    INTEGER) as MySQL does."""
    if STRICT_EVALUATION.on:
        text = s if isinstance(s, str) else bytes(s).decode("utf-8", "replace")
        if _CLEAN_NUMBER.match(text) is None or (kind == "DOUBLE" and math.isinf(float(text))):
            raise DataError(f"Truncated incorrect {kind} value: '{text}'", 1292, "22007")


def division_by_zero() -> None:
    """Under strict evaluation with ERROR_FOR_DIVISION_BY_ZERO: x / 0 is error 1365 (else
    NULL, with a warning in MySQL)."""
    if STRICT_EVALUATION.division:
        raise DataError("Division by 0", 1365, "22012")


def str_to_number(s: str):
    """MySQL's string-to-number conversion in numeric context: the longest numeric prefix, else 0."""
    m = _NUM_PREFIX.match(s)
    if not m:
        return 0
    text = m.group(0).strip()
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


_date_iso = _dt.date.fromisoformat
_datetime_iso = _dt.datetime.fromisoformat


def parse_date(s: str) -> _dt.date | None:
    if len(s) == 10 and s[4] == "-" and s[7] == "-" and s[8:].isdigit():
        # the form base storage writes (YYYY-MM-DD), parsed in C; anything else it refuses
        # (a day out of range included) takes the general path
        try:
            return _date_iso(s)
        except ValueError:
            pass
    m = _DATE_RE.match(s)
    if not m:
        return None
    try:
        return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def parse_datetime(s: str) -> _dt.datetime | None:
    n = len(s)
    if (
        (n == 19 or (n == 26 and s[19] == "." and s[20:].isdigit()))
        and s[4] == "-"
        and s[7] == "-"
        and s[10] == " "
        and s[13] == ":"
        and s[16] == ":"
        and s[17:19].isdigit()
    ):
        # the forms base storage writes (YYYY-MM-DD HH:MM:SS[.ffffff]), parsed in C
        try:
            return _datetime_iso(s)
        except ValueError:
            pass
    m = _DATETIME_RE.match(s)
    if not m:
        d = parse_date(s)
        return _dt.datetime(d.year, d.month, d.day) if d else None
    try:
        frac = m.group(7) or "0"
        return _dt.datetime(
            int(m.group(1)),
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            int(m.group(6) or 0),
            int(frac.ljust(6, "0")),
        )
    except ValueError:
        return None


def _shown(value) -> str:
    """A refused value as MySQL's messages show it."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")  # shown as its text, as MySQL does
    return value if isinstance(value, str) else format_value(value)


def _qualified(col: str, table: str) -> str:
    """How 1366 and 1292 name a column: `db`.`t`.`col` when the table is known."""
    return f"{table}.`{col}`" if table else f"'{col}'"


_SQLSTATE = {
    1264: "22003", 1265: "01000", 1292: "22007", 1366: "22007", 1406: "22001", 4025: "23000",
}  # fmt: skip


def _valid_json(text: str) -> bool:
    from .functions.json_fns import json_valid

    return json_valid(text) == 1


def fault_message(code: int, col: str, row: int, table: str = "", kind: str = "", value=None):
    """The text MariaDB gives a value that does not fit column ``col`` (the same as an error in
    strict mode and as IGNORE's warning), naming row ``row`` of the statement."""
    if code == 1264:
        return f"Out of range value for column '{col}' at row {row}"
    if code == 1265:
        return f"Data truncated for column '{col}' at row {row}"
    if code == 1406:
        return f"Data too long for column '{col}' at row {row}"
    if code == 4025:  # a JSON column's implicit CHECK (JSON_VALID)
        bare = table.rsplit(".", 1)[-1].strip("`") if table else ""
        return f"CONSTRAINT `{bare + '.' if bare else ''}{col}` failed for {table or bare}"
    return (
        f"Incorrect {kind} value: '{_shown(value)}' for column {_qualified(col, table)} "
        f"at row {row}"
    )


_SURROGATE = re.compile("[\udc80-\udcff]")


class _ShownBytes(str):
    """A refused string's text as 1366 shows it (already formatted)."""


def _bad_text(col: str, v: str) -> DataError:
    """1366 for text holding bytes that are not UTF-8 (lone surrogates, as the server decodes
    a client's text): MariaDB shows six bytes from the first bad one, bytes outside ASCII's
    printable range as \\xHH."""
    return _bad_bytes(col, v[_SURROGATE.search(v).start() :].encode("utf-8", "surrogateescape"))


def _shown_bytes(raw: bytes) -> _ShownBytes:
    shown = "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02X}" for b in raw[:6])
    return _ShownBytes(shown + ("..." if len(raw) > 6 else ""))


def _bad_bytes(col: str, raw: bytes) -> DataError:
    return _error(1366, col, "string", _shown_bytes(raw))


def _error(code: int, col: str, kind: str = "", value=None) -> DataError:
    err = DataError(fault_message(code, col, 1, "", kind, value), code, _SQLSTATE[code])
    err.fault = (code, col, kind, value)  # reworded for the statement's row: at_row
    return err


def at_row(err, row: int, table: str = ""):
    """A value's error (from ``coerce_for_column``) as MariaDB words it for row ``row`` of a
    statement writing ``table`` (`db`.`t`)."""
    fault = getattr(err, "fault", None)
    if fault is not None:
        code, col, kind, value = fault
        msg = fault_message(code, col, row, table, kind, value)
    else:
        msg = re.sub(r"at row \d+", f"at row {row}", str(err.msg))
        if msg == err.msg:
            return err
    out = type(err)(msg, err.errno, err.sqlstate)
    out.fault = fault
    return out


def _bad(col: str, value, kind: str) -> DataError:
    if (
        isinstance(value, str)
        and kind in ("integer", "decimal", "double")
        and _NUM_PREFIX.match(value)
    ):
        return _error(1265, col)  # a number followed by something else: cut short
    return _error(1292 if kind in ("date", "datetime", "time") else 1366, col, kind, value)


class Adjust:
    """IGNORE's way of writing a value that does not fit its column (``coerce_for_column``'s
    ``adjust``; INSERT IGNORE, UPDATE IGNORE, LOAD DATA ... IGNORE or LOCAL). Where strict mode
    stops with an error, MySQL stores the value adjusted to the column (a string's leading
    number, or 0 when it has none; the type's limit; the text cut to the column's length) and
    leaves a warning worded as MariaDB words it. ``row`` is the statement's row being written
    (1-based, named by the warnings), ``table`` the table as `db`.`t` (1366 names the column by
    it), ``conditions`` the (level, code, message) of each warning and note, in MySQL's order.

    A value MySQL would turn into the zero date is a ``ZeroDate``: a row that would store one is
    refused (noria_py keeps no zero dates, see the README) with error 1235 naming it, never
    stored as a different value."""

    __slots__ = ("table", "row", "conditions", "per_row", "strict")

    def __init__(self, table: str = "", row: int = 1, strict: bool = False):
        self.table = table
        self.row = row
        self.conditions: list = []
        self.per_row: list = []  # an INSERT's: each row's conditions
        # strict mode's: a value that does not fit is an error; the notes are kept (1265 for
        # digits a DECIMAL rounds away, spaces cut off)
        self.strict = strict

    def warn(self, code: int, msg: str, level: str = "Warning") -> None:
        self.conditions.append((level, code, msg))


def _fault(adjust, code: int, col: str, kind: str = "", value=None, level: str = "Warning"):
    """Strict mode: the error (a note is kept when ``adjust`` collects them); IGNORE: the
    warning, and go on."""
    if adjust is None or (adjust.strict and level != "Note"):
        if level == "Note":
            return
        raise _error(code, col, kind, value)
    adjust.conditions.append(
        (level, code, fault_message(code, col, adjust.row, adjust.table, kind, value))
    )


class ZeroDate:
    """IGNORE's value for a date it cannot read (or a NOT NULL date given NULL): MySQL stores
    the zero date, which noria_py does not keep. A row holding one is refused with
    ``zero_date_error`` when it would be written; a row a key keeps out is skipped as MySQL
    skips it."""

    __slots__ = ("col", "value")

    def __init__(self, col: str, value=None):
        self.col = col
        self.value = value

    def error(self) -> DataError:
        return zero_date_error(self.col, self.value)

    # a date no row holds in its place while the row's keys and checks are tried
    STAND_IN = {DATE: _dt.date(1, 1, 1), DATETIME: _dt.datetime(1, 1, 1)}


def zero_date_error(col: str, value=None) -> DataError:
    """What IGNORE would store as the zero date: refused, as noria_py keeps no zero dates."""
    from ..errors import NotSupportedError

    what = "NULL" if value is None else f"'{_shown(value)}'"
    return NotSupportedError(
        f"This version doesn't yet support 'the zero date (0000-00-00) that IGNORE stores for "
        f"{what} in column '{col}'; zero dates are not kept'"
    )


def implicit_default(ctype: ColumnType, col: str, value=None, load: bool = False):
    """The value MySQL gives a NOT NULL column that gets NULL or no value under IGNORE (and a
    column LOAD DATA's short row has no field for): its type's zero (an ENUM's first member;
    for a date the zero date, a ``ZeroDate``)."""
    k = ctype.kind
    if k == INT:
        return 0
    if k == DECIMAL:
        return Decimal(0).scaleb(-(ctype.scale or 0))
    if k == FLOAT:
        return 0.0
    if k == STR:
        if ctype.values is not None and ctype.mysql_name == "ENUM" and not load:
            return ctype.values[0]  # (LOAD DATA empties the field: '')
        return ""
    if k == BYTES:
        return b"\0" * (ctype.length or 0) if ctype.mysql_name == "BINARY" else b""
    if k == TIME:
        return _dt.timedelta(0)
    if k in (DATE, DATETIME):
        return ZeroDate(col, value)
    raise zero_date_error(col, value)


def _member_value(value, ctype: ColumnType, col: str) -> str:
    """An ENUM or SET column's value as MySQL strict mode stores it: a member (matched under
    the collation, stored as declared; a number is a member's position, for SET a bit mask),
    else 1265."""
    from .collation import current

    coll = current()
    members = ctype.values
    keys = {}
    for m in members:
        keys.setdefault(coll.key(m), m)

    def bad():
        return DataError(f"Data truncated for column '{col}' at row 1", 1265, "01000")

    if isinstance(value, bool):
        value = int(value)
    elif isinstance(value, (Decimal, float)):
        # a number with a fraction is the position (SET: the mask) it truncates to
        try:
            value = int(value)
        except (OverflowError, ValueError):
            raise bad() from None
    if ctype.mysql_name == "ENUM":
        if isinstance(value, int):
            if 1 <= value <= len(members):
                return members[value - 1]
            raise bad()
        text = value if isinstance(value, str) else format_value(value)
        got = keys.get(coll.key(text))
        if got is None:
            raise bad()
        return got
    if isinstance(value, int):
        if value < 0 or value >= 1 << len(members):
            raise bad()
        return ",".join(m for i, m in enumerate(members) if value >> i & 1)
    text = value if isinstance(value, str) else format_value(value)
    if text == "":
        return ""
    chosen = set()
    for part in text.split(","):
        got = keys.get(coll.key(part))
        if got is None:
            raise bad()
        chosen.add(got)
    return ",".join(m for m in members if m in chosen)


_WIDE = decimal.Context(prec=200)


def decimal_frac(v) -> int:
    """The fraction digits a DECIMAL value carries (0 for anything else)."""
    if type(v) is not Decimal:
        return 0
    e = v.as_tuple().exponent
    return -e if isinstance(e, int) and e < 0 else 0


def decimal_quotient(a: Decimal, b: Decimal) -> Decimal:
    """``a / b`` as MySQL computes a DECIMAL quotient (``b`` not 0): the fraction digits of
    each operand counted in whole 9-digit words, plus ``div_precision_increment`` (4) digits as
    far as the words' spare room does not already give them, rounded up to whole words; the
    digits beyond are cut off. The value keeps those digits inside an expression (``2.00/3*3``
    is 1.999999998, shown 2.000000); comparisons and results round it to the quotient's scale
    (the dividend's plus 4), see :func:`display_round`."""
    if not a:
        return Decimal(0)  # MySQL's zero quotient has no fraction digits
    fa, fb = decimal_frac(a), decimal_frac(b)
    wa, wb = -(-fa // 9) * 9, -(-fb // 9) * 9
    incr = max(0, 4 - (wa - fa) - (wb - fb))
    frac = -(-(wa + wb + incr) // 9) * 9
    q = _WIDE.divide(a, b)
    return q.quantize(Decimal(1).scaleb(-frac), rounding=decimal.ROUND_DOWN, context=_WIDE)


def display_round(v, scale: int):
    """A DECIMAL value whose fraction digits are not its type's ``scale`` (a quotient's), as
    MySQL shows and compares it: rounded half up (or padded) to ``scale``."""
    if type(v) is Decimal and decimal_frac(v) != scale:
        return v.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
    return v


def _round_whole(d: Decimal, col: str) -> int:
    """A finite number rounded half away from zero to an integer (out of range 1264 when it
    cannot fit any integer column)."""
    if d and d.adjusted() > 40:
        raise _error(1264, col)
    return int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE))


def _leading_number(value: str, col: str, kind: str, adjust):
    """A string written to a number column, read as MySQL reads it: (its leading number as a
    Decimal, what follows: "" for nothing, " " for spaces only, "x" for anything else). No
    number at all is 1366 (IGNORE: 0)."""
    m = _NUM_PREFIX.match(value)
    if m is None:
        _fault(adjust, 1366, col, kind, value)
        return Decimal(0), ""
    rest = value[m.end() :]
    return Decimal(m.group(0).strip()), (" " if rest.isspace() else "x") if rest else ""


_PLAIN_INT = re.compile(r"[+-]?[0-9]+\Z")
_PLAIN_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\Z")
FLOAT_MAX = 3.4028234663852886e38  # a FLOAT column's largest value
_DATE_PREFIX = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?)?"
)
_TIME_PREFIX = re.compile(r"\s*-?\d+(?::\d{1,2}(?::\d{1,2}(?:\.\d+)?)?)?")


_EXPONENT_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d")


def _temporal_prefix(value, kind: str):
    """IGNORE: a date, datetime or time followed by other text is the value its leading part
    spells (None when there is none)."""
    if not isinstance(value, str):
        return None
    if kind == TIME:
        from .functions.coerce import to_time

        if _EXPONENT_NUMBER.match(value):
            return None  # a number with an exponent ('1e2x', '1.5e1') is no time: 00:00:00
        m = _TIME_PREFIX.match(value)
        return to_time(m.group(0)) if m else None
    m = _DATE_PREFIX.match(value)
    if m is None or value[m.end() :][:1] in ("", ":", ".") or value[m.end()].isdigit():
        return None
    v = parse_datetime(m.group(0))
    if v is None:
        return None
    return v if kind == DATETIME else v.date()


def _fixed_decimals(f: float, m: int | None, dec: int, top: float) -> tuple[float, float]:
    """A double stored in a FLOAT(M,D) or DOUBLE(M,D) column, as MySQL stores it: its fraction
    rounded to ``dec`` digits (half to even) added to its floor; and the column's largest
    value (M - D nines before the point, D after)."""
    scale = 10.0**dec
    if f == f and f not in (math.inf, -math.inf):
        whole = math.floor(f)
        f = whole + round((f - whole) * scale) / scale
    if m is not None:
        top = min(top, 10.0 ** (m - dec) - 1.0 / scale)
    return f, top


def coerce_for_column(value, ctype: ColumnType, col: str, adjust: Adjust | None = None):
    """Convert a value written to a column, as MySQL strict mode does: a value that does not
    fit is an error. With ``adjust`` (IGNORE) it is stored as MySQL adjusts it, with the
    warning MySQL gives (see ``Adjust``)."""
    if value is None:
        return None
    strict = adjust is None or adjust.strict
    kind = ctype.kind
    if kind == INT and ctype.mysql_name == "BIT":
        return _bit_value(value, ctype, col, adjust)
    if kind == INT:
        if isinstance(value, bool):
            value = int(value)
        rest = ""
        if type(value) is int:
            v = value
        elif type(value) is str and _PLAIN_INT.match(value):  # plain digits: LOAD DATA's fields
            v = int(value)
        else:
            if isinstance(value, (bytes, bytearray)):
                value = bytes(value).decode("utf-8", "replace")
            if isinstance(value, str):
                d, rest = _leading_number(value, col, "integer", adjust)
            elif isinstance(value, (float, Decimal)):
                d = Decimal(value)
                if not d.is_finite():
                    if strict or d.is_nan():
                        raise _bad(col, value, "integer")
                    d = Decimal(10**40 if d > 0 else -(10**40))
            else:
                raise _bad(col, value, "integer")
            if d and d.adjusted() > 40:
                v = 2**200 if d > 0 else -(2**200)  # beyond any integer column: clamped below
            else:
                v = int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE))
        if ctype.mysql_name == "YEAR":
            return _year_value(v, value, col, adjust, rest)
        lo, hi = _INT_RANGES.get((ctype.mysql_name, ctype.unsigned), (-(2**63), 2**64 - 1))
        if not lo <= v <= hi:
            if (
                not strict
                and ctype.mysql_name != "BIGINT"
                and type(value) is not str
                and (v > 2**64 - 1 or (v < -(2**63) and not ctype.unsigned))
                and (ctype.unsigned or not isinstance(value, float))
            ):
                # MariaDB reads such a number as a 64-bit integer first, and that overflow is
                # a warning of its own
                _fault(adjust, 1264, col)
            _fault(adjust, 1264, col)
            v = lo if v < lo else hi
        elif rest:
            _fault(adjust, 1265, col, level="Note" if rest == " " else "Warning")
        if not -(2**63) <= v < 2**63:  # base storage holds 64-bit signed integers
            from ..errors import NotSupportedError

            raise NotSupportedError(
                "This version doesn't yet support 'BIGINT UNSIGNED values above "
                f"9223372036854775807' (column '{col}')"
            )
        return v
    if kind == STR and ctype.values is not None:
        try:
            return _member_value(value, ctype, col)
        except DataError:
            if strict:
                raise
            _fault(adjust, 1265, col)
            return ""
    if kind == STR:
        if isinstance(value, str):
            v = value
        elif isinstance(value, bytes):
            v = value.decode("utf-8", "replace")
        elif isinstance(value, float):
            v = format_value(float(value))  # a double as MySQL writes it (a FLOAT's: the double)
            if ctype.length is not None and len(v) > ctype.length:
                # MySQL writes the double again in fewer digits to fit the column (1.5 into
                # CHAR(2) is '2', 1234 into CHAR(3) '1e3'), which this engine does not do
                from ..errors import NotSupportedError

                raise NotSupportedError(
                    "This version doesn't yet support 'a DOUBLE written into a string column "
                    f"narrower than its text ({v!r} into {col!r}, {ctype.mysql_name}"
                    f"({ctype.length}))'",
                    1235,
                    "42000",
                )
        elif isinstance(value, (_dt.datetime, _dt.date)):
            v = format_value(value)
        else:
            v = str(value)
        if not v.isascii() and _SURROGATE.search(v):
            raise _bad_text(col, v)  # bytes a client sent that are not UTF-8
        if ctype.mysql_name == "JSON" and not _valid_json(v):
            # MariaDB's JSON is a text checked by JSON_VALID: its CHECK fails (4025)
            if adjust is not None and not adjust.strict:
                from ..errors import NotSupportedError

                raise NotSupportedError(
                    "This version of noria_py doesn't yet support 'skipping a row whose JSON "
                    f"is not valid under IGNORE' (column '{col}')"
                )
            raise _error(4025, col)
        top = _TEXT_BYTES.get(ctype.mysql_name)
        if top is not None and len(v) * 4 > top:  # a TEXT type holds that many bytes
            raw = v.encode("utf-8")
            if len(raw) > top:
                kept = raw[:top].decode("utf-8", "ignore")  # cut at a character's end
                k = len(kept.encode("utf-8"))
                if not raw[k:].strip(b" "):  # only spaces cut off: a note
                    _fault(adjust, 1265, col, level="Note")
                elif k < top:  # the limit falls inside a character: MariaDB names it (1366)
                    if strict:
                        raise _bad_bytes(col, raw[k:])
                    _fault(adjust, 1366, col, "string", _shown_bytes(raw[k:]))
                elif strict:
                    raise _error(1406, col)
                else:
                    _fault(adjust, 1265, col)
                v = kept
        n = ctype.length
        if n is not None and len(v) > n:
            cut = v[n:]
            v = v[:n]
            if cut.strip(" "):
                if strict:
                    raise _error(1406, col)
                _fault(adjust, 1265, col)
            elif ctype.mysql_name != "CHAR":  # trailing spaces cut off: a note
                _fault(adjust, 1265, col, level="Note")
        if ctype.mysql_name == "CHAR" and v.endswith(" "):
            v = v.rstrip(" ")  # a CHAR keeps no trailing spaces (MySQL strips them on reading)
        return v
    if kind == DECIMAL:
        rest = ""
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, str):
            if _PLAIN_DECIMAL.match(value):  # plain digits: LOAD DATA's fields
                d = Decimal(value)
            else:
                d, rest = _leading_number(value, col, "decimal", adjust)
        else:
            try:
                d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
            except (InvalidOperation, ValueError, TypeError):
                raise _bad(col, value, "decimal") from None
            if not d.is_finite():
                if strict or d.is_nan():
                    raise _bad(col, value, "decimal")
                d = Decimal(10**90 if d > 0 else -(10**90))
        if rest == "x":
            _fault(adjust, 1265, col)
        scale = ctype.scale or 0
        limit = Decimal(10) ** ((ctype.precision or 65) - scale)
        if d and d.adjusted() > 80:  # beyond any DECIMAL (65 digits); quantize would overflow
            q = limit if d > 0 else -limit
        else:
            q = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
        if ctype.unsigned and d < 0:  # DECIMAL UNSIGNED: no negatives (IGNORE: 0)
            _fault(adjust, 1264, col)
            return Decimal(0).quantize(Decimal(1).scaleb(-scale))
        if abs(q) >= limit:
            _fault(adjust, 1264, col)
            top = limit - Decimal(1).scaleb(-scale)
            return top if q > 0 else -top
        if q != d or rest == " ":  # digits rounded away (or spaces after): a note
            _fault(adjust, 1265, col, level="Note")
        return q
    if kind == FLOAT:
        rest = ""
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, (int, float, Decimal)):
            try:
                f = float(value)
            except OverflowError:
                f = float("inf") if value > 0 else float("-inf")
        elif isinstance(value, str):
            d, rest = _leading_number(value, col, "double", adjust)
            f = float(d)
        else:
            raise _bad(col, value, "double")
        if f != f:
            raise _bad(col, value, "double")
        fk = kind if kind.__class__ is FloatKind else None
        top = FLOAT_MAX if ctype.mysql_name == "FLOAT" else sys.float_info.max
        if fk is not None and fk.dec is not None:
            f, top = _fixed_decimals(f, ctype.precision, fk.dec, top)
        if ctype.unsigned and f < 0:  # DOUBLE UNSIGNED: no negatives (IGNORE: 0)
            _fault(adjust, 1264, col)
            f = 0.0
        elif abs(f) > top:
            _fault(adjust, 1264, col)
            f = top if f > 0 else -top
        elif rest:
            _fault(adjust, 1265, col, level="Note" if rest == " " else "Warning")
        if fk is None:
            return f
        column_float, to_float32 = _float_values()
        return column_float(to_float32(f) if fk.single else f, fk.dec)
    if kind in (DATETIME, DATE):
        name = "datetime" if kind == DATETIME else "date"
        if isinstance(value, _dt.datetime):
            v = value
        elif isinstance(value, _dt.date):
            v = _dt.datetime(value.year, value.month, value.day)
        elif isinstance(value, str):
            v = parse_datetime(value)
            if v is None:
                # the other forms MySQL reads: '20200101', '2020/01/05', '20-01-06', ...
                from .functions.coerce import to_datetime

                v = to_datetime(value, prefix=False)
            if v is None and not strict:
                got = _temporal_prefix(value, kind)
                _fault(adjust, 1265, col)
                return ZeroDate(col, value) if got is None else got
            if v is None:
                raise _bad(col, value, name)
        elif isinstance(value, (int, Decimal, float)) and not isinstance(value, bool):
            from .functions.coerce import to_datetime

            v = to_datetime(value)  # a number spelling a date: 20200102, 20200101101010
            if v is None:
                raise _bad(col, value, name)
        else:
            raise _bad(col, value, name)
        if kind == DATE:
            return v.date()
        v = round_fraction(v, ctype.precision)
        if ctype.mysql_name == "TIMESTAMP" and type(v) is _dt.datetime and not _in_epoch(v):
            # a TIMESTAMP holds 1970-01-01 00:00:00 (exclusive) to 2038-01-19 03:14:08
            # (exclusive) UTC; the system's zone is its zone (see the README)
            if strict:
                raise _error(1292, col, "datetime", value)
            _fault(adjust, 1264, col)
            return ZeroDate(col, value)
        return v
    if kind == BYTES:
        if isinstance(value, (bytes, bytearray, memoryview)):
            v = bytes(value)
        else:
            # (a client's bytes that are not UTF-8 arrive as lone surrogates: those bytes)
            v = str(value).encode("utf-8", "surrogateescape")
        n = ctype.length
        if n is not None and len(v) > n:
            v = v[:n]
            if strict:
                raise _error(1406, col)
            _fault(adjust, 1265, col)
        return v
    if kind == TIME:
        from .functions.coerce import TIME_MAX, to_time

        if isinstance(value, str):
            m = _DATE_PREFIX.fullmatch(value.rstrip())
            if m is not None and parse_datetime(m.group(0)) is not None:
                if m.group(4) is None:  # a date alone: read as a time that junk follows
                    if strict:
                        raise _error(1292, col, "time", value)
                    _fault(adjust, 1265, col)
                    return _temporal_prefix(value, TIME) or _dt.timedelta(0)
                _fault(adjust, 1265, col, level="Note")  # its date is dropped
        t = to_time(value)
        if t is None:
            if strict:
                raise _bad(col, value, "time")
            if isinstance(value, (int, float, Decimal)) and abs(value) > 8385959:
                _fault(adjust, 1264, col)  # beyond any HHMMSS: the limit
                return TIME_MAX if value > 0 else -TIME_MAX
            t = _temporal_prefix(value, TIME) or _dt.timedelta(0)
            if abs(t) <= TIME_MAX:
                _fault(adjust, 1265, col)
        t = round_fraction(t, ctype.precision)
        if abs(t) > TIME_MAX:
            if strict:  # strict mode names the value (IGNORE: out of range, clamped)
                raise _error(1292, col, "time", value)
            _fault(adjust, 1264, col)
            return TIME_MAX if t > _dt.timedelta(0) else -TIME_MAX
        return t
    return value


def _in_epoch(v: _dt.datetime) -> bool:
    try:
        t = v.timestamp()  # (a naive datetime: the system's zone)
    except (OverflowError, OSError, ValueError):
        return False
    return 0 < t < 2**31


_YEAR_DIGITS = re.compile(r"\s*[+-]?(\d*)")


def _year_value(v: int, value, col: str, adjust, rest: str) -> int:
    """A YEAR column's value from the integer ``v`` read from ``value``, as MySQL stores it:
    1-69 are 2001-2069 and 70-99 are 1970-1999, 0 is 0000 (but a string zero of fewer than
    four digits, '0' or '00', is 2000; text with no number is 0); 1901-2155 as they are;
    anything else is out of range (1264; IGNORE: 0)."""
    if v == 0:
        if isinstance(value, str):
            digits = _YEAR_DIGITS.match(value).group(1)
            out = 2000 if digits and len(digits) < 4 else 0
        else:
            out = 0
    elif 1 <= v <= 69:
        out = 2000 + v
    elif 70 <= v <= 99:
        out = 1900 + v
    elif 1901 <= v <= 2155:
        out = v
    else:
        _fault(adjust, 1264, col)
        return 0
    if rest:
        _fault(adjust, 1265, col, level="Note" if rest == " " else "Warning")
    return out


def _bit_value(value, ctype: ColumnType, col: str, adjust):
    """A value written to a BIT(M) column, as MariaDB writes it: a string's bytes (or a binary
    string's) as a big-endian number, a DECIMAL rounded half away from zero, a double cut
    toward zero, a negative number as its 64-bit pattern. More than M bits is 1406 (IGNORE:
    the largest value, 1264)."""
    if isinstance(value, bool):
        v = int(value)
    elif isinstance(value, int):
        v = value
    elif isinstance(value, (bytes, bytearray, memoryview, str)):
        raw = (
            bytes(value) if not isinstance(value, str) else value.encode("utf-8", "surrogateescape")
        )
        v = int.from_bytes(raw, "big")
    elif isinstance(value, float):
        v = int(value) if math.isfinite(value) else -1  # a double is cut toward zero
    elif isinstance(value, Decimal):
        if value < 0:  # out of range: strict mode's error, IGNORE's 0
            if adjust is None or adjust.strict:
                raise _error(1264, col)
            _fault(adjust, 1264, col)
            return 0
        try:  # a DECIMAL is rounded half away from zero
            v = int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE))
        except (InvalidOperation, ValueError, OverflowError):
            v = -1
    else:
        raise _bad(col, value, "integer")
    if v < 0:
        v &= (1 << 64) - 1
    top = (1 << ctype.length) - 1
    if v > top:
        if adjust is None or adjust.strict:
            raise _error(1406, col)
        _fault(adjust, 1264, col)
        v = top
    if v > I64_MAX:
        from ..errors import NotSupportedError

        raise NotSupportedError(
            f"This version doesn't yet support 'BIT(64) values above 9223372036854775807' "
            f"(column '{col}')"
        )
    return v


def fmt_date(v: _dt.date) -> str:
    """A DATE as MySQL prints it: the year in four digits (``strftime`` leaves a year before
    1000 unpadded on some platforms)."""
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"


def fmt_datetime(v: _dt.datetime) -> str:
    """A DATETIME as MySQL prints it, with its microseconds when it has any."""
    s = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    return f"{s}.{v.microsecond:06d}" if v.microsecond else s


def format_value(v) -> str:
    """Text form of a value as MySQL prints it."""
    if isinstance(v, _dt.timedelta):
        from .functions.coerce import fmt_time

        return fmt_time(v)
    if isinstance(v, _dt.datetime):
        return fmt_datetime(v)
    if isinstance(v, _dt.date):
        return fmt_date(v)
    if isinstance(v, float):
        from .functions.coerce import ColumnFloat, fmt_float

        return v.shown() if v.__class__ is ColumnFloat else fmt_float(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def to_storage(v):
    """Value as stored in SQLite."""
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, (_dt.datetime, _dt.date, _dt.timedelta)):
        return format_value(v)
    if type(v) is int and not -(2**63) <= v < 2**63:
        return float(v)  # SQLite's integers are 64-bit: compare such a value as a number
    return v


def needs_conversion(ctype: ColumnType) -> bool:
    """Is a value read back from base storage for this column converted (``from_storage``)?"""
    k = ctype.kind
    return k in (DECIMAL, DATE, DATETIME, TIME) or k.__class__ is FloatKind


def from_storage(v, ctype: ColumnType):
    """Value read back from SQLite into the column's internal kind."""
    if v is None:
        return None
    kind = ctype.kind
    if kind == INT:
        return int(v)
    if kind == DECIMAL:
        d = Decimal(str(v)) if not isinstance(v, float) else Decimal(repr(v))
        return d.quantize(Decimal(1).scaleb(-(ctype.scale or 0)), rounding=ROUND_HALF_UP)
    if kind == FLOAT:
        if kind.__class__ is FloatKind:
            return kind.wrap(float(v))
        return float(v)
    if kind == DATETIME:
        return parse_datetime(v) if isinstance(v, str) else v
    if kind == DATE:
        return parse_date(v) if isinstance(v, str) else v
    if kind == TIME:
        from .functions.coerce import to_time

        return to_time(v) if not isinstance(v, _dt.timedelta) else v
    if kind == STR and not isinstance(v, str):
        return format_value(v)
    return v


def kind_of_value(v) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool) or isinstance(v, int):
        return INT
    if isinstance(v, Decimal):
        return DECIMAL
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, str):
        return STR
    if isinstance(v, bytes):
        return BYTES
    if isinstance(v, _dt.datetime):
        return DATETIME
    if isinstance(v, _dt.date):
        return DATE
    if isinstance(v, _dt.timedelta):
        return TIME
    return STR


MYSQL_NAME_OF_KIND = {
    INT: "BIGINT",
    DECIMAL: "DECIMAL",
    FLOAT: "DOUBLE",
    STR: "VARCHAR",
    BYTES: "BLOB",
    DATE: "DATE",
    DATETIME: "DATETIME",
    TIME: "TIME",
    NULL: "NULL",
}

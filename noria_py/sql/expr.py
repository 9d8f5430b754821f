"""Scalar expressions: sqlglot AST -> Python closures evaluated with MySQL semantics.

``compile_expr(node, scope)`` returns a ``Compiled`` whose ``fn(row, params)`` evaluates the
expression over a row tuple; ``params`` is the bound parameter tuple (only writes and proxied
paths use it; dataflow operators pass ``None``). Three-valued logic: NULL is ``None``, booleans
are 1 and 0. ``Unsupported`` means "the dataflow cannot maintain this", which sends the query to
base storage instead; ``ProgrammingError`` means the SQL itself is wrong.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from decimal import Decimal, DivisionByZero, InvalidOperation

from sqlglot import exp

from ..errors import NotSupportedError, bad_field
from . import functions as F
from . import union_types as UT
from . import values as V
from .collation import ck as _ck
from .dialect import DIALECT
from .functions import coerce as _coerce


class Unsupported(Exception):
    """The construct is valid SQL, but the dataflow cannot maintain it."""


class Compiled:
    __slots__ = ("fn", "kind", "const", "col", "scale", "rng", "faults", "hexnum")

    def __init__(
        self,
        fn: Callable,
        kind: str,
        const: bool = False,
        col: int | None = None,
        scale: int | None = None,
        rng: tuple | None = None,
    ):
        self.fn = fn
        self.kind = kind
        self.const = const
        self.col = col  # the input column index when the expression is a bare column
        self.scale = 0 if scale is None and kind == V.INT else scale  # a DECIMAL's, when known
        # an integer's (lowest, highest, unsigned) when known; None: BIGINT's whole range
        self.rng = rng
        # may raise an out-of-range error (1690) on some row: set by compile_expr
        self.faults = False
        # a 0x41 or b'101' literal: a binary string, and this unsigned integer where MySQL
        # reads it as a number (arithmetic, comparison with a number, a numeric column)
        self.hexnum: int | None = None


class Scope:
    """Resolves column references to positions in the input row.

    ``columns`` is a list of (qualifier, name, kind); qualifier may be None.
    """

    def __init__(
        self,
        columns: list[tuple[str | None, str, str]],
        scales: list | None = None,
        ranges: list | None = None,
    ):
        self.columns = columns
        self.scales = scales
        self.ranges = ranges  # per column: an integer column's (lowest, highest, unsigned)
        # positions whose DECIMAL values may hold more digits than their scale (an AVG's, a
        # quotient's): compared and shown rounded (``V.display_round``)
        self.inexact: frozenset = frozenset()

    def resolve(self, col: exp.Column) -> tuple[int, str]:
        name = col.name.lower()
        table = col.table.lower() if col.table else None
        hits = [
            i
            for i, (q, n, _k) in enumerate(self.columns)
            if n.lower() == name and (table is None or (q or "").lower() == table)
        ]
        if not hits:
            full = f"{col.table}.{col.name}" if col.table else col.name
            raise bad_field(full)
        if len(hits) > 1:
            from ..errors import ER_NON_UNIQ_ERROR, ProgrammingError

            raise ProgrammingError(
                f"Column '{col.name}' in field list is ambiguous", ER_NON_UNIQ_ERROR, "23000"
            )
        i = hits[0]
        return i, self.columns[i][2]


# ---------------------------------------------------------------------------------------------
# ENUM and SET columns: their text, unless MySQL reads them as numbers

# parents under which such a column is read as its text
_TEXT_PARENTS = (
    exp.Select, exp.Alias, exp.Ordered, exp.Group, exp.Distinct, exp.Is, exp.Count, exp.Max,
    exp.Min, exp.GroupConcat, exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Like,
    exp.Coalesce, exp.Length, exp.Substring, exp.Trim, exp.Left, exp.Right,
)  # fmt: skip
_TEXT_FUNCTIONS = frozenset(
    "CONCAT CONCAT_WS UPPER LOWER UCASE LCASE CHAR_LENGTH CHARACTER_LENGTH LENGTH OCTET_LENGTH "
    "SUBSTRING SUBSTR MID LEFT RIGHT TRIM LTRIM RTRIM REPLACE REVERSE LPAD RPAD COALESCE IFNULL "
    "INSTR LOCATE POSITION FIND_IN_SET FIELD HEX MD5 SHA1 SHA2 QUOTE".split()
)
_COMPARE = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def member_in_string_context(col: exp.Column, scope) -> None:
    """An ENUM or SET column is its text where MySQL reads it as a string (a string function,
    GROUP BY, a comparison with a string or a parameter, ...); where MySQL reads it as a number
    (arithmetic, a comparison with a number, SUM, ...) it is its position (SET: bit mask),
    which this evaluator does not model: refused (1235) rather than answered from the text. A
    parameter compared with it is mapped to the member at run time (``MemberKind``)."""
    node = col
    parent = col.parent
    while isinstance(parent, exp.Paren):
        node, parent = parent, parent.parent
    if parent is None or isinstance(parent, _TEXT_PARENTS):
        return  # (None: the whole expression, read as a value: a projection or a group key)
    if isinstance(parent, exp.Anonymous) and str(parent.this).upper() in _TEXT_FUNCTIONS:
        return
    if isinstance(parent, exp.Cast) and parent.to.is_type(*exp.DataType.TEXT_TYPES, "BINARY"):
        return  # CAST(e AS CHAR), CAST(e AS BINARY): its text
    others: list = []
    if isinstance(parent, _COMPARE):
        others = [parent.expression if parent.this is node else parent.this]
    elif isinstance(parent, exp.In) and not parent.args.get("query"):
        others = list(parent.expressions) if parent.this is node else [parent.this]
    elif isinstance(parent, exp.Between):
        others = [parent.args.get("low"), parent.args.get("high")]
    if others and all(_textual(o, scope) for o in others):
        return
    raise NotSupportedError(
        "This version doesn't yet support 'an ENUM or SET column in numeric context "
        f"(`{col.sql(DIALECT)}` read as its position)'"
    )


# operators under which an ENUM or SET column is its number: an ENUM member's position (1 for
# the first declared member, 0 for the empty string an invalid value was stored as), a SET's bit
# mask (bit i for the i-th declared member)
_NUMBER_PARENTS = (
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.BitwiseAnd,
    exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.BitwiseLeftShift, exp.BitwiseRightShift,
)  # fmt: skip
_NUMBER_CASTS = ("BIGINT", "UBIGINT", "INT", "UINT", "DECIMAL", "DOUBLE", "FLOAT")


def _member_as_number(col: exp.Column) -> bool:
    """Is an ENUM or SET column an operand MySQL reads as its number (arithmetic, a bit
    operator, CAST AS SIGNED/UNSIGNED/DECIMAL/DOUBLE)?"""
    parent = col.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    if isinstance(parent, _NUMBER_PARENTS):
        return True
    node = col
    while node.parent is not parent:
        node = node.parent
    others: list = []
    if isinstance(parent, _COMPARE):
        others = [parent.expression if parent.this is node else parent.this]
    elif isinstance(parent, exp.In) and not parent.args.get("query") and parent.this is node:
        others = list(parent.expressions)
    elif isinstance(parent, exp.Between) and parent.this is node:
        others = [parent.args.get("low"), parent.args.get("high")]
    if others and all(_number_literal(o) for o in others):
        return True  # compared with numbers: by its number (g < 2, g IN (1, 3))
    return isinstance(parent, exp.Cast) and getattr(parent.to.this, "name", None) in _NUMBER_CASTS


def _number_literal(e) -> bool:
    while isinstance(e, (exp.Paren, exp.Neg)):
        e = e.this
    return isinstance(e, exp.Literal) and not e.is_string


def _member_number(i: int, ctype) -> Compiled:
    """Column ``i`` of ENUM/SET type ``ctype`` read as its number."""
    from .collation import current

    coll = current()
    if ctype.mysql_name == "ENUM":
        numbers = {m: pos for pos, m in enumerate(ctype.values, 1)}
    else:
        numbers = {m: 1 << b for b, m in enumerate(ctype.values)}
    keys = {coll.key(m): v for m, v in numbers.items()}
    numbers[""] = 0  # an ENUM's invalid value, an empty SET
    is_set = ctype.mysql_name == "SET"

    def one(text: str) -> int:
        v = numbers.get(text)
        return v if v is not None else keys.get(coll.key(text), 0)

    def fn(r, p):
        v = r[i]
        if v is None:
            return None
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if is_set and "," in v:
            mask = 0
            for part in v.split(","):
                mask |= one(part)
            return mask
        return one(v)

    hi = len(ctype.values) if not is_set else (1 << len(ctype.values)) - 1
    return Compiled(fn, V.INT, scale=0, rng=(0, hi, False))  # (signed: `e - 1` of 0 is -1)


_STRING_PARENTS = (
    exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Like, exp.ILike, exp.Length,
    exp.Substring, exp.Trim, exp.Left, exp.Right, exp.GroupConcat,
)  # fmt: skip
_STRING_FUNCTIONS = _TEXT_FUNCTIONS - {"COALESCE", "IFNULL", "FIELD", "FIND_IN_SET"}


def _read_as_text(col: exp.Column) -> bool:
    """Is the column an argument MySQL reads as a string (CONCAT, LIKE, CAST AS CHAR, ...)?"""
    parent = col.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    if isinstance(parent, _STRING_PARENTS):
        return True
    if isinstance(parent, exp.Anonymous):
        return str(parent.this).upper() in _STRING_FUNCTIONS
    return isinstance(parent, exp.Cast) and parent.to.is_type(*exp.DataType.TEXT_TYPES, "BINARY")


def _fixed_fraction(i: int, kind: str, fsp: int):
    """A DATETIME(fsp) or TIME(fsp) column's value as its text with ``fsp`` fraction digits,
    still the temporal value in temporal or numeric context."""
    from .functions.temporal import _fmt_dt, _fmt_td

    fmt = _fmt_dt if kind == V.DATETIME else _fmt_td

    def fn(r, p):
        v = r[i]
        if v is None or not isinstance(v, (_dt.datetime, _dt.timedelta)):
            return v
        return _coerce.TemporalText(fmt(v, fsp), v)

    return fn


def _textual(e, scope) -> bool:
    """Does MySQL compare an ENUM/SET column with ``e`` as strings?"""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Literal):
        return e.is_string
    if isinstance(e, (exp.Placeholder, exp.Null)):
        return True  # a parameter: mapped to a member at run time when it is a number
    if isinstance(e, exp.Column):
        try:
            return scope.resolve(e)[1] == V.STR
        except Exception:  # noqa: BLE001 - the column's own error comes when it is compiled
            return True
    if isinstance(e, (exp.Concat, exp.ConcatWs, exp.Upper, exp.Lower, exp.Substring, exp.Trim)):
        return True
    return isinstance(e, exp.Anonymous) and str(e.this).upper() in _TEXT_FUNCTIONS


# ---------------------------------------------------------------------------------------------
# Value helpers (MySQL semantics)


_TEMPORAL_TYPES = (_dt.datetime, _dt.date, _dt.timedelta)


def _num(v):
    t = type(v)
    if t is int or t is float or t is Decimal:
        return v
    if t is _coerce.ColumnFloat:
        return float(v)
    if t is _coerce.TemporalText:  # a date MySQL returns as a string: its number, a DOUBLE
        return float(_coerce.to_num(v.value))
    if isinstance(v, _coerce.ScalarText):  # JSON_EXTRACT's scalar: the value it holds
        return float(_num(v.value))
    # MySQL converts a string in numeric context to a DOUBLE
    if isinstance(v, str):
        if _STRICT.on:
            V.check_number_text(v, "DOUBLE")
        return float(V.str_to_number(v))
    if isinstance(v, bytes):
        if _STRICT.on:
            V.check_number_text(v, "DOUBLE")
        return float(V.str_to_number(v.decode("utf-8", "replace")))
    if isinstance(v, bool):
        return int(v)
    if t in _TEMPORAL_TYPES:  # 2024-01-02 is 20240102, -00:02:03 is -203
        return _coerce.to_num(v)
    return v


def _fraction_digits(v) -> int:
    """How many fraction digits a temporal value shows (its microseconds, trailing zeros cut)."""
    us = v.microseconds if type(v) is _dt.timedelta else getattr(v, "microsecond", 0)
    return 6 - (len(str(us)) - len(str(us).rstrip("0"))) if us else 0


def temporal_number(c: Compiled, fsp: int | None) -> Compiled:
    """A DATE, DATETIME or TIME operand of arithmetic as MySQL reads it: the number its digits
    spell, an integer, or a DECIMAL with the type's fraction digits (``fsp``; for an expression
    whose type does not say, the digits of its value)."""
    f = c.fn
    if fsp is None and c.const:
        v = f(None, None)
        fsp = _fraction_digits(v) if type(v) in _TEMPORAL_TYPES else 0
    if fsp:
        q = Decimal(1).scaleb(-fsp)

        def dec(r, p):
            v = f(r, p)
            return None if v is None else Decimal(_coerce.to_num(v)).quantize(q)

        return Compiled(dec, V.DECIMAL, const=c.const, scale=fsp)

    def num(r, p):
        v = f(r, p)
        return None if v is None else _coerce.to_num(v)

    # fsp None (unknown): typed as an integer, a value with a fraction kept as a DECIMAL
    return Compiled(num, V.INT, const=c.const)


def _arith_operands(a, b):
    a = _num(a)
    b = _num(b)
    if isinstance(a, float) or isinstance(b, float):
        return float(a), float(b)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a), Decimal(b)
    return a, b


def _nz(r):
    """MySQL has no negative zero DECIMAL: -0.000 is 0.000."""
    if type(r) is Decimal and not r and r.is_signed():
        return r.copy_abs()
    return r


I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1
U64_MAX = (1 << 64) - 1
SIGNED = (I64_MIN, I64_MAX, False)
UNSIGNED = (0, U64_MAX, True)
_INF = float("inf")


def out_of_range(kind: str, node: exp.Expression):
    """MySQL's error 1690 for ``node``, whose value does not fit ``kind``."""
    from ..errors import DataError

    text = node.sql(DIALECT) if isinstance(node, exp.Expression) else str(node)
    return DataError(f"{kind} value is out of range in '{text}'", 1690, "22003")


def _magnitude(c: Compiled) -> float | None:
    """A bound on an operand's absolute value (an integer's range, a constant's own), or None
    when it has none (a DOUBLE or DECIMAL column)."""
    if c.const:
        v = c.fn(None, None)
        if v is None:
            return 0.0
        if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
            m = abs(float(v))
            return m if m < 1e300 else None
        return None
    if c.kind == V.INT:
        r = int_range(c)
        return float(max(abs(r[0]), abs(r[1]))) if r is not None else None
    return None


def int_range(c: Compiled) -> tuple | None:
    """An integer expression's (lowest, highest, unsigned); None when it is not an integer."""
    if c.const:
        v = c.fn(None, None)
        if type(v) is int:
            return (v, v, bool(c.rng and c.rng[2]) or v > I64_MAX)
        if v is None and c.kind == V.INT:
            return (0, 0, bool(c.rng and c.rng[2]))
        return None
    if c.rng is not None:
        return c.rng
    return SIGNED if c.kind == V.INT else None


def _null_operand(a, b, kind: str = "DOUBLE"):
    """Arithmetic with a NULL operand is NULL, but MySQL still reads the other operand as a
    number: under strict evaluation a string that is not wholly one is an error."""
    if _STRICT.on:
        for v in (a, b):
            if v is not None and isinstance(v, (str, bytes)):
                V.check_number_text(v, kind)
    return None


def _add(a, b):
    if a is None or b is None:
        return _null_operand(a, b)
    a, b = _arith_operands(a, b)
    return _nz(a + b)


def _sub(a, b):
    if a is None or b is None:
        return _null_operand(a, b)
    a, b = _arith_operands(a, b)
    return _nz(a - b)


def _mul(a, b):
    if a is None or b is None:
        return _null_operand(a, b)
    a, b = _arith_operands(a, b)
    return _nz(a * b)


_scale = V.decimal_frac


def _div(a, b):
    """MySQL ``/``: a DECIMAL quotient (with the digits MySQL keeps inside an expression:
    ``V.decimal_quotient``; shown with the dividend's scale plus 4), or a double; x/0 is NULL."""
    if a is None or b is None:
        return _null_operand(a, b)
    a = _num(a)
    b = _num(b)
    if b == 0:
        if _STRICT.division:
            V.division_by_zero()
        return None
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    try:
        return _nz(V.decimal_quotient(Decimal(a), Decimal(b)))
    except (DivisionByZero, InvalidOperation):
        return None


def _intdiv(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    if b == 0:
        if _STRICT.division:
            V.division_by_zero()
        return None
    q = a / b
    return int(q) if not isinstance(q, int) else q


def _intdiv_exact(a, b):
    if a is None or b is None:
        # (DIV reads its dividend first, and stops there when it is NULL)
        return _null_operand(a, None, "DECIMAL")
    a, b = _arith_operands(a, b)
    if b == 0:
        if _STRICT.division:
            V.division_by_zero()
        return None
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return int(a / b)


def _mod(a, b):
    if a is None or b is None:
        return _null_operand(a, b)
    a, b = _arith_operands(a, b)
    if b == 0:
        if _STRICT.division:
            V.division_by_zero()
        return None
    if isinstance(a, int) and isinstance(b, int):
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    return math.fmod(a, b) if isinstance(a, float) else _nz(a.__mod__(b))


def _neg(a):
    if a is None:
        return None
    return _nz(-_num(a))


_NUMBER_KINDS = frozenset((V.INT, V.DECIMAL, V.FLOAT))
# functions whose arguments are numbers: a hex or bit literal is its integer there (MySQL's
# val_int), elsewhere a binary string (HEX, LENGTH, CONCAT ...)
_NUMERIC_ARGUMENTS = frozenset((
    "ABS", "SIGN", "CEIL", "CEILING", "FLOOR", "ROUND", "TRUNCATE", "MOD", "POW", "POWER",
    "SQRT", "EXP", "LN", "LOG", "LOG2", "LOG10", "SIN", "COS", "TAN", "ASIN", "ACOS", "ATAN",
    "ATAN2", "COT", "DEGREES", "RADIANS", "BIT_COUNT", "CAST_SIGNED", "CAST_UNSIGNED",
    "CAST_DECIMAL", "CAST_DOUBLE", "CAST_FLOAT", "GREATEST", "LEAST", "CONV", "BIN", "OCT",
))  # fmt: skip


# numeric functions of several arguments: the conversion each argument's string is named by
_NULL_STILL_READS = {
    "ROUND": ("DOUBLE", "INTEGER"), "TRUNCATE": ("DOUBLE", "INTEGER"), "MOD": ("DOUBLE",),
    "POW": ("DOUBLE",), "POWER": ("DOUBLE",), "LOG": ("DOUBLE",), "ATAN": ("DOUBLE",),
    "ATAN2": ("DOUBLE",),
}  # fmt: skip


# Functions that read some of their arguments as dates or times. Given a value that is not
# one, MySQL answers NULL (or a part of what it could read) with warning 1292, which under
# strict evaluation (a write in strict mode) is the error itself. Per argument position, how
# the function reads it:
#   "datetime"  a valid date (DATE_ADD('0000-00-00', ...) is an error);
#   "date0"     a date that may have zero parts ('2024-00-00'), or a time;
#   "time"      a time, or a datetime with its time of day (a date alone is an error).
_D, _D0, _T = "datetime", "date0", "time"
_TEMPORAL_READS = {
    "DATE_ADD": {0: _D}, "DATE_SUB": {0: _D}, "ADDDATE": {0: _D}, "SUBDATE": {0: _D},
    "TIMESTAMPADD": {2: _D}, "TIMESTAMPDIFF": {1: _D, 2: _D}, "DATEDIFF": {0: _D, 1: _D},
    "DAYOFWEEK": {0: _D}, "WEEKDAY": {0: _D}, "DAYOFYEAR": {0: _D}, "DAYNAME": {0: _D},
    "TO_DAYS": {0: _D}, "TO_SECONDS": {0: _D}, "WEEK": {0: _D}, "WEEKOFYEAR": {0: _D},
    "YEARWEEK": {0: _D}, "UNIX_TIMESTAMP": {0: _D},
    "YEAR": {0: _D0}, "MONTH": {0: _D0}, "DAY": {0: _D0}, "DAYOFMONTH": {0: _D0},
    "QUARTER": {0: _D0}, "MONTHNAME": {0: _D0}, "LAST_DAY": {0: _D0}, "DATE_FORMAT": {0: _D0},
    "DATE": {0: _D0}, "TIMESTAMP": {0: _D0}, "EXTRACT": {1: _D0},
    "HOUR": {0: _T}, "MINUTE": {0: _T}, "SECOND": {0: _T}, "MICROSECOND": {0: _T},
    "TIME_TO_SEC": {0: _T}, "TIMEDIFF": {0: _T, 1: _T}, "ADDTIME": {0: _T}, "SUBTIME": {0: _T},
    "TIME": {0: _T}, "CAST_DATE": {0: _D0}, "CAST_DATETIME": {0: _D0}, "CAST_TIME": {0: _T},
}  # fmt: skip
_TEMPORAL_TYPES = (_dt.datetime, _dt.date, _dt.timedelta)
_ZERO_DATE = re.compile(r"^\s*0{1,4}-0{1,2}-0{1,2}(?:\s+0{1,2}:0{1,2}:0{1,2}(?:\.0*)?)?\s*$")
_DIGITS_ONLY = re.compile(r"^\s*(\d+)\s*$")


def _readable(v, kind: str, wide: bool = False) -> bool:
    """Does MySQL read ``v`` (not NULL, not already temporal) as the ``kind`` wanted?"""
    from .functions import temporal as _temporal

    text = None
    if type(v) in (str, bytes):
        text = v.decode("utf-8", "replace") if type(v) is bytes else v
    if kind == _T:
        if text is not None:
            m = _temporal._DATEISH.match(text)
            if m is not None:  # a date: with a valid time of day
                rest = m.group(1)
                whole = _coerce.to_datetime(text, prefix=False)
                return bool(rest and rest.strip()) and whole is not None
            m = _DIGITS_ONLY.match(text)
            if m is not None and len(m.group(1)) == 8:
                if _coerce.to_datetime(text, prefix=False) is not None:
                    return False  # YYYYMMDD: a date without a time of day
                n = int(m.group(1))  # else HHHHMMSS, within TIME's 838 hours (but
                # EXTRACT reads any number of hours)
                return n // 100 % 100 < 60 and n % 100 < 60 and (wide or n < 8390000)
        return _temporal._read_time(v, exact=True) is not None
    if _coerce.to_datetime(v, prefix=False) is not None:
        return True
    # a date with zero parts ('2024-00-00', '100000')
    return kind == _D0 and text is not None and _temporal._ymd(text, exact=True) is not None


def _strict_temporal(name: str, args: tuple) -> None:
    """Under strict evaluation: error 1292 when an argument ``name`` reads as a date or time
    is not wholly one (MySQL's warning, made an error by strict mode), whatever the function
    made of it (a valid date with other characters after it is read up to them)."""
    reads = _TEMPORAL_READS.get(name)
    if reads is None:
        return
    from ..errors import DataError

    if name == "EXTRACT" and args and str(args[0]).upper() in _TIME_UNITS:
        reads = {1: "extract"}  # EXTRACT(HOUR FROM x) reads a time
    for i, kind in reads.items():
        if i >= len(args):
            continue
        v = args[i]
        if v is None or isinstance(v, _TEMPORAL_TYPES) or type(v) is bool:
            continue
        if isinstance(v, (_coerce.TemporalText, _coerce.ScalarText)):
            v = v.value
            if v is None or isinstance(v, _TEMPORAL_TYPES):
                continue
        if kind == "extract":  # a date (its time of day is 0) or a time of any hours
            if _readable(v, _D0) or _readable(v, _T, wide=True):
                continue
            kind = _T
        elif _readable(v, kind):
            continue
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else _coerce.to_str(v)
        if name == "UNIX_TIMESTAMP" and _ZERO_DATE.match(text):
            continue  # UNIX_TIMESTAMP('0000-00-00') is 0 without an error
        raise DataError(
            f"Incorrect {'time' if kind == _T else 'datetime'} value: '{text}'", 1292, "22007"
        )


_TIME_UNITS = frozenset(("HOUR", "MINUTE", "SECOND", "MICROSECOND"))


def _minmax_reads(call, kind):
    """GREATEST/LEAST with a NULL argument are NULL, but MySQL reads the arguments before the
    first NULL as the comparison's type: under strict evaluation a string there that is not
    a number (a numeric comparison) or not a date (a temporal one) is error 1292."""
    numeric = kind in (V.INT, V.DECIMAL, V.FLOAT) or kind.__class__ is V.FloatKind
    temporal = kind in (V.DATE, V.DATETIME)
    if not (numeric or temporal):
        return call

    def reads(*a):
        if None in a and _STRICT.on:
            for v in a:
                if v is None:
                    break
                if type(v) in (str, bytes):
                    if numeric:
                        V.check_number_text(v, "DOUBLE")
                    else:
                        _strict_temporal("DATE_ADD", (v,))
        return call(*a)

    return reads


def _integral_double(v) -> bool:
    return type(v) is float and v.is_integer() and -(2.0**63) <= v < 2.0**64


def _cmp_prepare(a, b):
    """Bring two non-NULL values to a comparable pair the way MySQL compares mixed types.

    Strings against numbers compare as DOUBLE; a DECIMAL against a DOUBLE as DOUBLE; a date or
    datetime against a string or a number converts the other side to a datetime (a number like
    20240229 is a date), and DATE against DATETIME compares as DATETIME. TIME against a string
    or a number converts the other side to a TIME."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        return a, b
    cf = _coerce.ColumnFloat
    if ta is cf or tb is cf:  # a FLOAT column's value compares as the double it holds
        return _cmp_prepare(float(a) if ta is cf else a, float(b) if tb is cf else b)
    if isinstance(a, _coerce.ScalarText) or isinstance(b, _coerce.ScalarText):
        return _cmp_prepare(
            a.value if isinstance(a, _coerce.ScalarText) else a,
            b.value if isinstance(b, _coerce.ScalarText) else b,
        )
    if ta is _coerce.TemporalText or tb is _coerce.TemporalText:
        return _cmp_prepare(
            a.value if ta is _coerce.TemporalText else a,
            b.value if tb is _coerce.TemporalText else b,
        )
    if ta is bool or tb is bool:
        return _cmp_prepare(int(a) if ta is bool else a, int(b) if tb is bool else b)
    if ta in _NUMERIC and tb in _NUMERIC:
        if ta is float or tb is float:
            return float(a), float(b)
        return a, b  # int against Decimal compares exactly
    if ta is str and tb in _NUMERIC:
        if _STRICT.on:  # (against an integer MySQL names the conversion DECIMAL)
            V.check_number_text(a, "DECIMAL" if tb is int else "DOUBLE")
        x = _num(a)
        return (x, float(b)) if tb is not int or isinstance(x, float) else (x, b)
    if tb is str and ta in _NUMERIC:
        if _STRICT.on:
            V.check_number_text(b, "DECIMAL" if ta is int else "DOUBLE")
        y = _num(b)
        return (float(a), y) if ta is not int or isinstance(y, float) else (a, y)
    if ta in _TEMPORAL or tb in _TEMPORAL:
        if ta is _dt.timedelta or tb is _dt.timedelta:
            x = a if ta is _dt.timedelta else _coerce.to_time(a)
            y = b if tb is _dt.timedelta else _coerce.to_time(b)
            if x is not None and y is not None:
                return x, y
            if (x is None and ta is str) or (y is None and tb is str):
                # a string compared with a TIME is read as far as it is one (none: 0)
                return _time_key(a, x), _time_key(b, y)
            return _coerce.to_str(a), _coerce.to_str(b)
        x = _as_datetime(a)
        y = _as_datetime(b)
        if x is not None and y is not None:
            return x, y
        if ta in _NUMERIC or tb in _NUMERIC:
            return _coerce.to_num(a), _coerce.to_num(b)
        if (x is None and ta is str) or (y is None and tb is str):
            # a string that is no valid date still compares as a date: one with zero parts
            # as itself ('2024-00-00'), anything else as the zero date, below every date
            return _date_key(a, x), _date_key(b, y)
        return _coerce.to_str(a), _coerce.to_str(b)
    if ta is bytes or tb is bytes:
        return _coerce.to_bytes(a), _coerce.to_bytes(b)
    return a, b


_NUMERIC = (int, float, Decimal)
_STRICT = V.STRICT_EVALUATION
_TEMPORAL = (_dt.date, _dt.datetime, _dt.timedelta)


def _time_key(v, t):
    if t is not None:
        return t
    from .functions.temporal import _read_time

    t = _read_time(v) if type(v) is str else None
    return _dt.timedelta(0) if t is None else t


def _date_key(v, d):
    """A date as comparable parts: ``d`` (``v`` as a datetime) if there is one, else ``v``'s
    date with zero parts, else the zero date."""
    if d is not None:
        return (d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond)
    if type(v) is str:
        from .functions.temporal import _ymd

        r = _ymd(v)
        if r is not None:
            return (*r, 0, 0, 0, 0)
    return (0, 0, 0, 0, 0, 0, 0)


def _as_datetime(v):
    t = type(v)
    if t is _dt.datetime:
        return v
    if t is _dt.date:
        return _dt.datetime(v.year, v.month, v.day)
    return _coerce.to_datetime(v)


def _eq(a, b):
    if a is None or b is None:
        return None
    if type(a) is type(b):
        if type(a) is str:
            return 1 if _ck(a) == _ck(b) else 0  # under the collation
        return 1 if a == b else 0
    a, b = _cmp_prepare(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return 1 if _ck(a) == _ck(b) else 0
    try:
        return 1 if a == b else 0
    except TypeError:
        return 0


def _ne(a, b):
    r = _eq(a, b)
    return None if r is None else 1 - r


def _mk_order(op):
    def f(a, b):
        if a is None or b is None:
            return None
        if type(a) is not type(b):
            a, b = _cmp_prepare(a, b)
        if isinstance(a, str) and isinstance(b, str):
            return 1 if op(_ck(a), _ck(b)) else 0  # under the collation
        try:
            return 1 if op(a, b) else 0
        except TypeError:
            return 1 if op(V.format_value(a), V.format_value(b)) else 0

    return f


import operator as _op  # noqa: E402

_lt = _mk_order(_op.lt)
_le = _mk_order(_op.le)
_gt = _mk_order(_op.gt)
_ge = _mk_order(_op.ge)


def _nullsafe_eq(a, b):
    if a is None and b is None:
        return 1
    if a is None or b is None:
        return 0
    return _eq(a, b)


def truthy(v) -> bool:
    """WHERE/HAVING/ON semantics: NULL and zero are false."""
    if v is None:
        return False
    if isinstance(v, str):
        if _STRICT.on:
            V.check_number_text(v, "DECIMAL")
        v = V.str_to_number(v)
    return bool(v)


def _bool(v):
    if v is None:
        return None
    return 1 if truthy(v) else 0


def like_matcher(pattern: str, escape: str | None = "\\", coll=None):
    """``value -> bool`` for ``value LIKE pattern`` under the current collation (or ``coll``):
    characters compare by their weights (``'É' LIKE 'e'`` under ``utf8mb4_general_ci``)."""
    from . import collation as _C

    coll = coll or _C.current()
    rx = _C._like_regex(coll, pattern, escape)
    if coll.name == "binary":
        return lambda v: rx.fullmatch(v) is not None
    units = _C._units
    return lambda v: rx.fullmatch(units(coll, v)) is not None


_like_cache: dict[tuple, object] = {}


def like_cached(pattern, escape: str = "\\", coll=None):
    """``like_matcher`` for a pattern met while rows are read (a pattern that is not constant),
    kept for the next row with the same pattern, escape and collation."""
    if not isinstance(pattern, str):
        pattern = V.format_value(pattern)
    key = (pattern, escape, coll)
    m = _like_cache.get(key)
    if m is None:
        if len(_like_cache) > 10000:
            _like_cache.clear()
        m = _like_cache[key] = like_matcher(pattern, escape, coll)
    return m


def _like(v, pattern):
    if v is None or pattern is None:
        return None
    s = v if isinstance(v, str) else V.format_value(v)
    return 1 if like_cached(pattern)(s) else 0


def _str(v):
    return v if isinstance(v, str) else V.format_value(v)


def _escape_char(e) -> str:
    """LIKE's ESCAPE character: an empty or NULL one is the backslash (MariaDB's reading); more
    than one character is error 1210."""
    if e is None:
        return "\\"
    text = _str(e) if not isinstance(e, bytes) else e.decode("utf-8", "replace")
    if text == "":
        return "\\"
    if len(text) > 1:
        from ..errors import ER_WRONG_ARGUMENTS, ProgrammingError

        raise ProgrammingError("Incorrect arguments to ESCAPE", ER_WRONG_ARGUMENTS, "HY000")
    return text


def _bytes_literal(node: exp.Expression, c) -> bool:
    """Is ``node`` (compiled to ``c``) a binary string constant of a literal's coercibility (4):
    ``_binary'..'``, ``X'..'``, ``0x..``, ``b'..'`` or a function of constants such as
    ``UNHEX('41')`` or ``CHAR(65)``, but not one made binary by ``BINARY 'x'``, ``CAST(.. AS
    BINARY)`` or ``CONVERT(.. USING binary)`` (coercibility 2, a column's)?"""
    if not (c.const and c.kind == V.BYTES):
        return False
    for sub in node.walk():
        if isinstance(sub, exp.Cast):
            to = sub.args.get("to")
            if getattr(to, "this", None) in (exp.DType.BINARY, exp.DType.VARBINARY):
                return False
            if _converts_to_binary(to):
                return False
    return True


def _text_of(c: Compiled) -> Compiled:
    """A binary string value as text (its bytes read as UTF-8)."""
    f = c.fn

    def fn(r, p):
        v = f(r, p)
        return bytes(v).decode("utf-8", "replace") if v is not None else None

    return Compiled(fn, V.STR)


def _converts_to_binary(to) -> bool:
    """Is a cast's type ``CONVERT(.. USING binary)``'s (the character set binary)?"""
    return (
        getattr(to, "this", None) == exp.DType.CHARACTER_SET
        and str(to.args.get("kind") or "").lower() == "binary"
    )


def _nullif(a, b):
    if a is None:
        return None
    return None if _eq(a, b) == 1 else a


# functions whose value is one of their arguments': of the arguments' type when they agree
_RETURNS_ARGUMENT = frozenset(("GREATEST", "LEAST", "IFNULL", "ANY_VALUE"))


def _plain_floats(call):
    """``call`` giving a FLOAT column's value (``ColumnFloat``) as the double it holds, where
    the result is a DOUBLE (MySQL's type aggregation of FLOAT with another type)."""
    cf = _coerce.ColumnFloat

    def plain(*a):
        v = call(*a)
        return float(v) if v.__class__ is cf else v

    return plain


def _fold(kinds: list[str]) -> str:
    ks = [k for k in kinds if k != V.NULL]
    if not ks:
        return V.NULL
    if V.FLOAT in ks:
        return V.FLOAT
    if V.DECIMAL in ks:
        return V.DECIMAL
    if all(k == V.INT for k in ks):
        return V.INT
    if len(set(ks)) == 1:
        return ks[0]
    if all(k in V.NUMERIC_KINDS for k in ks):
        return V.DECIMAL
    return V.STR


def _to_kind(kind: str):
    """A converter of a branch's value to the aggregated ``kind`` (None: no conversion)."""
    if kind == V.STR:
        return lambda v: v if v is None or type(v) is str else _coerce.to_str(v)
    if kind == V.BYTES:
        return lambda v: v if v is None or type(v) is bytes else _coerce.to_bytes(v)
    if kind == V.DECIMAL:
        return lambda v: v if v is None or type(v) is Decimal else _coerce.to_decimal(v)
    if kind == V.FLOAT:
        return lambda v: v if v is None or type(v) is float else _coerce.to_float(v)
    if kind == V.DATETIME:
        return lambda v: v if v is None or type(v) is _dt.datetime else _coerce.to_datetime(v)
    return None


def _unified(fn, parts: list[Compiled], signed_nulls: bool = True, nodes=None) -> Compiled:
    """``fn``, whose value is one of ``parts``' (IF, CASE, COALESCE, IFNULL), converted to
    the type MySQL aggregates from theirs (``union_types.merge``: numbers widen to DOUBLE or
    DECIMAL, a signed beside an unsigned integer is a DECIMAL, DATE with DATETIME is DATETIME,
    anything else mixed is a string; a DECIMAL takes the largest scale, when every part's scale
    is known; a NULL part beside unsigned integers is a signed one unless ``signed_nulls`` is
    off, as for IF()). ``nodes``, the parts' expressions, tell literals: a binary literal
    beside a text column makes text (``COALESCE(s, _binary'x')``), as in a UNION."""
    kinds = [c.kind for c in parts]
    scales = [c.scale for c in parts]
    members = []
    for i, c in enumerate(parts):
        node = nodes[i] if nodes is not None else None
        lit = c.const if c.kind == V.STR else node is not None and _bytes_literal(node, c)
        rng = int_range(c) if c.kind == V.INT else None
        members.append(UT.member(c.kind, c.scale, rng, lit))
    kind = UT.merge(members, signed_nulls).kind
    floats = [k for k in kinds if k != V.NULL]
    if kind == V.FLOAT and floats[0].__class__ is V.FloatKind:
        if all(floats[0].same(k) for k in floats):
            kind = floats[0]  # FLOAT(M,D) columns of one type keep it; others are DOUBLE
    if kind == V.DECIMAL:
        known = [0 if k == V.INT else s for k, s in zip(kinds, scales) if k != V.NULL]
        if known and all(s is not None for s in known):
            q = Decimal(1).scaleb(-max(known))

            def fixed(r, p):
                v = fn(r, p)
                if v is None:
                    return None
                if type(v) is not Decimal:
                    v = _coerce.to_decimal(v)
                return v.quantize(q)

            if all(s == max(known) for s in known) and all(k == V.DECIMAL for k in kinds):
                return Compiled(fn, kind, scale=max(known))
            return Compiled(fixed, kind, scale=max(known))
    fixed_float = None
    if kind == V.FLOAT:
        known = [s for k, s in zip(kinds, scales) if k != V.NULL]
        if known and all(s is not None for s in known):
            fixed_float = max(known)  # COALESCE(PI()) keeps PI()'s display decimals
    if kind.__class__ is not V.FloatKind and any(k.__class__ is V.FloatKind for k in kinds):
        f = fn
        cf = _coerce.ColumnFloat

        def fn(r, p):  # a FLOAT column's value beside another type's: the double it holds
            v = f(r, p)
            return float(v) if v.__class__ is cf else v

    if all(k in (kind, V.NULL) for k in kinds):
        return Compiled(fn, kind, scale=fixed_float)
    conv = _to_kind(kind)
    if conv is None:
        return Compiled(fn, kind, scale=fixed_float)
    return Compiled(lambda r, p: conv(fn(r, p)), kind, scale=fixed_float)


def literal_value(node: exp.Literal):
    text = node.this
    if node.is_string:
        return text
    if re.fullmatch(r"[+-]?\d+", text):
        v = int(text)
        return v if -U64_MAX <= v <= U64_MAX else Decimal(text)  # beyond BIGINT UNSIGNED
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)", text):
        return Decimal(text)
    try:
        return float(text)
    except ValueError:
        return text


def carries_digits(node: exp.Expression, scope: Scope) -> bool:
    """May ``node``'s DECIMAL value hold more digits than its scale? (A quotient inside it,
    or a column that may: MySQL keeps a quotient's extra digits through arithmetic, functions
    and aggregates, and rounds them off where a value is compared, grouped or shown.)"""
    inexact = scope.inexact
    for x in node.walk():
        if isinstance(x, exp.Div):
            return True
        if inexact and isinstance(x, exp.Column):
            try:
                if scope.resolve(x)[0] in inexact:
                    return True
            except Exception:  # noqa: BLE001 - reported where the column is compiled
                continue
    return False


def shown_value(c: Compiled, node: exp.Expression, scope: Scope) -> Compiled:
    """``c`` giving the value as MySQL compares, groups and shows it: a DECIMAL that may hold
    more digits than its scale rounded to it (``c`` itself otherwise). A DOUBLE with fixed
    display decimals (``PI()`` has 6, ``PI() / 2`` 10) is shown, compared and grouped rounded
    to them, as MariaDB does."""
    if c.kind == V.FLOAT and c.scale is not None:
        return _float_shown(c)
    if c.kind != V.DECIMAL or c.scale is None or not carries_digits(node, scope):
        return c
    scale = c.scale
    if c.const:
        v = V.display_round(c.fn(None, None), scale)
        return Compiled(lambda r, p, v=v: v, c.kind, True, None, scale)
    f = c.fn
    out = Compiled(lambda r, p: V.display_round(f(r, p), scale), c.kind, False, None, scale)
    out.faults = c.faults
    return out


def _float_shown(c: Compiled) -> Compiled:
    digits = c.scale
    if c.const:
        v = c.fn(None, None)
        v = round(v, digits) if type(v) is float else v
        return Compiled(lambda r, p, v=v: v, c.kind, True, None, digits)
    f = c.fn

    def shown(r, p):
        v = f(r, p)
        return round(v, digits) if type(v) is float else v

    out = Compiled(shown, c.kind, False, None, digits)
    out.faults = c.faults
    return out


def compile_expr(node: exp.Expression, scope: Scope, allow_params: bool = True) -> Compiled:
    """Compile a scalar expression over ``scope``'s columns."""
    comp = _Compiler(scope, allow_params)
    c = comp.compile(node)
    c.faults = comp.faulty
    if c.kind == V.STR and not c.const and c.col is None and node.find(exp.Anonymous, exp.Interval):
        # a date computed from a string is a string column with a date inside; it leaves the
        # expression as the plain string MySQL sends
        f = c.fn
        tt = _coerce.TemporalText

        def plain(r, p):
            v = f(r, p)
            return str.__str__(v) if type(v) is tt else v

        return Compiled(plain, c.kind, c.const, c.col, c.scale)
    if c.const and type(c.fn(None, None)) is _coerce.TemporalText:
        return _Compiler(scope, allow_params).const_kind(str.__str__(c.fn(None, None)), c.kind)
    return c


# Functions that turn their arguments into text, which shows a DECIMAL at its scale
_SHOWS_ARGUMENTS = {"CONCAT", "CONCAT_WS", "CAST_CHAR", "CAST_BINARY", "LENGTH",
                    "CHAR_LENGTH", "UPPER", "LOWER", "LPAD", "RPAD", "REVERSE", "LEFT", "RIGHT",
                    "SUBSTRING", "REPLACE", "INSTR", "LOCATE", "TRIM", "LTRIM", "RTRIM"}  # fmt: skip

# Integer functions whose result is BIGINT UNSIGNED in MySQL (arithmetic on them is unsigned),
# and those whose result is a small integer (arithmetic on them cannot overflow).
_UNSIGNED_FUNCTIONS = {"CAST_UNSIGNED", "CRC32", "INET_ATON", "UUID_SHORT", "LAST_INSERT_ID",
                       "CONNECTION_ID"}  # fmt: skip
_SMALL_FUNCTIONS = {
    "LENGTH", "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "BIT_LENGTH", "LOCATE", "INSTR",
    "POSITION", "FIELD", "FIND_IN_SET", "ASCII", "SIGN", "BIT_COUNT", "YEAR", "MONTH", "DAY",
    "DAYOFMONTH", "HOUR", "MINUTE", "SECOND", "DAYOFWEEK", "WEEKDAY", "DAYOFYEAR", "WEEK",
    "WEEKOFYEAR", "QUARTER", "YEARWEEK", "TO_DAYS", "DATEDIFF", "STRCMP",
}  # fmt: skip
_SMALL = (-(1 << 40), 1 << 40, False)
_PREDICATE_NODES = (exp.Predicate, exp.Connector, exp.Not, exp.Xor, exp.Is, exp.In, exp.Between)


def _interval(op, ra: tuple, rb: tuple) -> tuple[int, int]:
    """The range of ``a op b`` for a in ``ra``, b in ``rb`` (op: +, -, *)."""
    if op is _add:
        return ra[0] + rb[0], ra[1] + rb[1]
    if op is _sub:
        return ra[0] - rb[1], ra[1] - rb[0]
    ends = [x * y for x in ra[:2] for y in rb[:2]]
    return min(ends), max(ends)


def _folds_as_literal(n: exp.Expression) -> bool:
    """A number literal, possibly negated: MySQL's parser folds its negation into the literal."""
    while isinstance(n, (exp.Neg, exp.Paren)):
        n = n.this
    return isinstance(n, exp.Literal) and not n.is_string


class _Compiler:
    def __init__(self, scope: Scope, allow_params: bool):
        self.scope = scope
        self.allow_params = allow_params
        self.faulty = False  # an operation may raise 1690 on some row

    def compile(self, n: exp.Expression) -> Compiled:
        c = self._compile(n)
        if c.rng is None and c.kind == V.INT and not c.const and isinstance(n, _PREDICATE_NODES):
            c.rng = (0, 1, False)
        inner = n.this if isinstance(n, exp.Escape) else n
        if isinstance(inner, exp.Expression) and inner.args.get("negate"):
            f = c.fn

            def neg(r, p, f=f):
                v = f(r, p)
                if v is None:
                    return None
                return 0 if truthy(v) else 1

            return Compiled(neg, V.INT)
        return c

    def _compile(self, n: exp.Expression) -> Compiled:
        m = getattr(self, "c_" + type(n).__name__, None)
        if m is None:
            if isinstance(n, exp.AggFunc):
                raise Unsupported(f"aggregate {n.sql(DIALECT)} in this position")
            if isinstance(n, exp.Anonymous):
                return self.c_anonymous(n)
            if isinstance(n, (exp.Func, exp.JSONValue)):  # (sqlglot's JSONValue is no Func)
                return self.c_func(n)
            raise Unsupported(f"expression {type(n).__name__}: {n.sql(DIALECT)}")
        return m(n)

    # leaves
    def c_Column(self, n: exp.Column) -> Compiled:
        if isinstance(n.this, exp.Star):
            raise Unsupported("* in an expression")
        i, kind = self.scope.resolve(n)
        if kind.__class__ is V.MemberKind:
            if _member_as_number(n):
                return _member_number(i, kind.ctype)
            member_in_string_context(n, self.scope)

        scales = self.scope.scales
        fsp = scales[i] if scales and kind in (V.DATETIME, V.TIME) else None
        if fsp and _read_as_text(n):
            # a DATETIME(n) or TIME(n) read as a string shows n fraction digits
            return Compiled(_fixed_fraction(i, kind, fsp), kind)

        def fn(r, p, i=i):
            return r[i]

        scale = 0 if kind == V.INT else (scales[i] if scales and kind == V.DECIMAL else None)
        if kind.__class__ is V.FloatKind:
            scale = kind.dec  # FLOAT(M,D): arithmetic on it shows D decimals
        ranges = self.scope.ranges
        rng = ranges[i] if ranges and kind == V.INT else None
        return Compiled(fn, kind, col=i, scale=scale, rng=rng)

    def c_Literal(self, n: exp.Literal) -> Compiled:
        v = literal_value(n)
        return self.const(v)

    def const(self, v) -> Compiled:
        def fn(r, p, v=v):
            return v

        scale = 0 if type(v) is int else (_scale(v) if type(v) is Decimal else None)
        return Compiled(fn, V.kind_of_value(v), const=True, scale=scale)

    def c_HexString(self, n: exp.HexString) -> Compiled:
        raw = V.hex_bytes(str(n.this))
        c = self.const(raw)
        if n.meta.get("hex_number"):  # 0x41 (MariaDB reads X'41' as a string only)
            c.hexnum = int.from_bytes(raw, "big") if raw else 0
        return c

    def c_BitString(self, n: exp.BitString) -> Compiled:
        bits = str(n.this) or "0"
        value = int(bits, 2)
        c = self.const(value.to_bytes(max(1, (len(bits) + 7) // 8), "big"))
        c.hexnum = value
        return c

    def c_Null(self, n) -> Compiled:
        return self.const(None)

    def c_Boolean(self, n: exp.Boolean) -> Compiled:
        return self.const(1 if n.this else 0)

    def c_Placeholder(self, n: exp.Placeholder) -> Compiled:
        if not self.allow_params:
            raise Unsupported("parameter in this position")
        idx = int(str(n.this)[1:]) if n.this and str(n.this).startswith("p") else None
        if idx is None:
            raise Unsupported("named parameter")

        mk = self._member_partner(n)
        if mk is not None:  # compared with an ENUM/SET column: a number is a position

            def member(r, p, idx=idx, mk=mk):
                v = p[idx]
                if v is None or isinstance(v, (str, bytes)):
                    return v
                m = mk.member_for(v)
                return V.NO_MEMBER if m is None else m

            return Compiled(member, V.NULL)

        def fn(r, p, idx=idx):
            return p[idx]

        return Compiled(fn, V.NULL)

    def _member_partner(self, n: exp.Expression):
        """The MemberKind of the ENUM/SET column a parameter is compared with, if any."""
        node, parent = n, n.parent
        while isinstance(parent, exp.Paren):
            node, parent = parent, parent.parent
        other = None
        if isinstance(parent, _COMPARE):
            other = parent.expression if parent.this is node else parent.this
        elif isinstance(parent, (exp.In, exp.Between)) and parent.this is not node:
            other = parent.this
        while isinstance(other, exp.Paren):
            other = other.this
        if not isinstance(other, exp.Column):
            return None
        try:
            kind = self.scope.resolve(other)[1]
        except Exception:  # noqa: BLE001 - the column's own error comes when it is compiled
            return None
        if kind.__class__ is not V.MemberKind:
            return None
        ranged = isinstance(parent, (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between))
        return kind.for_range() if ranged else kind

    def c_Paren(self, n: exp.Paren) -> Compiled:
        return self.compile(n.this)

    def c_Alias(self, n: exp.Alias) -> Compiled:
        return self.compile(n.this)

    # arithmetic
    def _temporal_fsp(self, c: Compiled) -> int | None:
        """A temporal column's declared fraction digits; None when not a column or unknown."""
        scales = self.scope.scales
        if c.col is not None and scales and c.col < len(scales):
            return scales[c.col]
        return None

    def _numeric(self, c: Compiled) -> Compiled:
        """An arithmetic operand: a date, datetime or time becomes the number it spells, a hex
        or bit literal its unsigned integer."""
        if c.hexnum is not None:
            n = self.const(c.hexnum)
            n.rng = (c.hexnum, c.hexnum, True)
            return n
        if c.kind in (V.DATE, V.DATETIME, V.TIME):
            return temporal_number(c, self._temporal_fsp(c))
        return c

    def _bin(self, n, f, kind_fn=None) -> Compiled:
        a = self._numeric(self.compile(n.this))
        b = self._numeric(self.compile(n.expression))
        fa, fb = a.fn, b.fn

        def fn(r, p):
            return f(fa(r, p), fb(r, p))

        kind = kind_fn(a.kind, b.kind) if kind_fn else _fold([a.kind, b.kind])
        if kind == V.STR or (f is not _intdiv_exact and V.STR in (a.kind, b.kind)):
            kind = V.FLOAT  # a string in arithmetic is a DOUBLE, and so is the result
        if f is not _intdiv_exact and (
            isinstance(n.this, exp.Null) or isinstance(n.expression, exp.Null)
        ):
            kind = V.FLOAT  # MySQL types arithmetic with a NULL literal as DOUBLE
        scale = None
        if f is _div:
            if kind == V.DECIMAL and a.scale is not None:
                scale = a.scale + 4
            elif kind == V.FLOAT and a.scale is not None and b.scale is not None:
                scale = min(max(a.scale, b.scale) + 4, 30)  # PI() / 2 shows 10 decimals
        elif a.scale is not None and b.scale is not None:
            # a DOUBLE's display decimals are its operands' most (PI() * PI() shows 6)
            scale = a.scale + b.scale if f is _mul and kind != V.FLOAT else max(a.scale, b.scale)
        if kind == V.INT:
            scale = 0
        if f is _mod or f is _div and kind != V.FLOAT:
            return self._folded(Compiled(fn, kind, scale=scale), n)
        return self._folded(self._checked(n, f, a, b, fn, kind, scale), n)

    def _checked(self, n, f, a: Compiled, b: Compiled, fn, kind: str, scale) -> Compiled:
        """``fn`` raising 1690 when its value leaves BIGINT (UNSIGNED when an operand is) or
        DOUBLE, as MySQL's arithmetic does; unchecked when the operands' ranges rule it out."""
        if kind == V.FLOAT:
            ma, mb = _magnitude(a), _magnitude(b)
            if ma is not None and mb is not None and f in (_add, _sub, _mul):
                bound = ma * mb if f is _mul else ma + mb
                if bound < 1e300:  # operands bounded (integer ranges, constants): no overflow
                    return Compiled(fn, kind, scale=scale)
            self.faulty = True

            def dbl(r, p):
                try:
                    v = fn(r, p)
                except OverflowError:
                    raise out_of_range("DOUBLE", n) from None
                if (v == _INF or v == -_INF) and type(v) is float:
                    raise out_of_range("DOUBLE", n)
                return v

            return Compiled(dbl, kind, scale=scale)
        if kind != V.INT:
            return Compiled(fn, kind, scale=scale)
        ra, rb = int_range(a), int_range(b)
        unsigned = bool(ra and ra[2]) or bool(rb and rb[2])
        lo, hi = (0, U64_MAX) if unsigned else (I64_MIN, I64_MAX)
        if ra is None or rb is None:
            span = None
        elif f is _intdiv_exact:
            m = max(abs(ra[0]), abs(ra[1]))
            span = (-m, m)
        else:
            span = _interval(f, ra, rb)
        if span is not None and lo <= span[0] and span[1] <= hi:
            return Compiled(fn, kind, scale=scale, rng=(span[0], span[1], unsigned))
        self.faulty = True
        what = "BIGINT UNSIGNED" if unsigned else "BIGINT"

        def checked(r, p):
            try:
                v = fn(r, p)
            except OverflowError:  # DIV of DOUBLEs whose quotient is infinite
                raise out_of_range(what, n) from None
            if type(v) is int and not lo <= v <= hi:
                raise out_of_range(what, n)
            return v

        return Compiled(checked, kind, scale=scale, rng=(lo, hi, unsigned))

    def _folded(self, c: Compiled, n) -> Compiled:
        """``c`` computed now when its operands are constants (unless it raises: then on each
        row, as MySQL does, so a query over no rows has no error)."""
        if not all(self._is_const(x) for x in (n.this, n.expression)):
            return c
        from ..errors import DataError

        try:
            v = c.fn(None, None)
        except DataError:
            return c
        out = self.const(v)
        out.kind = c.kind
        out.scale = c.scale if c.scale is not None else out.scale
        return out

    def _is_const(self, x: exp.Expression) -> bool:
        """Is ``x`` a constant MySQL evaluates once (no column, parameter, subquery or
        function whose value may change)?"""
        if x.find(exp.Column, exp.Placeholder, exp.Subquery, exp.Select, exp.Star):
            return False
        for f in x.find_all(exp.Func):
            if isinstance(f, (exp.Cast, exp.Paren)):
                continue
            call = canonical_call(f)
            fn = F.REGISTRY.get(call[0]) if call else None
            if fn is not None and (not fn.deterministic or fn.context):
                return False
        return True

    def c_Add(self, n):
        if isinstance(n.expression, exp.Interval):
            amount, unit = _interval_parts(n.expression)
            return self.call("DATE_ADD", [n.this, amount, exp.Literal.string(unit)])
        if isinstance(n.this, exp.Interval):
            amount, unit = _interval_parts(n.this)
            return self.call("DATE_ADD", [n.expression, amount, exp.Literal.string(unit)])
        return self._bin(n, _add)

    def c_Sub(self, n):
        if isinstance(n.expression, exp.Interval):
            amount, unit = _interval_parts(n.expression)
            return self.call("DATE_SUB", [n.this, amount, exp.Literal.string(unit)])
        return self._bin(n, _sub)

    def c_Mul(self, n):
        return self._bin(n, _mul)

    def c_Div(self, n):
        # a string operand is a DOUBLE, so is the quotient
        return self._bin(
            n, _div, lambda a, b: V.FLOAT if V.FLOAT in (a, b) or V.STR in (a, b) else V.DECIMAL
        )

    def c_IntDiv(self, n):
        return self._bin(n, _intdiv_exact, lambda a, b: V.INT)

    def c_Mod(self, n):
        return self._bin(n, _mod)

    def c_Neg(self, n):
        a = self.compile(n.this)
        if a.hexnum is not None:
            a = self._numeric(a)
        if a.kind in (V.DATE, V.DATETIME, V.TIME):
            # MySQL negates a temporal value as a DECIMAL: -TIME '00:02:03' is 203
            t = temporal_number(a, self._temporal_fsp(a))
            ft = t.fn

            def neg_temporal(r, p):
                v = ft(r, p)
                return None if v is None else _nz(-Decimal(v))

            return Compiled(neg_temporal, V.DECIMAL, const=a.const, scale=t.scale or 0)
        fa = a.fn
        v = None
        if not a.const and a.kind == V.INT and self._is_const(n.this):
            from ..errors import DataError

            try:
                v = fa(None, None)
            except DataError:
                v = None
        if a.const or type(v) is int:
            v = fa(None, None) if a.const else v
            if type(v) is int:
                # MySQL folds the negation of a literal into it (a DECIMAL when it leaves
                # BIGINT); a constant otherwise is negated as a DECIMAL when it is negative or
                # beyond BIGINT (its unsigned reading is at least 2^63)
                big = (
                    not I64_MIN <= -v <= I64_MAX
                    if _folds_as_literal(n.this)
                    else v < 0 or v > I64_MAX
                )
                if big:
                    c = self.const(Decimal(-v))
                    c.scale = 0
                    return c
            c = self.const(_neg(v))
            # MySQL types the negation of NULL or of a string as DOUBLE
            c.kind = (
                V.FLOAT
                if isinstance(n.this, exp.Null) or a.kind == V.STR or a.kind == V.FLOAT
                else a.kind
            )  # (-f of a FLOAT column f is a DOUBLE)
            return c
        ra = int_range(a)
        if a.kind == V.INT and ra is not None and I64_MIN <= -ra[1] and -ra[0] <= I64_MAX:
            return Compiled(
                lambda r, p: _neg(fa(r, p)), a.kind, scale=a.scale, rng=(-ra[1], -ra[0], False)
            )
        if a.kind not in (V.INT, V.FLOAT) and a.kind != V.NULL and a.kind != V.STR:
            return Compiled(lambda r, p: _neg(fa(r, p)), a.kind, scale=a.scale)
        self.faulty = True

        def neg(r, p):
            v = _neg(fa(r, p))
            if type(v) is int and not I64_MIN <= v <= I64_MAX:
                raise out_of_range("BIGINT", n)
            return v

        kind = V.FLOAT if a.kind == V.STR or a.kind == V.FLOAT else a.kind
        return Compiled(neg, kind, scale=a.scale, rng=SIGNED if a.kind == V.INT else None)

    # comparison
    def shown(self, c: Compiled, node: exp.Expression) -> Callable:
        return shown_value(c, node, self.scope).fn

    def _cmp(self, n, f) -> Compiled:
        a = self.compile(n.this)
        b = self.compile(n.expression)
        # a hex or bit literal against a number compares as its number, else as bytes
        if a.hexnum is not None and b.kind in _NUMBER_KINDS:
            a = self._numeric(a)
        if b.hexnum is not None and a.kind in _NUMBER_KINDS:
            b = self._numeric(b)
        a, b = self._literal_bytes_as_text(a, b, n.this, n.expression)
        fa, fb = self.shown(a, n.this), self.shown(b, n.expression)
        a_dt = a.kind in (V.DATE, V.DATETIME)
        b_dt = b.kind in (V.DATE, V.DATETIME)
        if a_dt and b.const:
            bv = self._to_temporal(fb(None, None), a.kind)
            return Compiled(lambda r, p: f(fa(r, p), bv), V.INT)
        if b_dt and a.const:
            av = self._to_temporal(fa(None, None), b.kind)
            return Compiled(lambda r, p: f(av, fb(r, p)), V.INT)
        # a DECIMAL against a string constant compares as DECIMAL (the constant converted,
        # as MySQL converts a constant to the other side's type), not as DOUBLE
        if a.kind == V.DECIMAL and not a.const and b.const and type(fb(None, None)) is str:
            bv = _coerce.to_decimal(fb(None, None))
            return Compiled(lambda r, p: f(fa(r, p), bv), V.INT)
        if b.kind == V.DECIMAL and not b.const and a.const and type(fa(None, None)) is str:
            av = _coerce.to_decimal(fa(None, None))
            return Compiled(lambda r, p: f(av, fb(r, p)), V.INT)
        # an integer column against a DOUBLE constant with an integral value compares as
        # integers, as MySQL converts such a constant (BIGINT 2^53 + 1 is not 2^53e0)
        if a.kind == V.INT and not a.const and b.const and _integral_double(fb(None, None)):
            bi = int(fb(None, None))
            return Compiled(lambda r, p: f(fa(r, p), bi), V.INT)
        if b.kind == V.INT and not b.const and a.const and _integral_double(fa(None, None)):
            ai = int(fa(None, None))
            return Compiled(lambda r, p: f(ai, fb(r, p)), V.INT)
        if a.kind == V.STR and b.kind in _NUMBER_KINDS and not a.const:
            # a string against a NULL number: MySQL reads the string as a number first (then
            # finds the NULL), so under strict evaluation a string that is not one is an error
            named = "DECIMAL" if b.kind == V.INT else "DOUBLE"

            def first_read(r, p):
                x = fa(r, p)
                y = fb(r, p)
                if y is None and _STRICT.on and type(x) is str:
                    V.check_number_text(x, named)
                return f(x, y)

            return Compiled(first_read, V.INT)
        return Compiled(lambda r, p: f(fa(r, p), fb(r, p)), V.INT)

    def _literal_bytes_as_text(
        self, a: Compiled, b: Compiled, na: exp.Expression, nb: exp.Expression
    ) -> tuple[Compiled, Compiled]:
        """A binary string literal (``_binary'A'``, ``0x41``, ``b'..'``) against a string
        column takes the column's collation (``s = 0x626f62`` finds 'BOB', ``s LIKE
        _binary'A%'`` finds 'abc': the column's coercibility wins over a literal's); against
        another literal or a binary column, and as ``BINARY 'x'`` or ``CAST(.. AS BINARY)``
        (not literals: their coercibility is the column's), it compares as bytes."""
        if _bytes_literal(na, a) and b.kind == V.STR and not b.const:
            a = self._as_text(a)
        if _bytes_literal(nb, b) and a.kind == V.STR and not a.const:
            b = self._as_text(b)
        literals = getattr(self.scope, "literals", None)
        if literals:
            # a derived table's column of a literal's coercibility keeps it
            if a.kind == V.BYTES and a.col in literals and b.kind == V.STR and not b.const:
                a = _text_of(a)
            if b.kind == V.BYTES and b.col in literals and a.kind == V.STR and not a.const:
                b = _text_of(b)
        return a, b

    def _as_text(self, c: Compiled) -> Compiled:
        v = c.fn(None, None)
        return self.const(bytes(v).decode("utf-8", "replace") if v is not None else None)

    @staticmethod
    def _to_temporal(v, kind):
        if isinstance(v, str):
            p = V.parse_datetime(v) if kind == V.DATETIME else V.parse_date(v)
            if p is None and kind == V.DATE:
                dt = V.parse_datetime(v)
                return dt if dt is not None else v
            return p if p is not None else v
        return v

    def c_EQ(self, n):
        return self._cmp(n, _eq)

    def c_NEQ(self, n):
        return self._cmp(n, _ne)

    def c_LT(self, n):
        return self._cmp(n, _lt)

    def c_LTE(self, n):
        return self._cmp(n, _le)

    def c_GT(self, n):
        return self._cmp(n, _gt)

    def c_GTE(self, n):
        return self._cmp(n, _ge)

    def c_NullSafeEQ(self, n):
        return self._cmp(n, _nullsafe_eq)

    def c_NullSafeNEQ(self, n):
        return self._cmp(n, lambda a, b: 1 - _nullsafe_eq(a, b))

    # logic
    def c_And(self, n):
        fa = self.compile(n.this).fn
        fb = self.compile(n.expression).fn

        def fn(r, p):
            a = fa(r, p)
            if a is not None and not truthy(a):
                return 0
            b = fb(r, p)
            if b is not None and not truthy(b):
                return 0
            if a is None or b is None:
                return None
            return 1

        return Compiled(fn, V.INT)

    def c_Or(self, n):
        fa = self.compile(n.this).fn
        fb = self.compile(n.expression).fn

        def fn(r, p):
            a = fa(r, p)
            if a is not None and truthy(a):
                return 1
            b = fb(r, p)
            if b is not None and truthy(b):
                return 1
            if a is None or b is None:
                return None
            return 0

        return Compiled(fn, V.INT)

    def c_Xor(self, n):
        fa = self.compile(n.this).fn
        fb = self.compile(n.expression).fn

        def fn(r, p):
            a = fa(r, p)
            b = fb(r, p)
            if a is None or b is None:
                return None
            return 1 if truthy(a) != truthy(b) else 0

        return Compiled(fn, V.INT)

    def c_Not(self, n):
        fa = self.compile(n.this).fn

        def fn(r, p):
            a = fa(r, p)
            if a is None:
                return None
            return 0 if truthy(a) else 1

        return Compiled(fn, V.INT)

    def c_Is(self, n: exp.Is):
        fa = self.compile(n.this).fn
        target = n.expression
        if isinstance(target, exp.Null):
            return Compiled(lambda r, p: 1 if fa(r, p) is None else 0, V.INT)
        if isinstance(target, exp.Boolean):
            want = bool(target.this)
            return Compiled(
                lambda r, p: 1 if (fa(r, p) is not None and truthy(fa(r, p)) == want) else 0,
                V.INT,
            )
        raise Unsupported("IS with " + target.sql())

    def c_In(self, n: exp.In):
        if n.args.get("query") or n.args.get("unnest") or n.args.get("field"):
            raise Unsupported("IN with a subquery")
        fa = self.compile(n.this)
        if fa.kind == V.DECIMAL:
            fa = Compiled(self.shown(fa, n.this), fa.kind, fa.const, None, fa.scale)
        items = [self.compile(e) for e in n.expressions]
        if fa.kind == V.STR and not fa.const:  # s IN (_binary'a'): the column's collation
            items = [
                self._as_text(it) if _bytes_literal(e, it) else it
                for e, it in zip(n.expressions, items)
            ]
        if fa.hexnum is not None and items and all(it.kind in _NUMBER_KINDS for it in items):
            fa = self._numeric(fa)  # 0x41 IN (65): compared as its number
        if fa.kind in _NUMBER_KINDS:
            items = [self._numeric(it) if it.hexnum is not None else it for it in items]
        if fa.kind in (V.DATE, V.DATETIME):
            items = [
                self.const(self._to_temporal(it.fn(None, None), fa.kind)) if it.const else it
                for it in items
            ]
        if all(it.const for it in items):
            consts = [it.fn(None, None) for it in items]
            if (
                fa.kind == V.DECIMAL
                and not fa.const
                and consts
                and all(type(c) is str or c is None for c in consts)
            ):  # string constants against a DECIMAL: DECIMALs (a mixed list: DOUBLE)
                consts = [None if c is None else _coerce.to_decimal(c) for c in consts]
            has_null = any(c is None for c in consts)
            nonnull = [c for c in consts if c is not None]
            all_int = all(type(c) is int for c in nonnull)
            all_str = all(type(c) is str for c in nonnull)
            cset = None
            if all_int:
                cset = frozenset(nonnull)
            elif all_str:
                cset = frozenset(_ck(c) for c in nonnull)  # under the collation
            f0 = fa.fn
            ckind = type(nonnull[0]) if nonnull else None

            def fn(r, p):
                v = f0(r, p)
                if v is None:
                    return None
                if cset is not None and type(v) is ckind:
                    if (v if ckind is int else _ck(v)) in cset:
                        return 1
                    return None if has_null else 0
                for c in nonnull:
                    if _eq(v, c) == 1:
                        return 1
                return None if has_null else 0

            return Compiled(fn, V.INT)
        fs = [it.fn for it in items]
        f0 = fa.fn

        def fn2(r, p):
            v = f0(r, p)
            if v is None:
                return None
            seen_null = False
            for f in fs:
                c = f(r, p)
                if c is None:
                    seen_null = True
                elif _eq(v, c) == 1:
                    return 1
            return None if seen_null else 0

        return Compiled(fn2, V.INT)

    def c_Between(self, n: exp.Between):
        x = self.compile(n.this)
        x, lo = self._literal_bytes_as_text(x, self.compile(n.args["low"]), n.this, n.args["low"])
        x, hi = self._literal_bytes_as_text(x, self.compile(n.args["high"]), n.this, n.args["high"])
        fx, fl, fh = x.fn, lo.fn, hi.fn
        if x.kind in (V.DATE, V.DATETIME):
            if lo.const:
                lv = self._to_temporal(fl(None, None), x.kind)
                fl = lambda r, p, lv=lv: lv  # noqa: E731
            if hi.const:
                hv = self._to_temporal(fh(None, None), x.kind)
                fh = lambda r, p, hv=hv: hv  # noqa: E731
        kinds = {x.kind, lo.kind, hi.kind} - {V.NULL}
        if (
            kinds & {V.INT, V.DECIMAL}
            and kinds <= {V.INT, V.DECIMAL, V.FLOAT, V.STR}
            and kinds & {V.FLOAT, V.STR}
        ):
            # MySQL compares the three as one type: a DOUBLE or a string among numbers makes
            # it DOUBLE (an exact bound must not decide alone)
            fx, fl, fh = (lambda r, p, f=f: _coerce.to_float(f(r, p)) for f in (fx, fl, fh))

        def fn(r, p):
            v = fx(r, p)
            a = _ge(v, fl(r, p))
            b = _le(v, fh(r, p))
            if a == 0 or b == 0:
                return 0
            if a is None or b is None:
                return None
            return 1

        return Compiled(fn, V.INT)

    @staticmethod
    def _collated(this: exp.Expression):
        """(operand, collation) of LIKE's left side: ``x COLLATE c`` is matched under c."""
        if not isinstance(this, exp.Collate):
            return this, None
        from . import collation as _C

        name = this.expression.name if hasattr(this.expression, "name") else str(this.expression)
        try:
            return this.this, _C.get(name)
        except KeyError:
            raise Unsupported(f"COLLATE {name}") from None

    def c_Like(self, n: exp.Like):
        this, coll = self._collated(n.this)
        value, pat = self._literal_bytes_as_text(
            self.compile(this), self.compile(n.expression), this, n.expression
        )
        fa = value.fn
        if coll is None and V.BYTES in (value.kind, pat.kind):
            from . import collation as _C

            coll = _C.get("binary")  # a binary string on either side: bytes compare as bytes
        if coll is not None and not pat.const:
            raise Unsupported(f"LIKE with a pattern that is not constant under COLLATE {coll.name}")
        if pat.const:
            pv = pat.fn(None, None)
            if pv is None:
                return Compiled(lambda r, p: None, V.INT)
            m = like_matcher(_str(pv), coll=coll)

            def fn(r, p):
                v = fa(r, p)
                if v is None:
                    return None
                return 1 if m(v if isinstance(v, str) else _str(v)) else 0

            return Compiled(fn, V.INT)
        fp = pat.fn
        return Compiled(lambda r, p: _like(fa(r, p), fp(r, p)), V.INT)

    def c_Escape(self, n: exp.Escape):
        """``v LIKE pattern ESCAPE e``: ``e`` (one character; empty or NULL: the backslash, as
        MariaDB reads it; longer: 1210) quotes a ``%`` or ``_`` in the pattern. The pattern and
        the escape may be parameters."""
        like = n.this
        if not isinstance(like, exp.Like):
            raise Unsupported("ESCAPE")
        this, coll = self._collated(like.this)
        esc = self.compile(n.expression)
        value, pat = self._literal_bytes_as_text(
            self.compile(this), self.compile(like.expression), this, like.expression
        )
        fa = value.fn
        if coll is None and V.BYTES in (value.kind, pat.kind):
            from . import collation as _C

            coll = _C.get("binary")  # a binary string on either side: bytes compare as bytes
        if esc.const and pat.const:
            pv = pat.fn(None, None)
            if pv is None:
                return Compiled(lambda r, p: None, V.INT)
            m = like_matcher(_str(pv), _escape_char(esc.fn(None, None)), coll=coll)

            def fn(r, p):
                v = fa(r, p)
                return None if v is None else (1 if m(_str(v)) else 0)

            return Compiled(fn, V.INT)
        fp, fe = pat.fn, esc.fn
        seen: dict = {}

        def per_row(r, p):
            v = fa(r, p)
            pv = fp(r, p)
            if v is None or pv is None:
                return None
            key = (_str(pv), _escape_char(fe(r, p)))
            m = seen.get(key)
            if m is None:
                if len(seen) > 1000:
                    seen.clear()
                m = seen[key] = like_matcher(key[0], key[1], coll=coll)
            return 1 if m(_str(v)) else 0

        return Compiled(per_row, V.INT)

    def c_ILike(self, n):
        return self.c_Like(n)

    # conditionals
    def c_Case(self, n: exp.Case):
        base = self.compile(n.this) if n.this else None
        ifs = [(self.compile(i.this), self.compile(i.args["true"])) for i in n.args["ifs"]]
        default = self.compile(n.args["default"]) if n.args.get("default") else None
        pairs = [(c.fn, t.fn) for c, t in ifs]
        fd = default.fn if default else None
        if base is not None:
            fb = base.fn

            def fn(r, p):
                v = fb(r, p)
                for c, t in pairs:
                    if _eq(v, c(r, p)) == 1:
                        return t(r, p)
                return fd(r, p) if fd else None

        else:

            def fn(r, p):
                for c, t in pairs:
                    if truthy(c(r, p)):
                        return t(r, p)
                return fd(r, p) if fd else None

        branch = [t for _, t in ifs] + ([default] if default else [])
        nodes = [i.args["true"] for i in n.args["ifs"]] + ([n.args["default"]] if default else [])
        # (the NULL of a CASE without ELSE is no argument: it leaves an unsigned type alone)
        return _unified(fn, branch, nodes=nodes)

    def c_If(self, n: exp.If):
        c = self.compile(n.this).fn
        t = self.compile(n.args["true"])
        f = self.compile(n.args["false"]) if n.args.get("false") else self.const(None)
        ft, ff = t.fn, f.fn
        out = _unified(
            lambda r, p: ft(r, p) if truthy(c(r, p)) else ff(r, p),
            [t, f],
            signed_nulls=False,
            nodes=[n.args["true"], n.args.get("false") or exp.Null()],
        )
        if out.kind == V.NULL:
            # MySQL types an IF of two NULLs as a string (a UNION or COALESCE beside it is
            # text), where a CASE of NULLs stays a NULL
            out.kind = V.STR
        return out

    def c_Coalesce(self, n: exp.Coalesce):
        parts = [self.compile(n.this)] + [self.compile(e) for e in n.expressions]
        fs = [c.fn for c in parts]

        def fn(r, p):
            for f in fs:
                v = f(r, p)
                if v is not None:
                    return v
            return None

        out = _unified(fn, parts, nodes=[n.this, *n.expressions])
        if out.kind == V.INT:
            # the value is one of the arguments': its range spans theirs (COALESCE(count, 0)
            # stays non-negative, so subtracting two of them cannot overflow)
            ranges = [int_range(c) for c in parts if c.kind != V.NULL]
            if ranges and all(r is not None for r in ranges):
                out.rng = (
                    min(r[0] for r in ranges),
                    max(r[1] for r in ranges),
                    all(r[2] for r in ranges),
                )
        return out

    def c_Nullif(self, n):
        a, b = self._literal_bytes_as_text(
            self.compile(n.this), self.compile(n.expression), n.this, n.expression
        )
        fa, fb = a.fn, b.fn
        return Compiled(lambda r, p: _nullif(fa(r, p), fb(r, p)), a.kind)

    # functions
    def c_Concat(self, n):
        return self.call("CONCAT", list(n.expressions))

    def c_ConcatWs(self, n):
        return self.call("CONCAT_WS", list(n.expressions))

    def c_DPipe(self, n):
        # MySQL parses || as OR unless PIPES_AS_CONCAT; sqlglot gives DPipe for it.
        return self.c_Or(n)

    def c_Cast(self, n: exp.Cast):
        call = cast_call(n)
        if call is None:
            raise Unsupported(f"CAST to {n.to.sql(DIALECT)}")
        return self.call(*call)

    def c_func(self, n: exp.Func) -> Compiled:
        call = canonical_call(n)
        if call is None:
            raise Unsupported(f"function {n.sql(DIALECT)}")
        return self.call(*call)

    def c_anonymous(self, n: exp.Anonymous) -> Compiled:
        name = str(n.this).upper()
        if name in F.AGGREGATES:
            raise Unsupported(f"aggregate {name} in this position")
        if name == "FIND_IN_SET" and len(n.expressions) == 2:
            member = self._find_in_set_member(*n.expressions)
            if member is not None:
                return member
        call = canonical_call(n)
        return self.call(*call)

    def _find_in_set_member(self, needle: exp.Expression, haystack: exp.Expression):
        """``FIND_IN_SET(<constant>, <SET column>)``: MySQL reads it from the column's bit
        mask, so a constant naming a member answers with that member's place among the
        column's declared members (when the row holds it), not with its place in the row's
        text: ``FIND_IN_SET('k', s)`` of ``SET('q','b','k')`` holding ``'q,k'`` is 3. Computed
        as ``SIGN(FIND_IN_SET(c, s)) * FIND_IN_SET(c, '<the members>')``; None for any other
        call (a column or a subquery as the first argument: the plain function)."""
        col = haystack
        while isinstance(col, exp.Paren):
            col = col.this
        if not isinstance(col, exp.Column) or needle.find(
            exp.Column, exp.Subquery, exp.Select, exp.AggFunc
        ):
            return None
        try:
            kind = self.scope.resolve(col)[1]
        except Exception:  # noqa: BLE001 - the column's own error comes when it is compiled
            return None
        if kind.__class__ is not V.MemberKind or kind.ctype.mysql_name != "SET":
            return None
        held = self.call("FIND_IN_SET", [needle, haystack]).fn
        members = exp.Literal.string(",".join(kind.ctype.values))
        place = self.call("FIND_IN_SET", [needle, members]).fn

        def fn(r, p):
            v = held(r, p)
            return place(r, p) if v else v  # (0 or NULL as the plain function answers)

        return Compiled(fn, V.INT, rng=_SMALL)

    def call(self, name: str, args: list[exp.Expression]) -> Compiled:
        """A call of the MySQL function ``name`` (from the registry) on ``args``."""
        fn = lookup_function(name, len(args))
        if not self.allow_params and (not fn.deterministic or fn.context):
            raise Unsupported(f"{name}() is not deterministic")
        coll = None
        if fn.collation and any(isinstance(a, exp.Collate) for a in args):
            coll, args = argument_collation(args, lambda a: self.compile(a).kind, name)
        comps = [self.compile(a) for a in args]
        if name in _NUMERIC_ARGUMENTS and not (
            name in ("GREATEST", "LEAST") and any(c.kind == V.STR for c in comps)
        ):  # (GREATEST('abc', 0x41) compares strings: the hex literal is one there)
            comps = [self._numeric(c) if c.hexnum is not None else c for c in comps]
        elif any(c.kind == V.STR and not c.const for c in comps):
            # a binary string literal beside a string column takes its character set:
            # CONCAT(s, 0x21) is text (CONCAT(0x41) alone stays binary)
            comps = [self._as_text(c) if _bytes_literal(a, c) else c for c, a in zip(comps, args)]
        kinds = [c.kind for c in comps]
        if name in _SHOWS_ARGUMENTS:  # a DECIMAL turned into text is shown at its scale
            comps = [
                Compiled(self.shown(c, a), c.kind, c.const, None, c.scale)
                if c.kind == V.DECIMAL or (c.kind == V.FLOAT and c.scale is not None)
                else c
                for c, a in zip(comps, args)
            ]
        consts = [c.fn(None, None) if c.const else F.NOT_CONST for c in comps]
        kind = fn.result_kind(kinds, consts)
        if name in ("GREATEST", "LEAST") and kind == V.INT:
            signs = {bool((int_range(c) or SIGNED)[2]) for c in comps if c.kind == V.INT}
            if len(signs) > 1:
                kind = V.DECIMAL  # a signed beside an unsigned integer, as MySQL merges them
        call = bind_function(fn, coll)
        if name in ("GREATEST", "LEAST"):
            call = _minmax_reads(call, kind)
        if kind == V.FLOAT and fn.ret.__class__ is not V.FloatKind:  # (CAST_FLOAT's is)
            floats = [k for k in kinds if k.__class__ is V.FloatKind]
            if floats and name in _RETURNS_ARGUMENT and all(floats[0].same(k) for k in kinds):
                kind = floats[0]  # GREATEST(f, f) is a FLOAT as f is
            elif floats:
                kind = V.FLOAT  # ABS(f), GREATEST(f, 0): a DOUBLE
                call = _plain_floats(call)
        if kind == V.DECIMAL:
            inner = call

            def call(*a, inner=inner):  # a DECIMAL function may compute an integer
                v = inner(*a)
                return Decimal(v) if type(v) is int else v

        fs = [c.fn for c in comps]
        if fn.deterministic and not fn.context and all(c.const for c in comps):
            v = call(*consts)
            c = self.const_kind(v, kind)
            c.scale = _scale(v) if type(v) is Decimal else (0 if type(v) is int else None)
            typed = _result_scale(name, comps, kind) if type(v) in (Decimal, float) else None
            if typed is not None and c.scale is not None and typed < c.scale:
                c.scale = typed  # ABS(0.5 / 1): the quotient's type, not its inner digits
            elif type(v) is float and kind == V.FLOAT:
                c.scale = typed  # PI(): a DOUBLE shown with 6 decimals
            if name in _UNSIGNED_FUNCTIONS and (type(v) is int or v is None):
                c.rng = (v or 0, v or 0, True)  # (CAST(NULL AS UNSIGNED) is unsigned too)
            return c
        scale = _result_scale(name, comps, kind)
        c = self._call_closure(call, fs, kind, scale)
        if kind == V.INT:
            c.rng = (
                UNSIGNED
                if name in _UNSIGNED_FUNCTIONS
                else _SMALL
                if name in _SMALL_FUNCTIONS
                else None
            )
            if name == "CAST_SIGNED" and comps[0].kind == V.INT:
                r = int_range(comps[0])  # a signed integer keeps its value, so its range
                if r is not None and r[1] <= I64_MAX:
                    c.rng = (r[0], r[1], False)
        return c

    @staticmethod
    def _call_closure(call, fs: list, kind: str, scale) -> Compiled:
        n = len(fs)
        if n == 0:
            return Compiled(lambda r, p: call(), kind, scale=scale)
        if n == 1:
            f0 = fs[0]
            return Compiled(lambda r, p: call(f0(r, p)), kind, scale=scale)
        if n == 2:
            f0, f1 = fs
            return Compiled(lambda r, p: call(f0(r, p), f1(r, p)), kind, scale=scale)
        if n == 3:
            f0, f1, f2 = fs
            return Compiled(lambda r, p: call(f0(r, p), f1(r, p), f2(r, p)), kind, scale=scale)
        return Compiled(lambda r, p: call(*[f(r, p) for f in fs]), kind, scale=scale)

    def const_kind(self, v, kind: str) -> Compiled:
        def fn(r, p, v=v):
            return v

        return Compiled(fn, kind, const=True)

    # bit operators: 64-bit unsigned, as in MySQL
    def _bits(self, n, op, shift: bool = False) -> Compiled:
        fa = self._numeric(self.compile(n.this)).fn
        fb = self._numeric(self.compile(n.expression)).fn
        right = "INTEGER" if shift else "DECIMAL"  # a shift reads its count as an integer

        def fn(r, p):
            a, b = fa(r, p), fb(r, p)
            if a is None or b is None:
                if _STRICT.on:  # MySQL reads both operands as numbers before the NULL wins
                    if type(a) in (str, bytes):
                        V.check_number_text(a, "DECIMAL")
                    if type(b) in (str, bytes):
                        V.check_number_text(b, right)
                return None
            return op(_u64(a), _u64(b)) & _U64

        return Compiled(fn, V.INT, rng=UNSIGNED)

    def c_BitwiseAnd(self, n):
        return self._bits(n, _op.and_)

    def c_BitwiseOr(self, n):
        return self._bits(n, _op.or_)

    def c_BitwiseXor(self, n):
        return self._bits(n, _op.xor)

    def c_BitwiseLeftShift(self, n):
        return self._bits(n, lambda a, b: a << b if b < 64 else 0, shift=True)

    def c_BitwiseRightShift(self, n):
        return self._bits(n, lambda a, b: a >> b if b < 64 else 0, shift=True)

    def c_BitwiseNot(self, n):
        fa = self._numeric(self.compile(n.this)).fn

        def fn(r, p):
            a = fa(r, p)
            return None if a is None else (~_u64(a)) & _U64

        return Compiled(fn, V.INT, rng=UNSIGNED)

    def c_Collate(self, n: exp.Collate):
        from . import collation as _C

        name = n.expression.name if hasattr(n.expression, "name") else str(n.expression)
        try:
            same = _C.get(name).name == _C.current().name
        except KeyError:
            same = False
        if not same:
            # another collation than the one the dataflow keys by: base storage compares it
            raise Unsupported(f"COLLATE {name}")
        return self.compile(n.this)


_U64 = (1 << 64) - 1


def _result_scale(name: str, args: list[Compiled], kind: str) -> int | None:
    """The DECIMAL scale of a function's result where MySQL's rule is simple, else None."""
    if kind == V.INT:
        return 0
    if kind == V.FLOAT:
        return _float_decimals(name, args)
    if kind != V.DECIMAL:
        return None
    scales = [a.scale for a in args]
    if name in ("ABS", "CAST_SIGNED", "CAST_UNSIGNED") and scales:
        return scales[0]
    if name in ("GREATEST", "LEAST", "MOD") and all(s is not None for s in scales):
        return max(scales)
    if name in ("CEIL", "CEILING", "FLOOR"):
        return 0
    if name in ("ROUND", "TRUNCATE"):
        if len(args) == 1:
            return 0
        if args[1].const:
            d = args[1].fn(None, None)
            if isinstance(d, int):
                return max(0, min(d, 38))
        return None
    if name == "CAST_DECIMAL" and len(args) >= 3 and args[2].const:
        return args[2].fn(None, None)
    return None


def _float_decimals(name: str, args: list[Compiled]) -> int | None:
    """A DOUBLE function's fixed display decimals, as MariaDB types them (None: not fixed)."""
    if name == "PI":
        return 6
    scales = [a.scale for a in args]
    if name in ("ABS", "GREATEST", "LEAST") and scales and all(s is not None for s in scales):
        return max(scales)
    if name in ("ROUND", "TRUNCATE") and len(args) == 2 and scales[0] is not None:
        if args[1].const:
            d = args[1].fn(None, None)
            if isinstance(d, int):
                return max(0, min(d, 30))
    return None


def _u64(v) -> int:
    """A value as BIT operators see it: an unsigned 64-bit integer."""
    from .functions.coerce import to_bits

    return to_bits(v)


def unknown_function(name: str) -> Exception:
    from ..errors import ProgrammingError

    return ProgrammingError(f"FUNCTION {name.lower()} does not exist", 1305, "42000")


def lookup_function(name: str, nargs: int) -> F.Fn:
    """The registered function ``name``; 1305 if unknown, 1582 on a wrong argument count."""
    F.load_all()
    fn = F.REGISTRY.get(name.upper())
    if fn is None:
        raise unknown_function(name)
    if nargs < fn.min_args or (fn.max_args is not None and nargs > fn.max_args):
        from ..errors import ProgrammingError

        raise ProgrammingError(
            f"Incorrect parameter count in the call to native function '{name.upper()}'",
            1582,
            "42000",
        )
    return fn


def argument_collation(args: list, kinds, name: str) -> tuple:
    """(collation, arguments) of a string function whose arguments carry collations
    (``STRCMP(a COLLATE utf8mb4_bin, c)``: a column with its own collation, as base storage
    writes it). MySQL compares under the one collation they share; where a _bin collation meets
    another column's, under the _bin one; another mix of two columns' collations is 1267.
    ``kinds(e)``: an argument's kind (a string column without a wrapper has the default
    collation)."""
    from ..errors import ER_CANT_AGGREGATE_2COLLATIONS, ProgrammingError
    from . import collation as _C

    plain = [a.this if isinstance(a, exp.Collate) else a for a in args]
    default = _C.current().name.lower()
    distinct = []  # in the arguments' order, as MySQL names them
    for a in args:
        n = None
        if isinstance(a, exp.Collate):
            e = a.expression
            n = (e.name if hasattr(e, "name") else str(e)).lower()
        elif a.find(exp.Column) is not None and kinds(a) == V.STR:
            n = default
        if n is not None and n not in distinct:
            distinct.append(n)
    binary = [n for n in distinct if n.endswith("_bin") or n == "binary"]
    if len(distinct) == 1:
        chosen = distinct[0]
    elif len(binary) == 1:
        chosen = binary[0]
    else:
        a, b = distinct[0], distinct[1]
        raise ProgrammingError(
            f"Illegal mix of collations ({a},IMPLICIT) and ({b},IMPLICIT) for operation "
            f"'{name.lower()}'",
            ER_CANT_AGGREGATE_2COLLATIONS,
            "HY000",
        )
    try:
        return _C.get(chosen), plain
    except KeyError:
        raise Unsupported(f"COLLATE {chosen}") from None


def bind_function(fn: F.Fn, coll=None) -> Callable:
    """``fn.impl`` with NULL propagation, the session context and the collation bound in
    (``coll``: the arguments' own, else the session's).

    A call that fails on its input gives NULL, as MySQL does (with a warning); a
    ``FunctionError`` is a MySQL error and surfaces as one."""
    impl = fn.impl
    strict = fn.strict
    name = fn.name
    temporal = name in _TEMPORAL_READS
    if fn.context or fn.collation:
        from .. import sql as _sql  # noqa: F401
        from . import collation as _coll

        def call(*a):
            if strict and None in a:
                return None
            kw = {}
            if fn.collation:
                kw["coll"] = coll or _coll.get(F.current_context().collation)
            try:
                if fn.context:
                    r = impl(F.current_context(), *a, **kw)
                else:
                    r = impl(*a, **kw)
            except F.FunctionError as e:
                raise _function_error(e) from None
            except (ValueError, TypeError, ArithmeticError, OverflowError, IndexError):
                r = None
            if temporal and _STRICT.on:
                _strict_temporal(name, a)
            return r

        return call

    reads = _NULL_STILL_READS.get(fn.name)

    def plain(*a):
        if strict and None in a:
            if reads is not None and _STRICT.on:
                # MySQL reads every argument as a number before it finds the NULL: under
                # strict evaluation a string that is not one is an error all the same
                for i, v in enumerate(a):
                    if isinstance(v, (str, bytes)):
                        V.check_number_text(v, reads[min(i, len(reads) - 1)])
            return None
        try:
            r = impl(*a)
        except F.FunctionError as e:
            raise _function_error(e) from None
        except (ValueError, TypeError, ArithmeticError, OverflowError, IndexError):
            r = None
        if temporal and _STRICT.on:
            _strict_temporal(name, a)
        return r

    return plain


def _function_error(e: F.FunctionError) -> Exception:
    from ..errors import DataError

    return DataError(str(e), e.errno, e.sqlstate)


def _unit(node: exp.Expression | None) -> str:
    if node is None:
        return "DAY"
    if isinstance(node, (exp.Var, exp.Column, exp.Identifier)):
        return node.name.upper()
    if isinstance(node, exp.Literal):
        return str(node.this).upper()
    return node.sql(DIALECT).upper()


def _interval_parts(iv: exp.Interval) -> tuple[exp.Expression, str]:
    return iv.this, _unit(iv.args.get("unit"))


_TRIM_FN = {"LEADING": "TRIM_LEADING", "TRAILING": "TRIM_TRAILING", "BOTH": "TRIM_BOTH"}

_UNIT_FIRST = {"TIMESTAMPDIFF", "TIMESTAMPADD"}
_DATE_ARITH = {"DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE"}


def _json_path(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.JSONPath):
        text = node.sql(DIALECT)
        if len(text) >= 2 and text[0] == text[-1] == "'":
            text = text[1:-1].replace("''", "'")
        return exp.Literal.string(text)
    return node


_CAST_NAMES = {
    "BIGINT": "CAST_SIGNED",
    "INT": "CAST_SIGNED",
    "UBIGINT": "CAST_UNSIGNED",
    "UINT": "CAST_UNSIGNED",
    "CHAR": "CAST_CHAR",
    "NCHAR": "CAST_CHAR",
    "VARCHAR": "CAST_CHAR",
    "NVARCHAR": "CAST_CHAR",
    "TEXT": "CAST_CHAR",
    "CHARACTER_SET": "CAST_CHAR",
    "BINARY": "CAST_BINARY",
    "VARBINARY": "CAST_BINARY",
    "DECIMAL": "CAST_DECIMAL",
    "DOUBLE": "CAST_DOUBLE",
    "FLOAT": "CAST_FLOAT",
    "DATE": "CAST_DATE",
    "DATETIME": "CAST_DATETIME",
    "TIMESTAMP": "CAST_DATETIME",
    "TIMESTAMPTZ": "CAST_DATETIME",  # the literal TIMESTAMP '...'
    "TIME": "CAST_TIME",
    "TIMETZ": "CAST_TIME",  # the literal TIME '...'
}


def cast_call(n: exp.Cast) -> tuple[str, list[exp.Expression]] | None:
    """``CAST(x AS T(a, b))`` as ``CAST_T(x, a, b)``; None for a type CAST cannot produce."""
    to = n.to
    tname = to.this.name if hasattr(to.this, "name") else str(to.this)
    name = _CAST_NAMES.get(tname)
    if name is None:
        return None
    if _converts_to_binary(to):
        name = "CAST_BINARY"  # CONVERT(x USING binary): a binary string, as CAST(x AS BINARY)
    params = []
    for x in to.expressions:
        inner = x.this if isinstance(x, exp.DataTypeParam) else x
        text = inner.name if hasattr(inner, "name") else str(inner)
        try:
            params.append(exp.Literal.number(int(text)))
        except ValueError:
            return None
    if name == "CAST_DECIMAL" and len(params) == 1:
        params.append(exp.Literal.number(0))
    if tname in ("TIMESTAMPTZ", "TIMETZ"):
        params = [exp.Literal.number(6)]  # a literal keeps its fraction
    return name, [n.this] + params


def canonical_call(n: exp.Expression) -> tuple[str, list[exp.Expression]] | None:
    """The MySQL function name and positional arguments a call node stands for.

    Units (``INTERVAL 1 DAY``, ``TIMESTAMPDIFF(MINUTE, ...)``) become string literals, so every
    function takes only values: ``DATE_ADD(d, INTERVAL 2 HOUR)`` is ``DATE_ADD(d, 2, 'HOUR')``.
    None when the node is not a function call the registry knows how to name."""
    if isinstance(n, exp.Anonymous):
        name = str(n.this).upper()
        args = list(n.expressions)
        if name in _UNIT_FIRST and args and isinstance(args[0], (exp.Column, exp.Var)):
            args[0] = exp.Literal.string(_unit(args[0]))
        elif name in _DATE_ARITH and len(args) == 2 and isinstance(args[1], exp.Interval):
            amount, unit = _interval_parts(args[1])
            if name == "ADDDATE":
                name = "DATE_ADD"
            elif name == "SUBDATE":
                name = "DATE_SUB"
            args = [args[0], amount, exp.Literal.string(unit)]
        elif name in ("ADDDATE", "SUBDATE") and len(args) == 2:
            name = "DATE_ADD" if name == "ADDDATE" else "DATE_SUB"
            args = [args[0], args[1], exp.Literal.string("DAY")]
        elif name == "GET_FORMAT" and args and isinstance(args[0], (exp.Column, exp.Var)):
            args[0] = exp.Literal.string(_unit(args[0]))
        elif name in ("CHARACTER_LENGTH",):
            name = "CHAR_LENGTH"
        return name, args
    t = type(n)
    if t is exp.Concat:
        return "CONCAT", list(n.expressions)
    if t is exp.JSONValue:
        if n.args.get("returning") or n.args.get("on_condition"):
            return None  # RETURNING / ON EMPTY / ON ERROR: not modelled
        path = n.args.get("path")
        if isinstance(path, exp.JSONPath):  # the path as written: its text again
            path = exp.Literal.string(path.sql(dialect=DIALECT)[1:-1].replace("''", "'"))
        return "JSON_VALUE", [n.this, path]
    if t is exp.ConcatWs:
        return "CONCAT_WS", list(n.expressions)
    if t is exp.Ceil:
        return "CEIL", [n.this]
    if t is exp.Floor:
        return "FLOOR", [n.this]
    if t is exp.WeightString:
        return "WEIGHT_STRING", [n.this]
    if t is exp.Extract:
        return "EXTRACT", [exp.Literal.string(_unit(n.this)), n.expression]
    if t is exp.Trim:
        pos = (n.args.get("position") or "").upper()
        rem = n.args.get("expression")
        if rem is None and not pos:
            return "TRIM", [n.this]
        if rem is None:
            rem = exp.Literal.string(" ")
        return _TRIM_FN.get(pos, "TRIM_BOTH"), [n.this, rem]
    if t is exp.Substring:
        args = [n.this, n.args.get("start") or exp.Literal.number(1)]
        if n.args.get("length") is not None:
            args.append(n.args["length"])
        return "SUBSTRING", args
    if t is exp.StrPosition:
        args = [n.args["substr"], n.this]
        if n.args.get("position") is not None:
            args.append(n.args["position"])
        return "LOCATE", args
    if t is exp.Chr:
        return "CHAR", list(n.expressions)
    if t is exp.JSONExtract:
        return "JSON_EXTRACT", [n.this, _json_path(n.expression)] + [
            _json_path(e) for e in n.expressions
        ]
    if t is exp.JSONExtractScalar:
        inner = exp.Anonymous(this="JSON_EXTRACT", expressions=[n.this, _json_path(n.expression)])
        return "JSON_UNQUOTE", [inner]
    if t is exp.JSONObject:
        args = []
        for kv in n.expressions:
            if isinstance(kv, exp.JSONKeyValue):
                args += [kv.this, kv.expression]
            else:
                args.append(kv)
        return "JSON_OBJECT", args
    if t is exp.CurrentTimestamp:
        return "NOW", [n.this] if n.this is not None else []
    if t is exp.CurrentDate:
        return "CURDATE", []
    if t is exp.CurrentTime:
        return "CURTIME", [n.this] if n.this is not None else []
    if t is exp.CurrentUser:
        return "CURRENT_USER", []
    if t is exp.RegexpLike:
        return "REGEXP", [n.this, n.expression]
    return None


def output_kind(c: Compiled) -> str:
    return c.kind

"""MySQL's functions, aggregates and collations registered into a SQLite connection.

Base storage answers the queries the dataflow does not maintain; ``sql/transpile.py`` rewrites
their function calls to ``nf_<NAME>``, and this module makes those names call the same Python
implementations the dataflow uses (``sql/functions``). Values cross into SQLite as SQLite can
hold them: DECIMAL as a number, dates and times as their MySQL text.
"""

from __future__ import annotations

import datetime as _dt
import math
import sqlite3
from decimal import Decimal

from ..errors import Error
from ..sql import collation as C
from ..sql import functions as F
from ..sql.expr import bind_function
from ..sql.transpile import PREFIX, failed
from ..sql.values import DECIMAL_COLLATION, decimal_quotient

_I64_MAX = 2**63 - 1


def to_sqlite(v):
    """A function's result as SQLite holds it."""
    t = type(v)
    if v is None or t is str or t is float or t is bytes:
        return v
    if t is int:
        return v if -_I64_MAX - 1 <= v <= _I64_MAX else str(v)
    if t is bool:
        return int(v)
    if t is F.coerce.ColumnFloat:
        return float(v)
    if t is Decimal:
        if v == v.to_integral_value() and abs(v) <= _I64_MAX:
            return int(v)
        return float(v)
    if t is _dt.datetime or t is _dt.date or t is _dt.timedelta:
        return F.coerce.to_str(v)
    return v


def to_sqlite_exact(v):
    """Like :func:`to_sqlite`, but a DECIMAL keeps its digits (as text): for a result column."""
    if type(v) is Decimal:
        return format(v, "f")
    return to_sqlite(v)


def _scalar(fn: F.Fn):
    call = bind_function(fn)

    def adapter(*args):
        try:
            return to_sqlite(call(*args))
        except Error as e:
            failed(e)
            raise

    return adapter


def _aggregate(agg: F.Agg):
    class Adapter:
        def __init__(self):
            self.acc = agg.factory()

        def step(self, *args):
            self.acc.step(*args)

        def finalize(self):
            return to_sqlite(self.acc.value())

    return Adapter


class _Sum:
    """MySQL's SUM: exact (DECIMAL) over exact values, DOUBLE over doubles and strings. Also a
    window function (``inverse`` takes a value out of the frame, exactly)."""

    def __init__(self):
        self.total = None
        self.n = 0  # values in the frame (NULLs not counted)
        self.strings = 0  # of which strings: the sum is a DOUBLE while there are any

    @staticmethod
    def _value(v):
        if isinstance(v, float):
            return Decimal(repr(v)), 0  # a DECIMAL column arrives as a SQLite REAL
        if isinstance(v, (str, bytes)):
            return Decimal(repr(F.coerce.to_float(v))), 1
        if not isinstance(v, (int, Decimal)):
            return F.coerce.to_decimal(v), 0
        return v, 0

    def step(self, v):
        if v is None:
            return
        x, s = self._value(v)
        self.n += 1
        self.strings += s
        self.total = x if self.total is None else self.total + x

    def inverse(self, v):
        if v is None:
            return
        x, s = self._value(v)
        self.n -= 1
        self.strings -= s
        self.total = None if self.n == 0 else self.total - x

    def finalize(self):
        if self.total is None:
            return None
        return to_sqlite(self.total) if not self.strings else float(self.total)

    def value(self):
        return self.finalize()


class _Avg(_Sum):
    def finalize(self):
        if self.total is None:
            return None
        q = Decimal(self.total) / self.n
        return float(q)


_FIXED = 1 << 1074  # every double is a whole number of 2**-1074


class _DoubleSum(_Sum):
    """SUM over a DOUBLE argument (a FLOAT or DOUBLE column, arithmetic on one): the exact sum
    of the doubles (as integers of 2**-1074), rounded once, as the dataflow sums them (a
    DECIMAL read back as a REAL is not such an argument: ``_Sum`` reads it by its shortest
    digits)."""

    @staticmethod
    def _value(v):
        f = v if isinstance(v, float) else F.coerce.to_float(v)
        if f != f or f in (math.inf, -math.inf):
            return Decimal(repr(f)), 0
        n, d = f.as_integer_ratio()
        return n * (_FIXED // d), 0

    def finalize(self):
        if self.total is None:
            return None
        return float(self.total / _FIXED)


class _DoubleAvg(_DoubleSum):
    def finalize(self):
        if self.total is None:
            return None
        return float(self.total / _FIXED) / self.n  # MySQL divides the sum (a double)


class _DecimalSum:
    """SUM over a DECIMAL argument: a wide column's text and an exact expression's text are
    its digits (``_Sum`` must read a string argument as MySQL reads text: a double). Also a
    window function."""

    def __init__(self):
        self.total = None
        self.n = 0

    @staticmethod
    def _value(v):
        if isinstance(v, str):
            return Decimal(v)
        if isinstance(v, float):
            return Decimal(repr(v))
        return v

    def step(self, v):
        if v is None:
            return
        v = self._value(v)
        self.n += 1
        self.total = v if self.total is None else self.total + v

    def inverse(self, v):
        if v is None:
            return
        self.n -= 1
        self.total = None if self.n == 0 else self.total - self._value(v)

    def finalize(self):
        return None if self.total is None else to_sqlite(self.total)

    def value(self):
        return self.finalize()


class _DecimalSumText(_DecimalSum):
    """The same, as a result column: the sum's exact text."""

    def finalize(self):
        return None if self.total is None else to_sqlite_exact(Decimal(self.total))


class _DecimalAvg(_DecimalSum):
    def finalize(self):
        if self.total is None:
            return None
        return float(decimal_quotient(Decimal(self.total), Decimal(self.n)))


class _DecimalAvgText(_DecimalSum):
    """AVG of a DECIMAL as a result column: MySQL's quotient, with the digits it keeps."""

    def finalize(self):
        if self.total is None:
            return None
        return to_sqlite_exact(decimal_quotient(Decimal(self.total), Decimal(self.n)))


def register(conn: sqlite3.Connection) -> None:
    """Register every MySQL function, aggregate and collation into ``conn``."""
    F.load_all()
    for name, fn in F.REGISTRY.items():
        conn.create_function(PREFIX + name, -1, _scalar(fn), deterministic=fn.deterministic)
    for name, agg in F.AGGREGATES.items():
        conn.create_aggregate(PREFIX + name, -1, _aggregate(agg))
    from ..sql.transpile import call_expr

    conn.create_function(PREFIX + "EXPR", -1, call_expr, deterministic=True)
    # SUM and AVG are window functions too (SUM(x) OVER (...)); a window function is also
    # an aggregate
    window = getattr(conn, "create_window_function", None) or conn.create_aggregate
    window(PREFIX + "SUM", 1, _Sum)
    window(PREFIX + "AVG", 1, _Avg)
    window(PREFIX + "FSUM", 1, _DoubleSum)
    window(PREFIX + "FAVG", 1, _DoubleAvg)
    window(PREFIX + "DSUM", 1, _DecimalSum)
    window(PREFIX + "DSUM_TEXT", 1, _DecimalSumText)
    window(PREFIX + "DAVG", 1, _DecimalAvg)
    window(PREFIX + "DAVG_TEXT", 1, _DecimalAvgText)
    conn.create_aggregate(PREFIX + "GROUP_CONCAT_ORDERED", -1, _GroupConcatOrdered)
    conn.create_function(PREFIX + "ONE_ROW", 2, _one_row, deterministic=True)
    conn.create_function(PREFIX + "LIKE_AS", 4, _like_as, deterministic=True)
    conn.create_function(PREFIX + "DECIMAL_BITS", 1, _decimal_bits, deterministic=True)
    for name, coll in C.COLLATIONS.items():
        conn.create_collation(name, _collation_cmp(coll))
    conn.create_collation(DECIMAL_COLLATION, decimal_cmp)


def _like_as(value, pattern, escape, collation: str):
    """``value LIKE pattern ESCAPE escape`` under ``collation`` (``transpile._like``)."""
    if value is None or pattern is None:
        return None
    from ..sql.expr import _escape_char, _str, like_cached

    try:
        esc = _escape_char(escape)
    except Error as e:
        failed(e)
        raise
    m = like_cached(pattern, esc, C.get(collation))
    return 1 if m(value if isinstance(value, str) else _str(value)) else 0


def _one_row(n, v):
    """A scalar subquery's value (``transpile._one_row_subqueries``): its one row's, NULL
    for no row, MySQL's 1242 for more than one."""
    if n is not None and n > 1:
        from ..errors import ProgrammingError

        e = ProgrammingError("Subquery returns more than 1 row", 1242, "21000")
        failed(e)
        raise e
    return v


class _GroupConcatOrdered:
    """``GROUP_CONCAT(... ORDER BY ...)`` on base storage (``transpile._ordered_concat``):
    called with (distinct, separator, n, the n values, then each key and whether it is
    descending), computed by the dataflow's own GROUP_CONCAT accumulator."""

    def __init__(self):
        self.acc = None

    def step(self, distinct, sep, n, *rest):
        if self.acc is None:
            from ..dataflow.ops.aggregate import AggSpec
            from ..sql import values as V

            order = [(n + j, bool(rest[n + 2 * j + 1])) for j in range((len(rest) - n) // 2)]
            spec = AggSpec("GROUP_CONCAT", list(range(n)), bool(distinct), V.STR, sep, order)
            self.acc = spec.new()
        row = tuple(rest[:n]) + tuple(rest[n + 2 * j] for j in range((len(rest) - n) // 2))
        self.acc.add(row, 1)

    def finalize(self):
        return None if self.acc is None else self.acc.value()


def _decimal_bits(v):
    """A DECIMAL argument of BIT_AND/OR/XOR as their 64 bits (rounded half away from zero,
    saturated), signed so that SQLite holds it; the aggregate reads the pattern back."""
    from ..sql.functions.aggregates import to_uint64

    n = to_uint64(F.coerce.to_decimal(v))
    return None if n is None else (n - (1 << 64) if n >= 1 << 63 else n)


def _as_decimal(text: str):
    try:
        d = Decimal(text)
        if d.is_finite():
            return d
    except ArithmeticError:
        pass
    return F.coerce.to_decimal(text)  # not written by noria_py: MySQL's leading number


def decimal_cmp(a: str, b: str) -> int:
    """The collation of a wide DECIMAL column's text: by value (``'1.10'`` equals ``'1.1'``)."""
    if a == b:
        return 0
    x, y = _as_decimal(a), _as_decimal(b)
    if x is None or y is None:  # not a number at all: after every number, by text
        return (x is None) - (y is None) or (a > b) - (a < b)
    return (x > y) - (x < y)


# collation keys ``_collation_cmp`` remembers per collation (then it starts over)
CMP_KEYS = 8192


def _collation_cmp(coll: C.Collation):
    """SQLite's comparison function of a collation: called a dozen times per index search
    (with the searched value each time, and the same upper index entries for every search), so
    the collation keys of the strings it has compared lately are remembered."""
    keys: dict = {}

    def cmp(a: str, b: str) -> int:
        if a == b:
            return 0
        ka = keys.get(a)
        if ka is None:
            if len(keys) >= CMP_KEYS:
                keys.clear()
            ka = keys[a] = coll.key(a)
        kb = keys.get(b)
        if kb is None:
            if len(keys) >= CMP_KEYS:
                keys.clear()
            kb = keys[b] = coll.key(b)
        return (ka > kb) - (ka < kb)

    return cmp

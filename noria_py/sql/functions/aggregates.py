"""Statistical, bitwise and JSON aggregates, each with exact retraction.

STDDEV/VARIANCE keep the exact count, sum and sum of squares (``Fraction``), so retracting a
row gives exactly the state of never having seen it. BIT_AND/BIT_OR keep a count per bit,
BIT_XOR its running value. The JSON aggregates keep their elements in arrival order.

The dataflow maintains every aggregate here whose value does not depend on the order rows
arrive (``dataflow/ops/aggregate.py`` wraps the accumulator, multiplicities as repeated
``step``/``inverse``). JSON_ARRAYAGG and JSON_OBJECTAGG are registered with ``arrival_order``:
MariaDB lists the elements in the order its plan feeds the rows, which a view maintained under
deletes and refills cannot reproduce, so the compiler leaves those queries to base storage.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction

from ..values import FLOAT, INT, STR
from . import register_agg
from .coerce import to_num, to_str
from .json_fns import JsonText, escape, sql_json_text

MASK64 = (1 << 64) - 1


def _exact(v) -> int | Fraction | None:
    """A value in DOUBLE context, exactly (strings as MariaDB reads them)."""
    n = to_num(v)
    if n is None:
        return None
    if type(n) is int:
        return n
    if type(n) is float:
        if math.isnan(n) or math.isinf(n):
            return Fraction(0)
        return Fraction(n)
    try:
        return Fraction(n)
    except (ValueError, TypeError, InvalidOperation):
        return Fraction(0)


class _Moments:
    """Count, sum and sum of squares of the non-NULL rows."""

    __slots__ = ("n", "s", "q")

    def __init__(self):
        self.n = 0
        self.s: int | Fraction = 0
        self.q: int | Fraction = 0

    def step(self, v) -> None:
        x = _exact(v)
        if x is None:
            return
        self.n += 1
        self.s += x
        self.q += x * x

    def inverse(self, v) -> None:
        x = _exact(v)
        if x is None:
            return
        self.n -= 1
        self.s -= x
        self.q -= x * x

    def _var(self, sample: bool) -> float | None:
        n = self.n
        d = n - 1 if sample else n
        if n == 0 or d <= 0:
            return None
        m2 = Fraction(self.q) - Fraction(self.s) * self.s / n
        if m2 < 0:
            m2 = Fraction(0)
        return float(m2 / d)


# The statistical aggregates: a DOUBLE that MariaDB shows with its argument's decimals plus 4
# when the argument has fixed decimals (an integer, a DECIMAL, a DATE): STDDEV of integers is
# ``2.4166``, of a DECIMAL(5,1) ``0.70711``; of a DOUBLE or a string every digit.
STATISTICS = frozenset(
    ("VARIANCE", "VAR_POP", "VAR_SAMP", "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP")
)
_NOT_FIXED_DEC = 31  # MariaDB: decimals from 31 on are not fixed
# aggregates that read their argument as a number: a DATE, DATETIME or TIME is the number its
# digits spell (``dt + 0``: 20240131), as MySQL reads it (the compiler and base storage's
# rewrite, ``proxy_types.numeric_temporal_arguments``, write the argument so)
NUMERIC_AGGREGATES = frozenset(("SUM", "AVG", "BIT_AND", "BIT_OR", "BIT_XOR")) | STATISTICS
TEMPORAL_KINDS = ("date", "datetime", "time")  # values.DATE, DATETIME, TIME


def statistic_kind(arg_kind, arg_scale: int | None):
    """The kind of a statistical aggregate's value over an argument of ``arg_kind`` (and
    ``arg_scale`` for a DECIMAL): a ``FloatKind`` with the decimals MariaDB shows, or FLOAT."""
    from ..values import DATE, DECIMAL, FloatKind

    if arg_kind in (INT, DATE):
        dec = 4
    elif arg_kind == DECIMAL and arg_scale is not None:
        dec = arg_scale + 4
    else:
        return FLOAT
    return FloatKind(False, dec) if dec < _NOT_FIXED_DEC else FLOAT


@register_agg("VARIANCE", "VAR_POP", ret=FLOAT, args=1)
class VarPop(_Moments):
    """Population variance."""

    def value(self) -> float | None:
        return self._var(False)


@register_agg("VAR_SAMP", ret=FLOAT, args=1)
class VarSamp(_Moments):
    """Sample variance (NULL for fewer than two rows)."""

    def value(self) -> float | None:
        return self._var(True)


@register_agg("STD", "STDDEV", "STDDEV_POP", ret=FLOAT, args=1)
class StdPop(_Moments):
    """Population standard deviation."""

    def value(self) -> float | None:
        v = self._var(False)
        return None if v is None else math.sqrt(v)


@register_agg("STDDEV_SAMP", ret=FLOAT, args=1)
class StdSamp(_Moments):
    """Sample standard deviation (NULL for fewer than two rows)."""

    def value(self) -> float | None:
        v = self._var(True)
        return None if v is None else math.sqrt(v)


_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")


def to_uint64(v) -> int | None:
    """A value as the unsigned 64-bit integer the bit aggregates see: unlike the bit
    operators (``coerce.to_bits``), a string is read as an INTEGER, a DOUBLE rounds half to
    even and a number saturates at a signed BIGINT's limits."""
    if v is None:
        return None
    t = type(v)
    if t is str or t is bytes:
        # read as an INTEGER: the integer prefix only ('2.6x' is 2, '-1e30' is -1)
        s = v.decode("utf-8", "replace") if t is bytes else v
        m = _INT_PREFIX.match(s)
        n = int(m.group(1)) if m else 0
    else:
        n = to_num(v)
        if type(n) is float:
            n = round(n) if math.isfinite(n) else 0
        elif type(n) is Decimal:
            if not n.is_finite():
                n = 0
            elif abs(n) >= 1 << 64:  # beyond every limit: no need to round its digits
                n = int(n)
            else:
                n = int(n.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        elif type(n) is not int:
            n = int(n)
    # saturated as a signed BIGINT (1e19 is 2^63 - 1), then taken as its 64 bits
    if n > (1 << 63) - 1:
        n = (1 << 63) - 1
    elif n < -(1 << 63):
        n = -(1 << 63)
    return n & MASK64


class _BitCounts:
    __slots__ = ("n", "counts")

    def __init__(self):
        self.n = 0
        self.counts = [0] * 64

    def _add(self, v, d: int) -> None:
        x = to_uint64(v)
        if x is None:
            return
        self.n += d
        counts = self.counts
        while x:
            low = x & -x
            counts[low.bit_length() - 1] += d
            x ^= low

    def step(self, v) -> None:
        self._add(v, 1)

    def inverse(self, v) -> None:
        self._add(v, -1)


@register_agg("BIT_AND", ret=INT, args=1, type_name="BIGINT UNSIGNED")
class BitAnd(_BitCounts):
    """AND of all bits (18446744073709551615 for no rows)."""

    def value(self) -> int:
        n = self.n
        return sum(1 << i for i, c in enumerate(self.counts) if c == n)


@register_agg("BIT_OR", ret=INT, args=1, type_name="BIGINT UNSIGNED")
class BitOr(_BitCounts):
    """OR of all bits (0 for no rows)."""

    def value(self) -> int:
        return sum(1 << i for i, c in enumerate(self.counts) if c > 0)


@register_agg("BIT_XOR", ret=INT, args=1, type_name="BIGINT UNSIGNED")
class BitXor:
    """XOR of all values (0 for no rows)."""

    __slots__ = ("acc",)

    def __init__(self):
        self.acc = 0

    def step(self, v) -> None:
        x = to_uint64(v)
        if x is not None:
            self.acc ^= x

    inverse = step

    def value(self) -> int:
        return self.acc


@register_agg("JSON_ARRAYAGG", ret=STR, args=1, arrival_order=True)
class JsonArrayAgg:
    """The values as a JSON array (NULLs as null); NULL for no rows."""

    __slots__ = ("items",)

    def __init__(self):
        self.items: list[str] = []

    def step(self, v) -> None:
        self.items.append(sql_json_text(v))

    def inverse(self, v) -> None:
        self.items.remove(sql_json_text(v))

    def value(self) -> JsonText | None:
        if not self.items:
            return None
        return JsonText("[" + ",".join(self.items) + "]")


@register_agg("JSON_OBJECTAGG", ret=STR, args=2, arrival_order=True)
class JsonObjectAgg:
    """Key/value pairs as a JSON object (rows with a NULL key are skipped)."""

    __slots__ = ("pairs",)

    def __init__(self):
        self.pairs: list[str] = []

    @staticmethod
    def _pair(k, v) -> str:
        return f'"{escape(to_str(k))}":{sql_json_text(v)}'

    def step(self, k, v) -> None:
        if k is not None:
            self.pairs.append(self._pair(k, v))

    def inverse(self, k, v) -> None:
        if k is not None:
            self.pairs.remove(self._pair(k, v))

    def value(self) -> JsonText | None:
        if not self.pairs:
            return None
        return JsonText("{" + ", ".join(self.pairs) + "}")


@register_agg("JSON_ARRAYAGG_JSON", ret=STR, args=1, arrival_order=True)
class JsonArrayAggJson(JsonArrayAgg):
    """JSON_ARRAYAGG of JSON documents (a JSON column, JSON_EXTRACT ...): each embedded as
    the JSON it is (base storage hands it over as text)."""

    __slots__ = ()

    def step(self, v) -> None:
        self.items.append("null" if v is None else to_str(v))

    def inverse(self, v) -> None:
        self.items.remove("null" if v is None else to_str(v))


@register_agg("JSON_OBJECTAGG_JSON", ret=STR, args=2, arrival_order=True)
class JsonObjectAggJson(JsonObjectAgg):
    """JSON_OBJECTAGG whose values are JSON documents, each embedded as the JSON it is."""

    __slots__ = ()

    @staticmethod
    def _pair(k, v) -> str:
        return f'"{escape(to_str(k))}":{"null" if v is None else to_str(v)}'

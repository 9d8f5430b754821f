"""CAST and CONVERT with MySQL's rules, as functions named ``CAST_<TYPE>``.

The compiler turns ``CAST(x AS DECIMAL(5,2))`` into ``CAST_DECIMAL(x, 5, 2)``; base storage
calls the same functions, so both paths convert alike: a string is read up to its numeric
prefix (``CAST(' 12x' AS SIGNED)`` is 12), a DECIMAL rounds half away from zero, a DOUBLE to the
nearest even integer, UNSIGNED wraps negative values around 2^64, a DECIMAL that does not fit
its precision is clamped to the largest value it can hold, an invalid date is NULL.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation

from .. import values as V
from . import register
from .coerce import (
    ColumnFloat,
    TemporalText,
    clamp_time,
    to_bytes,
    to_date,
    to_datetime,
    to_float32,
    to_num,
    to_str,
    to_time,
)

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1
_U64_MAX = 2**64 - 1
_INT_PREFIX = re.compile(r"\s*([+-]?)(\d+)")


_CLEAN_INTEGER = re.compile(r"\s*[+-]?\d+\s*\Z")


def _strict_integer(s: str) -> None:
    """Under strict evaluation (a write's expressions in strict mode): 1292 for a string that
    is not wholly an integer of at most 64 bits, as CAST AS SIGNED/UNSIGNED's warning becomes."""
    if V.STRICT_EVALUATION.on and (
        _CLEAN_INTEGER.match(s) is None or not _I64_MIN <= int(s) <= _U64_MAX
    ):
        from ...errors import DataError

        raise DataError(f"Truncated incorrect INTEGER value: '{s}'", 1292, "22007")


def _integer(v) -> int:
    """The integer MySQL's CAST computes before fitting it to 64 bits."""
    if type(v) is TemporalText:
        v = v.value
    if isinstance(v, (str, bytes)):
        s = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        _strict_integer(s)
        m = _INT_PREFIX.match(s)
        if not m:
            return 0
        n = int(m.group(2))
        if m.group(1) == "-":
            return max(-n, _I64_MIN)
        return min(n, _U64_MAX)
    n = to_num(v)
    if type(n) is int:
        return n
    if type(n) is float:
        if n != n:
            return 0
        if math.isinf(n):
            return _I64_MAX if n > 0 else _I64_MIN
        return int(Decimal(repr(n)).to_integral_value(ROUND_HALF_EVEN))
    return int(Decimal(n).to_integral_value(ROUND_HALF_UP))


@register("CAST_SIGNED", ret=V.INT, args=1)
def cast_signed(v) -> int:
    n = _integer(v)
    if isinstance(v, (str, bytes)) or type(v) is int:
        if _I64_MAX < n <= _U64_MAX:
            return n - 2**64  # the 64-bit pattern read as signed
    return max(_I64_MIN, min(_I64_MAX, n))


@register("CAST_UNSIGNED", ret=V.INT, args=1)
def cast_unsigned(v) -> int:
    n = _integer(v)
    if n < 0:
        if isinstance(v, float):  # a DOUBLE or FLOAT below 0: 0
            return 0
        return max(n, _I64_MIN) + 2**64
    return min(n, _U64_MAX)


@register("CAST_CHAR", ret=V.STR, args=(1, 2))
def cast_char(v, length=None) -> str:
    s = to_str(v)
    if length is not None:
        s = s[: int(length)]
    return s


@register("CAST_BINARY", ret=V.BYTES, args=(1, 2))
def cast_binary(v, length=None) -> bytes:
    b = to_bytes(v)
    if length is not None:
        n = int(length)
        b = b[:n].ljust(n, b"\x00")
    return b


@register("CAST_DECIMAL", ret=V.DECIMAL, args=(1, 3))
def cast_decimal(v, precision=10, scale=0) -> Decimal:
    precision = int(precision)
    scale = int(scale)
    if type(v) is TemporalText:
        v = v.value
    if isinstance(v, (str, bytes)):
        s = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        V.check_number_text(s, "DECIMAL")  # (strict evaluation: 1292)
        m = re.match(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))", s)
        d = Decimal(m.group(1)) if m else Decimal(0)
    else:
        n = to_num(v)
        d = Decimal(repr(n)) if type(n) is float else Decimal(n)
    q = Decimal(1).scaleb(-scale)
    try:
        d = d.quantize(q, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        d = Decimal("Infinity") if d > 0 else Decimal("-Infinity")
    limit = (Decimal(10) ** (precision - scale) - q).quantize(q)
    if d > limit:
        return limit
    if d < -limit:
        return -limit
    return d


@register("CAST_DOUBLE", ret=V.FLOAT, args=1)
def cast_double(v) -> float:
    if type(v) is TemporalText:
        v = v.value
    if isinstance(v, (str, bytes)):
        from .coerce import str_prefix_number

        s = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        V.check_number_text(s, "DOUBLE")  # (strict evaluation: 1292)
        return float(str_prefix_number(s))
    return float(to_num(v))


@register("CAST_FLOAT", ret=V.FloatKind(True, None), args=1)
def cast_float(v) -> float:
    """A FLOAT, as MySQL's is: the nearest single-precision value (beyond FLOAT's range its
    largest), shown with 6 digits."""
    d = cast_double(v)
    if d != d:
        return d
    if abs(d) > V.FLOAT_MAX:
        d = math.copysign(V.FLOAT_MAX, d)
    return ColumnFloat(to_float32(d))


@register("CAST_DATE", ret=V.DATE, args=1)
def cast_date(v):
    return to_date(v)


def _truncate_us(us: int, fsp: int) -> int:
    step = 10 ** (6 - max(0, min(6, fsp)))
    return us - us % step


@register("CAST_DATETIME", ret=V.DATETIME, args=(1, 2))
def cast_datetime(v, fsp=0):
    d = to_datetime(v)
    if d is None:
        return None
    return d.replace(microsecond=_truncate_us(d.microsecond, int(fsp)))


@register("CAST_TIME", ret=V.TIME, args=(1, 2))
def cast_time(v, fsp=0):
    import datetime as _dt

    if type(v) in (str, bytes):
        from .temporal import _read_time

        t = _read_time(v)  # as MySQL reads a string where it wants a TIME
    else:
        t = to_time(v)
    if t is None:
        return None
    t = clamp_time(t)
    us = abs(t.microseconds) if t >= _dt.timedelta(0) else (-t).microseconds
    cut = us - _truncate_us(us, int(fsp))
    if cut:
        t = (
            t - _dt.timedelta(microseconds=cut)
            if t >= _dt.timedelta(0)
            else t + _dt.timedelta(microseconds=cut)
        )
    return t

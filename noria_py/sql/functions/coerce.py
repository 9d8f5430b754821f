"""Argument conversions with MySQL's rules: how a function sees a value of another type.

Invalid input never raises here: MySQL converts it (a string without a number is 0, a string
that is not a date is NULL) and warns, and so do these helpers (without the warning).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import struct
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from .. import values as V
from ..values import STRICT_EVALUATION as _STRICT
from ..values import check_number_text

_NUM_PREFIX = re.compile(r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))")


def fmt_float(v: float) -> str:
    """A DOUBLE as MySQL prints it: the shortest digits that read back the same, in positional
    notation for decimal exponents from -15 to 14 and as ``<digits>e<exp>`` outside."""
    if v != v or v in (math.inf, -math.inf):
        return str(v)
    if v == 0:
        return "-0" if math.copysign(1, v) < 0 else "0"
    sign, digits, exp10 = Decimal(repr(v)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = exp10 + len(digits) - 1  # exponent of the leading digit
    neg = "-" if sign else ""
    if -15 <= e < 15:
        if e < 0:
            return f"{neg}0.{'0' * (-e - 1)}{ds}"
        if len(ds) <= e + 1:
            return f"{neg}{ds}{'0' * (e + 1 - len(ds))}"
        return f"{neg}{ds[: e + 1]}.{ds[e + 1 :]}"
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{neg}{mant}e{e}"


_F32 = struct.Struct("<f")


def to_float32(v: float) -> float:
    """A double rounded to the nearest single-precision float, widened back (|v| must not
    exceed FLOAT's largest value)."""
    return _F32.unpack(_F32.pack(v))[0]


def fmt_float32(v: float) -> str:
    """A FLOAT as MySQL prints it: 6 significant digits, then written as a DOUBLE is."""
    if v != v or v in (math.inf, -math.inf):
        return str(v)
    if v == 0:
        return "0"
    return fmt_float(float(f"{v:.5e}"))


class ColumnFloat(float):
    """A value of a FLOAT column (the single-precision value widened to a double) or of a
    FLOAT(M,D)/DOUBLE(M,D) column. As a number it is that double (arithmetic, aggregates,
    comparisons and grouping use it, and arithmetic gives a plain float); as text (``to_str``,
    results) it is what MySQL shows: 6 significant digits for a FLOAT, ``dec`` decimals for a
    column that declares them. MIN, MAX and the functions that return an argument unchanged
    keep it."""

    __slots__ = ("dec",)

    def __new__(cls, v: float, dec: int | None = None):
        self = super().__new__(cls, v)
        self.dec = dec
        return self

    def __reduce__(self):
        return (ColumnFloat, (float(self), self.dec))

    def shown(self) -> str:
        if self.dec is None:
            return fmt_float32(self)
        if self != self or self in (math.inf, -math.inf):
            return str(float(self))
        return f"{float(self):.{self.dec}f}"

    def plain(self) -> float:
        """The float a MySQL driver reads from the shown text."""
        if self.dec is None:
            return float(f"{self:.5e}") if self else 0.0  # (fmt_float32's digits; -0 is 0)
        return float(f"{float(self):.{self.dec}f}")


def fmt_decimal(d: Decimal) -> str:
    return format(d, "f")


def fmt_time(t: _dt.timedelta) -> str:
    us = t.days * 86400_000000 + t.seconds * 1_000000 + t.microseconds
    sign = "-" if us < 0 else ""
    us = abs(us)
    secs, frac = divmod(us, 1_000000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    out = f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if frac:
        out += f".{frac:06d}"
    return out


class TemporalText(str):
    """A date or datetime that MySQL returns as a string column (DATE_ADD of a string): it
    prints as the string, and in numeric or temporal context is the date it stands for."""

    __slots__ = ("value",)

    def __new__(cls, text: str, value):
        self = super().__new__(cls, text)
        self.value = value
        return self


class ScalarText(str):
    """A string that stands for a SQL value in numeric context and comparisons (JSON_EXTRACT
    of one JSON scalar: ``'"2"'`` is 2 in ``+ 1``, ``'"x"'`` equals ``'x'``)."""

    __slots__ = ("value",)

    def __new__(cls, text: str, value):
        self = super().__new__(cls, text)
        self.value = value
        return self


def to_str(v) -> str | None:
    """The string form of a value, as CONCAT or a string function sees it."""
    if v is None:
        return None
    t = type(v)
    if t is str:
        return v
    if t is int or t is bool:
        return str(int(v))
    if t is float:
        return fmt_float(v)
    if t is ColumnFloat:
        return v.shown()
    if t is Decimal:
        return fmt_decimal(v)
    if t is _dt.datetime:
        return V.fmt_datetime(v)
    if t is _dt.date:
        return V.fmt_date(v)
    if t is _dt.timedelta:
        return fmt_time(v)
    if t is bytes or t is bytearray or t is memoryview:
        return bytes(v).decode("utf-8", "replace")
    return str(v)


def to_bytes(v) -> bytes | None:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    return to_str(v).encode("utf-8", "surrogateescape")


def str_prefix_number(s: str):
    """MySQL's string to number: the longest numeric prefix (leading spaces skipped), else 0.

    Returns an int for an integer prefix and a float otherwise (a string in numeric context is
    a DOUBLE in MySQL; integer prefixes are kept exact here and converted by the caller)."""
    m = _NUM_PREFIX.match(s)
    if not m:
        return 0
    text = m.group(1)
    if any(c in text for c in ".eE"):
        try:
            return float(text)
        except (OverflowError, ValueError):
            return 0.0
    return int(text)


def to_num(v):
    """A value in numeric context: int, Decimal or float (strings become DOUBLE)."""
    if v is None:
        return None
    t = type(v)
    if t is int or t is float or t is Decimal:
        return v
    if t is ColumnFloat:
        return float(v)
    if t is bool:
        return int(v)
    if t is str:
        if _STRICT.on:
            check_number_text(v, "DOUBLE")
        return float(str_prefix_number(v))
    if t is bytes:
        if _STRICT.on:
            check_number_text(v, "DOUBLE")
        return float(str_prefix_number(v.decode("utf-8", "replace")))
    if t is TemporalText:
        return to_num(v.value)
    if isinstance(v, ScalarText):
        return to_num(v.value)
    if t is _dt.datetime:
        n = v.year * 10**10 + v.month * 10**8 + v.day * 10**6 + v.hour * 10**4 + v.minute * 100
        n += v.second
        if v.microsecond:
            return Decimal(n) + Decimal(v.microsecond).scaleb(-6)
        return n
    if t is _dt.date:
        return v.year * 10000 + v.month * 100 + v.day
    if t is _dt.timedelta:
        us = v.days * 86400_000000 + v.seconds * 1_000000 + v.microseconds
        sign = -1 if us < 0 else 1
        secs, frac = divmod(abs(us), 1_000000)
        h, rem = divmod(secs, 3600)
        m, s = divmod(rem, 60)
        n = h * 10000 + m * 100 + s
        if frac:
            return sign * (Decimal(n) + Decimal(frac).scaleb(-6))
        return sign * n
    return v


def to_float(v) -> float | None:
    n = to_num(v)
    return None if n is None else float(n)


def round_half_away(d: Decimal, places: int = 0) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def to_int(v) -> int | None:
    """A value where MySQL wants an integer argument: rounded half away from zero."""
    if v is None:
        return None
    n = to_num(v)
    if type(n) is int:
        return n
    if type(n) is float:
        if n != n or n in (math.inf, -math.inf):
            return 0
        return int(round_half_away(Decimal(repr(n))))
    try:
        return int(round_half_away(n))
    except (InvalidOperation, ValueError):
        return 0


_U64_MASK = (1 << 64) - 1
_I64_MIN = -(1 << 63)


def to_bits(v) -> int | None:
    """A value as MySQL's bit operators and BIT_* aggregates see it: an exact number (a
    string's numeric prefix read as a DECIMAL) rounded half away from zero, saturated to
    [-2^63, 2^64 - 1], taken as its unsigned 64-bit pattern."""
    if v is None:
        return None
    n = v if type(v) is int else (to_decimal(v) if type(v) in (str, bytes) else to_num(v))
    if type(n) is int:
        pass
    elif type(n) is bool:
        n = int(n)
    else:
        if n != n:  # NaN
            return 0
        if n >= _U64_MASK:
            return _U64_MASK
        if n <= _I64_MIN:
            return 1 << 63
        n = int(round_half_away(Decimal(repr(n)) if type(n) is float else Decimal(n)))
    if n > _U64_MASK:
        return _U64_MASK
    if n < _I64_MIN:
        n = _I64_MIN
    return n & _U64_MASK


def to_decimal(v) -> Decimal | None:
    """A value as a DECIMAL: a string's numeric prefix keeps every digit (as a string compared
    with a DECIMAL is converted), others through their number."""
    t = type(v)
    if t is str or t is bytes:
        if _STRICT.on:
            check_number_text(v, "DECIMAL")
        m = _NUM_PREFIX.match(v if t is str else v.decode("utf-8", "replace"))
        if m:
            try:
                d = Decimal(m.group(1))
            except ArithmeticError:
                d = None
            if d is not None and d.is_finite():
                return d
    n = to_num(v)
    if n is None:
        return None
    if type(n) is float:
        return Decimal(repr(n))
    return Decimal(n)


# --- temporal ------------------------------------------------------------------------------

_DT_RE = re.compile(
    r"^\s*(\d{1,4})[-/.:](\d{1,2})[-/.:](\d{1,2})"
    r"(?:[ T]+(\d{1,2})(?:[:.](\d{1,2})(?:[:.](\d{1,2})(?:\.(\d{0,6})\d*)?)?)?)?\s*$"
)
# a valid date (and time) followed by other characters: MySQL reads it up to them
_DT_PREFIX_RE = re.compile(
    r"^\s*(\d{1,4})[-/.:](\d{1,2})[-/.:](\d{1,2})"
    r"(?:[ T]+(\d{1,2})(?:[:.](\d{1,2})(?:[:.](\d{1,2})(?:\.(\d{0,6})\d*)?)?)?)?(?=\s*[^\d\s])"
)
_DIGITS_RE = re.compile(r"^\s*(\d{6}|\d{8}|\d{12}|\d{14})(?:\.(\d{0,6})\d*)?\s*$")
_DATE_PART_RE = re.compile(r"^\s*\d{1,4}[-/.]\d{1,2}[-/.]\d{1,2}")
_TIME_RE = re.compile(
    r"^\s*([+-])?(?:(\d+)\s+)?(\d+)(?::(\d{1,2})(?::(\d{1,2}))?)?(?:\.(\d{0,6})\d*)?\s*$"
)


def _year2(y: int, ndigits: int) -> int:
    if ndigits <= 2:
        return y + 2000 if y < 70 else y + 1900
    return y


def _mk(y, mo, d, h=0, mi=0, s=0, us=0) -> _dt.datetime | None:
    try:
        return _dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return None


def _from_digits(digits: str, frac: str | None) -> _dt.datetime | None:
    us = int((frac or "").ljust(6, "0")[:6] or 0)
    n = len(digits)
    if n == 6:
        return _mk(_year2(int(digits[:2]), 2), int(digits[2:4]), int(digits[4:6]))
    if n == 8:
        return _mk(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    if n == 12:
        y = _year2(int(digits[:2]), 2)
        return _mk(
            y, int(digits[2:4]), int(digits[4:6]), int(digits[6:8]), int(digits[8:10]),
            int(digits[10:12]), us,
        )  # fmt: skip
    if n == 14:
        return _mk(
            int(digits[:4]), int(digits[4:6]), int(digits[6:8]), int(digits[8:10]),
            int(digits[10:12]), int(digits[12:14]), us,
        )  # fmt: skip
    return None


def to_datetime(v, prefix: bool = True) -> _dt.datetime | None:
    """A value where MySQL wants a DATETIME; NULL when it is not a valid one. A string that
    starts with a valid date (and time) and goes on with other characters is read up to them,
    as MySQL does with a warning, unless ``prefix`` is false (the whole string must be one)."""
    if v is None:
        return None
    t = type(v)
    if t is ColumnFloat:
        v, t = float(v), float
    if t is _dt.datetime:
        return v
    if t is _dt.date:
        return _dt.datetime(v.year, v.month, v.day)
    if t is _dt.timedelta:
        today = _dt.date.today()
        return _dt.datetime(today.year, today.month, today.day) + v
    if t is int:
        if v <= 0:
            return None
        s = str(v)
        if len(s) in (5, 7, 11, 13):
            s = "0" + s
        return _from_digits(s, None) if len(s) in (6, 8, 12, 14) else None
    if t is Decimal or t is float:
        d = Decimal(repr(v)) if t is float else v
        ip = int(d)
        frac = format(d - ip, "f")[2:] if d != ip else None
        r = to_datetime(ip)
        if r is not None and frac:
            r = r.replace(microsecond=int(frac.ljust(6, "0")[:6]))
        return r
    if t is bytes:
        v = v.decode("utf-8", "replace")
    s = str(v)
    m = _DT_RE.match(s)
    if m:
        y = _year2(int(m.group(1)), len(m.group(1)))
        frac = m.group(7) or ""
        return _mk(
            y, int(m.group(2)), int(m.group(3)), int(m.group(4) or 0), int(m.group(5) or 0),
            int(m.group(6) or 0), int(frac.ljust(6, "0")[:6] or 0),
        )  # fmt: skip
    m = _DIGITS_RE.match(s)
    if m:
        return _from_digits(m.group(1), m.group(2))
    if prefix:
        m = _DT_PREFIX_RE.match(s)
        if m:
            y = _year2(int(m.group(1)), len(m.group(1)))
            frac = m.group(7) or ""
            return _mk(
                y, int(m.group(2)), int(m.group(3)), int(m.group(4) or 0),
                int(m.group(5) or 0), int(m.group(6) or 0), int(frac.ljust(6, "0")[:6] or 0),
            )  # fmt: skip
    return None


def has_time_part(v) -> bool:
    """Does a value given as a date argument carry a time of day (DATE_ADD keeps it then)?"""
    t = type(v)
    if t is _dt.datetime or t is ColumnFloat:
        return True
    if t is _dt.date:
        return False
    if t is TemporalText:
        return type(v.value) is _dt.datetime
    if t is str or t is bytes:
        s = v.decode("utf-8", "replace") if t is bytes else v
        m = _DT_RE.match(s)
        if m:
            return m.group(4) is not None
        m = _DIGITS_RE.match(s)
        if m:
            return len(m.group(1)) > 8
        m = _DT_PREFIX_RE.match(s)  # a datetime read up to the characters after it
        return bool(m) and m.group(4) is not None
    if t is int:
        return len(str(v)) > 8
    if t is Decimal or t is float:
        return True
    return False


def to_date(v) -> _dt.date | None:
    d = to_datetime(v)
    return None if d is None else d.date()


def to_time(v) -> _dt.timedelta | None:
    """A value where MySQL wants a TIME: '[-][D ]HH:MM:SS[.frac]', 'HHMMSS', a number HHMMSS."""
    if v is None:
        return None
    t = type(v)
    if t is ColumnFloat:
        v, t = float(v), float
    if t is _dt.timedelta:
        return v
    if t is _dt.datetime:
        return _dt.timedelta(
            hours=v.hour, minutes=v.minute, seconds=v.second, microseconds=v.microsecond
        )
    if t is _dt.date:
        return _dt.timedelta(0)
    if t in (int, float, Decimal):
        if abs(v) > 8385959:
            dt = to_datetime(v)  # too large for HHMMSS: MySQL reads a datetime
            return None if dt is None else to_time(dt)
        d = Decimal(repr(v)) if t is float else Decimal(v)
        sign = -1 if d < 0 else 1
        d = abs(d)
        ip = int(d)
        us = int(round_half_away((d - ip) * 1000000))
        h, rest = divmod(ip, 10000)
        m, s = divmod(rest, 100)
        if m > 59 or s > 59:
            return None
        return sign * _dt.timedelta(hours=h, minutes=m, seconds=s, microseconds=us)
    s = to_str(v)
    if _DATE_PART_RE.match(s):
        dt = to_datetime(s, prefix=False)  # (a stored TIME takes only a whole datetime)
        return None if dt is None else to_time(dt)
    m = _TIME_RE.match(s)
    if not m:
        return None
    sign = -1 if m.group(1) == "-" else 1
    days = int(m.group(2) or 0)
    if m.group(4) is None and m.group(2) is None:
        # a bare number: HHMMSS read from the right
        digits = m.group(3)
        n = int(digits)
        h, rest = divmod(n, 10000)
        mi, sec = divmod(rest, 100)
    else:
        h = int(m.group(3))
        mi = int(m.group(4) or 0)
        sec = int(m.group(5) or 0)
    if mi > 59 or sec > 59:
        return None
    us = int((m.group(6) or "").ljust(6, "0")[:6] or 0)
    return sign * _dt.timedelta(days=days, hours=h, minutes=mi, seconds=sec, microseconds=us)


TIME_MAX = _dt.timedelta(hours=838, minutes=59, seconds=59)


def clamp_time(t: _dt.timedelta) -> _dt.timedelta:
    """TIME's range is -838:59:59 to 838:59:59."""
    if t > TIME_MAX:
        return TIME_MAX
    if t < -TIME_MAX:
        return -TIME_MAX
    return t

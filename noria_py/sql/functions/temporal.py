"""Date and time functions with MariaDB's semantics.

DATE_ADD and friends, EXTRACT, the part extractors (YEAR, WEEK, ...), DATE_FORMAT and
STR_TO_DATE, UNIX_TIMESTAMP and time zones, and the session clock (NOW, CURDATE, ...).

A date argument may be a DATE, a DATETIME, a TIME or a string or number that MySQL reads as a
date; an invalid one gives NULL. Functions whose result column is a string in MariaDB when the
argument is a string (DATE_ADD('2024-01-31', ...), ADDTIME('10:00', ...)) return a ``str``.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
import time as _time
from decimal import Decimal, InvalidOperation

from ..values import DATE, DATETIME, DECIMAL, INT, STR, TIME
from . import NOT_CONST, Context, register
from .coerce import (
    TIME_MAX,
    ColumnFloat,
    TemporalText,
    clamp_time,
    has_time_part,
    to_date,
    to_datetime,
    to_decimal,
    to_int,
    to_num,
    to_str,
    to_time,
)

_US = 1_000_000
_DAY_US = 86400 * _US
_EPOCH = _dt.datetime(1970, 1, 1)
_TS_MAX = 2147483647  # MariaDB 10.11's TIMESTAMP range ends at 2038-01-19 03:14:07 UTC

_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# unit -> the fields of its compound form (MariaDB reads a string amount into these)
_UNIT_FIELDS = {
    "YEAR_MONTH": ("year", "month"),
    "DAY_HOUR": ("day", "hour"),
    "DAY_MINUTE": ("day", "hour", "minute"),
    "DAY_SECOND": ("day", "hour", "minute", "second"),
    "DAY_MICROSECOND": ("day", "hour", "minute", "second", "us"),
    "HOUR_MINUTE": ("hour", "minute"),
    "HOUR_SECOND": ("hour", "minute", "second"),
    "HOUR_MICROSECOND": ("hour", "minute", "second", "us"),
    "MINUTE_SECOND": ("minute", "second"),
    "MINUTE_MICROSECOND": ("minute", "second", "us"),
    "SECOND_MICROSECOND": ("second", "us"),
}
_FIELD_US = {"day": _DAY_US, "hour": 3600 * _US, "minute": 60 * _US, "second": _US, "us": 1}
_DATE_UNITS = frozenset(("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "YEAR_MONTH"))
_MONTH_UNITS = frozenset(("YEAR", "QUARTER", "MONTH", "YEAR_MONTH"))


def _unit(u) -> str:
    return str(u).upper().strip()


# --- small helpers ---------------------------------------------------------------------------


def _td_us(t: _dt.timedelta) -> int:
    return t.days * _DAY_US + t.seconds * _US + t.microseconds


def _frac_digits(v) -> int:
    """Fractional digits a value carries as a literal (a string '...:05.50' has 2)."""
    t = type(v)
    if t is str or t is bytes:
        s = v.decode("utf-8", "replace") if t is bytes else v
        m = re.search(r"\.(\d+)\s*$", s)
        return min(len(m.group(1)), 6) if m else 0
    if t is Decimal:
        e = v.as_tuple().exponent
        return min(-e, 6) if isinstance(e, int) and e < 0 else 0
    if t is float or t is ColumnFloat:
        return 6
    if t is _dt.datetime or t is _dt.timedelta:
        return 6 if (v.microsecond if t is _dt.datetime else v.microseconds) else 0
    return 0


def _clamp(t: _dt.timedelta, *args) -> _dt.timedelta:
    """TIME's range, ending at 838:59:59.999999 when an argument has a fraction."""
    top = TIME_MAX
    if any(_frac_digits(a) for a in args):
        top = TIME_MAX + _dt.timedelta(microseconds=999999)
    if t > top:
        return top
    if t < -top:
        return -top
    return t


def _fmt_date(d) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _fmt_dt(d: _dt.datetime, digits: int) -> str:
    s = f"{_fmt_date(d)} {d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    if digits:
        s += "." + f"{d.microsecond:06d}"[:digits]
    return s


def _fmt_td(t: _dt.timedelta, digits: int) -> str:
    us = _td_us(t)
    sign = "-" if us < 0 else ""
    secs, frac = divmod(abs(us), _US)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    out = f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if digits:
        out += "." + f"{frac:06d}"[:digits]
    return out


def _days_in_month(y: int, m: int) -> int:
    return calendar.monthrange(y, m)[1]


def _add_months(d, months: int):
    total = d.year * 12 + d.month - 1 + months
    y, m0 = divmod(total, 12)
    if not 1 <= y <= 9999:
        return None
    return d.replace(year=y, month=m0 + 1, day=min(d.day, _days_in_month(y, m0 + 1)))


def _daynr(d: _dt.date) -> int:
    """MySQL's day number (TO_DAYS): 0000-01-01 is day 1."""
    return d.toordinal() + 365


_TIME_STR = re.compile(
    r"^\s*([+-])?(?:(\d+)\s+)?(\d+)(?::(\d{1,2})(?::(\d{1,2}))?)?(?:\.(\d*))?\s*$"
)
# a time followed by other characters ('3x'): MariaDB reads it up to them
_TIME_PREFIX = re.compile(
    r"^\s*[+-]?(?:\d+\s+)?\d+(?::\d{1,2}(?::\d{1,2})?)?(?:\.\d*)?(?=\s*[^\d\s])"
)
_DATEISH = re.compile(r"^\s*\d{1,4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]+(.*))?$")
_TIME_NUM_MAX = 8385959


def _tod(d: _dt.datetime) -> _dt.timedelta:
    return _dt.timedelta(
        hours=d.hour, minutes=d.minute, seconds=d.second, microseconds=d.microsecond
    )


def _time_str(s: str) -> _dt.timedelta | None:
    """'[-][D ]HH[:MM[:SS]][.frac]' or a bare HHMMSS number as a TIME."""
    m = _TIME_STR.match(s)
    if not m:
        return None
    sign = -1 if m.group(1) == "-" else 1
    days = int(m.group(2) or 0)
    if m.group(4) is None and m.group(2) is None:
        h, rest = divmod(int(m.group(3)), 10000)
        mi, sec = divmod(rest, 100)
    else:
        h, mi, sec = int(m.group(3)), int(m.group(4) or 0), int(m.group(5) or 0)
    if mi > 59 or sec > 59:
        return None
    us = int((m.group(6) or "")[:6].ljust(6, "0"))
    return sign * _dt.timedelta(days=days, hours=h, minutes=mi, seconds=sec, microseconds=us)


_MAX_TIME = _dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999)


def _read_time(v, exact: bool = False) -> _dt.timedelta | None:
    """A value where MariaDB wants a TIME (a datetime string gives its time of day). A string
    that is not wholly one is read as MariaDB reads it, with a warning: a date alone as its
    leading digits (HHMMSS), eight digits as HHHHMMSS beyond TIME's range (its largest value),
    a time followed by other characters up to them; unless ``exact``."""
    t = type(v)
    if t is _dt.timedelta:
        return v
    if t is _dt.datetime:
        return _tod(v)
    if t is _dt.date:
        return _dt.timedelta(0)
    if t is str or t is bytes:
        s = v.decode("utf-8", "replace") if t is bytes else v
        m = _DATEISH.match(s)
        if m:
            rest = m.group(1)
            if rest and rest.strip():  # a datetime: its time of day, if it is a valid one
                d = to_datetime(s)
                return None if d is None else _tod(d)
            # a date alone: MariaDB reads its leading digits as HHMMSS
            return _time_str(re.match(r"\s*(\d+)", s).group(1))
        m = re.match(r"^\s*(\d{8,})(\.\d*)?\s*$", s)
        if m:
            if len(m.group(1)) == 8:  # HHHHMMSS: more hours than a TIME holds
                n = int(m.group(1))
                if n // 100 % 100 > 59 or n % 100 > 59:
                    return None
                return _MAX_TIME if n >= 8390000 else _time_str(m.group(1))
            d = to_datetime(s)
            return None if d is None else _tod(d)
        r = _time_str(s)
        if r is None and not exact:
            m = _TIME_PREFIX.match(s)
            if m:
                r = _time_str(m.group(0))
        return r
    n = to_num(v)
    if n is None:
        return None
    if abs(n) > _TIME_NUM_MAX:
        d = to_datetime(n)
        return None if d is None else _tod(d)
    return to_time(n)


# --- intervals -------------------------------------------------------------------------------


def _int_prefix(s: str) -> int:
    m = re.match(r"\s*([+-]?\d+)", s)
    return int(m.group(1)) if m else 0


def _interval(amount, unit: str) -> tuple[int, int] | None:
    """(months, microseconds) of ``INTERVAL amount unit``; None when MySQL gives NULL."""
    unit = _unit(unit)
    if unit in _UNIT_FIELDS:
        return _compound_interval(amount, unit)
    if unit == "SECOND" and type(amount) is not int:
        if isinstance(amount, (str, bytes)):
            s = to_str(amount)
            m = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+))", s)
            d = Decimal(m.group(1)) if m else Decimal(0)
        else:
            d = to_decimal(amount)
        try:
            us = int((d * _US).to_integral_value(rounding="ROUND_DOWN"))
        except InvalidOperation:
            return None
        return 0, us
    if isinstance(amount, (str, bytes)):
        n = _int_prefix(to_str(amount))
    else:
        n = to_int(amount)
    if unit == "MICROSECOND":
        return 0, n
    if unit == "SECOND":
        return 0, n * _US
    if unit == "MINUTE":
        return 0, n * 60 * _US
    if unit == "HOUR":
        return 0, n * 3600 * _US
    if unit == "DAY":
        return 0, n * _DAY_US
    if unit == "WEEK":
        return 0, n * 7 * _DAY_US
    if unit == "MONTH":
        return n, 0
    if unit == "QUARTER":
        return 3 * n, 0
    if unit == "YEAR":
        return 12 * n, 0
    return None


def _compound_interval(amount, unit: str) -> tuple[int, int] | None:
    fields = _UNIT_FIELDS[unit]
    s = to_str(amount)
    i = 0
    n = len(s)
    while i < n and s[i].isspace():
        i += 1
    neg = i < n and s[i] == "-"
    if neg:
        i += 1
    while i < n and not s[i].isdigit():
        i += 1
    count = len(fields)
    values: list[int] = []
    last_len = 0
    while len(values) < count:
        j = i
        while j < n and s[j].isdigit():
            j += 1
        values.append(int(s[i:j]) if j > i else 0)
        last_len = j - i
        i = j
        while i < n and not s[i].isdigit():
            i += 1
        if i >= n:
            break
    if i < n:
        return None  # more parts than the unit has
    if fields[-1] == "us" and 0 < last_len < 6:
        values[-1] *= 10 ** (6 - last_len)
    elif fields[-1] == "us" and last_len > 6:
        values[-1] //= 10 ** (last_len - 6)
    values = [0] * (count - len(values)) + values
    sign = -1 if neg else 1
    if fields[0] == "year":
        return sign * (values[0] * 12 + values[1]), 0
    us = sum(v * _FIELD_US[f] for f, v in zip(fields, values, strict=True))
    return 0, sign * us


def _interval_digits(amount, unit: str) -> int:
    unit = _unit(unit)
    if unit == "MICROSECOND" or unit.endswith("_MICROSECOND"):
        return 6
    if unit == "SECOND":
        if isinstance(amount, (str, bytes, float)):
            return 6
        if type(amount) is Decimal:
            return _frac_digits(amount)
    return 0


def _apply(v, months: int, us: int, weekly: bool = False):
    """``v + INTERVAL``: v is a datetime, date or timedelta; None when out of range."""
    if isinstance(v, _dt.timedelta):
        if months or weekly:
            return None
        r = v + _dt.timedelta(microseconds=us)
        return None if abs(r) > TIME_MAX + _dt.timedelta(microseconds=999999) else r
    if months:
        return _add_months(v, months)
    if type(v) is _dt.date and us % _DAY_US == 0:
        try:
            return v + _dt.timedelta(days=us // _DAY_US)
        except OverflowError:
            return None
    if type(v) is _dt.date:
        v = _dt.datetime(v.year, v.month, v.day)
    try:
        return v + _dt.timedelta(microseconds=us)
    except OverflowError:
        return None


def _date_add(d, amount, unit, sign: int = 1):
    unit = _unit(unit)
    iv = _interval(amount, unit)
    if iv is None:
        return None
    months, us = iv[0] * sign, iv[1] * sign
    t = type(d)
    if t is _dt.timedelta:
        return _apply(d, months, us, unit in _MONTH_UNITS or unit == "WEEK")
    if t is _dt.datetime:
        return _apply(d, months, us)
    if t is _dt.date:
        r = _apply(d, months, us)
        if r is not None and unit not in _DATE_UNITS and type(r) is _dt.date:
            r = _dt.datetime(r.year, r.month, r.day)
        return r
    # a string or number: MariaDB's result column is a string
    base = to_datetime(d)
    if base is None:
        return None
    with_time = has_time_part(d) or unit not in _DATE_UNITS
    r = _apply(base, months, us)
    if r is None:
        return None
    if not with_time:
        return TemporalText(_fmt_date(r), r.date() if type(r) is _dt.datetime else r)
    digits = max(
        _frac_digits(d) if isinstance(d, (str, bytes)) else 0, _interval_digits(amount, unit)
    )
    if isinstance(d, (Decimal, float)):
        digits = max(digits, _frac_digits(d))
    return TemporalText(_fmt_dt(r, digits), r)


def _date_add_kind(arg_kinds: list[str], consts: list) -> str:
    k = arg_kinds[0]
    unit = consts[2] if len(consts) > 2 else "DAY"
    unit = "DAY" if unit is NOT_CONST else _unit(unit)
    if k == DATE:
        return DATE if unit in _DATE_UNITS else DATETIME
    if k == DATETIME:
        return DATETIME
    if k == TIME:
        return DATETIME if unit in _MONTH_UNITS or unit == "WEEK" else TIME
    return STR


@register("DATE_ADD", ret=_date_add_kind, args=3)
def date_add(d, amount, unit):
    """``d + INTERVAL amount unit``."""
    return _date_add(d, amount, unit)


@register("DATE_SUB", ret=_date_add_kind, args=3)
def date_sub(d, amount, unit):
    """``d - INTERVAL amount unit``."""
    return _date_add(d, amount, unit, -1)


def _adddate_kind(arg_kinds: list[str], consts: list) -> str:
    if len(arg_kinds) == 2:
        return _date_add_kind(arg_kinds[:1], [NOT_CONST, NOT_CONST, "DAY"])
    return _date_add_kind(arg_kinds, consts)


@register("ADDDATE", ret=_adddate_kind, args=(2, 3))
def adddate(d, amount, unit="DAY"):
    """ADDDATE(d, days) or ADDDATE(d, amount, unit)."""
    return _date_add(d, amount, unit)


@register("SUBDATE", ret=_adddate_kind, args=(2, 3))
def subdate(d, amount, unit="DAY"):
    """SUBDATE(d, days) or SUBDATE(d, amount, unit)."""
    return _date_add(d, amount, unit, -1)


def _tsadd_kind(arg_kinds: list[str], consts: list) -> str:
    return _date_add_kind([arg_kinds[2]], [NOT_CONST, NOT_CONST, consts[0]])


@register("TIMESTAMPADD", ret=_tsadd_kind, args=3)
def timestampadd(unit, n, d):
    """TIMESTAMPADD(unit, n, d) = d + INTERVAL n unit."""
    return _date_add(d, n, unit)


# --- differences -----------------------------------------------------------------------------


@register("TIMESTAMPDIFF", ret=INT, args=3)
def timestampdiff(unit, a, b):
    """b - a in whole units (months counted as MySQL does)."""
    unit = _unit(unit)
    x, y = to_datetime(a), to_datetime(b)
    if x is None or y is None:
        return None
    if unit in ("MONTH", "QUARTER", "YEAR"):
        neg = y < x
        beg, end = (y, x) if neg else (x, y)
        years = end.year - beg.year
        if end.month < beg.month or (end.month == beg.month and end.day < beg.day):
            years -= 1
        months = 12 * years
        if end.month < beg.month or (end.month == beg.month and end.day < beg.day):
            months += 12 - (beg.month - end.month)
        else:
            months += end.month - beg.month
        if end.day < beg.day:
            months -= 1
        elif end.day == beg.day and end.time() < beg.time():
            months -= 1
        n = months if unit == "MONTH" else months // 3 if unit == "QUARTER" else months // 12
        return -n if neg else n
    diff = _td_us(y - x)
    per = {
        "MICROSECOND": 1, "SECOND": _US, "MINUTE": 60 * _US, "HOUR": 3600 * _US,
        "DAY": _DAY_US, "WEEK": 7 * _DAY_US,
    }.get(unit)  # fmt: skip
    if per is None:
        return None
    if unit != "MICROSECOND":
        # whole seconds first, as MySQL's calc_time_diff does
        q = abs(diff) // _US // (per // _US)
    else:
        q = abs(diff)
    return -q if diff < 0 else q


@register("DATEDIFF", ret=INT, args=2)
def datediff(a, b):
    """Days from b to a (date parts only)."""
    x, y = to_date(a), to_date(b)
    if x is None or y is None:
        return None
    return (x - y).days


def _time_or_dt_kind(arg_kinds: list[str], consts: list) -> str:
    k = arg_kinds[0]
    if k in (DATETIME, DATE):
        return DATETIME
    if k == TIME:
        return TIME
    return STR


def _addtime(a, b, sign: int):
    t2 = _read_time(b) if not isinstance(b, _dt.datetime) else None
    if t2 is None:
        return None
    delta = _dt.timedelta(microseconds=sign * _td_us(t2))
    if type(a) is _dt.datetime or type(a) is _dt.date:
        base = to_datetime(a)
        try:
            r = base + delta
        except OverflowError:
            return None
        return r if 1 <= r.year <= 9999 else None
    if type(a) is _dt.timedelta:
        return _clamp(a + delta, a, b)
    # a string result: MariaDB prints six fractional digits when there is a fraction
    s = to_str(a)
    if has_time_part(s) and to_datetime(s) is not None:
        try:
            r = to_datetime(s) + delta
        except OverflowError:
            return None
        # a string that stands for its datetime in numeric context (+ 0 is 20240101020203)
        return TemporalText(_fmt_dt(r, 6 if r.microsecond else 0), r)
    t1 = _read_time(s)
    if t1 is None:
        return None
    r = _clamp(t1 + delta, a, b)
    return TemporalText(_fmt_td(r, 6 if r.microseconds else 0), r)


@register("ADDTIME", ret=_time_or_dt_kind, args=2)
def addtime(a, b):
    """a + b where b is a TIME."""
    return _addtime(a, b, 1)


@register("SUBTIME", ret=_time_or_dt_kind, args=2)
def subtime(a, b):
    """a - b where b is a TIME."""
    return _addtime(a, b, -1)


def _dt_or_time(v):
    """(category, value) of a TIMEDIFF argument: a DATETIME, a DATE or a TIME (MySQL answers
    NULL for two different categories)."""
    if type(v) is _dt.timedelta:
        return "time", v
    if type(v) is _dt.datetime:
        return "datetime", v
    if type(v) is _dt.date:
        return "date", to_datetime(v)
    s = to_str(v)
    if isinstance(v, (str, bytes)) and has_time_part(s) and to_datetime(s) is not None:
        return "datetime", to_datetime(s)
    if isinstance(v, (str, bytes)) and re.match(r"^\s*\d{1,4}-\d{1,2}-\d{1,2}\s*$", s):
        return "date", to_datetime(s)
    return "time", _read_time(v)


@register("TIMEDIFF", ret=TIME, args=2)
def timediff(a, b):
    """a - b as a TIME (both DATETIMEs or both TIMEs), clamped to TIME's range."""
    ka, x = _dt_or_time(a)
    kb, y = _dt_or_time(b)
    if x is None or y is None or ka != kb:
        return None
    return _clamp(x - y, a, b)


def _time_to_sec_kind(arg_kinds: list[str], consts: list) -> str:
    c = consts[0]
    if c is not NOT_CONST and _frac_digits(c):
        return DECIMAL
    return DECIMAL if arg_kinds[0] in (DECIMAL,) else INT


@register("TIME_TO_SEC", ret=_time_to_sec_kind)
def time_to_sec(v):
    """Seconds in a TIME (a DECIMAL when it has a fraction)."""
    t = _read_time(v)
    if t is None:
        return None
    us = _td_us(t)
    digits = _frac_digits(v) if isinstance(v, (str, bytes, Decimal)) else (6 if us % _US else 0)
    if digits:
        return (Decimal(us) / _US).quantize(Decimal(1).scaleb(-digits))
    sign = -1 if us < 0 else 1
    return sign * (abs(us) // _US)


def _sec_to_time_digits(v) -> int:
    return _frac_digits(v) if type(v) in (Decimal, float, str) else 0


@register("SEC_TO_TIME", ret=TIME)
def sec__read_time(v):
    """A number of seconds as a TIME, clamped to TIME's range."""
    n = to_num(v)
    d = Decimal(repr(n)) if type(n) is float else Decimal(n)
    digits = _sec_to_time_digits(v)
    us = int((d * _US).to_integral_value(rounding="ROUND_DOWN"))
    if digits < 6:
        q = 10 ** (6 - digits)
        us = int(us / q) * q
    if abs(us) > _td_us(TIME_MAX):
        return -TIME_MAX if us < 0 else TIME_MAX
    return _dt.timedelta(microseconds=us)


@register("MAKETIME", ret=TIME, args=3)
def maketime(h, m, s):
    """A TIME from hours, minutes and seconds; NULL for minutes or seconds out of 0-59."""
    hh = to_int(h)
    mm = to_int(m)
    sd = to_decimal(s)
    if mm < 0 or mm > 59 or sd < 0 or sd >= 60:
        return None
    us = int((sd * _US).to_integral_value(rounding="ROUND_DOWN"))
    neg = hh < 0 or (hh == 0 and isinstance(h, (str, Decimal, float)) and str(h).startswith("-"))
    total = (abs(hh) * 3600 + mm * 60) * _US + us
    t = _dt.timedelta(microseconds=-total if neg else total)
    return clamp_time(t)


@register("MAKEDATE", ret=DATE, args=2)
def makedate(y, doy):
    """The date of day ``doy`` of year ``y``; NULL when doy < 1."""
    yy = to_int(y)
    n = to_int(doy)
    if n <= 0 or yy < 0 or yy > 9999:
        return None
    if yy < 70:
        yy += 2000
    elif yy < 100:
        yy += 1900
    try:
        r = _dt.date(yy, 1, 1) + _dt.timedelta(days=n - 1)
    except (OverflowError, ValueError):
        return None
    return r if r.year <= 9999 else None


@register("TIME", ret=TIME)
def time_(v):
    """The TIME part of a value."""
    t = _read_time(v)
    return None if t is None else clamp_time(t)


@register("DATE", ret=DATE)
def date_(v):
    """The DATE part of a value."""
    if type(v) is _dt.timedelta:
        return to_date(v)
    return to_date(v)


@register("TIMESTAMP", ret=DATETIME, args=(1, 2))
def timestamp(v, t=None):
    """TIMESTAMP(expr) as a DATETIME; TIMESTAMP(expr, time) adds the time."""
    d = to_datetime(v)
    if d is None:
        return None
    if t is None:
        return d
    tt = _read_time(t)
    if tt is None:
        return None
    try:
        r = d + tt
    except OverflowError:
        return None
    return r if 1 <= r.year <= 9999 else None


# --- parts -----------------------------------------------------------------------------------

_ZERO_IN_DATE = re.compile(r"^\s*(\d{1,4})[-/.:](\d{1,2})[-/.:](\d{1,2})(?:[ T].*)?$")
_ZERO_DIGITS = re.compile(r"^\s*(\d{6}|\d{8})\s*$")


def _ymd(v, exact: bool = False) -> tuple[int, int, int] | None:
    """(year, month, day) of a date, allowing MariaDB's zero month or day ('2024-00-00');
    ``exact``: a valid date with other characters after it is not one."""
    d = to_datetime(v, not exact)
    if d is not None:
        return d.year, d.month, d.day
    if not isinstance(v, (str, bytes)):
        return None
    text = to_str(v)
    m = _ZERO_IN_DATE.match(text)
    if m:
        ys, mo, day = m.group(1), int(m.group(2)), int(m.group(3))
    else:
        m = _ZERO_DIGITS.match(text)  # YYMMDD or YYYYMMDD
        if not m:
            return None
        d = m.group(1)
        ys, mo, day = d[:-4], int(d[-4:-2]), int(d[-2:])
    y = int(ys)
    if len(ys) <= 2:
        y += 2000 if y < 70 else 1900
    if mo > 12 or day > 31 or (mo and day) or (mo and day > _days_in_month(max(y, 1), mo)):
        return None
    return y, mo, day


def _ymd_part(fn):
    def impl(v):
        r = _ymd(v)
        return None if r is None else fn(*r)

    return impl


register("YEAR", ret=INT)(_ymd_part(lambda y, m, d: y))
register("MONTH", ret=INT)(_ymd_part(lambda y, m, d: m))
register("DAY", "DAYOFMONTH", ret=INT)(_ymd_part(lambda y, m, d: d))
register("QUARTER", ret=INT)(_ymd_part(lambda y, m, d: (m + 2) // 3))


def _part(fn):
    def impl(v):
        d = to_datetime(v)
        return None if d is None else fn(d)

    impl.__doc__ = fn.__doc__
    return impl


register("DAYOFWEEK", ret=INT)(_part(lambda d: (d.weekday() + 1) % 7 + 1))
register("WEEKDAY", ret=INT)(_part(lambda d: d.weekday()))
register("DAYOFYEAR", ret=INT)(_part(lambda d: d.timetuple().tm_yday))
register("DAYNAME", ret=STR)(_part(lambda d: _DAYS[d.weekday()]))
register("MONTHNAME", ret=STR)(_ymd_part(lambda y, m, d: _MONTHS[m - 1] if m else None))
register("TO_DAYS", ret=INT)(_part(lambda d: _daynr(d.date())))


@register("TO_SECONDS", ret=INT)
def to_seconds(v):
    """Seconds since year 0."""
    d = to_datetime(v)
    if d is None:
        return None
    return _daynr(d.date()) * 86400 + d.hour * 3600 + d.minute * 60 + d.second


@register("LAST_DAY", ret=DATE)
def last_day(v):
    """The last day of the month of a date (a zero day is allowed: '2024-02-00')."""
    r = _ymd(v)
    if r is None or not r[1] or not 1 <= r[0] <= 9999:
        return None
    return _dt.date(r[0], r[1], _days_in_month(r[0], r[1]))


@register("FROM_DAYS", ret=DATE)
def from_days(n):
    """The date of MySQL day number n (NULL below day 366, where MySQL gives 0000-00-00)."""
    k = to_int(n)
    if k < 366 or k > 3652424:
        return None
    return _dt.date.fromordinal(k - 365)


def _time_part(fn):
    def impl(v):
        if type(v) in (_dt.datetime, _dt.date):
            t = _read_time(v)
        else:
            t = _read_time(v)
        if t is None:
            return None
        us = abs(_td_us(t))
        return fn(us)

    return impl


register("HOUR", ret=INT)(_time_part(lambda us: us // (3600 * _US)))
register("MINUTE", ret=INT)(_time_part(lambda us: us // (60 * _US) % 60))
register("SECOND", ret=INT)(_time_part(lambda us: us // _US % 60))
register("MICROSECOND", ret=INT)(_time_part(lambda us: us % _US))


# --- weeks -----------------------------------------------------------------------------------

_MONDAY_FIRST = 1
_WEEK_YEAR = 2
_FIRST_WEEKDAY = 4


def _calc_week(d: _dt.date, behaviour: int) -> tuple[int, int]:
    """MySQL's calc_week: (week number, year it belongs to)."""
    daynr = _daynr(d)
    first_daynr = _daynr(_dt.date(d.year, 1, 1))
    monday_first = behaviour & _MONDAY_FIRST
    week_year = behaviour & _WEEK_YEAR
    first_weekday = behaviour & _FIRST_WEEKDAY
    weekday = (first_daynr + 5 + (0 if monday_first else 1)) % 7
    year = d.year
    if d.month == 1 and d.day <= 7 - weekday:
        if not week_year and (
            (first_weekday and weekday != 0) or (not first_weekday and weekday >= 4)
        ):
            return 0, year
        week_year = 1
        year -= 1
        days = 366 if calendar.isleap(year) else 365
        first_daynr -= days
        weekday = (weekday + 53 * 7 - days) % 7
    if (first_weekday and weekday != 0) or (not first_weekday and weekday >= 4):
        days = daynr - (first_daynr + (7 - weekday))
    else:
        days = daynr - (first_daynr - weekday)
    if week_year and days >= 52 * 7:
        weekday = (weekday + (366 if calendar.isleap(year) else 365)) % 7
        if (not first_weekday and weekday < 4) or (first_weekday and weekday == 0):
            return 1, year + 1
    return days // 7 + 1, year


def _week_mode(mode: int) -> int:
    m = mode & 7
    if not m & _MONDAY_FIRST:
        m ^= _FIRST_WEEKDAY
    return m


@register("WEEK", ret=INT, args=(1, 2))
def week(v, mode=0):
    """Week number in mode 0-7."""
    d = to_datetime(v)
    if d is None:
        return None
    return _calc_week(d.date(), _week_mode(to_int(mode)))[0]


@register("WEEKOFYEAR", ret=INT)
def weekofyear(v):
    """WEEK(v, 3)."""
    d = to_datetime(v)
    return None if d is None else _calc_week(d.date(), _week_mode(3))[0]


@register("YEARWEEK", ret=INT, args=(1, 2))
def yearweek(v, mode=0):
    """Year and week as YYYYWW."""
    d = to_datetime(v)
    if d is None:
        return None
    w, y = _calc_week(d.date(), _week_mode(to_int(mode)) | _WEEK_YEAR)
    return y * 100 + w


# --- EXTRACT ---------------------------------------------------------------------------------


@register("EXTRACT", ret=INT, args=2)
def extract(unit, v):
    """EXTRACT(unit FROM v), compound units included."""
    unit = _unit(unit)
    date_unit = unit in ("YEAR", "QUARTER", "MONTH", "WEEK", "YEAR_MONTH")
    if isinstance(v, (str, bytes)):
        sv = to_str(v)
        as_time = not (_DATEISH.match(sv) or re.match(r"^\s*\d{6,}(\.\d*)?\s*$", sv))
    else:
        as_time = type(v) is _dt.timedelta
    if as_time and date_unit and type(v) is not _dt.timedelta:
        as_time = False
    if as_time:
        if date_unit:
            return 0 if unit != "WEEK" else None
        t = _read_time(v)
        if t is None:
            return None
        us_all = _td_us(t)
        sign = -1 if us_all < 0 else 1
        us_all = abs(us_all)
        secs, us = divmod(us_all, _US)
        hours, rem = divmod(secs, 3600)
        mi, s = divmod(rem, 60)
        day, h = divmod(hours, 24)
    else:
        d = to_datetime(v)
        if d is None:
            ymd = _ymd(v)
            if ymd is None or unit == "WEEK":
                return None
            y, mo, day = ymd
            part = {"YEAR": y, "QUARTER": (mo + 2) // 3, "MONTH": mo, "YEAR_MONTH": y * 100 + mo}
            return part.get(unit, day if unit == "DAY" else 0)
        sign = 1
        day, h, mi, s, us = d.day, d.hour, d.minute, d.second, d.microsecond
        if unit == "YEAR":
            return d.year
        if unit == "QUARTER":
            return (d.month + 2) // 3
        if unit == "MONTH":
            return d.month
        if unit == "WEEK":
            return _calc_week(d.date(), _week_mode(0))[0]
        if unit == "YEAR_MONTH":
            return d.year * 100 + d.month
    r = {
        "DAY": day,
        "HOUR": h,
        "MINUTE": mi,
        "SECOND": s,
        "MICROSECOND": us,
        "DAY_HOUR": day * 100 + h,
        "DAY_MINUTE": day * 10000 + h * 100 + mi,
        "DAY_SECOND": day * 1000000 + h * 10000 + mi * 100 + s,
        "DAY_MICROSECOND": (day * 1000000 + h * 10000 + mi * 100 + s) * _US + us,
        "HOUR_MINUTE": h * 100 + mi,
        "HOUR_SECOND": h * 10000 + mi * 100 + s,
        "HOUR_MICROSECOND": (h * 10000 + mi * 100 + s) * _US + us,
        "MINUTE_SECOND": mi * 100 + s,
        "MINUTE_MICROSECOND": (mi * 100 + s) * _US + us,
        "SECOND_MICROSECOND": s * _US + us,
    }.get(unit)
    return None if r is None else sign * r


# --- periods ---------------------------------------------------------------------------------


def _period_to_months(p: int) -> int:
    if p == 0:
        return 0
    y, m = divmod(p, 100)
    if y < 70:
        y += 2000
    elif y < 100:
        y += 1900
    return y * 12 + m - 1


def _months_to_period(n: int) -> int:
    if n == 0:
        return 0
    y, m = divmod(n, 12)
    return y * 100 + m + 1


@register("PERIOD_ADD", ret=INT, args=2)
def period_add(p, n):
    """Add n months to period YYMM or YYYYMM."""
    pp = to_int(p)
    if pp == 0:
        return 0
    return _months_to_period(_period_to_months(pp) + to_int(n))


@register("PERIOD_DIFF", ret=INT, args=2)
def period_diff(p1, p2):
    """Months between periods p1 and p2."""
    return _period_to_months(to_int(p1)) - _period_to_months(to_int(p2))


# --- formatting ------------------------------------------------------------------------------


def _suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _format(d: _dt.datetime, fmt: str) -> str:
    out: list[str] = []
    i = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        f = fmt[i + 1]
        i += 2
        h12 = d.hour % 12 or 12
        if f == "a":
            out.append(_DAYS[d.weekday()][:3])
        elif f == "b":
            out.append(_MONTHS[d.month - 1][:3])
        elif f == "c":
            out.append(str(d.month))
        elif f == "D":
            out.append(f"{d.day}{_suffix(d.day)}")
        elif f == "d":
            out.append(f"{d.day:02d}")
        elif f == "e":
            out.append(str(d.day))
        elif f == "f":
            out.append(f"{d.microsecond:06d}")
        elif f == "H":
            out.append(f"{d.hour:02d}")
        elif f in "hI":
            out.append(f"{h12:02d}")
        elif f == "i":
            out.append(f"{d.minute:02d}")
        elif f == "j":
            out.append(f"{d.timetuple().tm_yday:03d}")
        elif f == "k":
            out.append(str(d.hour))
        elif f == "l":
            out.append(str(h12))
        elif f == "M":
            out.append(_MONTHS[d.month - 1])
        elif f == "m":
            out.append(f"{d.month:02d}")
        elif f == "p":
            out.append("AM" if d.hour < 12 else "PM")
        elif f == "r":
            out.append(f"{h12:02d}:{d.minute:02d}:{d.second:02d} {'AM' if d.hour < 12 else 'PM'}")
        elif f in "Ss":
            out.append(f"{d.second:02d}")
        elif f == "T":
            out.append(f"{d.hour:02d}:{d.minute:02d}:{d.second:02d}")
        elif f == "U":
            out.append(f"{_calc_week(d.date(), _FIRST_WEEKDAY)[0]:02d}")
        elif f == "u":
            out.append(f"{_calc_week(d.date(), _MONDAY_FIRST)[0]:02d}")
        elif f == "V":
            out.append(f"{_calc_week(d.date(), _WEEK_YEAR | _FIRST_WEEKDAY)[0]:02d}")
        elif f == "v":
            out.append(f"{_calc_week(d.date(), _WEEK_YEAR | _MONDAY_FIRST)[0]:02d}")
        elif f == "W":
            out.append(_DAYS[d.weekday()])
        elif f == "w":
            out.append(str((d.weekday() + 1) % 7))
        elif f == "X":
            out.append(f"{_calc_week(d.date(), _WEEK_YEAR | _FIRST_WEEKDAY)[1]:04d}")
        elif f == "x":
            out.append(f"{_calc_week(d.date(), _WEEK_YEAR | _MONDAY_FIRST)[1]:04d}")
        elif f == "Y":
            out.append(f"{d.year:04d}")
        elif f == "y":
            out.append(f"{d.year % 100:02d}")
        else:
            out.append(f)
    return "".join(out)


@register("DATE_FORMAT", ret=STR, args=(2, 3))
def date_format(v, fmt, locale=None):
    """Format a date with MySQL's % specifiers."""
    d = to_datetime(v)
    if d is None:
        return None
    return _format(d, to_str(fmt))


@register("TIME_FORMAT", ret=STR, args=2)
def time_format(v, fmt):
    """Format a TIME; hours may exceed 24; a date specifier gives NULL."""
    t = _read_time(v)
    if t is None:
        return None
    us = _td_us(t)
    neg = us < 0
    secs, frac = divmod(abs(us), _US)
    hours, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    f = to_str(fmt)
    out: list[str] = ["-"] if neg else []
    i = 0
    n = len(f)
    while i < n:
        c = f[i]
        if c != "%" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        x = f[i + 1]
        i += 2
        h12 = hours % 12 or 12
        ampm = "AM" if hours % 24 < 12 else "PM"
        if x in "HkhIlipfrSsT%":
            out.append(
                {
                    "H": f"{hours:02d}",
                    "k": str(hours),
                    "h": f"{h12:02d}",
                    "I": f"{h12:02d}",
                    "l": str(h12),
                    "i": f"{mi:02d}",
                    "p": ampm,
                    "f": f"{frac:06d}",
                    "r": f"{h12:02d}:{mi:02d}:{s:02d} {ampm}",
                    "S": f"{s:02d}",
                    "s": f"{s:02d}",
                    "T": f"{hours:02d}:{mi:02d}:{s:02d}",
                    "%": "%",
                }[x]
            )
        elif x in "abcDdejMmUuVvWwXxYy":
            return None
        else:
            out.append(x)
    return "".join(out)


_GET_FORMATS = {
    ("DATE", "USA"): "%m.%d.%Y",
    ("DATE", "JIS"): "%Y-%m-%d",
    ("DATE", "ISO"): "%Y-%m-%d",
    ("DATE", "EUR"): "%d.%m.%Y",
    ("DATE", "INTERNAL"): "%Y%m%d",
    ("DATETIME", "USA"): "%Y-%m-%d %H.%i.%s",
    ("DATETIME", "JIS"): "%Y-%m-%d %H:%i:%s",
    ("DATETIME", "ISO"): "%Y-%m-%d %H:%i:%s",
    ("DATETIME", "EUR"): "%Y-%m-%d %H.%i.%s",
    ("DATETIME", "INTERNAL"): "%Y%m%d%H%i%s",
    ("TIME", "USA"): "%h:%i:%s %p",
    ("TIME", "JIS"): "%H:%i:%s",
    ("TIME", "ISO"): "%H:%i:%s",
    ("TIME", "EUR"): "%H.%i.%s",
    ("TIME", "INTERNAL"): "%H%i%s",
}


@register("GET_FORMAT", ret=STR, args=2)
def get_format(kind, standard):
    """GET_FORMAT(DATE|TIME|DATETIME|TIMESTAMP, 'EUR'|'USA'|'JIS'|'ISO'|'INTERNAL')."""
    k = to_str(kind).upper().strip()
    if k == "TIMESTAMP":
        k = "DATETIME"
    return _GET_FORMATS.get((k, to_str(standard).upper().strip()))


# --- STR_TO_DATE -----------------------------------------------------------------------------

_DATE_SPECS = frozenset("abcDdejMmUuVvWwXxYy")
_TIME_SPECS = frozenset("fHhIiklpSsrT")


def _format_kind(fmt: str) -> str:
    has_date = has_time = frac = False
    i = 0
    while i < len(fmt) - 1:
        if fmt[i] == "%":
            c = fmt[i + 1]
            if c in _DATE_SPECS:
                has_date = True
            elif c in _TIME_SPECS:
                has_time = True
                if c == "f":
                    frac = True
            i += 2
        else:
            i += 1
    del frac
    if has_date and has_time:
        return DATETIME
    if has_time:
        return TIME
    return DATE


def _str_to_date_kind(arg_kinds: list[str], consts: list) -> str:
    c = consts[1] if len(consts) > 1 else NOT_CONST
    if c is NOT_CONST or c is None:
        return DATETIME
    return _format_kind(to_str(c))


def _name_prefix(s: str, pos: int, names: list[str], abbrev: bool) -> tuple[int, int] | None:
    for idx, name in enumerate(names):
        nm = name[:3] if abbrev else name
        if s[pos : pos + len(nm)].lower() == nm.lower():
            return idx, pos + len(nm)
    return None


class _Parsed:
    __slots__ = (
        "year", "month", "day", "hour", "minute", "second", "us", "yday", "week", "weekday",
        "usa", "pm", "sunday_first", "strict_week", "week_year", "week_year_sunday",
    )  # fmt: skip

    def __init__(self) -> None:
        self.year = self.month = self.day = 0
        self.hour = self.minute = self.second = self.us = 0
        self.yday = 0
        self.week = -1
        self.weekday = 0
        self.usa = False
        self.pm = 0
        self.sunday_first = False
        self.strict_week = False
        self.week_year = -1
        self.week_year_sunday = False


def _num(s: str, pos: int, width: int) -> tuple[int, int]:
    """Up to ``width`` characters of a number (sign allowed, as my_strtoll10): (value, end)."""
    end = min(len(s), pos + width)
    i = pos
    neg = False
    if i < end and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    j = i
    while j < end and s[j].isdigit():
        j += 1
    if j == i:
        return 0, pos
    v = int(s[i:j])
    return (-v if neg else v), j


def _parse(s: str, pos: int, fmt: str, p: _Parsed) -> int:
    """MySQL's extract_date_time: the position after what ``fmt`` matched, or -1."""
    i = 0
    n = len(fmt)
    while i < n and pos < len(s):
        while pos < len(s) and s[pos].isspace():
            pos += 1
        if pos >= len(s):
            break
        c = fmt[i]
        if c != "%" or i + 1 >= n:
            i += 1
            if not c.isspace():
                if s[pos] != c:
                    return -1
                pos += 1
            continue
        f = fmt[i + 1]
        i += 2
        start = pos
        if f in "Yy":
            v, pos = _num(s, pos, 4 if f == "Y" else 2)
            if f == "y" or pos - start <= 2:
                v = v + 2000 if v < 70 else v + 1900 if v < 100 else v
            p.year = v
        elif f in "mc":
            p.month, pos = _num(s, pos, 2)
        elif f in "Mb":
            r = _name_prefix(s, pos, _MONTHS, f == "b")
            if r is None:
                return -1
            p.month, pos = r[0] + 1, r[1]
        elif f in "de":
            p.day, pos = _num(s, pos, 2)
        elif f == "D":
            p.day, pos = _num(s, pos, 2)
            pos = min(len(s), pos + 2)
        elif f in "hIl":
            p.hour, pos = _num(s, pos, 2)
            p.usa = True
        elif f in "kH":
            p.hour, pos = _num(s, pos, 2)
        elif f == "i":
            p.minute, pos = _num(s, pos, 2)
        elif f in "sS":
            p.second, pos = _num(s, pos, 2)
        elif f == "f":
            v, pos = _num(s, pos, 6)
            p.us = v * 10 ** (6 - (pos - start))
        elif f == "p":
            w = s[pos : pos + 2].upper()
            if w not in ("AM", "PM"):
                return -1
            p.pm = 12 if w == "PM" else 0
            pos += 2
        elif f in "Wa":
            r = _name_prefix(s, pos, _DAYS, f == "a")
            if r is None:
                return -1
            p.weekday, pos = r[0] + 1, r[1]
        elif f == "w":
            v, pos = _num(s, pos, 1)
            if v < 0 or v >= 7:
                return -1
            p.weekday = v or 7
        elif f == "j":
            p.yday, pos = _num(s, pos, 3)
        elif f in "UVuv":
            p.sunday_first = f in "UV"
            p.strict_week = f in "Vv"
            p.week, pos = _num(s, pos, 2)
        elif f in "Xx":
            p.week_year_sunday = f == "X"
            p.week_year, pos = _num(s, pos, 4)
        elif f in "rT":
            pos = _parse(s, pos, "%I:%i:%S %p" if f == "r" else "%H:%i:%S", p)
            if pos < 0:
                return -1
        elif f == ".":
            while pos < len(s) and not s[pos].isalnum():
                pos += 1
        elif f == "@":
            while pos < len(s) and s[pos].isalpha():
                pos += 1
        elif f == "#":
            while pos < len(s) and s[pos].isdigit():
                pos += 1
        else:
            return -1
    return pos


def _finish(p: _Parsed):
    """The parsed parts as (year, month, day, hour, minute, second, us) or None."""
    if p.usa:
        if p.hour > 12 or p.hour < 1:
            return None
        p.hour = p.hour % 12 + p.pm
    if p.yday > 0:
        days = _daynr(_dt.date(max(p.year, 1), 1, 1)) + p.yday - 1 if p.year >= 1 else 0
        if days <= 365 or days > 3652424:
            return None
        d = _dt.date.fromordinal(days - 365)
        p.year, p.month, p.day = d.year, d.month, d.day
    if p.week >= 0 and p.weekday:
        if (p.strict_week and (p.week_year < 0 or p.week_year_sunday != p.sunday_first)) or (
            not p.strict_week and p.week_year >= 0
        ):
            return None
        y = p.week_year if p.strict_week else p.year
        if not 1 <= y <= 9999:
            return None
        days = _daynr(_dt.date(y, 1, 1))
        wd = (days + 5 + (1 if p.sunday_first else 0)) % 7
        if p.sunday_first:
            days += (0 if wd == 0 else 7) - wd + (p.week - 1) * 7 + p.weekday % 7
        else:
            days += (0 if wd <= 3 else 7) - wd + (p.week - 1) * 7 + p.weekday - 1
        if days <= 365 or days > 3652424:
            return None
        d = _dt.date.fromordinal(days - 365)
        p.year, p.month, p.day = d.year, d.month, d.day
    if p.month > 12 or p.day > 31 or p.hour > 23 or p.minute > 59 or p.second > 59:
        return None
    if min(p.month, p.day, p.hour, p.minute, p.second, p.year) < 0:
        return None
    return p.year, p.month, p.day, p.hour, p.minute, p.second, p.us


@register("STR_TO_DATE", ret=_str_to_date_kind, args=2)
def str_to_date(s, fmt):
    """Parse a string with a DATE_FORMAT format; the kind follows the format's parts."""
    f = to_str(fmt)
    p = _Parsed()
    if _parse(to_str(s), 0, f, p) < 0:
        return None
    parts = _finish(p)
    if parts is None:
        return None
    y, mo, d, h, mi, sec, us = parts
    kind = _format_kind(f)
    if kind == TIME:
        return _dt.timedelta(hours=h, minutes=mi, seconds=sec, microseconds=us)
    try:
        r = _dt.datetime(y, mo, d, h, mi, sec, us)
    except ValueError:
        return None
    return r.date() if kind == DATE else r


# --- time zones and the clock ----------------------------------------------------------------

_OFFSET_RE = re.compile(r"^\s*([+-])(\d{1,2}):(\d{2})\s*$")


def _offset(tz) -> _dt.timedelta | None | str:
    """A '+HH:MM' zone as a timedelta, 'SYSTEM' as the string 'SYSTEM', anything else None."""
    s = to_str(tz)
    if s is None:
        return None
    if s.strip().upper() == "SYSTEM":
        return "SYSTEM"
    m = _OFFSET_RE.match(s)
    if not m:
        return None
    h, mi = int(m.group(2)), int(m.group(3))
    if mi > 59:
        return None
    off = _dt.timedelta(hours=h, minutes=mi)
    if m.group(1) == "-":
        off = -off
    if off > _dt.timedelta(hours=14) or off < -_dt.timedelta(hours=13, minutes=59):
        return None
    return off


def _to_epoch(d: _dt.datetime, zone) -> Decimal | None:
    """Seconds since the epoch of a local time ``d`` in ``zone`` (an offset or 'SYSTEM')."""
    if zone == "SYSTEM":
        secs = int(_time.mktime(d.replace(microsecond=0).timetuple()))
    else:
        secs = int((d.replace(microsecond=0) - zone - _EPOCH).total_seconds())
    return Decimal(secs) + Decimal(d.microsecond).scaleb(-6)


def _from_epoch(secs: int, zone) -> _dt.datetime:
    if zone == "SYSTEM":
        return _dt.datetime.fromtimestamp(secs)
    return _EPOCH + _dt.timedelta(seconds=secs) + zone


def _session_zone(ctx: Context):
    z = _offset(ctx.time_zone)
    return "SYSTEM" if z is None else z


def _unix_ts_kind(arg_kinds: list[str], consts: list) -> str:
    if not arg_kinds:
        return INT
    c = consts[0]
    if c is not NOT_CONST and c is not None:
        return DECIMAL if _frac_digits(c) else INT
    return DECIMAL if arg_kinds[0] in (DECIMAL, STR) else INT


@register("UNIX_TIMESTAMP", ret=_unix_ts_kind, args=(0, 1), context=True, deterministic=False)
def unix_timestamp(ctx: Context, v=None):
    """Seconds since 1970-01-01 UTC of v (or now) read in the session time zone."""
    zone = _session_zone(ctx)
    if v is None:
        now = ctx.now if ctx.now is not None else _now_in(zone)
        return int(_to_epoch(now, zone))
    d = to_datetime(v)
    if d is None:
        return None
    e = _to_epoch(d, zone)
    if e < 0 or e > _TS_MAX:
        return None
    digits = _frac_digits(v) if not isinstance(v, _dt.datetime) else (6 if d.microsecond else 0)
    if digits:
        return e.quantize(Decimal(1).scaleb(-digits), rounding="ROUND_DOWN")
    return int(e)


def _from_unixtime_kind(arg_kinds: list[str], consts: list) -> str:
    return STR if len(arg_kinds) > 1 else DATETIME


@register("FROM_UNIXTIME", ret=_from_unixtime_kind, args=(1, 2), context=True, deterministic=False)
def from_unixtime(ctx: Context, n, fmt=None):
    """The session-zone DATETIME of a Unix timestamp; with a format, a string."""
    if isinstance(n, (str, bytes)):
        num = to_num(n)
        d = Decimal(repr(num)) if type(num) is float else Decimal(num)
    else:
        d = to_decimal(n)
    if d < 0 or d > _TS_MAX:
        return None
    secs = int(d)
    us = int(((d - secs) * _US).to_integral_value(rounding="ROUND_DOWN"))
    r = _from_epoch(secs, _session_zone(ctx)).replace(microsecond=us)
    if fmt is None:
        return r
    return _format(r, to_str(fmt))


@register("CONVERT_TZ", ret=DATETIME, args=3)
def convert_tz(v, from_tz, to_tz):
    """Convert a DATETIME from one zone to another ('+HH:MM' or 'SYSTEM'; named zones: NULL)."""
    d = to_datetime(v)
    if d is None:
        return None
    a, b = _offset(from_tz), _offset(to_tz)
    if a is None or b is None:
        return None
    e = _to_epoch(d, a)
    if e < 0 or e > _TS_MAX:
        return d
    return _from_epoch(int(e), b).replace(microsecond=d.microsecond)


def _now_in(zone) -> _dt.datetime:
    if zone == "SYSTEM":
        return _dt.datetime.now()
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None) + zone


def _ctx_now(ctx: Context) -> _dt.datetime:
    return ctx.now if ctx.now is not None else _now_in(_session_zone(ctx))


def _utc_now(ctx: Context) -> _dt.datetime:
    zone = _session_zone(ctx)
    now = _ctx_now(ctx)
    if zone == "SYSTEM":
        secs = _time.mktime(now.replace(microsecond=0).timetuple())
        return _dt.datetime.fromtimestamp(secs, _dt.UTC).replace(
            tzinfo=None, microsecond=now.microsecond
        )
    return now - zone


def _trunc(d, fsp):
    p = 0 if fsp is None else max(0, min(6, to_int(fsp)))
    q = 10 ** (6 - p)
    if isinstance(d, _dt.timedelta):
        return _dt.timedelta(microseconds=_td_us(d) // q * q)
    return d.replace(microsecond=d.microsecond // q * q)


@register(
    "NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP",
    ret=DATETIME, args=(0, 1), context=True, deterministic=False, strict=False,
)  # fmt: skip
def now(ctx: Context, fsp=None):
    """The statement's start time in the session time zone."""
    return _trunc(_ctx_now(ctx), fsp)


@register("SYSDATE", ret=DATETIME, args=(0, 1), context=True, deterministic=False, strict=False)
def sysdate(ctx: Context, fsp=None):
    """The time the function runs (not the statement's start)."""
    return _trunc(_now_in(_session_zone(ctx)), fsp)


@register("CURDATE", "CURRENT_DATE", ret=DATE, args=0, context=True, deterministic=False)
def curdate(ctx: Context):
    """Today in the session time zone."""
    return _ctx_now(ctx).date()


@register(
    "CURTIME", "CURRENT_TIME",
    ret=TIME, args=(0, 1), context=True, deterministic=False, strict=False,
)  # fmt: skip
def curtime(ctx: Context, fsp=None):
    """The time of day in the session time zone."""
    return _trunc(_tod(_ctx_now(ctx)), fsp)


@register("UTC_DATE", ret=DATE, args=0, context=True, deterministic=False)
def utc_date(ctx: Context):
    """Today in UTC."""
    return _utc_now(ctx).date()


@register("UTC_TIME", ret=TIME, args=(0, 1), context=True, deterministic=False, strict=False)
def utc_time(ctx: Context, fsp=None):
    """The UTC time of day."""
    return _trunc(_tod(_utc_now(ctx)), fsp)


@register(
    "UTC_TIMESTAMP", ret=DATETIME, args=(0, 1), context=True, deterministic=False, strict=False
)
def utc_timestamp(ctx: Context, fsp=None):
    """The current UTC date and time."""
    return _trunc(_utc_now(ctx), fsp)

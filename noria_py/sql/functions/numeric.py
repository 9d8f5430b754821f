"""MySQL's numeric functions with MariaDB 10.11 semantics.

The result type follows the argument's: exact arguments (INT, DECIMAL) give exact results and
round half away from zero; DOUBLE arguments (and strings, which MySQL reads as DOUBLE) give
DOUBLE results computed as MariaDB does (``rint``, so half to even, for ROUND of a DOUBLE).
"""

from __future__ import annotations

import datetime as _dt
import math
import random
from decimal import (
    ROUND_CEILING,
    ROUND_DOWN,
    ROUND_FLOOR,
    ROUND_HALF_UP,
    Context,
    Decimal,
    localcontext,
)

from ...errors import DataError
from ..values import BYTES, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, TIME, kind_of_value
from . import NOT_CONST, register
from .coerce import ColumnFloat, to_bytes, to_datetime, to_float, to_num, to_str
from .strings import half_away_int, int_arg, my_double_round

DECIMAL_MAX_SCALE = 38
_BIG = Context(prec=400, Emax=999999, Emin=-999999)
_I64_MIN = -(1 << 63)
_U64 = 1 << 64
ER_DATA_OUT_OF_RANGE = 1690


def _out_of_range(kind: str, what: str) -> DataError:
    return DataError(f"{kind} value is out of range in '{what}'", ER_DATA_OUT_OF_RANGE, "22003")


def _exact(v):
    """The argument in numeric context: int, Decimal or float (strings become float)."""
    n = to_num(v)
    if isinstance(n, bool):
        return int(n)
    return n


def _norm(d: Decimal) -> Decimal:
    """A Decimal with a positive exponent (1E+3) written out at scale 0, as DECIMAL holds it."""
    if d.as_tuple().exponent > 0:
        with localcontext(_BIG):
            return d.quantize(Decimal(1))
    return d


def _int_digits(d: Decimal) -> int:
    with localcontext(_BIG):
        i = int(d.copy_abs())
    return len(str(i)) if i else 0


def numeric_kind(kind: str) -> str:
    """The numeric kind an argument of ``kind`` has in arithmetic."""
    if kind in (INT, DATE):
        return INT
    if kind in (DECIMAL, DATETIME, TIME):
        return DECIMAL if kind == DECIMAL else INT
    return FLOAT


def _same_kind(kinds: list[str], consts: list) -> str:
    return numeric_kind(kinds[0]) if kinds else FLOAT


def _exact_int_kind(kinds: list[str], consts: list) -> str:
    """CEIL/FLOOR: an integer for exact arguments, DOUBLE otherwise."""
    k = numeric_kind(kinds[0]) if kinds else FLOAT
    return INT if k in (INT, DECIMAL) else FLOAT


# --- sign, abs, ceil, floor ----------------------------------------------------------------


def _abs_kind(kinds: list[str], consts: list) -> str:
    if kinds and kinds[0] in (DATE, DATETIME, TIME):
        return DECIMAL
    return _same_kind(kinds, consts)


@register("ABS", ret=_abs_kind)
def abs_(x):
    """ABS(X) of the argument's type (a DECIMAL for a temporal argument)."""
    n = _exact(x)
    if isinstance(x, (_dt.date, _dt.timedelta)):
        return Decimal(n).copy_abs()
    if isinstance(n, int):
        if n == _I64_MIN:
            raise _out_of_range("BIGINT", f"abs({n})")
        return abs(n)
    if isinstance(n, Decimal):
        return _norm(n.copy_abs())
    return abs(float(n))


@register("SIGN", ret=INT)
def sign(x) -> int:
    """-1, 0 or 1."""
    n = _exact(x)
    return (n > 0) - (n < 0)


def _ceil_floor(x, up: bool):
    n = _exact(x)
    if isinstance(n, int):
        return n
    if isinstance(n, Decimal):
        with localcontext(_BIG):
            return int(n.to_integral_value(ROUND_CEILING if up else ROUND_FLOOR))
    v = float(n)
    if math.isinf(v) or v != v:
        return v
    r = float(math.ceil(v) if up else math.floor(v))
    return math.copysign(r, v) if r == 0 else r


@register("CEIL", "CEILING", ret=_exact_int_kind)
def ceil(x):
    """The smallest integer not below X (a DOUBLE for a DOUBLE argument)."""
    return _ceil_floor(x, True)


@register("FLOOR", ret=_exact_int_kind)
def floor(x):
    """The largest integer not above X."""
    return _ceil_floor(x, False)


# --- ROUND, TRUNCATE -----------------------------------------------------------------------


def _round_int(n: int, d: int, truncate: bool) -> int:
    if d >= 0:
        return n
    if -d > 40:
        return 0
    m = 10 ** (-d)
    q, r = divmod(abs(n), m)
    if not truncate and 2 * r >= m:
        q += 1
    return (q * m) if n >= 0 else -(q * m)


def _round_dec(n: Decimal, d: int, truncate: bool) -> Decimal:
    mode = ROUND_DOWN if truncate else ROUND_HALF_UP
    scale = min(max(d, 0), DECIMAL_MAX_SCALE)
    with localcontext(_BIG):
        if d < 0:
            if -d > 100:
                return Decimal(0)
            r = n.quantize(Decimal(1).scaleb(-d), rounding=mode)
            return r.quantize(Decimal(1)) if r else Decimal(0)
        d = min(d, DECIMAL_MAX_SCALE)
        r = n.quantize(Decimal(1).scaleb(-d), rounding=mode)
        r = r.quantize(Decimal(1).scaleb(-scale))
        if not r and r.is_signed():
            r = -r
        return r


def _int_round_is_decimal(n, places: int, truncate: bool) -> bool:
    """ROUND(int, D < 0) may gain a digit: MariaDB makes it a DECIMAL when the argument's
    display width (digits and sign) plus one exceeds 10."""
    return not truncate and places < 0 and len(str(n)) + 1 > 10


def _round_kind(truncate: bool):
    def ret(kinds: list[str], consts: list) -> str:
        k = numeric_kind(kinds[0]) if kinds else FLOAT
        if k != INT or truncate or len(kinds) < 2:
            return k
        x = consts[0] if consts else NOT_CONST
        d = consts[1] if len(consts) > 1 else NOT_CONST
        if d is NOT_CONST or d is None:
            return DECIMAL
        if int_arg(d) >= 0:
            return INT
        if x is NOT_CONST:
            return DECIMAL  # INT and BIGINT columns are wider than 9 characters
        return DECIMAL if x is not None and _int_round_is_decimal(x, int_arg(d), False) else INT

    return ret


def _round(x, d, truncate: bool):
    n = _exact(x)
    places = int_arg(d)
    if isinstance(n, int):
        r = _round_int(n, places, truncate)
        return Decimal(r) if _int_round_is_decimal(n, places, truncate) else r
    if isinstance(n, Decimal):
        return _round_dec(n, places, truncate)
    return my_double_round(float(n), places, truncate)


@register("ROUND", ret=_round_kind(False), args=(1, 2))
def round_(x, d=0):
    """ROUND(X[, D]): exact values half away from zero, DOUBLEs half to even (rint)."""
    return _round(x, d, False)


@register("TRUNCATE", ret=_round_kind(True), args=2)
def truncate(x, d):
    """TRUNCATE(X, D): X cut (toward zero) to D decimals; D < 0 zeroes integer digits."""
    return _round(x, d, True)


# --- MOD and arithmetic helpers ------------------------------------------------------------


def arith_kind(kinds: list[str], consts: list) -> str:
    """The kind of +, -, *, MOD of arguments of these kinds."""
    ks = [numeric_kind(k) for k in kinds]
    if FLOAT in ks:
        return FLOAT
    if DECIMAL in ks:
        return DECIMAL
    return INT


def _arith_values(a, b):
    """The two arguments as one numeric type: (x, y, kind)."""
    x, y = _exact(a), _exact(b)
    if isinstance(x, float) or isinstance(y, float):
        return float(x), float(y), FLOAT
    if isinstance(x, Decimal) or isinstance(y, Decimal):
        return Decimal(x), Decimal(y), DECIMAL
    return x, y, INT


@register("MOD", ret=arith_kind, args=2)
def mod(a, b):
    """MOD(N, M): the remainder with the sign of N; NULL when M is 0."""
    x, y, k = _arith_values(a, b)
    if not y:
        return None
    if k == INT:
        r = abs(x) % abs(y)
        return -r if x < 0 else r
    if k == DECIMAL:
        with localcontext(_BIG):
            r = _norm(x % y)
        # A zero remainder keeps the dividend's sign (-0.0), except where MariaDB's word-wise
        # division zeroes it: scale 0 and a divisor with at most 9 integer digits.
        if not r and (not x or (r.as_tuple().exponent >= 0 and _int_digits(y) <= 9)):
            r = r.copy_abs()
        return r
    return math.fmod(x, y)


# --- DOUBLE functions ----------------------------------------------------------------------


def _finite(v: float, what: str) -> float:
    if math.isinf(v) or v != v:
        raise _out_of_range("DOUBLE", what)
    return v


@register("POW", "POWER", ret=FLOAT, args=2)
def pow_(x, y) -> float:
    """X raised to Y; an infinite or undefined result is an out-of-range error."""
    a, b = to_float(x), to_float(y)
    try:
        return _finite(math.pow(a, b), "pow")
    except (OverflowError, ValueError, ZeroDivisionError):
        raise _out_of_range("DOUBLE", "pow") from None


@register("SQRT", ret=FLOAT)
def sqrt(x) -> float | None:
    """Square root; NULL for a negative argument."""
    v = to_float(x)
    return None if v < 0 else math.sqrt(v)


@register("EXP", ret=FLOAT)
def exp(x) -> float:
    """e raised to X."""
    try:
        return _finite(math.exp(to_float(x)), "exp")
    except OverflowError:
        raise _out_of_range("DOUBLE", "exp") from None


@register("LN", ret=FLOAT)
def ln(x) -> float | None:
    """Natural logarithm; NULL for X <= 0."""
    v = to_float(x)
    return None if v <= 0 else math.log(v)


@register("LOG", ret=FLOAT, args=(1, 2))
def log(x, y=None) -> float | None:
    """LOG(X) is LN(X); LOG(B, X) the logarithm of X to base B (NULL for B = 1, B or X <= 0)."""
    if y is None:
        return ln(x)
    b, v = to_float(x), to_float(y)
    if b <= 0 or v <= 0 or b == 1:
        return None
    return math.log(v) / math.log(b)


@register("LOG2", ret=FLOAT)
def log2(x) -> float | None:
    """Base-2 logarithm; NULL for X <= 0."""
    v = to_float(x)
    return None if v <= 0 else math.log(v) / math.log(2.0)


@register("LOG10", ret=FLOAT)
def log10(x) -> float | None:
    """Base-10 logarithm; NULL for X <= 0."""
    v = to_float(x)
    return None if v <= 0 else math.log10(v)


@register("PI", ret=FLOAT, args=0)
def pi() -> float:
    """The double closest to pi (MariaDB shows 6 decimals)."""
    return math.pi


@register("SIN", ret=FLOAT)
def sin(x) -> float:
    """Sine of X radians."""
    return math.sin(to_float(x))


@register("COS", ret=FLOAT)
def cos(x) -> float:
    """Cosine of X radians."""
    return math.cos(to_float(x))


@register("TAN", ret=FLOAT)
def tan(x) -> float:
    """Tangent of X radians."""
    return _finite(math.tan(to_float(x)), "tan")


@register("COT", ret=FLOAT)
def cot(x) -> float:
    """Cotangent; COT(0) is an out-of-range error."""
    t = math.tan(to_float(x))
    if t == 0:
        raise _out_of_range("DOUBLE", "cot")
    return _finite(1.0 / t, "cot")


@register("ASIN", ret=FLOAT)
def asin(x) -> float | None:
    """Arc sine; NULL outside [-1, 1]."""
    v = to_float(x)
    return None if v < -1 or v > 1 else math.asin(v)


@register("ACOS", ret=FLOAT)
def acos(x) -> float | None:
    """Arc cosine; NULL outside [-1, 1]."""
    v = to_float(x)
    return None if v < -1 or v > 1 else math.acos(v)


@register("ATAN", ret=FLOAT, args=(1, 2))
def atan(y, x=None) -> float:
    """ATAN(X), or ATAN(Y, X) = ATAN2(Y, X)."""
    if x is None:
        return math.atan(to_float(y))
    return math.atan2(to_float(y), to_float(x))


@register("ATAN2", ret=FLOAT, args=2)
def atan2(y, x) -> float:
    """The angle of the point (X, Y)."""
    return math.atan2(to_float(y), to_float(x))


@register("DEGREES", ret=FLOAT)
def degrees(x) -> float:
    """Radians to degrees."""
    return _finite(to_float(x) * (180.0 / math.pi), "degrees")


@register("RADIANS", ret=FLOAT)
def radians(x) -> float:
    """Degrees to radians."""
    return to_float(x) * (math.pi / 180.0)


_RND_MAX = 0x3FFFFFFF


@register("RAND", ret=FLOAT, args=(0, 1), deterministic=False, strict=False)
def rand(seed=None) -> float:
    """RAND() in [0, 1); RAND(N) is the first value of MariaDB's sequence seeded with N."""
    if seed is None:
        return random.random()
    t = int_arg(seed) & 0xFFFFFFFF
    s1 = ((t * 0x10001 + 55555555) & 0xFFFFFFFF) % _RND_MAX
    s2 = ((t * 0x10000001) & 0xFFFFFFFF) % _RND_MAX
    s1 = (s1 * 3 + s2) % _RND_MAX
    return s1 / float(_RND_MAX)


@register("BIT_COUNT", ret=INT)
def bit_count(x) -> int:
    """The number of bits set in X as a 64-bit integer (rounded half away, saturating)."""
    v = _exact(x)
    if isinstance(v, float):
        if v != v:
            return 0
        if v >= 1.8446744073709552e19:
            return 64
        if v <= -9.223372036854775808e18:
            return 1
        v = Decimal(repr(v))
    n = half_away_int(v) if isinstance(v, Decimal) else v
    if n >= _U64:
        n = _U64 - 1
    elif n < _I64_MIN:
        n = _I64_MIN
    return bin(n % _U64).count("1")


# --- GREATEST, LEAST, INTERVAL -------------------------------------------------------------

_TEMPORAL = (DATE, DATETIME, TIME)


def minmax_kind(kinds: list[str], consts: list) -> str:
    """The kind of GREATEST/LEAST: MySQL's aggregation of the argument kinds."""
    ks = [k for k in kinds if k != "null"] or [FLOAT]
    if all(k in (STR, BYTES) for k in ks):
        return BYTES if BYTES in ks else STR
    temporal = [k for k in ks if k in _TEMPORAL]
    if temporal:
        if DATETIME in temporal or (DATE in temporal and TIME in temporal):
            return DATETIME
        return temporal[0]
    nk = [numeric_kind(k) if k not in (STR, BYTES) else FLOAT for k in ks]
    if FLOAT in nk:
        return FLOAT
    if DECIMAL in nk:
        return DECIMAL
    return INT


def _kind_of(v) -> str:
    if isinstance(v, bytearray):
        return BYTES
    return kind_of_value(v)


def _minmax(args, greatest: bool, coll):
    kind = minmax_kind([_kind_of(a) for a in args], [])
    better = (lambda c: c > 0) if greatest else (lambda c: c < 0)
    if kind in (STR, BYTES):
        if kind == BYTES or coll is None:
            vals = [to_bytes(a) for a in args]
            best = vals[0]
            for v in vals[1:]:
                a, b = v.rstrip(b" "), best.rstrip(b" ")
                if better((a > b) - (a < b)):
                    best = v
            return best
        best = to_str(args[0])
        for a in args[1:]:
            s = to_str(a)
            if better(coll.cmp(s, best)):
                best = s
        return best
    if kind in _TEMPORAL:
        if kind == TIME:
            from .coerce import to_time

            vals = [to_time(a) for a in args]
        else:
            vals = [to_datetime(a) for a in args]
        if any(v is None for v in vals):
            return None
        best = max(vals) if greatest else min(vals)
        return best.date() if kind == DATE else best
    if kind == FLOAT:
        vals = [to_float(a) for a in args]
        best = max(vals) if greatest else min(vals)
        if all(type(a) is ColumnFloat for a in args):
            return args[vals.index(best)]  # GREATEST(f, f) of FLOAT columns is a FLOAT
        return best
    nums = [_exact(a) for a in args]
    best = nums[0]
    for v in nums[1:]:
        if (v > best) if greatest else (v < best):
            best = v
    if kind == DECIMAL:
        scale = max(-n.as_tuple().exponent for n in nums if isinstance(n, Decimal))
        with localcontext(_BIG):
            return Decimal(best).quantize(Decimal(1).scaleb(-max(scale, 0)))
    if any(v >= 1 << 63 for v in nums) and any(v < 1 << 63 for v in nums):
        return Decimal(best)  # BIGINT UNSIGNED mixed with signed: MariaDB compares as DECIMAL
    return best


@register("GREATEST", ret=minmax_kind, args=(2, None), collation=True)
def greatest(*args, coll=None):
    """The largest argument under MySQL's comparison rules; NULL when any is NULL."""
    return _minmax(args, True, coll)


@register("LEAST", ret=minmax_kind, args=(2, None), collation=True)
def least(*args, coll=None):
    """The smallest argument under MySQL's comparison rules; NULL when any is NULL."""
    return _minmax(args, False, coll)


@register("INTERVAL", ret=INT, args=(2, None), strict=False)
def interval(n, *bounds) -> int:
    """INTERVAL(N, N1, N2, ...): the number of bounds <= N before the first one above it
    (bounds sorted ascending); -1 for a NULL N; NULL bounds are skipped."""
    if n is None:
        return -1
    vals = [n, *bounds]
    use_float = any(isinstance(_exact(v), float) for v in vals if v is not None)
    conv = to_float if use_float else _exact
    x = conv(n)
    for i, b in enumerate(bounds):
        if b is None:
            continue
        if x < conv(b):
            return i
    return len(bounds)

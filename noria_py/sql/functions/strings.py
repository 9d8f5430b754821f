"""MySQL's string functions with MariaDB 10.11 semantics (utf8mb4, characters not bytes).

A string argument that is a binary string (``bytes``) makes the function work on bytes and give
a binary string, as MariaDB does for BINARY/BLOB arguments; anything else is converted to its
string form first (``to_str``). Functions that compare strings take the collation as ``coll``.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
import zlib
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, localcontext

from ..values import BYTES, DECIMAL, FLOAT, INT, NULL, STR
from . import register
from .coerce import to_bytes, to_int, to_num, to_str

MAX_ALLOWED_PACKET = 16 * 1024 * 1024  # MariaDB 10.11's default max_allowed_packet
BIG_CONTEXT = Context(prec=400, Emax=999999, Emin=-999999)
_U64 = 1 << 64


# --- helpers -------------------------------------------------------------------------------


def _sv(v) -> str | bytes:
    """A string argument: bytes stay bytes (binary string), anything else becomes a str."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    return to_str(v)


def _common(*vals) -> list:
    """Convert string arguments to one type: all bytes when any of them is bytes."""
    svals = [_sv(v) for v in vals]
    if any(isinstance(s, bytes) for s in svals):
        return [s if isinstance(s, bytes) else s.encode("utf-8", "surrogateescape") for s in svals]
    return svals


def str_kind(*positions: int):
    """``ret`` for a string result: BYTES when an argument at ``positions`` (all when none
    are given) is a binary string, else STR."""

    def ret(kinds: list[str], consts: list) -> str:
        idx = positions or range(len(kinds))
        return BYTES if any(i < len(kinds) and kinds[i] == BYTES for i in idx) else STR

    return ret


def int_arg(v) -> int:
    """An argument where MariaDB wants an integer (val_int): exact numbers round half away
    from zero, DOUBLEs (and strings, read as DOUBLE) with rint, half to even; saturating."""
    n = to_num(v)
    if isinstance(n, float):
        if n != n:
            return 0
        if n <= -9.223372036854775808e18:
            return -(1 << 63)
        if n >= 9.223372036854775807e18:
            return (1 << 63) - 1
        return int(_rint(n))
    if isinstance(n, Decimal):
        return max(-(1 << 63), min(half_away_int(n), (1 << 63) - 1))
    return to_int(n)


def half_away_int(d: Decimal) -> int:
    """A DECIMAL rounded half away from zero to an integer (any size)."""
    with localcontext(BIG_CONTEXT):
        return int(d.to_integral_value(ROUND_HALF_UP))


def _u64(n: int) -> int:
    return n % _U64


def _eq_nopad(coll, a: str, b: str) -> bool:
    """Equality under ``coll`` without PAD SPACE (trailing spaces count), as strnncoll."""
    if coll is None or isinstance(a, bytes) or isinstance(b, bytes):
        return to_bytes(a) == to_bytes(b)
    return coll.eq(a + "x", b + "x")


def _eq_pad(coll, a, b) -> bool:
    if coll is None or isinstance(a, bytes) or isinstance(b, bytes):
        return to_bytes(a).rstrip(b" ") == to_bytes(b).rstrip(b" ")
    return coll.eq(a, b)


def _instr(coll, hay: str | bytes, needle: str | bytes, start: int = 0) -> int:
    """0-based character index of ``needle`` in ``hay`` at or after ``start``, or -1.

    MariaDB compares windows of the needle's byte length starting at character boundaries
    (my_instr_mb), so 'e' finds 'E' but not 'é' under a case- and accent-insensitive
    collation."""
    if isinstance(hay, bytes) or isinstance(needle, bytes) or coll is None:
        return to_bytes(hay).find(to_bytes(needle), start)
    if coll.case_sensitive and coll.name.endswith("_bin"):
        return hay.find(needle, start)
    nb = len(needle.encode("utf-8", "surrogateescape"))
    n = len(hay)
    for i in range(start, n):
        size = 0
        j = i
        while j < n and size < nb:
            size += len(hay[j].encode("utf-8", "surrogateescape"))
            j += 1
        if size != nb:
            if size < nb:
                break
            continue
        if _eq_nopad(coll, hay[i:j], needle):
            return i
    return -1


# --- case mapping --------------------------------------------------------------------------

# MariaDB's utf8mb4_general_ci case tables predate many Unicode additions: these BMP ranges keep
# their case in UPPER/LOWER (characters outside the BMP always do), found against MariaDB 10.11.
_UPPER_KEEP = (
    (0x0180, 0x0180), (0x019A, 0x019E), (0x023C, 0x0252), (0x025C, 0x025C), (0x0261, 0x0261),
    (0x0265, 0x0266), (0x026A, 0x026C), (0x0271, 0x0271), (0x027D, 0x027D), (0x0282, 0x0282),
    (0x0287, 0x0287), (0x0289, 0x0289), (0x028C, 0x028C), (0x029D, 0x029E), (0x0371, 0x037D),
    (0x03D7, 0x03D9), (0x03F3, 0x03FB), (0x048B, 0x048B), (0x04C6, 0x04C6), (0x04CA, 0x04CA),
    (0x04CE, 0x04CF), (0x04F7, 0x04F7), (0x04FB, 0x052F), (0x10D0, 0x10FF), (0x13F8, 0x13FD),
    (0x1C80, 0x1C88), (0x1D79, 0x1D7D), (0x1D8E, 0x1D8E), (0x1EFB, 0x1EFF), (0x214E, 0x214E),
    (0x2184, 0x2184), (0x2C30, 0x2C76), (0x2C81, 0x2CE3), (0x2CEC, 0x2CF3), (0x2D00, 0x2D2D),
    (0xA641, 0xA66D), (0xA681, 0xA69B), (0xA723, 0xA76F), (0xA77A, 0xA7A9), (0xA7B5, 0xA7D9),
    (0xA7F6, 0xA7F6), (0xAB53, 0xAB53), (0xAB70, 0xABBF),
)  # fmt: skip
_LOWER_KEEP = (
    (0x0220, 0x0220), (0x023A, 0x024E), (0x0370, 0x0376), (0x037F, 0x037F), (0x03CF, 0x03CF),
    (0x03D8, 0x03D8), (0x03F4, 0x03FF), (0x048A, 0x048A), (0x04C0, 0x04C0), (0x04C5, 0x04C5),
    (0x04C9, 0x04C9), (0x04CD, 0x04CD), (0x04F6, 0x04F6), (0x04FA, 0x052E), (0x10A0, 0x10CD),
    (0x13A0, 0x13F5), (0x1C90, 0x1CBF), (0x1E9E, 0x1E9E), (0x1EFA, 0x1EFE), (0x2132, 0x2132),
    (0x2183, 0x2183), (0x2C00, 0x2C2F), (0x2C60, 0x2C75), (0x2C7E, 0x2CE2), (0x2CEB, 0x2CF2),
    (0xA640, 0xA66C), (0xA680, 0xA69A), (0xA722, 0xA76E), (0xA779, 0xA7D8), (0xA7F5, 0xA7F5),
)  # fmt: skip
_UPPER_SPECIAL = {0x03F2: 0x03A3}
_LOWER_SPECIAL = {0x0130: 0x0069}


def _build_case(upper: bool) -> dict[int, str]:
    keep = _UPPER_KEEP if upper else _LOWER_KEEP
    special = _UPPER_SPECIAL if upper else _LOWER_SPECIAL
    table: dict[int, str] = {}
    for cp in range(0x10000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        m = ch.upper() if upper else ch.lower()
        if len(m) != 1:
            # a full mapping to several characters: the simple mapping is the titlecase one
            t = ch.title() if upper else ch
            m = t if len(t) == 1 else ch
        if m != ch:
            table[cp] = m
    for lo, hi in keep:
        for cp in range(lo, hi + 1):
            table.pop(cp, None)
    for cp, to in special.items():
        table[cp] = chr(to)
    return table


_UPPER_TABLE: dict[int, str] | None = None
_LOWER_TABLE: dict[int, str] | None = None


def mysql_upper(s: str) -> str:
    """UPPER with MariaDB's utf8mb4_general_ci simple (one character to one) case mapping."""
    global _UPPER_TABLE
    if s.isascii():
        return s.upper()
    if _UPPER_TABLE is None:
        _UPPER_TABLE = _build_case(True)
    return s.translate(_UPPER_TABLE)


def mysql_lower(s: str) -> str:
    """LOWER with MariaDB's utf8mb4_general_ci simple case mapping."""
    global _LOWER_TABLE
    if s.isascii():
        return s.lower()
    if _LOWER_TABLE is None:
        _LOWER_TABLE = _build_case(False)
    return s.translate(_LOWER_TABLE)


@register("UPPER", "UCASE", ret=str_kind(0))
def upper(s):
    """UPPER(str); binary strings are returned unchanged."""
    s = _sv(s)
    return s if isinstance(s, bytes) else mysql_upper(s)


@register("LOWER", "LCASE", ret=str_kind(0))
def lower(s):
    """LOWER(str); binary strings are returned unchanged."""
    s = _sv(s)
    return s if isinstance(s, bytes) else mysql_lower(s)


# --- lengths and codes ---------------------------------------------------------------------


@register("ASCII", ret=INT)
def ascii_(s) -> int:
    """The first byte of the string, 0 for ''."""
    b = to_bytes(s)
    return b[0] if b else 0


@register("ORD", ret=INT)
def ord_(s) -> int:
    """The first character's bytes as a big-endian number."""
    s = _sv(s)
    if not s:
        return 0
    if isinstance(s, bytes):
        return s[0]
    return int.from_bytes(s[0].encode("utf-8", "surrogateescape"), "big")


@register("BIT_LENGTH", ret=INT)
def bit_length(s) -> int:
    """Length in bits."""
    return 8 * len(to_bytes(s))


@register("LENGTH", "OCTET_LENGTH", ret=INT)
def length(s) -> int:
    """Length in bytes."""
    return len(to_bytes(s))


@register("CHAR_LENGTH", "CHARACTER_LENGTH", ret=INT)
def char_length(s) -> int:
    """Length in characters (bytes for a binary string)."""
    return len(_sv(s))


@register("CHAR", ret=BYTES, args=(1, None), strict=False)
def char_(*args) -> bytes:
    """CHAR(N, ...): each N's low 32 bits as bytes without leading zero bytes; NULLs skipped."""
    out = bytearray()
    for a in args:
        if a is None:
            continue
        n = int_arg(a) & 0xFFFFFFFF
        if n & 0xFF000000:
            out += n.to_bytes(4, "big")
        elif n & 0xFF0000:
            out += n.to_bytes(3, "big")
        elif n & 0xFF00:
            out += n.to_bytes(2, "big")
        else:
            out.append(n)
    return bytes(out)


# --- concatenation and lists ---------------------------------------------------------------


@register("CONCAT", ret=str_kind(), args=(1, None))
def concat(*args):
    """CONCAT(s, ...): NULL when any argument is NULL."""
    vals = _common(*args)
    return (b"" if isinstance(vals[0], bytes) else "").join(vals)


@register("CONCAT_WS", ret=str_kind(), args=(2, None), strict=False)
def concat_ws(sep, *args):
    """CONCAT_WS(sep, s, ...): NULL separator gives NULL, NULL strings are skipped."""
    if sep is None:
        return None
    vals = _common(sep, *[a for a in args if a is not None])
    return vals[0].join(vals[1:])


def _elt_kind(kinds: list[str], consts: list) -> str:
    strs = kinds[1:]
    if any(k == BYTES for k in strs) or (strs and all(k == NULL for k in strs)):
        return BYTES  # NULL literals only: MariaDB types the result binary
    return STR


@register("ELT", ret=_elt_kind, args=(2, None), strict=False)
def elt(n, *strs):
    """ELT(N, s1, s2, ...): the N-th string, NULL when N is out of range."""
    if n is None:
        return None
    i = int_arg(n)
    if i < 1 or i > len(strs) or strs[i - 1] is None:
        return None
    if any(isinstance(s, (bytes, bytearray)) for s in strs):
        return to_bytes(strs[i - 1])
    return to_str(strs[i - 1])


def _set_kind(kinds: list[str], consts: list) -> str:
    return _elt_kind(kinds, consts)


@register("EXPORT_SET", ret=_set_kind, args=(3, 5))
def export_set(bits, on, off, sep=",", count=64):
    """EXPORT_SET(bits, on, off[, sep[, n]]): on/off for each of the n low bits."""
    b = _u64(int_arg(bits))
    n = int_arg(count)
    if n < 0 or n > 64:
        n = 64
    on, off, sep = _common(on, off, sep)
    return sep.join(on if b >> i & 1 else off for i in range(n))


@register("MAKE_SET", ret=_set_kind, args=(2, None), strict=False)
def make_set(bits, *strs):
    """MAKE_SET(bits, s1, ...): the strings whose bit is set, comma-separated; NULLs skipped."""
    if bits is None:
        return None
    b = _u64(int_arg(bits))
    picked = [s for i, s in enumerate(strs) if i < 64 and b >> i & 1 and s is not None]
    vals = _common(",", *picked) if any(isinstance(s, bytes) for s in strs) else None
    if vals is not None:
        return vals[0].join(vals[1:])
    return ",".join(to_str(s) for s in picked)


def _cmp_type(vals: list) -> str:
    """MySQL's comparison type for FIELD/IN-like lists: str only when all are strings."""
    kinds = set()
    for v in vals:
        if v is None:
            continue
        if isinstance(v, bool) or isinstance(v, int):
            kinds.add(INT)
        elif isinstance(v, Decimal):
            kinds.add(DECIMAL)
        elif isinstance(v, float):
            kinds.add(FLOAT)
        else:
            kinds.add(STR)
    if not kinds or kinds == {STR}:
        return STR
    if STR in kinds or FLOAT in kinds:
        return FLOAT
    if DECIMAL in kinds:
        return DECIMAL
    return INT


@register("FIELD", ret=INT, args=(2, None), strict=False, collation=True)
def field(s, *strs, coll=None) -> int:
    """FIELD(s, s1, ...): 1-based index of the first si equal to s, 0 when none (or s NULL)."""
    if s is None:
        return 0
    ct = _cmp_type([s, *strs])
    if ct == STR:
        for i, x in enumerate(strs, 1):
            if x is not None:
                a, b = _common(s, x)
                if _eq_pad(coll, a, b):
                    return i
        return 0
    conv = float if ct == FLOAT else (lambda v: v)
    key = conv(to_num(s))
    for i, x in enumerate(strs, 1):
        if x is not None and conv(to_num(x)) == key:
            return i
    return 0


@register("FIND_IN_SET", ret=INT, args=2, collation=True)
def find_in_set(s, lst, coll=None) -> int:
    """FIND_IN_SET(s, 'a,b,c'): 1-based position of s in the comma list, 0 when absent."""
    s, lst = _common(s, lst)
    comma = b"," if isinstance(s, bytes) else ","
    if comma in s or not lst:
        return 0
    for i, item in enumerate(lst.split(comma), 1):
        if _eq_nopad(coll, item, s):
            return i
    return 0


# --- FORMAT --------------------------------------------------------------------------------

# (thousands separator, decimal point, group size) of the locales FORMAT knows; MariaDB falls
# back to en_US (with a warning) for a name it does not know.
_LOCALES = {
    "en_US": (",", ".", 3),
    "en_GB": (",", ".", 3),
    "en_AU": (",", ".", 3),
    "en_CA": (",", ".", 3),
    "en_IE": (",", ".", 3),
    "en_NZ": (",", ".", 3),
    "ja_JP": (",", ".", 3),
    "zh_CN": (",", ".", 3),
    "ko_KR": (",", ".", 3),
    "de_DE": (".", ",", 3),
    "de_AT": (".", ",", 3),
    "es_ES": (".", ",", 3),
    "nl_NL": ("", ",", 3),
    "pt_BR": ("", ",", 3),
    "fr_FR": ("", ",", 3),
    "it_IT": ("", ",", 3),
    "ru_RU": (" ", ",", 3),
    "de_CH": ("'", ".", 3),
}
_LOCALES_CI = {k.lower(): v for k, v in _LOCALES.items()}
FORMAT_MAX_DECIMALS = 38


def my_double_round(value: float, dec: int, truncate: bool = False) -> float:
    """MariaDB's my_double_round: scale by 10**|dec|, rint (or truncate), scale back."""
    import math

    neg = dec < 0
    ad = -dec if neg else dec
    try:
        tmp = 10.0**ad if ad <= 22 else float(f"1e{ad}")
    except OverflowError:
        tmp = math.inf
    if neg and math.isinf(tmp):
        return 0.0
    div = value / tmp
    mul = value * tmp
    if not neg and math.isinf(mul):
        return value
    if truncate:
        if value >= 0:
            r = math.floor(div) * tmp if neg else math.floor(mul) / tmp
        else:
            r = math.ceil(div) * tmp if neg else math.ceil(mul) / tmp
        return float(r)
    return _rint(div) * tmp if neg else _rint(mul) / tmp


def _rint(x: float) -> float:
    """C's rint in the default rounding mode: half to even, keeping the sign of zero."""
    import math

    if x != x or math.isinf(x) or abs(x) >= 4503599627370496.0:
        return x
    r = float(round(x))
    return math.copysign(r, x) if r == 0 else r


def _group(intpart: str, sep: str, size: int) -> str:
    if not sep or len(intpart) <= size:
        return intpart
    head = len(intpart) % size or size
    parts = [intpart[:head]] + [intpart[i : i + size] for i in range(head, len(intpart), size)]
    return sep.join(parts)


@register("FORMAT", ret=STR, args=(2, 3), strict=False)
def format_(x, d, locale="en_US") -> str | None:
    """FORMAT(X, D[, locale]): X rounded to D decimals with thousands separators."""
    if x is None or d is None:
        return None
    dec = int_arg(d)
    dec = max(0, min(dec, FORMAT_MAX_DECIMALS))
    loc = (
        _LOCALES_CI.get(to_str(locale).lower(), _LOCALES["en_US"])
        if locale is not None
        else (_LOCALES["en_US"])
    )
    n = to_num(x)
    with localcontext(BIG_CONTEXT):
        if isinstance(n, float):
            if n != n or n in (float("inf"), float("-inf")):
                return str(n)
            r = my_double_round(n, dec)
            dval = Decimal(repr(r)).quantize(Decimal(1).scaleb(-dec), rounding=ROUND_HALF_EVEN)
        else:
            dval = Decimal(n).quantize(Decimal(1).scaleb(-dec), rounding=ROUND_HALF_UP)
    text = format(dval, "f")
    neg = text.startswith("-")
    if neg:
        text = text[1:]
    ip, _, fp = text.partition(".")
    if neg and set(ip + fp) <= {"0"}:
        neg = False
    out = _group(ip, loc[0], loc[2])
    if dec:
        out += loc[1] + fp
    return ("-" if neg else "") + out


# --- base64, hex, bases --------------------------------------------------------------------


@register("TO_BASE64", ret=STR)
def to_base64(s) -> str:
    """Base64 with a newline after every 76 characters, as MariaDB writes it."""
    enc = base64.b64encode(to_bytes(s)).decode("ascii")
    return "\n".join(enc[i : i + 76] for i in range(0, len(enc), 76))


@register("FROM_BASE64", ret=BYTES)
def from_base64(s) -> bytes | None:
    """Decode base64 (whitespace ignored); NULL for invalid input."""
    raw = bytes(b for b in to_bytes(s) if b not in b" \t\n\r\f\v")
    if len(raw) % 4:
        return None
    try:
        return base64.b64decode(raw, validate=True)
    except ValueError:
        return None


@register("HEX", ret=STR)
def hex_(v) -> str:
    """HEX(N) of a number (rounded to an integer, two's complement) or HEX(str) of its bytes."""
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, (int, Decimal, float)):
        if isinstance(v, float):
            if v != v:
                n = 0
            elif v <= -9.223372036854775808e18 or v >= 1.8446744073709552e19:
                n = _U64 - 1
            else:
                n = int(v + (0.5 if v > 0 else -0.5))
        else:
            n = half_away_int(Decimal(v))
            if n >= _U64 or n < -(1 << 63):
                n = _U64 - 1
        return format(_u64(n), "X")
    return to_bytes(v).hex().upper()


@register("UNHEX", ret=BYTES)
def unhex(s) -> bytes | None:
    """The bytes a hex string spells; an odd length gets a leading 0; NULL for non-hex."""
    t = to_bytes(s)
    if len(t) % 2:
        t = b"0" + t
    try:
        return bytes.fromhex(t.decode("ascii")) if b" " not in t else None
    except (ValueError, UnicodeDecodeError):
        return None


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _strtoull(s: str, base: int, signed: bool) -> int:
    """my_strntoull / my_strntoll: leading spaces, a sign, digits of ``base``; saturating."""
    i = 0
    n = len(s)
    while i < n and s[i] in " \t\n\r\f\v":
        i += 1
    neg = False
    if i < n and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    val = 0
    overflow = False
    while i < n:
        c = s[i].upper()
        d = _DIGITS.find(c) if c.isascii() else -1
        if d < 0 or d >= base:
            break
        val = val * base + d
        if val >= _U64:
            overflow = True
        i += 1
    if signed:
        if overflow or (not neg and val > (1 << 63) - 1) or (neg and val > 1 << 63):
            return -(1 << 63) if neg else (1 << 63) - 1
        return -val if neg else val
    if overflow:
        return _U64 - 1
    return _u64(-val) if neg else val


def _to_base(n: int, base: int) -> str:
    if n == 0:
        return "0"
    neg = n < 0
    n = abs(n)
    out = []
    while n:
        n, r = divmod(n, base)
        out.append(_DIGITS[r])
    return ("-" if neg else "") + "".join(reversed(out))


@register("CONV", ret=STR, args=3)
def conv(n, from_base, to_base) -> str | None:
    """CONV(N, from, to): a negative base means signed; bases outside 2..36 give NULL."""
    fb, tb = int_arg(from_base), int_arg(to_base)
    if not 2 <= abs(fb) <= 36 or not 2 <= abs(tb) <= 36:
        return None
    s = to_str(n)
    if s == "":
        return None
    val = _strtoull(s, abs(fb), fb < 0)
    if tb < 0:
        val = val - _U64 if val >= 1 << 63 else val
    else:
        val = _u64(val)
    return _to_base(val, abs(tb))


@register("BIN", ret=STR)
def bin_(n) -> str | None:
    """BIN(N) = CONV(N, 10, 2)."""
    return conv(n, 10, 2)


@register("OCT", ret=STR)
def oct_(n) -> str | None:
    """OCT(N) = CONV(N, 10, 8)."""
    return conv(n, 10, 8)


# --- substrings ----------------------------------------------------------------------------


@register("INSERT", ret=str_kind(0, 3), args=4)
def insert(s, pos, length, new):
    """INSERT(s, pos, len, new): replace len characters at pos; s unchanged when pos is out of
    range; a negative or too large len replaces the rest."""
    s, new = _common(s, new)
    p, n = int_arg(pos), int_arg(length)
    size = len(s)
    if p < 1 or p > size:
        return s
    p -= 1
    if n < 0 or n > size - p:
        n = size - p
    return s[:p] + new + s[p + n :]


@register("LOCATE", ret=INT, args=(2, 3), collation=True)
def locate(sub, s, pos=None, coll=None) -> int:
    """LOCATE(substr, str[, pos]): 1-based position of substr at or after pos, 0 if absent."""
    sub, s = _common(sub, s)
    start = 0
    if pos is not None:
        p = int_arg(pos)
        nbytes = len(s) if isinstance(s, bytes) else len(s.encode("utf-8", "surrogateescape"))
        if p <= 0 or p > nbytes:  # MariaDB compares the position with the length in bytes
            return 0
        start = p - 1
        if start > len(s):
            return 0
        boff = start if isinstance(s, bytes) else len(s[:start].encode("utf-8", "surrogateescape"))
        sublen = len(sub) if isinstance(sub, bytes) else len(sub.encode("utf-8", "surrogateescape"))
        if boff + sublen > nbytes:
            return 0
        if not sub:
            return boff + 1
    if not sub:
        return start + 1
    i = _instr(coll, s, sub, start)
    return i + 1


@register("INSTR", ret=INT, args=2, collation=True)
def instr(s, sub, coll=None) -> int:
    """INSTR(str, substr) = LOCATE(substr, str)."""
    return locate(sub, s, coll=coll)


@register("POSITION", ret=INT, args=2, collation=True)
def position(sub, s, coll=None) -> int:
    """POSITION(substr IN str) = LOCATE(substr, str)."""
    return locate(sub, s, coll=coll)


@register("LEFT", ret=str_kind(0), args=2)
def left(s, n):
    """The first n characters."""
    s = _sv(s)
    k = int_arg(n)
    return s[: max(k, 0)]


@register("RIGHT", ret=str_kind(0), args=2)
def right(s, n):
    """The last n characters."""
    s = _sv(s)
    k = int_arg(n)
    if k <= 0:
        return s[:0]
    return s[-k:]


@register("SUBSTRING", "SUBSTR", "MID", ret=str_kind(0), args=(2, 3))
def substring(s, pos, length=None):
    """SUBSTRING(s, pos[, len]): pos is 1-based, negative counts from the end, 0 gives ''."""
    s = _sv(s)
    p = int_arg(pos)
    size = len(s)
    if length is not None:
        n = int_arg(length)
        if n <= 0:
            return s[:0]
    else:
        n = size
    if p == 0 or p > size or -p > size:
        return s[:0]
    start = p - 1 if p > 0 else size + p
    return s[start : start + n]


@register("SUBSTRING_INDEX", ret=str_kind(0, 1), args=3)
def substring_index(s, delim, count):
    """The part of s before the count-th delimiter (after it, counted from the right, when
    count is negative); delimiters are matched case-sensitively."""
    s, delim = _common(s, delim)
    c = int_arg(count)
    if not delim or c == 0:
        return s[:0]
    pos = []
    i = s.find(delim)
    while i >= 0:
        pos.append(i)
        if c > 0 and len(pos) == c:
            return s[:i]
        i = s.find(delim, i + len(delim))
    if c > 0 or -c > len(pos):
        return s
    return s[pos[c] + len(delim) :]


@register("REPEAT", ret=str_kind(0), args=2)
def repeat(s, count):
    """REPEAT(s, n): '' for n < 1, NULL past max_allowed_packet."""
    s = _sv(s)
    n = int_arg(count)
    if n <= 0 or not s:
        return s[:0]
    size = len(s) if isinstance(s, bytes) else len(s.encode("utf-8", "surrogateescape"))
    if size * n > MAX_ALLOWED_PACKET:
        return None
    return s * n


@register("SPACE", ret=STR)
def space(n) -> str | None:
    """SPACE(n): n spaces."""
    k = int_arg(n)
    if k <= 0:
        return ""
    if k > MAX_ALLOWED_PACKET:
        return None
    return " " * k


@register("REPLACE", ret=str_kind(0, 1, 2), args=3)
def replace(s, frm, to):
    """REPLACE(s, from, to): every occurrence, case-sensitively."""
    s, frm, to = _common(s, frm, to)
    if not frm:
        return s
    return s.replace(frm, to)


@register("REVERSE", ret=str_kind(0))
def reverse(s):
    """The characters in reverse order."""
    return _sv(s)[::-1]


def _pad(s, length, padstr, left: bool):
    s, padstr = _common(s, padstr)
    n = int_arg(length)
    if n < 0:
        return None
    size = len(s)
    if n <= size:
        return s[:n]
    if not padstr:
        return None
    if n * (1 if isinstance(s, bytes) else 4) > MAX_ALLOWED_PACKET:  # count * mbmaxlen
        return None
    need = n - size
    fill = (padstr * (need // len(padstr) + 1))[:need]
    return fill + s if left else s + fill


@register("LPAD", ret=str_kind(0, 2), args=3)
def lpad(s, length, padstr):
    """LPAD(s, len, pad): s left-padded (or truncated) to len characters; NULL for len < 0."""
    return _pad(s, length, padstr, True)


@register("RPAD", ret=str_kind(0, 2), args=3)
def rpad(s, length, padstr):
    """RPAD(s, len, pad): s right-padded (or truncated) to len characters."""
    return _pad(s, length, padstr, False)


def _trim_lead(s, r):
    if not r:
        return s
    i, k = 0, len(r)
    while s.startswith(r, i):
        i += k
    return s[i:]


def _trim_trail(s, r):
    if not r:
        return s
    end, k = len(s), len(r)
    while end >= k and s.endswith(r, 0, end):
        end -= k
    return s[:end]


@register("LTRIM", ret=str_kind(0))
def ltrim(s):
    """Leading spaces removed (only spaces)."""
    s = _sv(s)
    return s.lstrip(b" " if isinstance(s, bytes) else " ")


@register("RTRIM", ret=str_kind(0))
def rtrim(s):
    """Trailing spaces removed."""
    s = _sv(s)
    return s.rstrip(b" " if isinstance(s, bytes) else " ")


@register("TRIM", ret=str_kind(0))
def trim(s):
    """TRIM(s): leading and trailing spaces removed."""
    s = _sv(s)
    return s.strip(b" " if isinstance(s, bytes) else " ")


@register("TRIM_LEADING", ret=str_kind(0, 1), args=2)
def trim_leading(s, r):
    """TRIM(LEADING r FROM s): repeated prefixes r removed (compared byte for byte)."""
    s, r = _common(s, r)
    return _trim_lead(s, r)


@register("TRIM_TRAILING", ret=str_kind(0, 1), args=2)
def trim_trailing(s, r):
    """TRIM(TRAILING r FROM s)."""
    s, r = _common(s, r)
    return _trim_trail(s, r)


@register("TRIM_BOTH", ret=str_kind(0, 1), args=2)
def trim_both(s, r):
    """TRIM(BOTH r FROM s)."""
    s, r = _common(s, r)
    return _trim_trail(_trim_lead(s, r), r)


# --- comparison, quoting, phonetics --------------------------------------------------------


@register("STRCMP", ret=INT, args=2, collation=True)
def strcmp(a, b, coll=None) -> int:
    """-1, 0 or 1 as a sorts before, equal to or after b under the collation."""
    a, b = _common(a, b)
    if isinstance(a, bytes) or coll is None:
        a, b = to_bytes(a).rstrip(b" "), to_bytes(b).rstrip(b" ")
        return (a > b) - (a < b)
    return coll.cmp(a, b)


def _quote_kind(kinds: list[str], consts: list) -> str:
    return BYTES if kinds and kinds[0] in (BYTES, NULL) else STR


@register("QUOTE", ret=_quote_kind, strict=False)
def quote(s):
    """QUOTE(s): a single-quoted SQL literal; QUOTE(NULL) is the word NULL."""
    if s is None:
        return "NULL"
    s = _sv(s)
    if isinstance(s, bytes):
        body = (
            s.replace(b"\\", b"\\\\")
            .replace(b"'", b"\\'")
            .replace(b"\x00", b"\\0")
            .replace(b"\x1a", b"\\Z")
        )
        return b"'" + body + b"'"
    body = s.replace("\\", "\\\\").replace("'", "\\'").replace("\x00", "\\0").replace("\x1a", "\\Z")
    return "'" + body + "'"


_SOUNDEX_MAP = "01230120022455012623010202"


def _soundex_code(ch: str) -> str:
    c = ch.upper() if "a" <= ch <= "z" else ch
    if "A" <= c <= "Z":
        return _SOUNDEX_MAP[ord(c) - 65]
    return "0"


def _soundex_alpha(ch: str) -> bool:
    o = ord(ch)
    if o < 0x80:
        return ("a" <= ch <= "z") or ("A" <= ch <= "Z")
    return o >= 0xC0


@register("SOUNDEX", ret=str_kind(0))
def soundex(s):
    """MariaDB's SOUNDEX: letters coded, vowels skipped without separating equal codes,
    characters from U+00C0 up count as uncoded letters; at least 4 characters."""
    raw = _sv(s)
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    it = iter(text)
    out = []
    last = ""
    for ch in it:
        if _soundex_alpha(ch):
            out.append(ch.upper() if "a" <= ch <= "z" else ch)
            last = _soundex_code(ch)
            break
    else:
        return raw[:0]
    for ch in it:
        if not _soundex_alpha(ch):
            continue
        code = _soundex_code(ch)
        if code != "0" and code != last:
            out.append(code)
            last = code
    res = "".join(out)
    if len(res) < 4:
        res += "0" * (4 - len(res))
    return res.encode("latin-1") if isinstance(raw, bytes) else res


# --- hashes and identifiers ----------------------------------------------------------------


@register("MD5", ret=STR)
def md5(s) -> str:
    """MD5 as 32 lowercase hex digits."""
    return hashlib.md5(to_bytes(s)).hexdigest()


@register("SHA1", "SHA", ret=STR)
def sha1(s) -> str:
    """SHA-1 as 40 lowercase hex digits."""
    return hashlib.sha1(to_bytes(s)).hexdigest()


_SHA2 = {0: hashlib.sha256, 224: hashlib.sha224, 256: hashlib.sha256, 384: hashlib.sha384}
_SHA2[512] = hashlib.sha512


@register("SHA2", ret=STR, args=2, strict=False)
def sha2(s, bits) -> str | None:
    """SHA2(s, 224|256|384|512|0); other lengths give NULL (a NULL length counts as 0)."""
    if s is None:
        return None
    h = _SHA2.get(0 if bits is None else int_arg(bits))
    return None if h is None else h(to_bytes(s)).hexdigest()


@register("CRC32", ret=INT, args=(1, 2))
def crc32(*args) -> int:
    """CRC32(expr) or CRC32(previous_crc, expr)."""
    if len(args) == 2:
        return zlib.crc32(to_bytes(args[1]), int_arg(args[0]) & 0xFFFFFFFF)
    return zlib.crc32(to_bytes(args[0]))


@register("UUID", ret=STR, args=0, deterministic=False)
def uuid_() -> str:
    """A version 1 UUID."""
    return str(uuid.uuid1())


@register("INET_ATON", ret=INT)
def inet_aton(s) -> int | None:
    """Dotted IPv4 text to its number; short forms ('127.1') allowed; NULL when invalid."""
    text = to_str(s)
    result = 0
    byte = 0
    last = "."
    dots = 0
    for c in text:
        last = c
        if "0" <= c <= "9":
            byte = byte * 10 + ord(c) - 48
            if byte > 255:
                return None
        elif c == ".":
            dots += 1
            result = _u64((result << 8) + byte)
            byte = 0
        else:
            return None
    if last == ".":
        return None
    if dots == 1:
        result <<= 16
    elif dots == 2:
        result <<= 8
    return _u64((result << 8) + byte)


@register("INET_NTOA", ret=STR)
def inet_ntoa(n) -> str | None:
    """A number to dotted IPv4 text; NULL outside 0..4294967295."""
    v = int_arg(n)
    if v < 0 or v > 0xFFFFFFFF:
        return None
    return ".".join(str(v >> sh & 0xFF) for sh in (24, 16, 8, 0))

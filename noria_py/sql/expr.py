"""Scalar expressions: sqlglot AST -> Python closures evaluated with MySQL semantics.

``compile_expr(node, scope)`` returns a ``Compiled`` whose ``fn(row, params)`` evaluates the
expression over a row tuple; ``params`` is the bound parameter tuple (only writes and proxied
paths use it; dataflow operators pass ``None``). Three-valued logic: NULL is ``None``, booleans
are 1 and 0. ``Unsupported`` means "the dataflow cannot maintain this", which sends the query to
base storage instead; ``ProgrammingError`` means the SQL itself is wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, DivisionByZero, InvalidOperation

from sqlglot import exp

from ..errors import bad_field
from . import values as V


class Unsupported(Exception):
    """The construct is valid SQL, but the dataflow cannot maintain it."""


class Compiled:
    __slots__ = ("fn", "kind", "const", "col")

    def __init__(self, fn: Callable, kind: str, const: bool = False, col: int | None = None):
        self.fn = fn
        self.kind = kind
        self.const = const
        self.col = col  # the input column index when the expression is a bare column


class Scope:
    """Resolves column references to positions in the input row.

    ``columns`` is a list of (qualifier, name, kind); qualifier may be None.
    """

    def __init__(self, columns: list[tuple[str | None, str, str]]):
        self.columns = columns

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
# Value helpers (MySQL semantics)


def _num(v):
    # MySQL converts a string in numeric context to a DOUBLE
    if isinstance(v, str):
        return float(V.str_to_number(v))
    if isinstance(v, bytes):
        return float(V.str_to_number(v.decode("utf-8", "replace")))
    if isinstance(v, bool):
        return int(v)
    return v


def _arith_operands(a, b):
    a = _num(a)
    b = _num(b)
    if isinstance(a, float) or isinstance(b, float):
        return float(a), float(b)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a), Decimal(b)
    return a, b


def _add(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    return a + b


def _sub(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    return a - b


def _mul(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    return a * b


def _scale(v) -> int:
    if isinstance(v, Decimal):
        e = v.as_tuple().exponent
        return -e if isinstance(e, int) and e < 0 else 0
    return 0


def _div(a, b):
    """MySQL ``/``: a decimal with the dividend's scale plus 4, or a double; x/0 is NULL."""
    if a is None or b is None:
        return None
    a = _num(a)
    b = _num(b)
    if isinstance(a, float) or isinstance(b, float):
        if b == 0:
            return None
        return a / b
    if b == 0:
        return None
    da = Decimal(a)
    db = Decimal(b)
    try:
        q = da / db
    except (DivisionByZero, InvalidOperation):
        return None
    scale = _scale(da) + 4
    return q.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


def _intdiv(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    if b == 0:
        return None
    q = a / b
    return int(q) if not isinstance(q, int) else q


def _intdiv_exact(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return int(a / b)


def _mod(a, b):
    if a is None or b is None:
        return None
    a, b = _arith_operands(a, b)
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    return math.fmod(a, b) if isinstance(a, float) else a.__mod__(b)


def _neg(a):
    if a is None:
        return None
    return -_num(a)


def _cmp_prepare(a, b):
    """Bring two non-NULL values to a comparable pair the way MySQL compares mixed types."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        return a, b
    if ta is str and tb in (int, float, Decimal):
        return _num(a), b
    if tb is str and ta in (int, float, Decimal):
        return a, _num(b)
    if ta is str and tb is not str:
        import datetime as _dt

        if isinstance(b, _dt.datetime):
            p = V.parse_datetime(a)
            return (p, b) if p is not None else (a, V.format_value(b))
        if isinstance(b, _dt.date):
            p = V.parse_date(a)
            return (p, b) if p is not None else (a, V.format_value(b))
    if tb is str and ta is not str:
        x, y = _cmp_prepare(b, a)
        return y, x
    import datetime as _dt

    if isinstance(a, _dt.datetime) and not isinstance(b, _dt.datetime) and isinstance(b, _dt.date):
        return a, _dt.datetime(b.year, b.month, b.day)
    if isinstance(b, _dt.datetime) and not isinstance(a, _dt.datetime) and isinstance(a, _dt.date):
        return _dt.datetime(a.year, a.month, a.day), b
    if ta is bool or tb is bool:
        return int(a), int(b)
    return a, b


def _eq(a, b):
    if a is None or b is None:
        return None
    if type(a) is type(b):
        return 1 if a == b else 0
    a, b = _cmp_prepare(a, b)
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
        v = V.str_to_number(v)
    return bool(v)


def _bool(v):
    if v is None:
        return None
    return 1 if truthy(v) else 0


def like_to_regex(pattern: str, escape: str = "\\") -> re.Pattern:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.S | re.I)


_like_cache: dict[str, re.Pattern] = {}


def _like(v, pattern):
    if v is None or pattern is None:
        return None
    if not isinstance(pattern, str):
        pattern = V.format_value(pattern)
    rx = _like_cache.get(pattern)
    if rx is None:
        if len(_like_cache) > 10000:
            _like_cache.clear()
        rx = _like_cache[pattern] = like_to_regex(pattern)
    s = v if isinstance(v, str) else V.format_value(v)
    return 1 if rx.match(s) else 0


def _round_half_up(v, d=0):
    if v is None or d is None:
        return None
    v = _num(v)
    d = int(_num(d))
    if isinstance(v, float):
        # MySQL rounds doubles half away from zero at the decimal digit (approximately)
        q = Decimal(repr(v)).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
        return float(q)
    if isinstance(v, int):
        if d >= 0:
            return v
        q = Decimal(v).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
        return int(q)
    return (
        v.quantize(Decimal(1).scaleb(-max(d, 0)), rounding=ROUND_HALF_UP)
        if d >= 0
        else (v.quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP))
    )


def _str(v):
    return v if isinstance(v, str) else V.format_value(v)


def _concat(*args):
    if any(a is None for a in args):
        return None
    return "".join(_str(a) for a in args)


def _concat_ws(sep, *args):
    if sep is None:
        return None
    return _str(sep).join(_str(a) for a in args if a is not None)


def _substring(s, pos, length=None):
    if s is None or pos is None:
        return None
    s = _str(s)
    pos = int(_num(pos))
    if pos == 0:
        return ""
    start = pos - 1 if pos > 0 else len(s) + pos
    if start < 0:
        return ""
    if length is None:
        return s[start:]
    length = int(_num(length))
    if length <= 0:
        return ""
    return s[start : start + length]


def _greatest(*args):
    if any(a is None for a in args):
        return None
    best = args[0]
    for a in args[1:]:
        if _gt(a, best):
            best = a
    return best


def _least(*args):
    if any(a is None for a in args):
        return None
    best = args[0]
    for a in args[1:]:
        if _lt(a, best):
            best = a
    return best


def _f1(fn):
    def g(a):
        return None if a is None else fn(a)

    return g


def _sign(v):
    v = _num(v)
    return (v > 0) - (v < 0)


def _floor(v):
    v = _num(v)
    return math.floor(v) if not isinstance(v, float) else float(math.floor(v))


def _ceil(v):
    v = _num(v)
    return math.ceil(v) if not isinstance(v, float) else float(math.ceil(v))


def _length(v):
    return len(_str(v).encode("utf-8")) if not isinstance(v, bytes) else len(v)


def _replace(s, a, b):
    if s is None or a is None or b is None:
        return None
    a = _str(a)
    return _str(s) if a == "" else _str(s).replace(a, _str(b))


def _left(s, n):
    if s is None or n is None:
        return None
    n = int(_num(n))
    return _str(s)[: max(n, 0)]


def _right(s, n):
    if s is None or n is None:
        return None
    n = int(_num(n))
    return _str(s)[-n:] if n > 0 else ""


def _nullif(a, b):
    if a is None:
        return None
    return None if _eq(a, b) == 1 else a


def _cast_signed(v):
    if v is None:
        return None
    v = _num(v)
    if isinstance(v, (float, Decimal)):
        return int(Decimal(v).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return int(v)


def _cast_char(v):
    return None if v is None else _str(v)


def _cast_decimal(scale):
    q = Decimal(1).scaleb(-scale)

    def f(v):
        if v is None:
            return None
        v = _num(v)
        return Decimal(repr(v) if isinstance(v, float) else v).quantize(q, rounding=ROUND_HALF_UP)

    return f


_UNARY_FUNCS: dict[type, tuple[Callable, str | None]] = {
    exp.Lower: (_f1(lambda s: _str(s).lower()), V.STR),
    exp.Upper: (_f1(lambda s: _str(s).upper()), V.STR),
    exp.Length: (_f1(_length), V.INT),
    exp.Abs: (_f1(lambda v: abs(_num(v))), None),
    exp.Floor: (_f1(_floor), None),
    exp.Ceil: (_f1(_ceil), None),
    exp.Sign: (_f1(_sign), V.INT),
    exp.Sqrt: (_f1(lambda v: math.sqrt(_num(v)) if _num(v) >= 0 else None), V.FLOAT),
    exp.Trim: (_f1(lambda s: _str(s).strip(" ")), V.STR),
}

_NAMED_FUNCS: dict[str, tuple[Callable, str | None]] = {
    "CHAR_LENGTH": (_f1(lambda s: len(_str(s))), V.INT),
    "CHARACTER_LENGTH": (_f1(lambda s: len(_str(s))), V.INT),
    "LTRIM": (_f1(lambda s: _str(s).lstrip(" ")), V.STR),
    "RTRIM": (_f1(lambda s: _str(s).rstrip(" ")), V.STR),
    "REVERSE": (_f1(lambda s: _str(s)[::-1]), V.STR),
    "LCASE": (_f1(lambda s: _str(s).lower()), V.STR),
    "UCASE": (_f1(lambda s: _str(s).upper()), V.STR),
}


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


def literal_value(node: exp.Literal):
    text = node.this
    if node.is_string:
        return text
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)", text):
        return Decimal(text)
    try:
        return float(text)
    except ValueError:
        return text


def compile_expr(node: exp.Expression, scope: Scope, allow_params: bool = True) -> Compiled:
    """Compile a scalar expression over ``scope``'s columns."""
    return _Compiler(scope, allow_params).compile(node)


class _Compiler:
    def __init__(self, scope: Scope, allow_params: bool):
        self.scope = scope
        self.allow_params = allow_params

    def compile(self, n: exp.Expression) -> Compiled:
        c = self._compile(n)
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
                raise Unsupported(f"aggregate {n.sql('mysql')} in this position")
            if isinstance(n, exp.Anonymous):
                return self.c_anonymous(n)
            if isinstance(n, exp.Func):
                return self.c_func(n)
            raise Unsupported(f"expression {type(n).__name__}: {n.sql('mysql')}")
        return m(n)

    # leaves
    def c_Column(self, n: exp.Column) -> Compiled:
        if isinstance(n.this, exp.Star):
            raise Unsupported("* in an expression")
        i, kind = self.scope.resolve(n)

        def fn(r, p, i=i):
            return r[i]

        return Compiled(fn, kind, col=i)

    def c_Literal(self, n: exp.Literal) -> Compiled:
        v = literal_value(n)
        return self.const(v)

    def const(self, v) -> Compiled:
        def fn(r, p, v=v):
            return v

        return Compiled(fn, V.kind_of_value(v), const=True)

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

        def fn(r, p, idx=idx):
            return p[idx]

        return Compiled(fn, V.NULL)

    def c_Paren(self, n: exp.Paren) -> Compiled:
        return self.compile(n.this)

    def c_Alias(self, n: exp.Alias) -> Compiled:
        return self.compile(n.this)

    # arithmetic
    def _bin(self, n, f, kind_fn=None) -> Compiled:
        a = self.compile(n.this)
        b = self.compile(n.expression)
        fa, fb = a.fn, b.fn

        def fn(r, p):
            return f(fa(r, p), fb(r, p))

        kind = kind_fn(a.kind, b.kind) if kind_fn else _fold([a.kind, b.kind])
        if kind == V.STR:
            kind = V.FLOAT
        return Compiled(fn, kind)

    def c_Add(self, n):
        return self._bin(n, _add)

    def c_Sub(self, n):
        return self._bin(n, _sub)

    def c_Mul(self, n):
        return self._bin(n, _mul)

    def c_Div(self, n):
        return self._bin(n, _div, lambda a, b: V.FLOAT if V.FLOAT in (a, b) else V.DECIMAL)

    def c_IntDiv(self, n):
        return self._bin(n, _intdiv_exact, lambda a, b: V.INT)

    def c_Mod(self, n):
        return self._bin(n, _mod)

    def c_Neg(self, n):
        a = self.compile(n.this)
        fa = a.fn
        return Compiled(lambda r, p: _neg(fa(r, p)), a.kind)

    # comparison
    def _cmp(self, n, f) -> Compiled:
        a = self.compile(n.this)
        b = self.compile(n.expression)
        fa, fb = a.fn, b.fn
        a_dt = a.kind in (V.DATE, V.DATETIME)
        b_dt = b.kind in (V.DATE, V.DATETIME)
        if a_dt and b.const:
            bv = self._to_temporal(fb(None, None), a.kind)
            return Compiled(lambda r, p: f(fa(r, p), bv), V.INT)
        if b_dt and a.const:
            av = self._to_temporal(fa(None, None), b.kind)
            return Compiled(lambda r, p: f(av, fb(r, p)), V.INT)
        return Compiled(lambda r, p: f(fa(r, p), fb(r, p)), V.INT)

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
        items = [self.compile(e) for e in n.expressions]
        if fa.kind in (V.DATE, V.DATETIME):
            items = [
                self.const(self._to_temporal(it.fn(None, None), fa.kind)) if it.const else it
                for it in items
            ]
        if all(it.const for it in items):
            consts = [it.fn(None, None) for it in items]
            has_null = any(c is None for c in consts)
            nonnull = [c for c in consts if c is not None]
            same_type = all(type(c) is int for c in nonnull) or all(type(c) is str for c in nonnull)
            cset = frozenset(nonnull) if same_type else None
            f0 = fa.fn
            ckind = type(nonnull[0]) if nonnull else None

            def fn(r, p):
                v = f0(r, p)
                if v is None:
                    return None
                if cset is not None and type(v) is ckind:
                    if v in cset:
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
        lo = self.compile(n.args["low"])
        hi = self.compile(n.args["high"])
        fx, fl, fh = x.fn, lo.fn, hi.fn
        if x.kind in (V.DATE, V.DATETIME):
            if lo.const:
                lv = self._to_temporal(fl(None, None), x.kind)
                fl = lambda r, p, lv=lv: lv  # noqa: E731
            if hi.const:
                hv = self._to_temporal(fh(None, None), x.kind)
                fh = lambda r, p, hv=hv: hv  # noqa: E731

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

    def c_Like(self, n: exp.Like):
        fa = self.compile(n.this).fn
        pat = self.compile(n.expression)
        if pat.const:
            pv = pat.fn(None, None)
            if pv is None:
                return Compiled(lambda r, p: None, V.INT)
            rx = like_to_regex(_str(pv))

            def fn(r, p):
                v = fa(r, p)
                if v is None:
                    return None
                return 1 if rx.match(v if isinstance(v, str) else _str(v)) else 0

            return Compiled(fn, V.INT)
        fp = pat.fn
        return Compiled(lambda r, p: _like(fa(r, p), fp(r, p)), V.INT)

    def c_Escape(self, n: exp.Escape):
        like = n.this
        if not isinstance(like, exp.Like):
            raise Unsupported("ESCAPE")
        esc = self.compile(n.expression)
        pat = self.compile(like.expression)
        if not (esc.const and pat.const):
            raise Unsupported("LIKE ... ESCAPE with non-constant")
        fa = self.compile(like.this).fn
        rx = like_to_regex(_str(pat.fn(None, None)), _str(esc.fn(None, None)))

        def fn(r, p):
            v = fa(r, p)
            return None if v is None else (1 if rx.match(_str(v)) else 0)

        return Compiled(fn, V.INT)

    def c_ILike(self, n):
        return self.c_Like(n)

    # conditionals
    def c_Case(self, n: exp.Case):
        base = self.compile(n.this) if n.this else None
        ifs = [(self.compile(i.this), self.compile(i.args["true"])) for i in n.args["ifs"]]
        default = self.compile(n.args["default"]) if n.args.get("default") else None
        kinds = [t.kind for _, t in ifs] + ([default.kind] if default else [V.NULL])
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

        return Compiled(fn, _fold(kinds))

    def c_If(self, n: exp.If):
        c = self.compile(n.this).fn
        t = self.compile(n.args["true"])
        f = self.compile(n.args["false"]) if n.args.get("false") else self.const(None)
        ft, ff = t.fn, f.fn
        return Compiled(
            lambda r, p: ft(r, p) if truthy(c(r, p)) else ff(r, p), _fold([t.kind, f.kind])
        )

    def c_Coalesce(self, n: exp.Coalesce):
        parts = [self.compile(n.this)] + [self.compile(e) for e in n.expressions]
        fs = [c.fn for c in parts]

        def fn(r, p):
            for f in fs:
                v = f(r, p)
                if v is not None:
                    return v
            return None

        return Compiled(fn, _fold([c.kind for c in parts]))

    def c_Nullif(self, n):
        a = self.compile(n.this)
        b = self.compile(n.expression)
        fa, fb = a.fn, b.fn
        return Compiled(lambda r, p: _nullif(fa(r, p), fb(r, p)), a.kind)

    # functions
    def c_Concat(self, n):
        fs = [self.compile(e).fn for e in n.expressions]
        return Compiled(lambda r, p: _concat(*[f(r, p) for f in fs]), V.STR)

    def c_ConcatWs(self, n):
        fs = [self.compile(e).fn for e in n.expressions]
        return Compiled(lambda r, p: _concat_ws(*[f(r, p) for f in fs]), V.STR)

    def c_DPipe(self, n):
        # MySQL parses || as OR unless PIPES_AS_CONCAT; sqlglot gives DPipe for it.
        return self.c_Or(n)

    def c_Substring(self, n):
        fs = self.compile(n.this).fn
        fp = self.compile(n.args["start"]).fn if n.args.get("start") else (lambda r, p: 1)
        fl = self.compile(n.args["length"]).fn if n.args.get("length") else None
        if fl is None:
            return Compiled(lambda r, p: _substring(fs(r, p), fp(r, p)), V.STR)
        return Compiled(lambda r, p: _substring(fs(r, p), fp(r, p), fl(r, p)), V.STR)

    def c_Round(self, n):
        a = self.compile(n.this)
        fa = a.fn
        if n.args.get("decimals") is not None:
            fd = self.compile(n.args["decimals"]).fn
            return Compiled(lambda r, p: _round_half_up(fa(r, p), fd(r, p)), a.kind)
        return Compiled(lambda r, p: _round_half_up(fa(r, p), 0), a.kind)

    def c_Greatest(self, n):
        parts = [self.compile(n.this)] + [self.compile(e) for e in n.expressions]
        fs = [c.fn for c in parts]
        return Compiled(
            lambda r, p: _greatest(*[f(r, p) for f in fs]), _fold([c.kind for c in parts])
        )

    def c_Least(self, n):
        parts = [self.compile(n.this)] + [self.compile(e) for e in n.expressions]
        fs = [c.fn for c in parts]
        return Compiled(lambda r, p: _least(*[f(r, p) for f in fs]), _fold([c.kind for c in parts]))

    def c_Replace(self, n):
        fs = self.compile(n.this).fn
        fa = self.compile(n.expression).fn
        fb = self.compile(n.args["replacement"]).fn
        return Compiled(lambda r, p: _replace(fs(r, p), fa(r, p), fb(r, p)), V.STR)

    def c_Left(self, n):
        fs = self.compile(n.this).fn
        fn_ = self.compile(n.expression).fn
        return Compiled(lambda r, p: _left(fs(r, p), fn_(r, p)), V.STR)

    def c_Right(self, n):
        fs = self.compile(n.this).fn
        fn_ = self.compile(n.expression).fn
        return Compiled(lambda r, p: _right(fs(r, p), fn_(r, p)), V.STR)

    def c_Pow(self, n):
        fa = self.compile(n.this).fn
        fb = self.compile(n.expression).fn

        def fn(r, p):
            a, b = fa(r, p), fb(r, p)
            if a is None or b is None:
                return None
            try:
                return float(_num(a)) ** float(_num(b))
            except (OverflowError, ZeroDivisionError):
                return None

        return Compiled(fn, V.FLOAT)

    def c_Cast(self, n: exp.Cast):
        a = self.compile(n.this)
        fa = a.fn
        to = n.to.this.name if hasattr(n.to.this, "name") else str(n.to.this)
        if to in ("BIGINT", "INT", "SIGNED", "UBIGINT", "UINT"):
            return Compiled(lambda r, p: _cast_signed(fa(r, p)), V.INT)
        if to in ("CHAR", "VARCHAR", "TEXT", "NCHAR", "NVARCHAR"):
            return Compiled(lambda r, p: _cast_char(fa(r, p)), V.STR)
        if to in ("DECIMAL",):
            params = [int(x.this.name) for x in n.to.expressions] if n.to.expressions else []
            scale = params[1] if len(params) > 1 else 0
            f = _cast_decimal(scale)
            return Compiled(lambda r, p: f(fa(r, p)), V.DECIMAL)
        if to in ("DOUBLE", "FLOAT"):
            return Compiled(
                lambda r, p: None if fa(r, p) is None else float(_num(fa(r, p))), V.FLOAT
            )
        if to == "DATE":
            return Compiled(
                lambda r, p: None if fa(r, p) is None else V.parse_date(_str(fa(r, p))[:10]),
                V.DATE,
            )
        if to in ("DATETIME", "TIMESTAMP"):
            return Compiled(
                lambda r, p: None if fa(r, p) is None else V.parse_datetime(_str(fa(r, p))),
                V.DATETIME,
            )
        raise Unsupported(f"CAST to {to}")

    def c_func(self, n: exp.Func) -> Compiled:
        entry = _UNARY_FUNCS.get(type(n))
        if entry is not None:
            f, kind = entry
            a = self.compile(n.this)
            fa = a.fn
            return Compiled(lambda r, p: f(fa(r, p)), kind or a.kind)
        raise Unsupported(f"function {n.sql('mysql')}")

    def c_anonymous(self, n: exp.Anonymous) -> Compiled:
        name = str(n.this).upper()
        if name in _NAMED_FUNCS and len(n.expressions) == 1:
            f, kind = _NAMED_FUNCS[name]
            fa = self.compile(n.expressions[0]).fn
            return Compiled(lambda r, p: f(fa(r, p)), kind)
        if name == "MOD" and len(n.expressions) == 2:
            fa = self.compile(n.expressions[0]).fn
            fb = self.compile(n.expressions[1]).fn
            return Compiled(lambda r, p: _mod(fa(r, p), fb(r, p)), V.INT)
        raise Unsupported(f"function {name}")


def output_kind(c: Compiled) -> str:
    return c.kind

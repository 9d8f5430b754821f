"""The type of a UNION's column (or of IF, CASE, COALESCE and IFNULL), merged from its branches'
types as MySQL merges them, and the CAST that gives one branch's values that type.

MySQL types a UNION's column once, from every branch, and converts each branch's values to it:
an INT beside a DECIMAL(5,2) comes back as ``1.00``, a number beside a string as its text, a
DATE beside a DATETIME as a DATETIME. The dataflow (``compile.union_rel``) and base storage
(``proxy_types.unify_unions``) both put the CAST computed here on the branch items that need it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from . import values as V

# the largest scale MySQL gives a DECIMAL
_MAX_SCALE = 38


@dataclass(frozen=True)
class Member:
    """One branch's column: its kind, its scale (a DECIMAL's digits after the point, a DATETIME's
    or TIME's fraction digits; None when unknown), for an integer whether it is unsigned and
    whether it is a YEAR, and whether it is a literal (``literal``: see ``literal``)."""

    kind: str
    scale: int | None = None
    unsigned: bool = False
    literal: bool = False
    year: bool = False


def member(kind: str, scale: int | None, rng, literal: bool = False) -> Member:
    """The member of a value of ``kind`` and ``scale`` whose integer range (``int_range``:
    lowest, highest, unsigned) is ``rng`` (None when unknown or not an integer)."""
    return Member(kind, scale, bool(rng and rng[2]), literal, rng is V.YEAR_RANGE)


def literal(item: exp.Expression) -> bool:
    """Is a select item a string, hexadecimal or bit literal? Its character set yields to a
    column's (MySQL's coercibility): a binary literal beside a text column makes a text column,
    beside only literals and numbers a binary one."""
    inner = item.this if isinstance(item, exp.Alias) else item
    return isinstance(inner, (exp.HexString, exp.BitString)) or (
        isinstance(inner, exp.Literal) and inner.is_string
    )


def check_text(item: exp.Expression) -> None:
    """A binary literal that becomes the text of a UNION column must be UTF-8 (1300)."""
    inner = item.this if isinstance(item, exp.Alias) else item
    if isinstance(inner, exp.HexString):
        raw = V.hex_bytes(inner.this)
    elif isinstance(inner, exp.BitString):
        n = int(inner.this or "0", 2)
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    else:
        return
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        from ..errors import DataError

        raise DataError(
            f"Invalid utf8mb4 character string: '{raw.hex().upper()}'", 1300, "HY000"
        ) from None


@dataclass(frozen=True)
class Merged:
    """A UNION column's type. ``dated``: a TIME beside a DATE or DATETIME, which MySQL reads as
    a DATETIME on the current date (so the answer changes with the date)."""

    kind: str
    scale: int | None = None
    dated: bool = False


def merge(members: list[Member], signed_nulls: bool = True) -> Merged:
    """The merged type; a DECIMAL's scale is None when a branch's is unknown.

    A bare NULL takes no part, except beside unsigned integers: MariaDB merges it there as a
    signed integer, so ``iu UNION SELECT NULL`` and ``COALESCE(iu, NULL)`` are DECIMALs (YEARs
    alone stay YEARs). ``signed_nulls=False`` for IF(), which takes its other argument's type
    whole."""
    known = [m for m in members if m.kind != V.NULL]
    if not known:
        return Merged(V.NULL)
    kinds = {m.kind for m in known}
    if kinds == {V.INT}:
        signs = {m.unsigned for m in known}
        if signed_nulls and len(known) < len(members) and not all(m.year for m in known):
            signs.add(False)
        # a signed and an unsigned integer: MariaDB's column is a DECIMAL of no fraction
        return Merged(V.DECIMAL, 0) if len(signs) > 1 else Merged(V.INT)
    if kinds <= V.NUMERIC_KINDS:
        if V.FLOAT in kinds:
            return Merged(V.FLOAT)
        scales = [m.scale if m.kind == V.DECIMAL else 0 for m in known]
        if any(s is None for s in scales):
            return Merged(V.DECIMAL, None)  # a branch's digits unknown
        return Merged(V.DECIMAL, min(max(scales), _MAX_SCALE))
    if len(kinds) == 1:
        kind = next(iter(kinds))
        if kind in (V.DATETIME, V.TIME):
            scales = [m.scale for m in known]
            return Merged(kind, None if None in scales else max(scales))
        return Merged(kind)
    if V.BYTES in kinds:
        if all(m.literal for m in known if m.kind == V.BYTES) and any(
            m.kind == V.STR and not m.literal for m in known
        ):
            return Merged(V.STR)  # binary literals beside a text column (see ``literal``)
        return Merged(V.BYTES)
    if kinds <= {V.DATE, V.DATETIME, V.TIME}:
        scales = [m.scale or 0 for m in known if m.kind != V.DATE]
        return Merged(V.DATETIME, max(scales) if scales else 0, dated=V.TIME in kinds)
    return Merged(V.STR)


def target_type(target: Merged) -> exp.DataType:
    """The type a CAST to the UNION's column names."""
    t = target.kind
    if t == V.DECIMAL:
        return exp.DataType.build(f"DECIMAL(65, {target.scale or 0})", dialect="mysql")
    if t == V.FLOAT:
        return exp.DataType.build("DOUBLE", dialect="mysql")
    if t == V.DATETIME:
        return exp.DataType.build(f"DATETIME({target.scale or 0})", dialect="mysql")
    if t == V.BYTES:
        return exp.DataType.build("BINARY", dialect="mysql")
    return exp.DataType.build("CHAR", dialect="mysql")


def cast_for(member: Member, target: Merged) -> exp.DataType | None:
    """The type one branch's values are cast to, or None when they already have it."""
    k, t = member.kind, target.kind
    if k == V.NULL or t == V.NULL:
        return None
    if t == V.DECIMAL:
        if k == V.DECIMAL and (target.scale is None or member.scale == target.scale):
            return None
    elif k == t or t not in (V.FLOAT, V.DATETIME, V.BYTES, V.STR):
        return None
    return target_type(target)

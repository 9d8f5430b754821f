"""Interval sets over one column's values: which ranges of a range reader's column are filled.

A partial range reader (``ops/reader.py``, ``RangeReader``) keeps, per equality key, the set of
ranges of its range column whose rows it holds. This module is that set.

Values are ordered as Python orders them (the column's kind: ints, floats, dates), strings by
their collation keys (``sql/collation.py``: a cut over a string column holds a key, a ``CK``, or a
``KeyCut``, a position in key space that is no string's key, such as the end of a ``LIKE``
prefix's range; a row's string is keyed where it is compared with a cut). An interval's ends are
*cuts*: positions between values, written as tuples that compare correctly
with each other (and never compare two values of different kinds unless the column mixes them):

- ``BOTTOM`` ``(0,)``: below every value;
- ``below(v)`` ``(1, v, 0)``: just below ``v``;
- ``above(v)`` ``(1, v, 1)``: just above ``v``;
- ``TOP`` ``(2,)``: above every value.

An interval is a half-open pair of cuts ``[lo, hi)`` and holds the values ``v`` with
``lo <= below(v) < hi``, so every SQL bound is one cut: ``> v`` is ``above(v)``, ``>= v`` is
``below(v)``, ``< v`` is ``below(v)``, ``<= v`` is ``above(v)``, and a missing bound is ``BOTTOM``
or ``TOP``. NULL is in no interval (no comparison with NULL is true), so ``[BOTTOM, TOP)`` is every
non-NULL value. Adjacent intervals merge: ``[a, b)`` and ``[b, c)`` are ``[a, c)``.

``IntervalSet`` keeps disjoint, non-adjacent, non-empty intervals sorted, as two parallel lists
of cuts, so that membership and coverage are a bisection: ``add`` merges, ``subtract`` splits,
``contains`` tests a value, ``covers`` tests a whole interval and ``missing`` lists the pieces of
an interval that are not in the set (what a read must upquery).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from ..sql.collation import CK, ck

BOTTOM = (0,)
TOP = (2,)


def below(v) -> tuple:
    """The cut just below ``v`` (``>= v`` starts here, ``< v`` ends here)."""
    return (1, ck(v) if v.__class__ is str else v, 0)


def above(v) -> tuple:
    """The cut just above ``v`` (``> v`` starts here, ``<= v`` ends here)."""
    return (1, ck(v) if v.__class__ is str else v, 1)


def interval_of(bounds) -> tuple[tuple, tuple]:
    """The interval ``[lo, hi)`` of the values satisfying every ``(op, value)`` bound, where op
    is one of ``>``, ``>=``, ``<``, ``<=``. Empty when ``lo >= hi``."""
    lo, hi = BOTTOM, TOP
    for op, v in bounds:
        if v.__class__ is str:
            v = ck(v)
        if op == ">":
            c = (1, v, 1)
            if c > lo:
                lo = c
        elif op == ">=":
            c = (1, v, 0)
            if c > lo:
                lo = c
        elif op == "<":
            c = (1, v, 0)
            if c < hi:
                hi = c
        elif op == "<=":
            c = (1, v, 1)
            if c < hi:
                hi = c
        else:
            raise ValueError(f"not a range operator: {op!r}")
    return lo, hi


def int_cut(c: tuple) -> tuple:
    """The same cut for a column of integers, written so that adjacent integer ranges touch:
    ``above(v)`` holds the same integers as ``below(v + 1)``, so ``[10, 19]`` and ``[20, 29]``
    merge into ``[10, 29]``."""
    if len(c) == 3 and c[2] == 1 and c[1].__class__ is int:
        return (1, c[1] + 1, 0)
    return c


def point(v) -> tuple[tuple, tuple]:
    """The interval holding exactly ``v``."""
    if v.__class__ is str:
        v = ck(v)
    return (1, v, 0), (1, v, 1)


def in_interval(v, lo: tuple, hi: tuple) -> bool:
    """Does the value ``v`` lie in ``[lo, hi)``? NULL never does."""
    if v is None:
        return False
    if v.__class__ is str:
        v = ck(v)
    c = (1, v, 0)
    return lo <= c < hi


def _shown(v) -> str:
    """A cut's value as written: a string key by the spelling it came from."""
    if isinstance(v, CK):
        return repr(getattr(v, "orig", None) if type(v) is CK else v)
    return repr(v)


def describe(lo: tuple, hi: tuple) -> str:
    """``[lo, hi)`` in SQL-ish notation, for messages and EXPLAIN."""
    left = "(-inf" if lo == BOTTOM else ("[" if lo[2] == 0 else "(") + _shown(lo[1])
    right = "+inf)" if hi == TOP else _shown(hi[1]) + ("]" if hi[2] == 1 else ")")
    return f"{left}, {right}"


class IntervalSet:
    """A set of values given as sorted, disjoint, non-adjacent intervals of cuts."""

    __slots__ = ("los", "his")

    def __init__(self, intervals=()) -> None:
        self.los: list[tuple] = []
        self.his: list[tuple] = []
        for lo, hi in intervals:
            self.add(lo, hi)

    @classmethod
    def whole(cls) -> IntervalSet:
        """Every non-NULL value."""
        s = cls()
        s.los.append(BOTTOM)
        s.his.append(TOP)
        return s

    # --- queries -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.los)

    def __bool__(self) -> bool:
        return bool(self.los)

    def __iter__(self):
        return iter(zip(self.los, self.his))

    def __eq__(self, other) -> bool:
        return isinstance(other, IntervalSet) and self.los == other.los and self.his == other.his

    def __repr__(self) -> str:
        return "IntervalSet(" + " ∪ ".join(describe(lo, hi) for lo, hi in self) + ")"

    def is_whole(self) -> bool:
        return len(self.los) == 1 and self.los[0] == BOTTOM and self.his[0] == TOP

    def contains(self, v) -> bool:
        """Is the value ``v`` in the set? (NULL never is.)"""
        if v is None:
            return False
        if v.__class__ is str:
            v = ck(v)
        c = (1, v, 0)
        los = self.los
        i = bisect_right(los, c) - 1
        return i >= 0 and c < self.his[i]

    def covers(self, lo: tuple, hi: tuple) -> bool:
        """Is all of ``[lo, hi)`` in the set? (An empty interval always is.)"""
        if not lo < hi:
            return True
        i = bisect_right(self.los, lo) - 1
        return i >= 0 and self.his[i] >= hi

    def end_of(self, c: tuple) -> tuple:
        """The upper end of the interval holding the cut ``c``, or ``c`` when none does: the set
        covers ``[c, end_of(c))`` and not the value just above it."""
        i = bisect_right(self.los, c) - 1
        if i >= 0 and c < self.his[i]:
            return self.his[i]
        return c

    def start_of(self, c: tuple) -> tuple:
        """The lower end of the interval reaching up to the cut ``c``, or ``c`` when none does:
        the set covers ``[start_of(c), c)``."""
        i = bisect_left(self.his, c)
        if i < len(self.los) and self.los[i] < c:
            return self.los[i]
        return c

    def missing(self, lo: tuple, hi: tuple) -> list[tuple[tuple, tuple]]:
        """The pieces of ``[lo, hi)`` that are not in the set, in order."""
        out = []
        if not lo < hi:
            return out
        los, his = self.los, self.his
        cur = lo
        i = bisect_right(his, lo)  # first interval ending above lo
        n = len(los)
        while i < n and los[i] < hi:
            if los[i] > cur:
                out.append((cur, los[i]))
            if his[i] > cur:
                cur = his[i]
            i += 1
        if cur < hi:
            out.append((cur, hi))
        return out

    def overlaps(self, lo: tuple, hi: tuple) -> bool:
        """Does any value of ``[lo, hi)`` lie in the set?"""
        if not lo < hi:
            return False
        i = bisect_right(self.his, lo)
        return i < len(self.los) and self.los[i] < hi

    # --- changes -----------------------------------------------------------------------------
    def add(self, lo: tuple, hi: tuple) -> None:
        """Add ``[lo, hi)``, merging it with the intervals it overlaps or touches."""
        if not lo < hi:
            return
        los, his = self.los, self.his
        i = bisect_left(his, lo)  # first interval ending at or above lo (touching counts)
        j = bisect_right(los, hi)  # first interval starting above hi
        if i < j:
            if los[i] < lo:
                lo = los[i]
            if his[j - 1] > hi:
                hi = his[j - 1]
        los[i:j] = [lo]
        his[i:j] = [hi]

    def subtract(self, lo: tuple, hi: tuple) -> None:
        """Remove ``[lo, hi)``, splitting an interval that holds it strictly inside."""
        if not lo < hi:
            return
        los, his = self.los, self.his
        i = bisect_right(his, lo)  # first interval ending above lo
        j = bisect_left(los, hi)  # first interval starting at or above hi
        if i >= j:
            return
        new_lo, new_hi = [], []
        if los[i] < lo:
            new_lo.append(los[i])
            new_hi.append(lo)
        if his[j - 1] > hi:
            new_lo.append(hi)
            new_hi.append(his[j - 1])
        los[i:j] = new_lo
        his[i:j] = new_hi

    def clear(self) -> None:
        self.los.clear()
        self.his.clear()

    def copy(self) -> IntervalSet:
        s = IntervalSet()
        s.los = list(self.los)
        s.his = list(self.his)
        return s

"""Property tests of ``dataflow/intervals.py`` against a brute-force model.

Intervals have integer ends in 0..10 (or none). Between two integers nothing changes membership,
so the model is the set of *probe points* -1, -0.5, 0, 0.5, ..., 10.5, 11: each integer stands
for itself and each half-integer for the open gap around it. An interval's probe points are
computed from plain comparisons (``> v``, ``>= v``, ...), not from the cut encoding under test.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from noria_py.dataflow.intervals import (
    BOTTOM,
    TOP,
    IntervalSet,
    above,
    below,
    in_interval,
    interval_of,
    point,
)

PROBES = [x / 2 for x in range(-2, 23)]  # -1 .. 11 in steps of 0.5


def lo_ok(cut, p) -> bool:
    if cut == BOTTOM:
        return True
    if cut == TOP:
        return False
    return p >= cut[1] if cut[2] == 0 else p > cut[1]


def hi_ok(cut, p) -> bool:
    if cut == TOP:
        return True
    if cut == BOTTOM:
        return False
    return p < cut[1] if cut[2] == 0 else p <= cut[1]


def points(lo, hi) -> set:
    return {p for p in PROBES if lo_ok(lo, p) and hi_ok(hi, p)}


cuts = st.one_of(
    st.just(BOTTOM),
    st.just(TOP),
    st.builds(below, st.integers(0, 10)),
    st.builds(above, st.integers(0, 10)),
)
intervals = st.tuples(cuts, cuts)
ops = st.lists(st.tuples(st.sampled_from(["add", "sub"]), intervals), max_size=25)


def check_canonical(s: IntervalSet) -> None:
    assert len(s.los) == len(s.his)
    for k in range(len(s.los)):
        assert s.los[k] < s.his[k], s  # no empty interval
        if k + 1 < len(s.los):
            assert s.his[k] < s.los[k + 1], s  # disjoint and not touching (else merged)


def build(seq) -> tuple[IntervalSet, set]:
    s = IntervalSet()
    model: set = set()
    for op, (lo, hi) in seq:
        if op == "add":
            s.add(lo, hi)
            model |= points(lo, hi)
        else:
            s.subtract(lo, hi)
            model -= points(lo, hi)
        check_canonical(s)
    return s, model


def first_point_from(cut):
    """The smallest probe point at or above ``cut``."""
    if cut == BOTTOM:
        return PROBES[0]
    v, side = cut[1], cut[2]
    return v if side == 0 else v + 0.5


@settings(max_examples=500)
@given(ops)
def test_membership_matches_model(seq):
    s, model = build(seq)
    for p in PROBES:
        assert s.contains(p) == (p in model), (p, s)
    assert not s.contains(None)


@settings(max_examples=500)
@given(ops, intervals)
def test_covers_and_missing_match_model(seq, req):
    s, model = build(seq)
    lo, hi = req
    want = points(lo, hi)
    assert s.covers(lo, hi) == (want <= model)
    assert s.overlaps(lo, hi) == bool(want & model)
    pieces = s.missing(lo, hi)
    got: set = set()
    prev_hi = None
    for plo, phi in pieces:
        assert plo < phi
        assert lo <= plo and phi <= hi
        if prev_hi is not None:
            assert prev_hi < plo  # in order, separated by something covered
        prev_hi = phi
        piece_points = points(plo, phi)
        assert not (piece_points & got)
        got |= piece_points
    assert got == want - model
    # filling exactly the missing pieces covers the request
    for plo, phi in pieces:
        s.add(plo, phi)
    assert s.covers(lo, hi)


@settings(max_examples=300)
@given(ops, cuts)
def test_end_and_start_of_covered_run(seq, c):
    s, model = build(seq)
    if c == TOP:
        return
    e = s.end_of(c)
    assert e >= c
    assert points(c, e) <= model
    if e != TOP:
        assert first_point_from(e) not in model
    if c == BOTTOM:
        return
    b = s.start_of(c)
    assert b <= c
    assert points(b, c) <= model
    if b != BOTTOM and b != c:
        assert b > BOTTOM
    if b != BOTTOM:
        # the value just below b is not in the set
        below_b = [p for p in PROBES if hi_ok(b, p)]
        if below_b:
            assert below_b[-1] not in model


@given(ops)
def test_add_then_subtract_everything_is_empty(seq):
    s, _ = build(seq)
    s.subtract(BOTTOM, TOP)
    assert not s and len(s) == 0


@given(st.lists(st.tuples(st.sampled_from([">", ">=", "<", "<="]), st.integers(0, 10))))
def test_interval_of_sql_bounds(bounds):
    lo, hi = interval_of(bounds)
    for p in PROBES:
        want = all({">": p > v, ">=": p >= v, "<": p < v, "<=": p <= v}[op] for op, v in bounds)
        assert in_interval(p, lo, hi) == want
    assert not in_interval(None, lo, hi)


def test_whole_and_point():
    s = IntervalSet.whole()
    assert s.is_whole() and s.contains(-(10**9)) and s.contains("x") is True
    lo, hi = point(5)
    s.subtract(lo, hi)
    assert not s.contains(5) and s.contains(4) and s.contains(5.5)
    assert s.missing(below(4), above(6)) == [(below(5), above(5))]
    s.add(lo, hi)
    assert s.is_whole()


def test_adjacent_intervals_merge():
    s = IntervalSet()
    s.add(below(1), below(3))  # [1, 3)
    s.add(below(3), above(5))  # [3, 5]
    assert list(s) == [(below(1), above(5))]
    s.add(above(7), TOP)  # (7, +inf)
    s.add(above(5), below(6))  # (5, 6): touches [1, 5] but not (7, ...)
    assert list(s) == [(below(1), below(6)), (above(7), TOP)]


@given(st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5))
def test_int_cut_keeps_the_same_integers(a, b, x):
    from noria_py.dataflow.intervals import int_cut

    for lo, hi in ((above(a), above(b)), (below(a), above(b)), (above(a), below(b))):
        assert in_interval(x, lo, hi) == in_interval(x, int_cut(lo), int_cut(hi))
    s = IntervalSet()
    s.add(int_cut(below(0)), int_cut(above(3)))
    s.add(int_cut(below(4)), int_cut(above(9)))
    assert len(s) == 1

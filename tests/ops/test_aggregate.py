from collections import Counter
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.aggregate import Aggregate, AggSpec

from .helpers import Stub, bag, small, valid_history


def make(global_group=False):
    specs = [
        AggSpec("COUNT", []),
        AggSpec("COUNT", [1]),
        AggSpec("SUM", [1]),
        AggSpec("MIN", [1]),
        AggSpec("MAX", [1]),
        AggSpec("AVG", [1]),
        AggSpec("COUNT", [1], distinct=True),
        AggSpec("GROUP_CONCAT", [1], kind="int"),
    ]
    ng = 0 if global_group else 1
    names = [f"c{i}" for i in range(ng + len(specs))]
    parent = Stub(2)
    if global_group:
        # the input row is just the argument column at position 1: shift to (x,) form
        specs = [AggSpec(s.func, [0] if s.args else [], s.distinct, s.kind) for s in specs]
    return Aggregate(parent, ng, specs, names, ["int"] * len(names))


def reference(rows: Counter):
    groups: dict = {}
    for row, c in rows.items():
        for _ in range(c):
            groups.setdefault(row[:1], []).append(row[1])
    out = Counter()
    for key, vals in groups.items():
        nn = [v for v in vals if v is not None]
        avg = None
        if nn:
            avg = (Decimal(sum(nn)) / Decimal(len(nn))).quantize(Decimal("0.0001"))
        gc = ",".join(str(v) for v in sorted(nn)) if nn else None
        out[
            key
            + (
                len(vals),
                len(nn),
                sum(nn) if nn else None,
                min(nn) if nn else None,
                max(nn) if nn else None,
                avg,
                len(set(nn)),
                gc,
            )
        ] += 1
    return out


@given(valid_history(st.tuples(st.integers(0, 2), small), max_size=40), st.integers(0, 40))
def test_matches_recomputation_under_any_split(history, split):
    a = make()
    out = a.on_input(0, history[:split]) + a.on_input(0, history[split:])
    net = +bag(history)
    assert bag(out) == reference(net)
    assert bag(a.contents()) == reference(net)
    b = make()
    one = []
    for rec in history:
        one.extend(b.on_input(0, [rec]))
    assert bag(one) == bag(out)


def test_min_max_exact_after_deleting_extreme():
    a = make()
    a.on_input(0, [((1, 5), 1), ((1, 9), 1), ((1, 7), 1)])
    out = a.on_input(0, [((1, 9), -1)])
    new = [r for r, m in out if m > 0][0]
    assert new[4] == 5 and new[5] == 7


def test_global_group_exists_when_empty():
    a = make(global_group=True)
    assert bag(a.contents()) == Counter({(0, 0, None, None, None, None, 0, None): 1})
    out = a.on_input(0, [((3,), 1)])
    assert bag(out) == Counter(
        {(0, 0, None, None, None, None, 0, None): -1, (1, 1, 3, 3, 3, Decimal("3.0000"), 1, "3"): 1}
    )
    out = a.on_input(0, [((3,), -1)])
    assert (0, 0, None, None, None, None, 0, None) in bag(out)


def test_float_sums_leave_no_residue():
    a = Aggregate(Stub(2), 1, [AggSpec("SUM", [1], kind="float")], ["g", "s"], ["int", "float"])
    a.on_input(0, [((1, 0.1), 1), ((1, 0.2), 1)])
    out = a.on_input(0, [((1, 0.1), -1)])
    assert [r for r, m in out if m > 0] == [(1, 0.2)]

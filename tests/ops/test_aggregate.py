from collections import Counter
from decimal import Decimal

from hypothesis import example, given
from hypothesis import strategies as st

from noria_py.dataflow.ops.aggregate import Aggregate, AggSpec
from noria_py.sql import values as V
from noria_py.sql.functions import AGGREGATES

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


def shown(records: Counter) -> Counter:
    """Records of ``make()``'s aggregate with AVG as MySQL shows it: the quotient keeps more
    digits inside (``V.decimal_quotient``) and is shown rounded to the argument's scale + 4."""
    out = Counter()
    for row, m in records.items():
        out[row[:6] + (V.display_round(row[6], 4),) + row[7:]] += m
    return out


@given(valid_history(st.tuples(st.integers(0, 2), small), max_size=40), st.integers(0, 40))
@example([((1, 0), 1), ((1, 0), 1), ((1, 1), 1)], 0)  # AVG 1/3: 0.333333333 inside, 0.3333 shown
def test_matches_recomputation_under_any_split(history, split):
    a = make()
    out = a.on_input(0, history[:split]) + a.on_input(0, history[split:])
    net = +bag(history)
    assert shown(bag(out)) == reference(net)
    assert shown(bag(a.contents())) == reference(net)
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


REGISTERED = ["VAR_POP", "VAR_SAMP", "STD", "STDDEV_SAMP", "BIT_AND", "BIT_OR", "BIT_XOR"]


def make_registered(kind="float"):
    specs = [AggSpec(f, [1], kind=kind) for f in REGISTERED]
    kinds = ["int"] + [s.output_kind() for s in specs]
    return Aggregate(Stub(2), 1, specs, [f"c{i}" for i in range(len(kinds))], kinds)


def registered_reference(rows: Counter):
    """Each group's values computed from scratch by the registered accumulators."""
    groups: dict = {}
    for row, c in rows.items():
        groups.setdefault(row[:1], []).extend([row[1]] * c)
    out = Counter()
    for key, vals in groups.items():
        accs = [AGGREGATES[f].factory() for f in REGISTERED]
        for acc in accs:
            for v in vals:
                acc.step(v)
        out[key + tuple(acc.value() for acc in accs)] += 1
    return out


floats = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([0.1, 0.2, -1.5, 1e10, 3.3]))


@given(valid_history(st.tuples(st.integers(0, 2), floats), max_size=40), st.integers(0, 40))
def test_registered_aggregates_retract_to_the_from_scratch_value(history, split):
    # exactly equal (not close): the moments are exact, so deleting leaves no residue
    a = make_registered()
    out = a.on_input(0, history[:split]) + a.on_input(0, history[split:])
    net = +bag(history)
    assert bag(out) == registered_reference(net)
    assert bag(a.contents()) == registered_reference(net)


def test_registered_aggregates_take_multiplicities():
    # a bulk replay feeds consolidated rows: (row, 3) is three rows
    a = make_registered(kind="int")
    a.on_input(0, [((1, 6), 3), ((1, 1), 1)])
    b = make_registered(kind="int")
    b.on_input(0, [((1, 6), 1)] * 3 + [((1, 1), 1)])
    assert bag(a.contents()) == bag(b.contents())
    a.on_input(0, [((1, 6), -2)])
    assert bag(a.contents()) == registered_reference(Counter({(1, 6): 1, (1, 1): 1}))


def test_registered_aggregates_of_no_rows_and_of_one_row():
    a = make_registered(kind="int")
    assert [s.nullable() for s in a.aggs] == [True, True, True, True, False, False, False]
    out = a.on_input(0, [((1, 5), 1)])
    # one row: population forms are 0, sample forms NULL
    assert bag(out) == Counter({(1, 0.0, None, 0.0, None, 5, 5, 5): 1})
    out = a.on_input(0, [((1, None), 1)])
    assert bag(out) == Counter()  # a NULL changes no value
    out = a.on_input(0, [((1, 5), -1)])
    # only the NULL row is left: the group remains, with NULL and the bits of no rows
    assert bag(out) == Counter(
        {(1, 0.0, None, 0.0, None, 5, 5, 5): -1, (1, None, None, None, None, 2**64 - 1, 0, 0): 1}
    )
    assert a.aggs[0].output_kind() == "float" and a.aggs[4].output_kind() == "int"


def make_strings():
    """Groups and MIN/MAX/GROUP_CONCAT over strings of a case-insensitive collation."""
    specs = [
        AggSpec("COUNT", []),
        AggSpec("MIN", [1], kind=V.STR),
        AggSpec("MAX", [1], kind=V.STR),
        AggSpec("GROUP_CONCAT", [1], kind=V.STR),
        AggSpec("COUNT", [1], distinct=True, kind=V.STR),
    ]
    parent = Stub(2)
    parent.kinds = [V.STR, V.STR]
    return Aggregate(
        parent, 1, specs, [f"c{i}" for i in range(6)], [V.STR, V.INT, V.STR, V.STR, V.STR, V.INT]
    )


words = st.sampled_from([None, "a", "A", "b", "B", "ab"])


@given(st.lists(st.tuples(words, words), max_size=25), st.booleans())
@example([("x", "a"), ("x", "A"), ("x", "b"), ("x", "B")], True)  # equal extremes: which shows
@example([("x", "b"), ("x", "B"), ("x", "a"), ("x", "A")], True)
@example([("b", None), ("B", "a"), ("b", "A")], True)  # one group, two spellings: in order
def test_evaluate_equals_the_maintained_aggregate(rows, strings):
    """``evaluate`` (a range read's post-lookup aggregate) gives what the maintained operator
    holds after the same insertions, in the same order (which spelling of equal strings MIN and
    MAX show depends on it)."""
    if strings:
        agg = make_strings()
    else:
        agg = make()
        rows = [(len(a or "") % 2, len(b) if b is not None else None) for a, b in rows]
    batch = [(r, 1) for r in rows]
    maintained = make_strings() if strings else make()
    for rec in batch:  # one at a time: the order the rows arrive in
        maintained.on_input(0, [rec])
    assert Counter(agg.evaluate(batch)) == bag(maintained.contents())
    assert agg.groups == {}  # the operator's own state is untouched


def test_evaluate_global_group_over_nothing():
    agg = make(global_group=True)
    assert agg.evaluate([]) == [agg.empty_row()]

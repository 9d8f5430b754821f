from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.distinct import Distinct

from .helpers import Stub, bag, small, valid_history


def test_emits_on_first_and_last_copy():
    d = Distinct(Stub(1))
    assert d.on_input(0, [((1,), 1)]) == [((1,), 1)]
    assert d.on_input(0, [((1,), 1)]) == []
    assert d.on_input(0, [((1,), -1)]) == []
    assert d.on_input(0, [((1,), -1)]) == [((1,), -1)]


@given(valid_history(st.tuples(small)), st.integers(0, 25))
def test_one_by_one_equals_sum(history, split):
    a, b = Distinct(Stub(1)), Distinct(Stub(1))
    one = []
    for rec in history:
        one.extend(a.on_input(0, [rec]))
    two = b.on_input(0, history[:split]) + b.on_input(0, history[split:])
    assert bag(one) == bag(two)
    # and the output is the set of rows present
    present = {r for r, m in bag(history).items() if m > 0}
    assert set(bag(one)) == present
    assert all(m == 1 for m in bag(one).values())

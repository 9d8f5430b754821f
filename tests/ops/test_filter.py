from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.filter import Filter

from .helpers import Stub, bag, small, valid_history


def make():
    return Filter(Stub(2), lambda r, p: r[0] is not None and r[0] > 0, "#0 > 0")


def test_passes_only_true_rows():
    f = make()
    out = f.on_input(0, [((1, 2), 1), ((0, 2), 1), ((None, 1), 1), ((3, 3), -1)])
    assert out == [((1, 2), 1), ((3, 3), -1)]


@given(valid_history(st.tuples(small, small)), st.integers(0, 25))
def test_one_by_one_equals_sum(history, split):
    a, b = make(), make()
    one = []
    for rec in history:
        one.extend(a.on_input(0, [rec]))
    summed = b.on_input(0, history[:split]) + b.on_input(0, history[split:])
    assert bag(one) == bag(summed) == bag(b.on_input(0, history) if False else summed)

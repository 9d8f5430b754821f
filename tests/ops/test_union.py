from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.union import Union

from .helpers import Stub, bag, small


def test_bag_union_passes_everything():
    a, b = Stub(1), Stub(1)
    u = Union([a, b], ["x"], ["int"])
    assert u.on_input(0, [((1,), 1)]) == [((1,), 1)]
    assert u.on_input(1, [((1,), 1)]) == [((1,), 1)]
    a.rows = [(1,)]
    b.rows = [(1,), (2,)]
    assert bag(u.contents()) == bag([((1,), 2), ((2,), 1)])


@given(st.lists(st.tuples(st.integers(0, 1), small, st.sampled_from([1, -1])), max_size=20))
def test_one_by_one_equals_sum(events):
    u = Union([Stub(1), Stub(1)], ["x"], ["int"])
    one = []
    for port, v, m in events:
        one.extend(u.on_input(port, [((v,), m)]))
    summed = []
    for port in (0, 1):
        summed.extend(u.on_input(port, [((v,), m) for p, v, m in events if p == port]))
    assert bag(one) == bag(summed)

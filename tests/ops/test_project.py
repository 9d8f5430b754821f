from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.project import Project

from .helpers import Stub, bag, small, valid_history


def test_column_picks_and_expressions():
    p = Project(Stub(3), [None, None], [2, 0], ["a", "b"], ["int", "int"], "#2,#0")
    assert p.on_input(0, [((1, 2, 3), 1)]) == [((3, 1), 1)]
    fn = lambda r, p: None if r[0] is None else r[0] * 10  # noqa: E731
    p2 = Project(Stub(2), [fn], [None], ["x"], ["int"], "#0*10")
    assert p2.on_input(0, [((2, 0), -1), ((None, 1), 1)]) == [((20,), -1), ((None,), 1)]


def test_empty_projection_for_global_aggregates():
    p = Project(Stub(2), [], [], [], [], "")
    assert p.on_input(0, [((1, 2), 1)]) == [((), 1)]


@given(valid_history(st.tuples(small, small, small)))
def test_one_by_one_equals_sum(history):
    p = Project(Stub(3), [None, None], [1, 2], ["a", "b"], ["int", "int"], "#1,#2")
    one = []
    for rec in history:
        one.extend(p.on_input(0, [rec]))
    assert bag(one) == bag(p.on_input(0, history))

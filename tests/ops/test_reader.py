from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.reader import Reader

from .helpers import Stub, small, valid_history


def test_keyed_lookup_and_hidden_columns():
    r = Reader(Stub(3), key_cols=[2], visible=2)
    r.on_input(0, [((1, "a", 7), 1), ((2, "b", 7), 1), ((3, "c", 8), 1)])
    assert sorted(r.lookup((7,))) == [(1, "a"), (2, "b")]
    r.on_input(0, [((1, "a", 7), -1)])
    assert r.lookup((7,)) == ((2, "b"),)
    assert r.lookup((9,)) == ()


def test_top_k_stays_exact_when_a_top_row_is_deleted():
    r = Reader(Stub(2), key_cols=[], visible=2, order=[(1, True)], limit=2)
    r.on_input(0, [((i, i * 10), 1) for i in range(6)])
    assert r.lookup(()) == ((5, 50), (4, 40))
    r.on_input(0, [((5, 50), -1)])
    assert r.lookup(()) == ((4, 40), (3, 30))


def test_nulls_sort_first_ascending():
    r = Reader(Stub(1), key_cols=[], visible=1, order=[(0, False)])
    r.on_input(0, [((2,), 1), ((None,), 1), ((1,), 1)])
    assert r.lookup(()) == ((None,), (1,), (2,))


@given(valid_history(st.tuples(st.integers(0, 2), small), max_size=40), st.integers(0, 3))
def test_ordered_limit_equals_sorted_prefix(history, k):
    r = Reader(Stub(2), key_cols=[0], visible=2, order=[(1, False)], limit=k)
    for rec in history:
        r.on_input(0, [rec])
    present: dict = {}
    for row, m in history:
        present[row] = present.get(row, 0) + m
    for key in range(3):
        rows = []
        for row, c in present.items():
            if row[0] == key:
                rows.extend([row] * c)
        rows.sort(key=lambda x: (x[1] is not None, x[1] if x[1] is not None else 0))
        assert list(r.lookup((key,))) == rows[:k]

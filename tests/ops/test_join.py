from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.join import Join

from .helpers import Stub, bag, small, valid_history


def expected(lefts: Counter, rights: Counter, outer: bool) -> Counter:
    out: Counter = Counter()
    for lrow, lc in lefts.items():
        matched = False
        for r, rc in rights.items():
            if lrow[0] is not None and lrow[0] == r[0]:
                out[lrow + r] += lc * rc
                matched = True
        if outer and not matched:
            out[lrow + (None, None)] += lc
    return Counter({k: v for k, v in out.items() if v})


def test_left_join_pads_then_matches():
    j = Join(Stub(2), Stub(2), [0], [0], outer=True)
    assert j.on_input(0, [((1, "a"), 1)]) == [((1, "a", None, None), 1)]
    out = j.on_input(1, [((1, "x"), 1)])
    assert bag(out) == bag([((1, "a", None, None), -1), ((1, "a", 1, "x"), 1)])
    out = j.on_input(1, [((1, "x"), -1)])
    assert bag(out) == bag([((1, "a", None, None), 1), ((1, "a", 1, "x"), -1)])


def test_null_keys_never_match():
    j = Join(Stub(2), Stub(2), [0], [0], outer=False)
    j.on_input(1, [((None, 1), 1)])
    assert j.on_input(0, [((None, 2), 1)]) == []


rows = st.tuples(small, st.integers(0, 2))
events = valid_history(st.tuples(st.integers(0, 1), rows), max_size=30)


@given(events, st.booleans())
def test_any_interleaving_matches_join_of_final_inputs(history, outer):
    # history items are ((side, row), sign); a delete removes a row previously inserted on a side
    j = Join(Stub(2), Stub(2), [0], [0], outer=outer)
    out = []
    lefts: Counter = Counter()
    rights: Counter = Counter()
    for (side, row), m in history:
        out.extend(j.on_input(side, [(row, m)]))
        (lefts if side == 0 else rights)[row] += m
    assert bag(out) == expected(+lefts, +rights, outer)
    assert bag(j.contents()) == expected(+lefts, +rights, outer)


@given(st.lists(rows, max_size=8), st.lists(rows, max_size=8))
def test_self_join_of_one_batch(a, b):
    # the same batch arriving on both ports (a self-join) counts each pair exactly once
    j = Join(Stub(2), Stub(2), [0], [0], outer=False)
    batch = [(r, 1) for r in a]
    out = j.on_input(0, batch) + j.on_input(1, batch)
    assert bag(out) == expected(Counter(a), Counter(a), False)
    batch2 = [(r, 1) for r in b]
    out2 = j.on_input(0, batch2) + j.on_input(1, batch2)
    both = Counter(a) + Counter(b)
    assert bag(out + out2) == expected(both, both, False)

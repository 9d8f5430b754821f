"""Shared tools for operator unit tests: a stub parent and multiset comparison."""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from noria_py.dataflow.node import Node


class Stub(Node):
    """A parent with fixed columns and no behaviour of its own."""

    kind = "stub"

    def __init__(self, width: int):
        super().__init__([], [f"c{i}" for i in range(width)], ["int"] * width)
        self.rows: list = []

    def contents(self):
        return [(r, 1) for r in self.rows]


def bag(batch) -> Counter:
    """Net multiset of a batch (rows with non-zero net multiplicity)."""
    c: Counter = Counter()
    for row, m in batch:
        c[row] += m
    return Counter({r: m for r, m in c.items() if m})


def valid_history(rows_st, max_size=25):
    """A sequence of inserts and deletes where each delete removes a row currently present."""

    @st.composite
    def build(draw):
        present: list = []
        ops = []
        for _ in range(draw(st.integers(0, max_size))):
            if present and draw(st.booleans()):
                r = present.pop(draw(st.integers(0, len(present) - 1)))
                ops.append((r, -1))
            else:
                r = draw(rows_st)
                present.append(r)
                ops.append((r, 1))
        return ops

    return build()


small = st.one_of(st.none(), st.integers(-3, 3))

"""Distinct: emits a row when its count rises from zero and retracts it when it falls to zero."""

from __future__ import annotations

from ..node import FULL, Node


class Distinct(Node):
    kind = "distinct"
    materialization = FULL

    def __init__(self, parent: Node):
        super().__init__([parent], parent.columns, parent.kinds)
        self.counts: dict = {}

    def on_input(self, port: int, batch: list) -> list:
        counts = self.counts
        out = []
        for row, m in batch:
            old = counts.get(row, 0)
            new = old + m
            if new:
                counts[row] = new
            else:
                del counts[row]
            if old <= 0 < new:
                out.append((row, 1))
            elif new <= 0 < old:
                out.append((row, -1))
        return out

    def contents(self) -> list:
        return [(row, 1) for row, c in self.counts.items() if c > 0]

    def state_size(self):
        return (len(self.counts), len(self.counts))

    def on_removed(self):
        self.counts = {}

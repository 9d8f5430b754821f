"""Filter: passes the records whose predicate is true (NULL counts as false)."""

from __future__ import annotations

from ..node import Node


class Filter(Node):
    kind = "filter"

    def __init__(self, parent: Node, pred, text: str):
        super().__init__([parent], parent.columns, parent.kinds)
        self.pred = pred
        self.text = text

    def on_input(self, port: int, batch: list) -> list:
        pred = self.pred
        return [rec for rec in batch if pred(rec[0], None)]

    def contents(self) -> list:
        return self.on_input(0, self.parents[0].contents())

    def describe(self) -> str:
        return f"filter {self.text}"

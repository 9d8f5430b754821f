"""Union (bag semantics): every parent's records pass through unchanged. UNION DISTINCT is a
Union followed by a Distinct."""

from __future__ import annotations

from ..node import Node


class Union(Node):
    kind = "union"

    def __init__(self, parents: list[Node], names, kinds):
        super().__init__(parents, names, kinds)

    def on_input(self, port: int, batch: list) -> list:
        return batch

    def contents(self) -> list:
        out = []
        for p in self.parents:
            out.extend(p.contents())
        return out

    def query(self, cols, key) -> list:
        out = []
        for p in self.parents:
            out.extend(p.query(cols, key))
        return out

    def describe(self) -> str:
        return f"union of {len(self.parents)}"

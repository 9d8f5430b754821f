"""Union (bag semantics): every parent's records pass through unchanged. UNION DISTINCT is a
Union followed by a Distinct."""

from __future__ import annotations

from ..node import Node, pass_congruent


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

    # --- planning (plan_upqueries.py): every parent gets the same columns ----------------------
    def traceable(self, cols) -> bool:
        return all(p.traceable(cols) for p in self.parents)

    def range_traceable(self, cols, col) -> bool:
        return all(p.range_traceable(cols, col) for p in self.parents)

    def plan_need(self, planner, cols) -> None:
        planner.pass_through(self, cols)

    def plan_pass(self, planner, cols) -> None:
        for p in self.parents:
            planner.need(p, cols)

    def plan_range(self, planner, cols, col) -> None:
        for p in self.parents:
            planner.need_range(p, cols, col)

    def congruent(self, port, carriers) -> bool:
        return pass_congruent(self, carriers)

    # --- ranged upqueries (issue 8; see ops/reader.py RangeReader) ---------------------------
    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """Every parent's ``query_range``. With a limit each parent may answer a different
        sub-range; the union answers the smallest and drops the rows beyond it."""
        from ..intervals import in_interval

        parts = [p.query_range(cols, key, col, lo, hi, limit, desc) for p in self.parents]
        if desc:
            lo = max(p[1] for p in parts)
        else:
            hi = min(p[2] for p in parts)
        out = []
        for rows, _plo, _phi in parts:
            out.extend(rec for rec in rows if in_interval(rec[0][col], lo, hi))
        return out, lo, hi

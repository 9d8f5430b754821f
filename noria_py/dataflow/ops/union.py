"""Union (bag semantics): every parent's records pass through unchanged. UNION DISTINCT is a
Union followed by a Distinct."""

from __future__ import annotations

from ..domain import in_range, keyset
from ..intervals import in_interval
from ..node import Node, pass_congruent
from ..partial import key_of


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

    def replay_op(self):
        return ("union",)

    # --- upqueries as messages (domain.py) ------------------------------------------------
    # Every parent is asked; with ``union_buffering`` the pieces of one upquery are held (per
    # upquery and path below, so chained unions work) until every parent has answered, and with
    # ``union_fold`` a delta from a parent that has answered is folded into the held piece.

    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        group = (up.id, hops)
        buffers = df.buffers.setdefault(self.id, {})
        if df.mechanisms["union_buffering"]:
            buffers[group] = {
                "waiting": set(range(len(self.parents))),
                "rows": [],
                "cols": cols,
                "keys": keyset(keys),
                "rng": rng,
                "span": None,  # ranged: the sub-range every parent answered so far
            }
        for port in range(len(self.parents)):
            h = (self.id, port, cols, tuple(keys))
            df.request(self, port, up, hops + (h,), cols, keys, rng)

    def on_response(self, df, port, up, hops, rows, span=None) -> None:
        below = hops[:-1]
        if not df.mechanisms["union_buffering"]:
            df.respond(self, up, below, rows, span)
            return
        buffers = df.buffers.get(self.id, {})
        buf = buffers.get((up.id, below))
        if buf is None or port not in buf["waiting"]:
            return  # a stale or duplicate piece
        buf["waiting"].discard(port)
        buf["rows"].extend(rows)
        if span is not None:
            # a parent that answered a bounded request in part: the union answers what every
            # parent answered (each piece starts at lo, or ends at hi when descending)
            have = buf["span"]
            buf["span"] = span if have is None else (max(have[0], span[0]), min(have[1], span[1]))
        if not buf["waiting"]:
            del buffers[(up.id, below)]
            span = buf["span"]
            rows = buf["rows"]
            if span is not None:  # drop the rows beyond it (as query_range does)
                rows = in_range(rows, (buf["rng"][0], span[0], span[1]))
            df.respond(self, up, below, rows, span)

    def fold_held(self, df, port, batch) -> None:
        if not df.mechanisms["union_fold"]:
            return
        for buf in df.buffers.get(self.id, {}).values():
            if port in buf["waiting"]:
                continue  # that parent's answer, still to come, includes this delta
            cols, want, rng = buf["cols"], buf["keys"], buf["rng"]
            for rec in batch:
                if key_of(rec[0], cols) in want and (
                    rng is None or in_interval(rec[0][rng[0]], rng[1], rng[2])
                ):
                    buf["rows"].append(rec)

    # --- ranged upqueries (issue 8; see ops/reader.py RangeReader) ---------------------------
    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """Every parent's ``query_range``. With a limit each parent may answer a different
        sub-range; the union answers the smallest and drops the rows beyond it."""
        parts = [p.query_range(cols, key, col, lo, hi, limit, desc) for p in self.parents]
        if desc:
            lo = max(p[1] for p in parts)
        else:
            hi = min(p[2] for p in parts)
        out = []
        for rows, _plo, _phi in parts:
            out.extend(rec for rec in rows if in_interval(rec[0][col], lo, hi))
        return out, lo, hi

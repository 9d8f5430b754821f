"""Filter: passes the records whose predicate is true (NULL counts as false).

A filter of a base table whose predicate is a conjunction of equalities of integer columns with
integer literals (and NULL tests) gives its contents from one lookup in base storage (the rows
with those values) instead of a scan of the whole table; the predicate still runs on what comes
back."""

from __future__ import annotations

import re

from ...sql import values as V
from ..node import Node, pass_congruent
from ..partial import has_unknown
from ..sqlrel import filter_rel, select
from ..sqlrel import pushed as _pushed

_EQ = re.compile(r"#(\d+) = (-?\d+)")
_NULL_TEST = re.compile(r"(NOT )?#\d+ IS NULL")
_INT64 = 1 << 63


class Filter(Node):
    kind = "filter"

    def __init__(self, parent: Node, pred, text: str):
        super().__init__([parent], parent.columns, parent.kinds)
        self.pred = pred
        self.text = text
        self._eq = None  # (columns, key) looked up for ``contents``, or False: see _equalities
        self._rel = None  # see sqlrel.pushed

    def on_input(self, port: int, batch: list) -> list:
        pred = self.pred
        return [rec for rec in batch if pred(rec[0], None)]

    def contents(self) -> list:
        pushed = _pushed(self)
        if pushed is not None:  # the predicate as SQL conditions of one query
            rel, sqls = pushed
            return select(rel.storage, rel, [], (), sqls)
        eq = self._eq
        if eq is None:
            eq = self._eq = self._equalities()
        if eq:
            return self.on_input(0, self.parents[0].query(*eq))
        return self.on_input(0, self.parents[0].contents())

    def _equalities(self):
        """``(columns, key)`` when the input is a base table and the predicate is a conjunction
        of ``#i = <integer>`` on integer columns (at least one) and NULL tests, and nothing else
        (no OR, no other term): the rows it passes are among those base storage looks up by
        that key. False otherwise."""
        parent = self.parents[0]
        if parent.kind != "base":
            return False
        want: dict = {}
        for part in self.text.split(" AND "):
            m = _EQ.fullmatch(part)
            if m is None:
                if _NULL_TEST.fullmatch(part):
                    continue  # (the predicate tests it on the rows looked up)
                return False
            col, value = int(m.group(1)), int(m.group(2))
            if col >= len(parent.kinds) or parent.kinds[col] != V.INT or abs(value) >= _INT64:
                return False
            if want.setdefault(col, value) != value:
                return False  # a column equal to two values: let the predicate say so
        if not want:
            return False
        cols = sorted(want)
        return (cols, tuple(want[c] for c in cols))

    def query(self, cols, key) -> list:
        if cols:
            pushed = _pushed(self)
            if pushed is not None:
                rel, sqls = pushed
                return select(rel.storage, rel, cols, key, sqls)
        return self.on_input(0, self.parents[0].query(cols, key))

    def answerer(self, cols):
        """The parent's answerer by the same columns, filtered (``Node._answerer_through``)."""
        return self._answerer_through(cols, list(cols))

    def sql_rel(self):
        """The input's SQL relation with this predicate as SQL conditions (``sqlrel``), when it
        is a conjunction of ``#i = <integer>`` on integer columns and NULL tests, whose SQL
        holds exactly where the predicate does; else None."""
        rel = self.parents[0].sql_rel()
        if rel is None:
            return None
        conds = []
        for part in self.text.split(" AND "):
            m = _EQ.fullmatch(part)
            if m is not None:
                col, value = int(m.group(1)), int(m.group(2))
                if col >= len(rel.kinds) or rel.kinds[col] != V.INT or abs(value) >= _INT64:
                    return None
                conds.append(f"{rel.cols[col]} = {value}")
                continue
            m = _NULL_TEST.fullmatch(part)
            if m is None:
                return None
            col = int(part[part.index("#") + 1 : part.index(" IS NULL")])
            if col >= len(rel.cols):
                return None
            conds.append(f"{rel.cols[col]} IS {'NOT ' if m.group(1) else ''}NULL")
        return filter_rel(rel, conds)

    def query_many(self, cols, keys) -> list:
        return self.on_input(0, self.parents[0].query_many(cols, keys))

    def on_probe(self, port: int, rows: list) -> list:
        pred = self.pred
        return [r for r in rows if has_unknown(r) or pred(r, None)]

    def describe(self) -> str:
        return f"filter {self.text}"

    def key_gate(self, port: int, carriers: dict):
        from ..partial import children_gate

        return children_gate(self, carriers)

    def source_column(self, col: int):
        return self.parents[0].source_column(col)

    def column_type(self, col: int):
        return self.parents[0].column_type(col)

    def base_tables(self):
        return self.parents[0].base_tables()

    # --- planning (plan_upqueries.py): a filter keeps its columns ------------------------------
    def traceable(self, cols) -> bool:
        return self.parents[0].traceable(cols)

    def range_traceable(self, cols, col) -> bool:
        return self.parents[0].range_traceable(cols, col)

    def stateless_to_base(self, cols) -> bool:
        return self.parents[0].stateless_to_base(cols)

    def plan_need(self, planner, cols) -> None:
        planner.pass_through(self, cols)

    def plan_pass(self, planner, cols) -> None:
        planner.need(self.parents[0], cols)

    def plan_range(self, planner, cols, col) -> None:
        planner.need_range(self.parents[0], cols, col)

    def congruent(self, port, carriers) -> bool:
        return pass_congruent(self, carriers)

    def replay_op(self):
        return ("where", self.pred)

    # --- upqueries as messages (domain.py): asked by the same columns; answers pass through
    # ``on_input`` (Node.on_response)
    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        hop = (self.id, 0, cols, tuple(keys))
        df.request(self, 0, up, hops + (hop,), cols, keys, rng)

    # --- ranged upqueries (issue 8; see ops/reader.py RangeReader) ---------------------------
    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """``query_range`` of the parent, filtered (the range it answered stays the same)."""
        rows, lo, hi = self.parents[0].query_range(cols, key, col, lo, hi, limit, desc)
        return self.on_input(0, rows), lo, hi

"""Project: computes each output column from the input row (column picks or expressions).

A query's last projection may compute a value MySQL refuses (an integer overflow, 1690) for
some row: the row keeps a ``Fault`` in that column (``faults`` marks the columns that may hold
one) and the read that returns it raises the error, as MySQL's read would."""

from __future__ import annotations

from operator import itemgetter

from ...errors import DataError
from ..node import Node
from ..partial import UNKNOWN, has_unknown, matches
from ..records import Fault
from ..sqlrel import pick_rel, pushed, select


class Project(Node):
    kind = "project"

    def __init__(
        self,
        parent: Node,
        fns: list,
        cols: list[int | None],
        names,
        kinds,
        text: str,
        faults: frozenset = frozenset(),
    ):
        super().__init__([parent], names, kinds)
        self.fns = fns if fns and len(fns) == len(cols) else [None] * len(cols)
        self.text = text
        self.faults = faults  # output columns that keep a Fault instead of raising
        self.faulted = False  # a Fault was ever produced: readers then look for them
        self.source_cols = cols  # input column per output column, None when computed
        self._rel = None  # (graph version, SqlRel or None, SQL per asked columns): sqlrel.pushed
        if not cols:
            self._map = lambda r: ()
        elif all(c is not None for c in cols):
            if len(cols) == 1:
                c0 = cols[0]
                self._map = lambda r: (r[c0],)
            elif cols == list(range(len(cols))) and len(cols) == len(parent.columns):
                self._map = None
            else:
                self._map = itemgetter(*cols)
        else:
            fs = tuple(fns)
            self._map = lambda r: tuple([f(r, None) for f in fs])

    def on_input(self, port: int, batch: list) -> list:
        m = self._map
        if m is None:
            return batch
        try:
            return [(m(r), k) for r, k in batch]
        except DataError:
            if not self.faults:
                raise
        return [(self._row(r), k) for r, k in batch]

    def _row(self, r) -> tuple:
        """One output row, a Fault in a column that may hold one when computing it fails."""
        out = []
        for i, (f, c) in enumerate(zip(self.fns, self.source_cols)):
            if c is not None:
                out.append(r[c])
                continue
            try:
                out.append(f(r, None))
            except DataError as e:
                if i not in self.faults:
                    raise
                self.faulted = True
                out.append(Fault(e))
        return tuple(out)

    def contents(self) -> list:
        return self.on_input(0, self.parents[0].contents())

    def query(self, cols, key) -> list:
        src = self.source_cols
        mapped = [src[c] for c in cols]
        if None in mapped:
            return [(r, m) for r, m in self.contents() if matches(r, cols, key)]
        if cols:
            # a pick of columns over base tables (and lookup joins) as one SQL relation
            # (``sqlrel.pushed``): the upquery reads only the picked columns, by one query
            got = pushed(self)
            if got is not None:
                rel, sqls = got
                return select(rel.storage, rel, cols, key, sqls)
        return self.on_input(0, self.parents[0].query(mapped, key))

    def answerer(self, cols):
        """By picked columns: the parent's answerer by their input columns, each record
        projected (``Node._answerer_through``)."""
        mapped = [self.source_cols[c] for c in cols]
        if None in mapped:
            return Node.answerer(self, cols)
        return self._answerer_through(cols, mapped)

    def query_many(self, cols, keys) -> list:
        src = self.source_cols
        mapped = [src[c] for c in cols]
        if None in mapped:
            return Node.query_many(self, cols, keys)
        return self.on_input(0, self.parents[0].query_many(mapped, keys))

    def on_probe(self, port: int, rows: list) -> list:
        out = []
        fns = self.fns
        src = self.source_cols
        for r in rows:
            unknown = has_unknown(r)
            row = []
            for f, c in zip(fns, src):
                if c is not None:
                    row.append(r[c])
                elif unknown:
                    row.append(UNKNOWN)
                else:
                    try:
                        row.append(f(r, None))
                    except DataError:
                        if not self.faults:
                            raise
                        row = list(self._row(r))
                        break
            out.append(tuple(row))
        return out

    def describe(self) -> str:
        return f"project {self.text}"

    def column_source(self, col: int):
        src = self.source_cols[col] if col < len(self.source_cols) else None
        return None if src is None else (0, src)  # a computed column: its select-list name

    def key_gate(self, port: int, carriers: dict):
        from ..partial import children_gate

        out = {i: carriers[c] for i, c in enumerate(self.source_cols) if c in carriers}
        return children_gate(self, out)

    def source_column(self, col: int):
        c = self.source_cols[col]
        return None if c is None else self.parents[0].source_column(c)

    def column_type(self, col: int):
        c = self.source_cols[col]
        return None if c is None else self.parents[0].column_type(c)

    def base_tables(self):
        return self.parents[0].base_tables()

    def sql_rel(self):
        if any(c is None for c in self.source_cols):
            return None
        rel = self.parents[0].sql_rel()
        if rel is None:
            return None
        return pick_rel(rel, self.source_cols)

    # --- planning (plan_upqueries.py): a column pick keeps the trace, a computed column breaks it
    def traceable(self, cols) -> bool:
        mapped = [self.source_cols[c] for c in cols]
        return all(m is not None for m in mapped) and self.parents[0].traceable(mapped)

    def range_traceable(self, cols, col) -> bool:
        src = self.source_cols
        mapped = [src[c] for c in cols]
        return (
            src[col] is not None
            and all(m is not None for m in mapped)
            and self.parents[0].range_traceable(mapped, src[col])
        )

    def stateless_to_base(self, cols) -> bool:
        mapped = [self.source_cols[c] for c in cols]
        return all(m is not None for m in mapped) and self.parents[0].stateless_to_base(mapped)

    def plan_need(self, planner, cols) -> None:
        planner.pass_through(self, cols)

    def plan_pass(self, planner, cols) -> None:
        mapped = [self.source_cols[c] for c in cols]
        planner.need(self.parents[0], None if any(m is None for m in mapped) else mapped)

    def plan_range(self, planner, cols, col) -> None:
        src = self.source_cols
        planner.need_range(self.parents[0], [src[c] for c in cols], src[col])

    def congruent(self, port, carriers) -> bool:
        # the fill key's values in this node's output: the columns picked from their carriers
        new = [{i for i, src in enumerate(self.source_cols) if src in s} for s in carriers]
        if any(not s for s in new):
            return not self.children  # a component is projected away
        return all(c.congruent(p, new) for c, p in self.children)

    def replay_op(self):
        return ("map", list(self.source_cols), list(self.fns))

    # --- upqueries as messages (domain.py): asked by the source columns; answers pass through
    # ``on_input`` (Node.on_response)
    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        src = self.source_cols
        mapped = tuple([src[c] for c in cols])
        if None in mapped:  # not traceable: the planner made this full
            raise RuntimeError(f"untraceable upquery through {self}")
        if rng is not None:
            if src[rng[0]] is None:  # pragma: no cover - the planner asks plain columns
                raise RuntimeError(f"untraceable ranged upquery through {self}")
            rng = (src[rng[0]],) + tuple(rng[1:])
        hop = (self.id, 0, cols, tuple(keys))
        df.request(self, 0, up, hops + (hop,), mapped, keys, rng)

    # --- ranged upqueries (issue 8; see ops/reader.py RangeReader) ---------------------------
    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """``query_range`` of the parent on the source columns (the planner only asks when
        ``cols`` and ``col`` are column picks, not computed)."""
        src = self.source_cols
        rows, lo, hi = self.parents[0].query_range(
            [src[c] for c in cols], key, src[col], lo, hi, limit, desc
        )
        return self.on_input(0, rows), lo, hi

"""Base table node: the root of every dataflow path. Its rows live in base storage (SQLite)."""

from __future__ import annotations

import threading
from collections import deque

from ..intervals import BOTTOM, TOP, above, below, in_interval
from ..node import Node
from ..partial import ck, matches

# the position a lookup join reads base storage at, on this thread (``reading_at``): base
# node id -> sequence number of the last of its writes that reached the join


class _At(threading.local):
    view: dict | None = None  # (a class default: reading it never raises and catches)


_at = _At()


class reading_at:
    """Within ``with reading_at(view)``, base tables named in ``view`` (base node id -> write
    sequence number, see ``BaseTable.log``) are read as of that write: base storage's rows
    minus the logged writes after it. An enclosing view wins (a join of joins reads its inner
    join's inputs at the outer join's position)."""

    __slots__ = ("view", "outer")

    def __init__(self, view: dict):
        self.view = view

    def __enter__(self):
        self.outer = _at.view
        if self.outer is None:
            _at.view = self.view

    def __exit__(self, *exc):
        if self.outer is None:
            _at.view = None


def start_reading(node, graph) -> None:
    """``node`` (a lookup join, or a state filled by one query over base storage) reads the
    base tables under it as of the writes that have reached it: its ``view`` starts at the
    writes made so far (it is installed between writes), and each table logs its writes for it
    (``BaseTable.log``) while they may still be on their way to it."""
    out: dict = {}
    todo = list(node.parents)
    while todo:
        n = todo.pop()
        if n.kind == "base":
            out[id(n)] = n
        else:
            todo.extend(n.parents)
    node._bases = list(out.values())
    node.view = {b.id: graph.seq for b in node._bases}
    for b in node._bases:
        b.readers.append(node)


def stop_reading(node) -> None:
    for b in getattr(node, "_bases", ()):
        b.readers = [j for j in b.readers if j is not node]
        if not b.readers:
            b.log.clear()
    node._bases = []


class Delta(list):
    """A batch of records carrying ``pos``: per base node id, the sequence number of the
    base write it (or the lookup join that produced it) reflects (message scheduling only)."""

    __slots__ = ("pos",)


class BaseTable(Node):
    kind = "base"
    placement = "storage"

    def __init__(self, table: str, columns: list[str], kinds: list[str], storage):
        super().__init__([], columns, kinds)
        self.table = table
        self.storage = storage
        # deltas already applied to base storage that the dataflow has not received in full
        # yet (``Graph.propagate``): a lookup join reads the table as the dataflow has received
        # it, base storage's rows minus these
        self.pending: list[list] = []
        # message scheduling (scheduler.py): the writes whose deltas may not have reached
        # every lookup join reading this table yet, as (sequence number, batch), oldest first;
        # a join reads the table as of the last write that reached it (``reading_at``)
        self.log: deque = deque()
        self.readers: list = []  # the lookup joins that read this table

    def unreceived(self) -> list:
        """The batches base storage holds that the reader on this thread has not received:
        after its position (``reading_at``) when it has one, else the pending deltas."""
        view = _at.view
        if view is None:
            return self.pending
        n = view.get(self.id)
        log = self.log
        if n is None or not log or log[-1][0] <= n:
            return self.pending if n is None else ()
        return [b for s, b in log if s > n]

    def trim(self) -> None:
        """Forget the logged writes every reader has received."""
        log = self.log
        if not log:
            return
        low = min((j.view.get(self.id, 0) for j in self.readers), default=None)
        if low is None:
            log.clear()
            return
        while log and log[0][0] <= low:
            log.popleft()

    def on_input(self, port: int, batch: list) -> list:
        return batch

    def base_tables(self):
        return {self.table.lower()}

    def column_source(self, col: int):
        return None  # named by its own name (EXPLAIN qualifies it with the table's)

    def source_column(self, col: int):
        return (self, col)

    def column_type(self, col: int):
        """The declared type of column ``col`` in base storage (None once the table is gone)."""
        schema = self.storage.schemas.get(self.table.lower())
        return schema.columns[col].ctype if schema is not None else None

    def sql_rel(self):
        from ..sqlrel import base_rel

        return base_rel(self, self.storage)

    def contents(self) -> list:
        rows = [(row, 1) for row in self.storage.scan(self.table)]
        pend = self.unreceived()
        return self._received(rows, (), ()) if pend else rows

    def query(self, cols, key) -> list:
        rows = [(row, 1) for row in self.storage.lookup(self.table, list(cols), tuple(key))]
        pend = self.unreceived()
        return self._received(rows, cols, key) if pend else rows

    def query_many(self, cols, keys) -> list:
        """One indexed storage query for all of ``keys`` (``SQLiteStorage.lookup_many``)."""
        if not cols or len(keys) < 2:
            return Node.query_many(self, cols, keys)
        rows = [(row, 1) for row in self.storage.lookup_many(self.table, list(cols), keys)]
        pend = self.unreceived()
        if not pend:
            return rows
        out: list = []
        for key in keys:  # (pending deltas are rare: subtract them key by key)
            got = [r for r in rows if matches(r[0], cols, key)]
            out.extend(self._received(got, cols, key))
        return out

    def _received(self, rows: list, cols, key, rng=None) -> list:
        """``rows`` (of base storage, whose ``cols`` equal ``key``, and, with ``rng = (col, lo,
        hi)``, whose ``col`` lies in ``[lo, hi)``) without the batches the reader has not
        received (``unreceived``)."""
        bag: dict = {}
        for row, m in rows:
            bag[row] = bag.get(row, 0) + m
        for batch in self.unreceived():
            for row, m in batch:
                if matches(row, cols, key) and (
                    rng is None or in_interval(row[rng[0]], rng[1], rng[2])
                ):
                    bag[row] = bag.get(row, 0) - m
        return [(row, c) for row, c in bag.items() if c]

    def describe(self) -> str:
        return f"base {self.table}"

    # --- planning (plan_upqueries.py): base storage answers every lookup by an index ---------
    def traceable(self, cols) -> bool:
        return bool(cols)

    def range_traceable(self, cols, col) -> bool:
        return True

    def stateless_to_base(self, cols) -> bool:
        return True

    def plan_need(self, planner, cols) -> None:
        if cols:
            planner.storage.ensure_index(self.table, cols)

    def plan_pass(self, planner, cols) -> None:
        if cols:
            planner.storage.ensure_index(self.table, cols)

    def plan_range(self, planner, cols, col) -> None:
        # key columns then the range column: serves equality-only lookups of the key too
        planner.storage.ensure_index(self.table, list(cols) + [col])

    def replay_op(self):
        return ("scan", self.table)

    # --- upqueries as messages (domain.py) --------------------------------------------------
    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        """Base storage answers by index lookups, one per key (a ranged request: an indexed
        range query for its one key, answered for the sub-range ``query_range`` reached)."""
        if rng is not None:
            if len(keys) != 1:  # pragma: no cover - readers ask one key at a time
                raise RuntimeError("a ranged upquery asks for one key")
            col, lo, hi, limit, desc = rng
            rows, lo, hi = self.query_range(cols, keys[0], col, lo, hi, limit, desc)
            df.respond(self, up, hops, rows, (lo, hi))
            return
        rows = []
        lookup = self.storage.lookup
        for k in dict.fromkeys(keys):
            rows.extend((r, 1) for r in lookup(self.table, list(cols), k))
        df.respond(self, up, hops, rows)

    # --- ranged upqueries (issue 8; see ops/reader.py RangeReader) ---------------------------
    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """Rows whose ``cols`` equal ``key`` and whose ``col`` lies in the interval of cuts
        ``[lo, hi)`` (``dataflow/intervals.py``), by an indexed SQLite range query. With
        ``limit``, only the first ``limit`` rows in ``col`` order (the last when ``desc``), cut
        before an incomplete tie group. Returns ``(records, lo', hi')``: every row of the
        sub-interval ``[lo', hi')`` (all of ``[lo, hi)`` without a limit), as the reader has
        received them (``unreceived``: their rows in the sub-interval taken out or back)."""
        pend = self.unreceived()
        if pend:
            recs, lo, hi = self._query_range(cols, key, col, lo, hi, limit, desc)
            return self._received(recs, cols, key, (col, lo, hi)), lo, hi
        return self._query_range(cols, key, col, lo, hi, limit, desc)

    def _query_range(self, cols, key, col, lo, hi, limit, desc):
        lower = None if lo == BOTTOM else (lo[1], lo[2] == 0)
        upper = None if hi == TOP else (hi[1], hi[2] == 1)
        store, table = self.storage, self.table
        rows = store.range_lookup(table, list(cols), tuple(key), col, lower, upper, limit, desc)
        if limit is None or len(rows) < limit:
            return [(r, 1) for r in rows], lo, hi
        # rows come in col order: the last value's tie group may be cut by LIMIT, so leave it
        # out (or, when it is all there is, fetch the whole group)
        w = ck(rows[-1][col])  # (a string: its collation key; ties are equal keys)
        rows = [r for r in rows if ck(r[col]) != w]
        if rows:
            reached = above(w) if desc else below(w)
        else:
            rows = store.range_lookup(table, list(cols), tuple(key), col, (w, True), (w, True))
            reached = below(w) if desc else above(w)
        if desc:
            return [(r, 1) for r in rows], reached, hi
        return [(r, 1) for r in rows], lo, reached

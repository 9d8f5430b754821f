"""Which states are partial, what key fills each, and which indexes base storage needs.

Run when a query is installed, over its new nodes. A consumer that will look a node up by some
columns (a reader by its parameters, an aggregate by its group columns, a join by its join key)
asks ``need(node, cols)``; a consumer that needs every row (a full state) asks with ``None``.

Key provenance: a projection maps each output column to its input column or breaks the trace
(a computed column); a filter and a distinct keep columns; a union passes the same columns to
every parent; an inner join traces a column to the side it comes from (either side), a left
join only to its left side; an aggregate keeps its group columns and breaks on aggregate values.
A state whose key cannot be traced to base columns is full, and so is every state above it
(partial state never sits above full state). A join is filled per join key on both sides, so
its parents are looked up by the join key.

A range reader (``a = ? AND b > ?``, or ``b > ?`` alone) is partial with *ranged* upqueries when
its key and range columns trace to base columns through filters, projections, unions and
joins (``range_traceable``; at a join, all of them must come from one side, which then gets the
ranged upquery, and the join fills the join keys of the rows it returns): base storage then
needs an index on the key columns followed by the range column. A path through an aggregate or
a distinct (state keyed without the range) fills whole keys like a plain reader (and is full
without a key).
"""

from __future__ import annotations

from .node import Node
from .ops.aggregate import Aggregate
from .ops.base import BaseTable
from .ops.distinct import Distinct
from .ops.filter import Filter
from .ops.join import Join
from .ops.project import Project
from .ops.reader import Reader
from .ops.union import Union


def traceable(node: Node, cols: list[int]) -> bool:
    """Can ``node.query(cols, key)`` be answered by lookups instead of a full scan?"""
    if not cols:
        return False
    if isinstance(node, BaseTable):
        return True
    if isinstance(node, (Filter, Distinct)):
        return traceable(node.parents[0], cols)
    if isinstance(node, Project):
        mapped = [node.source_cols[c] for c in cols]
        return all(m is not None for m in mapped) and traceable(node.parents[0], mapped)
    if isinstance(node, Union):
        return all(traceable(p, cols) for p in node.parents)
    if isinstance(node, Join):
        nl = len(node.parents[0].columns)
        lcols = [c for c in cols if c < nl]
        rcols = [c - nl for c in cols if c >= nl]
        if lcols and traceable(node.parents[0], lcols):
            return True
        return bool(not node.outer and rcols and traceable(node.parents[1], rcols))
    if isinstance(node, Aggregate):
        return all(c < node.ngroup for c in cols) and traceable(node.parents[0], cols)
    return False


def range_traceable(node: Node, cols: list[int], col: int) -> bool:
    """Can ``node.query_range(cols, key, col, ...)`` be answered by ranged lookups in base
    storage? Through filters, projections of plain columns, unions, and joins whose side holding
    ``cols`` and ``col`` is range traceable (the join fills by join key). A path through an
    aggregate or a distinct keeps whole-key fills."""
    if isinstance(node, BaseTable):
        return True
    if isinstance(node, Filter):
        return range_traceable(node.parents[0], cols, col)
    if isinstance(node, Project):
        src = node.source_cols
        mapped = [src[c] for c in cols]
        return (
            src[col] is not None
            and all(m is not None for m in mapped)
            and range_traceable(node.parents[0], mapped, src[col])
        )
    if isinstance(node, Union):
        return all(range_traceable(p, cols, col) for p in node.parents)
    if isinstance(node, Join):
        side = _range_side(node, cols, col)
        if side is None:
            return False
        (lk, rk) = node.left_key, node.right_key
        if not (traceable(node.parents[0], list(lk)) and traceable(node.parents[1], list(rk))):
            return False
        nl = len(node.parents[0].columns)
        shift = 0 if side == 0 else nl
        return range_traceable(node.parents[side], [c - shift for c in cols], col - shift)
    return False


def _range_side(join: Join, cols: list[int], col: int) -> int | None:
    """The input of ``join`` that a ranged upquery on ``cols`` and ``col`` goes to: the side
    all of them come from (the left side only, for a left join), or None."""
    nl = len(join.parents[0].columns)
    if col < nl and all(c < nl for c in cols):
        return 0
    if not join.outer and col >= nl and all(c >= nl for c in cols):
        return 1
    return None


def _stateless_to_base(node: Node, cols: list[int]) -> bool:
    """Does a lookup of ``cols`` on ``node`` reach base storage through filters and plain
    projected columns only (no state that could be partial or keyed otherwise)?"""
    if isinstance(node, BaseTable):
        return True
    if isinstance(node, Filter):
        return _stateless_to_base(node.parents[0], cols)
    if isinstance(node, Project):
        mapped = [node.source_cols[c] for c in cols]
        return all(m is not None for m in mapped) and _stateless_to_base(node.parents[0], mapped)
    return False


class Planner:
    def __init__(self, new_nodes: list[Node], enabled: bool, storage):
        self.new = {id(n) for n in new_nodes}
        self.enabled = enabled
        self.storage = storage
        self.planned: set[int] = set()
        self.to_full: list[Node] = []

    def plan_reader(self, reader: Reader) -> None:
        if id(reader) not in self.new:
            return
        cols = list(reader.key_cols)
        parent = reader.parents[0]
        rc = getattr(reader, "range_col", None)
        if rc is not None and self.enabled and range_traceable(parent, cols, rc):
            # a range reader fills the missing ranges of each key by ranged upqueries
            reader.partial = True
            reader.ranged = True
            self.need_range(parent, cols, rc)
            return
        if self.enabled and cols and traceable(parent, cols):
            reader.partial = True
            self.need(parent, cols)
        else:
            self.need(parent, None)

    def need_range(self, node: Node, cols: list[int], col: int) -> None:
        """Index obligations of a ranged upquery path (see ``range_traceable``): base tables
        get an index on the key columns then the range column, which serves the equality-only
        lookup of the same columns too."""
        self.planned.add(id(node))
        if isinstance(node, BaseTable):
            self.storage.ensure_index(node.table, list(cols) + [col])
        elif isinstance(node, Filter):
            self.need_range(node.parents[0], cols, col)
        elif isinstance(node, Project):
            src = node.source_cols
            self.need_range(node.parents[0], [src[c] for c in cols], src[col])
        elif isinstance(node, Union):
            for p in node.parents:
                self.need_range(p, cols, col)
        elif isinstance(node, Join):
            # the rows in range come from one side by a ranged upquery; each row's join key is
            # then filled on both sides, as for any partial join
            lk, rk = list(node.left_key), list(node.right_key)
            if id(node) in self.new and not node.partial and not node.lookup:
                node.partial = bool(self.enabled)
            self.need(node.parents[0], lk)
            self.need(node.parents[1], rk)
            side = _range_side(node, cols, col)
            shift = 0 if side == 0 else len(node.parents[0].columns)
            self.need_range(node.parents[side], [c - shift for c in cols], col - shift)

    def need(self, node: Node, cols: list[int] | None) -> None:
        if isinstance(node, BaseTable):
            if cols:
                self.storage.ensure_index(node.table, cols)
            return
        if id(node) not in self.new or id(node) in self.planned:
            if cols is None:
                self.require_full(node)
            else:
                self._pass_through(node, cols)
            return
        self.planned.add(id(node))
        if isinstance(node, (Filter, Union, Project)):
            self._pass_through(node, cols)
        elif isinstance(node, Join) and node.lookup:
            # no state: every delta looks the other input up by the join key
            self.need(node.parents[0], list(node.left_key))
            self.need(node.parents[1], list(node.right_key))
            if cols is not None:
                self._pass_through(node, cols)
        elif isinstance(node, Join):
            if cols is not None and self.enabled and traceable(node, cols):
                lk, rk = list(node.left_key), list(node.right_key)
                if traceable(node.parents[0], lk) and traceable(node.parents[1], rk):
                    node.partial = True
                    self.need(node.parents[0], lk)
                    self.need(node.parents[1], rk)
                    self._pass_through(node, cols)
                    return
            self.need(node.parents[0], None)
            self.need(node.parents[1], None)
        elif isinstance(node, Aggregate):
            if (
                cols is not None
                and self.enabled
                and all(c < node.ngroup for c in cols)
                and traceable(node.parents[0], cols)
            ):
                node.set_partial(cols)
                self.need(node.parents[0], cols)
            else:
                self.need(node.parents[0], None)
        elif isinstance(node, Distinct):
            if cols is not None and self.enabled and traceable(node.parents[0], cols):
                node.set_partial(cols)
                self.need(node.parents[0], cols)
            else:
                self.need(node.parents[0], None)
        else:
            for p in node.parents:
                self.need(p, None)

    def _pass_through(self, node: Node, cols: list[int] | None) -> None:
        """Index obligations (and full requirements) for the nodes a lookup on ``node`` visits."""
        if cols is None:
            self.require_full(node)
            return
        if isinstance(node, BaseTable):
            self.storage.ensure_index(node.table, cols)
        elif isinstance(node, (Filter, Distinct)):
            self.need(node.parents[0], cols)
        elif isinstance(node, Aggregate):
            ok = all(c < node.ngroup for c in cols)
            self.need(node.parents[0], cols if ok else None)
        elif isinstance(node, Project):
            mapped = [node.source_cols[c] for c in cols]
            self.need(node.parents[0], None if any(m is None for m in mapped) else mapped)
        elif isinstance(node, Union):
            for p in node.parents:
                self.need(p, cols)
        elif isinstance(node, Join):
            nl = len(node.parents[0].columns)
            lcols = [c for c in cols if c < nl]
            rcols = [c - nl for c in cols if c >= nl]
            if lcols and traceable(node.parents[0], lcols):
                self.need(node.parents[0], lcols)
                if rcols and not node.outer and _stateless_to_base(node.parents[1], rcols):
                    # the right input can answer too (no state on the way to base storage,
                    # given an index): the join asks whichever side returns fewer rows
                    self.need(node.parents[1], rcols)
                    node.right_asks.add(tuple(rcols))
            elif rcols:
                self.need(node.parents[1], rcols)

    def require_full(self, node: Node) -> None:
        """``node`` must hold (or produce) every row: make it and its ancestors full."""
        if isinstance(node, BaseTable):
            return
        if id(node) in self.new and id(node) not in self.planned:
            self.need(node, None)
            return
        for p in node.parents:
            self.require_full(p)
        if node.partial and node not in self.to_full:
            self.to_full.append(node)


def plan(reader: Reader, new_nodes: list[Node], enabled: bool, storage) -> list[Node]:
    """Decide partial/full for the new nodes of a query; return existing partial nodes that
    must become full (in ancestor-first order)."""
    planner = Planner(new_nodes, enabled, storage)
    planner.plan_reader(reader)
    for n in new_nodes:  # anything not reached (defensive): full
        if id(n) not in planner.planned and not isinstance(n, (BaseTable, Reader)):
            planner.planned.add(id(n))
    return planner.to_full


# --- which drops need probes -------------------------------------------------------------------


def _carriers(node: Node) -> list[set[int]] | None:
    """For each component of a partial node's fill key, the output columns holding its value."""
    if isinstance(node, Join):
        nl = len(node.parents[0].columns)
        if node.outer:
            return [{lk} for lk in node.left_key]
        return [{lk, nl + rk} for lk, rk in zip(node.left_key, node.right_key)]
    if isinstance(node, (Aggregate, Distinct)):
        return [{c} for c in node.fill_cols]
    return None


def _covers(key: list[int], carriers: list[set[int]]) -> bool:
    """Does a downstream key (these columns) name exactly one upstream fill key?"""
    if not key:
        return False
    allc = set().union(*carriers) if carriers else set()
    return all(k in allc for k in key) and all(s & set(key) for s in carriers)


def _congruent(node: Node, port: int, carriers: list[set[int]]) -> bool:
    if isinstance(node, (Filter, Union)):
        return all(_congruent(c, p, carriers) for c, p in node.children)
    if isinstance(node, Project):
        new = [{i for i, src in enumerate(node.source_cols) if src in s} for s in carriers]
        if any(not s for s in new):
            return not node.children or False
        return all(_congruent(c, p, new) for c, p in node.children)
    if not node.partial:
        return True
    if isinstance(node, Reader):
        return _covers(list(node.key_cols), carriers)
    if isinstance(node, (Aggregate, Distinct)):
        key = node.fill_cols
    elif isinstance(node, Join):
        key = list(node.left_key if port == 0 else node.right_key)
    else:
        return False
    # this state is keyed like the one above, and so must be everything it feeds: a consumer
    # filled some other way (a lookup that bypasses this state) would miss a silent drop above
    own = _carriers(node)
    return (
        _covers(key, carriers)
        and own is not None
        and all(_congruent(c, p, own) for c, p in node.children)
    )


def update_probe_flags(nodes) -> None:
    """A partial node whose every downstream state is keyed congruently needs no probe when it
    drops a record: a filled key below implies the same key is filled here. Others probe."""
    for node in nodes:
        carriers = _carriers(node) if node.partial else None
        if carriers is None:
            node.probe_on_drop = True
            continue
        node.probe_on_drop = not all(_congruent(c, p, carriers) for c, p in node.children)

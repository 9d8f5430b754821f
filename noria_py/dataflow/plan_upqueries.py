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

The ``Planner`` orchestrates: it walks a new query from its reader up, keeps track of which
nodes are new and which are planned, and asks each node (the operator contract in ``node.py``:
``traceable``, ``range_traceable``, ``plan_need``, ``plan_pass``, ``plan_range``,
``fill_carriers``, ``congruent``) for its own part of every decision above.
"""

from __future__ import annotations

from .node import Node


def traceable(node: Node, cols: list[int]) -> bool:
    """Can ``node.query(cols, key)`` be answered by lookups instead of a full scan?"""
    return bool(cols) and node.traceable(cols)


def range_traceable(node: Node, cols: list[int], col: int) -> bool:
    """Can ``node.query_range(cols, key, col, ...)`` be answered by ranged lookups in base
    storage? Through filters, projections of plain columns, unions, and joins whose side holding
    ``cols`` and ``col`` is range traceable (the join fills by join key). A path through an
    aggregate or a distinct keeps whole-key fills."""
    return node.range_traceable(cols, col)


class Planner:
    """Plans a query's new nodes: ``need`` is the question each consumer asks of a node."""

    def __init__(self, new_nodes: list[Node], enabled: bool, storage):
        self.new = {id(n) for n in new_nodes}
        self.enabled = enabled  # partial state allowed at all
        self.storage = storage  # base storage: where index obligations go
        self.planned: set[int] = set()
        self.to_full: list[Node] = []

    def is_new(self, node: Node) -> bool:
        """Is ``node`` being installed with this query (so its partial/full is undecided)?"""
        return id(node) in self.new

    def plan_reader(self, reader: Node) -> None:
        if id(reader) not in self.new:
            return
        reader.plan_need(self, None)

    def need_range(self, node: Node, cols: list[int], col: int) -> None:
        """Index obligations of a ranged upquery path (see ``range_traceable``): base tables
        get an index on the key columns then the range column, which serves the equality-only
        lookup of the same columns too."""
        self.planned.add(id(node))
        node.plan_range(self, cols, col)

    def need(self, node: Node, cols: list[int] | None) -> None:
        """A consumer will look ``node`` up by ``cols`` (None: it needs every row)."""
        if id(node) not in self.new or id(node) in self.planned:
            self.pass_through(node, cols)
            return
        self.planned.add(id(node))
        node.plan_need(self, cols)

    def pass_through(self, node: Node, cols: list[int] | None) -> None:
        """Index obligations (and full requirements) for the nodes a lookup on ``node`` visits."""
        if cols is None:
            self.require_full(node)
        else:
            node.plan_pass(self, cols)

    def require_full(self, node: Node) -> None:
        """``node`` must hold (or produce) every row: make it and its ancestors full."""
        if id(node) in self.new and id(node) not in self.planned:
            self.need(node, None)
            return
        for p in node.parents:
            self.require_full(p)
        if node.partial and node not in self.to_full:
            self.to_full.append(node)


def plan(reader: Node, new_nodes: list[Node], enabled: bool, storage) -> list[Node]:
    """Decide partial/full for the new nodes of a query; return existing partial nodes that
    must become full (in ancestor-first order). A new node no need reaches stays full."""
    planner = Planner(new_nodes, enabled, storage)
    planner.plan_reader(reader)
    return planner.to_full


# --- which drops need probes -------------------------------------------------------------------


def update_probe_flags(nodes) -> None:
    """A partial node whose every downstream state is keyed congruently needs no probe when it
    drops a record: a filled key below implies the same key is filled here. Others probe."""
    for node in nodes:
        carriers = node.fill_carriers() if node.partial else None
        if carriers is None:
            node.probe_on_drop = True
            continue
        node.probe_on_drop = not all(c.congruent(p, carriers) for c, p in node.children)

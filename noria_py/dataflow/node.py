"""The operator contract every node in the dataflow graph follows.

A node receives batches from its parents on numbered *ports* (port i = parent i) and returns the
batch it emits to its children. Operators are deterministic and distributive over delta
addition: processing two batches one after the other emits the same multiset as processing their
sum. ``contents()`` returns a node's current full output, which is how a newly installed child
gets its initial state (a replay of its ancestors' current contents).
"""

from __future__ import annotations

NONE = "none"
FULL = "full"
PARTIAL = "partial"


class Node:
    """Base class of every operator."""

    kind = "node"
    materialization = NONE

    def __init__(self, parents: list[Node], columns: list[str], kinds: list[str]):
        self.id = -1
        self.parents = parents
        self.children: list[tuple[Node, int]] = []
        self.columns = columns
        self.kinds = kinds
        self.signature = ""
        self.refcount = 0
        self.domain = 0

    # --- the contract -------------------------------------------------------------------
    def on_input(self, port: int, batch: list) -> list:
        raise NotImplementedError

    def contents(self) -> list:
        """The node's current full output as a batch of positive records."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind

    def key_columns(self) -> list[int]:
        return []

    def state_size(self) -> tuple[int, int]:
        """(keys, rows) held in this node's state."""
        return (0, 0)

    def on_removed(self) -> None:
        """Called when the node leaves the graph: drop state."""

    def on_added(self, graph) -> None:
        """Called when the node joins ``graph`` (before it is planned and installed)."""

    def source_column(self, col: int):
        """``(base table node, its column)`` that output column ``col`` is a copy of, through
        stateless operators only, else None."""
        return None

    def build_from_storage(self) -> bool:
        """A full node's initial state computed by base storage directly (one query), instead
        of from its parents' contents; False when it cannot be."""
        return False

    def key_gate(self, port: int, carriers: dict):
        """Early drops: input columns ``carriers`` (column -> component) of port ``port`` hold
        the components of some key upstream. If every record whose key this node (and what it
        feeds) has no state for would be dropped here without a trace (no probe, nothing
        else), return ``holds(key) -> bool``, True when such a record may matter; else None.
        A stateless join calls it to skip lookups for records nobody below would keep."""
        return None

    def sql_rel(self):
        """This node's output as one SQL relation over base storage (``sqlrel.SqlRel``), when
        it holds no state and computes nothing SQLite could compute otherwise, else None."""
        return None

    def base_tables(self) -> set[str] | None:
        """The base tables whose rows this node's output is computed from when it holds no
        state on the way to them (its ``query`` then reads base storage alone), else None."""
        return None

    # --- partial state -------------------------------------------------------------------
    partial = False
    probe_on_drop = True  # see plan_upqueries.update_probe_flags

    def query(self, cols: list[int], key: tuple) -> list:
        """Current output rows whose ``cols`` equal ``key`` (an upquery), filling partial state
        on the way. The default recomputes from the full contents."""
        from .partial import matches

        return [(r, m) for r, m in self.contents() if matches(r, cols, key)]

    def on_probe(self, port: int, rows: list) -> list:
        """A record was dropped upstream: evict what it may affect here, return probes to pass on."""
        return rows

    def make_full(self) -> None:
        """Turn a partial node full: rebuild its state from its (full) parents' contents."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.describe()}>"


def parent_contents(node: Node, port: int) -> list:
    return node.parents[port].contents()

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.describe()}>"


def parent_contents(node: Node, port: int) -> list:
    return node.parents[port].contents()

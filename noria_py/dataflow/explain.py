"""EXPLAIN's words for a dataflow node: its description with column names instead of numbers.

Operators describe themselves by column position (``project #1,#0``, ``aggregate by #0:
COUNT(*)``), which is what they work with. For a reader of EXPLAIN this module traces each
position back to where the column comes from: a base table's column (``t.a`` when the query
reads more than one table, ``a`` otherwise), an aggregate (``COUNT(*)``) or the select list's
name of a computed column (``Node.column_source``). Positions in a description refer to the node's input (its first
parent); a reader's key and order refer to its own columns, which are its parent's.
"""

from __future__ import annotations

import re

from .node import Node

_POS = re.compile(r"#(\d+)")
_KEY_LIST = re.compile(r"key \[([\d, ]*)\]")
_MAX_DEPTH = 64


def column_label(node: Node, col: int, qualify: bool = False, _depth: int = 0) -> str:
    """The name a reader knows column ``col`` of ``node`` by (see the module docstring)."""
    names = node.columns
    name = names[col] if 0 <= col < len(names) else f"#{col}"
    if _depth > _MAX_DEPTH:
        return name
    if not node.parents:  # a base table's column
        table = getattr(node, "table", "")
        return f"{table}.{name}" if qualify and table else name
    src = node.column_source(col)
    if src is None:
        return name  # a computed column: the select list's text or alias
    if isinstance(src, tuple):  # a copy of an input's column
        return column_label(node.parents[src[0]], src[1], qualify, _depth + 1)
    return _named(src, node.parents[0], qualify, _depth + 1)  # computed from the first input


def _named(text: str, source: Node, qualify: bool, depth: int) -> str:
    return _POS.sub(lambda m: column_label(source, int(m.group(1)), qualify, depth), text)


def describe(node: Node, text: str, qualify: bool = False) -> str:
    """``text`` (the node's own description, with notes) with column positions named."""
    source = node.parents[0] if node.parents else node
    text = _KEY_LIST.sub(
        lambda m: (
            "key ("
            + ", ".join(
                column_label(node, int(p), qualify) for p in m.group(1).split(",") if p.strip()
            )
            + ")"
        ),
        text,
    )
    return _named(text, source, qualify, 0)


def key_labels(node: Node, cols: list[int], qualify: bool = False) -> str:
    """A node's key columns by name, comma-separated."""
    return ",".join(column_label(node, c, qualify) for c in cols)

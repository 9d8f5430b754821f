"""Invariant checks for partial state, used by the interleaving tests.

``audit(graph, twin)`` compares every *filled* key of every partial state in ``graph`` with the
same key of a fully materialized ``twin`` graph built from the same base data and the same queries
(nodes are matched by their canonical signature). Once the dataflow has drained:

- (I) no base change applied twice: a filled key never holds a row more often than the twin;
- (II) no change lost on a path: a filled key never holds a row less often than the twin;
- (III) a dropped record leaves no downstream state that reflected it: a filled key holds no row
  the twin lacks.

Each problem is reported as a readable string naming the node, the key and the difference.
Each partial node compares itself with its twin (``Node.compare_filled``): this module only
pairs nodes and words the differences.
"""

from __future__ import annotations

from collections import Counter


def _diff(name, key, got: Counter, want: Counter) -> list[str]:
    if got == want:
        return []
    extra = got - want
    lost = want - got
    parts = []
    if extra:
        parts.append(f"extra {dict(extra)}")
    if lost:
        parts.append(f"missing {dict(lost)}")
    return [f"{name} key {key!r}: " + "; ".join(parts)]


def audit(graph, twin) -> list[str]:
    problems: list[str] = []
    for node in graph.nodes.values():
        if not node.partial:
            continue
        other = twin.by_signature.get(node.signature)
        if other is None:
            problems.append(f"{node} has no twin")
            continue
        name = f"{node.id} {node.kind}"
        for part, key, got, want in node.compare_filled(other):
            problems += _diff(f"{name} {part}" if part else name, key, got, want)
    return problems

"""Invariant checks for partial state, used by the interleaving tests.

``audit(graph, twin)`` compares every *filled* key of every partial state in ``graph`` with the
same key of a fully materialized ``twin`` graph built from the same base data and the same queries
(nodes are matched by their canonical signature). Once the dataflow has drained:

- (I) no base change applied twice: a filled key never holds a row more often than the twin;
- (II) no change lost on a path: a filled key never holds a row less often than the twin;
- (III) a dropped record leaves no downstream state that reflected it: a filled key holds no row
  the twin lacks.

Each problem is reported as a readable string naming the node, the key and the difference.
"""

from __future__ import annotations

from collections import Counter

from .ops.aggregate import Aggregate
from .ops.distinct import Distinct
from .ops.join import Join
from .ops.reader import Reader
from .partial import key_of


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


def _bag(d) -> Counter:
    return Counter({r: c for r, c in d.items() if c})


def audit(graph, twin) -> list[str]:
    problems: list[str] = []
    for node in graph.nodes.values():
        if not getattr(node, "partial", False):
            continue
        other = twin.by_signature.get(node.signature)
        if other is None:
            problems.append(f"{node} has no twin")
            continue
        name = f"{node.id} {node.kind}"
        if isinstance(node, Reader):
            for key, rows in node.published.items():
                want = other.published.get(key, ())
                if node.range_col is not None:
                    # only the filled ranges of the key are held: compare those
                    got = Counter(node.all_rows(key))
                    want = Counter(node.restrict(key, other.all_rows(key)))
                    problems += _diff(name, key, got, want)
                else:
                    problems += _diff(name, key, Counter(rows), Counter(want))
        elif isinstance(node, Join):
            for key in node.filled:
                for side, mine, theirs in (
                    ("left", node.left_state, other.left_state),
                    ("right", node.right_state, other.right_state),
                ):
                    if side == "right" and node._has_null(key):
                        continue
                    problems += _diff(
                        f"{name} {side}",
                        key,
                        _bag(mine.get(key, {})),
                        _bag(theirs.get(key, {})),
                    )
        elif isinstance(node, Aggregate):
            fill = node.fill_cols
            want_by: dict = {}
            for row, _m in other.contents():
                want_by.setdefault(key_of(row, fill), Counter())[row] += 1
            for fk in node.filled:
                got = Counter()
                for gk in node.fidx.get(fk, ()):
                    g = node.groups.get(gk)
                    if g is not None and g.rows > 0:
                        got[node._output(gk, g)] += 1
                problems += _diff(name, fk, got, want_by.get(fk, Counter()))
        elif isinstance(node, Distinct):
            fill = node.fill_cols
            want_by = {}
            for key, c in other.counts.items():
                if c > 0:
                    row = other._shown(key)
                    want_by.setdefault(key_of(row, fill), Counter())[row] = c
            for fk in node.filled:
                got = Counter()
                for r in node.fidx.get(fk, ()):
                    c = node.counts.get(r, 0)
                    if c > 0:
                        got[node._shown(r)] = c
                problems += _diff(name, fk, got, want_by.get(fk, Counter()))
    return problems

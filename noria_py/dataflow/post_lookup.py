"""Post-lookup operations: what a range read computes over the rows its reader returns.

A query with range parameters and an aggregate, a DISTINCT or both above the range
(``SELECT cat, COUNT(*) FROM items WHERE price >= ? GROUP BY cat``) cannot keep its answer in a
reader keyed by the parameters: every range gives another answer. Its reader instead holds the
rows beneath the aggregate (the joins, filters and the projection that prepares group columns
and aggregate arguments, with the key and range columns hidden after them), ordered by the range
column and filled by ranged upqueries like any range reader (``ops/reader.py``). A read takes the
rows of its range and applies these operations to them, as Noria's readers apply their
post-lookup operations:

1. the aggregate (an ``Aggregate`` node built by the compiler but never installed: its
   ``evaluate`` runs the same groups and accumulators a maintained aggregate runs, so COUNT,
   SUM, AVG, MIN, MAX, GROUP_CONCAT and the registered aggregates give the same values);
2. HAVING (a ``Filter`` node, never installed) and the select list (a ``Project`` node, never
   installed), both over the aggregate's output;
3. DISTINCT over the visible columns (a ``Distinct`` node made per read: strings are one value
   under their collation, shown as the smallest spelling, as the maintained operator does).

ORDER BY, LIMIT and OFFSET (constants or parameters) are applied after these by the engine's
range read (``engine.SelectPrepared._range_finish``), as for any range read. None of these
nodes holds state between reads: a read's answer depends on the reader's rows alone.

A lock-free read answers from the key's ``RangeSnapshot``, which is immutable and replaced
whenever the key's rows or filled ranges change; so the answer computed from one snapshot for
one range is remembered (``memo``, at most ``MEMO_SIZE`` ranges, all forgotten when full) and
served again while the key's snapshot is the same object.
"""

from __future__ import annotations

from .node import Node
from .ops.aggregate import Aggregate
from .ops.distinct import Distinct
from .ops.filter import Filter
from .ops.project import Project


class PostLookup:
    """The operations a range read applies to its rows, in order (see the module docstring):
    ``aggregate`` with ``having`` and ``project`` over its output (all three or none), then
    DISTINCT over the first ``distinct`` columns (None: no DISTINCT)."""

    __slots__ = ("aggregate", "having", "project", "distinct", "_distinct_source", "memo")
    MEMO_SIZE = 4096

    def __init__(
        self,
        aggregate: Aggregate | None,
        having: Filter | None,
        project: Project | None,
        distinct: int | None,
        names: list[str],
        kinds: list[str],
    ):
        self.aggregate = aggregate
        self.having = having
        self.project = project
        self.distinct = distinct
        # what a per-read Distinct reads: the visible columns
        self._distinct_source = (
            Node([], names[:distinct], kinds[:distinct]) if distinct is not None else None
        )
        # (key, lo, hi) -> (the key's RangeSnapshot, the answer computed from it)
        self.memo: dict = {}

    def remember(self, where: tuple, snapshot, answer: list) -> None:
        """Keep the answer ``snapshot`` gave for ``where`` (``(key, lo, hi)``)."""
        memo = self.memo
        if len(memo) >= self.MEMO_SIZE:
            memo.clear()
            if not self.MEMO_SIZE:
                return  # remembering nothing (benches/ranges.py measures reads without it)
        memo[where] = (snapshot, tuple(answer))

    def apply(self, rows) -> list:
        """The answer rows (visible columns, then hidden ORDER BY columns) of ``rows``, the
        reader rows of every key and range a read asked for."""
        agg = self.aggregate
        if agg is not None:
            recs = [(r, 1) for r in agg.evaluate([(r, 1) for r in rows])]
            if self.having is not None:
                recs = self.having.on_input(0, recs)
            rows = [r for r, _m in self.project.on_input(0, recs)]
        n = self.distinct
        if n is not None:
            d = Distinct(self._distinct_source)
            d.on_input(0, [(r[:n], 1) for r in rows])
            rows = [r for r, _m in d.contents()]
        elif not isinstance(rows, list):
            rows = list(rows)
        return rows

    def nodes(self) -> list[Node]:
        """The never-installed operators, in the order a read applies them."""
        return [n for n in (self.aggregate, self.having, self.project) if n is not None]

    def describe(self) -> list[tuple[Node, str]]:
        """(operator, its description) per step, for EXPLAIN."""
        out = [(n, n.describe()) for n in self.nodes()]
        if self.distinct is not None:
            src = self.project if self.project is not None else None
            out.append((src, f"distinct on the first {self.distinct} columns"))
        return out

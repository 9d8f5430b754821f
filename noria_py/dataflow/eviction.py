"""Memory accounting and the eviction policy: least-recently-used keys of partial states go
first when the engine is over its memory budget.

Every filled key of a partial state is an entry in a ``cachetools.LRUCache`` whose size is the
estimated bytes of that key's rows; reading a key (a reader hit) or filling it makes it the most
recent. When an insertion takes the total over the budget, the cache pops the least recent
entries and the policy evicts those keys from their states (which also evicts what was derived
from them downstream). Keys a read is waiting on are pinned and never chosen.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading

from cachetools import LRUCache

_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
}


def parse_size(text) -> int:
    """``"256MB"`` -> bytes. Integers are bytes."""
    if isinstance(text, (int, float)):
        return int(text)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?B?)\s*", str(text).upper())
    if not m:
        raise ValueError(f"cannot parse memory size {text!r} (use e.g. 256MB)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def row_bytes(row) -> int:
    return sys.getsizeof(row) + sum(sys.getsizeof(v) for v in row)


class _Cache(LRUCache):
    def __init__(self, maxsize: int, policy: Evictor):
        super().__init__(maxsize, getsizeof=lambda size: size)
        self.policy = policy

    def popitem(self):
        # choose the least recent key that no read is waiting on (pinned keys are few)
        order = getattr(self, "_LRUCache__order", None)
        candidates = iter(order) if order is not None else iter(list(self.keys()))
        for entry in candidates:
            if entry not in self.policy.pinned:
                break
        else:
            return super().popitem()
        size = self.pop(entry)
        self.policy.evict(entry)
        return entry, size


class Evictor:
    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.cache = _Cache(max(budget_bytes, 1), self)
        self.pinned: set = set()
        self.nodes: dict[int, object] = {}
        self.row_size: dict[int, int] = {}
        self.evictions = 0
        self.depth = 0  # > 0 while an upquery runs: new keys wait, nothing is evicted
        self.pending: list = []
        # domain threads (ThreadScheduler) report fills concurrently
        self.mu = threading.RLock()

    def hold(self) -> None:
        """An upquery starts: evicting now could remove state the upquery is still building
        on, so keys filled meanwhile are only recorded; ``release`` accounts for them."""
        with self.mu:
            self._hold_unlocked()

    def _hold_unlocked(self) -> None:
        self.depth += 1

    def release(self) -> None:
        with self.mu:
            self._release_unlocked()

    def _release_unlocked(self) -> None:
        self.depth -= 1
        if self.depth == 0 and self.pending:
            pending, self.pending = self.pending, []
            for node, key, rows in pending:
                self.filled(node, key, rows)

    def _size(self, node, rows: int) -> int:
        per = self.row_size.get(node.id)
        if per is None:
            per = 120 + 40 * len(node.columns)
            self.row_size[node.id] = per
        return 64 + per * max(rows, 0)

    def filled(self, node, key, rows: int) -> None:
        with self.mu:
            self._filled_unlocked(node, key, rows)

    def _filled_unlocked(self, node, key, rows: int) -> None:
        entry = (node.id, key)
        self.nodes[node.id] = node
        if self.depth:
            self.pending.append((node, key, rows))
            return
        size = self._size(node, rows)
        if size > self.budget:
            size = self.budget  # a single huge key still fits (alone)
        self.pinned.add(entry)
        try:
            self.cache[entry] = size
        finally:
            self.pinned.discard(entry)

    def touch(self, node, key, rows: int) -> None:
        with self.mu:
            self._touch_unlocked(node, key, rows)

    def _touch_unlocked(self, node, key, rows: int) -> None:
        if self.depth:
            return
        entry = (node.id, key)
        if entry in self.cache:
            size = self._size(node, rows)
            self.pinned.add(entry)
            try:
                self.cache[entry] = min(size, self.budget)
            finally:
                self.pinned.discard(entry)

    def forget(self, node, key) -> None:
        with self.mu:
            self._forget_unlocked(node, key)

    def _forget_unlocked(self, node, key) -> None:
        self.cache.pop((node.id, key), None)
        if self.pending:
            self.pending = [p for p in self.pending if not (p[0] is node and p[1] == key)]

    def forget_removed(self, graph) -> None:
        """Forget the keys of nodes no longer in ``graph`` (a query was dropped): their state
        is gone, so they no longer count against the budget."""
        with self.mu:
            gone = [e for e in self.cache if e[0] not in graph.nodes]
            for e in gone:
                self.cache.pop(e, None)
            for nid in [n for n in self.nodes if n not in graph.nodes]:
                del self.nodes[nid]
                self.row_size.pop(nid, None)
            if self.pending:
                self.pending = [p for p in self.pending if p[0].id in graph.nodes]

    def evict(self, entry) -> None:
        node = self.nodes.get(entry[0])
        if node is None or node.graph is None:
            return
        self.evictions += 1
        runtime = node.graph.runtime
        if runtime is not None and runtime.threaded:
            runtime.evict(node, entry[1])  # on the node's own domain thread
        else:
            node.evict_key(entry[1])

    @property
    def used(self) -> int:
        return self.cache.currsize


@contextlib.contextmanager
def holding(evictor):
    """No eviction inside the block (``Evictor.hold``/``release``); a no-op without a budget."""
    if evictor is None:
        yield
        return
    evictor.hold()
    try:
        yield
    finally:
        evictor.release()

"""Memory accounting and the eviction policy: least-recently-used keys of partial states go
first when the engine is over its memory budget.

Every filled key of a partial state is an entry in a ``cachetools.LRUCache`` whose size is the
estimated bytes of that key's rows; reading a key (a reader hit) or filling it makes it the most
recent. When an insertion takes the total over the budget, the cache pops the least recent
entries and the policy evicts those keys from their states (which also evicts what was derived
from them downstream). Keys a read is waiting on are pinned and never chosen.
"""

from __future__ import annotations

import re
import sys

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
        self._evicting = False

    def _size(self, node, rows: int) -> int:
        per = self.row_size.get(node.id)
        if per is None:
            per = 120 + 40 * len(node.columns)
            self.row_size[node.id] = per
        return 64 + per * max(rows, 0)

    def filled(self, node, key, rows: int) -> None:
        entry = (node.id, key)
        self.nodes[node.id] = node
        size = self._size(node, rows)
        if size > self.budget:
            size = self.budget  # a single huge key still fits (alone)
        self.pinned.add(entry)
        try:
            self.cache[entry] = size
        finally:
            self.pinned.discard(entry)

    def touch(self, node, key, rows: int) -> None:
        entry = (node.id, key)
        if entry in self.cache:
            size = self._size(node, rows)
            self.pinned.add(entry)
            try:
                self.cache[entry] = min(size, self.budget)
            finally:
                self.pinned.discard(entry)

    def forget(self, node, key) -> None:
        if self._evicting:
            self.cache.pop((node.id, key), None)
            return
        self.cache.pop((node.id, key), None)

    def evict(self, entry) -> None:
        node = self.nodes.get(entry[0])
        if node is None or node.graph is None:
            return
        self.evictions += 1
        node.evict_key(entry[1])

    @property
    def used(self) -> int:
        return self.cache.currsize

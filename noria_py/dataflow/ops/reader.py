"""Reader: the leaf materialization a query reads from, keyed by the query's parameters.

Rows are kept per key (a hash bag, or a sorted list when the query has ORDER BY). After each
batch the reader publishes, per touched key, an immutable tuple of final result rows (hidden
columns dropped, ordered, OFFSET/LIMIT applied); a lookup is one dict access on that published
map. Ordering ties are broken by the whole row, so results are deterministic; top-k stays exact
under deletes because every row of the key stays in ordered state.
"""

from __future__ import annotations

from operator import itemgetter

from sortedcontainers import SortedKeyList

from ..node import FULL, PARTIAL, Node
from ..partial import UNKNOWN


class _Desc:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __gt__(self, other):
        return other.v > self.v

    def __eq__(self, other):
        return self.v == other.v

    def __le__(self, other):
        return other.v <= self.v

    def __ge__(self, other):
        return other.v >= self.v


def _sortable(v):
    # NULLs sort first (MySQL ASC); values of mixed types fall back to their text.
    if v is None:
        return (0, 0)
    return (1, v)


def make_sort_key(order: list[tuple[int, bool]]):
    def key(row):
        parts = []
        for i, desc in order:
            s = _sortable(row[i])
            parts.append(_Desc(s) if desc else s)
        parts.append(_RowTie(row))
        return tuple(parts)

    return key


class _RowTie:
    """Tie-breaker comparing whole rows NULL-safely."""

    __slots__ = ("row",)

    def __init__(self, row):
        self.row = row

    def _k(self):
        return tuple(_sortable(v) for v in self.row)

    def __lt__(self, other):
        try:
            return self._k() < other._k()
        except TypeError:
            return repr(self.row) < repr(other.row)

    def __eq__(self, other):
        return self.row == other.row


class Reader(Node):
    kind = "reader"

    def __init__(
        self,
        parent: Node,
        key_cols: list[int],
        visible: int,
        order: list[tuple[int, bool]] | None = None,
        limit: int | None = None,
        offset: int = 0,
        range_col: int | None = None,
    ):
        super().__init__([parent], parent.columns, parent.kinds)
        self.range_col = range_col
        self.key_cols = tuple(key_cols)
        self.visible = visible
        self.order = order or []
        self.limit = limit
        self.offset = offset
        self.state: dict = {}
        self.published: dict = {}
        self.hits = 0
        self.misses = 0
        nk = len(key_cols)
        if nk == 0:
            self._key = lambda r: ()
        elif nk == 1:
            k0 = key_cols[0]
            self._key = lambda r: (r[k0],)
        else:
            g = itemgetter(*key_cols)
            self._key = g
        width = len(parent.columns)
        if visible == width:
            self._vis = None
        elif visible == 1:
            self._vis = lambda r: (r[0],)
        else:
            self._vis = itemgetter(*range(visible))
        self._sort_key = make_sort_key(self.order) if self.order else None
        if range_col is not None:
            # rows of a key ordered by the range column, for bisecting ranges
            self._sort_key = lambda r, c=range_col: _sortable(r[c])
        self.partial = False
        self.graph = None

    @property
    def materialization(self):
        return PARTIAL if self.partial else FULL

    # --- partial state ---------------------------------------------------------------------
    def fill(self, key: tuple) -> tuple:
        """A read missed: upquery the parent for ``key`` and publish the result."""
        runtime = self.graph.runtime if self.graph is not None else None
        if runtime is not None:
            return runtime.read(self, key)
        rows = self.parents[0].query(list(self.key_cols), key)
        self.state[key] = {} if self._sort_key is None else SortedKeyList(key=self._sort_key)
        # published last: a concurrent lock-free lookup sees the key missing, then complete
        self._apply(rows, fill_key=key)
        if self.graph is not None:
            self.graph.filled(self, key, len(self.state.get(key, ())))
        return self.published.get(key, ())

    def evict_key(self, key) -> None:
        if key in self.published or key in self.state:
            self.published.pop(key, None)
            self.state.pop(key, None)
            if self.graph is not None:
                self.graph.evicted(self, key)

    def on_probe(self, port: int, rows: list) -> list:
        if not self.partial:
            return []
        for row in rows:
            k = self._key(row)
            if UNKNOWN in k:
                for key in list(self.published):
                    self.evict_key(key)
                break
            self.evict_key(k)
        return []

    def on_input(self, port: int, batch: list) -> list:
        if self.partial:
            published = self.published
            keyf = self._key
            batch = [rec for rec in batch if keyf(rec[0]) in published]
            if not batch:
                return []
        self._apply(batch)
        return []

    def _apply(self, batch: list, fill_key=None) -> None:
        state = self.state
        keyf = self._key
        touched = set()
        if fill_key is not None:
            touched.add(fill_key)
        if self._sort_key is None:
            for row, m in batch:
                k = keyf(row)
                bag = state.get(k)
                if bag is None:
                    bag = state[k] = {}
                c = bag.get(row, 0) + m
                if c:
                    bag[row] = c
                else:
                    del bag[row]
                touched.add(k)
        else:
            for row, m in batch:
                k = keyf(row)
                lst = state.get(k)
                if lst is None:
                    lst = state[k] = SortedKeyList(key=self._sort_key)
                if m > 0:
                    for _ in range(m):
                        lst.add(row)
                else:
                    for _ in range(-m):
                        lst.remove(row)
                touched.add(k)
        for k in touched:
            self._publish(k)

    def range_rows(self, key: tuple, bounds: list) -> list:
        """Rows of ``key`` whose range column satisfies every (op, value) bound."""
        lst = self.state.get(key)
        if lst is None:
            if self.partial and key not in self.published:
                self.misses += 1
                self.fill(key)
                lst = self.state.get(key)
            if lst is None:
                return []
        start = lst.bisect_key_right((0, 0))  # NULL never satisfies a comparison
        stop = len(lst)
        for op, v in bounds:
            k = (1, v)
            if op == ">":
                start = max(start, lst.bisect_key_right(k))
            elif op == ">=":
                start = max(start, lst.bisect_key_left(k))
            elif op == "<":
                stop = min(stop, lst.bisect_key_left(k))
            else:
                stop = min(stop, lst.bisect_key_right(k))
        if start >= stop:
            return []
        return list(lst.islice(start, stop))

    def all_rows(self, key: tuple) -> list:
        """Every row of ``key`` (filling it when partial), in the reader's order."""
        lst = self.state.get(key)
        if lst is None and self.partial and key not in self.published:
            self.misses += 1
            self.fill(key)
            lst = self.state.get(key)
        if lst is None:
            return []
        if isinstance(lst, dict):
            out = []
            for row, c in lst.items():
                out.extend([row] * c)
            return out
        return list(lst)

    def _publish(self, k) -> None:
        if self.range_col is not None:
            if self.state.get(k) or self.partial:
                self.published[k] = ()
            else:
                self.state.pop(k, None)
                self.published.pop(k, None)
            return
        rows = self.state.get(k)
        if not rows:
            if self.partial:
                self.published[k] = ()
                return
            self.state.pop(k, None)
            self.published.pop(k, None)
            return
        if self._sort_key is None:
            out = []
            for row, c in rows.items():
                if c == 1:
                    out.append(row)
                else:
                    out.extend([row] * c)
        else:
            if self.limit is not None:
                out = list(rows.islice(self.offset, self.offset + self.limit))
            elif self.offset:
                out = list(rows.islice(self.offset))
            else:
                out = list(rows)
        vis = self._vis
        if vis is not None:
            out = [vis(r) for r in out]
        if self._sort_key is None and (self.limit is not None or self.offset):
            stop = None if self.limit is None else self.offset + self.limit
            out = out[self.offset : stop]
        self.published[k] = tuple(out)

    def lookup(self, key: tuple):
        """Published result rows for ``key`` (a tuple of parameter values)."""
        rows = self.published.get(key)
        if rows is None:
            if self.partial:
                self.misses += 1
                return self.fill(key)
            return ()
        return rows

    def contents(self) -> list:
        out = []
        for rows in self.state.values():
            if isinstance(rows, dict):
                out.extend(rows.items())
            else:
                out.extend((r, 1) for r in rows)
        return out

    def describe(self) -> str:
        parts = [f"reader key {list(self.key_cols)}"]
        if self.order:
            parts.append("order " + ",".join(f"#{i}{' desc' if d else ''}" for i, d in self.order))
        if self.limit is not None:
            parts.append(f"limit {self.limit}")
        if self.offset:
            parts.append(f"offset {self.offset}")
        return " ".join(parts)

    def key_columns(self) -> list[int]:
        return list(self.key_cols)

    def state_size(self):
        return (len(self.state), sum(len(v) for v in self.state.values()))

    def on_removed(self):
        self.state = {}
        self.published = {}

    def make_full(self) -> None:
        self.partial = False
        self.state = {}
        self.published = {}
        self._apply(self.parents[0].contents())

"""Reader: the leaf materialization a query reads from, keyed by the query's parameters.

Rows are kept per key (a hash bag, or a sorted list when the query has ORDER BY). After each
batch the reader publishes, per touched key, an immutable tuple of final result rows (hidden
columns dropped, ordered, OFFSET/LIMIT applied); a lookup is one dict access on that published
map. Ordering ties are broken by the whole row, so results are deterministic; top-k stays exact
under deletes because every row of the key stays in ordered state.

``RangeReader`` (a query with range parameters, ``a = ? AND b > ?``) keeps each key's rows
ordered by the range column and, when partial, the set of ranges of that column it holds
(``dataflow/intervals.py``): a read upqueries only the pieces of its range that are missing, a
delta inside a held range is applied and one outside every held range is dropped, and eviction
removes one filled piece. See its docstring.

Partial key subsumption (what is covered, exactly):

- Within a range reader: a key filled over a range answers every sub-range of it without an
  upquery; a key filled over the whole range (``[BOTTOM, TOP)``, e.g. by a read with no upper and
  lower bound, or by a whole-key fill on a path ranged upqueries cannot take) answers every range
  and every point ``b = x``. Filling a coarser range marks all finer ranges filled, because it is
  one interval set.
- Between readers over the same parent node (the compiler shares the projection when queries
  differ only in how they bind parameters, e.g. ``a = ? AND b = ?`` and ``a = ? AND b > ?``): a
  miss on key ``K`` over columns ``C`` is answered, with no upquery, from a sibling reader keyed by
  a subset ``C' ⊆ C`` that holds the key ``K|C'``: a plain reader with that key filled (or full),
  or a range reader whose range column is in ``C`` (the point ``K[b]`` must be in its filled
  ranges) or is the range being filled (the range must be covered). The copied rows are the
  sibling's current rows, so the new key is exactly as current as the sibling; both then receive
  the same deltas. Not covered: readers over different nodes (two projections of one table) and
  finer keys answering coarser ones.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from decimal import Decimal
from operator import itemgetter

from sortedcontainers import SortedKeyList

from ..intervals import BOTTOM, TOP, IntervalSet, in_interval, point
from ..node import FULL, PARTIAL, Node, covers
from ..partial import UNKNOWN, ck, ck_tuple, has_strings, keyer, matches
from ..records import expand


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
    # NULLs sort first (MySQL ASC); strings in the collation's order.
    if v is None:
        return (0, 0)
    return (1, ck(v))


_NUMBERS = (int, float, Decimal)

# A reader's key holding more rows than this is published at its next read, not after every
# write that touches it (``Reader.stale``): rebuilding the published tuple of a big key
# (``SELECT * FROM v``, one key for the whole view; ``WHERE status = ?`` of a status most rows
# have) would cost every write the key's size.
LAZY_ROWS = 64


def _sortable_desc(v):
    """``_sortable`` for a descending column: NULLs last (MySQL DESC), a number negated (so
    that tuples compare in C), anything else reversed by ``_Desc``."""
    if v is None:
        return (2, 0)
    if isinstance(v, _NUMBERS):
        return (1, -v)
    return (1, _Desc(ck(v)))


def make_sort_key(order: list[tuple[int, bool]]):
    def key(row):
        parts = []
        for i, desc in order:
            parts.append(_sortable_desc(row[i]) if desc else _sortable(row[i]))
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
    placement = "own"  # a reader gets a domain of its own
    replay_role = "keep"  # (spark/replay.py)

    def __new__(cls, *args, **kwargs):
        # a reader with a range column is a RangeReader (the compiler builds both as Reader)
        rc = kwargs.get("range_col", args[6] if len(args) > 6 else None)
        if cls is Reader and rc is not None:
            return super().__new__(RangeReader)
        return super().__new__(cls)

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
        # keys whose rows changed since they were last published (big keys, ``LAZY_ROWS``):
        # absent from ``published`` until ``settled`` publishes them under the engine's lock,
        # so a lock-free lookup of one misses and takes the locked path. A partial reader's
        # filled keys are those of ``published`` and those of ``stale`` (``holds``).
        self.stale: set = set()
        self.hits = 0
        self.misses = 0
        self._key = keyer(key_cols, parent.kinds)
        # keys from outside (parameters, upqueries) hold strings as collation keys too
        self.string_keys = has_strings(key_cols, parent.kinds)
        width = len(parent.columns)
        if visible == width:
            self._vis = None
        elif visible == 1:
            self._vis = lambda r: (r[0],)
        else:
            self._vis = itemgetter(*range(visible))
        self._sort_key = make_sort_key(self.order) if self.order else None
        # a key's publication builds at most OFFSET + LIMIT rows of an ordered key (its first
        # ones, read off the sorted state): never worth deferring when that is small
        self._lazy_ok = self._sort_key is None or limit is None or offset + limit > LAZY_ROWS
        self.partial = False
        self.graph = None
        self.subsumed = 0  # misses answered from a sibling reader's state (no upquery)
        self._answer = None  # (graph version, the parent's answerer by the key columns)

    @property
    def materialization(self):
        return PARTIAL if self.partial else FULL

    # --- partial state ---------------------------------------------------------------------
    def fill(self, key: tuple) -> tuple:
        """A read missed: upquery the parent for ``key`` and publish the result."""
        if self.string_keys:
            key = ck_tuple(key)
        runtime = self.graph.runtime if self.graph is not None else None
        if runtime is not None:
            return runtime.read(self, key)
        parent = self.parents[0]
        rows = self._from_sibling(key) if len(parent.children) > 1 else None
        if rows is None:
            # the parent's upquery by this reader's key, planned once per graph shape
            version = self.graph.version if self.graph is not None else -1
            plan = self._answer
            if plan is None or plan[0] != version:
                plan = self._answer = (version, parent.answerer(self.key_cols))
            rows = plan[1](key)
        self._fill_with(key, rows)
        graph = self.graph
        if graph is not None and (graph.fill_log is not None or graph.evictor is not None):
            graph.filled(self, key, len(self.state.get(key, ())))
        return self.published.get(key, ())

    def fill_many(self, keys: list) -> None:
        """Several keys that missed, filled by one upquery for all of them (``query_many``: base
        storage answers them with one query), each key's records split out by the reader's key.
        Keys a sibling covers, or when upqueries are messages, are filled one by one."""
        if self.string_keys:
            keys = [ck_tuple(k) for k in keys]
        keys = [k for k in dict.fromkeys(keys) if not self.holds(k)]
        parent = self.parents[0]
        runtime = self.graph.runtime if self.graph is not None else None
        if (
            len(keys) < 2
            or runtime is not None
            or len(parent.children) > 1
            or self.range_col is not None
        ):
            for k in keys:
                self.fill(k)
            return
        rows = parent.query_many(list(self.key_cols), keys)
        by: dict = {k: [] for k in keys}
        keyf = self._key
        for rec in rows:
            mine = by.get(keyf(rec[0]))
            if mine is None:
                # a record of no key asked for (storage matched what the key function does
                # not): each key is asked for by itself instead
                for k in keys:
                    self.fill(k)
                return
            mine.append(rec)
        graph = self.graph
        for k in keys:
            self._fill_with(k, by[k])
            if graph is not None:
                graph.filled(self, k, len(self.state.get(k, ())))

    def _fill_with(self, key, rows) -> None:
        """Key ``key`` filled with ``rows`` (all of its records, every one of key ``key``)."""
        if self._sort_key is not None and type(self)._apply is Reader._apply:
            if self.string_keys:
                key = ck_tuple(key)
            ordered: list = []
            for row, m in rows:
                if m < 0:
                    break
                ordered.extend([row] * m)
            else:
                # one sort of the whole key (SortedKeyList.update of an empty list), not an
                # insertion per row
                lst = SortedKeyList(key=self._sort_key)
                lst.update(ordered)
                self.state[key] = lst
                self._publish(key)  # published last, as below
                return
        if self._sort_key is not None or type(self)._apply is not Reader._apply:
            self.state[key] = {} if self._sort_key is None else SortedKeyList(key=self._sort_key)
            # published last: a concurrent lock-free lookup sees the key missing, then complete
            self._apply(rows, fill_key=key)
            return
        if self.string_keys:
            key = ck_tuple(key)
        bag: dict = {}
        for row, m in rows:
            c = bag.get(row, 0) + m
            if c:
                bag[row] = c
            else:
                del bag[row]
        self.state[key] = bag
        self._publish(key)  # published last, as above

    def on_fill(self, df, port, up, rows, span=None) -> None:
        """The answer to the upquery of reads that missed (``Dataflow.read_many``)."""
        for key in df.answered(self, up):
            if key in self.published:  # pragma: no cover - only a fill publishes a key
                df.done(self, key)
                continue
            if len(up.keys) == 1:
                mine = rows
            else:
                keyf = self._key
                mine = [rec for rec in rows if keyf(rec[0]) == key]
            self._fill_with(key, mine)
            df.done(self, key)
            df.graph.filled(self, key, len(self.state.get(key, ())))

    def evict_key(self, key) -> None:
        if self.string_keys:
            key = ck_tuple(key)
        if key in self.published or key in self.state:
            self.published.pop(key, None)
            self.state.pop(key, None)
            self.stale.discard(key)
            if self.graph is not None:
                self.graph.evicted(self, key)

    def on_probe(self, port: int, rows: list) -> list:
        if not self.partial:
            return []
        for row in rows:
            k = self._key(row)
            if UNKNOWN in k:
                for key in list(self.published) + list(self.stale):
                    self.evict_key(key)
                break
            self.evict_key(k)
        return []

    def key_gate(self, port: int, carriers: dict):
        """A partial reader keeps only records of keys it publishes."""
        if not self.partial or type(self) is not Reader:
            return None
        comps = [carriers.get(c) for c in self.key_cols]
        if any(j is None for j in comps):
            return None

        def holds(key):
            if not self.partial:
                return True
            k = tuple([key[j] for j in comps])
            return k in self.published or (self.stale and k in self.stale)

        return holds

    def on_input(self, port: int, batch: list) -> list:
        if self.partial:
            published = self.published
            keyf = self._key
            stale = self.stale
            if stale:
                batch = [rec for rec in batch if (k := keyf(rec[0])) in published or k in stale]
            else:
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
            touched.add(ck_tuple(fill_key) if self.string_keys else fill_key)
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
        graph = self.graph
        if fill_key is not None or graph is None or graph.runtime is not None:
            # (a fill returns what it publishes; a domain runtime's reads take the published
            # rows as they are)
            for k in touched:
                self._publish(k)
            return
        stale = self.stale
        lazy = self._lazy_ok
        for k in touched:
            rows = state.get(k)
            if lazy and rows is not None and len(rows) > LAZY_ROWS:
                if k not in stale:
                    self.published.pop(k, None)
                    stale.add(k)
                    graph.stale_readers.add(self)
            else:
                if stale:
                    stale.discard(k)
                self._publish(k)

    def holds(self, key) -> bool:
        """Is ``key`` (as ``published`` holds it) filled? (Every key of a full reader is.)"""
        return not self.partial or key in self.published or key in self.stale

    def settled(self, key) -> tuple:
        """The published rows of ``key`` (a key as ``published`` holds it, of a full reader or
        filled), published first if writes left it stale. Called under the engine's lock."""
        stale = self.stale
        if stale and key in stale:
            stale.discard(key)
            self._publish(key)
        return self.published.get(key, ())

    def settle(self) -> None:
        """Publish every stale key (before a domain runtime takes the reader over)."""
        stale = list(self.stale)
        self.stale.clear()
        for k in stale:
            self._publish(k)

    # --- partial key subsumption (see the module docstring) ------------------------------------
    def _from_sibling(self, key: tuple):
        """Records of ``key`` copied from a sibling reader over the same parent whose state holds
        all of them (a coarser key), or None when no sibling can say."""
        cols = self.key_cols
        for child, _port in self.parents[0].children:
            if child is self or not isinstance(child, Reader):
                continue
            rows = child.covered_rows(cols, key)
            if rows is not None:
                self.subsumed += 1
                return [(r, 1) for r in rows]
        return None

    def covered_rows(self, cols, key, rc=None, lo=BOTTOM, hi=TOP):
        """Every current row whose ``cols`` equal ``key`` (and whose column ``rc``, if given, lies
        in ``[lo, hi)``), when this reader's state is sure to hold all of them; else None."""
        pos = _positions(self.key_cols, cols)
        if pos is None:
            return None
        mine = tuple(key[p] for p in pos)
        if self.string_keys:
            mine = ck_tuple(mine)
        if not self.holds(mine):
            return None
        bag = self.state.get(mine)
        if not bag:
            return []
        rows = expand(bag) if isinstance(bag, dict) else list(bag)
        return [
            r for r in rows if matches(r, cols, key) and (rc is None or in_interval(r[rc], lo, hi))
        ]

    def all_rows(self, key: tuple) -> list:
        """Every row of ``key`` (filling it when partial), in the reader's order."""
        if self.string_keys:
            key = ck_tuple(key)
        lst = self.state.get(key)
        if lst is None and self.partial and not self.holds(key):
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
        if self.string_keys:
            key = ck_tuple(key)
        rows = self.published.get(key)
        if rows is None:
            if self.partial and key not in self.stale:
                self.misses += 1
                return self.fill(key)
            return self.settled(key)
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
        self.stale = set()

    def make_full(self) -> None:
        self.partial = False
        self.state = {}
        self.published = {}
        self.stale = set()
        self._apply(self.parents[0].contents())

    # --- state as tests and audits see it ------------------------------------------------------
    def filled_keys(self) -> list:
        return list(self.published) + list(self.stale) if self.partial else []

    def sample_state(self, n: int = 20) -> list:
        out = []
        for rows in list(self.state.values())[:n]:
            if isinstance(rows, dict):
                out.extend(list(rows.items())[:3])
            else:
                out.extend((r, 1) for r in list(rows)[:3])
        return out

    def compare_filled(self, twin):
        self.settle()
        twin.settle()
        for key, rows in self.published.items():
            yield "", key, Counter(rows), Counter(twin.published.get(key, ()))

    # --- planning (plan_upqueries.py) ---------------------------------------------------------
    def plan_need(self, planner, cols) -> None:
        """A query's needs start at its reader, looked up by its key columns (``cols`` is not
        used: nothing looks a reader up): partial when the key traces to base columns."""
        cols = list(self.key_cols)
        parent = self.parents[0]
        if planner.enabled and cols and parent.traceable(cols):
            self.partial = True
            planner.need(parent, cols)
        else:
            planner.need(parent, None)

    def congruent(self, port, carriers) -> bool:
        return not self.partial or covers(list(self.key_cols), carriers)


def _positions(mine, cols) -> list[int] | None:
    """Where each of ``mine`` sits in ``cols``, or None when one is missing."""
    out = []
    for c in mine:
        try:
            out.append(cols.index(c))
        except ValueError:
            return None
    return out


# --- range readers -------------------------------------------------------------------------------


class _Piece(tuple):
    """``(key, lo, hi)``: one filled range of one key, as the eviction policy knows it."""

    __slots__ = ()


def has_ties(rows, col: int) -> bool:
    """Do two neighbouring rows (in ``col`` order) share their ``col`` value?"""
    prev = _NOTHING
    for r in rows:
        v = r[col]
        if v.__class__ is str:
            v = ck(v)  # strings tie when their collation keys do
        if v == prev:
            return True
        prev = v
    return False


_NOTHING = object()

# Positions in a key's blocks of rows (``RangeRows`` and its ``RangeSnapshot``): ``(b, p)`` is row
# ``p`` of block ``b``; ``(len(blocks), 0)`` is the end. These functions work on both (lists while
# the reader changes them, tuples once frozen): ``firsts`` holds each block's first value,
# ``vals`` each block's values in order, ``rows`` each block's rows.


def _locate(firsts, vals, cut) -> tuple[int, int]:
    """The position of the cut ``cut``: the first row above it (``dataflow/intervals.py``)."""
    tag = cut[0]
    if tag != 1 or not vals:
        return (0, 0) if tag == 0 or not vals else (len(vals), 0)
    v = cut[1]
    if cut[2] == 0:  # below(v): the first row with a value >= v
        b = bisect_left(firsts, v) - 1
        if b < 0:
            b = 0
        p = bisect_left(vals[b], v)
    else:  # above(v): the first row with a value > v
        b = bisect_right(firsts, v) - 1
        if b < 0:
            b = 0
        p = bisect_right(vals[b], v)
    if p == len(vals[b]):
        return (b + 1, 0)
    return (b, p)


def _slice(rows, i, j) -> list:
    """The rows from position ``i`` up to position ``j``."""
    b1, p1 = i
    b2, p2 = j
    if b1 == b2:
        return list(rows[b1][p1:p2]) if b1 < len(rows) else []
    if b1 > b2:
        return []
    out = list(rows[b1][p1:])
    for b in range(b1 + 1, b2):
        out.extend(rows[b])
    if b2 < len(rows):
        out.extend(rows[b2][:p2])
    return out


def _advance(vals, pos, k: int) -> tuple[int, int]:
    """The position ``k`` rows after ``pos`` (or the end)."""
    b, p = pos
    n = len(vals)
    while b < n:
        left = len(vals[b]) - p
        if k < left:
            return (b, p + k)
        k -= left
        b += 1
        p = 0
    return (n, 0)


def _retreat(vals, pos, k: int) -> tuple[int, int]:
    """The position ``k`` rows before ``pos`` (or the start)."""
    b, p = pos
    while True:
        if k <= p:
            return (b, p - k)
        k -= p
        b -= 1
        if b < 0:
            return (0, 0)
        p = len(vals[b])


def _window(firsts, vals, lo, hi, need, desc) -> tuple:
    """Positions ``(i, j)`` of the rows in ``[lo, hi)``, or with ``need`` only of the first
    ``need`` of them (the last when ``desc``) and the rest of the boundary row's tie group."""
    i = _locate(firsts, vals, lo)
    j = _locate(firsts, vals, hi)
    if need is None or not i < j:
        return i, j
    return _trim(vals, i, j, need, desc)


def _trim(vals, i, j, need: int, desc: bool) -> tuple:
    """``(i, j)`` cut to the first ``need`` rows (the last when ``desc``), keeping the whole
    tie group of the boundary row."""
    if need <= 0:
        return i, i
    if desc:
        k = _retreat(vals, j, need)
        if k <= i:
            return i, j
        b, p = k
        v = vals[b][p]
        while k > i:  # take the boundary row's equal neighbours below it too
            pb, pp = (b, p - 1) if p else (b - 1, len(vals[b - 1]) - 1)
            if vals[pb][pp] != v:
                break
            b, p = k = (pb, pp)
        return k, j
    k = _advance(vals, i, need - 1)
    if not k < j:
        return i, j
    b, p = k
    v = vals[b][p]
    while True:  # and its equal neighbours above it
        b, p = k = (b, p + 1) if p + 1 < len(vals[b]) else (b + 1, 0)
        if not k < j or vals[b][p] != v:
            return i, k


def _count_at_least(vals, i, j, need: int) -> bool:
    """Are there at least ``need`` rows from position ``i`` up to position ``j``?"""
    if need <= 0:
        return True
    k = _advance(vals, i, need - 1)
    return k < j


class _Frozen:
    """One block of a key's rows as a snapshot shares it until the block changes."""

    __slots__ = ("vals", "rows", "proj", "ties")

    def __init__(self, vals, rows):
        self.vals = tuple(vals)
        self.rows = tuple(rows)
        self.proj = None  # (visible, rows cut to their first `visible` columns)
        self.ties = len(set(self.vals)) != len(self.vals)  # two rows share a value


class RangeRows:
    """One key's rows in a range reader, ordered by the range value (a string by its collation
    key, which ``vals`` and ``firsts`` hold; rows with equal values in insertion order), held in
    blocks of at most ``2 * LOAD`` rows (a fuller block splits in two;
    a block that shrinks merges with the next when both fit in ``LOAD``), with the blocks' first
    values: a bisection finds a value's block and then its row. Each block keeps a frozen copy
    (``_Frozen``) for lock-free snapshots, dropped when the block changes, so publishing a key
    after a change copies only the blocks that changed."""

    LOAD = 256
    __slots__ = ("col", "firsts", "vals", "rows", "frozen", "n")

    def __init__(self, col: int):
        self.col = col
        self.firsts: list = []
        self.vals: list[list] = []
        self.rows: list[list] = []
        self.frozen: list = []
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        for rs in self.rows:
            yield from rs

    def add(self, row) -> None:
        v = row[self.col]
        if v.__class__ is str:
            v = ck(v)  # strings in their collation's order
        firsts, vals = self.firsts, self.vals
        self.n += 1
        if not vals:
            firsts.append(v)
            vals.append([v])
            self.rows.append([row])
            self.frozen.append(None)
            return
        b = bisect_right(firsts, v) - 1
        if b < 0:
            b = 0
            firsts[0] = v
        vs = vals[b]
        p = bisect_right(vs, v)
        vs.insert(p, v)
        self.rows[b].insert(p, row)
        self.frozen[b] = None
        if len(vs) > 2 * self.LOAD:
            half = len(vs) // 2
            rs = self.rows[b]
            vals[b : b + 1] = [vs[:half], vs[half:]]
            self.rows[b : b + 1] = [rs[:half], rs[half:]]
            self.frozen[b : b + 1] = [None, None]
            firsts.insert(b + 1, vs[half])

    def remove(self, row) -> None:
        """Remove one copy of ``row``; ValueError when there is none."""
        v = row[self.col]
        if v.__class__ is str:
            v = ck(v)
        firsts, vals = self.firsts, self.vals
        b = bisect_left(firsts, v) - 1
        if b < 0:
            b = 0
        while b < len(vals) and firsts[b] <= v:
            vs = vals[b]
            rs = self.rows[b]
            for p in range(bisect_left(vs, v), bisect_right(vs, v)):
                if rs[p] == row:
                    del vs[p]
                    del rs[p]
                    self.n -= 1
                    self._changed(b)
                    return
            b += 1
        raise ValueError(f"{row!r} is not in the reader's state")

    def _changed(self, b: int) -> None:
        """Block ``b`` lost rows: drop it when empty, merge it with the next block when both fit
        in ``LOAD`` rows, and refresh its first value."""
        vals = self.vals
        if not vals[b]:
            del self.firsts[b], vals[b], self.rows[b], self.frozen[b]
            return
        if b + 1 < len(vals) and len(vals[b]) + len(vals[b + 1]) <= self.LOAD:
            vals[b].extend(vals[b + 1])
            self.rows[b].extend(self.rows[b + 1])
            del self.firsts[b + 1], vals[b + 1], self.rows[b + 1], self.frozen[b + 1]
        self.firsts[b] = vals[b][0]
        self.frozen[b] = None

    def locate(self, cut) -> tuple[int, int]:
        return _locate(self.firsts, self.vals, cut)

    def between(self, lo, hi) -> list:
        """The rows in ``[lo, hi)``, in order."""
        return _slice(self.rows, self.locate(lo), self.locate(hi))

    def delete(self, lo, hi) -> int:
        """Remove the rows in ``[lo, hi)``; how many there were."""
        (b1, p1), (b2, p2) = self.locate(lo), self.locate(hi)
        if (b1, p1) >= (b2, p2):
            return 0
        gone = 0
        # the tail of b1, the blocks strictly between, the head of b2 (same block: a middle)
        for b in range(min(b2, len(self.vals) - 1), b1 - 1, -1):
            start = p1 if b == b1 else 0
            stop = p2 if b == b2 else len(self.vals[b])
            if start >= stop:
                continue
            del self.vals[b][start:stop]
            del self.rows[b][start:stop]
            gone += stop - start
            self._changed(b)
        self.n -= gone
        return gone

    def freeze(self) -> tuple[tuple, tuple]:
        """``(firsts, blocks)``: immutable copies, sharing unchanged blocks with the last call."""
        frozen = self.frozen
        for b, f in enumerate(frozen):
            if f is None:
                frozen[b] = _Frozen(self.vals[b], self.rows[b])
        return tuple(self.firsts), tuple(frozen)


class RangeSnapshot:
    """An immutable copy of one key of a range reader, read without the engine lock: the key's
    rows in range order (in frozen blocks) and the ranges filled when it was taken."""

    __slots__ = ("whole", "los", "his", "firsts", "blocks", "vals", "rows", "ties", "single")

    def __init__(self, filled: IntervalSet | None, state: RangeRows | None):
        self.whole = filled is None or filled.is_whole()
        self.los = () if self.whole else tuple(filled.los)
        self.his = () if self.whole else tuple(filled.his)
        if state is None:
            self.firsts, self.blocks = (), ()
        else:
            self.firsts, self.blocks = state.freeze()
        self.vals = tuple(f.vals for f in self.blocks)
        self.rows = tuple(f.rows for f in self.blocks)
        # the only block, for the engine's fastest path (most keys are one block)
        self.single = self.blocks[0] if len(self.blocks) == 1 else None
        # rows with equal values need sorting by the query's ORDER BY
        vals = self.vals
        self.ties = any(f.ties for f in self.blocks) or any(
            vals[b][-1] == vals[b + 1][0] for b in range(len(vals) - 1)
        )

    def window(self, lo: tuple, hi: tuple, need=None, desc: bool = False, visible=None):
        """The rows of ``[lo, hi)`` (``_window``), cut to ``visible`` columns when given; None
        when the snapshot does not hold them: not all of ``[lo, hi)`` is filled and, with
        ``need``, the filled run at its start (its end when ``desc``) has fewer rows."""
        firsts, vals = self.firsts, self.vals
        short = False  # reading only the filled run at one end of [lo, hi)
        if not self.whole:
            los, his = self.los, self.his
            if desc:
                k = bisect_left(his, hi)
                if k == len(los) or not los[k] < hi:
                    return None
                if los[k] > lo:
                    if need is None:
                        return None
                    lo = los[k]
                    short = True
            else:
                k = bisect_right(los, lo) - 1
                if k < 0 or not lo < his[k]:
                    return None
                if his[k] < hi:
                    if need is None:
                        return None
                    hi = his[k]
                    short = True
        i = _locate(firsts, vals, lo)
        j = _locate(firsts, vals, hi)
        if short and not _count_at_least(vals, i, j, need):
            return None
        if need is not None and i < j:
            i, j = _trim(vals, i, j, need, desc)
        if visible is None:
            return _slice(self.rows, i, j)
        if i[0] == j[0]:
            if i[0] == len(self.blocks):
                return ()
            return self.projected(self.blocks[i[0]], visible)[i[1] : j[1]]
        return [r[:visible] for r in _slice(self.rows, i, j)]

    @staticmethod
    def projected(block: _Frozen, visible: int) -> tuple:
        """A frozen block's rows cut to their first ``visible`` columns (made once)."""
        p = block.proj
        if p is None or p[0] != visible:
            p = block.proj = (visible, tuple([r[:visible] for r in block.rows]))
        return p[1]


class RangeReader(Reader):
    """A reader with a range column: ``WHERE a = ? AND b BETWEEN ? AND ?``, ``b > ?`` alone
    (one global key ``()``), keyset pagination (``id < ? ORDER BY id DESC LIMIT n``).

    State, per equality key: the key's rows ordered by the range column (``RangeRows``; rows
    whose range value is NULL are never kept: no comparison with NULL is true); rows with equal
    values are in no particular order, so a read that returns several sorts them by its ORDER
    BY, ties by the whole row. A partial range reader also keeps per key an ``IntervalSet`` of the
    range column: the ranges whose rows it holds (``filled``). Then:

    - a read of ``[lo, hi)`` upqueries only ``filled[key].missing(lo, hi)``, one ranged upquery per
      missing piece (``query_range`` on the parent: filters and projections pass it through,
      unions ask every parent, a base table runs an indexed SQLite range query). A read that
      wants only the first n rows in range order (``ORDER BY b LIMIT n``, keyset pagination)
      fills from ``lo`` upward (or ``hi`` downward) only until n rows are held;
    - a delta whose range value lies in ``filled[key]`` is applied; any other is dropped: no read
      can see it, and a later fill of its range reads base storage, which has it;
    - eviction works per filled piece: the piece leaves the interval set and its rows leave the
      state (``_Piece`` entries in the eviction policy's LRU); a key with nothing left is gone.

    When the path to base storage holds state keyed without the range (an aggregate, a
    distinct) ranged upqueries are not planned (``ranged`` is False): a miss fills the whole key
    (``[BOTTOM, TOP)``), as a plain reader does. A join passes a ranged upquery to one side; a
    record it drops for an unfilled join key arrives here as a probe, which forgets the filled
    piece holding the record's range value. A full range reader holds every key over the whole
    range.

    When the graph runs on messages (``upqueries="messages"``, domain threads) the same fills
    are ranged upqueries sent as messages (``Dataflow.read_range`` in ``dataflow/domain.py``):
    ``wanted`` says what a read misses, ``add_piece`` (``fill_whole``) takes an answer, which
    marks only the sub-range it answered filled, and ``collect`` gathers the read's rows once
    nothing is missing; sibling readers are not consulted then (their state may be ahead of or
    behind this one's on the FIFO channels).

    Lookups without the engine lock read a ``RangeSnapshot`` of the key from ``published``. A
    change to a key drops its snapshot; the next locked read of the key publishes a new one,
    copying only the blocks that changed.
    """

    FILL_SLACK = 16  # rows fetched beyond what a bounded (LIMIT) fill needs

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
        super().__init__(parent, key_cols, visible, order, limit, offset, range_col)
        self._sort_key = None  # rows live in RangeRows, ordered by the range column
        # columns holding the range column's value too (``SELECT b ... WHERE b > ?`` carries b
        # visibly and as the hidden range column): ordering by one is ordering by the other
        self.range_aliases = {range_col}
        src = getattr(parent, "source_cols", None)
        if src is not None and src[range_col] is not None:
            self.range_aliases.update(i for i, c in enumerate(src) if c == src[range_col])
        self.filled: dict = {}  # key -> IntervalSet of the range column (partial only)
        self.pieces: dict = {}  # key -> set of _Piece registered with the eviction policy
        self.piece_rows: dict = {}  # _Piece -> rows it brought (its size for the policy)
        self.ranged = False  # set by the planner: misses upquery only the missing ranges
        self.upqueries = 0
        self.upquery_rows = 0
        self.dropped = 0  # deltas dropped because their range was not filled

    def _rows_of(self, key) -> RangeRows:
        st = self.state.get(key)
        if st is None:
            st = self.state[key] = RangeRows(self.range_col)
        return st

    # --- reads -----------------------------------------------------------------------------
    def read(self, key: tuple, lo: tuple, hi: tuple, need=None, desc: bool = False) -> list:
        """Rows of ``key`` whose range value lies in ``[lo, hi)``, in range order, filling missing
        ranges first when partial. With ``need``, only the first ``need`` rows (the last ones
        when ``desc``) plus the rest of the boundary row's tie group. Caller holds the lock.
        When the graph runs on messages the fills are ranged upqueries sent as messages
        (``Dataflow.read_range``), and this waits for the answer."""
        if not lo < hi:
            return []
        if self.partial:
            runtime = self.graph.runtime if self.graph is not None else None
            if runtime is not None:
                got = runtime.read_range(self, key, lo, hi, need, desc)
                if got is None:  # a test scheduler: the answer waits for its messages
                    raise RuntimeError(f"the read of {key!r} at {self} has not completed")
                return got[0]
            self._ensure(key, lo, hi, need, desc)
        return self.collect(key, lo, hi, need, desc)

    def collect(self, key: tuple, lo: tuple, hi: tuple, need=None, desc: bool = False) -> list:
        """The rows ``read`` returns, from what the state holds now (no filling); publishes the
        key's snapshot for lock-free reads."""
        if not lo < hi:
            return []
        st = self.state.get(key)
        if st is not None and key not in self.published:
            self.published[key] = RangeSnapshot(self.filled.get(key), st)
        if not st:
            return []
        i, j = _window(st.firsts, st.vals, lo, hi, need, desc)
        return _slice(st.rows, i, j)

    def lookup(self, key: tuple):
        return tuple(self.read(key, BOTTOM, TOP))

    def all_rows(self, key: tuple) -> list:
        """The rows held for ``key`` (its filled ranges only when partial), without filling."""
        return list(self.state.get(key, ()))

    def restrict(self, key: tuple, rows) -> list:
        """The rows of ``rows`` (all rows of ``key``, e.g. from a full twin) that this reader
        should hold: those in the filled ranges of ``key``. For invariant audits."""
        rc = self.range_col
        if not self.partial:
            return [r for r in rows if r[rc] is not None]
        s = self.filled.get(key)
        return [] if s is None else [r for r in rows if s.contains(r[rc])]

    def covered_rows(self, cols, key, rc=None, lo=BOTTOM, hi=TOP):
        pos = _positions(self.key_cols, cols)
        if pos is None:
            return None
        mine = tuple(key[p] for p in pos)
        myrc = self.range_col
        if myrc in cols:
            x = key[cols.index(myrc)]
            if x is None:
                return None
            plo, phi = point(x)
            if rc == myrc:
                plo, phi = max(plo, lo), min(phi, hi)
        elif rc == myrc:
            plo, phi = lo, hi
        else:
            return None
        if self.partial:
            s = self.filled.get(mine)
            if s is None or not s.covers(plo, phi):
                return None
        st = self.state.get(mine)
        if not st or not plo < phi:
            return []
        return [r for r in st.between(plo, phi) if matches(r, cols, key)]

    # --- filling ---------------------------------------------------------------------------
    def wanted(self, key, lo, hi, need=None, desc=False) -> list:
        """What a read of ``[lo, hi)`` of ``key`` must fill next, as ``(lo, hi, limit)`` pieces
        (``limit`` None: every row of the piece); empty when the state can answer it. With
        ``need``, one bounded piece next to the filled run the read starts from (the read asks
        again once it is filled). Only for ranged upqueries (``ranged``)."""
        s = self.filled.get(key)
        if s is None:
            s = IntervalSet()
        if need is None:
            return [(plo, phi, None) for plo, phi in s.missing(lo, hi)]
        # only the first `need` rows from lo (or the last from hi) are wanted: fill the gap
        # next to the covered run, a bounded number of rows at a time
        st = self.state.get(key)
        if desc:
            start = s.start_of(hi)
            if start <= lo:
                return []
            have = _count(st, start, hi, need)
            if have >= need:
                return []
            glo, ghi = s.missing(lo, start)[-1]
        else:
            end = s.end_of(lo)
            if end >= hi:
                return []
            have = _count(st, lo, end, need)
            if have >= need:
                return []
            glo, ghi = s.missing(end, hi)[0]
        return [(glo, ghi, need - have + self.FILL_SLACK)]

    def _ensure(self, key, lo, hi, need, desc) -> None:
        if not self.ranged:
            s = self.filled.get(key)
            if s is None:
                self.fill(key)
            return
        while True:
            gaps = self.wanted(key, lo, hi, need, desc)
            if not gaps:
                return
            for glo, ghi, limit in gaps:
                self._fill_piece(key, glo, ghi, limit, desc)

    def _fill_piece(self, key, lo, hi, limit=None, desc=False) -> None:
        """Upquery the rows of ``key`` in the missing range ``[lo, hi)`` (with ``limit``: the
        first ``limit`` rows from ``lo``, or the last from ``hi`` when ``desc``; the parent says
        which sub-range it answered in full) and add them and their range."""
        rows = self._sibling_range(key, lo, hi)
        if rows is None:
            rows, lo, hi = self.parents[0].query_range(
                list(self.key_cols), key, self.range_col, lo, hi, limit, desc
            )
        self.add_piece(key, rows, lo, hi)

    def add_piece(self, key, rows, lo, hi) -> None:
        """The answer of a ranged upquery: ``rows`` are every row of ``key`` in ``[lo, hi)``, a
        range not filled yet. Add them and mark (only) that range filled."""
        if not lo < hi:  # a bounded fill must answer some range, or reads would loop
            raise RuntimeError(f"ranged upquery answered an empty range {lo}..{hi}")
        rc = self.range_col
        self.upqueries += 1
        self.upquery_rows += len(rows)
        st = self._rows_of(key)
        for row, m in _net(rows).items():
            if in_interval(row[rc], lo, hi):  # not NULL, nor beyond what was answered
                for _ in range(m):
                    st.add(row)
        s = self.filled.get(key)
        if s is None:
            s = self.filled[key] = IntervalSet()
        s.add(lo, hi)
        self.published.pop(key, None)
        piece = _Piece((key, lo, hi))
        self.pieces.setdefault(key, set()).add(piece)
        self.piece_rows[piece] = len(rows)
        if self.graph is not None:
            self.graph.filled(self, piece, len(rows))

    def _sibling_range(self, key, lo, hi):
        cols = self.key_cols
        for child, _port in self.parents[0].children:
            if child is self or not isinstance(child, Reader):
                continue
            rows = child.covered_rows(cols, key, self.range_col, lo, hi)
            if rows is not None:
                self.subsumed += 1
                return [(r, 1) for r in rows]
        return None

    def touch_range(self, evictor, key, lo, hi) -> None:
        """A read of ``[lo, hi)`` of ``key`` was answered: the filled pieces it read are
        recently used (the eviction policy is LRU per piece). Needs no engine lock: it reads a
        copy of the key's pieces, and the policy has a lock of its own."""
        if not self.ranged:
            evictor.touch(self, key, len(self.state.get(key, ())))
            return
        for p in tuple(self.pieces.get(key, ())):  # a copy: a domain thread may change it
            if p[1] < hi and lo < p[2]:
                evictor.touch(self, p, self.piece_rows.get(p, 0))

    def fill(self, key: tuple) -> tuple:
        """Fill all of ``key`` (every range): a miss on a path without ranged upqueries."""
        s = self.filled.get(key)
        if s is not None and s.is_whole():
            return ()
        rows = self._sibling_range(key, BOTTOM, TOP)
        if rows is None:
            rows = self.parents[0].query(list(self.key_cols), key)
        self.fill_whole(key, rows)
        return ()

    def on_fill(self, df, port, up, rows, span=None) -> None:
        """The answer to a ranged upquery (``span``: the sub-range it answered) or a whole-key
        one sent by ``Dataflow.read_range``."""
        key = up.keys[0]

        def add():
            if self.partial:  # (not made full meanwhile)
                if span is None:
                    self.fill_whole(key, rows)
                else:
                    self.add_piece(key, rows, span[0], span[1])

        df.range_answered(self, up, add)

    def fill_whole(self, key, rows) -> None:
        """The answer of a whole-key upquery: ``rows`` are every row of ``key``."""
        if key in self.filled:
            self._drop(key)
        self.upqueries += 1
        self.upquery_rows += len(rows)
        self._apply(list(_net(rows).items()), fill_key=key)
        if self.graph is not None:
            self.graph.filled(self, key, len(self.state.get(key, ())))

    # --- deltas ----------------------------------------------------------------------------
    def on_input(self, port: int, batch: list) -> list:
        if self.partial:
            filled = self.filled
            keyf = self._key
            rc = self.range_col
            keep = []
            for rec in batch:
                row = rec[0]
                s = filled.get(keyf(row))
                if s is not None and s.contains(row[rc]):
                    keep.append(rec)
            self.dropped += len(batch) - len(keep)
            if not keep:
                return []
            batch = keep
        self._apply(batch)
        return []

    def _apply(self, batch: list, fill_key=None) -> None:
        state = self.state
        published = self.published
        keyf = self._key
        rc = self.range_col
        if fill_key is not None:
            if self.partial:
                self.filled[fill_key] = IntervalSet.whole()
            self._rows_of(fill_key)
            published.pop(fill_key, None)
        for row, m in batch:
            if row[rc] is None:
                continue
            k = keyf(row)
            st = state.get(k)
            if st is None:
                st = state[k] = RangeRows(rc)
            if m > 0:
                for _ in range(m):
                    st.add(row)
            else:
                for _ in range(-m):
                    st.remove(row)
                if not st and not self.partial:
                    del state[k]
            published.pop(k, None)

    # --- eviction --------------------------------------------------------------------------
    def evict_key(self, entry) -> None:
        """Evict a filled piece (``_Piece``) or a whole key."""
        if entry.__class__ is not _Piece:
            self._drop(entry)
            return
        key, lo, hi = entry
        ps = self.pieces.get(key)
        if ps is not None:
            ps.discard(entry)
        self.piece_rows.pop(entry, None)
        if self.graph is not None:
            self.graph.evicted(self, entry)
        s = self.filled.get(key)
        if s is None:
            return
        s.subtract(lo, hi)
        st = self.state.get(key)
        if st:
            st.delete(lo, hi)
        self.published.pop(key, None)
        if not s:
            self._drop(key)

    def _drop(self, key) -> None:
        present = key in self.filled or key in self.state
        self.state.pop(key, None)
        self.filled.pop(key, None)
        self.published.pop(key, None)
        pieces = self.pieces.pop(key, ())
        for p in pieces:
            self.piece_rows.pop(p, None)
        if self.graph is not None:
            for p in pieces:
                self.graph.evicted(self, p)
            if present:
                self.graph.evicted(self, key)

    def on_probe(self, port: int, rows: list) -> list:
        """A record that could change what this reader holds was dropped above (a join whose
        key was not filled): forget what it could touch. With its key and range value known,
        that is the one filled piece holding the value; with an unknown range value, the key;
        with an unknown key, everything."""
        if not self.partial:
            return []
        rc = self.range_col
        for row in rows:
            k = self._key(row)
            if UNKNOWN in k:
                for key in list(self.filled):
                    self._drop(key)
                break
            x = row[rc]
            if x is UNKNOWN or not self.ranged:
                self._drop(k)
            elif x is not None:  # a NULL range value is never held
                s = self.filled.get(k)
                if s is not None and s.contains(x):
                    held = [p for p in self.pieces.get(k, ()) if in_interval(x, p[1], p[2])]
                    if not held:  # filled some other way than by pieces
                        self._drop(k)
                    for piece in held:
                        self.evict_key(piece)
        return []

    # --- bookkeeping -----------------------------------------------------------------------
    def contents(self) -> list:
        return [(r, 1) for st in self.state.values() for r in st]

    def describe(self) -> str:
        text = f"reader key {list(self.key_cols)} range #{self.range_col}"
        if self.partial:
            text += ", fills missing ranges" if self.ranged else ", fills whole keys"
        return text

    def on_removed(self):
        # cleared in place: prepared statements hold ``published`` for lock-free reads
        self.state.clear()
        self.published.clear()
        self.filled.clear()
        self.pieces.clear()
        self.piece_rows.clear()

    def make_full(self) -> None:
        self.on_removed()
        self.partial = False
        self.ranged = False
        self._apply(self.parents[0].contents())

    def filled_keys(self) -> list:
        """The filled pieces, and the keys filled whole (not by pieces)."""
        if not self.partial:
            return []
        pieces = self.pieces
        out = [p for ps in pieces.values() for p in ps]
        return out + [k for k in self.filled if not pieces.get(k)]

    def compare_filled(self, twin):
        # only the filled ranges of a key are held: compare those
        for key in self.published:
            got = Counter(self.all_rows(key))
            yield "", key, got, Counter(self.restrict(key, twin.all_rows(key)))

    def plan_need(self, planner, cols) -> None:
        """Partial with ranged upqueries when the key and range columns trace to base columns
        (``range_traceable``); else as a plain reader (whole keys filled, or full)."""
        key = list(self.key_cols)
        parent = self.parents[0]
        rc = self.range_col
        if planner.enabled and parent.range_traceable(key, rc):
            # misses fill the missing ranges of each key by ranged upqueries
            self.partial = True
            self.ranged = True
            planner.need_range(parent, key, rc)
            return
        super().plan_need(planner, cols)


def _net(rows) -> dict:
    """Records summed per row (an answer may carry a row and, folded in after it, its
    deletion), keeping the rows that are there."""
    out: dict = {}
    for row, m in rows:
        out[row] = out.get(row, 0) + m
    return {r: m for r, m in out.items() if m > 0}


def _count(st: RangeRows | None, lo, hi, cap: int) -> int:
    """Rows of ``st`` in ``[lo, hi)``, counted up to ``cap`` at most."""
    if not st:
        return 0
    (b1, p1), (b2, p2) = st.locate(lo), st.locate(hi)
    if (b1, p1) >= (b2, p2):
        return 0
    if b1 == b2:
        return p2 - p1
    n = len(st.vals[b1]) - p1
    for b in range(b1 + 1, b2):
        if n >= cap:
            return n
        n += len(st.vals[b])
    return n + p2

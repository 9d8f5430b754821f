"""``SelectPrepared``: a SELECT the dataflow maintains, answered by a reader lookup keyed by
its parameters, and the key coercion its lookups use.
"""

from __future__ import annotations

import datetime as _dt
import time
from bisect import bisect_left, bisect_right
from decimal import Decimal
from typing import TYPE_CHECKING

from .. import errors as E
from ..dataflow.eviction import holding
from ..dataflow.intervals import BOTTOM, TOP, int_cut
from ..dataflow.ops.reader import has_ties
from ..dataflow.records import raise_fault
from ..result import Result
from ..sql import values as V
from ..sql.collation import ck
from ..sql.compile import CompiledQuery, key_combinations
from ..sql.parse import parse
from .base import LATENCY_BOUNDS_NS, QueryEntry, _count_params
from .prepared import (
    _NUMBER_TYPES,
    _PARAM_TYPES,
    LIKE_PATTERN,
    BindsOtherwise,
    Prepared,
    check_params,
)

if TYPE_CHECKING:
    from .core import Engine


class SelectPrepared(Prepared):
    kind = "select"
    is_select = True
    description = None  # the PEP 249 cursor description, cached by the cursor

    def __init__(
        self,
        entry: QueryEntry,
        param_count: int,
        names: list | None = None,
        cq: CompiledQuery | None = None,
        sql: str | None = None,
    ):
        """``cq``: the entry's compiled query with its parameters renumbered for this text
        (``compile.remap_in_lists``: an IN list of another length than the entry's); ``sql``:
        the text this statement was prepared from (its base-storage twin is prepared from it:
        the entry's own text may be spelled otherwise, or hold IN lists of another length)."""
        self.entry = entry
        if cq is None:
            cq = entry.compiled
        self.cq = cq
        self.text = sql
        self.param_count = param_count
        # a text spelled otherwise than the one compiled shares its view, not its names
        self.columns = names if names is not None and len(names) == len(cq.names) else cq.names
        self.column_types = [V.MYSQL_NAME_OF_KIND.get(k, "VARCHAR") for k in cq.kinds]
        for i, t in enumerate(getattr(cq, "declared", None) or ()):
            if t is not None:
                self.column_types[i] = t  # a column's own type, as MySQL reports it
        self.nullable = cq.nullable
        # the result columns that hold a FLOAT column's values (the client reads them as shown)
        self.float_columns = tuple(i for i, k in enumerate(cq.kinds) if k.__class__ is V.FloatKind)
        self.reader = cq.reader
        # lower-case base tables the query reads (a transaction that wrote one of them reads
        # the query from base storage, where its own writes are)
        self.tables = frozenset(n.table.lower() for n in cq.nodes if n.kind == "base")
        self._twin: Prepared | None = None
        self.key_params = cq.key_params
        self.key_kinds = cq.key_kinds
        self.dynamic = (
            bool(cq.range_ops)
            or cq.limit_param is not None
            or (cq.offset_param is not None or cq.reader.range_col is not None)
        )
        # a single key of a query compiled for several (an IN list of one, sharing the query
        # of longer lists: compile.remap_in_lists) still merges: its reader keeps the rows of
        # OFFSET + LIMIT with the hidden columns
        self.simple = (
            not cq.multi_key
            and cq.default_fn is None
            and not self.dynamic
            and cq.merge_limit is None
        )
        if self.dynamic:
            from ..dataflow.ops.reader import make_sort_key

            self._order_key = make_sort_key(cq.order) if cq.order else None
        kp = [ps[0] for ps in cq.key_params]
        kk = cq.key_kinds
        self._published = cq.reader.published
        self._evictor = cq.reader.graph.evictor if cq.reader.graph is not None else None
        if len(kp) == 1 and kk[0] == V.INT:
            i0 = kp[0]

            def int_key(p, i0=i0):
                v = p[i0]
                return (v,) if v.__class__ is int else (_coerce_key(v, V.INT),)

            self._key = int_key
            self._int_at = i0  # (rows reads an int key without calling int_key)
        elif not kp:
            self._key = lambda p: ()
        else:
            self._key = lambda p: tuple(_coerce_key(p[i], k) for i, k in zip(kp, kk))
        if cq.reader.range_col is not None:
            self._init_range()
        self._faults = cq.fault_source
        if self._faults is not None:
            self._unchecked_rows = self.rows
            self.rows = self._checked_rows  # only a query whose rows may hold a Fault pays

    def _checked_rows(self, params) -> tuple:
        """``rows``, raising the error of a row MySQL could not compute (see ``Fault``)."""
        rows = self._unchecked_rows(params)
        if self._faults.faulted:
            raise_fault(rows)
        return rows

    _int_at = None  # the parameter that is the whole key, when the key is one INT column

    def rows(self, params) -> tuple:
        if self.simple:
            i = self._int_at
            if i is not None and params[i].__class__ is int:
                key = (params[i],)
            else:
                key = self._key(params)
            r = self._published.get(key)
            if r is not None:
                self.entry.hits += 1
                ev = self._evictor
                if ev is not None:
                    lock = self.reader.graph.lock
                    if lock.acquire(blocking=False):  # a busy engine skips the LRU touch
                        try:
                            ev.touch(self.reader, key, len(r))
                        finally:
                            lock.release()
                return r
            return self._miss(key)
        return self._rows_general(params)

    def sample_next(self, skip: int = 0) -> bool:
        """Time one plain lookup of this statement, the one after the next ``skip``, into
        ``entry.hit_buckets`` if it hits (a miss times itself): ``rows`` is replaced until
        then. The read latency the monitor shows (noria_py/monitor) comes from these samples;
        a statement nobody samples reads at full speed. False when this statement is no plain
        lookup."""
        if not self.simple or "rows" in self.__dict__:
            return False  # a query that may hold a Fault keeps its own rows (_checked_rows)
        self._skip = skip
        self.rows = self._timed_rows
        return True

    _skip = 0

    def _timed_rows(self, params) -> tuple:
        """``rows`` of a plain lookup, the ``sample_next``-th timed."""
        if self._skip > 0:
            self._skip -= 1
            return type(self).rows(self, params)
        self.__dict__.pop("rows", None)
        t0 = time.perf_counter_ns()
        key = self._key(params)
        r = self._published.get(key)
        if r is None:
            return self._miss(key)
        entry = self.entry
        entry.hits += 1
        ev = self._evictor
        if ev is not None:
            lock = self.reader.graph.lock
            if lock.acquire(blocking=False):
                try:
                    ev.touch(self.reader, key, len(r))
                finally:
                    lock.release()
        entry.hit_buckets[bisect_left(LATENCY_BOUNDS_NS, time.perf_counter_ns() - t0)] += 1
        return r

    def _miss(self, key) -> tuple:
        graph = self.reader.graph
        rt = graph.runtime
        if rt is not None and rt.threaded:
            # domain threads: ask the reader's domain and wait for this key only
            return self._fill_miss(key)
        with graph.lock:
            graph.sync()
            r = self.reader.published.get(key)
            if r is not None:  # filled by another thread meanwhile
                self.entry.hits += 1
                return r
            ev = graph.evictor
            if ev is None:
                return self._fill_miss(key)
            ev.hold()  # (eviction.holding, without a generator per miss)
            try:
                return self._fill_miss(key)
            finally:
                ev.release()

    def _fill_miss(self, key) -> tuple:
        reader = self.reader
        if not reader.partial or _NoMatch in key or key in reader.stale:
            self.entry.hits += 1
            # a full reader lacks a key of no rows; a key of many rows that writes left stale
            # is published by this read
            return () if _NoMatch in key else reader.settled(key)
        entry = self.entry
        entry.misses += 1
        t0 = time.perf_counter_ns()
        try:
            return reader.fill(key)
        finally:
            dt = time.perf_counter_ns() - t0
            entry.miss_ns += dt
            entry.miss_buckets[bisect_left(LATENCY_BOUNDS_NS, dt)] += 1

    def _fill_many(self, keys: list) -> set:
        """Fill several missing keys of the reader with one upquery (``Reader.fill_many``),
        each counted as a miss; the keys (as looked up) it was asked for."""
        entry = self.entry
        entry.misses += len(keys)
        t0 = time.perf_counter_ns()
        try:
            self.reader.fill_many(keys)
        finally:
            dt = time.perf_counter_ns() - t0
            entry.miss_ns += dt
            entry.miss_buckets[bisect_left(LATENCY_BOUNDS_NS, dt // len(keys))] += len(keys)
        return set(keys)

    def _keys(self, params, coerce=None) -> list[tuple]:
        """The distinct reader keys a lookup asks for, after coercing parameters to the key
        columns' kinds (so ``IN ('1', 1)`` asks for key 1 once)."""
        coerce = coerce or _coerce_key
        kinds = self.key_kinds
        combos = key_combinations(self.key_params, params)
        if len(combos) == 1:
            return [tuple(coerce(v, kind) for v, kind in zip(combos[0], kinds))]
        if coerce is not _coerce_key:
            # aligned with the normalized keys: the first combination of each key
            seen: dict = {}
            for k in combos:
                nk = tuple(_coerce_key(v, kind) for v, kind in zip(k, kinds))
                if nk not in seen:
                    seen[nk] = tuple(coerce(v, kind) for v, kind in zip(k, kinds))
            return list(seen.values())
        return list(
            dict.fromkeys(tuple(coerce(v, kind) for v, kind in zip(k, kinds)) for k in combos)
        )

    def _rows_dynamic(self, params) -> tuple:
        """LIMIT ?/OFFSET ? without a range: applied at lookup time on the key's rows."""
        cq = self.cq
        reader = self.reader
        if reader.range_col is not None:
            return self._rows_range_keys(params)
        out: list = []
        keys = self._keys(params) if self.key_params else [()]
        for k in keys:
            if _NoMatch in k:
                continue
            if not reader.holds(k):
                self.entry.misses += 1
            else:
                self.entry.hits += 1
            out.extend(reader.all_rows(k))
        if cq.order:
            out.sort(key=self._order_key)
        if cq.merge_distinct:
            out = _distinct_visible(out, cq.visible)
        offset, limit = self._page(params)
        if offset or limit is not None:
            out = out[offset : None if limit is None else offset + limit]
        vis = cq.visible
        return tuple(r[:vis] for r in out)

    # --- range parameters (issue 8): reads of a RangeReader ------------------------------------
    def _init_range(self) -> None:
        """Set up reads of a query with range parameters. A read computes the interval of its
        range parameters (``dataflow/intervals.py``) and how many rows it needs when the answer
        is ordered by the range column with a LIMIT; a single-key read is served without the
        lock from the key's ``RangeSnapshot`` when that holds the range, else under the lock by
        ``RangeReader.read``, which upqueries the missing ranges."""
        cq = self.cq
        same = self.reader.range_aliases  # the range column and its visible copies
        order = cq.order
        self._post = post = cq.post
        if post is not None:
            # an aggregate or DISTINCT over the range (``dataflow/post_lookup.py``): a read
            # takes every row of its range and the answer is computed from them
            same = ()
        # the answer is ordered by the range column first: only its first (last) rows matter
        self._lead_desc = order[0][1] if order and order[0][0] in same else None
        # the answer is in the reader's order (by the range column; rows with equal values are
        # sorted by the ORDER BY when a read meets some)
        self._range_sorted = post is None and (
            not order or (len(order) == 1 and self._lead_desc is False)
        )
        self._range_desc = len(order) == 1 and self._lead_desc is True
        self._rc = self.reader.range_col
        self._visible = cq.visible if post is None else None  # post: the reader's whole rows
        # per range parameter: its position and the side of its value the cut lies on
        # (``dataflow/intervals.py``: ``> v`` starts above v, ``>= v`` below it, ...)
        self._lower = [(i, 1 if op == ">" else 0) for op, i in cq.range_ops if op[0] == ">"]
        self._upper = [(i, 1 if op == "<=" else 0) for op, i in cq.range_ops if op[0] == "<"]
        self._int_range = cq.range_kind == V.INT
        if cq.offset_param is None and cq.limit_param is None:
            self._page = lambda params, page=(cq.offset, cq.limit): page
        # ``col LIKE ?`` on the range column: a prefix range, then the pattern (like_reads.py)
        self._like = [(i, op[1]) for op, i in cq.range_ops if op.__class__ is tuple]
        if self._like:
            from .like_reads import like_rows

            if not cq.multi_key:
                self.simple = True  # lock-free from the key's snapshot when it holds the range
            self.rows = lambda params: like_rows(self, params)
            return
        if not cq.multi_key:
            # the cursor's (and the server's) fast path calls ``rows`` without the lock
            self.simple = True
            self.rows = self._fast_range_rows() or self._rows_range
        else:
            # ``_range_locked`` takes the lock itself, and with domain threads waits without it
            self.rows = self._rows_range_keys

    def _fast_range_rows(self):
        """``_rows_range`` specialised, as a closure over its constants, for the common shape:
        integer bounds on an integer column (at most one lower and one upper), no LIMIT ?/OFFSET
        ?, answer in range order or unordered, no bounded fill. Anything else it meets at run
        time (a missing snapshot, a non-integer parameter) goes to ``_rows_range``. None when
        the query has another shape."""
        cq = self.cq
        if not (
            self._int_range
            and cq.post is None
            and cq.offset_param is None
            and cq.limit_param is None
            and self._range_sorted
            and (cq.limit is None or self._lead_desc is None)
            and len(self._lower) <= 1
            and len(self._upper) <= 1
        ):
            return None
        published = self._published
        keyf = self._key
        slow = self._rows_range
        entry = self.entry
        vis = self._visible
        ordered = bool(cq.order)
        li, ls = self._lower[0] if self._lower else (None, 0)
        ui, us = self._upper[0] if self._upper else (None, 0)
        start, stop = cq.offset, None if cq.limit is None else cq.offset + cq.limit
        touch = self._touch_range if self._evictor is not None else None

        def rows(params):
            snap = published.get(keyf(params))
            if snap is None or (ordered and snap.ties):
                return slow(params)
            block = snap.single  # most keys are one block of rows
            if block is None:
                return slow(params)
            vals = block.vals
            if li is not None:
                a = params[li]
                if a.__class__ is not int:
                    return slow(params)
                a += ls
                i = bisect_left(vals, a)
            else:
                i = 0
            if ui is not None:
                b = params[ui]
                if b.__class__ is not int:
                    return slow(params)
                b += us
                j = bisect_left(vals, b)
            else:
                j = len(vals)
            if not snap.whole:  # is the whole interval filled? (RangeSnapshot.covers)
                lo = (1, a, 0) if li is not None else BOTTOM
                hi = (1, b, 0) if ui is not None else TOP
                k = bisect_right(snap.los, lo) - 1
                if k < 0 or snap.his[k] < hi or not lo < snap.his[k]:
                    return slow(params)
            entry.hits += 1
            if touch is not None:
                touch(
                    keyf(params),
                    (1, a, 0) if li is not None else BOTTOM,
                    (1, b, 0) if ui is not None else TOP,
                )
            p = block.proj
            out = (snap.projected(block, vis) if p is None or p[0] != vis else p[1])[i:j]
            if stop is not None or start:
                return out[start:stop]
            return out

        return rows

    def _int_interval(self, params):
        """``_interval`` of integer parameters on an integer column, the common case: every
        cut is ``below(v)`` (``> v`` is ``>= v + 1``, ``<= v`` is ``< v + 1``)."""
        lo = BOTTOM
        hi = TOP
        for idx, side in self._lower:
            v = params[idx]
            if v.__class__ is not int:
                return self._interval(params)
            c = (1, v + side, 0)
            if c > lo:
                lo = c
        for idx, side in self._upper:
            v = params[idx]
            if v.__class__ is not int:
                return self._interval(params)
            c = (1, v + side, 0)
            if c < hi:
                hi = c
        return lo, hi

    def _interval(self, params):
        """The ``[lo, hi)`` cuts of the range parameters (``interval_of``, written out for
        speed); None when one is NULL."""
        kind = self.cq.range_kind
        if kind.__class__ is V.MemberKind:
            kind = kind.for_range()  # a number against it is a position: refused
        ints = kind == V.INT
        lo = BOTTOM
        hi = TOP
        dates = kind in (V.DATE, V.DATETIME)

        def cut(v, side):
            if v.__class__ is int and ints:
                return (1, v, side)
            c = _date_cut(v, kind, side) if dates else None
            if c is None:
                v = _coerce_key(v, kind)
                c = None if v is _NoMatch else (1, v, side)
            return c

        for idx, side in self._lower:
            c = cut(params[idx], side)
            if c is None:
                return None
            if c > lo:
                lo = c
        for idx, side in self._upper:
            c = cut(params[idx], side)
            if c is None:
                return None
            if c < hi:
                hi = c
        if ints:
            return int_cut(lo), int_cut(hi)
        return lo, hi

    def _page(self, params) -> tuple:
        """(offset, limit) of this read, LIMIT ?/OFFSET ? parameters applied."""
        cq = self.cq
        offset = cq.offset
        limit = cq.limit
        if cq.offset_param is not None:
            offset = _int_param(params[cq.offset_param], "OFFSET")
        if cq.limit_param is not None:
            limit = _int_param(params[cq.limit_param], "LIMIT")
        return offset, limit

    def _rows_range(self, params) -> tuple:
        """A range read of one key: lock-free from the key's snapshot when it holds the range."""
        key = self._key(params)
        iv = self._int_interval(params) if self._int_range else self._interval(params)
        offset, limit = self._page(params)
        if iv is None or _NoMatch in key or limit == 0 or not iv[0] < iv[1]:
            self.entry.hits += 1
            return self._range_finish([], offset, limit, False) if self._post else ()
        lo, hi = iv
        desc = self._lead_desc
        need = None if limit is None or desc is None else offset + limit
        snap = self._published.get(key)
        if snap is not None:
            if self._range_sorted and not (snap.ties and self.cq.order):
                out = snap.window(lo, hi, need, desc, self._visible)
                if out is not None:
                    self.entry.hits += 1
                    if self._evictor is not None:
                        self._touch_range(key, lo, hi)
                    if offset or limit is not None:
                        out = out[offset : None if limit is None else offset + limit]
                    return tuple(out)
            else:
                post = self._post
                if post is not None:
                    # the answer computed from this very snapshot for this range, if any
                    memo = post.memo.get((key, lo, hi))
                    if memo is not None and memo[0] is snap:
                        self.entry.hits += 1
                        if self._evictor is not None:
                            self._touch_range(key, lo, hi)
                        return self._page_visible(memo[1], offset, limit)
                out = snap.window(lo, hi, need, desc)
                if out is not None:
                    self.entry.hits += 1
                    if self._evictor is not None:
                        self._touch_range(key, lo, hi)
                    if post is None:
                        return self._range_finish(out, offset, limit, False)
                    answer = self._post_answer(out)
                    post.remember((key, lo, hi), snap, answer)
                    return self._page_visible(answer, offset, limit)
        return self._range_locked([key], lo, hi, need, offset, limit)

    def _touch_range(self, key, lo, hi) -> None:
        """Mark the pieces a lock-free range hit read as recently used (skipped, as for plain
        hits, when the engine is busy)."""
        lock = self.reader.graph.lock
        if lock.acquire(blocking=False):
            try:
                self.reader.touch_range(self._evictor, key, lo, hi)
            finally:
                lock.release()

    def _rows_range_keys(self, params) -> tuple:
        """A range read of several keys (``a IN (?, ?) AND b < ?``), under the lock."""
        iv = self._int_interval(params) if self._int_range else self._interval(params)
        offset, limit = self._page(params)
        if iv is None or limit == 0 or not iv[0] < iv[1]:
            self.entry.hits += 1
            return self._range_finish([], offset, limit, False) if self._post else ()
        desc = self._lead_desc
        need = None if limit is None or desc is None else offset + limit
        keys = [k for k in self._keys(params) if _NoMatch not in k]
        return self._range_locked(keys, iv[0], iv[1], need, offset, limit)

    def _range_locked(self, keys, lo, hi, need, offset, limit, keep=None) -> tuple:
        """A range read that may fill: under the engine lock, or, with a thread per domain, on
        the reader's domain (which alone changes its state: it fills what the read misses by
        ranged upqueries sent as messages and collects the rows, while this thread waits without
        the engine lock)."""
        reader = self.reader
        graph = reader.graph
        rt = graph.runtime
        desc = bool(self._lead_desc)
        if rt is not None and rt.threaded:
            out, hit = self._range_read(
                keys, lambda k: rt.read_range(reader, k, lo, hi, need, desc)
            )
        else:

            def read(k):
                before = reader.upqueries
                rows = reader.read(k, lo, hi, need, desc)
                return rows, reader.upqueries != before

            with graph.lock:
                graph.sync()
                out, hit = self._range_read(keys, read)
        # after the hold: the policy ignores uses while eviction is held
        ev = graph.evictor
        if ev is not None and reader.partial:
            for k in hit:
                reader.touch_range(ev, k, lo, hi)
        return self._range_finish(out, offset, limit, len(keys) > 1, keep)

    def _range_read(self, keys, read) -> tuple[list, list]:
        """Rows of every key by ``read(key) -> (rows, upqueried)``, with no eviction meanwhile;
        counts hits and misses; returns the rows and the keys that were hits."""
        out: list = []
        hit = []
        with holding(self.reader.graph.evictor):
            for k in keys:
                rows, asked = read(k)
                out.extend(rows)
                if asked:
                    self.entry.misses += 1
                else:
                    self.entry.hits += 1
                    hit.append(k)
        return out, hit

    def _range_finish(self, rows: list, offset: int, limit, merged: bool, keep=None) -> tuple:
        """Order (when the reader's order is not the answer's), OFFSET/LIMIT, hidden columns;
        first, for an aggregate or DISTINCT over the range, the answer from the range's rows
        (those ``keep`` keeps, when given)."""
        if keep is not None:
            rows = [r for r in rows if keep(r)]
        order = self.cq.order
        if self._post is not None:
            return self._page_visible(self._post_answer(rows), offset, limit)
        if order:
            # rows come in range order, equal values in no particular order
            if merged or not (self._range_sorted or self._range_desc):
                rows.sort(key=self._order_key)
            else:
                if self._range_desc:
                    rows.reverse()
                if has_ties(rows, self._rc):
                    rows.sort(key=self._order_key)  # ties: by the whole row
        return self._page_visible(rows, offset, limit)

    def _post_answer(self, rows) -> list:
        """The aggregate, HAVING, select list and DISTINCT of a range read applied to the rows
        of its range (``dataflow/post_lookup.py``), in the answer's ORDER BY order."""
        rows = self._post.apply(rows)
        if self.cq.order:
            rows.sort(key=self._order_key)
        return rows

    def _page_visible(self, rows, offset: int, limit) -> tuple:
        """OFFSET/LIMIT, then the visible columns."""
        if offset or limit is not None:
            rows = rows[offset : None if limit is None else offset + limit]
        vis = self.cq.visible
        return tuple([r[:vis] for r in rows])

    def _rows_general(self, params):
        graph = self.reader.graph
        with graph.lock:
            graph.sync()
            with holding(graph.evictor):
                return self._rows_general_locked(params)

    def _rows_general_locked(self, params):
        cq = self.cq
        if self.dynamic:
            return self._rows_dynamic(params)
        reader = self.reader
        keys = self._keys(params)
        out: list = []
        raw = None
        batch = ()
        if len(keys) > 1 and reader.partial and reader.graph.runtime is None:
            missing = [k for k in keys if _NoMatch not in k and not reader.holds(k)]
            if len(missing) > 1:
                batch = self._fill_many(missing)
        for n, k in enumerate(keys):
            rows = reader.published.get(k)
            if rows is None:
                rows = self._miss(k)
            elif k not in batch:
                self.entry.hits += 1
            if not rows and cq.default_fn is not None:
                if raw is None:  # the values as given (a string key holds its collation key)
                    raw = self._keys(params, _coerce_key_raw)
                rk = raw[n] if n < len(raw) else k
                rows = cq.default_fn(tuple(None if v is _NoMatch else v for v in rk), _NoMatch in k)
                if reader.offset or reader.limit is not None:
                    stop = None if reader.limit is None else reader.offset + reader.limit
                    rows = rows[reader.offset : stop]
            if rows:
                out.extend(rows)
        if len(keys) > 1:
            if cq.merge_distinct:
                out = _distinct_visible(out, cq.visible)
            if cq.merge_order is not None:
                out.sort(key=cq.merge_order)
            if cq.merge_limit is not None:
                off, lim = cq.merge_limit
                out = out[off : None if lim is None else off + lim]
            if len(out) and len(out[0]) != cq.visible:
                out = [r[: cq.visible] for r in out]
        elif cq.merge_limit is not None:
            off, lim = cq.merge_limit
            out = out[off : None if lim is None else off + lim]
            if out and len(out[0]) != cq.visible:
                out = [r[: cq.visible] for r in out]
        return tuple(out)

    def run(self, engine: Engine, params) -> Result:
        w = engine._writer
        if w is not None:
            if w is engine._cur:
                if engine.reads_own_writes(w, self):
                    return self.in_storage(engine).run(engine, params)
            elif not engine.storage.committed_reads:
                raise E.LockWait()  # a fill would read the other transaction's rows
        rows = self.rows(params)
        res = Result(
            self.columns, rows, self.column_types, self.nullable, len(rows), None, "cached"
        )
        res.float_columns = self.float_columns
        return res

    def compared_kinds(self) -> dict[int, str]:
        out = {}
        for ps, kind in zip(self.key_params, self.key_kinds):
            for i in ps:
                out[i] = kind
        kind = self.cq.range_kind
        for op, i in self.cq.range_ops:
            if op.__class__ is tuple:
                out[i] = LIKE_PATTERN  # col LIKE ?
            elif kind == V.STR and kind.__class__ is not V.MemberKind:
                out[i] = kind  # a range over a string column: a number compares as numbers
        return out

    def in_storage(self, engine: Engine) -> Prepared:
        """The same query answered by base storage (for a transaction's own writes)."""
        twin = self._twin
        if twin is None:
            text = self.text or self.entry.sql
            ast, nparams = parse(text)
            # a text qualified for another database than home spells its parameters :p0, ...
            nparams = max(nparams, _count_params(ast))
            twin = engine._proxy(ast, nparams, text, entry=self.entry)
            if twin.param_count != self.param_count:  # pragma: no cover - same text, same count
                raise E.InternalError("a query's storage form takes other parameters")
            self._twin = twin
        return twin


def _distinct_visible(rows: list, visible: int) -> list:
    """Rows from several keys of a DISTINCT query, duplicates (on visible columns) removed."""
    seen = set()
    out = []
    for r in rows:
        v = r[:visible]
        if v not in seen:
            seen.add(v)
            out.append(r)
    return out


def _int_param(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        raise E.ProgrammingError(f"{what} needs a non-negative integer", 1210, "HY000")
    try:
        n = int(v)
    except ValueError:
        raise E.ProgrammingError(f"{what} needs a non-negative integer", 1210, "HY000") from None
    if n < 0:
        raise E.ProgrammingError(f"{what} needs a non-negative integer", 1210, "HY000")
    return n


def _date_cut(v, kind, side: int):
    """The cut of a string bound of a DATE or DATETIME range that is not the column's own
    kind of value, as MySQL compares it: a datetime against a DATE as a datetime (the DATE
    at midnight), a valid date followed by other characters as that date, a date with zero
    parts ('2024-00-00') just below the first date after it, anything else as the zero date,
    below every date. None when ``v`` is a plain value of the column's kind."""
    if not isinstance(v, str):
        return None
    if (V.parse_datetime(v) if kind == V.DATETIME else V.parse_date(v)) is not None:
        return None
    from ..sql.functions.coerce import to_datetime
    from ..sql.functions.temporal import _ymd

    d = to_datetime(v)
    if d is not None:  # read up to the characters after a valid date
        if kind == V.DATE and (d.hour or d.minute or d.second or d.microsecond):
            return (1, d.date(), 1)  # a DATE compares as midnight: below any later time
        return (1, d if kind == V.DATETIME else d.date(), side)
    r = _ymd(v)
    if r is None or r[0] < 1:
        return BOTTOM
    y, mo, d = r
    first = _dt.date(y, mo or 1, d or 1)  # the first valid date after it
    return (1, first if kind == V.DATE else _dt.datetime(y, mo or 1, d or 1), 0)


def _coerce_key(v, kind):
    """A parameter as a reader key: brought to its column's kind, a string as its collation key
    (``dataflow/partial.py``)."""
    v = _coerce_key_raw(v, kind)
    return ck(v) if isinstance(v, str) else v


def _coerce_key_raw(v, kind):
    """Bring a parameter to the kind of the column it is compared with, as MySQL compares."""
    if v is None:
        return _NoMatch
    if not isinstance(v, _PARAM_TYPES):
        check_params((v,))
    if kind == V.INT:
        if type(v) is int:
            return v
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float):
            return int(v) if v.is_integer() else v
        if isinstance(v, Decimal):
            return int(v) if v == v.to_integral_value() else v
        if isinstance(v, str):
            n = V.str_to_number(v)
            if isinstance(n, float) and n.is_integer():
                return int(n)
            return n
        return v
    if kind == V.STR:
        if isinstance(v, str):
            return v
        if kind.__class__ is V.MemberKind and not isinstance(v, bytes):
            member = kind.member_for(v)  # a number is the member at that position
            return _NoMatch if member is None else member
        if isinstance(v, _NUMBER_TYPES):
            raise BindsOtherwise()  # MySQL compares the string column as a number
        return V.format_value(v)
    if kind == V.DECIMAL:
        if isinstance(v, str):
            try:
                return Decimal(v.strip())
            except ArithmeticError:
                from ..sql.functions.coerce import to_decimal

                # as MySQL reads a string as a number: its numeric prefix, else 0
                d = to_decimal(v)
                return _NoMatch if d is None or not d.is_finite() else d
        if isinstance(v, float):
            return Decimal(repr(v))
        return v
    if kind == V.FLOAT:
        try:
            return float(v) if not isinstance(v, str) else float(V.str_to_number(v))
        except (TypeError, ValueError):
            return _NoMatch
    if kind == V.DATETIME and isinstance(v, str):
        return V.parse_datetime(v) or _string_datetime(v) or _NoMatch
    if kind == V.DATE and isinstance(v, str):
        d = V.parse_date(v)
        if d is not None:
            return d
        v = _string_datetime(v)
        if v is None:
            return _NoMatch
    if kind == V.TIME and isinstance(v, (str, bytes)):
        from ..sql.functions.temporal import _read_time

        t = _read_time(v)  # as MySQL reads a string it compares with a TIME: no time is 0
        return _dt.timedelta(0) if t is None else t
    if kind == V.TIME and isinstance(v, _NUMBER_TYPES) and not isinstance(v, bool):
        from ..sql.functions.coerce import to_time

        t = to_time(v)  # a number is HHMMSS (one that is no time matches nothing)
        return _NoMatch if t is None else t
    if kind == V.DATE and isinstance(v, _dt.datetime):
        # a DATE equals a datetime only at midnight (MySQL compares them as datetimes)
        if v.hour or v.minute or v.second or v.microsecond:
            return _NoMatch
        return v.date()
    if kind == V.DATETIME and isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return _dt.datetime(v.year, v.month, v.day)
    return v


def _string_datetime(v: str):
    """A string as MySQL reads it where it wants a datetime ('20200101', a date followed by
    other characters), or None."""
    from ..sql.functions.coerce import to_datetime

    return to_datetime(v)


class _NoMatchType:
    """A key value equal to nothing: `col = NULL` matches no row."""

    def __repr__(self):
        return "NoMatch"


_NoMatch = _NoMatchType()

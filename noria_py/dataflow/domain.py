"""Message-passing execution of the dataflow graph: what a domain does with each message.

The graph's nodes talk only through messages sent along its edges:

- ``delta``: records from a parent (a base write, or an operator's output);
- ``probe``: records dropped or evicted upstream; stateful nodes evict what they may affect;
- ``req``: an upquery travelling up (a child asks its parent for the rows of some keys);
- ``resp``: the answer travelling back down, only along the path the request came up.

A *ranged* request (a range reader's miss, ``ops/reader.py``) also carries the range column and an
interval ``[lo, hi)`` of it (``intervals.py``), with an optional ``limit`` (the first ``limit``
rows from ``lo``, the last from ``hi`` when ``desc``), for one equality key. Base storage answers
it with an indexed range query and says which sub-range ``[lo', hi')`` it answered in full (all of
``[lo, hi)`` without a limit); filters and projections pass it on (a projection maps the
columns); a union asks every parent and answers the smallest sub-range any parent answered; a join
passes it to the side the range comes from and fills the join keys of the rows that come back
(dependent upqueries). The response carries the answered sub-range down; the range reader adds
the rows and marks only that sub-range filled. A delta reaching the reader for a range not (yet)
filled is dropped: the response, sent after it on the same FIFO path, already includes it.

Messages on one edge are delivered in the order they were sent (FIFO channels, as between Noria's
domains); messages on different edges may be delivered in any order. ``scheduler.py`` decides that
order: first-in-first-out for the engine, or an order chosen by hypothesis in tests. Because a
response can now meet deltas that were sent before or after it, the upquery protocol needs the
mechanisms of chapter 4 of the thesis, each of which can be switched off to show that a test
catches its absence (``Dataflow.mechanisms``):

- ``union_buffering``: a union holds the response pieces of one upquery until every parent has
  answered (grouped by upquery and by the path below the union, so chained unions work);
- ``union_fold``: a union folds into a held piece each delta, for the held keys, from a parent
  that has already answered.
- ``dependent_upqueries``: a join that meets a missing join key while processing a response
  discards the response, fills the key on both sides, and re-issues the original request when the
  key is filled (again, if it was evicted meanwhile).
- ``join_fill_buffering``: while a join key is being filled, deltas for it from a side that has
  already answered are folded into that side's pending state.
- ``incongruent_eviction``: a record dropped at a partial state sends a probe downstream so that
  keys filled below by another key evict what the record could have changed (``partial.py``).

A request is carried with its *hops*: the (node, port, columns, keys) of every node it passed, from
the requester up. The response walks the hops back down; each node knows from its own hop what it
had been asked for. Stateful partial nodes on the way (aggregate, distinct, a join asked by its
join key) answer from their own state, filling it first when needed; concurrent requests for one
key are coalesced onto one fill, and a request for many keys is one upquery.
"""

from __future__ import annotations

import itertools

from .intervals import in_interval
from .node import Node
from .ops.aggregate import Aggregate
from .ops.base import BaseTable
from .ops.distinct import Distinct
from .ops.filter import Filter
from .ops.join import Join
from .ops.project import Project
from .ops.reader import RangeReader, Reader
from .ops.union import Union
from .partial import ck_tuple, key_of, matches

MECHANISMS = (
    "union_buffering",
    "union_fold",
    "dependent_upqueries",
    "join_fill_buffering",
    "incongruent_eviction",
)


class Up:
    """One upquery (its identity; the hops travel with each message)."""

    __slots__ = ("id", "origin", "keys")

    def __init__(self, uid: int, origin: Node):
        self.id = uid
        self.origin = origin
        self.keys: list = []  # the keys the origin fills with the answer

    def __repr__(self) -> str:
        return f"<up {self.id} from {self.origin.id}>"


def _keyset(keys) -> set:
    return {ck_tuple(tuple(k)) for k in keys}


def _in_range(batch, rng):
    """The records of ``batch`` whose range column lies in the interval of ``rng``."""
    col, lo, hi = rng[0], rng[1], rng[2]
    return [rec for rec in batch if in_interval(rec[0][col], lo, hi)]


def _select(batch, cols, keys):
    """The records of ``batch`` whose ``cols`` equal one of ``keys``."""
    if len(keys) == 1:
        k = keys[0]
        return [rec for rec in batch if matches(rec[0], cols, k)]
    want = _keyset(keys)
    return [rec for rec in batch if key_of(rec[0], cols) in want]


class _Pending:
    """A key being filled: which upquery fills it, and who waits for it."""

    __slots__ = ("up", "got", "waiters")

    def __init__(self, up):
        self.up = up
        self.got: dict = {}  # join fills: port -> {row: count}
        self.waiters: list = []


class _RangeFill:
    """Ranged upqueries under way for one key of a range reader: their ids, and the reads
    waiting for them to finish (each then looks again at what it misses)."""

    __slots__ = ("ups", "waiters")

    def __init__(self):
        self.ups: set = set()
        self.waiters: list = []


class _Waiter:
    """A continuation run once every key it waits on is filled."""

    __slots__ = ("keys", "run")

    def __init__(self, keys, run):
        self.keys = set(keys)
        self.run = run


class Dataflow:
    """Handles messages for every node of a graph. ``send`` is provided by the scheduler."""

    def __init__(self, graph, scheduler):
        self.graph = graph
        self.scheduler = scheduler
        self.mechanisms = {m: True for m in MECHANISMS}
        self._ids = itertools.count(1)
        self.pending: dict[int, dict] = {}  # node id -> key -> _Pending
        self.buffers: dict[int, dict] = {}  # union id -> group -> buffer
        self.range_fills: dict[int, dict] = {}  # range reader id -> key -> _RangeFill
        self.upqueries = 0
        self.reissued = 0
        self.discarded = 0

    # --- sending --------------------------------------------------------------------------
    def send_down(self, node: Node, kind: str, payload) -> None:
        for child, port in node.children:
            self.scheduler.send(node, child, port, kind, payload)

    def request(self, node: Node, port: int, up, hops, cols, keys, rng=None) -> None:
        """Ask ``node``'s parent on ``port`` for the rows whose ``cols`` equal one of ``keys``
        (and, for a ranged request, ``rng = (col, lo, hi, limit, desc)``, whose ``col`` lies in
        ``[lo, hi)``)."""
        self.upqueries += 1
        self.scheduler.send(node, node.parents[port], port, "req", (up, hops, cols, keys, rng))

    def respond(self, node: Node, up, hops, rows, span=None) -> None:
        """Send an answer down to the hop below; ``span`` is the ``(lo, hi)`` a ranged request
        was answered in full for (None for a plain one)."""
        cid, cport = hops[-1][0], hops[-1][1]
        child = self.graph.nodes.get(cid)
        if child is None:
            return  # the requester was removed meanwhile
        self.scheduler.send(node, child, cport, "resp", (up, hops, rows, span))

    def new_up(self, origin: Node) -> Up:
        return Up(next(self._ids), origin)

    # --- delivery -------------------------------------------------------------------------
    def deliver(self, src: Node, dst: Node, port: int, kind: str, payload) -> None:
        if dst.graph is None or dst.id not in self.graph.nodes:
            return  # removed
        if kind == "delta":
            self._on_delta(dst, port, payload)
        elif kind == "probe":
            out = dst.on_probe(port, payload)
            if out:
                self.send_down(dst, "probe", out)
        elif kind == "req":
            up, hops, cols, keys, rng = payload
            self._on_request(dst, up, hops, cols, keys, rng)
        elif kind == "resp":
            up, hops, rows, span = payload
            self._on_response(dst, port, up, hops, rows, span)
        elif kind == "call":  # work the scheduler runs on this node's domain
            payload()
        elif kind == "read":  # reads that missed at this reader: [(key, on_filled), ...]
            self.read_many(dst, payload)
        else:  # pragma: no cover - programming error
            raise ValueError(kind)

    def _on_delta(self, node: Node, port: int, batch) -> None:
        if isinstance(node, Union) and self.buffers.get(node.id):
            self._fold_union(node, port, batch)
        elif isinstance(node, Join) and self.pending.get(node.id):
            self._fold_join(node, port, batch)
        out = node.on_input(port, batch)
        if out:
            self.send_down(node, "delta", out)

    # --- requests (travelling up) ---------------------------------------------------------
    def _on_request(self, node: Node, up, hops, cols, keys, rng=None) -> None:
        cols = tuple(cols)
        keys = [tuple(k) for k in keys]
        if isinstance(node, BaseTable):
            if rng is not None:
                # an indexed range query, for the one key a ranged request carries
                if len(keys) != 1:  # pragma: no cover - readers ask one key at a time
                    raise RuntimeError("a ranged upquery asks for one key")
                col, lo, hi, limit, desc = rng
                rows, lo, hi = node.query_range(cols, keys[0], col, lo, hi, limit, desc)
                self.respond(node, up, hops, rows, (lo, hi))
                return
            rows = []
            lookup = node.storage.lookup
            for k in dict.fromkeys(keys):
                rows.extend((r, 1) for r in lookup(node.table, list(cols), k))
            self.respond(node, up, hops, rows)
            return
        if node.materialization != "none" and not node.partial:
            # full state answers from itself, at its own position in the stream (a ranged
            # request: all of its range, whatever the limit)
            rows = _select(node.contents(), cols, keys)
            if rng is None:
                self.respond(node, up, hops, rows)
            else:
                self.respond(node, up, hops, _in_range(rows, rng), (rng[1], rng[2]))
            return
        hop = (node.id, 0, cols, tuple(keys))
        if isinstance(node, Filter):
            self.request(node, 0, up, hops + (hop,), cols, keys, rng)
        elif isinstance(node, Project):
            src = node.source_cols
            mapped = tuple(src[c] for c in cols)
            if any(m is None for m in mapped):  # not traceable: the planner made this full
                raise RuntimeError(f"untraceable upquery through {node}")
            if rng is not None:
                if src[rng[0]] is None:  # pragma: no cover - the planner asks plain columns
                    raise RuntimeError(f"untraceable ranged upquery through {node}")
                rng = (src[rng[0]],) + tuple(rng[1:])
            self.request(node, 0, up, hops + (hop,), mapped, keys, rng)
        elif isinstance(node, Union):
            group = (up.id, hops)
            buffers = self.buffers.setdefault(node.id, {})
            if self.mechanisms["union_buffering"]:
                buffers[group] = {
                    "waiting": set(range(len(node.parents))),
                    "rows": [],
                    "cols": cols,
                    "keys": _keyset(keys),
                    "rng": rng,
                    "span": None,  # ranged: the sub-range every parent answered so far
                }
            for port in range(len(node.parents)):
                h = (node.id, port, cols, tuple(keys))
                self.request(node, port, up, hops + (h,), cols, keys, rng)
        elif isinstance(node, Join):
            self._join_request(node, up, hops, cols, keys, rng)
        elif isinstance(node, (Aggregate, Distinct)):
            if rng is not None:  # pragma: no cover - the planner routes none through them
                raise RuntimeError(f"no ranged upquery through {node}")
            self._stateful_request(node, up, hops, cols, keys)
        else:  # pragma: no cover - every operator is handled above
            raise RuntimeError(f"no upquery handling for {node}")

    def _stateful_request(self, node, up, hops, cols, keys) -> None:
        fill = node.fill_cols
        if sorted(cols) != sorted(fill):
            # asked by other columns than the state is filled by: compute the answer from the
            # parent's rows (nothing is filled here; drops here probe the key below)
            if isinstance(node, Aggregate) and not all(c < node.ngroup for c in cols):
                raise RuntimeError(f"untraceable upquery through {node}")
            hop = (node.id, 0, cols, tuple(keys))
            self.request(node, 0, up, hops + (hop,), cols, keys)
            return
        pos = [cols.index(c) for c in fill]
        fks = list(dict.fromkeys(tuple(k[i] for i in pos) for k in keys))

        def answer():
            self.respond(node, up, hops, self._state_rows(node, fks))

        self._need(node, fks, answer)

    def _state_rows(self, node, fks) -> list:
        out = []
        for fk in fks:
            for gk in node.fidx.get(fk, ()):
                if isinstance(node, Aggregate):
                    g = node.groups.get(gk)
                    if g is not None and g.rows > 0:
                        out.append((node._output(gk, g), 1))
                elif node.counts.get(gk, 0) > 0:
                    out.append((node._shown(gk), 1))
        return out

    def _need(self, node, fks, then) -> None:
        """Run ``then`` once every fill key in ``fks`` is filled at ``node`` (filling them)."""
        missing = [fk for fk in fks if fk not in node.filled]
        if not missing:
            then()
            return
        pend = self.pending.setdefault(node.id, {})
        waiter = _Waiter(missing, then)
        start = []
        for fk in missing:
            p = pend.get(fk)
            if p is None:
                p = pend[fk] = _Pending(None)
                start.append(fk)
            p.waiters.append(waiter)
        if start:
            self._start_fill(node, start)

    def _start_fill(self, node, fks) -> None:
        up = self.new_up(node)
        up.keys = list(fks)
        pend = self.pending[node.id]
        for fk in fks:
            pend[fk].up = up.id
        if isinstance(node, Join):
            for fk in fks:
                if node._has_null(fk):
                    pend[fk].got[1] = {}  # NULL never matches: nothing to ask
            tuples = [node._tuple(k) for k in fks]
            lk = tuple(node.left_key)
            hop = (node.id, 0, lk, tuple(tuples))
            self.request(node, 0, up, (hop,), lk, tuples)
            rkeys = [t for t, k in zip(tuples, fks) if not node._has_null(k)]
            if rkeys:
                rk = tuple(node.right_key)
                hop = (node.id, 1, rk, tuple(tuples))
                self.request(node, 1, up, (hop,), rk, rkeys)
        else:
            cols = tuple(node.fill_cols)
            hop = (node.id, 0, cols, tuple(fks))
            self.request(node, 0, up, (hop,), cols, fks)

    def _join_request(self, node: Join, up, hops, cols, keys, rng=None) -> None:
        nl = len(node.parents[0].columns)
        for side, jcols, base in ((0, node.left_key, 0), (1, node.right_key, nl)):
            if side == 1 and node.outer:
                break
            want = [c + base for c in jcols]
            if all(c in cols for c in want):
                # asked by the join key: answer from the join's own state, filling it first
                pos = [cols.index(c) for c in want]
                jks = []
                for k in keys:
                    t = tuple(k[i] for i in pos)
                    jks.append(t if node._multi else t[0])
                jks = list(dict.fromkeys(jks))

                def answer(jks=jks):
                    rows = []
                    for jk in jks:
                        rows.extend(_join_output(node, jk))
                    rows = _select(rows, cols, keys)
                    if rng is None:
                        self.respond(node, up, hops, rows)
                    else:  # all of the range, from the join's state
                        self.respond(node, up, hops, _in_range(rows, rng), (rng[1], rng[2]))

                self._need(node, jks, answer)
                return
        if rng is not None:
            # a ranged request goes to the side its columns and range come from (the left one
            # for a left join; plan_upqueries._range_side); the rows that come back get their
            # join keys filled (dependent upqueries) and are joined with the other side
            col = rng[0]
            if col < nl and all(c < nl for c in cols):
                port, shift = 0, 0
            elif not node.outer and col >= nl and all(c >= nl for c in cols):
                port, shift = 1, nl
            else:  # pragma: no cover - range_traceable plans none other
                raise RuntimeError(f"untraceable ranged upquery through {node}")
            pcols = tuple(c - shift for c in cols)
            prng = (col - shift,) + tuple(rng[1:])
            hop = (node.id, port, cols, tuple(keys), pcols, tuple(keys), prng)
            self.request(node, port, up, hops + (hop,), pcols, keys, prng)
            return
        lsel = [i for i, c in enumerate(cols) if c < nl]
        rsel = [i for i, c in enumerate(cols) if c >= nl]
        # ask the side the columns trace back through (a column computed above the join, an
        # aggregate's COUNT, cannot be looked up); the join's output is filtered by all of them
        from .plan_upqueries import traceable

        left_ok = bool(lsel) and traceable(node.parents[0], [cols[i] for i in lsel])
        right_ok = (
            bool(rsel)
            and not node.outer
            and traceable(node.parents[1], [cols[i] - nl for i in rsel])
        )
        if lsel and not left_ok and not right_ok:
            # neither side traces every column: ask by the left columns that do trace
            sub = [i for i in lsel if traceable(node.parents[0], [cols[i]])]
            if sub:
                lsel, left_ok = sub, True
        if lsel and (left_ok or not right_ok):
            pcols = tuple(cols[i] for i in lsel)
            port = 0
        elif not node.outer:
            pcols = tuple(cols[i] - nl for i in rsel)
            port = 1
            lsel = rsel
        else:
            raise RuntimeError(f"untraceable upquery through {node}")
        pkeys = list(dict.fromkeys(tuple(k[i] for i in lsel) for k in keys))
        # the hop also records what was asked of the parent, to ask again (dependent upqueries)
        hop = (node.id, port, cols, tuple(keys), pcols, tuple(pkeys), None)
        self.request(node, port, up, hops + (hop,), pcols, pkeys)

    # --- responses (travelling down) ------------------------------------------------------
    def _on_response(self, node: Node, port: int, up, hops, rows, span=None) -> None:
        hop = hops[-1]
        below = hops[:-1]
        if not below and up.origin is node:
            self._fill(node, port, up, rows, span)
            return
        cols, keys = hop[2], hop[3]
        if isinstance(node, Union):
            self._union_response(node, port, up, below, rows, span)
        elif isinstance(node, Join):
            self._join_response(node, port, up, hops, rows, span)
        elif isinstance(node, Aggregate):
            scratch = Aggregate(node.parents[0], node.ngroup, node.aggs, node.columns, node.kinds)
            scratch.groups = {}
            scratch._apply(rows)
            self.respond(node, up, below, _select(scratch.contents(), cols, keys))
        elif isinstance(node, Distinct):
            bag: dict = {}
            for r, m in rows:
                bag[r] = bag.get(r, 0) + m
            self.respond(node, up, below, [(r, 1) for r, c in bag.items() if c > 0])
        else:  # filter, project: stateless (a range is the same range after them)
            out = node.on_input(port, rows)
            self.respond(node, up, below, out, span)

    def _union_response(self, node, port, up, below, rows, span=None) -> None:
        if not self.mechanisms["union_buffering"]:
            self.respond(node, up, below, rows, span)
            return
        buffers = self.buffers.get(node.id, {})
        buf = buffers.get((up.id, below))
        if buf is None or port not in buf["waiting"]:
            return  # a stale or duplicate piece
        buf["waiting"].discard(port)
        buf["rows"].extend(rows)
        if span is not None:
            # a parent that answered a bounded request in part: the union answers what every
            # parent answered (each piece starts at lo, or ends at hi when descending)
            have = buf["span"]
            buf["span"] = span if have is None else (max(have[0], span[0]), min(have[1], span[1]))
        if not buf["waiting"]:
            del buffers[(up.id, below)]
            span = buf["span"]
            rows = buf["rows"]
            if span is not None:  # drop the rows beyond it (as Union.query_range does)
                rows = _in_range(rows, (buf["rng"][0], span[0], span[1]))
            self.respond(node, up, below, rows, span)

    def _fold_union(self, node, port, batch) -> None:
        if not self.mechanisms["union_fold"]:
            return
        for buf in self.buffers[node.id].values():
            if port in buf["waiting"]:
                continue  # that parent's answer, still to come, includes this delta
            cols, want, rng = buf["cols"], buf["keys"], buf["rng"]
            for rec in batch:
                if key_of(rec[0], cols) in want and (
                    rng is None or in_interval(rec[0][rng[0]], rng[1], rng[2])
                ):
                    buf["rows"].append(rec)

    def _join_response(self, node: Join, port, up, hops, rows, span=None) -> None:
        hop = hops[-1]
        cols, keys = hop[2], hop[3]
        keyf = node._lk if port == 0 else node._rk
        if node.partial:
            missing = []
            # a NULL key matches nothing, but a left join's left rows with it are still kept
            # (and padded) per key, so only an inner join can skip it
            skip_null = not (node.outer and port == 0)
            for r, _m in rows:
                jk = keyf(r)
                if skip_null and node._has_null(jk):
                    continue
                if jk not in node.filled:
                    missing.append(jk)
            if missing and self.mechanisms["dependent_upqueries"]:
                # discard the response, fill the join keys, then ask again
                self.discarded += 1
                missing = list(dict.fromkeys(missing))
                # what this join asked its parent
                pcols, pkeys, prng = hop[4], list(hop[5]), hop[6]

                def reissue():
                    self.reissued += 1
                    self.request(node, port, up, hops, pcols, pkeys, prng)

                self._need(node, missing, reissue)
                return
        out = []
        if port == 0:
            rstate = node.right_state
            for r, m in rows:
                jk = keyf(r)
                others = rstate.get(jk) if not node._has_null(jk) else None
                if others:
                    for rr, rc in others.items():
                        out.append((r + rr, m * rc))
                elif node.outer:
                    out.append((r + node.pad, m))
        else:
            lstate = node.left_state
            for r, m in rows:
                jk = keyf(r)
                if node._has_null(jk):
                    continue
                for lr, lc in lstate.get(jk, {}).items():
                    out.append((lr + r, m * lc))
        # a ranged answer keeps its sub-range: the other side adds matches, it cuts no rows
        self.respond(node, up, hops[:-1], _select(out, cols, list(keys)), span)

    def _fold_join(self, node: Join, port, batch) -> None:
        if not self.mechanisms["join_fill_buffering"]:
            return
        pend = self.pending[node.id]
        keyf = node._lk if port == 0 else node._rk
        for row, m in batch:
            jk = keyf(row)
            p = pend.get(jk)
            if p is None:
                continue
            bag = p.got.get(port)
            if bag is None:
                continue  # that side's answer, still to come, includes this delta
            c = bag.get(row, 0) + m
            if c:
                bag[row] = c
            else:
                bag.pop(row, None)

    # --- fills (a response reached the node that asked) -----------------------------------
    def _fill(self, node: Node, port: int, up, rows, span=None) -> None:
        if isinstance(node, RangeReader):
            self._fill_range_reader(node, up, rows, span)
            return
        if isinstance(node, Reader):
            self._fill_reader(node, up, rows)
            return
        pend = self.pending.get(node.id, {})
        if isinstance(node, Join):
            keyf = node._lk if port == 0 else node._rk
            bags: dict = {}
            for r, m in rows:
                k = keyf(r)
                b = bags.get(k)
                if b is None:
                    b = bags[k] = {}
                b[r] = b.get(r, 0) + m
            done = []
            for jk in up.keys:
                p = pend.get(jk)
                if p is None or p.up != up.id or port in p.got:
                    continue
                p.got[port] = {r: c for r, c in bags.get(jk, {}).items() if c}
                if len(p.got) == 2:
                    done.append(jk)
            for jk in done:
                p = pend.pop(jk)
                if p.got[0]:
                    node.left_state[jk] = p.got[0]
                else:
                    node.left_state.pop(jk, None)
                if p.got[1]:
                    node.right_state[jk] = p.got[1]
                else:
                    node.right_state.pop(jk, None)
                node.filled.add(jk)
                self._wake(p, jk)
                self.graph.filled(node, jk, len(p.got[0]) + len(p.got[1]))
            return
        # aggregate / distinct
        fks = [fk for fk in up.keys if fk in pend and pend[fk].up == up.id]
        if not fks:
            return
        if len(fks) == len(up.keys):
            mine = rows  # the parent answered exactly these keys
        else:
            want = set(fks)
            mine = [rec for rec in rows if node._fkey(rec[0]) in want]
        for fk in fks:
            node.filled.add(fk)
            node.fidx.setdefault(fk, set())
        if isinstance(node, Aggregate):
            node._apply(mine)
        else:
            for r, m in mine:
                node._count(r, m)
        for fk in fks:
            p = pend.pop(fk)
            self._wake(p, fk)
            self.graph.filled(node, fk, len(node.fidx.get(fk, ())))

    def _wake(self, p: _Pending, key) -> None:
        for w in p.waiters:
            w.keys.discard(key)
            if not w.keys:
                w.run()

    def read(self, reader: Reader, key: tuple, on_filled) -> None:
        """A read missed ``key``: upquery it (coalesced with a fill already under way)."""
        self.read_many(reader, [(key, on_filled)])

    def read_many(self, reader: Reader, reads) -> None:
        """Reads that missed, as (key, on_filled): one upquery for every key not already being
        filled; a key already on its way gets one more waiter."""
        pend = self.pending.setdefault(reader.id, {})
        new = []
        for key, on_filled in reads:
            p = pend.get(key)
            if p is None:
                if key in reader.published:  # filled since the read missed
                    on_filled()
                    continue
                p = pend[key] = _Pending(None)
                new.append(key)
            p.waiters.append(_Waiter([key], on_filled))
        if not new:
            return
        up = self.new_up(reader)
        up.keys = new
        for key in new:
            pend[key].up = up.id
        cols = tuple(reader.key_cols)
        self.request(reader, 0, up, ((reader.id, 0, cols, tuple(new)),), cols, new)

    def _fill_reader(self, reader: Reader, up, rows) -> None:
        pend = self.pending.get(reader.id, {})
        keys = [k for k in up.keys if k in pend and pend[k].up == up.id]
        for key in keys:
            p = pend.pop(key)
            if key in reader.published:  # pragma: no cover - only a fill publishes a key
                self._wake(p, key)
                continue
            if len(up.keys) == 1:
                mine = rows
            else:
                mine = [rec for rec in rows if reader._key(rec[0]) == key]
            reader.state[key] = {} if reader._sort_key is None else _sorted(reader)
            reader._apply(mine, fill_key=key)
            self._wake(p, key)
            self.graph.filled(reader, key, len(reader.state.get(key, ())))

    # --- range reads -----------------------------------------------------------------------
    def read_range(self, reader: RangeReader, key, lo, hi, need, desc, done) -> None:
        """A read of ``[lo, hi)`` of ``key`` at a range reader (``RangeReader.read``), run on the
        reader's domain: fill what it misses by ranged upqueries (a whole-key upquery when the
        reader's path has no ranged ones), then call ``done(rows, upqueried)``.

        One fill per key is under way at a time: a read that finds one waits for it and then
        looks again at what it misses, so two reads of overlapping ranges never ask for the same
        rows twice (each answered range is added once, to a range that was not filled)."""
        asked = []

        def step():
            fills = self.range_fills.setdefault(reader.id, {})
            f = fills.get(key)
            if f is not None:
                f.waiters.append(step)
                return
            if reader.partial and reader.graph is not None:
                if reader.ranged:
                    gaps = reader.wanted(key, lo, hi, need, desc)
                else:
                    gaps = [] if key in reader.filled else [None]  # None: the whole key
                if gaps:
                    asked.append(True)
                    self._range_fill(reader, key, gaps, desc, step)
                    return
            done(reader.collect(key, lo, hi, need, desc), bool(asked))

        step()

    def _range_fill(self, reader: RangeReader, key, gaps, desc, then) -> None:
        f = _RangeFill()
        f.waiters.append(then)
        self.range_fills[reader.id][key] = f
        ups = []
        for gap in gaps:  # registered before any is sent: an inline scheduler answers at once
            up = self.new_up(reader)
            up.keys = [key]
            f.ups.add(up.id)
            ups.append((up, gap))
        cols = tuple(reader.key_cols)
        hops = ((reader.id, 0, cols, (key,)),)
        for up, gap in ups:
            if gap is None:
                self.request(reader, 0, up, hops, cols, [key])
            else:
                glo, ghi, limit = gap
                rng = (reader.range_col, glo, ghi, limit, desc)
                self.request(reader, 0, up, hops, cols, [key], rng)

    def _fill_range_reader(self, reader: RangeReader, up, rows, span) -> None:
        key = up.keys[0]
        fills = self.range_fills.get(reader.id, {})
        f = fills.get(key)
        if f is None or up.id not in f.ups:
            return  # a stale or duplicate answer
        f.ups.discard(up.id)
        if reader.partial:  # (not made full meanwhile)
            if span is None:
                reader.fill_whole(key, rows)
            else:
                reader.add_piece(key, rows, span[0], span[1])
        if not f.ups:
            del fills[key]
            for w in f.waiters:
                w()


def _sorted(reader):
    from sortedcontainers import SortedKeyList

    return SortedKeyList(key=reader._sort_key)


def _join_output(node: Join, jk) -> list:
    out = []
    lefts = node.left_state.get(jk, {})
    rights = node.right_state.get(jk) if not node._has_null(jk) else None
    for lr, lc in lefts.items():
        if rights:
            for rr, rc in rights.items():
                out.append((lr + rr, lc * rc))
        elif node.outer:
            out.append((lr + node.pad, lc))
    return out


# --- domain assignment --------------------------------------------------------------------------


def assign_domains(graph, new_nodes) -> None:
    """Give each new node a domain, after Noria's heuristics.

    Base tables share domain 0 (base storage, where writes enter). A reader gets a domain of its
    own. A boundary before an aggregation (or a distinct) is cheap, since only its small output
    crosses it, so each starts a new domain; a boundary before a join would need a copy of the
    other side's state, so a join stays in its parents' domain (the left one's when they differ;
    this join keeps its own copy of each input anyway, so it never reads across the boundary).
    Filters, projections and unions stay with their parent. A node directly below base storage
    starts a new domain, so domain 0 does nothing but storage.
    """
    new = {id(n) for n in new_nodes}
    order = [graph.nodes[n] for n in _topo(graph) if id(graph.nodes[n]) in new]
    next_id = max((n.domain for n in graph.nodes.values() if id(n) not in new), default=0) + 1
    top = None  # the domain of this query's nodes that read base storage directly
    for node in order:
        if isinstance(node, BaseTable):
            node.domain = 0
            continue
        inherited = [p.domain for p in node.parents if p.domain != 0]
        if isinstance(node, (Reader, Aggregate, Distinct)):
            node.domain = next_id
            next_id += 1
        elif inherited:
            node.domain = inherited[0]
        else:
            if top is None:
                top = next_id
                next_id += 1
            node.domain = top


def _topo(graph):
    import networkx as nx

    return nx.topological_sort(graph.nx)

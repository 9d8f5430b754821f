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

What each operator does with a message is its own part of the operator contract (``node.py``:
``on_request``, ``on_response``, ``on_fill``, ``request_fill``, ``fold_held``, ``placement``);
this module keeps what every node shares: delivery, the hops, the fills under way and their
waiters (``need``, ``answered``, ``done``), the union buffers, and reads that miss.
"""

from __future__ import annotations

import itertools

from .intervals import in_interval
from .node import NONE, Node
from .ops.base import Delta
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


def keyset(keys) -> set:
    """Upquery keys as a set of normalized tuples (strings as collation keys)."""
    return {ck_tuple(tuple(k)) for k in keys}


def in_range(batch, rng):
    """The records of ``batch`` whose range column lies in the interval of ``rng``."""
    col, lo, hi = rng[0], rng[1], rng[2]
    return [rec for rec in batch if in_interval(rec[0][col], lo, hi)]


def select(batch, cols, keys):
    """The records of ``batch`` whose ``cols`` equal one of ``keys``."""
    if len(keys) == 1:
        k = keys[0]
        return [rec for rec in batch if matches(rec[0], cols, k)]
    want = keyset(keys)
    return [rec for rec in batch if key_of(rec[0], cols) in want]


class Pending:
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
    """Handles messages for every node of a graph. ``send`` is provided by the scheduler.

    Operators handling a message (``node.py``, the message runtime part of the contract) call
    back: ``request`` and ``respond`` to send, ``need`` to have keys of their state filled
    before going on, ``answered`` and ``done`` when an answer fills them; ``mechanisms`` says
    which of the protocol's mechanisms are on, ``pending`` holds the fills under way per node
    (key -> ``Pending``) and ``buffers`` the response pieces a union holds."""

    def __init__(self, graph, scheduler):
        self.graph = graph
        self.scheduler = scheduler
        self.mechanisms = {m: True for m in MECHANISMS}
        self._ids = itertools.count(1)
        self.pending: dict[int, dict] = {}  # node id -> key -> Pending
        self.fills = 0  # the Pending entries of ``pending`` (fills under way), see ``quiet``
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
        elif kind == "req":
            up, hops, cols, keys, rng = payload
            cols = tuple(cols)
            keys = [tuple(k) for k in keys]
            if dst.materialization != NONE and not dst.partial:
                # full state answers from itself, at its own position in the stream (a ranged
                # request: all of its range, whatever the limit)
                rows = dst.own_rows(cols, keys)
                if rng is None:
                    self.respond(dst, up, hops, rows)
                else:
                    self.respond(dst, up, hops, in_range(rows, rng), (rng[1], rng[2]))
                return
            dst.on_request(self, up, hops, cols, keys, rng)
        elif kind == "resp":
            up, hops, rows, span = payload
            if up.origin is dst and len(hops) == 1:
                dst.on_fill(self, port, up, rows, span)  # the answer to its own upquery
            else:
                dst.on_response(self, port, up, hops, rows, span)
        elif kind == "probe":
            out = dst.on_probe(port, payload)
            if out:
                self.send_down(dst, "probe", out)
        elif kind == "call":  # work the scheduler runs on this node's domain
            payload()
        elif kind == "read":  # reads that missed at this reader: [(key, on_filled), ...]
            self.read_many(dst, payload)
        else:  # pragma: no cover - programming error
            raise ValueError(kind)

    def _on_delta(self, node: Node, port: int, batch) -> None:
        nid = node.id
        if self.buffers.get(nid) or self.pending.get(nid):
            node.fold_held(self, port, batch)  # answers held here must see this delta
        out = node.on_input(port, batch)
        pos = getattr(batch, "pos", None)
        if pos is not None:
            if node.view is not None:
                node.view.update(pos)  # (a node reading base storage as it has received it)
            if out:  # what it reflects goes down with it (lookup joins read by it)
                out = Delta(out)
                out.pos = node.out_pos(pos)
            elif node.gated or (not batch and node.materialization == NONE):
                # a lookup join's gate stopped the delta (or a stateless node passes on such
                # a position): the position alone goes down, so that the states below that
                # read base storage as of their position (``fill_now``) know it has passed
                out = Delta()
                out.pos = node.out_pos(pos)
                node.gated = False
                self.send_down(node, "delta", out)
                return
        if out:
            self.send_down(node, "delta", out)

    # --- fills under way ------------------------------------------------------------------
    def need(self, node: Node, fks, then) -> None:
        """Run ``then`` once every fill key in ``fks`` is filled at ``node`` (``node.filled``):
        the keys not filled nor being filled are asked in one upquery (``node.request_fill``),
        a key being filled already gets one more waiter."""
        filled = node.filled
        missing = [fk for fk in fks if fk not in filled]
        if not missing:
            then()
            return
        pend = self.pending.setdefault(node.id, {})
        busy = missing[0] in pend if len(missing) == 1 else any([fk in pend for fk in missing])
        if not busy and node.fill_now(missing):
            # filled at once, no fill of them under way: no upquery, nothing to wait for
            then()
            graph = self.graph
            for fk in missing:
                graph.filled(node, fk, node.fill_size(fk))
            return
        waiter = _Waiter(missing, then)
        start = []
        for fk in missing:
            p = pend.get(fk)
            if p is None:
                p = pend[fk] = Pending(None)
                self.fills += 1
                start.append(fk)
            p.waiters.append(waiter)
        if start:
            up = self.new_up(node)
            up.keys = list(start)
            for fk in start:
                pend[fk].up = up.id
            node.request_fill(self, up, start)

    def quiet(self) -> bool:
        """No fill is under way anywhere (no upquery, ranged or not, waits for its answer, no
        union holds pieces of one): a state that lacks a key then gets no answer with it
        that a delta still on its way should reach, so a delta of a key every state below
        lacks may stop where it is (``Join._lookup_input``'s gate)."""
        if self.fills:
            return False
        for d in self.range_fills.values():
            if d:
                return False
        for d in self.buffers.values():
            if d:
                return False
        return True

    def answered(self, node: Node, up) -> list:
        """The keys of ``node`` being filled by upquery ``up`` (those it still waits for)."""
        pend = self.pending.get(node.id, {})
        return [k for k in up.keys if k in pend and pend[k].up == up.id]

    def done(self, node: Node, key) -> None:
        """Key ``key`` of ``node`` is filled (its fill under way is over): wake what waited for
        it. The node then reports the key's size (``graph.filled``) for the eviction
        bookkeeping, as its in-process fill does."""
        p = self.pending[node.id].pop(key)
        self.fills -= 1
        for w in p.waiters:
            w.keys.discard(key)
            if not w.keys:
                w.run()

    # --- reads ----------------------------------------------------------------------------
    def read(self, reader, key: tuple, on_filled) -> None:
        """A read missed ``key``: upquery it (coalesced with a fill already under way)."""
        self.read_many(reader, [(key, on_filled)])

    def read_many(self, reader, reads) -> None:
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
                p = pend[key] = Pending(None)
                self.fills += 1
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

    # --- range reads -----------------------------------------------------------------------
    def read_range(self, reader, key, lo, hi, need, desc, done) -> None:
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

    def _range_fill(self, reader, key, gaps, desc, then) -> None:
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

    def range_answered(self, reader, up, add) -> None:
        """An answer to one of the ranged (or whole-key) upqueries ``read_range`` sent for a key
        of range reader ``reader`` arrived (``RangeReader.on_fill``): ``add()`` puts its rows
        into the reader, unless the answer is stale or a duplicate; the reads waiting for the
        key look again once every upquery sent for it has been answered."""
        key = up.keys[0]
        fills = self.range_fills.get(reader.id, {})
        f = fills.get(key)
        if f is None or up.id not in f.ups:
            return  # a stale or duplicate answer
        f.ups.discard(up.id)
        add()
        if not f.ups:
            del fills[key]
            for w in f.waiters:
                w()


# --- domain assignment --------------------------------------------------------------------------


def assign_domains(graph, new_nodes) -> None:
    """Give each new node a domain, after Noria's heuristics.

    Base tables share domain 0 (base storage, where writes enter). A reader gets a domain of its
    own. A boundary before an aggregation (or a distinct) is cheap, since only its small output
    crosses it, so each starts a new domain; a boundary before a join would need a copy of the
    other side's state, so a join stays in its parents' domain (the left one's when they differ;
    this join keeps its own copy of each input anyway, so it never reads across the boundary).
    Filters, projections and unions stay with their parent. A node directly below base storage
    starts a new domain, so domain 0 does nothing but storage. Each node says which of these it
    is (``Node.placement``: "storage", "own" or "inherit").
    """
    new = {id(n) for n in new_nodes}
    order = [graph.nodes[n] for n in _topo(graph) if id(graph.nodes[n]) in new]
    next_id = max((n.domain for n in graph.nodes.values() if id(n) not in new), default=0) + 1
    top = None  # the domain of this query's nodes that read base storage directly
    for node in order:
        placement = node.placement
        if placement == "storage":
            node.domain = 0
            continue
        inherited = [p.domain for p in node.parents if p.domain != 0]
        if placement == "own":
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
    return [n.id for n in graph.topological()]

"""Schedulers: who delivers the dataflow's messages (``domain.py``), and in which order.

- ``InlineScheduler`` delivers every message first-in-first-out, to completion, inside the call
  that sent it (a write, or a read that missed). Deterministic; what ``connect(upqueries=
  "messages")`` uses.
- ``ThreadScheduler`` runs every domain on a thread of its own.

The tests add one that only queues messages and lets the test pick what is delivered next
(``tests/interleave/scheduling.py``).

A scheduler attaches to a graph (``graph.runtime``): base writes (``Graph.propagate``), probes
(``Graph.probe``) and reader misses (``Reader.fill``, and ``RangeReader.read`` through
``read_range``: ranged upqueries) then go through messages.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from .domain import Dataflow
from .ops.base import Delta


class ReaderGone(Exception):
    """A read made without the engine lock (the lock-free read paths) found its reader removed
    from the graph (a catalog rebuild after another process's DDL, a dropped query) before its
    upquery could answer: the caller plans the statement again, under the lock."""


class Scheduler:
    """What every scheduler shares: the graph's ``Dataflow`` (which handles each message and
    sends the next through ``send(src, dst, port, kind, payload)``, the one method a scheduler
    must provide) and attaching to the graph as its runtime. Reads that miss arrive as
    ``read(reader, key)`` and ``read_range(reader, key, lo, hi, need, desc)``."""

    threaded = False

    def __init__(self, graph):
        self.graph = graph
        self.dataflow = Dataflow(graph, self)
        self.delivered = 0

    def attach(self) -> Scheduler:
        if self.threaded and self.graph.lookup_count:
            # a lookup join on a domain thread would read base storage while a transaction
            # holds it (and its uncommitted rows): domain threads keep copying joins
            raise RuntimeError("domain threads over lookup joins: connect(lookup_joins=False)")
        if self.threaded:
            self.graph.lookup_joins = False
        self.graph.settle_readers()  # (a runtime's reads take the published rows as they are)
        self.graph.runtime = self
        return self

    def detach(self) -> None:
        if self.graph.runtime is self:
            self.graph.runtime = None

    def inject(self, base, batch) -> None:
        """A base-table write, already applied to base storage, enters the dataflow."""
        self.inject_all([(base, batch)])

    def inject_all(self, pairs: list) -> None:
        """Base-table writes (``(base node, batch)``, all in base storage already) enter the
        dataflow, in order. A table some lookup join reads logs each write with a sequence
        number first, all of them before any is sent, and its delta carries the number: a
        join reads each table as of the last write of it that reached the join (``reading_at``
        in ``ops/base.py``), without the writes still on their way."""
        graph = self.graph
        sent = []
        for base, batch in pairs:
            if base.readers:
                graph.seq += 1
                base.log.append((graph.seq, batch))
                batch = Delta(batch)
                batch.pos = {base.id: graph.seq}
            sent.append((base, batch))
        for base, batch in sent:
            self.dataflow.send_down(base, "delta", batch)
        for base, _batch in sent:
            if base.log:
                self.trim(base)

    def trim(self, base) -> None:
        """Forget the logged writes of ``base`` that every join reading it has received."""
        base.trim()

    def probe(self, node, rows) -> None:
        self.dataflow.send_down(node, "probe", rows)

    def _deliver(self, msg) -> None:
        self.delivered += 1
        self.dataflow.deliver(*msg)


class InlineScheduler(Scheduler):
    """FIFO delivery, run to quiescence by whoever sends the first message."""

    def __init__(self, graph):
        super().__init__(graph)
        self.queue: deque = deque()
        self.running = False

    def send(self, src, dst, port, kind, payload) -> None:
        queue = self.queue
        if self.running or queue:
            queue.append((src, dst, port, kind, payload))
            if not self.running:
                self.run()
            return
        # the first message with nothing queued: delivered at once, then what it sent
        self.running = True
        deliver = self.dataflow.deliver
        try:
            self.delivered += 1
            deliver(src, dst, port, kind, payload)
            while queue:  # (Scheduler._deliver, one call less a message)
                self.delivered += 1
                deliver(*queue.popleft())
        finally:
            self.running = False

    def run(self) -> None:
        if self.running:
            return
        self.running = True
        try:
            queue = self.queue
            while queue:
                self._deliver(queue.popleft())
        finally:
            self.running = False

    def trim(self, base) -> None:
        if not self.queue and not self.running:
            base.log.clear()  # every message delivered: every join has every write
        else:
            base.trim()

    def read(self, reader, key: tuple) -> tuple:
        """A read of ``key`` missed at ``reader``: upquery it and return the filled rows."""
        got = []
        self.dataflow.read(reader, key, lambda: got.append(reader.published.get(key, ())))
        self.run()
        if not got:  # pragma: no cover - inline delivery always completes the fill
            raise RuntimeError(f"upquery for {key!r} at {reader} did not complete")
        return got[0]

    def read_range(self, reader, key, lo, hi, need=None, desc=False) -> tuple:
        """A range read (``RangeReader.read``): fill what it misses by ranged upqueries and
        return ``(rows, upqueried)``."""
        got = []
        self.dataflow.read_range(
            reader, key, lo, hi, need, desc, lambda rows, asked: got.append((rows, asked))
        )
        self.run()
        if not got:  # pragma: no cover - inline delivery always completes the fill
            raise RuntimeError(f"range read of {key!r} at {reader} did not complete")
        return got[0]


def _concat(a: list, b: list) -> list:
    """Two batches of one edge as one (the later one's position, when they carry one)."""
    pos = getattr(b, "pos", None)
    if pos is None:
        return a + b
    out = Delta(a)
    out.extend(b)
    out.pos = pos
    return out


def filled_keys(node) -> list:
    """The keys of a partial node that are currently filled (for tests and eviction points):
    ``Node.filled_keys``, a range reader's filled pieces and the keys it filled whole."""
    if not node.partial:
        return []
    return node.filled_keys()


class ThreadScheduler(Scheduler):
    """Every domain on a thread of its own, fed by an inbox.

    Domain 0 is base storage: a write changes SQLite and sends its delta under ``base()``, and
    domain 0's thread answers upqueries from SQLite under the same lock, so an answer and a write's
    delta reach each child in the order SQLite saw them. A transaction holds ``base()`` from BEGIN
    to COMMIT (answers would otherwise read its uncommitted rows); a thread waiting while it holds
    it answers base upqueries itself. Every other domain's thread handles one message to
    completion, including whatever it sends to nodes of its own domain; messages to other
    domains go to their inboxes. Messages from one domain to another stay in order, which is all
    the upquery protocol assumes (``tests/interleave`` checks it under any order that keeps it).

    Batching adapts to load: while a domain's thread is busy, deltas queued for one edge are
    handled as one batch when it gets to them, and misses queued at one reader become one upquery
    for all their keys. ``batch_window`` (seconds, 0 by default) also makes a domain that finds a
    single delta waiting pause that long first, so that writes arriving together share a batch.

    Reads that miss ask the reader's own domain to start the upquery and wait only for that key.
    A range read runs on the reader's domain (the only thread that changes the reader's state):
    it sends ranged upqueries for what it misses, collects its rows and hands them back.
    Evictions run on the evicted node's domain. A failure in a domain thread stops the dataflow and
    is reported to the next caller; ``stop`` ends every thread.
    """

    threaded = True

    def __init__(self, graph, inbox_limit: int = 10000, batch_window: float = 0.0):
        super().__init__(graph)
        self.batch_window = batch_window
        self.mu = threading.Lock()
        self.idle = threading.Condition(self.mu)
        self.inboxes: dict[int, deque] = {}
        self.wakes: dict[int, threading.Condition] = {}
        self.threads: dict[int, threading.Thread] = {}
        self.inflight = 0
        self.inbox_limit = inbox_limit
        self.failure: BaseException | None = None
        self.stopping = False
        self._base = threading.Lock()
        self._base_owner: int | None = None
        self._base_depth = 0
        self.tls = threading.local()
        self.on_failure = None  # called with the first error a domain thread meets

    # --- base storage's lock ----------------------------------------------------------------
    def base_acquire(self) -> None:
        me = threading.get_ident()
        if self._base_owner == me:
            self._base_depth += 1
            return
        self._base.acquire()
        self._base_owner = me
        self._base_depth = 1

    def base_release(self) -> None:
        self._base_depth -= 1
        if self._base_depth == 0:
            self._base_owner = None
            self._base.release()

    def base(self):
        sched = self

        class _Held:
            def __enter__(self):
                sched.base_acquire()

            def __exit__(self, *exc):
                sched.base_release()

        return _Held()

    # --- sending ---------------------------------------------------------------------------
    def send(self, src, dst, port, kind, payload) -> None:
        d = dst.domain
        msg = (src, dst, port, kind, payload)
        local = getattr(self.tls, "local", None)
        if local is not None and self.tls.domain == d and d != 0:
            local.append(msg)
            return
        with self.mu:
            q = self.inboxes.get(d)
            if q is None:
                q = self._start(d)
            q.append(msg)
            self.inflight += 1
            self.wakes[d].notify()

    def _start(self, d: int) -> deque:
        q = self.inboxes[d] = deque()
        self.wakes[d] = threading.Condition(self.mu)
        t = threading.Thread(target=self._loop, args=(d,), name=f"noria-domain-{d}", daemon=True)
        self.threads[d] = t
        t.start()
        return q

    def call(self, node, fn) -> None:
        """Run ``fn`` on ``node``'s domain thread."""
        self.send(node, node, 0, "call", fn)

    # --- the domain threads ----------------------------------------------------------------
    def _loop(self, d: int) -> None:
        self.tls.domain = d
        self.tls.local = deque()
        q = self.inboxes[d]
        wake = self.wakes[d]
        while True:
            with self.mu:
                while not q and not self.stopping:
                    wake.wait()
                if not q:
                    return
                if d != 0 and self.batch_window and len(q) == 1 and q[0][3] == "delta":
                    # a lone delta waits ``batch_window`` seconds for others to join its batch
                    self.mu.release()
                    try:
                        time.sleep(self.batch_window)
                    finally:
                        self.mu.acquire()
                if d != 0:
                    msg = q.popleft()
                    n = 1
                    kind = msg[3]
                    if kind == "delta" or kind == "read":
                        # batching: consecutive deltas on one edge become one batch, and
                        # consecutive misses at one reader one upquery
                        while q and q[0][3] == kind and q[0][1] is msg[1] and q[0][2] == msg[2]:
                            nxt = q.popleft()
                            n += 1
                            msg = (msg[0], msg[1], msg[2], kind, _concat(msg[4], nxt[4]))
            if d == 0:
                # take base storage's lock first, then the message (a transaction's thread may
                # answer it meanwhile: then there is nothing left to do)
                with self.base():
                    with self.mu:
                        msg = q.popleft() if q else None
                    if msg is None:
                        continue
                    self._run(msg)
            else:
                self._run(msg, n)

    def _run(self, msg, n: int = 1) -> None:
        try:
            if self.failure is None:
                self._deliver(msg)
                local = getattr(self.tls, "local", None)
                while local:
                    self._deliver(local.popleft())
        except BaseException as e:  # noqa: BLE001 - reported to the next caller
            if self.failure is None:
                self.failure = e
                if self.on_failure is not None:
                    self.on_failure(e)
            local = getattr(self.tls, "local", None)
            if local:
                local.clear()
        finally:
            with self.mu:
                self.inflight -= n
                if self.inflight == 0 or self.failure is not None:
                    self.idle.notify_all()

    def _serve_base(self) -> None:
        """A thread holding base storage's lock (a transaction) answers base upqueries itself."""
        if self._base_owner != threading.get_ident():
            return
        while True:
            with self.mu:
                q = self.inboxes.get(0)
                msg = q.popleft() if q else None
            if msg is None:
                return
            self._run(msg)

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure

    # --- what the engine calls -------------------------------------------------------------
    def inject(self, base, batch) -> None:
        self.dataflow.send_down(base, "delta", batch)

    def throttle(self) -> None:
        """Backpressure: a writer waits while the inboxes hold ``inbox_limit`` messages."""
        with self.mu:
            while self.inflight >= self.inbox_limit and self.failure is None:
                self.idle.wait(0.01)
                if self._base_owner == threading.get_ident():
                    break

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until no message is in flight anywhere (every write has reached every view)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._serve_base()
            with self.mu:
                if self.inflight == 0 or self.failure is not None:
                    break
                self.idle.wait(0.005)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("the dataflow did not settle")
        self.check()

    def read(self, reader, key: tuple) -> tuple:
        got: list = []
        done = threading.Event()

        def filled():
            got.append(reader.published.get(key, ()))
            done.set()

        self._start_read(reader, lambda: self.send(reader, reader, 0, "read", [(key, filled)]))
        self._await(reader, done)
        return got[0]

    def _start_read(self, reader, start) -> None:
        """Start a read at ``reader``, under the engine lock when the graph has one (a lock-free
        reader takes it here: the caller of a locked path holds it already), so that no read
        starts while a migration, which holds that lock, waits for quiescence and changes the
        graph. A reader removed meanwhile is ``ReaderGone``."""
        lock = self.graph.lock
        if lock is None:
            start()
            return
        with lock:
            if self.graph.nodes.get(reader.id) is not reader:
                raise ReaderGone(reader)
            start()

    def _await(self, reader, done: threading.Event) -> None:
        """Wait for a read started at ``reader``, answering base upqueries if this thread holds
        base storage. A reader removed while its read is under way (its messages are dropped)
        is ``ReaderGone``."""
        nodes = self.graph.nodes
        while not done.wait(0.005):
            self._serve_base()
            self.check()
            if nodes.get(reader.id) is not reader and not done.is_set():
                raise ReaderGone(reader)

    def read_range(self, reader, key, lo, hi, need=None, desc=False) -> tuple:
        """A range read: run on the reader's domain (which fills what it misses by ranged
        upqueries and collects the rows); wait for ``(rows, upqueried)`` only."""
        got: list = []
        done = threading.Event()

        def finished(rows, asked):
            got.append((rows, asked))
            done.set()

        def start():
            self.dataflow.read_range(reader, key, lo, hi, need, desc, finished)

        self._start_read(reader, lambda: self.call(reader, start))
        self._await(reader, done)
        return got[0]

    def evict(self, node, key) -> None:
        self.call(node, lambda: node.evict_key(key))

    def stop(self, timeout: float = 10.0) -> None:
        with self.mu:
            self.stopping = True
            for w in self.wakes.values():
                w.notify_all()
        for t in list(self.threads.values()):
            t.join(timeout)

    def alive(self) -> list:
        return [t for t in self.threads.values() if t.is_alive()]

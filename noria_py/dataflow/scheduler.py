"""Schedulers: who delivers the dataflow's messages (``domain.py``), and in which order.

- ``InlineScheduler`` delivers every message first-in-first-out, to completion, inside the call
  that sent it (a write, or a read that missed). Deterministic; what ``connect(upqueries=
  "messages")`` uses.
- ``TestScheduler`` only queues messages. Each graph edge (and direction) is a FIFO channel, as
  between two of Noria's domains when every node is its own domain, the finest split and so the
  one with the most interleavings; the test decides which channel delivers next (``step``) and
  when keys are evicted (``evict``), so hypothesis can explore the races that union buffering,
  dependent upqueries and incongruent-join eviction exist to handle.

A scheduler attaches to a graph (``graph.runtime``): base writes (``Graph.propagate``), probes
(``Graph.probe``) and reader misses (``Reader.fill``) then go through messages.
"""

from __future__ import annotations

from collections import deque

from .domain import Dataflow


class _Base:
    def __init__(self, graph):
        self.graph = graph
        self.dataflow = Dataflow(graph, self)
        self.delivered = 0

    def attach(self) -> _Base:
        self.graph.runtime = self
        return self

    def detach(self) -> None:
        if self.graph.runtime is self:
            self.graph.runtime = None

    def inject(self, base, batch) -> None:
        """A base-table write, already applied to base storage, enters the dataflow."""
        self.dataflow.send_down(base, "delta", batch)

    def probe(self, node, rows) -> None:
        self.dataflow.send_down(node, "probe", rows)

    def _deliver(self, msg) -> None:
        self.delivered += 1
        self.dataflow.deliver(*msg)


class InlineScheduler(_Base):
    """FIFO delivery, run to quiescence by whoever sends the first message."""

    def __init__(self, graph):
        super().__init__(graph)
        self.queue: deque = deque()
        self.running = False

    def send(self, src, dst, port, kind, payload) -> None:
        self.queue.append((src, dst, port, kind, payload))
        if not self.running:
            self.run()

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

    def read(self, reader, key: tuple) -> tuple:
        """A read of ``key`` missed at ``reader``: upquery it and return the filled rows."""
        got = []
        self.dataflow.read(reader, key, lambda: got.append(reader.published.get(key, ())))
        self.run()
        if not got:  # pragma: no cover - inline delivery always completes the fill
            raise RuntimeError(f"upquery for {key!r} at {reader} did not complete")
        return got[0]


class TestScheduler(_Base):
    """Queues messages on FIFO channels; the caller picks what is delivered next.

    ``split="nodes"`` (the default) makes every node its own domain: each edge and direction is
    a channel. ``split="domains"`` uses the domains ``assign_domains`` gave the nodes: a message
    between two nodes of one domain is handled within the delivery that produced it (a domain
    processes a message to completion), and each ordered pair of domains (and direction) is one
    channel.
    """

    __test__ = False  # not a pytest class

    def __init__(self, graph, split: str = "nodes"):
        super().__init__(graph)
        if split not in ("nodes", "domains"):
            raise ValueError("split must be 'nodes' or 'domains'")
        self.split = split
        self.channels: dict[tuple, deque] = {}
        self.answers: dict = {}  # (reader id, key) -> rows published when its fill completed
        self._local: deque = deque()
        self._busy = False

    def _deliver(self, msg) -> None:
        self._busy = True
        try:
            super()._deliver(msg)
            local = self._local
            while local:
                super()._deliver(local.popleft())
        finally:
            self._busy = False

    def send(self, src, dst, port, kind, payload) -> None:
        direction = "up" if kind == "req" else "down"
        if self.split == "domains":
            if self._busy and src.domain == dst.domain and src.domain != 0:
                self._local.append((src, dst, port, kind, payload))
                return
            ch = (src.domain, dst.domain, direction)
        elif direction == "up":
            ch = (dst.id, src.id, port, direction)
        else:
            ch = (src.id, dst.id, port, direction)
        q = self.channels.get(ch)
        if q is None:
            q = self.channels[ch] = deque()
        q.append((src, dst, port, kind, payload))

    def ready(self) -> list[tuple]:
        """Channels with a message waiting, in a stable order."""
        return sorted(ch for ch, q in self.channels.items() if q)

    def step(self, index: int) -> None:
        """Deliver the oldest message of the ``index``-th ready channel."""
        ready = self.ready()
        ch = ready[index % len(ready)]
        self._deliver(self.channels[ch].popleft())

    def run(self, choose=None, limit: int = 100000) -> None:
        """Deliver until nothing is waiting; ``choose(n)`` picks among n ready channels."""
        for _ in range(limit):
            ready = self.ready()
            if not ready:
                return
            i = choose(len(ready)) if choose is not None else 0
            self._deliver(self.channels[ready[i % len(ready)]].popleft())
        raise RuntimeError("the dataflow did not quiesce")

    def read(self, reader, key: tuple):
        """Start a read of ``key``: answered now on a hit, else once its fill is delivered."""
        rows = reader.published.get(key)
        if rows is not None:
            self.answers[(reader.id, key)] = rows
            return rows

        def done():
            self.answers[(reader.id, key)] = reader.published.get(key, ())

        self.dataflow.read(reader, key, done)
        return None

    def evict(self, node, key) -> bool:
        """Evict one filled key of ``node`` now (an eviction point chosen by the test)."""
        filled = _filled_keys(node)
        if key not in filled:
            return False
        node.evict_key(key)
        return True


def _filled_keys(node) -> list:
    if not getattr(node, "partial", False):
        return []
    if hasattr(node, "published") and not hasattr(node, "filled"):
        return list(node.published)
    return list(getattr(node, "filled", ()))


def filled_keys(node) -> list:
    """The keys of a partial node that are currently filled (for tests and eviction points)."""
    return _filled_keys(node)

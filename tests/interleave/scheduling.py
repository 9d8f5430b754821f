"""The test scheduler: the dataflow's messages wait on FIFO channels until the test delivers them.

``TestScheduler`` only queues messages. Each graph edge (and direction) is a FIFO channel, as
between two of Noria's domains when every node is its own domain, the finest split and so the
one with the most interleavings; the test decides which channel delivers next (``step``) and
when keys are evicted (``evict``), so hypothesis can explore the races that union buffering,
dependent upqueries and incongruent-join eviction exist to handle.
"""

from __future__ import annotations

from collections import deque

from noria_py.dataflow.scheduler import Scheduler, filled_keys


class TestScheduler(Scheduler):
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

    def read_range(self, reader, key, lo, hi, need=None, desc=False, on_done=None):
        """Start a range read: ``(rows, upqueried)`` now on a hit, else None and its answer
        (also given to ``on_done(rows)``) once its fills are delivered. Answers are kept in
        ``answers`` under ``(reader id, key, lo, hi, need, desc)``."""
        tag = (reader.id, key, lo, hi, need, desc)
        got = []

        def done(rows, asked):
            self.answers[tag] = rows
            got.append((rows, asked))
            if on_done is not None:
                on_done(rows)

        self.dataflow.read_range(reader, key, lo, hi, need, desc, done)
        return got[0] if got else None

    def evict(self, node, key) -> bool:
        """Evict one filled key of ``node`` now (an eviction point chosen by the test)."""
        filled = filled_keys(node)
        if key not in filled:
            return False
        node.evict_key(key)
        return True

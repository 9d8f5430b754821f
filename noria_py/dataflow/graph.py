"""The shared dataflow DAG: node registry, reuse by canonical signature, installation of new
nodes (with a replay of their ancestors' current contents), removal, and propagation of deltas.

Every query's nodes live in this one graph; a node whose signature (operator, parameters and
parent signatures) already exists is reused instead of added, so identical sub-plans are shared.
A node's parents are in the graph before it and ids grow, so id order is a topological order.
``nx`` (a ``networkx`` graph, built when asked for: the import is slow) mirrors the edges for
provenance questions and graphviz output.
"""

from __future__ import annotations

from contextlib import contextmanager

from .node import Node


class Graph:
    def __init__(self) -> None:
        self.nodes: dict[int, Node] = {}
        self.by_signature: dict[str, Node] = {}
        self._next_id = 0
        self.evictor = None  # eviction policy, when a memory budget is set
        self.deltas_in = 0  # base-table records propagated into the dataflow
        self.probes_sent = 0
        self.fill_log: list | None = None  # keys filled inside an open transaction
        self.lock = None  # the engine's lock: held by whoever changes state
        self.sync = lambda: None  # apply pending deltas before reading base storage
        # bulk replay hook (spark/replay.py): node -> ports whose initial input it computed
        self.bulk_replay = None
        self.runtime = None  # a scheduler (scheduler.py) when the dataflow runs on messages
        # readers holding keys published at their next read (``Reader.stale``), settled
        # before a runtime takes the dataflow over
        self.stale_readers: set = set()
        # joins over base tables look the other input up in base storage (ops/join.py
        # ``on_added``): only where deltas enter one batch at a time and run to completion
        self.lookup_joins = False
        self.lookup_count = 0  # lookup joins in the graph
        self.version = 0  # changes whenever nodes are connected or removed
        self.seq = 0  # base writes logged for lookup joins under message scheduling
        # while ``shared_contents`` is open: node id -> its contents, and the nodes it covers
        self._contents_memo: dict | None = None
        self._memo_nodes: list = []

    # --- building --------------------------------------------------------------------------
    def lookup(self, signature: str) -> Node | None:
        return self.by_signature.get(signature)

    def add(self, node: Node, signature: str) -> Node:
        """Register ``node`` (whose parents are already in the graph) unless an equal one exists.

        The node is not yet connected to its parents' outputs; ``install`` does that once its
        initial state is computed.
        """
        existing = self.by_signature.get(signature)
        if existing is not None:
            return existing
        node.id = self._next_id
        self._next_id += 1
        node.signature = signature
        self.nodes[node.id] = node
        self.by_signature[signature] = node
        node.graph = self
        node.on_added(self)
        return node

    @contextmanager
    def shared_contents(self):
        """Installs with no write between them (reopening a file installs every view again):
        each node's ``contents()`` is computed once for all of them, so a base table is
        scanned once, and a stateless path is run once, however many new nodes read it.

        A node's contents can only change by a delta (none arrives while this is open) or by
        being built; it is read only once built (``install`` goes parents first). Partial nodes
        are not covered (their contents are what they have filled)."""
        if self._contents_memo is not None:
            yield
            return
        self._contents_memo = {}
        try:
            yield
        finally:
            for node in self._memo_nodes:
                node.__dict__.pop("contents", None)
            self._memo_nodes = []
            self._contents_memo = None

    def _cover_contents(self) -> None:
        """Route ``contents()`` of every node not yet covered through the open memo (the nodes
        are kept until it closes, so no id is reused meanwhile)."""
        memo = self._contents_memo
        for node in self.nodes.values():
            if "contents" not in node.__dict__:
                node.contents = _memoized(node, memo)
                self._memo_nodes.append(node)

    def install(self, new_nodes: list[Node]) -> None:
        """Give each new node its initial state by replaying its parents' contents, then connect
        it to the live stream. Runs between batches, so nothing is applied twice or missed."""
        if self._contents_memo is not None:
            self._cover_contents()
        for node in self.topological(new_nodes):
            # a partial node starts empty and fills on demand; a stateless node has nothing to
            # build (its full children read its contents from its parents)
            if not node.partial and node.materialization != "none":
                # a state base storage computes in one query (a grouped COUNT/SUM over its
                # tables) is built so, whatever its size: one local query beats exporting the
                # tables to Spark; bulk_replay_rows=0 asks for Spark for everything it can do
                br = self.bulk_replay
                spark_first = br is not None and getattr(br, "threshold", None) == 0
                done = ()
                if not spark_first and node.build_from_storage():
                    done = range(len(node.parents))
                # --- bulk replay: big inputs are computed in Spark (spark/replay.py) ---
                if not done and br is not None:
                    done = br(node)
                if not done and spark_first and node.build_from_storage():
                    done = range(len(node.parents))
                for port, parent in enumerate(node.parents):
                    if port in done:
                        continue
                    batch = parent.contents()
                    if batch:
                        node.absorb(port, batch)
            for port, parent in enumerate(node.parents):
                parent.children.append((node, port))
            self.version += 1

    def topological(self, nodes=None) -> list[Node]:
        """``nodes`` (default: every node of the graph) parents first: in id order, as a node
        is added after its parents (``add``). Should a node ever have a parent with a greater
        id (or one outside the graph), the order is sorted by the edges instead."""
        order = [self.nodes[i] for i in sorted(self.nodes)]
        graph_nodes = self.nodes
        for n in order:
            for p in n.parents:
                if p.id >= n.id or graph_nodes.get(p.id) is not p:
                    order = _by_edges(order)
                    break
            else:
                continue
            break
        if nodes is None:
            return order
        ids = {id(n) for n in nodes}
        return [n for n in order if id(n) in ids]

    @property
    def nx(self):
        """The graph's edges as a ``networkx.DiGraph`` (built on each call)."""
        import networkx as nx

        g = nx.DiGraph()
        for nid, node in self.nodes.items():
            g.add_node(nid)
            for p in node.parents:
                g.add_edge(p.id, nid)
        return g

    def remove(self, node: Node) -> None:
        self.version += 1
        for p in node.parents:
            p.children = [(c, port) for c, port in p.children if c is not node]
        self.nodes.pop(node.id, None)
        self.by_signature.pop(node.signature, None)
        self.stale_readers.discard(node)
        node.on_removed()

    def settle_readers(self) -> None:
        """Publish every key a reader left stale (``Reader.settle``)."""
        readers, self.stale_readers = self.stale_readers, set()
        for r in readers:
            r.settle()

    def release(self, nodes: list[Node]) -> list[Node]:
        """Drop one reference from each node; remove those nobody uses any more (leaves first)."""
        removed = []
        for n in reversed(nodes):
            n.refcount -= 1
        changed = True
        while changed:
            changed = False
            for n in list(self.nodes.values()):
                if n.refcount <= 0 and not n.children and n.kind != "base":
                    self.remove(n)
                    removed.append(n)
                    changed = True
        return removed

    # --- running ---------------------------------------------------------------------------
    def propagate(self, source: Node, batch: list) -> None:
        """Push a delta from ``source`` through every downstream operator (inline scheduling).

        A base table's delta is *pending* on its node until it has reached everything below
        (see ``propagate_all``)."""
        if not batch:
            return
        self.deltas_in += len(batch)
        if self.runtime is not None:
            self.runtime.inject(source, batch)
            return
        pending = getattr(source, "pending", None)
        if pending is not None:
            for b in pending:
                if b is batch:
                    break
            else:
                pending.append(batch)
        try:
            children = source.children
            if len(children) == 1:
                # (one child, as a table read by one query: no queue unless it has output)
                node, port = children[0]
                out = node.on_input(port, batch)
                if not out:
                    return
                queue = [(child, cport, out) for child, cport in node.children]
            else:
                # breadth first: a list read from the front (no deque per delta)
                queue = [(child, port, batch) for child, port in children]
            i = 0
            while i < len(queue):
                node, port, b = queue[i]
                i += 1
                out = node.on_input(port, b)
                if out:
                    for child, cport in node.children:
                        queue.append((child, cport, out))
        finally:
            if pending:
                if pending[-1] is batch:
                    pending.pop()  # (the usual case, without a call)
                else:
                    _forget(pending, batch)

    def propagate_all(self, pairs: list) -> None:
        """Propagate several base deltas, ``(base node, batch)`` pairs that base storage holds
        already, one after the other: each is pending from the start, so a lookup join that
        joins an earlier one reads the tables of the later ones as they were before them."""
        if self.runtime is not None:
            pairs = [(n, b) for n, b in pairs if b]
            for _n, b in pairs:
                self.deltas_in += len(b)
            self.runtime.inject_all(pairs)
            return
        held = self.hold(pairs)
        try:
            for node, batch in pairs:
                self.propagate(node, batch)
        finally:
            self.unhold(held)

    def hold(self, pairs: list) -> list:
        """Mark deltas pending that base storage holds but the dataflow will receive later;
        ``unhold`` the returned handle when they have been propagated (or dropped)."""
        held = []
        for node, batch in pairs:
            pending = getattr(node, "pending", None)
            if pending is not None and batch and not any(b is batch for b in pending):
                pending.append(batch)
                held.append((pending, batch))
        return held

    @staticmethod
    def unhold(held: list) -> None:
        for pending, batch in held:
            _forget(pending, batch)

    def probe(self, source: Node, rows: list) -> None:
        """Records were dropped at (or evicted from) ``source``: let everything below evict what
        they may affect (see ``partial.py``)."""
        if not rows:
            return
        self.probes_sent += len(rows)
        if self.runtime is not None:
            self.runtime.probe(source, rows)
            return
        for child, port in list(source.children):
            out = child.on_probe(port, rows)
            if out:
                self.probe(child, out)

    def filled(self, node: Node, key, size: int) -> None:
        """A key of ``node`` was filled: logged while a transaction is open (``fill_log``) and
        told to the eviction policy (``evictor``). Nothing else: a miss's hot path
        (``Reader.fill``, ``Aggregate._add_groups``) calls it only when one of the two is set."""
        log = self.fill_log  # read once: a domain thread may race a COMMIT resetting it
        if log is not None:
            log.append((node, key))
        if self.evictor is not None:
            self.evictor.filled(node, key, size)

    def evicted(self, node: Node, key) -> None:
        if self.evictor is not None:
            self.evictor.forget(node, key)

    def state_bytes(self) -> int:
        """Estimated bytes held by every materialization (sampled row sizes x row counts)."""
        from .eviction import row_bytes

        total = 0
        for node in self.nodes.values():
            keys, rows = node.state_size()
            if not rows:
                continue
            sample = []
            for r, _m in node.contents()[:50] if not node.partial else node.sample_state():
                sample.append(row_bytes(r) if isinstance(r, tuple) else 64)
            per = (sum(sample) / len(sample)) if sample else 100
            total += int(per * rows) + keys * 100
        return total

    def to_dot(self) -> str:
        lines = ["digraph noria {", "  node [shape=box, fontname=monospace];"]
        for nid, n in sorted(self.nodes.items()):
            label = f"{nid}: {n.describe()}".replace('"', "'")
            style = ', style=filled, fillcolor="#dde8ff"' if n.materialization != "none" else ""
            lines.append(f'  n{nid} [label="{label}"{style}];')
        for nid, n in sorted(self.nodes.items()):
            for pid in dict.fromkeys(p.id for p in n.parents):
                lines.append(f"  n{pid} -> n{nid};")
        lines.append("}")
        return "\n".join(lines)


def _by_edges(order: list[Node]) -> list[Node]:
    """``order``'s nodes, each after those of its parents among them (Kahn's algorithm)."""
    chosen = {id(n) for n in order}
    waiting = {id(n): sum(1 for p in n.parents if id(p) in chosen) for n in order}
    below: dict = {}
    for n in order:
        for p in n.parents:
            if id(p) in chosen:
                below.setdefault(id(p), []).append(n)
    ready = [n for n in order if not waiting[id(n)]]
    out: list[Node] = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for c in below.pop(id(n), ()):
            waiting[id(c)] -= 1
            if not waiting[id(c)]:
                ready.append(c)
    if len(out) != len(order):  # pragma: no cover - a node is its own ancestor
        raise RuntimeError("the dataflow graph has a cycle")
    return out


def _memoized(node: Node, memo: dict):
    """``node.contents`` computed once while ``memo`` is open (see ``shared_contents``)."""
    plain = type(node).contents.__get__(node)
    key = id(node)

    def contents() -> list:
        if node.partial:
            return plain()
        got = memo.get(key)
        if got is None:
            got = memo[key] = plain()
        return got

    return contents


def _forget(pending: list, batch: list) -> None:
    """Remove ``batch`` itself (not an equal one) from ``pending``."""
    if pending and pending[-1] is batch:
        pending.pop()  # the usual case: the last one added
        return
    for i, b in enumerate(pending):
        if b is batch:
            del pending[i]
            return

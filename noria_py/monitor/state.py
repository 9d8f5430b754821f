"""What the metrics and the dashboard read from an engine: one snapshot per scrape or poll.

``snapshot(engine, server_state)`` takes the engine lock (writes, fills and DDL hold it, so a
snapshot sees each of them whole) and returns plain values: per query its counters, state size
and read latency buckets; the graph's nodes; the memory budget; the totals the rates are
computed from. Nothing here runs on the read path: the counters are the engine's own
(``engine.QueryEntry``), and the read latency buckets are filled by the engine: every miss,
and the hits the monitor asked to time (``SelectPrepared.sample_next``).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..engine import LATENCY_BOUNDS_NS, Engine, QueryEntry
from ..storage.sqlite import CHANGES

# how long a snapshot waits for the engine lock before giving up (a long DDL or load)
LOCK_TIMEOUT = 10.0


class EngineBusy(Exception):
    """The engine lock was not free within ``LOCK_TIMEOUT``."""


@dataclass(slots=True)
class QueryStats:
    name: str
    sql: str
    status: str  # cached or proxied (a view's own entry: cached, no reader)
    hits: int
    misses: int
    keys: int | None
    rows: int | None
    bytes: int | None
    miss_seconds: float
    miss_buckets: list[int]
    hit_buckets: list[int]
    reason: str | None
    reader: int | None = None  # the id of the query's reader node

    @property
    def reads(self) -> int:
        return self.hits + self.misses

    def latency_quantile(self, q: float) -> float | None:
        """The ``q`` quantile of this query's read latency in seconds, from the engine's
        buckets: the timed misses as they are, the sampled hits weighted as every hit. None
        before anything was timed (or while hits happened but none was sampled yet)."""
        sampled = sum(self.hit_buckets)
        if self.hits and not sampled:
            return None
        scale = self.hits / sampled if sampled else 0.0
        counts = [m + h * scale for m, h in zip(self.miss_buckets, self.hit_buckets)]
        return bucket_quantile(counts, q)


@dataclass(slots=True)
class NodeInfo:
    id: int
    kind: str
    label: str
    materialization: str  # none, full or partial
    domain: int
    parents: list[int]
    keys: int
    rows: int
    bytes: int


@dataclass(slots=True)
class Snapshot:
    time: float
    queries: list[QueryStats]
    nodes: list[NodeInfo]
    budget: int | None  # memory budget in bytes (connect(memory_limit=...)), None: unlimited
    accounted: int  # bytes the eviction policy counts against the budget
    state_bytes: int  # estimated bytes of every materialization
    evictions: int
    writes: int
    deltas: int
    upquery_messages: int | None  # upqueries sent between nodes, when domains run on messages
    log_behind: int | None = None  # change-log entries other processes wrote, not applied yet
    connections: int | None = None
    connections_total: int | None = None
    errors: dict[int, int] = field(default_factory=dict)


def bucket_quantile(counts: list[float], q: float) -> float | None:
    """The ``q`` quantile (seconds) of a histogram over ``LATENCY_BOUNDS_NS`` (the last
    bucket unbounded), interpolated linearly inside the bucket it falls in."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = q * total
    seen = 0.0
    lower = 0
    for i, c in enumerate(counts):
        if c and seen + c >= rank:
            if i >= len(LATENCY_BOUNDS_NS):
                return LATENCY_BOUNDS_NS[-1] / 1e9  # beyond the last bound: report that bound
            upper = LATENCY_BOUNDS_NS[i]
            return (lower + (upper - lower) * (rank - seen) / c) / 1e9
        seen += c
        if i < len(LATENCY_BOUNDS_NS):
            lower = LATENCY_BOUNDS_NS[i]
    return LATENCY_BOUNDS_NS[-1] / 1e9


def _label(n) -> str:
    """A node as EXPLAIN describes it, columns by name (the description as is if that fails)."""
    from ..dataflow import explain

    try:
        return explain.describe(n, n.describe(), True)
    except Exception:  # noqa: BLE001 - a label is never worth a failed snapshot
        return n.describe()


def proxied_reason(entry: QueryEntry) -> str | None:
    """Why the dataflow does not maintain a proxied query, as far as the engine recorded it."""
    return getattr(entry, "reason", None)


def engine_of(target: Any) -> Engine:
    """The engine of a ``noria_py.connect()`` connection, or ``target`` itself."""
    if isinstance(target, Engine):
        return target
    engine = getattr(target, "_engine", None)
    if isinstance(engine, Engine):
        return engine
    raise TypeError(f"expected a noria_py connection or Engine, not {type(target).__name__}")


def _row_bytes(node: Any) -> int:
    # the eviction policy's estimate of one row (dataflow/eviction.py Evictor._size)
    return 120 + 40 * len(node.columns)


def _reader_bytes(reader: Any) -> int:
    from ..engine import _estimate_bytes

    return _estimate_bytes(reader)


def snapshot(engine: Engine, server_state: Any = None) -> Snapshot:
    """Everything the metrics and the dashboard show, read under the engine lock."""
    lock: threading.RLock = engine.lock
    if not lock.acquire(timeout=LOCK_TIMEOUT):
        raise EngineBusy("the engine lock is busy")
    try:
        # domain threads (domains="threads") change states without the engine lock: a dict
        # that changes size while it is read is read again
        for attempt in range(5):
            try:
                snap = _read(engine)
                break
            except RuntimeError:
                if attempt == 4:
                    raise
                time.sleep(0.01)
    finally:
        lock.release()
    snap.log_behind = _log_behind(engine)
    if server_state is not None:
        snap.connections = server_state.connections
        snap.connections_total = getattr(server_state, "connections_total", None)
        snap.errors = dict(getattr(server_state, "errors", {}))
    return snap


# Counting a state's rows and bytes walks all of its keys, under the engine lock: sizes are
# reused until SIZES_COST times the time their count took has passed, so counting a large
# state (100 ms for 200,000 keys) takes at most 1 / SIZES_COST of the engine's time
SIZES_COST = 20
_sizes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _node_sizes(engine: Engine, graph: Any) -> dict[int, tuple[int, int, int]]:
    """node id -> (keys, rows, estimated bytes) of every materialized node; a reader's bytes
    as SHOW CACHES estimates them."""
    now = time.monotonic()
    cached = _sizes.get(engine)
    if cached is not None:
        at, cost, ids, sizes = cached
        if now - at < SIZES_COST * cost and ids == graph.nodes.keys():
            return sizes
    sizes = {}
    for nid, n in list(graph.nodes.items()):
        if n.materialization == "none":
            continue
        keys, rows = n.state_size()
        nb = _reader_bytes(n) if n.kind == "reader" else 64 * keys + _row_bytes(n) * rows
        sizes[nid] = (keys, rows, nb)
    _sizes[engine] = (now, time.monotonic() - now, set(graph.nodes), sizes)
    return sizes


class _LogHead:
    """A shared file's change log, read on a connection of its own."""

    def __init__(self, path: str) -> None:
        self.mu = threading.Lock()
        self.conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=1.0
        )

    def others_after(self, applied: int, origin: str) -> int:
        """Entries after ``applied`` that other processes than ``origin`` wrote."""
        with self.mu:
            return self.conn.execute(
                f"SELECT COUNT(*) FROM {CHANGES} WHERE seq > ? AND origin != ?",
                (applied, origin),
            ).fetchone()[0]


_heads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _log_behind(engine: Engine) -> int | None:
    """How many change-log entries (other processes' writes on the same file) this engine has
    not applied yet; None without a change log."""
    position = engine.log_position
    if position is None or engine.closed:
        head = _heads.pop(engine, None)
        if head is not None:
            head.conn.close()
        return None
    head = _heads.get(engine)
    if head is None:
        head = _heads[engine] = _LogHead(engine.path)
    try:
        return head.others_after(*position)
    except sqlite3.OperationalError:  # busy beyond the timeout: say nothing this time
        return None


def _read(engine: Engine) -> Snapshot:
    if engine.closed:
        raise EngineBusy("the engine is closed")
    graph = engine.graph
    sizes = _node_sizes(engine, graph)
    queries = []
    for name, e in list(engine.queries.items()):
        keys = rows = nbytes = reader = None
        cq = e.compiled
        if cq is not None and not e.readerless and cq.reader is not None:
            reader = cq.reader.id
            keys, rows, nbytes = sizes.get(reader, (0, 0, 0))
        queries.append(
            QueryStats(
                name=name,
                sql=e.sql,
                status=e.status,
                hits=e.hits,
                misses=e.misses,
                keys=keys,
                rows=rows,
                bytes=nbytes,
                miss_seconds=e.miss_ns / 1e9,
                miss_buckets=list(e.miss_buckets),
                hit_buckets=list(e.hit_buckets),
                reason=proxied_reason(e) if e.status == "proxied" else None,
                reader=reader,
            )
        )
    nodes = []
    total = 0
    for nid, n in sorted(list(graph.nodes.items())):
        keys, rows, nb = sizes.get(nid, (0, 0, 0))
        total += nb
        nodes.append(
            NodeInfo(
                id=nid,
                kind=n.kind,
                label=_label(n),
                materialization=n.materialization,
                domain=getattr(n, "domain", 0) or 0,
                parents=[p.id for p in n.parents],
                keys=keys,
                rows=rows,
                bytes=nb,
            )
        )
    ev = graph.evictor
    rt = graph.runtime
    return Snapshot(
        time=time.time(),
        queries=queries,
        nodes=nodes,
        budget=ev.budget if ev is not None else None,
        accounted=ev.used if ev is not None else 0,
        state_bytes=total,
        evictions=ev.evictions if ev is not None else 0,
        writes=engine.write_count,
        deltas=graph.deltas_in,
        upquery_messages=rt.dataflow.upqueries if rt is not None else None,
    )


__all__ = [
    "LATENCY_BOUNDS_NS",
    "EngineBusy",
    "NodeInfo",
    "QueryStats",
    "Snapshot",
    "bucket_quantile",
    "engine_of",
    "proxied_reason",
    "snapshot",
]

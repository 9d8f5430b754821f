"""The HTTP side: ``/metrics``, the dashboard page and its JSON, on a daemon thread.

``MonitorServer`` is a stdlib ``ThreadingHTTPServer``. Each ``/api/state`` request takes one
snapshot (``state.snapshot``) and appends a point to a short history (memory, read, write and
delta rates over the last minutes, at most one point per ``HISTORY_STEP`` seconds), which the
page draws; nothing samples the engine while nobody looks.
"""

from __future__ import annotations

import collections
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from . import page
from .metrics import make_registry
from .state import EngineBusy, Snapshot, engine_of, snapshot

SAMPLE_EVERY = 0.05  # seconds between two rounds of read latency samples
SAMPLE_ROUND = 256  # statements asked to time their next read per round
SAMPLE_SKIP = 64  # a sampled statement times one read 16 to 16 + this many reads later
SCAN_EVERY = 2.0  # seconds between two looks at the engine's statement cache
HISTORY_STEP = 0.5  # seconds between two points of the history
HISTORY_POINTS = 600  # points kept (five minutes at one poll a second)
GRAPH_NODES_MAX = 400  # larger graphs are drawn without the nodes beyond this many


class MonitorServer:
    """Metrics and dashboard of one engine on ``host:port`` (0: a free port)."""

    def __init__(
        self, target: Any, host: str = "127.0.0.1", port: int = 0, server_state: Any = None
    ) -> None:
        self.engine = engine_of(target)
        self.server_state = server_state
        self.registry = make_registry(self.engine, server_state)
        self._history: collections.deque = collections.deque(maxlen=HISTORY_POINTS)
        self._last: tuple[float, int, int, int] | None = None  # time, reads, writes, deltas
        self._mu = threading.Lock()
        handler = type("Handler", (_Handler,), {"monitor": self})
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="noria-http", daemon=True
        )
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="noria-sample", daemon=True)
        self._thread.start()
        self._sampler.start()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._sampler.join(timeout=5)

    def _sample(self) -> None:
        """Ask the cached lookups, a round of them every ``SAMPLE_EVERY`` seconds, to time
        their next read (``SelectPrepared.sample_next``): the hits' part of the read latency
        the dashboard shows. Reads between samples run untimed."""
        rng = random.Random()
        statements: list = []
        scanned = -SCAN_EVERY
        pos = 0
        while not self._stop.wait(SAMPLE_EVERY):
            now = time.monotonic()
            if now - scanned >= SCAN_EVERY:
                scanned = now
                if self.engine.closed:
                    statements = []
                    continue
                try:
                    statements = self.engine.select_statements()
                except RuntimeError:  # the cache changed size meanwhile: the next scan
                    pass
            if not statements:
                continue
            if pos >= len(statements):
                pos = 0
            for prep in statements[pos : pos + SAMPLE_ROUND]:
                # not the very next read: that one would often pay for this thread having
                # just run (the switch back, cold caches)
                prep.sample_next(16 + rng.randrange(SAMPLE_SKIP))
            pos += SAMPLE_ROUND

    def __enter__(self) -> MonitorServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the dashboard's data ------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """``/api/state``: a snapshot as JSON-ready values, with the history so far."""
        snap = snapshot(self.engine, self.server_state)
        reads = sum(q.reads for q in snap.queries)
        point = self._record(snap, reads)
        caches = []
        proxied = []
        for q in snap.queries:
            if q.status == "proxied":
                proxied.append({"name": q.name, "sql": q.sql, "runs": q.reads, "reason": q.reason})
                continue
            if q.keys is None:
                continue  # a view's own entry: its operators, no reader
            p50 = q.latency_quantile(0.5)
            p99 = q.latency_quantile(0.99)
            caches.append(
                {
                    "name": q.name,
                    "sql": q.sql,
                    "hits": q.hits,
                    "misses": q.misses,
                    "hit_rate": q.hits / q.reads if q.reads else None,
                    "keys": q.keys,
                    "bytes": q.bytes,
                    "p50_ms": None if p50 is None else p50 * 1e3,
                    "p99_ms": None if p99 is None else p99 * 1e3,
                }
            )
        return {
            "time": snap.time,
            "caches": caches,
            "proxied": proxied,
            "graph": _layout(snap),
            "memory": {
                "budget": snap.budget,
                "accounted": snap.accounted,
                "state_bytes": snap.state_bytes,
            },
            "totals": {
                "reads": reads,
                "writes": snap.writes,
                "deltas": snap.deltas,
                "evictions": snap.evictions,
                "connections": snap.connections,
                "errors": sum(snap.errors.values()),
                "log_behind": snap.log_behind,
            },
            "rates": point,
            "history": list(self._history),
        }

    def _record(self, snap: Snapshot, reads: int) -> dict[str, Any]:
        """Append a history point (rates since the previous one) unless one is recent."""
        with self._mu:
            now = time.monotonic()
            last = self._last
            if last is not None and now - last[0] < HISTORY_STEP and self._history:
                return self._history[-1]
            point: dict[str, Any] = {
                "t": snap.time,
                "state_bytes": snap.state_bytes,
                "accounted": snap.accounted,
                "budget": snap.budget,
                "reads_per_s": None,
                "writes_per_s": None,
                "deltas_per_s": None,
            }
            if last is not None:
                dt = now - last[0]
                point["reads_per_s"] = max(reads - last[1], 0) / dt
                point["writes_per_s"] = max(snap.writes - last[2], 0) / dt
                point["deltas_per_s"] = max(snap.deltas - last[3], 0) / dt
            self._last = (now, reads, snap.writes, snap.deltas)
            self._history.append(point)
            return point


def _layout(snap: Snapshot) -> dict[str, Any]:
    """The dataflow graph in layers (a node one below its deepest parent), each node with its
    position in its layer, for the page to draw."""
    nodes = snap.nodes[:GRAPH_NODES_MAX]
    by_id = {n.id: n for n in nodes}
    depth: dict[int, int] = {}

    def depth_of(nid: int) -> int:
        # one below the deepest parent; iterative, parents before children
        stack = [nid]
        while stack:
            top = stack[-1]
            missing = [p for p in by_id[top].parents if p in by_id and p not in depth]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            parents = [depth[p] for p in by_id[top].parents if p in by_id]
            depth[top] = 1 + max(parents, default=-1)
        return depth[nid]

    readers: dict[int, list[str]] = {}
    for q in snap.queries:
        if q.reader is not None:
            readers.setdefault(q.reader, []).append(q.name)
    layers: dict[int, int] = collections.Counter()
    out = []
    for n in nodes:
        d = depth_of(n.id)
        out.append(
            {
                "id": n.id,
                "kind": n.kind,
                "queries": readers.get(n.id, []),
                "label": n.label,
                "materialization": n.materialization,
                "domain": n.domain,
                "keys": n.keys,
                "bytes": n.bytes,
                "layer": d,
                "slot": layers[d],
            }
        )
        layers[d] += 1
    edges = [[p, n.id] for n in nodes for p in n.parents if p in by_id]
    return {"nodes": out, "edges": edges, "omitted": len(snap.nodes) - len(nodes)}


class _Handler(BaseHTTPRequestHandler):
    monitor: MonitorServer
    server_version = "noria-py"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        try:
            if path == "/metrics":
                self._send(200, CONTENT_TYPE_LATEST, generate_latest(self.monitor.registry))
            elif path in ("/", "/index.html"):
                self._send(200, "text/html; charset=utf-8", page.HTML.encode())
            elif path == "/api/state":
                body = json.dumps(self.monitor.state()).encode()
                self._send(200, "application/json", body)
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")
        except EngineBusy as e:
            self._send(503, "text/plain; charset=utf-8", f"{e}\n".encode())
        except BrokenPipeError:
            pass

    def _send(self, code: int, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # no line per request on stderr


__all__ = ["MonitorServer"]

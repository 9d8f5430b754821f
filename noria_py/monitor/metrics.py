"""Prometheus metrics of one engine (and of the MySQL-wire server in front of it, if any).

A ``CollectorRegistry`` per monitored engine (never the process-wide default registry, so
several engines in one process do not collide) holds:

* ``EngineCollector``: reads a ``state.snapshot`` at scrape time and reports it as metric
  families: queries by status, reads by status, hits and misses per cache, the read latency
  of misses (upqueries) as a histogram, state keys and bytes per cache and in total against
  the memory budget, evictions, writes and deltas, and, for a server, connections and errors
  by MySQL error code;
* ``prometheus_client``'s ``ProcessCollector``: the process's CPU seconds and resident memory.

Per-second rates are ``rate()`` over the counters (the dashboard computes the same from two
polls).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from ..engine import Engine
from .state import LATENCY_BOUNDS_NS, snapshot

SQL_LABEL_MAX = 200  # longer query texts are cut in the noria_query_info label


class EngineCollector(Collector):
    """The metric families of ``engine`` (and ``server_state``, a server's ``ServerState``),
    computed from one snapshot per scrape."""

    def __init__(self, engine: Engine, server_state: Any = None) -> None:
        self.engine = engine
        self.server_state = server_state

    def describe(self) -> list[Metric]:
        return []  # the families depend on the installed queries: no registration-time check

    def _upstream(self) -> Iterator[Metric]:
        """Replication from the upstream database (noria_py.upstream), when mirroring one."""
        mirror = getattr(self.engine, "upstream", None)
        if mirror is None:
            return
        try:
            st = mirror.status()
        except Exception:  # noqa: BLE001 - a scrape reports what it can
            return
        if st.get("lag_seconds") is not None:
            yield GaugeMetricFamily(
                "noria_upstream_lag_seconds",
                "Seconds since the upstream committed the oldest transaction not applied yet",
                value=st["lag_seconds"],
            )
        if st.get("lag_bytes") is not None:
            yield GaugeMetricFamily(
                "noria_upstream_lag_bytes",
                "Binlog bytes between the upstream's position and the applied one",
                value=st["lag_bytes"],
            )
        yield CounterMetricFamily(
            "noria_upstream_transactions",
            "Upstream transactions applied to the mirror",
            value=st.get("transactions") or 0,
        )
        yield CounterMetricFamily(
            "noria_upstream_reconnects",
            "Reconnections to the upstream's binlog",
            value=st.get("reconnects") or 0,
        )
        yield GaugeMetricFamily(
            "noria_upstream_running",
            "1 while the replication thread runs",
            value=1 if st.get("running") else 0,
        )

    def collect(self) -> Iterator[Metric]:
        snap = snapshot(self.engine, self.server_state)
        by_status: dict[str, int] = {"cached": 0, "proxied": 0}
        reads: dict[str, int] = {"cached": 0, "proxied": 0}
        info = GaugeMetricFamily(
            "noria_query_info",
            "Installed queries: name, status and SQL text",
            labels=["query", "status", "sql"],
        )
        hits = CounterMetricFamily(
            "noria_cache_hits", "Reads a cached query answered from its reader", labels=["query"]
        )
        misses = CounterMetricFamily(
            "noria_cache_misses",
            "Reads of a cached query that missed in its reader (filled by an upquery)",
            labels=["query"],
        )
        keys = GaugeMetricFamily(
            "noria_cache_keys", "Keys filled in a cached query's reader", labels=["query"]
        )
        nbytes = GaugeMetricFamily(
            "noria_cache_state_bytes",
            "Estimated bytes held by a cached query's reader",
            labels=["query"],
        )
        latency = HistogramMetricFamily(
            "noria_upquery_duration_seconds",
            "Time to fill a reader miss by an upquery, per cached query",
            labels=["query"],
        )
        upqueries = 0
        for q in snap.queries:
            status = q.status
            by_status[status] = by_status.get(status, 0) + 1
            reads[status] = reads.get(status, 0) + q.reads
            info.add_metric([q.name, status, q.sql[:SQL_LABEL_MAX]], 1)
            if status != "cached":
                continue
            hits.add_metric([q.name], q.hits)
            misses.add_metric([q.name], q.misses)
            if q.keys is not None:
                keys.add_metric([q.name], q.keys)
                nbytes.add_metric([q.name], q.bytes or 0)
            buckets = []
            cum = 0
            for bound, c in zip(LATENCY_BOUNDS_NS, q.miss_buckets):
                cum += c
                buckets.append((_le(bound), cum))
            cum += q.miss_buckets[-1]
            buckets.append(("+Inf", cum))
            upqueries += cum
            latency.add_metric([q.name], buckets, q.miss_seconds)
        queries = GaugeMetricFamily(
            "noria_queries",
            "Installed queries by status (cached by the dataflow or proxied)",
            labels=["status"],
        )
        executed = CounterMetricFamily(
            "noria_queries_executed",
            "Executions of installed queries by status (reads of cached queries, runs of proxied ones)",
            labels=["status"],
        )
        for status in sorted(by_status):
            queries.add_metric([status], by_status[status])
            executed.add_metric([status], reads[status])
        yield queries
        yield executed
        yield info
        yield hits
        yield misses
        yield keys
        yield nbytes
        yield latency
        yield CounterMetricFamily(
            "noria_upqueries", "Upqueries readers sent to fill missing keys", value=upqueries
        )
        if snap.upquery_messages is not None:
            yield CounterMetricFamily(
                "noria_upquery_requests",
                "Upquery requests sent from node to node (domains on messages)",
                value=snap.upquery_messages,
            )
        yield CounterMetricFamily(
            "noria_evictions", "Keys evicted to stay under the memory budget", value=snap.evictions
        )
        yield GaugeMetricFamily(
            "noria_state_bytes",
            "Estimated bytes of every materialization of the dataflow",
            value=snap.state_bytes,
        )
        yield GaugeMetricFamily(
            "noria_memory_accounted_bytes",
            "Bytes of partial state the eviction policy counts against the memory budget",
            value=snap.accounted,
        )
        if snap.budget is not None:
            yield GaugeMetricFamily(
                "noria_memory_budget_bytes", "The memory budget (memory_limit)", value=snap.budget
            )
        nodes = GaugeMetricFamily(
            "noria_dataflow_nodes", "Dataflow nodes by materialization", labels=["materialization"]
        )
        counts: dict[str, int] = {"none": 0, "full": 0, "partial": 0}
        for n in snap.nodes:
            counts[n.materialization] = counts.get(n.materialization, 0) + 1
        for mat in sorted(counts):
            nodes.add_metric([mat], counts[mat])
        yield nodes
        yield CounterMetricFamily(
            "noria_writes",
            "Write statements that succeeded (INSERT, UPDATE, DELETE, ...)",
            value=snap.writes,
        )
        yield CounterMetricFamily(
            "noria_deltas", "Base-table records propagated into the dataflow", value=snap.deltas
        )
        if snap.log_behind is not None:
            yield GaugeMetricFamily(
                "noria_replication_lag_entries",
                "Change-log entries other processes on the same file wrote that this "
                "process's views do not reflect yet",
                value=snap.log_behind,
            )
        yield from self._upstream()
        if snap.connections is not None:
            yield GaugeMetricFamily(
                "noria_connections", "Open client connections", value=snap.connections
            )
        if snap.connections_total is not None:
            yield CounterMetricFamily(
                "noria_connections_accepted",
                "Client connections accepted since the server started",
                value=snap.connections_total,
            )
        if self.server_state is not None:
            errs = CounterMetricFamily(
                "noria_errors",
                "Error packets sent to clients, by MySQL error code",
                labels=["code"],
            )
            for code in sorted(snap.errors):
                errs.add_metric([str(code)], snap.errors[code])
            yield errs


def _le(bound_ns: int) -> str:
    return repr(bound_ns / 1e9)


def make_registry(engine: Engine, server_state: Any = None) -> CollectorRegistry:
    """A registry of its own for ``engine``: its collector and the process's CPU and memory."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EngineCollector(engine, server_state))
    ProcessCollector(registry=registry)
    return registry


__all__ = ["EngineCollector", "make_registry"]

"""Pieces every part of the engine uses: the engine-lock decorator, the installed-query
record SHOW CACHES lists, and parameter counting.
"""

from __future__ import annotations

import functools

from sqlglot import exp

from ..sql.compile import CompiledQuery


def _locked(method):
    """Run an Engine method holding the engine's lock (writes, DDL, fills are serialized;
    lookups of filled keys take no lock)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


# upper bounds (ns) of the read latency buckets QueryEntry counts (noria_py/monitor/metrics.py)
LATENCY_BOUNDS_NS = tuple(
    int(m * 10**e) for e in range(2, 10) for m in (1, 2.5, 5) if m * 10**e <= 10**10
)


class QueryEntry:
    """One installed query (an ad-hoc SELECT or a view) as SHOW CACHES lists it."""

    def __init__(self, name: str, sql: str, status: str, compiled: CompiledQuery | None):
        self.name = name
        self.sql = sql
        self.status = status
        self.compiled = compiled
        self.hits = 0
        self.misses = 0
        self.miss_ns = 0  # time spent filling this query's misses
        # reads by latency bucket (LATENCY_BOUNDS_NS, the last one unbounded): every timed
        # miss, and the hits SelectPrepared.sample_next asked to time
        self.miss_buckets = [0] * (len(LATENCY_BOUNDS_NS) + 1)
        self.hit_buckets = [0] * (len(LATENCY_BOUNDS_NS) + 1)
        self.created: set[int] = {n.id for n in compiled.new_nodes} if compiled else set()
        self.readerless = False  # a view's own entry: its operators, no reader (_install)
        # a proxied entry: why the dataflow does not maintain it (the construct), or None when
        # it could be but the caching rules say no (cache_commands.CacheRules); cacheable is
        # True/False once known, None until SHOW PROXIED QUERIES checks
        self.reason: str | None = None
        self.cacheable: bool | None = None


def _count_params(ast: exp.Expression) -> int:
    n = 0
    for p in ast.find_all(exp.Placeholder):
        if p.this and str(p.this).startswith("p"):
            n = max(n, int(str(p.this)[1:]) + 1)
    return n

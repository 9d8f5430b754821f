"""EXPLAIN (the dataflow plan a query has or would have), SHOW CACHES and the graph as dot."""

from __future__ import annotations

import sys

from sqlglot import exp

from .. import errors as E
from ..dataflow.node import Node
from ..result import Result
from ..sql.compile import CompiledQuery, Compiler
from ..sql.dialect import DIALECT
from ..sql.expr import Unsupported
from ..sql.parse import parse
from .base import _locked
from .reads import _member_order, _normalize
from .selects import SelectPrepared
from .transactions import Txn


class _NoIndexes:
    """Base storage for a plan that installs nothing (Engine.explain): no index is made."""

    def __init__(self, storage) -> None:
        self._storage = storage

    def ensure_index(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, name: str):
        return getattr(self._storage, name)


def _upquery_note(n: Node) -> str:
    """For EXPLAIN: what fills a partial node's missing keys."""
    if not n.partial:
        return ""
    if n.kind == "join":
        return "; fills by join key from both parents"
    cols = getattr(n, "fill_cols", None)
    if n.kind == "reader":
        cols = list(n.key_cols)
    where = ",".join(f"#{c}" for c in cols or [])
    return f"; fills by ({where}) from node {n.parents[0].id}"


def _estimate_bytes(reader) -> int:
    """Approximate memory held by a reader's state: sampled row sizes times row count."""
    total = 0
    sampled = 0
    sample_bytes = 0
    nrows = 0
    for k, rows in reader.state.items():
        n = len(rows)
        nrows += n
        total += sys.getsizeof(k) + 64
        if sampled < 200:
            for r in list(rows)[:4]:
                sample_bytes += sys.getsizeof(r) + sum(sys.getsizeof(v) for v in r)
                sampled += 1
    if sampled:
        total += int(sample_bytes / sampled * nrows)
    return total


class ExplainMixin:
    """EXPLAIN, SHOW CACHES and the graph as dot: a part of ``Engine`` (engine/core.py).

    State it owns: none (reads ``graph``, ``queries`` and the statement cache).
    Calls into other parts: ``_prepare_select`` and ``_discard`` (reads), ``_qualify`` (catalog),
    ``prepare``, ``lifted``, ``_ready`` and ``_run`` (core).
    """

    _EXPLAIN_NAMES = [
        "node",
        "operator",
        "description",
        "parents",
        "materialization",
        "key",
        "domain",
        "reused",
    ]
    _EXPLAIN_TYPES = ["BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"]
    _EXPLAIN_TYPES += ["BIGINT", "VARCHAR"]

    @_locked
    def explain(self, sql: str, params=(), txn: Txn | None = None) -> Result:
        """``EXPLAIN SELECT ...`` without installing anything: the plan of the query as the
        engine would run it (its literal-lifted form when ``lift_literals`` is on, as the
        server runs a text without parameters), from the installed query when there is one,
        else compiled, planned and taken down again. Any other text runs as ``execute`` does.
        The server answers EXPLAIN through this."""
        prev = self._cur
        self._cur = txn if txn is not None else self._txn_default
        try:
            self._ready()
            ast, nparams = parse(sql)
            target = ast.this if isinstance(ast, exp.Describe) else None
            if target is None or isinstance(target, exp.Table):
                return self._run(sql, self.prepare(sql), params)
            self._qualify(ast, self._cur.database)
            return self._explain(ast.this, nparams, install=False)
        finally:
            self._cur = prev

    def _explain(self, target: exp.Expression, nparams: int, install: bool = True) -> Result:
        """EXPLAIN's rows: one per dataflow node of the query, with columns by name, or one
        ``proxied`` row naming why base storage answers it. A text without parameters is
        explained as its literal-lifted form (``lifted``), the statement that answers it.
        ``install=False`` leaves the engine as it was (see ``explain``)."""
        sql = target.sql(DIALECT)
        if nparams == 0 and self.lift_literals:
            lifted = self.lifted(sql)
            if lifted is not None:
                try:
                    target, nparams = parse(lifted[0])
                    sql = lifted[0]
                except E.Error:
                    pass  # explained as written
        if install:
            prep = self._prepare_select(target, nparams, sql)
            if not isinstance(prep, SelectPrepared):
                return self._explain_proxied(getattr(getattr(prep, "entry", None), "reason", None))
            entry = prep.entry
            return self._explain_nodes(entry.compiled.nodes, entry.created, entry.compiled)
        return self._explain_dry(target, nparams)

    def _explain_proxied(self, reason: str | None) -> Result:
        why = "executed on base storage (SQLite)"
        if reason:
            why += f": the dataflow does not maintain {reason}"
        rows = [(None, "proxied", why, "", "none", "", 0, "")]
        return Result(self._EXPLAIN_NAMES, rows, self._EXPLAIN_TYPES, [True] * 8, 1)

    def _explain_nodes(self, nodes, created, cq: CompiledQuery | None = None) -> Result:
        """One row per node; then, for a range read with an aggregate or DISTINCT over the
        range, one ``post-lookup`` row per operation each read applies to its reader's rows
        (``dataflow/post_lookup.py``; no id: they are not in the graph)."""
        from ..dataflow import explain as X

        qualify = len({n.table for n in nodes if n.kind == "base"}) > 1
        rows = []
        for n in sorted(nodes, key=lambda n: n.id):
            rows.append(
                (
                    n.id,
                    n.kind,
                    X.describe(n, n.describe() + _upquery_note(n), qualify),
                    ",".join(str(p.id) for p in n.parents),
                    n.materialization,
                    X.key_labels(n, n.key_columns(), qualify),
                    n.domain,
                    "no" if n.id in created else "yes",
                )
            )
        likes = [op[1] for op, _i in cq.range_ops if op.__class__ is tuple] if cq else []
        if likes:
            # col LIKE ?: the reader's range of the pattern's prefix, then the pattern itself
            reader = cq.reader
            col = X.column_label(reader, reader.range_col, qualify)
            esc = "" if likes[0] == "\\" else f" ESCAPE {likes[0]!r}"
            rows.append(
                (
                    None,
                    "post-lookup",
                    f"{col} LIKE ?{esc}: the range of keys its prefix allows, then the "
                    "pattern on the range's rows (per read)",
                    str(reader.id),
                    "none",
                    "",
                    reader.domain,
                    "no",
                )
            )
        post = cq.post if cq is not None else None
        if post is not None:
            reader = cq.reader
            for n, text in post.describe():
                rows.append(
                    (
                        None,
                        "post-lookup",
                        (X.describe(n, text, qualify) if n is not None else text) + " (per read)",
                        str(reader.id),
                        "none",
                        "",
                        reader.domain,
                        "no",
                    )
                )
        nullable = [post is not None or bool(likes)] + [False] * 7  # post-lookup: no id
        return Result(self._EXPLAIN_NAMES, rows, self._EXPLAIN_TYPES, nullable, len(rows))

    def _explain_dry(self, target: exp.Expression, nparams: int) -> Result:
        """EXPLAIN of a query that installs nothing (``explain``)."""
        entry = self._by_sql.get(_normalize(target))
        if entry is not None:
            if entry.compiled is not None:
                return self._explain_nodes(entry.compiled.nodes, entry.created, entry.compiled)
            return self._explain_proxied(entry.reason)
        if not isinstance(target, exp.Select | exp.Union):
            return self._explain_proxied(None)
        if isinstance(target, exp.Select) and target.args.get("from_") is None:
            return self._explain_proxied("WHERE or GROUP BY without FROM")
        _member_order(target, self.storage.schemas)
        if not self.dataflow:
            return self._explain_proxied("the dataflow is off (dataflow=False)")
        compiler = Compiler(self.graph, self.storage, self.views)
        try:
            cq = compiler.compile_query(target, nparams)
        except Unsupported as e:
            self._discard(compiler)
            return self._explain_proxied(str(e))
        except BaseException:
            self._discard(compiler)
            raise
        try:
            from ..dataflow.plan_upqueries import plan

            new_ids = {id(n) for n in cq.new_nodes}
            # planned as _install would, with base storage's index obligations left out
            for n in plan(cq.reader, cq.new_nodes, self.partial, _NoIndexes(self.storage)):
                if id(n) in new_ids:
                    n.partial = False
            return self._explain_nodes(cq.nodes, {n.id for n in cq.new_nodes}, cq)
        finally:
            self._discard(compiler)

    def _show_caches(self) -> Result:
        from ..cache_commands import show_caches

        return show_caches(self)

    def explain_dot(self) -> str:
        return self.graph.to_dot()

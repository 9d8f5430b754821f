"""The read path's compilation: a SELECT becomes a dataflow query (installed, with a reader)
or is proxied to base storage; the helpers that name and type a query's output columns.
"""

from __future__ import annotations

import collections

from sqlglot import exp

from .. import errors as E
from ..sql import functions as F
from ..sql import proxy_types, transpile
from ..sql import values as V
from ..sql.compile import CompiledQuery, Compiler, in_list_shape, remap_in_lists
from ..sql.dialect import DIALECT
from ..sql.expr import Scope, Unsupported, compile_expr, shown_value
from ..sql.parse import item_name
from ..storage.sqlite import TableSchema
from .base import QueryEntry
from .prepared import ConstPrepared, Prepared, ProxyPrepared, _ViewEntry
from .selects import SelectPrepared


def _selects_star(query: exp.Expression) -> bool:
    """Does a select list of the query (any branch of a UNION) hold ``*`` or ``t.*``?"""
    if isinstance(query, exp.Subquery):
        return _selects_star(query.this)
    if isinstance(query, exp.SetOperation):
        return _selects_star(query.this) or _selects_star(query.expression)
    if isinstance(query, exp.Select):
        return any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in query.expressions
        )
    return False


def _item_names(query: exp.Expression) -> list | None:
    """A SELECT's result column names as this text names them (None with ``*``: the
    compiled query's names then)."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    if not isinstance(query, exp.Select) or _selects_star(query):
        return None
    return [item_name(e) for e in query.expressions]


def _member_order(ast, schemas: dict) -> None:
    """MySQL sorts an ENUM by its members' declared positions and a SET by its bit mask; this
    engine sorts strings as text. Where the two orders could differ, a SELECT's ``ORDER BY e``
    (or by an alias of ``e``) becomes ``ORDER BY e + 0`` (the column's number:
    ``sql/expr.py``), in place; elsewhere (a UNION's ORDER BY, GROUP_CONCAT's or a window's)
    it is refused (1235) rather than answered in another order."""
    _member_aggregates(ast, schemas)
    ordered = [o for o in ast.find_all(exp.Ordered) if isinstance(o.this, exp.Column)]
    if not ordered:
        return
    from ..sql.collation import current

    coll = current()
    tables = [schemas[t.name.lower()] for t in ast.find_all(exp.Table) if t.name.lower() in schemas]

    def member_type(col: exp.Column, among=None):
        """The ENUM/SET type of the column ``col`` names (in a table of ``among``, default:
        any the statement reads), when its order is not the text's."""
        for sch in tables if among is None else among:
            i = sch.index_of(col.name)
            if i is None:
                continue
            ct = sch.columns[i].ctype
            if ct.values is None:
                continue
            keys = [coll.key(m) for m in ct.values]
            if ct.mysql_name == "SET" and len(ct.values) > 1 or keys != sorted(keys):
                return ct
        return None

    for o in ordered:
        col = o.this
        order = o.parent
        select = order.parent if isinstance(order, exp.Order) else None
        if isinstance(select, exp.Select) and select.args.get("order") is order:
            target = _aliased(select, col)
            if target is None:
                continue  # an alias of a computed item: not a column's text
            sch = _own_table(select, target, schemas)
            if sch is not False:
                if sch is not None and member_type(target, [sch]) is not None:
                    o.set("this", exp.Add(this=target.copy(), expression=exp.Literal.number(0)))
                continue
        ct = member_type(col)
        if ct is not None:
            raise E.NotSupportedError(
                f"This version doesn't yet support ORDER BY {ct.mysql_name} column "
                f"'{col.name}' whose declared order differs from its members' text order"
            )


_NUMERIC_AGGS = tuple(
    getattr(exp, n)
    for n in (
        "Sum", "Avg", "Stddev", "StddevPop", "StddevSamp", "Variance", "VariancePop",
        "BitwiseAndAgg", "BitwiseOrAgg", "BitwiseXorAgg",
    )
    if hasattr(exp, n)
)  # fmt: skip
_NUMERIC_AGG_NAMES = frozenset(
    "SUM AVG STD STDDEV STDDEV_POP STDDEV_SAMP VARIANCE VAR_POP VAR_SAMP BIT_AND BIT_OR "
    "BIT_XOR".split()
)


def _member_aggregates(ast, schemas: dict) -> None:
    """SUM, AVG, the statistical and bit aggregates read an ENUM or SET column as its number
    (position, bit mask): ``SUM(e)`` becomes ``SUM(e + 0)`` (``sql/expr.py`` computes it), in
    place, for a column of a base table the aggregate's own SELECT reads. (MIN and MAX compare
    the text, as MySQL does.)"""
    for agg in list(ast.find_all(exp.AggFunc, exp.Anonymous)):
        if isinstance(agg, exp.Anonymous):
            if str(agg.this).upper() not in _NUMERIC_AGG_NAMES or len(agg.expressions) != 1:
                continue
            arg = agg.expressions[0]
        elif isinstance(agg, _NUMERIC_AGGS):
            arg = agg.this
        else:
            continue
        inner = arg.expressions[0] if isinstance(arg, exp.Distinct) and arg.expressions else arg
        if not isinstance(inner, exp.Column):
            continue
        select = agg.find_ancestor(exp.Select)
        sch = _own_table(select, inner, schemas) if select is not None else None
        if not sch:
            continue
        ct = sch.columns[sch.index_of(inner.name)].ctype
        if ct.values is None:
            continue
        inner.replace(exp.Add(this=inner.copy(), expression=exp.Literal.number(0)))


def _own_table(select: exp.Select, col: exp.Column, schemas: dict):
    """The base table of ``select``'s own FROM that ``col`` reads: its schema, None when it
    reads none of them, False when a derived table could be it."""
    frm = select.args.get("from_")
    sources = ([frm.this] if frm is not None else []) + [
        j.this for j in select.args.get("joins") or []
    ]
    found = None
    for src in sources:
        if col.table and src.alias_or_name.lower() != col.table.lower():
            continue
        if not isinstance(src, exp.Table) or src.name.lower() not in schemas:
            return False
        sch = schemas[src.name.lower()]
        if sch.index_of(col.name) is not None:
            found = sch
    return found


def _aliased(select: exp.Select, col: exp.Column) -> exp.Column | None:
    """The column an ORDER BY name sorts by: an unqualified name that is an alias of the
    select list stands for its item (None when that is not a column), else the column."""
    if col.table:
        return col
    low = col.name.lower()
    for e in select.expressions:
        if isinstance(e, exp.Alias) and e.alias.lower() == low:
            return e.this if isinstance(e.this, exp.Column) else None
    return col


def _select_columns(query, schemas: dict):
    """(output name, ColumnDef or None) per output column of a SELECT over base tables only
    (``*`` and ``t.*`` written out): the base column a plain column reference reads, None for
    a computed one. None when a FROM item is not a base table."""
    if not isinstance(query, exp.Select):
        return None
    frm = query.args.get("from_")
    items = ([frm.this] if frm is not None else []) + [
        j.this for j in query.args.get("joins") or []
    ]
    sources: dict[str, TableSchema] = {}
    for it in items:
        if not (isinstance(it, exp.Table) and not it.db and it.name.lower() in schemas):
            return None
        sources[it.alias_or_name.lower()] = schemas[it.name.lower()]
    out = []
    for e in query.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        if isinstance(inner, exp.Star):
            out.extend((c.name, c) for sch in sources.values() for c in sch.columns)
            continue
        if isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
            sch = sources.get(inner.table.lower())
            if sch is None:
                return None
            out.extend((c.name, c) for c in sch.columns)
            continue
        col = None
        if isinstance(inner, exp.Column):
            if inner.table:
                cands = [sources[inner.table.lower()]] if inner.table.lower() in sources else []
            else:
                cands = list(sources.values())
            found = [s.columns[i] for s in cands if (i := s.index_of(inner.name)) is not None]
            col = found[0] if len(found) == 1 else None
        out.append((e.alias_or_name, col))
    return out


_DECLARED_NAMES = frozenset(
    "INT TINYINT SMALLINT MEDIUMINT BIGINT VARCHAR CHAR TEXT MEDIUMTEXT LONGTEXT DECIMAL "
    "DOUBLE FLOAT DATE DATETIME TIMESTAMP TIME BLOB VARBINARY BINARY".split()
)


def _declared_types(ast, kinds: list, schemas: dict) -> list | None:
    """For each output column that is a plain column of a base table: its declared type's
    name (``INT``, ``VARCHAR`` ...), which the wire protocol reports as MySQL does (an INT
    column is a LONG, not a LONGLONG); for a call of an aggregate with a type of its own, that
    type (``_aggregate_types``). None where the column is otherwise computed."""
    cols = _select_columns(ast, schemas)
    aggs = _aggregate_types(ast, len(kinds))
    if cols is None or len(cols) < len(kinds):
        return aggs
    out = []
    for i, ((_n, c), kind) in enumerate(zip(cols, kinds)):
        name = c.ctype.mysql_name.upper() if c is not None else None
        ok = c is not None and c.ctype.kind == kind and name in _DECLARED_NAMES
        out.append(name if ok else (aggs[i] if aggs else None))
    return out


def _aggregate_types(ast, n: int) -> list | None:
    """Per output column of a SELECT: the SQL type of an aggregate whose type the kind does not
    say (BIT_AND/BIT_OR/BIT_XOR are BIGINT UNSIGNED, ``Agg.options["type_name"]``), else None.
    None when no column is one."""
    if not isinstance(ast, exp.Select) or len(ast.expressions) != n:
        return None
    out = []
    for e in ast.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        agg = None
        if type(inner) is exp.Anonymous:
            agg = F.AGGREGATES.get(str(inner.this).upper())
        out.append(agg.options.get("type_name") if agg is not None else None)
    return out if any(out) else None


def _normalize(ast: exp.Expression) -> str:
    return ast.sql(DIALECT)


class ReadsMixin:
    """The read path's compilation: a part of ``Engine`` (engine/core.py).

    State it owns: the installed queries (``queries``, ``_by_sql``, ``_qseq``) with the graph
    they live in (``graph``, set up in ``Engine.__init__``), and ``cache_rules``.
    Calls into other parts: ``_drain`` (the write path) before a new query reads base storage.
    """

    def _prepare_select(
        self, ast, nparams: int, sql: str, view: bool = False, stored: bool = False
    ) -> Prepared:
        """The statement for a SELECT: its installed query, a newly compiled one, or a proxy.
        ``stored``: its values as a write stores them (``Compiler.stored``), a query of its own.

        ``view`` compiles a view's own ``SELECT * FROM v`` for CREATE VIEW: the view's operators
        are installed and maintained, but without a reader of the whole view (see
        ``_install``), and the text is not registered, so reading the view plainly installs a
        reader like any other query."""
        ast = self._collated(ast)
        if isinstance(ast, exp.Select) and ast.args.get("from_") is None:
            if ast.args.get("where") or ast.args.get("group"):
                return self._proxy(
                    ast, nparams, sql, reason="WHERE or GROUP BY without FROM", stored=stored
                )
            scope = Scope([])
            fns, names, kinds = [], [], []
            try:
                for e in ast.expressions:
                    c = compile_expr(e, scope)
                    if not stored:
                        c = shown_value(c, e, scope)  # 1/3 shows 0.3333
                    fns.append(c.fn)
                    kinds.append(c.kind)
                    names.append(item_name(e))
            except Unsupported as e:
                return self._proxy(ast, nparams, sql, reason=str(e), stored=stored)
            return ConstPrepared(fns, names, kinds, nparams)
        _member_order(ast, self.storage.schemas)
        if not self.dataflow and not view:
            return self._proxy(
                ast, nparams, sql, reason="the dataflow is off (dataflow=False)", stored=stored
            )
        base = _normalize(ast)
        key = base + "\x00stored" if stored else base  # (a query of its own)
        entry = None if view else self._by_sql.get(key)
        if entry is not None:
            if entry.compiled is not None:
                return SelectPrepared(entry, nparams, _item_names(ast), sql=sql)
            return self._proxy(ast, nparams, sql, entry, stored=stored)
        if not view and not self.cache_rules.allows(base, ast):
            # not asked for (caching="explicit"), dropped
            return self._proxy(ast, nparams, sql, stored=stored)
        if not view and not stored:
            shared = self._shared_in_lists(ast, nparams, sql)
            if shared is not None:
                return shared
        compiler = Compiler(self.graph, self.storage, self.views)
        compiler.stored = stored
        try:
            cq = compiler.compile_query(ast, nparams)
        except Unsupported as e:
            self._discard(compiler)
            prep = self._proxy(ast, nparams, sql, reason=str(e), stored=stored)
            if stored:
                self._by_sql[key] = prep.entry  # (not compiled again on the next run)
            return prep
        except BaseException:
            self._discard(compiler)
            raise
        self._install(cq, with_reader=not view)
        cq.declared = _declared_types(ast, cq.kinds, self.storage.schemas)
        entry = QueryEntry(self.cache_rules.name_for(key, self), sql.strip(), "cached", cq)
        self.queries[entry.name] = entry
        if view:
            entry.readerless = True
            return _ViewEntry(entry)
        self._by_sql[key] = entry
        return SelectPrepared(entry, nparams, sql=sql)

    def _shared_in_lists(self, ast, nparams: int, sql: str) -> Prepared | None:
        """A SELECT with ``col IN (?, ..., ?)`` keys, answered by the query compiled for its
        lists two parameters long (``compile.in_list_shape``), so that lists of every length
        share one query and one reader (one SHOW CACHES entry). None when the statement has no
        such list of another length or that query does not serve it (it compiles otherwise, or
        not at all): the text then compiles on its own, as every length did before."""
        shape = in_list_shape(ast)
        if shape is None:
            return None
        key = _normalize(shape.ast)
        if key in self._unshared:
            return None
        entry = self._by_sql.get(key)
        if entry is None:
            compiler = Compiler(self.graph, self.storage, self.views)
            try:
                cq = compiler.compile_query(shape.ast, shape.param_count)
            except Unsupported:
                cq = None
            except BaseException:
                self._discard(compiler)
                raise
            if cq is None or remap_in_lists(cq, shape) is None:
                self._discard(compiler)
                if len(self._unshared) >= 10000:
                    self._unshared.clear()
                self._unshared.add(key)
                return None
            self._install(cq)
            cq.declared = _declared_types(shape.ast, cq.kinds, self.storage.schemas)
            shown = shape.ast.transform(
                lambda n: exp.Placeholder() if isinstance(n, exp.Placeholder) else n
            )
            name = self.cache_rules.name_for(key, self)
            entry = QueryEntry(name, shown.sql(dialect=DIALECT), "cached", cq)
            self.queries[entry.name] = entry
            self._by_sql[key] = entry
        elif entry.compiled is None:
            return None  # that text runs on base storage
        cq = remap_in_lists(entry.compiled, shape)
        if cq is None:
            return None
        return SelectPrepared(entry, nparams, _item_names(ast), cq=cq, sql=sql)

    def _discard(self, compiler: Compiler) -> None:
        for n in reversed(compiler.new):
            self.graph.remove(n)

    def _install(self, cq: CompiledQuery, with_reader: bool = True) -> None:
        """Plan, connect and build a compiled query's new nodes.

        ``with_reader=False`` (a view's own query) plans the operators as the reader would
        have them (a view's reader reads every row, so what it reads is full), then leaves the
        reader out: it would hold the whole view and rebuild its published rows on every
        write to it, although views are read through the queries over them."""
        self._drain()  # new nodes replay base storage: it must match the dataflow
        from ..dataflow.plan_upqueries import plan

        to_full = plan(cq.reader, cq.new_nodes, self.partial, self.storage)
        if not with_reader:
            reader = cq.reader
            if any(n is reader for n in cq.new_nodes):
                self.graph.remove(reader)  # registered by the compiler, never connected
            cq.new_nodes = [n for n in cq.new_nodes if n is not reader]
            cq.nodes = [n for n in cq.nodes if n is not reader]
            to_full = [n for n in to_full if n is not reader]
        new_ids = {id(n) for n in cq.new_nodes}
        for n in to_full:
            if id(n) in new_ids:
                n.partial = False  # installed full below (replayed from its parents)
                if hasattr(n, "fill_cols"):
                    n.fill_cols = []
            else:
                n.make_full()
        for n in cq.nodes:
            n.refcount += 1
        from ..dataflow.domain import assign_domains

        assign_domains(self.graph, cq.new_nodes)
        self.graph.install(cq.new_nodes)
        from ..dataflow.plan_upqueries import update_probe_flags

        update_probe_flags(list(self.graph.nodes.values()))
        if self._tx and self._tx_deltas and not self.storage.committed_reads:
            # built inside a transaction, the new full states replayed its uncommitted writes,
            # whose deltas wait for COMMIT: take them back out of those states, so COMMIT adds
            # them once and ROLLBACK leaves them out
            fresh = [n for n in cq.new_nodes if not n.partial and n.materialization != "none"] + [
                n for n in to_full if id(n) not in new_ids
            ]
            self._unreplay(fresh, self._tx_deltas)

    def _unreplay(self, fresh: list, deltas: list) -> None:
        """Apply the negation of ``deltas`` to the states in ``fresh`` only, through whatever
        stateless operators lie between base storage and them (other states are untouched)."""
        if not fresh:
            return
        fresh_ids = {id(n) for n in fresh}
        feeds: set = set(fresh_ids)  # nodes worth visiting: fresh ones and what leads to them
        changed = True
        while changed:
            changed = False
            for n in self.graph.nodes.values():
                if id(n) in feeds or n.materialization != "none":
                    continue
                if any(id(c) in feeds for c, _p in n.children):
                    feeds.add(id(n))
                    changed = True
        # undone last write first: a lookup join reads each table without the writes undone
        # so far (held pending), as the writes were when each was made
        held: list = []
        try:
            for table, batch in reversed(deltas):
                base = self.graph.lookup(f"base({table})")
                if base is None:
                    continue
                queue = collections.deque(
                    (c, port, [(r, -m) for r, m in batch])
                    for c, port in base.children
                    if id(c) in feeds
                )
                while queue:
                    node, port, b = queue.popleft()
                    out = node.on_input(port, b)
                    if not out:
                        continue
                    for c, cport in node.children:
                        if id(c) in feeds:
                            queue.append((c, cport, out))
                held += self.graph.hold([(base, batch)])
        finally:
            self.graph.unhold(held)

    def _next_name(self) -> str:
        self._qseq += 1
        while f"q{self._qseq}" in self.queries:  # a name CREATE CACHE gave
            self._qseq += 1
        return f"q{self._qseq}"

    def _proxy(
        self,
        ast,
        nparams,
        sql,
        entry: QueryEntry | None = None,
        reason: str | None = None,
        stored: bool = False,
    ) -> Prepared:
        """Answer the SELECT from base storage; ``reason``: the construct the dataflow cannot
        maintain (None: it could, but the caching rules keep it proxied). ``stored``: its
        values as a write stores them (as ``_prepare_select``'s)."""
        from ..sql.inline import inline_views

        named = ast  # the query as written: its key among the queries seen
        try:
            # the views it reads inlined, so their bodies keep MySQL's semantics too
            ast = inline_views(ast, self.views)
            # a date summed (averaged ...) is its number, not its text
            ast = proxy_types.numeric_temporal_arguments(ast, self.storage.schemas)
            # a UNION's branches cast to its columns' types, as MySQL converts them
            ast = proxy_types.unify_unions(ast, self.storage.schemas)
            if stored and isinstance(ast, exp.Select) and ast.args.get("distinct"):
                stored = False  # (stored as shown: see Compiler._top_shown)
            rw = transpile.to_sqlite(ast, self.storage.schemas, stored=stored)
        except E.Error:
            raise
        except Exception as e:  # noqa: BLE001 - sqlglot raises assorted errors
            raise E.NotSupportedError(f"cannot run this query: {e}") from None
        text = rw.sql
        kinds = proxy_types.infer_kinds(ast, self.storage.schemas)
        scales = proxy_types.infer_scales(ast, self.storage.schemas)
        if isinstance(ast, exp.SetOperation) or not kinds or None in kinds:
            # a UNION's columns: its branches' types merged as MySQL merges them (SQLite
            # hands back an exact aggregate's text, a DECIMAL only once typed); a derived
            # table's columns typed from its query
            cols = proxy_types.query_columns(ast, self.storage.schemas)
            if cols is not None:
                kinds = [ct.kind for _n, ct in cols]
                scales = [V.column_scale(ct) if ct.kind == V.DECIMAL else None for _n, ct in cols]
        elif kinds and None in kinds:
            # a FLOAT column that ``*`` passes through is shown as the column's values are
            cols = proxy_types.query_columns(ast, self.storage.schemas)
            if cols is not None and all(k is None for k in kinds):  # (``*``: one None)
                kinds = [ct.kind if ct.kind.__class__ is V.FloatKind else None for _n, ct in cols]
                scales = [None] * len(cols)
            elif cols is not None and len(cols) == len(kinds):
                kinds = [
                    ct.kind if k is None and ct.kind.__class__ is V.FloatKind else k
                    for k, (_n, ct) in zip(kinds, cols)
                ]
        if entry is None:
            # validate tables before registering
            for t in named.find_all(exp.Table):
                low = t.name.lower()
                if low and low not in self.storage.schemas and low not in self.views:
                    if not any(
                        isinstance(cte, exp.CTE) and cte.alias.lower() == low
                        for cte in named.find_all(exp.CTE)
                    ):
                        raise E.no_such_table(t.name)
            key = _normalize(named)
            entry = QueryEntry(self._next_name(), sql.strip(), "proxied", None)
            entry.reason = reason
            entry.cacheable = False if reason is not None else None
            self.queries[entry.name] = entry
            self._by_sql[key] = entry
        if reason and entry.reason is None:
            entry.reason = reason
        if stored and isinstance(ast, exp.Select) and len(scales) == len(ast.expressions):
            # a computed DECIMAL keeps its digits; a column keeps its scale (its text)
            scales = [
                s
                if isinstance(e.unalias() if isinstance(e, exp.Alias) else e, exp.Column)
                else None
                for e, s in zip(ast.expressions, scales)
            ]
        prep = ProxyPrepared(text, nparams, entry, kinds)
        prep.out_scales = scales
        prep.param_kinds = rw.param_kinds
        prep.declared = _aggregate_types(ast, len(kinds) if kinds else -1)
        return prep

    def _collated(self, ast: exp.Expression) -> exp.Expression:
        """``ast`` with each comparison of a column that has a collation of its own made under
        it (``a COLLATE utf8mb4_bin``), which base storage answers exactly; as written when
        no table has such a column."""
        if not any(c.ctype.collation for s in self.storage.schemas.values() for c in s.columns):
            return ast
        ast = ast.copy()
        for sel in list(ast.find_all(exp.Select)):
            found = proxy_types.select_scope(sel, self.storage.schemas)
            if found is None:
                continue
            scope, ctypes = found
            distinct = bool(sel.args.get("distinct"))
            for col in list(sel.find_all(exp.Column)):
                if isinstance(col.this, exp.Star) or col.find_ancestor(exp.Select) is not sel:
                    continue
                try:
                    i, _kind = scope.resolve(col)
                except Exception:  # noqa: BLE001 - an outer or unknown column
                    continue
                coll = ctypes[i].collation
                parent = col.parent
                if not coll or isinstance(parent, exp.Collate):
                    continue
                item = parent is sel or (isinstance(parent, exp.Alias) and parent.parent is sel)
                if item and not distinct:
                    continue  # a column shown as it is
                wrapped = exp.Collate(this=col.copy(), expression=exp.Var(this=coll))
                if parent is sel:
                    wrapped = exp.alias_(wrapped, col.name, quoted=True)
                col.replace(wrapped)
        return ast

"""SELECT -> dataflow nodes in the shared graph, reusing nodes that already exist.

The compiler walks a sqlglot SELECT in the order a database plans it: FROM and JOINs (equi-join
conditions become join keys), WHERE (``col = ?`` and ``col IN (?, ...)`` become the reader's key,
other conjuncts a filter), GROUP BY and aggregates (a projection prepares group columns and
aggregate arguments, an Aggregate node computes, HAVING filters), the projection (visible
columns, then hidden key and ORDER BY columns), DISTINCT, and finally a Reader keyed by the
parameters that applies ORDER BY / LIMIT per key.

Every node gets a canonical signature (operator + parameters with columns as positions + parent
signatures); a signature already in the graph is reused, so equal sub-plans are shared between
queries. Anything the dataflow cannot maintain raises ``Unsupported`` and the engine runs the
query on base storage instead.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from sqlglot import exp

from ..dataflow.graph import Graph
from ..dataflow.node import Node
from ..dataflow.ops.aggregate import Aggregate, AggSpec
from ..dataflow.ops.base import BaseTable
from ..dataflow.ops.distinct import Distinct
from ..dataflow.ops.filter import Filter
from ..dataflow.ops.join import Join
from ..dataflow.ops.project import Project
from ..dataflow.ops.reader import Reader
from ..dataflow.ops.union import Union
from ..dataflow.post_lookup import PostLookup
from ..errors import ProgrammingError, bad_field, no_such_table
from . import functions as F
from . import union_types as UT
from . import values as V
from .dialect import DIALECT
from .expr import (
    Compiled,
    Scope,
    Unsupported,
    _escape_char,
    carries_digits,
    compile_expr,
    int_range,
    shown_value,
    truthy,
)
from .functions.aggregates import NUMERIC_AGGREGATES, TEMPORAL_KINDS
from .parse import item_name

# the aggregates the Aggregate operator implements itself, by their sqlglot class; the others
# (STD, VARIANCE, BIT_OR, JSON_ARRAYAGG, ...) parse as calls by name (``sql/dialect.py``) and are
# maintained with their registered accumulator when ``Agg.maintainable`` (``sql/functions``)
AGG_FUNCS = {
    exp.Count: "COUNT",
    exp.Sum: "SUM",
    exp.Avg: "AVG",
    exp.Min: "MIN",
    exp.Max: "MAX",
    exp.GroupConcat: "GROUP_CONCAT",
}
_TYPED_REGISTERED = {exp.JSONObjectAgg: "JSON_OBJECTAGG"}  # registered, but parsed to a class


def agg_name(n: exp.Expression) -> str | None:
    """The MySQL name of the aggregate ``n`` calls, or None when ``n`` is no aggregate call."""
    name = AGG_FUNCS.get(type(n))
    if name is not None:
        return name
    if type(n) is exp.Anonymous:
        name = str(n.this).upper()
        return name if name in F.AGGREGATES else None
    return _TYPED_REGISTERED.get(type(n))


def _has_agg(e: exp.Expression) -> bool:
    return any(agg_name(n) is not None for n in e.walk())


def _agg_calls(e: exp.Expression) -> list[exp.Expression]:
    return [n for n in e.walk() if agg_name(n) is not None]


def _inside_agg(n: exp.Expression) -> bool:
    p = n.parent
    while p is not None:
        if agg_name(p) is not None:
            return True
        p = p.parent
    return False


@dataclass
class Rel:
    """A relation during compilation: a node plus what its columns are called."""

    node: Node
    cols: list[tuple[str | None, str, str]]  # (qualifier, name, kind)
    nullable: list[bool]
    # qualifier -> primary key column positions (for functional dependency in GROUP BY)
    pks: dict[str, list[int]] = field(default_factory=dict)
    scales: list | None = None  # DECIMAL scale per column (None: unknown)
    ranges: list | None = None  # integer (lowest, highest, unsigned) per column (None: unknown)
    # columns whose DECIMAL values may hold more digits than their scale (an AVG, a quotient)
    inexact: frozenset = frozenset()

    def renamed(self, qualifier: str) -> Rel:
        """This relation under one name (a view, a derived table): its columns qualified by
        it, no keys known."""
        return Rel(
            self.node,
            [(qualifier, n, k) for _, n, k in self.cols],
            self.nullable,
            {},
            self.scales,
            self.ranges,
            self.inexact,
        )

    def scope(self) -> Scope:
        s = Scope(self.cols, self.scales, self.ranges)
        s.inexact = self.inexact
        return s


@dataclass
class CompiledQuery:
    """What the engine needs to answer a SELECT from the dataflow."""

    reader: Reader
    names: list[str]
    kinds: list[str]
    nullable: list[bool]
    key_params: list[list[int]]  # per key column: the parameter positions it can take
    key_kinds: list[str]
    nodes: list[Node]
    new_nodes: list[Node]
    default_fn: object = None  # key -> rows, for implicit global aggregates
    merge_order: object = None  # sort key for multi-key lookups with ORDER BY
    merge_limit: tuple | None = None  # (offset, limit) after merging multi-key results
    merge_distinct: bool = False
    declared: list | None = None  # per output column: its declared type's name, or None
    visible: int = 0
    # [(op, param index)] on the range column: op is >, >=, <, <= or ("like", escape)
    range_ops: list = field(default_factory=list)
    range_kind: str | None = None
    limit_param: int | None = None  # LIMIT ? / OFFSET ?: parameter positions
    offset_param: int | None = None
    order: list = field(default_factory=list)
    limit: int | None = None
    offset: int = 0
    views: frozenset = frozenset()  # lower-case names of the views the query reads, inlined
    fault_source: Node | None = None  # the projection whose rows may hold a Fault (1690)
    # a range read's aggregate / HAVING / select list / DISTINCT over its reader's rows
    post: PostLookup | None = None

    @property
    def multi_key(self) -> bool:
        return any(len(p) > 1 for p in self.key_params)


def _joined(left: Rel, right: Rel) -> list | None:
    if left.ranges is None and right.ranges is None:
        return None
    return (left.ranges or [None] * len(left.cols)) + (right.ranges or [None] * len(right.cols))


def _flatten_and(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return _flatten_and(e.this) + _flatten_and(e.expression)
    return [e]


def _placeholder_index(e: exp.Expression) -> int | None:
    if isinstance(e, exp.Placeholder) and e.this and str(e.this).startswith("p"):
        return int(str(e.this)[1:])
    return None


def _like_conj(c: exp.Expression):
    """``col LIKE ?`` (``ESCAPE`` a literal character, or none: the backslash) as a range
    condition on ``col``: ``(col, [(("like", escape), parameter index)])``; None for anything
    else. A read serves it from the range of keys the bound pattern's prefix allows and keeps
    the rows the pattern matches (``engine/like_reads.py``)."""
    escape = "\\"
    if isinstance(c, exp.Escape):
        e = c.expression
        if isinstance(e, exp.Null):
            pass
        elif isinstance(e, exp.Literal) and e.is_string:
            escape = _escape_char(e.this)
        else:
            return None
        c = c.this
    if not isinstance(c, exp.Like) or not isinstance(c.this, exp.Column):
        return None
    idx = _placeholder_index(c.expression)
    if idx is None:
        return None
    return c.this, [(("like", escape), idx)]


def _has(e: exp.Expression, types) -> bool:
    return e.find(*types) is not None


def _and_all(parts: list[exp.Expression]) -> exp.Expression:
    out = parts[0]
    for p in parts[1:]:
        out = exp.And(this=out, expression=p)
    return out


class Compiler:
    def __init__(self, graph: Graph, storage, views: dict):
        self.graph = graph
        self.storage = storage
        self.views = views  # lower name -> sqlglot query AST
        self.nodes: list[Node] = []
        self.new: list[Node] = []
        self._view_stack: list[str] = []
        self.views_used: set[str] = set()
        # building a range read's post-lookup operators (``dataflow/post_lookup.py``): nodes
        # are made but neither shared nor added to the graph
        self._detached = False
        # the SELECT of a write (INSERT ... SELECT): its result keeps a quotient's digits
        self.stored = False

    # --- node creation with reuse ----------------------------------------------------------
    def _mk(self, signature: str, factory) -> Node:
        if self._detached:
            node = factory()
            node.signature = signature
            return node
        node = self.graph.lookup(signature)
        if node is None:
            node = factory()
            node = self.graph.add(node, signature)
            self.new.append(node)
        if node not in self.nodes:
            self.nodes.append(node)
        return node

    def canon(self, e: exp.Expression, scope: Scope) -> str:
        """Canonical text of an expression with columns replaced by their input positions."""

        def repl(n):
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                i, _ = scope.resolve(n)
                return exp.Var(this=f"#{i}")
            return n

        return e.copy().transform(repl).sql(DIALECT)

    # --- FROM ------------------------------------------------------------------------------
    def base(self, name: str, alias: str | None) -> Rel:
        low = name.lower()
        if low in self.views:
            if low in self._view_stack:
                raise ProgrammingError(f"View '{name}' references itself", 1462, "HY000")
            self._view_stack.append(low)
            self.views_used.add(low)
            try:
                rel = self.relation_of_query(self.views[low].copy())
            except ProgrammingError as e:
                if e.errno not in (1054, 1146, 1356):
                    raise
                # what the view reads was dropped or changed (ALTER, DROP): MySQL's error
                err = ProgrammingError(
                    f"View '{name}' references invalid table(s) or column(s) or function(s) "
                    "or definer/invoker of view lack rights to use them",
                    1356,
                    "HY000",
                )
                err.inner = e  # CREATE VIEW reports what its own query lacks
                raise err from None
            finally:
                self._view_stack.pop()
            return rel.renamed(alias or name)
        schema = self.storage.schemas.get(low)
        if schema is None:
            raise no_such_table(name)
        names = [c.name for c in schema.columns]
        kinds = [c.ctype.kind for c in schema.columns]
        node = self._mk(
            f"base({schema.name})", lambda: BaseTable(schema.name, names, kinds, self.storage)
        )
        q = alias or schema.name
        rel = Rel(
            node,
            [(q, n, k) for n, k in zip(names, kinds)],
            [c.nullable for c in schema.columns],
            {q.lower(): list(schema.primary_key)} if schema.primary_key else {},
            [V.column_scale(c.ctype) for c in schema.columns],
            [V.int_range(c.ctype) for c in schema.columns],
        )
        return rel

    def from_item(self, item: exp.Expression) -> Rel:
        if isinstance(item, exp.Table):
            alias = item.alias or None
            if isinstance(item.this, exp.Identifier):
                return self.base(item.name, alias)
            raise Unsupported(f"FROM {item.sql(DIALECT)}")
        if isinstance(item, exp.Subquery):
            inner = item.this
            rel = self.relation_of_query(inner)
            q = item.alias or None
            if q is None:
                raise ProgrammingError("Every derived table must have its own alias", 1248, "42000")
            return rel.renamed(q)
        raise Unsupported(f"FROM item {type(item).__name__}")

    def relation_of_query(self, q: exp.Expression) -> Rel:
        """Compile a query used as a relation (a view or a subquery in FROM): no parameters."""
        if q.find(exp.Placeholder):
            raise Unsupported("parameters inside a subquery or view")
        if isinstance(q, exp.Subquery):
            return self.relation_of_query(q.this)
        if isinstance(q, exp.Select):
            if q.args.get("limit") or q.args.get("offset"):
                raise Unsupported("LIMIT inside a subquery or view")
            if q.args.get("order"):
                # a relation has no order (MySQL ignores it too): dropping it also keeps hidden
                # ORDER BY columns out of the relation's columns
                q = q.copy()
                q.set("order", None)
            plan = self.plan_select(q, top=False)
            return plan.rel
        if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
            if q.args.get("limit") or q.args.get("offset"):
                raise Unsupported("LIMIT inside a subquery or view")
            return self.union_rel(q)
        raise Unsupported(f"query {type(q).__name__}")

    def join_rel(self, left: Rel, join: exp.Join, where_conj: list[exp.Expression]) -> Rel:
        right = self.from_item(join.this)
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if side in ("RIGHT", "FULL") or kind in ("NATURAL",):
            raise Unsupported(f"{side or kind} JOIN")
        outer = side == "LEFT"
        lscope = left.scope()
        rscope = right.scope()
        conds: list[exp.Expression] = []
        using = join.args.get("using")
        if using:
            for ident in using:
                name = ident.name if hasattr(ident, "name") else str(ident)
                conds.append(
                    exp.EQ(
                        this=exp.column(name, table=self._qual_of(left, name)),
                        expression=exp.column(name, table=self._qual_of(right, name)),
                    )
                )
        on = join.args.get("on")
        conds.extend(_flatten_and(on))
        if not conds and not outer:
            # comma join / CROSS JOIN: take equi-conditions from WHERE
            for c in list(where_conj):
                pair = self._equi(c, lscope, rscope)
                if pair is not None:
                    conds.append(c)
                    where_conj.remove(c)
        lkeys: list[int] = []
        rkeys: list[int] = []
        rest: list[exp.Expression] = []
        for c in conds:
            pair = self._equi(c, lscope, rscope)
            if pair is not None:
                li, ri = pair
                lk = left.cols[li][2]
                rk = right.cols[ri][2]
                if lk != rk and not (lk in V.NUMERIC_KINDS and rk in V.NUMERIC_KINDS):
                    raise Unsupported("join on columns of different types")
                lkeys.append(li)
                rkeys.append(ri)
            else:
                rest.append(c)
        if not lkeys:
            raise Unsupported("join without an equality condition")
        if rest:
            if outer:
                # conditions on the right side alone can filter the right input
                for c in rest:
                    try:
                        for col in c.find_all(exp.Column):
                            rscope.resolve(col)
                    except ProgrammingError:
                        raise Unsupported("LEFT JOIN condition on the left side") from None
                right = self.filter_rel(right, rest)
            else:
                where_conj.extend(rest)
        sig = (
            f"join[{'left' if outer else 'inner'}]({left.node.signature};{right.node.signature};"
            f"{lkeys};{rkeys})"
        )
        lnode, rnode = left.node, right.node
        node = self._mk(sig, lambda: Join(lnode, rnode, lkeys, rkeys, outer))
        nl = len(left.cols)
        pks = dict(left.pks)
        if not outer:
            for q, pk in right.pks.items():
                pks[q] = [nl + i for i in pk]
        return Rel(
            node,
            left.cols + right.cols,
            left.nullable + ([True] * len(right.cols) if outer else right.nullable),
            pks,
            left.scales + right.scales if left.scales and right.scales else None,
            _joined(left, right),
            left.inexact | frozenset(nl + i for i in right.inexact),
        )

    def _qual_of(self, rel: Rel, name: str) -> str | None:
        for q, n, _ in rel.cols:
            if n.lower() == name.lower():
                return q
        raise bad_field(name, "from clause")

    def _equi(self, c, lscope: Scope, rscope: Scope):
        if not isinstance(c, exp.EQ):
            return None
        a, b = c.this, c.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
            return None

        def res(scope, col):
            try:
                return scope.resolve(col)[0]
            except ProgrammingError:
                return None

        la, rb = res(lscope, a), res(rscope, b)
        if la is not None and rb is not None and res(rscope, a) is None and res(lscope, b) is None:
            return la, rb
        lb, ra = res(lscope, b), res(rscope, a)
        if lb is not None and ra is not None and res(rscope, b) is None and res(lscope, a) is None:
            return lb, ra
        return None

    def filter_rel(self, rel: Rel, conds: list[exp.Expression]) -> Rel:
        if not conds:
            return rel
        pred = _and_all(conds)
        if pred.find(exp.Placeholder):
            raise Unsupported("parameter in a filter that is not `col = ?`")
        if pred.find(exp.Subquery, exp.Select, exp.Exists):
            raise Unsupported("subquery in WHERE")
        scope = rel.scope()
        c = compile_expr(pred, scope, allow_params=False)
        if c.faults:
            # MySQL raises 1690 when it reads a row that overflows; which rows a read reaches
            # depends on its plan, so base storage evaluates the condition as MySQL does
            raise Unsupported("arithmetic that may overflow in a condition")
        fn = c.fn

        def pred_fn(r, p, fn=fn):
            v = fn(r, p)
            return v is not None and truthy(v)

        text = self.canon(pred, scope)
        parent = rel.node
        node = self._mk(f"filter({parent.signature};{text})", lambda: Filter(parent, pred_fn, text))
        return Rel(node, rel.cols, rel.nullable, rel.pks, rel.scales, rel.ranges, rel.inexact)

    def _top_shown(self, visible: int, n: int, distinct: bool = False):
        """The result's columns whose values are as MySQL shows them: all of them, or with
        ``stored`` (the SELECT of an INSERT ... SELECT) all but the visible ones, which keep
        every digit a quotient carries, as MySQL stores them. A DISTINCT result is stored as
        shown: MySQL removes its duplicates in a temporary table of the shown types."""
        if self.stored and not distinct:
            return frozenset(range(visible, n))
        return n

    def project_rel(
        self,
        rel: Rel,
        exprs: list[exp.Expression],
        names: list[str],
        scope=None,
        faults: frozenset = frozenset(),
        shown: int | frozenset = 0,
    ) -> Rel:
        """A projection of ``exprs``; the columns in ``faults`` (the query's visible result,
        read by nothing but its reader) may hold a ``Fault`` for a row that overflows, others
        must not be able to overflow. The ``shown`` columns (a count of the first ones, or a set
        of positions) are values as MySQL shows, compares and groups them (a DECIMAL rounded to
        its scale); the others keep every digit for what reads them (SUM adds a quotient's
        digits)."""
        scope = scope or rel.scope()
        if isinstance(shown, int):
            shown = frozenset(range(shown))
        compiled: list[Compiled] = []
        rounded = []  # the columns shown otherwise than computed: part of the node's identity
        for i, e in enumerate(exprs):
            c = compile_expr(e, scope, allow_params=False)
            if c.faults and i not in faults:
                raise Unsupported("arithmetic that may overflow feeding another operator")
            if i in shown:
                s = shown_value(c, e, scope)
                if s is not c:
                    rounded.append(str(i))
                c = s
            compiled.append(c)
        cols = [c.col for c in compiled]
        if all(c is not None for c in cols):
            text = ",".join(f"#{c}" for c in cols)
        else:
            text = ",".join(self.canon(e, scope) for e in exprs)
        parent = rel.node
        kinds = [c.kind for c in compiled]
        fns = [c.fn for c in compiled]
        nullable = []
        for c in compiled:
            nullable.append(rel.nullable[c.col] if c.col is not None else True)
        catch = frozenset(i for i in faults if cols[i] is None)
        node = self._mk(
            f"project({parent.signature};{text}{';faults' if catch else ''}"
            f"{';shown=' + ','.join(rounded) if rounded else ''})",
            lambda: Project(parent, fns, cols, list(names), kinds, text, catch),
        )
        ranges = [int_range(c) if c.kind == V.INT else None for c in compiled]
        scales = [c.scale if c.kind in (V.DECIMAL, V.INT) else None for c in compiled]
        inexact = frozenset(
            i
            for i, (c, e) in enumerate(zip(compiled, exprs))
            if i not in shown and c.kind == V.DECIMAL and carries_digits(e, scope)
        )
        return Rel(
            node,
            [(None, n, k) for n, k in zip(names, kinds)],
            nullable,
            {},
            scales,
            ranges,
            inexact,
        )

    # --- SELECT ----------------------------------------------------------------------------
    def from_rel(self, sel: exp.Select, where_conj: list[exp.Expression]) -> Rel:
        from_ = sel.args.get("from_")
        if from_ is None:
            raise Unsupported("SELECT without FROM")
        rel = self.from_item(from_.this)
        for j in sel.args.get("joins") or []:
            rel = self.join_rel(rel, j, where_conj)
        return rel

    def expand_star(self, sel: exp.Select, rel: Rel) -> tuple[list[exp.Expression], list[str]]:
        exprs: list[exp.Expression] = []
        names: list[str] = []
        for e in sel.expressions:
            if isinstance(e, exp.Star):
                for q, n, _ in rel.cols:
                    exprs.append(exp.column(n, table=q) if q else exp.column(n))
                    names.append(n)
                continue
            if isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                qual = e.table.lower()
                found = False
                for q, n, _ in rel.cols:
                    if (q or "").lower() == qual:
                        exprs.append(exp.column(n, table=q))
                        names.append(n)
                        found = True
                if not found:
                    raise no_such_table(e.table)
                continue
            if isinstance(e, exp.Alias):
                exprs.append(e.this)
                names.append(e.alias)
            else:
                exprs.append(e)
                names.append(item_name(e))
        return exprs, names

    def plan_select(self, sel: exp.Select, top: bool) -> _Plan:
        if sel.args.get("with_") or sel.args.get("with"):
            raise Unsupported("WITH")
        if sel.args.get("windows") or sel.find(exp.Window):
            raise Unsupported("window functions")
        where_conj = _flatten_and(sel.args["where"].this) if sel.args.get("where") else []
        rel = self.from_rel(sel, where_conj)
        scope = rel.scope()

        # parameters -> key columns
        key_exprs: list[exp.Column] = []
        key_params: list[list[int]] = []
        rest: list[exp.Expression] = []
        for c in where_conj:
            k = self._param_conj(c)
            if k is not None:
                col, params = k
                scope.resolve(col)  # validates the column
                key_exprs.append(col)
                key_params.append(params)
            else:
                rest.append(c)
        if key_exprs and not top:
            raise Unsupported("parameters in a subquery")
        range_col = None
        range_ops: list = []
        if top:
            rest2 = []
            for c in rest:
                r = self._range_conj(c)
                if r is None:
                    rest2.append(c)
                    continue
                col, ops = r
                scope.resolve(col)
                if range_col is not None and self.canon(col, scope) != self.canon(range_col, scope):
                    raise Unsupported("range parameters on more than one column")
                range_col = col
                range_ops.extend(ops)
            rest = rest2
        for c in rest:
            if c.find(exp.Placeholder):
                raise Unsupported("parameter that is not `col = ?` or `col IN (?, ...)`")
        rel = self.filter_rel(rel, rest)
        scope = rel.scope()

        exprs, names = self.expand_star(sel, rel)
        for e in exprs:
            if e.find(exp.Placeholder):
                raise Unsupported("parameter in the select list")
            if e.find(exp.Subquery, exp.Select):
                raise Unsupported("subquery in the select list")
        having = sel.args.get("having")
        order = sel.args.get("order")
        group = sel.args.get("group")
        is_agg = bool(group) or any(_has_agg(e) for e in exprs) or (having is not None)
        if order is not None:
            for o in order.expressions:
                if o.find(exp.Placeholder):
                    raise Unsupported("parameter in ORDER BY")

        plan = _Plan()
        plan.names = names
        plan.key_params = key_params
        post = False
        if range_col is not None:
            # an aggregate or DISTINCT above the range is applied by each read to the rows of
            # its range (``dataflow/post_lookup.py``)
            post = is_agg or bool(sel.args.get("distinct"))
            plan.range_ops = range_ops
            key_exprs = key_exprs + [range_col]  # carried as a hidden column after the keys
        if is_agg:
            self._plan_aggregate(
                plan, sel, rel, exprs, names, key_exprs, group, having, order, top, post
            )
        else:
            self._plan_plain(plan, sel, rel, exprs, names, key_exprs, order, top, post)
        if range_col is not None:
            plan.range_pos = plan.key_pos[-1]
            plan.key_pos = plan.key_pos[:-1]
        return plan

    @staticmethod
    def _check_range_kinds(parent: Node, key_pos, rng: int) -> None:
        """Refuse a range reader whose columns it cannot order or key as MySQL compares them.
        Strings are keyed and ordered by the engine's collation (``dataflow/intervals.py``); a
        column with a collation of its own never gets here (its comparisons are written with
        ``COLLATE``). An ENUM or SET range column orders by member position in MySQL's ORDER
        BY, and a JSON one compares as JSON: those stay with base storage, as does a column of
        unknown type."""
        kinds = parent.kinds
        if any(kinds[i] == V.NULL for i in list(key_pos) + [rng]):
            raise Unsupported("range parameters with a column of unknown type")
        kind = kinds[rng]
        if kind == V.STR:
            if kind.__class__ is V.MemberKind:
                raise Unsupported("range parameters on an ENUM or SET column")
            src = parent.source_column(rng)
            ctype = src[0].column_type(src[1]) if src is not None else None
            if ctype is not None and ctype.mysql_name == "JSON":
                raise Unsupported("range parameters on a JSON column")

    def _range_conj(self, c: exp.Expression):
        like = _like_conj(c)
        if like is not None:
            return like
        flip = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}
        names = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
        if type(c) in names:
            a, b = c.this, c.expression
            if isinstance(a, exp.Column) and _placeholder_index(b) is not None:
                return a, [(names[type(c)], _placeholder_index(b))]
            if isinstance(b, exp.Column) and _placeholder_index(a) is not None:
                return b, [(names[flip[type(c)]], _placeholder_index(a))]
        if isinstance(c, exp.Between) and isinstance(c.this, exp.Column):
            lo, hi = _placeholder_index(c.args["low"]), _placeholder_index(c.args["high"])
            if lo is not None and hi is not None:
                return c.this, [(">=", lo), ("<=", hi)]
        return None

    def _param_conj(self, c: exp.Expression):
        if isinstance(c, exp.EQ):
            a, b = c.this, c.expression
            if isinstance(a, exp.Column) and _placeholder_index(b) is not None:
                return a, [_placeholder_index(b)]
            if isinstance(b, exp.Column) and _placeholder_index(a) is not None:
                return b, [_placeholder_index(a)]
        if isinstance(c, exp.In) and isinstance(c.this, exp.Column) and not c.args.get("query"):
            idx = [_placeholder_index(e) for e in c.expressions]
            if idx and all(i is not None for i in idx):
                return c.this, idx
        return None

    def _order_items(self, order, names, exprs):
        """Resolve ORDER BY items to ('visible', index) or ('expr', expression)."""
        items = []
        if order is None:
            return items
        for o in order.expressions:
            e = o.this
            desc = bool(o.args.get("desc"))
            if isinstance(e, exp.Literal) and not e.is_string:
                pos = int(e.this) - 1
                if not (0 <= pos < len(names)):
                    raise bad_field(e.this, "order clause")
                items.append(("visible", pos, desc))
                continue
            if isinstance(e, exp.Column) and not e.table:
                low = e.name.lower()
                hits = [i for i, n in enumerate(names) if n.lower() == low]
                if hits:
                    items.append(("visible", hits[0], desc))
                    continue
            for i, x in enumerate(exprs):
                if x == e:
                    items.append(("visible", i, desc))
                    break
            else:
                items.append(("expr", e, desc))
        return items

    @staticmethod
    def _faults(top: bool, visible: int, order_spec: list) -> frozenset:
        """The result columns that may hold a Fault: a top query's visible columns that the
        reader does not sort by."""
        if not top:
            return frozenset()
        return frozenset(range(visible)) - {i for i, _d in order_spec}

    def _plan_plain(
        self, plan, sel, rel: Rel, exprs, names, key_exprs, order, top=False, post=False
    ):
        scope = rel.scope()
        order_items = self._order_items(order, names, exprs)
        proj_exprs = list(exprs)
        proj_names = list(names)
        key_pos = []
        for k in key_exprs:
            key_pos.append(len(proj_exprs))
            proj_exprs.append(k)
            proj_names.append(f"__key{len(key_pos)}")
        order_spec = []
        for kind, val, desc in order_items:
            if kind == "visible":
                order_spec.append((val, desc))
            else:
                if sel.args.get("distinct"):
                    raise Unsupported("ORDER BY a column not in a DISTINCT select list")
                order_spec.append((len(proj_exprs), desc))
                proj_exprs.append(val)
                proj_names.append(f"__order{len(order_spec)}")
        faults = self._faults(top, len(exprs), order_spec)
        distinct = bool(sel.args.get("distinct"))
        shown = self._top_shown(len(exprs), len(proj_exprs), distinct) if top else 0
        out = self.project_rel(rel, proj_exprs, proj_names, scope, faults, shown)
        if out.node.faults:
            plan.fault_source = out.node
        if sel.args.get("distinct") and sel.args["distinct"].args.get("on"):
            raise Unsupported("DISTINCT ON")
        if post:
            # SELECT DISTINCT over a range: the reader keeps the rows, each read removes the
            # duplicates of its range's visible columns
            plan.post = PostLookup(None, None, None, len(exprs), names, out.node.kinds)
        elif sel.args.get("distinct"):
            parent = out.node
            node = self._mk(f"distinct({parent.signature})", lambda: Distinct(parent))
            out = Rel(node, out.cols, out.nullable, {}, out.scales, out.ranges, out.inexact)
        plan.rel = Rel(out.node, out.cols, out.nullable, {}, out.scales, out.ranges, out.inexact)
        plan.visible = len(exprs)
        plan.key_pos = key_pos
        plan.order = order_spec
        plan.distinct = bool(sel.args.get("distinct")) and not post
        plan.kinds = [k for _, _, k in out.cols[: len(exprs)]]
        plan.nullable = out.nullable[: len(exprs)]

    def _plan_aggregate(
        self,
        plan,
        sel,
        rel: Rel,
        exprs,
        names,
        key_exprs,
        group,
        having,
        order,
        top=False,
        post=False,
    ):
        """The aggregate of a SELECT. With ``post`` (range parameters: the last of
        ``key_exprs`` is the range column) the dataflow keeps only the projection beneath the
        aggregate, with the key and range columns after its own, for a range reader; the
        aggregate, HAVING, the select list and DISTINCT are built but not installed, and each
        read applies them to the rows of its range (``dataflow/post_lookup.py``)."""
        scope = rel.scope()
        # GROUP BY items may name select aliases or ordinals
        group_exprs: list[exp.Expression] = []
        if group is not None:
            for g in group.expressions:
                if isinstance(g, exp.Literal) and not g.is_string:
                    pos = int(g.this) - 1
                    if not (0 <= pos < len(exprs)):
                        raise bad_field(g.this, "group statement")
                    g = exprs[pos]
                elif isinstance(g, exp.Column) and not g.table:
                    try:
                        scope.resolve(g)
                    except ProgrammingError:
                        hits = [i for i, n in enumerate(names) if n.lower() == g.name.lower()]
                        if not hits:
                            raise
                        g = exprs[hits[0]]
                if _has_agg(g):
                    raise ProgrammingError("Can't group on an aggregate", 1056, "42000")
                group_exprs.append(g)
        implicit = group is None
        group_canon = [self.canon(g, scope) for g in group_exprs]
        multi = any(len(p) > 1 for p in plan.key_params)
        for k in key_exprs[:-1] if post else key_exprs:
            c = self.canon(k, scope)
            if c not in group_canon:
                if post and (multi or implicit):
                    # aggregated over the rows of every key a read asks for (one group with no
                    # GROUP BY); a single key's value is one group value, so grouping by it
                    # lets the select list name it, as for a query without a range
                    continue
                if multi and not implicit:
                    raise Unsupported("IN parameters on a column that is not grouped")
                if multi and implicit:
                    raise Unsupported("IN parameters with an aggregate over all keys")
                group_exprs.append(k)
                group_canon.append(c)

        # functional dependency: columns of a table whose primary key is grouped
        def fd_ok(col: exp.Column) -> bool:
            i, _ = scope.resolve(col)
            for _q, pk in rel.pks.items():
                if i in pk or not pk:
                    continue
                if all(f"#{p}" in group_canon for p in pk):
                    # i must belong to the same table as pk
                    qual = rel.cols[i][0]
                    if qual is not None and (qual.lower() == _q):
                        return True
            return False

        # collect aggregates
        aggs: list[exp.Expression] = []
        agg_canon: list[str] = []

        def collect(e: exp.Expression):
            for a in _agg_calls(e):
                if _inside_agg(a):
                    raise ProgrammingError("Invalid use of group function", 1111, "HY000")
                c = self.canon(a, scope)
                if c not in agg_canon:
                    agg_canon.append(c)
                    aggs.append(a)

        alias_map = {n.lower(): e for n, e in zip(names, exprs)}
        having_expr = having.this if having is not None else None
        if having_expr is not None:
            having_expr = self._subst_aliases(having_expr, alias_map, scope)
        for e in exprs:
            collect(e)
        if having_expr is not None:
            collect(having_expr)
        order_items = self._order_items(order, names, exprs)
        for kind, val, _ in order_items:
            if kind == "expr":
                collect(val)

        # bare columns outside aggregates must be grouped (or functionally dependent)
        def check_bare(e: exp.Expression):
            for col in e.find_all(exp.Column):
                if _inside_agg(col):
                    continue
                c = self.canon(col, scope)
                if c in group_canon:
                    continue
                inside_group = False
                for g, gc in zip(group_exprs, group_canon):
                    if not isinstance(g, exp.Column) and gc in self.canon(e, scope):
                        inside_group = True
                if inside_group:
                    continue
                if fd_ok(col):
                    group_exprs.append(col)
                    group_canon.append(c)
                    continue
                raise Unsupported("non-aggregated column not in GROUP BY")

        for e in exprs:
            check_bare(e)
        if having_expr is not None:
            check_bare(having_expr)
        for kind, val, _ in order_items:
            if kind == "expr":
                check_bare(val)

        # the projection feeding the aggregate: group columns, then aggregate arguments
        pre_exprs = list(group_exprs)
        specs: list[AggSpec] = []
        for a in aggs:
            func = agg_name(a)
            if func in F.AGGREGATES:
                arg = self._registered_agg_args(func, a)
            else:
                arg = a.this
            distinct = False
            order_spec = []
            separator = ","
            if func == "GROUP_CONCAT":
                if a.args.get("separator") is not None:
                    sep = a.args["separator"]
                    if not isinstance(sep, exp.Literal):
                        raise Unsupported("non-literal GROUP_CONCAT separator")
                    separator = sep.this
                if isinstance(arg, exp.Order):
                    for o in arg.expressions:
                        order_spec.append((o.this, bool(o.args.get("desc"))))
                    arg = arg.this
            if isinstance(arg, exp.Distinct):
                distinct = True
                arg_list = list(arg.expressions)
            elif arg is None or isinstance(arg, exp.Star):
                arg_list = []
            elif isinstance(arg, list):
                arg_list = arg
            else:
                arg_list = [arg]
            if func != "COUNT" and not arg_list:
                raise ProgrammingError(f"{func}(*) is not valid", 1064, "42000")
            if func in ("SUM", "AVG", "MIN", "MAX") and len(arg_list) != 1:
                raise ProgrammingError(f"{func} takes one argument", 1064, "42000")
            positions = []
            kinds = []
            scale = 0
            for x in arg_list:
                c = compile_expr(x, scope, allow_params=False)
                if c.kind in TEMPORAL_KINDS and func in NUMERIC_AGGREGATES:
                    # summed as the number its digits spell, as MySQL reads it
                    x = exp.Add(this=x.copy(), expression=exp.Literal.number(0))
                    c = compile_expr(x, scope, allow_params=False)
                positions.append(len(pre_exprs))
                pre_exprs.append(x)
                kinds.append(c.kind)
                if c.kind == V.DECIMAL and c.scale is not None:
                    scale = c.scale  # a column's or a computed DECIMAL's (AVG shows 4 more)
                elif c.col is not None:
                    ct = rel.node.column_type(c.col)
                    if ct is not None and ct.kind == V.DECIMAL:
                        scale = ct.scale or 0
            ord_pos = []
            for x, d in order_spec:
                ord_pos.append((len(pre_exprs), d))
                pre_exprs.append(x)
            specs.append(
                AggSpec(
                    func,
                    positions,
                    distinct,
                    kinds[0] if kinds else V.INT,
                    separator,
                    ord_pos,
                    scale,
                )
            )
        ngroup = len(group_exprs)
        pre_names = [f"__g{i}" for i in range(ngroup)] + [
            f"__a{i}" for i in range(len(pre_exprs) - ngroup)
        ]
        pre_keys = []
        if post:
            # the reader's key and range columns, after what the aggregate reads
            for k in key_exprs:
                pre_keys.append(len(pre_exprs))
                pre_exprs.append(k)
                pre_names.append(f"__key{len(pre_keys)}")
        # group keys as MySQL groups them (a quotient rounded to its scale), aggregates'
        # arguments with every digit, except that MIN/MAX keeps a quotient as shown
        extremes = [p for s in specs if s.func in ("MIN", "MAX") for p in s.args]
        shown = frozenset(range(ngroup)) | frozenset(extremes)
        pre = self.project_rel(rel, pre_exprs, pre_names, scope, shown=shown)
        agg_names = pre_names[:ngroup] + [f"__agg{i}" for i in range(len(specs))]
        agg_kinds = [k for _, _, k in pre.cols[:ngroup]] + [s.output_kind() for s in specs]
        parent = pre.node
        self._detached = post
        sig = (
            f"aggregate({parent.signature};{ngroup};"
            + ";".join(
                f"{s.func}|{s.args}|{s.distinct}|{s.separator}|{s.order}|{s.scale}" for s in specs
            )
            + ")"
        )
        agg_node = self._mk(sig, lambda: Aggregate(parent, ngroup, specs, agg_names, agg_kinds))
        # the scope after aggregation: group slots then aggregate results
        post_cols = [(None, n, k) for n, k in zip(agg_names, agg_kinds)]
        post_nullable = list(pre.nullable[:ngroup]) + [s.nullable() for s in specs]
        pre_ranges = pre.ranges or [None] * len(pre.cols)
        post_ranges = list(pre_ranges[:ngroup]) + [
            (0, V.I64_MAX, False)
            if s.func == "COUNT"
            else pre_ranges[s.args[0]]
            if s.func in ("MIN", "MAX") and s.args
            else None
            for s in specs
        ]
        pre_scales = pre.scales or [None] * len(pre.cols)
        post_scales = list(pre_scales[:ngroup])
        post_inexact = set()
        for i, s in enumerate(specs):
            k = s.output_kind()
            arg = s.args[0] if s.args else None
            if s.func == "COUNT" or k == V.INT:
                post_scales.append(0)
            elif k != V.DECIMAL or arg is None:
                post_scales.append(None)
            elif s.func == "AVG":
                post_scales.append(s.scale + 4)
                post_inexact.add(ngroup + i)  # the quotient's digits
            elif s.func in ("SUM", "MIN", "MAX"):
                post_scales.append(pre_scales[arg] if pre_scales[arg] is not None else None)
                if arg in pre.inexact:
                    post_inexact.add(ngroup + i)
            else:
                post_scales.append(None)
        post_rel = Rel(
            agg_node,
            post_cols,
            post_nullable,
            {},
            post_scales,
            post_ranges,
            frozenset(post_inexact),
        )
        post_scope = post_rel.scope()

        def rewrite(e: exp.Expression) -> exp.Expression:
            e = e.copy()

            def repl(n):
                if agg_name(n) is not None:
                    c = self.canon(n, scope)
                    return exp.column(f"__agg{agg_canon.index(c)}")
                if isinstance(n, exp.Expression) and not isinstance(n, (exp.Literal, exp.Star)):
                    try:
                        c = self.canon(n, scope)
                    except (ProgrammingError, Unsupported):
                        return n
                    if c in group_canon:
                        return exp.column(f"__g{group_canon.index(c)}")
                return n

            return _transform_top_down(e, repl)

        having_node = None
        if having_expr is not None:
            post_rel = self.filter_rel(post_rel, [rewrite(having_expr)])
            having_node = post_rel.node
        proj_exprs = [rewrite(e) for e in exprs]
        proj_names = list(names)
        key_pos = []
        for k in [] if post else key_exprs:
            key_pos.append(len(proj_exprs))
            proj_exprs.append(rewrite(k))
            proj_names.append(f"__key{len(key_pos)}")
        order_spec = []
        for kind, val, desc in order_items:
            if kind == "visible":
                order_spec.append((val, desc))
            else:
                if sel.args.get("distinct"):
                    raise Unsupported("ORDER BY a column not in a DISTINCT select list")
                order_spec.append((len(proj_exprs), desc))
                proj_exprs.append(rewrite(val))
                proj_names.append(f"__order{len(order_spec)}")
        faults = self._faults(top, len(exprs), order_spec)
        distinct = bool(sel.args.get("distinct"))
        shown = self._top_shown(len(exprs), len(proj_exprs), distinct) if top else 0
        out = self.project_rel(post_rel, proj_exprs, proj_names, post_scope, faults, shown)
        self._detached = False
        if out.node.faults:
            plan.fault_source = out.node
        plan.visible = len(exprs)
        plan.order = order_spec
        plan.kinds = [k for _, _, k in out.cols[: len(exprs)]]
        plan.nullable = out.nullable[: len(exprs)]
        if post:
            distinct = len(exprs) if sel.args.get("distinct") else None
            plan.post = PostLookup(
                agg_node, having_node, out.node, distinct, proj_names, out.node.kinds
            )
            plan.rel = pre
            plan.key_pos = pre_keys
            return
        if sel.args.get("distinct"):
            parent2 = out.node
            node = self._mk(f"distinct({parent2.signature})", lambda: Distinct(parent2))
            out = Rel(node, out.cols, out.nullable, {}, out.scales, out.ranges, out.inexact)
        plan.rel = out
        plan.key_pos = key_pos
        plan.distinct = bool(sel.args.get("distinct"))
        if implicit and key_exprs:
            # no GROUP BY, but grouped by the key: a key with no rows still yields one row
            having_fn = None
            if having_expr is not None:
                having_fn = compile_expr(rewrite(having_expr), post_scope, allow_params=False).fn
            proj_fns = [
                compile_expr(e, post_scope, allow_params=False).fn for e in proj_exprs[: len(exprs)]
            ]
            key_slots = [group_canon.index(self.canon(k, scope)) for k in key_exprs]
            agg_ref = agg_node
            n_group = ngroup

            def default_fn(key: tuple, nomatch: bool = False):
                # only when no group exists for the key (not when HAVING removed it)
                if not nomatch and agg_ref.query(list(key_slots), tuple(key)):
                    return ()
                gkey = [None] * n_group
                for slot, v in zip(key_slots, key):
                    gkey[slot] = v
                row = agg_ref.empty_row(tuple(gkey))
                if having_fn is not None and not truthy(having_fn(row, None)):
                    return ()
                return (tuple(f(row, None) for f in proj_fns),)

            plan.default_fn = default_fn

    @staticmethod
    def _registered_agg_args(func: str, a: exp.Expression) -> list[exp.Expression]:
        """The arguments of a call of a registered aggregate the dataflow maintains; any other
        form stays with base storage, which runs the same accumulator (or reports the error)."""
        agg = F.AGGREGATES[func]
        if not agg.maintainable:
            raise Unsupported(
                f"{func}: MariaDB gives its elements in the order rows arrive, which a "
                "maintained view cannot reproduce"
            )
        args = list(a.expressions) if type(a) is exp.Anonymous else []
        if not args or any(isinstance(x, (exp.Distinct, exp.Order, exp.Star)) for x in args):
            raise Unsupported(f"{func} with DISTINCT, ORDER BY or *")
        if len(args) < agg.min_args or (agg.max_args is not None and len(args) > agg.max_args):
            raise Unsupported(f"{func} with {len(args)} arguments")
        return args

    def _subst_aliases(self, e: exp.Expression, alias_map, scope: Scope) -> exp.Expression:
        def repl(n):
            if isinstance(n, exp.Column) and not n.table:
                try:
                    scope.resolve(n)
                    return n
                except ProgrammingError:
                    target = alias_map.get(n.name.lower())
                    if target is not None:
                        return target.copy()
            return n

        return e.copy().transform(repl)

    # --- UNION -----------------------------------------------------------------------------
    def union_rel(self, u: exp.Expression) -> Rel:
        if not isinstance(u, exp.Union):
            raise Unsupported(f"{type(u).__name__}")
        branches = []
        self._union_branches(u, branches)
        rels = []
        for b in branches:
            if isinstance(b, exp.Select):
                if b.args.get("limit") or b.args.get("order"):
                    raise Unsupported("ORDER BY/LIMIT inside a UNION branch")
                p = self.plan_select(b, top=False)
                rels.append(p.rel)
            else:
                rels.append(self.relation_of_query(b))
        width = len(rels[0].cols)
        for r in rels:
            if len(r.cols) != width:
                raise ProgrammingError(
                    "The used SELECT statements have a different number of columns", 1222, "21000"
                )
        names = [n for _, n, _ in rels[0].cols]
        for i in range(width):
            floats = [r.cols[i][2] for r in rels if r.cols[i][2] != V.NULL]
            if any(k.__class__ is V.FloatKind for k in floats) and not all(
                floats[0].__class__ is V.FloatKind and floats[0].same(k) for k in floats
            ):
                # MySQL's UNION shows such a column as the DOUBLE its values hold; the
                # branches here pass their values on unchanged (base storage answers it)
                raise Unsupported("UNION of a FLOAT column with another type")
        rels = self._union_typed(rels, [self._literal_items(b, width) for b in branches])
        kinds = [rels[0].cols[i][2] for i in range(width)]
        for i in range(width):
            ks = {r.cols[i][2] for r in rels} - {V.NULL}
            kinds[i] = next(iter(ks)) if ks else V.NULL
        parents = [r.node for r in rels]
        sig = "union(" + ";".join(p.signature for p in parents) + ")"
        node = self._mk(sig, lambda: Union(parents, names, kinds))
        nullable = [any(r.nullable[i] for r in rels) for i in range(width)]
        # a column's scale (a DECIMAL's, a DATETIME's fraction digits) when every branch has
        # the same one: an expression over the union rounds a quotient to it
        scales = []
        for i in range(width):
            seen = {r.scales[i] if r.scales else None for r in rels}
            same = {r.cols[i][2] for r in rels} == {kinds[i]}
            scales.append(seen.pop() if len(seen) == 1 and same else None)
        inexact = frozenset().union(*(r.inexact for r in rels))
        cols = [(None, n, k) for n, k in zip(names, kinds)]
        rel = Rel(node, cols, nullable, {}, scales, None, inexact)
        if u.args.get("distinct"):
            parent = rel.node
            dn = self._mk(f"distinct({parent.signature})", lambda: Distinct(parent))
            rel = Rel(dn, rel.cols, rel.nullable, {}, scales, None, inexact)
        return rel

    @staticmethod
    def _literal_items(branch, width: int) -> list:
        """Per column of a UNION branch, its select item when that is a literal
        (``union_types.literal``), else None."""
        items = branch.expressions if isinstance(branch, exp.Select) else []
        if len(items) != width or any(isinstance(e, exp.Star) for e in items):
            return [None] * width
        return [e if UT.literal(e) else None for e in items]

    def _union_typed(self, rels: list[Rel], literals: list[list]) -> list[Rel]:
        """Every branch with its columns cast to the type MySQL gives the UNION's column (an
        INT beside a DECIMAL(5,2) is 1.00, a number beside a string its text, a binary literal
        beside a text column its text). ``literals``: per branch, ``_literal_items``."""
        width = len(rels[0].cols)
        members = []
        for r, lits in zip(rels, literals):
            row = []
            for i in range(width):
                kind = r.cols[i][2]
                scale = r.scales[i] if r.scales else None
                if kind == V.DECIMAL and i in r.inexact:
                    scale = None
                rng = r.ranges[i] if r.ranges else None
                row.append(UT.member(kind, scale, rng, lits[i] is not None))
            members.append(row)
        casts = []
        for i in range(width):
            column = [m[i] for m in members]
            target = UT.merge(column)
            if target.kind == V.STR:
                for m, lits in zip(column, literals):
                    if m.kind == V.BYTES:
                        UT.check_text(lits[i])
            if target.kind == V.DECIMAL and target.scale is None and len(set(column)) > 1:
                raise Unsupported("a DECIMAL of unknown scale in a UNION")
            if target.dated:
                raise Unsupported("UNION of a TIME with a DATE or DATETIME (read on today's date)")
            casts.append([UT.cast_for(m[i], target) for m in members])
        out = []
        for b, r in enumerate(rels):
            todo = [casts[i][b] for i in range(width)]
            if all(t is None for t in todo):
                out.append(r)
                continue
            # the branch's columns under names of their own (a branch may repeat a name)
            inner = Rel(
                r.node,
                [(None, f"_u{i}", k) for i, (_q, _n, k) in enumerate(r.cols)],
                r.nullable,
                {},
                r.scales,
                r.ranges,
                r.inexact,
            )
            exprs = []
            for i, t in enumerate(todo):
                col = exp.column(f"_u{i}")
                exprs.append(col if t is None else exp.Cast(this=col, to=t))
            out.append(
                self.project_rel(inner, exprs, [n for _q, n, _k in r.cols], shown=frozenset())
            )
        return out

    def _union_branches(self, u: exp.Expression, out: list) -> None:
        # flatten unions of the same kind (all UNION ALL, or all UNION)
        if isinstance(u, exp.Union):
            for side in (u.this, u.expression):
                s = side.this if isinstance(side, exp.Subquery) and not side.alias else side
                if (
                    isinstance(s, exp.Union)
                    and bool(s.args.get("distinct")) == bool(u.args.get("distinct"))
                    and not s.args.get("order")
                    and not s.args.get("limit")
                ):
                    self._union_branches(s, out)
                else:
                    out.append(s)
        else:
            out.append(u)

    # --- top level -------------------------------------------------------------------------
    def _inline_limited_view(self, q: exp.Expression) -> exp.Expression:
        """``SELECT cols FROM v`` over a view with its own ORDER BY ... LIMIT is that view's
        query (with the outer column list): the reader then applies the view's order and limit.
        Anything more around the view (WHERE, joins, grouping) would act after the limit, which
        the dataflow does not maintain, so those stay proxied."""
        if not isinstance(q, exp.Select):
            return q
        from_ = q.args.get("from_")
        if from_ is None or not isinstance(from_.this, exp.Table) or q.args.get("joins"):
            return q
        for arg in ("where", "group", "having", "order", "limit", "offset", "distinct"):
            if q.args.get(arg):
                return q
        view = self.views.get(from_.this.name.lower())
        if view is None or not isinstance(view, exp.Select):
            return q
        if not (view.args.get("limit") or view.args.get("offset")):
            return q
        self.views_used.add(from_.this.name.lower())
        inner = view.copy()
        if len(q.expressions) == 1 and isinstance(q.expressions[0], exp.Star):
            return inner
        outputs = {}
        for e in inner.expressions:
            name = e.alias_or_name
            if isinstance(e, exp.Star) or not name:
                return q
            outputs[name.lower()] = e
        picked = []
        for e in q.expressions:
            target = e.this if isinstance(e, exp.Alias) else e
            if not isinstance(target, exp.Column) or isinstance(target.this, exp.Star):
                return q
            src = outputs.get(target.name.lower())
            if src is None:
                return q
            body = src.this if isinstance(src, exp.Alias) else src
            picked.append(exp.alias_(body.copy(), e.alias_or_name))
        # ORDER BY may name outputs that are no longer selected: order by their expressions
        order = inner.args.get("order")
        if order is not None:
            originals = list(inner.expressions)
            kept = []
            for o in order.expressions:
                e = o.this
                target = None
                if isinstance(e, exp.Literal) and not e.is_string:
                    pos = int(e.this) - 1
                    if 0 <= pos < len(originals):
                        target = originals[pos]
                elif isinstance(e, exp.Column) and not e.table:
                    target = outputs.get(e.name.lower())
                if target is not None:
                    body = target.this if isinstance(target, exp.Alias) else target
                    if isinstance(body, exp.Literal):
                        # ordering by a constant output orders nothing, and a bare number
                        # in ORDER BY would read as a column position
                        continue
                    o.set("this", body.copy())
                kept.append(o)
            if kept:
                order.set("expressions", kept)
            else:
                inner.set("order", None)
        inner.set("expressions", picked)
        return inner

    def _in_key_order(self, q: exp.Select) -> exp.Select:
        """A LIMIT or OFFSET without ORDER BY over one base table: ordered as MySQL reads the
        rows, so the rows it keeps are MySQL's (unordered, a view keeps equal rows together and
        puts a changed row last): by the primary key (InnoDB's clustered index; an equality on
        a secondary index reads its rows in that order too), or, for a whole-table scan that a
        secondary index covers, by that index. A lookup of one key (an equality on every
        primary key column) has no order to keep."""
        if (
            q.args.get("order") is not None
            or not (q.args.get("limit") or q.args.get("offset"))
            or q.args.get("group") is not None
            or q.args.get("distinct") is not None
            or q.args.get("joins")
            or any(_has_agg(e) for e in q.expressions)
        ):
            return q
        frm = q.args.get("from_")
        table = frm.this if frm is not None else None
        if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
            return q
        low = table.name.lower()
        if table.args.get("db") is not None or low in self.views:
            return q
        schema = self.storage.schemas.get(low)
        if schema is None or not schema.primary_key:
            return q
        key = list(schema.primary_key)
        where = q.args.get("where")
        if where is not None:
            # an equality on every key column reads one row at most: no order to keep
            pinned = set()
            for c in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
                if isinstance(c, exp.EQ):
                    a, b = c.this, c.expression
                    if isinstance(a, exp.Column) and not b.find(exp.Column):
                        pinned.add(a.name.lower())
                    elif isinstance(b, exp.Column) and not a.find(exp.Column):
                        pinned.add(b.name.lower())
            if {schema.columns[i].name.lower() for i in key} <= pinned:
                return q
        if where is None and q.find(exp.Star) is None:
            # a scan of the whole table that a secondary index covers (every column the query
            # names is in it or in the primary key) reads that index, in its order
            names = [c.name.lower() for c in schema.columns]
            used = {c.name.lower() for c in q.find_all(exp.Column)}
            if used <= set(names):
                wanted = {names.index(n) for n in used}
                for index in schema.indexes + schema.uniques:
                    if wanted <= set(index) | set(key):
                        key = list(index) + [i for i in key if i not in index]
                        break
        ref = table.alias or table.name
        q = q.copy()
        q.set(
            "order",
            exp.Order(
                expressions=[
                    exp.Ordered(this=exp.column(schema.columns[i].name, table=ref), desc=False)
                    for i in key
                ]
            ),
        )
        return q

    def compile_query(self, q: exp.Expression, nparams: int) -> CompiledQuery:
        q = self._inline_limited_view(q)
        if isinstance(q, exp.Select):
            if q.args.get("from_") is None:
                raise Unsupported("SELECT without FROM")
            q = self._in_key_order(q)
            plan = self.plan_select(q, top=True)
            limit, offset = self._limit(q)
        elif isinstance(q, exp.Union):
            if q.find(exp.Placeholder):
                raise Unsupported("parameters in a UNION")
            rel = self.union_rel(q)
            plan = _Plan()
            plan.rel = rel
            plan.names = [n for _, n, _ in rel.cols]
            plan.visible = len(rel.cols)
            plan.key_pos = []
            plan.key_params = []
            plan.kinds = [k for _, _, k in rel.cols]
            plan.nullable = rel.nullable
            plan.order = []
            order = q.args.get("order")
            if order is not None:
                exprs = [exp.column(n) for n in plan.names]
                for kind, val, desc in self._order_items(order, plan.names, exprs):
                    if kind != "visible":
                        raise Unsupported("ORDER BY expression on a UNION")
                    plan.order.append((val, desc))
            limit, offset = self._limit(q)
        else:
            raise Unsupported(type(q).__name__)
        multi = any(len(p) > 1 for p in plan.key_params)
        parent = plan.rel.node
        key_pos = plan.key_pos
        order = plan.order
        visible = plan.visible
        merge_order = None
        merge_limit = None
        dynamic = (
            plan.range_pos is not None or isinstance(limit, tuple) or isinstance(offset, tuple)
        )
        if dynamic:
            # the reader keeps every row of a key (ordered by the range column when there is
            # one); each lookup applies the range, ORDER BY and LIMIT/OFFSET itself
            if plan.default_fn is not None:
                raise Unsupported("parameterized LIMIT with an aggregate over all keys")
            rng = plan.range_pos
            if rng is not None:
                self._check_range_kinds(parent, key_pos, rng)
                if any(op.__class__ is tuple for op, _i in plan.range_ops) and (
                    parent.kinds[rng] != V.STR
                ):
                    raise Unsupported("LIKE ? on a column that is not a string")
            sig = f"reader({parent.signature};{key_pos};range={rng};{len(parent.columns)})"
            reader = self._mk(
                sig,
                lambda: Reader(parent, key_pos, len(parent.columns), None, None, 0, range_col=rng),
            )
            return CompiledQuery(
                reader=reader,
                names=plan.names,
                kinds=plan.kinds,
                nullable=plan.nullable,
                key_params=plan.key_params,
                key_kinds=[parent.kinds[i] for i in key_pos],
                nodes=list(self.nodes),
                new_nodes=list(self.new),
                views=frozenset(self.views_used),
                merge_distinct=plan.distinct and multi,
                visible=visible,
                range_ops=plan.range_ops,
                range_kind=parent.kinds[rng] if rng is not None else None,
                limit_param=limit[1] if isinstance(limit, tuple) else None,
                offset_param=offset[1] if isinstance(offset, tuple) else None,
                order=order,
                limit=None if isinstance(limit, tuple) else limit,
                offset=0 if isinstance(offset, tuple) else offset,
                fault_source=plan.fault_source,
                post=plan.post,
            )
        if multi and (order or limit is not None or offset):
            r_limit = None if limit is None else limit + offset
            r_offset = 0
            r_visible = len(parent.columns)
            from ..dataflow.ops.reader import make_sort_key

            merge_order = make_sort_key(order) if order else None
            merge_limit = (offset, limit)
        else:
            r_limit, r_offset, r_visible = limit, offset, visible
        sig = f"reader({parent.signature};{key_pos};{order};{r_limit};{r_offset};{r_visible})"
        reader = self._mk(sig, lambda: Reader(parent, key_pos, r_visible, order, r_limit, r_offset))
        key_kinds = [parent.kinds[i] for i in key_pos]
        cq = CompiledQuery(
            reader=reader,
            names=plan.names,
            kinds=plan.kinds,
            nullable=plan.nullable,
            key_params=plan.key_params,
            key_kinds=key_kinds,
            nodes=list(self.nodes),
            new_nodes=list(self.new),
            views=frozenset(self.views_used),
            default_fn=plan.default_fn,
            merge_order=merge_order,
            merge_limit=merge_limit,
            merge_distinct=plan.distinct and multi,
            visible=visible,
            fault_source=plan.fault_source,
        )
        return cq

    def _limit(self, q) -> tuple:
        """(limit, offset): an int, None (no LIMIT) or ("param", index) for ``LIMIT ?``."""
        limit = None
        offset = 0

        def value(e, what):
            if isinstance(e, exp.Literal) and not e.is_string:
                return int(e.this)
            if _placeholder_index(e) is not None:
                return ("param", _placeholder_index(e))
            raise Unsupported(f"{what} that is not a constant or a parameter")

        lim = q.args.get("limit")
        if lim is not None:
            limit = value(lim.expression, "LIMIT")
            if lim.args.get("offset") is not None:
                offset = value(lim.args["offset"], "OFFSET")
        off = q.args.get("offset")
        if off is not None:
            offset = value(off.expression, "OFFSET")
        return limit, offset


class _Plan:
    def __init__(self):
        self.rel: Rel | None = None
        self.names: list[str] = []
        self.kinds: list[str] = []
        self.nullable: list[bool] = []
        self.visible = 0
        self.key_pos: list[int] = []
        self.key_params: list[list[int]] = []
        self.order: list[tuple[int, bool]] = []
        self.distinct = False
        self.default_fn = None
        self.range_pos: int | None = None
        self.range_ops: list = []
        self.fault_source = None
        self.post: PostLookup | None = None


def _transform_top_down(e: exp.Expression, fn) -> exp.Expression:
    """Replace subtrees top-down: a replaced node's children are not visited."""
    new = fn(e)
    if new is not e:
        return new
    for key, value in list(e.args.items()):
        if isinstance(value, exp.Expression):
            e.set(key, _transform_top_down(value, fn))
        elif isinstance(value, list):
            e.set(
                key,
                [_transform_top_down(v, fn) if isinstance(v, exp.Expression) else v for v in value],
            )
    return e


def key_combinations(key_params: list[list[int]], params) -> list[tuple]:
    """All reader keys a lookup asks for (the cartesian product of IN lists)."""
    choices = [[params[i] for i in ps] for ps in key_params]
    if all(len(c) == 1 for c in choices):
        return [tuple(c[0] for c in choices)]
    # dict.fromkeys keeps the first of equal combinations in order, in linear time
    return list(dict.fromkeys(itertools.product(*choices)))


# --- one query for IN lists of every length ----------------------------------------------------
# ``col IN (?, ?, ?)`` and ``col IN (?, ?)`` differ only in how many keys a lookup asks the
# reader for (the reader is keyed by ``col`` either way; ``key_combinations`` asks for each
# distinct key once, and ORDER BY / LIMIT / DISTINCT over the whole list are applied after the
# lookup: ``merge_order``, ``merge_limit``, ``merge_distinct``). So the engine compiles such a
# statement once, with every such list ``SHARED_IN_LENGTH`` parameters long
# (``in_list_shape``), and answers a list of any length with that query, its parameter
# positions mapped to the text's own (``remap_in_lists``).

SHARED_IN_LENGTH = 2  # two: the query of the shared length is compiled for several keys


@dataclass
class InListShape:
    """A SELECT with each ``col IN (?, ..., ?)`` term of its WHERE ``SHARED_IN_LENGTH``
    parameters long."""

    ast: exp.Expression
    param_count: int
    # per parameter of ``ast``: the parameter of the text it stands for (-1: one of a list's)
    plain: list[int]
    # per list: its parameters in ``ast`` -> the parameters of the text's list
    lists: dict[tuple[int, ...], tuple[int, ...]]


def _param_in(c: exp.Expression) -> bool:
    """Is ``c`` a ``col IN (?, ..., ?)`` term (a key of the reader, ``_param_conj``)?"""
    return (
        isinstance(c, exp.In)
        and isinstance(c.this, exp.Column)
        and not any(c.args.get(k) for k in ("query", "unnest", "field"))
        and bool(c.expressions)
        and all(_placeholder_index(e) is not None for e in c.expressions)
    )


def in_list_shape(ast: exp.Expression) -> InListShape | None:
    """``ast`` (a parsed SELECT, parameters numbered in text order) with each ``col IN (?, ...,
    ?)`` term of its WHERE conjunction ``SHARED_IN_LENGTH`` parameters long, its parameters
    numbered in text order again; None when it has no such term of another length."""
    if not isinstance(ast, exp.Select) or ast.args.get("where") is None:
        return None
    terms = [c for c in _flatten_and(ast.args["where"].this) if _param_in(c)]
    if all(len(c.expressions) == SHARED_IN_LENGTH for c in terms):
        return None  # none, or only lists of the shared length: the text is its own shape
    if any(_placeholder_index(p) is None for p in ast.find_all(exp.Placeholder)):
        return None
    shaped = ast.copy()
    order: list = []  # (the text's parameter it follows, rank, placeholder, list number or -1)
    fresh: set[int] = set()
    lists: list[tuple[int, ...]] = []
    for n, c in enumerate(c for c in _flatten_and(shaped.args["where"].this) if _param_in(c)):
        params = tuple(_placeholder_index(e) for e in c.expressions)
        lists.append(params)
        holders = [exp.Placeholder(this="p") for _ in range(SHARED_IN_LENGTH)]
        c.set("expressions", holders)
        for rank, ph in enumerate(holders):
            fresh.add(id(ph))
            order.append((params[0], rank, ph, n))
    for ph in shaped.find_all(exp.Placeholder):
        if id(ph) not in fresh:
            order.append((_placeholder_index(ph), 0, ph, -1))
    order.sort(key=lambda o: (o[0], o[1]))
    plain: list[int] = []
    slots: list[list[int]] = [[] for _ in lists]
    for k, (pos, _rank, ph, n) in enumerate(order):
        ph.set("this", f"p{k}")
        plain.append(pos if n < 0 else -1)
        if n >= 0:
            slots[n].append(k)
    return InListShape(
        shaped, len(order), plain, {tuple(s): params for s, params in zip(slots, lists)}
    )


def remap_in_lists(cq: CompiledQuery, shape: InListShape) -> CompiledQuery | None:
    """``cq``, compiled for ``shape.ast``, with its parameter positions those of the text the
    shape was made from; None when ``cq`` does not use its parameters as the shape expects
    (each list a key of the reader, every other parameter once)."""
    used: set[int] = set()
    key_params: list[list[int]] = []
    for ps in cq.key_params:
        got = shape.lists.get(tuple(ps))
        if got is not None:
            key_params.append(list(got))
        elif len(ps) == 1 and shape.plain[ps[0]] >= 0:
            key_params.append([shape.plain[ps[0]]])
        else:
            return None
        used.update(ps)

    def one(i: int | None) -> int | None:
        if i is None:
            return None
        used.add(i)
        return shape.plain[i]

    range_ops = [(op, one(i)) for op, i in cq.range_ops]
    limit_param = one(cq.limit_param)
    offset_param = one(cq.offset_param)
    if used != set(range(shape.param_count)) or any(
        i is not None and i < 0 for i in [limit_param, offset_param, *(i for _, i in range_ops)]
    ):
        return None
    return dataclasses.replace(
        cq,
        key_params=key_params,
        range_ops=range_ops,
        limit_param=limit_param,
        offset_param=offset_param,
    )

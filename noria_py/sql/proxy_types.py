"""The MySQL types of a proxied query's result columns, and SQLite's values converted to them.

SQLite returns numbers and text; MySQL's drivers give ``Decimal`` for a SUM, ``date`` for a DATE
column, ``timedelta`` for TIME. Each top-level select expression's kind is inferred from the
schemas of the tables in FROM (and the registry's result kinds); a kind that cannot be inferred
(a subquery's column, a derived table) is taken from the values themselves.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from decimal import ROUND_HALF_UP, Decimal

from sqlglot import exp

from .. import errors as E
from . import functions as F
from . import union_types as UT
from . import values as V
from .expr import Scope, compile_expr
from .functions.aggregates import (
    NUMERIC_AGGREGATES,
    STATISTICS,
    TEMPORAL_KINDS,
    statistic_kind,
)


def select_scope(sel: exp.Select, schemas: dict, ctes: dict | None = None):
    """(Scope, column types) of a SELECT's FROM and JOIN items, or None when one of them
    cannot be typed. Base tables have their declared types; a derived table or a CTE (named in
    ``ctes``, or in the SELECT's own WITH) has the types of its select list
    (:func:`query_columns`)."""
    frm = sel.args.get("from_")
    ctes = with_columns(sel, schemas, ctes)
    if frm is None:
        scope = Scope([])
        scope.schemas, scope.ctes = schemas, ctes
        return scope, []
    sources = [frm.this] + [j.this for j in sel.args.get("joins") or []]
    cols, ctypes = [], []
    for src in sources:
        found = _source_columns(src, schemas, ctes)
        if found is None:
            return None
        alias, pairs = found
        for name, ct in pairs:
            cols.append((alias, name, ct.kind))
            ctypes.append(ct)
    scales = [V.column_scale(c) for c in ctypes]
    scope = Scope(cols, scales, [V.int_range(c) for c in ctypes])
    scope.schemas, scope.ctes = schemas, ctes  # (a scalar subquery's scope is built from them)
    # derived tables' string columns of a literal's coercibility (see ColumnType.literal)
    scope.literals = frozenset(i for i, ct in enumerate(ctypes) if getattr(ct, "literal", 0))
    return scope, ctypes


def with_columns(sel: exp.Expression, schemas: dict, ctes: dict | None) -> dict:
    """``ctes`` plus the columns of each CTE of ``sel``'s own WITH (None for one that cannot be
    typed, and for every CTE of a WITH RECURSIVE)."""
    out = dict(ctes or {})
    with_ = sel.args.get("with_")
    if with_ is None:
        return out
    for cte in with_.expressions:
        name = cte.alias_or_name.lower()
        if with_.args.get("recursive"):
            pairs = _anchor_columns(cte.this, name, schemas, out)
        else:
            pairs = query_columns(cte.this, schemas, out)
        out[name] = _renamed(pairs, cte.args.get("alias"))
    return out


def _anchor_columns(q: exp.Expression, name: str, schemas: dict, ctes: dict) -> list | None:
    """The columns of a CTE of a WITH RECURSIVE: MySQL types them from its non-recursive
    SELECTs only (the branches of its UNION that do not read ``name``); None when it reads
    itself everywhere or a column cannot be typed."""
    leaves = union_leaves(q) if isinstance(q, exp.SetOperation) else [q]
    anchors = [
        b
        for b in leaves
        if not any(t.name.lower() == name and not t.args.get("db") for t in b.find_all(exp.Table))
    ]
    if not anchors:
        return None
    if len(anchors) == len(leaves):
        return query_columns(q, schemas, ctes)  # (it does not read itself)
    if len(anchors) == 1:
        return query_columns(anchors[0], schemas, ctes)
    union = anchors[0]
    for b in anchors[1:]:
        union = exp.union(union, b, distinct=False)
    return query_columns(union, schemas, ctes)


def _renamed(pairs: list | None, alias) -> list | None:
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else None
    if pairs is None or names is None:
        return pairs
    if len(names) != len(pairs):
        return None
    return [(n, ct) for n, (_old, ct) in zip(names, pairs)]


def _source_columns(src: exp.Expression, schemas: dict, ctes: dict):
    """(alias, [(name, ColumnType)]) of one FROM item, None when it cannot be typed."""
    if isinstance(src, exp.Table) and not src.args.get("db"):
        low = src.name.lower()
        if low in ctes:
            pairs = ctes[low]
            return None if pairs is None else (src.alias_or_name, pairs)
        schema = schemas.get(low)
        if schema is None:
            return None
        return src.alias_or_name, [(c.name, c.ctype) for c in schema.columns]
    if isinstance(src, exp.Subquery) and src.alias:
        pairs = _renamed(query_columns(src.this, schemas, ctes), src.args.get("alias"))
        return None if pairs is None else (src.alias, pairs)
    return None


def query_columns(
    q: exp.Expression, schemas: dict, ctes: dict | None = None, nulls: bool = False
) -> list | None:
    """[(name, ColumnType)] of a query's result, as a derived table or CTE shows it to the
    query around it; None when a column cannot be typed. A column passed through keeps its
    table's type; a computed one gets the evaluator's kind and scale (``computed``); a UNION's
    columns are its branches' merged as MySQL merges them (``union_types``). With ``nulls``,
    a NULL literal is a column of kind NULL rather than untyped."""
    from .parse import item_name

    ctes = ctes or {}
    if isinstance(q, exp.Subquery):
        return query_columns(q.this, schemas, ctes, nulls)
    if isinstance(q, exp.SetOperation):
        branches = [query_columns(b, schemas, ctes, True) for b in union_leaves(q)]
        if any(b is None or len(b) != len(branches[0]) for b in branches):
            return None
        out = []
        for i, (name, first) in enumerate(branches[0]):
            cts = [b[i][1] for b in branches]
            k0 = first.kind
            if k0.__class__ is V.FloatKind and all(k0.same(ct.kind) for ct in cts):
                out.append((name, first))  # FLOAT UNION FLOAT is a FLOAT
                continue
            merged = UT.merge([_member(ct) for ct in cts])
            if merged.kind == V.NULL and not nulls:
                return None
            if merged.kind == V.DECIMAL and merged.scale is None:
                return None
            ct = _computed(merged.kind, merged.scale)
            # a UNION of text and binary strings: how its column compares with a string is
            # MariaDB's plan's choice (the same query answers case-sensitively or not
            # depending on the tables' sizes), unknown; a binary literal in every branch
            # keeps a literal's coercibility
            strings = {_family(ct.kind) for ct in cts if ct.kind != V.NULL}
            if strings == {V.STR, V.BYTES} or i in q.meta.get("mixed_strings", ()):
                ct.literal = None
            else:
                ct.literal = all(b.literal for b in cts if b.kind != V.NULL)
            out.append((name, ct))
        return out
    if not isinstance(q, exp.Select):
        return None
    found = select_scope(q, schemas, ctes)
    if found is None:
        return None
    scope, ctypes = found
    out: list = []
    for e in q.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        if isinstance(inner, exp.Star):
            out += [(c[1], ct) for c, ct in zip(scope.columns, ctypes)]
            continue
        if isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star):
            q_name = inner.table.lower()
            out += [
                (c[1], ct) for c, ct in zip(scope.columns, ctypes) if (c[0] or "").lower() == q_name
            ]
            continue
        name = item_name(e)
        if isinstance(inner, exp.Column):
            try:
                i, _kind_of = scope.resolve(inner)
            except Exception:  # noqa: BLE001 - an unknown column: the query's own error
                return None
            out.append((name, ctypes[i]))
            continue
        if nulls and isinstance(inner, exp.Null):
            out.append((name, _computed(V.NULL, None)))
            continue
        kind = _kind(inner, scope)
        if kind == V.NULL and nulls:
            # an expression that can only be NULL (``CASE WHEN ... THEN NULL END``): typed as
            # a NULL literal is, so a UNION takes its other branches' type
            out.append((name, _computed(V.NULL, None)))
            continue
        if kind is None or kind == V.NULL:
            return None
        scale = _scale(inner, scope) if kind == V.DECIMAL else None
        if kind == V.DECIMAL and scale is None:
            return None  # its digits unknown: not read back as a DECIMAL of some scale
        ct = _computed(kind, scale)
        ct.literal = kind in (V.STR, V.BYTES) and _literal_string(inner, scope)
        out.append((name, ct))
    return out


def _family(kind) -> str:
    return kind if kind in (V.STR, V.BYTES) else "other"


def _literal_string(e: exp.Expression, scope) -> bool:
    """Is ``e`` a string constant of a literal's coercibility (``'x'``, ``_binary'x'``,
    ``UNHEX('78')``; not ``BINARY 'x'``)?"""
    from .expr import _bytes_literal, compile_expr

    try:
        c = compile_expr(e, scope, allow_params=True)
    except Exception:  # noqa: BLE001 - not typed: not a literal here
        return False
    return _bytes_literal(e, c) if c.kind == V.BYTES else bool(c.const)


def union_leaves(q: exp.Expression) -> list[exp.Expression]:
    """The SELECTs of a chain of UNION, INTERSECT and EXCEPT, in order."""
    if isinstance(q, exp.Subquery) and not q.alias:
        return union_leaves(q.this)
    if isinstance(q, exp.SetOperation):
        return union_leaves(q.this) + union_leaves(q.expression)
    return [q]


def _member(ct: V.ColumnType) -> UT.Member:
    return UT.member(ct.kind, V.column_scale(ct), V.int_range(ct))


def unify_unions(q: exp.Expression, schemas: dict) -> exp.Expression:
    """``q`` with the items of every UNION branch cast to the type MySQL gives the UNION's
    column (SQLite would hand back each branch's own values: an INT beside a DECIMAL(5,2) as
    1, not 1.00). A union whose branches cannot all be typed is left as it is."""
    if q.find(exp.SetOperation) is None:
        return q
    q = q.copy()
    tops = [u for u in q.find_all(exp.SetOperation) if not _inside_union(u)]
    for top in tops:
        _unify(top, schemas)
    return q


def numeric_temporal_arguments(q: exp.Expression, schemas: dict) -> exp.Expression:
    """``q`` with the temporal argument of every SUM, AVG, statistical or bit aggregate written
    as ``arg + 0`` (base storage holds a date as text, which SQLite reads as its year)."""
    calls = [
        a
        for a in q.find_all(exp.Sum, exp.Avg, exp.Anonymous)
        if not isinstance(a, exp.Anonymous) or str(a.this).upper() in NUMERIC_AGGREGATES
    ]
    if not calls:
        return q
    q = q.copy()
    for sel in list(q.find_all(exp.Select)):
        found = None
        for a in sel.find_all(exp.Sum, exp.Avg, exp.Anonymous):
            if a.find_ancestor(exp.Select) is not sel:
                continue
            if isinstance(a, exp.Anonymous):
                if str(a.this).upper() not in NUMERIC_AGGREGATES or len(a.expressions) != 1:
                    continue
                arg = a.expressions[0]
            else:
                arg = a.this
            if isinstance(arg, exp.Distinct):
                continue
            if found is None:
                found = select_scope(sel, schemas) or (None, None)
            scope = found[0]
            if scope is None:
                break
            if _kind(arg, scope) in TEMPORAL_KINDS:
                arg.replace(exp.Add(this=arg.copy(), expression=exp.Literal.number(0)))
    return q


def _inside_union(u: exp.Expression) -> bool:
    """Whether ``u`` is a branch of a larger UNION (typed with it)."""
    p = u.parent
    if isinstance(p, exp.Subquery) and not p.alias:
        p = p.parent
    return isinstance(p, exp.SetOperation)


def _unify(top: exp.Expression, schemas: dict) -> None:
    from .parse import item_name

    leaves = union_leaves(top)
    typed = [query_columns(b, schemas, None, True) for b in leaves]
    if any(t is None or len(t) != len(typed[0]) for t in typed):
        return
    for b in leaves:
        if not isinstance(b, exp.Select) or any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in b.expressions
        ):
            return
    width = len(typed[0])
    for i in range(width):
        members = [
            dataclasses.replace(_member(t[i][1]), literal=UT.literal(b.expressions[i]))
            for t, b in zip(typed, leaves)
        ]
        target = UT.merge(members)
        if {m.kind for m in members} >= {V.STR, V.BYTES}:
            # text and binary branches: known after the casts below only by this mark (see
            # query_columns)
            top.meta.setdefault("mixed_strings", set()).add(i)
        if target.kind == V.STR:
            for m, b in zip(members, leaves):
                if m.kind == V.BYTES:
                    UT.check_text(b.expressions[i])
        if target.kind == V.DECIMAL and target.scale is None:
            continue  # a branch's digits unknown: left as it is
        casts = [UT.cast_for(m, target) for m in members]
        if target.kind == V.DECIMAL and any(casts):
            # every branch's DECIMAL as the same exact text: SQLite compares, sorts and
            # deduplicates a number and a text apart
            casts = [None if m.kind == V.NULL else UT.target_type(target) for m in members]
        for b, to in zip(leaves, casts):
            if to is None:
                continue
            item = b.expressions[i]
            inner = item.this if isinstance(item, exp.Alias) else item
            cast = exp.Cast(this=inner.copy(), to=to)
            item.replace(exp.alias_(cast, item_name(item), quoted=True))


def _computed(kind: str, scale: int | None) -> V.ColumnType:
    names = {V.INT: "BIGINT", V.DECIMAL: "DECIMAL", V.FLOAT: "DOUBLE", V.DATE: "DATE",
             V.DATETIME: "DATETIME", V.TIME: "TIME", V.BYTES: "VARBINARY"}  # fmt: skip
    if kind == V.DECIMAL:
        return V.ColumnType(kind, "DECIMAL", precision=65, scale=scale, computed=True)
    return V.ColumnType(kind, names.get(kind, "VARCHAR"), computed=True)


def infer_kinds(select: exp.Expression, schemas: dict) -> list[str | None]:
    """One kind (or None: unknown) per output column of a SELECT over base tables."""
    return _per_item(select, schemas, _kind)


def infer_scales(select: exp.Expression, schemas: dict) -> list[int | None]:
    """The scale of each DECIMAL output column of a SELECT over base tables, as MySQL types
    it (None: not a DECIMAL, or unknown): a column's own, SUM/MIN/MAX keep their argument's,
    AVG adds ``div_precision_increment`` (4), an expression has the evaluator's."""
    return _per_item(
        select, schemas, lambda e, sc: _scale(e, sc) if _kind(e, sc) == V.DECIMAL else None
    )


def _per_item(select: exp.Expression, schemas: dict, fn) -> list:
    """``fn(item, scope)`` per output column of a SELECT over base tables (None for each when
    a FROM item is not a base table or the list holds ``*``)."""
    if not isinstance(select, exp.Select):
        return []
    found = select_scope(select, schemas)
    if found is None:
        return [None] * len(select.expressions)
    scope = found[0]
    out: list = []
    for e in select.expressions:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            return [None] * max(len(scope.columns), 1)
        out.append(fn(e, scope))
    return out


def is_aggregate(e: exp.Expression) -> bool:
    return isinstance(e, exp.AggFunc) or (
        isinstance(e, exp.Anonymous) and str(e.this).upper() in F.AGGREGATES
    )


class OverAggregates:
    """A select item computed over aggregates (``SUM(d) / 3``): each aggregate becomes a
    column of a row of its own, and the expression above them is compiled over that row by the
    same evaluator as every other expression (exact DECIMAL arithmetic and MySQL's scales,
    where SQLite would compute in doubles)."""

    __slots__ = ("aggregates", "compiled", "kinds", "scales")

    def __init__(self, aggregates: list, compiled, kinds: list, scales: list):
        self.aggregates = aggregates  # the aggregate nodes, in the row's order
        self.compiled = compiled
        self.kinds = kinds
        self.scales = scales  # a DECIMAL aggregate's scale (None: AVG, which has more digits)


def over_aggregates(e: exp.Expression, scope: Scope) -> OverAggregates | None:
    """``e`` as an expression over aggregates or scalar subqueries, or None when it is not one
    (an aggregate or a subquery itself, neither inside, a window inside) or cannot be typed.
    Beside scalar subqueries alone, the row's columns are inputs too (``v + (SELECT ...)``);
    beside an aggregate a bare column is not (SQLite's row, not one value)."""
    if isinstance(e, exp.Alias):
        e = e.this
    if _opaque(e) or e.find(exp.Window) is not None:
        return None
    originals = _maximal_inputs(e)
    if not originals:
        return None
    grouped = any(is_aggregate(a) for a in originals)
    if grouped and any(isinstance(a, exp.Subquery) for a in originals):
        return None  # (a subquery beside an aggregate: left to SQLite)
    tree = e.copy()
    for i, a in enumerate(_maximal_inputs(tree)):  # the copy's twins, in the same order
        a.replace(exp.column(f"nf_agg{i}"))
    if tree.find(exp.Select, exp.Subquery) is not None:
        return None  # a subquery the value row cannot hold (IN, EXISTS)
    bare = [c for c in tree.find_all(exp.Column) if not c.name.lower().startswith("nf_agg")]
    if bare and grouped:
        return None  # a bare column beside the aggregates: SQLite's row, not one value
    if bare:  # beside subqueries: the row's columns are inputs of the expression too
        tree = e.copy()
        inputs = _maximal_inputs(tree, columns=True)
        originals = _maximal_inputs(e, columns=True)
        for i, a in enumerate(inputs):
            a.replace(exp.column(f"nf_agg{i}"))
    kinds, scales = [], []
    for a in originals:
        k = _kind(a, scope)
        if k is None:
            return None
        kinds.append(k)
        scales.append(_scale(a, scope) if k == V.DECIMAL else None)
    cols = [("", f"nf_agg{i}", k) for i, k in enumerate(kinds)]
    try:
        compiled = compile_expr(tree, Scope(cols, scales, [None] * len(cols)), allow_params=True)
    except Exception:  # noqa: BLE001 - anything the compiler cannot type is left to SQLite
        return None
    exact = [None if _averages(a) else sc for a, sc in zip(originals, scales)]
    return OverAggregates(originals, compiled, kinds, exact)


def _opaque(n: exp.Expression) -> bool:
    """An aggregate, a scalar subquery, or a test over a subquery (``x IN (SELECT ...)``,
    EXISTS: 1, 0 or NULL)."""
    if is_aggregate(n) or _subquery_test(n):
        return True
    return isinstance(n, exp.Subquery) and not isinstance(n.parent, (exp.In, exp.Any, exp.All))


def _subquery_test(n: exp.Expression) -> bool:
    return isinstance(n, exp.Exists) or (isinstance(n, exp.In) and n.args.get("query") is not None)


def _averages(n: exp.Expression) -> bool:
    """Does the value of an input hold more digits than its scale (AVG, a subquery's AVG)?"""
    if isinstance(n, exp.Subquery) and isinstance(n.this, exp.Select) and n.this.expressions:
        item = n.this.expressions[0]
        n = item.this if isinstance(item, exp.Alias) else item
    return isinstance(n, exp.Avg)


def _maximal_inputs(e: exp.Expression, columns: bool = False) -> list:
    """The aggregates and scalar subqueries in ``e`` not inside another one (and with
    ``columns``, the columns outside them), in depth-first order."""
    found: list = []

    def visit(n):
        if _opaque(n) or (columns and isinstance(n, exp.Column)):
            found.append(n)
            return
        for child in n.iter_expressions():
            visit(child)

    visit(e)
    return found


def _argument(agg: exp.Expression) -> exp.Expression | None:
    """An aggregate's one argument (``SUM(DISTINCT x)``'s ``x``), None when not one."""
    arg = agg.this
    if isinstance(arg, exp.Distinct):
        return arg.expressions[0] if len(arg.expressions) == 1 else None
    return arg if isinstance(arg, exp.Expression) else None


def _scale(e: exp.Expression, scope: Scope) -> int | None:
    if isinstance(e, exp.Alias):
        return _scale(e.this, scope)
    if isinstance(e, exp.Window):
        inner, fixed = _window_inner(e)
        return (0 if fixed == V.INT else None) if inner is None else _scale(inner, scope)
    over = over_aggregates(e, scope)
    if over is not None:
        c = over.compiled
        return 0 if c.kind == V.INT else c.scale if c.kind == V.DECIMAL else None
    if isinstance(e, (exp.Sum, exp.Avg, exp.Min, exp.Max)):
        inner = _argument(e)
        if inner is None:
            return None
        s = _scale(inner, scope) if _kind(inner, scope) in (V.DECIMAL, V.INT) else None
        if s is None and _kind(inner, scope) == V.INT:
            s = 0
        if s is None:
            return None
        return min(s + 4, 30) if isinstance(e, exp.Avg) else s
    if isinstance(e, exp.Subquery):
        typed = _scalar_subquery(e, scope)
        return None if typed is None else typed[1]
    if _subquery_test(e):
        return 0
    if e.find(exp.AggFunc, exp.Subquery, exp.Select, exp.Window):
        return None
    try:
        c = compile_expr(e, scope, allow_params=True)
    except Exception:  # noqa: BLE001 - anything the compiler cannot type is "unknown"
        return None
    if c.kind == V.INT:
        return 0
    return c.scale if c.kind == V.DECIMAL else None


_RANKS = ("ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE")
_DISTRIBUTIONS = ("CUME_DIST", "PERCENT_RANK")
_OFFSETS = ("LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE")


def _window_inner(e: exp.Window):
    """(what a window function's value is typed by, kind if fixed): its aggregate, or the
    argument of LAG/LEAD/FIRST_VALUE...; None when unknown."""
    inner = e.this
    name = (inner.sql_name() if not isinstance(inner, exp.Anonymous) else inner.name).upper()
    if name in _RANKS or isinstance(inner, (exp.RowNumber, exp.Count)):
        return None, V.INT
    if name in _DISTRIBUTIONS:
        return None, V.FLOAT
    if name in _OFFSETS or isinstance(inner, (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue)):
        return inner.this, None
    if isinstance(inner, (exp.Sum, exp.Avg, exp.Min, exp.Max)):
        return inner, None
    return None, None


def _kind(e: exp.Expression, scope: Scope) -> str | None:
    if isinstance(e, exp.Alias):
        return _kind(e.this, scope)
    if isinstance(e, exp.Window):
        inner, fixed = _window_inner(e)
        return fixed if inner is None else _kind(inner, scope)
    over = over_aggregates(e, scope)
    if over is not None:
        return over.compiled.kind
    if isinstance(e, exp.Count):
        return V.INT
    if isinstance(e, (exp.Sum, exp.Avg)):
        inner = _argument(e)
        k = _kind(inner, scope) if inner is not None else None
        if k in (V.INT, V.DECIMAL):
            return V.DECIMAL
        if k == V.FLOAT:
            return V.float_sum_kind(k, isinstance(e, exp.Avg))
        return V.FLOAT if k is not None else None
    if isinstance(e, (exp.Min, exp.Max)):
        return _kind(e.this, scope)
    if isinstance(e, exp.GroupConcat):
        return V.STR
    if isinstance(e, exp.Anonymous) and str(e.this).upper() in F.AGGREGATES:
        name = str(e.this).upper()
        if name in STATISTICS and len(e.expressions) == 1:
            arg = e.expressions[0]
            return statistic_kind(_kind(arg, scope), _scale(arg, scope))
        agg = F.AGGREGATES[name]
        return agg.result_kind([_kind(a, scope) or V.STR for a in e.expressions])
    if isinstance(e, exp.Subquery):
        typed = _scalar_subquery(e, scope)
        return None if typed is None else typed[0]
    if _subquery_test(e):
        return V.INT
    if e.find(exp.AggFunc, exp.Subquery, exp.Select, exp.Window):
        return None
    try:
        return compile_expr(e, scope, allow_params=True).kind
    except Exception:  # noqa: BLE001 - anything the compiler cannot type is "unknown"
        return None


def _scalar_subquery(e: exp.Subquery, outer: Scope) -> tuple | None:
    """(kind, DECIMAL scale) of a scalar subquery, its one column's as MySQL types it (its
    value, or NULL when it finds no row); None when unknown. A column of the query around it
    (a correlated subquery) is typed from ``outer``."""
    schemas = getattr(outer, "schemas", None)
    q = e.this
    if schemas is None or (isinstance(q, exp.Select) and len(q.expressions) != 1):
        return None
    if not isinstance(q, exp.Select):
        cols = query_columns(q, schemas, outer.ctes)
        if cols is None or len(cols) != 1:
            return None
        ct = cols[0][1]
        return ct.kind, V.column_scale(ct) if ct.kind == V.DECIMAL else None
    item = q.expressions[0]
    item = item.this if isinstance(item, exp.Alias) else item
    if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star):
        return None
    found = select_scope(q, schemas, outer.ctes)
    if found is None:
        return None
    scope = _nested(found[0], outer)
    kind = _kind(item, scope)
    if kind is None or kind == V.NULL:
        return None
    return kind, _scale(item, scope) if kind == V.DECIMAL else None


def _nested(inner: Scope, outer: Scope) -> Scope:
    """The scope of a subquery's items: its own FROM's columns, then the query around it."""
    n, m = len(inner.columns), len(outer.columns)
    scope = Scope(
        inner.columns + outer.columns,
        (inner.scales or [None] * n) + (outer.scales or [None] * m),
        (inner.ranges or [None] * n) + (outer.ranges or [None] * m),
    )
    scope.schemas, scope.ctes = inner.schemas, inner.ctes

    def resolve(col: exp.Column) -> tuple[int, str]:
        try:
            return inner.resolve(col)
        except E.ProgrammingError as err:
            if err.errno != E.ER_BAD_FIELD_ERROR:
                raise
        i, kind = outer.resolve(col)
        return i + n, kind

    scope.resolve = resolve
    return scope


def converter(kind: str | None, scale: int | None = None):
    """A function turning SQLite's value into the Python value of ``kind`` (None: as is); a
    DECIMAL of known ``scale`` shows that many digits, as MySQL's does (SQLite hands back a
    number: ``1.5`` for a DECIMAL(5,2)'s 1.50, AVG's double)."""
    if kind == V.DECIMAL and scale is not None:
        unit = Decimal(1).scaleb(-scale)

        def to_scaled(v):
            d = _to_decimal(v)
            if isinstance(d, Decimal) and d.is_finite():
                return d.quantize(unit, rounding=ROUND_HALF_UP)
            return d

        return to_scaled
    if kind == V.DECIMAL:
        return _to_decimal
    if kind == V.DATE:
        return F.coerce.to_date
    if kind == V.DATETIME:
        return F.coerce.to_datetime
    if kind == V.TIME:
        return F.coerce.to_time
    if kind == V.INT:
        return _to_int
    if kind.__class__ is V.FloatKind:
        return kind.wrap  # a FLOAT column's value (or MIN/MAX of one): shown as the column's
    if kind == V.FLOAT:
        return _to_float
    return None


def _to_decimal(v):
    if v is None or isinstance(v, Decimal):
        return v
    if isinstance(v, float):
        return Decimal(repr(v))
    if isinstance(v, int):
        return Decimal(v)
    try:
        return Decimal(str(v))
    except ArithmeticError:
        return v


def _to_int(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return v
    return v


def _to_float(v):
    if isinstance(v, int):
        return float(v)
    return v


def _no_date(v: str, kind: str) -> str:
    """A string that is no valid date, against a DATE or DATETIME column's stored text, where
    MySQL compares it as a date: one with zero parts as itself ('2024-00-00' sorts just
    before '2024-01-01'), anything else as the zero date (below every date, equal to none)."""
    from .functions.temporal import _ymd

    r = _ymd(v)
    y, mo, d = r if r is not None else (0, 0, 0)
    text = f"{y:04d}-{mo:02d}-{d:02d}"
    return text + " 00:00:00" if kind == V.DATETIME else text


def bind_as(v, kind: str):
    """A parameter compared with a column of ``kind``, converted as MySQL converts it for the
    comparison (a number against a DATE is a date, a string against a number a number)."""
    if v is None:
        return None
    from .functions import coerce as C

    if kind in (V.DATE, V.DATETIME):
        d = C.to_datetime(v)
        if d is None:
            return _no_date(v, kind) if isinstance(v, str) else v
        if kind == V.DATE and not (d.hour or d.minute or d.second or d.microsecond):
            return d.date()
        return d  # (a DATE against a later time of its day is below it, never equal)
    if kind == V.TIME:
        t = C.to_time(v)
        if t is None and isinstance(v, (str, bytes)):
            from .functions.temporal import _read_time

            t = _read_time(v)  # read as far as it is a time; no time at all is 0
            return _dt.timedelta(0) if t is None else t
        return t if t is not None else v
    if kind == V.DECIMAL and isinstance(v, (str, bytes)):
        return C.to_decimal(v)  # a DECIMAL against a string constant compares as DECIMAL
    if kind in (V.INT, V.FLOAT) and isinstance(v, (str, bytes)):
        return C.to_num(v)
    if kind.__class__ is V.MemberKind and not isinstance(v, (str, bytes)):
        member = kind.member_for(v)  # a number compared with an ENUM/SET column: a position
        return member if member is not None else V.NO_MEMBER
    return v

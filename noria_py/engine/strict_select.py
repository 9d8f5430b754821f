"""Strict mode inside ``INSERT ... SELECT`` with joins, grouping, DISTINCT, ORDER BY or LIMIT.

In strict mode MySQL turns the warnings an INSERT's SELECT raises while it runs into errors: a
string that is not wholly a number (1292), a division by zero (1365, with
ERROR_FOR_DIVISION_BY_ZERO). The rows the INSERT stores come from the SELECT as usual (a view,
or base storage); this module only replays the SELECT's evaluation, with strict evaluation on
(``values.STRICT_EVALUATION``), over the rows MySQL's execution touches, and raises what MySQL
would refuse the statement for:

- the joins in FROM order, the first table outermost; a join whose ON holds an equality of two
  integer columns looks the inner table up by it (as MySQL's ref access does) and evaluates the
  rest of ON only on the rows found; a LEFT JOIN pads a row no inner row matched;
- WHERE on each joined row; then, without grouping, the select list on each row that passes
  (rows skipped by OFFSET are not evaluated, and evaluation stops once LIMIT rows are out);
- ORDER BY: its keys on every row that passes, then the select list on the rows LIMIT keeps;
  ordered by a table's primary key (one table), the rows are read in that order instead;
- grouping and aggregates: the group expressions and each aggregate's argument on every row
  that passes (SUM and AVG convert a string argument to a number), then HAVING and the select
  list per group, the aggregates' values in place, groups in their GROUP BY order.

What depends on a plan MySQL chooses by cost is modelled by the plan above: a join whose inner
table MySQL reads first, or a LIMIT over joins, may evaluate other rows in MySQL. (MariaDB, for
an inner join of tables of a few rows ordered and cut by LIMIT, may join through a join buffer
into a temporary table and sort that: the select list is then evaluated on every joined row.
With ``join_cache_level = 0`` it takes the plan above; the tests compare under that setting.)
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from sqlglot import exp

from .. import errors as E
from ..sql import values as V
from ..sql.collation import ck
from ..sql.expr import Scope, Unsupported, compile_expr, truthy

if TYPE_CHECKING:
    from .core import Engine

_AGGS = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)
_AGG_TABLE = "_strict_agg"


def strict_select_check(engine: Engine, select: exp.Expression):
    """fn(params) raising what strict mode makes of ``select``'s conversions (see the module),
    or None when the SELECT is of a form this does not model (subqueries, windows, views or
    derived tables, USING, columns with a collation of their own, other aggregates) or
    computes nothing that could convert."""
    if not isinstance(select, exp.Select):
        return None
    if select.find(exp.Subquery, exp.Window, exp.Exists) is not None:
        return None
    try:
        plan = _Plan(engine, select)
    except (_NotModelled, Unsupported, E.Error):
        return None
    return engine._strictly(plan.check)


class _NotModelled(Exception):
    pass


_NUMBER_KINDS = (V.INT, V.DECIMAL, V.FLOAT)
# where a string or temporal column is used as it is (no conversion to a number)
_AS_IS = (
    exp.Alias, exp.Select, exp.Group, exp.Ordered, exp.Count, exp.Min, exp.Max, exp.Distinct,
    exp.Is, exp.Like,
)  # fmt: skip
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)


def _may_refuse(select: exp.Select, scope: Scope) -> bool:
    """Could strict mode refuse anything ``select`` computes: a division or modulo, or a
    string or temporal column used otherwise than as it is (shown, grouped, ordered, counted,
    compared with a column of its kind, a string with a string)?"""
    if select.find(exp.Div, exp.Mod, exp.IntDiv) is not None:
        return True
    for col in select.find_all(exp.Column):
        if isinstance(col.this, exp.Star):
            continue
        try:
            kind = scope.resolve(col)[1]
        except E.Error:
            return True  # (an alias of the select list: checked where it is defined)
        if kind in _NUMBER_KINDS:
            continue
        parent = col.parent
        if isinstance(parent, _AS_IS):
            continue
        if isinstance(parent, _COMPARISONS):
            other = parent.expression if parent.this is col else parent.this
            if isinstance(other, exp.Literal) and other.is_string and kind in (V.STR, V.BYTES):
                continue
            if isinstance(other, exp.Column):
                try:
                    if scope.resolve(other)[1] == kind:
                        continue
                except E.Error:
                    return True
        return True
    return False


def _conjuncts(e: exp.Expression) -> list:
    if isinstance(e, exp.Paren):
        return _conjuncts(e.this)
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def _sort_value(v):
    if v is None:
        return (0,)
    if isinstance(v, str):
        return (1, ck(v))
    return (1, v)


def _order(rows: list, keys: list, terms: list) -> list:
    """``rows`` ordered by their ``keys`` (a tuple of values per row) under ``terms`` (desc
    flags): stable sorts from the last term to the first."""
    idx = list(range(len(rows)))
    for i in reversed(range(len(terms))):
        idx.sort(key=lambda j, i=i: _sort_value(keys[j][i]), reverse=terms[i])
    return [rows[j] for j in idx]


class _Agg:
    """One aggregate of the select list, HAVING or ORDER BY: its argument compiled over the
    joined row, and its value per group."""

    __slots__ = ("func", "arg", "distinct", "kind", "numeric_text")

    def __init__(self, node: exp.Expression, scope: Scope):
        self.func = type(node).__name__.upper()
        arg = node.this
        self.distinct = isinstance(arg, exp.Distinct)
        if self.distinct:
            if len(arg.expressions) != 1:
                raise _NotModelled
            arg = arg.expressions[0]
        if isinstance(arg, exp.Star) and self.func == "COUNT":
            self.arg = None
            self.kind = V.INT
            self.numeric_text = False
            return
        if node.expressions:
            raise _NotModelled  # a second argument
        c = compile_expr(arg, scope)
        self.arg = c.fn
        akind = c.kind
        if akind in (V.DATE, V.DATETIME, V.TIME) and self.func in ("SUM", "AVG"):
            raise _NotModelled
        self.numeric_text = self.func in ("SUM", "AVG") and akind in (V.STR, V.BYTES)
        if self.func == "COUNT":
            self.kind = V.INT
        elif self.func in ("SUM", "AVG"):
            self.kind = V.FLOAT if akind in (V.STR, V.BYTES, V.FLOAT) else V.DECIMAL
        else:
            self.kind = akind

    def value_of(self, row, params):
        """The argument's value on one row, converted as the aggregate converts it."""
        if self.arg is None:
            return 1
        v = self.arg(row, params)
        if v is not None and self.numeric_text:
            V.check_number_text(v, "DOUBLE")
            v = V.str_to_number(v if isinstance(v, str) else bytes(v).decode("utf-8", "replace"))
        return v

    def result(self, values: list):
        vals = [v for v in values if v is not None]
        if self.distinct:
            seen: dict = {}
            for v in vals:
                seen.setdefault(ck(v) if isinstance(v, str) else v, v)
            vals = list(seen.values())
        if self.func == "COUNT":
            return len(vals)
        if not vals:
            return None
        if self.func in ("MIN", "MAX"):
            pick = min if self.func == "MIN" else max
            return pick(vals, key=_sort_value)
        if self.kind == V.FLOAT:
            total = float(sum(float(v) for v in vals))
        else:
            total = sum(Decimal(v) if not isinstance(v, Decimal) else v for v in vals)
        if self.func == "SUM":
            return total
        return total / len(vals)


class _Plan:
    def __init__(self, engine: Engine, select: exp.Select):
        frm = select.args.get("from_")
        first = frm.this if frm is not None else None
        if not isinstance(first, exp.Table):
            raise _NotModelled
        tables = [first]
        joins = []
        for j in select.args.get("joins") or ():
            t = j.this
            side = (j.side or "").upper()
            kind = (j.kind or "").upper()
            if not isinstance(t, exp.Table) or j.args.get("using") or side not in ("", "LEFT"):
                raise _NotModelled
            if kind not in ("", "INNER", "CROSS", "OUTER"):
                raise _NotModelled
            tables.append(t)
            joins.append((side == "LEFT", j.args.get("on")))
        self.engine = engine
        self.schemas = []
        cols: list = []
        scales: list = []
        ranges: list = []
        starts = []
        for t in tables:
            if t.args.get("db") or t.args.get("catalog"):
                raise _NotModelled
            schema = engine.storage.schemas.get(t.name.lower())
            if schema is None or any(c.ctype.collation for c in schema.columns):
                raise _NotModelled  # a view, or comparisons under a column's own collation
            starts.append(len(cols))
            c, s, r = V.scope_columns(schema, t.alias_or_name)
            cols += c
            scales += s
            ranges += r
            self.schemas.append(schema)
        self.width = len(cols)
        scope = Scope(cols, scales, ranges)
        self.scope = scope
        if not _may_refuse(select, scope):
            raise _NotModelled  # nothing to check: no replay (it reads every table)
        # the joins: per inner table, (left?, hash column in the joined prefix, hash column
        # in the table, the rest of ON)
        self.joins = []
        for i, (left, on) in enumerate(joins, start=1):
            self.joins.append(self._join(left, on, starts[i], len(self.schemas[i].columns)))
        # WHERE's conjuncts, each evaluated as soon as the tables it names are joined (MySQL
        # attaches a condition to the first table of the plan where it can be evaluated)
        self.where_at: list = [None] * len(tables)
        where = select.args.get("where")
        if where is not None:
            levels: list[list] = [[] for _ in tables]
            for c in _conjuncts(where.this):
                at = 0
                for col in c.find_all(exp.Column):
                    i, _k = scope.resolve(col)
                    at = max(at, max(j for j, s0 in enumerate(starts) if s0 <= i))
                levels[at].append(c)
            for i, cs in enumerate(levels):
                if cs:
                    e = cs[0]
                    for c in cs[1:]:
                        e = exp.and_(e, c)
                    self.where_at[i] = compile_expr(e, scope).fn
        items = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
        # ``*`` and ``t.*`` compute nothing
        computed = [
            e
            for e in items
            if not isinstance(e, exp.Star)
            and not (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        ]
        if len(computed) != len(items) and any(
            isinstance(t, exp.Literal) and not t.is_string
            for clause in (select.args.get("group"), select.args.get("order"))
            if clause is not None
            for t in (o.this if isinstance(o, exp.Ordered) else o for o in clause.expressions)
        ):
            raise _NotModelled  # ORDER BY 2 after a ``*``: a column the star stands for
        items = computed
        aliases = {e.alias.lower(): e.this for e in select.expressions if isinstance(e, exp.Alias)}
        group = select.args.get("group")
        having = select.args.get("having")
        order = select.args.get("order")
        self.grouped = (
            group is not None
            or having is not None
            or any(e.find(*_AGGS) is not None for e in items)
            or (order is not None and order.find(*_AGGS) is not None)
        )
        if select.find(exp.AggFunc) is not None and not self._known_aggs(select):
            raise _NotModelled
        self.distinct = select.args.get("distinct") is not None
        self.limit, self.offset = self._limits(select)
        # aggregates become columns of a row extended past the joined row
        self.aggs: list[_Agg] = []
        ext_cols = list(cols)

        def lift(e: exp.Expression) -> exp.Expression:
            e = e.copy()
            for node in list(e.find_all(*_AGGS)):
                if node.find_ancestor(*_AGGS) is not None:
                    raise _NotModelled
                agg = _Agg(node, scope)
                name = f"a{len(self.aggs)}"
                self.aggs.append(agg)
                ext_cols.append((_AGG_TABLE, name, agg.kind))
                repl = exp.column(name, table=_AGG_TABLE)
                if node is e:
                    return repl
                node.replace(repl)
            return e

        if self.grouped:
            lifted = [lift(e) for e in items]
            having_l = lift(self._aliased(having.this, aliases)) if having is not None else None
            group_exprs = [
                self._resolve(g, items, aliases) for g in (group.expressions if group else [])
            ]
            order_l = [
                (lift(self._resolve(o.this, items, aliases)), bool(o.args.get("desc")))
                for o in (order.expressions if order else [])
            ]
            ext = Scope(
                ext_cols, scales + [None] * len(self.aggs), ranges + [None] * len(self.aggs)
            )
            self.items = [compile_expr(e, ext).fn for e in lifted]
            self.having = compile_expr(having_l, ext).fn if having_l is not None else None
            self.group = [compile_expr(g, scope).fn for g in group_exprs]
            self.order = [(compile_expr(e, ext).fn, d) for e, d in order_l]
            self.pk_order = None
        else:
            self.items = [compile_expr(e, scope).fn for e in items]
            self.having = None
            self.group = []
            terms = [
                (self._resolve(o.this, items, aliases), bool(o.args.get("desc")))
                for o in (order.expressions if order else [])
            ]
            self.order = [(compile_expr(e, scope).fn, d) for e, d in terms]
            self.pk_order = self._pk_order(terms) if terms and len(self.schemas) == 1 else None

    # --- planning -----------------------------------------------------------------------------
    @staticmethod
    def _known_aggs(select: exp.Select) -> bool:
        return all(isinstance(a, _AGGS) for a in select.find_all(exp.AggFunc))

    @staticmethod
    def _limits(select: exp.Select):
        limit = select.args.get("limit")
        offset = select.args.get("offset")
        n = skip = None
        if limit is not None:
            e = limit.expression
            if not isinstance(e, exp.Literal) or e.is_string:
                raise _NotModelled  # LIMIT ? and the like
            n = int(e.name)
            o = limit.args.get("offset")
            if o is not None:
                if not isinstance(o, exp.Literal) or o.is_string:
                    raise _NotModelled
                skip = int(o.name)
        if offset is not None:
            e = offset.expression
            if not isinstance(e, exp.Literal) or e.is_string:
                raise _NotModelled
            skip = int(e.name)
        return n, skip or 0

    @staticmethod
    def _resolve(e: exp.Expression, items: list, aliases: dict) -> exp.Expression:
        """A GROUP BY or ORDER BY term: a position or a select-list alias is that item."""
        if isinstance(e, exp.Literal) and not e.is_string:
            i = int(e.name)
            if not 1 <= i <= len(items):
                raise _NotModelled
            return items[i - 1]
        if isinstance(e, exp.Column) and not e.table and e.name.lower() in aliases:
            return aliases[e.name.lower()]
        return e

    def _aliased(self, e: exp.Expression, aliases: dict) -> exp.Expression:
        """HAVING's references to select-list aliases (``HAVING n > 1``) as their items; a
        table's column of the same name wins, as in MySQL."""
        e = e.copy()
        for col in list(e.find_all(exp.Column)):
            name = col.name.lower()
            if col.table or name not in aliases:
                continue
            try:
                self.scope.resolve(col)
            except E.Error:
                repl = aliases[name].copy()
                if col is e:
                    return repl
                col.replace(repl)
        return e

    def _join(self, left: bool, on, start: int, width: int):
        conjuncts = _conjuncts(on) if on is not None else []
        hashed = None
        for c in conjuncts:
            if not isinstance(c, exp.EQ):
                continue
            a, b = c.this, c.expression
            if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
                continue
            ia, ka = self.scope.resolve(a)
            ib, kb = self.scope.resolve(b)
            if ka != V.INT or kb != V.INT:
                continue
            inner = range(start, start + width)
            if ia in inner and ib < start:
                hashed = (ib, ia - start, c)
            elif ib in inner and ia < start:
                hashed = (ia, ib - start, c)
            else:
                continue
            break
        rest = [c for c in conjuncts if hashed is None or c is not hashed[2]]
        cond = None
        if rest:
            e = rest[0]
            for c in rest[1:]:
                e = exp.and_(e, c)
            cond = compile_expr(e, self.scope).fn
        return (left, hashed[0] if hashed else None, hashed[1] if hashed else None, cond, width)

    def _pk_order(self, terms: list):
        """Ordered by the one table's primary key, every column the same way: True for
        descending, False ascending; else None."""
        schema = self.schemas[0]
        pk = schema.primary_key
        if not pk or len(terms) != len(pk):
            return None
        desc = terms[0][1]
        for (e, d), i in zip(terms, pk):
            if d != desc or not isinstance(e, exp.Column):
                return None
            j, _k = self.scope.resolve(e)
            if j != i:
                return None
        return desc

    # --- evaluation ---------------------------------------------------------------------------
    def _rows(self, i: int) -> list:
        schema = self.schemas[i]
        rows = [r for _rid, r in self.engine.storage.select_with_rowid(schema.name, None)]
        pk = schema.primary_key
        if pk:  # InnoDB reads a table in its primary key's order
            rows.sort(key=lambda r: tuple(_sort_value(r[c]) for c in pk))
        return rows

    def _joined(self, params):
        """The joined rows, lazily, the first table outermost."""
        tables = [self._rows(i) for i in range(len(self.schemas))]
        indexes: list = []
        for i, (_left, outer_col, inner_col, _cond, _w) in enumerate(self.joins, start=1):
            if outer_col is None:
                indexes.append(None)
                continue
            idx: dict = {}
            for r in tables[i]:
                v = r[inner_col]
                if v is not None:
                    idx.setdefault(v, []).append(r)
            indexes.append(idx)
        joins = self.joins
        last = len(joins)
        where_at = self.where_at

        def expand(k: int, prefix: tuple):
            if k == last:
                yield prefix
                return
            left, outer_col, _inner_col, cond, width = joins[k]
            idx = indexes[k]
            if idx is not None:
                v = prefix[outer_col]
                candidates = idx.get(v, ()) if v is not None else ()
            else:
                candidates = tables[k + 1]
            where = where_at[k + 1]
            matched = False
            for r in candidates:
                row = prefix + tuple(r)
                if cond is not None and not truthy(cond(row, params)):
                    continue
                matched = True
                if where is None or truthy(where(row, params)):
                    yield from expand(k + 1, row)
            if left and not matched:
                row = prefix + (None,) * width
                if where is None or truthy(where(row, params)):
                    yield from expand(k + 1, row)

        first = where_at[0]
        for r in tables[0]:
            row = tuple(r)
            if first is None or truthy(first(row, params)):
                yield from expand(0, row)

    def _passing(self, params):
        """The joined rows WHERE keeps, WHERE evaluated as they are joined."""
        return self._joined(params)

    def check(self, params) -> None:
        if self.grouped:
            self._check_grouped(params)
            return
        items = self.items
        stop = None if self.limit is None else self.offset + self.limit
        rows = self._passing(params)
        if self.order and self.pk_order is None:
            got = list(rows)
            keys = [tuple(f(r, params) for f, _d in self.order) for r in got]
            rows = iter(_order(got, keys, [d for _f, d in self.order]))
        elif self.pk_order is not None:
            got = list(rows)
            if self.pk_order:
                got.reverse()  # read in primary key order, ascending: backwards
            rows = iter(got)
        seen: set = set()
        n = 0
        for row in rows:
            if stop is not None and n >= stop:
                return
            if self.distinct:
                vals = tuple(_sort_value(f(row, params)) for f in items)
                if vals in seen:
                    continue
                seen.add(vals)
            elif n >= self.offset:
                for f in items:
                    f(row, params)
            n += 1

    def _check_grouped(self, params) -> None:
        groups: dict = {}
        aggs = self.aggs
        for row in self._passing(params):
            key = tuple(_sort_value(f(row, params)) for f in self.group)
            g = groups.get(key)
            if g is None:
                g = groups[key] = (row, [[] for _ in aggs])
            for a, vals in zip(aggs, g[1]):
                vals.append(a.value_of(row, params))
        if not groups and not self.group:
            groups[()] = ((None,) * self.width, [[] for _ in aggs])  # one group, no rows
        ordered = [groups[k] for k in sorted(groups)]
        ext = [row + tuple(a.result(v) for a, v in zip(aggs, vals)) for row, vals in ordered]
        if self.having is not None:
            ext = [r for r in ext if truthy(self.having(r, params))]
        if self.order:
            keys = [tuple(f(r, params) for f, _d in self.order) for r in ext]
            ext = _order(ext, keys, [d for _f, d in self.order])
        stop = None if self.limit is None else self.offset + self.limit
        for n, r in enumerate(ext):
            if stop is not None and n >= stop:
                return
            if n >= self.offset:
                for f in self.items:
                    f(r, params)

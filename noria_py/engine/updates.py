"""UPDATE and DELETE (single- and multi-table): preparing them into matchers over base
storage, and pushing the WHERE clause down to SQLite where that is exact.
"""

from __future__ import annotations

from sqlglot import exp

from .. import errors as E
from ..result import Result
from ..sql import names as N
from ..sql import proxy_types, transpile
from ..sql import values as V
from ..sql.collation import ck
from ..sql.dialect import DIALECT
from ..sql.expr import Scope, Unsupported, compile_expr, truthy
from ..sql.parse import parse
from ..storage.sqlite import TableSchema, q
from .base import QueryEntry, _count_params
from .inserts import (
    _column_table,
    _compile_value,
    _no_zero_date,
    _noted,
    _returning,
    _returning_result,
    _stamped,
    _stand_in,
)
from .prepared import FuncPrepared, Prepared, ProxyPrepared
from .schema import _quote_ident
from .selects import _int_param
from .writes import _Multi, _pairs


def _collate_refs(where: exp.Expression, schema: TableSchema, alias: str) -> exp.Expression:
    """A single-table WHERE with each column that has its own collation compared under it."""
    names = {c.name.lower(): c.ctype.collation for c in schema.columns if c.ctype.collation}
    where = where.copy()
    qual = {(alias or N.bare(schema.name)).lower(), schema.name.lower()}
    for col in list(where.find_all(exp.Column)):
        coll = names.get(col.name.lower())
        if not coll or isinstance(col.parent, exp.Collate):
            continue
        if col.table and col.table.lower() not in qual:
            continue
        if col.find_ancestor(exp.Select) is not None:
            continue  # inside a subquery: its own tables
        col.replace(exp.Collate(this=col.copy(), expression=exp.Var(this=coll)))
    return where


def _pushdown(where: exp.Expression, schema: TableSchema):
    """Translate a simple WHERE to SQLite for an indexed candidate search.

    Returns (sql, value getters, expected kinds) or None when the predicate is not in the
    subset whose SQLite meaning is at least as wide as MySQL's (the engine re-checks every
    candidate with its own evaluator, so only missed rows would be a problem).
    """
    getters = []
    kinds = []

    def col_kind(c: exp.Column):
        i = schema.index_of(c.name)
        if i is None:
            return None
        k = schema.columns[i].ctype.kind
        if k.__class__ is V.MemberKind:
            return None  # a number compared with it is a position: the evaluator decides
        return k if k in (V.INT, V.STR) else None

    def val(e, kind):
        if isinstance(e, exp.Placeholder) and e.this and str(e.this).startswith("p"):
            idx = int(str(e.this)[1:])
            getters.append(lambda p, idx=idx: p[idx])
            kinds.append(kind)
            return "?"
        if isinstance(e, exp.Literal):
            v = e.this if e.is_string else None
            if not e.is_string:
                try:
                    v = int(e.this)
                except ValueError:
                    return None
            if V.kind_of_value(v) != kind:
                return None
            getters.append(lambda p, v=v: v)
            kinds.append(None)
            return "?"
        return None

    def tr(e):
        if e.args.get("negate"):
            return None
        if isinstance(e, exp.Paren):
            inner = tr(e.this)
            return None if inner is None else f"({inner})"
        if isinstance(e, exp.And):
            # a conjunct that does not translate is left to the evaluator: the other one
            # alone finds a superset (MySQL, too, reads only the rows an index finds)
            parts = []
            for side in (e.this, e.expression):
                mark = len(getters)
                t = tr(side)
                if t is None:
                    del getters[mark:]
                    del kinds[mark:]
                else:
                    parts.append(t)
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else f"({parts[0]} AND {parts[1]})"
        if isinstance(e, exp.Or):
            a = tr(e.this)
            b = tr(e.expression)
            if a is None or b is None:
                return None
            return f"({a} OR {b})"
        ops = {exp.EQ: "=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
        if type(e) in ops:
            a, b = e.this, e.expression
            if isinstance(b, exp.Column) and not isinstance(a, exp.Column):
                a, b = b, a
                flip = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "=": "="}
                op = flip[ops[type(e)]]
            else:
                op = ops[type(e)]
            if not isinstance(a, exp.Column):
                return None
            k = col_kind(a)
            if k is None:
                return None
            v = val(b, k)
            if v is None:
                return None
            return f"{q(schema.columns[schema.index_of(a.name)].name)} {op} {v}"
        if isinstance(e, exp.In) and isinstance(e.this, exp.Column) and not e.args.get("query"):
            k = col_kind(e.this)
            if k is None:
                return None
            parts = []
            for x in e.expressions:
                v = val(x, k)
                if v is None:
                    return None
                parts.append(v)
            return f"{q(schema.columns[schema.index_of(e.this.name)].name)} IN ({', '.join(parts)})"
        return None

    sql = tr(where)
    if sql is None:
        return None
    return sql, getters, kinds


class UpdatesMixin:
    """UPDATE and DELETE, single- and multi-table: a part of ``Engine`` (engine/core.py).

    State it owns: none (reads ``storage`` and ``views``).
    Calls into other parts: the row checks of ``InsertsMixin`` (``_check_constraints``,
    ``_finish_update``, ``_fk_after``, ``_fk_referenced``, ``_generated``), the write path
    (``_write``), ``_proxy`` (reads) for the SELECT a write reads from, ``_schema`` (core).
    """

    def _matcher(self, schema: TableSchema, where: exp.Expression | None, alias: str = ""):
        """Return fn(params) -> [(rowid, row)] of rows matching WHERE, with MySQL semantics
        (columns qualified by ``alias``, else by the table's name)."""
        scope = Scope(*V.scope_columns(schema, alias))
        if where is None:
            return lambda params: self.storage.select_with_rowid(schema.name, None)
        collated = any(c.ctype.collation for c in schema.columns)
        if collated:
            where = _collate_refs(where, schema, alias)
        try:
            pred = compile_expr(where, scope).fn
        except Unsupported as e:
            if collated or where.find(exp.Subquery, exp.Select, exp.Exists) is not None:
                # a column with its own collation, or a subquery (IN (SELECT ...), EXISTS,
                # a scalar one): base storage finds the rows, as the statement began
                return self._storage_matcher(schema, where, alias)
            raise E.NotSupportedError(f"WHERE clause not supported: {e}") from None
        push = _pushdown(where, schema)

        def match(params):
            if push is not None:
                sql, getters, checks = push
                vals = []
                ok = True
                for g, kind in zip(getters, checks):
                    v = g(params)
                    if kind is not None and v is not None and V.kind_of_value(v) != kind:
                        ok = False
                        break
                    vals.append(V.to_storage(v))
                if ok:
                    cand = self.storage.select_with_rowid(schema.name, sql, vals)
                    return [(rid, r) for rid, r in cand if truthy(pred(r, params))]
            cand = self.storage.select_with_rowid(schema.name, None)
            return [(rid, r) for rid, r in cand if truthy(pred(r, params))]

        return match

    def _storage_matcher(self, schema: TableSchema, where: exp.Expression, alias: str):
        """``_matcher`` for a WHERE base storage answers (a column with its own collation):
        the rows whose rowid ``SELECT rowid FROM t WHERE ...`` finds there."""
        table = exp.Table(this=exp.to_identifier(schema.name, quoted=True))
        if alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        probe = exp.select(exp.column("rowid", table=alias or None)).from_(table)
        probe = probe.where(where.copy())
        prep = self._proxy(probe, _count_params(probe), probe.sql(DIALECT))

        def match(params):
            ids = {r[0] for r in prep.run(self, params).rows}
            return [
                (rid, r)
                for rid, r in self.storage.select_with_rowid(schema.name, None)
                if rid in ids
            ]

        return match

    def _prepare_multi_write(self, ast, nparams: int) -> Prepared:
        """Multi-table UPDATE (``UPDATE a JOIN b ON ... SET a.x = b.y``, ``UPDATE a, b ...``)
        and DELETE (``DELETE a FROM a JOIN b ...``, ``DELETE FROM a USING a JOIN b ...``).
        The join is answered by base storage with MySQL's semantics (the transpiled SELECT of
        each target row's id and each SET value); every target row changes once (the first
        joined row it meets gives its values), and each table's delta enters the dataflow."""
        is_update = isinstance(ast, exp.Update)
        if ast.args.get("order") or ast.args.get("limit"):
            raise E.ProgrammingError(
                "Incorrect usage of multi-table "
                + ("UPDATE" if is_update else "DELETE")
                + " and ORDER BY/LIMIT",
                1221,
                "HY000",
            )
        if is_update:
            source = ast.this.copy()
        elif ast.args.get("using"):
            source = ast.args["using"][0].copy()
        elif isinstance(ast.this, exp.Expression):
            source = ast.this.copy()
        else:  # `DELETE t WHERE ...`: a table list with no FROM
            raise E.ProgrammingError(
                "You have an error in your SQL syntax: DELETE of a table list needs FROM",
                1064,
                "42000",
            )
        joins = source.args.get("joins") or []
        source.set("joins", None)
        items = [source] + [j.this for j in joins]
        aliases: dict[str, TableSchema] = {}
        for it in items:
            if not isinstance(it, exp.Table):
                raise E.NotSupportedError("a multi-table write over a derived table")
            if it.name.lower() in self.views:
                raise E.ProgrammingError(
                    f"The target table {it.name} of the {'UPDATE' if is_update else 'DELETE'} "
                    "is not updatable",
                    1288,
                    "HY000",
                )
            aliases[it.alias_or_name.lower()] = self._schema(it.name)

        def owner(col: exp.Column) -> str:
            if col.table:
                if col.table.lower() not in aliases:
                    raise E.bad_field(f"{col.table}.{col.name}")
                return col.table.lower()
            hits = [a for a, sch in aliases.items() if sch.index_of(col.name) is not None]
            if not hits:
                raise E.bad_field(col.name)
            if len(hits) > 1:
                raise E.ProgrammingError(
                    f"Column '{col.name}' in field list is ambiguous", 1052, "23000"
                )
            return hits[0]

        sets: list = []  # (alias, column index, position of its value in the result)
        targets: list[str] = []
        if is_update:
            for eq in ast.expressions:
                a = owner(eq.this)
                i = aliases[a].index_of(eq.this.name)
                if aliases[a].columns[i].generated is not None:
                    raise E.ProgrammingError(
                        f"The value specified for generated column '{eq.this.name}' in table "
                        f"'{aliases[a].name}' is not allowed.",
                        3105,
                        "HY000",
                    )
                sets.append((a, i, eq.expression))
                if a not in targets:
                    targets.append(a)
        else:
            names = ast.args.get("tables") or [ast.this]
            for t in names:
                a = t.name.lower()
                if a not in aliases:
                    raise E.ProgrammingError(
                        f"Unknown table '{t.name}' in MULTI DELETE", 1109, "42S02"
                    )
                if a not in targets:
                    targets.append(a)
        select_items = [f"{_quote_ident(a)}.rowid AS `__r{k}`" for k, a in enumerate(targets)]
        select_items += [f"{e.sql(DIALECT)} AS `__v{k}`" for k, (_a, _i, e) in enumerate(sets)]
        where = ast.args.get("where")
        text = f"SELECT {', '.join(select_items)} FROM {source.sql(DIALECT)}"
        text += "".join(" " + j.sql(DIALECT) for j in joins)
        if where is not None:
            text += f" WHERE {where.this.sql(DIALECT)}"
        sel, _n = parse(text)
        rw = transpile.to_sqlite(sel, self.storage.schemas)
        kinds = proxy_types.infer_kinds(sel, self.storage.schemas)
        finder = ProxyPrepared(rw.sql, nparams, QueryEntry("", text, "proxied", None), kinds)
        finder.param_kinds = rw.param_kinds
        nt = len(targets)

        def run(params):
            counts = [0, 0]

            def apply():
                found = finder.run(self, params).rows
                pairs: list = []
                for k, a in enumerate(targets):
                    schema = aliases[a]
                    first: dict = {}
                    for r in found:
                        rid = r[k]
                        if rid is not None and rid not in first:
                            first[rid] = r
                    if not first:
                        continue
                    ids = list(first)
                    current = []
                    for chunk in range(0, len(ids), 500):
                        part = ids[chunk : chunk + 500]
                        current += self.storage.select_with_rowid(
                            schema.name, f"rowid IN ({', '.join('?' for _ in part)})", part
                        )
                    counts[1] += len(current)
                    if not is_update:
                        self.storage.delete_rows(schema.name, [rid for rid, _ in current])
                        counts[0] += len(current)
                        batch = [(row, -1) for _, row in current]
                    else:
                        mine = [(i, nt + j) for j, (sa, i, _e) in enumerate(sets) if sa == a]
                        stamp = _stamped(schema, {i for i, _p in mine})
                        cols = schema.columns
                        changes, batch = [], []
                        for rid, row in current:
                            new = list(row)
                            for i, pos in mine:
                                v = first[rid][pos]
                                c = cols[i]
                                if v is None and not c.nullable:
                                    raise E.IntegrityError(
                                        f"Column '{c.name}' cannot be null", 1048, "23000"
                                    )
                                new[i] = (
                                    V.coerce_for_column(v, c.ctype, c.name)
                                    if v is not None
                                    else None
                                )
                            if tuple(new) != row:
                                self._finish_update(schema, new, stamp)
                                changes.append((rid, tuple(new)))
                                batch += [(row, -1), (tuple(new), 1)]
                        if changes:
                            self.storage.update_rows(schema.name, changes)
                        counts[0] += len(changes)
                    pairs.extend(_pairs(schema.name, self._fk_after(schema, batch)))
                return _Multi(pairs)

            self._write(aliases[targets[0]].name, apply)
            return Result(rowcount=counts[0], matched=counts[1])

        return FuncPrepared(run, nparams, is_write=True, kind="update" if is_update else "delete")

    @staticmethod
    def _order_limit(schema: TableSchema, ast, scope):
        """UPDATE/DELETE ... [ORDER BY ...] [LIMIT n]: fn(found rows, params) -> the rows the
        statement changes, in order (ties, and no ORDER BY, go by primary key, then by
        insertion, as InnoDB scans)."""
        order = ast.args.get("order")
        limit = ast.args.get("limit")
        if order is None and limit is None:
            return lambda found, params: found
        from ..dataflow.ops.reader import make_sort_key

        fns = []
        for o in order.expressions if order is not None else []:
            try:
                fns.append((compile_expr(o.this, scope).fn, bool(o.args.get("desc"))))
            except Unsupported as e:
                raise E.NotSupportedError(f"ORDER BY not supported: {e}") from None
        limit_fn = None
        if limit is not None:
            lim = limit.args.get("expression") or limit.this
            try:
                limit_fn = compile_expr(lim, Scope([])).fn
            except Unsupported as e:
                raise E.NotSupportedError(f"LIMIT not supported: {e}") from None
        pk = list(schema.primary_key)
        keyf = make_sort_key([(i, d) for i, (_f, d) in enumerate(fns)])

        def pick(found, params):
            decorated = []
            for rid, row in found:
                vals = tuple(f(row, params) for f, _d in fns)
                vals += tuple(row[i] for i in pk) + (rid,)
                decorated.append((vals, rid, row))
            n = len(fns)
            key_tail = make_sort_key([(i, False) for i in range(n, n + len(pk) + 1)])
            decorated.sort(key=lambda d: (keyf(d[0])[:-1], key_tail(d[0])[:-1]))
            out = [(rid, row) for _v, rid, row in decorated]
            if limit_fn is not None:
                k = limit_fn((), params)
                k = _int_param(k, "LIMIT")
                out = out[: max(k, 0)]
            return out

        return pick

    def _prepare_update(self, ast: exp.Update, nparams: int) -> Prepared:
        table = ast.this
        ignore = bool(ast.meta.get("ignore"))
        if isinstance(table, exp.Table) and table.args.get("joins"):
            if ignore:
                raise E.NotSupportedError(
                    "This version doesn't yet support 'UPDATE IGNORE of several tables'"
                )
            return self._prepare_multi_write(ast, nparams)
        if not isinstance(table, exp.Table) or ast.args.get("from_") or ast.args.get("joins"):
            raise E.NotSupportedError("UPDATE ... FROM is not supported")
        schema = self._schema(table.name)
        scope = Scope(*V.scope_columns(schema, table.alias))
        pick = self._order_limit(schema, ast, scope)
        sets = []
        for eq in ast.expressions:
            col = eq.this
            i = schema.index_of(col.name)
            if i is None:
                raise E.bad_field(col.name)
            if schema.columns[i].generated is not None:
                if isinstance(eq.expression, exp.Var) and eq.expression.name.upper() == "DEFAULT":
                    continue  # SET g = DEFAULT: it is computed anyway
                raise E.ProgrammingError(
                    f"The value specified for generated column '{col.name}' in table "
                    f"'{schema.name}' is not allowed.",
                    3105,
                    "HY000",
                )
            if eq.expression.find(exp.Subquery, exp.Select, exp.Exists) is not None:
                assigned = {schema.columns[j].name.lower() for j, _f in sets}
                sets.append(
                    (i, self._set_by_query(schema, table, eq.expression, nparams, assigned))
                )
                continue
            try:
                c = _compile_value(eq.expression, scope)
                if c.hexnum is not None and schema.columns[i].ctype.kind in (
                    V.INT,
                    V.DECIMAL,
                    V.FLOAT,
                ):  # SET n = 0x41 into a number column: its integer
                    c = compile_expr(exp.Literal.number(c.hexnum), scope)
                sets.append((i, c.fn))
            except Unsupported as e:
                raise E.NotSupportedError(f"SET expression not supported: {e}") from None
        stamp = _stamped(schema, {i for i, _f in sets})
        where = ast.args["where"].this if ast.args.get("where") else None
        match = self._matcher(schema, where, table.alias)
        cols = schema.columns
        if ignore:
            return self._update_ignore(schema, sets, stamp, match, pick, ast, nparams)
        # strict mode: a conversion's warning in WHERE or SET is the statement's error
        match = self._strictly(match)
        sets = [(i, self._strictly(fn)) for i, fn in sets]

        table_text = _column_table(schema.name)
        places = self._read_places(schema, ast)

        def run(params):
            changed_holder = [0, 0]
            notes = V.Adjust(table_text, strict=True)  # strict mode's notes

            def apply():
                notes.conditions = []
                found = pick(match(params), params)
                changed_holder[1] = len(found)
                changes = []
                batch = []
                noted = []  # (rowid, number of notes) after each row that left one
                at = [None]  # the row being computed
                try:
                    computed(found, params, changes, batch, noted, at)
                except E.Error as err:
                    # MySQL's diagnostics area lists the notes the rows before it left first
                    if notes.conditions:
                        if places is not None and len(notes.conditions) > (
                            noted[-1][1] if noted else 0
                        ):
                            noted.append((at[0], len(notes.conditions)))
                        _noted(err, renamed(noted), self._cur)
                    raise
                if noted:  # the notes name the rows as MariaDB reads them
                    notes.conditions = renamed(noted)
                if changes:
                    try:
                        self.storage.update_rows(schema.name, changes)
                    except E.Error as err:
                        if len(found) == 1:  # (of several rows, which one failed is not known)
                            _noted(err, notes.conditions, self._cur)
                        raise
                changed_holder[0] = len(changes)
                return self._fk_after(schema, batch)

            def renamed(noted) -> list:
                """The notes, each naming its row by its place in MariaDB's reading order."""
                if places is None or not noted:
                    return notes.conditions
                place, start, out = places(), 0, []
                for rowid, end in noted:
                    for lv, code, msg in notes.conditions[start:end]:
                        head = msg.rsplit(" at row ", 1)[0]
                        out.append((lv, code, f"{head} at row {place[rowid]}"))
                    start = end
                return out

            def computed(found, params, changes, batch, noted, at) -> None:
                """Each found row's new values, in ``changes`` and ``batch``."""
                for n, (rowid, row) in enumerate(found, 1):
                    new = list(row)
                    notes.row = n
                    at[0] = rowid
                    # MySQL evaluates SET assignments left to right, each seeing earlier ones
                    for i, fn in sets:
                        v = fn(tuple(new), params)
                        c = cols[i]
                        if v is None:
                            if not c.nullable:
                                raise E.IntegrityError(
                                    f"Column '{c.name}' cannot be null",
                                    E.ER_BAD_NULL_ERROR,
                                    "23000",
                                )
                        else:
                            try:
                                v = V.coerce_for_column(v, c.ctype, c.name, notes)
                            except E.DataError as err:
                                k = n if places is None else places()[rowid]
                                raise V.at_row(err, k, table_text) from None
                        new[i] = v
                    if places is not None and len(notes.conditions) > (
                        noted[-1][1] if noted else 0
                    ):
                        noted.append((rowid, len(notes.conditions)))
                    if tuple(new) != row:
                        self._finish_update(schema, new, stamp)
                    new = tuple(new)
                    if new != row:
                        changes.append((rowid, new))
                        batch.append((row, -1))
                        batch.append((new, 1))

            self._write(schema.name, apply)
            return Result(
                rowcount=changed_holder[0], matched=changed_holder[1], conditions=notes.conditions
            )

        return FuncPrepared(run, nparams, is_write=True, kind="update")

    def _strictly(self, fn):
        """``fn`` evaluated as a write's expressions are under the connection's strict mode
        (``values.STRICT_EVALUATION``: a string that is not wholly a number is 1292, x / 0 is
        1365 with ERROR_FOR_DIVISION_BY_ZERO), where MySQL would only warn outside it."""
        state = V.STRICT_EVALUATION

        def run(*args):
            t = self._cur
            if not t.strict or state.on:
                return fn(*args)
            state.on = True
            state.division = t.div_zero
            try:
                return fn(*args)
            finally:
                state.on = False
                state.division = False

        return run

    def _set_by_query(self, schema: TableSchema, table: exp.Table, expr, nparams: int, assigned):
        """``SET c = (SELECT ...)``: the expression computed by base storage for each row, as
        ``SELECT expr FROM t WHERE pk = <the row's key>`` (the subquery may name the row's
        columns). It reads the row as it was before the statement, so an expression naming a
        column an earlier assignment of the statement changed is refused."""
        pk = list(schema.primary_key)
        named = {c.name.lower() for c in expr.find_all(exp.Column)}
        if not pk or named & assigned or {schema.columns[k].name.lower() for k in pk} & assigned:
            raise E.NotSupportedError(
                "This version doesn't yet support 'a subquery in SET without a primary key, "
                "or after an assignment it reads'"
            )
        alias = table.alias_or_name
        conds = [
            exp.EQ(
                this=exp.column(schema.columns[k].name, table=alias),
                expression=exp.Placeholder(this=f"p{nparams + j}"),
            )
            for j, k in enumerate(pk)
        ]
        query = exp.select(expr.copy()).from_(table.copy()).where(exp.and_(*conds))
        sql = query.sql(dialect=DIALECT)
        holder: list = []

        def fn(row, params):
            if not holder:
                holder.append(self._proxy(query, nparams + len(pk), sql, reason="SET subquery"))
            res = holder[0].run(self, tuple(params) + tuple(row[k] for k in pk))
            return res.rows[0][0] if res.rows else None

        return fn

    def _read_places(self, schema: TableSchema, ast):
        """An UPDATE whose condition is on no indexed column: MariaDB reads the whole table,
        and its warnings number the rows it reads. Then a function giving each row's place
        (by rowid, in primary key order), else None (the rows matched are numbered)."""
        where = ast.args.get("where")
        keyed = {i for k in [schema.primary_key, *schema.uniques, *schema.indexes] for i in k}
        if (
            where is None
            or ast.args.get("order")
            or ast.args.get("limit")
            or any(schema.index_of(c.name) in keyed for c in where.find_all(exp.Column))
        ):
            return None
        pk = list(schema.primary_key)

        def places() -> dict:
            every = self.storage.select_with_rowid(schema.name, None)
            every.sort(key=lambda f: (tuple(ck(f[1][i]) for i in pk), f[0]))
            return {rid: k for k, (rid, _row) in enumerate(every, 1)}

        return places

    def _update_ignore(self, schema: TableSchema, sets, stamp, match, pick, ast, nparams):
        """UPDATE IGNORE: row by row in the order InnoDB reads them (primary key order unless
        ORDER BY says otherwise), a value that does not fit its column stored as MySQL adjusts
        it (with its warning, ``values.Adjust``; the warnings' row is the row's place among
        the rows MariaDB reads: all of them for a condition on no indexed column, else the
        ones the statement matched), NULL into a NOT NULL column as its type's zero
        (1048), and a row whose new values a unique key or a CHECK refuses left as it was
        (MariaDB skips a duplicate key without a warning; a CHECK leaves its error's)."""
        if schema.foreign_keys or schema.name.lower() in self._fk_referenced():
            raise E.NotSupportedError(
                "This version doesn't yet support 'UPDATE IGNORE of a table a FOREIGN KEY involves'"
            )
        cols = schema.columns
        pk = list(schema.primary_key)
        ordered = bool(ast.args.get("order"))
        table_text = _column_table(schema.name)
        places = self._read_places(schema, ast)

        def run(params):
            counts = [0, 0]
            adjust = V.Adjust(table_text)

            def apply():
                adjust.conditions = []
                found = pick(match(params), params)
                if not ordered:
                    found.sort(key=lambda f: (tuple(ck(f[1][i]) for i in pk), f[0]))
                counts[1] = len(found)
                place = places() if places is not None and found else None
                batch = []
                changes = 0
                for n, (rowid, row) in enumerate(found, 1):
                    adjust.row = n if place is None else place[rowid]
                    new = list(row)
                    for i, fn in sets:  # left to right, each seeing the ones before
                        v = fn(tuple(new), params)
                        c = cols[i]
                        if v is None:
                            if not c.nullable:
                                adjust.warn(
                                    E.ER_BAD_NULL_ERROR, f"Column '{c.name}' cannot be null"
                                )
                                v = V.implicit_default(c.ctype, c.name)
                        else:
                            v = V.coerce_for_column(v, c.ctype, c.name, adjust)
                        new[i] = v
                    if tuple(new) != row:
                        if self._generated(schema):
                            _no_zero_date(new)
                        self._finish_update(schema, new, stamp)
                    new = tuple(new)
                    if new == row:
                        continue
                    tried, zero = _stand_in(schema, new)
                    self.storage.savepoint("upd")
                    try:
                        self.storage.update_rows(schema.name, [(rowid, tuple(tried))])
                        if schema.checks:
                            self._check_constraints(schema, [tuple(tried)])
                        if zero is not None:  # it would be stored: the zero date is refused
                            self.storage.rollback_to("upd")
                            raise zero.error()
                    except E.IntegrityError as err:
                        self.storage.rollback_to("upd")
                        if err.errno != E.ER_DUP_ENTRY:
                            adjust.warn(err.errno, err.msg or str(err))
                        continue
                    self.storage.release("upd")
                    changes += 1
                    batch.append((row, -1))
                    batch.append((new, 1))
                counts[0] = changes
                return batch

            self._write(schema.name, apply)
            return Result(rowcount=counts[0], matched=counts[1], conditions=adjust.conditions)

        return FuncPrepared(run, nparams, is_write=True, kind="update")

    def _prepare_delete(self, ast: exp.Delete, nparams: int) -> Prepared:
        table = ast.this
        if (
            ast.args.get("using")
            or ast.args.get("tables")
            or (isinstance(table, exp.Table) and table.args.get("joins"))
        ):
            return self._prepare_multi_write(ast, nparams)
        if not isinstance(table, exp.Table):
            raise E.NotSupportedError("this DELETE is not supported")
        schema = self._schema(table.name)
        where = ast.args["where"].this if ast.args.get("where") else None
        match = self._matcher(schema, where, table.alias)
        scope = Scope(*V.scope_columns(schema, table.alias))
        pick = self._order_limit(schema, ast, scope)

        returning = _returning(ast, schema)

        def run(params):
            n = [0]
            rows_gone: list = []

            def apply():
                found = pick(match(params), params)
                if found and not ast.args.get("order") and schema.primary_key:
                    if any(
                        fk.ref_table.lower() == schema.name.lower() for fk in schema.foreign_keys
                    ):
                        # InnoDB deletes row by row in primary-key order, and a foreign key
                        # of the table to itself is checked at each row (foreign_keys.py)
                        pk = schema.primary_key
                        found.sort(key=lambda f: tuple(ck(f[1][i]) for i in pk))
                if found:
                    self.storage.delete_rows(schema.name, [rid for rid, _ in found])
                n[0] = len(found)
                rows_gone[:] = [row for _, row in found]
                return self._fk_after(schema, [(row, -1) for _, row in found])

            self._write(schema.name, apply)
            if returning is not None:
                return _returning_result(returning, rows_gone, params)
            return Result(rowcount=n[0])

        return FuncPrepared(run, nparams, is_write=True, kind="delete")

"""Random SELECT statements (and view definitions) over a random schema.

Every generated query is valid MySQL and valid SQLite and means the same in both, which rules
out a few things on purpose:

- no ``/`` (MySQL divides into a DECIMAL, SQLite into an integer) and no CONCAT;
- UPPER only as a top-level output column (MySQL's case-insensitive collation would make an
  uppercase value equal a lowercase one in a comparison, a join, a UNION or a GROUP BY);
- AVG only as a top-level output of an unordered query (MySQL rounds it to 4 decimals, SQLite
  does not; the comparison uses a tolerance);
- ORDER BY only with a total order: after the chosen sort keys come all output columns, so rows
  that tie are identical and the ordered result is fully determined; LIMIT only with ORDER BY;
- parameters (``?``) only as ``column = ?`` and ``column IN (?, ?)`` in a top-level WHERE;
- ONLY_FULL_GROUP_BY: outputs of a grouped query are its group keys and aggregates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from .schema import INT, STR, Relation, Table, literal, rare_null_values_of

REAL = "REAL"  # an AVG: compared with a tolerance, never fed to another operator
INT_COLUMN = "INT_COLUMN"  # the kind of a parameter compared with an INT column of a base table

# Which query shapes a test family draws. "mixed" draws from all of them.
FAMILIES = ("filter", "join", "aggregate", "topk", "union", "nested", "mixed")


@dataclass
class Select:
    """A generated SELECT: its text, typed output columns and how to compare its results."""

    sql: str
    outputs: list[tuple[str, str]]
    param_kinds: list[str] = field(default_factory=list)
    ordered: bool = False
    approx: bool = False


@dataclass
class Query:
    """A top-level query plus the parameter tuples it is read with after every write batch."""

    sql: str
    param_kinds: tuple[str, ...]
    param_sets: list[tuple]
    ordered: bool
    approx: bool
    n_columns: int


class Exprs:
    """Draws typed expressions and predicates over a scope of ``(reference, kind)`` columns."""

    def __init__(self, draw, scope: list[tuple[str, str]]):
        self.draw = draw
        self.cols = {INT: [r for r, k in scope if k == INT], STR: [r for r, k in scope if k == STR]}

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    def leaf(self, kind: str) -> str:
        cols = self.cols[kind]
        if cols and self.draw(st.integers(0, 3)) > 0:
            return self.choice(cols)
        return literal(self.draw(rare_null_values_of(kind)))

    def expr(self, kind: str, depth: int) -> str:
        return self.int_expr(depth) if kind == INT else self.str_expr(depth)

    def int_expr(self, depth: int) -> str:
        if depth <= 0:
            return self.leaf(INT)
        form = self.choice(
            ["leaf", "leaf", "arith", "arith", "abs", "case", "coalesce", "length", "pred"]
        )
        sub = depth - 1
        if form == "arith":
            op = self.choice(["+", "-", "*"])
            return f"({self.arith_operand(sub)} {op} {self.arith_operand(sub)})"
        if form == "abs":
            return f"ABS({self.arith_operand(sub)})"
        if form == "case":
            return self.case(INT, sub)
        if form == "coalesce":
            fn = self.choice(["COALESCE", "IFNULL"])
            return f"{fn}({self.int_expr(sub)}, {self.int_expr(sub)})"
        if form == "length":
            return f"LENGTH({self.str_expr(sub)})"
        if form == "pred":
            return f"({self.pred(sub)})"
        return self.leaf(INT)

    def arith_operand(self, depth: int) -> str:
        # MySQL types arithmetic and ABS() of a bare NULL literal as DOUBLE (SQLite keeps
        # INTEGER): an integer NULL keeps both on integers
        e = self.int_expr(depth)
        return "CAST(NULL AS SIGNED)" if e == "NULL" else e

    def str_expr(self, depth: int) -> str:
        if depth <= 0:
            return self.leaf(STR)
        form = self.choice(["leaf", "leaf", "leaf", "lower", "case", "coalesce"])
        sub = depth - 1
        if form == "lower":
            return f"LOWER({self.str_expr(sub)})"
        if form == "case":
            return self.case(STR, sub)
        if form == "coalesce":
            fn = self.choice(["COALESCE", "IFNULL"])
            return f"{fn}({self.str_expr(sub)}, {self.str_expr(sub)})"
        return self.leaf(STR)

    def case(self, kind: str, depth: int) -> str:
        branches = self.draw(st.integers(1, 2))
        parts = ["CASE"]
        for _ in range(branches):
            parts.append(f"WHEN {self.pred(depth)} THEN {self.expr(kind, depth)}")
        if self.draw(st.booleans()):
            parts.append(f"ELSE {self.expr(kind, depth)}")
        parts.append("END")
        return " ".join(parts)

    def pred(self, depth: int) -> str:
        forms = ["cmp", "cmp", "null", "in", "between"]
        if self.cols[STR]:
            forms += ["like", "cmp_str"]
        if depth > 0:
            forms += ["and", "or", "not"]
        form = self.choice(forms)
        sub = max(depth - 1, 0)
        if form in ("cmp", "cmp_str"):
            kind = STR if form == "cmp_str" else INT
            op = self.choice(["=", "<>", "<", "<=", ">", ">="])
            return f"{self.expr(kind, sub)} {op} {self.expr(kind, sub)}"
        if form == "null":
            kind = self.choice([INT, STR])
            neg = self.choice(["", "NOT "])
            return f"{self.expr(kind, sub)} IS {neg}NULL"
        if form == "in":
            kind = self.choice([INT, STR]) if self.cols[STR] else INT
            items = self.draw(st.lists(rare_null_values_of(kind), min_size=1, max_size=3))
            neg = self.choice(["", "NOT "])
            listed = ", ".join(literal(v) for v in items)
            return f"{self.expr(kind, sub)} {neg}IN ({listed})"
        if form == "between":
            neg = self.choice(["", "NOT "])
            lo, hi = self.leaf(INT), self.leaf(INT)
            return f"{self.int_expr(sub)} {neg}BETWEEN {lo} AND {hi}"
        if form == "like":
            pattern = self.choice(["%", "a%", "%a", "%b%", "_", "a_", "_b%", "", "ab", "%c"])
            neg = self.choice(["", "NOT "])
            return f"{self.str_expr(sub)} {neg}LIKE '{pattern}'"
        if form == "and":
            return f"({self.pred(sub)} AND {self.pred(sub)})"
        if form == "or":
            return f"({self.pred(sub)} OR {self.pred(sub)})"
        return f"NOT ({self.pred(sub)})"


class QueryGen:
    """Draws SELECT statements over a fixed list of relations (tables and views)."""

    def __init__(self, draw, relations: list[Relation], derived_odds: int = 6):
        self.draw = draw
        self.relations = relations
        # A FROM item is a derived table (a subquery) once in ``derived_odds`` draws.
        self.derived_odds = derived_odds
        # References to INT columns of base tables (not of views or derived tables).
        self.table_int_refs: set[str] = set()

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    # -- FROM ------------------------------------------------------------------------------

    def from_item(self, level: int, alias: str, allow_derived: bool) -> tuple[str, list]:
        """One FROM item: a relation or (rarely) a derived table, with its aliased columns."""
        if allow_derived and level < 2 and self.draw(st.integers(1, self.derived_odds)) == 1:
            body = self.relation_body(level + 1)
            sql = f"({body.sql}) AS {alias}"
            columns = body.outputs
        else:
            rel = self.choice(self.relations)
            sql = f"{rel.name} AS {alias}"
            columns = list(rel.columns)
            if isinstance(rel, Table):
                self.table_int_refs.update(f"{alias}.{n}" for n, k in columns if k == INT)
        return sql, [(f"{alias}.{name}", kind) for name, kind in columns]

    def from_clause(self, level: int, n_items: int, allow_derived: bool = True):
        prefix = "xyz"[level]
        sql, scope = self.from_item(level, f"{prefix}0", allow_derived)
        for i in range(1, n_items):
            item_sql, item_scope = self.from_item(level, f"{prefix}{i}", allow_derived)
            pairs = [
                (new, old)
                for new, kind in item_scope
                for old, old_kind in scope
                if kind == old_kind
            ]
            ints = [p for p in pairs if p[0] in {r for r, k in item_scope if k == INT}]
            n_conds = self.draw(st.integers(1, 2))
            conds = []
            for _ in range(n_conds):
                new, old = self.choice(ints if ints and self.draw(st.integers(0, 3)) else pairs)
                conds.append(f"{new} = {old}")
            join = self.choice(["JOIN", "JOIN", "LEFT JOIN"])
            sql += f" {join} {item_sql} ON {' AND '.join(conds)}"
            scope = scope + item_scope
        return sql, scope

    # -- WHERE -----------------------------------------------------------------------------

    def where(self, scope, n_params: int) -> tuple[str, list[str]]:
        exprs = Exprs(self.draw, scope)
        conds = []
        if self.draw(st.integers(0, 2)) > 0:
            conds.append(exprs.pred(self.draw(st.integers(0, 2))))
        kinds = []
        columns = self.draw(st.permutations(scope))[:n_params]
        for ref, kind in columns:
            if ref in self.table_int_refs:
                kind = INT_COLUMN
            if self.draw(st.integers(0, 3)) == 0:
                conds.append(f"{ref} IN (?, ?)")
                kinds += [kind, kind]
            else:
                conds.append(f"{ref} = ?")
                kinds.append(kind)
        if not conds:
            return "", kinds
        return " WHERE " + " AND ".join(conds), kinds

    # -- SELECT bodies ---------------------------------------------------------------------

    def projection(self, scope, kinds: list[str] | None, allow_upper: bool):
        exprs = Exprs(self.draw, scope)
        if kinds is None:
            n = self.draw(st.integers(1, 3))
            kinds = [INT] + [self.choice([INT, STR]) for _ in range(n - 1)]
        items = []
        for i, kind in enumerate(kinds):
            cols = exprs.cols[kind]
            form = self.draw(st.integers(0, 4))
            if cols and form < 3:
                text = self.choice(cols)
            elif kind == STR and allow_upper and form == 3:
                text = f"UPPER({exprs.str_expr(1)})"
            else:
                text = exprs.expr(kind, self.draw(st.integers(1, 2)))
            items.append((f"{text} AS c{i}", (f"c{i}", kind)))
        return ", ".join(t for t, _ in items), [o for _, o in items]

    def plain(
        self,
        level: int,
        n_params: int = 0,
        kinds: list[str] | None = None,
        allow_upper: bool = False,
        max_from: int = 3,
        distinct: bool | None = None,
    ) -> Select:
        n_from = self.draw(st.integers(1, max_from))
        from_sql, scope = self.from_clause(level, n_from)
        proj, outputs = self.projection(scope, kinds, allow_upper)
        where, param_kinds = self.where(scope, n_params)
        if distinct is None:
            distinct = self.draw(st.integers(0, 3)) == 0
        head = "SELECT DISTINCT" if distinct else "SELECT"
        return Select(f"{head} {proj} FROM {from_sql}{where}", outputs, param_kinds)

    def aggregate(
        self, level: int, n_params: int = 0, allow_avg: bool = False, max_from: int = 2
    ) -> Select:
        n_from = self.draw(st.integers(1, max_from))
        from_sql, scope = self.from_clause(level, n_from)
        exprs = Exprs(self.draw, scope)
        refs = [r for r, _ in scope]
        n_keys = self.draw(st.integers(0, 2))
        keys = self.draw(st.permutations(scope))[:n_keys]
        items, outputs = [], []
        for ref, kind in keys:
            items.append(f"{ref} AS c{len(outputs)}")
            outputs.append((f"c{len(outputs)}", kind))
        n_aggs = self.draw(st.integers(1, 3))
        approx = False
        for i in range(n_aggs):
            forms = ["count_star", "count", "count_distinct", "sum", "min", "max"]
            if i == 0:
                forms = ["count_star", "count", "count_distinct", "sum"]
            elif allow_avg and exprs.cols[INT]:
                forms.append("avg")
            form = self.choice(forms)
            if form == "count_star":
                text, kind = "COUNT(*)", INT
            elif form == "count":
                text, kind = f"COUNT({self.choice(refs)})", INT
            elif form == "count_distinct":
                text, kind = f"COUNT(DISTINCT {self.choice(refs)})", INT
            elif form == "sum":
                # (SUM of a bare NULL is DOUBLE in MySQL, as arithmetic on it is)
                text, kind = f"SUM({exprs.arith_operand(self.draw(st.integers(0, 1)))})", INT
            elif form == "avg":
                text, kind = f"AVG({self.choice(exprs.cols[INT])})", REAL
                approx = True
            else:
                kind = self.choice([INT, STR]) if exprs.cols[STR] else INT
                arg = exprs.expr(kind, self.draw(st.integers(0, 1)))
                text = f"{form.upper()}({arg})"
            items.append(f"{text} AS c{len(outputs)}")
            outputs.append((f"c{len(outputs)}", kind))
        where, param_kinds = self.where(scope, n_params)
        sql = f"SELECT {', '.join(items)} FROM {from_sql}{where}"
        if keys:
            sql += " GROUP BY " + ", ".join(ref for ref, _ in keys)
        if self.draw(st.integers(0, 2)) == 0:
            sql += " HAVING " + self.having(exprs, refs)
        return Select(sql, outputs, param_kinds, approx=approx)

    def having(self, exprs: Exprs, refs: list[str]) -> str:
        form = self.choice(["count", "sum", "min_null", "max", "and"])
        if form == "count":
            op = self.choice([">", ">=", "=", "<"])
            return f"COUNT(*) {op} {self.draw(st.integers(0, 3))}"
        if form == "sum":
            op = self.choice([">", "<", "="])
            return f"SUM({exprs.leaf(INT)}) {op} {literal(self.draw(st.integers(-3, 3)))}"
        if form == "min_null":
            neg = self.choice(["", "NOT "])
            return f"MIN({self.choice(refs)}) IS {neg}NULL"
        if form == "max":
            if exprs.cols[STR] and self.draw(st.booleans()):
                return f"MAX({self.choice(exprs.cols[STR])}) >= 'b'"
            return f"MAX({exprs.leaf(INT)}) > {literal(self.draw(st.integers(-3, 3)))}"
        return f"COUNT(*) > 1 AND {self.having(exprs, refs)}"

    def union(self, level: int, n_params: int = 0) -> Select:
        first_params = self.draw(st.integers(0, n_params))
        first = self.plain(level, first_params, max_from=2, distinct=False)
        kinds = [k for _, k in first.outputs]
        second = self.plain(level, n_params - first_params, kinds, max_from=2, distinct=False)
        op = self.choice(["UNION", "UNION ALL"])
        return Select(
            f"{first.sql} {op} {second.sql}",
            first.outputs,
            first.param_kinds + second.param_kinds,
        )

    def relation_body(self, level: int) -> Select:
        """A parameterless SELECT usable as a view or a derived table (first column INT)."""
        form = self.choice(["plain", "plain", "aggregate", "union"])
        if form == "aggregate":
            body = self.aggregate(level)
        elif form == "union":
            body = self.union(level)
        else:
            body = self.plain(level, max_from=2)
        if not any(kind == INT for _, kind in body.outputs):
            # Every relation must offer an INT column for joins; fall back to a plain select.
            body = self.plain(level, max_from=2)
        if self.draw(st.integers(0, 4)) == 0:
            # A top-k inside a view or a derived table (deterministic: the order is total).
            body = self.order_limit(body)
            body.ordered = False
        return body

    def order_limit(self, body: Select) -> Select:
        """Append ORDER BY <chosen keys>, <every output> LIMIT n: a total order."""
        names = [name for name, _ in body.outputs]
        first = self.draw(st.permutations(names))[: self.draw(st.integers(1, len(names)))]
        keys = [f"{n} {self.choice(['ASC', 'DESC'])}" for n in first]
        keys += [n for n in names if n not in first]
        limit = self.draw(st.integers(1, 4))
        tail = f" ORDER BY {', '.join(keys)} LIMIT {limit}"
        if self.draw(st.integers(0, 4)) == 0:
            tail += f" OFFSET {self.draw(st.integers(1, 2))}"
        return Select(body.sql + tail, body.outputs, body.param_kinds, ordered=True)

    # -- families --------------------------------------------------------------------------

    def top_level(self, family: str) -> Select:
        if family == "mixed":
            family = self.choice([f for f in FAMILIES if f != "mixed"])
        n_params = self.choice([0, 1, 1, 1, 2])
        if family == "filter":
            return self.plain(0, n_params, allow_upper=True, max_from=1)
        if family == "join":
            return self.plain(0, n_params, allow_upper=True, max_from=3)
        if family == "aggregate":
            return self.aggregate(0, n_params, allow_avg=True)
        if family == "topk":
            form = self.choice(["aggregate", "plain", "plain", "union"])
            if form == "aggregate":
                body = self.aggregate(0, n_params)
            elif form == "union":
                body = self.union(0, n_params)
            else:
                body = self.plain(0, n_params, allow_upper=True, max_from=2)
            return self.order_limit(body)
        if family == "union":
            return self.union(0, n_params)
        if family == "nested":
            return self.plain(0, n_params, allow_upper=True, max_from=2)
        raise ValueError(family)


@st.composite
def views(
    draw, tables: list[Relation], min_views: int = 0, max_views: int = 2
) -> list[tuple[Relation, str]]:
    """Between min_views and max_views views, each over the tables and the views before it."""
    relations = list(tables)
    result = []
    for i in range(draw(st.integers(min_views, max_views))):
        body = QueryGen(draw, relations).relation_body(1)
        view = Relation(f"v{i}", tuple(body.outputs))
        result.append((view, f"CREATE VIEW v{i} AS {body.sql}"))
        relations.append(view)
    return result


def param_value(draw, kind: str) -> object:
    if kind != INT_COLUMN:
        return draw(rare_null_values_of(kind))
    value = draw(rare_null_values_of(INT))
    if value is not None and draw(st.integers(0, 7)) == 0:
        # A numeric string compared with an INT column: MySQL compares it as a number, and so
        # does SQLite, whose column affinity converts the bound text. (An INT computed in a
        # view or a derived table has no affinity in SQLite, hence base tables only.)
        return str(value)
    return value


def param_sets(draw, kinds: list[str]) -> list[tuple]:
    if not kinds:
        return [()]
    n = draw(st.integers(2, 3))
    return [tuple(param_value(draw, k) for k in kinds) for _ in range(n)]


def query(draw, relations: list[Relation], family: str) -> Query:
    sel = QueryGen(draw, relations, derived_odds=2 if family == "nested" else 6).top_level(family)
    return Query(
        sql=sel.sql,
        param_kinds=tuple(sel.param_kinds),
        param_sets=param_sets(draw, sel.param_kinds),
        ordered=sel.ordered,
        approx=sel.approx,
        n_columns=len(sel.outputs),
    )

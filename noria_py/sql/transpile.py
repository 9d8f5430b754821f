"""MySQL statements for base storage: SQLite does the relational work, noria_py the arithmetic.

A query the dataflow does not maintain runs on SQLite. SQLite's own functions, casts and
comparisons differ from MySQL's (``LENGTH`` counts characters, ``ROUND(2.5e0)`` is 3, dates are
text, ``'9.99'`` against a DECIMAL, ``20240229`` against a DATE), so before generating SQLite SQL
the tree is rewritten:

* every scalar expression the expression compiler (``sql/expr.py``) can compile over the
  columns of its SELECT's tables is replaced by one call ``nf_EXPR(k, col, ...)``: SQLite passes
  the column values, and the very closure the dataflow would run computes the value, with the
  columns converted back to their types (DECIMAL, DATE, TIME) first;
* a comparison of a column with a column, a literal or a parameter stays native (so SQLite can
  use its indexes) when SQLite compares those types as MySQL does, with parameters converted to
  the column's type when bound (``param_kinds``);
* what is left (functions over correlated columns, aggregates' arguments) calls the registered
  functions ``nf_<NAME>`` one by one (``storage/mysql_functions.py``).

A function nothing implements is error 1305 here, before SQLite could answer with a meaning of
its own.
"""

from __future__ import annotations

import threading

from sqlglot import exp

from .. import errors as E
from ..errors import Error
from . import functions as F
from . import values as V
from .expr import (
    Scope,
    _bytes_literal,
    _interval_parts,
    argument_collation,
    canonical_call,
    carries_digits,
    cast_call,
    compile_expr,
    lookup_function,
    member_in_string_context,
    shown_value,
    unknown_function,
)
from .proxy_types import (
    converter,
    over_aggregates,
    query_columns,
    select_scope,
    union_leaves,
    with_columns,
)

PREFIX = "nf_"

_TYPED_AGG_NAMES = {exp.JSONObjectAgg: "JSON_OBJECTAGG"}
_NATIVE = (exp.Coalesce, exp.If, exp.Nullif, exp.Case)
_SIMPLE = (exp.Column, exp.Literal, exp.Placeholder, exp.Null, exp.Boolean)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ)
_OPERATORS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
              exp.NullSafeEQ: "<=>"}  # fmt: skip
_NOT_SCALAR = (exp.AggFunc, exp.Subquery, exp.Select, exp.Window, exp.Star, exp.Exists)

_FAMILY = {V.INT: "num", V.DECIMAL: "num", V.FLOAT: "num", V.STR: "str", V.BYTES: "bytes",
           V.DATE: "date", V.DATETIME: "datetime", V.TIME: "time"}  # fmt: skip


def _CANONICAL_TEMPORAL(text: str) -> str | None:
    """A literal SQLite compares correctly with stored dates: MySQL's own canonical form
    (``date-text`` for a DATE, ``datetime-text`` for a DATETIME without fraction)."""
    import re

    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return "date-text"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", text):
        return "datetime-text"
    return None


# Compiled expressions handed to SQLite, by number; the bound parameters of the statement
# running on this thread (an expression reads them as the dataflow's closures do).
_EXPRS: list = []
_EXPRS_LOCK = threading.Lock()
_PARAMS = threading.local()


def set_params(params) -> None:
    _PARAMS.p = params
    _PARAMS.error = None


def failed(error: Exception) -> None:
    """A function SQLite called raised ``error`` (a MySQL error such as 1690): SQLite reports
    only that a function failed, ``take_error`` gives the statement's runner the real one."""
    _PARAMS.error = error


def take_error():
    """The MySQL error a function raised during the statement on this thread, if any."""
    e = getattr(_PARAMS, "error", None)
    _PARAMS.error = None
    return e


def call_expr(k: int, *args):
    """``nf_EXPR``: evaluate compiled expression ``k`` on the column values SQLite passes."""
    fn, size, positions, convs = _EXPRS[k]
    row = [None] * size
    for pos, conv, v in zip(positions, convs, args):
        row[pos] = v if conv is None or v is None else conv(v)
    try:
        return fn(row, getattr(_PARAMS, "p", ()))
    except Error as e:
        failed(e)
        raise


class Rewritten:
    """The SQLite text of a statement and what binding its parameters needs."""

    __slots__ = ("sql", "param_kinds")

    def __init__(self, sql: str, param_kinds: dict[int, str]):
        self.sql = sql
        self.param_kinds = param_kinds


def _name_items(tree: exp.Expression) -> None:
    """Give each computed result column its name as the dataflow names it (the expression's
    text), so rewriting it into SQLite's terms (``nf_EXPR(...)``) does not rename it."""
    first = tree
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select):
        return
    from .parse import item_name

    for e in list(first.expressions):
        if not isinstance(e, (exp.Alias, exp.Column, exp.Star)):
            e.replace(exp.alias_(e.copy(), item_name(e), quoted=True))


def _one_row_subqueries(tree: exp.Expression) -> None:
    """A scalar subquery that may find several rows (``(SELECT w FROM t WHERE ...)``) is
    error 1242 in MySQL when it does; SQLite takes the first. Such a subquery becomes
    ``(SELECT ONE_ROW(COUNT(*), MIN(w)) FROM t WHERE ...)``: the value of its one row, NULL
    for none, 1242 for more. (One with an aggregate and no GROUP BY, or a LIMIT 1, has at
    most one row; a grouped, DISTINCT or limited one is left as it is.)"""
    for sub in list(tree.find_all(exp.Subquery)):
        parent = sub.parent  # (a select item's subquery carries its name as its alias)
        if isinstance(
            parent, (exp.From, exp.Join, exp.In, exp.Exists, exp.Any, exp.All, exp.SetOperation)
        ):
            continue
        inner = sub.this
        if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
            continue
        if any(inner.args.get(a) for a in ("group", "having", "limit", "offset", "distinct")):
            continue
        if inner.args.get("from_") is None or inner.args.get("operation_modifiers"):
            continue
        item = inner.expressions[0]
        value = item.this if isinstance(item, exp.Alias) else item
        if isinstance(value, exp.Star) or value.find(exp.AggFunc, exp.Window, exp.Subquery):
            continue
        if any(
            isinstance(n, exp.Anonymous) and n.name.upper() in F.AGGREGATES for n in value.walk()
        ):
            continue
        inner.set("order", None)
        inner.set(
            "expressions",
            [
                exp.Anonymous(
                    this=PREFIX + "ONE_ROW",
                    expressions=[exp.Count(this=exp.Star()), exp.Min(this=value.copy())],
                )
            ],
        )


def _select_from_branches(tree: exp.Expression) -> None:
    """``(SELECT .. ORDER BY .. LIMIT n) UNION ..``: SQLite takes neither parentheses nor an
    ORDER BY or LIMIT on a compound's member, so such a branch becomes ``SELECT * FROM (..)``."""
    n = 0
    for sub in list(tree.find_all(exp.Subquery)):
        if sub.alias or not isinstance(sub.parent, exp.SetOperation):
            continue
        inner = sub.this
        if isinstance(inner, exp.Select) and not any(
            inner.args.get(a) for a in ("order", "limit", "offset")
        ):
            sub.replace(inner)
            continue
        n += 1
        alias = exp.TableAlias(this=exp.to_identifier(f"_branch{n}"))
        sub.replace(exp.select("*").from_(exp.Subquery(this=inner, alias=alias)))


def to_sqlite(tree: exp.Expression, schemas: dict | None = None, stored: bool = False) -> Rewritten:
    """A copy of ``tree`` to run on SQLite with MySQL's semantics (see the module docstring).
    ``stored``: its result columns as a write stores them (a quotient with every digit it
    carries, not rounded to the scale a SELECT shows)."""
    r = _Rewriter(schemas or {})
    r.stored = stored
    tree = tree.copy()
    _name_items(tree)
    _select_from_branches(tree)
    _one_row_subqueries(tree)
    out = r.run(tree)
    for a in out.find_all(exp.Alias, exp.TableAlias):
        ident = a.args.get("alias") if isinstance(a, exp.Alias) else a.this
        if isinstance(ident, exp.Identifier):
            ident.set("quoted", True)  # an alias may be one of SQLite's keywords (`nothing`)
    return Rewritten(out.sql(dialect="sqlite"), r.param_kinds)


def _default_collation() -> str:
    from . import collation as _C

    return _C.current().name


_UNTYPED_UNION: list = []  # (see _typed_sides)


def _aggregated(left, typed_rights: list, pairwise: list) -> list:
    """BETWEEN and an IN list compare all their values one way, which MySQL decides over all
    of them: the strongest coercibility (a column's or a computed value's before a literal's)
    wins, and among the strongest a binary string makes it bytes, else text under the text's
    collation. The actions (as ``_string_operands``'s) that make SQLite compare so; the
    ``pairwise`` ones when some value is not a string or not typed."""
    values = [("this", left)]
    for rkey, typed in typed_rights:
        if not typed or len(typed) != 1:
            return pairwise
        values.append((rkey, typed[0]))
    if any(v is None or v[0] not in (V.STR, V.BYTES) or v[1] is None for _k, v in values):
        return pairwise
    strongest = min(4 if v[1] else 2 for _k, v in values)
    top = [v for _k, v in values if (4 if v[1] else 2) == strongest]
    if any(v[0] == V.BYTES for v in top):
        texts = [v for _k, v in values if v[0] == V.STR and not v[1]]
        if texts and any(v[3] for _k, v in values):
            raise _refused("comparison of a text and a binary string with an outer query's column")
        return [(k, None, ("blob", None)) for k, v in values if v[0] == V.STR]
    actions = [(k, None, ("text", None)) for k, v in values if v[0] == V.BYTES]
    if left[2] is None:
        name = next((v[2] for v in top if v[2]), None) or _default_collation()
        actions.append(("this", None, ("collate", name)))
    return actions


def _native_like(node: exp.Expression) -> bool:
    if isinstance(node, exp.Escape):
        return isinstance(node.this, exp.Like)
    return isinstance(node, exp.Like) and not isinstance(node.parent, exp.Escape)


def _refused(what: str) -> Error:
    return E.NotSupportedError(f"This version doesn't yet support '{what}'")


def _apply_string_sides(node: exp.Expression, actions: list) -> None:
    """Rewrite the (already rewritten) sides of a comparison as ``_string_operands`` decided:
    ``(side, position, (how, collation))`` where ``side`` is ``this``, ``expression`` or
    ``query`` (the subquery's select item), ``position`` the value within a row (None: the
    whole side), and ``how`` ``collate`` (compare under that collation), ``blob`` (the text's
    UTF-8 bytes) or ``text`` (the bytes as UTF-8 text)."""
    for side, pos, (how, name) in actions:
        if isinstance(side, tuple):  # (an IN list's value)
            key, i = side
            values = list(node.args[key])
            values[i] = _string_side(values[i], how, name)
            node.set(key, values)
            continue
        target = node.args.get(side)
        if side == "query":
            inner = target.this if isinstance(target, exp.Subquery) else target
            i = 0 if pos is None else pos
            for leaf in union_leaves(inner):  # (each branch of a UNION)
                items = list(leaf.expressions)
                item = items[i]
                if isinstance(item, exp.Alias):
                    item.set("this", _string_side(item.this, how, name))
                else:
                    items[i] = _string_side(item, how, name)
                    leaf.set("expressions", items)
            continue
        while isinstance(target, exp.Paren) and pos is not None:
            target = target.this
        if pos is not None and isinstance(target, exp.Tuple):
            values = list(target.expressions)
            values[pos] = _string_side(values[pos], how, name)
            target.set("expressions", values)
            continue
        node.set(side, _string_side(target, how, name))


def _value_family(kind) -> str | None:
    if kind in (V.INT, V.DECIMAL, V.FLOAT) or kind.__class__ is V.FloatKind:
        return "num"
    if kind in (V.DATE, V.DATETIME, V.TIME):
        return "temporal"
    if kind in (V.STR, V.BYTES):
        return kind
    return None


def _string_side(e: exp.Expression, how: str, name: str | None) -> exp.Expression:
    if how == "double":
        return _call("CAST_DOUBLE", [e])
    if how == "collate":
        return exp.Collate(
            this=exp.Paren(this=e), expression=exp.Identifier(this=name, quoted=True)
        )
    return exp.Cast(this=e, to=exp.DataType.build("BLOB" if how == "blob" else "TEXT"))


def _plain_hex_item(node: exp.Expression) -> bool:
    """A hex literal that is a whole select-list item: SQLite's blob is MySQL's binary string."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    if parent is not None and parent.meta.get("string_operands"):
        return True  # an operand of a comparison of strings (see _string_operands)
    if isinstance(parent, exp.Anonymous) and str(parent.this).upper() == PREFIX.upper() + "LIKE_AS":
        return True  # a string to LIKE (see _like)
    if isinstance(parent, exp.Min) and isinstance(parent.parent, exp.Anonymous):
        # a scalar subquery's one value (see _one_row_subqueries)
        if str(parent.parent.this).upper() == PREFIX.upper() + "ONE_ROW":
            parent = parent.parent.parent
    if isinstance(parent, exp.Alias):
        parent = parent.parent
    return isinstance(node, exp.HexString) and isinstance(parent, exp.Select)


def _call(name: str, args: list[exp.Expression]) -> exp.Expression:
    return exp.Anonymous(this=PREFIX + name, expressions=args)


def _exact_text(call: exp.Expression) -> exp.Expression:
    """A DECIMAL result column as its exact text that SQLite still compares, sorts and groups
    by value (``HAVING s > 5``, ``ORDER BY s``): text affinity and the DECIMAL collation."""
    return exp.Collate(
        this=exp.Cast(this=call, to=exp.DataType.build("TEXT")),
        expression=exp.Var(this=V.DECIMAL_COLLATION),
    )


# the JSON functions whose value is a JSON document (JSON_UNQUOTE, JSON_VALUE ... are text)
_JSON_DOCUMENTS = frozenset(
    "JSON_EXTRACT JSON_OBJECT JSON_ARRAY JSON_SET JSON_INSERT JSON_REPLACE JSON_REMOVE "
    "JSON_ARRAY_APPEND JSON_ARRAY_INSERT JSON_MERGE JSON_MERGE_PRESERVE JSON_MERGE_PATCH "
    "JSON_KEYS JSON_QUERY JSON_COMPACT JSON_ARRAYAGG JSON_OBJECTAGG".split()
)


def _json_aggregate(node: exp.Expression) -> tuple[str, list] | None:
    """(name, arguments) of a JSON_ARRAYAGG or JSON_OBJECTAGG call, else None."""
    if isinstance(node, exp.JSONObjectAgg):
        kv = node.expressions[0] if len(node.expressions) == 1 else None
        if not isinstance(kv, exp.JSONKeyValue):
            return None
        return "JSON_OBJECTAGG", [kv.this, kv.expression]
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("JSON_ARRAYAGG", "JSON_OBJECTAGG"):
        return node.name.upper(), list(node.expressions)
    return None


def _registered_agg(name: str, args: list[exp.Expression]) -> exp.Expression:
    """A call of a registered aggregate. SQLite finalizes an aggregate that saw no rows without
    ever creating its accumulator, as NULL; where the value over no rows is not NULL (BIT_AND is
    18446744073709551615, BIT_OR and BIT_XOR 0) and no row gives NULL, COALESCE supplies it."""
    call = _call(name, args)
    empty = F.AGGREGATES[name].factory().value()
    if empty is None:
        return call
    assert type(empty) is int  # the BIT_ aggregates; text beyond 64 signed bits, as results are
    lit = exp.Literal.number(empty) if empty < 2**63 else exp.Literal.string(str(empty))
    return exp.Coalesce(this=call, expressions=[lit])


def _resolved_kind(col: exp.Column, scope):
    try:
        return scope[0].resolve(col)[1]
    except Exception:  # noqa: BLE001 - an outer or unknown column: SQLite reports it
        return None


def _storage_converter(ctype):
    if V.needs_conversion(ctype):
        return lambda v, c=ctype: V.from_storage(v, c)
    return None


class _Rewriter:
    def __init__(self, schemas: dict):
        F.load_all()
        self.schemas = schemas
        self.param_kinds: dict[int, str] = {}
        self.ctes: dict = {}  # the columns of the CTEs in scope, by name
        self.stored = False  # (to_sqlite's ``stored``)
        self.outer: list = []  # the scopes of the queries around the one being visited

    def run(self, tree: exp.Expression) -> exp.Expression:
        return self._visit(tree, None, False)

    # -- the walk ----------------------------------------------------------------------------
    def _visit(self, node: exp.Expression, scope, top: bool) -> exp.Expression:
        if isinstance(node, (exp.HexString, exp.BitString)) and not _plain_hex_item(node):
            # left for SQLite (its expression was not compiled): SQLite reads X'..' as a blob
            # with no numeric value, b'..' as a number; MySQL's binary string that is an
            # unsigned integer in numeric context is neither
            from ..errors import NotSupportedError

            raise NotSupportedError(
                "This version doesn't yet support 'hex and bit literals in expressions'"
            )
        if isinstance(node, exp.Select):
            # the select list's items are the result's columns (a DECIMAL keeps its digits);
            # typed before anything below is rewritten (a derived table's columns, a CTE's)
            outer = self.ctes
            self.ctes = with_columns(node, self.schemas, outer)
            pushed = scope is not None
            if pushed:
                self.outer.append(scope)  # its columns, for a correlated subquery's comparisons
            try:
                scope = select_scope(node, self.schemas, self.ctes)
                self._children(node, scope, lambda key: key == "expressions")
            finally:
                self.ctes = outer
                if pushed:
                    self.outer.pop()
            return node
        if (
            isinstance(node, (exp.Sum, exp.Avg))
            and scope is not None
            and self._decimal_argument(node.this, scope)
        ):
            return self._decimal_aggregate(node, scope, top)
        json_agg = _json_aggregate(node)
        if json_agg is not None and scope is not None:
            name, args = json_agg
            if self._json_value(args[-1], scope):
                # a JSON document as the value: embedded as JSON, not quoted as a string
                return _call(name + "_JSON", [self._visit(a, scope, False) for a in args])
        if isinstance(node, exp.GroupConcat) and scope is not None:
            self._numbers_as_text(node, scope)
        if isinstance(node, exp.GroupConcat) and isinstance(node.this, exp.Order):
            return self._ordered_concat(node, scope)
        if (
            isinstance(node, (exp.Sum, exp.Avg))
            and scope is not None
            and not isinstance(node.this, exp.Distinct)
            and self._double_argument(node.this, scope)
        ):
            # the exact sum of the doubles, rounded once, as the dataflow sums them
            inner = self._visit(node.this, scope, True)
            return _call("FSUM" if isinstance(node, exp.Sum) else "FAVG", [inner])
        if (
            isinstance(node, exp.Anonymous)
            and node.name.upper() in ("BIT_AND", "BIT_OR", "BIT_XOR")
            and scope is not None
            and len(node.expressions) == 1
            and self._arg_kind(node.expressions[0], scope) == V.DECIMAL
        ):
            # a DECIMAL rounds half away from zero (SQLite would hand over a double or text)
            arg = node.expressions[0]
            exact = self._compile(arg, scope, True, shown=False)
            arg = exact if exact is not None else self._visit(arg, scope, True)
            return _registered_agg(node.name.upper(), [_call("DECIMAL_BITS", [arg])])
        if (
            isinstance(node, (exp.Min, exp.Max))
            and scope is not None
            and not isinstance(node.this, (exp.Distinct, exp.Column))
            and carries_digits(node.this, scope[0])
        ):
            # MIN/MAX keep a quotient as MySQL shows it (rounded to its scale)
            arg = self._compile(node.this, scope, False, shown=True)
            if arg is not None:
                node.set("this", arg)
                return node
        if top and scope is not None and not isinstance(node, exp.Alias):
            over = over_aggregates(node, scope[0])
            if over is not None:
                return self._over_aggregates(over, scope)
        if scope is not None and self._scalar_candidate(node, scope):
            replaced = self._compile(node, scope, top)
            if replaced is not None:
                return replaced
        if isinstance(node, exp.Column) and scope is not None:
            kind = _resolved_kind(node, scope)
            if kind.__class__ is V.MemberKind:  # an ENUM/SET read as a number: refused
                member_in_string_context(node, scope[0])
        strings = None  # how SQLite must see two string operands (typed before rewriting)
        if isinstance(node, _COMPARISONS) and scope is not None:
            self._collations_agree(node, scope)
            self._note_param_kinds(node, scope)
            strings = self._string_operands(node, scope)
        elif isinstance(node, exp.In) and scope is not None:
            if isinstance(node.this, exp.Column):
                # col IN (?, ...) compares each parameter with the column as col = ? does (an
                # ENUM/SET column: a number is a position): bound as the column's type, and
                # known to literal lifting (engine.lifts_as_written)
                for e in node.expressions:
                    if isinstance(e, exp.Placeholder):
                        self._note_param(node.this, e, scope, True)
            strings = self._string_operands(node, scope)
        elif isinstance(node, exp.Between) and scope is not None:
            strings = self._string_operands(node, scope)
        elif scope is not None and _native_like(node):
            return self._like(node, scope)
        child_top = top and isinstance(node, exp.Alias)
        self._children(node, scope, lambda key: child_top)
        if strings:
            _apply_string_sides(node, strings)
        return self._replace(node)

    def _like(self, node: exp.Expression, scope) -> exp.Expression:
        """``v LIKE p [ESCAPE e]`` left to SQLite (a subquery or an outer query's column in
        it) as ``LIKE_AS(v, p, e, collation)``: MySQL's LIKE under the collation MySQL picks
        (the value's, a binary literal pattern yielding to it; bytes when a binary string that
        is not a literal is on either side), where SQLite's own LIKE folds only ASCII letters
        and knows no collation."""
        like = node if isinstance(node, exp.Like) else node.this
        escape = node.expression if isinstance(node, exp.Escape) else exp.Null()
        value, pattern = like.this, like.expression
        name = None
        if isinstance(value, exp.Collate):
            e = value.expression
            name = e.name if hasattr(e, "name") else str(e)
            value = value.this
        a = (self._typed_sides(value, scope) or [None])[0]
        b = (self._typed_sides(pattern, scope) or [None])[0]
        if name is None:
            name = _default_collation()
            if a is not None and b is not None and V.BYTES in (a[0], b[0]):
                text = a if a[0] == V.STR else b if b[0] == V.STR else None
                binary = b if text is a else a
                if text is None or not (binary[1] and not text[1]):
                    name = "binary"
                    if text is not None and not text[1] and (a[3] or b[3]):
                        # (MariaDB compares these as text in a correlated subquery)
                        raise _refused(
                            "LIKE of a text and a binary string with an outer query's column"
                        )
                elif text[2]:
                    name = text[2]
            elif a is not None and a[0] == V.STR and a[2]:
                name = a[2]
        call = _call("LIKE_AS", [value, pattern, escape, exp.Literal.string(name)])
        self._children(call, scope, lambda key: False)
        if like.args.get("negate") or node.args.get("negate"):
            return exp.Not(this=call)
        return call

    # -- string comparisons SQLite makes natively ----------------------------------------------
    def _string_operands(self, node: exp.Expression, scope) -> list | None:
        """A comparison left to SQLite (one side a subquery, or a column of an outer query)
        between strings: what each side needs so that SQLite compares as MySQL does, as
        ``(side, position, how)`` (see ``_apply_string_sides``), typed before the sides are
        rewritten.

        - Two text strings compare under their collation. SQLite takes a column's own; a
          computed value (``LOWER(s)``, a subquery's value) has none, and SQLite would compare
          its bytes: the left side gets the collation explicitly.
        - A text string against a binary string literal (``_binary'x'``, ``X'78'``,
          ``UNHEX('78')``, also as a subquery's or a derived table's value) compares under the
          text's collation: the literal's coercibility yields (unless the text is a literal
          too).
        - A text string against another binary string compares as bytes (the text as its
          UTF-8 bytes): a scalar subquery's value, or a column beside a subquery's. SQLite would
          find a text and a blob never equal.

        Refused (1235) where MariaDB answers the same comparison differently by where it
        stands (WHERE or the select list) or by its plan: a text string that is not a literal
        against a binary one that is not either, through ``IN``/``ANY``/``ALL`` (subquery) or
        with a column of an outer query; and a UNION's column whose branches mix text and
        binary strings."""
        if self._own_plain_operands(node, scope):
            return None  # (see _native_ok: a wide DECIMAL's literal is already its text)
        if isinstance(node, exp.In):
            query = node.args.get("query")
            if query is not None:
                rights = [("query", query)]
            else:
                rights = [(("expressions", i), e) for i, e in enumerate(node.expressions)]
        elif isinstance(node, exp.Between):
            rights = [("low", node.args.get("low")), ("high", node.args.get("high"))]
        else:
            rights = [("expression", node.expression)]
        lefts = self._typed_sides(node.this, scope)
        strings = (V.STR, V.BYTES)
        all_strings = True
        actions: list = []
        typed_rights = []
        for rkey, right in rights:
            typed = self._typed_sides(right, scope)
            typed_rights.append((rkey, typed))
            for sides, other in ((lefts, typed), (typed, lefts)):
                if sides is _UNTYPED_UNION and other and any(o and o[0] in strings for o in other):
                    raise _refused("comparison of a string with a UNION's column of unknown type")
            if not lefts or not typed or len(lefts) != len(typed):
                all_strings = False
                continue
            all_strings = all_strings and all(
                a is not None and b is not None and a[0] in strings and b[0] in strings
                for a, b in zip(lefts, typed)
            )
            for act in self._string_pairs(lefts, typed, rkey):
                if act not in actions:
                    actions.append(act)
        if all_strings:
            # a hex literal operand is a binary string here, as SQLite's blob is
            node.meta["string_operands"] = True
        if len(rights) > 1 and lefts and len(lefts) == 1:
            actions = _aggregated(lefts[0], typed_rights, actions)
        done: dict = {}
        for side, pos, how in actions:
            hows = done.setdefault((side, pos), set())
            hows.add(how)
            blob = ("blob", None) in hows
            if (blob and len(hows) > 1) or len({h for h in hows if h[0] == "collate"}) > 1:
                # (``x IN (a, b)`` with ``a`` compared as text and ``b`` as bytes)
                raise _refused("comparison of a string with both text and binary strings")
        return actions or None

    @staticmethod
    def _own_plain_operands(node: exp.Expression, scope) -> bool:
        """Are all of a comparison's operands columns of this query, literals or parameters
        (what ``_native_ok`` decides on)?"""
        operands = [node.this, node.args.get("expression"), node.args.get("query")]
        operands += list(node.expressions) + [node.args.get("low"), node.args.get("high")]
        for o in operands:
            if o is None:
                continue
            if not isinstance(o, _SIMPLE):
                return False
            if isinstance(o, exp.Column):
                try:
                    scope[0].resolve(o)
                except Exception:  # noqa: BLE001 - an outer query's column
                    return False
        return True

    @staticmethod
    def _string_pairs(lefts: list, rights: list, rkey) -> list:
        """``_string_operands``'s actions for the left side's values against one right side's."""
        strings = (V.STR, V.BYTES)
        actions = []
        for i, (a, b) in enumerate(zip(lefts, rights)):
            if a is None or b is None:
                continue
            pos = None if len(lefts) == 1 else i
            families = {_value_family(a[0]), _value_family(b[0])}
            if families == {"num", V.STR}:
                # a number and a text string compare as doubles (``'1abc'`` is 1, ``' 2'``
                # is 2), where SQLite would read only a text that is wholly a number
                actions.append(("this", pos, ("double", None)))
                actions.append((rkey, pos, ("double", None)))
                continue
            if (
                families == {"temporal", V.STR}
                and not (a[0] == V.STR and a[1])
                and not (b[0] == V.STR and b[1])
            ):
                # MySQL reads the text as a date (``'2024-1-3'``); SQLite compares the stored
                # text with it as text
                raise _refused("comparison of a date or time with a text string here")
            if a[0] not in strings or b[0] not in strings:
                continue
            if a[1] is None or b[1] is None:
                raise _refused("comparison of a string with a UNION of text and binary strings")
            if a[0] == b[0] == V.STR:
                if a[2] is None:  # no collation of its own: compare under the other's
                    actions.append(("this", pos, ("collate", b[2] or _default_collation())))
            elif a[0] != b[0]:
                text_left = a[0] == V.STR
                text, binary = (a, b) if text_left else (b, a)
                if binary[1] and not text[1]:
                    actions.append((rkey if text_left else "this", pos, ("text", None)))
                    if a[2] is None:
                        actions.append(("this", pos, ("collate", text[2] or _default_collation())))
                    continue
                if not text[1] and (rkey == "query" or a[3] or b[3]):
                    where = "an outer query's column" if a[3] or b[3] else "IN (subquery)"
                    raise _refused(f"comparison of a text and a binary string with {where}")
                actions.append(("this" if text_left else rkey, pos, ("blob", None)))
        return actions

    def _typed_sides(self, e: exp.Expression, scope) -> list | None:
        """Each value ``e`` stands for (several for a row or a subquery's several columns) as
        ``(kind, literal, collation, outer)``: ``literal`` when it has a literal's coercibility
        (None: a UNION's column mixing text and binary strings), ``collation`` the name of a
        plain column's own (None for a computed value), ``outer`` when it reads a column of a
        query around this one; an entry is None where the value cannot be typed here
        (``_UNTYPED_UNION``: a UNION that cannot be)."""
        while isinstance(e, exp.Paren):
            e = e.this
        if isinstance(e, exp.Tuple):
            return [self._typed_value(x, scope) for x in e.expressions]
        if isinstance(e, (exp.Subquery, exp.Select)):
            inner = e.this if isinstance(e, exp.Subquery) else e
            if isinstance(inner, exp.SetOperation):
                try:
                    cols = query_columns(inner, self.schemas, self.ctes)
                except Exception:  # noqa: BLE001 - not typed
                    cols = None
                if cols is None:
                    return _UNTYPED_UNION
                return [(ct.kind, ct.literal, None, False) for _name, ct in cols]
            if not isinstance(inner, exp.Select):
                return None
            try:
                found = select_scope(inner, self.schemas, self.ctes)
            except Exception:  # noqa: BLE001 - not typed: left as it is
                return None
            if found is None:
                return None
            out = []
            for item in inner.expressions:
                value = item.this if isinstance(item, exp.Alias) else item
                if (
                    isinstance(value, exp.Anonymous)
                    and str(value.this).upper() == PREFIX.upper() + "ONE_ROW"
                ):
                    value = value.expressions[1].this  # (see _one_row_subqueries)
                if isinstance(value, exp.Star):
                    return None
                typed = self._typed_value(value, found)
                # a subquery's value is not a column SQLite compares under its collation
                out.append(None if typed is None else (typed[0], typed[1], None, typed[3]))
            return out
        return [self._typed_value(e, scope)]

    def _typed_value(self, e: exp.Expression, scope):
        while isinstance(e, exp.Paren):
            e = e.this
        sc, ctypes = scope
        if isinstance(e, exp.Column):
            for depth, (s, types) in enumerate([(sc, ctypes)] + self.outer[::-1]):
                try:
                    i, kind = s.resolve(e)
                except Exception:  # noqa: BLE001 - not this query's: an outer one's
                    continue
                outer = depth > 0
                if i >= len(types) or types[i].computed:
                    return (kind, i < len(types) and types[i].literal, None, outer)
                return (kind, False, types[i].collation or _default_collation(), outer)
            return None
        c = None
        for n in range(len(self.outer) + 1):
            try:
                c = compile_expr(e, self._with_outer(sc, n) if n else sc, allow_params=True)
                break
            except Exception:  # noqa: BLE001 - not typed here (an outer query's column?)
                continue
        if c is None:
            return None
        literal = _bytes_literal(e, c) if c.kind == V.BYTES else c.const
        return (c.kind, literal, None, n > 0)

    def _with_outer(self, sc, n: int):
        """``sc``'s columns, then those of the ``n`` innermost queries around it: a scope to
        type (only) an expression over a correlated column."""
        cols = list(sc.columns)
        for outer, _types in self.outer[::-1][:n]:
            cols += outer.columns
        return Scope(cols)

    @staticmethod
    def _collations_agree(node: exp.Expression, scope) -> None:
        """Two columns of different collations compared (``b = c``, a column with its own
        collation written ``b COLLATE x``) are MySQL's 1267 unless one is a _bin collation."""
        sides = [node.this, node.expression]
        for i, e in enumerate(sides):
            while isinstance(e, exp.Paren):
                e = e.this
            sides[i] = e
        wrapped = [e for e in sides if isinstance(e, exp.Collate)]
        if not wrapped:
            return
        for e in wrapped:
            # a column's own collation, as base storage writes it; a COLLATE the statement
            # wrote (another collation than the column's, or over an expression) wins instead
            if not isinstance(e.this, exp.Column):
                return
            try:
                declared = scope[1][scope[0].resolve(e.this)[0]].collation
            except Exception:  # noqa: BLE001 - an outer or unknown column
                return
            name = e.expression.name if hasattr(e.expression, "name") else str(e.expression)
            if not declared or declared.lower() != name.lower():
                return

        def kind(e):
            try:
                return compile_expr(e, scope[0], allow_params=True).kind
            except Exception:  # noqa: BLE001 - not typed: not counted as a column
                return None

        argument_collation(sides, kind, _OPERATORS[type(node)])

    @staticmethod
    def _arg_kind(arg: exp.Expression, scope) -> str | None:
        """The kind of an aggregate's argument, None when it does not compile."""
        if arg.find(*_NOT_SCALAR):
            return None
        try:
            return compile_expr(arg, scope[0], allow_params=True).kind
        except Exception:  # noqa: BLE001 - not compilable: the generic aggregate then
            return None

    @staticmethod
    def _decimal_argument(arg: exp.Expression, scope) -> bool:
        """Is a SUM's or AVG's argument a DECIMAL or an integer (its values then cross SQLite
        as exact text where a double would lose digits)?"""
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                return False
            arg = arg.expressions[0]
        if arg.find(*_NOT_SCALAR):
            return False
        try:
            return compile_expr(arg, scope[0], allow_params=True).kind in (V.DECIMAL, V.INT)
        except Exception:  # noqa: BLE001 - not compilable: the generic aggregate then
            return False

    def _json_value(self, arg: exp.Expression, scope) -> bool:
        """Is ``arg`` a JSON document to MySQL: a JSON column, ``->``, or a JSON function that
        returns one (JSON_EXTRACT, JSON_OBJECT, JSON_SET, ...)?"""
        while isinstance(arg, exp.Paren):
            arg = arg.this
        if isinstance(arg, exp.Column):
            try:
                i, _kind = scope[0].resolve(arg)
            except Exception:  # noqa: BLE001 - the column's own error comes when it is run
                return False
            return scope[1][i].mysql_name == "JSON"
        if isinstance(arg, exp.JSONExtract):
            return True
        call = canonical_call(arg) if isinstance(arg, exp.Func) else None
        return call is not None and call[0] in _JSON_DOCUMENTS

    def _ordered_concat(self, node: exp.GroupConcat, scope) -> exp.Expression:
        """``GROUP_CONCAT([DISTINCT] v, ... ORDER BY k [DESC], ... SEPARATOR s)``: SQLite
        before 3.44 has no ORDER BY in an aggregate, so the values and the keys go to the
        aggregate the dataflow computes it with (``GROUP_CONCAT_ORDERED``): the keys ordered
        under the collation, NULLs first, each value written as the dataflow writes it."""
        order = node.this
        holder = order.this
        distinct = isinstance(holder, exp.Distinct)
        values = list(holder.expressions) if distinct else [holder]
        sep = node.args.get("separator")
        sep = sep.copy() if sep is not None else exp.Literal.string(",")
        args: list = [
            exp.Literal.number(1 if distinct else 0),
            sep,
            exp.Literal.number(len(values)),
        ]
        args += [self._visit(v.copy(), scope, False) for v in values]
        for o in order.expressions:
            args.append(self._visit(o.this.copy(), scope, False))
            args.append(exp.Literal.number(1 if o.args.get("desc") else 0))
        return _call("GROUP_CONCAT_ORDERED", args)

    def _numbers_as_text(self, node: exp.GroupConcat, scope) -> None:
        """GROUP_CONCAT of a FLOAT or DOUBLE column: each value as MySQL writes it (SQLite
        would write a REAL with 15 digits, a FLOAT column's without its 6-digit form)."""
        holder = node.this.this if isinstance(node.this, exp.Order) else node.this
        items = holder.expressions if isinstance(holder, exp.Distinct) else [holder]
        for col in items:
            if not isinstance(col, exp.Column) or _resolved_kind(col, scope) != V.FLOAT:
                continue
            text = self._compile(
                exp.Cast(this=col.copy(), to=exp.DataType.build("CHAR")), scope, False
            )
            if text is not None:
                col.replace(text)

    @staticmethod
    def _double_argument(arg: exp.Expression, scope) -> bool:
        """Is a SUM's or AVG's argument a DOUBLE (a FLOAT or DOUBLE column, arithmetic on
        one)?"""
        if arg.find(*_NOT_SCALAR):
            return False
        try:
            return compile_expr(arg, scope[0], allow_params=True).kind == V.FLOAT
        except Exception:  # noqa: BLE001 - not compilable: the generic aggregate then
            return False

    def _over_aggregates(self, over, scope) -> exp.Expression:
        """A select item over aggregates: SQLite computes each aggregate (a DECIMAL one as its
        exact text) and hands them to the compiled expression above them."""
        args = [self._visit(a, scope, True) for a in over.aggregates]
        # SQLite holds a DECIMAL(5,2)'s 1.50 as 1.5: back to its scale (an AVG keeps its digits)
        convs = [converter(k, sc) for k, sc in zip(over.kinds, over.scales)]
        fn = over.compiled.fn
        if over.compiled.kind == V.DECIMAL:
            from ..storage.mysql_functions import to_sqlite_exact as out
        else:
            from ..storage.mysql_functions import to_sqlite as out

        def run(r, p, fn=fn, out=out):
            return out(fn(r, p))

        with _EXPRS_LOCK:
            _EXPRS.append((run, len(args), list(range(len(args))), convs))
            k = len(_EXPRS) - 1
        call = exp.Anonymous(this=PREFIX + "EXPR", expressions=[exp.Literal.number(k), *args])
        return _exact_text(call) if over.compiled.kind == V.DECIMAL else call

    def _decimal_aggregate(self, node: exp.Expression, scope, top: bool) -> exp.Expression:
        """SUM/AVG of a DECIMAL, exact: as a result column its value is the exact text (the
        result's converter reads it), inside an expression a number."""
        arg = node.this
        distinct = isinstance(arg, exp.Distinct)
        inner = arg.expressions[0] if distinct else arg
        compiled = None
        if not isinstance(inner, exp.Column) or _resolved_kind(inner, scope) == V.DECIMAL:
            # every digit as text (a DECIMAL column with its scale's: SQLite holds 1.50 as
            # the number 1.5, and MySQL's quotient for AVG counts them; a quotient unrounded)
            compiled = self._compile(inner, scope, True, shown=False)
        inner = compiled if compiled is not None else self._visit(inner, scope, True)
        if distinct:
            inner = exp.Distinct(expressions=[inner])
        name = "DSUM" if isinstance(node, exp.Sum) else "DAVG"
        if top:
            return _exact_text(_call(name + "_TEXT", [inner]))
        return _call(name, [inner])

    def _children(self, node: exp.Expression, scope, top_of) -> None:
        """Visit ``node``'s children in place; ``top_of(key)``: are those result columns?"""
        for key, value in list(node.args.items()):
            top = top_of(key)
            if isinstance(value, exp.Expression):
                node.set(
                    key,
                    self._visit(value, scope, top if not isinstance(node, exp.Select) else False),
                )
            elif isinstance(value, list):
                node.set(
                    key,
                    [
                        self._visit(v, scope, top) if isinstance(v, exp.Expression) else v
                        for v in value
                    ],
                )

    def _scalar_candidate(self, node: exp.Expression, scope) -> bool:
        if isinstance(node, _SIMPLE) or isinstance(node, (exp.Alias, exp.Ordered, exp.Identifier)):
            return False
        if isinstance(node, (exp.And, exp.Or, exp.Not, exp.Paren)):
            return False  # keep the conjuncts apart: native ones may use an index
        if not isinstance(node, (exp.Func, exp.Binary, exp.Unary, exp.Predicate, exp.Case)):
            return False
        if isinstance(node, _COMPARISONS + (exp.In, exp.Between, exp.Is)) and self._native_ok(
            node, scope
        ):
            return False
        if node.find(*_NOT_SCALAR):
            return False
        if isinstance(node.parent, exp.Window):
            return False
        if self._native_exact(node, scope):
            return False  # SQLite computes this exactly as MySQL does, at C speed
        if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):
            return False  # a WHEN branch, not IF()
        return True

    def _native_exact(self, node: exp.Expression, scope) -> bool:
        """Integer and DOUBLE arithmetic and comparisons over columns and literals of those
        types: SQLite's answer is MySQL's (its integers are 64-bit like BIGINT; a DECIMAL is a
        REAL in SQLite, so it does not qualify)."""
        sc, _ctypes = scope
        if isinstance(node, exp.Column):
            try:
                return sc.resolve(node)[1] in (V.INT, V.FLOAT)
            except Exception:  # noqa: BLE001
                return False
        if isinstance(node, exp.Literal):
            if node.is_string:
                return False
            text = str(node.this)
            return text.lstrip("-").isdigit() and abs(int(text)) < 2**53 or "e" in text.lower()
        if isinstance(node, exp.Paren):
            return self._native_exact(node.this, scope)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Neg)) and self._may_overflow(node, sc):
            return False  # SQLite turns an overflowing integer into a REAL; MySQL raises 1690
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul) + _COMPARISONS):
            if isinstance(node.expression, exp.Interval) or isinstance(node.this, exp.Interval):
                return False
            return self._native_exact(node.this, scope) and self._native_exact(
                node.expression, scope
            )
        if isinstance(node, exp.Neg):
            return self._native_exact(node.this, scope)
        if isinstance(node, (exp.And, exp.Or)):
            return self._native_exact(node.this, scope) and self._native_exact(
                node.expression, scope
            )
        if isinstance(node, exp.Not):
            return self._native_exact(node.this, scope)
        return False

    @staticmethod
    def _may_overflow(node: exp.Expression, sc) -> bool:
        try:
            return compile_expr(node, sc, allow_params=True).faults
        except Exception:  # noqa: BLE001 - not compilable: not SQLite's arithmetic either
            return True

    def _native_ok(self, node: exp.Expression, scope) -> bool:
        """Does SQLite compare these operands as MySQL does? Only plain operands qualify."""
        operands = [node.this]
        if isinstance(node, exp.In):
            operands += list(node.expressions)
            if node.args.get("query") is not None:
                return False
        elif isinstance(node, exp.Between):
            operands += [node.args.get("low"), node.args.get("high")]
        elif not isinstance(node, exp.Is):
            operands.append(node.expression)
        if not all(isinstance(o, _SIMPLE) for o in operands):
            return False
        cols = [o for o in operands if isinstance(o, exp.Column)]
        if not cols:
            return False  # literal against literal: evaluate with MySQL's rules
        sc, ctypes = scope
        families = set()
        wide = 0
        for o in operands:
            if isinstance(o, exp.Column):
                try:
                    i, kind = sc.resolve(o)
                except Exception:  # noqa: BLE001 - an outer or unknown column
                    return False
                if ctypes[i].computed:
                    return False  # a derived table's computed value: no collation, maybe text
                if kind == V.TIME:
                    return False  # stored as text, which orders 100:00:00 and -01:00 wrongly
                families.add(_FAMILY.get(kind, kind))
                wide += ctypes[i].wide_decimal
            elif isinstance(o, exp.Literal):
                if o.is_string:
                    families.add(_CANONICAL_TEMPORAL(o.this) or "str")
                else:
                    families.add("num")
        if "date-text" in families or "datetime-text" in families:
            # a canonical literal compares as text exactly like the stored DATE / DATETIME
            families = {"date" if f == "date-text" else f for f in families}
            families = {"datetime" if f == "datetime-text" else f for f in families}
        if len(families) > 1:
            return False
        if wide == 0:
            return True
        # a wide DECIMAL is text compared by value: against exact numeric literals, given as
        # their text (SQLite would round a number literal to a double), and other wide DECIMALs
        # only (SQLite would compare it with a numeric column as a double)
        if wide != len(cols):
            return False
        lits = [o for o in operands if isinstance(o, exp.Literal)]
        if any("e" in str(o.this).lower() for o in lits):
            return False  # a DOUBLE literal: compared as a double
        for o in lits:
            o.replace(exp.Literal.string(str(o.this)))
        return True

    def _compile(self, node: exp.Expression, scope, top: bool, shown: bool | None = None):
        """``node`` as one ``nf_EXPR`` call. ``top``: a DECIMAL crosses as its exact text;
        ``shown`` (default: ``top``): a DECIMAL rounded to its scale, as MySQL shows and
        compares it. Both: a result column, compared and sorted by value."""
        sc, ctypes = scope
        try:
            compiled = compile_expr(node, sc, allow_params=True)
        except E.ProgrammingError as e:
            if e.errno in (E.ER_WRONG_ARGUMENTS, E.ER_CANT_AGGREGATE_2COLLATIONS):
                raise  # the statement's own error (LIKE ... ESCAPE '!!'), as MySQL reports it
            return None  # (an outer query's column: SQLite resolves it)
        except Exception:  # noqa: BLE001 - not compilable here: SQLite's functions then
            return None
        shown = (top and not self.stored) if shown is None else shown
        if shown:
            compiled = shown_value(compiled, node, sc)
        used = sorted(
            {
                sc.resolve(c)[0]
                for c in node.find_all(exp.Column)
                if not isinstance(c.this, exp.Star)
            }
        )
        convs = [_storage_converter(ctypes[i]) for i in used]
        fn = compiled.fn
        if top and compiled.kind == V.DECIMAL:
            from ..storage.mysql_functions import to_sqlite_exact

            def run(r, p, fn=fn):
                return to_sqlite_exact(fn(r, p))

        else:
            from ..storage.mysql_functions import to_sqlite

            def run(r, p, fn=fn):
                return to_sqlite(fn(r, p))

        with _EXPRS_LOCK:
            _EXPRS.append((run, len(sc.columns), used, convs))
            k = len(_EXPRS) - 1
        args = [exp.Literal.number(k)]
        for i in used:
            q, name, _kind = sc.columns[i]
            args.append(exp.column(name, table=q, quoted=True))
        call = exp.Anonymous(this=PREFIX + "EXPR", expressions=args)
        return _exact_text(call) if top and shown and compiled.kind == V.DECIMAL else call

    def _note_param_kinds(self, node: exp.Expression, scope) -> None:
        """A parameter compared natively with a column is bound as that column's type."""
        a, b = node.this, node.expression
        equality = isinstance(node, (exp.EQ, exp.NEQ, exp.NullSafeEQ))
        for col, other in ((a, b), (b, a)):
            if isinstance(col, exp.Column) and isinstance(other, exp.Placeholder):
                self._note_param(col, other, scope, equality)

    def _note_param(self, col: exp.Column, param: exp.Placeholder, scope, equality: bool):
        try:
            _i, kind = scope[0].resolve(col)
        except Exception:  # noqa: BLE001
            return
        idx = str(param.this or "")
        if idx.startswith("p") and idx[1:].isdigit():
            if kind.__class__ is V.MemberKind and not equality:
                kind = kind.for_range()
            self.param_kinds[int(idx[1:])] = kind

    # -- single functions --------------------------------------------------------------------
    def _replace(self, node: exp.Expression) -> exp.Expression:
        t = type(node)
        if t is exp.Add or t is exp.Sub:
            if isinstance(node.expression, exp.Interval):
                amount, unit = _interval_parts(node.expression)
                name = "DATE_ADD" if t is exp.Add else "DATE_SUB"
                return _call(name, [node.this, amount, exp.Literal.string(unit)])
            if t is exp.Add and isinstance(node.this, exp.Interval):
                amount, unit = _interval_parts(node.this)
                return _call("DATE_ADD", [node.expression, amount, exp.Literal.string(unit)])
            return node
        if t is exp.Cast:
            call = cast_call(node)
            if call is None:
                from ..errors import NotSupportedError

                raise NotSupportedError(
                    f"This version doesn't yet support 'CAST to {node.to.sql()}'"
                )
            lookup_function(call[0], len(call[1]))
            return self._fn(*call)
        if t is exp.Sum:
            return _call("SUM", [node.this]) if not isinstance(node.this, exp.Distinct) else node
        if t is exp.Avg:
            return _call("AVG", [node.this]) if not isinstance(node.this, exp.Distinct) else node
        if t in _TYPED_AGG_NAMES:
            return _call(_TYPED_AGG_NAMES[t], list(node.expressions))
        if t is exp.Anonymous:
            name = str(node.this).upper()
            if name.startswith(PREFIX.upper()):
                return node
            if name in F.AGGREGATES:
                return _registered_agg(name, list(node.expressions))
            if isinstance(node.parent, exp.Window):
                return node  # ROW_NUMBER() and friends: SQLite's window functions
            call = canonical_call(node)
            lookup_function(call[0], len(call[1]))
            return self._fn(*call)
        if isinstance(node, _NATIVE) or isinstance(node, exp.AggFunc):
            return node
        if isinstance(node, (exp.Func, exp.JSONValue)):  # (sqlglot's JSONValue is no Func)
            call = canonical_call(node)
            if call is None:
                return node
            name, args = call
            if name not in F.REGISTRY:
                raise unknown_function(name)
            lookup_function(name, len(args))
            return self._fn(name, args)
        return node

    def _fn(self, name: str, args: list[exp.Expression]) -> exp.Expression:
        args = [
            self._replace(a)
            if isinstance(a, exp.Anonymous) and not str(a.this).upper().startswith(PREFIX.upper())
            else a
            for a in args
        ]
        return _call(name, args)

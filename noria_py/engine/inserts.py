"""INSERT, REPLACE and INSERT ... ON DUPLICATE KEY UPDATE: ``InsertPrepared`` and the
engine's part that applies them, with constraints, foreign keys and generated columns.
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from typing import TYPE_CHECKING

from sqlglot import exp

from .. import errors as E
from ..result import Result, write_result
from ..sql import names as N
from ..sql import values as V
from ..sql.dialect import DIALECT
from ..sql.expr import Scope, Unsupported, compile_expr, truthy
from ..sql.parse import item_name
from ..storage.sqlite import TableSchema, q
from .prepared import Prepared
from .strict_select import strict_select_check
from .writes import _Multi, _pairs

if TYPE_CHECKING:
    from .core import Engine


def _noted(err: E.Error, conditions: list, t) -> E.Error:
    """``err`` carrying the notes and warnings its statement raised before it, which the
    diagnostics area lists ahead of the error (``Error.before``; no notes under sql_notes =
    0). Returns ``err``."""
    if conditions and not err.before:
        kept = conditions if t.notes else [c for c in conditions if c[0] != "Note"]
        err.before = tuple(kept)
    return err


class InsertPrepared(Prepared):
    kind = "insert"
    is_write = True
    # Engine.insert_now's: may it take the statement (None: not asked yet); and
    # Engine._store_one's: base storage's statement for the row, and (graph, its version, the
    # table's node)
    now_ok: bool | None = None
    store_plan: tuple | None = None
    base_node: tuple | None = None

    def __init__(self, engine: Engine, ins: exp.Insert, param_count: int):
        self.param_count = param_count
        target = ins.this
        if isinstance(target, exp.Schema):
            table = target.this
            cols = [i.name for i in target.expressions]
        else:
            table = target
            cols = None
        schema = engine._schema(table.name)
        self.schema = schema
        self.table = schema.name
        self.ignore = bool(ins.args.get("ignore"))
        self.replace = bool(ins.meta.get("replace")) if ins.meta else False
        self.returning = _returning(ins, schema)
        self.upsert = None
        conflict = ins.args.get("conflict")
        if conflict is not None:
            if not conflict.args.get("duplicate"):
                raise E.NotSupportedError("only ON DUPLICATE KEY UPDATE is supported")
            values = ins.expression
            alias = values.args.get("alias") if isinstance(values, exp.Values) else None
            self.upsert = self._compile_upsert(
                schema, conflict.expressions or [], alias, cols or [c.name for c in schema.columns]
            )
            if not self.ignore:  # strict mode: a conversion's warning there is an error
                self.upsert = [(i, engine._strictly(fn)) for i, fn in self.upsert]
        ncols = len(schema.columns)
        if cols is None:
            positions = list(range(ncols))
        else:
            positions = []
            for c in cols:
                i = schema.index_of(c)
                if i is None:
                    raise E.bad_field(c)
                positions.append(i)
        self.positions = positions
        src = ins.expression
        self.select = None
        self.strict_check = None
        constants = False  # every value a parameter, a literal or DEFAULT
        if isinstance(src, exp.Values):
            scope = Scope([])
            self.tuples = []
            constants = True
            for t in src.expressions:
                vals = t.expressions if isinstance(t, exp.Tuple) else [t]
                if len(vals) != len(positions):
                    raise E.ProgrammingError(
                        "Column count doesn't match value count at row 1", 1136, "21S01"
                    )
                fns = []
                for v, pos in zip(vals, positions):
                    if not isinstance(v, _CONSTANT_VALUES) and not _is_default(v):
                        constants = False
                    if isinstance(v, exp.Var) and v.name.upper() == "DEFAULT":
                        fns.append(_DEFAULT)
                    elif v.find(exp.Subquery, exp.Select, exp.Exists) is not None:
                        fns.append(_value_by_query(engine, v, param_count))
                    else:
                        try:
                            c = _compile_value(v, scope)
                            if c.hexnum is not None and schema.columns[pos].ctype.kind in (
                                V.INT,
                                V.DECIMAL,
                                V.FLOAT,
                            ):  # 0x41 or b'101' into a number column: its integer
                                c = compile_expr(exp.Literal.number(c.hexnum), scope)
                            fns.append(c.fn)
                        except Unsupported as e:
                            raise E.NotSupportedError(
                                f"value expression not supported: {e}"
                            ) from None
                self.tuples.append(fns)
        elif isinstance(src, (exp.Select, exp.Union)):
            self.select = src
            self.tuples = None
            self.strict_check = None if self.ignore else _select_strict_check(engine, src)
        else:
            raise E.NotSupportedError("unsupported INSERT source")
        # defaults for columns not listed
        self.auto_col = schema.auto_increment
        self.has_generated = any(c.generated is not None for c in schema.columns)
        self._int_plan = self._plan_ints(schema) if self.tuples is not None else None
        # IGNORE: the NOT NULL columns left out that have no default, each warned about once
        # for the statement (1364) before the rows' own warnings, and given the type's zero
        listed = set(positions)
        self.no_default = [
            i
            for i, c in enumerate(schema.columns)
            if i not in listed
            and not c.nullable
            and not c.has_default
            and not c.auto_increment
            and c.generated is None
            and not (c.ctype.values is not None and c.ctype.mysql_name == "ENUM")
        ]
        # LOAD DATA: a NULL field for a NOT NULL column is 1263, not 1048 (positions)
        self.load_nulls: frozenset = frozenset()
        self.table_text = _column_table(schema.name)
        # a row at a time, no conflict handling, nothing returned (Engine._insert_one)
        self.plain = (
            not self.ignore
            and not self.replace
            and self.upsert is None
            and self.returning is None
            and self.select is None
        )
        # nothing a row's values, defaults (constants or the time) or checks compute reads the
        # session (DATABASE(), LAST_INSERT_ID(), ROW_COUNT() are functions; a CHECK or generated
        # column could call one): see ``Prepared.session_free``. (DDL re-prepares statements.)
        self.session_free = (
            self.plain and constants and not self.has_generated and not schema.checks
        )
        # a plain INSERT of one VALUES row (Engine._insert_row)
        self.one_row = self.plain and len(self.tuples) == 1
        self.params_in_order = self._params_in_order(src)

    def _params_in_order(self, src) -> bool:
        """Is the one VALUES row ``(?, ?, ...)``, the parameters in order: its values the
        parameter tuple itself (``_build_given``)? Each value's compiled function is asked
        which parameter it returns."""
        if self.tuples is None or len(self.tuples) != 1:
            return False
        fns = self.tuples[0]
        row = src.expressions[0]
        vals = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(fns) != self.param_count or not all(isinstance(v, exp.Placeholder) for v in vals):
            return False
        probe = tuple(object() for _ in fns)
        try:
            return all(f((), probe) is p for f, p in zip(fns, probe))
        except Exception:  # noqa: BLE001 - a value that converts its parameter: not in order
            return False

    def _plan_ints(self, schema: TableSchema) -> list | None:
        """When every column is given in order, none generated and no DEFAULT: per column,
        ``(index, column, lowest, highest)``, the bounds set for an integer column (a value
        of type int between them is what ``coerce_for_column`` would return), else None."""
        cols = schema.columns
        if self.positions != list(range(len(cols))) or self.has_generated:
            return None
        if any(f is _DEFAULT for fns in self.tuples for f in fns):
            return None
        plan = []
        for i, c in enumerate(cols):
            rng = V.int_range(c.ctype)
            if rng is not None and c.ctype.mysql_name == "YEAR":
                rng = (1901, 2155)  # (two digits are a year of 1970-2069: coerced)
            plan.append((i, c, None, None) if rng is None else (i, c, rng[0], rng[1]))
        return plan

    @staticmethod
    def _compile_upsert(schema: TableSchema, assignments, alias=None, inserted=()) -> list:
        """``col = expr`` pairs evaluated over (existing row + the row that was to be inserted);
        ``VALUES(col)`` names the latter, and so does MySQL 8's row alias: ``VALUES (...) AS
        new`` makes it ``new.col``, ``AS new(x, y)`` names the inserted columns ``x``, ``y``."""
        scope = Scope(
            [(N.bare(schema.name), c.name, c.ctype.kind) for c in schema.columns]
            + [("__new", f"__new_{c.name}", c.ctype.kind) for c in schema.columns]
        )
        row = alias.name.lower() if alias is not None and alias.name else None
        renamed: dict[str, str] = {}  # a column alias -> the inserted column it names
        if alias is not None and alias.columns:
            if len(alias.columns) != len(inserted):
                raise E.ProgrammingError(
                    "In definition of view, derived table or common table expression, SELECT "
                    "list and column names list have different column counts",
                    1353,
                    "HY000",
                )
            renamed = {a.name.lower(): c for a, c in zip(alias.columns, inserted)}

        def repl(node):
            if row is not None and isinstance(node, exp.Column):
                if node.table.lower() == row:
                    name = renamed.get(node.name.lower(), node.name) if renamed else node.name
                    if renamed and node.name.lower() not in renamed:
                        raise E.bad_field(f"{node.table}.{node.name}")
                    return exp.column(f"__new_{name}")
                if not node.table and node.name.lower() in renamed:
                    return exp.column(f"__new_{renamed[node.name.lower()]}")
            if isinstance(node, exp.Anonymous) and str(node.this).upper() == "VALUES":
                arg = node.expressions[0] if node.expressions else None
                name = arg.name if arg is not None else ""
                return exp.column(f"__new_{name}")
            if isinstance(node, exp.Values) and len(node.expressions) == 1:
                inner = node.expressions[0]
                name = inner.name if hasattr(inner, "name") else ""
                return exp.column(f"__new_{name}")
            return node

        out = []
        for eq in assignments:
            if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                raise E.ProgrammingError(
                    "ON DUPLICATE KEY UPDATE expects col = expr", 1064, "42000"
                )
            i = schema.index_of(eq.this.name)
            if i is None:
                raise E.bad_field(eq.this.name)
            try:
                fn = compile_expr(eq.expression.copy().transform(repl), scope).fn
            except Unsupported as e:
                raise E.NotSupportedError(f"ON DUPLICATE KEY UPDATE expression: {e}") from None
            out.append((i, fn))
        return out

    def build_rows(self, engine: Engine, params, row: int = 1, adjust=None) -> list[list]:
        """The rows one parameter set writes, checked and converted for their columns.
        ``row`` is the statement's number of the first (the errors name it). With ``adjust``
        (IGNORE, a ``values.Adjust``) a value that does not fit is stored as MySQL adjusts it
        and each row's warnings are appended to ``adjust.per_row``, a list per row; a strict
        ``adjust`` collects the notes (``adjust.conditions``) and the errors stay errors."""
        if adjust is not None and not adjust.strict:
            return self._build_rows(engine, params, row, adjust)
        try:
            if self._int_plan is not None and not engine._cur.keep_zero:
                return self._build_given(params, row, adjust)
            return self._build_rows(engine, params, row, adjust)
        except (E.DataError, E.IntegrityError) as err:
            built = getattr(err, "built", [])  # the rows before the one refused
            if isinstance(err, E.DataError):
                err = V.at_row(err, row + len(built), self.table_text)
                err.built = built
            raise err from None

    def statement_warnings(self) -> list:
        """IGNORE's warnings for the whole statement, before its rows': 1364 for each NOT NULL
        column left out that has no default."""
        cols = self.schema.columns
        return [
            ("Warning", 1364, f"Field '{cols[i].name}' doesn't have a default value")
            for i in self.no_default
        ]

    def _build_given(self, params, first: int = 1, notes=None) -> list[list]:
        """``build_rows`` when every column's value is given (see ``_plan_ints``): the same
        checks, without the defaults and generated columns, an in-range integer kept as is."""
        out = []
        auto = self.auto_col
        coerce = V.coerce_for_column
        lazy = not self.params_in_order  # values computed column by column (_build_rows)
        for fns in self.tuples:
            row = list(fns) if lazy else list(params)
            for i, c, lo, hi in self._int_plan:
                v = row[i]
                if lazy:
                    try:
                        v = v((), params)
                    except (E.DataError, E.IntegrityError) as err:
                        err.built = out
                        raise
                if v is not None and (lo is None or type(v) is not int or not lo <= v <= hi):
                    if notes is not None:
                        notes.row = first + len(out)
                    try:
                        v = coerce(v, c.ctype, c.name, notes)
                    except E.DataError as err:
                        err.built = out
                        raise
                if i == auto and (v is None or v == 0):
                    v = None
                elif v is None and not c.nullable:
                    err = E.IntegrityError(
                        f"Column '{c.name}' cannot be null", E.ER_BAD_NULL_ERROR, "23000"
                    )
                    err.built = out
                    raise err
                row[i] = v
            out.append(row)
        return out

    def _build_rows(self, engine: Engine, params, first: int = 1, adjust=None) -> list[list]:
        schema = self.schema
        rows_vals: list[list] = []
        # VALUES: each value computed as its column is written, in the column list's order,
        # row after row (as MySQL stores a row field by field: a column's error comes before
        # a later column's expression is evaluated)
        lazy = self.tuples is not None
        if lazy:
            rows_vals = self.tuples
        else:
            check = self.strict_check
            if check is not None and engine._cur.strict:
                check(params)  # strict mode: what MySQL would refuse the statement for
            # the values as MySQL stores them: a quotient with every digit it carries (4/3
            # into a DOUBLE is 1.333333333, not the 1.3333 a SELECT shows)
            res = engine.execute_ast(self.select, params, stored=True)
            for r in res.rows:
                if len(r) != len(self.positions):
                    raise E.ProgrammingError(
                        "Column count doesn't match value count at row 1", 1136, "21S01"
                    )
                rows_vals.append(list(r))
        out = []
        cols = schema.columns
        positions = self.positions
        auto = self.auto_col
        keep_zero = engine._cur.keep_zero
        load_nulls = self.load_nulls
        listed = set(positions)
        for k, vals in enumerate(rows_vals):
            if adjust is not None:
                adjust.row = first + k
                if not adjust.strict:
                    adjust.conditions = []
            row = [_DEFAULT] * len(cols)
            for i, c in enumerate(cols):  # the columns left out: their defaults
                if i in listed:
                    continue
                if c.generated is not None:
                    row[i] = None  # computed below, once every other column has its value
                    continue
                row[i] = self._default(c, i, adjust, listed=False)
            for pos, v in zip(positions, vals):  # the values given, in the list's order
                if lazy and v is not _DEFAULT:
                    try:
                        v = v((), params)
                    except (E.DataError, E.IntegrityError) as err:
                        err.built = out  # (the rows before it: their keys come first)
                        raise
                c = cols[pos]
                if c.generated is not None:
                    if v is not _DEFAULT:
                        if engine._cur.strict or adjust is None:
                            raise E.ProgrammingError(
                                f"The value specified for generated column '{c.name}' in "
                                f"table '{schema.name}' is not allowed.",
                                3105,
                                "HY000",
                            )
                        # outside strict mode MariaDB ignores it with a warning (its dumps
                        # write every column's value, the generated ones' too)
                        adjust.conditions.append(
                            (
                                "Warning",
                                1906,
                                f"The value specified for generated column '{c.name}' in "
                                f"table '{N.bare(schema.name)}' has been ignored",
                            )
                        )
                    row[pos] = None
                    continue
                if v is _DEFAULT:
                    v = self._default(c, pos, adjust, listed=True)
                elif v is _MISSING:  # LOAD DATA IGNORE: a short row's missing field
                    v = None if c.nullable else V.implicit_default(c.ctype, c.name, load=True)
                    adjust.warn(1261, f"Row {adjust.row} doesn't contain data for all columns")
                elif v is not None:
                    try:
                        v = V.coerce_for_column(v, c.ctype, c.name, adjust)
                    except E.DataError as err:
                        err.built = out
                        raise
                if pos == auto and (v is None or (v == 0 and not keep_zero)):
                    v = None  # generated (0 is kept under sql_mode NO_AUTO_VALUE_ON_ZERO)
                elif v is None and not c.nullable:
                    if adjust is None or adjust.strict:
                        err = E.IntegrityError(
                            f"Column '{c.name}' cannot be null", E.ER_BAD_NULL_ERROR, "23000"
                        )
                        err.built = out
                        raise err
                    v = V.implicit_default(c.ctype, c.name, load=pos in load_nulls)
                    if pos in load_nulls:
                        adjust.warn(
                            1263,
                            "Column set to default value; NULL supplied to NOT NULL column "
                            f"'{c.name}' at row {adjust.row}",
                        )
                    else:
                        adjust.warn(E.ER_BAD_NULL_ERROR, f"Column '{c.name}' cannot be null")
                row[pos] = v
            if self.has_generated:
                _no_zero_date(row)
                engine._fill_generated(schema, row)
            out.append(row)
            if adjust is not None and not adjust.strict:
                adjust.per_row.append(adjust.conditions)
        return out

    @staticmethod
    def _default(c, i: int, adjust, listed: bool):
        """The value of a column left out or given as DEFAULT. A NOT NULL column with no
        default is 1364; under IGNORE it gets its type's zero (warned about once for the
        statement when left out, per row when DEFAULT names it)."""
        if c.auto_increment:
            return None
        if c.has_default:
            return c.default() if callable(c.default) else c.default
        if c.nullable:
            return None
        if c.ctype.values is not None and c.ctype.mysql_name == "ENUM":
            return c.ctype.values[0]  # an ENUM's implicit default: its first member
        if adjust is None or adjust.strict:
            raise E.DataError(f"Field '{c.name}' doesn't have a default value", 1364, "HY000")
        if listed:
            adjust.warn(1364, f"Field '{c.name}' doesn't have a default value")
        return V.implicit_default(c.ctype, c.name)

    def run(self, engine, params) -> Result:
        if self.one_row:
            return engine._insert_row(self, params)
        return engine._insert(self, [params])


class RowsInsertPrepared(InsertPrepared):
    """An INSERT (or REPLACE) of several rows of placeholders only, ``VALUES (?, ?), (?, ?),
    ...``, prepared as its one-row form (``rows_prepared``): its parameters are ``row_width``
    per row, built and checked row after row as the statement's own rows are. Parsing the
    statement itself would cost about a millisecond per row, once per row count (a driver's
    batch of a thousand rows, then its last, shorter one)."""

    row_width = 1

    def build_rows(self, engine: Engine, params, row: int = 1, adjust=None) -> list[list]:
        w = self.row_width
        one = InsertPrepared.build_rows
        out: list = []
        for i in range(0, len(params), w):
            try:
                out.extend(one(self, engine, params[i : i + w], row + len(out), adjust))
            except (E.DataError, E.IntegrityError) as err:
                err.built = out + getattr(err, "built", [])  # the rows before the refused one
                raise
        return out


def _select_strict_check(engine, select: exp.Expression):
    """For ``INSERT ... SELECT`` from one table: fn(params) that evaluates the SELECT's WHERE
    and select list over the rows it reads as strict mode does inside a write (a string that is
    not wholly a number is 1292, x / 0 1365), raising what MySQL would refuse the statement
    for; the rows themselves come from the SELECT as usual. Other forms (joins, grouping,
    DISTINCT, ORDER BY with LIMIT) replay the SELECT's evaluation (``strict_select``). None
    when neither models the SELECT, or it computes nothing that could convert."""
    if not isinstance(select, exp.Select):
        return None
    frm = select.args.get("from_")
    table = frm.this if frm is not None else None
    if (
        not isinstance(table, exp.Table)
        or select.args.get("joins")
        or select.args.get("group")
        or select.args.get("having")
        or select.args.get("limit")
        or select.args.get("distinct")
        or select.find(exp.AggFunc, exp.Subquery, exp.Window) is not None
        or any(isinstance(e, exp.Star) for e in select.expressions)
    ):
        return strict_select_check(engine, select)
    items = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
    where = select.args["where"].this if select.args.get("where") else None
    if not any(
        n.find(exp.Binary, exp.Func) is not None for n in items + ([where] if where else [])
    ):
        return strict_select_check(engine, select)  # (``WHERE s`` reads s as a number)
    try:
        schema = engine._schema(table.name)
        scope = Scope(*V.scope_columns(schema, table.alias))
        fns = [compile_expr(e, scope).fn for e in items]
        match = engine._strictly(engine._matcher(schema, where, table.alias))
    except (Unsupported, E.Error):
        return strict_select_check(engine, select)
    evaluate = engine._strictly(
        lambda rows, params: [f(r, params) for _rid, r in rows for f in fns]
    )

    def check(params):
        evaluate(match(params), params)

    return check


def _compile_value(v: exp.Expression, scope: Scope):
    """A VALUES expression compiled. One the compiler computes once (``'x' + 1``, ``1 / 0``)
    is computed under strict evaluation too: when that is an error (MySQL's strict mode makes
    the conversion's warning one), the value raises it when the statement runs in strict mode
    and is the lenient value otherwise."""
    if isinstance(v, (exp.Literal, exp.Placeholder, exp.Null, exp.Boolean)):
        return compile_expr(v, scope)
    state = V.STRICT_EVALUATION
    state.on = state.division = True
    try:
        return compile_expr(v, scope)
    except E.DataError as err:
        refused = err
    finally:
        state.on = state.division = False
    c = compile_expr(v, scope)
    lenient = c.fn
    division = refused.errno == 1365

    def fn(r, p):
        if state.on and (state.division or not division):
            raise refused
        return lenient(r, p)

    c.fn = fn
    return c


_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z_$][\w$]*)"
# INSERT|REPLACE [IGNORE] [INTO] [db.]table [(col, ...)] VALUES (?, ...): the head and first row
_ROWS_HEAD = re.compile(
    rf"\s*(?:insert|replace)(?:\s+ignore)?(?:\s+into)?\s+{_IDENT}(?:\s*\.\s*{_IDENT})?"
    rf"(?:\s*\(\s*{_IDENT}(?:\s*,\s*{_IDENT})*\s*\))?\s*values?\s*"
    r"\(\s*\?((?:\s*,\s*\?)*)\s*\)",
    re.I,
)
_rows_tails: dict[int, re.Pattern] = {}


def rows_form(sql: str) -> tuple[str, int, int] | None:
    """``(its one-row form, row width, rows)`` of an INSERT or REPLACE whose VALUES are two or
    more rows of placeholders alone, each as wide as the first, with nothing after them; else
    None (the statement is parsed as it is)."""
    m = _ROWS_HEAD.match(sql)
    if m is None:
        return None
    width = 1 + m.group(1).count("?")
    tail = _rows_tails.get(width)
    if tail is None:
        more = rf"(?:\s*,\s*\?){{{width - 1}}}" if width > 1 else ""
        row = rf"\(\s*\?{more}\s*\)"
        tail = _rows_tails[width] = re.compile(rf"(?:\s*,\s*{row})+\s*;?\s*")
    end = m.end()
    if tail.fullmatch(sql, end) is None:
        return None
    return sql[:end], width, 1 + sql.count("?", end) // width


def rows_prepared(one: Prepared, width: int, rows: int) -> RowsInsertPrepared | None:
    """The several-row statement from its prepared one-row form ``one`` (None when that form is
    not a plain INSERT or REPLACE of one row of ``width`` parameters)."""
    if (
        type(one) is not InsertPrepared
        or one.param_count != width
        or one.select is not None
        or one.upsert is not None
        or one.returning is not None
        or len(one.tuples) != 1
    ):
        return None
    multi = copy.copy(one)
    multi.__class__ = RowsInsertPrepared
    multi.row_width = width
    multi.one_row = False
    multi.param_count = width * rows
    return multi


_DEFAULT = object()
_MISSING = object()  # LOAD DATA IGNORE: a field a short row does not have
# VALUES items that compute nothing: ``?``, a literal (a number or a string, not a negation or
# an expression), NULL; and DEFAULT (``_is_default``)
_CONSTANT_VALUES = (exp.Placeholder, exp.Literal, exp.Null)


def _is_default(v: exp.Expression) -> bool:
    return isinstance(v, exp.Var) and v.name.upper() == "DEFAULT"


def _no_zero_date(row) -> None:
    """A row that would be written with a ``ZeroDate``: refused (1235)."""
    for v in row:
        if type(v) is V.ZeroDate:
            raise v.error()


def _stand_in(schema: TableSchema, row):
    """IGNORE: (the row to try its keys and checks with, the ``ZeroDate`` it holds or None).
    A zero date in a unique key cannot be tried: refused at once."""
    zero = None
    for v in row:
        if type(v) is V.ZeroDate:
            zero = v
            break
    if zero is None:
        return row, None
    keyed = set(schema.primary_key or ()).union(*[set(u) for u in schema.uniques])
    out = list(row)
    for i, v in enumerate(row):
        if type(v) is V.ZeroDate:
            if i in keyed:
                raise v.error()
            out[i] = V.ZeroDate.STAND_IN[schema.columns[i].ctype.kind]
    return out, zero


def _column_table(name: str) -> str:
    """A table as MariaDB's value errors name it, before the column: `db`.`t`."""
    db, table = N.split(name)
    return f"`{db or N.HOME}`.`{table}`"


def _returning(stmt, schema: TableSchema):
    """INSERT/REPLACE/DELETE ... RETURNING (MariaDB's): [(name, fn, kind)] over the table's
    rows, or None."""
    ret = stmt.args.get("returning")
    if ret is None:
        return None
    scope = Scope(*V.scope_columns(schema))
    out = []
    for e in ret.expressions:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            for i, c in enumerate(schema.columns):
                out.append((c.name, lambda row, p, i=i: row[i], c.ctype.kind))
            continue
        try:
            ce = compile_expr(e.this if isinstance(e, exp.Alias) else e, scope)
        except Unsupported as err:
            raise E.NotSupportedError(f"RETURNING expression not supported: {err}") from None
        out.append((item_name(e), ce.fn, ce.kind))
    return out


def _returning_result(returning, rows, params) -> Result:
    out = [tuple(fn(tuple(r), params) for _n, fn, _k in returning) for r in rows]
    names = [n for n, _f, _k in returning]
    types = [V.MYSQL_NAME_OF_KIND.get(k, "VARCHAR") for _n, _f, k in returning]
    return Result(names, out, types, [True] * len(names), len(out))


def _stamped(schema: TableSchema, assigned: set) -> list:
    """The ON UPDATE CURRENT_TIMESTAMP columns an UPDATE that assigns ``assigned`` stamps."""
    return [i for i, c in enumerate(schema.columns) if c.on_update and i not in assigned]


def _value_by_query(engine: Engine, value: exp.Expression, nparams: int):
    """A VALUES expression holding a subquery (``VALUES ((SELECT MAX(id) FROM t))``): computed
    by base storage as ``SELECT value`` when the row is built, before it is stored."""
    query = exp.select(value.copy())
    holder: list = []

    def fn(_row, params):
        if not holder:
            holder.append(
                engine._proxy(query, nparams, query.sql(dialect=DIALECT), reason="VALUES subquery")
            )
        rows = holder[0].run(engine, params).rows
        return rows[0][0] if rows else None

    return fn


class InsertsMixin:
    """INSERT, REPLACE and upserts, and the row checks every write makes (CHECK constraints,
    foreign keys, generated columns): a part of ``Engine`` (engine/core.py).

    State it owns: the compiled generated-column and CHECK functions (``_gen_fns``,
    ``_check_fns``) and ``_fk_parents`` (the tables foreign keys reference: computed here,
    forgotten by DDL).
    Calls into other parts: the write path (``_write``, ``_dispatch``), ``_writer``
    (transactions).
    """

    # --- writes ------------------------------------------------------------------------------
    def _insert(self, prep: InsertPrepared, param_sets, tails: dict | None = None) -> Result:
        """INSERT (or REPLACE, or ON DUPLICATE KEY UPDATE) of the rows of ``param_sets``.
        INSERT IGNORE stores a value that does not fit its column as MySQL adjusts it, and
        skips a row a key or a constraint refuses, each with MySQL's warning, in MySQL's
        order: the statement's (``statement_warnings``), then each row's values', its key's
        and its ``tails`` (LOAD DATA's 1262, by row index)."""
        table = prep.table
        rows_all: list[list] = []
        adjust = None
        if prep.ignore:
            adjust = V.Adjust(prep.table_text)
            for params in param_sets:
                rows_all.extend(prep.build_rows(self, params, len(rows_all) + 1, adjust))
        else:
            notes = V.Adjust(prep.table_text, strict=True)  # strict mode's notes
            state = V.STRICT_EVALUATION
            t = self._cur
            strictly = t.strict and not state.on and prep.tuples is not None
            if strictly:  # a conversion's warning in a value's expression is an error
                state.on = True
                state.division = t.div_zero
            try:
                for params in param_sets:
                    rows_all.extend(prep.build_rows(self, params, len(rows_all) + 1, notes))
            except (E.DataError, E.IntegrityError) as err:
                # MySQL writes row by row: a key the rows before this one break comes first
                before = rows_all + getattr(err, "built", [])
                if before and prep.upsert is None and not prep.replace:
                    self._raise_key_error(prep, before)
                _noted(err, notes.conditions, t)
                raise
            finally:
                if strictly:
                    state.on = False
                    state.division = False
        if not rows_all:
            return Result(rowcount=0, conditions=prep.statement_warnings() if adjust else [])
        skipped: list = []
        if (
            len(rows_all) == 1
            and prep.plain
            and self._writer is None
            and not self._tx
            and not self._cur.active
            and self._runtime is None
            and not self.shared
            and not self._fk_involved(prep.schema)
        ):
            try:
                return self._insert_one(prep, rows_all, notes.conditions)
            except E.Error as err:
                _noted(err, notes.conditions, self._cur)
                raise
        stored_holder: list = []
        changed = [0]
        conditions: list = []

        if adjust is not None and (prep.replace or prep.upsert is not None):
            for r in rows_all:
                _no_zero_date(r)

        def apply():
            if prep.replace:
                return self._replace(prep, rows_all, stored_holder, changed)
            if prep.upsert is not None:
                return self._fk_after(
                    prep.schema, self._upsert(prep, rows_all, stored_holder, changed)
                )
            if prep.ignore:
                stored = []
                checked = prep.schema.checks or (prep.schema.foreign_keys and self._cur.fk_checks)
                conditions.clear()  # (a retried write starts over)
                skipped.clear()
                for k, r in enumerate(rows_all):
                    tried, zero = _stand_in(prep.schema, r)
                    self.storage.savepoint("ins")
                    try:
                        got = self.storage.insert_rows(table, [tried], prep.auto_col)
                        if checked:  # IGNORE skips a row a constraint refuses, too
                            self._check_constraints(prep.schema, got)
                            if prep.schema.foreign_keys and self._cur.fk_checks:
                                from ..foreign_keys import Enforcer

                                Enforcer(self.storage).check_children(prep.schema, got)
                        if zero is not None:  # it would be stored: the zero date is refused
                            self.storage.rollback_to("ins")
                            raise zero.error()
                        stored.extend(got)
                        self.storage.release("ins")
                    except E.IntegrityError as err:
                        self.storage.rollback_to("ins")
                        conditions.append(("Warning", err.errno, err.msg or str(err)))
                        skipped.append(k)
            else:
                stored = self.storage.insert_rows(table, rows_all, prep.auto_col)
            stored_holder.append(stored)
            return self._fk_after(prep.schema, [(r, 1) for r in stored])

        try:
            self._write(
                table,
                apply,
                single=len(rows_all) == 1
                and not prep.ignore
                and not prep.replace
                and prep.upsert is None
                and not self._fk_involved(prep.schema),
            )
        except E.Error as err:
            if adjust is None and len(rows_all) == 1:
                # (of several rows, the notes up to the one refused are not told apart)
                _noted(err, notes.conditions, self._cur)
            raise
        stored = stored_holder[0]
        if adjust is not None:  # the rows' warnings, each row's in its place
            refused = dict(zip(skipped, conditions))
            conditions = prep.statement_warnings()
            for k, row_conditions in enumerate(adjust.per_row):
                conditions += row_conditions
                if k in refused:
                    conditions.append(refused[k])
                if tails and k in tails:
                    conditions += tails[k]
        else:
            conditions = notes.conditions + conditions
        if prep.returning is not None:
            res = _returning_result(prep.returning, stored, param_sets[-1] if param_sets else ())
            res.conditions = conditions
            return res
        if prep.upsert is not None or prep.replace:
            # MySQL counts 1 per inserted row and 2 per updated row (REPLACE: 1 per deleted)
            return Result(rowcount=len(stored) + changed[0], lastrowid=None, conditions=conditions)
        lastrowid = None
        if prep.auto_col is not None:
            gen = [s[prep.auto_col] for r, s in zip(rows_all, stored) if r[prep.auto_col] is None]
            if gen:
                lastrowid = gen[0]
        return Result(rowcount=len(stored), lastrowid=lastrowid, conditions=conditions)

    def _insert_row(self, prep: InsertPrepared, params) -> Result:
        """``_insert`` of a plain INSERT's one VALUES row: when it goes to ``_insert_one`` (no
        transaction, nothing to check after it), that is decided first and the row built
        alone, as ``_insert`` builds it (a row refused is the statement's error: no rows
        before it hold a key)."""
        t = self._cur
        if (
            self._writer_ is not None  # (the property's field)
            or self._tx
            or t.active
            or self._runtime is not None
            or self.shared
            or self._fk_involved(prep.schema)
        ):
            return self._insert(prep, [params])
        notes = V.Adjust(prep.table_text, 1, True)  # strict mode's notes (row 1, strict)
        try:
            row = self._build_one(prep, params, notes, t)
            return self._insert_one(prep, [row], notes.conditions)
        except E.Error as err:
            _noted(err, notes.conditions, t)
            raise

    def _build_one(self, prep: InsertPrepared, params, notes, t) -> list:
        """The one row of a one-row INSERT, built and converted for its columns (``notes``:
        strict mode's notes), its values' expressions evaluated under ``t``'s strict mode."""
        if prep.params_in_order:  # (no value's expression to evaluate)
            return prep.build_rows(self, params, 1, notes)[0]
        state = V.STRICT_EVALUATION
        strictly = t.strict and not state.on
        if strictly:  # a conversion's warning in a value's expression is an error
            state.on = True
            state.division = t.div_zero
        try:
            return prep.build_rows(self, params, 1, notes)[0]
        finally:
            if strictly:
                state.on = False
                state.division = False

    def _raise_key_error(self, prep: InsertPrepared, rows: list) -> None:
        """The key error writing ``rows`` meets, if any (nothing stays written)."""
        if self._writer is not None and self._writer is not self._cur:
            return  # another connection's transaction holds storage: not ours to look into
        savepoint = self._tx
        if savepoint:
            self.storage.savepoint("noria_rows")
        else:
            self.storage.begin()
        try:
            self.storage.insert_rows(prep.table, rows, prep.auto_col)
        except E.IntegrityError as key_err:
            raise key_err from None
        finally:
            if savepoint:
                self.storage.rollback_to("noria_rows")
            else:
                self.storage.rollback()

    def _insert_one(self, prep: InsertPrepared, rows: list, conditions: list) -> Result:
        """A plain INSERT of one row outside a transaction, into a table no CHECK or FOREIGN
        KEY involves: one SQLite statement, atomic by itself (no transaction or savepoint
        around it), and its delta straight to the dataflow (``_write``'s single path without
        its closures)."""
        return write_result(1, self._store_one(prep, rows[0]) or None, conditions)

    def _store_one(self, prep: InsertPrepared, row: list) -> int:
        """``_insert_one``'s steps for its ``row``: base storage's statement (its plan, and
        the table's node for the graph's version, kept with the prepared statement, which DDL
        replaces), then the delta to the dataflow. Returns the AUTO_INCREMENT value generated
        (0: none)."""
        auto = prep.auto_col
        if auto is not None and row[auto] is None:
            stored = self.storage.insert_rows(prep.table, [row], auto)[0]
            generated = stored[auto]
        else:
            plan = prep.store_plan
            if plan is None:
                plan = prep.store_plan = self.storage.insert_plan(prep.table)
            self.storage.insert_one(prep.table, plan, row)
            stored = tuple(row)
            generated = 0
        graph = self.graph
        got = prep.base_node
        if got is None or got[0] is not graph or got[1] != graph.version:
            got = prep.base_node = (
                graph,
                graph.version,
                graph.by_signature.get(f"base({prep.table})"),
            )
        node = got[2]
        if node is not None and node.children:
            if self._thread is None:
                graph.propagate(node, [(stored, 1)])
            else:
                self._dispatch(node, [(stored, 1)])
        self.write_count += 1
        return generated

    def _replace(self, prep: InsertPrepared, rows: list, stored_holder: list, changed: list):
        """REPLACE, row by row: every row holding one of the new row's unique keys is deleted
        (as a DELETE: foreign keys' ON DELETE applies), then the row is inserted."""
        schema = prep.schema
        keysets = ([schema.primary_key] if schema.primary_key else []) + schema.uniques
        stored, gone = [], []
        unchanged = 0
        in_place = not self._fk_involved(schema)
        for r in rows:
            first_key = None
            hits = []
            for n, ks in enumerate(keysets):
                hit = self._rows_by_key(schema, r, ks)
                if hit:
                    first_key = n if first_key is None else first_key
                    self.storage.delete_rows(schema.name, [rid for rid, _ in hit])
                    gone.extend(row for _, row in hit)
                    hits.extend(hit)
            got = self.storage.insert_rows(schema.name, [r], prep.auto_col)
            stored.extend(got)
            if (
                in_place
                and first_key == len(keysets) - 1
                and len(hits) == 1
                and tuple(hits[0][1]) == tuple(got[0])
            ):
                # MySQL replaces a row found by the table's last unique key in place: the same
                # row again counts 1, not 2
                unchanged += 1
        changed[0] = len(gone) - unchanged
        stored_holder.append(stored)
        removed, added = gone, stored
        if in_place:
            # no foreign key involved (whose checks and cascades see every row that went):
            # the views get the statement's net change, where a row it inserted and then
            # replaced (by a later row of it with the same key) neither enters nor leaves
            net: dict = {}
            for g in gone:
                g = tuple(g)
                net[g] = net.get(g, 0) - 1
            for r in stored:
                r = tuple(r)
                net[r] = net.get(r, 0) + 1
            removed = [row for row, c in net.items() for _ in range(-c)]
            added = [row for row, c in net.items() for _ in range(c)]
        pairs: list = []
        for part in (
            self._fk_after(schema, [(g, -1) for g in removed]),
            self._fk_after(schema, [(r, 1) for r in added]),
        ):
            pairs.extend(_pairs(schema.name, part))
        return _Multi(pairs)

    def _rows_by_key(self, schema: TableSchema, row, ks) -> list:
        """``(rowid, row)`` of the stored rows holding ``row``'s values of unique key ``ks``
        (none when one of them is NULL: NULLs never collide)."""
        if any(row[i] is None for i in ks):
            return []
        cols = schema.columns
        cond = " AND ".join(f"{q(cols[i].name)} = ?" for i in ks)
        return self.storage.select_with_rowid(schema.name, cond, [V.to_storage(row[i]) for i in ks])

    def _upsert(self, prep: InsertPrepared, rows: list, stored_holder: list, changed: list):
        """INSERT ... ON DUPLICATE KEY UPDATE, row by row: insert, or update the row holding the
        duplicate key. Returns the delta."""
        schema = prep.schema
        cols = schema.columns
        stored = []
        batch = []
        keysets = ([schema.primary_key] if schema.primary_key else []) + schema.uniques
        for r in rows:
            self.storage.savepoint("ups")
            try:
                got = self.storage.insert_rows(schema.name, [r], prep.auto_col)
                self.storage.release("ups")
                stored.extend(got)
                batch.extend((g, 1) for g in got)
                continue
            except E.IntegrityError as err:
                self.storage.rollback_to("ups")
                found = None
                for ks in keysets:
                    hit = self._rows_by_key(schema, r, ks)
                    if hit:
                        found = hit[0]
                        break
                if found is None:
                    raise err
            rowid, old = found
            new = list(old)
            newvals = tuple(r)
            for i, fn in prep.upsert:
                v = fn(tuple(new) + newvals, ())
                c = cols[i]
                if v is None and not c.nullable:
                    raise E.IntegrityError(
                        f"Column '{c.name}' cannot be null", E.ER_BAD_NULL_ERROR, "23000"
                    )
                new[i] = V.coerce_for_column(v, c.ctype, c.name) if v is not None else None
            if tuple(new) != old:
                self._finish_update(schema, new, _stamped(schema, {i for i, _f in prep.upsert}))
            new = tuple(new)
            if new != old:
                self.storage.update_rows(schema.name, [(rowid, new)])
                batch.append((old, -1))
                batch.append((new, 1))
                changed[0] += 2
        stored_holder.append(stored)
        return batch

    def _fk_referenced(self) -> set:
        """Lower-case names of the tables some FOREIGN KEY references (kept until DDL)."""
        got = self._fk_parents
        if got is None:
            got = self._fk_parents = {
                fk.ref_table.lower() for s in self.storage.schemas.values() for fk in s.foreign_keys
            }
        return got

    def _fk_involved(self, schema: TableSchema) -> bool:
        """Does a write to the table need checks after it (CHECK or FOREIGN KEY)?"""
        if schema.foreign_keys or schema.checks:
            return True
        parents = self._fk_parents
        if parents is None:
            parents = self._fk_referenced()
        return bool(parents) and schema.name.lower() in parents

    def _generated(self, schema: TableSchema) -> list:
        """(column index, compiled expression) of the table's generated columns, in order."""
        got = self._gen_fns.get(id(schema))
        if got is None or got[0] is not schema:
            scope = Scope(*V.scope_columns(schema))
            fns = []
            for i, c in enumerate(schema.columns):
                if c.generated is not None:
                    try:
                        fns.append((i, compile_expr(c.generated, scope, allow_params=False).fn))
                    except Unsupported as e:
                        raise E.NotSupportedError(f"generated column '{c.name}': {e}") from None
            got = self._gen_fns[id(schema)] = (schema, fns)
        return got[1]

    def _finish_update(self, schema: TableSchema, new: list, stamp: list) -> None:
        """A row an UPDATE changed: its ON UPDATE CURRENT_TIMESTAMP columns the statement does
        not assign (``stamp``, from ``_stamped``) get the time, its generated columns are
        computed again."""
        if stamp:
            now = _dt.datetime.now().replace(microsecond=0)
            for i in stamp:
                c = schema.columns[i]
                new[i] = V.coerce_for_column(now, c.ctype, c.name)
        if self._generated(schema):
            self._fill_generated(schema, new)

    def _fill_generated(self, schema: TableSchema, row: list) -> list:
        """Compute a row's generated columns (each sees the ones before it), as its type
        holds them."""
        for i, fn in self._generated(schema):
            c = schema.columns[i]
            v = fn(tuple(row), ())
            v = V.coerce_for_column(v, c.ctype, c.name) if v is not None else None
            if v is None and not c.nullable:
                raise E.IntegrityError(
                    f"Column '{c.name}' cannot be null", E.ER_BAD_NULL_ERROR, "23000"
                )
            row[i] = v
        return row

    def _check_constraints(self, schema: TableSchema, rows) -> None:
        """CHECK constraints on new or changed rows: FALSE is error 3819 (NULL passes)."""
        fns = self._check_fns.get(id(schema))
        if fns is None or fns[0] is not schema:
            scope = Scope(*V.scope_columns(schema))
            compiled = []
            for name, expr, _col in schema.checks:
                try:
                    compiled.append((name, compile_expr(expr, scope, allow_params=False).fn))
                except Unsupported as e:
                    raise E.NotSupportedError(f"CHECK ({expr.sql(DIALECT)}): {e}") from None
            fns = self._check_fns[id(schema)] = (schema, compiled)
        for r in rows:
            for name, fn in fns[1]:
                v = fn(r, ())
                if v is not None and not truthy(v):
                    raise E.IntegrityError(f"Check constraint '{name}' is violated.", 3819, "HY000")

    def _fk_after(self, schema: TableSchema, batch: list):
        """After a write's change to base storage (inside its transaction): FOREIGN KEY
        checks of the new rows and the parent rows that went or changed, and the cascades,
        whose deltas go into the dataflow with the write's own (see ``foreign_keys``)."""
        if not batch:
            return batch
        if schema.checks:
            self._check_constraints(schema, [r for r, s in batch if s > 0])
        if not self._cur.fk_checks or not (
            schema.foreign_keys or schema.name.lower() in self._fk_referenced()
        ):
            return batch
        from ..foreign_keys import Enforcer

        enf = Enforcer(self.storage)
        extra: list = []
        if schema.name.lower() in self._fk_referenced():
            olds, news, gone = [], [], []
            i = 0
            while i < len(batch):
                row, sign = batch[i]
                if sign < 0 and i + 1 < len(batch) and batch[i + 1][1] > 0:
                    olds.append(row)  # an update: its old and new row
                    news.append(batch[i + 1][0])
                    i += 2
                    continue
                if sign < 0:
                    gone.append(row)
                i += 1
            if gone:
                extra += enf.parent_changed(schema, gone, None)
            if olds:
                extra += enf.parent_changed(schema, olds, news)
        if schema.foreign_keys:
            enf.check_children(schema, [r for r, s in batch if s > 0])
        return _Multi([(schema.name, batch)] + extra) if extra else batch

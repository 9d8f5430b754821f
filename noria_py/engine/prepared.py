"""Prepared statements: the base class, the small statement kinds (proxied to base storage,
locking reads, SQL_CALC_FOUND_ROWS, constants, functions) and the rules that decide how a
statement's parameters are bound (lifted as written, or bound otherwise).
"""

from __future__ import annotations

import datetime as _dt
import re
import sqlite3
import time
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlglot import exp

from .. import errors as E
from ..result import Result
from ..sql import proxy_types, transpile
from ..sql import values as V
from .base import QueryEntry

if TYPE_CHECKING:
    from .core import Engine


# ---------------------------------------------------------------------------------------------
# Prepared statements


class Prepared:
    """A parsed statement, ready to run with a parameter tuple."""

    kind = "other"
    param_count = 0
    columns: list[str] | None = None
    column_types: list[str] = []
    nullable: list[bool] = []
    is_write = False
    is_select = False
    # completing without conditions clears the diagnostics area (statements that use
    # tables; see noria_py.diagnostics)
    clears = True
    reads_found_rows = False  # calls FOUND_ROWS(): runs with the session's value bound
    # reads or writes a TIMESTAMP column: refused under a session time_zone other than the
    # one TIMESTAMP values are kept in (``check_timestamp_zone``)
    timestamps = False
    # evaluates nothing that reads the connection's session values (DATABASE(),
    # LAST_INSERT_ID(), ROW_COUNT()): ``Engine.execute`` runs it without binding them
    session_free = False
    _lift_types: tuple | None = None  # see lifts_as_written, _lift_rules
    _param_guard: tuple | None = None  # see binds_otherwise

    def run(self, engine: Engine, params) -> Result:
        raise NotImplementedError

    def compared_kinds(self) -> dict[int, str]:
        """Parameter position -> the kind of the column it is compared with for equality, for
        the parameters this statement knows that of (``lifts_as_written``)."""
        return {}


class _ViewEntry(Prepared):
    """What CREATE VIEW compiles: the view's operators are installed, it has no reader
    (``Engine._install``); only its entry is used."""

    def __init__(self, entry: QueryEntry):
        self.entry = entry


_PARAM_TYPES = (
    int, float, str, bytes, Decimal, _dt.date, _dt.datetime, _dt.time, _dt.timedelta, bool,
    type(None),
)  # fmt: skip


_PARAM_CLASSES = frozenset(_PARAM_TYPES)  # (a subclass of one of them passes too)


def check_params(params) -> None:
    for v in params:
        if v.__class__ not in _PARAM_CLASSES and not isinstance(v, _PARAM_TYPES):
            raise E.ProgrammingError(
                f"Error binding parameter: type '{type(v).__name__}' is not supported",
                E.ER_WRONG_ARGUMENTS,
                "HY000",
            )


# When a literal lifted into a parameter (sql/literals.py: an integer or a string) compares as
# the literal does (lifts_as_written): per kind of the column it is compared with for equality,
# per type of the literal, always (None) or when the value passes a check. MySQL compares a
# string with a number column, and an integer with a DOUBLE, as doubles; a parameter compares
# by its own value: the same answer while the numbers are exact as doubles.
_EXACT_DOUBLE = 2**53


def _small_int(v: int) -> bool:
    return -_EXACT_DOUBLE < v < _EXACT_DOUBLE


def _int_15_digits(v: int) -> bool:
    """At most 15 digits: as a wide DECIMAL's text compares with it, so does the number."""
    return -(10**15) < v < 10**15


def _short_number_text(v: str) -> bool:
    """Fewer than 16 characters and no exponent: below 2**53, at most 15 digits."""
    return len(v) < 16 and "e" not in v and "E" not in v


_LIFT_RULES: dict[str, dict[type, object]] = {
    V.INT: {int: None, str: _short_number_text},
    V.DECIMAL: {int: _int_15_digits},
    V.FLOAT: {int: _small_int, str: _short_number_text},
    V.STR: {str: None},
}
# what ``compared_kinds`` names a ``col LIKE ?`` pattern by: a string binds as written; any
# other value (a number, bytes) is read by MySQL as text of its own kind, so the statement
# runs with it written in (``binds_otherwise``)
LIKE_PATTERN = "like-pattern"
_LIFT_RULES[LIKE_PATTERN] = {str: None}
_NO_RULES: dict = {}


def lifts_as_written(prep: Prepared, params) -> bool:
    """Does ``prep`` answer with ``params``, literals lifted out of its text, as the text with
    the literals in place does? Yes when each is compared for equality with a column it binds
    to as MySQL reads the literal there (``_LIFT_RULES``): an integer with an integer column, or
    a DECIMAL or DOUBLE column while it is exact as a double, a string with a string column, or
    with a number column when it is a short number. Elsewhere a parameter converts otherwise
    than the literal (an integer against a string column compares as text, MySQL compares the
    two as numbers; an integer
    against a DATE is no date; a string that is no number against a DECIMAL matches nothing,
    not 0), and so does one the statement does not know the column of. Needs no lock."""
    rules = getattr(prep, "_lift_types", None)
    if rules is None:
        rules = _lift_rules(prep)
    if len(rules) != len(params):
        return False
    for v, rule in zip(params, rules):
        check = rule.get(v.__class__, False)
        if check is not None and (check is False or not check(v)):
            return False
    return True


class BindsOtherwise(Exception):
    """A reader key cannot stand for this parameter: MySQL compares it as its own type (a
    number against a string column). The caller answers through ``Engine.execute``, which
    writes the value into the statement (``binds_otherwise``)."""


_PLAIN_INT_TEXT = re.compile(r"[+-]?\d{1,15}")
_NUMBER_TYPES = (int, float, Decimal, bool)


def _param_guard(prep: Prepared) -> tuple:
    """(position, "str" | "num") of each parameter compared with a string or a number column,
    cached on ``prep`` (``binds_otherwise``)."""
    guard = getattr(prep, "_param_guard", None)
    if guard is None:
        compared = getattr(prep, "compared_kinds", None)
        out = []
        for i, k in sorted((compared() if compared is not None else {}).items()):
            if k.__class__ is V.MemberKind:
                continue  # an ENUM/SET: a number is a member's position, bound as such
            if k == LIKE_PATTERN:
                out.append((i, "like"))
            elif k == V.STR:
                out.append((i, "str"))
            elif k in (V.INT, V.DECIMAL, V.FLOAT):
                out.append((i, "num"))
        guard = tuple(out)
        try:
            prep._param_guard = guard
        except AttributeError:  # a statement with slots: computed each time (it has none)
            pass
    return guard


def binds_otherwise(prep: Prepared, params) -> bool:
    """Would a parameter compare otherwise than MySQL compares it? A number against a string
    column (MySQL compares the two as numbers: ``s = 0`` matches ``'x'``), or a string that is
    not a plain integer against a number column, is bound as the key of the column's type;
    the statement then runs with the values written into it as literals (``Engine._run``).
    Cheap: the hot read paths ask it."""
    for i, fam in _param_guard(prep):
        if i >= len(params):
            return False
        v = params[i]
        if fam == "str":
            if v.__class__ in _NUMBER_TYPES:
                return True
        elif fam == "like":
            if v.__class__ is not str and v is not None:
                return True
        elif v.__class__ is str and not _PLAIN_INT_TEXT.fullmatch(v):
            return True
    return False


def lifts_whatever_values(prep: Prepared, params) -> bool:
    """``lifts_as_written`` for every value of the types of ``params``: the server's lookup
    plans, shared by the texts of one shape and one type per literal, skip the check then."""
    rules = getattr(prep, "_lift_types", None)
    if rules is None:
        rules = _lift_rules(prep)
    return len(rules) == len(params) and all(
        v.__class__ in rule and rule[v.__class__] is None for v, rule in zip(params, rules)
    )


def _lift_rules(prep: Prepared) -> tuple:
    """Per parameter of ``prep``: the ``_LIFT_RULES`` of the column it is compared with
    (none for a statement that does not say: not a ``Prepared``, one of information_schema)."""
    compared = getattr(prep, "compared_kinds", None)
    kinds = compared() if compared is not None else {}
    rules = tuple(
        _NO_RULES
        if (k := kinds.get(i)) is None or k.__class__ is V.MemberKind
        else _LIFT_RULES.get(k, _NO_RULES)
        for i in range(prep.param_count)
    )
    try:
        prep._lift_types = rules
    except AttributeError:  # pragma: no cover - a statement with __slots__
        pass
    return rules


class ProxyPrepared(Prepared):
    kind = "proxy"
    is_select = True

    def __init__(self, sql_sqlite: str, param_count: int, entry: QueryEntry, kinds=None):
        self.sql = sql_sqlite
        self.param_count = param_count
        self.entry = entry
        self.columns = None
        self.out_kinds = kinds or []
        self.out_scales: list = []  # a DECIMAL column's scale, when known
        self._convs = None

    param_kinds: dict = {}
    declared: list | None = None  # per output column: a type the kind does not say, or None

    def compared_kinds(self) -> dict[int, str]:
        return self.param_kinds

    def run(self, engine: Engine, params) -> Result:
        conn = engine.storage.conn
        if engine._writer is not None and engine._writer is not engine._cur:
            # another connection's transaction is open: read the committed rows
            conn = engine.storage.rconn
            if conn is None:
                raise E.LockWait()
        return self.run_on(conn, params)

    def run_on(self, conn: sqlite3.Connection, params, where: str = "base storage") -> Result:
        """Run the transpiled query on ``conn``; rows converted to the driver types."""
        pk = self.param_kinds
        args = {
            f"p{i}": V.to_storage(proxy_types.bind_as(v, pk[i]) if i in pk else v)
            for i, v in enumerate(params)
        }
        transpile.set_params(params)
        try:
            cur = conn.execute(self.sql, args)
            rows = cur.fetchall()
        except sqlite3.OperationalError as e:
            raised = transpile.take_error()
            if raised is not None:
                raise raised from None  # a MySQL error of one of our functions (1690, ...)
            msg = str(e)
            if "no such table" in msg:
                raise E.no_such_table(msg.split(":")[-1].strip()) from None
            if "no such column" in msg:
                raise E.bad_field(msg.split(":")[-1].strip()) from None
            if "no such function" in msg:  # a function only SQLite's name of it reached
                name = msg.split(":")[-1].strip()
                raise E.ProgrammingError(
                    f"FUNCTION {name.lower()} does not exist", 1305, "42000"
                ) from None
            raise E.ProgrammingError(f"query failed on {where}: {msg}") from None
        except (sqlite3.Error, OverflowError) as e:
            raise E.OperationalError(f"query failed on {where}: {e}") from None
        names = [d[0] for d in cur.description] if cur.description else []
        self.entry.hits += 1
        if self._convs is None or len(self._convs) != len(names):
            ks = self.out_kinds if len(self.out_kinds) == len(names) else [None] * len(names)
            sc = self.out_scales if len(self.out_scales) == len(names) else [None] * len(names)
            self._convs = [proxy_types.converter(k, s) for k, s in zip(ks, sc)]
        convs = self._convs
        if any(c is not None for c in convs):
            rows = [
                tuple(v if c is None or v is None else c(v) for v, c in zip(r, convs)) for r in rows
            ]
        kinds = []
        for i in range(len(names)):
            k = self.out_kinds[i] if i < len(self.out_kinds) else None
            if k is None:
                k = V.NULL
                for r in rows:
                    if r[i] is not None:
                        k = V.kind_of_value(r[i])
                        break
            kinds.append(V.MYSQL_NAME_OF_KIND.get(k, "VARCHAR"))
        declared = self.declared
        if declared is not None and len(declared) == len(kinds):
            kinds = [d or k for d, k in zip(declared, kinds)]
        return Result(names, rows, kinds, [True] * len(names), len(rows), None, "proxied")


class LockingPrepared(Prepared):
    """``SELECT ... FOR UPDATE`` / ``FOR SHARE`` / ``LOCK IN SHARE MODE``: inside a
    transaction the read first takes the write lock (as InnoDB locks the rows it reads), so a
    read-then-write cannot lose another transaction's update; outside one it is a plain read."""

    kind = "select"
    is_select = True

    def __init__(self, inner: Prepared):
        self.inner = inner
        self.param_count = inner.param_count
        self.columns = inner.columns
        self.column_types = inner.column_types
        self.nullable = inner.nullable

    def run(self, engine: Engine, params) -> Result:
        t = engine._cur
        if t.active and engine._writer is not t:
            engine._write_gate(t)
        return self.inner.run(engine, params)

    def compared_kinds(self) -> dict[int, str]:
        return self.inner.compared_kinds()


class CalcFoundRowsPrepared(Prepared):
    """``SELECT SQL_CALC_FOUND_ROWS ... LIMIT n``: the SELECT without the modifier, and the
    rows it finds without its LIMIT and OFFSET counted by ``COUNT(*)`` over it (what
    FOUND_ROWS() then reads)."""

    kind = "select"
    is_select = True

    def __init__(self, inner: Prepared, count_sql: str, count_ast, nparams: int):
        self.inner = inner
        self.param_count = inner.param_count
        self.columns = inner.columns
        self.column_types = inner.column_types
        self.nullable = inner.nullable
        self.reads_found_rows = inner.reads_found_rows
        self._count = (count_sql, count_ast, nparams)
        self._count_prep: Prepared | None = None

    def run(self, engine: Engine, params) -> Result:
        res = self.inner.run(engine, params)
        count = self._count_prep
        if count is None:
            sql, ast, nparams = self._count
            count = self._count_prep = engine._prepare_ast(ast, nparams, sql)
        res.found = count.run(engine, params).rows[0][0]
        return res

    def compared_kinds(self) -> dict[int, str]:
        return self.inner.compared_kinds()


class ConstPrepared(Prepared):
    """SELECT without FROM: evaluated directly."""

    kind = "const"
    is_select = True
    clears = False

    def __init__(self, fns, names, kinds, param_count):
        self.fns = fns
        self.columns = names
        self.column_types = [V.MYSQL_NAME_OF_KIND.get(k, "VARCHAR") for k in kinds]
        self.nullable = [True] * len(names)
        self.param_count = param_count

    def run(self, engine, params) -> Result:
        row = tuple(f((), params) for f in self.fns)
        return Result(self.columns, (row,), self.column_types, self.nullable, 1, None, None)


class FuncPrepared(Prepared):
    def __init__(self, fn, param_count=0, is_write=False, kind="other", clears=None):
        self.fn = fn
        self.param_count = param_count
        self.is_write = is_write
        self.kind = kind
        # BEGIN, COMMIT, USE, SET ... leave the diagnostics area as it is
        self.clears = kind != "tx" if clears is None else clears

    def run(self, engine, params) -> Result:
        return self.fn(params)


def _take_calc_found_rows(ast: exp.Expression) -> bool:
    """Remove ``SQL_CALC_FOUND_ROWS`` from the statement's SELECT (a UNION's first), saying
    whether it was there (``parse`` refuses it anywhere else)."""
    sel = ast
    while isinstance(sel, exp.SetOperation):
        sel = sel.this
    if isinstance(sel, exp.Subquery):
        sel = sel.this
    if not isinstance(sel, exp.Select):
        return False
    mods = sel.args.get("operation_modifiers") or []
    kept = [m for m in mods if str(getattr(m, "this", m)).upper() != "SQL_CALC_FOUND_ROWS"]
    if len(kept) == len(mods):
        return False
    sel.set("operation_modifiers", kept or None)
    return True


def _found_rows_count(ast: exp.Expression) -> exp.Expression:
    """``SELECT COUNT(*) FROM (the query without its ORDER BY, LIMIT and OFFSET)``: the rows
    FOUND_ROWS() reports after SQL_CALC_FOUND_ROWS."""
    inner = ast.copy()
    for arg in ("order", "limit", "offset"):
        inner.set(arg, None)
    return exp.select(exp.Count(this=exp.Star())).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("_found_rows")))
    )


_ZONE_DIFFERS: dict = {}


def zone_differs(tz: str) -> bool:
    """Is the time_zone ``tz`` another than the one TIMESTAMP values are kept in (the
    system's)? Then MySQL would show and read them converted; this version does not."""
    differs = _ZONE_DIFFERS.get(tz)
    if differs is None:
        from ..sql.functions.temporal import _offset

        z = _offset(tz)
        if z is None or z == "SYSTEM":
            differs = False
        else:  # a fixed offset: the system's own, if it keeps one all year
            differs = bool(time.daylight) or z != _dt.timedelta(seconds=-time.timezone)
        _ZONE_DIFFERS[tz] = differs
    return differs


def check_timestamp_zone() -> None:
    """1235 for a statement on a TIMESTAMP column under another time_zone than the system's:
    its values would have to be converted to and from that zone, which is not done."""
    from ..sql import functions as F

    if zone_differs(F.current_context().time_zone):
        raise E.NotSupportedError(
            "This version doesn't yet support 'a TIMESTAMP column under a session time_zone "
            "other than the system's'"
        )

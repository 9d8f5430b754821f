"""MySQL's diagnostics area: the conditions (errors, warnings, notes) a connection's last
statement left, and the statements that read them.

Each connection keeps one (``Txn.diag``: a sequence of ``(level, code, message)``), embedded
per ``noria_py.connect()`` connection and over the wire per client connection. As in MySQL and
MariaDB (which agree here):

* a statement that fails leaves its error (``Error | code | message``);
* a statement that completes with warnings or notes (``Result.conditions``: INSERT IGNORE's
  and LOAD DATA IGNORE's skipped rows, LOAD DATA's cut long rows) leaves them;
* a statement that completes without any clears the area when it uses tables (a SELECT from
  a table, a write, DDL on tables, SHOW TABLES, SHOW VARIABLES, DESCRIBE ...) and leaves it
  alone otherwise (``SELECT 1``, ``SET``, ``USE``, ``BEGIN``, ``COMMIT``, ``CREATE
  DATABASE``): ``Prepared.clears``;
* ``SHOW WARNINGS``, ``SHOW ERRORS`` (each with ``LIMIT [offset,] n``), ``SHOW COUNT(*)
  WARNINGS | ERRORS``, ``@@warning_count`` and ``@@error_count`` read it without touching it.
  ``@@warning_count`` counts every condition, errors included; ``@@error_count`` the errors.

The engine applies the rule after each statement it runs (``Engine._execute``); the errors are
recorded where they reach the client (``dbapi.Cursor``, the server's command loop). The fast
read paths that answer a cached lookup without the engine clear the area with one attribute
test, as any SELECT from a table does.
"""

from __future__ import annotations

import re

from sqlglot import exp

from . import errors as E
from .result import Result
from .sql import values as V
from .sql.dialect import DIALECT

NONE: tuple = ()  # an empty diagnostics area

COLUMNS = ["Level", "Code", "Message"]
TYPES = ["VARCHAR", "INT", "VARCHAR"]
VARIABLES = ("warning_count", "error_count")

_SHOW = re.compile(
    r"\A\s*show\s+(?P<count>count\s*\(\s*\*\s*\)\s+)?(?P<what>warnings|errors)"
    r"(?P<limit>\s+limit\s+(?:(?P<off>\d+|\?)\s*,\s*)?(?P<n>\d+|\?)"
    r"(?:\s+offset\s+(?P<off2>\d+|\?))?)?\s*;?\s*\Z",
    re.I,
)
_SHOW_START = re.compile(r"\A\s*show\s+(?:count\s*\(\s*\*\s*\)\s+)?(?:warnings|errors)\b", re.I)


def error_area(err: E.Error) -> list:
    """The diagnostics area a failed statement leaves: the conditions it raised before its
    error (``Error.before``), then the error."""
    return [*err.before, ("Error", err.errno, err.msg or str(err))]


def counts(area) -> tuple[int, int]:
    """(``@@warning_count``, ``@@error_count``) of a diagnostics area."""
    return len(area), sum(1 for c in area if c[0] == "Error")


def variable(area, name: str) -> int:
    """The value of ``@@warning_count`` or ``@@error_count`` (``name`` in lower case)."""
    total, errs = counts(area)
    return total if name == "warning_count" else errs


def session_only(name: str) -> E.Error:
    return E.OperationalError(f"Variable '{name}' is a SESSION variable", 1238, "HY000")


def read_only(name: str) -> E.Error:
    return E.OperationalError(f"Variable '{name}' is a read only variable", 1238, "HY000")


class _DiagPrepared:
    """A statement that reads the connection's diagnostics area (and leaves it as it is)."""

    kind = "diag"
    is_select = True
    is_write = False
    simple = False
    clears = False
    param_count = 0
    columns: list[str] = []
    column_types: list[str] = []
    nullable: list[bool] = []


class ShowPrepared(_DiagPrepared):
    """``SHOW WARNINGS | ERRORS [LIMIT [offset,] n]`` and ``SHOW COUNT(*) WARNINGS | ERRORS``."""

    def __init__(self, errors_only: bool, count: bool, offset, limit) -> None:
        self.errors_only = errors_only
        self.count = count
        self.offset = offset  # an int, "?" (a parameter) or None
        self.limit = limit
        self.param_count = sum(1 for v in (offset, limit) if v == "?")
        if count:
            name = "error_count" if errors_only else "warning_count"
            self.columns = [f"@@session.{name}"]
            self.column_types = ["BIGINT"]
            self.nullable = [False]
        else:
            self.columns = list(COLUMNS)
            self.column_types = list(TYPES)
            self.nullable = [False, False, False]

    def run(self, engine, params) -> Result:
        area = engine._cur.diag
        if self.count:
            total, errs = counts(area)
            rows: list = [(errs if self.errors_only else total,)]
        else:
            rows = [c for c in area if c[0] == "Error"] if self.errors_only else list(area)
            it = iter(params)
            offset = next(it) if self.offset == "?" else self.offset
            limit = next(it) if self.limit == "?" else self.limit
            if limit is not None:
                offset = _count(offset or 0)
                rows = rows[offset : offset + _count(limit)]
        return Result(self.columns, rows, self.column_types, self.nullable, len(rows), None, None)


def _count(v) -> int:
    """A LIMIT bound (a parameter may arrive as text)."""
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise E.ProgrammingError("Incorrect arguments to LIMIT", 1210, "HY000") from None
    if n < 0:
        raise E.ProgrammingError("Incorrect arguments to LIMIT", 1210, "HY000")
    return n


def prepare_show(sql: str) -> ShowPrepared | None:
    """The statement for a ``SHOW WARNINGS``-like text, or None when ``sql`` is none."""
    if not _SHOW_START.match(sql):
        return None
    m = _SHOW.match(sql)
    if m is None or (m.group("count") and m.group("limit")):
        rest = sql.strip()[:40]
        raise E.parse_error(f"near '{rest}'")
    if m.group("off") and m.group("off2"):
        raise E.parse_error(f"near 'OFFSET {m.group('off2')}'")

    def bound(text):
        if text is None or text == "?":
            return text
        return int(text)

    return ShowPrepared(
        m.group("what").lower() == "errors",
        bool(m.group("count")),
        bound(m.group("off") or m.group("off2")),
        bound(m.group("n")),
    )


class SelectPrepared(_DiagPrepared):
    """A SELECT without FROM whose items read ``@@warning_count`` / ``@@error_count``, alone
    (``SELECT @@warning_count``) or in expressions (``SELECT @@warning_count + 0``)."""

    def __init__(self, ast: exp.Select, param_count: int) -> None:
        from .sql.expr import Scope, Unsupported, compile_expr, shown_value
        from .sql.parse import item_name

        self.param_count = param_count
        self.items: list = []  # per item: a variable's name, or the expression's tree
        self.columns, self.column_types, self.nullable = [], [], []
        self._compile = lambda e: shown_value(compile_expr(e, Scope([])), e, Scope([]))
        for e in ast.expressions:
            self.columns.append(item_name(e))
            self.nullable.append(False)
            inner = e.this if isinstance(e, exp.Alias) else e
            if isinstance(inner, exp.SessionParameter):
                self.items.append(inner.name.lower())
                self.column_types.append("BIGINT")
                continue
            try:
                c = self._compile(_with_values(inner, {}))
            except Unsupported as err:
                raise E.NotSupportedError(
                    f"This version doesn't yet support '{inner.sql(DIALECT)[:60]}' with "
                    f"@@warning_count or @@error_count: {err}"
                ) from None
            self.items.append(inner)
            self.column_types.append(V.MYSQL_NAME_OF_KIND.get(c.kind, "VARCHAR"))
            self.nullable[-1] = True

    def run(self, engine, params) -> Result:
        area = engine._cur.diag
        values = {name: variable(area, name) for name in VARIABLES}
        row = []
        for item in self.items:
            if item.__class__ is str:
                row.append(values[item])
            else:
                row.append(self._compile(_with_values(item, values)).fn((), params))
        return Result(self.columns, [tuple(row)], self.column_types, self.nullable, 1, None, None)


def _with_values(tree: exp.Expression, values: dict) -> exp.Expression:
    """``tree`` with each diagnostics variable replaced by its value (0 when not given)."""

    def put(node):
        if isinstance(node, exp.SessionParameter):
            return exp.Literal.number(values.get(node.name.lower(), 0))
        return node

    return tree.copy().transform(put)


def prepare_select(ast: exp.Expression, param_count: int) -> SelectPrepared:
    """The statement for a query holding system variables (``ast.find(SessionParameter)``).

    Only ``@@warning_count`` and ``@@error_count`` in a SELECT without FROM are answered
    here; a global scope is MySQL's 1238, anything else 1235 naming the construct (the
    server answers its own variables before a statement reaches the engine)."""
    for p in ast.find_all(exp.SessionParameter):
        name = p.name.lower()
        if name not in VARIABLES:
            raise E.NotSupportedError(
                f"This version doesn't yet support 'system variable @@{p.name}' here"
            )
        if (p.args.get("kind") or "").lower() == "global":
            raise session_only(name)
    plain = isinstance(ast, exp.Select) and not any(
        v for k, v in ast.args.items() if k not in ("expressions", "kind") and v
    )
    if not plain:
        raise E.NotSupportedError(
            "This version doesn't yet support '@@warning_count or @@error_count in a query "
            "with FROM, WHERE, GROUP BY, ORDER BY or LIMIT'"
        )
    return SelectPrepared(ast, param_count)

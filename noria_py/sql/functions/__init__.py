"""MySQL's built-in functions, written once with MySQL 8 / MariaDB semantics.

Every scalar function the engine knows is a :class:`Fn` in :data:`REGISTRY`, keyed by its MySQL
name in upper case; every aggregate is an :class:`Agg` in :data:`AGGREGATES`. The dataflow's
expression compiler (``sql/expr.py``) calls ``Fn.impl`` per row, and base storage registers the
same callables into SQLite (``storage/sqlite.py``), so a query answered by either path gives the
same value.

Values are plain Python: ``None`` (NULL), ``int``, ``Decimal``, ``float``, ``str``, ``bytes``,
``datetime.date``, ``datetime.datetime`` and ``datetime.timedelta`` (TIME). An implementation
takes the argument values as they come (any of those types) and converts them itself with the
helpers in :mod:`.coerce`, the way MySQL converts an argument to the type the function wants.

Result kinds (``sql/values.py``: INT, DECIMAL, FLOAT, STR, BYTES, DATE, DATETIME, TIME) describe
the column a function produces; ``ret`` is a kind or a function ``ret(arg_kinds, consts)`` of
the argument kinds and of the arguments' values where they are constants (``NOT_CONST``
otherwise), e.g. DATE_ADD is a DATE for a DATE and a day unit, a DATETIME for an hour unit.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

KindSpec = str | Callable[[list[str], list], str]


class _NotConst:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_CONST"


NOT_CONST = _NotConst()  # in ``consts``: this argument is not a constant


@dataclass(slots=True)
class Fn:
    """A scalar function.

    ``strict``: NULL in any argument gives NULL without calling ``impl``.
    ``deterministic``: the same arguments always give the same value (the dataflow may maintain
    it); NOW(), RAND(), UUID() are not.
    ``context``: ``impl`` takes a :class:`Context` as its first argument (session functions).
    ``collation``: ``impl`` takes ``coll=`` (a :class:`~noria_py.sql.collation.Collation`), for
    functions that compare strings (FIELD, FIND_IN_SET, LOCATE, STRCMP, ...).
    ``consts``: positions of arguments that must be constants given as SQL keywords or literals
    (the unit of TIMESTAMPDIFF, a DATE_FORMAT format may vary and is not one).
    """

    name: str
    impl: Callable
    ret: KindSpec
    min_args: int
    max_args: int | None
    strict: bool = True
    deterministic: bool = True
    context: bool = False
    collation: bool = False

    def result_kind(self, arg_kinds: list[str], consts: list | None = None) -> str:
        if not callable(self.ret):
            return self.ret
        return self.ret(arg_kinds, consts if consts is not None else [NOT_CONST] * len(arg_kinds))


@dataclass(slots=True)
class Agg:
    """An aggregate: ``factory()`` returns a fresh accumulator with ``step(*args)``,
    ``inverse(*args)`` (or None when it cannot retract), and ``value()``.

    ``options``: ``arrival_order=True`` when the value depends on the order rows are fed (the
    JSON aggregates); the dataflow maintains only aggregates without it (``maintainable``).
    ``type_name``: the SQL type of the result where the kind does not say it (the BIT_
    aggregates are BIGINT UNSIGNED: MariaDB's type, and how the wire encodes 2**64 - 1).
    """

    name: str
    factory: Callable
    ret: KindSpec
    min_args: int
    max_args: int | None
    options: dict = field(default_factory=dict)

    def result_kind(self, arg_kinds: list[str], consts: list | None = None) -> str:
        if not callable(self.ret):
            return self.ret
        return self.ret(arg_kinds, consts if consts is not None else [NOT_CONST] * len(arg_kinds))

    @property
    def maintainable(self) -> bool:
        """The dataflow can keep it under inserts and deletes: it retracts exactly and its
        value does not depend on the order of the rows."""
        if self.options.get("arrival_order"):
            return False
        return getattr(self.factory(), "inverse", None) is not None


REGISTRY: dict[str, Fn] = {}
AGGREGATES: dict[str, Agg] = {}


def register(
    *names: str,
    ret: KindSpec,
    args: tuple[int, int | None] | int = 1,
    strict: bool = True,
    deterministic: bool = True,
    context: bool = False,
    collation: bool = False,
):
    """Decorator: register ``impl`` under each of ``names`` (MySQL names, any case)."""
    lo, hi = (args, args) if isinstance(args, int) else args

    def deco(impl: Callable) -> Callable:
        for n in names:
            REGISTRY[n.upper()] = Fn(
                n.upper(), impl, ret, lo, hi, strict, deterministic, context, collation
            )
        return impl

    return deco


def register_agg(*names: str, ret: KindSpec, args: tuple[int, int | None] | int = 1, **options):
    lo, hi = (args, args) if isinstance(args, int) else args

    def deco(factory: Callable) -> Callable:
        for n in names:
            AGGREGATES[n.upper()] = Agg(n.upper(), factory, ret, lo, hi, dict(options))
        return factory

    return deco


@dataclass(slots=True)
class Context:
    """What session functions read: filled by the connection that runs the statement."""

    version: str = "8.0.36-noria-py"  # what the wire server reports (server/session.py)
    database: str | None = "noria"
    user: str = "root@localhost"
    connection_id: int = 1
    last_insert_id: int = 0
    row_count: int = -1
    time_zone: str = "SYSTEM"
    found_rows: int = 0
    now: datetime.datetime | None = None  # the statement's start in the session's time zone
    collation: str = "utf8mb4_general_ci"


_MODULES = (
    "strings",
    "numeric",
    "temporal",
    "json_fns",
    "regexp",
    "aggregates",
    "session",
    "casts",
)
_loaded = False


def load_all() -> None:
    """Import every module that registers functions (idempotent)."""
    global _loaded
    if _loaded:
        return
    import importlib

    for m in _MODULES:
        importlib.import_module(f"{__name__}.{m}")
    _loaded = True


_local = threading.local()
_DEFAULT_CONTEXT = Context()


def current_context() -> Context:
    """The Context of the statement running on this thread (a default one outside statements)."""
    return getattr(_local, "ctx", None) or _DEFAULT_CONTEXT


def set_context(ctx: Context | None) -> Context | None:
    """Make ``ctx`` this thread's current Context; returns the previous one."""
    prev = getattr(_local, "ctx", None)
    _local.ctx = ctx
    return prev


class FunctionError(Exception):
    """A call MySQL rejects with an error (not a NULL with a warning): carries errno and text."""

    def __init__(self, msg: str, errno: int, sqlstate: str = "HY000"):
        super().__init__(msg)
        self.errno = errno
        self.sqlstate = sqlstate

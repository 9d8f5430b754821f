"""Session and information functions (VERSION, DATABASE, LAST_INSERT_ID, ...) and ISNULL.

They read the statement's :class:`~noria_py.sql.functions.Context`, so they are never maintained
by the dataflow: a query using one is answered per execution.
"""

from __future__ import annotations

from .. import values as V
from . import Context, register


@register("VERSION", ret=V.STR, args=0, context=True, deterministic=False)
def version(ctx: Context) -> str:
    return ctx.version


@register("DATABASE", "SCHEMA", ret=V.STR, args=0, context=True, deterministic=False, strict=False)
def database(ctx: Context) -> str | None:
    return ctx.database


@register(
    "USER", "SESSION_USER", "SYSTEM_USER", "CURRENT_USER", ret=V.STR, args=0, context=True,
    deterministic=False,
)  # fmt: skip
def user(ctx: Context) -> str:
    return ctx.user


@register("CONNECTION_ID", ret=V.INT, args=0, context=True, deterministic=False)
def connection_id(ctx: Context) -> int:
    return ctx.connection_id


@register("LAST_INSERT_ID", ret=V.INT, args=0, context=True, deterministic=False)
def last_insert_id(ctx: Context) -> int:
    return ctx.last_insert_id


@register("ROW_COUNT", ret=V.INT, args=0, context=True, deterministic=False)
def row_count(ctx: Context) -> int:
    return ctx.row_count


@register("FOUND_ROWS", ret=V.INT, args=0, context=True, deterministic=False)
def found_rows(ctx: Context) -> int:
    # the session's value, bound for the statement (Engine._run)
    return ctx.found_rows


@register("ISNULL", ret=V.INT, args=1, strict=False)
def isnull(v) -> int:
    return 1 if v is None else 0

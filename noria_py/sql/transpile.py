"""MySQL statements for base storage: the tree rewritten so SQLite computes with MySQL's functions.

A query the dataflow does not maintain runs on SQLite. SQLite's own functions differ from MySQL's
(``LENGTH`` counts characters, ``ROUND(2.5e0)`` is 3, dates are text), so before generating SQLite
SQL every function call, CAST and ``INTERVAL`` arithmetic is replaced by a call of the same MySQL
function from ``sql/functions``, registered into the connection under the name ``nf_<NAME>``
(see ``storage/sqlite.py``). A call of a function nothing implements is error 1305 here, before
SQLite could answer it with a meaning of its own.
"""

from __future__ import annotations

from sqlglot import exp

from . import functions as F
from .dialect import OWN_AGGREGATES
from .expr import (
    _interval_parts,
    canonical_call,
    cast_call,
    lookup_function,
    unknown_function,
)

PREFIX = "nf_"

# Aggregates and window functions SQLite computes itself, with MySQL's meaning.
_NATIVE_AGGS = (exp.Count, exp.Min, exp.Max, exp.GroupConcat, exp.AnyValue)
_TYPED_AGG_NAMES = {exp.JSONObjectAgg: "JSON_OBJECTAGG"}
# sqlglot classes SQLite evaluates as MySQL does (conditionals; the compiler keeps these).
_NATIVE = (exp.Coalesce, exp.If, exp.Nullif, exp.Case)


def _call(name: str, args: list[exp.Expression]) -> exp.Expression:
    args = [
        _replace(a)
        if isinstance(a, exp.Anonymous) and not str(a.this).upper().startswith(PREFIX.upper())
        else a
        for a in args
    ]
    return exp.Anonymous(this=PREFIX + name, expressions=args)


def rewrite(tree: exp.Expression) -> exp.Expression:
    """A copy of ``tree`` whose function calls are the registered MySQL functions."""
    F.load_all()
    return _rewrite(tree.copy())


def _rewrite(node: exp.Expression) -> exp.Expression:
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(key, _rewrite(value))
        elif isinstance(value, list):
            node.set(key, [_rewrite(v) if isinstance(v, exp.Expression) else v for v in value])
    return _replace(node)


def _replace(node: exp.Expression) -> exp.Expression:
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

            raise NotSupportedError(f"This version doesn't yet support 'CAST to {node.to.sql()}'")
        lookup_function(call[0], len(call[1]))
        return _call(*call)
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
            return _call(name, list(node.expressions))
        if isinstance(node.parent, exp.Window):
            return node  # ROW_NUMBER() and friends: SQLite's window functions
        call = canonical_call(node)
        lookup_function(call[0], len(call[1]))
        return _call(*call)
    if isinstance(node, _NATIVE) or isinstance(node, exp.AggFunc):
        return node
    if isinstance(node, exp.Func):
        call = canonical_call(node)
        if call is None:
            return node
        name, args = call
        if name not in F.REGISTRY:
            raise unknown_function(name)
        lookup_function(name, len(args))
        return _call(name, args)
    return node


__all__ = ["rewrite", "PREFIX", "OWN_AGGREGATES"]

"""Views inlined as derived tables, for a query base storage answers.

A proxied SELECT that names a view reads the view's definition as a derived table
(``FROM (SELECT ...) AS v``), so the whole statement, the view's body included, is transpiled
with MySQL's semantics (collations, DECIMAL arithmetic and sums, MySQL's functions) and its
result columns are typed from the view's query. SQLite's own copy of a view
(``Engine._sqlite_view``) is plain SQLite and is read only where a view cannot be inlined: a
CTE of the same name anywhere in the statement, or views nested deeper than ``MAX_DEPTH``.
"""

from __future__ import annotations

from sqlglot import exp

MAX_DEPTH = 32  # views over views: MySQL refuses a view that reads itself (1462)


def _named_views(ast: exp.Expression, views: dict, shadowed: set) -> list[exp.Table]:
    out = []
    for t in ast.find_all(exp.Table):
        low = t.name.lower()
        if low and low in views and low not in shadowed and not t.db and not t.catalog:
            if isinstance(t.parent, exp.Schema):
                continue  # an INSERT's column list, not a read
            out.append(t)
    return out


def inline_views(ast: exp.Expression, views: dict) -> exp.Expression:
    """``ast`` (not changed) with every view it reads replaced by its definition, or ``ast``
    itself when it reads none. ``views``: lower-case engine name to the view's query AST."""
    if not views:
        return ast
    shadowed = {c.alias.lower() for c in ast.find_all(exp.CTE)}
    if not _named_views(ast, views, shadowed):
        return ast
    ast = ast.copy()
    for _ in range(MAX_DEPTH):
        found = _named_views(ast, views, shadowed)
        if not found:
            break
        for t in found:
            alias = t.alias or t.name
            body = views[t.name.lower()].copy()
            shadowed |= {c.alias.lower() for c in body.find_all(exp.CTE)}
            sub = exp.Subquery(
                this=body, alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True))
            )
            t.replace(sub)
    return ast

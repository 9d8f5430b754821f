"""Databases as namespaces: how a table reference in a statement becomes the engine's name.

Every database is its own namespace of tables and views. The engine keeps one flat set of names:
a table ``t`` of the *home* database (``noria``, the one a connection starts in) is ``t``, as it
always was, and a table ``t`` of database ``shop`` is ``shop.t``. MySQL refuses ``.`` in table
names (1103), so the two never collide. Statements are rewritten to these names once, when they
are prepared (:func:`qualify`), so the planner, the dataflow, base storage and the catalog see
only engine names; a statement's meaning therefore depends on the connection's current
database, and the statement cache is keyed by it.

What is shown to users (``SHOW TABLES``, ``information_schema``, ``SHOW CREATE TABLE``) splits
an engine name back into its database and table (:func:`split`).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from ..errors import ProgrammingError
from .dialect import DIALECT

HOME = "noria"
INFORMATION_SCHEMA = "information_schema"


def split(name: str) -> tuple[str | None, str]:
    """``(database, table)`` of an engine name; database ``None`` is the home database."""
    db, dot, table = name.partition(".")
    return (db, table) if dot else (None, name)


def engine_name(db: str | None, table: str) -> str:
    return table if db is None else f"{db}.{table}"


def bare(name: str) -> str:
    """The table part of an engine name (what MySQL derives constraint names from)."""
    return split(name)[1]


def no_database() -> ProgrammingError:
    return ProgrammingError("No database selected", 1046, "3D000")


def unknown_database(name: str) -> ProgrammingError:
    return ProgrammingError(f"Unknown database '{name}'", 1049, "42000")


def bad_table_name(name: str) -> ProgrammingError:
    return ProgrammingError(f"Incorrect table name '{name}'", 1103, "42000")


# A table named by these parents is a target that takes no alias (an INSERT's table, the table a
# DDL statement names, a foreign key's parent).
_NO_ALIAS = (exp.Schema, exp.Create, exp.Drop, exp.Insert, exp.Reference, exp.AlterRename,
             exp.Alter, exp.TruncateTable, exp.Describe, exp.Show, exp.OnProperty)  # fmt: skip


def qualify(ast: exp.Expression, current: str | None, resolve: Callable[[str], str | None]) -> bool:
    """Rewrite every table reference of ``ast`` to its engine name, in place.

    ``current`` is the connection's database (``None``: the home database; ``""``: none, after
    its database was dropped). ``resolve(db)`` gives a database's canonical name (``None`` for
    the home database) or raises 1049. A table of another database than home gets its own name
    as alias where it is read (``FROM shop.t`` reads as ``FROM `shop.t` AS t``), so columns
    qualified by the table name keep resolving. Returns whether anything changed."""
    changed = False
    ctes = {c.alias.lower() for c in ast.find_all(exp.CTE) if c.alias}
    creating = {id(t) for t in _created_names(ast)}
    # tables read without an alias under the same name from two databases in one FROM clause
    # (``FROM a.t JOIN t``): each is known by its full name, and a column qualified by the bare
    # name is ambiguous (1052), as in MySQL. The same name in a subquery is another scope
    # (``FROM t WHERE t.x IN (SELECT x FROM t)``).
    seen: dict[tuple[int, str], int] = {}
    for t in ast.find_all(exp.Table):
        if (
            not t.alias
            and not isinstance(t.parent, _NO_ALIAS)
            and isinstance(t.this, exp.Identifier)
            and not isinstance(t.parent, exp.Delete)  # a DELETE's targets name FROM's tables
        ):
            scope = t.find_ancestor(exp.Select, exp.Update, exp.Delete)
            key = (id(scope), t.name.lower())
            seen[key] = seen.get(key, 0) + 1
    twice = {n for (_scope, n), k in seen.items() if k > 1}
    # a foreign key's parent without a database is in its child's database
    owner = (
        ast.this.this
        if isinstance(ast, exp.Create) and isinstance(ast.this, exp.Schema)
        else ast.this
    )
    owner_db = (
        owner.text("db")
        if isinstance(ast, (exp.Create, exp.Alter)) and isinstance(owner, exp.Table)
        else ""
    )
    for t in list(ast.find_all(exp.Table)):
        ident = t.this
        if not isinstance(ident, exp.Identifier):
            continue
        name = ident.this
        db = t.text("db")
        if (
            not db
            and owner_db
            and isinstance(t.parent, (exp.Reference, exp.Schema))
            and t is not owner
        ):
            if isinstance(t.parent, exp.Reference) or isinstance(t.parent.parent, exp.Reference):
                db = owner_db
        if isinstance(t.parent, exp.Drop) and (t.parent.args.get("kind") or "").upper() == "INDEX":
            if t.arg_key != "cluster":  # DROP INDEX name ON t: the first is the index's name
                continue
        if isinstance(t.parent, exp.Delete) and t.arg_key == "tables":
            # DELETE a, b FROM ...: the targets name tables of the FROM clause as it reads them
            if db:
                if name.lower() in twice:
                    target = _known_or_missing(resolve, db)
                    t.set("this", exp.Identifier(this=engine_name(target, name), quoted=True))
                t.set("db", None)
                changed = True
            continue
        if not db:
            if id(t) in creating and "." in name:
                raise bad_table_name(name)
            if name.lower() in ctes or "." in name:
                continue
            if name.upper() == "DUAL" and not ident.quoted:
                continue
            if current is None:
                continue
            if current == "":
                raise no_database()
            target: str | None = current
        else:
            if db.lower() == INFORMATION_SCHEMA:
                continue
            if "." in name:
                raise bad_table_name(name)
            if isinstance(t.parent, exp.AlterRename):
                target = resolve(db)  # 1049: nowhere to move it
            else:  # (CREATE checks its database itself, after what MySQL checks first)
                target = _known_or_missing(resolve, db)
            t.set("db", None)
            t.set("catalog", None)
            changed = True
        if target is None:
            continue
        t.set("this", exp.Identifier(this=engine_name(target, name), quoted=True))
        changed = True
        if not t.alias and not isinstance(t.parent, _NO_ALIAS) and name.lower() not in twice:
            t.set("alias", exp.TableAlias(this=exp.Identifier(this=name, quoted=True)))
    for col in ast.find_all(exp.Column):
        table = col.table
        if col.args.get("db") is not None:
            if table.lower() in twice:
                target = _known_or_missing(resolve, col.text("db"))
                col.set("table", exp.Identifier(this=engine_name(target, table), quoted=True))
            col.set("db", None)
            changed = True
        elif table and table.lower() in twice:
            raise ProgrammingError(
                f"Column '{table}.{col.name}' in field list is ambiguous", 1052, "23000"
            )
    return changed


def _known_or_missing(resolve: Callable[[str], str | None], db: str) -> str | None:
    """A database to read a table from. An unknown one names a table that does not exist
    (1146 or 1051 where it is used, as MySQL reports it), not error 1049."""
    try:
        return resolve(db)
    except ProgrammingError as e:
        if e.errno != 1049:
            raise
        return db


def _created_names(ast: exp.Expression) -> list:
    """The Table nodes a CREATE TABLE/VIEW or a RENAME TO names (they may not contain '.')."""
    out = []
    if isinstance(ast, exp.Create):
        target = ast.this
        if isinstance(target, exp.Schema):
            target = target.this
        if isinstance(target, exp.Table):
            out.append(target)
    for r in ast.find_all(exp.AlterRename):
        if isinstance(r.this, exp.Table):
            out.append(r.this)
    return out


def shown_sql(query: exp.Expression) -> str:
    """A statement over engine names as MySQL shows a view's definition: every table named
    with its database (``db`.`t``), under the alias it had."""
    shown = query.copy()
    for t in shown.find_all(exp.Table):
        ident = t.this
        if not isinstance(ident, exp.Identifier) or t.args.get("db") is not None:
            continue
        db, table = split(ident.this)
        t.set("this", exp.Identifier(this=table, quoted=True))
        t.set("db", exp.Identifier(this=db or HOME, quoted=True))
        if t.alias and t.alias.lower() == table.lower():
            t.set("alias", None)
    return shown.sql(DIALECT)

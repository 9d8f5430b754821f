"""Views: CREATE VIEW (compiled into the dataflow when it can be, kept as SQLite's view
always), DROP VIEW, and checking views again after the tables under them change.
"""

from __future__ import annotations

import itertools
import sqlite3

from sqlglot import exp

from .. import errors as E
from ..result import Result
from ..sql import names as N
from ..sql.dialect import DIALECT
from ..sql.parse import item_name, parse
from ..storage.sqlite import q
from .catalog import _db_qualified, _exists_note
from .reads import _selects_star
from .schema import _quote_ident


def _view_column_list(ast: exp.Create) -> exp.Create:
    """``CREATE VIEW v (a, b) AS SELECT x, y ...`` as ``CREATE VIEW v AS SELECT x AS a, y AS
    b ...`` (a UNION's first SELECT names its columns), as MariaDB keeps such a view; 1353 when
    the counts differ, 1060 for a name given twice."""
    names = [c.name for c in ast.this.expressions]
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise E.ProgrammingError(f"Duplicate column name '{n}'", 1060, "42S21")
        seen.add(n.lower())
    ast = ast.copy()
    query = ast.expression
    first = query
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if not isinstance(first, exp.Select):
        raise E.NotSupportedError("This version doesn't yet support 'a view column list here'")
    if any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in first.expressions
    ):
        raise E.NotSupportedError(
            "This version doesn't yet support 'a view column list over SELECT *'"
        )
    if len(first.expressions) != len(names):
        raise E.ProgrammingError(
            "View's SELECT and view's field list have different column counts", 1353, "HY000"
        )
    first.set(
        "expressions",
        [
            exp.alias_(e.this if isinstance(e, exp.Alias) else e, n, quoted=True)
            for e, n in zip(first.expressions, names)
        ],
    )
    ast.set("this", ast.this.this)
    return ast


def _output_names(query: exp.Expression) -> list[str] | None:
    """The column names a query's select list gives, when they are plain (no ``*``)."""
    if isinstance(query, exp.Subquery):
        return _output_names(query.this)
    if isinstance(query, exp.SetOperation):
        return _output_names(query.this)
    if not isinstance(query, exp.Select) or _selects_star(query):
        return None
    return [item_name(e) for e in query.expressions]


def _wrap_star(name: str, query: exp.Expression, columns: list[str]):
    """The view's query with its column list fixed: (query, CREATE VIEW text)."""
    seen: set[str] = set()
    for c in columns:
        if c.lower() in seen:
            raise E.ProgrammingError(f"Duplicate column name '{c}'", 1060, "42S21")
        seen.add(c.lower())
    outer = ", ".join(f"`__v`.{_quote_ident(c)} AS {_quote_ident(c)}" for c in columns)
    text = f"SELECT {outer} FROM ({query.sql(DIALECT)}) AS `__v`"
    sql = f"CREATE VIEW {_quote_ident(name)} AS {text}"
    ast, _ = parse(sql)
    return ast.expression, sql


_CHECKS = itertools.count(1)  # the scratch names of views checked before their own name


def _leftmost_select(query: exp.Expression):
    while isinstance(query, (exp.Subquery, exp.SetOperation)):
        query = query.this
    return query if isinstance(query, exp.Select) else None


def _duplicate_name(query: exp.Expression) -> str | None:
    """The first column name a view's select list gives twice (case-insensitively), counting
    only names the query spells (a column or an alias): an expression's generated name is made
    unique instead, as MySQL does. None when there is none."""
    sel = _leftmost_select(query)
    if sel is None:
        return None
    seen: set[str] = set()
    for e in sel.expressions:
        if isinstance(e, exp.Alias):
            spelled = e.alias
        elif isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            spelled = e.name
        else:
            continue
        if spelled.lower() in seen:
            return spelled
        seen.add(spelled.lower())
    return None


def _renamed_apart(query: exp.Expression) -> exp.Expression:
    """``query`` with every select item of its leftmost SELECT given a name of its own (to
    check the rest of it before a duplicate name is reported)."""
    query = query.copy()
    sel = _leftmost_select(query)
    sel.set(
        "expressions",
        [
            exp.alias_(e.this if isinstance(e, exp.Alias) else e, f"__noria_col_{i}")
            for i, e in enumerate(sel.expressions)
        ],
    )
    return query


class ViewsMixin:
    """Views: a part of ``Engine`` (engine/core.py).

    State it owns: ``views``, ``view_names``, ``view_sql``.
    Calls into other parts: ``_prepare_select`` (reads), the catalog (``_ddl_guard``,
    ``_database_of``, ``_remove_query``).
    """

    def _revalidate_views(self) -> None:
        """After a table changed: compile every view that is not installed (its table changed
        under it, or it read what did not exist) again; one that no longer compiles stays
        defined and reports its error when read, as a MySQL view does. (A view restored and
        not yet compiled stays so: ``_defer_view``.)"""
        for low, name in list(self.view_names.items()):
            if name in self.queries or low in self._deferred_views:
                continue
            self._reload_view(low)

    def _reload_view(self, low: str) -> None:
        """Compile and install the defined view ``low`` again from its definition."""
        name = self.view_names.pop(low)
        sql = self.view_sql.pop(low)
        self.views.pop(low, None)
        ast, _ = parse(sql)
        self._load_view(ast, sql, name)

    def _defer_view(self, ast, sql: str, name: str) -> None:
        """A view of the catalog, restored when a database is opened: defined (its name and
        definition, as SHOW TABLES, SHOW CREATE VIEW and the queries over it read them), not
        compiled. A query over a view inlines its definition and plans its own state (partial
        where it can be), so nothing needs the view's own operators, whose full state opening
        would compute for every view. They are installed when something asks for what only
        they tell (``_ensure_views``: the information schema's columns of a view, the cache
        commands); a view that no longer compiles reports its error when read, as before."""
        if isinstance(ast.this, exp.Schema):
            ast = _view_column_list(ast)
            sql = ast.sql(DIALECT)
        self._define_view(ast, sql, name)
        self._deferred_views.add(name.lower())

    def _define_view(self, ast, sql: str, name: str) -> None:
        """Register view ``name`` by its definition only (nothing compiled)."""
        low = name.lower()
        self.views[low] = ast.expression
        self.view_sql[low] = sql.strip()
        self.view_names[low] = name

    def _ensure_views(self) -> None:
        """Compile and install every view restored without it (``_defer_view``), in the
        catalog's order."""
        deferred = self._deferred_views
        if not deferred:
            return
        for low in [v for v in self.view_names if v in deferred]:
            deferred.discard(low)
            self._reload_view(low)
        deferred.clear()

    def _load_view(self, ast, sql: str, name: str) -> None:
        try:
            self._create_view(ast, sql, restoring=True)
        except E.Error:
            # what the view reads was dropped: keep it; reading it reports the error
            self._define_view(ast, sql, name)

    def _create_view(self, ast: exp.Create, sql: str, restoring: bool = False) -> Result:
        if isinstance(ast.this, exp.Schema):
            # CREATE VIEW v (a, b) AS ...: the list names the SELECT's columns, as aliases
            ast = _view_column_list(ast)
            sql = ast.sql(DIALECT)
        name = ast.this.name
        low = name.lower()
        query = ast.expression
        taken = low in self.views or low in self.storage.schemas
        if taken and restoring:
            raise E.ProgrammingError(
                f"Table '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        if query.find(exp.Placeholder):
            raise E.ProgrammingError(
                "View's SELECT contains a variable or parameter", 1351, "HY000"
            )
        if not restoring:
            self._ddl_guard()
            if _selects_star(query):
                # as MySQL does, ``*`` stands for the columns there are now: the view keeps
                # them through a later ALTER TABLE (and becomes invalid when one goes)
                query = query.copy()
                for sel in list(query.find_all(exp.Select)):
                    self._expand_select_star(sel)
                sql = f"CREATE VIEW {_quote_ident(name)} AS {query.sql(DIALECT)}"
        dup = None if restoring else _duplicate_name(query)
        if dup is not None:
            # MySQL checks the SELECT's tables, columns and functions first
            self._check_view_query(_renamed_apart(query))
            raise E.ProgrammingError(f"Duplicate column name '{dup}'", 1060, "42S21")
        if taken:
            # as MySQL does, the SELECT is checked first (its tables, columns, functions),
            # then the name; an OR REPLACE that fails leaves the view it would replace
            self._check_view_query(query)
            if ast.args.get("replace") and low in self.views:
                self._drop_view(name)
            elif ast.args.get("exists"):  # MariaDB's CREATE VIEW IF NOT EXISTS
                return _exists_note(name)
            elif ast.args.get("replace"):
                raise E.ProgrammingError(
                    f"'{N.split(name)[0] or N.HOME}.{N.bare(name)}' is not of type 'VIEW'",
                    1347,
                    "HY000",
                )
            else:
                raise E.ProgrammingError(
                    f"Table '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
                )
        # validate: the view's query must compile or be answerable on base storage
        self.views[low] = query
        self.view_sql[low] = sql.strip()
        self.view_names[low] = name
        try:
            prep = self._prepare_view(name, restoring)
            if not restoring:
                try:
                    self._database_of(name)
                except E.Error:
                    self._remove_query(prep.entry.name)
                    raise
            entry = prep.entry
            self.queries.pop(entry.name, None)
            entry.name = name
            self.queries[name] = entry
            if not restoring:
                self._sqlite_view(name, query)
                if _selects_star(query):  # a star this engine could not expand (see above)
                    query, sql = _wrap_star(name, query, self._view_columns(prep))
                    self.views[low] = query
                    self.view_sql[low] = sql
                    self._sqlite_view(name, query)
            entry.sql = sql.strip()
            if not restoring:
                self.storage.begin()
                self.storage.catalog_add("view", name, sql.strip())
                self.storage.commit()
        except BaseException:
            self.views.pop(low, None)
            self.view_sql.pop(low, None)
            self.view_names.pop(low, None)
            raise
        return Result(rowcount=0)

    def _prepare_view(self, name: str, restoring: bool = False):
        """``SELECT * FROM name`` of the view ``name`` just registered, prepared: its query
        compiled (or answerable by base storage), else the SELECT's error."""
        select_sql = f"SELECT * FROM {_quote_ident(name)}"
        ast2, n = parse(select_sql)
        try:
            return self._prepare_select(ast2, n, select_sql, view=True)
        except E.ProgrammingError as e:
            inner = getattr(e, "inner", None)
            if inner is None or restoring:
                raise
            raise inner from None

    def _check_view_query(self, query) -> None:
        """Raise the error a view of ``query`` would meet when created (a missing table or
        column, an unknown function...), by preparing it as a view of a name nothing else
        uses, then forgetting it."""
        name = f"__noria_view_check_{next(_CHECKS)}"
        low = name.lower()
        self.views[low] = query
        self.view_sql[low] = f"CREATE VIEW {_quote_ident(name)} AS {query.sql(DIALECT)}"
        self.view_names[low] = name
        try:
            prep = self._prepare_view(name)
            self._remove_query(prep.entry.name)
        finally:
            self.views.pop(low, None)
            self.view_sql.pop(low, None)
            self.view_names.pop(low, None)

    def _source_columns(self, item) -> tuple[str, list[str]] | None:
        """(qualifier, column names) of one FROM item, when they are known."""
        if isinstance(item, exp.Table) and not item.db:
            low = item.name.lower()
            if low in self.storage.schemas:
                return item.alias_or_name, [c.name for c in self.storage.schemas[low].columns]
            if low in self.views:
                names = _output_names(self.views[low])
                return (item.alias_or_name, names) if names is not None else None
            return None
        if isinstance(item, exp.Subquery) and item.alias:
            names = _output_names(item.this)
            return (item.alias, names) if names is not None else None
        return None

    def _expand_select_star(self, sel: exp.Select) -> None:
        """Write the select list's ``*`` and ``t.*`` out as the columns they stand for now
        (left as they are when a source's columns are not known)."""
        if not any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in sel.expressions
        ):
            return
        frm = sel.args.get("from_")
        if frm is None:
            return
        joins = sel.args.get("joins") or []
        if any(
            j.args.get("using") or "NATURAL" in str(j.args.get("method") or "").upper()
            for j in joins
        ):
            return  # the merged columns of USING and NATURAL: not expanded here
        sources = []
        for item in [frm.this] + [j.this for j in joins]:
            src = self._source_columns(item)
            if src is None:
                return
            sources.append(src)
        out = []
        for e in sel.expressions:
            if isinstance(e, exp.Star):
                srcs = sources
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                srcs = [s for s in sources if s[0].lower() == e.table.lower()]
                if not srcs:
                    return
            else:
                out.append(e)
                continue
            for qual, names in srcs:
                out.extend(exp.column(n, table=qual, quoted=True) for n in names)
        sel.set("expressions", out)

    def _sqlite_view(self, name: str, query) -> None:
        """The view's copy in base storage, which proxied queries over it read."""
        try:
            self.storage.conn.execute(f"DROP VIEW IF EXISTS {q(name)}")
            self.storage.conn.execute(
                f"CREATE VIEW IF NOT EXISTS {q(name)} AS {query.sql(dialect='sqlite')}"
            )
        except sqlite3.Error:
            pass  # only proxied queries over this view need the SQLite copy

    def _view_columns(self, prep) -> list[str]:
        cq = prep.entry.compiled
        if cq is not None:
            return list(cq.names[: cq.visible] if cq.visible else cq.names)
        cur = self.storage.conn.execute(f"SELECT * FROM ({prep.sql}) LIMIT 0")
        return [d[0] for d in cur.description]

    def _drop_view(self, name: str) -> None:
        low = name.lower()
        real = self.view_names.get(low, name)
        self._remove_query(real)
        # every query that read the view (its definition inlined, also through other views)
        # goes: a view created again under this name must not answer with the old definition
        for qname, entry in list(self.queries.items()):
            if entry.compiled is None or low in entry.compiled.views:
                self._remove_query(qname)
        self.views.pop(low, None)
        self.view_sql.pop(low, None)
        self.view_names.pop(low, None)
        self._deferred_views.discard(low)
        try:
            self.storage.conn.execute(f"DROP VIEW IF EXISTS {q(real)}")
        except sqlite3.Error:
            pass
        self.storage.begin()
        self.storage.catalog_remove("view", real)
        self.storage.commit()

    def _drop_views(self, ast: exp.Drop) -> Result:
        self._ddl_guard()
        missing = []
        for t in ast.expressions if ast.expressions else ast.args.get("tables") or []:
            if t.name.lower() not in self.views:
                if ast.args.get("exists"):
                    missing.append(_db_qualified(t.name))
                    continue
                raise E.ProgrammingError(f"Unknown table '{t.name}'", E.ER_BAD_TABLE_ERROR, "42S02")
            self._drop_view(t.name)
        if missing:  # MariaDB's note for views that were not there
            return Result(
                rowcount=0, conditions=[("Note", 4092, f"Unknown VIEW: '{','.join(missing)}'")]
            )
        return Result(rowcount=0)

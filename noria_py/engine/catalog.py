"""The catalog and DDL: databases, CREATE/ALTER/DROP/RENAME/TRUNCATE of tables, indexes and
views, and restoring the catalog when a file is opened.
"""

from __future__ import annotations

import re

from sqlglot import exp

from .. import errors as E
from ..result import Result
from ..sql import names as N
from ..sql import values as V
from ..sql.dialect import DIALECT
from ..sql.parse import item_name, parse
from ..storage.sqlite import ColumnDef, TableSchema
from .reads import _select_columns
from .schema import (
    _collation_name,
    _column_collations,
    _schema_from_create,
    current_collation_name,
    show_create_table,
)
from .transactions import Txn


def _db_qualified(name: str) -> str:
    """An engine table name as MySQL's notes name it: ``database.table``."""
    db, table = N.split(name)
    return f"{db or N.HOME}.{table}"


def _exists_note(name: str) -> Result:
    """``CREATE ... IF NOT EXISTS`` of a table or view that exists: nothing, and a note."""
    msg = f"Table '{N.bare(name)}' already exists"
    return Result(rowcount=0, conditions=[("Note", E.ER_TABLE_EXISTS_ERROR, msg)])


_ALTER_HEAD = re.compile(
    r"\A\s*alter\s+table\s+(?:(?P<db>`(?:[^`]|``)+`|[\w$]+)\s*\.\s*)?"
    r"(?P<t>`(?:[^`]|``)+`|[\w$]+)\s+(?P<rest>.*?)\s*;?\s*\Z",
    re.I | re.S,
)
_ADD_CHECK = re.compile(
    r"\A\s*add\s+(?:constraint\s+(?P<n>`(?:[^`]|``)+`|[\w$]+)\s+)?check\s*(?P<e>\(.*\))\s*\Z",
    re.I | re.S,
)


def _split_top(text: str) -> list[str]:
    """Split at commas outside parentheses and quotes."""
    parts, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _alter_add_check(sql: str):
    """An ALTER TABLE holding ``ADD [CONSTRAINT name] CHECK (expr)`` (which the parser does
    not read), as the ``exp.Alter`` the other ALTER actions come in; None when some part is
    not understood."""
    import sqlglot

    head = _ALTER_HEAD.match(sql)
    if head is None:
        return None

    def ident(text):
        return text[1:-1].replace("``", "`") if text.startswith("`") else text

    table = ident(head.group("t"))
    actions, options = [], []
    for part in _split_top(head.group("rest")):
        m = _ADD_CHECK.match(part)
        if m is not None:
            expr, _n = parse(f"SELECT {m.group('e')}")
            check = exp.CheckColumnConstraint(this=expr.expressions[0].unnest())
            item = (
                exp.Constraint(this=exp.to_identifier(ident(m.group("n"))), expressions=[check])
                if m.group("n")
                else check
            )
            actions.append(exp.AddConstraint(expressions=[item]))
            continue
        try:
            one = sqlglot.parse_one(f"ALTER TABLE `_` {part}", read="mysql")
        except Exception:  # noqa: BLE001 - sqlglot raises assorted errors on odd input
            return None
        if not isinstance(one, exp.Alter):
            return None
        actions.extend(one.args.get("actions") or [])
        options.extend(one.args.get("options") or [])
    target = exp.Table(this=exp.Identifier(this=table, quoted=True))
    if head.group("db"):
        target.set("db", exp.Identifier(this=ident(head.group("db")), quoted=True))
    return exp.Alter(this=target, kind="TABLE", actions=actions, options=options)


def _ctas_names(query, n: int) -> list[str]:
    """A SELECT's output column names, as MySQL names them (the alias, else the text)."""
    names = [
        item_name(e)
        if not (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        else e.sql(DIALECT)
        for e in (query.expressions if isinstance(query, exp.Select) else [])
    ]
    if len(names) != n or any(not x for x in names):
        raise E.NotSupportedError(
            "This version doesn't yet support 'CREATE TABLE ... AS SELECT' of this select list"
        )
    if len({x.lower() for x in names}) < len(names):
        dup = next(x for x in names if sum(y.lower() == x.lower() for y in names) > 1)
        raise E.ProgrammingError(f"Duplicate column name '{dup}'", 1060, "42S21")
    return names


def _computed_column(name: str, kind: str, values: list, scale, item):
    """The column CREATE TABLE ... AS SELECT makes for a computed expression: a type that
    holds every value of its kind exactly (BIGINT, DECIMAL(65, MySQL's scale for the
    expression), DOUBLE, LONGTEXT, DATE, DATETIME, TIME); NOT NULL for what MySQL knows is
    never NULL (a constant, COUNT)."""
    present = [v for v in values if v is not None]
    if kind == V.INT:
        text = "BIGINT"
    elif kind == V.DECIMAL:
        if scale is None:  # not typed by the compiler: the values' own
            scale = max((max(0, -v.as_tuple().exponent) for v in present), default=0)
        if scale > 30:
            raise E.NotSupportedError(
                f"This version doesn't yet support 'a computed DECIMAL column of scale {scale}'"
            )
        text = f"DECIMAL(65,{scale})"
    elif kind == V.FLOAT:
        # MAX(f) of a FLOAT column f is a FLOAT (holding its values exactly); others DOUBLE
        single = kind.__class__ is V.FloatKind and kind.single and kind.dec is None
        text = "FLOAT" if single else "DOUBLE"
    elif kind == V.STR:
        text = "LONGTEXT"
    elif kind in (V.DATE, V.DATETIME, V.TIME):
        text = {V.DATE: "DATE", V.DATETIME: "DATETIME(6)", V.TIME: "TIME(6)"}[kind]
    else:
        raise E.NotSupportedError(
            f"This version doesn't yet support 'CREATE TABLE ... AS SELECT' of column '{name}' "
            "(NULL or of no type)"
        )
    ctype = V.column_type_from_sqlglot(exp.DataType.build(text, dialect="mysql"))
    inner = item.this if isinstance(item, exp.Alias) else item
    never_null = isinstance(inner, exp.Count) or (
        isinstance(inner, exp.Literal) and not isinstance(inner, exp.Null)
    )
    return ColumnDef(name, ctype, nullable=not never_null)


class CatalogMixin:
    """The catalog and DDL: a part of ``Engine`` (engine/core.py).

    State it owns: ``databases``, ``db_collations``, the tables' schemas in
    ``storage`` and the catalog rows kept there.
    Calls into other parts: views (``_drop_view``, ``_load_view``, ``_revalidate_views``), the
    write path (``_write``, ``_drain``, ``_catch_up_writer``), transactions (``_commit``,
    ``_catch_up``, ``_writer``), the row checks of ``InsertsMixin``, ``_proxy`` (reads),
    ``_schema`` and ``_forget_statements`` (core).
    """

    # --- databases ---------------------------------------------------------------------------
    def _qualify(self, ast: exp.Expression, db: str | None) -> bool:
        """Rewrite the statement's table references to engine names (sql/names.py)."""
        if isinstance(ast, exp.Use) or (
            isinstance(ast, (exp.Create, exp.Drop))
            and (ast.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA")
        ):
            return False  # they name a database, not a table
        return N.qualify(ast, db, self._resolve_db)

    def _resolve_db(self, name: str) -> str | None:
        """A database's canonical name (None for home), or 1049."""
        low = name.lower()
        if low == N.HOME:
            return None
        found = self.databases.get(low)
        if found is None:
            raise N.unknown_database(name)
        return found

    def database_names(self) -> list[str]:
        """Every database, as SHOW DATABASES lists them (information_schema included)."""
        return sorted([N.HOME, N.INFORMATION_SCHEMA, *self.databases.values()])

    def use(self, name: str, txn: Txn | None = None) -> str:
        """USE name: the connection's current database (1049 when it does not exist)."""
        with self.lock:
            if name.lower() == N.INFORMATION_SCHEMA:
                raise E.NotSupportedError("USE information_schema is not supported (qualify it)")
            (txn or self._txn_default).database = self._resolve_db(name)
            return self.current_database(txn) or ""

    def current_database(self, txn: Txn | None = None) -> str | None:
        """What DATABASE() returns for the connection (None after its database was dropped)."""
        db = (txn or self._txn_default).database
        return N.HOME if db is None else (db or None)

    def _create_database(self, ast: exp.Create) -> Result:
        name = ast.this.name or ast.this.text("db")  # CREATE SCHEMA names it as a qualifier
        low = name.lower()
        if not name or "." in name or "/" in name or "\\" in name or name != name.rstrip():
            raise E.ProgrammingError(f"Incorrect database name '{name}'", 1102, "42000")
        if low in (N.HOME, N.INFORMATION_SCHEMA) or low in self.databases:
            msg = f"Can't create database '{name}'; database exists"
            if ast.args.get("exists"):
                return Result(rowcount=0, conditions=[("Note", 1007, msg)])
            raise E.ProgrammingError(msg, 1007, "HY000")
        from ..sql import collation as C

        coll = None
        for prop in (ast.args.get("properties") or exp.Properties()).expressions:
            if isinstance(prop, exp.CollateProperty):
                cname = _collation_name(prop)
                try:
                    coll = C.get(cname).name
                except KeyError:
                    raise E.ProgrammingError(
                        f"Unknown collation: '{cname}'", 1273, "HY000"
                    ) from None
                if coll == C.current().name:
                    coll = None
        self._ddl_guard()
        # a database's default collation: its tables' text columns take it (_column_collations)
        text = f"CREATE DATABASE `{name}`" + (f" COLLATE {coll}" if coll else "")
        self.storage.catalog_add("database", name, text)
        self.storage.commit()
        self.databases[low] = name
        if coll:
            self.db_collations[low] = coll
        return Result(rowcount=1)

    def _drop_database(self, ast: exp.Drop) -> Result:
        """DROP DATABASE: its views, then its tables (children before the parents they
        reference), then the database. The home database cannot be dropped."""
        tables = ast.args.get("tables") or ast.expressions or [ast.this]
        name = tables[0].name or tables[0].text("db")
        low = name.lower()
        if low == N.HOME:
            raise E.NotSupportedError(f"DROP DATABASE of the home database '{N.HOME}'")
        if low == N.INFORMATION_SCHEMA:
            raise E.ProgrammingError(
                f"Access denied for user 'root'@'localhost' to database '{name}'", 1044, "42000"
            )
        canon = self.databases.get(low)
        if canon is None:
            msg = f"Can't drop database '{name}'; database doesn't exist"
            if ast.args.get("exists"):
                return Result(rowcount=0, conditions=[("Note", 1008, msg)])
            raise E.ProgrammingError(msg, 1008, "HY000")
        prefix = canon.lower() + "."
        for v in [n for n in list(self.views) if n.startswith(prefix)]:
            if v in self.views:
                self._drop_view(self.view_names.get(v, v))
        mine = [s.name for s in self.storage.schemas.values() if s.name.lower().startswith(prefix)]
        ordered = self._drop_order(mine)
        if ordered:
            drop = exp.Drop(
                kind="TABLE",
                tables=[exp.Table(this=exp.Identifier(this=n, quoted=True)) for n in ordered],
            )
            self._drop_tables(drop)
        self._ddl_guard()
        self.storage.catalog_remove("database", canon)
        self.storage.commit()
        del self.databases[low]
        for t in self._txns:
            if t.database is not None and t.database.lower() == low:
                t.database = ""
        return Result(rowcount=len(ordered))

    def _drop_order(self, names: list[str]) -> list[str]:
        """Tables in an order DROP TABLE accepts: a table after every table referencing it."""
        left = {n.lower(): n for n in names}
        out = []
        while left:
            progress = False
            for low, n in list(left.items()):
                referenced = any(
                    fk.ref_table.lower() == low
                    for other in left
                    if other != low
                    for fk in self.storage.schemas[other].foreign_keys
                )
                if not referenced:
                    out.append(n)
                    del left[low]
                    progress = True
            if not progress:  # a cycle: one statement drops them together
                out.extend(left.values())
                break
        return out

    # --- DDL ---------------------------------------------------------------------------------
    def _ddl_guard(self):
        self._drain()
        t = self._cur
        if self._writer is not None and self._writer is not t:
            raise E.LockWait()  # DDL waits for the other connection's transaction
        self._commit(t)  # MySQL: DDL commits the open transaction
        self._catch_up()
        self._forget_statements()
        self._unshared.clear()
        self._fk_parents = None

    @staticmethod
    def _check_collations(ast: exp.Expression, other_ok: bool = False) -> None:
        """Each collation named exists (1273). One other than the engine's is kept by CREATE
        TABLE (``other_ok``: base storage declares it, queries comparing the column are
        answered there, see ``_collated``); elsewhere (ALTER TABLE) it is error 1235."""
        from ..sql import collation as C

        cur = C.current()
        for node in ast.find_all(exp.CollateColumnConstraint, exp.CollateProperty):
            name = node.this.name if hasattr(node.this, "name") else str(node.this)
            try:
                coll = C.get(name)
            except KeyError:
                raise E.ProgrammingError(f"Unknown collation: '{name}'", 1273, "HY000") from None
            if coll.name != cur.name and not other_ok:
                raise E.NotSupportedError(
                    f"This version doesn't yet support 'COLLATE {name}' on a database using "
                    f"{cur.name}: start it with that collation (connect(collation='{name}'), "
                    f"noria-py serve --collation {name}) or leave the clause out",
                    1235,
                    "42000",
                )

    def _create_table_like(self, ast: exp.Create, like: exp.Table) -> Result:
        """CREATE TABLE b LIKE a: a's columns, keys and CHECKs (not its FOREIGN KEYs, nor its
        rows), as MySQL copies them."""
        import dataclasses

        src = self._schema(like.name)
        name = ast.this.this.name if isinstance(ast.this, exp.Schema) else ast.this.name
        copy = dataclasses.replace(
            src,
            name=name,
            columns=[dataclasses.replace(c) for c in src.columns],
            foreign_keys=[],
            created_indexes={},
        )
        text = show_create_table(copy, current_collation_name())
        if ast.args.get("exists"):
            text = text.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)
        new_ast, _ = parse(text)
        return self._create_table(new_ast, text)

    def _create_table_as(self, ast: exp.Create, sql: str) -> Result:
        """CREATE TABLE b AS SELECT ...: a table of the query's columns, holding its rows. A
        plain column of a base table keeps its type, NOT NULL and DEFAULT, as in MySQL. A
        computed column gets a type that holds its values exactly (``_computed_column``):
        MySQL derives the width from the expression (``bigint(12)``, ``decimal(15,2)``,
        ``varchar(11)``), this engine the kind and, for DECIMAL, the scale of the values, with
        the widest precision and text length, so the stored values are MySQL's while
        DESCRIBE may show a wider type."""
        import dataclasses

        query = ast.expression
        if isinstance(ast.this, exp.Schema):
            raise E.NotSupportedError(
                "This version doesn't yet support 'CREATE TABLE ... (columns) SELECT'"
            )
        name = ast.this.name
        if name.lower() in self.storage.schemas or name.lower() in self.views:
            if ast.args.get("exists"):
                return _exists_note(name)
            raise E.ProgrammingError(
                f"Table '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        if self._cur.strict:
            from .inserts import _select_strict_check

            check = _select_strict_check(self, query)
            if check is not None:
                check(())  # strict mode: what MySQL would refuse the statement for (1292, 1365)
        proxy = self._proxy(query, 0, query.sql(DIALECT))
        rows = proxy.run(self, ()).rows
        cols = _select_columns(query, self.storage.schemas)
        if cols is None or any(c is None for _n, c in cols):
            names = _ctas_names(query, len(proxy.out_kinds))
            cols = (
                [(n, c) for n, (_m, c) in zip(names, cols)] if cols else [(n, None) for n in names]
            )
        outer = any(
            (j.side or "").upper() in ("LEFT", "RIGHT") for j in query.args.get("joins") or []
        )
        if len(cols) != len(proxy.out_kinds):
            raise E.NotSupportedError(
                "This version doesn't yet support 'CREATE TABLE ... AS SELECT' of this query"
            )
        defs = []
        for i, (out_name, c) in enumerate(cols):
            if c is None:
                scale = proxy.out_scales[i] if i < len(proxy.out_scales) else None
                item = query.expressions[i] if i < len(query.expressions) else None
                defs.append(
                    _computed_column(
                        out_name, proxy.out_kinds[i], [r[i] for r in rows], scale, item
                    )
                )
                continue
            d = dataclasses.replace(c, name=out_name)
            if outer:  # an outer join's missing side is NULL
                d.nullable = True
            if d.auto_increment:  # the key's counter stays with the source; 0 is the default
                d.auto_increment = False
                d.has_default, d.default = True, 0
            defs.append(d)
        schema = TableSchema(name, defs)
        text = show_create_table(schema, current_collation_name())
        new_ast, _ = parse(text)
        self._create_table(new_ast, text)
        if rows:
            self._write(
                name,
                lambda: [
                    (r, 1) for r in self.storage.insert_rows(name, [list(r) for r in rows], None)
                ],
            )
        return Result(rowcount=len(rows))

    def _database_of(self, name: str) -> None:
        """A table or view is created in a database that exists (else 1049)."""
        db = N.split(name)[0]
        if db is not None and db.lower() not in self.databases:
            raise N.unknown_database(db)

    def _create_table(self, ast: exp.Create, sql: str, restoring: bool = False) -> Result:
        if not restoring:
            target = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
            self._database_of(target.name)
            props = ast.args.get("properties")
            likes = [
                p for p in (props.expressions if props else []) if isinstance(p, exp.LikeProperty)
            ]
            if isinstance(ast.this, exp.Schema):
                likes += [e for e in ast.this.expressions if isinstance(e, exp.LikeProperty)]
            if likes:
                return self._create_table_like(ast, likes[0].this)
            if isinstance(ast.expression, (exp.Select, exp.SetOperation)):
                return self._create_table_as(ast, sql)
        schema = _schema_from_create(ast, validate=not restoring)
        db = N.split(schema.name)[0]
        if db is not None and db.lower() in self.db_collations:
            _column_collations(ast, ast.this, schema.columns, self.db_collations[db.lower()])
        low = schema.name.lower()
        if low in self.storage.schemas or low in self.views:
            if ast.args.get("exists"):
                return _exists_note(schema.name)
            raise E.ProgrammingError(
                f"Table '{schema.name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        schema.ddl = sql
        if not restoring:
            self._check_collations(ast, other_ok=True)
            if schema.foreign_keys:
                from ..foreign_keys import validate

                validate(schema, self.storage.schemas, self._cur.fk_checks)
            if schema.checks:
                self._check_constraints(schema, [])  # compiles them: an unsupported one is 1235
        if restoring:
            self.storage.register(schema)
            self.storage.ensure_collation(schema)
            return Result(rowcount=0)
        self._ddl_guard()
        self.storage.begin()
        try:
            self._catch_up_writer()
            self.storage.create_table(schema)
            self.storage.catalog_add("table", schema.name, sql.strip())
            props = ast.args.get("properties")
            start = _auto_increment_option(props.expressions if props else None)
            if start is not None and not self.storage.set_auto_increment(schema.name, start):
                raise E.NotSupportedError(
                    "This version doesn't yet support 'AUTO_INCREMENT = n for an AUTO_INCREMENT "
                    "column that is not the whole primary key'"
                )
        except BaseException:
            self.storage.rollback()
            self.storage.schemas.pop(low, None)
            raise
        self.storage.commit()
        return Result(rowcount=0)

    def _create_index(self, ast: exp.Create, sql: str = "", restoring: bool = False) -> Result:
        """CREATE [UNIQUE] INDEX name ON t (cols): a named key of the table, kept in the
        catalog (restored on reopen), dropped by DROP INDEX; a UNIQUE one is enforced."""
        idx = ast.this
        table = idx.args.get("table")
        if table is None:
            raise E.NotSupportedError("CREATE INDEX without a table")
        schema = self._schema(table.name)
        name = idx.name
        cols = []
        params = idx.args.get("params")
        for c in (params.args.get("columns") if params else []) or []:
            cname = c.this.name if isinstance(c, exp.Ordered) else c.name
            i = schema.index_of(cname)
            if i is None:
                raise E.ProgrammingError(
                    f"Key column '{cname}' doesn't exist in table", 1072, "42000"
                )
            cols.append(i)
        if not cols or not name:
            raise E.parse_error(f"near '{sql.strip()[:40]}'")
        if name.lower() in schema.key_names() or name.lower() == "primary":
            if ast.args.get("exists"):  # MariaDB's CREATE INDEX IF NOT EXISTS
                return Result(
                    rowcount=0, conditions=[("Note", 1061, f"Duplicate key name '{name}'")]
                )
            raise E.ProgrammingError(f"Duplicate key name '{name}'", 1061, "42000")
        unique = bool(ast.args.get("unique"))
        if not restoring:
            self._ddl_guard()
            self.storage.begin()
            try:
                real = self.storage.create_named_index(schema, name, cols, unique)
                self.storage.catalog_add("index", f"{schema.name}.{name}", sql.strip())
            except BaseException:
                self.storage.rollback()
                raise
            self.storage.commit()
        else:
            real = self.storage.create_named_index(schema, name, cols, unique, restoring=True)
        if unique:
            schema.uniques.append(cols)
            schema.unique_names.append(name)
        else:
            schema.indexes.append(cols)
            schema.index_names.append(name)
        schema.created_indexes[name.lower()] = real
        return Result(rowcount=0)

    def _truncate(self, ast: exp.TruncateTable) -> Result:
        """TRUNCATE [TABLE] t: every row goes (through the dataflow, as deletions) and the
        AUTO_INCREMENT counter starts again; like MySQL, it first commits the open
        transaction."""
        schemas = [self._schema(t.name) for t in ast.expressions]
        self._ddl_guard()
        if self._cur.fk_checks:
            for schema in schemas:
                for s in self.storage.schemas.values():
                    for fk in s.foreign_keys:
                        if fk.ref_table.lower() == schema.name.lower() and s is not schema:
                            raise E.ProgrammingError(
                                "Cannot truncate a table referenced in a foreign key "
                                f"constraint {fk.describe(s.name)}",
                                1701,
                                "42000",
                            )
        for schema in schemas:

            def apply(schema=schema):
                rows = self.storage.select_with_rowid(schema.name, None)
                self.storage.delete_rows(schema.name, [rid for rid, _ in rows])
                self.storage.reset_auto_increment(schema.name)
                return [(r, -1) for _, r in rows]

            self._write(schema.name, apply)
        return Result(rowcount=0)

    def _drop_index(self, ast: exp.Drop) -> Result:
        """DROP INDEX name ON t, for keys CREATE INDEX made (keys declared in CREATE TABLE
        need ALTER TABLE)."""
        on = ast.args.get("cluster")
        table = on.this if on is not None else None
        tables = ast.args.get("tables") or ast.expressions
        if not isinstance(table, exp.Table) or not tables:
            raise E.parse_error("near 'DROP INDEX': it needs ON table")
        schema = self._schema(table.name)
        name = tables[0].name
        low = name.lower()
        if low not in schema.key_names():
            msg = f"Can't DROP INDEX `{name}`; check that it exists"
            if ast.args.get("exists"):  # MariaDB's DROP INDEX IF EXISTS
                return Result(rowcount=0, conditions=[("Note", 1091, msg)])
            raise E.ProgrammingError(msg, 1091, "42000")
        real = schema.created_indexes.get(low)
        if real is None:  # a key of the table's definition: the table is rebuilt without it
            drop = exp.Drop(kind="INDEX", tables=[exp.to_table(name)])
            return self._alter_table(exp.Alter(this=table, kind="TABLE", actions=[drop]))
        self._ddl_guard()
        self.storage.begin()
        try:
            self.storage.drop_named_index(real)
            self.storage.catalog_remove("index", f"{schema.name}.{name}")
        except BaseException:
            self.storage.rollback()
            raise
        self.storage.commit()
        for names, keys in (
            (schema.unique_names, schema.uniques),
            (schema.index_names, schema.indexes),
        ):
            for k, n in enumerate(names):
                if n.lower() == low:
                    del names[k]
                    del keys[k]
                    break
        del schema.created_indexes[low]
        return Result(rowcount=0)

    def _drop_tables(self, ast: exp.Drop) -> Result:
        self._ddl_guard()
        targets = ast.expressions if ast.expressions else ast.args.get("tables") or []
        dropping = {t.name.lower() for t in targets}
        if self._cur.fk_checks:
            for s in self.storage.schemas.values():
                if s.name.lower() in dropping:
                    continue
                for fk in s.foreign_keys:
                    if fk.ref_table.lower() in dropping:
                        raise E.IntegrityError(
                            "Cannot delete or update a parent row: a foreign key constraint fails",
                            1451,
                            "23000",
                        )
        missing = []
        for t in targets:
            low = t.name.lower()
            if low not in self.storage.schemas:
                if ast.args.get("exists"):
                    missing.append(_db_qualified(t.name))
                    continue
                raise E.ProgrammingError(f"Unknown table '{t.name}'", E.ER_BAD_TABLE_ERROR, "42S02")
            self._forget_table(self.storage.schemas[low].name)
            self.storage.begin()
            self.storage.drop_table(t.name)
            self.storage.catalog_remove("table", t.name)
            self.storage.commit()
        if missing:  # one note names every table that was not there
            msg = f"Unknown table '{','.join(missing)}'"
            return Result(rowcount=0, conditions=[("Note", E.ER_BAD_TABLE_ERROR, msg)])
        return Result(rowcount=0)

    def _forget_table(self, name: str) -> None:
        """Every query over table ``name`` (and every proxied one) goes, and its base node:
        the table was dropped or changed shape. Queries are compiled again when next used."""
        base = self.graph.lookup(f"base({name})")
        if base is not None:
            for qname, entry in list(self.queries.items()):
                if entry.compiled and base in entry.compiled.nodes:
                    self._remove_query(qname)
            self.graph.remove(base)
        for qname, entry in list(self.queries.items()):
            if entry.compiled is None:
                self._remove_query(qname)

    def _alter_table(self, ast: exp.Alter) -> Result:
        """ALTER TABLE, the way MySQL's copying algorithm does it: the rows are converted to
        the new definition (a value that does not fit stops it, nothing changed) and the
        table rebuilt in base storage in one transaction; queries over it are compiled again
        on their next use and views over it are checked again. ALGORITHM and LOCK clauses
        are accepted."""
        from .. import alter as A

        table = ast.this
        if (ast.args.get("kind") or "").upper() != "TABLE":
            raise E.NotSupportedError(f"ALTER {ast.args.get('kind')} is not supported")
        schema = self._schema(table.name)
        if table.name.lower() in self.views:
            raise E.ProgrammingError(f"'{table.name}' is not of type 'BASE TABLE'", 1347, "HY000")
        actions = ast.args.get("actions") or []
        plan = A.plan_alter(
            schema,
            actions,
            schema.name,
            exists=lambda n: n.lower() in self.storage.schemas or n.lower() in self.views,
        )
        self._check_collations(ast)
        if plan.new_fks:
            from ..foreign_keys import validate

            validate(plan.schema, self.storage.schemas, self._cur.fk_checks)
        self._ddl_guard()
        start = _auto_increment_option(ast.args.get("options"))
        if start is not None and not actions:
            self._set_auto_increment(schema.name, start)  # the counter alone: no rebuild
            return Result(rowcount=0)
        self._rebuild(schema, plan)
        if start is not None:
            self._set_auto_increment(schema.name, start)
        return Result(rowcount=0)

    def _set_auto_increment(self, table: str, start: int) -> None:
        """``AUTO_INCREMENT = start`` of ALTER or CREATE TABLE, in its own transaction."""
        self.storage.begin()
        try:
            self._catch_up_writer()
            if not self.storage.set_auto_increment(table, start):
                raise E.NotSupportedError(
                    "This version doesn't yet support 'AUTO_INCREMENT = n for an AUTO_INCREMENT "
                    "column that is not the whole primary key'"
                )
        except BaseException:
            self.storage.rollback()
            raise
        self.storage.commit()

    def _rebuild(self, schema: TableSchema, plan) -> None:
        from .. import alter as A

        new = plan.schema
        saved = self.storage.known_schemas()
        self.storage.begin()
        try:
            self._catch_up_writer()
            rows = [r for _rid, r in self.storage.select_with_rowid(schema.name, None)]
            new_rows = A.carry_rows(plan, schema, rows)
            if any(c.generated is not None for c in new.columns):
                new_rows = [self._fill_generated(new, list(r)) for r in new_rows]
            self.storage.rebuild_table(schema, new, new_rows)
            if new.checks:
                self._check_constraints(new, new_rows)
            if plan.new_fks and self._cur.fk_checks:
                from ..foreign_keys import Enforcer

                only_new = TableSchema(new.name, new.columns, foreign_keys=plan.new_fks)
                Enforcer(self.storage).check_children(only_new, new_rows)
            children = self._follow_parent(schema, plan)
            new.ddl = show_create_table(new, current_collation_name())
            # the table's definition now names every key, those CREATE INDEX made included
            self.storage.catalog_remove_indexes(schema.name)
            self.storage.catalog_replace("table", schema.name, new.name, new.ddl)
            for child, fks in children:  # their references follow the renamed parent
                child.foreign_keys = fks
                child.ddl = show_create_table(child, current_collation_name())
                self.storage.catalog_replace("table", child.name, child.name, child.ddl)
        except BaseException:
            self.storage.rollback()
            self.storage.restore_schemas(saved)
            raise
        self.storage.commit()
        self._forget_table(schema.name)
        self._forget_statements()
        self._revalidate_views()

    def _follow_parent(self, schema: TableSchema, plan) -> list:
        """FOREIGN KEYs that reference a table being altered: a renamed table or column is
        renamed in them (as MySQL does); a referenced column cannot go (1828). Returns the
        other tables' new FOREIGN KEY lists (the altered table's own are changed in place)."""
        import dataclasses

        new = plan.schema
        renamed = {}
        for i, o in enumerate(plan.origin):
            if o is not None:
                renamed[schema.columns[o].name.lower()] = new.columns[i].name
        old_low = schema.name.lower()
        out = []
        for other in [new] + [s for s in self.storage.schemas.values() if s is not new]:
            if other is not new and other.name.lower() == old_low:
                continue  # the old schema itself
            fks, changed = [], False
            for fk in other.foreign_keys:
                if fk.ref_table.lower() != old_low:
                    fks.append(fk)
                    continue
                ref_cols = []
                for c in fk.ref_cols:
                    if c.lower() not in renamed:
                        raise E.OperationalError(
                            f"Cannot drop column '{c}': needed in a foreign key constraint "
                            f"'{fk.name}' of table '{other.name}'",
                            1828,
                            "HY000",
                        )
                    ref_cols.append(renamed[c.lower()])
                fks.append(dataclasses.replace(fk, ref_table=new.name, ref_cols=ref_cols))
                changed = True
            if changed:
                if other is new:
                    new.foreign_keys = fks
                else:
                    out.append((other, fks))
        return out

    def _rename_tables(self, text: str) -> Result:
        """RENAME TABLE a TO b [, c TO d ...]: each pair in turn (so a swap through a third
        name works), every pair checked before any is done."""
        from .. import alter as A

        pairs = []
        for (old_db, old), (new_db, new) in A.parse_rename_table(text):
            if "." in old or "." in new:
                raise N.bad_table_name(new if "." in new else old)
            pairs.append(
                (self._engine_table_name(old_db, old), self._engine_table_name(new_db, new))
            )
        names = {s.name.lower(): s.name for s in self.storage.schemas.values()}
        for old, new in pairs:
            if old.lower() not in names:
                raise E.no_such_table(old)
            if new.lower() in names or new.lower() in self.views:
                raise E.ProgrammingError(
                    f"Table '{new}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
                )
            del names[old.lower()]
            names[new.lower()] = new
        self._ddl_guard()
        for old, new in pairs:
            schema = self._schema(old)
            rename = exp.AlterRename(this=exp.Table(this=exp.Identifier(this=new, quoted=True)))
            self._rebuild(schema, A.plan_alter(schema, [rename], schema.name))
        return Result(rowcount=0)

    def _remove_query(self, name: str) -> None:
        entry = self.queries.pop(name, None)
        if entry is None:
            return
        for k, v in list(self._by_sql.items()):
            if v is entry:
                del self._by_sql[k]
        if entry.compiled is not None:
            self.graph.release(entry.compiled.nodes)
        self._forget_statements()

    def _restore(self) -> None:
        from ..cache_commands import restore as restore_caches

        entries = self.storage.catalog_entries()
        # nothing is written while the catalog is installed again: the new nodes share their
        # inputs' contents (each base table scanned once, however many views read it)
        with self.graph.shared_contents():
            self._restore_entries(entries)
        restore_caches(self, entries)

    def _restore_entries(self, entries) -> None:
        for kind, name, sql in entries:
            if kind == "database":  # the catalog holds engine names: nothing to resolve
                self.databases[name.lower()] = name
                m = re.search(r"\bCOLLATE\s+(\w+)", sql or "")
                if m:
                    self.db_collations[name.lower()] = m.group(1)
                continue
            if kind in ("cache", "nocache"):
                continue  # once the tables and views are there (restore_caches)
            ast, _ = parse(sql)
            if kind == "table":
                self._create_table(ast, sql, restoring=True)
            elif kind == "index":
                self._create_index(ast, sql, restoring=True)
            elif kind == "view":
                self._defer_view(ast, sql, name)

    def _database(self) -> str:
        """The current database's name (1046 when there is none)."""
        db = self.current_database(self._cur)
        if db is None:
            raise N.no_database()
        return db

    def _engine_table_name(self, db: str | None, table: str) -> str:
        """The engine name of ``table`` in database ``db`` (the current one when None)."""
        if db is not None:
            return N.engine_name(self._resolve_db(db), table)
        cur = self._cur.database
        if cur == "":
            raise N.no_database()
        return N.engine_name(cur, table)

    def _use(self, name: str) -> Result:
        self.use(name, self._cur)
        return Result(rowcount=0)


def _auto_increment_option(options) -> int | None:
    """The ``AUTO_INCREMENT = n`` among a table's options, None when absent (the last one
    counts, as in MySQL)."""
    start = None
    for o in options or []:
        if isinstance(o, exp.AutoIncrementProperty):
            try:
                start = int(str(o.this.this if isinstance(o.this, exp.Literal) else o.this))
            except ValueError:
                raise E.parse_error(f"near '{o.sql(dialect='mysql')}'") from None
    return start

"""``information_schema``: MySQL's catalog tables, answering ordinary SELECTs.

Each statement that reads ``information_schema.X`` gets the tables it names built from the
engine's catalog at that moment (they are small) in a private in-memory SQLite database,
then runs there, transpiled like any proxied query, so joins, filters, ``DATABASE()`` and
the engine's collation (text compares as MySQL's catalog does, case-insensitively) behave as
the ORMs that query them expect. The tables carry the columns of MySQL 8's, with its values
(``COLUMN_TYPE`` without integer display widths, ``COLUMN_DEFAULT`` NULL when there is none).
"""

from __future__ import annotations

import sqlite3
import threading

from sqlglot import exp

from . import errors as E
from .result import Result
from .sql import names as N
from .sql import values as V
from .sql.dialect import DIALECT

S, I = V.STR, V.INT  # noqa: E741 - column kinds, short for the table below

TABLES: dict[str, list[tuple[str, str]]] = {
    "SCHEMATA": [
        ("CATALOG_NAME", S),
        ("SCHEMA_NAME", S),
        ("DEFAULT_CHARACTER_SET_NAME", S),
        ("DEFAULT_COLLATION_NAME", S),
        ("SQL_PATH", S),
        ("SCHEMA_COMMENT", S),
    ],
    "TABLES": [
        ("TABLE_CATALOG", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("TABLE_TYPE", S),
        ("ENGINE", S),
        ("VERSION", I),
        ("ROW_FORMAT", S),
        ("TABLE_ROWS", I),
        ("AVG_ROW_LENGTH", I),
        ("DATA_LENGTH", I),
        ("MAX_DATA_LENGTH", I),
        ("INDEX_LENGTH", I),
        ("DATA_FREE", I),
        ("AUTO_INCREMENT", I),
        ("CREATE_TIME", V.DATETIME),
        ("UPDATE_TIME", V.DATETIME),
        ("CHECK_TIME", V.DATETIME),
        ("TABLE_COLLATION", S),
        ("CHECKSUM", I),
        ("CREATE_OPTIONS", S),
        ("TABLE_COMMENT", S),
    ],
    "COLUMNS": [
        ("TABLE_CATALOG", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("COLUMN_NAME", S),
        ("ORDINAL_POSITION", I),
        ("COLUMN_DEFAULT", S),
        ("IS_NULLABLE", S),
        ("DATA_TYPE", S),
        ("CHARACTER_MAXIMUM_LENGTH", I),
        ("CHARACTER_OCTET_LENGTH", I),
        ("NUMERIC_PRECISION", I),
        ("NUMERIC_SCALE", I),
        ("DATETIME_PRECISION", I),
        ("CHARACTER_SET_NAME", S),
        ("COLLATION_NAME", S),
        ("COLUMN_TYPE", S),
        ("COLUMN_KEY", S),
        ("EXTRA", S),
        ("PRIVILEGES", S),
        ("COLUMN_COMMENT", S),
        ("IS_GENERATED", S),
        ("GENERATION_EXPRESSION", S),
    ],
    "STATISTICS": [
        ("TABLE_CATALOG", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("NON_UNIQUE", I),
        ("INDEX_SCHEMA", S),
        ("INDEX_NAME", S),
        ("SEQ_IN_INDEX", I),
        ("COLUMN_NAME", S),
        ("COLLATION", S),
        ("CARDINALITY", I),
        ("SUB_PART", I),
        ("PACKED", S),
        ("NULLABLE", S),
        ("INDEX_TYPE", S),
        ("COMMENT", S),
        ("INDEX_COMMENT", S),
        ("IS_VISIBLE", S),
        ("EXPRESSION", S),
    ],
    "KEY_COLUMN_USAGE": [
        ("CONSTRAINT_CATALOG", S),
        ("CONSTRAINT_SCHEMA", S),
        ("CONSTRAINT_NAME", S),
        ("TABLE_CATALOG", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("COLUMN_NAME", S),
        ("ORDINAL_POSITION", I),
        ("POSITION_IN_UNIQUE_CONSTRAINT", I),
        ("REFERENCED_TABLE_SCHEMA", S),
        ("REFERENCED_TABLE_NAME", S),
        ("REFERENCED_COLUMN_NAME", S),
    ],
    "TABLE_CONSTRAINTS": [
        ("CONSTRAINT_CATALOG", S),
        ("CONSTRAINT_SCHEMA", S),
        ("CONSTRAINT_NAME", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("CONSTRAINT_TYPE", S),
        ("ENFORCED", S),
    ],
    "REFERENTIAL_CONSTRAINTS": [
        ("CONSTRAINT_CATALOG", S),
        ("CONSTRAINT_SCHEMA", S),
        ("CONSTRAINT_NAME", S),
        ("UNIQUE_CONSTRAINT_CATALOG", S),
        ("UNIQUE_CONSTRAINT_SCHEMA", S),
        ("UNIQUE_CONSTRAINT_NAME", S),
        ("MATCH_OPTION", S),
        ("UPDATE_RULE", S),
        ("DELETE_RULE", S),
        ("TABLE_NAME", S),
        ("REFERENCED_TABLE_NAME", S),
    ],
    "CHECK_CONSTRAINTS": [
        ("CONSTRAINT_CATALOG", S),
        ("CONSTRAINT_SCHEMA", S),
        ("TABLE_NAME", S),
        ("CONSTRAINT_NAME", S),
        ("LEVEL", S),
        ("CHECK_CLAUSE", S),
    ],
    "VIEWS": [
        ("TABLE_CATALOG", S),
        ("TABLE_SCHEMA", S),
        ("TABLE_NAME", S),
        ("VIEW_DEFINITION", S),
        ("CHECK_OPTION", S),
        ("IS_UPDATABLE", S),
        ("DEFINER", S),
        ("SECURITY_TYPE", S),
        ("CHARACTER_SET_CLIENT", S),
        ("COLLATION_CONNECTION", S),
        ("ALGORITHM", S),
    ],
    "ENGINES": [
        ("ENGINE", S),
        ("SUPPORT", S),
        ("COMMENT", S),
        ("TRANSACTIONS", S),
        ("XA", S),
        ("SAVEPOINTS", S),
    ],
}

_INT_PRECISION = {"TINYINT": 3, "SMALLINT": 5, "MEDIUMINT": 7, "INT": 10, "BIGINT": 19}
_TEXT_LENGTH = {"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 16777215, "LONGTEXT": 4294967295}
_BLOB_LENGTH = {"TINYBLOB": 255, "BLOB": 65535, "MEDIUMBLOB": 16777215, "LONGBLOB": 4294967295}


_VIEW_TYPES = {
    V.INT: "bigint",
    V.DECIMAL: "decimal(65,30)",
    V.FLOAT: "double",
    V.STR: "longtext",
    V.BYTES: "longblob",
    V.DATE: "date",
    V.DATETIME: "datetime",
    V.TIME: "time",
}


def names_info_schema(ast: exp.Expression) -> bool:
    """Does the statement read a table of ``information_schema``?"""
    return any(t.db.lower() == "information_schema" for t in ast.find_all(exp.Table))


def _column_facts(c) -> dict:
    """DATA_TYPE, lengths, precision and COLUMN_TYPE of one column, as MySQL 8 gives them."""
    from .engine import _mysql8_type

    ct = c.ctype
    name = ct.mysql_name.upper()
    f = {
        "DATA_TYPE": name.lower(),
        "CHARACTER_MAXIMUM_LENGTH": None,
        "CHARACTER_OCTET_LENGTH": None,
        "NUMERIC_PRECISION": None,
        "NUMERIC_SCALE": None,
        "DATETIME_PRECISION": None,
        "CHARACTER_SET_NAME": None,
        "COLLATION_NAME": None,
        "COLUMN_TYPE": _mysql8_type(ct),
    }
    if ct.kind == V.INT and name in _INT_PRECISION:
        f["NUMERIC_PRECISION"] = _INT_PRECISION[name] + (
            1 if name == "BIGINT" and ct.unsigned else 0
        )
        f["NUMERIC_SCALE"] = 0
    elif ct.kind == V.DECIMAL:
        f["NUMERIC_PRECISION"], f["NUMERIC_SCALE"] = ct.precision, ct.scale
    elif ct.kind == V.FLOAT and ct.scale is not None:  # FLOAT(M,D), DOUBLE(M,D)
        f["NUMERIC_PRECISION"], f["NUMERIC_SCALE"] = ct.precision, ct.scale
    elif ct.kind == V.FLOAT:
        f["NUMERIC_PRECISION"] = 12 if name == "FLOAT" else 22
    elif ct.kind == V.STR:
        n = ct.length if ct.length is not None else _TEXT_LENGTH.get(name, 4294967295)
        if ct.values is not None:
            lens = [len(m) for m in ct.values]
            n = max(lens) if name == "ENUM" else sum(lens) + len(lens) - 1
        f["CHARACTER_MAXIMUM_LENGTH"] = n
        f["CHARACTER_OCTET_LENGTH"] = n * 4 if name in ("CHAR", "VARCHAR") else n
        f["CHARACTER_SET_NAME"] = "utf8mb4"
        from .engine import current_collation_name

        f["COLLATION_NAME"] = ct.collation or current_collation_name()
    elif ct.kind == V.BYTES:
        n = ct.length if ct.length is not None else _BLOB_LENGTH.get(name, 65535)
        f["CHARACTER_MAXIMUM_LENGTH"] = f["CHARACTER_OCTET_LENGTH"] = n
    elif ct.kind in (V.DATETIME, V.TIME):
        f["DATETIME_PRECISION"] = ct.precision or 0
    return f


class _Typed:
    """A view's column seen as a table's column by ``_column_facts``."""

    __slots__ = ("ctype",)

    def __init__(self, ctype) -> None:
        self.ctype = ctype


def _view_column_types(engine, ast, count: int) -> list:
    """Per column of a view: the type of the table column it passes through unchanged, else
    None (a computed column: described by its kind alone)."""
    from .sql import proxy_types
    from .sql.inline import inline_views

    cols = None
    if ast is not None:
        try:
            cols = proxy_types.query_columns(
                inline_views(ast, engine.views), engine.storage.schemas
            )
        except Exception:  # noqa: BLE001 - a view that no longer reads what it names
            cols = None
    if cols is None or len(cols) != count:
        return [None] * count
    return [None if ct.computed else ct for _n, ct in cols]


def _default(c):
    if not c.has_default or c.default is None:
        return None
    if callable(c.default):
        return "CURRENT_TIMESTAMP"
    return V.format_value(c.default)


def build_rows(engine, counts: bool = True) -> dict[str, list[tuple]]:
    """Every information_schema table's rows, from the engine's catalog now. ``counts``:
    count each table's rows (TABLE_ROWS, CARDINALITY); else those are NULL. Each table and
    view is listed under its own database (sql/names.py)."""
    from .engine import current_collation_name

    engine._ensure_views()  # a view's columns come from its compiled query
    coll = current_collation_name()
    out: dict[str, list[tuple]] = {t: [] for t in TABLES}
    out["SCHEMATA"] = [
        ("def", "information_schema", "utf8mb3", "utf8mb3_general_ci", None, "")
    ] + [("def", db, "utf8mb4", coll, None, "") for db in engine.database_names()
         if db != N.INFORMATION_SCHEMA]  # fmt: skip
    out["ENGINES"] = [
        ("InnoDB", "DEFAULT", "noria_py base storage with dataflow views", "YES", "NO", "YES")
    ]
    storage = engine.storage
    for schema in sorted(storage.schemas.values(), key=lambda s: s.name):
        db, t = N.split(schema.name)
        database = db or N.HOME
        nrows = None
        if counts:
            try:
                nrows = storage.count(schema.name)
            except sqlite3.Error:
                pass
        auto = None
        if schema.auto_increment is not None:
            auto = (storage.next_auto_value(schema.name) or 0) + 1
        out["TABLES"].append(
            ("def", database, t, "BASE TABLE", "InnoDB", 10, "Dynamic", nrows, 0, 0, 0, 0, 0,
             auto, None, None, None, coll, None, "", "")
        )  # fmt: skip
        for i, c in enumerate(schema.columns):
            f = _column_facts(c)
            key = ""
            if i in schema.primary_key:
                key = "PRI"
            elif any(u and u[0] == i for u in schema.uniques):
                key = "UNI"
            elif any(ix and ix[0] == i for ix in schema.indexes):
                key = "MUL"
            extra = "auto_increment" if c.auto_increment else ""
            if c.has_default and callable(c.default):
                extra = "DEFAULT_GENERATED"
            if c.on_update:
                extra = (extra + " on update CURRENT_TIMESTAMP").strip()
            generated, expression = "NEVER", ""
            if c.generated is not None:
                extra = "STORED GENERATED" if c.stored else "VIRTUAL GENERATED"
                generated, expression = "ALWAYS", c.generated.sql(DIALECT, identify=True)
            out["COLUMNS"].append(
                ("def", database, t, c.name, i + 1, _default(c), "YES" if c.nullable else "NO",
                 f["DATA_TYPE"], f["CHARACTER_MAXIMUM_LENGTH"], f["CHARACTER_OCTET_LENGTH"],
                 f["NUMERIC_PRECISION"], f["NUMERIC_SCALE"], f["DATETIME_PRECISION"],
                 f["CHARACTER_SET_NAME"], f["COLLATION_NAME"], f["COLUMN_TYPE"], key, extra,
                 "select,insert,update,references", "", generated, expression)
            )  # fmt: skip
        keys = []
        if schema.primary_key:
            keys.append(("PRIMARY", schema.primary_key, True, "PRIMARY KEY"))
        for name, cols in zip(schema.unique_names, schema.uniques):
            keys.append((name, cols, True, "UNIQUE"))
        for name, cols in zip(schema.index_names, schema.indexes):
            keys.append((name, cols, False, None))
        for name, cols, unique, ctype in keys:
            for seq, i in enumerate(cols, 1):
                c = schema.columns[i]
                out["STATISTICS"].append(
                    ("def", database, t, 0 if unique else 1, database, name, seq, c.name, "A",
                     nrows, None, None, "YES" if c.nullable else "", "BTREE", "", "", "YES", None)
                )  # fmt: skip
                if ctype is not None:
                    out["KEY_COLUMN_USAGE"].append(
                        ("def", database, name, "def", database, t, c.name, seq, None, None, None,
                         None)
                    )  # fmt: skip
            if ctype is not None:
                out["TABLE_CONSTRAINTS"].append(("def", database, name, database, t, ctype, "YES"))
        for cname, expr, col in schema.checks:
            out["TABLE_CONSTRAINTS"].append(("def", database, cname, database, t, "CHECK", "YES"))
            out["CHECK_CONSTRAINTS"].append(
                ("def", database, t, cname, "Column" if col else "Table",
                 expr.sql(DIALECT, identify=True))
            )  # fmt: skip
        for fk in schema.foreign_keys:
            out["TABLE_CONSTRAINTS"].append(
                ("def", database, fk.name, database, t, "FOREIGN KEY", "YES")
            )
            ref_db, ref_t = N.split(fk.ref_table)
            ref_db = ref_db or N.HOME
            for seq, (c, rc) in enumerate(zip(fk.cols, fk.ref_cols), 1):
                out["KEY_COLUMN_USAGE"].append(
                    ("def", database, fk.name, "def", database, t, c, seq, seq, ref_db, ref_t, rc)
                )
            parent = storage.schemas.get(fk.ref_table.lower())
            unique_name = None
            if parent is not None:
                want = [parent.index_of(c) for c in fk.ref_cols]
                if parent.primary_key == want:
                    unique_name = "PRIMARY"
                else:
                    unique_name = next(
                        (n for n, u in zip(parent.unique_names, parent.uniques) if u == want), None
                    )
            out["REFERENTIAL_CONSTRAINTS"].append(
                ("def", database, fk.name, "def", ref_db, unique_name, "NONE", fk.on_update,
                 fk.on_delete, t, ref_t)
            )  # fmt: skip
    for low, full in sorted(engine.view_names.items()):
        db, name = N.split(full)
        database = db or N.HOME
        sql = engine.view_sql.get(low, "")
        ast = engine.views.get(low)
        definition = N.shown_sql(ast) if ast is not None else sql
        out["TABLES"].append(
            ("def", database, name, "VIEW", None, None, None, None, None, None, None, None, None,
             None, None, None, None, None, None, None, "VIEW")
        )  # fmt: skip
        entry = engine.queries.get(full)
        cq = entry.compiled if entry is not None else None
        if cq is not None:  # a view's columns, as far as their kinds tell their types
            vis = cq.visible or len(cq.names)
            passed = _view_column_types(engine, ast, vis)
            for i, (cname, kind) in enumerate(zip(cq.names[:vis], cq.kinds[:vis])):
                nullable = "NO" if not cq.nullable[i] else "YES"
                ctype = passed[i]
                if ctype is not None:  # a table's column passed through: its own type
                    f = _column_facts(_Typed(ctype))
                    out["COLUMNS"].append(
                        ("def", database, name, cname, i + 1, None, nullable, f["DATA_TYPE"],
                         f["CHARACTER_MAXIMUM_LENGTH"], f["CHARACTER_OCTET_LENGTH"],
                         f["NUMERIC_PRECISION"], f["NUMERIC_SCALE"], f["DATETIME_PRECISION"],
                         f["CHARACTER_SET_NAME"], f["COLLATION_NAME"], f["COLUMN_TYPE"], "", "",
                         "select,insert,update,references", "", "NEVER", "")
                    )  # fmt: skip
                    continue
                typ = _VIEW_TYPES.get(kind, "varchar(255)")
                out["COLUMNS"].append(
                    ("def", database, name, cname, i + 1, None, nullable, typ.split("(")[0],
                     None, None, None, None, None, None, None, typ, "", "",
                     "select,insert,update,references", "", "NEVER", "")
                )  # fmt: skip
        out["VIEWS"].append(
            ("def", database, name, definition, "NONE", "NO", "root@localhost", "DEFINER",
             "utf8mb4", coll, "UNDEFINED")
        )  # fmt: skip
    return out


class InfoSchemaPrepared:
    """A SELECT over ``information_schema`` (see the module docstring)."""

    kind = "info_schema"
    is_select = True
    is_write = False
    clears = True  # it reads tables: the diagnostics area is cleared (noria_py.diagnostics)
    simple = False
    columns = None
    column_types = None
    nullable = None

    def __init__(self, ast: exp.Expression, param_count: int, sql: str):
        from .sql import transpile
        from .storage.sqlite import ColumnDef, TableSchema

        for t in ast.find_all(exp.Table):
            if t.db.lower() != "information_schema":
                if t.name and not any(
                    isinstance(c, exp.CTE) and c.alias.lower() == t.name.lower()
                    for c in ast.find_all(exp.CTE)
                ):
                    raise E.NotSupportedError(
                        "This version doesn't yet support a query joining information_schema "
                        f"with table '{t.name}'"
                    )
                continue
            if t.name.upper() not in TABLES:
                raise E.ProgrammingError(
                    f"Unknown table '{t.name}' in information_schema", 1109, "42S02"
                )
        tree = ast.copy()
        for t in tree.find_all(exp.Table):
            t.set("db", None)
            t.set("catalog", None)
        schemas = {
            name.lower(): TableSchema(
                name,
                [
                    ColumnDef(c, V.ColumnType(k, "VARCHAR" if k == S else k.upper()))
                    for c, k in cols
                ],
            )
            for name, cols in TABLES.items()
        }
        self.param_count = param_count
        self.tables = sorted(
            {t.name.upper() for t in ast.find_all(exp.Table) if t.name.upper() in TABLES}
        )
        try:
            rw = transpile.to_sqlite(tree, schemas)
        except E.Error:
            raise
        except Exception as e:  # noqa: BLE001 - sqlglot raises assorted errors
            raise E.NotSupportedError(f"cannot run this query: {e}") from None
        from .engine import ProxyPrepared, QueryEntry
        from .sql import proxy_types

        kinds = proxy_types.infer_kinds(tree, schemas)
        self._query = ProxyPrepared(
            rw.sql, param_count, QueryEntry("", sql, "proxied", None), kinds
        )
        self._query.param_kinds = rw.param_kinds

    def run(self, engine, params) -> Result:
        rows = build_rows(engine, counts=bool({"TABLES", "STATISTICS"} & set(self.tables)))
        conn = _connection()
        with _LOCK:
            for t in self.tables:
                conn.execute(f'DELETE FROM "{t}"')
                marks = ", ".join("?" for _ in TABLES[t])
                conn.executemany(
                    f'INSERT INTO "{t}" VALUES ({marks})',
                    [[V.to_storage(v) for v in r] for r in rows[t]],
                )
            return self._query.run_on(conn, params, "information_schema")


_LOCK = threading.Lock()
_CONN: sqlite3.Connection | None = None
# MySQL's catalog compares names case-insensitively (utf8mb3_general_ci)
_COLLATION = "utf8mb4_general_ci"


def _column_sql(name: str, kind: str) -> str:
    if kind == S:
        return f'"{name}" TEXT COLLATE "{_COLLATION}"'
    return f'"{name}" INTEGER' if kind == I else f'"{name}" TEXT'


def _connection() -> sqlite3.Connection:
    """The private database the tables are built in (one per process, reused)."""
    global _CONN
    with _LOCK:
        if _CONN is None:
            from .storage.mysql_functions import register

            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            register(conn)
            for name, cols in TABLES.items():
                defs = ", ".join(_column_sql(c, k) for c, k in cols)
                conn.execute(f'CREATE TABLE "{name}" ({defs})')
            _CONN = conn
        return _CONN

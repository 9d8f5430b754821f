"""Table schemas from CREATE TABLE, and the text of SHOW CREATE TABLE."""

from __future__ import annotations

import datetime as _dt

from sqlglot import exp

from .. import errors as E
from ..sql import names as N
from ..sql import values as V
from ..sql.dialect import DIALECT
from ..sql.expr import Scope, Unsupported, compile_expr
from ..storage.sqlite import ColumnDef, TableSchema


def _members_text(ct: V.ColumnType) -> str:
    """``enum('a','b')`` / ``set('x','y')``."""
    quoted = ",".join("'" + m.replace("\\", "\\\\").replace("'", "''") + "'" for m in ct.values)
    return f"{ct.mysql_name.lower()}({quoted})"


def current_collation_name() -> str:
    from ..sql.collation import current

    return current().name


def _mysql8_type(ct: V.ColumnType) -> str:
    """A column type as MySQL 8 prints it in SHOW CREATE TABLE and DESCRIBE (no integer
    display widths)."""
    if ct.values is not None:
        return _members_text(ct)
    name = ct.mysql_name.lower()
    if ct.kind == V.DECIMAL or (ct.kind == V.FLOAT and ct.scale is not None):
        name = f"{name}({ct.precision},{ct.scale})"  # decimal(5,2), float(7,3), double(7,3)
    elif ct.length is not None and name in ("varchar", "char", "binary", "varbinary"):
        name = f"{name}({ct.length})"
    elif name == "tinyint" and ct.length == 1:
        name = "tinyint(1)"
    elif name == "bit":
        return f"bit({ct.length})"
    elif ct.kind in (V.DATETIME, V.TIME) and ct.precision:
        name = f"{name}({ct.precision})"
    if ct.unsigned:
        name += " unsigned"
    return name


# the longest CHAR, VARCHAR, BINARY and VARBINARY MariaDB makes (utf8mb4: 4 bytes a character)
_MAX_LENGTH = {"CHAR": 255, "BINARY": 255, "VARCHAR": 16383, "VARBINARY": 65532}


def _check_column_type(item: exp.ColumnDef, ctype: V.ColumnType) -> None:
    """What MySQL refuses in a column's type, or what the engine does not keep: a VARCHAR
    without its length (1064), a length beyond the type's (1074), ZEROFILL (1235: the
    engine would not pad the numbers it shows as text)."""
    dtype = item.args["kind"]
    name = ctype.mysql_name
    if name in ("VARCHAR", "VARBINARY") and not dtype.expressions:
        raise E.parse_error("near ')'")
    top = _MAX_LENGTH.get(name)
    if top is not None and ctype.length is not None and ctype.length > top:
        use = "use BLOB or TEXT instead" if name.startswith("VAR") else "use BLOB instead"
        raise E.ProgrammingError(
            f"Column length too big for column '{item.name}' (max = {top}); {use}",
            1074,
            "42000",
        )
    if any(isinstance(c.kind, exp.ZeroFillColumnConstraint) for c in item.constraints):
        raise E.NotSupportedError(
            f"This version of noria_py doesn't yet support 'ZEROFILL' (column '{item.name}')",
            1235,
            "42000",
        )


def _quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _default_text(c) -> str | None:
    if not c.has_default:
        return "NULL" if c.nullable and not c.auto_increment else None
    if callable(c.default):
        return "CURRENT_TIMESTAMP"
    if c.default is None:
        return "NULL"
    if c.ctype.mysql_name == "BIT" and isinstance(c.default, int):
        return f"b'{c.default:b}'"  # as MySQL shows it (the number's text would be its bytes)
    text = V.format_value(c.default)
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def show_create_table(schema, collation: str, shown: bool = False) -> str:
    """``SHOW CREATE TABLE`` text, MySQL 8's layout: running it creates the same table. With
    ``shown`` the table is named as SHOW CREATE TABLE names it (without its database, and a
    parent in another database qualified); else by engine names, as the catalog keeps it."""
    db = N.split(schema.name)[0]
    lines = []
    for c in schema.columns:
        part = f"  {_quote_ident(c.name)} {_mysql8_type(c.ctype)}"
        if c.ctype.collation:  # a collation of its own (the catalog keeps this text too)
            part += f" CHARACTER SET utf8mb4 COLLATE {c.ctype.collation}"
        if c.generated is not None:
            kind = "STORED" if c.stored else "VIRTUAL"
            part += f" GENERATED ALWAYS AS ({c.generated.sql(DIALECT, identify=True)}) {kind}"
            if not c.nullable:
                part += " NOT NULL"
            lines.append(part)
            continue
        if not c.nullable:
            part += " NOT NULL"
        default = _default_text(c)
        if default is not None:
            part += f" DEFAULT {default}"
        if c.on_update:
            part += " ON UPDATE CURRENT_TIMESTAMP"
        if c.auto_increment:
            part += " AUTO_INCREMENT"
        lines.append(part)

    def cols(key):
        return ",".join(_quote_ident(schema.columns[i].name) for i in key)

    if schema.primary_key:
        lines.append(f"  PRIMARY KEY ({cols(schema.primary_key)})")
    for name, key in zip(schema.unique_names, schema.uniques):
        lines.append(f"  UNIQUE KEY {_quote_ident(name)} ({cols(key)})")
    for name, key in zip(schema.index_names, schema.indexes):
        lines.append(f"  KEY {_quote_ident(name)} ({cols(key)})")
    for fk in schema.foreign_keys:
        parent = _quote_ident(fk.ref_table)
        ref_db, ref_t = N.split(fk.ref_table)
        if shown and ref_db == db:
            parent = _quote_ident(ref_t)
        elif shown:
            parent = f"{_quote_ident(ref_db or N.HOME)}.{_quote_ident(ref_t)}"
        lines.append(f"  {fk.clause(parent)}")
    for name, expr, _col in schema.checks:
        lines.append(
            f"  CONSTRAINT {_quote_ident(name)} CHECK ({expr.sql(DIALECT, identify=True)})"
        )
    body = ",\n".join(lines)
    name = N.bare(schema.name) if shown else schema.name
    return (
        f"CREATE TABLE {_quote_ident(name)} (\n{body}\n) "
        f"ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE={collation}"
    )


def check_generated(columns) -> None:
    """A generated column has no DEFAULT and reads columns the table has."""
    names_now = {c.name.lower() for c in columns}
    for c in columns:
        if c.generated is not None:
            if c.has_default or c.auto_increment:
                raise E.ProgrammingError(
                    f"Incorrect usage of DEFAULT and generated column '{c.name}'", 1221, "HY000"
                )
            for ref in c.generated.find_all(exp.Column):
                if ref.name.lower() not in names_now:
                    raise E.ProgrammingError(
                        f"Unknown column '{ref.name}' in 'generated column function'",
                        1054,
                        "42S22",
                    )


def _schema_from_create(
    ast: exp.Create, check_refs: bool = True, validate: bool = True
) -> TableSchema:
    schema_ast = ast.this
    if not isinstance(schema_ast, exp.Schema):
        if isinstance(ast.expression, (exp.Select, exp.Union)):
            raise E.NotSupportedError("CREATE TABLE ... AS SELECT is not supported")
        raise E.ProgrammingError("CREATE TABLE needs a column list", 1064, "42000")
    name = schema_ast.this.name
    columns: list[ColumnDef] = []
    pk: list[int] = []
    uniques: list[list[int]] = []
    indexes: list[list[int]] = []
    pending_pk: list[str] = []
    pending_unique: list[list[str]] = []
    unique_names: list[str] = []
    pending_index: list[list[str]] = []
    index_names: list[str] = []
    fks: list = []
    checks: list = []
    items = []
    for item in schema_ast.expressions:
        if isinstance(item, exp.Constraint):  # CONSTRAINT name UNIQUE (...) / PRIMARY KEY ...
            items.extend((inner, item.name) for inner in item.expressions)
        else:
            items.append((item, ""))
    for item, constraint in items:
        if isinstance(item, exp.ColumnDef):
            if item.args.get("kind") is None:
                raise E.ProgrammingError(f"Column '{item.name}' needs a type", 1064, "42000")
            ctype = V.column_type_from_sqlglot(item.args["kind"])
            if validate:  # (a table already in the catalog was checked when it was made)
                _check_column_type(item, ctype)
            col = ColumnDef(item.name, ctype)
            is_pk = False
            for cons in item.constraints:
                k = cons.kind
                if isinstance(k, exp.NotNullColumnConstraint):
                    col.nullable = bool(k.args.get("allow_null"))
                elif isinstance(k, exp.PrimaryKeyColumnConstraint):
                    is_pk = True
                elif isinstance(k, exp.AutoIncrementColumnConstraint):
                    col.auto_increment = True
                elif isinstance(k, exp.UniqueColumnConstraint):
                    pending_unique.append([item.name])
                    unique_names.append(item.name)
                elif isinstance(k, exp.DefaultColumnConstraint):
                    col.has_default = True
                    col.default = _default_value(k.this, ctype, item.name)
                elif isinstance(k, exp.CheckColumnConstraint):
                    checks.append(["", k.this, item.name])
                elif isinstance(k, exp.ComputedColumnConstraint):
                    g = k.this
                    col.generated = g.this if isinstance(g, exp.Paren) else g
                    col.stored = bool(k.args.get("persisted"))
                elif isinstance(k, exp.OnUpdateColumnConstraint):
                    u = k.this
                    if (
                        not (
                            isinstance(u, exp.CurrentTimestamp)
                            or isinstance(u, exp.Anonymous)
                            and str(u.this).upper()
                            in ("NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP")
                        )
                        or ctype.kind != V.DATETIME
                    ):
                        raise E.ProgrammingError(
                            f"Invalid ON UPDATE clause for '{item.name}' column", 1294, "HY000"
                        )
                    col.on_update = True
            if not col.nullable and col.has_default and col.default is None:
                raise E.ProgrammingError(f"Invalid default value for '{item.name}'", 1067, "42000")
            if is_pk:
                pending_pk.append(item.name)
            if any(c.name.lower() == item.name.lower() for c in columns):
                raise E.ProgrammingError(f"Duplicate column name '{item.name}'", 1060, "42S21")
            columns.append(col)
        elif isinstance(item, exp.PrimaryKey):
            for e in item.expressions:
                pending_pk.append(e.this.name if isinstance(e, exp.Ordered) else e.name)
        elif isinstance(item, exp.UniqueColumnConstraint):
            target = item.this
            cols = target.expressions if isinstance(target, exp.Schema) else []
            pending_unique.append([c.name for c in cols])
            uname = target.this.name if isinstance(target, exp.Schema) and target.this else ""
            unique_names.append(uname or constraint)
        elif isinstance(item, exp.IndexColumnConstraint):
            cols = [
                (c.this.name if isinstance(c, exp.Ordered) else c.name) for c in item.expressions
            ]
            pending_index.append(cols)
            index_names.append(item.this.name if item.this is not None else "")
        elif isinstance(item, exp.ForeignKey):
            from ..foreign_keys import from_ast

            fks.append(from_ast(item, constraint))
        elif isinstance(item, exp.CheckColumnConstraint):
            checks.append([constraint, item.this, ""])
        else:
            # CHECK, FULLTEXT ... accepted and ignored
            continue

    def idx(names):
        out = []
        for n in names:
            i = next((j for j, c in enumerate(columns) if c.name.lower() == n.lower()), None)
            if i is None:
                raise E.ProgrammingError(f"Key column '{n}' doesn't exist in table", 1072, "42000")
            out.append(i)
        return out

    pk = idx(pending_pk)
    for i in pk:
        columns[i].nullable = False
    uniques = [idx(u) for u in pending_unique if u]
    unique_names = [n for u, n in zip(pending_unique, unique_names) if u]
    indexes = [idx(u) for u in pending_index if u]
    index_names = [n for u, n in zip(pending_index, index_names) if u]
    # MySQL names an unnamed key after its first column (_2, _3 ... when that is taken)
    taken: set[str] = {n.lower() for n in unique_names + index_names if n}
    for names, keys in ((unique_names, uniques), (index_names, indexes)):
        for k, key in enumerate(keys):
            if names[k]:
                continue
            base = columns[key[0]].name
            cand, n = base, 2
            while cand.lower() in taken:
                cand, n = f"{base}_{n}", n + 1
            names[k] = cand
            taken.add(cand.lower())
    if fks:
        _foreign_key_indexes(name, columns, pk, uniques, indexes, index_names, fks, taken)
    if checks:
        _name_checks(name, checks, columns)
    if check_refs:
        check_generated(columns)
    for names in (unique_names, index_names):
        seen: set[str] = set()
        for n in names:
            if n.lower() in seen or n.lower() == "primary":
                raise E.ProgrammingError(f"Duplicate key name '{n}'", 1061, "42000")
            seen.add(n.lower())
    if len(set(unique_names) & set(index_names)):
        n = sorted(set(unique_names) & set(index_names))[0]
        raise E.ProgrammingError(f"Duplicate key name '{n}'", 1061, "42000")
    _column_collations(ast, schema_ast, columns)
    return TableSchema(
        name,
        columns,
        pk,
        uniques,
        indexes,
        unique_names=unique_names,
        index_names=index_names,
        foreign_keys=fks,
        checks=checks,
    )


def _collation_name(node) -> str:
    return node.this.name if hasattr(node.this, "name") else str(node.this)


def _column_collations(
    ast: exp.Create, schema_ast: exp.Schema, columns, database: str | None = None
) -> None:
    """A text column's collation when it is not the engine's: its own ``COLLATE``, else the
    table's (``COLLATE=``), else its database's. Kept on its type (``ColumnType.collation``)."""
    from ..sql import collation as C

    cur = C.current().name
    table = database
    for prop in (ast.args.get("properties") or exp.Properties()).expressions:
        if isinstance(prop, exp.CollateProperty):
            table = _collation_name(prop)
    defs = {d.name.lower(): d for d in schema_ast.expressions if isinstance(d, exp.ColumnDef)}
    for col in columns:
        if col.ctype.kind != V.STR or col.ctype.kind.__class__ is V.MemberKind:
            continue
        name = table
        d = defs.get(col.name.lower())
        for cons in d.constraints if d is not None else ():
            if isinstance(cons.kind, exp.CollateColumnConstraint):
                name = _collation_name(cons.kind)
        if name is None:
            continue
        try:
            coll = C.get(name)
        except KeyError:
            raise E.ProgrammingError(f"Unknown collation: '{name}'", 1273, "HY000") from None
        if coll.name != cur:
            col.ctype.collation = coll.name


def _name_checks(table: str, checks: list, columns) -> None:
    """MySQL's names for unnamed CHECK constraints (``<table>_chk_<n>``), and each one's
    columns must exist (3820)."""
    taken = {c[0].lower() for c in checks if c[0]}
    if len(taken) < len([c for c in checks if c[0]]):
        raise E.ProgrammingError("Duplicate check constraint name", 3822, "HY000")
    n = 0
    names = {c.name.lower() for c in columns}
    for chk in checks:
        for col in chk[1].find_all(exp.Column):
            if col.name.lower() not in names:
                raise E.ProgrammingError(
                    f"Check constraint '{chk[0] or table}' refers to non-existing column "
                    f"'{col.name}'.",
                    3820,
                    "HY000",
                )
        if not chk[0]:
            while True:
                n += 1
                cand = f"{N.bare(table)}_chk_{n}"
                if cand.lower() not in taken:
                    break
            chk[0] = cand
            taken.add(cand.lower())


def _foreign_key_indexes(
    table, columns, pk, uniques, indexes, index_names, fks, taken, fk_taken=frozenset()
) -> None:
    """Name the FOREIGN KEYs as MySQL does, and give each the index InnoDB needs: one whose
    leading columns are the key's, made (named after the constraint, else its first column)
    when the table has none."""
    from ..foreign_keys import name_keys

    for fk in fks:
        cols = []
        for c in fk.cols:
            i = next((j for j, col in enumerate(columns) if col.name.lower() == c.lower()), None)
            if i is None:
                raise E.ProgrammingError(f"Key column '{c}' doesn't exist in table", 1072, "42000")
            cols.append(i)
        if any(list(k[: len(cols)]) == cols for k in [pk] + uniques + indexes if k):
            continue
        base = fk.name or columns[cols[0]].name
        cand, n = base, 2
        while cand.lower() in taken:
            cand, n = f"{base}_{n}", n + 1
        taken.add(cand.lower())
        indexes.append(cols)
        index_names.append(cand)
    seen = {fk.name.lower() for fk in fks if fk.name}
    if len(seen) < len([fk for fk in fks if fk.name]):
        raise E.ProgrammingError("Duplicate foreign key constraint name", 1826, "HY000")
    name_keys(table, fks, seen | set(fk_taken))


def _default_value(e: exp.Expression, ctype, col: str):
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, (exp.CurrentTimestamp, exp.CurrentDate)) or (
        isinstance(e, exp.Anonymous) and str(e.this).upper() in ("NOW", "CURRENT_TIMESTAMP")
    ):
        return lambda: V.coerce_for_column(_dt.datetime.now().replace(microsecond=0), ctype, col)
    try:
        v = compile_expr(e, Scope([]), allow_params=False).fn((), None)
    except (Unsupported, E.Error):
        raise E.ProgrammingError(f"Invalid default value for '{col}'", 1067, "42000") from None
    if isinstance(v, str) and ctype.kind == V.INT and v.strip() == "":
        return 0
    try:
        return V.coerce_for_column(v, ctype, col) if v is not None else None
    except E.Error:  # a default the column cannot hold
        raise E.ProgrammingError(f"Invalid default value for '{col}'", 1067, "42000") from None

"""ALTER TABLE and RENAME TABLE: a table's new definition and how its rows carry over.

``plan_alter`` turns the current schema and an ``ALTER TABLE`` statement into the new schema
plus, for every new column, the old column it takes its values from (or none: a new column,
filled with its default). ``carry_rows`` converts the stored rows to the new definition the
way MySQL's copying ALTER does in strict mode: a value that does not fit stops the statement
with MySQL's error and nothing changes. The engine then rebuilds the table in base storage
and the dataflow over it (see ``Engine._alter_table``).
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from . import errors as E
from .sql import values as V
from .sql.dialect import DIALECT
from .sql.names import bare


@dataclasses.dataclass
class AlterPlan:
    schema: object  # the new TableSchema
    origin: list  # new column -> old column index, or None for a new column
    new_fks: list = dataclasses.field(default_factory=list)  # FOREIGN KEYs the ALTER adds


def _unknown_column(name: str, table: str) -> E.ProgrammingError:
    return E.ProgrammingError(f"Unknown column '{name}' in '{table}'", 1054, "42S22")


def _cant_drop(what: str, name: str) -> E.ProgrammingError:
    return E.ProgrammingError(f"Can't DROP {what} `{name}`; check that it exists", 1091, "42000")


def _not_supported(what: str) -> E.NotSupportedError:
    return E.NotSupportedError(f"This version doesn't yet support 'ALTER TABLE ... {what}'")


def _name_of(e) -> str:
    if isinstance(e, exp.Ordered):
        e = e.this
    return e.name


def _column_from_def(coldef: exp.ColumnDef):
    """(column, is primary key, is unique) of one column definition, read the way CREATE TABLE
    reads it."""
    from .engine import _schema_from_create
    from .sql.parse import parse

    d = coldef.copy()
    d.set("position", None)
    ast, _ = parse(f"CREATE TABLE `_` ({d.sql(DIALECT)})")
    try:
        s = _schema_from_create(ast, check_refs=False)
    except E.ProgrammingError as e:
        if e.errno != 1067:
            raise
        # MySQL reports a bad DEFAULT after every other check of the statement: read the
        # column without it and hand the error back for later
        for c in list(d.constraints):
            if isinstance(c.kind, exp.DefaultColumnConstraint):
                c.pop()
        ast, _ = parse(f"CREATE TABLE `_` ({d.sql(DIALECT)})")
        s = _schema_from_create(ast, check_refs=False)
        return s.columns[0], bool(s.primary_key), bool(s.uniques), e
    return s.columns[0], bool(s.primary_key), bool(s.uniques), None


def _check_null_default(d: exp.ColumnDef) -> None:
    """``NOT NULL DEFAULT NULL``: MySQL rejects it while reading the statement."""
    kinds = [c.kind for c in d.constraints]
    if any(
        isinstance(k, exp.NotNullColumnConstraint) and not k.args.get("allow_null") for k in kinds
    ) and any(
        isinstance(k, exp.DefaultColumnConstraint) and isinstance(k.this, exp.Null) for k in kinds
    ):
        raise E.ProgrammingError(f"Invalid default value for '{d.name}'", 1067, "42000")


def plan_alter(schema, actions: list, table_name: str, exists=None) -> AlterPlan:
    """The new schema after ``actions`` (an ``exp.Alter``'s), checked as MySQL checks them.

    ``exists(name)`` tells whether a table of that name exists (a rename target)."""
    from .storage.sqlite import TableSchema

    cols = [dataclasses.replace(c) for c in schema.columns]
    origin: list = list(range(len(cols)))
    pk = [cols[i].name for i in schema.primary_key]
    keys = []  # [kind, name, [column names]] in MySQL's order: UNIQUE keys, then the others
    for name, key in zip(schema.unique_names, schema.uniques):
        keys.append(["unique", name, [cols[i].name for i in key]])
    for name, key in zip(schema.index_names, schema.indexes):
        keys.append(["index", name, [cols[i].name for i in key]])
    new_name = schema.name
    fks = [dataclasses.replace(fk, cols=list(fk.cols)) for fk in schema.foreign_keys]
    checks = [list(c) for c in schema.checks]
    new_fks: list = []
    deferred: list = []  # errors MySQL reports after the statement's other checks

    def find(name: str) -> int | None:
        low = name.lower()
        return next((i for i, c in enumerate(cols) if c.name.lower() == low), None)

    def place(i: int, col, orig, position) -> None:
        """Put a column at ``position`` (FIRST, AFTER c, or the end), ``i`` its old place."""
        if i is not None:
            del cols[i]
            del origin[i]
        where = len(cols)
        if position is not None:
            if str(position.args.get("position") or "").upper() == "FIRST":
                where = 0
            else:
                after = position.this.name
                j = find(after)
                if j is None:
                    raise _unknown_column(after, table_name)
                where = j + 1
        elif i is not None:
            where = i
        cols.insert(where, col)
        origin.insert(where, orig)

    def rename_in_keys(old: str, new: str) -> None:
        low = old.lower()
        for k in keys:
            k[2] = [new if c.lower() == low else c for c in k[2]]
        pk[:] = [new if c.lower() == low else c for c in pk]
        for fk in fks:
            fk.cols = [new if c.lower() == low else c for c in fk.cols]
        if old.lower() != new.lower():
            check_uses(old, "renamed")

    def check_uses(column: str, what: str) -> None:
        for name, expr, _c in checks:
            if any(c.name.lower() == column.lower() for c in expr.find_all(exp.Column)):
                raise E.ProgrammingError(
                    f"Check constraint '{name}' uses column '{column}', hence column cannot be "
                    f"dropped or {what}.",
                    3959,
                    "HY000",
                )

    def add_key(kind: str, name: str, names: list[str]) -> None:
        for n in names:
            if find(n) is None:
                raise E.ProgrammingError(f"Key column '{n}' doesn't exist in table", 1072, "42000")
        if kind == "primary":
            if pk:
                raise E.ProgrammingError("Multiple primary key defined", 1068, "42000")
            pk.extend(names)
            return
        keys.append([kind, name, list(names)])

    def add_column_keys(col, is_pk: bool, is_unique: bool) -> None:
        if is_pk:
            add_key("primary", "PRIMARY", [col.name])
        if is_unique:
            add_key("unique", "", [col.name])

    def phase(a) -> int:
        # MySQL applies a statement's DROPs to the old table first, then changes its columns,
        # then adds columns, then keys (so ``ADD a, DROP a`` replaces a)
        if isinstance(a, (exp.Drop, exp.DropPrimaryKey)):
            return 0
        if isinstance(a, (exp.ModifyColumn, exp.RenameColumn, exp.AlterColumn)):
            return 1
        if isinstance(a, exp.ColumnDef):
            return 2
        return 3

    for action in actions:
        if isinstance(action, exp.ColumnDef):
            _check_null_default(action)
        elif isinstance(action, exp.ModifyColumn):
            _check_null_default(action.this)
    for action in sorted(actions, key=phase):
        if isinstance(action, exp.ColumnDef):  # ADD [COLUMN]
            col, is_pk, is_unique, bad = _column_from_def(action)
            position = action.args.get("position")
            if position is not None and position.this is not None:
                if find(position.this.name) is None:
                    raise _unknown_column(position.this.name, table_name)
            if find(action.name) is not None:
                if action.args.get("exists"):
                    continue  # ADD COLUMN IF NOT EXISTS
                raise E.ProgrammingError(f"Duplicate column name '{action.name}'", 1060, "42S21")
            deferred.append(bad)
            place(None, col, None, action.args.get("position"))
            add_column_keys(col, is_pk, is_unique)
        elif isinstance(action, exp.ModifyColumn):  # MODIFY c ... / CHANGE old new ...
            d = action.this
            old = action.args.get("rename_from")
            old_name = old.name if old is not None else d.name
            i = find(old_name)
            if i is None:
                raise _unknown_column(old_name, table_name)
            j = find(d.name)
            if j is not None and j != i:
                raise E.ProgrammingError(f"Duplicate column name '{d.name}'", 1060, "42S21")
            col, is_pk, is_unique, bad = _column_from_def(d)
            deferred.append(bad)
            rename_in_keys(cols[i].name, col.name)
            place(i, col, origin[i], d.args.get("position"))
            add_column_keys(col, is_pk, is_unique)
        elif isinstance(action, exp.RenameColumn):
            old_name, new = action.this.name, action.args["to"].name
            i = find(old_name)
            if i is None:
                raise _unknown_column(old_name, table_name)
            j = find(new)
            if j is not None and j != i:
                raise E.ProgrammingError(f"Duplicate column name '{new}'", 1060, "42S21")
            rename_in_keys(cols[i].name, new)
            cols[i] = dataclasses.replace(cols[i], name=new)
        elif isinstance(action, exp.AlterColumn):  # ALTER [COLUMN] c SET/DROP DEFAULT
            i = find(action.name)
            if i is None:
                raise _unknown_column(action.name, table_name)
            extra = set(k for k, v in action.args.items() if v) - {"this", "default", "drop"}
            if extra:
                raise _not_supported(f"ALTER COLUMN {', '.join(sorted(extra))}")
            c = cols[i]
            if action.args.get("drop"):
                cols[i] = dataclasses.replace(c, has_default=False, default=None)
            else:
                from .engine import _default_value

                value = _default_value(action.args["default"], c.ctype, c.name)
                cols[i] = dataclasses.replace(c, has_default=True, default=value)
        elif isinstance(action, exp.DropPrimaryKey):
            if not pk:
                raise _cant_drop("INDEX", "PRIMARY")
            pk.clear()
        elif isinstance(action, exp.Drop):
            kind = str(action.args.get("kind") or "").upper()
            for target in action.args.get("tables") or action.expressions or []:
                name = target.name
                if kind == "COLUMN":
                    i = find(name)
                    if i is None:
                        if action.args.get("exists"):
                            continue
                        raise _cant_drop("COLUMN", name)
                    if len(cols) == 1:
                        raise E.ProgrammingError(
                            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
                            1090,
                            "42000",
                        )
                    low = cols[i].name.lower()
                    # a CHECK on this column alone goes with it; one on others too refuses
                    checks[:] = [
                        c
                        for c in checks
                        if {x.name.lower() for x in c[1].find_all(exp.Column)} != {low}
                    ]
                    check_uses(cols[i].name, "renamed")
                    del cols[i]
                    del origin[i]
                    # its key parts go at the end, unless a column of that name is added
                elif kind in ("INDEX", "KEY", "CONSTRAINT"):
                    if name.upper() == "PRIMARY" and kind != "CONSTRAINT":
                        if not pk:
                            raise _cant_drop("INDEX", name)
                        pk.clear()
                        continue
                    if kind == "CONSTRAINT":
                        chk = next((c for c in checks if c[0].lower() == name.lower()), None)
                        fk = next((f for f in fks if f.name.lower() == name.lower()), None)
                        if chk is not None:
                            checks.remove(chk)
                            continue
                        if fk is not None:
                            fks.remove(fk)
                            continue
                    k = next((k for k in keys if k[1].lower() == name.lower()), None)
                    if k is None or (kind == "CONSTRAINT" and k[0] != "unique"):
                        if action.args.get("exists"):
                            continue
                        if kind == "CONSTRAINT":
                            raise _not_supported(
                                f"DROP CONSTRAINT {name} (no such UNIQUE key; CHECK and "
                                "FOREIGN KEY constraints are not kept)"
                            )
                        raise _cant_drop("INDEX", name)
                    keys.remove(k)
                elif kind == "CHECK":
                    chk = next((c for c in checks if c[0].lower() == name.lower()), None)
                    if chk is None:
                        if action.args.get("exists"):
                            continue
                        raise E.ProgrammingError(
                            f"Check constraint '{name}' is not found in the table.", 3821, "HY000"
                        )
                    checks.remove(chk)
                elif kind == "FOREIGN KEY":
                    fk = next((f for f in fks if f.name.lower() == name.lower()), None)
                    if fk is None:
                        if action.args.get("exists"):
                            continue
                        raise _cant_drop("FOREIGN KEY", name)
                    fks.remove(fk)
                else:
                    raise _not_supported(f"DROP {kind}")
        elif isinstance(action, exp.AddConstraint):
            for item in action.expressions:
                cname = ""
                if isinstance(item, exp.Constraint):
                    cname = item.name
                    inner = item.expressions
                else:
                    inner = [item]
                for it in inner:
                    if isinstance(it, exp.PrimaryKey):
                        add_key("primary", "PRIMARY", [_name_of(e) for e in it.expressions])
                    elif isinstance(it, exp.UniqueColumnConstraint):
                        target = it.this
                        names = [_name_of(e) for e in target.expressions]
                        kname = target.this.name if target.this is not None else ""
                        add_key("unique", kname or cname, names)
                    elif isinstance(it, exp.IndexColumnConstraint):
                        kind = str(it.args.get("kind") or "").upper()
                        if kind in ("FULLTEXT", "SPATIAL"):
                            raise _not_supported(f"ADD {kind} INDEX")
                        names = [_name_of(e) for e in it.expressions]
                        add_key("index", it.name if it.this is not None else "", names)
                    elif isinstance(it, exp.CheckColumnConstraint):
                        if cname and any(c[0].lower() == cname.lower() for c in checks):
                            raise E.ProgrammingError(
                                "Duplicate check constraint name", 3822, "HY000"
                            )
                        for ref in it.this.find_all(exp.Column):
                            if find(ref.name) is None:
                                raise E.ProgrammingError(
                                    f"Check constraint '{cname or table_name}' refers to "
                                    f"non-existing column '{ref.name}'.",
                                    3820,
                                    "HY000",
                                )
                        if not cname:
                            n = 1
                            taken = {c[0].lower() for c in checks}
                            while f"{bare(new_name)}_chk_{n}".lower() in taken:
                                n += 1
                            cname = f"{bare(new_name)}_chk_{n}"
                        checks.append([cname, it.this, ""])
                    elif isinstance(it, exp.ForeignKey):
                        from .foreign_keys import from_ast

                        fk = from_ast(it, cname)
                        for c in fk.cols:
                            if find(c) is None:
                                raise E.ProgrammingError(
                                    f"Key column '{c}' doesn't exist in table", 1072, "42000"
                                )
                        if fk.name and any(f.name.lower() == fk.name.lower() for f in fks):
                            raise E.ProgrammingError(
                                "Duplicate foreign key constraint name", 1826, "HY000"
                            )
                        fks.append(fk)
                        new_fks.append(fk)
                    else:
                        what = type(it).__name__.replace("ColumnConstraint", "")
                        raise _not_supported(f"ADD {what.upper()} (not kept yet)")
        elif isinstance(action, exp.AlterRename):
            target = action.this.name
            if target.lower() != new_name.lower() and exists is not None and exists(target):
                raise E.ProgrammingError(
                    f"Table '{target}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
                )
            new_name = target
        elif isinstance(action, exp.RenameIndex):
            old_name, new = action.this.name, action.args["to"].name
            k = next((k for k in keys if k[1].lower() == old_name.lower()), None)
            if k is None:
                raise E.ProgrammingError(
                    f"Key '{old_name}' doesn't exist in table '{table_name}'", 1176, "42000"
                )
            if any(o is not k and o[1].lower() == new.lower() for o in keys):
                raise E.ProgrammingError(f"Duplicate key name '{new}'", 1061, "42000")
            k[1] = new
        else:
            raise _not_supported(type(action).__name__)

    for err in deferred:
        if err is not None:
            raise err
    from .engine import check_generated

    check_generated(cols)
    for fk in fks:
        gone = [c for c in fk.cols if find(c) is None]
        if gone:  # the column a foreign key needs (and its index) cannot go
            raise E.OperationalError(
                f"Cannot drop index '{fk.name}': needed in a foreign key constraint",
                1553,
                "HY000",
            )
    # a key part whose column was dropped leaves its key; a key left with no part goes
    pk[:] = [c for c in pk if find(c) is not None]
    for k in keys:
        k[2] = [c for c in k[2] if find(c) is not None]
    keys[:] = [k for k in keys if k[2]]

    # keys by column position, named as MySQL names them (after the first column: _2, _3 ...)
    def idx(names: list[str]) -> list[int]:
        out = []
        for n in names:
            i = find(n)
            if i is None:
                raise E.ProgrammingError(f"Key column '{n}' doesn't exist in table", 1072, "42000")
            out.append(i)
        return out

    taken = {k[1].lower() for k in keys if k[1]}
    for k in keys:
        if not k[1]:
            base = cols[idx(k[2])[0]].name
            cand, n = base, 2
            while cand.lower() in taken:
                cand, n = f"{base}_{n}", n + 1
            k[1] = cand
            taken.add(cand.lower())
    seen: set[str] = set()
    for k in keys:
        if k[1].lower() in seen or k[1].lower() == "primary":
            raise E.ProgrammingError(f"Duplicate key name '{k[1]}'", 1061, "42000")
        seen.add(k[1].lower())
    primary = idx(pk)
    for i in primary:
        cols[i] = dataclasses.replace(cols[i], nullable=False)
    autos = [c.name for c in cols if c.auto_increment]
    if len(autos) > 1 or (
        autos
        and not any(
            ks and ks[0] == find(autos[0])
            for ks in [primary] + [idx(k[2]) for k in keys]  # an auto column must lead a key
        )
    ):
        raise E.ProgrammingError(
            "Incorrect table definition; there can be only one auto column and it must be "
            "defined as a key",
            1075,
            "42000",
        )
    uniques = [k for k in keys if k[0] == "unique"]
    indexes = [k for k in keys if k[0] == "index"]
    unique_idx = [idx(k[2]) for k in uniques]
    index_idx = [idx(k[2]) for k in indexes]
    index_names = [k[1] for k in indexes]
    for fk in fks:
        if fk in new_fks:
            continue
        cols_i = idx(fk.cols)
        if not any(list(k[: len(cols_i)]) == cols_i for k in [primary] + unique_idx + index_idx):
            raise E.OperationalError(
                f"Cannot drop index '{fk.name}': needed in a foreign key constraint", 1553, "HY000"
            )
    if new_fks:
        from .engine import _foreign_key_indexes

        taken = {n.lower() for n in index_names + [k[1] for k in uniques]}
        old_fks = [f for f in fks if f not in new_fks]
        _foreign_key_indexes(
            new_name,
            cols,
            primary,
            unique_idx,
            index_idx,
            index_names,
            new_fks,
            taken,
            fk_taken={f.name.lower() for f in old_fks},
        )
        fks = old_fks + new_fks
        _check_fk_names(fks)
    new = TableSchema(
        new_name,
        cols,
        primary,
        unique_idx,
        index_idx,
        unique_names=[k[1] for k in uniques],
        index_names=index_names,
        foreign_keys=fks,
        checks=checks,
    )
    return AlterPlan(new, origin, new_fks)


def _check_fk_names(fks: list) -> None:
    seen: set[str] = set()
    for fk in fks:
        if fk.name.lower() in seen:
            raise E.ProgrammingError("Duplicate foreign key constraint name", 1826, "HY000")
        seen.add(fk.name.lower())


def _same_type(a, b) -> bool:
    return (a.kind, a.mysql_name, a.unsigned, a.length, a.precision, a.scale, a.values) == (
        b.kind,
        b.mysql_name,
        b.unsigned,
        b.length,
        b.precision,
        b.scale,
        b.values,
    )


def _implicit_default(col, has_rows: bool):
    """What MySQL fills into a new NOT NULL column that has no DEFAULT (``values``'s
    implicit default; the zero date is not kept)."""
    if col.ctype.kind in (V.DATE, V.DATETIME):
        if has_rows:
            raise E.NotSupportedError(
                f"This version doesn't yet support a NOT NULL {col.ctype.mysql_name} column "
                f"'{col.name}' without a DEFAULT added to a table with rows (MySQL fills in the "
                "zero date, which is not kept): give it a DEFAULT"
            )
        return None
    return V.implicit_default(col.ctype, col.name)


def _conversion_error(e: E.Error, col, value, row: int) -> E.Error:
    """MySQL's error for a stored value that does not fit the altered column."""
    if e.errno == E.ER_TRUNCATED_WRONG_VALUE:  # a string that is not a number
        what = {V.INT: "INTEGER", V.DECIMAL: "DECIMAL", V.FLOAT: "DOUBLE"}.get(
            col.ctype.kind, col.ctype.mysql_name
        )
        if col.ctype.kind in (V.DATE, V.DATETIME, V.TIME):
            return E.DataError(
                f"Incorrect {col.ctype.mysql_name.lower()} value: '{V.format_value(value)}' "
                f"for column '{col.name}' at row {row}",
                1292,
                "22007",
            )
        return E.DataError(
            f"Truncated incorrect {what} value: '{V.format_value(value)}'", 1292, "22007"
        )
    if e.errno == 1292:  # not a date or time
        return E.DataError(
            f"Incorrect {col.ctype.mysql_name.lower()} value: '{V.format_value(value)}' for "
            f"column '{col.name}' at row {row}",
            1292,
            "22007",
        )
    if e.errno == 1264:
        return E.DataError(
            f"Out of range value for column '{col.name}' at row {row}", 1264, "22003"
        )
    if e.errno == 4025:  # not JSON for a JSON column: its check, as MariaDB words it
        return e
    if e.errno == 1406 and (
        col.ctype.mysql_name == "BIT" or col.ctype.mysql_name in V._TEXT_BYTES
    ):  # (a BIT or a TEXT type too long: MariaDB's ALTER says so, not 1265)
        return E.DataError(f"Data too long for column '{col.name}' at row {row}", 1406, "22001")
    return E.DataError(f"Data truncated for column '{col.name}' at row {row}", 1265, "01000")


def carry_rows(plan: AlterPlan, old_schema, rows: list) -> list[list]:
    """The stored rows (in storage order) as rows of the new schema; raises MySQL's error for
    the first value that does not fit, naming its row."""
    cols = plan.schema.columns
    fills = []
    now = None
    for i, c in enumerate(cols):
        o = plan.origin[i]
        if o is not None:
            old = old_schema.columns[o]
            if _same_type(old.ctype, c.ctype) and (c.nullable or not old.nullable):
                fills.append(("copy", o))
            else:
                fills.append(("convert", o))
        elif c.auto_increment:
            fills.append(("auto", None))
        elif c.has_default:
            if callable(c.default):
                now = now if now is not None else c.default()
                fills.append(("const", now))
            else:
                fills.append(("const", c.default))
        elif c.nullable:
            fills.append(("const", None))
        else:
            fills.append(("const", _implicit_default(c, bool(rows))))
    out = []
    for n, row in enumerate(rows, 1):
        new = []
        for (how, arg), c in zip(fills, cols):
            if how == "copy":
                new.append(row[arg])
            elif how == "const":
                new.append(arg)
            elif how == "auto":
                new.append(n)
            else:
                v = row[arg]
                if v is None:
                    if not c.nullable:
                        raise E.DataError(
                            f"Data truncated for column '{c.name}' at row {n}", 1265, "01000"
                        )
                    new.append(None)
                    continue
                try:
                    new.append(V.coerce_for_column(v, c.ctype, c.name))
                except E.Error as e:
                    if e.errno == 4025:  # (named with the table, as MariaDB names its check)
                        from .sql import names as N

                        db, table = N.split(old_schema.name)
                        raise V.at_row(e, n, f"`{db or N.HOME}`.`{table}`") from None
                    raise _conversion_error(e, c, v, n) from None
        out.append(new)
    return out


def parse_rename_table(text: str) -> list[tuple[tuple, tuple]]:
    """The ``(old, new)`` pairs of ``RENAME TABLE a TO b[, c TO d ...]``, each name a
    ``(database or None, table)`` pair."""
    import re

    ident = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)(?:\.(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+))?"
    pair = re.compile(rf"\s*({ident})\s+TO\s+({ident})\s*", re.I)
    out = []
    for part in _split_commas(text):
        m = pair.fullmatch(part)
        if m is None:
            raise E.parse_error(f"near '{part.strip()[:40]}'")

        def name(s: str) -> tuple:
            parts = re.findall(r"`((?:[^`]|``)+)`|([A-Za-z0-9_$]+)", s)
            names = [(q or p).replace("``", "`") for q, p in parts]
            return (names[0], names[1]) if len(names) == 2 else (None, names[0])

        out.append((name(m.group(1)), name(m.group(2))))
    return out


def _split_commas(text: str) -> list[str]:
    parts, cur, quoted = [], [], False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts

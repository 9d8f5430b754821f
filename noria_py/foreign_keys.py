"""FOREIGN KEY constraints as InnoDB enforces them.

A child row's key must match a parent row (1452) unless one of its columns is NULL; a parent
row that children reference cannot be deleted, nor its key changed (1451), unless the
constraint says ``ON DELETE``/``ON UPDATE`` ``CASCADE`` or ``SET NULL``: then the children
change with it, in the same statement. The cascaded changes are returned as ordinary
``(table, delta)`` batches, so they flow through the dataflow like any write. With
``SET FOREIGN_KEY_CHECKS=0`` nothing is checked and nothing cascades, as in MySQL.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from . import errors as E
from .sql import values as V
from .sql.collation import ck_tuple
from .sql.names import bare

ACTIONS = ("RESTRICT", "CASCADE", "SET NULL", "NO ACTION", "SET DEFAULT")


@dataclass
class ForeignKey:
    name: str
    cols: list[str]  # the child's columns
    ref_table: str
    ref_cols: list[str]
    on_delete: str = "RESTRICT"
    on_update: str = "RESTRICT"

    def clause(self, parent: str | None = None) -> str:
        """As SHOW CREATE TABLE prints it (``parent``: the referenced table as quoted text)."""

        def cols(names):
            return ",".join(_q(n) for n in names)

        text = (
            f"CONSTRAINT {_q(self.name)} FOREIGN KEY ({cols(self.cols)}) REFERENCES "
            f"{parent or _q(self.ref_table)} ({cols(self.ref_cols)})"
        )
        if self.on_delete != "RESTRICT":  # the default, left out (as MariaDB does)
            text += f" ON DELETE {self.on_delete}"
        if self.on_update != "RESTRICT":
            text += f" ON UPDATE {self.on_update}"
        return text

    def describe(self, table: str) -> str:
        """The parenthesized part of MySQL's 1451 and 1452 messages."""
        return (
            f"(`{table}`, CONSTRAINT `{self.name}` FOREIGN KEY ({', '.join(_q(c) for c in self.cols)}) "
            f"REFERENCES `{self.ref_table}` ({', '.join(_q(c) for c in self.ref_cols)}))"
        )


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def from_ast(fk: exp.ForeignKey, name: str) -> ForeignKey:
    ref = fk.args.get("reference")
    target = ref.this if ref is not None else None
    if not isinstance(target, exp.Schema) or not isinstance(target.this, exp.Table):
        raise E.NotSupportedError("FOREIGN KEY without a referenced table and columns")
    on_delete = on_update = "RESTRICT"
    for opt in (ref.args.get("options") or []) + (fk.args.get("options") or []):
        text = " ".join(str(opt).upper().split())
        for what in ("DELETE", "UPDATE"):
            prefix = f"ON {what} "
            if text.startswith(prefix):
                action = text[len(prefix) :]
                if action not in ACTIONS:
                    raise E.parse_error(f"near '{action}'")
                if action == "SET DEFAULT":
                    raise E.NotSupportedError(
                        "This version doesn't yet support 'ON ... SET DEFAULT' (InnoDB rejects "
                        "it too)"
                    )
                if what == "DELETE":
                    on_delete = action
                else:
                    on_update = action
    return ForeignKey(
        name,
        [c.name for c in fk.expressions],
        target.this.name,
        [c.name for c in target.expressions],
        on_delete,
        on_update,
    )


def name_keys(table: str, fks: list[ForeignKey], taken: set[str]) -> None:
    """Unnamed constraints get MySQL's names: ``<table>_ibfk_<n>``."""
    n = 0
    for fk in fks:
        if fk.name:
            continue
        while True:
            n += 1
            cand = f"{bare(table)}_ibfk_{n}"
            if cand.lower() not in taken:
                break
        fk.name = cand
        taken.add(cand.lower())


def incorrectly_formed(table: str) -> E.Error:
    return E.OperationalError(
        f"Can't create table `{table}` (errno: 150 \"Foreign key constraint is incorrectly "
        'formed")',
        1005,
        "HY000",
    )


def validate(schema, schemas: dict, checks: bool = True) -> None:
    """At CREATE or ALTER: the parent and its columns exist and are a key's leading columns,
    the columns pair up in number and kind (skipped for a missing parent with checks off)."""
    for fk in schema.foreign_keys:
        mine = [schema.index_of(c) for c in fk.cols]
        if any(i is None for i in mine):
            raise E.ProgrammingError(
                f"Key column '{fk.cols[mine.index(None)]}' doesn't exist in table", 1072, "42000"
            )
        parent = schema if fk.ref_table.lower() == schema.name.lower() else None
        parent = parent or schemas.get(fk.ref_table.lower())
        if parent is None:
            if not checks:
                continue
            raise incorrectly_formed(schema.name)
        theirs = [parent.index_of(c) for c in fk.ref_cols]
        if len(theirs) != len(mine) or any(i is None for i in theirs):
            raise incorrectly_formed(schema.name)
        keys = [parent.primary_key] + parent.uniques + parent.indexes
        if not any(list(k[: len(theirs)]) == theirs for k in keys if k):
            raise incorrectly_formed(schema.name)
        for a, b in zip(mine, theirs):
            ka, kb = schema.columns[a].ctype.kind, parent.columns[b].ctype.kind
            if (ka in V.NUMERIC_KINDS) != (kb in V.NUMERIC_KINDS) or (
                ka not in V.NUMERIC_KINDS and ka != kb
            ):
                raise incorrectly_formed(schema.name)


class Enforcer:
    """The checks and cascades of one write statement, on base storage's write connection."""

    def __init__(self, storage):
        self.storage = storage

    def _children(self, parent: str):
        low = parent.lower()
        for s in list(self.storage.schemas.values()):
            for fk in s.foreign_keys:
                if fk.ref_table.lower() == low:
                    yield s, fk

    def _exists(self, table: str, cols: list[str], values: tuple) -> bool:
        from .storage.sqlite import q

        where = " AND ".join(f"{q(c)} = ?" for c in cols)
        row = self.storage.conn.execute(
            f"SELECT 1 FROM {q(self.storage.schemas[table.lower()].name)} WHERE {where} LIMIT 1",
            [V.to_storage(v) for v in values],
        ).fetchone()
        return row is not None

    def check_children(self, schema, rows) -> None:
        """New or changed rows of ``schema``: each non-NULL key finds its parent (1452)."""
        for fk in schema.foreign_keys:
            if fk.ref_table.lower() not in self.storage.schemas:
                raise self._child_error(schema.name, fk)
            idx = [schema.index_of(c) for c in fk.cols]
            seen = set()
            for r in rows:
                key = tuple(r[i] for i in idx)
                if any(v is None for v in key) or key in seen:
                    continue
                seen.add(key)
                if not self._exists(fk.ref_table, fk.ref_cols, key):
                    raise self._child_error(schema.name, fk)

    @staticmethod
    def _child_error(table: str, fk: ForeignKey) -> E.Error:
        return E.IntegrityError(
            "Cannot add or update a child row: a foreign key constraint fails "
            + fk.describe(table),
            1452,
            "23000",
        )

    @staticmethod
    def _parent_error(table: str, fk: ForeignKey) -> E.Error:
        return E.IntegrityError(
            "Cannot delete or update a parent row: a foreign key constraint fails "
            + fk.describe(table),
            1451,
            "23000",
        )

    def _row_by_row(self, old_rows, pidx, cidx, child, fk) -> None:
        """A DELETE of rows of a table referencing itself, as InnoDB runs it: row by row in
        the order given, each checked when it goes, so a row still referenced by a row the
        statement deletes later fails (1451), and so does a row referencing itself."""
        later: set = set()
        for old in reversed(old_rows):
            ref = ck_tuple(tuple(old[i] for i in cidx))
            if None not in ref:
                later.add(ref)
            key = ck_tuple(tuple(old[i] for i in pidx))
            if None not in key and key in later:
                raise self._parent_error(child.name, fk)

    def parent_changed(self, schema, old_rows: list, new_rows: list | None, depth=0) -> list:
        """Rows of ``schema`` deleted (``new_rows`` None) or updated (paired with
        ``new_rows``): children referencing their old keys are refused or changed.
        Returns the cascaded ``(table, delta)`` batches."""
        from .storage.sqlite import q

        if depth > 15:  # InnoDB's limit on cascade depth
            raise E.OperationalError(
                "Foreign key cascade delete/update exceeds max depth of 15.", 3008, "HY000"
            )
        out: list = []
        for child, fk in list(self._children(schema.name)):
            pidx = [schema.index_of(c) for c in fk.ref_cols]
            action = fk.on_delete if new_rows is None else fk.on_update
            keys = []
            for k, old in enumerate(old_rows):
                okey = tuple(old[i] for i in pidx)
                if any(v is None for v in okey):
                    continue
                if new_rows is not None:
                    nkey = tuple(new_rows[k][i] for i in pidx)
                    if okey == nkey:
                        continue
                    keys.append((okey, nkey))
                else:
                    keys.append((okey, None))
            if not keys:
                continue
            cidx = [child.index_of(c) for c in fk.cols]
            if (
                new_rows is None
                and action in ("RESTRICT", "NO ACTION")
                and child.name.lower() == schema.name.lower()
            ):
                self._row_by_row(old_rows, pidx, cidx, child, fk)
            where = " AND ".join(f"{q(c)} = ?" for c in fk.cols)
            for okey, nkey in keys:
                # another parent row may still have the key (a non-unique parent index): only
                # a key that no parent row has any more orphans its children
                if self._exists(schema.name, fk.ref_cols, okey):
                    continue
                found = self.storage.select_with_rowid(
                    child.name, where, [V.to_storage(v) for v in okey]
                )
                if not found:
                    continue
                if action in ("RESTRICT", "NO ACTION"):
                    raise self._parent_error(child.name, fk)
                if action == "CASCADE" and nkey is None:
                    self.storage.delete_rows(child.name, [rid for rid, _ in found])
                    olds = [r for _, r in found]
                    out.append((child.name, [(r, -1) for r in olds]))
                    out.extend(self.parent_changed(child, olds, None, depth + 1))
                    continue
                changes, olds, news = [], [], []
                for rid, r in found:
                    nr = list(r)
                    for j, ci in enumerate(cidx):
                        nr[ci] = None if action == "SET NULL" else nkey[j]
                    for ci in cidx:
                        if nr[ci] is None and not child.columns[ci].nullable:
                            raise E.IntegrityError(
                                f"Column '{child.columns[ci].name}' cannot be null", 1048, "23000"
                            )
                    changes.append((rid, tuple(nr)))
                    olds.append(r)
                    news.append(tuple(nr))
                self.storage.update_rows(child.name, changes)
                delta = [(r, -1) for r in olds] + [(r, 1) for r in news]
                out.append((child.name, delta))
                out.extend(self.parent_changed(child, olds, news, depth + 1))
        return out

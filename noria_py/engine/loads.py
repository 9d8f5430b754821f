"""Bulk loads: LOAD DATA, ``load_rows``/``load_stored``/``load_arrow`` (backfills), and how a
load drops or keeps the views over its table.
"""

from __future__ import annotations

import contextlib
from typing import IO

from sqlglot import exp

from .. import errors as E
from ..result import Result
from ..sql import values as V
from ..sql.expr import Scope, Unsupported, compile_expr
from ..sql.parse import parse
from ..storage.sqlite import q
from .base import _locked
from .inserts import _MISSING, InsertPrepared
from .schema import _quote_ident
from .transactions import Txn
from .writes import _Unlogged


def _row_length_error(k: int, short: bool) -> E.Error:
    """LOAD DATA's error for row ``k`` with too few (1261) or too many (1262) fields."""
    if short:
        return E.DataError(f"Row {k} doesn't contain data for all columns", 1261, "01000")
    return E.DataError(
        f"Row {k} was truncated; it contained more data than there were input columns",
        1262,
        "01000",
    )


# Rows a bulk load (``Engine.load_stored``) puts in the change log one by one; the other
# processes on the file rebuild their views after a larger one.
LOG_ROWS_LIMIT = 5_000


class LoadsMixin:
    """Bulk loads (LOAD DATA, backfills): a part of ``Engine`` (engine/core.py).

    State it owns: ``_infile`` (the LOCAL INFILE a running LOAD DATA reads).
    Calls into other parts: ``_insert`` (inserts), the write path (``_write``, ``_drain``), the
    catalog (``_forget_table``, ``_engine_table_name``, ``_revalidate_views``), ``execute``,
    ``_schema`` and ``_forget_statements`` (core).
    """

    @_locked
    def load_local(self, sql: str, source: IO[bytes], txn: Txn | None = None) -> Result:
        """Run ``LOAD DATA LOCAL INFILE`` with the file a client sent over the wire: ``source``
        (a binary file, read from its start) stands for the file the statement names, which
        is never opened on this machine."""
        self._infile = source
        try:
            return self.execute(sql, (), txn)
        finally:
            self._infile = None

    @_locked
    def load_rows(
        self, table: str, columns: list[str] | None, rows, on_duplicate: str = "error"
    ) -> int:
        """Bulk-load rows (sequences in ``columns`` order) into a base table as one batch.

        Values are coerced to the column types (DataError naming the column when impossible).
        ``on_duplicate``: ``"error"`` (IntegrityError, nothing from this call is applied),
        ``"ignore"`` (keep the existing row) or ``"replace"`` (the loaded row wins). Fully
        materialized nodes below the table receive the rows as one delta. Returns the rows
        loaded (with ``"ignore"``, not counting the rows left out).
        """
        if self._closed:
            raise E.OperationalError("the database is closed", 2006, "HY000")
        schema = self._schema(table)
        cols = schema.columns
        if columns is None:
            positions = list(range(len(cols)))
        else:
            positions = []
            for c in columns:
                i = schema.index_of(c)
                if i is None:
                    raise E.bad_field(c)
                positions.append(i)
        full_rows = []
        width = len(cols)
        for vals in rows:
            row = [None] * width
            for pos, v in zip(positions, vals):
                row[pos] = v
            for i, c in enumerate(cols):
                v = row[i]
                if i not in positions:
                    if c.has_default:
                        v = c.default() if callable(c.default) else c.default
                    elif not c.nullable and not c.auto_increment:
                        raise E.DataError(f"Field '{c.name}' doesn't have a default value", 1364)
                if v is not None:
                    v = V.coerce_for_column(v, c.ctype, c.name)
                elif not c.nullable and not c.auto_increment:
                    raise E.IntegrityError(
                        f"Column '{c.name}' cannot be null", E.ER_BAD_NULL_ERROR, "23000"
                    )
                row[i] = v
            full_rows.append(row)
        if not full_rows:
            return 0
        if on_duplicate not in ("error", "ignore", "replace"):
            raise E.ProgrammingError("on_duplicate must be 'error', 'ignore' or 'replace'")
        auto = schema.auto_increment
        skipped = 0

        def apply():
            nonlocal skipped
            if on_duplicate == "error":
                stored = self.storage.insert_rows(schema.name, full_rows, auto)
                return [(r, 1) for r in stored]
            batch = []
            keysets = (
                [schema.primary_key] + schema.uniques if schema.primary_key else schema.uniques
            )
            for r in full_rows:
                self.storage.savepoint("ld")
                try:
                    stored = self.storage.insert_rows(schema.name, [r], auto)
                    self.storage.release("ld")
                    batch.extend((s, 1) for s in stored)
                except E.IntegrityError:
                    self.storage.rollback_to("ld")
                    if on_duplicate == "ignore":
                        skipped += 1
                        continue
                    # replace: delete the rows that conflict, then insert
                    for ks in keysets:
                        if not ks:
                            continue
                        cond = " AND ".join(f"{q(cols[i].name)} = ?" for i in ks)
                        old = self.storage.select_with_rowid(
                            schema.name, cond, [V.to_storage(r[i]) for i in ks]
                        )
                        if old:
                            self.storage.delete_rows(schema.name, [rid for rid, _ in old])
                            batch.extend((o, -1) for _, o in old)
                    stored = self.storage.insert_rows(schema.name, [r], auto)
                    batch.extend((s, 1) for s in stored)
            return batch

        self._write(schema.name, apply)
        return len(full_rows) - skipped

    def has_views_over(self, table: str) -> bool:
        """Whether the dataflow in this process reads ``table`` (a load then computes every
        row's delta: ``load_stored``'s ``internal``)."""
        node = self.graph.lookup(f"base({self._schema(table).name})")
        return node is not None and bool(node.children)

    def loads_in_one_write(self, table: str) -> bool:
        """Whether a checked load into ``table`` may be written while it is checked, as one
        write of rows that arrive (``noria_py.loader``): no transaction is open on this
        connection (a transaction's load is deltas, kept until it commits)."""
        return not self._closed and not self._cur.active and self._cur.autocommit

    @contextlib.contextmanager
    def bulk_load(self, table: str, rows: int | None):
        """A load of ``rows`` rows into ``table`` runs inside: when views in this process read
        the table and the load is large (at least ``LOG_ROWS_LIMIT`` rows and a quarter of the
        rows the table holds), the queries over the table leave the dataflow for the load, as
        after ALTER TABLE, so the rows go to base storage without a delta each, and the indexes
        the dataflow made on the table are built again after it, by one sort each; when it ends
        (loaded or not), views are installed again from base storage (a full one computed by
        one query) and the other queries are compiled again on their next use (a partial one
        starts empty). A query installed again during the load (another thread reads it)
        receives the rest of the load as deltas. Inside an open transaction, or while another
        connection's transaction is open, every batch is a delta as before."""
        with self.lock:
            dropped = self._drop_queries_for_load(table, rows)
            indexes = self.storage.drop_dataflow_indexes(table) if dropped else []
        try:
            yield dropped
        finally:
            if dropped:
                with self.lock:
                    if not self._closed:
                        self.storage.build_indexes(indexes)
                        self._revalidate_views()

    def _drop_queries_for_load(self, table: str, rows: int | None) -> bool:
        if rows is None or rows < LOG_ROWS_LIMIT or self._closed:
            return False
        if not self.has_views_over(table) or not self.loads_in_one_write(table):
            return False  # the load's rows must stay the transaction's until it commits
        if self._writer is not None and self._writer is not self._cur:
            return False  # its commit would deliver deltas to views rebuilt with its rows
        name = self._schema(table).name
        if rows * 4 < self.storage.count(name):
            return False  # a small load into a large table: deltas cost less than a rebuild
        self._drain()
        self._forget_table(name)
        self._forget_statements()
        self._unshared.clear()
        return True

    @_locked
    def load_stored(self, table: str, stored: list, internal, on_duplicate: str = "error") -> int:
        """Bulk-load full rows already converted to base storage's form (every column, in the
        table's order, each value as ``V.to_storage`` gives it, no NULL for an AUTO_INCREMENT
        column), as one write. ``internal()`` returns the same rows as the dataflow's values;
        it is called only when a delta is needed: views over the table in this process, or
        other processes on the file (a load of more than ``LOG_ROWS_LIMIT`` rows then tells
        them to rebuild their views instead of logging every row). ``on_duplicate`` as for
        ``load_rows``. Returns the rows loaded."""
        if self._closed:
            raise E.OperationalError("the database is closed", 2006, "HY000")
        if on_duplicate not in ("error", "ignore", "replace"):
            raise E.ProgrammingError("on_duplicate must be 'error', 'ignore' or 'replace'")
        if not stored:
            return 0
        schema = self._schema(table)
        node = self.graph.lookup(f"base({schema.name})")
        local = node is not None and bool(node.children)
        logged = self.shared and len(stored) <= LOG_ROWS_LIMIT
        if on_duplicate != "error" and (local or logged):
            # which rows went in decides the delta: row by row
            return self.load_rows(schema.name, None, internal(), on_duplicate)
        count = 0

        def apply():
            nonlocal count
            count = self.storage.insert_stored(schema.name, stored, on_duplicate)
            batch = [(tuple(r), 1) for r in internal()] if local or logged else []
            return batch if logged or not self.shared else _Unlogged(batch)

        self._write(schema.name, apply)
        return count

    @_locked
    def load_arrow(self, table: str, batches, on_duplicate: str = "error") -> int:
        """Bulk-load ``pyarrow.RecordBatch``/``Table`` objects (columns matched by name, the
        others left to their defaults), each converted as ``noria_py.loader`` converts a
        batch: in Arrow where its rules are MySQL's, value by value otherwise."""
        from ..loader import load_batch

        return sum(load_batch(self, table, b, on_duplicate) for b in batches)

    def _load_data(self, spec) -> Result:
        """LOAD DATA INFILE (see ``noria_py.load_data``): the file's rows as one INSERT.

        With LOCAL the file is the client's: the bytes a wire client sent (``load_local``), or,
        embedded, the file at the path (client and server are one process). As in MySQL, LOCAL
        without REPLACE loads as IGNORE does: the server cannot stop the client's transfer
        half-way, so a row with a duplicate key is skipped, a value that does not fit is
        stored as MySQL adjusts it, a short row's missing fields are NULL or their type's zero
        (1261 each) and a long row is cut (1262), each with its warning."""
        from ..load_data import NULL, split_rows

        schema = self._schema(self._engine_table_name(spec.database, spec.table))
        data = self._load_file(spec)
        inputs = spec.columns or [c.name for c in schema.columns]  # columns and @variables
        for n in inputs:
            if not n.startswith("@") and schema.index_of(n) is None:
                raise E.bad_field(n)
        sets = []  # SET col = expr: over the row's input fields (as read: strings or NULL)
        if spec.sets:
            scope = Scope([("", f"__in_{k}", V.STR) for k in range(len(inputs))])
            position = {n.lower(): k for k, n in enumerate(inputs)}

            def to_input(node):
                if isinstance(node, exp.Parameter):
                    key = "@" + node.name.lower()
                elif isinstance(node, exp.Column) and not node.table:
                    key = node.name.lower()
                else:
                    return node
                if key not in position:
                    if key.startswith("@"):
                        return exp.Null()  # an unset user variable is NULL
                    raise E.bad_field(node.name)
                return exp.column(f"__in_{position[key]}")

            for col, text_expr in spec.sets:
                if schema.index_of(col) is None:
                    raise E.bad_field(col)
                sel, _n = parse(f"SELECT {text_expr}")
                expr = sel.expressions[0].transform(to_input)
                try:
                    sets.append((col, compile_expr(expr, scope, allow_params=False).fn))
                except Unsupported as e:
                    raise E.NotSupportedError(f"LOAD DATA ... SET: {e}") from None
        plain_cols = [k for k, n in enumerate(inputs) if not n.startswith("@")]
        names = [inputs[k] for k in plain_cols] + [c for c, _f in sets]
        rows = split_rows(data, spec)
        del data
        mode = spec.mode or ("IGNORE" if spec.local else "")
        verb = {"REPLACE": "REPLACE", "IGNORE": "INSERT IGNORE"}.get(mode, "INSERT")
        cols = ", ".join(_quote_ident(n) for n in names)
        marks = ", ".join("?" for _ in names)
        text = f"{verb} INTO {_quote_ident(schema.name)} ({cols}) VALUES ({marks})"
        ast, n = parse(text)
        prep = InsertPrepared(self, ast, n)
        kinds = [schema.columns[schema.index_of(c)] for c in names]

        plain = not mode
        tails: dict = {}  # long rows IGNORE cut to the input columns (MySQL's warning 1262)
        if mode == "IGNORE":  # a NULL field for a NOT NULL column: 1263, its type's zero
            prep.load_nulls = frozenset(prep.positions[: len(plain_cols)])

        def at_row(err: E.Error, k: int) -> E.Error:
            err = V.at_row(err, k, prep.table_text)
            if "at row" not in err.msg and isinstance(err, E.DataError):
                return type(err)(err.msg + f" at row {k}", err.errno, err.sqlstate)
            return err

        def first_bad(upto: int, then=None) -> None:
            """MySQL converts and writes row by row: the first error it meets wins. The
            rows are run in order on base storage (a plain load also writes them, to meet a
            duplicate key where MySQL does), then everything is undone."""
            savepoint = self._tx
            if savepoint:
                self.storage.savepoint("noria_load")
            else:
                self.storage.begin()
            try:
                for k in range(upto):
                    try:
                        built = prep.build_rows(self, params[k])
                        if plain:
                            self.storage.insert_rows(schema.name, built, prep.auto_col)
                    except E.Error as row_err:
                        raise at_row(row_err, k + 1) from None
                if then is not None:
                    then()
            finally:
                if savepoint:
                    self.storage.rollback_to("noria_load")
                else:
                    self.storage.rollback()

        params: list = []
        for k, fields in enumerate(rows, 1):
            values = tuple(None if v is NULL else v for v in fields)
            if len(values) == len(inputs) + 1 and values[-1] == "":
                values = values[:-1]  # one empty field after the last: MariaDB reads no more
            if mode == "IGNORE" and len(values) != len(inputs):
                if len(values) > len(inputs):  # the extra fields dropped, with a warning
                    values = values[: len(inputs)]
                    tails[len(params)] = [("Warning", 1262, _row_length_error(k, False).msg)]
                else:  # the missing ones: a variable is NULL, a column warned about (1261)
                    values += tuple(
                        None if n.startswith("@") else _MISSING for n in inputs[len(values) :]
                    )
            if len(values) == len(inputs) and (sets or len(plain_cols) != len(inputs)):
                given = tuple(None if v is _MISSING else v for v in values)
                values = tuple(values[j] for j in plain_cols) + tuple(
                    fn(given, ()) for _c, fn in sets
                )
            elif sets or len(plain_cols) != len(inputs):
                first_bad(len(params))  # a short or long row, with variables or SET
                raise _row_length_error(k, len(values) < len(inputs))
            if len(values) != len(names):

                def this_row(values=values, k=k):
                    for v, c in zip(values, kinds):  # the fields this row has come first
                        if v is not None:
                            try:
                                V.coerce_for_column(v, c.ctype, c.name)
                            except E.DataError as row_err:
                                raise at_row(row_err, k) from None
                    if len(values) > len(names) and plain:  # written, the extra field dropped
                        try:
                            built = prep.build_rows(self, values[: len(names)])
                            self.storage.insert_rows(schema.name, built, prep.auto_col)
                        except E.IntegrityError as row_err:
                            raise at_row(row_err, k) from None

                first_bad(len(params), this_row)
                raise _row_length_error(k, len(values) < len(names))
            params.append(values)
        if not params:
            return Result(rowcount=0)
        try:
            # IGNORE: each row's warnings in the file's order (its values', its key's, 1262)
            return self._insert(prep, params, tails)
        except E.Error:
            if mode == "IGNORE":
                raise  # every row is written; an error here is the statement's
            first_bad(len(params))  # MySQL names the file's row (nothing was written)
            raise

    def _load_file(self, spec) -> str:
        """The text of LOAD DATA's file (see ``_load_data``)."""
        source = self._infile if spec.local else None
        if source is not None:
            source.seek(0)
            try:
                return source.read().decode("utf-8")
            except UnicodeDecodeError as e:
                raise E.OperationalError(
                    f"Can't read file '{spec.path}': {e}", 29, "HY000"
                ) from None
        try:
            with open(spec.path, encoding="utf-8", newline="") as f:
                return f.read()
        except FileNotFoundError:
            if spec.local:  # the client's error, as MySQL's client library words it
                raise E.OperationalError(
                    f"File '{spec.path}' not found (Errcode: 2)", 2, "HY000"
                ) from None
            raise E.OperationalError(
                f"File '{spec.path}' not found (Errcode: 2 \"No such file or directory\")",
                29,
                "HY000",
            ) from None
        except (OSError, UnicodeDecodeError) as e:
            raise E.OperationalError(f"Can't read file '{spec.path}': {e}", 29, "HY000") from None

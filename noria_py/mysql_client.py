"""Reading a MySQL or MariaDB source with the database's own command-line client, without Spark.

    conn.backfill("items", "jdbc:mariadb://127.0.0.1:3306/app",
                  options={"dbtable": "items", "user": "app", "password": "secret"})

A ``jdbc:mysql:`` or ``jdbc:mariadb:`` source is read by the ``mariadb`` (or ``mysql``) client
program when one is installed (Debian's ``mariadb-client``) and the source's options are ones it
knows (``dbtable`` or ``query``, ``user``, ``password``; Spark's partitioning and fetch-size
options ask for nothing here); otherwise, or with ``via="spark"``, Spark reads it as before
(``noria_py.spark.jdbc``). The client streams the rows as tab-separated text at about a million
rows a second, Arrow splits them, and the local loader (``noria_py.loader``) checks and converts
every value as it converts a CSV file's text, with the same errors, row numbers and
``skip_bad_rows``. The source is read by one query, so the rows come from one consistent
snapshot: a checked load too large for the loader to hold its checked batches reads the rows
twice, the second time from a temporary copy of the client's output (``keep_copy``), so it
loads the rows it checked without asking the server again.

The text is the server's own, exactly as Spark's path reads dates and times (``CAST(.. AS
CHAR)``): numbers as MySQL writes them, DATE, DATETIME, TIME (beyond a day too) and TIMESTAMP
(in the server's session time zone) as their text, TINYINT(1) and YEAR as numbers. Strings
travel as hexadecimal (``HEX(CONVERT(c USING utf8mb4))``; a binary string's own bytes), so no
tab, newline, backslash, NUL, the text ``NULL`` or an empty string can be mistaken for anything
else; they are decoded here in one pass per column. The column types come from the client's
``--column-type-info``; a BIT or spatial column (or one the client cannot name) leaves the
source to Spark.

The password goes to the client in its environment (``MYSQL_PWD``), never on its command line.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import urllib.parse
from dataclasses import dataclass

from . import errors as E

PROGRAMS = ("mariadb", "mysql")
_SCHEMES = ("jdbc:mysql://", "jdbc:mariadb://")
# Spark's JDBC options that change nothing for a read by one query (or name the driver)
_IGNORED = {"driver", "fetchsize", "numpartitions", "partitioncolumn", "lowerbound", "upperbound"}
_OWN = {"url", "dbtable", "query", "user", "password"} | _IGNORED
# URL parameters the client can follow (others: Spark's driver reads the source)
_URL_PARAMS = {"user", "password", "permitmysqlscheme"}
# the client's names of the types whose text is the value as MySQL writes it
_PLAIN = {
    "DECIMAL", "NEWDECIMAL", "TINY", "SHORT", "LONG", "INT24", "LONGLONG", "FLOAT", "DOUBLE",
    "YEAR", "DATE", "NEWDATE", "TIME", "DATETIME", "TIMESTAMP", "NULL",
}  # fmt: skip
_STRINGS = {
    "VARCHAR", "VAR_STRING", "STRING", "ENUM", "SET",
    "TINY_BLOB", "BLOB", "MEDIUM_BLOB", "LONG_BLOB", "JSON",
}  # fmt: skip
_FIELD = re.compile(r"^Field\s+\d+:\s+`(.*)`\s*$")
TIMEOUT_S = 60  # connecting and describing the source

# The column types a table created from a MySQL source takes as they are (information_schema's
# COLUMN_TYPE); the others (ENUM, SET, JSON, BIT, spatial, ...) are typed from their values
# like any other source's text or binary strings.
OWN_TYPES = {
    "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric",
    "float", "double", "date", "datetime", "timestamp", "time", "year", "char", "varchar",
    "tinytext", "text", "mediumtext", "longtext", "binary", "varbinary", "tinyblob", "blob",
    "mediumblob", "longblob",
}  # fmt: skip
_TABLE_NAME = re.compile(r"^(?:(`(?:[^`]|``)+`|[\w$]+)\.)?(`(?:[^`]|``)+`|[\w$]+)$")


@dataclass(slots=True)
class SourceColumn:
    """A MySQL or MariaDB source column's own definition (from its ``information_schema``)."""

    sql: str | None  # the column type, as CREATE TABLE takes it (None: typed from its values)
    kind: str  # information_schema's DATA_TYPE (lower case): int, varchar, ...
    nullable: bool
    key: int | None  # its place in the primary key (from 1), None if not in it


def columns_query(dbtable: str) -> str | None:
    """The query of ``information_schema`` that describes the table ``dbtable`` names
    (``name``, ``db.name``, either quoted), a row per column (``source_column`` reads it), in
    the table's column order; None when ``dbtable`` names no table (a subquery)."""
    from .sql.literals import sql_literal

    m = _TABLE_NAME.match(dbtable.strip())
    if m is None:
        return None

    def unquote(part: str) -> str:
        return part[1:-1].replace("``", "`") if part.startswith("`") else part

    schema = sql_literal(unquote(m.group(1))) if m.group(1) else "DATABASE()"
    return (
        "SELECT c.COLUMN_NAME AS name, c.DATA_TYPE AS kind, c.COLUMN_TYPE AS type,"
        " c.IS_NULLABLE AS nullable, k.ORDINAL_POSITION AS pk"
        " FROM information_schema.COLUMNS c LEFT JOIN information_schema.KEY_COLUMN_USAGE k"
        " ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME"
        " AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'"
        f" WHERE c.TABLE_SCHEMA = {schema} AND c.TABLE_NAME = {sql_literal(unquote(m.group(2)))}"
        " ORDER BY c.ORDINAL_POSITION"
    )


def source_column(kind, column_type, nullable, pk) -> SourceColumn:
    """A row of ``columns_query`` as a ``SourceColumn``: a TIMESTAMP (an instant in MySQL,
    loaded as the server's text of it) becomes a DATETIME of the same digits."""
    kind = str(kind).lower()
    sql = str(column_type) if kind in OWN_TYPES else None
    if kind == "timestamp":
        sql = "datetime" + sql[len("timestamp") :]
    return SourceColumn(sql, kind, nullable == "YES", int(pk) if pk is not None else None)


def program() -> str | None:
    """The client program on PATH, None when there is none."""
    for name in PROGRAMS:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class _Target:
    host: str
    port: int
    database: str | None
    user: str | None
    password: str | None


def _target(url: str, opts: dict[str, str]) -> _Target | None:
    """Where a ``jdbc:mysql://`` or ``jdbc:mariadb://`` URL points, with the user and password
    of ``opts`` (Spark's option names, any case) or the URL's; None when the client cannot
    follow it (several hosts, parameters it does not know)."""
    low = url.lower()
    scheme = next((s for s in _SCHEMES if low.startswith(s)), None)
    if scheme is None:
        return None
    rest = url[len(scheme) :]
    hostport, _, tail = rest.partition("/")
    path, _, query = tail.partition("?")
    if not hostport or "," in hostport or "@" in hostport or hostport.startswith("["):
        return None
    host, _, port = hostport.partition(":")
    try:
        port_n = int(port) if port else 3306
    except ValueError:
        return None
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    if any(k.lower() not in _URL_PARAMS for k in params):
        return None
    lowered = {k.lower(): v for k, v in params.items()}
    user = opts.get("user", lowered.get("user"))
    password = opts.get("password", lowered.get("password"))
    database = urllib.parse.unquote(path) if path else None
    return _Target(host, port_n, database or None, user, password)


@dataclass
class _Column:
    name: str
    how: str  # "plain", "text" or "binary"
    kind: str = ""  # the client's name of its type: LONG, NEWDECIMAL, VAR_STRING, ...
    length: int = 0  # its display length (a DECIMAL's digits, point and sign)
    decimals: int = 0  # its digits after the point (of a DECIMAL, a time's fraction)
    flags: frozenset = frozenset()  # NOT_NULL, UNSIGNED, ...


# the client's integer types
_INTEGERS = {
    "TINY": "tinyint", "SHORT": "smallint", "INT24": "mediumint", "LONG": "int",
    "LONGLONG": "bigint",
}  # fmt: skip
_TIMES = {"DATE": "date", "NEWDATE": "date", "DATETIME": "datetime", "TIMESTAMP": "datetime"}


def _wire_type(c: _Column) -> str | None:
    """The column type of a query's column from what the client says of it (its type, length,
    decimals and flags), as MySQL would make it (a TIMESTAMP as a DATETIME of the same digits,
    loaded as the server's text of it); None for a string (typed by its values) or a type
    without a rule here."""
    unsigned = " unsigned" if "UNSIGNED" in c.flags else ""
    if c.kind in _INTEGERS:
        return _INTEGERS[c.kind] + unsigned
    if c.kind in ("DECIMAL", "NEWDECIMAL"):
        scale = c.decimals
        precision = c.length - (1 if scale else 0) - (0 if unsigned else 1)
        if not 0 < precision <= 65 or not 0 <= scale <= min(30, precision):
            return None
        return f"decimal({precision},{scale}){unsigned}"
    if c.kind == "DOUBLE":
        return "double"
    if c.kind == "FLOAT":
        return "float"
    if c.kind == "YEAR":
        return "year"
    fraction = f"({c.decimals})" if 0 < c.decimals <= 6 else ""
    if c.kind == "TIME":
        return "time" + fraction
    if c.kind in _TIMES:
        return _TIMES[c.kind] + ("" if c.kind in ("DATE", "NEWDATE") else fraction)
    return None


class ClientSource:
    """A MySQL or MariaDB source the client program reads (``plan``): the loader takes its
    ``columns`` and ``batches``."""

    def __init__(
        self,
        prog: str,
        target: _Target,
        relation: str,
        columns: list[_Column],
        dbtable: str | None = None,
    ):
        self.program = prog
        self.target = target
        self.relation = relation  # what follows FROM
        self.columns = columns
        self.dbtable = dbtable  # the dbtable option (None: a query)
        # keep a copy of the client's output for a second read (the loader's checking pass
        # is followed by its loading pass: ``batches``)
        self.keep_copy = False
        self._copy = None

    def describe(self) -> str:
        t = self.target
        return f"{t.host}:{t.port}/{t.database or ''} ({self.relation})"

    def _command(self, sql: str, *extra: str) -> tuple[list[str], dict]:
        t = self.target
        args = [self.program, "--no-defaults", "--protocol=TCP", "-h", t.host, "-P", str(t.port)]
        args += ["--default-character-set=utf8mb4", *extra]
        if t.user is not None:
            args += ["-u", t.user]
        if t.database is not None:
            args += ["-D", t.database]
        args += ["-e", sql]
        env = dict(os.environ)
        env.pop("MYSQL_PWD", None)
        if t.password is not None:
            env["MYSQL_PWD"] = t.password
        return args, env

    def query(self) -> str:
        items = []
        for c in self.columns:
            q = quote(c.name)
            if c.how == "text":
                items.append(f"HEX(CONVERT({q} USING utf8mb4)) AS {q}")
            elif c.how == "binary":
                items.append(f"HEX({q}) AS {q}")
            else:
                items.append(q)
        return f"SELECT {', '.join(items)} FROM {self.relation}"

    def batches(self, pa):
        """The source's rows, record batches of its columns (text, binary or the server's
        text of the value), as the client's output arrives. With ``keep_copy`` the output is
        also kept in a temporary file, and the next call reads that copy instead of asking the
        server again: a loader's second pass reads the very rows its first pass checked, from
        one snapshot, without the server's and the client's work."""
        copy, self._copy = self._copy, None
        if copy is not None:
            try:
                copy.seek(0)
                yield from self._parsed(pa, copy, None)
            finally:
                copy.close()
            return
        args, env = self._command(self.query(), "--batch", "--quick", "--skip-column-names")
        proc = subprocess.Popen(  # noqa: S603 - our program, our arguments
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        drain = _Drain(proc.stdout)
        tee = _Tee(drain, self) if self.keep_copy else None
        try:
            yield from self._parsed(pa, tee or drain, proc)
        finally:
            if proc.poll() is None:
                proc.kill()
            drain.close()
            proc.wait()
            with contextlib.suppress(OSError):
                proc.stdout.close()
            if tee is not None and (proc.returncode != 0 or not tee.ended):
                tee.drop()  # a read stopped early or failed: no copy of part of it
        if proc.returncode != 0:
            raise self._failed(proc, None)
        if tee is not None and tee.file is not None:
            if self.keep_copy:
                self._copy = tee.file
            else:  # (turned off while it was read: the loader wrote the rows as they came)
                tee.drop()

    def drop_copy(self) -> None:
        """Delete the copy ``keep_copy`` kept of the last read (the loader is done)."""
        copy, self._copy = self._copy, None
        if copy is not None:
            copy.close()

    def _parsed(self, pa, stream, proc):
        """The record batches of the client's output read from ``stream`` (the client
        ``proc``'s output, or a copy of it when ``proc`` is None)."""
        import pyarrow.csv as pcsv

        names = [c.name for c in self.columns]
        try:
            reader = pcsv.open_csv(
                stream,
                read_options=pcsv.ReadOptions(
                    column_names=names, use_threads=False, block_size=1 << 22
                ),
                parse_options=pcsv.ParseOptions(
                    delimiter="\t", quote_char=False, double_quote=False, escape_char=False
                ),
                convert_options=pcsv.ConvertOptions(
                    column_types={n: pa.string() for n in names},
                    null_values=["NULL"],
                    strings_can_be_null=True,
                ),
            )
        except pa.ArrowInvalid as e:
            if proc is None:
                if "Empty CSV" in str(e):
                    return
                raise E.OperationalError(f"cannot read {self.describe()}: {e}") from None
            proc.wait()
            if "Empty CSV" in str(e) and proc.returncode == 0:
                return  # no rows
            raise self._failed(proc, e) from None
        try:
            for batch in reader:  # (the loader cuts them into its own batches: loader._batches)
                yield self._decoded(pa, batch)
        except pa.ArrowInvalid as e:
            if proc is None:
                raise E.OperationalError(f"cannot read {self.describe()}: {e}") from None
            raise self._failed(proc, e) from None

    def _output(self, sql: str, *extra: str) -> bytes:
        """What the client prints for a short query (a description, not the data) run with
        options ``extra``; an OperationalError naming the server's message if it fails."""
        args, env = self._command(sql, *extra)
        try:
            done = subprocess.run(  # noqa: S603 - our program, our arguments
                args, capture_output=True, env=env, timeout=TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise E.OperationalError(f"cannot read {self.describe()}: {e}") from None
        if done.returncode != 0:
            first = _error_line(done.stderr.decode("utf-8", "replace"))
            first = first or f"the client exited {done.returncode}"
            raise E.OperationalError(f"cannot read {self.describe()}: {first}")
        return done.stdout

    def _rows(self, sql: str) -> list[list[str | None]]:
        """The rows of a short query, every value asked for as ``HEX(..)`` in ``sql`` so that
        no character can split a row: decoded here."""
        text = self._output(sql, "--batch", "--skip-column-names").decode("ascii")
        return [
            [None if v == "NULL" else bytes.fromhex(v).decode("utf-8") for v in line.split("\t")]
            for line in text.splitlines()
        ]

    def table_columns(self) -> dict[str, SourceColumn]:
        """The columns of the table ``dbtable`` names, by name, from its ``information_schema``
        (empty for a query or a subquery)."""
        sql = columns_query(self.dbtable) if self.dbtable is not None else None
        if sql is None:
            return {}
        hexed = ", ".join(
            f"HEX(CONVERT(CAST({c} AS CHAR) USING utf8mb4))"
            for c in ("name", "kind", "type", "nullable", "pk")
        )
        described = f"SELECT {hexed} FROM ({sql}) AS d"
        return {r[0]: source_column(*r[1:]) for r in self._rows(described)}

    def longest(self, names: list[str], binary: set[str]) -> dict[str, int | None]:
        """The longest value of each of columns ``names``: in characters, in bytes for those
        in ``binary`` (None: the source has no value there)."""
        if not names:
            return {}
        items = []
        for name in names:
            fn = "LENGTH" if name in binary else "CHAR_LENGTH"
            items.append(f"HEX(CAST(MAX({fn}({quote(name)})) AS CHAR))")
        (row,) = self._rows(f"SELECT {', '.join(items)} FROM {self.relation}")
        return {n: int(v) if v is not None else None for n, v in zip(names, row)}

    def create_table_sql(self, table: str, primary_key=()) -> str | None:
        """A ``CREATE TABLE`` for ``table`` with the source table's own columns, NOT NULLs and
        primary key (``primary_key``, when given, names the key instead), as Spark's read
        makes it (``noria_py.spark.backfill.spark_create_table_sql``) but without Spark: a
        column whose type is not taken as it is (ENUM, SET, JSON, ...) is a text or binary
        string typed by its longest value. A query's columns are typed from the client's
        description of them (``_wire_type``: its types, lengths, decimals and NOT NULLs, as
        MySQL makes a table of a query), with no key unless ``primary_key`` names one. None
        when a column has a type without a rule here (then Spark types the source)."""
        from .loader import binary_column_type, text_column_type

        own = self.table_columns()
        if not own:
            # a query (or a view's subquery): typed from what the client says of its columns
            own = {
                c.name: SourceColumn(
                    _wire_type(c) if c.how == "plain" else None, "", "NOT_NULL" not in c.flags, None
                )
                for c in self.columns
            }
        if {c.name for c in self.columns} != set(own):
            return None
        names = {c.name.lower() for c in self.columns}
        missing = [k for k in primary_key if k.lower() not in names]
        if missing:
            raise E.ProgrammingError(
                f"the source has no column {', '.join(missing)} for the primary key"
            )
        if not primary_key:
            primary_key = [n for _k, n in sorted((c.key, n) for n, c in own.items() if c.key)]
        keys = {k.lower() for k in primary_key}
        typed = [c for c in self.columns if own[c.name].sql is None]
        if any(c.how == "plain" for c in typed):
            return None  # (a number or time type no rule here knows)
        binary = {c.name for c in typed if c.how == "binary"}
        longest = self.longest([c.name for c in typed], binary)
        defs = []
        for c in self.columns:
            mine = own[c.name]
            sql = mine.sql
            if sql is None:
                n = longest[c.name]
                sql = binary_column_type(n) if c.name in binary else text_column_type(n)
            nullable = mine.nullable and c.name.lower() not in keys
            defs.append(f"{quote(c.name)} {sql}{'' if nullable else ' NOT NULL'}")
        if primary_key:
            defs.append("PRIMARY KEY (" + ", ".join(quote(k) for k in primary_key) + ")")
        return f"CREATE TABLE {quote(table)} (\n  " + ",\n  ".join(defs) + "\n)"

    def _failed(self, proc, error) -> E.OperationalError:
        try:
            message = proc.stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            message = ""
        first = _error_line(message) or str(error or "the client failed")
        return E.OperationalError(f"cannot read {self.describe()}: {first}")

    def _decoded(self, pa, batch):
        cols = []
        for c, arr in zip(self.columns, batch.columns):
            if c.how == "plain":
                cols.append(arr)
            else:
                cols.append(unhex(pa, arr, c.how == "text"))
        return pa.RecordBatch.from_arrays(cols, names=[c.name for c in self.columns])


class _Drain:
    """The client's output, read from its pipe on a thread of its own as it comes (up to
    ``AHEAD`` bytes ahead of the reader): a pipe holds 64 KB, so without it the client and the
    server would wait whenever the loader writes a batch to base storage instead of reading.
    The thread does little but ``os.read``, so it hardly ever needs the interpreter while the
    loader's ``executemany`` runs. ``read`` blocks until there are bytes or the output ends."""

    CHUNK = 1 << 20
    AHEAD = 256 << 20
    LEAST = 1 << 20

    def __init__(self, raw):
        import collections
        import fcntl
        import threading

        self.raw = raw
        self.fd = raw.fileno()
        with contextlib.suppress(OSError):  # fewer, larger reads (Linux)
            fcntl.fcntl(self.fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        self.chunks: collections.deque = collections.deque()
        self.buffered = 0
        self.ended = False
        self.stopped = False
        self.error: OSError | None = None
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="noria-client-output", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        cond = self.cond
        try:
            while True:
                data = os.read(self.fd, self.CHUNK)
                with cond:
                    if not data or self.stopped:
                        break
                    self.chunks.append(data)
                    self.buffered += len(data)
                    cond.notify_all()
                    while self.buffered >= self.AHEAD and not self.stopped:
                        cond.wait()
        except OSError as e:
            self.error = e
        finally:
            with cond:
                self.ended = True
                cond.notify_all()

    def read(self, n: int = -1) -> bytes:
        cond = self.cond
        with cond:
            # at least ``LEAST`` bytes when the output has them (or all that is left): Arrow
            # makes one record batch of each read, and a batch has a cost of its own
            least = self.LEAST if n is None or n < 0 else min(n, self.LEAST)
            while self.buffered < least and not self.ended:
                cond.wait()
            if not self.chunks:
                if self.error is not None:
                    raise self.error
                return b""
            if n is None or n < 0:
                n = self.buffered
            out = []
            size = 0
            chunks = self.chunks
            while chunks and size < n:
                c = chunks.popleft()
                if size + len(c) > n:
                    chunks.appendleft(c[n - size :])
                    c = c[: n - size]
                out.append(c)
                size += len(c)
            self.buffered -= size
            cond.notify_all()
        return b"".join(out)

    @property
    def closed(self) -> bool:
        return self.stopped

    def close(self) -> None:
        """Stop reading ahead (the client was killed or has ended: its pipe reaches its end)."""
        with self.cond:
            self.stopped = True
            self.chunks.clear()
            self.buffered = 0
            self.cond.notify_all()
        self.thread.join()


class _Tee:
    """The client's output as Arrow reads it, copied into a temporary file as it passes (while
    the copy stays under half the free space where temporary files go, and the source's
    ``keep_copy`` stays on; otherwise the copy is dropped and a second read asks the server
    again)."""

    def __init__(self, raw, source):
        self.raw = raw
        self.source = source  # its keep_copy turned off: the copy is dropped
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the second read
        self.limit = shutil.disk_usage(tempfile.gettempdir()).free // 2
        self.size = 0
        self.ended = False

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        if not data:
            self.ended = True
        elif self.file is not None:
            if not self.source.keep_copy:  # (the loader writes the rows as they come)
                self.drop()
                return data
            self.size += len(data)
            if self.size > self.limit:
                self.drop()
            else:
                self.file.write(data)
        return data

    @property
    def closed(self) -> bool:
        return self.raw.closed

    def drop(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def unhex(pa, arr, text: bool):
    """A string array of hexadecimal digits (and nulls) as the bytes they spell: a binary array,
    or with ``text`` a string array (the bytes are UTF-8)."""
    import numpy as np

    n = len(arr)
    validity, offsets, data = arr.buffers()
    offs = np.frombuffer(offsets, dtype=np.int32)[arr.offset : arr.offset + n + 1]
    start, end = int(offs[0]), int(offs[-1])
    digits = data.to_pybytes()[start:end] if data is not None else b""
    raw = bytes.fromhex(digits.decode("ascii"))
    new_offsets = ((offs - start) // 2).astype(np.int32)
    if validity is not None and arr.offset:
        validity = pa.array(arr.is_valid()).buffers()[1]  # re-based to offset 0
    out = pa.Array.from_buffers(
        pa.binary(),
        n,
        [validity, pa.py_buffer(new_offsets.tobytes()), pa.py_buffer(raw)],
        null_count=arr.null_count,
    )
    return out.cast(pa.string()) if text else out


def _error_line(message: str) -> str:
    """The client's error (``ERROR 1146 (42S02) at line 1: Table ... doesn't exist``) among
    what it wrote, or its first line of text."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip().strip("-")]
    for ln in lines:
        if ln.startswith("ERROR"):
            return ln
    return lines[0] if lines else ""


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def plan(url: str, options: dict | None) -> ClientSource | None:
    """The client's read of a MySQL or MariaDB JDBC source, or None when the client cannot read
    it as Spark would (no client program, an option or URL parameter it does not know, a BIT or
    spatial column). A source it cannot reach or describe is an OperationalError naming the
    server's message (the same database would refuse Spark too)."""
    prog = program()
    if prog is None or not isinstance(url, str):
        return None
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    if any(k not in _OWN for k in opts):
        return None
    target = _target(url, opts)
    if target is None:
        return None
    if "dbtable" in opts:
        relation = opts["dbtable"]
    elif "query" in opts:
        relation = f"({opts['query']}) AS __noria_query"
    else:
        raise E.ProgrammingError(
            "a JDBC source needs the dbtable option (or query): options={'dbtable': 'name'}"
        )
    source = ClientSource(prog, target, relation, [], opts.get("dbtable"))
    columns = _describe(source)
    if columns is None:
        return None
    source.columns = columns
    return source


def _describe(source: ClientSource) -> list[_Column] | None:
    """The source's columns from the client's ``--column-type-info`` of ``SELECT * ... LIMIT
    0``; None when one has a type whose text the client does not write exactly."""
    out = source._output(
        f"SELECT * FROM {source.relation} LIMIT 0", "--table", "--column-type-info"
    )
    columns: list[_Column] = []
    column = None
    for line in out.decode("utf-8", "replace").splitlines():
        m = _FIELD.match(line)
        if m:
            column = _Column(m.group(1), "")
            columns.append(column)
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if column is None:
            continue
        if key == "Type":
            column.kind = value.split(" (", 1)[0]  # "BLOB (format=json)": a JSON column's text
        elif key == "Collation":
            binary = value.startswith("binary")
            if column.kind in _PLAIN:
                column.how = "plain"
            elif column.kind in _STRINGS:
                column.how = "binary" if binary else "text"
            else:
                return None  # BIT, GEOMETRY, or a type the client has no name for
        elif key == "Length" and value.isdigit():
            column.length = int(value)
        elif key == "Decimals" and value.isdigit():
            column.decimals = int(value)
        elif key == "Flags":
            column.flags = frozenset(value.split())
    if not columns or any(not c.how for c in columns):
        return None
    return columns

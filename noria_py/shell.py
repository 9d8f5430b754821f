"""``noria-py shell``: an interactive SQL shell, on the embedded engine or a MySQL server.

It reads statements ending with ``;`` (or ``\\G`` for one column per line), over as many lines
as they take, and prints results the way the ``mysql`` client does: a table with ``+---+``
borders, ``N rows in set (0.00 sec)``, ``Query OK, N rows affected``, and
``ERROR 1146 (42S02): ...`` for an error. ``EXPLAIN <query>`` shows the dataflow a query runs
as and ``SHOW CACHES`` the installed queries. With a terminal it keeps a readline history
(``~/.noria_py_history`` unless ``--history-file`` or ``$NORIA_PY_HISTFILE`` says otherwise);
fed from a pipe it prints no prompts and stops at the first error (``--force`` goes on).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any
from urllib.parse import unquote, urlsplit

_EXPLAIN = re.compile(r"\s*explain\s+(?!query\s+plan\b)", re.I)

PROMPT = "noria> "
CONTINUE = "    -> "
HISTORY_LENGTH = 1000

HELP = """\
Statements end with ; (a table) or \\G (one column per line) and may span lines.
  EXPLAIN <SELECT ...>;   the dataflow a query runs as (or why it is proxied)
  SHOW CACHES;            the installed queries, their keys, hits and misses
  SHOW TABLES;  DESCRIBE <table>;  SHOW WARNINGS;
Shell commands:
  help, \\h, \\?   this text
  \\c             clear the statement being typed
  quit, exit, \\q leave the shell (so does Ctrl-D)
"""


# --- statements ----------------------------------------------------------------------------


_DELIMITER = re.compile(r"\s*delimiter\s+(\S+)\s*\Z", re.I)


class Splitter:
    """Cuts typed text into statements at ``;`` and ``\\G`` outside quotes and comments.

    ``feed(line)`` returns the statements the line completes, each as ``(sql, vertical)``;
    what is left waits for more lines (``pending``)."""

    def __init__(self) -> None:
        self.buf = ""
        # what ends a statement besides \\G: ``;`` until a ``DELIMITER ;;`` line changes it
        # (as the mysql client does, for a dump's triggers and routines)
        self.delimiter = ";"

    @property
    def pending(self) -> bool:
        return bool(self.buf.strip())

    def clear(self) -> None:
        self.buf = ""

    def feed(self, line: str) -> list[tuple[str, bool]]:
        if not self.pending:
            m = _DELIMITER.match(line)
            if m is not None:
                self.delimiter = m.group(1)
                return []
        self.buf += line if not self.buf else "\n" + line
        delim = self.delimiter
        out: list[tuple[str, bool]] = []
        text = self.buf
        i, start, n = 0, 0, len(text)
        quote = ""
        while i < n:
            c = text[i]
            if quote:
                if c == "\\" and quote != "`":
                    i += 2
                    continue
                if c == quote:
                    quote = ""
            elif c in "'\"`":
                quote = c
            elif c == "#" or (
                c == "-"
                and text.startswith("--", i)
                and text[i + 2 : i + 3] in ("", " ", "\t", "\r", "\n")
            ):
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            elif c == "/" and text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    break  # the comment goes on
                i = end + 2
                continue
            elif text.startswith(delim, i) or (c == "\\" and text[i + 1 : i + 2] in ("G", "g")):
                sql = text[start:i].strip()
                ends = text.startswith(delim, i)
                vertical = not ends and text[i + 1] == "G"
                i += len(delim) if ends else 2  # \g ends a statement as the delimiter does
                if sql:
                    out.append((sql, vertical))
                start = i
                continue
            i += 1
        if start:
            self.buf = text[start:].strip()
        return out


# --- formatting ------------------------------------------------------------------------------


def show(value: Any) -> str:
    """A value as the mysql client prints it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + raw.hex().upper()
        return text if text.isprintable() else "0x" + raw.hex().upper()
    if isinstance(value, datetime.timedelta):  # a TIME value
        total = value.days * 86400 + value.seconds
        sign = "-" if total < 0 or (total == 0 and value.days < 0) else ""
        total = abs(total)
        text = f"{sign}{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
        return text + (f".{value.microseconds:06d}" if value.microseconds else "")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, float):
        from .sql.values import format_value

        return format_value(value)  # as MySQL writes a double: 1e300, 1e15, 0.0000001
    return str(value)


def _numeric(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool) for v in present
    )


def table(
    names: Sequence[str], rows: Sequence[Sequence[Any]], nullable: Sequence[bool] | None = None
) -> str:
    """Rows as a table with +---+ borders, numbers right-aligned and a column that may hold
    NULL at least as wide as NULL (as the mysql client)."""
    cells = [[show(v) for v in r] for r in rows]
    widths = [len(str(n)) for n in names]
    if nullable is not None:
        widths = [max(w, 4) if n else w for w, n in zip(widths, nullable)]
    for r in cells:
        for i, s in enumerate(r):
            widths[i] = max(widths[i], len(s))
    right = [_numeric([r[i] for r in rows]) for i in range(len(names))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [rule, "| " + " | ".join(str(n).ljust(w) for n, w in zip(names, widths)) + " |", rule]
    for r in cells:
        parts = [s.rjust(w) if ra else s.ljust(w) for s, w, ra in zip(r, widths, right)]
        lines.append("| " + " | ".join(parts) + " |")
    lines.append(rule)
    return "\n".join(lines)


def vertical(
    names: Sequence[str], rows: Sequence[Sequence[Any]], nullable: Sequence[bool] | None = None
) -> str:
    """Rows one column per line (the mysql client's \\G)."""
    width = max((len(str(n)) for n in names), default=0)
    lines = []
    for k, r in enumerate(rows, 1):
        lines.append(f"{'*' * 27} {k}. row {'*' * 27}")
        lines += [f"{str(n).rjust(width)}: {show(v)}" for n, v in zip(names, r)]
    return "\n".join(lines)


def _rows_word(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def summary(nrows: int | None, affected: int, seconds: float) -> str:
    took = f"({seconds:.2f} sec)"
    if nrows is None:
        return f"Query OK, {_rows_word(max(affected, 0))} affected {took}"
    if nrows == 0:
        return f"Empty set {took}"
    return f"{_rows_word(nrows)} in set {took}"


# --- connections -----------------------------------------------------------------------------


def parse_mysql_url(url: str) -> dict[str, Any]:
    """``mysql://user:password@host:port/database`` -> pymysql.connect's arguments.
    A ValueError says what is wrong with the URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("mysql", "mysql+pymysql", "mariadb"):
        raise ValueError(f"not a mysql:// URL: {url!r} (try mysql://user:password@host:3306/db)")
    try:
        port = parts.port or 3306
    except ValueError:
        raise ValueError(f"bad port in {url!r}") from None
    if not parts.hostname:
        raise ValueError(f"no host in {url!r} (try mysql://user@127.0.0.1:3306/db)")
    args: dict[str, Any] = {"host": parts.hostname, "port": port}
    args["user"] = unquote(parts.username) if parts.username else "root"
    args["password"] = unquote(parts.password) if parts.password else ""
    db = parts.path.lstrip("/")
    if db:
        args["database"] = unquote(db)
    return args


def connect_remote(url: str):
    """A pymysql connection (autocommit, as the embedded engine) to ``url``; a ConnectionError
    in one line when the server cannot be reached or refuses the login."""
    import pymysql

    args = parse_mysql_url(url)
    try:
        return pymysql.connect(autocommit=True, connect_timeout=10, **args)
    except pymysql.err.OperationalError as e:
        code, msg = (e.args + ("",))[:2] if e.args else (0, str(e))
        raise ConnectionError(
            f"cannot connect to {args['host']}:{args['port']}: {msg} (error {code})"
        ) from None


def database_error(e: BaseException) -> str | None:
    """``ERROR 1146 (42S02): ...`` for an error a statement raised (embedded or pymysql), or
    None when ``e`` is no database error."""
    from . import errors as E

    if isinstance(e, E.Error):
        return f"ERROR {e.errno} ({e.sqlstate}): {e.msg}"
    try:
        import pymysql
    except ImportError:  # pragma: no cover - pymysql is a dependency
        return None
    if isinstance(e, pymysql.err.MySQLError):
        code, msg = (e.args + ("",))[:2] if e.args else (0, str(e))
        return f"ERROR {code}: {msg}"
    return None


# --- the loop --------------------------------------------------------------------------------


class Shell:
    """Runs statements on a DB-API connection and prints them as the mysql client does."""

    def __init__(self, conn: Any, out: IO[str], err: IO[str]) -> None:
        self.conn = conn
        self.out = out
        self.err = err
        # the embedded engine: EXPLAIN installs nothing, as over the wire (Engine.explain)
        engine = getattr(conn, "engine", None)
        self.explain = getattr(engine, "explain", None)

    def _execute(self, sql: str) -> tuple[list[str] | None, list[bool] | None, list, int]:
        """(column names, which may be NULL, rows, affected rows) of one statement."""
        if self.explain is not None and _EXPLAIN.match(sql):
            res = self.explain(sql)
            return res.columns, res.nullable, list(res.rows or ()), res.rowcount
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
            d = cur.description
            if not d:
                return None, None, [], cur.rowcount
            nullable = [bool(c[6]) if len(c) > 6 else True for c in d]
            return [c[0] for c in d], nullable, cur.fetchall(), cur.rowcount
        finally:
            cur.close()

    def run(self, sql: str, vertical_output: bool = False) -> bool:
        """Run one statement and print its result; False when it failed (error printed)."""
        t = time.perf_counter()
        try:
            names, nullable, rows, affected = self._execute(sql)
        except Exception as e:  # noqa: BLE001 - a database error is shown, anything else raised
            line = database_error(e)
            if line is None:
                raise
            print(line, file=self.err, flush=True)
            return False
        took = time.perf_counter() - t
        if names is not None and rows:
            shown = (vertical if vertical_output else table)(names, rows, nullable)
            print(shown, file=self.out)
        print(summary(None if names is None else len(rows), affected, took), file=self.out)
        if self.out.isatty():
            print(file=self.out)
        self.out.flush()
        return True

    def loop(
        self, read: Callable[[str], str], prompts: bool, force: bool, history: Any = None
    ) -> int:
        """Read lines with ``read(prompt)`` (EOFError ends), run each statement; the exit
        code (1 when a statement failed; without ``force`` that stops the loop). With
        ``history`` (readline), a statement typed over several lines becomes one entry."""
        splitter = Splitter()
        status = 0
        typed = 0  # lines of the statement being typed
        while True:
            prompt = (CONTINUE if splitter.pending else PROMPT) if prompts else ""
            try:
                line = read(prompt)
            except EOFError:
                if prompts:
                    print("Bye", file=self.out)
                break
            except KeyboardInterrupt:  # Ctrl-C drops the statement being typed
                splitter.clear()
                typed = 0
                print("^C", file=self.out)
                continue
            word = line.strip().rstrip(";").strip().lower()
            if not splitter.pending and word in ("quit", "exit", "\\q"):
                if prompts:
                    print("Bye", file=self.out)
                break
            if not splitter.pending and word in ("help", "\\h", "\\?", "?"):
                print(HELP, file=self.out, end="")
                continue
            if line.rstrip().endswith("\\c"):
                splitter.clear()
                typed = 0
                continue
            before = splitter.buf
            done = splitter.feed(line)
            typed += 1
            if done and typed > 1 and history is not None:
                _join_history(history, typed, before + "\n" + line)
            if not splitter.pending:
                typed = 0
            for sql, vert in done:
                if not self.run(sql, vert):
                    status = 1
                    if not force:
                        return status
        from .sql.parse import blank

        if splitter.pending and not prompts and not blank(splitter.buf):
            # a script's last statement may lack its ; (comments after the last one are no
            # statement, as the mysql client does not send them)
            if not self.run(splitter.buf.strip()):
                status = 1
        return status


def _join_history(readline: Any, lines: int, text: str) -> None:
    """Replace the last ``lines`` history entries by ``text`` on one line."""
    n = readline.get_current_history_length()
    if n < lines:
        return
    for i in range(lines):
        readline.remove_history_item(n - 1 - i)
    readline.add_history(" ".join(part.strip() for part in text.splitlines() if part.strip()))


def statements(text: str) -> Iterator[tuple[str, bool]]:
    """The statements of ``text`` (the last may lack its ``;``)."""
    sp = Splitter()
    yield from sp.feed(text)
    if sp.pending:
        yield sp.buf.strip(), False


KEYWORDS = (
    "SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET JOIN LEFT ON USING AS AND OR NOT IN "
    "IS NULL LIKE BETWEEN DISTINCT COUNT SUM AVG MIN MAX INSERT INTO VALUES UPDATE SET DELETE "
    "REPLACE CREATE TABLE VIEW INDEX DROP ALTER TRUNCATE EXPLAIN SHOW CACHES TABLES DATABASES "
    "WARNINGS DESCRIBE USE BEGIN COMMIT ROLLBACK PRIMARY KEY INT BIGINT VARCHAR TEXT DECIMAL "
    "DOUBLE DATE DATETIME TIMESTAMP"
).split()


class Completer:
    """Tab completion of SQL keywords and the database's table names (readline)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.matches: list[str] = []

    def tables(self) -> list[str]:
        try:
            cur = self.conn.cursor()
            try:
                cur.execute("SHOW TABLES")
                return [str(r[0]) for r in cur.fetchall()]
            finally:
                cur.close()
        except Exception:  # noqa: BLE001 - no completion rather than an error while typing
            return []

    def complete(self, text: str, state: int) -> str | None:
        if state == 0:
            low = text.lower()
            words = [k for k in KEYWORDS if k.lower().startswith(low)]
            if text[:1].islower():
                words = [w.lower() for w in words]
            self.matches = words + [t for t in self.tables() if t.lower().startswith(low)]
        return self.matches[state] if state < len(self.matches) else None


def _history(path: str | None) -> tuple[Any, str] | None:
    """Readline with the history file loaded, or None without readline."""
    try:
        import readline
    except ImportError:  # pragma: no cover - not on every platform
        return None
    path = os.path.expanduser(
        path or os.environ.get("NORIA_PY_HISTFILE") or os.path.join("~", ".noria_py_history")
    )
    try:
        readline.read_history_file(path)
    except (FileNotFoundError, PermissionError, OSError):
        pass
    readline.set_history_length(HISTORY_LENGTH)
    return readline, path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``noria-py shell``."""
    parser.add_argument(
        "--data",
        metavar="PATH",
        help="database file of the embedded engine (it must exist unless --create); "
        "a new in-memory database when omitted",
    )
    parser.add_argument(
        "--create", action="store_true", help="create the --data file when it does not exist"
    )
    parser.add_argument(
        "--connect",
        metavar="URL",
        help="a MySQL-protocol server instead of the embedded engine, e.g. "
        "mysql://user:password@127.0.0.1:3306/noria (noria-py serve, MariaDB, MySQL)",
    )
    parser.add_argument(
        "-e",
        "--execute",
        metavar="SQL",
        help="run these statements (separated by ;), print their results and exit",
    )
    parser.add_argument(
        "--force", action="store_true", help="go on after a failed statement in a script"
    )
    parser.add_argument(
        "--history-file",
        metavar="PATH",
        help="readline history (default: $NORIA_PY_HISTFILE or ~/.noria_py_history)",
    )


def open_connection(args: argparse.Namespace):
    """The connection ``args`` name: a remote server (--connect) or the embedded engine."""
    if args.connect:
        if args.data:
            raise ValueError("give either --connect or --data, not both")
        return connect_remote(args.connect), args.connect
    from .dbapi import connect

    if args.data:
        return connect(args.data), args.data
    return connect(), "a new in-memory database"


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``noria-py shell``; returns the exit code."""
    from . import __version__

    conn, where = open_connection(args)
    out, err = sys.stdout, sys.stderr
    shell = Shell(conn, out, err)
    try:
        if args.execute is not None:
            for sql, vert in statements(args.execute):
                if not shell.run(sql, vert) and not args.force:
                    return 1
            return 0
        interactive = sys.stdin.isatty()
        if not interactive:

            def read(_prompt: str) -> str:
                line = sys.stdin.readline()
                if not line:
                    raise EOFError
                return line.rstrip("\n")

            return shell.loop(read, prompts=False, force=args.force)
        hist = _history(args.history_file)
        if hist is not None:
            hist[0].set_completer(Completer(conn).complete)
            hist[0].parse_and_bind("tab: complete")
        print(f"noria-py {__version__} shell on {where}.", file=out)
        print("Statements end with ; or \\G. Type help; for help, quit; to leave.\n", file=out)
        try:
            shell.loop(input, prompts=True, force=True, history=hist[0] if hist else None)
            return 0  # as the mysql client: errors were shown, the session ended normally
        finally:
            if hist is not None:
                readline, path = hist
                try:
                    readline.write_history_file(path)
                except OSError as e:
                    print(f"warning: history not saved to {path}: {e}", file=err)
    finally:
        conn.close()

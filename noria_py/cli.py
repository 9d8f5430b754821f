"""The ``noria-py`` command: shell, explain, serve, load and lobsters.

Every failure the user can cause (a bad option, a missing database file, an unreachable
server, invalid SQL) ends the command with one line on stderr and a non-zero exit code, never a
traceback (``NORIA_PY_TRACEBACK=1`` shows it, for reporting a bug). A ``--data`` file that does
not exist is an error unless ``--create`` is given: a typo never makes a new, empty database.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, NoReturn

from . import __version__

EXIT_USAGE = 2  # a bad option or argument (as argparse)
EXIT_FAILED = 1  # the command ran and failed


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad option in one line (and where the help is)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def one_line(e: BaseException) -> str:
    """An exception as the one line the command prints."""
    from .errors import Error

    if isinstance(e, Error):
        return f"error {e.errno} ({e.sqlstate}): {e.msg}"
    args = getattr(e, "args", ())
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        msg = f"error {args[0]}: {args[1]}"  # a MySQL client's error (code, message)
    else:
        msg = f"error: {e}" if str(e) else f"error: {type(e).__name__}"
    return " ".join(msg.split())


def check_data_path(args: argparse.Namespace) -> None:
    """A --data file must exist unless --create (or the command makes its tables itself)."""
    path = getattr(args, "data", None)
    if not path or getattr(args, "create", False) or path == ":memory:":
        return
    if os.path.isdir(path):
        raise FileNotFoundError(f"--data {path} is a directory, not a database file")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no database file {path} (give --create to make a new one there)")


def _explain(args: argparse.Namespace) -> int:
    from .dbapi import connect

    conn = connect(args.data) if args.data else connect()
    try:
        for stmt in args.setup or []:
            conn.execute(stmt)
        if args.dot:
            conn.engine.prepare(args.sql)
            print(conn.engine.explain_dot())
            return 0
        cur = conn.execute("EXPLAIN " + args.sql)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        shown = [["" if v is None else str(v) for v in r] for r in rows]
        widths = [max(len(n), *(len(r[i]) for r in shown)) for i, n in enumerate(names)]
        print("  ".join(n.ljust(w) for n, w in zip(names, widths)).rstrip())
        for r in shown:
            print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        return 0
    finally:
        conn.close()


def _create_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--create",
        action="store_true",
        help="create the --data file when it does not exist (without it, a missing file is "
        "an error)",
    )


def _optional(
    sub: Any, name: str, module: str, help_text: str, extra=None
) -> argparse.ArgumentParser | None:
    """Register a subcommand whose implementation lives in ``module`` (add_arguments and
    run_from_args); without its dependencies it stays listed and says what is missing."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        text = f"{help_text[:-1]} (unavailable: {e})."
        p = sub.add_parser(name, help=text, description=text)
        p.set_defaults(func=lambda a, e=e: _unavailable(name, e))
        return None
    p = sub.add_parser(name, help=help_text, description=help_text)
    mod.add_arguments(p)
    if extra is not None:
        extra(p)
    p.set_defaults(func=mod.run_from_args)
    return p


def _unavailable(name: str, e: ImportError) -> int:
    print(f"error: noria-py {name} is unavailable: {e}", file=sys.stderr)
    return EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="noria-py",
        description="A partially stateful dataflow database: SQL views kept up to date "
        "incrementally.",
    )
    parser.add_argument("--version", action="version", version=f"noria-py {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    text = "Open an interactive SQL shell on a database file, in memory or over the wire."
    p = sub.add_parser("shell", help=text, description=text)
    from . import shell

    shell.add_arguments(p)
    p.set_defaults(func=shell.run_from_args)

    text = "Print the dataflow a SELECT compiles into, or why it is proxied."
    p = sub.add_parser("explain", help=text, description=text)
    p.add_argument("sql", help="the SELECT to explain")
    p.add_argument(
        "--data",
        metavar="PATH",
        help="database file to open (it must exist unless --create; default: a new "
        "in-memory database)",
    )
    _create_flag(p)
    p.add_argument(
        "--setup",
        action="append",
        metavar="SQL",
        help="statement to run first, e.g. a CREATE TABLE (repeatable)",
    )
    p.add_argument("--dot", action="store_true", help="print the whole graph in graphviz format")
    p.set_defaults(func=_explain)

    _optional(
        sub,
        "serve",
        "noria_py.server.mysql",
        "Serve a database over the MySQL wire protocol.",
        extra=_create_flag,
    )
    _optional(sub, "load", "noria_py.spark.backfill", "Load a base table from a file or JDBC.")
    _optional(
        sub,
        "lobsters",
        "noria_py.workloads.lobsters.cli",
        "Drive a database with the Lobsters workload and report latency.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_data_path(args)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into head
        return EXIT_FAILED
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("NORIA_PY_TRACEBACK"):
            raise
        print(one_line(e), file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())

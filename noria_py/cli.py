"""The ``noria-py`` command: serve, load, explain (and the workload generator when installed)."""

from __future__ import annotations

import argparse
import importlib
import sys


def _explain(args) -> int:
    from .dbapi import connect
    from .errors import Error

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
        widths = [max(len(str(n)), *(len(str(r[i])) for r in rows)) for i, n in enumerate(names)]
        print("  ".join(str(n).ljust(w) for n, w in zip(names, widths)))
        for r in rows:
            print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
        return 0
    except Error as e:
        print(f"error {e.errno}: {e}", file=sys.stderr)
        return 1
    finally:
        conn.close()


def _optional(parser_sub, name: str, module: str, help_text: str) -> None:
    """Register a subcommand whose implementation lives in ``module`` (add_arguments/run_from_args)."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        p = parser_sub.add_parser(name, help=help_text + " (unavailable: " + str(e) + ")")
        p.set_defaults(
            func=lambda a, e=e: (print(f"{name} is unavailable: {e}", file=sys.stderr), 2)[1]
        )
        return
    if not hasattr(mod, "add_arguments"):
        return
    p = parser_sub.add_parser(name, help=help_text, description=help_text)
    mod.add_arguments(p)
    p.set_defaults(func=mod.run_from_args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noria-py",
        description="A partially stateful dataflow database: SQL views kept up to date incrementally.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "explain",
        help="print the dataflow a SELECT compiles into",
        description="Print the dataflow nodes of a query (EXPLAIN), or the whole graph with --dot.",
    )
    p.add_argument("sql", help="the SELECT to explain")
    p.add_argument("--data", help="database file to open (default: a new in-memory database)")
    p.add_argument(
        "--setup",
        action="append",
        metavar="SQL",
        help="statement to run first, e.g. a CREATE TABLE (repeatable)",
    )
    p.add_argument("--dot", action="store_true", help="print the whole graph in graphviz format")
    p.set_defaults(func=_explain)
    _optional(sub, "serve", "noria_py.server.mysql", "run the MySQL-wire server")
    _optional(sub, "load", "noria_py.spark.backfill", "backfill a base table through Spark")
    _optional(sub, "lobsters", "noria_py.workloads.lobsters.cli", "run the Lobsters load generator")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

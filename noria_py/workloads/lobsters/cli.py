"""``noria-py lobsters``: prime a database with Lobsters data and drive it open-loop.

noria-py lobsters --scale 0.05 --rate 50 --duration 20
noria-py lobsters --baseline mariadb --variant optimized --json out.json --plot out.png
noria-py lobsters --backend mysql://root@127.0.0.1:3307/noria
python -m noria_py.workloads.lobsters.cli --help
"""

from __future__ import annotations

import argparse
import sys
import time

from . import backends as B
from . import pages, report, schema
from .data import Workload
from .driver import RunConfig, run, run_processes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``noria-py lobsters``."""
    parser.add_argument(
        "--backend",
        default=None,
        metavar="embedded|mysql://...",
        help="database to drive: 'embedded' (the engine in this process, the default) or "
        "mysql://user:pass@host:port/db (any MySQL-protocol server, e.g. noria-py serve); "
        "the workload's tables in that database are dropped and recreated",
    )
    parser.add_argument(
        "--baseline",
        choices=["mariadb"],
        default=None,
        help="start a private mariadbd (Debian's mariadb-server must be installed) on a free "
        "loopback port with a temporary datadir, drive it, and stop it afterwards",
    )
    parser.add_argument(
        "--variant",
        choices=schema.VARIANTS,
        default="natural",
        help="natural: plain queries over derived views; optimized: upstream's hand-written "
        "queries over denormalized counters the page writes keep (default: %(default)s)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="data scale: multiplies every popularity histogram; 1 is 5,797 users, 40,650 "
        "stories, 121,270 comments (default: %(default)s)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=50.0,
        metavar="PAGES_PER_S",
        help="offered load: Poisson arrivals at this many pages/s (default: %(default)s)",
    )
    parser.add_argument(
        "--duration", type=float, default=20.0, help="measured seconds (default: %(default)s)"
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds of load before measuring, not counted (default: %(default)s)",
    )
    parser.add_argument(
        "--in-flight",
        type=int,
        default=50,
        help="cap on outstanding requests, also the number of worker threads and connections "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="load generator processes for a MySQL-protocol backend, each offering rate/N with "
        "in-flight/N connections, so the client is not the bottleneck (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG of latency per page type")
    parser.add_argument(
        "--notifications",
        choices=schema.NOTIFICATION_MODES,
        default="literal",
        help="natural notification view: 'literal' counts what upstream's view counts, "
        "'intended' counts replies to the reader's own content (default: %(default)s)",
    )
    parser.add_argument(
        "--frontpage-order",
        choices=schema.FRONTPAGE_ORDERS,
        default="asc",
        help="natural frontpage: upstream sorts hotness ascending (coldest first); 'desc' "
        "shows the hottest (default: %(default)s)",
    )
    parser.add_argument(
        "--unused-views",
        action="store_true",
        help="also install the natural views no page reads (karma, comment counts)",
    )
    parser.add_argument(
        "--mix",
        choices=["lobsters", "uniform"],
        default="lobsters",
        help="request mix: lobste.rs production weights, or every request type equally likely",
    )


def _progress():
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
        transient=False,
    )


def _reachable(backend: B.MySQLBackend) -> None:
    """Connect once before priming: an unreachable server or a refused login is one line."""
    try:
        backend.connect().close()
    except Exception as e:  # noqa: BLE001 - pymysql's errors: said in one line
        kw = backend.kwargs
        detail = e.args[1] if len(e.args) == 2 and isinstance(e.args[1], str) else str(e)
        raise ConnectionError(
            f"cannot connect to {kw['host']}:{kw['port']} ({backend.url}): {detail}"
        ) from None


def execute(args: argparse.Namespace, console=None) -> dict:
    """Prime, run and summarize; returns the summary dict (see report.summarize)."""
    from rich.console import Console

    console = console or Console(stderr=True)
    if args.baseline and args.backend:
        raise ValueError("give either --backend or --baseline, not both")
    processes = getattr(args, "processes", 1)
    if processes < 1:
        raise ValueError("--processes must be at least 1")
    if processes > 1 and not args.baseline and (args.backend or "embedded") == "embedded":
        raise ValueError(
            "--processes applies to MySQL-protocol backends; the embedded engine lives in "
            "this process"
        )
    workload = Workload(args.scale, args.seed)
    server = None
    if args.baseline == "mariadb":
        console.print("starting mariadbd ...")
        server = B.MariaDBServer().start()
        backend = server.backend()
        label = f"mariadb-{args.variant}"
    else:
        spec = args.backend or "embedded"
        backend = B.open_backend(spec)
        label = "embedded" if spec == "embedded" else spec
        if isinstance(backend, B.MySQLBackend):
            _reachable(backend)
    try:
        console.print(
            f"priming {label}: {workload.nusers} users, {workload.nstories} stories, "
            f"{workload.ncomments} comments (scale {args.scale:g})"
        )
        t = time.perf_counter()
        with _progress() as prog:
            task = prog.add_task("priming", total=1, info="")

            def on_prime(step: str, done: int, total: int) -> None:
                prog.update(task, completed=done, total=total, description=step)

            B.prime(
                backend,
                workload,
                args.variant,
                args.notifications,
                args.frontpage_order,
                args.unused_views,
                progress=on_prime,
                drop_existing=not isinstance(backend, B.EmbeddedBackend),
            )
            prog.update(task, description="warming (every page type 3 times)")
            warm_session = backend.session()
            pages.warm(
                warm_session,
                workload,
                args.variant == "optimized",
                order=args.frontpage_order,
                seed=args.seed,
            )
            warm_session.close()
        prime_s = time.perf_counter() - t
        cfg = RunConfig(
            rate=args.rate,
            duration=args.duration,
            warmup=args.warmup,
            in_flight=args.in_flight,
            seed=args.seed,
            variant=args.variant,
            frontpage_order=args.frontpage_order,
            mix=args.mix,
        )
        total = cfg.warmup + cfg.duration
        with _progress() as prog:
            task = prog.add_task(f"running at {cfg.rate:g} pages/s", total=total, info="")

            def on_run(elapsed: float, issued: int, completed: int, inflight: int) -> None:
                prog.update(
                    task,
                    completed=min(elapsed, total),
                    info=f"issued {issued}  done {completed}  in flight {inflight}",
                )

            if processes > 1:
                result = run_processes(
                    backend.url, args.scale, args.seed, cfg, processes, progress=on_run
                )
            else:
                result = run(backend, workload, cfg, progress=on_run)
        summary = report.summarize(
            result,
            rss_mb=backend.rss_mb(),
            cache=backend.cache_stats(),
            meta={
                "backend": label,
                "scale": args.scale,
                "prime_s": round(prime_s, 2),
                "notifications": args.notifications,
                "frontpage_order": args.frontpage_order,
            },
        )
        for s in result.sessions:
            s.close()
        return summary
    finally:
        backend.close()
        if server is not None:
            server.stop()


def run_from_args(args: argparse.Namespace) -> int:
    from rich.console import Console

    try:
        summary = execute(args)
    except (ValueError, RuntimeError, ConnectionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report.print_report(summary, Console())
    if args.json:
        report.write_json(summary, args.json)
    if args.plot:
        report.plot(summary, args.plot)
    return 1 if summary["errors"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m noria_py.workloads.lobsters.cli",
        description="Run the Lobsters load generator.",
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

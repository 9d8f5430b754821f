"""Upstream mode: noria_py in front of an existing MySQL or MariaDB.

Base storage becomes a mirror of the upstream database's tables: a consistent snapshot
(``snapshot.py``) at a known binlog position, then the ROW binlog from that position applied
one upstream transaction at a time (``replication.py``). The dataflow and its upqueries work
on the mirror as on any base tables. Connections route (``routing.py``): maintained reads come
from the dataflow, everything else goes to the upstream.

    conn = noria_py.connect(upstream="mysql://app:secret@db.internal:3306/shop")
    noria-py serve --upstream mysql://app:secret@db.internal:3306/shop

With a database file (``connect("mirror.db", upstream=...)``, ``serve --db mirror.db``) the
mirror and the binlog position it has applied survive a restart: replication resumes where it
stopped, without a new snapshot.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator

from .replication import Replicator
from .routing import Router
from .snapshot import SnapshotReport, save_position, saved_position, snapshot
from .source import Position, UpstreamURL, check_binlog

log = logging.getLogger("noria_py.upstream")

__all__ = [
    "Mirror",
    "Position",
    "Router",
    "UpstreamURL",
    "attach",
    "show_progress",
    "spark_threshold",
]


class Mirror:
    """An engine's mirror of one upstream database and the replication keeping it current."""

    def __init__(
        self,
        engine,
        url: UpstreamURL,
        replicator: Replicator,
        report: SnapshotReport | None,
        read_your_writes: float | None,
    ) -> None:
        self.engine = engine
        self.url = url
        self.replicator = replicator
        self.snapshot_report = report  # None: resumed from the position in base storage
        self.read_your_writes = read_your_writes
        # SELECT texts the dataflow does not maintain -> the engine's statements_generation
        # when that was found (``Router.maintained``)
        self.not_maintained: dict[str, int] = {}

    def router(self) -> Router:
        return Router(self)

    def sync(self, timeout: float | None = 60.0) -> bool:
        """Wait until everything committed upstream before this call is applied."""
        return self.replicator.sync(timeout)

    def status(self) -> dict:
        return self.replicator.status()

    def close(self) -> None:
        self.replicator.stop()


def spark_threshold(option) -> int | None:
    """The ``upstream_spark_rows`` option as ``snapshot``'s ``spark_rows``: None (the
    default) is ``DEFAULT_SPARK_ROWS`` when pyspark is installed, False never."""
    if option is False:
        return None
    if option is None:
        import importlib.util

        return DEFAULT_SPARK_ROWS if importlib.util.find_spec("pyspark") else None
    return int(option)


DEFAULT_SPARK_ROWS = 1_000_000


def attach(
    engine,
    url: str,
    server_id: int | None = None,
    read_your_writes: float | None = None,
    progress: Callable[[str, int], None] | None = None,
    spark_rows: int | None = None,
) -> Mirror:
    """Mirror the upstream at ``url`` in ``engine`` (snapshot, or resume from the position
    base storage holds) and start replicating; returns once the mirror is exact. Raises
    OperationalError if the upstream cannot be reached or its binlog is not ROW with full
    row images. ``spark_rows``: see ``snapshot``; the engine's ``spark_master`` and
    ``spark_config`` options configure the session."""
    parsed = UpstreamURL.parse(url)
    conn = parsed.connect()
    try:
        check_binlog(conn)
    finally:
        conn.close()
    saved = saved_position(engine, parsed)
    report = None
    exact_at = None
    if saved is not None:
        position, skipped, exact_at = saved
        log.info("upstream %s: resuming at %s", parsed, position)
    else:
        opts = engine.options
        report = snapshot(
            engine,
            parsed,
            progress=progress,
            spark_rows=spark_rows,
            spark_master=opts["spark_master"],
            spark_config=opts["spark_config"],
        )
        position, skipped, exact_at = report.position, report.skipped, report.exact_at
        with engine.lock:
            save_position(engine, parsed, position, skipped, exact_at)
        for name, why in skipped.items():
            log.warning("upstream table %s is not mirrored: %s", name, why)
    rep = Replicator(engine, parsed, position, skipped, server_id)
    # tables copied again after DDL upstream: by Spark too when large
    rep.spark_rows = spark_rows
    rep.spark_master = engine.options["spark_master"]
    rep.spark_config = engine.options["spark_config"]
    if report is not None:
        rep.views = report.views
    rep.start()
    if exact_at is not None:
        # tables Spark read: exact once the binlog from the snapshot on is applied over them
        # (after a restart too, if it stopped before that)
        rep.wait_for(exact_at)
    mirror = Mirror(engine, parsed, rep, report, read_your_writes)
    engine.upstream = mirror
    return mirror


@contextlib.contextmanager
def show_progress(summary: bool = True) -> Iterator[Callable[[str, int], None]]:
    """A snapshot progress callback that shows rows copied per table on stderr: a live line
    on a terminal, and then (``summary``, or always on a terminal) one line per table."""
    from rich.console import Console

    console = Console(stderr=True)
    last: dict[str, int] = {}
    if console.is_terminal:
        with console.status("snapshot: starting") as status:

            def live(table: str, rows: int) -> None:
                last[table] = rows
                status.update(f"snapshot: {table}: {rows:,} rows")

            yield live
    else:

        def plain(table: str, rows: int) -> None:
            last[table] = rows

        yield plain
        if not summary:
            return
    for table, rows in last.items():
        print(f"snapshot: {table}: {rows:,} rows", file=sys.stderr, flush=True)

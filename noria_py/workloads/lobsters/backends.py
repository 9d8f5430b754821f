"""Databases the Lobsters generator can drive, and loading a primed data set into them.

* :class:`EmbeddedBackend`: the in-process engine. The engine is not thread-safe, so every
  session shares one lock and statements run one at a time.
* :class:`MySQLBackend`: any server speaking the MySQL protocol (``mysql://user:pass@host:port/db``),
  through pymysql, one connection per worker thread: MariaDB, MySQL, or ``noria-py serve``.
* :class:`MariaDBServer`: starts Debian's ``mariadbd`` on a free loopback port with a temporary
  datadir (the ``--baseline mariadb`` option) and stops it by pid afterwards.

:func:`prime` creates the schema of a variant, loads the data of a
:class:`~noria_py.workloads.lobsters.data.Workload` and installs the views.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import unquote, urlparse

import psutil

from . import schema
from .data import Workload

ProgressFn = Callable[[str, int, int], None]  # (step, done, total)

LOAD_CHUNK = 500


class EmbeddedSession:
    def __init__(self, conn, lock: threading.Lock):
        self._conn = conn
        self._lock = lock

    def query(self, sql: str, params: Sequence = ()) -> tuple[list[str], list[tuple]]:
        with self._lock:
            cur = self._conn.execute(sql, params)
            rows = cur.fetchall()
            names = [d[0] for d in cur.description] if cur.description else []
        return names, rows

    def execute(self, sql: str, params: Sequence = ()) -> tuple[int, int | None]:
        with self._lock:
            cur = self._conn.execute(sql, params)
            return cur.rowcount, cur.lastrowid

    def close(self) -> None:
        pass


class EmbeddedBackend:
    """The engine in this process (``noria_py.connect``)."""

    name = "embedded"
    supports_views = True

    def __init__(self, path: str | None = None, **options):
        import noria_py

        self._conn = noria_py.connect(path, **options)
        self._lock = threading.Lock()

    def session(self) -> EmbeddedSession:
        return EmbeddedSession(self._conn, self._lock)

    def rss_mb(self) -> float | None:
        return psutil.Process().memory_info().rss / 2**20

    def cache_stats(self) -> dict | None:
        """Reader hits and misses and how many queries are cached vs proxied (SHOW CACHES)."""
        names, rows = self.session().query("SHOW CACHES")
        out = summarize_caches(names, rows)
        out["miss_s"] = round(self._conn.engine.miss_seconds(), 3)
        return out

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def summarize_caches(names: list[str], rows: list[tuple]) -> dict:
    col = {n.lower(): i for i, n in enumerate(names)}
    hits = misses = cached = proxied = 0
    proxied_queries = []
    for r in rows:
        status = r[col["status"]]
        if status == "cached":
            cached += 1
        else:
            proxied += 1
            proxied_queries.append(r[col["query"]])
        hits += int(r[col["hits"]] or 0) if "hits" in col else 0
        misses += int(r[col["misses"]] or 0) if "misses" in col else 0
    total = hits + misses
    return {
        "hits": hits,
        "misses": misses,
        "hit_rate": hits / total if total else None,
        "cached_queries": cached,
        "proxied_queries": proxied,
        "proxied": proxied_queries,
    }


class MySQLSession:
    def __init__(self, conn):
        self._conn = conn
        self._cur = conn.cursor()
        self._sql: dict[str, str] = {}

    def _translate(self, sql: str) -> str:
        out = self._sql.get(sql)
        if out is None:
            out = sql.replace("%", "%%").replace("?", "%s")
            self._sql[sql] = out
        return out

    def query(self, sql: str, params: Sequence = ()) -> tuple[list[str], list[tuple]]:
        cur = self._cur
        cur.execute(self._translate(sql), tuple(params) if params else None)
        rows = list(cur.fetchall())
        names = [d[0] for d in cur.description] if cur.description else []
        return names, rows

    def execute(self, sql: str, params: Sequence = ()) -> tuple[int, int | None]:
        cur = self._cur
        cur.execute(self._translate(sql), tuple(params) if params else None)
        return cur.rowcount, cur.lastrowid

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception:
            pass


def parse_mysql_url(url: str) -> dict:
    """``mysql://user:pass@host:port/db`` -> pymysql.connect keyword arguments."""
    u = urlparse(url)
    if u.scheme not in ("mysql", "mysql+pymysql", "mariadb"):
        raise ValueError(f"not a mysql:// URL: {url!r}")
    kw = {
        "host": u.hostname or "127.0.0.1",
        "port": u.port or 3306,
        "user": unquote(u.username or "root"),
        "password": unquote(u.password or ""),
    }
    db = u.path.lstrip("/")
    if db:
        kw["database"] = db
    return kw


class MySQLBackend:
    """A MySQL-protocol server reached through pymysql."""

    supports_views = True

    def __init__(self, url: str, rss_pid: int | None = None, name: str | None = None):
        self.url = url
        self.name = name or "mysql"
        self.kwargs = parse_mysql_url(url)
        self.rss_pid = rss_pid
        self._sessions: list[MySQLSession] = []
        self._lock = threading.Lock()

    def connect(self):
        import pymysql

        return pymysql.connect(autocommit=True, charset="utf8mb4", **self.kwargs)

    def session(self) -> MySQLSession:
        s = MySQLSession(self.connect())
        with self._lock:
            self._sessions.append(s)
        return s

    def rss_mb(self) -> float | None:
        if self.rss_pid is None:
            return None
        try:
            proc = psutil.Process(self.rss_pid)
            rss = proc.memory_info().rss
            for child in proc.children(recursive=True):
                rss += child.memory_info().rss
            return rss / 2**20
        except psutil.Error:
            return None

    def cache_stats(self) -> dict | None:
        """SHOW CACHES when the server is ``noria-py serve``; None for other servers."""
        try:
            conn = self.connect()
        except Exception:
            return None
        try:
            cur = conn.cursor()
            cur.execute("SHOW CACHES")
            names = [d[0] for d in cur.description]
            return summarize_caches(names, list(cur.fetchall()))
        except Exception:
            return None
        finally:
            conn.close()

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for s in sessions:
            s.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mariadb_available() -> bool:
    return bool(shutil.which("mariadbd") or os.path.exists("/usr/sbin/mariadbd")) and bool(
        shutil.which("mariadb-install-db")
    )


class MariaDBServer:
    """A private ``mariadbd`` on 127.0.0.1 with a throw-away datadir.

    Durability is relaxed (``innodb_flush_log_at_trx_commit=2``) because the engine under
    comparison keeps its base tables in memory; the buffer pool holds the whole data set.
    """

    def __init__(
        self, buffer_pool: str = "512M", collation: str = "utf8mb4_bin", extra_args: tuple = ()
    ):
        self.buffer_pool = buffer_pool
        self.collation = collation
        self.extra_args = tuple(extra_args)  # more mariadbd flags (e.g. --log-bin)
        self.proc: subprocess.Popen | None = None
        self.tmp: str | None = None
        self.port: int | None = None
        self.database = "lobsters"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def url(self) -> str:
        return f"mysql://root@127.0.0.1:{self.port}/{self.database}"

    def start(self, timeout: float = 60.0) -> MariaDBServer:
        mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        install = shutil.which("mariadb-install-db")
        if not os.path.exists(mariadbd) or not install:
            raise RuntimeError(
                "mariadbd not found: apt-get install -y mariadb-server mariadb-client"
            )
        self.tmp = tempfile.mkdtemp(prefix="lobsters-mariadb-")
        datadir = os.path.join(self.tmp, "data")
        log = open(os.path.join(self.tmp, "install.log"), "w")
        subprocess.run(
            [
                install,
                f"--datadir={datadir}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ],
            check=True,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.port = _free_port()
        self._launch(timeout)
        return self

    def _launch(self, timeout: float) -> None:
        """Start ``mariadbd`` on the datadir and port already chosen; wait until it answers."""
        mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        datadir = os.path.join(self.tmp, "data")
        self._log = open(os.path.join(self.tmp, "mariadbd.log"), "a")
        self.proc = subprocess.Popen(
            [
                mariadbd,
                "--no-defaults",
                f"--datadir={datadir}",
                f"--port={self.port}",
                f"--socket={os.path.join(self.tmp, 'mysqld.sock')}",
                f"--pid-file={os.path.join(self.tmp, 'mysqld.pid')}",
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-grant-tables",
                "--skip-name-resolve",
                "--character-set-server=utf8mb4",
                f"--collation-server={self.collation}",
                f"--innodb-buffer-pool-size={self.buffer_pool}",
                "--innodb-flush-log-at-trx-commit=2",
                "--max-connections=500",
                "--log-error=" + os.path.join(self.tmp, "error.log"),
                *self.extra_args,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        import pymysql

        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"mariadbd exited early with code {self.proc.returncode}")
            try:
                conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root")
                break
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("mariadbd did not start in time") from None
                time.sleep(0.2)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        conn.close()

    def restart(self, timeout: float = 60.0) -> None:
        """Stop the server and start it again on the same datadir and port."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)
        if getattr(self, "_log", None):
            self._log.close()
        self._launch(timeout)

    def backend(self, name: str = "mariadb") -> MySQLBackend:
        return MySQLBackend(self.url, rss_pid=self.pid, name=name)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if getattr(self, "_log", None):
            self._log.close()
            self._log = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> MariaDBServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- priming ---------------------------------------------------------------------------------------


def _drop_existing(session) -> None:
    """Remove the workload's views and tables left by an earlier run (MySQL URLs only)."""
    names = [s.split()[2] for s in schema.view_statements("natural", unused_views=True)]
    for view in reversed(names):
        try:
            session.execute(f"DROP VIEW IF EXISTS {view}")
        except Exception:
            pass
    for stmt in schema.table_statements("natural"):
        table = stmt.split()[2]
        try:
            session.execute(f"DROP TABLE IF EXISTS {table}")
        except Exception:
            pass


def prime(
    backend,
    workload: Workload,
    variant: str = "natural",
    notifications: str = "literal",
    frontpage_order: str = "asc",
    unused_views: bool = False,
    progress: ProgressFn | None = None,
    drop_existing: bool = False,
) -> dict[str, int]:
    """Create ``variant``'s schema on ``backend`` and load ``workload``'s data.

    Views are created after the data so that the engine computes their initial contents in one
    pass. Returns the number of rows loaded per table.
    """
    s = backend.session()
    try:
        if drop_existing:
            _drop_existing(s)
        for stmt in schema.table_statements(variant) + schema.seed_statements(variant):
            s.execute(stmt)
        tables = workload.prime(variant)
        total = sum(len(t.rows) for t in tables.values())
        done = 0
        counts = {}
        for name, table in tables.items():
            cols = ", ".join(table.columns)
            row_marks = "(" + ", ".join("?" * len(table.columns)) + ")"
            for i in range(0, len(table.rows), LOAD_CHUNK):
                chunk = table.rows[i : i + LOAD_CHUNK]
                sql = f"INSERT INTO {name} ({cols}) VALUES " + ", ".join([row_marks] * len(chunk))
                s.execute(sql, [v for row in chunk for v in row])
                done += len(chunk)
                if progress:
                    progress(f"loading {name}", done, total)
            counts[name] = len(table.rows)
        views = schema.view_statements(variant, notifications, frontpage_order, unused_views)
        for i, stmt in enumerate(views, 1):
            s.execute(stmt)
            if progress:
                progress(f"view {stmt.split()[2]}", i, len(views))
        return counts
    finally:
        s.close()


def open_backend(spec: str, **options):
    """``embedded`` or a ``mysql://`` URL -> a backend."""
    if spec == "embedded":
        return EmbeddedBackend(**options)
    if spec.startswith(("mysql://", "mysql+pymysql://", "mariadb://")):
        return MySQLBackend(spec, **options)
    raise ValueError(f"unknown backend {spec!r}: use 'embedded' or mysql://user:pass@host:port/db")

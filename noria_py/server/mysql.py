"""``noria-py serve``: the MySQL-wire server.

A client connects with any MySQL driver (pymysql, mysql-connector-python, SQLAlchemy's
``mysql+pymysql://``, the ``mariadb``/``mysql`` command line) and talks to one shared
:class:`noria_py.engine.Engine`.

How a query travels::

    socket -> mysql-mimic handshake and authentication (WireConnection, asyncio streams)
           -> transport handed to connection.CommandProtocol: one data_received callback
              cuts out every complete packet and runs each command synchronously
           -> COM_QUERY point lookup -> ServerState.lifted_lookup -> engine reader lookup
           -> COM_QUERY otherwise    -> Session.execute(sql)     -> Engine.execute(sql, ())
           -> COM_STMT_EXECUTE       -> decode_params -> reader lookup or Session.execute
           <- every response of the batch, framed by server.protocol, in one transport.write

* mysql-mimic (on uvloop) provides the handshake and authentication (mysql_native_password);
  the command phase is :mod:`noria_py.server.connection`'s own, so that prepared statements
  bind their parameters natively (``?`` values go to the engine as bound parameters, never
  pasted into SQL text) and statement texts are never re-parsed per execution.
* Statements about the session (``SET``, ``SELECT @@var``, ``USE``, transactions, ...) are
  answered by :mod:`noria_py.server.session`; its docstring says what reads inside a transaction
  see.
* Literal point lookups sent by client-side-binding drivers are turned into parameterized
  statements (:mod:`noria_py.sql.literals`) so that every key shares one reader.
* The engine is not thread-safe and is called only from the event loop thread: one statement
  runs at a time, to completion. Reader lookups are fast, so this is also the fastest way to
  run them; a slow statement (DDL, a proxied query) holds up the other connections meanwhile.
* Authentication: with no ``--user`` configured, anyone may connect with any user name and
  password. With users configured, unknown users and wrong passwords get error 1045 and the
  connection is closed.
* Bad input (garbage, truncated handshakes, oversized or malformed packets, clients vanishing
  mid-packet) ends only the offending connection.

Run: ``noria-py serve --port 3307`` or ``python -m noria_py.server.mysql --port 3307``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import secrets
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mysql_mimic import packets as mimic_packets
from mysql_mimic.auth import IdentityProvider, NativePasswordAuthPlugin, User
from mysql_mimic.charset import CharacterSet
from mysql_mimic.connection import Connection as MimicConnection
from mysql_mimic.control import LocalControl, TooManyConnections
from mysql_mimic.server import MysqlServer
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import Capabilities, ServerStatus

from .. import errors
from . import protocol as P
from .connection import CommandProtocol, count_placeholders
from .session import ServerState, Session, split_top_level, strip_statement

log = logging.getLogger("noria_py.server")

DEFAULT_PORT = 3307
HANDSHAKE_TIMEOUT = 10.0
HANDSHAKE_MAX_PACKET = 64 * 1024
DEFAULT_MAX_PACKET = 64 * 1024 * 1024

CAPABILITIES = (
    Capabilities.CLIENT_PROTOCOL_41
    | Capabilities.CLIENT_DEPRECATE_EOF
    | Capabilities.CLIENT_CONNECT_WITH_DB
    | Capabilities.CLIENT_CONNECT_ATTRS
    | Capabilities.CLIENT_PLUGIN_AUTH
    | Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | Capabilities.CLIENT_SECURE_CONNECTION
    | Capabilities.CLIENT_LONG_PASSWORD
    | Capabilities.CLIENT_LONG_FLAG
    | Capabilities.CLIENT_TRANSACTIONS
    | Capabilities.CLIENT_FOUND_ROWS
    | Capabilities.CLIENT_IGNORE_SPACE
    | Capabilities.CLIENT_INTERACTIVE
    | Capabilities.CLIENT_MULTI_RESULTS
    | Capabilities.CLIENT_PS_MULTI_RESULTS
    | Capabilities.CLIENT_LOCAL_FILES
)

# ---------------------------------------------------------------------------------------------
# Authentication


class _AcceptAnyPassword(NativePasswordAuthPlugin):
    """mysql_native_password that accepts every password (no users configured)."""

    def password_matches(self, user: User, scramble: bytes, nonce: bytes) -> bool:
        return True


class ConfiguredUsers(IdentityProvider):
    """Users from the command line or a users file; no users means anyone may connect."""

    def __init__(self, users: dict[str, str] | None = None) -> None:
        self.users = dict(users or {})
        self._plugin: NativePasswordAuthPlugin = (
            NativePasswordAuthPlugin() if self.users else _AcceptAnyPassword()
        )
        self._hashes = {
            name: NativePasswordAuthPlugin.create_auth_string(pw) if pw else None
            for name, pw in self.users.items()
        }
        # Unknown users are checked against an unguessable hash, so that they get the same
        # "access denied" as a wrong password and nothing tells which user names exist.
        self._nobody = secrets.token_hex(20)

    def get_plugins(self) -> Sequence[NativePasswordAuthPlugin]:
        return [self._plugin]

    async def get_user(self, username: str) -> User | None:
        if not self.users:
            return User(name=username, auth_plugin=self._plugin.name)
        if username in self._hashes:
            return User(
                name=username, auth_string=self._hashes[username], auth_plugin=self._plugin.name
            )
        return User(name=username, auth_string=self._nobody, auth_plugin=self._plugin.name)


def load_users(pairs: Sequence[tuple[str, str]], users_file: str | None) -> dict[str, str]:
    users: dict[str, str] = {}
    if users_file:
        with open(users_file, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if ":" not in line:
                    raise ValueError(f"{users_file}:{lineno}: expected 'user:password'")
                name, pw = line.split(":", 1)
                users[name.strip()] = pw
    for name, pw in pairs:
        users[name] = pw
    return users


# ---------------------------------------------------------------------------------------------
# Connections


class _AuthFailed(Exception):
    pass


class _Variables:
    """The part of mysql-mimic's session variables its handshake code touches."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def get(self, name: str) -> Any:
        if name == "version":
            return self._session.get_var("version")
        if name.startswith("character_set"):
            return "utf8mb4"
        if name == "external_user":
            return self._session.username
        return None

    def set(self, name: str, value: Any, force: bool = False) -> None:
        if name == "character_set_client":
            self._session.client_codec = _codec_for(value)


def _codec_for(charset_name: Any) -> str:
    try:
        return CharacterSet[str(charset_name)].codec
    except Exception:
        return "utf-8"


class WireConnection(MimicConnection):
    """One client connection during mysql-mimic's handshake and authentication.

    Once the client is logged in, :meth:`NoriaServer._client_connected_cb` hands the transport
    to a :class:`~noria_py.server.connection.CommandProtocol`, which runs the command phase and
    calls back here only to re-authenticate on COM_CHANGE_USER.
    """

    def __init__(self, stream: P.BoundedStream, server: NoriaServer, session: Session) -> None:
        super().__init__(
            stream=stream,
            session=session,  # type: ignore[arg-type]
            control=server.control,
            identity_provider=server.identity_provider,
            server_capabilities=CAPABILITIES,
        )
        self.server = server
        self.wire_session = session
        self.status_flags = ServerStatus(P.STATUS_AUTOCOMMIT)
        self.eof_deprecated = False
        self._refused: errors.Error | None = None  # the login's database does not exist

    @property
    def server_charset(self) -> CharacterSet:
        return CharacterSet.utf8mb4

    @property
    def client_charset(self) -> CharacterSet:
        return CharacterSet.utf8mb4

    async def login(self) -> bool:
        """Run the handshake; True when the client is logged in and may send commands."""
        session = self.wire_session
        try:
            await asyncio.wait_for(self.connection_phase(), HANDSHAKE_TIMEOUT)
            if session.username is None:
                self.server.state.count_error(P.ER_ACCESS_DENIED)  # mysql-mimic sent it
                raise _AuthFailed()
        except (TimeoutError, ConnectionClosed, _AuthFailed, ConnectionError):
            return False
        except P.PacketTooLarge:
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Bad handshake")
            return False
        except Exception as e:  # garbage in the handshake response
            log.debug("handshake failed: %r", e)
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Bad handshake")
            return False
        if Capabilities.CLIENT_PROTOCOL_41 not in self.capabilities:
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Client must support protocol 4.1")
            return False
        self.eof_deprecated = Capabilities.CLIENT_DEPRECATE_EOF in self.capabilities
        return self._refused is None

    def _use_database(self, name: str | None) -> errors.Error | None:
        """Enter the database the client named at login (the server's default without one);
        the error when it does not exist (1049, as MySQL refuses the login)."""
        try:
            self.wire_session.use(name or self.server.state.default_database)
        except errors.Error as e:
            return e
        return None

    def _send_error_now(self, errno: int, sqlstate: str, msg: str) -> None:
        self.server.state.count_error(errno)
        try:
            self.stream.send([P.err_packet(errno, sqlstate, msg)])  # type: ignore[attr-defined]
        except Exception:
            pass

    async def authenticate(self, *args: Any, **kwargs: Any) -> None:
        self.wire_session.username = None
        await super().authenticate(*args, **kwargs)

    def ok(self, **kwargs: Any) -> bytes:
        """The OK packet mysql-mimic sends when authentication succeeds, or the error that
        refuses the login when its database does not exist."""
        self._refused = self._use_database(self.wire_session.database)
        if self._refused is not None:
            e = self._refused
            self.server.state.count_error(e.errno)
            return P.err_packet(e.errno, e.sqlstate, e.msg)
        return P.ok_packet(status=self.wire_session.status_flags)

    async def com_change_user(self, data: bytes) -> bool:
        """Re-authenticate (``self.stream`` is the command protocol's channel by now)."""
        try:
            req = mimic_packets.parse_com_change_user(
                capabilities=self.capabilities, client_charset=self.client_charset, data=data[1:]
            )
        except Exception:
            self._send_error_now(P.ER_MALFORMED_PACKET, "08S01", "Malformed COM_CHANGE_USER")
            return False
        self.wire_session.reset()
        self.wire_session.database = req.database
        await self.authenticate(
            username=req.username,
            auth_response=req.auth_response,
            client_plugin_name=req.client_plugin,
            connect_attrs=req.connect_attrs,
        )
        await self.stream.drain()
        return self.wire_session.username is not None and self._refused is None


# ---------------------------------------------------------------------------------------------
# The server


class NoriaServer(MysqlServer):
    """A mysql-mimic server: :class:`WireConnection` logs clients in, then
    :class:`~noria_py.server.connection.CommandProtocol` serves them."""

    def __init__(
        self,
        engine: Any,
        users: dict[str, str] | None = None,
        max_packet: int = DEFAULT_MAX_PACKET,
        default_database: str = "noria",
    ) -> None:
        super().__init__(identity_provider=ConfiguredUsers(users), control=LocalControl())
        self.state = ServerState(engine=engine, default_database=default_database)
        self.state.globals["max_allowed_packet"] = max_packet
        self.max_packet = max_packet
        # result shapes (column packets, encoders) by column list, and by engine statement
        self.header_cache: dict[tuple, P.ResultShape] = {}
        self.prep_shapes: dict[int, tuple[Any, P.ResultShape]] = {}
        self._tasks: set[asyncio.Task] = set()
        self._worker: ThreadPoolExecutor | None = None
        self._waits: ThreadPoolExecutor | None = None
        # connections whose statement waits for another connection's transaction to end
        self.lock_waiters: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        engine.on_release.append(self._writer_released)

    def _writer_released(self) -> None:
        """The engine's write transaction ended (called under the engine lock, on any
        thread): retry the waiting statements on the loop."""
        loop = self._loop
        if loop is not None and self.lock_waiters:
            try:
                loop.call_soon_threadsafe(self._wake_waiters)
            except RuntimeError:  # the loop is closed: the server is gone
                pass

    def _wake_waiters(self) -> None:
        waiters, self.lock_waiters = self.lock_waiters, []
        for proto in waiters:
            proto.retry_wait()

    def worker(self) -> ThreadPoolExecutor:
        """The thread that runs commands which wait for the engine (lookups that miss,
        writes, DDL, proxied queries), so that the event loop keeps answering every other
        connection's cached lookups meanwhile. One thread: the engine runs one such command at
        a time anyway (its lock)."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="noria-worker")
        return self._worker

    def waits(self) -> ThreadPoolExecutor:
        """The threads that run commands which wait for their own session only (GET_LOCK for
        a name another session holds, SLEEP): each waits on a thread of its own, holding
        neither the event loop nor the engine's worker."""
        if self._waits is None:
            self._waits = ThreadPoolExecutor(max_workers=64, thread_name_prefix="noria-wait")
        return self._waits

    async def _client_connected_cb(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._loop = asyncio.get_running_loop()
        stream = P.BoundedStream(reader, writer, HANDSHAKE_MAX_PACKET)
        session = Session(self.state)
        session.variables = _Variables(session)  # what mysql-mimic's handshake reads
        conn = WireConnection(stream, self, session)
        connection_id = None
        self.state.connections += 1
        self.state.connections_total += 1
        try:
            try:
                connection_id = await self.control.add(conn)
            except TooManyConnections:
                self.state.count_error(1040)
                stream.send([P.err_packet(1040, "08004", "Too many connections")])
                return
            conn.connection_id = connection_id
            session.connection_id = connection_id
            if not await conn.login():
                return
            # The command phase: hand the socket to a protocol (no coroutine per packet),
            # with whatever the handshake's stream had already read ahead.
            proto = CommandProtocol(conn)
            pending = bytes(reader._buffer)
            reader._buffer.clear()
            proto.take_over(writer.transport, pending, reader.at_eof())
            await proto.done
        except (ConnectionError, ConnectionClosed, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("connection failed")
        finally:
            self.state.connections -= 1
            if connection_id is not None:
                await self.control.remove(connection_id)
            try:
                writer.close()
            except Exception:
                pass
            if task is not None:
                self._tasks.discard(task)

    async def shutdown(self) -> None:
        self.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        try:
            await asyncio.wait_for(self.wait_closed(), 5)
        except TimeoutError:
            pass
        waits, self._waits = self._waits, None
        if waits is not None:
            waits.shutdown(wait=False, cancel_futures=True)
        worker, self._worker = self._worker, None
        if worker is not None:
            # the command running now finishes (a write is applied whole); queued ones are not
            # started: their connections are closed
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: worker.shutdown(wait=True, cancel_futures=True)
            )


async def serve(
    engine: Any,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    users: dict[str, str] | None = None,
    max_packet: int = DEFAULT_MAX_PACKET,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[str, int], None] | None = None,
    reuse_port: bool = False,
    http: tuple[str, int] | None = None,
    on_http: Callable[[str], None] | None = None,
) -> None:
    """Serve ``engine`` on host:port until ``stop`` is set (or forever). ``reuse_port``: other
    processes may listen on the same port (``serve --workers``; the kernel spreads the
    connections over them). ``http``: ``(host, port)`` of the metrics and dashboard server
    (``noria_py.monitor``); ``on_http`` gets its URL."""
    server = NoriaServer(engine, users=users, max_packet=max_packet)
    monitor = None
    if http is not None:
        from noria_py.monitor.http import MonitorServer

        try:
            monitor = MonitorServer(engine, http[0], http[1], server_state=server.state)
        except OSError as e:
            raise OSError(f"--http {http[0]}:{http[1]}: {e}") from None
        if on_http is not None:
            on_http(monitor.url)
    try:
        kw: dict[str, Any] = {"reuse_port": True} if reuse_port else {}
        await server.start_server(host=host, port=port, backlog=512, **kw)
        sock = server.sockets()[0]
        bound_host, bound_port = sock.getsockname()[:2]
        if on_ready is not None:
            on_ready(bound_host, bound_port)
        try:
            if stop is None:
                stop = asyncio.Event()
            await stop.wait()
        finally:
            await server.shutdown()
    finally:
        if monitor is not None:
            monitor.close()


# ---------------------------------------------------------------------------------------------
# Command line


_SIZE = re.compile(r"\A\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*\Z", re.I)


def parse_size(text: str | None) -> int | None:
    """'1GB' -> 1073741824; None stays None."""
    if text is None:
        return None
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 512MB or 1GB)")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def parse_http(text: str) -> tuple[str, int]:
    """``--http`` value: ``HOST:PORT``, ``[::1]:PORT`` or ``PORT`` (on 127.0.0.1)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range in {text!r}")
    return host, number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``noria-py serve``."""
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="TCP port to listen on; 0 picks a free port (default: %(default)s)",
    )
    parser.add_argument(
        "--data",
        metavar="PATH",
        default=None,
        help="SQLite file holding the base tables (durable); in memory when omitted",
    )
    parser.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="U",
        help="a user allowed to connect (repeatable, paired in order with --password); "
        "with no users configured anyone may connect",
    )
    parser.add_argument(
        "--password",
        action="append",
        default=[],
        metavar="P",
        help="password of the --user at the same position (missing: empty password)",
    )
    parser.add_argument(
        "--users-file",
        metavar="PATH",
        default=None,
        help="file of 'user:password' lines (lines starting with # are comments)",
    )
    parser.add_argument(
        "--memory-limit",
        type=parse_size,
        default=None,
        metavar="SIZE",
        help="memory budget of the dataflow's materializations, e.g. 512MB or 1GB; "
        "least recently read entries are evicted beyond it (default: unlimited)",
    )
    parser.add_argument(
        "--caching",
        choices=["auto", "explicit"],
        default="auto",
        help="auto: every SELECT the dataflow can maintain is cached on first use; explicit: "
        "only the queries CREATE CACHE names, the others are answered by base storage "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--max-packet",
        type=parse_size,
        default=DEFAULT_MAX_PACKET,
        metavar="SIZE",
        help="largest client packet accepted (max_allowed_packet, default: 64MB)",
    )
    parser.add_argument(
        "--collation",
        default="utf8mb4_general_ci",
        metavar="NAME",
        help="collation every string compares, sorts, groups and is unique by "
        "(default: %(default)s, MariaDB's; utf8mb4_0900_ai_ci is MySQL 8's)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port and the database file, each with its own "
        "views kept current with the others' writes (default: 1)",
    )
    parser.add_argument(
        "--http",
        type=parse_http,
        default=None,
        metavar="HOST:PORT",
        help="serve Prometheus metrics (/metrics) and a live dashboard (/) on this address; "
        "port 0 picks a free port (default: off)",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        default=None,
        help="mysql://user:pass@host:port/db: mirror that MySQL/MariaDB database (a snapshot, "
        "then its ROW binlog) and send writes, transactions and queries the dataflow does not "
        "maintain to it; with --data the mirror and its binlog position survive a restart",
    )
    parser.add_argument(
        "--upstream-server-id",
        type=int,
        default=None,
        metavar="N",
        help="replica server id on the upstream's binlog, unique per instance "
        "(default: derived from the process id)",
    )
    parser.add_argument(
        "--upstream-spark-rows",
        type=int,
        default=None,
        metavar="N",
        help="upstream tables of at least N rows are snapshotted by Spark over JDBC, in "
        "parallel (default: a million when pyspark is installed; -1: never)",
    )
    parser.add_argument(
        "--read-your-writes",
        type=float,
        default=None,
        metavar="SECONDS",
        help="upstream mode: after a write, a connection's next cached read waits up to this "
        "long for the write to replicate, then asks the upstream (default: off)",
    )
    parser.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (default: %(default)s)",
    )


def run_from_args(args: argparse.Namespace) -> int:
    """Run the server until SIGINT/SIGTERM; returns the process exit code."""
    logging.basicConfig(
        level=getattr(logging, args.log_level, logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("mysql_mimic").setLevel(logging.CRITICAL)
    pairs = []
    for i, name in enumerate(args.user):
        pairs.append((name, args.password[i] if i < len(args.password) else ""))
    if len(args.password) > len(args.user):
        print("error: more --password than --user flags", file=sys.stderr)
        return 2
    try:
        users = load_users(pairs, args.users_file)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.workers > 1:
        if args.http is not None:
            print(
                "error: --http serves one process's engine: use it without --workers",
                file=sys.stderr,
            )
            return 2
        if args.upstream and args.data:
            print(
                "error: with --upstream, each worker keeps its own mirror in memory "
                "(replicating on its own): give no --data with --workers",
                file=sys.stderr,
            )
            return 2
        return _run_workers(args)

    from noria_py.engine import Engine

    try:
        engine = Engine(
            path=args.data,
            memory_limit=args.memory_limit,
            collation=args.collation,
            caching=args.caching,
            private_storage=True,  # without --data: a temporary file, for committed reads
            busy_timeout=0.02,  # another process holds the write lock: wait a little, then park
        )
    except Exception as e:  # noqa: BLE001 - a bad option or data file: say it, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.upstream:
        from noria_py import errors
        from noria_py.upstream import attach, show_progress, spark_threshold

        rows = args.upstream_spark_rows
        try:
            with show_progress() as progress:
                attach(
                    engine,
                    args.upstream,
                    args.upstream_server_id,
                    args.read_your_writes,
                    progress,
                    spark_threshold(False if rows is not None and rows < 0 else rows),
                )
        except errors.Error as e:
            engine.close()
            print(f"error: {e}", file=sys.stderr)
            return 2
    try:
        return _run_loop(
            engine,
            args.host,
            args.port,
            users,
            args.max_packet,
            args.reuse_port,
            getattr(args, "http", None),
        )
    finally:
        if engine.upstream is not None:
            engine.upstream.close()
        engine.close()


def _run_workers(args: argparse.Namespace) -> int:
    """``--workers N``: N server processes on one port (SO_REUSEPORT) and one database file.
    A client connection stays on the process that accepted it, so it reads its own writes;
    the other processes' views follow within milliseconds (the change log, see Engine).
    With ``--upstream`` there is no shared file: each worker is an instance of its own on the
    upstream (its own snapshot, mirror, replication and replica id), as several
    ``serve --upstream`` processes are, behind one port."""
    import shutil
    import socket
    import subprocess
    import tempfile

    tmpdir = None
    data = args.data
    if data is None and not args.upstream:
        tmpdir = tempfile.mkdtemp(prefix="noria-workers-")
        data = os.path.join(tmpdir, "base.db")
    port = args.port
    if port == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind((args.host, 0))
            port = s.getsockname()[1]
    argv = [sys.executable, "-m", "noria_py.server.mysql", "--host", args.host]
    argv += ["--port", str(port), "--reuse-port", "--workers", "1"]
    if data is not None:
        argv += ["--data", data]
    if args.upstream:
        argv += ["--upstream", args.upstream]
        if args.upstream_spark_rows is not None:
            argv += ["--upstream-spark-rows", str(args.upstream_spark_rows)]
        if args.read_your_writes is not None:
            argv += ["--read-your-writes", str(args.read_your_writes)]
    argv += ["--max-packet", str(args.max_packet), "--collation", args.collation]
    argv += ["--log-level", args.log_level, "--caching", args.caching]
    if args.memory_limit is not None:
        argv += ["--memory-limit", str(args.memory_limit)]
    for i, u in enumerate(args.user):
        argv += ["--user", u, "--password", args.password[i] if i < len(args.password) else ""]
    if args.users_file:
        argv += ["--users-file", args.users_file]
    procs: list[subprocess.Popen] = []
    stopping = False

    def stop(*_a: Any) -> None:
        nonlocal stopping
        stopping = True
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        # the first worker creates the file's tables; the others start once it is ready
        for i in range(args.workers):
            extra = []
            if args.upstream and args.upstream_server_id is not None:
                extra = ["--upstream-server-id", str(args.upstream_server_id + i)]
            p = subprocess.Popen(argv + extra, stdout=subprocess.PIPE, text=True)
            procs.append(p)
            line = "-"
            while line and "serving MySQL protocol" not in line:  # after a snapshot's progress
                line = p.stdout.readline() if p.stdout else ""
            if "serving MySQL protocol" not in line:
                stop()
                print(f"error: worker {i + 1} did not start", file=sys.stderr)
                return 1
        auth = "no authentication" if not (args.user or args.users_file) else "authentication"
        print(
            f"noria-py serving MySQL protocol on {args.host}:{port} "
            f"({args.workers} workers, {auth})",
            flush=True,
        )
        codes = [p.wait() for p in procs]
        return 0 if stopping and all(c == 0 for c in codes) else max(codes) or 1
    finally:
        stop()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        for sig, h in old.items():
            signal.signal(sig, h)
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _run_loop(
    engine: Any,
    host: str,
    port: int,
    users: dict[str, str],
    max_packet: int,
    reuse_port: bool = False,
    http: tuple[str, int] | None = None,
) -> int:
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a declared dependency
        runner = asyncio.run

    def ready(h: str, p: int) -> None:
        auth = f"{len(users)} user(s)" if users else "no authentication"
        print(f"noria-py serving MySQL protocol on {h}:{p} ({auth})", flush=True)

    def http_ready(url: str) -> None:
        print(f"noria-py metrics on {url}/metrics, dashboard on {url}/", flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(
            engine, host, port, users, max_packet, stop, ready, reuse_port, http, http_ready
        )

    try:
        runner(main())
    except OSError as e:
        print(f"error: cannot listen on {host}:{port}: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m noria_py.server.mysql",
        description="Serve a noria_py database over the MySQL wire protocol.",
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


__all__ = [
    "NoriaServer",
    "WireConnection",
    "add_arguments",
    "count_placeholders",
    "main",
    "parse_size",
    "run_from_args",
    "serve",
    "split_top_level",
    "strip_statement",
]

if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

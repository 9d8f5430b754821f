"""``noria-py serve``: the MySQL-wire server.

A client connects with any MySQL driver (pymysql, mysql-connector-python, SQLAlchemy's
``mysql+pymysql://``, the ``mariadb``/``mysql`` command line) and talks to one shared
:class:`noria_py.engine.Engine`.

How a query travels::

    socket -> BoundedStream.read_command -> WireConnection.command_loop
           -> COM_QUERY        -> Session.execute(sql)            -> Engine.execute(sql, params)
           -> COM_STMT_EXECUTE -> decode_params -> Session.execute(stmt.sql, params)
           <- result packets encoded by server.protocol, written with one transport.write

* mysql-mimic (on uvloop) provides the handshake, authentication (mysql_native_password) and
  packet framing; the command phase is this module's own, so that prepared statements bind
  their parameters natively (``?`` values go to the engine as bound parameters, never pasted
  into SQL text) and statement texts are never re-parsed per execution.
* Statements about the session (``SET``, ``SELECT @@var``, ``USE``, transactions, ...) are
  answered by :mod:`noria_py.server.session`; its docstring says what reads inside a transaction
  see.
* Literal point lookups sent by client-side-binding drivers are turned into parameterized
  statements (:mod:`noria_py.server.literals`) so that every key shares one reader.
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
import struct
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from mysql_mimic import packets as mimic_packets
from mysql_mimic.auth import IdentityProvider, NativePasswordAuthPlugin, User
from mysql_mimic.charset import CharacterSet
from mysql_mimic.connection import Connection as MimicConnection
from mysql_mimic.control import LocalControl, TooManyConnections
from mysql_mimic.errors import MysqlError
from mysql_mimic.server import MysqlServer
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import Capabilities, ServerStatus

from noria_py import errors
from noria_py.result import Result

from . import protocol as P
from .session import ServerState, Session, split_top_level, strip_statement

log = logging.getLogger("noria_py.server")

DEFAULT_PORT = 3307
HANDSHAKE_TIMEOUT = 10.0
HANDSHAKE_MAX_PACKET = 64 * 1024
DEFAULT_MAX_PACKET = 64 * 1024 * 1024
WRITE_HIGH_WATER = 256 * 1024

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
)

COM_QUIT = 0x01
COM_INIT_DB = 0x02
COM_QUERY = 0x03
COM_FIELD_LIST = 0x04
COM_STATISTICS = 0x09
COM_PROCESS_KILL = 0x0C
COM_DEBUG = 0x0D
COM_PING = 0x0E
COM_CHANGE_USER = 0x11
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_SEND_LONG_DATA = 0x18
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A
COM_SET_OPTION = 0x1B
COM_STMT_FETCH = 0x1C
COM_RESET_CONNECTION = 0x1F

_QUIT = object()
_NO_REPLY: list[bytes] = []


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


class PreparedStatement:
    __slots__ = (
        "stmt_id",
        "sql",
        "param_count",
        "columns",
        "types",
        "nullable",
        "param_types",
        "long_data",
        "cursor",
    )

    def __init__(self, stmt_id: int, sql: str, param_count: int) -> None:
        self.stmt_id = stmt_id
        self.sql = sql
        self.param_count = param_count
        self.columns: list[str] | None = None
        self.types: list[str] = []
        self.nullable: list[bool] = []
        self.param_types: list[tuple[int, bool]] | None = None
        self.long_data: dict[int, bytearray] | None = None
        self.cursor: list[bytes] | None = None


_PARAM_SCAN = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|(\?)", re.S)


def count_placeholders(sql: str) -> int:
    return sum(1 for m in _PARAM_SCAN.finditer(sql) if m.group(1))


class WireConnection(MimicConnection):
    """One client connection: mysql-mimic's handshake, then this class's command loop."""

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
        self.stmts: dict[int, PreparedStatement] = {}
        self.next_stmt_id = 1
        self.eof_deprecated = False

    @property
    def server_charset(self) -> CharacterSet:
        return CharacterSet.utf8mb4

    @property
    def client_charset(self) -> CharacterSet:
        return CharacterSet.utf8mb4

    # -- connection phase ------------------------------------------------------------------

    async def run(self) -> None:
        stream: P.BoundedStream = self.stream  # type: ignore[assignment]
        session = self.wire_session
        try:
            await asyncio.wait_for(self.connection_phase(), HANDSHAKE_TIMEOUT)
            if session.username is None:
                raise _AuthFailed()
        except (TimeoutError, ConnectionClosed, _AuthFailed, ConnectionError):
            return
        except P.PacketTooLarge:
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Bad handshake")
            return
        except Exception as e:  # garbage in the handshake response
            log.debug("handshake failed: %r", e)
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Bad handshake")
            return
        if Capabilities.CLIENT_PROTOCOL_41 not in self.capabilities:
            self._send_error_now(P.ER_HANDSHAKE_ERROR, "08S01", "Client must support protocol 4.1")
            return
        self.eof_deprecated = Capabilities.CLIENT_DEPRECATE_EOF in self.capabilities
        if session.database is None or session.database == "":
            session.database = self.server.state.default_database
        stream.max_packet = self.server.max_packet
        try:
            await self.command_loop()
        finally:
            session.close()

    def _send_error_now(self, errno: int, sqlstate: str, msg: str) -> None:
        try:
            self.stream.send([P.err_packet(errno, sqlstate, msg)])  # type: ignore[attr-defined]
        except Exception:
            pass

    async def authenticate(self, *args: Any, **kwargs: Any) -> None:
        self.wire_session.username = None
        await super().authenticate(*args, **kwargs)

    # -- command phase -----------------------------------------------------------------------

    async def command_loop(self) -> None:
        stream: P.BoundedStream = self.stream  # type: ignore[assignment]
        writer = stream.writer
        transport = writer.transport
        dispatch: dict[int, Callable[[bytes], Any]] = {
            COM_QUERY: self.com_query,
            COM_STMT_EXECUTE: self.com_stmt_execute,
            COM_STMT_PREPARE: self.com_stmt_prepare,
            COM_STMT_CLOSE: self.com_stmt_close,
            COM_STMT_RESET: self.com_stmt_reset,
            COM_STMT_SEND_LONG_DATA: self.com_stmt_send_long_data,
            COM_STMT_FETCH: self.com_stmt_fetch,
            COM_PING: self.com_ok,
            COM_DEBUG: self.com_ok,
            COM_INIT_DB: self.com_init_db,
            COM_FIELD_LIST: self.com_field_list,
            COM_STATISTICS: self.com_statistics,
            COM_RESET_CONNECTION: self.com_reset_connection,
            COM_SET_OPTION: self.com_set_option,
        }
        while True:
            try:
                data = await stream.read_command()
            except ConnectionClosed:
                return
            except P.PacketTooLarge:
                self._send_error_now(
                    P.ER_NET_PACKET_TOO_LARGE,
                    "08S01",
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                )
                return
            except MysqlError as e:  # out-of-order packets: the stream cannot be trusted
                self._send_error_now(P.ER_MALFORMED_PACKET, "08S01", e.msg)
                return
            if not data:
                stream.send([P.err_packet(P.ER_MALFORMED_PACKET, "08S01", "Malformed packet")])
                continue
            cmd = data[0]
            handler = dispatch.get(cmd)
            try:
                if handler is not None:
                    out = handler(data)
                elif cmd == COM_QUIT:
                    return
                elif cmd == COM_CHANGE_USER:
                    ok = await self.com_change_user(data)
                    if not ok:
                        return
                    continue
                else:
                    out = [P.err_packet(P.ER_UNKNOWN_COM_ERROR, "08S01", "Unknown command")]
            except errors.Error as e:
                out = [P.err_packet(e.errno, e.sqlstate, e.msg or str(e))]
            except P.PacketError as e:
                out = [P.err_packet(P.ER_MALFORMED_PACKET, "08S01", str(e))]
            except MysqlError as e:
                out = [P.err_packet(int(e.code), "HY000", e.msg)]
            except Exception as e:
                log.exception("error while running a command")
                out = [P.err_packet(P.ER_UNKNOWN_ERROR, "HY000", f"{type(e).__name__}: {e}")]
            if out:
                stream.send(out)
                if transport.get_write_buffer_size() > WRITE_HIGH_WATER:
                    await writer.drain()

    def ok(self, res: Result | None = None, **kwargs: Any) -> bytes:  # type: ignore[override]
        s = self.wire_session
        if res is None:
            return P.ok_packet(status=s.status_flags)
        affected = res.rowcount if res.rowcount and res.rowcount > 0 else 0
        return P.ok_packet(affected, res.lastrowid or 0, s.status_flags)

    def _end_of_rows(self, extra_status: int = 0) -> bytes:
        status = self.wire_session.status_flags | extra_status
        if self.eof_deprecated:
            return P.ok_packet(status=status, eof=True)
        return P.eof_packet(status)

    def _header(self, res: Result, binary: bool) -> tuple[list[bytes], Any]:
        cols = res.columns or []
        key = (tuple(cols), tuple(res.column_types), tuple(res.nullable))
        cache = self.server.header_cache
        entry = cache.get(key)
        if entry is None:
            n = len(cols)
            types = list(res.column_types) + ["VARCHAR"] * (n - len(res.column_types))
            nullable = list(res.nullable) + [True] * (n - len(res.nullable))
            defs = [P.lenenc_int(n)]
            defs += [P.column_def(c, t, nl) for c, t, nl in zip(cols, types, nullable)]
            entry = (defs, P.binary_encoders(types))
            if len(cache) > 4096:
                cache.clear()
            cache[key] = entry
        return entry

    def _result_packets(self, res: Result, binary: bool) -> list[bytes]:
        if res.columns is None:
            return [self.ok(res)]
        defs, encoders = self._header(res, binary)
        out = list(defs)
        if not self.eof_deprecated:
            out.append(P.eof_packet(self.wire_session.status_flags))
        if binary:
            out += P.binary_rows(res.rows, encoders)
        else:
            out += P.text_rows(res.rows, len(res.columns))
        out.append(self._end_of_rows())
        return out

    # -- commands ------------------------------------------------------------------------------

    def com_ok(self, data: bytes) -> list[bytes]:
        return [self.ok()]

    def com_query(self, data: bytes) -> list[bytes]:
        session = self.wire_session
        sql = data[1:].decode(session.client_codec, "surrogateescape")
        res = session.execute(sql)
        return self._result_packets(res, False)

    def com_init_db(self, data: bytes) -> list[bytes]:
        name = data[1:].decode("utf-8", "replace").strip().strip("`")
        if not name:
            raise errors.Error("No database selected", 1046, "3D000")
        self.wire_session.database = name
        return [self.ok()]

    def com_field_list(self, data: bytes) -> list[bytes]:
        table = data[1:].split(b"\x00", 1)[0].decode("utf-8", "replace")
        res = self.wire_session.engine.execute(f"DESCRIBE `{table.replace('`', '``')}`")
        out = []
        for row in res.rows:
            name = str(row[0])
            type_name = str(row[1]).upper() if len(row) > 1 and row[1] else "VARCHAR"
            nullable = not (len(row) > 2 and str(row[2]).upper() == "NO")
            out.append(P.column_def(name, type_name, nullable, table=table) + b"\xfb")
        out.append(self._end_of_rows())
        return out

    def com_statistics(self, data: bytes) -> list[bytes]:
        st = self.server.state
        uptime = int(time.time() - st.started)
        text = f"Uptime: {uptime}  Threads: {st.connections}  Questions: {st.questions}"
        return [text.encode()]

    def com_reset_connection(self, data: bytes) -> list[bytes]:
        self.wire_session.reset()
        self.stmts.clear()
        return [self.ok()]

    def com_set_option(self, data: bytes) -> list[bytes]:
        return [P.eof_packet(self.wire_session.status_flags)]

    async def com_change_user(self, data: bytes) -> bool:
        try:
            req = mimic_packets.parse_com_change_user(
                capabilities=self.capabilities, client_charset=self.client_charset, data=data[1:]
            )
        except Exception:
            self._send_error_now(P.ER_MALFORMED_PACKET, "08S01", "Malformed COM_CHANGE_USER")
            return False
        self.wire_session.reset()
        self.stmts.clear()
        self.wire_session.database = req.database or self.server.state.default_database
        await self.authenticate(
            username=req.username,
            auth_response=req.auth_response,
            client_plugin_name=req.client_plugin,
            connect_attrs=req.connect_attrs,
        )
        await self.stream.drain()
        return self.wire_session.username is not None

    # -- prepared statements -----------------------------------------------------------------

    def com_stmt_prepare(self, data: bytes) -> list[bytes]:
        session = self.wire_session
        sql = data[1:].decode(session.client_codec, "surrogateescape")
        st = self.server.state.statement(sql)
        stmt_id = self.next_stmt_id
        self.next_stmt_id = (stmt_id + 1) & 0xFFFFFFFF or 1
        if st.kind in ("engine", "write", "ddl", "const_select"):
            try:
                prep = session.engine.prepare(st.sql)
            except errors.Error:
                if st.kind != "const_select":
                    raise
                prep = None
        else:
            prep = None
        if st.kind == "error":
            raise st.info
        if prep is not None:
            stmt = PreparedStatement(stmt_id, sql, int(prep.param_count))
            if prep.columns is not None:
                stmt.columns = list(prep.columns)
                stmt.types = list(prep.column_types or [])
                stmt.nullable = list(prep.nullable or [])
        else:
            stmt = PreparedStatement(stmt_id, sql, count_placeholders(st.sql))
        self.stmts[stmt_id] = stmt
        ncols = len(stmt.columns) if stmt.columns else 0
        out = [struct.pack("<BIHHBH", 0, stmt_id, ncols, stmt.param_count, 0, 0)]
        if stmt.param_count:
            out += [P.PARAM_DEF] * stmt.param_count
            if not self.eof_deprecated:
                out.append(P.eof_packet(session.status_flags))
        if ncols:
            n = ncols
            types = stmt.types + ["VARCHAR"] * (n - len(stmt.types))
            nullable = stmt.nullable + [True] * (n - len(stmt.nullable))
            out += [P.column_def(c, t, nl) for c, t, nl in zip(stmt.columns, types, nullable)]
            if not self.eof_deprecated:
                out.append(P.eof_packet(session.status_flags))
        return out

    def _stmt(self, data: bytes) -> PreparedStatement:
        if len(data) < 5:
            raise P.PacketError("packet too short")
        stmt_id = int.from_bytes(data[1:5], "little")
        stmt = self.stmts.get(stmt_id)
        if stmt is None:
            raise errors.Error(
                f"Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_execute",
                P.ER_UNKNOWN_STMT_HANDLER,
                "HY000",
            )
        return stmt

    def com_stmt_execute(self, data: bytes) -> list[bytes]:
        stmt = self._stmt(data)
        if len(data) < 10:
            raise P.PacketError("COM_STMT_EXECUTE too short")
        flags = data[5]
        session = self.wire_session
        if stmt.param_count:
            params, stmt.param_types = P.decode_params(
                data, 10, stmt.param_count, stmt.param_types, stmt.long_data, session.client_codec
            )
            stmt.long_data = None
        else:
            params = ()
        stmt.cursor = None
        res = session.execute(stmt.sql, params)
        if res.columns is None:
            return [self.ok(res)]
        if flags & 0x07 and res.columns:  # a read-only cursor: rows go out on COM_STMT_FETCH
            defs, encoders = self._header(res, True)
            stmt.cursor = P.binary_rows(res.rows, encoders)
            out = list(defs)
            if self.eof_deprecated:
                out.append(
                    P.ok_packet(status=session.status_flags | P.STATUS_CURSOR_EXISTS, eof=True)
                )
            else:
                out.append(P.eof_packet(session.status_flags | P.STATUS_CURSOR_EXISTS))
            return out
        return self._result_packets(res, True)

    def com_stmt_fetch(self, data: bytes) -> list[bytes]:
        stmt = self._stmt(data)
        if len(data) < 9:
            raise P.PacketError("COM_STMT_FETCH too short")
        n = int.from_bytes(data[5:9], "little")
        rows = stmt.cursor
        if rows is None:
            raise errors.Error("The statement has no open cursor", 1421, "HY000")
        out, stmt.cursor = rows[:n], rows[n:]
        if stmt.cursor:
            out.append(self._end_of_rows(P.STATUS_CURSOR_EXISTS))
        else:
            stmt.cursor = None
            out.append(self._end_of_rows(P.STATUS_LAST_ROW_SENT))
        return out

    def com_stmt_send_long_data(self, data: bytes) -> list[bytes]:
        if len(data) < 7:
            return _NO_REPLY  # this command never gets a reply, even when malformed
        stmt = self.stmts.get(int.from_bytes(data[1:5], "little"))
        if stmt is None:
            return _NO_REPLY
        param = int.from_bytes(data[5:7], "little")
        if param >= stmt.param_count:
            return _NO_REPLY
        if stmt.long_data is None:
            stmt.long_data = {}
        buf = stmt.long_data.setdefault(param, bytearray())
        if len(buf) + len(data) - 7 > self.server.max_packet:
            stmt.long_data = None
            return _NO_REPLY
        buf += data[7:]
        return _NO_REPLY

    def com_stmt_close(self, data: bytes) -> list[bytes]:
        if len(data) >= 5:
            self.stmts.pop(int.from_bytes(data[1:5], "little"), None)
        return _NO_REPLY

    def com_stmt_reset(self, data: bytes) -> list[bytes]:
        stmt = self._stmt(data)
        stmt.long_data = None
        stmt.cursor = None
        return [self.ok()]


# ---------------------------------------------------------------------------------------------
# The server


class NoriaServer(MysqlServer):
    """A mysql-mimic server whose connections run :class:`WireConnection`."""

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
        self.header_cache: dict[tuple, tuple[list[bytes], Any]] = {}
        self._tasks: set[asyncio.Task] = set()

    async def _client_connected_cb(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        stream = P.BoundedStream(reader, writer, HANDSHAKE_MAX_PACKET)
        session = Session(self.state)
        session.variables = _Variables(session)  # what mysql-mimic's handshake reads
        conn = WireConnection(stream, self, session)
        connection_id = None
        self.state.connections += 1
        try:
            try:
                connection_id = await self.control.add(conn)
            except TooManyConnections:
                stream.send([P.err_packet(1040, "08004", "Too many connections")])
                return
            conn.connection_id = connection_id
            session.connection_id = connection_id
            await conn.run()
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


async def serve(
    engine: Any,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    users: dict[str, str] | None = None,
    max_packet: int = DEFAULT_MAX_PACKET,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[str, int], None] | None = None,
) -> None:
    """Serve ``engine`` on host:port until ``stop`` is set (or forever)."""
    server = NoriaServer(engine, users=users, max_packet=max_packet)
    await server.start_server(host=host, port=port, backlog=512)
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
        "--max-packet",
        type=parse_size,
        default=DEFAULT_MAX_PACKET,
        metavar="SIZE",
        help="largest client packet accepted (max_allowed_packet, default: 64MB)",
    )
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

    from noria_py.engine import Engine

    engine = Engine(path=args.data, memory_limit=args.memory_limit)
    try:
        return _run_loop(engine, args.host, args.port, users, args.max_packet)
    finally:
        engine.close()


def _run_loop(engine: Any, host: str, port: int, users: dict[str, str], max_packet: int) -> int:
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a declared dependency
        runner = asyncio.run

    def ready(h: str, p: int) -> None:
        auth = f"{len(users)} user(s)" if users else "no authentication"
        print(f"noria-py serving MySQL protocol on {h}:{p} ({auth})", flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(engine, host, port, users, max_packet, stop, ready)

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

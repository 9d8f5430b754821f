"""The command phase of one client connection: an asyncio protocol driven by read callbacks.

After mysql-mimic has done the handshake and authentication on an asyncio stream, the
connection's transport is handed to a :class:`CommandProtocol` (``transport.set_protocol``).
From then on there is no coroutine per packet: each ``data_received`` call

1. cuts every complete packet out of the bytes received so far (pipelined commands and split
   packets of more than 16 MB included; a packet over ``max_allowed_packet`` is refused as soon
   as its header arrives),
2. runs each command to completion on the event loop thread, except the ones that may run long
   under the engine lock (DDL, a query new to the engine or one it proxies to base storage):
   those go to the server's worker thread, and no further command of this connection is read
   until the answer is written, while the loop goes on serving the other connections (see
   ``_Offload``),
3. writes every response of the batch with one ``transport.write``.

Lookups that miss and writes run on the loop: handing each to another thread costs more (a
wake-up and a GIL hand-over per command, measured with the Lobsters workload) than the time
other connections would wait for them.

The hot paths avoid every step that does not depend on the query's values:

* ``COM_QUERY`` with a literal point lookup (``SELECT ... WHERE id = 42``, what client-side
  binding drivers send): the exact text is looked up in a bounded cache of texts already seen;
  a new text is split at its literals and its shape looked up
  (:meth:`ServerState.lifted_lookup`). The literals become bound parameters of the engine's
  cached statement, and a filled key is one reader lookup (the embedded cursor's fast path).
* ``COM_STMT_EXECUTE``: parameters are decoded natively (never pasted into SQL), with one
  precompiled struct when they all have fixed-size types (``protocol.FixedParams``); the
  statement's engine text was classified once at ``COM_STMT_PREPARE``.
* Both: the engine statement is checked to still be the engine's cached one (DDL replaces
  it), and the column-count and column-definition packets of its result are built and framed
  once (:class:`~noria_py.server.protocol.ResultShape`); rows are encoded straight into the
  response.

Everything else (session statements, writes, transactions, DDL, proxied queries) goes through
:meth:`Session.execute`. ``LOAD DATA LOCAL INFILE`` asks the client for its file (a 0xFB
packet naming it); the packets the client then sends are the file's bytes, spooled to a
temporary file (:class:`_Infile`, in memory while small) until the empty packet that ends it,
and the load runs on the worker thread with that file. ``COM_CHANGE_USER`` re-authenticates with mysql-mimic's code over a
small channel (:class:`_AuthChannel`) fed by this protocol. When the client stops reading its
responses, the protocol stops reading its commands (``pause_writing`` pauses reading), and
pipelined commands already received wait in the buffer once 1 MB of answers is queued.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
import tempfile
import time
from typing import TYPE_CHECKING, Any

from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import Capabilities

from noria_py import errors
from noria_py.engine import (
    BindsOtherwise,
    ProxyPrepared,
    ReaderGone,
    SelectPrepared,
    lifts_whatever_values,
    zone_differs,
)
from noria_py.load_data import parse_load
from noria_py.result import Result

from ..sql.literals import lift_literals_cached as lift_literals
from . import protocol as P
from .session import LookupPlan

if TYPE_CHECKING:
    from .mysql import WireConnection

log = logging.getLogger("noria_py.server")

COM_QUIT = 0x01
COM_INIT_DB = 0x02
COM_QUERY = 0x03
COM_FIELD_LIST = 0x04
COM_STATISTICS = 0x09
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

FLUSH_AT = 256 * 1024  # answers to pipelined commands are written at least this often
BACKLOG_MAX = 1024 * 1024  # unread answers beyond which pipelined commands wait
AUTH_TIMEOUT = 10.0
AUTH_MAX_PACKET = 64 * 1024
SHAPE_CACHE_LIMIT = 4096

INFILE_IN_MEMORY = 8 * 1024 * 1024  # a LOCAL file's bytes beyond this spill to a temporary file
TEXT_CACHE_LIMIT = 20000  # COM_QUERY texts whose lookup plan is remembered...
CACHED_TEXT_MAX = 2048  # ...when they are SELECTs of at most this many bytes

_NO_REPLY: list[bytes] = []
_GENERAL: Any = object()  # a COM_QUERY text that takes Session.execute


class _Offload:
    """A command to finish on the server's worker thread: ``fn(payload, seq)`` gives its
    response, as a handler does. A proxied query or DDL can take seconds under the engine
    lock; on the event loop it would hold up every connection, on the worker it holds up its
    own (whose later commands wait in its buffer, so answers stay in order) while the loop goes
    on answering the others' cached lookups, which need no lock. A command on the loop that
    does need the engine lock meanwhile (a write, a miss) waits for it, and the loop with it."""

    __slots__ = ("fn", "payload", "seq", "waits")

    def __init__(self, fn: Any, payload: bytes, seq: int, waits: bool = False) -> None:
        self.fn = fn
        self.payload = payload
        self.seq = seq
        self.waits = waits  # on a thread of its own (Server.waits): it waits for no engine


class _Wait:
    """A command that must wait for another connection's transaction (``errors.LockWait``):
    the connection reads no further command; the command runs again when a transaction ends,
    and fails with 1205 at ``deadline`` (``innodb_lock_wait_timeout``)."""

    __slots__ = ("fn", "payload", "seq", "offload", "deadline")

    def __init__(self, fn: Any, payload: bytes, seq: int, offload: bool = False) -> None:
        self.fn = fn
        self.payload = payload
        self.seq = seq
        self.offload = offload  # run again on the worker
        self.deadline: float | None = None


class _Infile:
    """The file of a ``LOAD DATA LOCAL INFILE`` the client is sending: its packets' bytes,
    written to a spooled temporary file as they arrive, until the empty packet that ends it."""

    __slots__ = ("sql", "seq", "spool", "error")

    def __init__(self, sql: str, seq: int) -> None:
        self.sql = sql  # the statement, as the engine runs it
        self.seq = seq  # the sequence id the client's next packet must carry
        self.spool = tempfile.SpooledTemporaryFile(max_size=INFILE_IN_MEMORY)
        self.error: str | None = None  # the spool could not be written (the rest is dropped)

    def write(self, data: bytes) -> None:
        if self.error is None:
            try:
                self.spool.write(data)
            except OSError as e:
                self.error = f"Error writing the received file: {e}"


class PreparedStatement:
    """A statement prepared by COM_STMT_PREPARE on this connection."""

    __slots__ = (
        "stmt_id",
        "sql",
        "engine_sql",
        "param_count",
        "columns",
        "types",
        "nullable",
        "param_types",
        "fixed",
        "long_data",
        "cursor",
        "prep",
        "shape",
    )

    def __init__(self, stmt_id: int, sql: str, param_count: int) -> None:
        self.stmt_id = stmt_id
        self.sql = sql
        self.engine_sql: str | None = None  # the engine's text, for a SELECT the engine answers
        self.param_count = param_count
        self.columns: list[str] | None = None
        self.types: list[str] = []
        self.nullable: list[bool] = []
        self.param_types: list[tuple[int, bool]] | None = None
        self.fixed: P.FixedParams | None = None  # fast decoding of the usual parameter types
        self.long_data: dict[int, bytearray] | None = None
        self.cursor: list[bytes] | None = None
        self.prep: Any = None  # the engine's statement, once it is known to be a plain lookup
        self.shape: P.ResultShape | None = None


_PARAM_SCAN = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|(\?)", re.S)


def count_placeholders(sql: str) -> int:
    return sum(1 for m in _PARAM_SCAN.finditer(sql) if m.group(1))


# ---------------------------------------------------------------------------------------------
# Packets


def take_packet(buf: Any, pos: int, max_packet: int) -> tuple[bytes, int, int, int] | None:
    """Cut the logical packet starting at ``buf[pos]``.

    Returns (payload, sequence id of its first part, of its last part, end position), or None
    while it is incomplete. A payload of 16 MB or more arrives split into parts of 0xFFFFFF
    bytes followed by a shorter one; their sequence ids must follow each other. Raises
    ``PacketTooLarge`` as soon as the headers seen announce more than ``max_packet`` bytes, and
    ``MysqlError`` when the parts of a split packet are out of order.
    """
    n = len(buf)
    if n - pos < 4:
        return None
    length = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16)
    first = buf[pos + 3]
    if length > max_packet:
        raise P.PacketTooLarge()
    end = pos + 4 + length
    if length < P.MAX_PAYLOAD:
        if end > n:
            return None
        return bytes(buf[pos + 4 : end]), first, first, end
    # A split packet: check that every part is there before copying any.
    total = length
    last = first
    p = end
    while True:
        if p > n or n - p < 4:
            return None
        length = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16)
        seq = buf[p + 3]
        if seq != (last + 1) & 0xFF:
            raise MysqlError(
                f"Got packets out of order (expected {(last + 1) & 0xFF}, got {seq})",
                ErrorCode.MALFORMED_PACKET,
            )
        last = seq
        total += length
        if total > max_packet:
            raise P.PacketTooLarge()
        p += 4 + length
        if length < P.MAX_PAYLOAD:
            break
    if p > n:
        return None
    chunks = []
    q = pos
    while q < p:
        length = buf[q] | (buf[q + 1] << 8) | (buf[q + 2] << 16)
        chunks.append(buf[q + 4 : q + 4 + length])
        q += 4 + length
    return b"".join(chunks), first, last, p


class _AuthChannel:
    """The stream mysql-mimic's authentication code reads and writes during COM_CHANGE_USER,
    fed from the protocol's receive buffer."""

    def __init__(self, proto: CommandProtocol, seq: int) -> None:
        self.proto = proto
        self.seq = seq
        self.waiter: asyncio.Future | None = None

    async def read(self) -> bytes:
        proto = self.proto
        while True:
            if proto.closing:
                raise ConnectionClosed()
            pkt = take_packet(proto.buf, 0, AUTH_MAX_PACKET)
            if pkt is not None:
                payload, first, last, end = pkt
                del proto.buf[:end]
                if first != self.seq:
                    raise MysqlError("Got packets out of order", ErrorCode.MALFORMED_PACKET)
                self.seq = (last + 1) & 0xFF
                return payload
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def send(self, payloads: list[bytes]) -> None:
        data, self.seq = P.frame(payloads, self.seq)
        if not self.proto.closing:
            self.proto.transport.write(data)

    async def write(self, data: bytes, drain: bool = True) -> None:
        self.send([data])

    async def drain(self) -> None:
        return None

    def reset_seq(self) -> None:
        self.seq = 0


# ---------------------------------------------------------------------------------------------
# The protocol


class CommandProtocol(asyncio.Protocol):
    """One logged-in client connection (see the module docstring)."""

    def __init__(self, conn: WireConnection) -> None:
        self.conn = conn
        self.server = conn.server
        self.state = conn.server.state
        self.session = conn.wire_session
        self.engine = self.session.engine
        self.max_packet = conn.server.max_packet
        self.eof_deprecated = conn.eof_deprecated
        self.found_rows = Capabilities.CLIENT_FOUND_ROWS in conn.capabilities
        self.stmts: dict[int, PreparedStatement] = {}
        self.next_stmt_id = 1
        # COM_QUERY payload -> (lookup plan, parameters) or _GENERAL, shared by the server's
        # connections with this connection's character set
        self.text_plans = self.state.text_plans_for(self.session.client_codec)
        self.transport: Any = None
        self.buf = bytearray()
        self.closing = False
        self.blocked = False  # commands wait until the client reads the answers queued so far
        self.busy = False  # a command of this connection runs on the worker thread
        self._close_session = False  # connection lost while busy: close the session after it
        self.waiting: _Wait | None = None  # a command waiting for another's transaction
        self._wait_timer: Any = None
        self.auth: _AuthChannel | None = None
        self.infile: _Infile | None = None  # LOAD DATA LOCAL: the file the client is sending
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()
        self._tasks: set[asyncio.Task] = set()
        self._handlers = {
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

    def take_over(self, transport: Any, pending: bytes, at_eof: bool) -> None:
        """Become ``transport``'s protocol; ``pending`` is what the stream had read ahead."""
        self.transport = transport
        transport.set_protocol(self)
        if pending:
            self.data_received(pending)
        if at_eof and not self.closing:
            self.closing = True
            transport.close()
        elif not transport.is_reading() and not self.closing:
            transport.resume_reading()  # the stream may have paused it; flow control is ours now

    # -- asyncio callbacks -----------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        if (
            not buf
            and self.auth is None
            and not self.closing
            and not self.busy
            and self.infile is None
        ):
            # The common case: exactly one whole command, nothing left over from before.
            n = len(data)
            if n > 4 and data[3] == 0:
                length = data[0] | (data[1] << 8) | (data[2] << 16)
                if length + 4 == n and length < P.MAX_PAYLOAD and length <= self.max_packet:
                    handler = self._handlers.get(data[4])
                    if handler is not None:
                        r = self._call(handler, data[4:], 1)
                        if r.__class__ is _Offload:
                            self._offload(r)
                        elif r.__class__ is _Wait:
                            self._park(r)
                        elif r and not self.closing:
                            self.transport.write(r)
                        return
        if self.closing:
            return
        if self.auth is not None:
            buf += data
            self.auth.wake()
            return
        if self.infile is not None:
            buf += data
            self._take_infile()
            return
        if self.blocked or self.busy:  # commands wait in the buffer
            buf += data
            return
        if buf:
            buf += data
            pos = self._run(buf)
            del buf[:pos]
        else:
            pos = self._run(data)
            if pos < len(data):
                buf += memoryview(data)[pos:]
        if self.infile is not None and buf:
            self._take_infile()  # the file's first packets came with the request's answer

    def eof_received(self) -> bool:
        return False  # the transport closes once our responses are flushed

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        if self.auth is not None:
            self.auth.wake()
        if self.infile is not None:
            self.infile.spool.close()
            self.infile = None
        self.stmts.clear()
        if self.waiting is not None:  # parked, not running: nothing else uses the session
            self.waiting = None
            self._stop_wait_timer()
            self.busy = False
        if self.busy:
            self._close_session = True  # the worker is using the session: close it after
        else:
            self.session.close()
        if not self.done.done():
            self.done.set_result(None)

    def pause_writing(self) -> None:
        # The client is not reading its answers: stop reading its commands until it does.
        if not self.closing:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.closing:
            return
        self.transport.resume_reading()
        if self.blocked:
            self.blocked = False
            if self.buf and not self.busy:
                self.data_received(b"")  # the commands that waited

    # -- the worker thread -------------------------------------------------------------------

    def _offload(self, job: _Offload, waited: _Wait | None = None) -> None:
        """Run ``job`` on the worker; this connection reads no command until it is answered.
        ``waited``: the lock wait ``job`` retries (its deadline and timer carry over)."""
        self.busy = True
        loop = asyncio.get_running_loop()

        def work() -> None:
            r = self._call(job.fn, job.payload, job.seq)
            if r.__class__ is _Wait:
                r.offload = True
                if waited is not None:
                    r.deadline = waited.deadline
            try:
                loop.call_soon_threadsafe(self._offloaded, r)
            except RuntimeError:  # the loop is closed: the server is gone
                pass

        try:
            (self.server.waits() if job.waits else self.server.worker()).submit(work)
        except RuntimeError:  # the worker is shut down: the server is stopping
            self.busy = False
            self._close_after([])

    def _offloaded(self, r: Any) -> None:
        """Back on the loop: send the answer, then run the commands that waited."""
        self.busy = False
        if self._close_session:
            self._close_session = False
            self.session.close()
        if self.closing:
            return
        if r.__class__ is _Offload:  # pragma: no cover - offloaded work never offloads again
            raise RuntimeError("an offloaded command offloaded again")
        if r.__class__ is _Wait:
            self._park(r)
            return
        self._stop_wait_timer()
        if r:
            self.transport.write(r)
        if self.buf and not self.blocked and self.auth is None:
            self.data_received(b"")

    # -- waiting for another connection's transaction ------------------------------------------

    def _park(self, w: _Wait) -> None:
        """Hold ``w`` (and every later command of this connection) until a transaction ends."""
        if self.closing:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if w.deadline is None:
            w.deadline = now + max(0.0, self.session.lock_wait_timeout)
        self.busy = True
        self.waiting = w
        self.server.lock_waiters.append(self)
        if self._wait_timer is None:
            self._wait_timer = loop.call_at(w.deadline, self._wait_expired)
        if getattr(self.engine, "shared", False):
            # the writer may be another process, whose commit no callback announces: try again
            loop.call_later(0.005, self._poll_wait, w)

    def _poll_wait(self, w: _Wait) -> None:
        if self.waiting is not w or self.closing:
            return
        try:
            self.server.lock_waiters.remove(self)
        except ValueError:
            pass
        self.retry_wait()

    def _stop_wait_timer(self) -> None:
        if self._wait_timer is not None:
            self._wait_timer.cancel()
            self._wait_timer = None

    def retry_wait(self) -> None:
        """A transaction ended: run the waiting command again (it may park once more)."""
        w = self.waiting
        if w is None or self.closing:
            return
        self.waiting = None
        if w.offload:
            self._offload(_Offload(w.fn, w.payload, w.seq), w)
            return
        r = self._call(w.fn, w.payload, w.seq)
        if r.__class__ is _Wait:
            r.deadline = w.deadline
        self._offloaded(r)

    def _wait_expired(self) -> None:
        self._wait_timer = None
        w = self.waiting
        if w is None or self.closing:
            return  # running again right now (on the worker): it re-arms if it parks again
        loop = asyncio.get_running_loop()
        if loop.time() < w.deadline:
            self._wait_timer = loop.call_at(w.deadline, self._wait_expired)
            return
        self.waiting = None
        try:
            self.server.lock_waiters.remove(self)
        except ValueError:
            pass
        msg = "Lock wait timeout exceeded; try restarting transaction"
        self._offloaded(self._failed(errors.ER_LOCK_WAIT_TIMEOUT, "HY000", msg, w.seq))

    # -- the command loop --------------------------------------------------------------------

    def _run(self, src: Any) -> int:
        """Run every complete command in ``src``; return how many bytes were consumed."""
        out: list[Any] = []
        pos = 0
        pending = 0
        handlers = self._handlers
        while True:
            try:
                pkt = take_packet(src, pos, self.max_packet)
            except P.PacketTooLarge:
                msg = "Got a packet bigger than 'max_allowed_packet' bytes"
                out.append(self._error(P.ER_NET_PACKET_TOO_LARGE, "08S01", msg, 1))
                self._close_after(out)
                return len(src)
            except MysqlError as e:
                out.append(self._error(P.ER_MALFORMED_PACKET, "08S01", e.msg, 1))
                self._close_after(out)
                return len(src)
            if pkt is None:
                break
            payload, first, last, pos = pkt
            if first != 0:
                msg = f"Got packets out of order (expected 0, got {first})"
                out.append(self._error(P.ER_MALFORMED_PACKET, "08S01", msg, 1))
                self._close_after(out)
                return len(src)
            seq = (last + 1) & 0xFF
            if not payload:
                out.append(self._error(P.ER_MALFORMED_PACKET, "08S01", "Malformed packet", seq))
                continue
            cmd = payload[0]
            handler = handlers.get(cmd)
            if handler is not None:
                r = self._call(handler, payload, seq)
                if r.__class__ is _Offload:
                    self._flush(out)
                    self._offload(r)
                    return pos
                if r.__class__ is _Wait:
                    self._flush(out)
                    self._park(r)
                    return pos
                if r:
                    out.append(r)
                    pending += len(r)
                if self.closing:
                    break
                if self.infile is not None:  # what follows is the file the client sends
                    self._flush(out)
                    return pos
                if pending > FLUSH_AT:
                    self._flush(out)
                    pending = 0
                    if self.transport.get_write_buffer_size() > BACKLOG_MAX:
                        # Pipelined commands whose answers the client does not read: leave
                        # the rest in the buffer until the transport drains (resume_writing).
                        self.blocked = True
                        log.debug("connection %s: answers backlogged", id(self))
                        self.transport.pause_reading()
                        return pos
            else:
                if cmd == COM_QUIT:
                    self._close_after(out)
                    return len(src)
                if cmd == COM_CHANGE_USER:
                    self._flush(out)
                    self._change_user(payload, seq)
                    return pos
                msg = "Unknown command"
                out.append(self._error(P.ER_UNKNOWN_COM_ERROR, "08S01", msg, seq))
        self._flush(out)
        return pos

    def _call(self, handler: Any, payload: bytes, seq: int) -> Any:
        """Run one command; its framed response (empty when it has none), errors included."""
        try:
            r = handler(payload, seq)
        except errors.LockWait:
            return _Wait(handler, payload, seq)
        except errors.Error as e:
            out = self._failed(e.errno, e.sqlstate, e.msg or str(e), seq)
            if e.before:
                self.session.txn.diag = [*e.before, *self.session.txn.diag]
            return out
        except P.PacketError as e:
            return self._error(P.ER_MALFORMED_PACKET, "08S01", str(e), seq)
        except MysqlError as e:
            return self._failed(int(e.code), "HY000", e.msg, seq)
        except Exception as e:
            log.exception("error while running a command")
            return self._error(P.ER_UNKNOWN_ERROR, "HY000", f"{type(e).__name__}: {e}", seq)
        if r.__class__ is list:
            return P.frame(r, seq)[0] if r else b""
        return r  # framed bytes, or an _Offload

    def _flush(self, out: list[Any]) -> None:
        if out and not self.closing:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))
        out.clear()

    def _close_after(self, out: list[Any]) -> None:
        self._flush(out)
        self.closing = True
        self.transport.close()

    def _error(self, errno: int, sqlstate: str, msg: str, seq: int) -> bytes:
        self.state.count_error(errno)
        return P.frame([P.err_packet(errno, sqlstate, msg)], seq)[0]

    def _failed(self, errno: int, sqlstate: str, msg: str, seq: int) -> bytes:
        """A statement's error: the answer, and what SHOW WARNINGS / SHOW ERRORS then list."""
        self.session.txn.diag = [("Error", errno, msg)]
        return self._error(errno, sqlstate, msg, seq)

    # -- COM_CHANGE_USER ---------------------------------------------------------------------

    def _change_user(self, payload: bytes, seq: int) -> None:
        self.auth = _AuthChannel(self, seq)
        task = asyncio.get_running_loop().create_task(self._change_user_task(payload))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _change_user_task(self, payload: bytes) -> None:
        conn = self.conn
        conn.stream = self.auth  # mysql-mimic's authentication reads and writes through it
        self.stmts.clear()
        try:
            ok = await asyncio.wait_for(conn.com_change_user(payload), AUTH_TIMEOUT)
        except Exception as e:  # timeouts, garbage, a vanished client
            log.debug("COM_CHANGE_USER failed: %r", e)
            ok = False
        self.auth = None
        if self.closing:
            return
        if not ok:
            self.closing = True
            self.transport.close()
            return
        if self.buf:  # commands sent right behind the authentication
            self.data_received(b"")

    # -- results -------------------------------------------------------------------------------

    def ok(self, res: Result | None = None) -> bytes:
        status = self.session.status_flags
        if res is None:
            return P.ok_packet(status=status)
        affected = res.rowcount if res.rowcount and res.rowcount > 0 else 0
        if res.matched is not None and self.found_rows:
            affected = res.matched  # CLIENT_FOUND_ROWS: an UPDATE reports the rows it found
        return P.ok_packet(affected, res.lastrowid or 0, status, res.warnings)

    def _end_of_rows(self, extra_status: int = 0) -> bytes:
        return P.end_of_rows(self.session.status_flags | extra_status, self.eof_deprecated)

    def _prep_shape(self, prep: SelectPrepared) -> P.ResultShape:
        """The result shape of an engine SELECT statement, built once per statement object."""
        cache = self.server.prep_shapes
        entry = cache.get(id(prep))
        if entry is None or entry[0] is not prep:
            shape = P.ResultShape(prep.columns or [], prep.column_types, prep.nullable)
            if len(cache) >= SHAPE_CACHE_LIMIT:
                cache.clear()
            entry = cache[id(prep)] = (prep, shape)  # holding prep keeps its id() unique
        return entry[1]

    def _result_shape(self, res: Result) -> P.ResultShape:
        cols = res.columns or []
        types = res.column_types
        if "NULL" in types:
            types = P.typed_columns(types, res.rows)
        key = (tuple(cols), tuple(types), tuple(res.nullable))
        cache = self.server.header_cache
        shape = cache.get(key)
        if shape is None:
            shape = P.ResultShape(cols, types, res.nullable)
            if len(cache) >= SHAPE_CACHE_LIMIT:
                cache.clear()
            cache[key] = shape
        return shape

    def _result(self, res: Result, seq: int, binary: bool) -> Any:
        if res.columns is None:
            return [self.ok(res)]
        shape = self._result_shape(res)
        status = self.session.status_flags
        warnings = len(res.conditions)  # the EOF packet counts them, as the OK packet does
        if binary:
            return shape.binary_response(res.rows, seq, status, self.eof_deprecated, warnings)
        return shape.text_response(res.rows, seq, status, self.eof_deprecated, warnings)

    # -- commands ------------------------------------------------------------------------------

    def com_ok(self, data: bytes, seq: int) -> list[bytes]:
        return [self.ok()]

    def _lock_free_rows(self, prep, params) -> tuple | None:
        """A reader lookup answered without the engine lock (the embedded cursor's fast path,
        dbapi.Cursor.execute), with what a SELECT sets in the session; None when the engine's
        path must answer: a value MySQL compares as its own type (``BindsOtherwise``), or a view
        rebuilt meanwhile (``ReaderGone``: that path plans it again)."""
        try:
            rows = prep.rows(params)
        except (BindsOtherwise, ReaderGone):
            return None
        session = self.session
        self.state.questions += 1
        session.last_rowcount = -1  # ROW_COUNT() after a SELECT
        txn = session.txn
        if txn.diag:
            txn.diag = ()  # a SELECT from a table clears the diagnostics area
        txn.found_rows = len(rows)
        return rows

    def com_query(self, data: bytes, seq: int) -> Any:
        session = self.session
        hit = self.text_plans.get(data)
        if hit is None:
            hit = self._plan_text(data)
        if hit is _GENERAL:
            slow = self._slow(data)
            if slow:
                return _Offload(self._com_query_general, data, seq, slow == "waits")
            return self._com_query_general(data, seq)
        plan, params = hit
        engine = self.engine
        prep = plan.prep
        if (
            prep is not None
            and engine.cached(plan.sql) is prep
            and not plan.refused
            and not session.upstream_only
            and not (prep.timestamps and zone_differs(session.time_zone()))
            and engine.lock_free_read(session.txn)  # the engine's rule (counts the read)
        ):
            rows = self._lock_free_rows(prep, params)
            if rows is not None:
                return plan.shape.text_response(
                    rows, seq, session.status_flags, self.eof_deprecated
                )
        sql = data[1:].decode(session.client_codec, "surrogateescape")
        if plan.refused:
            return self._result(session.execute(sql), seq, False)
        res = session.execute_lifted(sql, plan, params)
        if not plan.refused:
            self._remember(plan, len(params), params)
        return self._result(res, seq, False)

    def _slow(self, data: bytes) -> bool | str:
        """Is this statement one that may run long under the engine lock? DDL (a new view
        replays base data), a query the engine has not seen (planning it may install a view) or
        one it proxies to base storage. Those go to the worker."""
        sql = data[1:].decode(self.session.client_codec, "surrogateescape")
        st = self.state.statement(sql)
        if st.kind in ("ddl", "explain"):  # EXPLAIN may compile a query to plan it
            return True
        if st.kind == "lock_select":
            return "waits"  # GET_LOCK, SLEEP: the session waits, on a thread of its own
        return st.kind == "engine" and self._slow_query(st.sql)

    def _slow_query(self, sql: str | None) -> bool:
        """Is the engine's statement for ``sql`` (or its literal-lifted form) new to it, or
        proxied to base storage?"""
        if sql is None:
            return False
        cached = self.engine.cached
        prep = cached(sql)
        if prep is None:
            lifted = lift_literals(sql)
            prep = cached(lifted[0]) if lifted is not None else None
        return prep is None or prep.__class__ is ProxyPrepared

    def _com_query_general(self, data: bytes, seq: int) -> Any:
        session = self.session
        sql = data[1:].decode(session.client_codec, "surrogateescape")
        st = self.state.statement(sql)
        if st.kind == "load_local":
            return self._ask_for_file(st.sql, seq)
        return self._result(session.execute(sql), seq, False)

    # -- LOAD DATA LOCAL INFILE ----------------------------------------------------------------

    def _ask_for_file(self, sql: str, seq: int) -> list[bytes]:
        """Answer ``LOAD DATA LOCAL INFILE 'name'`` with the request for the file (0xFB and its
        name); the client's next packets are its contents (``_take_infile``)."""
        self.state.questions += 1
        allowed = str(self.state.globals.get("local_infile", 1)).upper() not in ("0", "OFF")
        if not allowed or Capabilities.CLIENT_LOCAL_FILES not in self.conn.capabilities:
            # refused before the client sends anything: the connection goes on as usual
            raise errors.OperationalError(
                "Loading local data is disabled; this must be enabled on both the client and "
                "server sides",
                P.ER_CLIENT_LOCAL_FILES_DISABLED,
                "42000",
            )
        spec = parse_load(sql)  # a syntax error is answered before the file is asked for
        if spec is None:
            raise errors.parse_error(f"near '{sql[:40]}'")
        self.infile = _Infile(sql, (seq + 1) & 0xFF)
        return [b"\xfb" + spec.path.encode(self.session.client_codec, "surrogateescape")]

    def _take_infile(self) -> None:
        """Spool the file's packets in the buffer; at the empty packet that ends the file, run
        the load (on the worker: a big file takes a while)."""
        inf = self.infile
        buf = self.buf
        pos = 0
        try:
            while True:
                pkt = take_packet(buf, pos, self.max_packet)
                if pkt is None:
                    break
                payload, first, last, pos = pkt
                if first != inf.seq:
                    raise MysqlError(
                        f"Got packets out of order (expected {inf.seq}, got {first})",
                        ErrorCode.MALFORMED_PACKET,
                    )
                inf.seq = (last + 1) & 0xFF
                if not payload:  # the end of the file (or a client that sends none)
                    del buf[:pos]
                    self.infile = None
                    self._offload(_Offload(self._load_local, inf, inf.seq))
                    return
                inf.write(payload)
        except P.PacketTooLarge:
            self._infile_failed(
                P.ER_NET_PACKET_TOO_LARGE, "Got a packet bigger than 'max_allowed_packet' bytes"
            )
            return
        except MysqlError as e:
            self._infile_failed(P.ER_NET_PACKETS_OUT_OF_ORDER, e.msg)
            return
        del buf[:pos]

    def _infile_failed(self, errno: int, msg: str) -> None:
        """The file's packets cannot be read: MySQL's error, and the connection closes."""
        inf = self.infile
        self.infile = None
        inf.spool.close()
        self.buf.clear()
        self._close_after([self._error(errno, "08S01", msg, inf.seq)])

    def _load_local(self, inf: _Infile, seq: int) -> list[bytes]:
        """Run the load with the file received (again, after waiting for another connection's
        transaction: the file is kept until the load ends)."""
        try:
            if inf.error is not None:
                raise errors.OperationalError(inf.error, P.ER_UNKNOWN_ERROR, "HY000")
            res = self.session.load_local(inf.sql, inf.spool)
        except errors.LockWait:
            raise
        except BaseException:
            inf.spool.close()
            raise
        inf.spool.close()
        return [self.ok(res)]

    def _remember(self, target: Any, nparams: int, lifted: Any = None) -> None:
        """Let ``target`` (a lookup plan or a prepared statement) take the fast path when its
        engine statement is a plain reader lookup (what dbapi.Cursor.execute shortcuts too).
        A lookup plan (``lifted``: the literals of one of its texts) only when its literals
        bind as they compare whatever their values: the fast path does not look at them."""
        sql = target.sql if isinstance(target, LookupPlan) else target.engine_sql
        prep = self.engine.cached(sql)
        if (
            prep.__class__ is SelectPrepared
            and prep.simple
            and prep.param_count == nparams
            and (lifted is None or lifts_whatever_values(prep, lifted))
        ):
            shape = self._prep_shape(prep)
            if not shape.untyped:
                # shape first: a lookup plan is shared, and another connection's event-loop
                # read takes the fast path as soon as it sees ``prep``
                target.shape = shape
                target.prep = prep

    def _plan_text(self, data: bytes) -> Any:
        """Look a COM_QUERY text up once (ServerState.lifted_lookup) and remember the outcome
        for this exact text: (plan, parameters) or _GENERAL."""
        if len(data) > CACHED_TEXT_MAX or data[1:7].lower() != b"select":
            return _GENERAL  # only lookups are lifted; long texts are not worth keeping
        sql = data[1:].decode(self.session.client_codec, "surrogateescape")
        hit = self.state.lifted_lookup(sql)
        entry = _GENERAL if hit is None else (hit[0], tuple(hit[1]))
        plans = self.text_plans
        if len(plans) >= TEXT_CACHE_LIMIT:
            plans.clear()
        plans[data] = entry
        return entry

    def com_init_db(self, data: bytes, seq: int) -> list[bytes]:
        name = data[1:].decode("utf-8", "replace").strip().strip("`")
        if not name:
            raise errors.Error("No database selected", 1046, "3D000")
        self.session.use(name)
        return [self.ok()]

    def com_field_list(self, data: bytes, seq: int) -> list[bytes]:
        table = data[1:].split(b"\x00", 1)[0].decode("utf-8", "replace")
        res = self.engine.execute(f"DESCRIBE `{table.replace('`', '``')}`")
        out = []
        for row in res.rows:
            name = str(row[0])
            type_name = str(row[1]).upper() if len(row) > 1 and row[1] else "VARCHAR"
            nullable = not (len(row) > 2 and str(row[2]).upper() == "NO")
            out.append(P.column_def(name, type_name, nullable, table=table) + b"\xfb")
        out.append(self._end_of_rows())
        return out

    def com_statistics(self, data: bytes, seq: int) -> list[bytes]:
        st = self.state
        uptime = int(time.time() - st.started)
        text = f"Uptime: {uptime}  Threads: {st.connections}  Questions: {st.questions}"
        return [text.encode()]

    def com_reset_connection(self, data: bytes, seq: int) -> list[bytes]:
        self.session.reset()
        self.stmts.clear()
        return [self.ok()]

    def com_set_option(self, data: bytes, seq: int) -> list[bytes]:
        return [P.eof_packet(self.session.status_flags)]

    # -- prepared statements -----------------------------------------------------------------

    def com_stmt_prepare(self, data: bytes, seq: int) -> list[bytes]:
        session = self.session
        sql = data[1:].decode(session.client_codec, "surrogateescape")
        st = self.state.statement(sql)
        stmt_id = self.next_stmt_id
        self.next_stmt_id = (stmt_id + 1) & 0xFFFFFFFF or 1
        if st.kind in ("engine", "write", "ddl", "const_select"):
            try:
                prep = self.engine.prepare(st.sql)
            except errors.Error:
                if st.kind != "const_select":
                    raise
                prep = None
        else:
            prep = None
        if st.kind == "error":
            raise st.info
        if st.kind == "load_local":  # the client's file is asked for in answer to COM_QUERY
            raise errors.Error(
                "This command is not supported in the prepared statement protocol yet",
                P.ER_UNSUPPORTED_PS,
                "HY000",
            )
        if prep is not None:
            stmt = PreparedStatement(stmt_id, sql, int(prep.param_count))
            if prep.columns is not None:
                stmt.columns = list(prep.columns)
                stmt.types = list(prep.column_types or [])
                stmt.nullable = list(prep.nullable or [])
            if st.kind == "engine":
                stmt.engine_sql = st.sql
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

    def com_stmt_execute(self, data: bytes, seq: int) -> Any:
        stmt = self._stmt(data)
        if len(data) < 10:
            raise P.PacketError("COM_STMT_EXECUTE too short")
        if stmt.prep is None and self._slow_query(stmt.engine_sql):
            return _Offload(self._stmt_execute, data, seq)
        return self._stmt_execute(data, seq)

    def _stmt_execute(self, data: bytes, seq: int) -> Any:
        stmt = self._stmt(data)
        flags = data[5]
        session = self.session
        if stmt.param_count:
            fixed = stmt.fixed
            params = None
            if fixed is not None and stmt.long_data is None:
                params = fixed.decode(data, 10)
            if params is None:
                types = stmt.param_types
                params, stmt.param_types = P.decode_params(
                    data, 10, stmt.param_count, types, stmt.long_data, session.client_codec
                )
                stmt.long_data = None
                if stmt.param_types is not types:
                    stmt.fixed = P.FixedParams.of(stmt.param_types)
        else:
            params = ()
        stmt.cursor = None
        prep = stmt.prep
        engine = self.engine
        if (
            prep is not None
            and engine.cached(stmt.engine_sql) is prep
            and not flags & 0x07
            and not session.upstream_only
            and not (prep.timestamps and zone_differs(session.time_zone()))
            and engine.lock_free_read(session.txn)  # the engine's rule (counts the read)
        ):
            rows = self._lock_free_rows(prep, params)
            if rows is not None:
                return stmt.shape.binary_response(
                    rows, seq, session.status_flags, self.eof_deprecated
                )
        res = session.execute(stmt.sql, params)
        if stmt.engine_sql is not None:
            self._remember(stmt, stmt.param_count)
        if res.columns is None:
            return [self.ok(res)]
        if flags & 0x07 and res.columns:  # a read-only cursor: rows go out on COM_STMT_FETCH
            shape = self._result_shape(res)
            stmt.cursor = P.binary_rows(res.rows, shape.encoders)
            out = list(shape.defs)
            status = session.status_flags | P.STATUS_CURSOR_EXISTS
            if self.eof_deprecated:
                out.append(P.ok_packet(status=status, eof=True))
            else:
                out.append(P.eof_packet(status))
            return out
        return self._result(res, seq, True)

    def com_stmt_fetch(self, data: bytes, seq: int) -> list[bytes]:
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

    def com_stmt_send_long_data(self, data: bytes, seq: int) -> list[bytes]:
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
        if len(buf) + len(data) - 7 > self.max_packet:
            stmt.long_data = None
            return _NO_REPLY
        buf += data[7:]
        return _NO_REPLY

    def com_stmt_close(self, data: bytes, seq: int) -> list[bytes]:
        if len(data) >= 5:
            self.stmts.pop(int.from_bytes(data[1:5], "little"), None)
        return _NO_REPLY

    def com_stmt_reset(self, data: bytes, seq: int) -> list[bytes]:
        stmt = self._stmt(data)
        stmt.long_data = None
        stmt.cursor = None
        return [self.ok()]

"""MySQL wire-format pieces the server builds and parses itself.

mysql-mimic does the handshake and authentication; everything in the command phase (result sets,
prepared-statement metadata, binary rows, parameter decoding, OK and ERR packets) is encoded here,
because it runs once per query and must stay cheap:

* column definitions are built once per distinct (names, types, nullability) and reused;
* a whole response is framed into one ``bytes`` and written with a single ``transport.write``;
* COM_STMT_EXECUTE parameters are decoded into Python values and handed to the engine as bound
  parameters, never spliced into SQL text.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import struct
from decimal import Decimal
from typing import Any

from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.stream import ConnectionClosed

from ..sql.functions.coerce import ColumnFloat, fmt_float

MAX_PAYLOAD = 0xFFFFFF

# Column types (protocol codes).
T_DECIMAL = 0x00
T_TINY = 0x01
T_SHORT = 0x02
T_LONG = 0x03
T_FLOAT = 0x04
T_DOUBLE = 0x05
T_NULL = 0x06
T_TIMESTAMP = 0x07
T_LONGLONG = 0x08
T_INT24 = 0x09
T_DATE = 0x0A
T_TIME = 0x0B
T_DATETIME = 0x0C
T_YEAR = 0x0D
T_VARCHAR = 0x0F
T_BIT = 0x10
T_JSON = 0xF5
T_NEWDECIMAL = 0xF6
T_ENUM = 0xF7
T_SET = 0xF8
T_TINY_BLOB = 0xF9
T_MEDIUM_BLOB = 0xFA
T_LONG_BLOB = 0xFB
T_BLOB = 0xFC
T_VAR_STRING = 0xFD
T_STRING = 0xFE

# Column definition flags.
NOT_NULL_FLAG = 1
PRI_KEY_FLAG = 2
BLOB_FLAG = 16
UNSIGNED_FLAG = 32
BINARY_FLAG = 128
NUM_FLAG = 32768

# Character set ids used in column definitions.
CS_BINARY = 63
CS_UTF8MB4 = 45  # utf8mb4_general_ci

# Server status flags.
STATUS_IN_TRANS = 0x0001
STATUS_AUTOCOMMIT = 0x0002
STATUS_CURSOR_EXISTS = 0x0040
STATUS_IN_TRANS_READONLY = 0x2000
STATUS_LAST_ROW_SENT = 0x0080

# Error codes the server itself raises.
ER_HANDSHAKE_ERROR = 1043
ER_ACCESS_DENIED = 1045
ER_UNKNOWN_COM_ERROR = 1047
ER_BAD_DB_ERROR = 1049
ER_EMPTY_QUERY = 1065
ER_UNKNOWN_STMT_HANDLER = 1243
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_NET_PACKET_TOO_LARGE = 1153
ER_MALFORMED_PACKET = 1835
ER_WRONG_ARGUMENTS = 1210
ER_UNKNOWN_ERROR = 1105
ER_NOT_SUPPORTED_YET = 1235
ER_UNSUPPORTED_PS = 1295
ER_NET_PACKETS_OUT_OF_ORDER = 1156
ER_CLIENT_LOCAL_FILES_DISABLED = 3948

# type name -> (protocol type, charset, display length, flags, decimals)
_NUMERIC = BINARY_FLAG | NUM_FLAG
TYPE_INFO: dict[str, tuple[int, int, int, int, int]] = {
    "BIGINT": (T_LONGLONG, CS_BINARY, 20, _NUMERIC, 0),
    "INT": (T_LONG, CS_BINARY, 11, _NUMERIC, 0),
    "INTEGER": (T_LONG, CS_BINARY, 11, _NUMERIC, 0),
    "MEDIUMINT": (T_INT24, CS_BINARY, 9, _NUMERIC, 0),
    "SMALLINT": (T_SHORT, CS_BINARY, 6, _NUMERIC, 0),
    "TINYINT": (T_TINY, CS_BINARY, 4, _NUMERIC, 0),
    # (a BIT column is sent as its unsigned number, see the README)
    "BIT": (T_LONGLONG, CS_BINARY, 20, _NUMERIC | UNSIGNED_FLAG, 0),
    "BOOL": (T_TINY, CS_BINARY, 1, _NUMERIC, 0),
    "BOOLEAN": (T_TINY, CS_BINARY, 1, _NUMERIC, 0),
    "DECIMAL": (T_NEWDECIMAL, CS_BINARY, 66, _NUMERIC, 30),
    "NUMERIC": (T_NEWDECIMAL, CS_BINARY, 66, _NUMERIC, 30),
    "DOUBLE": (T_DOUBLE, CS_BINARY, 22, _NUMERIC, 31),
    "REAL": (T_DOUBLE, CS_BINARY, 22, _NUMERIC, 31),
    "FLOAT": (T_FLOAT, CS_BINARY, 12, _NUMERIC, 31),
    "VARCHAR": (T_VAR_STRING, CS_UTF8MB4, 1020, 0, 0),
    "CHAR": (T_STRING, CS_UTF8MB4, 1020, 0, 0),
    "TEXT": (T_BLOB, CS_UTF8MB4, 262140, BLOB_FLAG, 0),
    "MEDIUMTEXT": (T_BLOB, CS_UTF8MB4, 67108860, BLOB_FLAG, 0),
    "LONGTEXT": (T_BLOB, CS_UTF8MB4, 0xFFFFFFFF, BLOB_FLAG, 0),
    "JSON": (T_BLOB, CS_UTF8MB4, 0xFFFFFFFF, BLOB_FLAG, 0),
    "BLOB": (T_BLOB, CS_BINARY, 65535, BLOB_FLAG | BINARY_FLAG, 0),
    "VARBINARY": (T_VAR_STRING, CS_BINARY, 255, BINARY_FLAG, 0),
    "BINARY": (T_STRING, CS_BINARY, 255, BINARY_FLAG, 0),
    "DATE": (T_DATE, CS_BINARY, 10, BINARY_FLAG, 0),
    "DATETIME": (T_DATETIME, CS_BINARY, 26, BINARY_FLAG, 6),
    "TIMESTAMP": (T_TIMESTAMP, CS_BINARY, 26, BINARY_FLAG, 6),
    "TIME": (T_TIME, CS_BINARY, 17, BINARY_FLAG, 6),
    "NULL": (T_NULL, CS_BINARY, 0, BINARY_FLAG, 0),
}
_DEFAULT_TYPE = TYPE_INFO["VARCHAR"]


def type_info(name: str | None) -> tuple[int, int, int, int, int]:
    if not name:
        return _DEFAULT_TYPE
    info = TYPE_INFO.get(name)
    if info is None:
        base = name.split("(", 1)[0].strip().upper()
        unsigned = base.endswith(" UNSIGNED")
        if unsigned:
            base = base[: -len(" UNSIGNED")].strip()
        info = TYPE_INFO.get(base, _DEFAULT_TYPE)
        if unsigned:
            info = (info[0], info[1], info[2], info[3] | UNSIGNED_FLAG, info[4])
    return info


# ---------------------------------------------------------------------------------------------
# Low-level encoders


def lenenc_int(n: int) -> bytes:
    if n < 251:
        return bytes((n,))
    if n < 0x10000:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 0x1000000:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


_LEN1 = [bytes((i,)) for i in range(251)]  # one-byte length prefixes


def lenenc_str(b: bytes) -> bytes:
    n = len(b)
    if n < 251:
        return bytes((n,)) + b
    return lenenc_int(n) + b


def frame(payloads: list[bytes], seq: int) -> tuple[bytes, int]:
    """Frame payloads into packets starting at sequence id ``seq``; return (bytes, next seq)."""
    out = bytearray()
    for p in payloads:
        n = len(p)
        if n < MAX_PAYLOAD:
            out += (n | (seq << 24)).to_bytes(4, "little")
            out += p
            seq = (seq + 1) & 0xFF
            continue
        pos = 0
        while True:
            chunk = p[pos : pos + MAX_PAYLOAD]
            out += (len(chunk) | (seq << 24)).to_bytes(4, "little")
            out += chunk
            seq = (seq + 1) & 0xFF
            pos += MAX_PAYLOAD
            if len(chunk) < MAX_PAYLOAD:
                break
    return bytes(out), seq


def ok_packet(
    affected: int = 0, last_id: int = 0, status: int = 0, warnings: int = 0, eof: bool = False
) -> bytes:
    return (
        (b"\xfe" if eof else b"\x00")
        + lenenc_int(max(affected, 0))
        + lenenc_int(max(last_id or 0, 0))
        + struct.pack("<HH", status, min(warnings, 0xFFFF))
    )


def eof_packet(status: int = 0, warnings: int = 0) -> bytes:
    return struct.pack("<BHH", 0xFE, warnings, status)


def is_eof_payload(p: bytes) -> bool:
    """An EOF packet (or an OK packet with the EOF header, as after rows)."""
    return p[:1] == b"\xfe" and len(p) < 9


def err_packet(errno: int, sqlstate: str, msg: str) -> bytes:
    state = (sqlstate or "HY000").encode("ascii", "replace")[:5].ljust(5, b"0")
    return struct.pack("<BH", 0xFF, errno) + b"#" + state + msg.encode("utf-8", "replace")


def column_def(
    name: str,
    type_name: str | None,
    nullable: bool = True,
    table: str = "",
    schema: str = "",
) -> bytes:
    ptype, charset, length, flags, decimals = type_info(type_name)
    if not nullable:
        flags |= NOT_NULL_FLAG
    bname = name.encode("utf-8")
    btable = table.encode("utf-8")
    return b"".join(
        (
            b"\x03def",
            lenenc_str(schema.encode("utf-8")),
            lenenc_str(btable),
            lenenc_str(btable),
            lenenc_str(bname),
            lenenc_str(bname),
            b"\x0c",
            struct.pack("<HIBHBH", charset, length, ptype, flags, decimals, 0),
        )
    )


PARAM_DEF = column_def("?", "VARCHAR")


def value_type_name(v: Any) -> str:
    """The column type to declare for a value whose column the engine typed NULL."""
    if isinstance(v, bool):
        return "TINYINT"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "DOUBLE"
    if isinstance(v, Decimal):
        return "DECIMAL"
    if isinstance(v, _dt.datetime):
        return "DATETIME"
    if isinstance(v, _dt.date):
        return "DATE"
    if isinstance(v, _dt.timedelta):
        return "TIME"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "BLOB"
    return "VARCHAR"


def typed_columns(types: Any, rows: Any) -> list[str]:
    """``types`` with each NULL-typed column that holds a value retyped after its first value
    (a NULL column definition would make clients drop the values)."""
    out = list(types)
    for i, t in enumerate(out):
        if t == "NULL":
            for r in rows:
                if i < len(r) and r[i] is not None:
                    out[i] = value_type_name(r[i])
                    break
    return out


# ---------------------------------------------------------------------------------------------
# Text protocol values


def double_text(v: float) -> str:
    """A DOUBLE as MySQL's text protocol writes it: ``1``, ``0.1``, ``1e20`` (not Python's
    ``1.0`` and ``1e+20``); a whole number below 10^15 without the digits' lookup."""
    if v.is_integer() and -1e15 < v < 1e15:
        return str(int(v))  # (-0.0 too: MariaDB writes 0)
    return fmt_float(v)


def _text_value(v: Any) -> bytes:
    """Encode one non-NULL value for a text-protocol row (length prefix included)."""
    t = type(v)
    if t is str:
        b = v.encode("utf-8", "surrogateescape")
    elif t is int:
        b = str(v).encode("ascii")
    elif t is bool:
        b = b"1" if v else b"0"
    elif t is float:
        b = double_text(v).encode("ascii")
    elif t is bytes:
        b = v
    elif isinstance(v, Decimal):
        b = format(v, "f").encode("ascii")
    elif isinstance(v, _dt.datetime):
        b = v.isoformat(" ").encode("ascii")
    elif isinstance(v, _dt.date):
        b = v.isoformat().encode("ascii")
    elif isinstance(v, _dt.timedelta):
        b = _format_timedelta(v).encode("ascii")
    elif isinstance(v, (bytearray, memoryview)):
        b = bytes(v)
    else:
        b = str(v).encode("utf-8")
    n = len(b)
    if n < 251:
        return bytes((n,)) + b
    return lenenc_int(n) + b


def _format_timedelta(v: _dt.timedelta) -> str:
    total = v.days * 86400 + v.seconds
    sign = "-" if total < 0 or (total == 0 and v.microseconds < 0) else ""
    total = abs(total)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    if v.microseconds:
        return f"{sign}{h:02d}:{m:02d}:{s:02d}.{v.microseconds:06d}"
    return f"{sign}{h:02d}:{m:02d}:{s:02d}"


def _t_str(v: str) -> bytes:
    b = v.encode("utf-8", "surrogateescape")  # invalid client bytes go back out unchanged
    n = len(b)
    if n < 251:
        return bytes((n,)) + b
    return lenenc_int(n) + b


def _t_int(v: int) -> bytes:
    b = b"%d" % v
    return bytes((len(b),)) + b


def _t_bytes(v: bytes) -> bytes:
    n = len(v)
    if n < 251:
        return bytes((n,)) + v
    return lenenc_int(n) + v


# Per-class text encoders of the values rows hold most often; anything else takes _text_value.
_TEXT_BY_CLASS: dict[type, Any] = {
    str: _t_str,
    int: _t_int,
    bytes: _t_bytes,
    bool: lambda v: b"\x011" if v else b"\x010",
    float: lambda v: _t_bytes(double_text(v).encode("ascii")),
    ColumnFloat: lambda v: _t_bytes(v.shown().encode("ascii")),
}


# ---------------------------------------------------------------------------------------------
# Binary protocol values


def _as_datetime(v: Any) -> _dt.date:
    if isinstance(v, _dt.date):
        return v
    if isinstance(v, (int, float)):
        return _dt.datetime.fromtimestamp(v)
    s = str(v)
    try:
        return _dt.datetime.fromisoformat(s)
    except ValueError:
        return _dt.date.fromisoformat(s)


def _bin_datetime(v: Any) -> bytes:
    v = _as_datetime(v)
    if isinstance(v, _dt.datetime):
        if v.microsecond:
            return struct.pack(
                "<BHBBBBBI", 11, v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond
            )
        if v.hour or v.minute or v.second:
            return struct.pack("<BHBBBBB", 7, v.year, v.month, v.day, v.hour, v.minute, v.second)
    return struct.pack("<BHBB", 4, v.year, v.month, v.day)


def _bin_time(v: Any) -> bytes:
    if isinstance(v, str):
        neg = v.startswith("-")
        hms, _, frac = v.lstrip("-").partition(".")
        h, m, s = (int(x) for x in hms.split(":"))
        us = int((frac + "000000")[:6]) if frac else 0
        v = _dt.timedelta(hours=h, minutes=m, seconds=s, microseconds=us)
        if neg:
            v = -v
    if not isinstance(v, _dt.timedelta):
        raise TypeError(f"not a TIME value: {v!r}")
    neg = v < _dt.timedelta(0)
    if neg:
        v = -v
    days = v.days
    h, rem = divmod(v.seconds, 3600)
    m, s = divmod(rem, 60)
    if v.microseconds:
        return struct.pack("<BBIBBBI", 12, neg, days, h, m, s, v.microseconds)
    if days or h or m or s:
        return struct.pack("<BBIBBB", 8, neg, days, h, m, s)
    return b"\x00"


def _bin_str(v: Any) -> bytes:
    if v.__class__ is str:
        b = v.encode("utf-8", "surrogateescape")
        n = len(b)
        return _LEN1[n] + b if n < 251 else lenenc_int(n) + b
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
    elif isinstance(v, Decimal):
        b = format(v, "f").encode("ascii")
    elif type(v) is bool:
        b = b"1" if v else b"0"
    else:
        b = str(v).encode("utf-8")
    return lenenc_str(b)


_pack_q = struct.Struct("<q").pack
_pack_Q = struct.Struct("<Q").pack
_pack_i = struct.Struct("<i").pack
_pack_I = struct.Struct("<I").pack
_pack_h = struct.Struct("<h").pack
_pack_H = struct.Struct("<H").pack
_pack_b = struct.Struct("<b").pack
_pack_B = struct.Struct("<B").pack
_pack_d = struct.Struct("<d").pack
_pack_f = struct.Struct("<f").pack


def _int_encoder(signed: Any, unsigned: Any) -> tuple[Any, Any]:
    def enc_signed(v: Any) -> bytes:
        return signed(v if v.__class__ is int else int(v))

    def enc_unsigned(v: Any) -> bytes:
        return unsigned(v if v.__class__ is int else int(v))

    return enc_signed, enc_unsigned


_BIN_ENCODERS: dict[int, tuple[Any, Any]] = {
    T_LONGLONG: _int_encoder(_pack_q, _pack_Q),
    T_LONG: _int_encoder(_pack_i, _pack_I),
    T_INT24: _int_encoder(_pack_i, _pack_I),
    T_SHORT: _int_encoder(_pack_h, _pack_H),
    T_YEAR: _int_encoder(_pack_h, _pack_H),
    T_TINY: _int_encoder(_pack_b, _pack_B),
    T_DOUBLE: ((lambda v: _pack_d(float(v))),) * 2,
    T_FLOAT: ((lambda v: _pack_f(float(v))),) * 2,
    T_DATE: (_bin_datetime,) * 2,
    T_DATETIME: (_bin_datetime,) * 2,
    T_TIMESTAMP: (_bin_datetime,) * 2,
    T_TIME: (_bin_time,) * 2,
}


def binary_encoders(type_names: list[str]) -> list[Any]:
    encs = []
    for name in type_names:
        ptype, _cs, _len, flags, _dec = type_info(name)
        pair = _BIN_ENCODERS.get(ptype)
        if pair is None:
            encs.append(None if ptype == T_NULL else _bin_str)
        else:
            encs.append(pair[1] if flags & UNSIGNED_FLAG else pair[0])
    return encs


def binary_rows(rows: Any, encoders: list[Any]) -> list[bytes]:
    n = len(encoders)
    nbytes = (n + 9) // 8
    no_null_type = None not in encoders
    zero_head = bytes(nbytes + 1)  # the 0x00 row header and a NULL bitmap with no bit set
    out = []
    for row in rows:
        if no_null_type and None not in row:
            out.append(zero_head + b"".join([enc(v) for enc, v in zip(encoders, row)]))
            continue
        bitmap = bytearray(nbytes)
        parts = [b"\x00", b""]
        for i in range(n):
            v = row[i]
            enc = encoders[i]
            if v is None or enc is None:
                pos = i + 2
                bitmap[pos >> 3] |= 1 << (pos & 7)
            else:
                parts.append(enc(v))
        parts[1] = bytes(bitmap)
        out.append(b"".join(parts))
    return out


# ---------------------------------------------------------------------------------------------
# Whole responses


_pack_header = struct.Struct("<I").pack


def frame_into(out: bytearray, payload: bytes, seq: int) -> int:
    """Append ``payload`` framed as packet(s) starting at ``seq``; return the next seq."""
    n = len(payload)
    if n < MAX_PAYLOAD:
        out += _pack_header(n | (seq << 24))
        out += payload
        return (seq + 1) & 0xFF
    data, seq = frame([payload], seq)
    out += data
    return seq


class ResultShape:
    """What a result set's columns need on the wire, computed once per distinct column list.

    The column-count and column-definition packets are framed once per (first sequence id,
    status flags, EOF style) and reused; rows are encoded straight into the response buffer;
    the binary-protocol encoder of each column is chosen once from its declared type.
    """

    __slots__ = ("columns", "ncols", "defs", "encoders", "untyped", "_headers")

    def __init__(self, columns: Any, types: Any, nullable: Any) -> None:
        n = len(columns)
        types = list(types or ()) + ["VARCHAR"] * (n - len(types or ()))
        nullable = list(nullable or ()) + [True] * (n - len(nullable or ()))
        self.columns = columns  # kept so that a cache keyed by its id() stays valid
        self.ncols = n
        self.defs = [lenenc_int(n)] + [
            column_def(c, t, nl) for c, t, nl in zip(columns, types, nullable)
        ]
        self.encoders = binary_encoders(types)
        self.untyped = "NULL" in types  # a NULL-typed column: its values decide its type
        self._headers: dict[int, tuple[bytes, int]] = {}

    def header(self, seq: int, status: int, eof_deprecated: bool) -> tuple[bytes, int]:
        """The framed column count and definitions (and EOF) from ``seq``; and the next seq."""
        key = seq | (status << 8) | (eof_deprecated << 24)
        entry = self._headers.get(key)
        if entry is None:
            payloads = list(self.defs)
            if not eof_deprecated:
                payloads.append(eof_packet(status))
            entry = frame(payloads, seq)
            if len(self._headers) > 64:
                self._headers.clear()
            self._headers[key] = entry
        return entry

    def text_response(
        self, rows: Any, seq: int, status: int, eof_deprecated: bool, warnings: int = 0
    ) -> bytes:
        """A whole text-protocol result set (COM_QUERY), framed, in one ``bytes``."""
        head, seq = self.header(seq, status, eof_deprecated)
        out = [head]
        append = out.append
        n = self.ncols
        for row in rows:
            if len(row) != n:
                row = row[:n]
            parts = []
            add = parts.append
            for v in row:  # str and int inline: they are most of what rows hold
                c = v.__class__
                if c is str:
                    b = v.encode("utf-8", "surrogateescape")
                    k = len(b)
                    add(_LEN1[k] + b if k < 251 else lenenc_int(k) + b)
                elif c is int:
                    b = b"%d" % v
                    add(_LEN1[len(b)] + b)
                elif v is None:
                    add(b"\xfb")
                else:
                    add((_TEXT_BY_CLASS.get(c) or _text_value)(v))
            seq = _add_row(append, b"".join(parts), seq)
        return _finish_rows(out, seq, status, eof_deprecated, warnings)

    def binary_response(
        self, rows: Any, seq: int, status: int, eof_deprecated: bool, warnings: int = 0
    ) -> bytes:
        """A whole binary-protocol result set (COM_STMT_EXECUTE), framed, in one ``bytes``."""
        head, seq = self.header(seq, status, eof_deprecated)
        out = [head]
        append = out.append
        for p in binary_rows(rows, self.encoders):
            seq = _add_row(append, p, seq)
        return _finish_rows(out, seq, status, eof_deprecated, warnings)


def _add_row(append, p: bytes, seq: int) -> int:
    """Frame one row packet onto a response; returns the next sequence id."""
    k = len(p)
    if k < MAX_PAYLOAD:
        append(_pack_header(k | (seq << 24)))
        append(p)
        return (seq + 1) & 0xFF
    data, seq = frame([p], seq)
    append(data)
    return seq


def _finish_rows(
    out: list, seq: int, status: int, eof_deprecated: bool, warnings: int = 0
) -> bytes:
    """End a result set (EOF or OK packet) and join it into one ``bytes``."""
    end = end_of_rows(status, eof_deprecated, warnings)
    out.append(_pack_header(len(end) | (seq << 24)))
    out.append(end)
    return b"".join(out)


_END_OF_ROWS: dict[int, bytes] = {}


def end_of_rows(status: int, eof_deprecated: bool, warnings: int = 0) -> bytes:
    """The packet after the last row: an OK packet with the EOF header, or a classic EOF.
    ``warnings``: the statement's warning count (its diagnostics area's, when it left one)."""
    warnings = min(warnings, 0xFFFF)
    key = status | (eof_deprecated << 16) | (warnings << 17)
    p = _END_OF_ROWS.get(key)
    if p is None:
        p = (
            ok_packet(status=status, warnings=warnings, eof=True)
            if eof_deprecated
            else eof_packet(status, warnings)
        )
        if len(_END_OF_ROWS) > 256:
            _END_OF_ROWS.clear()
        _END_OF_ROWS[key] = p
    return p


# ---------------------------------------------------------------------------------------------
# COM_STMT_EXECUTE parameters


class PacketError(Exception):
    """A client packet that cannot be decoded."""


def _read_lenenc(data: bytes, pos: int) -> tuple[int, int]:
    first = data[pos]
    if first < 251:
        return first, pos + 1
    if first == 0xFC:
        return int.from_bytes(data[pos + 1 : pos + 3], "little"), pos + 3
    if first == 0xFD:
        return int.from_bytes(data[pos + 1 : pos + 4], "little"), pos + 4
    if first == 0xFE:
        return int.from_bytes(data[pos + 1 : pos + 9], "little"), pos + 9
    raise PacketError("bad length-encoded integer")


_STRING_TYPES = frozenset(
    (T_VARCHAR, T_VAR_STRING, T_STRING, T_ENUM, T_SET, T_JSON, T_BIT, T_DECIMAL, T_NEWDECIMAL)
)
_BLOB_TYPES = frozenset((T_TINY_BLOB, T_MEDIUM_BLOB, T_LONG_BLOB, T_BLOB))
_FIXED = {
    T_TINY: (struct.Struct("<b"), struct.Struct("<B")),
    T_SHORT: (struct.Struct("<h"), struct.Struct("<H")),
    T_YEAR: (struct.Struct("<h"), struct.Struct("<H")),
    T_LONG: (struct.Struct("<i"), struct.Struct("<I")),
    T_INT24: (struct.Struct("<i"), struct.Struct("<I")),
    T_LONGLONG: (struct.Struct("<q"), struct.Struct("<Q")),
    T_FLOAT: (struct.Struct("<f"), struct.Struct("<f")),
    T_DOUBLE: (struct.Struct("<d"), struct.Struct("<d")),
}


def _decode_text(raw: bytes, codec: str) -> str | bytes:
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        return raw


def decode_params(
    data: bytes,
    pos: int,
    count: int,
    prev_types: list[tuple[int, bool]] | None,
    long_data: dict[int, bytearray] | None,
    codec: str = "utf-8",
) -> tuple[list[Any], list[tuple[int, bool]]]:
    """Decode ``count`` parameter values of a COM_STMT_EXECUTE payload starting at ``pos``.

    Returns the values and the parameter types (which later executions may reuse).
    """
    try:
        nb = (count + 7) // 8
        null_bitmap = data[pos : pos + nb]
        if len(null_bitmap) != nb:
            raise PacketError("truncated NULL bitmap")
        pos += nb
        bound = data[pos]
        pos += 1
        if bound:
            types = []
            for _ in range(count):
                types.append((data[pos], bool(data[pos + 1] & 0x80)))
                pos += 2
        elif prev_types is not None and len(prev_types) == count:
            types = prev_types
        else:
            raise PacketError("parameter types were never sent")
        values: list[Any] = []
        for i, (ptype, unsigned) in enumerate(types):
            if long_data is not None and i in long_data:  # sent long data wins, as in MySQL
                raw = bytes(long_data[i])
                values.append(raw if ptype in _BLOB_TYPES else _decode_text(raw, codec))
                continue
            if null_bitmap[i >> 3] & (1 << (i & 7)):
                values.append(None)
                continue
            if ptype in _STRING_TYPES or ptype in _BLOB_TYPES:
                n, pos = _read_lenenc(data, pos)
                raw = data[pos : pos + n]
                if len(raw) != n:
                    raise PacketError("truncated string parameter")
                pos += n
                if ptype == T_NEWDECIMAL or ptype == T_DECIMAL:
                    values.append(Decimal(raw.decode("ascii")))
                elif ptype in _BLOB_TYPES:
                    values.append(_decode_text(raw, codec))
                else:
                    values.append(raw.decode(codec))
                continue
            fixed = _FIXED.get(ptype)
            if fixed is not None:
                st = fixed[1] if unsigned else fixed[0]
                values.append(st.unpack_from(data, pos)[0])
                pos += st.size
                continue
            if ptype in (T_DATE, T_DATETIME, T_TIMESTAMP):
                n = data[pos]
                body = data[pos + 1 : pos + 1 + n]
                pos += 1 + n
                values.append(_decode_datetime(ptype, body))
                continue
            if ptype == T_TIME:
                n = data[pos]
                body = data[pos + 1 : pos + 1 + n]
                pos += 1 + n
                values.append(_decode_time(body))
                continue
            if ptype == T_NULL:
                values.append(None)
                continue
            raise PacketError(f"unsupported parameter type 0x{ptype:02x}")
        if pos > len(data):
            raise PacketError("truncated parameter values")
        return values, types
    except (IndexError, struct.error, UnicodeDecodeError, ArithmeticError, ValueError) as e:
        raise PacketError(f"malformed COM_STMT_EXECUTE: {e}") from None


class FixedParams:
    """Parameters that all have fixed-size types (integers, FLOAT, DOUBLE), decoded with one
    precompiled struct. Drivers send the same types at every execution of a statement, so a
    lookup by integer key costs one comparison of the type block and one ``unpack_from``."""

    __slots__ = ("type_block", "struct", "size", "no_nulls")

    def __init__(self, types: list[tuple[int, bool]]) -> None:
        fmt = "<"
        block = bytearray()
        for ptype, unsigned in types:
            fmt += _FIXED[ptype][1 if unsigned else 0].format[-1]
            block += bytes((ptype, 0x80 if unsigned else 0))
        self.type_block = bytes(block)
        self.struct = struct.Struct(fmt)
        self.size = self.struct.size
        self.no_nulls = bytes((len(types) + 7) // 8)

    @staticmethod
    def of(types: list[tuple[int, bool]] | None) -> FixedParams | None:
        if not types or any(t not in _FIXED for t, _u in types):
            return None
        return FixedParams(types)

    def decode(self, data: bytes, pos: int) -> tuple | None:
        """The values of a COM_STMT_EXECUTE payload whose NULL bitmap starts at ``pos``, or
        None when this payload does not fit (NULLs, other types, odd length)."""
        nb = len(self.no_nulls)
        if data[pos : pos + nb] != self.no_nulls:
            return None
        pos += nb
        if pos >= len(data):
            return None
        if data[pos] == 1:  # types sent again: the same ones?
            n = len(self.type_block)
            if data[pos + 1 : pos + 1 + n] != self.type_block:
                return None
            pos += 1 + n
        elif data[pos] == 0:
            pos += 1
        else:
            return None
        if len(data) != pos + self.size:
            return None
        return self.struct.unpack_from(data, pos)


def _decode_datetime(ptype: int, body: bytes) -> _dt.date | None:
    n = len(body)
    if n == 0:
        return None  # the zero date
    year, month, day = struct.unpack_from("<HBB", body)
    if n == 4:
        if ptype == T_DATE:
            return _dt.date(year, month, day)
        return _dt.datetime(year, month, day)
    hour, minute, second = struct.unpack_from("<BBB", body, 4)
    us = struct.unpack_from("<I", body, 7)[0] if n >= 11 else 0
    value = _dt.datetime(year, month, day, hour, minute, second, us)
    return value.date() if ptype == T_DATE else value


def _decode_time(body: bytes) -> _dt.timedelta:
    if not body:
        return _dt.timedelta(0)
    neg, days, h, m, s = struct.unpack_from("<BIBBB", body)
    us = struct.unpack_from("<I", body, 8)[0] if len(body) >= 12 else 0
    value = _dt.timedelta(days=days, hours=h, minutes=m, seconds=s, microseconds=us)
    return -value if neg else value


# ---------------------------------------------------------------------------------------------
# Reading packets


class PacketTooLarge(Exception):
    """A client announced a packet larger than the server accepts."""


class BoundedStream:
    """Packet framing over an asyncio stream for the handshake, bounded in size and robust to
    truncation (after login, :mod:`noria_py.server.connection` reads and writes the socket).

    It offers what mysql-mimic's handshake code expects of a stream (``read``, ``write``,
    ``drain``, ``reset_seq``) plus ``send`` for error packets.
    ``max_packet`` limits the size of one logical packet (split packets included). A peer that
    disappears mid-packet raises ``ConnectionClosed``; a packet with an unexpected sequence id
    raises ``MysqlError(MALFORMED_PACKET)``; an oversized one raises ``PacketTooLarge``.
    """

    __slots__ = ("reader", "writer", "max_packet", "seq_value")

    def __init__(self, reader: Any, writer: Any, max_packet: int) -> None:
        self.reader = reader
        self.writer = writer
        self.max_packet = max_packet
        self.seq_value = 0

    async def read(self) -> bytes:
        data = b""
        reader = self.reader
        while True:
            try:
                header = await reader.readexactly(4)
            except (asyncio.IncompleteReadError, ConnectionError):
                raise ConnectionClosed() from None
            length = header[0] | (header[1] << 8) | (header[2] << 16)
            seq = header[3]
            expected = self.seq_value
            self.seq_value = (expected + 1) & 0xFF
            if seq != expected:
                raise MysqlError(
                    f"Got packets out of order (expected {expected}, got {seq})",
                    ErrorCode.MALFORMED_PACKET,
                )
            if len(data) + length > self.max_packet:
                raise PacketTooLarge()
            if length:
                try:
                    chunk = await reader.readexactly(length)
                except (asyncio.IncompleteReadError, ConnectionError):
                    raise ConnectionClosed() from None
                data = chunk if not data else data + chunk
            if length < MAX_PAYLOAD:
                return data

    def send(self, payloads: list[bytes]) -> None:
        """Frame ``payloads`` after the current sequence id and write them in one call."""
        data, self.seq_value = frame(payloads, self.seq_value)
        self.writer.write(data)

    async def write(self, data: bytes, drain: bool = True) -> None:
        self.send([data])
        if drain:
            await self.writer.drain()

    async def drain(self) -> None:
        await self.writer.drain()

    def reset_seq(self) -> None:
        self.seq_value = 0

"""A minimal MySQL client over a raw socket, for sending packets real drivers never would."""

from __future__ import annotations

import socket
import struct

CLIENT_LOCAL_FILES = 0x80
CLIENT_PROTOCOL_41 = 0x200
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
CLIENT_DEPRECATE_EOF = 0x1000000


class RawClient:
    def __init__(self, host: str, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.seq = 0

    def close(self) -> None:
        self.sock.close()

    def recv_exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by server")
            buf += chunk
        return buf

    def read_packet(self) -> bytes:
        header = self.recv_exact(4)
        length = int.from_bytes(header[:3], "little")
        self.seq = (header[3] + 1) & 0xFF
        return self.recv_exact(length)

    def send_packet(self, payload: bytes, seq: int | None = None) -> None:
        seq = self.seq if seq is None else seq
        self.sock.sendall(len(payload).to_bytes(3, "little") + bytes([seq]) + payload)
        self.seq = (seq + 1) & 0xFF

    def handshake(self, user: str = "raw", extra_caps: int = 0) -> bytes:
        """Log in with an empty password (works when the server has no users configured)."""
        greeting = self.read_packet()
        assert greeting[0] == 10, greeting
        caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | extra_caps
        payload = struct.pack("<IIB23x", caps, 1 << 24, 45)
        payload += user.encode() + b"\x00" + b"\x00" + b"mysql_native_password\x00"
        self.send_packet(payload)
        return self.read_packet()

    def command(self, payload: bytes) -> bytes:
        self.seq = 0
        self.send_packet(payload)
        return self.read_packet()

    def closed_by_server(self) -> bool:
        """True when the server has closed the connection (reads EOF)."""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except ConnectionError:
            return True  # reset: closed with our unread bytes still in its buffer
        except TimeoutError:
            return False


def error_code(packet: bytes) -> int | None:
    if packet and packet[0] == 0xFF:
        return int.from_bytes(packet[1:3], "little")
    return None


def packet(payload: bytes, seq: int = 0) -> bytes:
    """One framed packet (payload under 16 MB)."""
    return len(payload).to_bytes(3, "little") + bytes([seq]) + payload


def split_packets(payload: bytes, seq: int = 0) -> bytes:
    """A payload framed the way clients send 16 MB and more: parts of 0xFFFFFF bytes, then a
    shorter (possibly empty) last part, with consecutive sequence ids."""
    out = bytearray()
    pos = 0
    while True:
        chunk = payload[pos : pos + 0xFFFFFF]
        out += len(chunk).to_bytes(3, "little") + bytes([seq & 0xFF]) + chunk
        seq += 1
        pos += 0xFFFFFF
        if len(chunk) < 0xFFFFFF:
            return bytes(out)


def is_eof(p: bytes) -> bool:
    return p[:1] == b"\xfe" and len(p) < 9


def read_result(c: RawClient) -> tuple[bytes, list[bytes], list[bytes]]:
    """Read one response to a COM_QUERY or COM_STMT_EXECUTE from a client that did not ask
    for CLIENT_DEPRECATE_EOF: (first packet, column definitions, rows + final EOF).
    An OK or ERR packet comes back alone."""
    first = c.read_packet()
    if first[0] in (0x00, 0xFF):
        return first, [], []
    ncols = first[0]
    cols = [c.read_packet() for _ in range(ncols)]
    assert is_eof(c.read_packet())
    rows = []
    while True:
        p = c.read_packet()
        rows.append(p)
        if is_eof(p):
            return first, cols, rows


def status_of_eof(p: bytes) -> int:
    return int.from_bytes(p[3:5], "little")


def read_logical(c: RawClient) -> bytes:
    """Read one logical packet, joining the parts of a split (16 MB or more) one."""
    data = b""
    while True:
        part = c.read_packet()
        data += part
        if len(part) < 0xFFFFFF:
            return data

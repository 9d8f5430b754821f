"""A minimal MySQL client over a raw socket, for sending packets real drivers never would."""

from __future__ import annotations

import socket
import struct

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

    def handshake(self, user: str = "raw") -> bytes:
        """Log in with an empty password (works when the server has no users configured)."""
        greeting = self.read_packet()
        assert greeting[0] == 10, greeting
        caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
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

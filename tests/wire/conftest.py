"""Fixtures for the MySQL-wire tests: a `noria-py serve` subprocess on a free loopback port."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest

READY_TIMEOUT = 60.0


@dataclass
class WireServer:
    proc: subprocess.Popen
    host: str
    port: int

    def alive(self) -> bool:
        return self.proc.poll() is None

    def pymysql(self, **kw):
        import pymysql

        kw.setdefault("user", "tester")
        kw.setdefault("password", "")
        kw.setdefault("database", "noria")
        kw.setdefault("autocommit", True)
        return pymysql.connect(host=self.host, port=self.port, **kw)

    def connector(self, **kw):
        import mysql.connector

        kw.setdefault("user", "tester")
        kw.setdefault("password", "")
        kw.setdefault("database", "noria")
        kw.setdefault("autocommit", True)
        return mysql.connector.connect(host=self.host, port=self.port, **kw)

    def url(self, user: str = "tester", password: str = "") -> str:
        auth = f"{user}:{password}" if password else user
        return f"mysql+pymysql://{auth}@{self.host}:{self.port}/noria"


def start_server(*extra: str) -> WireServer:
    cmd = [sys.executable, "-m", "noria_py.server.mysql", "--host", "127.0.0.1", "--port", "0"]
    cmd += list(extra)
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=None,  # the server's log goes to the test output
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + READY_TIMEOUT
    line = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        if sel.select(timeout=0.2):
            line = proc.stdout.readline()
            if "serving MySQL protocol on" in line:
                break
    else:
        proc.kill()
        raise RuntimeError("server did not report readiness")
    sel.close()
    addr = line.split(" on ", 1)[1].split()[0]
    host, port = addr.rsplit(":", 1)
    return WireServer(proc, host, int(port))


def stop_server(server: WireServer) -> int:
    """SIGTERM, then wait; returns the exit code (0 for a clean shutdown)."""
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
            return -9
    return server.proc.returncode


@pytest.fixture(scope="module")
def server():
    srv = start_server("--max-packet", "4MB")
    yield srv
    code = stop_server(srv)
    assert code == 0, f"server did not shut down cleanly (exit code {code})"


@pytest.fixture(scope="module")
def auth_server():
    srv = start_server("--user", "alice", "--password", "s3cret'\\pw", "--user", "bob")
    yield srv
    assert stop_server(srv) == 0

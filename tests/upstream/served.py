"""A `noria-py serve --upstream` subprocess for the tests."""

from __future__ import annotations


class Served:
    """A ``noria-py serve --upstream`` subprocess on a free loopback port."""

    def __init__(self, *args: str):
        import os
        import selectors
        import subprocess
        import sys
        import tempfile
        import time

        self.log = tempfile.TemporaryFile(mode="w+")
        cmd = [sys.executable, "-m", "noria_py.server.mysql", "--host", "127.0.0.1", "--port", "0"]
        self.proc = subprocess.Popen(
            cmd + list(args),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 60
        line = ""
        while "serving MySQL protocol on" not in line:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill() if self.proc.poll() is None else None
                self.proc.wait()
                self.log.seek(0)
                text = self.log.read()
                self.stop()
                raise RuntimeError(f"server did not start: {text}")
            if sel.select(timeout=0.2):
                line = self.proc.stdout.readline()
        sel.close()
        self.port = int(line.split(" on ", 1)[1].split()[0].rsplit(":", 1)[1])

    def connect(self, **kw):
        import pymysql

        kw.setdefault("autocommit", True)
        return pymysql.connect(host="127.0.0.1", port=self.port, user="tester", **kw)

    def stop(self) -> int:
        import subprocess

        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

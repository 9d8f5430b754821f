"""The MariaDB client's output reader (``mysql_client._Drain``): every byte in order, and reads
of at least ``LEAST`` bytes while the output has them (Arrow makes a record batch of each read,
so a trickle of small reads would make thousands of tiny batches)."""

from __future__ import annotations

import os
import threading
import time

from noria_py.mysql_client import _Drain


def _trickle(fd: int, pieces: list[bytes]) -> threading.Thread:
    def run():
        with os.fdopen(fd, "wb", buffering=0) as w:
            for p in pieces:
                w.write(p)
                time.sleep(0.001)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_reads_wait_for_a_full_block_and_keep_every_byte(monkeypatch):
    monkeypatch.setattr(_Drain, "LEAST", 8192)
    pieces = [bytes([i % 251]) * 1000 for i in range(50)]  # 50 writes of 1000 bytes
    r, w = os.pipe()
    writer = _trickle(w, pieces)
    with os.fdopen(r, "rb", buffering=0) as raw:
        drain = _Drain(raw)
        got = []
        while True:
            data = drain.read(1 << 22)
            if not data:
                break
            got.append(data)
        drain.close()
    writer.join()
    assert b"".join(got) == b"".join(pieces)
    # every read but the last had at least LEAST bytes (the last: what was left)
    assert all(len(g) >= 8192 for g in got[:-1]), [len(g) for g in got]
    assert len(got) <= 50_000 // 8192 + 1


def test_a_read_never_returns_more_than_asked(monkeypatch):
    monkeypatch.setattr(_Drain, "LEAST", 1 << 20)
    r, w = os.pipe()
    writer = _trickle(w, [b"x" * 5000, b"y" * 5000])
    with os.fdopen(r, "rb", buffering=0) as raw:
        drain = _Drain(raw)
        got = []
        while data := drain.read(3000):
            assert len(data) <= 3000
            got.append(data)
        drain.close()
    writer.join()
    assert b"".join(got) == b"x" * 5000 + b"y" * 5000
    assert [len(g) for g in got] == [3000, 3000, 3000, 1000]

"""A checked load too large to hold its checked batches is written while it is checked
(``noria_py.loader._Stream``; ``STREAM_BYTES`` is set small here): base storage takes each batch
as it is checked, in one write that a problem undoes. The loader's answer must not change: hypothesis draws
sources with bad values, malformed CSV records, keys the source repeats and keys the table
already holds, with and without ``skip_bad_rows`` and a view over the table, and the streamed
load is compared with the same load checked whole before anything is written (the error and
its text, the rows stored, the count returned, the view's answers against SQLite reading the
file)."""

from __future__ import annotations

import csv
import io
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E
from noria_py import loader
from noria_py.engine import LOG_ROWS_LIMIT

BATCH = 500
ROWS = LOG_ROWS_LIMIT + 3000  # written while checked from the 11th batch on
DDL = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), n INT)"
VIEW = "CREATE VIEW by_n AS SELECT n, COUNT(*) AS c FROM t GROUP BY n"


def source_text(rows, malformed=()) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "name", "n"])
    for i, r in enumerate(rows):
        if i in malformed:
            out.write(f"{r[0]},only two\n")  # a record of two fields, not three
        else:
            w.writerow(r)
    return out.getvalue()


def run_load(path, db, source, *, streamed, skip, view, existing):
    """Load ``source`` into a fresh database at ``db``: the outcome (error type and text, or
    the count and the bad rows counted), the rows stored and, with ``view``, the view's
    answers beside SQLite's over the file."""
    path.write_text(source, encoding="utf-8")
    conn = noria_py.connect(str(db))
    conn.execute(DDL)
    if existing:
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", existing)
    if view:
        conn.execute(VIEW)
        conn.execute("SELECT c FROM by_n WHERE n = ?", (1,)).fetchall()
    real = loader._streams
    stream_bytes = loader.STREAM_BYTES
    streams = []

    def spy(*a):
        ok = real(*a)
        streams.append(ok)
        return ok if streamed else False

    loader._streams = spy
    loader.STREAM_BYTES = 1  # written while checked once the load is large enough
    try:
        n = conn.backfill("t", str(path), progress=False, batch_rows=BATCH, skip_bad_rows=skip)
        outcome = ("loaded", int(n), getattr(n, "skipped", 0))
    except E.Error as e:
        outcome = (type(e).__name__, str(e))
    finally:
        loader._streams = real
        loader.STREAM_BYTES = stream_bytes
    assert streams == [True]  # (streamed or not, the load could stream)
    stored = conn.execute("SELECT id, name, n FROM t ORDER BY id").fetchall()
    answers = None
    if view:
        answers = [
            conn.execute("SELECT c FROM by_n WHERE n = ?", (k,)).fetchall() for k in range(5)
        ]
        plain = sqlite3.connect(str(db))
        want = [
            plain.execute("SELECT COUNT(*) FROM t WHERE n = ?", (k,)).fetchall() for k in range(5)
        ]
        plain.close()
        assert answers == [[] if w == [(0,)] else w for w in want]
    conn.close()
    return outcome, [tuple(r) for r in stored], answers


positions = st.lists(st.integers(0, ROWS - 1), max_size=3, unique=True)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    bad=positions,
    malformed=positions,
    repeated=st.lists(st.tuples(st.integers(0, ROWS - 1), st.integers(0, ROWS - 1)), max_size=2),
    held=st.lists(st.integers(1, ROWS), max_size=2, unique=True),
    skip=st.booleans(),
    view=st.booleans(),
)
def test_a_streamed_load_answers_as_a_load_checked_first(
    tmp_path, bad, malformed, repeated, held, skip, view
):
    rows = [[i + 1, f"name {i + 1}", i % 5] for i in range(ROWS)]
    for i in bad:
        rows[i][2] = "oops"
    for i, j in repeated:
        if i != j:
            rows[i][0] = rows[j][0]
    existing = [(k, "held", 4) for k in held]
    text = source_text(rows, set(malformed))
    got = {}
    for streamed in (True, False):
        d = Path(tempfile.mkdtemp(dir=tmp_path))  # (a directory per example)
        got[streamed] = run_load(
            d / "src.csv", d / "db.sqlite", text, streamed=streamed, skip=skip, view=view,
            existing=existing,
        )  # fmt: skip
    assert got[True] == got[False]


def test_the_write_starts_while_the_check_runs(tmp_path, monkeypatch):
    """Base storage takes rows before the last batch is checked: each batch is checked and
    then written, in one write."""
    events = []
    real_convert = loader._convert
    real_rows = loader._Converted.rows

    def convert(*a, **k):
        events.append("check")
        return real_convert(*a, **k)

    def rows(self, keep=None):
        events.append("write")
        return real_rows(self, keep)

    monkeypatch.setattr(loader, "_convert", convert)
    monkeypatch.setattr(loader._Converted, "rows", rows)
    monkeypatch.setattr(loader, "STREAM_BYTES", 1)
    path = tmp_path / "src.csv"
    path.write_text(source_text([[i, f"x{i}", i % 3] for i in range(1, ROWS + 1)]))
    conn = noria_py.connect(str(tmp_path / "db.sqlite"))
    conn.execute(DDL)
    assert conn.backfill("t", str(path), progress=False, batch_rows=BATCH) == ROWS
    assert conn.execute("SELECT COUNT(*), SUM(n) FROM t").fetchall() == [
        (ROWS, sum(i % 3 for i in range(1, ROWS + 1)))
    ]
    conn.close()
    first_write = events.index("write")
    assert "check" in events[first_write:]  # checked after the write began
    assert events.count("check") == ROWS // BATCH + (ROWS % BATCH > 0)


def test_a_source_that_fails_while_written_stores_nothing(tmp_path, monkeypatch):
    """A read that fails half-way (after rows went to base storage) undoes the write; the
    read's own error is raised and the engine goes on."""
    real_convert = loader._convert
    calls = []

    def convert(*a, **k):
        calls.append(1)
        if len(calls) == 14:
            raise E.OperationalError("cannot read the source: connection lost")
        return real_convert(*a, **k)

    monkeypatch.setattr(loader, "_convert", convert)
    monkeypatch.setattr(loader, "STREAM_BYTES", 1)
    path = tmp_path / "src.csv"
    path.write_text(source_text([[i, f"x{i}", 1] for i in range(1, ROWS + 1)]))
    conn = noria_py.connect(str(tmp_path / "db.sqlite"))
    conn.execute(DDL)
    conn.execute("INSERT INTO t VALUES (-1, 'before', 2)")
    with pytest.raises(E.OperationalError, match="connection lost"):
        conn.backfill("t", str(path), progress=False, batch_rows=BATCH)
    assert conn.execute("SELECT * FROM t").fetchall() == [(-1, "before", 2)]
    # and the engine goes on: the same file loads once it reads
    monkeypatch.setattr(loader, "_convert", real_convert)
    assert conn.backfill("t", str(path), progress=False, batch_rows=BATCH) == ROWS
    assert conn.execute("SELECT COUNT(*) FROM t").fetchall() == [(ROWS + 1,)]
    conn.close()


def test_a_load_in_a_transaction_is_not_streamed(tmp_path):
    """Inside a transaction the load's rows are the transaction's deltas: no stream, and a
    rollback takes them away."""
    path = tmp_path / "src.csv"
    path.write_text(source_text([[i, f"x{i}", 1] for i in range(1, ROWS + 1)]))
    conn = noria_py.connect(str(tmp_path / "db.sqlite"))
    conn.execute(DDL)
    conn.execute(VIEW)
    conn.execute("BEGIN")
    assert not conn._engine.loads_in_one_write("t")
    assert conn.backfill("t", str(path), progress=False, batch_rows=BATCH) == ROWS
    assert conn.execute("SELECT c FROM by_n WHERE n = 1").fetchall() == [(ROWS,)]
    conn.rollback()
    assert conn.execute("SELECT c FROM by_n WHERE n = 1").fetchall() == []
    assert conn.execute("SELECT COUNT(*) FROM t").fetchall() == [(0,)]
    conn.close()

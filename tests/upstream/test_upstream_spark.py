"""Snapshotting a large upstream table with Spark over JDBC while the upstream takes writes.

Spark reads the table in parallel ranges of its primary key on connections of its own, so not
as of the consistent snapshot; the binlog replayed from the snapshot's position by primary key
makes the mirror exact, and ``connect`` returns only then.
"""

from __future__ import annotations

import threading

import pytest

import noria_py

pytestmark = [pytest.mark.spark, pytest.mark.wire]


def test_spark_snapshot_under_concurrent_writes_is_exact(upstream):
    upstream.run(
        "CREATE TABLE big (id INT PRIMARY KEY, grp INT NOT NULL, v VARCHAR(20), KEY (grp))",
        "CREATE TABLE small (id INT PRIMARY KEY, name VARCHAR(10))",
        "INSERT INTO small VALUES (1, 'one')",
    )
    with upstream.conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO big VALUES (%s, %s, %s)", [(i, i % 10, f"v{i}") for i in range(3000)]
        )
        cur.execute("ANALYZE TABLE big, small")
    stop = threading.Event()
    writes = [0]

    def writer():
        c = upstream.connect()
        with c.cursor() as cur:
            i = 0
            while not stop.is_set() and i < 400:
                k = (i * 37) % 3200
                cur.execute("BEGIN")
                cur.execute("DELETE FROM big WHERE id = %s", (k,))
                cur.execute(
                    "INSERT INTO big (id, grp, v) VALUES (%s, %s, %s)", (k, i % 10, f"w{i}")
                )
                cur.execute("UPDATE big SET v = CONCAT(v, '+') WHERE id = %s", ((k * 7) % 3000,))
                cur.execute("COMMIT")
                i += 1
                writes[0] = i
        c.close()

    from noria_py.spark.session import get_session

    get_session("local[2]")  # started before the writes, so they overlap Spark's read
    t = threading.Thread(target=writer)
    t.start()
    try:
        conn = noria_py.connect(
            upstream=upstream.url, upstream_spark_rows=1000, spark_master="local[2]"
        )
    finally:
        stop.set()
        t.join()
    try:
        report = conn.upstream.snapshot_report
        assert report.spark == ["big"] and report.exact_at is not None
        assert writes[0] > 0
        assert conn.upstream.sync(60)
        q = "SELECT id, v FROM big WHERE grp = ?"
        for g in range(10):
            got = sorted(conn.execute(q, (g,)).fetchall())
            assert got == sorted(upstream.rows(q.replace("?", "%s"), (g,))), g
        assert conn.execute("SELECT name FROM small WHERE id = ?", (1,)).fetchall() == [("one",)]

        # DDL upstream under writes: the table is copied again, by Spark again (it is large),
        # and read upstream until replication has made that copy exact
        stop.clear()
        writes[0] = 0
        t = threading.Thread(target=writer)
        t.start()
        try:
            upstream.run("ALTER TABLE big ADD COLUMN extra INT NOT NULL DEFAULT 7")
            while writes[0] < 50 and t.is_alive():
                stop.wait(0.05)
        finally:
            stop.set()
            t.join()
        assert conn.upstream.sync(60)
        copy = conn.upstream.replicator.copies[-1]
        assert copy.spark == ["big"] and copy.exact_at is not None
        assert conn.upstream.replicator.copying == frozenset()
        q = "SELECT id, v, extra FROM big WHERE grp = ?"
        for g in range(10):
            got = sorted(conn.execute(q, (g,)).fetchall())
            assert got == sorted(upstream.rows(q.replace("?", "%s"), (g,))), g
    finally:
        conn.close()

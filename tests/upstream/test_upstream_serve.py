"""``noria-py serve --upstream``: clients of the MySQL-wire server in front of a MariaDB."""

from __future__ import annotations

import time

import pytest
from served import Served

pytestmark = pytest.mark.wire


def _eventually(fn, want, timeout: float = 30.0):
    """``fn()`` once it returns ``want`` (replication is asynchronous), else its last value."""
    deadline = time.monotonic() + timeout
    got = fn()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.05)
        got = fn()
    return got


def _rows(conn, sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return sorted(cur.fetchall())


def test_two_servers_on_one_upstream(upstream):
    upstream.run(
        "CREATE TABLE items (id INT PRIMARY KEY, owner VARCHAR(10) NOT NULL, qty INT)",
        "INSERT INTO items VALUES (1, 'ann', 1)",
    )
    a = Served("--upstream", upstream.url)
    b = Served("--upstream", upstream.url, "--read-your-writes", "30")
    try:
        ca, cb = a.connect(), b.connect()
        q = "SELECT id, qty FROM items WHERE owner = %s"
        assert _rows(ca, q, ("ann",)) == [(1, 1)] == _rows(cb, q, ("ann",))
        with ca.cursor() as cur:
            cur.execute("INSERT INTO items VALUES (2, 'ann', 5)")
        # b reads its own write at once (read-your-writes); a sees b's once replicated
        with cb.cursor() as cur:
            cur.execute("UPDATE items SET qty = 7 WHERE id = 1")
        assert _rows(cb, q, ("ann",)) == [(1, 7), (2, 5)]
        assert _eventually(lambda: _rows(ca, q, ("ann",)), [(1, 7), (2, 5)]) == [(1, 7), (2, 5)]
        # a write made directly on the upstream reaches both
        upstream.run("DELETE FROM items WHERE id = 2")
        for c in (ca, cb):
            assert _eventually(lambda c=c: _rows(c, q, ("ann",)), [(1, 7)]) == [(1, 7)]
        # a transaction through the server runs upstream; its reads see its own writes
        with ca.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("INSERT INTO items VALUES (3, 'ann', 3)")
            cur.execute("SELECT id FROM items WHERE owner = 'ann'")
            assert sorted(cur.fetchall()) == [(1,), (3,)]
            cur.execute("ROLLBACK")
        assert upstream.rows("SELECT id FROM items ORDER BY id") == [(1,)]
        # prepared statements (server-side) and SHOW UPSTREAM STATUS
        with ca.cursor() as cur:
            cur.execute("SHOW UPSTREAM STATUS")
            names = [d[0] for d in cur.description]
            status = dict(zip(names, cur.fetchone()))
        assert status["running"] == "True"
        ca.close()
        cb.close()
        # a client that names the upstream's database at login; then USE of another one
        upstream.run(
            "CREATE DATABASE IF NOT EXISTS other",
            "CREATE TABLE IF NOT EXISTS other.items (id INT PRIMARY KEY, owner VARCHAR(10), qty INT)",
            "REPLACE INTO other.items VALUES (5, 'ann', 50)",
        )
        cd = a.connect(database=upstream.database)
        assert _rows(cd, q, ("ann",)) == [(1, 7)]
        assert _rows(cd, "SELECT DATABASE()") == [(upstream.database,)]
        with cd.cursor() as cur:
            cur.execute("USE other")
        assert _rows(cd, q, ("ann",)) == [(5, 50)]  # the other database's table, upstream
        cd.select_db(upstream.database)
        assert _rows(cd, q, ("ann",)) == [(1, 7)]
        cd.close()
    finally:
        assert a.stop() == 0
        assert b.stop() == 0


def test_serve_refuses_a_statement_binlog(upstream):
    upstream.run("SET GLOBAL binlog_format = 'MIXED'")
    try:
        with pytest.raises(RuntimeError, match="binlog_format is MIXED; replication needs ROW"):
            Served("--upstream", upstream.url)
    finally:
        upstream.run("SET GLOBAL binlog_format = 'ROW'")


def test_load_data_local_goes_to_the_upstream(upstream, tmp_path):
    """LOAD DATA LOCAL through the server (the client sends its file) and embedded (this
    process reads it) is loaded by the upstream, with its answer (rows, warnings); replication
    brings the rows to the cached views. The upstream session answers no other file request."""
    import noria_py

    upstream.run("CREATE TABLE items (id INT PRIMARY KEY, owner VARCHAR(10) NOT NULL, qty INT)")
    data = tmp_path / "items.csv"
    data.write_text("1,ann,1\n2,bob,2\n3,ann,x\n")
    a = Served("--upstream", upstream.url)
    try:
        c = a.connect(local_infile=True)
        q = "SELECT id, qty FROM items WHERE owner = %s"
        assert _rows(c, q, ("ann",)) == []
        with c.cursor() as cur:
            n = cur.execute(
                f"LOAD DATA LOCAL INFILE '{data}' INTO TABLE items FIELDS TERMINATED BY ','"
            )
            assert n == 3
            cur.execute("SHOW WARNINGS")
            warnings = cur.fetchall()
        assert [w[1] for w in warnings] == [1366]  # 'x' into an INT, as MariaDB says it
        assert _eventually(lambda: _rows(c, q, ("ann",)), [(1, 1), (3, 0)]) == [(1, 1), (3, 0)]
        c.close()
    finally:
        assert a.stop() == 0
    data.write_text("4,ann,4\n")
    conn = noria_py.connect(upstream=upstream.url)
    try:
        cur = conn.execute(
            f"LOAD DATA LOCAL INFILE '{data}' INTO TABLE items FIELDS TERMINATED BY ','"
        )
        assert cur.rowcount == 1
        assert conn.upstream.sync(30)
        got = conn.execute("SELECT id, qty FROM items WHERE owner = ?", ("ann",)).fetchall()
        assert sorted(got) == [(1, 1), (3, 0), (4, 4)]
        assert conn._router.connection()._local_infile is False
        with pytest.raises(noria_py.OperationalError) as info:
            conn.execute("LOAD DATA LOCAL INFILE '/no/such/file' INTO TABLE items")
        assert info.value.errno == 2
    finally:
        conn.close()


def test_workers_in_front_of_one_upstream(upstream, tmp_path):
    """``serve --workers 2 --upstream``: two instances behind one port, each replicating on
    its own; every connection, whichever worker took it, reads writes made upstream."""
    upstream.run(
        "CREATE TABLE items (id INT PRIMARY KEY, owner VARCHAR(10) NOT NULL, qty INT)",
        "INSERT INTO items VALUES (1, 'ann', 1)",
    )
    dumps = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
    before = upstream.rows(dumps)[0][0]
    a = Served("--upstream", upstream.url, "--workers", "2", "--upstream-server-id", "700")
    try:
        conns = [a.connect() for _ in range(6)]
        q = "SELECT id, qty FROM items WHERE owner = %s"
        for c in conns:
            assert _rows(c, q, ("ann",)) == [(1, 1)]
        with conns[0].cursor() as cur:
            cur.execute("INSERT INTO items VALUES (2, 'ann', 2)")
        for c in conns:
            assert _eventually(lambda c=c: _rows(c, q, ("ann",)), [(1, 1), (2, 2)]) == [
                (1, 1),
                (2, 2),
            ]
        # two replication streams on the upstream's binlog, one per worker
        assert upstream.rows(dumps)[0][0] >= before + 2
        for c in conns:
            c.close()
    finally:
        assert a.stop() == 0
    # a shared file would hold two mirrors' positions: refused
    with pytest.raises(RuntimeError, match="give no --data"):
        Served("--upstream", upstream.url, "--workers", "2", "--data", str(tmp_path / "m.db"))

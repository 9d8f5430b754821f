"""Prometheus metrics (noria_py/monitor): scraped over HTTP and parsed with prometheus_client's
own parser, the values equal what the engine reports through SHOW CACHES and its counters."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

import noria_py
from noria_py.engine import LATENCY_BOUNDS_NS
from noria_py.monitor.state import bucket_quantile
from noria_py.server.mysql import parse_http


def scrape(url: str) -> dict[str, dict[tuple, float]]:
    """``/metrics`` as {sample name: {sorted label items: value}}."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain")
        text = resp.read().decode()
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def one(metrics: dict, name: str, **labels) -> float:
    return metrics[name][tuple(sorted(labels.items()))]


def caches(conn) -> dict[str, tuple]:
    cur = conn.execute("SHOW CACHES")
    names = [d[0] for d in cur.description]
    return {r[0]: dict(zip(names, r)) for r in cur.fetchall()}


@pytest.fixture
def shop():
    conn = noria_py.connect(memory_limit="64KB")
    conn.execute("CREATE TABLE items (id INT PRIMARY KEY, cat INT NOT NULL, price INT NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?, ?)", [(i, i % 50, i) for i in range(2000)])
    yield conn
    conn.close()


def test_scrape_matches_the_engine(shop):
    by_id = "SELECT price FROM items WHERE id = ?"
    by_cat = "SELECT id, price FROM items WHERE cat = ?"
    for i in range(600):
        shop.execute(by_id, (i % 400,)).fetchall()
    for c in range(50):
        shop.execute(by_cat, (c,)).fetchall()
    shop.execute("SELECT id FROM items i WHERE price > (SELECT AVG(price) FROM items)").fetchall()
    shop.execute("INSERT INTO items VALUES (5000, 1, 1)")
    shop.execute("UPDATE items SET price = price + 1 WHERE id = 3")
    with noria_py.start_http_server(shop) as monitor:
        m = scrape(monitor.url)
        shown = caches(shop)
    q_id = next(n for n, r in shown.items() if r["query"] == by_id)
    q_cat = next(n for n, r in shown.items() if r["query"] == by_cat)
    proxied = [n for n, r in shown.items() if r["status"] == "proxied"]
    assert len(proxied) == 1
    assert one(m, "noria_queries", status="cached") == 2
    assert one(m, "noria_queries", status="proxied") == 1
    for q in (q_id, q_cat):
        assert one(m, "noria_cache_hits_total", query=q) == shown[q]["hits"]
        assert one(m, "noria_cache_misses_total", query=q) == shown[q]["misses"]
        assert one(m, "noria_cache_keys", query=q) == shown[q]["keys"]
        assert one(m, "noria_cache_state_bytes", query=q) == shown[q]["bytes"]
        # every miss of a plain lookup is a timed upquery
        assert one(m, "noria_upquery_duration_seconds_count", query=q) == shown[q]["misses"]
        assert one(m, "noria_upquery_duration_seconds_sum", query=q) > 0
    # 400 keys read, 200 of them twice (evicted keys miss again)
    assert shown[q_id]["misses"] >= 400 and shown[q_id]["hits"] + shown[q_id]["misses"] == 600
    misses = shown[q_id]["misses"] + shown[q_cat]["misses"]
    assert one(m, "noria_upqueries_total") == misses
    executed = 600 + 50
    assert one(m, "noria_queries_executed_total", status="cached") == executed
    assert one(m, "noria_queries_executed_total", status="proxied") == 1
    assert one(m, "noria_query_info", query=q_id, status="cached", sql=by_id) == 1
    # the histogram's buckets are cumulative and end with +Inf = count
    buckets = m["noria_upquery_duration_seconds_bucket"]
    les = sorted((float(dict(k)["le"]), v) for k, v in buckets.items() if dict(k)["query"] == q_id)
    assert [le for le, _ in les[:-1]] == [b / 1e9 for b in LATENCY_BOUNDS_NS]
    assert all(a[1] <= b[1] for a, b in zip(les, les[1:]))
    assert les[-1] == (float("inf"), shown[q_id]["misses"])
    # 64 KB cannot hold 400 + 2000 rows of state: the budget evicted keys
    assert one(m, "noria_memory_budget_bytes") == 64 * 1024
    assert 0 < one(m, "noria_memory_accounted_bytes") <= 64 * 1024
    assert one(m, "noria_evictions_total") > 0
    assert one(m, "noria_evictions_total") == shop._engine.graph.evictor.evictions
    assert one(m, "noria_state_bytes") > 0
    # a write statement each; the INSERT is one record, the UPDATE a retraction and an insertion
    assert one(m, "noria_writes_total") == shop._engine.write_count == 3
    assert one(m, "noria_deltas_total") == 3
    assert one(m, "noria_dataflow_nodes", materialization="partial") >= 2
    assert one(m, "process_resident_memory_bytes") > 10_000_000
    assert one(m, "process_cpu_seconds_total") > 0


def test_metrics_change_between_scrapes(shop):
    sql = "SELECT price FROM items WHERE id = ?"
    shop.execute(sql, (1,)).fetchall()
    with noria_py.start_http_server(shop) as monitor:
        before = scrape(monitor.url)
        for _ in range(10):
            shop.execute(sql, (1,)).fetchall()
        shop.execute("INSERT INTO items VALUES (9000, 2, 2)")
        after = scrape(monitor.url)
    q = next(n for n, r in caches(shop).items() if r["query"] == sql)
    assert one(after, "noria_cache_hits_total", query=q) == (
        one(before, "noria_cache_hits_total", query=q) + 10
    )
    assert one(after, "noria_writes_total") == one(before, "noria_writes_total") + 1
    assert one(after, "noria_deltas_total") == one(before, "noria_deltas_total") + 1


def test_engines_do_not_share_a_registry():
    a, b = noria_py.connect(), noria_py.connect()
    for conn, n in ((a, 3), (b, 5)):
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        for i in range(n):
            conn.execute("SELECT id FROM t WHERE id = ?", (i,)).fetchall()
    with noria_py.start_http_server(a) as ma, noria_py.start_http_server(b._engine) as mb:
        assert ma.port != mb.port
        assert one(scrape(ma.url), "noria_upqueries_total") == 3
        assert one(scrape(mb.url), "noria_upqueries_total") == 5
    a.close()
    b.close()


def test_a_sampled_read_is_timed_once():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    sql = "SELECT v FROM t WHERE id = ?"
    assert conn.execute(sql, (1,)).fetchall() == [(10,)]  # a miss: timed
    (entry,) = [e for e in conn._engine.queries.values() if e.status == "cached"]
    (prep,) = [p for p in conn._engine.select_statements() if p.entry is entry]
    for _ in range(5):
        assert conn.execute(sql, (1,)).fetchall() == [(10,)]
    assert (sum(entry.miss_buckets), sum(entry.hit_buckets)) == (1, 0)  # hits run untimed
    assert prep.sample_next()
    for _ in range(5):
        assert conn.execute(sql, (1,)).fetchall() == [(10,)]
    assert (entry.hits, sum(entry.hit_buckets)) == (10, 1)  # the next read only
    assert prep.sample_next()
    assert conn.execute(sql, (2,)).fetchall() == [(20,)]  # a sampled miss times itself
    assert (entry.misses, sum(entry.miss_buckets), sum(entry.hit_buckets)) == (2, 2, 1)
    assert "rows" not in prep.__dict__
    assert prep.sample_next(skip=3)
    for _ in range(3):
        assert conn.execute(sql, (1,)).fetchall() == [(10,)]
    assert (entry.hits, sum(entry.hit_buckets)) == (13, 1)  # skipped
    assert conn.execute(sql, (2,)).fetchall() == [(20,)]
    assert (entry.hits, sum(entry.hit_buckets)) == (14, 2)  # the fourth
    assert "rows" not in prep.__dict__
    conn.close()


def test_the_monitor_samples_hits():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, i) for i in range(100)])
    sql = "SELECT v FROM t WHERE id = ?"
    with noria_py.start_http_server(conn) as monitor:
        deadline = time.monotonic() + 60
        i = 0
        while time.monotonic() < deadline:
            assert conn.execute(sql, (i % 100,)).fetchall() == [(i % 100,)]
            i += 1
            (entry,) = [e for e in conn._engine.queries.values() if e.status == "cached"]
            if sum(entry.hit_buckets) >= 3:
                break
        assert sum(entry.hit_buckets) >= 3
        with urllib.request.urlopen(monitor.url + "/api/state", timeout=30) as resp:
            (cache,) = json.loads(resp.read())["caches"]
        assert 0 < cache["p50_ms"] <= cache["p99_ms"]
    conn.close()


def test_bucket_quantile():
    # bucket i counts values in (bounds[i-1], bounds[i]]; linear inside the bucket
    counts = [0] * (len(LATENCY_BOUNDS_NS) + 1)
    i = LATENCY_BOUNDS_NS.index(10_000)
    counts[i] = 90  # (5 us, 10 us]
    counts[i + 3] = 10  # (50 us, 100 us]
    assert bucket_quantile(counts, 0.5) == pytest.approx((5_000 + 5_000 * 50 / 90) / 1e9)
    assert bucket_quantile(counts, 0.9) == pytest.approx(10_000 / 1e9)
    assert bucket_quantile(counts, 0.99) == pytest.approx((50_000 + 50_000 * 0.9) / 1e9)
    assert bucket_quantile([0] * len(counts), 0.5) is None
    counts = [0] * (len(LATENCY_BOUNDS_NS) + 1)
    counts[-1] = 1  # beyond the last bound: that bound
    assert bucket_quantile(counts, 0.5) == LATENCY_BOUNDS_NS[-1] / 1e9


def test_state_endpoint_and_errors(shop):
    sql = "SELECT price FROM items WHERE cat = ?"
    shop.execute(sql, (3,)).fetchall()
    monitor = noria_py.start_http_server(shop, "127.0.0.1", 0)
    try:
        with urllib.request.urlopen(monitor.url + "/api/state", timeout=30) as resp:
            state = json.loads(resp.read())
        (cache,) = state["caches"]
        assert cache["sql"] == sql and cache["misses"] == 1 and cache["keys"] == 1
        graph = state["graph"]
        ids = {n["id"] for n in graph["nodes"]}
        plan = shop.execute("EXPLAIN " + sql).fetchall()
        assert {r[0] for r in plan} <= ids
        for node, op, _d, parents, mat, *_ in plan:
            (drawn,) = [n for n in graph["nodes"] if n["id"] == node]
            assert drawn["materialization"] == mat
            assert drawn["queries"] == ([cache["name"]] if op == "reader" else [])
            for p in filter(None, parents.split(",")):
                assert [int(p), node] in graph["edges"]
                assert drawn["layer"] > next(
                    n["layer"] for n in graph["nodes"] if n["id"] == int(p)
                )
        with urllib.request.urlopen(monitor.url + "/", timeout=30) as resp:
            page = resp.read().decode()
        assert (
            "<svg" in page
            and "/api/state" in page
            and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
        )  # self-contained: nothing fetched from elsewhere
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(monitor.url + "/nope", timeout=30)
        assert e.value.code == 404
        shop.close()
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(monitor.url + "/metrics", timeout=30)
        assert e.value.code == 503
    finally:
        monitor.close()


def test_scrapes_while_writing_and_reading():
    conn = noria_py.connect(memory_limit="256KB")
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, i % 20) for i in range(500)])
    stop = threading.Event()
    failures: list[BaseException] = []

    def work() -> None:
        i = 1000
        cur = conn.cursor()
        try:
            while not stop.is_set():
                cur.execute("INSERT INTO t VALUES (?, ?)", (i, i % 20))
                cur.execute("SELECT id FROM t WHERE g = ?", (i % 20,)).fetchall()
                cur.execute("SELECT g FROM t WHERE id = ?", (i % 700,)).fetchall()
                i += 1
        except BaseException as e:  # noqa: BLE001 - asserted below
            failures.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    try:
        with noria_py.start_http_server(conn) as monitor:
            last = -1.0
            for _ in range(15):
                m = scrape(monitor.url)
                writes = one(m, "noria_writes_total")
                assert writes >= last
                last = writes
    finally:
        stop.set()
        thread.join()
    assert not failures
    conn.close()


def test_parse_http():
    assert parse_http("127.0.0.1:9100") == ("127.0.0.1", 9100)
    assert parse_http("9100") == ("127.0.0.1", 9100)
    assert parse_http("[::1]:0") == ("::1", 0)
    for bad in ("host:port", "1.2.3.4:70000"):
        with pytest.raises(Exception, match="HOST:PORT|out of range"):
            parse_http(bad)


def start_serve(*extra: str) -> tuple[subprocess.Popen, str, int]:
    """``noria-py serve --http 127.0.0.1:0``: the process, the metrics URL, the MySQL port."""
    cmd = [sys.executable, "-m", "noria_py.server.mysql", "--port", "0"]
    cmd += ["--http", "127.0.0.1:0", *extra]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1")
    )
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    url = port = None
    deadline = time.monotonic() + 60
    while port is None and time.monotonic() < deadline and proc.poll() is None:
        if sel.select(timeout=0.2):
            line = proc.stdout.readline()
            if line.startswith("noria-py metrics on "):
                url = line.split(" on ", 1)[1].split("/metrics")[0]
            elif "serving MySQL protocol on" in line:
                port = int(line.split(" on ", 1)[1].split()[0].rsplit(":", 1)[1])
    sel.close()
    if url is None or port is None:
        proc.kill()
        raise RuntimeError("the server did not report its addresses")
    return proc, url, port


@pytest.mark.wire
def test_serve_http_counts_connections_and_errors():
    proc, url, port = start_serve("--user", "app", "--password", "pw")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="app", password="pw")
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO t VALUES (1)")
        for _ in range(3):
            with pytest.raises(pymysql.err.ProgrammingError):
                cur.execute("SELECT * FROM missing")
        with pytest.raises(pymysql.err.IntegrityError):
            cur.execute("INSERT INTO t VALUES (1)")
        cur.execute("SELECT id FROM t WHERE id = %s", (1,))
        assert cur.fetchall() == ((1,),)
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(host="127.0.0.1", port=port, user="app", password="wrong")
        # the server counts the refused login and closes that connection after the client
        # has its error: wait for both
        deadline = time.monotonic() + 60
        while True:
            m = scrape(url)
            settled = one(m, "noria_connections") == 1
            if settled and m["noria_errors_total"].get((("code", "1045"),)) == 1:
                break
            assert time.monotonic() < deadline, m
            time.sleep(0.05)
        assert one(m, "noria_connections") == 1
        assert one(m, "noria_connections_accepted_total") == 2
        assert one(m, "noria_errors_total", code="1146") == 3
        assert one(m, "noria_errors_total", code="1062") == 1
        assert one(m, "noria_errors_total", code="1045") == 1
        assert one(m, "noria_writes_total") == 1
        assert one(m, "noria_queries", status="cached") == 1
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_serve_http_refuses_workers():
    proc = subprocess.run(
        [sys.executable, "-m", "noria_py.server.mysql", "--workers", "2", "--http", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--http" in proc.stderr


def test_domains_on_threads():
    conn = noria_py.connect(domains="threads")
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, i % 7) for i in range(100)])
    for i in range(21):
        assert conn.execute("SELECT COUNT(*) FROM t WHERE g = ?", (i % 7,)).fetchall()
    conn.execute("INSERT INTO t VALUES (1000, 1)")
    with noria_py.start_http_server(conn) as monitor:
        m = scrape(monitor.url)
    assert one(m, "noria_upqueries_total") == 7
    assert one(m, "noria_upquery_requests_total") >= 7  # hop by hop, as messages
    assert (one(m, "noria_writes_total"), one(m, "noria_deltas_total")) == (2, 1)
    conn.close()


def test_sizes_of_large_states_are_reused(monkeypatch):
    from noria_py.monitor import state

    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    sql = "SELECT id FROM t WHERE id = ?"
    conn.execute(sql, (1,)).fetchall()
    engine = conn._engine
    monkeypatch.setattr(state, "SIZES_COST", 1e9)  # every count is "expensive"
    (q,) = state.snapshot(engine).queries
    assert q.keys == 1
    conn.execute(sql, (2,)).fetchall()
    (q,) = state.snapshot(engine).queries
    assert (q.keys, q.hits + q.misses) == (1, 2)  # the sizes counted before, fresh counters
    monkeypatch.setattr(state, "SIZES_COST", 0)
    (q,) = state.snapshot(engine).queries
    assert q.keys == 2
    conn.close()


def test_replication_lag_of_a_shared_file(tmp_path):
    path = str(tmp_path / "shared.db")
    writer = noria_py.connect(path)
    writer.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    # another process's engine, which looks for the writer's commits only every 10 minutes
    reader = noria_py.connect(path, poll_interval=600)
    assert reader.execute("SELECT id FROM t WHERE id = ?", (1,)).fetchall() == []
    with noria_py.start_http_server(reader) as monitor:
        assert one(scrape(monitor.url), "noria_replication_lag_entries") == 0
        for i in range(3):
            writer.execute("INSERT INTO t VALUES (?)", (i,))
        assert one(scrape(monitor.url), "noria_replication_lag_entries") == 3
        reader.execute("INSERT INTO t VALUES (100)")  # a write applies the others' first
        assert one(scrape(monitor.url), "noria_replication_lag_entries") == 0
        assert reader.execute("SELECT id FROM t WHERE id = ?", (1,)).fetchall() == [(1,)]
    with noria_py.start_http_server(noria_py.connect()) as monitor:
        assert "noria_replication_lag_entries" not in scrape(monitor.url)
    reader.close()
    writer.close()

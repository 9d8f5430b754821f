"""connect()/Engine options: one declared table (noria_py/options.py), checked before the engine
opens anything; the lock-free read rule in one place (Engine.lock_free_read)."""

from __future__ import annotations

import pathlib

import pytest

import noria_py
from noria_py import options as O
from noria_py.engine import Engine

# one value each option takes, other than its default where that is cheap to open
VALID = {
    "partial": False,
    "memory_limit": "64MB",
    "domains": "inline",
    "upqueries": "messages",
    "read_your_writes": True,
    "lookup_joins": False,
    "batch_window": 0.001,
    "inbox_limit": 100,
    "collation": None,
    "dataflow": False,
    "lift_literals": False,
    "caching": "explicit",
    "private_storage": True,
    "shared": True,
    "busy_timeout": 1.5,
    "poll_interval": 0.01,
    "bulk_replay_rows": None,
    "spark_master": "local[1]",
    "spark_config": {"spark.ui.enabled": "false"},
    "bulk_replay_dir": pathlib.Path("/tmp"),
    "upstream": None,  # a URL needs a MariaDB with a binlog: tests/upstream
    "upstream_server_id": 7,
    "upstream_spark_rows": 5000,
    "upstream_read_your_writes": 0.5,
}

BAD = {
    "partial": "yes",
    "memory_limit": "lots",
    "domains": "processes",
    "upqueries": "rpc",
    "read_your_writes": 2,
    "lookup_joins": "yes",
    "batch_window": -1,
    "inbox_limit": 0,
    "collation": 42,
    "dataflow": None,
    "lift_literals": "no",
    "caching": "manual",
    "private_storage": "true",
    "shared": [],
    "busy_timeout": "50",
    "poll_interval": 0,
    "bulk_replay_rows": 1.5,
    "spark_master": 7077,
    "spark_config": ["a=b"],
    "bulk_replay_dir": 3,
    "upstream": 5,
    "upstream_server_id": 0,
    "upstream_spark_rows": -1,
    "upstream_read_your_writes": -1,
}


def test_the_table_is_covered_here():
    assert set(VALID) == set(O.OPTIONS) == set(BAD)


@pytest.mark.parametrize(
    "given, named, suggested",
    [
        ("domain", "domain", "domains"),
        ("partail", "partial", "partial"),
        ("read_own_writes", "read_own_writes", "read_your_writes"),
        ("memorylimit", "memorylimit", "memory_limit"),
    ],
)
def test_unknown_option_names_it_and_the_closest(given, named, suggested):
    with pytest.raises(noria_py.ProgrammingError) as info:
        noria_py.connect(**{given: "x"})
    msg = str(info.value)
    assert f"'{named}'" in msg
    assert f"did you mean '{suggested}'" in msg


def test_unknown_option_without_a_close_one():
    with pytest.raises(noria_py.ProgrammingError, match="Unknown option 'zzz'") as info:
        noria_py.connect(zzz=1)
    assert "did you mean" not in str(info.value)


def test_unknown_option_raises_before_a_file_is_opened(tmp_path):
    db = tmp_path / "x.db"
    with pytest.raises(noria_py.ProgrammingError, match="sharde"):
        noria_py.connect(str(db), sharde=False)
    assert not db.exists()


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_value_raises_with_the_allowed_values(name):
    with pytest.raises(noria_py.ProgrammingError) as info:
        O.validate({name: BAD[name]})
    msg = str(info.value)
    assert name in msg and repr(BAD[name]) in msg
    assert O.OPTIONS[name].allowed in msg


@pytest.mark.parametrize(
    "kw",
    [{"domains": "thread"}, {"upqueries": "message"}, {"memory_limit": "1 GiB"}, {"partial": None}],
)
def test_bad_value_through_connect(kw):
    with pytest.raises(noria_py.ProgrammingError, match=next(iter(kw))):
        noria_py.connect(**kw)


@pytest.mark.parametrize("name", sorted(VALID))
def test_every_option_takes_a_valid_value(name):
    got = O.validate({name: VALID[name]})
    assert set(got) == set(O.OPTIONS)
    want = VALID[name]
    if isinstance(want, bool):
        assert got[name] is want
    else:
        assert got[name] == want


def test_every_option_opens_an_engine(tmp_path):
    kw = dict(VALID)
    kw["domains"], kw["upqueries"] = "threads", "messages"
    conn = noria_py.connect(str(tmp_path / "all.db"), **kw)
    try:
        eng = conn.engine
        assert (eng.partial, eng.dataflow, eng.read_your_writes) == (False, False, True)
        assert (eng.domains, eng.upqueries, eng.inbox_limit) == ("threads", "messages", 100)
        assert eng.shared and eng._poll == 0.01
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        conn.execute("INSERT INTO t VALUES (1, 2)")
        assert conn.execute("SELECT v FROM t WHERE id = ?", (1,)).fetchall() == [(2,)]
    finally:
        conn.close()


def test_other_accepted_values():
    assert O.validate({"partial": 0})["partial"] is False
    assert O.validate({"shared": 1})["shared"] is True
    assert O.validate({"memory_limit": 1024})["memory_limit"] == 1024
    assert O.validate({"memory_limit": "1KB"})["memory_limit"] == "1KB"
    assert O.validate({"batch_window": 0})["batch_window"] == 0.0
    assert O.validate({"bulk_replay_rows": False})["bulk_replay_rows"] is False
    assert O.validate({"bulk_replay_rows": 0})["bulk_replay_rows"] == 0
    assert O.validate({"upqueries": None})["upqueries"] is None
    assert O.validate({"bulk_replay_dir": "/tmp/x"})["bulk_replay_dir"] == "/tmp/x"
    for bad in (True, -1):
        with pytest.raises(noria_py.ProgrammingError, match="bulk_replay_rows"):
            O.validate({"bulk_replay_rows": bad})
    for bad in (float("nan"), float("inf")):
        with pytest.raises(noria_py.ProgrammingError, match="batch_window"):
            O.validate({"batch_window": bad})


def test_defaults_unchanged():
    from noria_py.spark.replay import DEFAULT_BULK_REPLAY_ROWS

    got = O.validate({})
    assert got == {name: opt.default for name, opt in O.OPTIONS.items()}
    assert got["bulk_replay_rows"] == DEFAULT_BULK_REPLAY_ROWS == 1_000_000
    conn = noria_py.connect()
    try:
        eng = conn.engine
        assert eng.domains == "inline" and eng.upqueries == "direct"
        assert eng.partial is True and eng.dataflow is True
        assert eng.read_your_writes is False
        assert eng.batch_window == 0.0002 and eng.inbox_limit == 10000
        assert eng.shared is False  # no file
        assert eng.graph.evictor is None
        assert eng.storage._tmpdir is None  # private_storage off: in memory
        assert eng.graph.bulk_replay.threshold == 1_000_000
    finally:
        conn.close()


def test_context_dependent_defaults(tmp_path):
    conn = noria_py.connect(domains="threads")
    try:
        assert conn.engine.upqueries == "messages"
        assert conn.engine._runtime.batch_window == 0.0
        assert conn.engine._runtime.inbox_limit == 10000
    finally:
        conn.close()
    conn = noria_py.connect(domains="threads", upqueries="direct")
    try:
        assert conn.engine.batch_window == 0.0002 and conn.engine._runtime is None
    finally:
        conn.close()
    conn = noria_py.connect(str(tmp_path / "d.db"))
    try:
        assert conn.engine.shared is True and conn.engine._poll == 0.005
    finally:
        conn.close()
    conn = noria_py.connect(str(tmp_path / "e.db"), shared=False)
    try:
        assert conn.engine.shared is False
    finally:
        conn.close()


def test_engine_validates_too():
    with pytest.raises(noria_py.ProgrammingError, match="did you mean 'private_storage'"):
        Engine(privat_storage=True)


def test_connect_docstring_lists_every_option():
    doc = noria_py.connect.__doc__
    for name in O.OPTIONS:
        assert f"``{name}``" in doc, name
    assert "noria_py.options" in doc
    assert all(name in O.describe() for name in O.OPTIONS)


# --- Engine.lock_free_read: the rule the cursor and the server share --------------------------


def test_lock_free_read_rule():
    conn = noria_py.connect()
    try:
        eng = conn.engine
        txn = eng._txn_default
        eng.fast = 5
        assert eng.lock_free_read(txn) and eng.fast == 4  # a yes counts the read
        txn.database = "other"
        assert not eng.lock_free_read(txn) and eng.fast == 4  # the cache is keyed by text
        txn.database = None
        eng._pending.append(("node", []))
        try:
            assert not eng.lock_free_read(txn)  # a queued write: the locked path applies it
            assert eng.lock_free_read(txn, queued_ok=True) and eng.fast == 3
        finally:
            eng._pending.clear()
        eng.fast = 0
        assert not eng.lock_free_read(txn, queued_ok=True) and eng.fast == 0
    finally:
        conn.close()


def test_cursor_reads_take_the_lock_free_path_until_a_writer():
    conn = noria_py.connect()
    try:
        eng = conn.engine
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        conn.execute("INSERT INTO t VALUES (1, 10)")
        cur = conn.cursor()
        q = "SELECT v FROM t WHERE id = ?"
        assert cur.execute(q, (1,)).fetchall() == [(10,)]  # installs and fills
        before = eng.fast
        assert cur.execute(q, (1,)).fetchall() == [(10,)]
        assert eng.fast == before - 1  # answered without the engine
        conn.execute("BEGIN")
        conn.execute("UPDATE t SET v = 11 WHERE id = 1")
        assert eng.fast == 0  # a transaction writing: its reads must see its writes
        assert cur.execute(q, (1,)).fetchall() == [(11,)]
        conn.execute("ROLLBACK")
        assert eng.fast > 0
        assert cur.execute(q, (1,)).fetchall() == [(10,)]
    finally:
        conn.close()

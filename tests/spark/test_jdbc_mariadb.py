"""Loading from a real MariaDB over JDBC: ``jdbc:mariadb:`` and ``jdbc:mysql:`` URLs, through the
Python API and the ``noria-py load`` command, every value compared with what MariaDB holds.

The server is a private ``mariadbd`` with its grant tables on (a wrong password must fail), a
user ``loader`` and a table of hostile values: quotes, backslashes, emoji, CJK, newlines, NULLs,
empty strings, DECIMAL, DATE, DATETIME (one in Central Europe's 2021 daylight-saving gap), TIME
beyond a day, BIGINT UNSIGNED, TINYINT(1) holding 5, and columns named by a reserved word, with a
space and with a backtick. The driver is the system's MariaDB Connector/J (libmariadb-java),
found without being named.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.errors import DataError, OperationalError
from noria_py.spark import backfill as bf
from noria_py.spark import jdbc

pytestmark = pytest.mark.spark

USER, PASSWORD = "loader", "s3cret'pw"
COLUMNS = (
    "id BIGINT UNSIGNED NOT NULL PRIMARY KEY,"
    " `select` VARCHAR(100),"
    " `the name` TEXT,"
    " `we``ird` INT,"
    " price DECIMAL(14,4),"
    " day DATE,"
    " at DATETIME,"
    " at6 DATETIME(6),"
    " dur TIME,"
    " flag TINYINT(1),"
    " big BIGINT"
)
HOSTILE = [
    "it's",
    'say "hi"',
    "back\\slash \\n not a newline",
    "emoji 😀🎉",
    "漢字かなカナ한글",
    "line1\nline2\r\nline3\ttab",
    "",
    " spaces ",
    "NULL",
    "\\",
    "'; DROP TABLE items; --",
]
ROWS = [
    (
        i + 1,
        text,
        text[::-1] if i % 3 else None,
        i * 7 if i % 4 else None,
        Decimal("-12345678.1234") if i % 2 else Decimal("0.0001"),
        datetime.date(2021, 3, 28) if i % 2 else datetime.date(1000, 1, 1),
        datetime.datetime(2021, 3, 28, 2, 30)
        if i % 2
        else datetime.datetime(9999, 12, 31, 23, 59, 59),
        datetime.datetime(2020, 1, 1, 0, 0, 0, 1) if i % 2 else None,
        datetime.timedelta(hours=-838, minutes=-59, seconds=-59)
        if i % 2
        else datetime.timedelta(hours=100, seconds=1),
        5 if i % 2 else -1,
        -(2**63) if i % 2 else 2**63 - 1,
    )
    for i, text in enumerate(HOSTILE)
]
ROWS.append((2**63 - 1, None, None, None, None, None, None, None, None, None, None))


@pytest.fixture(scope="module")
def mariadb():
    """(port, root pymysql connection) of a private MariaDB with grants on and table src.items."""
    import pymysql

    from noria_py.workloads.lobsters import backends

    if not backends.mariadb_available():
        pytest.fail("mariadbd not installed (apt-get install -y mariadb-server mariadb-client)")
    server = backends.MariaDBServer(buffer_pool="64M").start()
    try:
        root = pymysql.connect(
            host="127.0.0.1", port=server.port, user="root", autocommit=True, charset="utf8mb4"
        )
        with root.cursor() as cur:
            cur.execute("FLUSH PRIVILEGES")  # grant tables on: passwords are checked from now on
            cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (USER, PASSWORD))
            cur.execute("CREATE DATABASE src")
            cur.execute("GRANT SELECT ON src.* TO %s@'%%'", (USER,))
            cur.execute(f"CREATE TABLE src.items ({COLUMNS})")
            cur.executemany(
                "INSERT INTO src.items VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", ROWS
            )
            cur.execute("CREATE TABLE src.huge (id BIGINT UNSIGNED PRIMARY KEY)")
            cur.execute("INSERT INTO src.huge VALUES (1), (18446744073709551615)")
        yield server.port, root
        root.close()
    finally:
        server.stop()


def url(port: int, scheme: str) -> str:
    return f"jdbc:{scheme}://127.0.0.1:{port}/src"


def mariadb_rows(root) -> list[tuple]:
    with root.cursor() as cur:
        cur.execute("SELECT * FROM src.items ORDER BY id")
        return list(cur.fetchall())


def noria_rows(conn) -> list[tuple]:
    return conn.execute("SELECT * FROM items ORDER BY id").fetchall()


def items_db(path=None):
    conn = noria_py.connect(str(path) if path else None)
    conn.execute(f"CREATE TABLE items ({COLUMNS})")
    return conn


def test_the_table_holds_what_the_test_wrote(mariadb):
    _, root = mariadb
    assert mariadb_rows(root) == sorted(ROWS)


@pytest.fixture(params=["spark", "client"])
def via(request):
    """Who reads the MariaDB source: Spark over JDBC, or the mariadb client program
    (``noria_py.mysql_client``); both must store every value exactly."""
    if request.param == "spark":
        request.getfixturevalue("spark")
    return request.param


@pytest.mark.parametrize("scheme", ["mariadb", "mysql"])
def test_api_loads_every_value_exactly(via, mariadb, scheme):
    port, root = mariadb
    conn = items_db()
    n = conn.backfill(
        "items",
        url(port, scheme),
        options={"dbtable": "items", "user": USER, "password": PASSWORD},
        progress=False,
        via=via,
    )
    assert n == len(ROWS)
    assert n.via == via
    assert noria_rows(conn) == mariadb_rows(root)
    conn.close()


def test_a_query_with_quoted_names(via, mariadb):
    port, root = mariadb
    conn = items_db()
    query = "SELECT id, `select`, `the name`, `we``ird` FROM items WHERE `select` <> ''"
    conn.backfill(
        "items",
        url(port, "mariadb"),
        options={"query": query, "user": USER, "password": PASSWORD},
        progress=False,
        via=via,
    )
    with root.cursor() as cur:
        cur.execute(
            "SELECT id, `select`, `the name`, `we``ird` FROM src.items WHERE `select` <> ''"
            " ORDER BY id"
        )
        want = list(cur.fetchall())
    got = conn.execute("SELECT id, `select`, `the name`, `we``ird` FROM items ORDER BY id")
    assert got.fetchall() == want
    conn.close()


def test_cli_in_process_with_the_password_from_the_environment(
    via, mariadb, tmp_path, monkeypatch, capsys
):
    port, root = mariadb
    db = tmp_path / "app.db"
    items_db(db).close()
    monkeypatch.setenv(jdbc.PASSWORD_ENV, PASSWORD)
    argv = ["items", "--data", str(db), "--jdbc", url(port, "mysql"), "--dbtable", "items"]
    assert bf.main([*argv, "--user", USER, "--no-progress", "--via", via]) == 0
    out = capsys.readouterr().out
    assert f"loaded {len(ROWS)} rows" in out
    assert ("with Spark master" in out) == (via == "spark"), out
    conn = noria_py.connect(str(db))
    assert noria_rows(conn) == mariadb_rows(root)
    conn.close()


def test_create_takes_the_tables_own_types_and_primary_key(
    via, mariadb, tmp_path, capsys, monkeypatch
):
    """Created from the source's own definition, through Spark or (without starting Spark) by
    the client program."""
    port, root = mariadb
    if via == "client":

        def no_spark(*_a, **_k):
            raise AssertionError("Spark asked to type a table the client reads")

        monkeypatch.setattr(bf, "spark_create_table_sql", no_spark)
        monkeypatch.setattr(jdbc, "session_for", no_spark)
    db = tmp_path / "new.db"
    argv = ["items", "--data", str(db), "--jdbc", url(port, "mariadb"), "--dbtable", "src.items"]
    argv += ["--user", USER, "--password", PASSWORD, "--no-progress", "--create", "--via", via]
    assert bf.main(argv) == 0
    out = capsys.readouterr().out
    assert f"loaded {len(ROWS)} rows" in out
    assert ("with Spark master" in out) == (via == "spark"), out
    # TIME, DATETIME(6) and BIGINT UNSIGNED, which Spark's types lose, and the key
    for part in ("`id` bigint unsigned not null", "`dur` time", "`at6` datetime(6)"):
        assert part in out.lower(), out
    assert "PRIMARY KEY (`id`)" in out
    conn = noria_py.connect(str(db))
    assert noria_rows(conn) == mariadb_rows(root)
    conn.close()


TYPED = (
    "k2 INT NOT NULL, id BIGINT UNSIGNED NOT NULL, s VARCHAR(30), l CHAR(3) CHARACTER SET latin1,"
    " b VARBINARY(12), bl BLOB, d DOUBLE, f FLOAT, n DECIMAL(9,3) NOT NULL, e ENUM('a', 'b c', ''),"
    " st SET('x', 'y'), y YEAR, t MEDIUMTEXT, ts TIMESTAMP(3) NULL, dur TIME(2), day DATE,"
    " j JSON, u UUID, ip INET6, PRIMARY KEY (k2, id)"
)


def test_create_by_the_client_matches_create_through_spark(spark, mariadb, tmp_path):
    """The client program types a new table as Spark's read does: the source's own column
    types, NOT NULLs and (composite) key; ENUM, SET, UUID and INET6 as text by their longest
    value; a JSON column (the client names it a BLOB "format=json") read as text. The table
    then holds every value MariaDB does."""
    from noria_py import mysql_client

    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.typed")
        cur.execute(f"CREATE TABLE src.typed ({TYPED})")
        cur.execute(
            "INSERT INTO src.typed VALUES (1, 2, 'x\ty', 'é', X'00ff', X'01', 1.5, 0.25, -1.5,"
            " 'b c', 'x,y', 2001, %s, '2021-01-01 00:00:00.123', '-800:00:00.5', '2020-02-29',"
            " '{\"a\": [1, \"é\"]}', '123e4567-e89b-12d3-a456-426655440000', '::1'),"
            " (1, 3, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL,"
            " NULL, NULL, NULL, NULL)",
            ("é" * 300,),
        )
        cur.execute("SELECT * FROM src.typed ORDER BY k2, id")
        want = [tuple(r) for r in cur.fetchall()]
    opts = {"dbtable": "typed", "user": USER, "password": PASSWORD}
    client = mysql_client.plan(url(port, "mariadb"), opts)
    assert client is not None  # JSON, UUID and INET6 are text the client reads
    by_client = client.create_table_sql("typed")
    by_spark = bf.spark_create_table_sql("typed", url(port, "mariadb"), options=opts)
    assert by_client == by_spark
    assert "PRIMARY KEY (`k2`, `id`)" in by_client
    conn = noria_py.connect(str(tmp_path / "typed.db"))
    n = conn.backfill("typed", url(port, "mariadb"), options=opts, progress=False, create=True)
    assert (n, n.via) == (2, "client")
    got = conn.execute("SELECT * FROM typed ORDER BY k2, id").fetchall()
    conn.close()
    # (the UUID and INET6 values are stored as their text; the TIMESTAMP as the server's text)
    assert [tuple(r) for r in got] == [
        tuple(str(v) if i in (17, 18) and v is not None else v for i, v in enumerate(r))
        for r in want
    ]


def test_create_from_a_query_by_the_client(mariadb, monkeypatch):
    """A query's columns typed from the client's description of them, without Spark: its
    integer types (UNSIGNED kept), DECIMAL digits, DATETIME and TIME fractions, DATE, YEAR and
    NOT NULLs as MariaDB reports them (a derived table's columns may all be NULL there, but for
    an expression that never is); strings by their longest value; the key given."""
    from noria_py import mysql_client

    port, root = mariadb

    def no_spark(*_a, **_k):
        raise AssertionError("Spark asked to type a query the client reads")

    monkeypatch.setattr(bf, "spark_create_table_sql", no_spark)
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.typed")
        cur.execute(f"CREATE TABLE src.typed ({TYPED})")
        cur.execute(
            "INSERT INTO src.typed (k2, id, s, n, ts, dur, day, y) VALUES"
            " (1, 9223372036854775807, 'a', 12.5, '2021-01-01 00:00:00.5', '-1:00:00.25',"
            " '2024-02-29', 2024), (2, 0, NULL, 0, NULL, NULL, NULL, NULL)"
        )
    query = (
        "SELECT k2 * 10 AS k, id, s, n, -n AS neg, ts, dur, day, y, n * 2 AS n2,"
        " CAST(k2 AS UNSIGNED) AS u, COUNT(*) OVER () AS c, CONCAT(s, '!') AS t FROM typed"
    )
    opts = {"query": query, "user": USER, "password": PASSWORD}
    sql = mysql_client.plan(url(port, "mariadb"), opts).create_table_sql("q", ["k"])
    for part in (
        "`k` bigint NOT NULL",
        "`id` bigint unsigned,",
        "`n` decimal(9,3),",
        "`neg` decimal(9,3),",
        "`ts` datetime(3),",
        "`dur` time(2),",
        "`day` date,",
        "`y` year,",
        "`u` bigint unsigned,",
        "`c` bigint NOT NULL",
        "`t` VARCHAR(255),",
        "PRIMARY KEY (`k`)",
    ):
        assert part in sql, (part, sql)
    conn = noria_py.connect()
    n = conn.backfill(
        "q", url(port, "mariadb"), options=opts, progress=False, create=True, primary_key=["k"]
    )
    assert (n, n.via) == (2, "client")
    with root.cursor() as cur:
        cur.execute(f"SELECT * FROM ({query.replace('typed', 'src.typed')}) AS q ORDER BY k")
        want = [tuple(r) for r in cur.fetchall()]
    assert [tuple(r) for r in conn.execute("SELECT * FROM q ORDER BY k").fetchall()] == want
    conn.close()


def test_a_table_with_an_integer_key_is_read_in_key_ranges_when_asked(spark, mariadb):
    port, root = mariadb
    rows = [(i * 3 - 40, f"v{i}") for i in range(30)]
    with root.cursor() as cur:
        cur.execute("CREATE TABLE src.nums (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.executemany("INSERT INTO src.nums VALUES (%s, %s)", rows)
    opts = {"url": url(port, "mariadb"), "dbtable": "nums", "user": USER, "password": PASSWORD}
    session = jdbc.session_for(opts, None, None)
    # by default one query: one consistent snapshot of the table
    assert jdbc.read(session, opts).rdd.getNumPartitions() == 1
    # asked for: ranges of the key between its MIN and MAX, found here
    opts["numPartitions"] = "4"
    df = jdbc.read(session, opts)
    assert df.rdd.getNumPartitions() == 4
    assert sorted(tuple(r) for r in df.collect()) == sorted(rows)
    conn = noria_py.connect()
    conn.execute("CREATE TABLE nums (id INT PRIMARY KEY, v VARCHAR(10))")
    opts.pop("url")
    n = conn.backfill("nums", url(port, "mysql"), options=opts, progress=False, via="spark")
    assert n == 30
    assert conn.execute("SELECT * FROM nums ORDER BY id").fetchall() == rows
    conn.close()


def test_cli_subprocess_finds_the_driver_itself(mariadb, tmp_path):
    """A fresh process: the session is started here, with the system's Connector/J in it. Its
    JVM runs in Central European time, where 2021-03-28 02:30 does not exist: the DATETIME is
    still loaded as it is stored."""
    port, root = mariadb
    db = tmp_path / "app.db"
    items_db(db).close()
    env = {k: v for k, v in os.environ.items() if k != jdbc.PASSWORD_ENV}
    env["TZ"] = "Europe/Berlin"
    cmd = [sys.executable, "-m", "noria_py.spark.backfill", "items", "--data", str(db)]
    cmd += ["--jdbc", url(port, "mariadb"), "--dbtable", "items"]
    cmd += ["--user", USER, "--password", PASSWORD, "--no-progress", "--spark-master", "local[1]"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    conn = noria_py.connect(str(db))
    assert noria_rows(conn) == mariadb_rows(root)
    conn.close()


def test_a_wrong_password_is_one_clear_line(via, mariadb, tmp_path, capsys):
    port, _ = mariadb
    db = tmp_path / "app.db"
    items_db(db).close()
    argv = ["items", "--data", str(db), "--jdbc", url(port, "mariadb"), "--dbtable", "items"]
    argv += ["--via", via]
    assert bf.main([*argv, "--user", USER, "--password", "wrong", "--no-progress"]) == 1
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Access denied for user 'loader'" in lines[0]
    assert "wrong" not in lines[0]


def test_an_unsigned_bigint_beyond_storage_is_an_error_not_a_wrong_value(via, mariadb):
    port, _ = mariadb
    conn = noria_py.connect()
    conn.execute("CREATE TABLE huge (id BIGINT UNSIGNED PRIMARY KEY)")
    with pytest.raises(DataError, match="18446744073709551615"):
        conn.backfill(
            "huge",
            url(port, "mariadb"),
            options={"dbtable": "huge", "user": USER, "password": PASSWORD},
            progress=False,
            via=via,
        )
    assert conn.execute("SELECT COUNT(*) FROM huge").fetchall() == [(0,)]
    conn.close()


def test_no_driver_anywhere_says_what_to_install(spark, mariadb, monkeypatch):
    port, _ = mariadb
    monkeypatch.setattr(jdbc, "SYSTEM_JARS", ())
    # As in a session the driver was never added to (the earlier tests added it to this one).
    monkeypatch.setattr(jdbc, "_visible", lambda spark, driver: False)
    conn = items_db()
    with pytest.raises(OperationalError, match="apt-get install libmariadb-java.*--jar"):
        conn.backfill(
            "items",
            url(port, "mariadb"),
            options={"dbtable": "items", "user": USER, "password": PASSWORD},
            progress=False,
            via="spark",
        )
    conn.close()


# --- the client program's read (noria_py.mysql_client), without Spark ---------------------------

MIX = (
    "id INT PRIMARY KEY, s VARCHAR(30), l VARCHAR(30) CHARACTER SET latin1, b VARBINARY(12),"
    " d DOUBLE, f FLOAT, e ENUM('a', 'b c', ''), st SET('x', 'y'), y YEAR, t TEXT,"
    " ts TIMESTAMP NULL"
)
_hostile = st.one_of(
    st.text(st.sampled_from(list("a\\\t\n\r\x00'\"é€😀 ~")), max_size=6),
    st.sampled_from(["NULL", "\\N", ""]),
)
_latin = st.text(st.sampled_from(list("aé\\\t\r\n\x00")), max_size=6)
_mix_rows = st.lists(
    st.tuples(
        st.one_of(st.none(), _hostile),
        st.one_of(st.none(), _latin),
        st.one_of(st.none(), st.binary(max_size=12)),
        st.one_of(
            st.none(),
            st.floats(allow_nan=False, allow_infinity=False),
            st.sampled_from([0.1, 1 / 3, 1e300, -2.5e-300, 0.30000000000000004]),
        ),
        st.one_of(st.none(), st.sampled_from([0.1, -1.5, 3.4e38, 1e-30, 16777217.0])),
        st.one_of(st.none(), st.sampled_from(["a", "b c", ""])),
        st.one_of(st.none(), st.sampled_from(["", "x", "y", "x,y"])),
        st.one_of(st.none(), st.integers(1901, 2155)),
        st.one_of(st.none(), _hostile),
        st.one_of(st.none(), st.sampled_from(["2021-03-28 02:30:00", "2038-01-19 03:14:07"])),
    ),
    max_size=6,
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=_mix_rows)
def test_the_client_stores_what_mariadb_holds(mariadb, rows):
    """Hostile strings (tabs, newlines, carriage returns, NUL, backslashes, the text NULL, empty
    strings), latin1 text, binary strings, doubles and floats at their limits, ENUM, SET, YEAR,
    TEXT and TIMESTAMP: read by the client program and stored, every value equal to what
    MariaDB holds (its own rows, read by pymysql)."""
    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.mix")
        cur.execute(f"CREATE TABLE src.mix ({MIX})")
        cur.executemany(
            "INSERT INTO src.mix VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(i, *r) for i, r in enumerate(rows)],
        )
        cur.execute("SELECT * FROM src.mix ORDER BY id")
        want = [tuple(r) for r in cur.fetchall()]
    conn = noria_py.connect()
    conn.execute(f"CREATE TABLE mix ({MIX.replace('TIMESTAMP NULL', 'DATETIME')})")
    n = conn.backfill(
        "mix",
        url(port, "mariadb"),
        options={"dbtable": "mix", "user": USER, "password": PASSWORD},
        progress=False,
    )
    assert (n, n.via) == (len(rows), "client")
    got = conn.execute("SELECT * FROM mix ORDER BY id").fetchall()
    conn.close()
    assert [tuple(r) for r in got] == want


def test_a_load_beyond_the_loaders_cache_loads_the_rows_it_checked(mariadb, monkeypatch):
    """A checked load whose batches do not fit the loader's cache reads its source twice (a
    checking pass, then a loading pass): the second read is a copy of the client's output,
    not a second query, so the server is asked once and the rows loaded are the rows checked
    even if the source changes between the passes. The copy is deleted after the load."""
    from noria_py import loader, mysql_client

    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.snap")
        cur.execute("CREATE TABLE src.snap LIKE src.items")
        cur.execute("INSERT INTO src.snap SELECT * FROM src.items")
    monkeypatch.setattr(loader, "CACHE_BYTES", 1)  # nothing held: the loading pass reads again
    reads, sources, queries = [], [], []
    real_batches = mysql_client.ClientSource.batches
    real_command = mysql_client.ClientSource._command

    def batches(self, pa):
        sources.append(self)
        yield from real_batches(self, pa)
        reads.append(len(reads) + 1)
        if len(reads) == 1:  # the source changes between the two passes
            with root.cursor() as cur:
                cur.execute("UPDATE src.snap SET price = 1, `the name` = 'changed'")
                cur.execute("INSERT INTO src.snap (id) VALUES (424242)")

    def command(self, sql, *extra):
        queries.append(sql)
        return real_command(self, sql, *extra)

    monkeypatch.setattr(mysql_client.ClientSource, "batches", batches)
    monkeypatch.setattr(mysql_client.ClientSource, "_command", command)
    conn = items_db()
    n = conn.backfill(
        "items",
        url(port, "mariadb"),
        options={"dbtable": "snap", "user": USER, "password": PASSWORD},
        progress=False,
    )
    assert (n, n.via) == (len(ROWS), "client")
    assert reads == [1, 2]
    assert len([q for q in queries if q == sources[0].query()]) == 1  # one read of the rows
    assert noria_rows(conn) == mariadb_rows(root)  # as checked: src.items, unchanged
    assert sources[0]._copy is None
    conn.close()


def test_a_large_source_is_read_once_and_written_as_it_arrives(mariadb, monkeypatch):
    """A checked load too large to hold its checked batches is written while the client's
    output is checked: the server is asked once and no copy of the output is kept for a
    second read."""
    from noria_py import loader, mysql_client

    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.big")
        cur.execute("CREATE TABLE src.big (id INT PRIMARY KEY, name VARCHAR(20), n INT)")
        cur.execute(
            "INSERT INTO src.big SELECT seq, CONCAT('n', seq), seq % 7 FROM src.seq_1_to_8000"
        )
        cur.execute("SELECT id, name, n FROM src.big ORDER BY id")
        want = [tuple(r) for r in cur.fetchall()]
    reads, copies, streamed = [], [], []
    real_batches = mysql_client.ClientSource.batches
    real_load = loader._Stream.load

    def batches(self, pa):
        reads.append(self.query())
        yield from real_batches(self, pa)
        copies.append(self._copy)

    def load(self, *a, **k):
        streamed.append(1)
        return real_load(self, *a, **k)

    monkeypatch.setattr(mysql_client.ClientSource, "batches", batches)
    monkeypatch.setattr(loader._Stream, "load", load)
    monkeypatch.setattr(loader, "STREAM_BYTES", 1)  # (as a load beyond the cache is)
    conn = noria_py.connect(None)
    conn.execute("CREATE TABLE big (id INT PRIMARY KEY, name VARCHAR(20), n INT)")
    n = conn.backfill(
        "big",
        url(port, "mariadb"),
        options={"dbtable": "big", "user": USER, "password": PASSWORD},
        progress=False,
        batch_rows=500,
    )
    assert (n, n.via) == (len(want), "client")
    assert streamed == [1] and len(reads) == 1 and copies == [None]
    got = conn.execute("SELECT id, name, n FROM big ORDER BY id").fetchall()
    assert [tuple(r) for r in got] == want
    conn.close()


def test_a_bit_column_leaves_the_source_to_spark(mariadb):
    from noria_py import mysql_client

    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS src.bits (id INT PRIMARY KEY, b BIT(3))")
    opts = {"dbtable": "bits", "user": USER, "password": PASSWORD}
    assert mysql_client.plan(url(port, "mariadb"), opts) is None
    assert mysql_client.plan(url(port, "mariadb"), {**opts, "dbtable": "items"}) is not None
    # an option only Spark's reader knows, or a URL parameter for its driver: Spark reads
    assert mysql_client.plan(url(port, "mariadb"), {**opts, "sessionInitStatement": "x"}) is None
    assert mysql_client.plan(url(port, "mariadb") + "?useSSL=false", opts) is None
    conn = noria_py.connect()
    conn.execute("CREATE TABLE bits (id INT PRIMARY KEY, b BIT(3))")
    with pytest.raises(noria_py.ProgrammingError, match="via='spark'"):
        conn.backfill("bits", url(port, "mariadb"), options=opts, progress=False, via="client")
    conn.close()


def test_the_client_names_a_missing_table_in_one_line(mariadb):
    port, _ = mariadb
    conn = noria_py.connect()
    conn.execute("CREATE TABLE nothere (id INT PRIMARY KEY)")
    opts = {"dbtable": "nothere", "user": USER, "password": PASSWORD}
    with pytest.raises(OperationalError, match="doesn't exist") as err:
        conn.backfill("nothere", url(port, "mariadb"), options=opts, progress=False)
    assert "\n" not in str(err.value)
    conn.close()


# --- the URL and driver rules, without Spark ---------------------------------------------------


def test_the_system_jar_declares_mariadbs_driver():
    jar = jdbc.system_jar()
    assert jar is not None, "apt-get install libmariadb-java"
    assert jdbc.MARIADB_DRIVER in jdbc.jar_drivers(jar)


def test_a_given_jar_names_the_driver(tmp_path):
    import shutil

    given = tmp_path / "driver.jar"
    shutil.copy(jdbc.system_jar(), given)
    assert jdbc._pick_driver([str(given)]) == (jdbc.MARIADB_DRIVER, False)
    assert jdbc._pick_driver(["hdfs://cluster/jars/driver.jar"]) == (None, True)
    assert jdbc._pick_driver([]) == (None, False)


def test_mariadb_urls_are_read_as_mysql_urls():
    assert (
        jdbc._mysql_url("jdbc:mariadb://h:1/db", jdbc.MARIADB_DRIVER)
        == "jdbc:mysql://h:1/db?permitMysqlScheme"
    )
    assert (
        jdbc._mysql_url("jdbc:mariadb://h/db?useSSL=false", jdbc.MARIADB_DRIVER)
        == "jdbc:mysql://h/db?useSSL=false&permitMysqlScheme"
    )
    mysql_driver = jdbc.MYSQL_DRIVERS[0]
    assert jdbc._mysql_url("jdbc:mysql://h/db", mysql_driver) == "jdbc:mysql://h/db"
    assert jdbc.is_mysql("JDBC:MariaDB://h/db") and not jdbc.is_mysql("jdbc:postgresql://h/db")


# --- one pass: checked while read --------------------------------------------------------------

GEN_SOURCE = "id INT PRIMARY KEY, k INT, v VARCHAR(20), n BIGINT, f DOUBLE"
# narrower than the source: too long, out of range, NULL in NOT NULL and repeated keys all occur
GEN_TARGET = (
    "CREATE TABLE gen (id INT, k SMALLINT NOT NULL PRIMARY KEY, v VARCHAR(3),"
    " n TINYINT UNSIGNED NOT NULL, f DOUBLE, UNIQUE (f))"
)
_gen_rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 4), st.sampled_from([-40000, 40000])),
        st.one_of(st.none(), st.text("ab€'", max_size=5)),
        st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([255, 256, -300])),
        st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5])),
    ),
    max_size=8,
)


def _outcome(conn, source, **kw):
    """(error type, errno, message) of a load, or the rows it stored."""
    try:
        conn.backfill("gen", source, progress=False, **kw)
    except noria_py.Error as e:
        return type(e).__name__, e.args
    return conn.execute("SELECT * FROM gen ORDER BY k").fetchall()


def _shown_duplicates(outcome) -> tuple:
    """A duplicate-key error with its examples as a set: which of several repeated keys an
    error quotes first follows the order its group-by meets them in."""
    name, args = outcome
    head, _, tail = str(args[0]).partition(" in the source: ")
    shown, _, rest = tail.partition(";")
    return name, head, frozenset(shown.split(", ")), rest, args[1:]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=_gen_rows)
def test_checked_while_read_fails_and_loads_as_the_separate_check_does(
    spark, mariadb, monkeypatch, rows
):
    """A validated JDBC load checks each row as it arrives (one pass, ``_check_while_reading``)
    and raises what the separate checking pass (``_validate``, ``ONE_PASS = False``) raises:
    the same error, counts, rows and values, and the NOT NULL column it names; or stores the
    same rows."""
    port, root = mariadb
    with root.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS src.gen")
        cur.execute(f"CREATE TABLE src.gen ({GEN_SOURCE})")
        if rows:
            cur.executemany(
                "INSERT INTO src.gen VALUES (%s, %s, %s, %s, %s)",
                [(i, *r) for i, r in enumerate(rows)],
            )
    opts = {"dbtable": "gen", "user": USER, "password": PASSWORD}
    one_pass = []
    real = bf._check_while_reading
    monkeypatch.setattr(
        bf, "_check_while_reading", lambda *a: one_pass.append(1) or real(*a), raising=True
    )
    conn = noria_py.connect()
    conn.execute(GEN_TARGET)
    got = _outcome(conn, url(port, "mariadb"), options=opts, via="spark")
    assert one_pass == [1]  # the JDBC source was checked while read
    conn.close()
    conn = noria_py.connect()
    conn.execute(GEN_TARGET)
    by_client = _outcome(conn, url(port, "mariadb"), options=opts, via="client")
    conn.close()
    frame = bf.read_source(url(port, "mariadb"), options=opts)
    conn = noria_py.connect()
    conn.execute(GEN_TARGET)
    with monkeypatch.context() as m:
        m.setattr(bf, "ONE_PASS", False)
        want = _outcome(conn, frame)
    assert one_pass == [1]  # the separate checking pass
    conn.close()
    if isinstance(want, tuple) and "Duplicate entry" in str(want[1][0]):
        assert _shown_duplicates(got) == _shown_duplicates(want)
    else:
        assert got == want
    # the client's read, checked by the local loader, refuses or stores the same
    if isinstance(want, tuple):
        assert isinstance(by_client, tuple) and by_client[0] == want[0], (by_client, want)
    else:
        assert by_client == want


def test_held_batches_spill_to_a_file_and_come_back_in_order():
    """Past its memory limit ``_Held`` writes tables to a temporary Arrow file; iterating gives
    every table back once, in order, with the same chunks; repeated keys are found across memory
    and file (-0.0 and 0.0 as one, NULLs never); closing removes the file."""
    import pyarrow as pa

    tables = [
        pa.table({"k": pa.array([i * 3, i * 3 + 1, None], pa.int64()), "f": [0.0, 1.0, 2.0 + i]})
        for i in range(5)
    ]
    tables.append(pa.table({"k": pa.array([4, 100, None], pa.int64()), "f": [-0.0, 9.0, 8.0]}))
    held = bf._Held(limit=tables[0].nbytes * 2)
    for t in tables:
        held.add(t)
    assert held.path is not None and os.path.exists(held.path) and len(held.tables) == 2
    assert held.rows == 18
    assert held.repeated(["k"]) == [{"k0": 4, "count": 2}]
    found = held.repeated(["f"])
    assert sorted((r["k0"], r["count"]) for r in found) == [(0.0, 6), (1.0, 5)]
    assert held.repeated(["k", "f"]) == []
    back = list(held)
    assert [t.to_pydict() for t in back] == [t.to_pydict() for t in tables]
    path = held.path
    held.close()
    assert not os.path.exists(path)
    assert list(held) == []

"""Real drivers against `noria-py serve`: pymysql, mysql-connector-python (plain and prepared
cursors) and the mariadb command-line client."""

from __future__ import annotations

import datetime
import shutil
import subprocess

import mysql.connector
import pymysql
import pytest

pytestmark = pytest.mark.wire

TRICKY = [
    "it's",
    'say "hi"',
    "back\\slash",
    "\\'; DROP TABLE people; --",
    "a\\\\b\\'c''d",
    "percent % underscore _ \\% \\_",
    "new\nline\ttab\0nul",
    "ünïcødé ✓ 😀",
    "",
]


@pytest.fixture(scope="module")
def people(server):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, "
            "age INT, score DOUBLE, born DATE)"
        )
        cur.executemany(
            "INSERT INTO people (id, name, age, score, born) VALUES (%s, %s, %s, %s, %s)",
            [
                (1, "ann", 31, 1.5, datetime.date(1993, 4, 1)),
                (2, "bob", None, None, None),
                (3, "cy", 44, -2.25, datetime.date(1980, 12, 31)),
            ],
        )
    conn.close()
    return "people"


def test_pymysql_select_metadata_and_values(server, people):
    conn = server.pymysql()
    with conn.cursor() as cur:
        n = cur.execute("SELECT id, name, age, score, born FROM people WHERE id = %s", (1,))
        assert n == 1
        assert cur.fetchall() == ((1, "ann", 31, 1.5, datetime.date(1993, 4, 1)),)
        desc = {d[0]: d for d in cur.description}
        assert list(desc) == ["id", "name", "age", "score", "born"]
        assert desc["id"][1] in (
            pymysql.constants.FIELD_TYPE.LONG,
            pymysql.constants.FIELD_TYPE.LONGLONG,
        )
        assert desc["name"][1] == pymysql.constants.FIELD_TYPE.VAR_STRING
        assert desc["score"][1] == pymysql.constants.FIELD_TYPE.DOUBLE
        assert desc["born"][1] == pymysql.constants.FIELD_TYPE.DATE
        assert desc["id"][6] is False and desc["name"][6] is False  # NOT NULL flags
        assert desc["age"][6] is True
        cur.execute("SELECT id, age, score, born FROM people WHERE id = %s", (2,))
        assert cur.fetchall() == ((2, None, None, None),)
        cur.execute("SELECT id FROM people WHERE id = %s", (999,))
        assert cur.fetchall() == ()
    conn.close()


def test_pymysql_writes_report_affected_rows_and_last_insert_id(server):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE auto_ids (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10))")
        assert cur.execute("INSERT INTO auto_ids (v) VALUES ('a')") == 1
        first = cur.lastrowid
        assert first >= 1
        assert cur.execute("INSERT INTO auto_ids (v) VALUES ('b')") == 1
        assert cur.lastrowid == first + 1
        cur.execute("SELECT LAST_INSERT_ID()")
        assert cur.fetchone() == (first + 1,)
        assert cur.execute("INSERT INTO auto_ids (v) VALUES ('c'), ('d'), ('e')") == 3
        assert cur.execute("UPDATE auto_ids SET v = 'z' WHERE id > %s", (first,)) == 4
        assert cur.execute("DELETE FROM auto_ids WHERE v = 'z'") == 4
        assert cur.execute("DELETE FROM auto_ids WHERE v = 'nothing'") == 0
    conn.close()


@pytest.mark.parametrize("driver", ["pymysql", "connector", "connector-prepared"])
def test_string_parameters_round_trip(server, driver):
    table = "tricky_" + driver.replace("-", "_")
    admin = server.pymysql()
    with admin.cursor() as cur:
        cur.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, s VARCHAR(200))")
    admin.close()
    if driver == "pymysql":
        conn = server.pymysql()
        cur = conn.cursor()
    else:
        conn = server.connector()
        cur = conn.cursor(prepared=driver.endswith("prepared"))
    for i, s in enumerate(TRICKY):
        cur.execute(f"INSERT INTO {table} (id, s) VALUES (%s, %s)", (i, s))
    for i, s in enumerate(TRICKY):
        cur.execute(f"SELECT id, s FROM {table} WHERE s = %s", (s,))
        assert cur.fetchall() in ([(i, s)], ((i, s),)), s
        cur.execute(f"SELECT s FROM {table} WHERE id = %s", (i,))
        assert [tuple(r) for r in cur.fetchall()] == [(s,)]
    cur.execute(f"SELECT COUNT(*) FROM {table}")
    assert cur.fetchall()[0][0] == len(TRICKY)  # nothing was dropped or injected
    conn.close()


def test_bytes_parameters_sent_with_the_binary_introducer(server):
    # mysqlclient, and pymysql with binary_prefix=True, send a bytes parameter as
    # _binary'...': stored, compared and read back byte for byte, cached query or not
    values = [s.encode("utf-8") for s in TRICKY] + [bytes(range(256))[:200], b"\xff\x00\xfe"]
    conn = server.pymysql(binary_prefix=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE blobs (id INT PRIMARY KEY, b VARBINARY(255), l LONGBLOB)")
    for i, v in enumerate(values):
        cur.execute("INSERT INTO blobs VALUES (%s, %s, %s)", (i, v, v * 3))
    for i, v in enumerate(values):
        cur.execute("SELECT id, b, l FROM blobs WHERE b = %s", (v,))
        assert cur.fetchall() == ((i, v, v * 3),), v
        cur.execute("SELECT b FROM blobs WHERE id = %s", (i,))
        assert cur.fetchall() == ((v,),)
    cur.execute("UPDATE blobs SET b = %s WHERE b = %s", (b"\x01'\\", values[0]))
    cur.execute("SELECT id FROM blobs WHERE b = %s", (b"\x01'\\",))
    assert cur.fetchall() == ((0,),)
    conn.close()


def test_connector_prepared_metadata_null_params_and_types(server, people):
    conn = server.connector()
    cur = conn.cursor(prepared=True)
    cur.execute("SELECT id, name, age, score, born FROM people WHERE id = %s", (3,))
    assert cur.fetchall() == [(3, "cy", 44, -2.25, datetime.date(1980, 12, 31))]
    names = [d[0] for d in cur.description]
    assert names == ["id", "name", "age", "score", "born"]
    flags = {d[0]: d[6] for d in cur.description}  # null_ok
    assert flags["id"] in (0, False) and flags["age"] in (1, True)
    cur.execute("SELECT id FROM people WHERE age = %s", (None,))
    assert cur.fetchall() == []  # = NULL matches nothing
    cur.execute("SELECT id, name FROM people WHERE id = %s AND name = %s", (1, "ann"))
    assert cur.fetchall() == [(1, "ann")]
    # the same prepared statement, many executions
    for key, name in [(1, "ann"), (2, "bob"), (3, "cy"), (1, "ann")]:
        cur.execute("SELECT name FROM people WHERE id = %s", (key,))
        assert cur.fetchall() == [(name,)]
    conn.close()


@pytest.mark.parametrize("prepared", [False, True])
def test_bit_aggregates_are_unsigned_on_the_wire(server, people, prepared):
    # BIT_AND over no rows is 2**64 - 1: a BIGINT UNSIGNED column, maintained or proxied
    conn = server.connector()
    cur = conn.cursor(prepared=prepared)
    for sql in (
        "SELECT BIT_AND(age), BIT_OR(age), VAR_POP(age) FROM people WHERE id = %s",
        "SELECT BIT_AND(age), BIT_XOR(age), JSON_ARRAYAGG(age) FROM people WHERE id = %s",
    ):
        cur.execute(sql, (-5,))
        assert list(cur.fetchall()[0][:2]) == [2**64 - 1, 0], sql
        unsigned = [bool(d[7] & 32) for d in cur.description]  # UNSIGNED_FLAG
        assert unsigned[:2] == [True, True], sql
    conn.close()


def test_connector_plain_cursor(server, people):
    conn = server.connector()
    cur = conn.cursor()
    cur.execute("SELECT name, born FROM people WHERE id = %s", (1,))
    assert cur.fetchall() == [("ann", datetime.date(1993, 4, 1))]
    cur.execute("SELECT @@version, DATABASE()")
    version, db = cur.fetchone()
    assert version.startswith("8.0") and db == "noria"
    conn.close()


@pytest.mark.parametrize("driver", ["pymysql", "connector", "connector-prepared"])
def test_errors_carry_mysql_codes(server, people, driver):
    if driver == "pymysql":
        conn = server.pymysql()
        cur = conn.cursor()

        def code_of(exc):
            return exc.args[0]

        base = pymysql.err.MySQLError
    else:
        conn = server.connector()
        cur = conn.cursor(prepared=driver.endswith("prepared"))

        def code_of(exc):
            return exc.errno, exc.sqlstate

        base = mysql.connector.Error
    cases = [
        ("SELECT * FROM no_such_table", (), 1146, "42S02"),
        ("SELECT no_such_column FROM people", (), 1054, "42S22"),
        ("INSERT INTO people (id, name) VALUES (%s, %s)", (1, "dup"), 1062, "23000"),
        ("INSERT INTO people (id, name) VALUES (%s, %s)", (77, None), 1048, "23000"),
    ]
    if driver != "connector-prepared":
        cases.append(("SELECT FROM WHERE", (), 1064, "42000"))
    for sql, params, errno, state in cases:
        with pytest.raises(base) as info:
            cur.execute(sql, params)
        if driver == "pymysql":
            assert code_of(info.value) == errno, sql
        else:
            assert code_of(info.value) == (errno, state), sql
    cur.execute("SELECT name FROM people WHERE id = %s", (1,))  # the connection still works
    assert [tuple(r) for r in cur.fetchall()] == [("ann",)]
    conn.close()


def test_session_statements(server):
    conn = server.pymysql()
    with conn.cursor() as cur:
        cur.execute(
            "SELECT @@version_comment, @@max_allowed_packet, @@session.transaction_isolation, "
            "@@tx_isolation, @@character_set_client, @@lower_case_table_names, @@autocommit"
        )
        row = cur.fetchone()
        assert row[0] == "noria_py dataflow database"
        assert row[1] == 4 * 1024 * 1024
        assert row[2] == row[3] == "READ-COMMITTED"
        assert row[4:] == ("utf8mb4", 0, 1)
        # a stronger isolation than transactions here have is not claimed: the variable
        # stays READ-COMMITTED, with a warning saying why
        for sql in (
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SET SESSION transaction_isolation = 'REPEATABLE-READ'",
        ):
            cur.execute(sql)
            cur.execute("SHOW WARNINGS")
            ((level, code, msg),) = cur.fetchall()
            assert (level, code) == ("Warning", 1235) and "READ COMMITTED" in msg, sql
            cur.execute("SELECT @@transaction_isolation")
            assert cur.fetchall() == (("READ-COMMITTED",),)
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        cur.execute("SELECT @@transaction_isolation")  # weaker: what it asks for holds
        assert cur.fetchall() == (("READ-UNCOMMITTED",),)
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        cur.execute("SELECT @@version_comment LIMIT 1")
        assert [d[0] for d in cur.description] == ["@@version_comment"]
        cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci")
        cur.execute(
            "SET SESSION sql_mode = 'no_engine_substitution,strict_all_tables', "
            "@@session.wait_timeout = 100, autocommit = 1"
        )
        cur.execute("SELECT @@sql_mode AS m, @@wait_timeout")
        assert cur.fetchone() == ("STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION", 100)
        assert [d[0] for d in cur.description] == ["m", "@@wait_timeout"]
        cur.execute("SHOW VARIABLES LIKE 'sql_mode'")
        assert cur.fetchall() == (("sql_mode", "STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION"),)
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("SET SESSION sql_mode = 'ANSI'")  # ANSI_QUOTES and the like: refused
        assert info.value.args[0] == 1235
        cur.execute("SHOW VARIABLES LIKE 'lower_case%'")
        assert cur.fetchall() == (("lower_case_table_names", "0"),)
        cur.execute("SHOW DATABASES")
        assert ("noria",) in cur.fetchall()
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("USE otherdb")
        assert info.value.args[0] == 1049
        cur.execute("CREATE DATABASE otherdb")
        cur.execute("USE otherdb")
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == ("otherdb",)
        cur.execute("SHOW WARNINGS")  # none of those statements used a table: MySQL keeps
        assert cur.fetchall() == (("Error", 1049, "Unknown database 'otherdb'"),)  # the error
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("SELECT @@no_such_variable")
        assert info.value.args[0] == 1193
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("SET @@version = 'x'")
        assert info.value.args[0] == 1238
    conn.close()


def test_transactions(server):
    a = server.pymysql()
    b = server.pymysql()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL)")
    ca.execute("INSERT INTO accounts VALUES (1, 100), (2, 100)")

    def balances(cur):
        cur.execute("SELECT id, balance FROM accounts WHERE id = %s", (1,))
        one = cur.fetchall()
        cur.execute("SELECT id, balance FROM accounts WHERE id = %s", (2,))
        return one + cur.fetchall()

    a.begin()
    assert ca.execute("UPDATE accounts SET balance = balance - 30 WHERE id = %s", (1,)) == 1
    assert ca.execute("UPDATE accounts SET balance = balance + 30 WHERE id = %s", (2,)) == 1
    # the writer reads its own writes; nobody else sees them before COMMIT
    assert balances(cb) == ((1, 100), (2, 100))
    assert balances(ca) == ((1, 70), (2, 130))
    a.commit()
    assert balances(cb) == ((1, 70), (2, 130))

    a.begin()
    ca.execute("UPDATE accounts SET balance = 0 WHERE id = %s", (1,))
    assert balances(ca) == ((1, 0), (2, 130))
    a.rollback()
    assert balances(cb) == ((1, 70), (2, 130))
    assert balances(ca) == ((1, 70), (2, 130))

    # a duplicate key is an error at the INSERT; the transaction goes on without that statement
    a.begin()
    ca.execute("INSERT INTO accounts VALUES (3, 5)")
    with pytest.raises(pymysql.err.IntegrityError) as info:
        ca.execute("INSERT INTO accounts VALUES (1, 999)")
    assert info.value.args[0] == 1062
    cb.execute("SELECT COUNT(*) FROM accounts")
    assert cb.fetchone() == (2,)
    ca.execute("SELECT COUNT(*) FROM accounts")
    assert ca.fetchone() == (3,)
    a.commit()
    cb.execute("SELECT COUNT(*) FROM accounts")
    assert cb.fetchone() == (3,)
    assert balances(cb) == ((1, 70), (2, 130))
    ca.execute("DELETE FROM accounts WHERE id = 3")

    # autocommit off: a transaction starts implicitly; pool-style ROLLBACK on release
    a.autocommit(False)
    ca.execute("INSERT INTO accounts VALUES (4, 1)")
    cb.execute("SELECT COUNT(*) FROM accounts")
    assert cb.fetchone() == (2,)
    a.rollback()
    a.rollback()  # a second ROLLBACK with nothing open is fine
    ca.execute("INSERT INTO accounts VALUES (5, 1)")
    a.commit()
    cb.execute("SELECT id FROM accounts WHERE id = %s", (5,))
    assert cb.fetchall() == ((5,),)
    cb.execute("SELECT id FROM accounts WHERE id = %s", (4,))
    assert cb.fetchall() == ()
    # a write of an unknown table is refused when it arrives, not at COMMIT
    with pytest.raises(pymysql.err.ProgrammingError) as info:
        ca.execute("INSERT INTO no_such_table VALUES (1)")
    assert info.value.args[0] == 1146
    a.rollback()
    a.close()
    b.close()


def test_connector_transaction_and_reset(server):
    conn = server.connector(autocommit=False)
    cur = conn.cursor(prepared=True)
    cur.execute("CREATE TABLE conn_tx (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO conn_tx (id, v) VALUES (%s, %s)", (1, 10))
    conn.commit()
    cur.execute("UPDATE conn_tx SET v = %s WHERE id = %s", (11, 1))
    assert cur.rowcount == 1
    conn.rollback()
    cur.execute("SELECT v FROM conn_tx WHERE id = %s", (1,))
    assert cur.fetchall() == [(10,)]
    cur.execute("INSERT INTO conn_tx (id, v) VALUES (%s, %s)", (2, 20))  # buffered
    conn.cmd_reset_connection()  # drops the open transaction
    conn.commit()
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*) FROM conn_tx")
    assert cur.fetchall() == [(1,)]
    conn.close()


def _mariadb(server, *args, sql=None):
    exe = shutil.which("mariadb") or shutil.which("mysql")
    assert exe, "the mariadb command-line client is required (apt-get install mariadb-client)"
    cmd = [exe, "-h", server.host, "-P", str(server.port), "-u", "cli", "--batch", *args]
    return subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=60)


def test_mariadb_command_line_client(server):
    sql = """
    CREATE TABLE cli_t (id INT PRIMARY KEY, name VARCHAR(20));
    INSERT INTO cli_t VALUES (1, 'one'), (2, 'it''s two'), (3, NULL);
    SELECT id, name FROM cli_t WHERE id = 2;
    SELECT name FROM cli_t WHERE id = 3;
    SHOW TABLES;
    SELECT DATABASE();
    """
    out = _mariadb(server, "noria", sql=sql)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "2\tit's two" in lines
    assert "NULL" in lines
    assert "cli_t" in lines
    assert "noria" in lines
    # interactive startup queries (version comment, auto-rehash) are answered too
    out = _mariadb(server, "noria", "-e", "SELECT name FROM cli_t WHERE id = 1", "--auto-rehash")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["name", "one"]
    out = _mariadb(server, "-e", "SELECT * FROM missing_table")
    assert out.returncode != 0
    assert "ERROR 1146 (42S02)" in out.stderr


@pytest.mark.parametrize("driver", ["pymysql", "connector"])
def test_bulk_executemany_stores_every_value(server, driver):
    """A driver's executemany of an INSERT arrives as multi-row statements of up to a megabyte
    with the values written in (every batch a new text, of its own row count); each row must
    be stored exactly, the hostile strings included, and a duplicate key stores nothing of its
    statement."""
    import datetime as dt
    from decimal import Decimal

    table = "bulk_" + driver
    conn = server.pymysql() if driver == "pymysql" else server.connector()
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE {table} (id INT PRIMARY KEY, s VARCHAR(200), n INT, d DECIMAL(8,2),"
        " t DATETIME)"
    )
    base = dt.datetime(2024, 1, 2, 3, 4, 5)
    rows = [
        (i, TRICKY[i % len(TRICKY)] + str(i), None if i % 7 == 0 else i - 3000,
         Decimal(f"{i % 1000}.{i % 100:02d}"), base + dt.timedelta(minutes=i))
        for i in range(6000)
    ]  # fmt: skip
    sql = f"INSERT INTO {table} (id, s, n, d, t) VALUES (%s, %s, %s, %s, %s)"
    for start in (0, 2500, 2501):  # batches of different row counts
        cur.executemany(sql, rows[start : {0: 2500, 2500: 2501, 2501: 6000}[start]])
    cur.execute(f"SELECT id, s, n, d, t FROM {table} ORDER BY id")
    assert [tuple(r) for r in cur.fetchall()] == rows
    with pytest.raises(Exception) as err:
        cur.executemany(sql, [(6000, "new", 1, Decimal("1.00"), base), rows[5]])
    assert "Duplicate entry '5'" in str(err.value)
    cur.execute(f"SELECT COUNT(*) FROM {table}")
    assert cur.fetchall()[0][0] == 6000
    conn.close()

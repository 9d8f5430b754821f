"""LOAD DATA INFILE over the wire: the rows load, the affected-row count is MySQL's, a cached
query sees them, an error names the row.

LOAD DATA LOCAL INFILE: the server asks the client for the file and loads what it sends, with
pymysql, mysql-connector-python and the ``mariadb`` command line, compared with MariaDB loading
the same file from the same client (affected rows, warnings, stored rows: LOCAL loads as IGNORE
does). A client that does not allow LOCAL files gets MySQL's 3948 and its connection goes on; a
client that sends no file loads nothing; a file sent out of order is 1156."""

from __future__ import annotations

import re
import shutil
import subprocess

import mysql.connector
import pymysql
import pytest
from rawmysql import CLIENT_LOCAL_FILES, RawClient, error_code

pytestmark = pytest.mark.wire


def test_load_data_over_the_wire(server, tmp_path):
    good = tmp_path / "good.csv"
    good.write_text('1,"a,b"\n2,\\N\n3,"say ""hi"""\n', encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text("4,x\nfive,y\n", encoding="utf-8")
    conn = server.pymysql()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS wl_t")
    cur.execute("CREATE TABLE wl_t (id INT PRIMARY KEY, s VARCHAR(20))")
    cur.execute("SELECT COUNT(*) FROM wl_t WHERE id > %s", (0,))
    assert cur.fetchall() == ((0,),)
    opts = "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'"
    assert cur.execute(f"LOAD DATA INFILE '{good}' INTO TABLE wl_t {opts}") == 3
    cur.execute("SELECT * FROM wl_t ORDER BY id")
    assert cur.fetchall() == ((1, "a,b"), (2, None), (3, 'say "hi"'))
    cur.execute("SELECT COUNT(*) FROM wl_t WHERE id > %s", (0,))
    assert cur.fetchall() == ((3,),)
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(f"LOAD DATA INFILE '{bad}' INTO TABLE wl_t {opts}")
    assert info.value.args[0] == 1366 and "at row 2" in info.value.args[1]
    cur.execute("SELECT COUNT(*) FROM wl_t")
    assert cur.fetchall() == ((3,),)  # nothing of the failed load
    with pytest.raises(pymysql.err.MySQLError) as info:  # pymysql without local_infile=True
        cur.execute(f"LOAD DATA LOCAL INFILE '{good}' INTO TABLE wl_t {opts}")
    assert info.value.args[0] == 3948
    cur.execute("SELECT COUNT(*) FROM wl_t")  # the connection goes on
    assert cur.fetchall() == ((3,),)
    conn.close()


OPTS = "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES"
DDL = "CREATE TABLE {t} (id INT PRIMARY KEY, s VARCHAR(20), n INT, UNIQUE (s))"
# a header line; a duplicate of the table's row 1 (key id) and of the file's own row (key s);
# a NULL; a long row (MySQL cuts it with a warning); a quoted separator
FILE = (
    "id,s,n\n"
    '1,"dup of the table",7\n'
    '2,"b,c",\\N\n'
    "3,x,8\n"
    "4,x,9\n"
    "5,long,10,extra\n"
    '6,"say ""hi""",11\n'
)


def _outcome(cur, table: str, sql: str):
    """(affected rows, warnings, rows) after ``sql``; ("error", its code, rows) when it fails."""
    try:
        n = cur.execute(sql)
        got = (n, cur.warning_count)
    except pymysql.err.MySQLError as e:
        got = ("error", e.args[0])
    cur.execute(f"SELECT * FROM {table} ORDER BY id")
    return (*got, cur.fetchall())


def _mariadb_load(mariadb_oracle, table: str, sql: str):
    """``_outcome`` of ``sql`` on MariaDB, whose client sends the file."""
    conn = mariadb_oracle.connect(local_infile=True)
    try:
        with conn.cursor() as cur:
            _fresh(cur, table)
            return _outcome(cur, table, sql)
    finally:
        conn.close()


def _fresh(cur, table: str) -> None:
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(DDL.format(t=table))
    cur.execute(f"INSERT INTO {table} VALUES (1, 'old', 0)")


@pytest.mark.parametrize("mode", ["", "REPLACE ", "IGNORE "])
@pytest.mark.parametrize("long_row", [False, True])
def test_load_local_pymysql_matches_mariadb(server, mariadb_oracle, tmp_path, mode, long_row):
    path = tmp_path / "rows.csv"
    body = FILE if long_row else FILE.replace(",extra", "")
    path.write_text(body, encoding="utf-8")
    sql = f"LOAD DATA LOCAL INFILE '{path}' {mode}INTO TABLE wll_t {OPTS}"
    want = _mariadb_load(mariadb_oracle, "wll_t", sql)
    conn = server.pymysql(local_infile=True)
    cur = conn.cursor()
    _fresh(cur, "wll_t")
    cur.execute("SELECT s FROM wll_t WHERE id = %s", (6,))  # a cached query, before
    assert cur.fetchall() == ()
    assert _outcome(cur, "wll_t", sql) == want
    cur.execute("SELECT s FROM wll_t WHERE id = %s", (6,))  # the cached query sees the load
    assert cur.fetchall() == tuple((r[1],) for r in want[2] if r[0] == 6)
    conn.close()


def _warnings(cur) -> list:
    """SHOW WARNINGS, the database's name left out of 1366's column (`db`.`t`.`col`)."""
    cur.execute("SHOW WARNINGS")
    return [(lv, int(code), re.sub(r"`[^`]+`\.(`[^`]+`\.`)", r"\1", msg)) for lv, code, msg in cur]


def test_load_local_adjusts_bad_values_as_mariadb(server, mariadb_oracle, tmp_path):
    """LOCAL loads as IGNORE: a value that does not fit its column is stored as MySQL adjusts
    it (0 for 'x', the leading number of '12x', the type's limit, the text cut to length, a
    short row's missing fields), with MariaDB's warnings; a cached query sees the rows."""
    path = tmp_path / "bad.csv"
    path.write_text("7,ok,1\n8,bad,x\n9,far too long for twenty,12x\n10\n11,big,99999999999\n")
    sql = f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE wlb_t FIELDS TERMINATED BY ','"

    def load(cur):
        n = cur.execute(sql)
        got = (n, cur.warning_count, _warnings(cur))
        cur.execute("SELECT * FROM wlb_t ORDER BY id")
        return (*got, cur.fetchall())

    conn = mariadb_oracle.connect(local_infile=True)
    try:
        with conn.cursor() as ocur:
            _fresh(ocur, "wlb_t")
            want = load(ocur)
    finally:
        conn.close()
    assert want[:2] == (5, 6) and (8, "bad", 0) in want[3]
    conn = server.pymysql(local_infile=True)
    cur = conn.cursor()
    _fresh(cur, "wlb_t")
    cur.execute("SELECT n FROM wlb_t WHERE id = %s", (9,))  # a cached query, before
    assert cur.fetchall() == ()
    assert load(cur) == want
    cur.execute("SELECT n FROM wlb_t WHERE id = %s", (9,))  # the cached query sees the load
    assert cur.fetchall() == ((12,),)
    conn.close()


def test_load_local_mysql_connector_matches_mariadb(server, mariadb_oracle, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(FILE, encoding="utf-8")
    sql = f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE wlc_t {OPTS}"
    want = _mariadb_load(mariadb_oracle, "wlc_t", sql)
    for allow in ({"allow_local_infile": True}, {"allow_local_infile_in_path": str(tmp_path)}):
        conn = server.connector(**allow)
        cur = conn.cursor()
        _fresh(cur, "wlc_t")
        cur.execute(sql)
        assert (cur.rowcount, cur.warning_count) == want[:2], allow
        cur.execute("SELECT * FROM wlc_t ORDER BY id")
        assert [tuple(r) for r in cur.fetchall()] == list(want[2]), allow
        conn.close()
    conn = server.connector()  # local files not allowed: refused before any transfer
    cur = conn.cursor()
    with pytest.raises(mysql.connector.Error) as info:
        cur.execute(sql)
    assert info.value.__cause__.errno == 3948  # the driver words MySQL's 3948 its own way
    cur.execute("SELECT COUNT(*) FROM wlc_t")
    assert cur.fetchall() == [(len(want[2]),)]
    conn.close()


@pytest.mark.skipif(shutil.which("mariadb") is None, reason="no mariadb command line client")
def test_load_local_mariadb_cli(server, mariadb_oracle, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(FILE, encoding="utf-8")
    sql = f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE wlm_t {OPTS}"
    want = _mariadb_load(mariadb_oracle, "wlm_t", sql)
    conn = server.pymysql()
    _fresh(conn.cursor(), "wlm_t")
    base = ["mariadb", "-h", "127.0.0.1", "-P", str(server.port), "-u", "tester", "noria"]
    run = subprocess.run(
        [*base, "--local-infile=1", "-e", f"{sql}; SELECT COUNT(*) FROM wlm_t"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["COUNT(*)", str(len(want[2]))]
    cur = conn.cursor()
    cur.execute("SELECT * FROM wlm_t ORDER BY id")
    assert cur.fetchall() == want[2]
    run = subprocess.run(
        [*base, "--local-infile=0", "-e", sql], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1 and "ERROR 3948" in run.stderr, run.stderr
    conn.close()


def test_load_local_big_file(server, tmp_path):
    """Thousands of packets (sequence ids wrap around), more bytes than max_allowed_packet."""
    path = tmp_path / "big.tsv"
    count = 80_000
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            f.write(f"{i}\tvalue number {i:09d}{'.' * 36}\n")
    assert path.stat().st_size > 4 * 1024 * 1024  # the server's --max-packet
    conn = server.pymysql(local_infile=True)
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS wlbig_t")
    cur.execute("CREATE TABLE wlbig_t (id INT PRIMARY KEY, s VARCHAR(60))")
    assert cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE wlbig_t") == count
    cur.execute("SELECT COUNT(*), MAX(s) FROM wlbig_t")
    assert cur.fetchall() == ((count, f"value number {count - 1:09d}{'.' * 36}"),)
    conn.close()


def _raw(server) -> RawClient:
    c = RawClient(server.host, server.port)
    ok = c.handshake(extra_caps=CLIENT_LOCAL_FILES)
    assert ok[0] == 0, ok
    c.command(b"\x02noria")
    return c


def test_load_local_raw_protocol(server):
    conn = server.pymysql()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS wlr_t")
    cur.execute("CREATE TABLE wlr_t (id INT PRIMARY KEY, s VARCHAR(5))")
    c = _raw(server)
    sql = b"LOAD DATA LOCAL INFILE 'any name' INTO TABLE wlr_t"
    # the request names the file; the client sends it in packets, then an empty one
    assert c.command(b"\x03" + sql) == b"\xfbany name"
    c.send_packet(b"1\ta\n2\t")
    c.send_packet(b"b\n")
    c.send_packet(b"")
    ok = c.read_packet()
    assert ok[:2] == b"\x00\x02" and c.seq == 6, ok  # the OK follows the file's packets
    # a client that refuses to send the file sends an empty packet: nothing loads
    assert c.command(b"\x03" + sql)[0] == 0xFB
    c.send_packet(b"")
    assert c.read_packet()[:2] == b"\x00\x00"
    assert c.command(b"\x03SELECT COUNT(*) FROM wlr_t")[0] == 1  # the connection goes on
    c.close()
    # a syntax error is answered before the file is asked for
    c = _raw(server)
    assert error_code(c.command(b"\x03LOAD DATA LOCAL INFILE 'f' INTO wlr_t")) == 1064
    # LOAD DATA LOCAL cannot be prepared (only COM_QUERY asks for the file)
    assert error_code(c.command(b"\x16" + sql)) == 1295
    # a packet of the file out of order: MySQL's error, and the connection closes
    assert c.command(b"\x03" + sql)[0] == 0xFB
    c.send_packet(b"3\tc\n", seq=7)
    assert error_code(c.read_packet()) == 1156
    assert c.closed_by_server()
    c.close()
    cur.execute("SELECT * FROM wlr_t ORDER BY id")
    assert cur.fetchall() == ((1, "a"), (2, "b"))
    conn.close()

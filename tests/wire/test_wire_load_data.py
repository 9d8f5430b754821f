"""LOAD DATA INFILE over the wire: the rows load, the affected-row count is MySQL's, a cached
query sees them, an error names the row; LOAD DATA LOCAL is refused with 1235 (the server does
not ask the client for the file yet)."""

from __future__ import annotations

import pymysql
import pytest

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
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(f"LOAD DATA LOCAL INFILE '{good}' INTO TABLE wl_t {opts}")
    assert info.value.args[0] == 1235
    conn.close()

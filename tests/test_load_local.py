"""Loads read in this process by Arrow, without Spark: CSV, Parquet, JSON lines, pandas and
Arrow tables. Hypothesis-generated rows (hostile text, NULLs, empty strings, DECIMALs, dates,
times with and without fractions) are written to each kind of source, loaded, and every stored
value is compared with the source; the CSV file is also loaded by MariaDB's LOAD DATA, whose
rows are the oracle. Then: bad rows left out and counted, tables created from the source,
duplicate keys, and a small file loaded by a process that never imports Spark."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py.errors import DataError, IntegrityError, ProgrammingError
from noria_py.loader import create_table_sql

DDL = (
    "CREATE TABLE items (id INT PRIMARY KEY, s VARCHAR(20), n INT, d DECIMAL(8,3), day DATE,"
    " at DATETIME(6))"
)
LOAD_DIALECT = (
    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY ''"
    " LINES TERMINATED BY '\\n' IGNORE 1 LINES"
)
COLUMNS = ["id", "s", "n", "d", "day", "at"]

TEXT = st.text(
    alphabet=st.sampled_from(list('ab ,"\n\r\\NUL\té😀日\u00a0')), max_size=20
) | st.sampled_from(["NULL", "", " ", '""', "\\N", "null"])
ROW = st.tuples(
    st.none() | TEXT,
    st.none() | st.integers(-(2**31), 2**31 - 1),
    st.none()
    | st.decimals(min_value=-99999, max_value=99999, places=3, allow_nan=False).map(
        lambda d: d.quantize(Decimal("0.001"))
    ),
    st.none() | st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)),
    st.none()
    | st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2037, 12, 31)).map(
        lambda t: t if t.microsecond % 2 else t.replace(microsecond=0)
    ),
)
ROWS = st.lists(ROW, max_size=12).map(lambda rs: [(i + 1, *r) for i, r in enumerate(rs)])


def csv_text(rows) -> str:
    """RFC 4180 with LOAD DATA's NULL: text always quoted, NULL the bare word."""

    def field(v):
        if v is None:
            return "NULL"
        if isinstance(v, str):
            return '"' + v.replace('"', '""') + '"'
        if isinstance(v, dt.datetime):
            return v.isoformat(" ")
        if isinstance(v, Decimal):
            return format(v, "f")
        return str(v)

    lines = [",".join(COLUMNS)] + [",".join(field(v) for v in r) for r in rows]
    return "\n".join(lines) + "\n"


def arrow_table(rows) -> pa.Table:
    cols = list(zip(*rows)) if rows else [[] for _ in COLUMNS]
    return pa.table(
        {
            "id": pa.array(cols[0], pa.int32()),
            "s": pa.array(cols[1], pa.string()),
            "n": pa.array(cols[2], pa.int64()),
            "d": pa.array(cols[3], pa.decimal128(8, 3)),
            "day": pa.array(cols[4], pa.date32()),
            "at": pa.array(cols[5], pa.timestamp("us")),
        }
    )


def json_lines(rows) -> str:
    def value(v):
        if isinstance(v, Decimal):
            return float(v)
        if isinstance(v, dt.datetime):
            return v.isoformat(" ")
        if isinstance(v, dt.date):
            return v.isoformat()
        return v

    return "".join(json.dumps(dict(zip(COLUMNS, map(value, r)))) + "\n" for r in rows)


def loaded(source, ddl: str = DDL, **kw):
    conn = noria_py.connect()
    conn.execute(ddl)
    n = conn.backfill("items", source, progress=False, **kw)
    return n, conn.execute("SELECT * FROM items ORDER BY id").fetchall()


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    yield conn
    conn.close()


def mariadb_rows(oracle, path: str) -> list[tuple]:
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS items")
        cur.execute(DDL)
        cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE items {LOAD_DIALECT}")
        cur.execute("SELECT * FROM items ORDER BY id")
        return list(cur.fetchall())


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("loads")
    os.chmod(d, 0o755)  # the oracle's server reads the CSV files too
    return d


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ROWS)
def test_every_source_stores_every_value_and_csv_as_mariadb_loads_it(oracle, shared_dir, rows):
    path = shared_dir / "items.csv"
    path.write_text(csv_text(rows), encoding="utf-8", newline="")
    os.chmod(path, 0o644)
    want = [tuple(r) for r in rows]
    n, from_csv = loaded(str(path))
    assert n == len(rows)
    assert from_csv == want
    assert from_csv == mariadb_rows(oracle, str(path))
    table = arrow_table(rows)
    pq.write_table(table, shared_dir / "items.parquet")
    assert loaded(str(shared_dir / "items.parquet"))[1] == want
    (shared_dir / "items.jsonl").write_text(json_lines(rows), encoding="utf-8")
    if rows:  # an empty JSON file has no columns
        assert loaded(str(shared_dir / "items.jsonl"))[1] == want
    assert loaded(table)[1] == want
    frame = table.to_pandas()
    assert loaded(frame)[1] == want


def test_bad_rows_are_left_out_and_counted_when_asked(tmp_path):
    body = (
        "id,s,n,d,day,at\n"
        "1,a,1,1.5,2024-01-01,2024-01-01 10:00:00\n"
        "2,b,oops,1.5,2024-01-01,2024-01-01 10:00:00\n"  # a bad INT
        "3,c,3\n"  # too few fields
        "4,d,4,123456.5,2024-01-01,2024-01-01 10:00:00\n"  # DECIMAL(8,3) overflows
        "\n"  # a blank line: one empty field
        "5,e,5,2.25,2024-02-30,2024-01-01 10:00:00\n"  # no such date
        "6,f,6,3,2024-01-06,2024-01-06 06:06:06.5\n"
    )
    path = tmp_path / "bad.csv"
    path.write_text(body, encoding="utf-8")
    # a file's shape first: its malformed records are listed, not yet its values
    with pytest.raises(DataError) as info:
        loaded(str(path))
    msg = str(info.value)
    assert msg.startswith("2 bad row(s)") and "nothing was loaded" in msg
    assert "row 3: '3,c,3' is malformed" in msg and "row 5: is a blank line" in msg
    shaped = tmp_path / "shaped.csv"
    good_shape = body.replace("3,c,3\n", "3,c,3,1,2024-01-03,2024-01-03 00:00:00\n")
    shaped.write_text(good_shape.replace("\n\n", "\n"))
    with pytest.raises(DataError) as info:
        loaded(str(shaped))
    msg = str(info.value)
    assert msg.startswith("3 bad row(s)"), msg
    for expected in (
        "row 2: column 'n' value 'oops' cannot be converted to INT",
        "row 4: column 'd' value '123456.5' out of range for DECIMAL",
        "row 5: column 'day' value '2024-02-30' cannot be converted to DATE",
    ):
        assert expected in msg, msg
    n, got = loaded(str(path), skip_bad_rows=True)
    assert n == 2 and n.skipped == 5
    assert [r[0] for r in got] == [1, 6]
    assert got[1][5] == dt.datetime(2024, 1, 6, 6, 6, 6, 500000)
    assert any("row 3" in p for p in n.problems)


def test_a_parquet_source_names_the_row_of_a_bad_value(tmp_path):
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "n": pa.array([1, 2**40, 3])})
    pq.write_table(table, tmp_path / "t.parquet")
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
    with pytest.raises(DataError, match=r"row 2: column 'n' value '1099511627776' out of range"):
        conn.backfill("t", str(tmp_path / "t.parquet"), progress=False)
    assert conn.execute("SELECT COUNT(*) FROM t").fetchall() == [(0,)]


def test_pandas_nan_is_null_and_a_not_null_column_refuses_it():
    import pandas as pd

    frame = pd.DataFrame({"id": [1, 2], "n": [1.0, float("nan")], "s": ["x", None]})
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT, s VARCHAR(5))")
    assert conn.backfill("t", frame, progress=False) == 2
    assert conn.execute("SELECT * FROM t ORDER BY id").fetchall() == [(1, 1, "x"), (2, None, None)]
    conn.execute("CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(5) NOT NULL)")
    with pytest.raises(IntegrityError, match="(?s)Column 's' cannot be null.*row 2"):
        conn.backfill("u", frame[["id", "s"]], progress=False)


def test_duplicate_keys_in_the_source_and_in_the_table(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,n\n1,1\n2,2\n1,3\n")
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
    with pytest.raises(IntegrityError, match=r"PRIMARY.*'1' \(2 times\).*nothing was loaded"):
        conn.backfill("t", str(path), progress=False)
    assert conn.backfill("t", str(path), progress=False, on_duplicate="ignore") == 2
    assert conn.backfill("t", str(path), progress=False, on_duplicate="ignore") == 0
    assert conn.execute("SELECT * FROM t ORDER BY id").fetchall() == [(1, 1), (2, 2)]
    assert conn.backfill("t", str(path), progress=False, on_duplicate="replace") == 3
    assert conn.execute("SELECT * FROM t ORDER BY id").fetchall() == [(1, 3), (2, 2)]
    # text keys compare under the collation: 'a' and 'A ' are one key to MySQL
    conn.execute("CREATE TABLE k (s VARCHAR(5) PRIMARY KEY)")
    (tmp_path / "k.csv").write_text('s\na\n"A "\n')
    with pytest.raises(IntegrityError, match=r"PRIMARY.*\(2 times\)"):
        conn.backfill("k", str(tmp_path / "k.csv"), progress=False)


def test_create_types_the_table_from_the_source(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(
        "id,big,price,ratio,name,note,day,at,at6\n"
        f"1,{2**40},1.50,1e3,ab,{'x' * 300},2024-01-01,2024-01-01 10:00:00,2024-01-01 10:00:00.25\n"
        "2,3,-12.125,2.5,NULL,y,2024-01-02,2024-01-02 00:00:00,2024-01-02 00:00:00\n"
    )
    conn = noria_py.connect()
    n = conn.backfill("c", str(path), progress=False, create=True, primary_key=["id"])
    assert n == 2
    create = conn.execute("SHOW CREATE TABLE c").fetchall()[0][1]
    for expected in (
        "`id` int NOT NULL",
        "`big` bigint",
        "`price` decimal(5,3)",
        "`ratio` double",
        "`name` varchar(255)",
        "`note` text",
        "`day` date",
        "`at` datetime DEFAULT",
        "PRIMARY KEY (`id`)",
    ):
        assert expected in create, create
    # a fraction of a second asks for DATETIME(6) (SHOW CREATE TABLE does not show it yet)
    statement = create_table_sql("c2", str(path))
    assert "`at` DATETIME,\n" in statement and "`at6` DATETIME(6)" in statement
    assert conn.execute("SELECT id, big, price, name, at6 FROM c ORDER BY id").fetchall() == [
        (1, 2**40, Decimal("1.500"), "ab", dt.datetime(2024, 1, 1, 10, 0, 0, 250000)),
        (2, 3, Decimal("-12.125"), None, dt.datetime(2024, 1, 2)),
    ]
    with pytest.raises(ProgrammingError, match="already exists"):
        conn.backfill("c", str(path), progress=False, create=True)
    table = pa.table(
        {
            "k": pa.array([1], pa.int16()),
            "u": pa.array([7], pa.uint32()),
            "f": pa.array([0.5], pa.float32()),
        }
    )
    conn.backfill("p", table, progress=False, create=True)
    create = conn.execute("SHOW CREATE TABLE p").fetchall()[0][1]
    assert "`k` smallint" in create and "`u` int unsigned" in create and "`f` float" in create


def test_a_small_file_loads_without_starting_spark(tmp_path):
    """Neither Spark nor pandas (which pyarrow imports for NumPy conversions: 0.3 s) is
    started for a few rows."""
    path = tmp_path / "s.csv"
    path.write_text("id,n\n1,1\n2,2\n3,3\n4,4\n5,5\n")
    script = (
        "import sys, noria_py\n"
        "c = noria_py.connect()\n"
        "c.execute('CREATE TABLE t (id INT PRIMARY KEY, n INT)')\n"
        f"assert c.backfill('t', {str(path)!r}, progress=False) == 5\n"
        "assert c.execute('SELECT SUM(n) FROM t').fetchall()[0][0] == 15\n"
        "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules\n"
        "assert 'pandas' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_options_spark_alone_reads_are_refused_clearly(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("id\n1\n")
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    with pytest.raises(ProgrammingError, match="via='spark'"):
        conn.backfill("t", str(path), progress=False, options={"mode": "PERMISSIVE"})
    with pytest.raises(ProgrammingError, match="via"):
        conn.backfill("t", str(path), progress=False, via="somewhere")


@pytest.mark.spark
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ROWS)
def test_spark_reads_every_source_as_arrow_does(shared_dir, rows):
    from noria_py.spark.session import get_session

    spark = get_session("local[2]")  # the tests' one session
    want = [tuple(r) for r in rows]
    table = arrow_table(rows)
    pq.write_table(table, shared_dir / "spark.parquet")
    assert loaded(str(shared_dir / "spark.parquet"), via="spark")[1] == want
    if rows:
        frame = spark.createDataFrame(table.to_pandas())
        assert loaded(frame)[1] == want
    path = shared_dir / "spark.csv"
    path.write_text(csv_text(rows), encoding="utf-8", newline="")
    if any(r[1] == "NULL" for r in rows):
        # Spark's reader cannot tell "NULL" from NULL: refused rather than guessed
        with pytest.raises(DataError, match="null-value"):
            loaded(str(path), via="spark")
    else:
        assert loaded(str(path), via="spark")[1] == want


def test_fractions_of_a_second_round_to_the_column_as_mysql_stores_them(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text(
        "id,at,at2,t\n"
        "1,2020-01-01 05:06:07.5,2020-01-01 05:06:07.125,10:00:00.25\n"
        "2,2020-01-01T05:06:07.5-01:30,2020-12-31 23:59:59.999,-00:00:00.05\n"
    )
    ddl = "CREATE TABLE items (id INT PRIMARY KEY, at DATETIME, at2 DATETIME(2), t TIME(1))"
    want = [
        (1, dt.datetime(2020, 1, 1, 5, 6, 8), dt.datetime(2020, 1, 1, 5, 6, 7, 130000), None),
        (2, dt.datetime(2020, 1, 1, 6, 36, 8), dt.datetime(2021, 1, 1), None),
    ]
    want[0] = (*want[0][:3], dt.timedelta(hours=10, microseconds=300000))
    want[1] = (*want[1][:3], -dt.timedelta(microseconds=100000))
    assert loaded(str(path), ddl=ddl)[1] == want
    table = pa.table(
        {
            "id": pa.array([1], pa.int32()),
            "at": pa.array([dt.datetime(2020, 1, 1, 5, 6, 7, 500000)], pa.timestamp("us")),
        }
    )
    assert loaded(table, ddl=ddl)[1] == [(1, dt.datetime(2020, 1, 1, 5, 6, 8), None, None)]

"""CSV loads change no value silently: RFC 4180 quoting, malformed rows, header names, bad
values with and without validation, empty strings and NULL, UTC offsets. Where MySQL's rules
decide, the stored rows are compared with what MariaDB's LOAD DATA stores for the same file
(the oracle runs on this machine and reads the file itself)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import noria_py
from noria_py.errors import DataError, IntegrityError

pytestmark = pytest.mark.spark

DDL = "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT, day DATE)"
# What a CSV file is to MySQL's LOAD DATA, in the reader's default dialect.
LOAD_DIALECT = (
    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY ''"
    " LINES TERMINATED BY '\\n' IGNORE 1 LINES"
)


def write(tmp_path, body: str, name: str = "items.csv") -> str:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8", newline="")
    os.chmod(tmp_path, 0o755)
    os.chmod(path, 0o644)  # the oracle's server reads it too
    return str(path)


# Every test runs on both readers: Arrow in this process, and Spark.
VIA = "local"


@pytest.fixture(params=["local", "spark"], autouse=True)
def via(request):
    global VIA
    VIA = request.param
    if VIA == "spark":
        request.getfixturevalue("spark")
    yield VIA
    VIA = "local"


def load(body_or_path: str, tmp_path, ddl: str = DDL, **kw):
    """(connection, rows stored) after a backfill of ``items``."""
    path = body_or_path if os.path.exists(body_or_path) else write(tmp_path, body_or_path)
    conn = noria_py.connect()
    conn.execute(ddl)
    conn.backfill("items", path, progress=False, via=VIA, **kw)
    return conn, conn.execute("SELECT * FROM items ORDER BY id").fetchall()


def refused(body: str, tmp_path, error=DataError, ddl: str = DDL, **kw) -> str:
    """The message of the error a backfill of ``body`` gives; nothing may have been stored."""
    path = write(tmp_path, body)
    conn = noria_py.connect()
    conn.execute(ddl)
    with pytest.raises(error) as info:
        conn.backfill("items", path, progress=False, via=VIA, **kw)
    assert conn.execute("SELECT COUNT(*) FROM items").fetchall() == [(0,)]
    return str(info.value)


@pytest.fixture(scope="module")
def oracle(mariadb_oracle):
    conn = mariadb_oracle.connect()
    yield conn
    conn.close()


def mariadb_rows(oracle, path: str, ddl: str = DDL) -> list[tuple]:
    with oracle.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS items")
        cur.execute(ddl)
        cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE items {LOAD_DIALECT}")
        cur.execute("SELECT * FROM items ORDER BY id")
        return list(cur.fetchall())


# --- RFC 4180 --------------------------------------------------------------------------------


HOSTILE = [
    'with "quote" 7',
    '""',
    "a,b",
    "two\nlines",
    "crlf\r\ninside",
    "emoji 😀 and 日本語",
    " padded ",
    "back\\slash \\N",
    "",
    "NULL-ish",
]


def test_a_file_written_by_python_csv_loads_exactly_and_as_mariadb_loads_it(oracle, tmp_path):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "name", "qty", "day"])
    rows = [(i, s, i * 3, dt.date(2024, 1, 1 + i)) for i, s in enumerate(HOSTILE)]
    for r in rows:
        w.writerow(r)
    path = write(tmp_path, out.getvalue())
    _conn, got = load(path, tmp_path)
    assert got == rows
    assert got == mariadb_rows(oracle, path)


def test_empty_fields_and_null_as_mysql_load_data_reads_them(oracle, tmp_path):
    body = (
        "id,name,qty,day\n"
        "1,,1,2024-01-01\n"  # unquoted empty: ''
        '2,"",2,2024-01-01\n'  # quoted empty: ''
        "3,NULL,NULL,NULL\n"  # unquoted NULL: NULL
        "4,\\N,4,2024-01-01\n"  # no escape character: the text \N
        "5, ,5,2024-01-01\n"
    )
    path = write(tmp_path, body)
    _conn, got = load(path, tmp_path)
    assert got == [
        (1, "", 1, dt.date(2024, 1, 1)),
        (2, "", 2, dt.date(2024, 1, 1)),
        (3, None, None, None),
        (4, "\\N", 4, dt.date(2024, 1, 1)),
        (5, " ", 5, dt.date(2024, 1, 1)),
    ]
    assert got == mariadb_rows(oracle, path)


def test_the_word_null_in_quotes_is_text_or_refused_unless_null_is_named(oracle, tmp_path, via):
    # LOAD DATA reads "NULL" as text and NULL as NULL. Arrow tells them apart; Spark's reader
    # cannot, so there a file with "NULL" in it is refused rather than loaded with a guess.
    body = 'id,name,qty,day\n1,"NULL",1,\\N\n2,NULL,\\N,2024-01-01\n'
    quoted = 'id,name,qty,day\n1,"NULL",1,2024-01-01\n2,NULL,2,2024-01-01\n'
    if via == "spark":
        for text in (body, quoted):
            assert "--null-value" in refused(text, tmp_path)
    else:
        path = write(tmp_path, quoted, "both.csv")
        _conn, got = load(path, tmp_path)
        assert got == [(1, "NULL", 1, dt.date(2024, 1, 1)), (2, None, 2, dt.date(2024, 1, 1))]
        assert got == mariadb_rows(oracle, path)
    # With a NULL marker of one's own, the word NULL is text, quoted or not.
    path = write(tmp_path, body, "m.csv")
    _conn, got = load(path, tmp_path, options={"nullValue": "\\N"})
    assert got == [(1, "NULL", 1, None), (2, "NULL", None, dt.date(2024, 1, 1))]
    path = write(tmp_path, 'id,name,qty,day\n1,"NULL",1,2024-01-01\n', "q.csv")
    _conn, got = load(path, tmp_path, options={"nullValue": "\\N"})
    assert got == [(1, "NULL", 1, dt.date(2024, 1, 1))] == mariadb_rows(oracle, path)


def test_an_empty_field_for_a_number_or_date_is_an_error_as_in_mysql(oracle, tmp_path):
    body = "id,name,qty,day\n1,a,,2024-01-01\n2,b,2,\n"
    path = write(tmp_path, body)
    with pytest.raises(Exception) as theirs:
        mariadb_rows(oracle, path)
    assert theirs.value.args[0] == 1366  # Incorrect integer value: ''
    msg = refused(body, tmp_path)
    assert "row 1: column 'qty' value '' cannot be converted to INT" in msg
    assert "row 2: column 'day' value '' cannot be converted to DATE" in msg
    # --null-value '': an unquoted empty field is NULL, a quoted one stays ''.
    path = write(tmp_path, 'id,name,qty,day\n1,,,\n2,"",2,2024-01-02\n', "e.csv")
    _conn, got = load(path, tmp_path, options={"nullValue": ""})
    assert got == [(1, None, None, None), (2, "", 2, dt.date(2024, 1, 2))]


def test_parquet_and_csv_agree_on_empty_strings(tmp_path):
    table = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "name": ["", None],
            "qty": pa.array([1, 2], pa.int32()),
            "day": [dt.date(2024, 1, 1)] * 2,
        }
    )
    pq.write_table(table, tmp_path / "items.parquet")
    _c, from_parquet = load(str(tmp_path / "items.parquet"), tmp_path)
    _c, from_csv = load("id,name,qty,day\n1,,1,2024-01-01\n2,NULL,2,2024-01-01\n", tmp_path)
    assert (
        from_parquet
        == from_csv
        == [(1, "", 1, dt.date(2024, 1, 1)), (2, None, 2, dt.date(2024, 1, 1))]
    )


# --- malformed rows and headers --------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("1,a,1,2024-01-01\n2,short\n3,c,3,2024-01-03\n", "row 2: '2,short' is malformed"),
        ("1,a,1,2024-01-01\n\n3,c,3,2024-01-03\n", "row 2: "),
        ("1,a,1,2024-01-01\n3,c,3,2024-01-03\n\n", "row 3: "),
        (
            "1,a,1,2024-01-01\n2,b,2,2024-01-02,extra\n",
            "row 2: '2,b,2,2024-01-02,extra' is malformed",
        ),
        ('1,a,1,2024-01-01\n2,"open,2,2024-01-02\n3,c,3,2024-01-03\n', "row 2: "),
        ('1,a,1,2024-01-01\n2,b,2,"2024-01-02\n', "row 2: an unterminated quote"),
        ('1,a,1,2024-01-01\n2,b,2,"2024-01-02', "row 2: an unterminated quote"),
    ],
)
def test_a_malformed_row_is_an_error_naming_its_number(tmp_path, body, expected):
    msg = refused("id,name,qty,day\n" + body, tmp_path)
    assert expected in msg
    assert "nothing was loaded" in msg


def test_several_malformed_rows_are_listed_in_one_error(tmp_path):
    body = "id,name,qty,day\n" + "".join(
        f"{i},n,{i}\n" if i % 3 == 0 else f"{i},n,{i},2024-01-01\n" for i in range(1, 40)
    )
    msg = refused(body, tmp_path)
    assert msg.startswith("13 bad row(s)")
    assert "row 3: '3,n,3' is malformed" in msg and "row 30: " in msg
    assert "row 33: " not in msg and "(and 3 more)" in msg


def test_a_quoted_field_ending_the_file_is_not_mistaken_for_an_open_quote(tmp_path):
    for tail in ('"2024-01-02"', '"2024-01-02"\n'):
        _c, got = load(f"id,name,qty,day\n2,b,2,{tail}", tmp_path)
        assert got == [(2, "b", 2, dt.date(2024, 1, 2))]
    _c, got = load('id,name,qty,day\n2,b,2,2024-01-02\n3,"",3,2024-01-03', tmp_path)
    assert got[1] == (3, "", 3, dt.date(2024, 1, 3))


def test_a_header_name_the_table_lacks_is_an_error_naming_both(tmp_path):
    msg = refused("id,name,qtty,day\n1,a,5,2024-01-01\n", tmp_path)
    assert "'qtty'" in msg and "'qtty' for 'qty'" in msg and "missing from the source: qty" in msg
    _c, got = load("id,name,qtty,day\n1,a,5,2024-01-01\n", tmp_path, ignore_columns=["qtty"])
    assert got == [(1, "a", None, dt.date(2024, 1, 1))]


# --- values that do not fit ------------------------------------------------------------------

BAD = (
    "id,name,qty,day,price\n"
    "1,a,1,2024-01-01,1.50\n"
    "2,b,oops,2024-01-02,2.00\n"
    "3,c,3,2020-13-45,3.00\n"
    "4,d,4,2024-01-04,123456.78\n"
)
BAD_DDL = (
    "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT, day DATE,"
    " price DECIMAL(6,2))"
)


@pytest.mark.parametrize("validate", [True, False])
def test_values_that_do_not_fit_are_errors_naming_row_column_and_value(tmp_path, validate):
    msg = refused(BAD, tmp_path, ddl=BAD_DDL, validate=validate, batch_rows=10)
    assert msg.startswith("3 bad row(s)"), msg
    assert "row 2: column 'qty' value 'oops' cannot be converted to INT" in msg
    assert "row 3: column 'day' value '2020-13-45' cannot be converted to DATE" in msg
    # Arrow's reader says why (MySQL: "Out of range value"), Spark's cast only that it failed
    shown = "row 4: column 'price' value '123456.78' "
    assert f"{shown}out of range for DECIMAL" in msg or f"{shown}cannot be converted" in msg


def test_without_validation_a_bad_row_stops_the_load_at_its_batch(tmp_path):
    body = "id,name,qty,day\n" + "".join(f"{i},n,{i},2024-01-01\n" for i in range(1, 6))
    body += "6,n,oops,2024-01-01\n"
    path = write(tmp_path, body)
    conn = noria_py.connect()
    conn.execute(DDL)
    with pytest.raises(DataError, match=r"(?s)after 5 rows.*row 6: column 'qty' value 'oops'"):
        conn.backfill("items", path, progress=False, validate=False, batch_rows=5, via=VIA)
    assert conn.execute("SELECT COUNT(*) FROM items").fetchall() == [(5,)]


def test_null_in_a_not_null_column_names_the_row(tmp_path):
    ddl = "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)"
    msg = refused("id,name\n1,a\n2,NULL\n", tmp_path, IntegrityError, ddl=ddl)
    assert "Column 'name' cannot be null" in msg and "row 2: column 'name' value NULL" in msg


# --- time zones ------------------------------------------------------------------------------


def test_a_utc_offset_is_converted_as_the_parquet_path_converts_an_instant(tmp_path):
    ddl = "CREATE TABLE items (id INT PRIMARY KEY, at DATETIME(6))"
    body = (
        "id,at\n1,2020-01-01 05:06:07+02:00\n2,2020-01-01 05:06:07Z\n"
        "3,2020-01-01 05:06:07\n4,2020-01-01T05:06:07.5-01:30\n"
    )
    _c, from_csv = load(body, tmp_path, ddl=ddl)
    assert from_csv == [
        (1, dt.datetime(2020, 1, 1, 3, 6, 7)),
        (2, dt.datetime(2020, 1, 1, 5, 6, 7)),
        (3, dt.datetime(2020, 1, 1, 5, 6, 7)),
        (4, dt.datetime(2020, 1, 1, 6, 36, 7, 500000)),
    ]
    plus2 = dt.timezone(dt.timedelta(hours=2))
    stamp = pa.array([dt.datetime(2020, 1, 1, 5, 6, 7, tzinfo=plus2)], pa.timestamp("us", "+02:00"))
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "at": stamp}), tmp_path / "t.parquet")
    _c, from_parquet = load(str(tmp_path / "t.parquet"), tmp_path, ddl=ddl)
    assert from_parquet == from_csv[:1]

"""Backfill through Spark: sources, casting, errors, duplicates, views, interleaved writes."""

from __future__ import annotations

import datetime as dt
import os
import random
import sys
from collections import Counter
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

import noria_py
import noria_py.dbapi
from noria_py.errors import DataError, IntegrityError, OperationalError, ProgrammingError
from noria_py.spark import session as spark_session

from .data import (
    COUNT_VIEW,
    SUM_VIEW,
    assert_matches_sqlite,
    sqlite_votes,
    vote_rows,
    votes_arrow,
)

pytestmark = pytest.mark.spark


@pytest.fixture(params=["local", "spark"])
def reader(request, monkeypatch):
    """Runs a test on both readers: a file read by Arrow in this process (the default) or by
    Spark; a Spark DataFrame loaded as the pandas DataFrame it holds (Arrow) or as itself."""
    original = noria_py.dbapi.Connection.backfill

    def backfill(self, table, source, **kw):
        if request.param == "local" and hasattr(source, "toPandas"):
            source = source.toPandas()
        elif request.param == "spark" and isinstance(source, (str, os.PathLike)):
            kw.setdefault("via", "spark")
        return original(self, table, source, **kw)

    monkeypatch.setattr(noria_py.dbapi.Connection, "backfill", backfill)
    return request.param


def table_rows(conn, sql: str = "SELECT user_id, story_id, vote FROM votes") -> list[tuple]:
    return sorted(conn.execute(sql).fetchall())


# --- sources ---------------------------------------------------------------------------------


def test_parquet_file_loads_every_row_in_bounded_batches(reader, spark, conn, tmp_path):
    rows = vote_rows(1000)
    path = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), path, row_group_size=256)
    sizes = []
    loaded = conn.backfill(
        "votes",
        str(path),
        batch_rows=300,
        progress=False,
        on_batch=lambda batch, so_far: sizes.append((batch.num_rows, so_far)),
    )
    assert loaded == 1000
    assert table_rows(conn) == sorted(rows)
    assert all(0 < n <= 300 for n, _ in sizes) and len(sizes) >= 4
    assert sum(n for n, _ in sizes) == 1000
    assert [so_far for _, so_far in sizes] == sorted(so_far for _, so_far in sizes)


def test_partitioned_parquet_directory(reader, spark, conn, tmp_path):
    rows = vote_rows(600, stories=6)
    root = tmp_path / "votes"
    pq.write_to_dataset(votes_arrow(rows), root, partition_cols=["story_id"])
    assert any(p.name.startswith("story_id=") for p in root.iterdir())
    assert conn.backfill("votes", str(root), progress=False) == 600
    assert table_rows(conn) == sorted(rows)


def test_csv_with_header_casts_text_to_column_types(reader, spark, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "id,name,price,added,seen,note\n"
        "1,apple,1.25,2024-01-31,2024-02-01 10:20:30,first\n"
        "2,pear, 3.505 ,2023-12-01,2024-02-02 00:00:00,\n"
        " 3 ,plum,0,2020-02-29,2024-02-03 23:59:59.5,last\n"
    )
    conn = noria_py.connect()
    conn.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10) NOT NULL, price DECIMAL(8,2),"
        " added DATE, seen DATETIME, note TEXT)"
    )
    assert conn.backfill("items", str(path), progress=False) == 3
    assert conn.execute("SELECT * FROM items ORDER BY id").fetchall() == [
        (
            1,
            "apple",
            Decimal("1.25"),
            dt.date(2024, 1, 31),
            dt.datetime(2024, 2, 1, 10, 20, 30),
            "first",
        ),
        (2, "pear", Decimal("3.51"), dt.date(2023, 12, 1), dt.datetime(2024, 2, 2), ""),
        (
            3,
            "plum",
            Decimal("0.00"),
            dt.date(2020, 2, 29),
            dt.datetime(2024, 2, 4, 0, 0, 0),  # DATETIME keeps no fraction: MySQL 8 rounds
            "last",
        ),
    ]


def test_dataframe_source_matches_names_case_insensitively_and_rounds(spark):
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("ID", T.StringType()),
            T.StructField("Score", T.DoubleType()),
            T.StructField("amount", T.DoubleType()),
            T.StructField("at", T.TimestampType()),
            T.StructField("flag", T.BooleanType()),
            T.StructField("extra", T.StringType()),
        ]
    )
    when = dt.datetime(2024, 5, 6, 7, 8, 9)
    df = spark.createDataFrame(
        [
            ("10", 2.5, 1.005, when, True, "a"),
            ("11", -2.5, 2.0, when, False, "b"),
            ("12", 2.4, None, None, None, "c"),
        ],
        schema,
    )
    conn = noria_py.connect()
    conn.execute(
        "CREATE TABLE t (id BIGINT PRIMARY KEY, score INT, amount DECIMAL(6,2), at DATETIME,"
        " flag BOOLEAN, missing VARCHAR(5) DEFAULT 'dflt')"
    )
    assert conn.backfill("t", df, progress=False, ignore_columns=["extra"]) == 3
    assert conn.execute("SELECT * FROM t ORDER BY id").fetchall() == [
        (10, 3, Decimal("1.01"), when, 1, "dflt"),
        (11, -3, Decimal("2.00"), when, 0, "dflt"),
        (12, 2, None, None, None, "dflt"),
    ]


def test_create_types_a_dataframes_columns_from_its_spark_schema(spark):
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("small", T.ShortType()),
            T.StructField("price", T.DecimalType(12, 3)),
            T.StructField("ratio", T.FloatType()),
            T.StructField("name", T.StringType()),
            T.StructField("note", T.StringType()),
            T.StructField("day", T.DateType()),
            T.StructField("at", T.TimestampNTZType()),
            T.StructField("at6", T.TimestampNTZType()),
        ]
    )
    when = dt.datetime(2024, 5, 6, 7, 8, 9)
    rows = [
        (1, 2, Decimal("1.500"), 0.5, "a", "x" * 300, dt.date(2024, 1, 2), when, when),
        (2, None, None, None, None, None, None, None, when.replace(microsecond=5)),
    ]
    conn = noria_py.connect()
    n = conn.backfill(
        "t", spark.createDataFrame(rows, schema), progress=False, create=True, primary_key=["id"]
    )
    assert n == 2
    created = conn.execute("SHOW CREATE TABLE t").fetchall()[0][1].lower()
    for part in (
        "`id` bigint not null", "`small` smallint", "`price` decimal(12,3)", "`ratio` float",
        "`name` varchar(255)", "`note` text", "`day` date", "`at` datetime default",
        "`at6` datetime(6)", "primary key (`id`)",
    ):  # fmt: skip
        assert part in created, created
    assert conn.execute("SELECT id, price, note, at6 FROM t ORDER BY id").fetchall() == [
        (1, Decimal("1.500"), "x" * 300, when),
        (2, None, None, when.replace(microsecond=5)),
    ]


def test_jdbc_source_through_the_bundled_derby_driver(spark, conn):
    rows = vote_rows(300)
    url = f"jdbc:derby:memory:noria_votes_{random.randrange(10**9)};create=true"
    spark.createDataFrame(votes_arrow(rows).to_pandas()).write.jdbc(url, "votes_src")
    assert conn.backfill("votes", url, options={"dbtable": "votes_src"}, progress=False) == 300
    assert table_rows(conn) == sorted(rows)


def test_jdbc_url_without_a_driver_is_a_clear_error(spark, conn, tmp_path):
    url = f"jdbc:sqlite:{tmp_path / 'source.db'}"
    with pytest.raises(OperationalError, match="(?i)no JDBC driver.*spark.jars"):
        conn.backfill("votes", url, options={"dbtable": "votes"}, progress=False)


def test_jdbc_needs_a_table(spark, conn):
    with pytest.raises(ProgrammingError, match="dbtable"):
        conn.backfill("votes", "jdbc:derby:memory:x", progress=False)


def test_missing_path_and_unknown_format(spark, conn, tmp_path):
    with pytest.raises(OperationalError, match="does not exist"):
        conn.backfill("votes", str(tmp_path / "nope.parquet"), progress=False)
    odd = tmp_path / "votes.data"
    odd.write_text("1,2,3\n")
    with pytest.raises(ProgrammingError, match="format"):
        conn.backfill("votes", str(odd), progress=False)


def test_unknown_table_fails_before_spark_reads(conn, tmp_path):
    with pytest.raises(ProgrammingError, match="doesn't exist"):
        conn.backfill("nope", str(tmp_path / "whatever.parquet"), progress=False)


def test_progress_shows_rows_and_rate(spark, conn, tmp_path, capsys):
    path = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(vote_rows(200)), path)
    conn.backfill("votes", str(path), progress=True)
    err = capsys.readouterr().err
    assert "200/200" in err and "rows/s" in err


# --- casting and its errors ------------------------------------------------------------------

ITEMS_DDL = (
    "CREATE TABLE items (id INT PRIMARY KEY, small TINYINT, code VARCHAR(5), price DECIMAL(4,2),"
    " day DATE, qty INT NOT NULL DEFAULT 1)"
)


def items_df(spark, **overrides):
    row = {"id": "1", "small": "5", "code": "ab", "price": "1.5", "day": "2024-01-02", "qty": "3"}
    bad = dict(row, id="2", **overrides)
    cols = list(row)
    return spark.createDataFrame([tuple(row[c] for c in cols), tuple(bad[c] for c in cols)], cols)


@pytest.mark.parametrize(
    ("column", "value", "error", "pattern"),
    [
        ("small", "abc", DataError, r"column 'small' value 'abc' cannot be converted to TINYINT"),
        ("small", "300", DataError, r"column 'small' value '300' out of range for TINYINT"),
        ("code", "toolong", DataError, r"column 'code' value 'toolong' longer than 5 characters"),
        (
            "price",
            "123.45",
            DataError,
            r"column 'price'.*(cannot be converted to|out of range for) DECIMAL",
        ),
        ("day", "2024-13-45", DataError, r"column 'day'.*cannot be converted to DATE"),
        ("qty", None, IntegrityError, r"Column 'qty' cannot be null"),
    ],
)
def test_bad_values_name_the_column_and_load_nothing(reader, spark, column, value, error, pattern):
    conn = noria_py.connect()
    conn.execute(ITEMS_DDL)
    with pytest.raises(error, match=pattern):
        conn.backfill("items", items_df(spark, **{column: value}), progress=False)
    assert conn.execute("SELECT COUNT(*) FROM items").fetchall() == [(0,)]


def test_a_type_spark_cannot_cast_names_the_column(spark):
    conn = noria_py.connect()
    conn.execute(ITEMS_DDL)
    df = spark.createDataFrame([(1, [1, 2])], "id int, small array<int>")
    with pytest.raises(DataError, match=r"column 'small'.*array<int>.*TINYINT"):
        conn.backfill("items", df, progress=False)


def test_unsigned_range_is_checked(reader, spark):
    conn = noria_py.connect()
    conn.execute("CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY, n INT UNSIGNED)")
    bad = spark.createDataFrame([("1", "2"), ("2", "-1")], "id string, n string")
    with pytest.raises(DataError, match=r"column 'n' value '-1' out of range for INT UNSIGNED"):
        conn.backfill("u", bad, progress=False)
    bad = spark.createDataFrame([(-5, 1)], "id long, n long")
    with pytest.raises(DataError, match=r"column 'id'.*out of range for BIGINT UNSIGNED"):
        conn.backfill("u", bad, progress=False)
    good = spark.createDataFrame([("42", "4294967295")], "id string, n string")
    assert conn.backfill("u", good, progress=False) == 1
    assert conn.execute("SELECT n FROM u").fetchall() == [(4294967295,)]


def test_missing_column_without_default_is_an_error(reader, spark, conn):
    df = spark.createDataFrame([(1, 2)], "user_id int, story_id int")
    with pytest.raises(DataError, match=r"column 'vote'.*missing from the source"):
        conn.backfill("votes", df, progress=False)


def test_missing_columns_with_defaults_or_null_are_filled(reader, spark):
    conn = noria_py.connect()
    conn.execute(ITEMS_DDL)
    df = spark.createDataFrame([(7,), (8,)], "id int")
    assert conn.backfill("items", df, progress=False) == 2
    assert conn.execute("SELECT * FROM items ORDER BY id").fetchall() == [
        (7, None, None, None, None, 1),
        (8, None, None, None, None, 1),
    ]


def test_without_validation_the_engine_still_rejects_bad_values(reader, spark):
    conn = noria_py.connect()
    conn.execute(ITEMS_DDL)
    with pytest.raises(DataError, match="small"):
        conn.backfill("items", items_df(spark, small="300"), progress=False, validate=False)


# --- duplicate keys --------------------------------------------------------------------------


def dup_df(spark):
    # One partition, so "first" and "last" are well defined.
    rows = [(1, 1, 1), (2, 1, 1), (1, 1, -1), (3, 2, 1)]
    return spark.createDataFrame(rows, "user_id int, story_id int, vote int").coalesce(1)


def test_duplicates_in_the_source_are_an_error_by_default(reader, spark, conn):
    with pytest.raises(IntegrityError, match=r"Duplicate entry.*PRIMARY.*'1-1' \(2 times\)"):
        conn.backfill("votes", dup_df(spark), progress=False)
    assert table_rows(conn) == []


@pytest.mark.parametrize(("mode", "winner"), [("ignore", 1), ("replace", -1)])
def test_duplicates_in_the_source_ignore_or_replace(reader, spark, conn, mode, winner):
    conn.execute(SUM_VIEW, (1,)).fetchall()
    conn.backfill("votes", dup_df(spark), on_duplicate=mode, progress=False)
    assert table_rows(conn) == [(1, 1, winner), (2, 1, 1), (3, 2, 1)]
    assert [tuple(map(int, r)) for r in conn.execute(SUM_VIEW, (1,)).fetchall()] == [
        (1, 2, 1 + winner)
    ]


def test_duplicates_of_rows_already_in_the_table(reader, spark, conn):
    conn.execute("INSERT INTO votes VALUES (1, 1, 1)")
    conn.execute(SUM_VIEW, (1,)).fetchall()
    df = spark.createDataFrame([(1, 1, -1), (4, 1, 1)], "user_id int, story_id int, vote int")
    with pytest.raises(IntegrityError, match=r"Duplicate entry.*stopped at batch 1 before loading"):
        conn.backfill("votes", df.coalesce(1), progress=False)
    assert table_rows(conn) == [(1, 1, 1)]
    conn.backfill("votes", df, on_duplicate="ignore", progress=False)
    assert table_rows(conn) == [(1, 1, 1), (4, 1, 1)]
    conn.backfill("votes", df, on_duplicate="replace", progress=False)
    assert table_rows(conn) == [(1, 1, -1), (4, 1, 1)]
    assert [tuple(map(int, r)) for r in conn.execute(SUM_VIEW, (1,)).fetchall()] == [(1, 2, 0)]


def test_duplicate_unique_keys_are_found_too(reader, spark):
    conn = noria_py.connect()
    conn.execute("CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(50) UNIQUE)")
    df = spark.createDataFrame(
        [(1, "a@x"), (2, "b@x"), (3, "a@x"), (4, None), (5, None)], "id int, email string"
    )
    with pytest.raises(IntegrityError, match=r"unique email.*'a@x' \(2 times\)"):
        conn.backfill("users", df, progress=False)


_CHECKED_DDL = (
    "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(3) NOT NULL, qty TINYINT,"
    " day DATE, UNIQUE (name))"
)
_CHECKED_SOURCES = {
    # bad values: two in one row, a NULL in a NOT NULL column, out of range, too long
    "values": "id,name,qty,day\n1,ab,1,2024-01-01\n2,abcd,300,x\n3,NULL,2,2024-01-03\n"
    "4,c,-129,2024-01-04\n5,d,5,2024-01-05\n",
    "nulls": "id,name,qty,day\n1,NULL,1,2024-01-01\n2,b,2,2024-01-02\n3,NULL,3,2024-01-03\n",
    "keys": "id,name,qty,day\n1,a,1,2024-01-01\n2,b,2,2024-01-02\n1,c,3,2024-01-03\n"
    "4,a,4,2024-01-04\n",
    "good": "id,name,qty,day\n1,a,1,2024-01-01\n2,b,NULL,NULL\n3,abc,-128,2024-01-03\n",
}


def _checked(source, **kw):
    """The error (type and text) of a load of ``items``, or the rows it stored."""
    conn = noria_py.connect()
    conn.execute(_CHECKED_DDL)
    try:
        conn.backfill("items", source, progress=False, via="spark", **kw)
    except noria_py.Error as e:
        return type(e).__name__, str(e)
    finally:
        rows = conn.execute("SELECT * FROM items ORDER BY id").fetchall()
        conn.close()
    return rows


@pytest.mark.parametrize("case", sorted(_CHECKED_SOURCES))
def test_a_csv_or_parquet_file_is_checked_while_read_as_the_separate_check_does(
    spark, tmp_path, monkeypatch, case
):
    """A validated CSV or Parquet load through Spark checks each row as it arrives (one pass,
    ``_check_while_reading``) and fails with what the separate checking pass (``_validate``)
    says, word for word (a CSV file's bad rows counted by row and named by row number), or
    stores the same rows."""
    import noria_py.spark.backfill as bf

    body = _CHECKED_SOURCES[case]
    csv_path = tmp_path / "items.csv"
    csv_path.write_text(body, encoding="utf-8")
    parquet_path = tmp_path / "items.parquet"
    lines = [[None if v == "NULL" else v for v in line.split(",")] for line in body.splitlines()]
    frame = {
        "id": [int(r[0]) for r in lines[1:]],
        "name": [r[1] for r in lines[1:]],
        "qty": [None if r[2] is None else int(r[2]) for r in lines[1:]],
        "day": [r[3] for r in lines[1:]],
    }
    import pyarrow as pa

    pq.write_table(pa.table(frame), parquet_path)
    one_pass = []
    real = bf._check_while_reading
    monkeypatch.setattr(bf, "_check_while_reading", lambda *a: one_pass.append(1) or real(*a))
    for path in (csv_path, parquet_path) if case in ("values", "keys") else (csv_path,):
        got = _checked(str(path))
        assert one_pass == [1]
        with monkeypatch.context() as m:
            m.setattr(bf, "ONE_PASS", False)
            want = _checked(str(path))
        assert one_pass == [1]
        if case == "good":
            assert got == want and len(got) == 3
        else:
            assert isinstance(got, tuple) and got == want
        if case == "values" and path == csv_path:  # rows, by number
            assert "3 bad row(s)" in got[1] and "row 2: column 'name' value 'abcd'" in got[1]
        one_pass.clear()


def test_bad_on_duplicate_value(conn):
    with pytest.raises(ProgrammingError, match="on_duplicate"):
        conn.backfill("votes", "x.parquet", on_duplicate="merge")


# --- views and interleaved writes ------------------------------------------------------------


def test_views_are_correct_after_the_backfill(reader, spark, conn, tmp_path):
    rows = vote_rows(2000, stories=50)
    path = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), path)
    # Read some keys first, so the partial view holds state the backfill must update.
    for s in (1, 2, 3):
        assert conn.execute(COUNT_VIEW, (s,)).fetchall() == []
    conn.execute("INSERT INTO votes VALUES (999999, 1, 1)")
    conn.backfill("votes", str(path), batch_rows=400, progress=False)
    counts = Counter(r[1] for r in rows)
    counts[1] += 1
    for s in range(1, 51):
        assert conn.execute(COUNT_VIEW, (s,)).fetchall() == [(s, counts[s])]
    db = sqlite_votes()
    db.executemany("INSERT INTO votes VALUES (?, ?, ?)", rows + [(999999, 1, 1)])
    assert_matches_sqlite(conn, db, range(1, 51))


@pytest.mark.parametrize("mode", ["ignore", "replace"])
def test_writes_between_batches_are_applied_exactly_once(reader, spark, conn, tmp_path, mode):
    rows = vote_rows(1500, stories=20, seed=3)
    path = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), path, row_group_size=100)
    stories = range(1, 21)
    db = sqlite_votes()
    verb = "INSERT OR IGNORE" if mode == "ignore" else "INSERT OR REPLACE"
    rng = random.Random(11)
    loaded: set[tuple[int, int]] = set()
    pending = {(u, s): v for u, s, v in rows}
    batches = []

    def write(sql: str, params: tuple) -> None:
        conn.execute(sql, params)
        db.execute(sql.replace("INSERT IGNORE", "INSERT OR IGNORE"), params)

    def between(batch, so_far):
        # Mirror the batch the engine just loaded, then write to both as an application would.
        got = list(zip(*(batch.column(c).to_pylist() for c in ("user_id", "story_id", "vote"))))
        db.executemany(f"{verb} INTO votes VALUES (?, ?, ?)", got)
        loaded.update((u, s) for u, s, _ in got)
        for key in [(u, s) for u, s, _ in got]:
            pending.pop(key, None)
        batches.append(so_far)
        for _ in range(5):
            new_user = 10_000 + rng.randrange(10_000)
            write("INSERT IGNORE INTO votes VALUES (?, ?, ?)", (new_user, rng.choice(stories), 1))
        u, s = rng.choice(sorted(loaded))
        write("DELETE FROM votes WHERE user_id = ? AND story_id = ?", (u, s))
        u, s = rng.choice(sorted(loaded))
        write("UPDATE votes SET vote = -vote WHERE user_id = ? AND story_id = ?", (u, s))
        if pending:
            # A key a later batch also holds: on_duplicate decides which row survives.
            u, s = rng.choice(sorted(pending))
            del pending[(u, s)]
            write("INSERT INTO votes VALUES (?, ?, ?)", (u, s, 5))
        for story in rng.sample(list(stories), 3):
            conn.execute(SUM_VIEW, (story,)).fetchall()  # fill partial state mid-backfill

    for s in (1, 2):
        conn.execute(SUM_VIEW, (s,)).fetchall()
    conn.backfill(
        "votes", str(path), on_duplicate=mode, batch_rows=120, progress=False, on_batch=between
    )
    assert len(batches) >= 10
    assert_matches_sqlite(conn, db, stories)


def test_a_write_conflicting_with_a_later_batch_stops_an_erroring_backfill(
    reader, spark, conn, tmp_path
):
    rows = vote_rows(600, stories=10, seed=5)
    path = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), path, row_group_size=100)
    db = sqlite_votes()
    seen: list[tuple] = []

    def between(batch, so_far):
        got = list(zip(*(batch.column(c).to_pylist() for c in ("user_id", "story_id", "vote"))))
        db.executemany("INSERT INTO votes VALUES (?, ?, ?)", got)
        seen.extend(got)
        if len(seen) == len(got):  # after the first batch, take a key of a later one
            later = next(r for r in rows if r not in seen)
            conn.execute("INSERT INTO votes VALUES (?, ?, ?)", later)
            db.execute("INSERT INTO votes VALUES (?, ?, ?)", later)

    with pytest.raises(IntegrityError, match=r"stopped at batch \d+ after loading \d+ rows"):
        conn.backfill("votes", str(path), batch_rows=50, progress=False, on_batch=between)
    assert 0 < len(seen) < 600
    assert_matches_sqlite(conn, db, range(1, 11))


# --- the session -----------------------------------------------------------------------------


def test_session_configuration(spark):
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert spark_session.get_session() is spark
    assert spark_session.current_master() == "local[2]"


def test_a_second_master_in_one_process_is_refused(spark):
    with pytest.raises(OperationalError, match="already running"):
        spark_session.get_session("spark://127.0.0.1:1")


def test_master_comes_from_argument_then_environment(monkeypatch):
    monkeypatch.delenv(spark_session.MASTER_ENV, raising=False)
    assert spark_session.resolve_master() == "local[*]"
    monkeypatch.setenv(spark_session.MASTER_ENV, "spark://127.0.0.1:7077")
    assert spark_session.resolve_master() == "spark://127.0.0.1:7077"
    assert spark_session.resolve_master("local[3]") == "local[3]"


def test_missing_pyspark_explains_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(ImportError, match=r"pip install noria_py\[spark\]"):
        spark_session.require_pyspark()


def test_a_float_column_holds_the_single_precision_value(reader, spark, tmp_path):
    """Loaded into a FLOAT column, a double is the nearest single-precision value (shown with
    6 digits, widened in arithmetic) on both readers, as an INSERT stores it."""
    import pyarrow as pa

    path = tmp_path / "f.parquet"
    table = pa.table({"id": [1, 2, 3], "f": [0.123456789, 16777217.0, None]})
    pq.write_table(table, path)
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, f FLOAT)")
    assert conn.backfill("t", str(path), progress=False) == 3
    assert table_rows(conn, "SELECT id, f, f + 0 FROM t") == [
        (1, 0.123457, 0.12345679104328156),
        (2, 16777200.0, 16777216.0),
        (3, None, None),
    ]


def test_bit_json_and_text_columns_keep_their_rules(reader, spark):
    """Text into a BIT column is its bytes ('1' is 49) on the local path and refused by Spark
    (which would cast it to 1); JSON is checked value by value locally and refused by Spark; a
    TINYTEXT holds 255 bytes on both paths."""
    conn = noria_py.connect()
    conn.execute("CREATE TABLE k (id INT PRIMARY KEY, b BIT(8), j JSON, t TINYTEXT)")
    bits = spark.createDataFrame([(1, "1")], "id int, b string")
    docs = spark.createDataFrame([(2, '{"a": 1}')], "id int, j string")
    if reader == "spark":
        for df, column in ((bits, "b"), (docs, "j")):
            with pytest.raises(noria_py.errors.NotSupportedError, match=f"column '{column}'"):
                conn.backfill("k", df, progress=False)
    else:
        assert conn.backfill("k", bits, progress=False) == 1
        assert conn.backfill("k", docs, progress=False) == 1
        assert conn.execute("SELECT id, b + 0, j FROM k ORDER BY id").fetchall() == [
            (1, 49, None),
            (2, None, '{"a": 1}'),
        ]
        bad = spark.createDataFrame([(3, "{bad")], "id int, j string")
        with pytest.raises(noria_py.errors.Error):
            conn.backfill("k", bad, progress=False)
    long = spark.createDataFrame([(4, "é" * 128)], "id int, t string")
    with pytest.raises(noria_py.errors.Error):
        conn.backfill("k", long, progress=False)
    fits = spark.createDataFrame([(5, "é" * 127)], "id int, t string")
    assert conn.backfill("k", fits, progress=False) == 1
    assert conn.execute("SELECT LENGTH(t) FROM k WHERE id = 5").fetchall() == [(254,)]

"""Bad input: each error has the PEP 249 class and MySQL error code a client expects, names the
problem, leaves the connection usable, and writes nothing (statements are atomic, and the views
reading a table see no trace of a failed write).
"""

from __future__ import annotations

import pytest

import noria_py
from noria_py import errors


@pytest.fixture
def conn():
    connection = noria_py.connect()
    connection.execute(
        "CREATE TABLE items ("
        " id INT NOT NULL PRIMARY KEY,"
        " sku VARCHAR(10) NOT NULL,"
        " qty INT NOT NULL DEFAULT 0,"
        " small TINYINT,"
        " note VARCHAR(20),"
        " UNIQUE KEY sku_unique (sku)"
        ")"
    )
    connection.execute("INSERT INTO items (id, sku, qty) VALUES (1, 'a', 10), (2, 'b', 20)")
    connection.execute(
        "CREATE VIEW item_totals AS SELECT COUNT(*) AS n, SUM(qty) AS total FROM items"
    )
    yield connection
    connection.close()


def snapshot(conn) -> dict:
    """Everything a client can see of ``items``: base rows, a CREATE VIEW and a parameterized
    view. Reading them also makes sure the views exist (and are filled) before a failing write."""
    cur = conn.cursor()
    rows = cur.execute("SELECT id, sku, qty, small, note FROM items ORDER BY id").fetchall()
    totals = cur.execute("SELECT n, total FROM item_totals").fetchall()
    by_id = {
        i: cur.execute("SELECT sku, qty FROM items WHERE id = ?", (i,)).fetchall()
        for i in (1, 2, 3, 4, 5)
    }
    by_sku = {
        s: cur.execute("SELECT id FROM items WHERE sku = ?", (s,)).fetchall()
        for s in ("a", "b", "c", "d")
    }
    return {"rows": rows, "totals": totals, "by_id": by_id, "by_sku": by_sku}


def assert_unchanged_and_usable(conn, before: dict) -> None:
    assert snapshot(conn) == before
    # The connection (and a fresh cursor on it) keeps working, writes included.
    cur = conn.cursor()
    cur.execute("INSERT INTO items (id, sku, qty) VALUES (99, 'zz', 1)")
    assert cur.rowcount == 1
    assert cur.execute("SELECT sku FROM items WHERE id = ?", (99,)).fetchall() == [("zz",)]
    total = before["totals"][0][1]
    assert cur.execute("SELECT n, total FROM item_totals").fetchall() == [
        (len(before["rows"]) + 1, total + 1)
    ]
    cur.execute("DELETE FROM items WHERE id = 99")
    assert snapshot(conn) == before


def check(conn, sql, params=(), *, exc, errno, mentions=(), sqlstate=None):
    """Run a statement that must fail; check the error; check nothing changed."""
    before = snapshot(conn)
    with pytest.raises(exc) as info:
        conn.cursor().execute(sql, params)
    err = info.value
    assert isinstance(err, noria_py.Error)
    assert err.errno == errno, (err.errno, str(err))
    if sqlstate is not None:
        assert err.sqlstate == sqlstate
    for word in mentions:
        assert word in str(err), (word, str(err))
    assert_unchanged_and_usable(conn, before)
    return err


def test_baseline_snapshot(conn):
    snap = snapshot(conn)
    assert snap["rows"] == [(1, "a", 10, None, None), (2, "b", 20, None, None)]
    assert snap["totals"] == [(2, 30)]
    assert snap["by_id"][1] == [("a", 10)]
    assert snap["by_sku"]["b"] == [(2,)]


# --- syntax -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELEC id FROM items",
        "SELECT id FROM",
        "SELECT id FROM items WHERE",
        "INSERT INTO items VALUES (1, 'x'",
        "UPDATE items SET WHERE id = 1",
        "UPDATE items SET qty-- = qty + 1 WHERE id = 1",  # (the rest is a comment: SET qty)
        "UPDATE items SET qty = 1, name WHERE id = 1",
        "CREATE TABLE broken (id INT PRIMARY KEY,)",
        "DELETE FROM items WHERE id = 1 AND",
        "SELECT id,, qty FROM items",
        "SELECT FROM items",
        "SELECT id FROM items WHERE qty IN ()",
        "CREATE TABLE empty_cols ()",
    ],
)
def test_syntax_error(conn, sql):
    err = check(conn, sql, exc=noria_py.ProgrammingError, errno=errors.ER_PARSE_ERROR)
    assert err.sqlstate == "42000"


# --- unknown names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM nope",
        "SELECT id FROM nope WHERE id = ?",
        "SELECT i.id FROM items i JOIN nope n ON n.id = i.id",
        "INSERT INTO nope VALUES (1)",
        "UPDATE nope SET x = 1",
        "DELETE FROM nope WHERE id = 1",
        "CREATE VIEW v_nope AS SELECT id FROM nope",
    ],
)
def test_unknown_table(conn, sql):
    params = (1,) if "?" in sql else ()
    check(
        conn,
        sql,
        params,
        exc=noria_py.ProgrammingError,
        errno=errors.ER_NO_SUCH_TABLE,
        mentions=("nope",),
        sqlstate="42S02",
    )


def test_view_from_unknown_table_is_not_created(conn):
    with pytest.raises(noria_py.ProgrammingError):
        conn.execute("CREATE VIEW v_nope AS SELECT id FROM nope")
    with pytest.raises(noria_py.ProgrammingError) as info:
        conn.execute("SELECT * FROM v_nope")
    assert info.value.errno == errors.ER_NO_SUCH_TABLE


def test_drop_unknown_table(conn):
    check(
        conn,
        "DROP TABLE nope",
        exc=noria_py.ProgrammingError,
        errno=errors.ER_BAD_TABLE_ERROR,
        mentions=("nope",),
    )


def test_create_existing_table(conn):
    check(
        conn,
        "CREATE TABLE items (id INT PRIMARY KEY)",
        exc=noria_py.ProgrammingError,
        errno=errors.ER_TABLE_EXISTS_ERROR,
        mentions=("items",),
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT nope FROM items",
        "SELECT id FROM items WHERE nope = ?",
        "SELECT id, COUNT(*) FROM items GROUP BY nope",
        "INSERT INTO items (id, nope) VALUES (5, 1)",
        "UPDATE items SET nope = 1 WHERE id = 1",
        "UPDATE items SET qty = 1 WHERE nope = 1",
        "DELETE FROM items WHERE nope = 1",
    ],
)
def test_unknown_column(conn, sql):
    params = (1,) if "?" in sql else ()
    check(
        conn,
        sql,
        params,
        exc=noria_py.ProgrammingError,
        errno=errors.ER_BAD_FIELD_ERROR,
        mentions=("nope",),
        sqlstate="42S22",
    )


# --- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql, params",
    [
        ("SELECT sku FROM items WHERE id = ?", ()),
        ("SELECT sku FROM items WHERE id = ?", (1, 2)),
        ("SELECT sku FROM items WHERE id = 1", (1,)),
        ("INSERT INTO items (id, sku) VALUES (?, ?)", (5,)),
        ("INSERT INTO items (id, sku) VALUES (?, ?)", (5, "e", 7)),
        ("UPDATE items SET qty = ? WHERE id = ?", (3,)),
        ("DELETE FROM items WHERE id = ?", ()),
    ],
)
def test_wrong_parameter_count(conn, sql, params):
    before = snapshot(conn)
    with pytest.raises(noria_py.ProgrammingError):
        conn.cursor().execute(sql, params)
    assert_unchanged_and_usable(conn, before)


@pytest.mark.parametrize(
    "bad_row, exc",
    [
        ((7,), noria_py.ProgrammingError),
        ((1, "x", 1), noria_py.IntegrityError),
        ((7, "g", None), noria_py.IntegrityError),
        ((7, "g", "abc"), noria_py.DataError),
    ],
    ids=["param-count", "duplicate", "null", "bad-int"],
)
def test_executemany_with_a_bad_row_keeps_views_consistent(conn, bad_row, exc):
    snapshot(conn)
    cur = conn.cursor()
    with pytest.raises(exc):
        cur.executemany(
            "INSERT INTO items (id, sku, qty) VALUES (?, ?, ?)",
            [(5, "e", 1), (6, "f", 2), bad_row, (8, "h", 3)],
        )
    # Whether rows before the bad one were written is the engine's choice; the views must agree
    # with the base table either way, and no row after the bad one may have been written.
    rows = conn.execute("SELECT id, qty FROM items ORDER BY id").fetchall()
    ids = [r[0] for r in rows]
    assert ids in ([1, 2], [1, 2, 5, 6])
    assert conn.execute("SELECT n, total FROM item_totals").fetchall() == [
        (len(rows), sum(r[1] for r in rows))
    ]
    for i, sku, qty in ((5, "e", 1), (6, "f", 2), (7, "g", 0), (8, "h", 3)):
        expected = [(sku, qty)] if i in ids else []
        assert conn.execute("SELECT sku, qty FROM items WHERE id = ?", (i,)).fetchall() == expected
    assert conn.execute("SELECT sku, qty FROM items WHERE id = ?", (1,)).fetchall() == [("a", 10)]


def test_insert_value_count_mismatch(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (5)",
        exc=noria_py.DatabaseError,
        errno=errors.ER_WRONG_VALUE_COUNT_ON_ROW,
    )
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (5, 'e'), (6)",
        exc=noria_py.DatabaseError,
        errno=errors.ER_WRONG_VALUE_COUNT_ON_ROW,
    )


# --- constraints ------------------------------------------------------------------------------


def test_duplicate_primary_key(conn):
    err = check(
        conn,
        "INSERT INTO items (id, sku) VALUES (1, 'x')",
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
        sqlstate="23000",
    )
    assert "Duplicate" in str(err)


def test_duplicate_key_message_names_the_value_and_the_key(conn):
    # MySQL: Duplicate entry '<value>' for key '<table>.<key>'
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("INSERT INTO items (id, sku) VALUES (2, 'x')")
    assert "Duplicate entry '2' for key" in str(info.value)
    assert "PRIMARY" in str(info.value)
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("INSERT INTO items (id, sku) VALUES (3, 'b')")
    assert "Duplicate entry 'b' for key" in str(info.value)
    assert "sku_unique" in str(info.value)
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("INSERT INTO items (id, sku) VALUES (3, 'c'), (1, 'x')")
    assert "Duplicate entry '1' for key" in str(info.value)


def test_duplicate_primary_key_with_parameters(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (?, ?)",
        (2, "x"),
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
    )


def test_multi_row_insert_with_duplicate_third_row_inserts_nothing(conn):
    check(
        conn,
        "INSERT INTO items (id, sku, qty)"
        " VALUES (3, 'c', 1), (4, 'd', 1), (1, 'x', 1), (5, 'e', 1)",
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
    )


def test_multi_row_insert_duplicating_itself_inserts_nothing(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (3, 'c'), (4, 'd'), (3, 'e')",
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
    )


def test_duplicate_unique_key(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (3, 'c'), (4, 'a')",
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
    )


def test_update_creating_duplicate_primary_key_changes_nothing(conn):
    conn.execute("INSERT INTO items (id, sku) VALUES (3, 'c')")
    before = snapshot(conn)
    with pytest.raises(noria_py.IntegrityError) as info:
        conn.execute("UPDATE items SET id = 5 WHERE id IN (1, 3)")
    assert info.value.errno == errors.ER_DUP_ENTRY
    assert_unchanged_and_usable(conn, before)


def test_update_creating_duplicate_unique_key_changes_nothing(conn):
    check(
        conn,
        "UPDATE items SET sku = 'a', qty = qty + 1 WHERE id = 2",
        exc=noria_py.IntegrityError,
        errno=errors.ER_DUP_ENTRY,
    )


def test_null_into_not_null(conn):
    err = check(
        conn,
        "INSERT INTO items (id, sku) VALUES (3, NULL)",
        exc=noria_py.IntegrityError,
        errno=errors.ER_BAD_NULL_ERROR,
        sqlstate="23000",
    )
    assert "sku" in str(err)


def test_null_parameter_into_not_null(conn):
    check(
        conn,
        "INSERT INTO items (id, sku, qty) VALUES (?, ?, ?)",
        (3, "c", None),
        exc=noria_py.IntegrityError,
        errno=errors.ER_BAD_NULL_ERROR,
        mentions=("qty",),
    )


def test_null_in_third_row_inserts_nothing(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (3, 'c'), (4, 'd'), (5, NULL)",
        exc=noria_py.IntegrityError,
        errno=errors.ER_BAD_NULL_ERROR,
    )


def test_update_to_null_in_not_null_changes_nothing(conn):
    check(
        conn,
        "UPDATE items SET sku = NULL WHERE id = 2",
        exc=noria_py.IntegrityError,
        errno=errors.ER_BAD_NULL_ERROR,
    )


def test_missing_value_for_not_null_column_without_default(conn):
    check(
        conn,
        "INSERT INTO items (id, qty) VALUES (3, 1)",
        exc=noria_py.DatabaseError,
        errno=errors.ER_NO_DEFAULT_FOR_FIELD,
        mentions=("sku",),
    )


def test_default_is_used_for_omitted_column(conn):
    conn.execute("INSERT INTO items (id, sku) VALUES (3, 'c')")
    assert conn.execute("SELECT qty FROM items WHERE id = ?", (3,)).fetchall() == [(0,)]


# --- values (MySQL strict mode) ---------------------------------------------------------------


def test_string_into_int_column(conn):
    err = check(
        conn,
        "INSERT INTO items (id, sku, qty) VALUES (3, 'c', 'abc')",
        exc=noria_py.DataError,
        errno=errors.ER_TRUNCATED_WRONG_VALUE,
    )
    assert "qty" in str(err)


def test_string_parameter_into_int_column(conn):
    check(
        conn,
        "INSERT INTO items (id, sku, qty) VALUES (?, ?, ?)",
        (3, "c", "abc"),
        exc=noria_py.DataError,
        errno=errors.ER_TRUNCATED_WRONG_VALUE,
    )


def test_bad_value_in_third_row_inserts_nothing(conn):
    check(
        conn,
        "INSERT INTO items (id, sku, qty) VALUES (3, 'c', 1), (4, 'd', 2), (5, 'e', 'abc')",
        exc=noria_py.DataError,
        errno=errors.ER_TRUNCATED_WRONG_VALUE,
    )


def test_update_with_string_into_int_changes_nothing(conn):
    check(
        conn,
        "UPDATE items SET qty = 'abc' WHERE id >= 1",
        exc=noria_py.DataError,
        errno=errors.ER_TRUNCATED_WRONG_VALUE,
    )


def test_numeric_string_into_int_column_is_converted(conn):
    conn.execute("INSERT INTO items (id, sku, qty) VALUES (3, 'c', '12')")
    row = conn.execute("SELECT qty FROM items WHERE id = ?", (3,)).fetchone()
    assert row == (12,)
    assert type(row[0]) is int


def test_out_of_range_value(conn):
    check(
        conn,
        "INSERT INTO items (id, sku, small) VALUES (3, 'c', 300)",
        exc=noria_py.DataError,
        errno=errors.ER_WARN_DATA_OUT_OF_RANGE,
        mentions=("small",),
    )


def test_string_too_long_for_varchar(conn):
    check(
        conn,
        "INSERT INTO items (id, sku) VALUES (3, 'much-too-long-sku')",
        exc=noria_py.DataError,
        errno=1406,  # ER_DATA_TOO_LONG
        mentions=("sku",),
    )


# --- a cursor survives its own errors ----------------------------------------------------------


def test_same_cursor_works_after_each_error(conn):
    cur = conn.cursor()
    bad = [
        ("SELEC 1", ()),
        ("SELECT * FROM nope", ()),
        ("SELECT nope FROM items", ()),
        ("INSERT INTO items (id, sku) VALUES (1, 'x')", ()),
        ("INSERT INTO items (id, sku) VALUES (3, NULL)", ()),
        ("SELECT sku FROM items WHERE id = ?", ()),
    ]
    for sql, params in bad:
        with pytest.raises(noria_py.DatabaseError):
            cur.execute(sql, params)
        cur.execute("SELECT sku FROM items WHERE id = ?", (1,))
        assert cur.fetchall() == [("a",)]
    assert cur.execute("SELECT n, total FROM item_totals").fetchall() == [(2, 30)]


# --- more names -------------------------------------------------------------------------------


def test_ambiguous_column(conn):
    conn.execute("CREATE TABLE tags (id INT PRIMARY KEY, item_id INT NOT NULL)")
    check(
        conn,
        "SELECT id FROM items JOIN tags ON tags.item_id = items.id WHERE items.id = ?",
        (1,),
        exc=noria_py.ProgrammingError,
        errno=errors.ER_NON_UNIQ_ERROR,
        mentions=("id",),
    )


def test_view_with_unknown_column_is_not_created(conn):
    check(
        conn,
        "CREATE VIEW bad_view AS SELECT nope FROM items",
        exc=noria_py.ProgrammingError,
        errno=errors.ER_BAD_FIELD_ERROR,
        mentions=("nope",),
    )
    with pytest.raises(noria_py.ProgrammingError) as info:
        conn.execute("SELECT * FROM bad_view")
    assert info.value.errno == errors.ER_NO_SUCH_TABLE


def test_create_existing_view(conn):
    check(
        conn,
        "CREATE VIEW item_totals AS SELECT id FROM items",
        exc=noria_py.ProgrammingError,
        errno=errors.ER_TABLE_EXISTS_ERROR,
        mentions=("item_totals",),
    )


def test_drop_unknown_view(conn):
    check(
        conn,
        "DROP VIEW nope",
        exc=noria_py.ProgrammingError,
        errno=errors.ER_BAD_TABLE_ERROR,
        mentions=("nope",),
    )


def test_insert_without_column_list_needs_every_value(conn):
    check(
        conn,
        "INSERT INTO items VALUES (3, 'c')",
        exc=noria_py.DatabaseError,
        errno=errors.ER_WRONG_VALUE_COUNT_ON_ROW,
    )


# --- errors inside an explicit transaction ------------------------------------------------------


def test_failed_statement_inside_a_transaction_is_undone_alone(conn):
    snapshot(conn)
    conn.begin()
    conn.execute("INSERT INTO items (id, sku, qty) VALUES (3, 'c', 5)")
    with pytest.raises(noria_py.IntegrityError):
        conn.execute("INSERT INTO items (id, sku, qty) VALUES (4, 'd', 6), (1, 'x', 7)")
    with pytest.raises(noria_py.DataError):
        conn.execute("UPDATE items SET qty = 'abc' WHERE id = 3")
    conn.execute("UPDATE items SET qty = qty + 1 WHERE id = 3")
    conn.commit()
    snap = snapshot(conn)
    assert snap["rows"] == [
        (1, "a", 10, None, None),
        (2, "b", 20, None, None),
        (3, "c", 6, None, None),
    ]
    assert snap["totals"] == [(3, 36)]
    assert snap["by_id"][3] == [("c", 6)]
    assert snap["by_id"][4] == []
    assert snap["by_sku"]["d"] == []


# --- more strict-mode values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "column, value",
    [
        ("i", 2**31),
        ("u", -1),
        ("u", 256),
        ("d", 12345.6),
        ("d", "x1"),
        ("dt", "2024-02-30"),
        ("dt", "yesterday"),
    ],
)
def test_bad_values_are_rejected_and_nothing_is_written(column, value):
    with noria_py.connect() as conn:
        conn.execute(
            "CREATE TABLE vals (id INT PRIMARY KEY, i INT, u TINYINT UNSIGNED,"
            " d DECIMAL(5,2), dt DATE)"
        )
        conn.execute("INSERT INTO vals (id, i) VALUES (1, 1)")
        conn.execute("CREATE VIEW nvals AS SELECT COUNT(*) AS n FROM vals")
        assert conn.execute("SELECT n FROM nvals").fetchall() == [(1,)]
        with pytest.raises(noria_py.DataError) as info:
            conn.execute(f"INSERT INTO vals (id, {column}) VALUES (?, ?), (?, ?)", (2, 0, 3, value))
        assert column in str(info.value)
        with pytest.raises(noria_py.DataError):
            conn.execute(f"UPDATE vals SET {column} = ? WHERE id = 1", (value,))
        assert conn.execute("SELECT n FROM nvals").fetchall() == [(1,)]
        assert conn.execute("SELECT id, i, u, d, dt FROM vals").fetchall() == [
            (1, 1, None, None, None)
        ]


def test_values_are_rounded_like_mysql():
    with noria_py.connect() as conn:
        conn.execute("CREATE TABLE vals (id INT PRIMARY KEY, i INT, d DECIMAL(5,2))")
        conn.executemany(
            "INSERT INTO vals VALUES (?, ?, ?)",
            [(1, 2.5, 1.005), (2, -2.5, "2.345"), (3, "7", "-0.125")],
        )
        rows = conn.execute("SELECT id, i, d FROM vals ORDER BY id").fetchall()
        assert [(r[0], r[1], str(r[2])) for r in rows] == [
            (1, 3, "1.01"),
            (2, -3, "2.35"),
            (3, 7, "-0.13"),
        ]

"""The PEP 249 surface of the embedded API: ``noria_py.connect()``, connections and cursors.

Behaviour follows the stdlib ``sqlite3`` module where PEP 249 leaves a choice, and MySQL where the
answer depends on SQL semantics (``rowcount`` counts rows actually changed, ``lastrowid`` after a
multi-row INSERT is the first generated id).
"""

from __future__ import annotations

import pytest

import noria_py
from noria_py import errors


@pytest.fixture
def conn():
    connection = noria_py.connect()
    yield connection
    connection.close()


@pytest.fixture
def people(conn):
    """A table with an AUTO_INCREMENT key and three rows (ids 1, 2, 3)."""
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE people ("
        " id INT NOT NULL AUTO_INCREMENT,"
        " name VARCHAR(50) NOT NULL,"
        " age INT,"
        " PRIMARY KEY (id)"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    )
    cur.executemany(
        "INSERT INTO people (name, age) VALUES (?, ?)",
        [("ann", 31), ("bob", 42), ("cid", None)],
    )
    return conn


# --- module attributes ------------------------------------------------------------------------


def test_module_globals():
    assert noria_py.apilevel == "2.0"
    assert noria_py.paramstyle == "qmark"
    assert noria_py.threadsafety in (0, 1, 2, 3)


def test_memory_path_is_an_in_memory_database(tmp_path, monkeypatch):
    """``":memory:"`` means what it means to ``sqlite3.connect``: no file is created."""
    monkeypatch.chdir(tmp_path)
    conn = noria_py.connect(":memory:")
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    assert conn.execute("SELECT id FROM t WHERE id = 1").fetchall() == [(1,)]
    conn.close()
    assert list(tmp_path.iterdir()) == []


def test_exception_hierarchy_is_exported():
    names = [
        "Warning",
        "Error",
        "InterfaceError",
        "DatabaseError",
        "DataError",
        "OperationalError",
        "IntegrityError",
        "InternalError",
        "ProgrammingError",
        "NotSupportedError",
    ]
    for name in names:
        assert getattr(noria_py, name) is getattr(errors, name), name
    assert issubclass(noria_py.Warning, Exception)
    assert issubclass(noria_py.Error, Exception)
    assert issubclass(noria_py.InterfaceError, noria_py.Error)
    assert issubclass(noria_py.DatabaseError, noria_py.Error)
    for name in [
        "DataError",
        "OperationalError",
        "IntegrityError",
        "InternalError",
        "ProgrammingError",
        "NotSupportedError",
    ]:
        assert issubclass(getattr(noria_py, name), noria_py.DatabaseError), name


# --- connect, cursor, execute -----------------------------------------------------------------


def test_connect_returns_connection_with_cursor(conn):
    cur = conn.cursor()
    for method in ("execute", "executemany", "fetchone", "fetchmany", "fetchall", "close"):
        assert callable(getattr(cur, method)), method
    for method in ("cursor", "commit", "rollback", "close"):
        assert callable(getattr(conn, method)), method
    # Required by PEP 249 even when they do nothing.
    cur.setinputsizes([None])
    cur.setoutputsize(10)
    cur.setoutputsize(10, 0)


def test_execute_with_tuple_and_list_parameters(people):
    cur = people.cursor()
    cur.execute("SELECT name FROM people WHERE id = ?", (2,))
    assert cur.fetchall() == [("bob",)]
    cur.execute("SELECT name FROM people WHERE id = ?", [3])
    assert cur.fetchall() == [("cid",)]


def test_execute_returns_the_cursor_for_chaining(people):
    cur = people.cursor()
    assert cur.execute("SELECT name FROM people WHERE id = ?", (1,)) is cur
    assert cur.execute("SELECT name FROM people WHERE id = ?", (1,)).fetchall() == [("ann",)]


def test_connection_execute_shortcut_returns_a_cursor(people):
    cur = people.execute("SELECT id, name FROM people WHERE id = ?", (1,))
    assert cur.fetchall() == [(1, "ann")]
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (3,)
    people.execute("INSERT INTO people (name, age) VALUES (?, ?)", ("dee", 5))
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (4,)


def test_executemany_inserts_every_row(conn):
    conn.execute("CREATE TABLE kv (k INT PRIMARY KEY, v VARCHAR(10))")
    cur = conn.cursor()
    cur.executemany("INSERT INTO kv (k, v) VALUES (?, ?)", [(i, f"v{i}") for i in range(50)])
    assert cur.rowcount == 50
    cur.execute("SELECT k, v FROM kv WHERE k = ?", (49,))
    assert cur.fetchall() == [(49, "v49")]
    cur.execute("SELECT COUNT(*) FROM kv")
    assert cur.fetchone() == (50,)


def test_executemany_accepts_a_generator(conn):
    conn.execute("CREATE TABLE kv (k INT PRIMARY KEY, v INT)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO kv VALUES (?, ?)", ((i, i * i) for i in range(5)))
    cur.execute("SELECT v FROM kv WHERE k = ?", (4,))
    assert cur.fetchall() == [(16,)]


def test_values_round_trip_with_python_types(conn):
    conn.execute(
        "CREATE TABLE vals (id INT PRIMARY KEY, i BIGINT, f DOUBLE, s VARCHAR(20), t TEXT, n INT)"
    )
    conn.execute(
        "INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?)",
        (1, 2**40, 1.5, "héllo", "long text", None),
    )
    row = conn.execute("SELECT i, f, s, t, n FROM vals WHERE id = ?", (1,)).fetchone()
    assert row == (2**40, 1.5, "héllo", "long text", None)
    assert type(row[0]) is int
    assert type(row[1]) is float
    assert type(row[2]) is str


def test_two_cursors_are_independent(people):
    a = people.cursor()
    b = people.cursor()
    a.execute("SELECT name FROM people WHERE id = ?", (1,))
    b.execute("SELECT name FROM people WHERE id = ?", (2,))
    assert a.fetchall() == [("ann",)]
    assert b.fetchall() == [("bob",)]


def test_reads_see_earlier_writes(people):
    cur = people.cursor()
    cur.execute("SELECT name, age FROM people WHERE id = ?", (1,))
    assert cur.fetchall() == [("ann", 31)]
    cur.execute("UPDATE people SET age = ? WHERE id = ?", (32, 1))
    cur.execute("SELECT name, age FROM people WHERE id = ?", (1,))
    assert cur.fetchall() == [("ann", 32)]
    cur.execute("DELETE FROM people WHERE id = ?", (1,))
    cur.execute("SELECT name, age FROM people WHERE id = ?", (1,))
    assert cur.fetchall() == []


# --- fetching ---------------------------------------------------------------------------------


@pytest.fixture
def numbers(conn):
    conn.execute("CREATE TABLE nums (n INT PRIMARY KEY, grp INT NOT NULL)")
    conn.executemany("INSERT INTO nums VALUES (?, ?)", [(i, i % 2) for i in range(1, 11)])
    return conn


def _ordered(cur):
    cur.execute("SELECT n FROM nums ORDER BY n")
    return cur


def test_fetchone_until_exhausted(numbers):
    cur = _ordered(numbers.cursor())
    got = []
    while (row := cur.fetchone()) is not None:
        got.append(row)
    assert got == [(i,) for i in range(1, 11)]
    assert cur.fetchone() is None


def test_fetchmany_with_size_and_arraysize(numbers):
    cur = _ordered(numbers.cursor())
    assert cur.arraysize == 1
    assert cur.fetchmany() == [(1,)]
    assert cur.fetchmany(3) == [(2,), (3,), (4,)]
    cur.arraysize = 4
    assert cur.fetchmany() == [(5,), (6,), (7,), (8,)]
    assert cur.fetchmany(5) == [(9,), (10,)]
    assert cur.fetchmany(5) == []


def test_fetchall_returns_the_rest(numbers):
    cur = _ordered(numbers.cursor())
    assert cur.fetchone() == (1,)
    assert cur.fetchall() == [(i,) for i in range(2, 11)]
    assert cur.fetchall() == []


def test_rows_are_tuples(numbers):
    cur = _ordered(numbers.cursor())
    rows = cur.fetchall()
    assert all(type(r) is tuple for r in rows)
    assert isinstance(rows, list)


def test_cursor_iteration(numbers):
    cur = _ordered(numbers.cursor())
    assert [r[0] for r in cur] == list(range(1, 11))
    cur.execute("SELECT n FROM nums WHERE grp = ? ORDER BY n", (0,))
    assert list(cur) == [(2,), (4,), (6,), (8,), (10,)]


def test_new_execute_discards_unfetched_rows(numbers):
    cur = _ordered(numbers.cursor())
    cur.fetchone()
    cur.execute("SELECT n FROM nums WHERE n = ?", (7,))
    assert cur.fetchall() == [(7,)]


# --- description ------------------------------------------------------------------------------


def test_description_names_are_first_of_seven(people):
    cur = people.cursor()
    cur.execute("SELECT id, name AS who, age FROM people WHERE id = ?", (1,))
    assert cur.description is not None
    assert all(len(col) == 7 for col in cur.description)
    assert [col[0] for col in cur.description] == ["id", "who", "age"]


def test_description_of_aggregate_alias(people):
    cur = people.execute("SELECT COUNT(*) AS n FROM people")
    assert [col[0] for col in cur.description] == ["n"]
    assert cur.fetchall() == [(3,)]


def test_description_present_for_empty_result(people):
    cur = people.execute("SELECT id, name FROM people WHERE id = ?", (999,))
    assert [col[0] for col in cur.description] == ["id", "name"]
    assert cur.fetchall() == []


def test_description_is_none_after_a_write(people):
    cur = people.cursor()
    assert cur.description is None
    cur.execute("SELECT id FROM people WHERE id = ?", (1,))
    assert cur.description is not None
    cur.execute("INSERT INTO people (name) VALUES (?)", ("eve",))
    assert cur.description is None


# --- rowcount ---------------------------------------------------------------------------------


def test_rowcount_insert(conn):
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    cur = conn.cursor()
    cur.execute("INSERT INTO t VALUES (1, 10)")
    assert cur.rowcount == 1
    cur.execute("INSERT INTO t VALUES (2, 20), (3, 30), (4, 40)")
    assert cur.rowcount == 3
    cur.executemany("INSERT INTO t VALUES (?, ?)", [(5, 50), (6, 60)])
    assert cur.rowcount == 2


def test_rowcount_update_counts_changed_rows(people):
    cur = people.cursor()
    cur.execute("UPDATE people SET age = 42 WHERE id IN (1, 2, 3)")
    # bob is already 42: MySQL reports the rows actually changed, not the rows matched.
    assert cur.rowcount == 2
    cur.execute("UPDATE people SET age = 42 WHERE id IN (1, 2, 3)")
    assert cur.rowcount == 0
    cur.execute("UPDATE people SET age = ? WHERE id = ?", (7, 999))
    assert cur.rowcount == 0
    cur.execute("UPDATE people SET age = age + 1")
    assert cur.rowcount == 3


def test_rowcount_delete(people):
    cur = people.cursor()
    cur.execute("DELETE FROM people WHERE id = ?", (999,))
    assert cur.rowcount == 0
    cur.execute("DELETE FROM people WHERE id >= ?", (2,))
    assert cur.rowcount == 2
    cur.execute("DELETE FROM people")
    assert cur.rowcount == 1
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (0,)


def test_rowcount_executemany_sums_rows_changed(conn):
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, 0) for i in range(10)])
    # (0, 2) changes nothing and id 99 does not exist.
    cur = conn.executemany("UPDATE t SET v = ? WHERE id = ?", [(1, 1), (0, 2), (5, 3), (5, 99)])
    assert cur.rowcount == 2
    cur = conn.executemany("DELETE FROM t WHERE id = ?", [(1,), (2,), (1,)])
    assert cur.rowcount == 2
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone() == (8,)


def test_rowcount_before_any_execute(conn):
    assert conn.cursor().rowcount == -1


def test_rowcount_select_is_the_number_of_rows(people):
    # PEP 249 allows -1 here; the engine returns whole result sets, so like MySQL's buffered
    # cursors it reports the number of rows, on the first execution and on repeated ones.
    cur = people.cursor()
    for _ in range(2):
        cur.execute("SELECT id FROM people WHERE age IS NOT NULL")
        assert cur.rowcount == 2
        assert len(cur.fetchall()) == 2
        cur.execute("SELECT name FROM people WHERE id = ?", (1,))
        assert cur.rowcount == 1
        cur.execute("SELECT name FROM people WHERE id = ?", (99,))
        assert cur.rowcount == 0


# --- lastrowid --------------------------------------------------------------------------------


def test_lastrowid_after_auto_increment_inserts(conn):
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    cur = conn.cursor()
    assert cur.lastrowid is None
    cur.execute("INSERT INTO a (v) VALUES (?)", ("x",))
    assert cur.lastrowid == 1
    cur.execute("INSERT INTO a (v) VALUES (?)", ("y",))
    assert cur.lastrowid == 2
    assert conn.execute("SELECT id, v FROM a WHERE id = ?", (2,)).fetchall() == [(2, "y")]


def test_lastrowid_multi_row_insert_is_first_generated_id(conn):
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    cur = conn.cursor()
    cur.execute("INSERT INTO a (v) VALUES ('p')")
    assert cur.lastrowid == 1
    cur.execute("INSERT INTO a (v) VALUES ('q'), ('r'), ('s')")
    assert cur.lastrowid == 2
    rows = conn.execute("SELECT id, v FROM a ORDER BY id").fetchall()
    assert rows == [(1, "p"), (2, "q"), (3, "r"), (4, "s")]


def test_auto_increment_continues_after_explicit_id(conn):
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    conn.execute("INSERT INTO a (id, v) VALUES (10, 'x')")
    cur = conn.execute("INSERT INTO a (v) VALUES ('y')")
    assert cur.lastrowid == 11
    assert conn.execute("SELECT v FROM a WHERE id = ?", (11,)).fetchall() == [("y",)]


def test_null_and_zero_generate_auto_increment_ids(conn):
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    assert conn.execute("INSERT INTO a (id, v) VALUES (NULL, 'x')").lastrowid == 1
    assert conn.execute("INSERT INTO a (id, v) VALUES (0, 'y')").lastrowid == 2
    assert conn.execute("INSERT INTO a VALUES (NULL, 'z'), (NULL, 'w')").lastrowid == 3
    assert conn.execute("INSERT INTO a (id, v) VALUES (?, ?)", (None, "p")).lastrowid == 5
    rows = conn.execute("SELECT id, v FROM a ORDER BY id").fetchall()
    assert rows == [(1, "x"), (2, "y"), (3, "z"), (4, "w"), (5, "p")]


def test_lastrowid_per_cursor(conn):
    conn.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    c1 = conn.cursor()
    c2 = conn.cursor()
    c1.execute("INSERT INTO a (v) VALUES (1)")
    c2.execute("INSERT INTO a (v) VALUES (2)")
    assert (c1.lastrowid, c2.lastrowid) == (1, 2)


# --- closing ----------------------------------------------------------------------------------

CLOSED_ERRORS = (noria_py.InterfaceError, noria_py.ProgrammingError)


def test_closed_cursor_refuses_work(people):
    cur = people.cursor()
    cur.execute("SELECT id FROM people WHERE id = ?", (1,))
    cur.close()
    with pytest.raises(CLOSED_ERRORS):
        cur.execute("SELECT id FROM people WHERE id = ?", (1,))
    with pytest.raises(CLOSED_ERRORS):
        cur.executemany("INSERT INTO people (name) VALUES (?)", [("zed",)])
    with pytest.raises(CLOSED_ERRORS):
        cur.fetchone()
    with pytest.raises(CLOSED_ERRORS):
        cur.fetchall()
    with pytest.raises(CLOSED_ERRORS):
        cur.fetchmany(2)
    # The connection is unaffected by one cursor closing.
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (3,)


def test_closed_connection_refuses_work():
    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1), (2)")
    cur = conn.cursor()
    pending = conn.execute("SELECT id FROM t ORDER BY id")
    conn.close()
    # A cursor with unfetched rows refuses every fetch once its connection is closed.
    with pytest.raises(CLOSED_ERRORS):
        pending.fetchone()
    with pytest.raises(CLOSED_ERRORS):
        pending.fetchmany(1)
    with pytest.raises(CLOSED_ERRORS):
        pending.fetchall()
    with pytest.raises(CLOSED_ERRORS):
        conn.cursor()
    with pytest.raises(CLOSED_ERRORS):
        conn.execute("SELECT id FROM t")
    with pytest.raises(CLOSED_ERRORS):
        cur.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(CLOSED_ERRORS):
        conn.commit()


def test_close_twice_is_harmless():
    conn = noria_py.connect()
    cur = conn.cursor()
    cur.close()
    cur.close()
    conn.close()
    conn.close()


def _both(make):
    """The same steps on sqlite3 and on noria_py: (sqlite3's outcome, ours)."""
    import sqlite3

    return make(sqlite3.connect(":memory:")), make(noria_py.connect())


def test_context_manager_commits_and_keeps_the_connection_open():
    def steps(conn):
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        with conn:
            conn.execute("INSERT INTO t VALUES (1)")
        out = conn.execute("SELECT COUNT(*) FROM t").fetchone()  # still open
        conn.close()
        return out

    ours_expected, ours = _both(steps)
    assert ours == ours_expected == (1,)


def test_context_manager_rolls_back_on_exception_and_stays_open():
    def steps(conn):
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        with pytest.raises(ZeroDivisionError):
            with conn:
                conn.execute("BEGIN")
                conn.execute("INSERT INTO t VALUES (2)")
                1 / 0  # noqa: B018
        out = conn.execute("SELECT id FROM t").fetchall()
        conn.close()
        return out

    expected, ours = _both(steps)
    assert ours == expected == [(1,)]


def test_context_manager_returns_the_connection_and_close_still_closes():
    conn = noria_py.connect()
    with conn as inner:
        assert inner is conn
    conn.close()
    with pytest.raises(CLOSED_ERRORS):
        conn.cursor()
    with conn:  # a closed connection's block does nothing more
        pass


def test_context_manager_keeps_file_backed_writes(tmp_path):
    path = str(tmp_path / "ctx.db")
    with noria_py.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        conn.execute("INSERT INTO t VALUES (1, 100)")
    with noria_py.connect(path) as conn:
        assert conn.execute("SELECT v FROM t WHERE id = ?", (1,)).fetchall() == [(100,)]


# --- transactions -----------------------------------------------------------------------------


def test_commit_is_a_no_op_because_writes_autocommit(people):
    people.execute("INSERT INTO people (name) VALUES ('fay')")
    # Visible before any commit: every write is committed when execute() returns.
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (4,)
    people.commit()
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (4,)


def test_rollback_does_not_undo_autocommitted_writes(people):
    people.execute("INSERT INTO people (name) VALUES ('gus')")
    people.rollback()
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (4,)
    # The connection stays usable.
    people.execute("INSERT INTO people (name) VALUES ('hal')")
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (5,)


# Explicit transactions: BEGIN / START TRANSACTION (or conn.begin()) defers writes until
# commit(), which applies them as one batch; rollback() discards them. Reads inside the
# transaction see the views as of the last commit.


def test_rollback_discards_an_explicit_transaction(people):
    people.begin()
    assert people.in_transaction
    people.execute("INSERT INTO people (name, age) VALUES ('ivy', 20)")
    people.execute("UPDATE people SET age = 99 WHERE id = 1")
    people.execute("DELETE FROM people WHERE id = 2")
    people.rollback()
    assert not people.in_transaction
    rows = people.execute("SELECT id, name, age FROM people ORDER BY id").fetchall()
    assert rows == [(1, "ann", 31), (2, "bob", 42), (3, "cid", None)]
    assert people.execute("SELECT age FROM people WHERE id = ?", (1,)).fetchall() == [(31,)]


def test_commit_applies_an_explicit_transaction(people):
    before = people.execute("SELECT age FROM people WHERE id = ?", (1,)).fetchall()
    assert before == [(31,)]
    people.execute("START TRANSACTION")
    assert people.in_transaction
    people.execute("UPDATE people SET age = 50 WHERE id = 1")
    people.execute("INSERT INTO people (name, age) VALUES ('jo', 7)")
    # The transaction reads its own writes, cached query or not.
    assert people.execute("SELECT age FROM people WHERE id = ?", (1,)).fetchall() == [(50,)]
    assert people.execute("SELECT name FROM people WHERE age = ?", (7,)).fetchall() == [("jo",)]
    people.commit()
    assert not people.in_transaction
    assert people.execute("SELECT age FROM people WHERE id = ?", (1,)).fetchall() == [(50,)]
    assert people.execute("SELECT name FROM people WHERE age = ?", (7,)).fetchall() == [("jo",)]


def test_sql_commit_and_rollback_statements(people):
    people.execute("BEGIN")
    people.execute("DELETE FROM people")
    people.execute("ROLLBACK")
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (3,)
    people.execute("BEGIN")
    people.execute("DELETE FROM people WHERE id = 3")
    people.execute("COMMIT")
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (2,)


def test_context_manager_rolls_back_an_open_transaction_on_error(tmp_path):
    path = str(tmp_path / "tx.db")
    conn = noria_py.connect(path)
    with conn:
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(RuntimeError):
        with conn:
            conn.begin()
            conn.execute("INSERT INTO t VALUES (2)")
            raise RuntimeError("boom")
    assert not conn.in_transaction
    with conn:
        conn.begin()
        conn.execute("INSERT INTO t VALUES (3)")
    assert not conn.in_transaction
    conn.close()
    with noria_py.connect(path) as conn:
        assert conn.execute("SELECT id FROM t ORDER BY id").fetchall() == [(1,), (3,)]
    conn.close()


# --- parameter values -------------------------------------------------------------------------


def test_null_parameter_matches_nothing(people):
    # ``age = NULL`` is never true in SQL, even for rows whose age is NULL.
    assert people.execute("SELECT name FROM people WHERE age = ?", (None,)).fetchall() == []
    assert people.execute("SELECT name FROM people WHERE age IS NULL").fetchall() == [("cid",)]


def test_parameter_compared_with_mysql_conversions(people):
    # MySQL compares an INT column with a string or float argument numerically.
    assert people.execute("SELECT name FROM people WHERE id = ?", ("2",)).fetchall() == [("bob",)]
    assert people.execute("SELECT name FROM people WHERE id = ?", (2.0,)).fetchall() == [("bob",)]
    assert people.execute("SELECT name FROM people WHERE id = ?", (True,)).fetchall() == [("ann",)]


def test_named_parameters_are_rejected(people):
    sql = "SELECT name FROM people WHERE id = ?"
    with pytest.raises(noria_py.ProgrammingError):
        people.execute(sql, {"id": 1})
    assert people.execute(sql, (1,)).fetchall() == [("ann",)]
    # The same statement again, now that the engine has prepared it.
    with pytest.raises(noria_py.ProgrammingError):
        people.execute(sql, {"id": 1})
    assert people.execute(sql, (1,)).fetchall() == [("ann",)]


@pytest.mark.parametrize("value", [object(), [1, 2], {"a": 1}], ids=["object", "list", "dict"])
def test_unsupported_parameter_type_is_rejected(people, value):
    # Like sqlite3: a value with no SQL equivalent is an error, never stored as its repr().
    with pytest.raises((noria_py.InterfaceError, noria_py.ProgrammingError)):
        people.execute("INSERT INTO people (name, age) VALUES (?, ?)", (value, 1))
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (3,)


@pytest.mark.parametrize("value", [object(), [1, 2], {"a": 1}], ids=["object", "list", "dict"])
def test_unsupported_parameter_type_in_a_read_is_rejected(people, value):
    sql = "SELECT name FROM people WHERE id = ?"
    for _ in range(2):  # before and after the statement has been prepared by a good execution
        with pytest.raises((noria_py.InterfaceError, noria_py.ProgrammingError)):
            people.execute(sql, (value,))
        assert people.execute(sql, (1,)).fetchall() == [("ann",)]


@pytest.mark.parametrize("ending", ["COMMIT", "ROLLBACK"])
@pytest.mark.parametrize(
    "options", [{}, {"partial": False}, {"upqueries": "messages"}], ids=["partial", "full", "msgs"]
)
def test_a_view_first_built_inside_a_transaction_counts_its_writes_once(ending, options):
    # the new view's full state is replayed from base storage, which already holds the
    # transaction's uncommitted rows; COMMIT then applies their deltas: counted once, not twice
    conn = noria_py.connect(**options)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (g INT, v INT)")
    cur.executemany("INSERT INTO t VALUES (?, ?)", [(1, 1), (1, 2), (2, 3)])
    cur.execute("BEGIN")
    cur.execute("INSERT INTO t VALUES (1, 5)")
    cur.execute("DELETE FROM t WHERE v = 3")
    counts = "SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY g"
    sums = "SELECT g, SUM(v) FROM t WHERE v > 1 GROUP BY g ORDER BY g"
    # inside the transaction the connection reads its own writes
    assert cur.execute(counts).fetchall() == [(1, 3)]
    assert [tuple(map(int, r)) for r in cur.execute(sums).fetchall()] == [(1, 7)]
    cur.execute(ending)
    if ending == "COMMIT":
        assert cur.execute(counts).fetchall() == [(1, 3)]
        assert [tuple(map(int, r)) for r in cur.execute(sums).fetchall()] == [(1, 7)]
    else:
        assert cur.execute(counts).fetchall() == [(1, 2), (2, 1)]
        assert [tuple(map(int, r)) for r in cur.execute(sums).fetchall()] == [(1, 2), (2, 3)]
    conn.close()


def test_computed_columns_are_named_alike_on_both_paths():
    """An unaliased computed column is named by its text, whether the dataflow or base
    storage answers it (base storage's rewritten form, ``nf_EXPR(...)``, never shows)."""
    import noria_py

    sql = "SELECT STD(f), BIT_AND(id), UPPER('x'), id + 1, d * 2, COUNT(*) FROM t GROUP BY id"
    names = []
    for flow in (True, False):
        c = noria_py.connect(dataflow=flow)
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, f DOUBLE, d DECIMAL(5,2))")
        c.execute("INSERT INTO t VALUES (1, 2.5, 1.5)")
        names.append([d[0] for d in c.execute(sql).description])
        c.close()
    assert names[0] == names[1]
    assert names[0] == ["STD(f)", "BIT_AND(id)", "UPPER('x')", "id + 1", "d * 2", "COUNT(*)"]


# --- PEP 249 type objects and constructors -----------------------------------------------------


def test_constructors_match_sqlite3():
    import sqlite3

    for name in ("Date", "Time", "Timestamp"):
        assert getattr(noria_py, name) is getattr(sqlite3, name)
    for name in ("DateFromTicks", "TimeFromTicks", "TimestampFromTicks"):
        ticks = 1_700_000_000.5
        assert getattr(noria_py, name)(ticks) == getattr(sqlite3, name)(ticks), name
    assert noria_py.Binary(b"\x00\xff") == bytes(sqlite3.Binary(b"\x00\xff"))
    assert (noria_py.apilevel, noria_py.paramstyle) == (sqlite3.apilevel, sqlite3.paramstyle)


def test_type_codes_compare_equal_to_type_objects(conn):
    conn.execute(
        "CREATE TABLE typed (id INT AUTO_INCREMENT PRIMARY KEY, n BIGINT, x DECIMAL(6,2),"
        " f DOUBLE, s VARCHAR(9), t TEXT, e ENUM('a','b'), d DATE, tm TIME, ts DATETIME,"
        " b BLOB, vb VARBINARY(8))"
    )
    row = (
        7,
        1.25,
        2.5,
        "str",
        "text",
        "a",
        noria_py.Date(2024, 2, 29),
        noria_py.Time(23, 59, 1),
        noria_py.Timestamp(2024, 2, 29, 12, 0, 5),
        noria_py.Binary(b"\x00\x01"),
        noria_py.Binary(b"\xff"),
    )
    cur = conn.execute(
        "INSERT INTO typed (n, x, f, s, t, e, d, tm, ts, b, vb) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    assert cur.rowcount == 1 and cur.lastrowid == 1
    cur = conn.execute("SELECT * FROM typed")
    groups = {
        "id": noria_py.NUMBER,
        "n": noria_py.NUMBER,
        "x": noria_py.NUMBER,
        "f": noria_py.NUMBER,
        "s": noria_py.STRING,
        "t": noria_py.STRING,
        "e": noria_py.STRING,
        "d": noria_py.DATETIME,
        "tm": noria_py.DATETIME,
        "ts": noria_py.DATETIME,
        "b": noria_py.BINARY,
        "vb": noria_py.BINARY,
    }
    all_types = (noria_py.STRING, noria_py.BINARY, noria_py.NUMBER, noria_py.DATETIME)
    for name, code, *_ in cur.description:
        assert code == groups[name], name
        assert groups[name] == code, name  # either side of ==
        assert [t for t in all_types if t == code] == [groups[name]], name
        assert code != noria_py.ROWID
    got = cur.fetchone()
    assert got[7] == noria_py.Date(2024, 2, 29) and got[9] == row[8] and got[10] == b"\x00\x01"


def test_type_objects_are_hashable_and_distinct():
    objs = {noria_py.STRING, noria_py.BINARY, noria_py.NUMBER, noria_py.DATETIME, noria_py.ROWID}
    assert len(objs) == 5
    assert noria_py.STRING != noria_py.NUMBER
    assert noria_py.NUMBER == "bigint"  # type names compare case-insensitively
    assert noria_py.NUMBER != 5


def test_rowcount_arraysize_fetchmany_like_sqlite3():
    def steps(conn):
        cur = conn.cursor()
        out = [cur.arraysize, cur.rowcount]
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        cur.executemany("INSERT INTO t VALUES (?, ?)", [(i, i % 3) for i in range(10)])
        out.append(cur.rowcount)
        cur.execute("UPDATE t SET v = 9 WHERE v = 0")
        out.append(cur.rowcount)
        cur.execute("DELETE FROM t WHERE id > 7")
        out.append(cur.rowcount)
        cur.execute("SELECT id FROM t ORDER BY id")
        out.append(cur.fetchmany())
        cur.arraysize = 3
        out.append(cur.fetchmany())
        out.append(cur.fetchmany(2))
        out.append(cur.fetchmany(10))
        out.append(cur.fetchmany())
        cur.execute("INSERT INTO t VALUES (20, 1)")
        out.append(cur.description)
        conn.close()
        return out

    expected, ours = _both(steps)
    assert ours == expected


def test_write_result_is_the_keyword_result():
    from noria_py.result import Result, write_result

    assert write_result(3, 7, [("Note", 1265, "x")]) == Result(
        rowcount=3, lastrowid=7, conditions=[("Note", 1265, "x")]
    )
    assert write_result(1, None, []) == Result(rowcount=1, conditions=[])


def test_single_row_inserts_answer_rowcount_lastrowid_and_warnings(conn):
    conn.execute("CREATE TABLE w (id INT AUTO_INCREMENT PRIMARY KEY, v INT, d DECIMAL(5,1))")
    cur = conn.cursor()
    for k in range(3):  # the first run prepares the statement, the later ones reuse it
        cur.execute("INSERT INTO w (v, d) VALUES (?, ?)", (k, 1.25))
        assert (cur.rowcount, cur.lastrowid, cur.description) == (1, k + 1, None)
        assert conn.execute("SHOW WARNINGS").fetchall() == [
            ("Note", 1265, "Data truncated for column 'd' at row 1")
        ]
        assert conn.execute("SELECT LAST_INSERT_ID(), ROW_COUNT()").fetchall() == [(k + 1, -1)]
    cur.execute("INSERT INTO w VALUES (?, ?, ?)", (10, 5, 2))
    assert (cur.rowcount, cur.lastrowid) == (1, 3)  # given, not generated: the last one stays
    assert conn.execute("SHOW WARNINGS").fetchall() == []
    with pytest.raises(errors.IntegrityError) as e:
        cur.execute("INSERT INTO w VALUES (?, ?, ?)", (10, 6, 3))
    assert e.value.errno == 1062
    assert conn.execute("SELECT id, v FROM w ORDER BY id").fetchall() == [
        (1, 0),
        (2, 1),
        (3, 2),
        (10, 5),
    ]


def test_insert_shapes_put_each_parameter_in_its_column(conn):
    conn.execute("CREATE TABLE s (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(5))")
    eng = conn.engine
    shapes = {
        "INSERT INTO s VALUES (?, ?, ?)": True,
        "INSERT INTO s (id, a, b) VALUES (?, ?, ?)": True,
        "INSERT INTO s (b, a, id) VALUES (?, ?, ?)": True,  # in order, of a column list
        "INSERT INTO s VALUES (?, 7, ?)": False,
        "INSERT INTO s VALUES (?, ? + 1, ?)": False,
    }
    for sql, in_order in shapes.items():
        assert eng.prepare(sql).params_in_order is in_order, sql
    params = [None, "1", "x"]
    conn.execute("INSERT INTO s VALUES (?, ?, ?)", params)
    assert params == [None, "1", "x"]  # the caller's list is not the row written
    conn.execute("INSERT INTO s (b, a, id) VALUES (?, ?, ?)", ("y", 2, None))
    conn.execute("INSERT INTO s VALUES (?, 7, ?)", (None, "z"))
    conn.execute("INSERT INTO s VALUES (?, ?, ?), (?, ?, ?)", (None, True, "u", 20, "9", "v"))
    conn.executemany("INSERT INTO s VALUES (?, ?, ?)", [(None, 3, "w"), (30, None, None)])
    assert conn.execute("SELECT id, a, b FROM s ORDER BY id").fetchall() == [
        (1, 1, "x"), (2, 2, "y"), (3, 7, "z"), (4, 1, "u"), (20, 9, "v"), (21, 3, "w"),
        (30, None, None)
    ]  # fmt: skip

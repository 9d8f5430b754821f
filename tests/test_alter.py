"""ALTER TABLE and RENAME TABLE in the embedded engine: cached queries and views over a table
stay exact through every kind of change (also with writes from other threads running, and
seen from a second engine on the same file), the change survives a restart, the
AUTO_INCREMENT counter carries over, and a failed ALTER changes nothing."""

from __future__ import annotations

import sqlite3
import threading

import pytest

import noria_py
from noria_py import errors as E


def _conn(path=None, **kw):
    c = noria_py.connect(path, **kw) if path else noria_py.connect(**kw)
    return c, c.cursor()


def _q(cur, sql, params=()):
    cur.execute(sql, params)
    return cur.fetchall()


def test_every_kind_of_change_keeps_cached_queries_and_views_exact():
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(10))")
    cur.executemany("INSERT INTO t (a, b) VALUES (?, ?)", [(i % 3, f"s{i}") for i in range(9)])
    cur.execute("CREATE VIEW counts AS SELECT a, COUNT(*) AS n FROM t GROUP BY a")
    cur.execute("CREATE VIEW everything AS SELECT * FROM t")
    assert _q(cur, "SELECT n FROM counts WHERE a = ?", (1,)) == [(3,)]
    assert _q(cur, "SELECT b FROM t WHERE id = ?", (2,)) == [("s1",)]

    cur.execute("ALTER TABLE t ADD COLUMN c DECIMAL(5,2) NOT NULL DEFAULT 1.5 AFTER a")
    assert _q(cur, "SELECT * FROM t WHERE id = ?", (2,)) == [(2, 1, pytest.approx(1.5), "s1")]
    # the view fixed what * meant when it was created
    assert _q(cur, "SELECT * FROM everything WHERE id = ?", (2,)) == [(2, 1, "s1")]
    cur.execute("INSERT INTO t (a, c, b) VALUES (1, 2.25, 'new')")
    assert _q(cur, "SELECT n FROM counts WHERE a = ?", (1,)) == [(4,)]

    cur.execute("ALTER TABLE t MODIFY b VARCHAR(20) NOT NULL, ADD INDEX ix_a (a)")
    cur.execute("ALTER TABLE t RENAME COLUMN c TO price")
    assert _q(cur, "SELECT price FROM t WHERE b = ?", ("new",))[0][0] == pytest.approx(2.25)
    cur.execute("UPDATE t SET a = 2 WHERE b = 'new'")
    assert _q(cur, "SELECT n FROM counts WHERE a = ?", (2,)) == [(4,)]
    assert _q(cur, "SELECT n FROM counts WHERE a = ?", (1,)) == [(3,)]

    # a change that leaves a view without its column makes it invalid (MySQL's 1356) ...
    cur.execute("ALTER TABLE t CHANGE a grp INT")
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("SELECT * FROM counts")
    assert info.value.errno == 1356
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("SELECT * FROM everything")
    assert info.value.errno == 1356
    # ... and valid again once the column is back, with every row the table has now
    cur.execute("ALTER TABLE t CHANGE grp a INT")
    assert sorted(_q(cur, "SELECT * FROM counts")) == [(0, 3), (1, 3), (2, 4)]

    cur.execute("ALTER TABLE t RENAME TO t2")
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("SELECT * FROM t")
    assert info.value.errno == 1146
    assert _q(cur, "SELECT COUNT(*) FROM t2") == [(10,)]
    cur.execute("RENAME TABLE t2 TO t")
    assert sorted(_q(cur, "SELECT * FROM counts")) == [(0, 3), (1, 3), (2, 4)]
    cur.execute("ALTER TABLE t DROP COLUMN price, DROP INDEX ix_a")
    assert [r[0] for r in _q(cur, "DESCRIBE t")] == ["id", "a", "b"]
    c.close()


def test_a_failed_alter_changes_nothing():
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))")
    cur.execute("INSERT INTO t VALUES (1, 'abc'), (2, '12'), (3, 'abcdefgh')")
    before = show_create(cur, "t")
    assert _q(cur, "SELECT s FROM t WHERE id = ?", (3,)) == [("abcdefgh",)]
    cases = [
        ("ALTER TABLE t MODIFY s INT", 1292),  # 'abc' is no number
        ("ALTER TABLE t MODIFY s VARCHAR(4)", 1265),  # 'abcdefgh' is too long
        ("ALTER TABLE t ADD UNIQUE (s), MODIFY s VARCHAR(2)", 1265),
        ("ALTER TABLE t ADD COLUMN id INT", 1060),
        ("ALTER TABLE t DROP COLUMN nope", 1091),
        ("ALTER TABLE t DROP INDEX nope", 1091),
        ("ALTER TABLE t ADD PRIMARY KEY (s)", 1068),
        ("ALTER TABLE t MODIFY nope INT", 1054),
        ("ALTER TABLE t ADD INDEX (nope)", 1072),
        ("ALTER TABLE t DROP COLUMN id, DROP COLUMN s", 1090),
        ("ALTER TABLE nope ADD COLUMN x INT", 1146),
        ("ALTER TABLE t ADD COLUMN x INT NOT NULL DEFAULT NULL", 1067),
    ]
    for sql, code in cases:
        with pytest.raises(E.Error) as info:
            cur.execute(sql)
        assert info.value.errno == code, sql
        assert show_create(cur, "t") == before, sql
        assert _q(cur, "SELECT s FROM t WHERE id = ?", (3,)) == [("abcdefgh",)]
    cur.execute("INSERT INTO t VALUES (4, 'd')")  # the engine carries on
    assert _q(cur, "SELECT COUNT(*) FROM t") == [(4,)]
    c.close()


def show_create(cur, table):
    return _q(cur, f"SHOW CREATE TABLE {table}")[0][1]


def test_unique_key_added_over_duplicates_is_refused():
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    cur.execute("INSERT INTO t VALUES (1, 5), (2, 5)")
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("ALTER TABLE t ADD UNIQUE KEY ua (a)")
    assert info.value.errno == 1062
    cur.execute("UPDATE t SET a = 6 WHERE id = 2")
    cur.execute("ALTER TABLE t ADD UNIQUE KEY ua (a)")
    with pytest.raises(E.IntegrityError):
        cur.execute("INSERT INTO t VALUES (3, 6)")
    c.close()


def test_auto_increment_counter_carries_over_and_new_auto_column_numbers_rows():
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a INT)")
    cur.executemany("INSERT INTO t (a) VALUES (?)", [(i,) for i in range(5)])
    cur.execute("DELETE FROM t WHERE id = 5")
    cur.execute("ALTER TABLE t ADD COLUMN b INT")
    cur.execute("INSERT INTO t (a) VALUES (99)")
    assert cur.lastrowid == 6  # as in MySQL: the counter is not reset to the highest row
    cur.execute("CREATE TABLE u (a VARCHAR(5))")
    cur.executemany("INSERT INTO u VALUES (?)", [("x",), ("y",), ("z",)])
    cur.execute("ALTER TABLE u ADD COLUMN id INT NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST")
    assert _q(cur, "SELECT id, a FROM u ORDER BY id") == [(1, "x"), (2, "y"), (3, "z")]
    cur.execute("INSERT INTO u (a) VALUES ('w')")
    assert cur.lastrowid == 4
    c.close()


def test_alter_survives_a_restart_and_keeps_created_indexes(tmp_path):
    path = str(tmp_path / "alter.db")
    c, cur = _conn(path)
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b_x VARCHAR(5))")
    cur.execute("CREATE UNIQUE INDEX u_b ON t (b_x)")
    cur.execute("CREATE VIEW v AS SELECT id, b_x FROM t")
    cur.execute("INSERT INTO t VALUES (1, 1, 'p'), (2, 2, 'q')")
    cur.execute("ALTER TABLE t ADD COLUMN c INT DEFAULT 3, DROP COLUMN a")
    text = show_create(cur, "t")
    assert "UNIQUE KEY `u_b`" in text
    c.close()
    c, cur = _conn(path)
    assert show_create(cur, "t") == text
    assert _q(cur, "SELECT * FROM t ORDER BY id") == [(1, "p", 3), (2, "q", 3)]
    assert _q(cur, "SELECT * FROM v ORDER BY id") == [(1, "p"), (2, "q")]
    with pytest.raises(E.IntegrityError):
        cur.execute("INSERT INTO t (id, b_x) VALUES (3, 'p')")
    cur.execute("DROP INDEX u_b ON t")
    cur.execute("INSERT INTO t (id, b_x) VALUES (3, 'p')")
    c.close()
    raw = sqlite3.connect(path)  # the catalog holds one entry per table, views after it
    kinds = [k for (k,) in raw.execute("SELECT kind FROM __noria_catalog ORDER BY seq")]
    raw.close()
    assert kinds == ["table", "view"]


def test_a_second_engine_on_the_file_follows_the_change(tmp_path):
    path = str(tmp_path / "shared.db")
    a, acur = _conn(path)
    b, bcur = _conn(path)
    acur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    acur.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    b.engine.sync()  # another process's commit reaches this one within moments; now, here
    assert _q(bcur, "SELECT a FROM t WHERE id = ?", (1,)) == [(10,)]
    acur.execute("ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7, MODIFY a BIGINT")
    acur.execute("UPDATE t SET c = 8 WHERE id = 2")
    b.engine.sync()
    assert _q(bcur, "SELECT * FROM t WHERE id = ?", (2,)) == [(2, 20, 8)]
    assert _q(bcur, "SELECT a FROM t WHERE id = ?", (1,)) == [(10,)]
    a.close()
    b.close()


def test_alter_while_other_threads_write_and_read():
    """Writers insert and readers read cached queries while the table is altered several
    times; afterwards every cached answer equals a fresh count from base storage."""
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, g INT, v INT)")
    cur.execute("CREATE VIEW per_g AS SELECT g, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY g")
    stop = threading.Event()
    errors: list = []

    def writer(k):
        wc = c.cursor()
        done = 0
        while not stop.is_set() or done < 8:  # every group gets rows, however fast the ALTERs
            try:
                wc.execute("INSERT INTO t (g, v) VALUES (?, ?)", (done % 4, k))
                done += 1
            except E.Error as e:
                if e.errno != 1054:  # v is briefly called w
                    errors.append(e)
                    return

    def reader():
        rc = c.cursor()
        while not stop.is_set():
            try:
                rc.execute("SELECT n FROM per_g WHERE g = ?", (1,))
                rc.fetchall()
            except E.Error as e:
                if e.errno != 1356:  # the view is briefly invalid between two ALTERs
                    errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in (1, 2)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    try:
        for sql in (
            "ALTER TABLE t ADD COLUMN note VARCHAR(10) DEFAULT 'n'",
            "ALTER TABLE t ADD INDEX ix_g (g)",
            "ALTER TABLE t MODIFY v BIGINT",
            "ALTER TABLE t RENAME COLUMN v TO w",
            "ALTER TABLE t RENAME COLUMN w TO v",
            "ALTER TABLE t DROP COLUMN note",
        ):
            cur.execute(sql)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    raw = c.engine.storage.conn.execute(  # base storage itself, past the engine
        "SELECT g, COUNT(*), SUM(v) FROM t GROUP BY g ORDER BY g"
    ).fetchall()
    assert len(raw) == 4 and sum(n for _g, n, _s in raw) > 0
    for g, n, s in raw:
        got = _q(cur, "SELECT n, s FROM per_g WHERE g = ?", (g,))
        assert [(int(x), int(y)) for x, y in got] == [(n, s)]
    c.close()


def test_check_constraints_are_enforced_and_kept(tmp_path):
    path = str(tmp_path / "checks.db")
    c, cur = _conn(path)
    cur.execute(
        "CREATE TABLE ck (id INT PRIMARY KEY CHECK (id > 0), lo INT, hi INT, "
        "CONSTRAINT lo_below_hi CHECK (lo < hi))"
    )
    cur.execute("INSERT INTO ck VALUES (1, 1, 2), (2, NULL, 5)")  # NULL passes a CHECK
    for sql, name in (
        ("INSERT INTO ck VALUES (0, 1, 2)", "ck_chk_1"),
        ("INSERT INTO ck VALUES (3, 5, 2)", "lo_below_hi"),
        ("UPDATE ck SET lo = 9 WHERE id = 1", "lo_below_hi"),
        ("INSERT INTO ck VALUES (4, 1, 2), (5, 3, 3)", "lo_below_hi"),
    ):
        with pytest.raises(E.IntegrityError) as info:
            cur.execute(sql)
        assert info.value.errno == 3819 and name in str(info.value), sql
    assert _q(cur, "SELECT id FROM ck ORDER BY id") == [(1,), (2,)]  # nothing of a failed write
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("ALTER TABLE ck DROP COLUMN hi")  # lo_below_hi uses it
    assert info.value.errno == 3959
    with pytest.raises(E.DataError) as info:
        cur.execute("ALTER TABLE ck MODIFY lo INT NOT NULL, ADD COLUMN z INT")  # row 2's lo
    assert info.value.errno == 1265
    c.close()
    c, cur = _conn(path)  # the constraints come back from the catalog
    text = show_create(cur, "ck")
    assert "CONSTRAINT `lo_below_hi` CHECK" in text and "`ck_chk_1`" in text
    with pytest.raises(E.IntegrityError):
        cur.execute("INSERT INTO ck VALUES (3, 5, 2)")
    cur.execute("ALTER TABLE ck DROP CHECK lo_below_hi")
    cur.execute("INSERT INTO ck VALUES (3, 5, 2)")
    rows = _q(
        cur,
        "SELECT constraint_name FROM information_schema.check_constraints "
        "WHERE table_name = 'ck' ORDER BY constraint_name",
    )
    assert rows == [("ck_chk_1",)]
    c.close()


def test_foreign_key_cascades_reach_cached_views_and_survive_a_restart(tmp_path):
    path = str(tmp_path / "fk.db")
    c, cur = _conn(path)
    cur.execute("CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(20))")
    cur.execute(
        "CREATE TABLE books (id INT PRIMARY KEY, author_id INT, title VARCHAR(20), "
        "FOREIGN KEY (author_id) REFERENCES authors (id) ON DELETE CASCADE ON UPDATE CASCADE)"
    )
    cur.execute(
        "CREATE TABLE reviews (id INT PRIMARY KEY, book_id INT, "
        "CONSTRAINT r_book FOREIGN KEY (book_id) REFERENCES books (id) ON DELETE SET NULL)"
    )
    cur.execute("INSERT INTO authors VALUES (1, 'ann'), (2, 'bob')")
    cur.execute("INSERT INTO books VALUES (10, 1, 'a'), (11, 1, 'b'), (12, 2, 'c')")
    cur.execute("INSERT INTO reviews VALUES (100, 10), (101, 12)")
    per_author = "SELECT a.name, COUNT(b.id) FROM authors a LEFT JOIN books b ON b.author_id = a.id WHERE a.id = ? GROUP BY a.name"
    assert _q(cur, per_author, (1,)) == [("ann", 2)]
    assert _q(cur, "SELECT COUNT(*) FROM reviews WHERE book_id IS NULL") == [(0,)]
    cur.execute("DELETE FROM authors WHERE id = 1")  # books 10, 11 go; review 100 loses its book
    assert _q(cur, per_author, (1,)) == []
    assert _q(cur, "SELECT COUNT(*) FROM reviews WHERE book_id IS NULL") == [(1,)]
    cur.execute("UPDATE authors SET id = 7 WHERE id = 2")  # book 12 follows
    assert _q(cur, "SELECT author_id FROM books WHERE id = ?", (12,)) == [(7,)]
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("INSERT INTO books VALUES (13, 99, 'x')")
    assert info.value.errno == 1452
    cur.execute("SET FOREIGN_KEY_CHECKS = 0")
    cur.execute("INSERT INTO books VALUES (13, 99, 'x')")
    cur.execute("SET FOREIGN_KEY_CHECKS = 1")
    c.close()
    c, cur = _conn(path)
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("INSERT INTO books VALUES (14, 98, 'y')")
    assert info.value.errno == 1452
    cur.execute("DELETE FROM authors WHERE id = 7")
    assert _q(cur, "SELECT id FROM books ORDER BY id") == [(13,)]
    rows = _q(
        cur,
        "SELECT constraint_name, delete_rule, referenced_table_name FROM "
        "information_schema.referential_constraints ORDER BY constraint_name",
    )
    assert rows == [("books_ibfk_1", "CASCADE", "authors"), ("r_book", "SET NULL", "books")]
    c.close()


def test_alter_add_check_checks_the_rows_there_are():
    c, cur = _conn()
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    cur.execute("INSERT INTO t VALUES (1, 5), (2, -1)")
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("ALTER TABLE t ADD CHECK (a > 0)")  # row 2 breaks it: nothing changes
    assert info.value.errno == 3819
    cur.execute("INSERT INTO t VALUES (3, -7)")
    cur.execute("DELETE FROM t WHERE a < 0")
    cur.execute("ALTER TABLE t ADD CHECK (a > 0), ADD CONSTRAINT small CHECK (a < 100)")
    for bad in ("INSERT INTO t VALUES (4, 0)", "INSERT INTO t VALUES (4, 100)"):
        with pytest.raises(E.IntegrityError) as info:
            cur.execute(bad)
        assert info.value.errno == 3819
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("ALTER TABLE t ADD CONSTRAINT small CHECK (a < 5)")
    assert info.value.errno == 3822
    with pytest.raises(E.ProgrammingError) as info:
        cur.execute("ALTER TABLE t ADD CHECK (nope > 1)")
    assert info.value.errno == 3820
    assert "CONSTRAINT `t_chk_1` CHECK (`a` > 0)" in show_create(cur, "t")
    c.close()


def test_renaming_a_parent_renames_the_references(tmp_path):
    c, cur = _conn(str(tmp_path / "rename.db"))
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) REFERENCES p (id))")
    cur.execute(
        "CREATE TABLE ch (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) "
        "REFERENCES p (id) ON DELETE CASCADE)"
    )
    cur.execute("INSERT INTO p VALUES (1, NULL), (2, 1)")
    cur.execute("INSERT INTO ch VALUES (10, 1), (11, 2)")
    cur.execute("ALTER TABLE p RENAME COLUMN id TO pk")
    cur.execute("RENAME TABLE p TO parent")
    assert "REFERENCES `parent` (`pk`) ON DELETE CASCADE" in show_create(cur, "ch")
    assert "REFERENCES `parent` (`pk`)" in show_create(cur, "parent")  # its own, too
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("INSERT INTO ch VALUES (12, 9)")
    assert info.value.errno == 1452
    with pytest.raises(E.OperationalError) as info:
        cur.execute("ALTER TABLE parent DROP COLUMN pk")
    assert info.value.errno == 1828
    with pytest.raises(E.IntegrityError) as info:
        cur.execute("DELETE FROM parent WHERE pk = 1")  # parent row 2 refers to it
    assert info.value.errno == 1451
    cur.execute("DELETE FROM parent WHERE pk = 2")  # its child 11 goes with it
    assert _q(cur, "SELECT id FROM ch") == [(10,)]
    c.close()
    c, cur = _conn(str(tmp_path / "rename.db"))  # and so after a restart
    assert "REFERENCES `parent` (`pk`) ON DELETE CASCADE" in show_create(cur, "ch")
    c.close()

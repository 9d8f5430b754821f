"""INSERT ... ON DUPLICATE KEY UPDATE: MySQL's row counts, VALUES(), unique keys, views kept."""

from __future__ import annotations

import pytest

import noria_py


@pytest.fixture
def conn():
    c = noria_py.connect()
    c.execute("CREATE TABLE k (id INT PRIMARY KEY, name VARCHAR(10) UNIQUE, n INT NOT NULL)")
    yield c
    c.close()


Q = "SELECT name, n FROM k WHERE id = ?"
TOTAL = "SELECT SUM(n) FROM k"


def test_insert_then_update_counts_like_mysql(conn):
    assert conn.execute(Q, (1,)).fetchall() == []
    assert conn.execute(TOTAL).fetchall() == [(None,)]
    up = "INSERT INTO k VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE n = n + VALUES(n)"
    assert conn.execute(up, (1, "a", 1)).rowcount == 1  # inserted
    assert conn.execute(up, (1, "a", 5)).rowcount == 2  # updated
    assert conn.execute(Q, (1,)).fetchall() == [("a", 6)]
    same = "INSERT INTO k VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE n = n"
    assert conn.execute(same, (1, "a", 9)).rowcount == 0  # unchanged
    assert conn.execute(TOTAL).fetchall() == [(6,)]


def test_duplicate_on_a_unique_key_updates_that_row(conn):
    conn.execute("INSERT INTO k VALUES (1, 'a', 1)")
    conn.execute("INSERT INTO k VALUES (2, 'a', 5) ON DUPLICATE KEY UPDATE n = 100")
    assert conn.execute(Q, (1,)).fetchall() == [("a", 100)]
    assert conn.execute(Q, (2,)).fetchall() == []


def test_executemany_mixes_inserts_and_updates(conn):
    conn.execute("INSERT INTO k VALUES (1, 'a', 1)")
    cur = conn.executemany(
        "INSERT INTO k VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE n = n + 1",
        [(1, "a", 0), (3, "c", 7)],
    )
    assert cur.rowcount == 3
    assert conn.execute("SELECT * FROM k ORDER BY id").fetchall() == [(1, "a", 2), (3, "c", 7)]


def test_a_failing_update_changes_nothing(conn):
    conn.execute("INSERT INTO k VALUES (1, 'a', 1), (3, 'c', 7)")
    with pytest.raises(noria_py.IntegrityError) as e:
        conn.execute("INSERT INTO k VALUES (1, 'a', 5) ON DUPLICATE KEY UPDATE id = 3")
    assert e.value.errno == 1062
    with pytest.raises(noria_py.IntegrityError):
        conn.execute("INSERT INTO k VALUES (1, 'a', 5) ON DUPLICATE KEY UPDATE n = NULL")
    assert conn.execute("SELECT * FROM k ORDER BY id").fetchall() == [(1, "a", 1), (3, "c", 7)]
    assert conn.execute(TOTAL).fetchall() == [(8,)]


def test_row_alias_of_mysql_8():
    """``INSERT ... VALUES (...) AS new [(cols)] ON DUPLICATE KEY UPDATE``: the alias names the
    row that was to be inserted (MySQL 8.0.19; MariaDB has only VALUES(col)), and a cached
    view follows the updates."""
    import noria_py

    c = noria_py.connect()
    c.execute("CREATE TABLE ra (id INT PRIMARY KEY, a INT, n INT DEFAULT 3)")
    c.execute("CREATE VIEW ra_sum AS SELECT SUM(a) AS s FROM ra")
    c.execute("INSERT INTO ra (id, a) VALUES (1, 5)")
    assert c.execute("SELECT s FROM ra_sum").fetchall()[0][0] == 5
    c.execute(
        "INSERT INTO ra (id, a) VALUES (1, 7) AS new ON DUPLICATE KEY UPDATE a = new.a + ra.a"
    )
    assert c.execute("SELECT id, a FROM ra").fetchall() == [(1, 12)]
    c.execute(
        "INSERT INTO ra (id, a) VALUES (1, 1), (2, 4) AS new(i, x) "
        "ON DUPLICATE KEY UPDATE a = x * 10 + i"
    )
    assert sorted(c.execute("SELECT id, a FROM ra").fetchall()) == [(1, 11), (2, 4)]
    c.execute("INSERT INTO ra VALUES (2, 0, 9) AS r ON DUPLICATE KEY UPDATE n = r.n + VALUES(n)")
    assert c.execute("SELECT n FROM ra WHERE id = 2").fetchall() == [(18,)]
    assert c.execute("SELECT s FROM ra_sum").fetchall()[0][0] == 15
    with pytest.raises(noria_py.ProgrammingError) as info:
        c.execute("INSERT INTO ra (id, a) VALUES (1, 1) AS new(i) ON DUPLICATE KEY UPDATE a = i")
    assert info.value.errno == 1353
    with pytest.raises(noria_py.ProgrammingError) as info:
        c.execute(
            "INSERT INTO ra (id, a) VALUES (1, 1) AS new(i, x) ON DUPLICATE KEY UPDATE a = new.a"
        )
    assert info.value.errno == 1054
    c.close()

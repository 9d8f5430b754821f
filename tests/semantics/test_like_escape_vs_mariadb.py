"""``LIKE ... ESCAPE`` compared with MariaDB, on the dataflow and on base storage.

With a parameter for the pattern or the escape (as literal lifting makes of every literal, and
as ORMs send ``LIKE ? ESCAPE '/'``), or a column that has its own collation, base storage was
sent ``<the compiled LIKE> ESCAPE '!'``, a syntax error. An empty or NULL escape is the
backslash, as MariaDB reads it (it had meant no escape); more than one character is 1210.
"""

from __future__ import annotations

import pytest

from noria_py import errors as E

from . import both_sides

SETUP = [
    "CREATE TABLE le (id INT PRIMARY KEY, a VARCHAR(20) COLLATE utf8mb4_bin, c VARCHAR(20),"
    " v VARBINARY(20))",
    "INSERT INTO le VALUES (1, 'Straße', 'Straße', 'Ab'), (4, 'a_b%', 'a_B%', 'a_b'),"
    " (5, 'a!b', 'A!xb', 'A_b'), (6, 'x/%y', 'X/%Y', NULL)",
]
QUERIES = [
    ("SELECT id FROM le WHERE a LIKE 'a!_b!%' ESCAPE '!' ORDER BY id", []),
    ("SELECT id FROM le WHERE c LIKE 'a!_b!%' ESCAPE '!' ORDER BY id", []),
    ("SELECT id FROM le WHERE a LIKE ? ESCAPE ? ORDER BY id", ["a!_b!%", "!"]),
    ("SELECT id FROM le WHERE c LIKE ? ESCAPE '/' ORDER BY id", ["%//%%"]),
    ("SELECT id FROM le WHERE id = ? AND c LIKE ? ESCAPE ?", [4, "a!_b%", "!"]),
    ("SELECT id FROM le WHERE c LIKE CONCAT(?, '%') ESCAPE '!' ORDER BY id", ["a!_"]),
    ("SELECT id FROM le WHERE v LIKE 'a|_%' ESCAPE '|' ORDER BY id", []),
    ("SELECT id FROM le WHERE c NOT LIKE 'a#%' ESCAPE '#' ORDER BY id", []),
    (
        "SELECT id, c LIKE 'a!_b%' ESCAPE '', c LIKE 'a\\\\_b%' ESCAPE '',"
        " a LIKE 'a!_%' ESCAPE NULL FROM le ORDER BY id",
        [],
    ),
    ("SELECT id FROM le WHERE c LIKE 'a!_b' ESCAPE '!!'", []),
    ("SELECT id FROM le WHERE c LIKE ? ESCAPE ?", ["a!_b", "!!"]),
]


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    yield from both_sides(mariadb_oracle, SETUP, "le")


@pytest.mark.parametrize("sql,params", QUERIES)
def test_like_escape_as_mariadb(sides, sql, params):
    ours, cur = sides
    try:
        if params:
            cur.execute(sql.replace("%", "%%").replace("?", "%s"), params)
        else:
            cur.execute(sql)
        want = ("rows", [tuple(r) for r in cur.fetchall()])
    except Exception as e:  # noqa: BLE001 - pymysql's errors
        want = ("error", e.args[0])
    for mode, conn in ours.items():
        try:
            got = ("rows", [tuple(r) for r in conn.execute(sql, params).fetchall()])
        except E.Error as e:
            got = ("error", e.errno)
        assert got == want, mode

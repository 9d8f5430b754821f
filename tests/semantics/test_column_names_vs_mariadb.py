"""Result column names compared with a real MariaDB: an unaliased item is named by its text as
written (``count(*)``, ``a+1`` and ``a + 1`` differ), a string literal by its value, a column
by its name, on the dataflow, on base storage and for a SELECT without FROM."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py

from . import both_sides

SETUP = [
    "CREATE TABLE nm (id INT PRIMARY KEY, a INT, s VARCHAR(10))",
    "INSERT INTO nm VALUES (1, 2, 'x'), (2, 3, 'y')",
]

ITEMS = [
    "count(*)", "COUNT( * )", "Count(a)", "a+1", "a + 1", "a  *2", "max(a)", "MAX( a )",
    "upper(s)", "`a`", "nm.a", "nm.`s`", "1+1", "'x'", '"y"', "concat(s,'-')",
    "CONCAT( s , \"-\" )", "(a)", "-a", "a DIV 2", "coalesce(a, 0)", "1/3", "NULL", "1.50",
    "a = 2", "a IN (1,2)", "id AS `k`", "s AS label", "(select 1)", "ifnull(s,'')",
]  # fmt: skip
AGGREGATES = ("count", "max")


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    yield from both_sides(mariadb_oracle, SETUP, "nm")


def _names(cursor) -> list[str]:
    return [d[0] for d in cursor.description]


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.sampled_from(ITEMS), min_size=1, max_size=4), table=st.booleans())
def test_unaliased_items_are_named_as_written(sides, items, table):
    ours, cur = sides
    if any(i.lower().startswith(AGGREGATES) for i in items):
        # aggregates beside plain columns are not the point here: keep the query grouped
        items = [i for i in items if i.lower().startswith(AGGREGATES)] or items[:1]
    if not table:
        items = [i for i in items if not any(c in i for c in ("a", "s", "id", "*"))] or ["1+1"]
    sql = "SELECT " + ", ".join(items) + (" FROM nm" if table else "")
    cur.execute(sql)
    theirs = [d[0] for d in cur.description]
    for mode, c in ours.items():
        assert _names(c.execute(sql)) == theirs, (mode, sql)


def test_names_follow_the_text_of_each_statement():
    c = noria_py.connect()
    for sql in SETUP:
        c.execute(sql)
    assert _names(c.execute("SELECT count(*), a+1 FROM nm")) == ["count(*)", "a+1"]
    # the same query spelled differently shares the view, not the names
    assert _names(c.execute("SELECT COUNT(*), a + 1 FROM nm")) == ["COUNT(*)", "a + 1"]
    assert _names(c.execute("SELECT a+? FROM nm WHERE id = ?", (1, 1))) == ["a+?"]
    c.execute("CREATE VIEW v AS SELECT id, a*2 FROM nm")
    assert _names(c.execute("SELECT * FROM v")) == ["id", "a*2"]
    c.close()

"""CREATE TABLE ... AS SELECT with computed columns, compared with a real MariaDB: the stored
values (DECIMALs with their scale, as text), each column's type family and scale, and whether a
later NULL is accepted where MariaDB accepts it. MySQL derives a width from each expression
(``bigint(12)``, ``varchar(11)``); this engine uses the widest of the family, so only the
family and the DECIMAL scale are compared."""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

SOURCE = [
    "CREATE TABLE cs_src (id INT PRIMARY KEY, g INT, n INT, d DECIMAL(6,2), f DOUBLE, "
    "v VARCHAR(10), dt DATE)",
    "INSERT INTO cs_src VALUES (1, 1, 3, 1.50, 2.5, 'x', '2024-01-02'), "
    "(2, 1, -4, 0.05, 0.25, 'yy', '2024-02-29'), (3, 2, NULL, 10.10, NULL, NULL, NULL), "
    "(4, 2, 7, -2.25, 1e10, 'zzz', '2023-12-31')",
]
ROW_EXPRS = [
    "n * 2", "n + 1", "d * n", "d / 3", "n / 3", "d + 1", "f * 2", "CONCAT(v, '!')",
    "UPPER(v)", "1.5", "'ab'", "42", "n + 0.5", "ROUND(d, 1)", "DATE_ADD(dt, INTERVAL 1 DAY)",
    "COALESCE(v, 'none')", "-n", "ABS(d)", "CHAR_LENGTH(v)", "d", "v", "dt",
]  # fmt: skip
GROUP_EXPRS = ["COUNT(*)", "SUM(d)", "AVG(d)", "MAX(d)", "MIN(v)", "SUM(n)", "AVG(n)", "MAX(f)"]


@st.composite
def _select(draw):
    if draw(st.booleans()):
        exprs = draw(st.lists(st.sampled_from(GROUP_EXPRS), min_size=1, max_size=4, unique=True))
        items = ["g"] + [f"{e} AS c{i}" for i, e in enumerate(exprs)]
        return f"SELECT {', '.join(items)} FROM cs_src GROUP BY g"
    exprs = draw(st.lists(st.sampled_from(ROW_EXPRS), min_size=1, max_size=5, unique=True))
    items = ["id"] + [f"{e} AS c{i}" for i, e in enumerate(exprs)]
    return f"SELECT {', '.join(items)} FROM cs_src"


def _value(v):
    if isinstance(v, Decimal):
        return ("D", str(v))  # the scale is part of the answer
    if isinstance(v, float):
        return ("F", round(v, 6))
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    return v


def _family(column_type: str) -> tuple:
    t = column_type.lower().split(" ")[0]
    base = t.split("(")[0]
    family = {
        "int": "int", "bigint": "int", "tinyint": "int", "smallint": "int", "mediumint": "int",
        "decimal": "decimal", "double": "double", "float": "double", "date": "date",
        "varchar": "text", "char": "text", "text": "text", "longtext": "text",
        "mediumtext": "text", "tinytext": "text",
    }.get(base, base)  # fmt: skip
    scale = t.split(",")[1].rstrip(")") if family == "decimal" else None
    return family, scale


@pytest.fixture(scope="module")
def theirs(mariadb_oracle):
    conn = mariadb_oracle.connect()
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS cs_src, cs_new")
    for sql in SOURCE:
        cur.execute(sql)
    yield cur
    cur.execute("DROP TABLE IF EXISTS cs_src, cs_new")
    conn.close()


@settings(max_examples=60)
@given(_select())
def test_computed_columns_match_mariadb(theirs, select):
    theirs.execute("DROP TABLE IF EXISTS cs_new")
    theirs.execute(f"CREATE TABLE cs_new AS {select}")
    c = noria_py.connect()
    try:
        for sql in SOURCE:
            c.execute(sql)
        c.execute(f"CREATE TABLE cs_new AS {select}")
        theirs.execute("SELECT * FROM cs_new")
        want = sorted((tuple(_value(v) for v in r) for r in theirs.fetchall()), key=repr)
        got = sorted(
            (tuple(_value(v) for v in r) for r in c.execute("SELECT * FROM cs_new").fetchall()),
            key=repr,
        )
        assert got == want, select
        theirs.execute(
            "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'cs_new' ORDER BY ORDINAL_POSITION"
        )
        their_cols = theirs.fetchall()
        our_cols = c.execute(
            "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'cs_new' ORDER BY ORDINAL_POSITION"
        ).fetchall()
        assert [n for n, _t, _u in our_cols] == [n for n, _t, _u in their_cols]
        for (name, ours_t, ours_null), (_n, their_t, their_null) in zip(our_cols, their_cols):
            assert _family(ours_t) == _family(their_t), (select, name, ours_t, their_t)
            if their_null == "YES":  # a NULL MariaDB would take, this engine takes too
                assert ours_null == "YES", (select, name)
    finally:
        c.close()


def test_a_null_select_item_is_refused_clearly():
    c = noria_py.connect()
    c.execute("CREATE TABLE t (id INT)")
    c.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(E.NotSupportedError) as info:
        c.execute("CREATE TABLE u AS SELECT id, NULL AS nothing FROM t")
    assert info.value.errno == 1235
    c.close()

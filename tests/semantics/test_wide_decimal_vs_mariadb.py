"""DECIMAL columns wider than a double's 15 digits, and DECIMAL quotients, compared with a real
MariaDB.

Values that differ only in their last digits (where a double would make them equal) are
stored, compared, sorted, grouped, joined, summed and averaged on the dataflow and on base
storage, after inserts, updates and deletes; quotients and averages go on into arithmetic with
the digits MySQL keeps. Every answer must equal MariaDB's digit for digit, with the same
scale."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py

from . import both_sides

TABLE = (
    "CREATE TABLE wd (id INT PRIMARY KEY, g INT, d DECIMAL(30,10), e DECIMAL(30,10), "
    "n DECIMAL(12,2))"
)

# values around a few bases, so that near-equal values (equal as doubles) are common
_BASES = [
    Decimal("12345678901234567890.1234567890"),
    Decimal("-98765432109876543210.0000000001"),
    Decimal("0.0000000001"),
    Decimal("99999999999999999999.9999999999"),
]

_wide = st.one_of(
    st.builds(
        lambda base, off: max(min(base + off * Decimal("1E-10"), _BASES[3]), -_BASES[3]),
        st.sampled_from(_BASES),
        st.integers(-3, 3),
    ),
    st.builds(
        lambda i, f: Decimal(f"{i}.{f:010d}"),
        st.integers(-(10**20) + 1, 10**20 - 1),
        st.integers(0, 10**10 - 1),
    ),
    st.none(),
)
_narrow = st.one_of(
    st.builds(lambda c: Decimal(c).scaleb(-2), st.integers(-(10**12) + 1, 10**12 - 1)),
    st.none(),
)

_rows = st.lists(st.tuples(st.integers(0, 2), _wide, _wide, _narrow), min_size=1, max_size=6)

QUERIES = [
    ("SELECT id, d FROM wd ORDER BY d, id", False),
    ("SELECT id FROM wd WHERE d = ? ORDER BY id", True),
    ("SELECT id FROM wd WHERE d > ? ORDER BY id", True),
    ("SELECT id FROM wd WHERE d = {lit} ORDER BY id", True),
    ("SELECT id FROM wd WHERE d <= {lit} ORDER BY id", True),
    ("SELECT id FROM wd WHERE d = '{lit}' ORDER BY id", True),
    ("SELECT id FROM wd WHERE d IN ('{lit}') ORDER BY id", True),
    ("SELECT id FROM wd WHERE d IN ({lit}, 1) ORDER BY id", True),
    ("SELECT id FROM wd WHERE d BETWEEN {lit} AND 99999999999999999999 ORDER BY id", True),
    ("SELECT SUM(d), MIN(d), MAX(d), COUNT(DISTINCT d), SUM(n) FROM wd", False),
    ("SELECT AVG(d), AVG(n) FROM wd", False),
    ("SELECT g, SUM(d), MAX(e) FROM wd GROUP BY g ORDER BY g", False),
    ("SELECT d, COUNT(*) FROM wd GROUP BY d ORDER BY d", False),
    ("SELECT DISTINCT e FROM wd ORDER BY e", False),
    ("SELECT id, d + e, d - e, d * 2, d + n FROM wd ORDER BY id", False),
    ("SELECT a.id, b.id FROM wd a JOIN wd b ON a.d = b.e ORDER BY 1, 2", False),
    ("SELECT id FROM wd WHERE d > e ORDER BY id", False),
    ("SELECT id FROM wd WHERE d > n ORDER BY id", False),
    ("SELECT g, SUM(d + e) FROM wd WHERE id > ? GROUP BY g ORDER BY g", "id"),
    ("SELECT id FROM wd WHERE d IN (SELECT e FROM wd) ORDER BY id", False),
    # quotients keep MySQL's extra digits through arithmetic, and are shown rounded
    ("SELECT AVG(d) * 2, SUM(d) / 3, AVG(n * 2), AVG(n) * 3000000, SUM(n / 3) FROM wd", False),
    ("SELECT g, AVG(d) * 3, MAX(n / 7) * 7 FROM wd GROUP BY g ORDER BY g", False),
    ("SELECT n / 3 AS q, COUNT(*) FROM wd GROUP BY q ORDER BY q", False),
    ("SELECT id, n / 7 * 7, d / 3 * 3 FROM wd WHERE n / 3 = ROUND(n / 3, 6) ORDER BY id", False),
    ("SELECT g, SUM(n) / COUNT(*) FROM wd WHERE id IN (SELECT id FROM wd) GROUP BY g", False),
    # a DECIMAL result column compared and sorted by value, on base storage too
    ("SELECT g, SUM(n) AS s FROM wd GROUP BY g HAVING s > 0 ORDER BY s DESC, g", False),
    ("SELECT id, n * 2 AS x FROM wd WHERE id IN (SELECT id FROM wd) ORDER BY x, id", False),
    ("SELECT g, AVG(d) AS a FROM wd GROUP BY g HAVING a < 1 ORDER BY a, g", False),
]

# through a derived table (maintained by the dataflow; base storage types it from values)
DATAFLOW_ONLY = [
    "SELECT g, AVG(x), SUM(x) / 3 FROM (SELECT g, n * 2 AS x FROM wd) s GROUP BY g ORDER BY g",
    "SELECT id, q * 3000000, q FROM (SELECT id, n / 3 AS q FROM wd) s ORDER BY id",
]


def _exact(rows):
    """Rows with each DECIMAL as its text: 1.10 and 1.1 differ, as MySQL shows them."""
    return [tuple(str(v) if isinstance(v, Decimal) else v for v in r) for r in rows]


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    yield from both_sides(mariadb_oracle, [TABLE], "wd")


def _write(ours, cur, sql, params):
    cur.execute(sql.replace("?", "%s"), params)
    for c in ours.values():
        c.execute(sql, params)


@settings(max_examples=40, deadline=None)
@given(
    rows=_rows,
    probe=_wide.filter(lambda v: v is not None),
    pick=st.integers(0, 5),
    as_text=st.booleans(),
    change=st.sampled_from(["none", "update", "delete"]),
    double=st.booleans(),
)
def test_wide_decimals_answer_as_mariadb(sides, rows, probe, pick, as_text, change, double):
    ours, cur = sides
    _write(ours, cur, "DELETE FROM wd", [])
    for i, (g, d, e, n) in enumerate(rows):
        _write(ours, cur, "INSERT INTO wd VALUES (?, ?, ?, ?, ?)", [i, g, d, e, n])
    # a probe equal to a stored value half of the time
    stored = [r[1] for r in rows if r[1] is not None]
    if stored and pick % 2 == 0:
        probe = stored[pick % len(stored)]
    # the probe as a literal: exact (a DECIMAL) or with an exponent (a DOUBLE)
    lit = format(probe, "f") + ("e0" if double else "")
    for sql, takes in QUERIES:
        for c in ours.values():  # warm the caches, so the change below is maintained
            c.execute(sql.replace("{lit}", lit), _params(takes, probe, as_text, sql))
    if change == "update":
        _write(ours, cur, "UPDATE wd SET d = ? WHERE id = 0", [probe])
    elif change == "delete":
        _write(ours, cur, "DELETE FROM wd WHERE id = 0", [])
    for sql, takes in QUERIES:
        text = sql.replace("{lit}", lit)
        params = _params(takes, probe, as_text, sql)
        cur.execute(text.replace("?", "%s"), params)
        theirs = _exact(cur.fetchall())
        for mode, c in ours.items():
            got = _exact(c.execute(text, params).fetchall())
            assert got == theirs, f"{mode}: {text} {params}: noria {got}, MariaDB {theirs}"
    for sql in DATAFLOW_ONLY:
        cur.execute(sql)
        theirs = _exact(cur.fetchall())
        got = _exact(ours["dataflow"].execute(sql).fetchall())
        assert got == theirs, f"dataflow: {sql}: noria {got}, MariaDB {theirs}"


def _params(takes, probe, as_text, sql):
    if "?" not in sql:
        return []
    if takes == "id":
        return [0]
    return [str(probe) if as_text else probe]


def test_wide_decimal_keeps_every_digit_through_storage():
    c = noria_py.connect()
    c.execute("CREATE TABLE w (id INT PRIMARY KEY, d DECIMAL(30,10))")
    a, b = "12345678901234567890.1234567890", "12345678901234567890.1234567891"
    c.execute(f"INSERT INTO w VALUES (1, {a}), (2, {b})")
    assert [str(r[0]) for r in c.execute("SELECT d FROM w ORDER BY id")] == [a, b]
    assert c.execute("SELECT id FROM w WHERE d = ?", [Decimal(b)]).fetchall() == [(2,)]
    assert c.execute("SELECT COUNT(DISTINCT d) FROM w").fetchall() == [(2,)]
    # a unique key tells the two apart, and a value equal to a stored one in other digits is
    # a duplicate
    c.execute("CREATE UNIQUE INDEX ud ON w (d)")
    with pytest.raises(noria_py.IntegrityError):
        c.execute("INSERT INTO w VALUES (3, 12345678901234567890.123456789)")
    c.close()

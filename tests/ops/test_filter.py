from hypothesis import given
from hypothesis import strategies as st

from noria_py.dataflow.ops.filter import Filter

from .helpers import Stub, bag, small, valid_history


def make():
    return Filter(Stub(2), lambda r, p: r[0] is not None and r[0] > 0, "#0 > 0")


def test_passes_only_true_rows():
    f = make()
    out = f.on_input(0, [((1, 2), 1), ((0, 2), 1), ((None, 1), 1), ((3, 3), -1)])
    assert out == [((1, 2), 1), ((3, 3), -1)]


@given(valid_history(st.tuples(small, small)), st.integers(0, 25))
def test_one_by_one_equals_sum(history, split):
    a, b = make(), make()
    one = []
    for rec in history:
        one.extend(a.on_input(0, [rec]))
    summed = b.on_input(0, history[:split]) + b.on_input(0, history[split:])
    assert bag(one) == bag(summed) == bag(b.on_input(0, history) if False else summed)


def test_equalities_over_a_base_table_read_by_one_lookup(monkeypatch):
    """A full state over a filter of ``integer column = integer`` terms and NULL tests reads
    only the rows they select, by one SQL query with those conditions (``sqlrel``: no scan of
    the table in Python); any other predicate (OR, a string column, a range) scans it. The
    answers are the same either way."""
    import noria_py

    conn = noria_py.connect()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b TINYINT, s VARCHAR(4))")
    rows = [
        (i, i % 3 if i % 4 else None, i % 2 - (i % 5 == 0), None if i % 7 == 0 else f"x{i % 2}")
        for i in range(40)
    ]
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    storage = conn.engine.storage
    scans = []
    scan = storage.scan
    monkeypatch.setattr(storage, "scan", lambda table: scans.append(table) or scan(table))
    views = {
        "both": ("SELECT a, COUNT(*) AS c FROM t WHERE b = 1 AND a = 2 GROUP BY a", False),
        "neg": ("SELECT id FROM t WHERE b = -1", False),
        "same_twice": ("SELECT id FROM t WHERE a = 1 AND a = 1", False),
        "contradiction": ("SELECT id FROM t WHERE a = 1 AND a = 2", False),
        "nulls": ("SELECT id FROM t WHERE a IS NOT NULL AND b = 1 AND s IS NULL", False),
        "null_only": ("SELECT id FROM t WHERE a IS NULL", False),
        "either": ("SELECT id FROM t WHERE b = 1 OR a = 2", True),
        "string": ("SELECT id FROM t WHERE s = 'x1'", True),
        "range": ("SELECT id FROM t WHERE b = 1 AND a > 0", True),
    }
    want = {
        "both": [(2, sum(1 for r in rows if r[2] == 1 and r[1] == 2))],
        "neg": [(r[0],) for r in rows if r[2] == -1],
        "same_twice": [(r[0],) for r in rows if r[1] == 1],
        "contradiction": [],
        "nulls": [(r[0],) for r in rows if r[1] is not None and r[2] == 1 and r[3] is None],
        "null_only": [(r[0],) for r in rows if r[1] is None],
        "either": [(r[0],) for r in rows if r[2] == 1 or r[1] == 2],
        "string": [(r[0],) for r in rows if r[3] == "x1"],
        "range": [(r[0],) for r in rows if r[2] == 1 and r[1] is not None and r[1] > 0],
    }
    for name, (sql, scanned) in views.items():
        scans.clear()
        conn.execute(f"CREATE VIEW {name} AS {sql}")
        got = conn.execute(f"SELECT * FROM {name}").fetchall()
        assert sorted(got) == sorted(want[name]), name
        assert bool(scans) == scanned, name
    conn.close()

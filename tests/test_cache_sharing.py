"""Cache sharing: one query (one reader, one SHOW CACHES row) per lookup shape.

* The embedded API lifts the literals of a SELECT executed without parameters into parameters,
  as the server does for client-side binding drivers (``Engine.execute``, ``sql/literals.py``):
  ``SELECT ... WHERE id = 42`` is answered as ``SELECT ... WHERE id = ?`` with 42, unless the
  literal would not compare as a parameter as it does in the text (``lifts_as_written``) or the
  engine refuses the parameterized form; then the text is answered as written.
* ``col IN (?, ..., ?)`` of any length is answered by the query compiled for lists of two
  (``compile.in_list_shape``): a lookup of one key per distinct value.

The answers are compared with base storage (``dataflow=False``), with the parameterized form,
and with the text answered as written (``lift_literals=False``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors
from noria_py.engine import Engine

SCHEMA = [
    "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), v INT, d DECIMAL(6,2), day DATE)",
    "CREATE TABLE u (id INT PRIMARY KEY, tid INT, w VARCHAR(10))",
    "CREATE TABLE n (id INT PRIMARY KEY, big BIGINT, f DOUBLE, w DECIMAL(30,2), s VARCHAR(30))",
]
# strings that differ in case (and in trailing spaces: PAD SPACE) compare equal under the
# default collation
NAMES = ["a", "A", "b", "B ", "ab", "Ab", "c", None, "0", "1e0"]


def _t_row(i: int) -> tuple:
    day = None if i % 5 == 0 else f"2024-01-{1 + i % 28:02d}"
    return (i, NAMES[i % len(NAMES)], (i * 7) % 11, f"{i % 4}.50", day)


T_ROWS = [_t_row(i) for i in range(40)]
U_ROWS = [(i, i % 13, f"w{i % 3}") for i in range(30)]
# numbers at the edges of exact doubles, and texts that read as numbers
N_ROWS = [
    (1, 2**63 - 1, 2.0**53, "123456789012345678901234", "9223372036854775807"),
    (2, 2**53, 1.5, "999999999999999", "1e3"),
    (3, 2**53 + 1, 1e18, "0.5", "12abc"),
    (4, 10**18, 0.1, "-12", " 12"),
    (5, -5, -5.0, "100000000000000.5", "abc"),
    (6, 0, 0.0, "0", ""),
    (7, 12, 12.0, "12", "12"),
    (8, None, None, None, None),
]


def _open(**options):
    conn = noria_py.connect(**options)
    cur = conn.cursor()
    for ddl in SCHEMA:
        cur.execute(ddl)
    cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", T_ROWS)
    cur.executemany("INSERT INTO u VALUES (?, ?, ?)", U_ROWS)
    cur.executemany("INSERT INTO n VALUES (?, ?, ?, ?, ?)", N_ROWS)
    return conn


def _readers(conn) -> int:
    return sum(1 for n in conn.engine.graph.nodes.values() if n.kind == "reader")


def _caches(conn) -> list:
    return conn.execute("SHOW CACHES").fetchall()


def _answer(conn, sql, params=()):
    """(rows, description) or the error's number."""
    try:
        cur = conn.execute(sql, params)
        return cur.fetchall(), cur.description
    except errors.Error as e:
        return e.errno


def _sql_literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"
    return str(v)


@pytest.fixture(scope="module")
def conns():
    """Module-wide connections that only read: lifting on, lifting off, base storage (lifting
    on and off)."""
    out = {
        "shared": _open(),
        "written": _open(lift_literals=False),
        "base": _open(dataflow=False),
        "base_written": _open(dataflow=False, lift_literals=False),
    }
    yield out
    for c in out.values():
        c.close()


# --- 1. literal lookups -------------------------------------------------------------------------


def test_literal_lookups_install_one_reader():
    conn = _open()
    written = _open(lift_literals=False)
    base = _open(dataflow=False, lift_literals=False)
    q = "SELECT id, name, v FROM t WHERE id = {}"
    for n in range(100):
        got = _answer(conn, q.format(n))
        assert got == _answer(conn, q.format("?"), (n,))  # the parameterized form
        assert got == _answer(written, q.format(n))  # the text as written: rows, description
        assert got[0] == _answer(base, q.format(n))[0]
    assert _readers(conn) == 1 and len(_caches(conn)) == 1
    assert _caches(conn)[0][1] == "SELECT id, name, v FROM t WHERE id = ?"
    # as written, a reader (and a SHOW CACHES row) per literal
    assert _readers(written) == 100 and len(_caches(written)) == 100
    for c in (conn, written, base):
        c.close()


def test_string_literal_lookups_share_and_compare_by_collation(conns):
    conn = _open()
    for name in ["a", "A", "b", "b ", "B", "ab", "AB", "zz", "", "it''s", "0"]:
        sql = f"SELECT id, name FROM t WHERE name = '{name}'"
        got = sorted(conn.execute(sql).fetchall())
        assert got == sorted(conns["base_written"].execute(sql).fetchall()), sql
    assert _readers(conn) == 1 and len(_caches(conn)) == 1
    conn.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM t WHERE name = 0",  # MySQL compares a string with a number as numbers
        "SELECT id FROM t WHERE name = 1",
        "SELECT id FROM t WHERE day = 20240102",  # a number against a DATE is a date
        "SELECT id FROM t WHERE d = 'x'",  # a string that is no number is 0 against a DECIMAL
        "SELECT id FROM t WHERE d = '1.5'",
        "SELECT id FROM t WHERE name IN ('a', 0)",
        "SELECT id FROM t WHERE id = '3' AND name = 1",
    ],
)
def test_literals_that_bind_otherwise_are_answered_as_written(conns, sql):
    got = sorted(conns["shared"].execute(sql).fetchall())
    assert got == sorted(conns["base_written"].execute(sql).fetchall())
    assert got == sorted(conns["written"].execute(sql).fetchall())


def test_number_and_string_literals_of_one_shape():
    """``name = 0`` is answered as written, ``name = 'a'`` by the lifted query; neither
    decision sticks to the other."""
    conn = _open()
    base = _open(dataflow=False, lift_literals=False)
    for sql in [
        "SELECT id FROM t WHERE name = 'a'",
        "SELECT id FROM t WHERE name = 0",
        "SELECT id FROM t WHERE name = 'b'",
        "SELECT id FROM t WHERE name = 1",
        "SELECT id FROM t WHERE name = 'c'",
    ]:
        assert sorted(conn.execute(sql).fetchall()) == sorted(base.execute(sql).fetchall())
    shown = sorted(r[1] for r in _caches(conn))
    assert shown == [
        "SELECT id FROM t WHERE name = 0",
        "SELECT id FROM t WHERE name = 1",
        "SELECT id FROM t WHERE name = ?",
    ]
    assert not conn.engine.no_lift  # not refused: these values bind otherwise, not the form
    conn.close()
    base.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "SELECT id FROM t",
        "SELECT 1 FROM t WHERE id = 3",
        "SELECT id, name AS n, v + 1, 'x' FROM t WHERE id = 3",
        "SELECT id, v * 2 AS dbl FROM t WHERE id = 3 AND name = 'ab'",
        "SELECT COUNT(*), SUM(v), MAX(name) FROM t WHERE id = 3",
        "SELECT COUNT(*) FROM t WHERE name = 'zz'",
        "SELECT COUNT(*), MIN(id) FROM t WHERE v = 3 GROUP BY name ORDER BY 2",
        "SELECT id, d, day FROM t WHERE id = 7",
        "SELECT t.id, u.w FROM t JOIN u ON u.tid = t.id WHERE t.id = 4",
        "SELECT id FROM t WHERE id = 3 ORDER BY id LIMIT 1",
        "SELECT id FROM t WHERE id IN (1, 2, 3) ORDER BY v DESC, id LIMIT 2",
        "SELECT id FROM t WHERE id = -3",
        "SELECT id FROM t WHERE id = 3 FOR UPDATE",
        "SELECT id FROM t WHERE id = 99999999999999999999",
    ],
)
def test_lifting_keeps_answers_names_and_types(conns, sql):
    got = _answer(conns["shared"], sql)
    assert got == _answer(conns["written"], sql)
    ref = _answer(conns["base_written"], sql)
    assert _answer(conns["base"], sql) == ref
    if "ORDER BY" not in sql:
        got = (sorted(got[0]), got[1])
        ref = (sorted(ref[0]), ref[1])
    assert got[0] == ref[0]
    assert [d[0] for d in got[1]] == [d[0] for d in ref[1]]


literal_values = st.one_of(
    st.integers(-20, 20),
    st.integers(-(10**20), 10**20),
    st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63 - 2, 10**18, 10**15 - 1]),
    st.from_regex(r"\A-?[0-9]{1,20}(\.[0-9]{0,3})?\Z"),
    st.sampled_from(["a", "abc", "", " 12", "12abc", "1e3", "9e18", "0x1", "0.1", "12.0"]),
    st.sampled_from([str(v) for v in (2**53, 2**53 + 1, 2**63 - 1, 2**63 - 2, 10**18)]),
)


@settings(max_examples=300)
@given(
    col=st.sampled_from(["id", "big", "f", "w", "s"]),
    value=literal_values,
    extra=st.booleans(),
)
def test_lifted_literals_answer_as_the_text_as_written(conns, col, value, extra):
    """Whatever the literal and the column, the text answers as it does as written (on the
    dataflow: base storage compares some of these otherwise, MySQL as the dataflow does)."""
    sql = f"SELECT id, s FROM n WHERE {col} = {_sql_literal(value)}"
    if extra:
        sql += " AND id > 0"  # not lifted: ``>``
    got, ref = _answer(conns["shared"], sql), _answer(conns["written"], sql)
    if not isinstance(got, int) and not isinstance(ref, int):
        got, ref = (sorted(got[0]), got[1]), (sorted(ref[0]), ref[1])
    assert got == ref, sql


class _RefusingEngine(Engine):
    """An engine that refuses every parameterized text."""

    def prepare(self, sql):
        if "?" in sql:
            raise errors.ProgrammingError("no parameters here", 1064, "42000")
        return super().prepare(sql)


def test_refused_form_is_answered_as_written_and_remembered():
    conn = noria_py.connect()
    conn._engine.close()
    conn._engine = _RefusingEngine()
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    assert conn.execute("SELECT v FROM t WHERE id = 1").fetchall() == [(10,)]
    assert conn.engine.no_lift == {"SELECT v FROM t WHERE id = ?"}
    assert conn.execute("SELECT v FROM t WHERE id = 2").fetchall() == [(20,)]
    # a text that fails as written too reports its own error, and refuses no form
    with pytest.raises(errors.ProgrammingError, match="nope"):
        conn.execute("SELECT nope FROM t WHERE id = 1")
    assert conn.engine.no_lift == {"SELECT v FROM t WHERE id = ?"}
    conn.close()


def test_literal_lookups_see_writes():
    conn = _open()
    base = _open(dataflow=False)
    for n in range(10):
        conn.execute(f"SELECT id, v FROM t WHERE id = {n}").fetchall()
    for c in (conn, base):
        c.execute("UPDATE t SET v = v + 100 WHERE id < 5")
        c.execute("DELETE FROM t WHERE id = 7")
        c.execute("INSERT INTO t (id, name, v) VALUES (100, 'new', 1)")
    for n in [*range(10), 100]:
        sql = f"SELECT id, v FROM t WHERE id = {n}"
        assert conn.execute(sql).fetchall() == base.execute(sql).fetchall()
    assert _readers(conn) == 1
    conn.close()
    base.close()


def test_lookups_in_another_database_read_the_transactions_writes():
    """A transaction that wrote a table reads it from base storage: also a lifted lookup (and
    an IN list) whose text is qualified for another database than home (parameters :p0...)."""
    conn = noria_py.connect()
    conn.execute("CREATE DATABASE shop")
    conn.execute("USE shop")
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    for sql in ["SELECT v FROM t WHERE id = 1", "SELECT v FROM t WHERE id IN (1, 2, 3)"]:
        conn.execute(sql).fetchall()
    conn.execute("BEGIN")
    conn.execute("UPDATE t SET v = v + 1")
    assert conn.execute("SELECT v FROM t WHERE id = 1").fetchall() == [(11,)]
    assert conn.execute("SELECT v FROM t WHERE id = ?", (2,)).fetchall() == [(21,)]
    assert sorted(conn.execute("SELECT v FROM t WHERE id IN (1, 2, 3)").fetchall()) == [
        (11,),
        (21,),
    ]
    assert sorted(conn.execute("SELECT v FROM t WHERE id IN (?, ?)", (1, 2)).fetchall()) == [
        (11,),
        (21,),
    ]
    conn.execute("COMMIT")
    assert not conn.engine.no_lift
    assert conn.execute("SELECT v FROM t WHERE id = 2").fetchall() == [(21,)]
    assert _readers(conn) == 1
    conn.close()


# --- 2. IN lists of any length ------------------------------------------------------------------

IN_QUERIES = [
    # (text with {} for the list, ordered?)
    ("SELECT id, name, v FROM t WHERE id IN ({})", False),
    ("SELECT id, name FROM t WHERE name IN ({})", False),
    ("SELECT id, v FROM t WHERE id IN ({}) ORDER BY v DESC, id LIMIT 3", True),
    ("SELECT id, v FROM t WHERE id IN ({}) ORDER BY v, id LIMIT 2 OFFSET 1", True),
    ("SELECT DISTINCT v FROM t WHERE id IN ({})", False),
    ("SELECT id, COUNT(*), SUM(v) FROM t WHERE id IN ({}) GROUP BY id", False),
    ("SELECT COUNT(*), SUM(v) FROM t WHERE name IN ({}) GROUP BY name", False),
    ("SELECT t.id, u.w FROM t JOIN u ON u.tid = t.id WHERE t.id IN ({})", False),
    ("SELECT id FROM t WHERE id IN ({}) AND v > 3", False),
    ("SELECT id, v FROM t WHERE v IN ({}) AND id < 20 ORDER BY id DESC LIMIT 4", True),
    # an aggregate over the whole list: not shared (each length compiles as before)
    ("SELECT COUNT(*) FROM t WHERE id IN ({})", False),
    ("SELECT MAX(v) FROM t WHERE name IN ({})", False),
]

ids = st.one_of(st.integers(-2, 45), st.none(), st.sampled_from(["3", "7", " 5", "x"]))
names = st.one_of(
    st.sampled_from(["a", "A", "b", "b ", "B", "AB", "ab", "c", "zz", "0"]), st.none()
)
values = st.one_of(st.integers(0, 12), st.none())


def _list_for(template: str):
    if "name IN" in template:
        return names
    if "v IN" in template:
        return values
    return ids


@st.composite
def in_lookups(draw):
    template, ordered = draw(st.sampled_from(IN_QUERIES))
    items = draw(st.lists(_list_for(template), min_size=1, max_size=8))
    return template, ordered, items


def _same(got, ref, ordered: bool) -> bool:
    if isinstance(got, int) or isinstance(ref, int):
        return got == ref
    if ordered:
        return got[0] == ref[0]
    return sorted(got[0], key=repr) == sorted(ref[0], key=repr)


def _as_int(text: str):
    try:
        return int(text)
    except ValueError:
        return None


def _typed(template: str, items) -> bool:
    """Are the values of the column's type (or NULL)? Base storage binds a parameter of
    another type in an IN list as it is (a string against an INT column compares as text), the
    dataflow as MySQL compares it: only literals of other types are compared with it."""
    want = str if "name IN" in template else int
    return all(v is None or isinstance(v, want) for v in items)


@settings(max_examples=300)
@given(lookup=in_lookups())
def test_in_lists_answer_as_base_storage(conns, lookup):
    template, ordered, items = lookup
    param_sql = template.format(", ".join("?" * len(items)))
    literal_sql = template.format(", ".join(_sql_literal(v) for v in items))
    got = _answer(conns["shared"], param_sql, tuple(items))
    assert _same(got, _answer(conns["written"], param_sql, tuple(items)), ordered), param_sql
    if _typed(template, items):
        assert _same(got, _answer(conns["base"], param_sql, tuple(items)), ordered), param_sql
    got = _answer(conns["shared"], literal_sql)
    assert _same(got, _answer(conns["base_written"], literal_sql), ordered), literal_sql
    assert _same(got, _answer(conns["written"], literal_sql), ordered), literal_sql
    if not isinstance(got, int):
        names_ = [d[0] for d in got[1]]
        assert names_ == [d[0] for d in _answer(conns["base_written"], literal_sql)[1]]


def test_empty_in_list_is_a_syntax_error(conns):
    for c in conns.values():
        with pytest.raises(errors.ProgrammingError):
            c.execute("SELECT id FROM t WHERE id IN ()")


@pytest.mark.parametrize(
    "template", [t for t, _ in IN_QUERIES if "COUNT(*) FROM" not in t and "MAX(" not in t]
)
def test_in_lists_of_every_length_share_one_reader(template):
    conn = _open()
    item = "'a'" if "name IN" in template else "3"
    for n in range(1, 9):
        conn.execute(template.format(", ".join("?" * n)), (3,) * n if item == "3" else ("a",) * n)
        conn.execute(template.format(", ".join([item] * n)))  # literals: lifted
    assert len(_caches(conn)) == 1, _caches(conn)
    assert _readers(conn) == 1
    conn.close()


def test_long_literal_in_lists_share_the_reader():
    """An IN list of thousands of literals (a text longer than the per-text caches keep) is
    lifted too: one reader for every such list, and the answers of the text as written."""
    conn = _open()
    written = _open(lift_literals=False)
    for start in (0, 1, 2):
        keys = list(range(start, 3000 + start, 2))
        sql = f"SELECT id, v FROM t WHERE id IN ({', '.join(map(str, keys))})"
        assert len(sql) > 4096
        assert sorted(_answer(conn, sql)[0]) == sorted(_answer(written, sql)[0])
    assert _readers(conn) == 1 and len(_caches(conn)) == 1
    for c in (conn, written):
        c.close()


def test_in_list_and_equality_share_the_reader():
    """Without ORDER BY or LIMIT, ``id = ?`` and ``id IN (...)`` read one reader (two SHOW
    CACHES rows: two statements)."""
    conn = _open()
    for n in range(20):
        conn.execute(f"SELECT id, v FROM t WHERE id = {n}").fetchall()
        conn.execute(f"SELECT id, v FROM t WHERE id IN ({n}, {n + 1}, {n + 2})").fetchall()
        conn.execute(f"SELECT id, v FROM t WHERE id IN ({', '.join(map(str, range(n + 1)))})")
    assert _readers(conn) == 1 and len(_caches(conn)) == 2
    conn.close()


def test_unshared_in_list_aggregates_keep_their_answers():
    conn = _open()
    base = _open(dataflow=False, lift_literals=False)
    for n in range(1, 6):
        sql = f"SELECT COUNT(*), SUM(v) FROM t WHERE id IN ({', '.join(map(str, range(n)))})"
        assert conn.execute(sql).fetchall() == base.execute(sql).fetchall()
    conn.close()
    base.close()


writes = st.lists(
    st.one_of(
        st.tuples(st.just("lookup"), st.lists(ids, min_size=1, max_size=8), st.booleans()),
        st.tuples(st.just("update"), st.integers(0, 45), st.integers(0, 12)),
        st.tuples(st.just("delete"), st.integers(0, 45)),
        st.tuples(st.just("insert"), st.integers(40, 50), st.integers(0, 12)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60)
@given(ops=writes, ordered=st.booleans())
def test_shared_in_reader_under_writes(ops, ordered):
    """Lookups of random lengths, literal and parameterized, between writes: one reader kept
    current for every length, as base storage answers."""
    conn = _open(memory_limit="2KB")
    base = _open(dataflow=False, lift_literals=False)
    template = (
        "SELECT id, v FROM t WHERE id IN ({}) ORDER BY v DESC, id LIMIT 3"
        if ordered
        else "SELECT id, name, v FROM t WHERE id IN ({})"
    )
    # literal lists with NULL, or with a string that is no integer's own text (' 5', 'x': MySQL
    # compares it as a number, not as the key it looks like), are answered as written (the text
    # is its own query)
    as_written = set()
    for op in ops:
        if op[0] == "lookup":
            _, items, literal = op
            if literal:
                sql, params = template.format(", ".join(_sql_literal(v) for v in items)), ()
                if None in items or any(isinstance(v, str) and v != str(_as_int(v)) for v in items):
                    as_written.add(sql)
            elif _typed(template, items):
                sql, params = template.format(", ".join("?" * len(items))), tuple(items)
            else:
                continue
            assert _same(_answer(conn, sql, params), _answer(base, sql, params), ordered), sql
            continue
        if op[0] == "update":
            sql, params = "UPDATE t SET v = ? WHERE id = ?", (op[2], op[1])
        elif op[0] == "delete":
            sql, params = "DELETE FROM t WHERE id = ?", (op[1],)
        else:
            sql, params = "INSERT IGNORE INTO t (id, name, v) VALUES (?, 'n', ?)", (op[1], op[2])
        for c in (conn, base):
            c.execute(sql, params)
    assert _readers(conn) <= 1 + len(as_written)
    conn.close()
    base.close()


# --- 3. the server's lookup path ------------------------------------------------------------------


def test_server_lookup_plans_answer_as_written_when_literals_bind_otherwise():
    from noria_py.server.session import ServerState, Session

    engine = Engine()
    for ddl in SCHEMA:
        engine.execute(ddl)
    engine.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", T_ROWS)
    base = _open(dataflow=False, lift_literals=False)
    state = ServerState(engine=engine)
    assert state.no_lift is engine.no_lift
    session = Session(state)
    for sql in [
        "SELECT id FROM t WHERE name = 'a'",
        "SELECT id FROM t WHERE name = 0",
        "SELECT id FROM t WHERE name = 'ab'",
        "SELECT id FROM t WHERE name = 1",
    ]:
        number = sql.endswith(("0", "1"))
        hit = state.lifted_lookup(sql)
        if hit is None:
            assert number and sql.endswith("1")  # the plan of ``name = 0`` was refused
            res = session.execute(sql)
        else:
            plan, params = hit
            res = session.execute_lifted(sql, plan, params)
            assert plan.refused == number  # numbers: the text as written
        assert sorted(res.rows) == sorted(base.execute(sql).fetchall()), sql
        assert sorted(session.execute(sql).rows) == sorted(base.execute(sql).fetchall())
    base.close()
    engine.close()

"""Queries over views that base storage answers, compared with MariaDB.

Base storage answers a query over a view when the dataflow is off (``dataflow=False``), when
caching keeps the query out of it, and inside a transaction that wrote a table the view reads
(so it sees its own writes). The view's body must then keep MySQL's semantics as the rest of
the statement does: it is inlined as a derived table (``noria_py.sql.inline``). SQLite's own
copy of the view answered before, with SQLite's semantics: SUM of a DECIMAL was a double,
``s = 'BOB'`` compared case-sensitively, ``d / 3`` was SQLite's division.

Hypothesis draws an expression from the grammar of ``test_expressions_vs_mariadb`` over views
that pass ``vals``'s columns through or compute them; named queries cover grouped views, a
filtering view and a view over a view, on both paths.
"""

from __future__ import annotations

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noria_py
from noria_py import errors as E

from . import oracle_data as D
from .test_derived_vs_mariadb import COMPUTED, PASS
from .test_expressions_vs_mariadb import _same, expressions

VIEWS = [
    f"CREATE VIEW iv_pass AS SELECT {PASS} FROM vals",
    f"CREATE VIEW iv_comp AS SELECT {COMPUTED} FROM vals",
    "CREATE VIEW iv_agg AS SELECT i % 3 AS k, SUM(d) AS sd, AVG(d) AS ad, COUNT(*) AS n,"
    " MAX(s) AS ms, SUM(f) AS sf, MIN(dt) AS mdt FROM vals GROUP BY i % 3",
    "CREATE VIEW iv_bob AS SELECT id, s, d / 3 AS third FROM vals WHERE s = 'BOB'",
    "CREATE VIEW iv_nested AS SELECT k, sd * 2 AS sd2, CONCAT(ad) AS adt FROM iv_agg",
]
NAMED = [
    "SELECT * FROM iv_agg ORDER BY k",
    "SELECT k, sd, ad FROM iv_agg WHERE k = 1",
    "SELECT * FROM iv_bob ORDER BY id",
    "SELECT COUNT(*) FROM iv_bob",
    "SELECT * FROM iv_nested ORDER BY k",
    "SELECT a.k, a.sd + b.sd2 FROM iv_agg a JOIN iv_nested b ON a.k = b.k ORDER BY a.k",
    "SELECT id, third FROM iv_bob WHERE id IN (SELECT id FROM iv_pass WHERE d < 1) ORDER BY id",
    "SELECT x.id, x.s FROM iv_comp AS x WHERE x.s = 'bob' ORDER BY x.id",
    "WITH c AS (SELECT * FROM iv_agg) SELECT SUM(sd) FROM c",
]


@pytest.fixture(scope="module")
def engines(mariadb_oracle):
    D.load_mariadb(mariadb_oracle)
    mariadb_oracle.query("SET time_zone = '+00:00'")
    for name in ("iv_nested", "iv_pass", "iv_comp", "iv_agg", "iv_bob"):
        mariadb_oracle.query(f"DROP VIEW IF EXISTS {name}")
    for sql in VIEWS:
        mariadb_oracle.query(sql)
    store = noria_py.connect(dataflow=False)
    flow = noria_py.connect()
    for conn in (store, flow):
        D.load_noria(conn)
        for sql in VIEWS:
            conn.execute(sql)
    # the transaction wrote vals (and put it back): its reads of the views go to base storage
    flow.begin()
    flow.execute("INSERT INTO vals (id) VALUES (1000)")
    flow.execute("DELETE FROM vals WHERE id = 1000")
    yield {"storage": store, "transaction": flow}, mariadb_oracle
    flow.rollback()
    store.close()
    flow.close()


def answer(run, sql: str):
    try:
        return [tuple(r) for r in run(sql)]
    except (E.Error, pymysql.MySQLError) as e:
        return ("error", e.args[0] if isinstance(e, pymysql.MySQLError) else e.errno)


def same(want, got) -> bool:
    if isinstance(want, tuple) or isinstance(got, tuple):
        return want == got
    return len(want) == len(got) and all(
        len(w) == len(g) and all(_same(a, b) for a, b in zip(w, g)) for w, g in zip(want, got)
    )


def check(engines, sql: str, derived: str | None = None) -> list[str]:
    """``sql``'s answers on both paths against MariaDB's. ``derived``: the same query over the
    view's body as a derived table; where that already differs from MariaDB (an expression
    the engine answers differently anywhere, not through views), the view must answer as it."""
    conns, oracle = engines
    want = answer(lambda q: oracle.query(q)[0], sql)
    if derived is not None:
        alike = answer(lambda q: conns["storage"].execute(q).fetchall(), derived)
        if not same(want, alike):
            want = alike
    bad = []
    for path, conn in conns.items():
        got = answer(lambda q, c=conn: c.execute(q).fetchall(), sql)
        if not same(want, got):
            bad.append(f"{path}: {sql}\n   want    {want!r}\n   noria   {got!r}")
    return bad


@pytest.mark.parametrize("sql", NAMED)
def test_named_queries_over_views(engines, sql):
    problems = check(engines, sql)
    assert not problems, "\n".join(problems)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(view=st.sampled_from(["iv_pass", "iv_comp"]), expr=expressions())
def test_expressions_over_views(engines, view, expr):
    body = PASS if view == "iv_pass" else COMPUTED
    derived = f"SELECT id, {expr} FROM (SELECT {body} FROM vals) x ORDER BY id"
    problems = check(engines, f"SELECT id, {expr} FROM {view} ORDER BY id", derived)
    assert not problems, "\n".join(problems)


COLUMN_LISTS = [
    "CREATE VIEW iv_cl (k, total, mean) AS SELECT i % 3, SUM(d), AVG(d) FROM vals GROUP BY i % 3",
    "CREATE VIEW iv_cu (v) AS SELECT id FROM vals WHERE id < 3 UNION SELECT i FROM vals",
]
COLUMN_LIST_ERRORS = [
    "CREATE VIEW iv_bad (a, b) AS SELECT id FROM vals",  # 1353
    "CREATE VIEW iv_bad (a, A) AS SELECT id, s FROM vals",  # 1060
]


def test_a_view_column_list_names_the_columns(engines, tmp_path):
    """``CREATE VIEW v (a, b) AS ...`` was stored under an empty name; its columns are now
    the list's, cached and proxied, and after the database file is opened again."""
    _, oracle = engines
    for name in ("iv_cl", "iv_cu", "iv_bad"):
        oracle.query(f"DROP VIEW IF EXISTS {name}")
    for sql in COLUMN_LISTS:
        oracle.query(sql)
    path = str(tmp_path / "views.db")
    conn = noria_py.connect(path)
    D.load_noria(conn)
    for sql in COLUMN_LISTS:
        conn.execute(sql)
    queries = [
        "SELECT * FROM iv_cl ORDER BY k",
        "SELECT total FROM iv_cl WHERE k = 1",
        "SELECT v FROM iv_cu ORDER BY v",
        "SELECT k, mean, RAND() < 2 FROM iv_cl ORDER BY k",  # proxied
    ]
    for sql in COLUMN_LIST_ERRORS:
        want = answer(lambda q: oracle.query(q)[0], sql)
        assert answer(lambda q: conn.execute(q).fetchall(), sql) == want
    for attempt in ("created", "reopened"):
        for sql in queries:
            want = answer(lambda q: oracle.query(q)[0], sql)
            got = answer(lambda q, c=conn: c.execute(q).fetchall(), sql)
            assert same(want, got), (attempt, sql, want, got)
        conn.close()
        conn = noria_py.connect(path)
    conn.close()


def test_a_views_passed_through_columns_are_described_as_their_tables(engines):
    """information_schema.COLUMNS (and DESCRIBE) of a view: a column the view passes through
    unchanged has its table column's type (it was the kind's widest type: bigint, longtext,
    decimal(65,30)). Display widths aside (``int`` here, ``int(11)`` in MariaDB's COLUMN_TYPE),
    they are MariaDB's."""
    _, oracle = engines
    views = [
        "CREATE VIEW iv_meta AS SELECT id, s, d, dt, f, i FROM vals WHERE id > 1",
        "CREATE VIEW iv_meta_g AS SELECT dt, COUNT(*) AS n FROM vals GROUP BY dt",
    ]
    for name in ("iv_meta", "iv_meta_g"):
        oracle.query(f"DROP VIEW IF EXISTS {name}")
    conn = noria_py.connect()
    D.load_noria(conn)
    for sql in views:
        oracle.query(sql)
        conn.execute(sql)
    sql = (
        "SELECT table_name, column_name, data_type, character_maximum_length, numeric_precision,"
        " numeric_scale, collation_name, is_nullable FROM information_schema.columns WHERE"
        " table_schema = DATABASE() AND table_name LIKE 'iv_meta%' AND column_name <> 'n'"
        " ORDER BY table_name, ordinal_position"
    )
    want = answer(lambda q: oracle.query(q)[0], sql)
    assert len(want) == 7
    assert answer(lambda q: conn.execute(q).fetchall(), sql) == want
    conn.close()

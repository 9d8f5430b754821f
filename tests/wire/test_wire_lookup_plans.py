"""The COM_QUERY fast path's decisions (ServerState.lifted_lookup), without a server: which
texts become a parameterized engine lookup, with which parameters, and which take the general
path; and Session.execute_lifted falling back to the text as written."""

from __future__ import annotations

import pytest

from noria_py import errors
from noria_py.engine import Engine
from noria_py.server.session import ServerState, Session

pytestmark = pytest.mark.wire


@pytest.fixture()
def state():
    return ServerState(engine=None)


@pytest.mark.parametrize(
    "sql,lifted,params",
    [
        ("SELECT v FROM t WHERE id = 5", "SELECT v FROM t WHERE id = ?", [5]),
        ("SELECT v FROM t WHERE id = 5 AND k = 'x'", "SELECT v FROM t WHERE id = ? AND k = ?", [5, "x"]),
        ("SELECT v FROM t WHERE s = 'it''s \\' \\\\ x'", "SELECT v FROM t WHERE s = ?", ["it's ' \\ x"]),
        ("SELECT v FROM t WHERE s = 'from @@x database()'", "SELECT v FROM t WHERE s = ?", ["from @@x database()"]),
        ("SELECT 3, v FROM t WHERE id = 5 LIMIT 2", "SELECT 3, v FROM t WHERE id = ? LIMIT 2", [5]),
        ("SELECT v FROM t1 WHERE id = 12", "SELECT v FROM t1 WHERE id = ?", [12]),
    ],
)  # fmt: skip
def test_lifted(state, sql, lifted, params):
    hit = state.lifted_lookup(sql)
    assert hit is not None
    plan, got = hit
    assert plan.sql == lifted and got == params


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT @@version",
        "SELECT v FROM t WHERE id = 5;",  # the general path strips the semicolon
        " SELECT v FROM t WHERE id = 5",
        "SELECT v FROM t WHERE id = 5 -- c",
        "SELECT v FROM t WHERE id = 5 OR id = 6",
        "SELECT v FROM t WHERE id = -5",  # the split cannot see the sign: general path
        "SELECT v FROM `t` WHERE id = 5",
        'SELECT v FROM t WHERE s = "x"',
        "SELECT 'a from b' WHERE x = 1",  # no FROM outside the literal: not an engine SELECT
        "SELECT @@version FROM dual WHERE 1 = 1",
        "SELECT v FROM t WHERE id IN (SELECT 1)",
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET v = 1 WHERE id = 2",
    ],
)
def test_general_path(state, sql):
    assert state.lifted_lookup(sql) is None


def test_one_plan_per_shape(state):
    a = state.lifted_lookup("SELECT v FROM t WHERE id = 1")
    b = state.lifted_lookup("SELECT v FROM t WHERE id = 99")
    c = state.lifted_lookup("SELECT v FROM t WHERE id = 'x'")
    c2 = state.lifted_lookup("SELECT v FROM t WHERE id = 'yz'")
    d = state.lifted_lookup("SELECT v FROM t WHERE id = 1 AND k = 2")
    assert a[0] is b[0] and (a[1], b[1], c[1]) == ([1], [99], ["x"])
    # a string literal: the same parameterized text, a plan of its own (whether a literal binds
    # as it compares depends on its type: Engine.lifts_as_written)
    assert c[0] is c2[0] is not a[0] and c[0].sql == a[0].sql
    assert d[0] is not a[0] and d[1] == [1, 2]
    state.no_lift.add("SELECT w FROM t WHERE id = ?")
    assert state.lifted_lookup("SELECT w FROM t WHERE id = 3") is None  # refused before
    a[0].refused = True
    assert state.lifted_lookup("SELECT v FROM t WHERE id = 7") is None


def test_plan_cache_is_bounded(state):
    state.lookup_plans_limit = 5
    for i in range(20):
        assert state.lifted_lookup(f"SELECT v{i} FROM t WHERE id = 1") is not None
    assert len(state.lookup_plans) <= 5


class _RefusingEngine(Engine):
    """Refuses parameterized texts, answers texts as written."""

    def __init__(self) -> None:
        super().__init__()
        self.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        self.execute("INSERT INTO t VALUES (1, 10)")

    def prepare(self, sql):
        if "?" in sql:
            raise errors.ProgrammingError("no parameters here", 1064, "42000")
        return super().prepare(sql)


def test_refused_form_falls_back_to_the_text_as_written():
    engine = _RefusingEngine()
    state = ServerState(engine=engine)
    session = Session(state)
    sql = "SELECT v FROM t WHERE id = 1"
    plan, params = state.lifted_lookup(sql)
    res = session.execute_lifted(sql, plan, params)
    assert list(res.rows) == [(10,)]
    assert plan.refused and plan.sql in state.no_lift
    assert state.lifted_lookup("SELECT v FROM t WHERE id = 2") is None
    # a text whose own execution fails reports its own error and leaves its plan alone
    bad = "SELECT nope FROM t WHERE id = 1"
    plan2, params2 = state.lifted_lookup(bad)
    with pytest.raises(errors.Error):
        session.execute_lifted(bad, plan2, params2)
    assert not plan2.refused

"""Run a scenario on noria_py and on SQLite side by side and compare every read.

A scenario is: CREATE TABLEs, then write batches, with the CREATE VIEWs issued before one of
the batches; each query is installed (first executed) before one of the batches or after the
last, and from then on read with each of its parameter tuples after every batch. A batch runs
in autocommit mode or inside BEGIN ... COMMIT or BEGIN ... ROLLBACK. Reads must agree with
SQLite as multisets, or as lists when the query has a total ORDER BY. Writes must succeed on
both sides or fail on both with an integrity error (a failing statement then changes nothing on
either side).

On a mismatch the assertion message holds the whole history as a replayable script: SQL
statements in order, reads with their parameters. ``replay`` runs such a list of steps again,
which is how a shrunk failure becomes a regression test.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from hypothesis import strategies as st

import noria_py
from noria_py.errors import IntegrityError

from . import queries as q
from . import writes as w
from .schema import Relation, Table, tables


def open_target(**options):
    """The database under test."""
    return noria_py.connect(**options)


# -- scenarios ---------------------------------------------------------------------------------


@dataclass
class Scenario:
    tables: list[Table]
    views: list[tuple[Relation, str]]
    batches: list[list[w.Write]]
    queries: list[q.Query]
    # queries[i] is installed just before batches[install_at[i]] (or after the last batch).
    install_at: list[int]
    # The views are created just before batches[views_at] (or after the last batch).
    views_at: int
    # How each batch ends: None (autocommit), "COMMIT" or "ROLLBACK" (inside BEGIN ...).
    endings: list[str | None]
    # Keyword arguments of noria_py.connect(): {} (partial state, the default) or full state.
    options: dict


@st.composite
def scenarios(draw, family: str) -> Scenario:
    few_tables = family in ("filter", "aggregate")
    tabs = draw(tables(1, 2 if few_tables else 4))
    views = []
    if family in ("nested", "mixed"):
        views = draw(q.views(tabs, min_views=1 if family == "nested" else 0))
    relations = list(tabs) + [v for v, _ in views]
    queries = [q.query(draw, relations, family) for _ in range(draw(st.integers(1, 4)))]
    batches = [w.initial_inserts(draw, tabs)]
    for _ in range(draw(st.integers(1, 4))):
        batches.append([w.write(draw, tabs) for _ in range(draw(st.integers(1, 4)))])
    views_at = draw(st.integers(0, len(batches))) if views else 0
    install_at = [draw(st.integers(views_at, len(batches))) for _ in queries]
    endings = [
        draw(st.sampled_from([None, None, None, None, "COMMIT", "ROLLBACK"])) for _ in batches
    ]
    options = draw(
        st.sampled_from(
            [
                {},
                {"partial": False},
                {"memory_limit": "1KB"},
                {"domains": "threads", "upqueries": "direct", "read_your_writes": True},
                {"upqueries": "messages"},
                {"upqueries": "messages", "memory_limit": "1KB"},
                {"domains": "threads", "read_your_writes": True},
            ]
        )
    )
    return Scenario(tabs, views, batches, queries, install_at, views_at, endings, options)


# -- comparing results -------------------------------------------------------------------------


def _normal(value: object) -> object:
    """MySQL returns SUM of integers as DECIMAL; an integral Decimal compares as an int."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def values_equal(expected: object, actual: object, approx: bool) -> bool:
    expected, actual = _normal(expected), _normal(actual)
    if expected is None or actual is None:
        return expected is None and actual is None
    if approx and _is_number(expected) and _is_number(actual):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-4)
    # Without a tolerance the Python types must agree too: a float or a bool where SQLite
    # (and MySQL) give an integer is a wrong answer.
    return type(expected) is type(actual) and expected == actual


def _sort_key(row: Sequence) -> tuple:
    key = []
    for value in row:
        value = _normal(value)
        if value is None:
            key.append((0, 0))
        elif _is_number(value):
            key.append((1, round(float(value), 3)))
        elif isinstance(value, str):
            key.append((2, value))
        else:
            key.append((3, repr(value)))
    return tuple(key)


def rows_equal(expected: Sequence, actual: Sequence, approx: bool) -> bool:
    return len(expected) == len(actual) and all(
        values_equal(e, a, approx) for e, a in zip(expected, actual)
    )


def results_equal(expected: list, actual: list, ordered: bool, approx: bool) -> bool:
    """Compare two results as lists (ordered) or as multisets."""
    if len(expected) != len(actual):
        return False
    if ordered:
        return all(rows_equal(e, a, approx) for e, a in zip(expected, actual))
    expected, actual = sorted(expected, key=_sort_key), sorted(actual, key=_sort_key)
    if all(rows_equal(e, a, approx) for e, a in zip(expected, actual)):
        return True
    if not approx:
        return False
    # Rounding may have sorted nearly equal rows differently: match greedily instead.
    unmatched = list(actual)
    for row in expected:
        for i, candidate in enumerate(unmatched):
            if rows_equal(row, candidate, approx):
                del unmatched[i]
                break
        else:
            return False
    return True


# -- running statements on both sides ----------------------------------------------------------


class Mismatch(AssertionError):
    """noria_py disagreed with SQLite; the message holds a script reproducing it."""


@dataclass
class Step:
    sql: str
    params: tuple = ()
    note: str = ""

    def render(self) -> str:
        text = f"{self.sql};"
        if self.params:
            text += f"  -- params: {self.params!r}"
        if self.note:
            text += f"  -- {self.note}"
        return text


@dataclass
class Dual:
    """A noria_py connection and a SQLite connection fed the same statements."""

    options: dict = field(default_factory=dict)
    target: object = None
    lite: sqlite3.Connection = field(
        default_factory=lambda: sqlite3.connect(":memory:", isolation_level=None)
    )
    steps: list[Step] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.target is None:
            self.target = open_target(**self.options)

    def close(self) -> None:
        self.lite.close()
        close = getattr(self.target, "close", None)
        if close is not None:
            close()

    def script(self) -> str:
        lines = [step.render() for step in self.steps]
        replayable = "".join(f"    ({s.sql!r}, {s.params!r}),\n" for s in self.steps)
        return (
            f"--- script on noria_py.connect(**{self.options!r}); reads carry their parameters ---\n"
            + "\n".join(lines)
            + f"\n--- as replay(steps, options={self.options!r}) ---\nsteps = [\n{replayable}]"
        )

    def fail(self, message: str, exc: BaseException | None = None) -> None:
        raise Mismatch(f"{message}\n{self.script()}") from exc

    def ddl(self, sql: str) -> None:
        self.steps.append(Step(sql))
        self.lite.execute(sql)
        try:
            self.target.execute(sql)
        except Exception as exc:
            self.fail(f"noria_py rejected DDL that SQLite accepts: {exc!r}", exc)

    def control(self, sql: str) -> None:
        """BEGIN, COMMIT or ROLLBACK on both sides."""
        self.steps.append(Step(sql))
        self.lite.execute(sql)
        try:
            self.target.cursor().execute(sql)
        except Exception as exc:
            self.fail(f"noria_py rejected {sql}: {exc!r}", exc)

    def write(self, sql: str, params: tuple = ()) -> None:
        step = Step(sql, params)
        self.steps.append(step)
        lite_error = target_error = None
        lite_count = target_count = None
        try:
            lite_count = self.lite.execute(sql, params).rowcount
        except sqlite3.IntegrityError as exc:
            lite_error = exc
        try:
            cur = self.target.cursor()
            cur.execute(sql, params)
            target_count = cur.rowcount
        except Exception as exc:
            target_error = exc
        if lite_error is not None and target_error is not None:
            step.note = f"fails on both: {type(target_error).__name__}"
            if not isinstance(target_error, IntegrityError):
                self.fail(
                    f"the write fails in SQLite with an integrity error ({lite_error}) but "
                    f"noria_py raised {target_error!r}",
                    target_error,
                )
            return
        if lite_error is not None:
            self.fail(f"SQLite rejects the last write ({lite_error}) but noria_py accepted it")
        if target_error is not None:
            self.fail(f"noria_py rejected the last write: {target_error!r}", target_error)
        verb = sql.split(None, 1)[0].upper()
        # UPDATE is left out: MySQL counts changed rows, SQLite matched rows.
        if verb in ("INSERT", "DELETE") and lite_count != target_count:
            self.fail(f"rowcount: SQLite {lite_count}, noria_py {target_count}")

    def read(self, query: q.Query, params: tuple) -> None:
        self.steps.append(Step(query.sql, params, note="read"))
        expected = self.lite.execute(query.sql, params).fetchall()
        try:
            cur = self.target.cursor()
            cur.execute(query.sql, params)
            actual = list(cur.fetchall())
            description = cur.description
        except Exception as exc:
            self.fail(f"noria_py failed on the last read: {exc!r}", exc)
        if description is None or len(description) != query.n_columns:
            self.fail(f"description has the wrong shape: {description!r}")
        if not results_equal(expected, actual, query.ordered, query.approx):
            if not query.ordered:
                expected, actual = sorted(expected, key=_sort_key), sorted(actual, key=_sort_key)
            self.fail(
                "the last read differs from SQLite"
                + (" (ordered)" if query.ordered else " (as multisets)")
                + f"\n  SQLite:   {expected!r}\n  noria_py: {[tuple(r) for r in actual]!r}"
            )


def _table_shift(dual: Dual, table: str) -> int:
    (largest,) = dual.lite.execute(f"SELECT MAX(id) FROM {table}").fetchone()
    return (largest or 0) + 1


def run(scenario: Scenario) -> None:
    dual = Dual(scenario.options)
    try:
        for table in scenario.tables:
            dual.ddl(table.ddl())
        installed: list[q.Query] = []

        def install(at: int) -> None:
            if at == scenario.views_at:
                for _, view_sql in scenario.views:
                    dual.ddl(view_sql)
            for query, when in zip(scenario.queries, scenario.install_at):
                if when == at:
                    installed.append(query)
                    for params in query.param_sets:
                        dual.read(query, params)

        for i, (batch, ending) in enumerate(zip(scenario.batches, scenario.endings)):
            install(i)
            if ending is not None:
                dual.control("BEGIN")
            for stmt in batch:
                sql = stmt.sql
                if stmt.shift:
                    sql = sql.format(shift=_table_shift(dual, stmt.table))
                dual.write(sql)
            if ending is not None:
                dual.control(ending)
            for query in installed:
                for params in query.param_sets:
                    dual.read(query, params)
        install(len(scenario.batches))
    finally:
        dual.close()


def replay(
    steps: list[tuple[str, tuple]], options: dict | None = None, connect: Callable | None = None
) -> None:
    """Replay ``(sql, params)`` steps from a failure report, comparing reads with SQLite.

    ``options`` are the report's noria_py.connect() arguments; ``connect`` replaces
    noria_py.connect altogether. A step whose SQL starts with SELECT is a read; its result is
    compared as a multiset, or as a list when the SQL contains ORDER BY (generated ORDER BYs are
    always total).
    """
    options = options or {}
    target = connect(**options) if connect is not None else None
    dual = Dual(options, target)
    try:
        for sql, params in steps:
            verb = sql.split(None, 1)[0].upper()
            if verb == "SELECT":
                n_columns = len(dual.lite.execute(sql, params).description)
                query = q.Query(sql, (), [params], "ORDER BY" in sql, "AVG(" in sql, n_columns)
                dual.read(query, params)
            elif verb == "CREATE":
                dual.ddl(sql)
            elif verb in ("BEGIN", "COMMIT", "ROLLBACK"):
                dual.control(sql)
            else:
                dual.write(sql, params)
    finally:
        dual.close()

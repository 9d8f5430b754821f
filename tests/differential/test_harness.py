"""The comparison logic of the differential harness, checked on its own.

If the harness compared too leniently the differential tests could not fail; these tests make
sure a wrong answer is reported.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

import pytest

from .harness import Mismatch, replay, results_equal, values_equal


def test_values_equal_is_strict_without_tolerance() -> None:
    assert values_equal(3, Decimal("3"), approx=False)  # MySQL's SUM of integers
    assert not values_equal(3, Decimal("3.5"), approx=False)
    assert not values_equal(1, True, approx=False)
    assert not values_equal(3, 3.0, approx=False)
    assert not values_equal("1", 1, approx=False)
    assert not values_equal(None, 0, approx=False)
    assert values_equal(None, None, approx=False)


def test_values_equal_with_tolerance_accepts_mysql_avg() -> None:
    assert values_equal(5 / 3, Decimal("1.6667"), approx=True)
    assert values_equal(2.0, Decimal("2.0000"), approx=True)
    assert not values_equal(5 / 3, Decimal("1.6676"), approx=True)
    assert not values_equal(None, Decimal("0.0000"), approx=True)


def test_results_equal_multiset_and_order() -> None:
    rows = [(1, "a"), (None, "b"), (1, "a"), (2, "c")]
    assert results_equal(rows, list(reversed(rows)), ordered=False, approx=False)
    assert not results_equal(rows, list(reversed(rows)), ordered=True, approx=False)
    assert not results_equal(rows, rows[:2], ordered=False, approx=False)
    assert not results_equal(rows, [(1, "a"), (None, "b"), (None, "b"), (2, "c")], False, False)
    avg = [(1, 1 / 3), (2, 2 / 3)]
    assert results_equal(avg, [(2, Decimal("0.6667")), (1, Decimal("0.3333"))], False, True)


class _LossyCursor:
    """Answers from its own SQLite database but loses the last row of every result."""

    def __init__(self, conn: sqlite3.Connection):
        self._cur = conn.cursor()
        self.description = None
        self.rowcount = -1

    def execute(self, sql: str, params=()):
        self._cur.execute(sql, params)
        self.description, self.rowcount = self._cur.description, self._cur.rowcount
        return self

    def fetchall(self):
        return self._cur.fetchall()[:-1]


class _LossyConnection:
    def __init__(self):
        self._conn = sqlite3.connect(":memory:", isolation_level=None)

    def cursor(self):
        return _LossyCursor(self._conn)

    def execute(self, sql: str, params=()):
        return self.cursor().execute(sql, params)

    def close(self) -> None:
        self._conn.close()


def test_replay_reports_a_wrong_answer_with_its_script() -> None:
    steps = [
        ("CREATE TABLE t0 (id INT PRIMARY KEY, a INT)", ()),
        ("INSERT INTO t0 VALUES (1, 2), (2, 2)", ()),
        ("SELECT id FROM t0 WHERE a = ?", (2,)),
    ]
    with pytest.raises(Mismatch) as info:
        replay(steps, connect=_LossyConnection)
    message = str(info.value)
    assert "differs from SQLite" in message
    assert "INSERT INTO t0 VALUES (1, 2), (2, 2);" in message
    assert "SELECT id FROM t0 WHERE a = ?;  -- params: (2,)" in message

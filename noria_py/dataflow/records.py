"""Records and batches: the unit of change that flows through the dataflow.

A *row* is a plain tuple. A *record* is ``(row, multiplicity)``: a positive multiplicity inserts
that many copies, a negative one retracts them. A *batch* (a delta) is a list of records; it is a
multiset with signed multiplicities, so a batch and its consolidation mean the same change. An
UPDATE becomes a retraction of the old row plus an insertion of the new one.
"""

from __future__ import annotations

Row = tuple
Record = tuple  # (row, multiplicity)
Batch = list


def consolidate(batch: Batch) -> Batch:
    """Merge records of equal rows and drop those whose multiplicities cancel."""
    acc: dict = {}
    for row, m in batch:
        acc[row] = acc.get(row, 0) + m
    return [(row, m) for row, m in acc.items() if m]


def negate(batch: Batch) -> Batch:
    return [(row, -m) for row, m in batch]


def bag_add(bag: dict, row, m: int) -> None:
    """Add ``m`` copies of ``row`` to a hash bag (row -> count), removing it at zero."""
    c = bag.get(row, 0) + m
    if c:
        bag[row] = c
    else:
        del bag[row]


def expand(bag: dict) -> list:
    out = []
    for row, c in bag.items():
        if c == 1:
            out.append(row)
        else:
            out.extend([row] * c)
    return out


class Fault:
    """A value MySQL could not compute for a row (an integer overflow, error 1690): the view
    keeps the row, with this in the column, and a read that returns the row raises the error,
    as MySQL evaluates the expression when the query reads the row. Faults of the same error
    are equal, so a retraction recomputes a record equal to the one it removes."""

    __slots__ = ("msg", "errno", "sqlstate")

    def __init__(self, error) -> None:
        self.msg = error.msg
        self.errno = error.errno
        self.sqlstate = error.sqlstate

    def __eq__(self, other) -> bool:
        return type(other) is Fault and (self.msg, self.errno) == (other.msg, other.errno)

    def __hash__(self) -> int:
        return hash((self.msg, self.errno))

    def __repr__(self) -> str:
        return f"Fault({self.errno}: {self.msg})"

    def error(self):
        from ..errors import DataError

        return DataError(self.msg, self.errno, self.sqlstate)


def raise_fault(rows) -> None:
    """Raise the error of the first ``Fault`` among ``rows``' values, if any."""
    for row in rows:
        for v in row:
            if type(v) is Fault:
                raise v.error()

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

"""Partial state: the vocabulary shared by operators, the planner and the eviction policy.

A partial state holds some keys (*filled*) and lacks the rest (*missing*). A missing key is filled
by an *upquery*: ``node.query(cols, key)`` returns a node's current output rows whose ``cols``
equal ``key``, asking the node's ancestors the same question along the key's provenance and
filling every partial state it passes (the response of Noria's upquery, computed in place since
the inline scheduler runs one message to completion).

A normal delta that meets a missing key is dropped. Because a dropped record may still belong to
a *filled* key further down (an incongruent join: a story whose author changes to a user whose
row is missing), every drop sends a *probe* downstream: the dropped row with the columns it
cannot know set to ``UNKNOWN``. Each stateful operator that receives a probe evicts the keys the
probe may touch (everything when a key column is ``UNKNOWN``) and forwards the probe, and
eviction of a key sends probes for the rows that key had produced. So a filled key never misses a
change that affects it: invariant (III) of the design.
"""

from __future__ import annotations


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self):
        return "UNKNOWN"


UNKNOWN = _Unknown()


def has_unknown(row) -> bool:
    for v in row:
        if v is UNKNOWN:
            return True
    return False


def key_of(row, cols) -> tuple:
    return tuple(row[c] for c in cols)


def matches(row, cols, key) -> bool:
    for c, k in zip(cols, key):
        if row[c] != k:
            return False
    return True

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

from operator import itemgetter

from ..sql import values as V
from ..sql.collation import ck, ck_tuple

# Keys and strings. Strings compare under the engine's collation (``sql/collation.py``): every
# key a state is indexed by, asked for or evicted by holds a string as its collation key
# (``ck``), so ``'BOB'`` and ``'bob '`` are one key under ``utf8mb4_general_ci``. Keys computed
# from rows go through ``keyer``; keys that arrive from outside (parameters, upqueries) are
# normalized by ``ck_tuple`` where they enter. Base storage looks a keyed string column up by
# the same key (``storage/sqlite.py``), so keys travel up the graph as they are.
_STRINGY = (V.STR, V.NULL)


def keyer(cols, kinds, scalar: bool = False):
    """``row -> key`` for columns ``cols`` of rows whose column kinds are ``kinds``: a tuple
    (or the bare value when ``scalar`` and there is one column), strings as collation keys."""
    cols = list(cols)
    stringy = any(kinds[c] in _STRINGY for c in cols) if kinds else True
    if not cols:
        return lambda r: ()
    if len(cols) == 1:
        c0 = cols[0]
        if scalar:
            return (lambda r: ck(r[c0])) if stringy else (lambda r: r[c0])
        return (lambda r: (ck(r[c0]),)) if stringy else (lambda r: (r[c0],))
    if not stringy:
        g = itemgetter(*cols)
        return g
    if kinds and len(cols) == 2:  # (a common group key: an id and a name)
        c0, c1 = cols
        s0, s1 = kinds[c0] in _STRINGY, kinds[c1] in _STRINGY
        if not s0:
            return lambda r: (r[c0], ck(r[c1]))
        if not s1:
            return lambda r: (ck(r[c0]), r[c1])
    return lambda r: tuple([ck(r[c]) for c in cols])


def has_strings(cols, kinds) -> bool:
    """May a key over ``cols`` hold strings (so keys from outside must be normalized)?"""
    return any(kinds[c] in _STRINGY for c in cols) if kinds else True


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
    return tuple([ck(row[c]) for c in cols])


def matches(row, cols, key) -> bool:
    for c, k in zip(cols, key):
        v = row[c]
        if v != k and ck(v) != ck(k):
            return False
    return True


class LookupIndexes:
    """Indexes of a full state's entries (the keys of ``state``, a dict; each a tuple) by some
    of their positions: ``{positions: {those positions' values: {entry: None}}}``, each built
    at the first lookup by its positions (``index``) and kept as entries come and go (``add``,
    ``discard``). They index the dict they were made for: a state that replaces its dict
    makes new ones (``of``)."""

    __slots__ = ("state", "by")

    def __init__(self, state: dict):
        self.state = state
        self.by: dict = {}

    @staticmethod
    def of(kept: LookupIndexes | None, state: dict) -> LookupIndexes:
        """``kept`` when it indexes ``state``, else new indexes of it."""
        return kept if kept is not None and kept.state is state else LookupIndexes(state)

    def index(self, at: tuple) -> dict:
        found = self.by.get(at)
        if found is None:
            found = self.by[at] = {}
            for entry in self.state:
                found.setdefault(tuple([entry[c] for c in at]), {})[entry] = None
        return found

    def add(self, entry) -> None:
        for at, found in self.by.items():
            found.setdefault(tuple([entry[c] for c in at]), {})[entry] = None

    def discard(self, entry) -> None:
        for at, found in self.by.items():
            part = tuple([entry[c] for c in at])
            mine = found.get(part)
            if mine is not None:
                mine.pop(entry, None)
                if not mine:
                    del found[part]


def children_gate(node, carriers: dict):
    """``key_gate`` of a stateless node: the union of its children's gates (None if one has
    none, or it has no children)."""
    if not node.children or not carriers:
        return None
    gates = []
    for child, port in node.children:
        g = child.key_gate(port, carriers)
        if g is None:
            return None
        gates.append(g)
    if len(gates) == 1:
        return gates[0]
    return lambda key: any(g(key) for g in gates)


__all__ = ["UNKNOWN", "ck", "ck_tuple", "has_strings", "has_unknown", "key_of", "keyer", "matches"]

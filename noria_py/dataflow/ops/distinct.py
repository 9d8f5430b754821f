"""Distinct: emits a row when its count rises from zero and retracts it when it falls to zero.

Partial, it is filled per key of ``fill_cols`` (the columns downstream looks rows up by).

Rows with strings are counted by their collation key (``'Bob'`` and ``'bob'`` are one row under
a case-insensitive collation); the row shown is the smallest spelling a current input row has,
and a change of it is a retraction and an insertion like any other.
"""

from __future__ import annotations

from collections import Counter

from ..node import FULL, PARTIAL, Node
from ..partial import UNKNOWN, LookupIndexes, ck, ck_tuple, has_strings, key_of, matches


class Distinct(Node):
    kind = "distinct"

    def __init__(self, parent: Node):
        super().__init__([parent], parent.columns, parent.kinds)
        self.counts: dict = {}  # row (its collation key when it holds strings) -> count
        self._strings = has_strings(range(len(parent.columns)), parent.kinds)
        self.reps: dict = {}  # with strings: key -> {spelling: count}
        self.partial = False
        self.fill_cols: list[int] = []
        self.filled: set = set()
        self.fidx: dict = {}
        self.graph = None

    def column_type(self, col: int):
        return self.parents[0].column_type(col)

    @property
    def materialization(self):
        return PARTIAL if self.partial else FULL

    def set_partial(self, cols: list[int]) -> None:
        self.partial = True
        self.fill_cols = list(cols)
        self.counts = {}
        self.reps = {}
        self.filled = set()
        self.fidx = {}

    def _fkey(self, row) -> tuple:
        return tuple([ck(row[c]) for c in self.fill_cols])

    def _shown(self, key):
        """The row shown for counted ``key``."""
        reps = self.reps.get(key)
        return min(reps) if reps else key

    def _count(self, row, m) -> int:
        counts = self.counts
        key = ck_tuple(row) if self._strings else row
        old = counts.get(key, 0)
        new = old + m
        if self._strings:
            reps = self.reps.get(key)
            if reps is None:
                reps = self.reps[key] = {}
            c = reps.get(row, 0) + m
            if c:
                reps[row] = c
            else:
                reps.pop(row, None)
        if new:
            counts[key] = new
            if old == 0:
                if self.partial:
                    self.fidx.setdefault(self._fkey(key), set()).add(key)
                elif self._lookups is not None:
                    self._lookups.add(key)
        else:
            del counts[key]
            self.reps.pop(key, None)
            if self.partial:
                s = self.fidx.get(self._fkey(key))
                if s is not None:
                    s.discard(key)
            elif self._lookups is not None:
                self._lookups.discard(key)
        return old

    # --- lookups of a full state (Node.own_rows) ----------------------------------------------
    _lookups: LookupIndexes | None = None  # the rows by some columns (own_rows)

    def own_rows(self, cols, keys: list) -> list:
        """``Node.own_rows``: the rows whose ``cols`` equal a key, by an index of those columns
        built at the first lookup by them and kept as rows come and go, not by listing every
        row. A counted row holds its strings as collation keys, and a key's values are taken
        the same way (``ck``), so rows equal under ``matches`` are found, then filtered as
        listing them filters."""
        if self.partial or not cols or len(set(cols)) != len(cols):
            return Node.own_rows(self, cols, keys)
        at = tuple(sorted(cols))
        self._lookups = LookupIndexes.of(self._lookups, self.counts)
        index = self._lookups.index(at)
        order = sorted(range(len(cols)), key=cols.__getitem__)  # key positions in ``at`` order
        counts = self.counts
        found: dict = {}
        for key in keys:
            for counted in index.get(tuple([ck(key[i]) for i in order]), ()):
                if counted in found or counts.get(counted, 0) <= 0:
                    continue
                r = self._shown(counted)
                if matches(r, cols, key):
                    found[counted] = r
        return [(r, 1) for r in found.values()]

    def on_input(self, port: int, batch: list) -> list:
        if self.partial:
            keep = []
            dropped = []
            for rec in batch:
                if self._fkey(rec[0]) in self.filled:
                    keep.append(rec)
                else:
                    dropped.append(rec[0])
            if dropped and self.probe_on_drop and self.graph is not None:
                self.graph.probe(self, dropped)
            batch = keep
        out = []
        if self._strings:
            counts = self.counts
            for row, m in batch:
                key = ck_tuple(row)
                before = self._shown(key) if counts.get(key, 0) > 0 else None
                self._count(row, m)
                after = self._shown(key) if counts.get(key, 0) > 0 else None
                if before != after:
                    if before is not None:
                        out.append((before, -1))
                    if after is not None:
                        out.append((after, 1))
            return out
        for row, m in batch:
            old = self._count(row, m)
            new = old + m
            if old <= 0 < new:
                out.append((row, 1))
            elif new <= 0 < old:
                out.append((row, -1))
        return out

    def ensure(self, fk: tuple) -> None:
        fk = ck_tuple(fk)
        if fk in self.filled:
            return
        self.filled.add(fk)
        self.fidx.setdefault(fk, set())
        for row, m in self.parents[0].query(self.fill_cols, fk):
            self._count(row, m)
        if self.graph is not None:
            self.graph.filled(self, fk, len(self.fidx.get(fk, ())))

    def query(self, cols, key) -> list:
        if self.partial and sorted(cols) == sorted(self.fill_cols):
            d = dict(zip(cols, ck_tuple(tuple(key))))
            fk = tuple(d[c] for c in self.fill_cols)
            self.ensure(fk)
            return [(self._shown(r), 1) for r in self.fidx.get(fk, ()) if self.counts.get(r, 0) > 0]
        if self.partial:
            scratch = Distinct(self.parents[0])
            scratch.on_input(0, self.parents[0].query(list(cols), tuple(key)))
            return scratch.contents()
        return self.own_rows(cols, [tuple(key)])

    def evict_key(self, fk: tuple) -> None:
        fk = ck_tuple(fk)
        if fk not in self.filled:
            return
        self.filled.discard(fk)
        rows = self.fidx.pop(fk, set())
        derived = []
        for r in rows:
            shown = self._shown(r)
            self.reps.pop(r, None)
            if self.counts.pop(r, 0) > 0:
                derived.append(shown)
        if self.graph is not None:
            self.graph.evicted(self, fk)
            if not derived and not self.probe_on_drop:
                # an empty key may still be filled (empty) below: name it (see Join.evict_key)
                row = [UNKNOWN] * len(self.columns)
                for c, v in zip(self.fill_cols, fk):
                    row[c] = v
                derived = [tuple(row)]
            if derived:
                self.graph.probe(self, derived)

    def on_probe(self, port: int, rows: list) -> list:
        if self.partial:
            for row in rows:
                fk = self._fkey(row)
                if UNKNOWN in fk:
                    for k in list(self.filled):
                        self.evict_key(k)
                elif fk in self.filled:
                    self.evict_key(fk)
        return rows

    def contents(self) -> list:
        return [(self._shown(row), 1) for row, c in self.counts.items() if c > 0]

    def make_full(self) -> None:
        self.partial = False
        self.counts = {}
        self.reps = {}
        self.filled = set()
        self.fidx = {}
        self.on_input(0, self.parents[0].contents())

    def state_size(self):
        return (len(self.filled) if self.partial else len(self.counts), len(self.counts))

    def on_removed(self):
        self.counts = {}
        self.reps = {}
        self.fidx = {}
        self.filled = set()

    def filled_keys(self) -> list:
        return list(self.filled)

    def sample_state(self, n: int = 20) -> list:
        return list(self.counts.items())[:n]

    def compare_filled(self, twin):
        fill = self.fill_cols
        want_by: dict = {}
        for key, c in twin.counts.items():
            if c > 0:
                row = twin._shown(key)
                want_by.setdefault(key_of(row, fill), Counter())[row] = c
        for fk in self.filled:
            got = Counter()
            for r in self.fidx.get(fk, ()):
                c = self.counts.get(r, 0)
                if c > 0:
                    got[self._shown(r)] = c
            yield "", fk, got, want_by.get(fk, Counter())

    # --- Spark bulk replay (spark/replay.py) ------------------------------------------------
    replay_role = "reduce"

    def replay_op(self):
        return ("state",) if self.partial else ("distinct",)

    # --- upqueries as messages (domain.py): a partial distinct answers by its fill key from its
    # own state, filling it first; asked by other columns, it passes the upquery on and takes
    # the distinct rows of the answer (nothing is filled here; drops here probe the key below)
    placement = "own"  # only its small output crosses a domain boundary

    on_request = Node.request_by_fill_key

    def _filled_rows(self, fks) -> list:
        out = []
        counts = self.counts
        for fk in fks:
            for r in self.fidx.get(fk, ()):
                if counts.get(r, 0) > 0:
                    out.append((self._shown(r), 1))
        return out

    def on_response(self, df, port, up, hops, rows, span=None) -> None:
        bag: dict = {}
        for r, m in rows:
            bag[r] = bag.get(r, 0) + m
        df.respond(self, up, hops[:-1], [(r, 1) for r, c in bag.items() if c > 0])

    def on_fill(self, df, port, up, rows, span=None) -> None:
        self.fill_by_fill_key(df, up, rows, self._add_rows)

    def _add_rows(self, rows) -> None:
        for r, m in rows:
            self._count(r, m)

    # --- planning (plan_upqueries.py): partial, filled per key of the columns looked up -------
    def traceable(self, cols) -> bool:
        return self.parents[0].traceable(cols)

    def plan_need(self, planner, cols) -> None:
        parent = self.parents[0]
        if cols is not None and planner.enabled and parent.traceable(cols):
            self.set_partial(cols)
            planner.need(parent, cols)
        else:
            planner.need(parent, None)

    def plan_pass(self, planner, cols) -> None:
        if self.partial:  # (a full state answers every lookup from itself: no index above)
            planner.need(self.parents[0], cols)

    def fill_carriers(self):
        return [{c} for c in self.fill_cols]

    def fill_key(self, port):
        return self.fill_cols

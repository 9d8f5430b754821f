"""Equi-join (inner or left) of two parents.

The join keeps its own copy of each input, indexed by the join key: the state of side A that a
delta from side B is joined with is exactly what the join has received from A so far. That makes
the output correct whatever order the two inputs' deltas arrive in, including self-joins and
diamonds where one base change reaches both inputs (delta(A join B) = dA join B + A' join dB).
It is also what lets a join sit at a domain boundary: it never reads another node's state.

Rows whose key contains NULL never match (SQL equality); for a left join they are padded.
"""

from __future__ import annotations

from ..domain import in_range, select
from ..node import FULL, NONE, PARTIAL, Node
from ..partial import UNKNOWN, ck, ck_tuple, keyer, matches
from ..sqlrel import nonempty
from .base import reading_at, start_reading, stop_reading


def _bag_add(state: dict, key, row: tuple, m: int) -> None:
    """``m`` (signed) more of ``row`` in ``state[key]``, a bag of rows and their counts: a row
    whose count reaches 0 leaves the bag, and a bag left empty leaves ``state``."""
    bag = state.get(key)
    if bag is None:
        state[key] = {row: m}
        return
    c = bag.get(row, 0) + m
    if c:
        bag[row] = c
    else:
        del bag[row]
        if not bag:
            del state[key]


class Join(Node):
    kind = "join"

    def __init__(self, left: Node, right: Node, left_key: list[int], right_key: list[int], outer):
        names = left.columns + right.columns
        kinds = left.kinds + right.kinds
        super().__init__([left, right], names, kinds)
        self.left_key = tuple(left_key)
        self.right_key = tuple(right_key)
        self.outer = outer  # True for LEFT JOIN
        self.left_state: dict = {}  # key -> {row: count}
        self.right_state: dict = {}
        self.pad = (None,) * len(right.columns)
        # join keys hold strings as collation keys (dataflow/partial.py): a bare value for one
        # key column, a tuple for several
        self._lk = keyer(left_key, left.kinds, scalar=True)
        self._rk = keyer(right_key, right.kinds, scalar=True)
        self._multi = len(left_key) > 1
        self.partial = False
        self.filled: set = set()
        # column tuples of the right input the planner made answerable by lookups although the
        # left input is asked first (plan_upqueries: an inner join asked on both sides, whose
        # right input is a stateless path to base storage), and per asked column set the
        # lookups and rows each side has answered: see _pick_side
        self.right_asks: set[tuple] = set()
        self._side_stats: dict[tuple, list[int]] = {}
        self.graph = None  # set by the graph: where probes and eviction bookkeeping go
        # a lookup join keeps no copy of its inputs: each delta is joined with the other input
        # looked up in base storage (see on_added)
        self.lookup = False
        self._key_cols = (list(self.left_key), list(self.right_key))
        self._rel = None  # (SqlRel, SQL per asked columns) or False: see _pushed
        self._right_rel = None  # the right input as one table's SqlRel, or False
        self._counts: dict = {}  # count statements by asked columns
        # a left join's right input: per join key, a lower bound (> 0) of the records this
        # join has received, kept up by every right delta (see _right_nonempty)
        self._right_min: dict = {}
        self._right_min_version = -1  # the graph version _right_min was kept under
        self._gate_cache = None  # (graph version, gate or None): see _gate
        self._counted = None  # the graph whose lookup_count counts this join
        self._bases: list = []  # a lookup join's base tables (their nodes)
        self.view = None  # see on_added

    @property
    def materialization(self):
        if self.lookup:
            return NONE
        return PARTIAL if self.partial else FULL

    def on_added(self, graph) -> None:
        """Keep no state when both inputs are stateless paths to distinct base tables (and the
        graph's domains run inline): the state of an input as the join has received it is then
        base storage's rows minus the deltas it has not received (``BaseTable.unreceived``: the
        deltas not yet propagated, inline; under message scheduling, the logged writes after
        the last one that reached the join, ``view``), so a delta from one side is joined with
        the other side looked up by its join key in base storage's index, as Noria's joins look
        up their parents' state. Asked for rows under message scheduling it answers at once
        from both inputs as of its ``view``, as a full state answers at its position in the
        stream. Join key columns of different kinds keep the copying join (a storage lookup
        compares as the column's own type)."""
        if not getattr(graph, "lookup_joins", False):
            return
        left, right = self.parents
        lb, rb = left.base_tables(), right.base_tables()
        if lb is None or rb is None or lb & rb:
            return  # a self-join sees one table on both sides: it keeps its copies
        for lk, rk in zip(self.left_key, self.right_key):
            if left.kinds[lk] != right.kinds[rk]:
                return
            for side, col in ((left, lk), (right, rk)):
                src = side.source_column(col)
                if src is None:
                    return  # a computed key: no index to look it up by
                if src[0].column_type(src[1]) is None:
                    return
        self.lookup = True
        self.partial = False
        graph.lookup_count += 1
        self._counted = graph
        # under message scheduling the join reads each base table as of the last write of it
        # that has reached the join (``view``: base node id -> write sequence number, carried
        # by deltas, see ``reading_at``); it starts at the writes made so far
        start_reading(self, graph)

    def column_type(self, col: int):
        nl = len(self.parents[0].columns)
        if col < nl:
            return self.parents[0].column_type(col)
        return self.parents[1].column_type(col - nl)

    def source_column(self, col: int):
        if not self.lookup:
            return None
        nl = len(self.parents[0].columns)
        if col < nl:
            return self.parents[0].source_column(col)
        return self.parents[1].source_column(col - nl)

    def base_tables(self):
        if not self.lookup:
            return None
        return self.parents[0].base_tables() | self.parents[1].base_tables()

    def sql_rel(self):
        if not self.lookup:
            return None
        left, right = self.parents[0].sql_rel(), self.parents[1].sql_rel()
        if left is None or right is None:
            return None
        from ..sqlrel import join_rel

        return join_rel(left, right, self.left_key, self.right_key, self.outer)

    def _pushed(self):
        """This join's SQL relation (see ``sqlrel``), kept while base storage's schemas of its
        tables stay the same; None when it has none or a table has deltas on their way."""
        cached = self._rel
        if cached is None:
            rel = self.sql_rel()
            if rel is None:
                self._rel = False
                return None
            cached = self._rel = (rel, {})
        elif cached is False:
            return None
        rel = cached[0]
        if rel.stale():
            self._rel = None
            return self._pushed()
        if rel.pending():
            return None
        return cached

    # --- partial state ---------------------------------------------------------------------
    def _tuple(self, key) -> tuple:
        return key if self._multi else (key,)

    def _norm(self, key):
        return ck_tuple(key) if self._multi else ck(key)

    def ensure(self, key) -> None:
        """Fill join key ``key`` on both sides (an upquery to each parent)."""
        key = self._norm(key)
        if not self.partial or key in self.filled:
            return
        kt = self._tuple(key)
        left, right = self.parents
        lbag: dict = {}
        for row, m in left.query(list(self.left_key), kt):
            lbag[row] = lbag.get(row, 0) + m
        rbag: dict = {}
        if not self._has_null(key):
            for row, m in right.query(list(self.right_key), kt):
                rbag[row] = rbag.get(row, 0) + m
        lbag = {r: c for r, c in lbag.items() if c}
        rbag = {r: c for r, c in rbag.items() if c}
        if lbag:
            self.left_state[key] = lbag
        else:
            self.left_state.pop(key, None)
        if rbag:
            self.right_state[key] = rbag
        else:
            self.right_state.pop(key, None)
        self.filled.add(key)
        if self.graph is not None:
            self.graph.filled(self, key, len(lbag) + len(rbag))

    def _output_for(self, key) -> list:
        out = []
        matches_ = self.right_state.get(key) if not self._has_null(key) else None
        for lrow in self.left_state.get(key, {}):
            if matches_:
                for rrow in matches_:
                    out.append(lrow + rrow)
            elif self.outer:
                out.append(lrow + self.pad)
        return out

    def evict_key(self, key) -> None:
        key = self._norm(key)
        if key not in self.filled:
            return
        derived = self._output_for(key)
        self.filled.discard(key)
        self.left_state.pop(key, None)
        self.right_state.pop(key, None)
        if self.graph is not None:
            self.graph.evicted(self, key)
            if not derived and not self.probe_on_drop:
                # nothing derived, but a congruent state below may hold the key (empty): it must
                # go too, or a later delta dropped here (without a probe) would never reach it
                derived = [self._key_probe(key)]
            if derived:
                self.graph.probe(self, derived)

    def _key_probe(self, key) -> tuple:
        """A probe row naming only join key ``key`` (every other column unknown)."""
        row = [UNKNOWN] * len(self.columns)
        kt = self._tuple(key)
        nl = len(self.parents[0].columns)
        for i, (lk, rk) in enumerate(zip(self.left_key, self.right_key)):
            row[lk] = kt[i]
            if not self.outer:
                row[nl + rk] = kt[i]
        return tuple(row)

    def evict_all(self) -> None:
        for key in list(self.filled):
            self.evict_key(key)

    def _probe_row(self, port: int, row) -> tuple:
        """The output row a dropped input row would have produced, other side unknown."""
        nl = len(self.parents[0].columns)
        nr = len(self.parents[1].columns)
        if port == 0:
            other = [UNKNOWN] * nr
            for lk, rk in zip(self.left_key, self.right_key):
                other[rk] = row[lk]
            return tuple(row) + tuple(other)
        other = [UNKNOWN] * nl
        for lk, rk in zip(self.left_key, self.right_key):
            other[lk] = row[rk]
        return tuple(other) + tuple(row)

    def on_probe(self, port: int, rows: list) -> list:
        out = []
        keyf = self._lk if port == 0 else self._rk
        for row in rows:
            key = keyf(row)
            if (self._multi and UNKNOWN in key) or key is UNKNOWN:
                self.evict_all()
            elif key in self.filled:
                self.evict_key(key)
            out.append(self._probe_row(port, row))
        return out

    def _split(self, port: int, batch: list) -> list:
        """Keep the records whose join key is filled; probe downstream for the others."""
        keyf = self._lk if port == 0 else self._rk
        filled = self.filled
        keep = []
        dropped = []
        for rec in batch:
            if keyf(rec[0]) in filled:
                keep.append(rec)
            else:
                dropped.append(self._probe_row(port, rec[0]))
        if dropped and self.probe_on_drop and self.graph is not None:
            self.graph.probe(self, dropped)
        return keep

    def query(self, cols, key) -> list:
        """Output rows whose ``cols`` equal ``key``: ask the side those columns come from, fill the
        join keys those rows have, and join them with the other side."""
        if self.lookup and cols:
            pushed = self._pushed()
            if pushed is not None:
                from ..sqlrel import select

                rel, sqls = pushed
                return select(rel.storage, rel, cols, key, sqls)
        nl = len(self.parents[0].columns)
        lsel = [(c, k) for c, k in zip(cols, key) if c < nl]
        rsel = [(c - nl, k) for c, k in zip(cols, key) if c >= nl]
        self._fill_asked_key(cols, key)
        stats = None
        side = 0 if lsel or self.outer else 1
        if side == 0 and rsel and self.right_asks:
            rcols = tuple(c for c, _ in rsel)
            if rcols in self.right_asks:
                stats = self._side_stats.setdefault((tuple(cols), rcols), [0, 0, 0, 0])
                side = _pick_side(stats)
        if side == 0:
            if lsel:
                rows = self.parents[0].query([c for c, _ in lsel], tuple(k for _, k in lsel))
            else:
                rows = self.parents[0].contents()
            out = self._join_left_rows(rows)
        else:
            rows = self.parents[1].query([c for c, _ in rsel], tuple(k for _, k in rsel))
            out = self._join_right_rows(rows)
        if stats is not None:
            stats[2 * side] += 1
            stats[2 * side + 1] += len(rows)
        if not (rsel if side == 0 else lsel) and (lsel or rsel):
            return out  # the side asked matched every column: so does each joined row
        return [(r, m) for r, m in out if matches(r, cols, key)]

    def query_range(self, cols, key, col, lo, hi, limit=None, desc=False):
        """Output rows whose ``cols`` equal ``key`` and whose ``col`` lies in ``[lo, hi)``: a
        ranged upquery to the side ``cols`` and ``col`` come from (the planner asks only when
        they all come from one side, the left one for a left join), then, as ``query`` does,
        each row's join key filled and the row joined with the other side. The side's answered
        sub-range is the join's: the other side adds matches, it never cuts rows out of it."""
        nl = len(self.parents[0].columns)
        self._fill_asked_key(cols, key)
        if col < nl:
            rows, lo, hi = self.parents[0].query_range(cols, key, col, lo, hi, limit, desc)
            return self._join_left_rows(rows), lo, hi
        rows, lo, hi = self.parents[1].query_range(
            [c - nl for c in cols], key, col - nl, lo, hi, limit, desc
        )
        return self._join_right_rows(rows), lo, hi

    def _fill_asked_key(self, cols, key) -> None:
        """A lookup by the join key itself (perhaps with more columns, or a range of another)
        fills that key even when no row has it yet, so a later delta with the key is not dropped
        here while a key below is filled."""
        if not self.partial:
            return
        nl = len(self.parents[0].columns)
        d = dict(zip(cols, key))
        for keycols, shift in ((self.left_key, 0), (self.right_key, nl)):
            if all(k + shift in d for k in keycols):
                j = tuple(d[k + shift] for k in keycols)
                self.ensure(j if self._multi else j[0])

    # --- a lookup join: the other input looked up in base storage ----------------------------
    def _bag(self, side: int, key) -> list:
        """The records of input ``side`` whose join key is ``key`` (not NULL), as the join has
        received them (base storage minus the deltas still on their way): positive counts, a
        row perhaps in several records."""
        cols = self._key_cols[side]
        return self.parents[side].query(cols, key if self._multi else (key,))

    def _by_key(self, port: int, rows) -> dict:
        keyf = self._lk if port == 0 else self._rk
        if len(rows) == 1:  # (a one-row write)
            return {keyf(rows[0][0]): rows}
        groups: dict = {}
        for rec in rows:
            k = keyf(rec[0])
            g = groups.get(k)
            if g is None:
                groups[k] = [rec]
            else:
                g.append(rec)
        return groups

    def _lookup_input(self, port: int, batch: list, gated: bool = False) -> list:
        """A delta from ``port`` joined with the other input looked up per join key. A left
        join's right delta also switches its left rows between padded and matched when the
        key's right rows appear or disappear: ``before`` is the right input without this delta
        (it is still on its way, so base storage's rows minus it), ``after`` with it."""
        items = None
        if gated and len(batch) == 1:
            # a one-row write (the usual delta): the loop below's first step for its one key,
            # without grouping the batch by key, and its gate asked once
            graph = self.graph
            version = graph.version if graph is not None else -1
            cached = self._gate_cache
            gate = cached[1] if cached is not None and cached[0] == version else self._gate()
            row, m = batch[0]
            key = (self._lk if port == 0 else self._rk)(row)
            if gate is not None and not gate(key if self._multi else (key,)):
                self.gated = True
                if self.outer and port == 1:
                    if version != self._right_min_version:
                        self._right_min_current()
                    if key in self._right_min:
                        self._right_low(key, m)  # the bound follows every right delta
                return []
            items = ((key, batch),)
            gated = False  # (its one key passed)
        out = []
        pad = self.pad
        outer = self.outer
        gate = self._gate() if gated else None  # deltas only: an upquery fills what it asks
        multi = self._multi
        keep = outer and port == 1
        if keep:
            self._right_min_current()
        for key, recs in items or self._by_key(port, batch).items():
            if gate is not None and not gate(key if multi else (key,)):
                self.gated = True
                if keep and key in self._right_min:
                    d = 0
                    for _row, m in recs:
                        d += m
                    self._right_low(key, d)  # the bound follows every right delta
                continue  # every state below lacks this key: they would drop what it joins
            null = self._has_null(key)
            if port == 0:
                others = None if null else self._bag(1, key)
                for row, m in recs:
                    if others:
                        for rrow, rc in others:
                            out.append((row + rrow, m * rc))
                    elif outer:
                        out.append((row + pad, m))
                continue
            if null:
                continue
            if outer:
                d = 0
                for _row, m in recs:
                    d += m
                low = self._right_low(key, d)
            lefts = self._bag(0, key)
            if not lefts:
                continue
            if outer:
                if low > 0:
                    before = after = True  # a bound with and without the delta: no count
                else:
                    before, after = self._right_nonempty(key, d)
                    if after:
                        self._right_min_put(key, 1)
                if before != after:
                    sign = -1 if after else 1
                    for lrow, lc in lefts:
                        out.append((lrow + pad, sign * lc))
            for row, m in recs:
                for lrow, lc in lefts:
                    out.append((lrow + row, lc * m))
        return out

    def _gate(self):
        """What lets a delta skip its lookups (``Node.key_gate``): the states below that
        would silently drop every record of a join key they lack. Planned again whenever the
        graph changes."""
        graph = self.graph
        version = graph.version if graph is not None else -1
        cached = self._gate_cache
        if cached is not None and cached[0] == version:
            return cached[1]
        from ..partial import children_gate

        nl = len(self.parents[0].columns)
        carriers = {lk: j for j, lk in enumerate(self.left_key)}
        if not self.outer:  # a left join's right columns may be padding
            carriers.update({nl + rk: j for j, rk in enumerate(self.right_key)})
        gate = children_gate(self, carriers)
        self._gate_cache = (version, gate)
        return gate

    # bounds kept per join key at most (then forgotten, to be counted again)
    RIGHT_MIN_LIMIT = 1 << 16

    def _right_min_current(self) -> None:
        """Before a right delta: forget ``_right_min`` if the graph changed since it was kept
        (a replay, or an undone replay, may have passed records base storage never got)."""
        graph = self.graph
        version = graph.version if graph is not None else -1
        if version != self._right_min_version:
            self._right_min.clear()
            self._right_min_version = version

    def _right_low(self, key, delta: int) -> int:
        """The right input's lower bound for ``key`` before a delta of net count ``delta``
        (0: none known), moved to what it is after the delta: a bound ``b`` of the records
        received stays one of ``b + delta`` once the delta is received (a negative delta may
        take it to nothing known)."""
        bounds = self._right_min
        low = bounds.pop(key, 0)
        if low > 0 and low + delta > 0:
            bounds[key] = low + delta
        return low if low + delta > 0 else 0

    def _right_min_put(self, key, low: int) -> None:
        bounds = self._right_min
        if len(bounds) >= self.RIGHT_MIN_LIMIT:
            bounds.clear()
        if bounds.get(key, 0) < low:
            bounds[key] = low

    def _right_nonempty(self, key, delta: int) -> tuple[bool, bool]:
        """Has the right input rows for join key ``key`` without the delta on its way, and
        with it (``delta``: its net count)? Counted in base storage, no further than needed,
        when the right input is one table's columns."""
        rel = self._right_rel
        if rel is None or (rel and rel.stale()):
            rel = self.parents[1].sql_rel()
            self._right_rel = rel = (
                rel if rel is not None and rel.single and not rel.conds else False
            )
            self._counts = {}
            self._right_min.clear()
        if rel:
            kt = key if self._multi else (key,)
            return nonempty(rel.storage, rel, self._key_cols[1], kt, delta, self._counts)
        n = 0
        for _row, m in self._bag(1, key):
            n += m
        return n > 0, n + delta > 0

    def _lookup_contents(self) -> list:
        """The whole join, from both inputs' contents (a hash join, nothing kept)."""
        right: dict = {}
        rk = self._rk
        for row, m in self.parents[1].contents():
            k = rk(row)
            if self._has_null(k):
                continue
            bag = right.setdefault(k, {})
            bag[row] = bag.get(row, 0) + m
        out = []
        lk = self._lk
        pad = self.pad
        for row, m in self.parents[0].contents():
            k = lk(row)
            others = None if self._has_null(k) else right.get(k)
            if others:
                for rrow, rc in others.items():
                    if rc:
                        out.append((row + rrow, m * rc))
            elif self.outer:
                out.append((row + pad, m))
        return out

    def _join_left_rows(self, rows) -> list:
        """Left input records joined with the right side, their join keys filled first."""
        if self.lookup:
            return self._lookup_input(0, rows)
        out = []
        for row, m in rows:
            j = self._lk(row)
            self.ensure(j)
            others = self.right_state.get(j) if not self._has_null(j) else None
            if others:
                for rrow, rc in others.items():
                    out.append((row + rrow, m * rc))
            elif self.outer:
                out.append((row + self.pad, m))
        return out

    def _join_right_rows(self, rows) -> list:
        """Right input records joined with the left side (inner joins), join keys filled."""
        if self.lookup:
            out = []
            for key, recs in self._by_key(1, rows).items():
                if self._has_null(key):
                    continue
                lefts = self._bag(0, key)
                for row, m in recs:
                    for lrow, lc in lefts:
                        out.append((lrow + row, lc * m))
            return out
        out = []
        for row, m in rows:
            j = self._rk(row)
            if self._has_null(j):
                continue
            self.ensure(j)
            for lrow, lc in self.left_state.get(j, {}).items():
                out.append((lrow + row, m * lc))
        return out

    def _has_null(self, key) -> bool:
        if self._multi:
            return None in key
        return key is None

    def on_input(self, port: int, batch: list) -> list:
        if self.lookup:
            pos = getattr(batch, "pos", None)
            if pos is None:  # inline propagation: the tables as pending deltas leave them
                return self._lookup_input(port, batch, gated=True)
            # message scheduling: the other input as of the writes that reached this join on
            # its port; then this input's position moves to the delta's. No gate while a fill
            # is under way (a state below may be filled by an answer still on its way, which
            # this delta must reach); otherwise a delta of keys every state below lacks stops
            # here, as inline (``gated``: its position alone still goes down).
            graph = self.graph
            rt = graph.runtime if graph is not None else None
            quiet = rt is not None and rt.dataflow.quiet()
            self.gated = False
            with reading_at(self.view):
                out = self._lookup_input(port, batch, gated=quiet)
            self.view.update(pos)
            return out
        if self.partial:
            batch = self._split(port, batch)
        if port == 0:
            return self._from_left(batch)
        return self._from_right(batch)

    def absorb(self, port: int, batch: list) -> None:
        """A full state being built: each record added to its side's bag, as ``_from_left``
        and ``_from_right`` add it, without joining it (nothing below wants the output)."""
        if self.lookup or self.partial:
            self.on_input(port, batch)
            return
        keyf = self._lk if port == 0 else self._rk
        state = self.left_state if port == 0 else self.right_state
        skip_null = port == 1  # a right row with a NULL key never matches: not kept
        has_null = self._has_null
        for row, m in batch:
            key = keyf(row)
            if skip_null and has_null(key):
                continue
            _bag_add(state, key, row, m)

    def _from_left(self, batch: list) -> list:
        out = []
        lk = self._lk
        lstate = self.left_state
        rstate = self.right_state
        outer = self.outer
        pad = self.pad
        for row, m in batch:
            key = lk(row)
            _bag_add(lstate, key, row, m)
            matches = rstate.get(key) if not self._has_null(key) else None
            if matches:
                for rrow, rc in matches.items():
                    out.append((row + rrow, m * rc))
            elif outer:
                out.append((row + pad, m))
        return out

    def _from_right(self, batch: list) -> list:
        out = []
        rk = self._rk
        lstate = self.left_state
        rstate = self.right_state
        outer = self.outer
        pad = self.pad
        for row, m in batch:
            key = rk(row)
            if self._has_null(key):
                continue  # never matches anything; not needed for output
            before = key in rstate  # (a bag is dropped when it empties)
            _bag_add(rstate, key, row, m)
            after = key in rstate
            lefts = lstate.get(key)
            if not lefts:
                continue
            if outer and before != after:
                # the left rows switch between padded and matched
                sign = -1 if after else 1
                for lrow, lc in lefts.items():
                    out.append((lrow + pad, sign * lc))
            for lrow, lc in lefts.items():
                out.append((lrow + row, lc * m))
        return out

    def contents(self) -> list:
        if self.lookup:
            pushed = self._pushed()
            if pushed is not None:  # SQLite's join of the whole inputs
                from ..sqlrel import select

                rel, sqls = pushed
                return select(rel.storage, rel, [], (), sqls)
            return self._lookup_contents()
        out = []
        rstate = self.right_state
        pad = self.pad
        for key, bag in self.left_state.items():
            matches = rstate.get(key) if not self._has_null(key) else None
            for lrow, lc in bag.items():
                if matches:
                    for rrow, rc in matches.items():
                        out.append((lrow + rrow, lc * rc))
                elif self.outer:
                    out.append((lrow + pad, lc))
        return out

    def describe(self) -> str:
        kind = "left join" if self.outer else "join"
        on = ", ".join(
            f"{self.parents[0].columns[a]}={self.parents[1].columns[b]}"
            for a, b in zip(self.left_key, self.right_key)
        )
        return f"{kind} on {on}" + (" (lookups)" if self.lookup else "")

    def key_columns(self) -> list[int]:
        return list(self.left_key)

    def column_source(self, col: int):
        nl = len(self.parents[0].columns)
        return (0, col) if col < nl else (1, col - nl)

    def state_size(self):
        keys = len(self.left_state) + len(self.right_state)
        rows = sum(len(b) for b in self.left_state.values())
        rows += sum(len(b) for b in self.right_state.values())
        return (keys, rows)

    def on_removed(self):
        if self._counted is not None:
            self._counted.lookup_count -= 1
            self._counted = None
        stop_reading(self)
        self.left_state = {}
        self.right_state = {}
        self.filled = set()

    def make_full(self) -> None:
        if self.lookup:
            return
        self.partial = False
        self.filled = set()
        self.left_state = {}
        self.right_state = {}
        self.on_input(0, self.parents[0].contents())
        self.on_input(1, self.parents[1].contents())

    # --- state as tests and audits see it ------------------------------------------------------
    def filled_keys(self) -> list:
        return list(self.filled)

    def sample_state(self, n: int = 20) -> list:
        return _sample_bags(self.left_state, n) or _sample_bags(self.right_state, n)

    def compare_filled(self, twin):
        for key in self.filled:
            for side, mine, theirs in (
                ("left", self.left_state, twin.left_state),
                ("right", self.right_state, twin.right_state),
            ):
                if side == "right" and self._has_null(key):
                    continue  # a NULL key's right rows are never kept
                yield side, key, _nonzero(mine.get(key, {})), _nonzero(theirs.get(key, {}))

    # --- Spark bulk replay (spark/replay.py) ------------------------------------------------
    replay_role = "keep"

    def replay_op(self):
        if self.partial:
            return ("state",)
        return ("join", list(self.left_key), list(self.right_key), bool(self.outer))

    # --- upqueries as messages (domain.py) --------------------------------------------------
    # Asked by its join key, a partial join answers from its own state, filling the key on both
    # sides first (``request_fill``; with ``join_fill_buffering`` a delta for a key being filled
    # from a side that has answered is folded into that side's pending rows). Asked by other
    # columns, it asks the side they come from, and each row that comes back has its join key
    # filled before it is joined: a missing one discards the answer, fills the keys and asks
    # again (``dependent_upqueries``).

    def out_pos(self, pos):
        """A lookup join's output reflects its inputs as of its ``view``."""
        return dict(self.view) if self.lookup else pos

    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        if self.lookup:
            # no state to fill: answered at once, as a full state answers, from both inputs
            # as of the writes that reached this join (its position in the stream)
            with reading_at(self.view):
                if rng is None:
                    rows = []
                    for k in dict.fromkeys(keys):
                        rows.extend(self.query(list(cols), k))
                    df.respond(self, up, hops, rows)
                    return
                if len(keys) != 1:  # pragma: no cover - readers ask one key at a time
                    raise RuntimeError("a ranged upquery asks for one key")
                col, lo, hi, limit, desc = rng
                rows, lo, hi = self.query_range(list(cols), keys[0], col, lo, hi, limit, desc)
            df.respond(self, up, hops, rows, (lo, hi))
            return
        nl = len(self.parents[0].columns)
        for side, jcols, base in ((0, self.left_key, 0), (1, self.right_key, nl)):
            if side == 1 and self.outer:
                break
            want = [c + base for c in jcols]
            if all(c in cols for c in want):
                # asked by the join key: answer from the join's own state, filling it first
                pos = [cols.index(c) for c in want]
                jks = []
                for k in keys:
                    t = tuple(k[i] for i in pos)
                    jks.append(t if self._multi else t[0])
                jks = list(dict.fromkeys(jks))

                def answer(jks=jks):
                    rows = []
                    for jk in jks:
                        rows.extend(self._records_for(jk))
                    rows = select(rows, cols, keys)
                    if rng is None:
                        df.respond(self, up, hops, rows)
                    else:  # all of the range, from the join's state
                        df.respond(self, up, hops, in_range(rows, rng), (rng[1], rng[2]))

                df.need(self, jks, answer)
                return
        if rng is not None:
            # a ranged request goes to the side its columns and range come from (the left one
            # for a left join; range_side); the rows that come back get their join keys filled
            # (dependent upqueries) and are joined with the other side
            col = rng[0]
            if col < nl and all(c < nl for c in cols):
                port, shift = 0, 0
            elif not self.outer and col >= nl and all(c >= nl for c in cols):
                port, shift = 1, nl
            else:  # pragma: no cover - range_traceable plans none other
                raise RuntimeError(f"untraceable ranged upquery through {self}")
            pcols = tuple(c - shift for c in cols)
            prng = (col - shift,) + tuple(rng[1:])
            hop = (self.id, port, cols, tuple(keys), pcols, tuple(keys), prng)
            df.request(self, port, up, hops + (hop,), pcols, keys, prng)
            return
        lsel = [i for i, c in enumerate(cols) if c < nl]
        rsel = [i for i, c in enumerate(cols) if c >= nl]
        # ask the side the columns trace back through (a column computed above the join, an
        # aggregate's COUNT, cannot be looked up); the join's output is filtered by all of them
        left, right = self.parents
        left_ok = bool(lsel) and left.traceable([cols[i] for i in lsel])
        right_ok = bool(rsel) and not self.outer and right.traceable([cols[i] - nl for i in rsel])
        if lsel and not left_ok and not right_ok:
            # neither side traces every column: ask by the left columns that do trace
            sub = [i for i in lsel if left.traceable([cols[i]])]
            if sub:
                lsel, left_ok = sub, True
        if lsel and (left_ok or not right_ok):
            pcols = tuple(cols[i] for i in lsel)
            port = 0
        elif not self.outer:
            pcols = tuple(cols[i] - nl for i in rsel)
            port = 1
            lsel = rsel
        else:
            raise RuntimeError(f"untraceable upquery through {self}")
        pkeys = list(dict.fromkeys(tuple(k[i] for i in lsel) for k in keys))
        # the hop also records what was asked of the parent, to ask again (dependent upqueries)
        hop = (self.id, port, cols, tuple(keys), pcols, tuple(pkeys), None)
        df.request(self, port, up, hops + (hop,), pcols, pkeys)

    def _records_for(self, jk) -> list:
        """The output records of join key ``jk`` from the join's state."""
        out = []
        lefts = self.left_state.get(jk, {})
        rights = self.right_state.get(jk) if not self._has_null(jk) else None
        for lr, lc in lefts.items():
            if rights:
                for rr, rc in rights.items():
                    out.append((lr + rr, lc * rc))
            elif self.outer:
                out.append((lr + self.pad, lc))
        return out

    def request_fill(self, df, up, fks) -> None:
        """A join key is filled by asking both sides for it (a NULL key only the left one)."""
        pend = df.pending[self.id]
        for fk in fks:
            if self._has_null(fk):
                pend[fk].got[1] = {}  # NULL never matches: nothing to ask
        tuples = [self._tuple(k) for k in fks]
        lk = tuple(self.left_key)
        hop = (self.id, 0, lk, tuple(tuples))
        df.request(self, 0, up, (hop,), lk, tuples)
        rkeys = [t for t, k in zip(tuples, fks) if not self._has_null(k)]
        if rkeys:
            rk = tuple(self.right_key)
            hop = (self.id, 1, rk, tuple(tuples))
            df.request(self, 1, up, (hop,), rk, rkeys)

    def on_response(self, df, port, up, hops, rows, span=None) -> None:
        hop = hops[-1]
        cols, keys = hop[2], hop[3]
        keyf = self._lk if port == 0 else self._rk
        has_null = self._has_null
        if self.partial:
            missing = []
            # a NULL key matches nothing, but a left join's left rows with it are still kept
            # (and padded) per key, so only an inner join can skip it
            skip_null = not (self.outer and port == 0)
            filled = self.filled
            for r, _m in rows:
                jk = keyf(r)
                if skip_null and has_null(jk):
                    continue
                if jk not in filled:
                    missing.append(jk)
            if missing and df.mechanisms["dependent_upqueries"]:
                # discard the response, fill the join keys, then ask again
                df.discarded += 1
                missing = list(dict.fromkeys(missing))
                # what this join asked its parent
                pcols, pkeys, prng = hop[4], list(hop[5]), hop[6]

                def reissue():
                    df.reissued += 1
                    df.request(self, port, up, hops, pcols, pkeys, prng)

                df.need(self, missing, reissue)
                return
        out = []
        if port == 0:
            rstate = self.right_state
            for r, m in rows:
                jk = keyf(r)
                others = rstate.get(jk) if not has_null(jk) else None
                if others:
                    for rr, rc in others.items():
                        out.append((r + rr, m * rc))
                elif self.outer:
                    out.append((r + self.pad, m))
        else:
            lstate = self.left_state
            for r, m in rows:
                jk = keyf(r)
                if has_null(jk):
                    continue
                for lr, lc in lstate.get(jk, {}).items():
                    out.append((lr + r, m * lc))
        # a ranged answer keeps its sub-range: the other side adds matches, it cuts no rows
        df.respond(self, up, hops[:-1], select(out, cols, list(keys)), span)

    def fold_held(self, df, port, batch) -> None:
        if not df.mechanisms["join_fill_buffering"]:
            return
        pend = df.pending.get(self.id)
        if not pend:
            return
        keyf = self._lk if port == 0 else self._rk
        for row, m in batch:
            jk = keyf(row)
            p = pend.get(jk)
            if p is None:
                continue
            bag = p.got.get(port)
            if bag is None:
                continue  # that side's answer, still to come, includes this delta
            c = bag.get(row, 0) + m
            if c:
                bag[row] = c
            else:
                bag.pop(row, None)

    def on_fill(self, df, port, up, rows, span=None) -> None:
        """One side's answer for join keys being filled; a key is filled once both sides have
        answered for it."""
        pend = df.pending.get(self.id, {})
        keyf = self._lk if port == 0 else self._rk
        bags: dict = {}
        for r, m in rows:
            k = keyf(r)
            b = bags.get(k)
            if b is None:
                b = bags[k] = {}
            b[r] = b.get(r, 0) + m
        done = []
        for jk in up.keys:
            p = pend.get(jk)
            if p is None or p.up != up.id or port in p.got:
                continue
            p.got[port] = {r: c for r, c in bags.get(jk, {}).items() if c}
            if len(p.got) == 2:
                done.append(jk)
        for jk in done:
            got = pend[jk].got
            if got[0]:
                self.left_state[jk] = got[0]
            else:
                self.left_state.pop(jk, None)
            if got[1]:
                self.right_state[jk] = got[1]
            else:
                self.right_state.pop(jk, None)
            self.filled.add(jk)
            df.done(self, jk)
            df.graph.filled(self, jk, len(got[0]) + len(got[1]))

    # --- planning (plan_upqueries.py) ---------------------------------------------------------
    # A column traces to the side it comes from (either side of an inner join, the left side
    # of a left join). A partial join is filled per join key on both sides, so its parents are
    # looked up by their join keys; so are a lookup join's, which keeps no state and looks
    # each delta's other input up in base storage (``on_added``).

    def traceable(self, cols) -> bool:
        left, right = self.parents
        nl = len(left.columns)
        lcols = [c for c in cols if c < nl]
        rcols = [c - nl for c in cols if c >= nl]
        if lcols and left.traceable(lcols):
            return True
        return bool(not self.outer and rcols and right.traceable(rcols))

    def range_side(self, cols, col) -> int | None:
        """The input a ranged upquery on ``cols`` and ``col`` goes to: the side all of them
        come from (the left side only, for a left join), or None."""
        nl = len(self.parents[0].columns)
        if col < nl and all(c < nl for c in cols):
            return 0
        if not self.outer and col >= nl and all(c >= nl for c in cols):
            return 1
        return None

    def range_traceable(self, cols, col) -> bool:
        """The side holding ``cols`` and ``col`` takes the ranged upquery; the join then fills
        the join keys of the rows it returns, so both sides must be traceable by join key."""
        side = self.range_side(cols, col)
        if side is None:
            return False
        left, right = self.parents
        if not (left.traceable(list(self.left_key)) and right.traceable(list(self.right_key))):
            return False
        shift = 0 if side == 0 else len(left.columns)
        return self.parents[side].range_traceable([c - shift for c in cols], col - shift)

    def plan_need(self, planner, cols) -> None:
        left, right = self.parents
        lk, rk = list(self.left_key), list(self.right_key)
        if self.lookup:
            # no state: every delta looks the other input up by the join key
            planner.need(left, lk)
            planner.need(right, rk)
            if cols is not None:
                self.plan_pass(planner, cols)
            return
        if cols is not None and planner.enabled and self.traceable(cols):
            if left.traceable(lk) and right.traceable(rk):
                self.partial = True
                planner.need(left, lk)
                planner.need(right, rk)
                self.plan_pass(planner, cols)
                return
        planner.need(left, None)
        planner.need(right, None)

    def plan_pass(self, planner, cols) -> None:
        left, right = self.parents
        nl = len(left.columns)
        lcols = [c for c in cols if c < nl]
        rcols = [c - nl for c in cols if c >= nl]
        if lcols and left.traceable(lcols):
            planner.need(left, lcols)
            if rcols and not self.outer and right.stateless_to_base(rcols):
                # the right input can answer too (no state on the way to base storage, given
                # an index): the join asks whichever side returns fewer rows (``_pick_side``)
                planner.need(right, rcols)
                self.right_asks.add(tuple(rcols))
        elif rcols:
            planner.need(right, rcols)

    def plan_range(self, planner, cols, col) -> None:
        # the rows in range come from one side by a ranged upquery; each row's join key is then
        # filled on both sides, as for any partial join
        if planner.is_new(self) and not self.partial and not self.lookup:
            self.partial = bool(planner.enabled)
        planner.need(self.parents[0], list(self.left_key))
        planner.need(self.parents[1], list(self.right_key))
        side = self.range_side(cols, col)
        shift = 0 if side == 0 else len(self.parents[0].columns)
        planner.need_range(self.parents[side], [c - shift for c in cols], col - shift)

    def fill_carriers(self):
        """A join key's value sits in the left key columns, and (an inner join's) the right."""
        nl = len(self.parents[0].columns)
        if self.outer:
            return [{lk} for lk in self.left_key]
        return [{lk, nl + rk} for lk, rk in zip(self.left_key, self.right_key)]

    def fill_key(self, port):
        return list(self.left_key if port == 0 else self.right_key)


def _nonzero(bag: dict):
    """A ``{row: count}`` bag as a Counter of its rows with a non-zero count."""
    from collections import Counter

    return Counter({r: c for r, c in bag.items() if c})


def _sample_bags(state: dict, n: int) -> list:
    """``(row, count)`` records of at most ``n`` keys of a ``key -> {row: count}`` state, three
    rows a key."""
    out = []
    for bag in list(state.values())[:n]:
        out.extend(list(bag.items())[:3])
    return out


def _pick_side(stats: list[int]) -> int:
    """Which input answers a lookup that has columns of both sides of an inner join (both give
    the exact answer; the other side's columns filter the joined rows): the one that has
    returned fewer rows per lookup. ``stats`` is [lookups, rows] of the left then the right
    input. Each side answers first once; then every 64th lookup goes to the side asked less, so
    a change in the data is noticed; counts are halved as they grow, so recent lookups weigh
    more."""
    ql, rl, qr, rr = stats
    if ql == 0:
        return 0
    if qr == 0:
        return 1
    if ql + qr >= 1024:
        stats[:] = [(ql + 1) // 2, rl // 2, (qr + 1) // 2, rr // 2]
        ql, rl, qr, rr = stats
    if (ql + qr) % 64 == 0:
        return 0 if ql < qr else 1
    return 0 if rl * qr <= rr * ql else 1

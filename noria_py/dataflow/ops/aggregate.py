"""Grouped aggregation: COUNT, COUNT(DISTINCT), SUM, AVG, MIN, MAX, GROUP_CONCAT, and the
registered aggregates the dataflow can maintain (STD/STDDEV/VARIANCE and their _POP/_SAMP forms,
BIT_AND, BIT_OR, BIT_XOR: ``sql/functions/aggregates.py``).

The input row is ``group columns + aggregate arguments`` (a Project below prepares it); the output
row is ``group columns + one value per aggregate``. For each group the operator keeps the row
count and one accumulator per aggregate; a batch that touches a group retracts the group's old
output row and emits the new one.

MIN and MAX keep every value of the group in a sorted list, so deleting the current extreme
yields the next one exactly. SUM over doubles accumulates exactly (as fractions) so retractions
leave no rounding residue. A registered aggregate runs the very accumulator base storage runs
for a proxied query (a row of multiplicity m is m ``step`` calls, -m is m ``inverse`` calls);
those accumulators retract exactly (the moments as integers or fractions, the bits as counts), so
a maintained value equals the one computed from scratch. With no GROUP BY the single group always exists and its row is
emitted even when the input is empty (COUNT(*) = 0, SUM = NULL), as SQL requires.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from fractions import Fraction

from sortedcontainers import SortedKeyList

from ...sql import functions as F
from ...sql import values as V
from ...sql.collation import CK
from ...sql.functions.aggregates import STATISTICS, statistic_kind  # (registers STD, BIT_OR ...)
from ..domain import select
from ..node import FULL, PARTIAL, Node
from ..partial import (
    _STRINGY,
    UNKNOWN,
    LookupIndexes,
    ck,
    ck_tuple,
    has_strings,
    key_of,
    keyer,
    matches,
)
from .base import reading_at, start_reading, stop_reading

GROUP_CONCAT_MAX_LEN = 1024  # MySQL's default group_concat_max_len


class AggSpec:
    """One aggregate: function name, argument column(s) in the input row, options."""

    __slots__ = ("func", "args", "distinct", "kind", "separator", "order", "scale", "_make")

    def __init__(
        self,
        func: str,
        args: list[int],
        distinct: bool = False,
        kind: str = V.INT,
        separator: str = ",",
        order: list[tuple[int, bool]] | None = None,
        scale: int = 0,
    ):
        self.func = func
        self.args = args
        self.distinct = distinct
        self.kind = kind  # kind of the argument
        self.separator = separator
        self.order = order or []
        self.scale = scale  # decimal scale of the argument (for AVG)
        self._make = None  # the accumulator class of ``new()`` (found on its first call)

    def output_kind(self) -> str:
        f = self.func
        if f == "COUNT":
            return V.INT
        if f == "AVG":
            if self.kind == V.STR:
                return V.FLOAT  # MySQL reads strings as doubles
            return V.float_sum_kind(self.kind, True) if self.kind == V.FLOAT else V.DECIMAL
        if f == "SUM":
            # MySQL: SUM of exact values is a DECIMAL (of integers too), of anything else a DOUBLE
            if self.kind == V.FLOAT:
                return V.float_sum_kind(self.kind, False)
            return V.FLOAT if self.kind == V.STR else V.DECIMAL
        if f == "GROUP_CONCAT":
            return V.STR
        if f in STATISTICS:
            return statistic_kind(self.kind, self.scale)  # shown with fixed decimals
        registered = F.AGGREGATES.get(f)
        if registered is not None:
            return registered.result_kind([self.kind])
        return self.kind

    def nullable(self) -> bool:
        """Can the value be NULL: exactly when the value over no rows is (COUNT and the BIT_
        aggregates never are)."""
        return self.new().value() is None

    def describe(self) -> str:
        d = "DISTINCT " if self.distinct else ""
        a = ",".join(f"#{i}" for i in self.args) or "*"
        return f"{self.func}({d}{a})"

    def new(self, once: bool = False):
        """A fresh accumulator; ``once``: for one batch of insertions, never retracted
        (``Aggregate.evaluate``)."""
        if not once:
            return (self._make or self._set_make())(self)
        if self.func in ("MIN", "MAX"):
            return _ExtremeOnce(self)
        return self._accumulator()(self)

    def _set_make(self):
        make = self._make = self._accumulator()
        return make

    def _accumulator(self):
        """The accumulator class of this aggregate (``new``)."""
        f = self.func
        if self.distinct and f in ("COUNT", "SUM", "AVG"):
            return _DistinctAcc
        if f == "COUNT":
            return _CountAcc
        if f in ("SUM", "AVG"):
            return _SumAcc
        if f in ("MIN", "MAX"):
            return _ExtremeAcc
        if f == "GROUP_CONCAT":
            return _ConcatAcc
        if f in F.AGGREGATES:
            return _RegisteredAcc
        raise ValueError(f)


def _to_number(v):
    if isinstance(v, str):
        return V.str_to_number(v)
    return v


def _avg_value(total, n, spec: AggSpec):
    if spec.kind == V.FLOAT or spec.kind == V.STR or isinstance(total, (float, Fraction)):
        # MySQL divides the sum (a double) by the count
        try:
            return float(total) / n
        except OverflowError:
            return float(Fraction(total) / n)
    # MySQL's quotient, with the digits it keeps (shown rounded to the argument's scale + 4)
    return V.decimal_quotient(Decimal(total), Decimal(n))


def _sum_value(total, spec: AggSpec):
    if isinstance(total, Fraction):
        return float(total)
    if spec.kind == V.FLOAT or spec.kind == V.STR:  # (strings are summed as doubles)
        return float(total)
    if type(total) is int:
        return Decimal(total)
    return total


class _Acc:
    """An aggregate's accumulator: ``add(row, m)`` takes a record of multiplicity ``m`` (signed),
    ``add_all(records)`` a group's records at once, ``value()`` is the aggregate's value."""

    __slots__ = ()

    def add(self, row, m):
        raise NotImplementedError

    def add_all(self, recs):
        add = self.add
        for row, m in recs:
            add(row, m)

    def value(self):
        raise NotImplementedError


class _CountAcc(_Acc):
    __slots__ = ("n", "col", "star")

    def __init__(self, spec: AggSpec):
        self.n = 0
        self.star = not spec.args
        self.col = spec.args

    def add(self, row, m):
        if self.star:
            self.n += m
            return
        for c in self.col:
            if row[c] is None:
                return
        self.n += m

    def absorb(self, rows, state):
        """A group's state from a grouped query (``sqlrel.grouped``): its row count, and the
        count of non-NULL values when COUNT has an argument."""
        self.n += state[0] if state else rows

    def add_all(self, recs):
        if self.star:
            for rec in recs:
                self.n += rec[1]
        elif len(self.col) == 1:
            c = self.col[0]
            for row, m in recs:
                if row[c] is not None:
                    self.n += m
        else:
            for row, m in recs:
                self.add(row, m)

    def value(self):
        return self.n


class _SumAcc(_Acc):
    __slots__ = ("n", "total", "col", "spec")

    def __init__(self, spec: AggSpec):
        self.n = 0
        self.total = 0
        self.col = spec.args[0]
        self.spec = spec

    def add(self, row, m):
        v = row[self.col]
        if v is None:
            return
        v = _to_number(v)
        if isinstance(v, float):
            v = Fraction(v)
            if not isinstance(self.total, Fraction):
                self.total = Fraction(self.total)
        elif isinstance(self.total, Fraction) and isinstance(v, Decimal):
            v = Fraction(v)
        self.n += m
        self.total += v * m if m != 1 else v

    def absorb(self, rows, state):
        """(count of non-NULL values, their integer sum) from a grouped query."""
        n, total = state
        if n:
            self.n += n
            self.total += total

    def value(self):
        if self.n <= 0:
            return None
        if self.spec.func == "AVG":
            return _avg_value(self.total, self.n, self.spec)
        return _sum_value(self.total, self.spec)


class _DistinctAcc(_Acc):
    __slots__ = ("vals", "cols", "spec")

    def __init__(self, spec: AggSpec):
        self.vals: dict = {}
        self.cols = spec.args
        self.spec = spec

    def add(self, row, m):
        if len(self.cols) == 1:
            v = row[self.cols[0]]
            if v is None:
                return
            if v.__class__ is str and self.spec.func != "COUNT":
                # SUM/AVG(DISTINCT s): distinct as the doubles MySQL reads ('100' is '1e2')
                k = v = float(_to_number(v))
            else:
                k = ck(v)  # strings are distinct under the collation
        else:
            v = tuple(row[c] for c in self.cols)
            if None in v:
                return
            k = ck_tuple(v)
        e = self.vals.get(k)
        if e is None:
            e = self.vals[k] = [v, 0]
        e[1] += m
        if not e[1]:
            del self.vals[k]

    def value(self):
        f = self.spec.func
        if f == "COUNT":
            return len(self.vals)
        if not self.vals:
            return None
        total = 0
        for v, _c in self.vals.values():
            v = _to_number(v)
            total += Fraction(v) if isinstance(v, float) else v
        if f == "AVG":
            return _avg_value(total, len(self.vals), self.spec)
        return _sum_value(total, self.spec)


class _ExtremeAcc(_Acc):
    __slots__ = ("vals", "col", "is_max")

    def __init__(self, spec: AggSpec):
        self.vals = SortedKeyList(key=ck)  # strings order under the collation
        self.col = spec.args[0]
        self.is_max = spec.func == "MAX"

    def add(self, row, m):
        v = row[self.col]
        if v is None:
            return
        if m > 0:
            for _ in range(m):
                self.vals.add(v)
        else:
            for _ in range(-m):
                self.vals.remove(v)

    def add_all(self, recs):
        for _row, m in recs:
            if m != 1:
                return _Acc.add_all(self, recs)
        # insertions only (a fill, a batch of inserts, a range read's rows): one bulk update,
        # which keeps equal values in the order given, as one add after another would
        c = self.col
        self.vals.update([row[c] for row, _m in recs if row[c] is not None])

    def value(self):
        if not self.vals:
            return None
        return self.vals[-1] if self.is_max else self.vals[0]


class _ExtremeOnce(_Acc):
    """MIN/MAX over insertions only: the value ``_ExtremeAcc`` gives for the same records in
    the same order (values compared under the collation; of equal ones, MIN keeps the first and
    MAX the last, as the sorted list places an equal value after those it holds), without
    keeping every value."""

    __slots__ = ("best", "key", "col", "is_max")

    def __init__(self, spec: AggSpec):
        self.best = None
        self.key = None
        self.col = spec.args[0]
        self.is_max = spec.func == "MAX"

    def add(self, row, m):
        if m <= 0:
            raise ValueError("a MIN/MAX of insertions only took a retraction")
        v = row[self.col]
        if v is None:
            return
        k = ck(v)
        if self.key is None or (k >= self.key if self.is_max else k < self.key):
            self.best = v
            self.key = k

    def add_all(self, recs):
        c = self.col
        vals = [row[c] for row, _m in recs if row[c] is not None]
        if not vals:
            return
        for v in vals:
            if v.__class__ is str or v.__class__ is CK:
                return _Acc.add_all(self, recs)  # compared under the collation, one by one
        # values that are their own keys: max() keeps the first of equal maxima, so over the
        # values reversed it keeps the last; min() keeps the first
        best = max(reversed(vals)) if self.is_max else min(vals)
        if self.key is None or (best >= self.key if self.is_max else best < self.key):
            self.best = self.key = best

    def value(self):
        return self.best


class _RegisteredAcc(_Acc):
    """A registered aggregate's accumulator (``sql/functions``) fed with signed multiplicities."""

    __slots__ = ("acc", "cols", "kind")

    def __init__(self, spec: AggSpec):
        self.acc = F.AGGREGATES[spec.func].factory()
        self.cols = spec.args
        kind = spec.output_kind()
        self.kind = kind if kind.__class__ is V.FloatKind else None

    def add(self, row, m):
        args = [row[c] for c in self.cols]
        f = self.acc.step if m > 0 else self.acc.inverse
        for _ in range(m if m > 0 else -m):
            f(*args)

    def value(self):
        v = self.acc.value()
        return v if self.kind is None else self.kind.wrap(v)


class _Desc:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __eq__(self, other):
        return self.v == other.v

    def __hash__(self):
        return hash(self.v)


def _null_first(v):
    return (0, 0) if v is None else (1, ck(v))


class _ConcatAcc(_Acc):
    __slots__ = ("vals", "spec")

    def __init__(self, spec: AggSpec):
        self.vals: dict = {}  # (sort key, value) -> count
        self.spec = spec

    def _entry(self, row):
        parts = [row[c] for c in self.spec.args]
        if any(p is None for p in parts):
            return None
        value = "".join(V.format_value(p) if not isinstance(p, str) else p for p in parts)
        if self.spec.order:
            key = tuple(
                _Desc(_null_first(row[c])) if desc else _null_first(row[c])
                for c, desc in self.spec.order
            )
        else:
            key = tuple(_null_first(p) for p in parts)  # no ORDER BY: ascending by value
        return (key, value)

    def add(self, row, m):
        e = self._entry(row)
        if e is None:
            return
        c = self.vals.get(e, 0) + m
        if c:
            self.vals[e] = c
        else:
            del self.vals[e]

    def value(self):
        if not self.vals:
            return None
        items = sorted(self.vals.items(), key=lambda kv: kv[0][0])
        parts = []
        if self.spec.distinct:
            seen = set()
            for (_k, v), _c in items:
                if ck(v) not in seen:
                    seen.add(ck(v))
                    parts.append(v)
        else:
            for (_k, v), c in items:
                parts.extend([v] * c)
        s = self.spec.separator.join(parts)
        return s[:GROUP_CONCAT_MAX_LEN]


# The fill index (``Aggregate.fidx``): per fill key, its group keys as a tuple while they are
# few (a tuple of keys of plain values is no object the garbage collector visits, where a set
# per filled key is), a set beyond.
_INDEX_TUPLE_MAX = 8


def _index_add(fidx: dict, fk, key) -> None:
    keys = fidx.get(fk)
    if keys is None or not keys:
        fidx[fk] = (key,)
    elif keys.__class__ is tuple:
        if key not in keys:
            fidx[fk] = keys + (key,) if len(keys) < _INDEX_TUPLE_MAX else {*keys, key}
    else:
        keys.add(key)


def _index_discard(fidx: dict, fk, key) -> None:
    keys = fidx.get(fk)
    if not keys:
        return
    if keys.__class__ is tuple:
        if key in keys:
            fidx[fk] = tuple([k for k in keys if k != key])
    else:
        keys.discard(key)


class _Group(list):
    """One group's state: its accumulators, one per aggregate in order, are the list's items
    (no list of its own: a filled key's state is fewer objects for the garbage collector to
    visit), ``rows`` its row count, ``out`` and ``reps`` below."""

    __slots__ = ("rows", "out", "reps")

    def __init__(self, aggs: list[AggSpec], once: bool = False):
        self.rows = 0
        if once:
            self.extend([a.new(True) for a in aggs])
        else:  # (AggSpec.new inlined, in this frame: no call per aggregate on a new group)
            for a in aggs:
                self.append((a._make or a._set_make())(a))
        self.out = None  # the output row last emitted for this group (None: not known)
        # grouped by strings: how many rows carry each spelling of the group's values (one
        # group holds 'Bob' and 'bob' under a case-insensitive collation; it shows one of them)
        self.reps: dict | None = None


def _count_rep(g: _Group, values: tuple, m: int) -> None:
    reps = g.reps
    if reps is None:
        reps = g.reps = {}
    c = reps.get(values, 0) + m
    if c:
        reps[values] = c
    else:
        del reps[values]


def _dependent_groups(parent: Node, ngroup: int) -> set:
    """The group columns (positions) that other group columns determine: the other columns of
    a base table whose whole primary key is among the group columns, each a copy of that
    table's column (``source_column``) read once in the input (no self-join). Every row of a
    group then holds the same value there (all NULL for a row a LEFT JOIN padded)."""
    by_base: dict = {}
    for c in range(ngroup):
        src = parent.source_column(c)
        if src is not None:
            by_base.setdefault(src[0], []).append((c, src[1]))
    out: set = set()
    for base, cols in by_base.items():
        schema = base.storage.schemas.get(base.table.lower()) if base.kind == "base" else None
        pk = list(schema.primary_key) if schema is not None else []
        if not pk or not set(pk) <= {bc for _c, bc in cols} or _reads(parent, base) != 1:
            continue
        out |= {c for c, bc in cols if bc not in pk}
    return out


def _reads(node: Node, base: Node) -> int:
    """How many times ``base`` is read under ``node`` (the paths from it up to ``node``)."""
    if node is base:
        return 1
    return sum(_reads(p, base) for p in node.parents)


def _keyer_without(ngroup: int, kinds, dependent: set):
    """``keyer`` of the group columns with the ``dependent`` ones left out (None there)."""
    kept = [c for c in range(ngroup) if c not in dependent]
    if ngroup == 2 and len(kept) == 1 and kinds[kept[0]] not in _STRINGY:
        if kept[0] == 0:
            return lambda r: (r[0], None)
        return lambda r: (None, r[1])
    stringy = {c for c in kept if kinds[c] in _STRINGY}
    return lambda r: tuple(
        [None if c in dependent else (ck(r[c]) if c in stringy else r[c]) for c in range(ngroup)]
    )


class Aggregate(Node):
    kind = "aggregate"

    def __init__(self, parent: Node, ngroup: int, aggs: list[AggSpec], names, kinds):
        super().__init__([parent], names, kinds)
        self.ngroup = ngroup
        self.aggs = aggs
        self.groups: dict = {}
        pk = parent.kinds
        # group keys hold strings as collation keys (dataflow/partial.py); the output shows
        # each group's values as some row spells them (``_output``)
        self._gk = keyer(range(ngroup), pk)
        self._string_groups = has_strings(range(ngroup), pk)
        # group columns another group column determines (a row's own columns beside its
        # table's primary key): left out of the group key, so a string among them needs no
        # collation key (the output shows them as the group's rows spell them: ``_output``)
        self._dependent = _dependent_groups(parent, ngroup) if self._string_groups else set()
        if self._dependent:
            self._gk = _keyer_without(ngroup, pk, self._dependent)
        self.global_group = ngroup == 0
        if self.global_group:
            self.groups[()] = _Group(aggs)
        self.partial = False
        self.fill_cols: list[int] = []  # group positions that key the partial state
        self.filled: set = set()
        self.fidx: dict = {}  # fill key -> its group keys (_index_add)
        self.graph = None
        self._grouped = None  # (sqlrel.Grouped, SqlRel), or False: none

    @property
    def materialization(self):
        return PARTIAL if self.partial else FULL

    def set_partial(self, cols: list[int]) -> None:
        self.partial = True
        self.fill_cols = list(cols)
        if self._dependent & set(cols):  # a fill key names its group columns in the group key
            self._dependent = set()
            self._gk = keyer(range(self.ngroup), self.parents[0].kinds)
        self.filled = set()
        self.fidx = {}
        self.groups = {}

    def _fkey(self, row) -> tuple:
        fc = self.fill_cols
        if len(fc) == 1:
            return (ck(row[fc[0]]),)
        return tuple([ck(row[c]) for c in fc])

    def ensure(self, fk: tuple) -> None:
        self._ensure(ck_tuple(fk))

    def _ensure(self, fk: tuple) -> None:
        """``ensure`` of a fill key already normalized (``ck_tuple``)."""
        if fk in self.filled:
            return
        groups = self._grouped_fill(fk)
        if groups is not None:
            self._add_groups(fk, groups)
            return
        rows = self.parents[0].query(self.fill_cols, fk)
        self.filled.add(fk)
        self.fidx.setdefault(fk, ())
        self._apply(rows)
        if self.graph is not None:
            self.graph.filled(self, fk, len(self.fidx.get(fk, ())))

    def _add_groups(self, fk: tuple, groups) -> None:
        """Fill key ``fk`` filled with a grouped query's ``groups`` (see ``_grouped_fill``)."""
        self.filled.add(fk)
        fidx = self.fidx
        fidx.setdefault(fk, ())
        if groups:
            self._absorb(groups, fk)
        graph = self.graph
        if graph is not None and (graph.fill_log is not None or graph.evictor is not None):
            graph.filled(self, fk, len(fidx[fk]))

    def _apply(self, batch) -> None:
        """Add ``batch`` to the groups, emitting nothing (a fill, or a state being built)."""
        groups = self.groups
        touched = self._add_to(groups, batch)
        for key in [k for k in touched if groups[k].rows == 0 and not self.global_group]:
            del groups[key]
            if self.partial:
                _index_discard(self.fidx, self._fkey(key), key)
            elif self._lookups is not None:
                self._lookups.discard(key)

    def _add_to(self, groups: dict, batch, once: bool = False) -> set:
        """Add ``batch`` to ``groups``; the group keys it touched. Records are gathered by
        group, in the order they come (MIN and MAX show the first of equal strings they
        meet, whatever spelling of the group it came with), each spelling's key computed once,
        and each accumulator takes its group's records in one call. ``once``: ``groups`` is
        built from this batch of insertions alone (``_Group``)."""
        ng = self.ngroup
        gk = self._gk
        sg = self._string_groups
        index = self.partial and groups is self.groups
        keys: dict = {}  # group values as spelled -> the group's key
        by_key: dict = {}  # the group's key -> its records, in order
        spelled: dict = {}  # string groups: group values as spelled -> their net count
        for rec in batch:
            raw = rec[0][:ng]
            key = keys.get(raw)
            if key is None:
                key = keys[raw] = gk(rec[0])
            recs = by_key.get(key)
            if recs is None:
                by_key[key] = [rec]
            else:
                recs.append(rec)
            if sg:
                spelled[raw] = spelled.get(raw, 0) + rec[1]
        for key, recs in by_key.items():
            g = groups.get(key)
            if g is None:
                g = groups[key] = _Group(self.aggs, once)
                if index:
                    _index_add(self.fidx, self._fkey(recs[0][0]), key)
                elif self._lookups is not None and groups is self.groups:
                    self._lookups.add(key)
            m = 0
            for rec in recs:
                m += rec[1]
            g.rows += m
            g.out = None
            for acc in g:
                acc.add_all(recs)
        for raw, n in spelled.items():
            if n:
                _count_rep(groups[keys[raw]], raw, n)
        return set(by_key)

    def key_gate(self, port: int, carriers: dict):
        """A partial aggregate drops a record of a missing fill key silently (when it needs
        no probe): the gate is whether the fill key is filled."""
        if not self.partial or not self.fill_cols:
            return None
        comps = [carriers.get(c) for c in self.fill_cols]
        if any(j is None for j in comps):
            return None
        filled = self.filled
        if len(comps) == 1:
            j0 = comps[0]

            def holds(key):
                if not self.partial or self.probe_on_drop:
                    return True
                return (key[j0],) in filled

            return holds

        def holds(key):
            if not self.partial or self.probe_on_drop:
                return True
            return tuple([key[j] for j in comps]) in filled

        return holds

    def _grouped_fill(self, fk: tuple):
        """The groups of fill key ``fk`` computed by base storage in one grouped query, when
        the input is a stateless relation over base tables (``sqlrel``), else None."""
        plan = self._grouped
        if plan is False:
            return None
        if plan is None:
            from ..sqlrel import grouped

            rel = self.parents[0].sql_rel()
            g = grouped(rel, self.ngroup, self.aggs, self.fill_cols) if rel is not None else None
            if g is None:
                self._grouped = False
                return None
            plan = self._grouped = (g, rel)
        g, rel = plan
        if rel.stale():
            self._grouped = None  # a table changed shape: plan again
            return self._grouped_fill(fk)
        if rel.pending():
            return None
        return g.run(rel.storage, fk)

    def build_from_storage(self) -> bool:
        """A full aggregate's initial state from one grouped query over base storage, when
        its input is a stateless relation over base tables (``sqlrel``) and its aggregates'
        states come from SQL exactly; False to be built from the input's contents instead."""
        if self.partial:
            return False
        from ..sqlrel import grouped

        rel = self.parents[0].sql_rel()
        if rel is None or rel.pending():
            return False
        g = grouped(rel, self.ngroup, self.aggs, [])
        groups = g.run(rel.storage, ()) if g is not None else None
        if groups is None:
            return False
        self._absorb(groups)
        return True

    def _absorb(self, groups, fk=None) -> None:
        """Add a grouped query's groups (see ``_grouped_fill``) as ``_apply`` adds rows; ``fk``:
        the fill key (normalized) every one of them belongs to, when they fill one."""
        gk = self._gk
        sg = self._string_groups
        mine = self.groups
        aggs = self.aggs
        partial = self.partial
        fidx = self.fidx
        for raw, n, states in groups:
            key = gk(raw)
            g = mine.get(key)
            if g is None:
                g = mine[key] = _Group(aggs)
                if self._lookups is not None:
                    self._lookups.add(key)
                if partial:
                    f = fk if fk is not None else self._fkey(raw)
                    if fidx.get(f):
                        _index_add(fidx, f, key)
                    else:  # (the key's first group: _index_add's first step)
                        fidx[f] = (key,)
                g.rows = n
                if sg and n:
                    g.reps = {raw: n}  # (_count_rep of a new group)
            else:
                g.out = None
                g.rows += n
                if sg and n:
                    _count_rep(g, raw, n)
            for acc, st in zip(g, states):
                acc.absorb(n, st)

    def evict_key(self, fk: tuple) -> None:
        fk = ck_tuple(fk)
        if fk not in self.filled:
            return
        self.filled.discard(fk)
        keys = self.fidx.pop(fk, ())
        derived = []
        for k in keys:
            g = self.groups.pop(k, None)
            if g is not None and g.rows > 0:
                derived.append(self._output(k, g))
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

    def evict_all(self) -> None:
        for fk in list(self.filled):
            self.evict_key(fk)

    def on_probe(self, port: int, rows: list) -> list:
        out = []
        ng = self.ngroup
        pad = (UNKNOWN,) * len(self.aggs)
        for row in rows:
            if self.partial:
                fk = self._fkey(row)
                if UNKNOWN in fk:
                    self.evict_all()
                elif fk in self.filled:
                    self.evict_key(fk)
            out.append(tuple(row[:ng]) + pad)
        return out

    def query(self, cols, key) -> list:
        ng = self.ngroup
        if self.partial and (
            cols == self.fill_cols  # (the upquery of a reader keyed as this state is)
            or (all(c < ng for c in cols) and sorted(cols) == sorted(self.fill_cols))
        ):
            if cols == self.fill_cols:
                fk = ck_tuple(tuple(key))
            else:
                d = dict(zip(cols, ck_tuple(tuple(key))))
                fk = tuple(d[c] for c in self.fill_cols)
            self._ensure(fk)
            return self._filled_rows((fk,))
        if self.partial:
            # another key than the one this state is filled by: compute from the parent
            scratch = Aggregate(self.parents[0], ng, self.aggs, self.columns, self.kinds)
            scratch.groups = {}
            if all(c < ng for c in cols):
                scratch._apply(self.parents[0].query(list(cols), tuple(key)))
            else:
                scratch._apply(self.parents[0].contents())
            return [(r, m) for r, m in scratch.contents() if matches(r, cols, key)]
        return self.own_rows(cols, [tuple(key)])

    def own_rows(self, cols, keys: list) -> list:
        """``Node.own_rows``: by every group column (a view grouped by what its readers look it
        up by), each key's one possible group, found by its group key, not by listing every
        group. Keys equal under ``matches`` have one group key (a string's collation key,
        anything else itself; a dependent column's part is None for both), so these are the
        records listing them would find, filtered as that filters."""
        ng = self.ngroup
        if self.partial or not cols or any(c >= ng for c in cols) or len(set(cols)) != len(cols):
            return Node.own_rows(self, cols, keys)
        index = at = None
        if len(cols) < ng:
            # some of the group columns: the groups they name, by an index of them kept from
            # the first such lookup on
            at = tuple(sorted(cols))
            if any(c in self._dependent for c in at):
                return Node.own_rows(self, cols, keys)  # (no part of the group key)
            self._lookups = LookupIndexes.of(self._lookups, self.groups)
            index = self._lookups.index(at)
        groups = self.groups
        gk = self._gk
        found: dict = {}
        for key in keys:
            row = [None] * ng
            for c, v in zip(cols, key):
                row[c] = v
            asked = gk(row)
            part = (asked,) if index is None else index.get(tuple([asked[c] for c in at]), ())
            for gkey in part:
                if gkey in found:
                    continue  # (another key of the same group matched already)
                g = groups.get(gkey)
                if g is not None and g.rows > 0:
                    r = self._output(gkey, g)
                    if matches(r, cols, key):
                        found[gkey] = r
        return [(r, 1) for r in found.values()]

    _lookups: LookupIndexes | None = None  # the groups by some group columns (own_rows)

    def answerer(self, cols):
        """By the fill columns (a reader keyed as this state is), the key's groups, filled
        first if needed; otherwise ``query``."""
        cols = list(cols)
        if not self.partial or cols != self.fill_cols:
            return Node.answerer(self, cols)
        query = self.query
        filled = self.filled
        ensure = self._ensure
        filled_rows = self._filled_rows

        def answer(key):
            if not self.partial or self.fill_cols != cols or self.filled is not filled:
                return query(cols, key)  # made full (or partial anew) since
            fk = key if len(key) == 1 and key[0].__class__ is int else ck_tuple(key)
            if fk not in filled:
                rows = self._grouped_answer(fk)
                if rows is not None:
                    return rows
                ensure(fk)
            return filled_rows((fk,))

        return answer

    def _grouped_answer(self, fk: tuple) -> list | None:
        """A missing fill key ``fk`` (normalized) filled by its grouped query, planned already
        and current, and read (``_add_groups``, then ``_filled_rows``, in one call): the key's
        output records; None when the plan is not there or not current, or the query cannot
        fill the key (then ``_ensure`` fills it as it can). The common miss of a reader over
        this aggregate."""
        plan = self._grouped
        if plan is None or plan is False:
            return None
        g, rel = plan
        if not rel.current():
            return None
        groups = g.run(rel.storage, fk)
        if groups is None:
            return None
        self._add_groups(fk, groups)
        out = []
        mine = self.groups
        for key in self.fidx[fk]:  # (``_filled_rows`` of this one key)
            grp = mine.get(key)
            if grp is not None and grp.rows > 0:
                out.append((self._output(key, grp), 1))
        return out

    def make_full(self) -> None:
        self.partial = False
        self.fill_cols = []
        self.filled = set()
        self.fidx = {}
        self.groups = {}
        self._apply(self.parents[0].contents())

    def _output(self, key, g: _Group):
        reps = g.reps
        if reps:  # the group's values as shown: the smallest spelling a current row has
            if len(reps) == 1:
                (key,) = reps
            else:
                key = min(reps)
        if len(g) == 1:  # (no list built for the one aggregate of most queries)
            return key + (g[0].value(),)
        return key + tuple([a.value() for a in g])

    def on_input(self, port: int, batch: list) -> list:
        groups = self.groups
        ng = self.ngroup
        touched: dict = {}
        if self.partial:
            keep = []
            dropped = []
            filled = self.filled
            pad = (UNKNOWN,) * len(self.aggs)
            for rec in batch:
                if self._fkey(rec[0]) in filled:
                    keep.append(rec)
                else:
                    dropped.append(tuple(rec[0][:ng]) + pad)
            if dropped and self.probe_on_drop and self.graph is not None:
                self.graph.probe(self, dropped)
            batch = keep
        gk = self._gk
        sg = self._string_groups
        for row, m in batch:
            key = gk(row)
            g = groups.get(key)
            if g is None:
                g = groups[key] = _Group(self.aggs)
                touched.setdefault(key, None)
                if self.partial:
                    _index_add(self.fidx, self._fkey(row), key)
                elif self._lookups is not None:
                    self._lookups.add(key)
            elif key not in touched:
                if g.rows > 0 or self.global_group:
                    touched[key] = g.out if g.out is not None else self._output(key, g)
                else:
                    touched[key] = None
            g.rows += m
            if sg:
                _count_rep(g, row[:ng], m)
            for acc in g:
                acc.add(row, m)
        out = []
        for key, old in touched.items():
            g = groups[key]
            if g.rows > 0 or self.global_group:
                new = g.out = self._output(key, g)
            else:
                new = None
                if g.rows == 0:
                    del groups[key]
                    if self.partial:
                        _index_discard(self.fidx, self._fkey(key), key)
                    elif self._lookups is not None:
                        self._lookups.discard(key)
            if old == new:
                continue
            if old is not None:
                out.append((old, -1))
            if new is not None:
                out.append((new, 1))
        return out

    def absorb(self, port: int, batch: list) -> None:
        if self.partial:
            self.on_input(port, batch)
        else:
            self._apply(batch)  # the same groups, without their output rows

    def contents(self) -> list:
        return [
            (self._output(k, g), 1)
            for k, g in self.groups.items()
            if g.rows > 0 or self.global_group
        ]

    def evaluate(self, batch: list) -> list:
        """The output rows of ``batch`` (positive records) aggregated from nothing, this node's
        state untouched: what a range read computes over the rows of its range
        (``dataflow/post_lookup.py``). The same groups and accumulators as a maintained
        aggregate, so the same values; with no GROUP BY the one row comes even for no rows."""
        groups: dict = {(): _Group(self.aggs, True)} if self.global_group else {}
        self._add_to(groups, batch, True)
        out = self._output
        return [out(k, g) for k, g in groups.items() if g.rows > 0 or self.global_group]

    def empty_row(self, key: tuple = ()) -> tuple:
        """The output row of a group that received no input (for implicit global aggregates)."""
        return self._output(key, _Group(self.aggs))

    def describe(self) -> str:
        g = ",".join(f"#{i}" for i in range(self.ngroup)) or "()"
        return f"aggregate by {g}: " + ", ".join(a.describe() for a in self.aggs)

    def key_columns(self) -> list[int]:
        return list(range(self.ngroup))

    def column_source(self, col: int):
        ngroup = self.ngroup
        if col < ngroup:
            return (0, col)
        if col - ngroup < len(self.aggs):
            return self.aggs[col - ngroup].describe()
        return None

    def state_size(self):
        return (len(self.groups), len(self.groups))

    def on_removed(self):
        stop_reading(self)
        self.groups = {}
        self.fidx = {}
        self.filled = set()

    def on_added(self, graph) -> None:
        """Over a stateless relation of base tables (lookup joins, filters, projections), a
        partial aggregate under message scheduling fills a key by one grouped query (see
        ``request_fill``): it keeps the position of the writes that have reached it."""
        if getattr(graph, "lookup_joins", False) and self.parents[0].base_tables() is not None:
            start_reading(self, graph)

    def fill_now(self, fks: list) -> bool:
        """Fill keys ``fks`` at once by one grouped query over base storage when base storage
        holds exactly the writes that have reached this aggregate (none is still on its way
        here: ``reading_at`` its ``view``); False when it cannot."""
        if self.view is None:
            return False
        with reading_at(self.view):
            got = [self._grouped_fill(fk) for fk in fks]
        if not all(g is not None for g in got):
            return False
        for fk in fks:
            self.filled.add(fk)
            if fk not in self.fidx:
                self.fidx[fk] = ()
        for fk, groups in zip(fks, got):
            if groups:
                self._absorb(groups, fk)
        return True

    def fill_size(self, fk) -> int:
        return len(self.fidx.get(fk, ()))

    def request_fill(self, df, up, fks: list) -> None:
        """Fill keys ``fks``: at once (``fill_now``) when it can, else by an upquery to the
        parent."""
        if self.fill_now(fks):
            for fk in fks:
                df.done(self, fk)
                df.graph.filled(self, fk, self.fill_size(fk))
            return
        Node.request_fill(self, df, up, fks)

    def filled_keys(self) -> list:
        return list(self.filled)

    def sample_state(self, n: int = 20) -> list:
        return [(k + tuple(a.value() for a in g), 1) for k, g in list(self.groups.items())[:n]]

    def compare_filled(self, twin):
        fill = self.fill_cols
        want_by: dict = {}
        for row, _m in twin.contents():
            want_by.setdefault(key_of(row, fill), Counter())[row] += 1
        for fk in self.filled:
            got = Counter()
            for gk in self.fidx.get(fk, ()):
                g = self.groups.get(gk)
                if g is not None and g.rows > 0:
                    got[self._output(gk, g)] += 1
            yield "", fk, got, want_by.get(fk, Counter())

    # --- Spark bulk replay (spark/replay.py) ------------------------------------------------
    replay_role = "reduce"

    def replay_op(self):
        return ("state",)

    # --- upqueries as messages (domain.py): a partial aggregate answers by its fill key from
    # its own state, filling it first; asked by other group columns, it computes the answer
    # from its parent's rows (nothing is filled here; drops here probe the key below)
    placement = "own"  # only its small output crosses a domain boundary

    def on_request(self, df, up, hops, cols, keys, rng=None) -> None:
        fill = self.fill_cols
        if (
            len(cols) != len(fill)
            or (cols[0] != fill[0] if len(cols) == 1 else sorted(cols) != sorted(fill))
        ) and not all(c < self.ngroup for c in cols):
            raise RuntimeError(f"untraceable upquery through {self}")
        self.request_by_fill_key(df, up, hops, cols, keys, rng)

    def _filled_rows(self, fks) -> list:
        """The output records of fill keys ``fks`` (normalized, filled)."""
        out = []
        groups = self.groups
        for fk in fks:
            for gk in self.fidx.get(fk, ()):
                g = groups.get(gk)
                if g is not None and g.rows > 0:
                    out.append((self._output(gk, g), 1))
        return out

    def on_response(self, df, port, up, hops, rows, span=None) -> None:
        # asked by other columns than the fill key: aggregate the parent's answer on its own
        scratch = Aggregate(self.parents[0], self.ngroup, self.aggs, self.columns, self.kinds)
        scratch.groups = {}
        scratch._apply(rows)
        hop = hops[-1]
        df.respond(self, up, hops[:-1], select(scratch.contents(), hop[2], hop[3]))

    def on_fill(self, df, port, up, rows, span=None) -> None:
        self.fill_by_fill_key(df, up, rows, self._apply)

    # --- planning (plan_upqueries.py): partial, filled per key of some group columns ----------
    def traceable(self, cols) -> bool:
        return all(c < self.ngroup for c in cols) and self.parents[0].traceable(cols)

    def plan_need(self, planner, cols) -> None:
        parent = self.parents[0]
        if (
            cols is not None
            and planner.enabled
            and all(c < self.ngroup for c in cols)
            and parent.traceable(cols)
        ):
            self.set_partial(cols)
            planner.need(parent, cols)
        else:
            planner.need(parent, None)

    def plan_pass(self, planner, cols) -> None:
        if not self.partial:
            return  # a full state answers every lookup from itself (``query``): no index above
        ok = all(c < self.ngroup for c in cols)
        planner.need(self.parents[0], cols if ok else None)

    def fill_carriers(self):
        return [{c} for c in self.fill_cols]

    def fill_key(self, port):
        return self.fill_cols

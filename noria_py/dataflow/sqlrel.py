"""One storage query for a fill over stateless operators.

A fill that crosses only column picks and lookup joins down to base tables needs no Python in
between: the operators describe themselves as one SQL relation (``Node.sql_rel``), a FROM clause
and an SQL expression per output column, and the fill becomes one SQLite query, joined by
SQLite over the same indexes the lookups would use. An aggregate filled over such a relation
asks SQLite for its groups' counts and sums at once (``grouped``).

The answer must equal the operators' own: only joins whose key columns compare alike in SQLite
and in the dataflow (integers, text under the engine's collation, dates) are described, every
value read is converted as base storage converts it, and a table with deltas still on their way
(``BaseTable.pending``) is never read this way.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

from ..sql import values as V
from ..sql.collation import CK, ck
from .ops.base import _at
from .partial import matches

# join key kinds whose SQLite equality (text under the column's collation) is the dataflow's
JOIN_KINDS = (V.INT, V.STR, V.DATE, V.DATETIME)


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqlRel:
    """A stateless node's output as SQL: ``from_sql`` (a FROM clause), ``cols`` (an SQL
    expression per output column), ``convs`` (the storage column type to convert each value
    with, or None), ``kinds`` and ``bases`` (the base table nodes read), ``conds`` (the
    conditions of the filters on the way, SQL that holds exactly where their predicates do)."""

    __slots__ = (
        "from_sql",
        "cols",
        "convs",
        "kinds",
        "bases",
        "single",
        "src",
        "ids",
        "version",
        "conds",
    )

    def __init__(self, from_sql, cols, convs, kinds, bases, single, src, conds=()):
        self.src = src  # per output column: (base table node, its column)
        self.conds = conds
        self.from_sql = from_sql
        self.cols = cols
        self.convs = convs
        self.kinds = kinds
        self.bases = bases
        self.single = single  # one table (no join): may stand anywhere in a FROM clause
        self.ids = self._schema_ids()  # the schemas it was described from (see ``stale``)
        self.version = getattr(self.bases[0].storage.schemas, "version", None)

    @property
    def storage(self):
        return self.bases[0].storage

    def _schema_ids(self) -> tuple:
        schemas = self.bases[0].storage.schemas
        return tuple(id(schemas.get(b.table.lower())) for b in self.bases)

    def stale(self) -> bool:
        """Has a table it reads changed shape since it was described (describe it again)?"""
        schemas = self.bases[0].storage.schemas
        version = getattr(schemas, "version", None)
        if version is not None and version == self.version:
            return False  # no table changed at all (the common case: one int compared)
        if self._schema_ids() != self.ids:
            return True
        self.version = version  # another table changed: this one still holds
        return False

    def current(self) -> bool:
        """Neither ``stale`` nor ``pending``: a query over it now answers as the dataflow
        has received base storage (one call for the common miss)."""
        schemas = self.bases[0].storage.schemas
        version = getattr(schemas, "version", None)
        if (version is None or version != self.version) and self.stale():
            return False
        return not self.pending()

    def pending(self) -> bool:
        """Has base storage writes the reader on this thread has not received (see
        ``BaseTable.unreceived``)?"""
        if _at.view is None:  # (no position to read at: the pending deltas, as unreceived reads)
            for b in self.bases:
                if b.pending:
                    return True
            return False
        for b in self.bases:
            if b.unreceived():
                return True
        return False


def pushed(node):
    """``(SqlRel, SQL cache)`` of a stateless ``node`` that describes itself as one SQL relation
    (``node.sql_rel()``), kept in ``node._rel`` while the graph and the tables' shapes stay the
    same; None when it does not, or a table it reads has deltas on their way (then its parents
    answer, leaving those out)."""
    graph = getattr(node, "graph", None)
    version = graph.version if graph is not None else -1
    cached = node._rel
    if cached is None or cached[0] != version or (cached[1] and cached[1].stale()):
        cached = node._rel = (version, node.sql_rel(), {})
    rel = cached[1]
    if rel is None or rel.pending():
        return None
    return rel, cached[2]


def base_rel(node, storage) -> SqlRel | None:
    schema = storage.schemas.get(node.table.lower())
    if schema is None:
        return None
    alias = f"t{node.id}"
    convs = storage._converters.get(node.table.lower()) or [None] * len(schema.columns)
    cols = [f"{alias}.{q(c.name)}" for c in schema.columns]
    kinds = [c.ctype.kind for c in schema.columns]
    src = [(node, i) for i in range(len(cols))]
    return SqlRel(f"{q(schema.name)} AS {alias}", cols, list(convs), kinds, [node], True, src)


def pick_rel(rel: SqlRel, picks: list[int]) -> SqlRel:
    return SqlRel(
        rel.from_sql,
        [rel.cols[c] for c in picks],
        [rel.convs[c] for c in picks],
        [rel.kinds[c] for c in picks],
        rel.bases,
        rel.single,
        [rel.src[c] for c in picks],
        rel.conds,
    )


def filter_rel(rel: SqlRel, conds: list[str]) -> SqlRel:
    """``rel`` with the rows where every one of ``conds`` holds."""
    return SqlRel(
        rel.from_sql,
        rel.cols,
        rel.convs,
        rel.kinds,
        rel.bases,
        rel.single,
        rel.src,
        (*rel.conds, *conds),
    )


def join_rel(left: SqlRel, right: SqlRel, lkey, rkey, outer: bool) -> SqlRel | None:
    for lk, rk in zip(lkey, rkey):
        if left.kinds[lk] not in JOIN_KINDS or left.kinds[lk] != right.kinds[rk]:
            return None
    on = [f"{left.cols[lk]} = {right.cols[rk]}" for lk, rk in zip(lkey, rkey)]
    conds = left.conds
    if outer:
        # the right side's rows that pass its filters are the ones matched: a row of the left
        # side with no such match is kept, padded (the conditions cannot go to WHERE)
        on += right.conds
    else:
        conds = (*conds, *right.conds)
    rfrom = right.from_sql if right.single else f"({right.from_sql})"
    how = "LEFT JOIN" if outer else "JOIN"
    return SqlRel(
        f"{left.from_sql} {how} {rfrom} ON {' AND '.join(on)}",
        left.cols + right.cols,
        left.convs + right.convs,
        left.kinds + right.kinds,
        left.bases + right.bases,
        False,
        left.src + right.src,
        conds,
    )


def _param(v):
    """A key value as a statement parameter, as base storage's lookups pass it."""
    if type(v) is CK:
        return v.orig
    return V.to_storage(v)


def _params(key) -> list:
    """``[_param(v) for v in key]``, an integer that fits SQLite's taken as it is."""
    out = []
    for v in key:
        if v.__class__ is int and -9223372036854775808 <= v <= 9223372036854775807:
            out.append(v)
        else:
            out.append(_param(v))
    return out


def _converter(convs):
    """``row tuple -> row tuple`` converting stored values as base storage does (None: none)."""
    todo = [(i, c) for i, c in enumerate(convs) if c is not None]
    if not todo:
        return None
    from_storage = V.from_storage

    def convert(r):
        r = list(r)
        for i, c in todo:
            v = r[i]
            if v is not None:
                r[i] = from_storage(v, c)
        return tuple(r)

    return convert


def where(rel: SqlRel, cols) -> str:
    terms = [*rel.conds, *(f"{rel.cols[c]} IS ?" for c in cols)]
    if not terms:
        return ""
    return " WHERE " + " AND ".join(terms)


# a pending batch longer than this is counted per key once (an executemany's delta asks about
# each of its keys: scanning it for each would be quadratic)
PENDING_INDEX_AT = 16


def _pending_count(cache: dict, batch: list, at: list, key) -> int:
    """The net count of ``batch``'s records whose columns ``at`` match ``key`` (as
    ``partial.matches`` compares: equal, or equal collation keys), from an index of the batch
    built on its first question and kept in ``cache`` while it is asked about."""
    store = cache.get(("pending", tuple(at)))
    if store is None:
        store = cache[("pending", tuple(at))] = {}
    got = store.get(id(batch))
    if got is None or got[0] is not batch:
        if len(store) >= 8:
            store.clear()  # batches no longer pending
        counts: dict = {}
        for row, m in batch:
            k = tuple([ck(row[c]) for c in at])
            counts[k] = counts.get(k, 0) + m
        got = store[id(batch)] = (batch, counts)
    return got[1].get(tuple([ck(v) for v in key]), 0)


def nonempty(storage, rel: SqlRel, cols, key, delta: int, cache: dict) -> tuple[bool, bool]:
    """Does a one-table ``rel`` have records whose ``cols`` equal ``key`` as the dataflow has
    received them (base storage's rows minus the pending deltas: ``BaseTable.pending``), and
    will it have after ``delta`` more? Base storage counts only as far as the answer needs."""
    pend = 0
    base = rel.bases[0]
    unreceived = base.unreceived()
    if unreceived:
        at = [rel.src[c][1] for c in cols]
        for batch in unreceived:
            if len(batch) > PENDING_INDEX_AT:
                pend += _pending_count(cache, batch, at, key)
                continue
            for row, m in batch:
                if matches(row, at, key):
                    pend += m
    # received = stored - pend; both answers are known once stored exceeds `need`
    need = max(pend, pend - delta)
    if need < 0:
        return True, True
    ckey = ("count", tuple(cols))
    entry = cache.get(ckey)
    if entry is None:
        entry = cache[ckey] = (
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {rel.from_sql}{where(rel, cols)} LIMIT ?)"
        )
    params = [_param(v) for v in key]
    params.append(need + 1)
    stored = storage.reading.execute(entry, params).fetchone()[0]
    before = stored - pend
    return before > 0, before + delta > 0


def select(storage, rel: SqlRel, cols, key, cache: dict) -> list:
    """The records of ``rel`` whose ``cols`` equal ``key`` (NULL matches NULL, as base
    storage's lookups do), by one query."""
    entry = cache.get(tuple(cols))
    if entry is None:
        sql = f"SELECT {', '.join(rel.cols)} FROM {rel.from_sql}{where(rel, cols)}"
        entry = cache[tuple(cols)] = (sql, _converter(rel.convs))
    sql, conv = entry
    rows = storage.reading.execute(sql, _params(key)).fetchall()
    if conv is not None:
        return [(conv(r), 1) for r in rows]
    return [(r, 1) for r in rows]


# group column kinds whose SQLite grouping equals the dataflow's (text grouped by its bytes,
# each spelling a row of its own: the aggregate merges spellings under its collation itself)
GROUP_KINDS = (V.INT, V.STR, V.DATE, V.DATETIME)


# the digits of a DECIMAL whose value, read as a double and scaled to an integer, rounds to its
# exact number of units (10^15 < 2^53, with an error well under one half)
EXACT_DECIMAL_DIGITS = 15


def _exact_scale(rel: SqlRel, col: int) -> int | None:
    """The scale of a DECIMAL column (a base table's, read as stored) whose sum SQLite can
    compute exactly in units of its scale, else None."""
    if rel.kinds[col] != V.DECIMAL:
        return None
    ctype = rel.convs[col]
    if ctype is None or getattr(ctype, "kind", None) != V.DECIMAL:
        return None
    p, s = ctype.precision, ctype.scale
    if p is None or s is None or p > EXACT_DECIMAL_DIGITS:
        return None
    return s


class Grouped:
    """An aggregate fill as one grouped query: per group spelling, its group values, its row
    count and each aggregate's state (``parts``: how many result columns each one takes)."""

    __slots__ = ("sql", "convert", "ngroup", "parts", "ungrouped")

    def __init__(self, sql, convert, ngroup, parts, ungrouped=False):
        self.sql = sql
        self.convert = convert
        self.ngroup = ngroup
        self.parts = parts
        # one group at most per key, asked for without GROUP BY: the one row of an empty
        # answer (COUNT(*) = 0) is no group
        self.ungrouped = ungrouped

    def run(self, storage, key) -> list | None:
        """``[(group values, rows, [state per aggregate])]``, or None when SQLite cannot give
        the exact states (an integer overflow, a sum that is not an integer)."""
        if len(key) == 1 and key[0].__class__ is int and -(1 << 63) <= key[0] < (1 << 63):
            params = key  # (the common fill key: one integer, as it is)
        else:
            params = _params(key)
        try:
            rows = storage.reading.execute(self.sql, params).fetchall()
        except (sqlite3.OperationalError, OverflowError):
            return None
        ng = self.ngroup
        conv = self.convert
        out = []
        for r in rows:
            if self.ungrouped and not r[ng]:
                continue
            raw = r[:ng]
            if conv is not None:
                raw = conv(raw)
            states = []
            i = ng + 1
            for n, scale in self.parts:
                st = r[i : i + n]
                for v in st:
                    if v is not None and type(v) is not int:
                        return None
                if scale is not None and st[1] is not None:
                    st = (st[0], Decimal(st[1]).scaleb(-scale))  # the sum in units of 10^-scale
                states.append(st)
                i += n
            out.append((raw, r[ng], states))
        return out


def grouped(rel: SqlRel, ngroup: int, aggs, fill_cols) -> Grouped | None:
    """The grouped query of an aggregate (``ngroup`` group columns, ``aggs`` its AggSpecs) over
    ``rel``, filled by ``fill_cols``, or None when some aggregate's state cannot come from SQL
    exactly (only COUNT, and SUM and AVG of integers and of DECIMALs of up to
    ``EXACT_DECIMAL_DIGITS`` digits, can)."""
    for k in rel.kinds[:ngroup]:
        if k not in GROUP_KINDS:
            return None
    select = list(rel.cols[:ngroup]) + ["COUNT(*)"]
    parts = []
    for a in aggs:
        if a.distinct or len(a.args) > 1:
            return None
        if a.func == "COUNT":
            if a.args:
                select.append(f"COUNT({rel.cols[a.args[0]]})")
                parts.append((1, None))
            else:
                parts.append((0, None))
        elif a.func in ("SUM", "AVG") and a.kind == V.INT and rel.kinds[a.args[0]] == V.INT:
            c = rel.cols[a.args[0]]
            select += [f"COUNT({c})", f"SUM({c})"]
            parts.append((2, None))
        elif a.func in ("SUM", "AVG") and (scale := _exact_scale(rel, a.args[0])) is not None:
            # a DECIMAL(p, s) of at most 15 digits, as a double times 10^s, is within 0.5 of
            # its integer count of units: SQLite sums those integers exactly (an overflow
            # fails the query, and the aggregate is then filled row by row)
            c = rel.cols[a.args[0]]
            select += [f"COUNT({c})", f"SUM(CAST(ROUND({c} * 1e{scale}) AS INTEGER))"]
            parts.append((2, scale))
        else:
            return None
    group_by = [
        f"CAST({c} AS BLOB)" if k == V.STR else c
        for c, k in zip(rel.cols[:ngroup], rel.kinds[:ngroup])
    ]
    frm = rel.from_sql
    if rel.single and not fill_cols:
        # every row, grouped: one scan and a sort, not an index walk that reads the table's
        # rows in the index's order (six times slower at a million rows beyond the cache)
        frm += " NOT INDEXED"
    sql = f"SELECT {', '.join(select)} FROM {frm}{where(rel, fill_cols)}"
    ungrouped = bool(group_by) and _one_group(rel, ngroup, fill_cols)
    if group_by and not ungrouped:
        sql += f" GROUP BY {', '.join(group_by)}"
    return Grouped(sql, _converter(rel.convs[:ngroup]), ngroup, parts, ungrouped)


def _one_group(rel: SqlRel, ngroup: int, fill_cols) -> bool:
    """Does a fill key have one group at most, so SQLite need not group (nor sort)? Yes when
    every group column comes from one table read once whose primary key or a unique key of NOT
    NULL columns the fill columns fix: at most one of its rows matches, and every result row
    carries that row's values (or, padded by a left join, NULLs in all of them)."""
    if not fill_cols:
        return False
    base = rel.src[0][0]
    if any(rel.src[c][0] is not base for c in range(ngroup)):
        return False
    if sum(1 for b in rel.bases if b is base) != 1:
        return False
    schema = rel.storage.schemas.get(base.table.lower())
    if schema is None:
        return False
    fixed = {rel.src[c][1] for c in fill_cols if rel.src[c][0] is base}
    for key in [schema.primary_key, *schema.uniques]:
        if key and fixed.issuperset(key) and not any(schema.columns[i].nullable for i in key):
            return True
    return False

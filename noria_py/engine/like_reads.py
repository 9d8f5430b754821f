"""Reads of a query with ``col LIKE ?`` on its range column, served by a range reader.

A bound pattern that starts with literal characters (``'abc%'``, ``'ab\\_c%'``) matches only
strings whose collation keys start alike: ``sql.collation.prefix_key_range`` gives the range of
keys, a ``KeyCut`` at each end (exact in key space, under case- and accent-insensitive and PAD
SPACE collations too). The read takes the rows of that range from the reader (intersected with
the query's other range parameters on the column; the reader fills what it misses by ranged
upqueries, as for any range), then keeps the rows the pattern matches (the evaluator's
``like_matcher``: MySQL's character-by-character LIKE, trailing spaces counting), and only then
applies the aggregate, DISTINCT, ORDER BY and LIMIT. A pattern without a literal prefix reads
the key's whole range. The reader holds exactly the rows of the ranges it filled, so writes keep
them current as for any range read; the pattern is applied per read.

A pattern bound as something other than a string (a number, bytes) is answered by the
statement with the value written in (``BindsOtherwise``), where MySQL's conversions apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..dataflow.intervals import BOTTOM, TOP
from ..sql import collation as C
from ..sql.expr import like_matcher
from .prepared import BindsOtherwise

if TYPE_CHECKING:
    from .selects import SelectPrepared

# (collation, pattern, escape) -> (lo cut, hi cut, value -> matches)
_PATTERNS: dict = {}


def pattern_plan(pattern: str, escape: str) -> tuple:
    """``(lo, hi, match)``: the ``[lo, hi)`` cuts (``dataflow/intervals.py``) of the keys a
    string matching ``pattern`` can have under the engine's collation, and ``match(value)``,
    the pattern itself (for the common ``'abc%'``, a comparison of the first characters)."""
    coll = C.current()
    k = (coll.name, pattern, escape)
    got = _PATTERNS.get(k)
    if got is None:
        prefix, rest = C.like_split(pattern, escape)
        lo, hi = C.prefix_key_range(prefix)
        if rest == "" or (rest.strip("%") == "" and escape != "%"):
            match = C.like_prefix_matcher(prefix, exact=rest == "")
        else:
            match = like_matcher(pattern, escape)
        got = (BOTTOM if lo is None else (1, lo, 0), TOP if hi is None else (1, hi, 0), match)
        if len(_PATTERNS) >= 10000:
            _PATTERNS.clear()
        _PATTERNS[k] = got
    return got


def like_rows(prep: SelectPrepared, params) -> tuple:
    """The answer of a read of ``prep`` (a query with ``LIKE ?`` on its range column)."""
    from .selects import _NoMatch

    likes = prep._like
    iv = prep._interval(params)
    offset, limit = prep._page(params)
    post = prep._post
    if iv is None or limit == 0:
        return prep._range_finish([], offset, limit, False) if post else ()
    lo, hi = iv
    matchers = []
    for idx, escape in likes:
        pattern = params[idx]
        if pattern is None:
            return prep._range_finish([], offset, limit, False) if post else ()
        if pattern.__class__ is not str:
            raise BindsOtherwise()  # MySQL reads it as text of its own kind
        plo, phi, match = pattern_plan(pattern, escape)
        if plo > lo:
            lo = plo
        if phi < hi:
            hi = phi
        matchers.append(match)
    if not lo < hi:
        return prep._range_finish([], offset, limit, False) if post else ()
    rc = prep._rc
    if len(matchers) == 1:
        m = matchers[0]

        def keep(row):
            return m(row[rc])
    else:

        def keep(row):
            v = row[rc]
            return all(m(v) for m in matchers)

    if prep.cq.multi_key:
        keys = [k for k in prep._keys(params) if _NoMatch not in k]
        return prep._range_locked(keys, lo, hi, None, offset, limit, keep)
    key = prep._key(params)
    if _NoMatch in key:
        return prep._range_finish([], offset, limit, False) if post else ()
    snap = prep._published.get(key)
    if snap is not None:
        where = None
        if post is not None:
            # the answer computed from this very snapshot for this range and these patterns
            where = (key, lo, hi, tuple(params[i] for i, _e in likes))
            memo = post.memo.get(where)
            if memo is not None and memo[0] is snap:
                prep.entry.hits += 1
                if prep._evictor is not None:
                    prep._touch_range(key, lo, hi)
                return prep._page_visible(memo[1], offset, limit)
        rows = snap.window(lo, hi)
        if rows is not None:
            prep.entry.hits += 1
            if prep._evictor is not None:
                prep._touch_range(key, lo, hi)
            rows = [r for r in rows if keep(r)]
            if post is None:
                return prep._range_finish(rows, offset, limit, False)
            answer = prep._post_answer(rows)
            post.remember(where, snap, answer)
            return prep._page_visible(answer, offset, limit)
    return prep._range_locked([key], lo, hi, None, offset, limit, keep)

"""Turning literal point lookups into parameterized ones (auto-parameterization).

Most MySQL drivers (pymysql, and SQLAlchemy on top of it) bind parameters on the client: every
lookup arrives as a different SQL text, ``... WHERE id = 42``, and embedded programs write
literals into their texts too. Handing those texts to the engine as they are would parse each
one and install a view per literal. Instead the engine (``Engine.execute`` of a text without
parameters, and the server's lookup fast path) rewrites the simplest, unambiguous shape into its
parameterized form and passes the literals as bound parameters, so all lookups of one shape share
one statement and one reader:

    SELECT a, b FROM t WHERE id = 42 AND name = 'x' ORDER BY a LIMIT 5
    -> ("SELECT a, b FROM t WHERE id = ? AND name = ? ORDER BY a LIMIT 5", [42, "x"])

Only ``column = literal`` terms of a top-level WHERE that is a plain conjunction are rewritten,
and only integer and single-quoted string literals. Anything else (comments, existing
placeholders, subqueries, UNION, OR, NOT, parentheses or functions in the WHERE clause, double
quotes, decimals, introducers, COLLATE) leaves the statement untouched. If the engine rejects
the rewritten form, it remembers that and answers the original text instead; it also answers
the original text when a literal bound as a parameter would not compare as the literal does
(``Engine.lifts_as_written``: a number against a string column, for one).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<str>'(?:[^'\\]|\\.|'')*')
  | (?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
  | (?P<ident>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*|`(?:[^`]|``)+`(?:\.`(?:[^`]|``)+`)*)
  | (?P<op><=>|<=|>=|<>|!=|[=<>(),.*+\-/%;])
  | (?P<other>.)
    """,
    re.X | re.S,
)
_STOP = frozenset(
    ("group", "having", "order", "limit", "for", "lock", "into", "window", "procedure")
)
_REJECT = frozenset(
    (
        "or",
        "not",
        "like",
        "between",
        "exists",
        "select",
        "union",
        "xor",
        "case",
        "regexp",
        "rlike",
        "match",
        "sounds",
        "escape",
        "binary",
        "collate",
        "interval",
        "div",
        "mod",
    )
)
_ESC = {
    "0": "\0",
    "'": "'",
    '"': '"',
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "\\": "\\",
    "%": "\\%",
    "_": "\\_",
}
_ESC_RE = re.compile(r"\\(.)|''", re.S)


def _unescape(body: str) -> str:
    return _ESC_RE.sub(
        lambda m: "'" if m.group(1) is None else _ESC.get(m.group(1), m.group(1)), body
    )


def lift_literals(sql: str) -> tuple[str, list[Any]] | None:
    """Return (parameterized SQL, params) for a liftable SELECT, or None to leave it as it is."""
    head = sql[:6]
    if head.lower() != "select":
        return None
    if "where" not in sql.lower():
        return None
    # Tokenize once, keeping offsets of significant tokens.
    toks = _tokens(sql)
    if toks is None:
        return None  # placeholders, variables, comments, double quotes, ...
    # Locate the top-level WHERE; reject nested SELECTs anywhere.
    depth = 0
    where = -1
    for i, (kind, text, _s, _e) in enumerate(toks):
        if kind == "op":
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
        elif kind == "ident":
            low = text.lower()
            if low in ("select", "union") and i > 0:
                return None
            if low == "where" and depth == 0 and where < 0:
                where = i
    if where < 0:
        return None
    end = len(toks)
    for i in range(where + 1, len(toks)):
        kind, text = toks[i][0], toks[i][1]
        if kind == "ident" and text.lower() in _STOP:
            end = i
            break
    # Validate the WHERE region: a conjunction of simple comparisons without parentheses.
    lifts: list[tuple[int, int, Any]] = []  # (start, end, value)
    i = where + 1
    while i < end:
        kind, text, start, stop = toks[i]
        low = text.lower() if kind == "ident" else ""
        if low == "is":
            # col IS [NOT] NULL: nothing to lift, but allowed
            k = i + 1
            if k < end and toks[k][0] == "ident" and toks[k][1].lower() == "not":
                k += 1
            if k < end and toks[k][0] == "ident" and toks[k][1].lower() == "null":
                i = k + 1
                continue
            return None
        if low == "in":
            # col IN (literal, literal, ...): every literal becomes a parameter
            before = toks[i - 2] if i - 2 >= where else None
            if (
                toks[i - 1][0] != "ident"
                or before is None
                or before[0] != "ident"
                or before[1].lower() not in ("where", "and")
                or i + 1 >= end
                or toks[i + 1][1] != "("
            ):
                return None
            k = i + 2
            items = []
            while k < end:
                t = toks[k]
                neg = t[0] == "op" and t[1] == "-" and k + 1 < end and toks[k + 1][0] == "num"
                lit = toks[k + 1] if neg else t
                if lit[0] == "num" and lit[1].isdigit():
                    items.append((t[2], lit[3], -int(lit[1]) if neg else int(lit[1])))
                elif lit[0] == "str":
                    items.append((t[2], lit[3], _unescape(lit[1][1:-1])))
                else:
                    return None
                k = k + 2 if neg else k + 1
                if k < end and toks[k][1] == ",":
                    k += 1
                    continue
                if k < end and toks[k][1] == ")":
                    break
                return None
            if k >= end or not items:
                return None
            lifts.extend(items)
            i = k + 1
            continue
        if kind == "op" and text in ("(", ")", ";"):
            return None
        if kind == "ident" and low in _REJECT:
            return None
        if kind in ("num", "str") or (
            kind == "op" and text == "-" and i + 1 < end and toks[i + 1][0] == "num"
        ):
            neg = kind == "op"
            lit = toks[i + 1] if neg else toks[i]
            j = i + 1 if neg else i
            prev_op = toks[i - 1] if i - 1 > where else None
            prev_col = toks[i - 2] if i - 2 > where else None
            nxt = toks[j + 1] if j + 1 < end else None
            ok = (
                prev_op is not None
                and prev_op[0] == "op"
                and prev_op[1] == "="
                and prev_col is not None
                and prev_col[0] == "ident"
                and prev_col[1].lower() not in ("and", "where")
                and (nxt is None or (nxt[0] == "ident" and nxt[1].lower() == "and"))
            )
            if ok:
                # Also require the token before the column to be WHERE or AND.
                before = toks[i - 3] if i - 3 >= where else None
                ok = (
                    before is not None
                    and before[0] == "ident"
                    and before[1].lower()
                    in (
                        "where",
                        "and",
                    )
                )
            if ok:
                if lit[0] == "num":
                    if not lit[1].isdigit():
                        ok = False
                    else:
                        value: Any = int(lit[1])
                        if neg:
                            value = -value
                else:
                    value = _unescape(lit[1][1:-1])
            if ok:
                lifts.append((start, lit[3], value))
            i = j + 1
            continue
        i += 1
    if not lifts:
        return None
    return _substitute(sql, lifts)


def _substitute(sql: str, lifts: list[tuple[int, int, Any]]) -> tuple[str, list[Any]]:
    """``sql`` with each lifted ``(start, end, value)`` span (in text order) replaced by ``?``,
    and the values in that order."""
    parts = []
    pos = 0
    params = []
    for start, stop, value in lifts:
        parts.append(sql[pos:start])
        parts.append("?")
        params.append(value)
        pos = stop
    parts.append(sql[pos:])
    return "".join(parts), params


# ---------------------------------------------------------------------------------------------
# Per-shape cache
#
# Splitting a text at its integer and single-quoted string literals gives its *shape* (the text
# between the literals). Two texts of one shape differ only inside literals, which the analysis
# above treats as opaque tokens, so it reaches the same decision for both: which literal slots to
# lift. The cache maps a shape to those slots, so a repeated lookup shape costs one regex split.

_SLOTS = re.compile(r"('(?:[^'\\]|\\.|'')*'|\b\d+\b)")
LITERAL_SLOTS = _SLOTS


def literal_value(lit: str) -> Any:
    """The value of one literal slot of a split text: a quoted string or a run of digits."""
    return _unescape(lit[1:-1]) if lit[0] == "'" else int(lit)


_shape_cache: dict[tuple[str, ...], tuple[int, ...] | None] = {}
_SHAPE_CACHE_LIMIT = 10000


def lift_literals_cached(sql: str) -> tuple[str, list[Any]] | None:
    """``lift_literals`` with the per-shape cache (texts with backticks or double quotes, whose
    quoting the split does not follow, always take the full analysis)."""
    return _lift_by_shape(sql, lift_literals, _shape_cache)


def _lift_by_shape(
    sql: str, analyze, cache: dict, split=_SLOTS, value_of=literal_value
) -> tuple[str, list[Any]] | None:
    """``analyze(sql)``, remembered per shape in ``cache``: which literal slots it lifts (the
    text split at ``split``'s slots, each slot's value ``value_of`` its text)."""
    if "`" in sql or '"' in sql:
        return analyze(sql)
    parts = split.split(sql)
    shape = tuple(parts[0::2])
    slots = cache.get(shape, _MISSING)
    if slots is _MISSING:
        result = analyze(sql)
        slots = slots_of(parts, sql, result, value_of)
        if len(cache) >= _SHAPE_CACHE_LIMIT:
            cache.clear()
        cache[shape] = slots
        return result if slots is not None else None
    if slots is None:
        return None
    params: list[Any] = []
    out = list(parts)
    for i in slots:
        lit = parts[2 * i + 1]
        params.append(value_of(lit))
        out[2 * i + 1] = "?"
    return "".join(out), params


_MISSING: Any = object()


def _same(a: Any, b: Any) -> bool:
    """The same value of the same type (``1 == Decimal(1) == 1.0`` are three literals)."""
    return type(a) is type(b) and a == b


def slots_of(
    parts: list[str], sql: str, result: tuple[str, list[Any]] | None, value_of=None
) -> tuple[int, ...] | None:
    """Which literal slots of ``parts`` (the text split at ``LITERAL_SLOTS``) the analysis
    ``result`` lifted, or None when the split cannot reproduce it."""
    if result is None:
        return None
    # Walk the lifted text along the split, slot by slot, in one pass: a slot the analysis
    # lifted shows as ``?`` there (no literal starts with one) holding the next parameter,
    # any other keeps its literal; the text between slots must be the same.
    lifted, params = result
    chosen = []
    pos = 0
    k = 0
    for i, part in enumerate(parts):
        if i % 2 == 0:
            if not lifted.startswith(part, pos):
                return None
            pos += len(part)
            continue
        if lifted.startswith("?", pos):
            value = literal_value(part) if value_of is None else value_of(part)
            if k >= len(params) or not _same(value, params[k]):
                return None
            chosen.append(i // 2)
            k += 1
            pos += 1
        elif lifted.startswith(part, pos):
            pos += len(part)
        else:
            return None
    if pos != len(lifted) or k != len(params):
        return None  # the analysis lifted something the split cannot reproduce: do not lift
    return tuple(chosen)


# ---------------------------------------------------------------------------------------------
# Writes
#
# Client-side binding sends every INSERT, UPDATE and DELETE as a new text too, and a new text is
# a full parse (about 20 times the cost of running the write). The same rewrite applies, only
# where the literal is a value: a VALUES item that is one literal, ``SET col = literal``, and a
# ``col = literal`` term of the WHERE conjunction of an UPDATE or DELETE. A literal bound as a
# parameter evaluates exactly as the literal does (both are constants to the engine's compiled
# expressions), and replacing a standalone literal by ``?`` never changes how the text parses.
# Statements with subqueries, INSERT ... SELECT/SET, ON DUPLICATE KEY UPDATE, multi-table
# updates, comments or anything the tokenizer does not know are left as they are.

_WRITE_REJECT = frozenset(("select", "join", "duplicate", "union"))


def _tokens(sql: str) -> list[tuple[str, str, int, int]] | None:
    """(kind, text, start, end) of the significant tokens of ``sql``; None when it holds
    anything the analysis does not know (placeholders, variables, comments, double quotes)."""
    toks: list[tuple[str, str, int, int]] = []
    prev_end, prev_text = -1, ""
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind == "other":
            return None
        text = m.group()
        start = m.start()
        if kind == "op" and start == prev_end and (prev_text + text) in ("--", "/*"):
            return None
        toks.append((kind, text, start, m.end()))
        prev_end, prev_text = m.end(), text
    return toks


def _value(tok: tuple[str, str, int, int]) -> tuple[bool, Any]:
    """(liftable?, value) of one token: an unsigned integer or a single-quoted string."""
    kind, text = tok[0], tok[1]
    if kind == "num" and text.isdigit():
        return True, int(text)
    if kind == "str":
        return True, _unescape(text[1:-1])
    return False, None


def _lift_terms(toks, start: int, end: int, sep: str, lifts: list) -> bool:
    """Lift ``ident = literal`` items of ``toks[start:end]`` separated (at depth 0) by ``sep``
    (``,`` or ``and``); other items stay. False when the region is not well nested."""
    depth = 0
    item: list = []
    for i in range(start, end + 1):
        tok = toks[i] if i < end else None
        if tok is not None:
            text = tok[1]
            if tok[0] == "op" and text == "(":
                depth += 1
            elif tok[0] == "op" and text == ")":
                depth -= 1
                if depth < 0:
                    return False
            at_sep = depth == 0 and (
                (sep == "," and tok[0] == "op" and text == ",")
                or (sep == "and" and tok[0] == "ident" and text.lower() == "and")
            )
            if not at_sep:
                item.append(tok)
                continue
        if len(item) == 3 and item[0][0] == "ident" and item[1][1] == "=":
            ok, value = _value(item[2])
            if ok:
                lifts.append((item[2][2], item[2][3], value))
        item = []
    return depth == 0


def lift_write(sql: str) -> tuple[str, list[Any]] | None:
    """(parameterized SQL, params) for a liftable INSERT (or REPLACE) ... VALUES, UPDATE or
    DELETE, or None to leave it as it is."""
    head = sql[:6].lower()
    if head == "replac" and sql[6:7].lower() == "e":
        head = "insert"  # REPLACE: INSERT's VALUES
    elif head not in ("insert", "update", "delete"):
        return None
    toks = _tokens(sql)
    if not toks:
        return None
    low = [t[1].lower() if t[0] == "ident" else "" for t in toks]
    if any(w in _WRITE_REJECT for w in low):
        return None
    lifts: list[tuple[int, int, Any]] = []
    if head == "insert":
        try:
            at = next(i for i, w in enumerate(low) if w in ("values", "value"))
        except StopIteration:
            return None  # INSERT ... SET, INSERT ... SELECT
        depth = 0
        item: list = []
        for tok in toks[at + 1 :]:
            kind, text = tok[0], tok[1]
            if kind == "op" and text == "(":
                depth += 1
                if depth == 1:
                    item = []
                    continue
            elif kind == "op" and text in (",", ")") and depth == 1:
                ok, value = _write_item(item)
                if ok:
                    lifts.append((item[0][2], item[-1][3], value))
                item = []
                if text == ")":
                    depth = 0
                continue
            elif kind == "op" and text == ")":
                depth -= 1
            if depth == 0:
                if not (kind == "op" and text == ","):
                    return None  # anything after the rows (or between them)
                continue
            item.append(tok)
        if depth != 0:
            return None
    else:
        where = next((i for i, w in enumerate(low) if w == "where"), len(toks))
        stop = next(
            (i for i in range(where + 1, len(toks)) if low[i] in ("order", "limit")), len(toks)
        )
        if head == "update":
            try:
                at = low.index("set")
            except ValueError:
                return None
            if at > where or not _lift_terms(toks, at + 1, where, ",", lifts):
                return None
        if where < len(toks) and not _lift_terms(toks, where + 1, stop, "and", lifts):
            return None
    if not lifts:
        return None
    lifts.sort()
    return _substitute(sql, lifts)


_INT64 = 1 << 63


def _number(text: str, negative: bool) -> Any:
    """A number literal's value as MySQL types it: an integer (one beyond BIGINT is a DECIMAL
    literal), a DECIMAL (with a point) or a DOUBLE (with an exponent)."""
    if text.isdigit():
        v: Any = int(text)
        v = -v if negative else v
        return v if -_INT64 <= v < _INT64 else Decimal(v)
    if "e" in text or "E" in text:
        return -float(text) if negative else float(text)
    return -Decimal(text) if negative else Decimal(text)


def _write_item(item: list) -> tuple[bool, Any]:
    """(liftable?, value) of a VALUES item: one literal (a string, a number, NULL) or a minus
    sign and a number. A parameter with the value is stored exactly as the literal is: both
    are constants of the same type to the row's conversion."""
    if len(item) == 1:
        kind, text = item[0][0], item[0][1]
        if kind == "str":
            return True, _unescape(text[1:-1])
        if kind == "num":
            return True, _number(text, False)
        if kind == "ident" and text.lower() == "null":
            return True, None
        return False, None
    if (
        len(item) == 2
        and item[0][0] == "op"
        and item[0][1] == "-"
        and item[1][0] == "num"
        and item[0][3] == item[1][2]  # (written together: the text's split keeps it one slot)
    ):
        return True, _number(item[1][1], True)
    return False, None


# a write's literal slots: strings, numbers with their sign, point and exponent, and NULL
_WRITE_SLOTS = re.compile(
    r"('(?:[^'\\]|\\.|'')*'|-?\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b|\b[Nn][Uu][Ll][Ll]\b)"
)


def write_literal_value(lit: str) -> Any:
    """The value of one literal slot of a write's split text (``_WRITE_SLOTS``)."""
    if lit[0] == "'":
        return _unescape(lit[1:-1])
    if lit[0] in "nN":
        return None
    neg = lit[0] == "-"
    return _number(lit[1:] if neg else lit, neg)


_write_shapes: dict[tuple[str, ...], tuple[int, ...] | None] = {}


def lift_write_cached(sql: str) -> tuple[str, list[Any]] | None:
    """``lift_write`` with a per-shape cache, as ``lift_literals_cached`` for lookups."""
    return _lift_by_shape(sql, lift_write, _write_shapes, _WRITE_SLOTS, write_literal_value)


# --- and back: values written into a statement -------------------------------------------------


def sql_literal(v: Any) -> str:
    """A value as the SQL literal of its type: an int an integer, a Decimal an exact number, a
    float a DOUBLE (``1.5e0``), bytes a hex string, a time its text, others quoted text."""
    import datetime as _dt
    from decimal import Decimal

    if v is None:
        return "NULL"
    if v.__class__ is bool:
        return "1" if v else "0"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        r = repr(v)
        return r if "e" in r or "n" in r else r + "e0"
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "X'" + bytes(v).hex() + "'"
    if isinstance(v, _dt.timedelta):
        from .functions.coerce import fmt_time

        v = fmt_time(v)
    text = str(v).replace("\\", "\\\\").replace("'", "''")
    return f"'{text}'"


def quoted_end(sql: str, i: int) -> int:
    """Where the quoted string, identifier or backquoted name starting at ``sql[i]`` ends (the
    index after its closing quote): a doubled quote stays inside, and so does a
    backslash-escaped character but in a backquoted name."""
    c = sql[i]
    n = len(sql)
    j = i + 1
    while j < n:
        if sql[j] == "\\" and c != "`":
            j += 2
            continue
        if sql[j] == c:
            if j + 1 < n and sql[j + 1] == c:
                j += 2
                continue
            break
        j += 1
    return j + 1


def comment_end(sql: str, i: int) -> int:
    """Where the comment starting at ``sql[i]`` ends (``-- `` and ``#`` at the line's end,
    ``/* */`` after its close), or -1 when none starts there. MySQL's ``--`` is a comment
    only before whitespace (``--1`` negates twice)."""
    c = sql[i]
    if c == "#" or (
        c == "-" and sql.startswith("--", i) and (i + 2 >= len(sql) or sql[i + 2].isspace())
    ):
        j = sql.find("\n", i)
        return len(sql) if j < 0 else j
    if c == "/" and sql.startswith("/*", i):
        j = sql.find("*/", i + 2)
        return len(sql) if j < 0 else j + 2
    return -1


def substitute_placeholders(sql: str, replace) -> str:
    """``sql`` with each ``?`` outside quotes and comments replaced by ``replace(i)``, ``i``
    its position in ``sql``. A ``--`` that starts no comment (``--1``) becomes ``- -``, which
    MySQL reads the same (it negates twice)."""
    out = []
    i = 0
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            j = quoted_end(sql, i)
            out.append(sql[i:j])
            i = j
            continue
        if c in "-#/":
            j = comment_end(sql, i)
            if j >= 0:
                out.append(sql[i:j])
                i = j
                continue
            if sql.startswith("--", i):
                out.append("- -")
                i += 2
                continue
        if c == "?":
            out.append(replace(i))
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def write_in(sql: str, params, literal=sql_literal) -> str:
    """``sql`` with each ``?`` placeholder outside quotes and comments replaced by
    ``literal(value)`` of its parameter (ProgrammingError when there are fewer)."""
    values = iter(params)

    def replace(_i: int) -> str:
        for v in values:
            return literal(v)
        from ..errors import ER_WRONG_ARGUMENTS, ProgrammingError

        raise ProgrammingError("Incorrect number of bindings supplied", ER_WRONG_ARGUMENTS, "HY000")

    return substitute_placeholders(sql, replace)

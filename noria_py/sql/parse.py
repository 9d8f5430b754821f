"""SQL text -> one sqlglot statement (MySQL dialect), with ``?`` parameters numbered in text order.

``?`` placeholders are renamed ``:p0, :p1, ...`` before parsing (outside strings, quoted
identifiers and comments), so every ``exp.Placeholder`` knows its position in the parameter tuple
regardless of where the parser puts it in the tree.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..errors import parse_error
from .dialect import DIALECT
from .literals import substitute_placeholders
from .values import hex_bytes


def _first_select(stmt: exp.Expression) -> exp.Expression:
    """The statement's own SELECT (a UNION's first)."""
    while isinstance(stmt, exp.SetOperation):
        stmt = stmt.this
    return stmt.this if isinstance(stmt, exp.Subquery) else stmt


def number_placeholders(sql: str) -> tuple[str, int]:
    """``sql`` with its ``?`` placeholders named ``:p0``, ``:p1`` ... and their count."""
    count = 0

    def name(i: int) -> str:
        nonlocal count
        if i + 1 < len(sql) and (sql[i + 1].isalnum() or sql[i + 1] == "_"):
            raise parse_error(f"near '{sql[i : i + 20]}'")  # `?1` is no placeholder
        count += 1
        return f":p{count - 1}"

    return substitute_placeholders(sql, name), count


# what may come before a statement's first word: white space and comments (not MySQL's
# executable comments, /*! ... */, which are part of the statement)
LEADING = r"(?:\s+|/\*(?!M?!).*?\*/|(?:--(?=\s|\Z)|#)[^\n]*(?:\n|\Z))*"
_LEAD = re.compile(LEADING, re.S)
_BLANK = re.compile(rf"{LEADING}[\s;]*", re.S)


def blank(sql: str) -> bool:
    """Is ``sql`` only white space, comments and ``;`` (no statement at all)?"""
    return _BLANK.fullmatch(sql) is not None


_LOAD_DATA = re.compile(rf"\A{LEADING}load\s+data\b", re.I | re.S)
# UPDATE's modifiers, which sqlglot does not read: blanked out (offsets kept), IGNORE marked
_UPDATE_MODIFIERS = re.compile(
    rf"\A({LEADING}update\s+)((?:(?:low_priority|ignore)\s+)+)", re.I | re.S
)
# a view's DEFINER (every privilege check is the connection's): blanked out (offsets kept);
# sqlglot reads neither an empty user nor CURRENT_USER there
_USER_PART = r"(?:`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|[\w$.%-]+)"
_DEFINER = re.compile(
    rf"\A({LEADING}create\s+(?:or\s+replace\s+)?(?:algorithm\s*=\s*\w+\s+)?)"
    rf"(definer\s*=\s*(?:current_user(?:\s*\(\s*\))?|{_USER_PART}(?:\s*@\s*{_USER_PART})?))\s",
    re.I | re.S,
)
# stored programs: valid MySQL the engine does not run (1235 naming them, not a syntax error)
_STORED_PROGRAM = re.compile(
    rf"\A{LEADING}(create|drop)\s+(?:or\s+replace\s+)?(?:definer\s*=\s*\S+\s+)?"
    r"(?:(?:aggregate\s+)?(function)|(procedure)|(trigger)|(event))\b",
    re.I | re.S,
)
_REPLACE_HEAD = re.compile(
    rf"{LEADING}replace\s+(?:(?:low_priority|delayed)\s+)?(?:into\s+)?", re.I | re.S
)


def parse(sql: str) -> tuple[exp.Expression, int]:
    """Parse exactly one statement; raise ProgrammingError (1064) on bad syntax."""
    text, nparams = number_placeholders(sql)
    if _LOAD_DATA.match(sql):  # read by noria_py.load_data, not by the SQL parser
        body = sql[_LEAD.match(sql).end() :]  # (from its first word)
        return exp.Command(this="LOAD", expression=exp.Literal.string(body.strip())), 0
    ignore = False
    m = _UPDATE_MODIFIERS.match(text)
    if m is not None:
        ignore = "ignore" in m.group(2).lower()
        text = text[: m.start(2)] + " " * len(m.group(2)) + text[m.end(2) :]
    m = _STORED_PROGRAM.match(text)
    if m is not None:
        from ..errors import NotSupportedError

        what = next(g for g in m.groups()[1:] if g)
        raise NotSupportedError(
            f"This version of noria_py doesn't yet support '{m.group(1).upper()} {what.upper()}'",
            1235,
            "42000",
        )
    m = _DEFINER.match(text)
    if m is not None:
        who = m.group(2).split("=", 1)[1].strip()
        if who in ("``", "''", '""'):  # no host: a role, and an empty one
            from ..errors import ProgrammingError

            raise ProgrammingError("Invalid role specification ``", 1959, "OP000")
        text = text[: m.start(2)] + " " * len(m.group(2)) + text[m.end(2) :]
    try:
        stmts = [s for s in sqlglot.parse(text, read=DIALECT) if s is not None]
    except ParseError as e:
        raise _syntax_error(sql, text, e) from None
    except TokenError:
        at = _unterminated(text)
        if at is not None:  # MySQL points at the string or comment that has no end
            from ..errors import syntax_error_near

            raise syntax_error_near(
                re.sub(r":p\d+\b", "?", text[at:]), text.count("\n", 0, at) + 1
            ) from None
        raise _syntax_error(sql, text, None) from None
    except Exception:  # noqa: BLE001 - sqlglot raises assorted errors on odd input
        raise _syntax_error(sql, text, None) from None
    if not stmts:
        raise parse_error("empty statement")
    if len(stmts) > 1:
        raise parse_error("only one statement per execute() call")
    stmt = stmts[0]
    if isinstance(stmt, exp.Command) and str(stmt.this).upper() == "REPLACE":
        stmt = _replace_statement(sql, text)
    if isinstance(stmt, exp.Command) and not _known_command(stmt):
        raise parse_error(f"near '{sql.strip()[:40]}'")
    toks = _check_tokens(text)
    _check_tree(stmt, sql)
    _introducers(stmt)
    _quantified_subqueries(stmt)
    _flatten_nested_joins(stmt)
    _name_items(stmt, text, toks)
    _unit_keywords(stmt)
    _interval_calls(stmt)
    _interval_first_operand(stmt)
    stmt = _rollup(stmt)
    if ignore and isinstance(stmt, exp.Update):
        stmt.meta["ignore"] = True  # UPDATE IGNORE
    return stmt, nparams


_UTF8 = {"_utf8", "_utf8mb3", "_utf8mb4"}


def _introducers(stmt: exp.Expression) -> None:
    """A string's character set introducer (``_binary'...'``, what mysqlclient sends for every
    bytes parameter; ``_utf8mb4'...'``) and ``N'...'`` as the literal they stand for: a binary
    string (``X'...'``) for ``_binary``; the text itself for UTF-8 (a hexadecimal literal's
    bytes read as UTF-8, 1300 when they are not); for another set, the text when it is ASCII,
    which every set spells alike. What MySQL would read differently is refused (1235): another
    set's non-ASCII text (its bytes read in that set) and a character beyond the three bytes
    of utf8mb3 (``_utf8``, ``N``), which MySQL shows as ``?`` and cannot store."""
    for node in list(stmt.find_all(exp.Introducer, exp.National)):
        if isinstance(node, exp.National):
            charset, value = "_utf8mb3", exp.Literal.string(node.name)
        else:
            charset, value = str(node.this).lower(), node.expression
        if isinstance(value, exp.HexString):
            raw = hex_bytes(value.this)
        elif isinstance(value, exp.Literal) and value.is_string:
            raw = None
        else:
            continue  # (not a string: the statement is MySQL's syntax error)
        if charset == "_binary":
            if raw is None:
                raw = value.this.encode("utf-8", "surrogatepass")
            node.replace(exp.HexString(this=raw.hex().upper()))
            continue
        mb3 = charset in ("_utf8", "_utf8mb3")
        if raw is not None:
            try:
                text = raw.decode("utf-8") if charset in _UTF8 else raw.decode("ascii")
            except UnicodeDecodeError:
                text = None
            if charset in _UTF8 and (text is None or (mb3 and not _bmp(text))):
                from ..errors import DataError

                raise DataError(
                    f"Invalid {'utf8mb3' if mb3 else 'utf8mb4'} character string: "
                    f"'{raw.hex().upper()}'",
                    1300,
                    "HY000",
                )
        else:
            text = value.this
            if not (text.isascii() or (charset in _UTF8 and not (mb3 and not _bmp(text)))):
                text = None
        if text is None:
            from ..errors import NotSupportedError

            what = "N'...'" if isinstance(node, exp.National) else f"{charset}'...'"
            raise NotSupportedError(
                f"This version of noria_py doesn't yet support '{what} holding characters "
                f"{charset[1:]} spells otherwise'",
                1235,
                "42000",
            )
        node.replace(exp.Literal.string(text))


def _bmp(text: str) -> bool:
    """Does every character of ``text`` fit utf8mb3 (three bytes at most)?"""
    return all(ord(c) <= 0xFFFF for c in text)


def _flatten_nested_joins(stmt: exp.Expression) -> None:
    """``FROM ((a JOIN b ON ..) LEFT JOIN c ON ..)``, as MySQL writes every view's joins, is
    ``FROM a JOIN b ON .. LEFT JOIN c ON ..``: joins associate to the left, so parentheses
    around the FROM clause's leading join change nothing. (A parenthesized join on the right
    of another join is left as written.)"""
    for select in list(stmt.find_all(exp.Select)):
        frm = select.args.get("from_")
        if frm is None:
            continue
        item = frm.this
        front: list[exp.Expression] = []
        while isinstance(item, exp.Subquery) and not item.alias:
            inner = item.this
            if not isinstance(inner, (exp.Table, exp.Subquery)):
                break
            front = list(item.args.get("joins") or []) + front
            item = inner
        if item is frm.this:
            continue
        front = list(item.args.get("joins") or []) + front
        item.set("joins", None)
        item.pop()
        frm.set("this", item)
        select.set("joins", front + list(select.args.get("joins") or []))


_UNIT_FIRST = {"TIMESTAMPDIFF", "TIMESTAMPADD", "GET_FORMAT"}


def _unit_keywords(stmt: exp.Expression) -> None:
    """``TIMESTAMPDIFF(HOUR, a, b)``: the parser reads ``HOUR`` as a column; it is a keyword."""
    for node in stmt.find_all(exp.Anonymous):
        if str(node.this).upper() in _UNIT_FIRST and node.expressions:
            first = node.expressions[0]
            if isinstance(first, exp.Column) and not first.table:
                first.replace(exp.Var(this=first.name.upper()))


def _rollup(stmt: exp.Expression) -> exp.Expression:
    """``SELECT ... GROUP BY k1, ..., kn WITH ROLLUP`` as the query MySQL's answer is: the
    grouped rows, then after each group of ``k1..ki`` its super-aggregate row (``k(i+1)..kn``
    NULL, in the select list and in HAVING too), the grand total last; sorted by the keys,
    NULLs first, as MariaDB returns them. Written as a UNION ALL of the n + 1 groupings,
    each with hidden sort columns, read by an outer SELECT that orders them and applies the
    LIMIT. (The grand total of no rows is no row, as in MySQL.)"""
    from ..errors import NotSupportedError

    group = stmt.args.get("group") if isinstance(stmt, exp.Select) else None
    if group is None or not group.args.get("rollup"):
        return stmt

    def refuse(what: str):
        return NotSupportedError(f"This version doesn't yet support 'WITH ROLLUP {what}'")

    if stmt.args.get("order"):
        raise refuse("and ORDER BY")
    if stmt.args.get("distinct") or stmt.args.get("into"):
        raise refuse("with DISTINCT or INTO")
    items = list(stmt.expressions)
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star) for e in items):
        raise refuse("and *")
    names = [item_name(e) for e in items]
    if len({n.lower() for n in names}) != len(names):
        raise refuse("with two result columns of one name")
    keys = []
    for k in group.expressions:
        if isinstance(k, exp.Literal) and not k.is_string:  # GROUP BY 1: the first item
            i = int(k.this) - 1
            if not 0 <= i < len(items):
                raise refuse("with a GROUP BY position out of range")
            k = items[i].this if isinstance(items[i], exp.Alias) else items[i]
        elif isinstance(k, exp.Column) and not k.table:
            alias = next(
                (
                    e
                    for e in items
                    if isinstance(e, exp.Alias) and e.alias.lower() == k.name.lower()
                ),
                None,
            )
            if alias is not None:
                k = alias.this  # GROUP BY an item's alias
        keys.append(k)
    if not keys:
        raise refuse("without GROUP BY columns")

    def blank(tree: exp.Expression, rolled: list) -> exp.Expression:
        """``tree`` with each rolled-up key outside an aggregate as NULL."""

        def swap(n):
            if _aggregate(n):
                return n
            if any(_names_key(n, k) for k in rolled):
                return _typed_null(n)
            return n

        return _transform_outside_aggregates(tree, swap)

    branches = []
    n = len(keys)
    for level in range(n, -1, -1):
        rolled = keys[level:]
        b = stmt.copy()
        for arg in ("order", "limit", "offset", "with_"):
            b.set(arg, None)
        b.set("group", exp.Group(expressions=[k.copy() for k in keys[:level]]) if level else None)
        cols = []
        for i, e in enumerate(items):
            inner = e.this if isinstance(e, exp.Alias) else e
            cols.append(exp.alias_(blank(inner.copy(), rolled), f"_rc{i}", quoted=True))
        for i, k in enumerate(keys):
            up = i >= level
            cols.append(exp.alias_(exp.Literal.number(1 if up else 0), f"_rf{i}", quoted=True))
            cols.append(exp.alias_(_typed_null(k) if up else k.copy(), f"_rk{i}", quoted=True))
        b.set("expressions", cols)
        having = stmt.args.get("having")
        cond = blank(_unaliased(having.this, items), rolled) if having is not None else None
        if level == 0:  # no rows: no grand total
            nonempty = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
            cond = nonempty if cond is None else exp.and_(cond, nonempty)
        b.set("having", exp.Having(this=cond) if cond is not None else None)
        branches.append(b)
    union = branches[0]
    for b in branches[1:]:
        union = exp.union(union, b, distinct=False)
    outer = exp.select(
        *[
            exp.alias_(exp.column(f"_rc{i}", quoted=True), nm, quoted=True)
            for i, nm in enumerate(names)
        ]
    ).from_(exp.Subquery(this=union, alias=exp.TableAlias(this=exp.to_identifier("_rollup"))))
    order = []
    for i in range(n):
        # ascending, NULLs first (MySQL's order)
        order.append(exp.Ordered(this=exp.column(f"_rf{i}", quoted=True), nulls_first=True))
        order.append(exp.Ordered(this=exp.column(f"_rk{i}", quoted=True), nulls_first=True))
    outer.set("order", exp.Order(expressions=order))
    for arg in ("limit", "offset", "with_"):
        if stmt.args.get(arg) is not None:
            outer.set(arg, stmt.args[arg].copy())
    return outer


def _names_key(n: exp.Expression, key: exp.Expression) -> bool:
    """Does ``n`` stand for the ROLLUP key ``key``? A column names a column key of its name
    when either leaves the table out or both name the same one; anything else by its text."""
    if isinstance(n, exp.Column) and isinstance(key, exp.Column):
        if n.name.lower() != key.name.lower():
            return False
        return not n.table or not key.table or n.table.lower() == key.table.lower()
    return type(n) is type(key) and n.sql(DIALECT).lower() == key.sql(DIALECT).lower()


def _aggregate(n: exp.Expression) -> bool:
    if isinstance(n, exp.AggFunc):
        return True
    if isinstance(n, exp.Anonymous):
        from .functions import AGGREGATES, load_all

        load_all()
        return str(n.this).upper() in AGGREGATES
    return False


def _typed_null(key: exp.Expression) -> exp.Expression:
    """NULL of ``key``'s type (a rolled-up key keeps its column's type, as in MySQL; a bare
    NULL would make ``b + 1`` a DOUBLE): ``IF(FALSE, key, NULL)``."""
    return exp.If(this=exp.false(), true=key.copy(), false=exp.Null())


def _unaliased(tree: exp.Expression, items: list) -> exp.Expression:
    """A copy of HAVING's condition with each select-list alias it names replaced by the
    item's expression (the branches of a ROLLUP name their items otherwise)."""
    aliases = {e.alias.lower(): e.this for e in items if isinstance(e, exp.Alias)}
    tree = tree.copy()
    if not aliases:
        return tree

    def swap(n):
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in aliases:
            return aliases[n.name.lower()].copy()
        return n

    return tree.transform(swap)


def _transform_outside_aggregates(tree: exp.Expression, fn) -> exp.Expression:
    """``fn`` applied top-down to every node of ``tree`` not inside an aggregate (a node
    ``fn`` replaces is not visited further)."""
    new = fn(tree)
    if new is not tree:
        return new
    if _aggregate(tree):
        return tree
    for key, value in list(tree.args.items()):
        if isinstance(value, exp.Expression):
            tree.set(key, _transform_outside_aggregates(value, fn))
        elif isinstance(value, list):
            tree.set(
                key,
                [
                    _transform_outside_aggregates(v, fn) if isinstance(v, exp.Expression) else v
                    for v in value
                ],
            )
    return tree


def _interval_calls(stmt: exp.Expression) -> None:
    """``INTERVAL(N, N1, N2)``, the function: the parser reads it as an interval of a tuple
    with no unit (``INTERVAL(N, N1) + 1`` as the interval of ``(N, N1) + 1``)."""
    for node in list(stmt.find_all(exp.Interval)):
        if node.args.get("unit") is not None:
            continue
        first = node.this
        while isinstance(first, exp.Binary):
            first = first.this  # the leftmost operand: where the call stands
        if not isinstance(first, exp.Tuple):
            continue
        call = exp.Anonymous(this="INTERVAL", expressions=list(first.expressions))
        if first is node.this:
            node.replace(call)
        else:
            first.replace(call)
            node.replace(node.this)


# what the operand after ``INTERVAL 1 DAY +`` takes in with it, in MySQL's grammar
_INTERVAL_OPERAND_TAKES = (
    exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.Is, exp.Like,
    exp.In, exp.Between,
)  # fmt: skip


def _interval_first_operand(stmt: exp.Expression) -> None:
    """``INTERVAL 1 DAY + x`` (the interval first) followed by a comparison (``INTERVAL 1 DAY +
    d = '2024-01-02'``, ``... IS NULL``, ``LIKE``, ``IN``, ``BETWEEN``): in MySQL's grammar the
    operand after the ``+`` is the whole comparison, so the interval is added to its result
    (usually NULL), not compared."""
    for node in list(stmt.find_all(exp.Add)):
        left = node.this
        if not isinstance(left, exp.Interval) or left.args.get("unit") is None:
            continue
        outer = node.parent
        while isinstance(outer, _INTERVAL_OPERAND_TAKES) and outer.this is node:
            taken = outer.copy()
            taken.set("this", node.expression.copy())
            moved = exp.Add(this=left.copy(), expression=taken)
            outer.replace(moved)
            node, left, outer = moved, moved.this, moved.parent


_TOKENIZER = None


def _unterminated(text: str) -> int | None:
    """Where the string, quoted name or comment that has no end starts in ``text``, if one
    does."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                return i
            i = j + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return i
            i = end + 2
        elif c == "#" or (text.startswith("--", i) and (i + 2 == n or text[i + 2].isspace())):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        else:
            i += 1
    return None


def _syntax_error(sql: str, text: str, e: ParseError | None):
    """MySQL's 1064: "... near '<rest of the statement>' at line N", no parser internals."""
    from ..errors import syntax_error_near

    hint = ""
    if "%s" in sql or "%(" in sql:
        hint = " (placeholders are ?, not %s)"
    line, near = 1, sql.strip()
    if e is not None and e.errors:
        info = e.errors[0]
        line = info.get("line") or 1
        col = info.get("col") or 0
        hl = info.get("highlight") or ""
        lines = text.split("\n")
        if 1 <= line <= len(lines):
            off = sum(len(x) + 1 for x in lines[: line - 1]) + max(col - len(hl), 0)
            near = text[off:]
            # the text had ? renamed :pN; show the user's placeholders again
            import re

            near = re.sub(r":p\d+\b", "?", near)
    err = syntax_error_near(near, line)
    if hint:
        err.msg += hint
        err.args = (err.msg,)
    return err


def _check_tokens(text: str) -> None:
    """Reject token sequences the parser tolerates but MySQL does not (``a,, b``, ``(a,)``)."""
    global _TOKENIZER
    from sqlglot.tokens import TokenType

    if _TOKENIZER is None:
        from sqlglot.dialects.mysql import MySQL

        _TOKENIZER = MySQL().tokenizer_class()
    try:
        toks = _TOKENIZER.tokenize(text)
    except Exception as e:  # noqa: BLE001
        raise parse_error(str(e).split("\n")[0]) from None
    bad_after_comma = {TokenType.COMMA, TokenType.R_PAREN, TokenType.FROM, TokenType.WHERE}
    for a, b in zip(toks, toks[1:]):
        if a.token_type == TokenType.COMMA and b.token_type in bad_after_comma:
            raise parse_error(f"near '{b.text}'")
        if a.token_type == TokenType.L_PAREN and b.token_type == TokenType.COMMA:
            raise parse_error("near ','")
        if a.token_type == TokenType.SELECT and b.token_type == TokenType.FROM:
            raise parse_error("near 'FROM'")
        if a.token_type == TokenType.SET and b.token_type == TokenType.WHERE:
            raise parse_error("near 'WHERE'")
    if toks and toks[-1].token_type == TokenType.COMMA:
        raise parse_error("unexpected end of statement")
    return toks


_ITEM_END = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "INTO", "WINDOW",
             "FOR", "LOCK", "EXCEPT", "INTERSECT", "SEMICOLON"}  # fmt: skip
_MODIFIERS = {"DISTINCT", "ALL", "DISTINCTROW", "HIGH_PRIORITY", "STRAIGHT_JOIN",
              "SQL_SMALL_RESULT", "SQL_BIG_RESULT", "SQL_BUFFER_RESULT", "SQL_NO_CACHE",
              "SQL_CACHE", "SQL_CALC_FOUND_ROWS"}  # fmt: skip
_PLACEHOLDER = re.compile(r":p\d+\b")


def _name_items(stmt: exp.Expression, text: str, toks: list) -> None:
    """MySQL names an unaliased result column by its text as written (``count(*)``, ``a+1``):
    note each computed item's text in its ``meta["name"]`` (see :func:`item_name`). Only the
    first SELECT of a statement that starts with it (a UNION's columns are its first
    SELECT's) or of a CREATE ... AS SELECT."""
    first = stmt.expression if isinstance(stmt, exp.Create) else stmt  # CREATE VIEW ... AS
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select):
        return
    starts = [i for i, t in enumerate(toks) if t.token_type.name == "SELECT"]
    if not starts or (not isinstance(stmt, exp.Create) and starts[0] != 0):
        return
    spans: list[list] = [[]]
    depth = 0
    i = starts[0] + 1
    while i < len(toks) and toks[i].text.upper() in _MODIFIERS and not spans[0]:
        i += 1
    for tok in toks[i:]:
        kind = tok.token_type.name
        if depth == 0 and (kind in _ITEM_END or tok.text.upper() in _ITEM_END):
            break
        if kind == "L_PAREN":
            depth += 1
        elif kind == "R_PAREN":
            depth -= 1
        if depth == 0 and kind == "COMMA":
            spans.append([])
            continue
        spans[-1].append(tok)
    items = first.expressions
    if len(spans) != len(items) or not all(spans):
        return  # a shape this walk does not know: the normalized text names them
    for e, span in zip(items, spans):
        if isinstance(e, (exp.Alias, exp.Column, exp.Star)):
            continue
        written = text[span[0].start : span[-1].end + 1]
        e.meta["name"] = _PLACEHOLDER.sub("?", written)


def item_name(e: exp.Expression) -> str:
    """A result column's name as MySQL gives it: the alias, the column's name, a string
    literal's value, else the item's text as written (the normalized text when unknown)."""
    if isinstance(e, exp.Alias):
        return e.alias
    inner = e
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Column):
        return inner.name  # ``(a)`` is the column a
    if isinstance(e, exp.Literal) and e.is_string:
        return e.this
    name = e.meta.get("name") if e._meta else None
    return name if name else e.sql(DIALECT)


def _check_tree(stmt: exp.Expression, sql: str) -> None:
    for node in stmt.find_all(exp.In):
        if not node.expressions and not node.args.get("query") and not node.args.get("unnest"):
            raise parse_error("near ')': empty IN list")
    if isinstance(stmt, exp.Select) and not stmt.expressions:
        raise parse_error("empty select list")
    for sel in stmt.find_all(exp.Select):
        from ..errors import NotSupportedError

        group = sel.args.get("group")
        if group is not None and group.args.get("cube"):
            raise NotSupportedError("This version doesn't yet support 'GROUP BY ... WITH CUBE'")
        if group is not None and group.args.get("rollup") and sel is not stmt:
            raise NotSupportedError(
                "This version doesn't yet support 'GROUP BY ... WITH ROLLUP' but in the "
                "statement's own SELECT"
            )
        mods = sel.args.get("operation_modifiers") or []
        if any(str(getattr(m, "this", m)).upper() == "SQL_CALC_FOUND_ROWS" for m in mods):
            if sel is not _first_select(stmt):
                from ..errors import ProgrammingError

                raise ProgrammingError(
                    "Incorrect usage/placement of 'SQL_CALC_FOUND_ROWS'", 1234, "42000"
                )
        if sel.args.get("into") is not None:
            # SELECT ... INTO @var is a session statement (noria_py.server.session)
            raise NotSupportedError("This version doesn't yet support 'SELECT ... INTO' here")
    if isinstance(stmt, exp.Update) and not stmt.expressions:
        raise parse_error("UPDATE without SET")
    if isinstance(stmt, exp.Update) and not all(isinstance(e, exp.EQ) for e in stmt.expressions):
        # SET a (no value: the rest was a comment, `SET a-- = ...`) or SET a + 1
        raise parse_error("near ''")
    if isinstance(stmt, exp.Create) and isinstance(stmt.this, exp.Schema):
        if not stmt.this.expressions:
            raise parse_error("a table must have at least one column")


def _quantified_subqueries(stmt: exp.Expression) -> None:
    """``x = ANY (SELECT ...)`` is ``x IN (SELECT ...)`` and ``x <> ALL (SELECT ...)`` is ``x NOT
    IN (SELECT ...)`` (NULLs included); other comparisons with ANY/SOME/ALL are 1235."""
    from ..errors import NotSupportedError

    for q in list(stmt.find_all(exp.Any, exp.All)):
        cmp = q.parent
        sub = q.this
        if isinstance(sub, exp.Subquery):
            sub = sub.this
        rewritable = (
            isinstance(cmp, (exp.EQ, exp.NEQ))
            and cmp.expression is q
            and isinstance(sub, exp.Query)
            and (isinstance(cmp, exp.EQ) == isinstance(q, exp.Any))
        )
        if rewritable:
            inn = exp.In(this=cmp.this.copy(), query=exp.Subquery(this=sub.copy()))
            cmp.replace(inn if isinstance(cmp, exp.EQ) else exp.Not(this=inn))
            continue
        quantified = _quantified(cmp, q, sub)
        if quantified is None:
            word = "ALL" if isinstance(q, exp.All) else "ANY/SOME"
            raise NotSupportedError(
                f"This version doesn't yet support 'comparison with {word} (subquery)' here"
            )
        cmp.replace(quantified)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _deterministic(call: exp.Anonymous) -> bool:
    """Is ``call`` a function known to give the same value for the same arguments?"""
    from . import functions as F

    F.load_all()
    fn = F.REGISTRY.get(str(call.this).upper())
    return fn is not None and bool(fn.deterministic)


def _quantified(cmp: exp.Expression, q: exp.Expression, sub) -> exp.Expression | None:
    """``x op ANY (S)`` and ``x op ALL (S)`` with MySQL's three-valued answer, as EXISTS over
    S's one column (``v``): ANY is 1 when some ``x op v`` holds, else NULL when S has a row and
    ``x`` or some ``v`` is NULL, else 0 (S empty included); ALL is 0 when some ``x op v`` is
    false, else NULL likewise, else 1. None when it cannot be written so (a row on the left, S
    not one column, a left side that may change between evaluations)."""
    if not isinstance(cmp, _COMPARISONS) or cmp.expression is not q:
        return None
    if not isinstance(sub, exp.Query):
        return None
    left = cmp.this
    if isinstance(left, exp.Tuple) or left.find(exp.Rand, exp.Subquery):
        return None
    if any(not _deterministic(a) for a in left.find_all(exp.Anonymous)):
        return None
    first = sub
    while isinstance(first, (exp.SetOperation, exp.Subquery)):
        first = first.this
    if not isinstance(first, exp.Select):
        return None
    if len(first.expressions) != 1 and not any(isinstance(e, exp.Star) for e in first.expressions):
        from ..errors import OperationalError

        raise OperationalError("Operand should contain 1 column(s)", 1241, "21000")
    item = first.expressions[0]
    if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star):
        return None
    body = sub.copy()
    head = body
    while isinstance(head, (exp.SetOperation, exp.Subquery)):
        head = head.this
    only = head.expressions[0]
    head.set("expressions", [exp.alias_(only.this if isinstance(only, exp.Alias) else only,
                                        "__noria_v", quoted=True)])  # fmt: skip
    value = exp.column("__noria_v", table="__noria_q", quoted=True)

    def exists(cond: exp.Expression) -> exp.Expression:
        derived = exp.Subquery(
            this=body.copy(), alias=exp.TableAlias(this=exp.to_identifier("__noria_q", quoted=True))
        )
        return exp.Exists(this=exp.select(exp.Literal.number(1)).from_(derived).where(cond))

    holds = cmp.__class__(this=left.copy(), expression=value.copy())
    unknown = exp.or_(exp.Is(this=left.copy(), expression=exp.Null()),
                      exp.Is(this=value.copy(), expression=exp.Null()))  # fmt: skip
    if isinstance(q, exp.Any):
        decided, then, otherwise = holds, 1, 0
    else:
        decided, then, otherwise = exp.Not(this=exp.paren(holds)), 0, 1
    return exp.Case(
        ifs=[
            exp.If(this=exists(decided), true=exp.Literal.number(then)),
            exp.If(this=exists(unknown), true=exp.Null()),
        ],
        default=exp.Literal.number(otherwise),
    )


def _replace_statement(sql: str, text: str) -> exp.Expression:
    """``REPLACE [INTO] t ...``: parsed as the INSERT it resembles, marked ``replace``."""
    m = _REPLACE_HEAD.match(text)
    if m is None:
        raise parse_error(f"near '{sql.strip()[:40]}'")
    try:
        stmt = sqlglot.parse_one("INSERT INTO " + text[m.end() :], read=DIALECT)
    except Exception:  # noqa: BLE001 - sqlglot raises assorted errors on odd input
        raise _syntax_error(sql, text, None) from None
    if not isinstance(stmt, exp.Insert) or stmt.args.get("conflict") is not None:
        raise parse_error(f"near '{sql.strip()[:40]}'")
    stmt.meta["replace"] = True
    return stmt


def _known_command(stmt: exp.Command) -> bool:
    name = str(stmt.this).upper()
    return name in {
        "SHOW",
        "DESCRIBE",
        "DESC",
        "EXPLAIN",
        "BEGIN",
        "START",
        "SET",
        "USE",
        "COMMIT",
        "ROLLBACK",
        "RENAME",
        "ALTER",
        "LOAD",
    }

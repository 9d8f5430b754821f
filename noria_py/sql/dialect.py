"""The MySQL dialect as noria_py parses it: sqlglot's MySQL, with function calls kept as written.

sqlglot turns many MySQL functions into portable expression classes, and some of those
rewrites lose what MySQL meant: ``CHAR_LENGTH`` and ``LENGTH`` both become ``Length``,
``TO_DAYS(d)`` becomes date arithmetic, ``DATE_FORMAT``'s specifiers are translated to another
format language, ``ISNULL(x)`` becomes ``x IS NULL``. The evaluator (``sql/functions``) is written
against MySQL's own names and argument orders, so this dialect parses every function that has
ordinary call syntax to ``exp.Anonymous`` with its MySQL name; what keeps its class is the
aggregates (the compiler plans them), the conditionals the compiler knows (``IF``, ``IFNULL``,
``COALESCE``, ``NULLIF``) and the functions with a syntax of their own (``CAST``, ``CONVERT``,
``EXTRACT``, ``TRIM``, ``SUBSTRING ... FROM``, ``POSITION ... IN``, ``GROUP_CONCAT``, ``CHAR ...
USING``, ``JSON_OBJECT``), which :mod:`.expr` maps back to MySQL's names.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.tokens import Token, TokenType

# Non-aggregate functions whose sqlglot class the compiler understands and which keep MySQL's
# meaning exactly.
_KEEP = {"COUNT", "IF", "IFNULL", "COALESCE", "NULLIF", "CONCAT", "CONCAT_WS"}


# MySQL aggregates implemented by ``sql/functions/aggregates.py``: parsed by name, like calls.
OWN_AGGREGATES = {
    "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP", "VAR_SAMP",
    "BIT_AND", "BIT_OR", "BIT_XOR", "JSON_ARRAYAGG", "JSON_OBJECTAGG",
}  # fmt: skip


def _keep(name: str, builder) -> bool:
    if name in _KEEP:
        return True
    if name in OWN_AGGREGATES:
        return False
    cls = getattr(builder, "__self__", None)
    if isinstance(cls, type) and issubclass(cls, exp.AggFunc):
        return True
    # builders given as classes' from_arg_list
    try:
        owner = builder.__qualname__.split(".")[0]
    except AttributeError:
        return False
    klass = getattr(exp, owner, None)
    return isinstance(klass, type) and issubclass(klass, exp.AggFunc)


# A number with an exponent, as MySQL reads it: the sign belongs to the exponent only when it
# follows the E. sqlglot's scanner also takes a sign after the exponent's digits, so
# ``1e1+1`` became one number and ``1e15+0.3e0`` one identifier.
_EXPONENT_NUMBER = re.compile(r"\d+(?:\.\d*)?[eE][+-]?\d+")


def _hex_string(parser, token) -> exp.HexString:
    """``0x41`` and ``X'41'`` both parse to HexString; ``0x41`` is marked ``hex_number``: MySQL
    and MariaDB read it as an integer in numeric context, MariaDB reads ``X'41'`` as a string."""
    node = parser.expression(exp.HexString(this=token.text), token)
    text = parser.sql or ""
    if token.start < len(text) and text[token.start] == "0":
        node.meta["hex_number"] = True
    return node


def _glued(tok: Token) -> bool:
    """A number token that ran on past its exponent into a sign and what follows."""
    if tok.token_type not in (TokenType.NUMBER, TokenType.VAR) or not tok.text[:1].isdigit():
        return False
    m = _EXPONENT_NUMBER.match(tok.text)
    return m is not None and m.end() < len(tok.text) and tok.text[m.end()] in "+-"


class NoriaMySQL(MySQL):
    class Tokenizer(MySQL.Tokenizer):
        # REAL is a DOUBLE in MySQL (without the REAL_AS_FLOAT mode), not a FLOAT
        KEYWORDS = {**MySQL.Tokenizer.KEYWORDS, "REAL": TokenType.DOUBLE}

        def tokenize(self, sql: str) -> list[Token]:
            tokens = super().tokenize(sql)
            if not any(_glued(t) for t in tokens):
                return tokens
            out: list[Token] = []
            for tok in tokens:
                if not _glued(tok):
                    out.append(tok)
                    continue
                # split after the exponent's digits and scan the rest again
                n = _EXPONENT_NUMBER.match(tok.text).end()
                first = Token(TokenType.NUMBER, tok.text[:n], tok.line, tok.col, tok.start)
                first.end = tok.start + n - 1
                out.append(first)
                for t in self.tokenize(tok.text[n:]):
                    t.start += tok.start + n
                    t.end += tok.start + n
                    t.line = tok.line
                    out.append(t)
            return out

    class Parser(MySQL.Parser):
        FUNCTIONS = {k: v for k, v in MySQL.Parser.FUNCTIONS.items() if _keep(k, v)}
        NUMERIC_PARSERS = {
            **MySQL.Parser.NUMERIC_PARSERS,
            TokenType.HEX_STRING: lambda self, token: _hex_string(self, token),
        }
        PRIMARY_PARSERS = {
            **MySQL.Parser.PRIMARY_PARSERS,
            TokenType.HEX_STRING: lambda self, token: _hex_string(self, token),
        }
        # the literal TIME '01:00:00.5' keeps its fraction where CAST(... AS TIME) drops it:
        # parsed as a cast to TIMETZ, which no MySQL CAST can name (as TIMESTAMP '...' is
        # parsed to TIMESTAMPTZ)
        TYPE_LITERAL_PARSERS = {
            **MySQL.Parser.TYPE_LITERAL_PARSERS,
            exp.DType.TIME: lambda self, this, _: self.expression(
                exp.Cast(this=this, to=exp.DataType.build("TIMETZ"))
            ),
        }

        def _parse_interval(self, match_interval: bool = True, **kw):
            """``INTERVAL expr unit``, MySQL's only form of it. sqlglot would go on to read
            ``INTERVAL 1 DAY + '2024-01-01'`` as a sum of two intervals (the second with the
            next word, an alias, as its unit); to MySQL the string is the date the interval is
            added to. And sqlglot turns ``INTERVAL 0 SECOND`` into ``INTERVAL '0' SECOND``;
            MySQL tells them apart (a string amount of seconds carries microseconds), so
            numbers stay numbers."""
            start = self._index
            if match_interval and not self._match(TokenType.INTERVAL):
                return None
            at = self._index + (1 if self._curr and self._curr.token_type == TokenType.DASH else 0)
            toks = self._tokens
            numeric = at < len(toks) and toks[at].token_type == TokenType.NUMBER
            if self._match(TokenType.STRING, advance=False):
                amount = self._parse_primary()
            else:
                amount = self._parse_term()
            units = self.dialect.VALID_INTERVAL_UNITS
            if amount is None or (
                isinstance(amount, exp.Column)
                and not amount.table
                and not amount.this.quoted
                and self._curr is not None
                and self._curr.text.upper() not in units
            ):
                self._retreat(start)  # a column named interval, not an interval
                return None
            node = self._parse_interval_span(amount, **kw)
            if (
                numeric
                and isinstance(node, exp.Interval)
                and isinstance(node.this, exp.Literal)
                and node.this.is_string
            ):
                node.set("this", exp.Literal.number(node.this.this))
            return node

    class Generator(MySQL.Generator):
        def hexstring_sql(self, expression: exp.HexString, binary_function_repr=None) -> str:
            # 0x41 stays 0x41 (a statement's text and its cache key tell it from X'41')
            if expression.meta.get("hex_number"):
                return f"0x{expression.this}"
            return super().hexstring_sql(expression, binary_function_repr)


DIALECT = NoriaMySQL()

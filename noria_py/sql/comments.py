"""MySQL's executable comments: ``/*! ... */``, ``/*!NNNNN ... */`` and MariaDB's ``/*M! ... */``.

The text inside such a comment is part of the statement (``mysqldump`` writes its session
settings, ``DISABLE KEYS`` and view definitions in them). With a version number (five or six
digits) it is part of the statement only on servers of that version or later; MariaDB, whose
semantics these are, also leaves out ``/*!`` comments numbered 50700-99999 (MySQL 5.7 and
later, which it is not), but not ``/*M!`` ones.

:func:`expand` rewrites a text into the statement it stands for: a comment that applies is
replaced by its body, one that does not by a space. Strings, quoted identifiers and ordinary
comments are skipped (a ``*/`` inside a string in the body of a comment that applies does not
end it; an ordinary comment may sit inside the body; a ``--`` or ``#`` comment in the body
runs to the end of its line). The body of one that does not apply is not read as SQL: it ends
at the first ``*/`` that closes no ``/*`` inside it. A comment without its end is a syntax
error (1064).
"""

from __future__ import annotations

import re

# the version this server answers as, for versioned comments: MariaDB 10.11's semantics
VERSION_ID = 101100


def has_executable(sql: str) -> bool:
    """Might ``sql`` hold an executable comment? (Cheap; :func:`expand` decides.)"""
    return "/*!" in sql or "/*M!" in sql


def _skip_quoted(sql: str, i: int) -> int:
    """The index after the string or quoted identifier opening at ``sql[i]``."""
    q = sql[i]
    n = len(sql)
    i += 1
    while i < n:
        c = sql[i]
        if c == "\\" and q != "`":
            i += 2
            continue
        if c == q:
            if i + 1 < n and sql[i + 1] == q:  # a doubled quote
                i += 2
                continue
            return i + 1
        i += 1
    return n


def _skip_line(sql: str, i: int) -> int:
    end = sql.find("\n", i)
    return len(sql) if end < 0 else end + 1


def _line_comment(sql: str, i: int) -> bool:
    c = sql[i]
    if c == "#":
        return True
    return c == "-" and sql.startswith("--", i) and (i + 2 == len(sql) or sql[i + 2].isspace())


def _applies(marker: str, version: int | None) -> bool:
    if version is None:
        return True
    if version > VERSION_ID:
        return False
    return marker == "M!" or not 50700 <= version <= 99999


def _comment_end(sql: str, i: int) -> int:
    """Where the executable comment whose body starts at ``i`` ends (the index of its
    ``*/``), or -1."""
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i = _skip_quoted(sql, i)
        elif c == "*" and sql.startswith("*/", i):
            return i
        elif c == "/" and sql.startswith("/*", i):
            if sql.startswith("/*!", i) or sql.startswith("/*M!", i):
                return -1  # MySQL does not nest executable comments
            end = sql.find("*/", i + 2)
            if end < 0:
                return -1
            i = end + 2
        elif _line_comment(sql, i):
            i = _skip_line(sql, i)
        else:
            i += 1
    return -1


def _skipped_end(sql: str, i: int) -> int:
    """Where a comment that does not apply ends: its body is not read as SQL (a ``*/`` in a
    string ends it, ``--`` is nothing), but a ``/* */`` inside it pairs up, as in MariaDB."""
    depth = 0
    n = len(sql)
    while i < n - 1:
        if sql.startswith("/*", i):
            depth += 1
            i += 2
        elif sql.startswith("*/", i):
            if depth == 0:
                return i
            depth -= 1
            i += 2
        else:
            i += 1
    return -1


def expand(sql: str) -> str:
    """``sql`` with its executable comments replaced by what they stand for."""
    if not has_executable(sql):
        return sql
    return _expand(sql, None)


def _expand(sql: str, spans: list | None) -> str:
    """:func:`expand`; with ``spans``, appends ``(start in the result, start in sql, length)``
    of each stretch of the result copied from ``sql``."""
    out: list[str] = []
    size = 0  # of the result so far

    def copy(a: int, b: int) -> None:
        nonlocal size
        if spans is not None and b > a:
            spans.append((size, a, b - a))
        out.append(sql[a:b])
        size += b - a

    def put(text: str) -> None:
        nonlocal size
        out.append(text)
        size += len(text)

    start = 0
    i = 0
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i = _skip_quoted(sql, i)
        elif c == "/" and sql.startswith("/*", i):
            marker = "!" if sql.startswith("/*!", i) else "M!" if sql.startswith("/*M!", i) else ""
            if not marker:
                end = sql.find("*/", i + 2)
                i = n if end < 0 else end + 2
                continue
            body = i + 2 + len(marker)
            digits = 0
            while digits < 6 and body + digits < n and sql[body + digits].isdigit():
                digits += 1
            version = None
            if digits >= 5:
                version = int(sql[body : body + digits])
                body += digits
            applies = _applies(marker, version)
            end = _comment_end(sql, body) if applies else _skipped_end(sql, body)
            if end < 0:
                from ..errors import parse_error, syntax_error_near

                # MariaDB: an unterminated comment that applies is an error at the end of the
                # text; one that does not, at the comment (MariaDB's message shows the comments
                # nested in it as (* *))
                if applies:
                    raise parse_error("near ''")
                inner = sql[i + 2 :].replace("/*", "(*").replace("*/", "*)")
                raise syntax_error_near(sql[i : i + 2] + inner)
            copy(start, i)
            put(" ")
            if applies:
                copy(body, end)
                put(" ")
            i = start = end + 2
        elif _line_comment(sql, i):
            i = _skip_line(sql, i)
        else:
            i += 1
    copy(start, n)
    return "".join(out)


_NEAR = re.compile(r"near '(.*)' at line \d+", re.S)


def remap_syntax_error(err, sql: str):
    """A syntax error (1064) found in ``expand(sql)``, pointing at the same place of ``sql``
    as written (MySQL quotes the statement as the client sent it); other errors as they are."""
    if getattr(err, "errno", None) != 1064 or not has_executable(sql):
        return err
    m = _NEAR.search(str(err.args[0]) if err.args else "")
    if m is None:
        return err
    spans: list = []
    try:
        text = _expand(sql, spans)
    except Exception:  # noqa: BLE001 - the text's own error came first
        return err
    at = text.find(m.group(1)) if m.group(1) else len(text.rstrip())
    if at < 0:
        return err
    orig = len(sql)
    for out_start, src, length in spans:
        if at < out_start + length:
            orig = src + max(at - out_start, 0)
            break
    from ..errors import syntax_error_near

    return syntax_error_near(sql[orig:], sql.count("\n", 0, orig) + 1)

"""MariaDB's regular expressions (PCRE2) on Python's ``re``.

Patterns are translated where PCRE's syntax differs from Python's (POSIX classes, the
``[[:<:]]``/``[[:>:]]`` word boundaries, ``\\z``, ``(?<name>...)``, ``\\x{hh}``), compiled once
and cached. Matching is case-insensitive unless the comparison collation is case-sensitive
(or an argument is binary), as in MariaDB.
"""

from __future__ import annotations

import re

from ...errors import OperationalError
from ..values import INT, STR
from . import register
from .coerce import to_str

ER_REGEXP_ERROR = 1139

# POSIX classes alone in a bracket: exact Unicode equivalents (PCRE2_UCP).
_POSIX_ALONE = {
    "alpha": r"[^\W\d_]",
    "alnum": r"[^\W_]",
    "digit": r"\d",
    "lower": r"(?-i:[a-z\u00df-\u00f6\u00f8-\u00ff])",
    "upper": r"(?-i:[A-Z\u00c0-\u00d6\u00d8-\u00de])",
    "space": r"\s",
    "word": r"\w",
    "punct": r"[!-/:-@\[-`{-~]",
    "xdigit": r"[0-9A-Fa-f]",
    "blank": r"[ \t]",
    "cntrl": r"[\x00-\x1f\x7f]",
    "print": r"[^\x00-\x1f\x7f]",
    "graph": r"[^\x00-\x20\x7f]",
}
# Inside a bracket with other members: ranges (Latin, Greek and Cyrillic letters).
_LETTERS = (
    "a-zA-Z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u0370-\u03ff\u0400-\u052f"
)
_POSIX_IN = {
    "alpha": _LETTERS,
    "alnum": _LETTERS + "0-9",
    "digit": "0-9",
    "lower": "a-z\u00df-\u00f6\u00f8-\u00ff",
    "upper": "A-Z\u00c0-\u00d6\u00d8-\u00de",
    "space": " \\t\\n\\r\\f\\v",
    "word": "\\w",
    "punct": "!-/:-@\\[-`{-~",
    "xdigit": "0-9A-Fa-f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e\u00a0-\U0010ffff",
    "graph": "\\x21-\\x7e\u00a1-\U0010ffff",
}
_POSIX_RE = re.compile(r"\[:(\^?)([a-z]+):\]")


def _bracket(p: str, i: int) -> tuple[str, int]:
    """Translate the bracket expression starting at ``p[i] == '['``: (text, next index)."""
    n = len(p)
    j = i + 1
    neg = ""
    if j < n and p[j] == "^":
        neg = "^"
        j += 1
    # a bracket that is exactly one POSIX class
    m = _POSIX_RE.match(p, j)
    if m and m.end() < n and p[m.end()] == "]" and not m.group(1) and m.group(2) in _POSIX_ALONE:
        cls = _POSIX_ALONE[m.group(2)]
        if neg:
            return f"(?:(?!{cls})[\\s\\S])", m.end() + 1
        return cls, m.end() + 1
    out = ["[", neg]
    first = True
    while j < n:
        c = p[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[":
            m = _POSIX_RE.match(p, j)
            if m and m.group(2) in _POSIX_IN and not m.group(1):
                out.append(_POSIX_IN[m.group(2)])
                j = m.end()
                continue
            out.append("\\[")
            j += 1
            continue
        if c == "\\" and j + 1 < n:
            out.append(p[j : j + 2])
            j += 2
            continue
        if c == "]":
            out.append("\\]")
        else:
            out.append(c)
        j += 1
    raise re.error("missing terminating ] for character class")


def translate(p: str) -> str:
    """A PCRE2 pattern as a Python ``re`` pattern."""
    out = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == "\\" and i + 1 < n:
            e = p[i + 1]
            if e == "z":
                out.append(r"\Z")
            elif e == "Z":
                out.append(r"(?=\n?\Z)")
            elif e == "h":
                out.append(r"[ \t]")
            elif e == "x" and i + 2 < n and p[i + 2] == "{":
                j = p.find("}", i + 3)
                if j < 0:
                    raise re.error("bad \\x{...}")
                out.append(f"\\U{int(p[i + 3 : j] or '0', 16):08x}")
                i = j + 1
                continue
            elif e == "k" and i + 2 < n and p[i + 2] in "<{'":
                close = {"<": ">", "{": "}", "'": "'"}[p[i + 2]]
                j = p.find(close, i + 3)
                if j < 0:
                    raise re.error("bad \\k")
                out.append(f"(?P={p[i + 3 : j]})")
                i = j + 1
                continue
            else:
                out.append(p[i : i + 2])
            i += 2
            continue
        if c == "[":
            if p.startswith("[[:<:]]", i):
                out.append(r"\b(?=\w)")
                i += 7
                continue
            if p.startswith("[[:>:]]", i):
                out.append(r"\b(?<=\w)")
                i += 7
                continue
            text, i = _bracket(p, i)
            out.append(text)
            continue
        if c == "(" and p.startswith("(?<", i) and i + 3 < n and p[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        if c == "(" and p.startswith("(?P>", i):
            raise re.error("recursion is not supported")
        out.append(c)
        i += 1
    return "".join(out)


_cache: dict[tuple[str, bool], re.Pattern] = {}


def compile_pattern(pattern: str, case_sensitive: bool) -> re.Pattern:
    """The compiled (cached) form of a MariaDB pattern; OperationalError 1139 when invalid."""
    key = (pattern, case_sensitive)
    rx = _cache.get(key)
    if rx is None:
        try:
            rx = re.compile(translate(pattern), 0 if case_sensitive else re.I)
        except (re.error, OverflowError, ValueError) as exc:
            raise OperationalError(f"Regex error '{exc}'", ER_REGEXP_ERROR) from None
        if len(_cache) > 4096:
            _cache.clear()
        _cache[key] = rx
    return rx


def _rx(s, pat, coll) -> tuple[str, re.Pattern]:
    cs = isinstance(s, bytes) or isinstance(pat, bytes)
    if coll is not None and coll.case_sensitive:
        cs = True
    return to_str(s), compile_pattern(to_str(pat), cs)


@register("REGEXP", "RLIKE", ret=INT, args=2, collation=True)
def regexp(s, pat, coll=None) -> int:
    """1 when the pattern matches somewhere in the string."""
    text, rx = _rx(s, pat, coll)
    return 1 if rx.search(text) else 0


def _expand(repl: str, m: re.Match) -> str:
    out = []
    i, n = 0, len(repl)
    while i < n:
        c = repl[i]
        if c == "\\" and i + 1 < n:
            e = repl[i + 1]
            if e.isdigit():
                g = int(e)
                if g <= (m.re.groups or 0):
                    out.append(m.group(g) or "")
                i += 2
                continue
            out.append(e)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


@register("REGEXP_REPLACE", ret=STR, args=3, collation=True)
def regexp_replace(s, pat, repl, coll=None) -> str:
    """Matches replaced up to the first empty one (``\\N`` in the replacement is group N)."""
    text, rx = _rx(s, pat, coll)
    r = to_str(repl)
    out = []
    pos = 0
    for m in rx.finditer(text):
        if m.start() == m.end():
            break  # MariaDB stops at the first empty match
        out.append(text[pos : m.start()])
        out.append(_expand(r, m))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


@register("REGEXP_SUBSTR", ret=STR, args=2, collation=True)
def regexp_substr(s, pat, coll=None) -> str:
    """The first match ('' when none)."""
    text, rx = _rx(s, pat, coll)
    m = rx.search(text)
    return m.group(0) if m else ""


@register("REGEXP_INSTR", ret=INT, args=2, collation=True)
def regexp_instr(s, pat, coll=None) -> int:
    """The 1-based character position of the first match, 0 when none."""
    text, rx = _rx(s, pat, coll)
    m = rx.search(text)
    return m.start() + 1 if m else 0

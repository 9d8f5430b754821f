"""MariaDB's JSON functions: documents are text, paths use MariaDB's path syntax.

A document is parsed into :class:`J` nodes that keep the source text of every scalar (numbers
and strings are copied as written, escapes included), so output matches MariaDB, which prints
results through ``json_nice`` in its LOOSE form: ``", "`` between members and ``": "`` after a
key, scalars verbatim. Invalid JSON or an invalid path gives NULL (MariaDB warns).

Values produced by functions whose result type is JSON are :class:`JsonText` (a ``str``): a JSON
function given one splices it in as JSON instead of quoting it as a string, like MariaDB does
for arguments of JSON type.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ...errors import ProgrammingError
from ..values import INT, STR
from . import register
from .coerce import ColumnFloat, ScalarText, fmt_decimal, fmt_float, to_str

DEPTH_LIMIT = 32


class JsonText(str):
    """A string holding JSON: spliced as JSON (not quoted) by the JSON functions."""

    __slots__ = ()


class JsonScalar(JsonText, ScalarText):
    """JSON_EXTRACT's one scalar: JSON text to the JSON functions and to a client, and in
    numeric context and comparisons the value it holds, as MariaDB reads it (a number a
    DOUBLE, a string its text, true 1 and false 0)."""

    __slots__ = ()


def as_json(s: str | None) -> JsonText | None:
    """Mark a string (e.g. a JSON column's value) as JSON for the JSON functions."""
    return None if s is None else JsonText(s)


class JsonError(ValueError):
    """Invalid JSON text or path."""


class J:
    """A parsed JSON value.

    ``t``: ``o`` object, ``a`` array, ``s`` string, ``n`` number, ``t``/``f`` true/false,
    ``z`` null. ``v``: members ``[(raw_key, key, J)]``, items ``[J]``, or the raw text of a
    scalar (a string's text between its quotes). ``src``: the source text of a container.
    """

    __slots__ = ("t", "v", "src")

    def __init__(self, t: str, v=None, src: str | None = None):
        self.t = t
        self.v = v
        self.src = src

    def scalar(self) -> bool:
        return self.t not in "oa"


# --- parsing -------------------------------------------------------------------------------

_WS = " \t\n\r"
_NUM_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][+-]?\d+)?")
_HEX = frozenset("0123456789abcdefABCDEF")


class _Parser:
    __slots__ = ("s", "i", "n")

    def __init__(self, s: str):
        self.s = s
        self.i = 0
        self.n = len(s)

    def ws(self) -> None:
        s, i, n = self.s, self.i, self.n
        while i < n and s[i] in _WS:
            i += 1
        self.i = i

    def string(self) -> str:
        s, n = self.s, self.n
        i = self.i + 1
        start = i
        while True:
            if i >= n:
                raise JsonError("eos in string")
            c = s[i]
            if c == '"':
                break
            if c == "\\":
                if i + 1 >= n:
                    raise JsonError("eos in escape")
                if s[i + 1] == "u":
                    h = s[i + 2 : i + 6]
                    if len(h) < 4 or any(ch not in _HEX for ch in h):
                        raise JsonError("bad \\u escape")
                    i += 6
                    continue
                i += 2
                continue
            if ord(c) < 0x20:
                raise JsonError("control character in string")
            i += 1
        self.i = i + 1
        return s[start:i]

    def value(self, depth: int) -> J:
        self.ws()
        if self.i >= self.n:
            raise JsonError("eos")
        s = self.s
        c = s[self.i]
        if c == "{" or c == "[":
            if depth + 1 >= DEPTH_LIMIT:
                raise JsonError("too deep")
            start = self.i
            self.i += 1
            self.ws()
            if c == "{":
                members: list = []
                if self.i < self.n and s[self.i] == "}":
                    self.i += 1
                else:
                    while True:
                        self.ws()
                        if self.i >= self.n or s[self.i] != '"':
                            raise JsonError("key expected")
                        raw = self.string()
                        self.ws()
                        if self.i >= self.n or s[self.i] != ":":
                            raise JsonError("colon expected")
                        self.i += 1
                        members.append((raw, None, self.value(depth + 1)))
                        self.ws()
                        if self.i < self.n and s[self.i] == ",":
                            self.i += 1
                            continue
                        if self.i < self.n and s[self.i] == "}":
                            self.i += 1
                            break
                        raise JsonError("comma or } expected")
                return J("o", members, s[start : self.i])
            items: list = []
            if self.i < self.n and s[self.i] == "]":
                self.i += 1
            else:
                while True:
                    items.append(self.value(depth + 1))
                    self.ws()
                    if self.i < self.n and s[self.i] == ",":
                        self.i += 1
                        continue
                    if self.i < self.n and s[self.i] == "]":
                        self.i += 1
                        break
                    raise JsonError("comma or ] expected")
            return J("a", items, s[start : self.i])
        if c == '"':
            return J("s", self.string())
        if c == "-" or "0" <= c <= "9":
            m = _NUM_RE.match(s, self.i)
            if not m or m.end() == self.i:
                raise JsonError("bad number")
            self.i = m.end()
            if self.i < self.n and (s[self.i].isdigit() or s[self.i] in ".eE"):
                raise JsonError("bad number")
            return J("n", m.group())
        for word, t in (("true", "t"), ("false", "f"), ("null", "z")):
            if s.startswith(word, self.i):
                self.i += len(word)
                return J(t, word)
        raise JsonError("unexpected character")


def parse(text: str) -> J:
    """Parse a whole JSON document; :class:`JsonError` when it is not valid."""
    p = _Parser(text)
    v = p.value(0)
    p.ws()
    if p.i != p.n:
        raise JsonError("trailing characters")
    return v


def _doc(v) -> J | None:
    """The parsed document of an argument, None when it is NULL or not valid JSON."""
    if v is None:
        return None
    try:
        return parse(to_str(v))
    except (JsonError, RecursionError):
        return None


_ESC = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unescape(raw: str) -> str:
    """The text of a JSON string given the characters between its quotes."""
    if "\\" not in raw:
        return raw
    out = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = raw[i + 1]
        if e == "u":
            cp = int(raw[i + 2 : i + 6], 16)
            i += 6
            if 0xD800 <= cp < 0xDC00 and raw.startswith("\\u", i):
                lo = int(raw[i + 2 : i + 6], 16)
                if 0xDC00 <= lo < 0xE000:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
            out.append(chr(cp))
            continue
        out.append(_ESC.get(e, e))
        i += 2
    return "".join(out)


def _key(member) -> str:
    return unescape(member[0])


_ESCAPE_OUT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b",
               "\f": "\\f"}  # fmt: skip


def escape(s: str) -> str:
    """A string's characters escaped for the inside of a JSON string (MariaDB's json_escape)."""
    out = []
    for c in s:
        e = _ESCAPE_OUT.get(c)
        if e is not None:
            out.append(e)
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def nice(j: J) -> str:
    """The LOOSE form MariaDB prints documents in."""
    t = j.t
    if t == "o":
        return "{" + ", ".join(f'"{k}": {nice(v)}' for k, _, v in j.v) + "}"
    if t == "a":
        return "[" + ", ".join(nice(v) for v in j.v) + "]"
    if t == "s":
        return '"' + j.v + '"'
    return j.v


def raw_text(j: J) -> str:
    """A value as it was written (containers keep their source formatting)."""
    if j.t in "oa":
        return j.src if j.src is not None else nice(j)
    return nice(j)


def from_sql(v) -> J:
    """A SQL value as the JSON value MariaDB writes for it in JSON_ARRAY, JSON_SET, ..."""
    if v is None:
        return J("z", "null")
    if isinstance(v, JsonText):
        try:
            return parse(v)
        except (JsonError, RecursionError):
            return J("n", str(v))  # copied as is; the result then fails to parse (NULL)
    t = type(v)
    if t is bool:
        return J("t", "true") if v else J("f", "false")
    if t is int:
        return J("n", str(v))
    if t is float:
        return J("n", fmt_float(v))
    if t is ColumnFloat:
        return J("n", v.shown())  # a FLOAT column's value as MySQL shows it
    if t is Decimal:
        return J("n", fmt_decimal(v if v else abs(v)))
    return J("s", escape(to_str(v)))


def sql_json_text(v) -> str:
    """A SQL value written as a JSON value (aggregates, JSON_ARRAY, JSON_OBJECT)."""
    if isinstance(v, JsonText):
        return str(v)
    return nice(from_sql(v))


# --- paths ---------------------------------------------------------------------------------


class Step:
    """One step of a path: a key (``key`` None for ``.*``) or an array index / range.

    Indexes: ``lo``/``hi`` (``hi`` None unless a range), negative counting from the end
    (``last`` is -1). ``dw``: preceded by ``**``.
    """

    __slots__ = ("is_key", "raw", "key", "wild", "lo", "hi", "dw")

    def __init__(self, is_key, raw=None, key=None, wild=False, lo=0, hi=None, dw=False):
        self.is_key = is_key
        self.raw = raw
        self.key = key
        self.wild = wild
        self.lo = lo
        self.hi = hi
        self.dw = dw


class Path:
    __slots__ = ("steps", "wild", "negative")

    def __init__(self, steps: list[Step]):
        self.steps = steps
        self.wild = any(s.wild or s.dw or s.hi is not None for s in steps)
        self.negative = any(
            not s.is_key and not s.wild and (s.lo < 0 or (s.hi is not None and s.hi < 0))
            for s in steps
        )


_KEY_END = frozenset('.[ \t\n\r"')
_path_cache: dict[str, Path | None] = {}


def _index(p: str, i: int) -> tuple[int, int]:
    """Parse ``n``, ``-n``, ``last`` or ``last-n`` at ``p[i:]``: (value, next position)."""
    n = len(p)
    while i < n and p[i] in _WS:
        i += 1
    if p.startswith("last", i):
        i += 4
        j = i
        while j < n and p[j] in _WS:
            j += 1
        if j < n and p[j] == "-":
            j += 1
            while j < n and p[j] in _WS:
                j += 1
            k = j
            while k < n and p[k].isdigit():
                k += 1
            if k == j:
                raise JsonError("number expected")
            return -1 - int(p[j:k]), k
        return -1, i
    neg = False
    if i < n and p[i] == "-":
        neg = True
        i += 1
    k = i
    while k < n and p[k].isdigit():
        k += 1
    if k == i or (p[i] == "0" and k - i > 1):
        raise JsonError("number expected")
    v = int(p[i:k])
    if neg:
        if v == 0:
            raise JsonError("bad index")
        v = -v
    return v, k


def parse_path(text: str) -> Path:
    """Parse a MariaDB JSON path; :class:`JsonError` when invalid."""
    p = text
    n = len(p)
    i = 0
    while i < n and p[i] in _WS:
        i += 1
    if i >= n or p[i] != "$":
        raise JsonError("path must start with $")
    i += 1
    steps: list[Step] = []
    while i < n:
        dw = False
        if p.startswith("**", i):
            dw = True
            i += 2
            if i >= n or p[i] not in ".[":
                raise JsonError("step expected after **")
        c = p[i]
        if c == ".":
            i += 1
            if i < n and p[i] == "*":
                steps.append(Step(True, wild=True, dw=dw))
                i += 1
                if i < n and p[i] == "*":
                    raise JsonError("bad wildcard")
            elif i < n and p[i] == '"':
                j = i + 1
                while j < n and p[j] != '"':
                    j += 2 if p[j] == "\\" else 1
                if j >= n:
                    raise JsonError("unterminated key")
                raw = p[i + 1 : j]
                steps.append(Step(True, raw, unescape(raw), dw=dw))
                i = j + 1
            else:
                j = i
                while j < n and p[j] not in _KEY_END:
                    j += 1
                if j == i:
                    raise JsonError("key expected")
                raw = p[i:j]
                steps.append(Step(True, raw, raw, dw=dw))
                i = j
        elif c == "[":
            i += 1
            while i < n and p[i] in _WS:
                i += 1
            if i < n and p[i] == "*":
                i += 1
                step = Step(False, wild=True, dw=dw)
            else:
                lo, i = _index(p, i)
                hi = None
                j = i
                while j < n and p[j] in _WS:
                    j += 1
                if j > i and p.startswith("to", j):
                    hi, i = _index(p, j + 2)
                step = Step(False, lo=lo, hi=hi, dw=dw)
            while i < n and p[i] in _WS:
                i += 1
            if i >= n or p[i] != "]":
                raise JsonError("] expected")
            i += 1
            steps.append(step)
        else:
            raise JsonError("bad path")
    return Path(steps)


def _path(v) -> Path | None:
    s = to_str(v)
    try:
        return _path_cache[s]
    except KeyError:
        pass
    try:
        r = parse_path(s)
    except JsonError:
        r = None
    if len(_path_cache) > 4096:
        _path_cache.clear()
    _path_cache[s] = r
    return r


# --- matching a path against the paths of a document -----------------------------------------
# A document path is a list of (is_key, raw_key_or_index, key); ``sizes`` holds, for each
# step, the size of the array it indexes. compare() is MariaDB's json_path_parts_compare:
# 0 the path names exactly this value, 1 it names an ancestor, -2 a descendant, -1 neither.


def _compare(a: list[Step], ai: int, b: list, bi: int, vt: str, sizes: list, raw: bool) -> int:
    na, nb = len(a), len(b)
    while ai < na:
        s = a[ai]
        if bi >= nb:
            # an index step of 0, or a range from 0, takes a non-array as its one element
            while vt != "a" and not s.is_key and not s.wild and s.lo == 0:
                ai += 1
                if ai >= na:
                    return 0
                s = a[ai]
            return -2
        bk, bval, bkey = b[bi]
        fits = False
        autowrap = False
        if not s.is_key:
            if not bk:
                if s.wild:
                    fits = True
                elif s.hi is not None:
                    size = sizes[bi]
                    lo = s.lo if s.lo >= 0 else size + s.lo
                    hi = s.hi if s.hi >= 0 else size + s.hi
                    fits = lo <= bval <= hi
                elif s.lo >= 0:
                    fits = s.lo == bval
                else:
                    fits = s.lo == bval - sizes[bi]
            elif not s.wild and s.lo == 0:  # (a range from 0 too, as MariaDB's)
                autowrap = True
        elif bk:
            fits = s.wild or (s.raw == bval if raw else s.key == bkey)
        if autowrap:
            if not s.dw:
                ai += 1
                continue
            res = _compare(a, ai + 1, b, bi + 1, vt, sizes, raw)
            if res == 0:
                return 0
            res2 = _compare(a, ai, b, bi + 1, vt, sizes, raw)
            return res2 if res2 >= 0 else res
        if not fits:
            if not s.dw:
                return -1
            bi += 1
            continue
        bi += 1
        if not s.dw:
            ai += 1
            continue
        res = _compare(a, ai + 1, b, bi, vt, sizes, raw)
        if res == 0:
            return 0
        res2 = _compare(a, ai, b, bi, vt, sizes, raw)
        return res2 if res2 >= 0 else res
    return 1 if bi < nb else 0


def walk(j: J, path: list | None = None, sizes: list | None = None):
    """Every value of a document with its path, in document order (containers first)."""
    if path is None:
        path, sizes = [], []
    yield path, sizes, j
    if j.t == "o":
        for m in j.v:
            path.append((True, m[0], _key(m)))
            sizes.append(0)
            yield from walk(m[2], path, sizes)
            path.pop()
            sizes.pop()
    elif j.t == "a":
        size = len(j.v)
        for idx, item in enumerate(j.v):
            path.append((False, idx, None))
            sizes.append(size)
            yield from walk(item, path, sizes)
            path.pop()
            sizes.pop()


def find(j: J, p: Path) -> J | None:
    """The first value a path names (MariaDB's json_find_path)."""
    for bp, sizes, node in walk(j):
        if _compare(p.steps, 0, bp, 0, node.t, sizes, False) == 0:
            return node
    return None


def find_all(j: J, p: Path):
    for bp, sizes, node in walk(j):
        if _compare(p.steps, 0, bp, 0, node.t, sizes, False) == 0:
            yield node


# --- scalar functions ----------------------------------------------------------------------


@register("JSON_VALID", ret=INT, args=1)
def json_valid(js) -> int:
    """1 when the argument is a valid JSON document."""
    return 0 if _doc(js) is None else 1


@register("JSON_EXTRACT", ret=STR, args=(2, None))
def json_extract(js, *paths) -> JsonText | None:
    """The values the paths name; an array when several paths or a wildcard may match."""
    doc = _doc(js)
    ps = []
    for p in paths:
        pp = _path(p)
        if pp is None:
            return None
        ps.append(pp)
    if doc is None:
        return None
    multiple = len(ps) > 1 or ps[0].wild
    found: list[J] = []
    for bp, sizes, node in walk(doc):
        count = 0
        for pp in ps:
            if _compare(pp.steps, 0, bp, 0, node.t, sizes, True) == 0:
                count += 1
        if count:
            found.extend([node] * count)
            if not multiple:
                break
    if not found:
        return None
    if multiple:
        return JsonText("[" + ", ".join(nice(x) for x in found) + "]")
    node = found[0]
    text = nice(node)
    if node.t == "s":
        return JsonScalar(text, unescape(node.v))
    if node.t == "n":
        try:
            return JsonScalar(text, float(node.v))
        except ValueError:
            return JsonText(text)
    if node.t in ("t", "f"):
        return JsonScalar(text, 1.0 if node.t == "t" else 0.0)
    return JsonText(text)


@register("JSON_UNQUOTE", ret=STR, args=1)
def json_unquote(js) -> str:
    """A JSON string's text; anything else comes back unchanged."""
    s = to_str(js)
    p = _Parser(s)
    p.ws()
    if p.i < p.n and s[p.i] == '"':
        try:
            return unescape(p.string())
        except JsonError:
            return s
    return s


@register("JSON_QUOTE", ret=STR, args=1, strict=False)
def json_quote(v) -> str | None:
    """A string as a JSON string literal (NULL for numbers)."""
    if v is None or isinstance(v, (int, float, Decimal)):
        return None
    return '"' + escape(to_str(v)) + '"'


def _first_matching(js, path, scalar: bool):
    doc = _doc(js)
    p = _path(path)
    if doc is None or p is None:
        return None
    for node in find_all(doc, p):
        if node.t == "z":
            return None
        if node.scalar() == scalar:
            return node
    return None


@register("JSON_VALUE", ret=STR, args=2)
def json_value(js, path) -> str | None:
    """The first scalar a path names, as text (true/false are 1/0; null is NULL)."""
    p = _path(path)
    if p is None or p.wild:
        return None
    node = _first_matching(js, path, True)
    if node is None:
        return None
    if node.t == "s":
        return unescape(node.v)
    if node.t == "t":
        return "1"
    if node.t == "f":
        return "0"
    return node.v


@register("JSON_QUERY", ret=STR, args=2)
def json_query(js, path) -> JsonText | None:
    """The first object or array a path names, as written in the document."""
    node = _first_matching(js, path, False)
    return None if node is None else JsonText(raw_text(node))


def _pairs_error(fn: str) -> ProgrammingError:
    return ProgrammingError(f"Incorrect parameter count in the call to native function '{fn}'",
                            1582)  # fmt: skip


@register("JSON_OBJECT", ret=STR, args=(0, None), strict=False)
def json_object(*args) -> JsonText:
    """An object of key/value pairs."""
    if len(args) % 2:
        raise _pairs_error("json_object")
    parts = []
    for i in range(0, len(args), 2):
        k = args[i]
        key = "" if k is None else escape(to_str(k))
        parts.append(f'"{key}": {sql_json_text(args[i + 1])}')
    return JsonText("{" + ", ".join(parts) + "}")


@register("JSON_ARRAY", ret=STR, args=(0, None), strict=False)
def json_array(*args) -> JsonText:
    """An array of the arguments."""
    return JsonText("[" + ", ".join(sql_json_text(a) for a in args) + "]")


def _contains(js: J, val: J) -> bool:
    t = js.t
    if t == "o":
        if val.t != "o":
            return False
        for m in val.v:
            k = _key(m)
            sub = next((x[2] for x in js.v if _key(x) == k), None)
            if sub is None or not _contains(sub, m[2]):
                return False
        return True
    if t == "a":
        if val.t != "a":
            return any(_contains(item, val) for item in js.v)
        return all(_contains(js, item) for item in val.v)
    if t == "s":
        return val.t == "s" and val.v == js.v
    if t == "n":
        if val.t != "n":
            return False
        return abs(_num(js.v) - _num(val.v)) < 1e-12
    return val.t == t


def _num(raw: str) -> float:
    try:
        return float(raw)
    except (OverflowError, ValueError):
        return 0.0


@register("JSON_CONTAINS", ret=INT, args=(2, 3))
def json_contains(js, val, path=None) -> int | None:
    """1 when the document (or the value at path) contains the candidate."""
    doc = _doc(js)
    if path is not None:
        p = _path(path)
        if p is None or p.wild:
            return None
    if doc is None:
        return None
    if path is not None:
        doc = find(doc, p)
        if doc is None:
            return 0
    cand = _doc(val)
    if cand is None:
        return None
    return 1 if _contains(doc, cand) else 0


def _one_or_all(v) -> bool | None:
    s = to_str(v).lower()
    if s == "one":
        return True
    if s == "all":
        return False
    return None


@register("JSON_CONTAINS_PATH", ret=INT, args=(3, None))
def json_contains_path(js, one_or_all, *paths) -> int | None:
    """1 when one (or all) of the paths name a value of the document."""
    mode_one = _one_or_all(one_or_all)
    if mode_one is None:
        return None
    ps = []
    for p in paths:
        pp = _path(p)
        if pp is None:
            return None
        ps.append(pp)
    doc = _doc(js)
    if doc is None:
        return None
    found = [False] * len(ps)
    for bp, sizes, node in walk(doc):
        for i, pp in enumerate(ps):
            if not found[i] and _compare(pp.steps, 0, bp, 0, node.t, sizes, True) >= 0:
                found[i] = True
        if mode_one and any(found):
            return 1
        if all(found):
            return 1
    return 0


def _at_path(js, path) -> J | None | bool:
    """The value at an optional non-wildcard path; False when the input is invalid."""
    doc = _doc(js)
    if path is not None:
        p = _path(path)
        if p is None or p.wild:
            return False
    if doc is None:
        return False
    if path is None:
        return doc
    return find(doc, p)


@register("JSON_LENGTH", ret=INT, args=(1, 2))
def json_length(js, path=None) -> int | None:
    """The number of members or items (1 for a scalar)."""
    node = _at_path(js, path)
    if node is False or node is None:
        return None
    return len(node.v) if node.t in "oa" else 1


@register("JSON_DEPTH", ret=INT, args=1)
def json_depth(js) -> int | None:
    """The maximum nesting depth (1 for a scalar or an empty container)."""
    doc = _doc(js)
    if doc is None:
        return None

    def depth(j: J) -> int:
        if j.t == "o":
            return 1 + max((depth(m[2]) for m in j.v), default=0)
        if j.t == "a":
            return 1 + max((depth(x) for x in j.v), default=0)
        return 1

    return depth(doc)


@register("JSON_TYPE", ret=STR, args=1)
def json_type(js) -> str | None:
    """OBJECT, ARRAY, STRING, INTEGER, DOUBLE, BOOLEAN or NULL."""
    doc = _doc(js)
    if doc is None:
        return None
    t = doc.t
    if t == "n":
        return "DOUBLE" if "." in doc.v else "INTEGER"
    return {"o": "OBJECT", "a": "ARRAY", "s": "STRING", "t": "BOOLEAN", "f": "BOOLEAN"}.get(
        t, "NULL"
    )


@register("JSON_KEYS", ret=STR, args=(1, 2))
def json_keys(js, path=None) -> JsonText | None:
    """The keys of the object (at path), without duplicates."""
    node = _at_path(js, path)
    if node is False or node is None or node.t != "o":
        return None
    seen: list[str] = []
    for raw, _, _ in node.v:
        if raw not in seen:
            seen.append(raw)
    return JsonText("[" + ", ".join(f'"{k}"' for k in seen) + "]")


# --- modifying functions -------------------------------------------------------------------


def _copy(j: J) -> J:
    if j.t == "o":
        return J("o", [(k, d, _copy(v)) for k, d, v in j.v])
    if j.t == "a":
        return J("a", [_copy(v) for v in j.v])
    return j


def _pairs(args, fn: str):
    if len(args) % 2:
        raise _pairs_error(fn)
    return [(args[i], args[i + 1]) for i in range(0, len(args), 2)]


def _modify(js, pairs, mode_insert: bool, mode_replace: bool) -> JsonText | None:
    doc = _doc(js)
    paths = []
    for path, _ in pairs:
        if path is None:
            return None
        p = _path(path)
        if p is None or p.wild:
            return None
        paths.append(p)
    if doc is None:
        return None
    doc = _copy(doc)
    for p, (_, value) in zip(paths, pairs, strict=True):
        if not p.steps:
            if mode_replace:
                doc = from_sql(value)
            continue
        parent = find(doc, Path(p.steps[:-1]))
        if parent is None:
            continue
        last = p.steps[-1]
        if not last.is_key:
            if parent.t != "a":
                if mode_insert:
                    if mode_replace:
                        wrap = last.lo > 0
                    else:
                        if last.lo == 0:
                            continue
                        wrap = True
                elif last.lo:
                    continue
                else:
                    wrap = False
                new = from_sql(value)
                old = J(parent.t, parent.v, parent.src)
                _replace_node(parent, J("a", [old, new]) if wrap else new)
                continue
            n = last.lo if last.lo >= 0 else last.lo + len(parent.v)
            if 0 <= n < len(parent.v):
                if mode_replace:
                    parent.v[n] = from_sql(value)
            elif mode_insert:
                parent.v.append(from_sql(value))
            continue
        if parent.t != "o":
            continue
        for idx, m in enumerate(parent.v):
            if _key(m) == last.key:
                if mode_replace:
                    parent.v[idx] = (m[0], None, from_sql(value))
                break
        else:
            if mode_insert:
                parent.v.append((last.raw, None, from_sql(value)))
    return JsonText(nice(doc))


def _replace_node(node: J, new: J) -> None:
    """Replace a node in place (the tree holds the node object)."""
    node.t, node.v, node.src = new.t, new.v, new.src


@register("JSON_SET", ret=STR, args=(3, None), strict=False)
def json_set(js, *args) -> JsonText | None:
    """Insert or replace values at paths."""
    if js is None:
        return None
    return _modify(js, _pairs(args, "json_set"), True, True)


@register("JSON_INSERT", ret=STR, args=(3, None), strict=False)
def json_insert(js, *args) -> JsonText | None:
    """Insert values at paths that do not exist yet."""
    if js is None:
        return None
    return _modify(js, _pairs(args, "json_insert"), True, False)


@register("JSON_REPLACE", ret=STR, args=(3, None), strict=False)
def json_replace(js, *args) -> JsonText | None:
    """Replace values at paths that exist."""
    if js is None:
        return None
    return _modify(js, _pairs(args, "json_replace"), False, True)


@register("JSON_REMOVE", ret=STR, args=(2, None))
def json_remove(js, *paths) -> JsonText | None:
    """Remove the values at the paths ('$' is not allowed)."""
    ps = []
    for path in paths:
        p = _path(path)
        if p is None or p.wild or not p.steps:
            return None
        ps.append(p)
    doc = _doc(js)
    if doc is None:
        return None
    doc = _copy(doc)
    for p in ps:
        parent = find(doc, Path(p.steps[:-1]))
        if parent is None:
            continue
        last = p.steps[-1]
        if not last.is_key:
            if parent.t != "a":
                continue
            n = last.lo if last.lo >= 0 else last.lo + len(parent.v)
            if 0 <= n < len(parent.v):
                del parent.v[n]
        elif parent.t == "o":
            for idx, m in enumerate(parent.v):
                if _key(m) == last.key:
                    del parent.v[idx]
                    break
    return JsonText(nice(doc))


@register("JSON_ARRAY_APPEND", ret=STR, args=(3, None), strict=False)
def json_array_append(js, *args) -> JsonText | None:
    """Append values to the arrays at paths (a non-array is wrapped first)."""
    if js is None:
        return None
    pairs = _pairs(args, "json_array_append")
    doc = _doc(js)
    if doc is None:
        return None
    doc = _copy(doc)
    for path, value in pairs:
        if path is None:
            return None
        p = _path(path)
        if p is None or p.wild:
            return None
        node = find(doc, p)
        if node is None:
            return None
        if node.t == "a":
            node.v.append(from_sql(value))
        else:
            _replace_node(node, J("a", [J(node.t, node.v, node.src), from_sql(value)]))
    return JsonText(nice(doc))


def _merge(a: J, b: J) -> J:
    if a.t == "o" and b.t == "o":
        out = []
        for m in a.v:
            k = _key(m)
            other = next((x for x in b.v if _key(x) == k), None)
            out.append((m[0], None, m[2] if other is None else _merge(m[2], other[2])))
        akeys = {_key(m) for m in a.v}
        out.extend(m for m in b.v if _key(m) not in akeys)
        return J("o", out)
    items = list(a.v) if a.t == "a" else [a]
    items.extend(b.v if b.t == "a" else [b])
    return J("a", items)


@register("JSON_MERGE_PRESERVE", "JSON_MERGE", ret=STR, args=(2, None))
def json_merge_preserve(*docs) -> JsonText | None:
    """Merge documents: arrays are concatenated, objects merged key by key."""
    parsed = []
    for d in docs:
        j = _doc(d)
        if j is None:
            return None
        parsed.append(j)
    acc = parsed[0]
    for j in parsed[1:]:
        acc = _merge(acc, j)
    return JsonText(nice(acc))


def _patch(target: J | None, patch: J) -> J:
    """RFC 7396: an object patches member by member (a null removes the member, a new key
    comes last); anything else replaces the target."""
    if patch.t != "o":
        return patch
    members = list(target.v) if target is not None and target.t == "o" else []
    for raw, key, value in patch.v:
        k = _key((raw, key, value))
        at = next((i for i, m in enumerate(members) if _key(m) == k), None)
        if value.t == "z":
            if at is not None:
                del members[at]
        elif at is None:
            members.append((raw, key, _patch(None, value)))
        else:
            members[at] = (members[at][0], members[at][1], _patch(members[at][2], value))
    return J("o", members)


@register("JSON_MERGE_PATCH", ret=STR, args=(2, None), strict=False)
def json_merge_patch(*docs) -> JsonText | None:
    """Merge documents as RFC 7396 patches, each onto the result so far."""
    acc = _doc(docs[0])
    for d in docs[1:]:
        j = _doc(d)
        if j is None or (j.t == "o" and acc is None):
            acc = None  # a NULL patch, or an object patch onto NULL: NULL
        else:
            acc = _patch(acc, j)  # (anything but an object replaces, NULL too)
    return None if acc is None else JsonText(nice(acc))


# --- JSON_SEARCH ---------------------------------------------------------------------------

_like_cache: dict[tuple, re.Pattern] = {}


def _like_regex(pattern: str, esc: str, ci: bool) -> re.Pattern:
    key = (pattern, esc, ci)
    rx = _like_cache.get(key)
    if rx is None:
        out = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == esc and i + 1 < len(pattern):
                out.append(re.escape(pattern[i + 1]))
                i += 2
                continue
            out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
            i += 1
        rx = re.compile("".join(out) + r"\Z", re.S | (re.I if ci else 0))
        if len(_like_cache) > 4096:
            _like_cache.clear()
        _like_cache[key] = rx
    return rx


def _path_text(bp: list) -> str:
    out = ["$"]
    for is_key, v, _ in bp:
        out.append(f".{v}" if is_key else f"[{v}]")
    return "".join(out)


@register("JSON_SEARCH", ret=STR, args=(3, None), strict=False, collation=True)
def json_search(js, one_or_all, search, esc=None, *paths, coll=None) -> JsonText | None:
    """Paths of the scalars that match a LIKE pattern ('one': the first, 'all': every)."""
    if js is None or search is None or one_or_all is None:
        return None
    mode_one = _one_or_all(one_or_all)
    if mode_one is None:
        return None
    ps = []
    for p in paths:
        if p is None:
            return None
        pp = _path(p)
        if pp is None:
            return None
        ps.append(pp)
    doc = _doc(js)
    if doc is None:
        return None
    e = "\\" if esc is None or to_str(esc) == "" else to_str(esc)[0]
    ci = coll is not None and not coll.case_sensitive
    rx = _like_regex(to_str(search), e, ci)
    found: list[str] = []
    for bp, sizes, node in walk(doc):
        if not node.scalar():
            continue
        if ps and not any(_compare(pp.steps, 0, bp, 0, node.t, sizes, True) >= 0 for pp in ps):
            continue
        text = unescape(node.v) if node.t == "s" else node.v
        if rx.match(text):
            found.append(_path_text(bp))
            if mode_one:
                break
    if not found:
        return None
    if len(found) == 1:
        return JsonText(f'"{found[0]}"')
    return JsonText("[" + ", ".join(f'"{x}"' for x in found) + "]")

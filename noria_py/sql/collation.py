"""String collations with MySQL's semantics: equality and order of strings, as sort keys.

A :class:`Collation` turns a string into a key: two strings are equal under the collation exactly
when their keys are equal, and keys order like the collation orders the strings. Everything that
compares strings uses keys: comparisons, IN, LIKE, ORDER BY, GROUP BY, DISTINCT, MIN/MAX, UNION,
join keys, reader keys, so a cached lookup of ``'BOB'`` finds ``'bob'``.

``PAD SPACE`` collations (MariaDB's ``utf8mb4_general_ci``, ``utf8mb4_unicode_ci``,
``utf8mb4_bin``) ignore trailing spaces; ``NO PAD`` ones (MySQL 8's ``utf8mb4_0900_ai_ci``) do not.

How keys are made. Each character has a sequence of (level-1) weights, MariaDB's own, read from
``collation_data`` (generated from a live MariaDB by ``gen_collation_data``): ``general_ci`` gives
every BMP character one weight (its case- and accent-folded form, ``'ß'`` weighs like ``'S'``)
and every supplementary character the weight of U+FFFD; the UCA collations give 0 to 8 weights
(``'ß'`` = ``'ss'``, combining marks weigh nothing); ``bin`` weighs a character by its code
point. A key is the string of the weights (one ``chr`` per weight). ``NO PAD`` keys compare as
they are. ``PAD SPACE`` compares two strings as if the shorter were padded with spaces, which is
not the same as stripping trailing spaces when a weight below the space's follows (``'a' >
'a\\t'``). So a ``PAD SPACE`` key strips trailing space weights and ends in a terminator ``T``
just below the space weight; each weight below the space, with the spaces right before it, is
rewritten into a short code below ``T`` (see :func:`_pad_encode`). Strings without control
characters skip that rewrite: their key is the stripped weights plus ``T``.

Exact (checked against MariaDB 10.11 by ``tests/test_collation.py``): ``utf8mb4_general_ci``,
``utf8mb4_general_nopad_ci``, ``utf8mb4_unicode_ci`` (UCA 4.0.0), ``utf8mb4_unicode_520_ci``,
their ``nopad`` twins, ``utf8mb4_bin``, ``utf8mb4_nopad_bin``, ``binary``, and the ``utf8mb3_`` /
``utf8_`` aliases (same weights). ``uca1400_ai_ci`` / ``uca1400_nopad_ai_ci`` weigh single
characters exactly but do not model UCA 14's contractions (Thai/Lao prevowels, decomposed
Cyrillic short i, Tibetan, some Indic vowel pairs, ``L·``). Approximations: MySQL 8's
``utf8mb4_0900_ai_ci`` (UCA 9.0.0, NO PAD; MariaDB 10.11 lacks it) is ``uca1400_nopad_ai_ci``;
``latin1_swedish_ci`` / ``latin1_general_ci`` are ``utf8mb4_general_ci`` and ``latin1_bin`` is
``utf8mb4_bin``.
"""

from __future__ import annotations

import base64
import codecs
import re
import threading
import zlib
from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache

from . import collation_data

DEFAULT = "utf8mb4_general_ci"

# ---------------------------------------------------------------------------------------------
# weight tables
# ---------------------------------------------------------------------------------------------


def _decode_ranges(text: str) -> tuple[list[int], list[tuple[int, int, tuple[int, ...]]]]:
    """(starts, [(count, step, weights)]) of a table in ``collation_data``."""
    raw = zlib.decompress(base64.b85decode(text))
    vals: list[int] = []
    n = shift = 0
    for b in raw:
        n |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
        else:
            vals.append(n)
            n = shift = 0
    starts: list[int] = []
    ranges: list[tuple[int, int, tuple[int, ...]]] = []
    i = end = 0
    while i < len(vals):
        gap, count, step, nw = vals[i : i + 4]
        w = tuple(vals[i + 4 : i + 4 + nw])
        i += 4 + nw
        start = end + gap
        starts.append(start)
        ranges.append((count, step, w))
        end = start + count
    return starts, ranges


class _Weights(dict):
    """``{code point: weight string}`` of one table in ``collation_data``, filled on demand: a
    ``str.translate`` table. Code points the table lacks (surrogates) weigh like U+FFFD."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.starts: list[int] | None = None
        self.ranges: list[tuple[int, int, tuple[int, ...]]] = []

    def __missing__(self, cp: int) -> str:
        if self.starts is None:
            self.starts, self.ranges = _decode_ranges(getattr(collation_data, self.name))
        i = bisect_right(self.starts, cp) - 1
        if i < 0 or cp >= self.starts[i] + self.ranges[i][0]:
            w = self[0xFFFD] if cp != 0xFFFD else "\ufffd"
        else:
            count, step, ws = self.ranges[i]
            if step and ws:
                ws = (*ws[:-1], ws[-1] + step * (cp - self.starts[i]))
            w = "".join(map(chr, ws))
        self[cp] = w
        return w


_TABLES: dict[str, _Weights] = {}


def _table(name: str) -> _Weights:
    t = _TABLES.get(name)
    if t is None:
        t = _TABLES[name] = _Weights(name)
    return t


# ---------------------------------------------------------------------------------------------
# PAD SPACE keys
# ---------------------------------------------------------------------------------------------

_KBASE = 0x1E  # run lengths of spaces are written in base 30 with digits chr(0) .. chr(0x1D)


def _pad_encode(w: str, sp: str) -> str:
    """The PAD SPACE key of the weight string ``w`` (trailing spaces already stripped).

    Group the weights into tokens: ``k`` spaces then one non-space weight ``c``; the end of the
    string is a token of infinitely many spaces. Padded comparison orders tokens: those with
    ``c`` below the space by (k, c), then the end, then those with ``c`` above the space by (k
    descending, c). Tokens with ``c`` above the space stay as they are (k spaces, then c); the
    end becomes ``T = chr(ord(sp) - 1)``; a token with ``c`` below the space becomes ``k`` in an
    order-preserving prefix-free code over ``chr(0) .. chr(0x1E)`` followed by ``c``.
    """
    out = []
    k = 0
    for c in w:
        if c == sp:
            k += 1
            continue
        if c > sp:
            if k:
                out.append(sp * k)
            out.append(c)
        else:
            q, r = divmod(k, _KBASE)
            out.append(chr(_KBASE) * q + chr(r) + c)
        k = 0
    out.append(chr(ord(sp) - 1))
    return "".join(out)


def _make_key(
    weigh: Callable[[str], str], space: int, pad_space: bool, fast: Callable[[str], str] | None
):
    """The key function of a collation weighing strings with ``weigh``; ``fast`` (optional)
    weighs printable ASCII strings faster."""
    sp = chr(space)
    term = chr(space - 1)
    low = re.compile(f"[\\x00-\\U{space - 1:08x}]")

    if not pad_space:
        if fast is None:
            return weigh

        def nopad_key(s: str) -> str:
            if s.isascii() and s.isprintable():
                return fast(s)
            return weigh(s)

        return nopad_key

    if fast is None:
        fast = weigh

    def pad_key(s: str) -> str:
        if s.isascii() and s.isprintable():
            return fast(s).rstrip(sp) + term
        w = weigh(s).rstrip(sp)
        if s.isprintable() or low.search(w) is None:  # no weight below the space's
            return w + term
        return _pad_encode(w, sp)

    return pad_key


# ---------------------------------------------------------------------------------------------
# collations
# ---------------------------------------------------------------------------------------------


class Collation:
    """One collation: ``key(s)`` is a sort key (a ``str``, or ``bytes`` for ``binary``)."""

    __slots__ = (
        "name",
        "pad_space",
        "case_sensitive",
        "key",
        "sort_key",
        "_build",
        "_unit",
        "_unit_ids",
    )

    def __init__(
        self,
        name: str,
        key: Callable[[str], str | bytes] | None,
        pad_space: bool,
        case_sensitive: bool,
        unit: Callable[[str], str] | None = None,
        build: Callable[[], Callable[[str], str]] | None = None,
    ):
        self.name = name
        self.pad_space = pad_space
        self.case_sensitive = case_sensitive
        # without a key, build() makes it when first needed (so unused tables never load)
        self._build = build
        self.key = self.sort_key = key if key is not None else self._first_key
        # unit(ch): what LIKE compares one character by (its weights); None: the character itself
        self._unit = unit
        self._unit_ids: dict[str, str] = {}

    def _first_key(self, s: str):
        self.key = self.sort_key = self._build()
        return self.key(s)

    def eq(self, a: str, b: str) -> bool:
        """``a = b`` under the collation."""
        return self.key(a) == self.key(b)

    def cmp(self, a: str, b: str) -> int:
        """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` (the sign of ``STRCMP``)."""
        ka, kb = self.key(a), self.key(b)
        return (ka > kb) - (ka < kb)

    def like(self, value: str, pattern: str, escape: str | None = "\\") -> bool:
        """``value LIKE pattern ESCAPE escape`` under the collation; see :func:`like`."""
        return like(self, value, pattern, escape)

    def __repr__(self) -> str:
        return f"Collation({self.name})"


def _ascii_fast(tbl: _Weights) -> Callable[[str], str] | None:
    """Weighs a printable ASCII string through a 256-character ``charmap`` table, when each
    printable ASCII character has exactly one weight."""
    ws = [tbl[cp] for cp in range(0x20, 0x7F)]
    if any(len(w) != 1 for w in ws):
        return None
    table = "\ufffe" * 0x20 + "".join(ws) + "\ufffe" * 0x81
    decode = codecs.charmap_decode

    def fast(s: str) -> str:
        return decode(s.encode("ascii"), None, table)[0]

    return fast


def _weighed(table: str, pad_space: bool):
    """(build, unit) of a collation weighing characters by a table of ``collation_data``:
    ``build()`` makes the key function (reading the table's ASCII part), on first use."""
    tbl = _table(table)
    space = collation_data.SPACE_WEIGHTS[table]

    def weigh(s: str) -> str:
        return s.translate(tbl)

    def unit(ch: str) -> str:
        return tbl[ord(ch)]

    if table == "UNICODE_CI":  # its LIKE tells supplementary characters apart by code point

        def unit(ch: str) -> str:
            return ch if ch > "\uffff" else tbl[ord(ch)]

    if table == "GENERAL_CI":  # general_ci weighs ASCII like str.upper (checked by the tests)
        if not pad_space:
            return (lambda: _make_key(weigh, space, False, str.upper)), unit
        slow = _make_key(weigh, space, True, None)

        def general_key(s: str) -> str:
            if s.isascii() and s.isprintable():
                return s.upper().rstrip(" ") + "\x1f"
            return slow(s)

        return (lambda: general_key), unit

    def build() -> Callable[[str], str]:
        return _make_key(weigh, space, pad_space, _ascii_fast(tbl))

    return build, unit


def _binary_key(s) -> bytes:
    if isinstance(s, (bytes, bytearray)):
        return bytes(s)
    return s.encode("utf-8", "surrogatepass")


def _mk(name: str, pair, pad_space: bool, case_sensitive: bool) -> Collation:
    build, unit = pair
    return Collation(name, None, pad_space, case_sensitive, unit, build)


COLLATIONS: dict[str, Collation] = {}


def _register(c: Collation, *aliases: str) -> None:
    COLLATIONS[c.name] = c
    for a in aliases:
        COLLATIONS[a] = c


_register(
    Collation("utf8mb4_bin", _make_key(str, 0x20, True, None), True, True),
    "utf8mb3_bin",
    "utf8_bin",
    "latin1_bin",
)
_register(
    Collation("utf8mb4_nopad_bin", str, False, True),
    "utf8mb3_nopad_bin",
    "utf8_nopad_bin",
    "latin1_nopad_bin",
)
_register(
    _mk("utf8mb4_general_ci", _weighed("GENERAL_CI", True), True, False),
    "utf8mb3_general_ci",
    "utf8_general_ci",
)
_register(
    _mk("utf8mb4_general_nopad_ci", _weighed("GENERAL_CI", False), False, False),
    "utf8mb3_general_nopad_ci",
    "utf8_general_nopad_ci",
)
_register(
    _mk("utf8mb4_unicode_ci", _weighed("UNICODE_CI", True), True, False),
    "utf8mb3_unicode_ci",
    "utf8_unicode_ci",
)
_register(
    _mk("utf8mb4_unicode_nopad_ci", _weighed("UNICODE_CI", False), False, False),
    "utf8mb3_unicode_nopad_ci",
    "utf8_unicode_nopad_ci",
)
_register(
    _mk("utf8mb4_unicode_520_ci", _weighed("UNICODE_520_CI", True), True, False),
    "utf8mb3_unicode_520_ci",
    "utf8_unicode_520_ci",
)
_register(
    _mk("utf8mb4_unicode_520_nopad_ci", _weighed("UNICODE_520_CI", False), False, False),
    "utf8mb3_unicode_520_nopad_ci",
    "utf8_unicode_520_nopad_ci",
)
_register(
    _mk("uca1400_ai_ci", _weighed("UCA1400_AI_CI", True), True, False),
    "utf8mb4_uca1400_ai_ci",
    "utf8mb3_uca1400_ai_ci",
)
# MySQL 8's default (UCA 9.0.0, NO PAD, accent- and case-insensitive). MariaDB 10.11 lacks it;
# it is approximated by MariaDB's uca1400_nopad_ai_ci weights (UCA 14.0.0, NO PAD), the
# collation MariaDB 11.4.5+ itself maps utf8mb4_0900_ai_ci to. Characters that UCA 14.0.0 added
# or reweighed since 9.0.0 may order differently from MySQL 8.
_register(
    _mk("uca1400_nopad_ai_ci", _weighed("UCA1400_AI_CI", False), False, False),
    "utf8mb4_uca1400_nopad_ai_ci",
    "utf8mb4_0900_ai_ci",
    "utf8mb3_0900_ai_ci",
)
# latin1: MariaDB's latin1_swedish_ci folds like general_ci on the characters latin1 holds,
# except a few letters; latin1_general_ci likewise. Both map to general_ci here (approximation).
_register(COLLATIONS["utf8mb4_general_ci"], "latin1_swedish_ci", "latin1_general_ci")
_register(Collation("binary", _binary_key, False, True))


def get(name: str) -> Collation:
    """The collation named ``name`` (case-insensitive); KeyError names it when unknown."""
    c = COLLATIONS.get(name.lower())
    if c is None:
        raise KeyError(name)
    return c


def default() -> Collation:
    """MariaDB 10.11's default collation, ``utf8mb4_general_ci``."""
    return COLLATIONS[DEFAULT]


# ---------------------------------------------------------------------------------------------
# LIKE
# ---------------------------------------------------------------------------------------------


class _UnitTable(dict):
    """``{code point: the character naming its LIKE class}``, filled on demand: a
    ``str.translate`` table (``_units``). Characters of one class (equal LIKE units) share
    their name."""

    __slots__ = ("coll",)

    def __init__(self, coll: Collation):
        super().__init__()
        self.coll = coll

    def __missing__(self, cp: int) -> str:
        with _UNIT_LOCK:  # one name per class, whichever thread meets it first
            ids = self.coll._unit_ids
            u = self.coll._unit(chr(cp))
            i = ids.get(u)
            if i is None:
                i = ids[u] = chr(len(ids))
            self[cp] = i
            return i


_UNIT_TABLES: dict = {}
_UNIT_LOCK = threading.Lock()


def _units(coll: Collation, s: str) -> str:
    """``s`` with each character replaced by one character naming its LIKE class."""
    if coll._unit is None:
        return s
    table = _UNIT_TABLES.get(coll.name)
    if table is None:
        table = _UNIT_TABLES[coll.name] = _UnitTable(coll)
    return s.translate(table)


@lru_cache(maxsize=4096)
def _like_regex(coll: Collation, pattern: str, escape: str | None) -> re.Pattern:
    parts = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if escape and ch == escape and i + 1 < n:
            parts.append(re.escape(_units(coll, pattern[i + 1])))
            i += 2
            continue
        if ch == "%":
            parts.append(".*")
        elif ch == "_":
            parts.append(".")
        else:
            parts.append(re.escape(_units(coll, ch)))
        i += 1
    return re.compile("".join(parts), re.DOTALL)


def like(coll: Collation | str, value: str, pattern: str, escape: str | None = "\\") -> bool:
    """``value LIKE pattern`` under ``coll``: MySQL's LIKE compares character by character by
    weights (``'ß' LIKE 'ss'`` is false even where ``'ß' = 'ss'``), ``_`` matches one character,
    ``%`` any run, trailing spaces count, and an escape before any character makes it literal
    (a trailing escape is itself literal)."""
    if isinstance(coll, str):
        coll = get(coll)
    if coll.name == "binary":
        return _like_regex(coll, pattern, escape).fullmatch(value) is not None
    return _like_regex(coll, pattern, escape).fullmatch(_units(coll, value)) is not None


# ---------------------------------------------------------------------------------------------
# The engine's collation, and string keys for state
# ---------------------------------------------------------------------------------------------


class CK(str):
    """A string already turned into its collation key (so keying it again changes nothing).

    ``orig`` is a spelling it was made from: base storage looks the key up by it (its text
    columns compare under the same collation, so any spelling finds every row of the key)."""

    __slots__ = ("orig",)


_current: Collation | None = None
_current_key: Callable | None = None


def current() -> Collation:
    """The collation strings compare by in this process (MariaDB's default unless set)."""
    global _current
    if _current is None:
        _current = default()
    return _current


def set_current(name: str) -> Collation:
    """Make ``name`` the collation of every comparison, key and order in this process.

    The dataflow keys its state by collation keys, so engines of one process share it; a
    different collation while another is in use is refused by the caller (``Engine``)."""
    global _current, _current_key
    coll = get(name)
    _current = coll
    _current_key = None
    _CK_CACHE.clear()
    return coll


_CK_CACHE: dict = {}  # recently keyed strings (keys are hot: the same titles, names, slugs)


def ck(v):
    """``v`` as a key: a string becomes its collation key (a :class:`CK`), anything else is
    itself (a :class:`KeyCut` too). Idempotent."""
    if isinstance(v, str) and type(v) is not CK and type(v) is not KeyCut:
        out = _CK_CACHE.get(v)
        if out is not None:
            return out
        global _current_key
        k = _current_key
        if k is None:
            c = current()
            c.key("")  # builds the weight table: from then on c.key is the real function
            k = _current_key = c.key
        out = CK(k(v))
        out.orig = v
        if len(_CK_CACHE) >= 200_000:
            _CK_CACHE.clear()
        _CK_CACHE[v] = out
        return out
    return v


def ck_tuple(key: tuple) -> tuple:
    """A key tuple with every string keyed (the tuple itself when it has no strings)."""
    for v in key:
        if isinstance(v, str) and type(v) is not CK:
            return tuple([ck(x) for x in key])
    return key


# ---------------------------------------------------------------------------------------------
# Ranges of keys: LIKE prefixes
# ---------------------------------------------------------------------------------------------


class KeyCut(CK):
    """A position in the key space of the engine's collation that need not be any string's key:
    an end of the range of keys a ``LIKE`` prefix allows (``dataflow/intervals.py`` cuts hold
    it as they hold a :class:`CK`, and it compares with keys as the string it is).

    Base storage compares real strings, so it is given, for SQL, ``low`` (a string whose key is
    at or below this position, or None: none is known) and ``high`` (one whose key is at or
    above it, or None), and keeps exactly the rows whose keys lie on the right side of the
    position itself. ``label`` says what it is, for EXPLAIN and messages."""

    __slots__ = ("low", "high", "label")

    def __repr__(self) -> str:
        return self.label


def _key_cut(key: str, low, high, label: str) -> KeyCut:
    k = KeyCut(key)
    k.orig = None
    k.low, k.high, k.label = low, high, label
    return k


def like_prefix(pattern: str, escape: str | None = "\\") -> str:
    """The characters every value ``LIKE pattern`` starts with, as far as the pattern says so
    literally: up to its first ``%`` or ``_`` that is not escaped, escapes taken out (read as
    ``like`` reads them: an escape before any character makes it literal, a trailing escape is
    itself literal)."""
    return like_split(pattern, escape)[0]


def like_split(pattern: str, escape: str | None = "\\") -> tuple[str, str]:
    """``(prefix, rest)``: ``like_prefix(pattern)`` and the pattern after it (from its first
    unescaped wildcard on, as written)."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if escape and ch == escape and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch == "%" or ch == "_":
            break
        out.append(ch)
        i += 1
    return "".join(out), pattern[i:]


def like_prefix_matcher(prefix: str, exact: bool):
    """``value -> bool`` for ``value LIKE pattern`` where the pattern is the literal ``prefix``
    followed by only ``%`` (or, ``exact``, by nothing): the value's first characters compare
    with the prefix's by their LIKE units, as ``like`` compares them, without a regex over the
    whole value."""
    coll = current()
    n = len(prefix)
    want = _units(coll, prefix)
    if exact:
        return lambda v: len(v) == n and _units(coll, v) == want
    return lambda v: _units(coll, v[:n]) == want


def _key_after(key: str) -> str | None:
    """The smallest string above every string that starts with ``key`` (None: there is none)."""
    k = key.rstrip("\U0010ffff")
    if not k:
        return None
    return k[:-1] + chr(ord(k[-1]) + 1)


def _string_at_or_above(prefix: str, bound: str):
    """A string whose key (under the engine's collation) is at or above ``bound``, made by
    raising one character of ``prefix`` and cutting it there (as close above as a few tries
    find; None when none is found): base storage's upper bound for a range ending at
    ``bound``."""
    for i in range(len(prefix) - 1, -1, -1):
        c = prefix[i]
        tries = []
        kc = ck(c)
        for base in (c, c.lower(), c.upper(), kc[0] if kc else c):
            if len(base) != 1:
                continue  # ('ß'.upper() is 'SS')
            o = ord(base) + 1
            if o <= 0x10FFFF and not 0xD800 <= o <= 0xDFFF:
                tries.append(chr(o))
        tries.append("\U0010ffff")
        for t in tries:
            s = prefix[:i] + t
            if ck(s) >= bound:
                return s
    return None


def _string_at_or_below(prefix: str, bound: str):
    """A string whose key is at or below ``bound``: ``prefix`` cut as short as needed (None when
    not even the empty string is): base storage's lower bound for a range starting at
    ``bound``."""
    for i in range(len(prefix), -1, -1):
        s = prefix[:i]
        if ck(s) <= bound:
            return s
    return None


def prefix_key_range(prefix: str):
    """``(lo, hi)``: the keys (under the engine's collation) of the strings whose first
    characters match ``prefix`` character by character as ``LIKE`` compares them lie in
    ``[lo, hi)`` (each a :class:`KeyCut`; None: unbounded on that side). Both None when the
    prefix says nothing about the order (it is empty, or weighs only spaces).

    Why it holds. ``LIKE`` compares a character with a pattern character by its weights (its
    LIKE unit, which, for every collation here, is the character's weights or finer), and a
    string's weights are its characters' weights in a row; so every such string's weights
    start with the prefix's weights ``W``. A ``NO PAD`` key is the weights: it starts with
    ``W``, the prefix's own key. A ``PAD SPACE`` key encodes the weights token by token (a run
    of spaces and the weight after it; trailing spaces dropped; then a terminator): the tokens
    of ``W`` up to its last weight that is not a space are complete, so every such key starts
    with their encoding, which is the prefix's key without its terminator (the prefix's own
    trailing spaces are where a key encodes nothing yet). Keys starting with ``E`` lie in
    ``[E, E')`` where ``E'`` is ``E`` with its last character raised by one."""
    coll = current()
    if coll.name == "binary":
        return None, None
    key = ck(prefix)
    e = str(key)[:-1] if coll.pad_space else str(key)
    if not e:
        return None, None
    after = _key_after(e)
    label = f"prefix {prefix!r}"
    lo = _key_cut(e, _string_at_or_below(prefix, e), prefix, label)
    if after is None:
        return lo, None
    hi = _key_cut(after, prefix, _string_at_or_above(prefix, after), f"after {label}")
    return lo, hi

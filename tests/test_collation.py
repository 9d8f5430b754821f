"""Collations against the MariaDB oracle: STRCMP, ``=``, LIKE and the per-character weights."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noria_py.sql import collation as C

# (our collation, MariaDB's collation, MariaDB's per-character twin for WEIGHT_STRING)
TEXT_COLLATIONS = [
    "utf8mb4_general_ci",
    "utf8mb4_general_nopad_ci",
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_nopad_ci",
    "utf8mb4_unicode_520_ci",
    "utf8mb4_unicode_520_nopad_ci",
    "utf8mb4_bin",
    "utf8mb4_nopad_bin",
]
# UCA 14.0.0 (our stand-in for MySQL's utf8mb4_0900_ai_ci): exact per character, but its
# contractions (Thai/Lao prevowels, Tibetan, Myanmar, decomposed Cyrillic short i, ...) are not
# modelled, so its strings avoid those scripts and marks.
UCA1400 = ["uca1400_ai_ci", "uca1400_nopad_ai_ci"]

# mixed case, accents (precomposed and combining), spaces and control characters (PAD SPACE pads
# with spaces: 'a' > 'a\t'), ß, ligatures, Greek final sigma, Cyrillic, CJK, emoji, NBSP, and
# characters around the ASCII/Latin-1 edges
ALPHABET = list("aAbBeEéÉèêsSzZiIıİ ß\t\n\x00\x7f\x85_%\\0019-~") + [
    "ss",
    "\u0301",
    "\u0300",
    "\u00a0",
    "\u2028",
    "ﬁ",
    "ǅ",
    "σ",
    "ς",
    "Σ",
    "й",
    "Й",
    "ж",
    "中",
    "文",
    "😀",
    "😁",
    "\U00020000",
    "\ufffd",
    "\uffff",
    "Å",
    "Å",
    "æ",
    "Æ",
    "ø",
    "Ø",
    "ü",
    "y",
    "ŉ",
    "ǰ",
    "Ω",
    "Ω",
]
ALPHABET_1400 = ALPHABET


def _text(alphabet: list[str]):
    piece = st.sampled_from(alphabet) | st.characters(blacklist_categories=("Cs",))
    return st.lists(piece, max_size=7).map("".join)


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _strcmp_eq(oracle, colls: list[str], a: str, b: str) -> list[tuple[int, int]]:
    cols = []
    params: list[str] = []
    for c in colls:
        x = f"CONVERT(%s USING utf8mb4) COLLATE {c}"
        cols.append(f"STRCMP({x}, {x}), {x} = {x}")
        params += [a, b, a, b]
    rows, _ = oracle.query("SELECT " + ", ".join(cols), params)
    r = rows[0]
    return [(int(r[2 * i]), int(r[2 * i + 1])) for i in range(len(colls))]


def _check_pair(oracle, colls: list[str], a: str, b: str) -> None:
    got = _strcmp_eq(oracle, colls, a, b)
    for c, (strcmp, eq) in zip(colls, got):
        coll = C.get(c)
        assert coll.cmp(a, b) == strcmp, (c, a, b)
        assert coll.cmp(b, a) == -strcmp, (c, b, a)
        assert int(coll.eq(a, b)) == eq, (c, a, b)
        assert hash(coll.key(a)) is not None


# ---------------------------------------------------------------------------------------------
# hand-picked cases
# ---------------------------------------------------------------------------------------------

CASES = [
    ("a", "A"),
    ("a", "a "),
    ("a", "a  "),
    ("a ", "a\t"),
    ("a", "a\t"),
    ("a", "a \t"),
    ("a", "a  b"),
    ("a", "a\x00"),
    ("a\x00", "a"),
    ("", " "),
    ("", "\t"),
    ("e", "é"),
    ("E", "é"),
    ("e", "e\u0301"),
    ("é", "e\u0301"),
    ("ß", "s"),
    ("ß", "ss"),
    ("ß", "SS"),
    ("ß", "st"),
    ("ss", "st"),
    ("😀", "😁"),
    ("😀", "\ufffd"),
    ("😀", "中"),
    ("a😀", "a😁"),
    ("ﬁ", "fi"),
    ("Å", "Å"),
    ("ı", "I"),
    ("İ", "i"),
    ("σ", "ς"),
    ("Straße", "STRASSE"),
    ("a\u00a0", "a"),
    ("a\u2028", "a"),
    ("Ω", "Ω"),
    ("abc", "ab"),
    ("ab", "ab\x7f"),
]


@pytest.mark.parametrize("a,b", CASES)
def test_hand_picked(mariadb_oracle, a, b):
    _check_pair(mariadb_oracle, TEXT_COLLATIONS, a, b)
    _check_pair(mariadb_oracle, UCA1400, a, b)


def test_known_facts():
    g = C.get("utf8mb4_general_ci")
    assert g.eq("a", "A") and g.eq("a", "a ") and g.eq("e", "é") and g.eq("ß", "s")
    assert not g.eq("ß", "ss") and g.eq("😀", "😁")
    u = C.get("utf8mb4_unicode_ci")
    assert u.eq("ß", "ss") and not u.eq("ß", "s") and u.eq("😀", "😁")
    assert not C.get("utf8mb4_unicode_520_ci").eq("😀", "😁")
    assert C.get("utf8mb4_bin").eq("a", "a ") and not C.get("utf8mb4_nopad_bin").eq("a", "a ")
    assert not C.get("utf8mb4_0900_ai_ci").eq("a", "a ")
    assert C.get("utf8mb4_0900_ai_ci").eq("a", "Á")
    assert C.get("binary").key("a") < C.get("binary").key("b")
    assert C.get("UTF8_GENERAL_CI") is C.get("utf8mb3_general_ci") is C.default()
    assert C.get("utf8mb4_bin").sort_key("x") == C.get("utf8mb4_bin").key("x")
    with pytest.raises(KeyError):
        C.get("no_such_collation")


def test_general_ci_ascii_is_upper():
    g = C.get("utf8mb4_general_ci")
    t = C._table("GENERAL_CI")
    assert all(t[cp] == chr(cp).upper() for cp in range(128))
    s = "".join(map(chr, range(32, 127)))
    # the ASCII fast path and the general path agree
    slow = C._make_key(lambda x: x.translate(t), 32, True, None)
    for x in (s, s + "  ", " a b ", ""):
        assert g.key(x) == slow(x)


# ---------------------------------------------------------------------------------------------
# per-character weights: a sample of code points against WEIGHT_STRING
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table,mariadb",
    [
        ("GENERAL_CI", "utf8mb4_general_nopad_ci"),
        ("UNICODE_CI", "utf8mb4_unicode_nopad_ci"),
        ("UNICODE_520_CI", "utf8mb4_unicode_520_nopad_ci"),
        ("UCA1400_AI_CI", "uca1400_nopad_ai_ci"),
    ],
)
def test_weights_sample(mariadb_oracle, table, mariadb):
    rnd = random.Random(table)
    cps = sorted(
        set(range(0x300))
        | {rnd.randrange(0x10000) for _ in range(3000)}
        | {rnd.randrange(0x110000) for _ in range(1000)}
    )
    cps = [cp for cp in cps if not 0xD800 <= cp <= 0xDFFF]
    rows, _ = mariadb_oracle.query(
        "SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) "
        f"COLLATE {mariadb})) FROM seq_0_to_1114111 WHERE seq IN ({','.join(map(str, cps))})"
    )
    t = C._table(table)
    for cp, hx in rows:
        assert t[int(cp)].encode("utf-16-be", "surrogatepass").hex().upper() == hx, hex(cp)
    assert len(rows) == len(cps)


@pytest.mark.parametrize("table", ["GENERAL_CI", "UNICODE_CI", "UNICODE_520_CI", "UCA1400_AI_CI"])
def test_low_weights_are_unprintable(table):
    """PAD SPACE keys skip the below-the-space rewrite for printable strings: so every code point
    with a weight below the space's must be unprintable."""
    from noria_py.sql import collation_data

    sp = collation_data.SPACE_WEIGHTS[table]
    starts, ranges = C._decode_ranges(getattr(collation_data, table))
    for start, (count, _step, ws) in zip(starts, ranges):
        if ws and min(ws) < sp:  # with step 1 the last weight only grows: check every cp
            for cp in range(start, start + count):
                if any(ord(c) < sp for c in C._table(table)[cp]):
                    assert not chr(cp).isprintable(), hex(cp)


# ---------------------------------------------------------------------------------------------
# property tests: STRCMP, =, LIKE
# ---------------------------------------------------------------------------------------------


@settings(max_examples=3 * settings.default.max_examples // 2)
@given(a=_text(ALPHABET), b=_text(ALPHABET))
def test_strcmp_and_eq(mariadb_oracle, a, b):
    _check_pair(mariadb_oracle, TEXT_COLLATIONS, a, b)


@settings(max_examples=settings.default.max_examples)
@given(a=_text(ALPHABET), data=st.data())
def test_strcmp_near(mariadb_oracle, a, data):
    """Pairs that differ a little (case, accents, trailing spaces/tabs), so ties are common."""
    edits = st.sampled_from(["upper", "lower", "pad", "tab", "nfd", "drop", "same"])
    b = a
    for e in data.draw(st.lists(edits, min_size=1, max_size=3)):
        if e == "upper":
            b = b.upper()
        elif e == "lower":
            b = b.lower()
        elif e == "pad":
            b += " " * data.draw(st.integers(1, 3))
        elif e == "tab":
            b += data.draw(st.sampled_from(["\t", " \t", "\x00", " a"]))
        elif e == "nfd":
            import unicodedata

            b = unicodedata.normalize("NFD", b)
        elif e == "drop" and b:
            b = b[:-1]
    _check_pair(mariadb_oracle, TEXT_COLLATIONS, a, b)


_TEXT_1400 = st.lists(st.sampled_from(ALPHABET_1400), max_size=7).map("".join)


@settings(max_examples=settings.default.max_examples)
@given(a=_TEXT_1400, b=_TEXT_1400)
def test_strcmp_uca1400(mariadb_oracle, a, b):
    """Only the fixed alphabet: random characters could form UCA 14 contractions."""
    _check_pair(mariadb_oracle, UCA1400, a, b)


def test_binary(mariadb_oracle):
    rnd = random.Random(7)
    coll = C.get("binary")
    for _ in range(60):
        a = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(4)))
        b = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(4)))
        got = mariadb_oracle.scalar(
            "SELECT STRCMP(CAST(CONVERT(%s USING utf8mb4) AS BINARY), "
            "CAST(CONVERT(%s USING utf8mb4) AS BINARY))",
            (a, b),
        )
        assert coll.cmp(a, b) == int(got), (a, b)


LIKE_ALPHABET = ALPHABET + ["%", "%", "_", "_", "\\%", "\\_", "\\\\"]


_SWAPS = {"a": "A", "e": "é", "s": "ß", "ß": "s", "é": "E", "ς": "σ", "😀": "😁", " ": "\t"}


@st.composite
def _pattern_for(draw, value: str) -> str:
    """A LIKE pattern derived from ``value`` (so it often matches): characters kept, case- or
    accent-swapped, turned into ``_`` or ``%``, ``%`` inserted, escapes, a few dropped."""
    out = []
    for ch in value:
        op = draw(st.sampled_from(["keep", "keep", "swap", "_", "%", "ins%", "drop", "esc"]))
        if op == "keep":
            out.append(ch)
        elif op == "swap":
            out.append(_SWAPS.get(ch, ch.swapcase()))
        elif op in ("_", "%"):
            out.append(op)
        elif op == "ins%":
            out.append("%" + ch)
        elif op == "esc":
            out.append("\\" + ch)
    if draw(st.booleans()):
        out.append(draw(st.sampled_from(["%", "_", " ", "a", "\\"])))
    return "".join(out)


@settings(max_examples=2 * settings.default.max_examples)
@given(data=st.data())
def test_like(mariadb_oracle, data):
    value = data.draw(_text(ALPHABET))
    pattern = data.draw(
        _pattern_for(value) | st.lists(st.sampled_from(LIKE_ALPHABET), max_size=6).map("".join)
    )
    colls = TEXT_COLLATIONS
    cols = []
    params: list[str] = []
    for c in colls:
        cols.append(
            f"CONVERT(%s USING utf8mb4) COLLATE {c} LIKE CONVERT(%s USING utf8mb4) COLLATE {c}"
        )
        params += [value, pattern]
    rows, _ = mariadb_oracle.query("SELECT " + ", ".join(cols), params)
    for c, want in zip(colls, rows[0]):
        assert C.like(c, value, pattern) == bool(want), (c, value, pattern)


LIKE_CASES = [
    ("a", "A"),
    ("a", "a "),
    ("a ", "a"),
    ("é", "e"),
    ("ß", "s"),
    ("ß", "ss"),
    ("ss", "ß"),
    ("ß", "_"),
    ("😀", "😁"),
    ("😀", "_"),
    ("e\u0301", "e"),
    ("e\u0301", "e_"),
    ("e\u0301", "é"),
    ("\u0301", "\u0300"),
    ("abc", "a%"),
    ("abc", "%c"),
    ("abc", "%B%"),
    ("a%c", "a\\%c"),
    ("abc", "a\\%c"),
    ("a_c", "a\\_c"),
    ("a\\", "a\\"),
    ("a\\", "a\\\\"),
    ("", "%"),
    ("", "_"),
    ("ﬁ", "fi"),
    ("fi", "ﬁ"),
    ("\t", " "),
    ("a\x00", "a"),
    ("a\x00", "a_"),
]


@pytest.mark.parametrize("value,pattern", LIKE_CASES)
def test_like_hand_picked(mariadb_oracle, value, pattern):
    for c in TEXT_COLLATIONS:
        want = mariadb_oracle.scalar(
            f"SELECT CONVERT(%s USING utf8mb4) COLLATE {c} LIKE CONVERT(%s USING utf8mb4) "
            f"COLLATE {c}",
            (value, pattern),
        )
        assert C.like(c, value, pattern) == bool(want), (c, value, pattern)

"""The range of collation keys a LIKE prefix allows (``sql.collation.prefix_key_range``), under
every collation the engine can key by: every string the pattern matches has its key in the
range, and the real strings given to base storage for each end lie on the right side of it."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noria_py.sql import collation as C

NAMES = [
    "utf8mb4_general_ci",
    "utf8mb4_general_nopad_ci",
    "utf8mb4_bin",
    "utf8mb4_nopad_bin",
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_520_ci",
    "uca1400_ai_ci",
]
CHARS = ["a", "A", "á", "b", "ß", "s", "S", " ", "\t", "\x00", "é", "E", "z", "\uffff", "😀", "|"]
text = st.text(alphabet=st.sampled_from(CHARS), max_size=5)


@pytest.fixture(scope="module", params=NAMES)
def collation(request):
    gc.collect()
    C.set_current(request.param)
    try:
        yield C.current()
    finally:
        C.set_current(C.DEFAULT)


def _escaped(p: str) -> str:
    return "".join("|" + ch if ch in "%_|" else ch for ch in p)


@settings(max_examples=300, deadline=None)
@given(prefix=text, value=text, tail=st.sampled_from(["%", "", "_%", "%z"]))
def test_every_match_lies_in_the_prefix_range(collation, prefix, value, tail):
    lo, hi = C.prefix_key_range(prefix)
    pattern = _escaped(prefix) + tail
    assert C.like_prefix(pattern, "|") == prefix
    for v in (value, prefix + value, prefix.upper() + value, prefix.lower() + value):
        if not C.like(collation, v, pattern, "|"):
            continue
        k = C.ck(v)
        assert lo is None or k >= lo, (v, pattern)
        assert hi is None or k < hi, (v, pattern)


@settings(max_examples=200, deadline=None)
@given(prefix=text)
def test_storage_bounds_lie_beyond_each_end(collation, prefix):
    lo, hi = C.prefix_key_range(prefix)
    for cut in (lo, hi):
        if cut is None:
            continue
        assert cut.low is None or C.ck(cut.low) <= cut
        assert cut.high is None or C.ck(cut.high) >= cut


def test_prefix_stops_at_the_first_unescaped_wildcard():
    assert C.like_prefix("ab%c") == "ab"
    assert C.like_prefix("ab_c") == "ab"
    assert C.like_prefix("a\\%b%") == "a%b"
    assert C.like_prefix("a|_b_", "|") == "a_b"
    assert C.like_prefix("ab\\") == "ab\\"  # a trailing escape is itself
    assert C.like_prefix("%ab") == ""
    assert C.like_prefix("abc", None) == "abc"


def test_a_prefix_of_spaces_says_nothing_under_pad_space():
    gc.collect()
    C.set_current("utf8mb4_general_ci")
    try:
        assert C.prefix_key_range("  ") == (None, None)
        assert C.prefix_key_range("") == (None, None)
        lo, hi = C.prefix_key_range("a\t")
        # 'a\t' sorts below 'a' under PAD SPACE, and 'a\tz' LIKE 'a\t%' must be in range
        assert lo <= C.ck("a\tz") < hi and not lo <= C.ck("a") < hi
    finally:
        C.set_current(C.DEFAULT)


@settings(max_examples=300, deadline=None)
@given(
    prefix=text,
    value=text,
    tail=st.sampled_from(["%", "", "%%", "_%", "%z", "|%"]),
    escape=st.sampled_from(["|", "%"]),
)
def test_a_read_matches_as_like_does(collation, prefix, value, tail, escape):
    """The match a read applies (``like_reads.pattern_plan``: for ``'abc%'`` a comparison of the
    first characters) is ``like``'s, and its range holds every match."""
    from noria_py.engine.like_reads import pattern_plan

    pattern = prefix + tail
    lo, hi, match = pattern_plan(pattern, escape)
    for v in (value, prefix + value, prefix.upper() + value):
        want = C.like(collation, v, pattern, escape)
        assert match(v) == want, (v, pattern, escape)
        if want:
            assert lo <= (1, C.ck(v), 0) < hi, (v, pattern)

"""Reading DATE and DATETIME values back from base storage (``values.parse_date`` and
``parse_datetime``): the forms base storage writes are parsed by ``fromisoformat``, which also
accepts forms MySQL's DATETIME text does not (time zones, week dates, compact forms); every
string must read exactly as the general parser reads it."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import given
from hypothesis import strategies as st

from noria_py.sql import values as V

_DT = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?\s*$"
)
_D = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")


def ref_date(s: str):
    m = _D.match(s)
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def ref_datetime(s: str):
    m = _DT.match(s)
    if not m:
        d = ref_date(s)
        return None if d is None else dt.datetime(d.year, d.month, d.day)
    parts = [int(m.group(i) or 0) for i in range(1, 7)]
    try:
        return dt.datetime(*parts, int((m.group(7) or "0").ljust(6, "0")))
    except ValueError:
        return None


def _text(year, month, day, hour, minute, second, frac):
    s = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    return s if frac is None else f"{s}.{frac}"


# stored forms, near misses of them, and what fromisoformat alone would accept
_JUNK = st.sampled_from(list("0123456789 -:.T+ZW_") + ["\u00b2", "\u0663", "+02:00", "Z"])


@st.composite
def stored_like(draw):
    s = _text(
        draw(st.integers(0, 9999)),
        draw(st.integers(0, 13)),
        draw(st.integers(0, 32)),
        draw(st.integers(0, 25)),
        draw(st.integers(0, 61)),
        draw(st.integers(0, 61)),
        draw(st.none() | st.from_regex(r"\A[0-9]{1,6}\Z")),
    )
    chars = list(s)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(chars)))
        what = draw(st.sampled_from(["replace", "insert", "delete"]))
        if what == "insert" or i == len(chars):
            chars.insert(i, draw(_JUNK))
        elif what == "replace":
            chars[i] = draw(_JUNK)
        else:
            del chars[i]
    return "".join(chars)


@given(stored_like())
def test_datetime_text_reads_as_the_general_parser_reads_it(s):
    assert V.parse_datetime(s) == ref_datetime(s)
    assert V.parse_date(s[:10]) == ref_date(s[:10])


def test_forms_only_fromisoformat_accepts_are_refused():
    for s in (
        "2020-W01-1 05:06:07",
        "2020-01-01 05:06:07.123+02",
        "2020-01-01 05:06:07.12345Z",
        "2020-01-01 05:06:07+02:00",
        "20200101T050607",
        "2020-W01-1",
        "2020-001",
    ):
        assert V.parse_datetime(s) is None, s
        assert V.parse_date(s) is None, s


def test_stored_forms_round_trip():
    for v in (
        dt.datetime(2021, 3, 4, 5, 6, 7),
        dt.datetime(2021, 3, 4, 5, 6, 7, 890),
        dt.datetime(1, 1, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ):
        assert V.parse_datetime(V.to_storage(v)) == v
    for d in (dt.date(2021, 3, 4), dt.date(1, 1, 1), dt.date(9999, 12, 31)):
        assert V.parse_date(V.to_storage(d)) == d

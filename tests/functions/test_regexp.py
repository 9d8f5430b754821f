"""REGEXP, REGEXP_REPLACE, REGEXP_SUBSTR and REGEXP_INSTR compared with MariaDB."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noria_py.errors import OperationalError
from noria_py.sql import collation
from noria_py.sql.functions import regexp as R

CI = collation.default()


def ours(fn: str, *args):
    return getattr(R, fn.lower())(*args, coll=CI)


def check(oracle, calls) -> None:
    sqls, params = [], []
    for fn, args in calls:
        if fn == "REGEXP":
            sqls.append("(%s REGEXP %s)")
        else:
            sqls.append(f"{fn}(" + ", ".join(["%s"] * len(args)) + ")")
        params.extend(args)
    rows, _ = oracle.query("SELECT " + ", ".join(sqls), params)
    for (fn, args), got in zip(calls, rows[0], strict=True):
        mine = ours(fn, *args)
        assert mine == got, (fn, args, mine, got)
        assert type(mine) is type(got), (fn, args, type(mine), type(got))


CASES = [
    ("abc", ""),
    ("aBc", "b"),
    ("abcabc", "(b)(c)"),
    ("héllo", "l"),
    ("abc", "(?i)B"),
    ("a b", "[[:space:]]"),
    ("word", "[[:<:]]wo"),
    ("a word", "or[[:>:]]"),
    ("ab\nc", "b$"),
    ("ab\n", "b$"),
    ("aaa", "a*"),
    ("abc", "x*"),
    ("Hello", "L"),
    ("ÉCOLE", "é"),
    ("a.b", "."),
    ("a.b", "\\."),
    ("aé", "^a[[:alpha:]]$"),
    ("ab", "^a\\Z"),
    ("ab", "b\\z"),
    ("x1_y", "[[:digit:]_]+"),
    ("x1_y", "[^[:alnum:]]"),
    ("ABC def", "[[:upper:]]+"),
    ("tab\there", "[[:blank:]]"),
    ("a,b;c", "[[:punct:]]"),
    ("abab", "(ab)\\1"),
    ("abc", "(?<n>b)"),
    ("aaa", "a{2}"),
    ("aaa", "a+?"),
    ("foo bar", "\\bbar"),
    ("x\ny", "x.y"),
    ("naïve café", "\\w+"),
]


@pytest.mark.parametrize("s,pat", CASES)
def test_cases(mariadb_oracle, s, pat):
    check(
        mariadb_oracle,
        [
            ("REGEXP", (s, pat)),
            ("REGEXP_SUBSTR", (s, pat)),
            ("REGEXP_INSTR", (s, pat)),
            ("REGEXP_REPLACE", (s, pat, "<\\0|\\1\\\\x>")),
            ("REGEXP_REPLACE", (s, pat, "-")),
        ],
    )


def test_replace_backrefs(mariadb_oracle):
    check(
        mariadb_oracle,
        [
            ("REGEXP_REPLACE", ("abcabc", "(b)(c)", "<\\2\\1\\0\\\\x>")),
            ("REGEXP_REPLACE", ("abc", "b", "\\9")),
            ("REGEXP_REPLACE", ("abc", "b", "$0")),
            ("REGEXP_REPLACE", ("abc", "", "-")),
        ],
    )


def test_invalid_pattern(mariadb_oracle):
    import pymysql

    with pytest.raises(pymysql.err.OperationalError) as e:
        mariadb_oracle.query("SELECT 'abc' REGEXP '('")
    assert e.value.args[0] == 1139
    with pytest.raises(OperationalError) as e2:
        ours("REGEXP", "abc", "(")
    assert e2.value.errno == 1139


def test_case_sensitive_collation():
    bin_coll = collation.get("utf8mb4_bin")
    assert R.regexp("aBc", "b", coll=bin_coll) == 0
    assert R.regexp("aBc", "b", coll=CI) == 1
    assert R.regexp(b"aBc", "b", coll=CI) == 0


TEXT = st.text(alphabet="abcAB é.\n1_", max_size=12)
ATOMS = st.sampled_from(
    ["a", "b", "A", "é", ".", "\\.", "[ab]", "[^a]", "[[:alpha:]]", "[[:digit:]]", "\\w", "\\s",
     "(a|b)", "(ab)", "1", "_", "^", "$"]
)  # fmt: skip
QUANT = st.sampled_from(["", "", "*", "+", "?", "{1,2}", "*?"])


@st.composite
def patterns(draw) -> str:
    parts = draw(st.lists(st.tuples(ATOMS, QUANT), min_size=1, max_size=4))
    out = ""
    for atom, q in parts:
        out += atom + (q if atom not in ("^", "$") else "")
    return out


@settings(max_examples=150)
@given(s=TEXT, pat=patterns())
def test_random(mariadb_oracle, s, pat):
    check(
        mariadb_oracle,
        [
            ("REGEXP", (s, pat)),
            ("REGEXP_SUBSTR", (s, pat)),
            ("REGEXP_INSTR", (s, pat)),
            ("REGEXP_REPLACE", (s, pat, "<\\0>")),
        ],
    )

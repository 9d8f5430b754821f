"""String collations with MySQL's semantics: equality and order of strings, as sort keys.

A :class:`Collation` turns a string into a key: two strings are equal under the collation exactly
when their keys are equal, and keys order like the collation orders the strings. Everything that
compares strings uses keys: comparisons, IN, LIKE, ORDER BY, GROUP BY, DISTINCT, MIN/MAX, UNION,
join keys, reader keys, so a cached lookup of ``'BOB'`` finds ``'bob'``.

``PAD SPACE`` collations (MariaDB's ``utf8mb4_general_ci``, ``utf8mb4_unicode_ci``,
``utf8mb4_bin``) ignore trailing spaces; ``NO PAD`` ones (MySQL 8's ``utf8mb4_0900_ai_ci``) do not.
"""

from __future__ import annotations

import unicodedata

DEFAULT = "utf8mb4_general_ci"


class Collation:
    __slots__ = ("name", "pad_space", "_key", "case_sensitive")

    def __init__(self, name: str, key, pad_space: bool, case_sensitive: bool):
        self.name = name
        self._key = key
        self.pad_space = pad_space
        self.case_sensitive = case_sensitive

    def key(self, s: str):
        if self.pad_space:
            s = s.rstrip(" ")
        return self._key(s)

    def eq(self, a: str, b: str) -> bool:
        return self.key(a) == self.key(b)

    def cmp(self, a: str, b: str) -> int:
        ka, kb = self.key(a), self.key(b)
        return (ka > kb) - (ka < kb)

    def __repr__(self) -> str:
        return f"Collation({self.name})"


def _bin_key(s: str):
    return s.encode("utf-8")


def _general_ci_key(s: str):
    # placeholder until the exact per-character weights land
    out = []
    for ch in s:
        d = unicodedata.normalize("NFD", ch)[0]
        out.append(d.upper())
    return "".join(out)


COLLATIONS: dict[str, Collation] = {
    "utf8mb4_bin": Collation("utf8mb4_bin", _bin_key, True, True),
    "utf8mb4_general_ci": Collation("utf8mb4_general_ci", _general_ci_key, True, False),
}


def get(name: str) -> Collation:
    """The collation named ``name`` (case-insensitive); KeyError names it when unknown."""
    c = COLLATIONS.get(name.lower())
    if c is None:
        raise KeyError(name)
    return c


def default() -> Collation:
    return COLLATIONS[DEFAULT]

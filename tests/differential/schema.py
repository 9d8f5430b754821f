"""Random schemas and the literal values stored in them.

Every table has an ``INT PRIMARY KEY`` column ``id`` and one to three nullable columns, each INT
or VARCHAR; the first of them is always INT so that any two tables can be joined on an integer
column. Values come from tiny domains (-5..5, short strings over "abc", NULL) so that joins,
groups and parameter lookups match often.

Only behaviour that MySQL and SQLite share is generated: strings are lowercase (collations
differ in case handling), contain no spaces (MySQL's PAD SPACE rules) and no LIKE wildcards.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

INT = "INT"
STR = "STR"

# The ids inserted by the generated INSERTs. Small enough that duplicate keys happen now and then.
MAX_ID = 20

int_values = st.one_of(st.none(), st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5))
str_values = st.one_of(st.none(), st.text(alphabet="abc", max_size=2), st.sampled_from(["a", "b"]))


def values_of(kind: str) -> st.SearchStrategy:
    """Stored values: NULL about a quarter of the time."""
    return int_values if kind == INT else str_values


def rare_null_values_of(kind: str) -> st.SearchStrategy:
    """Literals in expressions and parameter values: NULL only now and then."""
    plain = st.integers(-5, 5) if kind == INT else st.text(alphabet="abc", max_size=2)
    return st.one_of(*[plain] * 9, st.none())


def literal(value: object) -> str:
    """Render a Python value as a SQL literal both dialects read the same way."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        raise TypeError("booleans are not generated")
    if isinstance(value, int):
        # Parenthesised so that "a - -1" can never turn into a "--" comment.
        return f"({value})" if value < 0 else str(value)
    if isinstance(value, str):
        assert "'" not in value and "\\" not in value
        return f"'{value}'"
    raise TypeError(f"unexpected literal {value!r}")


@dataclass(frozen=True)
class Relation:
    """Something a FROM clause can name: a base table or a view, with its typed columns."""

    name: str
    columns: tuple[tuple[str, str], ...]

    def kinds(self) -> dict[str, str]:
        return dict(self.columns)


@dataclass(frozen=True)
class Table(Relation):
    def ddl(self) -> str:
        parts = []
        for name, kind in self.columns:
            if name == "id":
                parts.append("id INT PRIMARY KEY")
            else:
                parts.append(f"{name} {'INT' if kind == INT else 'VARCHAR(10)'}")
        return f"CREATE TABLE {self.name} ({', '.join(parts)})"

    @property
    def data_columns(self) -> tuple[tuple[str, str], ...]:
        return tuple(c for c in self.columns if c[0] != "id")


@st.composite
def tables(draw, min_tables: int = 1, max_tables: int = 4) -> list[Table]:
    count = draw(st.integers(min_tables, max_tables))
    result = []
    for i in range(count):
        n_cols = draw(st.integers(1, 3))
        cols = [("id", INT), ("a", INT)]
        for name in "bcd"[: n_cols - 1]:
            cols.append((name, draw(st.sampled_from([INT, STR]))))
        result.append(Table(f"t{i}", tuple(cols)))
    return result

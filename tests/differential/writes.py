"""Random INSERT, UPDATE and DELETE statements over a random schema.

The statements mean the same in MySQL and SQLite:

- An UPDATE that assigns several columns only reads, in each assignment, the column being
  assigned and columns the statement does not assign (MySQL evaluates assignments left to right
  and lets later ones see earlier results; SQLite and the SQL standard do not).
- An UPDATE of the primary key either sets one constant (which fails in both when the key is
  taken or when two rows match) or shifts the matching ids past the table's largest id, filled
  in when the statement runs (``{shift}``), so that its outcome never depends on row order.
- Any statement may fail (a duplicate key); the harness then requires it to fail on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from .queries import Exprs
from .schema import MAX_ID, Table, literal, values_of


@dataclass(frozen=True)
class Write:
    sql: str
    table: str
    # True when ``sql`` holds ``{shift}``: an amount larger than every id now in ``table``.
    shift: bool = False


def _where(draw, table: Table) -> str:
    exprs = Exprs(draw, list(table.columns))
    form = draw(st.integers(0, 9))
    if form == 0:
        return ""
    if form <= 2:
        return f" WHERE id = {draw(st.integers(0, MAX_ID))}"
    return f" WHERE {exprs.pred(draw(st.integers(0, 2)))}"


def _insert(draw, table: Table, max_rows: int = 4) -> Write:
    n_rows = draw(st.integers(1, max_rows))
    data = table.data_columns
    form = draw(st.integers(0, 3))
    if form == 0:
        # No column list: every column, in table order.
        columns, listed = table.columns, ""
    elif form == 1:
        # Some columns left out: they become NULL.
        chosen = [c for c in data if draw(st.booleans())]
        columns = (("id", "INT"), *chosen)
        listed = f" ({', '.join(name for name, _ in columns)})"
    else:
        columns = table.columns
        listed = f" ({', '.join(name for name, _ in columns)})"
    rows = []
    for _ in range(n_rows):
        values = []
        for name, kind in columns:
            if name == "id":
                values.append(literal(draw(st.integers(0, MAX_ID))))
            else:
                values.append(literal(draw(values_of(kind))))
        rows.append(f"({', '.join(values)})")
    return Write(f"INSERT INTO {table.name}{listed} VALUES {', '.join(rows)}", table.name)


def _update(draw, table: Table) -> Write:
    form = draw(st.integers(0, 9))
    where = _where(draw, table)
    if form == 0:
        value = draw(st.integers(0, MAX_ID))
        return Write(f"UPDATE {table.name} SET id = {value}{where}", table.name)
    if form == 1:
        return Write(f"UPDATE {table.name} SET id = id + {{shift}}{where}", table.name, shift=True)
    data = list(table.data_columns)
    targets = draw(st.permutations(data))[: draw(st.integers(1, len(data)))]
    assigned = {name for name, _ in targets}
    unassigned = [c for c in table.columns if c[0] not in assigned]
    sets = []
    for name, kind in targets:
        if draw(st.integers(0, 2)) == 0:
            value = literal(draw(values_of(kind)))
        else:
            exprs = Exprs(draw, [(name, kind), *unassigned])
            value = exprs.expr(kind, draw(st.integers(0, 2)))
        sets.append(f"{name} = {value}")
    return Write(f"UPDATE {table.name} SET {', '.join(sets)}{where}", table.name)


def _delete(draw, table: Table) -> Write:
    return Write(f"DELETE FROM {table.name}{_where(draw, table)}", table.name)


def write(draw, tables: list[Table]) -> Write:
    table = draw(st.sampled_from(tables))
    kind = draw(st.sampled_from(["insert", "insert", "insert", "update", "update", "delete"]))
    return {"insert": _insert, "update": _update, "delete": _delete}[kind](draw, table)


def initial_inserts(draw, tables: list[Table]) -> list[Write]:
    """One INSERT per table (some tables may stay empty) to start from non-empty data."""
    return [_insert(draw, t, max_rows=8) for t in tables if draw(st.integers(0, 4)) > 0]

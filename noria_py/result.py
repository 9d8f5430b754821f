"""The outcome of one statement, shared by the PEP 249 cursor and the MySQL-wire server."""

from __future__ import annotations

from dataclasses import dataclass, field

from .sql.functions.coerce import ColumnFloat


@dataclass(slots=True)
class Result:
    """What ``Engine.execute`` returns.

    ``columns`` is None for statements that produce no result set (DDL, writes, SET ...).
    ``column_types`` holds one MySQL type name per column (``BIGINT``, ``INT``, ``DECIMAL``,
    ``DOUBLE``, ``VARCHAR``, ``TEXT``, ``DATE``, ``DATETIME``, ``TIMESTAMP``, ``TINYINT``,
    ``NULL``) and ``nullable`` whether a column may hold NULL.
    ``status`` is ``"cached"`` for a SELECT answered by the dataflow, ``"proxied"`` for one run
    on base storage, None for everything else. An UPDATE's ``rowcount`` is the rows it changed
    (MySQL's affected rows) and ``matched`` the rows its WHERE found (what a client with
    ``CLIENT_FOUND_ROWS`` gets as affected rows). ``conditions`` are the statement's
    warnings and notes as MySQL words them, ``(level, code, message)`` (INSERT IGNORE's and LOAD
    DATA IGNORE's skipped rows, LOAD DATA's cut long rows): they become the connection's
    diagnostics area (``noria_py.diagnostics``), and ``warnings`` counts them for the OK packet.
    """

    columns: list[str] | None = None
    rows: list[tuple] | tuple = ()
    column_types: list[str] = field(default_factory=list)
    nullable: list[bool] = field(default_factory=list)
    rowcount: int = -1
    lastrowid: int | None = None
    status: str | None = None
    matched: int | None = None  # UPDATE: rows found (rowcount counts the rows changed)
    conditions: list | tuple = ()  # (level, code, message) of each warning or note
    found: int | None = None  # SQL_CALC_FOUND_ROWS: the rows found before LIMIT
    # the columns that hold a FLOAT column's values, when the statement knows (else they are
    # found by their types: ``float_columns``)
    float_columns: tuple | None = None

    @property
    def warnings(self) -> int:
        """The count MySQL's OK and EOF packets carry."""
        return len(self.conditions)


def write_result(rowcount: int, lastrowid: int | None, conditions: list) -> Result:
    """``Result(rowcount=..., lastrowid=..., conditions=...)``, the answer of a write, built by
    position: on every single-row write's path, where the dataclass's keyword call costs
    about three times as much (the fields' order is tested, tests/test_dbapi.py)."""
    return Result(None, (), [], [], rowcount, lastrowid, None, None, conditions)


_FLOAT_TYPES = frozenset(("FLOAT", "DOUBLE", "REAL", "NULL"))


def float_columns(types) -> tuple[int, ...]:
    """The columns of a result that may hold a FLOAT column's values (``ColumnFloat``)."""
    return tuple(i for i, t in enumerate(types) if t and t.split("(", 1)[0].upper() in _FLOAT_TYPES)


def client_rows(rows, columns: tuple[int, ...]):
    """``rows`` as a MySQL driver reads them: a FLOAT column's value is the float its shown
    text parses to (0.123457, not the single-precision 0.12345679104328156); ``columns`` from
    ``float_columns``. The rows themselves when none holds one."""
    if not columns:
        return rows
    if len(rows) == 1 and len(columns) == 1:  # a point lookup of one FLOAT value
        r = rows[0]
        i = columns[0]
        v = r[i]
        if v.__class__ is not ColumnFloat:
            return rows
        return [(*r[:i], v.plain(), *r[i + 1 :])]
    out = None
    for n, r in enumerate(rows):
        for i in columns:
            if r[i].__class__ is ColumnFloat:
                break
        else:
            continue
        if out is None:
            out = list(rows)
        out[n] = tuple(v.plain() if v.__class__ is ColumnFloat else v for v in r)
    return rows if out is None else out

"""Runs the sqllogictest-style files in tests/slt/ against noria_py, one test case per file.

File format (a small subset of sqllogictest). Records are separated by blank lines; lines
starting with ``#`` are comments. Each file runs top to bottom on a fresh ``noria_py.connect()``.

``statement ok``
    The SQL on the following lines must succeed.

``statement error [ErrorClass]``
    The SQL must raise a ``noria_py.errors.Error``; when a class name such as ``IntegrityError``
    is given, the error must be an instance of ``noria_py.errors.<ErrorClass>``.

``query <types> [nosort|rowsort]``
    The SQL must return the rows listed after a ``----`` line, one row per line, values
    separated by single spaces. ``<types>`` has one letter per column:

    ``I``  an integer: ``int`` (not ``bool``), or a ``Decimal`` without fractional digits (MySQL
           returns SUM of integers as DECIMAL);
    ``R``  a non-integer number: ``Decimal`` or ``float``;
    ``T``  text: ``str``.

    NULL is allowed in any column. ``rowsort`` sorts the rendered rows (as strings) of both the
    expected and the actual result before comparing; ``nosort`` (the default) compares in order.

Rendering of values:

- ``None`` -> ``NULL``
- ``int`` -> decimal digits, e.g. ``-3``
- ``Decimal`` -> ``str()``, which keeps MySQL's scale: ``Decimal("3.5000")`` -> ``3.5000``
- ``float`` -> ``repr()`` without a trailing ``.0``: ``3.5`` -> ``3.5``, ``3.0`` -> ``3``
- ``str`` -> the text itself; the empty string -> ``(empty)``
- ``bool`` -> ``True`` / ``False``, which never matches a MySQL result (MySQL returns 1 and 0)
- anything else -> ``repr()``
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

import noria_py
import noria_py.errors

SLT_DIR = Path(__file__).parent / "slt"


@dataclass
class Record:
    line: int  # 1-based line of the record's header
    kind: str  # "statement ok", "statement error" or "query"
    sql: str
    error_class: str | None = None
    types: str = ""
    sort: str = "nosort"
    expected: tuple[str, ...] = ()


def parse(text: str) -> list[Record]:
    records: list[Record] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        header, header_line = line.split(), i + 1
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i].rstrip())
            i += 1
        sql = "\n".join(body)
        if not sql:
            raise ValueError(f"line {header_line}: record without SQL")
        if header[:2] == ["statement", "ok"] and len(header) == 2:
            records.append(Record(header_line, "statement ok", sql))
        elif header[:2] == ["statement", "error"] and len(header) <= 3:
            error_class = header[2] if len(header) == 3 else None
            if error_class is not None and not hasattr(noria_py.errors, error_class):
                raise ValueError(f"line {header_line}: unknown error class {error_class}")
            records.append(Record(header_line, "statement error", sql, error_class))
        elif header[0] == "query" and 2 <= len(header) <= 3:
            types = header[1]
            sort = header[2] if len(header) == 3 else "nosort"
            if not re.fullmatch(r"[ITR]+", types) or sort not in ("nosort", "rowsort"):
                raise ValueError(f"line {header_line}: bad query header {line!r}")
            if i >= len(lines) or lines[i].strip() != "----":
                raise ValueError(f"line {header_line}: query without a ---- line")
            i += 1
            expected = []
            while i < len(lines) and lines[i].strip():
                expected.append(lines[i].strip())
                i += 1
            records.append(
                Record(header_line, "query", sql, types=types, sort=sort, expected=tuple(expected))
            )
        else:
            raise ValueError(f"line {header_line}: unknown record {line!r}")
    return records


def render(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(value, str):
        return value if value else "(empty)"
    return repr(value)


def type_matches(letter: str, value: object) -> bool:
    if value is None:
        return True
    if letter == "I":
        if isinstance(value, Decimal):
            return value.as_tuple().exponent == 0
        return isinstance(value, int) and not isinstance(value, bool)
    if letter == "R":
        return isinstance(value, Decimal | float)
    return isinstance(value, str)


def run_file(path: Path) -> None:
    """Run one file and report all of its failing records.

    After a failed query the file goes on (queries change nothing); a failed statement ends it
    (what follows would run on the wrong data).
    """
    records = parse(path.read_text())
    failures: list[str] = []
    conn = noria_py.connect()
    try:
        for record in records:
            try:
                run_record(conn, record, f"{path.name}:{record.line}")
            except AssertionError as exc:
                failures.append(str(exc))
                if record.kind != "query":
                    break
    finally:
        conn.close()
    if failures:
        raise AssertionError(f"{len(failures)} failing record(s)\n\n" + "\n\n".join(failures))


def run_record(conn, record: Record, where: str) -> None:
    context = f"{where}: {record.kind}\n{record.sql}"
    if record.kind == "statement error":
        try:
            conn.cursor().execute(record.sql)
        except noria_py.errors.Error as exc:
            wanted = getattr(noria_py.errors, record.error_class or "Error")
            if not isinstance(exc, wanted):
                raise AssertionError(f"{context}\nexpected {wanted.__name__}, got {exc!r}") from exc
            return
        raise AssertionError(f"{context}\nexpected an error, the statement succeeded")
    cur = conn.cursor()
    try:
        cur.execute(record.sql)
        rows = cur.fetchall() if record.kind == "query" else []
    except Exception as exc:
        raise AssertionError(f"{context}\nfailed: {exc!r}") from exc
    if record.kind == "statement ok":
        return
    for row in rows:
        if len(row) != len(record.types):
            raise AssertionError(f"{context}\n{len(record.types)} columns expected, got {row!r}")
        for letter, value in zip(record.types, row):
            if not type_matches(letter, value):
                raise AssertionError(f"{context}\ntype {letter} expected, got {value!r} in {row!r}")
    actual = [" ".join(render(v) for v in row) for row in rows]
    expected = list(record.expected)
    if record.sort == "rowsort":
        actual, expected = sorted(actual), sorted(expected)
    if actual != expected:
        raise AssertionError(
            f"{context}\nexpected:\n  "
            + "\n  ".join(expected or ["(no rows)"])
            + "\nactual:\n  "
            + "\n  ".join(actual or ["(no rows)"])
        )


@pytest.mark.parametrize("path", sorted(SLT_DIR.glob("*.test")), ids=lambda p: p.stem)
def test_slt_file(path: Path) -> None:
    run_file(path)


def test_render_and_types() -> None:
    assert [render(v) for v in (None, -3, Decimal("3.5000"), 3.0, 0.25, "", "ab", True)] == [
        "NULL",
        "-3",
        "3.5000",
        "3",
        "0.25",
        "(empty)",
        "ab",
        "True",
    ]
    assert type_matches("I", Decimal("3")) and not type_matches("I", Decimal("3.0"))
    assert not type_matches("I", True) and not type_matches("R", 3)
    assert type_matches("T", None) and not type_matches("T", 1)


def test_parse_records() -> None:
    text = (
        "# comment\nstatement ok\nCREATE TABLE t (id INT PRIMARY KEY)\n\n"
        "statement error IntegrityError\nINSERT INTO t VALUES (1), (1)\n\n"
        "query IT rowsort\nSELECT id,\n  'x' FROM t\n----\n1 x\n2 y\n\n"
        "query I\nSELECT id FROM t WHERE id < 0\n----\n"
    )
    records = parse(text)
    assert [r.kind for r in records] == ["statement ok", "statement error", "query", "query"]
    assert records[1].error_class == "IntegrityError"
    assert records[2].sql == "SELECT id,\n  'x' FROM t" and records[2].expected == ("1 x", "2 y")
    assert records[2].line == 8 and records[3].expected == ()
    with pytest.raises(ValueError):
        parse("query X\nSELECT 1\n----\n1\n")
    with pytest.raises(ValueError):
        parse("query I\nSELECT 1\n")

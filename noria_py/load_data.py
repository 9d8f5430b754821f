"""``LOAD DATA INFILE``: MySQL's text-file loader, with its options and its reading rules.

The statement is read here (sqlglot does not parse it); the file is split into rows the way
MySQL's loader splits it (field and line terminators, an enclosing quote, the escape
character with ``\\N`` for NULL, ``IGNORE n LINES``); each row then goes through the engine's
ordinary INSERT (or REPLACE, or INSERT IGNORE), so defaults, coercion in strict mode, keys,
CHECK and FOREIGN KEY constraints and the dataflow's deltas are exactly those of an INSERT.
An error names the row, as MySQL's does ("at row N").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import errors as E
from .sql.parse import LEADING


@dataclass
class LoadSpec:
    path: str
    table: str
    database: str | None = None  # INTO TABLE db.t
    local: bool = False
    mode: str = ""  # "", "REPLACE" or "IGNORE"
    field_term: str = "\t"
    enclosed: str = ""
    optionally: bool = False
    escaped: str = "\\"
    line_term: str = "\n"
    line_start: str = ""
    ignore_lines: int = 0
    columns: list[str] | None = None
    sets: list = field(default_factory=list)


_STRING = r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\""
_IDENT = r"`(?:[^`]|``)+`|[\w$]+"


def _unquote_string(text: str) -> str:
    """A MySQL string literal's value (backslash escapes and doubled quotes)."""
    q = text[0]
    body = text[1:-1]
    out = []
    i = 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "Z": "\x1a"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(escapes.get(nxt, nxt))
            i += 2
            continue
        if ch == q and i + 1 < len(body) and body[i + 1] == q:
            out.append(q)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _ident(text: str) -> str:
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def parse_load(sql: str) -> LoadSpec | None:
    """The LoadSpec of a ``LOAD DATA`` statement, or None when the text is not one."""
    pos = 0
    text = sql.strip().rstrip(";").strip()

    def take(pattern: str, required: bool = False):
        nonlocal pos
        m = re.compile(r"\s*(?:" + pattern + r")", re.I | re.S).match(text, pos)
        if m is None:
            if required:
                near = text[pos : pos + 40].strip()
                raise E.parse_error(f"near '{near}'")
            return None
        pos = m.end()
        return m

    def string() -> str:
        """The quoted string that must come next, unquoted."""
        return _unquote_string(take(_STRING, required=True).group(0).strip())

    if take(LEADING + r"load\s+data\b") is None:  # (after any comments)
        return None
    take(r"(?:low_priority|concurrent)\b")
    local = take(r"local\b") is not None
    take(r"infile\b", required=True)
    path = string()
    spec = LoadSpec(path=path, table="", local=local)
    m = take(r"(replace|ignore)\b")
    if m is not None:
        spec.mode = m.group(1).upper()
    take(r"into\s+table\b", required=True)
    m = take(rf"({_IDENT})(?:\s*\.\s*({_IDENT}))?", required=True)
    spec.table = _ident(m.group(2) or m.group(1))
    spec.database = _ident(m.group(1)) if m.group(2) else None
    if take(r"partition\b"):
        raise E.NotSupportedError("This version doesn't yet support 'LOAD DATA ... PARTITION'")
    if take(r"character\s+set\b"):
        cs = take(rf"{_IDENT}|{_STRING}", required=True).group(0).strip("'\"`").lower()
        if cs not in ("utf8", "utf8mb4", "utf8mb3", "binary", "ascii"):
            raise E.NotSupportedError(
                f"This version doesn't yet support 'LOAD DATA ... CHARACTER SET {cs}'"
            )
    if take(r"(?:fields|columns)\b"):
        seen = False
        while True:
            if take(r"terminated\s+by\b"):
                spec.field_term = string()
            elif take(r"optionally\s+enclosed\s+by\b"):
                spec.enclosed = string()
                spec.optionally = True
            elif take(r"enclosed\s+by\b"):
                spec.enclosed = string()
            elif take(r"escaped\s+by\b"):
                spec.escaped = string()
            else:
                break
            seen = True
        if not seen:
            raise E.parse_error(f"near '{text[pos : pos + 40].strip()}'")
        if len(spec.enclosed) > 1 or len(spec.escaped) > 1:
            raise E.ProgrammingError(
                "Field separator argument is not what is expected; check the manual", 1083, "42000"
            )
    if take(r"lines\b"):
        while True:
            if take(r"starting\s+by\b"):
                spec.line_start = string()
            elif take(r"terminated\s+by\b"):
                spec.line_term = string()
            else:
                break
    m = take(r"ignore\s+(\d+)\s+(?:lines|rows)\b")
    if m is not None:
        spec.ignore_lines = int(m.group(1))
    if take(r"\("):
        cols = []
        while True:
            m = take(rf"(@[\w$]+|{_IDENT})", required=True)
            cols.append(m.group(1) if m.group(1).startswith("@") else _ident(m.group(1)))
            if take(r"\)"):
                break
            take(r",", required=True)
        spec.columns = cols
    if take(r"set\b"):
        from .engine import _split_top

        for part in _split_top(text[pos:]):
            m = re.match(rf"\s*({_IDENT})\s*=\s*(.+?)\s*\Z", part, re.S)
            if m is None:
                raise E.parse_error(f"near '{part.strip()[:40]}'")
            spec.sets.append((_ident(m.group(1)), m.group(2)))
        pos = len(text)
    if pos < len(text):
        raise E.parse_error(f"near '{text[pos : pos + 40].strip()}'")
    if spec.field_term == "" and spec.enclosed == "":
        raise E.NotSupportedError(
            "This version doesn't yet support fixed-width rows (FIELDS TERMINATED BY '' "
            "ENCLOSED BY '')"
        )
    return spec


_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
NULL = object()  # \N, or an unquoted NULL when fields are enclosed


def split_rows(data: str, spec: LoadSpec) -> list[list]:
    """The file's rows, each a list of field values (``NULL`` for SQL NULL), as MySQL's
    loader reads them."""
    ft, lt, enc, esc, start = (
        spec.field_term,
        spec.line_term,
        spec.enclosed,
        spec.escaped,
        spec.line_start,
    )
    rows: list[list] = []
    i, n = 0, len(data)
    for _ in range(spec.ignore_lines):  # whole lines, quoted terminators or not
        j = data.find(lt, i) if lt else -1
        i = n if j < 0 else j + len(lt)
    while i < n:
        if start:  # a line's data begins after STARTING BY; a line without it is skipped
            j = data.find(start, i)
            k = data.find(lt, i) if lt else -1
            if j < 0:
                break
            if 0 <= k < j:
                i = k + len(lt)
                continue
            i = j + len(start)
        fields: list = []
        while True:
            value: list[str] = []
            if enc and data.startswith(enc, i):
                null = closed = False
                i += len(enc)
                while i < n:
                    if esc and data.startswith(esc, i) and i + 1 < n:
                        nxt = data[i + 1]
                        if nxt == "N" and not value:
                            null = True
                        value.append(_ESCAPES.get(nxt, nxt))
                        i += 2
                        continue
                    if data.startswith(enc, i):
                        if data.startswith(enc + enc, i):
                            value.append(enc)
                            i += 2 * len(enc)
                            continue
                        after = i + len(enc)
                        if (
                            after >= n
                            or (ft and data.startswith(ft, after))
                            or (lt and data.startswith(lt, after))
                        ):
                            i = after
                            closed = True
                            break
                    value.append(data[i])
                    i += 1
                text = "".join(value)
                if not closed:
                    # no closing quote before the end of the file: the field is the rest of
                    # the file from its opening quote on, that quote included (as MySQL's
                    # loader reads it), and \N in it is a plain N
                    fields.append(enc + text)
                else:
                    fields.append(NULL if null and text == "N" else text)
            else:
                raw_null = False
                while i < n:
                    if ft and data.startswith(ft, i):
                        break
                    if lt and data.startswith(lt, i):
                        break
                    if esc and data.startswith(esc, i) and i + 1 < n:
                        nxt = data[i + 1]
                        if nxt == "N" and not value:
                            raw_null = True  # \N is NULL when it is the whole field
                        value.append(_ESCAPES.get(nxt, nxt))
                        i += 2
                        continue
                    value.append(data[i])
                    i += 1
                text = "".join(value)
                if raw_null and text == "N":
                    fields.append(NULL)
                elif enc and text == "NULL":
                    fields.append(NULL)
                else:
                    fields.append(text)
            if ft and data.startswith(ft, i):
                i += len(ft)
                continue
            if lt and data.startswith(lt, i):
                i += len(lt)
            break
        rows.append(fields)
    return rows

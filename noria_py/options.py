"""The options ``noria_py.connect(path, **options)`` and ``Engine(path, **options)`` accept.

``OPTIONS`` declares each one: its name, its default, the values it takes and what it does.
``validate(options)`` checks a dict of options against it before the engine opens anything: a
name not in the table (a misspelling) raises ``ProgrammingError`` naming it and the closest known
option, and a value of the wrong type or out of range raises ``ProgrammingError`` saying which
values are allowed. It returns every option, the ones not given at their defaults.

A default of None means the option has no fixed default: the engine decides from other options
(``upqueries``, ``batch_window``) or the option is off (``memory_limit``, ``spark_master``...).
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ProgrammingError


class _Bad(ValueError):
    """A value an option does not take (turned into ProgrammingError by ``validate``)."""


@dataclass(frozen=True)
class Option:
    name: str
    default: Any
    allowed: str  # the values it takes, as the error message says them
    doc: str  # one line: what it does
    check: Callable[[Any], Any]  # the value as the engine reads it, or raises _Bad


def _flag(v: Any) -> bool:
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise _Bad


def _one_of(*choices: Any) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if v is None and None in choices:
            return v
        if isinstance(v, str) and v in choices:
            return v
        raise _Bad

    return check


def _number(low: float, *, above: bool = False, none: bool = False) -> Callable[[Any], Any]:
    """A finite number of seconds: ``>= low`` (``> low`` with ``above``); None with ``none``."""

    def check(v: Any) -> float | None:
        if v is None and none:
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _Bad
        if v < low or (above and v == low):
            raise _Bad
        return float(v)

    return check


def _count(low: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise _Bad
        return v

    return check


def _text_or_none(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    raise _Bad


def _size(v: Any) -> Any:
    if v is None:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _Bad
    from .dataflow.eviction import parse_size

    try:
        if parse_size(v) < 0:
            raise _Bad
    except ValueError:
        raise _Bad from None
    return v  # the engine parses it (dataflow/eviction.py)


def _rows_or_off(v: Any) -> Any:
    if v is None or v is False:
        return v
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _Bad
    return v


def _config(v: Any) -> Any:
    if v is None or isinstance(v, Mapping):
        return v
    raise _Bad


def _directory(v: Any) -> Any:
    if v is None or isinstance(v, (str, os.PathLike)):
        return v
    raise _Bad


DEFAULT_BULK_REPLAY_ROWS = 1_000_000

_TABLE = (
    Option(
        "partial",
        True,
        "True or False",
        "materializations fill on demand (False: every view is materialized in full)",
        _flag,
    ),
    Option(
        "memory_limit",
        None,
        "None, a number of bytes or a size such as '256MB'",
        "evict least recently read state to stay under this size (None: no limit)",
        _size,
    ),
    Option(
        "domains",
        "inline",
        "'inline' or 'threads'",
        "'inline': a write returns once every view reflects it; 'threads': the dataflow runs "
        "on threads of its own and a write returns once it is durable",
        _one_of("inline", "threads"),
    ),
    Option(
        "upqueries",
        None,
        "'direct', 'messages' or None",
        "'direct': a fill is computed in place; 'messages': upqueries are messages between "
        "domains (None: 'messages' with domains='threads', else 'direct')",
        _one_of("direct", "messages", None),
    ),
    Option(
        "lookup_joins",
        True,
        "True or False",
        "a join of two base tables looks the other side up in base storage instead of keeping "
        "a copy of both inputs (with domains='inline', direct or message upqueries)",
        _flag,
    ),
    Option(
        "read_your_writes",
        False,
        "True or False",
        "a read first waits until the views reflect every acknowledged write (also per cursor)",
        _flag,
    ),
    Option(
        "batch_window",
        None,
        "None or a number of seconds >= 0",
        "how long a dataflow thread waits to batch concurrent writes (None: 0.0002 on the "
        "single dataflow thread, 0 with a thread per domain)",
        _number(0, none=True),
    ),
    Option(
        "inbox_limit",
        10000,
        "a whole number >= 1",
        "writes waiting for the dataflow threads before a writer waits",
        _count(1),
    ),
    Option(
        "collation",
        None,
        "None or a collation name such as 'utf8mb4_0900_ai_ci'",
        "the collation strings compare by (one per process; None: the process's current one)",
        _text_or_none,
    ),
    Option(
        "dataflow",
        True,
        "True or False",
        "answer SELECTs from the dataflow (False: every SELECT from base storage, to compare)",
        _flag,
    ),
    Option(
        "lift_literals",
        True,
        "True or False",
        "a SELECT text without parameters is answered as its parameterized form (WHERE id = 42 "
        "as WHERE id = ? with 42), so its lookups share one cache (False: a query per text)",
        _flag,
    ),
    Option(
        "caching",
        "auto",
        "'auto' or 'explicit'",
        "'auto': every SELECT the dataflow can maintain is cached on first use; 'explicit': "
        "only what CREATE CACHE asked for, everything else is answered by base storage",
        _one_of("auto", "explicit"),
    ),
    Option(
        "private_storage",
        False,
        "True or False",
        "an in-memory database lives in a temporary file, so other connections read committed "
        "rows while one writes (the server's sessions)",
        _flag,
    ),
    Option(
        "shared",
        True,
        "True or False",
        "with a database file: tail the change log so other processes may use the file too "
        "(False: this engine must be alone on the file)",
        _flag,
    ),
    Option(
        "busy_timeout",
        50.0,
        "a number of seconds >= 0",
        "a shared file: how long a write waits for another process's write lock",
        _number(0),
    ),
    Option(
        "poll_interval",
        0.005,
        "a number of seconds > 0",
        "a shared file: how often the tail thread looks for other processes' commits",
        _number(0, above=True),
    ),
    Option(
        "bulk_replay_rows",
        DEFAULT_BULK_REPLAY_ROWS,
        "None, False or a whole number of rows >= 0",
        "base rows beneath a new full node's input from which Spark computes its initial "
        "state (None or False: never; 0: always)",
        _rows_or_off,
    ),
    Option(
        "spark_master",
        None,
        "None or a Spark master URL",
        "the master of the Spark session a bulk replay starts (None: local)",
        _text_or_none,
    ),
    Option(
        "spark_config",
        None,
        "None or a dict of Spark settings",
        "settings for the Spark session a bulk replay starts",
        _config,
    ),
    Option(
        "bulk_replay_dir",
        None,
        "None or a directory path",
        "where bulk replays write their Parquet snapshots (None: a temporary directory)",
        _directory,
    ),
    Option(
        "upstream",
        None,
        "None or a mysql://user:pass@host:port/db URL",
        "mirror this MySQL/MariaDB database and replicate its binlog (noria_py.upstream)",
        _text_or_none,
    ),
    Option(
        "upstream_server_id",
        None,
        "None or a positive integer",
        "the replica server id used on the upstream's binlog (None: one derived from the pid)",
        lambda v: v if v is None else _count(1)(v),
    ),
    Option(
        "upstream_spark_rows",
        None,
        "None, False or a row count >= 0",
        "upstream tables of at least this many rows are snapshotted by Spark over JDBC "
        "(None: a million when pyspark is installed; False: never)",
        _rows_or_off,
    ),
    Option(
        "upstream_read_your_writes",
        None,
        "None or seconds >= 0",
        "after a write, the next cached read waits this long for it to replicate, then "
        "asks the upstream (None: off)",
        _number(0, none=True),
    ),
)

OPTIONS: dict[str, Option] = {o.name: o for o in _TABLE}


def validate(options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option (``OPTIONS``), as given in ``options`` or at its default. Raises
    ``ProgrammingError`` for an unknown name or a value the option does not take."""
    for name in options:
        if name not in OPTIONS:
            close = difflib.get_close_matches(str(name), OPTIONS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ProgrammingError(f"Unknown option '{name}'{hint} (options: {', '.join(OPTIONS)})")
    out = {}
    for name, opt in OPTIONS.items():
        if name not in options:
            out[name] = opt.default
            continue
        value = options[name]
        try:
            out[name] = opt.check(value)
        except _Bad:
            raise ProgrammingError(
                f"Option {name}={value!r} is not allowed: {name} takes {opt.allowed}"
            ) from None
    return out


def describe() -> str:
    """The table as text: one option a line (name, default, values, what it does)."""
    return "\n".join(
        f"{o.name} (default {o.default!r}; {o.allowed}): {o.doc}" for o in OPTIONS.values()
    )

"""Per-connection session state of the MySQL-wire server, and the statements it answers itself.

The engine answers SQL about data (SELECT, INSERT/UPDATE/DELETE, DDL, SHOW TABLES, DESCRIBE,
SHOW CACHES, EXPLAIN). Everything a MySQL *server session* owns is answered here: system
variables (``SELECT @@version``, ``SET ...``, ``SHOW VARIABLES``), ``SELECT DATABASE()`` and
friends, ``USE``, ``SHOW DATABASES``, and transactions. ``SHOW WARNINGS`` and ``SHOW ERRORS``
go to the engine with the session's ``txn``, which holds the connection's diagnostics area
(``noria_py.diagnostics``); ``@@warning_count`` and ``@@error_count`` are read from it here.

Transactions
------------
Each connection has its own transaction (``Engine.new_txn``). ``BEGIN`` / ``START
TRANSACTION [READ ONLY | READ WRITE]`` start one, and with ``SET autocommit = 0`` every
statement runs inside one until ``COMMIT`` / ``ROLLBACK``. Inside a transaction:

* Every statement runs when it arrives: a duplicate key is 1062 at the INSERT, the OK packet
  carries the statement's own affected rows and insert id, ``LAST_INSERT_ID()`` follows.
* The connection reads its own writes, cached query or not; no other connection sees them
  before ``COMMIT``, and nothing of a rolled-back transaction is ever visible.
* One transaction writes at a time (base storage has one writer). Another connection's write
  waits for it; after ``innodb_lock_wait_timeout`` seconds (default 50) it fails with 1205
  and its transaction stays open, as in InnoDB. Reads never wait: other connections read the
  last committed state.
* ``SAVEPOINT``, ``ROLLBACK TO [SAVEPOINT]`` and ``RELEASE SAVEPOINT`` work as in MySQL; a
  READ ONLY transaction refuses writes with 1792. DDL commits the open transaction first.
* A connection that closes, or is reset, rolls its transaction back.

Isolation: READ COMMITTED with reads of one's own writes, and writes serialized (a
transaction that writes holds the write lock until it ends). Unlike InnoDB's REPEATABLE READ,
a transaction's reads are not a snapshot taken at its first read: a row another connection
commits meanwhile becomes visible to the next read.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from noria_py import diagnostics, errors
from noria_py.result import Result
from noria_py.sql import functions as F
from noria_py.sql import names as N

from ..sql.comments import expand, has_executable, remap_syntax_error
from ..sql.literals import LITERAL_SLOTS, literal_value, slots_of, sql_literal
from ..sql.literals import lift_literals as lift_literals_uncached
from ..sql.literals import lift_write_cached as lift_write
from . import protocol as P

SERVER_VERSION = "8.0.36-noria-py"

GLOBAL_DEFAULTS: dict[str, Any] = {
    "auto_increment_increment": 1,
    "auto_increment_offset": 1,
    "autocommit": 1,
    "character_set_client": "utf8mb4",
    "character_set_connection": "utf8mb4",
    "character_set_database": "utf8mb4",
    "character_set_filesystem": "binary",
    "character_set_results": "utf8mb4",
    "character_set_server": "utf8mb4",
    "character_set_system": "utf8mb3",
    "collation_connection": "utf8mb4_general_ci",
    "collation_database": "utf8mb4_general_ci",
    "collation_server": "utf8mb4_general_ci",
    "default_storage_engine": "noria",
    "foreign_key_checks": 1,
    "have_ssl": "DISABLED",
    "init_connect": "",
    "interactive_timeout": 28800,
    "license": "MIT",
    "local_infile": 1,
    "lower_case_table_names": 0,
    "max_allowed_packet": 67108864,
    "max_execution_time": 0,
    "net_buffer_length": 16384,
    "net_read_timeout": 30,
    "net_write_timeout": 60,
    "performance_schema": 0,
    "query_cache_size": 0,
    "query_cache_type": "OFF",
    "session_track_schema": 1,
    "sql_auto_is_null": 0,
    "sql_mode": (
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
        "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
    ),
    "sql_select_limit": 18446744073709551615,
    "sql_safe_updates": 0,
    "system_time_zone": "UTC",
    "time_zone": "SYSTEM",
    "innodb_lock_wait_timeout": 50,
    "lock_wait_timeout": 86400,
    "transaction_isolation": "READ-COMMITTED",
    "tx_isolation": "READ-COMMITTED",
    "transaction_read_only": 0,
    "tx_read_only": 0,
    "unique_checks": 1,
    "sql_notes": 1,
    "sql_log_bin": 1,  # (MySQL's dumps turn it off: there is no binary log to keep out of)
    "version": SERVER_VERSION,
    "version_comment": "noria_py dataflow database",
    "version_compile_machine": "x86_64",
    "version_compile_os": "Linux",
    "wait_timeout": 28800,
}
READ_ONLY_VARS = frozenset(
    (
        "version",
        "version_comment",
        "version_compile_os",
        "version_compile_machine",
        "license",
        "have_ssl",
        "lower_case_table_names",
        "system_time_zone",
        "character_set_system",
        "performance_schema",
    )
)
_BOOL_VARS = frozenset(
    (
        "autocommit",
        "foreign_key_checks",
        "unique_checks",
        "sql_notes",
        "sql_log_bin",
        "sql_auto_is_null",
        "sql_safe_updates",
        "transaction_read_only",
        "tx_read_only",
    )
)
_ALIASES = {"tx_isolation": "transaction_isolation", "tx_read_only": "transaction_read_only"}


class SessionError(errors.Error):
    """An error raised by a statement the server answers itself."""


def _err(msg: str, errno: int, sqlstate: str = "HY000") -> SessionError:
    return SessionError(msg, errno, sqlstate)


# ---------------------------------------------------------------------------------------------
# Statement classification (cached per SQL text)

_LEADING_JUNK = re.compile(
    r"\A(?:\s+|/\*(?!M?!).*?\*/|--(?=\s|\Z)[^\n]*(?:\n|\Z)|#[^\n]*(?:\n|\Z))*", re.S
)
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_SESSION_FUNCS = re.compile(
    r"@@|\b(?:database|schema|version|connection_id|current_user|session_user|system_user|user"
    r"|last_insert_id|row_count|found_rows)\s*\(",
    re.I,
)
_HAS_FROM = re.compile(r"\bfrom\b", re.I)
_USER_VAR = re.compile(r"(?<![@\w])@[A-Za-z_]")
_SELECT_INTO = re.compile(r"\binto\s+(@[A-Za-z_][\w$]*(?:\s*,\s*@[A-Za-z_][\w$]*)*)", re.I)
_FROM_DUAL = re.compile(r"\s+from\s+dual\b", re.I)
_ASSIGN = re.compile(r"(?<![@\w])@([A-Za-z_][\w$.]*)\s*:=")
_FILTERS = re.compile(r"\b(?:where|group|having)\b", re.I)
_LOCK_FN = re.compile(
    r"(?<![\w$])(get_lock|release_lock|release_all_locks|is_free_lock|is_used_lock|sleep)\s*\(",
    re.I,
)
_DESCRIBE = re.compile(
    r"\A(?:describe|desc|explain)\s+(?:(`[^`]+`|\w+)\s*\.\s*)?(`[^`]+`|\w+)\s*\Z", re.I
)
_SHOW_COLUMNS = re.compile(
    r"\Ashow\s+(?:full\s+)?(?:columns|fields)\s+(?:from|in)\s+(?:(`[^`]+`|\w+)\s*\.\s*)?"
    r"(`[^`]+`|\w+)(?:\s+(?:from|in)\s+(`[^`]+`|\w+))?\s*\Z",
    re.I,
)
_SHOW_TABLES = re.compile(
    r"\Ashow\s+(full\s+)?tables(?:\s+(?:from|in)\s+(`[^`]+`|\w+))?(?:\s+(like\s+.*))?\s*\Z",
    re.I | re.S,
)
_SHOW_VARIABLES = re.compile(
    r"\Ashow\s+(?:(global|session|local)\s+)?(variables|status)(?:\s+(like|where)\s+(.*))?\Z",
    re.I | re.S,
)
_SHOW_SIMPLE = re.compile(
    r"\Ashow\s+(databases|schemas|engines|collation|character\s+set|charset"
    r"|(?:full\s+)?processlist)\b(.*)\Z",
    re.I | re.S,
)
_USE = re.compile(r"\Ause\s+(`[^`]+`|\w+)\s*\Z", re.I)
_BEGIN = re.compile(r"\A(?:begin(?:\s+work)?|start\s+transaction\b.*)\Z", re.I | re.S)
_COMMIT = re.compile(r"\Acommit(?:\s+work)?(?:\s+and\s+no\s+chain)?(?:\s+no\s+release)?\Z", re.I)
_SAVEPOINT = re.compile(
    r"\A(?:savepoint\s+\S+|release\s+savepoint\s+\S+|rollback(?:\s+work)?\s+to\s+(?:savepoint\s+)?\S+)"
    r"\Z",
    re.I,
)
_ROLLBACK = re.compile(
    r"\Arollback(?:\s+work)?(?:\s+and\s+no\s+chain)?(?:\s+no\s+release)?\Z", re.I
)

_LOCK_TABLES = re.compile(r"\A(?:un)?lock\s+tables?\b", re.I)
_ERRORS_MU = threading.Lock()  # ServerState.count_error
CACHED_TEXT_MAX = 4096  # longer statement texts are not kept in the per-text caches

WRITE_WORDS = frozenset(("insert", "update", "delete", "replace"))
DDL_WORDS = frozenset(("create", "drop", "alter", "truncate", "rename"))


@dataclass(slots=True)
class Statement:
    """What the server knows about one SQL text, computed once and cached."""

    kind: str  # engine | write | ddl | begin | commit | rollback | set | use | session_select
    #            | const_select | show_vars | show_simple | unsupported | empty | noop | load_local
    #            | vars (a query reading user variables) | select_into | explain
    sql: str  # the text to hand to the engine (may differ from what the client sent)
    info: Any = None


def strip_statement(sql: str) -> str:
    sql = _LEADING_JUNK.sub("", sql, count=1)
    return sql.rstrip().rstrip(";").rstrip()


def _unquote_ident(name: str) -> str:
    if name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _quoted(name: str) -> str:
    return "`" + _unquote_ident(name).replace("`", "``") + "`"


def classify(sql: str) -> Statement:
    sql = expand(sql)  # MySQL's executable comments (/*! ... */) are part of the statement
    text = strip_statement(sql)
    if not text:
        # nothing at all is an error; only comments (or a comment that does not apply to
        # this version) are a statement that does nothing, as in MariaDB
        return Statement("empty" if not sql.strip().strip(";").strip() else "noop", text)
    m = _FIRST_WORD.match(text)
    word = m.group(0).lower() if m else ""
    if word == "select":
        m = _SELECT_INTO.search(text)
        if m and text[: m.start()].count("'") % 2 == 0:
            # SELECT ... INTO @a, @b: the query without INTO; its one row into the variables
            names = [v.strip()[1:].lower() for v in m.group(1).split(",")]
            return Statement("select_into", text[: m.start()] + text[m.end() :], names)
        # GET_LOCK(name, timeout), SLEEP(n): the session's named locks and waits; SELECT @x :=
        # expr: assignments in order. Both answered without a FROM clause only
        for pattern, kind in ((_LOCK_FN, "lock_select"), (_ASSIGN, "assign_select")):
            m = pattern.search(text)
            if m and text[: m.start()].count("'") % 2 == 0:
                rest = _FROM_DUAL.sub("", text)
                if _HAS_FROM.search(rest) or _FILTERS.search(rest):
                    what = f"{m.group(1).upper()}()" if kind == "lock_select" else "@v := ..."
                    return Statement("unsupported", text, f"{what} in a query")
                return Statement(kind, rest)
        if _SESSION_FUNCS.search(text) or _USER_VAR.search(text):
            rest = _FROM_DUAL.sub("", text)
            if not _HAS_FROM.search(rest):
                return Statement("session_select", rest)
            if _USER_VAR.search(text):
                return Statement("vars", text)  # @x in a query: its value in its place
        elif not _HAS_FROM.search(text):
            return Statement("const_select", text)
        return Statement("engine", text)
    if word in WRITE_WORDS:
        return Statement("write", text, word)
    if word == "load":
        if re.match(r"load\s+data\s+(?:(?:low_priority|concurrent)\s+)?local\b", text, re.I):
            return Statement("load_local", text)  # the client sends the file (CommandProtocol)
        return Statement("write", text, word)
    if word in DDL_WORDS:
        return Statement("ddl", text)
    if word in ("describe", "desc", "explain"):
        m = _DESCRIBE.match(text)
        if m:
            table = _quoted(m.group(2))
            if m.group(1):
                table = f"{_quoted(m.group(1))}.{table}"
            return Statement("engine", f"DESCRIBE {table}", m.group(1))
        return Statement("explain", text)  # of a query: explained, never installed
    if word == "show":
        m = _SHOW_COLUMNS.match(text)
        if m:
            full = "FULL " if re.match(r"show\s+full\b", text, re.I) else ""
            db = m.group(1) or m.group(3)
            where = f" FROM {_quoted(db)}" if db else ""
            return Statement("engine", f"SHOW {full}COLUMNS FROM {_quoted(m.group(2))}{where}")
        m = _SHOW_TABLES.match(text)
        if m:
            full = "FULL " if m.group(1) else ""
            where = f" FROM {_quoted(m.group(2))}" if m.group(2) else ""
            like = f" {m.group(3)}" if m.group(3) else ""
            return Statement("engine", f"SHOW {full}TABLES{where}{like}")
        m = _SHOW_VARIABLES.match(text)
        if m:
            return Statement("show_vars", text, (m.group(2).lower(), m.group(3), m.group(4)))
        m = _SHOW_SIMPLE.match(text)
        if m:
            return Statement("show_simple", text, (m.group(1).lower().split()[-1], m.group(2)))
        return Statement("engine", text)
    if word == "set":
        return Statement("set", text, _parse_set(text[3:]))
    if word == "use":
        m = _USE.match(text)
        if m:
            return Statement("use", text, _unquote_ident(m.group(1)))
    if word in ("begin", "start") and _BEGIN.match(text):
        return Statement("begin", text)
    if word == "commit" and _COMMIT.match(text):
        return Statement("commit", text)
    if word == "rollback" and _ROLLBACK.match(text):
        return Statement("rollback", text)
    if word in ("savepoint", "release", "rollback") and _SAVEPOINT.match(text):
        return Statement("savepoint", text)
    if word in ("lock", "unlock") and _LOCK_TABLES.match(text):
        return Statement("savepoint", text)  # the engine's: LOCK TABLES, UNLOCK TABLES
    if word in ("savepoint", "release", "rollback", "xa", "lock", "unlock", "kill", "flush"):
        return Statement("unsupported", text, word.upper())
    return Statement("engine", text)


# ---------------------------------------------------------------------------------------------
# SET


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside quotes and parentheses."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


_SET_NAMES = re.compile(r"\Anames\s+(\S+?)(?:\s+collate\s+(\S+))?\Z", re.I)
_SET_CHARSET = re.compile(r"\A(?:character\s+set|charset)\s+(\S+)\Z", re.I)
_SET_TXN = re.compile(r"\A(?:(global|session|local)\s+)?transaction\s+(.*)\Z", re.I | re.S)
_SET_VAR = re.compile(
    r"\A(?:(global|session|local|persist|persist_only)\s+|@@(global|session|local|persist)\.|@@)?"
    r"([A-Za-z_][\w$]*)\s*:?=\s*(.+)\Z",
    re.I | re.S,
)
_SET_USER_VAR = re.compile(r"\A@(`[^`]+`|'[^']+'|[\w$.]+)\s*:?=\s*(.+)\Z", re.S)
_ACCESS_MODE = re.compile(r"\bread\s+(only|write)\b", re.I)
_ISOLATION = re.compile(
    r"isolation\s+level\s+(read\s+uncommitted|read\s+committed|repeatable\s+read|serializable)",
    re.I,
)


class _Expr:
    """A SET value that is not a literal (``@@sql_mode``, ``@old``, ``1 + 1``, ``NOW()``):
    evaluated when the statement runs, every one before any is assigned (``_h_set``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_BARE_WORD = re.compile(r"[A-Za-z_][\w$]*|`[^`]+`")


def _set_value(text: str) -> Any:
    t = text.strip()
    if _is_literal(t) or _BARE_WORD.fullmatch(t):
        return _literal_value(t)  # (a bare word is a system variable's value: ON, utf8mb4)
    return _Expr(t)


def _eval_set(s: Session, value: _Expr) -> Any:
    expr = value.text
    if _SYSVAR.match(expr) or _USERVAR.match(expr):
        return _session_value(s, expr)
    res = s.engine.execute("SELECT " + _with_variables(s, expr), (), s.txn)
    return res.rows[0][0]


# sql_mode's modes in MariaDB's order (bit i is the i-th), and what the combinations stand for
_SQL_MODES = """REAL_AS_FLOAT PIPES_AS_CONCAT ANSI_QUOTES IGNORE_SPACE IGNORE_BAD_TABLE_OPTIONS
    ONLY_FULL_GROUP_BY NO_UNSIGNED_SUBTRACTION NO_DIR_IN_CREATE POSTGRESQL ORACLE MSSQL DB2
    MAXDB NO_KEY_OPTIONS NO_TABLE_OPTIONS NO_FIELD_OPTIONS MYSQL323 MYSQL40 ANSI
    NO_AUTO_VALUE_ON_ZERO NO_BACKSLASH_ESCAPES STRICT_TRANS_TABLES STRICT_ALL_TABLES
    NO_ZERO_IN_DATE NO_ZERO_DATE ALLOW_INVALID_DATES ERROR_FOR_DIVISION_BY_ZERO TRADITIONAL
    NO_AUTO_CREATE_USER HIGH_NOT_PRECEDENCE NO_ENGINE_SUBSTITUTION PAD_CHAR_TO_FULL_LENGTH
    EMPTY_STRING_IS_NULL SIMULTANEOUS_ASSIGNMENT TIME_ROUND_FRACTIONAL""".split()
_SQL_MODE_BIT = {m: i for i, m in enumerate(_SQL_MODES)}
_SQL_MODE_GROUPS = {
    "ANSI": ("REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE"),
    "TRADITIONAL": (
        "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
        "ERROR_FOR_DIVISION_BY_ZERO", "NO_AUTO_CREATE_USER", "NO_ENGINE_SUBSTITUTION",
    ),
}  # fmt: skip
# modes that change what statements mean (their parsing, types or comparisons), which the
# engine does not implement: refused (1235) rather than silently answered the default way
_SQL_MODES_REFUSED = frozenset(
    """REAL_AS_FLOAT PIPES_AS_CONCAT ANSI_QUOTES NO_UNSIGNED_SUBTRACTION POSTGRESQL ORACLE
    MSSQL DB2 MAXDB MYSQL323 MYSQL40 NO_BACKSLASH_ESCAPES ALLOW_INVALID_DATES
    HIGH_NOT_PRECEDENCE PAD_CHAR_TO_FULL_LENGTH EMPTY_STRING_IS_NULL SIMULTANEOUS_ASSIGNMENT
    TIME_ROUND_FRACTIONAL""".split()
)


def _sql_mode(name: str, value: Any) -> str:
    """sql_mode's value as MariaDB keeps it: the modes' names in its order, upper case,
    comma separated, a combination (ANSI, TRADITIONAL) with the modes it stands for; a number
    is the modes' bits. 1231 for a name it does not know, or NULL; 1235 for a mode that
    changes what statements mean, which this engine does not implement."""
    shown = "NULL" if value is None else value
    bad = _err(f"Variable '{name}' can't be set to the value of '{shown}'", 1231, "42000")
    if value is None or isinstance(value, float):
        raise bad
    if isinstance(value, int):
        if value < 0 or value >> len(_SQL_MODES):
            raise bad
        modes = {m for i, m in enumerate(_SQL_MODES) if value >> i & 1}
    else:
        modes = set()
        for item in str(value).split(","):
            if not item:
                continue
            mode = item.upper()
            if mode not in _SQL_MODE_BIT:
                raise _err(
                    f"Variable '{name}' can't be set to the value of '{item}'", 1231, "42000"
                )
            modes.add(mode)
    for group, members in _SQL_MODE_GROUPS.items():
        if group in modes:
            modes.update(members)
    refused = sorted(modes & _SQL_MODES_REFUSED, key=_SQL_MODE_BIT.get)
    if refused:
        raise _err(
            f"This version of noria_py doesn't yet support 'sql_mode {refused[0]}'", 1235, "42000"
        )
    return ",".join(sorted(modes, key=_SQL_MODE_BIT.get))


def _apply_sql_mode(txn: Any, value: str) -> None:
    """The modes the engine reads from a connection's transaction state."""
    modes = value.split(",")
    txn.keep_zero = "NO_AUTO_VALUE_ON_ZERO" in modes
    txn.strict = "STRICT_TRANS_TABLES" in modes or "STRICT_ALL_TABLES" in modes
    txn.div_zero = "ERROR_FOR_DIVISION_BY_ZERO" in modes


def _literal_value(text: str) -> Any:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        body = t[1:-1]
        q = t[0]
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body).replace(
            q + q, q
        )
    low = t.lower()
    if low in ("on", "true"):
        return 1
    if low in ("off", "false"):
        return 0
    if low == "null":
        return None
    if low == "default":
        return _DEFAULT
    if re.fullmatch(r"[-+]?\d+", t):
        return int(t)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+)(e[-+]?\d+)?", t, re.I):
        return float(t)
    return _unquote_ident(t)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "Z": "\x1a"}


class _Default:
    pass


_DEFAULT = _Default()


def _parse_set(body: str) -> list[tuple[str, str, Any]]:
    """Parse the part after SET into (scope, name, value) items; raises SessionError."""
    items = []
    for part in split_top_level(body.strip()):
        if not part:
            raise _err("You have an error in your SQL syntax near 'SET'", 1064, "42000")
        m = _SET_NAMES.match(part)
        if m:
            cs = str(_literal_value(m.group(1)))
            items.append(("session", "names", (cs, m.group(2) and str(_literal_value(m.group(2))))))
            continue
        m = _SET_CHARSET.match(part)
        if m:
            items.append(("session", "names", (str(_literal_value(m.group(1))), None)))
            continue
        m = _SET_TXN.match(part)
        if m:
            scope = (m.group(1) or "next").lower()
            iso = _ISOLATION.search(m.group(2))
            if iso:
                level = "-".join(iso.group(1).upper().split())
                items.append((scope, "transaction_isolation", level))
            access = _ACCESS_MODE.search(m.group(2))
            if access:
                ro = int(access.group(1).lower() == "only")
                items.append((scope, "transaction_read_only", ro))
            continue
        m = _SET_USER_VAR.match(part)
        if m:
            items.append(("user", _unquote_ident(m.group(1).strip("'")), _set_value(m.group(2))))
            continue
        m = _SET_VAR.match(part)
        if m:
            scope = (m.group(1) or m.group(2) or "session").lower()
            if scope == "local":
                scope = "session"
            items.append((scope, m.group(3).lower(), _set_value(m.group(4))))
            continue
        raise _err(f"You have an error in your SQL syntax near '{part[:40]}'", 1064, "42000")
    return items


# ---------------------------------------------------------------------------------------------
# Result helpers


def _type_of(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool) or isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    return "VARCHAR"


def rows_result(columns: list[str], rows: list[tuple], types: list[str] | None = None) -> Result:
    if types is None:
        types = []
        for i in range(len(columns)):
            t = "NULL"
            for r in rows:
                if r[i] is not None:
                    t = _type_of(r[i])
                    break
            types.append(t)
    return Result(
        columns=columns,
        rows=rows,
        column_types=types,
        nullable=[True] * len(columns),
        rowcount=len(rows),
    )


def like_to_regex(pattern: str) -> re.Pattern:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.I | re.S)


# ---------------------------------------------------------------------------------------------
# The session


@dataclass(slots=True)
class LookupPlan:
    """How the texts of one shape become a parameterized engine SELECT."""

    slots: tuple[int, ...]  # which literals (in text order) become parameters
    sql: str | None  # the parameterized text, when it does not depend on the literals
    refused: bool = False  # the engine would not run the parameterized text
    # for the connection's fast path: the engine statement a lookup is (valid while it is the
    # engine's cached statement for ``sql``) and its result shape
    prep: Any = None
    shape: Any = None


_NO_PLAN: Any = object()


def _lookup_plan(parts: list[str], sql: str) -> LookupPlan | None:
    """The plan for ``sql``'s shape, or None when its texts must take the general path.

    A shape qualifies when the text with every literal blanked (its skeleton) is a SELECT with a
    FROM clause and no session functions outside literals: then every text of the shape
    classifies as an engine SELECT whatever its literals hold, as :func:`classify` would decide.
    """
    if strip_statement(sql) != sql:
        return None  # comments, spaces or a semicolon around it: the general path strips them
    skeleton = "".join(
        p if i % 2 == 0 else ("''" if p[0] == "'" else "0") for i, p in enumerate(parts)
    )
    if classify(skeleton).kind != "engine" or classify(sql).kind != "engine":
        return None
    if _SESSION_FUNCS.search(skeleton) or not _HAS_FROM.search(_FROM_DUAL.sub("", skeleton)):
        return None
    lifted = lift_literals_uncached(sql)
    if lifted is None:
        return None
    slots = slots_of(parts, sql, lifted)
    if slots is None or not slots:
        return None
    return LookupPlan(slots, lifted[0] if len(slots) == len(parts) // 2 else None)


@dataclass
class ServerState:
    """State shared by every connection of one server."""

    engine: Any
    default_database: str = "noria"
    globals: dict[str, Any] = field(default_factory=lambda: dict(GLOBAL_DEFAULTS))
    started: float = field(default_factory=time.time)
    connections: int = 0
    connections_total: int = 0  # accepted since the server started (noria_py/monitor)
    errors: dict[int, int] = field(default_factory=dict)  # error packets sent, by MySQL code
    questions: int = 0
    classify_cache: dict[str, Statement] = field(default_factory=dict)
    classify_cache_limit: int = 20000
    # normalized SQL texts whose literal-lifted form the engine refused (the engine's own set,
    # shared with its embedded path, when it keeps one)
    no_lift: set[str] = field(default_factory=set)

    # shape of a text (its parts between literals) -> how its lookups are lifted, or None
    lookup_plans: dict[tuple[str, ...], LookupPlan | None] = field(default_factory=dict)
    lookup_plans_limit: int = 10000
    # per client character set: exact COM_QUERY payloads -> outcome of lifted_lookup
    text_plans: dict[str, dict[bytes, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        no_lift = getattr(self.engine, "no_lift", None)
        if isinstance(no_lift, set):
            self.no_lift = no_lift

    def count_error(self, errno: int) -> None:
        """One more error packet with code ``errno`` went to a client (the loop and the
        worker thread both send them: the update is one locked step)."""
        with _ERRORS_MU:
            self.errors[errno] = self.errors.get(errno, 0) + 1

    def text_plans_for(self, codec: str) -> dict[bytes, Any]:
        plans = self.text_plans.get(codec)
        if plans is None:
            plans = self.text_plans[codec] = {}
        return plans

    def statement(self, sql: str) -> Statement:
        st = self.classify_cache.get(sql)
        if st is None:
            try:
                st = classify(sql)
            except SessionError as e:
                st = Statement("error", sql, e)
            if len(sql) <= CACHED_TEXT_MAX:
                if len(self.classify_cache) >= self.classify_cache_limit:
                    self.classify_cache.clear()
                self.classify_cache[sql] = st
        return st

    def lifted_lookup(self, sql: str) -> tuple[LookupPlan, list[Any]] | None:
        """The fast way in for a client-side-bound SELECT (``... WHERE id = 42``).

        Returns the statement's lookup plan and its parameters when every text of its shape is
        an engine SELECT whose literals are lifted into parameters, without classifying or
        tokenizing the text again: one regex split and one dict lookup. None sends the text
        down the general path (:meth:`Session.execute`).
        """
        if "`" in sql or '"' in sql or len(sql) > CACHED_TEXT_MAX or has_executable(sql):
            return None
        parts = LITERAL_SLOTS.split(sql)
        # the text between the literals, and which literals are strings: a plan holds for the
        # literals' types (Engine.lifts_as_written: a number and a string compared with one
        # column may not both bind as they compare)
        shape = (*parts[0::2], *[p[0] == "'" for p in parts[1::2]])
        plan = self.lookup_plans.get(shape, _NO_PLAN)
        if plan is _NO_PLAN:
            plan = _lookup_plan(parts, sql)
            if plan is not None and plan.sql in self.no_lift:
                plan.refused = True
            if len(self.lookup_plans) >= self.lookup_plans_limit:
                self.lookup_plans.clear()
            self.lookup_plans[shape] = plan
        if plan is None or plan.refused:
            return None
        slots = plan.slots
        if plan.sql is not None and len(slots) == 1:
            return plan, [literal_value(parts[2 * slots[0] + 1])]
        params = [literal_value(parts[2 * i + 1]) for i in slots]
        if plan.sql is not None:
            return plan, params
        out = list(parts)
        for i in slots:
            out[2 * i + 1] = "?"
        return LookupPlan(slots, "".join(out)), params


class Session:
    """One client connection's session: variables, current database, transaction."""

    def __init__(self, state: ServerState, connection_id: int = 0) -> None:
        self.state = state
        self.engine = state.engine
        self.connection_id = connection_id
        self.vars: dict[str, Any] = {}
        self.user_vars: dict[str, Any] = {}
        self.database: str | None = None
        self.username: str | None = None
        self.txn = state.engine.new_txn()
        self.txn.autocommit = bool(state.globals.get("autocommit", 1))
        _apply_sql_mode(self.txn, str(state.globals.get("sql_mode", "")))
        self.last_insert_id = 0
        self.last_rowcount = -1
        self.client_codec = "utf-8"
        self.variables: Any = None  # set by the connection for mysql-mimic's handshake code
        self.fn_context = F.Context(connection_id=connection_id)
        # upstream mode: this session's routing and upstream session (noria_py.upstream)
        mirror = self.engine.upstream
        self.router = mirror.router() if mirror is not None else None

    @property
    def autocommit(self) -> bool:
        return self.txn.autocommit

    @autocommit.setter
    def autocommit(self, on: bool) -> None:
        self.txn.autocommit = bool(on)

    @property
    def lock_wait_timeout(self) -> float:
        try:
            return float(self.get_var("innodb_lock_wait_timeout"))
        except (errors.Error, TypeError, ValueError):
            return 50.0

    def use(self, name: str) -> None:
        """USE name / COM_INIT_DB / the handshake's database: 1049 when it does not exist.
        In upstream mode the upstream's database is the mirror, this server's own."""
        mirror = self.engine.upstream
        if mirror is not None:
            low = name.lower()
            if low in (N.HOME, mirror.url.database.lower()):
                name = mirror.url.database  # (the server's default at login too)
            if self.router.database.lower() != name.lower():
                self.router.execute(f"USE `{name.replace('`', '``')}`")
            if name == mirror.url.database:
                self.engine.use(N.HOME, self.txn)
                self.database = name
                return
        self.database = self.engine.use(name, self.txn)

    def time_zone(self) -> str:
        """The session's time_zone (its own, else the server's)."""
        return str(self.vars.get("time_zone", self.state.globals.get("time_zone", "SYSTEM")))

    def _bind_context(self) -> None:
        """Make this session's values what VERSION(), DATABASE(), LAST_INSERT_ID() ... read."""
        ctx = self.fn_context
        ctx.connection_id = self.connection_id or 0
        ctx.database = self.database
        ctx.last_insert_id = self.last_insert_id
        ctx.row_count = self.last_rowcount
        ctx.user = f"{self.username or ''}@localhost"
        ctx.version = str(self.state.globals.get("version", ctx.version))
        ctx.time_zone = self.time_zone()
        ctx.now = None
        F.set_context(ctx)

    # -- variables -------------------------------------------------------------------------

    def drop_notes(self, res: Result) -> None:
        """``sql_notes`` off: the statement's notes are not recorded (its warnings are)."""
        kept = [c for c in res.conditions if c[0] != "Note"]
        if len(kept) != len(res.conditions):
            res.conditions = kept
            if self.txn.diag and any(c[0] == "Note" for c in self.txn.diag):
                self.txn.diag = tuple(c for c in self.txn.diag if c[0] != "Note")

    def get_var(self, name: str, scope: str = "session") -> Any:
        name = name.lower()
        key = _ALIASES.get(name, name)
        if key in diagnostics.VARIABLES:  # @@warning_count, @@error_count
            if scope == "global":
                raise diagnostics.session_only(key)
            return diagnostics.variable(self.txn.diag, key)
        if key == "autocommit" and scope != "global":
            return int(self.autocommit)
        if scope != "global" and key in self.vars:
            return self.vars[key]
        if key in self.state.globals:
            return self.state.globals[key]
        raise _err(f"Unknown system variable '{name}'", P.ER_UNKNOWN_SYSTEM_VARIABLE)

    def set_var(self, scope: str, name: str, value: Any) -> None:
        key = _ALIASES.get(name, name)
        if key in diagnostics.VARIABLES:
            raise diagnostics.read_only(key)
        if key not in self.state.globals:
            raise _err(f"Unknown system variable '{name}'", P.ER_UNKNOWN_SYSTEM_VARIABLE)
        if key in READ_ONLY_VARS:
            raise _err(f"Variable '{name}' is a read only variable", 1238)
        if value is _DEFAULT:
            value = GLOBAL_DEFAULTS.get(key)
        if key in _BOOL_VARS:
            if isinstance(value, str):
                value = {"on": 1, "off": 0, "true": 1, "false": 0}.get(value.lower(), value)
            if value not in (0, 1):
                shown = "NULL" if value is None else value
                raise _err(
                    f"Variable '{name}' can't be set to the value of '{shown}'", 1231, "42000"
                )
        if key == "sql_mode":
            value = _sql_mode(name, value)
        if scope in ("global", "persist", "persist_only"):
            self.state.globals[key] = value
            return
        if key == "autocommit":
            on = bool(value)
            if on and not self.autocommit:
                self.engine.commit(self.txn)  # MySQL: autocommit on commits the open transaction
            self.autocommit = on
            return
        if key == "foreign_key_checks":
            self.txn.fk_checks = bool(value)
        elif key == "sql_notes":
            self.txn.notes = bool(value)
        elif key == "sql_mode":
            _apply_sql_mode(self.txn, value)
        self.vars[key] = value

    # -- status ------------------------------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self.txn.active

    @property
    def status_flags(self) -> int:
        txn = self.txn
        flags = P.STATUS_AUTOCOMMIT if txn.autocommit else 0
        if self.router is not None and self.router.pinned:
            flags |= P.STATUS_IN_TRANS  # the upstream session's transaction
        if txn.active:
            flags |= P.STATUS_IN_TRANS
            if txn.read_only:
                flags |= P.STATUS_IN_TRANS_READONLY
        return flags

    def reset(self) -> None:
        """COM_RESET_CONNECTION / COM_CHANGE_USER: drop session state, any transaction and
        the named locks (GET_LOCK)."""
        self.engine.rollback(self.txn)
        self.release_user_locks()
        self.vars.clear()
        self.user_vars.clear()
        self.autocommit = bool(self.state.globals.get("autocommit", 1))
        self.last_insert_id = 0
        self.txn.diag = diagnostics.NONE
        if self.router is not None:
            self.router.close()  # and a new upstream session at the next statement
            self.router = self.engine.upstream.router()

    def release_user_locks(self) -> None:
        """Release the named locks this session took with GET_LOCK (noria_py.user_locks)."""
        if getattr(self.engine, "_user_locks", None) is not None:
            self.engine._user_locks.release_all(self)

    def close(self) -> None:
        """The connection is gone: its table and named locks are released, its open
        transaction rolls back."""
        self.release_user_locks()
        self.engine.end_session(self.txn)
        if self.router is not None:
            self.router.close()

    @property
    def upstream_only(self) -> bool:
        """Upstream mode, inside an upstream transaction, waiting for a write to replicate or
        in another database than the mirror's: no read may take the dataflow's lock-free
        path."""
        r = self.router
        return r is not None and (
            r.pinned
            or r.target is not None
            or not r.in_mirrored_database
            or bool(r.mirror.replicator.copying)
        )

    # -- execution ---------------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement for this session; raises noria_py.errors.Error subclasses."""
        try:
            return self._execute(sql, params)
        except errors.ProgrammingError as e:
            if e.errno == 1064 and has_executable(sql):
                raise remap_syntax_error(e, sql) from None  # (found in the expanded text)
            raise

    def _execute(self, sql: str, params: Sequence[Any]) -> Result:
        state = self.state
        state.questions += 1
        self._bind_context()
        st = state.statement(sql)
        kind = st.kind
        if self.router is not None:
            res = self._upstream(sql, st, params)
            if res is not None:
                return res
        if kind == "engine":
            res = self._engine_read(st, params)
        elif kind == "write":
            return self._write(st, params)  # ROW_COUNT(): its rows (_note)
        else:
            handler = _HANDLERS.get(kind)
            if handler is None:
                raise _err(f"Unhandled statement kind {kind}", P.ER_UNKNOWN_ERROR)
            res = handler(self, st, params)
        if res.conditions and not self.txn.notes:
            self.drop_notes(res)
        # ROW_COUNT() after a result set is -1, after other statements what they changed
        self.last_rowcount = -1 if res.columns is not None else max(res.rowcount, 0)
        if res.columns is not None and kind in ("const_select", "session_select", "vars"):
            self.txn.found_rows = len(res.rows)  # (the engine counts its own SELECTs)
        return res

    def execute_lifted(self, sql: str, plan: LookupPlan, params: Sequence[Any]) -> Result:
        """Run a lifted lookup (see ServerState.lifted_lookup) through the engine
        (``Engine.execute_lifted``). If the engine answers ``sql`` as written instead (it
        refuses the parameterized text, remembered in its ``no_lift``, or these literals would
        not compare as parameters as they do in the text), the texts of this plan's shape are
        sent as written from now on."""
        self.state.questions += 1
        self._bind_context()
        if self.router is not None:
            res = self._upstream(sql, self.state.statement(sql), ())
            if res is not None:
                return res
        res, lifted = self.engine.execute_lifted(sql, plan.sql, params, self.txn)
        if not lifted:
            plan.refused = True
        self.last_rowcount = -1
        return res

    def _upstream(self, sql: str, st: Statement, params: Sequence[Any]) -> Result | None:
        """Upstream mode (``noria_py.upstream.routing``): the statement's result from the
        upstream, or None when this server answers it (a read the dataflow maintains, SHOW,
        constant SELECTs; SET and USE run on both)."""
        r = self.router
        kind = st.kind
        if kind == "engine":
            where = r.route(self.engine, sql)
            if where == "engine" and r.may_read_cached():
                return None
            return r.status() if where == "status" else r.execute(sql, params)
        if kind in ("const_select", "show_vars", "show_simple", "empty"):
            return None
        res = r.execute(sql, params)
        if kind in ("set", "use"):
            try:
                handler = _HANDLERS[kind]
                handler(self, st, params)
            except errors.Error:
                pass  # a variable or database only the upstream has
        elif res.lastrowid:
            self.last_insert_id = res.lastrowid
        return res

    def _engine_read(self, st: Statement, params: Sequence[Any]) -> Result:
        # a text without parameters is answered as its literal-lifted form by the engine
        # (Engine.execute), with the fallback to the text as written
        return self.engine.execute(st.sql, params, self.txn)

    def _lift_write(self, sql: str, params: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        """A write sent with its values in the text, as its parameterized form and values
        (``literals.lift_write``): all writes of one shape share one prepared statement instead
        of a parse each. The text stays as it is when the engine cannot prepare that form."""
        if params:
            return sql, params
        lifted = lift_write(sql)
        if lifted is None or lifted[0] in self.state.no_lift:
            return sql, params
        try:
            prep = self.engine.prepare(lifted[0])
        except errors.Error:
            self.state.no_lift.add(lifted[0])
            return sql, params
        if getattr(prep, "param_count", -1) != len(lifted[1]):
            self.state.no_lift.add(lifted[0])
            return sql, params
        return lifted[0], tuple(lifted[1])

    def _write(self, st: Statement, params: Sequence[Any]) -> Result:
        if not self.txn.active and self.vars.get("transaction_read_only"):
            raise errors.read_only_transaction()  # every statement is a READ ONLY transaction
        sql = st.sql
        if "@" in sql and st.info != "load" and _USER_VAR.search(sql):
            # INSERT ... VALUES (@x): its value (LOAD DATA's @vars are the file's fields)
            sql = _with_variables(self, sql)
        sql, params = self._lift_write(sql, params)
        res = self.engine.execute(sql, params, self.txn)
        self._note(res)
        return res

    def load_local(self, sql: str, source: Any) -> Result:
        """``LOAD DATA LOCAL INFILE`` once the client has sent the file (``source``, a binary
        file holding its bytes): the connection asks for it, see ``CommandProtocol``."""
        self._bind_context()
        if self.router is not None:  # the upstream loads it; replication brings the rows
            res = self.router.load_local(sql, source)
            self._note(res)
            return res
        if not self.txn.active and self.vars.get("transaction_read_only"):
            raise errors.read_only_transaction()
        res = self.engine.load_local(sql, source, self.txn)
        self._note(res)
        return res

    def _note(self, res: Result) -> None:
        if res.lastrowid:
            self.last_insert_id = res.lastrowid
        self.last_rowcount = res.rowcount


# ---------------------------------------------------------------------------------------------
# Handlers for statements the server answers


def _h_ddl(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    return s.engine.execute(st.sql, params, s.txn)  # commits the open transaction first


def _h_begin(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    modes = " ".join(st.sql.lower().split())
    read_only = "read only" in modes
    if read_only and "read write" in modes:
        raise _err(
            "You have an error in your SQL syntax; READ ONLY and READ WRITE together",
            P.ER_PARSE_ERROR,
            "42000",
        )
    if not read_only and "read write" not in modes:
        # SET TRANSACTION READ ONLY (the next transaction) or the session's access mode
        nxt = s.vars.pop("next_transaction_read_only", None)
        read_only = bool(nxt if nxt is not None else s.get_var("transaction_read_only"))
    s.vars.pop("next_transaction_isolation", None)
    s.txn.locked = None  # a transaction releases the table locks (LOCK TABLES)
    s.engine.commit(s.txn)  # MySQL commits an open transaction when a new one begins
    s.engine.begin(s.txn, read_only=read_only)
    return Result()


def _h_commit(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    s.engine.commit(s.txn)
    return Result()


def _h_rollback(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    s.engine.rollback(s.txn)
    return Result()


def _h_savepoint(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    return s.engine.execute(st.sql, (), s.txn)  # SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT


def _h_set(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    items = st.info
    if any(v.__class__ is _Expr for _s, _n, v in items):
        # every value is computed before any is assigned (SET @a = 1, @b = @a reads the @a
        # from before the statement), as MariaDB does
        items = [(a, b, _eval_set(s, v) if v.__class__ is _Expr else v) for a, b, v in items]
    weaker = []
    for i, (scope, name, value) in enumerate(items):
        if _ALIASES.get(name, name) == "transaction_isolation" and isinstance(value, str):
            level = "-".join(value.upper().replace("-", " ").split())
            if level in _STRONGER_ISOLATION:
                # transactions here are READ COMMITTED: the variable says so, and a warning
                weaker.append(level.replace("-", " "))
                items[i] = (scope, name, "READ-COMMITTED")
    for scope, name, value in items:
        if scope == "user":
            s.user_vars[name.lower()] = value
        elif name == "names":
            charset, collation = value
            charset = charset.lower()
            for var in (
                "character_set_client",
                "character_set_connection",
                "character_set_results",
            ):
                s.vars[var] = charset
            s.vars["collation_connection"] = (collation or f"{charset}_general_ci").lower()
        elif scope == "next":
            s.vars[f"next_{name}"] = value
        else:
            s.set_var(scope, name, value)
    if weaker:
        note = (
            "Warning",
            P.ER_NOT_SUPPORTED_YET,
            f"This version of noria_py doesn't yet support 'isolation level {weaker[0]}': "
            "transactions run at READ COMMITTED (a transaction reads its own writes and every "
            "commit before each statement; writes are serialized)",
        )
        s.txn.diag = (note,)
        return Result(conditions=[note])
    return Result()


_STRONGER_ISOLATION = frozenset(("REPEATABLE-READ", "SERIALIZABLE"))


def _h_use(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    s.use(st.info)
    return Result()


def _h_empty(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    raise _err("Query was empty", P.ER_EMPTY_QUERY, "42000")


def _h_noop(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    return Result()


def _h_unsupported(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    raise _err(f"{st.info} is not supported by this server", P.ER_NOT_SUPPORTED_YET, "42000")


def _h_load_local(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    # only COM_QUERY can ask the client for its file
    raise _err(
        "This command is not supported in the prepared statement protocol yet",
        P.ER_UNSUPPORTED_PS,
        "HY000",
    )


def _h_error(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    raise st.info


def _h_show_simple(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    what, rest = st.info
    if what != "processlist":
        s.txn.diag = diagnostics.NONE  # MySQL reads these from tables (information_schema)
    if what in ("databases", "schemas"):
        rows = [(n,) for n in s.engine.database_names()]
        m = re.match(r"\s*like\s+(.+)\Z", rest or "", re.I | re.S)
        if m:
            rx = like_to_regex(str(_literal_value(m.group(1))))
            rows = [r for r in rows if rx.match(r[0])]
        return rows_result(["Database"], rows, ["VARCHAR"])
    if what == "engines":
        return rows_result(
            ["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"],
            [("noria", "DEFAULT", "Partially stateful dataflow", "YES", "NO", "YES")],
            ["VARCHAR"] * 6,
        )
    if what == "processlist":
        return rows_result(
            ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"],
            [],
            ["BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR", "VARCHAR"],
        )
    if what in ("collation",):
        return rows_result(
            ["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"],
            [("utf8mb4_general_ci", "utf8mb4", 45, "Yes", "Yes", 1)],
        )
    return rows_result(
        ["Charset", "Description", "Default collation", "Maxlen"],
        [("utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", 4)],
    )


def _h_show_vars(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    what, mode, arg = st.info
    s.txn.diag = diagnostics.NONE  # MySQL reads them from tables (information_schema)
    if what == "status":
        uptime = int(time.time() - s.state.started)
        items = {
            "Uptime": uptime,
            "Threads_connected": s.state.connections,
            "Questions": s.state.questions,
        }
    else:
        items = dict(s.state.globals)
        items.update(s.vars)
        items["autocommit"] = int(s.autocommit)
        items.pop("next_transaction_isolation", None)
        items.pop("next_transaction_read_only", None)
    rows = [(k, _show_value(v, k in _BOOL_VARS)) for k, v in sorted(items.items())]
    if mode:
        if mode.lower() == "like":
            rx = like_to_regex(str(_literal_value(arg)))
            rows = [r for r in rows if rx.match(r[0])]
        else:
            m = re.fullmatch(r"\s*variable_name\s*(=|in|like)\s*(.+)", arg, re.I | re.S)
            if not m:
                raise _err("Only WHERE Variable_name = / IN / LIKE is supported", 1235, "42000")
            op, rhs = m.group(1).lower(), m.group(2).strip()
            if op == "in":
                wanted = {str(_literal_value(v)).lower() for v in split_top_level(rhs.strip("() "))}
                rows = [r for r in rows if r[0].lower() in wanted]
            elif op == "=":
                wanted = str(_literal_value(rhs)).lower()
                rows = [r for r in rows if r[0].lower() == wanted]
            else:
                rx = like_to_regex(str(_literal_value(rhs)))
                rows = [r for r in rows if rx.match(r[0])]
    return rows_result(["Variable_name", "Value"], rows, ["VARCHAR", "VARCHAR"])


def _show_value(v: Any, boolean: bool = False) -> str:
    """A variable's value as SHOW VARIABLES prints it (a switch as ON or OFF)."""
    if v is None:
        return ""
    if boolean and v in (0, 1) and not isinstance(v, str):
        return "ON" if v else "OFF"
    return str(v)


def _h_explain(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    # the plan of the statement the server would run (its literal-lifted form), and no cache
    # is installed for it (Engine.explain)
    return s.engine.explain(st.sql, params, s.txn)


def _in_order(s: Session, st: Statement, params: Sequence[Any], what: str, value_of) -> Result:
    """A SELECT without FROM whose items take effect in order (assignments, named locks): each
    item's value is ``value_of(expr)`` (its alias split off), the columns named as written."""
    if params:
        raise _err(f"parameters in a SELECT {what}", 1235, "42000")
    names, values = [], []
    for item in _select_list(st.sql):
        m = _ITEM_ALIAS.match(item)
        expr, name = (m.group(1).strip(), _unquote_ident(m.group(2))) if m else (item, item)
        names.append(name)
        values.append(value_of(expr))
    return rows_result(names, [tuple(values)], [_type_of(v) for v in values])


def _evaluated(s: Session, expr: str) -> Any:
    """The value of an expression without FROM, the user and system variables in place."""
    res = s.engine.execute("SELECT " + _with_variables(s, expr), (), s.txn)
    return res.rows[0][0] if res.rows else None


def _h_assign_select(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    """``SELECT @x := expr, ...`` without a FROM clause: each item in order, an assignment's
    value set before the next item reads it."""

    def value_of(expr: str) -> Any:
        a = re.match(r"\A@([A-Za-z_][\w$.]*)\s*:=\s*(.+)\Z", expr, re.S)
        if a:
            expr = a.group(2)
        if _ASSIGN.search(expr):
            raise _err("assigning a user variable inside an expression", 1235, "42000")
        value = _evaluated(s, expr)
        if a:
            s.user_vars[a.group(1).lower()] = value
        return value

    return _in_order(s, st, params, "that assigns user variables", value_of)


def _h_lock_select(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    """``SELECT GET_LOCK('name', 10)`` and the other locking functions (``noria_py.user_locks``)
    and SLEEP without FROM: each call, left to right, takes effect and stands as its value in
    the expression around it. A call where it might not run (a branch of IF, CASE, COALESCE,
    AND, OR ...) is refused (1235)."""

    def value_of(expr: str) -> Any:
        if _LOCK_FN.search(expr) and _CONDITIONAL.search(expr):
            raise _err("a locking function in a conditional expression", 1235, "42000")
        while True:
            call = _LOCK_FN.search(expr)
            if call is None:
                return _evaluated(s, expr)
            close = _closing_paren(expr, call.end() - 1)
            value = _lock_call(s, call.group(1).lower(), expr[call.end() : close].strip())
            expr = expr[: call.start()] + sql_literal(value) + expr[close + 1 :]

    return _in_order(s, st, params, "of the locking functions", value_of)


_CONDITIONAL = re.compile(r"\b(?:if|ifnull|coalesce|nullif|case|and|or|xor)\b|&&|\|\|", re.I)


def _closing_paren(text: str, at: int) -> int:
    """The index of the parenthesis closing the one at ``at`` (quotes skipped)."""
    depth = 0
    i = at
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _err("You have an error in your SQL syntax: an unclosed parenthesis", 1064, "42000")


def _lock_call(s: Session, fn: str, inner: str) -> Any:
    """One call of a locking function on the arguments written ``inner``."""
    from noria_py import user_locks

    args: tuple = ()
    if inner:
        if _LOCK_FN.search(inner):
            raise _err("a locking function inside another one's arguments", 1235, "42000")
        res = s.engine.execute("SELECT " + _with_variables(s, inner), (), s.txn)
        args = tuple(res.rows[0])
    if len(args) != _LOCK_ARGS[fn]:
        raise _err(
            f"Incorrect parameter count in the call to native function '{fn.upper()}'",
            1582,
            "42000",
        )
    if fn == "sleep":
        # this session waits, not the engine (its lock is not held meanwhile); NULL, a
        # negative number or a text that is no number sleep no time, as in MariaDB
        try:
            seconds = float(args[0]) if args[0] is not None else 0.0
        except (TypeError, ValueError):
            seconds = 0.0
        if seconds > 0:
            time.sleep(seconds)
        return 0
    locks = user_locks.for_engine(s.engine)
    if fn == "get_lock":
        return locks.get(s, s.connection_id or 0, *args)
    if fn == "release_lock":
        return locks.release(s, *args)
    if fn == "release_all_locks":
        return locks.release_all(s)
    if fn == "is_free_lock":
        return locks.is_free(*args)
    return locks.used_by(*args)


_LOCK_ARGS = {
    "get_lock": 2, "release_lock": 1, "release_all_locks": 0, "is_free_lock": 1, "is_used_lock": 1,
    "sleep": 1,
}  # fmt: skip


_ITEM_ALIAS = re.compile(r"\A(.*?)\s+as\s+(`[^`]+`|[A-Za-z_][\w$]*)\Z", re.I | re.S)


def _h_vars(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    """A query reading user variables (``WHERE id = @x``): their values in their place (an
    unset one is NULL, as in MySQL)."""
    return s.engine.execute(_with_variables(s, st.sql), params, s.txn)


def _h_select_into(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    """``SELECT ... INTO @a, @b``: one row's values into the user variables (no row: they
    keep theirs, with warning 1329; more than one: 1172, the first row assigned)."""
    sql = _with_variables(s, st.sql) if _USER_VAR.search(st.sql) else st.sql
    res = s.engine.execute(sql, params, s.txn)
    names = st.info
    if res.columns is None or len(res.columns) != len(names):
        raise _err("The used SELECT statements have a different number of columns", 1222, "21000")
    rows = list(res.rows)
    if len(rows) > 1:
        # as MariaDB: the first row is assigned before the second is found
        for name, value in zip(names, rows[0]):
            s.user_vars[name] = value
        raise _err("Result consisted of more than one row", 1172, "42000")
    if not rows:
        note = ("Warning", 1329, "No data - zero rows fetched, selected, or processed")
        s.txn.diag = (note,)
        return Result(rowcount=0, conditions=[note])
    for name, value in zip(names, rows[0]):
        s.user_vars[name] = value
    return Result(rowcount=1)


def _h_const_select(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    return s.engine.execute(st.sql, params, s.txn)


def _select_item_texts(sql: str, i: int) -> str:
    items = _select_list(sql)
    return items[i] if i < len(items) else f"col{i}"


_LIST_END = re.compile(r"\s+(?:limit|from|where|order|into)\b.*\Z", re.I | re.S)


def _select_list(sql: str) -> list[str]:
    body = re.sub(r"\A\s*select\s+", "", sql, flags=re.I)
    items = split_top_level(body)
    if items:
        items[-1] = _LIST_END.sub("", items[-1])
    return items


_ALIAS = re.compile(
    r"\A(.*?)\s+(?:as\s+)?(`[^`]+`|'[^']*'|\"[^\"]*\"|[A-Za-z_][\w$]*)\Z", re.I | re.S
)
_SYSVAR = re.compile(r"\A@@(?:(global|session|local)\.)?([A-Za-z_][\w$]*)\Z", re.I)
_USERVAR = re.compile(r"\A@([A-Za-z_][\w$.]*)\Z")
_FUNC = re.compile(r"\A([A-Za-z_]+)\s*\(\s*\)\Z")


def _h_session_select(s: Session, st: Statement, params: Sequence[Any]) -> Result:
    text = st.sql
    limit_zero = re.search(r"\blimit\s+0\s*\Z", text, re.I) is not None
    names, values = [], []
    items = _select_list(text)
    if not all(
        _evaluable(_ALIAS.match(i).group(1).strip() if _ALIAS.match(i) else i) for i in items
    ):
        # an expression around a session value (SQLAlchemy's `VERSION() LIKE '%MariaDB%'`):
        # the engine evaluates it, with the variables' values in place, and the columns keep
        # the names of the items as written (`@@warning_count + 0`, not `2 + 0`)
        res = s.engine.execute(_with_variables(s, text), params, s.txn)
        names = _item_names(text)
        if names is not None and res.columns is not None and len(names) == len(res.columns):
            res.columns = names
        return res
    for item in items:
        expr, name = item, item
        m = _ALIAS.match(item)
        if m and not _FUNC.match(item) and not re.search(r"\(\s*\)\Z", item):
            candidate = m.group(1).strip()
            if _evaluable(candidate):
                expr, name = candidate, _unquote_ident(m.group(2).strip("'\""))
        values.append(_session_value(s, expr))
        names.append(name)
    rows = [] if limit_zero else [tuple(values)]
    return rows_result(names, rows, [_type_of(v) for v in values])


def _item_names(text: str) -> list[str] | None:
    """The result column names of a SELECT as written, as MySQL names them."""
    from noria_py.sql.parse import item_name, parse

    try:
        ast, _n = parse(text)
    except errors.Error:
        return None
    return [item_name(e) for e in ast.expressions] if ast.expressions else None


def _with_variables(s: Session, text: str) -> str:
    """``text`` with each @@system and @user variable outside quotes replaced by its value as
    a SQL literal, for the engine to evaluate the expression around it."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if c == "@":
            m = re.compile(r"@@(?:(global|session|local)\.)?([A-Za-z_][\w$]*)|@([A-Za-z_][\w$.]*)")
            mm = m.match(text, i)
            if mm:
                if mm.group(2):
                    scope = (mm.group(1) or "session").lower()
                    v = s.get_var(mm.group(2), "global" if scope == "global" else "session")
                else:
                    v = s.user_vars.get(mm.group(3).lower())
                out.append(sql_literal(v))
                i = mm.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _evaluable(expr: str) -> bool:
    return bool(_SYSVAR.match(expr) or _USERVAR.match(expr) or _FUNC.match(expr)) or _is_literal(
        expr
    )


def _is_literal(expr: str) -> bool:
    return bool(
        re.fullmatch(r"[-+]?\d+(\.\d*)?|'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|null", expr, re.I)
    )


def _session_value(s: Session, expr: str) -> Any:
    m = _SYSVAR.match(expr)
    if m:
        scope = (m.group(1) or "session").lower()
        return s.get_var(m.group(2), "global" if scope == "global" else "session")
    m = _USERVAR.match(expr)
    if m:
        return s.user_vars.get(m.group(1).lower())
    m = _FUNC.match(expr)
    if m:
        fn = m.group(1).lower()
        if fn in ("database", "schema"):
            return s.database
        if fn == "version":
            return s.get_var("version")
        if fn == "connection_id":
            return s.connection_id
        if fn in ("user", "session_user", "system_user", "current_user"):
            return f"{s.username or ''}@localhost"
        if fn == "last_insert_id":
            return s.last_insert_id
        if fn == "row_count":
            return s.last_rowcount
        if fn == "found_rows":
            return s.txn.found_rows
    if _is_literal(expr):
        v = _literal_value(expr)
        return None if v is _DEFAULT else v
    raise _err(
        f"Expression '{expr[:60]}' mixed with session values is not supported", 1235, "42000"
    )


_HANDLERS: dict[str, Callable[[Session, Statement, Sequence[Any]], Result]] = {
    "ddl": _h_ddl,
    "begin": _h_begin,
    "commit": _h_commit,
    "rollback": _h_rollback,
    "savepoint": _h_savepoint,
    "set": _h_set,
    "use": _h_use,
    "empty": _h_empty,
    "noop": _h_noop,
    "unsupported": _h_unsupported,
    "load_local": _h_load_local,
    "error": _h_error,
    "show_simple": _h_show_simple,
    "show_vars": _h_show_vars,
    "const_select": _h_const_select,
    "explain": _h_explain,
    "session_select": _h_session_select,
    "assign_select": _h_assign_select,
    "lock_select": _h_lock_select,
    "vars": _h_vars,
    "select_into": _h_select_into,
}

"""PEP 249 exception hierarchy, each error carrying the MySQL error code and SQLSTATE it maps to.

The embedded API raises these; the MySQL-wire server turns them into error packets using
``errno`` and ``sqlstate``.
"""

from __future__ import annotations


class Warning(Exception):  # noqa: A001 - the name is mandated by PEP 249
    """Important warnings (PEP 249)."""


class Error(Exception):
    """Base class of every error raised by noria_py."""

    errno: int = 1105  # ER_UNKNOWN_ERROR
    sqlstate: str = "HY000"
    # the warnings and notes the failing statement raised before it, which MySQL's
    # diagnostics area lists ahead of the error: (level, code, message) each
    before: tuple = ()

    def __init__(self, msg: str = "", errno: int | None = None, sqlstate: str | None = None):
        super().__init__(msg)
        self.msg = msg
        if errno is not None:
            self.errno = errno
        if sqlstate is not None:
            self.sqlstate = sqlstate


class InterfaceError(Error):
    """Misuse of the interface (a closed cursor or connection)."""


class DatabaseError(Error):
    """Errors related to the database."""


class DataError(DatabaseError):
    """Bad values: out of range, wrong type, division problems."""

    errno = 1366  # ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
    sqlstate = "HY000"


class OperationalError(DatabaseError):
    """The engine could not carry out the operation (closed, shut down, I/O)."""


class IntegrityError(DatabaseError):
    """Constraint violations: duplicate keys, NULL in a NOT NULL column."""

    errno = 1062  # ER_DUP_ENTRY
    sqlstate = "23000"


class InternalError(DatabaseError):
    """The engine found itself in an inconsistent state."""


class ProgrammingError(DatabaseError):
    """Bad SQL: syntax errors, unknown tables or columns, wrong parameter counts."""

    errno = 1064  # ER_PARSE_ERROR
    sqlstate = "42000"


class NotSupportedError(DatabaseError):
    """A feature nothing in the engine can answer."""

    errno = 1235  # ER_NOT_SUPPORTED_YET
    sqlstate = "42000"


# MySQL error codes used across the engine and the server.
ER_PARSE_ERROR = 1064
ER_NO_SUCH_TABLE = 1146
ER_BAD_FIELD_ERROR = 1054
ER_DUP_ENTRY = 1062
ER_BAD_NULL_ERROR = 1048
ER_TABLE_EXISTS_ERROR = 1050
ER_BAD_TABLE_ERROR = 1051
ER_NON_UNIQ_ERROR = 1052
ER_WRONG_VALUE_COUNT_ON_ROW = 1136
ER_WRONG_ARGUMENTS = 1210
ER_CANT_AGGREGATE_2COLLATIONS = 1267
ER_TRUNCATED_WRONG_VALUE = 1366
ER_NOT_SUPPORTED_YET = 1235
ER_UNKNOWN_ERROR = 1105
ER_ACCESS_DENIED_ERROR = 1045
ER_NO_DEFAULT_FOR_FIELD = 1364
ER_WARN_DATA_OUT_OF_RANGE = 1264


def no_such_table(name: str) -> ProgrammingError:
    return ProgrammingError(f"Table '{name}' doesn't exist", ER_NO_SUCH_TABLE, "42S02")


def bad_field(name: str, where: str = "field list") -> ProgrammingError:
    return ProgrammingError(f"Unknown column '{name}' in '{where}'", ER_BAD_FIELD_ERROR, "42S22")


def parse_error(msg: str) -> ProgrammingError:
    """1064 with MySQL's text. ``msg`` is ``near '...'`` (MySQL's own form) or a description."""
    if msg.startswith("near '"):
        tail = msg if msg.endswith("at line 1") or " at line " in msg else f"{msg} at line 1"
    else:
        tail = f"near '{msg}' at line 1"
    return ProgrammingError(
        "You have an error in your SQL syntax; check the manual that corresponds to your "
        f"MariaDB server version for the right syntax to use {tail}",
        ER_PARSE_ERROR,
        "42000",
    )


def syntax_error_near(text: str, line: int = 1) -> ProgrammingError:
    """1064 pointing at ``text``, the rest of the statement from where parsing failed."""
    near = text[:80]
    return parse_error(f"near '{near}' at line {line}")


ER_LOCK_WAIT_TIMEOUT = 1205
ER_SP_DOES_NOT_EXIST = 1305
ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792


class LockWait(OperationalError):
    """The statement needs the write lock another connection's open transaction holds.

    Raised before the statement changes anything, so it can simply be run again once that
    transaction ends (the server parks the connection and retries; after the lock wait timeout
    the client gets this error, 1205)."""

    def __init__(self, msg: str = "Lock wait timeout exceeded; try restarting transaction"):
        super().__init__(msg, ER_LOCK_WAIT_TIMEOUT, "HY000")


def no_savepoint(name: str) -> OperationalError:
    return OperationalError(f"SAVEPOINT {name} does not exist", ER_SP_DOES_NOT_EXIST, "42000")


def read_only_transaction() -> OperationalError:
    return OperationalError(
        "Cannot execute statement in a READ ONLY transaction",
        ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
        "25006",
    )

"""noria_py: a partially stateful dataflow database.

Applications write to base tables and read views defined by SQL. Each SELECT is compiled into a
shared dataflow graph whose leaf (the *reader*) is keyed by the query's ``?`` parameters. A write
goes to base storage (SQLite) and, in the same step, flows through the graph as signed deltas
that incrementally update every materialization, so a read is a lookup of an already computed
answer. Queries the dataflow cannot maintain are answered by base storage and reported as
proxied.

    import noria_py
    conn = noria_py.connect()            # or connect("app.db") for durable storage
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    conn.execute("INSERT INTO t VALUES (?, ?)", (1, 10))
    conn.execute("SELECT v FROM t WHERE id = ?", (1,)).fetchall()   # [(10,)]

In front of an existing MySQL or MariaDB, ``connect(upstream="mysql://...")`` mirrors its
tables and replicates its binlog into base storage, and sends writes and everything the
dataflow does not maintain to it (``noria_py.upstream``).
"""

from .dbapi import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Connection,
    Cursor,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
    apilevel,
    connect,
    paramstyle,
    threadsafety,
)
from .errors import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
)
from .monitor import start_http_server

__version__ = "0.1.0"

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "Connection",
    "Date",
    "DateFromTicks",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "start_http_server",
    "threadsafety",
]
